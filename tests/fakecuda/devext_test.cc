// Copyright 2026 The cuhal Authors.
// Conformance: the "devext" entry points (issue 14): the deprecated device queries
// (cuDeviceComputeCapability, cuDeviceGetProperties), CUDA 13's location-based pool getters
// (cuMemGetDefaultMemPool, cuMemGetMemPool, cuMemSetMemPool), pool IPC in the exporting process,
// the batched copies (cuMemcpyBatchAsync_v2, cuMemcpy3DBatchAsync_v2) and batched prefetches,
// and the answers for what the H200 has not (multicast, graphics interop, decompression).
//
// The expectations are the H200's answers to ci/gpu-probes/devext_probe.cc (the probe case is
// named beside each test; docs/driver_facts.md, "Device extras, pool getters and batches",
// summarizes them); an expectation not measured there carries "UNMEASURED" on its line. Entry
// points are resolved with cuGetProcAddress (the suite skips on a driver without them).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

struct DevextApi {
  // The two deprecated ones, spelled out (decltype would name a deprecated declaration).
  CUresult(CUDAAPI* DeviceComputeCapability)(int*, int*, CUdevice) = nullptr;
  CUresult(CUDAAPI* DeviceGetProperties)(CUdevprop*, CUdevice) = nullptr;
  decltype(&::cuMemGetDefaultMemPool) MemGetDefaultMemPool = nullptr;
  decltype(&::cuMemGetMemPool) MemGetMemPool = nullptr;
  decltype(&::cuMemSetMemPool) MemSetMemPool = nullptr;
  decltype(&::cuMemPoolCreate) MemPoolCreate = nullptr;
  decltype(&::cuMemPoolDestroy) MemPoolDestroy = nullptr;
  decltype(&::cuDeviceGetDefaultMemPool) DeviceGetDefaultMemPool = nullptr;
  decltype(&::cuDeviceGetMemPool) DeviceGetMemPool = nullptr;
  decltype(&::cuMemAllocFromPoolAsync) MemAllocFromPoolAsync = nullptr;
  decltype(&::cuMemPoolExportToShareableHandle) MemPoolExportToShareableHandle = nullptr;
  decltype(&::cuMemPoolExportPointer) MemPoolExportPointer = nullptr;
  decltype(&::cuMemcpyBatchAsync_v2) MemcpyBatchAsync = nullptr;
  decltype(&::cuMemcpy3DBatchAsync_v2) Memcpy3DBatchAsync = nullptr;
  decltype(&::cuArray3DCreate) Array3DCreate = nullptr;
  decltype(&::cuArrayDestroy) ArrayDestroy = nullptr;
  decltype(&::cuMulticastGetGranularity) MulticastGetGranularity = nullptr;
  decltype(&::cuGraphicsUnregisterResource) GraphicsUnregisterResource = nullptr;
  decltype(&::cuMemBatchDecompressAsync) MemBatchDecompressAsync = nullptr;
};

class DevextTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (api().cuGetProcAddress == nullptr) GTEST_SKIP() << "the driver has no cuGetProcAddress";
    std::string missing;
    auto get = [&](const char* name, auto* fn) {
      if (!ResolveEntry(api(), name, fn)) missing = name;
    };
    get("cuDeviceComputeCapability", &x_.DeviceComputeCapability);
    get("cuDeviceGetProperties", &x_.DeviceGetProperties);
    get("cuMemGetDefaultMemPool", &x_.MemGetDefaultMemPool);
    get("cuMemGetMemPool", &x_.MemGetMemPool);
    get("cuMemSetMemPool", &x_.MemSetMemPool);
    get("cuMemPoolCreate", &x_.MemPoolCreate);
    get("cuMemPoolDestroy", &x_.MemPoolDestroy);
    get("cuDeviceGetDefaultMemPool", &x_.DeviceGetDefaultMemPool);
    get("cuDeviceGetMemPool", &x_.DeviceGetMemPool);
    get("cuMemAllocFromPoolAsync", &x_.MemAllocFromPoolAsync);
    get("cuMemPoolExportToShareableHandle", &x_.MemPoolExportToShareableHandle);
    get("cuMemPoolExportPointer", &x_.MemPoolExportPointer);
    get("cuMemcpyBatchAsync", &x_.MemcpyBatchAsync);
    get("cuMemcpy3DBatchAsync", &x_.Memcpy3DBatchAsync);
    get("cuArray3DCreate", &x_.Array3DCreate);
    get("cuArrayDestroy", &x_.ArrayDestroy);
    get("cuMulticastGetGranularity", &x_.MulticastGetGranularity);
    get("cuGraphicsUnregisterResource", &x_.GraphicsUnregisterResource);
    get("cuMemBatchDecompressAsync", &x_.MemBatchDecompressAsync);
    if (!missing.empty()) GTEST_SKIP() << "the driver has no " << missing;
    ASSERT_EQ(api().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_EQ(api().cuStreamDestroy(stream_), CUDA_SUCCESS);
    }
    PrimaryContextTest::TearDown();
  }

  int Attribute(CUdevice_attribute a) {
    int v = -1;
    EXPECT_EQ(api().cuDeviceGetAttribute(&v, a, 0), CUDA_SUCCESS);
    return v;
  }
  static std::vector<unsigned char> Pattern(size_t n, unsigned char seed) {
    std::vector<unsigned char> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed + i * 7);
    return v;
  }
  std::vector<unsigned char> Read(CUdeviceptr p, size_t n) {
    std::vector<unsigned char> out(n);
    EXPECT_EQ(api().cuMemcpyDtoH(out.data(), p, n), CUDA_SUCCESS);
    return out;
  }
  static CUmemLocation Device0() {
    CUmemLocation l;
    l.type = CU_MEM_LOCATION_TYPE_DEVICE;
    l.id = 0;
    return l;
  }
  static CUmemcpyAttributes StreamOrder() {
    CUmemcpyAttributes a;
    std::memset(&a, 0, sizeof a);
    a.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    return a;
  }

  DevextApi x_;
  CUstream stream_ = nullptr;
};

