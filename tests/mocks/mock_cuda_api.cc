// Copyright 2026 The cuhal Authors.
#include "tests/mocks/mock_cuda_api.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string_view>
#include <utility>

#include "core/symbols/api_status.h"

namespace cuhal::mocks {
namespace {

// Every CudaApi member must come from cuda_symbols.inc, or it would have no mock: the table is
// exactly one function pointer per line of the list.
constexpr std::size_t kListedEntries = 0
#define CUHAL_CU_PFN(kind, name, arity) +1
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
    ;
static_assert(sizeof(CudaApi) == kListedEntries * sizeof(void (*)()),
              "CudaApi has an entry that is not in cuda_symbols.inc, so MockCudaApi cannot mock it");

using Registry = internal::MockRegistry<MockCudaApi>;

CUresult LookUpErrorName(CUresult code, const char** name) {
  std::string_view spelling = CudaResultEnumName(code);
  if (spelling.empty()) {  // as the driver does for a code it does not know
    *name = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *name = spelling.data();  // a string literal, so NUL-terminated
  return CUDA_SUCCESS;
}

CUresult LookUpErrorString(CUresult code, const char** text) {
  if (CudaResultEnumName(code).empty()) {
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *text = MockCudaApi::kMockErrorString;
  return CUDA_SUCCESS;
}

}  // namespace

MockCudaApi::~MockCudaApi() { Registry::Get().Unbind(this); }

void MockCudaApi::Fill(CudaApi* api) {
  Registry::Get().Bind(this);
#define CUHAL_CU_PFN(kind, name, arity)                                                   \
  api->name = &internal::Trampoline<MockCudaApi, &MockCudaApi::name, offsetof(CudaApi, name), \
                                    decltype(::name)>::Call;
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
}

CudaApi MockCudaApi::Table() {
  CudaApi api;
  Fill(&api);
  return api;
}

void MockCudaApi::AllowErrorLookups() {
  using trompeloeil::_;
  defaults_.push_back(
      NAMED_ALLOW_CALL(*this, cuGetErrorName(_, _)).RETURN(LookUpErrorName(_1, _2)));
  defaults_.push_back(
      NAMED_ALLOW_CALL(*this, cuGetErrorString(_, _)).RETURN(LookUpErrorString(_1, _2)));
}

void MockCudaApi::AllowDeviceQueries(std::function<int(CUdevice_attribute)> attribute) {
  using trompeloeil::_;
  defaults_.push_back(NAMED_ALLOW_CALL(*this, cuInit(0u)).RETURN(CUDA_SUCCESS));
  defaults_.push_back(
      NAMED_ALLOW_CALL(*this, cuDriverGetVersion(_)).SIDE_EFFECT(*_1 = 13000).RETURN(CUDA_SUCCESS));
  defaults_.push_back(
      NAMED_ALLOW_CALL(*this, cuDeviceGetCount(_)).SIDE_EFFECT(*_1 = 1).RETURN(CUDA_SUCCESS));
  defaults_.push_back(
      NAMED_ALLOW_CALL(*this, cuDeviceGet(_, 0)).SIDE_EFFECT(*_1 = 0).RETURN(CUDA_SUCCESS));
  defaults_.push_back(NAMED_ALLOW_CALL(*this, cuDeviceGetName(_, _, 0))
                          .SIDE_EFFECT(std::snprintf(_1, static_cast<size_t>(_2), "Mock GPU"))
                          .RETURN(CUDA_SUCCESS));
  defaults_.push_back(NAMED_ALLOW_CALL(*this, cuDeviceGetUuid(_, 0))
                          .SIDE_EFFECT(std::memset(_1->bytes, 0xAB, sizeof(_1->bytes)))
                          .RETURN(CUDA_SUCCESS));
  defaults_.push_back(NAMED_ALLOW_CALL(*this, cuDeviceGetPCIBusId(_, _, 0))
                          .SIDE_EFFECT(std::snprintf(_1, static_cast<size_t>(_2), "0000:18:00.0"))
                          .RETURN(CUDA_SUCCESS));
  defaults_.push_back(NAMED_ALLOW_CALL(*this, cuDeviceTotalMem(_, 0))
                          .SIDE_EFFECT(*_1 = std::size_t{80} << 30)
                          .RETURN(CUDA_SUCCESS));
  defaults_.push_back(NAMED_ALLOW_CALL(*this, cuDeviceGetAttribute(_, _, 0))
                          .SIDE_EFFECT(*_1 = attribute(_2))
                          .RETURN(CUDA_SUCCESS));
}

std::string_view MockCudaApi::EntryName(std::size_t offset) {
  for (const SymbolInfo& symbol : CudaSymbols()) {
    if (symbol.offset == offset) return symbol.name;
  }
  return "?";
}

}  // namespace cuhal::mocks
