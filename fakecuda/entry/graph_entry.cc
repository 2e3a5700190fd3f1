// Copyright 2026 The cuhal Authors.
// Entry points: CUDA graphs. A graph is a DAG of nodes (empty, kernel, memcpy, memset, host,
// event record, event wait); instantiating it copies its nodes in a topological order (ties
// broken by creation order); launching the executable graph enqueues one stream op per node, in
// that order, on the launch stream. That is one valid execution of the DAG (the real driver may
// overlap independent nodes; nothing may rely on it not doing so). Launches of one executable
// graph are serialized, as on the real driver.
//
// Resources a node names (memory, functions, events) are checked when the node is added and
// again at each launch, before anything is enqueued: a launch either queues all of its nodes or
// fails with nothing queued.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/graph_conditional_hooks.h"
#include "fakecuda/entry/graph_internal.h"
#include "fakecuda/internal/array_model.h"
#include "fakecuda/internal/context_table.h"
#include "fakecuda/internal/engine_access.h"
#include "fakecuda/race/race_detector.h"
#include "fakecuda/internal/graph_model.h"
#include "fakecuda/internal/library_model.h"
#include "fakecuda/internal/module_model.h"

using fakecuda::DriverState;
using fakecuda::GraphExecState;
using fakecuda::GraphModel;
using fakecuda::GraphNode;
using fakecuda::GraphState;
using fakecuda::HandleKind;
using fakecuda::ModuleModel;

