// Copyright 2026 The cuhal Authors.
// fakecuda's callback thread and its boundaries (issue 19, "never hang, never escape"): user work
// (host functions, callbacks, kernel implementations) runs on a driver-owned thread; CUDA calls
// made from inside it answer instead of waiting for themselves; whatever it throws is caught;
// and a stream destroyed by one thread while another uses it is never read after it is gone.
// Fake only: the properties of the fake's scheduler. What the real driver answers to CUDA calls
// made inside host functions is measured in docs/driver_facts.md.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fakecuda/kernel_registry.h"
#include "fakecuda/sample_kernels.h"
#include "tests/fakecuda/fake_fixture.h"

namespace cuhal::testing {
namespace {

using fakecuda::SchedulePolicy;

class CallbackThreadTest : public FakeDriverTest,
                           public ::testing::WithParamInterface<SchedulePolicy> {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Remake(GetParam(), /*seed=*/7)); }
  void TearDown() override {
    if (backend_ != nullptr) {
      EXPECT_EQ(fake().LiveObjects().Total(), 0) << fake().LeakReport();
    }
    FakeDriverTest::TearDown();
  }
};

TEST_P(CallbackThreadTest, HostFunctionsRunOnADriverThreadNotTheCallers) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  struct Seen {
    std::thread::id id;
  };
  Seen a, b;
  auto record = [](void* p) { static_cast<Seen*>(p)->id = std::this_thread::get_id(); };
  ASSERT_EQ(api().cuLaunchHostFunc(stream, record, &a), CUDA_SUCCESS);
  ASSERT_EQ(api().cuLaunchHostFunc(nullptr, record, &b), CUDA_SUCCESS);  // legacy stream
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_NE(a.id, std::thread::id{});
  EXPECT_NE(a.id, std::this_thread::get_id());
  EXPECT_EQ(a.id, b.id) << "one callback thread serves every stream";
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

// The enqueuer holds a lock the host function takes: on the real driver the callback thread
// simply waits for it. (Run on the caller's thread, the old fake deadlocked here.)
TEST_P(CallbackThreadTest, HostFunctionMayTakeALockItsEnqueuerHolds) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  struct Shared {
    std::mutex mu;
    int runs = 0;
  } shared;
  {
    std::lock_guard<std::mutex> held(shared.mu);
    ASSERT_EQ(api().cuLaunchHostFunc(
                  stream,
                  [](void* p) {
                    auto* s = static_cast<Shared*>(p);
                    std::lock_guard<std::mutex> lock(s->mu);
                    ++s->runs;
                  },
                  &shared),
              CUDA_SUCCESS);
    // Still holding the lock: more work on the stream is accepted, nothing blocks.
    EXPECT_EQ(api().cuStreamQuery(stream), CUDA_ERROR_NOT_READY);
  }
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  std::lock_guard<std::mutex> lock(shared.mu);
  EXPECT_EQ(shared.runs, 1);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

