// Copyright 2026 The cuhal Authors.
// Entry points: the occupancy queries (cuOccupancy*). The calculator is
// fakecuda/internal/occupancy.h; the function may be a CUfunction or a CUkernel cast to one
// (fakecuda/internal/library_model.h: the kernel's function in the current context, or in the
// context of config->hStream for the cluster queries).
#include <algorithm>
#include <cstddef>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/library_model.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/occupancy.h"

using fakecuda::DriverState;
using fakecuda::FunctionState;
using fakecuda::OccupancyInputs;

namespace fakecuda {
namespace {

// The function `func` names: a CUfunction, or a CUkernel's function in the current context.
CUresult OccupancyFunction(DriverState* st, CUfunction func, FunctionState** out)
    CUHAL_REQUIRES(st->mu) {
  if (FunctionState* f = Modules(st).FindFunction(func); f != nullptr) {
    *out = f;
    return CUDA_SUCCESS;
  }
  if (!IsLiveKernel(st, func)) return CUDA_ERROR_INVALID_HANDLE;
  FAKECUDA_REQUIRE_CONTEXT()
  CUresult err = CUDA_SUCCESS;
  *out = ResolveFunction(st, func, ctx->id, &err);
  return *out != nullptr ? CUDA_SUCCESS : err;
}

CUresult ActiveBlocks(DriverState* st, int* num_blocks, CUfunction func, int block_size,
                      size_t dynamic_smem, unsigned flags) CUHAL_REQUIRES(st->mu) {
  if (num_blocks == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FunctionState* f = nullptr;
  if (CUresult e = OccupancyFunction(st, func, &f); e != CUDA_SUCCESS) return e;
  if (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  OccupancyInputs in = OccupancyInputsOf(st->device(f->device).profile, *f);
  *num_blocks = MaxActiveBlocks(in, block_size, dynamic_smem);
  return CUDA_SUCCESS;
}

CUresult PotentialBlockSize(DriverState* st, int* min_grid, int* block_size, CUfunction func,
                            CUoccupancyB2DSize smem_of, size_t dynamic_smem, int block_limit,
                            unsigned flags) CUHAL_REQUIRES(st->mu) {
  // Measured 2026-12-06, H100 driver 580.159.04 (library_probe, case "occbad"): a negative
  // block size limit is CUDA_ERROR_INVALID_VALUE, the outputs untouched.
  if (min_grid == nullptr || block_size == nullptr || block_limit < 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  FunctionState* f = nullptr;
  if (CUresult e = OccupancyFunction(st, func, &f); e != CUDA_SUCCESS) return e;
  if (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  OccupancyInputs in = OccupancyInputsOf(st->device(f->device).profile, *f);
  // The callback is the user's code: run it without the driver lock? It only computes a size
  // from an int (documented as a pure function); it runs here, under the lock, like the
  // driver's own loop calls it on the calling thread.
  MaxPotentialBlockSize(in, smem_of, dynamic_smem, block_limit, min_grid, block_size);
  return CUDA_SUCCESS;
}

// The cluster queries' function and the block size of `config`. `*too_big` (may be null):
// the block is larger than the function allows, which cuOccupancyMaxPotentialClusterSize
// answers with a cluster size of 0 (measured) rather than an error.
//
// Measured 2026-12-06, H100 driver 580.159.04 (library_probe, cases "cluster",
// "bad:null:OccupancyMax*Cluster*"): a null function is CUDA_ERROR_INVALID_VALUE; a block of
// 0 threads or a grid of 0 blocks CUDA_ERROR_INVALID_VALUE; a block of 2048 threads is
// CUDA_SUCCESS with a potential cluster size of 0.
CUresult ClusterFunction(DriverState* st, CUfunction func, const CUlaunchConfig* config,
                         FunctionState** out, bool* too_big) CUHAL_REQUIRES(st->mu) {
  if (config == nullptr || func == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (FunctionState* f = Modules(st).FindFunction(func); f != nullptr) {
    *out = f;
  } else {
    if (!IsLiveKernel(st, func)) return CUDA_ERROR_INVALID_HANDLE;
    std::uint64_t ctx_id = 0;
    if (config->hStream != nullptr) {
      CUresult err;
      Stream* s = st->ResolveStream(config->hStream, &err);
      if (s == nullptr) return err;
      ctx_id = s->ctx_id;
    } else {
      FAKECUDA_REQUIRE_CONTEXT()
      ctx_id = ctx->id;
    }
    CUresult err = CUDA_SUCCESS;
    *out = ResolveFunction(st, func, ctx_id, &err);
    if (*out == nullptr) return err;
  }
  std::uint64_t threads = static_cast<std::uint64_t>(config->blockDimX) * config->blockDimY *
                          config->blockDimZ;
  if (threads == 0 || config->gridDimX == 0 || config->gridDimY == 0 || config->gridDimZ == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  bool over = threads > static_cast<std::uint64_t>((*out)->kernel.max_threads > 0
                                                      ? (*out)->kernel.max_threads
                                                      : 1024);
  if (over && too_big == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (too_big != nullptr) *too_big = over;
  return CUDA_SUCCESS;
}

// A required cluster shape set on the function with some dimension left 0 (say
// REQUIRED_CLUSTER_WIDTH alone): measured 2026-12-06, H100 driver 580.159.04 (library_probe,
// case "cluster"), both cluster queries answer CUDA_ERROR_INVALID_CLUSTER_SIZE for a function
// with only REQUIRED_CLUSTER_WIDTH 4 set. (That the missing height and depth are the reason
// is the fake's reading; a complete shape was not measured.)
bool IncompleteRequiredCluster(const FunctionState& f) {
  bool any = f.cluster_dims[0] > 0 || f.cluster_dims[1] > 0 || f.cluster_dims[2] > 0;
  bool all = f.cluster_dims[0] > 0 && f.cluster_dims[1] > 0 && f.cluster_dims[2] > 0;
  return any && !all;
}

// The largest cluster the function may use: the required one, else 8 (portable) or 16 (with
// NON_PORTABLE_CLUSTER_SIZE_ALLOWED) on compute capability 9.0.
int MaxClusterSize(const FunctionState& f) {
  if (f.cluster_dims[0] > 0) {
    return f.cluster_dims[0] * std::max(f.cluster_dims[1], 1) * std::max(f.cluster_dims[2], 1);
  }
  return f.non_portable_cluster != 0 ? 16 : 8;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func,
                                                             int blockSize,
                                                             size_t dynamicSMemSize) try {
  FAKECUDA_ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessor)
  return fakecuda::ActiveBlocks(st, numBlocks, func, blockSize, dynamicSMemSize, 0);
} catch (...) {
  return ::fakecuda::EntryFailed("cuOccupancyMaxActiveBlocksPerMultiprocessor");
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks,
                                                                      CUfunction func,
                                                                      int blockSize,
                                                                      size_t dynamicSMemSize,
                                                                      unsigned int flags) try {
  FAKECUDA_ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)
  return fakecuda::ActiveBlocks(st, numBlocks, func, blockSize, dynamicSMemSize, flags);
} catch (...) {
  return ::fakecuda::EntryFailed("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize,
                                                  CUfunction func,
                                                  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                  size_t dynamicSMemSize,
                                                  int blockSizeLimit) try {
  FAKECUDA_ENTER(cuOccupancyMaxPotentialBlockSize)
  return fakecuda::PotentialBlockSize(st, minGridSize, blockSize, func,
                                      blockSizeToDynamicSMemSize, dynamicSMemSize,
                                      blockSizeLimit, 0);
} catch (...) {
  return ::fakecuda::EntryFailed("cuOccupancyMaxPotentialBlockSize");
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(
    int* minGridSize, int* blockSize, CUfunction func,
    CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize, int blockSizeLimit,
    unsigned int flags) try {
  FAKECUDA_ENTER(cuOccupancyMaxPotentialBlockSizeWithFlags)
  return fakecuda::PotentialBlockSize(st, minGridSize, blockSize, func,
                                      blockSizeToDynamicSMemSize, dynamicSMemSize,
                                      blockSizeLimit, flags);
} catch (...) {
  return ::fakecuda::EntryFailed("cuOccupancyMaxPotentialBlockSizeWithFlags");
}

CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize,
                                                         CUfunction func, int numBlocks,
                                                         int blockSize) try {
  FAKECUDA_ENTER(cuOccupancyAvailableDynamicSMemPerBlock)
  if (dynamicSmemSize == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FunctionState* f = nullptr;
  if (CUresult e = fakecuda::OccupancyFunction(st, func, &f); e != CUDA_SUCCESS) return e;
  OccupancyInputs in = fakecuda::OccupancyInputsOf(st->device(f->device).profile, *f);
  std::size_t bytes = 0;
  if (!fakecuda::AvailableDynamicSmem(in, numBlocks, blockSize, &bytes)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *dynamicSmemSize = bytes;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuOccupancyAvailableDynamicSMemPerBlock");
}

CUresult CUDAAPI cuOccupancyMaxPotentialClusterSize(int* clusterSize, CUfunction func,
                                                    const CUlaunchConfig* config) try {
  FAKECUDA_ENTER(cuOccupancyMaxPotentialClusterSize)
  if (clusterSize == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FunctionState* f = nullptr;
  bool too_big = false;
  if (CUresult e = fakecuda::ClusterFunction(st, func, config, &f, &too_big);
      e != CUDA_SUCCESS) {
    return e;
  }
  if (fakecuda::IncompleteRequiredCluster(*f)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (too_big) {
    *clusterSize = 0;
    return CUDA_SUCCESS;
  }
  OccupancyInputs in = fakecuda::OccupancyInputsOf(st->device(f->device).profile, *f);
  int threads = static_cast<int>(config->blockDimX * config->blockDimY * config->blockDimZ);
  int blocks = fakecuda::MaxActiveBlocks(in, threads, config->sharedMemBytes);
  *clusterSize = blocks > 0 ? fakecuda::MaxClusterSize(*f) : 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuOccupancyMaxPotentialClusterSize");
}

CUresult CUDAAPI cuOccupancyMaxActiveClusters(int* numClusters, CUfunction func,
                                              const CUlaunchConfig* config) try {
  FAKECUDA_ENTER(cuOccupancyMaxActiveClusters)
  if (numClusters == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FunctionState* f = nullptr;
  if (CUresult e = fakecuda::ClusterFunction(st, func, config, &f, nullptr); e != CUDA_SUCCESS) {
    return e;
  }
  if (fakecuda::IncompleteRequiredCluster(*f)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  unsigned dims[3] = {0, 0, 0};
  for (unsigned i = 0; i < config->numAttrs && config->attrs != nullptr; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      dims[0] = config->attrs[i].value.clusterDim.x;
      dims[1] = config->attrs[i].value.clusterDim.y;
      dims[2] = config->attrs[i].value.clusterDim.z;
    }
  }
  if (dims[0] == 0 && f->cluster_dims[0] > 0) {
    for (int i = 0; i < 3; ++i) dims[i] = static_cast<unsigned>(std::max(f->cluster_dims[i], 1));
  }
  // Measured 2026-12-06, H100 driver 580.159.04 (library_probe, case "cluster"): no cluster
  // shape at all is CUDA_SUCCESS with 0 clusters; a grid that the cluster does not divide is
  // CUDA_ERROR_INVALID_CLUSTER_SIZE; a cluster above the portable 8 is
  // CUDA_ERROR_INVALID_CLUSTER_SIZE unless NON_PORTABLE_CLUSTER_SIZE_ALLOWED is set, and then
  // one above 16 is CUDA_SUCCESS with 0 clusters.
  if (dims[0] == 0) {
    *numClusters = 0;
    return CUDA_SUCCESS;
  }
  const unsigned dx = dims[0], dy = std::max(dims[1], 1u), dz = std::max(dims[2], 1u);
  if (config->gridDimX % dx != 0 || config->gridDimY % dy != 0 || config->gridDimZ % dz != 0) {
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  int size = static_cast<int>(dx * dy * dz);
  if (size > fakecuda::MaxClusterSize(*f)) {
    if (f->cluster_dims[0] == 0 && f->non_portable_cluster != 0) {
      *numClusters = 0;
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  OccupancyInputs in = fakecuda::OccupancyInputsOf(st->device(f->device).profile, *f);
  int threads = static_cast<int>(config->blockDimX * config->blockDimY * config->blockDimZ);
  int blocks = fakecuda::MaxActiveBlocks(in, threads, config->sharedMemBytes);
  *numClusters = blocks * in.sm_count / size;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuOccupancyMaxActiveClusters");
}

}  // extern "C"
