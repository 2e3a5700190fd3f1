// Copyright 2026 The cuhal Authors.
// ContextScope: makes a CUDA context current for the length of one cuhal operation and then
// restores whatever the caller had current.
#ifndef CUHAL_CORE_DRIVER_CONTEXT_SCOPE_H_
#define CUHAL_CORE_DRIVER_CONTEXT_SCOPE_H_

#include <cuda.h>

#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"

namespace cuhal {

// Push/pop discipline for the calling thread's context stack. Every cuhal operation that needs a
// current context enters a scope on entry and exits it before returning, so a cuhal call never
// changes which context the caller has current:
//
//   CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api, context));
//   ... driver calls that need `context` current ...
//   CUHAL_RETURN_IF_ERROR(scope.Exit());  // or let the destructor pop (errors are reported)
//
// Enter asks cuCtxGetCurrent first: when `context` is already current nothing is pushed (one
// driver call, about 10 ns on the H200), otherwise it is pushed with cuCtxPushCurrent and Exit
// pops it with cuCtxPopCurrent. cuCtxSetCurrent is never used: it would overwrite the caller's
// entry instead of stacking on it.
//
// Ownership: move-only; at most one live ContextScope owns a given push. The table is borrowed.
// Thread-safety: a context stack is per thread, so a scope must be exited on the thread that
// entered it (it is not meant to be handed to another thread). Stream ordering: none; context
// changes are host-side only.
class [[nodiscard]] ContextScope {
 public:
  // Makes `context` current on the calling thread. Errors name the driver call that failed
  // ("cuCtxPushCurrent: CUDA_ERROR_INVALID_CONTEXT (...)") and leave the stack unchanged.
  [[nodiscard]] static StatusOr<ContextScope> Enter(const CudaApi* api, CUcontext context);

  ContextScope(ContextScope&& other) noexcept;
  ContextScope& operator=(ContextScope&&) = delete;  // a scope is tied to one stack position
  ContextScope(const ContextScope&) = delete;        // two owners would pop twice
  ContextScope& operator=(const ContextScope&) = delete;
  // Exits if not yet exited; a failure goes to ReportDroppedStatus.
  ~ContextScope();

  // Restores the caller's context (pops what Enter pushed; nothing when nothing was pushed).
  // Idempotent: the second call is a no-op returning OK. After a failed pop the scope counts as
  // exited (retrying would pop the caller's own entry). INTERNAL when the popped context is not
  // the one pushed: someone changed the stack inside the scope.
  [[nodiscard]] Status Exit() noexcept;

  // Whether Enter pushed (false when the context was already current or after Exit).
  [[nodiscard]] bool pushed() const noexcept { return pushed_; }

 private:
  ContextScope(const CudaApi* api, CUcontext context, bool pushed) noexcept
      : api_(api), context_(context), pushed_(pushed) {}

  const CudaApi* api_ = nullptr;
  CUcontext context_ = nullptr;
  bool pushed_ = false;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DRIVER_CONTEXT_SCOPE_H_
