// Copyright 2026 The cuhal Authors.
// fakenccl's own model on several ranks: communicator lifetime (multi-rank init, InitAll, split,
// non-blocking init, timeouts), grouped point to point, mismatch detection, rank death and abort,
// fault injection, leak reports, and the arithmetic's conversions. Fake only (several GPUs and
// fault injection): the one-rank behaviour that real NCCL can check is in conformance_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "fakecuda/stream_work.h"
#include "fakenccl/datatypes.h"
#include "fakenccl/nccl_fault_injector.h"
#include "tests/fakenccl/nccl_support.h"

namespace cuhal::testing {
namespace {

using ::testing::HasSubstr;

// A fresh fake world per test: fakecuda with 8 H200s and a FakeNccl.
class NcclModelTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Make({})); }
  void TearDown() override { Teardown(); }

  void Make(fakenccl::NcclOptions nccl_options,
            fakecuda::SchedulePolicy policy = fakecuda::SchedulePolicy::kEager) {
    Teardown();
    NcclBackendOptions options;
    options.device_count = 8;
    options.policy = policy;
    options.nccl = nccl_options;
    std::string unavailable;
    std::string error;
    backend_ = NcclBackend::Create("fake", options, &unavailable, &error);
    ASSERT_NE(backend_, nullptr) << error << unavailable;
  }

  void Teardown() {
    ranks_.reset();
    if (backend_ != nullptr && check_leaks_) {
      EXPECT_EQ(backend_->fake_nccl()->LiveObjects().Total(), 0)
          << backend_->fake_nccl()->LeakReport();
      EXPECT_EQ(backend_->fake_cuda()->LiveObjects().Total(), 0)
          << backend_->fake_cuda()->LeakReport();
    }
    backend_.reset();
  }

  const CudaApi& cuda() const { return backend_->cuda(); }
  const NcclApi& nccl() const { return backend_->nccl(); }
  fakenccl::FakeNccl& fake() { return *backend_->fake_nccl(); }

  // n rank threads on devices 0..n-1.
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

  void Destroy(RankThreads& ranks, std::vector<ncclComm_t>& comms) {
    ranks.Run([&](int r) {
      ncclComm_t& c = comms[static_cast<size_t>(r)];
      if (c != nullptr) {
        EXPECT_EQ(nccl().ncclCommDestroy(c), ncclSuccess);
      }
      c = nullptr;
    });
  }

  void Abort(RankThreads& ranks, std::vector<ncclComm_t>& comms) {
    ranks.Run([&](int r) {
      ncclComm_t& c = comms[static_cast<size_t>(r)];
      EXPECT_EQ(nccl().ncclCommAbort(c), ncclSuccess);
      c = nullptr;
    });
  }

  // A device buffer of `n` floats per rank, filled with value(rank, i); freed by FreeAll.
  std::vector<CUdeviceptr> Floats(RankThreads& ranks, std::size_t n,
                                  const std::function<float(int, std::size_t)>& value) {
    std::vector<CUdeviceptr> out(static_cast<size_t>(ranks.size()), 0);
    ranks.Run([&](int r) {
      std::vector<float> host(n);
      for (std::size_t i = 0; i < n; ++i) host[i] = value(r, i);
      EXPECT_EQ(cuda().cuMemAlloc(&out[static_cast<size_t>(r)], n * sizeof(float)), CUDA_SUCCESS);
      EXPECT_EQ(cuda().cuMemcpyHtoD(out[static_cast<size_t>(r)], host.data(), n * sizeof(float)),
                CUDA_SUCCESS);
    });
    buffers_.push_back(out);
    return out;
  }

  std::vector<float> Read(RankThreads& ranks, int rank, CUdeviceptr p, std::size_t n) {
    std::vector<float> host(n);
    ranks.RunOn(rank, [&] {
      EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(rank)), CUDA_SUCCESS);
      EXPECT_EQ(cuda().cuMemcpyDtoH(host.data(), p, n * sizeof(float)), CUDA_SUCCESS);
    });
    return host;
  }

  void FreeAll(RankThreads& ranks) {
    for (auto& per_rank : buffers_) {
      ranks.Run([&](int r) {
        if (per_rank[static_cast<size_t>(r)] != 0) {
          EXPECT_EQ(cuda().cuMemFree(per_rank[static_cast<size_t>(r)]), CUDA_SUCCESS);
        }
      });
    }
    buffers_.clear();
  }

  static cudaStream_t Cs(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }

  std::unique_ptr<NcclBackend> backend_;
  std::unique_ptr<RankThreads> ranks_;
  std::vector<std::vector<CUdeviceptr>> buffers_;
  bool check_leaks_ = true;
};

