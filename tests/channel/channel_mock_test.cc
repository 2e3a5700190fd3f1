// Copyright 2026 The cuhal Authors.
// Pins, with the trompeloeil mocks of both tables, the exact calls Device::CreateChannel, Split and
// a Channel's destruction make, in order, and how each failure is unwound: the communicator is
// made and destroyed with the device's context current and the caller's context restored after;
// a failed initialization leaves nothing to destroy; a failed destroy falls back to an abort.
//
// As in tests/device/device_mock_test.cc, the mocked driver keeps the calling thread's context
// stack: cuCtxPushCurrent/cuCtxPopCurrent are pinned and update it, cuCtxGetCurrent answers from
// it, and the NCCL calls check that the device's context is current. Any unexpected call fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "core/channel/channel.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "tests/device/test_macros.h"
#include "tests/mocks/mock_cuda_api.h"
#include "tests/mocks/mock_nccl_api.h"

namespace cuhal {
namespace {

using ::testing::HasSubstr;
using mocks::MockCudaApi;
using mocks::MockNcclApi;
using trompeloeil::_;

const CUcontext kCaller = reinterpret_cast<CUcontext>(0xCA11);
const CUcontext kPrimary = reinterpret_cast<CUcontext>(0xC0);
const CUstream kQueueStream = reinterpret_cast<CUstream>(0x5000);
const ncclComm_t kComm = reinterpret_cast<ncclComm_t>(0xC033);
const ncclComm_t kSplitComm = reinterpret_cast<ncclComm_t>(0xC044);

struct ContextStack {
  std::vector<CUcontext> entries;
  CUcontext top() const { return entries.empty() ? nullptr : entries.back(); }
  void Pop(CUcontext* popped) {
    if (popped != nullptr) *popped = top();
    entries.pop_back();
  }
};

std::mutex g_dropped_mu;
std::vector<Status> g_dropped;  // guarded by g_dropped_mu
void CaptureDropped(const Status& status) {
  std::lock_guard<std::mutex> lock(g_dropped_mu);
  g_dropped.push_back(status);
}

int Attribute(CUdevice_attribute attribute) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    default: return 0;  // no memory pools: the device makes one stream per queue and no pools
  }
}

class ChannelMockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mock_.AllowErrorLookups();
    nccl_mock_.AllowErrorLookups();
    api_ = mock_.Table();
    nccl_ = nccl_mock_.Table();
    stack_.entries = {kCaller};
    ContextStack* stack = &stack_;
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuCtxGetCurrent(_))
                           .SIDE_EFFECT(*_1 = stack->top())
                           .RETURN(CUDA_SUCCESS));
    mock_.AllowDeviceQueries(&Attribute);
    previous_handler_ = SetDroppedStatusHandler(&CaptureDropped);
    {
      std::lock_guard<std::mutex> lock(g_dropped_mu);
      g_dropped.clear();
    }
    StatusOr<std::unique_ptr<Driver>> driver = Driver::Create(&api_, &nccl_);
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = std::move(driver).value();
    // The device: retain, push, its queue's stream, pop.
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuDevicePrimaryCtxRetain(_, 0))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(*_1 = kPrimary)
                          .RETURN(CUDA_SUCCESS));
    ExpectPush();
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamCreate(_, _))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(*_1 = kQueueStream)
                          .RETURN(CUDA_SUCCESS));
    ExpectPop();
    DeviceParams params;
    params.queue_count = 1;
    StatusOr<std::unique_ptr<Device>> device = Device::Create(*driver_, 0, params);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(device).value();
    StatusOr<std::shared_ptr<InProcessChannelWorld>> world = InProcessChannelWorld::Create(1);
    ASSERT_TRUE(world.ok()) << world.status();
    world_ = *world;
    device_->ReplaceChannelProvider(*world_->ProviderForRank(0));
  }

  void TearDown() override {
    if (device_ != nullptr) {
      // push, wait for the queue, destroy its stream, pop, release.
      ExpectPush();
      script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamSynchronize(kQueueStream))
                            .IN_SEQUENCE(seq_)
                            .RETURN(CUDA_SUCCESS));
      script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamDestroy(kQueueStream))
                            .IN_SEQUENCE(seq_)
                            .RETURN(CUDA_SUCCESS));
      ExpectPop();
      script_.push_back(NAMED_REQUIRE_CALL(mock_, cuDevicePrimaryCtxRelease(0))
                            .IN_SEQUENCE(seq_)
                            .RETURN(CUDA_SUCCESS));
      device_.reset();
    }
    EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller}) << "the caller's context";
    SetDroppedStatusHandler(previous_handler_);
  }

  std::vector<Status> Dropped() {
    std::lock_guard<std::mutex> lock(g_dropped_mu);
    return g_dropped;
  }

  void ExpectPush() {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuCtxPushCurrent(kPrimary))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(stack->entries.push_back(kPrimary))
                          .RETURN(CUDA_SUCCESS));
  }
  void ExpectPop() {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuCtxPopCurrent(_))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary)
                          .SIDE_EFFECT(stack->Pop(_1))
                          .RETURN(CUDA_SUCCESS));
  }
  void ExpectUniqueId(ncclResult_t result = ncclSuccess) {
    script_.push_back(NAMED_REQUIRE_CALL(nccl_mock_, ncclGetUniqueId(_))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(std::memset(_1->internal, 0x42, sizeof(_1->internal)))
                          .RETURN(result));
  }
  void ExpectInitRank(ncclResult_t result = ncclSuccess) {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(nccl_mock_, ncclCommInitRank(_, 1, _, 0))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary)
                          .WITH(_3.internal[0] == 0x42 && _3.internal[127] == 0x42)
                          .SIDE_EFFECT(*_1 = result == ncclSuccess ? kComm : nullptr)
                          .RETURN(result));
  }
  void ExpectCommDestroy(ncclComm_t comm, ncclResult_t result = ncclSuccess) {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(nccl_mock_, ncclCommDestroy(comm))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary)
                          .RETURN(result));
  }
  // A whole successful CreateChannel (rank 0 of 1, default id).
  void ExpectCreateChannel() {
    ExpectUniqueId();
    ExpectPush();
    ExpectInitRank();
    ExpectPop();
  }
  void ExpectDestroyChannel(ncclComm_t comm) {
    ExpectPush();
    ExpectCommDestroy(comm);
    ExpectPop();
  }

  MockCudaApi mock_;
  MockNcclApi nccl_mock_;
  CudaApi api_;
  NcclApi nccl_;
  ContextStack stack_;
  trompeloeil::sequence seq_;
  std::vector<std::unique_ptr<trompeloeil::expectation>> allowed_;
  std::vector<std::unique_ptr<trompeloeil::expectation>> script_;
  DroppedStatusHandler previous_handler_ = nullptr;
  std::unique_ptr<Driver> driver_;
  std::shared_ptr<InProcessChannelWorld> world_;
  std::unique_ptr<Device> device_;
};

