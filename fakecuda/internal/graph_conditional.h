// Copyright 2026 The cuhal Authors.
// The fake driver's conditional graph nodes (CU_GRAPH_NODE_TYPE_CONDITIONAL: IF, IF/ELSE, WHILE,
// SWITCH) and their handles (cuGraphConditionalHandleCreate). Internal to fakecuda; the entry
// points are fakecuda/entry/graph_node_entry.cc (which also expands conditional nodes at each
// launch); the graphs themselves live in GraphModel (fakecuda/internal/graph_model.h), which owns
// this model. What the real driver answers is in docs/driver_facts.md ("Generic graph nodes and
// conditional nodes").
//
// Invariants:
//  1. A handle belongs to the graph it was created in and dies with it. Its value counts the
//     handles of that graph (1, 2, ...; 0 is never a handle), as on the real driver (measured
//     2026-12-06, H100 driver 580.159.04, graphnode_probe "handle": the first handles of two
//     graphs are equal). A value is resolved in the graph a conditional node is added to, then in
//     the graphs it is a body of (ConditionalModel::Find), so another graph's handle names this
//     graph's handle of the same number, and a value no graph on that path has is refused.
//     Internally (GraphNode::cond, executable graphs' values) a handle is its never-reused id.
//  2. A conditional node owns its body graphs (GraphState::owner_node names it): they are created
//     with the node, live in GraphModel like user graphs, and are destroyed with the node (or with
//     the graph holding it). A body graph is never counted as a user's leaked graph.
//  3. The value a conditional node reads at a launch is known when the launch is enqueued: the
//     fake's PTX interpreter cannot run cudaGraphSetConditional (a kernel calling it cannot be
//     launched), so only the host sets values: the handle's default at each launch when it has
//     CU_GRAPH_COND_ASSIGN_DEFAULT, else the value kept by the executable graph (initially 0).
//     A launch therefore expands each conditional node into the body it selects, like a child
//     graph, and a WHILE node whose value is nonzero (a loop nothing could end) is refused.
#ifndef CUHAL_FAKECUDA_INTERNAL_GRAPH_CONDITIONAL_H_
#define CUHAL_FAKECUDA_INTERNAL_GRAPH_CONDITIONAL_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace fakecuda {

struct GraphNode;  // fakecuda/internal/graph_model.h

// One conditional handle.
struct ConditionalHandle {
  std::uint64_t id = 0;
  std::uint64_t graph_id = 0;  // the graph it was created in
  CUgraphConditionalHandle value = 0;  // what the caller holds (invariant 1)
  std::uint64_t ctx_id = 0;    // its context
  unsigned default_value = 0;
  bool assign_default = false;  // CU_GRAPH_COND_ASSIGN_DEFAULT
};

// A conditional node's part of a GraphNode.
struct ConditionalNode {
  std::uint64_t handle = 0;  // ConditionalHandle::id
  CUgraphConditionalNodeType type = CU_GRAPH_COND_TYPE_IF;
  unsigned size = 0;
  std::uint64_t ctx_id = 0;
  // In a graph: the body graphs' ids (invariant 2), body i first.
  std::vector<std::uint64_t> bodies;
  // The same as handles: the driver-owned array cuGraphAddNode points phGraph_out at (the node's
  // storage in GraphModel never moves, so the array lives exactly as long as the node).
  std::vector<CUgraph> body_handles;
  // In an executable graph: each body's nodes at instantiation, child graphs expanded, in the
  // order cuGraphInstantiateWithFlags puts a graph's nodes (nested conditional nodes carry their
  // own snapshots).
  std::shared_ptr<const std::vector<std::vector<GraphNode>>> snapshot;
};

// The conditional handles of one fake driver.
//
// Ownership: one per GraphModel, held by it (GraphModel::conditionals()). Thread-safety: none of
// its own; every use is under DriverState::mu, which GraphModel's accessor requires. Stream
// ordering: none here (a launch reads the values when it is enqueued, invariant 3).
class ConditionalModel {
 public:
  ConditionalModel() = default;
  ConditionalModel(const ConditionalModel&) = delete;             // owns the handles
  ConditionalModel& operator=(const ConditionalModel&) = delete;  // ditto

  // Records a new handle (its id and graph set) and returns its value (invariant 1).
  CUgraphConditionalHandle Add(ConditionalHandle handle);
  // The handle of `value` among graph `graph_id`'s, or null.
  const ConditionalHandle* Find(std::uint64_t graph_id, CUgraphConditionalHandle value) const;
  const ConditionalHandle* FindId(std::uint64_t id) const;
  // The ids of graph `graph_id`'s handles.
  std::vector<std::uint64_t> HandlesOf(std::uint64_t graph_id) const;
  // Drops the handles of a graph being destroyed.
  void DropGraph(std::uint64_t graph_id);

 private:
  std::map<std::uint64_t, ConditionalHandle> handles_;
  std::map<std::uint64_t, CUgraphConditionalHandle> made_;  // per graph: handles made so far
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_GRAPH_CONDITIONAL_H_