TEST_F(NcclModelTest, VersionIsConfigurable) {
  int version = 0;
  ASSERT_EQ(nccl().ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
  fakenccl::NcclOptions options;
  options.version = 21805;
  Make(options);
  ASSERT_EQ(nccl().ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, 21805);
  std::string error;
  options.version = 0;
  EXPECT_EQ(fakenccl::FakeNccl::Create(options, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("version"));
}

TEST_F(NcclModelTest, RanksAsThreadsFormOneCommunicator) {
  RankThreads& ranks = Ranks(4);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.Run([&](int r) {
    int count = 0;
    int rank = -1;
    int device = -1;
    ncclComm_t c = comms[static_cast<size_t>(r)];
    EXPECT_EQ(nccl().ncclCommCount(c, &count), ncclSuccess);
    EXPECT_EQ(nccl().ncclCommUserRank(c, &rank), ncclSuccess);
    EXPECT_EQ(nccl().ncclCommCuDevice(c, &device), ncclSuccess);
    EXPECT_EQ(count, 4);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(device, r);
  });
  EXPECT_EQ(fake().LiveObjects().communicators, 4);
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, UniqueIdsAreRendezvousKeys) {
  // Ranks 0,1 meet under one id and ranks 2,3 under another, at the same time.
  RankThreads& ranks = Ranks(4);
  ncclUniqueId ids[2];
  ASSERT_EQ(nccl().ncclGetUniqueId(&ids[0]), ncclSuccess);
  ASSERT_EQ(nccl().ncclGetUniqueId(&ids[1]), ncclSuccess);
  std::vector<ncclComm_t> comms(4, nullptr);
  ranks.Run([&](int r) {
    ASSERT_EQ(nccl().ncclCommInitRank(&comms[static_cast<size_t>(r)], 2, ids[r / 2], r % 2),
              ncclSuccess);
    int count = 0;
    int rank = -1;
    EXPECT_EQ(nccl().ncclCommCount(comms[static_cast<size_t>(r)], &count), ncclSuccess);
    EXPECT_EQ(nccl().ncclCommUserRank(comms[static_cast<size_t>(r)], &rank), ncclSuccess);
    EXPECT_EQ(count, 2);
    EXPECT_EQ(rank, r % 2);
  });
  // Each pair reduces on its own.
  std::vector<CUdeviceptr> buf = Floats(ranks, 4, [](int r, std::size_t) { return 1.0f + r; });
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    EXPECT_EQ(nccl().ncclAllReduce(reinterpret_cast<void*>(buf[rr]),
                                   reinterpret_cast<void*>(buf[rr]), 4, ncclFloat32, ncclSum,
                                   comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
  });
  EXPECT_EQ(Read(ranks, 0, buf[0], 4), std::vector<float>(4, 3.0f));  // 1 + 2
  EXPECT_EQ(Read(ranks, 3, buf[3], 4), std::vector<float>(4, 7.0f));  // 3 + 4
  FreeAll(ranks);
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, InitRankInsideAGroupFromOneThread) {
  // One thread initializes four ranks (switching devices) and reduces across them in a group.
  RankThreads& ranks = Ranks(4);  // only for the streams and contexts
  std::vector<CUcontext> ctx(4, nullptr);
  for (int d = 0; d < 4; ++d) {
    ASSERT_EQ(cuda().cuDevicePrimaryCtxRetain(&ctx[static_cast<size_t>(d)], d), CUDA_SUCCESS);
  }
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(4, nullptr);
  ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(cuda().cuCtxPushCurrent(ctx[static_cast<size_t>(r)]), CUDA_SUCCESS);
    EXPECT_EQ(nccl().ncclCommInitRank(&comms[static_cast<size_t>(r)], 4, id, r), ncclSuccess);
    ASSERT_EQ(cuda().cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
  }
  ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess) << nccl().ncclGetLastError(nullptr);
  std::vector<CUdeviceptr> buf = Floats(ranks, 3, [](int r, std::size_t i) {
    return static_cast<float>(r * 10 + static_cast<int>(i));
  });
  ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    auto rr = static_cast<size_t>(r);
    EXPECT_EQ(nccl().ncclAllReduce(reinterpret_cast<void*>(buf[rr]),
                                   reinterpret_cast<void*>(buf[rr]), 3, ncclFloat32, ncclMax,
                                   comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
  }
  ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess) << nccl().ncclGetLastError(nullptr);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(Read(ranks, r, buf[static_cast<size_t>(r)], 3), (std::vector<float>{30, 31, 32}));
  }
  FreeAll(ranks);
  for (ncclComm_t c : comms) EXPECT_EQ(nccl().ncclCommDestroy(c), ncclSuccess);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(cuda().cuDevicePrimaryCtxRelease(d), CUDA_SUCCESS);
}

TEST_F(NcclModelTest, InitAllUsesTheDeviceList) {
  RankThreads& ranks = Ranks(4);
  std::vector<ncclComm_t> comms(4, nullptr);
  const int devlist[4] = {3, 1, 2, 0};
  ASSERT_EQ(nccl().ncclCommInitAll(comms.data(), 4, devlist), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    int device = -1;
    int rank = -1;
    EXPECT_EQ(nccl().ncclCommCuDevice(comms[static_cast<size_t>(r)], &device), ncclSuccess);
    EXPECT_EQ(nccl().ncclCommUserRank(comms[static_cast<size_t>(r)], &rank), ncclSuccess);
    EXPECT_EQ(device, devlist[r]);
    EXPECT_EQ(rank, r);
  }
  // Rank r lives on device devlist[r]: rank 0's stream must be device 3's.
  ranks.RunOn(3, [&] {
    CUdeviceptr p = 0;
    ASSERT_EQ(cuda().cuMemAlloc(&p, 8), CUDA_SUCCESS);
    EXPECT_EQ(nccl().ncclAllReduce(reinterpret_cast<void*>(p), reinterpret_cast<void*>(p), 2,
                                   ncclFloat32, ncclSum, comms[1], Cs(ranks.stream(3))),
              ncclInvalidArgument);  // comms[1] is on device 1
    EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)), HasSubstr("device"));
    EXPECT_EQ(cuda().cuMemFree(p), CUDA_SUCCESS);
  });
  const int dup[2] = {1, 1};
  ncclComm_t two[2];
  EXPECT_EQ(nccl().ncclCommInitAll(two, 2, dup), ncclInvalidUsage);
  EXPECT_EQ(nccl().ncclCommInitAll(two, 9, nullptr), ncclUnhandledCudaError);  // 8 devices
  EXPECT_EQ(nccl().ncclCommInitAll(two, 0, nullptr), ncclSuccess);
  for (ncclComm_t c : comms) EXPECT_EQ(nccl().ncclCommDestroy(c), ncclSuccess);
}

