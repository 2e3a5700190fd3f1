// Copyright 2026 The cuhal Authors.
#include "tests/mocks/mock_nccl_api.h"

#include <cstddef>
#include <string_view>

#include "core/symbols/api_status.h"

namespace cuhal::mocks {
namespace {

// Every NcclApi member must come from nccl_symbols.inc, or it would have no mock.
constexpr std::size_t kListedEntries = 0
#define CUHAL_NCCL_PFN(kind, name, arity) +1
#include "core/symbols/nccl_symbols.inc"
#undef CUHAL_NCCL_PFN
    ;
static_assert(sizeof(NcclApi) == kListedEntries * sizeof(void (*)()),
              "NcclApi has an entry that is not in nccl_symbols.inc, so MockNcclApi cannot mock it");

using Registry = internal::MockRegistry<MockNcclApi>;

const char* LookUpErrorString(ncclResult_t result) {
  std::string_view spelling = NcclResultEnumName(result);
  return spelling.empty() ? "unrecognized ncclResult_t" : spelling.data();  // literals
}

}  // namespace

MockNcclApi::~MockNcclApi() { Registry::Get().Unbind(this); }

void MockNcclApi::Fill(NcclApi* api) {
  Registry::Get().Bind(this);
#define CUHAL_NCCL_PFN(kind, name, arity)                                                   \
  api->name = &internal::Trampoline<MockNcclApi, &MockNcclApi::name, offsetof(NcclApi, name), \
                                    decltype(::name)>::Call;
#include "core/symbols/nccl_symbols.inc"
#undef CUHAL_NCCL_PFN
}

NcclApi MockNcclApi::Table() {
  NcclApi api;
  Fill(&api);
  return api;
}

void MockNcclApi::AllowErrorLookups() {
  using trompeloeil::_;
  defaults_.push_back(
      NAMED_ALLOW_CALL(*this, ncclGetErrorString(_)).RETURN(LookUpErrorString(_1)));
  defaults_.push_back(NAMED_ALLOW_CALL(*this, ncclGetLastError(_)).RETURN(""));
}

std::string_view MockNcclApi::EntryName(std::size_t offset) {
  for (const SymbolInfo& symbol : NcclSymbols()) {
    if (symbol.offset == offset) return symbol.name;
  }
  return "?";
}

}  // namespace cuhal::mocks
