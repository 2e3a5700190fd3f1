// Copyright 2026 The cuhal Authors.
// Entry points: the generic graph-node API (cuGraphAddNode, cuda.h 13's _v2 with edge data and
// the older symbol without; cuGraphNodeSetParams; cuGraphExecNodeSetParams), the memcpy and memset
// node getters and setters (cuGraphMemcpyNodeGetParams/SetParams, cuGraphMemsetNodeGetParams/
// SetParams) and conditional nodes (cuGraphConditionalHandleCreate,
// CU_GRAPH_NODE_TYPE_CONDITIONAL). The answers were measured on an H100 (driver 580.159.04,
// 2026-12-06, ci/gpu-probes/graphnode_probe.cc; docs/driver_facts.md). State:
// fakecuda/internal/graph_conditional.h (handles, a conditional node's bodies) in GraphModel.
//
// cuGraphAddNode checks what is common to every node (the parameter block's reserved bytes, the
// edge data), then hands the node to the type-specific cuGraphAdd*Node, so that a node added
// either way is checked alike. Conditional nodes are made here: the node, its handle, and its body
// graphs (written to the driver-owned array nodeParams->conditional.phGraph_out). The hooks at
// the end (declared in graph_conditional_hooks.h) put conditional nodes into the rest of the graph
// model: which nodes a body accepts, instantiation (each body's nodes copied), and each launch
// (every conditional node replaced by the body its value selects, graph_conditional.h
// invariant 3). What the real driver answers: docs/driver_facts.md, "Generic graph nodes and
// conditional nodes".
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/graph_conditional_hooks.h"
#include "fakecuda/entry/graph_internal.h"
#include "fakecuda/internal/graph_conditional.h"
#include "fakecuda/internal/graph_model.h"
#include "fakecuda/internal/module_model.h"

using fakecuda::DriverState;
using fakecuda::GraphExecState;
using fakecuda::GraphModel;
using fakecuda::GraphNode;
using fakecuda::GraphState;
using fakecuda::HandleKind;

