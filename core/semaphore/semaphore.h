// Copyright 2026 The cuhal Authors.
// Semaphore: a 64-bit timeline semaphore (IREE's iree_hal_semaphore), the one way cuhal orders
// queue operations with each other and with the host.
#ifndef CUHAL_CORE_SEMAPHORE_SEMAPHORE_H_
#define CUHAL_CORE_SEMAPHORE_SEMAPHORE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/mutex.h"
#include "core/base/status_or.h"
#include "core/semaphore/event_pool.h"

namespace cuhal {

class Semaphore;

// A point on a semaphore's timeline: "semaphore reaches value".
struct SemaphoreValue {
  Semaphore* semaphore = nullptr;
  std::uint64_t value = 0;
};

// Absolute deadlines on the steady clock. kInfiniteFuture never expires; a deadline in the past
// makes a wait a poll.
using Deadline = std::chrono::steady_clock::time_point;
inline constexpr Deadline kInfiniteFuture = Deadline::max();
// now + timeout (kInfiniteFuture when that would overflow).
[[nodiscard]] Deadline DeadlineAfter(std::chrono::nanoseconds timeout);

// Told when a semaphore it watches changes (value, failure, or a new timepoint). Called with the
// semaphore's lock held: implementations only set a flag and wake someone (a leaf lock at most),
// and never call back into a semaphore.
class SemaphoreWatcher {
 public:
  virtual void OnSemaphoreChanged() noexcept = 0;

 protected:
  ~SemaphoreWatcher() = default;
};

// A monotonically increasing 64-bit value that the host and queue operations signal and wait on.
//
// Values only go up: Signal(v) with v <= the current value is INVALID_ARGUMENT. A semaphore can
// fail (Fail(status), or a queue operation that was to signal it failed): from then on it stays
// failed, Query/Wait/Signal return the failure (its code and message, with the failing driver
// call named when a driver call failed), and every queue operation waiting on it fails its own
// signal semaphores in turn.
//
// Ownership: made by Device::CreateSemaphore (or Create, for host-only use) and shared
// (shared_ptr, IREE's retain/release): every queue operation that names it keeps a reference
// until it has retired, so the caller may drop its own at any time. A host wait borrows it (the
// caller keeps it alive for the wait). It may outlive its device: once the device is gone it is
// host-only.
// Thread-safety: every method may be called from any thread concurrently, except from inside a
// host function (cuLaunchHostFunc callback): cuhal never signals from there, and neither should
// callers (a signal may release queue work, which makes driver calls).
// Stream ordering: a queue operation that signals a value does so once its work has completed on
// its queue's stream (the device's worker thread signals, after the driver reports completion); a
// queue operation that waits on a value runs only after the value is reached, ordered
// device-side (cuStreamWaitEvent on the signalling operation's event) when the signaller is
// already submitted on a queue of the same device, else released by the worker when the value is
// reached. Host waits wait for the host-visible value, never for a device event.
class Semaphore : public std::enable_shared_from_this<Semaphore> {
 public:
  // A semaphore at `initial_value`. `name` appears in every message about it.
  [[nodiscard]] static std::shared_ptr<Semaphore> Create(std::uint64_t initial_value,
                                                         std::string name = "semaphore");
  Semaphore(const Semaphore&) = delete;             // queue operations point at it
  Semaphore& operator=(const Semaphore&) = delete;  // ditto
  ~Semaphore() = default;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  // The current value, or the failure status once failed.
  [[nodiscard]] StatusOr<std::uint64_t> Query() const;
  // Sets the value to `value` from the host and releases what waits on it. INVALID_ARGUMENT when
  // `value` is not above the current value; the failure when failed.
  [[nodiscard]] Status Signal(std::uint64_t value);
  // Blocks until the value is >= `value` (OK), the semaphore fails (its failure), or `deadline`
  // passes (DEADLINE_EXCEEDED). Never hangs past the deadline.
  [[nodiscard]] Status Wait(std::uint64_t value, Deadline deadline);
  // Fails the semaphore with `status` (an OK status is replaced by UNKNOWN). The first failure
  // wins; later ones are ignored. Every waiter wakes with the failure.
  void Fail(Status status);
  [[nodiscard]] bool failed() const;

  // Waits until every semaphore of `values` reaches its value, one deadline for all. Returns the
  // first failure found, or DEADLINE_EXCEEDED naming a semaphore still short of its value.
  // INVALID_ARGUMENT for a null semaphore. An empty list is OK at once.
  [[nodiscard]] static Status WaitAll(std::span<const SemaphoreValue> values, Deadline deadline);
  // Waits until at least one of `values` is reached; returns the index of one that is. A failed
  // semaphore in the list ends the wait with its failure. INVALID_ARGUMENT for an empty list or a
  // null semaphore.
  [[nodiscard]] static StatusOr<std::size_t> WaitAny(std::span<const SemaphoreValue> values,
                                                     Deadline deadline);

  // --- The queue scheduler's interface (core/device/queue_scheduler.cc) ---------------------
  // How a queue operation waiting on `value` can be ordered now.
  enum class WaitState {
    kSatisfied,  // reached: nothing to wait for
    kDevice,     // a submitted operation of `owner`'s device will signal it: wait on `timepoint`
    kFailed,     // the semaphore failed: `failure`
    kPending,    // nothing submitted will signal it yet: defer
  };
  struct Resolution {
    WaitState state = WaitState::kPending;
    Timepoint* timepoint = nullptr;  // kDevice: referenced for the caller, who Unrefs it
    Status failure;                  // kFailed
  };
  [[nodiscard]] Resolution Resolve(std::uint64_t value, const void* owner);
  // Records that a submitted operation will signal `value` once `timepoint` completes. The
  // semaphore keeps the pointer (no reference) until Complete/DropTimepoint; the caller keeps the
  // timepoint alive until then.
  void AddTimepoint(std::uint64_t value, Timepoint* timepoint);
  // Forgets `timepoint` (its operation completed or failed). A wait resolved after this and
  // before the value is advanced is deferred, and released by the advance.
  void DropTimepoint(std::uint64_t value, Timepoint* timepoint);
  // A queue operation that signals `value` completed: the value becomes max(current, value) (no
  // error when it was already higher; a failed semaphore stays failed).
  void Advance(std::uint64_t value);
  // Registers/unregisters `watcher` (a multiset: each Watch needs its own Unwatch).
  void Watch(SemaphoreWatcher* watcher);
  void Unwatch(SemaphoreWatcher* watcher);

 private:
  Semaphore(std::uint64_t initial_value, std::string name)
      : name_(std::move(name)), value_(initial_value) {}
  void NotifyLocked() CUHAL_REQUIRES(mu_);
  Status FailureLocked() const CUHAL_REQUIRES(mu_);

  const std::string name_;
  mutable Mutex mu_;
  std::uint64_t value_ CUHAL_GUARDED_BY(mu_);
  Status failure_ CUHAL_GUARDED_BY(mu_);
  // The timepoints of submitted signals, by value ascending (equal values in submission order).
  // A deque, not a multimap: signals arrive in ascending order at the back and retire from the
  // front, so a submission allocates no node that the retiring thread would free (a node per
  // signal, allocated by the submitter and freed by the worker, made glibc's arena lock a
  // point of contention between them).
  std::deque<std::pair<std::uint64_t, Timepoint*>> timepoints_ CUHAL_GUARDED_BY(mu_);
  std::vector<SemaphoreWatcher*> watchers_ CUHAL_GUARDED_BY(mu_);
};

}  // namespace cuhal

#endif  // CUHAL_CORE_SEMAPHORE_SEMAPHORE_H_
