// Copyright 2026 The cuhal Authors.
// Entry points: updating an executable graph in place, node by node
// (cuGraphExec{Kernel,Memset,Memcpy}NodeSetParams) or from a whole graph of the same shape
// (cuGraphExecUpdate, with its result info). What the H200 answers was measured by
// ci/gpu-probes/graph_probe.cc (ci/gpu-probes/results/2026-12-03-probe-graph.txt, the
// `exec_update:*` cases); tests/fakecuda/graph_update_test.cc pins each answer.
//
// Modelling (see also docs/driver_facts.md):
//  - An executable graph keeps the ids of the nodes it was instantiated from (graph_model.h
//    invariant 3), so the node setters take the ORIGINAL graph's node handles, also after a
//    cuGraphExecUpdate (as the CUDA documentation says: "hNode must not have been removed from
//    the original graph"). An update replaces node parameters only; ids and edges stay.
//  - Changes take effect at the next launch: launches already queued resolved their nodes when
//    they were enqueued (graph_entry.cc, pass 1), so they are unaffected.
//  - cuGraphExecUpdate pairs the nodes of the new graph with the executable graph's in the
//    topological order both were put in (ties broken by creation order; for a cuGraphClone of the
//    original graph this is the creation order the CUDA documentation describes). Its checks, in
//    this order: node count (TOPOLOGY_CHANGED, errorNode null: measured), per paired node the
//    dependency count and each dependency in edge order (TOPOLOGY_CHANGED, errorNode the new node,
//    errorFromNode the mismatched dependency: documented, unmeasured), the node type
//    (NODE_TYPE_CHANGED, errorNode set: measured), then the parameters: a kernel whose function
//    belongs to another context (UNSUPPORTED_FUNCTION_CHANGE, documented), a memset whose 2D shape
//    or element size changed, a memcpy whose memory types changed or that is not 1D
//    (PARAMETERS_CHANGED, documented). Any failure leaves the executable graph untouched
//    (measured: the next launch runs the old parameters) and returns
//    CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE. Changing a kernel's parameters, grid or function
//    (same context), or a memset's value or target, succeeds (measured).
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/graph_conditional_hooks.h"
#include "fakecuda/entry/graph_internal.h"
#include "fakecuda/internal/graph_model.h"
#include "fakecuda/internal/library_model.h"
#include "fakecuda/internal/module_model.h"

using fakecuda::DriverState;
using fakecuda::GraphExecState;
using fakecuda::GraphModel;
using fakecuda::GraphNode;
using fakecuda::GraphState;
using fakecuda::HandleKind;

