// Copyright 2026 The cuhal Authors.
// Entry points: memory pools and the stream-ordered allocator. Argument checks live here; the
// allocator itself is fakecuda/internal/mem_pool.h (read its invariants first).
#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/race/race_detector.h"
#include "fakecuda/internal/mem_pool.h"
#include "fakecuda/internal/memory_hooks.h"

using fakecuda::Allocation;
using fakecuda::Context;
using fakecuda::DriverState;
using fakecuda::MemoryType;
using fakecuda::MemPool;
using fakecuda::Op;
using fakecuda::PoolModel;
using fakecuda::Stream;
using fakecuda::ValidDevice;

namespace fakecuda {
namespace {

// The stream for a stream-ordered call and its (live, unpoisoned) context. NULL/legacy/per-thread
// need a current context (CUDA_ERROR_INVALID_CONTEXT without one); an explicit stream carries its
// own, so none need be current.
CUresult StreamAndContext(DriverState* st, CUstream handle, Stream** stream, Context** ctx)
    CUHAL_REQUIRES(st->mu) {
  CUresult err;
  *stream = st->ResolveStream(handle, &err);
  if (*stream == nullptr) return err;
  Context* c = st->contexts().Find((*stream)->ctx_id);
  if (c == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (c->sticky != CUDA_SUCCESS) return c->sticky;
  *ctx = c;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) try {
  FAKECUDA_ENTER(cuMemPoolCreate)
  if (pool == nullptr || poolProps == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return PoolModel::Of(st).Create(*poolProps, pool);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolCreate");
}

CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) try {
  FAKECUDA_ENTER(cuMemPoolDestroy)
  PoolModel& model = PoolModel::Of(st);
  MemPool* p = model.Find(pool);
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return model.Destroy(p);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolDestroy");
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) try {
  FAKECUDA_ENTER(cuMemPoolSetAttribute)
  MemPool* p = PoolModel::Of(st).Find(pool);
  if (p == nullptr || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return p->SetAttribute(attr, value);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolSetAttribute");
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) try {
  FAKECUDA_ENTER(cuMemPoolGetAttribute)
  MemPool* p = PoolModel::Of(st).Find(pool);
  if (p == nullptr || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return p->GetAttribute(attr, value);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolGetAttribute");
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) try {
  FAKECUDA_ENTER(cuMemPoolTrimTo)
  PoolModel& model = PoolModel::Of(st);
  MemPool* p = model.Find(pool);
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  model.TrimTo(p, minBytesToKeep);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolTrimTo");
}

CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) try {
  FAKECUDA_ENTER(cuMemPoolSetAccess)
  PoolModel& model = PoolModel::Of(st);
  MemPool* p = model.Find(pool);
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return model.SetAccess(p, map, count);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolSetAccess");
}

CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool,
                                    CUmemLocation* location) try {
  FAKECUDA_ENTER(cuMemPoolGetAccess)
  PoolModel& model = PoolModel::Of(st);
  MemPool* p = model.Find(memPool);
  if (p == nullptr || flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return model.GetAccess(p, *location, flags);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPoolGetAccess");
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemAllocAsync)
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Stream* s = nullptr;
  Context* ctx = nullptr;
  if (CUresult e = fakecuda::StreamAndContext(st, hStream, &s, &ctx); e != CUDA_SUCCESS) return e;
  if (bytesize == 0) {
    *dptr = 0;  // measured: size 0 succeeds with a NULL pointer and allocates nothing
    return CUDA_SUCCESS;
  }
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureAlloc(st, s, bytesize, ctx->device, dptr, &r)) {
    return r;  // a memory alloc node
  }
  // From the pool current to the stream's device.
  PoolModel& model = PoolModel::Of(st);
  MemPool* p = model.CurrentPool(ctx->device);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = model.Allocate(p, s, ctx, bytesize, "cuMemAllocAsync", dptr);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) *dptr = 0;  // measured on the H200: OOM clears *dptr
  return r;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAllocAsync");
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream) try {
  FAKECUDA_ENTER(cuMemAllocFromPoolAsync)
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  PoolModel& model = PoolModel::Of(st);
  MemPool* p = model.Find(pool);
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Stream* s = nullptr;
  Context* ctx = nullptr;
  if (CUresult e = fakecuda::StreamAndContext(st, hStream, &s, &ctx); e != CUDA_SUCCESS) return e;
  if (bytesize == 0) {
    *dptr = 0;  // measured: size 0 succeeds with a NULL pointer and allocates nothing
    return CUDA_SUCCESS;
  }
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureAlloc(st, s, bytesize, p->device(), dptr, &r)) {
    return r;  // a memory alloc node
  }
  // The pool may live on another device than the stream's.
  CUresult r = model.Allocate(p, s, ctx, bytesize, "cuMemAllocFromPoolAsync", dptr);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) *dptr = 0;  // measured on the H200: OOM clears *dptr
  return r;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAllocFromPoolAsync");
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemFreeAsync)
  Stream* s = nullptr;
  Context* ctx = nullptr;
  if (CUresult e = fakecuda::StreamAndContext(st, hStream, &s, &ctx); e != CUDA_SUCCESS) return e;
  if (dptr == 0) return CUDA_SUCCESS;  // measured: freeing NULL does nothing
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureFree(st, s, dptr, &r)) return r;  // a free node
  // Unknown, interior or already freed pointers, host memory and module variables are refused.
  const Allocation* a = st->memory().At(dptr);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // A module variable belongs to its module (UNMEASURED: the real driver's answer).
  if (a->module_global) return CUDA_ERROR_INVALID_VALUE;
  if (a->type == MemoryType::kDevice) {
    // Measured: cuMemAlloc memory is accepted too. It goes away when the stream reaches the
    // free (the op takes the driver lock itself: bodies run with it released).
    Op op;
    op.what = "cuMemFreeAsync";
    const std::uint64_t id = a->id;
    const std::uintptr_t base = a->base;
    op.body = [st, id, base] {
      cuhal::MutexLock body_lock(st->mu);
      const Allocation* found = st->memory().At(base);
      if (found != nullptr && found->id == id) st->ReleaseAllocation(base);
      return CUDA_SUCCESS;
    };
    if (fakecuda::RaceDetector* race = st->race()) {
      race->OnFreeAsync(st, *s, *a, st->streams().next_seq(), "cuMemFreeAsync");
    }
    st->Enqueue(s, std::move(op));
    return fakecuda::TakeRaceVerdict();
  }
  if (a->type != MemoryType::kPool) return CUDA_ERROR_INVALID_VALUE;
  return fakecuda::TakeRaceVerdict(PoolModel::Of(st).FreeAsync(dptr, s, ctx));
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemFreeAsync");
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetDefaultMemPool)
  if (pool_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  MemPool* p = PoolModel::Of(st).DefaultPool(dev);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *pool_out = p->handle();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetDefaultMemPool");
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetMemPool)
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  MemPool* p = PoolModel::Of(st).CurrentPool(dev);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *pool = p->handle();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetMemPool");
}

CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) try {
  FAKECUDA_ENTER(cuDeviceSetMemPool)
  // Measured 2026-12-06 on the H100, driver 580.159.04 (tests/cudart_catalogue/pools.cu, through
  // cudaDeviceSetMemPool(99, pool)): a device ordinal out of range with a valid pool is
  // CUDA_ERROR_INVALID_VALUE, not INVALID_DEVICE: the pool is checked first and it is not
  // resident on that device. (A bad ordinal with a bad pool: INVALID_VALUE too, unmeasured.)
  PoolModel& model = PoolModel::Of(st);
  MemPool* p = model.Find(pool);
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_VALUE;
  return model.SetCurrentPool(dev, p);
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceSetMemPool");
}

}  // extern "C"

namespace fakecuda {

CUresult PoolFreeSync(DriverState* st, CUdeviceptr ptr) CUHAL_REQUIRES(st->mu) {
  const Allocation* a = st->memory().At(ptr);
  if (a == nullptr || a->type != MemoryType::kPool) return CUDA_ERROR_INVALID_VALUE;
  // Like cuMemFree of device memory, it waits for the device to stop using the memory (which
  // also proves the context's earlier stream-ordered frees complete); then the range is truly
  // free at once.
  if (CUresult e = st->SyncAll(a->ctx_id); e != CUDA_SUCCESS) return e;
  a = st->memory().At(ptr);
  if (a == nullptr || a->type != MemoryType::kPool) {
    return CUDA_ERROR_INVALID_VALUE;  // another thread freed it meanwhile
  }
  PoolModel::Of(st).FreeNow(ptr);
  return CUDA_SUCCESS;
}

}  // namespace fakecuda
