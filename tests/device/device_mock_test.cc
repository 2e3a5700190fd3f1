// Copyright 2026 The cuhal Authors.
// Pins, with the trompeloeil mock of the CUDA table, the exact order in which a Device (and its
// allocator) creates and destroys driver objects, and how each failure is unwound: exactly what
// was done, undone in reverse order, in the device's context, with the caller's context restored.
//
// The mock keeps a model of the calling thread's context stack: cuCtxPushCurrent/cuCtxPopCurrent
// are pinned in the sequence and update it, cuCtxGetCurrent answers from it (allowed anywhere),
// and the creation/destruction calls check that the device's context is current when they run.
// Any call no expectation matches fails the test, so "nothing else happens" is checked too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/memory/cuda_allocator.h"
#include "core/memory/memory_pool.h"
#include "tests/device/test_macros.h"
#include "tests/mocks/mock_cuda_api.h"

namespace cuhal {
namespace {

using ::testing::HasSubstr;
using mocks::MockCudaApi;
using trompeloeil::_;

const CUcontext kCaller = reinterpret_cast<CUcontext>(0xCA11);
const CUcontext kPrimary = reinterpret_cast<CUcontext>(0xC0);
CUstream QueueStream(int i) { return reinterpret_cast<CUstream>(0x5000 + i); }
const CUstream kAllocationStream = reinterpret_cast<CUstream>(0x5A11);
const CUmemoryPool kLocalPool = reinterpret_cast<CUmemoryPool>(0x9001);
const CUmemoryPool kOtherPool = reinterpret_cast<CUmemoryPool>(0x9002);
constexpr std::uint64_t kKeepAll = ~std::uint64_t{0};
constexpr unsigned kNonBlocking = CU_STREAM_NON_BLOCKING;

// The calling thread's context stack, as the mocked driver keeps it.
struct ContextStack {
  std::vector<CUcontext> entries;
  CUcontext top() const { return entries.empty() ? nullptr : entries.back(); }
  void Push(CUcontext context, CUresult result) {
    if (result == CUDA_SUCCESS) entries.push_back(context);
  }
  void Pop(CUcontext* popped, CUresult result) {
    if (result != CUDA_SUCCESS || entries.empty()) return;
    if (popped != nullptr) *popped = entries.back();
    entries.pop_back();
  }
};

// Statuses that reached ReportDroppedStatus during a test.
std::mutex g_dropped_mu;
std::vector<Status> g_dropped;  // guarded by g_dropped_mu
void CaptureDropped(const Status& status) {
  std::lock_guard<std::mutex> lock(g_dropped_mu);
  g_dropped.push_back(status);
}

int Attribute(CUdevice_attribute attribute, bool pools) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return pools ? 1 : 0;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    default: return 0;
  }
}

class MockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mock_.AllowErrorLookups();
    api_ = mock_.Table();
    ContextStack* stack = &stack_;
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuCtxGetCurrent(_))
                           .SIDE_EFFECT(*_1 = stack->top())
                           .RETURN(CUDA_SUCCESS));
    previous_handler_ = SetDroppedStatusHandler(&CaptureDropped);
    std::lock_guard<std::mutex> lock(g_dropped_mu);
    g_dropped.clear();
  }
  void TearDown() override { SetDroppedStatusHandler(previous_handler_); }

  std::vector<Status> Dropped() {
    std::lock_guard<std::mutex> lock(g_dropped_mu);
    return g_dropped;
  }

  // --- one pinned call each, in sequence ---
  void ExpectPush(CUresult result = CUDA_SUCCESS) {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuCtxPushCurrent(kPrimary))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(stack->Push(kPrimary, result))
                          .RETURN(result));
  }
  void ExpectPop(CUresult result = CUDA_SUCCESS) {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuCtxPopCurrent(_))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary)
                          .SIDE_EFFECT(stack->Pop(_1, result))
                          .RETURN(result));
  }
  void ExpectStreamCreate(CUstream stream, CUresult result = CUDA_SUCCESS) {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamCreate(_, kNonBlocking))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary)
                          .SIDE_EFFECT(*_1 = result == CUDA_SUCCESS ? stream : nullptr)
                          .RETURN(result));
  }
  void ExpectStreamSync(CUstream stream, CUresult result = CUDA_SUCCESS) {
    script_.push_back(
        NAMED_REQUIRE_CALL(mock_, cuStreamSynchronize(stream)).IN_SEQUENCE(seq_).RETURN(result));
  }
  // `in_context`: the device's context must be current (the Device destroys everything in it;
  // a standalone CudaAllocator needs no context for cuStreamDestroy).
  void ExpectStreamDestroy(CUstream stream, bool in_context = true) {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamDestroy(stream))
                          .IN_SEQUENCE(seq_)
                          .WITH(!in_context || stack->top() == kPrimary)
                          .RETURN(CUDA_SUCCESS));
  }
  void ExpectPoolCreate(CUmemoryPool pool, CUresult result = CUDA_SUCCESS) {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemPoolCreate(_, _))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary)
                          .WITH(_2->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
                                _2->location.id == 0 &&
                                _2->allocType == CU_MEM_ALLOCATION_TYPE_PINNED &&
                                _2->handleTypes == CU_MEM_HANDLE_TYPE_NONE)
                          .SIDE_EFFECT(*_1 = result == CUDA_SUCCESS ? pool : nullptr)
                          .RETURN(result));
  }
  void ExpectReleaseThreshold(CUmemoryPool pool, std::uint64_t value,
                              CUresult result = CUDA_SUCCESS) {
    script_.push_back(
        NAMED_REQUIRE_CALL(mock_,
                           cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, _))
            .IN_SEQUENCE(seq_)
            .WITH(*static_cast<cuuint64_t*>(_3) == value)
            .RETURN(result));
  }
  void ExpectPoolDestroy(CUmemoryPool pool) {
    script_.push_back(
        NAMED_REQUIRE_CALL(mock_, cuMemPoolDestroy(pool)).IN_SEQUENCE(seq_).RETURN(CUDA_SUCCESS));
  }

  MockCudaApi mock_;
  CudaApi api_;
  ContextStack stack_;
  trompeloeil::sequence seq_;
  std::vector<std::unique_ptr<trompeloeil::expectation>> allowed_;  // after mock_: destroyed first
  std::vector<std::unique_ptr<trompeloeil::expectation>> script_;
  DroppedStatusHandler previous_handler_ = nullptr;
};

// --- Device ---------------------------------------------------------------------------------

class DeviceMockTest : public MockTest {
 protected:
  void SetUp() override {
    MockTest::SetUp();
    stack_.entries = {kCaller};  // the caller has a context of its own current
  }

  // Driver::Create and QueryDevice(0), answered permissively (not pinned).
  void AllowDriverAndDeviceQueries(bool pools = true) {
    mock_.AllowDeviceQueries([pools](CUdevice_attribute a) { return Attribute(a, pools); });
    StatusOr<std::unique_ptr<Driver>> driver = Driver::Create(&api_);
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = std::move(driver).value();
  }

  void ExpectRetain(CUresult result = CUDA_SUCCESS) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuDevicePrimaryCtxRetain(_, 0))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(*_1 = result == CUDA_SUCCESS ? kPrimary : nullptr)
                          .RETURN(result));
  }
  void ExpectRelease() {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuDevicePrimaryCtxRelease(0))
                          .IN_SEQUENCE(seq_)
                          .RETURN(CUDA_SUCCESS));
  }

  // The whole successful creation: retain, push, the queues' streams, the two pools and their
  // thresholds, the allocator's stream, pop.
  void ExpectCreate(int queues, bool pools, bool push = true) {
    ExpectRetain();
    if (push) ExpectPush();
    for (int i = 0; i < queues; ++i) ExpectStreamCreate(QueueStream(i));
    if (pools) {
      ExpectPoolCreate(kLocalPool);
      ExpectReleaseThreshold(kLocalPool, kKeepAll);
      ExpectPoolCreate(kOtherPool);
      ExpectReleaseThreshold(kOtherPool, 0);
      ExpectStreamCreate(kAllocationStream);
    }
    if (push) ExpectPop();
  }
  // The whole destruction: push, wait for the queues, then everything in reverse order.
  void ExpectDestroy(int queues, bool pools, bool push = true) {
    if (push) ExpectPush();
    for (int i = 0; i < queues; ++i) ExpectStreamSync(QueueStream(i));
    if (pools) {
      ExpectStreamDestroy(kAllocationStream);
      ExpectPoolDestroy(kOtherPool);
      ExpectPoolDestroy(kLocalPool);
    }
    for (int i = queues - 1; i >= 0; --i) ExpectStreamDestroy(QueueStream(i));
    if (push) ExpectPop();
    ExpectRelease();
  }

  StatusOr<std::unique_ptr<Device>> Create(int queues, bool async_allocations = true) {
    DeviceParams params;
    params.queue_count = queues;
    params.async_allocations = async_allocations;
    return Device::Create(*driver_, 0, params);
  }

  std::unique_ptr<Driver> driver_;
};

