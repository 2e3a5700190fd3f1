// Copyright 2026 The cuhal Authors.
// Five deliberately wrong variants of queue/semaphore code, one per bug in the history of IREE's
// CUDA HAL (iree-org/iree PRs 14426, 15673, 16568, 17073, 17107, 17213), each written here (not
// in core) and each shown to fail deterministically on the fake:
//   1. CUDA calls inside a cuLaunchHostFunc callback: the fake refuses them (NOT_PERMITTED, as
//      the H200 does) instead of hanging.
//   2. A multi-semaphore wait that looks before it watches misses a signal landing in between.
//   3. An operation with nothing to signal never retired: its event leaks, and the fake's leak
//      report names it.
//   4. A host wait on the dispatch stream's event instead of the host-side signal: under the
//      adversarial schedule the semaphore has not been signalled when the event is complete.
//   5. Work released from a driver thread (a host function that submits the dependent operation):
//      the submission's driver calls are refused there.
// Next to each, the core's own way passes the same scenario.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/symbols/api_status.h"
#include "tests/device/test_macros.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

Deadline Bound() { return DeadlineAfter(60s); }

class IreeBugsTest : public ::testing::Test {
 protected:
  void Open(fakecuda::SchedulePolicy policy, std::uint64_t idle_release_us = 2000) {
    fakecuda::DriverOptions options;
    options.policy = policy;
    options.seed = 3;
    options.idle_release_us = idle_release_us;
    fake_ = std::make_unique<fakecuda::ScopedDriver>(options);
    fakecuda::FillCudaApi(&api_);
    CUHAL_ASSERT_OK_AND_ASSIGN(driver_, Driver::Create(&api_));
    DeviceParams params;
    params.queue_count = 2;
    CUHAL_ASSERT_OK_AND_ASSIGN(device_, Device::Create(*driver_, 0, params));
  }
  void Close() {
    device_.reset();
    driver_.reset();
  }
  void TearDown() override {
    Close();
    if (fake_) {
      EXPECT_EQ((*fake_)->LiveObjects().Total(), 0) << (*fake_)->LeakReport();
    }
    fake_.reset();
  }
  std::shared_ptr<Semaphore> NewSemaphore() { return device_->CreateSemaphore(0).value(); }

  CudaApi api_;
  std::unique_ptr<fakecuda::ScopedDriver> fake_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;
};

// --- 1. CUDA calls inside a host function ---------------------------------------------------

// Whether the installed fake answers cuCtxGetCurrent inside a host function with
// CUDA_ERROR_NOT_PERMITTED, as the H200 does (docs/driver_facts.md). Tests 1 and 5 need it.
struct Probe {
  const CudaApi* api;
  std::atomic<CUresult> result{CUDA_SUCCESS};
};
void CUDA_CB ProbeCallback(void* p) {
  auto* probe = static_cast<Probe*>(p);
  CUcontext current = nullptr;
  probe->result = probe->api->cuCtxGetCurrent(&current);
}
bool FakeRefusesCallsInHostFunctions(const CudaApi& api, CUcontext ctx, CUstream stream) {
  Probe probe{.api = &api, .result = {}};
  ScopedPushContext push(api, ctx);
  if (api.cuLaunchHostFunc(stream, &ProbeCallback, &probe) != CUDA_SUCCESS) return false;
  if (api.cuStreamSynchronize(stream) != CUDA_SUCCESS) return false;
  return probe.result.load() == CUDA_ERROR_NOT_PERMITTED;
}
#define CUHAL_REQUIRE_REFUSING_FAKE()                                                       \
  if (!FakeRefusesCallsInHostFunctions(api_, device_->context(), device_->queue(0).stream())) \
  GTEST_SKIP() << "this fake does not yet refuse CUDA calls inside host functions "         \
                  "(docs/driver_facts.md: the H200 answers CUDA_ERROR_NOT_PERMITTED)"

struct CallsCudaInside {
  const CudaApi* api;
  CUstream stream;
  std::atomic<CUresult> result{CUDA_SUCCESS};
  std::atomic<bool> ran{false};
};
// The wrong completion callback: allocates the next operation's memory from inside the host
// function (as IREE's did before PR 14426 moved driver calls out of callbacks).
void CUDA_CB WrongCallback(void* p) {
  auto* s = static_cast<CallsCudaInside*>(p);
  CUdeviceptr ptr = 0;
  CUmemoryPool pool = nullptr;
  s->api->cuDeviceGetDefaultMemPool(&pool, 0);
  s->result = s->api->cuMemAllocAsync(&ptr, 256, s->stream);
  if (s->result == CUDA_SUCCESS) s->api->cuMemFreeAsync(ptr, s->stream);
  s->ran = true;
}

