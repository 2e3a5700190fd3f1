// Copyright 2026 The cuhal Authors.
#include "core/semaphore/event.h"

#include <utility>

#include "core/driver/context_scope.h"
#include "core/symbols/api_status.h"

namespace cuhal {

StatusOr<Event> Event::Create(const CudaApi* api, CUcontext context) {
  constexpr char kWhat[] = "creating a HAL event";
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api, context), kWhat);
  CUevent event = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING), kWhat);
  Event made{EventHandle(api, event)};
  CUHAL_RETURN_IF_ERROR(scope.Exit(), kWhat);
  return made;
}

}  // namespace cuhal
