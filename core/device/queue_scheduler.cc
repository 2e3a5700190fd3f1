// Copyright 2026 The cuhal Authors.
#include "core/device/queue_scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "core/device/queue.h"
#include "core/driver/context_scope.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

// One step of a spin wait: tells the core (and a sibling hyperthread) that this thread spins.
inline void CpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

std::string DescribeWaits(const QueueAction& action) {
  std::string out;
  for (const SemaphoreValue& w : action.waits) {
    if (!out.empty()) out += ", ";
    out += StrCat(w.semaphore->name(), " >= ", w.value);
  }
  return out.empty() ? "nothing" : out;
}

}  // namespace

QueueScheduler::QueueScheduler(const CudaApi* api, CUcontext context, std::string device_name,
                               bool batch_completions, bool worker_enqueues_host_functions,
                               std::size_t event_pool_capacity,
                               std::chrono::microseconds completion_poll_interval,
                               bool issue_on_worker)
    : api_(api),
      context_(context),
      device_name_(std::move(device_name)),
      batch_completions_(batch_completions),
      worker_launches_(batch_completions && worker_enqueues_host_functions),
      poll_interval_(worker_launches_ && completion_poll_interval.count() > 0
                         ? completion_poll_interval
                         : std::chrono::microseconds(0)),
      issue_on_worker_(issue_on_worker),
      pool_(api, event_pool_capacity) {
  worker_ = std::thread([this] { WorkerMain(); });
}

QueueScheduler::~QueueScheduler() {
  if (worker_.joinable()) {
    BeginShutdown();
    FinishShutdown();
  }
}

void QueueScheduler::BeginShutdown() {
  MutexLock lock(mu_);
  stopping_ = true;
  poked_.store(true, std::memory_order_relaxed);
  cv_.NotifyAll();
  while (!deferred_failed_) cv_.Wait(mu_);
}

void QueueScheduler::FinishShutdown() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    exit_ = true;
    poked_.store(true, std::memory_order_relaxed);
    cv_.NotifyAll();
  }
  if (worker_.joinable()) worker_.join();
}

QueueScheduler::Counts QueueScheduler::counts() const {
  MutexLock lock(mu_);
  std::size_t in_flight = retiring_;
  for (const auto& [queue, lane] : lanes_) in_flight += lane->in_flight.size();
  return Counts{.deferred = deferred_count_ + in_transit_ + incoming_.size() + dispatched_.size(),
                .in_flight = in_flight};
}

void QueueScheduler::OnSemaphoreChanged() noexcept {
  MutexLock lock(mu_);
  changed_ = true;
  poked_.store(true, std::memory_order_relaxed);
  cv_.NotifyAll();
}

void QueueScheduler::Flush() { OnSemaphoreChanged(); }

void QueueScheduler::WaitForIssued() {
  if (!issue_on_worker_) return;
  MutexLock lock(mu_);
  const std::uint64_t ticket = dispatch_submitted_;
  // The worker takes dispatched_ until it exits, and nothing is dispatched once stopping_.
  while (dispatch_taken_ < ticket && !exit_) dispatch_cv_.Wait(mu_);
}

bool QueueScheduler::SpinForDispatch() {
  const std::uint64_t seen = dispatch_submitted_;
  poked_.store(false, std::memory_order_relaxed);
  MutexUnlock unlock(mu_);
  const auto until = std::chrono::steady_clock::now() + kDispatchSpin;
  while (dispatch_count_.load(std::memory_order_acquire) == seen) {
    if (poked_.load(std::memory_order_relaxed)) return false;
    for (int i = 0; i < 64; ++i) CpuRelax();
    if (std::chrono::steady_clock::now() >= until) return false;
  }
  return true;
}

void CUDA_CB QueueScheduler::OnHostFunction(void* user_data) {
  // Runs on a driver thread, inside the driver: link and wake, nothing else (invariant 1). No
  // allocation either: nothing here can fail.
  auto* callback = static_cast<Callback*>(user_data);
  QueueScheduler* self = callback->lane->scheduler;
  MutexLock lock(self->mu_);
  --callback->lane->callbacks_pending;
  callback->next_fired = self->fired_;
  self->fired_ = callback;
  self->poked_.store(true, std::memory_order_relaxed);
  self->cv_.NotifyAll();
}

