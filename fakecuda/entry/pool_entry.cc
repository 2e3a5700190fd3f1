// Copyright 2026 The cuhal Authors.
// PLACEHOLDER: not modelled yet; every entry answers CUDA_ERROR_NOT_SUPPORTED.
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/memory_hooks.h"

extern "C" {

CUresult CUDAAPI cuMemPoolCreate([[maybe_unused]] CUmemoryPool *pool, [[maybe_unused]] const CUmemPoolProps *poolProps) {
  FAKECUDA_ENTER(cuMemPoolCreate)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemPoolDestroy([[maybe_unused]] CUmemoryPool pool) {
  FAKECUDA_ENTER(cuMemPoolDestroy)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemPoolSetAttribute([[maybe_unused]] CUmemoryPool pool, [[maybe_unused]] CUmemPool_attribute attr, [[maybe_unused]] void *value) {
  FAKECUDA_ENTER(cuMemPoolSetAttribute)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemPoolGetAttribute([[maybe_unused]] CUmemoryPool pool, [[maybe_unused]] CUmemPool_attribute attr, [[maybe_unused]] void *value) {
  FAKECUDA_ENTER(cuMemPoolGetAttribute)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemPoolTrimTo([[maybe_unused]] CUmemoryPool pool, [[maybe_unused]] size_t minBytesToKeep) {
  FAKECUDA_ENTER(cuMemPoolTrimTo)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemPoolSetAccess([[maybe_unused]] CUmemoryPool pool, [[maybe_unused]] const CUmemAccessDesc *map, [[maybe_unused]] size_t count) {
  FAKECUDA_ENTER(cuMemPoolSetAccess)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemPoolGetAccess([[maybe_unused]] CUmemAccess_flags *flags, [[maybe_unused]] CUmemoryPool memPool, [[maybe_unused]] CUmemLocation *location) {
  FAKECUDA_ENTER(cuMemPoolGetAccess)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemAllocAsync([[maybe_unused]] CUdeviceptr *dptr, [[maybe_unused]] size_t bytesize, [[maybe_unused]] CUstream hStream) {
  FAKECUDA_ENTER(cuMemAllocAsync)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemAllocFromPoolAsync([[maybe_unused]] CUdeviceptr *dptr, [[maybe_unused]] size_t bytesize, [[maybe_unused]] CUmemoryPool pool, [[maybe_unused]] CUstream hStream) {
  FAKECUDA_ENTER(cuMemAllocFromPoolAsync)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemFreeAsync([[maybe_unused]] CUdeviceptr dptr, [[maybe_unused]] CUstream hStream) {
  FAKECUDA_ENTER(cuMemFreeAsync)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool([[maybe_unused]] CUmemoryPool *pool_out, [[maybe_unused]] CUdevice dev) {
  FAKECUDA_ENTER(cuDeviceGetDefaultMemPool)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuDeviceGetMemPool([[maybe_unused]] CUmemoryPool *pool, [[maybe_unused]] CUdevice dev) {
  FAKECUDA_ENTER(cuDeviceGetMemPool)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuDeviceSetMemPool([[maybe_unused]] CUdevice dev, [[maybe_unused]] CUmemoryPool pool) {
  FAKECUDA_ENTER(cuDeviceSetMemPool)
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"

namespace fakecuda {
CUresult PoolFreeSync(DriverState*, CUdeviceptr, std::unique_lock<std::mutex>&) {
  return CUDA_ERROR_NOT_SUPPORTED;
}
}  // namespace fakecuda
