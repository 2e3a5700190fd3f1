// Copyright 2026 The cuhal Authors.
// fakecuda/internal/tensor_map.h: the documented validity rules of the tensor-map encoders, then
// the descriptor's bytes.
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

// The rules every encoder shares (cuda.h's lists, in its order).
CUresult CheckCommon(const TensorMapParams& p) {
  const int esize2 = ElementSizeX2(p.data_type);
  if (esize2 == 0) return CUDA_ERROR_INVALID_VALUE;
  if (p.interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || p.interleave > CU_TENSOR_MAP_INTERLEAVE_32B) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || p.swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B) {
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
  // Address.
  if (p.address == 0 || p.address % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  if ((il32 || Packed16(p.data_type)) && p.address % 32 != 0) return CUDA_ERROR_INVALID_VALUE;
  // Dimensions.
  if (p.dims == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    if (p.dims[i] == 0 || p.dims[i] > (std::uint64_t{1} << 32)) return CUDA_ERROR_INVALID_VALUE;
  }
  if (Packed16(p.data_type) && p.dims[0] % 128 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (p.data_type == kU4Align8 && p.dims[0] % 2 != 0) return CUDA_ERROR_INVALID_VALUE;
  // Strides.
  if (p.rank > 1 && p.strides == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint32_t i = 0; i + 1 < p.rank; ++i) {
    const cuuint64_t s = p.strides[i];
    if (s % 16 != 0 || s >= (std::uint64_t{1} << 40)) return CUDA_ERROR_INVALID_VALUE;
    if ((il32 || Packed16(p.data_type)) && s % 32 != 0) return CUDA_ERROR_INVALID_VALUE;
  }
  // Element strides.
  if (p.element_strides == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    if (p.element_strides[i] == 0 || p.element_strides[i] > 8) return CUDA_ERROR_INVALID_VALUE;
  }
  // Interleave and swizzle.
  if (il32 && p.swizzle != CU_TENSOR_MAP_SWIZZLE_32B) return CUDA_ERROR_INVALID_VALUE;
  if (p.data_type == kU6Align16 && p.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (Packed16(p.data_type)) {
    const int s = p.swizzle;
    const bool ok = s == CU_TENSOR_MAP_SWIZZLE_NONE || s == CU_TENSOR_MAP_SWIZZLE_128B ||
                    s == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B ||
                    (p.data_type == kU6Align16 && s == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B);
    if (!ok) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// The inner dimension of the box in bytes against the swizzle span (interleave none only).
CUresult CheckInner(const TensorMapParams& p, std::uint64_t inner_elements) {
  const std::uint64_t bytes = inner_elements * static_cast<unsigned>(ElementSizeX2(p.data_type)) / 2;
  const unsigned span = SwizzleSpan(p.swizzle);
  if (p.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && span != 0 && bytes > span) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult CheckTiled(const TensorMapParams& p) {
  if (p.rank == 0 || p.rank > 5) return CUDA_ERROR_INVALID_VALUE;
  if (p.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && p.rank < 3) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = CheckCommon(p); e != CUDA_SUCCESS) return e;
  if (p.box == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    if (p.box[i] == 0 || p.box[i] > 256) return CUDA_ERROR_INVALID_VALUE;
  }
  const int esize2 = ElementSizeX2(p.data_type);
  if (p.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE &&
      (std::uint64_t{p.box[0]} * static_cast<unsigned>(esize2)) % 32 != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (Packed16(p.data_type) && p.box[0] != 128) return CUDA_ERROR_INVALID_VALUE;
  return CheckInner(p, p.box[0]);
}

CUresult CheckIm2col(const TensorMapParams& p) {
  if (p.rank < 3 || p.rank > 5) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = CheckCommon(p); e != CUDA_SUCCESS) return e;
  if (p.lower == nullptr || p.upper == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const int spatial = static_cast<int>(p.rank) - 2;
  const int limit = p.rank == 3 ? 32768 : p.rank == 4 ? 128 : 16;
  for (int i = 0; i < spatial; ++i) {
    if (p.lower[i] < -limit || p.lower[i] >= limit) return CUDA_ERROR_INVALID_VALUE;
    if (p.upper[i] < -limit || p.upper[i] >= limit) return CUDA_ERROR_INVALID_VALUE;
    // The box along dimension i + 1 (W, H, D from the innermost) must not be empty.
    const std::int64_t extent = static_cast<std::int64_t>(p.dims[spatial - i]) +
                                p.upper[i] - p.lower[i];
    if (extent <= 0) return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.channels == 0 || p.channels > 256) return CUDA_ERROR_INVALID_VALUE;
  if (Packed16(p.data_type) && p.channels != 128) return CUDA_ERROR_INVALID_VALUE;
  if (p.pixels == 0 || p.pixels > 1024) return CUDA_ERROR_INVALID_VALUE;
  return CheckInner(p, p.channels);
}

CUresult CheckIm2colWide(const TensorMapParams& p, int cc_major) {
  if (cc_major < 10) return CUDA_ERROR_NOT_SUPPORTED;  // cuda.h: compute capability 10.0 and up
  if (p.rank < 3 || p.rank > 5) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = CheckCommon(p); e != CUDA_SUCCESS) return e;
  if (p.lower_w < -32768 || p.lower_w > 32767 || p.upper_w < -32768 || p.upper_w > 32767) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (static_cast<std::int64_t>(p.dims[1]) + p.upper_w - p.lower_w <= 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.wide_mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W &&
      p.wide_mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p.channels == 0 || p.channels > 256) return CUDA_ERROR_INVALID_VALUE;
  if (Packed16(p.data_type) && p.channels != 128) return CUDA_ERROR_INVALID_VALUE;
  if (p.wide_mode == CU_TENSOR_MAP_IM2COL_WIDE_MODE_W && (p.pixels == 0 || p.pixels > 1024)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const int s = p.swizzle;
  if (s == CU_TENSOR_MAP_SWIZZLE_NONE || s == CU_TENSOR_MAP_SWIZZLE_32B) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CheckInner(p, p.channels);
}

template <typename T>
void Put(unsigned char* out, std::size_t at, T v) {
  std::memcpy(out + at, &v, sizeof v);
}

// The descriptor's bytes. PROVISIONAL layout (the H200's not yet read off): the address at 0,
// the enums, dims, strides and box fields after it.
void Write(const TensorMapParams& p, unsigned char* out) {
  std::memset(out, 0, 128);
  Put<std::uint64_t>(out, 0, p.address);
  out[8] = static_cast<unsigned char>(p.data_type);
  out[9] = static_cast<unsigned char>(p.rank);
  out[10] = static_cast<unsigned char>(p.interleave);
  out[11] = static_cast<unsigned char>(p.swizzle);
  out[12] = static_cast<unsigned char>(p.l2_promotion);
  out[13] = static_cast<unsigned char>(p.oob_fill);
  out[14] = static_cast<unsigned char>(p.kind);
  out[15] = static_cast<unsigned char>(p.wide_mode);
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    Put<std::uint32_t>(out, 16 + 4 * i, static_cast<std::uint32_t>(p.dims[i] - 1));
    out[36 + i] = static_cast<unsigned char>(p.element_strides[i] - 1);
    if (p.kind == 0) out[41 + i] = static_cast<unsigned char>(p.box[i] - 1);
  }
  for (std::uint32_t i = 0; i + 1 < p.rank; ++i) Put<std::uint64_t>(out, 48 + 8 * i, p.strides[i] >> 4);
  if (p.kind == 1) {
    for (std::uint32_t i = 0; i + 2 < p.rank; ++i) {
      Put<std::int16_t>(out, 80 + 2 * i, static_cast<std::int16_t>(p.lower[i]));
      Put<std::int16_t>(out, 86 + 2 * i, static_cast<std::int16_t>(p.upper[i]));
    }
  }
  if (p.kind == 2) {
    Put<std::int16_t>(out, 80, static_cast<std::int16_t>(p.lower_w));
    Put<std::int16_t>(out, 86, static_cast<std::int16_t>(p.upper_w));
  }
  Put<std::uint16_t>(out, 92, static_cast<std::uint16_t>(p.channels));
  Put<std::uint16_t>(out, 94, static_cast<std::uint16_t>(p.pixels));
}

}  // namespace

CUresult EncodeTensorMap(const TensorMapParams& p, int cc_major, unsigned char* out) {
  CUresult r = p.kind == 0   ? CheckTiled(p)
               : p.kind == 1 ? CheckIm2col(p)
                             : CheckIm2colWide(p, cc_major);
  if (r != CUDA_SUCCESS) return r;
  Write(p, out);
  return CUDA_SUCCESS;
}

CUresult ReplaceTensorMapAddress(unsigned char* map, std::uintptr_t address) {
  if (address == 0 || address % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  const int type = map[8];
  const int interleave = map[10];
  if ((interleave == CU_TENSOR_MAP_INTERLEAVE_32B || Packed16(type)) && address % 32 != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Put<std::uint64_t>(map, 0, address);
  return CUDA_SUCCESS;
}

}  // namespace fakecuda
