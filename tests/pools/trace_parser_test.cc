// Copyright 2026 The cuhal Authors.
// The trace format itself: parsing, carried-forward expectations, the safety checks, and that a
// wrong expectation is reported (so that the differential tests can fail).
#include <gtest/gtest.h>

#include <string>

#include "tests/pools/trace_replayer.h"
#include "tests/support/backend.h"

namespace cuhal::pools {
namespace {

TEST(TraceParserTest, CarriesStatisticsForward) {
  Trace trace;
  std::string error;
  ASSERT_TRUE(
      ParseTrace("pool create max=64M\n"
                 "stream s0   # a comment\n"
                 "alloc a 32M+1 s0 -> reserved=64M used=32M+1 reuse=no # UNMEASURED\n"
                 "free a s0 -> used=0\n"
                 "set release_threshold max\n",
                 "t", &trace, &error))
      << error;
  ASSERT_EQ(trace.steps.size(), 5u);
  EXPECT_EQ(trace.steps[0].op, "pool");
  ASSERT_TRUE(trace.steps[0].stats.has_value());
  EXPECT_EQ((*trace.steps[0].stats)[0], 0u);
  const TraceStep& alloc = trace.steps[2];
  EXPECT_EQ(alloc.line, 3);
  EXPECT_TRUE(alloc.unmeasured);
  EXPECT_EQ(alloc.reuse, std::optional<bool>(false));
  EXPECT_EQ((*alloc.stats)[0], 64u << 20);
  EXPECT_EQ((*alloc.stats)[2], (32u << 20) + 1);
  const TraceStep& free = trace.steps[3];
  EXPECT_FALSE(free.unmeasured);
  EXPECT_EQ((*free.stats)[0], 64u << 20);  // carried
  EXPECT_EQ((*free.stats)[2], 0u);
  EXPECT_EQ(trace.steps[4].err, CUDA_SUCCESS);
  EXPECT_FALSE(trace.uses_gates);
}

TEST(TraceParserTest, RejectsMalformedTraces) {
  struct Case {
    const char* text;
    const char* why;
  };
  const Case cases[] = {
      {"frobnicate\n", "unknown step"},
      {"pool create\nstream s0\nalloc a 1 s0\n", "a successful allocation must say reuse"},
      {"pool create\nalloc a 1 s0 -> reuse=maybe\n", "reuse=yes|no"},
      {"pool create\nsync_ctx -> err=CUDA_ERROR_NOPE\n", "unknown CUresult"},
      {"stream s0 -> used=1\n", "statistics before the pool step"},
      {"pool create\nstream s0\nblock s0\nsync_stream s0\nunblock s0\n", "blocked stream"},
      {"pool create\nstream s0\nblock s0\nsync_ctx\nunblock s0\n", "blocked"},
      {"pool create\nstream s0\nevent e\nblock s0\nrecord e s0\nsync_event e\nunblock s0\n",
       "behind a blocked stream"},
      {"pool create\nstream s0\nblock s0\n", "still blocked"},
      {"pool create\npool default\n", "one pool"},
      {"pool create\nalloc a 1\n", "arguments"},
  };
  for (const Case& c : cases) {
    Trace trace;
    std::string error;
    EXPECT_FALSE(ParseTrace(c.text, "bad", &trace, &error)) << c.text;
    EXPECT_NE(error.find(c.why), std::string::npos) << "error '" << error << "' for:\n" << c.text;
  }
}

// A trace with a wrong expectation must produce a mismatch naming the step and the statistic:
// the differential tests can fail.
TEST(TraceReplayTest, ReportsWrongExpectations) {
  Trace trace;
  std::string error;
  ASSERT_TRUE(
      ParseTrace("pool create\n"
                 "stream s0\n"
                 "alloc a 1 s0 -> reserved=2M reserved_high=32M used=1 used_high=1 reuse=yes\n"
                 "free a s0 -> err=CUDA_ERROR_INVALID_VALUE\n",
                 "wrong", &trace, &error))
      << error;
  std::string unavailable;
  auto backend = testing::Backend::Create("fake", {}, &unavailable, &error);
  ASSERT_NE(backend, nullptr) << error;
  ReplayResult result = Replay(backend->api(), trace);
  ASSERT_TRUE(result.fatal.empty()) << result.fatal;
  std::vector<Mismatch> mismatches = CompareToExpected(trace, result);
  std::string all;
  for (const Mismatch& m : mismatches) all += m.ToString("expected", "fake") + "\n";
  EXPECT_NE(all.find("(wrong, line 3 'alloc a 1 s0', reserved, expected 2097152, fake 33554432)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("line 3 'alloc a 1 s0', reuse, expected yes, fake no"), std::string::npos)
      << all;
  EXPECT_NE(
      all.find("line 4 'free a s0', err, expected CUDA_ERROR_INVALID_VALUE, fake CUDA_SUCCESS"),
      std::string::npos)
      << all;
  // The same replay compared with itself agrees.
  EXPECT_TRUE(CompareResults(trace, result, result).empty());
}

}  // namespace
}  // namespace cuhal::pools
