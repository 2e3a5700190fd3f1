// Copyright 2026 The cuhal Authors.
// Tests of Handle<Traits> (core/base/handle.h) with a counting test table, and of the CUDA/NCCL
// handle traits (core/symbols/driver_handles.h) against the mock tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/base/handle.h"
#include "core/base/status.h"
#include "core/symbols/driver_handles.h"
#include "tests/mocks/mock_cuda_api.h"
#include "tests/mocks/mock_nccl_api.h"

namespace cuhal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using trompeloeil::_;

// A test "table": records each destroy and answers with `result`.
struct RecordingApi {
  mutable std::vector<int> destroyed;
  Status result;
};

struct RecordingTraits {
  using Api = RecordingApi;
  using Value = int;
  static Status Destroy(const Api& api, Value value) noexcept {
    api.destroyed.push_back(value);
    return api.result;
  }
};

using TestHandle = Handle<RecordingTraits>;

static_assert(!std::is_copy_constructible_v<TestHandle>, "a Handle has exactly one owner");
static_assert(!std::is_copy_assignable_v<TestHandle>, "a Handle has exactly one owner");
static_assert(std::is_nothrow_move_constructible_v<TestHandle>);
static_assert(std::is_nothrow_move_assignable_v<TestHandle>);
static_assert(std::is_nothrow_destructible_v<TestHandle>);
static_assert(!std::is_copy_constructible_v<StreamHandle>);
static_assert(!std::is_copy_constructible_v<NcclCommHandle>);

// Collects what reaches the dropped-status handler while a test runs, and restores the previous
// handler afterwards.
class HandleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Dropped().clear();
    previous_ = SetDroppedStatusHandler(&Record);
  }
  void TearDown() override { SetDroppedStatusHandler(previous_); }

  static std::vector<std::string>& Dropped() {
    static std::vector<std::string> dropped;
    return dropped;
  }
  static std::vector<std::string> TakeDropped() {
    std::lock_guard<std::mutex> lock(Mutex());
    return std::exchange(Dropped(), {});
  }

 private:
  static std::mutex& Mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static void Record(const Status& status) {
    std::lock_guard<std::mutex> lock(Mutex());
    Dropped().push_back(status.message());
  }
  DroppedStatusHandler previous_ = nullptr;
};

TEST_F(HandleTest, EmptyHandleDoesNothing) {
  RecordingApi api;
  {
    TestHandle empty;
    EXPECT_FALSE(empty);
    EXPECT_EQ(empty.get(), 0);
    EXPECT_EQ(empty.api(), nullptr);
    EXPECT_TRUE(empty.Reset().ok());
    TestHandle zero(&api, 0);  // the value-initialized Value means "none"
    EXPECT_FALSE(zero);
  }
  EXPECT_THAT(api.destroyed, IsEmpty());
  EXPECT_THAT(TakeDropped(), IsEmpty());
}

TEST_F(HandleTest, DestructorDestroysOnce) {
  RecordingApi api;
  {
    TestHandle handle(&api, 7);
    EXPECT_TRUE(handle);
    EXPECT_EQ(handle.get(), 7);
    EXPECT_EQ(handle.api(), &api);
  }
  EXPECT_THAT(api.destroyed, ElementsAre(7));
  EXPECT_THAT(TakeDropped(), IsEmpty());
}

TEST_F(HandleTest, ResetReturnsTheDestroyStatusAndEmpties) {
  RecordingApi api;
  api.result = InternalError("cuFooDestroy: CUDA_ERROR_ILLEGAL_ADDRESS");
  TestHandle handle(&api, 3);
  Status status = handle.Reset();
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(), "cuFooDestroy: CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_FALSE(handle);
  EXPECT_TRUE(handle.Reset().ok());  // nothing left to release
  EXPECT_THAT(api.destroyed, ElementsAre(3));
  EXPECT_THAT(TakeDropped(), IsEmpty());  // the caller got the status, nothing was dropped
}

TEST_F(HandleTest, FailedDestroyInDestructorGoesToTheDroppedHandler) {
  RecordingApi api;
  api.result = UnavailableError("driver shutting down");
  { TestHandle handle(&api, 9); }  // must not throw or abort
  EXPECT_THAT(api.destroyed, ElementsAre(9));
  EXPECT_THAT(TakeDropped(), ElementsAre("driver shutting down"));
}

TEST_F(HandleTest, ReleaseGivesUpOwnership) {
  RecordingApi api;
  int raw = 0;
  {
    TestHandle handle(&api, 5);
    raw = handle.Release();
    EXPECT_FALSE(handle);
  }
  EXPECT_EQ(raw, 5);
  EXPECT_THAT(api.destroyed, IsEmpty());
}

TEST_F(HandleTest, MoveConstructionTransfersOwnership) {
  RecordingApi api;
  {
    TestHandle source(&api, 4);
    TestHandle destination(std::move(source));
    EXPECT_FALSE(source);  // NOLINT(bugprone-use-after-move): documented moved-from state
    EXPECT_EQ(source.api(), nullptr);
    EXPECT_EQ(destination.get(), 4);
    EXPECT_EQ(destination.api(), &api);
  }
  EXPECT_THAT(api.destroyed, ElementsAre(4));
}

