// Copyright 2026 The cuhal Authors.
#include "core/device/queue_scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "core/device/queue.h"
#include "core/driver/context_scope.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

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
                               std::size_t event_pool_capacity)
    : api_(api),
      context_(context),
      device_name_(std::move(device_name)),
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
  cv_.NotifyAll();
  while (!deferred_failed_) cv_.Wait(mu_);
}

void QueueScheduler::FinishShutdown() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    exit_ = true;
    cv_.NotifyAll();
  }
  if (worker_.joinable()) worker_.join();
}

QueueScheduler::Counts QueueScheduler::counts() const {
  MutexLock lock(mu_);
  return Counts{.deferred = deferred_count_ + in_transit_ + incoming_.size(),
                .in_flight = in_flight_.size() + retiring_.size()};
}

void QueueScheduler::OnSemaphoreChanged() noexcept {
  MutexLock lock(mu_);
  changed_ = true;
  cv_.NotifyAll();
}

void QueueScheduler::Flush() { OnSemaphoreChanged(); }

void CUDA_CB QueueScheduler::OnHostFunction(void* user_data) {
  // Runs on a driver thread, inside the driver: record and wake, nothing else (invariant 1).
  auto* action = static_cast<QueueAction*>(user_data);
  QueueScheduler* self = action->scheduler;
  const std::uint64_t id = action->id;
  try {
    MutexLock lock(self->mu_);
    if (auto it = self->in_flight_.find(id); it != self->in_flight_.end()) {
      it->second.completed = true;
    }
    self->completions_.push_back(id);
    self->cv_.NotifyAll();
  } catch (...) {
    std::fputs("cuhal: out of memory recording a queue operation's completion\n", stderr);
    std::abort();
  }
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
        return InvalidArgumentError(StrCat(action->what, ": semaphore ", i, " of its ",
                                           list == &action->waits ? "wait" : "signal",
                                           " list is null"));
      }
    }
  }
  {
    MutexLock lock(mu_);
    if (stopping_) {
      return FailedPreconditionError(
          StrCat(action->what, ": device ", device_name_, " is being destroyed"));
    }
  }
  action->id = next_id_.fetch_add(1, std::memory_order_relaxed);
  action->scheduler = this;
  for (const std::vector<SemaphoreValue>* list : {&action->waits, &action->signals}) {
    for (const SemaphoreValue& v : *list) {
      std::shared_ptr<Semaphore> retained = v.semaphore->weak_from_this().lock();
      if (retained == nullptr) {
        return InvalidArgumentError(StrCat(action->what, ": ", v.semaphore->name(),
                                           " is not owned by a shared_ptr (make semaphores "
                                           "with Device::CreateSemaphore or Semaphore::Create)"));
      }
      action->retained.push_back(std::move(retained));
    }
  }

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
      ran.AddContext(action->what);
      FailAction(std::move(action), ran);
      return ran;
    }
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
  if (!action.signals.empty()) {
    CUHAL_ASSIGN_OR_RETURN(CUevent event, pool_.Acquire());
    action.timepoint = Timepoint::Create(&pool_, event, this);
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuEventRecord, event, stream),
                          "recording the operation's timepoint");
    for (const SemaphoreValue& s : action.signals) {
      s.semaphore->AddTimepoint(s.value, action.timepoint);
    }
  }
  return OkStatus();
}

Status QueueScheduler::Issue(std::unique_ptr<QueueAction> action,
                             std::vector<Timepoint*> timepoints) {
  StatusOr<ContextScope> scope = ContextScope::Enter(api_, context_);
  if (!scope.ok()) {
    for (Timepoint* tp : timepoints) tp->Unref();
    Status failed = Status(scope.status()).AddContext(action->what);
    FailAction(std::move(action), failed);
    return failed;
  }
  Status enqueued = EnqueueSteps(*action, timepoints);
  for (Timepoint* tp : timepoints) tp->Unref();  // the waits are enqueued (or never will be)
  if (!enqueued.ok()) {
    enqueued.AddContext(action->what);
    ReportDroppedStatus(scope->Exit());
    FailAction(std::move(action), enqueued);
    return enqueued;
  }

  QueueAction* raw = action.get();
  const std::uint64_t id = action->id;
  const CUstream stream = action->queue->stream();
  {
    MutexLock lock(mu_);
    in_flight_[id].action = std::move(action);
  }
  Status launched = CUHAL_CU(api_, cuLaunchHostFunc, stream, &OnHostFunction, raw);
  if (!launched.ok()) {
    std::unique_ptr<QueueAction> back;
    {
      MutexLock lock(mu_);
      auto it = in_flight_.find(id);
      back = std::move(it->second.action);
      in_flight_.erase(it);
    }
    // The work is enqueued and nothing will report its completion: wait for it before releasing
    // what it uses.
    ReportDroppedStatus(CUHAL_CU(api_, cuStreamSynchronize, stream)
                            .AddContext(StrCat(back->what, ": waiting for its work after its "
                                               "completion callback could not be enqueued")));
    launched.AddContext(StrCat(back->what, ": enqueueing its completion callback"));
    ReportDroppedStatus(scope->Exit());
    FailAction(std::move(back), launched);
    return launched;
  }
  {
    MutexLock lock(mu_);
    if (auto it = in_flight_.find(id); it != in_flight_.end()) it->second.launched = true;
    cv_.NotifyAll();
  }
  return scope->Exit();
}

