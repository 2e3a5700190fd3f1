// Copyright 2026 The cuhal Authors.
// Tests of the mock bindings: a table filled from MockCudaApi/MockNcclApi reaches the mock, pins
// call sequences, and turns misuse (unexpected calls, a mock that is gone) into test failures.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/base/status.h"
#include "core/base/status_or.h"
#include "core/symbols/api_status.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"
#include "core/symbols/nccl_api.h"
#include "tests/mocks/mock_cuda_api.h"
#include "tests/mocks/mock_nccl_api.h"

namespace cuhal {
namespace {

using mocks::MockCudaApi;
using mocks::MockNcclApi;
using trompeloeil::_;

// Distinct fake handle values; the mock never dereferences them.
CUstream FakeStream(std::uintptr_t n) { return reinterpret_cast<CUstream>(0x5000 + n); }
const CUcontext kFakeContext = reinterpret_cast<CUcontext>(0xC0);

// Runs `body` and returns the messages of the GoogleTest failures it reported on this thread,
// instead of failing the test with them.
template <typename F>
std::vector<std::string> CaptureFailures(F&& body) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    body();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i) {
    messages.emplace_back(results.GetTestPartResult(i).message());
  }
  return messages;
}

bool AnyContains(const std::vector<std::string>& messages, const std::string& needle) {
  for (const std::string& message : messages) {
    if (message.find(needle) != std::string::npos) return true;
  }
  return false;
}

template <typename Api>
void* EntryAt(const Api& api, const SymbolInfo& symbol) {
  void* entry = nullptr;
  std::memcpy(&entry, reinterpret_cast<const char*>(&api) + symbol.offset, sizeof(entry));
  return entry;
}

TEST(MockCudaApiTest, FillPointsEveryEntryAtTheMock) {
  MockCudaApi mock;
  CudaApi api = mock.Table();
  EXPECT_EQ(CountMissingRequired(api), 0);
  for (const SymbolInfo& symbol : CudaSymbols()) {
    EXPECT_NE(EntryAt(api, symbol), nullptr) << symbol.name;
    EXPECT_EQ(MockCudaApi::EntryName(symbol.offset), symbol.name);
  }
}

