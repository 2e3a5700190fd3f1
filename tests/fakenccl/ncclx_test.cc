// Copyright 2026 The cuhal Authors.
// fakenccl's entry points from after cuhal's NcclApi table (nccl.h 2.19-2.28: ncclMemAlloc and
// ncclMemFree, ncclCommShrink, ncclCommRevoke, ncclCommWindowRegister/Deregister,
// ncclCommInitRankScalable, ncclGroupSimulateEnd, ncclResetDebugInit, ncclBcast,
// ncclCommRegister/Deregister) and the single-rank collectives (NCCL's ncclLaunchOneRank: a copy
// at the call when the buffers differ, else nothing). The table does not list these functions,
// so the tests call fakenccl's C functions directly, on the fake only; ci/gpu-probes/
// ncclx_probe.cc measures the same behaviour on the GPU machine. Each test's name says the
// behaviour. UNMEASURED, every expectation here but the one-rank in-place no-op (measured on NCCL
// 2.28.3, docs/driver_facts.md): they come from NCCL 2.28.9's source; the probe has not run on a
// GPU yet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/fakenccl/nccl_support.h"

namespace cuhal::testing {
namespace {

using ::testing::HasSubstr;

void* Garbage() { return reinterpret_cast<void*>(std::uintptr_t{0x5a5a5a5a5a5a0000}); }
std::string LastError() { return ncclGetLastError(nullptr); }

class NcclExtensionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NcclBackendOptions options;
    options.device_count = 4;
    std::string unavailable;
    std::string error;
    backend_ = NcclBackend::Create("fake", options, &unavailable, &error);
    ASSERT_NE(backend_, nullptr) << error << unavailable;
  }

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

  const CudaApi& cuda() const { return backend_->cuda(); }

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
    EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    ranks.Run([&](int r) {
      EXPECT_EQ(ncclCommInitRank(&comms[static_cast<size_t>(r)], ranks.size(), id, r),
                ncclSuccess)
          << LastError();
    });
    return comms;
  }

  void Destroy(RankThreads& ranks, std::vector<ncclComm_t>& comms) {
    ranks.Run([&](int r) {
      ncclComm_t& c = comms[static_cast<size_t>(r)];
      if (c != nullptr) {
        EXPECT_EQ(ncclCommDestroy(c), ncclSuccess) << LastError();
      }
      c = nullptr;
    });
  }

  // Writes floats seed + i; reads them back and says whether they are seed + i.
  void Fill(CUdeviceptr p, std::size_t n, float seed) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = seed + static_cast<float>(i);
    ASSERT_EQ(cuda().cuMemcpyHtoD(p, v.data(), n * sizeof(float)), CUDA_SUCCESS);
  }
  bool Holds(CUdeviceptr p, std::size_t n, float seed) {
    std::vector<float> v(n, -1.0f);
    EXPECT_EQ(cuda().cuMemcpyDtoH(v.data(), p, n * sizeof(float)), CUDA_SUCCESS);
    for (std::size_t i = 0; i < n; ++i) {
      if (v[i] != seed + static_cast<float>(i)) return false;
    }
    return true;
  }

  std::unique_ptr<NcclBackend> backend_;
  std::unique_ptr<RankThreads> ranks_;
};

// ---- ncclMemAlloc / ncclMemFree ----------------------------------------------------------------

TEST_F(NcclExtensionsTest, MemAllocIsOneVmmMappingRoundedToTwoMiBThatMemFreeUnmaps) {
  RankThreads& ranks = Ranks(1);
  ranks.RunOn(0, [&] {
    void* p = nullptr;
    ASSERT_EQ(ncclMemAlloc(&p, 3 << 20), ncclSuccess) << LastError();
    ASSERT_NE(p, nullptr);
    const auto va = reinterpret_cast<CUdeviceptr>(p);
    CUdeviceptr base = 0;
    std::size_t size = 0;
    ASSERT_EQ(cuda().cuMemGetAddressRange(&base, &size, va), CUDA_SUCCESS);
    EXPECT_EQ(base, va);
    EXPECT_EQ(size, std::size_t{4} << 20);
    CUmemGenericAllocationHandle h = 0;
    ASSERT_EQ(cuda().cuMemRetainAllocationHandle(&h, p), CUDA_SUCCESS);  // VMM memory
    EXPECT_EQ(cuda().cuMemRelease(h), CUDA_SUCCESS);
    Fill(va, 16, 2.0f);
    EXPECT_TRUE(Holds(va, 16, 2.0f));
    EXPECT_EQ(cuda().cuMemFree(va), CUDA_ERROR_INVALID_VALUE);  // not cuMemAlloc memory
    EXPECT_EQ(ncclMemFree(p), ncclSuccess) << LastError();
    unsigned int type = 0;
    EXPECT_EQ(cuda().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va),
              CUDA_ERROR_INVALID_VALUE);
  });
}

