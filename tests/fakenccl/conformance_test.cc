// Copyright 2026 The cuhal Authors.
// NCCL conformance: argument checking and invalid usage on a one-rank communicator, written so
// that the same test bodies run against fakenccl (label fake) and against the installed NCCL on a
// GPU (label real, skipped with the reason printed where there is none). On the GPU machine the
// real NCCL decides every expected value; an expectation not measured there yet is marked
// "UNMEASURED" beside it.
//
// Measured: all 18 tests pass against NCCL 2.28.9 (the nvidia-nccl-cu13 wheel's libnccl.so.2,
// CUHAL_LIBNCCL_PATH) on one H200, driver 580.159.04, 2026-12-02. NCCL's WARN texts seen there
// (NCCL_DEBUG=WARN) are the ones fakenccl's ncclGetLastError returns for the same calls.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fakenccl/datatypes.h"
#include "tests/fakenccl/nccl_support.h"

namespace cuhal::testing {
namespace {

// A one-rank communicator on device 0, with a stream and two device buffers of 64 floats.
class NcclConformanceTest : public NcclBackendTest {
 protected:
  void SetUp() override {
    NcclBackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ranks_ = std::make_unique<RankThreads>(cuda(), std::vector<int>{0});
    ASSERT_TRUE(ranks_->ok());
    comms_ = InitComms(*ranks_);
    ASSERT_NE(comms_[0], nullptr);
    OnRank([&] {
      ASSERT_EQ(cuda().cuMemAlloc(&a_, 64 * sizeof(float)), CUDA_SUCCESS);
      ASSERT_EQ(cuda().cuMemAlloc(&b_, 64 * sizeof(float)), CUDA_SUCCESS);
    });
  }

  void TearDown() override {
    if (ranks_ != nullptr) {
      OnRank([&] {
        EXPECT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
        if (a_ != 0) {
          EXPECT_EQ(cuda().cuMemFree(a_), CUDA_SUCCESS);
        }
        if (b_ != 0) {
          EXPECT_EQ(cuda().cuMemFree(b_), CUDA_SUCCESS);
        }
      });
      DestroyComms(*ranks_, comms_);
      ranks_.reset();
    }
    NcclBackendTest::TearDown();
  }

  // Runs `fn` on the rank's thread (which has device 0's primary context current).
  void OnRank(const std::function<void()>& fn) { ranks_->RunOn(0, fn); }

  ncclComm_t comm() const { return comms_[0]; }
  cudaStream_t stream() const { return reinterpret_cast<cudaStream_t>(ranks_->stream(0)); }
  const void* a() const { return reinterpret_cast<const void*>(a_); }
  void* b() const { return reinterpret_cast<void*>(b_); }