TEST_F(IreeBugsTest, CudaCallInsideAHostFunctionIsRefused) {
  Open(fakecuda::SchedulePolicy::kEager);
  CUHAL_REQUIRE_REFUSING_FAKE();
  CallsCudaInside state{.api = &api_, .stream = device_->queue(0).stream(), .result = {}, .ran = {}};
  {
    ScopedPushContext push(api_, device_->context());
    ASSERT_EQ(api_.cuLaunchHostFunc(state.stream, &WrongCallback, &state), CUDA_SUCCESS);
  }
  CUHAL_ASSERT_OK(device_->queue(0).Synchronize());  // returns: the fake answers, never hangs
  ASSERT_TRUE(state.ran.load());
  EXPECT_EQ(state.result.load(), CUDA_ERROR_NOT_PERMITTED);
  // The core's host function only records completion: the same work as a queue operation works.
  auto s = NewSemaphore();
  const SemaphoreValue signal[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer b, device_->queue(0).Alloca({}, signal, MemoryPoolKind::kDeviceLocal, {}, 256));
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  const SemaphoreValue freed[] = {{s.get(), 2}};
  CUHAL_ASSERT_OK(device_->queue(0).Dealloca(signal, freed, std::move(b)));
  CUHAL_EXPECT_OK(s->Wait(2, Bound()));
}

// --- 2. a multi-wait that missed a signal ----------------------------------------------------

// The wrong multi-wait: looks at each semaphore, and only then starts watching for changes (the
// order IREE's multi-wait had before PR 15673). `between` runs where a signal can land unseen.
Status WrongWaitAll(std::span<const SemaphoreValue> values, Deadline deadline,
                    const std::function<void()>& between) {
  bool all = true;
  for (const SemaphoreValue& v : values) all &= v.semaphore->Query().value() >= v.value;
  if (all) return OkStatus();
  between();
  struct Flag final : SemaphoreWatcher {
    Mutex mu;
    CondVar cv;
    bool changed CUHAL_GUARDED_BY(mu) = false;
    void OnSemaphoreChanged() noexcept override {
      MutexLock lock(mu);
      changed = true;
      cv.NotifyAll();
    }
  } flag;
  for (const SemaphoreValue& v : values) v.semaphore->Watch(&flag);
  Status result;
  {
    MutexLock lock(flag.mu);
    while (!flag.changed) {
      if (!flag.cv.WaitUntil(flag.mu, deadline)) {
        result = DeadlineExceededError("the wrong multi-wait saw no change");
        break;
      }
    }
  }
  for (const SemaphoreValue& v : values) v.semaphore->Unwatch(&flag);
  return result;
}

TEST_F(IreeBugsTest, MultiWaitThatWatchesAfterLookingMissesASignal) {
  Open(fakecuda::SchedulePolicy::kEager);
  auto a = NewSemaphore();
  auto b = NewSemaphore();
  const SemaphoreValue both[] = {{a.get(), 1}, {b.get(), 1}};
  const Status wrong = WrongWaitAll(both, DeadlineAfter(50ms), [&] {
    CUHAL_EXPECT_OK(a->Signal(1));  // both land after the look, before the watch
    CUHAL_EXPECT_OK(b->Signal(1));
  });
  EXPECT_EQ(wrong.code(), StatusCode::kDeadlineExceeded) << "the signals were missed";
  CUHAL_EXPECT_OK(Semaphore::WaitAll(both, Bound()));  // the core watches first
}

// --- 3. an operation with nothing to signal never cleaned up ---------------------------------

