// Copyright 2026 The cuhal Authors.
#include "core/device/device.h"

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/driver/context_scope.h"
#include "core/memory/cuda_allocator.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

constexpr char kExecutableFormatCategory[] = "hal.executable.format";
constexpr char kCudaDeviceCategory[] = "cuda.device";
// The executable format a CUDA device loads: a flatbuffer of PTX (IREE's "cuda-nvptx-fb").
constexpr char kNvptxFlatbufferFormat[] = "cuda-nvptx-fb";

}  // namespace

StatusOr<std::unique_ptr<Device>> Device::Create(const Driver& driver, int ordinal,
                                                 const DeviceParams& params,
                                                 std::string identifier) {
  const std::string context = StrCat("creating device ", ordinal);
  CUHAL_RETURN_IF_ERROR(params.Validate(), context);
  CUHAL_ASSIGN_OR_RETURN(DeviceInfo info, driver.QueryDevice(ordinal), context);
  if (identifier.empty()) identifier = StrCat(driver.identifier(), ":", ordinal);
  std::unique_ptr<Device> device(
      new Device(driver.cuda(), driver.nccl(), std::move(info), params, std::move(identifier)));
  // On failure Initialize has undone its own work up to the retain; `device`'s destructor
  // releases the primary context (the last step of the unwinding).
  CUHAL_RETURN_IF_ERROR(device->Initialize(), context);
  return device;
}

StatusOr<std::unique_ptr<Device>> Device::CreateByUuid(const Driver& driver,
                                                       std::string_view uuid,
                                                       const DeviceParams& params,
                                                       std::string identifier) {
  CUHAL_ASSIGN_OR_RETURN(DeviceInfo info, driver.FindDeviceByUuid(uuid), "creating device ",
                         uuid);
  return Create(driver, info.ordinal, params, std::move(identifier));
}

Status Device::Initialize() {
  CUcontext context = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuDevicePrimaryCtxRetain, &context, info_.device),
                        "retaining primary context");
  primary_ = PrimaryContextHandle(api_, info_.device + 1);
  context_ = context;
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_),
                         "making primary context current");
  if (Status status = CreateResources(); !status.ok()) {
    DestroyResources();  // in reverse order, with the context still current
    ReportDroppedStatus(scope.Exit());
    return status;
  }
  // If the pop fails the error is returned and the destructor undoes everything.
  return scope.Exit();
}

Status Device::CreateResources() {
  queues_.reserve(static_cast<size_t>(params_.queue_count));
  for (int i = 0; i < params_.queue_count; ++i) {
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Queue> queue, Queue::Create(api_, context_, i));
    queues_.push_back(std::move(queue));
  }
  scheduler_ = std::make_unique<QueueScheduler>(api_, context_, identifier_,
                                                params_.batch_completions,
                                                params_.worker_enqueues_host_functions,
                                                params_.event_pool_capacity,
                                                params_.completion_poll_interval,
                                                params_.issue_on_worker);
  for (const std::unique_ptr<Queue>& queue : queues_) {
    queue->device_ = this;
    queue->scheduler_ = scheduler_.get();
  }
  if (params_.async_allocations && info_.memory_pools_supported) {
    CUHAL_ASSIGN_OR_RETURN(pools_,
                           MemoryPools::Create(api_, info_.device, params_.device_local_pool,
                                               params_.other_pool),
                           "creating memory pools");
  }
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<CudaAllocator> allocator,
                         CudaAllocator::Create(api_, context_, info_, pools_.get()));
  allocator_ = std::move(allocator);
  return OkStatus();
}

void Device::DestroyResources() noexcept {
  const std::string context = StrCat("destroying device ", identifier_);
  allocator_.reset();  // its allocation stream first: created last
  if (pools_) {
    ReportDroppedStatus(pools_->other().Destroy().AddContext(context));
    ReportDroppedStatus(pools_->device_local().Destroy().AddContext(context));
    pools_.reset();
  }
  scheduler_.reset();  // joins the worker (if still running); destroys the pooled events
  while (!queues_.empty()) queues_.pop_back();  // the last queue's stream first
}

