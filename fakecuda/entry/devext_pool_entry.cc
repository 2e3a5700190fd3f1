// Copyright 2026 The cuhal Authors.
// Entry points: CUDA 13's location-based pool getters (cuMemGetDefaultMemPool, cuMemGetMemPool,
// cuMemSetMemPool) and memory-pool IPC (cuMemPoolExportToShareableHandle,
// cuMemPoolImportFromShareableHandle, cuMemPoolExportPointer, cuMemPoolImportPointer). The pools
// are fakecuda/internal/mem_pool.h's, which models device pools of pinned memory only: host,
// host-NUMA and managed pools answer CUDA_ERROR_NOT_SUPPORTED here as cuMemPoolCreate does there
// (the H200 has them). An exported pool is a memfd the caller owns, remembered by
// fakecuda/internal/devext_model.h; the fake cannot share a pool with another process (a child's
// import finds no pool). The answers are the real driver's to ci/gpu-probes/devext_probe.cc
// (cases pool:*, measured 2026-12-06 on an H100 80GB HBM3, driver 580.159.04), where measured;
// each other one says UNMEASURED. The real driver crashes (SIGNAL 11) on a garbage pool handle in
// cuMemSetMemPool and cuMemPoolExportToShareableHandle; the fake answers
// CUDA_ERROR_INVALID_VALUE.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/devext_model.h"
#include "fakecuda/internal/mem_pool.h"

using fakecuda::DevextModel;
using fakecuda::DriverState;
using fakecuda::MemPool;
using fakecuda::PoolModel;
using fakecuda::ValidDevice;

