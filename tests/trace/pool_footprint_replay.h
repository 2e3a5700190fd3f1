// Copyright 2026 The cuhal Authors.
// A trace replayed on a memory pool of its own, the pool's RESERVED and USED read after every
// operation: the replay behind pool_footprint_real_test (real against fake, on the GPU machine)
// and pool_footprint_test (the fake against the real pool's measured footprint).
#ifndef CUHAL_TESTS_TRACE_POOL_FOOTPRINT_REPLAY_H_
#define CUHAL_TESTS_TRACE_POOL_FOOTPRINT_REPLAY_H_

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/symbols/cuda_api.h"
#include "trace/alloc_trace.h"

namespace cuhal::trace {

// One operation's outcome.
struct FootprintStep {
  CUresult result = CUDA_SUCCESS;
  std::uint64_t address = 0;  // for allocs
  std::uint64_t reserved = 0;
  std::uint64_t used = 0;
};

struct FootprintReplay {
  std::string fatal;  // set when the replay could not go on
  std::vector<FootprintStep> steps;
  std::uint64_t reserved_high = 0;
  std::uint64_t used_high = 0;
};

// Replays `trace` on a new pool of device 0 (release threshold UINT64_MAX, as the anchors
// measured it; every stream non-blocking) with CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC set to
// `opportunistic` and every other attribute at the driver's default. Retains and releases the
// primary context; destroys what it created, freeing what the trace left live.
FootprintReplay ReplayOnPool(const CudaApi& api, const AllocTrace& trace, bool opportunistic);

}  // namespace cuhal::trace

#endif  // CUHAL_TESTS_TRACE_POOL_FOOTPRINT_REPLAY_H_
