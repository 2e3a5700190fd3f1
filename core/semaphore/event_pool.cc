// Copyright 2026 The cuhal Authors.
#include "core/semaphore/event_pool.h"

#include "core/symbols/api_status.h"

namespace cuhal {

EventPool::~EventPool() {
  std::vector<CUevent> events;
  std::vector<Timepoint*> timepoints;
  std::size_t outstanding = 0;
  {
    MutexLock lock(mu_);
    events.swap(free_);
    timepoints.swap(spare_timepoints_);
    outstanding = outstanding_;
  }
  for (Timepoint* t : timepoints) delete t;
  for (CUevent event : events) {
    ReportDroppedStatus(
        CUHAL_CU(api_, cuEventDestroy, event).AddContext("destroying the device's event pool"));
  }
  if (outstanding != 0) {
    ReportDroppedStatus(InternalError(StrCat("destroying the device's event pool: ", outstanding,
                                             " event(s) were never given back")));
  }
}

StatusOr<CUevent> EventPool::Acquire() {
  bool warm = false;
  {
    MutexLock lock(mu_);
    if (!free_.empty()) {
      CUevent event = free_.back();
      free_.pop_back();
      ++outstanding_;
      return event;
    }
    warm = !warmed_;
    warmed_ = true;
  }
  if (warm && capacity_ > 1) {
    // The first Acquire fills the pool: from then on, while no more than `capacity` events are in
    // use, no event is created or destroyed (a steady state without driver calls, and one
    // deterministic call order whatever the timing of completions).
    std::vector<CUevent> made;
    made.reserve(capacity_ - 1);
    for (std::size_t i = 0; i + 1 < capacity_; ++i) {
      CUevent event = nullptr;
      Status created = CUHAL_CU(api_, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
      if (!created.ok()) {
        for (CUevent e : made) ReportDroppedStatus(CUHAL_CU(api_, cuEventDestroy, e));
        MutexLock lock(mu_);
        warmed_ = false;
        return std::move(created).AddContext("filling the device's event pool");
      }
      made.push_back(event);
    }
    MutexLock lock(mu_);
    free_.insert(free_.end(), made.begin(), made.end());
  }
  CUevent event = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING),
                        "creating an event for the device's event pool");
  MutexLock lock(mu_);
  ++outstanding_;
  return event;
}

Timepoint* EventPool::NewTimepoint(CUevent event, const void* owner) {
  {
    MutexLock lock(mu_);
    if (!spare_timepoints_.empty()) {
      Timepoint* t = spare_timepoints_.back();
      spare_timepoints_.pop_back();
      t->event_ = event;
      t->owner_ = owner;
      t->refs_.store(1, std::memory_order_relaxed);
      return t;
    }
  }
  return new Timepoint(this, event, owner);
}

void EventPool::ReleaseTimepoint(Timepoint* timepoint) noexcept {
  const CUevent event = timepoint->event_;
  {
    MutexLock lock(mu_);
    if (spare_timepoints_.size() < capacity_) {
      spare_timepoints_.push_back(timepoint);
      timepoint = nullptr;
    }
  }
  delete timepoint;
  Release(event);
}

void EventPool::Release(CUevent event) noexcept {
  {
    MutexLock lock(mu_);
    --outstanding_;
    if (free_.size() < capacity_) {
      free_.push_back(event);
      return;
    }
  }
  ReportDroppedStatus(CUHAL_CU(api_, cuEventDestroy, event)
                          .AddContext("destroying an event the full event pool cannot keep"));
}

std::size_t EventPool::pooled() const {
  MutexLock lock(mu_);
  return free_.size();
}

std::size_t EventPool::outstanding() const {
  MutexLock lock(mu_);
  return outstanding_;
}

}  // namespace cuhal
