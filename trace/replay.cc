// Copyright 2026 The cuhal Authors.
#include "trace/replay.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "core/driver/context_scope.h"
#include "core/memory/buffer.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/cuda_allocator.h"
#include "core/memory/memory_pool.h"
#include "core/symbols/api_status.h"
#include "trace/counting_cuda_api.h"
#include "trace/replay_backends.h"

namespace cuhal::trace {
namespace {

constexpr std::array<ReplayAllocatorKind, 5> kKinds = {
    ReplayAllocatorKind::kDriverPool, ReplayAllocatorKind::kCore,
    ReplayAllocatorKind::kCoreExpandable, ReplayAllocatorKind::kCorePool,
    ReplayAllocatorKind::kPyTorch};

constexpr std::uint64_t kKeepEverything = std::numeric_limits<std::uint64_t>::max();

// "free id 3 on stream 1", for error context.
std::string DescribeOp(const TraceOp& op) {
  switch (op.kind) {
    case TraceOpKind::kAlloc:
      return StrCat("alloc id ", op.id, " of ", op.size, " bytes on stream ", op.stream);
    case TraceOpKind::kFree:
      return StrCat("free id ", op.id, " on stream ", op.stream);
    case TraceOpKind::kRecord:
      return StrCat("record event ", op.event, " on stream ", op.stream);
    case TraceOpKind::kWait:
      return StrCat("wait for event ", op.event, " on stream ", op.stream);
    case TraceOpKind::kSync:
      return op.stream < 0 ? std::string("sync of every stream")
                           : StrCat("sync of stream ", op.stream);
  }
  return "unknown op";
}

std::string OpContext(const AllocTrace& trace, std::size_t index, const TraceOp& op) {
  return StrCat(trace.name, ".jsonl:", op.line, ": op ", index, " (", DescribeOp(op), ")");
}

// ---------------------------------------------------------------------------------------------
// driver-pool: a pool of its own, straight on the driver.
class DriverPoolAllocator final : public ReplayAllocator {
 public:
  static StatusOr<std::unique_ptr<ReplayAllocator>> Create(const ReplayTarget& target,
                                                           const CudaApi* api, int streams) {
    std::unique_ptr<DriverPoolAllocator> a(new DriverPoolAllocator(api, target.context));
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = target.device.ordinal;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuMemPoolCreate, &a->pool_, &props));
    cuuint64_t threshold = kKeepEverything;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuMemPoolSetAttribute, a->pool_,
                                   CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
                          "setting the release threshold to UINT64_MAX");
    CUHAL_RETURN_IF_ERROR(a->CreateStreams(streams));
    return std::unique_ptr<ReplayAllocator>(std::move(a));
  }
  ~DriverPoolAllocator() override { ReportDroppedStatus(Close()); }
  DriverPoolAllocator(const DriverPoolAllocator&) = delete;             // owns a pool
  DriverPoolAllocator& operator=(const DriverPoolAllocator&) = delete;  // ditto

 private:
  DriverPoolAllocator(const CudaApi* api, CUcontext context)
      : ReplayAllocator(ReplayAllocatorKind::kDriverPool, api, context) {}

  StatusOr<std::uintptr_t> DoAlloc(std::uint64_t size, CUstream stream) override {
    CUdeviceptr ptr = 0;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api(), cuMemAllocFromPoolAsync, &ptr, size, pool_, stream));
    return static_cast<std::uintptr_t>(ptr);
  }
  Status DoFree(std::uintptr_t handle, CUstream, CUstream stream) override {
    return CUHAL_CU(api(), cuMemFreeAsync, static_cast<CUdeviceptr>(handle), stream);
  }
  StatusOr<ReplayFootprint> DoFootprint() const override {
    ReplayFootprint f;
    const std::pair<CUmemPool_attribute, std::uint64_t*> attrs[] = {
        {CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &f.reserved_current},
        {CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &f.reserved_high},
        {CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &f.used_current},
        {CU_MEMPOOL_ATTR_USED_MEM_HIGH, &f.used_high}};
    for (const auto& [attr, out] : attrs) {
      cuuint64_t value = 0;
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api(), cuMemPoolGetAttribute, pool_, attr, &value));
      *out = value;
    }
    return f;
  }
  Status DoClose() override {
    if (pool_ == nullptr) return OkStatus();
    CUmemoryPool pool = std::exchange(pool_, nullptr);
    return CUHAL_CU(api(), cuMemPoolDestroy, pool);
  }

  CUmemoryPool pool_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Buffers of the core allocators, by slot (recycled: no heap allocation in steady state).
