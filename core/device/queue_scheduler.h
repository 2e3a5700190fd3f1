// Copyright 2026 The cuhal Authors.
// QueueScheduler: the per-device engine behind the queue operations (Queue::Alloca, Dealloca,
// Execute, Barrier): device-side ordering through timepoints, deferral of what waits on the
// host, one worker thread, completion through events watched by coalesced host functions
// (IREE's pending_queue_actions, without a host function per operation).
//
// COMPLETION. Every issued operation records an event after its work (its timepoint) and joins
// its queue's lane: the operations issued on that stream and not yet retired, numbered in issue
// order. A lane has at most one host function (cuLaunchHostFunc) pending, enqueued only when it
// has none, by the worker (DeviceParams::worker_enqueues_host_functions, the default: the issuing
// thread that finds the lane without one marks the lane and wakes the worker, so a ready
// submission makes one driver call, its cuEventRecord) or else by the thread that issues (when
// the lane had none) and by the worker (when one ran and operations remain); with
// DeviceParams::batch_completions false, every operation enqueues its own. Each host function COVERS the highest number given out when it was
// enqueued: every covered operation recorded its event before the host function was enqueued, so
// when it runs they are complete, and the worker retires them without asking the driver. So a
// stream of ready submissions costs one cuEventRecord each and one cuLaunchHostFunc per batch that
// the device runs behind the host. The events are queried (cuEventQuery) only where no host
// function can say: Device::Synchronize, teardown, and a lane whose host function could not be
// enqueued (polled); a failed query (a sticky context error) completes its operation with that
// failure.
// ISSUE ON THE WORKER (DeviceParams::issue_on_worker). Submit checks the operation and retains its
// semaphores on the submitting thread, then hands it to the worker (dispatched_) and returns: the
// worker does, in submission order, what Submit does otherwise (evaluate, issue or defer), so the
// submitting thread makes no driver call. Queue::Synchronize first waits until the worker has
// taken every operation submitted before it (WaitForIssued), so that a synchronized stream has
// what was submitted on it. After a pass that issued work, the worker spins up to kDispatchSpin
// for more before it sleeps, so a stream of submissions does not pay a futex wake each.
//
// With DeviceParams::completion_poll_interval above 0 (polling mode) no host function is ever
// enqueued: a lane that receives work is marked polled, and the worker queries its events every
// interval until it is empty (the path a lane whose host function failed takes, on a timer of
// the user's choosing), so the worker makes no call on the streams the submitters record on.
//
// INVARIANTS (everything below relies on them):
//  1. No CUDA call is ever made from inside a host function. The host function (OnHostFunction)
//     only links its record into a list under mu_ (a leaf lock; nothing allocated) and wakes the
//     worker; the worker signals semaphores, releases dependents, destroys held buffers and gives
//     events back to the pool.
//  2. Work is never released from a driver thread: operations are issued by the thread that
//     submits them (when ready) or by the worker (when released), never by a host function.
//  3. mu_ is a leaf: nothing holding it calls the driver, locks a semaphore or runs user code.
//     Semaphores call OnSemaphoreChanged with their own lock held (semaphore lock -> mu_).
//  4. Every issued operation, whether or not it signals anything, records an event, joins a lane
//     and is retired by the worker (an operation with nothing to signal is still cleaned up;
//     IREE's worker once never exited because of such operations).
//  5. A lane that holds operations has a host function pending, or is marked for the worker
//     (which enqueues one, or polls the lane's events when that fails). An operation gets its
//     number after its event record, under mu_, and a host function covers only numbers given
//     out before it was enqueued.
//  6. A wait on a value is ordered device-side (cuStreamWaitEvent on the signalling operation's
//     timepoint) only when an operation of this device that signals it is already issued;
//     otherwise the operation is deferred, and the scheduler watches the semaphore: every value
//     change, failure or new timepoint wakes the worker, which looks at every deferred
//     operation again. The watch is registered before the worker first looks, so no change is
//     missed.
//  7. A host wait waits for the host-visible value (set by the worker at retirement), never for
//     a timepoint's event.
//  8. Retirement makes its driver calls (held buffers, what the work holds, the event back to the
//     pool) before it signals, and the worker enqueues a lane's next host function before it
//     retires what it found complete: a host that waits for a signal sees every driver call of
//     the operation made (and fault sweeps see one deterministic call order).
#ifndef CUHAL_CORE_DEVICE_QUEUE_SCHEDULER_H_
#define CUHAL_CORE_DEVICE_QUEUE_SCHEDULER_H_