// The wrong scheduler: enqueues a completion host function only for operations that signal
// something (IREE's before PR 16568); each operation holds an event until it retires.
class WrongScheduler {
 public:
  explicit WrongScheduler(const CudaApi* api) : api_(api) {}
  void Submit(CUstream stream, Semaphore* signal) {
    auto* op = new Op{this, signal, nullptr, false};
    api_->cuEventCreate(&op->event, CU_EVENT_DISABLE_TIMING);
    api_->cuEventRecord(op->event, stream);
    if (signal != nullptr) api_->cuLaunchHostFunc(stream, &Done, op);  // the bug
    live_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    all_.push_back(op);
  }
  // Test cleanup only: what was never retired (its event is destroyed too).
  void FreeUnretired() {
    std::lock_guard<std::mutex> lock(mu_);
    for (Op* op : all_) {
      if (!op->retired) api_->cuEventDestroy(op->event);
      delete op;
    }
    all_.clear();
  }
  // Retires what completed (on the host thread, outside the callback).
  void Drain() {
    std::vector<Op*> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done.swap(done_);
    }
    for (Op* op : done) {
      api_->cuEventDestroy(op->event);
      ReportDroppedStatus(op->signal->Signal(1));
      op->retired = true;
      live_.fetch_sub(1);
    }
  }
  int live() const { return live_.load(); }

 private:
  struct Op {
    WrongScheduler* self;
    Semaphore* signal;
    CUevent event;
    bool retired = false;
  };
  static void CUDA_CB Done(void* p) {
    auto* op = static_cast<Op*>(p);
    std::lock_guard<std::mutex> lock(op->self->mu_);
    op->self->done_.push_back(op);
  }
  const CudaApi* api_;
  std::mutex mu_;
  std::vector<Op*> done_;
  std::vector<Op*> all_;
  std::atomic<int> live_{0};
};

TEST_F(IreeBugsTest, OperationWithNothingToSignalThatIsNeverRetiredLeaks) {
  Open(fakecuda::SchedulePolicy::kEager);
  auto s = NewSemaphore();
  {
    ScopedPushContext push(api_, device_->context());
    WrongScheduler wrong(&api_);
    wrong.Submit(device_->queue(0).stream(), s.get());
    wrong.Submit(device_->queue(0).stream(), nullptr);  // nothing to signal
    CUHAL_ASSERT_OK(device_->queue(0).Synchronize());
    wrong.Drain();
    CUHAL_ASSERT_OK(s->Wait(1, Bound()));
    EXPECT_EQ(wrong.live(), 1) << "the operation with nothing to signal is never retired";
    // The fake's inventory names what it holds: one event that nobody will destroy.
    EXPECT_EQ((*fake_)->LiveObjects().events, 1);
    EXPECT_THAT((*fake_)->LeakReport(), HasSubstr("event"));
    wrong.FreeUnretired();  // so that this test itself leaks no host memory
  }
  // Clean up what the wrong variant leaked, so the fixture's own leak check passes; the core's
  // operations with nothing to signal are retired (QueueConformanceTest.
  // OperationsWithNothingToSignalAreCleanedUp).
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, {}));
  CUHAL_ASSERT_OK(device_->Synchronize());
  EXPECT_EQ(device_->queue_scheduler().counts().in_flight, 0u);
}

// --- 4. a host wait on the dispatch stream's event -------------------------------------------

TEST_F(IreeBugsTest, HostWaitOnTheDispatchEventIsNotTheSignal) {
  // Adversarial, with host functions released only when someone waits for them.
  Open(fakecuda::SchedulePolicy::kAdversarial, /*idle_release_us=*/60'000'000);
  auto s = NewSemaphore();
  const SemaphoreValue signal[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, signal));
  // The wrong wait (IREE's before PR 17213): synchronize on the event recorded on the dispatch
  // stream, then treat the semaphore as signalled.
  Semaphore::Resolution r = s->Resolve(1, &device_->queue_scheduler());
  ASSERT_EQ(r.state, Semaphore::WaitState::kDevice);
  ASSERT_EQ(api_.cuEventSynchronize(r.timepoint->event()), CUDA_SUCCESS);
  r.timepoint->Unref();
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t value, s->Query());
  EXPECT_EQ(value, 0u) << "the event completed, but the host-side signal has not happened";
  // The core's host wait waits for the host-side value; the queue's synchronization lets the
  // held-back host function run.
  CUHAL_ASSERT_OK(device_->queue(0).Synchronize());
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
}

