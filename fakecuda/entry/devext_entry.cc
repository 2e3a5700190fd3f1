// Copyright 2026 The cuhal Authors.
// Entry points of the "devext" group that are not pools or batches: the deprecated device
// queries (cuDeviceComputeCapability, cuDeviceGetProperties, read from the device profile), the
// smaller device queries (exec affinity, LUID, 1D linear texture width, host and P2P atomic
// capabilities, NvSciSync attributes), async notifications (registered; the fake never goes over
// a memory budget, so none is sent), cuFlushGPUDirectRDMAWrites, dma-buf handles
// (cuMemGetHandleForAddressRange: a memfd of the range's size, which no CPU access reaches the
// device memory through), cuProfilerInitialize, the checkpoint calls (the fake's process is
// always RUNNING and never locked, checkpointed or restored), driver logs (callbacks registered;
// the fake writes no log), multicast objects (no NVSwitch), external memory and semaphores (what
// the fake can import is a VMM memory's descriptor: its mapped buffers share those bytes) and
// graphics interop (no graphics API: no resource exists). The answers are the real driver's to
// ci/gpu-probes/devext_probe.cc (measured 2026-12-06 on an H100 80GB HBM3, driver 580.159.04;
// docs/driver_facts.md, "Device extras, pool getters, external memory and batches") where
// measured; each other one says UNMEASURED.
#include <cudaProfiler.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/array_model.h"
#include "fakecuda/internal/devext_model.h"
#include "fakecuda/internal/vmm_model.h"

using fakecuda::DevextModel;
using fakecuda::DriverState;
using fakecuda::Op;
using fakecuda::Stream;
using fakecuda::ValidDevice;

