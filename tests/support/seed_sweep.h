// Copyright 2026 The cuhal Authors.
// Runs one sweep scenario under many seeds of fakecuda's adversarial scheduler: the body of the
// *_seeds_test programs (tests/semaphore, tests/command). Each seed must succeed (the scenario
// checks its data) and end with no live fake object; every wait in a scenario has a bound, so a
// hang is a failure, not a stuck test.
#ifndef CUHAL_TESTS_SUPPORT_SEED_SWEEP_H_
#define CUHAL_TESTS_SUPPORT_SEED_SWEEP_H_

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>

#include "core/symbols/cuda_api.h"
#include "fakecuda/fake_driver.h"
#include "sweep/fault_sweep.h"

namespace cuhal::sweep {

// Seeds 0..seeds-1, one fresh fake driver each; failures name the scenario and the seed.
inline void RunUnderAdversarialSeeds(const SweepScenario& scenario, std::uint64_t seeds) {
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
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

// A gtest parameter name for a scenario name: every character but letters and digits is '_'.
inline std::string ScenarioTestName(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace cuhal::sweep

#endif  // CUHAL_TESTS_SUPPORT_SEED_SWEEP_H_