#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <memory>
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

// What a queue operation is, for messages: formatted only when one is needed (a ready
// submission formats nothing, allocates no string).
struct QueueOpLabel {
  enum class Kind : std::uint8_t { kBarrier, kAlloca, kDealloca, kExecute, kNamed };
  Kind kind = Kind::kNamed;
  int queue_index = 0;
  std::size_t count = 0;  // bytes (alloca, dealloca) or transfer commands (execute)
  MemoryPoolKind pool = MemoryPoolKind::kDeviceLocal;  // alloca
  // "queue 0: alloca of 4096 bytes from the device-local pool" (empty for kNamed).
  [[nodiscard]] std::string ToString() const;
};

// One queue operation (internal to the scheduler and Queue).
struct QueueAction {
  // "queue 0: alloca of 4096 bytes from the device-local pool", from `label` (or `named`).
  [[nodiscard]] std::string What() const {
    return label.kind == QueueOpLabel::Kind::kNamed ? named : label.ToString();
  }
  QueueOpLabel label;
  std::string named;  // the whole description, when label.kind is kNamed
  Queue* queue = nullptr;
  std::vector<SemaphoreValue> waits;
  std::vector<SemaphoreValue> signals;
  // Enqueues the operation's work on queue->stream() (the context is current). Empty for a
  // barrier.
  std::function<Status(QueueAction&)> work;
  // Run the work inside Submit even when the operation is deferred (before deferring it): an
  // Alloca must hand out its buffer's address at once.
  bool work_at_submit = false;
  // A worker-made Alloca's allocation (DeviceParams::issue_on_worker): a failure of the operation
  // before its work made it reaches the buffer through it (FailAction).
  std::shared_ptr<PendingAllocation> pending;
  // Destroyed after the operation completed (or failed): a Dealloca of a buffer that is not
  // freed in stream order.
  Buffer hold;

  // Scheduler state.
  std::vector<std::shared_ptr<Semaphore>> retained;  // every semaphore named, until retired
  std::uint64_t id = 0;
  std::uint64_t number = 0;  // in its lane, once issued
  QueueScheduler* scheduler = nullptr;
  // Recorded after the work: the signals' timepoint, and the operation's completion event.
  Timepoint* timepoint = nullptr;
  std::vector<std::size_t> device_waits;  // indices of waits ordered device-side
  Status completion;  // set by the worker when the completion event's query failed
};

// See the top of this file.
//
// Ownership: owned by its Device, created after the queues and destroyed before them; owns the
// device's EventPool, the lanes and the worker thread. Borrows the table and the context.
// Thread-safety: Submit and Flush may be called from any thread except a host function; the
// teardown steps from the Device's destructor only.
// Stream ordering: queue operations are ordered only by their wait lists (IREE's HAL rule): one
// whose waits are satisfied, or orderable device-side, is enqueued on its queue's stream at
// once, even if an operation submitted before it on the same queue is still deferred.
class QueueScheduler final : public SemaphoreWatcher {
 public:
  // `batch_completions`, `worker_enqueues_host_functions`: DeviceParams'.
  QueueScheduler(const CudaApi* api, CUcontext context, std::string device_name,
                 bool batch_completions, bool worker_enqueues_host_functions,
                 std::size_t event_pool_capacity,
                 std::chrono::microseconds completion_poll_interval = {},
                 bool issue_on_worker = false);
  QueueScheduler(const QueueScheduler&) = delete;             // host functions point at it
  QueueScheduler& operator=(const QueueScheduler&) = delete;  // ditto
  ~QueueScheduler();

