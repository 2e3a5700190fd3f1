// Copyright 2026 The cuhal Authors.
// What one queued operation reads and writes, as the race detector (race_detector.h) sees it.
// Kept in a header of its own so that stream_table.h (Op) and fakecuda/stream_work.h can carry
// accesses without knowing the detector.
#ifndef CUHAL_FAKECUDA_RACE_RACE_ACCESS_H_
#define CUHAL_FAKECUDA_RACE_RACE_ACCESS_H_

#include <cstddef>
#include <cstdint>

namespace fakecuda {

// Bytes [addr, addr + size) of memory the device may access (device, pool, pinned, registered or
// managed memory of the fake driver), read or written by an operation. Addresses outside every
// allocation (pageable host memory, staged at the call) are ignored by the detector.
struct RaceAccess {
  std::uintptr_t addr = 0;
  std::size_t size = 0;
  bool write = false;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_RACE_RACE_ACCESS_H_
