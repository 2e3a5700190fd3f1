// Copyright 2026 The cuhal Authors.
// Hooks between the plain memory entry points (entry/memory_entry.cc,
// entry/memory_pitched_entry.cc) and the memory-pool model (entry/pool_entry.cc).
#ifndef CUHAL_FAKECUDA_INTERNAL_MEMORY_HOOKS_H_
#define CUHAL_FAKECUDA_INTERNAL_MEMORY_HOOKS_H_

#include <cuda.h>

#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

// cuMemFree of a pointer that came from cuMemAllocAsync/cuMemAllocFromPoolAsync: frees it at once
// (no stream ordering; the caller guarantees all accesses completed), as the real driver allows.
CUresult PoolFreeSync(DriverState* st, CUdeviceptr ptr) CUHAL_REQUIRES(st->mu);

// cuMemAlloc and cuMemAllocPitch: `bytesize` (> 0) bytes of device memory on `ctx`'s device,
// recorded as made by `what`. Out of memory: CUDA_ERROR_OUT_OF_MEMORY with 0 written to *dptr
// (measured on the H200 for cuMemAlloc).
CUresult AllocateDevice(DriverState* st, const Context& ctx, std::size_t bytesize,
                        CUdeviceptr* dptr, const char* what) CUHAL_REQUIRES(st->mu);

// cuMemsetD* and cuMemsetD2D*: fills `height` rows of `width` elements of `elem` bytes with
// `value`, `step` bytes apart from `dst` (the caller checked alignment and that the span fits),
// on `s` in stream order; with `synchronous`, waits for it. Out-of-range memory: ResolveDevice's
// answer; an empty fill succeeds with nothing enqueued.
CUresult EnqueueFill(DriverState* st, Stream* s, std::uintptr_t dst, unsigned value,
                     std::size_t elem, std::size_t width, std::size_t height, std::size_t step,
                     bool synchronous, const char* what) CUHAL_REQUIRES(st->mu);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_MEMORY_HOOKS_H_