// dev:cc
TEST_P(DevextTest, DeviceComputeCapabilityIsTheTwoAttributes) {
  int major = -1, minor = -1;
  ASSERT_EQ(x_.DeviceComputeCapability(&major, &minor, 0), CUDA_SUCCESS);
  EXPECT_EQ(major, Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
  EXPECT_EQ(minor, Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  EXPECT_EQ(x_.DeviceComputeCapability(nullptr, &minor, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.DeviceComputeCapability(&major, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.DeviceComputeCapability(&major, &minor, -1), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(x_.DeviceComputeCapability(&major, &minor, 99), CUDA_ERROR_INVALID_DEVICE);
}

// dev:props
TEST_P(DevextTest, DeviceGetPropertiesFieldsAreTheirAttributes) {
  CUdevprop p;
  std::memset(&p, 0x7f, sizeof p);
  ASSERT_EQ(x_.DeviceGetProperties(&p, 0), CUDA_SUCCESS);
  EXPECT_EQ(p.maxThreadsPerBlock, Attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  EXPECT_EQ(p.maxThreadsDim[0], Attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X));
  EXPECT_EQ(p.maxThreadsDim[1], Attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y));
  EXPECT_EQ(p.maxThreadsDim[2], Attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z));
  EXPECT_EQ(p.maxGridSize[0], Attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X));
  EXPECT_EQ(p.maxGridSize[1], Attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y));
  EXPECT_EQ(p.maxGridSize[2], Attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z));
  EXPECT_EQ(p.sharedMemPerBlock, Attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  EXPECT_EQ(p.totalConstantMemory, Attribute(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY));
  EXPECT_EQ(p.SIMDWidth, Attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE));
  EXPECT_EQ(p.memPitch, Attribute(CU_DEVICE_ATTRIBUTE_MAX_PITCH));
  EXPECT_EQ(p.regsPerBlock, Attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
  EXPECT_EQ(p.clockRate, Attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  EXPECT_EQ(p.textureAlign, Attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
  EXPECT_EQ(x_.DeviceGetProperties(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.DeviceGetProperties(&p, 99), CUDA_ERROR_INVALID_DEVICE);
}

// pool:get
TEST_P(DevextTest, MemGetDefaultMemPoolOfDevicePinnedIsTheDevicesDefaultPool) {
  CUmemoryPool def = nullptr, p = nullptr, cur = nullptr;
  ASSERT_EQ(x_.DeviceGetDefaultMemPool(&def, 0), CUDA_SUCCESS);
  CUmemLocation loc = Device0();
  ASSERT_EQ(x_.MemGetDefaultMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(p, def);
  ASSERT_EQ(x_.MemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(cur, def);
  EXPECT_EQ(x_.MemGetDefaultMemPool(nullptr, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.MemGetDefaultMemPool(&p, nullptr, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.MemGetDefaultMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_INVALID),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.MemGetMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_INVALID), CUDA_ERROR_INVALID_VALUE);
}

// pool:set
TEST_P(DevextTest, MemSetMemPoolIsWhatMemGetMemPoolDeviceGetMemPoolAndMemAllocAsyncSee) {
  CUmemoryPool def = nullptr, mine = nullptr;
  ASSERT_EQ(x_.DeviceGetDefaultMemPool(&def, 0), CUDA_SUCCESS);
  CUmemPoolProps props;
  std::memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location = Device0();
  ASSERT_EQ(x_.MemPoolCreate(&mine, &props), CUDA_SUCCESS);
  CUmemLocation loc = Device0();
  ASSERT_EQ(x_.MemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, mine), CUDA_SUCCESS);
  CUmemoryPool p = nullptr;
  ASSERT_EQ(x_.MemGetMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(p, mine);
  ASSERT_EQ(x_.DeviceGetMemPool(&p, 0), CUDA_SUCCESS);
  EXPECT_EQ(p, mine);
  ASSERT_EQ(x_.MemGetDefaultMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(p, def);
  CUdeviceptr a = 0;
  ASSERT_EQ(api().cuMemAllocAsync(&a, 4096, stream_), CUDA_SUCCESS);
  CUmemoryPool owner = nullptr;
  EXPECT_EQ(api().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, mine);
  EXPECT_EQ(api().cuMemFreeAsync(a, stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  // Refused: no location, no pool, a pool of another type or location.
  EXPECT_EQ(x_.MemSetMemPool(nullptr, CU_MEM_ALLOCATION_TYPE_PINNED, mine),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.MemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.MemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_MANAGED, mine),
            CUDA_ERROR_INVALID_VALUE);
  CUmemLocation host;
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  host.id = 0;
  EXPECT_EQ(x_.MemSetMemPool(&host, CU_MEM_ALLOCATION_TYPE_PINNED, mine),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(x_.MemGetMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(p, mine) << "a refused set changes nothing";
  // Destroying the current pool makes the default current again.
  EXPECT_EQ(x_.MemPoolDestroy(mine), CUDA_SUCCESS);
  ASSERT_EQ(x_.MemGetMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(p, def);
}

// pool:ipc
TEST_P(DevextTest, IpcPoolExportsADescriptorAndItsPointersExportData) {
  CUmemPoolProps props;
  std::memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location = Device0();
  CUmemoryPool pool = nullptr, plain = nullptr;
  ASSERT_EQ(x_.MemPoolCreate(&pool, &props), CUDA_SUCCESS);
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  ASSERT_EQ(x_.MemPoolCreate(&plain, &props), CUDA_SUCCESS);
  int fd = -1;
  ASSERT_EQ(x_.MemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                              0),
            CUDA_SUCCESS);
  EXPECT_GE(fd, 0);
  int bad = -7;
  EXPECT_EQ(x_.MemPoolExportToShareableHandle(&bad, plain,
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(bad, -7);
  EXPECT_EQ(x_.MemPoolExportToShareableHandle(nullptr, pool,
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr a = 0;
  ASSERT_EQ(x_.MemAllocFromPoolAsync(&a, 1 << 20, pool, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  CUmemPoolPtrExportData d1, d2;
  std::memset(&d1, 0, sizeof d1);
  std::memset(&d2, 0, sizeof d2);
  ASSERT_EQ(x_.MemPoolExportPointer(&d1, a), CUDA_SUCCESS);
  ASSERT_EQ(x_.MemPoolExportPointer(&d2, a), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&d1, &d2, sizeof d1), 0) << "the same pointer exports the same data";
  EXPECT_EQ(x_.MemPoolExportPointer(nullptr, a), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFreeAsync(a, stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  close(fd);
  EXPECT_EQ(x_.MemPoolDestroy(pool), CUDA_SUCCESS);
  EXPECT_EQ(x_.MemPoolDestroy(plain), CUDA_SUCCESS);
}

// batch:copy
TEST_P(DevextTest, MemcpyBatchAsyncMovesEveryCopyInStreamOrder) {
  const size_t n = 64 << 10;
  CUdeviceptr d1 = 0, d2 = 0;
  ASSERT_EQ(api().cuMemAlloc(&d1, n), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&d2, n), CUDA_SUCCESS);
  std::vector<unsigned char> in = Pattern(n, 41), out(n, 0);
  CUmemcpyAttributes at = StreamOrder();
  size_t idx = 0;
  // Host to device, then device to device from what the first copy wrote (separate batches:
  // copies within a batch are unordered).
  CUdeviceptr dst1[1] = {d1};
  CUdeviceptr src1[1] = {reinterpret_cast<CUdeviceptr>(in.data())};
  size_t size1[1] = {n};
  ASSERT_EQ(x_.MemcpyBatchAsync(dst1, src1, size1, 1, &at, &idx, 1, stream_), CUDA_SUCCESS);
  CUdeviceptr dst2[2] = {d2, reinterpret_cast<CUdeviceptr>(out.data())};
  CUdeviceptr src2[2] = {d1, d1};
  size_t size2[2] = {n, 1000};
  ASSERT_EQ(x_.MemcpyBatchAsync(dst2, src2, size2, 2, &at, &idx, 1, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Read(d2, n), in);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 1000, in.begin()));
  EXPECT_EQ(out[1000], 0) << "only the copy's size moved";
  EXPECT_EQ(api().cuMemFree(d1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d2), CUDA_SUCCESS);
}

// batch:copy
TEST_P(DevextTest, MemcpyBatchAsyncDuringApiCallReadsTheSourceAtTheCall) {
  CUdeviceptr d = 0;
  ASSERT_EQ(api().cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  std::vector<unsigned char> src = Pattern(4096, 43);
  CUmemcpyAttributes at = StreamOrder();
  at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
  size_t idx = 0, size = 4096;
  CUdeviceptr dst = d, s = reinterpret_cast<CUdeviceptr>(src.data());
  ASSERT_EQ(x_.MemcpyBatchAsync(&dst, &s, &size, 1, &at, &idx, 1, stream_), CUDA_SUCCESS);
  std::fill(src.begin(), src.end(), 0);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Read(d, 4096), Pattern(4096, 43));
  EXPECT_EQ(api().cuMemFree(d), CUDA_SUCCESS);
}

// batch:copy
TEST_P(DevextTest, MemcpyBatchAsyncRefusesBadAttributeRangesAndTheLegacyStream) {
  CUdeviceptr d1 = 0, d2 = 0;
  ASSERT_EQ(api().cuMemAlloc(&d1, 4096), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&d2, 4096), CUDA_SUCCESS);
  CUdeviceptr dst[2] = {d2, d2 + 2048};
  CUdeviceptr src[2] = {d1, d1 + 2048};
  size_t size[2] = {2048, 2048};
  CUmemcpyAttributes at[2] = {StreamOrder(), StreamOrder()};
  size_t zero = 0, one = 1, rev[2] = {1, 0};
  EXPECT_EQ(x_.MemcpyBatchAsync(dst, src, size, 2, at, &one, 1, stream_),
            CUDA_ERROR_INVALID_VALUE);  // the first index must be 0
  EXPECT_EQ(x_.MemcpyBatchAsync(dst, src, size, 2, at, rev, 2, stream_),
            CUDA_ERROR_INVALID_VALUE);  // indices must increase
  EXPECT_EQ(x_.MemcpyBatchAsync(dst, src, size, 2, at, &zero, 0, stream_),
            CUDA_ERROR_INVALID_VALUE);  // every copy needs an attribute
  CUmemcpyAttributes invalid = StreamOrder();
  invalid.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  EXPECT_EQ(x_.MemcpyBatchAsync(dst, src, size, 2, &invalid, &zero, 1, stream_),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.MemcpyBatchAsync(dst, src, size, 2, at, &zero, 1, nullptr),
            CUDA_ERROR_INVALID_VALUE);  // UNMEASURED: cuda.h: "Must not be legacy NULL stream"
  EXPECT_EQ(x_.MemcpyBatchAsync(dst, src, size, 2, at, &zero, 1, stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d2), CUDA_SUCCESS);
}

// batch:copy3d
TEST_P(DevextTest, Memcpy3DBatchAsyncCopiesThroughAnArray) {
  const size_t w = 256, h = 16;
  CUdeviceptr src = 0, dst = 0;
  ASSERT_EQ(api().cuMemAlloc(&src, w * h), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&dst, w * h), CUDA_SUCCESS);
  const std::vector<unsigned char> in = Pattern(w * h, 51);
  ASSERT_EQ(api().cuMemcpyHtoD(src, in.data(), in.size()), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8(dst, 0, w * h), CUDA_SUCCESS);
  CUDA_ARRAY3D_DESCRIPTOR ad;
  std::memset(&ad, 0, sizeof ad);
  ad.Width = w;
  ad.Height = h;
  ad.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  ad.NumChannels = 1;
  CUarray arr = nullptr;
  ASSERT_EQ(x_.Array3DCreate(&arr, &ad), CUDA_SUCCESS);
  CUDA_MEMCPY3D_BATCH_OP ops[2];
  std::memset(ops, 0, sizeof ops);
  for (CUDA_MEMCPY3D_BATCH_OP& op : ops) {
    op.extent.width = w;
    op.extent.height = h;
    op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  }
  ops[0].src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  ops[0].src.op.ptr.ptr = src;
  ops[0].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  ops[0].dst.op.array.array = arr;
  ops[1].src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  ops[1].src.op.array.array = arr;
  ops[1].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  ops[1].dst.op.ptr.ptr = dst;
  ASSERT_EQ(x_.Memcpy3DBatchAsync(1, &ops[0], 0, stream_), CUDA_SUCCESS);
  ASSERT_EQ(x_.Memcpy3DBatchAsync(1, &ops[1], 0, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Read(dst, w * h), in);
  CUDA_MEMCPY3D_BATCH_OP bad = ops[0];
  bad.extent.depth = 0;
  EXPECT_EQ(x_.Memcpy3DBatchAsync(1, &bad, 0, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.Memcpy3DBatchAsync(1, &ops[0], 1, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(x_.ArrayDestroy(arr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(src), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(dst), CUDA_SUCCESS);
}

// multicast, graphics:ctx, batch:decompress
TEST_P(DevextTest, MulticastGraphicsAndDecompressionAreAbsentOnASingleH200) {
  CUmulticastObjectProp mp;
  std::memset(&mp, 0, sizeof mp);
  mp.numDevices = 1;
  mp.size = 2 << 20;
  mp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t g = 77;
  EXPECT_EQ(x_.MulticastGetGranularity(&g, &mp, CU_MULTICAST_GRANULARITY_MINIMUM),
            CUDA_ERROR_NOT_SUPPORTED);  // UNMEASURED
  EXPECT_EQ(x_.GraphicsUnregisterResource(nullptr), CUDA_ERROR_INVALID_HANDLE);  // UNMEASURED
  size_t err = 77;
  EXPECT_EQ(x_.MemBatchDecompressAsync(nullptr, 0, 0, &err, stream_),
            CUDA_ERROR_NOT_SUPPORTED);  // UNMEASURED
}

CUHAL_INSTANTIATE_BACKEND_TEST(DevextTest);

}  // namespace
}  // namespace cuhal::testing
