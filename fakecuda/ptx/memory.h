// Copyright 2026 The cuhal Authors.
// The memory model of the PTX interpreter: global (and const) memory is the fake driver's
// allocations, reached through a resolver that the launch path supplies; the interpreter caches
// the few allocations a kernel touches, so that an access costs a bounds check, not a lookup.
// Shared, local and parameter memory are owned by the block, the thread and the launch
// (thread.h); this file also formats the reports of faulting accesses.
#ifndef CUHAL_FAKECUDA_PTX_MEMORY_H_
#define CUHAL_FAKECUDA_PTX_MEMORY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace fakecuda::ptx {

// One allocation's bytes: device addresses [base, base + size) live at host `data`.
struct Region {
  std::uint64_t base = 0;
  std::uint64_t size = 0;
  std::byte* data = nullptr;
};

// Finds the allocation containing [address, address + 1); false when there is none.
using RegionResolver = std::function<bool(std::uint64_t address, Region* out)>;

// Global memory as one launch sees it.
//
// Ownership: holds no allocation; the regions it caches stay valid for the launch (the fake
// driver, like the GPU, makes freeing memory that a running kernel uses undefined).
// Thread-safety: one per worker of a launch (interpreter.h), used by that worker only; the
// resolver may be called from every worker at once.
class GlobalMemory {
 public:
  explicit GlobalMemory(RegionResolver resolver) : resolver_(std::move(resolver)) {}

  // The host bytes of [address, address + size), or null when the range is not inside one
  // allocation.
  std::byte* Translate(std::uint64_t address, std::size_t size) {
    for (const Region& r : cache_) {
      if (address - r.base < r.size && r.size - (address - r.base) >= size) {
        return r.data + (address - r.base);
      }
    }
    return Miss(address, size);
  }

 private:
  std::byte* Miss(std::uint64_t address, std::size_t size);

  RegionResolver resolver_;
  std::array<Region, 4> cache_{};
  std::size_t next_ = 0;  // round-robin replacement
};

// The compute-sanitizer-like description of a faulting access ("Invalid __global__ write of
// size 4 bytes at 0x...").
std::string DescribeBadAccess(const char* space, bool write, std::size_t size, std::uint64_t address,
                              const char* why);

}  // namespace fakecuda::ptx

#endif  // CUHAL_FAKECUDA_PTX_MEMORY_H_
