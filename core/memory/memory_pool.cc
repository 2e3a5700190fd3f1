// Copyright 2026 The cuhal Authors.
#include "core/memory/memory_pool.h"

#include <utility>

#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

Status ReadAttribute(const CudaApi* api, CUmemoryPool pool, CUmemPool_attribute attribute,
                     const char* what, std::uint64_t* out) {
  cuuint64_t value = 0;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuMemPoolGetAttribute, pool, attribute, &value), "reading ",
                        what);
  *out = static_cast<std::uint64_t>(value);
  return OkStatus();
}

}  // namespace

StatusOr<MemoryPool> MemoryPool::Create(const CudaApi* api, CUdevice device, MemoryPoolKind kind,
                                        const MemoryPoolParams& params) {
  const std::string_view name = MemoryPoolKindName(kind);
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool raw = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuMemPoolCreate, &raw, &props), "creating the ", name);
  MemoryPoolHandle pool(api, raw);  // destroys the pool if anything below fails

  cuuint64_t threshold = params.release_threshold;
  CUHAL_RETURN_IF_ERROR(
      CUHAL_CU(api, cuMemPoolSetAttribute, raw, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
      "setting the ", name, "'s release threshold to ", params.release_threshold);
  return MemoryPool(api, kind, params, std::move(pool));
}

Status MemoryPool::TrimTo(std::uint64_t min_bytes_to_keep) {
  if (!pool_) return FailedPreconditionError(StrCat("the ", MemoryPoolKindName(kind_),
                                                    " was destroyed"));
  return CUHAL_CU(api_, cuMemPoolTrimTo, pool_.get(), static_cast<size_t>(min_bytes_to_keep))
      .AddContext(StrCat("trimming the ", MemoryPoolKindName(kind_), " to ", min_bytes_to_keep,
                         " bytes"));
}

StatusOr<MemoryPoolStatistics> MemoryPool::QueryStatistics() const {
  const std::string context = StrCat("reading the statistics of the ", MemoryPoolKindName(kind_));
  if (!pool_) return FailedPreconditionError(StrCat(context, ": the pool was destroyed"));
  MemoryPoolStatistics stats;
  CUmemoryPool pool = pool_.get();
  CUHAL_RETURN_IF_ERROR(ReadAttribute(api_, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                                      "RESERVED_MEM_CURRENT", &stats.reserved_current),
                        context);
  CUHAL_RETURN_IF_ERROR(ReadAttribute(api_, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
                                      "RESERVED_MEM_HIGH", &stats.reserved_high),
                        context);
  CUHAL_RETURN_IF_ERROR(ReadAttribute(api_, pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                                      "USED_MEM_CURRENT", &stats.used_current),
                        context);
  CUHAL_RETURN_IF_ERROR(ReadAttribute(api_, pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                                      "USED_MEM_HIGH", &stats.used_high),
                        context);
  return stats;
}

Status MemoryPool::ResetHighWatermarks() {
  const std::string context =
      StrCat("resetting the high watermarks of the ", MemoryPoolKindName(kind_));
  if (!pool_) return FailedPreconditionError(StrCat(context, ": the pool was destroyed"));
  cuuint64_t zero = 0;
  CUHAL_RETURN_IF_ERROR(
      CUHAL_CU(api_, cuMemPoolSetAttribute, pool_.get(), CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero),
      context);
  zero = 0;
  CUHAL_RETURN_IF_ERROR(
      CUHAL_CU(api_, cuMemPoolSetAttribute, pool_.get(), CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero),
      context);
  return OkStatus();
}

Status MemoryPool::Destroy() {
  return pool_.Reset().AddContext(StrCat("destroying the ", MemoryPoolKindName(kind_)));
}

StatusOr<std::unique_ptr<MemoryPools>> MemoryPools::Create(const CudaApi* api, CUdevice device,
                                                           const MemoryPoolParams& device_local,
                                                           const MemoryPoolParams& other) {
  CUHAL_ASSIGN_OR_RETURN(MemoryPool local_pool,
                         MemoryPool::Create(api, device, MemoryPoolKind::kDeviceLocal,
                                            device_local));
  // If this fails, `local_pool` is destroyed on the way out: reverse order of creation.
  CUHAL_ASSIGN_OR_RETURN(MemoryPool other_pool,
                         MemoryPool::Create(api, device, MemoryPoolKind::kOther, other));
  return std::unique_ptr<MemoryPools>(
      new MemoryPools(std::move(local_pool), std::move(other_pool)));
}

Status MemoryPools::Trim() {
  CUHAL_RETURN_IF_ERROR(device_local_.Trim());
  CUHAL_RETURN_IF_ERROR(other_.Trim());
  return OkStatus();
}

StatusOr<MemoryPoolsStatistics> MemoryPools::QueryStatistics() const {
  MemoryPoolsStatistics stats;
  CUHAL_ASSIGN_OR_RETURN(stats.device_local, device_local_.QueryStatistics());
  CUHAL_ASSIGN_OR_RETURN(stats.other, other_.QueryStatistics());
  return stats;
}

Status MemoryPools::ResetHighWatermarks() {
  CUHAL_RETURN_IF_ERROR(device_local_.ResetHighWatermarks());
  CUHAL_RETURN_IF_ERROR(other_.ResetHighWatermarks());
  return OkStatus();
}

}  // namespace cuhal