class BufferSlots {
 public:
  std::uintptr_t Put(Buffer buffer) {
    if (free_.empty()) {
      slots_.push_back(std::move(buffer));
      return slots_.size() - 1;
    }
    const std::size_t slot = free_.back();
    free_.pop_back();
    slots_[slot] = std::move(buffer);
    return slot;
  }
  Buffer& at(std::uintptr_t slot) { return slots_[slot]; }
  void Recycle(std::uintptr_t slot) { free_.push_back(slot); }
  // Destroys every buffer still held (host-timeline frees).
  void Clear() {
    slots_.clear();
    free_.clear();
  }

 private:
  std::vector<Buffer> slots_;
  std::vector<std::size_t> free_;
};

const BufferParams kPoolBufferParams{.heap = MemoryHeap::kDeviceLocal,
                                     .pool = MemoryPoolKind::kDeviceLocal};

// The core allocators' common part: stream-ordered buffers of a cuhal::Allocator (set by the
// implementation once it made it), held by slot. The implementation's DoClose calls
// ReleaseBuffers before it destroys its allocator.
class CoreReplayAllocator : public ReplayAllocator {
 protected:
  using ReplayAllocator::ReplayAllocator;
  void set_core(Allocator* core) { core_ = core; }
  void ReleaseBuffers() { buffers_.Clear(); }

 private:
  StatusOr<std::uintptr_t> DoAlloc(std::uint64_t size, CUstream stream) final {
    CUHAL_ASSIGN_OR_RETURN(Buffer buffer, core_->AllocateOnStream(kPoolBufferParams, size, stream));
    return buffers_.Put(std::move(buffer));
  }
  Status DoFree(std::uintptr_t handle, CUstream, CUstream stream) final {
    CUHAL_RETURN_IF_ERROR(core_->ReleaseOnStream(buffers_.at(handle), stream));
    buffers_.Recycle(handle);
    return OkStatus();
  }

  Allocator* core_ = nullptr;
  BufferSlots buffers_;
};

// core and core-expandable: cuhal::CachingAllocator (classic or expandable segments).
class CoreCachingAllocator final : public CoreReplayAllocator {
 public:
  static StatusOr<std::unique_ptr<ReplayAllocator>> Create(const ReplayTarget& target,
                                                           const CudaApi* api, int streams,
                                                           bool expandable) {
    std::unique_ptr<CoreCachingAllocator> a(new CoreCachingAllocator(
        expandable ? ReplayAllocatorKind::kCoreExpandable : ReplayAllocatorKind::kCore, api,
        target.context));
    CUHAL_ASSIGN_OR_RETURN(
        a->allocator_,
        CachingAllocator::Create(
            api, target.context, target.device,
            CachingAllocatorParams{.expandable_segments = expandable,
                                   .expandable_min_growth = target.expandable_min_growth}));
    a->set_core(a->allocator_.get());
    CUHAL_RETURN_IF_ERROR(a->CreateStreams(streams));
    return std::unique_ptr<ReplayAllocator>(std::move(a));
  }
  ~CoreCachingAllocator() override { ReportDroppedStatus(Close()); }
  CoreCachingAllocator(const CoreCachingAllocator&) = delete;             // owns an allocator
  CoreCachingAllocator& operator=(const CoreCachingAllocator&) = delete;  // ditto

 private:
  CoreCachingAllocator(ReplayAllocatorKind kind, const CudaApi* api, CUcontext context)
      : CoreReplayAllocator(kind, api, context) {}

