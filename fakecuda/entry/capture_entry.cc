// Copyright 2026 The cuhal Authors.
// Entry points: stream capture (cuStreamBeginCapture, cuStreamEndCapture, cuStreamIsCapturing,
// cuStreamGetCaptureInfo in its three ABIs, cuThreadExchangeStreamCaptureMode), and the capture
// hooks the other entry points call (fakecuda/entry/capture_hooks.h).
//
// The model, measured on the H200 (ci/gpu-probes/results/2026-12-03-probe-graph.txt;
// docs/driver_facts.md, "Stream capture and graphs"):
//  * Work enqueued on a capturing stream becomes a node of the capture's graph depending on the
//    stream's capture dependencies, and then the stream's only dependency. Event records make
//    the event a captured event (no node); a stream that waits on it joins the capture (fork) or
//    merges its dependencies (join). cuEventRecord/cuStreamWaitEvent make no nodes.
//  * Illegal in every mode, from any thread, and invalidating the capture: synchronizing or
//    querying a capturing stream (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), synchronizing or
//    querying an event recorded in the capture (CUDA_ERROR_CAPTURED_EVENT), synchronizing the
//    capture's context (UNSUPPORTED), launching a graph into it (UNSUPPORTED).
//  * "Potentially unsafe" calls (cuMemAlloc, cuMemFree, synchronizing or querying another
//    stream or an uncaptured event: refused with UNSUPPORTED; cuModuleLoadData: succeeds) are
//    prohibited, and invalidate the captures that prohibit them, on a thread whose own mode
//    (cuThreadExchangeStreamCaptureMode, default GLOBAL) is not RELAXED when it has a non-relaxed
//    capture of its own, or when its mode is GLOBAL and another thread has a GLOBAL capture.
//  * Work on an invalidated capture answers CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, and so does
//    cuStreamEndCapture, which ends it (graph NULL). Ending on a stream that joined
//    (not the origin) is CUDA_ERROR_STREAM_CAPTURE_UNMATCHED and invalidates; ending a GLOBAL or
//    THREAD_LOCAL capture on another thread is CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD and ends
//    it; a joined stream whose work the origin has not waited for makes End answer
//    CUDA_ERROR_STREAM_CAPTURE_UNJOINED and end it.
// Modelling choices (not measured; docs/driver_facts.md lists them): waiting in a capturing
// stream on an event not recorded in its capture is CUDA_ERROR_STREAM_CAPTURE_ISOLATION
// (CU_EVENT_WAIT_EXTERNAL: an event wait node); work on the legacy stream while a blocking stream
// of its context captures is CUDA_ERROR_STREAM_CAPTURE_IMPLICIT; both invalidate.
#include <algorithm>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/graph_internal.h"
#include "fakecuda/internal/capture_model.h"
#include "fakecuda/internal/graph_model.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/thread_state.h"

using fakecuda::CaptureModel;
using fakecuda::CaptureSequence;
using fakecuda::DriverState;
using fakecuda::GraphModel;
using fakecuda::GraphNode;
using fakecuda::HandleKind;
using fakecuda::Stream;
using fakecuda::StreamCapture;