  std::unique_ptr<RankThreads> ranks_;
  std::vector<ncclComm_t> comms_;
  CUdeviceptr a_ = 0;
  CUdeviceptr b_ = 0;
};

TEST_P(NcclConformanceTest, VersionAndUniqueId) {
  int version = 0;
  ASSERT_EQ(nccl().ncclGetVersion(&version), ncclSuccess);
  EXPECT_GE(version, 20000);  // NCCL >= 2.9 encodes 2.x.y as 2xxyy
  EXPECT_EQ(version / 10000, NCCL_MAJOR);
  // Measured on NCCL 2.28.3 (ci/gpu-probes, case "nccl_basic"): ncclGetVersion(NULL) is refused
  // without touching the last error, which the next failing argument check does set.
  EXPECT_EQ(nccl().ncclGetUniqueId(nullptr), ncclInvalidArgument);
  const std::string before = nccl().ncclGetLastError(nullptr);
  EXPECT_EQ(nccl().ncclGetVersion(nullptr), ncclInvalidArgument);
  EXPECT_EQ(std::string(nccl().ncclGetLastError(nullptr)), before);
  ncclUniqueId x;
  ncclUniqueId y;
  ASSERT_EQ(nccl().ncclGetUniqueId(&x), ncclSuccess);
  ASSERT_EQ(nccl().ncclGetUniqueId(&y), ncclSuccess);
  EXPECT_NE(std::memcmp(x.internal, y.internal, sizeof(x.internal)), 0);
}

TEST_P(NcclConformanceTest, ErrorStrings) {
  EXPECT_STREQ(nccl().ncclGetErrorString(ncclSuccess), "no error");
  EXPECT_STREQ(nccl().ncclGetErrorString(ncclInvalidArgument),
               "invalid argument (run with NCCL_DEBUG=WARN for details)");
  EXPECT_STREQ(nccl().ncclGetErrorString(ncclInvalidUsage),
               "invalid usage (run with NCCL_DEBUG=WARN for details)");
  EXPECT_STREQ(nccl().ncclGetErrorString(ncclRemoteError),
               "remote process exited or there was a network error");
  EXPECT_STREQ(nccl().ncclGetErrorString(ncclInProgress), "NCCL operation in progress");
  EXPECT_STREQ(nccl().ncclGetErrorString(static_cast<ncclResult_t>(1000)), "unknown result code");
}

TEST_P(NcclConformanceTest, InitRankChecksItsArguments) {
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  OnRank([&] {
    ncclComm_t c = nullptr;
    EXPECT_EQ(nccl().ncclCommInitRank(nullptr, 1, id, 0), ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclCommInitRank(&c, 0, id, 0), ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclCommInitRank(&c, 1, id, 1), ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclCommInitRank(&c, 1, id, -1), ncclInvalidArgument);
    EXPECT_EQ(c, nullptr);
  });
}

TEST_P(NcclConformanceTest, InitRankConfigChecksTheConfig) {
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  OnRank([&] {
    ncclComm_t c = nullptr;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.magic = 0;  // not made with NCCL_CONFIG_INITIALIZER
    EXPECT_EQ(nccl().ncclCommInitRankConfig(&c, 1, id, 0, &config), ncclInvalidArgument);
    config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 2;
    EXPECT_EQ(nccl().ncclCommInitRankConfig(&c, 1, id, 0, &config), ncclInvalidArgument);
    // NCCL compares minCTAs with maxCTAs even when maxCTAs is left undefined (INT_MIN).
    config = NCCL_CONFIG_INITIALIZER;
    config.minCTAs = 4;
    EXPECT_EQ(nccl().ncclCommInitRankConfig(&c, 1, id, 0, &config), ncclInvalidArgument);
    EXPECT_EQ(c, nullptr);
  });
}

TEST_P(NcclConformanceTest, NonBlockingInitPollsToSuccess) {
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  OnRank([&] {
    ncclComm_t c = nullptr;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t r = nccl().ncclCommInitRankConfig(&c, 1, id, 0, &config);
    EXPECT_EQ(r, ncclInProgress);
    ASSERT_NE(c, nullptr);
    // Poll as NCCL's documentation does. Measured on the H200 (NCCL 2.28.9): about half a second
    // of polling; the bound below only keeps a broken implementation from hanging the test.
    ncclResult_t state = ncclInProgress;
    for (int i = 0; i < 120000 && state == ncclInProgress; ++i) {
      ASSERT_EQ(nccl().ncclCommGetAsyncError(c, &state), ncclSuccess);
      if (state == ncclInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(state, ncclSuccess);
    int count = 0;
    EXPECT_EQ(nccl().ncclCommCount(c, &count), ncclSuccess);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(nccl().ncclCommDestroy(c), ncclSuccess);
  });
}

TEST_P(NcclConformanceTest, QueriesOfAOneRankCommunicator) {
  int count = -1;
  int rank = -1;
  int device = -1;
  EXPECT_EQ(nccl().ncclCommCount(comm(), &count), ncclSuccess);
  EXPECT_EQ(nccl().ncclCommUserRank(comm(), &rank), ncclSuccess);
  EXPECT_EQ(nccl().ncclCommCuDevice(comm(), &device), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(nccl().ncclCommCount(nullptr, &count), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommUserRank(nullptr, &rank), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommCuDevice(nullptr, &device), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommCount(comm(), nullptr), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommUserRank(comm(), nullptr), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommCuDevice(comm(), nullptr), ncclInvalidArgument);
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(nccl().ncclCommGetAsyncError(comm(), &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
  EXPECT_EQ(nccl().ncclCommGetAsyncError(nullptr, &async), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommGetAsyncError(comm(), nullptr), ncclInvalidArgument);
}

TEST_P(NcclConformanceTest, CollectiveArgumentChecks) {
  OnRank([&] {
    // NULL communicator.
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclFloat32, ncclSum, nullptr, stream()),
              ncclInvalidArgument);
    // Data types outside the enumeration.
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclNumTypes, ncclSum, comm(), stream()),
              ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, static_cast<ncclDataType_t>(15), ncclSum, comm(),
                                   stream()),
              ncclInvalidArgument);
    // Operators beyond the built-in ones that are no user op of this communicator. (Negative
    // values are outside the C++ enumeration's range: a C caller could pass them, a C++ test
    // cannot without undefined behaviour; the fake reads every enum argument as raw bits.)
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclFloat32, static_cast<ncclRedOp_t>(0x12345),
                                   comm(), stream()),
              ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclFloat32, ncclNumOps, comm(), stream()),
              ncclInvalidArgument);
    // Roots and peers outside 0..nranks-1.
    EXPECT_EQ(nccl().ncclBroadcast(a(), b(), 4, ncclFloat32, 1, comm(), stream()),
              ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclBroadcast(a(), b(), 4, ncclFloat32, -1, comm(), stream()),
              ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclReduce(a(), b(), 4, ncclFloat32, ncclSum, 1, comm(), stream()),
              ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclSend(a(), 4, ncclFloat32, 1, comm(), stream()), ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclRecv(b(), 4, ncclFloat32, -1, comm(), stream()), ncclInvalidArgument);
    // Count 0 is allowed, whatever the buffers.
    EXPECT_EQ(nccl().ncclAllReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comm(), stream()),
              ncclSuccess);
    EXPECT_EQ(nccl().ncclAllGather(nullptr, nullptr, 0, ncclInt8, comm(), stream()),
              ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
    // A communicator that has seen argument errors still works.
    ncclResult_t async = ncclInternalError;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comm(), &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess);
  });
}

