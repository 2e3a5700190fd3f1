// Copyright 2026 The cuhal Authors.
#include "core/device/queue.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "core/command/command_buffer.h"
#include "core/device/device.h"
#include "core/device/queue_scheduler.h"
#include "core/driver/context_scope.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

constexpr char kEnterContext[] = "making the device's context current";

// Fails a worker-made Alloca's PendingAllocation when the operation is dropped before its work
// made the allocation (a failed wait, teardown, a refused submission), so that its buffer never
// waits forever. Does nothing once the allocation was completed.
struct PendingGuard {
  PendingGuard(std::shared_ptr<PendingAllocation> p, QueueOpLabel l)
      : pending(std::move(p)), label(l) {}
  PendingGuard(const PendingGuard&) = delete;
  PendingGuard& operator=(const PendingGuard&) = delete;
  ~PendingGuard() {
    if (pending->done()) return;
    pending->Complete(AbortedError(StrCat(label.ToString(),
                                          ": the operation failed before its memory was "
                                          "allocated (its signal semaphores say why)")));
  }
  std::shared_ptr<PendingAllocation> pending;
  QueueOpLabel label;
};

}  // namespace

StatusOr<std::unique_ptr<Queue>> Queue::Create(const CudaApi* api, CUcontext context, int index) {
  const std::string what = StrCat("creating queue ", index);
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api, context), what, ": ",
                         kEnterContext);
  CUstream stream = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING), what);
  std::unique_ptr<Queue> queue(new Queue(api, context, index, StreamHandle(api, stream)));
  CUHAL_RETURN_IF_ERROR(scope.Exit(), what);
  return queue;
}

Status Queue::Fill(Buffer& target, std::size_t offset, std::size_t length, const void* pattern,
                   std::size_t pattern_length) {
  const std::string what = StrCat("queue ", index_, ": filling ", length, " bytes");
  if (pattern == nullptr) return InvalidArgumentError(StrCat(what, ": the pattern is null"));
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4) {
    return InvalidArgumentError(
        StrCat(what, ": the pattern length must be 1, 2 or 4, got ", pattern_length));
  }
  CUHAL_RETURN_IF_ERROR(target.CheckRange(offset, length, what));
  if (offset % pattern_length != 0 || length % pattern_length != 0) {
    return InvalidArgumentError(StrCat(what, ": offset ", offset, " and length ", length,
                                       " must be multiples of the pattern length ",
                                       pattern_length));
  }
  const CUdeviceptr address = target.device_ptr() + offset;
  if (address % pattern_length != 0) {
    return InvalidArgumentError(StrCat(what, ": address 0x", std::hex,
                                       static_cast<std::uint64_t>(address), std::dec,
                                       " is not aligned to the pattern length ", pattern_length));
  }
  std::uint32_t value = 0;
  std::memcpy(&value, pattern, pattern_length);
  return FillRange(address, length, value, pattern_length);
}

Status Queue::FillRange(CUdeviceptr address, std::size_t length, std::uint32_t value,
                        std::size_t pattern_length) {
  // Formatted only on a failure (the hot path of Execute).
  const auto what = [&] { return StrCat("queue ", index_, ": filling ", length, " bytes"); };
  if (length == 0) return OkStatus();
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), what(), ": ",
                         kEnterContext);
  const std::size_t count = length / pattern_length;
  switch (pattern_length) {
    case 1:
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemsetD8Async, address,
                                     static_cast<unsigned char>(value), count, stream_.get()),
                            what());
      break;
    case 2:
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemsetD16Async, address,
                                     static_cast<unsigned short>(value), count, stream_.get()),
                            what());
      break;
    default:
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemsetD32Async, address,
                                     static_cast<unsigned int>(value), count, stream_.get()),
                            what());
      break;
  }
  CUHAL_RETURN_IF_ERROR(scope.Exit(), what());
  return OkStatus();
}

