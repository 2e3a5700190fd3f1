// Copyright 2026 The cuhal Authors.
// Replaying an allocation trace (docs/alloc_trace_format.md) on an allocator, through a CudaApi
// table, so that the same replay runs on the fake driver and on the real one, and reports what
// each allocator costs (ns per operation) and holds (reserved against used bytes).
//
// The allocators (ReplayAllocatorKind):
//   driver-pool  the driver's stream-ordered pool: a pool of its own (cuMemPoolCreate, device
//                location, pinned, release threshold UINT64_MAX), cuMemAllocFromPoolAsync /
//                cuMemFreeAsync; reserved/used from CU_MEMPOOL_ATTR_{RESERVED,USED}_MEM_*;
//   core         cuhal::CachingAllocator (core/memory/caching_allocator.h), AllocateOnStream /
//                ReleaseOnStream; reserved/used from its CacheStatistics;
//   core-expandable  the same with CachingAllocatorParams::expandable_segments (one VMM
//                allocation mapped per growth at the end of one range per size class; classic
//                segments where the driver has no VMM) and ReplayTarget::expandable_min_growth;
//   core-pool    cuhal::CudaAllocator's queue-ordered path over the device's MemoryPools (the
//                device-local pool, release threshold UINT64_MAX); reserved/used from the pool;
//   pytorch      PyTorch's CUDACachingAllocator (raw_alloc_with_stream / raw_delete), only in
//                builds configured with -DCUHAL_WITH_TORCH=ON and only on the real driver.
//
// What a replay does (ReplayTrace):
//   - every trace stream is a stream of its own (cuStreamCreate, non-blocking), every trace
//     event a CUevent (created before the first operation, timing disabled); record / wait /
//     sync are cuEventRecord / cuStreamWaitEvent / cuStreamSynchronize (cuCtxSynchronize for a
//     sync of every stream), the same for every allocator;
//   - timing passes (options.repeat pairs of them, each on a fresh allocator): one timed as a
//     whole (steady_clock read before and after each chunk of operations: the ns/op mean), one
//     with each operation timed alone (p50, p99, the alloc and free means: these include the
//     clock's cost, two reads per operation, which on the H200 machine is of the order of the
//     operations themselves); nothing else (no statistics query, no progress report) runs
//     inside a timed region;
//   - one footprint pass on a fresh allocator through a CountingCudaApi: after every operation
//     (every `stride`-th one for traces longer than options.max_series_points: stride =
//     ceil(operations / max_series_points); the last operation is always sampled) the
//     allocator's reserved and used bytes are sampled into the series; the driver calls counted
//     are those made inside the operations (and the frees of what is live at the end), not the
//     setup, the teardown or the statistics queries; the high watermarks are read after the last
//     operation;
//   - allocations still live after the last operation are freed, each on the stream it was
//     allocated on (not timed), then every stream is synchronized and everything is destroyed.
// Errors carry the trace's name, the line and the operation ("t.jsonl:17: op 15 (free id 3 on
// stream 1): cuMemFreeAsync: CUDA_ERROR_...").
#ifndef CUHAL_TRACE_REPLAY_H_
#define CUHAL_TRACE_REPLAY_H_

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/status_or.h"
#include "core/driver/driver.h"
#include "core/symbols/cuda_api.h"
#include "trace/alloc_trace.h"

