// Copyright 2026 The cuhal Authors.
// QueueScheduler: the per-device engine behind the queue operations (Queue::Alloca, Dealloca,
// Execute, Barrier): device-side ordering through timepoints, deferral of what waits on the
// host, one worker thread, completion through host functions (IREE's pending_queue_actions).
//
// INVARIANTS (everything below relies on them):
//  1. No CUDA call is ever made from inside a host function. The host function an operation
//     enqueues after its work (OnHostFunction) only marks the operation complete under mu_ (a
//     leaf lock, held for a push_back) and wakes the worker; the worker signals semaphores,
//     releases dependents, destroys held buffers and gives events back to the pool.
//  2. Work is never released from a driver thread: operations are issued by the thread that
//     submits them (when ready) or by the worker (when released), never by a host function.
//  3. mu_ is a leaf: nothing holding it calls the driver, locks a semaphore or runs user code.
//     Semaphores call OnSemaphoreChanged with their own lock held (semaphore lock -> mu_).
//  4. Every issued operation, whether or not it signals anything, gets a host function and is
//     retired by the worker (an operation with nothing to signal is still cleaned up; IREE's
//     worker once never exited because of such operations).
//  5. A wait on a value is ordered device-side (cuStreamWaitEvent on the signalling operation's
//     timepoint) only when an operation of this device that signals it is already issued;
//     otherwise the operation is deferred, and the scheduler watches the semaphore: every value
//     change, failure or new timepoint wakes the worker, which looks at every deferred
//     operation again. The watch is registered before the worker first looks, so no change is
//     missed.
//  6. A host wait waits for the host-visible value (set by the worker at retirement), never for
//     a timepoint's event.
//  7. Retirement makes its driver calls (held buffers, the event back to the pool) before it
//     signals, so that a host that waits for the signal sees every driver call of the operation
//     made (and fault sweeps see one deterministic call order).
#ifndef CUHAL_CORE_DEVICE_QUEUE_SCHEDULER_H_
#define CUHAL_CORE_DEVICE_QUEUE_SCHEDULER_H_

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/base/mutex.h"
#include "core/base/status_or.h"
#include "core/memory/buffer.h"
#include "core/semaphore/event_pool.h"
#include "core/semaphore/semaphore.h"
#include "core/symbols/cuda_api.h"

namespace cuhal {

class Queue;
class QueueScheduler;

// One queue operation (internal to the scheduler and Queue).
struct QueueAction {
  std::string what;  // "queue 0: execute (3 commands)"
  Queue* queue = nullptr;
  std::vector<SemaphoreValue> waits;
  std::vector<SemaphoreValue> signals;
  // Enqueues the operation's work on queue->stream() (the context is current). Empty for a
  // barrier.
  std::function<Status(QueueAction&)> work;
  // Run the work inside Submit even when the operation is deferred (before deferring it): an
  // Alloca must hand out its buffer's address at once.
  bool work_at_submit = false;
  // Destroyed after the operation completed (or failed): a Dealloca of a buffer that is not
  // freed in stream order.
  Buffer hold;

  // Scheduler state.
  std::vector<std::shared_ptr<Semaphore>> retained;  // every semaphore named, until retired
  std::uint64_t id = 0;
  QueueScheduler* scheduler = nullptr;
  Timepoint* timepoint = nullptr;        // recorded after the work when there are signals
  std::vector<std::size_t> device_waits;  // indices of waits ordered device-side
};

// See the top of this file.
//
// Ownership: owned by its Device, created after the queues and destroyed before them; owns the
// device's EventPool and the worker thread. Borrows the table and the context.
// Thread-safety: Submit and Flush may be called from any thread except a host function; the
// teardown steps from the Device's destructor only.
// Stream ordering: queue operations are ordered only by their wait lists (IREE's HAL rule): one
// whose waits are satisfied, or orderable device-side, is enqueued on its queue's stream at
// once, even if an operation submitted before it on the same queue is still deferred.
class QueueScheduler final : public SemaphoreWatcher {
 public:
  QueueScheduler(const CudaApi* api, CUcontext context, std::string device_name,
                 std::size_t event_pool_capacity);
  QueueScheduler(const QueueScheduler&) = delete;             // host functions point at it
  QueueScheduler& operator=(const QueueScheduler&) = delete;  // ditto
  ~QueueScheduler();

