// Copyright 2026 The cuhal Authors.
#include "fakecuda/ptx/memory.h"

#include <cstdio>

namespace fakecuda::ptx {

std::byte* GlobalMemory::Miss(std::uint64_t address, std::size_t size) {
  Region r;
  if (!resolver_ || !resolver_(address, &r) || r.data == nullptr) return nullptr;
  if (address - r.base >= r.size || r.size - (address - r.base) < size) return nullptr;
  cache_[next_] = r;
  next_ = (next_ + 1) % cache_.size();
  return r.data + (address - r.base);
}

std::string DescribeBadAccess(const char* space, bool write, std::size_t size, std::uint64_t address,
                              const char* why) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "Invalid %s %s of size %zu bytes at 0x%016llx (%s)", space,
                write ? "write" : "read", size, static_cast<unsigned long long>(address), why);
  return buf;
}

}  // namespace fakecuda::ptx
