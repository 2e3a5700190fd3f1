// Copyright 2026 The cuhal Authors.
// Handle traits for the CUDA and NCCL objects cuhal owns: Handle<StreamTraits> and friends.
#ifndef CUHAL_CORE_SYMBOLS_DRIVER_HANDLES_H_
#define CUHAL_CORE_SYMBOLS_DRIVER_HANDLES_H_

#include "core/base/handle.h"
#include "core/symbols/api_status.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"

namespace cuhal {

#define CUHAL_CUDA_HANDLE_TRAITS(Traits, ValueType, destroy_fn)              \
  struct Traits {                                                            \
    using Api = CudaApi;                                                     \
    using Value = ValueType;                                                 \
    static Status Destroy(const Api& api, Value value) noexcept {            \
      return CUHAL_CU(&api, destroy_fn, value);                              \
    }                                                                        \
  };

CUHAL_CUDA_HANDLE_TRAITS(ContextTraits, CUcontext, cuCtxDestroy)
CUHAL_CUDA_HANDLE_TRAITS(StreamTraits, CUstream, cuStreamDestroy)
CUHAL_CUDA_HANDLE_TRAITS(EventTraits, CUevent, cuEventDestroy)
CUHAL_CUDA_HANDLE_TRAITS(DeviceMemoryTraits, CUdeviceptr, cuMemFree)
CUHAL_CUDA_HANDLE_TRAITS(HostMemoryTraits, void*, cuMemFreeHost)
CUHAL_CUDA_HANDLE_TRAITS(HostRegistrationTraits, void*, cuMemHostUnregister)
CUHAL_CUDA_HANDLE_TRAITS(MemoryPoolTraits, CUmemoryPool, cuMemPoolDestroy)
CUHAL_CUDA_HANDLE_TRAITS(ModuleTraits, CUmodule, cuModuleUnload)
CUHAL_CUDA_HANDLE_TRAITS(GraphTraits, CUgraph, cuGraphDestroy)
CUHAL_CUDA_HANDLE_TRAITS(GraphExecTraits, CUgraphExec, cuGraphExecDestroy)
#undef CUHAL_CUDA_HANDLE_TRAITS

// A retained primary context is released by device ordinal, not by its CUcontext.
struct PrimaryContextTraits {
  using Api = CudaApi;
  using Value = CUdevice;  // stored as ordinal + 1 so that 0 means "none"
  static Status Destroy(const Api& api, Value device_plus_one) noexcept {
    return CUHAL_CU(&api, cuDevicePrimaryCtxRelease, device_plus_one - 1);
  }
};

struct NcclCommTraits {
  using Api = NcclApi;
  using Value = ncclComm_t;
  static Status Destroy(const Api& api, Value comm) noexcept {
    return CUHAL_NCCL(&api, ncclCommDestroy, comm);
  }
};

using ContextHandle = Handle<ContextTraits>;
using StreamHandle = Handle<StreamTraits>;
using EventHandle = Handle<EventTraits>;
using DeviceMemoryHandle = Handle<DeviceMemoryTraits>;
using HostMemoryHandle = Handle<HostMemoryTraits>;
using HostRegistrationHandle = Handle<HostRegistrationTraits>;
using MemoryPoolHandle = Handle<MemoryPoolTraits>;
using ModuleHandle = Handle<ModuleTraits>;
using GraphHandle = Handle<GraphTraits>;
using GraphExecHandle = Handle<GraphExecTraits>;
using PrimaryContextHandle = Handle<PrimaryContextTraits>;
using NcclCommHandle = Handle<NcclCommTraits>;

}  // namespace cuhal

#endif  // CUHAL_CORE_SYMBOLS_DRIVER_HANDLES_H_
