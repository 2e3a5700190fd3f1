// Copyright 2026 The cuhal Authors.
// Allocation traces replayed on each allocator (trace/replay.h): one benchmark per shipped trace
// (bench/traces/*.jsonl), allocator and backend, BM_Replay/<trace>/<allocator>/<backend>. Each
// iteration is one timing pass (TimeReplayPass: a fresh allocator, every operation timed
// alone); the iteration's manual time is the sum of its timed regions, so stream and event
// setup and teardown are not counted.
//
//   build/release/bench/alloc_bench                              # fake, and real when it loads
//   build/release/bench/alloc_bench --backend=real --benchmark_format=json
//   build/release/bench/alloc_bench --short --benchmark_min_time=0.01s   # CI's short mode
//
// Flags (before Google Benchmark's own) and their environment variables:
//   --backend=fake|real|all   CUHAL_ALLOC_BENCH_BACKEND (default all: the real driver is left
//                             out, with a line on stderr, when it does not load);
//   --short                   CUHAL_ALLOC_BENCH_SHORT=1: only the two smallest traces (by
//                             operation count);
//   --min_growth_mib=8,16     CUHAL_ALLOC_BENCH_MIN_GROWTH_MIB: core-expandable once more per
//                             value, as BM_Replay/<trace>/core-expandable-min<N>MiB/<backend>
//                             (CachingAllocatorParams::expandable_min_growth; default none);
//   CUHAL_TRACE_DIR           the traces' directory (default: the source tree's bench/traces).
// Allocators that cannot run on a backend (pytorch without -DCUHAL_WITH_TORCH=ON, or on the
// fake) are not registered; stderr says why.
//
// Counters: ns_per_op (the timed nanoseconds over every operation of every iteration), p99_ns
// (the 99th percentile of the single operations' nanoseconds), and from one ReplayTrace pass
// done before the first timed iteration: reserved_high, used_high, reserved_per_used and
// driver_calls (its footprint pass, see trace/replay.h).
//
// BM_VmmGrowth/<MiB>/<backend> times what one growth of an expandable range costs the driver
// (cuMemCreate + cuMemMap + cuMemSetAccess of one allocation of that size, in a reserved range)
// and, separately, giving it back (cuMemUnmap + cuMemRelease); BM_MemAlloc/<MiB>/<backend> the
// same for a classic segment (cuMemAlloc, cuMemFree). Counters: grow_us / alloc_us and
// release_us / free_us per iteration. They say whether the driver's cost is per call or per
// byte (docs/driver_facts.md has one 2 MiB granule only).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_backend.h"
#include "core/base/env.h"
#include "core/base/status_or.h"
#include "trace/alloc_trace.h"
#include "trace/replay.h"

#ifndef CUHAL_ALLOC_BENCH_TRACE_DIR
#error "CUHAL_ALLOC_BENCH_TRACE_DIR (the shipped traces' directory) must be defined"
#endif