void QueueScheduler::FailAction(std::unique_ptr<QueueAction> action, Status status) {
  ReportDroppedStatus(action->hold.Reset().AddContext(
      StrCat(action->what, ": releasing the buffer of the failed operation")));
  for (const SemaphoreValue& s : action->signals) {
    if (action->timepoint != nullptr) s.semaphore->DropTimepoint(s.value, action->timepoint);
    s.semaphore->Fail(status);
  }
  if (action->timepoint != nullptr) action->timepoint->Unref();
}

void QueueScheduler::Retire(std::unique_ptr<QueueAction> action) {
  // A wait ordered device-side whose semaphore failed since: the failure travels on.
  Status failure;
  for (std::size_t i : action->device_waits) {
    const SemaphoreValue& w = action->waits[i];
    if (StatusOr<std::uint64_t> v = w.semaphore->Query(); !v.ok()) {
      failure = Status(v.status()).AddContext(
          StrCat(action->what, ": waiting for ", w.semaphore->name(), " to reach ", w.value));
      break;
    }
  }
  // Driver calls before signals (invariant 7): the held buffer, then the event goes back to the
  // pool (which may destroy it), then the values.
  ReportDroppedStatus(
      action->hold.Reset().AddContext(StrCat(action->what, ": releasing its buffer")));
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
}

void QueueScheduler::RetireAll(std::vector<std::unique_ptr<QueueAction>> done) {
  if (done.empty()) return;
  std::vector<std::uint64_t> ids;
  ids.reserve(done.size());
  for (std::unique_ptr<QueueAction>& a : done) {
    ids.push_back(a->id);
    Retire(std::move(a));
  }
  MutexLock lock(mu_);
  for (std::uint64_t id : ids) retiring_.erase(id);
  retired_cv_.NotifyAll();
}

void QueueScheduler::WaitForCompletedToRetire() {
  MutexLock lock(mu_);
  auto pending = [this]() CUHAL_REQUIRES(mu_) {
    if (!completions_.empty() || !retiring_.empty()) return true;
    for (const auto& [id, f] : in_flight_) {
      if (f.completed) return true;
    }
    return false;
  };
  while (pending()) retired_cv_.Wait(mu_);
}

void QueueScheduler::WorkerMain() {
  while (true) {
    std::vector<std::unique_ptr<QueueAction>> incoming;
    std::vector<std::unique_ptr<QueueAction>> done;
    bool stopping = false;
    {
      MutexLock lock(mu_);
      while (true) {
        if (!incoming_.empty() || !completions_.empty() || changed_ ||
            (stopping_ && !deferred_failed_)) {
          break;
        }
        if (exit_ && in_flight_.empty()) return;
        // Host functions run by themselves (a driver thread runs them), so the worker sleeps
        // until one reports, a watched semaphore changes, or work arrives: no polling.
        cv_.Wait(mu_);
      }
      incoming.swap(incoming_);
      in_transit_ = incoming.size();
      for (std::uint64_t id : completions_) {
        auto it = in_flight_.find(id);
        if (it == in_flight_.end()) continue;
        retiring_.insert(id);
        done.push_back(std::move(it->second.action));
        in_flight_.erase(it);
      }
      completions_.clear();
      changed_ = false;
      stopping = stopping_;
    }

    for (std::unique_ptr<QueueAction>& a : incoming) deferred_.push_back(std::move(a));

    if (stopping) {
      for (std::unique_ptr<QueueAction>& a : deferred_) {
        Unwatch(*a);
        Status aborted = AbortedError(
            StrCat(a->what, ": device ", device_name_,
                   " was destroyed while the operation waited for ", DescribeWaits(*a)));
        FailAction(std::move(a), aborted);
      }
      deferred_.clear();
      RetireAll(std::move(done));
      MutexLock lock(mu_);
      deferred_failed_ = true;
      deferred_count_ = 0;
      in_transit_ = 0;
      cv_.NotifyAll();
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
          Status failed = std::move(failure).AddContext(a->what);
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
  }
}

}  // namespace cuhal
