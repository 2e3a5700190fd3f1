// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/graph_conditional.h"

#include <iterator>

namespace fakecuda {

CUgraphConditionalHandle ConditionalModel::Add(ConditionalHandle handle) {
  handle.value = ++made_[handle.graph_id];
  handles_[handle.id] = handle;
  return handle.value;
}

const ConditionalHandle* ConditionalModel::Find(std::uint64_t graph_id,
                                                CUgraphConditionalHandle value) const {
  if (value == 0) return nullptr;
  for (const auto& [id, h] : handles_) {
    if (h.graph_id == graph_id && h.value == value) return &h;
  }
  return nullptr;
}

const ConditionalHandle* ConditionalModel::FindId(std::uint64_t id) const {
  auto it = handles_.find(id);
  return it == handles_.end() ? nullptr : &it->second;
}

std::vector<std::uint64_t> ConditionalModel::HandlesOf(std::uint64_t graph_id) const {
  std::vector<std::uint64_t> out;
  for (const auto& [id, h] : handles_) {
    if (h.graph_id == graph_id) out.push_back(id);
  }
  return out;
}

void ConditionalModel::DropGraph(std::uint64_t graph_id) {
  for (auto it = handles_.begin(); it != handles_.end();) {
    it = it->second.graph_id == graph_id ? handles_.erase(it) : std::next(it);
  }
  made_.erase(graph_id);
}

}  // namespace fakecuda
