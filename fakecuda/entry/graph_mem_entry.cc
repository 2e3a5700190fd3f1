// Copyright 2026 The cuhal Authors.
// Entry points: child graph nodes and graph memory (memory alloc/free nodes, cuGraphUpload,
// cuDeviceGetGraphMemAttribute / cuDeviceSetGraphMemAttribute, cuDeviceGraphMemTrim), and the
// launch-time half of graph memory that cuGraphLaunch calls (graph_internal.h). The model is
// graph_model.h's invariant 4; the H200's answers are in docs/driver_facts.md ("Stream capture
// and graphs"): an alloc node's address is set when it is added; nothing is reserved until the
// executable graph is uploaded or launched, then its allocations rounded up to 32 MiB (used =
// reserved); a launch while an allocation it made (with no free node in the graph) is still live
// is CUDA_ERROR_INVALID_VALUE; the memory stays reserved after the allocation is freed until
// cuDeviceGraphMemTrim, which releases it even while the executable graph lives; the high
// watermarks can only be reset to 0.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/graph_conditional_hooks.h"
#include "fakecuda/entry/graph_internal.h"
#include "fakecuda/internal/graph_model.h"

using fakecuda::DriverState;
using fakecuda::GraphAlloc;
using fakecuda::GraphExecState;
using fakecuda::GraphModel;
using fakecuda::GraphNode;
using fakecuda::GraphState;
using fakecuda::HandleKind;

