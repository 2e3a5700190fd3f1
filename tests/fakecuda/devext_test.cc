// Copyright 2026 The cuhal Authors.
// Conformance: the "devext" entry points (issue 14): the deprecated device queries
// (cuDeviceComputeCapability, cuDeviceGetProperties), CUDA 13's location-based pool getters
// (cuMemGetDefaultMemPool, cuMemGetMemPool, cuMemSetMemPool), pool IPC in the exporting process,
// the batched copies (cuMemcpyBatchAsync_v2, cuMemcpy3DBatchAsync_v2) and batched prefetches,
// and the answers for what the H200 has not (multicast, graphics interop, decompression).
//
// The expectations are the real driver's answers to ci/gpu-probes/devext_probe.cc (H100 80GB HBM3,
// driver 580.159.04, CUDA 13.0, 2026-12-06: /work/notes/gpu/devext.real.txt; the probe case is
// named beside each test; docs/driver_facts.md, "Device extras, pool getters, external memory
// and batches", summarizes them); an expectation not measured there carries "UNMEASURED" on its
// line. This suite itself has not run on the GPU machine yet. Entry points are resolved with
// cuGetProcAddress (the suite skips on a driver without them).
#include <fcntl.h>
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
  decltype(&::cuMemBatchDecompressAsync) MemBatchDecompressAsync = nullptr;
  decltype(&::cuDeviceGetExecAffinitySupport) DeviceGetExecAffinitySupport = nullptr;
  decltype(&::cuDeviceGetLuid) DeviceGetLuid = nullptr;
  decltype(&::cuDeviceGetTexture1DLinearMaxWidth) DeviceGetTexture1DLinearMaxWidth = nullptr;
  decltype(&::cuDeviceGetHostAtomicCapabilities) DeviceGetHostAtomicCapabilities = nullptr;
  decltype(&::cuDeviceGetP2PAtomicCapabilities) DeviceGetP2PAtomicCapabilities = nullptr;
  decltype(&::cuCheckpointProcessGetState) CheckpointProcessGetState = nullptr;
  decltype(&::cuCheckpointProcessGetRestoreThreadId) CheckpointProcessGetRestoreThreadId = nullptr;
  decltype(&::cuMemGetHandleForAddressRange) MemGetHandleForAddressRange = nullptr;
  decltype(&::cuMemCreate) MemCreate = nullptr;
  decltype(&::cuMemRelease) MemRelease = nullptr;
  decltype(&::cuMemAddressReserve) MemAddressReserve = nullptr;
  decltype(&::cuMemAddressFree) MemAddressFree = nullptr;
  decltype(&::cuMemMap) MemMap = nullptr;
  decltype(&::cuMemUnmap) MemUnmap = nullptr;
  decltype(&::cuMemSetAccess) MemSetAccess = nullptr;
  decltype(&::cuMemExportToShareableHandle) MemExportToShareableHandle = nullptr;
  decltype(&::cuImportExternalMemory) ImportExternalMemory = nullptr;
  decltype(&::cuExternalMemoryGetMappedBuffer) ExternalMemoryGetMappedBuffer = nullptr;
  decltype(&::cuDestroyExternalMemory) DestroyExternalMemory = nullptr;
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
    get("cuMemBatchDecompressAsync", &x_.MemBatchDecompressAsync);
    get("cuDeviceGetExecAffinitySupport", &x_.DeviceGetExecAffinitySupport);
    get("cuDeviceGetLuid", &x_.DeviceGetLuid);
    get("cuDeviceGetTexture1DLinearMaxWidth", &x_.DeviceGetTexture1DLinearMaxWidth);
    get("cuDeviceGetHostAtomicCapabilities", &x_.DeviceGetHostAtomicCapabilities);
    get("cuDeviceGetP2PAtomicCapabilities", &x_.DeviceGetP2PAtomicCapabilities);
    get("cuCheckpointProcessGetState", &x_.CheckpointProcessGetState);
    get("cuCheckpointProcessGetRestoreThreadId", &x_.CheckpointProcessGetRestoreThreadId);
    get("cuMemGetHandleForAddressRange", &x_.MemGetHandleForAddressRange);
    get("cuMemCreate", &x_.MemCreate);
    get("cuMemRelease", &x_.MemRelease);
    get("cuMemAddressReserve", &x_.MemAddressReserve);
    get("cuMemAddressFree", &x_.MemAddressFree);
    get("cuMemMap", &x_.MemMap);
    get("cuMemUnmap", &x_.MemUnmap);
    get("cuMemSetAccess", &x_.MemSetAccess);
    get("cuMemExportToShareableHandle", &x_.MemExportToShareableHandle);
    get("cuImportExternalMemory", &x_.ImportExternalMemory);
    get("cuExternalMemoryGetMappedBuffer", &x_.ExternalMemoryGetMappedBuffer);
    get("cuDestroyExternalMemory", &x_.DestroyExternalMemory);
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

