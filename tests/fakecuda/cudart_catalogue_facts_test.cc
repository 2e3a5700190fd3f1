// Copyright 2026 The cuhal Authors.
// Driver answers learnt from the CUDA runtime catalogue (tests/cudart_catalogue/) run on the real
// driver: measured 2026-12-06 on H100 80GB HBM3, driver 580.159.04, through runtime calls (the
// program named on each test); which driver call the runtime makes was traced on the fake
// (docs/driver_facts.md, "The CUDA runtime catalogue"). Fake only: the entry points are called
// directly, and a sticky fault would leave a real process's device unusable.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>

#include "fakecuda/device_profile.h"
#include "fakecuda/fake_driver.h"
#include "fakecuda/stream_work.h"
#include "tests/fakecuda/fake_fixture.h"

namespace cuhal::testing {
namespace {

class CudartCatalogueFactsTest : public FakeDriverTest {
 protected:
  void SetUp() override {
    FakeDriverTest::SetUp();
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  }
  // Retains the primary context of device 0 and makes it current (as the runtime does).
  CUcontext RetainCurrent() {
    CUcontext primary = nullptr;
    EXPECT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuCtxSetCurrent(primary), CUDA_SUCCESS);
    return primary;
  }
  // Queues stream work that faults on the legacy stream and synchronizes: the current context
  // then holds the sticky CUDA_ERROR_ILLEGAL_ADDRESS (a kernel writing through a null pointer).
  void Fault() {
    fakecuda::StreamWork work;
    work.what = "kernel writing through a null pointer";
    work.run = [] { return CUDA_ERROR_ILLEGAL_ADDRESS; };
    ASSERT_EQ(fakecuda::EnqueueStreamWork(CU_STREAM_LEGACY, std::move(work)), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  }
};

// device.cu: cudaDeviceGetLimit(PersistingL2CacheSize) read 9830400 on the H100, whose
// MAX_PERSISTING_L2_CACHE_SIZE is 32768000; the H200 reads 11796480 of 39321600. Both are three
// tenths of the maximum (the limit is set in tenths). The fake used the H200's constant.
TEST(CudartCataloguePersistingL2Test, DefaultIsThreeTenthsOfTheDevicesMaximum) {
  fakecuda::DeviceProfile h100;
  std::string error;
  ASSERT_TRUE(fakecuda::LoadProfile(CUHAL_H100_PROFILE_FILE, &h100, &error)) << error;
  ASSERT_EQ(h100.Attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE), 32768000);
  for (const auto& [profile, expected] :
       {std::pair{h100, std::size_t{9830400}},
        std::pair{fakecuda::BuiltinH200Profile(), std::size_t{11796480}}}) {
    fakecuda::DriverOptions options;
    options.devices.push_back(profile);
    fakecuda::ScopedDriver driver(options);
    ASSERT_TRUE(driver.ok()) << driver.error();
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    CUcontext primary = nullptr;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(primary), CUDA_SUCCESS);
    std::size_t value = 0;
    EXPECT_EQ(cuCtxGetLimit(&value, CU_LIMIT_PERSISTING_L2_CACHE_SIZE), CUDA_SUCCESS);
    EXPECT_EQ(value, expected) << profile.name;
    EXPECT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
    EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  }
}

