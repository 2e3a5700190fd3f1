// Copyright 2026 The cuhal Authors.
// The prologue every fakecuda entry point starts with.
//
// Entry points are extern "C" functions with cuda.h's names and signatures; because cuda.h
// #defines cuMemAlloc to cuMemAlloc_v2 and so on, they are emitted under the real driver's
// versioned symbol names. Each one:
//   1. finds the installed driver (none installed: CUDA_ERROR_NOT_INITIALIZED, as before cuInit);
//   2. lets the fault injector fail the call (before any effect, so a failed call changes nothing);
//   3. takes the driver lock and checks cuInit has been called.
// Inside user work (a host function, a stream callback, a kernel implementation: the driver's
// callback lanes), only the entry points the H200 allows there run; every other one answers
// CUDA_ERROR_NOT_PERMITTED before it is counted or can fail (PermittedInUserWork).
// And each body is a function-try-block: `CUresult CUDAAPI cuX(...) try { ... } catch (...) {
// return EntryFailed("cuX"); }`. Nothing unwinds into the C caller; the driver lock is released
// by its MutexLock during unwinding, so a failed call wedges nothing. Helpers that need the lock
// say CUHAL_REQUIRES(st->mu) (core/base/mutex.h; checked by the `thread-safety` preset).
#ifndef CUHAL_FAKECUDA_ENTRY_ENTRY_H_
#define CUHAL_FAKECUDA_ENTRY_ENTRY_H_

#include <cuda.h>

#include "fakecuda/internal/driver_state.h"

// `name` is stringified here, at the first level: cuda.h #defines many entry names to their
// versioned symbols (cuMemAlloc -> cuMemAlloc_v2), and a nested macro would receive the expanded
// token; fault rules and the call log use the plain names.
#define FAKECUDA_ENTER_NOLOCK(name) FAKECUDA_ENTER_NOLOCK_NAMED(#name)

#define FAKECUDA_ENTER_NOLOCK_NAMED(entry_name)                              \
  ::fakecuda::DriverState* st = ::fakecuda::InstalledState();                \
  if (st == nullptr) return CUDA_ERROR_NOT_INITIALIZED;                      \
  st->NoteEntry();                                                           \
  /* The user's call site, for the race detector's reports (race_detector.h). */ \
  if (st->race() != nullptr) ::fakecuda::NoteRaceCaller(__builtin_return_address(0)); \
  if (st->OnCallbackThread() && !::fakecuda::PermittedInUserWork(entry_name)) { \
    return CUDA_ERROR_NOT_PERMITTED;                                         \
  }                                                                          \
  if (CUresult fakecuda_injected_ = st->faults.OnCall(entry_name);           \
      fakecuda_injected_ != CUDA_SUCCESS) {                                  \
    return fakecuda_injected_;                                               \
  }

#define FAKECUDA_ENTER(name)                                                 \
  FAKECUDA_ENTER_NOLOCK_NAMED(#name)                                         \
  cuhal::MutexLock lock(st->mu);                                             \
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;

// Entry points that tear down contexts (and so the streams a host function may be running on)
// refuse on the callback lanes whatever PermittedInUserWork says.
#define FAKECUDA_REFUSE_IN_USER_WORK()                                       \
  if (st->OnCallbackThread()) return CUDA_ERROR_NOT_PERMITTED;

// After FAKECUDA_ENTER: binds `ctx` to the current context, or returns the real error for none
// (CUDA_ERROR_INVALID_CONTEXT), a destroyed one (CUDA_ERROR_CONTEXT_IS_DESTROYED) or a poisoned
// one (its sticky error).
#define FAKECUDA_REQUIRE_CONTEXT()                                           \
  ::fakecuda::Context* ctx = nullptr;                                        \
  if (CUresult fakecuda_ctx_err_ = ::fakecuda::CurrentContextOrError(st, &ctx); \
      fakecuda_ctx_err_ != CUDA_SUCCESS) {                                   \
    return fakecuda_ctx_err_;                                                \
  }

namespace fakecuda {
// Remembers, for the calling thread, the return address of its current entry-point call (the
// race detector's call sites start there).
void NoteRaceCaller(void* return_address) noexcept;
// The answer of an entry point whose body threw: prints "fakecuda: <entry>: <what>" on stderr and
// returns CUDA_ERROR_OUT_OF_MEMORY for std::bad_alloc (host memory for the fake's own state ran
// out), CUDA_ERROR_UNKNOWN for anything else. Call only from a catch block.
CUresult EntryFailed(const char* entry) noexcept;
// Whether the entry point `entry` (its plain name) may be called from inside a host function.
// Measured on the H200 (docs/driver_facts.md, "CUDA calls from inside a host function"): calls
// on explicit stream and event handles, cuMemsetD8Async, cuLaunchHostFunc, versions and error
// names succeed; everything needing the current context (there is none inside a callback:
// cuCtxGetCurrent itself is refused), allocation, synchronous copies, cuMemcpyHtoDAsync,
// kernel launches, object creation and device queries answer CUDA_ERROR_NOT_PERMITTED. Entry
// points not measured are refused too (a modelling choice, said there).
bool PermittedInUserWork(const char* entry) noexcept;
CUresult CurrentContextOrError(DriverState* st, Context** ctx) CUHAL_REQUIRES(st->mu);
// Validates a device ordinal against the installed devices.
inline bool ValidDevice(const DriverState* st, CUdevice dev) {
  return dev >= 0 && dev < st->device_count();
}
}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_ENTRY_ENTRY_H_
