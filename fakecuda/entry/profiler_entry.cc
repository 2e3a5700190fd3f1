// Copyright 2026 The cuhal Authors.
// Entry points: cuProfilerStart and cuProfilerStop (declared by cudaProfiler.h, exported by the
// real libcuda). The fake has no profiler to start: these only answer as the H200 does
// (ci/gpu-probes/misc_probe.cc, cases profiler:*; docs/driver_facts.md "Profiler").
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
