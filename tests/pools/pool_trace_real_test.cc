// Copyright 2026 The cuhal Authors.
// The differential allocation traces on the real driver: each trace is replayed on the GPU and on
// fakecuda (adversarial scheduler), and every step is compared both ways. A disagreement is
// reported as (trace, step, statistic, fake value, real value); where the trace's expectation
// was UNMEASURED the report says so (the real driver decides: fix the trace and the fake).
//
// Skipped, with the reason, without a usable libcuda.so.1 or GPU; CUHAL_REAL_REQUIRED=1 makes
// that a failure. CUHAL_POOL_TRACE_DUMP=<file> appends every step's real results to <file>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
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

// `text` as the inside of a JSON string.
std::string JsonEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string Stem(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  return stem.substr(0, stem.find('.'));
}

void Dump(const Trace& trace, const ReplayResult& real) {
  const std::optional<std::string> path = env::ReadString("CUHAL_POOL_TRACE_DUMP");
  if (!path) return;
  std::ofstream out(*path, std::ios::app);
  out << "== " << trace.name << (real.fatal.empty() ? "" : "  FATAL: " + real.fatal) << "\n";
  for (size_t i = 0; i < real.steps.size() && i < trace.steps.size(); ++i) {
    const StepResult& s = real.steps[i];
    out << trace.steps[i].line << ": " << trace.steps[i].text << "  => " << ResultName(s.err);
    if (s.stats) {
      for (int k = 0; k < kNumStats; ++k) {
        out << " " << kStatNames[static_cast<size_t>(k)] << "="
            << (*s.stats)[static_cast<size_t>(k)];
      }
    } else if (s.stats_err != CUDA_SUCCESS) {
      out << " stats=" << ResultName(s.stats_err);
    }
    if (s.reuse) out << " reuse=" << (*s.reuse ? "yes" : "no");
    if (s.same) out << " same=" << (*s.same ? "yes" : "no");
    for (const auto& [k, v] : s.values) out << " " << k << "=" << v;
    out << "\n";
  }
  for (const std::string& note : real.notes) out << "note: " << note << "\n";
}

class PoolTraceRealTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PoolTraceRealTest, FakeAgreesWithRealDriver) {
  Trace trace;
  std::string error;
  ASSERT_TRUE(LoadTrace(GetParam(), &trace, &error)) << error;

  std::string unavailable;
  ReplayResult real;
  {
    auto backend = testing::Backend::Create("real", {}, &unavailable, &error);
    if (backend == nullptr) {
      if (!error.empty()) FAIL() << error;
      GTEST_SKIP() << unavailable;
    }
    real = Replay(backend->api(), trace);
  }
  Dump(trace, real);
  ReplayResult fake;
  {
    testing::BackendOptions options;
    options.seed = 1;
    auto backend = testing::Backend::Create("fake_adversarial", options, &unavailable, &error);
    ASSERT_NE(backend, nullptr) << error;
    fake = Replay(backend->api(), trace);
  }

  std::string vs_fake;
  for (const Mismatch& m : CompareResults(trace, fake, real)) {
    vs_fake += "  " + m.ToString("fake", "real") + "\n";
    // One line per mismatch for the nightly report (ci/nightly_report.py collects them).
    std::cout << "FIDELITY-MISMATCH {\"suite\": \"pool traces\", \"call\": \""
              << JsonEscape(trace.name + ":" + std::to_string(m.line) + " " + m.step + " [" +
                            m.what + "]")
              << "\", \"fake\": \"" << JsonEscape(m.left) << "\", \"real\": \""
              << JsonEscape(m.right) << "\"}" << std::endl;
  }
  std::cout << "FIDELITY-STEPS {\"suite\": \"pool traces\", \"case\": \""
            << JsonEscape(trace.name) << "\", \"steps\": " << trace.steps.size()
            << ", \"mismatches\": " << std::count(vs_fake.begin(), vs_fake.end(), '\n') << "}"
            << std::endl;
  std::string vs_expected;
  for (const Mismatch& m : CompareToExpected(trace, real)) {
    vs_expected += "  " + m.ToString("expected", "real") + "\n";
  }
  EXPECT_TRUE(vs_fake.empty()) << trace.name << ": fake and real disagree:\n" << vs_fake;
  EXPECT_TRUE(vs_expected.empty()) << trace.name << ": the real driver differs from the trace:\n"
                                   << vs_expected;
  for (const std::string& note : real.notes) ADD_FAILURE() << trace.name << " (real): " << note;
}

std::vector<std::string> Traces() { return ListTraces(TraceDir()); }

std::string TraceName(const ::testing::TestParamInfo<std::string>& param) {
  return Stem(param.param);
}

INSTANTIATE_TEST_SUITE_P(Traces, PoolTraceRealTest, ::testing::ValuesIn(Traces()), TraceName);

}  // namespace
}  // namespace cuhal::pools
