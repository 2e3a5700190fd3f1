// Copyright 2026 The cuhal Authors.
// The older (32-bit) ABIs of the array calls and pitched copies that the drop-in libcuda.so.1
// exports under the plain names (fakecuda/entry/array_older_abi_entry.cc), called as a program
// built against an old cuda.h would: through dlsym, with the *_v1 structure layouts.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>

namespace {

struct ArrayDescriptorV1 {
  unsigned int Width;
  unsigned int Height;
  CUarray_format Format;
  unsigned int NumChannels;
};

struct Memcpy2DV1 {
  unsigned int srcXInBytes, srcY;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  unsigned int srcDevice;
  CUarray srcArray;
  unsigned int srcPitch;
  unsigned int dstXInBytes, dstY;
  CUmemorytype dstMemoryType;
  void* dstHost;
  unsigned int dstDevice;
  CUarray dstArray;
  unsigned int dstPitch;
  unsigned int WidthInBytes, Height;
};

template <typename Fn>
Fn Sym(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  Fn fn = nullptr;
  std::memcpy(&fn, &address, sizeof(fn));
  return fn;
}

TEST(DropinArrayOlderAbiTest, ArrayCreateDescriptorAndPitchedCopyWithThirtyTwoBitFields) {
  void* h = dlopen(CUHAL_DROPIN_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_NE(h, nullptr) << dlerror();
  auto init = Sym<CUresult (*)(unsigned)>(h, "cuInit");
  auto retain = Sym<CUresult (*)(CUcontext*, CUdevice)>(h, "cuDevicePrimaryCtxRetain");
  auto release = Sym<CUresult (*)(CUdevice)>(h, "cuDevicePrimaryCtxRelease_v2");
  auto set_current = Sym<CUresult (*)(CUcontext)>(h, "cuCtxSetCurrent");
  auto create = Sym<CUresult (*)(CUarray*, const ArrayDescriptorV1*)>(h, "cuArrayCreate");
  auto describe = Sym<CUresult (*)(ArrayDescriptorV1*, CUarray)>(h, "cuArrayGetDescriptor");
  auto copy2d = Sym<CUresult (*)(const Memcpy2DV1*)>(h, "cuMemcpy2D");
  auto atoh = Sym<CUresult (*)(void*, CUarray, unsigned, unsigned)>(h, "cuMemcpyAtoH");
  auto destroy = Sym<CUresult (*)(CUarray)>(h, "cuArrayDestroy");
  ASSERT_TRUE(init && retain && release && set_current && create && describe && copy2d && atoh &&
              destroy);
  ASSERT_EQ(init(0), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  ASSERT_EQ(retain(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(set_current(ctx), CUDA_SUCCESS);

  ArrayDescriptorV1 d{8, 4, CU_AD_FORMAT_UNSIGNED_INT8, 1};
  CUarray a = nullptr;
  ASSERT_EQ(create(&a, &d), CUDA_SUCCESS);
  ArrayDescriptorV1 e{};
  ASSERT_EQ(describe(&e, a), CUDA_SUCCESS);
  EXPECT_EQ(e.Width, 8u);
  EXPECT_EQ(e.Height, 4u);
  EXPECT_EQ(e.Format, CU_AD_FORMAT_UNSIGNED_INT8);
  EXPECT_EQ(e.NumChannels, 1u);
  unsigned char src[64], dst[32] = {};
  for (int i = 0; i < 64; ++i) src[i] = static_cast<unsigned char>(i * 3);
  Memcpy2DV1 c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = src;
  c.srcPitch = 16;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = 8;
  c.Height = 4;
  ASSERT_EQ(copy2d(&c), CUDA_SUCCESS);
  // The 1D copies reach only an array's first row (measured 2026-12-06, H100 driver 580.159.04,
  // array_probe "copy1d"): the first row through cuMemcpyAtoH, the rest through cuMemcpy2D.
  ASSERT_EQ(atoh(dst, a, 0, 8), CUDA_SUCCESS);
  EXPECT_EQ(atoh(dst, a, 0, 32), CUDA_ERROR_INVALID_VALUE);
  Memcpy2DV1 r{};
  r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  r.srcArray = a;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = dst;
  r.dstPitch = 8;
  r.WidthInBytes = 8;
  r.Height = 4;
  ASSERT_EQ(copy2d(&r), CUDA_SUCCESS);
  for (int y = 0; y < 4; ++y) EXPECT_EQ(std::memcmp(dst + y * 8, src + y * 16, 8), 0) << y;
  EXPECT_EQ(describe(nullptr, a), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(destroy(a), CUDA_SUCCESS);
  EXPECT_EQ(set_current(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(release(0), CUDA_SUCCESS);
}

}  // namespace
