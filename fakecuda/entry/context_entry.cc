// Copyright 2026 The cuhal Authors.
// Entry points: primary contexts, created contexts, the per-thread context stack, limits.
// cuCtxGetDevice_v2 and cuCtxSynchronize_v2 are CUDA 13.0's forms with an explicit context
// argument; they count as calls of their plain names (fault rules, call log), like cuMemAlloc_v2
// counts as cuMemAlloc, because cuGetProcAddress hands them out for the plain names.
#include <algorithm>
#include <string>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/coredump_model.h"
#include "fakecuda/internal/export_tables.h"
#include "fakecuda/internal/thread_state.h"

namespace fakecuda {
namespace {

// Flags accepted by cuCtxCreate / cuDevicePrimaryCtxSetFlags: one scheduling mode plus the
// optional bits.
constexpr unsigned kCtxOptionalBits = CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                                      CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE |
                                      CU_CTX_SYNC_MEMOPS;

bool ValidCtxFlags(unsigned flags) {
  unsigned sched = flags & CU_CTX_SCHED_MASK;
  if (sched != CU_CTX_SCHED_AUTO && sched != CU_CTX_SCHED_SPIN && sched != CU_CTX_SCHED_YIELD &&
      sched != CU_CTX_SCHED_BLOCKING_SYNC) {
    return false;
  }
  return (flags & ~(CU_CTX_SCHED_MASK | kCtxOptionalBits)) == 0;
}

// The answer for a context handle that names no live context: a handle the fake once gave out
// (its id is never reused) is CUDA_ERROR_CONTEXT_IS_DESTROYED, as the H200 answers for a
// destroyed context; NULL or anything else is CUDA_ERROR_INVALID_CONTEXT.
CUresult MissingContextError(CUcontext handle) {
  return DecodeHandle(HandleKind::kContext, handle) != 0 ? CUDA_ERROR_CONTEXT_IS_DESTROYED
                                                          : CUDA_ERROR_INVALID_CONTEXT;
}

Context* MakeContext(DriverState* st, int device, bool primary, unsigned flags,
                     std::uint64_t id = 0) CUHAL_REQUIRES(st->mu) {
  Context* ctx = st->contexts().Create(id != 0 ? id : st->NewId(), device, primary, flags);
  // Measured (H100, ci/gpu-probes/streamctx_probe.cc "ids"): making a context takes 7 stream ids
  // (its internal streams), the first context of a device 12; the legacy stream's id is the 7th
  // of the first context's (UNMEASURED for later contexts: the 2nd of theirs).
  Device& dev = st->device(device);
  const std::uint64_t n = dev.had_context ? 7 : 12;
  dev.had_context = true;
  ctx->legacy_public_id = st->streams().TakePublicIds(n) + n - 6;
  st->coredump().OnContextCreated(ctx->id, flags);  // its coredump settings: the global ones now
  return ctx;
}

// Removes `ctx_id` from the calling thread's stack top if it is there (cuCtxDestroy's rule).
void PopIfCurrent(DriverState* st, std::uint64_t ctx_id) {
  auto& stack = ThreadContextStack(st->serial);
  if (!stack.empty() && stack.back() == ctx_id) stack.pop_back();
}

// Measured 2026-12-06 on the H100, driver 580.159.04 (tests/cudart_catalogue/errors.cu): after
// a kernel wrote through a null pointer (sticky CUDA_ERROR_ILLEGAL_ADDRESS) and cudaDeviceReset
// (cuDevicePrimaryCtxReset), every later runtime call answered cudaErrorDevicesUnavailable, for
// the rest of the process and through a second reset; the runtime gets it from retaining the
// primary context again. A reset without a prior fault leaves the device usable (device.cu).
// UNMEASURED: the same for the last release of a faulted primary context and for cuCtxDestroy of
// a faulted created context (the fake treats every destruction alike), and for every sticky
// error, not only ILLEGAL_ADDRESS.
void MarkIfFaulted(DriverState* st, std::uint64_t ctx_id) CUHAL_REQUIRES(st->mu) {
  const Context* c = st->contexts().Find(ctx_id);
  if (c != nullptr && c->sticky != CUDA_SUCCESS) st->device(c->device).unavailable = true;
}

void DestroyContextObject(DriverState* st, std::uint64_t ctx_id) CUHAL_REQUIRES(st->mu) {
  if (!st->contexts().IsLive(ctx_id)) return;
  MarkIfFaulted(st, ctx_id);
  st->TeardownContext(ctx_id);
  st->contexts().Remove(ctx_id);
}

// Destroyed contexts, as the H200 treats them (ci/gpu-probes, cases "reset", "destroyed_ctx",
// "destroyed2"): a destroyed created context, and a primary context after its last release or a
// cuDevicePrimaryCtxReset, may still be made current (cuCtxSetCurrent and cuCtxPushCurrent of
// the handle succeed, and a reset primary context stays current); with one current, calls that
// need the context are CUDA_ERROR_CONTEXT_IS_DESTROYED (CurrentContextOrError), while
// cuCtxGetDevice and cuCtxGetFlags succeed. Returns the device of `id` when it names such a
// context (not a live one), else -1.
int DestroyedContextDevice(const DriverState* st, std::uint64_t id) CUHAL_REQUIRES(st->mu) {
  return st->contexts().DestroyedContextDevice(id);
}

// The id of a context handle that SetCurrent/Push accept: a live context, or a destroyed one (see
// DestroyedContextDevice); 0 for anything else (CUDA_ERROR_INVALID_CONTEXT).
std::uint64_t SettableContextId(DriverState* st, CUcontext handle) CUHAL_REQUIRES(st->mu) {
  if (Context* c = st->FindContext(handle); c != nullptr) return c->id;
  std::uint64_t id = DecodeHandle(HandleKind::kContext, handle);
  return DestroyedContextDevice(st, id) >= 0 ? id : 0;
}

// The calling thread's current context when it is a destroyed one (see DestroyedContextDevice):
// its device, or -1.
int DestroyedCurrentDevice(DriverState* st) CUHAL_REQUIRES(st->mu) {
  auto& stack = ThreadContextStack(st->serial);
  return stack.empty() ? -1 : DestroyedContextDevice(st, stack.back());
}

// The context a `CUcontext ctx` argument of the CUDA 13.0 forms names: NULL is the calling
// thread's current context (with CurrentContextOrError's errors); anything else must be a live
// context (CUDA_ERROR_INVALID_CONTEXT, as the plain forms answer for a bad current context),
// and a poisoned one answers its sticky error.
CUresult ContextArgOrCurrent(DriverState* st, CUcontext handle, Context** out)
    CUHAL_REQUIRES(st->mu) {
  if (handle == nullptr) return CurrentContextOrError(st, out);
  Context* c = st->FindContext(handle);
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (c->sticky != CUDA_SUCCESS) return c->sticky;
  *out = c;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

using fakecuda::Context;
using fakecuda::DriverState;
using fakecuda::HandleKind;
using fakecuda::ThreadContextStack;
using fakecuda::ValidDevice;

extern "C" {

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) try {
  FAKECUDA_ENTER(cuDevicePrimaryCtxRetain)
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  fakecuda::Device& d = st->device(dev);
  if (d.unavailable) return CUDA_ERROR_DEVICE_UNAVAILABLE;    // see MarkIfFaulted
  if (d.primary_ctx_id == 0) d.primary_ctx_id = st->NewId();  // one handle per device, for life
  if (!st->contexts().IsLive(d.primary_ctx_id)) {  // inactive: never made, released or reset
    fakecuda::MakeContext(st, dev, /*primary=*/true, d.primary_flags, d.primary_ctx_id);
  }
  ++d.primary_refcount;
  *pctx = fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, d.primary_ctx_id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevicePrimaryCtxRetain");
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) try {
  FAKECUDA_ENTER(cuDevicePrimaryCtxRelease)
  FAKECUDA_REFUSE_IN_USER_WORK()
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (st->device(dev).primary_refcount == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (st->device(dev).primary_refcount == 1 &&
      st->contexts().IsLive(st->device(dev).primary_ctx_id)) {
    // The last release: the runtime's per-context state goes first (export_tables.h), without
    // the lock; then look again, another thread may have released or retained meanwhile.
    std::uint64_t id = st->device(dev).primary_ctx_id;
    lock.Unlock();
    fakecuda::ExportTables::OnContextDestroy(st->serial, id);
    lock.Lock();
    if (st->device(dev).primary_refcount == 0) return CUDA_ERROR_INVALID_CONTEXT;
  }
  fakecuda::Device& d = st->device(dev);
  const bool runtime_release = d.runtime_release_due;
  if (runtime_release) {  // the CUDA runtime's release of its retain (export_tables.h)
    d.runtime_release_due = false;
    d.runtime_retains = std::max(0, d.runtime_retains - 1);
  }
  // The runtime never holds more than there are (someone else released one it was owed).
  d.runtime_retains = std::min(d.runtime_retains, d.primary_refcount - 1);
  if (--d.primary_refcount == 0) {
    // The last release destroys the context and everything in it; the handle stays the device's.
    // When it is the runtime's, at exit, what goes with it is what the program did not free.
    if (runtime_release && st->contexts().IsLive(d.primary_ctx_id)) {
      const fakecuda::Inventory before = st->CountLive();
      const std::string described = st->DescribeLive();
      fakecuda::DestroyContextObject(st, d.primary_ctx_id);
      st->NoteRuntimeTeardown(before, described);
    } else {
      fakecuda::DestroyContextObject(st, d.primary_ctx_id);
    }
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevicePrimaryCtxRelease");
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) try {
  FAKECUDA_ENTER(cuDevicePrimaryCtxSetFlags)
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (!fakecuda::ValidCtxFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::Device& d = st->device(dev);
  d.primary_flags = flags;
  if (Context* c = st->contexts().Find(d.primary_ctx_id); c != nullptr) c->flags = flags;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevicePrimaryCtxSetFlags");
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) try {
  FAKECUDA_ENTER(cuDevicePrimaryCtxGetState)
  if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  const fakecuda::Device& d = st->device(dev);
  *flags = d.primary_flags;
  *active = st->contexts().IsLive(d.primary_ctx_id) ? 1 : 0;  // a reset leaves it inactive
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevicePrimaryCtxGetState");
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) try {
  FAKECUDA_ENTER(cuDevicePrimaryCtxReset)
  FAKECUDA_REFUSE_IN_USER_WORK()
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (st->contexts().IsLive(st->device(dev).primary_ctx_id)) {
    // The runtime's per-context state goes first (export_tables.h), without the lock.
    std::uint64_t id = st->device(dev).primary_ctx_id;
    lock.Unlock();
    fakecuda::ExportTables::OnContextDestroy(st->serial, id);
    lock.Lock();
  }
  fakecuda::Device& d = st->device(dev);
  // Measured on the H200 (ci/gpu-probes, case "reset"): the context and everything in it is
  // destroyed and it becomes inactive (GetState: flags 0, active 0), whatever the retain count;
  // the retains stay owed (the next release succeeds, one more is CUDA_ERROR_INVALID_CONTEXT); a
  // thread that had it current keeps the handle current, and calls on it are
  // CUDA_ERROR_CONTEXT_IS_DESTROYED until a retain makes it active again (same handle).
  // Retaining after a reset without releasing first (the count then is 2) is not measured.
  fakecuda::DestroyContextObject(st, d.primary_ctx_id);
  d.primary_flags = 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevicePrimaryCtxReset");
}

CUresult CUDAAPI cuCtxCreate(CUcontext* pctx, CUctxCreateParams* ctxCreateParams,
                             unsigned int flags, CUdevice dev) try {
  FAKECUDA_ENTER(cuCtxCreate)
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (!fakecuda::ValidCtxFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
  if (ctxCreateParams != nullptr && (ctxCreateParams->execAffinityParams != nullptr ||
                                     ctxCreateParams->cigParams != nullptr)) {
    return CUDA_ERROR_NOT_SUPPORTED;  // execution affinity and CIG are not modelled
  }
  // UNMEASURED: answered as cuDevicePrimaryCtxRetain answers (see MarkIfFaulted).
  if (st->device(dev).unavailable) return CUDA_ERROR_DEVICE_UNAVAILABLE;
  Context* c = fakecuda::MakeContext(st, dev, /*primary=*/false, flags);
  ThreadContextStack(st->serial).push_back(c->id);
  *pctx = fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, c->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxCreate");
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx) try {
  FAKECUDA_ENTER(cuCtxDestroy)
  FAKECUDA_REFUSE_IN_USER_WORK()
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* c = st->FindContext(ctx);
  if (c == nullptr) return fakecuda::MissingContextError(ctx);  // twice: CONTEXT_IS_DESTROYED
  if (c->primary) return CUDA_ERROR_INVALID_CONTEXT;
  std::uint64_t id = c->id;
  // The runtime's per-context state goes first (export_tables.h), without the lock; then look
  // again, another thread may have destroyed it meanwhile.
  lock.Unlock();
  fakecuda::ExportTables::OnContextDestroy(st->serial, id);
  lock.Lock();
  if (!st->contexts().IsLive(id)) return fakecuda::MissingContextError(ctx);
  fakecuda::PopIfCurrent(st, id);
  fakecuda::DestroyContextObject(st, id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxDestroy");
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) try {
  FAKECUDA_ENTER(cuCtxPushCurrent)
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::uint64_t id = fakecuda::SettableContextId(st, ctx);  // a destroyed one too, as the H200
  if (id == 0) return CUDA_ERROR_INVALID_CONTEXT;
  ThreadContextStack(st->serial).push_back(id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxPushCurrent");
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx) try {
  FAKECUDA_ENTER(cuCtxPopCurrent)
  auto& stack = ThreadContextStack(st->serial);
  if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  std::uint64_t id = stack.back();
  stack.pop_back();
  if (pctx != nullptr) *pctx = fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxPopCurrent");
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) try {
  FAKECUDA_ENTER(cuCtxSetCurrent)
  auto& stack = ThreadContextStack(st->serial);
  if (ctx == nullptr) {
    if (!stack.empty()) stack.pop_back();
    return CUDA_SUCCESS;
  }
  std::uint64_t id = fakecuda::SettableContextId(st, ctx);  // a destroyed one too, as the H200
  if (id == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (stack.empty()) {
    stack.push_back(id);
  } else {
    stack.back() = id;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSetCurrent");
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) try {
  FAKECUDA_ENTER(cuCtxGetCurrent)
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto& stack = ThreadContextStack(st->serial);
  *pctx = stack.empty() ? nullptr
                        : fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, stack.back());
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetCurrent");
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) try {
  FAKECUDA_ENTER(cuCtxGetDevice)
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (int destroyed = fakecuda::DestroyedCurrentDevice(st); destroyed >= 0) {
    *device = destroyed;  // measured: succeeds on a destroyed current context
    return CUDA_SUCCESS;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  *device = ctx->device;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetDevice");
}

// CUDA 13.0's form (cuGetProcAddress hands it out for "cuCtxGetDevice" from 13000): the device
// of `ctx`, or of the current context when ctx is NULL. Counted under the plain name.
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) try {
  FAKECUDA_ENTER(cuCtxGetDevice)
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (int destroyed = fakecuda::DestroyedCurrentDevice(st); ctx == nullptr && destroyed >= 0) {
    // As the plain form: succeeds on a destroyed current context. Measured through the runtime
    // (H100, 2026-12-06, tests/cudart_catalogue/device.cu): cudaGetDevice after cudaDeviceReset
    // calls this with NULL while the reset primary context is current, and answers device 0.
    *device = destroyed;
    return CUDA_SUCCESS;
  }
  Context* c = nullptr;
  if (CUresult err = fakecuda::ContextArgOrCurrent(st, ctx, &c); err != CUDA_SUCCESS) return err;
  *device = c->device;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetDevice_v2");
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int* flags) try {
  FAKECUDA_ENTER(cuCtxGetFlags)
  if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (fakecuda::DestroyedCurrentDevice(st) >= 0) {
    // Measured: succeeds on a destroyed current context; a reset primary context reads 0 (the
    // value for a destroyed created context was not printed; 0 here too).
    *flags = 0;
    return CUDA_SUCCESS;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  // Measured (ci/gpu-probes 2026-12-03; differential fuzzer 2026-12-06, H200): a live primary
  // context reports CU_CTX_MAP_HOST whatever it was made with (mapped pinned memory is always
  // on); a created context does not (H100, streamctx_probe "ctxflags": cuCtxCreate_v4 with
  // flags 0 reads 0).
  *flags = ctx->flags | (ctx->primary ? unsigned{CU_CTX_MAP_HOST} : 0u);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetFlags");
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) try {
  FAKECUDA_ENTER(cuCtxGetApiVersion)
  // Measured on the H200 (ci/gpu-probes, cases "apiversion" and "gaps"): with ctx NULL the
  // current context is checked before the out-pointer (NULL, NULL with none current is
  // CUDA_ERROR_INVALID_CONTEXT); a destroyed context is CUDA_ERROR_INVALID_CONTEXT here, not
  // CONTEXT_IS_DESTROYED; primary, cuCtxCreate_v2/_v3/_v4 contexts all report 3020.
  Context* c = nullptr;
  if (ctx == nullptr) {
    if (CUresult err = fakecuda::CurrentContextOrError(st, &c); err != CUDA_SUCCESS) return err;
  } else {
    c = st->FindContext(ctx);
    if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = 3020;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetApiVersion");
}

CUresult CUDAAPI cuCtxSynchronize(void) try {
  FAKECUDA_ENTER(cuCtxSynchronize)
  FAKECUDA_REQUIRE_CONTEXT()
  if (CUresult r = fakecuda::CaptureCheckContextSync(st, ctx->id); r != CUDA_SUCCESS) return r;
  return st->SyncAll(ctx->id);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSynchronize");
}

// CUDA 13.0's form (cuGetProcAddress hands it out for "cuCtxSynchronize" from 13000): waits for
// the work of `ctx`, or of the current context when ctx is NULL, whether or not ctx is current.
// Counted under the plain name.
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) try {
  FAKECUDA_ENTER(cuCtxSynchronize)
  Context* c = nullptr;
  if (CUresult err = fakecuda::ContextArgOrCurrent(st, ctx, &c); err != CUDA_SUCCESS) return err;
  if (CUresult r = fakecuda::CaptureCheckContextSync(st, c->id); r != CUDA_SUCCESS) return r;
  return st->SyncAll(c->id);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSynchronize_v2");
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) try {
  FAKECUDA_ENTER(cuCtxGetStreamPriorityRange)
  FAKECUDA_REQUIRE_CONTEXT()
  const auto& profile = st->device(ctx->device).profile;
  (void)profile;
  if (leastPriority != nullptr) *leastPriority = 0;
  if (greatestPriority != nullptr) *greatestPriority = -5;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetStreamPriorityRange");
}

}  // extern "C"

namespace fakecuda {
namespace {

// Limits, as the H200 answers them (driver 580.159.04; ci/gpu-probes, cases "limits" and
// "gaps"). The context is checked first: with no current context even a NULL pvalue is
// CUDA_ERROR_INVALID_CONTEXT. An enum value past CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED (or
// negative) is CUDA_ERROR_INVALID_VALUE; the two the driver knows but does not support here
// (DEV_RUNTIME_SYNC_DEPTH, CIG_SHMEM_FALLBACK_ENABLED) are CUDA_ERROR_UNSUPPORTED_LIMIT; the two
// query-only ones (SHMEM_SIZE, CIG_ENABLED) refuse cuCtxSetLimit with CUDA_ERROR_NOT_PERMITTED.
// cuCtxSetLimit rounds and clamps instead of refusing, except where noted.
struct LimitRule {
  bool supported = false;
  bool settable = false;
  std::size_t def = 0;
  std::size_t min = 0;         // smaller requests are raised to this
  std::size_t granule = 1;     // rounded up to a multiple (wrapping, as the driver does)
  std::size_t clamp_max = 0;   // larger requests are lowered to this (0: none)
  std::size_t reject_max = 0;  // larger requests are CUDA_ERROR_INVALID_VALUE (0: none)
};

// Measured on the H200: the largest accepted stack size, the malloc heap's upper clamp (which
// may depend on the GPU's memory), and the fixed defaults.
constexpr std::size_t kMaxStackSize = 523712;
constexpr std::size_t kMallocHeapClamp = 17681179680ull;
constexpr std::size_t kDefaultPrintfFifo = 8650752;

bool LimitRuleFor(const DeviceProfile& profile, int limit, LimitRule* r) {
  switch (limit) {
    case CU_LIMIT_STACK_SIZE:  // 1 -> 16, 1000 -> 1008; 523713 is refused
      *r = {true, true, 1024, 0, 16, 0, kMaxStackSize};
      return true;
    case CU_LIMIT_PRINTF_FIFO_SIZE:  // at least 512 KiB, 256-byte steps, at most 2 GiB
      *r = {true, true, kDefaultPrintfFifo, 524288, 256, std::size_t{1} << 31, 0};
      return true;
    case CU_LIMIT_MALLOC_HEAP_SIZE:  // at least 4 MiB, 64 KiB steps
      *r = {true, true, 8388608, 4194304, 65536, kMallocHeapClamp, 0};
      return true;
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:  // exact within [32, 599186]
      *r = {true, true, 2048, 32, 1, 599186, 0};
      return true;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:  // exact; above 128 refused
      *r = {true, true, 64, 0, 1, 0, 128};
      return true;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: {
      // Rounded up to tenths of the device's persisting maximum (3932160 on the H200); above
      // that maximum refused (44040192 was; 23592960 was not: the boundary between the two is
      // taken to be the maximum itself, not measured). The default is three of those tenths:
      // 11796480 of 39321600 on the H200, 9830400 of 32768000 on the H100 (measured
      // 2026-12-06, tests/cudart_catalogue/device.cu).
      auto max = static_cast<std::size_t>(
          std::max(0, profile.Attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)));
      *r = {true, true, max / 10 * 3, 0, std::max<std::size_t>(1, max / 10), 0, max};
      return true;
    }
    case CU_LIMIT_SHMEM_SIZE:
      *r = {true, false,
            static_cast<std::size_t>(std::max(
                0, profile.Attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN))),
            0, 1, 0, 0};
      return true;
    case CU_LIMIT_CIG_ENABLED:
      *r = {true, false, 0, 0, 1, 0, 0};
      return true;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED:
      *r = {};
      return true;
    default:
      return false;
  }
}

// The value cuCtxGetLimit reads back after cuCtxSetLimit(value), or 0 with INVALID_VALUE.
CUresult ApplyLimitRule(const LimitRule& r, std::size_t value, std::size_t* stored) {
  if (r.reject_max != 0 && value > r.reject_max) return CUDA_ERROR_INVALID_VALUE;
  std::size_t v = std::max(value, r.min);
  if (r.granule > 1 && v % r.granule != 0) v = v + (r.granule - v % r.granule);  // may wrap to 0
  if (r.clamp_max != 0 && v > r.clamp_max) v = r.clamp_max;
  *stored = v;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuCtxGetLimit(size_t* pvalue, CUlimit limit) try {
  FAKECUDA_ENTER(cuCtxGetLimit)
  FAKECUDA_REQUIRE_CONTEXT()
  if (pvalue == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::LimitRule rule;
  const auto& profile = st->device(ctx->device).profile;
  if (!fakecuda::LimitRuleFor(profile, limit, &rule)) return CUDA_ERROR_INVALID_VALUE;
  if (!rule.supported) return CUDA_ERROR_UNSUPPORTED_LIMIT;
  auto it = ctx->limits.find(limit);
  *pvalue = it != ctx->limits.end() ? it->second : rule.def;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetLimit");
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) try {
  FAKECUDA_ENTER(cuCtxSetLimit)
  FAKECUDA_REQUIRE_CONTEXT()
  fakecuda::LimitRule rule;
  const auto& profile = st->device(ctx->device).profile;
  if (!fakecuda::LimitRuleFor(profile, limit, &rule)) return CUDA_ERROR_INVALID_VALUE;
  if (!rule.supported) return CUDA_ERROR_UNSUPPORTED_LIMIT;
  if (!rule.settable) return CUDA_ERROR_NOT_PERMITTED;
  std::size_t stored = 0;
  if (CUresult err = fakecuda::ApplyLimitRule(rule, value, &stored); err != CUDA_SUCCESS) {
    return err;
  }
  ctx->limits[limit] = stored;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSetLimit");
}

// Peer access, as the H200 answers on a one-GPU machine (ci/gpu-probes, case "peer"): the peer
// handle is checked before the flags (NULL with flags 1 is CUDA_ERROR_INVALID_CONTEXT), a
// destroyed peer is CUDA_ERROR_CONTEXT_IS_DESTROYED, and a context of the same device (itself
// included) is CUDA_ERROR_PEER_ACCESS_UNSUPPORTED.
CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) try {
  FAKECUDA_ENTER(cuCtxEnablePeerAccess)
  FAKECUDA_REQUIRE_CONTEXT()
  Context* peer = st->FindContext(peerContext);
  if (peer == nullptr) return fakecuda::MissingContextError(peerContext);
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (peer->device == ctx->device) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
  if (!ctx->peers.insert(peer->id).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxEnablePeerAccess");
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext) try {
  FAKECUDA_ENTER(cuCtxDisablePeerAccess)
  FAKECUDA_REQUIRE_CONTEXT()
  Context* peer = st->FindContext(peerContext);
  if (peer == nullptr) return fakecuda::MissingContextError(peerContext);
  if (ctx->peers.erase(peer->id) == 0) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxDisablePeerAccess");
}

}  // extern "C"