  StatusOr<ReplayFootprint> DoFootprint() const override {
    const CachingAllocatorStatistics s = allocator_->CacheStatistics();
    return ReplayFootprint{.reserved_current = s.reserved_current,
                           .reserved_high = s.reserved_high,
                           .used_current = s.used_current,
                           .used_high = s.used_high};
  }
  Status DoClose() override {
    ReleaseBuffers();
    // Synchronizes the streams with cached frees and frees every segment (before the streams go).
    allocator_.reset();
    return OkStatus();
  }

  std::unique_ptr<CachingAllocator> allocator_;
};

// core-pool: cuhal::CudaAllocator's queue-ordered path over the device's pools.
class CorePoolAllocator final : public CoreReplayAllocator {
 public:
  static StatusOr<std::unique_ptr<ReplayAllocator>> Create(const ReplayTarget& target,
                                                           const CudaApi* api, int streams) {
    std::unique_ptr<CorePoolAllocator> a(new CorePoolAllocator(api, target.context));
    CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api, target.context));
    CUHAL_ASSIGN_OR_RETURN(
        a->pools_,
        MemoryPools::Create(api, target.device.device,
                            MemoryPoolParams{.release_threshold = kKeepEverything},
                            MemoryPoolParams{}));
    CUHAL_RETURN_IF_ERROR(scope.Exit());
    CUHAL_ASSIGN_OR_RETURN(a->allocator_, CudaAllocator::Create(api, target.context,
                                                                target.device, a->pools_.get()));
    a->set_core(a->allocator_.get());
    CUHAL_RETURN_IF_ERROR(a->CreateStreams(streams));
    return std::unique_ptr<ReplayAllocator>(std::move(a));
  }
  ~CorePoolAllocator() override { ReportDroppedStatus(Close()); }
  CorePoolAllocator(const CorePoolAllocator&) = delete;             // owns an allocator
  CorePoolAllocator& operator=(const CorePoolAllocator&) = delete;  // ditto

 private:
  CorePoolAllocator(const CudaApi* api, CUcontext context)
      : CoreReplayAllocator(ReplayAllocatorKind::kCorePool, api, context) {}

  StatusOr<ReplayFootprint> DoFootprint() const override {
    CUHAL_ASSIGN_OR_RETURN(MemoryPoolStatistics s, pools_->device_local().QueryStatistics());
    return ReplayFootprint{.reserved_current = s.reserved_current,
                           .reserved_high = s.reserved_high,
                           .used_current = s.used_current,
                           .used_high = s.used_high};
  }
  Status DoClose() override {
    ReleaseBuffers();
    allocator_.reset();  // destroys its allocation stream
    if (pools_ == nullptr) return OkStatus();
    CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api(), context()));
    Status status = pools_->device_local().Destroy();
    Status other = pools_->other().Destroy();
    pools_.reset();
    if (status.ok()) status = std::move(other);
    Status exited = scope.Exit();
    return status.ok() ? exited : status;
  }

  std::unique_ptr<MemoryPools> pools_;
  std::unique_ptr<CudaAllocator> allocator_;  // after pools_: destroyed before them
};

// ---------------------------------------------------------------------------------------------

std::uint64_t NsSince(std::chrono::steady_clock::time_point start,
                      std::chrono::steady_clock::time_point end) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
}

// Makes the target's context current for a replay, and restores the caller's afterwards.
StatusOr<ContextScope> EnterTarget(const ReplayTarget& target) {
  if (target.api == nullptr || target.context == nullptr) {
    return InvalidArgumentError("replay target without a table or a context");
  }
  return ContextScope::Enter(target.api, target.context);
}

constexpr std::uint64_t kProgressEvery = 256;

