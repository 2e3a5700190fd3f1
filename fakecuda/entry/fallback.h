// Copyright 2026 The cuhal Authors.
// The entry points of cuda.h that fakecuda does not model, and the table of every entry point
// cuda.h declares. Both are generated at build time (cmake/CuhalApiSurface.cmake,
// cmake/api_fallbacks.cmake): the build lists what cuda.h declares (preprocessed by the
// compiler) and what fakecuda's objects define (nm), and gives every declared symbol no object
// defines a fallback definition under its real symbol name. docs/api_coverage.md lists which is
// which; a fallback is never claimed as modelled.
//
// This header does not include cuda.h: the generated source declares the entry points under
// their symbol names with asm labels and no parameters (a fallback reads no argument), which
// would conflict with cuda.h's prototypes.
#ifndef CUHAL_FAKECUDA_ENTRY_FALLBACK_H_
#define CUHAL_FAKECUDA_ENTRY_FALLBACK_H_

namespace fakecuda {

// The answer of a fallback entry point, as a CUresult (an int here): what a driver that lacks
// the feature answers, through the same prologue as every modelled entry point (entry.h): no
// driver installed or before cuInit, CUDA_ERROR_NOT_INITIALIZED (as every modelled entry point
// but the error names and cuGetProcAddress answers); on a callback lane, CUDA_ERROR_NOT_PERMITTED;
// the fault injector counts the call under `plain` (FAKECUDA_FAULTS and the call log name it)
// and may fail it; else CUDA_ERROR_NOT_SUPPORTED. UNMEASURED: the H200 has every one of these
// features; this is the answer of a driver without it, not the H200's.
int FallbackCall(const char* plain) noexcept;

// How a row of the table relates to cuda.h (cuhal_api_declarations in cmake/CuhalApiSurface.cmake).
enum class ApiKind {
  k_current,     // declared by plain cuda.h, under its versioned symbol (cuMemAlloc_v2)
  k_per_thread,  // declared under CUDA_API_PER_THREAD_DEFAULT_STREAM (cuMemcpy_ptds)
  k_older,       // the plain name of a versioned entry point: its older ABI (cuMemAlloc)
};

// One entry point cuda.h declares.
struct ApiEntry {
  const char* plain;   // the name callers write and cuGetProcAddress is asked for
  const char* symbol;  // the exported symbol
  ApiKind kind;
  bool modelled;       // false: the generated fallback
  void (*address)();   // the exported function (its real type is cuda.h's)
};

// Every entry point cuda.h declares (generated; kApiEntryCount rows).
extern const ApiEntry kApiEntries[];
extern const int kApiEntryCount;

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_ENTRY_FALLBACK_H_
