// Copyright 2026 The cuhal Authors.
//
// CachingAllocator: design and invariants (read this before changing anything below).
//
// Memory comes from the driver in SEGMENTS (cuMemAlloc) and goes back whole (cuMemFree). A
// segment is carved into BLOCKS: an address-ordered doubly linked list (prev/next) covering the
// segment exactly. A block is either allocated (one live Buffer) or free. Free blocks belong to
// exactly one CACHE: the cache of a stream S (freed in S's order, ReleaseOnStream) or the IDLE
// cache (memory the host has observed idle: freed by a Buffer's destruction, whose contract says
// no queued work uses it any more; or stream-freed memory whose free the host observed complete).
//
// Size classes (PyTorch's, which replaying bench/traces/random_mixed.jsonl confirmed):
//  - every request is rounded up to a multiple of kGranule (512 B);
//  - small requests (<= kSmallSize, 1 MiB) come from small segments of kSmallSegment (2 MiB);
//    larger ones from large segments: kLargeSegment (20 MiB) for requests below kMinLargeAlloc
//    (10 MiB), else a segment of the request rounded up to kRoundLarge (2 MiB). Small and large
//    blocks never share a segment, so short-lived small buffers do not pin large segments;
//  - best fit: a request takes the smallest free block of its class that fits (ties: the lowest
//    address), and splits off the rest as a free block when the rest is at least kGranule
//    (small) or more than kMinLargeSplitRemainder (large; a smaller rest stays in the block).
//
// Invariants (with the mutex held, between public calls):
//  I1. The blocks of a segment tile it: head->ptr == segment->ptr, b->next->ptr == b->ptr +
//      b->size, and the sizes sum to segment->size. Block sizes are multiples of kGranule.
//  I2. A free block is on exactly one cache's free lists (the lists of its segment's class, in
//      the bin of its size), and b->owner is that cache; an allocated block is on none.
//  I3. No two address neighbours are free in the same cache (a free merges with them at once).
//      Neighbours free in different caches stay apart: merging would hand one stream's memory to
//      another without the ordering rule below.
//  I4. Stream-ordering rule: a block in stream S's cache is handed out only for allocations on S
//      (stream order makes that safe), or moved to another cache only (a) to stream T's cache
//      after an event recorded on S behind the frees and a cuStreamWaitEvent of T on it, or (b)
//      to the idle cache after the host observed S's frees complete (cuEventQuery returned
//      CUDA_SUCCESS for an event recorded after them, or cuStreamSynchronize of S). Idle blocks
//      are usable by any stream and by Allocate.
//  I5. Only memory the host has observed idle goes back to the driver: a segment is freed only
//      when it is one free block in the idle cache (so every stream whose blocks it held has been
//      synchronized or queried complete; cuMemFree does not wait for pending stream work).
//  I6. stats_.reserved_current is the sum of segment sizes; used_current the sum of live
//      requested sizes; neither counts anything else.
//  I7. The cache-hit path (a fitting block in the stream's own cache or the idle cache) makes no
//      driver call and no heap allocation: block records come from a recycled free list, bins
//      are intrusive lists with bitmaps, and a stream's cache is made once, on its first use.
//
// Misses (in this order): another stream's cache holding a fitting block is handed over by
// event + wait (AllocateOnStream) or by a completed event query (Allocate); then a new segment.
// If cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY, the cached memory is given back
// (ReleaseCached: every stream with cached frees is synchronized, its blocks become idle, and
// idle segments are freed down to the release threshold) and the allocation is tried once more;
// a second failure is RESOURCE_EXHAUSTED naming the size, the stream, reserved and used bytes.
//
// Expandable segments (CachingAllocatorParams::expandable_segments, when the driver has VMM):
// each size class has one RANGE instead of segments: a Segment whose virtual addresses are
// reserved once (cuMemAddressReserve, the device's memory size) and whose `size` is the mapped
// prefix, a sequence of GROWTHS (Segment::growths), each one physical allocation of a whole
// number of VMM granules mapped whole (one cuMemCreate, one cuMemMap, one cuMemSetAccess, which
// on the H200 cost tens of microseconds each: per growth, not per granule as PyTorch's); its
// blocks tile that prefix (I1 with `size` the mapped bytes; an empty range has no blocks). A miss
// maps what the request lacks at the end (the large range: at least expandable_min_growth),
// extending the free block that ends the range when it belongs to the requesting cache or to the
// idle cache (idle memory is usable by any stream), else as a new block after it. Blocks ignore
// growth boundaries (a block may span several growths: one reservation's adjacent mappings are
// one address range to the device).
//  E1. The growths tile the mapped prefix: their sizes, in address order, sum to `size`, and
//      each is mapped with read-write access for the device; reserved_current counts them all.
//  E2. Giving memory back (Trim, the release threshold, the out-of-memory retry) unmaps and
//      releases only WHOLE growths at the end of a range, and only those that an idle free block
//      covers entirely (I5: host-idle memory only); a growth partly in use, or partly cached on
//      a stream, stays. The threshold is met growth by growth, newest first, so the last one
//      may take the cache below it (as the driver's pool gives back whole pieces).
//  E3. A growth is all or nothing: a failed cuMemMap releases the new handle, a failed
//      cuMemSetAccess unmaps and releases it (each undo tried twice, a second failure
//      reported); CUDA_ERROR_OUT_OF_MEMORY from cuMemCreate is retried once after giving back
//      the cache, as cuMemAlloc's is.

// Events: one pool (events_) of CU_EVENT_DISABLE_TIMING events, made on first need. An event is
// ready for reuse as soon as the wait on it is enqueued (cuStreamWaitEvent captures the record
// current at the call) or its query returned, so in practice the pool holds one event.
//
// Errors: every failing driver call is a Status naming the call (CUHAL_CU), the size and the
// stream; nothing is half-done: a failed record/wait moves no block, a failed cuMemFree keeps the
// segment cached (destruction tries again), a failed synchronization leaves that stream's blocks
// in its cache.
#include "core/memory/caching_allocator.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "core/driver/context_scope.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace caching_internal {