Status Queue::Copy(const Buffer& source, std::size_t source_offset, Buffer& target,
                   std::size_t target_offset, std::size_t length) {
  const std::string what = StrCat("queue ", index_, ": copying ", length, " bytes");
  CUHAL_RETURN_IF_ERROR(source.CheckRange(source_offset, length, StrCat(what, " (source)")));
  CUHAL_RETURN_IF_ERROR(target.CheckRange(target_offset, length, StrCat(what, " (target)")));
  if (source.device_ptr() == target.device_ptr() && length != 0 &&
      source_offset < target_offset + length && target_offset < source_offset + length) {
    return InvalidArgumentError(StrCat(what, ": source [", source_offset, ", +", length,
                                       ") and target [", target_offset,
                                       ", +", length, ") overlap in one buffer"));
  }
  return CopyRange(source.device_ptr() + source_offset, target.device_ptr() + target_offset,
                   length);
}

Status Queue::CopyRange(CUdeviceptr source, CUdeviceptr target, std::size_t length) {
  // Formatted only on a failure (the hot path of Execute).
  const auto what = [&] { return StrCat("queue ", index_, ": copying ", length, " bytes"); };
  if (length == 0) return OkStatus();
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), what(), ": ",
                         kEnterContext);
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuMemcpyAsync, target, source, length, stream_.get()),
                        what());
  CUHAL_RETURN_IF_ERROR(scope.Exit(), what());
  return OkStatus();
}

Status Queue::Write(std::span<const std::byte> source, Buffer& target,
                    std::size_t target_offset) {
  const std::string what = StrCat("queue ", index_, ": writing ", source.size(), " bytes");
  CUHAL_RETURN_IF_ERROR(target.CheckRange(target_offset, source.size(), what));
  return WriteRange(source, target.device_ptr() + target_offset);
}

Status Queue::WriteRange(std::span<const std::byte> source, CUdeviceptr target) {
  // Formatted only on a failure (the hot path of Execute).
  const auto what = [&] { return StrCat("queue ", index_, ": writing ", source.size(), " bytes"); };
  if (source.empty()) return OkStatus();
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), what(), ": ",
                         kEnterContext);
  CUHAL_RETURN_IF_ERROR(
      CUHAL_CU(api_, cuMemcpyHtoDAsync, target, source.data(), source.size(), stream_.get()),
      what());
  CUHAL_RETURN_IF_ERROR(scope.Exit(), what());
  return OkStatus();
}

Status Queue::Read(const Buffer& source, std::size_t source_offset, std::span<std::byte> target) {
  const std::string what = StrCat("queue ", index_, ": reading ", target.size(), " bytes");
  CUHAL_RETURN_IF_ERROR(source.CheckRange(source_offset, target.size(), what));
  return ReadRange(source.device_ptr() + source_offset, target);
}

Status Queue::ReadRange(CUdeviceptr source, std::span<std::byte> target) {
  // Formatted only on a failure (the hot path of Execute).
  const auto what = [&] { return StrCat("queue ", index_, ": reading ", target.size(), " bytes"); };
  if (target.empty()) return OkStatus();
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, context_), what(), ": ",
                         kEnterContext);
  CUHAL_RETURN_IF_ERROR(
      CUHAL_CU(api_, cuMemcpyDtoHAsync, target.data(), source, target.size(), stream_.get()),
      what());
  CUHAL_RETURN_IF_ERROR(scope.Exit(), what());
  return OkStatus();
}

Status Queue::Synchronize() {
  // The host function that reports what was enqueued goes on the stream first (the worker may
  // not have enqueued it yet), so that the synchronized stream has run it.
  // With DeviceParams::issue_on_worker, what was submitted before is issued by the worker first.
  if (scheduler_ != nullptr) {
    scheduler_->WaitForIssued();
    scheduler_->EnqueuePendingCompletion(this);
  }
  return CUHAL_CU(api_, cuStreamSynchronize, stream_.get())
      .AddContext(StrCat("synchronizing queue ", index_));
}

StatusOr<bool> Queue::IsIdle() {
  if (api_->cuStreamQuery == nullptr) return MissingEntryStatus("libcuda", "cuStreamQuery");
  const CUresult result = api_->cuStreamQuery(stream_.get());
  if (result == CUDA_SUCCESS) return true;
  if (result == CUDA_ERROR_NOT_READY) return false;
  return CudaResultToStatus(api_, result, "cuStreamQuery")
      .AddContext(StrCat("querying queue ", index_));
}

Status Queue::RequireScheduler(const std::string& what) const {
  if (scheduler_ == nullptr || device_ == nullptr) {
    return FailedPreconditionError(
        StrCat(what, ": queue operations need a queue made by a Device (Device::queue)"));
  }
  return OkStatus();
}