namespace fakecuda {
namespace {

int Attr(DriverState* st, CUdevice dev, CUdevice_attribute a) {
  return st->profile(dev).Attribute(a);
}

CUresult CheckpointPid(DriverState* st, int pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) return CUDA_ERROR_OPERATING_SYSTEM;
  if (pid != getpid()) return CUDA_ERROR_NOT_INITIALIZED;
  cuhal::MutexLock lock(st->mu);
  return st->initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

template <typename T>
bool ZeroBytes(const T& v, std::size_t from = 0, std::size_t to = sizeof(T)) {
  const auto* b = reinterpret_cast<const unsigned char*>(&v);
  return std::all_of(b + from, b + to, [](unsigned char c) { return c == 0; });
}

// The VMM memory an opaque descriptor names: its memfd (the model's), or -1.
int VmmMemoryOf(DriverState* st, int fd, std::size_t* size, int* device) CUHAL_REQUIRES(st->mu) {
  struct stat sb {};
  if (fd < 0 || fstat(fd, &sb) != 0) return -1;
  return st->vmm().MemoryDescriptor(static_cast<std::uint64_t>(sb.st_dev),
                                    static_cast<std::uint64_t>(sb.st_ino), size, device);
}

// Signal/wait: every semaphore must be one of the fake's; the work is a no-op in stream order
// (UNMEASURED: the real driver crashed on the probe's garbage handle before any valid call).
CUresult SemaphoreOps(DriverState* st, const CUexternalSemaphore* sems, const void* params,
                      unsigned n, CUstream stream, const char* what) CUHAL_REQUIRES(st->mu) {
  if (n == 0) return CUDA_SUCCESS;
  if (sems == nullptr || params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < n; ++i) {
    if (st->devext().Find(DevextModel::Kind::kExternalSemaphore,
                          reinterpret_cast<std::uintptr_t>(sems[i])) == nullptr) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
  }
  CUresult err;
  Stream* s = st->ResolveStream(stream, &err);
  if (s == nullptr) return err;
  Op op;
  op.what = what;
  st->Enqueue(s, std::move(op));
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

namespace fakecuda {
// Whether *op is a CUatomicOperation cuda.h defines. Read as an int: the caller's array may hold
// any value, and loading an out-of-range enum is undefined behaviour (UBSan -fsanitize=enum).
inline bool KnownAtomicOperation(const CUatomicOperation* op) {
  static_assert(sizeof(CUatomicOperation) == sizeof(int));
  int value = 0;
  std::memcpy(&value, op, sizeof value);
  return value >= 0 && value < static_cast<int>(CU_ATOMIC_OPERATION_MAX);
}
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
  // Measured: 0 (no MPS), and any type, even CU_EXEC_AFFINITY_TYPE_MAX or -1, succeeds.
  (void)type;
  *pi = 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetExecAffinitySupport");
}

CUresult CUDAAPI cuDeviceGetLuid(char* luid, unsigned int* deviceNodeMask, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetLuid)
  if (luid == nullptr || deviceNodeMask == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  return CUDA_ERROR_NOT_SUPPORTED;  // measured: a LUID is a Windows notion (nothing written)
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetLuid");
}

CUresult CUDAAPI cuDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements,
                                                    CUarray_format format, unsigned numChannels,
                                                    CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetTexture1DLinearMaxWidth)
  if (maxWidthInElements == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  // Measured (sm_90): the formats and channel counts a CUDA array takes (others, NV12 included,
  // are CUDA_ERROR_INVALID_VALUE with nothing written); the width is 2^30 elements or 4 GiB,
  // whichever is fewer (not CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, 2^28): U8x1
  // 2^30, U32x4 2^28, BC1 (8 bytes a block) 2^29.
  const std::size_t element = fakecuda::ArrayModel::ElementSize(format, numChannels);
  if (element == 0) return CUDA_ERROR_INVALID_VALUE;
  constexpr std::size_t kMaxElements = std::size_t{1} << 30;
  constexpr std::size_t kMaxBytes = std::size_t{1} << 32;
  *maxWidthInElements = std::min(kMaxElements, kMaxBytes / element);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetTexture1DLinearMaxWidth");
}

CUresult CUDAAPI cuDeviceGetHostAtomicCapabilities(unsigned int* capabilities,
                                                   const CUatomicOperation* operations,
                                                   unsigned int count, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetHostAtomicCapabilities)
  if (count == 0 || capabilities == nullptr || operations == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  // Measured (an x86 host over PCIe): no operation is atomic with the host (0 for each); the
  // capabilities are written before the operations are checked (an unknown one: 0 written, then
  // CUDA_ERROR_INVALID_VALUE).
  std::fill(capabilities, capabilities + count, 0u);
  for (unsigned i = 0; i < count; ++i) {
    if (!fakecuda::KnownAtomicOperation(operations + i)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetHostAtomicCapabilities");
}

CUresult CUDAAPI cuDeviceGetP2PAtomicCapabilities(unsigned int* capabilities,
                                                  const CUatomicOperation* operations,
                                                  unsigned int count, CUdevice srcDevice,
                                                  CUdevice dstDevice) try {
  FAKECUDA_ENTER(cuDeviceGetP2PAtomicCapabilities)
  if (count == 0 || capabilities == nullptr || operations == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured: a device is not its own peer (0 -> 0 is CUDA_ERROR_INVALID_DEVICE, before the
  // operations are looked at).
  if (!ValidDevice(st, srcDevice) || !ValidDevice(st, dstDevice) || srcDevice == dstDevice) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  // UNMEASURED (one GPU): two devices of the fake have no peer atomics.
  std::fill(capabilities, capabilities + count, 0u);
  for (unsigned i = 0; i < count; ++i) {
    if (!fakecuda::KnownAtomicOperation(operations + i)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetP2PAtomicCapabilities");
}

CUresult CUDAAPI cuDeviceGetNvSciSyncAttributes(void* nvSciSyncAttrList, CUdevice dev,
                                                int flags) try {
  FAKECUDA_ENTER(cuDeviceGetNvSciSyncAttributes)
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  // Measured: flags must be SIGNAL, WAIT or both (0 and 4: CUDA_ERROR_INVALID_VALUE), a null
  // list is CUDA_ERROR_INVALID_HANDLE, and then there is no NvSciSync (CUDA_ERROR_NOT_SUPPORTED).
  const int all = CUDA_NVSCISYNC_ATTR_SIGNAL | CUDA_NVSCISYNC_ATTR_WAIT;
  if (flags == 0 || (flags & ~all) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (nvSciSyncAttrList == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetNvSciSyncAttributes");
}

CUresult CUDAAPI cuDeviceRegisterAsyncNotification(CUdevice device, CUasyncCallback callbackFunc,
                                                   void* userData,
                                                   CUasyncCallbackHandle* callback) try {
  FAKECUDA_ENTER(cuDeviceRegisterAsyncNotification)
  // Measured: a null callback is CUDA_ERROR_INVALID_VALUE; a null handle pointer crashes the real
  // driver (SIGNAL 11), the fake answers CUDA_ERROR_INVALID_VALUE.
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
  FAKECUDA_ENTER_NOLOCK(cuMemGetHandleForAddressRange)
  // Measured: the arguments are checked before cuInit and the context, with nothing written: a
  // null handle, another handle type, flags other than 0 and PCIE, a null pointer, a size of 0
  // or not a whole number of host pages (CUDA_ERROR_INVALID_VALUE).
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  if (handle == nullptr || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD ||
      (flags != 0 && flags != CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) || dptr == 0 ||
      size == 0 || dptr % page != 0 || size % page != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  FAKECUDA_REQUIRE_CONTEXT()
  // Measured: past this point a failure writes -1. cuMemAlloc, pool and (cuda.h) fully mapped VMM
  // memory have a dma-buf; pinned host memory has not on this GPU
  // (CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED 0), nor has managed memory, a range past
  // its allocation, freed memory or an unknown address.
  int* fd_out = static_cast<int*>(handle);
  *fd_out = -1;
  fakecuda::Allocation* a = st->FindAllocation(dptr, size);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  bool ok = a->type == fakecuda::MemoryType::kDevice || a->type == fakecuda::MemoryType::kPool;
  if (a->type == fakecuda::MemoryType::kVmm) {
    fakecuda::VmmSpan span;
    ok = st->vmm().Resolve(dptr, size, ctx->device, CU_MEM_ACCESS_FLAGS_PROT_READ, &span);
  }
  if (!ok) return CUDA_ERROR_INVALID_VALUE;
  // Measured: no BAR1 mapping (CUDA_ERROR_NOT_SUPPORTED, -1 written).
  if (flags != 0) return CUDA_ERROR_NOT_SUPPORTED;
  const int fd = memfd_create("fakecuda-dmabuf", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return CUDA_ERROR_OPERATING_SYSTEM;
  }
  *fd_out = fd;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetHandleForAddressRange");
}

// --- profiler ---

CUresult CUDAAPI cuProfilerInitialize(const char* configFile, const char* outputFile,
                                      CUoutput_mode outputMode) try {
  FAKECUDA_ENTER_NOLOCK(cuProfilerInitialize)
  (void)configFile;
  (void)outputFile;
  (void)outputMode;
  // Measured: deprecated and gone, whatever the arguments, even before cuInit (no file made).
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuProfilerInitialize");
}

// --- checkpoint ---
// Measured (checkpoint:noinit/init/ctx): these work before cuInit and on any pid. A null out
// pointer or a nonzero reserved field is CUDA_ERROR_INVALID_VALUE first; a pid that names no
// process (0, -1, a reaped child) is CUDA_ERROR_OPERATING_SYSTEM; a live process that is not using
// CUDA, and this process before cuInit, CUDA_ERROR_NOT_INITIALIZED. This process after cuInit is
// RUNNING. The fake's process is never locked, checkpointed or restored: what a valid
// Lock/Checkpoint/Restore/Unlock of it answers is UNMEASURED (the probe does not lock itself).

CUresult CUDAAPI cuCheckpointProcessGetRestoreThreadId(int pid, int* tid) try {
  FAKECUDA_ENTER_NOLOCK(cuCheckpointProcessGetRestoreThreadId)
  if (tid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckpointPid(st, pid); e != CUDA_SUCCESS) return e;
  // Measured: a positive thread id that is not the pid (the driver's restore thread). The fake
  // has no such thread: it answers pid + 1.
  *tid = pid + 1;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessGetRestoreThreadId");
}

CUresult CUDAAPI cuCheckpointProcessGetState(int pid, CUprocessState* state) try {
  FAKECUDA_ENTER_NOLOCK(cuCheckpointProcessGetState)
  if (state == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckpointPid(st, pid); e != CUDA_SUCCESS) return e;
  *state = CU_PROCESS_STATE_RUNNING;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessGetState");
}

CUresult CUDAAPI cuCheckpointProcessLock(int pid, CUcheckpointLockArgs* args) try {
  FAKECUDA_ENTER_NOLOCK(cuCheckpointProcessLock)
  if (args != nullptr && (args->reserved0 != 0 || !fakecuda::ZeroBytes(args->reserved1))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (CUresult e = fakecuda::CheckpointPid(st, pid); e != CUDA_SUCCESS) return e;
  return CUDA_ERROR_NOT_SUPPORTED;  // UNMEASURED: the fake cannot lock its process
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessLock");
}

CUresult CUDAAPI cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs* args) try {
  FAKECUDA_ENTER_NOLOCK(cuCheckpointProcessCheckpoint)
  if (args != nullptr && !fakecuda::ZeroBytes(*args)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckpointPid(st, pid); e != CUDA_SUCCESS) return e;
  return CUDA_ERROR_ILLEGAL_STATE;  // UNMEASURED: not locked
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessCheckpoint");
}

CUresult CUDAAPI cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs* args) try {
  FAKECUDA_ENTER_NOLOCK(cuCheckpointProcessRestore)
  if (args != nullptr && (!fakecuda::ZeroBytes(args->reserved) || args->reserved1 != 0)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (CUresult e = fakecuda::CheckpointPid(st, pid); e != CUDA_SUCCESS) return e;
  return CUDA_ERROR_ILLEGAL_STATE;  // UNMEASURED: not checkpointed
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessRestore");
}

CUresult CUDAAPI cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs* args) try {
  FAKECUDA_ENTER_NOLOCK(cuCheckpointProcessUnlock)
  if (args != nullptr && !fakecuda::ZeroBytes(*args)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckpointPid(st, pid); e != CUDA_SUCCESS) return e;
  return CUDA_ERROR_ILLEGAL_STATE;  // UNMEASURED: not locked
} catch (...) {
  return ::fakecuda::EntryFailed("cuCheckpointProcessUnlock");
}

// --- logs ---
// Measured (logs): these work before cuInit; cuLogsCurrent ignores its flags and answers 0 after
// cuInit; a null callback is CUDA_ERROR_INVALID_VALUE, a null handle pointer is accepted (the
// callback is registered, its handle not returned). The fake writes no log: its dumps are empty
// (UNMEASURED: what the real driver's dump holds; the probe crashed before it).

CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData,
                                        CUlogsCallbackHandle* callback_out) try {
  FAKECUDA_ENTER_NOLOCK(cuLogsRegisterCallback)
  if (callbackFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuhal::MutexLock lock(st->mu);
  DevextModel::Registration r;
  r.kind = DevextModel::Kind::kLogCallback;
  r.fn = reinterpret_cast<void*>(callbackFunc);
  r.user = userData;
  const std::uintptr_t h = st->devext().Register(r);
  if (callback_out != nullptr) *callback_out = reinterpret_cast<CUlogsCallbackHandle>(h);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsRegisterCallback");
}

CUresult CUDAAPI cuLogsUnregisterCallback(CUlogsCallbackHandle callback) try {
  FAKECUDA_ENTER_NOLOCK(cuLogsUnregisterCallback)
  cuhal::MutexLock lock(st->mu);
  if (!st->devext().Unregister(DevextModel::Kind::kLogCallback,
                               reinterpret_cast<std::uintptr_t>(callback))) {
    return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsUnregisterCallback");
}

CUresult CUDAAPI cuLogsCurrent(CUlogIterator* iterator_out, unsigned int flags) try {
  FAKECUDA_ENTER_NOLOCK(cuLogsCurrent)
  (void)flags;
  if (iterator_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *iterator_out = 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsCurrent");
}

CUresult CUDAAPI cuLogsDumpToFile(CUlogIterator* iterator, const char* pathToFile,
                                  unsigned int flags) try {
  FAKECUDA_ENTER_NOLOCK(cuLogsDumpToFile)
  (void)iterator;
  (void)flags;
  if (pathToFile == nullptr) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  FILE* f = std::fopen(pathToFile, "w");
  if (f == nullptr) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  std::fclose(f);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsDumpToFile");
}

CUresult CUDAAPI cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer, size_t* size,
                                    unsigned int flags) try {
  FAKECUDA_ENTER_NOLOCK(cuLogsDumpToMemory)
  (void)iterator;
  (void)flags;
  if (buffer == nullptr || size == nullptr) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  if (*size > 0) buffer[0] = '\0';
  *size = 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLogsDumpToMemory");
}

// --- multicast ---
// Measured (multicast): with CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED 0 (no NVSwitch) every call
// after cuInit is CUDA_ERROR_NOT_SUPPORTED, whatever its arguments (null ones included); the
// fake has no multicast whatever its profile says.

CUresult CUDAAPI cuMulticastCreate(CUmemGenericAllocationHandle* mcHandle,
                                   const CUmulticastObjectProp* prop) try {
  FAKECUDA_ENTER(cuMulticastCreate)
  (void)mcHandle;
  (void)prop;
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
  (void)granularity;
  (void)prop;
  (void)option;
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMulticastGetGranularity");
}

// --- external memory and semaphores ---
// Measured (extmem:errors, extmem:vmm, extsem). The fake imports what the real driver imported:
// an opaque descriptor of VMM memory (cuMemExportToShareableHandle's), as memory and, oddly, as a
// semaphore. Memory: null arguments, nonzero reserved words and a size of 0 are
// CUDA_ERROR_INVALID_VALUE; a DMABUF_FD is CUDA_ERROR_NOT_SUPPORTED; the Windows kinds and
// NvSciBuf with a null handle are CUDA_ERROR_INVALID_VALUE; an OPAQUE_FD that is not open or not
// VMM memory is CUDA_ERROR_UNKNOWN. The driver takes the descriptor: it is closed by the import,
// also when the import fails. Semaphores: flags other than 0 are CUDA_ERROR_INVALID_VALUE, a
// descriptor the driver cannot read CUDA_ERROR_UNKNOWN (left open). Garbage object handles crash
// the real driver (SIGNAL 11); the fake answers CUDA_ERROR_INVALID_VALUE (memory) and
// CUDA_ERROR_INVALID_HANDLE (semaphores).

CUresult CUDAAPI cuImportExternalMemory(CUexternalMemory* extMem_out,
                                        const CUDA_EXTERNAL_MEMORY_HANDLE_DESC* memHandleDesc) try {
  FAKECUDA_ENTER(cuImportExternalMemory)
  if (extMem_out == nullptr || memHandleDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_EXTERNAL_MEMORY_HANDLE_DESC& d = *memHandleDesc;
  if (!fakecuda::ZeroBytes(d.reserved) || d.size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (d.type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD) return CUDA_ERROR_NOT_SUPPORTED;
  if (d.type != CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD) return CUDA_ERROR_INVALID_VALUE;
  const int fd = d.handle.fd;
  std::size_t size = 0;
  int device = 0;
  const int memfd = fakecuda::VmmMemoryOf(st, fd, &size, &device);
  // The model's own descriptor is made before the caller's is closed, so that it cannot take
  // the caller's number (a later use of that stale number must find nothing, as measured).
  const int own = memfd < 0 || d.size > size ? -1 : fcntl(memfd, F_DUPFD_CLOEXEC, 0);
  struct stat sb {};
  if (fd >= 0 && fstat(fd, &sb) == 0) close(fd);  // the driver owns it now
  if (memfd < 0) return CUDA_ERROR_UNKNOWN;
  if (d.size > size) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  if (own < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  DevextModel::Registration r;
  r.kind = DevextModel::Kind::kExternalMemory;
  r.device = device;
  r.fd = own;
  r.size = static_cast<std::size_t>(d.size);
  *extMem_out = reinterpret_cast<CUexternalMemory>(st->devext().Register(r));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuImportExternalMemory");
}

CUresult CUDAAPI
cuExternalMemoryGetMappedBuffer(CUdeviceptr* devPtr, CUexternalMemory extMem,
                                const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* bufferDesc) try {
  FAKECUDA_ENTER(cuExternalMemoryGetMappedBuffer)
  if (devPtr == nullptr || bufferDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const DevextModel::Registration* m = st->devext().Find(DevextModel::Kind::kExternalMemory,
                                                         reinterpret_cast<std::uintptr_t>(extMem));
  if (m == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured: flags other than 0, a size of 0 and a range past the imported size are
  // CUDA_ERROR_INVALID_VALUE; an unaligned offset (100) is taken. Each mapping is a new device
  // allocation on those bytes (cuMemAlloc's kind: memory type DEVICE, its own address range),
  // freed with cuMemFree.
  const CUDA_EXTERNAL_MEMORY_BUFFER_DESC& b = *bufferDesc;
  if (b.flags != 0 || b.size == 0 || b.offset > m->size || b.size > m->size - b.offset) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  FAKECUDA_REQUIRE_CONTEXT()  // UNMEASURED
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t start = b.offset / page * page;
  const std::size_t delta = static_cast<std::size_t>(b.offset - start);
  const std::size_t len = delta + static_cast<std::size_t>(b.size);
  void* map =
      mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, static_cast<off_t>(start));
  if (map == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  fakecuda::Allocation a;
  a.id = st->NewId();
  a.type = fakecuda::MemoryType::kDevice;
  a.size = static_cast<std::size_t>(b.size);
  a.data = static_cast<std::byte*>(map) + delta;
  a.mmapped = true;
  a.mapped_size = len;
  a.device = m->device;
  a.ctx_id = ctx->id;
  a.base = st->ReserveVa(m->device, a.size);
  a.created_by = "cuExternalMemoryGetMappedBuffer";
  *devPtr = a.base;
  st->AddDeviceAllocation(std::move(a));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuExternalMemoryGetMappedBuffer");
}

CUresult CUDAAPI cuExternalMemoryGetMappedMipmappedArray(
    CUmipmappedArray* mipmap, CUexternalMemory extMem,
    const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC* mipmapDesc) try {
  FAKECUDA_ENTER(cuExternalMemoryGetMappedMipmappedArray)
  if (mipmap == nullptr || mipmapDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (st->devext().Find(DevextModel::Kind::kExternalMemory,
                        reinterpret_cast<std::uintptr_t>(extMem)) == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured: the real driver maps one (a level can be taken, the array destroyed). The fake
  // makes a mipmapped array of its own bytes: an array's layout is opaque, so no byte of the
  // external memory is promised to show through it (UNMEASURED whether it does on the GPU). A
  // level count of 0 aborts the real driver (SIGNAL 6); the fake answers CUDA_ERROR_INVALID_VALUE.
  FAKECUDA_REQUIRE_CONTEXT()
  const CUDA_ARRAY3D_DESCRIPTOR& d = mipmapDesc->arrayDesc;
  if (CUresult e = fakecuda::ArrayModel::Validate(st->profile(ctx->device), d); e != CUDA_SUCCESS) {
    return e;
  }
  const std::size_t largest = std::max({d.Width, d.Height, d.Depth});
  unsigned max_levels = 1;
  while ((largest >> max_levels) != 0) ++max_levels;
  if (mipmapDesc->numLevels == 0 || mipmapDesc->numLevels > max_levels) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return st->arrays().CreateMipmapped(ctx->id, ctx->device, d, mipmapDesc->numLevels,
                                      "cuExternalMemoryGetMappedMipmappedArray", mipmap);
} catch (...) {
  return ::fakecuda::EntryFailed("cuExternalMemoryGetMappedMipmappedArray");
}

CUresult CUDAAPI cuDestroyExternalMemory(CUexternalMemory extMem) try {
  FAKECUDA_ENTER(cuDestroyExternalMemory)
  if (!st->devext().Unregister(DevextModel::Kind::kExternalMemory,
                               reinterpret_cast<std::uintptr_t>(extMem))) {
    return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED (a destroyed one: the real driver aborted)
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDestroyExternalMemory");
}

CUresult CUDAAPI cuImportExternalSemaphore(
    CUexternalSemaphore* extSem_out, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC* semHandleDesc) try {
  FAKECUDA_ENTER(cuImportExternalSemaphore)
  if (extSem_out == nullptr || semHandleDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC& d = *semHandleDesc;
  if (d.flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (d.type != CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD &&
      d.type != CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::size_t size = 0;
  int device = 0;
  if (fakecuda::VmmMemoryOf(st, d.handle.fd, &size, &device) < 0) return CUDA_ERROR_UNKNOWN;
  close(d.handle.fd);  // UNMEASURED: taken on success, as for memory (cuda.h)
  DevextModel::Registration r;
  r.kind = DevextModel::Kind::kExternalSemaphore;
  r.device = device;
  *extSem_out = reinterpret_cast<CUexternalSemaphore>(st->devext().Register(r));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuImportExternalSemaphore");
}

CUresult CUDAAPI
cuSignalExternalSemaphoresAsync(const CUexternalSemaphore* extSemArray,
                                const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* paramsArray,
                                unsigned int numExtSems, CUstream stream) try {
  FAKECUDA_ENTER(cuSignalExternalSemaphoresAsync)
  return fakecuda::SemaphoreOps(st, extSemArray, paramsArray, numExtSems, stream,
                                "cuSignalExternalSemaphoresAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuSignalExternalSemaphoresAsync");
}

CUresult CUDAAPI cuWaitExternalSemaphoresAsync(
    const CUexternalSemaphore* extSemArray, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* paramsArray,
    unsigned int numExtSems, CUstream stream) try {
  FAKECUDA_ENTER(cuWaitExternalSemaphoresAsync)
  return fakecuda::SemaphoreOps(st, extSemArray, paramsArray, numExtSems, stream,
                                "cuWaitExternalSemaphoresAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuWaitExternalSemaphoresAsync");
}

CUresult CUDAAPI cuDestroyExternalSemaphore(CUexternalSemaphore extSem) try {
  FAKECUDA_ENTER(cuDestroyExternalSemaphore)
  if (!st->devext().Unregister(DevextModel::Kind::kExternalSemaphore,
                               reinterpret_cast<std::uintptr_t>(extSem))) {
    return CUDA_ERROR_INVALID_HANDLE;  // UNMEASURED
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDestroyExternalSemaphore");
}

// --- graphics interop ---
// No graphics API: no resource exists. Measured before cuInit: CUDA_ERROR_NOT_INITIALIZED for
// every call, but cuGraphicsResourceGetMappedPointer writes its outputs first (the fake: 0).
// After cuInit the real driver crashes (SIGNAL 11) on the probe's first call (a garbage
// resource); the fake's answers are its own: CUDA_ERROR_INVALID_HANDLE for a resource, and
// CUDA_ERROR_INVALID_VALUE for a null resource list (UNMEASURED).

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
  FAKECUDA_ENTER_NOLOCK(cuGraphicsResourceGetMappedPointer)
  if (pDevPtr != nullptr) *pDevPtr = 0;
  if (pSize != nullptr) *pSize = 0;
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
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
