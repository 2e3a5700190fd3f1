// Copyright 2026 The cuhal Authors.
// Entry points: the batched memory operations of CUDA 12.8+ (cuMemcpyBatchAsync_v2,
// cuMemcpy3DBatchAsync_v2, cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync,
// cuMemDiscardAndPrefetchBatchAsync, cuMemBatchDecompressAsync). A batch is checked whole before
// any of it is queued; then each copy is queued as cuMemcpyAsync's / cuMemcpy3DAsync's is
// (fakecuda/internal/copy_resolve.h), so the batch runs in stream order and its copies move real
// bytes. Copies with CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL read their source at the call
// (cuda.h: "all accesses must be complete before the API call returns"). Prefetches record the
// last prefetch location as cuMemPrefetchAsync does; discards keep the bytes (their contents
// become undefined, and unchanged is one such content). The answers are the real driver's to
// ci/gpu-probes/devext_probe.cc (cases batch:*, measured 2026-12-06 on an H100 80GB HBM3, driver
// 580.159.04), where measured; each other one says UNMEASURED. The real driver crashes
// (SIGNAL 11) on a garbage stream (prefetch, decompression), CU_STREAM_PER_THREAD
// (cuMemcpyBatchAsync) and a garbage array (cuMemcpy3DBatchAsync); the fake answers as its
// stream and array lookups do.
#include <cstring>
#include <vector>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/array_model.h"
#include "fakecuda/internal/copy_resolve.h"

using fakecuda::Allocation;
using fakecuda::DriverState;
using fakecuda::MemoryType;
using fakecuda::Op;
using fakecuda::Resolved;
using fakecuda::Stream;

