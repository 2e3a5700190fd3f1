// Copyright 2026 The cuhal Authors.
// Fake-only: the devext entry points (fakecuda/entry/devext_*.cc) where the real driver crashes
// or where the fake's answer is its own. Measured 2026-12-06 (H100, driver 580.159.04;
// ci/gpu-probes/devext_probe.cc, docs/driver_facts.md "Device extras, pool getters, external
// memory and batches"): the real driver crashes (SIGNAL 11) on a null handle pointer in
// cuDeviceRegisterAsyncNotification, garbage pools in cuMemSetMemPool and
// cuMemPoolExportToShareableHandle, garbage external memory and semaphore objects, garbage
// graphics resources and CU_STREAM_PER_THREAD in cuMemcpyBatchAsync_v2, and aborts on a 0-level
// mipmapped array of external memory. The fake answers each with an error and leaks nothing;
// it also takes what the real driver has that it does not model (host and managed pools) as
// CUDA_ERROR_NOT_SUPPORTED, and shares no pool with another process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fakecuda/fake_driver.h"
#include "tests/fakecuda/fake_fixture.h"

namespace cuhal::testing {
namespace {

template <typename T>
T DevextGarbage() {
  constexpr std::uint64_t kValue = 0x5a5a5a5a5a5a0000ull;
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(static_cast<std::uintptr_t>(kValue));
  } else {
    return static_cast<T>(kValue);
  }
}

// Descriptors this process has open.
int OpenDescriptors() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd) {
    if (fcntl(fd, F_GETFD) != -1) ++n;
  }
  return n;
}

class DevextFakeTest : public FakeDriverTest {
 protected:
  void SetUp() override {
    FakeDriverTest::SetUp();
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(primary_), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cuStreamDestroy(stream_), CUDA_SUCCESS);
    cuCtxSetCurrent(nullptr);
    EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    EXPECT_EQ(fake().LiveObjects().Total(), 0) << fake().LeakReport();
    FakeDriverTest::TearDown();
  }
  CUcontext primary_ = nullptr;
  CUstream stream_ = nullptr;
};