Device::~Device() {
  const std::string context = StrCat("destroying device ", identifier_);
  {
    std::lock_guard<std::mutex> lock(channel_mu_);
    channel_provider_.reset();  // before the queues
  }
  if (const int live = live_channels(); live != 0) {
    ReportDroppedStatus(FailedPreconditionError(
        StrCat(context, ": ", live,
               " channel(s) are still alive; channels must be destroyed before their device")));
  }
  // Deferred queue operations fail now (see the class comment); issued ones are waited for below.
  if (scheduler_) scheduler_->BeginShutdown();
  if (allocator_ || pools_ || !queues_.empty()) {
    StatusOr<ContextScope> scope = ContextScope::Enter(api_, context_);
    if (!scope.ok()) {
      ReportDroppedStatus(Status(scope.status())
                              .AddContext("making primary context current (destroying the "
                                          "device's objects without it)")
                              .AddContext(context));
    }
    if (allocator_ && allocator_->live_buffers() != 0) {
      ReportDroppedStatus(FailedPreconditionError(
          StrCat(context, ": ", allocator_->live_buffers(),
                 " buffer(s) are still alive; buffers must be destroyed before their device")));
    }
    for (const std::unique_ptr<Queue>& queue : queues_) {
      ReportDroppedStatus(queue->Synchronize().AddContext(context));
    }
    // Every host function has run: the worker retires what was issued, then exits.
    if (scheduler_) scheduler_->FinishShutdown();
    DestroyResources();
    if (scope.ok()) ReportDroppedStatus(scope->Exit().AddContext(context));
  }
  ReportDroppedStatus(
      primary_.Reset().AddContext("releasing primary context").AddContext(context));
}

StatusOr<std::shared_ptr<Semaphore>> Device::CreateSemaphore(std::uint64_t initial_value) {
  const std::uint64_t n = semaphores_made_.fetch_add(1, std::memory_order_relaxed) + 1;
  return Semaphore::Create(initial_value, StrCat("semaphore ", n, " of ", identifier_));
}

StatusOr<Event> Device::CreateEvent() {
  CUHAL_ASSIGN_OR_RETURN(Event event, Event::Create(api_, context_), "device ", identifier_);
  return event;
}

Status Device::ReplaceAllocator(std::unique_ptr<Allocator> allocator) {
  const std::string context = StrCat("replacing the allocator of device ", identifier_);
  if (allocator == nullptr) return InvalidArgumentError(StrCat(context, ": null allocator"));
  if (const std::uint64_t live = allocator_->live_buffers(); live != 0) {
    return FailedPreconditionError(StrCat(context, ": the current allocator still has ", live,
                                          " live buffer(s)"));
  }
  // Destroying a CudaAllocator makes driver calls (its allocation stream): in the context.
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), context);
  allocator_.swap(allocator);  // `allocator` now holds the previous one
  allocator.reset();
  return scope.Exit().AddContext(context);
}

void Device::ReplaceChannelProvider(std::shared_ptr<ChannelProvider> provider) {
  std::lock_guard<std::mutex> lock(channel_mu_);
  channel_provider_.swap(provider);
  // The previous provider (now in `provider`) is released after the lock.
}

std::shared_ptr<ChannelProvider> Device::channel_provider() const {
  std::lock_guard<std::mutex> lock(channel_mu_);
  return channel_provider_;
}

StatusOr<std::shared_ptr<CommandBuffer>> Device::CreateCommandBuffer(
    CommandBufferParams params) const {
  if (!params.target.has_value()) params.target = params_.command_target;
  return CommandBuffer::Create(api_, std::move(params));
}

