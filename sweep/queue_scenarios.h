// Copyright 2026 The cuhal Authors.
// The queue operations' fault-sweep scenarios ("semaphore", "queue alloca/dealloca", "queue
// execute", "two-queue pipeline"): each opens a device, orders work with timeline semaphores
// (host signals, device-side queue-to-queue waits, deferred releases by the worker), checks the
// data, and destroys everything. Part of CoreScenarios() (sweep/core_scenarios.h); also run
// under many seeds of the adversarial scheduler by tests/semaphore/queue_seeds_test.
//
// Determinism for the sweep (each call index must name the same entry in every run): the
// scenario thread makes no driver call while the device's worker issues deferred work (it waits
// on the semaphore that work signals), and with the eager policy a host function runs inside the
// cuLaunchHostFunc that enqueues it, so the worker never polls.
#ifndef CUHAL_SWEEP_QUEUE_SCENARIOS_H_
#define CUHAL_SWEEP_QUEUE_SCENARIOS_H_

#include <vector>

#include "sweep/fault_sweep.h"

namespace cuhal::sweep {

Status SemaphoreScenario(const CudaApi* api);
Status QueueAllocaDeallocaScenario(const CudaApi* api);
Status QueueExecuteScenario(const CudaApi* api);
Status TwoQueuePipelineScenario(const CudaApi* api);

// The four, in this order, with the device core's cleanup calls.
std::vector<SweepScenario> QueueScenarios();

}  // namespace cuhal::sweep

#endif  // CUHAL_SWEEP_QUEUE_SCENARIOS_H_
