// Copyright 2026 The cuhal Authors.
// fakecuda/internal/tensor_map.h: the tensor-map encoders' checks and the descriptor's bytes, as
// measured on an H100 (driver 580.159.04, compute capability 9.0) by ci/gpu-probes/legacy_probe.cc
// (cases "tensormap:*"; docs/driver_facts.md, "Legacy area"). What the measurement did not reach
// follows cuda.h and says UNMEASURED.
//
// The layout (little-endian; each field read off encodings that change one parameter):
//   [0, 8)    the global address
//   [8, 10)   bit 0 im2col (also im2col wide), bits 4-6 rank - 1, bits 7-10 the data type's
//             hardware code, bits 11-12 interleave, bits 13-14 swizzle, bit 15 NaN OOB fill
//   [10]      bit 0 TF32 (the TFLOAT32 types), bits 1-2 L2 promotion
//   [12, 28)  globalStrides[i] >> 4, low 32 bits, 4 bytes each (i < rank - 1)
//   [28, 30)  their bits 32-35, a nibble each (stride 0 in the low nibble of byte 28; the others'
//             place UNMEASURED)
//   [32, 52)  globalDim[i] - 1, 4 bytes each
//   [52, 54)  elementStrides[i] - 1, 3 bits each
//   [55]      tiled: boxDim[0] - 1; im2col: channelsPerPixel - 1
//   [56, 60)  tiled: boxDim[1..4] - 1, a byte each; im2col: the lower corner (2 bytes) and the
//             upper corner (2 bytes), the offsets packed 16 / (rank - 2) bits each, the first
//             offset lowest; im2col wide: the W offsets alone
//   [60, 62)  im2col: pixelsPerColumn - 1
//   [64, 68)  the bytes one load brings: tiled, the product of boxDim[i] / elementStrides[i]
//             (rounded down) times the element size; im2col, channels x pixels x element size
//   [72, 74)  16 without swizzle; 256, 512, 1024 for the 32B, 64B, 128B swizzles
#include "fakecuda/internal/tensor_map.h"

#include <cstring>

namespace fakecuda {
namespace {

constexpr int kU4Align8 = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
constexpr int kU4Align16 = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
constexpr int kU6Align16 = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;

// Bytes of one element, times 2 (the 4-bit packed type of 8-byte alignment takes half a byte);
// 0: not a data type.
int ElementSizeX2(int type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 8;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 16;
    case kU4Align8: return 1;
    case kU4Align16:
    case kU6Align16: return 2;  // 16 values in 16 bytes (with the gaps)
    default: return 0;
  }
}

// The type's code in the descriptor (measured for types 0..12): u8 0, u16 1, u32 2, s32 3, u64 4,
// s64 5, f16 6, f32 7, f32 FTZ 8, f64 9, bf16 10; the TF32 types are f32 / f32 FTZ with the
// TF32 bit. The packed types: UNMEASURED (refused on compute capability 9.0), 11..13.
int HardwareType(int type) {
  static const int kCodes[] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8, 7, 8, 11, 12, 13};
  return type >= 0 && type < 16 ? kCodes[type] : 0;
}

bool IsFloat(int type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return true;
    default: return false;
  }
}

bool Packed(int type) { return type == kU4Align8 || type == kU4Align16 || type == kU6Align16; }
bool Packed16(int type) { return type == kU4Align16 || type == kU6Align16; }

// The swizzle span in bytes (0: none).
unsigned SwizzleSpan(int swizzle) {
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    default: return 128;
  }
}

