// Copyright 2026 The cuhal Authors.
// Entry points: cuProfilerStart and cuProfilerStop (declared by cudaProfiler.h, exported by the
// real libcuda). The fake has no profiler to start: they succeed with a current context and
// answer CUDA_ERROR_INVALID_CONTEXT without one (UNMEASURED: ci/gpu-probes/misc_probe.cc, cases
// profiler:*, asks the H200; docs/driver_facts.md, "IPC, profiler, coredump attributes, green contexts (not measured)").
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
