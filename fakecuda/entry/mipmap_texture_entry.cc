// Copyright 2026 The cuhal Authors.
// Entry points: mipmapped arrays (cuMipmappedArrayCreate, cuMipmappedArrayGetLevel,
// cuMipmappedArrayGetSparseProperties, cuMipmappedArrayDestroy) and texture objects
// (cuTexObjectCreate, cuTexObjectDestroy and its getters), which the CUDA runtime's
// cudaMallocMipmappedArray, cudaMipmappedArrayGetSparseProperties, cudaFreeMipmappedArray,
// cudaCreateTextureObject and cudaGetTextureObjectTextureDesc reach. The records live in the
// array model (fakecuda/internal/array_model.h). The fake samples no texture: a texture object
// is its descriptors.
//
// Measured 2026-12-06 on an H100 80GB HBM3, driver 580.159.04, through the runtime (NVIDIA
// cuda-python's test_cudart.py, which passes there): a sparse mipmapped array of 1000 x 500
// float4 texels (depth 0) and 10 levels has 64 x 64 x 1 tiles, its mip tail from level 3 and
// 196608 bytes, flags 0; a texture object over a 1024-texel u8 array, made with a zeroed
// texture descriptor, gives that descriptor back. The rest follows cuda.h: UNMEASURED.
#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/array_model.h"
#include "fakecuda/internal/copy_resolve.h"

using fakecuda::ArrayModel;
using fakecuda::MipmappedRecord;
using fakecuda::TextureRecord;

