// Copyright 2026 The cuhal Authors.
// The fake driver's stream-ordered allocator: memory pools (cuMemPool*, cuMemAllocAsync,
// cuMemAllocFromPoolAsync, cuMemFreeAsync), modelled on what the real driver was measured to do
// (../shared/DESIGN.md, "Real-driver facts"; tests/pools/traces/ hold the differential traces).
//
// Physical model (measured on the H200, driver 580.159.04; tests/pools/traces/*.trace)
//   A pool is ONE contiguous range of device virtual addresses (its span: the device's memory,
//   rounded up to 32 MiB, whatever maxSize), backed by physical memory in 32 MiB granules
//   (kPoolGranuleBytes, aligned to the span's start) that are mapped when an allocation first
//   touches them. Allocations are placed best-fit at 512-byte granularity
//   (kPoolAlignment) and may cross granule boundaries: 1 byte maps one granule (RESERVED 32 MiB),
//   32 MiB + 1 two, 100 MiB four; 32 MiB + 1 followed by 100 MiB reserves 192 MiB, not 224.
//   RESERVED counts mapped granules, USED the exact requested bytes. Addresses are reused: after
//   a granule is released, the next allocation placed there gets the same address again.
//
// Invariants (everything below relies on them)
//   1. All state is guarded by DriverState::mu; nothing here releases it, except Enqueue (eager
//      scheduling runs op bodies unlocked), which is therefore always the LAST thing an
//      operation does: bookkeeping first, then enqueue, then return.
//   2. Every live pool allocation is an entry of DriverState::memory() with type kPool and
//      pool_id set (copies, memsets and pointer attributes work on it unchanged), and covers
//      [base, base + RoundUp(size)) of its pool's span, every granule of which is mapped. The free
//      ranges (MemPool::free_) are sorted by offset, never overlap each other or a live
//      allocation, and together with the live allocations tile the span exactly.
//   3. A free range carries a FreeMark. stream_id == 0 means the range is truly free: never used,
//      or its free was proven complete to the host. Otherwise it was freed in stream order on
//      `stream_id`: any op enqueued on that stream after the free has a seq > mark.seq, and the
//      free has completed on the device once that stream has completed mark.done_seq. Adjacent
//      ranges merge only when both are truly free or both were freed on the same stream (the
//      merged mark takes the later seq/done_seq, which is conservative). What proves a free
//      complete (PoolsOn*Sync): a synchronization of its stream that covers it
//      (cuStreamSynchronize, cuEventSynchronize on an event recorded after it, a blocking copy), a
//      synchronization of its context (cuCtxSynchronize, cuMemFree); never a successful query.
//   4. A free range is reusable by an allocation on stream S when
//        - it is truly free; or
//        - it was freed on S (at once, at the same address: stream order protects it); or
//        - REUSE_FOLLOW_EVENT_DEPENDENCIES: S has waited (an event, or an implicit legacy-stream
//          dependency, enqueued on S) for an op of the freeing stream enqueued after the free,
//          directly or transitively (an event carries what its recording stream had waited for),
//          or S's new work is implicitly ordered after the free (S is the legacy stream and the
//          free was on a blocking stream, or the reverse); or
//        - REUSE_ALLOW_OPPORTUNISTIC: the free has completed on the device; or,
//        - REUSE_ALLOW_INTERNAL_DEPENDENCIES, only when the pool cannot grow: S is made to wait
//          for the free (an op with that dependency is enqueued on S).
//   5. Memory goes back to the device (RESERVED drops, Device::bytes_in_use drops, the backing's
//      pages are discarded) only a whole granule at a time, only when no live allocation and no
//      unproven free touches it: after synchronizations, while more than RELEASE_THRESHOLD is
//      reserved (which may end below the threshold), and at cuMemPoolTrimTo, while at least
//      minBytesToKeep stays reserved. Since truly free ranges were proven idle, no queued op can
//      still touch a released granule's backing.
//   6. Reserved pool memory counts against the device total (Device::bytes_in_use), so pools
//      and cuMemAlloc share one limit; maxSize is enforced rounded up to a whole granule.
//      Out-of-memory is returned synchronously, is not sticky and changes nothing (idle granules
//      given back to make room are mapped again when even that does not help).
//   7. A destroyed pool disappears from the user's view at once (its handle is invalid); the
//      object lingers, still serving frees of its live allocations, until it has none left and
//      all of its frees are complete; then its memory and span are released (a later pool may
//      get the same addresses, as on the real driver).
//   8. Handles encode never-reused ids (HandleKind::kPool), as for every fakecuda handle.
#ifndef CUHAL_FAKECUDA_INTERNAL_MEM_POOL_H_
#define CUHAL_FAKECUDA_INTERNAL_MEM_POOL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

