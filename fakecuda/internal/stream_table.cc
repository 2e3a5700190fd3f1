// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/stream_table.h"

#include <iterator>

namespace fakecuda {

Stream* StreamTable::FindStream(std::uint64_t id) {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

const Stream* StreamTable::FindStream(std::uint64_t id) const {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

Stream* StreamTable::AddStream(std::uint64_t id, std::uint64_t ctx_id, unsigned flags,
                               int priority) {
  auto s = std::make_unique<Stream>();
  s->id = id;
  s->ctx_id = ctx_id;
  s->flags = flags;
  s->priority = priority;
  Stream* raw = s.get();
  streams_.emplace(id, std::move(s));
  return raw;
}

StreamTable::StreamMap::const_iterator StreamTable::EraseStream(StreamMap::const_iterator it) {
  return streams_.erase(it);
}

Event* StreamTable::FindEvent(std::uint64_t id) {
  auto it = events_.find(id);
  return it == events_.end() ? nullptr : it->second.get();
}

Event* StreamTable::AddEvent(std::uint64_t id, std::uint64_t ctx_id, unsigned flags) {
  auto e = std::make_unique<Event>();
  e->id = id;
  e->ctx_id = ctx_id;
  e->flags = flags;
  Event* raw = e.get();
  events_.emplace(id, std::move(e));
  return raw;
}

void StreamTable::EraseContext(std::uint64_t ctx_id) {
  for (auto it = streams_.begin(); it != streams_.end();) {
    it = it->second->ctx_id == ctx_id ? streams_.erase(it) : std::next(it);
  }
  for (auto it = events_.begin(); it != events_.end();) {
    it = it->second->ctx_id == ctx_id ? events_.erase(it) : std::next(it);
  }
}

}  // namespace fakecuda