std::string QueueOpLabel::ToString() const {
  switch (kind) {
    case Kind::kBarrier:
      return StrCat("queue ", queue_index, ": barrier");
    case Kind::kAlloca:
      return StrCat("queue ", queue_index, ": alloca of ", count, " bytes from the ",
                    MemoryPoolKindName(pool));
    case Kind::kDealloca:
      return StrCat("queue ", queue_index, ": dealloca of a ", count, "-byte buffer");
    case Kind::kExecute:
      return StrCat("queue ", queue_index, ": execute (", count, " transfer command(s))");
    case Kind::kNamed:
      break;
  }
  return std::string();
}

void QueueScheduler::EndLaunch(Lane* lane) {
  MutexLock lock(mu_);
  --lane->launching;
  launched_cv_.NotifyAll();
}

QueueScheduler::Lane* QueueScheduler::LaneFor(Queue* queue) {
  std::unique_ptr<Lane>& lane = lanes_[queue];
  if (lane == nullptr) {
    lane = std::make_unique<Lane>();
    lane->scheduler = this;
    lane->stream = queue->stream();
  }
  return lane.get();
}

bool QueueScheduler::LanesIdle() const {
  for (const auto& [queue, lane] : lanes_) {
    if (!lane->in_flight.empty() || lane->callbacks_pending != 0) return false;
  }
  return true;
}

QueueScheduler::Readiness QueueScheduler::Evaluate(QueueAction& action,
                                                   std::vector<Timepoint*>* timepoints,
                                                   Status* failure) {
  action.device_waits.clear();
  auto release = [timepoints] {
    for (Timepoint* tp : *timepoints) tp->Unref();
    timepoints->clear();
  };
  for (std::size_t i = 0; i < action.waits.size(); ++i) {
    const SemaphoreValue& w = action.waits[i];
    Semaphore::Resolution r = w.semaphore->Resolve(w.value, this);
    switch (r.state) {
      case Semaphore::WaitState::kSatisfied:
        continue;
      case Semaphore::WaitState::kDevice:
        timepoints->push_back(r.timepoint);
        action.device_waits.push_back(i);
        continue;
      case Semaphore::WaitState::kFailed:
        release();
        *failure = std::move(r.failure).AddContext(
            StrCat("waiting for ", w.semaphore->name(), " to reach ", w.value));
        return Readiness::kFailed;
      case Semaphore::WaitState::kPending:
        release();
        action.device_waits.clear();
        return Readiness::kPending;
    }
  }
  return Readiness::kReady;
}

Status QueueScheduler::Submit(std::unique_ptr<QueueAction> action) {
  for (const std::vector<SemaphoreValue>* list : {&action->waits, &action->signals}) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].semaphore == nullptr) {
        return InvalidArgumentError(StrCat(action->What(), ": semaphore ", i, " of its ",
                                           list == &action->waits ? "wait" : "signal",
                                           " list is null"));
      }
    }
  }
  {
    MutexLock lock(mu_);
    if (stopping_) {
      return FailedPreconditionError(
          StrCat(action->What(), ": device ", device_name_, " is being destroyed"));
    }
  }
  action->id = next_id_.fetch_add(1, std::memory_order_relaxed);
  action->scheduler = this;
  for (const std::vector<SemaphoreValue>* list : {&action->waits, &action->signals}) {
    for (const SemaphoreValue& v : *list) {
      std::shared_ptr<Semaphore> retained = v.semaphore->weak_from_this().lock();
      if (retained == nullptr) {
        return InvalidArgumentError(StrCat(action->What(), ": ", v.semaphore->name(),
                                           " is not owned by a shared_ptr (make semaphores "
                                           "with Device::CreateSemaphore or Semaphore::Create)"));
      }
      action->retained.push_back(std::move(retained));
    }
  }
  if (issue_on_worker_) {
    MutexLock lock(mu_);
    if (stopping_) {
      return FailedPreconditionError(
          StrCat(action->What(), ": device ", device_name_, " is being destroyed"));
    }
    dispatched_.push_back(std::move(action));
    dispatch_count_.store(++dispatch_submitted_, std::memory_order_release);
    // Woken after mu_ is released (see Issue). A worker that spins waits on nothing: no system
    // call then.
    lock.Unlock();
    cv_.NotifyAll();
    return OkStatus();
  }
  return Admit(std::move(action), /*on_worker=*/false);
}

