// Copyright 2026 The cuhal Authors.
// DevextModel: registrations and pool export descriptors (see devext_model.h).
#include "fakecuda/internal/devext_model.h"

#include <unistd.h>

namespace fakecuda {

DevextModel::~DevextModel() {
  for (auto& [id, r] : registrations_) {
    if (r.fd >= 0) close(r.fd);
  }
}

std::uintptr_t DevextModel::Register(const Registration& r) {
  const std::uint64_t id = next_id_++;
  registrations_[id] = r;
  return static_cast<std::uintptr_t>((id << 8) | (static_cast<std::uint64_t>(r.kind) << 4));
}

const DevextModel::Registration* DevextModel::Find(Kind kind, std::uintptr_t handle) const {
  const auto v = static_cast<std::uint64_t>(handle);
  if ((v & 0xF) != 0 || ((v >> 4) & 0xF) != static_cast<std::uint64_t>(kind)) return nullptr;
  auto it = registrations_.find(v >> 8);
  if (it == registrations_.end() || it->second.kind != kind) return nullptr;
  return &it->second;
}

bool DevextModel::Unregister(Kind kind, std::uintptr_t handle) {
  const Registration* r = Find(kind, handle);
  if (r == nullptr) return false;
  if (r->fd >= 0) close(r->fd);
  registrations_.erase(static_cast<std::uint64_t>(handle) >> 8);
  return true;
}

void DevextModel::NoteExport(std::uint64_t st_dev, std::uint64_t st_ino, std::uint64_t pool_id) {
  exports_[{st_dev, st_ino}] = pool_id;
}

std::uint64_t DevextModel::ExportedPool(std::uint64_t st_dev, std::uint64_t st_ino) const {
  auto it = exports_.find({st_dev, st_ino});
  return it == exports_.end() ? 0 : it->second;
}

}  // namespace fakecuda
