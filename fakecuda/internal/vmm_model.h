// Copyright 2026 The cuhal Authors.
// The fake driver's virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap,
// cuMemSetAccess and the handle calls): physical allocations, reserved virtual address ranges,
// the mappings between them and their access flags. Every answer follows the H200 (driver 580,
// ci/gpu-probes/results/2026-12-04-probe-vmm.txt; docs/driver_facts.md, "Virtual memory
// management (VMM)").
//
// Invariants:
//  1. Physical memory is a memfd of the allocation's size (a POSIX file descriptor export is a
//     dup of it; an import finds the memory by the descriptor's inode). Device-located memory is
//     charged to its device's budget (Device::bytes_in_use) from cuMemCreate until the last
//     handle on it goes; imports share it and charge nothing more.
//  2. All VMM virtual addresses lie in one region [kVaBase, kVaBase + region size) whose host
//     view is one contiguous mmap made on first use; device address kVaBase + x is host address
//     region + x. A mapping maps the memfd there (MAP_SHARED|MAP_FIXED), so two mappings of one
//     handle, or of a handle and its import, share bytes, and a copy that spans adjacent mappings
//     is one contiguous host range. An unmapped range is replaced by fresh anonymous memory,
//     never left inaccessible: work queued before an unmap that still runs touches junk, never
//     faults the process (it answers CUDA_ERROR_ILLEGAL_ADDRESS instead, see VmmAccess).
//  3. A handle object lives while it has references (cuMemCreate/import 1, each
//     cuMemRetainAllocationHandle 1, each cuMemRelease -1) or mappings: as on the H200, releasing
//     a mapped handle keeps the memory, and the handle value still answers until the last unmap.
//     Handle values encode a never-reused id (DriverState invariant 2); the H200 reuses the value
//     of a destroyed handle and crashes on a bogus one, the fake answers CUDA_ERROR_INVALID_VALUE.
//  4. Every mapping is also an Allocation of type kVmm in the MemoryMap (base = its address,
//     data = its host view), so pointer lookups of the rest of the fake find it; the model adds
//     and removes those entries itself and is the only owner of their records.
//
// Ownership: one per DriverState, created on first use (DriverState::vmm()); owns the region,
// the memfds and the records. Thread-safety: none of its own; every method requires
// DriverState::mu held: the private helpers that reach the driver say so
// (CUHAL_REQUIRES(st_->mu)), the public methods, reached only through DriverState::vmm() (which
// requires it), assert it for the analysis. VmmAccess objects are shared with queued work, which
// reads them without the lock (atomics). Stream ordering: none; like the real driver,
// cuMemUnmap and cuMemSetAccess do not wait for queued work (measured: it then faults).
#ifndef CUHAL_FAKECUDA_INTERNAL_VMM_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_VMM_MODEL_H_

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

// The access flags of one mapping, per device, as queued work reads them when it runs.
struct VmmAccess {
  explicit VmmAccess(int devices) : flags(static_cast<std::size_t>(devices)) {}
  std::vector<std::atomic<unsigned>> flags;  // CU_MEM_ACCESS_FLAGS_PROT_*, by device ordinal
  std::atomic<bool> mapped{true};            // false once unmapped
  // Whether `device` may access the mapping with `need` (1 read, 3 read-write).
  bool Allows(int device, unsigned need) const {
    if (!mapped.load(std::memory_order_acquire)) return false;
    if (device < 0 || static_cast<std::size_t>(device) >= flags.size()) return false;
    return (flags[static_cast<std::size_t>(device)].load(std::memory_order_acquire) & need) == need;
  }
};

// What a memory access through VMM addresses resolved to.
struct VmmSpan {
  std::byte* data = nullptr;
  std::vector<std::shared_ptr<const VmmAccess>> guards;  // one per mapping touched
};

class VmmModel {
 public:
  // Measured on the H200: 2 MiB for every property, minimum and recommended.
  static constexpr std::size_t kGranularity = std::size_t{2} << 20;
  // Fake device addresses of VMM reservations (above every device's cuMemAlloc range).
  static constexpr std::uintptr_t kVaBase = std::uintptr_t{1} << 54;
  // The most one reservation may take: the H200 reserved 2^40 bytes and refused 2^47.
  static constexpr std::size_t kMaxReservation = std::size_t{1} << 46;

  explicit VmmModel(DriverState* st);
  ~VmmModel();
  VmmModel(const VmmModel&) = delete;             // owns the region and memfds
  VmmModel& operator=(const VmmModel&) = delete;  // ditto

