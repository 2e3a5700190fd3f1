// Copyright 2026 The cuhal Authors.
#include "core/semaphore/semaphore.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace cuhal {
namespace {

// One host wait over one or more semaphores. It watches every semaphore of the list BEFORE it
// first looks at their values, and clears its flag before each look: a change that happens after
// a look always sets the flag again, so no signal between "looked" and "went to sleep" is lost
// (the multi-wait bug IREE fixed in its CUDA semaphore).
class HostWaiter final : public SemaphoreWatcher {
 public:
  explicit HostWaiter(std::span<const SemaphoreValue> values) : values_(values) {
    for (const SemaphoreValue& v : values_) v.semaphore->Watch(this);
  }
  ~HostWaiter() {
    for (const SemaphoreValue& v : values_) v.semaphore->Unwatch(this);
  }
  HostWaiter(const HostWaiter&) = delete;             // registered by address
  HostWaiter& operator=(const HostWaiter&) = delete;  // ditto

  void OnSemaphoreChanged() noexcept override {
    MutexLock lock(mu_);
    changed_ = true;
    cv_.NotifyAll();
  }
  void ClearChanged() {
    MutexLock lock(mu_);
    changed_ = false;
  }
  // Sleeps until a change or the deadline; false on the deadline.
  bool Sleep(Deadline deadline) {
    MutexLock lock(mu_);
    while (!changed_) {
      if (!cv_.WaitUntil(mu_, deadline) && !changed_) return false;
    }
    return true;
  }

 private:
  std::span<const SemaphoreValue> values_;
  Mutex mu_;
  CondVar cv_;
  bool changed_ CUHAL_GUARDED_BY(mu_) = false;
};

Status CheckList(std::span<const SemaphoreValue> values, const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].semaphore == nullptr) {
      return InvalidArgumentError(StrCat(what, ": semaphore ", i, " of the list is null"));
    }
  }
  return OkStatus();
}

// OK when reached, the failure when failed, else a DEADLINE_EXCEEDED describing the shortfall.
Status Look(const SemaphoreValue& v, bool* reached) {
  StatusOr<std::uint64_t> current = v.semaphore->Query();
  if (!current.ok()) {
    *reached = false;
    return Status(current.status())
        .AddContext(StrCat("waiting for ", v.semaphore->name(), " to reach ", v.value));
  }
  *reached = *current >= v.value;
  if (*reached) return OkStatus();
  return DeadlineExceededError(StrCat("waiting for ", v.semaphore->name(), " to reach ", v.value,
                                      ": the deadline passed at value ", *current));
}

}  // namespace

Deadline DeadlineAfter(std::chrono::nanoseconds timeout) {
  const Deadline now = std::chrono::steady_clock::now();
  if (timeout >= std::chrono::duration_cast<std::chrono::nanoseconds>(kInfiniteFuture - now)) {
    return kInfiniteFuture;
  }
  return now + timeout;
}

std::shared_ptr<Semaphore> Semaphore::Create(std::uint64_t initial_value, std::string name) {
  return std::shared_ptr<Semaphore>(new Semaphore(initial_value, std::move(name)));
}

Status Semaphore::FailureLocked() const {
  return Status(failure_).AddContext(StrCat(name_, " has failed"));
}

StatusOr<std::uint64_t> Semaphore::Query() const {
  MutexLock lock(mu_);
  if (!failure_.ok()) return FailureLocked();
  return value_;
}

bool Semaphore::failed() const {
  MutexLock lock(mu_);
  return !failure_.ok();
}

void Semaphore::NotifyLocked() {
  for (SemaphoreWatcher* watcher : watchers_) watcher->OnSemaphoreChanged();
}

Status Semaphore::Signal(std::uint64_t value) {
  MutexLock lock(mu_);
  if (!failure_.ok()) {
    return FailureLocked().AddContext(StrCat("signalling ", name_, " to ", value));
  }
  if (value <= value_) {
    return InvalidArgumentError(StrCat("signalling ", name_, " to ", value,
                                       ": values only go up and it is already at ", value_));
  }
  value_ = value;
  NotifyLocked();
  return OkStatus();
}

void Semaphore::Fail(Status status) {
  if (status.ok()) status = UnknownError("Semaphore::Fail was given an OK status");
  MutexLock lock(mu_);
  if (!failure_.ok()) return;  // the first failure wins
  failure_ = std::move(status);
  NotifyLocked();
}