TEST_F(DeviceMockTest, CreatesAndDestroysInOrder) {
  AllowDriverAndDeviceQueries();
  ExpectCreate(/*queues=*/2, /*pools=*/true);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, Create(2));
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller}) << "the caller's context";
  EXPECT_EQ(device->context(), kPrimary);
  EXPECT_EQ(device->queue(0).stream(), QueueStream(0));
  EXPECT_EQ(device->queue(1).stream(), QueueStream(1));
  ASSERT_NE(device->pools(), nullptr);
  EXPECT_EQ(device->pools()->device_local().handle(), kLocalPool);
  EXPECT_EQ(device->pools()->other().handle(), kOtherPool);
  ExpectDestroy(2, true);
  device.reset();
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller});
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(DeviceMockTest, RetainFailureLeavesNothingToUndo) {
  AllowDriverAndDeviceQueries();
  ExpectRetain(CUDA_ERROR_OUT_OF_MEMORY);
  StatusOr<std::unique_ptr<Device>> device = Create(2);
  EXPECT_EQ(device.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(device.status().message(),
            "creating device 0: retaining primary context: cuDevicePrimaryCtxRetain: "
            "CUDA_ERROR_OUT_OF_MEMORY (error string from MockCudaApi)");
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller});
}

TEST_F(DeviceMockTest, PushFailureReleasesThePrimaryContext) {
  AllowDriverAndDeviceQueries();
  ExpectRetain();
  ExpectPush(CUDA_ERROR_INVALID_CONTEXT);
  ExpectRelease();
  StatusOr<std::unique_ptr<Device>> device = Create(2);
  EXPECT_THAT(device.status().message(),
              HasSubstr("creating device 0: making primary context current: cuCtxPushCurrent"));
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller});
}

TEST_F(DeviceMockTest, FirstStreamFailurePopsAndReleases) {
  AllowDriverAndDeviceQueries();
  ExpectRetain();
  ExpectPush();
  ExpectStreamCreate(nullptr, CUDA_ERROR_OUT_OF_MEMORY);
  ExpectPop();
  ExpectRelease();
  StatusOr<std::unique_ptr<Device>> device = Create(2);
  EXPECT_EQ(device.status().message(),
            "creating device 0: creating queue 0: cuStreamCreate: CUDA_ERROR_OUT_OF_MEMORY "
            "(error string from MockCudaApi)");
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller});
}

