// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/graph_conditional.h"

#include <iterator>

namespace fakecuda {

CUgraphConditionalHandle ConditionalModel::Add(ConditionalHandle handle) {
  const std::uint64_t id = handle.id;
  handles_[id] = handle;
  return Value(id);
}

const ConditionalHandle* ConditionalModel::Find(CUgraphConditionalHandle value) const {
  if ((value & 0xF) != kConditionalTag) return nullptr;
  return FindId(value >> 4);
}

const ConditionalHandle* ConditionalModel::FindId(std::uint64_t id) const {
  auto it = handles_.find(id);
  return it == handles_.end() ? nullptr : &it->second;
}

void ConditionalModel::DropGraph(std::uint64_t graph_id) {
  for (auto it = handles_.begin(); it != handles_.end();) {
    it = it->second.graph_id == graph_id ? handles_.erase(it) : std::next(it);
  }
}

}  // namespace fakecuda
