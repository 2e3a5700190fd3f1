// Copyright 2026 The cuhal Authors.
#include "core/memory/allocator.h"

#include <algorithm>
#include <utility>

namespace cuhal {
namespace {

std::string Describe(const BufferParams& params, std::size_t size) {
  std::string out = StrCat(size, " bytes of ", MemoryHeapName(params.heap), " memory");
  if (params.pool) out += StrCat(" from the ", MemoryPoolKindName(*params.pool));
  return out;
}

}  // namespace

std::uint64_t AllocatorStatistics::buffers_current() const {
  std::uint64_t total = 0;
  for (const HeapStatistics& h : heaps) total += h.buffers_current;
  return total;
}

std::uint64_t AllocatorStatistics::bytes_current() const {
  std::uint64_t total = 0;
  for (const HeapStatistics& h : heaps) total += h.bytes_current;
  return total;
}

Allocator::~Allocator() {
  const std::uint64_t live = live_buffers();
  if (live != 0) {
    ReportDroppedStatus(FailedPreconditionError(
        StrCat("destroying an allocator that still has ", live,
               " live buffer(s): buffers must be destroyed before their allocator")));
  }
}

StatusOr<Buffer> Allocator::Allocate(const BufferParams& params, std::size_t size) {
  const auto context = [&] { return StrCat("allocating ", Describe(params, size)); };
  if (params.heap == MemoryHeap::kImportedHost) {
    return InvalidArgumentError(
        StrCat(context(), ": imported-host buffers are made by Import, not Allocate"));
  }
  BufferCompatibility compatibility = QueryCompatibility(params, size);
  if (!compatibility.allocatable) {
    return Status(compatibility.refusal_code, StrCat(context(), ": ", compatibility.refusal));
  }
  CUHAL_ASSIGN_OR_RETURN(Allocation allocation, DoAllocate(params, size), context());
  Record(allocation);
  return Buffer(this, allocation);
}

StatusOr<Buffer> Allocator::Import(const BufferParams& params, void* host, std::size_t size) {
  const std::string context = StrCat("importing ", size, " bytes of host memory at ", host);
  if (params.heap != MemoryHeap::kImportedHost) {
    return InvalidArgumentError(StrCat(context, ": Import makes imported-host buffers only, not ",
                                       MemoryHeapName(params.heap)));
  }
  if (host == nullptr) return InvalidArgumentError(StrCat(context, ": the host pointer is null"));
  BufferCompatibility compatibility = QueryCompatibility(params, size);
  if (!compatibility.importable) {
    return Status(compatibility.refusal_code, StrCat(context, ": ", compatibility.refusal));
  }
  CUHAL_ASSIGN_OR_RETURN(Allocation allocation, DoImport(params, host, size), context);
  Record(allocation);
  return Buffer(this, allocation);
}

BufferCompatibility Allocator::QueryCompatibility(const BufferParams& params,
                                                  std::size_t size) const {
  BufferCompatibility compatibility;
  if (size == 0) {
    compatibility.refusal_code = StatusCode::kInvalidArgument;
    compatibility.refusal = "zero-sized buffers are not supported";
    return compatibility;
  }
  if (params.pool && params.heap != MemoryHeap::kDeviceLocal) {
    compatibility.refusal_code = StatusCode::kInvalidArgument;
    compatibility.refusal = StrCat("a pool applies only to the device-local heap, not to ",
                                   MemoryHeapName(params.heap));
    return compatibility;
  }
  compatibility = DoQueryCompatibility(params, size);
  if (compatibility.allocatable || compatibility.importable) {
    compatibility.refusal_code = StatusCode::kOk;
    compatibility.refusal.clear();
  } else if (compatibility.refusal_code == StatusCode::kOk) {
    compatibility.refusal_code = StatusCode::kInvalidArgument;
    if (compatibility.refusal.empty()) compatibility.refusal = "not supported by this allocator";
  }
  return compatibility;
}

AllocatorStatistics Allocator::Statistics() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::uint64_t Allocator::live_buffers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_.buffers_current();
}