TEST_F(HandleTest, MoveAssignmentReleasesTheOldObjectAtOnce) {
  RecordingApi api;
  {
    TestHandle target(&api, 1);
    TestHandle source(&api, 2);
    target = std::move(source);
    EXPECT_THAT(api.destroyed, ElementsAre(1));  // the old object, released by the assignment
    EXPECT_EQ(target.get(), 2);
    EXPECT_FALSE(source);  // NOLINT(bugprone-use-after-move)
  }
  EXPECT_THAT(api.destroyed, ElementsAre(1, 2));
}

TEST_F(HandleTest, MoveAssignmentReportsAFailedReleaseOfTheOldObject) {
  RecordingApi failing;
  failing.result = InternalError("old object would not go");
  RecordingApi api;
  TestHandle target(&failing, 1);
  target = TestHandle(&api, 2);
  EXPECT_THAT(failing.destroyed, ElementsAre(1));
  EXPECT_THAT(TakeDropped(), ElementsAre("old object would not go"));
  EXPECT_EQ(target.api(), &api);
}

TEST_F(HandleTest, SelfMoveAssignmentKeepsTheObject) {
  RecordingApi api;
  {
    TestHandle handle(&api, 6);
    TestHandle& alias = handle;
    handle = std::move(alias);
    EXPECT_EQ(handle.get(), 6);
    EXPECT_THAT(api.destroyed, IsEmpty());
  }
  EXPECT_THAT(api.destroyed, ElementsAre(6));
}

TEST_F(HandleTest, HandleWithoutTableReleasesNothing) {
  TestHandle handle(nullptr, 8);
  EXPECT_TRUE(handle.Reset().ok());
  EXPECT_FALSE(handle);
}

// --- The driver handle traits, through the mock tables ----------------------------------------

TEST_F(HandleTest, StreamHandleDestroysThroughItsTable) {
  mocks::MockCudaApi mock;
  const CudaApi api = mock.Table();
  const CUstream stream = reinterpret_cast<CUstream>(0x51);
  REQUIRE_CALL(mock, cuStreamDestroy(stream)).RETURN(CUDA_SUCCESS);
  { StreamHandle handle(&api, stream); }
  EXPECT_THAT(TakeDropped(), IsEmpty());
}

TEST_F(HandleTest, PrimaryContextHandleReleasesByOrdinal) {
  mocks::MockCudaApi mock;
  const CudaApi api = mock.Table();
  REQUIRE_CALL(mock, cuDevicePrimaryCtxRelease(0)).RETURN(CUDA_SUCCESS);
  REQUIRE_CALL(mock, cuDevicePrimaryCtxRelease(3)).RETURN(CUDA_SUCCESS);
  PrimaryContextHandle device0(&api, 0 + 1);  // stored as ordinal + 1: device 0 is not "none"
  EXPECT_TRUE(device0);
  PrimaryContextHandle device3(&api, 3 + 1);
  EXPECT_TRUE(device0.Reset().ok());
  EXPECT_TRUE(device3.Reset().ok());
}

TEST_F(HandleTest, FailedDriverDestroyIsReportedWithThePlainEntryName) {
  mocks::MockCudaApi mock;
  const CudaApi api = mock.Table();
  mock.AllowErrorLookups();
  REQUIRE_CALL(mock, cuMemFree(CUdeviceptr{0x1000})).RETURN(CUDA_ERROR_INVALID_VALUE);
  { DeviceMemoryHandle memory(&api, 0x1000); }
  // cuda.h #defines cuMemFree to cuMemFree_v2; the message names the cuda.h function.
  EXPECT_THAT(TakeDropped(), ElementsAre(StrCat("cuMemFree: CUDA_ERROR_INVALID_VALUE (",
                                                mocks::MockCudaApi::kMockErrorString, ")")));
}

TEST_F(HandleTest, MissingDestroyEntryIsUnimplemented) {
  mocks::MockCudaApi mock;
  CudaApi api = mock.Table();
  api.cuEventDestroy = nullptr;
  EventHandle event(&api, reinterpret_cast<CUevent>(0xE1));
  Status status = event.Reset();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("cuEventDestroy is not provided by the bound libcuda"));
}

TEST_F(HandleTest, NcclCommHandleDestroysThroughItsTable) {
  mocks::MockNcclApi mock;
  const NcclApi api = mock.Table();
  mock.AllowErrorLookups();
  const ncclComm_t comm = reinterpret_cast<ncclComm_t>(0xC0);
  REQUIRE_CALL(mock, ncclCommDestroy(comm)).RETURN(ncclInvalidUsage);
  NcclCommHandle handle(&api, comm);
  Status status = handle.Reset();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "ncclCommDestroy: ncclInvalidUsage (ncclInvalidUsage)");
}

}  // namespace
}  // namespace cuhal