Status Semaphore::Wait(std::uint64_t value, Deadline deadline) {
  const SemaphoreValue v{this, value};
  return WaitAll(std::span<const SemaphoreValue>(&v, 1), deadline);
}

Status Semaphore::WaitAll(std::span<const SemaphoreValue> values, Deadline deadline) {
  CUHAL_RETURN_IF_ERROR(CheckList(values, "waiting for all of a semaphore list"));
  if (values.empty()) return OkStatus();
  HostWaiter waiter(values);
  while (true) {
    waiter.ClearChanged();
    Status shortfall;
    for (const SemaphoreValue& v : values) {
      bool reached = false;
      Status looked = Look(v, &reached);
      if (reached) continue;
      if (looked.code() != StatusCode::kDeadlineExceeded) return looked;  // failed
      if (shortfall.ok()) shortfall = std::move(looked);
    }
    if (shortfall.ok()) return OkStatus();
    if (!waiter.Sleep(deadline)) {
      // One last look: a change may have landed just as the deadline passed.
      for (const SemaphoreValue& v : values) {
        bool reached = false;
        Status looked = Look(v, &reached);
        if (!reached) return looked;
      }
      return OkStatus();
    }
  }
}

StatusOr<std::size_t> Semaphore::WaitAny(std::span<const SemaphoreValue> values,
                                         Deadline deadline) {
  CUHAL_RETURN_IF_ERROR(CheckList(values, "waiting for any of a semaphore list"));
  if (values.empty()) {
    return InvalidArgumentError("waiting for any of an empty semaphore list");
  }
  HostWaiter waiter(values);
  bool last_look = false;
  while (true) {
    waiter.ClearChanged();
    Status shortfall;
    for (std::size_t i = 0; i < values.size(); ++i) {
      bool reached = false;
      Status looked = Look(values[i], &reached);
      if (reached) return i;
      if (looked.code() != StatusCode::kDeadlineExceeded) return looked;  // failed
      if (shortfall.ok()) shortfall = std::move(looked);
    }
    if (last_look) return shortfall;
    if (!waiter.Sleep(deadline)) last_look = true;
  }
}

Semaphore::Resolution Semaphore::Resolve(std::uint64_t value, const void* owner) {
  MutexLock lock(mu_);
  Resolution r;
  if (!failure_.ok()) {
    r.state = WaitState::kFailed;
    r.failure = FailureLocked();
    return r;
  }
  if (value_ >= value) {
    r.state = WaitState::kSatisfied;
    return r;
  }
  // The earliest submitted signal of at least `value` from the same device.
  auto first = std::lower_bound(
      timepoints_.begin(), timepoints_.end(), value,
      [](const std::pair<std::uint64_t, Timepoint*>& e, std::uint64_t v) { return e.first < v; });
  for (auto it = first; it != timepoints_.end(); ++it) {
    if (it->second->owner() != owner) continue;
    it->second->Ref();
    r.state = WaitState::kDevice;
    r.timepoint = it->second;
    return r;
  }
  r.state = WaitState::kPending;
  return r;
}

void Semaphore::AddTimepoint(std::uint64_t value, Timepoint* timepoint) {
  MutexLock lock(mu_);
  // After every entry of a value <= `value` (a multimap's emplace order); usually the back.
  auto at = timepoints_.end();
  while (at != timepoints_.begin() && std::prev(at)->first > value) --at;
  timepoints_.emplace(at, value, timepoint);
  NotifyLocked();  // a deferred operation may now be ordered device-side
}

void Semaphore::Advance(std::uint64_t value) {
  MutexLock lock(mu_);
  if (failure_.ok() && value > value_) value_ = value;
  NotifyLocked();
}

void Semaphore::DropTimepoint(std::uint64_t value, Timepoint* timepoint) {
  MutexLock lock(mu_);
  // Usually the front (operations retire in submission order).
  for (auto it = timepoints_.begin(); it != timepoints_.end() && it->first <= value; ++it) {
    if (it->first == value && it->second == timepoint) {
      timepoints_.erase(it);
      break;
    }
  }
}

void Semaphore::Watch(SemaphoreWatcher* watcher) {
  MutexLock lock(mu_);
  watchers_.push_back(watcher);
}

void Semaphore::Unwatch(SemaphoreWatcher* watcher) {
  MutexLock lock(mu_);
  auto it = std::find(watchers_.begin(), watchers_.end(), watcher);
  if (it != watchers_.end()) watchers_.erase(it);
}

}  // namespace cuhal