namespace fakecuda {
namespace {

bool ValidMode(CUstreamCaptureMode mode) {
  const int m = EnumBits(mode);
  return m == CU_STREAM_CAPTURE_MODE_GLOBAL || m == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ||
         m == CU_STREAM_CAPTURE_MODE_RELAXED;
}

// Ends a capture and discards the graph it was building.
void Discard(DriverState* st, std::uint64_t capture_id) CUHAL_REQUIRES(st->mu) {
  st->graphs().DiscardCapture(capture_id);
}

enum class Route { kRun, kCapture, kDone };

// Where work for `s` goes: run it (kRun), add it to the capture (kCapture: *part, *seq set), or
// answer *result at once (kDone).
Route RouteWork(DriverState* st, const Stream* s, CUresult* result, StreamCapture** part,
                CaptureSequence** seq) CUHAL_REQUIRES(st->mu) {
  CaptureModel& cm = st->graphs().captures();
  if (cm.empty()) return Route::kRun;
  if (StreamCapture* p = cm.OfStream(s->id)) {
    CaptureSequence* c = cm.Find(p->capture_id);
    if (c == nullptr) return Route::kRun;  // cannot happen (capture_model.h invariant 1)
    if (c->invalidated) {
      *result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
      return Route::kDone;
    }
    *part = p;
    *seq = c;
    return Route::kCapture;
  }
  if (s->legacy_default) {
    // The legacy stream synchronizes with every blocking stream of its context: using it while
    // one of them captures would order captured work against real work (modelling choice).
    bool implicit = false;
    for (const auto& [id, c] : cm.all()) {
      if (c.ctx_id != s->ctx_id) continue;
      for (std::uint64_t member : c.streams) {
        const Stream* m = st->FindStream(member);
        if (m != nullptr && (m->flags & CU_STREAM_NON_BLOCKING) == 0) implicit = true;
      }
      if (implicit) {
        cm.Find(id)->invalidated = true;
        break;
      }
    }
    if (implicit) {
      *result = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
      return Route::kDone;
    }
  }
  return Route::kRun;
}

// Adds `node` to the capture after the stream's dependencies; it becomes the stream's only one.
CUresult AddCaptured(DriverState* st, StreamCapture* part, CaptureSequence* seq, GraphNode node)
    CUHAL_REQUIRES(st->mu) {
  GraphState* g = GraphById(st, seq->graph_id);
  if (g == nullptr) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  node.id = st->NewId();
  node.deps = part->deps;
  part->deps = {node.id};
  st->graphs().AddNode(*g, std::move(node));
  return CUDA_SUCCESS;
}

bool CaptureNode(DriverState* st, const Stream* s, GraphNode node, CUresult* result)
    CUHAL_REQUIRES(st->mu) {
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  switch (RouteWork(st, s, result, &part, &seq)) {
    case Route::kRun:
      return false;
    case Route::kDone:
      return true;
    case Route::kCapture:
      break;
  }
  *result = AddCaptured(st, part, seq, std::move(node));
  return true;
}

// The stream behind a handle, or null (the entry point's own path reports the error).
Stream* QuietResolve(DriverState* st, CUstream h) CUHAL_REQUIRES(st->mu) {
  CUresult ignored;
  return st->ResolveStream(h, &ignored);
}

// One side of a captured copy.
bool SideValid(DriverState* st, CUmemorytype type, std::uintptr_t ptr, std::size_t n)
    CUHAL_REQUIRES(st->mu) {
  if (ptr == 0) return false;
  const bool device_range = DeviceRangeKnown(st, ptr, n);
  if (EnumBits(type) == CU_MEMORYTYPE_DEVICE) return device_range;
  if (EnumBits(type) == CU_MEMORYTYPE_UNIFIED) return device_range || ptr < kGraphDeviceVaBase;
  // Host: known host allocations or pageable memory; never device memory.
  if (const Allocation* a = st->FindAllocation(ptr, 1)) {
    return a->type != MemoryType::kDevice && a->type != MemoryType::kPool &&
           n <= a->size - (ptr - a->base);
  }
  return ptr < kGraphDeviceVaBase;
}

// The captures a "potentially unsafe" call of this thread runs into (see the top of the file).
std::vector<std::uint64_t> ProhibitingCaptures(DriverState* st) CUHAL_REQUIRES(st->mu) {
  std::vector<std::uint64_t> out;
  CaptureModel& cm = st->graphs().captures();
  if (cm.empty()) return out;
  const int mode = EnumBits(ThreadCaptureMode(st->serial));
  if (mode == CU_STREAM_CAPTURE_MODE_RELAXED) return out;
  const std::uint64_t me = ThreadKey();
  for (const auto& [id, c] : cm.all()) {
    const int cmode = EnumBits(c.mode);
    const bool own = c.thread == me && cmode != CU_STREAM_CAPTURE_MODE_RELAXED;
    const bool global = mode == CU_STREAM_CAPTURE_MODE_GLOBAL && c.thread != me &&
                        cmode == CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (own || global) out.push_back(id);
  }
  return out;
}

// Whether every node of `deps` is `roots` or an ancestor of them in graph `g`.
bool Covered(GraphModel& graphs, const std::vector<std::uint64_t>& roots,
             const std::vector<std::uint64_t>& deps) {
  std::set<std::uint64_t> seen;
  std::vector<std::uint64_t> stack = roots;
  while (!stack.empty()) {
    std::uint64_t id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    for (std::uint64_t d : graphs.node(id).deps) stack.push_back(d);
  }
  return std::all_of(deps.begin(), deps.end(), [&](std::uint64_t d) { return seen.count(d) != 0; });
}

}  // namespace

// RouteWork for work queued on the stream handle `h` (kRun when nothing captures or `h` does not
// resolve: the entry point then runs the work and answers for the handle itself).
Route RouteHandle(DriverState* st, CUstream h, CUresult* result, StreamCapture** part,
                  CaptureSequence** seq) CUHAL_REQUIRES(st->mu) {
  if (st->graphs().captures().empty()) return Route::kRun;
  const Stream* s = QuietResolve(st, h);
  if (s == nullptr) return Route::kRun;
  return RouteWork(st, s, result, part, seq);
}

// --- hooks ---

bool CaptureKernel(DriverState* st, Stream* s, const FunctionState& f, const LaunchConfig& config,
                   std::vector<std::byte>* params, CUresult* result) {
  if (st->graphs().captures().empty()) return false;
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_KERNEL;
  node.function_id = f.id;
  node.config = config;
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  switch (RouteWork(st, s, result, &part, &seq)) {
    case Route::kRun:
      return false;
    case Route::kDone:
      return true;
    case Route::kCapture:
      break;
  }
  node.params = std::move(*params);
  *result = AddCaptured(st, part, seq, std::move(node));
  return true;
}

bool CaptureHostFunction(DriverState* st, Stream* s, CUhostFn fn, void* data, CUresult* result) {
  if (st->graphs().captures().empty()) return false;
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_HOST;
  node.host_fn = fn;
  node.host_data = data;
  return CaptureNode(st, s, std::move(node), result);
}

bool CaptureCopy(DriverState* st, CUstream h, CUmemorytype dst_type, std::uintptr_t dst,
                 CUmemorytype src_type, std::uintptr_t src, std::size_t bytes, CUresult* result) {
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  if (Route r = RouteHandle(st, h, result, &part, &seq); r != Route::kCapture) {
    return r == Route::kDone;
  }
  if (!SideValid(st, dst_type, dst, bytes) || !SideValid(st, src_type, src, bytes)) {
    *result = CUDA_ERROR_INVALID_VALUE;
    return true;
  }
  if (bytes == 0) {  // nothing to copy: no node (modelling choice)
    *result = CUDA_SUCCESS;
    return true;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  CUDA_MEMCPY3D& c = node.copy;
  c.srcMemoryType = src_type;
  c.dstMemoryType = dst_type;
  if (EnumBits(src_type) == CU_MEMORYTYPE_HOST) {
    c.srcHost = reinterpret_cast<const void*>(src);
  } else {
    c.srcDevice = src;
  }
  if (EnumBits(dst_type) == CU_MEMORYTYPE_HOST) {
    c.dstHost = reinterpret_cast<void*>(dst);
  } else {
    c.dstDevice = dst;
  }
  c.WidthInBytes = bytes;
  c.Height = 1;
  c.Depth = 1;
  *result = AddCaptured(st, part, seq, std::move(node));
  return true;
}

bool CaptureCopy3D(DriverState* st, CUstream h, const CUDA_MEMCPY3D& copy, CUresult* result) {
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  if (Route r = RouteHandle(st, h, result, &part, &seq); r != Route::kCapture) {
    return r == Route::kDone;
  }
  if (copy.WidthInBytes == 0 || copy.Height == 0 || copy.Depth == 0) {
    *result = CUDA_SUCCESS;  // nothing to copy: no node (as CaptureCopy)
    return true;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  node.copy = copy;
  *result = AddCaptured(st, part, seq, std::move(node));
  return true;
}

bool CaptureMemset(DriverState* st, CUstream h, std::uintptr_t dst, unsigned value,
                   std::size_t element_size, std::size_t count, CUresult* result, std::size_t pitch,
                   std::size_t height) {
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  if (Route r = RouteHandle(st, h, result, &part, &seq); r != Route::kCapture) {
    return r == Route::kDone;
  }
  const std::size_t row = count * element_size;
  const std::size_t span = row == 0 || height == 0 ? 0 : (height - 1) * pitch + row;
  if (dst % element_size != 0 || (height > 1 && pitch < row) || !DeviceRangeKnown(st, dst, span)) {
    *result = CUDA_ERROR_INVALID_VALUE;
    return true;
  }
  if (count == 0 || height == 0) {
    *result = CUDA_SUCCESS;
    return true;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEMSET;
  node.memset.dst = dst;
  node.memset.value = value;
  node.memset.elementSize = static_cast<unsigned>(element_size);
  node.memset.width = count;
  node.memset.pitch = height > 1 ? pitch : 0;
  node.memset.height = height;
  *result = AddCaptured(st, part, seq, std::move(node));
  return true;
}

bool CaptureRecordEvent(DriverState* st, Event* e, Stream* s, CUresult* result) {
  CaptureModel& cm = st->graphs().captures();
  if (cm.empty()) return false;
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  switch (RouteWork(st, s, result, &part, &seq)) {
    case Route::kRun:
      cm.ForgetEvent(e->id);  // recorded outside capture again
      return false;
    case Route::kDone:
      return true;
    case Route::kCapture:
      break;
  }
  cm.RecordEvent(e->id, CapturedEvent{seq->id, part->deps});
  *result = CUDA_SUCCESS;
  return true;
}

bool CaptureWaitEvent(DriverState* st, Stream* s, Event* e, unsigned flags, CUresult* result) {
  CaptureModel& cm = st->graphs().captures();
  if (cm.empty()) return false;
  const CapturedEvent* captured = cm.OfEvent(e->id);
  StreamCapture* part = cm.OfStream(s->id);
  CaptureSequence* own = part != nullptr ? cm.Find(part->capture_id) : nullptr;
  if (captured != nullptr) {
    CaptureSequence* theirs = cm.Find(captured->capture_id);
    if (own == nullptr) {
      if (theirs->invalidated) {
        *result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        return true;
      }
      cm.Join(s->id, theirs->id, captured->deps);  // a fork: s joins the capture
      *result = CUDA_SUCCESS;
      return true;
    }
    if (own->id != theirs->id) {  // merging two captures
      own->invalidated = true;
      theirs->invalidated = true;
      *result = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
      return true;
    }
    if (own->invalidated) {
      *result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
      return true;
    }
    for (std::uint64_t d : captured->deps) {  // a join
      if (std::find(part->deps.begin(), part->deps.end(), d) == part->deps.end()) {
        part->deps.push_back(d);
      }
    }
    *result = CUDA_SUCCESS;
    return true;
  }
  if (own == nullptr) return false;
  if (own->invalidated) {
    *result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return true;
  }
  if (flags & CU_EVENT_WAIT_EXTERNAL) {
    GraphNode node;
    node.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
    node.event = EncodeHandle<CUevent>(HandleKind::kEvent, e->id);
    *result = AddCaptured(st, part, own, std::move(node));
    return true;
  }
  own->invalidated = true;
  *result = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
  return true;
}

bool CaptureAlloc(DriverState* st, Stream* s, std::size_t bytes, int device, CUdeviceptr* dptr,
                  CUresult* result) {
  if (st->graphs().captures().empty()) return false;
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  switch (RouteWork(st, s, result, &part, &seq)) {
    case Route::kRun:
      return false;
    case Route::kDone:
      return true;
    case Route::kCapture:
      break;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  node.alloc_bytes = bytes;
  node.alloc_device = device;
  node.alloc_dptr = ReserveGraphAlloc(st, device, bytes);
  const CUdeviceptr address = node.alloc_dptr;
  *result = AddCaptured(st, part, seq, std::move(node));
  if (*result == CUDA_SUCCESS) *dptr = address;
  return true;
}

bool CaptureFree(DriverState* st, Stream* s, CUdeviceptr dptr, CUresult* result) {
  if (st->graphs().captures().empty()) return false;
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  switch (RouteWork(st, s, result, &part, &seq)) {
    case Route::kRun:
      return false;
    case Route::kDone:
      return true;
    case Route::kCapture:
      break;
  }
  // Only graph allocations can be freed by a graph (measured for free nodes).
  if (st->graphs().FindGraphAlloc(dptr) == nullptr) {
    *result = CUDA_ERROR_INVALID_VALUE;
    return true;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  node.alloc_dptr = dptr;
  *result = AddCaptured(st, part, seq, std::move(node));
  return true;
}

bool CaptureRefuse(DriverState* st, Stream* s, CUresult* result) {
  if (st->graphs().captures().empty()) return false;
  StreamCapture* part = nullptr;
  CaptureSequence* seq = nullptr;
  switch (RouteWork(st, s, result, &part, &seq)) {
    case Route::kRun:
      return false;
    case Route::kDone:
      return true;
    case Route::kCapture:
      break;
  }
  seq->invalidated = true;
  *result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return true;
}

CUresult CaptureCheckUnsafe(DriverState* st, bool refuse) {
  if (st->graphs().captures().empty()) return CUDA_SUCCESS;
  std::vector<std::uint64_t> hit = ProhibitingCaptures(st);
  if (hit.empty()) return CUDA_SUCCESS;
  for (std::uint64_t id : hit) st->graphs().captures().Find(id)->invalidated = true;
  return refuse ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult CaptureCheckStreamSync(DriverState* st, const Stream* s) {
  CaptureModel& cm = st->graphs().captures();
  if (cm.empty()) return CUDA_SUCCESS;
  if (CaptureSequence* seq = cm.SequenceOf(s->id)) {
    seq->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return CaptureCheckUnsafe(st, true);
}

CUresult CaptureCheckEventSync(DriverState* st, const Event* e) {
  CaptureModel& cm = st->graphs().captures();
  if (cm.empty()) return CUDA_SUCCESS;
  if (const CapturedEvent* captured = cm.OfEvent(e->id)) {
    cm.Find(captured->capture_id)->invalidated = true;
    return CUDA_ERROR_CAPTURED_EVENT;
  }
  return CaptureCheckUnsafe(st, true);
}

CUresult CaptureCheckContextSync(DriverState* st, std::uint64_t ctx_id) {
  CaptureModel& cm = st->graphs().captures();
  if (cm.empty()) return CUDA_SUCCESS;
  bool hit = false;
  for (const auto& [id, c] : cm.all()) {
    if (c.ctx_id == ctx_id) {
      cm.Find(id)->invalidated = true;
      hit = true;
    }
  }
  if (hit) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return CaptureCheckUnsafe(st, true);
}

void CaptureOnStreamDestroyed(DriverState* st, std::uint64_t stream_id) {
  CaptureModel& cm = st->graphs().captures();
  if (cm.empty()) return;
  CaptureSequence* seq = cm.SequenceOf(stream_id);
  if (seq == nullptr) return;
  if (seq->origin_stream == stream_id) {
    Discard(st, seq->id);  // nobody can end it any more
  } else {
    seq->invalidated = true;
  }
}

}  // namespace fakecuda

namespace {

// cuStreamGetCaptureInfo (all ABIs): `status` must be given; the rest only when capturing.
CUresult GetCaptureInfo(DriverState* st, CUstream hStream, CUstreamCaptureStatus* status,
                        cuuint64_t* id_out, CUgraph* graph_out, const CUgraphNode** deps_out,
                        const CUgraphEdgeData** edges_out, size_t* num_deps_out)
    CUHAL_REQUIRES(st->mu) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  CaptureModel& cm = st->graphs().captures();
  StreamCapture* part = cm.OfStream(s->id);
  CaptureSequence* seq = part != nullptr ? cm.Find(part->capture_id) : nullptr;
  if (seq == nullptr) {
    // Measured: nothing but the status is written.
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  }
  if (seq->invalidated) {
    // Measured: the status only (the id is not written either).
    *status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
    return CUDA_SUCCESS;
  }
  if (id_out != nullptr) *id_out = seq->id;
  *status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (graph_out != nullptr)
    *graph_out = fakecuda::EncodeHandle<CUgraph>(HandleKind::kGraph, seq->graph_id);
  part->dep_handles.clear();
  for (std::uint64_t d : part->deps) {
    part->dep_handles.push_back(fakecuda::EncodeHandle<CUgraphNode>(HandleKind::kGraphNode, d));
  }
  part->edge_data.assign(part->deps.size(), CUgraphEdgeData{});  // all default edges
  if (deps_out != nullptr)
    *deps_out = part->dep_handles.empty() ? nullptr : part->dep_handles.data();
  if (edges_out != nullptr) *edges_out = part->edge_data.empty() ? nullptr : part->edge_data.data();
  if (num_deps_out != nullptr) *num_deps_out = part->deps.size();
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode) try {
  FAKECUDA_ENTER(cuStreamBeginCapture)
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  // Measured: the legacy stream cannot capture.
  if (s->legacy_default) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!fakecuda::ValidMode(mode)) return CUDA_ERROR_INVALID_VALUE;
  GraphModel& graphs = st->graphs();
  if (graphs.captures().OfStream(s->id) != nullptr) return CUDA_ERROR_ILLEGAL_STATE;  // measured
  CaptureSequence seq;
  seq.id = st->NewId();
  seq.graph_id = st->NewId();
  seq.mode = mode;
  seq.origin_stream = s->id;
  seq.ctx_id = s->ctx_id;
  seq.thread = fakecuda::ThreadKey();
  graphs.AddGraph(seq.graph_id)->capture_id = seq.id;
  graphs.captures().Begin(std::move(seq));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamBeginCapture");
}

// Capture into the user's graph `hGraph` (CUDA 12.3), the first captured node depending on
// `dependencies`. Measured on the H100 (driver 580.159.04, ci/gpu-probes/streamctx_probe.cc,
// "capture:tograph"): a NULL graph is CUDA_ERROR_INVALID_VALUE before the stream is looked at;
// the legacy (or NULL) stream is CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; a node of another graph
// as a dependency, a bad mode or edge type are CUDA_ERROR_INVALID_VALUE; a stream already
// capturing, or a graph another stream captures into, CUDA_ERROR_ILLEGAL_STATE; End returns the
// given graph; an invalidated capture leaves the graph as it was (GraphModel::DiscardCapture).
// UNMEASURED: non-default edge data of a valid type (refused: the fake captures default edges
// only).
CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                             const CUgraphNode* dependencies,
                                             const CUgraphEdgeData* dependencyData,
                                             size_t numDependencies,
                                             CUstreamCaptureMode mode) try {
  FAKECUDA_ENTER(cuStreamBeginCaptureToGraph)
  if (hGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return fakecuda::StaleStreamError(hStream, err);
  if (s->legacy_default) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!fakecuda::ValidMode(mode)) return CUDA_ERROR_INVALID_VALUE;
  GraphModel& graphs = st->graphs();
  fakecuda::GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr || g->owner_node != 0) return CUDA_ERROR_INVALID_VALUE;
  if (numDependencies != 0 && dependencies == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::vector<std::uint64_t> deps;
  for (size_t i = 0; i < numDependencies; ++i) {
    std::uint64_t node_graph = 0;
    const GraphNode* n = graphs.FindNode(dependencies[i], &node_graph);
    if (n == nullptr || node_graph != g->id) return CUDA_ERROR_INVALID_VALUE;
    if (dependencyData != nullptr) {
      static const CUgraphEdgeData kDefault{};
      if (std::memcmp(&dependencyData[i], &kDefault, sizeof kDefault) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    if (std::find(deps.begin(), deps.end(), n->id) == deps.end()) deps.push_back(n->id);
  }
  if (graphs.captures().OfStream(s->id) != nullptr || g->capture_id != 0) {
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  CaptureSequence seq;
  seq.id = st->NewId();
  seq.graph_id = g->id;
  seq.user_graph_nodes = g->nodes.size();
  seq.mode = mode;
  seq.origin_stream = s->id;
  seq.ctx_id = s->ctx_id;
  seq.thread = fakecuda::ThreadKey();
  seq.user_graph = true;
  g->capture_id = seq.id;
  graphs.captures().Begin(std::move(seq));
  graphs.captures().OfStream(s->id)->deps = std::move(deps);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamBeginCaptureToGraph");
}

// Replaces (SET) or extends (ADD, also flags 0) the capturing stream's dependency set; a node
// already in it is not added twice. Not capturing: CUDA_ERROR_ILLEGAL_STATE; flags other than
// ADD/SET, a node of another graph, a bad edge type: CUDA_ERROR_INVALID_VALUE (measured on the
// H100, streamctx_probe "capture:update"). UNMEASURED: an invalidated capture's answer.
CUresult CUDAAPI cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode* dependencies,
                                                      const CUgraphEdgeData* dependencyData,
                                                      size_t numDependencies,
                                                      unsigned int flags) try {
  FAKECUDA_ENTER(cuStreamUpdateCaptureDependencies)
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return fakecuda::StaleStreamError(hStream, err);
  if (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES && flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  GraphModel& graphs = st->graphs();
  StreamCapture* part = graphs.captures().OfStream(s->id);
  CaptureSequence* seq = part != nullptr ? graphs.captures().Find(part->capture_id) : nullptr;
  if (seq == nullptr) return CUDA_ERROR_ILLEGAL_STATE;
  if (seq->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (numDependencies != 0 && dependencies == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::vector<std::uint64_t> nodes;
  for (size_t i = 0; i < numDependencies; ++i) {
    std::uint64_t node_graph = 0;
    const GraphNode* n = graphs.FindNode(dependencies[i], &node_graph);
    if (n == nullptr || node_graph != seq->graph_id) return CUDA_ERROR_INVALID_VALUE;
    if (dependencyData != nullptr) {
      static const CUgraphEdgeData kDefault{};
      if (std::memcmp(&dependencyData[i], &kDefault, sizeof kDefault) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    nodes.push_back(n->id);
  }
  if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES) part->deps.clear();
  for (std::uint64_t id : nodes) {
    if (std::find(part->deps.begin(), part->deps.end(), id) == part->deps.end()) {
      part->deps.push_back(id);
    }
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamUpdateCaptureDependencies");
}

// The CUDA 11.3 form (no edge data). Counted under the plain name.
CUresult CUDAAPI FakecudaStreamUpdateCaptureDependenciesV1(CUstream hStream,
                                                           CUgraphNode* dependencies,
                                                           size_t numDependencies,
                                                           unsigned int flags)
    __asm__("cuStreamUpdateCaptureDependencies");
CUresult CUDAAPI FakecudaStreamUpdateCaptureDependenciesV1(CUstream hStream,
                                                           CUgraphNode* dependencies,
                                                           size_t numDependencies,
                                                           unsigned int flags) {
  return cuStreamUpdateCaptureDependencies_v2(hStream, dependencies, nullptr, numDependencies,
                                              flags);
}

// The CUDA 10.0 form (no mode): global mode. Counted under the plain name.
CUresult CUDAAPI FakecudaStreamBeginCaptureV1(CUstream hStream) __asm__("cuStreamBeginCapture");
CUresult CUDAAPI FakecudaStreamBeginCaptureV1(CUstream hStream) {
  return cuStreamBeginCapture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) try {
  FAKECUDA_ENTER(cuStreamEndCapture)
  if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  GraphModel& graphs = st->graphs();
  CaptureModel& cm = graphs.captures();
  StreamCapture* part = cm.OfStream(s->id);
  CaptureSequence* seq = part != nullptr ? cm.Find(part->capture_id) : nullptr;
  if (seq == nullptr) return CUDA_ERROR_ILLEGAL_STATE;  // measured: not capturing
  *phGraph = nullptr;
  if (seq->origin_stream != s->id) {
    seq->invalidated = true;  // measured: the origin then reports INVALIDATED
    return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  }
  const std::uint64_t capture_id = seq->id;
  if (fakecuda::EnumBits(seq->mode) != CU_STREAM_CAPTURE_MODE_RELAXED &&
      seq->thread != fakecuda::ThreadKey()) {
    fakecuda::Discard(st, capture_id);  // measured: the capture is over (status NONE)
    return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  }
  if (seq->invalidated) {
    fakecuda::Discard(st, capture_id);
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  // Every stream that joined must have been joined back into the origin.
  const std::vector<std::uint64_t> roots = part->deps;
  for (std::uint64_t member : seq->streams) {
    if (member == s->id) continue;
    const StreamCapture* other = cm.OfStream(member);
    if (other != nullptr && !fakecuda::Covered(graphs, roots, other->deps)) {
      fakecuda::Discard(st, capture_id);
      return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    }
  }
  const std::uint64_t graph_id = seq->graph_id;
  cm.End(capture_id);
  if (fakecuda::GraphState* g = fakecuda::GraphById(st, graph_id)) {
    g->capture_id = 0;
    *phGraph = fakecuda::EncodeHandle<CUgraph>(HandleKind::kGraph, graph_id);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamEndCapture");
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) try {
  FAKECUDA_ENTER(cuStreamIsCapturing)
  if (captureStatus == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  CaptureSequence* seq = st->graphs().captures().SequenceOf(s->id);
  *captureStatus = seq == nullptr     ? CU_STREAM_CAPTURE_STATUS_NONE
                   : seq->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                      : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamIsCapturing");
}

// cuda.h 13 maps cuStreamGetCaptureInfo to _v3; the older ABIs are exported under their symbol
// names. All count as calls of cuStreamGetCaptureInfo.
CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                        cuuint64_t* id_out, CUgraph* graph_out,
                                        const CUgraphNode** dependencies_out,
                                        const CUgraphEdgeData** edgeData_out,
                                        size_t* numDependencies_out) try {
  FAKECUDA_ENTER(cuStreamGetCaptureInfo)
  return GetCaptureInfo(st, hStream, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out);
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetCaptureInfo");
}

CUresult CUDAAPI FakecudaStreamGetCaptureInfoV1(CUstream hStream, CUstreamCaptureStatus* status,
                                                cuuint64_t* id) __asm__("cuStreamGetCaptureInfo");
CUresult CUDAAPI FakecudaStreamGetCaptureInfoV1(CUstream hStream, CUstreamCaptureStatus* status,
                                                cuuint64_t* id) {
  return cuStreamGetCaptureInfo(hStream, status, id, nullptr, nullptr, nullptr, nullptr);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* status,
                                           cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
                                           size_t* num_deps);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* status,
                                           cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
                                           size_t* num_deps) {
  return cuStreamGetCaptureInfo(hStream, status, id, graph, deps, nullptr, num_deps);
}

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) try {
  FAKECUDA_ENTER(cuThreadExchangeStreamCaptureMode)
  if (mode == nullptr || !fakecuda::ValidMode(*mode)) return CUDA_ERROR_INVALID_VALUE;
  CUstreamCaptureMode& mine = fakecuda::ThreadCaptureMode(st->serial);
  std::swap(mine, *mode);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuThreadExchangeStreamCaptureMode");
}

}  // extern "C"