namespace {

// A recycled action when the scheduler has one (see QueueScheduler::NewAction).
std::unique_ptr<QueueAction> NewAction(QueueScheduler& scheduler, QueueOpLabel label, Queue* queue,
                                       SemaphoreList waits, SemaphoreList signals) {
  std::unique_ptr<QueueAction> action = scheduler.NewAction();
  action->label = label;
  action->queue = queue;
  action->waits.assign(waits.begin(), waits.end());
  action->signals.assign(signals.begin(), signals.end());
  return action;
}

}  // namespace

StatusOr<Buffer> Queue::Alloca(SemaphoreList waits, SemaphoreList signals, MemoryPoolKind pool,
                               const BufferParams& params, std::size_t size) {
  // Messages are formatted only on a failure: a ready submission allocates no string.
  const QueueOpLabel label{.kind = QueueOpLabel::Kind::kAlloca, .queue_index = index_,
                           .count = size, .pool = pool};
  const auto what = [&label] { return label.ToString(); };
  if (scheduler_ == nullptr || device_ == nullptr) return RequireScheduler(what());
  if (params.heap != MemoryHeap::kDeviceLocal) {
    return InvalidArgumentError(StrCat(what(), ": queue-ordered buffers are device-local, not ",
                                       MemoryHeapName(params.heap)));
  }
  Allocator& allocator = device_->allocator();
  const bool ordered = device_->pools() != nullptr;
  BufferParams p = params;
  Buffer result;
  std::unique_ptr<QueueAction> action = NewAction(*scheduler_, label, this, waits, signals);
  if (ordered && scheduler_->issue_on_worker()) {
    // The worker makes the allocation; the buffer exists now, its address once it is made
    // (PendingAllocation). What the caller could get wrong is refused now, as it would be below.
    p.pool = pool;
    if (BufferCompatibility c = allocator.QueryCompatibility(p, size); !c.allocatable) {
      return Status(c.refusal_code, StrCat(what(), ": ", c.refusal));
    }
    auto pending = std::make_shared<PendingAllocation>();
    action->pending = pending;
    action->work_at_submit = true;
    action->work = [guard = std::make_shared<PendingGuard>(pending, label), &allocator, p,
                    size](QueueAction& a) -> Status {
      StatusOr<Buffer> made = allocator.AllocateOnStream(p, size, a.queue->stream());
      Status status = made.status();
      guard->pending->Complete(std::move(made));
      return status;
    };
    CUHAL_RETURN_IF_ERROR(scheduler_->Submit(std::move(action)));
    return PendingAllocation::NewBuffer(std::move(pending), &allocator, MemoryHeap::kDeviceLocal,
                                        pool, size);
  }
  if (ordered) {
    p.pool = pool;
    action->work_at_submit = true;
    action->work = [&result, &allocator, p, size](QueueAction& a) -> Status {
      CUHAL_ASSIGN_OR_RETURN(result, allocator.AllocateOnStream(p, size, a.queue->stream()));
      return OkStatus();
    };
  } else {
    p.pool = std::nullopt;
    CUHAL_ASSIGN_OR_RETURN(result, allocator.Allocate(p, size), what());
  }
  Status submitted = scheduler_->Submit(std::move(action));
  if (!submitted.ok()) {
    if (result) {
      Status freed = ordered ? allocator.ReleaseOnStream(result, stream_.get()) : result.Reset();
      ReportDroppedStatus(freed.AddContext(StrCat(what(), ": giving the buffer back")));
      ReportDroppedStatus(result.Reset());
    }
    return submitted;
  }
  return result;
}

Status Queue::Dealloca(SemaphoreList waits, SemaphoreList signals, Buffer buffer) {
  const QueueOpLabel label{.kind = QueueOpLabel::Kind::kDealloca, .queue_index = index_,
                           .count = buffer.size()};
  if (scheduler_ == nullptr || device_ == nullptr) {
    return RequireScheduler(label.ToString());
  }
  if (!buffer) {
    return InvalidArgumentError(
        StrCat(label.ToString(), ": the buffer is empty"));
  }
  std::unique_ptr<QueueAction> action = NewAction(*scheduler_, label, this, waits, signals);
  Allocator* allocator = &device_->allocator();
  const bool ordered =
      buffer.allocator() == allocator && buffer.pool().has_value() && device_->pools() != nullptr;
  action->hold = std::move(buffer);
  if (ordered) {
    action->work = [allocator](QueueAction& a) {
      return allocator->ReleaseOnStream(a.hold, a.queue->stream());
    };
  }
  return scheduler_->Submit(std::move(action));
}

