// Copyright 2026 The cuhal Authors.
// The text form of a GPU UUID, shared by the core (DeviceInfo::uuid) and fakecuda (device
// profiles): "GPU-" and the 16 bytes as 8-4-4-4-12 lowercase hex digits, as nvidia-smi prints.
#ifndef CUHAL_CORE_BASE_UUID_H_
#define CUHAL_CORE_BASE_UUID_H_

#include <array>
#include <string>

namespace cuhal {

// "GPU-01234567-89ab-cdef-0123-456789abcdef" for the bytes 01 23 45 ... ef.
[[nodiscard]] std::string FormatGpuUuid(const std::array<unsigned char, 16>& bytes);

}  // namespace cuhal

#endif  // CUHAL_CORE_BASE_UUID_H_