// device.cu: cudaGetDevice right after cudaDeviceReset succeeded with device 0 on the H100. The
// runtime calls cuCtxGetDevice_v2(&device, NULL) while the reset (inactive) primary context is
// still current; the fake answered CONTEXT_IS_DESTROYED (cudaErrorContextIsDestroyed, device -1),
// where the plain cuCtxGetDevice already succeeded as measured on the H200.
TEST_F(CudartCatalogueFactsTest, GetDeviceV2OfTheResetCurrentPrimaryContextSucceeds) {
  CUcontext primary = RetainCurrent();
  ASSERT_EQ(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
  CUcontext current = nullptr;
  ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
  ASSERT_EQ(current, primary) << "the reset context stays current";
  CUdevice device = -1;
  EXPECT_EQ(cuCtxGetDevice_v2(&device, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(device, 0);
  device = -1;
  EXPECT_EQ(cuCtxGetDevice(&device), CUDA_SUCCESS);
  EXPECT_EQ(device, 0);
  CUdeviceptr ptr = 0;
  EXPECT_EQ(cuMemAlloc(&ptr, 16), CUDA_ERROR_CONTEXT_IS_DESTROYED) << "still destroyed";
  EXPECT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);  // the retain is still owed
}

// device.cu: without a fault, a reset leaves the device usable (the runtime retains again).
TEST_F(CudartCatalogueFactsTest, ResetWithoutAFaultLeavesTheDeviceUsable) {
  RetainCurrent();
  ASSERT_EQ(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
  CUcontext again = nullptr;
  EXPECT_EQ(cuDevicePrimaryCtxRetain(&again, 0), CUDA_SUCCESS);
  CUdeviceptr ptr = 0;
  EXPECT_EQ(cuMemAlloc(&ptr, 16), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(ptr), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

// errors.cu: after a kernel wrote through a null pointer (cudaErrorIllegalAddress, sticky) and
// cudaDeviceReset, every later runtime call answered cudaErrorDevicesUnavailable, even after a
// second cudaDeviceReset (which itself succeeded). The runtime gets it from retaining the primary
// context again: CUDA_ERROR_DEVICE_UNAVAILABLE, for the rest of the process. cuCtxCreate answers
// the same (UNMEASURED: a choice).
TEST_F(CudartCatalogueFactsTest, RetainAfterAFaultedContextWasResetIsDeviceUnavailable) {
  RetainCurrent();
  ASSERT_NO_FATAL_FAILURE(Fault());
  ASSERT_EQ(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
  CUcontext again = nullptr;
  EXPECT_EQ(cuDevicePrimaryCtxRetain(&again, 0), CUDA_ERROR_DEVICE_UNAVAILABLE);
  EXPECT_EQ(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS) << "a second reset succeeds";
  EXPECT_EQ(cuDevicePrimaryCtxRetain(&again, 0), CUDA_ERROR_DEVICE_UNAVAILABLE) << "for good";
  CUcontext created = nullptr;
  EXPECT_EQ(cuCtxCreate(&created, nullptr, 0, 0), CUDA_ERROR_DEVICE_UNAVAILABLE);  // UNMEASURED
  int count = 0;
  EXPECT_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS) << "calls that need no context still work";
  EXPECT_EQ(count, 1);
  EXPECT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);  // the first retain is still owed
}

// The same for a faulted created context destroyed (UNMEASURED: the fake treats every
// destruction of a faulted context alike); another device is unaffected.
TEST_F(CudartCatalogueFactsTest, DestroyingAFaultedCreatedContextMakesOnlyItsDeviceUnavailable) {
  BackendOptions two;
  two.device_count = 2;
  ASSERT_NO_FATAL_FAILURE(Remake(two));
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext created = nullptr;
  ASSERT_EQ(cuCtxCreate(&created, nullptr, 0, 0), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(Fault());
  ASSERT_EQ(cuCtxDestroy(created), CUDA_SUCCESS);
  CUcontext primary = nullptr;
  EXPECT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_ERROR_DEVICE_UNAVAILABLE);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 1), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
}

// pools.cu: cudaDeviceSetMemPool(99, pool) answered cudaErrorInvalidValue on the H100 (the
// runtime passes the ordinal on: cuDeviceSetMemPool(99, pool)); the fake answered
// CUDA_ERROR_INVALID_DEVICE (cudaErrorInvalidDevice).
TEST_F(CudartCatalogueFactsTest, SetMemPoolOnAnOrdinalOutOfRangeIsInvalidValue) {
  RetainCurrent();
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuDeviceGetDefaultMemPool(&pool, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuDeviceSetMemPool(99, pool), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceSetMemPool(-1, pool), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceSetMemPool(0, pool), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

}  // namespace
}  // namespace cuhal::testing