namespace fakecuda {

// Defined in stream_entry.cc: records `hEvent` on `hStream` (resolved like any stream argument).
CUresult RecordEvent(DriverState* st, CUevent hEvent, CUstream hStream) CUHAL_REQUIRES(st->mu);

GraphState* GraphById(DriverState* st, std::uint64_t id) {
  return st->graphs().FindGraph(EncodeHandle<CUgraph>(HandleKind::kGraph, id));
}

bool DeviceRangeKnown(DriverState* st, std::uintptr_t ptr, std::size_t size) {
  if (const Allocation* a = st->FindAllocation(ptr, 1)) {
    return size <= a->size - (ptr - a->base);
  }
  return st->graphs().GraphAllocContaining(ptr, std::max<std::size_t>(size, 1)) != nullptr;
}

namespace {

constexpr std::uintptr_t kDeviceVaBase = kGraphDeviceVaBase;

// Set while a node is being added (not launched): addresses of graph allocations, which are live
// only while a launch holds them, are accepted then without being resolved.
thread_local bool t_adding_node = false;

// One side of a copy, resolved to host bytes: [data, data + span).
CUresult ResolveSide(DriverState* st, int type, const void* host, CUdeviceptr device,
                     std::size_t offset, std::size_t span, std::byte** out) CUHAL_REQUIRES(st->mu) {
  if (span == 0) {
    *out = nullptr;
    return CUDA_SUCCESS;
  }
  std::uintptr_t address = 0;
  switch (type) {
    case CU_MEMORYTYPE_HOST: address = reinterpret_cast<std::uintptr_t>(host); break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: address = device; break;
    case CU_MEMORYTYPE_ARRAY: return CUDA_ERROR_INVALID_VALUE;  // MemcpyOp resolves arrays
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (address == 0) return CUDA_ERROR_INVALID_VALUE;
  address += offset;
  if (Allocation* a = st->FindAllocation(address, 1)) {
    bool device_memory = a->type == MemoryType::kDevice || a->type == MemoryType::kPool;
    // Device-typed sides may name any allocation (unified addressing); host-typed ones not
    // device memory.
    if (type == CU_MEMORYTYPE_HOST && device_memory) return CUDA_ERROR_INVALID_VALUE;
    if (span > a->size - (address - a->base)) return CUDA_ERROR_INVALID_VALUE;
    *out = a->data + (address - a->base);
    return CUDA_SUCCESS;
  }
  if (t_adding_node && type != CU_MEMORYTYPE_HOST &&
      st->graphs().GraphAllocContaining(address, span) != nullptr) {
    *out = nullptr;  // graph memory: resolved at each launch
    return CUDA_SUCCESS;
  }
  // Pageable host memory: not checkable, as for the real driver; device addresses must exist.
  if (type == CU_MEMORYTYPE_DEVICE || address >= kDeviceVaBase) return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<std::byte*>(address);
  return CUDA_SUCCESS;
}

// Scoped t_adding_node.
class AddingNode {
 public:
  AddingNode() { t_adding_node = true; }
  ~AddingNode() { t_adding_node = false; }
  AddingNode(const AddingNode&) = delete;             // a scope
  AddingNode& operator=(const AddingNode&) = delete;  // ditto
};

}  // namespace

namespace {

// For the race detector: the rows a 2D/3D copy or memset touches, starting at `addr` (one
// access per row; one over the whole span past 64 rows, which may only over-state the bytes).
void AddRowAccesses(std::vector<RaceAccess>* out, std::uintptr_t addr, std::size_t width,
                    std::size_t pitch, std::size_t slice, std::size_t height, std::size_t depth,
                    bool write) {
  if (width == 0) return;
  if (height * depth > 64) {
    out->push_back({addr, (depth - 1) * slice + (height - 1) * pitch + width, write});
    return;
  }
  for (std::size_t z = 0; z < depth; ++z) {
    for (std::size_t y = 0; y < height; ++y) out->push_back({addr + z * slice + y * pitch, width, write});
  }
}

std::uintptr_t SideAddress(int type, const void* host, CUdeviceptr device) {
  return type == CU_MEMORYTYPE_HOST ? reinterpret_cast<std::uintptr_t>(host)
                                    : static_cast<std::uintptr_t>(device);
}

}  // namespace

// The op of a memcpy node, with its memory resolved now.
// A memcpy node's CUDA array side (array_model.h's packed layout): its pitch and layer height,
// and its bytes at (x, y, z), the box inside the array; CUDA_ERROR_INVALID_VALUE otherwise.
CUresult MemcpyArraySide(DriverState* st, CUarray handle, std::size_t x, std::size_t y, std::size_t z,
                   std::size_t width, std::size_t height, std::size_t depth, std::size_t* pitch,
                   std::size_t* rows, std::byte** data, std::shared_ptr<ArrayBacking>* keep)
    CUHAL_REQUIRES(st->mu) {
  const ArrayRecord* a = st->arrays().Find(handle);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (x > a->row_bytes || width > a->row_bytes - x || y > a->rows || height > a->rows - y ||
      z > a->layers || depth > a->layers - z) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pitch = a->row_bytes;
  *rows = a->rows;
  *data = a->backing->data() + (z * a->rows + y) * a->row_bytes + x;
  *keep = a->backing;
  return CUDA_SUCCESS;
}

CUresult MemcpyOp(DriverState* st, const CUDA_MEMCPY3D& c, Op* op) CUHAL_REQUIRES(st->mu) {
  if (c.srcLOD != 0 || c.dstLOD != 0) return CUDA_ERROR_INVALID_VALUE;
  std::size_t height = std::max<std::size_t>(c.Height, 1), depth = std::max<std::size_t>(c.Depth, 1);
  std::size_t width = c.WidthInBytes;
  std::size_t src_pitch = c.srcPitch != 0 ? c.srcPitch : width;
  std::size_t dst_pitch = c.dstPitch != 0 ? c.dstPitch : width;
  std::size_t src_height = c.srcHeight != 0 ? c.srcHeight : height;
  std::size_t dst_height = c.dstHeight != 0 ? c.dstHeight : height;
  // CUDA array sides (captured array copies, measured on the H100 2026-12-06: array_probe
  // "capture"; cuGraphAddMemcpyNode with an array): their own pitch and layer height.
  const bool src_array = EnumBits(c.srcMemoryType) == CU_MEMORYTYPE_ARRAY;
  const bool dst_array = EnumBits(c.dstMemoryType) == CU_MEMORYTYPE_ARRAY;
  std::byte* src_array_data = nullptr;
  std::byte* dst_array_data = nullptr;
  std::shared_ptr<ArrayBacking> src_keep, dst_keep;
  if (src_array) {
    if (CUresult e = MemcpyArraySide(st, c.srcArray, c.srcXInBytes, c.srcY, c.srcZ, width, height, depth,
                               &src_pitch, &src_height, &src_array_data, &src_keep);
        e != CUDA_SUCCESS) {
      return e;
    }
  }
  if (dst_array) {
    if (CUresult e = MemcpyArraySide(st, c.dstArray, c.dstXInBytes, c.dstY, c.dstZ, width, height, depth,
                               &dst_pitch, &dst_height, &dst_array_data, &dst_keep);
        e != CUDA_SUCCESS) {
      return e;
    }
  }
  if ((height > 1 || depth > 1) && (src_pitch < width || dst_pitch < width)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (depth > 1 && (src_height < height || dst_height < height)) return CUDA_ERROR_INVALID_VALUE;
  std::size_t src_offset = c.srcXInBytes + c.srcY * src_pitch + c.srcZ * src_pitch * src_height;
  std::size_t dst_offset = c.dstXInBytes + c.dstY * dst_pitch + c.dstZ * dst_pitch * dst_height;
  std::size_t src_span =
      width == 0 ? 0 : (depth - 1) * src_pitch * src_height + (height - 1) * src_pitch + width;
  std::size_t dst_span =
      width == 0 ? 0 : (depth - 1) * dst_pitch * dst_height + (height - 1) * dst_pitch + width;
  std::byte* src = src_array_data;
  std::byte* dst = dst_array_data;
  if (!src_array) {
    if (CUresult e = ResolveSide(st, EnumBits(c.srcMemoryType), c.srcHost, c.srcDevice, src_offset,
                                 src_span, &src);
        e != CUDA_SUCCESS) {
      return e;
    }
  }
  if (!dst_array) {
    if (CUresult e = ResolveSide(st, EnumBits(c.dstMemoryType), c.dstHost, c.dstDevice, dst_offset,
                                 dst_span, &dst);
        e != CUDA_SUCCESS) {
      return e;
    }
  }
  bool d2d = EnumBits(c.srcMemoryType) == CU_MEMORYTYPE_DEVICE &&
             EnumBits(c.dstMemoryType) == CU_MEMORYTYPE_DEVICE;
  op->what = "cuGraphLaunch (memcpy node)";
  op->cost_us = DriverState::CopyCostUs(width * height * depth, d2d);
  if (width == 0) return CUDA_SUCCESS;
  std::size_t src_slice = src_pitch * src_height, dst_slice = dst_pitch * dst_height;
  if (st->race() != nullptr) {
    if (!src_array) {
      AddRowAccesses(&op->accesses,
                     SideAddress(EnumBits(c.srcMemoryType), c.srcHost, c.srcDevice) + src_offset,
                     width, src_pitch, src_slice, height, depth, false);
    }
    if (!dst_array) {
      AddRowAccesses(&op->accesses,
                     SideAddress(EnumBits(c.dstMemoryType), c.dstHost, c.dstDevice) + dst_offset,
                     width, dst_pitch, dst_slice, height, depth, true);
    }
  }
  // The arrays' bytes stay alive while the op is queued (array_model.h invariant 2).
  op->body = [=, keep = std::make_pair(src_keep, dst_keep)] {
    (void)keep;
    for (std::size_t z = 0; z < depth; ++z) {
      for (std::size_t y = 0; y < height; ++y) {
        EngineMove(dst + z * dst_slice + y * dst_pitch, src + z * src_slice + y * src_pitch, width);
      }
    }
    return CUDA_SUCCESS;
  };
  return CUDA_SUCCESS;
}

CUresult MemsetOp(DriverState* st, const CUDA_MEMSET_NODE_PARAMS& m, Op* op)
    CUHAL_REQUIRES(st->mu) {
  std::size_t elem = m.elementSize;
  if (elem != 1 && elem != 2 && elem != 4) return CUDA_ERROR_INVALID_VALUE;
  if (m.dst % elem != 0) return CUDA_ERROR_INVALID_VALUE;
  std::size_t height = std::max<std::size_t>(m.height, 1);
  std::size_t row = m.width * elem;
  if (height > 1 && m.pitch < row) return CUDA_ERROR_INVALID_VALUE;
  std::size_t pitch = height > 1 ? m.pitch : row;
  std::size_t span = row == 0 ? 0 : (height - 1) * pitch + row;
  std::byte* data = nullptr;
  if (span != 0) {
    Allocation* a = st->FindAllocation(m.dst, span);
    if (a == nullptr && t_adding_node &&
        st->graphs().GraphAllocContaining(m.dst, span) != nullptr) {
      return CUDA_SUCCESS;  // graph memory: resolved at each launch
    }
    if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
    data = a->data + (m.dst - a->base);
  }
  op->what = "cuGraphLaunch (memset node)";
  op->cost_us = DriverState::MemsetCostUs(row * height);
  if (span == 0) return CUDA_SUCCESS;
  unsigned value = m.value;
  std::size_t width = m.width;
  if (st->race() != nullptr) AddRowAccesses(&op->accesses, m.dst, row, pitch, 0, height, 1, true);
  op->body = [=] {
    for (std::size_t y = 0; y < height; ++y) EngineFill(data + y * pitch, value, elem, width);
    return CUDA_SUCCESS;
  };
  return CUDA_SUCCESS;
}

// The common part of every cuGraphAdd*Node: checks the graph and the dependencies, then adds
// `node` (whose type-specific fields the caller filled).
CUresult AddNode(DriverState* st, CUgraphNode* out, CUgraph hGraph, const CUgraphNode* deps,
                 size_t num_deps, GraphNode node) CUHAL_REQUIRES(st->mu) {
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (num_deps > 0 && deps == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = CheckBodyNode(st, *g, node); e != CUDA_SUCCESS) return e;
  std::set<std::uint64_t> seen;
  for (size_t i = 0; i < num_deps; ++i) {
    std::uint64_t id = DecodeHandle(HandleKind::kGraphNode, deps[i]);
    if (!graphs.NodeIn(id, g->id)) return CUDA_ERROR_INVALID_VALUE;
    if (!seen.insert(id).second) return CUDA_ERROR_INVALID_VALUE;  // duplicate dependency
    node.deps.push_back(id);
  }
  node.id = st->NewId();
  *out = EncodeHandle<CUgraphNode>(HandleKind::kGraphNode, node.id);
  graphs.AddNode(*g, std::move(node));
  return CUDA_SUCCESS;
}

namespace {

// A launch that failed after pass 0: releases the allocations it made live.
CUresult Unmake(DriverState* st, const std::vector<CUdeviceptr>& made, CUresult e)
    CUHAL_REQUIRES(st->mu) {
  for (CUdeviceptr d : made) st->ReleaseAllocation(d);
  return e;
}

// A memcpy/memset node's context argument.
CUresult CheckNodeContext(DriverState* st, CUcontext ctx) CUHAL_REQUIRES(st->mu) {
  if (ctx == nullptr) {
    Context* current = st->CurrentContext();
    return current != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
  }
  return st->FindContext(ctx) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

}  // namespace

// For graph_update_entry.cc (the node setters check new parameters as the Add calls do).
CUresult CheckMemcpyNodeParams(DriverState* st, const CUDA_MEMCPY3D& c) CUHAL_REQUIRES(st->mu) {
  Op probe;
  return MemcpyOp(st, c, &probe);
}
CUresult CheckMemsetNodeParams(DriverState* st, const CUDA_MEMSET_NODE_PARAMS& m)
    CUHAL_REQUIRES(st->mu) {
  Op probe;
  return MemsetOp(st, m, &probe);
}

}  // namespace fakecuda

#define FAKECUDA_NODE_PROLOGUE()                                                     \
  if (phGraphNode == nullptr) return CUDA_ERROR_INVALID_VALUE;                       \
  if (st->graphs().FindGraph(hGraph) == nullptr) return CUDA_ERROR_INVALID_VALUE;

extern "C" {

CUresult CUDAAPI cuGraphCreate(CUgraph* phGraph, unsigned int flags) try {
  FAKECUDA_ENTER(cuGraphCreate)
  if (phGraph == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  const std::uint64_t id = st->NewId();
  st->graphs().AddGraph(id);
  *phGraph = fakecuda::EncodeHandle<CUgraph>(HandleKind::kGraph, id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphCreate");
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) try {
  FAKECUDA_ENTER(cuGraphDestroy)
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // A graph a capture is building belongs to the capture until it ends (modelling choice); a
  // conditional node's body belongs to its node (measured 2026-12-06, H100 driver 580.159.04,
  // graphnode_probe "cond:destroy_body": CUDA_ERROR_INVALID_VALUE).
  if (g->capture_id != 0 || g->owner_node != 0) return CUDA_ERROR_INVALID_VALUE;
  // Executable graphs made from it are independent copies and stay valid.
  graphs.DestroyGraph(g->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphDestroy");
}

CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                     const CUgraphNode* dependencies, size_t numDependencies) try {
  FAKECUDA_ENTER(cuGraphAddEmptyNode)
  FAKECUDA_NODE_PROLOGUE()
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_EMPTY;
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddEmptyNode");
}

CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                      const CUgraphNode* dependencies, size_t numDependencies,
                                      const CUDA_KERNEL_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphAddKernelNode)
  FAKECUDA_NODE_PROLOGUE()
  if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured: neither a function nor a kernel is INVALID_HANDLE. A library kernel (`kern`, or
  // cast into `func`) is its function in the node's context (fakecuda/internal/library_model.h).
  fakecuda::FunctionState* f = nullptr;
  if (CUresult e = fakecuda::ResolveNodeFunction(st, nodeParams->func, nodeParams->kern,
                                                 nodeParams->ctx, &f);
      e != CUDA_SUCCESS) {
    return e;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_KERNEL;
  node.function_id = f->id;
  // How the node was given, for cuGraphKernelNodeGetParams (graphx_entry.cc).
  node.params_by_extra = nodeParams->kernelParams == nullptr && nodeParams->extra != nullptr;
  if (nodeParams->func == nullptr && nodeParams->kern != nullptr) {
    node.by_kernel = fakecuda::DecodeHandle(HandleKind::kKernel, nodeParams->kern);
  }
  node.config = {{nodeParams->gridDimX, nodeParams->gridDimY, nodeParams->gridDimZ},
                 {nodeParams->blockDimX, nodeParams->blockDimY, nodeParams->blockDimZ},
                 nodeParams->sharedMemBytes};
  if (CUresult e = fakecuda::ValidateLaunch(st, *f, node.config); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::PackParams(f->kernel, nodeParams->kernelParams, nodeParams->extra,
                                        &node.params);
      e != CUDA_SUCCESS) {
    return e;
  }
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddKernelNode");
}

CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                      const CUgraphNode* dependencies, size_t numDependencies,
                                      const CUDA_MEMCPY3D* copyParams, CUcontext ctx) try {
  FAKECUDA_ENTER(cuGraphAddMemcpyNode)
  FAKECUDA_NODE_PROLOGUE()
  if (copyParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckNodeContext(st, ctx); e != CUDA_SUCCESS) return e;
  // Measured: a copy of 0 bytes is refused.
  if (copyParams->WidthInBytes == 0) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::Op probe;
  fakecuda::AddingNode adding;
  if (CUresult e = fakecuda::MemcpyOp(st, *copyParams, &probe); e != CUDA_SUCCESS) return e;
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  node.copy = *copyParams;
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddMemcpyNode");
}

CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                      const CUgraphNode* dependencies, size_t numDependencies,
                                      const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx) try {
  FAKECUDA_ENTER(cuGraphAddMemsetNode)
  FAKECUDA_NODE_PROLOGUE()
  if (memsetParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckNodeContext(st, ctx); e != CUDA_SUCCESS) return e;
  fakecuda::Op probe;
  fakecuda::AddingNode adding;
  if (CUresult e = fakecuda::MemsetOp(st, *memsetParams, &probe); e != CUDA_SUCCESS) return e;
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEMSET;
  node.memset = *memsetParams;
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddMemsetNode");
}

CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                    const CUgraphNode* dependencies, size_t numDependencies,
                                    const CUDA_HOST_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphAddHostNode)
  FAKECUDA_NODE_PROLOGUE()
  if (nodeParams == nullptr || nodeParams->fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_HOST;
  node.host_fn = nodeParams->fn;
  node.host_data = nodeParams->userData;
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddHostNode");
}

CUresult CUDAAPI cuGraphAddEventRecordNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                           const CUgraphNode* dependencies, size_t numDependencies,
                                           CUevent event) try {
  FAKECUDA_ENTER(cuGraphAddEventRecordNode)
  FAKECUDA_NODE_PROLOGUE()
  if (st->FindEvent(event) == nullptr) return CUDA_ERROR_INVALID_VALUE;  // measured for NULL
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
  node.event = event;
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddEventRecordNode");
}

CUresult CUDAAPI cuGraphAddEventWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                         const CUgraphNode* dependencies, size_t numDependencies,
                                         CUevent event) try {
  FAKECUDA_ENTER(cuGraphAddEventWaitNode)
  FAKECUDA_NODE_PROLOGUE()
  if (st->FindEvent(event) == nullptr) return CUDA_ERROR_INVALID_VALUE;  // measured for NULL
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
  node.event = event;
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddEventWaitNode");
}

namespace fakecuda {
namespace {

// The smallest memset node that marks the context (see NoteLmemResizeToMax): 65536 bytes set
// it, 4096 did not; sizes in between were never generated.
constexpr std::size_t kLmemResizeMemsetBytes = 65536;

// Measured by the differential fuzzer (H100, driver 580.159.04, 2026-12-06; docs/fuzzing.md):
// once a graph holding a memset node of 64 KiB or more is instantiated, cuCtxGetFlags of the
// context reports CU_CTX_LMEM_RESIZE_TO_MAX (24 instead of 8) for the rest of the context's
// life (also after the executable graph is destroyed); graphs with smaller memset nodes, kernel
// launches and uninstantiated graphs do not. The driver presumably runs such a memset as a
// kernel and fixes the context's local memory size for the graph's launches; whether kernel
// nodes do the same was not measured, so they do not here. The current context is marked.
void NoteLmemResizeToMax(DriverState* st, const std::vector<GraphNode>& nodes)
    CUHAL_REQUIRES(st->mu) {
  Context* ctx = st->CurrentContext();
  if (ctx == nullptr) return;
  for (const GraphNode& n : nodes) {
    if (n.type != CU_GRAPH_NODE_TYPE_MEMSET) continue;
    const std::size_t bytes = n.memset.width * n.memset.height * n.memset.elementSize;
    if (bytes >= kLmemResizeMemsetBytes) {
      ctx->flags |= CU_CTX_LMEM_RESIZE_TO_MAX;
      return;
    }
  }
}

}  // namespace
}  // namespace fakecuda

}  // extern "C"

