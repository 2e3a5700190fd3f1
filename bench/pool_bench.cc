// Copyright 2026 The cuhal Authors.
// The stream-ordered allocator: cost of a pool allocation + free pair on one stream, on fakecuda
// and on the real driver when one loads.
//
//   build/pools-release/bench/pool_bench                         # both backends
//   build/pools-release/bench/pool_bench --benchmark_filter=fake
//
// Target for the fake on the development machine (issue 4): <= 150 ns per
// cuMemAllocFromPoolAsync + cuMemFreeAsync pair. Measured on the H200 (DESIGN.md): 0.6-1.3 us.
// Counters: reserved_bytes and used_bytes (the pool's RESERVED_MEM_CURRENT and USED_MEM_CURRENT
// while the loop's allocations are live), reserved_high and used_high after the loop.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

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

// A stream and a pool (or the default pool) on the backend's primary context, for one benchmark.
class PoolFixture {
 public:
  PoolFixture(benchmark::State& state, const Backend& b, bool default_pool) : state_(state), b_(b) {
    if (!b.unavailable.empty()) {
      state.SkipWithError(b.unavailable.c_str());
      return;
    }
    const cuhal::CudaApi& api = *b.api;
    if (!Check(api.cuCtxSetCurrent(b.ctx), "cuCtxSetCurrent")) return;
    if (!Check(api.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate")) return;
    if (default_pool) {
      if (!Check(api.cuDeviceGetDefaultMemPool(&pool_, 0), "cuDeviceGetDefaultMemPool")) return;
    } else {
      CUmemPoolProps props{};
      props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
      props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      props.location.id = 0;
      if (!Check(api.cuMemPoolCreate(&pool_, &props), "cuMemPoolCreate")) return;
      owned_ = true;
    }
    ok_ = true;
  }
  ~PoolFixture() {
    if (b_.api == nullptr) return;
    const cuhal::CudaApi& api = *b_.api;
    if (stream_ != nullptr) {
      api.cuStreamSynchronize(stream_);
      api.cuStreamDestroy(stream_);
    }
    if (owned_) api.cuMemPoolDestroy(pool_);
    api.cuCtxSetCurrent(nullptr);
  }
  PoolFixture(const PoolFixture&) = delete;             // owns a stream and a pool
  PoolFixture& operator=(const PoolFixture&) = delete;  // ditto

  bool ok() const { return ok_; }
  const cuhal::CudaApi& api() const { return *b_.api; }
  CUstream stream() const { return stream_; }
  CUmemoryPool pool() const { return pool_; }

  bool Check(CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return true;
    std::string message = std::string(what) + " = " + Name(r);
    state_.SkipWithError(message.c_str());
    ok_ = false;
    return false;
  }

  double Stat(CUmemPool_attribute attr) const {
    cuuint64_t v = 0;
    b_.api->cuMemPoolGetAttribute(pool_, attr, &v);
    return static_cast<double>(v);
  }

  // Reports the pool's statistics as counters; `live` are the loop's allocations (freed after).
  void Report(const std::vector<CUdeviceptr>& live) {
    state_.counters["reserved_bytes"] = Stat(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    state_.counters["used_bytes"] = Stat(CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    for (CUdeviceptr p : live) api().cuMemFreeAsync(p, stream_);
    state_.counters["reserved_high"] = Stat(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH);
    state_.counters["used_high"] = Stat(CU_MEMPOOL_ATTR_USED_MEM_HIGH);
  }

 private:
  benchmark::State& state_;
  const Backend& b_;
  CUstream stream_ = nullptr;
  CUmemoryPool pool_ = nullptr;
  bool owned_ = false;
  bool ok_ = false;
};

// cuMemAllocFromPoolAsync + cuMemFreeAsync of range(0) bytes on one stream, while range(1)
// other allocations of the same size stay live in the pool.
void BM_PoolAllocFreePair(benchmark::State& state, const Backend& (*backend)()) {
  PoolFixture f(state, backend(), /*default_pool=*/false);
  if (!f.ok()) return;
  const auto bytes = static_cast<size_t>(state.range(0));
  std::vector<CUdeviceptr> live(static_cast<size_t>(state.range(1)));
  for (CUdeviceptr& p : live) {
    if (!f.Check(f.api().cuMemAllocFromPoolAsync(&p, bytes, f.pool(), f.stream()), "alloc")) {
      return;
    }
  }
  const cuhal::CudaApi& api = f.api();
  CUmemoryPool pool = f.pool();
  CUstream stream = f.stream();
  for (auto _ : state) {
    CUdeviceptr p = 0;
    CUresult a = api.cuMemAllocFromPoolAsync(&p, bytes, pool, stream);
    CUresult b = api.cuMemFreeAsync(p, stream);
    if (a != CUDA_SUCCESS || b != CUDA_SUCCESS) {
      f.Check(a != CUDA_SUCCESS ? a : b, "cuMemAllocFromPoolAsync/cuMemFreeAsync");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  CUdeviceptr extra = 0;
  if (f.Check(api.cuMemAllocFromPoolAsync(&extra, bytes, pool, stream), "alloc")) {
    live.push_back(extra);
  }
  f.Report(live);
}

// The same pair through cuMemAllocAsync (the device's current pool, here the default one).
void BM_DefaultPoolAllocFreePair(benchmark::State& state, const Backend& (*backend)()) {
  PoolFixture f(state, backend(), /*default_pool=*/true);
  if (!f.ok()) return;
  const auto bytes = static_cast<size_t>(state.range(0));
  const cuhal::CudaApi& api = f.api();
  CUstream stream = f.stream();
  for (auto _ : state) {
    CUdeviceptr p = 0;
    CUresult a = api.cuMemAllocAsync(&p, bytes, stream);
    CUresult b = api.cuMemFreeAsync(p, stream);
    if (a != CUDA_SUCCESS || b != CUDA_SUCCESS) {
      f.Check(a != CUDA_SUCCESS ? a : b, "cuMemAllocAsync/cuMemFreeAsync");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  f.Report({});
}

// range(0) allocations of range(1) bytes, then their frees, per iteration (pairs per second in
// items): the cost when the pool holds many ranges.
void BM_PoolBurst(benchmark::State& state, const Backend& (*backend)()) {
  PoolFixture f(state, backend(), /*default_pool=*/false);
  if (!f.ok()) return;
  const auto count = static_cast<size_t>(state.range(0));
  const auto bytes = static_cast<size_t>(state.range(1));
  const cuhal::CudaApi& api = f.api();
  std::vector<CUdeviceptr> ptrs(count);
  for (auto _ : state) {
    for (CUdeviceptr& p : ptrs) {
      if (api.cuMemAllocFromPoolAsync(&p, bytes, f.pool(), f.stream()) != CUDA_SUCCESS) {
        state.SkipWithError("cuMemAllocFromPoolAsync failed");
        return;
      }
    }
    for (CUdeviceptr p : ptrs) api.cuMemFreeAsync(p, f.stream());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(count));
  f.Report({});
}

const Backend& Fake() { return FakeBackend(); }
const Backend& Real() { return RealBackend(); }

void RegisterAll() {
  struct Kind {
    const char* name;
    const Backend& (*backend)();
  };
  for (const Kind& k : {Kind{"fake", &Fake}, Kind{"real", &Real}}) {
    std::string suffix = std::string("/") + k.name;
    benchmark::RegisterBenchmark(("BM_PoolAllocFreePair" + suffix).c_str(), BM_PoolAllocFreePair,
                                 k.backend)
        ->ArgNames({"bytes", "live"})
        ->Args({256, 0})
        ->Args({4096, 0})
        ->Args({1 << 20, 0})
        ->Args({4096, 1000});
    benchmark::RegisterBenchmark(("BM_DefaultPoolAllocFreePair" + suffix).c_str(),
                                 BM_DefaultPoolAllocFreePair, k.backend)
        ->ArgNames({"bytes"})
        ->Arg(4096);
    benchmark::RegisterBenchmark(("BM_PoolBurst" + suffix).c_str(), BM_PoolBurst, k.backend)
        ->ArgNames({"count", "bytes"})
        ->Args({64, 4096});
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
