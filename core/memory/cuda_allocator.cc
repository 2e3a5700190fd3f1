// Copyright 2026 The cuhal Authors.
#include "core/memory/cuda_allocator.h"

#include <utility>

#include "core/driver/context_scope.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

constexpr unsigned kHostAllocFlags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP;
constexpr unsigned kHostRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP;

constexpr char kEnterContext[] = "making the device's context current";

// The first non-OK status of `statuses` is returned; every later failure is reported through
// ReportDroppedStatus (it happened, but only one status can be returned).
Status FirstError(Status first, Status second, Status third) {
  Status* order[] = {&first, &second, &third};
  Status* result = nullptr;
  for (Status* s : order) {
    if (s->ok()) continue;
    if (result == nullptr) {
      result = s;
    } else {
      ReportDroppedStatus(*s);
    }
  }
  return result == nullptr ? OkStatus() : std::move(*result);
}

}  // namespace

StatusOr<std::unique_ptr<CudaAllocator>> CudaAllocator::Create(const CudaApi* api,
                                                               CUcontext context,
                                                               const DeviceInfo& device,
                                                               MemoryPools* pools) {
  if (api == nullptr || context == nullptr) {
    return InvalidArgumentError("creating the allocator: null table or context");
  }
  std::unique_ptr<CudaAllocator> allocator(new CudaAllocator(api, context, device, pools));
  if (pools != nullptr) {
    CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api, context),
                           "creating the allocator: ", kEnterContext);
    CUstream stream = nullptr;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING),
                          "creating the allocator's allocation stream");
    allocator->stream_ = StreamHandle(api, stream);
    // On failure `allocator` (declared before `scope`) is destroyed after the pop: its stream
    // is destroyed without the context current, which cuStreamDestroy does not need.
    CUHAL_RETURN_IF_ERROR(scope.Exit(), "creating the allocator");
  }
  return allocator;
}

BufferCompatibility CudaAllocator::DoQueryCompatibility(const BufferParams& params,
                                                        std::size_t size) const {
  BufferCompatibility c;
  switch (params.heap) {
    case MemoryHeap::kDeviceLocal:
      c.device_visible = true;
      if (params.pool && pools_ == nullptr) {
        c.refusal_code = StatusCode::kFailedPrecondition;
        c.refusal = StrCat("device ", device_.ordinal,
                           " has no memory pools (async allocations are off, or the device "
                           "does not support memory pools)");
        return c;
      }
      if (size > device_.total_memory) {
        c.refusal_code = StatusCode::kResourceExhausted;
        c.refusal = StrCat("more than the ", device_.total_memory, " bytes of device ",
                           device_.ordinal);
        return c;
      }
      c.allocatable = true;
      return c;
    case MemoryHeap::kHostPinned:
      c.device_visible = true;
      c.host_visible = true;
      c.allocatable = true;
      return c;
    case MemoryHeap::kManaged:
      c.device_visible = true;
      c.host_visible = true;
      if (!device_.managed_memory_supported) {
        c.refusal_code = StatusCode::kUnimplemented;
        c.refusal = StrCat("device ", device_.ordinal, " does not support managed memory");
        return c;
      }
      c.allocatable = true;
      return c;
    case MemoryHeap::kImportedHost:
      c.device_visible = true;
      c.host_visible = true;
      if (!device_.host_register_supported) {
        c.refusal_code = StatusCode::kUnimplemented;
        c.refusal = StrCat("device ", device_.ordinal,
                           " does not support host memory registration");
        return c;
      }
      c.importable = true;
      return c;
  }
  c.refusal_code = StatusCode::kInvalidArgument;
  c.refusal = "unknown heap";
  return c;
}

StatusOr<Allocation> CudaAllocator::AllocateFromPool(MemoryPoolKind kind, std::size_t size) {
  MemoryPool& pool = pools_->pool(kind);
  CUdeviceptr ptr = 0;
  CUHAL_RETURN_IF_ERROR(
      CUHAL_CU(api_, cuMemAllocFromPoolAsync, &ptr, size, pool.handle(), stream_.get()));
  if (Status synced = CUHAL_CU(api_, cuStreamSynchronize, stream_.get()); !synced.ok()) {
    ReportDroppedStatus(FreeToPool(ptr).AddContext("giving back a pool allocation"));
    return std::move(synced).AddContext("waiting for the pool allocation");
  }
  Allocation allocation;
  allocation.heap = MemoryHeap::kDeviceLocal;
  allocation.pool = kind;
  allocation.device_ptr = ptr;
  allocation.size = size;
  return allocation;
}

Status CudaAllocator::FreeToPool(CUdeviceptr ptr) noexcept {
  Status queued = CUHAL_CU(api_, cuMemFreeAsync, ptr, stream_.get());
  if (queued.ok()) return OkStatus();
  Status freed = CUHAL_CU(api_, cuMemFree, ptr);
  if (freed.ok()) {
    ReportDroppedStatus(
        std::move(queued).AddContext("queueing the free of pool memory (freed synchronously)"));
    return OkStatus();
  }
  ReportDroppedStatus(std::move(freed).AddContext("freeing pool memory synchronously"));
  return queued;
}