// A program that waits for a host function outside the driver (a promise, a condition variable:
// what a timeline semaphore does) is not left waiting: the driver runs host functions without
// being asked, under both policies.
TEST_P(CallbackThreadTest, HostFunctionRunsWithoutASynchronization) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr dev = 0;
  ASSERT_EQ(api().cuMemAlloc(&dev, 4096), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(dev, 0x5A, 4096, stream), CUDA_SUCCESS);
  std::promise<void> done;
  ASSERT_EQ(api().cuLaunchHostFunc(
                stream, [](void* p) { static_cast<std::promise<void>*>(p)->set_value(); }, &done),
            CUDA_SUCCESS);
  // Bounded only so that a broken fake fails instead of hanging the suite.
  EXPECT_EQ(done.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  unsigned char byte = 0;
  EXPECT_EQ(api().cuMemcpyDtoH(&byte, dev, 1), CUDA_SUCCESS);
  EXPECT_EQ(byte, 0x5A) << "the memset ordered before the host function ran first";
  EXPECT_EQ(api().cuMemFree(dev), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

// Waits that could only end when the host function itself returns are refused, not hung; calls
// that need no waiting work. (The old fake looped forever in the first cuStreamSynchronize.)
TEST_P(CallbackThreadTest, CudaCallsFromInsideAHostFunctionAnswer) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  struct Probe {
    const CudaApi* api;
    CUstream stream;
    CUcontext ctx;
    CUresult own_sync = CUDA_SUCCESS;
    CUresult ctx_sync = CUDA_SUCCESS;
    CUresult query_own = CUDA_SUCCESS;
    CUresult ctx_destroy = CUDA_SUCCESS;
    CUresult record = CUDA_ERROR_UNKNOWN;
    CUresult enqueue = CUDA_ERROR_UNKNOWN;
    CUevent event = nullptr;
    int nested_runs = 0;
  };
  Probe probe;
  probe.api = &api();
  probe.ctx = ctx.get();
  ASSERT_EQ(api().cuStreamCreate(&probe.stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventCreate(&probe.event, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuLaunchHostFunc(
                probe.stream,
                [](void* p) {
                  auto* pr = static_cast<Probe*>(p);
                  pr->own_sync = pr->api->cuStreamSynchronize(pr->stream);
                  pr->ctx_sync = pr->api->cuCtxSynchronize();
                  pr->query_own = pr->api->cuStreamQuery(pr->stream);
                  pr->ctx_destroy = pr->api->cuCtxDestroy(pr->ctx);
                  pr->record = pr->api->cuEventRecord(pr->event, pr->stream);
                  pr->enqueue = pr->api->cuLaunchHostFunc(
                      pr->stream, [](void* q) { ++static_cast<Probe*>(q)->nested_runs; }, pr);
                },
                &probe),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(probe.stream), CUDA_SUCCESS);
  // Again, for the host function the first one enqueued while this thread was synchronizing.
  ASSERT_EQ(api().cuStreamSynchronize(probe.stream), CUDA_SUCCESS);
  EXPECT_EQ(probe.own_sync, CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(probe.ctx_sync, CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(probe.query_own, CUDA_ERROR_NOT_READY) << "its own stream is running it";
  EXPECT_EQ(probe.ctx_destroy, CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(probe.record, CUDA_SUCCESS);
  EXPECT_EQ(probe.enqueue, CUDA_SUCCESS);
  EXPECT_EQ(probe.nested_runs, 1) << "work enqueued from a host function runs after it";
  EXPECT_EQ(api().cuEventQuery(probe.event), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(probe.event), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(probe.stream), CUDA_SUCCESS);
}

// A host function that throws: reported, counted, and its stream goes on (later work runs, the
// context is not poisoned).
TEST_P(CallbackThreadTest, ThrowingHostFunctionLeavesNoStreamWedged) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuLaunchHostFunc(
                stream, [](void*) { throw std::runtime_error("host function failure"); }, nullptr),
            CUDA_SUCCESS);
  int after = 0;
  ASSERT_EQ(api().cuLaunchHostFunc(stream, [](void* p) { ++*static_cast<int*>(p); }, &after),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(after, 1);
  EXPECT_EQ(fake().HostFunctionExceptions(), 1u);
  EXPECT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

// A kernel implementation that throws, or reads a parameter with the wrong size, fails its launch
// like a faulting kernel (sticky CUDA_ERROR_LAUNCH_FAILED) instead of aborting the process.
// The implementation registered for the sample module's add_one(unsigned*, unsigned) is `fn`.
void LaunchFailingKernel(const CudaApi& api, fakecuda::KernelFn impl) {
  fakecuda::ScopedKernel kernel("add_one", std::move(impl));
  ScopedPrimaryContext ctx(api);
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUmodule module = nullptr;
  ASSERT_EQ(api.cuModuleLoadData(&module, fakecuda::kSamplePtx), CUDA_SUCCESS);
  CUfunction fn = nullptr;
  ASSERT_EQ(api.cuModuleGetFunction(&fn, module, "add_one"), CUDA_SUCCESS);
  CUdeviceptr data = 0;
  ASSERT_EQ(api.cuMemAlloc(&data, 64), CUDA_SUCCESS);
  unsigned n = 16;
  void* params[] = {&data, &n};
  ASSERT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 16, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api.cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(api.cuMemAlloc(&data, 64), CUDA_ERROR_LAUNCH_FAILED) << "the error is sticky";
  // Only a primary context reset clears it (ScopedPrimaryContext releases; reset frees the rest).
  EXPECT_EQ(api.cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
  (void)module;
}

TEST_P(CallbackThreadTest, ThrowingKernelFailsTheLaunch) {
  LaunchFailingKernel(api(), [](const fakecuda::KernelLaunch&) -> CUresult {
    throw std::runtime_error("kernel failure");
  });
}

TEST_P(CallbackThreadTest, KernelParameterSizeMismatchFailsTheLaunch) {
  LaunchFailingKernel(api(), [](const fakecuda::KernelLaunch& launch) {
    (void)launch.Param<std::uint16_t>(1);  // the parameter is 4 bytes
    return CUDA_SUCCESS;
  });
}

// One thread copies through a stream (synchronous copies from pageable memory wait in the call)
// while another destroys it: every call answers, and nothing reads the stream after it is gone
// (AddressSanitizer checks the second part).
TEST_P(CallbackThreadTest, ConcurrentStreamDestroy) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUdeviceptr dev = 0;
  ASSERT_EQ(api().cuMemAlloc(&dev, 1 << 16), CUDA_SUCCESS);
  std::vector<unsigned char> host(1 << 16, 1);
  for (int round = 0; round < 20; ++round) {
    CUstream stream = nullptr;
    ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    std::atomic<bool> go{false};
    std::thread copier([&] {
      ScopedPrimaryContext inner(api());
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < 50; ++i) {
        CUresult r = api().cuMemcpyDtoHAsync(host.data(), dev, host.size(), stream);
        if (r == CUDA_ERROR_INVALID_HANDLE) break;  // destroyed: the answer for a stale handle
        EXPECT_EQ(r, CUDA_SUCCESS);
      }
    });
    go.store(true);
    std::this_thread::yield();
    EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
    copier.join();
  }
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(dev), CUDA_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Policies, CallbackThreadTest,
                         ::testing::Values(SchedulePolicy::kEager, SchedulePolicy::kAdversarial),
                         [](const ::testing::TestParamInfo<SchedulePolicy>& param) {
                           return param.param == SchedulePolicy::kEager ? "Eager" : "Adversarial";
                         });

}  // namespace
}  // namespace cuhal::testing
