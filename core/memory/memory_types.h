// Copyright 2026 The cuhal Authors.
// The vocabulary of the memory layer: heaps, pool kinds, buffer parameters.
#ifndef CUHAL_CORE_MEMORY_MEMORY_TYPES_H_
#define CUHAL_CORE_MEMORY_MEMORY_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cuhal {

// Where a buffer's bytes live and how the host and the device reach them.
enum class MemoryHeap : std::uint8_t {
  // Device memory (cuMemAlloc, or a device memory pool). Not host-visible.
  kDeviceLocal = 0,
  // Page-locked host memory the device reads and writes over the bus (cuMemHostAlloc with
  // PORTABLE | DEVICEMAP). Host-visible and device-visible.
  kHostPinned = 1,
  // Managed (unified) memory that migrates on demand (cuMemAllocManaged, attached globally).
  // Host-visible and device-visible.
  kManaged = 2,
  // Host memory the caller already owns, page-locked and mapped for the device
  // (cuMemHostRegister with PORTABLE | DEVICEMAP). Made by Import, never by Allocate.
  kImportedHost = 3,
};
inline constexpr int kMemoryHeapCount = 4;

// "device-local", "host-pinned", "managed", "imported-host".
std::string_view MemoryHeapName(MemoryHeap heap);
// Whether the host may Map buffers of this heap.
constexpr bool IsHostVisible(MemoryHeap heap) { return heap != MemoryHeap::kDeviceLocal; }

// The two memory pools of a device (IREE's split): device-local serves the buffers a workload
// keeps on the device (variables, constants, transients); other serves everything else (staging,
// external) so that the two usage patterns do not fragment one another.
enum class MemoryPoolKind : std::uint8_t { kDeviceLocal = 0, kOther = 1 };
// "device-local pool", "other pool".
std::string_view MemoryPoolKindName(MemoryPoolKind kind);

// What to allocate.
struct BufferParams {
  MemoryHeap heap = MemoryHeap::kDeviceLocal;
  // Device-local heap only: take the memory from this pool of the device instead of cuMemAlloc.
  // Needs a device with memory pools (async allocations on and supported by the device).
  std::optional<MemoryPoolKind> pool;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_MEMORY_MEMORY_TYPES_H_
