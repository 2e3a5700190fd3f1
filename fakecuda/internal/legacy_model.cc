// Copyright 2026 The cuhal Authors.
// The records of fakecuda/internal/legacy_model.h: link states, texture and surface references,
// surface objects, kept by id and looked up through their handles (invariant 2 there).
#include "fakecuda/internal/legacy_model.h"

#include <sstream>
#include <utility>

#include "fakecuda/internal/module_model.h"

namespace fakecuda {

LinkRecord* LegacyModel::AddLink(LinkRecord record, CUlinkState* out) {
  st_->mu.AssertHeld();
  record.id = st_->NewId();
  const std::uint64_t id = record.id;
  LinkRecord& r = links_[id] = std::move(record);
  *out = reinterpret_cast<CUlinkState>(static_cast<std::uintptr_t>(Encode(kLink, id)));
  return &r;
}

LinkRecord* LegacyModel::FindLink(CUlinkState handle) {
  const std::uint64_t id =
      Decode(kLink, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle)));
  auto it = links_.find(id);
  return id == 0 || it == links_.end() ? nullptr : &it->second;
}

void LegacyModel::DestroyLink(std::uint64_t id) { links_.erase(id); }

bool LegacyModel::ModuleLive(std::uint64_t module_id) const CUHAL_NO_THREAD_SAFETY_ANALYSIS {
  st_->mu.AssertHeld();
  if (module_id == 0) return true;
  const ModuleModel* m = st_->modules_if_used();
  return m != nullptr && m->modules.count(module_id) != 0;
}

TexRefRecord* LegacyModel::AddTexRef(TexRefRecord record, CUtexref* out) {
  st_->mu.AssertHeld();
  record.id = st_->NewId();
  const std::uint64_t id = record.id;
  TexRefRecord& r = texrefs_[id] = std::move(record);
  *out = reinterpret_cast<CUtexref>(static_cast<std::uintptr_t>(Encode(kTexRef, id)));
  return &r;
}

TexRefRecord* LegacyModel::FindTexRef(CUtexref handle) {
  const std::uint64_t id =
      Decode(kTexRef, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle)));
  auto it = texrefs_.find(id);
  if (id == 0 || it == texrefs_.end()) return nullptr;
  if (!ModuleLive(it->second.module_id)) {  // invariant 3: gone with its module
    texrefs_.erase(it);
    return nullptr;
  }
  return &it->second;
}

TexRefRecord* LegacyModel::FindModuleTexRef(std::uint64_t module_id, const std::string& name,
                                            CUtexref* handle) {
  for (auto& [id, r] : texrefs_) {
    if (r.module_id == module_id && r.name == name) {
      *handle = reinterpret_cast<CUtexref>(static_cast<std::uintptr_t>(Encode(kTexRef, id)));
      return &r;
    }
  }
  return nullptr;
}

void LegacyModel::DestroyTexRef(std::uint64_t id) { texrefs_.erase(id); }

SurfRefRecord* LegacyModel::AddSurfRef(SurfRefRecord record, CUsurfref* out) {
  st_->mu.AssertHeld();
  record.id = st_->NewId();
  const std::uint64_t id = record.id;
  SurfRefRecord& r = surfrefs_[id] = std::move(record);
  *out = reinterpret_cast<CUsurfref>(static_cast<std::uintptr_t>(Encode(kSurfRef, id)));
  return &r;
}

SurfRefRecord* LegacyModel::FindSurfRef(CUsurfref handle) {
  const std::uint64_t id =
      Decode(kSurfRef, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle)));
  auto it = surfrefs_.find(id);
  if (id == 0 || it == surfrefs_.end()) return nullptr;
  if (!ModuleLive(it->second.module_id)) {
    surfrefs_.erase(it);
    return nullptr;
  }
  return &it->second;
}

SurfRefRecord* LegacyModel::FindModuleSurfRef(std::uint64_t module_id, const std::string& name,
                                              CUsurfref* handle) {
  for (auto& [id, r] : surfrefs_) {
    if (r.module_id == module_id && r.name == name) {
      *handle = reinterpret_cast<CUsurfref>(static_cast<std::uintptr_t>(Encode(kSurfRef, id)));
      return &r;
    }
  }
  return nullptr;
}

CUsurfObject LegacyModel::AddSurfObject(SurfObjectRecord record) {
  st_->mu.AssertHeld();
  record.id = st_->NewId();
  const std::uint64_t id = record.id;
  surfaces_[id] = std::move(record);
  return Encode(kSurfObject, id);
}

SurfObjectRecord* LegacyModel::FindSurfObject(CUsurfObject handle) {
  const std::uint64_t id = Decode(kSurfObject, handle);
  auto it = surfaces_.find(id);
  return id == 0 || it == surfaces_.end() ? nullptr : &it->second;
}

void LegacyModel::DestroySurfObject(std::uint64_t id) { surfaces_.erase(id); }

void LegacyModel::OnContextTeardown(std::uint64_t ctx_id) {
  for (auto it = surfaces_.begin(); it != surfaces_.end();) {
    it = it->second.ctx_id == ctx_id ? surfaces_.erase(it) : std::next(it);
  }
}

std::string LegacyModel::Describe() const {
  std::ostringstream os;
  for (const auto& [id, l] : links_) os << "JIT link state " << id << " (cuLinkCreate)\n";
  for (const auto& [id, t] : texrefs_) {
    if (t.module_id == 0) os << "texture reference " << id << " (cuTexRefCreate)\n";
  }
  for (const auto& [id, s] : surfaces_) os << "surface object " << id << " (cuSurfObjectCreate)\n";
  return os.str();
}

}  // namespace fakecuda