  // Validates `action`, then issues it now (waits satisfied or orderable device-side; on this
  // thread) or defers it to the worker. Errors: INVALID_ARGUMENT (a null semaphore),
  // FAILED_PRECONDITION once teardown began; a driver call that fails while issuing on this
  // thread is returned AND fails the signal semaphores. A wait semaphore that has failed fails
  // the signals (and returns OK: the failure travels through the semaphores).
  [[nodiscard]] Status Submit(std::unique_ptr<QueueAction> action);
  // Wakes the worker to look at deferred operations again (IREE's queue_flush). Never blocks.
  void Flush();
  // Waits until every operation whose work has completed on its stream (its host function ran)
  // is retired: its signals fired, what it held released. Device::Synchronize calls it after the
  // streams, so that a synchronized device has every issued operation's signals at their values.
  // Deferred operations are not waited for (they may wait for the host). Not from a host
  // function or the worker (it would wait for itself).
  void WaitForCompletedToRetire() CUHAL_EXCLUDES(mu_);

  // Teardown, step 1: refuses new submissions and fails every deferred operation (ABORTED,
  // naming what it waited for); returns once the worker has done so.
  void BeginShutdown();
  // Teardown, step 2 (after the queues were synchronized, so every host function ran): waits for
  // the worker to retire every issued operation, and joins it.
  void FinishShutdown();

  [[nodiscard]] EventPool& event_pool() noexcept { return pool_; }
  // Operations deferred / issued and not yet retired (a snapshot, for tests; `in_flight` includes
  // those the worker is retiring right now). `deferred` counts
  // every submitted operation the worker has not issued or failed yet, including those it is
  // looking at right now (it takes them out of the shared list to look at them unlocked).
  struct Counts {
    std::size_t deferred = 0;
    std::size_t in_flight = 0;
  };
  [[nodiscard]] Counts counts() const;

  void OnSemaphoreChanged() noexcept override;

 private:
  enum class Readiness { kReady, kPending, kFailed };
  // Resolves every wait of `action`; on kReady `timepoints` holds the referenced device waits
  // (and action.device_waits their indices); on kFailed `failure` is set. Locks semaphores.
  Readiness Evaluate(QueueAction& action, std::vector<Timepoint*>* timepoints, Status* failure);
  // Enqueues the device waits, the work, the timepoint and the host function; consumes
  // `timepoints`' references. On failure fails the action and returns why.
  Status Issue(std::unique_ptr<QueueAction> action, std::vector<Timepoint*> timepoints);
  Status EnqueueSteps(QueueAction& action, const std::vector<Timepoint*>& timepoints);
  // Fails the signals, releases what the action holds. No lock held.
  void FailAction(std::unique_ptr<QueueAction> action, Status status);
  // The worker's completion of an issued action.
  void Retire(std::unique_ptr<QueueAction> action);
  // Retire()s each, then drops their ids from retiring_ and wakes WaitForCompletedToRetire.
  void RetireAll(std::vector<std::unique_ptr<QueueAction>> done) CUHAL_EXCLUDES(mu_);
  void Unwatch(QueueAction& action);
  void Defer(std::unique_ptr<QueueAction> action);
  void WorkerMain();
  static void CUDA_CB OnHostFunction(void* user_data);

  const CudaApi* const api_;
  const CUcontext context_;
  const std::string device_name_;
  EventPool pool_;
  std::atomic<std::uint64_t> next_id_{1};

  mutable Mutex mu_;
  CondVar cv_;
  bool stopping_ CUHAL_GUARDED_BY(mu_) = false;     // BeginShutdown: refuse, fail deferred
  bool deferred_failed_ CUHAL_GUARDED_BY(mu_) = false;  // the worker acknowledged stopping_
  bool exit_ CUHAL_GUARDED_BY(mu_) = false;         // FinishShutdown: exit once nothing in flight
  bool changed_ CUHAL_GUARDED_BY(mu_) = false;      // a watched semaphore changed / Flush
  std::vector<std::unique_ptr<QueueAction>> incoming_ CUHAL_GUARDED_BY(mu_);  // to defer
  std::vector<std::uint64_t> completions_ CUHAL_GUARDED_BY(mu_);  // ids, from host functions
  struct InFlight {
    std::unique_ptr<QueueAction> action;
    bool launched = false;   // its host function was enqueued
    bool completed = false;  // its host function ran
  };
  std::map<std::uint64_t, InFlight> in_flight_ CUHAL_GUARDED_BY(mu_);
  // Taken out of in_flight_ by the worker to be retired, not yet done (ids).
  std::set<std::uint64_t> retiring_ CUHAL_GUARDED_BY(mu_);
  CondVar retired_cv_;  // retiring_ shrank
  std::size_t deferred_count_ CUHAL_GUARDED_BY(mu_) = 0;
  // Taken from incoming_ by the worker and not yet counted in deferred_count_ (its current look).
  std::size_t in_transit_ CUHAL_GUARDED_BY(mu_) = 0;

  std::vector<std::unique_ptr<QueueAction>> deferred_;  // the worker's own
  std::thread worker_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DEVICE_QUEUE_SCHEDULER_H_