  // The entry points' bodies, after their null checks. Each returns what the H200 returns.
  CUresult Create(const CUmemAllocationProp& prop, std::size_t size, unsigned long long flags,
                  CUmemGenericAllocationHandle* out);
  CUresult Release(CUmemGenericAllocationHandle handle);
  CUresult Properties(CUmemGenericAllocationHandle handle, CUmemAllocationProp* out) const;
  // The size of a live handle's memory, or 0 (cuMemMapArrayAsync's bounds, legacy_entry.cc).
  std::size_t HandleSize(CUmemGenericAllocationHandle handle) const;
  CUresult Reserve(std::size_t size, std::size_t alignment, CUdeviceptr hint,
                   unsigned long long flags, CUdeviceptr* out);
  CUresult Free(CUdeviceptr ptr, std::size_t size);
  CUresult Map(CUdeviceptr va, std::size_t size, std::size_t offset,
               CUmemGenericAllocationHandle handle, unsigned long long flags);
  CUresult Unmap(CUdeviceptr va, std::size_t size);
  CUresult SetAccess(CUdeviceptr va, std::size_t size, const CUmemAccessDesc* desc,
                     std::size_t count);
  CUresult GetAccess(unsigned long long* flags, const CUmemLocation& location,
                     CUdeviceptr ptr) const;
  CUresult Retain(CUmemGenericAllocationHandle* out, std::uintptr_t addr);
  CUresult Export(void* out, CUmemGenericAllocationHandle handle,
                  CUmemAllocationHandleType type, unsigned long long flags) const;
  CUresult Import(CUmemGenericAllocationHandle* out, void* os_handle,
                  CUmemAllocationHandleType type);
  // The memfd of the live memory whose descriptor has identity (st_dev, st_ino) (an exported
  // descriptor names its memory's memfd), with its size and device; -1 when none. Owned by the
  // model: dup it to keep it.
  int MemoryDescriptor(std::uint64_t st_dev, std::uint64_t st_ino, std::size_t* size,
                       int* device) const;

  // Resolves [ptr, ptr + size) for an access by `device` needing `need` (1 read, 3 write): every
  // byte must lie in mappings that are contiguous and allow it. False when not.
  bool Resolve(std::uintptr_t ptr, std::size_t size, int device, unsigned need,
               VmmSpan* out) const;
  // cuPointerGetAttribute for an address inside a mapping (`device`: the current context's).
  CUresult PointerAttribute(void* data, CUpointer_attribute attribute, std::uintptr_t ptr,
                            int device) const;
  // cuMemGetAddressRange for an address inside a mapping.
  CUresult AddressRange(CUdeviceptr* base, std::size_t* size, std::uintptr_t ptr,
                        int device) const;

  void CountLive(Inventory* inv) const;
  std::string Describe() const;

 private:
  struct Memory;   // a memfd of physical memory (invariant 1)
  struct Handle {  // a CUmemGenericAllocationHandle (invariant 3)
    std::uint64_t id = 0;
    CUmemAllocationProp prop{};
    std::size_t size = 0;
    std::shared_ptr<Memory> memory;
    int refs = 1;
    int mappings = 0;
    const char* created_by = "";
  };
  struct Mapping {
    std::uintptr_t va = 0;
    std::size_t size = 0;
    std::uint64_t handle_id = 0;
    std::uintptr_t reservation = 0;  // base of the reservation its start lies in
    std::uint64_t buffer_id = 0;
    std::shared_ptr<VmmAccess> access;
  };

  Handle* FindHandle(CUmemGenericAllocationHandle handle);
  const Handle* FindHandle(CUmemGenericAllocationHandle handle) const;
  CUmemGenericAllocationHandle HandleValue(std::uint64_t id) const;
  // The reservation containing `ptr` (its base), or 0.
  std::uintptr_t ReservationOf(std::uintptr_t ptr) const;
  // The mapping containing `ptr`, or null.
  const Mapping* MappingAt(std::uintptr_t ptr) const;
  // The end of a reservation or mapping that overlaps [va, va + size), or 0 when none does.
  std::uintptr_t OverlapEnd(std::uintptr_t va, std::size_t size) const;
  // Makes the host view on first use (invariant 2); false when no region could be mapped.
  bool EnsureRegion();
  std::byte* HostOf(std::uintptr_t va) const { return region_ + (va - kVaBase); }
  // Drops a handle whose references and mappings are gone; refunds its device's budget when
  // it held the last reference to its memory.
  void MaybeDestroy(std::uint64_t id) CUHAL_REQUIRES(st_->mu);
  CUmemGenericAllocationHandle AddHandle(const CUmemAllocationProp& prop, std::size_t size,
                                         std::shared_ptr<Memory> memory, const char* created_by)
      CUHAL_REQUIRES(st_->mu);

  DriverState* const st_;
  std::byte* region_ = nullptr;
  std::size_t region_size_ = 0;
  std::map<std::uint64_t, Handle> handles_;
  std::map<std::uintptr_t, std::size_t> reservations_;  // base -> size
  std::map<std::uintptr_t, Mapping> mappings_;           // va -> mapping
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_VMM_MODEL_H_