// docs/driver_facts.md, "NCCL 2.28.3, one rank on one GPU": in place on one rank nothing moves,
// so any pointer succeeds (NULL and host memory here; an unallocated address too on the GPU, not
// tried: out of place it crashes the process), the stream syncs clean, the communicator stays
// healthy, and the host memory is not touched.
TEST_P(NcclConformanceTest, OneRankInPlaceMovesNothingSoAnyPointerSucceeds) {
  OnRank([&] {
    std::vector<float> host(1024);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) + 0.5f;
    const std::vector<float> before = host;
    for (void* p : {static_cast<void*>(nullptr), static_cast<void*>(host.data())}) {
      SCOPED_TRACE(p == nullptr ? "NULL" : "host memory");
      EXPECT_EQ(nccl().ncclAllReduce(p, p, 1024, ncclFloat32, ncclSum, comm(), stream()),
                ncclSuccess);
      EXPECT_EQ(nccl().ncclAllReduce(p, p, 1024, ncclInt32, ncclMax, comm(), stream()),
                ncclSuccess);
      EXPECT_EQ(nccl().ncclBroadcast(p, p, 1024, ncclFloat32, 0, comm(), stream()), ncclSuccess);
      EXPECT_EQ(nccl().ncclReduce(p, p, 1024, ncclFloat32, ncclSum, 0, comm(), stream()),
                ncclSuccess);
      EXPECT_EQ(nccl().ncclAllGather(p, p, 1024, ncclFloat32, comm(), stream()), ncclSuccess);
      EXPECT_EQ(nccl().ncclReduceScatter(p, p, 1024, ncclFloat32, ncclSum, comm(), stream()),
                ncclSuccess);
      EXPECT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
      ncclResult_t async = ncclInternalError;
      EXPECT_EQ(nccl().ncclCommGetAsyncError(comm(), &async), ncclSuccess);
      EXPECT_EQ(async, ncclSuccess);
    }
    EXPECT_EQ(host, before);
    // Later collectives work and compute.
    std::vector<float> in(64, 2.5f);
    ASSERT_EQ(cuda().cuMemcpyHtoD(a_, in.data(), in.size() * sizeof(float)), CUDA_SUCCESS);
    ASSERT_EQ(nccl().ncclAllReduce(a(), b(), 64, ncclFloat32, ncclSum, comm(), stream()),
              ncclSuccess);
    ASSERT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
    std::vector<float> out(64);
    ASSERT_EQ(cuda().cuMemcpyDtoH(out.data(), b_, out.size() * sizeof(float)), CUDA_SUCCESS);
    EXPECT_EQ(out, in);
  });
}

