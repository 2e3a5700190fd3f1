// Copyright 2026 The cuhal Authors.
// Helpers shared by the graph entry points (graph_entry.cc, graph_query_entry.cc,
// graph_mem_entry.cc, capture_entry.cc). Internal to fakecuda/entry.
#ifndef CUHAL_FAKECUDA_ENTRY_GRAPH_INTERNAL_H_
#define CUHAL_FAKECUDA_ENTRY_GRAPH_INTERNAL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/graph_model.h"

namespace fakecuda {

// Addresses at or above this are fake device addresses (see memory_entry.cc).
inline constexpr std::uintptr_t kGraphDeviceVaBase = std::uintptr_t{1} << 48;
// Graph memory is reserved in 32 MiB units (measured: a 3 MiB alloc node reserves 32 MiB).
inline constexpr std::uint64_t kGraphMemGranule = std::uint64_t{32} << 20;

// The op of a memcpy / memset node, with its memory resolved now (graph_entry.cc).
CUresult MemcpyOp(DriverState* st, const CUDA_MEMCPY3D& c, Op* op) CUHAL_REQUIRES(st->mu);
CUresult MemsetOp(DriverState* st, const CUDA_MEMSET_NODE_PARAMS& m, Op* op) CUHAL_REQUIRES(st->mu);
// Whether [ptr, ptr + size) is device-accessible memory now or the addresses of a graph
// allocation (which is live only while a graph launch holds it).
bool DeviceRangeKnown(DriverState* st, std::uintptr_t ptr, std::size_t size) CUHAL_REQUIRES(st->mu);
// Reserves the addresses of a new memory alloc node of `bytes` on `device` (graph_mem_entry.cc).
CUdeviceptr ReserveGraphAlloc(DriverState* st, int device, std::size_t bytes)
    CUHAL_REQUIRES(st->mu);
// The common part of every cuGraphAdd*Node (graph_entry.cc): checks the graph and the
// dependencies, then adds `node` (type-specific fields filled) and returns its handle in *out.
CUresult AddNode(DriverState* st, CUgraphNode* out, CUgraph hGraph, const CUgraphNode* deps,
                 size_t num_deps, GraphNode node) CUHAL_REQUIRES(st->mu);
// Expands child graph nodes in place (recursively; their nodes get fresh ids, their roots the
// child node's dependencies, and the child node's dependents its sinks) (graph_entry... mem).
std::vector<GraphNode> FlattenChildGraphs(DriverState* st, std::vector<GraphNode> nodes)
    CUHAL_REQUIRES(st->mu);
// A launch's graph memory (graph_mem_entry.cc): reserves the executable graph's graph memory
// (first launch or upload), refuses a launch whose allocation without a free node in the graph
// is still live (CUDA_ERROR_INVALID_VALUE, measured), makes its allocations live (those it made
// in *made, for the caller to release if the launch fails) and bumps their launch numbers.
CUresult TakeGraphMemory(DriverState* st, GraphExecState* exec, const Stream* s,
                         std::vector<CUdeviceptr>* made) CUHAL_REQUIRES(st->mu);
// Reserves an executable graph's graph memory if it has none (cuGraphUpload, launches).
void ReserveGraphMemory(DriverState* st, GraphExecState* exec) CUHAL_REQUIRES(st->mu);
// The op of a memory free node of `dptr` for the launch being enqueued.
void MemFreeOp(DriverState* st, CUdeviceptr dptr, Op* op) CUHAL_REQUIRES(st->mu);
// cuGraphExecNodeSetParams of the child graph node `child_node` (of the graph `exec` was made
// from) with the graph `child` (graph_update_entry.cc): CUDA_SUCCESS when `child` has the shape of
// the child expanded at instantiation (its nodes then carry the new parameters),
// CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE otherwise (nothing changed).
CUresult ExecSetChildGraph(DriverState* st, GraphExecState* exec, std::uint64_t child_node,
                           const GraphState& child) CUHAL_REQUIRES(st->mu);
// Instantiates `hGraph` with `flags` (checked by the caller) into *phGraphExec (graph_entry.cc):
// the work of cuGraphInstantiateWithFlags and cuGraphInstantiateWithParams, which reports
// *result and *err_node (cuda.h's CUDA_GRAPH_INSTANTIATE_PARAMS).
CUresult InstantiateGraph(DriverState* st, CUgraphExec* phGraphExec, CUgraph hGraph,
                          std::uint64_t flags, CUgraphInstantiateResult* result,
                          CUgraphNode* err_node) CUHAL_REQUIRES(st->mu);
// The op of a batch memory operation node for the launch being enqueued (graphx_entry.cc).
CUresult BatchMemOpOp(DriverState* st, const GraphNode& n, Op* op) CUHAL_REQUIRES(st->mu);
// The graph of `id`, or null.
GraphState* GraphById(DriverState* st, std::uint64_t id) CUHAL_REQUIRES(st->mu);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_ENTRY_GRAPH_INTERNAL_H_
