// Copyright 2026 The cuhal Authors.
// Entry points: stream and context queries and settings that had been generated fallbacks:
// cuStreamGetId, cuStreamGetDevice, the stream attributes (cuStreamGetAttribute,
// cuStreamSetAttribute, cuStreamCopyAttributes), the stream memory operations
// (cuStreamWaitValue32/64_v2, cuStreamWriteValue32/64_v2, cuStreamBatchMemOp_v2 and their older
// ABIs), cuStreamAttachMemAsync, and the context calls cuCtxGetId, cuCtxSetFlags,
// cuCtxRecordEvent, cuCtxWaitEvent, cuCtxGet/SetCacheConfig, cuCtxGet/SetSharedMemConfig,
// cuCtxResetPersistingL2Cache, cuCtxGetExecAffinity, cuCtxAttach and cuCtxDetach. Stream
// attributes and cache preferences are stored on the Stream and Context (stream_table.h,
// context_table.h) and have no other effect. A wait-value op is stream work whose readiness reads
// the watched word (Op::ready), so a stream blocked on host-mapped memory is released when the
// host writes it, as on the GPU; a context-wide event record is a record on a short-lived
// internal stream that waits for every stream of the context; a context-wide wait is a
// dependency every later op of the context gets (Context::waits). The answers are those
// ci/gpu-probes/streamctx_probe.cc measured on an H100 (driver 580.159.04, 2026-12-06;
// docs/driver_facts.md, "Streams and contexts: ids, attributes, memory operations"); where the
// real driver crashed (garbage handles, destroyed events, NULL value pointers) the fake answers an
// error instead; what the probe did not measure says UNMEASURED.
#include <algorithm>
#include <cstring>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/capture_model.h"
#include "fakecuda/internal/graph_model.h"
// After graph_model.h: its kRead would otherwise shadow copy_resolve.h's (-Wshadow).
#include "fakecuda/internal/copy_resolve.h"

using fakecuda::Context;
using fakecuda::DriverState;
using fakecuda::Event;
using fakecuda::HandleKind;
using fakecuda::Op;
using fakecuda::Stream;

