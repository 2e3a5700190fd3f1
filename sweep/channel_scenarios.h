// Copyright 2026 The cuhal Authors.
// The channels' fault-sweep scenarios: ranks as threads (one fake H200 each) create channels
// through the in-process provider and run collectives. Each is a SweepScenario for RunFaultSweep
// (sweep/fault_sweep.h) with run_with_nccl and calling_thread_only: rank 0 runs on the sweeping
// thread, and its CUDA and NCCL calls, all of them, are failed one at a time; the other ranks must
// still end cleanly (their waits are bounded: the provider's timeout, fakenccl's virtual clock).
#ifndef CUHAL_SWEEP_CHANNEL_SCENARIOS_H_
#define CUHAL_SWEEP_CHANNEL_SCENARIOS_H_

#include <vector>

#include "sweep/fault_sweep.h"

namespace cuhal::sweep {

// Every channel scenario, in a fixed order (names are unique, and distinct from CoreScenarios').
std::vector<SweepScenario> ChannelScenarios();

}  // namespace cuhal::sweep

#endif  // CUHAL_SWEEP_CHANNEL_SCENARIOS_H_
