// Copyright 2026 The cuhal Authors.
// Allocator: the interface through which a Device makes buffers, with statistics and
// compatibility queries. CudaAllocator (cuda_allocator.h) is the default implementation.
#ifndef CUHAL_CORE_MEMORY_ALLOCATOR_H_
#define CUHAL_CORE_MEMORY_ALLOCATOR_H_

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/base/status_or.h"
#include "core/memory/buffer.h"
#include "core/memory/memory_types.h"

namespace cuhal {

// What an allocator can do with buffers of some params and size.
struct BufferCompatibility {
  bool allocatable = false;     // Allocate can make it
  bool importable = false;      // Import can wrap caller-owned host memory as it
  bool host_visible = false;    // Map works on it
  bool device_visible = false;  // queue operations (and later kernels) can use it
  // When neither allocatable nor importable: why, and the code Allocate/Import answer with.
  StatusCode refusal_code = StatusCode::kOk;
  std::string refusal;
};

// Counters of one heap, kept by the Allocator base class (host-side bookkeeping; no driver call).
struct HeapStatistics {
  std::uint64_t bytes_current = 0;      // bytes of live buffers
  std::uint64_t bytes_peak = 0;         // the largest bytes_current seen
  std::uint64_t buffers_current = 0;    // live buffers
  std::uint64_t allocations_total = 0;  // successful Allocate/Import calls
  std::uint64_t frees_total = 0;        // buffers destroyed or Reset
};

struct AllocatorStatistics {
  std::array<HeapStatistics, kMemoryHeapCount> heaps{};

  [[nodiscard]] const HeapStatistics& heap(MemoryHeap h) const {
    return heaps[static_cast<std::size_t>(h)];
  }
  [[nodiscard]] std::uint64_t buffers_current() const;
  [[nodiscard]] std::uint64_t bytes_current() const;
};

// Makes buffers. Public methods are non-virtual and do the checks and bookkeeping every
// allocator shares; implementations override the private Do* hooks (RMM's pattern).
//
// Ownership: owned by its Device (replaceable with Device::ReplaceAllocator) or by whoever made
// it; it must outlive every Buffer it made (see Buffer's lifetime rules). Destroying an allocator
// with live buffers reports FAILED_PRECONDITION through ReportDroppedStatus.
// Thread-safety: every public method may be called from any thread concurrently; implementations
// must make their hooks thread-safe too. Stream ordering: Allocate and Import return memory that
// is ready for use on every queue at once; a buffer's memory is freed on the host's timeline when
// the Buffer goes (the caller first makes sure no queued work still uses it).
class Allocator {
 public:
  virtual ~Allocator();
  Allocator(const Allocator&) = delete;             // buffers point at their allocator
  Allocator& operator=(const Allocator&) = delete;  // ditto

  // A new buffer of `size` bytes (> 0) on params.heap. Errors: the refusal of
  // QueryCompatibility (INVALID_ARGUMENT for impossible params, UNIMPLEMENTED for what the device
  // lacks, RESOURCE_EXHAUSTED for more than the device has), or the failing driver call, under
  // "allocating <size> bytes of <heap> memory".
  [[nodiscard]] StatusOr<Buffer> Allocate(const BufferParams& params, std::size_t size);
  // Wraps caller-owned host memory [host, host + size) as an imported-host buffer (params.heap
  // must be kImportedHost). The memory must stay allocated until the Buffer is gone; the Buffer
  // unregisters it but never frees it.
  [[nodiscard]] StatusOr<Buffer> Import(const BufferParams& params, void* host, std::size_t size);
  // Whether and how buffers of these params and size can be made. No driver call.
  [[nodiscard]] BufferCompatibility QueryCompatibility(const BufferParams& params,
                                                       std::size_t size) const;
  // A snapshot of the counters.
  [[nodiscard]] AllocatorStatistics Statistics() const;
  [[nodiscard]] std::uint64_t live_buffers() const;
  // Returns cached memory the allocator holds (if any) to the driver.
  [[nodiscard]] Status Trim();

  // Stream-ordered allocation, for queue-ordered Alloca/Dealloca (core/device/queue.h): a pool
  // buffer (params.pool set) whose memory is valid on `stream` from this call's point in the
  // stream's order on, and on other streams once they wait for that point (cuMemAllocFromPoolAsync;
  // nothing waits on the host). The caller makes the allocator's context current or not (the
  // allocator enters it). UNIMPLEMENTED when the allocator has no stream-ordered path (the
  // default); otherwise as Allocate.
  [[nodiscard]] StatusOr<Buffer> AllocateOnStream(const BufferParams& params, std::size_t size,
                                                  CUstream stream);
  // Frees `buffer` (made by this allocator, a pool buffer) in `stream`'s order (cuMemFreeAsync):
  // the memory stays valid for work enqueued on `stream` before this call. On success `buffer` is
  // empty; on failure it is left as it was (still owned by the caller). UNIMPLEMENTED by default;
  // INVALID_ARGUMENT for an empty buffer, one of another allocator, or one not from a pool.
  [[nodiscard]] Status ReleaseOnStream(Buffer& buffer, CUstream stream);

 protected:
  Allocator() = default;

 private:
  friend class Buffer;  // calls Release
  // Frees a buffer's allocation and updates the counters (even when the driver call fails: the
  // Buffer is gone either way).
  [[nodiscard]] Status Release(const Allocation& allocation) noexcept;
  void Record(const Allocation& allocation);

  virtual BufferCompatibility DoQueryCompatibility(const BufferParams& params,
                                                   std::size_t size) const = 0;
  virtual StatusOr<Allocation> DoAllocate(const BufferParams& params, std::size_t size) = 0;
  virtual StatusOr<Allocation> DoImport(const BufferParams& params, void* host,
                                        std::size_t size) = 0;
  virtual Status DoRelease(const Allocation& allocation) noexcept = 0;
  virtual Status DoTrim() { return OkStatus(); }
  virtual StatusOr<Allocation> DoAllocateOnStream(const BufferParams& params, std::size_t size,
                                                  CUstream stream);
  virtual Status DoReleaseOnStream(const Allocation& allocation, CUstream stream);

  mutable std::mutex mu_;
  AllocatorStatistics stats_;  // guarded by mu_
};

}  // namespace cuhal

#endif  // CUHAL_CORE_MEMORY_ALLOCATOR_H_