TEST(MockCudaApiTest, CallThroughTableReachesMock) {
  MockCudaApi mock;
  CudaApi api = mock.Table();
  REQUIRE_CALL(mock, cuStreamCreate(_, static_cast<unsigned>(CU_STREAM_NON_BLOCKING)))
      .SIDE_EFFECT(*_1 = FakeStream(1))
      .RETURN(CUDA_SUCCESS);
  CUstream stream = nullptr;
  EXPECT_EQ(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(stream, FakeStream(1));
}

// cuda.h #defines cuMemAlloc to cuMemAlloc_v2: the table member, the mock and the expectation all
// follow the define, so the plain name works everywhere.
TEST(MockCudaApiTest, VersionedNamesExpandConsistently) {
  MockCudaApi mock;
  CudaApi api = mock.Table();
  REQUIRE_CALL(mock, cuMemAlloc(_, 4096u)).SIDE_EFFECT(*_1 = 0x1000).RETURN(CUDA_SUCCESS);
  CUdeviceptr ptr = 0;
  EXPECT_EQ(api.cuMemAlloc(&ptr, 4096), CUDA_SUCCESS);
  EXPECT_EQ(ptr, CUdeviceptr{0x1000});
}

TEST(MockCudaApiTest, UnexpectedCallIsATestFailureAndReturnsUnknown) {
  MockCudaApi mock;
  CudaApi api = mock.Table();
  CUresult result = CUDA_SUCCESS;
  EXPECT_NONFATAL_FAILURE(result = api.cuInit(0), "No match for call of cuInit");
  EXPECT_EQ(result, CUDA_ERROR_UNKNOWN);
}

TEST(MockCudaApiTest, CallAfterMockIsGoneIsATestFailureNotACrash) {
  CudaApi api;
  {
    MockCudaApi mock;
    api = mock.Table();
  }
  CUresult result = CUDA_SUCCESS;
  EXPECT_NONFATAL_FAILURE(result = api.cuCtxSynchronize(), "cuCtxSynchronize was called through");
  EXPECT_EQ(result, CUDA_ERROR_UNKNOWN);
}

TEST(MockCudaApiTest, MostRecentlyFilledMockIsCurrent) {
  MockCudaApi first;
  CudaApi first_api = first.Table();
  MockCudaApi second;
  CudaApi second_api = second.Table();
  FORBID_CALL(first, cuInit(_));
  REQUIRE_CALL(second, cuInit(0u)).TIMES(2).RETURN(CUDA_SUCCESS);
  // Both tables hold the same trampolines; the current mock answers.
  EXPECT_EQ(first_api.cuInit(0), CUDA_SUCCESS);
  EXPECT_EQ(second_api.cuInit(0), CUDA_SUCCESS);
}

TEST(MockCudaApiTest, AllowErrorLookupsAnswersLikeTheDriver) {
  MockCudaApi mock;
  CudaApi api = mock.Table();
  mock.AllowErrorLookups();
  Status status;
  {
    REQUIRE_CALL(mock, cuCtxSynchronize()).RETURN(CUDA_ERROR_INVALID_CONTEXT);
    status = CUHAL_CU(&api, cuCtxSynchronize);
  }
  EXPECT_EQ(status.message(), std::string("cuCtxSynchronize: CUDA_ERROR_INVALID_CONTEXT (") +
                                  MockCudaApi::kMockErrorString + ")");
  const char* name = "untouched";
  // 1000: a valid CUresult value (within the enumerators' range) that no enumerator names.
  EXPECT_EQ(api.cuGetErrorName(static_cast<CUresult>(1000), &name), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(name, nullptr);
}

TEST(MockCudaApiTest, ConcurrentCallsThroughTheTable) {
  constexpr int kThreads = 4;
  constexpr int kCallsPerThread = 200;
  MockCudaApi mock;
  const CudaApi api = mock.Table();
  std::atomic<int> answered{0};
  REQUIRE_CALL(mock, cuStreamQuery(_))
      .TIMES(kThreads * kCallsPerThread)
      .LR_SIDE_EFFECT(answered.fetch_add(1, std::memory_order_relaxed))
      .RETURN(CUDA_SUCCESS);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&api, &failures, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        if (api.cuStreamQuery(FakeStream(static_cast<std::uintptr_t>(t))) != CUDA_SUCCESS) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(answered.load(), kThreads * kCallsPerThread);
}

// The registry's promise behind "the destructor waits for calls in flight": Unbind returns only
// after every lease on that mock is released.
TEST(MockRegistryTest, UnbindWaitsForCallsInFlight) {
  struct Dummy {};
  auto& registry = mocks::internal::MockRegistry<Dummy>::Get();
  Dummy dummy;
  registry.Bind(&dummy);
  std::atomic<bool> entered{false};
  std::atomic<bool> finished{false};
  std::thread caller([&] {
    mocks::internal::MockRegistry<Dummy>::Lease lease(registry);
    EXPECT_EQ(lease.mock(), &dummy);
    entered.store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    finished.store(true);
  });
  while (!entered.load()) std::this_thread::yield();
  registry.Unbind(&dummy);
  EXPECT_TRUE(finished.load());
  mocks::internal::MockRegistry<Dummy>::Lease after(registry);
  EXPECT_EQ(after.mock(), nullptr);
  caller.join();
}

// --- Pinning a cleanup sequence -------------------------------------------------------------
// A tiny piece of device code in the style of core: retain the primary context into a handle,
// then create a stream. If stream creation fails, the handle's destructor releases the context.
struct Queue {
  PrimaryContextHandle primary;
  StreamHandle stream;  // declared last, so destroyed first: the stream goes before its context
};

StatusOr<Queue> OpenQueue(const CudaApi* api, CUdevice device) {
  CUcontext context = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDevicePrimaryCtxRetain, &context, device),
                        "retaining primary context of device ", device);
  PrimaryContextHandle primary(api, device + 1);
  CUstream stream = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING),
                        "creating stream");
  return Queue{std::move(primary), StreamHandle(api, stream)};
}

TEST(MockSequenceTest, StreamCreationFailsSoThePrimaryContextIsReleased) {
  MockCudaApi mock;
  const CudaApi api = mock.Table();
  trompeloeil::sequence seq;
  REQUIRE_CALL(mock, cuDevicePrimaryCtxRetain(_, 0))
      .IN_SEQUENCE(seq)
      .SIDE_EFFECT(*_1 = kFakeContext)
      .RETURN(CUDA_SUCCESS);
  REQUIRE_CALL(mock, cuStreamCreate(_, _)).IN_SEQUENCE(seq).RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  REQUIRE_CALL(mock, cuDevicePrimaryCtxRelease(0)).IN_SEQUENCE(seq).RETURN(CUDA_SUCCESS);
  // The message's name and text come from the (mocked) driver, not from cuhal's built-in list.
  REQUIRE_CALL(mock, cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, _))
      .SIDE_EFFECT(*_2 = "MOCKED_OOM_NAME")
      .RETURN(CUDA_SUCCESS);
  REQUIRE_CALL(mock, cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, _))
      .SIDE_EFFECT(*_2 = "mocked out of memory")
      .RETURN(CUDA_SUCCESS);

  StatusOr<Queue> queue = OpenQueue(&api, 0);

  ASSERT_FALSE(queue.ok());
  EXPECT_EQ(queue.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(queue.status().message(),
            "creating stream: cuStreamCreate: MOCKED_OOM_NAME (mocked out of memory)");
}

