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

Status SemaphoreScenario(const CudaApi* api, bool batch_completions);
Status QueueAllocaDeallocaScenario(const CudaApi* api, bool batch_completions);
Status QueueExecuteScenario(const CudaApi* api, bool batch_completions);
Status TwoQueuePipelineScenario(const CudaApi* api, bool batch_completions);

// The four, in this order, with the device core's cleanup calls; `batch_completions`: the
// devices' DeviceParams::batch_completions (false for fault sweeps, see above).
std::vector<SweepScenario> QueueScenarios(bool batch_completions = false);

}  // namespace cuhal::sweep

#endif  // CUHAL_SWEEP_QUEUE_SCENARIOS_H_
