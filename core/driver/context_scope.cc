// Copyright 2026 The cuhal Authors.
#include "core/driver/context_scope.h"

#include <utility>

#include "core/symbols/api_status.h"

namespace cuhal {

StatusOr<ContextScope> ContextScope::Enter(const CudaApi* api, CUcontext context) {
  if (context == nullptr) return InvalidArgumentError("entering a null context");
  CUcontext current = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuCtxGetCurrent, &current));
  if (current == context) return ContextScope(api, context, /*pushed=*/false);
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuCtxPushCurrent, context));
  return ContextScope(api, context, /*pushed=*/true);
}

ContextScope::ContextScope(ContextScope&& other) noexcept
    : api_(other.api_), context_(other.context_), pushed_(std::exchange(other.pushed_, false)) {}

ContextScope::~ContextScope() { ReportDroppedStatus(Exit()); }

Status ContextScope::Exit() noexcept {
  if (!std::exchange(pushed_, false)) return OkStatus();
  CUcontext popped = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuCtxPopCurrent, &popped),
                        "restoring the caller's context");
  if (popped != context_) {
    return InternalError(StrCat("restoring the caller's context: cuCtxPopCurrent popped context ",
                                static_cast<const void*>(popped), " instead of ",
                                static_cast<const void*>(context_),
                                " (the context stack was changed inside a cuhal call)"));
  }
  return OkStatus();
}

}  // namespace cuhal