// The checks made before the map is written (a failure leaves it untouched): measured.
CUresult CheckArrays(const TensorMapParams& p) {
  if (p.rank == 0 || p.rank > 5) return CUDA_ERROR_INVALID_VALUE;
  if (p.dims == nullptr || p.strides == nullptr || p.element_strides == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.kind == 0 && p.box == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // The real driver crashes on null corners (SIGSEGV, measured); the fake refuses them.
  if (p.kind == 1 && (p.lower == nullptr || p.upper == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    if (p.dims[i] == 0 || p.element_strides[i] == 0) return CUDA_ERROR_INVALID_VALUE;
    if (p.kind == 0 && p.box[i] == 0) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// The rules every encoder shares, checked once the map is cleared.
CUresult CheckCommon(const TensorMapParams& p, int cc_major) {
  if (ElementSizeX2(p.data_type) == 0) return CUDA_ERROR_INVALID_VALUE;
  // Measured on compute capability 9.0: the packed types and the 128B_ATOM swizzles are refused.
  if (cc_major < 10 && Packed(p.data_type)) return CUDA_ERROR_INVALID_VALUE;
  const int max_swizzle =
      cc_major < 10 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
  if (p.swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || p.swizzle > max_swizzle) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || p.interleave > CU_TENSOR_MAP_INTERLEAVE_32B) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.l2_promotion < CU_TENSOR_MAP_L2_PROMOTION_NONE ||
      p.l2_promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.oob_fill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE &&
      (p.oob_fill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA || !IsFloat(p.data_type))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const bool il32 = p.interleave == CU_TENSOR_MAP_INTERLEAVE_32B;
  // Measured: a null address is accepted; 16-byte alignment (32 with interleave 32B) is not.
  if (p.address % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  if ((il32 || Packed16(p.data_type)) && p.address % 32 != 0) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    if (p.dims[i] > (std::uint64_t{1} << 32)) return CUDA_ERROR_INVALID_VALUE;
    if (p.element_strides[i] > 8) return CUDA_ERROR_INVALID_VALUE;
  }
  if (Packed16(p.data_type) && p.dims[0] % 128 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (p.data_type == kU4Align8 && p.dims[0] % 2 != 0) return CUDA_ERROR_INVALID_VALUE;
  // Measured: a stride of 0, or smaller than the dimension below it, is accepted.
  for (std::uint32_t i = 0; i + 1 < p.rank; ++i) {
    const cuuint64_t s = p.strides[i];
    if (s % 16 != 0 || s >= (std::uint64_t{1} << 40)) return CUDA_ERROR_INVALID_VALUE;
    if ((il32 || Packed16(p.data_type)) && s % 32 != 0) return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.data_type == kU6Align16 && p.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// The inner dimension of a load, in bytes: a multiple of 16 (measured, also with interleave), and
// within the swizzle span without interleave (measured; with interleave any swizzle goes).
CUresult CheckInner(const TensorMapParams& p, std::uint64_t inner_elements) {
  const std::uint64_t bytes2 = inner_elements * static_cast<unsigned>(ElementSizeX2(p.data_type));
  if (bytes2 % 32 != 0) return CUDA_ERROR_INVALID_VALUE;
  const unsigned span = SwizzleSpan(p.swizzle);
  if (p.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && span != 0 && bytes2 / 2 > span) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult CheckTiled(const TensorMapParams& p, int cc_major) {
  if (CUresult e = CheckCommon(p, cc_major); e != CUDA_SUCCESS) return e;
  if (p.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && p.rank < 3) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    if (p.box[i] > 256) return CUDA_ERROR_INVALID_VALUE;
  }
  if (Packed16(p.data_type) && p.box[0] != 128) return CUDA_ERROR_INVALID_VALUE;
  return CheckInner(p, p.box[0]);
}

// UNMEASURED beyond the probe's reach (it crashed the real driver on a null corner array): the
// corner ranges and the channel and pixel limits follow cuda.h. Measured: a lower corner that
// leaves the box no pixel (W 16, lower 127, upper -1) is refused.
CUresult CheckIm2col(const TensorMapParams& p, int cc_major) {
  if (CUresult e = CheckCommon(p, cc_major); e != CUDA_SUCCESS) return e;
  if (p.rank < 3) return CUDA_ERROR_INVALID_VALUE;
  const int spatial = static_cast<int>(p.rank) - 2;
  const int limit = p.rank == 3 ? 32768 : p.rank == 4 ? 128 : 16;
  for (int i = 0; i < spatial; ++i) {
    if (p.lower[i] < -limit || p.lower[i] >= limit) return CUDA_ERROR_INVALID_VALUE;
    if (p.upper[i] < -limit || p.upper[i] >= limit) return CUDA_ERROR_INVALID_VALUE;
    const std::int64_t extent = static_cast<std::int64_t>(p.dims[1 + i]) + p.upper[i] - p.lower[i];
    if (extent <= 0) return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.channels == 0 || p.channels > 256) return CUDA_ERROR_INVALID_VALUE;
  if (Packed16(p.data_type) && p.channels != 128) return CUDA_ERROR_INVALID_VALUE;
  if (p.pixels == 0 || p.pixels > 1024) return CUDA_ERROR_INVALID_VALUE;
  return CheckInner(p, p.channels);
}

// Measured on compute capability 9.0 (which cuda.h says the call needs 10.0 for): it encodes,
// as im2col with the W offsets alone; mode W128 gives the same bytes as W.
CUresult CheckIm2colWide(const TensorMapParams& p, int cc_major) {
  if (CUresult e = CheckCommon(p, cc_major); e != CUDA_SUCCESS) return e;
  if (p.rank < 3) return CUDA_ERROR_INVALID_VALUE;
  if (p.lower_w < -32768 || p.lower_w > 32767 || p.upper_w < -32768 || p.upper_w > 32767) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (static_cast<std::int64_t>(p.dims[1]) + p.upper_w - p.lower_w <= 0) {
    return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED
  }
  if (p.wide_mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W &&
      p.wide_mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.channels == 0 || p.channels > 256) return CUDA_ERROR_INVALID_VALUE;
  if (Packed16(p.data_type) && p.channels != 128) return CUDA_ERROR_INVALID_VALUE;
  if (p.pixels == 0 || p.pixels > 1024) return CUDA_ERROR_INVALID_VALUE;
  return CheckInner(p, p.channels);
}

template <typename T>
void Put(unsigned char* out, std::size_t at, T v) {
  std::memcpy(out + at, &v, sizeof v);
}

// Packs `n` signed offsets into 16 bits, 16 / n bits each, the first lowest.
std::uint16_t PackCorner(const int* v, int n) {
  const int bits = 16 / n;
  std::uint32_t out = 0;
  for (int i = 0; i < n; ++i) {
    out |= (static_cast<std::uint32_t>(v[i]) & ((1u << bits) - 1)) << (bits * i);
  }
  return static_cast<std::uint16_t>(out);
}

void Write(const TensorMapParams& p, unsigned char* out) {
  const int esize2 = ElementSizeX2(p.data_type);
  Put<std::uint64_t>(out, 0, p.address);
  const int tf32 = p.data_type == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 ||
                   p.data_type == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
  const auto bits = static_cast<std::uint16_t>(
      (p.kind != 0 ? 1 : 0) | ((p.rank - 1) << 4) | (HardwareType(p.data_type) << 7) |
      (p.interleave << 11) | ((p.swizzle & 3) << 13) | (p.oob_fill != 0 ? 0x8000 : 0));
  Put<std::uint16_t>(out, 8, bits);
  out[10] = static_cast<unsigned char>(tf32 | (p.l2_promotion << 1));
  for (std::uint32_t i = 0; i + 1 < p.rank; ++i) {
    const std::uint64_t s = p.strides[i] >> 4;
    Put<std::uint32_t>(out, 12 + 4 * i, static_cast<std::uint32_t>(s));
    out[28 + i / 2] |= static_cast<unsigned char>(((s >> 32) & 0xf) << (4 * (i % 2)));
  }
  std::uint16_t estrides = 0;
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    Put<std::uint32_t>(out, 32 + 4 * i, static_cast<std::uint32_t>(p.dims[i] - 1));
    estrides |= static_cast<std::uint16_t>((p.element_strides[i] - 1) << (3 * i));
  }
  Put<std::uint16_t>(out, 52, estrides);
  std::uint64_t load_bytes2 = static_cast<unsigned>(esize2);
  if (p.kind == 0) {
    for (std::uint32_t i = 0; i < p.rank; ++i) {
      out[55 + i] = static_cast<unsigned char>(p.box[i] - 1);
      load_bytes2 *= p.box[i] / p.element_strides[i];
    }
  } else {
    out[55] = static_cast<unsigned char>(p.channels - 1);
    const int spatial = static_cast<int>(p.rank) - 2;
    if (p.kind == 1) {
      Put<std::uint16_t>(out, 56, PackCorner(p.lower, spatial));
      Put<std::uint16_t>(out, 58, PackCorner(p.upper, spatial));
    } else {
      const int lower[3] = {p.lower_w, 0, 0};
      const int upper[3] = {p.upper_w, 0, 0};
      Put<std::uint16_t>(out, 56, PackCorner(lower, spatial));
      Put<std::uint16_t>(out, 58, PackCorner(upper, spatial));
    }
    Put<std::uint16_t>(out, 60, static_cast<std::uint16_t>(p.pixels - 1));
    load_bytes2 *= std::uint64_t{p.channels} * p.pixels;
  }
  Put<std::uint32_t>(out, 64, static_cast<std::uint32_t>(load_bytes2 / 2));
  static const std::uint16_t kSwizzleField[] = {0x10, 0x100, 0x200, 0x400, 0x400, 0x400, 0x400};
  Put<std::uint16_t>(out, 72, kSwizzleField[p.swizzle]);
}

}  // namespace

CUresult EncodeTensorMap(const TensorMapParams& p, int cc_major, unsigned char* map) {
  if (map == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = CheckArrays(p); e != CUDA_SUCCESS) return e;
  std::memset(map, 0, 128);
  const CUresult r = p.kind == 0   ? CheckTiled(p, cc_major)
                     : p.kind == 1 ? CheckIm2col(p, cc_major)
                                   : CheckIm2colWide(p, cc_major);
  if (r != CUDA_SUCCESS) return r;
  Write(p, map);
  return CUDA_SUCCESS;
}

CUresult ReplaceTensorMapAddress(unsigned char* map, std::uintptr_t address) {
  if (map == nullptr || address == 0 || address % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  Put<std::uint64_t>(map, 0, address);
  return CUDA_SUCCESS;
}

}  // namespace fakecuda