TEST_F(NcclModelTest, SplitByColorAndKey) {
  RankThreads& ranks = Ranks(5);
  std::vector<ncclComm_t> comms = Init(ranks);
  // Ranks 0, 2, 4 take color 0 with keys that reverse their order; rank 1 is alone in color 1;
  // rank 3 takes no color.
  std::vector<ncclComm_t> sub(5, nullptr);
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    int color = r == 3 ? NCCL_SPLIT_NOCOLOR : r % 2;
    sub[rr] = reinterpret_cast<ncclComm_t>(0x1);
    ASSERT_EQ(nccl().ncclCommSplit(comms[rr], color, -r, &sub[rr], nullptr), ncclSuccess)
        << nccl().ncclGetLastError(nullptr);
  });
  EXPECT_EQ(sub[3], nullptr);
  auto info = [&](int r) {
    int count = 0;
    int rank = 0;
    EXPECT_EQ(nccl().ncclCommCount(sub[static_cast<size_t>(r)], &count), ncclSuccess);
    EXPECT_EQ(nccl().ncclCommUserRank(sub[static_cast<size_t>(r)], &rank), ncclSuccess);
    return std::make_pair(count, rank);
  };
  EXPECT_EQ(info(4), std::make_pair(3, 0));
  EXPECT_EQ(info(2), std::make_pair(3, 1));
  EXPECT_EQ(info(0), std::make_pair(3, 2));
  EXPECT_EQ(info(1), std::make_pair(1, 0));
  // The split communicator reduces among its own ranks.
  std::vector<CUdeviceptr> buf = Floats(ranks, 2, [](int r, std::size_t) { return 1.0f * r; });
  ranks.Run([&](int r) {
    if (r % 2 != 0) return;
    auto rr = static_cast<size_t>(r);
    EXPECT_EQ(nccl().ncclAllReduce(reinterpret_cast<void*>(buf[rr]),
                                   reinterpret_cast<void*>(buf[rr]), 2, ncclFloat32, ncclSum,
                                   sub[rr], Cs(ranks.stream(r))),
              ncclSuccess);
  });
  EXPECT_EQ(Read(ranks, 2, buf[2], 2), std::vector<float>(2, 6.0f));  // 0 + 2 + 4
  FreeAll(ranks);
  Destroy(ranks, sub);
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, NonBlockingInitOfFourRanks) {
  RankThreads& ranks = Ranks(4);
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(4, nullptr);
  ranks.Run([&](int r) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    auto rr = static_cast<size_t>(r);
    EXPECT_EQ(nccl().ncclCommInitRankConfig(&comms[rr], 4, id, r, &config), ncclInProgress);
    ASSERT_NE(comms[rr], nullptr);
    int count = 0;
    ncclResult_t state = ncclInProgress;
    // Using it before it is ready is an error (NCCL's ncclCommEnsureReady), unless it is ready.
    ncclResult_t early = nccl().ncclCommCount(comms[rr], &count);
    EXPECT_TRUE(early == ncclInvalidArgument || early == ncclSuccess) << NcclName(early);
    while (state == ncclInProgress) {
      ASSERT_EQ(nccl().ncclCommGetAsyncError(comms[rr], &state), ncclSuccess);
    }
    EXPECT_EQ(state, ncclSuccess);
    EXPECT_EQ(nccl().ncclCommCount(comms[rr], &count), ncclSuccess);
    EXPECT_EQ(count, 4);
  });
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, InitWithAMissingRankTimesOut) {
  // A rank that has not joined yet is never counted idle (the fake cannot know its thread): only
  // the wall-clock backstop ends an initialization whose rank never comes.
  fakenccl::NcclOptions options;
  options.wall_timeout_ms = 200;
  Make(options);
  RankThreads& ranks = Ranks(2);
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  // Blocking: rank 0 waits for rank 1, which never comes.
  ranks.RunOn(0, [&] {
    ncclComm_t c = reinterpret_cast<ncclComm_t>(0x1);
    EXPECT_EQ(nccl().ncclCommInitRank(&c, 2, id, 0), ncclSystemError);
    EXPECT_EQ(c, nullptr);
    EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)), HasSubstr("rank(s) 1 of 2"));
  });
  // Non-blocking: polling until the rendezvous gives up.
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  ranks.RunOn(1, [&] {
    ncclComm_t c = nullptr;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    EXPECT_EQ(nccl().ncclCommInitRankConfig(&c, 2, id, 1, &config), ncclInProgress);
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) {
      ASSERT_EQ(nccl().ncclCommGetAsyncError(c, &state), ncclSuccess);
    }
    EXPECT_EQ(state, ncclSystemError);
    EXPECT_EQ(nccl().ncclCommDestroy(c), ncclSystemError);  // a broken communicator: abort it
    EXPECT_EQ(nccl().ncclCommAbort(c), ncclSuccess);
  });
}

TEST_F(NcclModelTest, InitRanksDisagreeingOnTheSizeFail) {
  RankThreads& ranks = Ranks(2);
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclResult_t> results(2);
  ranks.Run([&](int r) {
    ncclComm_t c = nullptr;
    results[static_cast<size_t>(r)] = nccl().ncclCommInitRank(&c, r == 0 ? 2 : 3, id, r);
    EXPECT_EQ(c, nullptr);
  });
  EXPECT_EQ(results[0], ncclInvalidUsage);
  EXPECT_EQ(results[1], ncclInvalidUsage);
}

TEST_F(NcclModelTest, GroupedSendRecvRing) {
  RankThreads& ranks = Ranks(4);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> src = Floats(ranks, 6, [](int r, std::size_t i) {
    return static_cast<float>(100 * r + static_cast<int>(i));
  });
  std::vector<CUdeviceptr> dst = Floats(ranks, 6, [](int, std::size_t) { return -1.0f; });
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(nccl().ncclSend(reinterpret_cast<void*>(src[rr]), 6, ncclFloat32, (r + 1) % 4,
                              comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
    EXPECT_EQ(nccl().ncclRecv(reinterpret_cast<void*>(dst[rr]), 6, ncclFloat32, (r + 3) % 4,
                              comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
    ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
  });
  for (int r = 0; r < 4; ++r) {
    std::vector<float> got = Read(ranks, r, dst[static_cast<size_t>(r)], 6);
    int from = (r + 3) % 4;
    for (std::size_t i = 0; i < 6; ++i) {
      EXPECT_EQ(got[i], static_cast<float>(100 * from + static_cast<int>(i))) << r << " " << i;
    }
  }
  FreeAll(ranks);
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, AlltoAllThroughGroupedSendRecv) {
  constexpr int kN = 3;
  constexpr std::size_t kBlock = 2;
  RankThreads& ranks = Ranks(kN);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> src = Floats(ranks, kN * kBlock, [](int r, std::size_t i) {
    return static_cast<float>(10 * r + static_cast<int>(i));
  });
  std::vector<CUdeviceptr> dst = Floats(ranks, kN * kBlock, [](int, std::size_t) { return 0.0f; });
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
    for (int p = 0; p < kN; ++p) {
      CUdeviceptr s = src[rr] + static_cast<size_t>(p) * kBlock * sizeof(float);
      CUdeviceptr d = dst[rr] + static_cast<size_t>(p) * kBlock * sizeof(float);
      EXPECT_EQ(nccl().ncclSend(reinterpret_cast<void*>(s), kBlock, ncclFloat32, p, comms[rr],
                                Cs(ranks.stream(r))),
                ncclSuccess);
      EXPECT_EQ(nccl().ncclRecv(reinterpret_cast<void*>(d), kBlock, ncclFloat32, p, comms[rr],
                                Cs(ranks.stream(r))),
                ncclSuccess);
    }
    ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
  });
  for (int r = 0; r < kN; ++r) {
    std::vector<float> got = Read(ranks, r, dst[static_cast<size_t>(r)], kN * kBlock);
    for (int p = 0; p < kN; ++p) {
      for (std::size_t i = 0; i < kBlock; ++i) {
        // Block p of rank r came from block r of rank p.
        EXPECT_EQ(got[static_cast<size_t>(p) * kBlock + i],
                  static_cast<float>(10 * p + r * static_cast<int>(kBlock) + static_cast<int>(i)));
      }
    }
  }
  FreeAll(ranks);
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, UngroupedSendRecvDeadlockIsReportedNotHung) {
  fakenccl::NcclOptions options;
  options.timeout_ticks = 30;
  Make(options);
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Floats(ranks, 4, [](int, std::size_t) { return 1.0f; });
  // Each rank sends first, then receives, without a group: each send waits for a receive that
  // sits behind the other rank's send on its stream.
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    void* p = reinterpret_cast<void*>(buf[rr]);
    EXPECT_EQ(nccl().ncclSend(p, 2, ncclFloat32, 1 - r, comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
    EXPECT_EQ(nccl().ncclRecv(p, 2, ncclFloat32, 1 - r, comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[rr], &async), ncclSuccess);
    EXPECT_EQ(async, ncclInvalidUsage);
    EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)), HasSubstr("never reached it"));
  });
  FreeAll(ranks);
  Abort(ranks, comms);
}

