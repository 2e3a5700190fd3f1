// Copyright 2026 The cuhal Authors.
#include "core/memory/buffer.h"

#include <utility>

#include "core/memory/allocator.h"

namespace cuhal {

Buffer::Buffer(Buffer&& other) noexcept
    : allocator_(std::exchange(other.allocator_, nullptr)),
      allocation_(std::exchange(other.allocation_, Allocation{})),
      map_count_(std::exchange(other.map_count_, 0)),
      pending_(std::move(other.pending_)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    ReportDroppedStatus(Reset());
    allocator_ = std::exchange(other.allocator_, nullptr);
    allocation_ = std::exchange(other.allocation_, Allocation{});
    map_count_ = std::exchange(other.map_count_, 0);
    pending_ = std::move(other.pending_);
  }
  return *this;
}

Buffer::~Buffer() { ReportDroppedStatus(Reset()); }

const Allocation& Buffer::PendingAllocationOf() const noexcept { return pending_->Wait(); }

Status Buffer::allocation_status() const {
  return pending_ == nullptr ? OkStatus() : pending_->status();
}

void Buffer::Resolve() noexcept {
  if (pending_ == nullptr) return;
  const Allocation& made = pending_->Wait();
  if (pending_->status().ok()) {
    allocation_ = made;
  } else {
    allocator_ = nullptr;  // nothing to free: the failure is the operation's (its signals)
    allocation_ = Allocation{};
  }
  pending_.reset();
}

Status Buffer::CheckRange(std::size_t offset, std::size_t length, std::string_view what) const {
  if (allocator_ == nullptr) return FailedPreconditionError(StrCat(what, ": the buffer is empty"));
  if (offset > allocation_.size || length > allocation_.size - offset) {
    return OutOfRangeError(StrCat(what, ": range [", offset, ", ", offset, " + ", length,
                                  ") is outside the ", allocation_.size, "-byte buffer"));
  }
  return OkStatus();
}

StatusOr<std::span<std::byte>> Buffer::Map(std::size_t offset, std::size_t length) {
  Resolve();
  if (allocator_ != nullptr && allocation_.host_ptr == nullptr) {
    return FailedPreconditionError(StrCat("mapping a ", MemoryHeapName(allocation_.heap),
                                          " buffer: it is not host-visible"));
  }
  CUHAL_RETURN_IF_ERROR(CheckRange(offset, length, "mapping a buffer"));
  ++map_count_;
  return std::span<std::byte>(static_cast<std::byte*>(allocation_.host_ptr) + offset, length);
}

Status Buffer::Unmap() {
  if (map_count_ == 0) return FailedPreconditionError("unmapping a buffer that is not mapped");
  --map_count_;
  return OkStatus();
}

Status Buffer::Reset() noexcept {
  Resolve();
  Allocator* allocator = std::exchange(allocator_, nullptr);
  if (allocator == nullptr) return OkStatus();
  const Allocation allocation = std::exchange(allocation_, Allocation{});
  map_count_ = 0;
  return allocator->Release(allocation).AddContext(
      StrCat("freeing a ", allocation.size, "-byte ", MemoryHeapName(allocation.heap),
             " buffer"));
}

Buffer PendingAllocation::NewBuffer(std::shared_ptr<PendingAllocation> self, Allocator* allocator,
                                    MemoryHeap heap, std::optional<MemoryPoolKind> pool,
                                    std::size_t size) {
  Buffer buffer(allocator, Allocation{.heap = heap, .pool = pool, .size = size});
  buffer.pending_ = std::move(self);
  return buffer;
}

void PendingAllocation::Complete(StatusOr<Buffer> made) noexcept {
  MutexLock lock(mu_);
  if (done_.load(std::memory_order_relaxed)) return;  // `made` (if any) is freed on return
  if (made.ok()) {
    // The buffer handed out takes the allocation over: `made` frees nothing.
    allocation_ = std::exchange(made->allocation_, Allocation{});
    made->allocator_ = nullptr;
  } else {
    status_ = made.status();
  }
  done_.store(true, std::memory_order_release);
  cv_.NotifyAll();
}

const Allocation& PendingAllocation::Wait() const noexcept {
  if (!done_.load(std::memory_order_acquire)) {
    MutexLock lock(mu_);
    while (!done_.load(std::memory_order_relaxed)) cv_.Wait(mu_);
  }
  return allocation_;
}

const Status& PendingAllocation::status() const noexcept {
  static_cast<void>(Wait());
  return status_;
}

}  // namespace cuhal
