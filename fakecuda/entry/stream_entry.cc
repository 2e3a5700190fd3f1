// Copyright 2026 The cuhal Authors.
// Entry points: streams, events, host functions. cuStreamGetCtx_v2 (CUDA 12.5's form, with a
// green-context output) counts as a call of cuStreamGetCtx, the name cuGetProcAddress hands it
// out for.
#include <algorithm>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/resource_model.h"
#include "fakecuda/race/race_detector.h"

using fakecuda::Context;
using fakecuda::DriverState;
using fakecuda::Event;
using fakecuda::HandleKind;
using fakecuda::Op;
using fakecuda::Stream;

namespace fakecuda {
namespace {

// The stream priority range of every fake device (as on the H200: 0 is least, -5 greatest).
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;

CUresult CreateStream(DriverState* st, CUstream* ph, unsigned flags, int priority)
    CUHAL_REQUIRES(st->mu) {
  if (ph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  priority = std::clamp(priority, kGreatestPriority, kLeastPriority);
  Stream* s = st->NewStream(ctx, flags, priority);
  *ph = EncodeHandle<CUstream>(HandleKind::kStream, s->id);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

namespace fakecuda {
CUresult RecordEvent(DriverState* st, CUevent hEvent, CUstream hStream) CUHAL_REQUIRES(st->mu) {
  Event* e = st->FindEvent(hEvent);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  if (s->ctx_id != e->ctx_id) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = CUDA_SUCCESS; CaptureRecordEvent(st, e, s, &r)) return r;
  e->generation++;
  e->complete = false;
  e->stream_id = s->id;
  e->waited = s->waited;
  Op op;
  op.what = "cuEventRecord";
  op.record_event_id = e->id;
  op.record_generation = e->generation;
  // Set seq before Enqueue can run the op (eager), which may complete the event at once.
  e->seq = st->streams().next_seq();
  st->Enqueue(s, std::move(op));
  return CUDA_SUCCESS;
}
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) try {
  FAKECUDA_ENTER(cuStreamCreate)
  return fakecuda::CreateStream(st, phStream, Flags, 0);
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamCreate");
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) try {
  FAKECUDA_ENTER(cuStreamCreateWithPriority)
  return fakecuda::CreateStream(st, phStream, flags, priority);
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamCreateWithPriority");
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream) try {
  FAKECUDA_ENTER(cuStreamDestroy)
  if (hStream == nullptr || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  fakecuda::CaptureOnStreamDestroyed(st, s->id);
  // Returns at once; queued work still completes (the stream is reaped when it drains).
  s->destroyed = true;
  st->ReapStreams();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamDestroy");
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) try {
  FAKECUDA_ENTER(cuStreamQuery)
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  if (CUresult r = fakecuda::CaptureCheckStreamSync(st, s); r != CUDA_SUCCESS) return r;
  if (CUresult sticky = st->contexts().StickyError(s->ctx_id); sticky != CUDA_SUCCESS) {
    return sticky;
  }
  const std::uint64_t id = s->id;
  if (!st->PollStream(s, 0)) return CUDA_ERROR_NOT_READY;
  // A query that answered CUDA_SUCCESS is a synchronization (the race detector's order).
  if (fakecuda::RaceDetector* race = st->race()) race->OnHostWaited(id, st->streams().next_seq());
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamQuery");
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) try {
  FAKECUDA_ENTER(cuStreamSynchronize)
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  if (CUresult r = fakecuda::CaptureCheckStreamSync(st, s); r != CUDA_SUCCESS) return r;
  return st->SyncStream(s, 0);
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamSynchronize");
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) try {
  FAKECUDA_ENTER(cuStreamWaitEvent)
  if (Flags != CU_EVENT_WAIT_DEFAULT && Flags != CU_EVENT_WAIT_EXTERNAL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  Event* e = st->FindEvent(hEvent);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureWaitEvent(st, s, e, Flags, &r)) return r;
  Op op;
  op.what = "cuStreamWaitEvent";
  // Waits for the event's most recent record as of this call; never recorded: no wait.
  if (e->stream_id != 0 && !e->complete) op.deps.emplace_back(e->stream_id, e->seq);
  // Even a completed record orders this stream after it (memory pools' event dependencies).
  if (e->stream_id != 0) {
    s->waited[e->stream_id] = std::max(s->waited[e->stream_id], e->seq);
    for (const auto& [sid, seq] : e->waited) {  // transitively (Event::waited)
      if (sid != s->id) s->waited[sid] = std::max(s->waited[sid], seq);
    }
  }
  op.after_stream = e->stream_id;  // the order itself, even when no wait is needed
  op.after_seq = e->seq;
  st->Enqueue(s, std::move(op));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWaitEvent");
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int* flags) try {
  FAKECUDA_ENTER(cuStreamGetFlags)
  if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  *flags = s->flags;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetFlags");
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int* priority) try {
  FAKECUDA_ENTER(cuStreamGetPriority)
  if (priority == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  *priority = s->priority;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetPriority");
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext* pctx) try {
  FAKECUDA_ENTER(cuStreamGetCtx)
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  *pctx = fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, s->ctx_id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetCtx");
}

// CUDA 12.5's form (cuGetProcAddress hands it out for "cuStreamGetCtx" from 12050): the stream's
// context in *pCtx and its green context in *pGreenCtx (NULL for a regular context). For a stream
// of a green context (fakecuda/internal/resource_model.h), cuda.h says *pCtx is the primary
// context of its device. Either output may be NULL, not both. Counted under the plain name.
CUresult CUDAAPI cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) try {
  FAKECUDA_ENTER(cuStreamGetCtx)
  if (pCtx == nullptr && pGreenCtx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  const fakecuda::GreenContext* green = st->resources().GreenOfContext(s->ctx_id);
  if (pCtx != nullptr) {
    const std::uint64_t id =
        green != nullptr ? st->device(green->device).primary_ctx_id : s->ctx_id;
    *pCtx = fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, id);
  }
  if (pGreenCtx != nullptr) {
    *pGreenCtx = green != nullptr ? fakecuda::ResourceModel::GreenHandle(green->id) : nullptr;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetCtx_v2");
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) try {
  FAKECUDA_ENTER(cuLaunchHostFunc)
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureHostFunction(st, s, fn, userData, &r)) return r;
  Op op;
  op.what = "cuLaunchHostFunc";
  op.kind = fakecuda::OpKind::kHostFunction;
  op.cost_us = DriverState::kHostFunctionCostUs;
  op.body = [fn, userData] {
    fn(userData);
    return CUDA_SUCCESS;
  };
  st->Enqueue(s, std::move(op));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunchHostFunc");
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void* userData,
                                     unsigned int flags) try {
  FAKECUDA_ENTER(cuStreamAddCallback)
  if (callback == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureRefuse(st, s, &r)) return r;  // modelling
  Op op;
  op.what = "cuStreamAddCallback";
  op.kind = fakecuda::OpKind::kHostFunction;
  op.cost_us = DriverState::kHostFunctionCostUs;
  op.body = [callback, userData, hStream] {
    callback(hStream, CUDA_SUCCESS, userData);
    return CUDA_SUCCESS;
  };
  st->Enqueue(s, std::move(op));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamAddCallback");
}

// Stream capture: fakecuda/entry/capture_entry.cc.

// --- events ---

CUresult CUDAAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) try {
  FAKECUDA_ENTER(cuEventCreate)
  if (phEvent == nullptr) return CUDA_ERROR_INVALID_VALUE;
  constexpr unsigned kKnown = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (Flags & ~kKnown) return CUDA_ERROR_INVALID_VALUE;
  if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  Event* e = st->streams().AddEvent(st->NewId(), ctx->id, Flags);
  *phEvent = fakecuda::EncodeHandle<CUevent>(HandleKind::kEvent, e->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuEventCreate");
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent) try {
  FAKECUDA_ENTER(cuEventDestroy)
  Event* e = st->FindEvent(hEvent);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // A pending record still completes; nothing refers to the event by pointer.
  st->streams().EraseEvent(e->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuEventDestroy");
}


CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) try {
  FAKECUDA_ENTER(cuEventRecord)
  return fakecuda::RecordEvent(st, hEvent, hStream);
} catch (...) {
  return ::fakecuda::EntryFailed("cuEventRecord");
}

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) try {
  FAKECUDA_ENTER(cuEventRecordWithFlags)
  if (flags != CU_EVENT_RECORD_DEFAULT && flags != CU_EVENT_RECORD_EXTERNAL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return fakecuda::RecordEvent(st, hEvent, hStream);
} catch (...) {
  return ::fakecuda::EntryFailed("cuEventRecordWithFlags");
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent) try {
  FAKECUDA_ENTER(cuEventQuery)
  Event* e = st->FindEvent(hEvent);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = fakecuda::CaptureCheckEventSync(st, e); r != CUDA_SUCCESS) return r;
  // A query that answers CUDA_SUCCESS is a synchronization (the race detector's order).
  const std::uint64_t record_stream = e->stream_id, record_seq = e->seq;
  auto observed = [st, record_stream, record_seq]() CUHAL_REQUIRES(st->mu) {
    if (fakecuda::RaceDetector* race = st->race()) race->OnHostWaited(record_stream, record_seq);
    return CUDA_SUCCESS;
  };
  if (e->complete) return observed();
  std::uint64_t id = e->id;
  Stream* s = st->FindStream(e->stream_id);
  if (s == nullptr) return observed();
  st->PollStream(s, e->seq);
  e = st->FindEvent(hEvent);
  return (e == nullptr || e->id != id || e->complete) ? observed() : CUDA_ERROR_NOT_READY;
} catch (...) {
  return ::fakecuda::EntryFailed("cuEventQuery");
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) try {
  FAKECUDA_ENTER(cuEventSynchronize)
  Event* e = st->FindEvent(hEvent);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = fakecuda::CaptureCheckEventSync(st, e); r != CUDA_SUCCESS) return r;
  if (e->complete) {
    st->NoteSynchronized(e->stream_id, e->seq);  // still a synchronization (pool releases)
    return CUDA_SUCCESS;
  }
  Stream* s = st->FindStream(e->stream_id);
  if (s == nullptr) return CUDA_SUCCESS;
  return st->SyncStream(s, e->seq);
} catch (...) {
  return ::fakecuda::EntryFailed("cuEventSynchronize");
}

CUresult CUDAAPI cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) try {
  FAKECUDA_ENTER(cuEventElapsedTime)
  // A NULL output is CUDA_ERROR_INVALID_HANDLE on the real driver (measured on the H200).
  if (pMilliseconds == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  Event* a = st->FindEvent(hStart);
  Event* b = st->FindEvent(hEnd);
  if (a == nullptr || b == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if ((a->flags & CU_EVENT_DISABLE_TIMING) || (b->flags & CU_EVENT_DISABLE_TIMING)) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (a->stream_id == 0 || b->stream_id == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (!a->complete || !b->complete) return CUDA_ERROR_NOT_READY;
  *pMilliseconds = static_cast<float>((b->time_us - a->time_us) / 1000.0);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuEventElapsedTime");
}

}  // extern "C"