Status QueueScheduler::Admit(std::unique_ptr<QueueAction> action, bool on_worker) {
  std::vector<Timepoint*> timepoints;
  Status failure;
  switch (Evaluate(*action, &timepoints, &failure)) {
    case Readiness::kReady:
      return Issue(std::move(action), std::move(timepoints));
    case Readiness::kFailed: {
      const bool produces = action->work_at_submit && action->work;
      FailAction(std::move(action), failure);
      return produces ? failure : OkStatus();
    }
    case Readiness::kPending:
      break;
  }
  if (action->work_at_submit && action->work) {
    StatusOr<ContextScope> scope = ContextScope::Enter(api_, context_);
    Status ran = scope.ok() ? action->work(*action) : Status(scope.status());
    action->work = nullptr;
    if (scope.ok()) {
      Status exited = scope->Exit();
      if (ran.ok()) ran = std::move(exited);
    }
    if (!ran.ok()) {
      ran.AddContext(action->What());
      FailAction(std::move(action), ran);
      return ran;
    }
  }
  if (on_worker) {
    // The worker's own list; it looks at deferred_ again later in this pass, after the watch.
    for (const SemaphoreValue& w : action->waits) w.semaphore->Watch(this);
    deferred_.push_back(std::move(action));
    return OkStatus();
  }
  Defer(std::move(action));
  return OkStatus();
}

void QueueScheduler::Defer(std::unique_ptr<QueueAction> action) {
  // Watch before the worker's first look (invariant 5).
  for (const SemaphoreValue& w : action->waits) w.semaphore->Watch(this);
  MutexLock lock(mu_);
  incoming_.push_back(std::move(action));
  changed_ = true;
  poked_.store(true, std::memory_order_relaxed);
  cv_.NotifyAll();
}

void QueueScheduler::Unwatch(QueueAction& action) {
  for (const SemaphoreValue& w : action.waits) w.semaphore->Unwatch(this);
}

Status QueueScheduler::EnqueueSteps(QueueAction& action,
                                    const std::vector<Timepoint*>& timepoints) {
  const CUstream stream = action.queue->stream();
  for (std::size_t k = 0; k < timepoints.size(); ++k) {
    const SemaphoreValue& w = action.waits[action.device_waits[k]];
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuStreamWaitEvent, stream, timepoints[k]->event(), 0),
                          "ordering after ", w.semaphore->name(), " >= ", w.value,
                          " on the device");
  }
  if (action.work) {
    Status ran = action.work(action);
    if (action.work_at_submit) action.work = nullptr;  // it ran; nothing it refers to outlives it
    CUHAL_RETURN_IF_ERROR(std::move(ran));
  }
  // Every operation records its completion event (invariant 4); it is also the timepoint of what
  // the operation signals.
  CUHAL_ASSIGN_OR_RETURN(CUevent event, pool_.Acquire());
  action.timepoint = Timepoint::Create(&pool_, event, this);
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuEventRecord, event, stream),
                        "recording the operation's timepoint");
  for (const SemaphoreValue& s : action.signals) {
    s.semaphore->AddTimepoint(s.value, action.timepoint);
  }
  return OkStatus();
}

