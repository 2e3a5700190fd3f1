// Copyright 2026 The cuhal Authors.
// The fake driver's graphs: graphs and their nodes (cuGraphCreate, cuGraphAdd*Node, stream
// capture), executable graphs (cuGraphInstantiateWithFlags) and graph memory (memory alloc/free
// nodes, cuDeviceGetGraphMemAttribute). Internal to fakecuda; the entry points are
// fakecuda/entry/graph_entry.cc (which also turns an executable graph's nodes into stream work),
// graph_query_entry.cc, graph_mem_entry.cc, graph_node_entry.cc and capture_entry.cc; the capture
// sequences live in CaptureModel (fakecuda/internal/capture_model.h) and the conditional handles
// in ConditionalModel (fakecuda/internal/graph_conditional.h), both owned by this model.
//
// Invariants:
//  1. Handles (CUgraph, CUgraphNode, CUgraphExec) encode never-reused ids with a kind tag, as
//     every fake handle does: stale handles are always detected.
//  2. A node belongs to exactly one graph (node_graph_), is listed in its graph's `nodes` in
//     creation order, and names as dependencies only nodes of the same graph. A graph may have
//     cycles (cuGraphAddDependencies accepts an edge that closes one, as the H200 does): every
//     walk over dependencies tolerates them, and cuGraphInstantiateWithFlags refuses such a
//     graph; an executable graph is always acyclic.
//  3. An executable graph holds copies of its graph's nodes in a topological order: destroying
//     the graph leaves it valid, and a queued launch owns what it needs (module_model.h
//     invariant 4), so destroying an executable graph with launches queued is safe. Child graph
//     nodes hold a copy of their graph, made when the node was added, and are expanded in place
//     when the graph is instantiated.
//  4. Graph memory: a memory alloc node reserves its device addresses when it is added (never
//     reused; GraphAlloc records them by address). A launch of an executable graph makes each
//     allocation live (an ordinary kDevice entry of DriverState::memory(), made when the launch
//     is enqueued) unless it is live already, and bumps its `launch` number; a free node releases
//     it when it runs, but only if no later launch has made it its own since (same number), so
//     back-to-back launches of one graph never free each other's memory. The device's
//     reserved/used graph memory (GraphMemStats) is bookkeeping only: an executable graph's
//     allocations rounded up to 32 MiB, from its first upload or launch until a trim finds none
//     of them live.
#ifndef CUHAL_FAKECUDA_INTERNAL_GRAPH_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_GRAPH_MODEL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/internal/capture_model.h"
#include "fakecuda/internal/graph_conditional.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/user_object_model.h"

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
  // Child graph nodes: the child graph's nodes as they were when the node was added (creation
  // order; their ids are the child graph's node ids, their deps refer to each other).
  std::shared_ptr<const std::vector<GraphNode>> child;
  // Memory alloc nodes: the addresses reserved when the node was added, the size, the device.
  // Memory free nodes: alloc_dptr is the address freed.
  CUdeviceptr alloc_dptr = 0;
  std::size_t alloc_bytes = 0;
  int alloc_device = 0;
  // The node this one was copied from by cuGraphClone (0: none), for cuGraphExecUpdate.
  std::uint64_t cloned_from = 0;
  // In an executable graph: the top-level child graph node this node was expanded from at
  // instantiation (0: none), for cuGraphExecNodeSetParams of that child graph node.
  std::uint64_t from_child = 0;
  // Conditional nodes (fakecuda/internal/graph_conditional.h).
  ConditionalNode cond;
  // Graph-extras state (fakecuda/entry/graphx_entry.cc):
  // In an executable graph: disabled by cuGraphNodeSetEnabled (runs as an empty node).
  bool disabled = false;
  // Child graph nodes: the graph cuGraphChildGraphNodeGetGraph made of `child` (0: none yet);
  // while it exists it is the child's truth, and `child` is refreshed from it
  // (GraphModel::SyncEmbedded) before anything reads `child`.
  std::uint64_t embedded_graph = 0;
  // Child graph nodes: the user object references of the child graph, copied when the node was
  // made (measured, graphx_probe "userobj:clone": they outlive the child graph, until the parent
  // goes).
  std::shared_ptr<const UserObjectRefs> child_refs;
  // Kernel nodes: the launch attributes set on the node (cuGraphKernelNodeSetAttribute).
  std::map<int, CUlaunchAttributeValue> attrs;
  // Kernel nodes: pointers into `params`, one per parameter, or the `extra` array, that
  // cuGraphKernelNodeGetParams returns (valid until the node changes); whether the parameters
  // came as `extra` (then handed back so, measured), its size word, and the library kernel the
  // node was given as `kern` (0: none; handed back, measured).
  std::vector<void*> param_view;
  bool params_by_extra = false;
  std::size_t extra_size = 0;
  std::uint64_t by_kernel = 0;
  // Memory alloc nodes: the access descriptors given when it was added.
  std::vector<CUmemAccessDesc> alloc_access;
  // External semaphore signal / wait nodes: the semaphores and their parameters (one of the two
  // vectors used, by type).
  std::vector<CUexternalSemaphore> ext_sems;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS> ext_signal;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS> ext_wait;
  // Batch memory operation nodes.
  std::vector<CUstreamBatchMemOpParams> batch_ops;
  unsigned batch_flags = 0;
  CUcontext batch_ctx = nullptr;
};