namespace fakecuda {
namespace {

// Whether `nodes` (and the copies of child graphs among them) hold only node types a graph
// instantiated for device launch may hold (cuda.h: kernel, memcpy, memset and child graph
// nodes); *bad is the first other node, *work whether one kernel, memcpy or memset is there.
bool DeviceLaunchable(const std::vector<GraphNode>& nodes, std::uint64_t* bad, bool* work) {
  for (const GraphNode& n : nodes) {
    switch (n.type) {
      case CU_GRAPH_NODE_TYPE_KERNEL:
      case CU_GRAPH_NODE_TYPE_MEMCPY:
      case CU_GRAPH_NODE_TYPE_MEMSET:
        *work = true;
        break;
      case CU_GRAPH_NODE_TYPE_GRAPH:
        if (n.child != nullptr && !DeviceLaunchable(*n.child, bad, work)) {
          *bad = n.id;
          return false;
        }
        break;
      default:
        *bad = n.id;
        return false;
    }
  }
  return true;
}

// Shares the user object references of the child graph nodes among `nodes` (recursively).
void AddChildRefs(const std::vector<GraphNode>& nodes, UserObjectRefs* refs, int depth) {
  for (const GraphNode& n : nodes) {
    if (n.type != CU_GRAPH_NODE_TYPE_GRAPH) continue;
    refs->AddNested(n.child_refs);
    if (n.child != nullptr && depth < 64) AddChildRefs(*n.child, refs, depth + 1);
  }
}

}  // namespace

CUresult InstantiateGraph(DriverState* st, CUgraphExec* phGraphExec, CUgraph hGraph,
                          std::uint64_t flags, CUgraphInstantiateResult* result,
                          CUgraphNode* err_node) {
  *result = CUDA_GRAPH_INSTANTIATE_ERROR;
  *err_node = nullptr;
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // A conditional node's body is instantiated only with its parent (measured 2026-12-06, H100
  // driver 580.159.04, graphnode_probe "cond:destroy_body": CUDA_ERROR_NOT_SUPPORTED).
  if (g->owner_node != 0) return CUDA_ERROR_NOT_SUPPORTED;
  if (CUresult e = CheckHandlesUsed(st, *g); e != CUDA_SUCCESS) {
    *result = CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED;  // measured (graphx_probe)
    return e;
  }
  // Child graph nodes whose embedded graph was handed out run that graph as it is now.
  graphs.SyncEmbedded(g->id);
  // A graph still being captured (from cuStreamGetCaptureInfo) instantiates as it is so far:
  // measured (graph_probe modelling).
  std::vector<GraphNode> nodes;
  nodes.reserve(g->nodes.size());
  bool has_allocs = false;
  for (std::uint64_t id : g->nodes) {
    nodes.push_back(graphs.node(id));
    has_allocs = has_allocs || nodes.back().type == CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  }
  // Device launch (cuda.h; measured for a host node, a memcpy node, an alloc node and
  // AUTO_FREE_ON_LAUNCH, graphx_probe "instparams:errors", "execflags"): only kernel, memcpy,
  // memset and child graph nodes, at least one of the first three; not with AUTO_FREE_ON_LAUNCH.
  if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0) {
    if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    std::uint64_t bad = 0;
    bool work = false;
    if (!DeviceLaunchable(nodes, &bad, &work)) {
      *result = CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED;
      *err_node = EncodeHandle<CUgraphNode>(HandleKind::kGraphNode, bad);
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!work) return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured: a graph with memory alloc nodes has at most one executable graph at a time; so
  // has one with conditional nodes (cuda.h).
  const bool has_conditionals = GraphHasConditional(st, *g);
  has_allocs = has_allocs || has_conditionals;
  if (has_allocs && g->alloc_exec != 0 &&
      graphs.FindExec(EncodeHandle<CUgraphExec>(HandleKind::kGraphExec, g->alloc_exec)) !=
          nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  // The user object references the executable graph will hold: the graph's and its child
  // graphs' (released again if instantiation fails below).
  UserObjectRefs refs(g->user_refs);
  AddChildRefs(nodes, &refs, 0);
  nodes = FlattenChildGraphs(st, std::move(nodes));
  if (CUresult e = SnapshotConditionals(st, &nodes); e != CUDA_SUCCESS) return e;
  // Kahn's algorithm; among ready nodes the earliest (lowest id) goes first.
  std::map<std::uint64_t, const GraphNode*> by_id;
  std::map<std::uint64_t, int> indegree;
  std::map<std::uint64_t, std::vector<std::uint64_t>> dependents;
  for (const GraphNode& n : nodes) {
    by_id[n.id] = &n;
    indegree[n.id] += 0;
    for (std::uint64_t d : n.deps) {
      ++indegree[n.id];
      dependents[d].push_back(n.id);
    }
  }
  std::set<std::uint64_t> ready;
  for (const auto& [id, deg] : indegree) {
    if (deg == 0) ready.insert(id);
  }
  auto order = std::make_shared<std::vector<GraphNode>>();
  while (!ready.empty()) {
    std::uint64_t id = *ready.begin();
    ready.erase(ready.begin());
    order->push_back(*by_id.at(id));
    for (std::uint64_t next : dependents[id]) {
      if (--indegree[next] == 0) ready.insert(next);
    }
  }
  if (order->size() != nodes.size()) {
    // A cycle (cuGraphAddDependencies accepts them): the latest node left on it (measured once,
    // graphx_probe "instparams:errors": of a -> c -> a, c).
    *result = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
    for (const auto& [id, deg] : indegree) {  // ascending ids: the last one left stays
      if (deg > 0) *err_node = EncodeHandle<CUgraphNode>(HandleKind::kGraphNode, id);
    }
    return CUDA_ERROR_INVALID_VALUE;
  }
  GraphExecState exec;
  exec.id = st->NewId();
  exec.graph_id = g->id;
  exec.order = std::move(order);
  exec.flags = flags & ~static_cast<std::uint64_t>(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
  if (!refs.empty()) exec.user_refs = std::make_shared<const UserObjectRefs>(std::move(refs));
  if (has_allocs) g->alloc_exec = exec.id;
  NoteLmemResizeToMax(st, *exec.order);
  *phGraphExec = EncodeHandle<CUgraphExec>(HandleKind::kGraphExec, exec.id);
  graphs.AddExec(std::move(exec));
  *result = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                             unsigned long long flags) try {
  FAKECUDA_ENTER(cuGraphInstantiateWithFlags)
  if (phGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // AUTO_FREE_ON_LAUNCH and USE_NODE_PRIORITY change nothing the fake models; UPLOAD belongs to
  // cuGraphInstantiateWithParams. DEVICE_LAUNCH is checked (graphs launch from the host only).
  constexpr unsigned long long kAllowed = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                          CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY |
                                          CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
  if (flags & ~kAllowed) return CUDA_ERROR_INVALID_VALUE;
  CUgraphInstantiateResult result;
  CUgraphNode err_node;
  return fakecuda::InstantiateGraph(st, phGraphExec, hGraph, flags, &result, &err_node);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphInstantiateWithFlags");
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) try {
  FAKECUDA_ENTER(cuGraphExecDestroy)
  GraphModel& graphs = st->graphs();
  GraphExecState* e = graphs.FindExec(hGraphExec);
  if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Queued launches own what they need; they still complete. Its graph memory stays reserved
  // until a trim (graph_model.h invariant 4); its allocations outlive it.
  if (e->mem_reserved != 0) {
    fakecuda::OrphanGraphMem orphan;
    orphan.device = e->mem_device;
    orphan.bytes = e->mem_reserved;
    for (const GraphNode& n : *e->order) {
      if (n.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) orphan.allocs.push_back(n.alloc_dptr);
    }
    graphs.orphans().push_back(std::move(orphan));
  }
  if (GraphState* g = fakecuda::GraphById(st, e->graph_id);
      g != nullptr && g->alloc_exec == e->id) {
    g->alloc_exec = 0;
  }
  graphs.DestroyExec(e->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecDestroy");
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) try {
  FAKECUDA_ENTER(cuGraphLaunch)
  ModuleModel& m = fakecuda::Modules(st);
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  fakecuda::Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  // Measured: a graph launched into a capturing stream is refused and invalidates the capture.
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureRefuse(st, s, &r)) return r;
  const fakecuda::Context* stream_ctx = st->contexts().Find(s->ctx_id);
  if (stream_ctx == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (stream_ctx->sticky != CUDA_SUCCESS) return stream_ctx->sticky;

  // Pass 0: graph memory (graph_model.h invariant 4). Nothing of it survives a failed launch.
  std::shared_ptr<const std::vector<GraphNode>> order = exec->order;
  // Conditional nodes: the nodes this launch runs (graph_conditional.h invariant 3).
  if (CUresult e = fakecuda::ExpandConditionals(st, exec, &order); e != CUDA_SUCCESS) return e;
  std::vector<CUdeviceptr> made;
  if (CUresult e = fakecuda::TakeGraphMemory(st, exec, s, &made); e != CUDA_SUCCESS) return e;

  // Pass 1: resolve every node into an op (nothing is queued if any node fails).
  std::vector<fakecuda::Op> ops(order->size());
  for (size_t i = 0; i < order->size(); ++i) {
    const GraphNode& n = (*order)[i];
    fakecuda::Op& op = ops[i];
    if (n.disabled) {  // cuGraphNodeSetEnabled: "functionally equivalent to empty nodes"
      op.what = "cuGraphLaunch (disabled node)";
      continue;
    }
    switch (n.type) {
      case CU_GRAPH_NODE_TYPE_EMPTY:
        op.what = "cuGraphLaunch (empty node)";
        break;
      case CU_GRAPH_NODE_TYPE_CONDITIONAL:  // after the body it selected (ExpandConditionals)
        op.what = "cuGraphLaunch (conditional node)";
        break;
      case CU_GRAPH_NODE_TYPE_KERNEL: {
        auto f = m.functions.find(n.function_id);
        if (f == m.functions.end()) {  // module unloaded
          return fakecuda::Unmake(st, made, CUDA_ERROR_INVALID_HANDLE);
        }
        if (CUresult e = fakecuda::MakeKernelOp(st, f->second, n.config, n.params,
                                                "cuGraphLaunch (kernel node)", &op);
            e != CUDA_SUCCESS) {
          return fakecuda::Unmake(st, made, e);
        }
        break;
      }
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (CUresult e = fakecuda::MemcpyOp(st, n.copy, &op); e != CUDA_SUCCESS) {
          return fakecuda::Unmake(st, made, e);
        }
        break;
      case CU_GRAPH_NODE_TYPE_MEMSET:
        if (CUresult e = fakecuda::MemsetOp(st, n.memset, &op); e != CUDA_SUCCESS) {
          return fakecuda::Unmake(st, made, e);
        }
        break;
      case CU_GRAPH_NODE_TYPE_HOST: {
        op.what = "cuGraphLaunch (host node)";
        op.kind = fakecuda::OpKind::kHostFunction;
        op.cost_us = DriverState::kHostFunctionCostUs;
        CUhostFn fn = n.host_fn;
        void* data = n.host_data;
        op.body = [fn, data] {
          fn(data);
          return CUDA_SUCCESS;
        };
        break;
      }
      case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
        fakecuda::Event* e = st->FindEvent(n.event);
        if (e == nullptr) {  // destroyed since
          return fakecuda::Unmake(st, made, CUDA_ERROR_INVALID_HANDLE);
        }
        if (n.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD && e->ctx_id != s->ctx_id) {
          return fakecuda::Unmake(st, made, CUDA_ERROR_INVALID_HANDLE);  // as cuEventRecord
        }
        op.what = "cuGraphLaunch (event wait node)";
        break;
      }
      case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        op.what = "cuGraphLaunch (memory alloc node)";  // made live in pass 0
        break;
      case CU_GRAPH_NODE_TYPE_MEM_FREE:
        fakecuda::MemFreeOp(st, n.alloc_dptr, &op);
        break;
      case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        if (CUresult e = fakecuda::BatchMemOpOp(st, n, &op); e != CUDA_SUCCESS) {
          return fakecuda::Unmake(st, made, e);
        }
        break;
      default:
        return fakecuda::Unmake(st, made, CUDA_ERROR_NOT_SUPPORTED);
    }
  }

  // The executable graph's user object references stay alive until the launch's last op is done
  // (graphx_entry.cc; event record nodes are queued by RecordEvent, so the last other op).
  bool refs_kept = false;
  if (exec->user_refs != nullptr) {
    fakecuda::Op* last = nullptr;
    for (size_t i = 0; i < order->size(); ++i) {
      if ((*order)[i].type != CU_GRAPH_NODE_TYPE_EVENT_RECORD) last = &ops[i];
    }
    if (last != nullptr) {
      last->body = [inner = std::move(last->body), keep = exec->user_refs]() -> CUresult {
        (void)keep;
        return inner ? inner() : CUDA_SUCCESS;
      };
      refs_kept = true;
    }
  }
  // Pass 2: queue them in order. The lock is released while eager work runs, so every object is
  // found again by id.
  std::uint64_t stream_id = s->id;
  std::uint64_t exec_id = exec->id;
  fakecuda::Op head;
  head.what = "cuGraphLaunch";
  if (exec->user_refs != nullptr && !refs_kept) {
    head.body = [keep = exec->user_refs]() -> CUresult {
      (void)keep;
      return CUDA_SUCCESS;
    };
  }
  if (exec->last_seq != 0 && exec->last_stream != stream_id) {
    head.deps.emplace_back(exec->last_stream, exec->last_seq);
  }
  std::uint64_t last_seq = st->Enqueue(s, std::move(head));
  const std::uint64_t head_seq = last_seq;
  for (size_t i = 0; i < order->size(); ++i) {
    const GraphNode& n = (*order)[i];
    // The race detector orders each node by the graph's edges, not by the stream (header).
    if (fakecuda::RaceDetector* race = st->race()) {
      fakecuda::Stream* cur = st->FindStream(stream_id);
      if (cur == nullptr) return CUDA_ERROR_INVALID_HANDLE;
      race->OnGraphNode(st, *cur, exec_id, n.id, head_seq, n.deps);
      if (n.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
        race->OnGraphJoin(*cur, exec_id, {n.id}, cur->last_enqueued_seq);
      } else {
        ops[i].graph_exec = exec_id;
        ops[i].graph_node = n.id;
      }
    }
    if (n.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
      if (CUresult e = fakecuda::RecordEvent(st, n.event, hStream); e != CUDA_SUCCESS) {
        return e;
      }
      if (fakecuda::Stream* cur = st->FindStream(stream_id)) last_seq = cur->last_enqueued_seq;
      continue;
    }
    if (n.type == CU_GRAPH_NODE_TYPE_WAIT_EVENT) {
      // Waits for the event's most recent record as of this launch.
      fakecuda::Event* e = st->FindEvent(n.event);
      if (e != nullptr && e->stream_id != 0 && !e->complete) {
        ops[i].deps.emplace_back(e->stream_id, e->seq);
      }
      if (e != nullptr) {  // the order itself, for the race detector
        ops[i].after_stream = e->stream_id;
        ops[i].after_seq = e->seq;
      }
    }
    fakecuda::Stream* cur = st->FindStream(stream_id);
    if (cur == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // destroyed by another thread meanwhile
    last_seq = st->Enqueue(cur, std::move(ops[i]));
  }
  if (fakecuda::RaceDetector* race = st->race()) {
    if (fakecuda::Stream* cur = st->FindStream(stream_id)) {
      std::vector<std::uint64_t> all;
      all.reserve(order->size());
      for (const GraphNode& n : *order) all.push_back(n.id);
      race->OnGraphJoin(*cur, exec_id, all, last_seq);
    }
  }
  if (GraphExecState* again = st->graphs().FindExec(
          fakecuda::EncodeHandle<CUgraphExec>(HandleKind::kGraphExec, exec_id))) {
    again->last_stream = stream_id;
    again->last_seq = last_seq;
  }
  return fakecuda::TakeRaceVerdict();
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphLaunch");
}

}  // extern "C"
