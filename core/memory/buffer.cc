// Copyright 2026 The cuhal Authors.
#include "core/memory/buffer.h"

#include <utility>

#include "core/memory/allocator.h"

namespace cuhal {

Buffer::Buffer(Buffer&& other) noexcept
    : allocator_(std::exchange(other.allocator_, nullptr)),
      allocation_(std::exchange(other.allocation_, Allocation{})),
      map_count_(std::exchange(other.map_count_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    ReportDroppedStatus(Reset());
    allocator_ = std::exchange(other.allocator_, nullptr);
    allocation_ = std::exchange(other.allocation_, Allocation{});
    map_count_ = std::exchange(other.map_count_, 0);
  }
  return *this;
}

Buffer::~Buffer() { ReportDroppedStatus(Reset()); }

Status Buffer::CheckRange(std::size_t offset, std::size_t length, std::string_view what) const {
  if (allocator_ == nullptr) return FailedPreconditionError(StrCat(what, ": the buffer is empty"));
  if (offset > allocation_.size || length > allocation_.size - offset) {
    return OutOfRangeError(StrCat(what, ": range [", offset, ", ", offset, " + ", length,
                                  ") is outside the ", allocation_.size, "-byte buffer"));
  }
  return OkStatus();
}

StatusOr<std::span<std::byte>> Buffer::Map(std::size_t offset, std::size_t length) {
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
  Allocator* allocator = std::exchange(allocator_, nullptr);
  if (allocator == nullptr) return OkStatus();
  const Allocation allocation = std::exchange(allocation_, Allocation{});
  map_count_ = 0;
  return allocator->Release(allocation).AddContext(
      StrCat("freeing a ", allocation.size, "-byte ", MemoryHeapName(allocation.heap),
             " buffer"));
}

}  // namespace cuhal
