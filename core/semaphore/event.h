// Copyright 2026 The cuhal Authors.
// Event: a HAL event (IREE's iree_hal_event), for command buffers to signal and wait on within a
// queue's stream (next issue: command buffers record cuEventRecord / cuStreamWaitEvent on it).
#ifndef CUHAL_CORE_SEMAPHORE_EVENT_H_
#define CUHAL_CORE_SEMAPHORE_EVENT_H_

#include <cuda.h>

#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"

namespace cuhal {

// One CUevent (CU_EVENT_DISABLE_TIMING) of a device's context, made by Device::CreateEvent.
//
// Ownership: move-only owner of the event (destroyed with cuEventDestroy when the Event goes or
// Reset; a failure goes to ReportDroppedStatus). Destroy it before its device. Borrows the table.
// Thread-safety: like unique_ptr; handle() from any thread. Stream ordering: an Event orders
// nothing by itself; work that records it and work that waits on it are ordered by the driver's
// rule (a wait sees the record made before the wait was enqueued).
class Event {
 public:
  // Creates the event with `context` current for the call. Errors name cuEventCreate.
  [[nodiscard]] static StatusOr<Event> Create(const CudaApi* api, CUcontext context);

  Event() = default;
  Event(Event&&) noexcept = default;
  Event& operator=(Event&&) noexcept = default;
  Event(const Event&) = delete;             // one owner destroys the event
  Event& operator=(const Event&) = delete;  // ditto
  ~Event() = default;                       // the handle destroys the event

  [[nodiscard]] CUevent handle() const noexcept { return event_.get(); }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(event_); }
  // Destroys the event now and says how that went.
  [[nodiscard]] Status Reset() { return event_.Reset().AddContext("destroying a HAL event"); }

 private:
  explicit Event(EventHandle event) : event_(std::move(event)) {}
  EventHandle event_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_SEMAPHORE_EVENT_H_
