// Copyright 2026 The cuhal Authors.
// EventPool and Timepoint: the CUDA events a device keeps ready for ordering queues device-side
// (IREE's event_pool and timepoint_pool).
#ifndef CUHAL_CORE_SEMAPHORE_EVENT_POOL_H_
#define CUHAL_CORE_SEMAPHORE_EVENT_POOL_H_

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/mutex.h"
#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"

namespace cuhal {

class Timepoint;

// A free list of CUevents (CU_EVENT_DISABLE_TIMING) of one context, keeping at most `capacity`
// events ready. The first Acquire fills the pool with `capacity` events (a device that never
// orders queues makes none); later Acquires hand out a pooled event, or create one when all are
// in use (cuEventCreate); Release keeps it when fewer than `capacity` are pooled, else destroys
// it (cuEventDestroy). So with at most `capacity` events in use, no driver call is made after the
// first Acquire.
//
// Ownership: owned by its Device's QueueScheduler; owns the pooled events and destroys them when
// destroyed (every acquired event must have been released first; outstanding ones are reported
// through ReportDroppedStatus). Borrows the table and the context.
// Thread-safety: every method may be called from any thread, EXCEPT from inside a host function
// (cuLaunchHostFunc callback): Acquire and Release may call the driver. The caller makes the
// context current for Acquire, Release and destruction.
// Stream ordering: none of its own; an event is re-recorded only after it was released, and
// cuStreamWaitEvent captures the record current at the time of that call, so a later re-record
// never affects a wait already enqueued.
class EventPool {
 public:
  EventPool(const CudaApi* api, std::size_t capacity) : api_(api), capacity_(capacity) {}
  EventPool(const EventPool&) = delete;             // owns events
  EventPool& operator=(const EventPool&) = delete;  // ditto
  ~EventPool();

  // A ready event. Errors name cuEventCreate.
  [[nodiscard]] StatusOr<CUevent> Acquire();
  // Gives `event` back (never from a host function; see the class comment).
  void Release(CUevent event) noexcept;

  // A timepoint object for `event` with one reference, recycled from timepoints whose last
  // reference went (Timepoint::Unref), so that a steady state allocates none: a timepoint is made
  // by the submitting thread and dropped by the worker, and a heap allocation per operation
  // across two threads makes the allocator's arena lock a point of contention between them.
  [[nodiscard]] Timepoint* NewTimepoint(CUevent event, const void* owner);

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  // Events pooled now / handed out and not yet released.
  [[nodiscard]] std::size_t pooled() const;
  [[nodiscard]] std::size_t outstanding() const;

 private:
  const CudaApi* const api_;
  const std::size_t capacity_;
  mutable Mutex mu_;
  friend class Timepoint;
  // Timepoint::Unref's last reference: its event back to the pool, the object kept for reuse.
  void ReleaseTimepoint(Timepoint* timepoint) noexcept;

  std::vector<CUevent> free_ CUHAL_GUARDED_BY(mu_);
  std::vector<Timepoint*> spare_timepoints_ CUHAL_GUARDED_BY(mu_);  // at most capacity_
  std::size_t outstanding_ CUHAL_GUARDED_BY(mu_) = 0;
  bool warmed_ CUHAL_GUARDED_BY(mu_) = false;
};

// One point on a queue's timeline: an event recorded on the queue's stream right after an
// operation's work, standing for "the values that operation signals". A queue operation that
// waits on such a value on another queue of the same device waits for the event
// (cuStreamWaitEvent) instead of for the host.
//
// Ownership: reference counted (intrusive, atomic). The operation that recorded it holds the
// first reference; each queue operation that enqueues a wait on it holds one for the length of
// its cuStreamWaitEvent call. The last Unref gives the event back to its pool. `owner` tags the
// scheduler (device) whose streams may wait on it.
// Thread-safety: Ref/Unref from any thread except a host function (the last Unref may call the
// driver).
// Stream ordering: see EventPool.
class Timepoint {
 public:
  // A new timepoint holding `event` (acquired from `pool`), with one reference.
  static Timepoint* Create(EventPool* pool, CUevent event, const void* owner) {
    return pool->NewTimepoint(event, owner);
  }
  Timepoint(const Timepoint&) = delete;             // reference counted
  Timepoint& operator=(const Timepoint&) = delete;  // ditto

  [[nodiscard]] CUevent event() const noexcept { return event_; }
  [[nodiscard]] const void* owner() const noexcept { return owner_; }

  void Ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) pool_->ReleaseTimepoint(this);
  }

 private:
  friend class EventPool;  // makes, recycles and deletes them
  Timepoint(EventPool* pool, CUevent event, const void* owner)
      : pool_(pool), event_(event), owner_(owner) {}
  ~Timepoint() = default;

  EventPool* const pool_;
  CUevent event_;       // set again when recycled (never while referenced)
  const void* owner_;   // ditto
  std::atomic<int> refs_{1};
};

}  // namespace cuhal

#endif  // CUHAL_CORE_SEMAPHORE_EVENT_POOL_H_
