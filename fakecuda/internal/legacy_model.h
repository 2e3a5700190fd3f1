// Copyright 2026 The cuhal Authors.
// The fake driver's older objects: JIT link states (cuLinkCreate ... cuLinkDestroy), texture
// references (cuTexRefCreate, cuModuleGetTexRef), surface references (cuModuleGetSurfRef) and
// surface objects (cuSurfObjectCreate). Internal to fakecuda; the entry points are
// fakecuda/entry/legacy_entry.cc, and the parameters and block shape of the deprecated launches
// (cuParamSet*, cuFuncSetBlockShape) live on the function (FunctionState, module_model.h).
//
// Invariants:
//  1. Everything here is guarded by DriverState::mu and owned by the DriverState
//     (DriverState::legacy(), created on first use).
//  2. Handles carry a never-reused id and a sub-kind in bits 4..7 over a low nibble of 0, an
//     encoding no other fake handle uses (EncodeHandle's low nibble is its HandleKind, never 0):
//     a made-up, destroyed or other-kind handle is looked up, never dereferenced.
//  3. A module's texture and surface references belong to it: they are found again by name,
//     and are gone (their handles stale) once the module is unloaded.
//  4. A link state's image is owned by the state: it stays valid until cuLinkDestroy.
#ifndef CUHAL_FAKECUDA_INTERNAL_LEGACY_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_LEGACY_MODEL_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

// A JIT link in progress: the PTX of its inputs, and the image once completed.
struct LinkRecord {
  std::uint64_t id = 0;
  std::uint64_t ctx_id = 0;
  int device = 0;
  std::vector<std::string> ptx;   // each input's PTX text, in the order added
  std::vector<std::string> names; // each input's name
  std::vector<char> image;        // the linked image (after cuLinkComplete)
  bool completed = false;
  // The first error of an input the link kept (measured: it is also cuLinkComplete's answer).
  CUresult sticky = CUDA_SUCCESS;
  int target_sm = 0;              // CU_JIT_TARGET, else the context's device's
  std::set<std::string> defined;  // the entries and functions the inputs define
  // The log options given to cuLinkCreate (the user's buffers, written as the JIT writes them).
  void* error_log = nullptr;
  std::size_t error_log_size = 0;
  void* info_log = nullptr;
  std::size_t info_log_size = 0;
};

// What a texture reference is bound to.
enum class TexRefBinding { kNone, kLinear, kPitch2D, kArray, kMipmapped };

// A texture reference's settings (cuTexRefSet*), as cuTexRefGet* reads them back.
struct TexRefRecord {
  std::uint64_t id = 0;
  std::uint64_t module_id = 0;  // the module declaring it; 0: cuTexRefCreate
  std::string name;
  // Measured defaults: CLAMP address modes (dimensions 0 and 2 read), POINT filters, FLOAT x 1,
  // zero bias, clamps, anisotropy, border and flags.
  CUaddress_mode address_mode[3] = {CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_CLAMP,
                                    CU_TR_ADDRESS_MODE_CLAMP};
  // The filter mode's bits: cuTexRefSetFilterMode takes any value (measured: 9 is read back),
  // which must not be held in, or loaded as, the enum type.
  int filter = CU_TR_FILTER_MODE_POINT;
  CUfilter_mode mipmap_filter = CU_TR_FILTER_MODE_POINT;
  CUarray_format format = CU_AD_FORMAT_FLOAT;
  int channels = 1;
  float mipmap_bias = 0.0f;
  float min_clamp = 0.0f;
  float max_clamp = 0.0f;
  unsigned max_anisotropy = 0;
  float border[4] = {0, 0, 0, 0};
  unsigned flags = 0;
  TexRefBinding binding = TexRefBinding::kNone;
  CUdeviceptr address = 0;
  CUarray array = nullptr;
  CUmipmappedArray mipmapped = nullptr;
};

// A module's surface reference and the array bound to it.
struct SurfRefRecord {
  std::uint64_t id = 0;
  std::uint64_t module_id = 0;
  std::string name;
  CUarray array = nullptr;
};

// A surface object: its resource (an array made with CUDA_ARRAY3D_SURFACE_LDST).
struct SurfObjectRecord {
  std::uint64_t id = 0;
  std::uint64_t ctx_id = 0;
  CUDA_RESOURCE_DESC resource{};
};

class LegacyModel {
 public:
  explicit LegacyModel(DriverState* st) : st_(st) {}
  LegacyModel(const LegacyModel&) = delete;             // owns the records
  LegacyModel& operator=(const LegacyModel&) = delete;  // ditto

  LinkRecord* AddLink(LinkRecord record, CUlinkState* out);
  LinkRecord* FindLink(CUlinkState handle);
  void DestroyLink(std::uint64_t id);

  // A created texture reference (module_id 0) or a module's (found again by name).
  TexRefRecord* AddTexRef(TexRefRecord record, CUtexref* out);
  TexRefRecord* FindTexRef(CUtexref handle);
  // The module's reference `name`, or null.
  TexRefRecord* FindModuleTexRef(std::uint64_t module_id, const std::string& name,
                                 CUtexref* handle);
  void DestroyTexRef(std::uint64_t id);

  SurfRefRecord* AddSurfRef(SurfRefRecord record, CUsurfref* out);
  SurfRefRecord* FindSurfRef(CUsurfref handle);
  SurfRefRecord* FindModuleSurfRef(std::uint64_t module_id, const std::string& name,
                                   CUsurfref* handle);

  CUsurfObject AddSurfObject(SurfObjectRecord record);
  SurfObjectRecord* FindSurfObject(CUsurfObject handle);
  void DestroySurfObject(std::uint64_t id);

  // Forgets the surface objects and link states of a context being destroyed.
  void OnContextTeardown(std::uint64_t ctx_id);
  // Leak report lines for live link states, created texture references and surface objects.
  std::string Describe() const;

 private:
  enum Sub : std::uint64_t { kLink = 0xA, kTexRef = 0xB, kSurfRef = 0xC, kSurfObject = 0xD };
  static std::uint64_t Encode(Sub sub, std::uint64_t id) { return (id << 8) | (sub << 4); }
  static std::uint64_t Decode(Sub sub, std::uint64_t handle) {
    return (handle & 0xFF) == (static_cast<std::uint64_t>(sub) << 4) ? handle >> 8 : 0;
  }
  // Whether the module of `module_id` is still loaded (0: no module, always).
  bool ModuleLive(std::uint64_t module_id) const;

  DriverState* st_;
  std::unordered_map<std::uint64_t, LinkRecord> links_;
  std::unordered_map<std::uint64_t, TexRefRecord> texrefs_;
  std::unordered_map<std::uint64_t, SurfRefRecord> surfrefs_;
  std::unordered_map<std::uint64_t, SurfObjectRecord> surfaces_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_LEGACY_MODEL_H_
