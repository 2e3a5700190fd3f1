// Copyright 2026 The cuhal Authors.
// The fault-sweep scenarios of executables and command buffers ("executable", "command buffer
// (stream)", "command buffer (graph)"): each opens a device, loads the sample module (fakecuda/sample_kernels.h, whose
// kernels it registers for its run), records and submits work, checks the data, and destroys
// everything. Part of CoreScenarios() (sweep/core_scenarios.h); also run under many seeds of the
// adversarial scheduler by tests/command/command_seeds_test.
//
// Determinism for the sweep: every queue operation is submitted with no waits (issued on the
// scenario's thread) and the scenario waits for its signal before its next driver call, so the
// device's worker never makes a driver call concurrently with it.
#ifndef CUHAL_SWEEP_COMMAND_SCENARIOS_H_
#define CUHAL_SWEEP_COMMAND_SCENARIOS_H_

#include <vector>

#include "sweep/fault_sweep.h"

namespace cuhal::sweep {

// The executable cache (a load, a hit), entry point lookup, a validated dispatch through a
// one-shot command buffer, checked.
Status ExecutableScenario(const CudaApi* api);
// A reusable command buffer (fill, update, copy, barrier, dispatch, HAL event signal and wait)
// submitted twice with two binding tables on two queues, and a one-shot one; every result checked.
Status StreamCommandBufferScenario(const CudaApi* api);
// The same on the CUDA graph target (GraphCommandTarget): instantiated at the first submission,
// updated in place for the second table; also checks the target's statistics.
Status GraphCommandBufferScenario(const CudaApi* api);

// The three, in this order, with the device core's cleanup calls (and cuModuleUnload, cuEventDestroy).
std::vector<SweepScenario> CommandScenarios();

}  // namespace cuhal::sweep

#endif  // CUHAL_SWEEP_COMMAND_SCENARIOS_H_