TEST_F(NcclExtensionsTest, MemAllocOfNullOrHugeIsUnhandledCudaErrorAndZeroBytesIsNull) {
  RankThreads& ranks = Ranks(1);
  ranks.RunOn(0, [&] {
    EXPECT_EQ(ncclMemAlloc(nullptr, 1 << 20), ncclUnhandledCudaError);
    EXPECT_EQ(LastError(), "Cuda failure 'invalid argument'");  // cudaMalloc(NULL, n)
    void* p = Garbage();
    EXPECT_EQ(ncclMemAlloc(&p, 0), ncclSuccess);  // UNMEASURED: cudaMalloc of 0 bytes
    EXPECT_EQ(p, nullptr);
    p = Garbage();
    EXPECT_EQ(ncclMemAlloc(&p, std::size_t{1} << 50), ncclUnhandledCudaError);
    EXPECT_EQ(LastError(), "Cuda failure 2 'out of memory'");
    EXPECT_EQ(p, Garbage());
    // NCCL's size rounding wraps SIZE_MAX to 0, which cuMemCreate refuses.
    EXPECT_EQ(ncclMemAlloc(&p, ~std::size_t{0}), ncclUnhandledCudaError);
    EXPECT_EQ(LastError(), "Cuda failure 1 'invalid argument'");
    EXPECT_EQ(p, Garbage());
  });
}

TEST_F(NcclExtensionsTest, MemFreeOfNullSucceedsAndOfAnyOtherPointerIsUnhandledCudaError) {
  RankThreads& ranks = Ranks(1);
  ranks.RunOn(0, [&] {
    EXPECT_EQ(ncclMemFree(nullptr), ncclSuccess);
    EXPECT_EQ(ncclMemFree(Garbage()), ncclUnhandledCudaError);
    CUdeviceptr legacy = 0;
    ASSERT_EQ(cuda().cuMemAlloc(&legacy, 1 << 20), CUDA_SUCCESS);
    EXPECT_EQ(ncclMemFree(reinterpret_cast<void*>(legacy)), ncclUnhandledCudaError);
    EXPECT_THAT(LastError(), HasSubstr("Cuda failure "));
    EXPECT_EQ(cuda().cuMemFree(legacy), CUDA_SUCCESS);
    void* p = nullptr;
    ASSERT_EQ(ncclMemAlloc(&p, 1 << 20), ncclSuccess);
    EXPECT_EQ(ncclMemFree(static_cast<char*>(p) + 256), ncclUnhandledCudaError);  // interior
    EXPECT_EQ(ncclMemFree(p), ncclSuccess);
    EXPECT_EQ(ncclMemFree(p), ncclUnhandledCudaError);  // twice
  });
}

// ---- Single-rank collectives -------------------------------------------------------------------