StatusOr<std::uint64_t> TimingPass(const AllocTrace& trace, ReplayAllocatorKind kind,
                                   const ReplayTarget& target, std::string_view pass,
                                   std::vector<std::uint64_t>* ns_per_op,
                                   const ReplayProgress& progress) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<ReplayAllocator> allocator,
                         CreateReplayAllocator(kind, target, target.api, trace.streams));
  CUHAL_RETURN_IF_ERROR(allocator->PrepareEvents(trace));
  const std::string_view name = ReplayAllocatorName(kind);
  const std::uint64_t total = trace.ops.size();
  std::uint64_t sum = 0;
  if (ns_per_op != nullptr) {
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      const TraceOp& op = trace.ops[i];
      const auto start = std::chrono::steady_clock::now();
      Status status = allocator->Apply(op);
      const auto end = std::chrono::steady_clock::now();
      if (!status.ok()) return std::move(status).AddContext(OpContext(trace, i, op));
      const std::uint64_t ns = NsSince(start, end);
      sum += ns;
      ns_per_op->push_back(ns);
      if (progress && (i + 1) % kProgressEvery == 0) progress(name, pass, i + 1, total);
    }
  } else {
    // The pass as a whole: two clock reads, so that the clock's own cost (tens of ns per read,
    // a system call on some virtual machines) is not counted in every operation. The progress
    // reports stay outside (between chunks of kProgressEvery operations).
    for (std::size_t begin = 0; begin < trace.ops.size(); begin += kProgressEvery) {
      const std::size_t end_op = std::min<std::size_t>(trace.ops.size(), begin + kProgressEvery);
      const auto start = std::chrono::steady_clock::now();
      for (std::size_t i = begin; i < end_op; ++i) {
        if (Status status = allocator->Apply(trace.ops[i]); !status.ok()) {
          return std::move(status).AddContext(OpContext(trace, i, trace.ops[i]));
        }
      }
      sum += NsSince(start, std::chrono::steady_clock::now());
      if (progress && end_op < trace.ops.size()) progress(name, pass, end_op, total);
    }
  }
  if (progress) progress(name, pass, total, total);
  CUHAL_RETURN_IF_ERROR(allocator->FreeLive().status(), "freeing what is live at the end");
  CUHAL_RETURN_IF_ERROR(allocator->Close(), "closing the ", name, " allocator");
  return sum;
}

double Percentile(std::vector<std::uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank.
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1]);
}

}  // namespace

std::string_view ReplayAllocatorName(ReplayAllocatorKind kind) noexcept {
  switch (kind) {
    case ReplayAllocatorKind::kDriverPool:
      return "driver-pool";
    case ReplayAllocatorKind::kCore:
      return "core";
    case ReplayAllocatorKind::kCoreExpandable:
      return "core-expandable";
    case ReplayAllocatorKind::kCorePool:
      return "core-pool";
    case ReplayAllocatorKind::kPyTorch:
      return "pytorch";
  }
  return "unknown";
}

std::span<const ReplayAllocatorKind> ReplayAllocatorKinds() noexcept { return kKinds; }

std::string ReplayAllocatorNames() {
  std::string names;
  for (ReplayAllocatorKind kind : kKinds) {
    if (!names.empty()) names += ", ";
    names += ReplayAllocatorName(kind);
  }
  return names;
}

StatusOr<ReplayAllocatorKind> ParseReplayAllocator(std::string_view name) {
  for (ReplayAllocatorKind kind : kKinds) {
    if (ReplayAllocatorName(kind) == name) return kind;
  }
  return InvalidArgumentError(
      StrCat("unknown allocator '", name, "' (valid: ", ReplayAllocatorNames(), ", all)"));
}

bool ReplayBuiltWithTorch() noexcept { return internal::BuiltWithTorch(); }

StatusOr<ReplayTarget> MakeReplayTarget(const CudaApi* api, CUcontext context, int ordinal,
                                        std::string backend) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  ReplayTarget target;
  CUHAL_ASSIGN_OR_RETURN(target.device, driver->QueryDevice(ordinal));
  target.api = api;
  target.context = context;
  target.backend = std::move(backend);
  return target;
}