namespace fakecuda {

CUresult StaleStreamError(CUstream handle, CUresult err) {
  if (err == CUDA_ERROR_INVALID_HANDLE && DecodeHandle(HandleKind::kStream, handle) != 0) {
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  }
  return err;
}

namespace {

// ResolveStream with StaleStreamError's answer for a destroyed stream.
Stream* Resolve(DriverState* st, CUstream h, CUresult* err) CUHAL_REQUIRES(st->mu) {
  Stream* s = st->ResolveStream(h, err);
  if (s == nullptr) *err = StaleStreamError(h, *err);
  return s;
}

// The stream priority range of every fake device (stream_entry.cc's, as on the H200).
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;
// cuStreamBatchMemOp's limit on the count (cuda.h: "must be less than 256"; measured: 255
// works, 256 is CUDA_ERROR_INVALID_VALUE).
constexpr unsigned kMaxBatchOps = 255;
// Hopper's memory synchronization domains (CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT).
constexpr unsigned kMemSyncDomains = 4;

template <typename E>
int Bits(E e) {
  int v = 0;
  std::memcpy(&v, &e, sizeof v < sizeof e ? sizeof v : sizeof e);
  return v;
}

// The context a `CUcontext` argument names: NULL is the current one (CurrentContextOrError's
// errors); a handle the fake gave out for a context that is gone is
// CUDA_ERROR_CONTEXT_IS_DESTROYED, anything else not live CUDA_ERROR_INVALID_CONTEXT.
CUresult ContextArg(DriverState* st, CUcontext handle, Context** out) CUHAL_REQUIRES(st->mu) {
  if (handle == nullptr) return CurrentContextOrError(st, out);
  Context* c = st->FindContext(handle);
  if (c == nullptr) {
    return DecodeHandle(HandleKind::kContext, handle) != 0 ? CUDA_ERROR_CONTEXT_IS_DESTROYED
                                                            : CUDA_ERROR_INVALID_CONTEXT;
  }
  *out = c;
  return CUDA_SUCCESS;
}

// --- stream attributes ---

CUresult GetAttribute(const Stream& s, int attr, CUstreamAttrValue* v) {
  switch (attr) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      v->accessPolicyWindow = s.access_policy;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      v->syncPolicy = static_cast<CUsynchronizationPolicy>(s.sync_policy);
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      v->priority = s.priority;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      v->memSyncDomainMap = s.mem_sync_domain_map;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      v->memSyncDomain = static_cast<CUlaunchMemSyncDomain>(s.mem_sync_domain);
      return CUDA_SUCCESS;
    default:  // launch-only attributes and unknown ids (measured: 0, 2, 4-7, 11-17, 99)
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult SetAttribute(DriverState* st, Stream* s, int attr, const CUstreamAttrValue& v)
    CUHAL_REQUIRES(st->mu) {
  switch (attr) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: {
      const CUaccessPolicyWindow& w = v.accessPolicyWindow;
      const Context* ctx = st->contexts().Find(s->ctx_id);
      const int device = ctx != nullptr ? ctx->device : 0;
      const auto max_window = static_cast<std::size_t>(
          st->profile(device).Attribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE));
      // Measured (H100, streamctx_probe "attr:set"): a hit ratio outside [0, 1], a PERSISTING
      // miss property and more bytes than the device's maximum window are refused; any hit
      // property (3 too), other miss properties (3 too), 0 bytes and a NULL base are accepted.
      if (!(w.hitRatio >= 0.0f && w.hitRatio <= 1.0f)) return CUDA_ERROR_INVALID_VALUE;
      if (Bits(w.missProp) == CU_ACCESS_PROPERTY_PERSISTING) return CUDA_ERROR_INVALID_VALUE;
      if (w.num_bytes > max_window) return CUDA_ERROR_INVALID_VALUE;
      s->access_policy = w;
      return CUDA_SUCCESS;
    }
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: {
      const int p = Bits(v.syncPolicy);
      if (p < CU_SYNC_POLICY_AUTO || p > CU_SYNC_POLICY_BLOCKING_SYNC) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      s->sync_policy = p;
      return CUDA_SUCCESS;
    }
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      // Measured: clamped to the range, as cuStreamCreateWithPriority does.
      s->priority = std::clamp(v.priority, kGreatestPriority, kLeastPriority);
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      if (v.memSyncDomainMap.default_ >= kMemSyncDomains ||
          v.memSyncDomainMap.remote >= kMemSyncDomains) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      s->mem_sync_domain_map = v.memSyncDomainMap;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: {
      const int d = Bits(v.memSyncDomain);
      if (d != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT && d != CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      s->mem_sync_domain = d;
      return CUDA_SUCCESS;
    }
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// --- stream memory operations ---

// One validated memory operation: a write or a wait of 4 or 8 bytes at `data`, or a barrier /
// flush (no data).
struct MemOp {
  enum Kind { kWrite, kWait, kNothing } kind = kNothing;
  std::byte* data = nullptr;
  unsigned size = 4;
  std::uint64_t value = 0;
  unsigned condition = 0;  // waits: CU_STREAM_WAIT_VALUE_{GEQ,EQ,AND,NOR}
};

std::uint64_t Load(const std::byte* p, unsigned size) {
  if (size == 4) {
    return __atomic_load_n(reinterpret_cast<const std::uint32_t*>(p), __ATOMIC_ACQUIRE);
  }
  return __atomic_load_n(reinterpret_cast<const std::uint64_t*>(p), __ATOMIC_ACQUIRE);
}

void Store(std::byte* p, unsigned size, std::uint64_t v) {
  if (size == 4) {
    __atomic_store_n(reinterpret_cast<std::uint32_t*>(p), static_cast<std::uint32_t>(v),
                     __ATOMIC_RELEASE);
  } else {
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(p), v, __ATOMIC_RELEASE);
  }
}

// cuda.h's conditions: GEQ is (int32_t)(*addr - value) >= 0 (int64_t for 64 bits).
bool Satisfied(const MemOp& m) {
  const std::uint64_t cur = Load(m.data, m.size);
  switch (m.condition) {
    case CU_STREAM_WAIT_VALUE_GEQ:
      return m.size == 4 ? static_cast<std::int32_t>(static_cast<std::uint32_t>(cur - m.value)) >= 0
                         : static_cast<std::int64_t>(cur - m.value) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ:
      return cur == m.value;
    case CU_STREAM_WAIT_VALUE_AND:
      return (cur & m.value) != 0;
    default: {  // NOR
      const std::uint64_t mask = m.size == 4 ? 0xffffffffull : ~std::uint64_t{0};
      return (~(cur | m.value) & mask) != 0;
    }
  }
}

// Validates a write (`wait` false) or wait of `size` bytes at `addr`. Measured (streamctx_probe
// "memops:*", "addr:*"): bad flags, unaligned, NULL, unknown, freed, past-the-end, pageable host
// and managed addresses are CUDA_ERROR_INVALID_VALUE; the FLUSH flag CUDA_ERROR_NOT_SUPPORTED
// (CAN_FLUSH_REMOTE_WRITES 0). UNMEASURED: the order among them.
CUresult CheckValueOp(DriverState* st, int device, bool wait, std::uintptr_t addr, unsigned size,
                      std::uint64_t value, unsigned flags, MemOp* out) CUHAL_REQUIRES(st->mu) {
  const DeviceProfile& profile = st->profile(device);
  if (wait) {
    const unsigned condition = flags & ~unsigned{CU_STREAM_WAIT_VALUE_FLUSH};
    if (condition > CU_STREAM_WAIT_VALUE_NOR) return CUDA_ERROR_INVALID_VALUE;
    if (condition == CU_STREAM_WAIT_VALUE_NOR &&
        profile.Attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR) == 0) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if ((flags & CU_STREAM_WAIT_VALUE_FLUSH) != 0 &&
        profile.Attribute(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES) == 0) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    out->kind = MemOp::kWait;
    out->condition = condition;
  } else {
    // Measured: even CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER is CUDA_ERROR_INVALID_VALUE.
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    out->kind = MemOp::kWrite;
  }
  if (size == 8 && profile.Attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) == 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (addr == 0 || addr % size != 0) return CUDA_ERROR_INVALID_VALUE;
  Resolved r;
  if (CUresult e = ResolveDevice(st, addr, size, &r, wait ? kRead : kWrite); e != CUDA_SUCCESS) {
    return e;
  }
  // Measured: managed memory is refused (device, pinned, mapped and registered memory work).
  if (r.allocation != nullptr && r.allocation->type == MemoryType::kManaged) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  out->data = r.data;
  out->size = size;
  out->value = size == 4 ? (value & 0xffffffffull) : value;
  return CUDA_SUCCESS;
}

// Validates one cuStreamBatchMemOp element.
CUresult CheckBatchOp(DriverState* st, int device, const CUstreamBatchMemOpParams& p, MemOp* out)
    CUHAL_REQUIRES(st->mu) {
  switch (Bits(p.operation)) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      return CheckValueOp(st, device, true, p.waitValue.address, 4, p.waitValue.value,
                          p.waitValue.flags, out);
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      return CheckValueOp(st, device, true, p.waitValue.address, 8, p.waitValue.value64,
                          p.waitValue.flags, out);
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      return CheckValueOp(st, device, false, p.writeValue.address, 4, p.writeValue.value,
                          p.writeValue.flags, out);
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      return CheckValueOp(st, device, false, p.writeValue.address, 8, p.writeValue.value64,
                          p.writeValue.flags, out);
    case CU_STREAM_MEM_OP_BARRIER:
      if (p.memoryBarrier.flags != CU_STREAM_MEMORY_BARRIER_TYPE_SYS &&
          p.memoryBarrier.flags != CU_STREAM_MEMORY_BARRIER_TYPE_GPU) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      out->kind = MemOp::kNothing;
      return CUDA_SUCCESS;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      // Measured: not supported (CAN_FLUSH_REMOTE_WRITES 0) is answered before the flags.
      if (st->profile(device).Attribute(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES) == 0) {
        return CUDA_ERROR_NOT_SUPPORTED;
      }
      if (p.flushRemoteWrites.flags != 0) return CUDA_ERROR_INVALID_VALUE;
      out->kind = MemOp::kNothing;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// Queues validated operations on `s`, in order (a wait is an op that is ready once its
// condition holds: the scheduler looks again at every synchronization tick).
void EnqueueMemOps(DriverState* st, Stream* s, const std::vector<MemOp>& ops, const char* what)
    CUHAL_REQUIRES(st->mu) {
  const std::uint64_t id = s->id;
  for (const MemOp& m : ops) {
    Stream* cur = st->FindStream(id);
    if (cur == nullptr) return;  // cannot happen: a stream with queued work is not reaped
    Op op;
    op.what = what;
    op.cost_us = 2.0;  // UNMEASURED
    if (m.kind == MemOp::kWrite) {
      op.body = [m] {
        Store(m.data, m.size, m.value);
        return CUDA_SUCCESS;
      };
    } else if (m.kind == MemOp::kWait) {
      op.ready = [m] { return Satisfied(m); };
      op.watches_memory = true;
      op.body = [] { return CUDA_SUCCESS; };
    } else {
      op.body = [] { return CUDA_SUCCESS; };
    }
    st->Enqueue(cur, std::move(op));
  }
}

// The device of stream `s`'s context.
int DeviceOf(DriverState* st, const Stream& s) CUHAL_REQUIRES(st->mu) {
  const Context* c = st->contexts().Find(s.ctx_id);
  return c != nullptr ? c->device : 0;
}

CUresult ValueOp(DriverState* st, CUstream h, bool wait, CUdeviceptr addr, unsigned size,
                 std::uint64_t value, unsigned flags, const char* what) CUHAL_REQUIRES(st->mu) {
  CUresult err;
  Stream* s = Resolve(st, h, &err);
  if (s == nullptr) return err;
  std::vector<MemOp> ops(1);
  if (CUresult e = CheckValueOp(st, DeviceOf(st, *s), wait, addr, size, value, flags, &ops[0]);
      e != CUDA_SUCCESS) {
    return e;
  }
  // Not modelled: the real driver captures each call as a CU_GRAPH_NODE_TYPE_BATCH_MEM_OP node
  // of one operation (measured, streamctx_probe "memops:capture"); the fake has no such node type
  // yet and refuses (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, invalidating the capture).
  if (CUresult r = CUDA_SUCCESS; CaptureRefuse(st, s, &r)) return r;
  if (CUresult sticky = st->contexts().StickyError(s->ctx_id); sticky != CUDA_SUCCESS) {
    return sticky;
  }
  EnqueueMemOps(st, s, ops, what);
  return CUDA_SUCCESS;
}

CUresult BatchMemOp(DriverState* st, CUstream h, unsigned count, CUstreamBatchMemOpParams* params,
                    unsigned flags) CUHAL_REQUIRES(st->mu) {
  CUresult err;
  Stream* s = Resolve(st, h, &err);
  if (s == nullptr) return err;
  if (flags != 0 || count > kMaxBatchOps) return CUDA_ERROR_INVALID_VALUE;
  if (count == 0) return CUDA_SUCCESS;  // measured, also with a NULL array
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const int device = DeviceOf(st, *s);
  std::vector<MemOp> ops(count);
  for (unsigned i = 0; i < count; ++i) {
    if (CUresult e = CheckBatchOp(st, device, params[i], &ops[i]); e != CUDA_SUCCESS) return e;
  }
  if (CUresult r = CUDA_SUCCESS; CaptureRefuse(st, s, &r)) return r;
  if (CUresult sticky = st->contexts().StickyError(s->ctx_id); sticky != CUDA_SUCCESS) {
    return sticky;
  }
  EnqueueMemOps(st, s, ops, "cuStreamBatchMemOp");
  return CUDA_SUCCESS;
}

// --- context-wide events ---

// Whether a stream of context `ctx_id` takes part in a capture; if so the captures of the
// context are invalidated (cuda.h: cuCtxRecordEvent / cuCtxWaitEvent "invalidate all the
// conflicting captures").
bool InvalidateCapturesOf(DriverState* st, std::uint64_t ctx_id) CUHAL_REQUIRES(st->mu) {
  CaptureModel& cm = st->graphs().captures();
  bool any = false;
  for (const auto& [id, c] : cm.all()) {
    if (c.ctx_id == ctx_id) {
      cm.Find(id)->invalidated = true;
      any = true;
    }
  }
  return any;
}

// cuCtxRecordEvent: the event completes once every stream of `ctx` has completed the work queued
// so far. A record op on a new internal stream (destroyed at once, reaped when it drains) that
// depends on each such stream's last op.
CUresult RecordContextEvent(DriverState* st, Context* ctx, Event* e) CUHAL_REQUIRES(st->mu) {
  Op op;
  op.what = "cuCtxRecordEvent";
  for (const auto& [id, other] : st->streams().streams()) {
    if (other->ctx_id == ctx->id && other->last_enqueued_seq > other->completed_seq) {
      op.deps.emplace_back(id, other->last_enqueued_seq);
    }
  }
  Stream* s = st->NewStream(ctx, CU_STREAM_NON_BLOCKING, 0, DriverState::kNoPublicId);
  s->destroyed = true;
  e->generation++;
  e->complete = false;
  e->stream_id = s->id;
  op.record_event_id = e->id;
  op.record_generation = e->generation;
  e->seq = st->streams().next_seq();
  e->waited.clear();
  for (const auto& [sid, seq] : op.deps) e->waited[sid] = std::max(e->waited[sid], seq);
  st->Enqueue(s, std::move(op));
  st->ReapStreams();
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

// --- ids and devices ---

CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long* streamId) try {
  FAKECUDA_ENTER(cuStreamGetId)
  if (streamId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = fakecuda::Resolve(st, hStream, &err);
  if (s == nullptr) return err;
  // Measured (H100, streamctx_probe "ids:stream"): ids of a counter of their own, increasing by
  // one per created stream, with the ids contexts take for their internal streams in between
  // (Stream::public_id, context_entry.cc's MakeContext); the legacy stream's is one of its
  // context's; a per-thread stream's is large.
  if (s->legacy_default) {
    const Context* c = st->contexts().Find(s->ctx_id);
    *streamId = c != nullptr ? c->legacy_public_id : 0;
  } else {
    *streamId = s->public_id;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetId");
}

CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice* device) try {
  FAKECUDA_ENTER(cuStreamGetDevice)
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = fakecuda::Resolve(st, hStream, &err);
  if (s == nullptr) return err;
  *device = fakecuda::DeviceOf(st, *s);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetDevice");
}

CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) try {
  FAKECUDA_ENTER(cuCtxGetId)
  // Measured: a NULL out-pointer is CUDA_ERROR_INVALID_VALUE before the context is looked at.
  if (ctxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* c = nullptr;
  if (CUresult e = fakecuda::ContextArg(st, ctx, &c); e != CUDA_SUCCESS) return e;
  if (ctxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ctxId = c->public_id;  // measured: 1, 2, 3 ... per context made (Context::public_id)
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetId");
}

// --- stream attributes ---

CUresult CUDAAPI cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr,
                                      CUstreamAttrValue* value_out) try {
  FAKECUDA_ENTER(cuStreamGetAttribute)
  // Measured: the stream is checked first (no context: CUDA_ERROR_INVALID_CONTEXT); a NULL value
  // then crashes the real driver (the fake answers CUDA_ERROR_INVALID_VALUE).
  CUresult err;
  Stream* s = fakecuda::Resolve(st, hStream, &err);
  if (s == nullptr) return err;
  if (value_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fakecuda::GetAttribute(*s, fakecuda::Bits(attr), value_out);
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetAttribute");
}

CUresult CUDAAPI cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr,
                                      const CUstreamAttrValue* value) try {
  FAKECUDA_ENTER(cuStreamSetAttribute)
  CUresult err;  // the stream first, as cuStreamGetAttribute
  Stream* s = fakecuda::Resolve(st, hStream, &err);
  if (s == nullptr) return err;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fakecuda::SetAttribute(st, s, fakecuda::Bits(attr), *value);
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamSetAttribute");
}

CUresult CUDAAPI cuStreamCopyAttributes(CUstream dst, CUstream src) try {
  FAKECUDA_ENTER(cuStreamCopyAttributes)
  CUresult err;
  Stream* d = fakecuda::Resolve(st, dst, &err);
  if (d == nullptr) return err;
  Stream* s = fakecuda::Resolve(st, src, &err);
  if (s == nullptr) return err;
  // Measured: streams of two contexts are CUDA_ERROR_INVALID_VALUE.
  if (d->ctx_id != s->ctx_id) return CUDA_ERROR_INVALID_VALUE;
  d->access_policy = s->access_policy;
  d->sync_policy = s->sync_policy;
  d->priority = s->priority;
  d->mem_sync_domain_map = s->mem_sync_domain_map;
  d->mem_sync_domain = s->mem_sync_domain;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamCopyAttributes");
}

// --- stream memory operations ---

CUresult CUDAAPI cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                     unsigned int flags) try {
  FAKECUDA_ENTER(cuStreamWaitValue32)
  return fakecuda::ValueOp(st, stream, true, addr, 4, value, flags, "cuStreamWaitValue32");
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWaitValue32");
}

CUresult CUDAAPI cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                     unsigned int flags) try {
  FAKECUDA_ENTER(cuStreamWaitValue64)
  return fakecuda::ValueOp(st, stream, true, addr, 8, value, flags, "cuStreamWaitValue64");
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWaitValue64");
}

CUresult CUDAAPI cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                      unsigned int flags) try {
  FAKECUDA_ENTER(cuStreamWriteValue32)
  return fakecuda::ValueOp(st, stream, false, addr, 4, value, flags, "cuStreamWriteValue32");
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWriteValue32");
}

CUresult CUDAAPI cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                      unsigned int flags) try {
  FAKECUDA_ENTER(cuStreamWriteValue64)
  return fakecuda::ValueOp(st, stream, false, addr, 8, value, flags, "cuStreamWriteValue64");
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWriteValue64");
}

