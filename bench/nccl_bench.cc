// Copyright 2026 The cuhal Authors.
// The cost of NCCL calls on fakenccl, next to the real NCCL's when one loads.
//
//   build/release/bench/nccl_bench                          # both backends
//   build/release/bench/nccl_bench --benchmark_filter=fake
//
// Benchmarks named ".../fake" and ".../real"; the real ones are skipped with the reason when
// libcuda.so.1 or libnccl.so.2 cannot be loaded or there is no GPU (CUHAL_LIBNCCL_PATH picks the
// NCCL library). Counters: bytes per iteration ("bytes") and the time of one collective
// including its stream synchronization (the benchmark's own time).
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"
#include "core/symbols/real_loader.h"
#include "fakecuda/fake_driver.h"
#include "fakenccl/fake_nccl.h"

namespace {

constexpr int kFakeDevices = 8;

// A CUDA and NCCL pair with `ranks` communicators made by ncclCommInitAll on devices 0..ranks-1,
// a stream and a buffer per rank. Set up once per process and kept: benchmarks may run in any
// order.
struct World {
  const cuhal::CudaApi* cuda = nullptr;
  const cuhal::NcclApi* nccl = nullptr;
  std::vector<CUcontext> ctx;
  std::vector<CUstream> streams;
  std::vector<CUdeviceptr> buffers;
  std::vector<ncclComm_t> comms;
  std::string unavailable;
};

constexpr std::size_t kMaxBytes = 1 << 22;

void Setup(World* w, int ranks) {
  if (CUresult r = w->cuda->cuInit(0); r != CUDA_SUCCESS) {
    w->unavailable = "cuInit(0) failed: " + std::to_string(static_cast<int>(r));
    return;
  }
  int count = 0;
  if (w->cuda->cuDeviceGetCount(&count) != CUDA_SUCCESS || count < ranks) {
    w->unavailable = "needs " + std::to_string(ranks) + " devices";
    return;
  }
  w->ctx.resize(static_cast<size_t>(ranks));
  w->streams.resize(static_cast<size_t>(ranks));
  w->buffers.resize(static_cast<size_t>(ranks));
  w->comms.resize(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    auto rr = static_cast<size_t>(r);
    if (w->cuda->cuDevicePrimaryCtxRetain(&w->ctx[rr], r) != CUDA_SUCCESS ||
        w->cuda->cuCtxPushCurrent(w->ctx[rr]) != CUDA_SUCCESS ||
        w->cuda->cuStreamCreate(&w->streams[rr], CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        w->cuda->cuMemAlloc(&w->buffers[rr], kMaxBytes) != CUDA_SUCCESS ||
        w->cuda->cuCtxPopCurrent(nullptr) != CUDA_SUCCESS) {
      w->unavailable = "CUDA setup failed on device " + std::to_string(r);
      return;
    }
  }
  // ncclCommInitAll switches devices itself (the real one through the runtime); the fake needs
  // nothing current.
  if (ncclResult_t r = w->nccl->ncclCommInitAll(w->comms.data(), ranks, nullptr);
      r != ncclSuccess) {
    w->unavailable = std::string("ncclCommInitAll: ") + w->nccl->ncclGetErrorString(r);
  }
}

const World& FakeWorld(int ranks) {
  static fakecuda::ScopedDriver* driver = [] {
    fakecuda::DriverOptions options;
    options.devices.assign(kFakeDevices, fakecuda::BuiltinH200Profile());
    return new fakecuda::ScopedDriver(options);  // lives for the process
  }();
  static fakenccl::ScopedNccl* nccl = new fakenccl::ScopedNccl();
  static cuhal::CudaApi* cuda_api = [] {
    auto* api = new cuhal::CudaApi;
    fakecuda::FillCudaApi(api);
    return api;
  }();
  static cuhal::NcclApi* nccl_api = [] {
    auto* api = new cuhal::NcclApi;
    fakenccl::FillNcclApi(api);
    return api;
  }();
  (void)driver;
  (void)nccl;
  static std::vector<std::unique_ptr<World>> worlds(kFakeDevices + 1);
  std::unique_ptr<World>& w = worlds[static_cast<size_t>(ranks)];
  if (w == nullptr) {
    w = std::make_unique<World>();
    w->cuda = cuda_api;
    w->nccl = nccl_api;
    Setup(w.get(), ranks);
  }
  return *w;
}

const World& RealWorld() {
  static const World* world = [] {
    auto* w = new World;
    auto cuda = cuhal::RealCuda::Load();
    if (!cuda.ok()) {
      w->unavailable = cuda.status().ToString();
      return w;
    }
    auto nccl = cuhal::RealNccl::Load();
    if (!nccl.ok()) {
      w->unavailable = nccl.status().ToString();
      return w;
    }
    w->cuda = &std::move(cuda).value().release()->api();  // kept for the process
    w->nccl = &std::move(nccl).value().release()->api();
    Setup(w, 1);
    return w;
  }();
  return *world;
}

// One AllReduce of `bytes` per rank on every rank (grouped from this thread), then each stream
// synchronized.
void RunAllReduce(benchmark::State& state, const World& w) {
  if (!w.unavailable.empty()) {
    state.SkipWithError(w.unavailable.c_str());
    return;
  }
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t count = bytes / sizeof(float);
  for (auto _ : state) {
    w.nccl->ncclGroupStart();
    for (std::size_t r = 0; r < w.comms.size(); ++r) {
      void* p = reinterpret_cast<void*>(w.buffers[r]);
      w.nccl->ncclAllReduce(p, p, count, ncclFloat32, ncclSum, w.comms[r],
                            reinterpret_cast<cudaStream_t>(w.streams[r]));
    }
    if (w.nccl->ncclGroupEnd() != ncclSuccess) {
      state.SkipWithError("ncclGroupEnd failed");
      return;
    }
    for (CUstream s : w.streams) w.cuda->cuStreamSynchronize(s);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes));
}

// The error path: an argument check that fails (NCCL's ArgsCheck).
void RunArgumentError(benchmark::State& state, const World& w) {
  if (!w.unavailable.empty()) {
    state.SkipWithError(w.unavailable.c_str());
    return;
  }
  void* p = reinterpret_cast<void*>(w.buffers[0]);
  for (auto _ : state) {
    benchmark::DoNotOptimize(w.nccl->ncclAllReduce(p, p, 4, ncclNumTypes, ncclSum, w.comms[0],
                                                   reinterpret_cast<cudaStream_t>(w.streams[0])));
  }
}

void BM_AllReduce1Rank_fake(benchmark::State& s) { RunAllReduce(s, FakeWorld(1)); }
void BM_AllReduce1Rank_real(benchmark::State& s) { RunAllReduce(s, RealWorld()); }
void BM_AllReduce8RanksOneThread_fake(benchmark::State& s) { RunAllReduce(s, FakeWorld(8)); }
void BM_ArgumentError_fake(benchmark::State& s) { RunArgumentError(s, FakeWorld(1)); }
void BM_ArgumentError_real(benchmark::State& s) { RunArgumentError(s, RealWorld()); }

BENCHMARK(BM_AllReduce1Rank_fake)->Arg(4)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_AllReduce1Rank_real)->Arg(4)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_AllReduce8RanksOneThread_fake)->Arg(4)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_ArgumentError_fake);
BENCHMARK(BM_ArgumentError_real);

}  // namespace

BENCHMARK_MAIN();
