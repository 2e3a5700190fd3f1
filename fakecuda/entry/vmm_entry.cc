// Copyright 2026 The cuhal Authors.
// Entry points: virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap,
// cuMemSetAccess and the handle calls). Null out-pointers are checked here; the model is
// fakecuda/internal/vmm_model.h (read its invariants first). Measured on the H200: none of these
// needs a current context (they work with none), all need cuInit, and none is refused by a
// context's sticky error.
#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/vmm_model.h"

using fakecuda::VmmModel;

extern "C" {

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t* granularity,
                                               const CUmemAllocationProp* prop,
                                               CUmemAllocationGranularity_flags option) try {
  FAKECUDA_ENTER(cuMemGetAllocationGranularity)
  if (granularity == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured: 2 MiB whatever the property holds (even an invalid location or type); only the
  // option is checked.
  if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
      option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *granularity = VmmModel::kGranularity;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetAllocationGranularity");
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                             const CUmemAllocationProp* prop, unsigned long long flags) try {
  FAKECUDA_ENTER(cuMemCreate)
  if (handle == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->vmm().Create(*prop, size, flags, handle);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemCreate");
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) try {
  FAKECUDA_ENTER(cuMemRelease)
  return st->vmm().Release(handle);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemRelease");
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                        CUmemGenericAllocationHandle handle) try {
  FAKECUDA_ENTER(cuMemGetAllocationPropertiesFromHandle)
  if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->vmm().Properties(handle, prop);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetAllocationPropertiesFromHandle");
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment,
                                     CUdeviceptr addr, unsigned long long flags) try {
  FAKECUDA_ENTER(cuMemAddressReserve)
  if (ptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->vmm().Reserve(size, alignment, addr, flags, ptr);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAddressReserve");
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) try {
  FAKECUDA_ENTER(cuMemAddressFree)
  return st->vmm().Free(ptr, size);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAddressFree");
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                          CUmemGenericAllocationHandle handle, unsigned long long flags) try {
  FAKECUDA_ENTER(cuMemMap)
  return st->vmm().Map(ptr, size, offset, handle, flags);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemMap");
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) try {
  FAKECUDA_ENTER(cuMemUnmap)
  // Does not wait for queued work that uses the range (measured: that work then faults, with a
  // sticky CUDA_ERROR_ILLEGAL_ADDRESS).
  return st->vmm().Unmap(ptr, size);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemUnmap");
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                                size_t count) try {
  FAKECUDA_ENTER(cuMemSetAccess)
  if (desc == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
  return st->vmm().SetAccess(ptr, size, desc, count);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemSetAccess");
}

CUresult CUDAAPI cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location,
                                CUdeviceptr ptr) try {
  FAKECUDA_ENTER(cuMemGetAccess)
  if (flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->vmm().GetAccess(flags, *location, ptr);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetAccess");
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle,
                                             void* addr) try {
  FAKECUDA_ENTER(cuMemRetainAllocationHandle)
  if (handle == nullptr || addr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->vmm().Retain(handle, reinterpret_cast<std::uintptr_t>(addr));
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemRetainAllocationHandle");
}

CUresult CUDAAPI cuMemExportToShareableHandle(void* shareableHandle,
                                              CUmemGenericAllocationHandle handle,
                                              CUmemAllocationHandleType handleType,
                                              unsigned long long flags) try {
  FAKECUDA_ENTER(cuMemExportToShareableHandle)
  if (shareableHandle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->vmm().Export(shareableHandle, handle, handleType, flags);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemExportToShareableHandle");
}

CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle,
                                                void* osHandle,
                                                CUmemAllocationHandleType shHandleType) try {
  FAKECUDA_ENTER(cuMemImportFromShareableHandle)
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->vmm().Import(handle, osHandle, shHandleType);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemImportFromShareableHandle");
}

}  // extern "C"