namespace {

using ::cuhal::Status;
using ::cuhal::StatusOr;
using ::cuhal::bench::Backend;
using ::cuhal::trace::AllocTrace;
using ::cuhal::trace::ReplayAllocatorKind;
using ::cuhal::trace::ReplayAllocatorName;
using ::cuhal::trace::ReplayResult;
using ::cuhal::trace::ReplayTarget;

// One trace on one allocator of one backend. The footprint figures come from one ReplayTrace,
// run on the first call of the benchmark function (Google Benchmark calls it once per run, and
// more than once while it sizes the iteration count) and kept for the later calls.
// Ownership: owned by main's case list, which outlives RunSpecifiedBenchmarks; borrows the trace
// and the target. Thread-safety: one benchmark thread (the default). Stream ordering: the
// replay's own (trace/replay.h).
struct ReplayCase {
  const AllocTrace* trace = nullptr;
  const ReplayTarget* target = nullptr;
  ReplayAllocatorKind kind = ReplayAllocatorKind::kDriverPool;
  std::optional<StatusOr<ReplayResult>> footprint;
};

double Percentile99(std::vector<std::uint64_t>* ns) {
  if (ns->empty()) return 0;
  // Nearest rank: the smallest value with at least 99% of the values at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(ns->size())));
  const std::size_t index = std::clamp<std::size_t>(rank, 1, ns->size()) - 1;
  std::nth_element(ns->begin(), ns->begin() + static_cast<std::ptrdiff_t>(index), ns->end());
  return static_cast<double>((*ns)[index]);
}

void BM_Replay(benchmark::State& state, ReplayCase* c) {
  if (!c->footprint.has_value()) {
    c->footprint = cuhal::trace::ReplayTrace(*c->trace, c->kind, *c->target);
  }
  if (!c->footprint->ok()) {
    const std::string message = c->footprint->status().ToString();
    state.SkipWithError(message.c_str());
    return;
  }
  const ReplayResult& footprint = c->footprint->value();
  std::vector<std::uint64_t> ns;
  ns.reserve(c->trace->ops.size());
  std::uint64_t timed_ns = 0;
  for (auto _ : state) {
    StatusOr<std::uint64_t> sum =
        cuhal::trace::TimeReplayPass(*c->trace, c->kind, *c->target, &ns);
    if (!sum.ok()) {
      const std::string message = sum.status().ToString();
      state.SkipWithError(message.c_str());
      return;
    }
    timed_ns += *sum;
    state.SetIterationTime(static_cast<double>(*sum) * 1e-9);
  }
  const auto ops = static_cast<std::int64_t>(c->trace->ops.size());
  state.SetItemsProcessed(state.iterations() * ops);
  state.counters["ns_per_op"] =
      ns.empty() ? 0.0 : static_cast<double>(timed_ns) / static_cast<double>(ns.size());
  state.counters["p99_ns"] = Percentile99(&ns);
  state.counters["reserved_high"] = static_cast<double>(footprint.reserved_high);
  state.counters["used_high"] = static_cast<double>(footprint.used_high);
  state.counters["reserved_per_used"] = footprint.reserved_per_used;
  state.counters["driver_calls"] = static_cast<double>(footprint.driver_calls);
}

double MicrosecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

// One growth of `mib` MiB per iteration in one reserved range: create + map + set access timed
// together, unmap + release together (manual time: the sum of both).
void BM_VmmGrowth(benchmark::State& state, const Backend* backend, int mib) {
  const cuhal::CudaApi& api = *backend->api;
  if (api.cuCtxSetCurrent(backend->ctx) != CUDA_SUCCESS) {
    state.SkipWithError("cuCtxSetCurrent failed");
    return;
  }
  const std::size_t size = static_cast<std::size_t>(mib) << 20;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUdeviceptr range = 0;
  if (api.cuMemAddressReserve == nullptr ||
      api.cuMemAddressReserve(&range, size, 0, 0, 0) != CUDA_SUCCESS) {
    state.SkipWithError("cuMemAddressReserve failed");
    return;
  }
  double grow_us = 0, release_us = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    CUmemGenericAllocationHandle handle = 0;
    const CUresult created = api.cuMemCreate(&handle, size, &prop, 0);
    const CUresult mapped = created == CUDA_SUCCESS ? api.cuMemMap(range, size, 0, handle, 0)
                                                    : created;
    const CUresult opened =
        mapped == CUDA_SUCCESS ? api.cuMemSetAccess(range, size, &access, 1) : mapped;
    const double grow = MicrosecondsSince(start);
    start = std::chrono::steady_clock::now();
    const CUresult unmapped = mapped == CUDA_SUCCESS ? api.cuMemUnmap(range, size) : mapped;
    const CUresult released = created == CUDA_SUCCESS ? api.cuMemRelease(handle) : created;
    const double release = MicrosecondsSince(start);
    if (opened != CUDA_SUCCESS || unmapped != CUDA_SUCCESS || released != CUDA_SUCCESS) {
      state.SkipWithError(("a VMM call failed: " +
                           cuhal::bench::ResultName(opened != CUDA_SUCCESS     ? opened
                                                    : unmapped != CUDA_SUCCESS ? unmapped
                                                                               : released))
                              .c_str());
      break;
    }
    grow_us += grow;
    release_us += release;
    state.SetIterationTime((grow + release) * 1e-6);
  }
  api.cuMemAddressFree(range, size);
  const auto n = static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
  state.counters["grow_us"] = grow_us / n;
  state.counters["release_us"] = release_us / n;
}

