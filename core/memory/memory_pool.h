// Copyright 2026 The cuhal Authors.
// MemoryPool / MemoryPools: the device's stream-ordered allocator pools (cuMemPool*).
#ifndef CUHAL_CORE_MEMORY_MEMORY_POOL_H_
#define CUHAL_CORE_MEMORY_MEMORY_POOL_H_

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status_or.h"
#include "core/memory/memory_types.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"

namespace cuhal {

struct MemoryPoolParams {
  // Bytes a trim keeps reserved (cuMemPoolTrimTo's minBytesToKeep).
  std::uint64_t minimum_capacity = 0;
  // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: reserved bytes above this go back to the device at the
  // next synchronization that proves the frees complete (the driver's default is 0: give back
  // everything; UINT64_MAX keeps everything until a trim).
  std::uint64_t release_threshold = 0;
};

// CU_MEMPOOL_ATTR_{RESERVED,USED}_MEM_{CURRENT,HIGH}, in bytes. Reserved memory grows in chunks
// (32 MiB on the H200); used memory is the exact sum of live allocation sizes.
struct MemoryPoolStatistics {
  std::uint64_t reserved_current = 0;
  std::uint64_t reserved_high = 0;
  std::uint64_t used_current = 0;
  std::uint64_t used_high = 0;
};

// One device memory pool (cuMemPoolCreate on a device location, pinned allocation type).
//
// Ownership: move-only owner of the CUmemoryPool; destroying the MemoryPool destroys the pool
// (cuMemPoolDestroy; a failure goes to ReportDroppedStatus). The driver keeps a destroyed pool
// alive until its last allocation is freed, but cuhal's rule is stricter: every allocation from
// the pool must be freed before the pool is destroyed. The table is borrowed.
// Thread-safety: every method may be called from any thread (each is one or a few driver calls,
// which are thread-safe); moving and destroying are not concurrent with anything else.
// Stream ordering: allocations and frees happen in stream order (cuMemAllocFromPoolAsync /
// cuMemFreeAsync, made by the allocator); TrimTo and QueryStatistics are host-side and see only
// frees the host has already observed complete (a synchronization of the freeing stream).
// Some drivers want the owning device's context current for pool calls: callers (the Device)
// make it current.
class MemoryPool {
 public:
  // Creates the pool on `device` and sets its release threshold. On failure nothing is left
  // behind (a pool whose threshold cannot be set is destroyed again).
  [[nodiscard]] static StatusOr<MemoryPool> Create(const CudaApi* api, CUdevice device,
                                                   MemoryPoolKind kind,
                                                   const MemoryPoolParams& params);

  MemoryPool(MemoryPool&&) noexcept = default;
  MemoryPool& operator=(MemoryPool&&) noexcept = default;
  MemoryPool(const MemoryPool&) = delete;             // one owner destroys the pool
  MemoryPool& operator=(const MemoryPool&) = delete;  // ditto
  ~MemoryPool() = default;  // the handle destroys the pool

  [[nodiscard]] CUmemoryPool handle() const noexcept { return pool_.get(); }
  [[nodiscard]] MemoryPoolKind kind() const noexcept { return kind_; }
  [[nodiscard]] const MemoryPoolParams& params() const noexcept { return params_; }

  // Releases reserved memory down to `min_bytes_to_keep` (only chunks with no live allocation
  // and only frees the host has seen complete).
  [[nodiscard]] Status TrimTo(std::uint64_t min_bytes_to_keep);
  // TrimTo(params().minimum_capacity).
  [[nodiscard]] Status Trim() { return TrimTo(params_.minimum_capacity); }
  // Reads the four statistics (four cuMemPoolGetAttribute calls).
  [[nodiscard]] StatusOr<MemoryPoolStatistics> QueryStatistics() const;
  // Resets the two *_HIGH watermarks to the current values (the driver allows only 0 to be set).
  [[nodiscard]] Status ResetHighWatermarks();
  // Destroys the pool now and reports how that went; the MemoryPool is empty afterwards.
  [[nodiscard]] Status Destroy();

 private:
  MemoryPool(const CudaApi* api, MemoryPoolKind kind, const MemoryPoolParams& params,
             MemoryPoolHandle pool)
      : api_(api), kind_(kind), params_(params), pool_(std::move(pool)) {}

  const CudaApi* api_ = nullptr;
  MemoryPoolKind kind_ = MemoryPoolKind::kDeviceLocal;
  MemoryPoolParams params_;
  MemoryPoolHandle pool_;
};

struct MemoryPoolsStatistics {
  MemoryPoolStatistics device_local;
  MemoryPoolStatistics other;
};

// The two pools of a device (see MemoryPoolKind): created device-local first, then other;
// destroyed in the reverse order.
//
// Ownership: owned by its Device (unique_ptr); owns both pools. Thread-safety: as MemoryPool.
// Stream ordering: as MemoryPool.
class MemoryPools {
 public:
  // Creates both pools; if the second fails, the first is destroyed before returning.
  [[nodiscard]] static StatusOr<std::unique_ptr<MemoryPools>> Create(
      const CudaApi* api, CUdevice device, const MemoryPoolParams& device_local,
      const MemoryPoolParams& other);

  MemoryPools(const MemoryPools&) = delete;             // owns the pools
  MemoryPools& operator=(const MemoryPools&) = delete;  // ditto
  ~MemoryPools() = default;  // members destroy `other_` first, then `device_local_`

  [[nodiscard]] MemoryPool& pool(MemoryPoolKind kind) noexcept {
    return kind == MemoryPoolKind::kDeviceLocal ? device_local_ : other_;
  }
  [[nodiscard]] MemoryPool& device_local() noexcept { return device_local_; }
  [[nodiscard]] MemoryPool& other() noexcept { return other_; }

  // Trims each pool to its minimum capacity (device-local first).
  [[nodiscard]] Status Trim();
  [[nodiscard]] StatusOr<MemoryPoolsStatistics> QueryStatistics() const;
  [[nodiscard]] Status ResetHighWatermarks();

 private:
  MemoryPools(MemoryPool device_local, MemoryPool other)
      : device_local_(std::move(device_local)), other_(std::move(other)) {}

  MemoryPool device_local_;  // declared first: destroyed last
  MemoryPool other_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_MEMORY_MEMORY_POOL_H_