TEST_F(NcclExtensionsTest, OneRankInPlaceCollectivesTouchNothingNotEvenBogusPointers) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.RunOn(0, [&] {
    cudaStream_t s = reinterpret_cast<cudaStream_t>(ranks.stream(0));
    void* g = Garbage();
    EXPECT_EQ(ncclAllReduce(g, g, 1024, ncclFloat, ncclSum, comms[0], s), ncclSuccess);
    EXPECT_EQ(ncclBroadcast(g, g, 1024, ncclFloat, 0, comms[0], s), ncclSuccess);
    EXPECT_EQ(ncclReduce(g, g, 1024, ncclFloat, ncclSum, 0, comms[0], s), ncclSuccess);
    EXPECT_EQ(ncclAllGather(g, g, 1024, ncclFloat, comms[0], s), ncclSuccess);
    EXPECT_EQ(ncclReduceScatter(g, g, 1024, ncclFloat, ncclSum, comms[0], s), ncclSuccess);
    EXPECT_EQ(ncclBcast(g, 1024, ncclFloat, 0, comms[0], s), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(nullptr, nullptr, 1024, ncclFloat, ncclSum, comms[0], s),
              ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(0)), CUDA_SUCCESS);
    ncclResult_t async = ncclInternalError;
    EXPECT_EQ(ncclCommGetAsyncError(comms[0], &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess);
  });
  Destroy(ranks, comms);
}

TEST_F(NcclExtensionsTest, OneRankOutOfPlaceCopiesAtTheCallAndABogusPointerFailsAtOnce) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.RunOn(0, [&] {
    CUstream st = ranks.stream(0);
    cudaStream_t s = reinterpret_cast<cudaStream_t>(st);
    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    ASSERT_EQ(cuda().cuMemAlloc(&a, 1024 * sizeof(float)), CUDA_SUCCESS);
    ASSERT_EQ(cuda().cuMemAlloc(&b, 1024 * sizeof(float)), CUDA_SUCCESS);
    void* va = reinterpret_cast<void*>(a);
    void* vb = reinterpret_cast<void*>(b);
    Fill(a, 1024, 1.0f);
    // Inside a group too: the copy is enqueued by the call, not by ncclGroupEnd.
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllGather(va, vb, 1024, ncclFloat, comms[0], s), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(st), CUDA_SUCCESS);
    EXPECT_TRUE(Holds(b, 1024, 1.0f));
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(Garbage(), vb, 1024, ncclFloat, ncclSum, comms[0], s),
              ncclUnhandledCudaError);
    EXPECT_EQ(LastError(), "Cuda failure 'invalid argument'");  // UNMEASURED on the GPU
    EXPECT_EQ(ncclReduce(va, nullptr, 1024, ncclFloat, ncclSum, 0, comms[0], s),
              ncclUnhandledCudaError);
    ncclResult_t async = ncclInternalError;
    EXPECT_EQ(ncclCommGetAsyncError(comms[0], &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess);  // nothing reached the stream: the communicator is fine
    Fill(a, 1024, 3.0f);
    EXPECT_EQ(ncclBroadcast(va, vb, 1024, ncclFloat, 0, comms[0], s), ncclSuccess);
    EXPECT_EQ(cuda().cuStreamSynchronize(st), CUDA_SUCCESS);
    EXPECT_TRUE(Holds(b, 1024, 3.0f));
    EXPECT_EQ(cuda().cuMemFree(a), CUDA_SUCCESS);
    EXPECT_EQ(cuda().cuMemFree(b), CUDA_SUCCESS);
  });
  Destroy(ranks, comms);
}

// ---- ncclCommShrink / ncclCommRevoke -----------------------------------------------------------

TEST_F(NcclExtensionsTest, ShrinkWithoutAnExcludedRankFormsTheRestInRankOrder) {
  RankThreads& ranks = Ranks(3);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<ncclComm_t> sub(3, nullptr);
  ranks.Run([&](int r) {
    if (r == 1) return;  // excluded: it does not call
    int exclude[1] = {1};
    ASSERT_EQ(ncclCommShrink(comms[static_cast<size_t>(r)], exclude, 1,
                             &sub[static_cast<size_t>(r)], nullptr, NCCL_SHRINK_DEFAULT),
              ncclSuccess)
        << LastError();
  });
  for (int r : {0, 2}) {
    int count = 0;
    int rank = -1;
    ASSERT_NE(sub[static_cast<size_t>(r)], nullptr);
    EXPECT_EQ(ncclCommCount(sub[static_cast<size_t>(r)], &count), ncclSuccess);
    EXPECT_EQ(ncclCommUserRank(sub[static_cast<size_t>(r)], &rank), ncclSuccess);
    EXPECT_EQ(count, 2);
    EXPECT_EQ(rank, r / 2);
  }
  Destroy(ranks, sub);
  Destroy(ranks, comms);
}

