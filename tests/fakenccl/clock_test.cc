// Copyright 2026 The cuhal Authors.
// fakenccl's timeouts on the virtual clock (fakecuda/virtual_clock.h), and its exception walls.
//
// Each test catches a behaviour of the clock that counted wake-ups, process-wide:
//   - a busy peer was timed out (its fake calls woke the waiter, and each wake-up was a tick);
//   - a missing peer, a polling loop with a missing peer and a peer whose thread exited took
//     30000 ticks of 1-10 ms each (minutes: these tests' CTest TIMEOUT fails them);
//   - a loop polling only cuStreamQuery never saw its timeout (the poller never looked idle);
// and the entry points' and stream work's catch-alls (an exception used to escape into the C
// caller, or into fakecuda's scheduler). No test asserts a time: only outcomes.
//
// Run over both scheduling policies of fakecuda.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fakenccl/internal/engine.h"
#include "tests/fakenccl/nccl_support.h"

namespace cuhal::testing {
namespace {

using ::testing::HasSubstr;

class NcclClockTest : public ::testing::TestWithParam<fakecuda::SchedulePolicy> {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Make({})); }
  void TearDown() override {
    ranks_.reset();
    if (backend_ != nullptr) {
      EXPECT_EQ(backend_->fake_nccl()->LiveObjects().Total(), 0)
          << backend_->fake_nccl()->LeakReport();
      EXPECT_EQ(backend_->fake_cuda()->LiveObjects().Total(), 0)
          << backend_->fake_cuda()->LeakReport();
    }
    backend_.reset();
  }

  void Make(fakenccl::NcclOptions nccl_options) {
    ranks_.reset();
    backend_.reset();
    NcclBackendOptions options;
    options.device_count = 4;
    options.policy = GetParam();
    options.nccl = nccl_options;
    std::string unavailable;
    std::string error;
    backend_ = NcclBackend::Create("fake", options, &unavailable, &error);
    ASSERT_NE(backend_, nullptr) << error << unavailable;
  }

  const CudaApi& cuda() const { return backend_->cuda(); }
  const NcclApi& nccl() const { return backend_->nccl(); }
  fakenccl::FakeNccl& fake() { return *backend_->fake_nccl(); }

  RankThreads& Ranks(int n) {
    std::vector<int> devices;
    for (int r = 0; r < n; ++r) devices.push_back(r);
    ranks_ = std::make_unique<RankThreads>(cuda(), devices);
    EXPECT_TRUE(ranks_->ok());
    return *ranks_;
  }

  std::vector<ncclComm_t> Init(RankThreads& ranks) {
    std::vector<ncclComm_t> comms(static_cast<size_t>(ranks.size()), nullptr);
    ncclUniqueId id;
    EXPECT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
    ranks.Run([&](int r) {
      EXPECT_EQ(nccl().ncclCommInitRank(&comms[static_cast<size_t>(r)], ranks.size(), id, r),
                ncclSuccess)
          << nccl().ncclGetLastError(nullptr);
    });
    return comms;
  }

  // One device buffer of `n` floats (value 1 + rank) per rank; freed by FreeAll.
  std::vector<CUdeviceptr> Buffers(RankThreads& ranks, std::size_t n) {
    std::vector<CUdeviceptr> out(static_cast<size_t>(ranks.size()), 0);
    ranks.Run([&](int r) {
      std::vector<float> host(n, 1.0f + static_cast<float>(r));
      EXPECT_EQ(cuda().cuMemAlloc(&out[static_cast<size_t>(r)], n * sizeof(float)), CUDA_SUCCESS);
      EXPECT_EQ(cuda().cuMemcpyHtoD(out[static_cast<size_t>(r)], host.data(), n * sizeof(float)),
                CUDA_SUCCESS);
    });
    buffers_ = out;
    return out;
  }

  void FreeAll(RankThreads& ranks) {
    ranks.Run([&](int r) {
      if (buffers_[static_cast<size_t>(r)] != 0) {
        EXPECT_EQ(cuda().cuMemFree(buffers_[static_cast<size_t>(r)]), CUDA_SUCCESS);
      }
    });
    buffers_.clear();
  }

