// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/context_table.h"

#include <utility>

#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

ContextTable::ContextTable(const std::vector<DeviceProfile>& profiles) {
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    Device d;
    d.ordinal = static_cast<int>(i);
    d.profile = profiles[i];
    // Each device owns a 2^44-byte (16 TiB) range of addresses starting at 2^48 * (i + 1): above
    // the 47-bit user address space, so a device pointer is never host-dereferenceable.
    d.next_va = (CUdeviceptr{1} << 48) * (i + 1);
    devices_.push_back(std::move(d));
  }
}

Context* ContextTable::Find(std::uint64_t id) {
  auto it = contexts_.find(id);
  return it == contexts_.end() ? nullptr : it->second.get();
}

const Context* ContextTable::Find(std::uint64_t id) const {
  auto it = contexts_.find(id);
  return it == contexts_.end() ? nullptr : it->second.get();
}

Context* ContextTable::Find(CUcontext handle) {
  const std::uint64_t id = DecodeHandle(HandleKind::kContext, handle);
  return id == 0 ? nullptr : Find(id);
}

CUresult ContextTable::StickyError(std::uint64_t id) const {
  const Context* c = Find(id);
  return c == nullptr ? CUDA_SUCCESS : c->sticky;
}

Context* ContextTable::Create(std::uint64_t id, int device, bool primary, unsigned flags) {
  auto c = std::make_unique<Context>();
  c->id = id;
  c->device = device;
  c->primary = primary;
  c->flags = flags;
  c->public_id = next_public_id_++;
  Context* raw = c.get();
  contexts_[id] = std::move(c);
  return raw;
}

void ContextTable::Remove(std::uint64_t id) {
  auto it = contexts_.find(id);
  if (it == contexts_.end()) return;
  if (!it->second->primary) destroyed_[id] = it->second->device;
  contexts_.erase(it);
}

int ContextTable::DestroyedContextDevice(std::uint64_t id) const {
  if (id == 0 || IsLive(id)) return -1;
  for (const Device& d : devices_) {
    if (d.primary_ctx_id == id) return d.ordinal;
  }
  auto it = destroyed_.find(id);
  return it == destroyed_.end() ? -1 : it->second;
}

}  // namespace fakecuda
