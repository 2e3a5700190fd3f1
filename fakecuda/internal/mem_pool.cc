// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/mem_pool.h"

#include "fakecuda/race/race_detector.h"

#include <sys/mman.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <utility>

namespace fakecuda {
namespace {

// Spare allocation-map nodes kept for reuse.
constexpr std::size_t kMaxSpareNodes = 256;

CUmemPoolProps DefaultProps(int device) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  return props;
}

std::size_t GranuleRoundUp(std::size_t bytes) {
  return (bytes + kPoolGranuleBytes - 1) / kPoolGranuleBytes * kPoolGranuleBytes;
}

bool Mergeable(const FreeMark& a, const FreeMark& b) {
  return a.stream_id == b.stream_id && (a.stream_id == 0 || a.ctx_id == b.ctx_id);
}

// Merges `b` (which follows `a` immediately) into `a`.
void MergeInto(PoolRange& a, const PoolRange& b) {
  a.size += b.size;
  a.listed_at = std::max(a.listed_at, b.listed_at);
  if (!a.mark.truly_free()) {
    a.mark.seq = std::max(a.mark.seq, b.mark.seq);
    a.mark.done_seq = std::max(a.mark.done_seq, b.mark.done_seq);
  }
}

}  // namespace

// --- MemPool ---