  // Validates `action`, then issues it now (waits satisfied or orderable device-side; on this
  // thread) or defers it to the worker. Errors: INVALID_ARGUMENT (a null semaphore),
  // FAILED_PRECONDITION once teardown began; a driver call that fails while issuing on this
  // thread is returned AND fails the signal semaphores. A wait semaphore that has failed fails
  // the signals (and returns OK: the failure travels through the semaphores).
  [[nodiscard]] Status Submit(std::unique_ptr<QueueAction> action);
  // An empty action for Submit: one the worker recycled after retiring it (its vectors keep
  // their capacity), else a new one. Operations are made by the submitting thread and retired
  // by the worker; recycling them keeps a steady stream of submissions from allocating on one
  // thread what the other frees (glibc's arena lock, contended by the two, was the larger part
  // of a ready submission's host cost on a 16-core host). Any thread.
  [[nodiscard]] std::unique_ptr<QueueAction> NewAction() CUHAL_EXCLUDES(spare_mu_);
  // Wakes the worker to look at deferred operations again (IREE's queue_flush). Never blocks.
  void Flush();
  // DeviceParams::issue_on_worker.
  [[nodiscard]] bool issue_on_worker() const noexcept { return issue_on_worker_; }
  // With issue_on_worker: returns once the worker has taken every operation submitted before the
  // call (issued it, deferred it or failed it); at once otherwise. Not from the worker or a host
  // function.
  void WaitForIssued() CUHAL_EXCLUDES(mu_);
  // Has the worker retire every operation whose work is complete (covered by a host function
  // that ran, else by querying its event; a failed query fails it), then returns: its signals
  // fired, what it held released.
  // Device::Synchronize calls it after the streams, so that a synchronized device has every
  // issued operation's signals at their values. Deferred operations are not waited for (they
  // may wait for the host). Not from a host function or the worker (it would wait for itself).
  void WaitForCompletedToRetire() CUHAL_EXCLUDES(mu_);
  // With worker_enqueues_host_functions: when `queue`'s lane waits for the worker to enqueue its
  // host function, enqueues it on this thread instead, so that work enqueued before returns is
  // followed on the stream by the host function that reports it (Queue::Synchronize calls it
  // before cuStreamSynchronize: a synchronized stream has run what reports its operations,
  // whatever the worker was doing). In every mode it first waits for the host functions another
  // thread is enqueueing on the lane right now (counted, cuLaunchHostFunc not returned), which
  // would otherwise land behind the caller's synchronization. A failed cuLaunchHostFunc leaves the
  // lane polled by the worker, as the worker's own failed launch does, and is reported. Not from
  // a host function.
  void EnqueuePendingCompletion(Queue* queue) CUHAL_EXCLUDES(mu_);

  // Teardown, step 1: refuses new submissions and fails every deferred operation (ABORTED,
  // naming what it waited for); returns once the worker has done so.
  void BeginShutdown();
  // Teardown, step 2 (after the queues were synchronized): waits for the worker to retire every
  // issued operation (querying the events no host function covers) and for every host function
  // enqueued to have run (a host function that never runs, after a sticky error, is waited for
  // 10 s, reported, and its lane leaked rather than freed under it), and joins it.
  void FinishShutdown();

  [[nodiscard]] EventPool& event_pool() noexcept { return pool_; }
  // Operations deferred / issued and not yet retired (a snapshot, for tests; `in_flight` includes
  // those the worker is retiring right now). `deferred` counts
  // every submitted operation the worker has not issued or failed yet, including those it is
  // looking at right now (it takes them out of the shared list to look at them unlocked) and,
  // with issue_on_worker, those handed to it and not taken yet.
  struct Counts {
    std::size_t deferred = 0;
    std::size_t in_flight = 0;
  };
  [[nodiscard]] Counts counts() const;

  void OnSemaphoreChanged() noexcept override;

