// Copyright 2026 The cuhal Authors.
// The fake driver's conditional graph nodes (CU_GRAPH_NODE_TYPE_CONDITIONAL: IF, IF/ELSE, WHILE,
// SWITCH) and their handles (cuGraphConditionalHandleCreate). Internal to fakecuda; the entry
// points are fakecuda/entry/graph_node_entry.cc (which also expands conditional nodes at each
// launch); the graphs themselves live in GraphModel (fakecuda/internal/graph_model.h), which owns
// this model. What the real driver answers is in docs/driver_facts.md ("Generic graph nodes and
// conditional nodes").
//
// Invariants:
//  1. A handle belongs to the graph it was created in and dies with it. Handle values are
//     never-reused driver ids with a tag in the low 4 bits (kConditionalTag), so a stale or
//     foreign value is always detected; 0 is never a handle.
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

// The low 4 bits of every conditional handle value (invariant 1).
inline constexpr std::uint64_t kConditionalTag = 0xC;

// One conditional handle.
struct ConditionalHandle {
  std::uint64_t id = 0;
  std::uint64_t graph_id = 0;  // the graph it was created in
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

  // Records a new handle (its id set) and returns its value.
  CUgraphConditionalHandle Add(ConditionalHandle handle);
  // The handle of a value, or null (0, stale, not a handle).
  const ConditionalHandle* Find(CUgraphConditionalHandle value) const;
  const ConditionalHandle* FindId(std::uint64_t id) const;
  // Drops the handles of a graph being destroyed.
  void DropGraph(std::uint64_t graph_id);
  // The value of handle `id`: what a conditional node selects its body by.
  static CUgraphConditionalHandle Value(std::uint64_t id) { return (id << 4) | kConditionalTag; }

 private:
  std::map<std::uint64_t, ConditionalHandle> handles_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_GRAPH_CONDITIONAL_H_
