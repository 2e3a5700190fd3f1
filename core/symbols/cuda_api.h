// Copyright 2026 The cuhal Authors.
// CudaApi: the table of CUDA Driver API function pointers through which ALL of cuhal's CUDA
// calls go. Expanded from cuda_symbols.inc.
#ifndef CUHAL_CORE_SYMBOLS_CUDA_API_H_
#define CUHAL_CORE_SYMBOLS_CUDA_API_H_

#include <cuda.h>

#include <span>

#include "core/symbols/symbol_kind.h"

namespace cuhal {

// The API version every entry is resolved at (the version of the cuda.h cuhal was built with).
inline constexpr int kCudaApiVersion = CUDA_VERSION;

// A table of CUDA Driver API entry points: one function pointer per line of cuda_symbols.inc,
// named as in cuda.h (`api.cuMemAlloc(&ptr, n)`).
//
// Ownership: a plain value; whoever builds it (the real loader, fakecuda::FillCudaApi, a mock)
// owns whatever the pointers point into and must keep it alive while the table is used. Core
// objects hold a `const CudaApi*` and never copy it. Thread-safety: immutable after it is filled,
// so it may be read from any thread. Stream ordering: none of its own; each entry keeps the
// driver's rules.
struct CudaApi {
#define CUHAL_CU_PFN(kind, name, arity) decltype(&::name) name = nullptr;
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
};

// Every entry of CudaApi, in list order.
std::span<const SymbolInfo> CudaSymbols();

// Number of required entries of `api` that are null (0 for a complete table).
int CountMissingRequired(const CudaApi& api);

}  // namespace cuhal

#endif  // CUHAL_CORE_SYMBOLS_CUDA_API_H_
