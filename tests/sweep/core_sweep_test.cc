// Copyright 2026 The cuhal Authors.
// The device core's fault sweeps: every driver call of each scenario fails once, in turn (see
// fault_sweep.h for what each run must satisfy). Each scenario prints one line:
//   <scenario>: calls swept N, failures injected N, leaks 0
//
// The scenarios live in sweep/core_scenarios.cc (shared with `cuhal sweep`) and
// sweep/channel_scenarios.cc (channels: ranks as threads, CUDA and NCCL calls of rank 0 swept).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sweep/channel_scenarios.h"
#include "sweep/core_scenarios.h"
#include "sweep/fault_sweep.h"

namespace cuhal::sweep {
namespace {

class CoreSweepTest : public ::testing::TestWithParam<int> {};

TEST_P(CoreSweepTest, EveryFailureEndsCleanly) {
  const SweepScenario scenario = CoreScenarios().at(static_cast<std::size_t>(GetParam()));
  SweepReport report = RunFaultSweep(scenario);
  std::cout << report.Summary() << "\n";
  RecordProperty("summary", report.Summary());
  EXPECT_TRUE(report.ok()) << report.Problems();
  EXPECT_GT(report.calls, 0u);
  EXPECT_EQ(report.injected, report.calls) << "every call must have been failed once";
  EXPECT_EQ(report.leaks, 0);
}

std::string ScenarioName(const ::testing::TestParamInfo<int>& info) {
  std::string name = CoreScenarios().at(static_cast<std::size_t>(info.param)).name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CoreSweepTest,
                         ::testing::Range(0, static_cast<int>(CoreScenarios().size())),
                         ScenarioName);

class ChannelSweepTest : public ::testing::TestWithParam<int> {};

TEST_P(ChannelSweepTest, EveryFailureOfRankZeroEndsCleanly) {
  const SweepScenario scenario = ChannelScenarios().at(static_cast<std::size_t>(GetParam()));
  SweepReport report = RunFaultSweep(scenario);
  std::cout << report.Summary() << "\n";
  RecordProperty("summary", report.Summary());
  EXPECT_TRUE(report.ok()) << report.Problems();
  EXPECT_GT(report.cuda_calls, 0u);
  EXPECT_GT(report.nccl_calls, 0u) << "the NCCL calls must be swept too";
  EXPECT_EQ(report.injected, report.calls) << "every call must have been failed once";
  EXPECT_EQ(report.leaks, 0);
}

std::string ChannelScenarioName(const ::testing::TestParamInfo<int>& info) {
  std::string name = ChannelScenarios().at(static_cast<std::size_t>(info.param)).name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ChannelSweepTest,
                         ::testing::Range(0, static_cast<int>(ChannelScenarios().size())),
                         ChannelScenarioName);

}  // namespace
}  // namespace cuhal::sweep