constexpr std::size_t kGranule = 512;
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kSmallSize = 1 * kMiB;
constexpr std::size_t kSmallSegment = 2 * kMiB;
constexpr std::size_t kMinLargeAlloc = 10 * kMiB;
constexpr std::size_t kLargeSegment = 20 * kMiB;
constexpr std::size_t kRoundLarge = 2 * kMiB;
constexpr std::size_t kMinLargeSplitRemainder = 1 * kMiB;

// Bins: 16 per power of two (about 6 % wide), 64 powers; a bitmap word per 64 bins.
constexpr int kSubBits = 4;
constexpr int kBins = 64 << kSubBits;
constexpr int kWords = kBins / 64;
static_assert(kWords <= 32, "the summary is 32 bits");

struct Block {
  CUdeviceptr ptr = 0;
  std::size_t size = 0;       // rounded bytes this block covers
  std::size_t requested = 0;  // allocated: the caller's size
  Segment* segment = nullptr;
  Block* prev = nullptr;  // address neighbours within the segment
  Block* next = nullptr;
  Block* free_prev = nullptr;  // free: bin list links; spare: next spare record (free_next)
  Block* free_next = nullptr;
  StreamCache* owner = nullptr;  // free: the cache whose lists hold it
  int bin = -1;
  bool allocated = false;
};

struct Segment {
  CUdeviceptr ptr = 0;
  std::size_t size = 0;  // an expandable range: the mapped bytes
  bool small = false;
  std::size_t index = 0;  // position in CachingAllocator::segments_
  Block* head = nullptr;  // null only for an expandable range with nothing mapped
  // Expandable ranges only: the reserved bytes and the growths mapped, in address order (each
  // one physical allocation mapped whole; their sizes sum to `size`).
  struct Growth {
    CUmemGenericAllocationHandle handle = 0;
    std::size_t size = 0;
  };
  bool expandable = false;
  std::size_t reserved = 0;
  std::vector<Growth> growths;
};

// The free blocks of one size class of one cache, binned by size.
struct FreeLists {
  std::uint32_t summary = 0;        // bit w: words[w] != 0
  std::uint64_t words[kWords] = {};  // bit i of word w: heads[w * 64 + i] != nullptr
  Block* heads[kBins] = {};
};

struct StreamCache {
  CUstream stream = nullptr;  // meaningless for the idle cache
  FreeLists lists[2];         // [0] small segments' blocks, [1] large
  std::size_t free_blocks = 0;
  std::uint64_t free_bytes = 0;
};

namespace {

inline int BinOf(std::size_t size) {
  const int fl = 63 - std::countl_zero(static_cast<std::uint64_t>(size));
  const int sl = static_cast<int>((size >> (fl - kSubBits)) & ((1u << kSubBits) - 1));
  return (fl << kSubBits) + sl;
}

inline void Insert(FreeLists& lists, Block* b) {
  const int bin = BinOf(b->size);
  b->bin = bin;
  b->free_prev = nullptr;
  b->free_next = lists.heads[bin];
  if (b->free_next != nullptr) b->free_next->free_prev = b;
  lists.heads[bin] = b;
  lists.words[bin >> 6] |= std::uint64_t{1} << (bin & 63);
  lists.summary |= 1u << (bin >> 6);
}

inline void Remove(FreeLists& lists, Block* b) {
  const int bin = b->bin;
  if (b->free_prev != nullptr) {
    b->free_prev->free_next = b->free_next;
  } else {
    lists.heads[bin] = b->free_next;
    if (b->free_next == nullptr) {
      std::uint64_t& word = lists.words[bin >> 6];
      word &= ~(std::uint64_t{1} << (bin & 63));
      if (word == 0) lists.summary &= ~(1u << (bin >> 6));
    }
  }
  if (b->free_next != nullptr) b->free_next->free_prev = b->free_prev;
  b->free_prev = b->free_next = nullptr;
  b->bin = -1;
}

// The first non-empty bin >= `bin`, or -1.
inline int NextNonEmpty(const FreeLists& lists, int bin) {
  if (bin >= kBins) return -1;
  int w = bin >> 6;
  std::uint64_t m = lists.words[w] & (~std::uint64_t{0} << (bin & 63));
  if (m != 0) return (w << 6) + std::countr_zero(m);
  const std::uint32_t rest = w + 1 < 32 ? lists.summary & (~0u << (w + 1)) : 0;
  if (rest == 0) return -1;
  w = std::countr_zero(rest);
  return (w << 6) + std::countr_zero(lists.words[w]);
}

inline bool Better(const Block* x, const Block* best) {
  return best == nullptr || x->size < best->size || (x->size == best->size && x->ptr < best->ptr);
}

// The smallest free block of at least `rounded` bytes (lowest address among equals), or null.
inline Block* FindBest(const FreeLists& lists, std::size_t rounded) {
  const int bin = BinOf(rounded);
  Block* best = nullptr;
  for (Block* x = lists.heads[bin]; x != nullptr; x = x->free_next) {
    if (x->size >= rounded && Better(x, best)) best = x;
  }
  if (best != nullptr) return best;
  const int next = NextNonEmpty(lists, bin + 1);
  if (next < 0) return nullptr;
  for (Block* x = lists.heads[next]; x != nullptr; x = x->free_next) {
    if (Better(x, best)) best = x;
  }
  return best;
}

inline bool IsSmall(std::size_t rounded) { return rounded <= kSmallSize; }

// The block that ends `segment`'s blocks (null for an expandable range with nothing mapped).
inline Block* LastBlock(const Segment* segment) {
  Block* b = segment->head;
  while (b != nullptr && b->next != nullptr) b = b->next;
  return b;
}

inline std::size_t RoundUp(std::size_t size, std::size_t to) { return (size + to - 1) / to * to; }

inline std::size_t SegmentSizeFor(std::size_t rounded) {
  if (IsSmall(rounded)) return kSmallSegment;
  if (rounded < kMinLargeAlloc) return kLargeSegment;
  return RoundUp(rounded, kRoundLarge);
}

std::string StreamText(CUstream stream) {
  if (stream == nullptr) return "the null stream";
  char digits[2 * sizeof(void*) + 1];
  const auto value = reinterpret_cast<std::uintptr_t>(stream);
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value, 16);
  (void)ec;
  return StrCat("stream 0x", std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

std::string Where(const StreamCache* owner) {
  return owner == nullptr ? std::string("host-idle memory") : StreamText(owner->stream);
}

constexpr char kEnterContext[] = "making the allocator's context current";

}  // namespace
}  // namespace caching_internal

