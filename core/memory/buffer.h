// Copyright 2026 The cuhal Authors.
// Buffer: a move-only owner of one allocation made by an Allocator.
#ifndef CUHAL_CORE_MEMORY_BUFFER_H_
#define CUHAL_CORE_MEMORY_BUFFER_H_

#include <cuda.h>

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "core/base/mutex.h"
#include "core/base/status_or.h"
#include "core/memory/memory_types.h"

namespace cuhal {

class Allocator;
class PendingAllocation;

// What an allocator made: where the bytes are and how to give them back. Plain data; the
// allocator that made it interprets `allocator_data`.
struct Allocation {
  MemoryHeap heap = MemoryHeap::kDeviceLocal;
  std::optional<MemoryPoolKind> pool;  // set when the memory came from a device pool
  CUdeviceptr device_ptr = 0;          // the address device work uses (all heaps)
  void* host_ptr = nullptr;            // the address the host uses; null when not host-visible
  std::size_t size = 0;
  std::uintptr_t allocator_data = 0;   // private to the allocator that made it
};

// A range of device-visible memory, owned.
//
// Lifetime rules (who frees what, when):
//  - A Buffer is made by Allocator::Allocate or Allocator::Import and frees its allocation
//    through that same allocator when it is destroyed or Reset (imported buffers only drop the
//    registration: the caller's host memory stays the caller's, and must outlive the Buffer).
//  - The Allocator (and so the Device that owns it) must outlive every Buffer it made. A Device
//    destroyed with live buffers reports FAILED_PRECONDITION through ReportDroppedStatus.
//  - Destroying a Buffer frees its memory at once, on the host's timeline: every queue operation
//    that uses the buffer must have completed first (Queue::Synchronize or Device::Synchronize).
//    Queue-ordered deallocation (freeing in a queue's order without waiting) is a separate,
//    later API.
//  - Moving transfers ownership; the moved-from Buffer is empty (operator bool is false) and
//    destroying it does nothing. Copying is deleted: two owners would free twice.
//  - Spans returned by Map point at the memory, not at the Buffer object: they stay valid when
//    the Buffer is moved, and dangle once it is destroyed or Reset.
//  - A buffer of a queue-ordered allocation that the device's worker makes (Queue::Alloca on a
//    device with DeviceParams::issue_on_worker) exists before its memory: heap, pool and size are
//    known at once; device_ptr(), allocation(), Map, Reset and destruction wait until the worker
//    made the allocation (a wait on the worker's next pass, never on the device or the host).
//    When the worker could not make it, allocation_status() says why, device_ptr() is 0 and the
//    buffer holds nothing to free.
//
// Thread-safety: like unique_ptr. Const accessors may be called from any thread; Map, Unmap,
// Reset, moves and destruction need exclusive access. Several queues on several threads may
// enqueue work on one buffer at the same time (they only read its addresses); ordering that
// work is the caller's job.
// Stream ordering: a Buffer enqueues nothing itself. Host access through Map is not ordered with
// queue work: the host sees what device work wrote only after that work completed
// (Queue::Synchronize), and device work sees host writes made before it was enqueued.
class Buffer {
 public:
  // An empty buffer (owns nothing).
  Buffer() noexcept = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;             // two owners would free twice
  Buffer& operator=(const Buffer&) = delete;  // ditto
  // Frees the allocation (see the class comment); a failure goes to ReportDroppedStatus.
  ~Buffer();

  [[nodiscard]] explicit operator bool() const noexcept { return allocator_ != nullptr; }
  [[nodiscard]] MemoryHeap heap() const noexcept { return allocation_.heap; }
  [[nodiscard]] std::optional<MemoryPoolKind> pool() const noexcept { return allocation_.pool; }
  [[nodiscard]] std::size_t size() const noexcept { return allocation_.size; }
  [[nodiscard]] CUdeviceptr device_ptr() const noexcept { return allocation().device_ptr; }
  [[nodiscard]] bool host_visible() const noexcept { return allocation().host_ptr != nullptr; }
  [[nodiscard]] const Allocation& allocation() const noexcept {
    return pending_ == nullptr ? allocation_ : PendingAllocationOf();
  }
  // OK, or why the worker could not make this buffer's memory (see the class comment); waits for
  // the worker as device_ptr() does. OK for every other buffer, empty ones included.
  [[nodiscard]] Status allocation_status() const;
  // The allocator that made it (null when empty).
  [[nodiscard]] Allocator* allocator() const noexcept { return allocator_; }

