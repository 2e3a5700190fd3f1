// Copyright 2026 The cuhal Authors.
// Device: one CUDA device opened for use: its primary context, queues, memory pools, allocator
// and channel provider. The object everything else of the core (buffers, channels, and later
// semaphores, command buffers, executables) is made from.
#ifndef CUHAL_CORE_DEVICE_DEVICE_H_
#define CUHAL_CORE_DEVICE_DEVICE_H_

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status_or.h"
#include "core/channel/channel.h"
#include "core/channel/channel_provider.h"
#include "core/command/command_buffer.h"
#include "core/device/device_params.h"
#include "core/device/queue.h"
#include "core/device/queue_scheduler.h"
#include "core/driver/driver.h"
#include "core/memory/allocator.h"
#include "core/memory/memory_pool.h"
#include "core/semaphore/event.h"
#include "core/semaphore/semaphore.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"
#include "core/symbols/nccl_api.h"

namespace cuhal {

// What BeginProfiling is asked to capture. The hooks validate nesting today; a profiler
// integration (CUPTI, Nsight ranges) attaches here later without changing callers.
struct ProfilingOptions {
  // A name for the capture (shows up in the profiler's UI once one is attached).
  std::string capture_name;
};

// An open CUDA device.
//
// Creation, in this order (Create): validate the params; describe the device (Driver::
// QueryDevice); retain the device's primary context; make it current (pushed on the calling
// thread's stack); create one non-blocking stream per queue; when async allocations are on and
// the device supports memory pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED), create the
// device-local and other pools and set their release thresholds; create the allocator; pop the
// context (the caller's current context is restored). If any step fails, exactly the steps done
// so far are undone, in reverse order, before Create returns the error (the pop comes after the
// undoing, so the undoing runs in the device's context). The queue scheduler (the worker thread
// behind the queue operations, and the event pool) is made right after the queues; it makes no
// driver call until it is used. Destruction undoes creation in reverse order: stop the queue
// scheduler (below), wait for the queues, destroy the allocator, the pools (other, then
// device-local), the streams (last queue first), then release the primary context.
//
// Destruction with queue operations pending (the teardown policy): operations already issued to
// a stream are WAITED FOR (the queues are synchronized, as for any stream work; the worker then
// retires them and signals their semaphores); operations still DEFERRED (waiting for a value
// nothing submitted will signal) are FAILED: each fails its signal semaphores with ABORTED,
// naming the device and what it waited for, and releases what it held (a Dealloca's buffer is
// freed). New submissions during destruction are FAILED_PRECONDITION. Then the worker is joined
// and the event pool's events destroyed: nothing is leaked and no thread outlives the Device.
// Semaphores may outlive their Device (they are host-only afterwards); buffers may not.
//
// Ownership: the caller owns the Device (unique_ptr). It borrows the tables (they must outlive
// it; the Driver object itself need not). It owns its queues, pools and allocator and shares its
// ChannelProvider. Buffers borrow the allocator, and Channels borrow the Device and one of its
// queues: both must be destroyed before the Device (a Device destroyed with live buffers or live
// channels reports FAILED_PRECONDITION through ReportDroppedStatus; destroy channels first, then
// synchronize, then destroy buffers, then the Device). Destruction must not run concurrently with
// any other use.
// Thread-safety: every const method, queue(i), allocator(), Trim, Synchronize, QueryI64, the
// profiling hooks, CreateChannel and ReplaceChannelProvider may be called from any thread
// concurrently. ReplaceAllocator must not run concurrently with any use of the allocator (it
// changes what allocator() returns).
// Stream ordering: the Device enqueues nothing itself; each Queue orders its own work (see
// Queue), and a Channel enqueues its operations on the queue its affinity picked. Synchronize
// waits for all queues; Trim and the pool statistics see only frees that the host has already
// observed complete.
//
// Channels (NCCL): CreateChannel needs the NCCL table (nccl_api(); without one it is
// UNAVAILABLE naming libnccl.so.2), a queue affinity (a 64-bit mask with exactly one bit, a queue
// below queue_count(), picks the queue whose stream the communicator uses), and, for default
// ranks, counts or ids, the device's ChannelProvider (ReplaceChannelProvider). The provider is
// released at the start of destruction, before the queues.
class Device {
 public:
  // Opens device `ordinal` of `driver` (see the class comment). Errors: INVALID_ARGUMENT from
  // params.Validate() (no driver call is made), NOT_FOUND for an ordinal the driver does not
  // have, else the failing driver call named under "creating device <ordinal>: <step>".
  [[nodiscard]] static StatusOr<std::unique_ptr<Device>> Create(
      const Driver& driver, int ordinal, const DeviceParams& params = {},
      std::string identifier = "");
  // Opens the device whose UUID is `uuid` ("GPU-...").
  [[nodiscard]] static StatusOr<std::unique_ptr<Device>> CreateByUuid(
      const Driver& driver, std::string_view uuid, const DeviceParams& params = {},
      std::string identifier = "");

