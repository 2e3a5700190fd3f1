// Copyright 2026 The cuhal Authors.
// Entry points: the graph extras (issue 14): user objects (cuUserObjectCreate/Retain/Release,
// cuGraphRetainUserObject/cuGraphReleaseUserObject), cuGraphNodeGet/SetEnabled,
// cuGraphExecGetFlags, cuGraphInstantiateWithParams, the host / event record / event wait node
// getters and setters (graph and executable graph), kernel node attributes and parameters
// (cuGraphKernelNode{Get,Set}Attribute, CopyAttributes, {Get,Set}Params_v2 and the older ABI),
// cuGraphChildGraphNodeGetGraph, cuGraphExecChildGraphNodeSetParams, cuGraphNodeFindInClone,
// cuGraphDebugDotPrint, the memory alloc/free node getters, cuGraphRemoveDependencies(_v2), batch
// memory operation nodes and external semaphore nodes (which the fake cannot make: no semaphore
// can be imported). State: GraphModel (fakecuda/internal/graph_model.h) and its user objects
// (fakecuda/internal/user_object_model.h). "Measured" below: an H100, driver 580.159.04,
// 2026-12-06, ci/gpu-probes/graphx_probe.cc (ci/gpu-probes/results/2026-12-06-h100-graphx.real.txt);
// docs/driver_facts.md ("Graph extras") lists what was measured and what is modelled from cuda.h
// alone (UNMEASURED in the comments below).
//
// Measured: the user object calls, the node enable calls, the host / event / memory alloc node
// getters, cuGraphDebugDotPrint and cuGraphAddBatchMemOpNode answer before cuInit as after it
// (they check no initialization: GRAPHX_ENTER_NO_INIT); cuGraphExecGetFlags,
// cuGraphInstantiateWithParams, cuGraphChildGraphNodeGetGraph, cuGraphNodeFindInClone and the
// kernel node attribute calls answer CUDA_ERROR_NOT_INITIALIZED. Their unmeasured siblings (the
// setters of the former, ...) follow them.
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/graph_conditional_hooks.h"
#include "fakecuda/entry/graph_internal.h"
#include "fakecuda/internal/engine_access.h"
#include "fakecuda/internal/graph_model.h"
#include "fakecuda/internal/library_model.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/user_object_model.h"

// The prologue of the entry points that check no initialization (measured, see above).
#define GRAPHX_ENTER_NO_INIT(name) \
  FAKECUDA_ENTER_NOLOCK(name)      \
  cuhal::MutexLock lock(st->mu);

using fakecuda::DriverState;
using fakecuda::GraphExecState;
using fakecuda::GraphModel;
using fakecuda::GraphNode;
using fakecuda::GraphState;
using fakecuda::HandleKind;

