// Copyright 2026 The cuhal Authors.
// The fake driver's IPC handles (cuIpcGetMemHandle, cuIpcGetEventHandle): what the 64 opaque
// bytes of a CUipcMemHandle / CUipcEventHandle hold, and how a handle given to cuIpcOpen* is
// read back.
//
// The fake's device memory and events live in one process (host memory behind fake device
// addresses), so a handle can only be *opened* where the real driver would refuse it anyway
// (the exporting process itself) or in another process, where the fake has nothing to map: it
// answers CUDA_ERROR_NOT_SUPPORTED there and says why on stderr (once per process). Modelling
// cross-process sharing would need the exporter's allocations to live in shared memory from the
// start, which the fake's allocator does not do.
//
// Invariants:
//  1. A handle is self-describing: magic, kind, the exporting process's pid, the driver instance
//     (DriverState::serial), the exported object's never-reused id, the exporting context (low 32
//     bits of its id) and, for memory, its base and size. No table is kept, so exporting is free
//     and nothing leaks.
//  2. Two exports of the same object from the same context give the same bytes; from another
//     context of the process, other bytes (measured 2026-12-06 on H100 80GB HBM3, driver
//     580.159.04, misc_probe ipc:mem).
#ifndef CUHAL_FAKECUDA_INTERNAL_IPC_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_IPC_MODEL_H_

#include <cuda.h>

#include <cstdint>

namespace fakecuda {

enum class IpcKind : std::uint32_t { kMemory = 1, kEvent = 2 };

// The decoded contents of a handle.
struct IpcHandleBits {
  IpcKind kind = IpcKind::kMemory;
  std::uint32_t pid = 0;
  std::uint64_t driver_serial = 0;
  std::uint64_t object_id = 0;  // allocation id or event id
  std::uint64_t base = 0;       // memory only
  std::uint64_t size = 0;       // memory only
  std::int32_t device = 0;
  std::uint64_t context_id = 0;  // the exporting context (only its low 32 bits travel)
};

// Writes `bits` into the 64 bytes at `out` (CU_IPC_HANDLE_SIZE).
void EncodeIpcHandle(const IpcHandleBits& bits, void* out);
// Reads a handle of `kind`; false when the bytes are not a fake handle of that kind (garbage,
// zeros, another kind's handle).
bool DecodeIpcHandle(const void* in, IpcKind kind, IpcHandleBits* bits);
// The pid of the calling process (cached).
std::uint32_t CurrentPid();
// Prints, once per process, why a handle of another process cannot be opened.
void ReportCrossProcessOpen(const char* entry, std::uint32_t exporter_pid);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_IPC_MODEL_H_