CUresult CUDAAPI cuStreamBatchMemOp(CUstream stream, unsigned int count,
                                    CUstreamBatchMemOpParams* paramArray, unsigned int flags) try {
  FAKECUDA_ENTER(cuStreamBatchMemOp)
  return fakecuda::BatchMemOp(st, stream, count, paramArray, flags);
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamBatchMemOp");
}

CUresult CUDAAPI cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length,
                                        unsigned int flags) try {
  FAKECUDA_ENTER(cuStreamAttachMemAsync)
  CUresult err;
  Stream* s = fakecuda::Resolve(st, hStream, &err);
  if (s == nullptr) return err;
  // Measured: GLOBAL, HOST and SINGLE on managed memory (allocated attached to the host too)
  // with a length of 0 or the allocation's size succeed; another length or an interior pointer is
  // CUDA_ERROR_INVALID_VALUE; flags 0 crashed the real driver. UNMEASURED (the probe's case
  // ended at that crash): other flags, SINGLE on the legacy stream, memory that is not managed
  // (all CUDA_ERROR_INVALID_VALUE here).
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST &&
      flags != CU_MEM_ATTACH_SINGLE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (flags == CU_MEM_ATTACH_SINGLE && s->legacy_default) return CUDA_ERROR_INVALID_VALUE;
  const fakecuda::Allocation* a = st->FindAllocation(dptr);
  if (a == nullptr || a->type != fakecuda::MemoryType::kManaged || a->base != dptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (length != 0 && length != a->size) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureRefuse(st, s, &r)) return r;
  // Visibility is not modelled: managed memory is always accessible to the host and the device.
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamAttachMemAsync");
}