 private:
  enum class Readiness { kReady, kPending, kFailed };
  // The issued operations of one queue's stream, in issue order (see COMPLETION at the top).
  struct Lane {
    QueueScheduler* scheduler = nullptr;
    CUstream stream = nullptr;
    std::deque<std::unique_ptr<QueueAction>> in_flight;  // numbers ascending
    std::uint64_t numbered = 0;  // the highest number given out
    std::uint64_t covered = 0;   // the highest number a host function that ran covers
    int callbacks_pending = 0;  // host functions enqueued on `stream` that have not run
    // Of those, the ones counted but whose cuLaunchHostFunc has not returned yet (a thread
    // between taking the lane's turn and enqueueing): EnqueuePendingCompletion waits for them,
    // so that a stream synchronized after it has them on it.
    int launching = 0;
    // The worker must enqueue a host function: an issuer found none pending (the worker enqueues
    // them all), or an issuer's cuLaunchHostFunc failed.
    bool relaunch = false;
    bool poll = false;  // no host function could be enqueued: the worker queries the events
                        // every millisecond until the lane is empty
  };
  // One enqueued host function: what it covers. Made before cuLaunchHostFunc, linked into
  // fired_ by the host function, deleted by the worker.
  struct Callback {
    Lane* lane = nullptr;
    std::uint64_t covers = 0;
    Callback* next_fired = nullptr;
  };
  // Resolves every wait of `action`; on kReady `timepoints` holds the referenced device waits
  // (and action.device_waits their indices); on kFailed `failure` is set. Locks semaphores.
  Readiness Evaluate(QueueAction& action, std::vector<Timepoint*>* timepoints, Status* failure);
  // Enqueues the device waits, the work and the timepoint, then puts the action in its lane
  // (enqueueing the lane's host function when it has none); consumes `timepoints`' references.
  // On failure fails the action and returns why.
  Status Issue(std::unique_ptr<QueueAction> action, std::vector<Timepoint*> timepoints);
  Status EnqueueSteps(QueueAction& action, const std::vector<Timepoint*>& timepoints);
  // Fails the signals, releases what the action holds. No lock held.
  void FailAction(std::unique_ptr<QueueAction> action, Status status);
  // The worker's completion of an issued action.
  void Retire(std::unique_ptr<QueueAction> action);
  // Retire()s each, then drops their ids from retiring_ and wakes WaitForCompletedToRetire.
  void RetireAll(std::vector<std::unique_ptr<QueueAction>> done) CUHAL_EXCLUDES(mu_);
  void Unwatch(QueueAction& action);
  // Keeps a retired or failed action for NewAction (its fields reset: what it referred to is
  // released here), or deletes it when enough are kept or it still holds a buffer.
  void Recycle(std::unique_ptr<QueueAction> action) CUHAL_EXCLUDES(spare_mu_);
  Lane* LaneFor(Queue* queue) CUHAL_REQUIRES(mu_);
  // A cuLaunchHostFunc for `lane` returned OK: one fewer launching, waiters woken.
  void EndLaunch(Lane* lane) CUHAL_EXCLUDES(mu_);
  [[nodiscard]] bool LanesIdle() const CUHAL_REQUIRES(mu_);
  // The worker's completion pass: takes what the host functions that ran cover out of the
  // lanes into `done`; then queries the events of what remains (`query_all`: in every lane, else
  // in polled lanes) and takes the complete ones too; then enqueues the host functions that lanes
  // still holding operations need (unless `relaunch` is false: teardown). Without mu_.
  // Records what the host functions in fired_ cover, and takes the covered operations out of the
  // lanes into `done`.
  void TakeCovered(std::vector<std::unique_ptr<QueueAction>>* done) CUHAL_REQUIRES(mu_);
  void CompleteLanes(bool query_all, bool relaunch,
                     std::vector<std::unique_ptr<QueueAction>>* done) CUHAL_EXCLUDES(mu_);
  void Defer(std::unique_ptr<QueueAction> action);
  // What Submit does after its checks: issue `action` (ready), fail it, or defer it (running an
  // Alloca's work first). `on_worker`: called by the worker for a dispatched operation (a deferred
  // one goes straight into deferred_, watched). Returns what Submit returns.
  Status Admit(std::unique_ptr<QueueAction> action, bool on_worker);
  // The worker: after a pass that issued dispatched work, waits up to kDispatchSpin for more
  // submissions without sleeping (mu_ released meanwhile). True when some arrived.
  bool SpinForDispatch() CUHAL_REQUIRES(mu_);
  void WorkerMain();
  static void CUDA_CB OnHostFunction(void* user_data);