MemPool::MemPool(std::uint64_t id, int device, bool is_default, const CUmemPoolProps& props,
                 std::size_t num_devices)
    : id_(id),
      device_(device),
      is_default_(is_default),
      props_(props),
      access_(num_devices, CU_MEM_ACCESS_FLAGS_PROT_NONE) {
  access_[static_cast<std::size_t>(device)] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

void MemPool::AddReserved(std::size_t bytes) {
  reserved_ += bytes;
  reserved_high_ = std::max(reserved_high_, reserved_);
}

void MemPool::AddUsed(std::size_t bytes) {
  used_ += bytes;
  used_high_ = std::max(used_high_, used_);
}

CUresult MemPool::GetAttribute(CUmemPool_attribute attr, void* value) const {
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      *static_cast<int*>(value) = reuse_follow_event_dependencies_ ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      *static_cast<int*>(value) = reuse_allow_opportunistic_ ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      *static_cast<int*>(value) = reuse_allow_internal_dependencies_ ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      *static_cast<cuuint64_t*>(value) = release_threshold_;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
      *static_cast<cuuint64_t*>(value) = reserved_;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      *static_cast<cuuint64_t*>(value) = reserved_high_;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      *static_cast<cuuint64_t*>(value) = used_;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      *static_cast<cuuint64_t*>(value) = used_high_;
      return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult MemPool::SetAttribute(CUmemPool_attribute attr, const void* value) {
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      reuse_follow_event_dependencies_ = *static_cast<const int*>(value) != 0;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      reuse_allow_opportunistic_ = *static_cast<const int*>(value) != 0;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      reuse_allow_internal_dependencies_ = *static_cast<const int*>(value) != 0;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      // Takes effect at the next synchronization, not now.
      release_threshold_ = *static_cast<const cuuint64_t*>(value);
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      if (*static_cast<const cuuint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
      reserved_high_ = reserved_;  // a watermark restarts from the current value
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      if (*static_cast<const cuuint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
      used_high_ = used_;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      return CUDA_ERROR_INVALID_VALUE;  // read-only
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// --- PoolModel ---

PoolModel::PoolModel(DriverState* st) : st_(st) {}

PoolModel::~PoolModel() {
  // The driver is going away: unmap the backing without touching DriverState, whose allocation
  // entries its destructor already dropped.
  for (auto& [id, pool] : pools_) {
    if (pool->data_ != nullptr) munmap(pool->data_, pool->span_);
  }
}

PoolModel& PoolModel::Of(DriverState* st) { return st->pools(); }

MemPool* PoolModel::FindAny(std::uint64_t id) {
  auto it = pools_.find(id);
  return it == pools_.end() ? nullptr : it->second.get();
}

MemPool* PoolModel::Find(CUmemoryPool handle) {
  st_->mu.AssertHeld();
  std::uint64_t id = DecodeHandle(HandleKind::kPool, handle);
  if (id == 0) return nullptr;
  MemPool* pool = FindAny(id);
  return pool == nullptr || pool->destroyed_ ? nullptr : pool;
}

MemPool* PoolModel::NewPool(int device, bool is_default, const CUmemPoolProps& props) {
  const Device& d = st_->device(device);
  const std::size_t device_span = GranuleRoundUp(d.profile.total_memory);
  std::uint64_t limit = std::numeric_limits<std::uint64_t>::max();
  if (props.maxSize != 0) {
    limit = props.maxSize > device_span ? props.maxSize : GranuleRoundUp(props.maxSize);
  }
  // Address space is cheap (the backing is reserved lazily): every pool spans the device's
  // memory, whatever its maxSize, which limits reservations (mapped granules) only.
  const std::size_t span = device_span;
  void* data = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (data == MAP_FAILED) return nullptr;
  // The address range of an erased pool of the same size is reused, as the real driver does.
  CUdeviceptr base = 0;
  for (auto it = free_spans_.begin(); it != free_spans_.end(); ++it) {
    if (it->device == device && it->size == span) {
      base = it->base;
      free_spans_.erase(it);
      break;
    }
  }
  if (base == 0) base = st_->ReserveVa(device, span, kPoolGranuleBytes);

  std::uint64_t id = st_->NewId();
  auto pool = std::make_unique<MemPool>(id, device, is_default, props,
                                        static_cast<std::size_t>(st_->contexts().device_count()));
  pool->base_ = base;
  pool->span_ = span;
  pool->data_ = static_cast<std::byte*>(data);
  pool->limit_ = limit;
  pool->mapped_.assign(span / kPoolGranuleBytes, false);
  pool->free_.push_back(PoolRange{0, span, FreeMark{}});
  MemPool* raw = pool.get();
  pools_.emplace(id, std::move(pool));
  return raw;
}

MemPool* PoolModel::DefaultPool(int device) {
  st_->mu.AssertHeld();
  Device& d = st_->device(device);
  if (d.default_pool_id == 0) {
    MemPool* pool = NewPool(device, true, DefaultProps(device));
    if (pool == nullptr) return nullptr;
    d.default_pool_id = pool->id();
  }
  return FindAny(d.default_pool_id);
}

MemPool* PoolModel::CurrentPool(int device) {
  st_->mu.AssertHeld();
  const Device& d = st_->device(device);
  if (d.current_pool_id != 0) {
    MemPool* pool = FindAny(d.current_pool_id);
    if (pool != nullptr && !pool->destroyed_) return pool;
  }
  return DefaultPool(device);
}

CUresult PoolModel::SetCurrentPool(int device, MemPool* pool) {
  st_->mu.AssertHeld();
  if (pool->device_ != device) return CUDA_ERROR_INVALID_VALUE;
  st_->device(device).current_pool_id = pool->id_;
  return CUDA_SUCCESS;
}

CUresult PoolModel::Create(const CUmemPoolProps& props, CUmemoryPool* out) {
  st_->mu.AssertHeld();
  // Codes measured on the H200 (tests/pools/traces/create_props.trace). The real driver accepts
  // any `usage` bits and ignores win32SecurityAttributes on Linux.
  if (props.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED) {
    return CUDA_ERROR_NOT_SUPPORTED;  // managed-memory pools: not modelled (the H200 has them)
  }
  if (props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  switch (props.location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (props.location.id < 0 || props.location.id >= st_->contexts().device_count()) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      break;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      return CUDA_ERROR_NOT_SUPPORTED;  // host-memory pools: not modelled (the H200 has them)
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  const Device& device = st_->device(props.location.id);
  if (device.profile.Attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  constexpr unsigned kKnownHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                         CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT |
                                         CU_MEM_HANDLE_TYPE_FABRIC;
  auto handle_types = static_cast<unsigned>(props.handleTypes);
  if ((handle_types & ~kKnownHandleTypes) != 0) return CUDA_ERROR_INVALID_VALUE;
  if ((handle_types & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;  // Windows handles on Linux
  }
  for (unsigned char byte : props.reserved) {
    if (byte != 0) return CUDA_ERROR_INVALID_VALUE;
  }
  MemPool* pool = NewPool(props.location.id, false, props);
  if (pool == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *out = pool->handle();
  return CUDA_SUCCESS;
}

CUresult PoolModel::Destroy(MemPool* pool) {
  st_->mu.AssertHeld();
  if (pool->is_default_) return CUDA_ERROR_INVALID_VALUE;
  pool->destroyed_ = true;
  Device& d = st_->device(pool->device_);
  if (d.current_pool_id == pool->id_) d.current_pool_id = 0;  // the default is current again
  FinalizeDestroyed();
  return CUDA_SUCCESS;
}

bool PoolModel::OrderedAfter(const MemPool& pool, const FreeMark& mark,
                             const Stream& stream) const {
  if (mark.truly_free() || mark.stream_id == stream.id) return true;
  if (!pool.reuse_follow_event_dependencies_) return false;
  auto it = stream.waited.find(mark.stream_id);
  if (it != stream.waited.end() && it->second > mark.seq) return true;
  // Implicit legacy-stream ordering: new work on the legacy stream waits for everything queued on
  // the blocking streams of its context, and new work on a blocking stream waits for the legacy
  // stream.
  if (mark.ctx_id != stream.ctx_id) return false;
  const Stream* freer = st_->FindStream(mark.stream_id);
  if (freer == nullptr) return false;
  const bool freer_blocking = !(freer->flags & CU_STREAM_NON_BLOCKING);
  const bool blocking = !(stream.flags & CU_STREAM_NON_BLOCKING);
  return (stream.legacy_default && freer_blocking) || (freer->legacy_default && blocking);
}

bool PoolModel::Reusable(const MemPool& pool, const FreeMark& mark, const Stream& stream) const {
  return OrderedAfter(pool, mark, stream) ||
         (pool.reuse_allow_opportunistic_ && st_->DepSatisfied(mark.stream_id, mark.done_seq));
}

std::size_t PoolModel::GrowthFor(const MemPool& pool, std::size_t offset, std::size_t size) const {
  std::size_t bytes = 0;
  const std::size_t last = (offset + size - 1) / kPoolGranuleBytes;
  for (std::size_t g = offset / kPoolGranuleBytes; g <= last; ++g) {
    if (!pool.mapped_[g]) bytes += kPoolGranuleBytes;
  }
  return bytes;
}

bool PoolModel::CanGrow(const MemPool& pool, std::size_t bytes) const {
  if (pool.reserved_ + bytes > pool.limit_) return false;
  const Device& d = st_->device(pool.device_);
  const std::size_t total = d.profile.total_memory;
  return bytes <= total - std::min(d.bytes_in_use, total);
}

bool PoolModel::FindPlace(const MemPool& pool, const Stream& stream, std::size_t need,
                          Search search, Place* place) const {
  // Among the ranges that need no new granule, in this order of groups (measured on the H200,
  // docs/driver_facts.md "Pool placement": replaying bench/traces, this order gives the driver's
  // address for every allocation of every shipped trace, with and without opportunistic reuse):
  //   1. this stream's own pending frees;
  //   2. truly free ranges, except the one that runs to the end of the span (never used yet);
  //   3. other streams' pending frees this stream is ordered after (event dependencies, followed
  //      transitively; implicit legacy-stream order), one stream after the other in the order
  //      the streams were created;
  //   4. other streams' pending frees that have completed (opportunistic reuse), one stream
  //      after the other in creation order (only kBeforeMerging sees them: Allocate makes every
  //      completed free truly free before a kReusable search);
  //   5. the end of the span (not kBeforeMerging).
  // Within a group, best fit: the smallest range that holds `need`; of equal sizes the one
  // longest in the free list (a free, the rest of a split and a merge enter it anew), then the
  // lowest address. (First fit by address did not even give the driver's RESERVED figures.)
  // With kInternal, the ranges that need an internal dependency instead, best fit. Failing all
  // that (not kBeforeMerging), first fit by address among the ranges the pool may grow for.
  using Group = std::pair<int, std::uint64_t>;
  constexpr Group kSkip{-1, 0};
  const auto group = [&](const PoolRange& r) -> Group {
    st_->mu.AssertHeld();  // called by FindPlace, which requires it
    if (search == Search::kInternal) return Reusable(pool, r.mark, stream) ? kSkip : Group{0, 0};
    if (r.mark.stream_id == stream.id) return {0, 0};
    if (r.mark.truly_free()) {
      if (r.offset + r.size != pool.span_) return {1, 0};
      return search == Search::kBeforeMerging ? kSkip : Group{4, 0};
    }
    if (OrderedAfter(pool, r.mark, stream)) return {2, r.mark.stream_id};
    if (!Reusable(pool, r.mark, stream)) return kSkip;
    return {search == Search::kBeforeMerging ? 3 : 2, r.mark.stream_id};
  };
  std::size_t best = pool.free_.size();
  Group best_group{0, 0};
  for (std::size_t i = 0; i < pool.free_.size(); ++i) {
    const PoolRange& r = pool.free_[i];
    if (r.size < need) continue;
    if (GrowthFor(pool, r.offset, need) != 0) continue;
    const Group g = group(r);
    if (g == kSkip) continue;
    if (best != pool.free_.size()) {
      const PoolRange& b = pool.free_[best];
      if (g > best_group) continue;
      if (g == best_group &&
          (r.size > b.size || (r.size == b.size && r.listed_at >= b.listed_at))) {
        continue;
      }
    }
    best = i;
    best_group = g;
  }
  if (best == pool.free_.size() && search != Search::kBeforeMerging) {
    const bool internal = search == Search::kInternal;
    for (std::size_t i = 0; i < pool.free_.size(); ++i) {
      const PoolRange& r = pool.free_[i];
      if (r.size < need) continue;
      if (Reusable(pool, r.mark, stream) == internal) continue;
      const std::size_t growth = GrowthFor(pool, r.offset, need);
      if (growth == 0 || !CanGrow(pool, growth)) continue;
      best = i;
      break;
    }
  }
  if (best == pool.free_.size()) return false;
  const PoolRange& r = pool.free_[best];
  *place = Place{best, 0, 0};
  if (search == Search::kInternal && !st_->DepSatisfied(r.mark.stream_id, r.mark.done_seq)) {
    place->wait_stream = r.mark.stream_id;
    place->wait_seq = r.mark.done_seq;
  }
  return true;
}

void PoolModel::MapGranules(MemPool& pool, std::size_t offset, std::size_t size) {
  Device& d = st_->device(pool.device_);
  const std::size_t last = (offset + size - 1) / kPoolGranuleBytes;
  for (std::size_t g = offset / kPoolGranuleBytes; g <= last; ++g) {
    if (pool.mapped_[g]) continue;
    pool.mapped_[g] = true;
    d.bytes_in_use += kPoolGranuleBytes;
    pool.AddReserved(kPoolGranuleBytes);
  }
}

void PoolModel::ReleaseGranule(MemPool& pool, std::size_t granule) {
  Device& d = st_->device(pool.device_);
  // Keep the mapping, drop its pages: the host memory goes back, the addresses stay the pool's.
  madvise(pool.data_ + granule * kPoolGranuleBytes, kPoolGranuleBytes, MADV_DONTNEED);
  pool.mapped_[granule] = false;
  d.bytes_in_use -= std::min(d.bytes_in_use, kPoolGranuleBytes);
  pool.reserved_ -= kPoolGranuleBytes;
}

template <typename Stop>
void PoolModel::ReleaseIdle(MemPool& pool, Stop stop, std::vector<std::size_t>* released) {
  // A granule is idle when one truly free range covers it (truly free neighbours always merge).
  for (std::size_t i = pool.free_.size(); i-- > 0;) {
    const PoolRange& r = pool.free_[i];
    if (!r.mark.truly_free() || r.size < kPoolGranuleBytes) continue;
    const std::size_t first = (r.offset + kPoolGranuleBytes - 1) / kPoolGranuleBytes;
    const std::size_t end = (r.offset + r.size) / kPoolGranuleBytes;  // one past the last
    for (std::size_t g = end; g-- > first;) {
      if (!pool.mapped_[g]) continue;
      if (stop()) return;
      ReleaseGranule(pool, g);
      if (released != nullptr) released->push_back(g);
    }
  }
}

void PoolModel::ReleaseAbove(MemPool& pool, std::uint64_t above) {
  ReleaseIdle(pool, [&pool, above] { return pool.reserved_ <= above; });
}

void PoolModel::ReleaseKeeping(MemPool& pool, std::uint64_t keep) {
  ReleaseIdle(pool, [&pool, keep] {
    return pool.reserved_ < kPoolGranuleBytes || pool.reserved_ - kPoolGranuleBytes < keep;
  });
}

CUresult PoolModel::Allocate(MemPool* pool, Stream* stream, Context* ctx, std::size_t bytes,
                             const char* what, CUdeviceptr* out) {
  st_->mu.AssertHeld();
  if (bytes > pool->span_) return CUDA_ERROR_OUT_OF_MEMORY;  // also no overflow below
  const std::size_t need = PoolRoundUp(bytes);
  Place place;
  // With opportunistic reuse (measured, docs/driver_facts.md "Pool placement"): first the best
  // fit in the free list as it stands (kBeforeMerging: completed frees of other streams count,
  // but merged with nothing; the end of the span does not); only when nothing there holds the
  // request does every completed free become truly free (merged with its neighbours) before the
  // search.
  const bool listed = pool->reuse_allow_opportunistic_ && pool->maybe_pending_ &&
                      FindPlace(*pool, *stream, need, Search::kBeforeMerging, &place);
  if (!listed && pool->reuse_allow_opportunistic_ && pool->maybe_pending_) {
    Observe(*pool, [&](const FreeMark& m) {
      st_->mu.AssertHeld();  // called by Observe, which requires it
      return st_->DepSatisfied(m.stream_id, m.done_seq);
    });
  }
  if (!listed && !FindPlace(*pool, *stream, need, Search::kReusable, &place)) {
    // The pool cannot grow. Its idle granules may be in the way of a bigger reservation: give
    // them back and look again; then reuse memory freed on another stream by ordering this
    // stream after the free.
    std::vector<std::size_t> released;
    ReleaseIdle(
        *pool, [] { return false; }, &released);
    bool found = !released.empty() && FindPlace(*pool, *stream, need, Search::kReusable, &place);
    if (!found) {
      // Out of memory changes nothing (invariant 6): map the idle granules back.
      for (std::size_t g : released) MapGranules(*pool, g * kPoolGranuleBytes, kPoolGranuleBytes);
      if (pool->reuse_allow_internal_dependencies_) {
        found = FindPlace(*pool, *stream, need, Search::kInternal, &place);
      }
    }
    if (!found) return CUDA_ERROR_OUT_OF_MEMORY;
  }

  PoolRange& range = pool->free_[place.index];
  const std::size_t offset = range.offset;
  if (range.size == need) {
    pool->free_.erase(pool->free_.begin() + static_cast<std::ptrdiff_t>(place.index));
  } else {
    range.offset += need;
    range.size -= need;
    range.listed_at = ++pool->listings_;  // the rest enters the free list anew
  }
  MapGranules(*pool, offset, need);
  ++pool->live_;
  pool->AddUsed(bytes);

  const CUdeviceptr base = pool->base_ + offset;
  MemoryMap::Node node;
  if (!spare_nodes_.empty()) {
    node = std::move(spare_nodes_.back());
    spare_nodes_.pop_back();
    node.key() = base;
  } else {
    node = std::map<std::uintptr_t, Allocation>{{base, Allocation{}}}.extract(base);
  }
  Allocation& a = node.mapped();
  a.id = st_->NewId();
  a.type = MemoryType::kPool;
  a.base = base;
  a.size = bytes;
  a.data = pool->data_ + offset;
  a.mmapped = false;
  a.mapped_size = 0;
  a.device = pool->device_;
  a.ctx_id = ctx->id;
  a.flags = 0;
  a.pool_id = pool->id_;
  a.sync_memops = -1;
  a.created_by = what;  // reuses the spare node's capacity
  const std::uint64_t alloc_id = a.id;
  st_->memory().Add(std::move(node));
  *out = base;
  if (RaceDetector* race = st_->race()) {
    // The allocation's place on its stream: the op below when there is one, else a seq of its own.
    const std::uint64_t key =
        place.wait_stream != 0 ? st_->streams().next_seq() : st_->streams().TakeSeq();
    race->OnAllocAsync(st_, *stream, alloc_id, base, bytes, key, what);
  }

  if (place.wait_stream != 0) {
    Op op;
    op.what = what;
    op.deps.emplace_back(place.wait_stream, place.wait_seq);
    st_->Enqueue(stream, std::move(op));  // last (invariant 1)
  }
  return CUDA_SUCCESS;
}

void PoolModel::InsertFree(std::vector<PoolRange>& v, PoolRange range) {
  auto pos = std::lower_bound(v.begin(), v.end(), range.offset,
                              [](const PoolRange& r, std::size_t off) { return r.offset < off; });
  std::size_t i = static_cast<std::size_t>(pos - v.begin());
  v.insert(pos, range);
  if (i + 1 < v.size() && Mergeable(v[i].mark, v[i + 1].mark) &&
      v[i].offset + v[i].size == v[i + 1].offset) {
    MergeInto(v[i], v[i + 1]);
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  if (i > 0 && Mergeable(v[i - 1].mark, v[i].mark) &&
      v[i - 1].offset + v[i - 1].size == v[i].offset) {
    MergeInto(v[i - 1], v[i]);
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void PoolModel::Coalesce(std::vector<PoolRange>& v) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (out > 0 && Mergeable(v[out - 1].mark, v[i].mark) &&
        v[out - 1].offset + v[out - 1].size == v[i].offset) {
      MergeInto(v[out - 1], v[i]);
    } else {
      v[out++] = v[i];
    }
  }
  v.resize(out);
}

CUresult PoolModel::FreeAsync(std::uintptr_t base, Stream* stream, Context* ctx) {
  st_->mu.AssertHeld();
  const Allocation* found = st_->memory().At(base);
  if (found == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const Allocation& a = *found;
  MemPool* pool = FindAny(a.pool_id);
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;  // cannot happen (invariant 2)

  // A free on the legacy stream, or on a blocking stream while the legacy stream has work,
  // carries implicit dependencies: queue it as an op so Enqueue adds them. Otherwise it needs
  // no op: it completes when the work queued before it does.
  bool as_op = stream->legacy_default;
  if (!as_op && !(stream->flags & CU_STREAM_NON_BLOCKING) && ctx != nullptr &&
      ctx->legacy_stream_id != 0) {
    const Stream* legacy = st_->FindStream(ctx->legacy_stream_id);
    as_op = legacy != nullptr && legacy->last_enqueued_seq > legacy->completed_seq;
  }
  FreeMark mark;
  mark.stream_id = stream->id;
  mark.ctx_id = stream->ctx_id;
  if (as_op) {
    mark.seq = mark.done_seq = st_->streams().next_seq();  // the seq Enqueue gives the op
  } else {
    mark.seq = st_->streams().TakeSeq();
    mark.done_seq = stream->last_enqueued_seq;
  }
  if (RaceDetector* race = st_->race()) race->OnFreeAsync(st_, *stream, a, mark.seq, "cuMemFreeAsync");
  InsertFree(pool->free_,
             PoolRange{a.base - pool->base_, PoolRoundUp(a.size), mark, ++pool->listings_});
  --pool->live_;
  pool->used_ -= a.size;
  pool->maybe_pending_ = true;
  if (spare_nodes_.size() < kMaxSpareNodes) {
    spare_nodes_.push_back(st_->memory().Extract(base));
  } else {
    st_->memory().Forget(base);
  }
  if (pool->destroyed_) FinalizeDestroyed();
  if (as_op) {
    Op op;
    op.what = "cuMemFreeAsync";
    st_->Enqueue(stream, std::move(op));  // last (invariant 1)
  }
  return CUDA_SUCCESS;
}

void PoolModel::FreeNow(std::uintptr_t base) {
  st_->mu.AssertHeld();
  const Allocation* found = st_->memory().At(base);
  if (found == nullptr) return;
  const Allocation& a = *found;
  MemPool* pool = FindAny(a.pool_id);
  if (pool == nullptr) return;
  if (RaceDetector* race = st_->race()) race->OnRelease(a.id);
  InsertFree(pool->free_,
             PoolRange{a.base - pool->base_, PoolRoundUp(a.size), FreeMark{}, ++pool->listings_});
  --pool->live_;
  // Measured on the H200 (tests/pools/traces/free_sync.trace): cuMemFree of a pool allocation
  // does not lower USED_MEM_CURRENT, although the memory is freed (and released).
  st_->memory().Forget(base);
  if (pool->reserved_ > pool->release_threshold_) ReleaseAbove(*pool, pool->release_threshold_);
  FinalizeDestroyed();
}

void PoolModel::TrimTo(MemPool* pool, std::size_t keep) {
  st_->mu.AssertHeld();
  ReleaseKeeping(*pool, keep);
}

CUresult PoolModel::SetAccess(MemPool* pool, const CUmemAccessDesc* map, std::size_t count) {
  st_->mu.AssertHeld();
  if (count == 0) return CUDA_SUCCESS;
  if (map == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // All or nothing: validate every descriptor first. Codes measured on the H200
  // (tests/pools/traces/access.trace).
  for (std::size_t i = 0; i < count; ++i) {
    const CUmemAccessDesc& desc = map[i];
    if (desc.location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
      return desc.location.type == CU_MEM_LOCATION_TYPE_INVALID ? CUDA_ERROR_INVALID_VALUE
                                                                : CUDA_ERROR_NOT_SUPPORTED;
    }
    if (desc.location.id < 0 || desc.location.id >= st_->contexts().device_count()) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
    if (desc.flags == CU_MEM_ACCESS_FLAGS_PROT_READ) return CUDA_ERROR_NOT_SUPPORTED;
    if (desc.flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
        desc.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (desc.location.id == pool->device_ && desc.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return CUDA_ERROR_INVALID_DEVICE;  // the owning device keeps its access
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    pool->access_[static_cast<std::size_t>(map[i].location.id)] = map[i].flags;
  }
  return CUDA_SUCCESS;
}

CUresult PoolModel::GetAccess(MemPool* pool, const CUmemLocation& location,
                              CUmemAccess_flags* flags) {
  st_->mu.AssertHeld();
  if (location.type != CU_MEM_LOCATION_TYPE_DEVICE || location.id < 0 ||
      location.id >= st_->contexts().device_count()) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *flags = pool->access_[static_cast<std::size_t>(location.id)];
  return CUDA_SUCCESS;
}

template <typename Proven>
void PoolModel::Observe(MemPool& pool, Proven proven) {
  bool pending = false;
  std::vector<PoolRange*> proven_ranges;
  for (PoolRange& r : pool.free_) {
    if (r.mark.truly_free()) continue;
    if (proven(r.mark)) {
      r.mark = FreeMark{};
      proven_ranges.push_back(&r);
    } else {
      pending = true;
    }
  }
  if (!proven_ranges.empty()) {
    // The proven frees enter the truly free list anew, the most recently listed first
    // (tests/pools/traces/best_fit.trace: of two equal holes freed before a synchronization,
    // the driver then takes the one freed last).
    std::sort(proven_ranges.begin(), proven_ranges.end(),
              [](const PoolRange* a, const PoolRange* b) { return a->listed_at > b->listed_at; });
    for (PoolRange* r : proven_ranges) r->listed_at = ++pool.listings_;
    Coalesce(pool.free_);
  }
  pool.maybe_pending_ = pending;
}

void PoolModel::OnStreamSync(std::uint64_t stream_id, std::uint64_t proven_below) {
  st_->mu.AssertHeld();
  for (auto& [id, pool] : pools_) {
    if (!pool->maybe_pending_) continue;
    Observe(*pool, [&](const FreeMark& m) {
      st_->mu.AssertHeld();  // called by Observe, which requires it
      return m.stream_id == stream_id && m.seq < proven_below &&
             st_->DepSatisfied(m.stream_id, m.done_seq);
    });
  }
  AfterSync();
}

void PoolModel::OnContextSync(std::uint64_t ctx_id) {
  st_->mu.AssertHeld();
  for (auto& [id, pool] : pools_) {
    if (!pool->maybe_pending_) continue;
    Observe(*pool, [&](const FreeMark& m) {
      st_->mu.AssertHeld();  // called by Observe, which requires it
      return (ctx_id == 0 || m.ctx_id == ctx_id) && st_->DepSatisfied(m.stream_id, m.done_seq);
    });
  }
  AfterSync();
}

void PoolModel::AfterSync() {
  for (auto& [id, pool] : pools_) {
    if (pool->reserved_ > pool->release_threshold_) ReleaseAbove(*pool, pool->release_threshold_);
  }
  FinalizeDestroyed();
}

void PoolModel::ReleaseSpan(MemPool& pool) {
  Device& d = st_->device(pool.device_);
  d.bytes_in_use -= std::min<std::size_t>(d.bytes_in_use, pool.reserved_);
  pool.reserved_ = 0;
  munmap(pool.data_, pool.span_);
  pool.data_ = nullptr;
  free_spans_.push_back(Span{pool.device_, pool.base_, pool.span_});
}

void PoolModel::FinalizeDestroyed() {
  for (auto it = pools_.begin(); it != pools_.end();) {
    MemPool& pool = *it->second;
    bool done = pool.destroyed_ && pool.live_ == 0;
    for (std::size_t i = 0; done && i < pool.free_.size(); ++i) {
      const FreeMark& m = pool.free_[i].mark;
      // The device may still be using memory whose free has not completed.
      if (!m.truly_free() && !st_->DepSatisfied(m.stream_id, m.done_seq)) done = false;
    }
    if (!done) {
      ++it;
      continue;
    }
    ReleaseSpan(pool);
    it = pools_.erase(it);
  }
}

int PoolModel::LiveUserPools() const {
  st_->mu.AssertHeld();
  int n = 0;
  for (const auto& [id, pool] : pools_) n += (!pool->is_default_ && !pool->destroyed_) ? 1 : 0;
  return n;
}

std::string PoolModel::Describe() const {
  st_->mu.AssertHeld();
  std::ostringstream os;
  for (const auto& [id, pool] : pools_) {
    if (pool->is_default_ || pool->destroyed_) continue;
    os << "memory pool " << id << " on device " << pool->device_ << " (cuMemPoolCreate), "
       << pool->reserved_ << " bytes reserved, " << pool->used_ << " used by " << pool->live_
       << " allocation(s)\n";
  }
  return os.str();
}

// --- hooks ---

void PoolsOnStreamSync(DriverState* st, std::uint64_t stream_id, std::uint64_t proven_below) {
  if (PoolModel* pools = st->pools_if_used()) pools->OnStreamSync(stream_id, proven_below);
}

void PoolsOnContextSync(DriverState* st, std::uint64_t ctx_id) {
  if (PoolModel* pools = st->pools_if_used()) pools->OnContextSync(ctx_id);
}

bool PoolsMappedRun(const DriverState& st, std::uintptr_t address, MappedPoolRun* out) {
  const PoolModel* pools = st.pools_if_used();
  return pools != nullptr && pools->MappedRun(address, out);
}

bool PoolModel::MappedRun(std::uintptr_t address, MappedPoolRun* out) const {
  st_->mu.AssertHeld();
  for (const auto& [id, pool] : pools_) {
    const MemPool& p = *pool;
    if (p.data_ == nullptr || address < p.base_ || address - p.base_ >= p.span_) continue;
    std::size_t g = (address - p.base_) / kPoolGranuleBytes;
    if (g >= p.mapped_.size() || !p.mapped_[g]) return false;
    std::size_t first = g;
    std::size_t last = g;
    while (first > 0 && p.mapped_[first - 1]) --first;
    while (last + 1 < p.mapped_.size() && p.mapped_[last + 1]) ++last;
    out->base = p.base_ + first * kPoolGranuleBytes;
    out->size = (last - first + 1) * kPoolGranuleBytes;
    out->data = p.data_ + first * kPoolGranuleBytes;
    return true;
  }
  return false;
}

int PoolsLive(const DriverState& st) {
  const PoolModel* pools = st.pools_if_used();
  return pools != nullptr ? pools->LiveUserPools() : 0;
}

std::string PoolsDescribe(const DriverState& st) {
  const PoolModel* pools = st.pools_if_used();
  return pools != nullptr ? pools->Describe() : std::string();
}

}  // namespace fakecuda