TEST_P(NcclConformanceTest, OneRankCollectivesComputeTheirResults) {
  OnRank([&] {
    std::vector<float> in(64);
    for (int i = 0; i < 64; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i) - 10.0f;
    ASSERT_EQ(cuda().cuMemcpyHtoD(a_, in.data(), in.size() * sizeof(float)), CUDA_SUCCESS);
    float three = 3.0f;
    ncclRedOp_t times3;
    ASSERT_EQ(nccl().ncclRedOpCreatePreMulSum(&times3, &three, ncclFloat32,
                                              ncclScalarHostImmediate, comm()),
              ncclSuccess);
    ASSERT_EQ(nccl().ncclAllReduce(a(), b(), 64, ncclFloat32, times3, comm(), stream()),
              ncclSuccess);
    ASSERT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
    std::vector<float> out(64);
    ASSERT_EQ(cuda().cuMemcpyDtoH(out.data(), b_, out.size() * sizeof(float)), CUDA_SUCCESS);
    for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], 3.0f * in[i]);
    EXPECT_EQ(nccl().ncclRedOpDestroy(times3, comm()), ncclSuccess);
    // Average of int32 over one rank, in place.
    ASSERT_EQ(nccl().ncclAllReduce(b(), b(), 16, ncclInt32, ncclAvg, comm(), stream()),
              ncclSuccess);
    // A self send/receive pair inside a group.
    ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
    ASSERT_EQ(nccl().ncclSend(a(), 64, ncclFloat32, 0, comm(), stream()), ncclSuccess);
    ASSERT_EQ(nccl().ncclRecv(b(), 64, ncclFloat32, 0, comm(), stream()), ncclSuccess);
    ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
    ASSERT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
    ASSERT_EQ(cuda().cuMemcpyDtoH(out.data(), b_, out.size() * sizeof(float)), CUDA_SUCCESS);
    EXPECT_EQ(out, in);
  });
}

TEST_P(NcclConformanceTest, Fp8ReductionsRunOnHopper) {
  OnRank([&] {
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 8, ncclFloat8e4m3, ncclSum, comm(), stream()),
              ncclSuccess);
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 8, ncclFloat8e5m2, ncclMax, comm(), stream()),
              ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
  });
}

TEST_P(NcclConformanceTest, GroupMisuse) {
  OnRank([&] {
    EXPECT_EQ(nccl().ncclGroupEnd(), ncclInvalidUsage);
    // A failing call inside a group fails the whole group at ncclGroupEnd.
    ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclFloat32, ncclSum, comm(), stream()),
              ncclSuccess);
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclNumTypes, ncclSum, comm(), stream()),
              ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclGroupEnd(), ncclInvalidArgument);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
    // Nested groups launch at the outermost end.
    ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
    ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclFloat32, ncclSum, comm(), stream()),
              ncclSuccess);
    EXPECT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
    EXPECT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
    ncclResult_t async = ncclInternalError;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comm(), &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess);
  });
}

TEST_P(NcclConformanceTest, ReductionOperatorLifetime) {
  OnRank([&] {
    EXPECT_EQ(nccl().ncclRedOpDestroy(ncclSum, comm()), ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclRedOpDestroy(ncclAvg, comm()), ncclInvalidArgument);
    float two = 2.0f;
    ncclRedOp_t op;
    ASSERT_EQ(nccl().ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate,
                                              comm()),
              ncclSuccess);
    EXPECT_GE(static_cast<int>(op), static_cast<int>(ncclNumOps));
    EXPECT_EQ(nccl().ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate,
                                              nullptr),
              ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclRedOpDestroy(op, nullptr), ncclInvalidArgument);
    // The operator was made for float32: using it on another type is an error.
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclFloat64, op, comm(), stream()),
              ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclFloat32, op, comm(), stream()), ncclSuccess);
    EXPECT_EQ(nccl().ncclRedOpDestroy(op, comm()), ncclSuccess);
    EXPECT_EQ(nccl().ncclRedOpDestroy(op, comm()), ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclAllReduce(a(), b(), 4, ncclFloat32, op, comm(), stream()),
              ncclInvalidArgument);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks_->stream(0)), CUDA_SUCCESS);
  });
}