// One mismatch scenario: what each rank calls on a fresh 2-rank communicator.
struct Mismatch {
  const char* name;
  std::function<ncclResult_t(const NcclApi&, int rank, void* buf, ncclComm_t, cudaStream_t)> call;
  const char* expect0;  // in the error text
  const char* expect1;
};

TEST_F(NcclModelTest, MismatchedCallsAreReportedWithRanksAndCalls) {
  const std::vector<Mismatch> cases = {
      {"count",
       [](const NcclApi& n, int r, void* b, ncclComm_t c, cudaStream_t s) {
         return n.ncclAllReduce(b, b, r == 0 ? 4 : 8, ncclFloat32, ncclSum, c, s);
       },
       "ncclAllReduce(count=4", "ncclAllReduce(count=8"},
      {"type",
       [](const NcclApi& n, int r, void* b, ncclComm_t c, cudaStream_t s) {
         return n.ncclAllReduce(b, b, 4, r == 0 ? ncclFloat32 : ncclInt32, ncclSum, c, s);
       },
       "ncclFloat32", "ncclInt32"},
      {"op",
       [](const NcclApi& n, int r, void* b, ncclComm_t c, cudaStream_t s) {
         return n.ncclAllReduce(b, b, 4, ncclFloat32, r == 0 ? ncclSum : ncclMax, c, s);
       },
       "ncclSum", "ncclMax"},
      {"root",
       [](const NcclApi& n, int r, void* b, ncclComm_t c, cudaStream_t s) {
         return n.ncclBroadcast(b, b, 4, ncclFloat32, r, c, s);
       },
       "root=0", "root=1"},
      {"order",
       [](const NcclApi& n, int r, void* b, ncclComm_t c, cudaStream_t s) {
         return r == 0 ? n.ncclAllReduce(b, b, 4, ncclFloat32, ncclSum, c, s)
                       : n.ncclBroadcast(b, b, 4, ncclFloat32, 0, c, s);
       },
       "ncclAllReduce", "ncclBroadcast"},
      {"send/recv size",
       [](const NcclApi& n, int r, void* b, ncclComm_t c, cudaStream_t s) {
         return r == 0 ? n.ncclSend(b, 4, ncclFloat32, 1, c, s)
                       : n.ncclRecv(b, 2, ncclFloat32, 0, c, s);
       },
       "sends 16 bytes", "expects 8 bytes"},
  };
  RankThreads& ranks = Ranks(2);
  std::vector<CUdeviceptr> buf = Floats(ranks, 8, [](int, std::size_t) { return 1.0f; });
  for (const Mismatch& m : cases) {
    SCOPED_TRACE(m.name);
    std::vector<ncclComm_t> comms = Init(ranks);
    ranks.Run([&](int r) {
      auto rr = static_cast<size_t>(r);
      EXPECT_EQ(m.call(nccl(), r, reinterpret_cast<void*>(buf[rr]), comms[rr],
                       Cs(ranks.stream(r))),
                ncclSuccess);
      // Never a hang: the mismatch settles the operation at once.
      EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
      ncclResult_t async = ncclSuccess;
      EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[rr], &async), ncclSuccess);
      EXPECT_EQ(async, ncclInvalidUsage);
      std::string text = nccl().ncclGetLastError(nullptr);
      EXPECT_THAT(text, HasSubstr("mismatched"));
      EXPECT_THAT(text, HasSubstr(m.expect0));
      EXPECT_THAT(text, HasSubstr(m.expect1));
      EXPECT_THAT(text, HasSubstr("rank 0"));
      EXPECT_THAT(text, HasSubstr("rank 1"));
      // Later calls on the broken communicator fail with its error.
      EXPECT_EQ(nccl().ncclAllReduce(reinterpret_cast<void*>(buf[rr]),
                                     reinterpret_cast<void*>(buf[rr]), 1, ncclFloat32, ncclSum,
                                     comms[rr], Cs(ranks.stream(r))),
                ncclInvalidUsage);
      // ncclCommDestroy refuses a broken communicator; ncclCommAbort takes it.
      EXPECT_EQ(nccl().ncclCommDestroy(comms[rr]), ncclInvalidUsage);
      EXPECT_EQ(nccl().ncclCommAbort(comms[rr]), ncclSuccess);
    });
  }
  FreeAll(ranks);
}