TEST_F(NcclExtensionsTest, ShrinkRefusesANullOrEmptyListAndTheCallerInIt) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.RunOn(0, [&] {
    ncclComm_t sub = reinterpret_cast<ncclComm_t>(Garbage());
    int self[1] = {0};
    EXPECT_EQ(ncclCommShrink(comms[0], nullptr, 0, &sub, nullptr, 0), ncclInvalidArgument);
    EXPECT_EQ(LastError(), "ncclCommShrink : excludeRanksList argument is NULL");
    EXPECT_EQ(ncclCommShrink(comms[0], self, 0, &sub, nullptr, 0), ncclInvalidArgument);
    EXPECT_EQ(ncclCommShrink(comms[0], self, 1, &sub, nullptr, 0), ncclInvalidArgument);
    EXPECT_EQ(ncclCommShrink(nullptr, self, 1, &sub, nullptr, 0), ncclInvalidArgument);
    EXPECT_EQ(LastError(), "ncclCommShrink : comm argument is NULL");
    EXPECT_EQ(sub, reinterpret_cast<ncclComm_t>(Garbage()));  // untouched by every refusal
    int other[1] = {5};  // not a rank: ignored, the caller alone forms the new communicator
    EXPECT_EQ(ncclCommShrink(comms[0], other, 1, &sub, nullptr, NCCL_SHRINK_ABORT), ncclSuccess);
    int count = 0;
    EXPECT_EQ(ncclCommCount(sub, &count), ncclSuccess);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(ncclCommDestroy(sub), ncclSuccess);
  });
  Destroy(ranks, comms);
}

TEST_F(NcclExtensionsTest, RevokedCommunicatorRefusesCollectivesFinalizeAndASecondRevoke) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.RunOn(0, [&] {
    cudaStream_t s = reinterpret_cast<cudaStream_t>(ranks.stream(0));
    EXPECT_EQ(ncclCommRevoke(nullptr, 0), ncclSuccess);
    EXPECT_EQ(ncclCommRevoke(comms[0], 1), ncclInvalidArgument);
    EXPECT_EQ(ncclCommRevoke(comms[0], NCCL_REVOKE_DEFAULT), ncclSuccess);
    EXPECT_EQ(ncclCommRevoke(comms[0], NCCL_REVOKE_DEFAULT), ncclInvalidArgument);
    EXPECT_EQ(ncclAllReduce(nullptr, nullptr, 4, ncclFloat, ncclSum, comms[0], s),
              ncclInvalidUsage);
    EXPECT_EQ(LastError(), "AllReduce: communicator was revoked");
    EXPECT_EQ(ncclCommFinalize(comms[0]), ncclInvalidArgument);
    int count = 0;
    EXPECT_EQ(ncclCommCount(comms[0], &count), ncclSuccess);  // queries still answer
    int other[1] = {3};
    ncclComm_t sub = nullptr;
    EXPECT_EQ(ncclCommShrink(comms[0], other, 1, &sub, nullptr, 0), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(sub), ncclSuccess);
  });
  Destroy(ranks, comms);
}

// ---- Registration and windows ------------------------------------------------------------------