StatusOr<Allocation> CudaAllocator::DoAllocate(const BufferParams& params, std::size_t size) {
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), kEnterContext);
  Allocation allocation;
  allocation.heap = params.heap;
  allocation.size = size;
  switch (params.heap) {
    case MemoryHeap::kDeviceLocal: {
      if (params.pool) {
        CUHAL_ASSIGN_OR_RETURN(allocation, AllocateFromPool(*params.pool, size));
        if (Status exited = scope.Exit(); !exited.ok()) {
          ReportDroppedStatus(FreeToPool(allocation.device_ptr));
          return exited;
        }
        return allocation;
      }
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemAlloc, &allocation.device_ptr, size));
      DeviceMemoryHandle owner(api_, allocation.device_ptr);
      CUHAL_RETURN_IF_ERROR(scope.Exit());
      (void)owner.Release();
      return allocation;
    }
    case MemoryHeap::kHostPinned: {
      void* host = nullptr;
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemHostAlloc, &host, size, kHostAllocFlags));
      HostMemoryHandle owner(api_, host);
      CUHAL_RETURN_IF_ERROR(
          CUHAL_CU(api_, cuMemHostGetDevicePointer, &allocation.device_ptr, host, 0),
          "mapping it for the device");
      CUHAL_RETURN_IF_ERROR(scope.Exit());
      allocation.host_ptr = owner.Release();
      return allocation;
    }
    case MemoryHeap::kManaged: {
      CUHAL_RETURN_IF_ERROR(
          CUHAL_CU(api_, cuMemAllocManaged, &allocation.device_ptr, size, CU_MEM_ATTACH_GLOBAL));
      DeviceMemoryHandle owner(api_, allocation.device_ptr);
      CUHAL_RETURN_IF_ERROR(scope.Exit());
      allocation.host_ptr = reinterpret_cast<void*>(owner.Release());
      return allocation;
    }
    case MemoryHeap::kImportedHost:
      break;
  }
  return InvalidArgumentError(StrCat("cannot allocate ", MemoryHeapName(params.heap), " memory"));
}

StatusOr<Allocation> CudaAllocator::DoImport(const BufferParams& params, void* host,
                                             std::size_t size) {
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), kEnterContext);
  Allocation allocation;
  allocation.heap = params.heap;
  allocation.size = size;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemHostRegister, host, size, kHostRegisterFlags));
  HostRegistrationHandle owner(api_, host);
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemHostGetDevicePointer, &allocation.device_ptr, host, 0),
                        "mapping it for the device");
  CUHAL_RETURN_IF_ERROR(scope.Exit());
  allocation.host_ptr = owner.Release();
  return allocation;
}

Status CudaAllocator::DoRelease(const Allocation& allocation) noexcept {
  // The free is attempted even when the context cannot be made current: some drivers do not
  // need it, and a free that fails is reported rather than skipped silently.
  StatusOr<ContextScope> scope = ContextScope::Enter(api_, context_);
  Status entered =
      scope.ok() ? OkStatus() : Status(scope.status()).AddContext(kEnterContext);
  Status freed;
  switch (allocation.heap) {
    case MemoryHeap::kDeviceLocal:
      freed = allocation.pool ? FreeToPool(allocation.device_ptr)
                              : CUHAL_CU(api_, cuMemFree, allocation.device_ptr);
      break;
    case MemoryHeap::kHostPinned:
      freed = CUHAL_CU(api_, cuMemFreeHost, allocation.host_ptr);
      break;
    case MemoryHeap::kManaged:
      freed = CUHAL_CU(api_, cuMemFree, allocation.device_ptr);
      break;
    case MemoryHeap::kImportedHost:
      freed = CUHAL_CU(api_, cuMemHostUnregister, allocation.host_ptr);
      break;
  }
  Status exited = scope.ok() ? scope->Exit() : OkStatus();
  return FirstError(std::move(entered), std::move(freed), std::move(exited));
}

StatusOr<Allocation> CudaAllocator::DoAllocateOnStream(const BufferParams& params,
                                                       std::size_t size, CUstream stream) {
  if (pools_ == nullptr || !params.pool || params.heap != MemoryHeap::kDeviceLocal) {
    return FailedPreconditionError("stream-ordered allocation needs the device's memory pools");
  }
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), kEnterContext);
  CUdeviceptr ptr = 0;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemAllocFromPoolAsync, &ptr, size,
                                 pools_->pool(*params.pool).handle(), stream));
  Allocation allocation;
  allocation.heap = MemoryHeap::kDeviceLocal;
  allocation.pool = params.pool;
  allocation.device_ptr = ptr;
  allocation.size = size;
  if (Status exited = scope.Exit(); !exited.ok()) {
    ReportDroppedStatus(CUHAL_CU(api_, cuMemFreeAsync, ptr, stream)
                            .AddContext("giving back a stream-ordered pool allocation"));
    return exited;
  }
  return allocation;
}

Status CudaAllocator::DoReleaseOnStream(const Allocation& allocation, CUstream stream) {
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), kEnterContext);
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemFreeAsync, allocation.device_ptr, stream));
  // The memory is freed: the buffer must be emptied whatever the pop says.
  ReportDroppedStatus(scope.Exit().AddContext("after a stream-ordered free"));
  return OkStatus();
}

Status CudaAllocator::DoTrim() {
  if (!stream_) return OkStatus();
  return CUHAL_CU(api_, cuStreamSynchronize, stream_.get())
      .AddContext("waiting for the frees on the allocation stream");
}

}  // namespace cuhal