Status QueueScheduler::Issue(std::unique_ptr<QueueAction> action,
                             std::vector<Timepoint*> timepoints) {
  StatusOr<ContextScope> scope = ContextScope::Enter(api_, context_);
  if (!scope.ok()) {
    for (Timepoint* tp : timepoints) tp->Unref();
    Status failed = Status(scope.status()).AddContext(action->What());
    FailAction(std::move(action), failed);
    return failed;
  }
  Status enqueued = EnqueueSteps(*action, timepoints);
  for (Timepoint* tp : timepoints) tp->Unref();  // the waits are enqueued (or never will be)
  if (!enqueued.ok()) {
    enqueued.AddContext(action->What());
    ReportDroppedStatus(scope->Exit());
    FailAction(std::move(action), enqueued);
    return enqueued;
  }

  // Into the lane, numbered after its event record; the thread that finds the lane without a host
  // function enqueues one, covering this number (invariant 5).
  const CUstream stream = action->queue->stream();
  const std::uint64_t id = action->id;
  Callback* callback = nullptr;
  {
    MutexLock lock(mu_);
    Lane* lane = LaneFor(action->queue);
    action->number = ++lane->numbered;
    lane->in_flight.push_back(std::move(action));
    if (batch_completions_ && lane->callbacks_pending != 0) return scope->Exit();
    if (worker_launches_) {
      // The worker enqueues the lane's host function (CompleteLanes, step 3), covering every
      // number given out by then, this one included. A polled lane needs none.
      if (lane->relaunch || lane->poll) return scope->Exit();
      if (poll_interval_.count() > 0) {
        lane->poll = true;  // polling mode: the worker polls the lane until it is empty
      } else {
        lane->relaunch = true;
        relaunch_ = true;
      }
      // Woken after mu_ is released: woken under it, the worker would wake only to sleep again
      // on mu_, and its wake-up on our unlock is a second system call on this thread.
      lock.Unlock();
      cv_.NotifyAll();
      return scope->Exit();
    }
    ++lane->callbacks_pending;
    ++lane->launching;
    callback = new Callback{.lane = lane, .covers = lane->numbered};
  }
  // The callback may run, and be deleted by the worker, before cuLaunchHostFunc returns.
  Lane* lane = callback->lane;
  Status launched = CUHAL_CU(api_, cuLaunchHostFunc, stream, &OnHostFunction, callback);
  if (launched.ok()) {
    EndLaunch(lane);
    return scope->Exit();
  }

  // No host function: take the operation back, hand the lane's others to the worker, and fail it
  // once its work is done. (When completions are not batched, a host function enqueued after it
  // by another thread may have covered it already: then it completes as any other, and the
  // failure is reported, not returned.)
  delete callback;
  std::unique_ptr<QueueAction> back;
  {
    MutexLock lock(mu_);
    --lane->callbacks_pending;
    --lane->launching;
    launched_cv_.NotifyAll();
    for (auto it = lane->in_flight.begin(); it != lane->in_flight.end(); ++it) {
      if ((*it)->id == id) {
        back = std::move(*it);
        lane->in_flight.erase(it);
        break;
      }
    }
    if (!lane->in_flight.empty() && lane->callbacks_pending == 0) {
      lane->relaunch = true;
      relaunch_ = true;
      cv_.NotifyAll();
    }
  }
  if (back == nullptr) {
    launched.AddContext(StrCat("queue operation ", id, ": enqueueing its completion callback "
                               "(a later one reported its completion)"));
    ReportDroppedStatus(launched);
    return scope->Exit();
  }
  // The work is enqueued and nothing will report its completion: wait for it before releasing
  // what it uses.
  ReportDroppedStatus(CUHAL_CU(api_, cuStreamSynchronize, stream)
                          .AddContext(StrCat(back->What(), ": waiting for its work after its "
                                             "completion callback could not be enqueued")));
  launched.AddContext(StrCat(back->What(), ": enqueueing its completion callback"));
  ReportDroppedStatus(scope->Exit());
  FailAction(std::move(back), launched);
  return launched;
}

std::unique_ptr<QueueAction> QueueScheduler::NewAction() {
  {
    MutexLock lock(spare_mu_);
    if (!spare_.empty()) {
      std::unique_ptr<QueueAction> action = std::move(spare_.back());
      spare_.pop_back();
      return action;
    }
  }
  return std::make_unique<QueueAction>();
}

