// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/ipc_model.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace fakecuda {
namespace {

// The layout of the 64 bytes (CU_IPC_HANDLE_SIZE).
struct Wire {
  char magic[8];
  std::uint32_t kind;
  std::uint32_t pid;
  std::uint64_t driver_serial;
  std::uint64_t object_id;
  std::uint64_t base;
  std::uint64_t size;
  std::int32_t device;
  std::uint32_t context;  // low 32 bits of the exporting context's id
  std::uint64_t check;
};
static_assert(sizeof(Wire) == CU_IPC_HANDLE_SIZE, "an IPC handle is 64 bytes");

constexpr char kMagic[8] = {'f', 'a', 'k', 'e', 'c', 'u', 'i', 'p'};

std::uint64_t Mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xbf58476d1ce4e5b9ULL;
}

std::uint64_t Check(const Wire& w) {
  std::uint64_t h = 0x5851f42d4c957f2dULL;
  for (std::uint64_t v : {std::uint64_t{w.kind}, std::uint64_t{w.pid}, w.driver_serial,
                          w.object_id, w.base, w.size,
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(w.device)),
                          std::uint64_t{w.context}}) {
    h = Mix(h, v);
  }
  return h;
}

}  // namespace

void EncodeIpcHandle(const IpcHandleBits& bits, void* out) {
  Wire w;
  std::memset(&w, 0, sizeof w);
  std::memcpy(w.magic, kMagic, sizeof kMagic);
  w.kind = static_cast<std::uint32_t>(bits.kind);
  w.pid = bits.pid;
  w.driver_serial = bits.driver_serial;
  w.object_id = bits.object_id;
  w.base = bits.base;
  w.size = bits.size;
  w.device = bits.device;
  w.context = static_cast<std::uint32_t>(bits.context_id);
  w.check = Check(w);
  std::memcpy(out, &w, sizeof w);
}

bool DecodeIpcHandle(const void* in, IpcKind kind, IpcHandleBits* bits) {
  Wire w;
  std::memcpy(&w, in, sizeof w);
  if (std::memcmp(w.magic, kMagic, sizeof kMagic) != 0) return false;
  if (w.kind != static_cast<std::uint32_t>(kind) || w.check != Check(w)) return false;
  bits->kind = kind;
  bits->pid = w.pid;
  bits->driver_serial = w.driver_serial;
  bits->object_id = w.object_id;
  bits->base = w.base;
  bits->size = w.size;
  bits->device = w.device;
  bits->context_id = w.context;
  return true;
}

std::uint32_t CurrentPid() {
  // Not cached: a forked child must see its own pid.
  return static_cast<std::uint32_t>(getpid());
}

void ReportCrossProcessOpen(const char* entry, std::uint32_t exporter_pid) {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  std::fprintf(stderr,
               "fakecuda: %s: the handle was exported by process %u; fakecuda's device memory "
               "and events are per process, so it cannot be opened here "
               "(CUDA_ERROR_NOT_SUPPORTED)\n",
               entry, exporter_pid);
}

}  // namespace fakecuda
