// Copyright 2026 The cuhal Authors.
// The fake driver's memory map: every live allocation (cuMemAlloc, pinned and registered host
// memory, managed memory, module variables, pool allocations), by base address, and the host
// backing of the ones it owns.
//
// Invariants:
//  1. Allocations never overlap; each is keyed by its base address. Lookups of an interior
//     pointer find the allocation containing it (Find).
//  2. The map owns the host backing of device, pinned-host and managed allocations (and module
//     variables, which are device allocations); it never frees registered host memory (the
//     user's), pool allocations (their backing belongs to the pool's span, mem_pool.h) or VMM
//     mappings (their memory belongs to the VMM model, vmm_model.h).
//  3. It knows nothing of devices: the device-memory accounting (Device::bytes_in_use) is done
//     by its owner, DriverState::ReleaseAllocation, which is the only way memory leaves while
//     the driver runs.
#ifndef CUHAL_FAKECUDA_INTERNAL_MEMORY_MAP_H_
#define CUHAL_FAKECUDA_INTERNAL_MEMORY_MAP_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace fakecuda {

// kVmm: one cuMemMap mapping (fakecuda/internal/vmm_model.h owns its record and its memory).
enum class MemoryType { kDevice, kPinnedHost, kRegisteredHost, kManaged, kPool, kVmm };

// A managed allocation's cuMemAdvise and cuMemPrefetchAsync state, as cuMemRangeGetAttribute
// reports it (fakecuda/entry/managed_entry.cc). Locations are kept as CUmemLocation's fields
// (type: 0 none, 1 device, 2 host, 3 host NUMA node, 4 current thread's NUMA node; id: the
// device ordinal, the NUMA node, or -1 for the host), none being {0, -2}. The real driver keeps
// this per page; the fake keeps it per allocation (advice on part of one applies to all of it).
struct ManagedAdvice {
  bool read_mostly = false;
  int preferred_type = 0;
  int preferred_id = -2;
  std::uint64_t accessed_by_devices = 0;  // bit d: SET_ACCESSED_BY device d (d < 64)
  bool accessed_by_host = false;
  int prefetch_type = 0;
  int prefetch_id = -2;
};

struct Allocation {
  std::uint64_t id = 0;
  MemoryType type = MemoryType::kDevice;
  std::uintptr_t base = 0;  // device VA (device/pool) or host address (host/managed)
  std::size_t size = 0;
  std::byte* data = nullptr;  // host backing
  bool mmapped = false;
  std::size_t mapped_size = 0;
  int device = 0;
  std::uint64_t ctx_id = 0;
  unsigned flags = 0;
  std::uint64_t pool_id = 0;
  // A module variable (cuModuleGetGlobal): device memory owned by its module, released when the
  // module is unloaded; cuMemFree and cuMemFreeAsync refuse it (it is not cuMemAlloc memory).
  bool module_global = false;
  // kPinnedHost from cuMemHostAlloc/cuMemAllocHost: its place among the driver's pinned chunks
  // (fakecuda/internal/pinned_chunks.h; chunk 0: none).
  std::uint64_t pinned_chunk = 0;
  std::uint64_t pinned_offset = 0;
  // cuPointerSetAttribute(SYNC_MEMOPS): -1 until set (reads as the kind's default: 1 for
  // device, managed and pool memory, 0 for host memory; fakecuda/entry/pointer_entry.cc).
  std::int8_t sync_memops = -1;
  ManagedAdvice advice;    // kManaged only
  std::string created_by;  // entry point, for leak reports
};

// The live allocations of one fake driver.
//
// Ownership: one per DriverState, held privately by it (DriverState::memory()); owns the backing
// of invariant 2. Thread-safety: none of its own; every use is under DriverState::mu, which the
// accessor requires (CUHAL_REQUIRES(mu), checked by the thread-safety preset). Stream ordering:
// none here; callers free memory only once the device is done with it (cuMemFree synchronizes,
// cuMemFreeAsync queues the release as stream work).
class MemoryMap {
 public:
  using Map = std::map<std::uintptr_t, Allocation>;
  using Node = Map::node_type;

  MemoryMap() = default;
  ~MemoryMap();                                     // frees the backing it still owns
  MemoryMap(const MemoryMap&) = delete;             // owns host backing
  MemoryMap& operator=(const MemoryMap&) = delete;  // ditto

  // The allocation whose base is exactly `base`, or null.
  Allocation* At(std::uintptr_t base);
  const Allocation* At(std::uintptr_t base) const;
  // The allocation containing [ptr, ptr + size), or null.
  Allocation* Find(std::uintptr_t ptr, std::size_t size = 1);
  // Whether [base, base + size) overlaps a live allocation.
  bool Overlaps(std::uintptr_t base, std::size_t size) const;

  // Adds `a` at a.base (which must not overlap a live allocation).
  void Add(Allocation a);
  // Node-level insertion and removal, so the pool allocator's hot path reuses map nodes.
  void Add(Node node);
  Node Extract(std::uintptr_t base);
  // Forgets the allocation at `base` without touching its backing (pool allocations).
  void Forget(std::uintptr_t base);
  // Removes the allocation at `base` and frees the backing it owns (invariant 2). Nothing
  // happens when there is none.
  void Release(std::uintptr_t base);

  // Read-only view, in address order (inventories, leak reports, teardown).
  const Map& all() const { return map_; }

  // Host backing for device memory: lazily committed (mmap) when large, so the whole of a
  // fake H200's memory can be allocated if little of it is touched.
  static std::byte* AllocateBacking(std::size_t size, bool* mmapped, std::size_t* mapped_size);
  static void FreeBacking(std::byte* data, bool mmapped, std::size_t mapped_size);

 private:
  static void FreeOwnedBacking(const Allocation& a);

  Map map_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_MEMORY_MAP_H_
