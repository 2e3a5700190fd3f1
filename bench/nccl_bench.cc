// Copyright 2026 The cuhal Authors.
// The bandwidth and cost of NCCL collectives on fakenccl, next to the real NCCL's when one loads,
// and next to the machine's memcpy, all measured in one run.
//
//   build/release/bench/nccl_bench                                   # everything
//   build/release/bench/nccl_bench --benchmark_filter='Memcpy|fake'  # no real NCCL
//   build/release/bench/nccl_bench --benchmark_min_time=0.1           # quicker
//
// Benchmarks named ".../fake" (fakenccl on fakecuda, ranks 1, 2 and 4 in one process, driven from
// one thread in a group as ncclCommInitAll programs do) and ".../real" (1 rank); the real ones
// are skipped with the reason when libcuda.so.1 or libnccl.so.2 cannot be loaded or there is no
// GPU (CUHAL_LIBNCCL_PATH picks the NCCL library). Sizes are 4 B to 64 MiB in powers of 4.
//
// Counters: "bytes" is the size S of the collective as nccl-tests counts it (the all-reduce and
// broadcast buffer, all-gather's receive buffer, reduce-scatter's send buffer; per rank) and
// "GB/s" is S per second of one collective including its stream synchronizations (nccl-tests'
// algorithm bandwidth, 1e9 bytes); "all_ranks_GB/s" counts the bytes written into every rank's
// receive buffer together (the fake moves them all in this process). Every call is out of place (a one-rank in-place call moves
// nothing, as NCCL's; BM_AllReduceInPlace measures that separately). BM_Memcpy is std::memcpy of
// S bytes between two host buffers: the machine's copy bandwidth the fake's is compared with.
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
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
  std::vector<CUdeviceptr> send;  // kMaxBytes per rank
  std::vector<CUdeviceptr> recv;  // kMaxBytes per rank
  std::vector<ncclComm_t> comms;
  std::string unavailable;
};

constexpr std::size_t kMinBytes = 4;
constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

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
  w->send.resize(static_cast<size_t>(ranks));
  w->recv.resize(static_cast<size_t>(ranks));
  w->comms.resize(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    auto rr = static_cast<size_t>(r);
    if (w->cuda->cuDevicePrimaryCtxRetain(&w->ctx[rr], r) != CUDA_SUCCESS ||
        w->cuda->cuCtxPushCurrent(w->ctx[rr]) != CUDA_SUCCESS ||
        w->cuda->cuStreamCreate(&w->streams[rr], CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        w->cuda->cuMemAlloc(&w->send[rr], kMaxBytes) != CUDA_SUCCESS ||
        w->cuda->cuMemAlloc(&w->recv[rr], kMaxBytes) != CUDA_SUCCESS ||
        w->cuda->cuMemsetD8(w->send[rr], 1, kMaxBytes) != CUDA_SUCCESS ||  // touched once
        w->cuda->cuMemsetD8(w->recv[rr], 0, kMaxBytes) != CUDA_SUCCESS ||
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

enum class Coll { kAllReduce, kAllGather, kReduceScatter, kBroadcast };

// One collective of size S = state.range(0) on every rank (grouped from this thread), then each
// stream synchronized; `in_place` passes the receive buffer as the send buffer.
void RunCollective(benchmark::State& state, const World& w, Coll coll, bool in_place = false) {
  if (!w.unavailable.empty()) {
    state.SkipWithError(w.unavailable.c_str());
    return;
  }
  const std::size_t n = w.comms.size();
  const auto size = static_cast<std::size_t>(state.range(0));
  // Elements per rank's block: all-gather and reduce-scatter split S into n blocks (at least one
  // element each, so S is rounded for sizes below 4n bytes).
  std::size_t count = size / sizeof(float);
  const bool split = coll == Coll::kAllGather || coll == Coll::kReduceScatter;
  if (split) count = std::max<std::size_t>(1, count / n);
  const std::size_t bytes = split ? count * sizeof(float) * n : count * sizeof(float);
  for (auto _ : state) {
    w.nccl->ncclGroupStart();
    for (std::size_t r = 0; r < n; ++r) {
      void* recv = reinterpret_cast<void*>(w.recv[r]);
      const void* send = in_place ? recv : reinterpret_cast<const void*>(w.send[r]);
      if (in_place && coll == Coll::kAllGather) {
        send = reinterpret_cast<const std::byte*>(recv) + r * count * sizeof(float);
      }
      auto stream = reinterpret_cast<cudaStream_t>(w.streams[r]);
      ncclComm_t comm = w.comms[r];
      switch (coll) {
        case Coll::kAllReduce:
          w.nccl->ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream);
          break;
        case Coll::kAllGather:
          w.nccl->ncclAllGather(send, recv, count, ncclFloat32, comm, stream);
          break;
        case Coll::kReduceScatter:
          if (in_place) send = reinterpret_cast<const std::byte*>(recv);
          w.nccl->ncclReduceScatter(send, recv, count, ncclFloat32, ncclSum, comm, stream);
          break;
        case Coll::kBroadcast:
          w.nccl->ncclBroadcast(send, recv, count, ncclFloat32, 0, comm, stream);
          break;
      }
    }
    if (w.nccl->ncclGroupEnd() != ncclSuccess) {
      state.SkipWithError("ncclGroupEnd failed");
      return;
    }
    for (CUstream s : w.streams) {
      if (w.cuda->cuStreamSynchronize(s) != CUDA_SUCCESS) {
        state.SkipWithError("cuStreamSynchronize failed");
        return;
      }
    }
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["ranks"] = static_cast<double>(n);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  // The fake moves every rank's data in this process: n receive buffers of S for all-reduce,
  // broadcast and all-gather, n of S/n for reduce-scatter (the comparison with one memcpy).
  const double delivered = coll == Coll::kReduceScatter ? static_cast<double>(bytes)
                                                        : static_cast<double>(bytes * n);
  state.counters["all_ranks_GB/s"] =
      benchmark::Counter(delivered * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes));
}

// std::memcpy of S bytes between two host buffers (touched once, kept for the process).
void BM_Memcpy(benchmark::State& state) {
  static std::vector<std::byte>* from = new std::vector<std::byte>(kMaxBytes, std::byte{1});
  static std::vector<std::byte>* to = new std::vector<std::byte>(kMaxBytes, std::byte{0});
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    std::memcpy(to->data(), from->data(), bytes);
    benchmark::ClobberMemory();
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes));
}

