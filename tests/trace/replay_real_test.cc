// Copyright 2026 The cuhal Authors.
// Every shipped trace (bench/traces) replayed on every allocator this build has, on the real
// driver (label real: the nightly job): the driver's pool, the core's caching allocator, the
// core's pool path and, in builds configured with -DCUHAL_WITH_TORCH=ON, PyTorch's caching
// allocator, in one process. Checks what must hold on any GPU (every allocation succeeds, the
// used high is the trace's own, nothing is left live, reserved >= used); prints one
// `REPLAY {json}` line per (trace, allocator) with ns/op, p99, reserved/used highs and driver
// calls for the nightly report. Times are reported, never asserted. Skipped, with the reason,
// without a usable GPU (CUHAL_REAL_REQUIRED=1 makes that a failure).
#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/env.h"
#include "tests/support/backend.h"
#include "trace/alloc_trace.h"
#include "trace/replay.h"

namespace cuhal::trace {
namespace {

std::vector<std::string> Traces() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(CUHAL_TRACE_DIR)) {
    if (entry.path().extension() == ".jsonl") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

class ReplayRealTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReplayRealTest, EveryAllocatorReplaysTheTrace) {
  StatusOr<AllocTrace> trace = ReadAllocTrace(GetParam());
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::string unavailable, error;
  auto backend = testing::Backend::Create("real", {}, &unavailable, &error);
  if (backend == nullptr) {
    if (!error.empty()) FAIL() << error;
    GTEST_SKIP() << unavailable;
  }
  testing::ScopedPrimaryContext ctx(backend->api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  StatusOr<ReplayTarget> target = MakeReplayTarget(&backend->api(), ctx.get(), 0, "real");
  ASSERT_TRUE(target.ok()) << target.status();
  ReplayOptions options;
  StatusOr<std::uint64_t> repeat = env::ReadUnsigned("CUHAL_REPLAY_REPEAT", 3, 1, 100);
  ASSERT_TRUE(repeat.ok()) << repeat.status();
  options.repeat = static_cast<int>(*repeat);
  options.max_series_points = 1000;
  for (ReplayAllocatorKind kind : ReplayAllocatorKinds()) {
    const std::string name(ReplayAllocatorName(kind));
    SCOPED_TRACE(name);
    if (Status available = ReplayAllocatorAvailable(kind, *target); !available.ok()) {
      std::printf("REPLAY-SKIP %s %s: %s\n", trace->name.c_str(), name.c_str(),
                  available.ToString().c_str());
      continue;
    }
    StatusOr<ReplayResult> r = ReplayTrace(*trace, kind, *target, options);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->used_high, trace->used_high);
    EXPECT_GE(r->reserved_high, r->used_high);
    EXPECT_EQ(r->freed_at_end, trace->live_at_end);
    std::printf(
        "REPLAY {\"trace\": \"%s\", \"allocator\": \"%s\", \"operations\": %llu, \"repeat\": %d, "
        "\"ns_per_op\": %.1f, \"ns_per_op_timed\": %.1f, \"p50_ns\": %.1f, \"p99_ns\": %.1f, "
        "\"alloc_ns\": %.1f, "
        "\"free_ns\": %.1f, \"reserved_high\": %llu, \"used_high\": %llu, "
        "\"reserved_per_used\": %.3f, \"driver_calls\": %llu}\n",
        trace->name.c_str(), name.c_str(), static_cast<unsigned long long>(r->operations),
        r->repeat, r->ns_per_op_mean, r->ns_per_op_timed_mean, r->ns_per_op_p50,
        r->ns_per_op_p99, r->alloc_ns_mean,
        r->free_ns_mean, static_cast<unsigned long long>(r->reserved_high),
        static_cast<unsigned long long>(r->used_high), r->reserved_per_used,
        static_cast<unsigned long long>(r->driver_calls));
    std::fflush(stdout);
  }
}

std::string CaseName(const ::testing::TestParamInfo<std::string>& info) {
  return std::filesystem::path(info.param).stem().string();
}

INSTANTIATE_TEST_SUITE_P(Traces, ReplayRealTest, ::testing::ValuesIn(Traces()), CaseName);

}  // namespace
}  // namespace cuhal::trace