inline constexpr std::size_t kPoolGranuleBytes = std::size_t{32} << 20;
inline constexpr std::size_t kPoolAlignment = 512;

// Where the free of a range stands (invariant 3).
struct FreeMark {
  std::uint64_t stream_id = 0;  // 0: truly free
  std::uint64_t ctx_id = 0;     // the freeing stream's context (for context synchronization)
  std::uint64_t seq = 0;        // ops enqueued on stream_id after the free have larger seqs
  std::uint64_t done_seq = 0;   // complete on the device once stream_id completed this seq

  bool truly_free() const { return stream_id == 0; }
};

// A free range of a pool's span (offsets from its base).
struct PoolRange {
  std::size_t offset = 0;
  std::size_t size = 0;
  FreeMark mark;
  // When the range entered the free list (the pool's listings_ then; 0: never allocated): by a
  // free, as the rest of a split, or by a merge (the later of the two). The tie-break of best
  // fit, which takes the one listed longest among equal sizes.
  std::uint64_t listed_at = 0;
};

// A run of a pool's mapped granules: device addresses [base, base + size) live at host `data`.
struct MappedPoolRun {
  CUdeviceptr base = 0;
  std::size_t size = 0;
  std::byte* data = nullptr;
};

// One memory pool: its properties, attributes, statistics and address space.
//
// Ownership: owned by the PoolModel of its driver, which also owns the span's host backing;
// users hold only its handle (an id). Thread-safety: guarded by DriverState::mu, like everything
// in the fake driver. Stream ordering: the reuse rules of invariant 4; frees take effect in
// stream order.
class MemPool {
 public:
  MemPool(std::uint64_t id, int device, bool is_default, const CUmemPoolProps& props,
          std::size_t num_devices);
  MemPool(const MemPool&) = delete;             // owns its span's backing (via PoolModel)
  MemPool& operator=(const MemPool&) = delete;  // ditto

  std::uint64_t id() const { return id_; }
  int device() const { return device_; }
  bool is_default() const { return is_default_; }
  bool destroyed() const { return destroyed_; }
  CUmemoryPool handle() const { return EncodeHandle<CUmemoryPool>(HandleKind::kPool, id_); }

  // Attribute access with the real driver's value types and rules (INVALID_VALUE for read-only
  // CURRENT statistics, a non-zero watermark reset or an unknown attribute).
  CUresult GetAttribute(CUmemPool_attribute attr, void* value) const;
  CUresult SetAttribute(CUmemPool_attribute attr, const void* value);

  std::uint64_t reserved() const { return reserved_; }
  std::uint64_t used() const { return used_; }
  std::size_t live_allocations() const { return live_; }
  // The properties it was created with (the default pool's: DefaultProps).
  const CUmemPoolProps& props() const { return props_; }

 private:
  friend class PoolModel;

  void AddReserved(std::size_t bytes);
  void AddUsed(std::size_t bytes);

  const std::uint64_t id_;
  const int device_;
  const bool is_default_;
  CUmemPoolProps props_;  // as created
  bool destroyed_ = false;
  // Attributes.
  bool reuse_follow_event_dependencies_ = true;
  bool reuse_allow_opportunistic_ = true;
  bool reuse_allow_internal_dependencies_ = true;
  std::uint64_t release_threshold_ = 0;
  // Statistics.
  std::uint64_t reserved_ = 0;
  std::uint64_t reserved_high_ = 0;
  std::uint64_t used_ = 0;
  std::uint64_t used_high_ = 0;
  std::size_t live_ = 0;        // live allocations
  std::uint64_t listings_ = 0;  // entries into the free list so far (PoolRange::listed_at)
  bool maybe_pending_ = false;  // some free range may carry a stream mark
  // Address space (invariant 2): [base_, base_ + span_), backed by data_.
  CUdeviceptr base_ = 0;
  std::size_t span_ = 0;
  std::byte* data_ = nullptr;
  std::uint64_t limit_ = 0;      // most bytes it may reserve (maxSize in whole granules)
  std::vector<bool> mapped_;     // per granule
  std::vector<PoolRange> free_;  // sorted by offset
  // cuMemPoolSetAccess state, one entry per device (the owner's is always READWRITE).
  std::vector<CUmemAccess_flags> access_;
};

