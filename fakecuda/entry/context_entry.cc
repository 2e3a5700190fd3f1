// Copyright 2026 The cuhal Authors.
// Entry points: primary contexts, created contexts, the per-thread context stack, limits.
// cuCtxGetDevice_v2 and cuCtxSynchronize_v2 are CUDA 13.0's forms with an explicit context
// argument; they count as calls of their plain names (fault rules, call log), like cuMemAlloc_v2
// counts as cuMemAlloc, because cuGetProcAddress hands them out for the plain names.
#include <algorithm>

#include "fakecuda/entry/entry.h"
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

Context* MakeContext(DriverState* st, int device, bool primary, unsigned flags,
                     std::uint64_t id = 0) CUHAL_REQUIRES(st->mu) {
  auto c = std::make_unique<Context>();
  c->id = id != 0 ? id : st->NewId();
  c->device = device;
  c->primary = primary;
  c->flags = flags;
  Context* raw = c.get();
  st->contexts[raw->id] = std::move(c);
  return raw;
}

// Removes `ctx_id` from the calling thread's stack top if it is there (cuCtxDestroy's rule).
void PopIfCurrent(DriverState* st, std::uint64_t ctx_id) {
  auto& stack = ThreadContextStack(st->serial);
  if (!stack.empty() && stack.back() == ctx_id) stack.pop_back();
}

void DestroyContextObject(DriverState* st, std::uint64_t ctx_id) CUHAL_REQUIRES(st->mu) {
  st->TeardownContext(ctx_id);
  st->contexts.erase(ctx_id);
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
  fakecuda::Device& d = st->devices[static_cast<size_t>(dev)];
  if (d.primary_ctx_id == 0) d.primary_ctx_id = st->NewId();  // one handle per device, for life
  if (d.primary_refcount == 0 || st->contexts.count(d.primary_ctx_id) == 0) {
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
  fakecuda::Device& d = st->devices[static_cast<size_t>(dev)];
  if (d.primary_refcount == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (--d.primary_refcount == 0) {
    // The last release destroys the context and everything in it; the handle stays the device's.
    fakecuda::DestroyContextObject(st, d.primary_ctx_id);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevicePrimaryCtxRelease");
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) try {
  FAKECUDA_ENTER(cuDevicePrimaryCtxSetFlags)
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (!fakecuda::ValidCtxFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::Device& d = st->devices[static_cast<size_t>(dev)];
  d.primary_flags = flags;
  if (auto it = st->contexts.find(d.primary_ctx_id); it != st->contexts.end()) {
    it->second->flags = flags;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevicePrimaryCtxSetFlags");
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) try {
  FAKECUDA_ENTER(cuDevicePrimaryCtxGetState)
  if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  const fakecuda::Device& d = st->devices[static_cast<size_t>(dev)];
  *flags = d.primary_flags;
  *active = d.primary_refcount > 0 ? 1 : 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevicePrimaryCtxGetState");
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) try {
  FAKECUDA_ENTER(cuDevicePrimaryCtxReset)
  FAKECUDA_REFUSE_IN_USER_WORK()
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  fakecuda::Device& d = st->devices[static_cast<size_t>(dev)];
  // Destroys the context's resources and resets its flags, whatever the retain count.
  if (d.primary_ctx_id != 0 && st->contexts.count(d.primary_ctx_id) != 0) {
    fakecuda::DestroyContextObject(st, d.primary_ctx_id);
    if (d.primary_refcount > 0) {
      fakecuda::MakeContext(st, dev, /*primary=*/true, 0, d.primary_ctx_id);
    }
  }
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
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (c->primary) return CUDA_ERROR_INVALID_CONTEXT;
  std::uint64_t id = c->id;
  fakecuda::PopIfCurrent(st, id);
  fakecuda::DestroyContextObject(st, id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxDestroy");
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) try {
  FAKECUDA_ENTER(cuCtxPushCurrent)
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* c = st->FindContext(ctx);
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  ThreadContextStack(st->serial).push_back(c->id);
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
  Context* c = st->FindContext(ctx);
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (stack.empty()) {
    stack.push_back(c->id);
  } else {
    stack.back() = c->id;
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
  FAKECUDA_REQUIRE_CONTEXT()
  *flags = ctx->flags;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetFlags");
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) try {
  FAKECUDA_ENTER(cuCtxGetApiVersion)
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* c = nullptr;
  if (ctx == nullptr) {
    if (CUresult err = fakecuda::CurrentContextOrError(st, &c); err != CUDA_SUCCESS) return err;
  } else {
    c = st->FindContext(ctx);
    if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  }
  *version = 3020;  // every context made through the v2+ API reports 3020
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetApiVersion");
}

CUresult CUDAAPI cuCtxSynchronize(void) try {
  FAKECUDA_ENTER(cuCtxSynchronize)
  FAKECUDA_REQUIRE_CONTEXT()
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
  return st->SyncAll(c->id);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSynchronize_v2");
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) try {
  FAKECUDA_ENTER(cuCtxGetStreamPriorityRange)
  FAKECUDA_REQUIRE_CONTEXT()
  const auto& profile = st->devices[static_cast<size_t>(ctx->device)].profile;
  (void)profile;
  if (leastPriority != nullptr) *leastPriority = 0;
  if (greatestPriority != nullptr) *greatestPriority = -5;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetStreamPriorityRange");
}

CUresult CUDAAPI cuCtxGetLimit(size_t* pvalue, CUlimit limit) try {
  FAKECUDA_ENTER(cuCtxGetLimit)
  if (pvalue == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  static const std::map<int, size_t> kDefaults = {
      {CU_LIMIT_STACK_SIZE, 1024},
      {CU_LIMIT_PRINTF_FIFO_SIZE, 1048576},
      {CU_LIMIT_MALLOC_HEAP_SIZE, 8388608},
      {CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 2},
      {CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 2048},
      {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 32},
      {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0},
  };
  auto def = kDefaults.find(limit);
  if (def == kDefaults.end()) return CUDA_ERROR_UNSUPPORTED_LIMIT;
  auto it = ctx->limits.find(limit);
  *pvalue = it != ctx->limits.end() ? it->second : def->second;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetLimit");
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) try {
  FAKECUDA_ENTER(cuCtxSetLimit)
  FAKECUDA_REQUIRE_CONTEXT()
  switch (limit) {
    case CU_LIMIT_STACK_SIZE:
    case CU_LIMIT_PRINTF_FIFO_SIZE:
    case CU_LIMIT_MALLOC_HEAP_SIZE:
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
      ctx->limits[limit] = value;
      return CUDA_SUCCESS;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
      if (value > 128) return CUDA_ERROR_INVALID_VALUE;
      ctx->limits[limit] = value;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_UNSUPPORTED_LIMIT;
  }
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSetLimit");
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) try {
  FAKECUDA_ENTER(cuCtxEnablePeerAccess)
  FAKECUDA_REQUIRE_CONTEXT()
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Context* peer = st->FindContext(peerContext);
  if (peer == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (peer->device == ctx->device) return CUDA_ERROR_INVALID_DEVICE;
  if (!ctx->peers.insert(peer->id).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxEnablePeerAccess");
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext) try {
  FAKECUDA_ENTER(cuCtxDisablePeerAccess)
  FAKECUDA_REQUIRE_CONTEXT()
  Context* peer = st->FindContext(peerContext);
  if (peer == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx->peers.erase(peer->id) == 0) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxDisablePeerAccess");
}

}  // extern "C"
