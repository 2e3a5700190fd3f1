// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/array_model.h"

#include <algorithm>
#include <sstream>

#include "fakecuda/internal/memory_map.h"

namespace fakecuda {
namespace {

constexpr unsigned kKnownFlags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST |
                                 CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_TEXTURE_GATHER |
                                 CUDA_ARRAY3D_DEPTH_TEXTURE | CUDA_ARRAY3D_COLOR_ATTACHMENT |
                                 CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING |
                                 CUDA_ARRAY3D_VIDEO_ENCODE_DECODE;

std::size_t Limit(const DeviceProfile& p, CUdevice_attribute a) {
  return static_cast<std::size_t>(std::max(p.Attribute(a), 0));
}

}  // namespace

ArrayBacking::ArrayBacking(std::size_t size) : size_(size) {
  data_ = MemoryMap::AllocateBacking(std::max<std::size_t>(size, 1), &mmapped_, &mapped_size_);
}

ArrayBacking::~ArrayBacking() {
  if (data_ != nullptr) MemoryMap::FreeBacking(data_, mmapped_, mapped_size_);
}

std::size_t ArrayModel::ElementSize(CUarray_format format, unsigned channels) {
  std::size_t channel_bytes = 0;
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
      channel_bytes = 1;
      break;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      channel_bytes = 2;
      break;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      channel_bytes = 4;
      break;
    default:
      return 0;
  }
  if (channels != 1 && channels != 2 && channels != 4) return 0;
  return channel_bytes * channels;
}