TEST_F(NcclExtensionsTest, RegisterCountsRangesAndDeregisterOfAnUnknownHandleIsInvalidUsage) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.RunOn(0, [&] {
    CUdeviceptr a = 0;
    ASSERT_EQ(cuda().cuMemAlloc(&a, 1 << 20), CUDA_SUCCESS);
    void* va = reinterpret_cast<void*>(a);
    void* h1 = nullptr;
    void* h2 = nullptr;
    EXPECT_EQ(ncclCommRegister(comms[0], va, 1 << 20, &h1), ncclSuccess);
    EXPECT_EQ(ncclCommRegister(comms[0], va, 4096, &h2), ncclSuccess);
    EXPECT_NE(h1, nullptr);
    EXPECT_EQ(h1, h2);  // inside a registered range: the same registration, counted
    void* h3 = nullptr;
    EXPECT_EQ(ncclCommRegister(nullptr, va, 1 << 20, &h3), ncclInvalidArgument);
    EXPECT_EQ(LastError(), "ncclCommRegister : comm argument is NULL");
    EXPECT_EQ(ncclCommDeregister(comms[0], h1), ncclSuccess);
    EXPECT_EQ(ncclCommDeregister(comms[0], h2), ncclSuccess);
    EXPECT_EQ(ncclCommDeregister(comms[0], h2), ncclInvalidUsage);
    EXPECT_EQ(LastError(), "Deregister: Could not find handle");
    EXPECT_EQ(ncclCommDeregister(comms[0], nullptr), ncclSuccess);
    EXPECT_EQ(ncclCommDeregister(comms[0], Garbage()), ncclInvalidUsage);
    EXPECT_EQ(cuda().cuMemFree(a), CUDA_SUCCESS);
  });
  Destroy(ranks, comms);
}

TEST_F(NcclExtensionsTest, WindowOfNullOrEmptyBufferIsSuccessWithNoWindow) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.RunOn(0, [&] {
    void* p = nullptr;
    ASSERT_EQ(ncclMemAlloc(&p, 1 << 21), ncclSuccess);
    auto untouched = reinterpret_cast<ncclWindow_t>(Garbage());
    ncclWindow_t w = untouched;
    EXPECT_EQ(ncclCommWindowRegister(comms[0], nullptr, 1 << 21, &w, 0), ncclSuccess);
    EXPECT_EQ(ncclCommWindowRegister(comms[0], p, 0, &w, 0), ncclSuccess);
    EXPECT_EQ(w, untouched);
    EXPECT_EQ(ncclCommWindowRegister(comms[0], p, 1 << 21, &w, NCCL_WIN_COLL_SYMMETRIC),
              ncclSuccess);
    EXPECT_NE(w, untouched);
    EXPECT_NE(w, nullptr);
    EXPECT_EQ(ncclCommWindowDeregister(comms[0], nullptr), ncclSuccess);
    EXPECT_EQ(ncclCommWindowDeregister(comms[0], w), ncclSuccess);
    EXPECT_EQ(ncclCommWindowDeregister(comms[0], w), ncclInvalidArgument);  // UNMEASURED
    EXPECT_EQ(ncclMemFree(p), ncclSuccess);
  });
  Destroy(ranks, comms);
}

// ---- ncclCommInitRankScalable, ncclGroupSimulateEnd, ncclResetDebugInit ------------------------

TEST_F(NcclExtensionsTest, InitRankScalableChecksItsIdCountFirstAndJoinsOnTheFirstId) {
  RankThreads& ranks = Ranks(2);
  ncclUniqueId ids[2];
  ASSERT_EQ(ncclGetUniqueId(&ids[0]), ncclSuccess);
  ASSERT_EQ(ncclGetUniqueId(&ids[1]), ncclSuccess);
  std::vector<ncclComm_t> comms(2, nullptr);
  ranks.RunOn(0, [&] {
    ncclComm_t c = reinterpret_cast<ncclComm_t>(Garbage());
    EXPECT_EQ(ncclCommInitRankScalable(&c, 2, 0, 0, ids, nullptr), ncclInvalidArgument);
    EXPECT_EQ(LastError(), "improper usage of ncclCommInitRank: nId = 0, nranks=2");
    EXPECT_EQ(ncclCommInitRankScalable(&c, 2, 0, 3, ids, nullptr), ncclInvalidArgument);
    EXPECT_EQ(c, reinterpret_cast<ncclComm_t>(Garbage()));
    EXPECT_EQ(ncclCommInitRankScalable(&c, 2, 2, 2, ids, nullptr), ncclInvalidArgument);
    EXPECT_EQ(LastError(), "Invalid rank requested : 2/2");
  });
  ranks.Run([&](int r) {
    EXPECT_EQ(ncclCommInitRankScalable(&comms[static_cast<size_t>(r)], 2, r, 2, ids, nullptr),
              ncclSuccess)
        << LastError();
  });
  int count = 0;
  EXPECT_EQ(ncclCommCount(comms[1], &count), ncclSuccess);
  EXPECT_EQ(count, 2);
  Destroy(ranks, comms);
}