  Device(const Device&) = delete;             // owns driver objects; buffers point into it
  Device& operator=(const Device&) = delete;  // ditto
  ~Device();

  // "<driver identifier>:<ordinal>" unless Create was given one.
  [[nodiscard]] const std::string& identifier() const noexcept { return identifier_; }
  [[nodiscard]] const DeviceInfo& info() const noexcept { return info_; }
  [[nodiscard]] int ordinal() const noexcept { return info_.ordinal; }
  [[nodiscard]] const DeviceParams& params() const noexcept { return params_; }
  [[nodiscard]] const CudaApi* cuda_api() const noexcept { return api_; }
  // Null when the driver was created without NCCL.
  [[nodiscard]] const NcclApi* nccl_api() const noexcept { return nccl_; }
  // The retained primary context.
  [[nodiscard]] CUcontext context() const noexcept { return context_; }

  [[nodiscard]] int queue_count() const noexcept { return static_cast<int>(queues_.size()); }
  // Queue `index`. Precondition: 0 <= index < queue_count(); violating it is a programming error
  // that prints the index and aborts (as StatusOr::value() does), never an exception.
  [[nodiscard]] Queue& queue(int index) const;

  // The allocator buffers are made with (the default CudaAllocator unless replaced).
  [[nodiscard]] Allocator& allocator() const noexcept { return *allocator_; }
  // Makes `allocator` the device's allocator and destroys the previous one (in the device's
  // context). INVALID_ARGUMENT for null; FAILED_PRECONDITION while the current allocator has live
  // buffers (they would dangle). On an error nothing changed, unless the error is about restoring
  // the caller's context afterwards.
  [[nodiscard]] Status ReplaceAllocator(std::unique_ptr<Allocator> allocator);

  // Makes `provider` the device's ChannelProvider (null removes it); channels created earlier are
  // unaffected.
  void ReplaceChannelProvider(std::shared_ptr<ChannelProvider> provider);
  [[nodiscard]] std::shared_ptr<ChannelProvider> channel_provider() const;
  // Channels made from this device (splits included) that are still alive.
  [[nodiscard]] int live_channels() const noexcept {
    return live_channels_.load(std::memory_order_relaxed);
  }

  // Creates this device's participant of a collective group (IREE's create_channel), in this
  // order: the NCCL table must be present (else UNAVAILABLE naming libnccl.so.2 and the nccl.h
  // version cuhal was built against); the queue affinity must pick exactly one queue (else
  // INVALID_ARGUMENT naming the mask); a default rank or count is asked of the provider (none set:
  // FAILED_PRECONDITION), and rank/count must then satisfy 0 <= rank < count (INVALID_ARGUMENT);
  // with an empty params.id, rank 0 makes an id (ncclGetUniqueId) and the provider exchanges it
  // under params.group (none set: FAILED_PRECONDITION); a given id must be kChannelIdSize bytes
  // (INVALID_ARGUMENT naming the size) and no id may be all zero (INVALID_ARGUMENT). Finally
  // ncclCommInitRank (blocking) in the device's context. A failure before the exchange completed
  // is also reported to the provider (ChannelProvider::Fail) so the other ranks stop waiting.
  // When the provider exchanged the id, the outcome of ncclCommInitRank is then agreed on with
  // the other ranks (ChannelProvider::AgreeOnCreation): when any rank failed, this rank's new
  // channel is aborted and its creation fails with the provider's error (ABORTED naming the rank
  // for MpiChannelProvider; the in-process provider passes each rank's own result through).
  // Every error is under "creating channel on device <identifier>".
  [[nodiscard]] StatusOr<std::unique_ptr<Channel>> CreateChannel(const ChannelParams& params = {});

