// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/pinned_chunks.h"

#include <algorithm>

namespace fakecuda {

namespace {
constexpr unsigned kPortable = 0x01;        // CU_MEMHOSTALLOC_PORTABLE
constexpr unsigned kWriteCombined = 0x04;   // CU_MEMHOSTALLOC_WRITECOMBINED
}  // namespace

PinnedChunks::Placement PinnedChunks::Place(std::size_t bytes, unsigned flags) {
  const bool write_combined = (flags & kWriteCombined) != 0;
  const std::size_t need =
      std::max<std::size_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (need <= kChunkBytes) {
    for (Chunk& c : chunks_) {
      if (c.write_combined != write_combined || c.capacity != kChunkBytes) continue;
      std::uint64_t pos = 0;
      for (const auto& [offset, size] : c.blocks) {
        if (offset - pos >= need) break;
        pos = offset + size;
      }
      if (pos + need <= c.capacity) {
        c.blocks.emplace(pos, need);
        return Placement{c.id, pos, c.portable};
      }
    }
  }
  Chunk c;
  c.id = next_id_++;
  c.write_combined = write_combined;
  c.portable = (flags & kPortable) != 0;
  c.capacity = std::max(need, kChunkBytes);
  c.blocks.emplace(0, need);
  chunks_.push_back(std::move(c));
  return Placement{chunks_.back().id, 0, chunks_.back().portable};
}

void PinnedChunks::Release(const Placement& placement) {
  auto it = std::find_if(chunks_.begin(), chunks_.end(),
                         [&](const Chunk& c) { return c.id == placement.chunk; });
  if (it == chunks_.end()) return;
  it->blocks.erase(placement.offset);
  if (it->blocks.empty()) chunks_.erase(it);
}

}  // namespace fakecuda