TEST_F(NcclExtensionsTest, GroupSimulateEndEstimatesAndLaunchesNothing) {
  RankThreads& ranks = Ranks(2);
  std::vector<ncclComm_t> comms = Init(ranks);
  std::vector<CUdeviceptr> bufs(2, 0);
  ranks.Run([&](int r) {
    auto rr = static_cast<size_t>(r);
    ASSERT_EQ(cuda().cuMemAlloc(&bufs[rr], 64 * sizeof(float)), CUDA_SUCCESS);
    Fill(bufs[rr], 64, 1.0f);
    cudaStream_t s = reinterpret_cast<cudaStream_t>(ranks.stream(r));
    void* p = reinterpret_cast<void*>(bufs[rr]);
    ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(p, p, 64, ncclFloat, ncclSum, comms[rr], s), ncclSuccess);
    EXPECT_EQ(ncclGroupSimulateEnd(&info), ncclSuccess);
    EXPECT_GT(info.estimatedTime, 0.0f);
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(r)), CUDA_SUCCESS);
    EXPECT_TRUE(Holds(bufs[rr], 64, 1.0f));  // not reduced: nothing ran
    EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);  // the group is over
    ncclSimInfo_t bad = NCCL_SIM_INFO_INITIALIZER;
    bad.magic = 0;
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclGroupSimulateEnd(&bad), ncclInvalidArgument);
    EXPECT_EQ(LastError(), "ncclSimInfo_t argument not initialized via NCCL_SIM_INFO_INITIALIZER");
    EXPECT_EQ(ncclGroupSimulateEnd(&info), ncclInvalidUsage);  // no group
    EXPECT_EQ(cuda().cuMemFree(bufs[rr]), CUDA_SUCCESS);
  });
  Destroy(ranks, comms);
}

TEST_F(NcclExtensionsTest, GroupSimulateEndOfOneRankCollectivesLeavesTheInfoTheCopyDone) {
  RankThreads& ranks = Ranks(1);
  std::vector<ncclComm_t> comms = Init(ranks);
  ranks.RunOn(0, [&] {
    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    ASSERT_EQ(cuda().cuMemAlloc(&a, 64 * sizeof(float)), CUDA_SUCCESS);
    ASSERT_EQ(cuda().cuMemAlloc(&b, 64 * sizeof(float)), CUDA_SUCCESS);
    Fill(a, 64, 5.0f);
    cudaStream_t s = reinterpret_cast<cudaStream_t>(ranks.stream(0));
    ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
    const float undefined = info.estimatedTime;
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(reinterpret_cast<void*>(a), reinterpret_cast<void*>(b), 64, ncclFloat,
                            ncclSum, comms[0], s),
              ncclSuccess);
    EXPECT_EQ(ncclAllReduce(reinterpret_cast<void*>(a), reinterpret_cast<void*>(a), 64, ncclFloat,
                            ncclSum, comms[0], s),
              ncclSuccess);
    EXPECT_EQ(ncclGroupSimulateEnd(&info), ncclSuccess);
    EXPECT_EQ(info.estimatedTime, undefined);  // no NCCL task: the info is not written
    EXPECT_EQ(cuda().cuStreamSynchronize(ranks.stream(0)), CUDA_SUCCESS);
    EXPECT_TRUE(Holds(b, 64, 5.0f));  // the copy was made at the call
    EXPECT_EQ(cuda().cuMemFree(a), CUDA_SUCCESS);
    EXPECT_EQ(cuda().cuMemFree(b), CUDA_SUCCESS);
  });
  Destroy(ranks, comms);
}

TEST_F(NcclExtensionsTest, ResetDebugInitChangesNothingVisible) {
  ASSERT_EQ(ncclGroupEnd(), ncclInvalidUsage);  // sets a last-error text
  const std::string before = LastError();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  ncclResetDebugInit();
#pragma GCC diagnostic pop
  EXPECT_EQ(LastError(), before);
  int version = 0;
  EXPECT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_GT(version, 0);
}

}  // namespace
}  // namespace cuhal::testing
