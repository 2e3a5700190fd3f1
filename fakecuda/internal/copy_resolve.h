// Copyright 2026 The cuhal Authors.
// How a copy's endpoints resolve to host bytes: the helpers of the linear copies
// (fakecuda/entry/memory_entry.cc, where they are defined), shared with the copies that have
// array or pitched endpoints (fakecuda/entry/array_entry.cc).
//
// Functions only; every one requires DriverState::mu held (the pointers they return stay valid
// while the allocation lives; queued work that outlives the call checks VMM access again with
// StillAccessible). No stream-ordering rule of its own.
#ifndef CUHAL_FAKECUDA_INTERNAL_COPY_RESOLVE_H_
#define CUHAL_FAKECUDA_INTERNAL_COPY_RESOLVE_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/vmm_model.h"

namespace fakecuda {

// Addresses at or above this are fake device addresses (never host memory).
constexpr std::uintptr_t kDeviceVaBase = std::uintptr_t{1} << 48;

// How a copy or memset uses the bytes it resolves (VMM access flags, vmm_model.h).
constexpr unsigned kRead = CU_MEM_ACCESS_FLAGS_PROT_READ;
constexpr unsigned kWrite = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

// Where the bytes of [ptr, ptr+size) live on the host.
struct Resolved {
  std::byte* data = nullptr;
  Allocation* allocation = nullptr;  // null for pageable host memory
  // VMM memory: the access of each mapping touched, checked again when the work runs (an unmap
  // or an access change in between makes it fail with CUDA_ERROR_ILLEGAL_ADDRESS, as on the
  // H200), for the current context's device and the access needed.
  VmmSpan vmm;
  int vmm_device = 0;
  unsigned vmm_need = 0;
};

// Resolves a pointer the device may access (device, pool, pinned, registered, managed memory,
// and VMM mappings the current context's device may access with `need`, also across adjacent
// mappings; measured: anything else, or a range reaching past them, is CUDA_ERROR_INVALID_VALUE,
// with nothing moved).
CUresult ResolveDevice(DriverState* st, std::uintptr_t ptr, std::size_t size, Resolved* out,
                       unsigned need = kRead) CUHAL_REQUIRES(st->mu);
// Resolves a pointer the host passes as host memory: known host allocations are bounds-checked,
// anything else below the device range is pageable memory the fake cannot check (as the real
// driver cannot). Device addresses are rejected.
CUresult ResolveHost(DriverState* st, const void* p, std::size_t size, Resolved* out)
    CUHAL_REQUIRES(st->mu);
// Unified addressing (cuMemcpy, cuMemcpyAsync): either kind.
CUresult ResolveAny(DriverState* st, std::uintptr_t ptr, std::size_t size, Resolved* out,
                    unsigned need = kRead) CUHAL_REQUIRES(st->mu);
// Whether the VMM mappings `r` touches still allow its access (checked when queued work runs).
bool StillAccessible(const Resolved& r);
// Pageable host memory (no allocation the fake knows).
bool IsPageable(const Resolved& r);
// Device, pool or VMM memory.
bool DeviceSide(const Resolved& r);

// Queues a copy of `n` bytes from `src` to `dst` on `s` (fakecuda/entry/memory_entry.cc): a
// pageable source is staged at the call, a pageable destination (or `synchronous`) makes the call
// wait for it.
CUresult EnqueueCopy(DriverState* st, Stream* s, Resolved dst, Resolved src, std::size_t n,
                     bool synchronous, const char* what) CUHAL_REQUIRES(st->mu);
// cuMemcpy3DAsync's body for `c` on `stream` (fakecuda/entry/array_entry.cc), for the batched
// 3D copies: the current context, the structure, capture and the copy itself.
CUresult Copy3DAsync(DriverState* st, const CUDA_MEMCPY3D& c, CUstream stream, const char* what)
    CUHAL_REQUIRES(st->mu);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_COPY_RESOLVE_H_