  // ncclCommAbort on each rank's thread (any state); skips null handles.
  void Abort(RankThreads& ranks, std::vector<ncclComm_t>& comms) {
    ranks.Run([&](int r) {
      ncclComm_t& c = comms[static_cast<size_t>(r)];
      if (c != nullptr) {
        EXPECT_EQ(nccl().ncclCommAbort(c), ncclSuccess);
      }
      c = nullptr;
    });
  }

  ncclResult_t AllReduce(CUdeviceptr buf, std::size_t n, ncclComm_t comm, CUstream stream) {
    void* p = reinterpret_cast<void*>(buf);
    return nccl().ncclAllReduce(p, p, n, ncclFloat32, ncclSum, comm,
                                reinterpret_cast<cudaStream_t>(stream));
  }

  ncclResult_t AsyncError(ncclComm_t comm) {
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comm, &async), ncclSuccess);
    return async;
  }

  std::unique_ptr<NcclBackend> backend_;
  std::unique_ptr<RankThreads> ranks_;
  std::vector<CUdeviceptr> buffers_;
};

// Rank 1 spends a long, variable time in user code (many fake calls, then a host sleep) before it
// joins; rank 0 waits in cuStreamSynchronize all along. Even with the shortest timeout there is,
// nothing times out: no virtual time passes while rank 1 runs.
TEST_P(NcclClockTest, BusyPeerIsNeverTimedOut) {
  fakenccl::NcclOptions options;
  options.timeout_ticks = 1;
  ASSERT_NO_FATAL_FAILURE(Make(options));
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Buffers(ranks, 64);
  CUdeviceptr scratch[2] = {0, 0};
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    if (r == 1) {
      // Busy: thousands of fake calls (each wakes the waiting rank), then sleep a while.
      ASSERT_EQ(cuda().cuMemAlloc(&scratch[1], 256), CUDA_SUCCESS);
      for (int i = 0; i < 3000; ++i) {
        ASSERT_EQ(cuda().cuMemsetD32Async(scratch[1], static_cast<unsigned>(i), 64,
                                          ranks.stream(r)),
                  CUDA_SUCCESS);
        if (i % 16 == 0) {
          ASSERT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    EXPECT_EQ(AllReduce(buf[rr], 64, comms[rr], ranks.stream(r)), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
    EXPECT_EQ(AsyncError(comms[rr]), ncclSuccess) << nccl().ncclGetLastError(nullptr);
    std::vector<float> host(64, 0.0f);
    EXPECT_EQ(cuda().cuMemcpyDtoH(host.data(), buf[rr], 64 * sizeof(float)), CUDA_SUCCESS);
    EXPECT_EQ(host, std::vector<float>(64, 3.0f));  // 1 + 2
    if (r == 1) {
      EXPECT_EQ(cuda().cuMemFree(scratch[1]), CUDA_SUCCESS);
    }
    EXPECT_EQ(nccl().ncclCommDestroy(comms[rr]), ncclSuccess);
    comms[rr] = nullptr;
  });
  FreeAll(ranks);
}

// Rank 1 never makes the call (its thread idles in RankThreads, a wait marked blocked). With the
// default options, rank 0's synchronization ends with the collective failed: no timeout needs
// tuning, the whole group is idle and the virtual clock jumps.
TEST_P(NcclClockTest, MissingPeerIsReportedWithDefaultOptions) {
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Buffers(ranks, 4);
  ranks.RunOn(0, [&] {
    EXPECT_EQ(AllReduce(buf[0], 4, comms[0], ranks.stream(0)), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(0)), CUDA_SUCCESS);
    EXPECT_EQ(AsyncError(comms[0]), ncclInvalidUsage);
    std::string text = nccl().ncclGetLastError(nullptr);
    EXPECT_THAT(text, HasSubstr("rank 1 never made this call"));
    EXPECT_THAT(text, HasSubstr("timed out"));
  });
  Abort(ranks, comms);
  FreeAll(ranks);
}

// NCCL's recommended loop (poll the communicator and the stream, never block) on a collective
// whose peer never arrives ends with the error.
TEST_P(NcclClockTest, PollingLoopWhosePeerNeverArrivesEnds) {
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Buffers(ranks, 4);
  ranks.RunOn(0, [&] {
    EXPECT_EQ(AllReduce(buf[0], 4, comms[0], ranks.stream(0)), ncclSuccess);
    ncclResult_t async = ncclSuccess;
    CUresult query = CUDA_ERROR_NOT_READY;
    while (async == ncclSuccess && query == CUDA_ERROR_NOT_READY) {
      ASSERT_EQ(nccl().ncclCommGetAsyncError(comms[0], &async), ncclSuccess);
      query = cuda().cuStreamQuery(ranks.stream(0));
    }
    // The stream may have finished first (the failed collective completes as a no-op).
    if (async == ncclSuccess) async = AsyncError(comms[0]);
    EXPECT_EQ(async, ncclInvalidUsage);
    EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)),
                HasSubstr("rank 1 never made this call"));
  });
  Abort(ranks, comms);
  FreeAll(ranks);
}