namespace fakecuda {
namespace {

// A reference count argument: nonzero and not above INT_MAX (cuda.h).
bool ValidCount(unsigned count) { return count != 0 && count <= static_cast<unsigned>(INT_MAX); }

CUgraphNode NodeHandle(std::uint64_t id) {
  return EncodeHandle<CUgraphNode>(HandleKind::kGraphNode, id);
}

// The node `id` in an executable graph's list (or in a conditional node's body snapshot).
GraphNode* FindIn(std::vector<GraphNode>& nodes, std::uint64_t id) {
  for (GraphNode& n : nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

// The executable graph's copy of node `handle` (a node of the graph it was made from, which must
// still be there: measured for cuGraphNodeGetEnabled, CUDA_ERROR_INVALID_VALUE), made writable
// (copy on write: queued launches keep theirs), or null.
GraphNode* WritableExecCopy(GraphExecState& exec, CUgraphNode handle) {
  const std::uint64_t id = DecodeHandle(HandleKind::kGraphNode, handle);
  if (id == 0) return nullptr;
  bool found = false;
  for (const GraphNode& n : *exec.order) found = found || n.id == id;
  if (!found) return nullptr;
  if (exec.order.use_count() != 1) {
    exec.order = std::make_shared<std::vector<GraphNode>>(*exec.order);
  }
  return FindIn(const_cast<std::vector<GraphNode>&>(*exec.order), id);
}

const GraphNode* ExecCopy(DriverState* st, const GraphExecState& exec, CUgraphNode handle)
    CUHAL_REQUIRES(st->mu) {
  const std::uint64_t id = DecodeHandle(HandleKind::kGraphNode, handle);
  if (id == 0 || st->graphs().FindNode(handle) == nullptr) return nullptr;
  for (const GraphNode& n : *exec.order) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

// The node behind `handle` when it is of `type`, else null.
GraphNode* NodeOfType(DriverState* st, CUgraphNode handle, CUgraphNodeType type,
                      std::uint64_t* graph_id = nullptr) CUHAL_REQUIRES(st->mu) {
  GraphNode* n = st->graphs().FindNode(handle, graph_id);
  return n != nullptr && n->type == type ? n : nullptr;
}

// Whether the enable state of a node of `type` may be set (cuda.h: kernel, memset and memcpy).
bool EnableableType(CUgraphNodeType type) {
  return type == CU_GRAPH_NODE_TYPE_KERNEL || type == CU_GRAPH_NODE_TYPE_MEMSET ||
         type == CU_GRAPH_NODE_TYPE_MEMCPY;
}

// Fills a kernel node from `p` (the checks cuGraphAddKernelNode makes).
CUresult KernelFromParams(DriverState* st, const CUDA_KERNEL_NODE_PARAMS& p, GraphNode* node)
    CUHAL_REQUIRES(st->mu) {
  FunctionState* f = nullptr;
  if (CUresult e = ResolveNodeFunction(st, p.func, p.kern, p.ctx, &f); e != CUDA_SUCCESS) return e;
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
  node->param_view.clear();
  node->params_by_extra = p.kernelParams == nullptr && p.extra != nullptr;
  node->by_kernel = p.func == nullptr && p.kern != nullptr
                        ? DecodeHandle(HandleKind::kKernel, p.kern)
                        : 0;
  return CUDA_SUCCESS;
}

// The kernel node attributes a graph node takes, and their values before any is set: measured
// (ids 1, 2, 4, 5, 8, 9, 10, 13, 14; PREFERRED_CLUSTER_DIMENSION (11) and
// NVLINK_UTIL_CENTRIC_SCHEDULING (16), which cuda.h calls valid for graph nodes, are
// CUDA_ERROR_INVALID_VALUE; all zero but the memory sync domain map, {0, 1}).
bool NodeAttribute(int id) {
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      return true;
    default:
      return false;
  }
}

CUlaunchAttributeValue DefaultAttribute(int id) {
  CUlaunchAttributeValue v;
  std::memset(&v, 0, sizeof v);
  if (id == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP) v.memSyncDomainMap.remote = 1;
  return v;
}

// Checks a value for attribute `id` of kernel node `n` and makes it the value stored. Measured: a
// hit ratio above 1 and a memory sync domain of 7 are CUDA_ERROR_INVALID_VALUE; a cluster
// dimension the grid is not a multiple of is CUDA_ERROR_INVALID_CLUSTER_SIZE (0 x 0 x 0 clears
// it); a priority is clamped into the device's range ([-5, 0]: 100 reads back 0); a device-
// updatable node gets a device node handle. Other ranges: UNMEASURED (the enums of cuda.h).
CUresult CheckAttribute(int id, const GraphNode& n, CUlaunchAttributeValue* value) {
  CUlaunchAttributeValue& v = *value;
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      v.priority = std::clamp(v.priority, -5, 0);  // cuCtxGetStreamPriorityRange (context_entry)
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
      const unsigned x = v.clusterDim.x, y = v.clusterDim.y, z = v.clusterDim.z;
      if (x == 0 && y == 0 && z == 0) return CUDA_SUCCESS;
      if (x == 0 || y == 0 || z == 0 || n.config.grid.x % x != 0 || n.config.grid.y % y != 0 ||
          n.config.grid.z % z != 0) {
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
      }
      return CUDA_SUCCESS;
    }
    case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
      v.deviceUpdatableKernelNode.devNode =
          v.deviceUpdatableKernelNode.deviceUpdatable != 0
              ? EncodeHandle<CUgraphDeviceNode>(HandleKind::kGraphNode, n.id)
              : nullptr;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      return v.sharedMemCarveout <= 100 || v.sharedMemCarveout == static_cast<unsigned>(-1)
                 ? CUDA_SUCCESS
                 : CUDA_ERROR_INVALID_VALUE;
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: {
      const float ratio = v.accessPolicyWindow.hitRatio;
      if (!(ratio >= 0.0f && ratio <= 1.0f)) return CUDA_ERROR_INVALID_VALUE;
      int hit = 0, miss = 0;
      std::memcpy(&hit, &v.accessPolicyWindow.hitProp, sizeof hit);
      std::memcpy(&miss, &v.accessPolicyWindow.missProp, sizeof miss);
      if (hit < 0 || hit > 2 || miss < 0 || miss > 2) return CUDA_ERROR_INVALID_VALUE;
      return CUDA_SUCCESS;
    }
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: {
      int d = 0;
      std::memcpy(&d, &v.memSyncDomain, sizeof d);
      return d == 0 || d == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: {
      int p = 0;
      std::memcpy(&p, &v.clusterSchedulingPolicyPreference, sizeof p);
      return p >= 0 && p <= 2 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    default:
      return CUDA_SUCCESS;
  }
}

// The DOT text of a graph (cuGraphDebugDotPrint): one line per node and per edge; child graph
// nodes as clusters. Only the first line ("digraph dot {") is meant to match the real driver's.
void DotNodes(const std::vector<GraphNode>& nodes, const std::string& prefix, std::string* out,
              int depth) {
  static const char* const kTypes[] = {"KERNEL", "MEMCPY", "MEMSET", "HOST", "GRAPH", "EMPTY",
                                       "WAIT_EVENT", "EVENT_RECORD", "EXT_SEMAS_SIGNAL",
                                       "EXT_SEMAS_WAIT", "MEM_ALLOC", "MEM_FREE", "BATCH_MEM_OP",
                                       "CONDITIONAL"};
  for (const GraphNode& n : nodes) {
    const int t = static_cast<int>(n.type);
    const char* type = t >= 0 && t <= 13 ? kTypes[t] : "UNKNOWN";
    const std::string name = prefix + "node_" + std::to_string(n.id);
    if (n.type == CU_GRAPH_NODE_TYPE_GRAPH && n.child != nullptr && depth < 64) {
      *out += "subgraph cluster_" + name + " {\nlabel=\"" + name + " (GRAPH)\";\n";
      DotNodes(*n.child, name + "_", out, depth + 1);
      *out += "}\n";
    } else {
      *out += "\"" + name + "\" [shape=record, label=\"{" + type + "\\n" + std::to_string(n.id) +
              "}\"];\n";
    }
    for (std::uint64_t d : n.deps) {
      *out += "\"" + prefix + "node_" + std::to_string(d) + "\" -> \"" + name + "\";\n";
    }
  }
}

}  // namespace

// The op of a batch memory operation node (graph_entry.cc's cuGraphLaunch): writes of 32 and 64
// bits; waits, flushes and barriers have nothing to wait for in the fake (its work is ordered),
// so a wait whose value never comes proceeds (the real driver would wait forever).
CUresult BatchMemOpOp(DriverState* st, const GraphNode& n, Op* op) {
  struct Write {
    std::byte* at;
    std::uint64_t value;
    std::size_t bytes;
  };
  std::vector<Write> writes;
  for (const CUstreamBatchMemOpParams& p : n.batch_ops) {
    int type = 0;
    std::memcpy(&type, &p.operation, sizeof type);
    if (type == CU_STREAM_MEM_OP_WRITE_VALUE_32 || type == CU_STREAM_MEM_OP_WRITE_VALUE_64) {
      const std::size_t bytes = type == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? 4 : 8;
      Allocation* a = st->FindAllocation(p.writeValue.address, bytes);
      if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
      writes.push_back({a->data + (p.writeValue.address - a->base),
                        bytes == 4 ? p.writeValue.value : p.writeValue.value64, bytes});
    }
  }
  op->what = "cuGraphLaunch (batch mem op node)";
  op->body = [writes] {
    for (const Write& w : writes) {
      if (w.bytes == 4) {
        const std::uint32_t v = static_cast<std::uint32_t>(w.value);
        EngineMove(w.at, reinterpret_cast<const std::byte*>(&v), 4);
      } else {
        EngineMove(w.at, reinterpret_cast<const std::byte*>(&w.value), 8);
      }
    }
    return CUDA_SUCCESS;
  };
  return CUDA_SUCCESS;
}

namespace {

// Checks batch memory operation node parameters. Measured: no operations is accepted; a null
// array (of 2), flags 1, a null context (with one current) and operation 99 are
// CUDA_ERROR_INVALID_VALUE. Aligned known addresses: UNMEASURED (cuda.h).
CUresult CheckBatch(DriverState* st, const CUDA_BATCH_MEM_OP_NODE_PARAMS& p)
    CUHAL_REQUIRES(st->mu) {
  if ((p.count != 0 && p.paramArray == nullptr) || p.flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (p.ctx == nullptr || st->FindContext(p.ctx) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < p.count; ++i) {
    const CUstreamBatchMemOpParams& op = p.paramArray[i];
    int type = 0;
    std::memcpy(&type, &op.operation, sizeof type);
    switch (type) {
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      case CU_STREAM_MEM_OP_WRITE_VALUE_64: {
        const std::size_t bytes =
            type == CU_STREAM_MEM_OP_WAIT_VALUE_32 || type == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? 4
                                                                                              : 8;
        const CUdeviceptr address = op.writeValue.address;  // the same place in waitValue
        if (address % bytes != 0 || !DeviceRangeKnown(st, address, bytes)) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
      }
      case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      case CU_STREAM_MEM_OP_BARRIER:
        break;
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

void SetBatch(GraphNode* n, const CUDA_BATCH_MEM_OP_NODE_PARAMS& p) {
  n->batch_ops.clear();
  if (p.count != 0) n->batch_ops.assign(p.paramArray, p.paramArray + p.count);
  n->batch_flags = p.flags;
  n->batch_ctx = p.ctx;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

// --- user objects ---

CUresult CUDAAPI cuUserObjectCreate(CUuserObject* object_out, void* ptr, CUhostFn destroy,
                                    unsigned int initialRefcount, unsigned int flags) try {
  GRAPHX_ENTER_NO_INIT(cuUserObjectCreate)
  // Measured: a count above INT_MAX is accepted here (not by Retain/Release); 0 is refused.
  if (object_out == nullptr || destroy == nullptr || initialRefcount == 0 ||
      flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *object_out = st->graphs().user_objects().Add(st->NewId(), ptr, destroy, initialRefcount);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuUserObjectCreate");
}

CUresult CUDAAPI cuUserObjectRetain(CUuserObject object, unsigned int count) try {
  GRAPHX_ENTER_NO_INIT(cuUserObjectRetain)
  std::shared_ptr<fakecuda::UserObject> o = st->graphs().user_objects().Find(object);
  if (o == nullptr || !fakecuda::ValidCount(count)) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::RetainUserObject(*o, count);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuUserObjectRetain");
}

// Measured: the destructor of the last reference runs inside this call, on the caller's thread
// (the driver lock released first, so it may call the driver).
CUresult CUDAAPI cuUserObjectRelease(CUuserObject object, unsigned int count) try {
  GRAPHX_ENTER_NO_INIT(cuUserObjectRelease)
  std::shared_ptr<fakecuda::UserObject> o = st->graphs().user_objects().Find(object);
  if (o == nullptr || !fakecuda::ValidCount(count)) return CUDA_ERROR_INVALID_VALUE;
  if (fakecuda::DropUserObjectRefs(*o, count)) {
    lock.Unlock();
    o->destroy(o->ptr);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuUserObjectRelease");
}

CUresult CUDAAPI cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                         unsigned int flags) try {
  GRAPHX_ENTER_NO_INIT(cuGraphRetainUserObject)
  GraphState* g = st->graphs().FindGraph(graph);
  std::shared_ptr<fakecuda::UserObject> o = st->graphs().user_objects().Find(object);
  if (g == nullptr || o == nullptr || !fakecuda::ValidCount(count) ||
      (flags != 0 && flags != CU_GRAPH_USER_OBJECT_MOVE)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // MOVE takes the caller's references over; otherwise the graph gets new ones.
  if (flags == 0) fakecuda::RetainUserObject(*o, count);
  g->user_refs.Add(std::move(o), count);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphRetainUserObject");
}

// Measured: releasing more than the graph holds, or an object it holds nothing of, succeeds and
// takes the object's count down by `count` (user_object_model.h).
CUresult CUDAAPI cuGraphReleaseUserObject(CUgraph graph, CUuserObject object,
                                          unsigned int count) try {
  GRAPHX_ENTER_NO_INIT(cuGraphReleaseUserObject)
  GraphState* g = st->graphs().FindGraph(graph);
  std::shared_ptr<fakecuda::UserObject> o = st->graphs().user_objects().Find(object);
  if (g == nullptr || o == nullptr || !fakecuda::ValidCount(count)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  g->user_refs.Release(o, count);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphReleaseUserObject");
}

// --- executable graphs: node enable, flags, instantiate with params ---

CUresult CUDAAPI cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
                                       unsigned int isEnabled) try {
  GRAPHX_ENTER_NO_INIT(cuGraphNodeSetEnabled)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* seen = fakecuda::ExecCopy(st, *exec, hNode);
  if (seen == nullptr || !fakecuda::EnableableType(seen->type)) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::WritableExecCopy(*exec, hNode)->disabled = isEnabled == 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphNodeSetEnabled");
}

CUresult CUDAAPI cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
                                       unsigned int* isEnabled) try {
  GRAPHX_ENTER_NO_INIT(cuGraphNodeGetEnabled)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr || isEnabled == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* n = fakecuda::ExecCopy(st, *exec, hNode);
  if (n == nullptr || !fakecuda::EnableableType(n->type)) return CUDA_ERROR_INVALID_VALUE;
  *isEnabled = n->disabled ? 0 : 1;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphNodeGetEnabled");
}

CUresult CUDAAPI cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags) try {
  FAKECUDA_ENTER(cuGraphExecGetFlags)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr || flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured: AUTO_FREE_ON_LAUNCH and DEVICE_LAUNCH are reported, USE_NODE_PRIORITY (and UPLOAD,
  // cuda.h) are not.
  *flags = exec->flags & (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                          CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecGetFlags");
}

CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) try {
  FAKECUDA_ENTER(cuGraphInstantiateWithParams)
  if (instantiateParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUDA_GRAPH_INSTANTIATE_PARAMS& p = *instantiateParams;
  p.result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  p.hErrNode_out = nullptr;
  if (phGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  constexpr cuuint64_t kKnown =
      CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
      CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if ((p.flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  // Measured: with no current context, CUDA_ERROR_INVALID_CONTEXT (result ERROR).
  if (st->CurrentContext() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  fakecuda::Stream* upload = nullptr;
  if ((p.flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0) {
    CUresult err = CUDA_SUCCESS;
    upload = st->ResolveStream(p.hUploadStream, &err);
    if (upload == nullptr) return err;
  }
  CUgraphExec exec = nullptr;
  CUresult r = fakecuda::InstantiateGraph(st, &exec, hGraph, p.flags, &p.result_out,
                                          &p.hErrNode_out);
  if (r != CUDA_SUCCESS) return r;
  if (upload != nullptr) {
    // As cuGraphUpload: the executable graph's graph memory is reserved from now on.
    fakecuda::ReserveGraphMemory(st, st->graphs().FindExec(exec));
  }
  *phGraphExec = exec;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphInstantiateWithParams");
}

// --- host nodes ---

CUresult CUDAAPI cuGraphHostNodeGetParams(CUgraphNode hNode,
                                          CUDA_HOST_NODE_PARAMS* nodeParams) try {
  GRAPHX_ENTER_NO_INIT(cuGraphHostNodeGetParams)
  const GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_HOST);
  if (n == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  nodeParams->fn = n->host_fn;
  nodeParams->userData = n->host_data;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphHostNodeGetParams");
}

CUresult CUDAAPI cuGraphHostNodeSetParams(CUgraphNode hNode,
                                          const CUDA_HOST_NODE_PARAMS* nodeParams) try {
  GRAPHX_ENTER_NO_INIT(cuGraphHostNodeSetParams)
  GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_HOST);
  if (n == nullptr || nodeParams == nullptr || nodeParams->fn == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  n->host_fn = nodeParams->fn;
  n->host_data = nodeParams->userData;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphHostNodeSetParams");
}

CUresult CUDAAPI cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                              const CUDA_HOST_NODE_PARAMS* nodeParams) try {
  GRAPHX_ENTER_NO_INIT(cuGraphExecHostNodeSetParams)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr || nodeParams == nullptr || nodeParams->fn == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const GraphNode* seen = fakecuda::ExecCopy(st, *exec, hNode);
  if (seen == nullptr || seen->type != CU_GRAPH_NODE_TYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
  GraphNode* n = fakecuda::WritableExecCopy(*exec, hNode);
  n->host_fn = nodeParams->fn;
  n->host_data = nodeParams->userData;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecHostNodeSetParams");
}

// --- event record / wait nodes ---

namespace {

CUresult GetNodeEvent(DriverState* st, CUgraphNode hNode, CUgraphNodeType type, CUevent* out)
    CUHAL_REQUIRES(st->mu) {
  const GraphNode* n = fakecuda::NodeOfType(st, hNode, type);
  if (n == nullptr || out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = n->event;
  return CUDA_SUCCESS;
}

// Measured: only a null event is refused; a destroyed event, or garbage, is taken (a launch then
// fails on it, graph_entry.cc).
CUresult SetNodeEvent(DriverState* st, CUgraphNode hNode, CUgraphNodeType type, CUevent event)
    CUHAL_REQUIRES(st->mu) {
  GraphNode* n = fakecuda::NodeOfType(st, hNode, type);
  if (n == nullptr || event == nullptr) return CUDA_ERROR_INVALID_VALUE;
  n->event = event;
  return CUDA_SUCCESS;
}

CUresult ExecSetNodeEvent(DriverState* st, CUgraphExec hGraphExec, CUgraphNode hNode,
                          CUgraphNodeType type, CUevent event) CUHAL_REQUIRES(st->mu) {
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr || event == nullptr) return CUDA_ERROR_INVALID_VALUE;  // as SetNodeEvent
  const GraphNode* seen = fakecuda::ExecCopy(st, *exec, hNode);
  if (seen == nullptr || seen->type != type) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::WritableExecCopy(*exec, hNode)->event = event;
  return CUDA_SUCCESS;
}

}  // namespace

CUresult CUDAAPI cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent* event_out) try {
  GRAPHX_ENTER_NO_INIT(cuGraphEventRecordNodeGetEvent)
  return GetNodeEvent(st, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event_out);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphEventRecordNodeGetEvent");
}

CUresult CUDAAPI cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event) try {
  GRAPHX_ENTER_NO_INIT(cuGraphEventRecordNodeSetEvent)
  return SetNodeEvent(st, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphEventRecordNodeSetEvent");
}

CUresult CUDAAPI cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent* event_out) try {
  GRAPHX_ENTER_NO_INIT(cuGraphEventWaitNodeGetEvent)
  return GetNodeEvent(st, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event_out);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphEventWaitNodeGetEvent");
}

CUresult CUDAAPI cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event) try {
  GRAPHX_ENTER_NO_INIT(cuGraphEventWaitNodeSetEvent)
  return SetNodeEvent(st, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphEventWaitNodeSetEvent");
}

CUresult CUDAAPI cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                    CUevent event) try {
  GRAPHX_ENTER_NO_INIT(cuGraphExecEventRecordNodeSetEvent)
  return ExecSetNodeEvent(st, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecEventRecordNodeSetEvent");
}

CUresult CUDAAPI cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  CUevent event) try {
  GRAPHX_ENTER_NO_INIT(cuGraphExecEventWaitNodeSetEvent)
  return ExecSetNodeEvent(st, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecEventWaitNodeSetEvent");
}

// --- kernel nodes: attributes and parameters ---

CUresult CUDAAPI cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                               CUkernelNodeAttrValue* value_out) try {
  FAKECUDA_ENTER(cuGraphKernelNodeGetAttribute)
  const GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
  const int id = static_cast<int>(attr);
  if (n == nullptr || value_out == nullptr || !fakecuda::NodeAttribute(id)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  auto it = n->attrs.find(id);
  *value_out = it != n->attrs.end() ? it->second : fakecuda::DefaultAttribute(id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphKernelNodeGetAttribute");
}

CUresult CUDAAPI cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                               const CUkernelNodeAttrValue* value) try {
  FAKECUDA_ENTER(cuGraphKernelNodeSetAttribute)
  GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
  const int id = static_cast<int>(attr);
  if (n == nullptr || value == nullptr || !fakecuda::NodeAttribute(id)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUlaunchAttributeValue v = *value;
  if (CUresult e = fakecuda::CheckAttribute(id, *n, &v); e != CUDA_SUCCESS) return e;
  n->attrs[id] = v;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphKernelNodeSetAttribute");
}

CUresult CUDAAPI cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src) try {
  FAKECUDA_ENTER(cuGraphKernelNodeCopyAttributes)
  GraphNode* to = fakecuda::NodeOfType(st, dst, CU_GRAPH_NODE_TYPE_KERNEL);
  const GraphNode* from = fakecuda::NodeOfType(st, src, CU_GRAPH_NODE_TYPE_KERNEL);
  if (to == nullptr || from == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (to != from) to->attrs = from->attrs;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphKernelNodeCopyAttributes");
}

CUresult CUDAAPI cuGraphKernelNodeGetParams(CUgraphNode hNode,
                                            CUDA_KERNEL_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphKernelNodeGetParams)
  GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
  if (n == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS& p = *nodeParams;
  std::memset(&p, 0, sizeof p);
  p.func = fakecuda::EncodeHandle<CUfunction>(HandleKind::kFunction, n->function_id);
  p.gridDimX = n->config.grid.x;
  p.gridDimY = n->config.grid.y;
  p.gridDimZ = n->config.grid.z;
  p.blockDimX = n->config.block.x;
  p.blockDimY = n->config.block.y;
  p.blockDimZ = n->config.block.z;
  p.sharedMemBytes = n->config.shared_mem_bytes;
  // Measured: the function's context, the kernel when the node was given one as `kern`, and the
  // parameters in the form they were given: `kernelParams` (pointers into the node's own copy,
  // not the caller's array) or `extra` (the node's own buffer). Valid until the node changes.
  fakecuda::ModuleModel& m = fakecuda::Modules(st);
  auto f = m.functions.find(n->function_id);
  if (f != m.functions.end()) {
    p.ctx = fakecuda::EncodeHandle<CUcontext>(HandleKind::kContext, f->second.ctx_id);
  }
  if (n->by_kernel != 0) p.kern = fakecuda::EncodeHandle<CUkernel>(HandleKind::kKernel, n->by_kernel);
  n->param_view.clear();
  if (n->params_by_extra) {
    n->extra_size = n->params.size();
    n->param_view = {CU_LAUNCH_PARAM_BUFFER_POINTER, n->params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &n->extra_size, CU_LAUNCH_PARAM_END};
    p.extra = n->param_view.data();
  } else if (f != m.functions.end()) {
    for (const fakecuda::KernelParamInfo& info : f->second.kernel.params) {
      n->param_view.push_back(info.offset < n->params.size() ? n->params.data() + info.offset
                                                             : nullptr);
    }
    p.kernelParams = n->param_view.empty() ? nullptr : n->param_view.data();
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphKernelNodeGetParams");
}

CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode hNode,
                                            const CUDA_KERNEL_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphKernelNodeSetParams)
  std::uint64_t graph_id = 0;
  GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_KERNEL, &graph_id);
  if (n == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphNode changed = *n;
  if (CUresult e = fakecuda::KernelFromParams(st, *nodeParams, &changed); e != CUDA_SUCCESS) {
    return e;
  }
  if (GraphState* g = fakecuda::GraphById(st, graph_id)) {
    if (CUresult e = fakecuda::CheckBodyNode(st, *g, changed); e != CUDA_SUCCESS) return e;
  }
  *n = std::move(changed);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphKernelNodeSetParams");
}

// The older ABI (CUDA_KERNEL_NODE_PARAMS_v1, without kern and ctx), under its symbol names.
CUresult CUDAAPI FakecudaGraphKernelNodeGetParamsV1(CUgraphNode hNode,
                                                    CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
    __asm__("cuGraphKernelNodeGetParams");
CUresult CUDAAPI FakecudaGraphKernelNodeGetParamsV1(CUgraphNode hNode,
                                                    CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (nodeParams == nullptr) return cuGraphKernelNodeGetParams(hNode, nullptr);
  CUDA_KERNEL_NODE_PARAMS v2;
  const CUresult r = cuGraphKernelNodeGetParams(hNode, &v2);
  if (r == CUDA_SUCCESS) std::memcpy(nodeParams, &v2, sizeof *nodeParams);
  return r;
}

CUresult CUDAAPI FakecudaGraphKernelNodeSetParamsV1(CUgraphNode hNode,
                                                    const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
    __asm__("cuGraphKernelNodeSetParams");
CUresult CUDAAPI FakecudaGraphKernelNodeSetParamsV1(CUgraphNode hNode,
                                                    const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (nodeParams == nullptr) return cuGraphKernelNodeSetParams(hNode, nullptr);
  CUDA_KERNEL_NODE_PARAMS v2;
  std::memset(&v2, 0, sizeof v2);
  std::memcpy(&v2, nodeParams, sizeof *nodeParams);
  return cuGraphKernelNodeSetParams(hNode, &v2);
}

// --- child graph nodes ---

// The node's embedded graph: made on first use from the node's copy of its child graph (new
// node ids; each node records the child's node it copies, so cuGraphNodeFindInClone finds the
// child's nodes in it). Changes to it are reflected in the node (cuda.h) because the node's copy
// is refreshed from it before use (GraphModel::SyncEmbedded).
CUresult CUDAAPI cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph) try {
  FAKECUDA_ENTER(cuGraphChildGraphNodeGetGraph)
  GraphModel& graphs = st->graphs();
  GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_GRAPH);
  if (n == nullptr || phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (n->embedded_graph == 0) {
    const std::uint64_t node_id = n->id;
    const std::shared_ptr<const std::vector<GraphNode>> child = n->child;
    std::map<std::uint64_t, std::uint64_t> fresh;
    if (child != nullptr) {
      for (const GraphNode& c : *child) fresh[c.id] = st->NewId();
    }
    const std::uint64_t graph_id = st->NewId();
    GraphState* g = graphs.AddGraph(graph_id);
    g->embedding_node = node_id;
    if (child != nullptr) {
      for (const GraphNode& c : *child) {
        GraphNode copy = c;
        copy.cloned_from = c.id;
        copy.id = fresh.at(c.id);
        copy.embedded_graph = 0;
        for (std::uint64_t& d : copy.deps) d = fresh.at(d);
        graphs.AddNode(*g, std::move(copy));
      }
    }
    // The child graph's user object references move to the embedded graph (which is the
    // child graph from now on; SyncEmbedded copies them back into the node).
    if (GraphNode& node = graphs.mutable_node(node_id); node.child_refs != nullptr) {
      g->user_refs = fakecuda::UserObjectRefs(*node.child_refs);
      node.child_refs.reset();
    }
    graphs.mutable_node(node_id).embedded_graph = graph_id;
    n = &graphs.mutable_node(node_id);
  }
  *phGraph = fakecuda::EncodeHandle<CUgraph>(HandleKind::kGraph, n->embedded_graph);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphChildGraphNodeGetGraph");
}

CUresult CUDAAPI cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                    CUgraph childGraph) try {
  FAKECUDA_ENTER(cuGraphExecChildGraphNodeSetParams)
  GraphModel& graphs = st->graphs();
  GraphExecState* exec = graphs.FindExec(hGraphExec);
  if (exec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_GRAPH);
  if (n == nullptr || graphs.GraphOfNode(n->id) != exec->graph_id) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const GraphState* child = graphs.FindGraph(childGraph);
  if (child == nullptr) return CUDA_ERROR_INVALID_VALUE;
  graphs.SyncEmbedded(child->id);
  return fakecuda::ExecSetChildGraph(st, exec, n->id, *child);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecChildGraphNodeSetParams");
}

// --- clones, DOT ---

// The node of `hClonedGraph` copied from `hOriginalNode` by cuGraphClone (or by the embedded
// graph of a child graph node). Measured: a node of the clone itself, of the original graph, one
// added after cloning, or the original of a clone's clone are CUDA_ERROR_INVALID_VALUE with
// *phNode written (null here).
CUresult CUDAAPI cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode,
                                        CUgraph hClonedGraph) try {
  FAKECUDA_ENTER(cuGraphNodeFindInClone)
  GraphModel& graphs = st->graphs();
  GraphState* clone = graphs.FindGraph(hClonedGraph);
  const std::uint64_t original = fakecuda::DecodeHandle(HandleKind::kGraphNode, hOriginalNode);
  if (phNode == nullptr || clone == nullptr || original == 0) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint64_t id : clone->nodes) {
    if (graphs.node(id).cloned_from == original) {
      *phNode = fakecuda::NodeHandle(id);
      return CUDA_SUCCESS;
    }
  }
  *phNode = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphNodeFindInClone");
}

// Writes a DOT description of the graph to `path` (any flags). A file that cannot be written:
// CUDA_ERROR_OPERATING_SYSTEM (measured: a path in a missing directory).
CUresult CUDAAPI cuGraphDebugDotPrint(CUgraph hGraph, const char* path, unsigned int flags) try {
  GRAPHX_ENTER_NO_INIT(cuGraphDebugDotPrint)
  (void)flags;
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr || path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  graphs.SyncEmbedded(g->id);
  std::vector<GraphNode> nodes;
  for (std::uint64_t id : g->nodes) nodes.push_back(graphs.node(id));
  std::string text = "digraph dot {\n";
  text += "subgraph cluster_" + std::to_string(g->id) + " {\nlabel=\"graph_" +
          std::to_string(g->id) + "\";\n";
  fakecuda::DotNodes(nodes, "graph_" + std::to_string(g->id) + "_", &text, 0);
  text += "}\n}\n";
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) return CUDA_ERROR_OPERATING_SYSTEM;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  return ok && closed ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphDebugDotPrint");
}

// --- memory alloc / free nodes ---

CUresult CUDAAPI cuGraphMemAllocNodeGetParams(CUgraphNode hNode,
                                              CUDA_MEM_ALLOC_NODE_PARAMS* params_out) try {
  GRAPHX_ENTER_NO_INIT(cuGraphMemAllocNodeGetParams)
  GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  if (n == nullptr || params_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEM_ALLOC_NODE_PARAMS& p = *params_out;
  std::memset(&p, 0, sizeof p);
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.poolProps.location.id = n->alloc_device;
  // Measured: a pointer even without descriptors (the node's own array).
  static CUmemAccessDesc no_access{};
  p.accessDescs = n->alloc_access.empty() ? &no_access : n->alloc_access.data();
  p.accessDescCount = n->alloc_access.size();
  p.bytesize = n->alloc_bytes;
  p.dptr = n->alloc_dptr;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphMemAllocNodeGetParams");
}

CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) try {
  GRAPHX_ENTER_NO_INIT(cuGraphMemFreeNodeGetParams)
  const GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_MEM_FREE);
  if (n == nullptr || dptr_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *dptr_out = n->alloc_dptr;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphMemFreeNodeGetParams");
}

// --- removing dependencies ---

// Measured: pairs are removed in order, and the first absent edge (or a node of another graph)
// ends the call with CUDA_ERROR_INVALID_VALUE, the edges before it removed; edge data of another
// type removes the default edge; reserved bytes set are refused. Ports: UNMEASURED (refused).
CUresult CUDAAPI cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from,
                                           const CUgraphNode* to, const CUgraphEdgeData* edgeData,
                                           size_t numDependencies) try {
  FAKECUDA_ENTER(cuGraphRemoveDependencies)
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (numDependencies == 0) return CUDA_SUCCESS;
  if (from == nullptr || to == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < numDependencies; ++i) {
    const std::uint64_t a = fakecuda::DecodeHandle(HandleKind::kGraphNode, from[i]);
    const std::uint64_t b = fakecuda::DecodeHandle(HandleKind::kGraphNode, to[i]);
    if (!graphs.NodeIn(a, g->id) || !graphs.NodeIn(b, g->id)) return CUDA_ERROR_INVALID_VALUE;
    if (edgeData != nullptr) {
      const CUgraphEdgeData& e = edgeData[i];
      if (e.from_port != 0 || e.to_port != 0 || e.reserved[0] != 0 || e.reserved[1] != 0 ||
          e.reserved[2] != 0 || e.reserved[3] != 0) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    std::vector<std::uint64_t>& deps = graphs.mutable_node(b).deps;
    auto it = std::find(deps.begin(), deps.end(), a);
    if (it == deps.end()) return CUDA_ERROR_INVALID_VALUE;
    deps.erase(it);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphRemoveDependencies");
}

CUresult CUDAAPI FakecudaGraphRemoveDependenciesV1(CUgraph hGraph, const CUgraphNode* from,
                                                   const CUgraphNode* to, size_t numDependencies)
    __asm__("cuGraphRemoveDependencies");
CUresult CUDAAPI FakecudaGraphRemoveDependenciesV1(CUgraph hGraph, const CUgraphNode* from,
                                                   const CUgraphNode* to,
                                                   size_t numDependencies) {
  return cuGraphRemoveDependencies(hGraph, from, to, nullptr, numDependencies);
}

// --- batch memory operation nodes ---

CUresult CUDAAPI cuGraphAddBatchMemOpNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                          const CUgraphNode* dependencies, size_t numDependencies,
                                          const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) try {
  GRAPHX_ENTER_NO_INIT(cuGraphAddBatchMemOpNode)
  if (phGraphNode == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (st->graphs().FindGraph(hGraph) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckBatch(st, *nodeParams); e != CUDA_SUCCESS) return e;
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
  fakecuda::SetBatch(&node, *nodeParams);
  return fakecuda::AddNode(st, phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddBatchMemOpNode");
}

CUresult CUDAAPI cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode,
                                                CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams_out) try {
  GRAPHX_ENTER_NO_INIT(cuGraphBatchMemOpNodeGetParams)
  GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
  if (n == nullptr || nodeParams_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  nodeParams_out->ctx = n->batch_ctx;
  nodeParams_out->count = static_cast<unsigned>(n->batch_ops.size());
  nodeParams_out->paramArray = n->batch_ops.data();  // valid until the node changes
  nodeParams_out->flags = n->batch_flags;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphBatchMemOpNodeGetParams");
}

CUresult CUDAAPI cuGraphBatchMemOpNodeSetParams(CUgraphNode hNode,
                                                const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) try {
  GRAPHX_ENTER_NO_INIT(cuGraphBatchMemOpNodeSetParams)
  GraphNode* n = fakecuda::NodeOfType(st, hNode, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
  if (n == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::CheckBatch(st, *nodeParams); e != CUDA_SUCCESS) return e;
  fakecuda::SetBatch(n, *nodeParams);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphBatchMemOpNodeSetParams");
}

// Measured: fewer (1 of 2) or more (3) operations than instantiated are CUDA_ERROR_INVALID_VALUE;
// the same number: UNMEASURED (taken).
CUresult CUDAAPI cuGraphExecBatchMemOpNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) try {
  GRAPHX_ENTER_NO_INIT(cuGraphExecBatchMemOpNodeSetParams)
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* seen = fakecuda::ExecCopy(st, *exec, hNode);
  if (seen == nullptr || seen->type != CU_GRAPH_NODE_TYPE_BATCH_MEM_OP) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (CUresult e = fakecuda::CheckBatch(st, *nodeParams); e != CUDA_SUCCESS) return e;
  if (nodeParams->count != seen->batch_ops.size()) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::SetBatch(fakecuda::WritableExecCopy(*exec, hNode), *nodeParams);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecBatchMemOpNodeSetParams");
}

// --- external semaphore nodes ---
// Measured: a node of no semaphores, and one naming a null semaphore, is made (the real driver
// checks no semaphore handle here; it crashed on a null semaphore array). The fake imports no
// external semaphore and does not run these nodes: a graph holding one is refused at launch
// (CUDA_ERROR_NOT_SUPPORTED, graph_entry.cc, as for nodes made with cuGraphAddNode). Null arrays
// with a nonzero count: CUDA_ERROR_INVALID_VALUE (the real driver crashes). The getters hand out the node's own
// arrays; the setters replace them (executable graph: the same count, UNMEASURED).

}  // extern "C"

namespace {

template <typename Params>
CUresult ExtSemParams(const Params* p) {
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (p->numExtSems != 0 && (p->extSemArray == nullptr || p->paramsArray == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

void SetExtSem(GraphNode* n, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS& p) {
  n->ext_sems.assign(p.extSemArray, p.extSemArray + p.numExtSems);
  n->ext_signal.assign(p.paramsArray, p.paramsArray + p.numExtSems);
}
void SetExtSem(GraphNode* n, const CUDA_EXT_SEM_WAIT_NODE_PARAMS& p) {
  n->ext_sems.assign(p.extSemArray, p.extSemArray + p.numExtSems);
  n->ext_wait.assign(p.paramsArray, p.paramsArray + p.numExtSems);
}

void GetExtSem(GraphNode* n, CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* p) {
  p->extSemArray = n->ext_sems.data();
  p->paramsArray = n->ext_signal.data();
  p->numExtSems = static_cast<unsigned>(n->ext_sems.size());
}
void GetExtSem(GraphNode* n, CUDA_EXT_SEM_WAIT_NODE_PARAMS* p) {
  p->extSemArray = n->ext_sems.data();
  p->paramsArray = n->ext_wait.data();
  p->numExtSems = static_cast<unsigned>(n->ext_sems.size());
}

template <typename Params>
CUresult AddExtSemNode(DriverState* st, CUgraphNodeType type, CUgraphNode* out, CUgraph graph,
                       const CUgraphNode* deps, size_t num_deps, const Params* params)
    CUHAL_REQUIRES(st->mu) {
  if (out == nullptr || st->graphs().FindGraph(graph) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = ExtSemParams(params); e != CUDA_SUCCESS) return e;
  GraphNode node;
  node.type = type;
  SetExtSem(&node, *params);
  return fakecuda::AddNode(st, out, graph, deps, num_deps, std::move(node));
}

template <typename Params>
CUresult GetExtSemNode(DriverState* st, CUgraphNodeType type, CUgraphNode hNode, Params* out)
    CUHAL_REQUIRES(st->mu) {
  GraphNode* n = fakecuda::NodeOfType(st, hNode, type);
  if (n == nullptr || out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GetExtSem(n, out);
  return CUDA_SUCCESS;
}

template <typename Params>
CUresult SetExtSemNode(DriverState* st, CUgraphNodeType type, CUgraphNode hNode,
                       const Params* params) CUHAL_REQUIRES(st->mu) {
  GraphNode* n = fakecuda::NodeOfType(st, hNode, type);
  if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = ExtSemParams(params); e != CUDA_SUCCESS) return e;
  SetExtSem(n, *params);
  return CUDA_SUCCESS;
}

template <typename Params>
CUresult ExecSetExtSemNode(DriverState* st, CUgraphNodeType type, CUgraphExec hGraphExec,
                           CUgraphNode hNode, const Params* params) CUHAL_REQUIRES(st->mu) {
  GraphExecState* exec = st->graphs().FindExec(hGraphExec);
  if (exec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* seen = fakecuda::ExecCopy(st, *exec, hNode);
  if (seen == nullptr || seen->type != type) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = ExtSemParams(params); e != CUDA_SUCCESS) return e;
  if (params->numExtSems != seen->ext_sems.size()) return CUDA_ERROR_INVALID_VALUE;
  SetExtSem(fakecuda::WritableExecCopy(*exec, hNode), *params);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuGraphAddExternalSemaphoresSignalNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphAddExternalSemaphoresSignalNode)
  return AddExtSemNode(st, CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL, phGraphNode, hGraph,
                       dependencies, numDependencies, nodeParams);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddExternalSemaphoresSignalNode");
}

CUresult CUDAAPI cuGraphAddExternalSemaphoresWaitNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_EXT_SEM_WAIT_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphAddExternalSemaphoresWaitNode)
  return AddExtSemNode(st, CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT, phGraphNode, hGraph, dependencies,
                       numDependencies, nodeParams);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddExternalSemaphoresWaitNode");
}

CUresult CUDAAPI cuGraphExternalSemaphoresSignalNodeGetParams(
    CUgraphNode hNode, CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* params_out) try {
  FAKECUDA_ENTER(cuGraphExternalSemaphoresSignalNodeGetParams)
  return GetExtSemNode(st, CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL, hNode, params_out);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExternalSemaphoresSignalNodeGetParams");
}

CUresult CUDAAPI cuGraphExternalSemaphoresSignalNodeSetParams(
    CUgraphNode hNode, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphExternalSemaphoresSignalNodeSetParams)
  return SetExtSemNode(st, CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL, hNode, nodeParams);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExternalSemaphoresSignalNodeSetParams");
}

CUresult CUDAAPI cuGraphExternalSemaphoresWaitNodeGetParams(
    CUgraphNode hNode, CUDA_EXT_SEM_WAIT_NODE_PARAMS* params_out) try {
  FAKECUDA_ENTER(cuGraphExternalSemaphoresWaitNodeGetParams)
  return GetExtSemNode(st, CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT, hNode, params_out);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExternalSemaphoresWaitNodeGetParams");
}

CUresult CUDAAPI cuGraphExternalSemaphoresWaitNodeSetParams(
    CUgraphNode hNode, const CUDA_EXT_SEM_WAIT_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphExternalSemaphoresWaitNodeSetParams)
  return SetExtSemNode(st, CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT, hNode, nodeParams);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExternalSemaphoresWaitNodeSetParams");
}

CUresult CUDAAPI cuGraphExecExternalSemaphoresSignalNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode,
    const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphExecExternalSemaphoresSignalNodeSetParams)
  return ExecSetExtSemNode(st, CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL, hGraphExec, hNode,
                           nodeParams);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecExternalSemaphoresSignalNodeSetParams");
}

CUresult CUDAAPI cuGraphExecExternalSemaphoresWaitNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_EXT_SEM_WAIT_NODE_PARAMS* nodeParams) try {
  FAKECUDA_ENTER(cuGraphExecExternalSemaphoresWaitNodeSetParams)
  return ExecSetExtSemNode(st, CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT, hGraphExec, hNode, nodeParams);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphExecExternalSemaphoresWaitNodeSetParams");
}

}  // extern "C"
