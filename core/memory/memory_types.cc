// Copyright 2026 The cuhal Authors.
#include "core/memory/memory_types.h"

namespace cuhal {

std::string_view MemoryHeapName(MemoryHeap heap) {
  switch (heap) {
    case MemoryHeap::kDeviceLocal: return "device-local";
    case MemoryHeap::kHostPinned: return "host-pinned";
    case MemoryHeap::kManaged: return "managed";
    case MemoryHeap::kImportedHost: return "imported-host";
  }
  return "unknown-heap";
}

std::string_view MemoryPoolKindName(MemoryPoolKind kind) {
  switch (kind) {
    case MemoryPoolKind::kDeviceLocal: return "device-local pool";
    case MemoryPoolKind::kOther: return "other pool";
  }
  return "unknown pool";
}

}  // namespace cuhal
