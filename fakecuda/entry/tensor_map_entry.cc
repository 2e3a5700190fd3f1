// Copyright 2026 The cuhal Authors.
// Entry points: the tensor-map encoders (cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col,
// cuTensorMapEncodeIm2colWide) and cuTensorMapReplaceAddress. Host-side: the checks and the
// descriptor bytes are fakecuda/internal/tensor_map.h's; here, the driver's state. Measured on
// an H100 (driver 580.159.04, legacy_probe "tensormap:*"): each needs cuInit
// (CUDA_ERROR_NOT_INITIALIZED) and a current context (CUDA_ERROR_INVALID_CONTEXT, checked before
// any argument), whose device's compute capability decides the data types and swizzles allowed.
// A map that is not 64-byte aligned is accepted. The real driver crashes on a null map given to
// cuTensorMapReplaceAddress; the fake answers CUDA_ERROR_INVALID_VALUE.
#include <cstdint>
#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/tensor_map.h"

namespace fakecuda {
namespace {

CUresult Encode(DriverState* st, CUtensorMap* m, const TensorMapParams& p) CUHAL_REQUIRES(st->mu) {
  FAKECUDA_REQUIRE_CONTEXT()
  const int cc = st->profile(ctx->device).Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  return EncodeTensorMap(p, cc, reinterpret_cast<unsigned char*>(m));
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                        cuuint32_t tensorRank, void* globalAddress,
                                        const cuuint64_t* globalDim,
                                        const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
                                        const cuuint32_t* elementStrides,
                                        CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle,
                                        CUtensorMapL2promotion l2Promotion,
                                        CUtensorMapFloatOOBfill oobFill) try {
  FAKECUDA_ENTER(cuTensorMapEncodeTiled)
  fakecuda::TensorMapParams p;
  p.kind = 0;
  p.data_type = fakecuda::EnumBits(tensorDataType);
  p.rank = tensorRank;
  p.address = reinterpret_cast<std::uintptr_t>(globalAddress);
  p.dims = globalDim;
  p.strides = globalStrides;
  p.box = boxDim;
  p.element_strides = elementStrides;
  p.interleave = fakecuda::EnumBits(interleave);
  p.swizzle = fakecuda::EnumBits(swizzle);
  p.l2_promotion = fakecuda::EnumBits(l2Promotion);
  p.oob_fill = fakecuda::EnumBits(oobFill);
  return fakecuda::Encode(st, tensorMap, p);
} catch (...) {
  return ::fakecuda::EntryFailed("cuTensorMapEncodeTiled");
}

CUresult CUDAAPI cuTensorMapEncodeIm2col(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
    void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
    const int* pixelBoxLowerCorner, const int* pixelBoxUpperCorner, cuuint32_t channelsPerPixel,
    cuuint32_t pixelsPerColumn, const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) try {
  FAKECUDA_ENTER(cuTensorMapEncodeIm2col)
  fakecuda::TensorMapParams p;
  p.kind = 1;
  p.data_type = fakecuda::EnumBits(tensorDataType);
  p.rank = tensorRank;
  p.address = reinterpret_cast<std::uintptr_t>(globalAddress);
  p.dims = globalDim;
  p.strides = globalStrides;
  p.lower = pixelBoxLowerCorner;
  p.upper = pixelBoxUpperCorner;
  p.channels = channelsPerPixel;
  p.pixels = pixelsPerColumn;
  p.element_strides = elementStrides;
  p.interleave = fakecuda::EnumBits(interleave);
  p.swizzle = fakecuda::EnumBits(swizzle);
  p.l2_promotion = fakecuda::EnumBits(l2Promotion);
  p.oob_fill = fakecuda::EnumBits(oobFill);
  return fakecuda::Encode(st, tensorMap, p);
} catch (...) {
  return ::fakecuda::EntryFailed("cuTensorMapEncodeIm2col");
}

CUresult CUDAAPI cuTensorMapEncodeIm2colWide(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
    void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
    int pixelBoxLowerCornerWidth, int pixelBoxUpperCornerWidth, cuuint32_t channelsPerPixel,
    cuuint32_t pixelsPerColumn, const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) try {
  FAKECUDA_ENTER(cuTensorMapEncodeIm2colWide)
  fakecuda::TensorMapParams p;
  p.kind = 2;
  p.data_type = fakecuda::EnumBits(tensorDataType);
  p.rank = tensorRank;
  p.address = reinterpret_cast<std::uintptr_t>(globalAddress);
  p.dims = globalDim;
  p.strides = globalStrides;
  p.lower_w = pixelBoxLowerCornerWidth;
  p.upper_w = pixelBoxUpperCornerWidth;
  p.channels = channelsPerPixel;
  p.pixels = pixelsPerColumn;
  p.element_strides = elementStrides;
  p.interleave = fakecuda::EnumBits(interleave);
  p.wide_mode = fakecuda::EnumBits(mode);
  p.swizzle = fakecuda::EnumBits(swizzle);
  p.l2_promotion = fakecuda::EnumBits(l2Promotion);
  p.oob_fill = fakecuda::EnumBits(oobFill);
  return fakecuda::Encode(st, tensorMap, p);
} catch (...) {
  return ::fakecuda::EntryFailed("cuTensorMapEncodeIm2colWide");
}

CUresult CUDAAPI cuTensorMapReplaceAddress(CUtensorMap* tensorMap, void* globalAddress) try {
  FAKECUDA_ENTER(cuTensorMapReplaceAddress)
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  return fakecuda::ReplaceTensorMapAddress(reinterpret_cast<unsigned char*>(tensorMap),
                                           reinterpret_cast<std::uintptr_t>(globalAddress));
} catch (...) {
  return ::fakecuda::EntryFailed("cuTensorMapReplaceAddress");
}

}  // extern "C"