TEST_F(DevextFakeTest, WhereTheRealDriverCrashesTheFakeAnswersAnError) {
  EXPECT_EQ(cuDeviceRegisterAsyncNotification(
                0, [](CUasyncNotificationInfo*, void*, CUasyncCallbackHandle) {}, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  CUmemLocation loc;
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = 0;
  EXPECT_EQ(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, DevextGarbage<CUmemoryPool>()),
            CUDA_ERROR_INVALID_VALUE);
  int fd = -7;
  EXPECT_EQ(cuMemPoolExportToShareableHandle(&fd, DevextGarbage<CUmemoryPool>(),
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(fd, -7);
  CUdeviceptr p = 0;
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd;
  std::memset(&bd, 0, sizeof bd);
  bd.size = 4096;
  EXPECT_EQ(cuExternalMemoryGetMappedBuffer(&p, DevextGarbage<CUexternalMemory>(), &bd),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDestroyExternalMemory(DevextGarbage<CUexternalMemory>()), CUDA_ERROR_INVALID_VALUE);
  CUexternalSemaphore sem = DevextGarbage<CUexternalSemaphore>();
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp;
  std::memset(&sp, 0, sizeof sp);
  EXPECT_EQ(cuSignalExternalSemaphoresAsync(&sem, &sp, 1, stream_), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuDestroyExternalSemaphore(sem), CUDA_ERROR_INVALID_HANDLE);
  CUgraphicsResource res = DevextGarbage<CUgraphicsResource>();
  EXPECT_EQ(cuGraphicsMapResources(1, &res, stream_), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuGraphicsUnregisterResource(res), CUDA_ERROR_INVALID_HANDLE);
  // The per-thread stream is a stream like any other to the fake's batch copy.
  CUdeviceptr a = 0, b = 0;
  ASSERT_EQ(cuMemAlloc(&a, 4096), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&b, 4096), CUDA_SUCCESS);
  CUmemcpyAttributes at;
  std::memset(&at, 0, sizeof at);
  at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t idx = 0, size = 4096;
  EXPECT_EQ(cuMemcpyBatchAsync(&b, &a, &size, 1, &at, &idx, 1, CU_STREAM_PER_THREAD), CUDA_SUCCESS);
  // A garbage destination: the real driver took it; the fake cannot write there.
  CUdeviceptr g = DevextGarbage<CUdeviceptr>();
  EXPECT_EQ(cuMemcpyBatchAsync(&g, &a, &size, 1, &at, &idx, 1, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(b), CUDA_SUCCESS);
}

TEST_F(DevextFakeTest, HostAndManagedDefaultPoolsAreNotModelled) {
  for (CUmemLocationType type : {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA}) {
    CUmemLocation loc;
    loc.type = type;
    loc.id = 0;
    CUmemoryPool p = nullptr;
    EXPECT_EQ(cuMemGetDefaultMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
              CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cuMemGetMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED), CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(p, nullptr);
  }
}

TEST_F(DevextFakeTest, OwnPoolDescriptorImportsAsThePoolItself) {
  CUmemPoolProps props;
  std::memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  int fd = -1;
  ASSERT_EQ(
      cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
      CUDA_SUCCESS);
  CUmemoryPool imported = nullptr;
  EXPECT_EQ(cuMemPoolImportFromShareableHandle(&imported,
                                               reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_SUCCESS);  // UNMEASURED
  EXPECT_EQ(imported, pool);
  int devnull = open("/dev/null", O_RDONLY);
  EXPECT_EQ(cuMemPoolImportFromShareableHandle(
                &imported, reinterpret_cast<void*>(static_cast<intptr_t>(devnull)),
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);  // UNMEASURED
  close(devnull);
  close(fd);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  // The descriptor of a destroyed pool names nothing.
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  ASSERT_EQ(
      cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
      CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolImportFromShareableHandle(&imported,
                                               reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);
  close(fd);
}

TEST_F(DevextFakeTest, ExternalMemoryLeavesNoDescriptorOpen) {
  const int open_before = OpenDescriptors();
  CUmemAllocationProp prop;
  std::memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = 0;
  ASSERT_EQ(cuMemCreate(&h, 2 << 20, &prop, 0), CUDA_SUCCESS);
  int fd = -1;
  ASSERT_EQ(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_SUCCESS);
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc;
  std::memset(&desc, 0, sizeof desc);
  desc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  desc.handle.fd = fd;
  desc.size = 2 << 20;
  CUexternalMemory ext = nullptr;
  ASSERT_EQ(cuImportExternalMemory(&ext, &desc), CUDA_SUCCESS);
  // The memory outlives its handle while the external memory object holds it.
  EXPECT_EQ(cuMemRelease(h), CUDA_SUCCESS);
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd;
  std::memset(&bd, 0, sizeof bd);
  bd.offset = 100;  // unaligned: taken
  bd.size = 4096;
  CUdeviceptr p = 0;
  ASSERT_EQ(cuExternalMemoryGetMappedBuffer(&p, ext, &bd), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8(p, 7, 4096), CUDA_SUCCESS);
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md;
  std::memset(&md, 0, sizeof md);
  md.arrayDesc.Width = 64;
  md.arrayDesc.Format = CU_AD_FORMAT_FLOAT;
  md.arrayDesc.NumChannels = 1;
  CUmipmappedArray mm = nullptr;
  EXPECT_EQ(cuExternalMemoryGetMappedMipmappedArray(&mm, ext, &md), CUDA_ERROR_INVALID_VALUE)
      << "0 levels (the real driver aborts)";
  md.numLevels = 1;
  ASSERT_EQ(cuExternalMemoryGetMappedMipmappedArray(&mm, ext, &md), CUDA_SUCCESS);
  EXPECT_EQ(cuMipmappedArrayDestroy(mm), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(cuDestroyExternalMemory(ext), CUDA_SUCCESS);
  EXPECT_EQ(cuDestroyExternalMemory(ext), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(OpenDescriptors(), open_before) << "the import took the exported descriptor";
}

}  // namespace
}  // namespace cuhal::testing