TEST_F(NcclModelTest, RankDeathIsARemoteErrorAndAbortCleansUp) {
  fakenccl::NcclOptions options;
  options.timeout_ticks = 40;
  Make(options);
  fake().faults().AddRankDeath({.rank = 2, .nth = 2, .nranks = 4});
  RankThreads& ranks = Ranks(4);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Floats(ranks, 4, [](int r, std::size_t) { return 1.0f * r; });
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    void* p = reinterpret_cast<void*>(buf[rr]);
    // The first collective completes everywhere.
    EXPECT_EQ(nccl().ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
    // Rank 2 dies at its second: its call "returns" but nothing of it ever arrives.
    EXPECT_EQ(nccl().ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
    if (r == 2) return;
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[rr], &async), ncclSuccess);
    EXPECT_EQ(async, ncclRemoteError);
    std::string text = nccl().ncclGetLastError(nullptr);
    EXPECT_THAT(text, HasSubstr("rank 2 died"));
    EXPECT_THAT(text, HasSubstr("timed out"));
  });
  // The first AllReduce's result (0+1+2+3) is in every buffer; the second never ran.
  EXPECT_EQ(Read(ranks, 0, buf[0], 4), std::vector<float>(4, 6.0f));
  FreeAll(ranks);
  Abort(ranks, comms);
}

TEST_F(NcclModelTest, SurvivorsPollingAsyncErrorSeeTheDeathWithoutSynchronizing) {
  fakenccl::NcclOptions options;
  options.timeout_ticks = 40;
  Make(options);
  fake().faults().AddRankDeath({.rank = 1, .nth = 1});
  RankThreads& ranks = Ranks(3);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Floats(ranks, 4, [](int, std::size_t) { return 1.0f; });
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    void* p = reinterpret_cast<void*>(buf[rr]);
    EXPECT_EQ(nccl().ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
    if (r == 1) return;
    // NCCL's recommended loop: poll the stream and the communicator, never blocking.
    ncclResult_t async = ncclSuccess;
    CUresult q = CUDA_ERROR_NOT_READY;
    while (async == ncclSuccess && q == CUDA_ERROR_NOT_READY) {
      ASSERT_EQ(nccl().ncclCommGetAsyncError(comms[rr], &async), ncclSuccess);
      q = cuda().cuStreamQuery(ranks.stream(r));
    }
    // The stream may have finished first (the failed collective completes as a no-op once the
    // query sees its deadline pass): the error is there all the same.
    if (async == ncclSuccess) {
      ASSERT_EQ(nccl().ncclCommGetAsyncError(comms[rr], &async), ncclSuccess);
    }
    EXPECT_EQ(async, ncclRemoteError);
    // Abort unblocks the stream.
    EXPECT_EQ(nccl().ncclCommAbort(comms[rr]), ncclSuccess);
    comms[rr] = nullptr;
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
  });
  FreeAll(ranks);
  Abort(ranks, comms);
}

TEST_F(NcclModelTest, AbortFromAnotherThreadUnblocksASynchronizingRank) {
  // Rank 1 runs (spinning, then aborting) the whole time rank 0 waits, so no virtual time passes:
  // only the abort can end rank 0's wait (a timeout would say "timed out" in the error).
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Floats(ranks, 4, [](int, std::size_t) { return 1.0f; });
  std::atomic<bool> posted{false};
  ranks.Run([&](int r) {
    if (r == 0) {
      void* p = reinterpret_cast<void*>(buf[0]);
      EXPECT_EQ(nccl().ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[0], Cs(ranks.stream(0))),
                ncclSuccess);
      posted = true;
      EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(0)), CUDA_SUCCESS);
    } else {
      // Rank 1 never calls the collective; it aborts rank 0's communicator (a watchdog).
      while (!posted) std::this_thread::yield();
      EXPECT_EQ(nccl().ncclCommAbort(comms[0]), ncclSuccess);
      EXPECT_EQ(nccl().ncclCommAbort(comms[1]), ncclSuccess);
    }
  });
  comms.assign(2, nullptr);
  FreeAll(ranks);
}

// A rule limited to one thread sees only that thread's calls (sweeps of ranks-as-threads).
TEST(NcclFaultInjectorThreadTest, RuleLimitedToAThreadCountsOnlyItsCalls) {
  fakenccl::NcclFaultInjector faults;
  faults.EnableCallLog(true);
  fakenccl::NcclFaultRule rule;
  rule.n = 2;
  rule.error = ncclRemoteError;
  rule.thread = std::this_thread::get_id();
  faults.AddRule(rule);
  EXPECT_EQ(faults.OnCall("ncclGetUniqueId"), ncclSuccess);
  std::thread other([&] {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(faults.OnCall("ncclAllReduce"), ncclSuccess);
  });
  other.join();
  EXPECT_EQ(faults.OnCall("ncclCommInitRank"), ncclRemoteError);
  EXPECT_EQ(faults.injected(), 1u);
  EXPECT_EQ(faults.CallLog(std::this_thread::get_id()),
            (std::vector<std::string>{"ncclGetUniqueId", "ncclCommInitRank"}));
  EXPECT_EQ(faults.CallLog().size(), 5u);
}