using caching_internal::Block;
using caching_internal::FreeLists;
using caching_internal::Segment;
using caching_internal::StreamCache;
namespace ci = caching_internal;

StatusOr<std::unique_ptr<CachingAllocator>> CachingAllocator::Create(
    const CudaApi* api, CUcontext context, const DeviceInfo& device,
    const CachingAllocatorParams& params) {
  if (api == nullptr || context == nullptr) {
    return InvalidArgumentError("creating the caching allocator: null table or context");
  }
  return std::unique_ptr<CachingAllocator>(new CachingAllocator(api, context, device, params));
}

CachingAllocator::CachingAllocator(const CudaApi* api, CUcontext context, const DeviceInfo& device,
                                   const CachingAllocatorParams& params)
    : api_(api), context_(context), device_(device), params_(params) {
  MutexLock lock(mu_);
  idle_ = std::make_unique<StreamCache>();
}

CachingAllocator::~CachingAllocator() {
  MutexLock lock(mu_);
  StatusOr<ContextScope> scope = ContextScope::Enter(api_, context_);
  if (!scope.ok()) {
    ReportDroppedStatus(Status(scope.status()).AddContext(
        StrCat("destroying the caching allocator: ", ci::kEnterContext)));
  }
  ReportDroppedStatus(ReleaseCached(0).AddContext("destroying the caching allocator"));
  // What is left: segments with live blocks (their buffers outlive the allocator, which the
  // base class reports), or whose free or synchronization failed. Freed anyway: nothing leaks.
  // A failed free or destroy is reported and tried once more (a transient failure then leaks
  // nothing).
  for (std::unique_ptr<Segment>& segment : segments_) {
    if (segment->expandable) {
      DestroyExpandable(segment.get());
      continue;
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      ++stats_.driver_frees;
      Status freed = CUHAL_CU(api_, cuMemFree, segment->ptr);
      if (freed.ok()) break;
      ReportDroppedStatus(std::move(freed).AddContext(StrCat(
          "destroying the caching allocator: freeing a ", segment->size, "-byte segment")));
    }
  }
  segments_.clear();
  for (CUevent event : events_) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      Status destroyed = CUHAL_CU(api_, cuEventDestroy, event);
      if (destroyed.ok()) break;
      ReportDroppedStatus(
          std::move(destroyed).AddContext("destroying the caching allocator's event"));
    }
  }
  events_.clear();
  if (scope.ok()) ReportDroppedStatus(scope->Exit());
}

CachingAllocatorStatistics CachingAllocator::CacheStatistics() const {
  MutexLock lock(mu_);
  return stats_;
}

Status CachingAllocator::ResetHighWatermarks() {
  MutexLock lock(mu_);
  stats_.reserved_high = stats_.reserved_current;
  stats_.used_high = stats_.used_current;
  return OkStatus();
}

Status CachingAllocator::ForgetStream(CUstream stream) {
  MutexLock lock(mu_);
  auto it = std::find_if(streams_.begin(), streams_.end(),
                         [&](const std::unique_ptr<StreamCache>& c) { return c->stream == stream; });
  if (it == streams_.end()) return OkStatus();
  StreamCache* cache = it->get();
  if (cache->free_blocks > 0) {
    CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_),
                           ci::kEnterContext);
    ++stats_.stream_synchronizations;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuStreamSynchronize, stream),
                          "forgetting ", ci::StreamText(stream));
    MoveAll(cache, idle_.get());
    CUHAL_RETURN_IF_ERROR(scope.Exit());
  }
  if (last_stream_ == cache) last_stream_ = nullptr;
  streams_.erase(it);
  return OkStatus();
}

BufferCompatibility CachingAllocator::DoQueryCompatibility(const BufferParams& params,
                                                           std::size_t size) const {
  BufferCompatibility c;
  if (params.heap != MemoryHeap::kDeviceLocal) {
    c.refusal_code = StatusCode::kUnimplemented;
    c.refusal = StrCat("the caching allocator makes device-local memory only, not ",
                       MemoryHeapName(params.heap));
    return c;
  }
  c.device_visible = true;
  if (size > device_.total_memory) {
    c.refusal_code = StatusCode::kResourceExhausted;
    c.refusal =
        StrCat("more than the ", device_.total_memory, " bytes of device ", device_.ordinal);
    return c;
  }
  c.allocatable = true;
  return c;
}

StreamCache* CachingAllocator::CacheOf(CUstream stream) {
  if (last_stream_ != nullptr && last_stream_->stream == stream) return last_stream_;
  for (std::unique_ptr<StreamCache>& cache : streams_) {
    if (cache->stream == stream) return last_stream_ = cache.get();
  }
  streams_.push_back(std::make_unique<StreamCache>());
  streams_.back()->stream = stream;
  return last_stream_ = streams_.back().get();
}

Block* CachingAllocator::NewBlock() {
  if (spare_blocks_ == nullptr) {
    constexpr std::size_t kChunk = 256;
    block_chunks_.push_back(std::make_unique<Block[]>(kChunk));
    Block* chunk = block_chunks_.back().get();
    for (std::size_t i = 0; i < kChunk; ++i) {
      chunk[i].free_next = spare_blocks_;
      spare_blocks_ = &chunk[i];
    }
  }
  Block* b = spare_blocks_;
  spare_blocks_ = b->free_next;
  *b = Block{};
  return b;
}

