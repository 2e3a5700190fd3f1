// Copyright 2026 The cuhal Authors.
#include "core/semaphore/event_pool.h"

#include "core/symbols/api_status.h"

namespace cuhal {

EventPool::~EventPool() {
  std::vector<CUevent> events;
  std::size_t outstanding = 0;
  {
    MutexLock lock(mu_);
    events.swap(free_);
    outstanding = outstanding_;
  }
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
  {
    MutexLock lock(mu_);
    if (!free_.empty()) {
      CUevent event = free_.back();
      free_.pop_back();
      ++outstanding_;
      return event;
    }
  }
  CUevent event = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING),
                        "creating an event for the device's event pool");
  MutexLock lock(mu_);
  ++outstanding_;
  return event;
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
