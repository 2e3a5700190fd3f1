// Copyright 2026 The cuhal Authors.
// The queue operations' sweep scenarios (sweep/queue_scenarios.h) under 64 seeds of the fake's
// adversarial scheduler: each must succeed (the data checked inside), end with no live fake
// object, and never hang (every wait in them has a bound, so a hang would be a failure).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "sweep/queue_scenarios.h"
#include "tests/support/seed_sweep.h"

namespace cuhal::sweep {
namespace {

constexpr std::uint64_t kSeeds = 64;

class QueueSeedsTest : public ::testing::TestWithParam<int> {};

TEST_P(QueueSeedsTest, EverySeedSucceedsWithoutLeaks) {
  // With batched completions (the default): the outcome, not the call sequence, is checked.
  RunUnderAdversarialSeeds(
      QueueScenarios({.batch_completions = true}).at(static_cast<std::size_t>(GetParam())),
      kSeeds);
}

// The same with DeviceParams::issue_on_worker: the worker issues every operation, ready ones
// included, so its own thread races the scenario's (and the driver's) under every seed.
TEST_P(QueueSeedsTest, EverySeedSucceedsWithoutLeaksWhenTheWorkerIssues) {
  RunUnderAdversarialSeeds(
      QueueScenarios({.batch_completions = true, .issue_on_worker = true})
          .at(static_cast<std::size_t>(GetParam())),
      kSeeds);
}

std::string Name(const ::testing::TestParamInfo<int>& info) {
  return ScenarioTestName(QueueScenarios().at(static_cast<std::size_t>(info.param)).name);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, QueueSeedsTest,
                         ::testing::Range(0, static_cast<int>(QueueScenarios().size())), Name);

}  // namespace
}  // namespace cuhal::sweep
