// Copyright 2026 The cuhal Authors.
// The fake driver's graphs: graphs and their nodes (cuGraphCreate, cuGraphAdd*Node) and
// executable graphs (cuGraphInstantiateWithFlags). Internal to fakecuda; the entry points are
// fakecuda/entry/graph_entry.cc, which also turns an executable graph's nodes into stream work.
//
// Invariants:
//  1. Handles (CUgraph, CUgraphNode, CUgraphExec) encode never-reused ids with a kind tag, as
//     every fake handle does: stale handles are always detected.
//  2. A node belongs to exactly one graph (node_graph_), is listed in its graph's `nodes` in
//     creation order, and names as dependencies only nodes of the same graph created before it
//     (so a graph is always acyclic).
//  3. An executable graph holds copies of its graph's nodes in a topological order: destroying
//     the graph leaves it valid, and a queued launch owns what it needs (module_model.h
//     invariant 4), so destroying an executable graph with launches queued is safe.
#ifndef CUHAL_FAKECUDA_INTERNAL_GRAPH_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_GRAPH_MODEL_H_

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/internal/module_model.h"

namespace fakecuda {

// One node of a graph (or of an instantiated graph, which holds copies).
struct GraphNode {
  std::uint64_t id = 0;
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  std::vector<std::uint64_t> deps;  // node ids
  // Kernel nodes.
  std::uint64_t function_id = 0;
  LaunchConfig config;
  std::vector<std::byte> params;
  // Memcpy nodes.
  CUDA_MEMCPY3D copy{};
  // Memset nodes.
  CUDA_MEMSET_NODE_PARAMS memset{};
  // Host nodes.
  CUhostFn host_fn = nullptr;
  void* host_data = nullptr;
  // Event record / wait nodes.
  CUevent event = nullptr;
};

struct GraphState {
  std::uint64_t id = 0;
  std::vector<std::uint64_t> nodes;  // in creation order
};

struct GraphExecState {
  std::uint64_t id = 0;
  // The graph's nodes at instantiation, in a topological order (ties: creation order).
  std::shared_ptr<const std::vector<GraphNode>> order;
  // Launches of one executable graph are serialized: each waits for the previous one's end.
  std::uint64_t last_stream = 0;
  std::uint64_t last_seq = 0;
};

// The graphs and executable graphs of one fake driver.
//
// Ownership: one per DriverState, held privately by it (DriverState::graphs(), created on first
// use); owns every graph, node and executable graph. Thread-safety: none of its own; every use is
// under DriverState::mu, which the accessor requires (checked by the thread-safety preset).
// Stream ordering: none here (launches are ordered by graph_entry.cc, invariant 3).
class GraphModel {
 public:
  GraphModel() = default;
  GraphModel(const GraphModel&) = delete;             // owns the graphs
  GraphModel& operator=(const GraphModel&) = delete;  // ditto

  // --- graphs ---
  GraphState* FindGraph(CUgraph handle);
  // Makes an empty graph with id `id`.
  GraphState* AddGraph(std::uint64_t id);
  // Destroys a graph and its nodes (executable graphs made from it stay: invariant 3).
  void DestroyGraph(std::uint64_t id);
  // Whether node `node_id` belongs to graph `graph_id`.
  bool NodeIn(std::uint64_t node_id, std::uint64_t graph_id) const;
  // Adds `node` (its id and deps set, invariant 2) to graph `graph` (which must exist).
  void AddNode(GraphState& graph, GraphNode node);
  // A node of a live graph (the id must be one).
  const GraphNode& node(std::uint64_t id) const { return nodes_.at(id); }

  // --- executable graphs ---
  GraphExecState* FindExec(CUgraphExec handle);
  void AddExec(GraphExecState exec);
  void DestroyExec(std::uint64_t id) { execs_.erase(id); }

  // Adds graphs and executable graphs to the inventory.
  void CountLive(Inventory* inventory) const;
  // Leak report lines (graphs, then executable graphs, each by id).
  std::string Describe() const;

 private:
  std::unordered_map<std::uint64_t, GraphState> graphs_;
  std::unordered_map<std::uint64_t, GraphNode> nodes_;
  std::unordered_map<std::uint64_t, std::uint64_t> node_graph_;  // node id -> graph id
  std::unordered_map<std::uint64_t, GraphExecState> execs_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_GRAPH_MODEL_H_
