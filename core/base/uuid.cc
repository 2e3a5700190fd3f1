// Copyright 2026 The cuhal Authors.
#include "core/base/uuid.h"

namespace cuhal {

std::string FormatGpuUuid(const std::array<unsigned char, 16>& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "GPU-";
  out.reserve(4 + 36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xF];
  }
  return out;
}

}  // namespace cuhal