  const CudaApi* const api_;
  const CUcontext context_;
  const std::string device_name_;
  const bool batch_completions_;
  const bool worker_launches_;  // batched, and the worker enqueues every host function
  // DeviceParams::completion_poll_interval, when the worker polls instead of enqueueing host
  // functions (worker_launches_ and an interval above 0); else zero.
  const std::chrono::microseconds poll_interval_;
  const bool issue_on_worker_;  // DeviceParams::issue_on_worker
  EventPool pool_;
  std::atomic<std::uint64_t> next_id_{1};

  mutable Mutex mu_;
  CondVar cv_;
  bool stopping_ CUHAL_GUARDED_BY(mu_) = false;     // BeginShutdown: refuse, fail deferred
  bool deferred_failed_ CUHAL_GUARDED_BY(mu_) = false;  // the worker acknowledged stopping_
  bool exit_ CUHAL_GUARDED_BY(mu_) = false;         // FinishShutdown: exit once nothing in flight
  bool changed_ CUHAL_GUARDED_BY(mu_) = false;      // a watched semaphore changed / Flush
  // FinishShutdown: how long the worker has waited for the last host functions (about).
  std::chrono::milliseconds exit_waited_ CUHAL_GUARDED_BY(mu_){0};
  std::vector<std::unique_ptr<QueueAction>> incoming_ CUHAL_GUARDED_BY(mu_);  // to defer
  // issue_on_worker: submitted, for the worker to admit (in this order).
  std::vector<std::unique_ptr<QueueAction>> dispatched_ CUHAL_GUARDED_BY(mu_);
  std::uint64_t dispatch_submitted_ CUHAL_GUARDED_BY(mu_) = 0;  // operations put in dispatched_
  std::uint64_t dispatch_taken_ CUHAL_GUARDED_BY(mu_) = 0;      // ... and admitted by the worker
  CondVar dispatch_cv_;  // dispatch_taken_ grew
  // dispatch_submitted_, readable without mu_: what the spinning worker watches.
  std::atomic<std::uint64_t> dispatch_count_{0};
  bool spin_ CUHAL_GUARDED_BY(mu_) = false;  // the last pass issued dispatched work
  // Set by what wakes the worker (a host function that ran, a watched semaphore, a sweep,
  // teardown): ends its spin early. Read without mu_; what it says is looked at under mu_.
  std::atomic<bool> poked_{false};
  static constexpr std::chrono::microseconds kDispatchSpin{50};
  // One per queue that issued an operation (keyed by the queue); host functions point at them.
  std::map<const Queue*, std::unique_ptr<Lane>> lanes_ CUHAL_GUARDED_BY(mu_);
  Callback* fired_ CUHAL_GUARDED_BY(mu_) = nullptr;  // host functions that ran, newest first
  bool relaunch_ CUHAL_GUARDED_BY(mu_) = false;      // some lane is marked `relaunch`
  // Taken out of the lanes by the worker to be retired, not yet done.
  std::size_t retiring_ CUHAL_GUARDED_BY(mu_) = 0;
  // WaitForCompletedToRetire: the worker looked at every lane and retired what it found
  // complete for every request up to sweep_done_.
  std::uint64_t sweep_requested_ CUHAL_GUARDED_BY(mu_) = 0;
  std::uint64_t sweep_done_ CUHAL_GUARDED_BY(mu_) = 0;
  CondVar retired_cv_;  // sweep_done_ grew
  CondVar launched_cv_;  // some lane's `launching` went down
  std::size_t deferred_count_ CUHAL_GUARDED_BY(mu_) = 0;
  // Taken from incoming_ by the worker and not yet counted in deferred_count_ (its current look).
  std::size_t in_transit_ CUHAL_GUARDED_BY(mu_) = 0;

  // Actions kept for NewAction (at most kSpareActions). A leaf lock of its own, so that recycling
  // does not contend with mu_.
  static constexpr std::size_t kSpareActions = 256;
  Mutex spare_mu_;
  std::vector<std::unique_ptr<QueueAction>> spare_ CUHAL_GUARDED_BY(spare_mu_);

  std::vector<std::unique_ptr<QueueAction>> deferred_;  // the worker's own
  std::thread worker_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DEVICE_QUEUE_SCHEDULER_H_