void CachingAllocator::DeleteBlock(Block* block) {
  *block = Block{};
  block->free_next = spare_blocks_;
  spare_blocks_ = block;
}

Block* CachingAllocator::Take(StreamCache* owner, Block* block, std::size_t rounded) {
  FreeLists& lists = owner->lists[block->segment->small ? 0 : 1];
  ci::Remove(lists, block);
  --owner->free_blocks;
  owner->free_bytes -= block->size;
  const std::size_t rest = block->size - rounded;
  const bool split =
      block->segment->small ? rest >= ci::kGranule : rest > ci::kMinLargeSplitRemainder;
  if (split) {
    Block* tail = NewBlock();
    tail->ptr = block->ptr + rounded;
    tail->size = rest;
    tail->segment = block->segment;
    tail->prev = block;
    tail->next = block->next;
    if (block->next != nullptr) block->next->prev = tail;
    block->next = tail;
    block->size = rounded;
    // The rest's neighbours: `block` (allocated now) and block's old next, which is not free in
    // `owner` (I3), so no merge is possible.
    tail->owner = owner;
    ci::Insert(lists, tail);
    ++owner->free_blocks;
    owner->free_bytes += rest;
  }
  block->allocated = true;
  block->owner = nullptr;
  return block;
}

void CachingAllocator::Free(StreamCache* owner, Block* block) {
  FreeLists& lists = owner->lists[block->segment->small ? 0 : 1];
  block->allocated = false;
  block->requested = 0;
  Block* prev = block->prev;
  if (prev != nullptr && !prev->allocated && prev->owner == owner) {
    ci::Remove(lists, prev);
    --owner->free_blocks;
    owner->free_bytes -= prev->size;
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    DeleteBlock(block);
    block = prev;
  }
  Block* next = block->next;
  if (next != nullptr && !next->allocated && next->owner == owner) {
    ci::Remove(lists, next);
    --owner->free_blocks;
    owner->free_bytes -= next->size;
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    DeleteBlock(next);
  }
  block->owner = owner;
  ci::Insert(lists, block);
  ++owner->free_blocks;
  owner->free_bytes += block->size;
}

void CachingAllocator::MoveAll(StreamCache* from, StreamCache* to) {
  for (FreeLists& lists : from->lists) {
    for (int bin = ci::NextNonEmpty(lists, 0); bin >= 0; bin = ci::NextNonEmpty(lists, bin)) {
      Block* b = lists.heads[bin];
      ci::Remove(lists, b);
      --from->free_blocks;
      from->free_bytes -= b->size;
      Free(to, b);
    }
  }
}

StatusOr<CUevent> CachingAllocator::AcquireEvent() {
  if (events_.empty()) {
    CUevent event = nullptr;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING),
                          "creating the allocator's event");
    events_.push_back(event);
  }
  return events_.front();
}

Status CachingAllocator::BorrowFromOtherStreams(StreamCache* to, std::size_t rounded) {
  const int cls = ci::IsSmall(rounded) ? 0 : 1;
  for (std::unique_ptr<StreamCache>& cache : streams_) {
    StreamCache* from = cache.get();
    if (from == to || from->free_blocks == 0) continue;
    if (ci::FindBest(from->lists[cls], rounded) == nullptr) continue;
    const auto context = [&] {
      return StrCat("handing the blocks cached on ", ci::StreamText(from->stream), " to ",
                    ci::StreamText(to->stream), " for ", rounded, " bytes");
    };
    CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), context(),
                           ": ", ci::kEnterContext);
    CUHAL_ASSIGN_OR_RETURN(CUevent event, AcquireEvent(), context());
    ++stats_.event_records;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuEventRecord, event, from->stream), context());
    ++stats_.stream_waits;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuStreamWaitEvent, to->stream, event, 0), context());
    MoveAll(from, to);  // `to` is ordered behind every free cached on `from` (I4 a)
    return scope.Exit().AddContext(context());
  }
  return OkStatus();
}

Status CachingAllocator::ReclaimCompleted(std::size_t rounded) {
  const int cls = ci::IsSmall(rounded) ? 0 : 1;
  for (std::unique_ptr<StreamCache>& cache : streams_) {
    StreamCache* from = cache.get();
    if (from->free_blocks == 0) continue;
    if (ci::FindBest(from->lists[cls], rounded) == nullptr) continue;
    const auto context = [&] {
      return StrCat("checking whether the frees cached on ", ci::StreamText(from->stream),
                    " completed, for ", rounded, " bytes");
    };
    CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), context(),
                           ": ", ci::kEnterContext);
    CUHAL_ASSIGN_OR_RETURN(CUevent event, AcquireEvent(), context());
    ++stats_.event_records;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuEventRecord, event, from->stream), context());
    ++stats_.event_queries;
    const CUresult queried = api_->cuEventQuery == nullptr ? CUDA_ERROR_NOT_SUPPORTED
                                                           : api_->cuEventQuery(event);
    if (queried == CUDA_ERROR_NOT_READY) continue;  // still pending: try the next stream
    CUHAL_RETURN_IF_ERROR(CudaResultToStatus(api_, queried, "cuEventQuery"), context());
    MoveAll(from, idle_.get());  // the host observed the frees complete (I4 b)
    return scope.Exit().AddContext(context());
  }
  return OkStatus();
}

