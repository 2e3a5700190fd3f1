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
//   CUHAL_TRACE_DIR           the traces' directory (default: the source tree's bench/traces).
// Allocators that cannot run on a backend (pytorch without -DCUHAL_WITH_TORCH=ON, or on the
// fake) are not registered; stderr says why.
//
// Counters: ns_per_op (the timed nanoseconds over every operation of every iteration), p99_ns
// (the 99th percentile of the single operations' nanoseconds), and from one ReplayTrace pass
// done before the first timed iteration: reserved_high, used_high, reserved_per_used and
// driver_calls (its footprint pass, see trace/replay.h).
#include <benchmark/benchmark.h>

#include <algorithm>
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

// The command line's own flags, removed from argv before Google Benchmark reads it.
struct Options {
  bool fake = true;
  bool real = true;
  bool short_mode = false;
};

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
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--backend=")) {
      if (!ParseBackend(arg.substr(std::string_view("--backend=").size()), options)) return false;
    } else if (arg == "--short") {
      options->short_mode = true;
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
  return BackendTarget{name, std::move(target).value()};
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
  for (const auto& target : targets) {
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
