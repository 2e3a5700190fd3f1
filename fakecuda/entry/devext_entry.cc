// Copyright 2026 The cuhal Authors.
// Entry points of the "devext" group that are not pools or batches: the deprecated device
// queries (cuDeviceComputeCapability, cuDeviceGetProperties, read from the device profile), the
// smaller device queries (exec affinity, LUID, 1D linear texture width, host and P2P atomic
// capabilities, NvSciSync attributes), async notifications (registered; the fake never goes over
// a memory budget, so none is sent), cuFlushGPUDirectRDMAWrites, dma-buf handles
// (cuMemGetHandleForAddressRange: a memfd of the range's size, which no CPU access reaches the
// device memory through), cuProfilerInitialize, the checkpoint calls (the fake's process is
// always RUNNING and never locked, checkpointed or restored), driver logs (callbacks registered;
// the fake writes no log), multicast objects (the H200 has no NVSwitch), external memory and
// semaphores (no graphics or other API exports any to the fake: every import fails) and graphics
// interop (no graphics API: no resource exists). The answers are the H200's to
// ci/gpu-probes/devext_probe.cc where measured; each other one says UNMEASURED.
#include <cudaProfiler.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/devext_model.h"

using fakecuda::DevextModel;
using fakecuda::DriverState;
using fakecuda::ValidDevice;

namespace fakecuda {
namespace {

int Attr(DriverState* st, CUdevice dev, CUdevice_attribute a) {
  return st->profile(dev).Attribute(a);
}

}  // namespace
}  // namespace fakecuda