StatusOr<Buffer> Allocator::AllocateOnStream(const BufferParams& params, std::size_t size,
                                             CUstream stream) {
  // The context is built only on an error path: this is a caching allocator's hot path, which
  // must not allocate on the heap.
  const auto context = [&] {
    return StrCat("allocating ", Describe(params, size), " in stream order");
  };
  if (!params.pool) {
    return InvalidArgumentError(StrCat(context(), ": stream-ordered buffers come from a pool"));
  }
  BufferCompatibility compatibility = QueryCompatibility(params, size);
  if (!compatibility.allocatable) {
    return Status(compatibility.refusal_code, StrCat(context(), ": ", compatibility.refusal));
  }
  CUHAL_ASSIGN_OR_RETURN(Allocation allocation, DoAllocateOnStream(params, size, stream),
                         context());
  Record(allocation);
  return Buffer(this, allocation);
}

Status Allocator::ReleaseOnStream(Buffer& buffer, CUstream stream) {
  const auto context = [&] {  // built only on an error path (see AllocateOnStream)
    return StrCat("freeing a ", buffer.size(), "-byte buffer in stream order");
  };
  if (buffer.pending_ != nullptr) {  // made by a device's worker: wait for it (buffer.h)
    Status made = buffer.allocation_status();
    buffer.Resolve();
    if (!made.ok()) {
      return FailedPreconditionError(
          StrCat(context(), ": its queue-ordered allocation failed: ", made.ToString()));
    }
  }
  if (!buffer) return InvalidArgumentError(StrCat(context(), ": the buffer is empty"));
  if (buffer.allocator_ != this) {
    return InvalidArgumentError(StrCat(context(), ": another allocator made it"));
  }
  if (!buffer.allocation_.pool) {
    return InvalidArgumentError(StrCat(context(), ": it is not a pool buffer"));
  }
  CUHAL_RETURN_IF_ERROR(DoReleaseOnStream(buffer.allocation_, stream), context());
  const Allocation allocation = std::exchange(buffer.allocation_, Allocation{});
  buffer.allocator_ = nullptr;
  buffer.map_count_ = 0;
  std::lock_guard<std::mutex> lock(mu_);
  HeapStatistics& h = stats_.heaps[static_cast<std::size_t>(allocation.heap)];
  h.bytes_current -= std::min<std::uint64_t>(h.bytes_current, allocation.size);
  if (h.buffers_current > 0) --h.buffers_current;
  ++h.frees_total;
  return OkStatus();
}

StatusOr<Allocation> Allocator::DoAllocateOnStream(const BufferParams&, std::size_t, CUstream) {
  return UnimplementedError("this allocator has no stream-ordered allocation");
}

Status Allocator::DoReleaseOnStream(const Allocation&, CUstream) {
  return UnimplementedError("this allocator has no stream-ordered free");
}

Status Allocator::Trim() { return DoTrim().AddContext("trimming the allocator"); }

void Allocator::Record(const Allocation& allocation) {
  std::lock_guard<std::mutex> lock(mu_);
  HeapStatistics& h = stats_.heaps[static_cast<std::size_t>(allocation.heap)];
  h.bytes_current += allocation.size;
  h.bytes_peak = std::max(h.bytes_peak, h.bytes_current);
  ++h.buffers_current;
  ++h.allocations_total;
}

Status Allocator::Release(const Allocation& allocation) noexcept {
  Status status = DoRelease(allocation);
  std::lock_guard<std::mutex> lock(mu_);
  HeapStatistics& h = stats_.heaps[static_cast<std::size_t>(allocation.heap)];
  h.bytes_current -= std::min<std::uint64_t>(h.bytes_current, allocation.size);
  if (h.buffers_current > 0) --h.buffers_current;
  ++h.frees_total;
  return status;
}

}  // namespace cuhal