// Every pool of one fake driver, and the allocator's operations.
//
// Ownership: one per DriverState, owned by it (DriverState::pools(), created on first use;
// PoolModel::Of); it owns the pools and their spans' host backing. Pool allocations themselves
// are entries of DriverState::memory() (invariant 2).
// Thread-safety: every method requires DriverState::mu held. The private helpers say so
// (CUHAL_REQUIRES(st_->mu)); the public methods, reached only through DriverState::pools() or
// Of() (which require it), assert it for the analysis, which cannot see that st_ is their
// caller's state.
// Stream ordering: see invariants 3-5; synchronizations reach it through the PoolsOn*Sync hooks.
class PoolModel {
 public:
  explicit PoolModel(DriverState* st);
  ~PoolModel();
  PoolModel(const PoolModel&) = delete;             // owns host backing
  PoolModel& operator=(const PoolModel&) = delete;  // ditto

  // The model of `st`, created on first use.
  static PoolModel& Of(DriverState* st) CUHAL_REQUIRES(st->mu);

  // A pool the user may name (not destroyed), or null.
  MemPool* Find(CUmemoryPool handle);
  // The default pool of `device` (created on first use; null only if its span cannot be made)
  // and its current pool.
  MemPool* DefaultPool(int device);
  MemPool* CurrentPool(int device);
  // cuDeviceSetMemPool: `pool` must live on `device`.
  CUresult SetCurrentPool(int device, MemPool* pool);

  // Validates `props` and creates a pool.
  CUresult Create(const CUmemPoolProps& props, CUmemoryPool* out);
  // cuMemPoolDestroy (invariant 7).
  CUresult Destroy(MemPool* pool);
  // Allocates `bytes` (> 0) from `pool` in the order of `stream` (whose context is `ctx`).
  CUresult Allocate(MemPool* pool, Stream* stream, Context* ctx, std::size_t bytes,
                    const char* what, CUdeviceptr* out);
  // Frees the pool allocation at `base` (a live kPool allocation) in the order of `stream`.
  CUresult FreeAsync(std::uintptr_t base, Stream* stream, Context* ctx);
  // Frees the pool allocation at `base` at once, as truly free (cuMemFree).
  void FreeNow(std::uintptr_t base);
  // cuMemPoolTrimTo.
  void TrimTo(MemPool* pool, std::size_t keep);
  // cuMemPoolSetAccess / cuMemPoolGetAccess.
  CUresult SetAccess(MemPool* pool, const CUmemAccessDesc* map, std::size_t count);
  CUresult GetAccess(MemPool* pool, const CUmemLocation& location, CUmemAccess_flags* flags);

  // The host has seen `stream_id` complete every op (and free) ordered before `proven_below`.
  void OnStreamSync(std::uint64_t stream_id, std::uint64_t proven_below);
  // The host has seen every stream of `ctx_id` (0: of every context) drain.
  void OnContextSync(std::uint64_t ctx_id);

  int LiveUserPools() const;
  std::string Describe() const;

  // The run of mapped granules of some pool that contains `address`: what a kernel may still
  // touch after its allocation was freed to the pool (the GPU keeps pool memory mapped until the
  // pool releases it). False when no pool maps that address.
  bool MappedRun(std::uintptr_t address, MappedPoolRun* out) const;

 private:
  struct Place {
    std::size_t index = 0;          // into pool.free_
    std::uint64_t wait_stream = 0;  // internal dependency to add (0: none)
    std::uint64_t wait_seq = 0;
  };
  struct Span {
    int device = 0;
    CUdeviceptr base = 0;
    std::size_t size = 0;
  };
  // What FindPlace looks at: the ranges reusable now (kReusable); with opportunistic reuse, before
  // completed frees are merged, the listed ranges that need neither the end of the span nor a new
  // granule (kBeforeMerging); the ranges reusable only through an internal dependency
  // (kInternal).
  enum class Search { kReusable, kBeforeMerging, kInternal };