StatusOr<std::unique_ptr<Channel>> Device::CreateChannel(const ChannelParams& params) {
  const std::string context = StrCat("creating channel on device ", identifier_);
  std::shared_ptr<ChannelProvider> provider = channel_provider();
  // An error before the exchange, when the provider is to exchange the id, is also reported to
  // it (ChannelProvider::Fail), so that the group's other ranks stop waiting for this one. The
  // rank reported is the requested one, or the provider's default.
  auto failed_before_exchange = [&](Status status) -> Status {
    if (!params.id.empty() || provider == nullptr) return status;
    int rank = params.rank;
    if (rank == kChannelRankDefault) {
      StatusOr<RankAndCount> defaults = provider->QueryDefaultRankAndCount();
      if (!defaults.ok()) return status;
      rank = defaults->rank;
    }
    provider->Fail(params.group, rank, status);
    return status;
  };
  if (Status table = RequireNcclTable(nccl_, context); !table.ok()) {
    return failed_before_exchange(std::move(table));
  }
  const int selected = std::popcount(params.queue_affinity);
  const int queue_index = std::countr_zero(params.queue_affinity);
  if (selected != 1 || queue_index >= queue_count()) {
    char mask[32];
    std::snprintf(mask, sizeof(mask), "0x%llx",
                  static_cast<unsigned long long>(params.queue_affinity));
    return failed_before_exchange(InvalidArgumentError(StrCat(
        context, ": queue affinity ", mask, " must select exactly one of the device's ",
        queue_count(), " queue(s) (one bit below bit ", queue_count(), "); it selects ", selected,
        selected == 1 ? StrCat(", queue ", queue_index, ", which does not exist") : "")));
  }

  int rank = params.rank;
  int count = params.count;
  if (rank == kChannelRankDefault || count == kChannelCountDefault) {
    if (provider == nullptr) {
      return FailedPreconditionError(StrCat(
          context, ": the default ", rank == kChannelRankDefault ? "rank" : "count",
          " was requested but the device has no channel provider to ask "
          "(Device::ReplaceChannelProvider), and ChannelParams gives rank ",
          params.rank, ", count ", params.count));
    }
    CUHAL_ASSIGN_OR_RETURN(RankAndCount defaults, provider->QueryDefaultRankAndCount(), context,
                           ": querying the default rank and count");
    if (rank == kChannelRankDefault) rank = defaults.rank;
    if (count == kChannelCountDefault) count = defaults.count;
  }
  if (count < 1 || rank < 0 || rank >= count) {
    return failed_before_exchange(InvalidArgumentError(StrCat(
        context, ": rank ", rank, " and count ", count, " do not satisfy 0 <= rank < count")));
  }

  ChannelId id{};
  if (params.id.empty()) {
    if (provider == nullptr) {
      return FailedPreconditionError(
          StrCat(context,
                 ": the default channel id was requested (ChannelParams::id is empty) but the "
                 "device has no channel provider to exchange it (Device::ReplaceChannelProvider)"));
    }
    if (rank == 0) {
      ncclUniqueId unique_id;
      std::memset(&unique_id, 0, sizeof(unique_id));
      if (Status made = CUHAL_NCCL(nccl_, ncclGetUniqueId, &unique_id); !made.ok()) {
        made.AddContext(StrCat(context, ": making the channel id as rank 0"));
        provider->Fail(params.group, rank, made);
        return made;
      }
      std::memcpy(id.data(), unique_id.internal, kChannelIdSize);
    }
    CUHAL_RETURN_IF_ERROR(provider->ExchangeId(params.group, rank, count, id), context);
  } else if (params.id.size() != kChannelIdSize) {
    return InvalidArgumentError(StrCat(context, ": the channel id must be ", kChannelIdSize,
                                       " bytes (an ncclUniqueId) but ", params.id.size(),
                                       " were given"));
  } else {
    std::memcpy(id.data(), params.id.data(), kChannelIdSize);
  }
  if (IsZeroChannelId(id)) {
    return InvalidArgumentError(
        StrCat(context, ": the channel id is all zeros (no id was made or exchanged)"));
  }
  const std::string where = StrCat(" (rank ", rank, " of ", count, ", queue ", queue_index, ")");
  StatusOr<std::unique_ptr<Channel>> channel =
      Channel::Create(*this, queue(queue_index), id, rank, count);
  if (params.id.empty()) {
    // The id came from the provider: agree with the other ranks that every one of them has its
    // communicator (ChannelProvider::AgreeOnCreation), or none keeps one.
    Status agreed = provider->AgreeOnCreation(params.group, rank, count, channel.status());
    if (!agreed.ok()) {
      if (channel.ok()) {
        Status aborted = (*channel)->Abort();
        if (!aborted.ok()) {
          ReportDroppedStatus(std::move(aborted).AddContext(
              StrCat(context, where, ": aborting the channel another rank failed to create")));
        }
      }
      return std::move(agreed).AddContext(StrCat(context, where));
    }
  }
  if (!channel.ok()) return std::move(channel).status().AddContext(StrCat(context, where));
  return std::move(channel).value();
}