Status ReplayAllocatorAvailable(ReplayAllocatorKind kind, const ReplayTarget& target) {
  if (kind != ReplayAllocatorKind::kPyTorch) return OkStatus();
  if (!internal::BuiltWithTorch()) {
    return UnimplementedError(
        "allocator pytorch: built without torch (configure with -DCUHAL_WITH_TORCH=ON)");
  }
  if (target.backend != "real") {
    return FailedPreconditionError(
        "allocator pytorch: needs the real driver (--backend real): PyTorch calls the CUDA "
        "runtime, not the replay's table");
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// ReplayAllocator

ReplayAllocator::ReplayAllocator(ReplayAllocatorKind kind, const CudaApi* api, CUcontext context)
    : kind_(kind), api_(api), context_(context) {}

ReplayAllocator::~ReplayAllocator() {
  // Implementations call Close in their destructors (their hooks are gone by now); this only
  // covers a factory that failed half-way.
  for (auto& [id, event] : events_) ReportDroppedStatus(CUHAL_CU(api_, cuEventDestroy, event));
  for (CUstream s : streams_) ReportDroppedStatus(CUHAL_CU(api_, cuStreamDestroy, s));
}

Status ReplayAllocator::CreateStreams(int count) {
  streams_.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    CUstream s = nullptr;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuStreamCreate, &s, CU_STREAM_NON_BLOCKING),
                          "creating stream ", i);
    streams_.push_back(s);
  }
  return OkStatus();
}

Status ReplayAllocator::PrepareEvents(const AllocTrace& trace) {
  for (const TraceOp& op : trace.ops) {
    if (op.kind != TraceOpKind::kRecord || events_.contains(op.event)) continue;
    CUevent event = nullptr;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING),
                          "creating event ", op.event);
    events_.emplace(op.event, event);
  }
  return OkStatus();
}

Status ReplayAllocator::CheckStream(int stream, std::string_view what) const {
  if (closed_) return FailedPreconditionError(StrCat(what, ": the allocator is closed"));
  if (stream < 0 || stream >= stream_count()) {
    return InvalidArgumentError(
        StrCat(what, ": stream ", stream, " out of range (", stream_count(), " streams)"));
  }
  return OkStatus();
}

ReplayAllocator::Live* ReplayAllocator::FindLive(std::uint64_t id) {
  if (id < kDenseIds) {
    if (id >= dense_live_.size() || dense_live_[id].stream < 0) return nullptr;
    return &dense_live_[id];
  }
  auto it = sparse_live_.find(id);
  return it == sparse_live_.end() ? nullptr : &it->second;
}

void ReplayAllocator::AddLive(std::uint64_t id, Live live) {
  if (id < kDenseIds) {
    if (id >= dense_live_.size()) {
      dense_live_.resize(std::max<std::size_t>(id + 1, 2 * dense_live_.size()), Live{0, -1});
    }
    dense_live_[id] = live;
  } else {
    sparse_live_.emplace(id, live);
  }
  ++live_count_;
}

void ReplayAllocator::EraseLive(std::uint64_t id) {
  if (id < kDenseIds) {
    dense_live_[id].stream = -1;
  } else {
    sparse_live_.erase(id);
  }
  --live_count_;
}

Status ReplayAllocator::Alloc(std::uint64_t id, std::uint64_t size, int stream) {
  CUHAL_RETURN_IF_ERROR(CheckStream(stream, "alloc"));
  if (FindLive(id) != nullptr) return InvalidArgumentError(StrCat("alloc: id ", id, " is live"));
  CUHAL_ASSIGN_OR_RETURN(std::uintptr_t handle, DoAlloc(size, stream_at(stream)),
                         "allocating ", size, " bytes with ", ReplayAllocatorName(kind_));
  AddLive(id, Live{handle, stream});
  return OkStatus();
}

Status ReplayAllocator::Free(std::uint64_t id, int stream) {
  CUHAL_RETURN_IF_ERROR(CheckStream(stream, "free"));
  const Live* live = FindLive(id);
  if (live == nullptr) return InvalidArgumentError(StrCat("free: id ", id, " is not live"));
  CUHAL_RETURN_IF_ERROR(DoFree(live->handle, stream_at(live->stream), stream_at(stream)),
                        "freeing with ", ReplayAllocatorName(kind_));
  EraseLive(id);
  return OkStatus();
}