TEST_F(NcclModelTest, FaultInjectionRulesAndCallLog) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Floats(ranks, 4, [](int, std::size_t) { return 1.0f; });
  fake().faults().ResetCounters();
  fake().faults().EnableCallLog(true);
  fake().faults().AddRule({.entry = "ncclAllReduce",
                           .mode = fakenccl::NcclFaultRule::Mode::kNth,
                           .n = 2,
                           .error = ncclSystemError});
  ranks.RunOn(0, [&] {
    void* p = reinterpret_cast<void*>(buf[0]);
    cudaStream_t s = Cs(ranks.stream(0));
    EXPECT_EQ(nccl().ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[0], s), ncclSuccess);
    EXPECT_EQ(nccl().ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[0], s), ncclSystemError);
    EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)), HasSubstr("injected"));
    EXPECT_EQ(nccl().ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[0], s), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(0)), CUDA_SUCCESS);
  });
  EXPECT_EQ(fake().faults().calls(), 3u);
  EXPECT_EQ(fake().faults().calls("ncclAllReduce"), 3u);
  EXPECT_EQ(fake().faults().injected(), 1u);
  EXPECT_EQ(fake().faults().CallLog(), std::vector<std::string>(3, "ncclAllReduce"));
  // The injected failure had no effect: two AllReduces (sums over one rank) left the data alone.
  EXPECT_EQ(Read(ranks, 0, buf[0], 4), std::vector<float>(4, 1.0f));

  std::string error;
  EXPECT_TRUE(fake().faults().AddRulesFromSpec(
      "ncclCommCount:every:0:ncclInternalError;ncclSend:fraction:0.5:ncclRemoteError@7;die:1:3:4",
      &error))
      << error;
  int count = 0;
  EXPECT_EQ(nccl().ncclCommCount(comms[0], &count), ncclInternalError);
  EXPECT_FALSE(fake().faults().AddRulesFromSpec("ncclSend:sometimes:1:ncclRemoteError", &error));
  EXPECT_THAT(error, HasSubstr("mode"));
  EXPECT_FALSE(fake().faults().AddRulesFromSpec("ncclSend:nth:1:ncclNoSuchError", &error));
  // An empty entry name is refused ("*" is the wildcard); it used to fail every entry point.
  EXPECT_FALSE(fake().faults().AddRulesFromSpec(":nth:1:ncclRemoteError", &error));
  EXPECT_THAT(error, HasSubstr("empty entry name"));
  EXPECT_FALSE(fake().faults().AddRulesFromSpec("die:1", &error));
  EXPECT_TRUE(fake().faults().ShouldDie(1, 4, 3));
  EXPECT_FALSE(fake().faults().ShouldDie(1, 8, 3));
  fake().faults().ClearRules();
  EXPECT_EQ(nccl().ncclCommCount(comms[0], &count), ncclSuccess);
  FreeAll(ranks);
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, EveryEntryPointCanBeFailed) {
  // A fault on every call: each entry point returns it before doing anything.
  fake().faults().AddRule({.entry = "", .mode = fakenccl::NcclFaultRule::Mode::kEvery,
                           .error = ncclInternalError});
  int version = 0;
  ncclUniqueId id;
  ncclComm_t c = nullptr;
  EXPECT_EQ(nccl().ncclGetVersion(&version), ncclInternalError);
  EXPECT_EQ(version, 0);
  EXPECT_EQ(nccl().ncclGetUniqueId(&id), ncclInternalError);
  EXPECT_EQ(nccl().ncclCommInitRank(&c, 1, id, 0), ncclInternalError);
  EXPECT_EQ(nccl().ncclGroupStart(), ncclInternalError);
  EXPECT_EQ(nccl().ncclGroupEnd(), ncclInternalError);
  EXPECT_EQ(c, nullptr);
  fake().faults().ClearRules();
  EXPECT_EQ(nccl().ncclGroupEnd(), ncclInvalidUsage);  // the failed GroupStart had no effect
}

TEST_F(NcclModelTest, LeakReportNamesLiveCommunicatorsAndOps) {
  check_leaks_ = false;
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  float two = 2.0f;
  ncclRedOp_t op;
  ASSERT_EQ(nccl().ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate,
                                            comms[1]),
            ncclSuccess);
  fakenccl::NcclInventory live = fake().LiveObjects();
  EXPECT_EQ(live.communicators, 2);
  EXPECT_EQ(live.reduction_ops, 1);
  EXPECT_EQ(live.ToString(), "2 communicator(s), 1 reduction op(s)");
  std::string report = fake().LeakReport();
  EXPECT_THAT(report, HasSubstr("ncclCommInitRank"));
  EXPECT_THAT(report, HasSubstr("rank 1 of communicator"));
  EXPECT_THAT(report, HasSubstr("1 reduction op(s) not destroyed"));
  EXPECT_EQ(nccl().ncclRedOpDestroy(op, comms[1]), ncclSuccess);
  const ncclComm_t destroyed = comms[0];
  Destroy(ranks, comms);
  EXPECT_EQ(fake().LiveObjects().Total(), 0);
  EXPECT_EQ(fake().LiveObjects().ToString(), "none");
  EXPECT_EQ(fake().LeakReport(), "");
  // Handles of destroyed communicators are detected, not dereferenced.
  int count = 0;
  EXPECT_EQ(nccl().ncclCommCount(destroyed, &count), ncclInvalidArgument);
  EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)), HasSubstr("corrupted comm"));
  check_leaks_ = true;
}

TEST_F(NcclModelTest, BadBufferFaultsItsOwnerAndFailsItsPeers) {
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf(2, 0);
  ranks.RunOn(0, [&] { ASSERT_EQ(cuda().cuMemAlloc(&buf[0], 64), CUDA_SUCCESS); });
  std::vector<CUresult> synced(2);
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    // Rank 1 passes host addresses that are no device memory of the fake driver.
    static float host_bytes[16];
    void* p = r == 0 ? reinterpret_cast<void*>(buf[0]) : static_cast<void*>(host_bytes);
    EXPECT_EQ(nccl().ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[rr], Cs(ranks.stream(r))),
              ncclSuccess);
    synced[rr] = cuda().cuStreamSynchronize(ranks.stream(r));
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[rr], &async), ncclSuccess);
    EXPECT_EQ(async, r == 0 ? ncclRemoteError : ncclUnhandledCudaError);
    EXPECT_THAT(std::string(nccl().ncclGetLastError(nullptr)), HasSubstr("rank 1's sendbuff"));
    EXPECT_EQ(nccl().ncclCommAbort(comms[rr]), ncclSuccess);
  });
  comms.assign(2, nullptr);
  EXPECT_EQ(synced[0], CUDA_SUCCESS);
  // Rank 1's "kernel" faulted: its context carries the sticky error, as on a GPU.
  EXPECT_EQ(synced[1], CUDA_ERROR_ILLEGAL_ADDRESS);
  ranks.RunOn(0, [&] { EXPECT_EQ(cuda().cuMemFree(buf[0]), CUDA_SUCCESS); });
}