Queue& Device::queue(int index) const {
  if (index < 0 || index >= queue_count()) [[unlikely]] {
    std::fprintf(stderr, "cuhal: device %s has %d queue(s); queue(%d) does not exist\n",
                 identifier_.c_str(), queue_count(), index);
    std::abort();
  }
  return *queues_[static_cast<std::size_t>(index)];
}

StatusOr<MemoryPoolsStatistics> Device::QueryPoolStatistics() const {
  const std::string context = StrCat("reading the pool statistics of device ", identifier_);
  if (!pools_) {
    return FailedPreconditionError(
        StrCat(context, ": the device has no memory pools (async allocations are off, or the "
                        "device does not support memory pools)"));
  }
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), context);
  CUHAL_ASSIGN_OR_RETURN(MemoryPoolsStatistics stats, pools_->QueryStatistics(), context);
  CUHAL_RETURN_IF_ERROR(scope.Exit(), context);
  return stats;
}

StatusOr<std::int64_t> Device::QueryI64(std::string_view category, std::string_view key) const {
  if (category == kExecutableFormatCategory) {
    return key == kNvptxFlatbufferFormat ? 1 : 0;
  }
  if (category == kCudaDeviceCategory) {
    if (key == "compute_capability_major") return info_.compute_capability_major;
    if (key == "compute_capability_minor") return info_.compute_capability_minor;
    if (key == "multiprocessor_count") return info_.multiprocessor_count;
    if (key == "total_memory") return static_cast<std::int64_t>(info_.total_memory);
    if (key == "memory_pools_supported") return info_.memory_pools_supported ? 1 : 0;
    if (key == "async_allocations") return pools_ != nullptr ? 1 : 0;
    if (key == "queue_count") return queue_count();
  }
  return NotFoundError(StrCat("device ", identifier_, " has no configuration value '", category,
                              "' :: '", key, "'"));
}

Status Device::Trim() {
  const std::string context = StrCat("trimming device ", identifier_);
  CUHAL_RETURN_IF_ERROR(allocator_->Trim(), context);
  if (pools_) {
    CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), context,
                           ": making primary context current");
    CUHAL_RETURN_IF_ERROR(pools_->Trim(), context);
    CUHAL_RETURN_IF_ERROR(scope.Exit(), context);
  }
  return OkStatus();
}

Status Device::Synchronize() {
  Status first;
  for (const std::unique_ptr<Queue>& queue : queues_) {
    Status status = queue->Synchronize();
    if (status.ok()) continue;
    if (first.ok()) {
      first = std::move(status);
    } else {
      ReportDroppedStatus(status);
    }
  }
  // The streams are done; the operations whose work completed fire their signals and release
  // what they hold on the scheduler's worker: wait for that too, so that a synchronized device
  // has every issued operation's semaphores at their signalled values.
  scheduler_->WaitForCompletedToRetire();
  if (!first.ok()) first.AddContext(StrCat("synchronizing device ", identifier_));
  return first;
}

Status Device::BeginProfiling(const ProfilingOptions& options) {
  std::lock_guard<std::mutex> lock(profiling_mu_);
  if (profiling_) {
    return FailedPreconditionError(StrCat("device ", identifier_, ": cannot begin profiling '",
                                          options.capture_name,
                                          "': a profiling capture is already active"));
  }
  profiling_ = true;
  return OkStatus();
}

Status Device::EndProfiling() {
  std::lock_guard<std::mutex> lock(profiling_mu_);
  if (!profiling_) {
    return FailedPreconditionError(
        StrCat("device ", identifier_, ": cannot end profiling: no capture is active"));
  }
  profiling_ = false;
  return OkStatus();
}

bool Device::profiling() const {
  std::lock_guard<std::mutex> lock(profiling_mu_);
  return profiling_;
}

}  // namespace cuhal