TEST_F(DeviceMockTest, StreamFailureCreatesNoPoolsAndUnwindsInReverse) {
  // The example: stream creation fails -> pools are not created, the streams made so far
  // are destroyed, the primary context is released and the caller's context is current again.
  AllowDriverAndDeviceQueries();
  ExpectRetain();
  ExpectPush();
  ExpectStreamCreate(QueueStream(0));
  ExpectStreamCreate(QueueStream(1));
  ExpectStreamCreate(nullptr, CUDA_ERROR_OUT_OF_MEMORY);
  ExpectStreamDestroy(QueueStream(1));
  ExpectStreamDestroy(QueueStream(0));
  ExpectPop();
  ExpectRelease();
  StatusOr<std::unique_ptr<Device>> device = Create(3);
  EXPECT_EQ(device.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(device.status().message(),
              HasSubstr("creating device 0: creating queue 2: cuStreamCreate"));
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller});
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(DeviceMockTest, DeviceLocalPoolFailureDestroysTheStreams) {
  AllowDriverAndDeviceQueries();
  ExpectRetain();
  ExpectPush();
  ExpectStreamCreate(QueueStream(0));
  ExpectStreamCreate(QueueStream(1));
  ExpectPoolCreate(nullptr, CUDA_ERROR_OUT_OF_MEMORY);
  ExpectStreamDestroy(QueueStream(1));
  ExpectStreamDestroy(QueueStream(0));
  ExpectPop();
  ExpectRelease();
  StatusOr<std::unique_ptr<Device>> device = Create(2);
  EXPECT_THAT(device.status().message(),
              HasSubstr("creating device 0: creating memory pools: creating the device-local "
                        "pool: cuMemPoolCreate"));
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller});
}

TEST_F(DeviceMockTest, ReleaseThresholdFailureDestroysThatPool) {
  AllowDriverAndDeviceQueries();
  ExpectRetain();
  ExpectPush();
  ExpectStreamCreate(QueueStream(0));
  ExpectPoolCreate(kLocalPool);
  ExpectReleaseThreshold(kLocalPool, kKeepAll, CUDA_ERROR_INVALID_VALUE);
  ExpectPoolDestroy(kLocalPool);
  ExpectStreamDestroy(QueueStream(0));
  ExpectPop();
  ExpectRelease();
  StatusOr<std::unique_ptr<Device>> device = Create(1);
  EXPECT_EQ(device.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(device.status().message(),
              HasSubstr("setting the device-local pool's release threshold to "
                        "18446744073709551615: cuMemPoolSetAttribute"));
}

TEST_F(DeviceMockTest, OtherPoolFailureDestroysTheDeviceLocalPool) {
  AllowDriverAndDeviceQueries();
  ExpectRetain();
  ExpectPush();
  ExpectStreamCreate(QueueStream(0));
  ExpectPoolCreate(kLocalPool);
  ExpectReleaseThreshold(kLocalPool, kKeepAll);
  ExpectPoolCreate(nullptr, CUDA_ERROR_OUT_OF_MEMORY);
  ExpectPoolDestroy(kLocalPool);
  ExpectStreamDestroy(QueueStream(0));
  ExpectPop();
  ExpectRelease();
  StatusOr<std::unique_ptr<Device>> device = Create(1);
  EXPECT_THAT(device.status().message(), HasSubstr("creating the other pool: cuMemPoolCreate"));
}

TEST_F(DeviceMockTest, AllocatorFailureDestroysPoolsThenStreams) {
  AllowDriverAndDeviceQueries();
  ExpectRetain();
  ExpectPush();
  ExpectStreamCreate(QueueStream(0));
  ExpectStreamCreate(QueueStream(1));
  ExpectPoolCreate(kLocalPool);
  ExpectReleaseThreshold(kLocalPool, kKeepAll);
  ExpectPoolCreate(kOtherPool);
  ExpectReleaseThreshold(kOtherPool, 0);
  ExpectStreamCreate(nullptr, CUDA_ERROR_OUT_OF_MEMORY);
  ExpectPoolDestroy(kOtherPool);
  ExpectPoolDestroy(kLocalPool);
  ExpectStreamDestroy(QueueStream(1));
  ExpectStreamDestroy(QueueStream(0));
  ExpectPop();
  ExpectRelease();
  StatusOr<std::unique_ptr<Device>> device = Create(2);
  EXPECT_THAT(device.status().message(),
              HasSubstr("creating the allocator's allocation stream: cuStreamCreate"));
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller});
}

