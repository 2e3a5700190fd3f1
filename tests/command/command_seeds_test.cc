// Copyright 2026 The cuhal Authors.
// The command sweep scenarios (sweep/command_scenarios.h) under 32 seeds of the fake's
// adversarial scheduler: each must succeed (the data checked inside), end with no live fake
// object, and never hang (every wait in them has a bound, so a hang would be a failure).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>

#include "fakecuda/fake_driver.h"
#include "sweep/command_scenarios.h"

namespace cuhal::sweep {
namespace {

constexpr std::uint64_t kSeeds = 32;

class CommandSeedsTest : public ::testing::TestWithParam<int> {};

TEST_P(CommandSeedsTest, EverySeedSucceedsWithoutLeaks) {
  const SweepScenario scenario = CommandScenarios().at(static_cast<std::size_t>(GetParam()));
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    fakecuda::DriverOptions options;
    options.policy = fakecuda::SchedulePolicy::kAdversarial;
    options.seed = seed;
    fakecuda::ScopedDriver driver(options);
    CudaApi api;
    fakecuda::FillCudaApi(&api);
    const Status status = scenario.run(&api);
    EXPECT_TRUE(status.ok()) << scenario.name << ", seed " << seed << ": " << status;
    EXPECT_EQ(driver->LiveObjects().Total(), 0)
        << scenario.name << ", seed " << seed << ": " << driver->LeakReport();
  }
}

std::string Name(const ::testing::TestParamInfo<int>& info) {
  std::string name = CommandScenarios().at(static_cast<std::size_t>(info.param)).name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CommandSeedsTest,
                         ::testing::Range(0, static_cast<int>(CommandScenarios().size())), Name);

}  // namespace
}  // namespace cuhal::sweep
