// Copyright 2026 The cuhal Authors.
// The fake driver's CUDA arrays (cuArrayCreate, cuArray3DCreate and the calls on a CUarray):
// their descriptors, their validation against the device's texture and surface limits, their
// memory, and the layout the copies to and from them (fakecuda/entry/array_entry.cc) address;
// the mipmapped arrays made of them and the texture objects made over them
// (fakecuda/entry/mipmap_texture_entry.cc).
// Measured 2026-12-06 on an H100 80GB HBM3, driver 580.159.04 (ci/gpu-probes/array_probe.cc,
// results in ci/gpu-probes/results/2026-12-06-h100-array.real.txt; docs/driver_facts.md, "CUDA
// arrays"): the accepted formats and flags, the layout sizes and the memory taken follow those
// measurements; what they did not reach follows cuda.h.
//
// Invariants:
//  1. An array's bytes are stored packed, element by element, row after row, layer after layer:
//     byte (x, y, z) of a W x H x D array of E-byte elements is at ((z * H' + y) * W * E + x)
//     with H' = max(H, 1). The real driver's layout (block linear) is opaque to programs: they
//     reach an array only through copies, which address it by (x in bytes, y, z), and through
//     the linear offsets of cuMemcpyHtoA/AtoH/DtoA/AtoD/AtoA, which the fake maps onto the packed
//     bytes.
//  2. The bytes live in an ArrayBacking held by a shared_ptr: the record and every queued copy
//     that touches the array hold it, so work queued before cuArrayDestroy never touches freed
//     memory (cuArrayDestroy also waits for the array's context first, as cuMemFree does).
//  3. The memory an array takes from its device's budget (Device::bytes_in_use, which
//     cuMemGetInfo reports) is charged at creation and given back exactly once: at
//     cuArrayDestroy or when its context is torn down. An array of kPage bytes or more takes
//     its footprint rounded up to whole 2 MiB pages; smaller ones share pages (the device is
//     charged the pages their summed footprints need); sparse and deferred-mapping arrays take
//     nothing (measured, array_probe "meminfo").
//  4. Handle values encode a never-reused id (DriverState invariant 2, HandleKind::kArray,
//     kMipmappedArray, kTexObject): a destroyed or made-up handle is never dereferenced; it is
//     looked up and not found.
//  5. A mipmapped array owns its levels: each is an ArrayRecord (mipmap_id set) made with it and
//     destroyed with it (or with its context).
//
// Ownership: one per DriverState, created on first use (DriverState::arrays()); owns the records
// and, with the queued work, the backing. Thread-safety: none of its own; every method is
// reached through DriverState::arrays(), which requires DriverState::mu. Stream ordering: none
// here; copies are stream work queued by the entry points.
#ifndef CUHAL_FAKECUDA_INTERNAL_ARRAY_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_ARRAY_MODEL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

// The host memory behind one array (lazily committed when large, MemoryMap::AllocateBacking).
class ArrayBacking {
 public:
  explicit ArrayBacking(std::size_t size);
  ~ArrayBacking();
  ArrayBacking(const ArrayBacking&) = delete;             // owns the memory
  ArrayBacking& operator=(const ArrayBacking&) = delete;  // ditto
  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool mmapped_ = false;
  std::size_t mapped_size_ = 0;
};

struct ArrayRecord {
  std::uint64_t id = 0;
  std::uint64_t ctx_id = 0;
  int device = 0;
  CUDA_ARRAY3D_DESCRIPTOR desc{};  // as created (cuArrayCreate: Depth 0, Flags 0)
  std::size_t element_size = 0;    // bytes of one element (all channels)
  std::size_t row_bytes = 0;       // Width * element_size
  std::size_t rows = 0;            // max(Height, 1)
  std::size_t layers = 0;          // max(Depth, 1)
  std::size_t bytes = 0;           // row_bytes * rows * layers: the packed bytes
  std::size_t footprint = 0;       // its block-linear size (ArrayModel::Footprint)
  std::size_t charged = 0;         // whole pages taken (invariant 3), 0 when shared or none
  bool shared_pages = false;       // its footprint counts in the device's shared pages
  std::shared_ptr<ArrayBacking> backing;
  const char* created_by = "";
  std::uint64_t mipmap_id = 0;  // the mipmapped array it is a level of, or 0 (invariant 5)
};

struct MipmappedRecord {
  std::uint64_t id = 0;
  std::uint64_t ctx_id = 0;
  int device = 0;
  CUDA_ARRAY3D_DESCRIPTOR desc{};  // of level 0, as created
  std::size_t element_size = 0;
  std::vector<CUarray> levels;  // level 0 first
  const char* created_by = "";
};