TEST(MockSequenceTest, SuccessReleasesStreamBeforeContext) {
  MockCudaApi mock;
  const CudaApi api = mock.Table();
  trompeloeil::sequence seq;
  REQUIRE_CALL(mock, cuDevicePrimaryCtxRetain(_, 2))
      .IN_SEQUENCE(seq)
      .SIDE_EFFECT(*_1 = kFakeContext)
      .RETURN(CUDA_SUCCESS);
  REQUIRE_CALL(mock, cuStreamCreate(_, _))
      .IN_SEQUENCE(seq)
      .SIDE_EFFECT(*_1 = FakeStream(7))
      .RETURN(CUDA_SUCCESS);
  REQUIRE_CALL(mock, cuStreamDestroy(FakeStream(7))).IN_SEQUENCE(seq).RETURN(CUDA_SUCCESS);
  REQUIRE_CALL(mock, cuDevicePrimaryCtxRelease(2)).IN_SEQUENCE(seq).RETURN(CUDA_SUCCESS);
  {
    StatusOr<Queue> queue = OpenQueue(&api, 2);
    ASSERT_TRUE(queue.ok()) << queue.status();
    EXPECT_EQ(queue->stream.get(), FakeStream(7));
  }
}

// The mocks can fail a test: code that releases the context BEFORE the failed stream creation
// breaks the pinned order, and code that never releases leaves an expectation unmet.
TEST(MockSequenceTest, WrongCleanupOrderIsReported) {
  MockCudaApi mock;
  const CudaApi api = mock.Table();
  mock.AllowErrorLookups();
  auto pin_and_run = [&](auto&& buggy_open) {
    trompeloeil::sequence seq;
    REQUIRE_CALL(mock, cuDevicePrimaryCtxRetain(_, 0)).IN_SEQUENCE(seq).RETURN(CUDA_SUCCESS);
    REQUIRE_CALL(mock, cuStreamCreate(_, _)).IN_SEQUENCE(seq).RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    REQUIRE_CALL(mock, cuDevicePrimaryCtxRelease(0)).IN_SEQUENCE(seq).RETURN(CUDA_SUCCESS);
    buggy_open().IgnoreError();
  };
  auto releases_too_early = [&] {
    CUcontext context = nullptr;
    CUstream stream = nullptr;
    (void)api.cuDevicePrimaryCtxRetain(&context, 0);
    (void)api.cuDevicePrimaryCtxRelease(0);
    return CUHAL_CU(&api, cuStreamCreate, &stream, 0);
  };
  auto never_releases = [&] {
    CUcontext context = nullptr;
    CUstream stream = nullptr;
    (void)api.cuDevicePrimaryCtxRetain(&context, 0);
    return CUHAL_CU(&api, cuStreamCreate, &stream, 0);
  };
  std::vector<std::string> early = CaptureFailures([&] { pin_and_run(releases_too_early); });
  EXPECT_TRUE(AnyContains(early, "Sequence mismatch")) << ::testing::PrintToString(early);
  std::vector<std::string> never = CaptureFailures([&] { pin_and_run(never_releases); });
  EXPECT_TRUE(AnyContains(never, "Unfulfilled expectation")) << ::testing::PrintToString(never);
  // And the correct code passes the very same pins.
  EXPECT_TRUE(CaptureFailures([&] {
                pin_and_run([&] { return OpenQueue(&api, 0).status(); });
              }).empty());
}

// --- NCCL -----------------------------------------------------------------------------------

TEST(MockNcclApiTest, FillPointsEveryEntryAtTheMock) {
  MockNcclApi mock;
  NcclApi api = mock.Table();
  EXPECT_EQ(CountMissingRequired(api), 0);
  for (const SymbolInfo& symbol : NcclSymbols()) {
    EXPECT_NE(EntryAt(api, symbol), nullptr) << symbol.name;
    EXPECT_EQ(MockNcclApi::EntryName(symbol.offset), symbol.name);
  }
}

TEST(MockNcclApiTest, CallThroughTableReachesMock) {
  MockNcclApi mock;
  NcclApi api = mock.Table();
  const ncclComm_t comm = reinterpret_cast<ncclComm_t>(0xCC);
  REQUIRE_CALL(mock, ncclCommCount(comm, _)).SIDE_EFFECT(*_2 = 8).RETURN(ncclSuccess);
  int count = 0;
  EXPECT_EQ(api.ncclCommCount(comm, &count), ncclSuccess);
  EXPECT_EQ(count, 8);
}

TEST(MockNcclApiTest, UnansweredCallsFailTheTest) {
  NcclApi api;
  {
    MockNcclApi mock;
    api = mock.Table();
    ncclResult_t result = ncclSuccess;
    EXPECT_NONFATAL_FAILURE(result = api.ncclGroupStart(), "No match for call of ncclGroupStart");
    EXPECT_EQ(result, ncclInternalError);
  }
  const char* text = nullptr;
  EXPECT_NONFATAL_FAILURE(text = api.ncclGetErrorString(ncclInvalidUsage),
                          "ncclGetErrorString was called through");
  EXPECT_NE(text, nullptr);
}

}  // namespace
}  // namespace cuhal
