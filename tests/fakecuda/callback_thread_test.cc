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
  EXPECT_EQ(a.id, b.id) << "one callback thread serves every stream of a context";
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
    CUresult get_current = CUDA_SUCCESS;
    CUcontext current = reinterpret_cast<CUcontext>(0x1);
    CUresult alloc = CUDA_SUCCESS;
    CUresult attribute = CUDA_SUCCESS;
    CUresult event_create = CUDA_SUCCESS;
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
                  pr->get_current = pr->api->cuCtxGetCurrent(&pr->current);
                  CUdeviceptr dptr = 0;
                  pr->alloc = pr->api->cuMemAlloc(&dptr, 64);
                  int value = 0;
                  pr->attribute = pr->api->cuDeviceGetAttribute(
                      &value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0);
                  CUevent e = nullptr;
                  pr->event_create = pr->api->cuEventCreate(&e, 0);
                  pr->enqueue = pr->api->cuLaunchHostFunc(
                      pr->stream, [](void* q) { ++static_cast<Probe*>(q)->nested_runs; }, pr);
                },
                &probe),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(probe.stream), CUDA_SUCCESS);
  // Again, for the host function the first one enqueued while this thread was synchronizing.
  ASSERT_EQ(api().cuStreamSynchronize(probe.stream), CUDA_SUCCESS);
  // The H200 hangs here (a deadlock); the fake answers instead.
  EXPECT_EQ(probe.own_sync, CUDA_ERROR_NOT_PERMITTED);
  // Measured on the H200 (docs/driver_facts.md): no current context inside a callback, and the
  // calls that need one, allocation, device queries and object creation are refused.
  EXPECT_EQ(probe.ctx_sync, CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(probe.get_current, CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(probe.current, reinterpret_cast<CUcontext>(0x1)) << "out-parameter left alone";
  EXPECT_EQ(probe.alloc, CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(probe.attribute, CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(probe.event_create, CUDA_ERROR_NOT_PERMITTED);
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

// A host function that spins until the test releases it.
struct Gate {
  std::atomic<bool> entered{false};
  std::atomic<bool> open{false};
  static void Block(void* p) {
    auto* g = static_cast<Gate*>(p);
    g->entered.store(true);
    while (!g->open.load()) std::this_thread::yield();
  }
};

// Waits (bounded, so that a broken fake fails instead of hanging) until `done` holds.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 60000 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

// Measured on the H200: the host functions of one context run one at a time (a second one on an
// independent stream waits for a blocking one), those of another context run at once, and a
// kernel on another stream still runs.
TEST_P(CallbackThreadTest, HostFunctionsOfAContextRunOneAtATime) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUstream blocked = nullptr, independent = nullptr, kernel_stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&blocked, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamCreate(&independent, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamCreate(&kernel_stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  // A second context on the same device, with its own stream.
  CUcontext other = nullptr;
  ASSERT_EQ(api().cuCtxCreate(&other, nullptr, 0, 0), CUDA_SUCCESS);
  CUstream other_stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&other_stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxPopCurrent(nullptr), CUDA_SUCCESS);

  fakecuda::SampleKernels kernels;
  CUmodule module = nullptr;
  ASSERT_EQ(api().cuModuleLoadData(&module, fakecuda::kSamplePtx), CUDA_SUCCESS);
  CUfunction add_one = nullptr;
  ASSERT_EQ(api().cuModuleGetFunction(&add_one, module, "add_one"), CUDA_SUCCESS);
  CUdeviceptr data = 0;
  ASSERT_EQ(api().cuMemAlloc(&data, 64), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32(data, 1, 16), CUDA_SUCCESS);

  Gate gate;
  std::atomic<int> independent_runs{0}, other_runs{0};
  auto count = [](void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); };
  ASSERT_EQ(api().cuLaunchHostFunc(blocked, &Gate::Block, &gate), CUDA_SUCCESS);
  ASSERT_TRUE(Eventually([&] {
    (void)api().cuStreamQuery(blocked);  // the adversarial policy runs work when asked
    return gate.entered.load();
  }));
  ASSERT_EQ(api().cuLaunchHostFunc(independent, count, &independent_runs), CUDA_SUCCESS);
  ASSERT_EQ(api().cuLaunchHostFunc(other_stream, count, &other_runs), CUDA_SUCCESS);
  unsigned n = 16;
  void* params[] = {&data, &n};
  ASSERT_EQ(api().cuLaunchKernel(add_one, 1, 1, 1, 16, 1, 1, 0, kernel_stream, params, nullptr),
            CUDA_SUCCESS);
  // The kernel and the other context's host function finish while the gate is closed.
  EXPECT_TRUE(Eventually([&] { return api().cuStreamQuery(kernel_stream) == CUDA_SUCCESS; }));
  EXPECT_TRUE(Eventually([&] { return api().cuStreamQuery(other_stream) == CUDA_SUCCESS; }));
  EXPECT_EQ(other_runs.load(), 1);
  // The same context's independent host function waits for the blocking one.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(api().cuStreamQuery(independent), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(independent_runs.load(), 0);
  EXPECT_EQ(api().cuStreamQuery(blocked), CUDA_ERROR_NOT_READY);
  gate.open.store(true);
  EXPECT_EQ(api().cuStreamSynchronize(independent), CUDA_SUCCESS);
  EXPECT_EQ(independent_runs.load(), 1);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  unsigned first = 0;
  EXPECT_EQ(api().cuMemcpyDtoH(&first, data, sizeof(first)), CUDA_SUCCESS);
  EXPECT_EQ(first, 2u);

  EXPECT_EQ(api().cuMemFree(data), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleUnload(module), CUDA_SUCCESS);
  for (CUstream s : {blocked, independent, kernel_stream}) {
    EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
  }
  ASSERT_EQ(api().cuCtxPushCurrent(other), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(other_stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(other_stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxDestroy(other), CUDA_SUCCESS);
}

// Measured on the H200: a host function may wait for another stream (it waits for a kernel
// there) and may synchronize an event.
TEST_P(CallbackThreadTest, HostFunctionMayWaitForAnotherStream) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUstream first = nullptr, second = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&first, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamCreate(&second, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  fakecuda::SampleKernels kernels;
  CUmodule module = nullptr;
  ASSERT_EQ(api().cuModuleLoadData(&module, fakecuda::kSamplePtx), CUDA_SUCCESS);
  CUfunction add_one = nullptr;
  ASSERT_EQ(api().cuModuleGetFunction(&add_one, module, "add_one"), CUDA_SUCCESS);
  CUdeviceptr data = 0;
  ASSERT_EQ(api().cuMemAlloc(&data, 64), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32(data, 1, 16), CUDA_SUCCESS);
  unsigned n = 16;
  void* params[] = {&data, &n};
  ASSERT_EQ(api().cuLaunchKernel(add_one, 1, 1, 1, 16, 1, 1, 0, second, params, nullptr),
            CUDA_SUCCESS);
  struct Wait {
    const CudaApi* api;
    CUstream other;
    CUresult result = CUDA_ERROR_UNKNOWN;
  } wait{&api(), second};
  ASSERT_EQ(api().cuLaunchHostFunc(
                first,
                [](void* p) {
                  auto* w = static_cast<Wait*>(p);
                  w->result = w->api->cuStreamSynchronize(w->other);
                },
                &wait),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(first), CUDA_SUCCESS);
  EXPECT_EQ(wait.result, CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamQuery(second), CUDA_SUCCESS) << "the host function waited for it";
  EXPECT_EQ(api().cuMemFree(data), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleUnload(module), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(first), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(second), CUDA_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Policies, CallbackThreadTest,
                         ::testing::Values(SchedulePolicy::kEager, SchedulePolicy::kAdversarial),
                         [](const ::testing::TestParamInfo<SchedulePolicy>& param) {
                           return param.param == SchedulePolicy::kEager ? "Eager" : "Adversarial";
                         });

}  // namespace
}  // namespace cuhal::testing
