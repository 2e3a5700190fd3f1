// Copyright 2026 The cuhal Authors.
// The tensor-map encoders behind cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col,
// cuTensorMapEncodeIm2colWide and cuTensorMapReplaceAddress: pure host-side functions that check
// the parameters against cuda.h's documented rules (each broken rule: CUDA_ERROR_INVALID_VALUE)
// and write the 128-byte descriptor. The fake runs no TMA instruction; the bytes follow the
// layout read off the H100's encodings (driver 580; docs/driver_facts.md, "Legacy area"), so that
// a program comparing or hashing descriptors sees what it would on the real driver. No driver
// state.
#ifndef CUHAL_FAKECUDA_INTERNAL_TENSOR_MAP_H_
#define CUHAL_FAKECUDA_INTERNAL_TENSOR_MAP_H_

#include <cuda.h>

#include <cstdint>

namespace fakecuda {

// What the three encoders share (im2col's and im2col-wide's box is described by their own
// fields below).
struct TensorMapParams {
  int kind = 0;  // 0 tiled, 1 im2col, 2 im2col wide
  int data_type = 0;
  std::uint32_t rank = 0;
  std::uintptr_t address = 0;
  const cuuint64_t* dims = nullptr;
  const cuuint64_t* strides = nullptr;  // rank - 1 of them
  const cuuint32_t* box = nullptr;      // tiled
  const cuuint32_t* element_strides = nullptr;
  const int* lower = nullptr;  // im2col: rank - 2 corner offsets each
  const int* upper = nullptr;
  int lower_w = 0;  // im2col wide
  int upper_w = 0;
  std::uint32_t channels = 0;  // im2col, im2col wide
  std::uint32_t pixels = 0;
  int wide_mode = 0;
  int interleave = 0;
  int swizzle = 0;
  int l2_promotion = 0;
  int oob_fill = 0;
};

// Checks `p` as the H100 (driver 580) does and, when valid, writes the descriptor into `map`
// (128 bytes, the H100's layout). The checks that leave the map untouched come first (null
// arrays, rank out of 1..5, zero dims, box dims or element strides); then the map is cleared
// and the rest are checked (a failure leaves it zeroed). `cc_major`: the compute capability of
// the current context's device (the packed data types and the 128B_ATOM swizzles need 10).
CUresult EncodeTensorMap(const TensorMapParams& p, int cc_major, unsigned char* map);

// cuTensorMapReplaceAddress: a null or not 16-byte aligned address is CUDA_ERROR_INVALID_VALUE;
// else the address is written over the map's.
CUresult ReplaceTensorMapAddress(unsigned char* map, std::uintptr_t address);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_TENSOR_MAP_H_