namespace cuhal::trace {

enum class ReplayAllocatorKind { kDriverPool, kCore, kCoreExpandable, kCorePool, kPyTorch };

// "driver-pool", "core", "core-expandable", "core-pool", "pytorch".
[[nodiscard]] std::string_view ReplayAllocatorName(ReplayAllocatorKind kind) noexcept;
// Every kind, in the order `--allocator all` runs them.
[[nodiscard]] std::span<const ReplayAllocatorKind> ReplayAllocatorKinds() noexcept;
// "driver-pool, core, core-expandable, core-pool, pytorch".
[[nodiscard]] std::string ReplayAllocatorNames();
// The kind named `name`; INVALID_ARGUMENT listing the valid names otherwise.
[[nodiscard]] StatusOr<ReplayAllocatorKind> ParseReplayAllocator(std::string_view name);
// Whether this build was configured with PyTorch (CUHAL_WITH_TORCH).
[[nodiscard]] bool ReplayBuiltWithTorch() noexcept;

// Where a replay runs: a table, a context on one device (the caller keeps it alive, e.g. the
// primary context it retained) and that device's description. `backend` is "fake" or "real"
// (the pytorch allocator needs the real driver: it calls it through the CUDA runtime).
struct ReplayTarget {
  const CudaApi* api = nullptr;
  CUcontext context = nullptr;
  DeviceInfo device;
  std::string backend = "fake";
  // core-expandable's CachingAllocatorParams::expandable_min_growth (0, the default: each
  // growth maps what the request lacks).
  std::uint64_t expandable_min_growth = 0;
};

// A target on device `ordinal` of `api` (cuInit, the device's description) with `context`.
[[nodiscard]] StatusOr<ReplayTarget> MakeReplayTarget(const CudaApi* api, CUcontext context,
                                                      int ordinal, std::string backend);

// OK when `kind` can run on `target` in this build; otherwise why not: UNIMPLEMENTED for
// pytorch in a build without torch ("built without torch (configure with
// -DCUHAL_WITH_TORCH=ON)"), FAILED_PRECONDITION for pytorch on the fake driver.
[[nodiscard]] Status ReplayAllocatorAvailable(ReplayAllocatorKind kind,
                                              const ReplayTarget& target);

// An allocator's footprint, in bytes.
struct ReplayFootprint {
  std::uint64_t reserved_current = 0;
  std::uint64_t reserved_high = 0;
  std::uint64_t used_current = 0;
  std::uint64_t used_high = 0;
};

// One allocator driven by trace operations, on streams and events it owns.
//
// Public methods are non-virtual (stream and event bookkeeping shared by every allocator);
// implementations override the private Do* hooks. Operations name trace streams (0 ..
// streams-1) and trace ids and events; the trace has been checked (ReadAllocTrace), so a free
// of an id that is not live, a stream out of range or a wait for an event never recorded is
// INVALID_ARGUMENT here too, but is not expected.
//
// Ownership: created by CreateReplayAllocator, owned by the caller; borrows the table and the
// target's context, which must outlive it; owns its streams, its events and everything it
// allocated. Destroying it frees what is still live, synchronizes and destroys its streams and
// events (failures go to ReportDroppedStatus); Close does the same and reports them.
// Thread-safety: none; one thread drives it (as a trace is one host thread's requests), with
// the target's context current (ReplayTrace makes it current).
// Stream ordering: Alloc's memory is valid on its stream from that point of the stream's order;
// Free frees in the order of its stream; Record/Wait/Sync are the driver's.
class ReplayAllocator {
 public:
  virtual ~ReplayAllocator();
  ReplayAllocator(const ReplayAllocator&) = delete;             // owns streams and memory
  ReplayAllocator& operator=(const ReplayAllocator&) = delete;  // ditto

  [[nodiscard]] ReplayAllocatorKind kind() const noexcept { return kind_; }
  [[nodiscard]] int stream_count() const noexcept { return static_cast<int>(streams_.size()); }
  [[nodiscard]] CUstream stream(int index) const { return stream_at(index); }

  // Creates the CUevent of every event id in `trace` (before any operation, so that no timed
  // operation creates one).
  [[nodiscard]] Status PrepareEvents(const AllocTrace& trace);

  [[nodiscard]] Status Alloc(std::uint64_t id, std::uint64_t size, int stream);
  [[nodiscard]] Status Free(std::uint64_t id, int stream);
  [[nodiscard]] Status Record(std::uint64_t event, int stream);
  [[nodiscard]] Status Wait(std::uint64_t event, int stream);
  // `stream` -1: every stream (cuCtxSynchronize).
  [[nodiscard]] Status Sync(int stream);
  // One trace operation (one of the five above).
  [[nodiscard]] Status Apply(const TraceOp& op);
  // Frees every live allocation on the stream it was allocated on; returns how many.
  [[nodiscard]] StatusOr<std::uint64_t> FreeLive();
  [[nodiscard]] std::uint64_t live() const noexcept { return live_count_; }
  // The current and high reserved/used bytes (a statistics query; not for timed regions).
  [[nodiscard]] StatusOr<ReplayFootprint> Footprint() const;
  // FreeLive, synchronize every stream, release the allocator's memory, destroy the streams and
  // events. Idempotent; the allocator is unusable afterwards.
  [[nodiscard]] Status Close();

 protected:
  ReplayAllocator(ReplayAllocatorKind kind, const CudaApi* api, CUcontext context);
  // Creates `count` streams (implementations call it from their factory).
  [[nodiscard]] Status CreateStreams(int count);
  [[nodiscard]] const CudaApi* api() const noexcept { return api_; }
  [[nodiscard]] CUcontext context() const noexcept { return context_; }

 private:
  // An allocation of `size` bytes for `stream`; returns the allocator's handle for it (a device
  // pointer, or an index into the implementation's own records).
  virtual StatusOr<std::uintptr_t> DoAlloc(std::uint64_t size, CUstream stream) = 0;
  // Frees the allocation `handle` (from DoAlloc on `alloc_stream`) in `stream`'s order.
  virtual Status DoFree(std::uintptr_t handle, CUstream alloc_stream, CUstream stream) = 0;
  virtual StatusOr<ReplayFootprint> DoFootprint() const = 0;
  // Gives back the allocator's memory and state (after every free and a synchronization);
  // called once by Close, before the streams are destroyed.
  virtual Status DoClose() = 0;

