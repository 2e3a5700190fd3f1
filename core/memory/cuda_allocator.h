// Copyright 2026 The cuhal Authors.
// CudaAllocator: the default Allocator of a Device, straight on the CUDA driver.
#ifndef CUHAL_CORE_MEMORY_CUDA_ALLOCATOR_H_
#define CUHAL_CORE_MEMORY_CUDA_ALLOCATOR_H_

#include <cuda.h>

#include <memory>

#include "core/base/status_or.h"
#include "core/driver/driver.h"
#include "core/memory/allocator.h"
#include "core/memory/memory_pool.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"

namespace cuhal {

// Allocates each heap with its driver call, under the device's context:
//   device-local   cuMemAlloc / cuMemFree; or, with BufferParams::pool, cuMemAllocFromPoolAsync
//                  from that pool of the device on the allocator's own stream, followed by a
//                  synchronization of that stream (see below), and cuMemFreeAsync on it;
//   host-pinned    cuMemHostAlloc(PORTABLE | DEVICEMAP) + cuMemHostGetDevicePointer /
//                  cuMemFreeHost;
//   managed        cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL) / cuMemFree;
//   imported-host  cuMemHostRegister(PORTABLE | DEVICEMAP) + cuMemHostGetDevicePointer /
//                  cuMemHostUnregister (the caller's memory is never freed).
//
// Pool allocations and the allocation stream: Allocate promises memory usable on every queue at
// once, but the driver hands out pool memory in the order of the stream it is allocated on (it
// may reuse memory whose free is still pending elsewhere and make that stream wait for it). So
// pool allocations go on a private, otherwise idle stream that the allocator synchronizes before
// returning: cheap when nothing is pending, and correct when the driver inserted a dependency.
// Frees go on the same stream in order (the caller guarantees the memory is idle); if queueing
// the free fails, the memory is freed synchronously with cuMemFree instead (which the driver
// allows for pool memory) and the first failure is reported through ReportDroppedStatus, so
// nothing leaks. Queue-ordered allocation (a later API) allocates on a queue's stream without
// the synchronization.
//
// Ownership: owned by its Device (or whoever created it); borrows the table, the context (the
// caller keeps its retain) and the pools, which must outlive it; owns the allocation stream.
// Thread-safety: all methods may be called from any thread. Stream ordering: see above and
// Allocator.
class CudaAllocator final : public Allocator {
 public:
  // `pools` may be null: pool allocations are then refused (FAILED_PRECONDITION). With pools, the
  // allocation stream is created here (cuStreamCreate, non-blocking) with `context` made current
  // for the call.
  [[nodiscard]] static StatusOr<std::unique_ptr<CudaAllocator>> Create(const CudaApi* api,
                                                                       CUcontext context,
                                                                       const DeviceInfo& device,
                                                                       MemoryPools* pools);
  // Destroys the allocation stream (its pending frees still complete).
  ~CudaAllocator() override = default;

  // The private stream pool allocations are made on (null without pools).
  [[nodiscard]] CUstream allocation_stream() const noexcept { return stream_.get(); }

 private:
  CudaAllocator(const CudaApi* api, CUcontext context, const DeviceInfo& device,
                MemoryPools* pools)
      : api_(api), context_(context), device_(device), pools_(pools) {}

  BufferCompatibility DoQueryCompatibility(const BufferParams& params,
                                           std::size_t size) const override;
  StatusOr<Allocation> DoAllocate(const BufferParams& params, std::size_t size) override;
  StatusOr<Allocation> DoImport(const BufferParams& params, void* host,
                                std::size_t size) override;
  Status DoRelease(const Allocation& allocation) noexcept override;
  // Synchronizes the allocation stream, so that the pools may give back what it freed.
  Status DoTrim() override;

  StatusOr<Allocation> DoAllocateOnStream(const BufferParams& params, std::size_t size,
                                          CUstream stream) override;
  Status DoReleaseOnStream(const Allocation& allocation, CUstream stream) override;

  StatusOr<Allocation> AllocateFromPool(MemoryPoolKind kind, std::size_t size);
  Status FreeToPool(CUdeviceptr ptr) noexcept;

  const CudaApi* const api_;
  const CUcontext context_;
  const DeviceInfo device_;
  MemoryPools* const pools_;
  StreamHandle stream_;  // the allocation stream; set only with pools
};

}  // namespace cuhal

#endif  // CUHAL_CORE_MEMORY_CUDA_ALLOCATOR_H_