// One cuMemAlloc of `mib` MiB and its cuMemFree per iteration, timed apart.
void BM_MemAlloc(benchmark::State& state, const Backend* backend, int mib) {
  const cuhal::CudaApi& api = *backend->api;
  if (api.cuCtxSetCurrent(backend->ctx) != CUDA_SUCCESS) {
    state.SkipWithError("cuCtxSetCurrent failed");
    return;
  }
  const std::size_t size = static_cast<std::size_t>(mib) << 20;
  double alloc_us = 0, free_us = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    CUdeviceptr ptr = 0;
    const CUresult allocated = api.cuMemAlloc(&ptr, size);
    const double alloc = MicrosecondsSince(start);
    start = std::chrono::steady_clock::now();
    const CUresult freed = allocated == CUDA_SUCCESS ? api.cuMemFree(ptr) : allocated;
    const double freeing = MicrosecondsSince(start);
    if (freed != CUDA_SUCCESS) {
      state.SkipWithError(("cuMemAlloc/cuMemFree failed: " + cuhal::bench::ResultName(freed))
                              .c_str());
      break;
    }
    alloc_us += alloc;
    free_us += freeing;
    state.SetIterationTime((alloc + freeing) * 1e-6);
  }
  const auto n = static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
  state.counters["alloc_us"] = alloc_us / n;
  state.counters["free_us"] = free_us / n;
}

// The command line's own flags, removed from argv before Google Benchmark reads it.
struct Options {
  bool fake = true;
  bool real = true;
  bool short_mode = false;
  std::vector<int> min_growth_mib;  // extra core-expandable cases
};

// "8,16" -> {8, 16}; false (with a line on stderr) on anything else.
bool ParseMibList(std::string_view text, std::vector<int>* out) {
  out->clear();
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    int value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size() || value <= 0) {
      std::fprintf(stderr,
                   "alloc_bench: --min_growth_mib wants positive integers separated by commas, "
                   "not '%.*s'\n",
                   static_cast<int>(item.size()), item.data());
      return false;
    }
    out->push_back(value);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return true;
}

bool ParseBackend(std::string_view text, Options* options) {
  if (text == "fake" || text == "real" || text == "all") {
    options->fake = text != "real";
    options->real = text != "fake";
    return true;
  }
  std::fprintf(stderr, "alloc_bench: --backend must be fake, real or all, not '%.*s'\n",
               static_cast<int>(text.size()), text.data());
  return false;
}

bool ParseOptions(int* argc, char** argv, Options* options) {
  if (std::optional<std::string> backend = cuhal::env::ReadString("CUHAL_ALLOC_BENCH_BACKEND")) {
    if (!ParseBackend(*backend, options)) return false;
  }
  StatusOr<bool> short_mode = cuhal::env::ReadBool("CUHAL_ALLOC_BENCH_SHORT", false);
  if (!short_mode.ok()) {
    std::fprintf(stderr, "alloc_bench: %s\n", short_mode.status().ToString().c_str());
    return false;
  }
  options->short_mode = *short_mode;
  if (std::optional<std::string> list =
          cuhal::env::ReadString("CUHAL_ALLOC_BENCH_MIN_GROWTH_MIB")) {
    if (!ParseMibList(*list, &options->min_growth_mib)) return false;
  }
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--backend=")) {
      if (!ParseBackend(arg.substr(std::string_view("--backend=").size()), options)) return false;
    } else if (arg == "--short") {
      options->short_mode = true;
    } else if (arg.starts_with("--min_growth_mib=")) {
      if (!ParseMibList(arg.substr(std::string_view("--min_growth_mib=").size()),
                        &options->min_growth_mib)) {
        return false;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
  return true;
}

struct LoadedTrace {
  std::string name;  // the file's stem
  AllocTrace trace;
};

// Every *.jsonl trace in `dir`, by name; in short mode the two with the fewest operations.
StatusOr<std::vector<std::unique_ptr<LoadedTrace>>> LoadTraces(const std::string& dir,
                                                               bool short_mode) {
  std::vector<std::filesystem::path> paths;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".jsonl") paths.push_back(e.path());
  }
  if (ec) return cuhal::NotFoundError("trace directory " + dir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<std::unique_ptr<LoadedTrace>> traces;
  for (const auto& path : paths) {
    StatusOr<AllocTrace> trace = cuhal::trace::ReadAllocTrace(path.string());
    if (!trace.ok()) return trace.status();
    traces.push_back(std::make_unique<LoadedTrace>(
        LoadedTrace{path.stem().string(), std::move(trace).value()}));
  }
  if (short_mode && traces.size() > 2) {
    std::stable_sort(traces.begin(), traces.end(), [](const auto& a, const auto& b) {
      return a->trace.ops.size() < b->trace.ops.size();
    });
    traces.resize(2);
    std::sort(traces.begin(), traces.end(),
              [](const auto& a, const auto& b) { return a->name < b->name; });
  }
  return traces;
}