void QueueScheduler::Recycle(std::unique_ptr<QueueAction> action) {
  if (action == nullptr || action->hold) return;  // a held buffer is released by ~QueueAction
  action->label = QueueOpLabel{};
  action->named.clear();
  action->queue = nullptr;
  action->waits.clear();
  action->signals.clear();
  action->work = nullptr;
  action->work_at_submit = false;
  action->pending.reset();
  action->retained.clear();  // the semaphores' references, as the destructor would drop them
  action->id = 0;
  action->number = 0;
  action->scheduler = nullptr;
  action->timepoint = nullptr;
  action->device_waits.clear();
  action->completion = OkStatus();
  MutexLock lock(spare_mu_);
  if (spare_.size() < kSpareActions) spare_.push_back(std::move(action));
}

void QueueScheduler::FailAction(std::unique_ptr<QueueAction> action, Status status) {
  if (action->pending != nullptr) action->pending->Complete(status);  // once made: no effect
  ReportDroppedStatus(action->hold.Reset().AddContext(
      StrCat(action->What(), ": releasing the buffer of the failed operation")));
  action->work = nullptr;  // what it holds, before the signals fail (as in Retire)
  for (const SemaphoreValue& s : action->signals) {
    if (action->timepoint != nullptr) s.semaphore->DropTimepoint(s.value, action->timepoint);
    s.semaphore->Fail(status);
  }
  if (action->timepoint != nullptr) action->timepoint->Unref();
  Recycle(std::move(action));
}

void QueueScheduler::Retire(std::unique_ptr<QueueAction> action) {
  // A failed completion query (a sticky context error), or a wait ordered device-side whose
  // semaphore failed since: the failure travels on.
  Status failure = std::move(action->completion);
  for (std::size_t i : action->device_waits) {
    if (!failure.ok()) break;
    const SemaphoreValue& w = action->waits[i];
    if (StatusOr<std::uint64_t> v = w.semaphore->Query(); !v.ok()) {
      failure = Status(v.status()).AddContext(
          StrCat(action->What(), ": waiting for ", w.semaphore->name(), " to reach ", w.value));
      break;
    }
  }
  // Driver calls before signals (invariant 8): the held buffer, then what the work holds (a
  // command buffer's last reference destroys its graph; a transfer batch frees its staging), then
  // the event goes back to the pool (which may destroy it), then the values. Released after the
  // values, they would make driver calls racing with whatever the signalled waiter does next.
  if (Status released = action->hold.Reset(); !released.ok()) {
    ReportDroppedStatus(
        std::move(released).AddContext(StrCat(action->What(), ": releasing its buffer")));
  }
  action->work = nullptr;
  for (const SemaphoreValue& s : action->signals) {
    s.semaphore->DropTimepoint(s.value, action->timepoint);
  }
  if (action->timepoint != nullptr) action->timepoint->Unref();
  for (const SemaphoreValue& s : action->signals) {
    if (failure.ok()) {
      s.semaphore->Advance(s.value);
    } else {
      s.semaphore->Fail(failure);
    }
  }
  Recycle(std::move(action));
}

void QueueScheduler::RetireAll(std::vector<std::unique_ptr<QueueAction>> done) {
  if (done.empty()) return;
  const std::size_t n = done.size();
  for (std::unique_ptr<QueueAction>& a : done) Retire(std::move(a));
  MutexLock lock(mu_);
  retiring_ -= n;
}

void QueueScheduler::WaitForCompletedToRetire() {
  MutexLock lock(mu_);
  if (exit_) return;  // the worker is gone or going: FinishShutdown retires everything
  const std::uint64_t ticket = ++sweep_requested_;
  poked_.store(true, std::memory_order_relaxed);
  cv_.NotifyAll();
  while (sweep_done_ < ticket && !exit_) retired_cv_.Wait(mu_);
}

