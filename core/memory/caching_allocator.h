// Copyright 2026 The cuhal Authors.
// CachingAllocator: a stream-ordered caching allocator of device-local memory (PyTorch's
// CUDACachingAllocator's design): segments from cuMemAlloc, carved into blocks by best fit with
// splitting and coalescing, cached per stream, so that an allocation or a free that hits the
// cache makes no driver call and no heap allocation. The design and its invariants are written
// at the top of caching_allocator.cc.
#ifndef CUHAL_CORE_MEMORY_CACHING_ALLOCATOR_H_
#define CUHAL_CORE_MEMORY_CACHING_ALLOCATOR_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "core/base/mutex.h"
#include "core/base/status_or.h"
#include "core/driver/driver.h"
#include "core/memory/allocator.h"
#include "core/symbols/cuda_api.h"

namespace cuhal {

struct CachingAllocatorParams {
  // Cached (free) segment bytes kept when the allocator gives memory back (Trim, and after a
  // driver allocation failed); UINT64_MAX keeps everything until Trim, which then gives back
  // every idle segment (so does the out-of-memory retry).
  std::uint64_t release_threshold = std::numeric_limits<std::uint64_t>::max();
  // Expandable segments (PyTorch's expandable_segments:True, with fewer driver calls): instead
  // of a cuMemAlloc per segment, one virtual range per size class (cuMemAddressReserve of the
  // device's memory size) that grows at its end and shrinks from its end. A request that fits no
  // free block maps what it lacks (rounded up to the VMM granularity, merging with a free block
  // that ends the range) as ONE physical allocation: one cuMemCreate, one cuMemMap and one
  // cuMemSetAccess per growth whatever its size (on the H200 these calls cost tens of
  // microseconds each for one 2 MiB granule: docs/driver_facts.md; PyTorch makes them per
  // granule), so memory is not stranded in fixed-size segments (bench/traces/
  // simulate_segments.py: random_mixed 1.358x -> 1.197x reserved over used) and a range grows
  // about as often as classic segments are allocated. Memory goes back by whole growths at the
  // end of a range. Without the VMM entry points in the table, or on a device without
  // CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, the allocator uses classic segments
  // (CacheStatistics().expandable says which).
  bool expandable_segments = false;
  // Expandable segments: the least a growth of the large range maps (rounded up to the VMM
  // granularity; the small range, requests of at most 1 MiB, grows by what it lacks); 0 maps
  // exactly what the request lacks. More means fewer growths (driver calls) for more memory
  // held; how much more is workload-dependent and not monotonic (bench/traces/
  // simulate_segments.py --min-growth-mib shows it per trace). Ignored by classic segments.
  std::uint64_t expandable_min_growth = 0;
};

struct CachingAllocatorStatistics {
  std::uint64_t reserved_current = 0, reserved_high = 0;  // segment bytes held from the driver
  std::uint64_t used_current = 0, used_high = 0;          // live requested bytes
  std::uint64_t segments_current = 0;
  std::uint64_t driver_allocations = 0, driver_frees = 0;  // cuMemAlloc / cuMemFree calls made
  std::uint64_t event_records = 0, stream_waits = 0, event_queries = 0,
                stream_synchronizations = 0;
  std::uint64_t cache_hits = 0, cache_misses = 0;
  // Expandable segments in use (CachingAllocatorParams::expandable_segments, and the driver
  // supports them; decided at the first growth). driver_allocations and driver_frees then count
  // cuMemCreate and cuMemRelease calls (one per growth), vmm_maps and vmm_unmaps the cuMemMap and
  // cuMemUnmap calls (one per growth, and one per growth given back).
  bool expandable = false;
  std::uint64_t vmm_maps = 0, vmm_unmaps = 0;
};

namespace caching_internal {
struct Block;
struct Segment;
struct StreamCache;
}  // namespace caching_internal

// Device-local buffers of one device, from a cache of driver segments.
//
//   device-local, AllocateOnStream(params with a pool, size, stream) / ReleaseOnStream(buffer,
//                 stream): blocks carved from cached segments in `stream`'s order; no driver
//                 call and no heap allocation when the cache has a fitting block;
//   device-local, Allocate (with or without a pool): memory ready on every stream at once, from
//                 blocks the host has observed idle (freed by a Buffer's destruction, or whose
//                 stream-ordered free an event query or a synchronization showed complete), or a
//                 fresh segment;
//   other heaps:  UNIMPLEMENTED (use CudaAllocator).
//
// Stream-ordering rule: a block freed in stream S's order is reused at once by allocations on
// S. Another stream T gets it only (a) after the allocator recorded an event on S behind the
// free and made T wait for it (cuStreamWaitEvent: no host wait), or (b) once the host observed
// the free complete (a cuEventQuery that returned CUDA_SUCCESS, or a cuStreamSynchronize the
// allocator made); never otherwise. The caller's part is the usual one: a buffer freed on S must
// not be used afterwards by work that S is not ordered behind (free it on the last stream that
// uses it, or make that stream wait first). A stream that has freed blocks must stay alive until
// the allocator has forgotten it: ForgetStream(stream), Trim, or the allocator's destruction.
//
// Ownership: owned by its Device or by whoever created it; borrows the table and the context
// (the caller keeps its retain), which must outlive it; owns its segments and its events, and
// destroying it synchronizes the streams with cached frees and frees every segment and event
// (a failure goes to ReportDroppedStatus). It must outlive every Buffer it made; destroying it
// with live buffers reports FAILED_PRECONDITION (Allocator's rule).
// Thread-safety: every public method may be called from any thread; one mutex guards the cache.
// Driver calls of the slow paths (growing, giving back, cross-stream hand-over) are made with
// the mutex held, so one thread's miss delays the others.
// Context: the allocator makes its context current itself (ContextScope) on the paths that call
// the driver; the cache-hit path makes no call at all.
class CachingAllocator final : public Allocator {
 public:
  // No driver call is made here; the first miss makes the first segment.
  [[nodiscard]] static StatusOr<std::unique_ptr<CachingAllocator>> Create(
      const CudaApi* api, CUcontext context, const DeviceInfo& device,
      const CachingAllocatorParams& params = {});
  // Synchronizes the streams with cached frees, frees every segment and event (see above).
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;             // buffers point at it
  CachingAllocator& operator=(const CachingAllocator&) = delete;  // ditto

