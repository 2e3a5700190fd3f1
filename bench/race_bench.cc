// Copyright 2026 The cuhal Authors.
// The race detector's overhead (fakecuda/race/race_detector.h): the same stream work on fakecuda
// with the detector off and in report mode (race-free programs, so nothing is printed).
//
//   build/release/bench/race_bench
//
// Each benchmark takes the mode as its argument (0: off, 1: report); the target is at
// most 2x the fake's time without the detector.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <string>

#include "fakecuda/fake_driver.h"
#include "fakecuda/kernel_registry.h"

namespace {

#define RACE_BENCH_CHECK(state, call)                                       \
  do {                                                                      \
    if (CUresult r_ = (call); r_ != CUDA_SUCCESS) {                         \
      (state).SkipWithError((std::string(#call " = ") + std::to_string(r_)).c_str()); \
      return;                                                               \
    }                                                                       \
  } while (false)

fakecuda::DriverOptions Options(const benchmark::State& state) {
  fakecuda::DriverOptions options;
  options.racecheck = state.range(0) == 0 ? fakecuda::RaceCheck::kOff : fakecuda::RaceCheck::kReport;
  return options;
}

void PerOp(benchmark::State& state, int ops_per_iteration) {
  state.counters["per_op"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * ops_per_iteration,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(state.range(0) == 0 ? "off" : "report");
}

// One stream: a memset and a copy of the same 4 KiB (stream order).
void OneStreamCopies(benchmark::State& state) {
  fakecuda::ScopedDriver driver(Options(state));
  CUcontext ctx;
  CUstream s;
  CUdeviceptr a, b;
  RACE_BENCH_CHECK(state, cuInit(0));
  RACE_BENCH_CHECK(state, cuDevicePrimaryCtxRetain(&ctx, 0));
  RACE_BENCH_CHECK(state, cuCtxSetCurrent(ctx));
  RACE_BENCH_CHECK(state, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  RACE_BENCH_CHECK(state, cuMemAlloc(&a, 4096));
  RACE_BENCH_CHECK(state, cuMemAlloc(&b, 4096));
  for (auto _ : state) {
    RACE_BENCH_CHECK(state, cuMemsetD8Async(a, 1, 4096, s));
    RACE_BENCH_CHECK(state, cuMemcpyDtoDAsync(b, a, 4096, s));
  }
  RACE_BENCH_CHECK(state, cuStreamSynchronize(s));
  PerOp(state, 2);
  cuMemFree(a);
  cuMemFree(b);
  cuStreamDestroy(s);
  cuDevicePrimaryCtxRelease(0);
}
BENCHMARK(OneStreamCopies)->Arg(0)->Arg(1);

// Two streams handing one buffer back and forth through events (4 ops per iteration).
void TwoStreamsWithEvents(benchmark::State& state) {
  fakecuda::ScopedDriver driver(Options(state));
  CUcontext ctx;
  CUstream s1, s2;
  CUevent e1, e2;
  CUdeviceptr a;
  RACE_BENCH_CHECK(state, cuInit(0));
  RACE_BENCH_CHECK(state, cuDevicePrimaryCtxRetain(&ctx, 0));
  RACE_BENCH_CHECK(state, cuCtxSetCurrent(ctx));
  RACE_BENCH_CHECK(state, cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
  RACE_BENCH_CHECK(state, cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
  RACE_BENCH_CHECK(state, cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
  RACE_BENCH_CHECK(state, cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
  RACE_BENCH_CHECK(state, cuMemAlloc(&a, 4096));
  for (auto _ : state) {
    RACE_BENCH_CHECK(state, cuMemsetD8Async(a, 1, 4096, s1));
    RACE_BENCH_CHECK(state, cuEventRecord(e1, s1));
    RACE_BENCH_CHECK(state, cuStreamWaitEvent(s2, e1, 0));
    RACE_BENCH_CHECK(state, cuMemsetD8Async(a, 2, 4096, s2));
    RACE_BENCH_CHECK(state, cuEventRecord(e2, s2));
    RACE_BENCH_CHECK(state, cuStreamWaitEvent(s1, e2, 0));
  }
  RACE_BENCH_CHECK(state, cuCtxSynchronize());
  PerOp(state, 6);
  cuMemFree(a);
  cuEventDestroy(e1);
  cuEventDestroy(e2);
  cuStreamDestroy(s1);
  cuStreamDestroy(s2);
  cuDevicePrimaryCtxRelease(0);
}
BENCHMARK(TwoStreamsWithEvents)->Arg(0)->Arg(1);

// Stream-ordered allocation: alloc, memset, free on one stream.
void PoolAllocUseFree(benchmark::State& state) {
  fakecuda::ScopedDriver driver(Options(state));
  CUcontext ctx;
  CUstream s;
  RACE_BENCH_CHECK(state, cuInit(0));
  RACE_BENCH_CHECK(state, cuDevicePrimaryCtxRetain(&ctx, 0));
  RACE_BENCH_CHECK(state, cuCtxSetCurrent(ctx));
  RACE_BENCH_CHECK(state, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : state) {
    CUdeviceptr p;
    RACE_BENCH_CHECK(state, cuMemAllocAsync(&p, 4096, s));
    RACE_BENCH_CHECK(state, cuMemsetD8Async(p, 1, 4096, s));
    RACE_BENCH_CHECK(state, cuMemFreeAsync(p, s));
  }
  RACE_BENCH_CHECK(state, cuStreamSynchronize(s));
  PerOp(state, 3);
  cuStreamDestroy(s);
  cuDevicePrimaryCtxRelease(0);
}
BENCHMARK(PoolAllocUseFree)->Arg(0)->Arg(1);

// A registered kernel with one pointer argument.
void KernelLaunch(benchmark::State& state) {
  fakecuda::ScopedDriver driver(Options(state));
  fakecuda::ScopedKernel k("k", [](const fakecuda::KernelLaunch&) { return CUDA_SUCCESS; });
  CUcontext ctx;
  CUstream s;
  CUmodule m;
  CUfunction f;
  CUdeviceptr a;
  RACE_BENCH_CHECK(state, cuInit(0));
  RACE_BENCH_CHECK(state, cuDevicePrimaryCtxRetain(&ctx, 0));
  RACE_BENCH_CHECK(state, cuCtxSetCurrent(ctx));
  RACE_BENCH_CHECK(state, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  RACE_BENCH_CHECK(state, cuModuleLoadData(&m, "FAKECUDA-MODULE 1\nkernel k 8\n"));
  RACE_BENCH_CHECK(state, cuModuleGetFunction(&f, m, "k"));
  RACE_BENCH_CHECK(state, cuMemAlloc(&a, 4096));
  for (auto _ : state) {
    void* args[] = {&a};
    RACE_BENCH_CHECK(state, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  }
  RACE_BENCH_CHECK(state, cuStreamSynchronize(s));
  PerOp(state, 1);
  cuMemFree(a);
  cuModuleUnload(m);
  cuStreamDestroy(s);
  cuDevicePrimaryCtxRelease(0);
}
BENCHMARK(KernelLaunch)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
