// Copyright 2026 The cuhal Authors.
// The latency of fakecuda's hot entry points, next to the real driver's when one loads.
//
//   build/release/bench/fakecuda_bench                      # both backends
//   build/release/bench/fakecuda_bench --benchmark_filter=fake
//
// Each benchmark is registered once per backend ("<name>/fake", "<name>/real"); the real ones are
// skipped with the reason when libcuda.so.1 cannot be loaded or has no device. Targets for the
// fake on the development machine (issue 3): cuDeviceGetAttribute <= 20 ns, cuStreamQuery <=
// 100 ns, event record + query <= 300 ns, cuMemAlloc + cuMemFree of 4 KiB <= 500 ns. Measured on
// the H200 (DESIGN.md): cuDeviceGetAttribute ~10 ns, idle cuStreamQuery ~140 ns, cuMemAlloc +
// cuMemFree 60-90 us.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <functional>
#include <memory>
#include <string>

#include "bench/bench_backend.h"
#include "core/symbols/api_status.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/real_loader.h"
#include "fakecuda/fake_driver.h"

namespace {

using ::cuhal::bench::Backend;
using ::cuhal::bench::FakeBackend;
using ::cuhal::bench::RealBackend;

std::string Name(CUresult r) { return ::cuhal::bench::ResultName(r); }

// Runs `body` with the backend's primary context current; skips when it is unavailable.
void WithBackend(benchmark::State& state, const Backend& b,
                 const std::function<void(benchmark::State&, const cuhal::CudaApi&)>& body) {
  if (!b.unavailable.empty()) {
    state.SkipWithError(b.unavailable.c_str());
    return;
  }
  if (CUresult r = b.api->cuCtxSetCurrent(b.ctx); r != CUDA_SUCCESS) {
    state.SkipWithError(("cuCtxSetCurrent = " + Name(r)).c_str());
    return;
  }
  body(state, *b.api);
  // Seconds per operation (printed with an SI prefix: "8.4n" is 8.4 ns).
  state.counters["per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

#define CUHAL_BENCH_CHECK(state, call)                         \
  do {                                                         \
    if (CUresult r_ = (call); r_ != CUDA_SUCCESS) {            \
      (state).SkipWithError((#call " = " + Name(r_)).c_str()); \
      return;                                                  \
    }                                                          \
  } while (false)

void DeviceGetAttribute(benchmark::State& state, const cuhal::CudaApi& api) {
  int value = 0;
  for (auto _ : state) {
    CUresult r = api.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(value);
  }
}

void StreamQueryIdle(benchmark::State& state, const cuhal::CudaApi& api) {
  CUstream stream = nullptr;
  CUHAL_BENCH_CHECK(state, api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  for (auto _ : state) {
    CUresult r = api.cuStreamQuery(stream);
    benchmark::DoNotOptimize(r);
  }
  CUHAL_BENCH_CHECK(state, api.cuStreamDestroy(stream));
}

void EventRecordQuery(benchmark::State& state, const cuhal::CudaApi& api) {
  CUstream stream = nullptr;
  CUevent event = nullptr;
  CUHAL_BENCH_CHECK(state, api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUHAL_BENCH_CHECK(state, api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  for (auto _ : state) {
    CUresult record = api.cuEventRecord(event, stream);
    CUresult query = api.cuEventQuery(event);
    benchmark::DoNotOptimize(record);
    benchmark::DoNotOptimize(query);
  }
  CUHAL_BENCH_CHECK(state, api.cuStreamSynchronize(stream));
  CUHAL_BENCH_CHECK(state, api.cuEventDestroy(event));
  CUHAL_BENCH_CHECK(state, api.cuStreamDestroy(stream));
}

void MemAllocFree4KiB(benchmark::State& state, const cuhal::CudaApi& api) {
  for (auto _ : state) {
    CUdeviceptr ptr = 0;
    CUresult alloc = api.cuMemAlloc(&ptr, 4096);
    CUresult free = api.cuMemFree(ptr);
    if (alloc != CUDA_SUCCESS || free != CUDA_SUCCESS) {
      state.SkipWithError(("cuMemAlloc/cuMemFree = " + Name(alloc) + "/" + Name(free)).c_str());
      break;
    }
  }
}

void RegisterAll() {
  struct Entry {
    const char* name;
    void (*body)(benchmark::State&, const cuhal::CudaApi&);
  };
  const Entry entries[] = {
      {"cuDeviceGetAttribute", &DeviceGetAttribute},
      {"cuStreamQuery_idle", &StreamQueryIdle},
      {"cuEventRecord+cuEventQuery", &EventRecordQuery},
      {"cuMemAlloc+cuMemFree_4KiB", &MemAllocFree4KiB},
  };
  for (const Entry& e : entries) {
    auto body = e.body;
    benchmark::RegisterBenchmark(
        (std::string(e.name) + "/fake").c_str(),
        [body](benchmark::State& state) { WithBackend(state, FakeBackend(), body); });
    benchmark::RegisterBenchmark(
        (std::string(e.name) + "/real").c_str(),
        [body](benchmark::State& state) { WithBackend(state, RealBackend(), body); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