Status ReplayAllocator::Record(std::uint64_t event, int stream) {
  CUHAL_RETURN_IF_ERROR(CheckStream(stream, "record"));
  auto it = events_.find(event);
  if (it == events_.end()) {
    return InvalidArgumentError(StrCat("record: event ", event, " was not prepared"));
  }
  return CUHAL_CU(api_, cuEventRecord, it->second, stream_at(stream));
}

Status ReplayAllocator::Wait(std::uint64_t event, int stream) {
  CUHAL_RETURN_IF_ERROR(CheckStream(stream, "wait"));
  auto it = events_.find(event);
  if (it == events_.end()) {
    return InvalidArgumentError(StrCat("wait: event ", event, " was never recorded"));
  }
  return CUHAL_CU(api_, cuStreamWaitEvent, stream_at(stream), it->second, 0);
}

Status ReplayAllocator::Sync(int stream) {
  if (stream >= 0) {
    CUHAL_RETURN_IF_ERROR(CheckStream(stream, "sync"));
    return CUHAL_CU(api_, cuStreamSynchronize, stream_at(stream));
  }
  if (closed_) return FailedPreconditionError("sync: the allocator is closed");
  if (api_->cuCtxSynchronize != nullptr) return CUHAL_CU(api_, cuCtxSynchronize);
  for (CUstream s : streams_) CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuStreamSynchronize, s));
  return OkStatus();
}

Status ReplayAllocator::Apply(const TraceOp& op) {
  switch (op.kind) {
    case TraceOpKind::kAlloc:
      return Alloc(op.id, op.size, op.stream);
    case TraceOpKind::kFree:
      return Free(op.id, op.stream);
    case TraceOpKind::kRecord:
      return Record(op.event, op.stream);
    case TraceOpKind::kWait:
      return Wait(op.event, op.stream);
    case TraceOpKind::kSync:
      return Sync(op.stream);
  }
  return InvalidArgumentError("unknown trace operation");
}

StatusOr<std::uint64_t> ReplayAllocator::FreeLive() {
  std::uint64_t freed = 0;
  for (std::uint64_t id = 0; id < dense_live_.size() && live_count_ > sparse_live_.size(); ++id) {
    if (dense_live_[id].stream < 0) continue;
    CUHAL_RETURN_IF_ERROR(Free(id, dense_live_[id].stream), "freeing id ", id);
    ++freed;
  }
  while (!sparse_live_.empty()) {
    const auto [id, live] = *sparse_live_.begin();
    CUHAL_RETURN_IF_ERROR(Free(id, live.stream), "freeing id ", id);
    ++freed;
  }
  return freed;
}

StatusOr<ReplayFootprint> ReplayAllocator::Footprint() const {
  if (closed_) return FailedPreconditionError("footprint: the allocator is closed");
  return DoFootprint();
}

Status ReplayAllocator::Close() {
  if (closed_) return OkStatus();
  Status status = FreeLive().status();
  if (status.ok()) status = Sync(-1);
  Status closed = DoClose();
  if (status.ok()) status = std::move(closed);
  closed_ = true;
  for (auto& [id, event] : events_) {
    Status s = CUHAL_CU(api_, cuEventDestroy, event);
    if (status.ok()) status = std::move(s);
  }
  events_.clear();
  for (CUstream s : streams_) {
    Status destroyed = CUHAL_CU(api_, cuStreamDestroy, s);
    if (status.ok()) status = std::move(destroyed);
  }
  streams_.clear();
  dense_live_.clear();
  sparse_live_.clear();
  live_count_ = 0;
  return status;
}

// ---------------------------------------------------------------------------------------------