  // A command buffer in the recording state (CommandBuffer::Create with this device's table);
  // params.target unset takes the device's default, params().command_target.
  [[nodiscard]] StatusOr<std::shared_ptr<CommandBuffer>> CreateCommandBuffer(
      CommandBufferParams params = {}) const;

  // A timeline semaphore at `initial_value`, named "semaphore <n> of <identifier>" in messages.
  // No driver call; it may be used with every queue of this device (and waited on by the host
  // and by other devices' queues, which then wait through the host).
  [[nodiscard]] StatusOr<std::shared_ptr<Semaphore>> CreateSemaphore(
      std::uint64_t initial_value = 0);
  // A HAL event in the device's context (cuEventCreate). Destroy it before the device.
  [[nodiscard]] StatusOr<Event> CreateEvent();
  // The scheduler behind the queue operations (for tests and benchmarks: counts, event pool).
  [[nodiscard]] QueueScheduler& queue_scheduler() const noexcept { return *scheduler_; }

  // The memory pools, or null when async allocations are off or unsupported.
  [[nodiscard]] MemoryPools* pools() const noexcept { return pools_.get(); }
  // Both pools' statistics. FAILED_PRECONDITION when the device has no pools.
  [[nodiscard]] StatusOr<MemoryPoolsStatistics> QueryPoolStatistics() const;

  // Answers a configuration question, IREE's query_i64 (no driver call):
  //   "hal.executable.format" / <format>  1 when executables of that format load here
  //                                       ("cuda-nvptx-fb"), else 0;
  //   "cuda.device" / "compute_capability_major", "compute_capability_minor",
  //                   "multiprocessor_count", "total_memory" (bytes),
  //                   "memory_pools_supported" (0/1), "async_allocations" (0/1: pools in use),
  //                   "queue_count".
  // Anything else: NOT_FOUND naming the category and the key.
  [[nodiscard]] StatusOr<std::int64_t> QueryI64(std::string_view category,
                                                std::string_view key) const;

  // Gives memory the device holds but does not use back to the driver: the allocator's cache,
  // then each pool down to its minimum capacity. Does not wait for queued work: memory whose free
  // is still pending on a queue is released by a later Trim (Synchronize first to release all).
  [[nodiscard]] Status Trim();
  // Waits for every queue (first error returned; every queue is waited for regardless), then for
  // the queue operations whose work completed to be retired (their signal semaphores hold their
  // values, Dealloca'd memory is freed). Deferred operations are not waited for.
  [[nodiscard]] Status Synchronize();

  // Profiling hooks. Begin starts a capture (FAILED_PRECONDITION when one is active); End ends it
  // (FAILED_PRECONDITION when none is). No-ops otherwise for now.
  [[nodiscard]] Status BeginProfiling(const ProfilingOptions& options = {});
  [[nodiscard]] Status EndProfiling();
  [[nodiscard]] bool profiling() const;

 private:
  friend class Channel;  // counts itself in live_channels_

  Device(const CudaApi* api, const NcclApi* nccl, DeviceInfo info, DeviceParams params,
         std::string identifier)
      : api_(api),
        nccl_(nccl),
        info_(std::move(info)),
        params_(std::move(params)),
        identifier_(std::move(identifier)) {}

  // Steps 3-9 of creation (retain ... pop); undoes its own partial work on failure.
  [[nodiscard]] Status Initialize();
  // Creates queues, pools and the allocator (the context is current).
  [[nodiscard]] Status CreateResources();
  // Destroys the allocator, pools and queues in reverse order of creation (the context should be
  // current; failures go to ReportDroppedStatus).
  void DestroyResources() noexcept;

  const CudaApi* const api_;
  const NcclApi* const nccl_;
  const DeviceInfo info_;
  const DeviceParams params_;
  const std::string identifier_;

  PrimaryContextHandle primary_;  // the retain; released last
  CUcontext context_ = nullptr;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::unique_ptr<QueueScheduler> scheduler_;  // after the queues: destroyed before them
  std::atomic<std::uint64_t> semaphores_made_{0};
  std::unique_ptr<MemoryPools> pools_;
  std::unique_ptr<Allocator> allocator_;

  mutable std::mutex channel_mu_;
  std::shared_ptr<ChannelProvider> channel_provider_;  // guarded by channel_mu_
  std::atomic<int> live_channels_{0};                  // changed by Channel

  mutable std::mutex profiling_mu_;
  bool profiling_ = false;  // guarded by profiling_mu_
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DEVICE_DEVICE_H_