StatusOr<Block*> CachingAllocator::Grow(StreamCache* owner, std::size_t rounded) {
  CUHAL_ASSIGN_OR_RETURN(const bool expandable, UseExpandable(),
                         "deciding on expandable segments for ", rounded, " bytes");
  if (expandable) return GrowExpandable(owner, rounded);
  const std::size_t segment_size = ci::SegmentSizeFor(rounded);
  const StreamCache* const idle = idle_.get();  // lambdas are outside the lock analysis
  const auto context = [&] {
    return StrCat("allocating a ", segment_size, "-byte segment for ", rounded, " bytes on ",
                  ci::Where(owner == idle ? nullptr : owner));
  };
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), context(),
                         ": ", ci::kEnterContext);
  CUdeviceptr ptr = 0;
  // The count stays outside the lambda: the lock analysis does not see into lambdas.
  const auto allocate = [&]() -> CUresult {
    return api_->cuMemAlloc == nullptr ? CUDA_ERROR_NOT_SUPPORTED
                                       : api_->cuMemAlloc(&ptr, segment_size);
  };
  ++stats_.driver_allocations;
  CUresult result = allocate();
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    // Give back what is cached (synchronizing the streams that freed it) and try once more.
    const std::uint64_t keep = KeepWhenReleasing();
    Status released = ReleaseCached(keep);
    if (!released.ok()) {
      ReportDroppedStatus(std::move(released).AddContext(
          StrCat(context(), ": giving back cached memory after CUDA_ERROR_OUT_OF_MEMORY")));
    }
    ++stats_.driver_allocations;
    result = allocate();
    if (result != CUDA_SUCCESS) {
      return Status(StatusCode::kResourceExhausted,
                    StrCat(context(), ": out of device memory after giving back the cache (",
                           stats_.reserved_current, " bytes reserved, ", stats_.used_current,
                           " bytes used): ",
                           CudaResultToStatus(api_, result, "cuMemAlloc").message()));
    }
  }
  Status allocated = CudaResultToStatus(api_, result, "cuMemAlloc");
  CUHAL_RETURN_IF_ERROR(allocated, context());
  auto segment = std::make_unique<Segment>();
  segment->ptr = ptr;
  segment->size = segment_size;
  segment->small = ci::IsSmall(rounded);
  segment->index = segments_.size();
  Block* b = NewBlock();
  b->ptr = ptr;
  b->size = segment_size;
  b->segment = segment.get();
  segment->head = b;
  segments_.push_back(std::move(segment));
  stats_.reserved_current += segment_size;
  stats_.reserved_high = std::max(stats_.reserved_high, stats_.reserved_current);
  ++stats_.segments_current;
  b->owner = owner;
  ci::Insert(owner->lists[b->segment->small ? 0 : 1], b);
  ++owner->free_blocks;
  owner->free_bytes += segment_size;
  if (Status exited = scope.Exit(); !exited.ok()) {
    return std::move(exited).AddContext(context());  // the segment stays cached
  }
  return b;
}

namespace {

CUmemAllocationProp PageProperties(int ordinal) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  return prop;
}

}  // namespace

std::uint64_t CachingAllocator::KeepWhenReleasing() const {
  // UINT64_MAX keeps everything until Trim, which then gives everything back.
  return params_.release_threshold == std::numeric_limits<std::uint64_t>::max()
             ? 0
             : params_.release_threshold;
}

StatusOr<bool> CachingAllocator::UseExpandable() {
  if (expandable_ != Expandable::kUndecided) return expandable_ == Expandable::kYes;
  expandable_ = Expandable::kNo;
  if (!params_.expandable_segments) return false;
  const CudaApi& a = *api_;
  if (a.cuMemGetAllocationGranularity == nullptr || a.cuMemCreate == nullptr ||
      a.cuMemRelease == nullptr || a.cuMemAddressReserve == nullptr ||
      a.cuMemAddressFree == nullptr || a.cuMemMap == nullptr || a.cuMemUnmap == nullptr ||
      a.cuMemSetAccess == nullptr || a.cuDeviceGetAttribute == nullptr) {
    return false;  // classic segments: the table has no VMM
  }
  int supported = 0;
  Status asked = CUHAL_CU(api_, cuDeviceGetAttribute, &supported,
                          CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device_.device);
  if (!asked.ok()) {
    expandable_ = Expandable::kUndecided;  // asked again next time
    return asked;
  }
  if (supported == 0) return false;
  const CUmemAllocationProp prop = PageProperties(device_.ordinal);
  std::size_t granularity = 0;
  Status sized = CUHAL_CU(api_, cuMemGetAllocationGranularity, &granularity, &prop,
                          CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  if (!sized.ok()) {
    expandable_ = Expandable::kUndecided;
    return sized;
  }
  if (granularity == 0 || granularity % ci::kGranule != 0) {
    return InternalError(StrCat("cuMemGetAllocationGranularity answered ", granularity,
                                " bytes, not a multiple of ", ci::kGranule));
  }
  page_size_ = granularity;
  expandable_ = Expandable::kYes;
  stats_.expandable = true;
  return true;
}

Status CachingAllocator::MapGrowth(Segment* segment, std::size_t bytes, bool* out_of_memory) {
  *out_of_memory = false;
  const CUmemAllocationProp prop = PageProperties(device_.ordinal);
  const CUdeviceptr at = segment->ptr + segment->size;
  CUmemGenericAllocationHandle handle = 0;
  ++stats_.driver_allocations;
  const CUresult created = api_->cuMemCreate(&handle, bytes, &prop, 0);
  if (created != CUDA_SUCCESS) {
    *out_of_memory = created == CUDA_ERROR_OUT_OF_MEMORY;
    return CudaResultToStatus(api_, created, "cuMemCreate");
  }
  // Undoing (newest first); each call is tried twice, a failure reported: nothing leaks unless
  // the driver fails the same call twice.
  const auto twice = [&](const auto& call) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      Status done = call();
      if (done.ok()) return;
      ReportDroppedStatus(
          std::move(done).AddContext("undoing a failed growth of an expandable range"));
    }
  };
  // Counted outside the lambdas: the lock analysis does not see into them.
  std::uint64_t undo_unmaps = 0, undo_releases = 0;
  const auto release = [&] {
    twice([&] {
      ++undo_releases;
      return CUHAL_CU(api_, cuMemRelease, handle);
    });
  };
  ++stats_.vmm_maps;
  if (Status mapped = CUHAL_CU(api_, cuMemMap, at, bytes, 0, handle, 0); !mapped.ok()) {
    release();
    stats_.driver_frees += undo_releases;
    return mapped;
  }
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device_.ordinal;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (Status opened = CUHAL_CU(api_, cuMemSetAccess, at, bytes, &access, 1); !opened.ok()) {
    twice([&] {
      ++undo_unmaps;
      return CUHAL_CU(api_, cuMemUnmap, at, bytes);
    });
    release();
    stats_.vmm_unmaps += undo_unmaps;
    stats_.driver_frees += undo_releases;
    return opened;
  }
  segment->growths.push_back({handle, bytes});
  return OkStatus();
}

