// Copyright 2026 The cuhal Authors.
// Conformance: CUDA arrays (cuArrayCreate, cuArray3DCreate, the descriptor getters,
// cuArrayDestroy, cuArrayGetPlane, cuArrayGetMemoryRequirements, cuArrayGetSparseProperties),
// the copies to and from them (cuMemcpyHtoA/AtoH/DtoA/AtoD/AtoA and the async ones) and the
// pitched copies (cuMemcpy2D, cuMemcpy2DUnaligned, cuMemcpy2DAsync, cuMemcpy3D,
// cuMemcpy3DAsync) with array and linear endpoints.
//
// Measured 2026-12-06, H100 driver 580.159.04: ci/gpu-probes/array_probe.cc ran on an H100 80GB
// HBM3 (results: ci/gpu-probes/results/2026-12-06-h100-array.real.txt); the expectations follow
// it (its case is named beside each test). This suite runs on libcuda.so.1 too: cuhal's CUDA
// table has no array entry points, so the tests reach them through cuGetProcAddress. Calls with
// a destroyed array handle crashed the real driver (SIGNAL 11): they are tested on the fake only.
// FakeArrayTest holds what is the fake's own (leak inventory, handles the real driver may crash
// on, fault injection).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

// The array entry points, resolved through cuGetProcAddress.
struct ArrayApi {
  decltype(&::cuArrayCreate) ArrayCreate = nullptr;
  decltype(&::cuArray3DCreate) Array3DCreate = nullptr;
  decltype(&::cuArrayGetDescriptor) ArrayGetDescriptor = nullptr;
  decltype(&::cuArray3DGetDescriptor) Array3DGetDescriptor = nullptr;
  decltype(&::cuArrayDestroy) ArrayDestroy = nullptr;
  decltype(&::cuArrayGetPlane) ArrayGetPlane = nullptr;
  decltype(&::cuArrayGetMemoryRequirements) ArrayGetMemoryRequirements = nullptr;
  decltype(&::cuArrayGetSparseProperties) ArrayGetSparseProperties = nullptr;
  decltype(&::cuMemcpyHtoA) MemcpyHtoA = nullptr;
  decltype(&::cuMemcpyAtoH) MemcpyAtoH = nullptr;
  decltype(&::cuMemcpyDtoA) MemcpyDtoA = nullptr;
  decltype(&::cuMemcpyAtoD) MemcpyAtoD = nullptr;
  decltype(&::cuMemcpyAtoA) MemcpyAtoA = nullptr;
  decltype(&::cuMemcpyHtoAAsync) MemcpyHtoAAsync = nullptr;
  decltype(&::cuMemcpyAtoHAsync) MemcpyAtoHAsync = nullptr;
  decltype(&::cuMemcpy2D) Memcpy2D = nullptr;
  decltype(&::cuMemcpy2DUnaligned) Memcpy2DUnaligned = nullptr;
  decltype(&::cuMemcpy2DAsync) Memcpy2DAsync = nullptr;
  decltype(&::cuMemcpy3D) Memcpy3D = nullptr;
  decltype(&::cuMemcpy3DAsync) Memcpy3DAsync = nullptr;
};

// Resolves every entry of ArrayApi; false (with *missing set) when one is not found.
bool ResolveArrayApi(const cuhal::CudaApi& api, ArrayApi* out, std::string* missing) {
  if (api.cuGetProcAddress == nullptr) {
    *missing = "cuGetProcAddress";
    return false;
  }
  bool ok = true;
  auto get = [&](const char* name, auto* fn) {
    if (!ResolveEntry(api, name, fn)) {
      *missing = name;
      ok = false;
    }
  };
  get("cuArrayCreate", &out->ArrayCreate);
  get("cuArray3DCreate", &out->Array3DCreate);
  get("cuArrayGetDescriptor", &out->ArrayGetDescriptor);
  get("cuArray3DGetDescriptor", &out->Array3DGetDescriptor);
  get("cuArrayDestroy", &out->ArrayDestroy);
  get("cuArrayGetPlane", &out->ArrayGetPlane);
  get("cuArrayGetMemoryRequirements", &out->ArrayGetMemoryRequirements);
  get("cuArrayGetSparseProperties", &out->ArrayGetSparseProperties);
  get("cuMemcpyHtoA", &out->MemcpyHtoA);
  get("cuMemcpyAtoH", &out->MemcpyAtoH);
  get("cuMemcpyDtoA", &out->MemcpyDtoA);
  get("cuMemcpyAtoD", &out->MemcpyAtoD);
  get("cuMemcpyAtoA", &out->MemcpyAtoA);
  get("cuMemcpyHtoAAsync", &out->MemcpyHtoAAsync);
  get("cuMemcpyAtoHAsync", &out->MemcpyAtoHAsync);
  get("cuMemcpy2D", &out->Memcpy2D);
  get("cuMemcpy2DUnaligned", &out->Memcpy2DUnaligned);
  get("cuMemcpy2DAsync", &out->Memcpy2DAsync);
  get("cuMemcpy3D", &out->Memcpy3D);
  get("cuMemcpy3DAsync", &out->Memcpy3DAsync);
  return ok;
}

CUDA_ARRAY_DESCRIPTOR ArrayDesc(size_t w, size_t h, CUarray_format f = CU_AD_FORMAT_UNSIGNED_INT8,
                           unsigned channels = 1) {
  CUDA_ARRAY_DESCRIPTOR d;
  std::memset(&d, 0, sizeof d);
  d.Width = w;
  d.Height = h;
  d.Format = f;
  d.NumChannels = channels;
  return d;
}

CUDA_ARRAY3D_DESCRIPTOR ArrayDesc3(size_t w, size_t h, size_t depth, unsigned flags = 0,
                              CUarray_format f = CU_AD_FORMAT_UNSIGNED_INT8,
                              unsigned channels = 1) {
  CUDA_ARRAY3D_DESCRIPTOR d;
  std::memset(&d, 0, sizeof d);
  d.Width = w;
  d.Height = h;
  d.Depth = depth;
  d.Flags = flags;
  d.Format = f;
  d.NumChannels = channels;
  return d;
}

std::vector<unsigned char> ArrayPattern(size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed + i * 7 + (i >> 8));
  return v;
}

// A descriptor filled with 0x5a bytes (what the getters must leave untouched).
CUDA_ARRAY_DESCRIPTOR ArrayDescFilled() {
  CUDA_ARRAY_DESCRIPTOR d;
  std::memset(&d, 0x5a, sizeof d);
  return d;
}

// A made-up array handle (a pointer to a word of ours).
CUarray GarbageArray() {
  static unsigned long long word[16] = {0x1234};
  return reinterpret_cast<CUarray>(&word[4]);
}

class ArrayTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::string missing;
    if (!ResolveArrayApi(api(), &a_, &missing)) GTEST_SKIP() << "the driver has no " << missing;
  }
  CUarray Make(size_t w, size_t h, CUarray_format f = CU_AD_FORMAT_UNSIGNED_INT8,
               unsigned channels = 1) {
    CUDA_ARRAY_DESCRIPTOR d = ArrayDesc(w, h, f, channels);
    CUarray a = nullptr;
    EXPECT_EQ(a_.ArrayCreate(&a, &d), CUDA_SUCCESS);
    return a;
  }
  CUarray Make3(size_t w, size_t h, size_t depth, unsigned flags = 0,
                CUarray_format f = CU_AD_FORMAT_UNSIGNED_INT8, unsigned channels = 1) {
    CUDA_ARRAY3D_DESCRIPTOR d = ArrayDesc3(w, h, depth, flags, f, channels);
    CUarray a = nullptr;
    EXPECT_EQ(a_.Array3DCreate(&a, &d), CUDA_SUCCESS);
    return a;
  }
  int Attr(CUdevice_attribute attr) {
    int v = 0;
    EXPECT_EQ(api().cuDeviceGetAttribute(&v, attr, 0), CUDA_SUCCESS);
    return v;
  }
  size_t FreeBytes() {
    size_t free = 0;
    size_t total = 0;
    EXPECT_EQ(api().cuMemGetInfo(&free, &total), CUDA_SUCCESS);
    return free;
  }
  ArrayApi a_;
};

// Case "cudapython": NVIDIA cuda-python's test_cuda_array, with a context current.
TEST_P(ArrayTest, CudaPythonSequenceZeroDescriptorIsInvalidValueOneByteArraySucceeds) {
  CUDA_ARRAY_DESCRIPTOR d;
  std::memset(&d, 0, sizeof d);
  CUarray a = nullptr;
  EXPECT_EQ(a_.ArrayCreate(&a, &d), CUDA_ERROR_INVALID_VALUE);
  d.Format = CU_AD_FORMAT_SIGNED_INT8;
  d.NumChannels = 1;
  d.Width = 1;
  ASSERT_EQ(a_.ArrayCreate(&a, &d), CUDA_SUCCESS);
  EXPECT_NE(a, nullptr);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
}

// Case "create": the descriptor read back, 1D, 2D and through the 3D getter.
TEST_P(ArrayTest, DescriptorsReadBackAsCreated) {
  CUarray a = Make(640, 480, CU_AD_FORMAT_UNSIGNED_INT16, 2);
  CUDA_ARRAY_DESCRIPTOR d;
  std::memset(&d, 0, sizeof d);
  ASSERT_EQ(a_.ArrayGetDescriptor(&d, a), CUDA_SUCCESS);
  EXPECT_EQ(d.Width, 640u);
  EXPECT_EQ(d.Height, 480u);
  EXPECT_EQ(d.Format, CU_AD_FORMAT_UNSIGNED_INT16);
  EXPECT_EQ(d.NumChannels, 2u);
  CUDA_ARRAY3D_DESCRIPTOR e;
  std::memset(&e, 0xab, sizeof e);
  ASSERT_EQ(a_.Array3DGetDescriptor(&e, a), CUDA_SUCCESS);
  EXPECT_EQ(e.Width, 640u);
  EXPECT_EQ(e.Height, 480u);
  EXPECT_EQ(e.Depth, 0u);
  EXPECT_EQ(e.Flags, 0u);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);

  CUarray b = Make3(8, 4, 2, CUDA_ARRAY3D_SURFACE_LDST, CU_AD_FORMAT_FLOAT, 4);
  ASSERT_EQ(a_.Array3DGetDescriptor(&e, b), CUDA_SUCCESS);
  EXPECT_EQ(e.Width, 8u);
  EXPECT_EQ(e.Height, 4u);
  EXPECT_EQ(e.Depth, 2u);
  EXPECT_EQ(e.Format, CU_AD_FORMAT_FLOAT);
  EXPECT_EQ(e.NumChannels, 4u);
  EXPECT_EQ(e.Flags, static_cast<unsigned>(CUDA_ARRAY3D_SURFACE_LDST));
  EXPECT_EQ(a_.ArrayDestroy(b), CUDA_SUCCESS);

  CUarray c = Make(64, 0);
  ASSERT_EQ(a_.ArrayGetDescriptor(&d, c), CUDA_SUCCESS);
  EXPECT_EQ(d.Height, 0u) << "a 1D array keeps Height 0";
  EXPECT_EQ(a_.ArrayDestroy(c), CUDA_SUCCESS);
}