namespace fakecuda {

// Defined in graph_entry.cc: whether a memcpy / memset node's parameters resolve now (the checks
// cuGraphAddMemcpyNode / cuGraphAddMemsetNode make).
CUresult CheckMemcpyNodeParams(DriverState* st, const CUDA_MEMCPY3D& c) CUHAL_REQUIRES(st->mu);
CUresult CheckMemsetNodeParams(DriverState* st, const CUDA_MEMSET_NODE_PARAMS& m)
    CUHAL_REQUIRES(st->mu);

namespace {

// The executable graph's node list, writable: copied first when a queued launch still reads the
// current one (copy on write), else changed in place. The list was made non-const by
// cuGraphInstantiateWithFlags (std::make_shared<std::vector<GraphNode>>), so the cast is sound.
std::vector<GraphNode>& WritableOrder(GraphExecState& exec) {
  if (exec.order.use_count() != 1) {
    exec.order = std::make_shared<std::vector<GraphNode>>(*exec.order);
  }
  return const_cast<std::vector<GraphNode>&>(*exec.order);
}

// The node `id` among `nodes` or in the body snapshots of their conditional nodes (recursively).
const GraphNode* FindInNodes(const std::vector<GraphNode>& nodes, std::uint64_t id) {
  for (const GraphNode& n : nodes) {
    if (n.id == id) return &n;
    if (n.type == CU_GRAPH_NODE_TYPE_CONDITIONAL && n.cond.snapshot != nullptr) {
      for (const std::vector<GraphNode>& body : *n.cond.snapshot) {
        if (const GraphNode* f = FindInNodes(body, id)) return f;
      }
    }
  }
  return nullptr;
}

// Replaces the node of next.id among `nodes` or in a body snapshot (each snapshot on the way
// copied first: launches still queued keep theirs). True when found.
bool ReplaceInNodes(std::vector<GraphNode>& nodes, const GraphNode& next) {
  for (GraphNode& n : nodes) {
    if (n.id == next.id) {
      n = next;
      return true;
    }
    if (n.type == CU_GRAPH_NODE_TYPE_CONDITIONAL && n.cond.snapshot != nullptr) {
      auto copy = std::make_shared<std::vector<std::vector<GraphNode>>>(*n.cond.snapshot);
      for (std::vector<GraphNode>& body : *copy) {
        if (ReplaceInNodes(body, next)) {
          n.cond.snapshot = std::move(copy);
          return true;
        }
      }
    }
  }
  return false;
}

// The node `handle` (a node of the graph `exec` was made from, or of a conditional node's body
// in it) in `exec`, or null. Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe
// "cond:graph_ops"): a body's kernel node takes cuGraphExecNodeSetParams, and the next launch
// runs the new parameters.
const GraphNode* FindExecNode(const GraphExecState& exec, CUgraphNode handle) {
  if (handle == nullptr) return nullptr;
  return FindInNodes(*exec.order, DecodeHandle(HandleKind::kGraphNode, handle));
}

void ReplaceExecNode(GraphExecState& exec, const GraphNode& next) {
  ReplaceInNodes(WritableOrder(exec), next);
}

// The memory type of one side of a copy, as an operand class (host or device-addressed).
int SideType(CUmemorytype t) { return static_cast<int>(t); }

bool IsOneDimensional(const CUDA_MEMCPY3D& c) {
  return std::max<std::size_t>(c.Height, 1) == 1 && std::max<std::size_t>(c.Depth, 1) == 1 &&
         c.srcY == 0 && c.srcZ == 0 && c.dstY == 0 && c.dstZ == 0;
}

// Fills a kernel node's function, configuration and packed parameters from `p` (the checks of
// cuGraphAddKernelNode); `ctx_id` is the context the node's function must keep (0: any).
CUresult KernelNodeFrom(DriverState* st, const CUDA_KERNEL_NODE_PARAMS& p, std::uint64_t ctx_id,
                        GraphNode* node) CUHAL_REQUIRES(st->mu) {
  FunctionState* f = nullptr;
  if (CUresult e = ResolveNodeFunction(st, p.func, p.kern, p.ctx, &f); e != CUDA_SUCCESS) return e;
  // "The owning context of the function cannot change" (CUDA documentation).
  if (ctx_id != 0 && f->ctx_id != ctx_id) return CUDA_ERROR_INVALID_VALUE;
  LaunchConfig config = {{p.gridDimX, p.gridDimY, p.gridDimZ},
                         {p.blockDimX, p.blockDimY, p.blockDimZ},
                         p.sharedMemBytes};
  if (CUresult e = ValidateLaunch(st, *f, config); e != CUDA_SUCCESS) return e;
  std::vector<std::byte> params;
  if (CUresult e = PackParams(f->kernel, p.kernelParams, p.extra, &params); e != CUDA_SUCCESS) {
    return e;
  }
  node->function_id = f->id;
  node->config = config;
  node->params = std::move(params);
  return CUDA_SUCCESS;
}

// The context id of a kernel node's function (0 when the function is gone).
std::uint64_t FunctionContext(DriverState* st, std::uint64_t function_id) CUHAL_REQUIRES(st->mu) {
  ModuleModel& m = Modules(st);
  auto it = m.functions.find(function_id);
  return it == m.functions.end() ? 0 : it->second.ctx_id;
}

// Whether a memset of `to` may replace one of `from` in an executable graph: "for 2d memsets,
// only address and assigned value may be updated" (CUDA documentation); 1D memsets may also
// change their width. The element size stays (the work resources are per element size).
bool MemsetShapeKept(const CUDA_MEMSET_NODE_PARAMS& from, const CUDA_MEMSET_NODE_PARAMS& to) {
  if (from.elementSize != to.elementSize) return false;
  const bool from_2d = std::max<std::size_t>(from.height, 1) > 1;
  const bool to_2d = std::max<std::size_t>(to.height, 1) > 1;
  if (from_2d || to_2d) {
    return from.width == to.width && from.height == to.height && from.pitch == to.pitch;
  }
  return true;
}

// Whether a memcpy of `to` may replace one of `from`: both 1D, the same memory types, non-empty.
bool MemcpyShapeKept(const CUDA_MEMCPY3D& from, const CUDA_MEMCPY3D& to) {
  return IsOneDimensional(from) && IsOneDimensional(to) && to.WidthInBytes != 0 &&
         SideType(from.srcMemoryType) == SideType(to.srcMemoryType) &&
         SideType(from.dstMemoryType) == SideType(to.dstMemoryType);
}

// The nodes of `g` in the order cuGraphInstantiateWithFlags puts them (Kahn's algorithm, the
// earliest created ready node first).
std::vector<const GraphNode*> TopologicalOrder(const GraphModel& graphs, const GraphState& g) {
  std::map<std::uint64_t, int> indegree;
  std::map<std::uint64_t, std::vector<std::uint64_t>> dependents;
  for (std::uint64_t id : g.nodes) {
    const GraphNode& n = graphs.node(id);
    indegree[id] += 0;
    for (std::uint64_t d : n.deps) {
      ++indegree[id];
      dependents[d].push_back(id);
    }
  }
  std::set<std::uint64_t> ready;
  for (const auto& [id, deg] : indegree) {
    if (deg == 0) ready.insert(id);
  }
  std::vector<const GraphNode*> order;
  while (!ready.empty()) {
    const std::uint64_t id = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(&graphs.node(id));
    for (std::uint64_t next : dependents[id]) {
      if (--indegree[next] == 0) ready.insert(next);
    }
  }
  return order;
}

CUgraphNode NodeHandle(std::uint64_t id) {
  return EncodeHandle<CUgraphNode>(HandleKind::kGraphNode, id);
}

// cuGraphExecUpdate's checks (see the top of the file) of the nodes `old` (an executable graph's,
// or a conditional node's body snapshot at `depth` > 0) against `fresh`. On success fills
// `updated` with the old nodes carrying the new parameters.
CUgraphExecUpdateResult CheckUpdate(DriverState* st, const std::vector<GraphNode>& old,
                                    const std::vector<const GraphNode*>& fresh,
                                    CUgraphNode* error_node, CUgraphNode* error_from,
                                    std::vector<GraphNode>* updated, int depth = 0)
    CUHAL_REQUIRES(st->mu) {
  if (fresh.size() != old.size()) return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
  std::map<std::uint64_t, std::uint64_t> paired;  // new node id -> executable graph node id
  for (std::size_t i = 0; i < old.size(); ++i) paired[fresh[i]->id] = old[i].id;
  for (std::size_t i = 0; i < old.size(); ++i) {
    const GraphNode& n = *fresh[i];
    if (n.deps.size() != old[i].deps.size()) {
      *error_node = NodeHandle(n.id);
      return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    }
    for (std::size_t d = 0; d < n.deps.size(); ++d) {
      if (paired[n.deps[d]] != old[i].deps[d]) {
        *error_node = NodeHandle(n.id);
        *error_from = NodeHandle(n.deps[d]);
        return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
      }
    }
  }
  updated->assign(old.begin(), old.end());
  for (std::size_t i = 0; i < old.size(); ++i) {
    const GraphNode& n = *fresh[i];
    GraphNode& u = (*updated)[i];
    if (n.type != old[i].type) {
      *error_node = NodeHandle(n.id);
      return CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
    }
    switch (n.type) {
      case CU_GRAPH_NODE_TYPE_KERNEL:
        if (FunctionContext(st, n.function_id) != FunctionContext(st, old[i].function_id)) {
          *error_node = NodeHandle(n.id);
          return CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
        }
        u.function_id = n.function_id;
        u.config = n.config;
        u.params = n.params;
        break;
      case CU_GRAPH_NODE_TYPE_MEMSET:
        if (!MemsetShapeKept(old[i].memset, n.memset)) {
          *error_node = NodeHandle(n.id);
          return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
        }
        u.memset = n.memset;
        break;
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (!MemcpyShapeKept(old[i].copy, n.copy)) {
          *error_node = NodeHandle(n.id);
          return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
        }
        u.copy = n.copy;
        break;
      case CU_GRAPH_NODE_TYPE_HOST:
        u.host_fn = n.host_fn;
        u.host_data = n.host_data;
        break;
      case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        u.event = n.event;
        break;
      case CU_GRAPH_NODE_TYPE_EMPTY:
        break;
      case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
        // Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "cond:graph_ops"): a
        // conditional node of the same type and size updates its bodies node by node (the next
        // launch uses the new graph's handle default and body parameters); a body of another
        // node count is TOPOLOGY_CHANGED with no error node; another conditional type is
        // ERROR_NOT_SUPPORTED with the node.
        std::vector<GraphNode> probe{n};  // the new node's bodies, as instantiation copies them
        if (n.cond.type != old[i].cond.type || n.cond.size != old[i].cond.size ||
            old[i].cond.snapshot == nullptr || depth > 64 ||
            SnapshotConditionals(st, &probe) != CUDA_SUCCESS || probe[0].cond.snapshot == nullptr ||
            probe[0].cond.snapshot->size() != old[i].cond.snapshot->size()) {
          *error_node = NodeHandle(n.id);
          return CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;
        }
        auto bodies = std::make_shared<std::vector<std::vector<GraphNode>>>();
        for (std::size_t b = 0; b < probe[0].cond.snapshot->size(); ++b) {
          std::vector<const GraphNode*> fresh_body;
          for (const GraphNode& x : (*probe[0].cond.snapshot)[b]) fresh_body.push_back(&x);
          std::vector<GraphNode> updated_body;
          CUgraphNode body_node = nullptr, body_from = nullptr;  // not reported (measured)
          const CUgraphExecUpdateResult r =
              CheckUpdate(st, (*old[i].cond.snapshot)[b], fresh_body, &body_node, &body_from,
                          &updated_body, depth + 1);
          if (r != CU_GRAPH_EXEC_UPDATE_SUCCESS) return r;
          bodies->push_back(std::move(updated_body));
        }
        u.cond.snapshot = std::move(bodies);
        u.cond.handle = n.cond.handle;
        break;
      }
      default:
        *error_node = NodeHandle(n.id);
        return CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;
    }
  }
  return CU_GRAPH_EXEC_UPDATE_SUCCESS;
}

}  // namespace

// Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "setparams:exec"): a child graph
// of the same shape is taken (the next launch runs its parameters); another shape (an empty
// child for a one-node one) is CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE. The expanded nodes are
// paired with the new child's in creation order (their ids were made in that order at
// instantiation) and checked as cuGraphExecUpdate checks nodes.
CUresult ExecSetChildGraph(DriverState* st, GraphExecState* exec, std::uint64_t child_node,
                           const GraphState& child) {
  GraphModel& graphs = st->graphs();
  std::vector<GraphNode> old;
  for (const GraphNode& n : *exec->order) {
    if (n.from_child == child_node) old.push_back(n);
  }
  std::sort(old.begin(), old.end(),
            [](const GraphNode& a, const GraphNode& b) { return a.id < b.id; });
  std::set<std::uint64_t> inside;
  for (const GraphNode& n : old) inside.insert(n.id);
  std::vector<GraphNode> stripped = old;  // edges to nodes outside the child dropped
  for (GraphNode& n : stripped) {
    std::vector<std::uint64_t> deps;
    for (std::uint64_t d : n.deps) {
      if (inside.count(d) != 0) deps.push_back(d);
    }
    n.deps = std::move(deps);
  }
  std::vector<GraphNode> copy;
  for (std::uint64_t id : child.nodes) copy.push_back(graphs.node(id));
  const std::vector<GraphNode> fresh_nodes = FlattenChildGraphs(st, std::move(copy));
  std::vector<const GraphNode*> fresh;
  for (const GraphNode& n : fresh_nodes) fresh.push_back(&n);
  std::vector<GraphNode> updated;
  CUgraphNode error_node = nullptr, error_from = nullptr;
  if (CheckUpdate(st, stripped, fresh, &error_node, &error_from, &updated) !=
      CU_GRAPH_EXEC_UPDATE_SUCCESS) {
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  for (std::size_t i = 0; i < updated.size(); ++i) {
    GraphNode next = updated[i];
    next.deps = old[i].deps;  // the edges of the executable graph stay
    ReplaceExecNode(*exec, next);
  }
  return CUDA_SUCCESS;
}

}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_KERNEL_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphExecKernelNodeSetParams)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* found = fakecuda::FindExecNode(*exec, hNode);
  if (found == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode& current = *found;
  if (current.type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
  GraphNode next = current;
  const std::uint64_t ctx_id = fakecuda::FunctionContext(st, current.function_id);
  if (CUresult e = fakecuda::KernelNodeFrom(st, *nodeParams, ctx_id, &next); e != CUDA_SUCCESS) {
    return e;
  }
  fakecuda::ReplaceExecNode(*exec, next);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecKernelNodeSetParams");
}

CUresult CUDAAPI cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_MEMSET_NODE_PARAMS* memsetParams,
                                                CUcontext ctx) try {
  FAKECUDA_ENTER(cuGraphExecMemsetNodeSetParams)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr || memsetParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* found = fakecuda::FindExecNode(*exec, hNode);
  if (found == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode& current = *found;
  if (current.type != CU_GRAPH_NODE_TYPE_MEMSET) return CUDA_ERROR_INVALID_VALUE;
  if (ctx == nullptr ? st->CurrentContext() == nullptr : st->FindContext(ctx) == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (!fakecuda::MemsetShapeKept(current.memset, *memsetParams)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckMemsetNodeParams(st, *memsetParams); e != CUDA_SUCCESS) return e;
  GraphNode next = current;
  next.memset = *memsetParams;
  fakecuda::ReplaceExecNode(*exec, next);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecMemsetNodeSetParams");
}

CUresult CUDAAPI cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_MEMCPY3D* copyParams,
                                                CUcontext ctx) try {
  FAKECUDA_ENTER(cuGraphExecMemcpyNodeSetParams)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr || copyParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* found = fakecuda::FindExecNode(*exec, hNode);
  if (found == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode& current = *found;
  if (current.type != CU_GRAPH_NODE_TYPE_MEMCPY) return CUDA_ERROR_INVALID_VALUE;
  if (ctx == nullptr ? st->CurrentContext() == nullptr : st->FindContext(ctx) == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  // "Both the instantiation-time memory operands and the memory operands in copyParams must be
  // 1-dimensional. Zero-length operations are not supported." (CUDA documentation)
  if (!fakecuda::MemcpyShapeKept(current.copy, *copyParams)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckMemcpyNodeParams(st, *copyParams); e != CUDA_SUCCESS) return e;
  GraphNode next = current;
  next.copy = *copyParams;
  fakecuda::ReplaceExecNode(*exec, next);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecMemcpyNodeSetParams");
}

CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                                   CUgraphExecUpdateResultInfo* resultInfo) try {
  FAKECUDA_ENTER(cuGraphExecUpdate)
  GraphModel& graphs = st->graphs();
  GraphExecState* exec = graphs.FindExec(hGraphExec);
  GraphState* g = graphs.FindGraph(hGraph);
  if (exec == nullptr || g == nullptr || resultInfo == nullptr) return CUDA_ERROR_INVALID_VALUE;
  resultInfo->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  resultInfo->errorNode = nullptr;
  resultInfo->errorFromNode = nullptr;
  graphs.SyncEmbedded(g->id);
  const std::vector<const GraphNode*> fresh = fakecuda::TopologicalOrder(graphs, *g);
  std::vector<GraphNode> updated;
  CUgraphNode error_node = nullptr;
  CUgraphNode error_from = nullptr;
  const CUgraphExecUpdateResult result =
      fakecuda::CheckUpdate(st, *exec->order, fresh, &error_node, &error_from, &updated);
  resultInfo->result = result;
  resultInfo->errorNode = error_node;
  resultInfo->errorFromNode = error_from;
  if (result != CU_GRAPH_EXEC_UPDATE_SUCCESS) return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  // Nodes disabled by cuGraphNodeSetEnabled stay disabled (measured, graphx_probe
  // "enabled:kernel").
  std::set<std::uint64_t> disabled;
  for (const GraphNode& n : *exec->order) {
    if (n.disabled) disabled.insert(n.id);
  }
  for (GraphNode& n : updated) n.disabled = disabled.count(n.id) != 0;
  exec->order = std::make_shared<std::vector<GraphNode>>(std::move(updated));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecUpdate");
}

}  // extern "C"