StatusOr<Block*> CachingAllocator::GrowExpandable(StreamCache* owner, std::size_t rounded) {
  const int cls = ci::IsSmall(rounded) ? 0 : 1;
  StreamCache* const idle = idle_.get();
  const auto context = [&] {
    return StrCat("growing the ", cls == 0 ? "small" : "large", " expandable range for ",
                  rounded, " bytes on ", ci::Where(owner == idle ? nullptr : owner));
  };
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), context(),
                         ": ", ci::kEnterContext);
  Segment* range = ranges_[cls];
  if (range == nullptr) {
    const std::size_t reserve = ci::RoundUp(std::max(device_.total_memory, page_size_), page_size_);
    CUdeviceptr ptr = 0;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemAddressReserve, &ptr, reserve, 0, 0, 0), context(),
                          ": reserving ", reserve, " bytes of addresses");
    auto segment = std::make_unique<Segment>();
    segment->ptr = ptr;
    segment->small = cls == 0;
    segment->expandable = true;
    segment->reserved = reserve;
    segment->index = segments_.size();
    range = ranges_[cls] = segment.get();
    segments_.push_back(std::move(segment));
    ++stats_.segments_current;
  }
  // The free block that ends the range, when this request may extend it.
  const auto extendable = [&]() -> Block* {
    Block* tail = ci::LastBlock(range);
    if (tail == nullptr || tail->allocated) return nullptr;
    return tail->owner == owner || tail->owner == idle ? tail : nullptr;
  };
  const std::size_t page = page_size_;  // (the lock analysis does not see into lambdas)
  // (The small range grows by what it lacks: its requests are at most 1 MiB, one granule.)
  const std::size_t least =
      cls == 0 ? 0
               : ci::RoundUp(static_cast<std::size_t>(std::min<std::uint64_t>(
                                 params_.expandable_min_growth, range->reserved)),
                             page);
  // The bytes to map: what the request lacks beyond the extendable tail, rounded up to pages;
  // at least `least` as far as the reserved addresses leave room.
  const auto growth = [&](const Block* tail) -> std::size_t {
    const std::size_t have = tail == nullptr ? 0 : tail->size;
    const std::size_t lacking = ci::RoundUp(rounded - std::min(rounded, have), page);
    const std::size_t room = range->reserved - range->size;
    return std::max(lacking, std::min(least, room));
  };
  std::size_t bytes = growth(extendable());
  if (bytes > range->reserved - range->size) {
    return Status(StatusCode::kResourceExhausted,
                  StrCat(context(), ": the range's ", range->reserved,
                         " reserved bytes are all mapped"));
  }
  bool out_of_memory = false;
  Status mapped = MapGrowth(range, bytes, &out_of_memory);
  if (!mapped.ok() && out_of_memory) {
    const std::uint64_t keep = KeepWhenReleasing();
    Status released = ReleaseCached(keep);
    if (!released.ok()) {
      ReportDroppedStatus(std::move(released).AddContext(
          StrCat(context(), ": giving back cached memory after CUDA_ERROR_OUT_OF_MEMORY")));
    }
    bytes = growth(extendable());  // giving back may have unmapped the tail
    if (bytes > range->reserved - range->size) {
      return Status(StatusCode::kResourceExhausted,
                    StrCat(context(), ": the range's ", range->reserved,
                           " reserved bytes are all mapped"));
    }
    mapped = MapGrowth(range, bytes, &out_of_memory);
    if (!mapped.ok() && out_of_memory) {
      return Status(StatusCode::kResourceExhausted,
                    StrCat(context(), ": out of device memory after giving back the cache (",
                           stats_.reserved_current, " bytes reserved, ", stats_.used_current,
                           " bytes used): ", mapped.message()));
    }
  }
  CUHAL_RETURN_IF_ERROR(mapped, context(), ": mapping ", bytes, " bytes");
  const std::size_t grown = bytes;
  Block* tail = extendable();
  if (tail != nullptr) {
    StreamCache* from = tail->owner;
    ci::Remove(from->lists[cls], tail);
    --from->free_blocks;
    from->free_bytes -= tail->size;
    tail->size += grown;
  } else {
    Block* last = ci::LastBlock(range);
    tail = NewBlock();
    tail->ptr = range->ptr + range->size;
    tail->size = grown;
    tail->segment = range;
    tail->prev = last;
    if (last != nullptr) {
      last->next = tail;
    } else {
      range->head = tail;
    }
  }
  range->size += grown;
  stats_.reserved_current += grown;
  stats_.reserved_high = std::max(stats_.reserved_high, stats_.reserved_current);
  tail->owner = owner;
  ci::Insert(owner->lists[cls], tail);
  ++owner->free_blocks;
  owner->free_bytes += tail->size;
  if (Status exited = scope.Exit(); !exited.ok()) {
    return std::move(exited).AddContext(context());  // the pages stay mapped and cached
  }
  return tail;
}