// pool:get
TEST_P(DevextTest, MemGetDefaultMemPoolChecksTheLocationTypeFirst) {
  struct Case {
    CUmemLocationType type;
    int id;
    CUmemAllocationType alloc;
    CUresult expected;
  };
  const Case cases[] = {
      {CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, CU_MEM_ALLOCATION_TYPE_PINNED,
       CUDA_ERROR_NOT_SUPPORTED},
      {CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, CU_MEM_ALLOCATION_TYPE_INVALID,
       CUDA_ERROR_NOT_SUPPORTED},
      {static_cast<CUmemLocationType>(9), 0, CU_MEM_ALLOCATION_TYPE_INVALID,
       CUDA_ERROR_NOT_SUPPORTED},
      {CU_MEM_LOCATION_TYPE_DEVICE, 99, CU_MEM_ALLOCATION_TYPE_PINNED, CUDA_ERROR_INVALID_VALUE},
      {CU_MEM_LOCATION_TYPE_DEVICE, -1, CU_MEM_ALLOCATION_TYPE_PINNED, CUDA_ERROR_INVALID_VALUE},
      {CU_MEM_LOCATION_TYPE_HOST_NUMA, 999, CU_MEM_ALLOCATION_TYPE_PINNED,
       CUDA_ERROR_INVALID_VALUE},
      {CU_MEM_LOCATION_TYPE_NONE, 0, CU_MEM_ALLOCATION_TYPE_PINNED, CUDA_ERROR_INVALID_VALUE},
      {CU_MEM_LOCATION_TYPE_HOST, 0, static_cast<CUmemAllocationType>(7), CUDA_ERROR_INVALID_VALUE},
  };
  for (const Case& c : cases) {
    CUmemLocation loc;
    loc.type = c.type;
    loc.id = c.id;
    CUmemoryPool p = nullptr;
    EXPECT_EQ(x_.MemGetDefaultMemPool(&p, &loc, c.alloc), c.expected)
        << "location type " << c.type << " id " << c.id << " allocation type " << c.alloc;
    EXPECT_EQ(x_.MemGetMemPool(&p, &loc, c.alloc), c.expected)
        << "location type " << c.type << " id " << c.id << " allocation type " << c.alloc;
    EXPECT_EQ(p, nullptr) << "nothing written";
  }
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
  EXPECT_EQ(x_.MemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_MANAGED, mine), CUDA_ERROR_INVALID_VALUE);
  CUmemLocation host;
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  host.id = 0;
  EXPECT_EQ(x_.MemSetMemPool(&host, CU_MEM_ALLOCATION_TYPE_PINNED, mine), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(x_.MemGetMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(p, mine) << "a refused set changes nothing";  // UNMEASURED
  // Destroying the current pool makes the default current again.
  EXPECT_EQ(x_.MemPoolDestroy(mine), CUDA_SUCCESS);
  ASSERT_EQ(x_.MemGetMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(p, def);  // UNMEASURED
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
  ASSERT_EQ(
      x_.MemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
      CUDA_SUCCESS);
  EXPECT_GE(fd, 0);
  int bad = -7;
  EXPECT_EQ(
      x_.MemPoolExportToShareableHandle(&bad, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
      CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(bad, -7);
  EXPECT_EQ(
      x_.MemPoolExportToShareableHandle(nullptr, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
      CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr a = 0;
  ASSERT_EQ(x_.MemAllocFromPoolAsync(&a, 1 << 20, pool, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  CUmemPoolPtrExportData d1, d2;
  std::memset(&d1, 0, sizeof d1);
  std::memset(&d2, 0, sizeof d2);
  ASSERT_EQ(x_.MemPoolExportPointer(&d1, a), CUDA_SUCCESS);
  ASSERT_EQ(x_.MemPoolExportPointer(&d2, a), CUDA_SUCCESS);
  // UNMEASURED: the same pointer exports the same data.
  EXPECT_EQ(std::memcmp(&d1, &d2, sizeof d1), 0);
  EXPECT_EQ(x_.MemPoolExportPointer(nullptr, a), CUDA_ERROR_INVALID_VALUE);  // UNMEASURED
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
            CUDA_ERROR_INVALID_VALUE);  // the legacy NULL stream (cuda.h: "Must not be")
  EXPECT_EQ(x_.MemcpyBatchAsync(dst, src, size, 2, at, &zero, 1, stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d2), CUDA_SUCCESS);
}

// batch:copy3d (the pointer-to-pointer copy; through an array: UNMEASURED, the run's probe had
// garbage array offsets, fixed since)
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
  EXPECT_EQ(x_.Memcpy3DBatchAsync(1, &bad, 0, stream_), CUDA_ERROR_INVALID_VALUE);  // UNMEASURED
  EXPECT_EQ(x_.Memcpy3DBatchAsync(1, &ops[0], 1, stream_),
            CUDA_ERROR_INVALID_VALUE);  // UNMEASURED
  EXPECT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(x_.ArrayDestroy(arr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(src), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(dst), CUDA_SUCCESS);
}

// multicast, batch:decompress
TEST_P(DevextTest, MulticastAndDecompressionAreNotSupportedOnOneGpuWithoutThem) {
  ASSERT_EQ(Attribute(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED), 0);
  ASSERT_EQ(Attribute(CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK), 0);
  CUmulticastObjectProp mp;
  std::memset(&mp, 0, sizeof mp);
  mp.numDevices = 1;
  mp.size = 2 << 20;
  mp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t g = 77;
  EXPECT_EQ(x_.MulticastGetGranularity(&g, &mp, CU_MULTICAST_GRANULARITY_MINIMUM),
            CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(g, 77u);
  EXPECT_EQ(x_.MulticastGetGranularity(nullptr, nullptr, CU_MULTICAST_GRANULARITY_MINIMUM),
            CUDA_ERROR_NOT_SUPPORTED)
      << "not even the arguments are looked at";
  size_t err = 77;
  EXPECT_EQ(x_.MemBatchDecompressAsync(nullptr, 0, 0, &err, stream_), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(err, 77u);
}

// dev:misc
TEST_P(DevextTest, ExecAffinityIsZeroAndTheLuidIsWindowsOnly) {
  int pi = -7;
  ASSERT_EQ(x_.DeviceGetExecAffinitySupport(&pi, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0), CUDA_SUCCESS);
  EXPECT_EQ(pi, 0);
  EXPECT_EQ(x_.DeviceGetExecAffinitySupport(&pi, CU_EXEC_AFFINITY_TYPE_MAX, 0), CUDA_SUCCESS);
  EXPECT_EQ(x_.DeviceGetExecAffinitySupport(nullptr, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.DeviceGetExecAffinitySupport(&pi, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 99),
            CUDA_ERROR_INVALID_DEVICE);
  char luid[8];
  std::memset(luid, 0x5a, sizeof luid);
  unsigned mask = 77;
  EXPECT_EQ(x_.DeviceGetLuid(luid, &mask, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(mask, 77u);
  EXPECT_EQ(x_.DeviceGetLuid(nullptr, &mask, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.DeviceGetLuid(luid, &mask, 99), CUDA_ERROR_INVALID_DEVICE);
}

// dev:misc
TEST_P(DevextTest, Texture1DLinearMaxWidthIs2To30ElementsOr4GiB) {
  struct Case {
    CUarray_format format;
    unsigned channels;
    size_t width;  // 0: CUDA_ERROR_INVALID_VALUE
  };
  const Case cases[] = {
      {CU_AD_FORMAT_UNSIGNED_INT8, 1, size_t{1} << 30},
      {CU_AD_FORMAT_UNSIGNED_INT8, 4, size_t{1} << 30},
      {CU_AD_FORMAT_UNSIGNED_INT16, 4, size_t{1} << 29},
      {CU_AD_FORMAT_FLOAT, 2, size_t{1} << 29},
      {CU_AD_FORMAT_FLOAT, 4, size_t{1} << 28},
      {CU_AD_FORMAT_HALF, 2, size_t{1} << 30},
      {CU_AD_FORMAT_BC1_UNORM, 4, size_t{1} << 29},
      {CU_AD_FORMAT_BC1_UNORM, 1, 0},
      {CU_AD_FORMAT_NV12, 1, 0},
      {CU_AD_FORMAT_FLOAT, 3, 0},
      {CU_AD_FORMAT_FLOAT, 0, 0},
  };
  for (const Case& c : cases) {
    size_t w = 12345;
    const CUresult r = x_.DeviceGetTexture1DLinearMaxWidth(&w, c.format, c.channels, 0);
    if (c.width == 0) {
      EXPECT_EQ(r, CUDA_ERROR_INVALID_VALUE) << c.format << " x" << c.channels;
      EXPECT_EQ(w, 12345u);
    } else {
      EXPECT_EQ(r, CUDA_SUCCESS) << c.format << " x" << c.channels;
      EXPECT_EQ(w, c.width) << c.format << " x" << c.channels;
    }
  }
  size_t w = 0;
  EXPECT_EQ(x_.DeviceGetTexture1DLinearMaxWidth(nullptr, CU_AD_FORMAT_FLOAT, 1, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.DeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 1, 99),
            CUDA_ERROR_INVALID_DEVICE);
}

// dev:atomics
TEST_P(DevextTest, NoAtomicIsHostAtomicAndADeviceIsNotItsOwnPeer) {
  CUatomicOperation ops[CU_ATOMIC_OPERATION_MAX];
  unsigned caps[CU_ATOMIC_OPERATION_MAX];
  for (int i = 0; i < CU_ATOMIC_OPERATION_MAX; ++i) {
    ops[i] = static_cast<CUatomicOperation>(i);
    caps[i] = 0xdead;
  }
  ASSERT_EQ(x_.DeviceGetHostAtomicCapabilities(caps, ops, CU_ATOMIC_OPERATION_MAX, 0),
            CUDA_SUCCESS);
  for (unsigned c : caps) EXPECT_EQ(c, 0u);
  unsigned cap = 77;
  CUatomicOperation bad = CU_ATOMIC_OPERATION_MAX;
  EXPECT_EQ(x_.DeviceGetHostAtomicCapabilities(&cap, &bad, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cap, 0u) << "written before the operation is checked";
  cap = 77;
  EXPECT_EQ(x_.DeviceGetHostAtomicCapabilities(&cap, ops, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cap, 77u);
  EXPECT_EQ(x_.DeviceGetP2PAtomicCapabilities(&cap, ops, 1, 0, 0), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(x_.DeviceGetP2PAtomicCapabilities(&cap, &bad, 1, 0, 0), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(x_.DeviceGetP2PAtomicCapabilities(nullptr, ops, 1, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cap, 77u);
}

// checkpoint:ctx
TEST_P(DevextTest, CheckpointSeesThisProcessRunningAndNoOtherPid) {
  CUprocessState state = static_cast<CUprocessState>(77);
  ASSERT_EQ(x_.CheckpointProcessGetState(getpid(), &state), CUDA_SUCCESS);
  EXPECT_EQ(state, CU_PROCESS_STATE_RUNNING);
  int tid = -7;
  ASSERT_EQ(x_.CheckpointProcessGetRestoreThreadId(getpid(), &tid), CUDA_SUCCESS);
  EXPECT_GT(tid, 0);
  EXPECT_NE(tid, getpid());
  EXPECT_EQ(x_.CheckpointProcessGetState(getpid(), nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.CheckpointProcessGetState(-1, &state), CUDA_ERROR_OPERATING_SYSTEM);
  EXPECT_EQ(x_.CheckpointProcessGetState(0x3fffffff, &state), CUDA_ERROR_OPERATING_SYSTEM);
  EXPECT_EQ(x_.CheckpointProcessGetRestoreThreadId(-1, &tid), CUDA_ERROR_OPERATING_SYSTEM);
}

// dmabuf
TEST_P(DevextTest, DmaBufOfDeviceMemoryNeedsWholeHostPages) {
  CUdeviceptr a = 0;
  ASSERT_EQ(api().cuMemAlloc(&a, 4 << 20), CUDA_SUCCESS);
  int fd = -7;
  ASSERT_EQ(x_.MemGetHandleForAddressRange(&fd, a, 4 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
            CUDA_SUCCESS);
  EXPECT_GE(fd, 0);
  if (fd >= 0) close(fd);
  fd = -7;
  EXPECT_EQ(x_.MemGetHandleForAddressRange(&fd, a, 100, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(fd, -7) << "argument errors write nothing";
  EXPECT_EQ(x_.MemGetHandleForAddressRange(&fd, a, 8 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(fd, -1) << "a range past the allocation writes -1";
  fd = -7;
  EXPECT_EQ(x_.MemGetHandleForAddressRange(&fd, a, 4 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                                           CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE),
            CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(api().cuMemFree(a), CUDA_SUCCESS);
}

// extmem:vmm
TEST_P(DevextTest, ExternalMemoryFromAVmmDescriptorSharesItsBytes) {
  const size_t size = 2 << 20;
  CUmemAllocationProp prop;
  std::memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = Device0();
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = 0;
  ASSERT_EQ(x_.MemCreate(&h, size, &prop, 0), CUDA_SUCCESS);
  CUdeviceptr va = 0;
  ASSERT_EQ(x_.MemAddressReserve(&va, size, 0, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(x_.MemMap(va, size, 0, h, 0), CUDA_SUCCESS);
  CUmemAccessDesc access;
  access.location = Device0();
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ASSERT_EQ(x_.MemSetAccess(va, size, &access, 1), CUDA_SUCCESS);
  const std::vector<unsigned char> first = Pattern(4096, 31), second = Pattern(4096, 32);
  ASSERT_EQ(api().cuMemcpyHtoD(va, first.data(), first.size()), CUDA_SUCCESS);
  int fd = -1;
  ASSERT_EQ(x_.MemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_SUCCESS);
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc;
  std::memset(&desc, 0, sizeof desc);
  desc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  desc.handle.fd = fd;
  desc.size = size;
  CUexternalMemory ext = nullptr;
  ASSERT_EQ(x_.ImportExternalMemory(&ext, &desc), CUDA_SUCCESS);
  EXPECT_EQ(fcntl(fd, F_GETFD), -1) << "the import takes the descriptor";
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC buffer;
  std::memset(&buffer, 0, sizeof buffer);
  buffer.size = size;
  CUdeviceptr p = 0;
  ASSERT_EQ(x_.ExternalMemoryGetMappedBuffer(&p, ext, &buffer), CUDA_SUCCESS);
  EXPECT_NE(p, va) << "a mapping of its own";
  EXPECT_EQ(Read(p, 4096), first);
  ASSERT_EQ(api().cuMemcpyHtoD(p, second.data(), second.size()), CUDA_SUCCESS);
  EXPECT_EQ(Read(va, 4096), second);
  buffer.size = 2 * size;
  CUdeviceptr q = 0;
  EXPECT_EQ(x_.ExternalMemoryGetMappedBuffer(&q, ext, &buffer), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(p), CUDA_SUCCESS);             // UNMEASURED
  EXPECT_EQ(x_.DestroyExternalMemory(ext), CUDA_SUCCESS);  // UNMEASURED
  EXPECT_EQ(x_.MemUnmap(va, size), CUDA_SUCCESS);
  EXPECT_EQ(x_.MemAddressFree(va, size), CUDA_SUCCESS);
  EXPECT_EQ(x_.MemRelease(h), CUDA_SUCCESS);
  // A descriptor that is not open: CUDA_ERROR_UNKNOWN.
  desc.handle.fd = -1;
  EXPECT_EQ(x_.ImportExternalMemory(&ext, &desc), CUDA_ERROR_UNKNOWN);
  desc.size = 0;
  EXPECT_EQ(x_.ImportExternalMemory(&ext, &desc), CUDA_ERROR_INVALID_VALUE);
}

CUHAL_INSTANTIATE_BACKEND_TEST(DevextTest);

}  // namespace
}  // namespace cuhal::testing