  // Host access to bytes [offset, offset + length) of a host-visible buffer. Maps nest: each Map
  // must be matched by one Unmap (destroying the buffer unmaps everything). Errors:
  // FAILED_PRECONDITION for an empty or device-local buffer, OUT_OF_RANGE for a range past the
  // end. Makes no driver call and does not synchronize (see the class comment).
  [[nodiscard]] StatusOr<std::span<std::byte>> Map(std::size_t offset, std::size_t length);
  // The whole buffer.
  [[nodiscard]] StatusOr<std::span<std::byte>> Map() { return Map(0, size()); }
  // Ends one Map. FAILED_PRECONDITION when the buffer is not mapped.
  [[nodiscard]] Status Unmap();
  [[nodiscard]] int map_count() const noexcept { return map_count_; }

  // Frees the allocation now and says how that went; the buffer is empty afterwards whatever the
  // outcome (a failed free cannot be retried safely). OK for an empty buffer.
  [[nodiscard]] Status Reset() noexcept;

  // OK when [offset, offset + length) lies inside a non-empty buffer; otherwise
  // FAILED_PRECONDITION (empty) or OUT_OF_RANGE naming `what`, the range and the size.
  [[nodiscard]] Status CheckRange(std::size_t offset, std::size_t length,
                                  std::string_view what) const;

 private:
  friend class Allocator;          // the only maker of non-empty buffers
  friend class PendingAllocation;  // makes a buffer whose memory the worker makes later
  Buffer(Allocator* allocator, const Allocation& allocation) noexcept
      : allocator_(allocator), allocation_(allocation) {}
  [[nodiscard]] const Allocation& PendingAllocationOf() const noexcept;
  // Takes the pending allocation in, once it is made (waits for it); empties the buffer when it
  // could not be made. Nothing for other buffers.
  void Resolve() noexcept;

  Allocator* allocator_ = nullptr;
  Allocation allocation_{};
  int map_count_ = 0;
  std::shared_ptr<const PendingAllocation> pending_;  // until Resolve
};

// Where a queue-ordered allocation that a device's worker makes later lands: the Buffer handed out
// at submission (NewBuffer) reads it, the worker Completes it once.
//
// Ownership: shared by that Buffer and the operation's work (std::shared_ptr). Thread-safety:
// Complete from the worker, everything else from any thread. Stream ordering: none of its own;
// the allocation it receives is valid in the operation's queue order.
class PendingAllocation {
 public:
  PendingAllocation() = default;
  PendingAllocation(const PendingAllocation&) = delete;             // shared by address
  PendingAllocation& operator=(const PendingAllocation&) = delete;  // ditto

  // The buffer of `size` bytes of `heap` memory (from `pool`) that `allocator` will make: its
  // allocation comes from Complete. Counted by the allocator once made.
  static Buffer NewBuffer(std::shared_ptr<PendingAllocation> self, Allocator* allocator,
                          MemoryHeap heap, std::optional<MemoryPoolKind> pool, std::size_t size);
  // The allocation was made (`made` gives its ownership to the buffer made by NewBuffer) or could
  // not be (why). The first call counts; later ones do nothing (a made buffer is freed then).
  void Complete(StatusOr<Buffer> made) noexcept;
  // Blocks until Complete; then the allocation (all zero when it failed) and its status.
  [[nodiscard]] const Allocation& Wait() const noexcept;
  [[nodiscard]] const Status& status() const noexcept;
  // Whether Complete has run (never blocks).
  [[nodiscard]] bool done() const noexcept { return done_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> done_{false};  // Complete has run; allocation_ and status_ are final
  mutable Mutex mu_;
  mutable CondVar cv_;
  Allocation allocation_{};
  Status status_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_MEMORY_BUFFER_H_
