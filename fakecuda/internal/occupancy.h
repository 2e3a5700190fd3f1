// Copyright 2026 The cuhal Authors.
// The occupancy calculator behind cuOccupancy* (fakecuda/entry/occupancy_entry.cc): how many
// blocks of a function fit on one multiprocessor, from the device profile's limits (registers,
// shared memory, threads and blocks per multiprocessor) and the function's (registers, static
// shared memory, its dynamic shared memory limit and carveout), computed as NVIDIA's occupancy
// calculator (cuda_occupancy.h) does: registers are allocated per warp in units of 256 and per
// sub-partition (4 per multiprocessor), shared memory per block in units of 128 bytes plus the
// driver's reserved bytes per block, and the multiprocessor's shared memory is the smallest
// carveout of the architecture that holds the preferred share. Pure functions: no driver
// state, no locks.
#ifndef CUHAL_FAKECUDA_INTERNAL_OCCUPANCY_H_
#define CUHAL_FAKECUDA_INTERNAL_OCCUPANCY_H_

#include <cstddef>

#include "fakecuda/device_profile.h"
#include "fakecuda/internal/module_model.h"

namespace fakecuda {

// The inputs, read from a device profile and a function.
struct OccupancyInputs {
  // Device.
  int cc = 90;  // compute capability, major * 10 + minor
  int sm_count = 132;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int smem_per_sm = 233472;
  int smem_per_block = 49152;
  int smem_per_block_optin = 232448;
  int reserved_smem_per_block = 1024;
  // Function.
  int regs = 32;
  int static_smem = 0;
  int max_threads = 1024;  // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  int max_dynamic_smem = 48128;
  bool dynamic_opted_in = false;  // MAX_DYNAMIC_SHARED_SIZE_BYTES raised above its default
  int carveout = -1;              // PREFERRED_SHARED_MEMORY_CARVEOUT (-1: none)
  int cache_config = 0;           // CUfunc_cache
};

OccupancyInputs OccupancyInputsOf(const DeviceProfile& p, const FunctionState& f);

// Blocks of `block_size` threads with `dynamic_smem` bytes of dynamic shared memory that fit on
// one multiprocessor (0 when one does not fit). block_size must be > 0.
int MaxActiveBlocks(const OccupancyInputs& in, int block_size, std::size_t dynamic_smem);

// The block size (a multiple of the warp size, or the limit) that maximizes the threads per
// multiprocessor, and the grid that fills the device with it. `smem_of` (may be null) gives
// the dynamic shared memory of a block size, else `dynamic_smem` is used. `block_limit` 0: none.
void MaxPotentialBlockSize(const OccupancyInputs& in, std::size_t (*smem_of)(int),
                           std::size_t dynamic_smem, int block_limit, int* min_grid,
                           int* block_size);

// The dynamic shared memory a block may use so that `num_blocks` blocks of `block_size` threads
// fit on one multiprocessor; false when that many blocks do not fit at all.
bool AvailableDynamicSmem(const OccupancyInputs& in, int num_blocks, int block_size,
                          std::size_t* bytes);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_OCCUPANCY_H_
