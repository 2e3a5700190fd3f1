// Copyright 2026 The cuhal Authors.
// Entry points: a graph's structure: its nodes, roots and edges, a node's type, dependencies and
// dependents, adding edges, destroying a node, cloning a graph. cuda.h 13 maps cuGraphGetEdges,
// cuGraphNodeGetDependencies, cuGraphNodeGetDependentNodes and cuGraphAddDependencies to their
// _v2 forms (with edge data); the older forms are exported under their symbol names too. Edge
// data is always the default (zero) here: the fake has no programmatic edges.
//
// Arrays follow cuda.h's contract: a NULL array asks for the count; otherwise *count entries are
// filled, those beyond the actual number set to NULL, and *count set to the actual number.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/graph_conditional_hooks.h"
#include "fakecuda/entry/graph_internal.h"
#include "fakecuda/internal/graph_model.h"

using fakecuda::GraphModel;
using fakecuda::GraphNode;
using fakecuda::GraphState;
using fakecuda::HandleKind;

namespace fakecuda {
namespace {

CUgraphNode NodeHandle(std::uint64_t id) {
  return EncodeHandle<CUgraphNode>(HandleKind::kGraphNode, id);
}

// Writes `ids` as node handles into (out, *count) by the contract at the top of the file.
CUresult WriteNodes(const std::vector<std::uint64_t>& ids, CUgraphNode* out, CUgraphEdgeData* edges,
                    size_t* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (out != nullptr) {
    for (size_t i = 0; i < *count; ++i) {
      out[i] = i < ids.size() ? NodeHandle(ids[i]) : nullptr;
      if (edges != nullptr) edges[i] = CUgraphEdgeData{};
    }
  }
  *count = ids.size();
  return CUDA_SUCCESS;
}

// The nodes of graph `graph_id` that depend on `id`.
std::vector<std::uint64_t> Dependents(GraphModel& graphs, const GraphState& g, std::uint64_t id) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t other : g.nodes) {
    const std::vector<std::uint64_t>& deps = graphs.node(other).deps;
    if (std::find(deps.begin(), deps.end(), id) != deps.end()) out.push_back(other);
  }
  return out;
}