// --- contexts ---

CUresult CUDAAPI cuCtxSetFlags(unsigned int flags) try {
  FAKECUDA_ENTER(cuCtxSetFlags)
  FAKECUDA_REQUIRE_CONTEXT()
  // Measured (H100, streamctx_probe "ctxflags"): the flags cuCtxCreate accepts (one scheduling
  // mode plus the optional bits; 0x3, 0x5, 0x7, 0x100 and up refused). MAP_HOST and the two
  // coredump bits are accepted but not kept (cuCtxGetFlags adds MAP_HOST for a primary context
  // only); cuDevicePrimaryCtxGetState shows the SYNC_MEMOPS bit of a primary context's flags
  // only (UNMEASURED: that it is cleared again by flags without it).
  constexpr unsigned kOptional = CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                                 CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE |
                                 CU_CTX_SYNC_MEMOPS;
  const unsigned sched = flags & CU_CTX_SCHED_MASK;
  if (sched == (CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD) || sched > CU_CTX_SCHED_BLOCKING_SYNC ||
      (flags & ~(CU_CTX_SCHED_MASK | kOptional)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  ctx->flags = flags & ~unsigned{CU_CTX_MAP_HOST | CU_CTX_COREDUMP_ENABLE |
                                 CU_CTX_USER_COREDUMP_ENABLE};
  if (ctx->primary) {
    unsigned& state = st->device(ctx->device).primary_flags;
    state = (state & ~unsigned{CU_CTX_SYNC_MEMOPS}) | (flags & CU_CTX_SYNC_MEMOPS);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSetFlags");
}

// Measured: per context (a new context reads PREFER_NONE), the four values accepted and read back,
// others CUDA_ERROR_INVALID_VALUE; the context is checked before the pointer.
CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache* pconfig) try {
  FAKECUDA_ENTER(cuCtxGetCacheConfig)
  FAKECUDA_REQUIRE_CONTEXT()
  if (pconfig == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pconfig = static_cast<CUfunc_cache>(ctx->cache_config);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetCacheConfig");
}

CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config) try {
  FAKECUDA_ENTER(cuCtxSetCacheConfig)
  FAKECUDA_REQUIRE_CONTEXT()
  const int c = fakecuda::Bits(config);
  if (c < CU_FUNC_CACHE_PREFER_NONE || c > CU_FUNC_CACHE_PREFER_EQUAL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  ctx->cache_config = c;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSetCacheConfig");
}

CUresult CUDAAPI cuCtxGetSharedMemConfig(CUsharedconfig* pConfig) try {
  FAKECUDA_ENTER(cuCtxGetSharedMemConfig)
  FAKECUDA_REQUIRE_CONTEXT()
  if (pConfig == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pConfig = static_cast<CUsharedconfig>(ctx->shared_mem_config);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetSharedMemConfig");
}

CUresult CUDAAPI cuCtxSetSharedMemConfig(CUsharedconfig config) try {
  FAKECUDA_ENTER(cuCtxSetSharedMemConfig)
  FAKECUDA_REQUIRE_CONTEXT()
  const int c = fakecuda::Bits(config);
  if (c < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || c > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured: every valid setting is accepted and not kept (the bank size reads 4 bytes).
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxSetSharedMemConfig");
}

CUresult CUDAAPI cuCtxResetPersistingL2Cache(void) try {
  FAKECUDA_ENTER(cuCtxResetPersistingL2Cache)
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;  // the fake has no L2 cache
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxResetPersistingL2Cache");
}

CUresult CUDAAPI cuCtxGetExecAffinity(CUexecAffinityParam* pExecAffinity,
                                      CUexecAffinityType type) try {
  FAKECUDA_ENTER(cuCtxGetExecAffinity)
  FAKECUDA_REQUIRE_CONTEXT()
  if (pExecAffinity == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (fakecuda::Bits(type) != CU_EXEC_AFFINITY_TYPE_SM_COUNT) {
    return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;  // measured (TYPE_MAX and 7)
  }
  // Contexts with limited SMs are not modelled (cuCtxCreate refuses them): every context has
  // all of its device's SMs.
  pExecAffinity->type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
  pExecAffinity->param.smCount.val = static_cast<unsigned>(
      st->profile(ctx->device).Attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetExecAffinity");
}

// Measured (H100, streamctx_probe "attach"): cuCtxAttach gives the current context and counts
// an attachment; cuCtxDetach needs the current context and, with no attachment left, destroys a
// created context as cuCtxDestroy does (popping it). The context is checked first (none current:
// CUDA_ERROR_INVALID_CONTEXT), then the pointer and flags (CUDA_ERROR_INVALID_VALUE).
// UNMEASURED: a detach of a primary context with no attachment left (accepted, nothing happens).
CUresult CUDAAPI cuCtxAttach(CUcontext* pctx, unsigned int flags) try {
  FAKECUDA_ENTER(cuCtxAttach)
  FAKECUDA_REQUIRE_CONTEXT()
  if (pctx == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  ++ctx->attach_count;
  *pctx = fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, ctx->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxAttach");
}

CUresult CUDAAPI cuCtxDetach(CUcontext ctx) try {
  {
    FAKECUDA_ENTER(cuCtxDetach)
    FAKECUDA_REFUSE_IN_USER_WORK()
    Context* cur = st->CurrentContext();
    Context* c = st->FindContext(ctx);
    if (c == nullptr || c != cur) return CUDA_ERROR_INVALID_CONTEXT;
    if (c->attach_count > 0) {
      --c->attach_count;
      return CUDA_SUCCESS;
    }
    if (c->primary) return CUDA_SUCCESS;
  }
  // The last detach of a created context: cuCtxDestroy (counted as its call too).
  return cuCtxDestroy(ctx);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxDetach");
}

CUresult CUDAAPI cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent) try {
  FAKECUDA_ENTER(cuCtxRecordEvent)
  Context* c = nullptr;
  if (hCtx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;  // measured
  if (CUresult e = fakecuda::ContextArg(st, hCtx, &c); e != CUDA_SUCCESS) return e;
  Event* e = st->FindEvent(hEvent);
  // Measured: an event of another context is CUDA_ERROR_INVALID_HANDLE (cuCtxWaitEvent takes
  // one); a destroyed event crashes the real driver (the fake: INVALID_HANDLE).
  if (e == nullptr || e->ctx_id != c->id) return CUDA_ERROR_INVALID_HANDLE;
  if (fakecuda::InvalidateCapturesOf(st, c->id)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  st->graphs().captures().ForgetEvent(e->id);
  return fakecuda::RecordContextEvent(st, c, e);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxRecordEvent");
}

CUresult CUDAAPI cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent) try {
  FAKECUDA_ENTER(cuCtxWaitEvent)
  Context* c = nullptr;
  if (hCtx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;  // measured
  if (CUresult e = fakecuda::ContextArg(st, hCtx, &c); e != CUDA_SUCCESS) return e;
  Event* e = st->FindEvent(hEvent);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  fakecuda::CaptureModel& cm = st->graphs().captures();
  if (const fakecuda::CapturedEvent* ce = cm.OfEvent(e->id); ce != nullptr) {
    if (fakecuda::CaptureSequence* seq = cm.Find(ce->capture_id)) seq->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (fakecuda::InvalidateCapturesOf(st, c->id)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  // Never recorded, or its record has completed: nothing to wait for.
  if (e->stream_id != 0 && !e->complete && !st->DepSatisfied(e->stream_id, e->seq)) {
    c->waits.emplace_back(e->stream_id, e->seq);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxWaitEvent");
}

// The older ABIs of the memory operations (CUDA 8.0's; cuda.h maps the names to _v2): not
// supported on this device (CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 is 0), measured on the
// H100 for valid arguments (streamctx_probe "ptsz"). Counted under the plain names.
CUresult CUDAAPI FakecudaStreamWaitValue32V1(CUstream, CUdeviceptr, cuuint32_t, unsigned int)
    __asm__("cuStreamWaitValue32");
CUresult CUDAAPI FakecudaStreamWaitValue64V1(CUstream, CUdeviceptr, cuuint64_t, unsigned int)
    __asm__("cuStreamWaitValue64");
CUresult CUDAAPI FakecudaStreamWriteValue32V1(CUstream, CUdeviceptr, cuuint32_t, unsigned int)
    __asm__("cuStreamWriteValue32");
CUresult CUDAAPI FakecudaStreamWriteValue64V1(CUstream, CUdeviceptr, cuuint64_t, unsigned int)
    __asm__("cuStreamWriteValue64");
CUresult CUDAAPI FakecudaStreamBatchMemOpV1(CUstream, unsigned int, CUstreamBatchMemOpParams*,
                                            unsigned int) __asm__("cuStreamBatchMemOp");

CUresult CUDAAPI FakecudaStreamWaitValue32V1(CUstream, CUdeviceptr, cuuint32_t, unsigned int) try {
  FAKECUDA_ENTER(cuStreamWaitValue32)
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWaitValue32");
}
CUresult CUDAAPI FakecudaStreamWaitValue64V1(CUstream, CUdeviceptr, cuuint64_t, unsigned int) try {
  FAKECUDA_ENTER(cuStreamWaitValue64)
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWaitValue64");
}
CUresult CUDAAPI FakecudaStreamWriteValue32V1(CUstream, CUdeviceptr, cuuint32_t,
                                              unsigned int) try {
  FAKECUDA_ENTER(cuStreamWriteValue32)
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWriteValue32");
}
CUresult CUDAAPI FakecudaStreamWriteValue64V1(CUstream, CUdeviceptr, cuuint64_t,
                                              unsigned int) try {
  FAKECUDA_ENTER(cuStreamWriteValue64)
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamWriteValue64");
}
CUresult CUDAAPI FakecudaStreamBatchMemOpV1(CUstream, unsigned int, CUstreamBatchMemOpParams*,
                                            unsigned int) try {
  FAKECUDA_ENTER(cuStreamBatchMemOp)
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamBatchMemOp");
}

}  // extern "C"