// The window behind the flake this scenario once showed under ThreadSanitizer: the worker has
// taken the lane's turn to enqueue its host function but its cuLaunchHostFunc has not returned
// when the test thread synchronizes the queue. Synchronize must wait for that launch (else the
// stream it synchronizes does not hold the host function yet, which then stays held back for a
// minute). A table whose cuLaunchHostFunc sleeps on every thread but the test's opens the window
// wide on every run.
std::atomic<CUresult (*)(CUstream, CUhostFn, void*)> g_real_launch{nullptr};
std::atomic<std::thread::id> g_test_thread{};
std::atomic<int> g_slow_launches{0};
CUresult CUDAAPI SlowOffThreadLaunch(CUstream stream, CUhostFn fn, void* data) {
  if (std::this_thread::get_id() != g_test_thread.load()) {
    ++g_slow_launches;
    std::this_thread::sleep_for(300ms);
  }
  return g_real_launch.load()(stream, fn, data);
}

TEST_F(IreeBugsTest, SynchronizeWaitsForTheHostFunctionTheWorkerIsEnqueueing) {
  fakecuda::DriverOptions options;
  options.policy = fakecuda::SchedulePolicy::kAdversarial;
  options.seed = 3;
  options.idle_release_us = 60'000'000;
  fake_ = std::make_unique<fakecuda::ScopedDriver>(options);
  fakecuda::FillCudaApi(&api_);
  g_real_launch = api_.cuLaunchHostFunc;
  g_test_thread = std::this_thread::get_id();
  g_slow_launches = 0;
  api_.cuLaunchHostFunc = &SlowOffThreadLaunch;
  CUHAL_ASSERT_OK_AND_ASSIGN(driver_, Driver::Create(&api_));
  CUHAL_ASSERT_OK_AND_ASSIGN(device_, Device::Create(*driver_, 0, DeviceParams{}));
  auto s = NewSemaphore();
  const SemaphoreValue signal[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, signal));
  // Let the worker take the lane's turn (it then sleeps inside its launch).
  for (int i = 0; i < 2000 && g_slow_launches.load() == 0; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_GT(g_slow_launches.load(), 0) << "the worker never enqueued the lane's host function";
  CUHAL_ASSERT_OK(device_->queue(0).Synchronize());
  // The host function was on the synchronized stream, so it ran: the signal follows at once
  // (without the wait, nothing releases it for 60 s).
  CUHAL_EXPECT_OK(s->Wait(1, DeadlineAfter(20s)));
}

// --- 5. work released from a driver thread ---------------------------------------------------

struct ReleaseFromCallback {
  Queue* queue;
  Semaphore* signal;
  Status status;
  std::atomic<bool> ran{false};
};
// The wrong release: the completion callback submits the dependent operation itself (IREE's
// before PR 17107 moved releases to a worker thread).
void CUDA_CB ReleaseInsideCallback(void* p) {
  auto* r = static_cast<ReleaseFromCallback*>(p);
  const SemaphoreValue signal[] = {{r->signal, 1}};
  r->status = r->queue->Barrier({}, signal);
  r->ran = true;
}

TEST_F(IreeBugsTest, WorkReleasedFromADriverThreadIsRefused) {
  Open(fakecuda::SchedulePolicy::kEager);
  CUHAL_REQUIRE_REFUSING_FAKE();
  auto s = NewSemaphore();
  ReleaseFromCallback release{.queue = &device_->queue(1), .signal = s.get(), .status = {}};
  {
    ScopedPushContext push(api_, device_->context());
    ASSERT_EQ(api_.cuLaunchHostFunc(device_->queue(0).stream(), &ReleaseInsideCallback, &release),
              CUDA_SUCCESS);
  }
  CUHAL_ASSERT_OK(device_->queue(0).Synchronize());
  ASSERT_TRUE(release.ran.load());
  EXPECT_FALSE(release.status.ok());
  EXPECT_THAT(release.status.message(), HasSubstr("CUDA_ERROR_NOT_PERMITTED"));
  EXPECT_TRUE(s->failed());  // the refused submission failed its signal
  // The core releases dependents on its worker: the same dependency as a queue operation.
  auto t = NewSemaphore();
  const SemaphoreValue t1[] = {{t.get(), 1}};
  const SemaphoreValue t2[] = {{t.get(), 2}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, t1));
  CUHAL_ASSERT_OK(device_->queue(1).Barrier(t1, t2));
  CUHAL_EXPECT_OK(t->Wait(2, Bound()));
}

}  // namespace
}  // namespace cuhal::testing