StatusOr<std::unique_ptr<ReplayAllocator>> CreateReplayAllocator(ReplayAllocatorKind kind,
                                                                 const ReplayTarget& target,
                                                                 const CudaApi* api,
                                                                 int streams) {
  CUHAL_RETURN_IF_ERROR(ReplayAllocatorAvailable(kind, target));
  if (api == nullptr) return InvalidArgumentError("CreateReplayAllocator: null table");
  StatusOr<std::unique_ptr<ReplayAllocator>> created = [&]() {
    switch (kind) {
      case ReplayAllocatorKind::kDriverPool:
        return DriverPoolAllocator::Create(target, api, streams);
      case ReplayAllocatorKind::kCore:
        return CoreCachingAllocator::Create(target, api, streams, /*expandable=*/false);
      case ReplayAllocatorKind::kCoreExpandable:
        return CoreCachingAllocator::Create(target, api, streams, /*expandable=*/true);
      case ReplayAllocatorKind::kCorePool:
        return CorePoolAllocator::Create(target, api, streams);
      case ReplayAllocatorKind::kPyTorch:
        return internal::CreatePyTorchReplayAllocator(target, api, streams);
    }
    return StatusOr<std::unique_ptr<ReplayAllocator>>(
        InvalidArgumentError("unknown allocator kind"));
  }();
  if (!created.ok()) {
    return std::move(created).status().AddContext(
        StrCat("creating the ", ReplayAllocatorName(kind), " allocator"));
  }
  return created;
}

StatusOr<std::uint64_t> TimeReplayPass(const AllocTrace& trace, ReplayAllocatorKind kind,
                                       const ReplayTarget& target,
                                       std::vector<std::uint64_t>* ns_per_op,
                                       const ReplayProgress& progress) {
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, EnterTarget(target));
  CUHAL_ASSIGN_OR_RETURN(std::uint64_t sum,
                         TimingPass(trace, kind, target, "timing", ns_per_op, progress));
  CUHAL_RETURN_IF_ERROR(scope.Exit());
  return sum;
}