void QueueScheduler::EnqueuePendingCompletion(Queue* queue) {
  Callback* callback = nullptr;
  {
    MutexLock lock(mu_);
    auto it = lanes_.find(queue);
    if (it == lanes_.end()) return;
    Lane* lane = it->second.get();
    // A host function another thread (the worker, an issuer) has taken the lane's turn for but
    // not enqueued yet would land on the stream after the caller's synchronization: wait for it.
    while (lane->launching != 0) launched_cv_.Wait(mu_);
    if (!worker_launches_ || exit_) return;
    // The worker's rule (CompleteLanes, step 3): a lane with work and no host function gets one,
    // covering every number given out so far. Taking it here under the lock means the worker
    // finds a host function pending and enqueues none.
    if (!lane->relaunch || lane->poll || lane->in_flight.empty() || lane->callbacks_pending != 0) {
      return;
    }
    lane->relaunch = false;
    ++lane->callbacks_pending;
    ++lane->launching;
    callback = new Callback{.lane = lane, .covers = lane->numbered};
  }
  Lane* lane = callback->lane;
  Status launched = CUHAL_CU(api_, cuLaunchHostFunc, lane->stream, &OnHostFunction, callback);
  if (launched.ok()) {
    EndLaunch(lane);
    return;
  }
  ReportDroppedStatus(launched.AddContext(
      StrCat("device ", device_name_,
             ": enqueueing a queue's completion callback before synchronizing it (its "
             "operations' events are polled instead)")));
  MutexLock lock(mu_);
  --lane->callbacks_pending;
  --lane->launching;
  launched_cv_.NotifyAll();
  lane->poll = true;
  delete callback;
  poked_.store(true, std::memory_order_relaxed);
  cv_.NotifyAll();  // the worker polls from now on
}

void QueueScheduler::TakeCovered(std::vector<std::unique_ptr<QueueAction>>* done) {
  for (Callback* c = std::exchange(fired_, nullptr); c != nullptr;) {
    c->lane->covered = std::max(c->lane->covered, c->covers);
    delete std::exchange(c, c->next_fired);
  }
  for (const auto& [queue, lane] : lanes_) {
    std::deque<std::unique_ptr<QueueAction>>& ops = lane->in_flight;
    while (!ops.empty() && ops.front()->number <= lane->covered) {
      done->push_back(std::move(ops.front()));
      ops.pop_front();
      ++retiring_;
    }
  }
}

void QueueScheduler::CompleteLanes(bool query_all, bool relaunch,
                                   std::vector<std::unique_ptr<QueueAction>>* done) {
  // 1. What the host functions that ran cover (no driver call), and what remains to query.
  struct Query {
    Lane* lane;
    std::vector<QueueAction*> actions;  // the lane's first ones, in order
    std::size_t complete = 0;
  };
  std::vector<Query> queries;
  {
    MutexLock lock(mu_);
    TakeCovered(done);
    for (const auto& [queue, lane] : lanes_) {
      const std::deque<std::unique_ptr<QueueAction>>& ops = lane->in_flight;
      if ((query_all || lane->poll) && !ops.empty()) {
        Query q{.lane = lane.get(), .actions = {}};
        for (const std::unique_ptr<QueueAction>& a : ops) q.actions.push_back(a.get());
        queries.push_back(std::move(q));
      }
    }
  }

  // 2. The events no host function covered (the lanes only grow at the back meanwhile, and only
  // this thread takes operations out of them).
  for (Query& q : queries) {
    for (QueueAction* a : q.actions) {
      if (api_->cuEventQuery == nullptr) {
        a->completion = MissingEntryStatus("libcuda", "cuEventQuery");
      } else {
        const CUresult r = api_->cuEventQuery(a->timepoint->event());
        if (r == CUDA_ERROR_NOT_READY) break;  // stream order: nothing after it is complete
        if (r != CUDA_SUCCESS) {
          a->completion = CudaResultToStatus(api_, r, "cuEventQuery")
                              .AddContext(StrCat(a->What(), ": waiting for its completion"));
        }
      }
      ++q.complete;
    }
  }

  // 3. Take the queried complete ones; decide the host functions to enqueue.
  std::vector<Callback*> launch;
  {
    MutexLock lock(mu_);
    for (Query& q : queries) {
      std::deque<std::unique_ptr<QueueAction>>& ops = q.lane->in_flight;
      for (std::size_t i = 0; i < q.complete; ++i) {
        done->push_back(std::move(ops.front()));
        ops.pop_front();
      }
      retiring_ += q.complete;
    }
    // Again: a host function that ran since step 1 covers what it covers (else its lane would
    // look uncovered, and get a host function it does not need).
    TakeCovered(done);
    relaunch_ = false;
    for (const auto& [queue, lane] : lanes_) {
      const bool needs = !lane->in_flight.empty() && lane->callbacks_pending == 0;
      lane->relaunch = false;
      // A polled lane stays polled until it is empty (no host function retried every poll).
      if (lane->poll && lane->in_flight.empty()) lane->poll = false;
      if (!needs || lane->poll) continue;
      if (!relaunch || poll_interval_.count() > 0) {
        lane->poll = true;
        continue;
      }
      ++lane->callbacks_pending;
      ++lane->launching;
      launch.push_back(new Callback{.lane = lane.get(), .covers = lane->numbered});
    }
  }
  // 4. The host functions, before anything is retired (invariant 8). An explicit stream needs no
  // current context. One that cannot be enqueued leaves its lane polled.
  for (Callback* c : launch) {
    Lane* lane = c->lane;  // `c` may have run and been deleted by the time the launch returns
    Status launched = CUHAL_CU(api_, cuLaunchHostFunc, lane->stream, &OnHostFunction, c);
    if (launched.ok()) {
      EndLaunch(lane);
      continue;
    }
    ReportDroppedStatus(launched.AddContext(
        StrCat("device ", device_name_,
               ": enqueueing a queue's completion callback (its operations' events are polled "
               "instead)")));
    MutexLock lock(mu_);
    --c->lane->callbacks_pending;
    --c->lane->launching;
    launched_cv_.NotifyAll();
    c->lane->poll = true;
    delete c;
  }
}

