// Copyright 2026 The cuhal Authors.
// Whether a table entry must be present for a binding to load.
#ifndef CUHAL_CORE_SYMBOLS_SYMBOL_KIND_H_
#define CUHAL_CORE_SYMBOLS_SYMBOL_KIND_H_

#include <cstddef>

namespace cuhal {

enum class SymbolKind { kRequired, kOptional };

// Description of one table entry, as produced from the X-macro lists: the plain name (what
// cuGetProcAddress and dlsym are asked for), whether it is required, and the byte offset of its
// function pointer inside the table struct.
struct SymbolInfo {
  const char* name;
  SymbolKind kind;
  std::size_t offset;
};

namespace internal {
// Number of parameters of a function type; used to check the arity column of the lists.
template <typename F>
struct FunctionArity;
template <typename R, typename... A>
struct FunctionArity<R(A...)> {
  static constexpr int value = sizeof...(A);
};
}  // namespace internal

}  // namespace cuhal

#endif  // CUHAL_CORE_SYMBOLS_SYMBOL_KIND_H_