Status Queue::Execute(SemaphoreList waits, SemaphoreList signals, TransferBatch work) {
  const QueueOpLabel label{.kind = QueueOpLabel::Kind::kExecute, .queue_index = index_,
                           .count = work.size()};
  if (scheduler_ == nullptr || device_ == nullptr) {
    return RequireScheduler(label.ToString());
  }
  std::unique_ptr<QueueAction> action = NewAction(*scheduler_, label, this, waits, signals);
  if (!work.empty()) {
    auto batch = std::make_shared<TransferBatch>(std::move(work));
    action->work = [batch](QueueAction& a) { return batch->Run(*a.queue); };
  }
  return scheduler_->Submit(std::move(action));
}

Status Queue::TransferRange(SemaphoreList waits, SemaphoreList signals,
                            std::span<const std::byte> source, Buffer& target,
                            std::size_t target_offset) {
  TransferBatch batch;
  CUHAL_RETURN_IF_ERROR(batch.Write(source, target, target_offset), "queue ", index_,
                        ": transfer range (host to device)");
  return Execute(waits, signals, std::move(batch));
}

Status Queue::TransferRange(SemaphoreList waits, SemaphoreList signals, const Buffer& source,
                            std::size_t source_offset, std::span<std::byte> target) {
  TransferBatch batch;
  CUHAL_RETURN_IF_ERROR(batch.Read(source, source_offset, target), "queue ", index_,
                        ": transfer range (device to host)");
  return Execute(waits, signals, std::move(batch));
}

Status Queue::TransferRange(SemaphoreList waits, SemaphoreList signals, const Buffer& source,
                            std::size_t source_offset, Buffer& target, std::size_t target_offset,
                            std::size_t length) {
  TransferBatch batch;
  CUHAL_RETURN_IF_ERROR(batch.Copy(source, source_offset, target, target_offset, length),
                        "queue ", index_, ": transfer range (device to device)");
  return Execute(waits, signals, std::move(batch));
}

Status Queue::Execute(SemaphoreList waits, SemaphoreList signals,
                      std::shared_ptr<const CommandBuffer> command_buffer,
                      std::span<const Binding> bindings) {
  if (command_buffer == nullptr) {
    return InvalidArgumentError(StrCat("queue ", index_, ": execute of a null command buffer"));
  }
  const std::string what = StrCat("queue ", index_, ": execute of ", command_buffer->params().name,
                                  " (", command_buffer->commands().size(), " command(s))");
  CUHAL_RETURN_IF_ERROR(RequireScheduler(what));
  CUHAL_RETURN_IF_ERROR(command_buffer->CheckRunsOn(stream_.get()), what);
  CUHAL_ASSIGN_OR_RETURN(std::vector<ResolvedBinding> resolved, command_buffer->Resolve(bindings),
                         what);
  std::unique_ptr<QueueAction> action = NewAction(*scheduler_, {}, this, waits, signals);
  action->named = what;
  action->work = [command_buffer = std::move(command_buffer),
                  resolved = std::move(resolved)](QueueAction& a) {
    return command_buffer->Issue(a.queue->stream(), resolved);
  };
  return scheduler_->Submit(std::move(action));
}

Status Queue::Barrier(SemaphoreList waits, SemaphoreList signals) {
  const QueueOpLabel label{.kind = QueueOpLabel::Kind::kBarrier, .queue_index = index_};
  if (scheduler_ == nullptr || device_ == nullptr) {
    return RequireScheduler(label.ToString());
  }
  return scheduler_->Submit(NewAction(*scheduler_, label, this, waits, signals));
}

Status Queue::Flush() {
  CUHAL_RETURN_IF_ERROR(RequireScheduler(StrCat("queue ", index_, ": flush")));
  scheduler_->Flush();
  return OkStatus();
}

}  // namespace cuhal