void QueueScheduler::WorkerMain() {
  using std::chrono::milliseconds;
  // The worker issues every operation: with the device's context current on its thread, each
  // ContextScope finds it there (one query instead of a push and a pop per operation). If this
  // fails, every ContextScope pushes, as before.
  if (issue_on_worker_ && api_->cuCtxSetCurrent != nullptr) {
    static_cast<void>(api_->cuCtxSetCurrent(context_));
  }
  while (true) {
    std::vector<std::unique_ptr<QueueAction>> incoming;
    std::vector<std::unique_ptr<QueueAction>> dispatched;
    std::uint64_t dispatch_taken = 0;
    std::vector<std::unique_ptr<QueueAction>> done;
    bool stopping = false;
    bool query_all = false;  // a sweep, or teardown
    bool relaunch = true;
    std::uint64_t sweep = 0;
    {
      MutexLock lock(mu_);
      while (true) {
        if (!incoming_.empty() || !dispatched_.empty() || fired_ != nullptr || relaunch_ ||
            changed_ ||
            sweep_requested_ != sweep_done_ || (stopping_ && !deferred_failed_)) {
          break;
        }
        bool polling = false;
        for (const auto& [queue, lane] : lanes_) polling = polling || lane->poll;
        if (exit_) {
          if (LanesIdle()) return;
          // Teardown: the queues are synchronized, so what remains completes: query it rather
          // than enqueue more host functions, and wait for those pending (they run by themselves;
          // one that never does, after a sticky error, is given up on after 10 s).
          if (exit_waited_ == milliseconds(0)) exit_waited_ = milliseconds(1);
          if (exit_waited_ > milliseconds(10000)) {
            std::size_t pending = 0;
            for (const auto& [queue, lane] : lanes_) {
              pending += static_cast<std::size_t>(lane->callbacks_pending);
            }
            ReportDroppedStatus(InternalError(StrCat(
                "destroying device ", device_name_, ": ", pending,
                " completion host function(s) never ran (a sticky error?); their lanes are "
                "leaked rather than freed under them")));
            for (auto& [queue, lane] : lanes_) {
              if (lane->callbacks_pending != 0) static_cast<void>(lane.release());
            }
            lanes_.clear();
            return;
          }
          polling = true;
        }
        if (spin_ && !exit_) {
          // Submissions likely follow the ones just issued: look for them without sleeping.
          // Whatever it finds (or not), the conditions above are looked at again under mu_: an
          // event that came during the spin woke nobody.
          spin_ = false;
          SpinForDispatch();
          continue;
        }
        if (polling) {
          // A lane without a host function is polled (cuEventQuery) every millisecond, or every
          // poll interval in polling mode.
          if (poll_interval_.count() > 0 && !exit_) {
            cv_.WaitFor(mu_, poll_interval_);
          } else {
            cv_.WaitFor(mu_, milliseconds(1));
          }
          if (exit_) exit_waited_ += milliseconds(1);
          break;
        }
        // Host functions run by themselves (a driver thread runs them), so the worker sleeps
        // until one reports, a watched semaphore changes, or work arrives: no polling.
        cv_.Wait(mu_);
      }
      incoming.swap(incoming_);
      dispatched.swap(dispatched_);
      dispatch_taken = dispatch_submitted_;
      in_transit_ = incoming.size() + dispatched.size();
      changed_ = false;
      stopping = stopping_;
      sweep = sweep_requested_;
      query_all = exit_ || sweep != sweep_done_;
      relaunch = !exit_;
    }

    CompleteLanes(query_all, relaunch, &done);
    for (std::unique_ptr<QueueAction>& a : incoming) deferred_.push_back(std::move(a));
    // Dispatched operations, in submission order, as Submit would admit them (also while
    // stopping: a ready one is issued, a pending one joins deferred_ and is failed below).
    const bool issued_dispatched = !dispatched.empty();
    for (std::unique_ptr<QueueAction>& a : dispatched) {
      // A failure reaches the signal semaphores (and an Alloca's buffer); one with neither has
      // nowhere else to go.
      const bool carried = !a->signals.empty() || a->work_at_submit;
      Status admitted = Admit(std::move(a), /*on_worker=*/true);
      if (!carried) ReportDroppedStatus(admitted.AddContext("issuing a queue operation"));
    }
    dispatched.clear();

    if (stopping) {
      for (std::unique_ptr<QueueAction>& a : deferred_) {
        Unwatch(*a);
        Status aborted = AbortedError(
            StrCat(a->What(), ": device ", device_name_,
                   " was destroyed while the operation waited for ", DescribeWaits(*a)));
        FailAction(std::move(a), aborted);
      }
      deferred_.clear();
      RetireAll(std::move(done));
      MutexLock lock(mu_);
      deferred_failed_ = true;
      deferred_count_ = 0;
      in_transit_ = 0;
      if (dispatch_taken > dispatch_taken_) dispatch_taken_ = dispatch_taken;
      dispatch_cv_.NotifyAll();
      if (sweep > sweep_done_) sweep_done_ = sweep;
      cv_.NotifyAll();
      retired_cv_.NotifyAll();
      continue;
    }

    // Look at every deferred operation again, in submission order.
    std::vector<std::unique_ptr<QueueAction>> still;
    for (std::unique_ptr<QueueAction>& a : deferred_) {
      std::vector<Timepoint*> timepoints;
      Status failure;
      switch (Evaluate(*a, &timepoints, &failure)) {
        case Readiness::kReady:
          Unwatch(*a);
          // A failure also reaches the action's signal semaphores; one that does not (the
          // context pop after a successful issue) has nobody else to go to.
          ReportDroppedStatus(Issue(std::move(a), std::move(timepoints))
                                  .AddContext("issuing a released queue operation"));
          break;
        case Readiness::kFailed: {
          Unwatch(*a);
          Status failed = std::move(failure).AddContext(a->What());
          FailAction(std::move(a), std::move(failed));
          break;
        }
        case Readiness::kPending:
          still.push_back(std::move(a));
          break;
      }
    }
    deferred_.swap(still);
    // Retire after the look: what was released in this pass saw the timepoints of what completed
    // meanwhile (device-side waits), whatever the timing of the completions.
    RetireAll(std::move(done));
    MutexLock lock(mu_);
    deferred_count_ = deferred_.size();
    in_transit_ = 0;
    if (dispatch_taken > dispatch_taken_) {
      dispatch_taken_ = dispatch_taken;
      dispatch_cv_.NotifyAll();
    }
    spin_ = issue_on_worker_ && issued_dispatched;
    if (sweep > sweep_done_) {
      sweep_done_ = sweep;
      retired_cv_.NotifyAll();
    }
  }
}

}  // namespace cuhal