struct GraphState {
  std::uint64_t id = 0;
  std::vector<std::uint64_t> nodes;  // in creation order
  // The live executable graph instantiated from it while it has memory alloc nodes (only one may
  // exist at a time, measured); 0: none.
  std::uint64_t alloc_exec = 0;
  // The capture sequence building it (0: none); it becomes the user's at cuStreamEndCapture.
  std::uint64_t capture_id = 0;
  // A conditional node's body graph: that node's id (0: a user's graph; graph_conditional.h
  // invariant 2).
  std::uint64_t owner_node = 0;
  // A child graph node's embedded graph (cuGraphChildGraphNodeGetGraph): that node's id.
  std::uint64_t embedding_node = 0;
  // The user object references the graph owns (cuGraphRetainUserObject).
  UserObjectRefs user_refs;
};

// One graph allocation's addresses (invariant 4), by its base address.
struct GraphAlloc {
  std::size_t bytes = 0;
  int device = 0;
  std::uint64_t allocation_id = 0;  // the memory-map entry of its current life (0: never live)
  std::uint64_t launch = 0;         // bumped by each launch that makes it live or takes it over
};

// Graph memory of one device (cuDeviceGetGraphMemAttribute). The fake reports USED = RESERVED,
// as the H200 did in every measured state.
struct GraphMemStats {
  std::uint64_t reserved = 0;
  std::uint64_t reserved_high = 0;
  std::uint64_t used_high = 0;
};

struct GraphExecState {
  std::uint64_t id = 0;
  // The graph's nodes at instantiation, in a topological order (ties: creation order).
  std::shared_ptr<const std::vector<GraphNode>> order;
  // Launches of one executable graph are serialized: each waits for the previous one's end.
  std::uint64_t last_stream = 0;
  std::uint64_t last_seq = 0;
  // The graph it was instantiated from (for its alloc_exec), and its graph memory: the bytes
  // reserved for it on `mem_device` (0: none now, invariant 4).
  std::uint64_t graph_id = 0;
  int mem_device = 0;
  std::uint64_t mem_reserved = 0;
  // The values of the conditional handles its nodes use, kept from launch to launch (handle id
  // -> value; graph_conditional.h invariant 3).
  std::map<std::uint64_t, unsigned> cond_values;
  // The instantiation flags (cuGraphExecGetFlags; UPLOAD is not kept).
  std::uint64_t flags = 0;
  // The user object references it holds (its graph's at instantiation): each launch's last op
  // shares them, so they outlive the executable graph until its queued launches are done.
  std::shared_ptr<const UserObjectRefs> user_refs;
};

