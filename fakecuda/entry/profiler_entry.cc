// Copyright 2026 The cuhal Authors.
// Entry points: cuProfilerStart and cuProfilerStop (declared by cudaProfiler.h, exported by the
// real libcuda; cuGetProcAddress resolves them, cmake/CuhalApiSurface.cmake lists cudaProfiler.h
// with cuda.h). The fake has no profiler to start: they succeed, repeatedly and in any order,
// with a current context and answer CUDA_ERROR_INVALID_CONTEXT without one, as measured
// 2026-12-06 on H100 80GB HBM3, driver 580.159.04 (ci/gpu-probes/misc_probe.cc, cases
// profiler:*). cuProfilerInitialize is in devext_entry.cc (CUDA_ERROR_NOT_SUPPORTED, as
// measured).
#include <cudaProfiler.h>

#include "fakecuda/entry/entry.h"

extern "C" {

CUresult CUDAAPI cuProfilerStart(void) try {
  FAKECUDA_ENTER(cuProfilerStart)
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuProfilerStart");
}

CUresult CUDAAPI cuProfilerStop(void) try {
  FAKECUDA_ENTER(cuProfilerStop)
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuProfilerStop");
}

}  // extern "C"
