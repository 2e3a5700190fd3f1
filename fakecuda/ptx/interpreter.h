// Copyright 2026 The cuhal Authors.
// Runs one kernel launch of a parsed PTX program (program.h).
//
// Execution model: the grid's blocks run on a few worker threads (the calling thread and up to
// seven it starts for the launch: LaunchRequest::workers, FAKECUDA_PTX_WORKERS, else the host's
// cores), each worker claiming the next block in linear order (x fastest) and running it to
// completion. Blocks interact only through global memory: loads and stores of global memory are
// relaxed atomic accesses of their element size, atomics and reductions are atomic across
// workers (a compare-and-swap loop), fences (membar, fence) are sequentially consistent fences.
// A block never migrates, so shared memory and barriers stay per worker.
//
// Within a block, threads run cooperatively on their worker: warp by warp, each lane runs until
// it reaches a barrier, a warp collective or its end, then the next lane runs.
// Warp collectives (shfl.sync, vote.sync, ...) execute once every lane of the warp that is
// still running has reached one, for the lanes waiting at the same instruction (so the
// collectives that need the whole warp, mma and ldmatrix, see all 32 lanes at once); a barrier
// releases when every live thread of the block (or the barrier's thread count) has arrived.
// Race-free programs (those correct on the GPU under the PTX memory model) give the GPU's
// results, whatever the worker count. A fault stops its block; no block after it is started, the
// blocks before it finish, and the fault reported is that of the lowest faulting block (the one
// a serial run reports), so results and reports do not depend on the worker count.
#ifndef CUHAL_FAKECUDA_PTX_INTERPRETER_H_
#define CUHAL_FAKECUDA_PTX_INTERPRETER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fakecuda/ptx/memory.h"
#include "fakecuda/ptx/program.h"

namespace fakecuda::ptx {

struct LaunchRequest {
  const Program* program = nullptr;
  int kernel = -1;                                  // function index of the entry
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t dynamic_shared = 0;
  const std::byte* params = nullptr;               // the packed parameter buffer
  std::size_t param_size = 0;
  std::vector<std::uint64_t> global_addresses;     // device address of each Program::globals
  RegionResolver resolver;                          // global memory (called from every worker)
  unsigned workers = 0;                             // worker threads; 0: the default (above)
};

struct LaunchResult {
  int code = 0;          // CUresult: CUDA_SUCCESS, CUDA_ERROR_ILLEGAL_ADDRESS, ...
  std::string message;   // what went wrong, naming the kernel, thread, block and address
  std::uint64_t instructions = 0;  // thread-instructions executed
};

LaunchResult RunKernel(const LaunchRequest& request);

// Thread-instructions executed by every launch of the process so far (for benchmarks).
std::uint64_t TotalInstructions();

}  // namespace fakecuda::ptx

#endif  // CUHAL_FAKECUDA_PTX_INTERPRETER_H_