  // A snapshot of the counters. No driver call.
  [[nodiscard]] CachingAllocatorStatistics CacheStatistics() const;
  // Sets reserved_high and used_high to the current values. No driver call.
  Status ResetHighWatermarks();
  // Synchronizes `stream` (when blocks freed on it are cached) and makes those blocks idle, so
  // that the stream may then be destroyed. Errors name cuStreamSynchronize and the stream.
  [[nodiscard]] Status ForgetStream(CUstream stream);

  [[nodiscard]] const CachingAllocatorParams& params() const noexcept { return params_; }

 private:
  using Block = caching_internal::Block;
  using Segment = caching_internal::Segment;
  using StreamCache = caching_internal::StreamCache;

  CachingAllocator(const CudaApi* api, CUcontext context, const DeviceInfo& device,
                   const CachingAllocatorParams& params);

  BufferCompatibility DoQueryCompatibility(const BufferParams& params,
                                           std::size_t size) const override;
  StatusOr<Allocation> DoAllocate(const BufferParams& params, std::size_t size) override;
  StatusOr<Allocation> DoImport(const BufferParams& params, void* host,
                                std::size_t size) override;
  Status DoRelease(const Allocation& allocation) noexcept override;
  Status DoTrim() override;
  StatusOr<Allocation> DoAllocateOnStream(const BufferParams& params, std::size_t size,
                                          CUstream stream) override;
  Status DoReleaseOnStream(const Allocation& allocation, CUstream stream) override;

