// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/array_model.h"

#include <algorithm>
#include <iterator>
#include <sstream>

#include "fakecuda/internal/memory_map.h"

namespace fakecuda {
namespace {

// The flags cuArray3DCreate accepts. Measured 2026-12-06, H100 driver 580.159.04 (array_probe
// "create3d"): CUDA_ARRAY3D_DEPTH_TEXTURE and CUDA_ARRAY3D_COLOR_ATTACHMENT are refused
// (CUDA_ERROR_INVALID_VALUE) on every shape tried, undefined bits 0x200 and 0x1000 are refused,
// and bit 31 (0x80000000) is accepted.
constexpr unsigned kAcceptedFlags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST |
                                    CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_TEXTURE_GATHER |
                                    CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING |
                                    CUDA_ARRAY3D_VIDEO_ENCODE_DECODE | 0x80000000u;

// Block-linear layout (measured through cuArrayGetMemoryRequirements and cuMemGetInfo,
// 2026-12-06, H100 driver 580.159.04, array_probe "memreq" and "meminfo"): rows are padded to
// 64 bytes, the row count to the block height (a power of two from 8 to 128 rows covering the
// height; a 1D array takes 8 rows), each layer is one such block of rows.
constexpr std::size_t kGobWidth = 64;
constexpr std::size_t kGobHeight = 8;
constexpr std::size_t kMaxBlockHeight = 128;
// Arrays smaller than this share device pages of this size; larger ones take whole pages.
constexpr std::size_t kPage = std::size_t{2} << 20;

std::size_t RoundUp(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

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
  // Formats whose name fixes the channel count (the normalized and the block-compressed ones):
  // measured 2026-12-06, H100 driver 580.159.04 (array_probe "formats"): each is accepted with
  // exactly that count and refused with any other. Block-compressed formats answer the bytes of
  // one 4x4 block.
  struct Fixed {
    CUarray_format format;
    unsigned channels;
    std::size_t bytes;
  };
  static constexpr Fixed kFixed[] = {
      {CU_AD_FORMAT_UNORM_INT8X1, 1, 1},   {CU_AD_FORMAT_UNORM_INT8X2, 2, 2},
      {CU_AD_FORMAT_UNORM_INT8X4, 4, 4},   {CU_AD_FORMAT_UNORM_INT16X1, 1, 2},
      {CU_AD_FORMAT_UNORM_INT16X2, 2, 4},  {CU_AD_FORMAT_UNORM_INT16X4, 4, 8},
      {CU_AD_FORMAT_SNORM_INT8X1, 1, 1},   {CU_AD_FORMAT_SNORM_INT8X2, 2, 2},
      {CU_AD_FORMAT_SNORM_INT8X4, 4, 4},   {CU_AD_FORMAT_SNORM_INT16X1, 1, 2},
      {CU_AD_FORMAT_SNORM_INT16X2, 2, 4},  {CU_AD_FORMAT_SNORM_INT16X4, 4, 8},
      {CU_AD_FORMAT_UNORM_INT_101010_2, 4, 4},
      {CU_AD_FORMAT_BC1_UNORM, 4, 8},      {CU_AD_FORMAT_BC1_UNORM_SRGB, 4, 8},
      {CU_AD_FORMAT_BC2_UNORM, 4, 16},     {CU_AD_FORMAT_BC2_UNORM_SRGB, 4, 16},
      {CU_AD_FORMAT_BC3_UNORM, 4, 16},     {CU_AD_FORMAT_BC3_UNORM_SRGB, 4, 16},
      {CU_AD_FORMAT_BC4_UNORM, 1, 8},      {CU_AD_FORMAT_BC4_SNORM, 1, 8},
      {CU_AD_FORMAT_BC5_UNORM, 2, 16},     {CU_AD_FORMAT_BC5_SNORM, 2, 16},
      {CU_AD_FORMAT_BC6H_UF16, 3, 16},     {CU_AD_FORMAT_BC6H_SF16, 3, 16},
      {CU_AD_FORMAT_BC7_UNORM, 4, 16},     {CU_AD_FORMAT_BC7_UNORM_SRGB, 4, 16},
  };
  for (const Fixed& f : kFixed) {
    if (f.format == format) return channels == f.channels ? f.bytes : 0;
  }
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

bool ArrayModel::BlockCompressed(CUarray_format format) {
  return format >= CU_AD_FORMAT_BC1_UNORM && format <= CU_AD_FORMAT_BC7_UNORM_SRGB;
}

CUresult ArrayModel::Validate(const DeviceProfile& p, const CUDA_ARRAY3D_DESCRIPTOR& d) {
  if (d.Flags & ~kAcceptedFlags) return CUDA_ERROR_INVALID_VALUE;
  if (ElementSize(d.Format, d.NumChannels) == 0) return CUDA_ERROR_INVALID_VALUE;
  if (d.Width == 0) return CUDA_ERROR_INVALID_VALUE;
  // Measured (array_probe "formats"): a block-compressed 1D array is refused.
  if (BlockCompressed(d.Format) && d.Height == 0) return CUDA_ERROR_INVALID_VALUE;
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
    // Measured (array_probe "create3d"): a layered array of 0 layers is refused.
    if (d.Depth == 0) return CUDA_ERROR_INVALID_VALUE;
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
  const bool bc = BlockCompressed(d.Format);
  const std::size_t units = bc ? (d.Width + 3) / 4 : d.Width;
  const std::size_t height = bc ? (d.Height + 3) / 4 : d.Height;
  std::size_t block_height = kGobHeight;
  while (block_height < height && block_height < kMaxBlockHeight) block_height *= 2;
  const std::size_t row = RoundUp(units * element_size, kGobWidth);
  const std::size_t rows = RoundUp(std::max<std::size_t>(height, 1), block_height);
  return row * rows * std::max<std::size_t>(d.Depth, 1);
}

std::size_t ArrayModel::MemoryRequirement(const CUDA_ARRAY3D_DESCRIPTOR& d,
                                          std::size_t element_size) {
  return RoundUp(Footprint(d, element_size), kAlignment);
}

std::size_t ArrayModel::SharedPages(std::size_t small) { return RoundUp(small, kPage); }

SparseTile ArrayModel::TileOf(const CUDA_ARRAY3D_DESCRIPTOR& desc, std::size_t element_size) {
  static constexpr SparseTile k2D[] = {
      {256, 256, 1}, {256, 128, 1}, {128, 128, 1}, {128, 64, 1}, {64, 64, 1}};
  static constexpr SparseTile k3D[] = {
      {64, 32, 32}, {32, 32, 32}, {32, 32, 16}, {32, 16, 16}, {16, 16, 16}};
  std::size_t i = 0;
  while (i < 4 && (std::size_t{1} << i) < element_size) ++i;
  const bool three_d = desc.Depth != 0 && (desc.Flags & CUDA_ARRAY3D_LAYERED) == 0;
  return three_d ? k3D[i] : k2D[i];
}

CUDA_ARRAY3D_DESCRIPTOR ArrayModel::LevelOf(const CUDA_ARRAY3D_DESCRIPTOR& desc, unsigned level) {
  auto half = [level](std::size_t n) {
    if (n == 0) return std::size_t{0};
    return level >= 64 ? std::size_t{1} : std::max<std::size_t>(n >> level, 1);
  };
  CUDA_ARRAY3D_DESCRIPTOR d = desc;
  d.Width = half(desc.Width);
  d.Height = half(desc.Height);
  const bool layers = (desc.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
  d.Depth = layers ? desc.Depth : half(desc.Depth);
  return d;
}

CUresult ArrayModel::Create(std::uint64_t ctx_id, int device, const CUDA_ARRAY3D_DESCRIPTOR& desc,
                            const char* created_by, CUarray* out) {
  st_->mu.AssertHeld();
  ArrayRecord r;
  const bool bc = BlockCompressed(desc.Format);
  r.element_size = ElementSize(desc.Format, desc.NumChannels);
  r.row_bytes = (bc ? (desc.Width + 3) / 4 : desc.Width) * r.element_size;
  r.rows = std::max<std::size_t>(bc ? (desc.Height + 3) / 4 : desc.Height, 1);
  r.layers = std::max<std::size_t>(desc.Depth, 1);
  r.bytes = r.row_bytes * r.rows * r.layers;
  r.footprint = Footprint(desc, r.element_size);
  const bool unbacked = (desc.Flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)) != 0;
  std::size_t& small = small_bytes_[device];
  std::size_t take = 0;
  if (!unbacked && r.footprint < kPage) {
    r.shared_pages = true;
    take = SharedPages(small + r.footprint) - SharedPages(small);
  } else if (!unbacked) {
    r.charged = RoundUp(r.footprint, kPage);
    take = r.charged;
  }
  Device& dev = st_->device(device);
  if (take > dev.free_bytes()) return CUDA_ERROR_OUT_OF_MEMORY;
  r.backing = std::make_shared<ArrayBacking>(r.bytes);
  if (r.backing->data() == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  r.id = st_->NewId();
  r.ctx_id = ctx_id;
  r.device = device;
  r.desc = desc;
  r.created_by = created_by;
  if (r.shared_pages) small += r.footprint;
  dev.bytes_in_use += take;
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
  const ArrayRecord& r = it->second;
  Device& dev = st_->device(r.device);
  std::size_t give = r.charged;
  if (r.shared_pages) {
    std::size_t& small = small_bytes_[r.device];
    const std::size_t before = SharedPages(small);
    small -= std::min(small, r.footprint);
    give = before - SharedPages(small);
  }
  dev.bytes_in_use -= std::min(dev.bytes_in_use, give);
  arrays_.erase(it);
}

CUresult ArrayModel::CreateMipmapped(std::uint64_t ctx_id, int device,
                                     const CUDA_ARRAY3D_DESCRIPTOR& desc, unsigned levels,
                                     const char* created_by, CUmipmappedArray* out) {
  st_->mu.AssertHeld();
  MipmappedRecord m;
  m.id = st_->NewId();
  m.ctx_id = ctx_id;
  m.device = device;
  m.desc = desc;
  m.element_size = ElementSize(desc.Format, desc.NumChannels);
  m.created_by = created_by;
  for (unsigned l = 0; l < levels; ++l) {
    CUarray level = nullptr;
    if (CUresult e = Create(ctx_id, device, LevelOf(desc, l), created_by, &level);
        e != CUDA_SUCCESS) {
      for (CUarray made : m.levels) Destroy(DecodeHandle(HandleKind::kArray, made));
      return e;
    }
    arrays_.at(DecodeHandle(HandleKind::kArray, level)).mipmap_id = m.id;
    m.levels.push_back(level);
  }
  *out = EncodeHandle<CUmipmappedArray>(HandleKind::kMipmappedArray, m.id);
  const std::uint64_t id = m.id;
  mipmapped_.emplace(id, std::move(m));
  return CUDA_SUCCESS;
}

MipmappedRecord* ArrayModel::FindMipmapped(CUmipmappedArray handle) {
  const std::uint64_t id = DecodeHandle(HandleKind::kMipmappedArray, handle);
  if (id == 0) return nullptr;
  auto it = mipmapped_.find(id);
  return it == mipmapped_.end() ? nullptr : &it->second;
}

void ArrayModel::DestroyMipmapped(std::uint64_t id) {
  st_->mu.AssertHeld();
  auto it = mipmapped_.find(id);
  if (it == mipmapped_.end()) return;
  for (CUarray level : it->second.levels) Destroy(DecodeHandle(HandleKind::kArray, level));
  mipmapped_.erase(it);
}

CUtexObject ArrayModel::AddTexture(TextureRecord record) {
  st_->mu.AssertHeld();
  record.id = st_->NewId();
  const std::uint64_t id = record.id;
  textures_.emplace(id, std::move(record));
  return (id << 4) | static_cast<std::uint64_t>(HandleKind::kTexObject);
}

TextureRecord* ArrayModel::FindTexture(CUtexObject handle) {
  if ((handle & 0xF) != static_cast<std::uint64_t>(HandleKind::kTexObject)) return nullptr;
  auto it = textures_.find(handle >> 4);
  return it == textures_.end() ? nullptr : &it->second;
}

void ArrayModel::DestroyTexture(std::uint64_t id) { textures_.erase(id); }

void ArrayModel::OnContextTeardown(std::uint64_t ctx_id) {
  for (auto it = textures_.begin(); it != textures_.end();) {
    it = it->second.ctx_id == ctx_id ? textures_.erase(it) : std::next(it);
  }
  for (auto it = mipmapped_.begin(); it != mipmapped_.end();) {
    const std::uint64_t id = it->first;
    const bool doomed = it->second.ctx_id == ctx_id;
    ++it;
    if (doomed) DestroyMipmapped(id);
  }
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
       << std::dec << ", " << r.footprint << " bytes of device " << r.device << " (" << r.created_by
       << ")";
    if (r.mipmap_id != 0) os << ", level of mipmapped array " << r.mipmap_id;
    os << "\n";
  }
  for (const auto& [id, m] : mipmapped_) {
    os << "mipmapped array " << id << ": " << m.levels.size() << " levels (" << m.created_by
       << ")\n";
  }
  return os.str();
}

}  // namespace fakecuda