struct TextureRecord {
  std::uint64_t id = 0;
  std::uint64_t ctx_id = 0;
  CUDA_RESOURCE_DESC resource{};
  CUDA_TEXTURE_DESC texture{};
  CUDA_RESOURCE_VIEW_DESC view{};
  bool has_view = false;
};

// The tile of a sparse array or mipmapped array (texels).
struct SparseTile {
  unsigned w = 0;
  unsigned h = 0;
  unsigned d = 0;
};

class ArrayModel {
 public:
  explicit ArrayModel(DriverState* st) : st_(st) {}
  ArrayModel(const ArrayModel&) = delete;             // owns the records
  ArrayModel& operator=(const ArrayModel&) = delete;  // ditto

  // Bytes of one element of `format` with `channels` channels (of one 4x4 block for a
  // block-compressed format); 0 when the driver refuses the pair (unknown format, a channel count
  // other than 1, 2 or 4 or other than the one the format's name fixes, a planar format, which
  // the fake does not model).
  static std::size_t ElementSize(CUarray_format format, unsigned channels);
  // Whether `format` is one of the BC formats (addressed in 4x4 blocks by the copies).
  static bool BlockCompressed(CUarray_format format);
  // Checks a descriptor as cuArray3DCreate does (cuArrayCreate passes Depth 0 and Flags 0)
  // against `profile`'s limits. CUDA_SUCCESS when an array may be made.
  static CUresult Validate(const DeviceProfile& profile, const CUDA_ARRAY3D_DESCRIPTOR& desc);
  // The block-linear size of an array of `desc` (array_model.cc says the layout).
  static std::size_t Footprint(const CUDA_ARRAY3D_DESCRIPTOR& desc, std::size_t element_size);
  // What cuArrayGetMemoryRequirements reports: the footprint rounded up to kAlignment, which is
  // also the alignment it reports (measured).
  static std::size_t MemoryRequirement(const CUDA_ARRAY3D_DESCRIPTOR& desc,
                                       std::size_t element_size);
  static constexpr std::size_t kAlignment = 65536;
  // The 64 KiB tile of a sparse array of `desc` (array_entry.cc says the shapes).
  static SparseTile TileOf(const CUDA_ARRAY3D_DESCRIPTOR& desc, std::size_t element_size);
  // The descriptor of level `level` of a mipmapped array of `desc`: each dimension halved per
  // level, down to 1 (0 stays 0; a layered or cubemap array keeps its layers).
  static CUDA_ARRAY3D_DESCRIPTOR LevelOf(const CUDA_ARRAY3D_DESCRIPTOR& desc, unsigned level);

  // Makes an array in context `ctx_id` on `device` from a validated descriptor, charging its
  // footprint to the device. CUDA_ERROR_OUT_OF_MEMORY when the device (or the host) has not
  // the room.
  CUresult Create(std::uint64_t ctx_id, int device, const CUDA_ARRAY3D_DESCRIPTOR& desc,
                  const char* created_by, CUarray* out);
  // The live array of `handle`, or null (destroyed, never made, another kind of handle).
  ArrayRecord* Find(CUarray handle);
  // Forgets the array of `id` and gives its memory back (queued work still holding the backing
  // keeps the bytes alive until it finishes).
  void Destroy(std::uint64_t id);
  // Destroys every array, mipmapped array and texture object of context `ctx_id` (its teardown).
  void OnContextTeardown(std::uint64_t ctx_id);

  // Makes a mipmapped array of `levels` levels from a validated level-0 descriptor: one array
  // per level (invariant 5). CUDA_ERROR_OUT_OF_MEMORY (nothing made) when a level does not fit.
  CUresult CreateMipmapped(std::uint64_t ctx_id, int device, const CUDA_ARRAY3D_DESCRIPTOR& desc,
                           unsigned levels, const char* created_by, CUmipmappedArray* out);
  MipmappedRecord* FindMipmapped(CUmipmappedArray handle);
  // Forgets the mipmapped array of `id` and destroys its levels.
  void DestroyMipmapped(std::uint64_t id);

  // Records a texture object; its handle.
  CUtexObject AddTexture(TextureRecord record);
  TextureRecord* FindTexture(CUtexObject handle);
  void DestroyTexture(std::uint64_t id);

  // Leak reporting.
  void CountLive(Inventory* inv) const;
  std::string Describe() const;

 private:
  // The device bytes the shared pages of `device` take for `small` bytes of small arrays.
  static std::size_t SharedPages(std::size_t small);

  DriverState* st_;
  std::map<std::uint64_t, ArrayRecord> arrays_;
  std::map<std::uint64_t, MipmappedRecord> mipmapped_;
  std::map<std::uint64_t, TextureRecord> textures_;
  std::map<int, std::size_t> small_bytes_;  // per device: summed footprints of small arrays
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_ARRAY_MODEL_H_
