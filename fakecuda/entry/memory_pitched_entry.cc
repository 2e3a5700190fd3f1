// Copyright 2026 The cuhal Authors.
// Entry points: pitched device memory (cuMemAllocPitch) and the 2D memsets (cuMemsetD2D8/16/32
// and their Async forms), which the CUDA runtime's cudaMallocPitch, cudaMalloc3D, cudaMemset2D
// and cudaMemset3D (and their Async forms) reach. The pitched copies are array_entry.cc's.
//
// Measured 2026-12-06 through the CUDA runtime on an H100 80GB HBM3, driver 580.159.04
// (tests/cudart_catalogue memory.cu and memcpy.cu; docs/driver_facts.md, "Pitched memory and 2D
// memsets"): cudaMallocPitch of widths 1, 100 and 512 bytes answers pitch 512, of 513 bytes
// pitch 1024; cudaMalloc3D of 60 bytes by 8 rows succeeds; cudaMemset2D, cudaMemset3D and their
// Async forms fill exactly the rows and bytes they name; a width above the pitch (2 rows) is
// cudaErrorInvalidValue. The element size the runtime passes to cuMemAllocPitch is not known;
// every other rule here follows cuda.h and is marked UNMEASURED.
#include <cstdint>
#include <limits>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/copy_resolve.h"
#include "fakecuda/internal/engine_access.h"
#include "fakecuda/internal/memory_hooks.h"
#include "fakecuda/race/race_detector.h"

using fakecuda::DriverState;
using fakecuda::Op;
using fakecuda::Resolved;
using fakecuda::Stream;

namespace fakecuda {
namespace {

// Measured: the pitch is the width rounded up to 512 bytes (1..512 -> 512, 513 -> 1024).
constexpr std::size_t kPitchAlignment = 512;

// cuMemsetD2D{8,16,32}[Async]: fills `height` rows of `width` elements of `elem` bytes, `pitch`
// bytes apart, from `dst`, on `s` (after its capture check: the caller's).
CUresult EnqueueMemset2D(DriverState* st, Stream* s, std::uintptr_t dst, std::size_t pitch,
                         unsigned value, std::size_t elem, std::size_t width, std::size_t height,
                         bool synchronous, const char* what) CUHAL_REQUIRES(st->mu) {
  // UNMEASURED (cuda.h; as cuMemsetD16/32, whose misaligned pointers are refused): dst aligned
  // to the element size. Measured: a row wider than the pitch over 2 rows is refused; cuda.h: the
  // pitch is unused for one row.
  if (dst % elem != 0) return CUDA_ERROR_INVALID_VALUE;
  if (width > std::numeric_limits<std::size_t>::max() / elem) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t row = width * elem;
  if (height > 1 && pitch < row) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t step = height > 1 ? pitch : row;
  if (row != 0 && height != 0 &&
      height - 1 > (std::numeric_limits<std::size_t>::max() - row) / step) {
    return CUDA_ERROR_INVALID_VALUE;  // the span would not fit a size_t
  }
  return EnqueueFill(st, s, dst, value, elem, width, height, step, synchronous, what);
}

// The synchronous forms: on the legacy default stream (or the per-thread one, _v2_ptds), waiting
// for the fill, as cuMemsetD8 does.
CUresult Memset2D(DriverState* st, std::uintptr_t dst, std::size_t pitch, unsigned value,
                  std::size_t elem, std::size_t width, std::size_t height, const char* what)
    CUHAL_REQUIRES(st->mu) {
  FAKECUDA_REQUIRE_CONTEXT()
  CUresult err = CUDA_SUCCESS;
  Stream* s = st->ResolveStream(CU_STREAM_LEGACY, &err);
  if (s == nullptr) return err;
  return EnqueueMemset2D(st, s, dst, pitch, value, elem, width, height, true, what);
}

CUresult Memset2DAsync(DriverState* st, CUstream h, std::uintptr_t dst, std::size_t pitch,
                       unsigned value, std::size_t elem, std::size_t width, std::size_t height,
                       const char* what) CUHAL_REQUIRES(st->mu) {
  if (CUresult r = CUDA_SUCCESS; CaptureMemset(st, h, dst, value, elem, width, &r, pitch, height)) {
    return r;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  CUresult err = CUDA_SUCCESS;
  Stream* s = st->ResolveStream(h, &err);
  if (s == nullptr) return err;
  return EnqueueMemset2D(st, s, dst, pitch, value, elem, width, height, false, what);
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes,
                                 size_t Height, unsigned int ElementSizeBytes) try {
  FAKECUDA_ENTER(cuMemAllocPitch)
  if (CUresult r = fakecuda::CaptureCheckUnsafe(st, true); r != CUDA_SUCCESS) return r;
  if (dptr == nullptr || pPitch == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // UNMEASURED (cuda.h: "ElementSizeBytes may be 4, 8 or 16"): any other element size is
  // refused, and the pitch does not depend on it (measured only for the runtime's choice).
  if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // UNMEASURED: an empty request is refused as cuMemAlloc's size 0 is (measured); the runtime
  // answers cudaMallocPitch of width 0 itself (success, pitch 0) without calling the driver.
  if (WidthInBytes == 0 || Height == 0) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  if (WidthInBytes > kMax - (fakecuda::kPitchAlignment - 1)) {
    *dptr = 0;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const std::size_t pitch = (WidthInBytes + fakecuda::kPitchAlignment - 1) /
                            fakecuda::kPitchAlignment * fakecuda::kPitchAlignment;
  if (Height > kMax / pitch) {
    *dptr = 0;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  CUresult e = fakecuda::AllocateDevice(st, *ctx, pitch * Height, dptr, "cuMemAllocPitch");
  if (e == CUDA_SUCCESS) *pPitch = pitch;
  return e;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAllocPitch");
}

CUresult CUDAAPI cuMemsetD2D8(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                              size_t Width, size_t Height) try {
  FAKECUDA_ENTER(cuMemsetD2D8)
  return fakecuda::Memset2D(st, dstDevice, dstPitch, uc, 1, Width, Height, "cuMemsetD2D8");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD2D8");
}

CUresult CUDAAPI cuMemsetD2D16(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                               size_t Width, size_t Height) try {
  FAKECUDA_ENTER(cuMemsetD2D16)
  return fakecuda::Memset2D(st, dstDevice, dstPitch, us, 2, Width, Height, "cuMemsetD2D16");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD2D16");
}

CUresult CUDAAPI cuMemsetD2D32(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                               size_t Width, size_t Height) try {
  FAKECUDA_ENTER(cuMemsetD2D32)
  return fakecuda::Memset2D(st, dstDevice, dstPitch, ui, 4, Width, Height, "cuMemsetD2D32");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD2D32");
}

CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                   size_t Width, size_t Height, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemsetD2D8Async)
  return fakecuda::Memset2DAsync(st, hStream, dstDevice, dstPitch, uc, 1, Width, Height,
                                 "cuMemsetD2D8Async");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD2D8Async");
}

CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                    size_t Width, size_t Height, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemsetD2D16Async)
  return fakecuda::Memset2DAsync(st, hStream, dstDevice, dstPitch, us, 2, Width, Height,
                                 "cuMemsetD2D16Async");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD2D16Async");
}

CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                    size_t Width, size_t Height, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemsetD2D32Async)
  return fakecuda::Memset2DAsync(st, hStream, dstDevice, dstPitch, ui, 4, Width, Height,
                                 "cuMemsetD2D32Async");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemsetD2D32Async");
}

}  // extern "C"