TEST_F(NcclModelTest, StreamChecks) {
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.RunOn(0, [&] {
    CUdeviceptr p = 0;
    ASSERT_EQ(cuda().cuMemAlloc(&p, 16), CUDA_SUCCESS);
    void* v = reinterpret_cast<void*>(p);
    // Rank 1's stream belongs to device 1, rank 0's communicator to device 0. UNMEASURED.
    EXPECT_EQ(nccl().ncclAllReduce(v, v, 4, ncclFloat32, ncclSum, comms[0], Cs(ranks.stream(1))),
              ncclInvalidArgument);
    // A stream handle that is not one.
    EXPECT_EQ(nccl().ncclAllReduce(v, v, 4, ncclFloat32, ncclSum, comms[0],
                                   reinterpret_cast<cudaStream_t>(0x12340)),
              ncclUnhandledCudaError);
    EXPECT_EQ(cuda().cuMemFree(p), CUDA_SUCCESS);
  });
  // The NULL stream is the calling thread's current context's (legacy) default stream.
  std::vector<CUdeviceptr> buf = Floats(ranks, 2, [](int r, std::size_t) { return 1.0f + r; });
  ranks.Run([&](int r) {
    void* v = reinterpret_cast<void*>(buf[static_cast<size_t>(r)]);
    EXPECT_EQ(nccl().ncclAllReduce(v, v, 2, ncclFloat32, ncclSum, comms[static_cast<size_t>(r)],
                                   nullptr),
              ncclSuccess);
    EXPECT_EQ(cuda().cuCtxSynchronize(), CUDA_SUCCESS);
  });
  EXPECT_EQ(Read(ranks, 1, buf[1], 2), std::vector<float>(2, 3.0f));
  FreeAll(ranks);
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, AdversarialSchedulingStillMeetsAndComputes) {
  Make({}, fakecuda::SchedulePolicy::kAdversarial);
  RankThreads& ranks = Ranks(3);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> buf = Floats(ranks, 3, [](int r, std::size_t i) {
    return static_cast<float>(r + static_cast<int>(i));
  });
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    void* p = reinterpret_cast<void*>(buf[rr]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(
          nccl().ncclAllReduce(p, p, 3, ncclFloat32, ncclSum, comms[rr], Cs(ranks.stream(r))),
          ncclSuccess);
    }
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
  });
  // Inputs r + i: the first sum gives 3 + 3i on every rank, each later one multiplies by 3.
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(Read(ranks, r, buf[static_cast<size_t>(r)], 3), (std::vector<float>{27, 54, 81}));
  }
  FreeAll(ranks);
  Destroy(ranks, comms);
}

TEST_F(NcclModelTest, QueuedCollectivesRunInStreamOrderUnderBothPolicies) {
  // Each rank queues, without synchronizing: an upload, ten in-place AllReduces and a download,
  // all on its stream. Each AllReduce must see the previous one's result and the upload.
  for (fakecuda::SchedulePolicy policy :
       {fakecuda::SchedulePolicy::kEager, fakecuda::SchedulePolicy::kAdversarial}) {
    SCOPED_TRACE(policy == fakecuda::SchedulePolicy::kEager ? "eager" : "adversarial");
    Make({}, policy);
    RankThreads& ranks = Ranks(4);
    std::vector<ncclComm_t> comms = Init(ranks);
    std::vector<std::int64_t> result(4, 0);
    ranks.Run([&](int r) {
      auto rr = static_cast<size_t>(r);
      CUstream s = ranks.stream(r);
      CUdeviceptr buf = 0;
      ASSERT_EQ(cuda().cuMemAlloc(&buf, sizeof(std::int64_t)), CUDA_SUCCESS);
      std::int64_t in = r + 1;
      std::int64_t out = 0;
      EXPECT_EQ(cuda().cuMemcpyHtoDAsync(buf, &in, sizeof(in), s), CUDA_SUCCESS);
      void* p = reinterpret_cast<void*>(buf);
      for (int k = 0; k < 10; ++k) {
        EXPECT_EQ(nccl().ncclAllReduce(p, p, 1, ncclInt64, ncclSum, comms[rr], Cs(s)),
                  ncclSuccess);
      }
      EXPECT_EQ(cuda().cuMemcpyDtoHAsync(&out, buf, sizeof(out), s), CUDA_SUCCESS);
      EXPECT_EQ(cuda().cuStreamSynchronize(s), CUDA_SUCCESS);
      result[rr] = out;
      EXPECT_EQ(cuda().cuMemFree(buf), CUDA_SUCCESS);
    });
    // 1+2+3+4 = 10, then each later sum over 4 equal values multiplies by 4.
    for (std::int64_t v : result) EXPECT_EQ(v, 10 * (std::int64_t{1} << 18));
    Destroy(ranks, comms);
  }
}

// ---- Arithmetic ------------------------------------------------------------------------------