struct BackendTarget {
  std::string name;  // "fake" or "real"
  ReplayTarget target;
  const cuhal::bench::Backend* backend = nullptr;
};

// The target on `backend`'s device 0, or nullopt (with a line on stderr) when it has none.
std::optional<BackendTarget> MakeTarget(const char* name, const Backend& backend) {
  if (!backend.unavailable.empty()) {
    std::fprintf(stderr, "alloc_bench: no %s backend: %s\n", name, backend.unavailable.c_str());
    return std::nullopt;
  }
  StatusOr<ReplayTarget> target =
      cuhal::trace::MakeReplayTarget(backend.api, backend.ctx, 0, name);
  if (!target.ok()) {
    std::fprintf(stderr, "alloc_bench: no %s backend: %s\n", name,
                 target.status().ToString().c_str());
    return std::nullopt;
  }
  return BackendTarget{name, std::move(target).value(), &backend};
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(&argc, argv, &options)) return 2;
  const std::string dir =
      cuhal::env::ReadString("CUHAL_TRACE_DIR").value_or(CUHAL_ALLOC_BENCH_TRACE_DIR);
  StatusOr<std::vector<std::unique_ptr<LoadedTrace>>> traces = LoadTraces(dir, options.short_mode);
  if (!traces.ok()) {
    std::fprintf(stderr, "alloc_bench: %s\n", traces.status().ToString().c_str());
    return 1;
  }
  if (traces->empty()) {
    std::fprintf(stderr, "alloc_bench: no *.jsonl trace in %s\n", dir.c_str());
    return 1;
  }

  std::vector<std::unique_ptr<BackendTarget>> targets;
  if (options.fake) {
    if (auto t = MakeTarget("fake", cuhal::bench::FakeBackend())) {
      targets.push_back(std::make_unique<BackendTarget>(std::move(*t)));
    }
  }
  if (options.real) {
    if (auto t = MakeTarget("real", cuhal::bench::RealBackend())) {
      targets.push_back(std::make_unique<BackendTarget>(std::move(*t)));
    }
  }

  std::vector<std::unique_ptr<ReplayCase>> cases;
  std::vector<std::unique_ptr<ReplayTarget>> variants;  // core-expandable with a least growth
  for (const auto& target : targets) {
    for (int mib : {2, 8, 16, 32, 64}) {
      const std::string size = std::to_string(mib) + "/" + target->name;
      benchmark::RegisterBenchmark(("BM_VmmGrowth/" + size).c_str(), BM_VmmGrowth,
                                   target->backend, mib)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("BM_MemAlloc/" + size).c_str(), BM_MemAlloc,
                                   target->backend, mib)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
    for (int mib : options.min_growth_mib) {
      variants.push_back(std::make_unique<ReplayTarget>(target->target));
      variants.back()->expandable_min_growth = static_cast<std::uint64_t>(mib) << 20;
      for (const auto& trace : *traces) {
        cases.push_back(std::make_unique<ReplayCase>(ReplayCase{
            &trace->trace, variants.back().get(), ReplayAllocatorKind::kCoreExpandable,
            std::nullopt}));
        const std::string name = "BM_Replay/" + trace->name + "/core-expandable-min" +
                                 std::to_string(mib) + "MiB/" + target->name;
        benchmark::RegisterBenchmark(name.c_str(), BM_Replay, cases.back().get())
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
    for (ReplayAllocatorKind kind : cuhal::trace::ReplayAllocatorKinds()) {
      const std::string allocator(ReplayAllocatorName(kind));
      if (Status available = cuhal::trace::ReplayAllocatorAvailable(kind, target->target);
          !available.ok()) {
        std::fprintf(stderr, "alloc_bench: %s on %s not benchmarked: %s\n", allocator.c_str(),
                     target->name.c_str(), available.ToString().c_str());
        continue;
      }
      for (const auto& trace : *traces) {
        cases.push_back(std::make_unique<ReplayCase>(
            ReplayCase{&trace->trace, &target->target, kind, std::nullopt}));
        const std::string name =
            "BM_Replay/" + trace->name + "/" + allocator + "/" + target->name;
        benchmark::RegisterBenchmark(name.c_str(), BM_Replay, cases.back().get())
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
