// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/memory_map.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>

namespace fakecuda {
namespace {

// Allocations at least this large are backed by lazily committed anonymous mappings.
constexpr std::size_t kMmapThreshold = 1 << 20;

}  // namespace

MemoryMap::~MemoryMap() {
  for (const auto& [base, a] : map_) FreeOwnedBacking(a);
}

Allocation* MemoryMap::At(std::uintptr_t base) {
  auto it = map_.find(base);
  return it == map_.end() ? nullptr : &it->second;
}

const Allocation* MemoryMap::At(std::uintptr_t base) const {
  auto it = map_.find(base);
  return it == map_.end() ? nullptr : &it->second;
}

Allocation* MemoryMap::Find(std::uintptr_t ptr, std::size_t size) {
  auto it = map_.upper_bound(ptr);
  if (it == map_.begin()) return nullptr;
  --it;
  Allocation& a = it->second;
  if (ptr < a.base || ptr - a.base >= std::max<std::size_t>(a.size, 1)) return nullptr;
  if (size > a.size - (ptr - a.base)) return nullptr;
  return &a;
}

bool MemoryMap::Overlaps(std::uintptr_t base, std::size_t size) const {
  auto it = map_.lower_bound(base);
  if (it != map_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.base + prev->second.size > base) return true;
  }
  return it != map_.end() && it->second.base < base + size;
}

void MemoryMap::Add(Allocation a) {
  const std::uintptr_t base = a.base;
  map_.emplace(base, std::move(a));
}

void MemoryMap::Add(Node node) { map_.insert(std::move(node)); }

MemoryMap::Node MemoryMap::Extract(std::uintptr_t base) { return map_.extract(base); }

void MemoryMap::Forget(std::uintptr_t base) { map_.erase(base); }

void MemoryMap::Release(std::uintptr_t base) {
  auto it = map_.find(base);
  if (it == map_.end()) return;
  FreeOwnedBacking(it->second);
  map_.erase(it);
}

void MemoryMap::FreeOwnedBacking(const Allocation& a) {
  if (a.type != MemoryType::kRegisteredHost && a.type != MemoryType::kPool &&
      a.type != MemoryType::kVmm) {
    FreeBacking(a.data, a.mmapped, a.mapped_size);
  }
}

std::byte* MemoryMap::AllocateBacking(std::size_t size, bool* mmapped, std::size_t* mapped_size) {
  *mmapped = false;
  *mapped_size = 0;
  if (size >= kMmapThreshold) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    *mmapped = true;
    *mapped_size = size;
    return static_cast<std::byte*>(p);
  }
  return static_cast<std::byte*>(std::malloc(std::max<std::size_t>(size, 1)));
}

void MemoryMap::FreeBacking(std::byte* data, bool mmapped, std::size_t mapped_size) {
  if (data == nullptr) return;
  if (mmapped) {
    // A mapping may start inside its first page (an external-memory buffer at an unaligned
    // offset, fakecuda/entry/devext_entry.cc): unmap from the page, `mapped_size` counts from it.
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto start = reinterpret_cast<std::uintptr_t>(data) & ~(page - 1);
    munmap(reinterpret_cast<void*>(start), mapped_size);
  } else {
    std::free(data);
  }
}

}  // namespace fakecuda