CUresult AddDependencies(DriverState* st, CUgraph hGraph, const CUgraphNode* from,
                         const CUgraphNode* to, size_t n) CUHAL_REQUIRES(st->mu) {
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (n > 0 && (from == nullptr || to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  // Checked first: either every edge is added or none.
  std::set<std::pair<std::uint64_t, std::uint64_t>> adding;
  for (size_t i = 0; i < n; ++i) {
    std::uint64_t a = DecodeHandle(HandleKind::kGraphNode, from[i]);
    std::uint64_t b = DecodeHandle(HandleKind::kGraphNode, to[i]);
    if (!graphs.NodeIn(a, g->id) || !graphs.NodeIn(b, g->id) || a == b) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const std::vector<std::uint64_t>& deps = graphs.node(b).deps;
    if (std::find(deps.begin(), deps.end(), a) != deps.end() || !adding.emplace(a, b).second) {
      return CUDA_ERROR_INVALID_VALUE;  // the edge exists already
    }
  }
  // An edge that closes a cycle is accepted, as on the H200 (graph_test.cc
  // StructureQueriesCloneAndEdges); instantiating the graph refuses it.
  for (const auto& [a, b] : adding) graphs.mutable_node(b).deps.push_back(a);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) try {
  FAKECUDA_ENTER(cuGraphGetNodes)
  GraphState* g = st->graphs().FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fakecuda::WriteNodes(g->nodes, nodes, nullptr, numNodes);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphGetNodes");
}

CUresult CUDAAPI cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes,
                                     size_t* numRootNodes) try {
  FAKECUDA_ENTER(cuGraphGetRootNodes)
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::vector<std::uint64_t> roots;
  for (std::uint64_t id : g->nodes) {
    if (graphs.node(id).deps.empty()) roots.push_back(id);
  }
  return fakecuda::WriteNodes(roots, rootNodes, nullptr, numRootNodes);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphGetRootNodes");
}

CUresult CUDAAPI cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                 CUgraphEdgeData* edgeData, size_t* numEdges) try {
  FAKECUDA_ENTER(cuGraphGetEdges)
  if (numEdges == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphModel& graphs = st->graphs();
  GraphState* g = graphs.FindGraph(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if ((from == nullptr) != (to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> edges;
  for (std::uint64_t id : g->nodes) {
    for (std::uint64_t d : graphs.node(id).deps) edges.emplace_back(d, id);
  }
  if (from != nullptr) {
    for (size_t i = 0; i < *numEdges; ++i) {
      from[i] = i < edges.size() ? fakecuda::NodeHandle(edges[i].first) : nullptr;
      to[i] = i < edges.size() ? fakecuda::NodeHandle(edges[i].second) : nullptr;
      if (edgeData != nullptr) edgeData[i] = CUgraphEdgeData{};
    }
  }
  *numEdges = edges.size();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphGetEdges");
}

CUresult CUDAAPI FakecudaGraphGetEdgesV1(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                         size_t* numEdges) __asm__("cuGraphGetEdges");
CUresult CUDAAPI FakecudaGraphGetEdgesV1(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                         size_t* numEdges) {
  return cuGraphGetEdges(hGraph, from, to, nullptr, numEdges);
}

CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) try {
  FAKECUDA_ENTER(cuGraphNodeGetType)
  if (type == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode* n = st->graphs().FindNode(hNode);
  if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *type = n->type;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphNodeGetType");
}

CUresult CUDAAPI cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies,
                                            CUgraphEdgeData* edgeData,
                                            size_t* numDependencies) try {
  FAKECUDA_ENTER(cuGraphNodeGetDependencies)
  const GraphNode* n = st->graphs().FindNode(hNode);
  if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fakecuda::WriteNodes(n->deps, dependencies, edgeData, numDependencies);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphNodeGetDependencies");
}

CUresult CUDAAPI
FakecudaGraphNodeGetDependenciesV1(CUgraphNode hNode, CUgraphNode* dependencies,
                                   size_t* numDependencies) __asm__("cuGraphNodeGetDependencies");
CUresult CUDAAPI FakecudaGraphNodeGetDependenciesV1(CUgraphNode hNode, CUgraphNode* dependencies,
                                                    size_t* numDependencies) {
  return cuGraphNodeGetDependencies(hNode, dependencies, nullptr, numDependencies);
}

CUresult CUDAAPI cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes,
                                              CUgraphEdgeData* edgeData,
                                              size_t* numDependentNodes) try {
  FAKECUDA_ENTER(cuGraphNodeGetDependentNodes)
  GraphModel& graphs = st->graphs();
  std::uint64_t graph_id = 0;
  const GraphNode* n = graphs.FindNode(hNode, &graph_id);
  if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphState* g = fakecuda::GraphById(st, graph_id);
  if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fakecuda::WriteNodes(fakecuda::Dependents(graphs, *g, n->id), dependentNodes, edgeData,
                              numDependentNodes);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphNodeGetDependentNodes");
}

CUresult CUDAAPI FakecudaGraphNodeGetDependentNodesV1(
    CUgraphNode hNode, CUgraphNode* dependentNodes,
    size_t* numDependentNodes) __asm__("cuGraphNodeGetDependentNodes");
CUresult CUDAAPI FakecudaGraphNodeGetDependentNodesV1(CUgraphNode hNode,
                                                      CUgraphNode* dependentNodes,
                                                      size_t* numDependentNodes) {
  return cuGraphNodeGetDependentNodes(hNode, dependentNodes, nullptr, numDependentNodes);
}

CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from,
                                        const CUgraphNode* to, const CUgraphEdgeData* edgeData,
                                        size_t numDependencies) try {
  FAKECUDA_ENTER(cuGraphAddDependencies)
  if (edgeData != nullptr) {
    for (size_t i = 0; i < numDependencies; ++i) {
      const CUgraphEdgeData& e = edgeData[i];
      if (e.from_port != 0 || e.to_port != 0 || e.type != 0) return CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  return fakecuda::AddDependencies(st, hGraph, from, to, numDependencies);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphAddDependencies");
}

CUresult CUDAAPI
FakecudaGraphAddDependenciesV1(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                               size_t numDependencies) __asm__("cuGraphAddDependencies");
CUresult CUDAAPI FakecudaGraphAddDependenciesV1(CUgraph hGraph, const CUgraphNode* from,
                                                const CUgraphNode* to, size_t numDependencies) {
  return cuGraphAddDependencies(hGraph, from, to, nullptr, numDependencies);
}

CUresult CUDAAPI cuGraphDestroyNode(CUgraphNode hNode) try {
  FAKECUDA_ENTER(cuGraphDestroyNode)
  GraphModel& graphs = st->graphs();
  std::uint64_t graph_id = 0;
  const GraphNode* n = graphs.FindNode(hNode, &graph_id);
  if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphState* g = fakecuda::GraphById(st, graph_id);
  if (g != nullptr && g->capture_id != 0) {
    return CUDA_ERROR_INVALID_VALUE;  // a capture's graph (modelling choice)
  }
  // cuda.h: "Nodes which belong to a graph which contains allocation or free nodes cannot be
  // destroyed." Measured 2026-12-06, H100 driver 580.159.04 (graphx_probe "mem:params": a free
  // node): CUDA_ERROR_NOT_SUPPORTED.
  if (g != nullptr) {
    for (std::uint64_t id : g->nodes) {
      const CUgraphNodeType t = graphs.node(id).type;
      if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC || t == CU_GRAPH_NODE_TYPE_MEM_FREE) {
        return CUDA_ERROR_NOT_SUPPORTED;
      }
    }
  }
  graphs.DestroyNode(n->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphDestroyNode");
}

// Every node copied with a fresh id (cloned_from naming the original, for cuGraphExecUpdate) and
// its dependencies renamed; child graph copies are shared (they are immutable).
CUresult CUDAAPI cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) try {
  FAKECUDA_ENTER(cuGraphClone)
  if (phGraphClone == nullptr) return CUDA_ERROR_INVALID_VALUE;
  GraphModel& graphs = st->graphs();
  GraphState* original = graphs.FindGraph(originalGraph);
  // A graph still being captured clones as it is so far: measured (graph_probe modelling).
  if (original == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // A graph with conditional nodes cannot be cloned (cuda.h), nor a conditional node's body
  // (measured 2026-12-06, H100 driver 580.159.04, graphnode_probe "cond:graph_ops").
  if (original->owner_node != 0 || fakecuda::GraphHasConditional(st, *original)) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  graphs.SyncEmbedded(original->id);  // child nodes carry their embedded graphs as they are
  const std::vector<std::uint64_t> ids = original->nodes;
  std::map<std::uint64_t, std::uint64_t> fresh;
  for (std::uint64_t id : ids) fresh[id] = st->NewId();
  const std::uint64_t clone_id = st->NewId();
  GraphState* clone = graphs.AddGraph(clone_id);
  for (std::uint64_t id : ids) {
    GraphNode copy = graphs.node(id);
    copy.cloned_from = id;
    copy.id = fresh.at(id);
    copy.embedded_graph = 0;  // the clone's node makes its own when asked
    for (std::uint64_t& d : copy.deps) d = fresh.at(d);
    graphs.AddNode(*clone, std::move(copy));
  }
  // The clone owns references of its own to the original's user objects (measured 2026-12-06,
  // H100 driver 580.159.04, graphx_probe "userobj:clone": they outlive the original).
  clone->user_refs = fakecuda::UserObjectRefs(original->user_refs);
  *phGraphClone = fakecuda::EncodeHandle<CUgraph>(HandleKind::kGraph, clone_id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGraphClone");
}

}  // extern "C"
