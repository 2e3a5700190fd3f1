// Copyright 2026 The cuhal Authors.
#include <cstddef>
#include <cstring>

#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"

namespace cuhal {
namespace {

// The arity column of each list must match the header's declaration.
#define CUHAL_CU_PFN(kind, name, arity)                                            \
  static_assert(internal::FunctionArity<decltype(::name)>::value == (arity),       \
                "cuda_symbols.inc: wrong arity for " #name);
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
#define CUHAL_NCCL_PFN(kind, name, arity)                                          \
  static_assert(internal::FunctionArity<decltype(::name)>::value == (arity),       \
                "nccl_symbols.inc: wrong arity for " #name);
#include "core/symbols/nccl_symbols.inc"
#undef CUHAL_NCCL_PFN

constexpr SymbolInfo kCudaSymbols[] = {
#define CUHAL_CU_PFN(kind, name, arity) {#name, SymbolKind::kind, offsetof(CudaApi, name)},
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
};

constexpr SymbolInfo kNcclSymbols[] = {
#define CUHAL_NCCL_PFN(kind, name, arity) {#name, SymbolKind::kind, offsetof(NcclApi, name)},
#include "core/symbols/nccl_symbols.inc"
#undef CUHAL_NCCL_PFN
};

template <typename Api>
int CountMissing(const Api& api, std::span<const SymbolInfo> symbols) {
  int missing = 0;
  for (const SymbolInfo& s : symbols) {
    void* entry = nullptr;
    std::memcpy(&entry, reinterpret_cast<const char*>(&api) + s.offset, sizeof(entry));
    if (s.kind == SymbolKind::kRequired && entry == nullptr) ++missing;
  }
  return missing;
}

}  // namespace

std::span<const SymbolInfo> CudaSymbols() { return kCudaSymbols; }
std::span<const SymbolInfo> NcclSymbols() { return kNcclSymbols; }
int CountMissingRequired(const CudaApi& api) { return CountMissing(api, kCudaSymbols); }
int CountMissingRequired(const NcclApi& api) { return CountMissing(api, kNcclSymbols); }

}  // namespace cuhal