namespace fakecuda {
namespace {

// The most levels a mipmapped array of `d` may have: 1 + floor(log2(largest dimension))
// (cuda.h: each level halves the dimensions down to 1; UNMEASURED that more are refused).
unsigned MaxLevels(const CUDA_ARRAY3D_DESCRIPTOR& d) {
  std::size_t largest = std::max<std::size_t>(d.Width, d.Height);
  if ((d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) == 0) {
    largest = std::max<std::size_t>(largest, d.Depth);
  }
  unsigned levels = 1;
  while (largest > 1) {
    largest >>= 1;
    ++levels;
  }
  return levels;
}

// Measured (one shape, above): the mip tail starts at the first level smaller than a tile in
// some dimension, and its size is the block-linear footprints of the levels from there, summed
// and rounded up to whole 64 KiB tiles (1000 x 500 float4, 10 levels: levels 3..9, 196608 bytes;
// summing the packed bytes instead gives the same). UNMEASURED: other shapes, and a mipmapped
// array with no level smaller than a tile (mip tail level = the level count, size 0).
void MipmapSparseProperties(const MipmappedRecord& m, CUDA_ARRAY_SPARSE_PROPERTIES* out) {
  const SparseTile t = ArrayModel::TileOf(m.desc, m.element_size);
  const bool three_d = m.desc.Depth != 0 && (m.desc.Flags & CUDA_ARRAY3D_LAYERED) == 0;
  std::memset(out, 0, sizeof *out);
  out->tileExtent.width = t.w;
  out->tileExtent.height = t.h;
  out->tileExtent.depth = t.d;
  const auto levels = static_cast<unsigned>(m.levels.size());
  unsigned first = levels;
  std::size_t tail = 0;
  for (unsigned l = 0; l < levels; ++l) {
    const CUDA_ARRAY3D_DESCRIPTOR d = ArrayModel::LevelOf(m.desc, l);
    const bool small =
        d.Width < t.w || std::max<std::size_t>(d.Height, 1) < t.h || (three_d && d.Depth < t.d);
    if (small && first == levels) first = l;
    if (first != levels) tail += ArrayModel::Footprint(d, m.element_size);
  }
  out->miptailFirstLevel = first;
  out->miptailSize =
      (tail + ArrayModel::kAlignment - 1) / ArrayModel::kAlignment * ArrayModel::kAlignment;
}

// UNMEASURED (cuda.h): what cuTexObjectCreate requires of the resource. A made-up array handle
// is refused rather than read (the real driver may crash on one, as it does for arrays).
CUresult CheckResource(DriverState* st, const CUDA_RESOURCE_DESC& r) CUHAL_REQUIRES(st->mu) {
  if (r.flags != 0) return CUDA_ERROR_INVALID_VALUE;  // cuda.h: "must be set to zero"
  switch (r.resType) {
    case CU_RESOURCE_TYPE_ARRAY:
      return st->arrays().Find(r.res.array.hArray) != nullptr ? CUDA_SUCCESS
                                                              : CUDA_ERROR_INVALID_VALUE;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
      return st->arrays().FindMipmapped(r.res.mipmap.hMipmappedArray) != nullptr
                 ? CUDA_SUCCESS
                 : CUDA_ERROR_INVALID_VALUE;
    case CU_RESOURCE_TYPE_LINEAR: {
      const std::size_t e = ArrayModel::ElementSize(r.res.linear.format, r.res.linear.numChannels);
      if (e == 0 || r.res.linear.sizeInBytes == 0) return CUDA_ERROR_INVALID_VALUE;
      Resolved where;
      return ResolveDevice(st, r.res.linear.devPtr, r.res.linear.sizeInBytes, &where);
    }
    case CU_RESOURCE_TYPE_PITCH2D: {
      const auto& p = r.res.pitch2D;
      const std::size_t e = ArrayModel::ElementSize(p.format, p.numChannels);
      if (e == 0 || p.width == 0 || p.height == 0 || p.pitchInBytes < p.width * e) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      Resolved where;
      return ResolveDevice(st, p.devPtr, (p.height - 1) * p.pitchInBytes + p.width * e, &where);
    }
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace
}  // namespace fakecuda

extern "C" {

// --- mipmapped arrays ---

CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray* pHandle,
                                        const CUDA_ARRAY3D_DESCRIPTOR* pMipmappedArrayDesc,
                                        unsigned int numMipmapLevels) try {
  FAKECUDA_ENTER(cuMipmappedArrayCreate)
  FAKECUDA_REQUIRE_CONTEXT()
  if (pHandle == nullptr || pMipmappedArrayDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_ARRAY3D_DESCRIPTOR& d = *pMipmappedArrayDesc;
  if (CUresult e = ArrayModel::Validate(st->profile(ctx->device), d); e != CUDA_SUCCESS) return e;
  if (numMipmapLevels == 0 || numMipmapLevels > fakecuda::MaxLevels(d)) {
    return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED (cuda.h)
  }
  return st->arrays().CreateMipmapped(ctx->id, ctx->device, d, numMipmapLevels,
                                      "cuMipmappedArrayCreate", pHandle);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMipmappedArrayCreate");
}

CUresult CUDAAPI cuMipmappedArrayGetLevel(CUarray* pLevelArray, CUmipmappedArray hMipmappedArray,
                                          unsigned int level) try {
  FAKECUDA_ENTER(cuMipmappedArrayGetLevel)
  if (pLevelArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const MipmappedRecord* m = st->arrays().FindMipmapped(hMipmappedArray);
  if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;              // UNMEASURED
  if (level >= m->levels.size()) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  *pLevelArray = m->levels[level];
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMipmappedArrayGetLevel");
}

CUresult CUDAAPI cuMipmappedArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES* sparseProperties,
                                                     CUmipmappedArray mipmap) try {
  FAKECUDA_ENTER(cuMipmappedArrayGetSparseProperties)
  if (sparseProperties == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const MipmappedRecord* m = st->arrays().FindMipmapped(mipmap);
  // UNMEASURED: as cuArrayGetSparseProperties (measured): an unknown handle or an array that
  // is not sparse is CUDA_ERROR_INVALID_VALUE.
  if (m == nullptr || (m->desc.Flags & CUDA_ARRAY3D_SPARSE) == 0) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::MipmapSparseProperties(*m, sparseProperties);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMipmappedArrayGetSparseProperties");
}

CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) try {
  FAKECUDA_ENTER(cuMipmappedArrayDestroy)
  const MipmappedRecord* m = st->arrays().FindMipmapped(hMipmappedArray);
  if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // UNMEASURED
  // As cuArrayDestroy: queued work on the context finishes first.
  const std::uint64_t id = m->id;
  if (CUresult e = st->SyncAll(m->ctx_id); e != CUDA_SUCCESS) return e;
  st->arrays().DestroyMipmapped(id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMipmappedArrayDestroy");
}

// --- texture objects ---

CUresult CUDAAPI cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
                                   const CUDA_TEXTURE_DESC* pTexDesc,
                                   const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) try {
  FAKECUDA_ENTER(cuTexObjectCreate)
  FAKECUDA_REQUIRE_CONTEXT()
  if (pTexObject == nullptr || pResDesc == nullptr || pTexDesc == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  }
  if (CUresult e = fakecuda::CheckResource(st, *pResDesc); e != CUDA_SUCCESS) return e;
  TextureRecord r;
  r.ctx_id = ctx->id;
  r.resource = *pResDesc;
  r.texture = *pTexDesc;
  if (pResViewDesc != nullptr) {
    r.view = *pResViewDesc;
    r.has_view = true;
  }
  *pTexObject = st->arrays().AddTexture(std::move(r));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexObjectCreate");
}

CUresult CUDAAPI cuTexObjectDestroy(CUtexObject texObject) try {
  FAKECUDA_ENTER(cuTexObjectDestroy)
  const TextureRecord* t = st->arrays().FindTexture(texObject);
  if (t == nullptr) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  st->arrays().DestroyTexture(t->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexObjectDestroy");
}

CUresult CUDAAPI cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc,
                                            CUtexObject texObject) try {
  FAKECUDA_ENTER(cuTexObjectGetResourceDesc)
  if (pResDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const TextureRecord* t = st->arrays().FindTexture(texObject);
  if (t == nullptr) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  *pResDesc = t->resource;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexObjectGetResourceDesc");
}

CUresult CUDAAPI cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) try {
  FAKECUDA_ENTER(cuTexObjectGetTextureDesc)
  if (pTexDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const TextureRecord* t = st->arrays().FindTexture(texObject);
  if (t == nullptr) return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  *pTexDesc = t->texture;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexObjectGetTextureDesc");
}

CUresult CUDAAPI cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* pResViewDesc,
                                                CUtexObject texObject) try {
  FAKECUDA_ENTER(cuTexObjectGetResourceViewDesc)
  if (pResViewDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const TextureRecord* t = st->arrays().FindTexture(texObject);
  // cuda.h: "If no resource view was set ..., the CUDA_ERROR_INVALID_VALUE is returned."
  if (t == nullptr || !t->has_view) return CUDA_ERROR_INVALID_VALUE;
  *pResViewDesc = t->view;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexObjectGetResourceViewDesc");
}

}  // extern "C"