namespace fakecuda {
namespace {

bool ValidOrder(CUmemcpySrcAccessOrder o) {
  return o == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
         o == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL || o == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
}

bool ValidCopyFlags(unsigned flags) {
  return (flags & ~static_cast<unsigned>(CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)) == 0;
}

// The legacy NULL stream is refused by the batch calls (cuda.h: "Must not be legacy NULL
// stream"). UNMEASURED: the code.
bool LegacyNull(CUstream s) { return s == nullptr || s == CU_STREAM_LEGACY; }

// The attribute ranges of cuMemcpyBatchAsync (cuda.h): attrsIdxs[0] is 0, increasing, each below
// count, numAttrs <= count. Sets attr_of[i] to the attribute of copy i.
CUresult AttributeRanges(std::size_t count, const CUmemcpyAttributes* attrs,
                         const std::size_t* idxs, std::size_t num, std::vector<std::size_t>* of) {
  if (num == 0 || attrs == nullptr || idxs == nullptr || num > count) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (idxs[0] != 0) return CUDA_ERROR_INVALID_VALUE;
  for (std::size_t k = 1; k < num; ++k) {
    if (idxs[k] <= idxs[k - 1] || idxs[k] >= count) return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured: a location hint of an unknown type is refused even where hints are ignored.
  auto known = [](const CUmemLocation& l) {
    return l.type >= CU_MEM_LOCATION_TYPE_INVALID &&
           l.type <= CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
  };
  for (std::size_t k = 0; k < num; ++k) {
    if (!ValidOrder(attrs[k].srcAccessOrder) || !ValidCopyFlags(attrs[k].flags) ||
        !known(attrs[k].srcLocHint) || !known(attrs[k].dstLocHint)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  of->assign(count, 0);
  for (std::size_t k = 0; k < num; ++k) {
    const std::size_t end = k + 1 < num ? idxs[k + 1] : count;
    for (std::size_t i = idxs[k]; i < end; ++i) (*of)[i] = k;
  }
  return CUDA_SUCCESS;
}

CUresult MemcpyBatch(DriverState* st, CUdeviceptr* dsts, CUdeviceptr* srcs, std::size_t* sizes,
                     std::size_t count, CUmemcpyAttributes* attrs, std::size_t* idxs,
                     std::size_t num, CUstream hStream, const char* what) CUHAL_REQUIRES(st->mu) {
  std::vector<std::size_t> attr_of;
  if (CUresult e = AttributeRanges(count, attrs, idxs, num, &attr_of); e != CUDA_SUCCESS) {
    return e;
  }
  if (LegacyNull(hStream)) return CUDA_ERROR_INVALID_VALUE;
  // A capturing stream records a memcpy node per copy (UNMEASURED: the real driver's node kind).
  bool captured = false;
  for (std::size_t i = 0; i < count; ++i) {
    CUresult r = CUDA_SUCCESS;
    if (!CaptureCopy(st, hStream, CU_MEMORYTYPE_UNIFIED, dsts[i], CU_MEMORYTYPE_UNIFIED, srcs[i],
                     sizes[i], &r)) {
      break;
    }
    captured = true;
    if (r != CUDA_SUCCESS) return r;
  }
  if (captured) return CUDA_SUCCESS;
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  CUresult err;
  Stream* stream = st->ResolveStream(hStream, &err);
  if (stream == nullptr) return err;
  std::vector<Resolved> d(count), s(count);
  for (std::size_t i = 0; i < count; ++i) {
    // Measured: a copy of 0 bytes, a null pointer and a range past its allocation are
    // CUDA_ERROR_INVALID_VALUE. An unknown address is too, here: the real driver took a garbage
    // destination (CUDA_SUCCESS), which the fake cannot write.
    if (sizes[i] == 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult e = ResolveAny(st, dsts[i], sizes[i], &d[i], kWrite); e != CUDA_SUCCESS) return e;
    if (CUresult e = ResolveAny(st, srcs[i], sizes[i], &s[i]); e != CUDA_SUCCESS) return e;
    if (attrs[attr_of[i]].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) {
      s[i].allocation = nullptr;  // read now: EnqueueCopy stages what it sees as pageable
    }
  }
  const std::uint64_t id = stream->id;
  for (std::size_t i = 0; i < count; ++i) {
    Stream* cur = st->FindStream(id);
    if (cur == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // destroyed by a host function meanwhile
    if (CUresult e = EnqueueCopy(st, cur, d[i], s[i], sizes[i], false, what); e != CUDA_SUCCESS) {
      return e;
    }
  }
  return CUDA_SUCCESS;
}

// A pointer operand of cuMemcpy3DBatchAsync as a side of CUDA_MEMCPY3D (elements of `elem`
// bytes; rowLength / layerHeight 0: packed by the extent).
struct Side {
  CUmemorytype type = CU_MEMORYTYPE_UNIFIED;
  CUdeviceptr ptr = 0;
  CUarray array = nullptr;
  std::size_t x_bytes = 0, y = 0, z = 0, pitch = 0, height = 0;
};

CUresult SideOf(const CUmemcpy3DOperand& o, const CUextent3D& e, std::size_t elem, Side* out) {
  if (o.type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
    const std::size_t row = o.op.ptr.rowLength;
    const std::size_t layer = o.op.ptr.layerHeight;
    if ((row != 0 && row < e.width) || (layer != 0 && layer < e.height)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    out->type = CU_MEMORYTYPE_UNIFIED;
    out->ptr = o.op.ptr.ptr;
    out->pitch = (row == 0 ? e.width : row) * elem;
    out->height = layer == 0 ? e.height : layer;
    return CUDA_SUCCESS;
  }
  if (o.type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
    out->type = CU_MEMORYTYPE_ARRAY;
    out->array = o.op.array.array;
    out->x_bytes = o.op.array.offset.x * elem;
    out->y = o.op.array.offset.y;
    out->z = o.op.array.offset.z;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult Memcpy3DBatch(DriverState* st, std::size_t n, CUDA_MEMCPY3D_BATCH_OP* ops,
                       unsigned long long flags, CUstream hStream, const char* what)
    CUHAL_REQUIRES(st->mu) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (LegacyNull(hStream)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<CUDA_MEMCPY3D> copies(n);
  for (std::size_t i = 0; i < n; ++i) {
    const CUDA_MEMCPY3D_BATCH_OP& op = ops[i];
    if (op.extent.width == 0 || op.extent.height == 0 || op.extent.depth == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!ValidOrder(op.srcAccessOrder) || !ValidCopyFlags(op.flags)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // The element: 1 byte between pointers, else the array's (an unknown array: 1, and
    // cuMemcpy3DAsync's checks refuse it).
    std::size_t elem = 1;
    for (const CUmemcpy3DOperand* o : {&op.src, &op.dst}) {
      if (o->type != CU_MEMCPY_OPERAND_TYPE_ARRAY) continue;
      if (const ArrayRecord* a = st->arrays().Find(o->op.array.array)) elem = a->element_size;
    }
    Side s, d;
    if (CUresult e = SideOf(op.src, op.extent, elem, &s); e != CUDA_SUCCESS) return e;
    if (CUresult e = SideOf(op.dst, op.extent, elem, &d); e != CUDA_SUCCESS) return e;
    CUDA_MEMCPY3D& c = copies[i];
    std::memset(&c, 0, sizeof c);
    c.srcMemoryType = s.type;
    c.srcDevice = s.ptr;
    c.srcArray = s.array;
    c.srcXInBytes = s.x_bytes;
    c.srcY = s.y;
    c.srcZ = s.z;
    c.srcPitch = s.pitch;
    c.srcHeight = s.height;
    c.dstMemoryType = d.type;
    c.dstDevice = d.ptr;
    c.dstArray = d.array;
    c.dstXInBytes = d.x_bytes;
    c.dstY = d.y;
    c.dstZ = d.z;
    c.dstPitch = d.pitch;
    c.dstHeight = d.height;
    c.WidthInBytes = op.extent.width * elem;
    c.Height = op.extent.height;
    c.Depth = op.extent.depth;
  }
  // UNMEASURED: each copy is checked as it is queued, so a bad copy after good ones leaves the
  // good ones queued.
  for (const CUDA_MEMCPY3D& c : copies) {
    if (CUresult e = Copy3DAsync(st, c, hStream, what); e != CUDA_SUCCESS) return e;
  }
  return CUDA_SUCCESS;
}

// A prefetch location as the managed-memory advice keeps it (as cuMemPrefetchAsync's:
// fakecuda/entry/managed_entry.cc): HOST reads back as -1.
bool PrefetchLocation(const DriverState& st, const CUmemLocation& loc, int* type, int* id,
                      CUresult* err) {
  switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      // Measured: CUDA_ERROR_INVALID_VALUE (cuMemPrefetchAsync answers INVALID_DEVICE).
      if (loc.id < 0 || loc.id >= st.device_count()) {
        *err = CUDA_ERROR_INVALID_VALUE;
        return false;
      }
      *type = CU_MEM_LOCATION_TYPE_DEVICE;
      *id = loc.id;
      return true;
    case CU_MEM_LOCATION_TYPE_HOST:
      *type = CU_MEM_LOCATION_TYPE_HOST;
      *id = -1;
      return true;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      if (loc.id < 0) break;
      *type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
      *id = loc.id;
      return true;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      *type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
      *id = 0;
      return true;
    default:
      break;
  }
  *err = CUDA_ERROR_INVALID_VALUE;
  return false;
}

// cuMemPrefetchBatchAsync / cuMemDiscardBatchAsync / cuMemDiscardAndPrefetchBatchAsync: with
// `prefetch`, the locations apply in ranges as cuMemcpyBatchAsync's attributes do.
CUresult PrefetchDiscardBatch(DriverState* st, CUdeviceptr* ptrs, std::size_t* sizes,
                              std::size_t count, CUmemLocation* locs, std::size_t* idxs,
                              std::size_t num, unsigned long long flags, CUstream hStream,
                              bool prefetch, const char* what) CUHAL_REQUIRES(st->mu) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (LegacyNull(hStream)) return CUDA_ERROR_INVALID_VALUE;  // measured for the prefetches
  std::vector<std::size_t> loc_of(count, 0);
  if (prefetch) {
    if (num == 0 || locs == nullptr || idxs == nullptr || num > count || idxs[0] != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    for (std::size_t k = 1; k < num; ++k) {
      if (idxs[k] <= idxs[k - 1] || idxs[k] >= count) return CUDA_ERROR_INVALID_VALUE;
    }
    for (std::size_t k = 0; k < num; ++k) {
      const std::size_t end = k + 1 < num ? idxs[k + 1] : count;
      for (std::size_t i = idxs[k]; i < end; ++i) loc_of[i] = k;
    }
  }
  std::vector<Allocation*> found(count);
  std::vector<std::pair<int, int>> where(count);
  for (std::size_t i = 0; i < count; ++i) {
    // UNMEASURED: anything but a range of managed memory.
    Allocation* a = st->FindAllocation(ptrs[i], sizes[i]);
    if (sizes[i] == 0 || a == nullptr || a->type != MemoryType::kManaged) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    found[i] = a;
    if (prefetch) {
      CUresult bad = CUDA_ERROR_INVALID_VALUE;
      if (!PrefetchLocation(*st, locs[loc_of[i]], &where[i].first, &where[i].second, &bad)) {
        return bad;
      }
    }
  }
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  if (CUresult r = CUDA_SUCCESS; CaptureRefuse(st, s, &r)) return r;  // modelling, UNMEASURED
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < count; ++i) {
    bytes += sizes[i];
    if (prefetch) {
      found[i]->advice.prefetch_type = where[i].first;
      found[i]->advice.prefetch_id = where[i].second;
    }
  }
  Op op;
  op.what = what;
  op.cost_us = DriverState::CopyCostUs(prefetch ? bytes : 0, false);
  st->Enqueue(s, std::move(op));
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes,
                                    size_t count, CUmemcpyAttributes* attrs, size_t* attrsIdxs,
                                    size_t numAttrs, CUstream hStream) try {
  FAKECUDA_ENTER_NOLOCK(cuMemcpyBatchAsync)
  // Measured: the arrays are checked before cuInit.
  if (count == 0 || dsts == nullptr || srcs == nullptr || sizes == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return fakecuda::MemcpyBatch(st, dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream,
                               "cuMemcpyBatchAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyBatchAsync");
}

CUresult CUDAAPI cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList,
                                      unsigned long long flags, CUstream hStream) try {
  FAKECUDA_ENTER_NOLOCK(cuMemcpy3DBatchAsync)
  if (numOps == 0 || opList == nullptr) return CUDA_ERROR_INVALID_VALUE;  // before cuInit
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return fakecuda::Memcpy3DBatch(st, numOps, opList, flags, hStream, "cuMemcpy3DBatchAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy3DBatchAsync");
}

CUresult CUDAAPI cuMemPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                         CUmemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                         size_t numPrefetchLocs, unsigned long long flags,
                                         CUstream hStream) try {
  FAKECUDA_ENTER_NOLOCK(cuMemPrefetchBatchAsync)
  if (count == 0 || dptrs == nullptr || sizes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return fakecuda::PrefetchDiscardBatch(st, dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,
                                        numPrefetchLocs, flags, hStream, true,
                                        "cuMemPrefetchBatchAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPrefetchBatchAsync");
}

CUresult CUDAAPI cuMemDiscardBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                        unsigned long long flags, CUstream hStream) try {
  FAKECUDA_ENTER_NOLOCK(cuMemDiscardBatchAsync)
  if (count == 0 || dptrs == nullptr || sizes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return fakecuda::PrefetchDiscardBatch(st, dptrs, sizes, count, nullptr, nullptr, 0, flags,
                                        hStream, false, "cuMemDiscardBatchAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemDiscardBatchAsync");
}

CUresult CUDAAPI cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                                   CUmemLocation* prefetchLocs,
                                                   size_t* prefetchLocIdxs, size_t numPrefetchLocs,
                                                   unsigned long long flags, CUstream hStream) try {
  FAKECUDA_ENTER_NOLOCK(cuMemDiscardAndPrefetchBatchAsync)
  if (count == 0 || dptrs == nullptr || sizes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return fakecuda::PrefetchDiscardBatch(st, dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,
                                        numPrefetchLocs, flags, hStream, true,
                                        "cuMemDiscardAndPrefetchBatchAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemDiscardAndPrefetchBatchAsync");
}

CUresult CUDAAPI cuMemBatchDecompressAsync(CUmemDecompressParams* paramsArray, size_t count,
                                           unsigned int flags, size_t* errorIndex,
                                           CUstream stream) try {
  FAKECUDA_ENTER(cuMemBatchDecompressAsync)
  (void)paramsArray;
  (void)count;
  (void)flags;
  (void)errorIndex;
  (void)stream;
  // Measured: no decompression engine (CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK 0):
  // CUDA_ERROR_NOT_SUPPORTED whatever the arguments, after cuInit.
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemBatchDecompressAsync");
}

}  // extern "C"
