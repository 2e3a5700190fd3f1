// Copyright 2026 The cuhal Authors.
// The device core's fault-sweep scenarios: driver create; device create/destroy; a buffer round
// trip (allocate, write, fill, copy, read, map, free) on each heap; pools and trim; the same
// traffic under the adversarial schedule. Each is a SweepScenario for RunFaultSweep
// (sweep/fault_sweep.h); tests/sweep runs them all, `cuhal sweep` runs them by name.
//
// Adding a scenario: write a Status(const CudaApi*) function in core_scenarios.cc that creates,
// uses and destroys core objects, and add one row to CoreScenarios().
#ifndef CUHAL_SWEEP_CORE_SCENARIOS_H_
#define CUHAL_SWEEP_CORE_SCENARIOS_H_

#include <map>
#include <string>
#include <vector>

#include "sweep/fault_sweep.h"

namespace cuhal::sweep {

// Every scenario, in a fixed order (names are unique).
std::vector<SweepScenario> CoreScenarios();

// The device core's cleanup calls (failures destructors report through ReportDroppedStatus) and
// what each leaves behind: the cleanup_calls of every scenario that creates a Device.
std::map<std::string, CleanupCall> DeviceCleanupCalls();

}  // namespace cuhal::sweep

#endif  // CUHAL_SWEEP_CORE_SCENARIOS_H_
