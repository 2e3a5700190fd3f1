// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/graph_model.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

GraphState* GraphModel::FindGraph(CUgraph handle) {
  auto it = graphs_.find(DecodeHandle(HandleKind::kGraph, handle));
  return it == graphs_.end() ? nullptr : &it->second;
}

GraphState* GraphModel::AddGraph(std::uint64_t id) {
  GraphState& g = graphs_[id];
  g.id = id;
  return &g;
}

void GraphModel::DestroyGraph(std::uint64_t id) {
  auto it = graphs_.find(id);
  if (it == graphs_.end()) return;
  for (std::uint64_t node_id : it->second.nodes) {
    auto n = nodes_.find(node_id);
    if (n != nodes_.end()) {
      for (std::uint64_t body : n->second.cond.bodies) DestroyGraph(body);
      if (n->second.embedded_graph != 0) DestroyGraph(n->second.embedded_graph);
    }
    nodes_.erase(node_id);
    node_graph_.erase(node_id);
  }
  conditionals_.DropGraph(id);
  graphs_.erase(id);
}

std::uint64_t GraphModel::GraphOfNode(std::uint64_t node_id) const {
  auto it = node_graph_.find(node_id);
  return it == node_graph_.end() ? 0 : it->second;
}

bool GraphModel::NodeIn(std::uint64_t node_id, std::uint64_t graph_id) const {
  auto it = node_graph_.find(node_id);
  return it != node_graph_.end() && it->second == graph_id;
}

void GraphModel::AddNode(GraphState& graph, GraphNode node) {
  const std::uint64_t id = node.id;
  graph.nodes.push_back(id);
  node_graph_.emplace(id, graph.id);
  nodes_.emplace(id, std::move(node));
}

GraphNode* GraphModel::FindNode(CUgraphNode handle, std::uint64_t* graph_id) {
  const std::uint64_t id = DecodeHandle(HandleKind::kGraphNode, handle);
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return nullptr;
  if (graph_id != nullptr) *graph_id = node_graph_.at(id);
  return &it->second;
}

void GraphModel::DestroyNode(std::uint64_t id) {
  auto owner = node_graph_.find(id);
  if (owner == node_graph_.end()) return;
  auto g = graphs_.find(owner->second);
  if (g != graphs_.end()) {
    std::vector<std::uint64_t>& ids = g->second.nodes;
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    for (std::uint64_t other : ids) {
      std::vector<std::uint64_t>& deps = nodes_.at(other).deps;
      deps.erase(std::remove(deps.begin(), deps.end(), id), deps.end());
    }
  }
  node_graph_.erase(owner);
  auto n = nodes_.find(id);
  if (n == nodes_.end()) return;
  const std::vector<std::uint64_t> bodies = n->second.cond.bodies;
  const std::uint64_t embedded = n->second.embedded_graph;
  nodes_.erase(n);
  for (std::uint64_t body : bodies) DestroyGraph(body);
  if (embedded != 0) DestroyGraph(embedded);
}

void GraphModel::SyncEmbedded(std::uint64_t graph_id) {
  auto g = graphs_.find(graph_id);
  if (g == graphs_.end()) return;
  for (std::uint64_t node_id : g->second.nodes) {
    const std::uint64_t embedded = nodes_.at(node_id).embedded_graph;
    auto e = graphs_.find(embedded);
    if (embedded == 0 || e == graphs_.end()) continue;
    SyncEmbedded(embedded);
    auto copy = std::make_shared<std::vector<GraphNode>>();
    for (std::uint64_t id : e->second.nodes) copy->push_back(nodes_.at(id));
    GraphNode& node = nodes_.at(node_id);
    node.child = std::move(copy);
    node.child_refs = e->second.user_refs.empty()
                          ? nullptr
                          : std::make_shared<const UserObjectRefs>(e->second.user_refs);
  }
}

GraphAlloc* GraphModel::FindGraphAlloc(CUdeviceptr dptr) {
  auto it = allocs_.find(dptr);
  return it == allocs_.end() ? nullptr : &it->second;
}

const GraphAlloc* GraphModel::GraphAllocContaining(std::uintptr_t ptr, std::size_t size) const {
  auto it = allocs_.upper_bound(ptr);
  if (it == allocs_.begin()) return nullptr;
  --it;
  const std::uintptr_t base = it->first;
  if (ptr < base || size > it->second.bytes || ptr - base > it->second.bytes - size) return nullptr;
  return &it->second;
}

void GraphModel::DiscardCapture(std::uint64_t capture_id) {
  const CaptureSequence* seq = captures_.Find(capture_id);
  if (seq == nullptr) return;
  const std::uint64_t graph_id = seq->graph_id;
  const bool user_graph = seq->user_graph;
  const std::size_t kept = seq->user_graph_nodes;
  captures_.End(capture_id);
  if (!user_graph) {
    DestroyGraph(graph_id);
  } else if (auto it = graphs_.find(graph_id); it != graphs_.end()) {
    // Measured (H100, streamctx_probe "capture:tograph"): an invalidated capture into the user's
    // graph leaves it as it was before the capture (the captured nodes are removed).
    it->second.capture_id = 0;
    std::vector<std::uint64_t>& nodes = it->second.nodes;
    while (nodes.size() > kept) {
      const std::size_t before = nodes.size();
      DestroyNode(nodes.back());
      if (nodes.size() == before) nodes.pop_back();  // cannot happen: every node has its graph
    }
  }
}

void GraphModel::DiscardCapturesOfContext(std::uint64_t ctx_id) {
  std::vector<std::uint64_t> doomed;
  for (const auto& [id, c] : captures_.all()) {
    if (c.ctx_id == ctx_id) doomed.push_back(id);
  }
  for (std::uint64_t id : doomed) DiscardCapture(id);
}

GraphExecState* GraphModel::FindExec(CUgraphExec handle) {
  auto it = execs_.find(DecodeHandle(HandleKind::kGraphExec, handle));
  return it == execs_.end() ? nullptr : &it->second;
}

void GraphModel::AddExec(GraphExecState exec) {
  const std::uint64_t id = exec.id;
  execs_.emplace(id, std::move(exec));
}

void GraphModel::CountLive(Inventory* inventory) const {
  for (const auto& [id, g] : graphs_) {
    // Body graphs and embedded child graphs belong to their node.
    if (g.owner_node == 0 && g.embedding_node == 0) ++inventory->graphs;
  }
  inventory->graph_execs += static_cast<int>(execs_.size());
}

std::string GraphModel::Describe() const {
  std::ostringstream os;
  std::vector<std::uint64_t> ids;
  for (const auto& [id, g] : graphs_) {
    if (g.owner_node == 0 && g.embedding_node == 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  for (std::uint64_t id : ids) {
    os << "graph " << id << " (" << graphs_.at(id).nodes.size() << " node(s); cuGraphCreate)\n";
  }
  ids.clear();
  for (const auto& [id, e] : execs_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (std::uint64_t id : ids) {
    os << "executable graph " << id << " (" << execs_.at(id).order->size()
       << " node(s); cuGraphInstantiateWithFlags)\n";
  }
  return os.str();
}

}  // namespace fakecuda