extern "C" {

// --- device queries ---

CUresult CUDAAPI cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceComputeCapability)
  if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  *major = fakecuda::Attr(st, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  *minor = fakecuda::Attr(st, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceComputeCapability");
}

CUresult CUDAAPI cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetProperties)
  if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  auto a = [&](CUdevice_attribute x) { return fakecuda::Attr(st, dev, x); };
  CUdevprop p;
  p.maxThreadsPerBlock = a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p.maxThreadsDim[0] = a(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  p.maxThreadsDim[1] = a(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  p.maxThreadsDim[2] = a(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  p.maxGridSize[0] = a(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  p.maxGridSize[1] = a(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  p.maxGridSize[2] = a(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  p.sharedMemPerBlock = a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  p.totalConstantMemory = a(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
  p.SIMDWidth = a(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  p.memPitch = a(CU_DEVICE_ATTRIBUTE_MAX_PITCH);
  p.regsPerBlock = a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  p.clockRate = a(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  p.textureAlign = a(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
  *prop = p;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetProperties");
}

CUresult CUDAAPI cuDeviceGetExecAffinitySupport(int* pi, CUexecAffinityType type,
                                                CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetExecAffinitySupport)
  if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return CUDA_ERROR_INVALID_VALUE;
  *pi = 1;  // UNMEASURED
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetExecAffinitySupport");
}

CUresult CUDAAPI cuDeviceGetLuid(char* luid, unsigned int* deviceNodeMask, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetLuid)
  (void)luid;
  (void)deviceNodeMask;
  (void)dev;
  return CUDA_ERROR_NOT_SUPPORTED;  // UNMEASURED: a LUID is a Windows notion
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetLuid");
}

CUresult CUDAAPI cuDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements,
                                                    CUarray_format format, unsigned numChannels,
                                                    CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetTexture1DLinearMaxWidth)
  if (maxWidthInElements == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  (void)format;
  if (numChannels != 1 && numChannels != 2 && numChannels != 4) return CUDA_ERROR_INVALID_VALUE;
  // UNMEASURED
  *maxWidthInElements = static_cast<size_t>(
      fakecuda::Attr(st, dev, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetTexture1DLinearMaxWidth");
}

CUresult CUDAAPI cuDeviceGetHostAtomicCapabilities(unsigned int* capabilities,
                                                   const CUatomicOperation* operations,
                                                   unsigned int count, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetHostAtomicCapabilities)
  if (count == 0) return CUDA_SUCCESS;  // UNMEASURED
  if (capabilities == nullptr || operations == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  for (unsigned i = 0; i < count; ++i) {
    if (operations[i] < 0 || operations[i] >= CU_ATOMIC_OPERATION_MAX) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  for (unsigned i = 0; i < count; ++i) capabilities[i] = 0;  // UNMEASURED
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetHostAtomicCapabilities");
}

CUresult CUDAAPI cuDeviceGetP2PAtomicCapabilities(unsigned int* capabilities,
                                                  const CUatomicOperation* operations,
                                                  unsigned int count, CUdevice srcDevice,
                                                  CUdevice dstDevice) try {
  FAKECUDA_ENTER(cuDeviceGetP2PAtomicCapabilities)
  if (count == 0) return CUDA_SUCCESS;  // UNMEASURED
  if (capabilities == nullptr || operations == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, srcDevice) || !ValidDevice(st, dstDevice)) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  for (unsigned i = 0; i < count; ++i) {
    if (operations[i] < 0 || operations[i] >= CU_ATOMIC_OPERATION_MAX) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  for (unsigned i = 0; i < count; ++i) capabilities[i] = 0;  // UNMEASURED
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetP2PAtomicCapabilities");
}

CUresult CUDAAPI cuDeviceGetNvSciSyncAttributes(void* nvSciSyncAttrList, CUdevice dev,
                                                int flags) try {
  FAKECUDA_ENTER(cuDeviceGetNvSciSyncAttributes)
  (void)nvSciSyncAttrList;
  (void)dev;
  (void)flags;
  return CUDA_ERROR_NOT_SUPPORTED;  // UNMEASURED: no NvSci library
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetNvSciSyncAttributes");
}

CUresult CUDAAPI cuDeviceRegisterAsyncNotification(CUdevice device, CUasyncCallback callbackFunc,
                                                   void* userData,
                                                   CUasyncCallbackHandle* callback) try {
  FAKECUDA_ENTER(cuDeviceRegisterAsyncNotification)
  if (callbackFunc == nullptr || callback == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, device)) return CUDA_ERROR_INVALID_DEVICE;
  DevextModel::Registration r;
  r.kind = DevextModel::Kind::kAsyncNotification;
  r.device = device;
  r.fn = reinterpret_cast<void*>(callbackFunc);
  r.user = userData;
  *callback = reinterpret_cast<CUasyncCallbackHandle>(st->devext().Register(r));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceRegisterAsyncNotification");
}

CUresult CUDAAPI cuDeviceUnregisterAsyncNotification(CUdevice device,
                                                     CUasyncCallbackHandle callback) try {
  FAKECUDA_ENTER(cuDeviceUnregisterAsyncNotification)
  if (!ValidDevice(st, device)) return CUDA_ERROR_INVALID_DEVICE;
  DevextModel& m = st->devext();
  const auto h = reinterpret_cast<std::uintptr_t>(callback);
  const DevextModel::Registration* r = m.Find(DevextModel::Kind::kAsyncNotification, h);
  if (r == nullptr || r->device != device) return CUDA_ERROR_INVALID_VALUE;
  m.Unregister(DevextModel::Kind::kAsyncNotification, h);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceUnregisterAsyncNotification");
}

CUresult CUDAAPI cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
                                            CUflushGPUDirectRDMAWritesScope scope) try {
  FAKECUDA_ENTER(cuFlushGPUDirectRDMAWrites)
  if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
      scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  return CUDA_SUCCESS;  // the fake has no remote writes to flush
} catch (...) {
  return ::fakecuda::EntryFailed("cuFlushGPUDirectRDMAWrites");
}

// --- dma-buf ---

CUresult CUDAAPI cuMemGetHandleForAddressRange(void* handle, CUdeviceptr dptr, size_t size,
                                               CUmemRangeHandleType handleType,
                                               unsigned long long flags) try {
  FAKECUDA_ENTER(cuMemGetHandleForAddressRange)
  if (handle == nullptr || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (flags != 0 && flags != CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  if (size == 0 || dptr % page != 0 || size % page != 0) return CUDA_ERROR_INVALID_VALUE;
  const fakecuda::Allocation* a = st->FindAllocation(dptr, size);
  if (a == nullptr || (a->type != fakecuda::MemoryType::kDevice &&
                       a->type != fakecuda::MemoryType::kVmm)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (flags != 0) return CUDA_ERROR_NOT_SUPPORTED;  // UNMEASURED: no BAR1 mapping
  const int fd = memfd_create("fakecuda-dmabuf", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return CUDA_ERROR_OPERATING_SYSTEM;
  }
  *static_cast<int*>(handle) = fd;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetHandleForAddressRange");
}

// --- profiler ---

CUresult CUDAAPI cuProfilerInitialize(const char* configFile, const char* outputFile,
                                      CUoutput_mode outputMode) try {
  FAKECUDA_ENTER(cuProfilerInitialize)
  (void)configFile;
  (void)outputFile;
  (void)outputMode;
  // Measured 2026-12-06 (H100, driver 580.159.04; misc_probe): deprecated and gone.
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuProfilerInitialize");
}

// --- checkpoint ---

CUresult CUDAAPI cuCheckpointProcessGetRestoreThreadId(int pid, int* tid) try {
  FAKECUDA_ENTER(cuCheckpointProcessGetRestoreThreadId)
  if (tid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (pid != getpid()) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  *tid = pid;                                            // UNMEASURED
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessGetRestoreThreadId");
}

CUresult CUDAAPI cuCheckpointProcessGetState(int pid, CUprocessState* state) try {
  FAKECUDA_ENTER(cuCheckpointProcessGetState)
  if (state == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (pid != getpid()) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  *state = CU_PROCESS_STATE_RUNNING;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessGetState");
}

CUresult CUDAAPI cuCheckpointProcessLock(int pid, CUcheckpointLockArgs* args) try {
  FAKECUDA_ENTER(cuCheckpointProcessLock)
  (void)pid;
  (void)args;
  return CUDA_ERROR_NOT_SUPPORTED;  // UNMEASURED: the fake's process is never locked
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessLock");
}

CUresult CUDAAPI cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs* args) try {
  FAKECUDA_ENTER(cuCheckpointProcessCheckpoint)
  (void)pid;
  (void)args;
  return CUDA_ERROR_NOT_SUPPORTED;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessCheckpoint");
}

CUresult CUDAAPI cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs* args) try {
  FAKECUDA_ENTER(cuCheckpointProcessRestore)
  (void)pid;
  (void)args;
  return CUDA_ERROR_NOT_SUPPORTED;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessRestore");
}

CUresult CUDAAPI cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs* args) try {
  FAKECUDA_ENTER(cuCheckpointProcessUnlock)
  (void)pid;
  (void)args;
  return CUDA_ERROR_NOT_SUPPORTED;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessUnlock");
}

// --- logs ---

CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData,
                                        CUlogsCallbackHandle* callback_out) try {
  FAKECUDA_ENTER(cuLogsRegisterCallback)
  if (callbackFunc == nullptr || callback_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  DevextModel::Registration r;
  r.kind = DevextModel::Kind::kLogCallback;
  r.fn = reinterpret_cast<void*>(callbackFunc);
  r.user = userData;
  *callback_out = reinterpret_cast<CUlogsCallbackHandle>(st->devext().Register(r));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsRegisterCallback");
}

CUresult CUDAAPI cuLogsUnregisterCallback(CUlogsCallbackHandle callback) try {
  FAKECUDA_ENTER(cuLogsUnregisterCallback)
  if (!st->devext().Unregister(DevextModel::Kind::kLogCallback,
                               reinterpret_cast<std::uintptr_t>(callback))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsUnregisterCallback");
}

CUresult CUDAAPI cuLogsCurrent(CUlogIterator* iterator_out, unsigned int flags) try {
  FAKECUDA_ENTER(cuLogsCurrent)
  if (iterator_out == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  *iterator_out = 0;  // the fake's log is empty
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsCurrent");
}

CUresult CUDAAPI cuLogsDumpToFile(CUlogIterator* iterator, const char* pathToFile,
                                  unsigned int flags) try {
  FAKECUDA_ENTER(cuLogsDumpToFile)
  if (pathToFile == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  (void)iterator;
  FILE* f = std::fopen(pathToFile, "w");
  if (f == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::fclose(f);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsDumpToFile");
}

CUresult CUDAAPI cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer, size_t* size,
                                    unsigned int flags) try {
  FAKECUDA_ENTER(cuLogsDumpToMemory)
  if (buffer == nullptr || size == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  (void)iterator;
  if (*size > 0) buffer[0] = '\0';
  *size = 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsDumpToMemory");
}

// --- multicast (UNMEASURED: CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0) ---

CUresult CUDAAPI cuMulticastCreate(CUmemGenericAllocationHandle* mcHandle,
                                   const CUmulticastObjectProp* prop) try {
  FAKECUDA_ENTER(cuMulticastCreate)
  if (mcHandle == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMulticastCreate");
}

CUresult CUDAAPI cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev) try {
  FAKECUDA_ENTER(cuMulticastAddDevice)
  (void)mcHandle;
  (void)dev;
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMulticastAddDevice");
}

CUresult CUDAAPI cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                    CUmemGenericAllocationHandle memHandle, size_t memOffset,
                                    size_t size, unsigned long long flags) try {
  FAKECUDA_ENTER(cuMulticastBindMem)
  (void)mcHandle;
  (void)mcOffset;
  (void)memHandle;
  (void)memOffset;
  (void)size;
  (void)flags;
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMulticastBindMem");
}

CUresult CUDAAPI cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                     CUdeviceptr memptr, size_t size,
                                     unsigned long long flags) try {
  FAKECUDA_ENTER(cuMulticastBindAddr)
  (void)mcHandle;
  (void)mcOffset;
  (void)memptr;
  (void)size;
  (void)flags;
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMulticastBindAddr");
}

CUresult CUDAAPI cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev,
                                   size_t mcOffset, size_t size) try {
  FAKECUDA_ENTER(cuMulticastUnbind)
  (void)mcHandle;
  (void)dev;
  (void)mcOffset;
  (void)size;
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMulticastUnbind");
}

CUresult CUDAAPI cuMulticastGetGranularity(size_t* granularity, const CUmulticastObjectProp* prop,
                                           CUmulticastGranularity_flags option) try {
  FAKECUDA_ENTER(cuMulticastGetGranularity)
  if (granularity == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  (void)option;
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMulticastGetGranularity");
}

// --- external memory and semaphores ---

CUresult CUDAAPI cuImportExternalMemory(CUexternalMemory* extMem_out,
                                        const CUDA_EXTERNAL_MEMORY_HANDLE_DESC* memHandleDesc) try {
  FAKECUDA_ENTER(cuImportExternalMemory)
  if (extMem_out == nullptr || memHandleDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // UNMEASURED: nothing the fake can import.
  return CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuImportExternalMemory");
}

CUresult CUDAAPI cuExternalMemoryGetMappedBuffer(
    CUdeviceptr* devPtr, CUexternalMemory extMem,
    const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* bufferDesc) try {
  FAKECUDA_ENTER(cuExternalMemoryGetMappedBuffer)
  if (devPtr == nullptr || bufferDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  (void)extMem;
  return CUDA_ERROR_INVALID_HANDLE;  // UNMEASURED: no external memory exists
} catch (...) {
  return ::fakecuda::EntryFailed("cuExternalMemoryGetMappedBuffer");
}

CUresult CUDAAPI cuExternalMemoryGetMappedMipmappedArray(
    CUmipmappedArray* mipmap, CUexternalMemory extMem,
    const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC* mipmapDesc) try {
  FAKECUDA_ENTER(cuExternalMemoryGetMappedMipmappedArray)
  if (mipmap == nullptr || mipmapDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  (void)extMem;
  return CUDA_ERROR_INVALID_HANDLE;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuExternalMemoryGetMappedMipmappedArray");
}

CUresult CUDAAPI cuDestroyExternalMemory(CUexternalMemory extMem) try {
  FAKECUDA_ENTER(cuDestroyExternalMemory)
  (void)extMem;
  return CUDA_ERROR_INVALID_HANDLE;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuDestroyExternalMemory");
}

CUresult CUDAAPI cuImportExternalSemaphore(
    CUexternalSemaphore* extSem_out, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC* semHandleDesc) try {
  FAKECUDA_ENTER(cuImportExternalSemaphore)
  if (extSem_out == nullptr || semHandleDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuImportExternalSemaphore");
}

CUresult CUDAAPI cuSignalExternalSemaphoresAsync(
    const CUexternalSemaphore* extSemArray, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* paramsArray,
    unsigned int numExtSems, CUstream stream) try {
  FAKECUDA_ENTER(cuSignalExternalSemaphoresAsync)
  (void)stream;
  if (numExtSems == 0) return CUDA_SUCCESS;  // UNMEASURED
  if (extSemArray == nullptr || paramsArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_INVALID_HANDLE;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuSignalExternalSemaphoresAsync");
}

CUresult CUDAAPI cuWaitExternalSemaphoresAsync(
    const CUexternalSemaphore* extSemArray, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* paramsArray,
    unsigned int numExtSems, CUstream stream) try {
  FAKECUDA_ENTER(cuWaitExternalSemaphoresAsync)
  (void)stream;
  if (numExtSems == 0) return CUDA_SUCCESS;  // UNMEASURED
  if (extSemArray == nullptr || paramsArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_INVALID_HANDLE;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuWaitExternalSemaphoresAsync");
}

CUresult CUDAAPI cuDestroyExternalSemaphore(CUexternalSemaphore extSem) try {
  FAKECUDA_ENTER(cuDestroyExternalSemaphore)
  (void)extSem;
  return CUDA_ERROR_INVALID_HANDLE;  // UNMEASURED
} catch (...) {
  return ::fakecuda::EntryFailed("cuDestroyExternalSemaphore");
}

// --- graphics interop (no graphics API: no resource exists; UNMEASURED) ---

CUresult CUDAAPI cuGraphicsMapResources(unsigned int count, CUgraphicsResource* resources,
                                        CUstream hStream) try {
  FAKECUDA_ENTER(cuGraphicsMapResources)
  (void)hStream;
  if (count == 0 || resources == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_INVALID_HANDLE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphicsMapResources");
}

CUresult CUDAAPI cuGraphicsUnmapResources(unsigned int count, CUgraphicsResource* resources,
                                          CUstream hStream) try {
  FAKECUDA_ENTER(cuGraphicsUnmapResources)
  (void)hStream;
  if (count == 0 || resources == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_INVALID_HANDLE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphicsUnmapResources");
}

CUresult CUDAAPI cuGraphicsUnregisterResource(CUgraphicsResource resource) try {
  FAKECUDA_ENTER(cuGraphicsUnregisterResource)
  (void)resource;
  return CUDA_ERROR_INVALID_HANDLE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphicsUnregisterResource");
}

CUresult CUDAAPI cuGraphicsResourceGetMappedPointer(CUdeviceptr* pDevPtr, size_t* pSize,
                                                    CUgraphicsResource resource) try {
  FAKECUDA_ENTER(cuGraphicsResourceGetMappedPointer)
  (void)pDevPtr;
  (void)pSize;
  (void)resource;
  return CUDA_ERROR_INVALID_HANDLE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphicsResourceGetMappedPointer");
}

CUresult CUDAAPI cuGraphicsResourceGetMappedMipmappedArray(CUmipmappedArray* pMipmappedArray,
                                                           CUgraphicsResource resource) try {
  FAKECUDA_ENTER(cuGraphicsResourceGetMappedMipmappedArray)
  (void)pMipmappedArray;
  (void)resource;
  return CUDA_ERROR_INVALID_HANDLE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphicsResourceGetMappedMipmappedArray");
}

CUresult CUDAAPI cuGraphicsResourceSetMapFlags(CUgraphicsResource resource,
                                               unsigned int flags) try {
  FAKECUDA_ENTER(cuGraphicsResourceSetMapFlags)
  (void)resource;
  (void)flags;
  return CUDA_ERROR_INVALID_HANDLE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphicsResourceSetMapFlags");
}

CUresult CUDAAPI cuGraphicsSubResourceGetMappedArray(CUarray* pArray, CUgraphicsResource resource,
                                                     unsigned int arrayIndex,
                                                     unsigned int mipLevel) try {
  FAKECUDA_ENTER(cuGraphicsSubResourceGetMappedArray)
  (void)pArray;
  (void)resource;
  (void)arrayIndex;
  (void)mipLevel;
  return CUDA_ERROR_INVALID_HANDLE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphicsSubResourceGetMappedArray");
}

}  // extern "C"