TEST_F(ChannelMockTest, CreatesInOrderAndDestroysInTheDevicesContext) {
  ExpectCreateChannel();
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Channel> channel, device_->CreateChannel());
  EXPECT_EQ(stack_.entries, std::vector<CUcontext>{kCaller});
  EXPECT_EQ(channel->comm(), kComm);
  EXPECT_EQ(channel->rank(), 0);
  EXPECT_EQ(channel->count(), 1);
  EXPECT_EQ(device_->live_channels(), 1);
  ExpectDestroyChannel(kComm);
  channel.reset();
  EXPECT_EQ(device_->live_channels(), 0);
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(ChannelMockTest, InitRankFailureLeavesNothingToDestroy) {
  ExpectUniqueId();
  ExpectPush();
  ExpectInitRank(ncclSystemError);
  ExpectPop();
  StatusOr<std::unique_ptr<Channel>> channel = device_->CreateChannel();
  EXPECT_EQ(channel.status().code(), StatusCode::kUnavailable) << channel.status();
  EXPECT_THAT(channel.status().message(),
              HasSubstr("creating channel on device cuda:0 (rank 0 of 1, queue 0): "
                        "ncclCommInitRank: ncclSystemError"));
  EXPECT_EQ(device_->live_channels(), 0);
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(ChannelMockTest, UniqueIdFailureFailsTheProvidersRound) {
  // A world of 2: rank 0 cannot make the id, so rank 1 must not wait for it.
  StatusOr<std::shared_ptr<InProcessChannelWorld>> world = InProcessChannelWorld::Create(2);
  ASSERT_TRUE(world.ok());
  device_->ReplaceChannelProvider(*(*world)->ProviderForRank(0));
  ExpectUniqueId(ncclInternalError);
  StatusOr<std::unique_ptr<Channel>> channel = device_->CreateChannel();
  EXPECT_EQ(channel.status().code(), StatusCode::kInternal) << channel.status();
  EXPECT_THAT(channel.status().message(), HasSubstr("ncclGetUniqueId: ncclInternalError"));
  ChannelId id{};
  Status other = (*world)->ExchangeId("", 1, 2, id);
  EXPECT_EQ(other.code(), StatusCode::kAborted) << other;
  EXPECT_THAT(other.message(), HasSubstr("ncclGetUniqueId"));
}

TEST_F(ChannelMockTest, PushFailureMakesNoNcclCall) {
  ExpectUniqueId();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuCtxPushCurrent(kPrimary))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_ERROR_INVALID_CONTEXT));
  StatusOr<std::unique_ptr<Channel>> channel = device_->CreateChannel();
  EXPECT_EQ(channel.status().code(), StatusCode::kInvalidArgument) << channel.status();
  EXPECT_THAT(channel.status().message(), HasSubstr("cuCtxPushCurrent"));
}

