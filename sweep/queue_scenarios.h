// Copyright 2026 The cuhal Authors.
// The queue operations' fault-sweep scenarios ("semaphore", "queue alloca/dealloca", "queue
// execute", "two-queue pipeline"): each opens a device, orders work with timeline semaphores
// (host signals, device-side queue-to-queue waits, deferred releases by the worker), checks the
// data, and destroys everything. Part of CoreScenarios() (sweep/core_scenarios.h); also run
// under many seeds of the adversarial scheduler by tests/semaphore/queue_seeds_test.
//
// Determinism for the sweep (each call index must name the same entry in every run): the
// scenario thread makes no driver call while the device's worker issues deferred work (it waits
// on the semaphore that work signals), and the sweep's devices enqueue one completion host
// function per operation (DeviceParams::batch_completions = false): with batching, which
// operations share a host function, and so which driver calls the worker makes, depends on when
// the driver's thread runs them. The seeds tests run the scenarios with batching (the default),
// where only the outcome, not the call sequence, must be the same under every seed.
#ifndef CUHAL_SWEEP_QUEUE_SCENARIOS_H_
#define CUHAL_SWEEP_QUEUE_SCENARIOS_H_

#include <vector>

#include "sweep/fault_sweep.h"

namespace cuhal::sweep {

// How the scenarios' devices are made: DeviceParams::batch_completions (false for fault sweeps,
// see above) and DeviceParams::issue_on_worker (false for fault sweeps too: which thread makes a
// ready operation's calls, and when, would depend on timing).
struct QueueScenarioMode {
  bool batch_completions = false;
  bool issue_on_worker = false;
};

Status SemaphoreScenario(const CudaApi* api, QueueScenarioMode mode);
Status QueueAllocaDeallocaScenario(const CudaApi* api, QueueScenarioMode mode);
Status QueueExecuteScenario(const CudaApi* api, QueueScenarioMode mode);
Status TwoQueuePipelineScenario(const CudaApi* api, QueueScenarioMode mode);

// The four, in this order, with the device core's cleanup calls.
std::vector<SweepScenario> QueueScenarios(QueueScenarioMode mode = {});

}  // namespace cuhal::sweep

#endif  // CUHAL_SWEEP_QUEUE_SCENARIOS_H_