TEST_P(NcclConformanceTest, LifetimeCallsOnNull) {
  EXPECT_EQ(nccl().ncclCommFinalize(nullptr), ncclSuccess);
  EXPECT_EQ(nccl().ncclCommDestroy(nullptr), ncclSuccess);
  EXPECT_EQ(nccl().ncclCommAbort(nullptr), ncclSuccess);
}

TEST_P(NcclConformanceTest, FinalizeTwiceIsAnError) {
  OnRank([&] {
    EXPECT_EQ(nccl().ncclCommFinalize(comm()), ncclSuccess);
    EXPECT_EQ(nccl().ncclCommFinalize(comm()), ncclInvalidArgument);
  });
}

TEST_P(NcclConformanceTest, SplitOfOneRank) {
  OnRank([&] {
    ncclComm_t child = nullptr;
    ASSERT_EQ(nccl().ncclCommSplit(comm(), 7, 0, &child, nullptr), ncclSuccess);
    ASSERT_NE(child, nullptr);
    int count = 0;
    EXPECT_EQ(nccl().ncclCommCount(child, &count), ncclSuccess);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(nccl().ncclCommDestroy(child), ncclSuccess);
    ncclComm_t none = reinterpret_cast<ncclComm_t>(0x1);
    ASSERT_EQ(nccl().ncclCommSplit(comm(), NCCL_SPLIT_NOCOLOR, 0, &none, nullptr), ncclSuccess);
    EXPECT_EQ(none, nullptr);
    EXPECT_EQ(nccl().ncclCommSplit(nullptr, 0, 0, &child, nullptr), ncclInvalidArgument);
    EXPECT_EQ(nccl().ncclCommSplit(comm(), 0, 0, nullptr, nullptr), ncclInvalidArgument);
  });
}

// One test per call, so that a crash names its call: NCCL 2.28.9 crashes on ncclCommInitAll with
// ndev == 0 (it dereferences comms[0] after its loop; seen on the H200), which is therefore not
// tested here (fakenccl returns ncclSuccess and makes nothing).
TEST_P(NcclConformanceTest, InitAllRejectsNullComms) {
  OnRank([&] { EXPECT_EQ(nccl().ncclCommInitAll(nullptr, 1, nullptr), ncclInvalidArgument); });
}

TEST_P(NcclConformanceTest, InitAllRejectsANegativeCount) {
  OnRank([&] {
    ncclComm_t c = nullptr;
    EXPECT_EQ(nccl().ncclCommInitAll(&c, -1, nullptr), ncclInvalidArgument);
  });
}

TEST_P(NcclConformanceTest, InitAllRejectsAnUnknownDevice) {
  OnRank([&] {
    ncclComm_t c = nullptr;
    int bad_device = 99;
    EXPECT_EQ(nccl().ncclCommInitAll(&c, 1, &bad_device), ncclInvalidArgument);
  });
}

TEST_P(NcclConformanceTest, InitAllOfOneDevice) {
  OnRank([&] {
    ncclComm_t c = nullptr;
    int zero = 0;
    ASSERT_EQ(nccl().ncclCommInitAll(&c, 1, &zero), ncclSuccess);
    int device = -1;
    EXPECT_EQ(nccl().ncclCommCuDevice(c, &device), ncclSuccess);
    EXPECT_EQ(device, 0);
    EXPECT_EQ(nccl().ncclCommDestroy(c), ncclSuccess);
  });
}

CUHAL_INSTANTIATE_NCCL_BACKEND_TEST(NcclConformanceTest);

}  // namespace
}  // namespace cuhal::testing