std::uint64_t CachingAllocator::IdleTailBytes(const Segment* segment) const {
  const Block* tail = ci::LastBlock(segment);
  if (tail == nullptr || tail->allocated || tail->owner != idle_.get()) return 0;
  const std::size_t offset = static_cast<std::size_t>(tail->ptr - segment->ptr);
  std::size_t end = segment->size;
  for (auto it = segment->growths.rbegin(); it != segment->growths.rend(); ++it) {
    if (end - it->size < offset) break;  // the growth holds memory before the idle tail
    end -= it->size;
  }
  return segment->size - end;
}

Status CachingAllocator::UnmapIdleTail(Segment* segment, std::uint64_t wanted,
                                       std::uint64_t* released) {
  *released = 0;
  const std::uint64_t idle_bytes = IdleTailBytes(segment);
  if (idle_bytes == 0 || wanted == 0) return OkStatus();
  Block* tail = ci::LastBlock(segment);  // not null: IdleTailBytes found growths
  const int cls = segment->small ? 0 : 1;
  StreamCache* idle = idle_.get();
  ci::Remove(idle->lists[cls], tail);
  --idle->free_blocks;
  idle->free_bytes -= tail->size;
  Status first;
  while (*released < wanted && *released < idle_bytes) {
    const Segment::Growth last = segment->growths.back();
    const CUdeviceptr at = segment->ptr + segment->size - last.size;
    ++stats_.vmm_unmaps;
    if (Status unmapped = CUHAL_CU(api_, cuMemUnmap, at, last.size); !unmapped.ok()) {
      first = std::move(unmapped).AddContext(
          StrCat("giving back ", last.size, " bytes at the end of an expandable range"));
      break;  // the growth stays mapped and cached: destruction tries again
    }
    ++stats_.driver_frees;
    Status freed = CUHAL_CU(api_, cuMemRelease, last.handle);
    if (!freed.ok()) {
      ++stats_.driver_frees;
      freed = CUHAL_CU(api_, cuMemRelease, last.handle);  // once more, then reported
      if (!freed.ok()) {
        ReportDroppedStatus(std::move(freed).AddContext(StrCat(
            "releasing ", last.size, " unmapped bytes of an expandable range (they leak)")));
      }
    }
    segment->growths.pop_back();
    segment->size -= last.size;
    tail->size -= last.size;
    stats_.reserved_current -= last.size;
    *released += last.size;
  }
  if (tail->size == 0) {
    if (tail->prev != nullptr) {
      tail->prev->next = nullptr;
    } else {
      segment->head = nullptr;
    }
    DeleteBlock(tail);
  } else {
    ci::Insert(idle->lists[cls], tail);
    ++idle->free_blocks;
    idle->free_bytes += tail->size;
  }
  return first;
}

void CachingAllocator::DestroyExpandable(Segment* segment) {
  const auto twice = [&](const auto& call, const char* what) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      Status done = call();
      if (done.ok()) return;
      ReportDroppedStatus(std::move(done).AddContext(
          StrCat("destroying the caching allocator: ", what, " of an expandable range")));
    }
  };
  std::size_t end = segment->size;
  for (auto it = segment->growths.rbegin(); it != segment->growths.rend(); ++it) {
    end -= it->size;
    const CUdeviceptr at = segment->ptr + end;
    const Segment::Growth growth = *it;
    ++stats_.vmm_unmaps;
    twice([&] { return CUHAL_CU(api_, cuMemUnmap, at, growth.size); }, "unmapping a growth");
    ++stats_.driver_frees;
    twice([&] { return CUHAL_CU(api_, cuMemRelease, growth.handle); }, "releasing a growth");
  }
  segment->growths.clear();
  twice([&] { return CUHAL_CU(api_, cuMemAddressFree, segment->ptr, segment->reserved); },
        "freeing the addresses");
}

Status CachingAllocator::FreeSegment(Segment* segment) {
  Block* b = segment->head;
  StreamCache* idle = idle_.get();
  ci::Remove(idle->lists[segment->small ? 0 : 1], b);
  --idle->free_blocks;
  idle->free_bytes -= b->size;
  ++stats_.driver_frees;
  if (Status freed = CUHAL_CU(api_, cuMemFree, segment->ptr); !freed.ok()) {
    ci::Insert(idle->lists[segment->small ? 0 : 1], b);  // kept: destruction tries again
    ++idle->free_blocks;
    idle->free_bytes += b->size;
    return std::move(freed).AddContext(StrCat("freeing a ", segment->size, "-byte segment"));
  }
  DeleteBlock(b);
  stats_.reserved_current -= segment->size;
  --stats_.segments_current;
  const std::size_t index = segment->index;
  if (index + 1 != segments_.size()) {
    segments_[index] = std::move(segments_.back());
    segments_[index]->index = index;
  }
  segments_.pop_back();  // destroys `segment`
  return OkStatus();
}