  MemPool* NewPool(int device, bool is_default, const CUmemPoolProps& props)
      CUHAL_REQUIRES(st_->mu);
  // Whether an allocation on `stream` is ordered after the free `mark` records: truly free, freed
  // on `stream`, or (REUSE_FOLLOW_EVENT_DEPENDENCIES) an event or implicit legacy-stream
  // dependency (invariant 4, all but the opportunistic and internal-dependency cases).
  bool OrderedAfter(const MemPool& pool, const FreeMark& mark, const Stream& stream) const
      CUHAL_REQUIRES(st_->mu);
  bool Reusable(const MemPool& pool, const FreeMark& mark, const Stream& stream) const
      CUHAL_REQUIRES(st_->mu);
  // Bytes of granules that [offset, offset + size) would newly map.
  std::size_t GrowthFor(const MemPool& pool, std::size_t offset, std::size_t size) const
      CUHAL_REQUIRES(st_->mu);
  bool CanGrow(const MemPool& pool, std::size_t bytes) const CUHAL_REQUIRES(st_->mu);
  // Best fit in groups (see the definition) for `need` bytes; false when no range qualifies.
  bool FindPlace(const MemPool& pool, const Stream& stream, std::size_t need, Search search,
                 Place* place) const CUHAL_REQUIRES(st_->mu);
  void MapGranules(MemPool& pool, std::size_t offset, std::size_t size) CUHAL_REQUIRES(st_->mu);
  // Releases idle granules, highest first: while more than `above` is reserved (thresholds), or
  // while at least `keep` stays reserved (trims).
  void ReleaseAbove(MemPool& pool, std::uint64_t above) CUHAL_REQUIRES(st_->mu);
  void ReleaseKeeping(MemPool& pool, std::uint64_t keep) CUHAL_REQUIRES(st_->mu);
  template <typename Stop>
  void ReleaseIdle(MemPool& pool, Stop stop, std::vector<std::size_t>* released = nullptr)
      CUHAL_REQUIRES(st_->mu);
  void ReleaseGranule(MemPool& pool, std::size_t granule) CUHAL_REQUIRES(st_->mu);
  // Marks complete frees accepted by `proven` truly free.
  template <typename Proven>
  void Observe(MemPool& pool, Proven proven) CUHAL_REQUIRES(st_->mu);
  void AfterSync() CUHAL_REQUIRES(st_->mu);
  // Erases destroyed pools that have nothing left (invariant 7).
  void FinalizeDestroyed() CUHAL_REQUIRES(st_->mu);
  void ReleaseSpan(MemPool& pool) CUHAL_REQUIRES(st_->mu);
  static void Coalesce(std::vector<PoolRange>& ranges);
  static void InsertFree(std::vector<PoolRange>& ranges, PoolRange range);
  MemPool* FindAny(std::uint64_t id) CUHAL_REQUIRES(st_->mu);

  DriverState* const st_;
  // Including lingering (destroyed, with live allocations) pools.
  std::unordered_map<std::uint64_t, std::unique_ptr<MemPool>> pools_ CUHAL_GUARDED_BY(st_->mu);
  // Address ranges of erased pools, for reuse.
  std::vector<Span> free_spans_ CUHAL_GUARDED_BY(st_->mu);
  // Spare allocation-map nodes, reused so that the allocation hot path does not touch the heap.
  std::vector<MemoryMap::Node> spare_nodes_
      CUHAL_GUARDED_BY(st_->mu);
};

// Hooks for DriverState (no-ops until a pool has been used).
bool PoolsMappedRun(const DriverState& st, std::uintptr_t address, MappedPoolRun* out)
    CUHAL_REQUIRES(st.mu);
void PoolsOnStreamSync(DriverState* st, std::uint64_t stream_id, std::uint64_t proven_below)
    CUHAL_REQUIRES(st->mu);
void PoolsOnContextSync(DriverState* st, std::uint64_t ctx_id) CUHAL_REQUIRES(st->mu);
int PoolsLive(const DriverState& st) CUHAL_REQUIRES(st.mu);
std::string PoolsDescribe(const DriverState& st) CUHAL_REQUIRES(st.mu);

// `bytes` rounded up to the pool's 512-byte packing granularity (0 stays 0).
inline std::size_t PoolRoundUp(std::size_t bytes) {
  return (bytes + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment;
}

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_MEM_POOL_H_
