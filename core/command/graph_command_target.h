// Copyright 2026 The cuhal Authors.
// GraphCommandTarget: the CUDA graph target of a command buffer (IREE's graph_command_buffer):
// the recorded list becomes an explicit CUgraph, instantiated once and re-launched.
#ifndef CUHAL_CORE_COMMAND_GRAPH_COMMAND_TARGET_H_
#define CUHAL_CORE_COMMAND_GRAPH_COMMAND_TARGET_H_

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <vector>

#include "core/base/mutex.h"
#include "core/command/command_buffer.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"

namespace cuhal {

// Builds the recorded commands into CUDA graphs from explicit nodes, at the first submission
// (the addresses of indirect refs are known only then): fill -> a memset node, update -> a
// host-to-device memcpy node from the command's own copy of the bytes, copy -> a memcpy node,
// dispatch -> a kernel node, barrier -> an empty node, signal event -> an event record node,
// wait events -> one event wait node per event, reset event -> nothing (as on a stream). Every
// node depends on the node before it, so the commands run in recording order, as the command
// buffer's contract says (the barrier's empty node is the explicit join point; a target that
// runs commands between barriers concurrently would need that contract changed). No host nodes.
//
// Collectives: NCCL calls cannot be graph nodes (NCCL supports them in graphs only through
// stream capture), so the list is split at each collective: the runs of commands between
// collectives are graphs of their own, and each submission launches them in order on the stream
// with the collectives issued directly between them (same stream, so still recording order).
//
// Each graph is instantiated once (cuGraphInstantiateWithFlags) and launched with cuGraphLaunch
// on the submission's stream. A later submission whose bindings resolve to the same addresses
// launches it as it is; one whose bindings differ updates the executable graph before launching:
// first in place, node by node (cuGraphExec{Kernel,Memset,Memcpy}NodeSetParams, only the nodes
// whose addresses changed); if the driver refuses one of those (INVALID_VALUE or NOT_SUPPORTED:
// the change is not one it can make in place), from a freshly built graph of the whole list
// (cuGraphExecUpdate; the fresh graph is destroyed right after); if that is refused too
// (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE), by rebuilding (destroy, build, instantiate).
// statistics() counts which happened. Any other failure is returned, naming the call; a failed
// submission leaves nothing half-updated: the graph it was updating is dropped and rebuilt by the
// next submission.
//
// Ownership: owned by its CommandBuffer; borrows the table and the list; owns its CUgraphs and
// CUgraphExecs (destroyed with it; launches already enqueued still complete, as the driver
// guarantees). Thread-safety: Issue serializes on an internal mutex (an executable graph has one
// set of parameters, so updating it and launching it is one step); statistics() is lock-free.
// Stream ordering: Issue enqueues the graphs (and collectives) on `stream` in recording order and
// returns once enqueued. Updating an executable graph does not change launches already enqueued
// (CUDA: changes take effect at the next launch), so no synchronization is needed between
// submissions with different bindings. The context current at the first Issue runs the memset and
// memcpy nodes; later submissions must be on a stream of that context.
class GraphCommandTarget final : public CommandTarget {
 public:
  explicit GraphCommandTarget(const CudaApi* api) : api_(api) {}
  GraphCommandTarget(const GraphCommandTarget&) = delete;             // owns graphs
  GraphCommandTarget& operator=(const GraphCommandTarget&) = delete;  // ditto
  ~GraphCommandTarget() override;

  [[nodiscard]] const char* name() const noexcept override { return "graph"; }
  [[nodiscard]] Status Prepare(const std::vector<Command>& commands) override;
  [[nodiscard]] Status Issue(CUstream stream, ResolvedBindings bindings) override;
  [[nodiscard]] CommandTargetStatistics statistics() const noexcept override;

 private:
  // One graph node made from a command (a wait on n events makes n nodes).
  struct Node {
    std::size_t command = 0;  // index in the list
    CUgraphNode node = nullptr;
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    std::size_t event = 0;  // wait nodes: which of the command's events
    bool indirect = false;  // names a binding slot: its parameters change with the bindings
    std::vector<ResolvedBinding> ranges;  // the ranges it was last given
  };
  // A run of commands between collectives, and its graph.
  struct Segment {
    std::size_t begin = 0;  // [begin, end): command indices
    std::size_t end = 0;
    GraphHandle graph;
    GraphExecHandle exec;
    std::vector<Node> nodes;
  };
  // What a submission does, in order: launch segments_[index] or issue collective `index`.
  struct Step {
    bool collective = false;
    std::size_t index = 0;
  };

  // Builds a graph of segment `segment`'s commands with `bindings` into *graph / *nodes.
  [[nodiscard]] Status Build(const Segment& segment, ResolvedBindings bindings, GraphHandle* graph,
                             std::vector<Node>* nodes) const CUHAL_REQUIRES(mu_);
  // Builds and instantiates segment `segment` (dropping what it held).
  [[nodiscard]] Status Instantiate(Segment& segment, ResolvedBindings bindings)
      CUHAL_REQUIRES(mu_);
  // Brings an instantiated segment's executable graph to `bindings` (see the class comment).
  [[nodiscard]] Status Update(Segment& segment, ResolvedBindings bindings) CUHAL_REQUIRES(mu_);
  [[nodiscard]] Status Launch(Segment& segment, CUstream stream, ResolvedBindings bindings)
      CUHAL_REQUIRES(mu_);
  [[nodiscard]] Status IssueCollective(std::size_t index, CUstream stream,
                                       ResolvedBindings bindings) const;
  // Sets node `node`'s parameters in `exec` to `ranges` (the node setters); *result is the
  // setter's CUresult.
  [[nodiscard]] Status SetNode(CUgraphExec exec, const Node& node,
                               const std::vector<ResolvedBinding>& ranges, CUresult* result) const
      CUHAL_REQUIRES(mu_);

  const CudaApi* const api_;
  const std::vector<Command>* commands_ = nullptr;
  std::vector<Step> steps_;
  mutable Mutex mu_;
  std::vector<Segment> segments_ CUHAL_GUARDED_BY(mu_);
  CUcontext context_ CUHAL_GUARDED_BY(mu_) = nullptr;  // of the memset/memcpy nodes
  std::atomic<std::uint64_t> instantiations_{0};
  std::atomic<std::uint64_t> launches_{0};
  std::atomic<std::uint64_t> reuses_{0};
  std::atomic<std::uint64_t> in_place_updates_{0};
  std::atomic<std::uint64_t> nodes_updated_{0};
  std::atomic<std::uint64_t> whole_graph_updates_{0};
  std::atomic<std::uint64_t> rebuilds_{0};
};

}  // namespace cuhal

#endif  // CUHAL_CORE_COMMAND_GRAPH_COMMAND_TARGET_H_