Status CachingAllocator::ReleaseCached(std::uint64_t keep) {
  Status first;
  const auto note = [&](Status s) {
    if (s.ok()) return;
    if (first.ok()) {
      first = std::move(s);
    } else {
      ReportDroppedStatus(s);
    }
  };
  std::optional<ContextScope> scope;
  const auto enter = [&]() -> bool {
    if (scope) return true;
    StatusOr<ContextScope> entered = ContextScope::Enter(api_, context_);
    if (!entered.ok()) {
      note(Status(entered.status()).AddContext(ci::kEnterContext));
      return false;
    }
    scope.emplace(std::move(*entered));
    return true;
  };
  // 1. Every stream with cached frees: synchronize; its blocks become idle (I4 b).
  for (std::unique_ptr<StreamCache>& cache : streams_) {
    if (cache->free_blocks == 0) continue;
    if (!enter()) return first;
    ++stats_.stream_synchronizations;
    Status synced = CUHAL_CU(api_, cuStreamSynchronize, cache->stream);
    if (!synced.ok()) {
      note(std::move(synced).AddContext(StrCat("waiting for the frees cached on ",
                                               ci::StreamText(cache->stream))));
      continue;
    }
    MoveAll(cache.get(), idle_.get());
  }
  // 2. Idle segments (one free idle block), largest first, until at most `keep` bytes stay.
  std::vector<Segment*> idle_segments;
  std::uint64_t cached = 0;
  std::uint64_t tails = 0;  // what the expandable ranges could give back
  for (std::unique_ptr<Segment>& segment : segments_) {
    if (segment->expandable) {
      tails += IdleTailBytes(segment.get());
      continue;
    }
    const Block* head = segment->head;
    if (head->next == nullptr && !head->allocated && head->owner == idle_.get()) {
      idle_segments.push_back(segment.get());
      cached += segment->size;
    }
  }
  std::sort(idle_segments.begin(), idle_segments.end(),
            [](const Segment* a, const Segment* b) { return a->size > b->size; });
  cached += tails;
  for (Segment* segment : idle_segments) {
    if (cached <= keep) break;
    const std::size_t size = segment->size;
    if (!enter()) return first;
    Status freed = FreeSegment(segment);
    if (freed.ok()) cached -= size;
    note(std::move(freed));
  }
  // 3. Whole idle growths at the end of the expandable ranges, newest first, until at most
  //    `keep` bytes stay (the last one may take the cache below `keep`).
  for (Segment* range : ranges_) {
    if (range == nullptr || cached <= keep || IdleTailBytes(range) == 0) continue;
    if (!enter()) return first;
    std::uint64_t released = 0;
    note(UnmapIdleTail(range, cached - keep, &released));
    cached -= std::min(cached, released);
  }
  if (scope) note(scope->Exit());
  return first;
}

StatusOr<Block*> CachingAllocator::Acquire(StreamCache* owner, std::size_t rounded) {
  const int cls = ci::IsSmall(rounded) ? 0 : 1;
  StreamCache* idle = idle_.get();
  if (owner != nullptr) {
    if (Block* b = ci::FindBest(owner->lists[cls], rounded); b != nullptr) {
      ++stats_.cache_hits;
      return Take(owner, b, rounded);
    }
  }
  if (Block* b = ci::FindBest(idle->lists[cls], rounded); b != nullptr) {
    ++stats_.cache_hits;
    return Take(idle, b, rounded);
  }
  ++stats_.cache_misses;
  if (owner != nullptr) {
    CUHAL_RETURN_IF_ERROR(BorrowFromOtherStreams(owner, rounded));
    if (Block* b = ci::FindBest(owner->lists[cls], rounded); b != nullptr) {
      return Take(owner, b, rounded);
    }
  } else {
    CUHAL_RETURN_IF_ERROR(ReclaimCompleted(rounded));
    if (Block* b = ci::FindBest(idle->lists[cls], rounded); b != nullptr) {
      return Take(idle, b, rounded);
    }
  }
  StreamCache* target = owner != nullptr ? owner : idle;
  CUHAL_ASSIGN_OR_RETURN(Block * b, Grow(target, rounded));
  return Take(target, b, rounded);
}

namespace {

inline std::size_t RoundRequest(std::size_t size) {
  return size <= ci::kGranule ? ci::kGranule : ci::RoundUp(size, ci::kGranule);
}

}  // namespace

StatusOr<Allocation> CachingAllocator::DoAllocate(const BufferParams& params, std::size_t size) {
  if (params.heap != MemoryHeap::kDeviceLocal) {
    return UnimplementedError("the caching allocator makes device-local memory only");
  }
  MutexLock lock(mu_);
  CUHAL_ASSIGN_OR_RETURN(Block * b, Acquire(nullptr, RoundRequest(size)));
  b->requested = size;
  stats_.used_current += size;
  stats_.used_high = std::max(stats_.used_high, stats_.used_current);
  Allocation allocation;
  allocation.heap = MemoryHeap::kDeviceLocal;
  allocation.pool = params.pool;
  allocation.device_ptr = b->ptr;
  allocation.size = size;
  allocation.allocator_data = reinterpret_cast<std::uintptr_t>(b);
  return allocation;
}

StatusOr<Allocation> CachingAllocator::DoImport(const BufferParams&, void*, std::size_t) {
  return UnimplementedError("the caching allocator does not import host memory");
}

Status CachingAllocator::DoRelease(const Allocation& allocation) noexcept {
  auto* b = reinterpret_cast<Block*>(allocation.allocator_data);
  MutexLock lock(mu_);
  if (b == nullptr || !b->allocated || b->ptr != allocation.device_ptr) {
    return InternalError("releasing an allocation the caching allocator did not make");
  }
  stats_.used_current -= b->requested;
  Free(idle_.get(), b);  // the Buffer's contract: no queued work uses it any more
  return OkStatus();
}

Status CachingAllocator::DoTrim() {
  MutexLock lock(mu_);
  const std::uint64_t keep = KeepWhenReleasing();
  return ReleaseCached(keep);
}

StatusOr<Allocation> CachingAllocator::DoAllocateOnStream(const BufferParams& params,
                                                          std::size_t size, CUstream stream) {
  MutexLock lock(mu_);
  CUHAL_ASSIGN_OR_RETURN(Block * b, Acquire(CacheOf(stream), RoundRequest(size)));
  b->requested = size;
  stats_.used_current += size;
  stats_.used_high = std::max(stats_.used_high, stats_.used_current);
  Allocation allocation;
  allocation.heap = MemoryHeap::kDeviceLocal;
  allocation.pool = params.pool;
  allocation.device_ptr = b->ptr;
  allocation.size = size;
  allocation.allocator_data = reinterpret_cast<std::uintptr_t>(b);
  return allocation;
}

Status CachingAllocator::DoReleaseOnStream(const Allocation& allocation, CUstream stream) {
  auto* b = reinterpret_cast<Block*>(allocation.allocator_data);
  MutexLock lock(mu_);
  if (b == nullptr || !b->allocated || b->ptr != allocation.device_ptr) {
    return InternalError("releasing an allocation the caching allocator did not make");
  }
  stats_.used_current -= b->requested;
  Free(CacheOf(stream), b);
  return OkStatus();
}

}  // namespace cuhal