// The error path: an argument check that fails (NCCL's ArgsCheck).
void RunArgumentError(benchmark::State& state, const World& w) {
  if (!w.unavailable.empty()) {
    state.SkipWithError(w.unavailable.c_str());
    return;
  }
  void* p = reinterpret_cast<void*>(w.recv[0]);
  for (auto _ : state) {
    benchmark::DoNotOptimize(w.nccl->ncclAllReduce(p, p, 4, ncclNumTypes, ncclSum, w.comms[0],
                                                   reinterpret_cast<cudaStream_t>(w.streams[0])));
  }
}

// The sizes: kMinBytes, 4 * kMinBytes, ..., kMaxBytes.
void Sizes(benchmark::internal::Benchmark* b) {
  for (std::size_t s = kMinBytes; s <= kMaxBytes; s *= 4) b->Arg(static_cast<std::int64_t>(s));
}

#define CUHAL_NCCL_BENCH(Name, coll)                                                        \
  void BM_##Name##_1Rank_fake(benchmark::State& s) { RunCollective(s, FakeWorld(1), coll); } \
  void BM_##Name##_2Ranks_fake(benchmark::State& s) { RunCollective(s, FakeWorld(2), coll); } \
  void BM_##Name##_4Ranks_fake(benchmark::State& s) { RunCollective(s, FakeWorld(4), coll); } \
  void BM_##Name##_1Rank_real(benchmark::State& s) { RunCollective(s, RealWorld(), coll); }   \
  BENCHMARK(BM_##Name##_1Rank_fake)->Apply(Sizes);                                          \
  BENCHMARK(BM_##Name##_2Ranks_fake)->Apply(Sizes);                                         \
  BENCHMARK(BM_##Name##_4Ranks_fake)->Apply(Sizes);                                         \
  BENCHMARK(BM_##Name##_1Rank_real)->Apply(Sizes)

BENCHMARK(BM_Memcpy)->Apply(Sizes);
CUHAL_NCCL_BENCH(AllReduce, Coll::kAllReduce);
CUHAL_NCCL_BENCH(AllGather, Coll::kAllGather);
CUHAL_NCCL_BENCH(ReduceScatter, Coll::kReduceScatter);
CUHAL_NCCL_BENCH(Broadcast, Coll::kBroadcast);

// One rank in place: nothing moves (NCCL's one-rank path), so only the call's fixed cost remains.
void BM_AllReduceInPlace_1Rank_fake(benchmark::State& s) {
  RunCollective(s, FakeWorld(1), Coll::kAllReduce, /*in_place=*/true);
}
void BM_AllReduceInPlace_1Rank_real(benchmark::State& s) {
  RunCollective(s, RealWorld(), Coll::kAllReduce, /*in_place=*/true);
}
BENCHMARK(BM_AllReduceInPlace_1Rank_fake)->Arg(4)->Arg(1 << 20)->Arg(64 << 20);
BENCHMARK(BM_AllReduceInPlace_1Rank_real)->Arg(4)->Arg(1 << 20)->Arg(64 << 20);

void BM_ArgumentError_fake(benchmark::State& s) { RunArgumentError(s, FakeWorld(1)); }
void BM_ArgumentError_real(benchmark::State& s) { RunArgumentError(s, RealWorld()); }
BENCHMARK(BM_ArgumentError_fake);
BENCHMARK(BM_ArgumentError_real);

}  // namespace

BENCHMARK_MAIN();
