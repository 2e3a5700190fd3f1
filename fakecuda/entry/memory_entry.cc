// Copyright 2026 The cuhal Authors.
// Entry points: device, pinned, registered and managed memory; copies; memsets. (Pointer
// attributes: pointer_entry.cc; managed-memory advice and range attributes: managed_entry.cc.)
#include <algorithm>
#include <cstring>
#include <vector>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/copy_resolve.h"
#include "fakecuda/internal/engine_access.h"
#include "fakecuda/internal/memory_hooks.h"
#include "fakecuda/internal/vmm_model.h"
#include "fakecuda/race/race_detector.h"

using fakecuda::Allocation;
using fakecuda::Context;
using fakecuda::DriverState;
using fakecuda::MemoryType;
using fakecuda::Op;
using fakecuda::Stream;

namespace fakecuda {

// Resolves a pointer the device may access (device, pool, pinned, registered, managed memory,
// and VMM mappings the current context's device may access with `need`, also across adjacent
// mappings; measured: anything else, or a range reaching past them, is CUDA_ERROR_INVALID_VALUE,
// with nothing moved).
CUresult ResolveDevice(DriverState* st, std::uintptr_t ptr, std::size_t size, Resolved* out,
                       unsigned need) {
  Allocation* a = st->FindAllocation(ptr, 1);
  if (a == nullptr && size == 0 && ptr != 0) {
    // Measured (differential fuzzer, H100 driver 580.159.04, 2026-12-06; 0-byte cuMemcpyDtoH,
    // cuMemcpyHtoD and cuMemsetD8Async, 91 calls): a transfer of 0 bytes at the address one past
    // the end of an allocation succeeds (and moves nothing).
    Allocation* before = st->FindAllocation(ptr - 1, 1);
    if (before != nullptr && before->type != MemoryType::kVmm &&
        before->base + before->size == ptr) {
      out->allocation = before;
      out->data = before->data + before->size;
      return CUDA_SUCCESS;
    }
  }
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (a->type == MemoryType::kVmm) {
    const Context* ctx = st->CurrentContext();
    const int device = ctx != nullptr ? ctx->device : 0;
    if (!st->vmm().Resolve(ptr, size, device, need, &out->vmm)) return CUDA_ERROR_INVALID_VALUE;
    out->allocation = a;
    out->data = out->vmm.data;
    out->vmm_device = device;
    out->vmm_need = need;
    return CUDA_SUCCESS;
  }
  if (size > a->size - (ptr - a->base)) return CUDA_ERROR_INVALID_VALUE;
  out->allocation = a;
  out->data = a->data + (ptr - a->base);
  return CUDA_SUCCESS;
}

// Whether the VMM mappings `r` touches still allow its access (checked when queued work runs).
bool StillAccessible(const Resolved& r) {
  for (const auto& g : r.vmm.guards) {
    if (!g->Allows(r.vmm_device, r.vmm_need)) return false;
  }
  return true;
}

// Resolves a pointer the host passes as host memory: known host allocations are bounds-checked,
// anything else below the device range is pageable memory the fake cannot check (as the real
// driver cannot). Device addresses are rejected.
CUresult ResolveHost(DriverState* st, const void* p, std::size_t size, Resolved* out) {
  auto ptr = reinterpret_cast<std::uintptr_t>(p);
  if (p == nullptr && size == 0) {
    // Measured (differential fuzzer, H100 driver 580.159.04, 2026-12-06; 22 calls): a 0-byte
    // cuMemcpyHtoD from a null host pointer succeeds.
    out->allocation = nullptr;
    out->data = nullptr;
    return CUDA_SUCCESS;
  }
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (Allocation* a = st->FindAllocation(ptr, 1)) {
    if (a->type == MemoryType::kDevice || a->type == MemoryType::kPool ||
        a->type == MemoryType::kVmm) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (size > a->size - (ptr - a->base)) return CUDA_ERROR_INVALID_VALUE;
    out->allocation = a;
    out->data = a->data + (ptr - a->base);
    return CUDA_SUCCESS;
  }
  if (ptr >= kDeviceVaBase) return CUDA_ERROR_INVALID_VALUE;
  out->allocation = nullptr;
  out->data = static_cast<std::byte*>(const_cast<void*>(p));
  return CUDA_SUCCESS;
}

// Unified addressing (cuMemcpy, cuMemcpyAsync): either kind.
CUresult ResolveAny(DriverState* st, std::uintptr_t ptr, std::size_t size, Resolved* out,
                    unsigned need) {
  if (ptr >= kDeviceVaBase) return ResolveDevice(st, ptr, size, out, need);
  return ResolveHost(st, reinterpret_cast<const void*>(ptr), size, out);
}

bool IsPageable(const Resolved& r) { return r.allocation == nullptr; }

bool DeviceSide(const Resolved& r) {
  return r.allocation != nullptr &&
         (r.allocation->type == MemoryType::kDevice || r.allocation->type == MemoryType::kPool ||
          r.allocation->type == MemoryType::kVmm);
}

// Queues a copy on `s`. A pageable source is staged at call time and a pageable destination
// makes the call wait for the copy, as the real driver does; otherwise the bytes move when the
// op runs (so unsynchronized readers see stale data under the adversarial policy).
CUresult EnqueueCopy(DriverState* st, Stream* s, Resolved dst, Resolved src, std::size_t n,
                     bool synchronous, const char* what) CUHAL_REQUIRES(st->mu) {
  if (n == 0) return CUDA_SUCCESS;
  Op op;
  op.what = what;
  op.cost_us = DriverState::CopyCostUs(n, DeviceSide(dst) && DeviceSide(src));
  std::byte* d = dst.data;
  // VMM memory unmapped (or made inaccessible) before the op runs: a fault, sticky.
  std::shared_ptr<std::pair<Resolved, Resolved>> guards;
  const bool vmm = !dst.vmm.guards.empty() || !src.vmm.guards.empty();
  if (vmm) {
    guards = std::make_shared<std::pair<Resolved, Resolved>>();
    guards->first.vmm = dst.vmm;
    guards->first.vmm_device = dst.vmm_device;
    guards->first.vmm_need = dst.vmm_need;
    guards->second.vmm = src.vmm;
    guards->second.vmm_device = src.vmm_device;
    guards->second.vmm_need = src.vmm_need;
  }
  if (IsPageable(src)) {
    auto staged = std::make_shared<std::vector<std::byte>>(src.data, src.data + n);
    op.body = [d, staged, guards, vmm] {
      if (vmm && (!StillAccessible(guards->first) || !StillAccessible(guards->second))) {
        return CUDA_ERROR_ILLEGAL_ADDRESS;
      }
      EngineMove(d, staged->data(), staged->size());
      return CUDA_SUCCESS;
    };
  } else {
    std::byte* from = src.data;
    op.body = [d, from, n, guards, vmm] {
      if (vmm && (!StillAccessible(guards->first) || !StillAccessible(guards->second))) {
        return CUDA_ERROR_ILLEGAL_ADDRESS;
      }
      EngineMove(d, from, n);
      return CUDA_SUCCESS;
    };
  }
  if (st->race() != nullptr) {
    for (const auto& [r, write] : {std::pair{dst, true}, std::pair{src, false}}) {
      if (r.allocation == nullptr) continue;  // pageable: staged or waited for at the call
      op.accesses.push_back(
          {r.allocation->base + static_cast<std::uintptr_t>(r.data - r.allocation->data), n, write});
    }
  }
  // Enqueue may run the op and reap a destroyed stream: read nothing of `s` after it.
  const std::uint64_t id = s->id;
  std::uint64_t seq = st->Enqueue(s, std::move(op));
  if (synchronous || IsPageable(dst)) {
    if (Stream* cur = st->FindStream(id)) return TakeRaceVerdict(st->SyncStream(cur, seq));
  }
  return TakeRaceVerdict();
}

CUresult EnqueueFill(DriverState* st, Stream* s, std::uintptr_t dst, unsigned value,
                     std::size_t elem, std::size_t width, std::size_t height, std::size_t step,
                     bool synchronous, const char* what) CUHAL_REQUIRES(st->mu) {
  const std::size_t row = width * elem;
  const std::size_t span = row == 0 || height == 0 ? 0 : (height - 1) * step + row;
  Resolved r;
  if (CUresult e = ResolveDevice(st, dst, span, &r, kWrite); e != CUDA_SUCCESS) return e;
  if (span == 0) return CUDA_SUCCESS;
  Op op;
  op.what = what;
  op.cost_us = DriverState::MemsetCostUs(row * height);
  std::byte* d = r.data;
  std::shared_ptr<Resolved> guard;
  if (!r.vmm.guards.empty()) {
    guard = std::make_shared<Resolved>();
    guard->vmm = r.vmm;
    guard->vmm_device = r.vmm_device;
    guard->vmm_need = r.vmm_need;
  }
  op.body = [d, value, elem, width, height, step, guard] {
    if (guard != nullptr && !StillAccessible(*guard)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    for (std::size_t y = 0; y < height; ++y) EngineFill(d + y * step, value, elem, width);
    return CUDA_SUCCESS;
  };
  if (st->race() != nullptr) {
    for (std::size_t y = 0; y < height; ++y) op.accesses.push_back({dst + y * step, row, true});
  }
  // Enqueue may run the op and reap a destroyed stream: read nothing of `s` after it.
  const std::uint64_t id = s->id;
  const std::uint64_t seq = st->Enqueue(s, std::move(op));
  if (synchronous) {
    if (Stream* cur = st->FindStream(id)) return TakeRaceVerdict(st->SyncStream(cur, seq));
  }
  return TakeRaceVerdict();
}

CUresult EnqueueMemset(DriverState* st, Stream* s, std::uintptr_t dst, unsigned value,
                       std::size_t elem, std::size_t count, bool synchronous, const char* what)
    CUHAL_REQUIRES(st->mu) {
  if (dst % elem != 0) return CUDA_ERROR_INVALID_VALUE;
  return EnqueueFill(st, s, dst, value, elem, count, 1, count * elem, synchronous, what);
}

CUresult AllocateDevice(DriverState* st, const Context& ctx, std::size_t bytesize,
                        CUdeviceptr* dptr, const char* what) CUHAL_REQUIRES(st->mu) {
  fakecuda::Device& d = st->device(ctx.device);
  if (bytesize > d.profile.total_memory - std::min(d.bytes_in_use, d.profile.total_memory)) {
    *dptr = 0;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  Allocation a;
  a.data = MemoryMap::AllocateBacking(bytesize, &a.mmapped, &a.mapped_size);
  if (a.data == nullptr) {
    *dptr = 0;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a.id = st->NewId();
  a.type = MemoryType::kDevice;
  a.base = st->ReserveVa(ctx.device, bytesize);
  a.size = bytesize;
  a.device = ctx.device;
  a.ctx_id = ctx.id;
  a.created_by = what;
  *dptr = a.base;
  st->AddDeviceAllocation(std::move(a));
  return CUDA_SUCCESS;
}

CUresult HostAlloc(DriverState* st, void** pp, std::size_t bytesize, unsigned flags,
                   const char* what) CUHAL_REQUIRES(st->mu) {
  if (CUresult r = CaptureCheckUnsafe(st, true); r != CUDA_SUCCESS) return r;  // modelling
  if (pp == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  if (bytesize == 0) {
    *pp = nullptr;
    return CUDA_SUCCESS;
  }
  Allocation a;
  a.data = MemoryMap::AllocateBacking(bytesize, &a.mmapped, &a.mapped_size);
  if (a.data == nullptr) {
    *pp = nullptr;  // measured on the H200: a failed cuMemHostAlloc clears *pp
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a.id = st->NewId();
  a.type = MemoryType::kPinnedHost;
  a.base = reinterpret_cast<std::uintptr_t>(a.data);
  a.size = bytesize;
  a.device = ctx->device;
  a.ctx_id = ctx->id;
  // Measured (differential fuzzer, H200, 2026-12-06): cuMemHostGetFlags reports
  // CU_MEMHOSTALLOC_DEVICEMAP on every pinned allocation (mapping is always on with unified
  // addressing). PORTABLE is the bit of the allocation that opened its chunk (PinnedChunks).
  const fakecuda::PinnedChunks::Placement place = st->pinned_chunks().Place(bytesize, flags);
  a.pinned_chunk = place.chunk;
  a.pinned_offset = place.offset;
  a.flags = (flags & ~unsigned{CU_MEMHOSTALLOC_PORTABLE}) | CU_MEMHOSTALLOC_DEVICEMAP |
            (place.portable ? unsigned{CU_MEMHOSTALLOC_PORTABLE} : 0u);
  a.created_by = what;
  *pp = a.data;
  st->memory().Add(std::move(a));
  return CUDA_SUCCESS;
}

}  // namespace fakecuda

using fakecuda::MemoryMap;
using fakecuda::Resolved;

extern "C" {

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) try {
  FAKECUDA_ENTER(cuMemAlloc)
  if (CUresult r = fakecuda::CaptureCheckUnsafe(st, true); r != CUDA_SUCCESS) return r;
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured on the H200 (ci/gpu-probes, case "outparams"): a size-0 request and an
  // out-of-memory failure both write 0 to *dptr.
  if (bytesize == 0) {
    *dptr = 0;
    return CUDA_ERROR_INVALID_VALUE;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  return fakecuda::AllocateDevice(st, *ctx, bytesize, dptr, "cuMemAlloc");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAlloc");
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) try {
  FAKECUDA_ENTER(cuMemFree)
  if (CUresult r = fakecuda::CaptureCheckUnsafe(st, true); r != CUDA_SUCCESS) return r;
  FAKECUDA_REQUIRE_CONTEXT()
  if (dptr == 0) return CUDA_SUCCESS;
  const Allocation* a = st->memory().At(dptr);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // A module variable belongs to its module (measured on driver 580: CUDA_ERROR_INVALID_VALUE).
  if (a->module_global) return CUDA_ERROR_INVALID_VALUE;
  if (a->type == MemoryType::kPool) {
    return fakecuda::PoolFreeSync(st, dptr);
  }
  if (a->type != MemoryType::kDevice && a->type != MemoryType::kManaged) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // cuMemFree waits for the device to stop using the memory.
  if (CUresult e = st->SyncAll(a->ctx_id); e != CUDA_SUCCESS) return e;
  // SyncAll released the lock: another thread may have freed it meanwhile.
  if (st->memory().At(dptr) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  st->ReleaseAllocation(dptr);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemFree");
}

CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) try {
  FAKECUDA_ENTER(cuMemGetInfo)
  // Either output may be NULL, even both (measured on the H200, driver 580).
  FAKECUDA_REQUIRE_CONTEXT()
  const fakecuda::Device& d = st->device(ctx->device);
  if (total != nullptr) *total = d.profile.total_memory;
  if (free != nullptr) {
    *free = d.profile.total_memory - std::min(d.bytes_in_use, d.profile.total_memory);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetInfo");
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) try {
  FAKECUDA_ENTER(cuMemGetAddressRange)
  FAKECUDA_REQUIRE_CONTEXT()
  Allocation* a = st->FindAllocation(dptr, 1);
  if (a == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (a->type == MemoryType::kVmm) return st->vmm().AddressRange(pbase, psize, dptr, ctx->device);
  if (pbase != nullptr) *pbase = a->base;
  if (psize != nullptr) *psize = a->size;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemGetAddressRange");
}

CUresult CUDAAPI cuMemAllocHost(void** pp, size_t bytesize) try {
  FAKECUDA_ENTER(cuMemAllocHost)
  return fakecuda::HostAlloc(st, pp, bytesize, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP,
                             "cuMemAllocHost");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAllocHost");
}

CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) try {
  FAKECUDA_ENTER(cuMemHostAlloc)
  constexpr unsigned kKnown =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if (Flags & ~kKnown) {
    // Measured (differential fuzzer, H200, 2026-12-06): unknown flags clear *pp too.
    if (pp != nullptr) *pp = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  return fakecuda::HostAlloc(st, pp, bytesize, Flags, "cuMemHostAlloc");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemHostAlloc");
}

CUresult CUDAAPI cuMemFreeHost(void* p) try {
  FAKECUDA_ENTER(cuMemFreeHost)
  FAKECUDA_REQUIRE_CONTEXT()
  if (p == nullptr) return CUDA_SUCCESS;
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  const Allocation* a = st->memory().At(base);
  if (a == nullptr || a->type != MemoryType::kPinnedHost) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = st->SyncAll(a->ctx_id); e != CUDA_SUCCESS) return e;
  if (st->memory().At(base) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  st->ReleaseAllocation(base);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemFreeHost");
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr* pdptr, void* p, unsigned int Flags) try {
  FAKECUDA_ENTER(cuMemHostGetDevicePointer)
  if (pdptr == nullptr || p == nullptr || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  Allocation* a = st->FindAllocation(reinterpret_cast<std::uintptr_t>(p), 1);
  if (a == nullptr ||
      (a->type != MemoryType::kPinnedHost && a->type != MemoryType::kRegisteredHost)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pdptr = reinterpret_cast<CUdeviceptr>(p);  // unified addressing: the same address
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemHostGetDevicePointer");
}

CUresult CUDAAPI cuMemHostGetFlags(unsigned int* pFlags, void* p) try {
  FAKECUDA_ENTER(cuMemHostGetFlags)
  if (pFlags == nullptr || p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  Allocation* a = st->FindAllocation(reinterpret_cast<std::uintptr_t>(p), 1);
  if (a == nullptr ||
      (a->type != MemoryType::kPinnedHost && a->type != MemoryType::kRegisteredHost)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured (tests/cudart_catalogue memory.cu, H100, driver 580.159.04, 2026-12-06): memory
  // registered with no flags reads CU_MEMHOSTREGISTER_DEVICEMAP (0x2), with PORTABLE|DEVICEMAP
  // 0x3: mapping is always on with unified addressing, as for pinned allocations. UNMEASURED:
  // IOMEMORY and READ_ONLY are reported as given.
  *pFlags =
      a->type == MemoryType::kRegisteredHost ? a->flags | CU_MEMHOSTREGISTER_DEVICEMAP : a->flags;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemHostGetFlags");
}

CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) try {
  FAKECUDA_ENTER(cuMemHostRegister)
  constexpr unsigned kKnown = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                              CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
  if (p == nullptr || bytesize == 0 || (Flags & ~kKnown)) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  auto base = reinterpret_cast<std::uintptr_t>(p);
  if (base >= fakecuda::kDeviceVaBase) return CUDA_ERROR_INVALID_VALUE;
  // Any overlap with registered or pinned memory is refused.
  if (st->memory().Overlaps(base, bytesize)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  Allocation a;
  a.id = st->NewId();
  a.type = MemoryType::kRegisteredHost;
  a.base = base;
  a.size = bytesize;
  a.data = static_cast<std::byte*>(p);
  a.device = ctx->device;
  a.ctx_id = ctx->id;
  a.flags = Flags;
  a.created_by = "cuMemHostRegister";
  st->memory().Add(std::move(a));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemHostRegister");
}

CUresult CUDAAPI cuMemHostUnregister(void* p) try {
  FAKECUDA_ENTER(cuMemHostUnregister)
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  const Allocation* a = st->memory().At(base);
  if (a == nullptr || a->type != MemoryType::kRegisteredHost) {
    // Measured (cuda-python's test_cudart_hostRegister through the runtime, H100, driver
    // 580.159.04): an address inside a registered range but not its start is
    // CUDA_ERROR_INVALID_VALUE; one in no registered range, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED.
    const Allocation* inside = st->FindAllocation(base, 1);
    if (inside != nullptr && inside->type == MemoryType::kRegisteredHost) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  if (CUresult e = st->SyncAll(a->ctx_id); e != CUDA_SUCCESS) return e;
  st->ReleaseAllocation(base);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemHostUnregister");
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) try {
  FAKECUDA_ENTER(cuMemAllocManaged)
  if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  Allocation a;
  a.data = MemoryMap::AllocateBacking(bytesize, &a.mmapped, &a.mapped_size);
  if (a.data == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  a.id = st->NewId();
  a.type = MemoryType::kManaged;
  a.base = reinterpret_cast<std::uintptr_t>(a.data);
  a.size = bytesize;
  a.device = ctx->device;
  a.ctx_id = ctx->id;
  a.flags = flags;
  a.created_by = "cuMemAllocManaged";
  *dptr = a.base;
  st->memory().Add(std::move(a));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAllocManaged");
}

// --- copies ---

#define FAKECUDA_STREAM_OR_RETURN(var, handle)   \
  CUresult var##_err;                            \
  Stream* var = st->ResolveStream(handle, &var##_err); \
  if (var == nullptr) return var##_err;

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpy)
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveAny(st, dst, ByteCount, &d, fakecuda::kWrite); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveAny(st, src, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, CU_STREAM_LEGACY)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, true, "cuMemcpy");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy");
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                               CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpyAsync)
  if (CUresult r = CUDA_SUCCESS;
      fakecuda::CaptureCopy(st, hStream, CU_MEMORYTYPE_UNIFIED, dst,
                            CU_MEMORYTYPE_UNIFIED, src, ByteCount, &r)) {
    return r;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveAny(st, dst, ByteCount, &d, fakecuda::kWrite); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveAny(st, src, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, hStream)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, false, "cuMemcpyAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyAsync");
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyHtoD)
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveDevice(st, dstDevice, ByteCount, &d, fakecuda::kWrite); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveHost(st, srcHost, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, CU_STREAM_LEGACY)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, true, "cuMemcpyHtoD");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyHtoD");
}

CUresult CUDAAPI cuMemcpyDtoH(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyDtoH)
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveHost(st, dstHost, ByteCount, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveDevice(st, srcDevice, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, CU_STREAM_LEGACY)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, true, "cuMemcpyDtoH");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyDtoH");
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyDtoD)
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveDevice(st, dstDevice, ByteCount, &d, fakecuda::kWrite); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveDevice(st, srcDevice, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, CU_STREAM_LEGACY)
  // Device-to-device copies are asynchronous with respect to the host, even this one.
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, false, "cuMemcpyDtoD");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyDtoD");
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount,
                                   CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpyHtoDAsync)
  if (CUresult r = CUDA_SUCCESS;
      fakecuda::CaptureCopy(st, hStream, CU_MEMORYTYPE_DEVICE, dstDevice,
                            CU_MEMORYTYPE_HOST, reinterpret_cast<std::uintptr_t>(srcHost),
                            ByteCount, &r)) {
    return r;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveDevice(st, dstDevice, ByteCount, &d, fakecuda::kWrite); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveHost(st, srcHost, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, hStream)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, false, "cuMemcpyHtoDAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyHtoDAsync");
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                   CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpyDtoHAsync)
  if (CUresult r = CUDA_SUCCESS;
      fakecuda::CaptureCopy(st, hStream, CU_MEMORYTYPE_HOST,
                            reinterpret_cast<std::uintptr_t>(dstHost), CU_MEMORYTYPE_DEVICE,
                            srcDevice, ByteCount, &r)) {
    return r;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveHost(st, dstHost, ByteCount, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveDevice(st, srcDevice, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, hStream)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, false, "cuMemcpyDtoHAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyDtoHAsync");
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                   CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpyDtoDAsync)
  if (CUresult r = CUDA_SUCCESS;
      fakecuda::CaptureCopy(st, hStream, CU_MEMORYTYPE_DEVICE, dstDevice,
                            CU_MEMORYTYPE_DEVICE, srcDevice, ByteCount, &r)) {
    return r;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveDevice(st, dstDevice, ByteCount, &d, fakecuda::kWrite); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveDevice(st, srcDevice, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, hStream)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, false, "cuMemcpyDtoDAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyDtoDAsync");
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyPeer)
  if (st->FindContext(dstContext) == nullptr || st->FindContext(srcContext) == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveDevice(st, dstDevice, ByteCount, &d, fakecuda::kWrite); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveDevice(st, srcDevice, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, CU_STREAM_LEGACY)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, true, "cuMemcpyPeer");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyPeer");
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
                                   CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
                                   CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpyPeerAsync)
  if (CUresult r = CUDA_SUCCESS;
      fakecuda::CaptureCopy(st, hStream, CU_MEMORYTYPE_UNIFIED, dstDevice,
                            CU_MEMORYTYPE_UNIFIED, srcDevice, ByteCount, &r)) {
    return r;
  }
  if (st->FindContext(dstContext) == nullptr || st->FindContext(srcContext) == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  Resolved d, s;
  if (CUresult e = fakecuda::ResolveDevice(st, dstDevice, ByteCount, &d, fakecuda::kWrite); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ResolveDevice(st, srcDevice, ByteCount, &s); e != CUDA_SUCCESS) return e;
  FAKECUDA_STREAM_OR_RETURN(stream, hStream)
  return fakecuda::EnqueueCopy(st, stream, d, s, ByteCount, false, "cuMemcpyPeerAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyPeerAsync");
}

// --- memsets ---

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N) try {
  FAKECUDA_ENTER(cuMemsetD8)
  FAKECUDA_REQUIRE_CONTEXT()
  FAKECUDA_STREAM_OR_RETURN(stream, CU_STREAM_LEGACY)
  return fakecuda::EnqueueMemset(st, stream, dstDevice, uc, 1, N, true, "cuMemsetD8");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD8");
}

CUresult CUDAAPI cuMemsetD16(CUdeviceptr dstDevice, unsigned short us, size_t N) try {
  FAKECUDA_ENTER(cuMemsetD16)
  FAKECUDA_REQUIRE_CONTEXT()
  FAKECUDA_STREAM_OR_RETURN(stream, CU_STREAM_LEGACY)
  return fakecuda::EnqueueMemset(st, stream, dstDevice, us, 2, N, true, "cuMemsetD16");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD16");
}

CUresult CUDAAPI cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N) try {
  FAKECUDA_ENTER(cuMemsetD32)
  FAKECUDA_REQUIRE_CONTEXT()
  FAKECUDA_STREAM_OR_RETURN(stream, CU_STREAM_LEGACY)
  return fakecuda::EnqueueMemset(st, stream, dstDevice, ui, 4, N, true, "cuMemsetD32");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD32");
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                 CUstream hStream) try {
  FAKECUDA_ENTER(cuMemsetD8Async)
  if (CUresult r = CUDA_SUCCESS;
      fakecuda::CaptureMemset(st, hStream, dstDevice, uc, 1, N, &r)) {
    return r;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  FAKECUDA_STREAM_OR_RETURN(stream, hStream)
  return fakecuda::EnqueueMemset(st, stream, dstDevice, uc, 1, N, false, "cuMemsetD8Async");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD8Async");
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
                                  CUstream hStream) try {
  FAKECUDA_ENTER(cuMemsetD16Async)
  if (CUresult r = CUDA_SUCCESS;
      fakecuda::CaptureMemset(st, hStream, dstDevice, us, 2, N, &r)) {
    return r;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  FAKECUDA_STREAM_OR_RETURN(stream, hStream)
  return fakecuda::EnqueueMemset(st, stream, dstDevice, us, 2, N, false, "cuMemsetD16Async");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD16Async");
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                  CUstream hStream) try {
  FAKECUDA_ENTER(cuMemsetD32Async)
  if (CUresult r = CUDA_SUCCESS;
      fakecuda::CaptureMemset(st, hStream, dstDevice, ui, 4, N, &r)) {
    return r;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  FAKECUDA_STREAM_OR_RETURN(stream, hStream)
  return fakecuda::EnqueueMemset(st, stream, dstDevice, ui, 4, N, false, "cuMemsetD32Async");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD32Async");
}

}  // extern "C"