namespace fakecuda {
namespace {

std::uint64_t RoundUpGranule(std::uint64_t bytes) {
  return (bytes + kGraphMemGranule - 1) / kGraphMemGranule * kGraphMemGranule;
}

// Whether any of `allocs` is live in the memory map.
bool AnyLive(DriverState* st, const std::vector<CUdeviceptr>& allocs) CUHAL_REQUIRES(st->mu) {
  for (CUdeviceptr d : allocs) {
    if (st->memory().At(d) != nullptr) return true;
  }
  return false;
}

std::vector<CUdeviceptr> AllocsOf(const GraphExecState& exec) {
  std::vector<CUdeviceptr> out;
  for (const GraphNode& n : *exec.order) {
    if (n.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) out.push_back(n.alloc_dptr);
  }
  return out;
}

// Whether a graph's nodes (a child graph's copy included) hold memory nodes.
bool HasMemoryNodes(const std::vector<GraphNode>& nodes) {
  for (const GraphNode& n : nodes) {
    if (n.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || n.type == CU_GRAPH_NODE_TYPE_MEM_FREE)
      return true;
    if (n.child != nullptr && HasMemoryNodes(*n.child)) return true;
  }
  return false;
}

}  // namespace

CUdeviceptr ReserveGraphAlloc(DriverState* st, int device, std::size_t bytes) {
  const CUdeviceptr dptr = st->ReserveVa(device, bytes);
  GraphAlloc alloc;
  alloc.bytes = bytes;
  alloc.device = device;
  st->graphs().AddGraphAlloc(dptr, alloc);
  return dptr;
}

void ReserveGraphMemory(DriverState* st, GraphExecState* exec) {
  if (exec->mem_reserved != 0) return;
  std::uint64_t total = 0;
  int device = 0;
  for (const GraphNode& n : *exec->order) {
    if (n.type != CU_GRAPH_NODE_TYPE_MEM_ALLOC) continue;
    total += n.alloc_bytes;
    device = n.alloc_device;
  }
  if (total == 0) return;
  exec->mem_device = device;
  exec->mem_reserved = RoundUpGranule(total);
  GraphMemStats& stats = st->graphs().mem_stats(device);
  stats.reserved += exec->mem_reserved;
  stats.reserved_high = std::max(stats.reserved_high, stats.reserved);
  stats.used_high = std::max(stats.used_high, stats.reserved);
}

CUresult TakeGraphMemory(DriverState* st, GraphExecState* exec, const Stream* s,
                         std::vector<CUdeviceptr>* made) {
  std::set<CUdeviceptr> freed_here;
  bool any = false;
  for (const GraphNode& n : *exec->order) {
    if (n.type == CU_GRAPH_NODE_TYPE_MEM_FREE) freed_here.insert(n.alloc_dptr);
    any = any || n.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  }
  if (!any) return CUDA_SUCCESS;
  for (const GraphNode& n : *exec->order) {
    if (n.type != CU_GRAPH_NODE_TYPE_MEM_ALLOC) continue;
    if (st->memory().At(n.alloc_dptr) != nullptr && freed_here.count(n.alloc_dptr) == 0) {
      return CUDA_ERROR_INVALID_VALUE;  // measured: its previous allocation is still live
    }
  }
  ReserveGraphMemory(st, exec);
  for (const GraphNode& n : *exec->order) {
    if (n.type != CU_GRAPH_NODE_TYPE_MEM_ALLOC) continue;
    GraphAlloc* ga = st->graphs().FindGraphAlloc(n.alloc_dptr);
    if (ga == nullptr) continue;  // cannot happen: alloc records are never erased
    ++ga->launch;
    if (st->memory().At(n.alloc_dptr) != nullptr)
      continue;  // a queued earlier launch's: taken over
    Allocation a;
    a.data = MemoryMap::AllocateBacking(n.alloc_bytes, &a.mmapped, &a.mapped_size);
    if (a.data == nullptr) {
      for (CUdeviceptr d : *made) st->ReleaseAllocation(d);
      made->clear();
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a.id = st->NewId();
    a.type = MemoryType::kDevice;
    a.base = n.alloc_dptr;
    a.size = n.alloc_bytes;
    a.device = n.alloc_device;
    a.ctx_id = s->ctx_id;
    a.created_by = "cuGraphLaunch (memory alloc node)";
    ga->allocation_id = a.id;
    made->push_back(a.base);
    st->AddDeviceAllocation(std::move(a));
  }
  return CUDA_SUCCESS;
}

void MemFreeOp(DriverState* st, CUdeviceptr dptr, Op* op) {
  op->what = "cuGraphLaunch (memory free node)";
  const GraphAlloc* ga = st->graphs().FindGraphAlloc(dptr);
  if (ga == nullptr) return;
  const std::uint64_t allocation_id = ga->allocation_id;
  const std::uint64_t launch = ga->launch;
  // Runs with the lock released: takes it, and frees only the allocation of this launch
  // (graph_model.h invariant 4).
  op->body = [st, dptr, allocation_id, launch] {
    cuhal::MutexLock body_lock(st->mu);
    const GraphAlloc* now = st->graphs().FindGraphAlloc(dptr);
    const Allocation* a = st->memory().At(dptr);
    if (now != nullptr && a != nullptr && a->id == allocation_id && now->launch == launch) {
      st->ReleaseAllocation(dptr);
    }
    return CUDA_SUCCESS;
  };
}

std::vector<GraphNode> FlattenChildGraphs(DriverState* st, std::vector<GraphNode> nodes) {
  // Pass 1: each child node's expansion and its sinks.
  std::map<std::uint64_t, std::vector<std::uint64_t>> sinks;  // child node id -> what follows
  std::vector<GraphNode> out;
  for (const GraphNode& n : nodes) {
    if (n.type != CU_GRAPH_NODE_TYPE_GRAPH) continue;
    std::vector<GraphNode> inner =
        n.child != nullptr ? FlattenChildGraphs(st, *n.child) : std::vector<GraphNode>{};
    std::map<std::uint64_t, std::uint64_t> fresh;
    for (const GraphNode& c : inner) fresh[c.id] = st->NewId();
    std::set<std::uint64_t> depended;
    for (GraphNode& c : inner) {
      c.id = fresh.at(c.id);
      c.from_child = n.id;  // the outermost child graph node wins (set last)
      for (std::uint64_t& d : c.deps) {
        d = fresh.at(d);
        depended.insert(d);
      }
      if (c.deps.empty()) c.deps = n.deps;  // the child's roots follow the child node's deps
    }
    std::vector<std::uint64_t>& after = sinks[n.id];
    for (const GraphNode& c : inner) {
      if (depended.count(c.id) == 0) after.push_back(c.id);
    }
    if (inner.empty()) after = n.deps;  // an empty child graph passes its deps through
    for (GraphNode& c : inner) out.push_back(std::move(c));
  }
  for (GraphNode& n : nodes) {
    if (n.type != CU_GRAPH_NODE_TYPE_GRAPH) out.push_back(std::move(n));
  }
  // Pass 2: dependencies on a child node become dependencies on its sinks (repeatedly: a sink
  // list may name another child node).
  for (GraphNode& n : out) {
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<std::uint64_t> deps;
      for (std::uint64_t d : n.deps) {
        auto it = sinks.find(d);
        if (it == sinks.end()) {
          deps.push_back(d);
        } else {
          deps.insert(deps.end(), it->second.begin(), it->second.end());
          changed = true;
        }
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      n.deps = std::move(deps);
    }
  }
  return out;
}

}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuGraphAddChildGraphNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                          const CUgraphNode* dependencies, size_t numDependencies,
                                          CUgraph childGraph) try {
  FAKECUDA_ENTER(cuGraphAddChildGraphNode)
  if (phGraphNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphModel& graphs = st->graphs();
  GraphState* child = graphs.FindGraph(childGraph);
  if (child == nullptr || graphs.FindGraph(hGraph) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (child == graphs.FindGraph(hGraph)) return CUDA_ERROR_INVALID_VALUE;
  graphs.SyncEmbedded(child->id);  // its child nodes' embedded graphs as they are now
  auto copy = std::make_shared<std::vector<GraphNode>>();
  for (std::uint64_t id : child->nodes) copy->push_back(graphs.node(id));
  // Measured: a child graph with a memory alloc node is refused (free nodes: modelled alike).
  if (fakecuda::HasMemoryNodes(*copy)) return CUDA_ERROR_NOT_SUPPORTED;
  // A graph with conditional nodes, or a conditional node's body, cannot be a child graph:
  // CUDA_ERROR_NOT_SUPPORTED (measured 2026-12-06, H100 driver 580.159.04, graphnode_probe
  // "cond:graph_ops").
  if (child->owner_node != 0 || fakecuda::GraphHasConditional(st, *child)) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_GRAPH;
  node.child = std::move(copy);
  if (!child->user_refs.empty()) {
    node.child_refs = std::make_shared<const fakecuda::UserObjectRefs>(child->user_refs);
  }
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddChildGraphNode");
}

CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                        const CUgraphNode* dependencies, size_t numDependencies,
                                        CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphAddMemAllocNode)
  if (phGraphNode == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (st->graphs().FindGraph(hGraph) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUmemPoolProps& props = nodeParams->poolProps;
  if (nodeParams->bytesize == 0 ||
      fakecuda::EnumBits(props.allocType) != CU_MEM_ALLOCATION_TYPE_PINNED ||
      fakecuda::EnumBits(props.location.type) != CU_MEM_LOCATION_TYPE_DEVICE ||
      !fakecuda::ValidDevice(st, props.location.id)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  node.alloc_bytes = nodeParams->bytesize;
  node.alloc_device = props.location.id;
  // Kept for cuGraphMemAllocNodeGetParams (graphx_entry.cc).
  if (nodeParams->accessDescs != nullptr) {
    node.alloc_access.assign(nodeParams->accessDescs,
                             nodeParams->accessDescs + nodeParams->accessDescCount);
  }
  // Reserved only once the node is sure to be added (AddNode checks the dependencies first).
  fakecuda::GraphState* g = st->graphs().FindGraph(hGraph);
  for (size_t i = 0; i < numDependencies; ++i) {
    if (dependencies == nullptr ||
        !st->graphs().NodeIn(fakecuda::DecodeHandle(HandleKind::kGraphNode, dependencies[i]),
                             g->id)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  node.alloc_dptr = fakecuda::ReserveGraphAlloc(st, node.alloc_device, node.alloc_bytes);
  const CUdeviceptr dptr = node.alloc_dptr;
  CUresult r =
      fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
  if (r == CUDA_SUCCESS) nodeParams->dptr = dptr;
  return r;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddMemAllocNode");
}

CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                       const CUgraphNode* dependencies, size_t numDependencies,
                                       CUdeviceptr dptr) try {
  FAKECUDA_ENTER(cuGraphAddMemFreeNode)
  if (phGraphNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured: only the address of a graph allocation, and only once per graph.
  if (graphs.FindGraphAlloc(dptr) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint64_t id : g->nodes) {
    const GraphNode& n = graphs.node(id);
    if (n.type == CU_GRAPH_NODE_TYPE_MEM_FREE && n.alloc_dptr == dptr)
      return CUDA_ERROR_INVALID_VALUE;
  }
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  node.alloc_dptr = dptr;
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddMemFreeNode");
}

// Uploading maps the executable graph's memory (measured: reserved from the upload on); the fake
// has nothing else to upload, so it queues nothing.
CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) try {
  FAKECUDA_ENTER(cuGraphUpload)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err;
  fakecuda::Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  fakecuda::ReserveGraphMemory(st, exec);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphUpload");
}

CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr,
                                              void* value) try {
  FAKECUDA_ENTER(cuDeviceGetGraphMemAttribute)
  if (!fakecuda::ValidDevice(st, device)) return CUDA_ERROR_INVALID_DEVICE;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const fakecuda::GraphMemStats& stats = st->graphs().mem_stats(device);
  cuuint64_t out = 0;
  switch (fakecuda::EnumBits(attr)) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
      out = stats.reserved;
      break;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
      out = stats.used_high;
      break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
      out = stats.reserved_high;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  *static_cast<cuuint64_t*>(value) = out;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetGraphMemAttribute");
}

CUresult CUDAAPI cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr,
                                              void* value) try {
  FAKECUDA_ENTER(cuDeviceSetGraphMemAttribute)
  if (!fakecuda::ValidDevice(st, device)) return CUDA_ERROR_INVALID_DEVICE;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured: only the high watermarks, and only to 0.
  if (*static_cast<const cuuint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::GraphMemStats& stats = st->graphs().mem_stats(device);
  switch (fakecuda::EnumBits(attr)) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
      stats.used_high = 0;
      return CUDA_SUCCESS;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
      stats.reserved_high = 0;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceSetGraphMemAttribute");
}

CUresult CUDAAPI cuDeviceGraphMemTrim(CUdevice device) try {
  FAKECUDA_ENTER(cuDeviceGraphMemTrim)
  if (!fakecuda::ValidDevice(st, device)) return CUDA_ERROR_INVALID_DEVICE;
  GraphModel& graphs = st->graphs();
  fakecuda::GraphMemStats& stats = graphs.mem_stats(device);
  // Measured: memory no live allocation uses is released, even while its executable graph lives.
  for (auto& [id, exec] : graphs.execs()) {
    if (exec.mem_reserved == 0 || exec.mem_device != device) continue;
    if (fakecuda::AnyLive(st, fakecuda::AllocsOf(exec))) continue;
    stats.reserved -= std::min(stats.reserved, exec.mem_reserved);
    exec.mem_reserved = 0;
  }
  std::vector<fakecuda::OrphanGraphMem>& orphans = graphs.orphans();
  for (auto it = orphans.begin(); it != orphans.end();) {
    if (it->device == device && !fakecuda::AnyLive(st, it->allocs)) {
      stats.reserved -= std::min(stats.reserved, it->bytes);
      it = orphans.erase(it);
    } else {
      ++it;
    }
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGraphMemTrim");
}

}  // extern "C"