TEST_F(ChannelMockTest, DestroyFailureAbortsTheCommunicatorInstead) {
  ExpectCreateChannel();
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Channel> channel, device_->CreateChannel());
  ExpectPush();
  ExpectCommDestroy(kComm, ncclUnhandledCudaError);
  script_.push_back(
      NAMED_REQUIRE_CALL(nccl_mock_, ncclCommAbort(kComm)).IN_SEQUENCE(seq_).RETURN(ncclSuccess));
  ExpectPop();
  channel.reset();
  std::vector<Status> dropped = Dropped();
  ASSERT_EQ(dropped.size(), 1u);  // the abort succeeded
  EXPECT_THAT(dropped[0].message(), HasSubstr("aborting the communicator instead"));
  EXPECT_THAT(dropped[0].message(), HasSubstr("ncclCommDestroy: ncclUnhandledCudaError"));
}

TEST_F(ChannelMockTest, SplitQueriesTheNewRankAndCount) {
  ExpectCreateChannel();
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Channel> channel, device_->CreateChannel());
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(nccl_mock_, ncclCommSplit(kComm, 3, 9, _, nullptr))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_4 = kSplitComm)
                        .RETURN(ncclSuccess));
  script_.push_back(NAMED_REQUIRE_CALL(nccl_mock_, ncclCommUserRank(kSplitComm, _))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_2 = 0)
                        .RETURN(ncclSuccess));
  script_.push_back(NAMED_REQUIRE_CALL(nccl_mock_, ncclCommCount(kSplitComm, _))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_2 = 1)
                        .RETURN(ncclSuccess));
  ExpectPop();
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Channel> split, channel->Split(3, 9));
  EXPECT_EQ(split->comm(), kSplitComm);
  EXPECT_EQ(&split->queue(), &channel->queue());
  ExpectDestroyChannel(kSplitComm);
  split.reset();
  ExpectDestroyChannel(kComm);
  channel.reset();
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(ChannelMockTest, SplitQueryFailureDestroysTheNewCommunicator) {
  ExpectCreateChannel();
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Channel> channel, device_->CreateChannel());
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(nccl_mock_, ncclCommSplit(kComm, 0, 0, _, nullptr))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_4 = kSplitComm)
                        .RETURN(ncclSuccess));
  script_.push_back(NAMED_REQUIRE_CALL(nccl_mock_, ncclCommUserRank(kSplitComm, _))
                        .IN_SEQUENCE(seq_)
                        .RETURN(ncclInvalidUsage));
  ExpectCommDestroy(kSplitComm);
  ExpectPop();
  StatusOr<std::unique_ptr<Channel>> split = channel->Split(0, 0);
  EXPECT_EQ(split.status().code(), StatusCode::kFailedPrecondition) << split.status();
  EXPECT_THAT(split.status().message(), HasSubstr("ncclCommUserRank: ncclInvalidUsage"));
  EXPECT_EQ(device_->live_channels(), 1);
  ExpectDestroyChannel(kComm);
  channel.reset();
}

TEST_F(ChannelMockTest, GroupScopeStartsAndEndsOnce) {
  script_.push_back(
      NAMED_REQUIRE_CALL(nccl_mock_, ncclGroupStart()).IN_SEQUENCE(seq_).RETURN(ncclSuccess));
  script_.push_back(
      NAMED_REQUIRE_CALL(nccl_mock_, ncclGroupEnd()).IN_SEQUENCE(seq_).RETURN(ncclSuccess));
  {
    CUHAL_ASSERT_OK_AND_ASSIGN(ChannelGroup group, ChannelGroup::Begin(&nccl_));
    // The destructor ends it.
  }
  script_.push_back(
      NAMED_REQUIRE_CALL(nccl_mock_, ncclGroupStart()).IN_SEQUENCE(seq_).RETURN(ncclSuccess));
  script_.push_back(
      NAMED_REQUIRE_CALL(nccl_mock_, ncclGroupEnd()).IN_SEQUENCE(seq_).RETURN(ncclInvalidUsage));
  CUHAL_ASSERT_OK_AND_ASSIGN(ChannelGroup group, ChannelGroup::Begin(&nccl_));
  Status ended = group.End();
  EXPECT_THAT(ended.message(), HasSubstr("ending a channel group: ncclGroupEnd"));
  CUHAL_EXPECT_OK(group.End());  // already ended: no second ncclGroupEnd
}

}  // namespace
}  // namespace cuhal