namespace fakecuda {
namespace {

// The export data of a pool pointer: a tag, the pool, the allocation and its offset in the pool
// (the rest of the 64 bytes zero).
struct PtrExport {
  std::uint64_t magic;
  std::uint64_t pool_id;
  std::uint64_t allocation_id;
  std::uint64_t offset;
};
constexpr std::uint64_t kPtrExportMagic = 0x66616b65706f6f6cull;  // "fakepool"
static_assert(sizeof(PtrExport) <= sizeof(CUmemPoolPtrExportData));

// How (location, type) names a pool the fake models: the device for a device location of pinned
// memory; otherwise the answer. Measured 2026-12-06 (H100, driver 580.159.04; devext_probe
// "pool:get"): an unknown location type or HOST_NUMA_CURRENT is CUDA_ERROR_NOT_SUPPORTED whatever
// the allocation type; then an allocation type other than PINNED/MANAGED, a device ordinal out of
// range, a host NUMA node that does not exist and NONE with PINNED are CUDA_ERROR_INVALID_VALUE.
// The real driver has default pools for (DEVICE, MANAGED), (HOST or HOST_NUMA, PINNED or
// MANAGED) and (NONE, MANAGED); the fake models device pools of pinned memory only and answers
// CUDA_ERROR_NOT_SUPPORTED for those, as its cuMemPoolCreate does.
CUresult PoolDevice(DriverState* st, const CUmemLocation& location, CUmemAllocationType type,
                    int* device) {
  if (location.type != CU_MEM_LOCATION_TYPE_DEVICE && location.type != CU_MEM_LOCATION_TYPE_HOST &&
      location.type != CU_MEM_LOCATION_TYPE_HOST_NUMA &&
      location.type != CU_MEM_LOCATION_TYPE_NONE) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  const bool pinned = type == CU_MEM_ALLOCATION_TYPE_PINNED;
  const bool managed = type == CU_MEM_ALLOCATION_TYPE_MANAGED;
  if (!pinned && !managed) return CUDA_ERROR_INVALID_VALUE;
  switch (location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (!ValidDevice(st, location.id)) return CUDA_ERROR_INVALID_VALUE;
      if (managed) return CUDA_ERROR_NOT_SUPPORTED;  // managed pools: not modelled
      *device = location.id;
      return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      // The fake's host has one NUMA node, 0 (as the managed-memory locations assume).
      if (location.id != 0) return CUDA_ERROR_INVALID_VALUE;
      return CUDA_ERROR_NOT_SUPPORTED;  // host pools: not modelled
    case CU_MEM_LOCATION_TYPE_HOST:
      return CUDA_ERROR_NOT_SUPPORTED;  // host pools: not modelled
    default:                            // NONE
      return managed ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
  }
}

bool Ipc(const MemPool& p) {
  return (p.props().handleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool* pool_out, CUmemLocation* location,
                                        CUmemAllocationType type) try {
  FAKECUDA_ENTER(cuMemGetDefaultMemPool)
  if (pool_out == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int device = 0;
  if (CUresult e = fakecuda::PoolDevice(st, *location, type, &device); e != CUDA_SUCCESS) {
    return e;
  }
  MemPool* p = PoolModel::Of(st).DefaultPool(device);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *pool_out = p->handle();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetDefaultMemPool");
}

CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location,
                                 CUmemAllocationType type) try {
  FAKECUDA_ENTER(cuMemGetMemPool)
  if (pool == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int device = 0;
  if (CUresult e = fakecuda::PoolDevice(st, *location, type, &device); e != CUDA_SUCCESS) {
    return e;
  }
  MemPool* p = PoolModel::Of(st).CurrentPool(device);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *pool = p->handle();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetMemPool");
}

CUresult CUDAAPI cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type,
                                 CUmemoryPool pool) try {
  FAKECUDA_ENTER(cuMemSetMemPool)
  if (location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  PoolModel& model = PoolModel::Of(st);
  MemPool* p = model.Find(pool);
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int device = 0;
  if (CUresult e = fakecuda::PoolDevice(st, *location, type, &device); e != CUDA_SUCCESS) {
    // Every pool the fake has is a device pool of pinned memory: another location or type does
    // not match it (measured: MANAGED, HOST, device 1 and -1 with a device pool are
    // CUDA_ERROR_INVALID_VALUE).
    return CUDA_ERROR_INVALID_VALUE;
  }
  // The equivalent of cuDeviceSetMemPool(location->id, pool) (cuda.h).
  return model.SetCurrentPool(device, p);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemSetMemPool");
}

CUresult CUDAAPI cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool pool,
                                                  CUmemAllocationHandleType handleType,
                                                  unsigned long long flags) try {
  FAKECUDA_ENTER(cuMemPoolExportToShareableHandle)
  if (handle_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  MemPool* p = PoolModel::Of(st).Find(pool);
  if (p == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !fakecuda::Ipc(*p)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const int fd = memfd_create("fakecuda-mempool", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  struct stat sb {};
  if (fstat(fd, &sb) != 0) {
    close(fd);
    return CUDA_ERROR_OPERATING_SYSTEM;
  }
  st->devext().NoteExport(sb.st_dev, sb.st_ino, p->id());
  *static_cast<int*>(handle_out) = fd;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolExportToShareableHandle");
}

CUresult CUDAAPI cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* handle,
                                                    CUmemAllocationHandleType handleType,
                                                    unsigned long long flags) try {
  FAKECUDA_ENTER(cuMemPoolImportFromShareableHandle)
  if (pool_out == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  const auto fd = static_cast<int>(reinterpret_cast<std::intptr_t>(handle));
  struct stat sb {};
  if (fd < 0 || fstat(fd, &sb) != 0) return CUDA_ERROR_INVALID_VALUE;
  const std::uint64_t id = st->devext().ExportedPool(sb.st_dev, sb.st_ino);
  MemPool* p = id == 0 ? nullptr
                       : PoolModel::Of(st).Find(
                             fakecuda::EncodeHandle<CUmemoryPool>(fakecuda::HandleKind::kPool, id));
  // UNMEASURED: a descriptor of no pool of this process (another process's pool, which the fake
  // cannot reach, or any other file).
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // UNMEASURED: the exporting process importing its own pool gets the pool itself.
  *pool_out = p->handle();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolImportFromShareableHandle");
}

CUresult CUDAAPI cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out,
                                        CUdeviceptr ptr) try {
  FAKECUDA_ENTER(cuMemPoolExportPointer)
  if (shareData_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const fakecuda::Allocation* a = st->memory().At(ptr);
  // UNMEASURED: anything but the base of a live allocation of an IPC pool.
  if (a == nullptr || a->type != fakecuda::MemoryType::kPool) return CUDA_ERROR_INVALID_VALUE;
  MemPool* p = PoolModel::Of(st).Find(
      fakecuda::EncodeHandle<CUmemoryPool>(fakecuda::HandleKind::kPool, a->pool_id));
  if (p == nullptr || !fakecuda::Ipc(*p)) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::PtrExport e{fakecuda::kPtrExportMagic, a->pool_id, a->id, 0};
  std::memset(shareData_out, 0, sizeof *shareData_out);
  std::memcpy(shareData_out, &e, sizeof e);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolExportPointer");
}

CUresult CUDAAPI cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool pool,
                                        CUmemPoolPtrExportData* shareData) try {
  FAKECUDA_ENTER(cuMemPoolImportPointer)
  if (ptr_out == nullptr || shareData == nullptr) return CUDA_ERROR_INVALID_VALUE;
  MemPool* p = PoolModel::Of(st).Find(pool);
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // UNMEASURED: importing into the exporting process (the pool is not an imported one).
  return CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolImportPointer");
}

}  // extern "C"