TEST_F(DeviceMockTest, PopFailureIsAnErrorAndTheDeviceIsUndone) {
  AllowDriverAndDeviceQueries();
  ExpectRetain();
  ExpectPush();
  ExpectStreamCreate(QueueStream(0));
  ExpectPoolCreate(kLocalPool);
  ExpectReleaseThreshold(kLocalPool, kKeepAll);
  ExpectPoolCreate(kOtherPool);
  ExpectReleaseThreshold(kOtherPool, 0);
  ExpectStreamCreate(kAllocationStream);
  ExpectPop(CUDA_ERROR_INVALID_CONTEXT);
  // The context is still current (the pop failed), so the undoing pushes nothing.
  ExpectDestroy(1, true, /*push=*/false);
  StatusOr<std::unique_ptr<Device>> device = Create(1);
  EXPECT_THAT(device.status().message(),
              HasSubstr("creating device 0: restoring the caller's context: cuCtxPopCurrent"));
}

TEST_F(DeviceMockTest, AlreadyCurrentContextIsNeitherPushedNorPopped) {
  AllowDriverAndDeviceQueries();
  stack_.entries = {kPrimary};  // e.g. the runtime API made it current
  ExpectCreate(1, true, /*push=*/false);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, Create(1));
  ExpectDestroy(1, true, /*push=*/false);
  device.reset();
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kPrimary});
}

TEST_F(DeviceMockTest, NoPoolsWhenTheDeviceLacksThem) {
  AllowDriverAndDeviceQueries(/*pools=*/false);
  ExpectCreate(2, /*pools=*/false);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, Create(2));
  EXPECT_EQ(device->pools(), nullptr);
  ExpectDestroy(2, false);
}

TEST_F(DeviceMockTest, NoPoolsWhenAsyncAllocationsAreOff) {
  AllowDriverAndDeviceQueries(/*pools=*/true);
  ExpectCreate(1, /*pools=*/false);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device,
                             Create(1, /*async_allocations=*/false));
  EXPECT_EQ(device->pools(), nullptr);
  ExpectDestroy(1, false);
}

TEST_F(DeviceMockTest, BadParamsMakeNoDriverCall) {
  AllowDriverAndDeviceQueries();
  allowed_.clear();  // from here on, any driver call fails the test
  StatusOr<std::unique_ptr<Device>> device = Create(0);
  EXPECT_EQ(device.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device.status().message(),
            "creating device 0: DeviceParams.queue_count must be in [1, 64], got 0");
}

TEST_F(DeviceMockTest, FailedCleanupIsReportedAndTheRestStillHappens) {
  AllowDriverAndDeviceQueries();
  ExpectCreate(1, false);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, Create(1, false));
  ExpectPush();
  ExpectStreamSync(QueueStream(0), CUDA_ERROR_LAUNCH_FAILED);  // an asynchronous failure
  ExpectStreamDestroy(QueueStream(0));
  ExpectPop();
  ExpectRelease();
  device.reset();
  std::vector<Status> dropped = Dropped();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0].message(),
              HasSubstr("destroying device cuda:0: synchronizing queue 0: cuStreamSynchronize: "
                        "CUDA_ERROR_LAUNCH_FAILED"));
}

// --- CudaAllocator --------------------------------------------------------------------------

class AllocatorMockTest : public MockTest {
 protected:
  void SetUp() override {
    MockTest::SetUp();
    info_.ordinal = 0;
    info_.total_memory = std::size_t{80} << 30;
    info_.memory_pools_supported = true;
    info_.managed_memory_supported = true;
    info_.host_register_supported = true;
  }

  std::unique_ptr<CudaAllocator> MakeAllocator(MemoryPools* pools) {
    StatusOr<std::unique_ptr<CudaAllocator>> allocator =
        CudaAllocator::Create(&api_, kPrimary, info_, pools);
    EXPECT_TRUE(allocator.ok()) << allocator.status();
    return allocator.ok() ? std::move(allocator).value() : nullptr;
  }

