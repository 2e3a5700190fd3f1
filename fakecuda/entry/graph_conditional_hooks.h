// Copyright 2026 The cuhal Authors.
// Where conditional nodes (fakecuda/internal/graph_conditional.h) meet the rest of the graph
// entry points: defined in graph_node_entry.cc, called by graph_entry.cc (adding a node,
// instantiating, launching), graph_query_entry.cc (cloning) and graph_mem_entry.cc (child graph
// nodes). Internal to fakecuda/entry.
#ifndef CUHAL_FAKECUDA_ENTRY_GRAPH_CONDITIONAL_HOOKS_H_
#define CUHAL_FAKECUDA_ENTRY_GRAPH_CONDITIONAL_HOOKS_H_

#include <cuda.h>

#include <memory>
#include <vector>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/graph_model.h"

namespace fakecuda {

// Whether `node` may be added to graph `g`: a conditional node's body takes only kernel, empty,
// child graph, memset, memcpy and conditional nodes.
CUresult CheckBodyNode(DriverState* st, const GraphState& g, const GraphNode& node)
    CUHAL_REQUIRES(st->mu);
// Whether graph `g` holds a conditional node (directly or in a child graph's copy): such a graph
// cannot be cloned or used as a child graph, and has one executable graph at a time (cuda.h).
bool GraphHasConditional(DriverState* st, const GraphState& g) CUHAL_REQUIRES(st->mu);
// cuGraphInstantiateWithFlags: CUDA_ERROR_INVALID_VALUE when graph `g` or one of its bodies
// (recursively) has a conditional handle that no conditional node among them uses (cuda.h: such
// handles "may cause graph instantiation to fail"; the H100 refused a graph whose only conditional
// node had been destroyed, measured 2026-12-06, graphnode_probe "cond:graph_ops").
CUresult CheckHandlesUsed(DriverState* st, const GraphState& g) CUHAL_REQUIRES(st->mu);
// cuGraphInstantiateWithFlags: copies the body graphs of the conditional nodes among `nodes` (an
// executable graph's copies) into their snapshots, recursively. CUDA_ERROR_INVALID_VALUE when a
// body has a cycle or the nesting is deeper than 64.
CUresult SnapshotConditionals(DriverState* st, std::vector<GraphNode>* nodes, int depth = 0)
    CUHAL_REQUIRES(st->mu);
// cuGraphLaunch: assigns the launch's default values and replaces *order by the nodes this launch
// runs: each conditional node preceded by the body its value selects (recursively), the node
// then depending on the body's sinks (graph_conditional.h invariant 3). Leaves *order alone when
// it has no conditional node. CUDA_ERROR_NOT_SUPPORTED for a WHILE node whose value is nonzero.
CUresult ExpandConditionals(DriverState* st, GraphExecState* exec,
                            std::shared_ptr<const std::vector<GraphNode>>* order)
    CUHAL_REQUIRES(st->mu);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_ENTRY_GRAPH_CONDITIONAL_HOOKS_H_