TEST(NcclDatatypesTest, KnownBitPatterns) {
  using namespace fakenccl;
  EXPECT_EQ(DoubleToHalfBits(1.0), 0x3C00);
  EXPECT_EQ(DoubleToHalfBits(-2.0), 0xC000);
  EXPECT_EQ(DoubleToHalfBits(65504.0), 0x7BFF);
  EXPECT_EQ(DoubleToHalfBits(1e6), 0x7C00);                  // overflow: infinity
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(DoubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3C00);      // tie to even (down)
  EXPECT_EQ(DoubleToHalfBits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // tie to even (up)
  EXPECT_EQ(DoubleToHalfBits(NAN), 0x7E00);
  EXPECT_EQ(HalfBitsToDouble(0x3555), 0.333251953125);
  EXPECT_TRUE(std::isinf(HalfBitsToDouble(0xFC00)));
  EXPECT_EQ(DoubleToBfloat16Bits(1.0), 0x3F80);
  EXPECT_EQ(DoubleToBfloat16Bits(3.0), 0x4040);
  EXPECT_EQ(DoubleToBfloat16Bits(1.0 + std::ldexp(1.0, -8)), 0x3F80);  // tie to even
  EXPECT_EQ(Bfloat16BitsToDouble(0xC2F7), -123.5);
  EXPECT_EQ(DoubleToE4m3Bits(1.0), 0x38);
  EXPECT_EQ(DoubleToE4m3Bits(448.0), 0x7E);
  EXPECT_EQ(DoubleToE4m3Bits(1000.0), 0x7E);  // saturates (no infinity in E4M3)
  EXPECT_EQ(DoubleToE4m3Bits(-1000.0), 0xFE);
  EXPECT_EQ(DoubleToE4m3Bits(NAN), 0x7F);
  EXPECT_EQ(DoubleToE4m3Bits(std::ldexp(1.0, -9)), 0x01);
  EXPECT_EQ(DoubleToE4m3Bits(17.0), 0x58);  // 17 is a tie between 16 and 18: even is 16 (0x58)
  EXPECT_EQ(E4m3BitsToDouble(0x7E), 448.0);
  EXPECT_TRUE(std::isnan(E4m3BitsToDouble(0xFF)));
  EXPECT_EQ(DoubleToE5m2Bits(1.0), 0x3C);
  EXPECT_EQ(DoubleToE5m2Bits(57344.0), 0x7B);
  EXPECT_EQ(DoubleToE5m2Bits(1e6), 0x7B);  // saturates
  EXPECT_EQ(DoubleToE5m2Bits(std::ldexp(1.0, -16)), 0x01);
  EXPECT_TRUE(std::isinf(E5m2BitsToDouble(0x7C)));
  EXPECT_EQ(E5m2BitsToDouble(0x3E), 1.5);
}

template <typename T>
std::vector<T> ReduceOf(ncclDataType_t type, fakenccl::ReduceKind kind,
                        const std::vector<std::vector<T>>& in,
                        std::vector<fakenccl::ScalarBytes> scalars = {}) {
  std::vector<const std::byte*> ptrs;
  for (const auto& v : in) ptrs.push_back(reinterpret_cast<const std::byte*>(v.data()));
  if (scalars.empty()) scalars.resize(in.size());
  std::vector<T> out(in[0].size());
  fakenccl::Reduce(type, kind, ptrs, scalars, out.size(), reinterpret_cast<std::byte*>(out.data()));
  return out;
}

TEST(NcclDatatypesTest, ReductionSemantics) {
  using fakenccl::ReduceKind;
  // Integers wrap.
  EXPECT_EQ(ReduceOf<std::int8_t>(ncclInt8, ReduceKind::kSum, {{100}, {100}}),
            std::vector<std::int8_t>{-56});
  EXPECT_EQ(ReduceOf<std::uint8_t>(ncclUint8, ReduceKind::kProd, {{16}, {32}}),
            std::vector<std::uint8_t>{0});
  // Integer average: the sum divided, toward zero.
  EXPECT_EQ(ReduceOf<std::int32_t>(ncclInt32, ReduceKind::kAvg, {{-3}, {-4}}),
            std::vector<std::int32_t>{-3});
  EXPECT_EQ(ReduceOf<std::uint32_t>(ncclUint32, ReduceKind::kAvg, {{3}, {4}, {1}}),
            std::vector<std::uint32_t>{2});
  EXPECT_EQ(ReduceOf<std::int64_t>(ncclInt64, ReduceKind::kMin, {{5}, {-9}, {2}}),
            std::vector<std::int64_t>{-9});
  // fp8 sums saturate.
  std::uint8_t e4 = fakenccl::DoubleToE4m3Bits(300.0);
  EXPECT_EQ(ReduceOf<std::uint8_t>(ncclFloat8e4m3, ReduceKind::kSum, {{e4}, {e4}}),
            std::vector<std::uint8_t>{0x7E});
  // half sums overflow to infinity.
  std::uint16_t h = fakenccl::DoubleToHalfBits(60000.0);
  EXPECT_EQ(ReduceOf<std::uint16_t>(ncclFloat16, ReduceKind::kSum, {{h}, {h}}),
            std::vector<std::uint16_t>{0x7C00});
  // PreMulSum: each rank's own scalar.
  fakenccl::ScalarBytes two{};
  fakenccl::ScalarBytes minus_one{};
  double d2 = 2.0;
  double dm1 = -1.0;
  std::memcpy(two.data(), &d2, 8);
  std::memcpy(minus_one.data(), &dm1, 8);
  EXPECT_EQ(ReduceOf<double>(ncclFloat64, ReduceKind::kPreMulSum, {{3.0}, {5.0}}, {two, minus_one}),
            std::vector<double>{1.0});
  // float average over 4 ranks.
  EXPECT_EQ(ReduceOf<float>(ncclFloat32, ReduceKind::kAvg, {{1.f}, {2.f}, {3.f}, {6.f}}),
            std::vector<float>{3.0f});
}

// The text form of an id that programs hand to their rank processes: every byte survives the
// round trip, and anything but 256 hex digits is refused without touching the id.
TEST(NcclUniqueIdHexTest, RoundTripsEveryByteAndRefusesBadText) {
  ncclUniqueId id{};
  for (std::size_t i = 0; i < sizeof(id.internal); ++i) id.internal[i] = static_cast<char>(i * 7);
  const std::string hex = fakenccl::UniqueIdToHex(id);
  ASSERT_EQ(hex.size(), 256u);
  EXPECT_EQ(hex.substr(0, 6), "00070e");
  ncclUniqueId back{};
  ASSERT_TRUE(fakenccl::UniqueIdFromHex(hex, &back));
  EXPECT_EQ(std::memcmp(back.internal, id.internal, sizeof(id.internal)), 0);
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_TRUE(fakenccl::UniqueIdFromHex(upper, &back));
  EXPECT_EQ(std::memcmp(back.internal, id.internal, sizeof(id.internal)), 0);

  ncclUniqueId untouched{};
  untouched.internal[0] = 42;
  for (const std::string& bad : {std::string(), hex.substr(0, 254), hex + "00",
                                 hex.substr(0, 10) + "zz" + hex.substr(12)}) {
    EXPECT_FALSE(fakenccl::UniqueIdFromHex(bad, &untouched)) << bad;
    EXPECT_EQ(untouched.internal[0], 42);
  }
}

// Found by fuzz/libfuzzer (nccl_faults_fuzzer): the digit loop wrapped past 64 bits, a RANK past
// int was cast into another rank, and strtod read "0.5abc" as 0.5. The numbers are strict now.
TEST(NcclFaultSpecTest, NumbersAreStrict) {
  fakenccl::NcclFaultInjector faults;
  std::string error;
  for (const char* spec : {"ncclSend:nth:18446744073709551617:ncclRemoteError",
                           "ncclSend:fraction:0\3155:ncclRemoteError",
                           "ncclSend:fraction:0.5abc:ncclRemoteError",
                           "ncclSend:fraction::ncclRemoteError",
                           "ncclSend:fraction:0.5:ncclRemoteError@18446744073709551616",
                           "die:4294967296:1", "die:2147483648:1", "die:0:1:4294967297",
                           "die:0:18446744073709551617"}) {
    EXPECT_FALSE(faults.AddRulesFromSpec(spec, &error)) << spec;
    EXPECT_THAT(error, HasSubstr("FAKENCCL_FAULTS item")) << spec;
  }
  EXPECT_FALSE(faults.ShouldDie(0, 4, 1)) << "die:4294967296:1 killed rank 0";
  EXPECT_EQ(faults.OnCall("ncclSend"), ncclSuccess) << "a rejected spec adds no rule";
  EXPECT_TRUE(faults.AddRulesFromSpec("die:2147483647:18446744073709551615:2147483647;"
                                      "ncclSend:fraction:1e-3:ncclRemoteError@7",
                                      &error))
      << error;
  EXPECT_TRUE(faults.ShouldDie(2147483647, 2147483647, 18446744073709551615u));
}

}  // namespace
}  // namespace cuhal::testing