  // Two pools (no context needed) and an allocator whose stream is created under a push.
  void MakePooledAllocator() {
    ExpectPoolCreate(kLocalPool);
    ExpectReleaseThreshold(kLocalPool, 0);
    ExpectPoolCreate(kOtherPool);
    ExpectReleaseThreshold(kOtherPool, 0);
    ExpectPush();
    ExpectStreamCreate(kAllocationStream);
    ExpectPop();
    stack_.entries = {kPrimary};  // pool creation is checked to run in the context
    StatusOr<std::unique_ptr<MemoryPools>> pools = MemoryPools::Create(&api_, 0, {}, {});
    ASSERT_TRUE(pools.ok()) << pools.status();
    pools_ = std::move(pools).value();
    stack_.entries.clear();
    allocator_ = MakeAllocator(pools_.get());
  }
  void ExpectPooledTeardown() {
    ExpectStreamDestroy(kAllocationStream, /*in_context=*/false);  // ~CudaAllocator
    ExpectPoolDestroy(kOtherPool);           // ~MemoryPools: reverse order
    ExpectPoolDestroy(kLocalPool);
  }

  DeviceInfo info_;
  std::unique_ptr<MemoryPools> pools_;
  std::unique_ptr<CudaAllocator> allocator_;  // declared after pools_: destroyed first
};

TEST_F(AllocatorMockTest, DeviceLocalAllocateAndFreeRunInTheContext) {
  std::unique_ptr<CudaAllocator> allocator = MakeAllocator(nullptr);
  const CUdeviceptr ptr = 0xD000;
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemAlloc(_, 4096u))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_1 = ptr)
                        .RETURN(CUDA_SUCCESS));
  ExpectPop();
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, allocator->Allocate({}, 4096));
  EXPECT_EQ(buffer.device_ptr(), ptr);
  ExpectPush();
  script_.push_back(
      NAMED_REQUIRE_CALL(mock_, cuMemFree(ptr)).IN_SEQUENCE(seq_).RETURN(CUDA_SUCCESS));
  ExpectPop();
  CUHAL_EXPECT_OK(buffer.Reset());
  EXPECT_TRUE(stack_.entries.empty());
}

TEST_F(AllocatorMockTest, PinnedMappingFailureFreesTheHostMemory) {
  std::unique_ptr<CudaAllocator> allocator = MakeAllocator(nullptr);
  static char host[4096];
  ExpectPush();
  script_.push_back(
      NAMED_REQUIRE_CALL(mock_, cuMemHostAlloc(_, 4096u,
                                               static_cast<unsigned>(CU_MEMHOSTALLOC_PORTABLE |
                                                                     CU_MEMHOSTALLOC_DEVICEMAP)))
          .IN_SEQUENCE(seq_)
          .SIDE_EFFECT(*_1 = host)
          .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemHostGetDevicePointer(_, host, 0u))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_ERROR_OUT_OF_MEMORY));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemFreeHost(host))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_SUCCESS));
  ExpectPop();
  StatusOr<Buffer> buffer =
      allocator->Allocate({.heap = MemoryHeap::kHostPinned, .pool = std::nullopt}, 4096);
  EXPECT_EQ(buffer.status().message(),
            "allocating 4096 bytes of host-pinned memory: mapping it for the device: "
            "cuMemHostGetDevicePointer: CUDA_ERROR_OUT_OF_MEMORY (error string from "
            "MockCudaApi)");
  EXPECT_EQ(allocator->live_buffers(), 0u);
}

TEST_F(AllocatorMockTest, ImportMappingFailureUnregisters) {
  std::unique_ptr<CudaAllocator> allocator = MakeAllocator(nullptr);
  static char host[4096];
  ExpectPush();
  script_.push_back(
      NAMED_REQUIRE_CALL(mock_,
                         cuMemHostRegister(host, 4096u,
                                           static_cast<unsigned>(CU_MEMHOSTREGISTER_PORTABLE |
                                                                 CU_MEMHOSTREGISTER_DEVICEMAP)))
          .IN_SEQUENCE(seq_)
          .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemHostGetDevicePointer(_, host, 0u))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_ERROR_INVALID_VALUE));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemHostUnregister(host))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_SUCCESS));
  ExpectPop();
  StatusOr<Buffer> buffer = allocator->Import(
      {.heap = MemoryHeap::kImportedHost, .pool = std::nullopt}, host, sizeof(host));
  EXPECT_THAT(buffer.status().message(), HasSubstr("cuMemHostGetDevicePointer"));
}

