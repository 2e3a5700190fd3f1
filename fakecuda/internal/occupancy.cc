// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/occupancy.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

namespace fakecuda {
namespace {

constexpr int kRegisterUnit = 256;     // registers are allocated per warp in these units
constexpr int kSubPartitions = 4;      // per multiprocessor, each with its share of registers
constexpr int kSmemUnit = 128;         // shared memory allocation granularity (sm_80+)
constexpr int kMaxRegsPerThread = 255;

int RoundUp(int x, int unit) { return (x + unit - 1) / unit * unit; }

int Value(const DeviceProfile& p, CUdevice_attribute a, int fallback) {
  int v = p.Attribute(a);
  return v > 0 ? v : fallback;
}

// The shared-memory carveouts (KiB per multiprocessor) the architecture offers.
std::vector<int> CarveoutsKiB(int cc) {
  if (cc >= 90) return {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  if (cc == 80 || cc == 87) return {0, 8, 16, 32, 64, 100, 132, 164};
  if (cc >= 80) return {0, 8, 16, 32, 64, 100};
  if (cc == 75) return {32, 64};
  return {0, 8, 16, 32, 64, 96};
}

// The smallest carveout that holds `bytes` (the largest when none does).
std::size_t AlignToCarveout(const OccupancyInputs& in, std::size_t bytes) {
  std::vector<int> kib = CarveoutsKiB(in.cc);
  for (int k : kib) {
    if (static_cast<std::size_t>(k) * 1024 >= bytes) return static_cast<std::size_t>(k) * 1024;
  }
  return static_cast<std::size_t>(kib.back()) * 1024;
}

// The shared memory per multiprocessor the function prefers: its carveout (percent of the
// maximum), else its cache configuration, else all of it.
std::size_t PreferredSmemPerSm(const OccupancyInputs& in) {
  int percent = in.carveout;
  if (percent < 0) {
    switch (in.cache_config) {
      case CU_FUNC_CACHE_PREFER_L1: percent = 0; break;
      case CU_FUNC_CACHE_PREFER_SHARED: percent = 100; break;
      case CU_FUNC_CACHE_PREFER_EQUAL: percent = 50; break;
      default: break;
    }
  }
  if (percent < 0) return AlignToCarveout(in, static_cast<std::size_t>(in.smem_per_sm));
  return AlignToCarveout(in, static_cast<std::size_t>(percent) *
                                 static_cast<std::size_t>(in.smem_per_sm) / 100);
}

// The most shared memory one block may have (static + dynamic + reserved).
std::size_t SmemLimitPerBlock(const OccupancyInputs& in, std::size_t wanted) {
  std::size_t limit = static_cast<std::size_t>(in.smem_per_block);
  if (in.dynamic_opted_in && wanted > limit) {
    limit = static_cast<std::size_t>(in.smem_per_block_optin);
  }
  if (in.cc >= 80) limit += static_cast<std::size_t>(in.reserved_smem_per_block);
  return limit;
}

int WarpLimit(const OccupancyInputs& in, int block_size) {
  if (block_size > in.max_threads_per_block) return 0;
  int warps = (block_size + in.warp_size - 1) / in.warp_size;
  return in.max_threads_per_sm / in.warp_size / warps;
}

int RegisterLimit(const OccupancyInputs& in, int block_size) {
  int warps = (block_size + in.warp_size - 1) / in.warp_size;
  int per_warp = RoundUp(in.regs * in.warp_size, kRegisterUnit);
  std::int64_t per_block = static_cast<std::int64_t>(per_warp) * warps;
  // The hardware check assumes every sub-partition gets the block's warps.
  std::int64_t assumed = static_cast<std::int64_t>(per_warp) * RoundUp(warps, kSubPartitions);
  if (assumed > in.regs_per_block || per_block > in.regs_per_block ||
      in.regs > kMaxRegsPerThread) {
    return 0;
  }
  if (per_warp == 0) return INT_MAX;
  int warps_per_sm = in.regs_per_sm / kSubPartitions / per_warp * kSubPartitions;
  return warps_per_sm / warps;
}

int SmemLimit(const OccupancyInputs& in, std::size_t dynamic_smem) {
  std::size_t fixed = static_cast<std::size_t>(in.static_smem + in.reserved_smem_per_block);
  std::size_t per_block = (fixed + dynamic_smem + kSmemUnit - 1) / kSmemUnit * kSmemUnit;
  std::size_t most = fixed + static_cast<std::size_t>(in.max_dynamic_smem);
  if (in.dynamic_opted_in && dynamic_smem > static_cast<std::size_t>(in.max_dynamic_smem)) {
    return 0;
  }
  if (per_block > SmemLimitPerBlock(in, most)) return 0;
  std::size_t per_sm = PreferredSmemPerSm(in);
  // A preference too small for one block gives way to the smallest carveout that holds one.
  if (per_sm < per_block) per_sm = AlignToCarveout(in, per_block);
  if (per_block == 0) return INT_MAX;
  return static_cast<int>(per_sm / per_block);
}

}  // namespace

OccupancyInputs OccupancyInputsOf(const DeviceProfile& p, const FunctionState& f) {
  OccupancyInputs in;
  in.cc = Value(p, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9) * 10 +
          p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  in.sm_count = Value(p, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, in.sm_count);
  in.warp_size = Value(p, CU_DEVICE_ATTRIBUTE_WARP_SIZE, in.warp_size);
  in.max_threads_per_block = Value(p, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                   in.max_threads_per_block);
  in.max_threads_per_sm = Value(p, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                                in.max_threads_per_sm);
  in.max_blocks_per_sm = Value(p, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
                               in.max_blocks_per_sm);
  in.regs_per_sm = Value(p, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
                         in.regs_per_sm);
  in.regs_per_block = Value(p, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, in.regs_per_block);
  in.smem_per_sm = Value(p, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                         in.smem_per_sm);
  in.smem_per_block = Value(p, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                            in.smem_per_block);
  in.smem_per_block_optin = Value(p, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                  in.smem_per_block_optin);
  in.reserved_smem_per_block = p.Attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  in.regs = f.kernel.num_regs > 0 ? f.kernel.num_regs : kDefaultRegisters;
  in.static_smem = f.kernel.static_shared_bytes;
  in.max_threads = FunctionMaxThreads(p, f.kernel);
  in.max_dynamic_smem = f.max_dynamic_shared;
  in.dynamic_opted_in = f.max_dynamic_shared > DefaultMaxDynamicShared(p, f.kernel);
  in.carveout = f.carveout;
  in.cache_config = f.cache_config;
  return in;
}

int MaxActiveBlocks(const OccupancyInputs& in, int block_size, std::size_t dynamic_smem) {
  if (block_size <= 0) return 0;
  int limit = std::min(WarpLimit(in, block_size), in.max_blocks_per_sm);
  limit = std::min(limit, RegisterLimit(in, block_size));
  limit = std::min(limit, SmemLimit(in, dynamic_smem));
  return limit;
}

void MaxPotentialBlockSize(const OccupancyInputs& in, std::size_t (*smem_of)(int),
                           std::size_t dynamic_smem, int block_limit, int* min_grid,
                           int* block_size) {
  int limit = std::min(in.max_threads_per_block, in.max_threads);
  if (block_limit > 0) limit = std::min(limit, block_limit);
  int best_block = 0, best_blocks = 0, best_threads = 0;
  for (int aligned = RoundUp(limit, in.warp_size); aligned > 0; aligned -= in.warp_size) {
    int size = std::min(limit, aligned);
    std::size_t smem = smem_of != nullptr ? smem_of(size) : dynamic_smem;
    int blocks = MaxActiveBlocks(in, size, smem);
    if (blocks * size > best_threads) {
      best_block = size;
      best_blocks = blocks;
      best_threads = blocks * size;
    }
    if (best_threads == in.max_threads_per_sm) break;
  }
  *min_grid = best_blocks * in.sm_count;
  *block_size = best_block;
}

bool AvailableDynamicSmem(const OccupancyInputs& in, int num_blocks, int block_size,
                          std::size_t* bytes) {
  if (num_blocks <= 0 || block_size <= 0) return false;
  if (MaxActiveBlocks(in, block_size, 0) < num_blocks) return false;
  std::size_t per_block_limit = SmemLimitPerBlock(in, static_cast<std::size_t>(in.smem_per_sm));
  std::size_t per_sm = per_block_limit;
  if (num_blocks > 1) {
    per_sm = PreferredSmemPerSm(in);
    if (per_sm == 0) per_sm = AlignToCarveout(in, 1);
  }
  std::size_t avail = per_sm / static_cast<std::size_t>(num_blocks) / kSmemUnit * kSmemUnit;
  avail = std::min(avail, per_block_limit);
  std::size_t fixed = static_cast<std::size_t>(in.static_smem);
  avail = avail > fixed ? avail - fixed : 0;
  avail = std::min(avail, static_cast<std::size_t>(in.max_dynamic_smem));
  *bytes = avail;
  return true;
}

}  // namespace fakecuda