  struct Live {
    std::uintptr_t handle;
    int stream;
  };

  Status CheckStream(int stream, std::string_view what) const;
  CUstream stream_at(int index) const { return streams_[static_cast<std::size_t>(index)]; }

  const ReplayAllocatorKind kind_;
  const CudaApi* const api_;
  const CUcontext context_;
  std::vector<CUstream> streams_;
  std::unordered_map<std::uint64_t, CUevent> events_;
  // The live allocations by trace id: ids below kDenseIds (every shipped trace's) in a vector
  // indexed by id (no heap allocation per operation: the bookkeeping is inside every timed
  // region, and must cost the same small amount for every allocator), others in a map.
  static constexpr std::uint64_t kDenseIds = std::uint64_t{1} << 20;
  Live* FindLive(std::uint64_t id);
  void AddLive(std::uint64_t id, Live live);
  void EraseLive(std::uint64_t id);
  std::vector<Live> dense_live_;  // stream -1: not live
  std::unordered_map<std::uint64_t, Live> sparse_live_;
  std::uint64_t live_count_ = 0;
  bool closed_ = false;
};

// A new allocator of `kind` on `target`, with trace.streams streams, calling the driver through
// `api` (target.api, or a counting table over it). Errors: as ReplayAllocatorAvailable, or the
// failing setup call (pool or stream creation) under "creating the <kind> allocator".
[[nodiscard]] StatusOr<std::unique_ptr<ReplayAllocator>> CreateReplayAllocator(
    ReplayAllocatorKind kind, const ReplayTarget& target, const CudaApi* api, int streams);

struct ReplaySeriesPoint {
  std::uint64_t op = 0;  // the operation's index (0-based), after which the sample was taken
  std::uint64_t reserved = 0;
  std::uint64_t used = 0;
};

// Called between operations (never inside a timed region): `pass` is "timing 1/2" or
// "footprint", `done` of `total` operations of that pass.
using ReplayProgress =
    std::function<void(std::string_view allocator, std::string_view pass, std::uint64_t done,
                       std::uint64_t total)>;

struct ReplayOptions {
  int repeat = 1;  // timing passes (>= 1)
  std::uint64_t max_series_points = 20000;  // >= 1; see the top of this file
  ReplayProgress progress;                   // optional
};

struct ReplayResult {
  std::string allocator;  // ReplayAllocatorName
  std::uint64_t operations = 0;  // per pass
  int repeat = 1;
  // The mean from passes timed as a whole; the percentiles (and ns_per_op_timed_mean, the mean
  // of the same operations timed one by one, which adds two clock reads to each) from passes
  // with every operation timed alone.
  double ns_per_op_mean = 0, ns_per_op_p50 = 0, ns_per_op_p99 = 0;
  double ns_per_op_timed_mean = 0;
  double alloc_ns_mean = 0, free_ns_mean = 0;  // over the alloc / free operations only
  std::uint64_t reserved_high = 0, used_high = 0;
  double reserved_per_used = 0;  // reserved_high / used_high (0 when used_high is 0)
  std::uint64_t driver_calls = 0;  // in the footprint pass, see the top of this file
  std::vector<std::pair<std::string, std::uint64_t>> driver_calls_by_entry;
  std::uint64_t freed_at_end = 0;  // allocations live after the last operation
  std::uint64_t series_stride = 1;
  std::vector<ReplaySeriesPoint> series;
};

// Replays `trace` on `kind` (see the top of this file). INVALID_ARGUMENT for repeat < 1 or
// max_series_points < 1; otherwise as CreateReplayAllocator, or the failing operation.
[[nodiscard]] StatusOr<ReplayResult> ReplayTrace(const AllocTrace& trace,
                                                 ReplayAllocatorKind kind,
                                                 const ReplayTarget& target,
                                                 const ReplayOptions& options = {});

// One timing pass alone (for benchmarks): a fresh allocator. With `ns_per_op`, every operation
// is timed alone, its nanoseconds appended (in operation order), and the sum of those is
// returned; without (null), the pass is timed as a whole (no clock read per operation) and that
// time is returned.
[[nodiscard]] StatusOr<std::uint64_t> TimeReplayPass(const AllocTrace& trace,
                                                     ReplayAllocatorKind kind,
                                                     const ReplayTarget& target,
                                                     std::vector<std::uint64_t>* ns_per_op,
                                                     const ReplayProgress& progress = {});

}  // namespace cuhal::trace

#endif  // CUHAL_TRACE_REPLAY_H_