TEST_F(AllocatorMockTest, PopFailureAfterAllocationFreesTheMemory) {
  std::unique_ptr<CudaAllocator> allocator = MakeAllocator(nullptr);
  const CUdeviceptr ptr = 0xD000;
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemAlloc(_, 64u))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_1 = ptr)
                        .RETURN(CUDA_SUCCESS));
  ExpectPop(CUDA_ERROR_INVALID_CONTEXT);
  ContextStack* stack = &stack_;
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemFree(ptr))
                        .IN_SEQUENCE(seq_)
                        .WITH(stack->top() == kPrimary)
                        .RETURN(CUDA_SUCCESS));
  StatusOr<Buffer> buffer = allocator->Allocate({}, 64);
  EXPECT_THAT(buffer.status().message(), HasSubstr("cuCtxPopCurrent"));
  EXPECT_EQ(allocator->live_buffers(), 0u);
}

TEST_F(AllocatorMockTest, PoolAllocationIsSynchronizedAndFreedOnTheAllocationStream) {
  MakePooledAllocator();
  ASSERT_NE(allocator_, nullptr);
  const CUdeviceptr ptr = 0xE000;
  ExpectPush();
  script_.push_back(
      NAMED_REQUIRE_CALL(mock_, cuMemAllocFromPoolAsync(_, 1024u, kOtherPool, kAllocationStream))
          .IN_SEQUENCE(seq_)
          .SIDE_EFFECT(*_1 = ptr)
          .RETURN(CUDA_SUCCESS));
  ExpectStreamSync(kAllocationStream);
  ExpectPop();
  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer buffer,
      allocator_->Allocate({.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kOther},
                           1024));
  EXPECT_EQ(buffer.pool(), MemoryPoolKind::kOther);
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemFreeAsync(ptr, kAllocationStream))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_SUCCESS));
  ExpectPop();
  CUHAL_EXPECT_OK(buffer.Reset());
  ExpectPooledTeardown();
}

TEST_F(AllocatorMockTest, PoolSynchronizationFailureGivesTheMemoryBack) {
  MakePooledAllocator();
  ASSERT_NE(allocator_, nullptr);
  const CUdeviceptr ptr = 0xE000;
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemAllocFromPoolAsync(_, 1024u, kLocalPool, _))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_1 = ptr)
                        .RETURN(CUDA_SUCCESS));
  ExpectStreamSync(kAllocationStream, CUDA_ERROR_LAUNCH_FAILED);
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemFreeAsync(ptr, kAllocationStream))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_SUCCESS));
  ExpectPop();
  StatusOr<Buffer> buffer = allocator_->Allocate(
      {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal}, 1024);
  EXPECT_EQ(buffer.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(buffer.status().message(),
              HasSubstr("allocating 1024 bytes of device-local memory from the device-local pool: "
                        "waiting for the pool allocation: cuStreamSynchronize"));
  ExpectPooledTeardown();
}

TEST_F(AllocatorMockTest, FailedQueuedFreeFallsBackToASynchronousFree) {
  MakePooledAllocator();
  ASSERT_NE(allocator_, nullptr);
  const CUdeviceptr ptr = 0xE000;
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemAllocFromPoolAsync(_, 1024u, kLocalPool, _))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_1 = ptr)
                        .RETURN(CUDA_SUCCESS));
  ExpectStreamSync(kAllocationStream);
  ExpectPop();
  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer buffer,
      allocator_->Allocate({.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal},
                           1024));
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemFreeAsync(ptr, kAllocationStream))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_ERROR_OUT_OF_MEMORY));
  script_.push_back(
      NAMED_REQUIRE_CALL(mock_, cuMemFree(ptr)).IN_SEQUENCE(seq_).RETURN(CUDA_SUCCESS));
  ExpectPop();
  CUHAL_EXPECT_OK(buffer.Reset());  // recovered: the memory went back synchronously
  std::vector<Status> dropped = Dropped();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0].message(),
              HasSubstr("queueing the free of pool memory (freed synchronously): cuMemFreeAsync"));
  ExpectPooledTeardown();
}

}  // namespace
}  // namespace cuhal
