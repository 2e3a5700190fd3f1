// Copyright 2026 The cuhal Authors.
// NcclApi: the table of NCCL function pointers through which all of cuhal's NCCL calls go.
// Expanded from nccl_symbols.inc.
#ifndef CUHAL_CORE_SYMBOLS_NCCL_API_H_
#define CUHAL_CORE_SYMBOLS_NCCL_API_H_

#include <nccl.h>

#include <span>

#include "core/symbols/symbol_kind.h"

namespace cuhal {

// The NCCL major version of the nccl.h cuhal was built with; a loaded library must match it.
inline constexpr int kNcclMajorVersion = NCCL_MAJOR;

// A table of NCCL entry points, one per line of nccl_symbols.inc, named as in nccl.h.
//
// Ownership: a plain value; its builder keeps the implementation alive. Thread-safety:
// immutable once filled, readable from any thread. Stream ordering: each collective is ordered
// on the stream it is given, as NCCL defines.
struct NcclApi {
#define CUHAL_NCCL_PFN(kind, name, arity) decltype(&::name) name = nullptr;
#include "core/symbols/nccl_symbols.inc"
#undef CUHAL_NCCL_PFN
};

std::span<const SymbolInfo> NcclSymbols();
int CountMissingRequired(const NcclApi& api);

}  // namespace cuhal

#endif  // CUHAL_CORE_SYMBOLS_NCCL_API_H_