// Graph memory reserved for executable graphs destroyed before a trim released it.
struct OrphanGraphMem {
  int device = 0;
  std::uint64_t bytes = 0;
  std::vector<CUdeviceptr> allocs;
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
  // Destroys a graph and its nodes (executable graphs made from it stay: invariant 3), with the
  // body graphs of its conditional nodes and its conditional handles.
  void DestroyGraph(std::uint64_t id);
  // Whether node `node_id` belongs to graph `graph_id`.
  bool NodeIn(std::uint64_t node_id, std::uint64_t graph_id) const;
  // Adds `node` (its id and deps set, invariant 2) to graph `graph` (which must exist).
  void AddNode(GraphState& graph, GraphNode node);
  // A node of a live graph (the id must be one).
  const GraphNode& node(std::uint64_t id) const { return nodes_.at(id); }
  GraphNode& mutable_node(std::uint64_t id) { return nodes_.at(id); }
  // The node behind a handle, or null; *graph_id (when given) is its graph.
  GraphNode* FindNode(CUgraphNode handle, std::uint64_t* graph_id = nullptr);
  // Removes a node and every edge to or from it (and a conditional node's body graphs).
  void DestroyNode(std::uint64_t id);

  // --- graph memory (invariant 4) ---
  // Records the addresses of a new alloc node.
  void AddGraphAlloc(CUdeviceptr dptr, GraphAlloc alloc) { allocs_[dptr] = alloc; }
  // The graph allocation with base `dptr`, or null.
  GraphAlloc* FindGraphAlloc(CUdeviceptr dptr);
  // The graph allocation containing [ptr, ptr + size), or null.
  const GraphAlloc* GraphAllocContaining(std::uintptr_t ptr, std::size_t size) const;
  GraphMemStats& mem_stats(int device) { return mem_stats_[device]; }
  std::vector<OrphanGraphMem>& orphans() { return orphans_; }

  // --- stream capture (fakecuda/internal/capture_model.h) ---
  CaptureModel& captures() { return captures_; }
  // Ends a capture sequence and destroys the graph it was building.
  void DiscardCapture(std::uint64_t capture_id);
  // Discards every capture of a context being torn down.
  void DiscardCapturesOfContext(std::uint64_t ctx_id);

  // --- conditional handles (fakecuda/internal/graph_conditional.h) ---
  ConditionalModel& conditionals() { return conditionals_; }
  // The graph of node `node_id` (0: none).
  std::uint64_t GraphOfNode(std::uint64_t node_id) const;

  // --- user objects (fakecuda/internal/user_object_model.h) ---
  UserObjectTable& user_objects() { return user_objects_; }
  // Refreshes the `child` of every child graph node of graph `graph_id` (recursively) whose
  // embedded graph exists (GraphNode::embedded_graph).
  void SyncEmbedded(std::uint64_t graph_id);

  // --- executable graphs ---
  GraphExecState* FindExec(CUgraphExec handle);
  void AddExec(GraphExecState exec);
  void DestroyExec(std::uint64_t id) { execs_.erase(id); }

  // Every executable graph (graph memory trim).
  std::unordered_map<std::uint64_t, GraphExecState>& execs() { return execs_; }

  // Adds graphs and executable graphs to the inventory.
  void CountLive(Inventory* inventory) const;
  // Leak report lines (graphs, then executable graphs, each by id).
  std::string Describe() const;

 private:
  std::unordered_map<std::uint64_t, GraphState> graphs_;
  std::unordered_map<std::uint64_t, GraphNode> nodes_;
  std::unordered_map<std::uint64_t, std::uint64_t> node_graph_;  // node id -> graph id
  std::unordered_map<std::uint64_t, GraphExecState> execs_;
  std::map<CUdeviceptr, GraphAlloc> allocs_;
  std::map<int, GraphMemStats> mem_stats_;
  std::vector<OrphanGraphMem> orphans_;
  CaptureModel captures_;
  ConditionalModel conditionals_;
  UserObjectTable user_objects_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_GRAPH_MODEL_H_
