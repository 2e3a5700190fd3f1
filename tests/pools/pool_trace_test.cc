// Copyright 2026 The cuhal Authors.
// The differential allocation traces (tests/pools/traces/*.trace) against fakecuda: every step's
// pool statistics, result codes and reuse must match the trace's expectations, under the
// adversarial scheduler with several seeds and, for traces that never hold a stream back, under
// the eager one too. A trace must therefore not depend on when unsynchronized work happens to
// complete, which is also what makes it replayable on a real GPU (pool_trace_real_test.cc).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/env.h"
#include "tests/pools/trace_replayer.h"
#include "tests/support/backend.h"

namespace cuhal::pools {
namespace {

std::string TraceDir() {
  return env::ReadString("CUHAL_POOL_TRACE_DIR").value_or(CUHAL_POOL_TRACE_DIR);
}

struct TraceRun {
  std::string path;
  std::string backend;  // "fake" or "fake_adversarial"
  std::uint64_t seed = 0;
};

std::vector<TraceRun> AllRuns() {
  std::vector<TraceRun> runs;
  for (const std::string& path : ListTraces(TraceDir())) {
    runs.push_back({path, "fake", 0});
    for (std::uint64_t seed : {1, 2, 3}) runs.push_back({path, "fake_adversarial", seed});
  }
  return runs;
}

std::string RunName(const ::testing::TestParamInfo<TraceRun>& info) {
  std::string stem = info.param.path.substr(info.param.path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  std::string name = stem + "_" + info.param.backend;
  if (info.param.seed != 0) name += "_seed" + std::to_string(info.param.seed);
  return name;
}

class PoolTraceTest : public ::testing::TestWithParam<TraceRun> {};

TEST_P(PoolTraceTest, MatchesExpectations) {
  const TraceRun& run = GetParam();
  Trace trace;
  std::string error;
  ASSERT_TRUE(LoadTrace(run.path, &trace, &error)) << error;
  if (trace.uses_gates && run.backend == "fake") {
    GTEST_SKIP() << trace.name << " holds streams back; the eager fake runs host functions inline";
  }
  testing::BackendOptions options;
  options.seed = run.seed;
  std::string unavailable;
  auto backend = testing::Backend::Create(run.backend, options, &unavailable, &error);
  ASSERT_NE(backend, nullptr) << error << unavailable;

  ReplayResult result = Replay(backend->api(), trace);
  std::string report;
  for (const Mismatch& m : CompareToExpected(trace, result)) {
    report += "  " + m.ToString("expected", "fake") + "\n";
  }
  EXPECT_TRUE(report.empty()) << trace.name << " on " << run.backend << " (seed " << run.seed
                              << "):\n"
                              << report;
  for (const std::string& note : result.notes) ADD_FAILURE() << trace.name << ": " << note;
  fakecuda::Inventory live = backend->fake()->LiveObjects();
  EXPECT_EQ(live.Total(), 0) << "leaked: " << live.ToString() << "\n"
                             << backend->fake()->LeakReport();
}

INSTANTIATE_TEST_SUITE_P(Traces, PoolTraceTest, ::testing::ValuesIn(AllRuns()), RunName);

TEST(PoolTraceDirTest, HasTraces) { EXPECT_GE(ListTraces(TraceDir()).size(), 10u) << TraceDir(); }

}  // namespace
}  // namespace cuhal::pools