// Cases "create" and "create3d": what the driver refuses.
TEST_P(ArrayTest, InvalidDescriptorsAreInvalidValue) {
  auto create = [&](CUDA_ARRAY_DESCRIPTOR d) {
    CUarray a = nullptr;
    CUresult r = a_.ArrayCreate(&a, &d);
    if (r == CUDA_SUCCESS) {
      EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
    }
    return r;
  };
  auto create3 = [&](CUDA_ARRAY3D_DESCRIPTOR d) {
    CUarray a = nullptr;
    CUresult r = a_.Array3DCreate(&a, &d);
    if (r == CUDA_SUCCESS) {
      EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
    }
    return r;
  };
  EXPECT_EQ(create(ArrayDesc(16, 16, static_cast<CUarray_format>(0))), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(ArrayDesc(16, 16, static_cast<CUarray_format>(0x04))), CUDA_ERROR_INVALID_VALUE);
  for (unsigned ch : {0u, 3u, 5u, 8u}) {
    EXPECT_EQ(create(ArrayDesc(16, 16, CU_AD_FORMAT_UNSIGNED_INT8, ch)), CUDA_ERROR_INVALID_VALUE)
        << ch << " channels";
  }
  for (unsigned ch : {1u, 2u, 4u}) {
    EXPECT_EQ(create(ArrayDesc(16, 16, CU_AD_FORMAT_UNSIGNED_INT8, ch)), CUDA_SUCCESS)
        << ch << " channels";
  }
  EXPECT_EQ(create(ArrayDesc(0, 0)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(ArrayDesc(0, 5)), CUDA_ERROR_INVALID_VALUE);
  const size_t w1 = static_cast<size_t>(Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH));
  const size_t w2 = static_cast<size_t>(Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH));
  const size_t h2 = static_cast<size_t>(Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT));
  const size_t w3 = static_cast<size_t>(Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH));
  const size_t d3 = static_cast<size_t>(Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH));
  const size_t d3a =
      static_cast<size_t>(Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE));
  EXPECT_EQ(create(ArrayDesc(w1, 0)), CUDA_SUCCESS);
  EXPECT_EQ(create(ArrayDesc(w1 + 1, 0)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(ArrayDesc(w2 + 1, 1)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(ArrayDesc(1, h2 + 1)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create3(ArrayDesc3(w3 + 1, 1, 1)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create3(ArrayDesc3(1, 1, d3 + 1)), CUDA_SUCCESS) << "within the alternate limits";
  EXPECT_EQ(create3(ArrayDesc3(1, 1, d3a + 1)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create3(ArrayDesc3(8, 4, 0, 0x1000)), CUDA_ERROR_INVALID_VALUE) << "unknown flag";
  EXPECT_EQ(create3(ArrayDesc3(8, 4, 5, CUDA_ARRAY3D_CUBEMAP)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create3(ArrayDesc3(8, 8, 6, CUDA_ARRAY3D_CUBEMAP)), CUDA_SUCCESS);
  CUarray a = nullptr;
  CUDA_ARRAY_DESCRIPTOR ok = ArrayDesc(4, 4);
  EXPECT_EQ(a_.ArrayCreate(nullptr, &ok), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.ArrayCreate(&a, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY3D_DESCRIPTOR ok3 = ArrayDesc3(4, 4, 4);
  EXPECT_EQ(a_.Array3DCreate(nullptr, &ok3), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.Array3DCreate(&a, nullptr), CUDA_ERROR_INVALID_VALUE);
}

// Case "copy1d": bytes written with cuMemcpyHtoA read back with cuMemcpyAtoH, at offsets, and
// through device memory and another array.
TEST_P(ArrayTest, OneDimensionalCopiesRoundTrip) {
  const size_t n = 4096;
  CUarray a = Make(1024, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  CUarray b = Make(1024, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  std::vector<unsigned char> in = ArrayPattern(n, 1), out(n, 0);
  ASSERT_EQ(a_.MemcpyHtoA(a, 0, in.data(), n), CUDA_SUCCESS);
  ASSERT_EQ(a_.MemcpyAtoH(out.data(), a, 0, n), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  std::vector<unsigned char> part = ArrayPattern(100, 9), back(100, 0);
  ASSERT_EQ(a_.MemcpyHtoA(a, 1000, part.data(), 100), CUDA_SUCCESS);
  ASSERT_EQ(a_.MemcpyAtoH(back.data(), a, 1000, 100), CUDA_SUCCESS);
  EXPECT_EQ(part, back);
  EXPECT_EQ(a_.MemcpyHtoA(a, 0, in.data(), n + 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.MemcpyHtoA(a, n - 4, in.data(), 8), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.MemcpyAtoH(out.data(), a, 0, n + 4), CUDA_ERROR_INVALID_VALUE);

  CUdeviceptr dev = 0;
  ASSERT_EQ(api().cuMemAlloc(&dev, 2 * n), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyHtoD(dev, in.data(), n), CUDA_SUCCESS);
  ASSERT_EQ(a_.MemcpyDtoA(b, 0, dev, n), CUDA_SUCCESS);
  ASSERT_EQ(a_.MemcpyAtoD(dev + n, b, 0, n), CUDA_SUCCESS);
  std::fill(out.begin(), out.end(), 0);
  ASSERT_EQ(api().cuMemcpyDtoH(out.data(), dev + n, n), CUDA_SUCCESS);
  EXPECT_EQ(in, out);

  CUarray c = Make(1024, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  ASSERT_EQ(a_.MemcpyHtoA(a, 0, in.data(), n), CUDA_SUCCESS);
  ASSERT_EQ(a_.MemcpyAtoA(c, 16, a, 32, 64), CUDA_SUCCESS);
  std::vector<unsigned char> o2(64, 0);
  ASSERT_EQ(a_.MemcpyAtoH(o2.data(), c, 16, 64), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(o2.data(), in.data() + 32, 64), 0);
  EXPECT_EQ(a_.MemcpyAtoA(c, 0, a, 0, n + 4), CUDA_ERROR_INVALID_VALUE);

  EXPECT_EQ(api().cuMemFree(dev), CUDA_SUCCESS);
  for (CUarray x : {a, b, c}) EXPECT_EQ(a_.ArrayDestroy(x), CUDA_SUCCESS);
}

// Case "async": the stream-ordered copies, pinned and pageable host memory.
TEST_P(ArrayTest, AsyncCopiesRoundTripOnAStream) {
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUarray a = Make(4096, 0);
  void* pinned = nullptr;
  ASSERT_EQ(api().cuMemAllocHost(&pinned, 8192), CUDA_SUCCESS);
  auto* p = static_cast<unsigned char*>(pinned);
  std::vector<unsigned char> in = ArrayPattern(4096, 2);
  std::memcpy(p, in.data(), 4096);
  std::memset(p + 4096, 0, 4096);
  ASSERT_EQ(a_.MemcpyHtoAAsync(a, 0, p, 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(a_.MemcpyAtoHAsync(p + 4096, a, 0, 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(p + 4096, in.data(), 4096), 0);
  std::vector<unsigned char> pageable = ArrayPattern(4096, 4), back(4096, 0);
  ASSERT_EQ(a_.MemcpyHtoAAsync(a, 0, pageable.data(), 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(a_.MemcpyAtoHAsync(back.data(), a, 0, 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(pageable, back);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(pinned), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
}

// Case "copy2d": pitched host and device rows into a 2D array and back, a sub-rectangle, and
// array to array; a box reaching outside the array is refused.
TEST_P(ArrayTest, PitchedCopiesIntoATwoDimensionalArrayRoundTrip) {
  const size_t w = 60, h = 20, hp = 64;
  CUarray a = Make(w, h);
  std::vector<unsigned char> host = ArrayPattern(hp * h, 11), back(hp * h, 0);
  CUDA_MEMCPY2D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = hp;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = w;
  c.Height = h;
  ASSERT_EQ(a_.Memcpy2D(&c), CUDA_SUCCESS);
  CUDA_MEMCPY2D r;
  std::memset(&r, 0, sizeof r);
  r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  r.srcArray = a;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = back.data();
  r.dstPitch = hp;
  r.WidthInBytes = w;
  r.Height = h;
  ASSERT_EQ(a_.Memcpy2D(&r), CUDA_SUCCESS);
  for (size_t y = 0; y < h; ++y) {
    EXPECT_EQ(std::memcmp(&host[y * hp], &back[y * hp], w), 0) << "row " << y;
  }
  std::vector<unsigned char> sub(50, 0);
  r.srcXInBytes = 7;
  r.srcY = 3;
  r.dstHost = sub.data();
  r.dstPitch = 10;
  r.WidthInBytes = 10;
  r.Height = 5;
  ASSERT_EQ(a_.Memcpy2D(&r), CUDA_SUCCESS);
  for (size_t y = 0; y < 5; ++y) {
    EXPECT_EQ(std::memcmp(&sub[y * 10], &host[(y + 3) * hp + 7], 10), 0) << "row " << y;
  }
  r.srcXInBytes = 55;
  EXPECT_EQ(a_.Memcpy2D(&r), CUDA_ERROR_INVALID_VALUE) << "columns past the width";
  r.srcXInBytes = 0;
  r.srcY = 16;
  EXPECT_EQ(a_.Memcpy2D(&r), CUDA_ERROR_INVALID_VALUE) << "rows past the height";

  // Device rows (pitch 64) into a second array and out again at pitch 128.
  CUarray b = Make(w, h);
  CUdeviceptr dev = 0;
  ASSERT_EQ(api().cuMemAlloc(&dev, 65536), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyHtoD(dev, host.data(), hp * h), CUDA_SUCCESS);
  CUDA_MEMCPY2D d;
  std::memset(&d, 0, sizeof d);
  d.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  d.srcDevice = dev;
  d.srcPitch = hp;
  d.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  d.dstArray = b;
  d.WidthInBytes = w;
  d.Height = h;
  ASSERT_EQ(a_.Memcpy2DUnaligned(&d), CUDA_SUCCESS);
  CUDA_MEMCPY2D e;
  std::memset(&e, 0, sizeof e);
  e.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  e.srcArray = b;
  e.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  e.dstDevice = dev + 8192;
  e.dstPitch = 128;
  e.WidthInBytes = w;
  e.Height = h;
  ASSERT_EQ(a_.Memcpy2DAsync(&e, nullptr), CUDA_SUCCESS);
  std::vector<unsigned char> dback(128 * h, 0);
  ASSERT_EQ(api().cuMemcpyDtoH(dback.data(), dev + 8192, 128 * h), CUDA_SUCCESS);
  for (size_t y = 0; y < h; ++y) {
    EXPECT_EQ(std::memcmp(&host[y * hp], &dback[y * 128], w), 0) << "row " << y;
  }
  EXPECT_EQ(a_.Memcpy2D(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(dev), CUDA_SUCCESS);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(a_.ArrayDestroy(b), CUDA_SUCCESS);
}

// Case "linear2d": cuMemcpy2D between pitched host and device memory, no array.
TEST_P(ArrayTest, PitchedCopiesBetweenHostAndDeviceKeepTheBytesBetweenRows) {
  const size_t w = 100, h = 30, sp = 128, dp = 256;
  CUdeviceptr dev = 0;
  ASSERT_EQ(api().cuMemAlloc(&dev, dp * h), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8(dev, 0, dp * h), CUDA_SUCCESS);
  std::vector<unsigned char> host = ArrayPattern(sp * h, 21), back(dp * h, 0xee);
  CUDA_MEMCPY2D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = sp;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = dev;
  c.dstPitch = dp;
  c.WidthInBytes = w;
  c.Height = h;
  ASSERT_EQ(a_.Memcpy2D(&c), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(back.data(), dev, dp * h), CUDA_SUCCESS);
  for (size_t y = 0; y < h; ++y) {
    EXPECT_EQ(std::memcmp(&host[y * sp], &back[y * dp], w), 0) << "row " << y;
    for (size_t x = w; x < dp; ++x) ASSERT_EQ(back[y * dp + x], 0) << "row " << y << " x " << x;
  }
  CUDA_MEMCPY2D m = c;
  m.srcPitch = w - 1;
  EXPECT_EQ(a_.Memcpy2D(&m), CUDA_ERROR_INVALID_VALUE) << "pitch below the width";
  m = c;
  m.srcXInBytes = sp - w + 1;
  EXPECT_EQ(a_.Memcpy2D(&m), CUDA_ERROR_INVALID_VALUE) << "pitch below x + width";
  m.srcXInBytes = sp - w;
  m.Height = h - 1;
  EXPECT_EQ(a_.Memcpy2D(&m), CUDA_SUCCESS) << "pitch exactly x + width";
  m = c;
  m.dstDevice = dev + dp * h - 100;
  EXPECT_EQ(a_.Memcpy2D(&m), CUDA_ERROR_INVALID_VALUE) << "rows past the allocation";
  EXPECT_EQ(api().cuMemFree(dev), CUDA_SUCCESS);
}

// Case "copy3d": a 3D array written from pitched host slices and read back, a sub-box.
TEST_P(ArrayTest, ThreeDimensionalCopiesRoundTrip) {
  const size_t w = 12, h = 6, depth = 5, el = 4, hp = 64, hh = 8;
  CUarray a = Make3(w, h, depth, 0, CU_AD_FORMAT_UNSIGNED_INT16, 2);
  std::vector<unsigned char> host = ArrayPattern(hp * hh * depth, 31), back(hp * hh * depth, 0);
  CUDA_MEMCPY3D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = hp;
  c.srcHeight = hh;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = w * el;
  c.Height = h;
  c.Depth = depth;
  ASSERT_EQ(a_.Memcpy3D(&c), CUDA_SUCCESS);
  CUDA_MEMCPY3D r;
  std::memset(&r, 0, sizeof r);
  r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  r.srcArray = a;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = back.data();
  r.dstPitch = hp;
  r.dstHeight = hh;
  r.WidthInBytes = w * el;
  r.Height = h;
  r.Depth = depth;
  ASSERT_EQ(a_.Memcpy3DAsync(&r, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  for (size_t z = 0; z < depth; ++z) {
    for (size_t y = 0; y < h; ++y) {
      EXPECT_EQ(std::memcmp(&host[(z * hh + y) * hp], &back[(z * hh + y) * hp], w * el), 0)
          << "z " << z << " y " << y;
    }
  }
  std::vector<unsigned char> box(8 * 2 * 3, 0);
  CUDA_MEMCPY3D s = r;
  s.srcXInBytes = 4;
  s.srcY = 1;
  s.srcZ = 2;
  s.dstHost = box.data();
  s.dstPitch = 8;
  s.dstHeight = 2;
  s.WidthInBytes = 8;
  s.Height = 2;
  s.Depth = 3;
  ASSERT_EQ(a_.Memcpy3D(&s), CUDA_SUCCESS);
  for (size_t z = 0; z < 3; ++z) {
    for (size_t y = 0; y < 2; ++y) {
      EXPECT_EQ(std::memcmp(&box[(z * 2 + y) * 8], &host[((z + 2) * hh + y + 1) * hp + 4], 8), 0);
    }
  }
  CUDA_MEMCPY3D m = s;
  m.srcZ = 3;
  EXPECT_EQ(a_.Memcpy3D(&m), CUDA_ERROR_INVALID_VALUE) << "layers past the depth";
  // Measured 2026-12-06, H100 driver 580.159.04 (case "copy3d"): a nonzero srcLOD is refused;
  // dstLOD, reserved0 and reserved1 are ignored; the box need not be whole elements.
  m = s;
  m.srcLOD = 1;
  EXPECT_EQ(a_.Memcpy3D(&m), CUDA_ERROR_INVALID_VALUE) << "srcLOD set";
  m = s;
  m.dstLOD = 1;
  EXPECT_EQ(a_.Memcpy3D(&m), CUDA_SUCCESS) << "dstLOD is ignored";
  m = s;
  m.reserved0 = &m;
  EXPECT_EQ(a_.Memcpy3D(&m), CUDA_SUCCESS) << "reserved0 is ignored";
  m = s;
  m.reserved1 = &m;
  EXPECT_EQ(a_.Memcpy3D(&m), CUDA_SUCCESS) << "reserved1 is ignored";
  m = s;
  m.srcXInBytes = 2;
  EXPECT_EQ(a_.Memcpy3D(&m), CUDA_SUCCESS) << "x inside an element";
  m = s;
  m.WidthInBytes = 6;
  EXPECT_EQ(a_.Memcpy3D(&m), CUDA_SUCCESS) << "a width of part elements";
  m = s;
  m.dstHeight = 1;
  EXPECT_EQ(a_.Memcpy3D(&m), CUDA_ERROR_INVALID_VALUE) << "dstHeight below Height";
  EXPECT_EQ(a_.Memcpy3D(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
}

// Case "plane" and "memreq": what a plain (non-planar, non-sparse, mapped) array answers.
TEST_P(ArrayTest, PlainArrayHasNoPlanesSparsePropertiesOrMemoryRequirements) {
  CUarray a = Make(16, 16);
  CUarray p = nullptr;
  EXPECT_EQ(a_.ArrayGetPlane(&p, a, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.ArrayGetPlane(&p, a, 1), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_SPARSE_PROPERTIES sp;
  EXPECT_EQ(a_.ArrayGetSparseProperties(&sp, a), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
  EXPECT_EQ(a_.ArrayGetMemoryRequirements(&mr, a, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.ArrayGetPlane(nullptr, a, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
}

// Cases "descriptor", "plane", "destroy", "copy1d", "copy2d", "copy3d", "memreq": a null array
// handle. Measured 2026-12-06, H100 driver 580.159.04: the descriptor getters, cuArrayGetPlane
// and cuArrayDestroy answer CUDA_ERROR_INVALID_HANDLE; the copies, cuArrayGetMemoryRequirements
// and cuArrayGetSparseProperties CUDA_ERROR_INVALID_VALUE.
TEST_P(ArrayTest, NullArrayHandleIsInvalidHandleForGettersAndInvalidValueForCopies) {
  CUDA_ARRAY_DESCRIPTOR d;
  std::memset(&d, 0x5a, sizeof d);
  EXPECT_EQ(a_.ArrayGetDescriptor(&d, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(d.Width, ArrayDescFilled().Width) << "out untouched";
  CUDA_ARRAY3D_DESCRIPTOR e;
  EXPECT_EQ(a_.Array3DGetDescriptor(&e, nullptr), CUDA_ERROR_INVALID_HANDLE);
  CUarray p = nullptr;
  EXPECT_EQ(a_.ArrayGetPlane(&p, nullptr, 0), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(a_.ArrayDestroy(nullptr), CUDA_ERROR_INVALID_HANDLE);
  CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
  EXPECT_EQ(a_.ArrayGetMemoryRequirements(&mr, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_SPARSE_PROPERTIES sp;
  EXPECT_EQ(a_.ArrayGetSparseProperties(&sp, nullptr), CUDA_ERROR_INVALID_VALUE);
  unsigned char bytes[16] = {};
  EXPECT_EQ(a_.MemcpyHtoA(nullptr, 0, bytes, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.MemcpyAtoH(bytes, nullptr, 0, 4), CUDA_ERROR_INVALID_VALUE);
  CUarray a = Make(64, 0);
  EXPECT_EQ(a_.MemcpyAtoA(nullptr, 0, a, 0, 4), CUDA_ERROR_INVALID_VALUE);
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(a_.MemcpyHtoAAsync(nullptr, 0, bytes, 4, s), CUDA_ERROR_INVALID_VALUE);
  CUDA_MEMCPY2D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = bytes;
  c.srcPitch = 4;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = nullptr;
  c.WidthInBytes = 4;
  c.Height = 2;
  EXPECT_EQ(a_.Memcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
}

// Cases "copy1d", "copy2d", "copy3d": the 1D copies (cuMemcpyHtoA/AtoH/...) reach only the first
// row of a 2D or 3D array. Measured 2026-12-06, H100 driver 580.159.04.
TEST_P(ArrayTest, OneDimensionalCopiesReachOnlyTheFirstRowOfA2DOr3DArray) {
  CUarray t = Make(64, 16);  // 1024 bytes, rows of 64
  std::vector<unsigned char> in = ArrayPattern(1024, 5), out(1024, 0);
  EXPECT_EQ(a_.MemcpyHtoA(t, 0, in.data(), 64), CUDA_SUCCESS);
  EXPECT_EQ(a_.MemcpyAtoH(out.data(), t, 0, 64), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(in.data(), out.data(), 64), 0);
  EXPECT_EQ(a_.MemcpyHtoA(t, 0, in.data(), 1024), CUDA_ERROR_INVALID_VALUE) << "the whole array";
  EXPECT_EQ(a_.MemcpyAtoH(out.data(), t, 0, 1024), CUDA_ERROR_INVALID_VALUE) << "the whole array";
  EXPECT_EQ(a_.MemcpyHtoA(t, 64, in.data(), 64), CUDA_ERROR_INVALID_VALUE) << "the second row";
  EXPECT_EQ(a_.MemcpyHtoA(t, 32, in.data(), 64), CUDA_ERROR_INVALID_VALUE) << "across rows";
  CUarray u = Make3(8, 8, 4);
  EXPECT_EQ(a_.MemcpyHtoA(u, 0, in.data(), 8), CUDA_SUCCESS);
  EXPECT_EQ(a_.MemcpyHtoA(u, 0, in.data(), 256), CUDA_ERROR_INVALID_VALUE);
  // Not whole elements: accepted (a 4-byte format at offset 1, 3 bytes).
  CUarray w = Make(1024, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  EXPECT_EQ(a_.MemcpyHtoA(w, 1, in.data(), 4), CUDA_SUCCESS);
  EXPECT_EQ(a_.MemcpyHtoA(w, 0, in.data(), 3), CUDA_SUCCESS);
  for (CUarray x : {t, u, w}) EXPECT_EQ(a_.ArrayDestroy(x), CUDA_SUCCESS);
}

// Case "copy2d": a pitched copy into an array need not be whole elements; one row's pitch is not
// checked against CU_DEVICE_ATTRIBUTE_MAX_PITCH (case "linear2d"). Measured 2026-12-06, H100
// driver 580.159.04.
TEST_P(ArrayTest, PitchedCopiesNeedNotBeWholeElementsAndOneRowIgnoresThePitch) {
  CUarray q = Make(16, 4, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  std::vector<unsigned char> host = ArrayPattern(256, 7);
  CUDA_MEMCPY2D g;
  std::memset(&g, 0, sizeof g);
  g.srcMemoryType = CU_MEMORYTYPE_HOST;
  g.srcHost = host.data();
  g.srcPitch = 64;
  g.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  g.dstArray = q;
  g.WidthInBytes = 64;
  g.Height = 4;
  EXPECT_EQ(a_.Memcpy2D(&g), CUDA_SUCCESS);
  g.WidthInBytes = 62;
  EXPECT_EQ(a_.Memcpy2D(&g), CUDA_SUCCESS);
  EXPECT_EQ(a_.Memcpy2DUnaligned(&g), CUDA_SUCCESS);
  g.WidthInBytes = 60;
  g.dstXInBytes = 2;
  EXPECT_EQ(a_.Memcpy2D(&g), CUDA_SUCCESS);
  g.dstXInBytes = 4;
  g.WidthInBytes = 64;
  EXPECT_EQ(a_.Memcpy2D(&g), CUDA_ERROR_INVALID_VALUE) << "past the row";
  EXPECT_EQ(a_.ArrayDestroy(q), CUDA_SUCCESS);

  CUdeviceptr dev = 0;
  ASSERT_EQ(api().cuMemAlloc(&dev, 4096), CUDA_SUCCESS);
  CUDA_MEMCPY2D m;
  std::memset(&m, 0, sizeof m);
  m.srcMemoryType = CU_MEMORYTYPE_HOST;
  m.srcHost = host.data();
  m.srcPitch = 128;
  m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.dstDevice = dev;
  m.dstPitch = size_t{1} << 40;
  m.WidthInBytes = 100;
  m.Height = 1;
  EXPECT_EQ(a_.Memcpy2D(&m), CUDA_SUCCESS) << "one row: the huge pitch is not used";
  EXPECT_EQ(api().cuMemFree(dev), CUDA_SUCCESS);
}

// Cases "create", "create3d", "formats": what the real driver accepts beyond cuda.h's words.
// Measured 2026-12-06, H100 driver 580.159.04.
TEST_P(ArrayTest, MeasuredFlagsFormatsAndShapes) {
  auto create3 = [&](CUDA_ARRAY3D_DESCRIPTOR d) {
    CUarray a = nullptr;
    CUresult r = a_.Array3DCreate(&a, &d);
    if (r == CUDA_SUCCESS) {
      EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
    }
    return r;
  };
  auto create = [&](CUDA_ARRAY_DESCRIPTOR d) {
    CUarray a = nullptr;
    CUresult r = a_.ArrayCreate(&a, &d);
    if (r == CUDA_SUCCESS) {
      EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
    }
    return r;
  };
  EXPECT_EQ(create3(ArrayDesc3(8, 4, 0, CUDA_ARRAY3D_DEPTH_TEXTURE)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create3(ArrayDesc3(8, 4, 0, CUDA_ARRAY3D_DEPTH_TEXTURE, CU_AD_FORMAT_FLOAT)),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create3(ArrayDesc3(8, 4, 0, CUDA_ARRAY3D_COLOR_ATTACHMENT)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create3(ArrayDesc3(8, 4, 0, 0x200)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create3(ArrayDesc3(8, 4, 0, 0x80000000u)), CUDA_SUCCESS) << "bit 31 is accepted";
  EXPECT_EQ(create3(ArrayDesc3(8, 4, 0, CUDA_ARRAY3D_LAYERED)), CUDA_ERROR_INVALID_VALUE)
      << "layered, 0 layers";
  EXPECT_EQ(create3(ArrayDesc3(8, 0, 0, CUDA_ARRAY3D_LAYERED)), CUDA_ERROR_INVALID_VALUE)
      << "layered 1D, 0 layers";
  EXPECT_EQ(create3(ArrayDesc3(8, 0, 3, CUDA_ARRAY3D_LAYERED)), CUDA_SUCCESS);
  EXPECT_EQ(create(ArrayDesc(1, size_t{1} << 40)), CUDA_SUCCESS) << "Height kept in 32 bits";
  EXPECT_EQ(create(ArrayDesc(size_t{1} << 40, 0)), CUDA_ERROR_INVALID_VALUE);
  // The normalized and block-compressed formats take exactly the channel count of their name.
  struct F {
    CUarray_format f;
    unsigned channels;
  };
  for (const F& f : {F{CU_AD_FORMAT_UNORM_INT8X1, 1}, F{CU_AD_FORMAT_SNORM_INT16X4, 4},
                     F{CU_AD_FORMAT_UNORM_INT_101010_2, 4}, F{CU_AD_FORMAT_BC1_UNORM, 4},
                     F{CU_AD_FORMAT_BC4_SNORM, 1}, F{CU_AD_FORMAT_BC5_UNORM, 2},
                     F{CU_AD_FORMAT_BC6H_UF16, 3}, F{CU_AD_FORMAT_BC7_UNORM_SRGB, 4}}) {
    for (unsigned ch = 1; ch <= 4; ++ch) {
      EXPECT_EQ(create(ArrayDesc(16, 16, f.f, ch)),
                ch == f.channels ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE)
          << "format 0x" << std::hex << f.f << std::dec << " x" << ch;
    }
  }
  EXPECT_EQ(create(ArrayDesc(16, 0, CU_AD_FORMAT_BC1_UNORM, 4)), CUDA_ERROR_INVALID_VALUE)
      << "block-compressed 1D";
  EXPECT_EQ(create(ArrayDesc(16, 16, CU_AD_FORMAT_NV12, 1)), CUDA_ERROR_INVALID_VALUE);
}

// Case "memreq": a deferred-mapping array's requirements are its block-linear size in 64 KiB
// units, aligned to 64 KiB; a sparse array's tiles are 64 KiB. Measured 2026-12-06, H100 driver
// 580.159.04.
TEST_P(ArrayTest, MemoryRequirementsAndSparseTilesAre64KiB) {
  struct Case {
    size_t w, h, d;
    unsigned flags;
    CUarray_format f;
    unsigned ch;
    size_t size;
  };
  const unsigned kDef = CUDA_ARRAY3D_DEFERRED_MAPPING;
  for (const Case& c : {Case{1, 0, 0, kDef, CU_AD_FORMAT_UNSIGNED_INT8, 1, 65536},
                        Case{65536, 0, 0, kDef, CU_AD_FORMAT_UNSIGNED_INT8, 1, 524288},
                        Case{1000, 3, 0, kDef, CU_AD_FORMAT_FLOAT, 4, 131072},
                        Case{1000, 1000, 0, kDef, CU_AD_FORMAT_FLOAT, 4, 16384000},
                        Case{512, 512, 0, kDef, CU_AD_FORMAT_UNSIGNED_INT8, 1, 262144},
                        Case{4096, 4096, 0, kDef, CU_AD_FORMAT_UNSIGNED_INT8, 1, 16777216},
                        Case{128, 128, 128, kDef, CU_AD_FORMAT_FLOAT, 1, 8388608},
                        Case{64, 0, 4, kDef | CUDA_ARRAY3D_LAYERED, CU_AD_FORMAT_UNSIGNED_INT8, 1,
                             65536}}) {
    CUarray a = Make3(c.w, c.h, c.d, c.flags, c.f, c.ch);
    CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
    std::memset(&mr, 0, sizeof mr);
    ASSERT_EQ(a_.ArrayGetMemoryRequirements(&mr, a, 0), CUDA_SUCCESS);
    EXPECT_EQ(mr.size, c.size) << c.w << "x" << c.h << "x" << c.d;
    EXPECT_EQ(mr.alignment, size_t{65536});
    EXPECT_EQ(a_.ArrayGetMemoryRequirements(&mr, a, -1), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
  }
  CUarray s2 = Make3(64, 64, 0, CUDA_ARRAY3D_SPARSE);
  CUDA_ARRAY_SPARSE_PROPERTIES sp;
  std::memset(&sp, 0, sizeof sp);
  ASSERT_EQ(a_.ArrayGetSparseProperties(&sp, s2), CUDA_SUCCESS);
  EXPECT_EQ(sp.tileExtent.width, 256u);
  EXPECT_EQ(sp.tileExtent.height, 256u);
  EXPECT_EQ(sp.tileExtent.depth, 1u);
  EXPECT_EQ(sp.miptailFirstLevel, 0u);
  EXPECT_EQ(sp.miptailSize, 65536u);
  EXPECT_EQ(sp.flags, static_cast<unsigned>(CU_ARRAY_SPARSE_PROPERTIES_SINGLE_MIPTAIL));
  CUarray s3 = Make3(64, 64, 64, CUDA_ARRAY3D_SPARSE, CU_AD_FORMAT_FLOAT, 1);
  std::memset(&sp, 0, sizeof sp);
  ASSERT_EQ(a_.ArrayGetSparseProperties(&sp, s3), CUDA_SUCCESS);
  EXPECT_EQ(sp.tileExtent.width, 32u);
  EXPECT_EQ(sp.tileExtent.height, 32u);
  EXPECT_EQ(sp.tileExtent.depth, 16u);
  EXPECT_EQ(sp.miptailSize, 0u);
  EXPECT_EQ(sp.flags, 0u);
  EXPECT_EQ(a_.ArrayDestroy(s2), CUDA_SUCCESS);
  EXPECT_EQ(a_.ArrayDestroy(s3), CUDA_SUCCESS);
}

// Case "meminfo": an array's memory is device memory in 2 MiB pages, given back when it is
// destroyed; sparse and deferred-mapping arrays take none. Measured 2026-12-06, H100 driver
// 580.159.04 (each array of 2 MiB or more takes its own pages).
TEST_P(ArrayTest, MemGetInfoCountsArrayMemoryInTwoMiBPages) {
  struct Case {
    size_t w, h, d;
    unsigned flags;
    CUarray_format f;
    unsigned ch;
    size_t taken;
  };
  for (const Case& c : {Case{2048, 2048, 0, 0, CU_AD_FORMAT_FLOAT, 4, size_t{64} << 20},
                        Case{1000, 1000, 0, 0, CU_AD_FORMAT_FLOAT, 4, size_t{16} << 20},
                        Case{256, 256, 256, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, size_t{16} << 20},
                        Case{65536, 0, 0, 0, CU_AD_FORMAT_FLOAT, 4, size_t{8} << 20},
                        Case{4096, 4096, 0, CUDA_ARRAY3D_SPARSE, CU_AD_FORMAT_FLOAT, 1, 0},
                        Case{4096, 4096, 0, CUDA_ARRAY3D_DEFERRED_MAPPING, CU_AD_FORMAT_FLOAT,
                             1, 0}}) {
    const size_t before = FreeBytes();
    CUarray a = Make3(c.w, c.h, c.d, c.flags, c.f, c.ch);
    EXPECT_EQ(before - FreeBytes(), c.taken) << c.w << "x" << c.h << "x" << c.d;
    EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
    EXPECT_EQ(FreeBytes(), before);
  }
}

// Case "capture": measured 2026-12-06, H100 driver 580.159.04: cuMemcpyHtoAAsync,
// cuMemcpyAtoHAsync and cuMemcpy3DAsync with array endpoints on a capturing stream become three
// memcpy nodes; the graph instantiates, launches and copies.
TEST_P(ArrayTest, AsyncArrayCopiesAreCapturedAsMemcpyNodes) {
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUarray a = Make(256, 0);
  void* pinned = nullptr;
  ASSERT_EQ(api().cuMemAllocHost(&pinned, 16384), CUDA_SUCCESS);
  auto* p = static_cast<unsigned char*>(pinned);
  std::vector<unsigned char> in = ArrayPattern(256, 50);
  std::memcpy(p, in.data(), 256);
  std::memset(p + 4096, 0, 256);
  std::memset(p + 8192, 0, 256);
  ASSERT_EQ(api().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
  EXPECT_EQ(a_.MemcpyHtoAAsync(a, 0, p, 256, s), CUDA_SUCCESS);
  EXPECT_EQ(a_.MemcpyAtoHAsync(p + 4096, a, 0, 256, s), CUDA_SUCCESS);
  CUDA_MEMCPY3D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  c.srcArray = a;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = p + 8192;
  c.WidthInBytes = 256;
  c.Height = 1;
  c.Depth = 1;
  EXPECT_EQ(a_.Memcpy3DAsync(&c, s), CUDA_SUCCESS);
  CUgraph g = nullptr;
  ASSERT_EQ(api().cuStreamEndCapture(s, &g), CUDA_SUCCESS);
  size_t n = 0;
  EXPECT_EQ(api().cuGraphGetNodes(g, nullptr, &n), CUDA_SUCCESS);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(p[4096], 0) << "nothing ran while capturing";
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(e, s), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(p + 4096, in.data(), 256), 0);
  EXPECT_EQ(std::memcmp(p + 8192, in.data(), 256), 0);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(pinned), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(ArrayTest);

// cuda-python's test_cuda_array from its start: no context current at first.
class ArrayNoContextTest : public BackendTest {};

TEST_P(ArrayNoContextTest, CudaPythonSequenceFromNoContextToOneByteArray) {
  ArrayApi a;
  std::string missing;
  if (!ResolveArrayApi(api(), &a, &missing)) GTEST_SKIP() << "the driver has no " << missing;
  CUDA_ARRAY_DESCRIPTOR d;
  std::memset(&d, 0, sizeof d);
  CUarray arr = nullptr;
  // Measured 2026-12-06, H100 driver 580.159.04 (array_probe "cudapython", "noctx"): the
  // context is checked before the descriptor.
  EXPECT_EQ(a.ArrayCreate(&arr, &d), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a.ArrayCreate(&arr, nullptr), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a.Memcpy2D(nullptr), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a.ArrayDestroy(nullptr), CUDA_ERROR_INVALID_HANDLE);
  CUcontext ctx = nullptr;
  ASSERT_EQ(CreateContext(api(), &ctx, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(a.ArrayCreate(&arr, &d), CUDA_ERROR_INVALID_VALUE);
  d.Format = CU_AD_FORMAT_SIGNED_INT8;
  d.NumChannels = 1;
  d.Width = 1;
  EXPECT_EQ(a.ArrayCreate(&arr, &d), CUDA_SUCCESS);
  EXPECT_EQ(a.ArrayDestroy(arr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxDestroy(ctx), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(ArrayNoContextTest);

// What is the fake's own: the leak inventory, handles the real driver may crash on, faults.
class FakeArrayTest : public ArrayTest {
 protected:
  bool CheckLeaksOnTearDown() const override { return false; }
};

TEST_P(FakeArrayTest, ArraysAreInTheInventoryAndDieWithTheirContext) {
  CUcontext c = nullptr;
  ASSERT_EQ(CreateContext(api(), &c, 0, 0), CUDA_SUCCESS);
  const size_t before = FreeBytes();
  CUarray a = Make(1024, 1024);
  EXPECT_EQ(fake().LiveObjects().arrays, 1);
  EXPECT_NE(fake().LeakReport().find("(cuArrayCreate)"), std::string::npos)
      << fake().LeakReport();
  EXPECT_LT(FreeBytes(), before);
  ASSERT_EQ(api().cuCtxDestroy(c), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().arrays, 0) << "destroyed with its context";
  EXPECT_EQ(FreeBytes(), before) << "its memory given back";
  // The real driver crashed on a destroyed array's handle (array_probe "contexts"); the fake
  // answers it as a made-up one (CUDA_ERROR_INVALID_CONTEXT, measured for those).
  CUDA_ARRAY_DESCRIPTOR d;
  EXPECT_EQ(a_.ArrayGetDescriptor(&d, a), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_ERROR_INVALID_CONTEXT);
}

// Cases "destroy", "descriptor", "plane", "copy1d", "copy3d": the real driver crashed (SIGNAL
// 11) on a destroyed array's handle; the fake answers it as the made-up handles measured in
// "descriptor", "plane", "noctx" (CUDA_ERROR_INVALID_CONTEXT; copies CUDA_ERROR_INVALID_VALUE).
TEST_P(FakeArrayTest, DestroyedArrayHandleIsRefusedLikeAMadeUpOne) {
  CUarray a = Make(16, 16);
  ASSERT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_ERROR_INVALID_CONTEXT);
  CUDA_ARRAY_DESCRIPTOR d;
  EXPECT_EQ(a_.ArrayGetDescriptor(&d, a), CUDA_ERROR_INVALID_CONTEXT);
  CUarray p = nullptr;
  EXPECT_EQ(a_.ArrayGetPlane(&p, a, 0), CUDA_ERROR_INVALID_CONTEXT);
  unsigned char bytes[4] = {};
  EXPECT_EQ(a_.MemcpyHtoA(a, 0, bytes, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.MemcpyAtoH(bytes, a, 0, 4), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
  EXPECT_EQ(a_.ArrayGetMemoryRequirements(&mr, a, 0), CUDA_ERROR_INVALID_VALUE);
}

// Case "meminfo": arrays under 2 MiB share 2 MiB pages (64 arrays of 64x64 u8 took 2 MiB on the
// H100, measured 2026-12-06, driver 580.159.04; a lone 1-byte array takes a whole page). Fake
// only: on the real driver a page left partly used by an earlier test changes the count.
TEST_P(FakeArrayTest, SmallArraysShareTwoMiBPages) {
  const size_t before = FreeBytes();
  CUarray one = Make(1, 0);
  EXPECT_EQ(before - FreeBytes(), size_t{2} << 20);
  std::vector<CUarray> many;
  for (int i = 0; i < 64; ++i) many.push_back(Make(64, 64));
  EXPECT_EQ(before - FreeBytes(), size_t{2} << 20) << "all in the same page";
  for (CUarray a : many) EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(a_.ArrayDestroy(one), CUDA_SUCCESS);
  EXPECT_EQ(FreeBytes(), before);
}

// Cases "descriptor", "plane", "copy1d", "copy2d", "memreq", "noctx": a made-up handle (a
// pointer to a zeroed word, as the probe's) gets, measured 2026-12-06 on H100 driver 580.159.04,
// CUDA_ERROR_INVALID_CONTEXT from the getters and cuArrayDestroy, CUDA_ERROR_INVALID_VALUE from
// the copies and the requirement getters. Fake only: the real driver reads through the pointer.
TEST_P(FakeArrayTest, GarbageHandlesAreRefusedNotDereferenced) {
  CUDA_ARRAY_DESCRIPTOR d;
  CUDA_ARRAY3D_DESCRIPTOR e;
  unsigned char bytes[16] = {};
  EXPECT_EQ(a_.ArrayGetDescriptor(&d, GarbageArray()), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a_.Array3DGetDescriptor(&e, GarbageArray()), CUDA_ERROR_INVALID_CONTEXT);
  CUarray p = nullptr;
  EXPECT_EQ(a_.ArrayGetPlane(&p, GarbageArray(), 0), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a_.ArrayDestroy(GarbageArray()), CUDA_ERROR_INVALID_CONTEXT);
  CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
  EXPECT_EQ(a_.ArrayGetMemoryRequirements(&mr, GarbageArray(), 0), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_SPARSE_PROPERTIES sp;
  EXPECT_EQ(a_.ArrayGetSparseProperties(&sp, GarbageArray()), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.MemcpyHtoA(GarbageArray(), 0, bytes, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_.MemcpyAtoH(bytes, GarbageArray(), 0, 4), CUDA_ERROR_INVALID_VALUE);
  CUDA_MEMCPY2D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = bytes;
  c.srcPitch = 4;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = GarbageArray();
  c.WidthInBytes = 4;
  c.Height = 2;
  EXPECT_EQ(a_.Memcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(fake().LiveObjects().arrays, 0);
}

TEST_P(FakeArrayTest, QueuedCopiesKeepTheBytesOfAnArrayDestroyedUnderThem) {
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUarray a = Make(1024, 1024);
  std::vector<unsigned char> in = ArrayPattern(1 << 20, 3);
  CUDA_MEMCPY2D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = in.data();
  c.srcPitch = 1024;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = 1024;
  c.Height = 1024;
  ASSERT_EQ(a_.Memcpy2DAsync(&c, s), CUDA_SUCCESS);
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().arrays, 0);
}

TEST_P(FakeArrayTest, FaultInjectionFailsArrayCreationWithoutEffect) {
  fakecuda::FaultRule rule;
  rule.entry = "cuArrayCreate";
  rule.mode = fakecuda::FaultRule::Mode::kNth;
  rule.n = 1;
  rule.error = CUDA_ERROR_OUT_OF_MEMORY;
  fake().faults().AddRule(rule);
  const size_t before = FreeBytes();
  CUDA_ARRAY_DESCRIPTOR d = ArrayDesc(1024, 1024);
  CUarray a = nullptr;
  EXPECT_EQ(a_.ArrayCreate(&a, &d), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(a, nullptr);
  EXPECT_EQ(fake().LiveObjects().arrays, 0);
  EXPECT_EQ(FreeBytes(), before);
  ASSERT_EQ(a_.ArrayCreate(&a, &d), CUDA_SUCCESS) << "only the first call fails";
  EXPECT_EQ(a_.ArrayDestroy(a), CUDA_SUCCESS);
  fake().faults().ClearRules();
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(FakeArrayTest);

// Case "noinit": measured 2026-12-06, H100 driver 580.159.04: before cuInit the descriptor
// getters and cuArrayGetPlane answer a made-up handle with CUDA_ERROR_INVALID_CONTEXT (a null one:
// CUDA_ERROR_INVALID_HANDLE), the requirement getters with CUDA_ERROR_INVALID_VALUE;
// cuArrayCreate, cuArrayDestroy and the copies answer CUDA_ERROR_NOT_INITIALIZED. Fake only: the
// real driver cannot be un-initialized in this process.
class ArrayPreInitTest : public BackendTest {
 protected:
  BackendOptions Options() const override {
    BackendOptions options;
    options.init = false;
    return options;
  }
};

TEST_P(ArrayPreInitTest, GettersAnswerBeforeCuInit) {
  ArrayApi a;
  std::string missing;
  ASSERT_TRUE(ResolveArrayApi(api(), &a, &missing)) << missing;
  CUDA_ARRAY_DESCRIPTOR d;
  CUDA_ARRAY3D_DESCRIPTOR e;
  CUarray p = nullptr;
  EXPECT_EQ(a.ArrayGetDescriptor(&d, GarbageArray()), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a.Array3DGetDescriptor(&e, GarbageArray()), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a.ArrayGetPlane(&p, GarbageArray(), 0), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a.ArrayGetDescriptor(&d, nullptr), CUDA_ERROR_INVALID_HANDLE);
  CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
  EXPECT_EQ(a.ArrayGetMemoryRequirements(&mr, GarbageArray(), 0), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_SPARSE_PROPERTIES sp;
  EXPECT_EQ(a.ArrayGetSparseProperties(&sp, GarbageArray()), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_DESCRIPTOR ok = ArrayDesc(16, 16);
  CUarray made = nullptr;
  EXPECT_EQ(a.ArrayCreate(&made, &ok), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(a.ArrayDestroy(GarbageArray()), CUDA_ERROR_NOT_INITIALIZED);
  unsigned char host[16] = {};
  EXPECT_EQ(a.MemcpyHtoA(GarbageArray(), 0, host, 4), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(a.Memcpy2D(nullptr), CUDA_ERROR_NOT_INITIALIZED);
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(ArrayPreInitTest);

}  // namespace
}  // namespace cuhal::testing
