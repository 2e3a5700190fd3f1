// Copyright 2026 The cuhal Authors.
// The command sweep scenarios (sweep/command_scenarios.h) under 32 seeds of the fake's
// adversarial scheduler: each must succeed (the data checked inside), end with no live fake
// object, and never hang (every wait in them has a bound, so a hang would be a failure).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "sweep/command_scenarios.h"
#include "tests/support/seed_sweep.h"

namespace cuhal::sweep {
namespace {

constexpr std::uint64_t kSeeds = 32;

class CommandSeedsTest : public ::testing::TestWithParam<int> {};

TEST_P(CommandSeedsTest, EverySeedSucceedsWithoutLeaks) {
  RunUnderAdversarialSeeds(CommandScenarios().at(static_cast<std::size_t>(GetParam())), kSeeds);
}

std::string Name(const ::testing::TestParamInfo<int>& info) {
  return ScenarioTestName(CommandScenarios().at(static_cast<std::size_t>(info.param)).name);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CommandSeedsTest,
                         ::testing::Range(0, static_cast<int>(CommandScenarios().size())), Name);

}  // namespace
}  // namespace cuhal::sweep