// A loop that polls only the stream (cuStreamQuery, never the communicator, never blocking) on a
// collective whose peer never arrives: each NOT_READY answer is an idle poll for the virtual
// clock, so the group is seen idle and the timeout fires (under the eager policy too, where the
// query itself must look at the collective's readiness again). The loop is bounded (a clock that
// never sees the poller idle would spin here forever): it ends after some thousands of polls
// (a quiescent round of the clock), far below the bound.
TEST_P(NcclClockTest, StreamQueryOnlyLoopWhosePeerNeverArrivesEnds) {
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Buffers(ranks, 4);
  ranks.RunOn(0, [&] {
    EXPECT_EQ(AllReduce(buf[0], 4, comms[0], ranks.stream(0)), ncclSuccess);
    constexpr long kMaxPolls = 2'000'000;
    CUresult query = CUDA_ERROR_NOT_READY;
    long polls = 0;
    while (query == CUDA_ERROR_NOT_READY && polls < kMaxPolls) {
      query = cuda().cuStreamQuery(ranks.stream(0));
      ++polls;
    }
    ASSERT_EQ(query, CUDA_SUCCESS) << "still NOT_READY after " << polls << " polls";
    EXPECT_EQ(AsyncError(comms[0]), ncclInvalidUsage);
    std::string text = nccl().ncclGetLastError(nullptr);
    EXPECT_THAT(text, HasSubstr("rank 1 never made this call"));
    EXPECT_THAT(text, HasSubstr("timed out"));
  });
  Abort(ranks, comms);
  FreeAll(ranks);
}

// The other side of the idle poll: rank 0 polls only the stream while rank 1 is busy in user code
// (a host sleep: neither blocked in the fake nor polling) before it joins. With the shortest
// timeout there is, nothing times out: a poller alone does not make the group idle.
TEST_P(NcclClockTest, StreamQueryLoopWithABusyPeerIsNeverTimedOut) {
  fakenccl::NcclOptions options;
  options.timeout_ticks = 1;
  ASSERT_NO_FATAL_FAILURE(Make(options));
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Buffers(ranks, 4);
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(AllReduce(buf[rr], 4, comms[rr], ranks.stream(r)), ncclSuccess);
    CUresult query = CUDA_ERROR_NOT_READY;
    while (query == CUDA_ERROR_NOT_READY) query = cuda().cuStreamQuery(ranks.stream(r));
    EXPECT_EQ(query, CUDA_SUCCESS);
    EXPECT_EQ(AsyncError(comms[rr]), ncclSuccess) << nccl().ncclGetLastError(nullptr);
    std::vector<float> host(4, 0.0f);
    EXPECT_EQ(cuda().cuMemcpyDtoH(host.data(), buf[rr], 4 * sizeof(float)), CUDA_SUCCESS);
    EXPECT_EQ(host, std::vector<float>(4, 3.0f));  // 1 + 2
    EXPECT_EQ(nccl().ncclCommDestroy(comms[rr]), ncclSuccess);
    comms[rr] = nullptr;
  });
  FreeAll(ranks);
}

