// Copyright 2026 The cuhal Authors.
#ifndef CUHAL_FAKECUDA_INTERNAL_PINNED_CHUNKS_H_
#define CUHAL_FAKECUDA_INTERNAL_PINNED_CHUNKS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace fakecuda {

// Where the driver would place each cuMemHostAlloc/cuMemAllocHost allocation, as far as
// cuMemHostGetFlags reveals it: its PORTABLE bit is the bit of the allocation that opened the
// 2 MiB chunk the allocation lies in, not the caller's.
//
// Measured with the differential fuzzer on the H100 (driver 580.159.04, 2026-12-06): over two
// runs, 1,246 of 1,246 cuMemHostGetFlags reads fit this model, and no simpler one does (one
// arena per kind fails a read where a second 1 MiB allocation no longer fits the first chunk;
// 1 MiB or 4 MiB chunks fail 4 and 1 reads). Write-combined allocations have chunks of their
// own; chunks are searched first-fit in the order they were opened, blocks within a chunk
// first-fit by offset; a chunk closes when its last allocation is freed. Not measured (no
// fuzzer size exceeded 1 MiB): the alignment of blocks (512 bytes here; 64 to 4096 fit equally)
// and what an allocation larger than a chunk gets (here a chunk of its own).
//
// Ownership: one per DriverState, which holds it privately and consults it when pinned memory is
// allocated and released. Thread-safety: none of its own; used only under DriverState::mu.
// Stream ordering: none (host bookkeeping at call time).
class PinnedChunks {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{2} << 20;
  static constexpr std::size_t kAlignment = 512;

  struct Placement {
    std::uint64_t chunk = 0;   // 0: none
    std::uint64_t offset = 0;
    bool portable = false;     // the PORTABLE bit cuMemHostGetFlags reports
  };

  // Places an allocation of `bytes` made with cuMemHostAlloc `flags`.
  Placement Place(std::size_t bytes, unsigned flags);
  // Releases what Place returned; an unknown placement is ignored.
  void Release(const Placement& placement);
  // Open chunks (for tests).
  std::size_t chunk_count() const { return chunks_.size(); }

 private:
  struct Chunk {
    std::uint64_t id = 0;
    bool write_combined = false;
    bool portable = false;
    std::size_t capacity = kChunkBytes;
    std::map<std::uint64_t, std::uint64_t> blocks;  // offset -> bytes
  };

  std::vector<Chunk> chunks_;  // in the order they were opened
  std::uint64_t next_id_ = 1;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_PINNED_CHUNKS_H_