  // The cache of `stream`, made on its first use (the only heap allocation a stream costs).
  StreamCache* CacheOf(CUstream stream) CUHAL_REQUIRES(mu_);
  // A block of at least `rounded` bytes for `owner` (null: host-idle memory for Allocate).
  StatusOr<Block*> Acquire(StreamCache* owner, std::size_t rounded) CUHAL_REQUIRES(mu_);
  // Takes `block` (free, on owner's lists) for an allocation of `rounded` bytes, splitting off
  // the rest when the split rule allows.
  Block* Take(StreamCache* owner, Block* block, std::size_t rounded) CUHAL_REQUIRES(mu_);
  // Puts `block` on `owner`'s free lists, merging with free neighbours of the same owner.
  void Free(StreamCache* owner, Block* block) CUHAL_REQUIRES(mu_);
  // Hands every free block of `from` over to `to` (merging).
  void MoveAll(StreamCache* from, StreamCache* to) CUHAL_REQUIRES(mu_);
  // Cross-stream: event on each other stream that caches a fitting block, `to` waits on it.
  Status BorrowFromOtherStreams(StreamCache* to, std::size_t rounded) CUHAL_REQUIRES(mu_);
  // Host-idle: records and queries an event on each stream that caches a fitting block; the
  // blocks of the streams whose event completed become idle.
  Status ReclaimCompleted(std::size_t rounded) CUHAL_REQUIRES(mu_);
  // A new segment for a request of `rounded` bytes, on `owner`'s lists (out-of-memory retry).
  StatusOr<Block*> Grow(StreamCache* owner, std::size_t rounded) CUHAL_REQUIRES(mu_);
  // The cached bytes ReleaseCached keeps for Trim and the out-of-memory retry.
  [[nodiscard]] std::uint64_t KeepWhenReleasing() const;
  // Expandable segments: whether to use them (decided once, at the first growth).
  StatusOr<bool> UseExpandable() CUHAL_REQUIRES(mu_);
  // Maps what a request of `rounded` bytes lacks at the end of its class's range (reserved on
  // first use), at least params_.expandable_min_growth, as one growth, and returns the free
  // block on `owner`'s lists that holds it (out-of-memory retry as Grow's). The context is
  // current.
  StatusOr<Block*> GrowExpandable(StreamCache* owner, std::size_t rounded) CUHAL_REQUIRES(mu_);
  // Maps `bytes` (a multiple of the page size) at the end of `segment` as one physical
  // allocation (cuMemCreate, cuMemMap, cuMemSetAccess: all or nothing); `*out_of_memory` says
  // whether cuMemCreate failed with CUDA_ERROR_OUT_OF_MEMORY.
  Status MapGrowth(Segment* segment, std::size_t bytes, bool* out_of_memory)
      CUHAL_REQUIRES(mu_);
  // Unmaps and releases whole growths at the end of `segment` that its idle free tail block
  // covers, newest first, until at least `wanted` bytes went back or none is left; returns the
  // bytes given back in `*released`.
  Status UnmapIdleTail(Segment* segment, std::uint64_t wanted, std::uint64_t* released)
      CUHAL_REQUIRES(mu_);
  // The bytes of the whole growths at the end of `segment` that an idle free block covers.
  std::uint64_t IdleTailBytes(const Segment* segment) const CUHAL_REQUIRES(mu_);
  // Destruction: unmaps and releases every growth (twice on failure) and frees the range.
  void DestroyExpandable(Segment* segment) CUHAL_REQUIRES(mu_);
  // Synchronizes every stream with cached frees (their blocks become idle), then frees idle
  // segments until at most `keep` cached bytes remain.
  Status ReleaseCached(std::uint64_t keep) CUHAL_REQUIRES(mu_);
  Status FreeSegment(Segment* segment) CUHAL_REQUIRES(mu_);
  StatusOr<CUevent> AcquireEvent() CUHAL_REQUIRES(mu_);
  Block* NewBlock() CUHAL_REQUIRES(mu_);
  void DeleteBlock(Block* block) CUHAL_REQUIRES(mu_);

  const CudaApi* const api_;
  const CUcontext context_;
  const DeviceInfo device_;
  const CachingAllocatorParams params_;

  mutable Mutex mu_;
  CachingAllocatorStatistics stats_ CUHAL_GUARDED_BY(mu_);
  // The host-idle cache (blocks usable on any stream) and one cache per stream seen.
  std::unique_ptr<StreamCache> idle_ CUHAL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<StreamCache>> streams_ CUHAL_GUARDED_BY(mu_);
  StreamCache* last_stream_ CUHAL_GUARDED_BY(mu_) = nullptr;  // CacheOf's one-entry memo
  std::vector<std::unique_ptr<Segment>> segments_ CUHAL_GUARDED_BY(mu_);
  // Block records: recycled through a free list; grown in chunks (rarely, never in steady state).
  std::vector<std::unique_ptr<Block[]>> block_chunks_ CUHAL_GUARDED_BY(mu_);
  Block* spare_blocks_ CUHAL_GUARDED_BY(mu_) = nullptr;
  std::vector<CUevent> events_ CUHAL_GUARDED_BY(mu_);  // the event pool (all ready for reuse)
  // Expandable segments: decided at the first growth; the range of each class (small, large),
  // reserved on its first growth; the VMM granularity (every growth a multiple of it).
  enum class Expandable { kUndecided, kYes, kNo };
  Expandable expandable_ CUHAL_GUARDED_BY(mu_) = Expandable::kUndecided;
  Segment* ranges_[2] CUHAL_GUARDED_BY(mu_) = {nullptr, nullptr};
  std::size_t page_size_ CUHAL_GUARDED_BY(mu_) = 0;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_MEMORY_CACHING_ALLOCATOR_H_