CUresult ArrayModel::Validate(const DeviceProfile& p, const CUDA_ARRAY3D_DESCRIPTOR& d) {
  if (d.Flags & ~kKnownFlags) return CUDA_ERROR_INVALID_VALUE;
  if (ElementSize(d.Format, d.NumChannels) == 0) return CUDA_ERROR_INVALID_VALUE;
  if (d.Width == 0) return CUDA_ERROR_INVALID_VALUE;
  const bool layered = (d.Flags & CUDA_ARRAY3D_LAYERED) != 0;
  const bool cubemap = (d.Flags & CUDA_ARRAY3D_CUBEMAP) != 0;
  const bool surface = (d.Flags & CUDA_ARRAY3D_SURFACE_LDST) != 0;
  const bool gather = (d.Flags & CUDA_ARRAY3D_TEXTURE_GATHER) != 0;
  auto within = [&](std::size_t w, std::size_t h, std::size_t dp, CUdevice_attribute aw,
                    CUdevice_attribute ah, CUdevice_attribute ad) {
    return w <= Limit(p, aw) && (h == 0 || h <= Limit(p, ah)) && (dp == 0 || dp <= Limit(p, ad));
  };
  using A = CUdevice_attribute;
  if (cubemap) {
    if (d.Width != d.Height) return CUDA_ERROR_INVALID_VALUE;
    if (layered) {
      if (d.Depth == 0 || d.Depth % 6 != 0) return CUDA_ERROR_INVALID_VALUE;
      if (!within(d.Width, d.Height, d.Depth,
                  surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH
                          : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH,
                  surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH
                          : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH,
                  surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS
                          : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS)) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      return CUDA_SUCCESS;
    }
    if (d.Depth != 6) return CUDA_ERROR_INVALID_VALUE;
    const A w = surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH
                        : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH;
    return d.Width <= Limit(p, w) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  if (layered) {
    if (d.Height == 0) {  // 1D layered
      return within(d.Width, 0, d.Depth,
                    surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH
                            : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH,
                    surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS
                            : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS)
                 ? CUDA_SUCCESS
                 : CUDA_ERROR_INVALID_VALUE;
    }
    return within(d.Width, d.Height, d.Depth,
                  surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH
                          : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH,
                  surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT
                          : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT,
                  surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS
                          : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS)
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
  }
  if (d.Height == 0) {
    if (d.Depth != 0) return CUDA_ERROR_INVALID_VALUE;
    if (gather) return CUDA_ERROR_INVALID_VALUE;
    const A w = surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH
                        : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH;
    return d.Width <= Limit(p, w) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  if (d.Depth == 0) {  // 2D
    if (gather) {
      return within(d.Width, d.Height, 0, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT)
                 ? CUDA_SUCCESS
                 : CUDA_ERROR_INVALID_VALUE;
    }
    return within(d.Width, d.Height, 0,
                  surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH
                          : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH,
                  surface ? CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT
                          : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT,
                  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT)
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
  }
  // 3D.
  if (gather) return CUDA_ERROR_INVALID_VALUE;
  if (surface) {
    return within(d.Width, d.Height, d.Depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH,
                  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT,
                  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH)
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
  }
  const bool primary =
      within(d.Width, d.Height, d.Depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH,
             CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT,
             CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
  const bool alternate =
      within(d.Width, d.Height, d.Depth, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE,
             CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE,
             CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
  return primary || alternate ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

std::size_t ArrayModel::Footprint(const CUDA_ARRAY3D_DESCRIPTOR& d, std::size_t element_size) {
  const std::size_t bytes = d.Width * element_size * std::max<std::size_t>(d.Height, 1) *
                            std::max<std::size_t>(d.Depth, 1);
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

CUresult ArrayModel::Create(std::uint64_t ctx_id, int device, const CUDA_ARRAY3D_DESCRIPTOR& desc,
                            const char* created_by, CUarray* out) {
  st_->mu.AssertHeld();
  ArrayRecord r;
  r.element_size = ElementSize(desc.Format, desc.NumChannels);
  r.row_bytes = desc.Width * r.element_size;
  r.rows = std::max<std::size_t>(desc.Height, 1);
  r.layers = std::max<std::size_t>(desc.Depth, 1);
  r.bytes = r.row_bytes * r.rows * r.layers;
  r.charged = Footprint(desc, r.element_size);
  Device& dev = st_->device(device);
  if (r.charged > dev.free_bytes()) return CUDA_ERROR_OUT_OF_MEMORY;
  r.backing = std::make_shared<ArrayBacking>(r.bytes);
  if (r.backing->data() == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  r.id = st_->NewId();
  r.ctx_id = ctx_id;
  r.device = device;
  r.desc = desc;
  r.created_by = created_by;
  dev.bytes_in_use += r.charged;
  *out = EncodeHandle<CUarray>(HandleKind::kArray, r.id);
  const std::uint64_t id = r.id;
  arrays_.emplace(id, std::move(r));
  return CUDA_SUCCESS;
}

ArrayRecord* ArrayModel::Find(CUarray handle) {
  const std::uint64_t id = DecodeHandle(HandleKind::kArray, handle);
  if (id == 0) return nullptr;
  auto it = arrays_.find(id);
  return it == arrays_.end() ? nullptr : &it->second;
}

void ArrayModel::Destroy(std::uint64_t id) {
  st_->mu.AssertHeld();
  auto it = arrays_.find(id);
  if (it == arrays_.end()) return;
  Device& dev = st_->device(it->second.device);
  dev.bytes_in_use -= std::min(dev.bytes_in_use, it->second.charged);
  arrays_.erase(it);
}

void ArrayModel::OnContextTeardown(std::uint64_t ctx_id) {
  for (auto it = arrays_.begin(); it != arrays_.end();) {
    const std::uint64_t id = it->first;
    const bool doomed = it->second.ctx_id == ctx_id;
    ++it;
    if (doomed) Destroy(id);
  }
}

void ArrayModel::CountLive(Inventory* inv) const {
  inv->arrays += static_cast<int>(arrays_.size());
}

std::string ArrayModel::Describe() const {
  std::ostringstream os;
  for (const auto& [id, r] : arrays_) {
    os << "array " << id << ": " << r.desc.Width << "x" << r.desc.Height << "x" << r.desc.Depth
       << ", " << r.element_size << "-byte elements, flags 0x" << std::hex << r.desc.Flags
       << std::dec << ", " << r.charged << " bytes of device " << r.device << " ("
       << r.created_by << ")\n";
  }
  return os.str();
}

}  // namespace fakecuda