StatusOr<ReplayResult> ReplayTrace(const AllocTrace& trace, ReplayAllocatorKind kind,
                                   const ReplayTarget& target, const ReplayOptions& options) {
  if (options.repeat < 1) {
    return InvalidArgumentError(StrCat("repeat must be >= 1, got ", options.repeat));
  }
  if (options.max_series_points < 1) {
    return InvalidArgumentError("max_series_points must be >= 1");
  }
  CUHAL_RETURN_IF_ERROR(ReplayAllocatorAvailable(kind, target));
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, EnterTarget(target));
  const std::string_view name = ReplayAllocatorName(kind);
  ReplayResult result;
  result.allocator = std::string(name);
  result.operations = trace.ops.size();
  result.repeat = options.repeat;

  // Timing passes: each `repeat` times as a whole (the mean) and with every operation timed
  // alone (the percentiles and the alloc/free means, which include two clock reads each).
  std::vector<std::uint64_t> ns;
  ns.reserve(trace.ops.size() * static_cast<std::size_t>(options.repeat));
  std::uint64_t whole_ns = 0;
  for (int r = 0; r < options.repeat; ++r) {
    const std::string pass = StrCat("timing ", r + 1, "/", options.repeat);
    CUHAL_ASSIGN_OR_RETURN(std::uint64_t pass_ns,
                           TimingPass(trace, kind, target, pass, nullptr, options.progress),
                           name, ", timing pass ", r + 1);
    whole_ns += pass_ns;
    const std::string timed = StrCat("per-op timing ", r + 1, "/", options.repeat);
    CUHAL_RETURN_IF_ERROR(
        TimingPass(trace, kind, target, timed, &ns, options.progress).status(), name,
        ", per-op timing pass ", r + 1);
  }
  double alloc_sum = 0, free_sum = 0, all_sum = 0;
  std::uint64_t allocs = 0, frees = 0;
  for (std::size_t i = 0; i < ns.size(); ++i) {
    const TraceOp& op = trace.ops[i % trace.ops.size()];
    const auto v = static_cast<double>(ns[i]);
    all_sum += v;
    if (op.kind == TraceOpKind::kAlloc) {
      alloc_sum += v;
      ++allocs;
    } else if (op.kind == TraceOpKind::kFree) {
      free_sum += v;
      ++frees;
    }
  }
  if (!ns.empty()) result.ns_per_op_timed_mean = all_sum / static_cast<double>(ns.size());
  if (!trace.ops.empty()) {
    const std::size_t timed_ops = trace.ops.size() * static_cast<std::size_t>(options.repeat);
    result.ns_per_op_mean = static_cast<double>(whole_ns) / static_cast<double>(timed_ops);
  }
  if (allocs > 0) result.alloc_ns_mean = alloc_sum / static_cast<double>(allocs);
  if (frees > 0) result.free_ns_mean = free_sum / static_cast<double>(frees);
  std::sort(ns.begin(), ns.end());
  result.ns_per_op_p50 = Percentile(ns, 0.50);
  result.ns_per_op_p99 = Percentile(ns, 0.99);

  // The footprint pass, through a counting table.
  {
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<CountingCudaApi> counting,
                           CountingCudaApi::Create(target.api));
    CUHAL_ASSIGN_OR_RETURN(
        std::unique_ptr<ReplayAllocator> allocator,
        CreateReplayAllocator(kind, target, &counting->api(), trace.streams),
        name, ", footprint pass");
    CUHAL_RETURN_IF_ERROR(allocator->PrepareEvents(trace), name, ", footprint pass");
    const std::uint64_t total = trace.ops.size();
    const std::uint64_t stride =
        std::max<std::uint64_t>(1, (total + options.max_series_points - 1) /
                                       options.max_series_points);
    result.series_stride = stride;
    result.series.reserve(total / stride + 1);
    // Calls made inside operations: what the counts hold after an operation is added up, and
    // they are reset after each statistics query, so that queries are never counted.
    std::vector<std::pair<std::string, std::uint64_t>> in_ops;
    auto accumulate = [&] {
      for (const auto& [entry, n] : counting->Counts()) {
        auto it = std::find_if(in_ops.begin(), in_ops.end(),
                               [&](const auto& e) { return e.first == entry; });
        if (it == in_ops.end()) {
          in_ops.emplace_back(std::string(entry), n);
        } else {
          it->second += n;
        }
        result.driver_calls += n;
      }
      counting->Reset();
    };
    counting->Reset();
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      const TraceOp& op = trace.ops[i];
      if (Status status = allocator->Apply(op); !status.ok()) {
        return std::move(status).AddContext(OpContext(trace, i, op)).AddContext(
            StrCat(name, ", footprint pass"));
      }
      if (counting->total() > 0) accumulate();
      if (i % stride == 0 || i + 1 == trace.ops.size()) {
        CUHAL_ASSIGN_OR_RETURN(ReplayFootprint f, allocator->Footprint(), name,
                               ", footprint after op ", i);
        counting->Reset();
        result.series.push_back({.op = i, .reserved = f.reserved_current, .used = f.used_current});
      }
      if (options.progress && (i + 1) % kProgressEvery == 0) {
        options.progress(name, "footprint", i + 1, total);
      }
    }
    if (options.progress) options.progress(name, "footprint", total, total);
    CUHAL_ASSIGN_OR_RETURN(ReplayFootprint f, allocator->Footprint(), name,
                           ", footprint after the last op");
    counting->Reset();
    result.reserved_high = f.reserved_high;
    result.used_high = f.used_high;
    result.reserved_per_used =
        f.used_high == 0
            ? 0
            : static_cast<double>(f.reserved_high) / static_cast<double>(f.used_high);
    CUHAL_ASSIGN_OR_RETURN(result.freed_at_end, allocator->FreeLive(), name,
                           ", freeing what is live at the end");
    accumulate();
    result.driver_calls_by_entry = std::move(in_ops);
    CUHAL_RETURN_IF_ERROR(allocator->Close(), "closing the ", name, " allocator");
  }
  CUHAL_RETURN_IF_ERROR(scope.Exit());
  return result;
}

}  // namespace cuhal::trace