// Rank 1's thread makes its communicator and exits without the collective: an exited thread is a
// gone participant.
TEST_P(NcclClockTest, PeerWhoseThreadExitedIsReported) {
  RankThreads& ranks = Ranks(1);  // rank 0
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(2, nullptr);
  CUcontext ctx1 = nullptr;
  ASSERT_EQ(cuda().cuDevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
  std::thread rank1([&] {
    ASSERT_EQ(cuda().cuCtxSetCurrent(ctx1), CUDA_SUCCESS);
    EXPECT_EQ(nccl().ncclCommInitRank(&comms[1], 2, id, 1), ncclSuccess);
  });  // then the thread ends, its communicator still alive
  ranks.RunOn(0, [&] { EXPECT_EQ(nccl().ncclCommInitRank(&comms[0], 2, id, 0), ncclSuccess); });
  rank1.join();
  CUdeviceptr buf = 0;
  ranks.RunOn(0, [&] {
    ASSERT_EQ(cuda().cuMemAlloc(&buf, 16), CUDA_SUCCESS);
    EXPECT_EQ(AllReduce(buf, 4, comms[0], ranks.stream(0)), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(0)), CUDA_SUCCESS);
    EXPECT_EQ(AsyncError(comms[0]), ncclInvalidUsage);
    EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)),
                HasSubstr("rank 1 never made this call"));
    EXPECT_EQ(nccl().ncclCommAbort(comms[0]), ncclSuccess);
    EXPECT_EQ(cuda().cuMemFree(buf), CUDA_SUCCESS);
  });
  EXPECT_EQ(nccl().ncclCommAbort(comms[1]), ncclSuccess);  // any thread may abort it
  EXPECT_EQ(cuda().cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
}

// An exception inside an entry point (thrown with the engine lock held) is answered
// ncclInternalError, with the reason in ncclGetLastError; the communicator keeps working and can
// be destroyed.
TEST_P(NcclClockTest, EntryPointThatThrowsAnswersInternalError) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Buffers(ranks, 4);
  ranks.RunOn(0, [&] {
    fake().engine().ThrowInCallsForTesting(1);
    EXPECT_EQ(AllReduce(buf[0], 4, comms[0], ranks.stream(0)), ncclInternalError);
    std::string text = nccl().ncclGetLastError(nullptr);
    EXPECT_THAT(text, HasSubstr("ncclAllReduce"));
    EXPECT_THAT(text, HasSubstr("internal error"));
    EXPECT_EQ(AllReduce(buf[0], 4, comms[0], ranks.stream(0)), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(0)), CUDA_SUCCESS);
    EXPECT_EQ(AsyncError(comms[0]), ncclSuccess);
    EXPECT_EQ(nccl().ncclCommDestroy(comms[0]), ncclSuccess);
    comms[0] = nullptr;
  });
  FreeAll(ranks);
}

// An exception while a collective moves data on a stream fails the collective with
// ncclInternalError on every rank; no stream is wedged, and the communicators can be aborted.
TEST_P(NcclClockTest, CollectiveThatThrowsOnItsStreamFailsTheOperation) {
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Buffers(ranks, 4);
  fake().engine().ThrowInExecutionsForTesting(1);
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    EXPECT_EQ(AllReduce(buf[rr], 4, comms[rr], ranks.stream(r)), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
    EXPECT_EQ(AsyncError(comms[rr]), ncclInternalError);
    EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)), HasSubstr("injected exception"));
  });
  Abort(ranks, comms);
  FreeAll(ranks);
}

INSTANTIATE_TEST_SUITE_P(Policies, NcclClockTest,
                         ::testing::Values(fakecuda::SchedulePolicy::kEager,
                                           fakecuda::SchedulePolicy::kAdversarial),
                         [](const ::testing::TestParamInfo<fakecuda::SchedulePolicy>& p) {
                           return p.param == fakecuda::SchedulePolicy::kEager
                                      ? std::string("Eager")
                                      : std::string("Adversarial");
                         });

}  // namespace
}  // namespace cuhal::testing