namespace fakecuda {

// Defined in graph_entry.cc: whether a memcpy / memset node's parameters resolve now.
CUresult CheckMemcpyNodeParams(DriverState* st, const CUDA_MEMCPY3D& c) CUHAL_REQUIRES(st->mu);
CUresult CheckMemsetNodeParams(DriverState* st, const CUDA_MEMSET_NODE_PARAMS& m)
    CUHAL_REQUIRES(st->mu);

namespace {

bool AllZero(const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  return std::all_of(b, b + n, [](unsigned char c) { return c == 0; });
}

// The bytes of CUgraphNodeParams' union that node type `type` uses (0: a type it cannot describe).
std::size_t MemberBytes(int type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return sizeof(CUDA_KERNEL_NODE_PARAMS_v3);
    case CU_GRAPH_NODE_TYPE_MEMCPY: return sizeof(CUDA_MEMCPY_NODE_PARAMS);
    case CU_GRAPH_NODE_TYPE_MEMSET: return sizeof(CUDA_MEMSET_NODE_PARAMS_v2);
    case CU_GRAPH_NODE_TYPE_HOST: return sizeof(CUDA_HOST_NODE_PARAMS_v2);
    case CU_GRAPH_NODE_TYPE_GRAPH: return sizeof(CUDA_CHILD_GRAPH_NODE_PARAMS);
    case CU_GRAPH_NODE_TYPE_EMPTY: return 0;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return sizeof(CUDA_EVENT_WAIT_NODE_PARAMS);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return sizeof(CUDA_EVENT_RECORD_NODE_PARAMS);
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: return sizeof(CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2);
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return sizeof(CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return sizeof(CUDA_MEM_ALLOC_NODE_PARAMS_v2);
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return sizeof(CUDA_MEM_FREE_NODE_PARAMS);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return sizeof(CUDA_BATCH_MEM_OP_NODE_PARAMS_v2);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return sizeof(CUDA_CONDITIONAL_NODE_PARAMS);
    default: return 0;
  }
}

bool KnownType(int type) { return type >= 0 && type <= CU_GRAPH_NODE_TYPE_CONDITIONAL; }

// The integer a caller stored in an enum field. The caller's bytes may hold any value, and
// loading one outside the enumerators through the enum type is undefined (UBSan: "not a valid
// value for type"), so enum fields of caller structs are read as integers until checked.
template <typename E>
int RawEnum(const E& field) {
  static_assert(sizeof(E) == sizeof(int));
  int value = 0;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

// The checks every generic call makes on a parameter block: a known type, the reserved fields
// and the union's bytes past the member the type uses all zero.
CUresult CheckParamBlock(const CUgraphNodeParams& p) {
  const int type = RawEnum(p.type);
  if (!KnownType(type)) return CUDA_ERROR_INVALID_VALUE;
  if (!AllZero(p.reserved0, sizeof p.reserved0) || p.reserved2 != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t used = MemberBytes(type);
  const auto* u = reinterpret_cast<const unsigned char*>(p.reserved1);
  if (!AllZero(u + used, sizeof p.reserved1 - used)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// Whether a node of `type` may be in a conditional node's body (cuda.h: kernel, empty, child
// graph, memset, memcpy and conditional nodes).
bool AllowedInBody(CUgraphNodeType type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_GRAPH:
    case CU_GRAPH_NODE_TYPE_MEMSET:
    case CU_GRAPH_NODE_TYPE_MEMCPY:
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
      return true;
    default:
      return false;
  }
}

// Whether any node of `nodes` (or of a child graph's copy among them) is a conditional node.
bool AnyConditional(const std::vector<GraphNode>& nodes) {
  for (const GraphNode& n : nodes) {
    if (n.type == CU_GRAPH_NODE_TYPE_CONDITIONAL) return true;
    if (n.child != nullptr && AnyConditional(*n.child)) return true;
  }
  return false;
}

// Puts `nodes` in the order cuGraphInstantiateWithFlags uses (Kahn's algorithm, the lowest id
// ready first). False when they hold a cycle.
bool Topological(std::vector<GraphNode>* nodes) {
  std::map<std::uint64_t, std::size_t> index;
  std::map<std::uint64_t, int> indegree;
  std::map<std::uint64_t, std::vector<std::uint64_t>> dependents;
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const GraphNode& n = (*nodes)[i];
    index[n.id] = i;
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
  std::vector<GraphNode> order;
  order.reserve(nodes->size());
  while (!ready.empty()) {
    const std::uint64_t id = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(std::move((*nodes)[index.at(id)]));
    for (std::uint64_t next : dependents[id]) {
      if (--indegree[next] == 0) ready.insert(next);
    }
  }
  if (order.size() != nodes->size()) return false;
  *nodes = std::move(order);
  return true;
}

// A conditional node's handle, context and bodies (the node itself made by the caller).
CUresult MakeConditional(DriverState* st, GraphState* g, CUDA_CONDITIONAL_NODE_PARAMS* p,
                         GraphNode* node, std::vector<std::uint64_t>* bodies)
    CUHAL_REQUIRES(st->mu) {
  GraphModel& graphs = st->graphs();
  // The handle's value is resolved in this graph, then in the graphs it is a body of
  // (graph_conditional.h invariant 1).
  const ConditionalHandle* h = nullptr;
  for (const GraphState* in = g; in != nullptr && h == nullptr;) {
    h = graphs.conditionals().Find(in->id, p->handle);
    in = in->owner_node == 0 ? nullptr : GraphById(st, graphs.GraphOfNode(in->owner_node));
  }
  if (h == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const int cond_type = RawEnum(p->type);
  if (cond_type != CU_GRAPH_COND_TYPE_IF && cond_type != CU_GRAPH_COND_TYPE_WHILE &&
      cond_type != CU_GRAPH_COND_TYPE_SWITCH) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  switch (p->type) {
    case CU_GRAPH_COND_TYPE_IF:
      if (p->size != 1 && p->size != 2) return CUDA_ERROR_INVALID_VALUE;
      break;
    case CU_GRAPH_COND_TYPE_WHILE:
      if (p->size != 1) return CUDA_ERROR_INVALID_VALUE;
      break;
    case CU_GRAPH_COND_TYPE_SWITCH:
      if (p->size == 0) return CUDA_ERROR_INVALID_VALUE;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "cond:add"): a null context is
  // refused (CUDA_ERROR_INVALID_CONTEXT) even with a context current.
  Context* ctx = p->ctx == nullptr ? nullptr : st->FindContext(p->ctx);
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx->id != h->ctx_id) return CUDA_ERROR_INVALID_VALUE;
  node->type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  node->cond.handle = h->id;
  node->cond.type = p->type;
  node->cond.size = p->size;
  node->cond.ctx_id = ctx->id;
  for (unsigned i = 0; i < p->size; ++i) bodies->push_back(st->NewId());
  return CUDA_SUCCESS;
}

// cuGraphAddNode for a conditional node (under the lock).
CUresult AddConditionalNode(DriverState* st, CUgraphNode* out, CUgraph hGraph,
                            const CUgraphNode* deps, size_t num_deps,
                            CUDA_CONDITIONAL_NODE_PARAMS* p) CUHAL_REQUIRES(st->mu) {
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphNode node;
  std::vector<std::uint64_t> bodies;
  if (CUresult e = MakeConditional(st, g, p, &node, &bodies); e != CUDA_SUCCESS) return e;
  node.cond.bodies = bodies;
  CUgraphNode handle = nullptr;
  if (CUresult e = AddNode(st, &handle, hGraph, deps, num_deps, std::move(node));
      e != CUDA_SUCCESS) {
    return e;
  }
  const std::uint64_t node_id = DecodeHandle(HandleKind::kGraphNode, handle);
  std::vector<CUgraph>& array = graphs.mutable_node(node_id).cond.body_handles;
  for (std::uint64_t body_id : bodies) {
    GraphState* body = graphs.AddGraph(body_id);
    body->owner_node = node_id;
    array.push_back(EncodeHandle<CUgraph>(HandleKind::kGraph, body_id));
  }
  p->phGraph_out = array.data();  // valid while the node lives (cuda.h)
  *out = handle;
  return CUDA_SUCCESS;
}

// The node behind `handle` in the executable graph's own list (copy on write), or null.
GraphNode* WritableExecNode(GraphExecState& exec, std::uint64_t id) {
  if (exec.order.use_count() != 1) {
    exec.order = std::make_shared<std::vector<GraphNode>>(*exec.order);
  }
  auto& order = const_cast<std::vector<GraphNode>&>(*exec.order);
  for (GraphNode& n : order) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

// Whether `nodes` (or a conditional node's body snapshot among them, recursively) hold node `id`.
bool HasNode(const std::vector<GraphNode>& nodes, std::uint64_t id) {
  for (const GraphNode& n : nodes) {
    if (n.id == id) return true;
    if (n.type == CU_GRAPH_NODE_TYPE_CONDITIONAL && n.cond.snapshot != nullptr) {
      for (const std::vector<GraphNode>& body : *n.cond.snapshot) {
        if (HasNode(body, id)) return true;
      }
    }
  }
  return false;
}

// Whether the executable graph holds node `id`: at its top level, or in a conditional node's
// body (measured 2026-12-06, H100 driver 580.159.04, graphnode_probe "cond:graph_ops": a body's
// kernel node takes cuGraphExecNodeSetParams).
bool ExecHasNode(const GraphExecState& exec, std::uint64_t id) { return HasNode(*exec.order, id); }

// Fills a kernel node from generic parameters (the checks of cuGraphAddKernelNode).
CUresult KernelFrom(DriverState* st, const CUDA_KERNEL_NODE_PARAMS_v3& p, GraphNode* node)
    CUHAL_REQUIRES(st->mu) {
  if (p.func == nullptr) {
    return p.kern != nullptr ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_HANDLE;
  }
  FunctionState* f = Modules(st).FindFunction(p.func);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
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
  node->params_by_extra = p.kernelParams == nullptr && p.extra != nullptr;  // graphx_entry.cc
  node->by_kernel = 0;
  node->param_view.clear();
  return CUDA_SUCCESS;
}

// A memcpy / memset node's context argument (null: the current one).
CUresult NodeContext(DriverState* st, CUcontext ctx) CUHAL_REQUIRES(st->mu) {
  Context* c = ctx == nullptr ? st->CurrentContext() : st->FindContext(ctx);
  return c != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUDA_MEMSET_NODE_PARAMS MemsetV1(const CUDA_MEMSET_NODE_PARAMS_v2& m) {
  CUDA_MEMSET_NODE_PARAMS v1{};
  v1.dst = m.dst;
  v1.pitch = m.pitch;
  v1.value = m.value;
  v1.elementSize = m.elementSize;
  v1.width = m.width;
  v1.height = m.height;
  return v1;
}

// cuGraphNodeSetParams on `node` (of graph `graph_id`), the type already checked to match.
CUresult SetGraphNode(DriverState* st, GraphNode* node, const CUgraphNodeParams& p)
    CUHAL_REQUIRES(st->mu) {
  switch (node->type) {
    case CU_GRAPH_NODE_TYPE_EMPTY:
      return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      GraphNode fresh;
      if (CUresult e = KernelFrom(st, p.kernel, &fresh); e != CUDA_SUCCESS) return e;
      node->function_id = fresh.function_id;
      node->config = fresh.config;
      node->params = std::move(fresh.params);
      node->params_by_extra = fresh.params_by_extra;
      node->by_kernel = 0;
      node->param_view.clear();
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      if (p.memcpy.flags != 0 || p.memcpy.reserved != 0) return CUDA_ERROR_INVALID_VALUE;
      if (CUresult e = NodeContext(st, p.memcpy.copyCtx); e != CUDA_SUCCESS) return e;
      if (p.memcpy.copyParams.WidthInBytes == 0) return CUDA_ERROR_INVALID_VALUE;
      if (CUresult e = CheckMemcpyNodeParams(st, p.memcpy.copyParams); e != CUDA_SUCCESS) return e;
      node->copy = p.memcpy.copyParams;
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      if (CUresult e = NodeContext(st, p.memset.ctx); e != CUDA_SUCCESS) return e;
      const CUDA_MEMSET_NODE_PARAMS m = MemsetV1(p.memset);
      if (CUresult e = CheckMemsetNodeParams(st, m); e != CUDA_SUCCESS) return e;
      node->memset = m;
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_HOST:
      if (p.host.fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
      node->host_fn = p.host.fn;
      node->host_data = p.host.userData;
      return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      if (st->FindEvent(p.eventRecord.event) == nullptr) return CUDA_ERROR_INVALID_VALUE;
      node->event = p.eventRecord.event;
      return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      if (st->FindEvent(p.eventWait.event) == nullptr) return CUDA_ERROR_INVALID_VALUE;
      node->event = p.eventWait.event;
      return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_GRAPH:
      // Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "setparams:graph"): a child
      // graph node's graph cannot be changed in the graph (the node keeps its child); a null
      // graph is CUDA_ERROR_INVALID_VALUE first.
      if (st->graphs().FindGraph(p.graph.graph) == nullptr) return CUDA_ERROR_INVALID_VALUE;
      return CUDA_ERROR_NOT_SUPPORTED;
    default:
      // Memory alloc / free nodes cannot change (cuda.h); conditional, external semaphore and
      // batch memory operation nodes are not modelled here.
      return CUDA_ERROR_NOT_SUPPORTED;
  }
}

}  // namespace

// --- hooks (graph_conditional_hooks.h) ---

namespace {

// Whether `node` (and, for a child graph node, every node of its copy) may be in a body whose
// conditional node runs in context `ctx_id`: an allowed type, kernels of that context (cuda.h:
// "This applies recursively to child graphs and conditional bodies").
bool FitsInBody(DriverState* st, const GraphNode& node, std::uint64_t ctx_id, int depth)
    CUHAL_REQUIRES(st->mu) {
  if (depth > 64 || !AllowedInBody(node.type)) return false;
  if (node.type == CU_GRAPH_NODE_TYPE_MEMCPY) {
    for (auto [type, host] : {std::pair{RawEnum(node.copy.srcMemoryType), node.copy.srcHost},
                              std::pair{RawEnum(node.copy.dstMemoryType),
                                        static_cast<const void*>(node.copy.dstHost)}}) {
      const auto address = reinterpret_cast<std::uintptr_t>(host);
      if (type == CU_MEMORYTYPE_HOST && st->FindAllocation(address, 1) == nullptr) return false;
    }
  }
  if (node.type == CU_GRAPH_NODE_TYPE_KERNEL) {
    ModuleModel& m = Modules(st);
    auto f = m.functions.find(node.function_id);
    if (f != m.functions.end() && f->second.ctx_id != ctx_id) return false;
  }
  if (node.child != nullptr) {
    for (const GraphNode& c : *node.child) {
      if (!FitsInBody(st, c, ctx_id, depth + 1)) return false;
    }
  }
  return true;
}

}  // namespace

CUresult CheckBodyNode(DriverState* st, const GraphState& g, const GraphNode& node) {
  if (g.owner_node == 0) return CUDA_SUCCESS;
  GraphModel& graphs = st->graphs();
  const std::uint64_t parent = graphs.GraphOfNode(g.owner_node);
  if (!graphs.NodeIn(g.owner_node, parent)) return CUDA_ERROR_INVALID_VALUE;  // node destroyed
  // Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "cond:body", "cond:nested"):
  // adding to a body refuses only a conditional node using the handle of an enclosing
  // conditional node; every other node type is accepted here and refused when the parent graph
  // is instantiated (SnapshotConditionals).
  if (node.type != CU_GRAPH_NODE_TYPE_CONDITIONAL) return CUDA_SUCCESS;
  const GraphState* body = &g;
  for (int depth = 0; body != nullptr && body->owner_node != 0 && depth < 1024; ++depth) {
    const GraphNode& owner = graphs.node(body->owner_node);
    if (owner.cond.handle == node.cond.handle) return CUDA_ERROR_INVALID_VALUE;
    body = GraphById(st, graphs.GraphOfNode(body->owner_node));
  }
  return CUDA_SUCCESS;
}

bool GraphHasConditional(DriverState* st, const GraphState& g) {
  GraphModel& graphs = st->graphs();
  for (std::uint64_t id : g.nodes) {
    const GraphNode& n = graphs.node(id);
    if (n.type == CU_GRAPH_NODE_TYPE_CONDITIONAL) return true;
    if (n.child != nullptr && AnyConditional(*n.child)) return true;
  }
  return false;
}

namespace {

// Collects the graphs of `g`'s hierarchy (itself and its bodies, recursively) and the handles
// their conditional nodes use.
void CollectHierarchy(DriverState* st, const GraphState& g, int depth,
                      std::set<std::uint64_t>* graphs_seen, std::set<std::uint64_t>* used)
    CUHAL_REQUIRES(st->mu) {
  if (depth > 64 || !graphs_seen->insert(g.id).second) return;
  GraphModel& graphs = st->graphs();
  for (std::uint64_t id : g.nodes) {
    const GraphNode& n = graphs.node(id);
    if (n.type != CU_GRAPH_NODE_TYPE_CONDITIONAL) continue;
    used->insert(n.cond.handle);
    for (std::uint64_t body_id : n.cond.bodies) {
      if (const GraphState* b = GraphById(st, body_id)) {
        CollectHierarchy(st, *b, depth + 1, graphs_seen, used);
      }
    }
  }
}

}  // namespace

CUresult CheckHandlesUsed(DriverState* st, const GraphState& g) {
  std::set<std::uint64_t> graphs_seen, used;
  CollectHierarchy(st, g, 0, &graphs_seen, &used);
  for (std::uint64_t graph_id : graphs_seen) {
    for (std::uint64_t h : st->graphs().conditionals().HandlesOf(graph_id)) {
      if (used.count(h) == 0) return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

CUresult SnapshotConditionals(DriverState* st, std::vector<GraphNode>* nodes, int depth) {
  if (depth > 64) return CUDA_ERROR_INVALID_VALUE;
  GraphModel& graphs = st->graphs();
  for (GraphNode& n : *nodes) {
    if (n.type != CU_GRAPH_NODE_TYPE_CONDITIONAL) continue;
    auto bodies = std::make_shared<std::vector<std::vector<GraphNode>>>();
    for (std::uint64_t body_id : n.cond.bodies) {
      std::vector<GraphNode> body;
      if (GraphState* b = GraphById(st, body_id)) {
        for (std::uint64_t id : b->nodes) body.push_back(graphs.node(id));
      }
      body = FlattenChildGraphs(st, std::move(body));
      if (!Topological(&body)) return CUDA_ERROR_INVALID_VALUE;
      // Measured (see CheckBodyNode): a body holding a node other than kernel, empty, child
      // graph, memset, memcpy and conditional nodes, a kernel of another context than the
      // conditional node's, or a copy from or to pageable host memory, fails the instantiation
      // with CUDA_ERROR_INVALID_VALUE.
      for (const GraphNode& b : body) {
        if (!FitsInBody(st, b, n.cond.ctx_id, 0)) return CUDA_ERROR_INVALID_VALUE;
      }
      if (CUresult e = SnapshotConditionals(st, &body, depth + 1); e != CUDA_SUCCESS) return e;
      bodies->push_back(std::move(body));
    }
    n.cond.snapshot = std::move(bodies);
  }
  return CUDA_SUCCESS;
}

namespace {

// Appends `nodes` (an order) to `out`, each conditional node replaced by the body its value
// selects (recursively) followed by the node itself, which then depends on the body's sinks.
CUresult Expand(DriverState* st, GraphExecState* exec, const std::vector<GraphNode>& nodes,
                const std::vector<std::uint64_t>* root_deps, std::vector<GraphNode>* out,
                std::vector<std::uint64_t>* sinks) CUHAL_REQUIRES(st->mu) {
  std::set<std::uint64_t> depended;
  std::vector<std::uint64_t> ids;
  for (const GraphNode& original : nodes) {
    GraphNode n = original;
    if (root_deps != nullptr && n.deps.empty()) n.deps = *root_deps;
    for (std::uint64_t d : original.deps) depended.insert(d);
    ids.push_back(n.id);
    if (n.type != CU_GRAPH_NODE_TYPE_CONDITIONAL || n.cond.snapshot == nullptr) {
      out->push_back(std::move(n));
      continue;
    }
    const unsigned value = exec->cond_values[n.cond.handle];
    const std::vector<std::vector<GraphNode>>& bodies = *n.cond.snapshot;
    long chosen = -1;
    switch (n.cond.type) {
      case CU_GRAPH_COND_TYPE_IF:
        chosen = value != 0 ? 0 : (bodies.size() > 1 ? 1 : -1);
        break;
      case CU_GRAPH_COND_TYPE_WHILE:
        // Nothing in the fake can clear the value (invariant 3): the loop would never end.
        if (value != 0 && !bodies.empty()) return CUDA_ERROR_NOT_SUPPORTED;
        break;
      case CU_GRAPH_COND_TYPE_SWITCH:
        chosen = value < bodies.size() ? static_cast<long>(value) : -1;
        break;
      default:
        break;
    }
    if (chosen >= 0) {
      std::vector<std::uint64_t> body_sinks;
      if (CUresult e = Expand(st, exec, bodies[static_cast<std::size_t>(chosen)], &n.deps, out,
                              &body_sinks);
          e != CUDA_SUCCESS) {
        return e;
      }
      for (std::uint64_t s : body_sinks) {
        if (std::find(n.deps.begin(), n.deps.end(), s) == n.deps.end()) n.deps.push_back(s);
      }
    }
    out->push_back(std::move(n));  // runs as an empty node after its body
  }
  if (sinks != nullptr) {
    for (std::uint64_t id : ids) {
      if (depended.count(id) == 0) sinks->push_back(id);
    }
  }
  return CUDA_SUCCESS;
}

// Every conditional handle the nodes (and their bodies) use.
void HandlesOf(const std::vector<GraphNode>& nodes, std::set<std::uint64_t>* out) {
  for (const GraphNode& n : nodes) {
    if (n.type != CU_GRAPH_NODE_TYPE_CONDITIONAL) continue;
    out->insert(n.cond.handle);
    if (n.cond.snapshot != nullptr) {
      for (const std::vector<GraphNode>& body : *n.cond.snapshot) HandlesOf(body, out);
    }
  }
}

}  // namespace

CUresult ExpandConditionals(DriverState* st, GraphExecState* exec,
                            std::shared_ptr<const std::vector<GraphNode>>* order) {
  const std::vector<GraphNode>& nodes = **order;
  if (std::none_of(nodes.begin(), nodes.end(), [](const GraphNode& n) {
        return n.type == CU_GRAPH_NODE_TYPE_CONDITIONAL;
      })) {
    return CUDA_SUCCESS;
  }
  // Each launch starts by assigning the defaults of the handles that have the flag.
  std::set<std::uint64_t> handles;
  HandlesOf(nodes, &handles);
  for (std::uint64_t id : handles) {
    const ConditionalHandle* h = st->graphs().conditionals().FindId(id);
    if (h != nullptr && h->assign_default) exec->cond_values[id] = h->default_value;
  }
  auto expanded = std::make_shared<std::vector<GraphNode>>();
  if (CUresult e = Expand(st, exec, nodes, nullptr, expanded.get(), nullptr); e != CUDA_SUCCESS) {
    return e;
  }
  *order = std::move(expanded);
  return CUDA_SUCCESS;
}

}  // namespace fakecuda

extern "C" {

// Declared by cuda.h 13 as cuGraphAddNode (a macro for this name).
CUresult CUDAAPI cuGraphAddNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                   const CUgraphNode* dependencies,
                                   const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                   CUgraphNodeParams* nodeParams) try {
  FAKECUDA_ENTER_NOLOCK(cuGraphAddNode)
  {
    cuhal::MutexLock lock(st->mu);
    // No init check: measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "noinit"),
    // before cuInit the generic calls answer CUDA_ERROR_INVALID_VALUE for a null graph or node
    // (no graph or node exists before cuInit, so every call ends there or earlier).
    if (phGraphNode == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (st->graphs().FindGraph(hGraph) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult e = fakecuda::CheckParamBlock(*nodeParams); e != CUDA_SUCCESS) return e;
    if (dependencyData != nullptr) {
      for (size_t i = 0; i < numDependencies; ++i) {
        if (!fakecuda::AllZero(&dependencyData[i], sizeof dependencyData[i])) {
          return CUDA_ERROR_INVALID_VALUE;  // programmatic edges are not modelled
        }
      }
    }
    if (nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
      return fakecuda::AddConditionalNode(st, phGraphNode, hGraph, dependencies, numDependencies,
                                          &nodeParams->conditional);
    }
  }
  // The type-specific entry points check the rest (with the lock taken again).
  CUgraphNodeParams& p = *nodeParams;
  // Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "noctx"): with no context
  // current, a memset or memcpy node whose ctx is NULL is accepted. The fake gives the node the
  // context of the device memory it writes (when that memory is known).
  CUcontext memory_ctx = nullptr;
  if (p.type == CU_GRAPH_NODE_TYPE_MEMSET || p.type == CU_GRAPH_NODE_TYPE_MEMCPY) {
    cuhal::MutexLock lock(st->mu);
    const bool null_ctx = p.type == CU_GRAPH_NODE_TYPE_MEMSET ? p.memset.ctx == nullptr
                                                              : p.memcpy.copyCtx == nullptr;
    const std::uintptr_t target =
        p.type == CU_GRAPH_NODE_TYPE_MEMSET
            ? p.memset.dst
            : (fakecuda::RawEnum(p.memcpy.copyParams.dstMemoryType) == CU_MEMORYTYPE_HOST
                   ? reinterpret_cast<std::uintptr_t>(p.memcpy.copyParams.dstHost)
                   : p.memcpy.copyParams.dstDevice);
    if (null_ctx && st->CurrentContext() == nullptr) {
      if (const fakecuda::Allocation* a = st->FindAllocation(target, 1)) {
        const CUcontext c = fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, a->ctx_id);
        if (st->FindContext(c) != nullptr) memory_ctx = c;
      }
    }
  }
  switch (p.type) {
    case CU_GRAPH_NODE_TYPE_EMPTY:
      return cuGraphAddEmptyNode(phGraphNode, hGraph, dependencies, numDependencies);
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      CUDA_KERNEL_NODE_PARAMS k{};
      k.func = p.kernel.func;
      k.gridDimX = p.kernel.gridDimX;
      k.gridDimY = p.kernel.gridDimY;
      k.gridDimZ = p.kernel.gridDimZ;
      k.blockDimX = p.kernel.blockDimX;
      k.blockDimY = p.kernel.blockDimY;
      k.blockDimZ = p.kernel.blockDimZ;
      k.sharedMemBytes = p.kernel.sharedMemBytes;
      k.kernelParams = p.kernel.kernelParams;
      k.extra = p.kernel.extra;
      k.kern = p.kernel.kern;
      k.ctx = p.kernel.ctx;
      return cuGraphAddKernelNode(phGraphNode, hGraph, dependencies, numDependencies, &k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      if (p.memcpy.flags != 0 || p.memcpy.reserved != 0) return CUDA_ERROR_INVALID_VALUE;
      return cuGraphAddMemcpyNode(phGraphNode, hGraph, dependencies, numDependencies,
                                  &p.memcpy.copyParams,
                                  memory_ctx != nullptr ? memory_ctx : p.memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS m = fakecuda::MemsetV1(p.memset);
      return cuGraphAddMemsetNode(phGraphNode, hGraph, dependencies, numDependencies, &m,
                                  memory_ctx != nullptr ? memory_ctx : p.memset.ctx);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
      CUDA_HOST_NODE_PARAMS h{};
      h.fn = p.host.fn;
      h.userData = p.host.userData;
      return cuGraphAddHostNode(phGraphNode, hGraph, dependencies, numDependencies, &h);
    }
    case CU_GRAPH_NODE_TYPE_GRAPH:
      if (fakecuda::RawEnum(p.graph.ownership) == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) {
        return CUDA_ERROR_NOT_SUPPORTED;  // not modelled
      }
      if (fakecuda::RawEnum(p.graph.ownership) != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      return cuGraphAddChildGraphNode(phGraphNode, hGraph, dependencies, numDependencies,
                                      p.graph.graph);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      return cuGraphAddEventRecordNode(phGraphNode, hGraph, dependencies, numDependencies,
                                       p.eventRecord.event);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      return cuGraphAddEventWaitNode(phGraphNode, hGraph, dependencies, numDependencies,
                                     p.eventWait.event);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      // Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "add:mem"): an allocation
      // asking for exportable handles (POSIX file descriptor) is CUDA_ERROR_NOT_SUPPORTED.
      if (p.alloc.poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE) {
        return CUDA_ERROR_NOT_SUPPORTED;
      }
      CUDA_MEM_ALLOC_NODE_PARAMS a{};
      a.poolProps = p.alloc.poolProps;
      a.accessDescs = p.alloc.accessDescs;
      a.accessDescCount = p.alloc.accessDescCount;
      a.bytesize = p.alloc.bytesize;
      CUresult r = cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies, &a);
      if (r == CUDA_SUCCESS) p.alloc.dptr = a.dptr;
      return r;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      return cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies,
                                   p.free.dptr);
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: {
      // Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "add:unmodelled"): an
      // external-semaphore signal node with no semaphore, or with one null semaphore, is added
      // (CUDA_SUCCESS; the semaphores are not looked at). The fake adds such a node too; it does
      // not model external semaphores, so launching a graph holding one answers
      // CUDA_ERROR_NOT_SUPPORTED (graph_entry.cc).
      // A null array for a nonzero count crashed the real driver; the fake refuses it.
      const bool signal = p.type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL;
      const unsigned count = signal ? p.extSemSignal.numExtSems : p.extSemWait.numExtSems;
      const bool arrays = signal ? p.extSemSignal.extSemArray != nullptr &&
                                       p.extSemSignal.paramsArray != nullptr
                                 : p.extSemWait.extSemArray != nullptr &&
                                       p.extSemWait.paramsArray != nullptr;
      if (count != 0 && !arrays) return CUDA_ERROR_INVALID_VALUE;
      cuhal::MutexLock lock(st->mu);
      GraphNode node;
      node.type = p.type;
      return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies,
                               std::move(node));
    }
    default:
      // Batch memory operations are not modelled.
      return CUDA_ERROR_NOT_SUPPORTED;
  }
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddNode");
}

// The older ABI (CUDA 12.2), without edge data, under its symbol name.
CUresult CUDAAPI FakecudaGraphAddNodeV1(CUgraphNode* phGraphNode, CUgraph hGraph,
                                        const CUgraphNode* dependencies, size_t numDependencies,
                                        CUgraphNodeParams* nodeParams) __asm__("cuGraphAddNode");
CUresult CUDAAPI FakecudaGraphAddNodeV1(CUgraphNode* phGraphNode, CUgraph hGraph,
                                        const CUgraphNode* dependencies, size_t numDependencies,
                                        CUgraphNodeParams* nodeParams) {
  return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, nullptr, numDependencies,
                           nodeParams);
}

CUresult CUDAAPI cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* nodeParams) try {
  FAKECUDA_ENTER_NOLOCK(cuGraphNodeSetParams)
  cuhal::MutexLock lock(st->mu);  // no init check (measured, "noinit": see cuGraphAddNode)
  if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::uint64_t graph_id = 0;
  GraphNode* n = st->graphs().FindNode(hNode, &graph_id);
  if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckParamBlock(*nodeParams); e != CUDA_SUCCESS) return e;
  if (nodeParams->type != n->type) return CUDA_ERROR_INVALID_VALUE;
  // Changed on a copy first: a body's node must still fit its body afterwards.
  GraphNode changed = *n;
  if (CUresult e = fakecuda::SetGraphNode(st, &changed, *nodeParams); e != CUDA_SUCCESS) return e;
  if (GraphState* g = fakecuda::GraphById(st, graph_id)) {
    if (CUresult e = fakecuda::CheckBodyNode(st, *g, changed); e != CUDA_SUCCESS) return e;
  }
  *n = std::move(changed);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphNodeSetParams");
}

// The type-specific getters and setters of memcpy and memset nodes, whichever way the node was
// added (cuGraphAdd{Memcpy,Memset}Node, cuGraphAddNode, capture). NVIDIA's cuda-python
// test_graph_poly reads a memcpy node added with cuGraphAddNode back with
// cuGraphMemcpyNodeGetParams, sets it with cuGraphNodeSetParams and reads it again (CUDA_SUCCESS
// each time on the real driver). A node of another type, a null or unknown node, a null
// pointer: CUDA_ERROR_INVALID_VALUE (UNMEASURED; as the generic calls answer them). The setters
// check the new parameters as cuGraphNodeSetParams does (they are that call with the current
// context).
CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D* nodeParams) try {
  FAKECUDA_ENTER(cuGraphMemcpyNodeGetParams)
  if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* n = st->graphs().FindNode(hNode);
  if (n == nullptr || n->type != CU_GRAPH_NODE_TYPE_MEMCPY) return CUDA_ERROR_INVALID_VALUE;
  *nodeParams = n->copy;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphMemcpyNodeGetParams");
}

CUresult CUDAAPI cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D* nodeParams) try {
  if (nodeParams == nullptr) {
    FAKECUDA_ENTER(cuGraphMemcpyNodeSetParams)
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUgraphNodeParams p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  p.memcpy.copyParams = *nodeParams;
  return cuGraphNodeSetParams(hNode, &p);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphMemcpyNodeSetParams");
}

CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode hNode,
                                            CUDA_MEMSET_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphMemsetNodeGetParams)
  if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* n = st->graphs().FindNode(hNode);
  if (n == nullptr || n->type != CU_GRAPH_NODE_TYPE_MEMSET) return CUDA_ERROR_INVALID_VALUE;
  *nodeParams = n->memset;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphMemsetNodeGetParams");
}

CUresult CUDAAPI cuGraphMemsetNodeSetParams(CUgraphNode hNode,
                                            const CUDA_MEMSET_NODE_PARAMS* nodeParams) try {
  if (nodeParams == nullptr) {
    FAKECUDA_ENTER(cuGraphMemsetNodeSetParams)
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUgraphNodeParams p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_GRAPH_NODE_TYPE_MEMSET;
  p.memset.dst = nodeParams->dst;
  p.memset.pitch = nodeParams->pitch;
  p.memset.value = nodeParams->value;
  p.memset.elementSize = nodeParams->elementSize;
  p.memset.width = nodeParams->width;
  p.memset.height = nodeParams->height;
  return cuGraphNodeSetParams(hNode, &p);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphMemsetNodeSetParams");
}

CUresult CUDAAPI cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                          CUgraphNodeParams* nodeParams) try {
  FAKECUDA_ENTER_NOLOCK(cuGraphExecNodeSetParams)
  {
    cuhal::MutexLock lock(st->mu);  // no init check (measured, "noinit": see cuGraphAddNode)
    if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    GraphExecState* exec = st->graphs().FindExec(hGraphExec);
    if (exec == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const GraphNode* n = st->graphs().FindNode(hNode);
    if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult e = fakecuda::CheckParamBlock(*nodeParams); e != CUDA_SUCCESS) return e;
    if (nodeParams->type != n->type) return CUDA_ERROR_INVALID_VALUE;
    if (nodeParams->type == CU_GRAPH_NODE_TYPE_GRAPH) {
      // A child graph node is expanded at instantiation: its nodes carry its id.
      if (nodeParams->graph.graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
      const GraphState* child = st->graphs().FindGraph(nodeParams->graph.graph);
      if (child == nullptr) return CUDA_ERROR_INVALID_VALUE;
      if (st->graphs().GraphOfNode(n->id) != exec->graph_id) return CUDA_ERROR_INVALID_VALUE;
      return fakecuda::ExecSetChildGraph(st, exec, n->id, *child);
    }
    if (!fakecuda::ExecHasNode(*exec, n->id)) return CUDA_ERROR_INVALID_VALUE;
    const CUgraphNodeParams& p = *nodeParams;
    switch (p.type) {
      case CU_GRAPH_NODE_TYPE_KERNEL:
      case CU_GRAPH_NODE_TYPE_MEMSET:
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        break;  // below, by the type-specific setters
      case CU_GRAPH_NODE_TYPE_EMPTY:
        return CUDA_SUCCESS;
      case CU_GRAPH_NODE_TYPE_HOST: {
        if (p.host.fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
        GraphNode* e = fakecuda::WritableExecNode(*exec, n->id);
        e->host_fn = p.host.fn;
        e->host_data = p.host.userData;
        return CUDA_SUCCESS;
      }
      case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
        CUevent ev = p.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ? p.eventRecord.event
                                                               : p.eventWait.event;
        if (st->FindEvent(ev) == nullptr) return CUDA_ERROR_INVALID_VALUE;
        fakecuda::WritableExecNode(*exec, n->id)->event = ev;
        return CUDA_SUCCESS;
      }
      default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  const CUgraphNodeParams& p = *nodeParams;
  switch (p.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      CUDA_KERNEL_NODE_PARAMS k{};
      k.func = p.kernel.func;
      k.gridDimX = p.kernel.gridDimX;
      k.gridDimY = p.kernel.gridDimY;
      k.gridDimZ = p.kernel.gridDimZ;
      k.blockDimX = p.kernel.blockDimX;
      k.blockDimY = p.kernel.blockDimY;
      k.blockDimZ = p.kernel.blockDimZ;
      k.sharedMemBytes = p.kernel.sharedMemBytes;
      k.kernelParams = p.kernel.kernelParams;
      k.extra = p.kernel.extra;
      k.kern = p.kernel.kern;
      k.ctx = p.kernel.ctx;
      return cuGraphExecKernelNodeSetParams(hGraphExec, hNode, &k);
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS m = fakecuda::MemsetV1(p.memset);
      return cuGraphExecMemsetNodeSetParams(hGraphExec, hNode, &m, p.memset.ctx);
    }
    default:  // memcpy
      if (p.memcpy.flags != 0 || p.memcpy.reserved != 0) return CUDA_ERROR_INVALID_VALUE;
      return cuGraphExecMemcpyNodeSetParams(hGraphExec, hNode, &p.memcpy.copyParams,
                                            p.memcpy.copyCtx);
  }
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecNodeSetParams");
}

CUresult CUDAAPI cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out,
                                                CUgraph hGraph, CUcontext ctx,
                                                unsigned int defaultLaunchValue,
                                                unsigned int flags) try {
  FAKECUDA_ENTER_NOLOCK(cuGraphConditionalHandleCreate)
  cuhal::MutexLock lock(st->mu);  // no init check (measured, "noinit": see cuGraphAddNode)
  if (pHandle_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphState* g = st->graphs().FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if ((flags & ~static_cast<unsigned>(CU_GRAPH_COND_ASSIGN_DEFAULT)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured 2026-12-06, H100 driver 580.159.04 (graphnode_probe "handle"): a null context is
  // refused (CUDA_ERROR_INVALID_CONTEXT) even with a context current; it is not "the current".
  fakecuda::Context* c = ctx == nullptr ? nullptr : st->FindContext(ctx);
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  fakecuda::ConditionalHandle h;
  h.id = st->NewId();
  h.graph_id = g->id;
  h.ctx_id = c->id;
  h.default_value = defaultLaunchValue;
  h.assign_default = (flags & CU_GRAPH_COND_ASSIGN_DEFAULT) != 0;
  *pHandle_out = st->graphs().conditionals().Add(h);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphConditionalHandleCreate");
}

}  // extern "C"
