// Copyright 2026 The cuhal Authors.
// Pins, with the trompeloeil mock of the CUDA table, the driver calls each queue operation makes
// (Queue::Alloca, Dealloca, Execute, Barrier, and a queue-to-queue wait), in order, on which
// stream, in the device's context, and how each failure is cleaned up: what the operation took
// is given back (the allocation freed in stream order, the event returned to the event pool),
// its signal semaphores fail with a status naming the failing driver call, and nothing leaks
// (every event created is destroyed by the end, nothing is left in flight or deferred).
//
// The mock keeps a model of each thread's context stack (thread_local: the device's worker
// thread has its own): cuCtxGetCurrent/cuCtxPushCurrent/cuCtxPopCurrent are allowed anywhere
// and answer from it; the pinned enqueueing calls check that the device's context is current.
// Device creation and destruction are allowed, not pinned (tests/device/device_mock_test.cc
// pins them). The mocked driver keeps each stream's order: cuEventRecord and cuLaunchHostFunc
// take the next position on their stream; the test runs host functions on a thread of its own (a
// "driver thread"), which completes their stream up to their position first, as the driver does;
// cuEventQuery answers from that (SUCCESS once the event's stream completed past its record,
// NOT_READY before) and is allowed only on threads other than the test's (the device's worker):
// the submitting thread never waits for the device. cuStreamSynchronize, allowed only during
// teardown, completes its stream and runs its pending callbacks. Every call that no expectation
// matches fails the test: in particular no cuStreamSynchronize / cuEventSynchronize may happen
// before teardown (no host round trip).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "core/device/device.h"
#include "core/device/queue_scheduler.h"
#include "core/device/transfer_batch.h"
#include "core/driver/driver.h"
#include "core/semaphore/semaphore.h"
#include "tests/device/test_macros.h"
#include "tests/mocks/mock_cuda_api.h"

namespace cuhal {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using mocks::MockCudaApi;
using trompeloeil::_;
using namespace std::chrono_literals;

const CUcontext kPrimary = reinterpret_cast<CUcontext>(0xC0);
constexpr std::size_t kBytes = 4096;

// The calling thread's context stack, as the mocked driver keeps it (one per thread).
struct ContextStack {
  std::vector<CUcontext> entries;
  CUcontext top() const { return entries.empty() ? nullptr : entries.back(); }
};
thread_local ContextStack t_stack;
bool InPrimary() { return t_stack.top() == kPrimary; }
void PopContext(CUcontext* popped) {
  if (popped != nullptr) *popped = t_stack.top();
  t_stack.entries.pop_back();
}

// Statuses that reached ReportDroppedStatus during a test.
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
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    default: return 0;
  }
}

// What the mocked driver keeps: handles it gave out, host functions it was handed.
struct DriverModel {
  std::mutex mu;
  std::uintptr_t next_stream = 0x5000;
  std::uintptr_t next_pool = 0x9000;
  std::uintptr_t next_event = 0xE000;
  std::set<CUevent> live_events;
  int events_destroyed = 0;
  struct HostFunction {
    CUstream stream;
    CUhostFn fn;
    void* data;
    std::uint64_t position;  // in its stream's order
  };
  std::vector<HostFunction> host_functions;  // enqueued, not yet run
  int host_functions_launched = 0;
  // Stream order: positions taken (cuEventRecord, cuLaunchHostFunc) and completed, per stream.
  std::map<CUstream, std::uint64_t> enqueued;
  std::map<CUstream, std::uint64_t> completed;
  std::map<CUevent, std::pair<CUstream, std::uint64_t>> records;  // the last record of each

  CUstream NewStream() {
    std::lock_guard<std::mutex> lock(mu);
    return reinterpret_cast<CUstream>(++next_stream);
  }
  CUmemoryPool NewPool() {
    std::lock_guard<std::mutex> lock(mu);
    return reinterpret_cast<CUmemoryPool>(++next_pool);
  }
  CUevent NewEvent() {
    std::lock_guard<std::mutex> lock(mu);
    auto event = reinterpret_cast<CUevent>(++next_event);
    live_events.insert(event);
    return event;
  }
  CUresult DestroyEvent(CUevent event) {
    std::lock_guard<std::mutex> lock(mu);
    if (live_events.erase(event) != 1) {
      ADD_FAILURE() << "cuEventDestroy of an event that is not live";
      return CUDA_ERROR_INVALID_HANDLE;
    }
    ++events_destroyed;
    return CUDA_SUCCESS;
  }
  void Record(CUevent event, CUstream stream) {
    std::lock_guard<std::mutex> lock(mu);
    records[event] = {stream, ++enqueued[stream]};
  }
  CUresult Query(CUevent event) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = records.find(event);
    if (it == records.end()) return CUDA_SUCCESS;  // never recorded
    return completed[it->second.first] >= it->second.second ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  }
  void Launch(CUstream stream, CUhostFn fn, void* data) {
    std::lock_guard<std::mutex> lock(mu);
    host_functions.push_back({stream, fn, data, ++enqueued[stream]});
    ++host_functions_launched;
  }
  int launched() {
    std::lock_guard<std::mutex> lock(mu);
    return host_functions_launched;
  }
  // The device ran everything enqueued on `stream` (its host functions still wait to be run).
  void Complete(CUstream stream) {
    std::lock_guard<std::mutex> lock(mu);
    completed[stream] = enqueued[stream];
  }
  // cuStreamSynchronize: everything enqueued on `stream` completes, then its host functions run.
  void Synchronize(CUstream stream) {
    {
      std::lock_guard<std::mutex> lock(mu);
      completed[stream] = enqueued[stream];
    }
    RunHostFunctions(stream);
  }
  // Runs, in enqueue order, the pending host functions of `stream` (every stream when null) on a
  // thread of their own, as the driver's callback thread would.
  void RunHostFunctions(CUstream stream = nullptr) {
    std::vector<HostFunction> run;
    {
      std::lock_guard<std::mutex> lock(mu);
      std::vector<HostFunction> keep;
      for (const HostFunction& h : host_functions) {
        (stream == nullptr || h.stream == stream ? run : keep).push_back(h);
      }
      host_functions.swap(keep);
    }
    if (run.empty()) return;
    std::thread driver_thread([this, &run] {
      for (const HostFunction& h : run) {
        {
          std::lock_guard<std::mutex> lock(mu);
          std::uint64_t& done = completed[h.stream];
          done = std::max(done, h.position);
        }
        h.fn(h.data);
      }
    });
    driver_thread.join();
  }
  int destroyed() {
    std::lock_guard<std::mutex> lock(mu);
    return events_destroyed;
  }
  std::size_t pending_host_functions() {
    std::lock_guard<std::mutex> lock(mu);
    return host_functions.size();
  }
};

class QueueMockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t_stack.entries.clear();
    mock_.AllowErrorLookups();
    mock_.AllowDeviceQueries(&Attribute);
    api_ = mock_.Table();
    DriverModel* m = &model_;
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuCtxGetCurrent(_))
                           .SIDE_EFFECT(*_1 = t_stack.top())
                           .RETURN(CUDA_SUCCESS));
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuCtxPushCurrent(_))
                           .SIDE_EFFECT(t_stack.entries.push_back(_1))
                           .RETURN(CUDA_SUCCESS));
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuCtxPopCurrent(_))
                           .WITH(!t_stack.entries.empty())
                           .SIDE_EFFECT(PopContext(_1))
                           .RETURN(CUDA_SUCCESS));
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuDevicePrimaryCtxRetain(_, 0))
                           .SIDE_EFFECT(*_1 = kPrimary)
                           .RETURN(CUDA_SUCCESS));
    allowed_.push_back(
        NAMED_ALLOW_CALL(mock_, cuDevicePrimaryCtxRelease(0)).RETURN(CUDA_SUCCESS));
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuStreamCreate(_, _))
                           .SIDE_EFFECT(*_1 = m->NewStream())
                           .RETURN(CUDA_SUCCESS));
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuStreamDestroy(_)).RETURN(CUDA_SUCCESS));
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuMemPoolCreate(_, _))
                           .SIDE_EFFECT(*_1 = m->NewPool())
                           .RETURN(CUDA_SUCCESS));
    allowed_.push_back(
        NAMED_ALLOW_CALL(mock_, cuMemPoolSetAttribute(_, _, _)).RETURN(CUDA_SUCCESS));
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuMemPoolDestroy(_)).RETURN(CUDA_SUCCESS));
    allowed_.push_back(
        NAMED_ALLOW_CALL(mock_, cuEventDestroy(_)).RETURN(m->DestroyEvent(_1)));
    const std::thread::id test_thread = std::this_thread::get_id();
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuEventQuery(_))
                           .WITH(std::this_thread::get_id() != test_thread)
                           .RETURN(m->Query(_1)));
    previous_handler_ = SetDroppedStatusHandler(&CaptureDropped);
    {
      std::lock_guard<std::mutex> lock(g_dropped_mu);
      g_dropped.clear();
    }
    StatusOr<std::unique_ptr<Driver>> driver = Driver::Create(&api_);
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = std::move(driver).value();
    DeviceParams params;
    params.queue_count = 2;
    // The issuing thread enqueues a queue's host function when it finds none pending: the order
    // these tests pin. WorkerModeMockTest below pins the default, where the worker enqueues them.
    params.worker_enqueues_host_functions = WorkerEnqueuesHostFunctions();
    // One pooled event: the first timepoint creates it, later ones reuse it while it is free,
    // and a second one in use at once is created, then destroyed when given back.
    params.event_pool_capacity = 1;
    StatusOr<std::unique_ptr<Device>> device = Device::Create(*driver_, 0, params);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(device).value();
    ASSERT_NE(device_->pools(), nullptr);
    q0_ = device_->queue(0).stream();
    q1_ = device_->queue(1).stream();
    local_pool_ = device_->pools()->device_local().handle();
  }

  void TearDown() override {
    if (device_ != nullptr) Close();
    SetDroppedStatusHandler(previous_handler_);
  }

  // Destroys the device the way the driver would let it: synchronizing a stream runs its pending
  // host functions. Then checks that nothing leaked.
  void Close() {
    DriverModel* m = &model_;
    auto sync = NAMED_ALLOW_CALL(mock_, cuStreamSynchronize(_))
                    .SIDE_EFFECT(m->Synchronize(_1))
                    .RETURN(CUDA_SUCCESS);
    device_.reset();
    driver_.reset();
    EXPECT_EQ(model_.pending_host_functions(), 0u);
    std::lock_guard<std::mutex> lock(model_.mu);
    EXPECT_THAT(model_.live_events, IsEmpty()) << "every event created is destroyed";
  }

  std::vector<Status> Dropped() {
    std::lock_guard<std::mutex> lock(g_dropped_mu);
    return g_dropped;
  }

  std::shared_ptr<Semaphore> NewSemaphore() {
    StatusOr<std::shared_ptr<Semaphore>> s = device_->CreateSemaphore(0);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  static Deadline Bound() { return DeadlineAfter(60s); }

  // The pinned tail of every issued operation: an event (created when the pool has none free),
  // cuEventRecord on the queue's stream, and cuLaunchHostFunc on it when the queue has no host
  // function pending (`launch`).
  void ExpectSignalTail(CUstream stream, CUevent event, bool create_event, bool launch = true) {
    DriverModel* m = &model_;
    if (create_event) {
      script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventCreate(_, CU_EVENT_DISABLE_TIMING))
                            .IN_SEQUENCE(seq_)
                            .WITH(InPrimary())
                            .SIDE_EFFECT(*_1 = m->NewEvent())
                            .RETURN(CUDA_SUCCESS));
    }
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventRecord(event, stream))
                          .IN_SEQUENCE(seq_)
                          .WITH(InPrimary())
                          .SIDE_EFFECT(m->Record(_1, _2))
                          .RETURN(CUDA_SUCCESS));
    if (launch) ExpectLaunch(stream);
  }
  void ExpectLaunch(CUstream stream, CUresult result = CUDA_SUCCESS) {
    DriverModel* m = &model_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuLaunchHostFunc(stream, _, _))
                          .IN_SEQUENCE(seq_)
                          .WITH(InPrimary())
                          .SIDE_EFFECT(result == CUDA_SUCCESS ? m->Launch(_1, _2, _3) : void())
                          .RETURN(result));
  }
  // The worker's: on its own thread, with no context current (an explicit stream needs none).
  void ExpectWorkerLaunch(CUstream stream) {
    DriverModel* m = &model_;
    const std::thread::id test_thread = std::this_thread::get_id();
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuLaunchHostFunc(stream, _, _))
                          .IN_SEQUENCE(seq_)
                          .WITH(std::this_thread::get_id() != test_thread)
                          .SIDE_EFFECT(m->Launch(_1, _2, _3))
                          .RETURN(CUDA_SUCCESS));
  }
  // The worker's cuLaunchHostFunc on `stream`, failing with CUDA_ERROR_OUT_OF_MEMORY.
  void ExpectFailedWorkerLaunch(CUstream stream) {
    const std::thread::id test_thread = std::this_thread::get_id();
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuLaunchHostFunc(stream, _, _))
                          .IN_SEQUENCE(seq_)
                          .WITH(std::this_thread::get_id() != test_thread)
                          .RETURN(CUDA_ERROR_OUT_OF_MEMORY));
  }
  // Exactly one status was dropped: the worker's failed launch, saying the events are polled.
  void ExpectOnePollingReport() {
    const std::vector<Status> dropped = Dropped();
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_THAT(dropped[0].message(), HasSubstr("cuLaunchHostFunc: CUDA_ERROR_OUT_OF_MEMORY"));
    EXPECT_THAT(dropped[0].message(), HasSubstr("polled instead"));
  }
  void ExpectPoolAlloc(CUstream stream, CUdeviceptr ptr, CUresult result = CUDA_SUCCESS) {
    const CUmemoryPool pool = local_pool_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemAllocFromPoolAsync(_, kBytes, pool, stream))
                          .IN_SEQUENCE(seq_)
                          .WITH(InPrimary())
                          .SIDE_EFFECT(*_1 = result == CUDA_SUCCESS ? ptr : 0)
                          .RETURN(result));
  }
  void ExpectFreeAsync(CUstream stream, CUdeviceptr ptr) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemFreeAsync(ptr, stream))
                          .IN_SEQUENCE(seq_)
                          .WITH(InPrimary())
                          .RETURN(CUDA_SUCCESS));
  }
  static CUevent Event(int n) { return reinterpret_cast<CUevent>(0xE000 + n); }

  // DeviceParams::worker_enqueues_host_functions of the device under test.
  virtual bool WorkerEnqueuesHostFunctions() const { return false; }
  // Waits (bounded) until `n` host functions were enqueued in all.
  void WaitForLaunches(int n) {
    const Deadline deadline = Bound();
    while (model_.launched() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(model_.launched(), n);
  }

  // The scheduler holds nothing: no operation deferred or in flight.
  void ExpectIdleScheduler() {
    const QueueScheduler::Counts c = device_->queue_scheduler().counts();
    EXPECT_EQ(c.deferred, 0u);
    EXPECT_EQ(c.in_flight, 0u);
  }
  // Waits (bounded) until the worker retired everything issued.
  void WaitUntilRetired() {
    const Deadline deadline = Bound();
    while (device_->queue_scheduler().counts().in_flight != 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
  }

  MockCudaApi mock_;
  CudaApi api_;
  DriverModel model_;
  trompeloeil::sequence seq_;
  std::vector<std::unique_ptr<trompeloeil::expectation>> allowed_;  // after mock_: destroyed first
  std::vector<std::unique_ptr<trompeloeil::expectation>> script_;
  DroppedStatusHandler previous_handler_ = nullptr;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;  // after the expectations: destroyed first
  CUstream q0_ = nullptr;
  CUstream q1_ = nullptr;
  CUmemoryPool local_pool_ = nullptr;
};

// --- Alloca -----------------------------------------------------------------------------------

TEST_F(QueueMockTest, ReadyAllocaAllocatesOnTheQueueStreamThenRecordsItsSignal) {
  auto s = NewSemaphore();
  const CUdeviceptr ptr = 0xD000;
  ExpectPoolAlloc(q0_, ptr);
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true);
  const SemaphoreValue signal[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer,
                             device_->queue(0).Alloca({}, signal, MemoryPoolKind::kDeviceLocal,
                                                      {}, kBytes));
  EXPECT_EQ(buffer.device_ptr(), ptr) << "the address exists at once";
  EXPECT_EQ(buffer.size(), kBytes);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t before, s->Query());
  EXPECT_EQ(before, 0u) << "signalled only once the host function reported completion";
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
  EXPECT_EQ(device_->queue_scheduler().event_pool().pooled(), 1u) << "the event is back";

  // Dealloca of it, ready: cuMemFreeAsync on the queue stream, then the signal (the pooled
  // event is reused: no cuEventCreate).
  ExpectFreeAsync(q0_, ptr);
  ExpectSignalTail(q0_, Event(1), /*create_event=*/false);
  const SemaphoreValue freed[] = {{s.get(), 2}};
  CUHAL_ASSERT_OK(device_->queue(0).Dealloca(signal, freed, std::move(buffer)));
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(2, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
  EXPECT_THAT(Dropped(), IsEmpty());
}

TEST_F(QueueMockTest, AllocaWhoseAllocationFailsFailsItsSignalsNamingTheCall) {
  auto s = NewSemaphore();
  ExpectPoolAlloc(q0_, 0, CUDA_ERROR_OUT_OF_MEMORY);
  // Nothing else: no event is taken, no host function enqueued.
  const SemaphoreValue signal[] = {{s.get(), 1}};
  StatusOr<Buffer> buffer =
      device_->queue(0).Alloca({}, signal, MemoryPoolKind::kDeviceLocal, {}, kBytes);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(buffer.status().message(), HasSubstr("cuMemAllocFromPoolAsync"));
  EXPECT_THAT(buffer.status().message(), HasSubstr("queue 0: alloca of 4096 bytes"));
  const Status failed = s->Wait(1, Bound());
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted) << failed;
  EXPECT_THAT(failed.message(), HasSubstr("cuMemAllocFromPoolAsync: CUDA_ERROR_OUT_OF_MEMORY"));
  ExpectIdleScheduler();
  EXPECT_EQ(device_->queue_scheduler().event_pool().outstanding(), 0u);
  EXPECT_EQ(model_.pending_host_functions(), 0u);
}

TEST_F(QueueMockTest, AllocaWhoseSignalCannotBeRecordedFreesItsMemoryAndGivesTheEventBack) {
  auto s = NewSemaphore();
  const CUdeviceptr ptr = 0xD000;
  DriverModel* m = &model_;
  ExpectPoolAlloc(q0_, ptr);
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventCreate(_, CU_EVENT_DISABLE_TIMING))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_1 = m->NewEvent())
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventRecord(Event(1), q0_))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_ERROR_INVALID_HANDLE));
  // The allocation is given back in the queue's stream order; no host function.
  ExpectFreeAsync(q0_, ptr);
  const SemaphoreValue signal[] = {{s.get(), 1}};
  StatusOr<Buffer> buffer =
      device_->queue(0).Alloca({}, signal, MemoryPoolKind::kDeviceLocal, {}, kBytes);
  ASSERT_FALSE(buffer.ok());
  EXPECT_THAT(buffer.status().message(), HasSubstr("cuEventRecord"));
  const Status failed = s->Wait(1, Bound());
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.message(), HasSubstr("recording the operation's timepoint: cuEventRecord"));
  EXPECT_EQ(device_->queue_scheduler().event_pool().outstanding(), 0u);
  EXPECT_EQ(device_->queue_scheduler().event_pool().pooled(), 1u) << "the event went back";
  ExpectIdleScheduler();
  EXPECT_EQ(model_.pending_host_functions(), 0u);
  EXPECT_EQ(device_->allocator().live_buffers(), 0u) << "no buffer outlives the failure";
}

TEST_F(QueueMockTest, DeallocaOfANonPoolBufferFreesItAfterCompletionAndBeforeTheSignal) {
  auto s = NewSemaphore();
  const CUdeviceptr ptr = 0xF000;
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemAlloc(_, kBytes))
                        .IN_SEQUENCE(seq_)
                        .WITH(InPrimary())
                        .SIDE_EFFECT(*_1 = ptr)
                        .RETURN(CUDA_SUCCESS));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device_->allocator().Allocate({}, kBytes));
  // Not stream-ordered: the Dealloca is a barrier that holds the buffer; the worker frees it
  // (cuMemFree, in the device's context, on its own thread) once the operation completed, and
  // only then signals (driver calls before signals).
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true);
  std::atomic<bool> freed{false};
  std::atomic<bool>* freed_flag = &freed;
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemFree(ptr))
                        .IN_SEQUENCE(seq_)
                        .WITH(InPrimary())
                        .SIDE_EFFECT(freed_flag->store(true))
                        .RETURN(CUDA_SUCCESS));
  const SemaphoreValue s1[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Dealloca({}, s1, std::move(buffer)));
  EXPECT_FALSE(freed.load()) << "freed before the operation completed";
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  EXPECT_TRUE(freed.load()) << "signalled before the buffer was freed";
  EXPECT_EQ(device_->allocator().live_buffers(), 0u);
  EXPECT_THAT(Dropped(), IsEmpty());
}

// --- queue to queue ---------------------------------------------------------------------------

TEST_F(QueueMockTest, QueueToQueueWaitIsAnEventRecordOnAAndAStreamWaitOnBWithoutAHostRoundTrip) {
  auto s = NewSemaphore();
  auto t = NewSemaphore();
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true);  // A: Barrier -> S = 1
  // B: Barrier after S >= 1 -> T = 1, ordered on the device after A's event.
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamWaitEvent(q1_, Event(1), 0u))
                        .IN_SEQUENCE(seq_)
                        .WITH(InPrimary())
                        .RETURN(CUDA_SUCCESS));
  ExpectSignalTail(q1_, Event(2), /*create_event=*/true);  // A's event is still in use
  // No cuStreamSynchronize, cuEventSynchronize or cuEventQuery is allowed here.
  const SemaphoreValue s1[] = {{s.get(), 1}};
  const SemaphoreValue t1[] = {{t.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, s1));
  CUHAL_ASSERT_OK(device_->queue(1).Barrier(s1, t1));
  EXPECT_EQ(device_->queue_scheduler().counts().deferred, 0u) << "nothing waits on the host";
  EXPECT_EQ(device_->queue_scheduler().counts().in_flight, 2u);
  // The driver completes A, then B.
  model_.RunHostFunctions(q0_);
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  model_.RunHostFunctions(q1_);
  CUHAL_EXPECT_OK(t->Wait(1, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
  EXPECT_EQ(model_.destroyed(), 1) << "the second event did not fit the pool of one";
  EXPECT_THAT(Dropped(), IsEmpty());
}

// --- completion: one host function per batch, events queried by the worker ------------------

TEST_F(QueueMockTest, ReadySubmissionsShareTheHostFunctionPendingOnTheirQueue) {
  auto s = NewSemaphore();
  // Three ready barriers on queue 0: three event records, one host function (the first's). The
  // pool holds one event, so the second and third are created (and destroyed when given back).
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true, /*launch=*/true);
  ExpectSignalTail(q0_, Event(2), /*create_event=*/true, /*launch=*/false);
  ExpectSignalTail(q0_, Event(3), /*create_event=*/true, /*launch=*/false);
  for (std::uint64_t v = 1; v <= 3; ++v) {
    const SemaphoreValue signal[] = {{s.get(), v}};
    CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, signal));
  }
  EXPECT_EQ(model_.launched(), 1) << "a host function per submission costs ~5 us of host time";
  EXPECT_EQ(device_->queue_scheduler().counts().in_flight, 3u);
  // The host function covers the first operation only (enqueued before the others were
  // numbered): the worker retires it without asking the driver, and enqueues the next host
  // function (on its own thread, covering the third) before it signals S = 1.
  ExpectWorkerLaunch(q0_);
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  const Deadline deadline = Bound();
  while (model_.launched() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t value, s->Query());
  EXPECT_EQ(value, 1u) << "signalled past what the driver completed";
  // The second host function follows the third record: everything completes.
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(3, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
  EXPECT_EQ(model_.destroyed(), 2) << "two events did not fit the pool of one";
  EXPECT_THAT(Dropped(), IsEmpty());
}

TEST_F(QueueMockTest, SubmissionAfterTheHostFunctionRanEnqueuesTheNextOne) {
  auto s = NewSemaphore();
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true);
  const SemaphoreValue s1[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, s1));
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  WaitUntilRetired();
  // The lane is empty and has no host function: the next submission enqueues one.
  ExpectSignalTail(q0_, Event(1), /*create_event=*/false, /*launch=*/true);
  const SemaphoreValue s2[] = {{s.get(), 2}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, s2));
  EXPECT_EQ(model_.launched(), 2);
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(2, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
}

TEST_F(QueueMockTest, WorkerThatCannotEnqueueTheNextHostFunctionPollsTheEventsAndSaysSo) {
  auto s = NewSemaphore();
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true, /*launch=*/true);
  ExpectSignalTail(q0_, Event(2), /*create_event=*/true, /*launch=*/false);
  for (std::uint64_t v = 1; v <= 2; ++v) {
    const SemaphoreValue signal[] = {{s.get(), v}};
    CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, signal));
  }
  // The first host function covers the first barrier; the worker's next one fails: the second
  // barrier's event is polled instead (no host function retried), and the failure reported.
  ExpectFailedWorkerLaunch(q0_);
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  std::this_thread::sleep_for(5ms);  // several polls: the event is not complete yet
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t value, s->Query());
  EXPECT_EQ(value, 1u);
  model_.Complete(q0_);
  CUHAL_EXPECT_OK(s->Wait(2, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
  ExpectOnePollingReport();
  EXPECT_EQ(model_.launched(), 1);
}

// A device error: the stream stops, its host function never runs. Device::Synchronize has the
// worker query what no host function covered; the failed query fails the operation's signals
// (instead of leaving a waiter to its deadline).
TEST_F(QueueMockTest, StickyErrorFailsWhatNoHostFunctionReportedNamingTheQuery) {
  auto s = NewSemaphore();
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true);
  const SemaphoreValue s1[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, s1));
  for (CUstream q : {q0_, q1_}) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamSynchronize(q))
                          .RETURN(CUDA_ERROR_ILLEGAL_ADDRESS));
  }
  const std::thread::id test_thread = std::this_thread::get_id();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventQuery(Event(1)))
                        .WITH(std::this_thread::get_id() != test_thread)  // the worker's
                        .RETURN(CUDA_ERROR_ILLEGAL_ADDRESS));
  const Status synced = device_->Synchronize();
  EXPECT_THAT(synced.message(), HasSubstr("cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS"));
  const Status failed = s->Wait(1, Bound());
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.message(), HasSubstr("queue 0: barrier: waiting for its completion"));
  EXPECT_THAT(failed.message(), HasSubstr("cuEventQuery: CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_EQ(device_->queue_scheduler().counts().in_flight, 0u) << "retired, not left in flight";
  EXPECT_EQ(device_->queue_scheduler().event_pool().outstanding(), 0u);
  // The host function still pending runs at teardown (the model's cuStreamSynchronize).
  script_.clear();
}

TEST_F(QueueMockTest, WaitOnTheHostIsDeferredAndIssuedByTheWorkerOnceSignalled) {
  auto host = NewSemaphore();
  auto s = NewSemaphore();
  const SemaphoreValue h1[] = {{host.get(), 1}};
  const SemaphoreValue s1[] = {{s.get(), 1}};
  // Nothing is called at submission.
  CUHAL_ASSERT_OK(device_->queue(0).Barrier(h1, s1));
  EXPECT_EQ(device_->queue_scheduler().counts().deferred, 1u);
  // Released by the worker (on its thread, in the device's context) once the host signals.
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true);
  CUHAL_ASSERT_OK(host->Signal(1));
  const Deadline deadline = Bound();
  while (model_.pending_host_functions() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
}

// --- Execute ----------------------------------------------------------------------------------

// A pool buffer for Execute tests, allocated by a ready Alloca (pinned) and completed.
// --- the default: the worker enqueues every host function ------------------------------------

class WorkerModeMockTest : public QueueMockTest {
 protected:
  bool WorkerEnqueuesHostFunctions() const override { return true; }
};

TEST_F(WorkerModeMockTest, ReadySubmissionMakesOneDriverCallAndTheWorkerEnqueuesTheHostFunction) {
  auto s = NewSemaphore();
  // The submitting thread: the event (created: the pool is empty) and its record, nothing else.
  // The worker: the host function, on its own thread with no context current.
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true, /*launch=*/false);
  ExpectWorkerLaunch(q0_);
  const SemaphoreValue s1[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, s1));
  WaitForLaunches(1);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t value, s->Query());
  EXPECT_EQ(value, 0u) << "signalled before the host function ran";
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
  EXPECT_THAT(Dropped(), IsEmpty());
}

TEST_F(WorkerModeMockTest, SubmissionsWhileTheWorkersHostFunctionIsPendingMakeOnlyTheirRecords) {
  auto s = NewSemaphore();
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true, /*launch=*/false);
  ExpectWorkerLaunch(q0_);
  const SemaphoreValue s1[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, s1));
  WaitForLaunches(1);
  // The first host function is pending: the next two submissions record their events only.
  ExpectSignalTail(q0_, Event(2), /*create_event=*/true, /*launch=*/false);
  ExpectSignalTail(q0_, Event(3), /*create_event=*/true, /*launch=*/false);
  for (std::uint64_t v = 2; v <= 3; ++v) {
    const SemaphoreValue signal[] = {{s.get(), v}};
    CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, signal));
  }
  EXPECT_EQ(model_.launched(), 1);
  // The first host function covers the first barrier only; the worker enqueues the next one
  // (covering both others) before it signals S = 1.
  ExpectWorkerLaunch(q0_);
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  WaitForLaunches(2);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t value, s->Query());
  EXPECT_EQ(value, 1u) << "signalled past what the driver completed";
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(3, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
  EXPECT_EQ(model_.destroyed(), 2) << "two events did not fit the pool of one";
  EXPECT_THAT(Dropped(), IsEmpty());
}

TEST_F(WorkerModeMockTest, WorkerThatCannotEnqueueTheHostFunctionPollsTheEventAndSaysSo) {
  auto s = NewSemaphore();
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true, /*launch=*/false);
  ExpectFailedWorkerLaunch(q0_);
  const SemaphoreValue s1[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, s1));
  std::this_thread::sleep_for(5ms);  // the failed launch, then several polls: not complete yet
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t value, s->Query());
  EXPECT_EQ(value, 0u);
  model_.Complete(q0_);
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
  ExpectOnePollingReport();
  EXPECT_EQ(model_.launched(), 0);
}

// Queue::Synchronize right after a submission: the host function that reports it is on the
// stream before cuStreamSynchronize, whether the worker enqueued it first or the synchronizing
// thread did (a synchronized stream has run what reports its operations; before, a host function
// the worker enqueued after the synchronization was held back by the fake's adversarial policy
// and the semaphore's host wait ran to its deadline: IreeBugsTest's CI timeout).
TEST_F(WorkerModeMockTest, SynchronizeEnqueuesTheHostFunctionTheWorkerHasNotYet) {
  auto s = NewSemaphore();
  ExpectSignalTail(q0_, Event(1), /*create_event=*/true, /*launch=*/false);
  DriverModel* m = &model_;
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuLaunchHostFunc(q0_, _, _))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(m->Launch(_1, _2, _3))
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamSynchronize(q0_))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(m->Synchronize(_1))
                        .RETURN(CUDA_SUCCESS));
  const SemaphoreValue s1[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, s1));
  CUHAL_ASSERT_OK(device_->queue(0).Synchronize());
  EXPECT_EQ(model_.launched(), 1) << "one host function, from one of the two threads";
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));  // the host function ran inside the synchronization
  WaitUntilRetired();
  ExpectIdleScheduler();
  EXPECT_THAT(Dropped(), IsEmpty());
}

class ExecuteMockTest : public QueueMockTest {
 protected:
  void SetUp() override {
    QueueMockTest::SetUp();
    if (HasFatalFailure()) return;
    made_ = NewSemaphore();
    ExpectPoolAlloc(q0_, kA);
    ExpectSignalTail(q0_, Event(1), /*create_event=*/true);
    ExpectPoolAlloc(q0_, kB);
    ExpectSignalTail(q0_, Event(1), /*create_event=*/false);
    const SemaphoreValue m1[] = {{made_.get(), 1}};
    const SemaphoreValue m2[] = {{made_.get(), 2}};
    auto a = device_->queue(0).Alloca({}, m1, MemoryPoolKind::kDeviceLocal, {}, kBytes);
    ASSERT_TRUE(a.ok()) << a.status();
    model_.RunHostFunctions();
    CUHAL_ASSERT_OK(made_->Wait(1, Bound()));  // its event is back in the pool
    auto b = device_->queue(0).Alloca({}, m2, MemoryPoolKind::kDeviceLocal, {}, kBytes);
    ASSERT_TRUE(b.ok()) << b.status();
    model_.RunHostFunctions();
    CUHAL_ASSERT_OK(made_->Wait(2, Bound()));
    WaitUntilRetired();
    a_ = std::move(a).value();
    b_ = std::move(b).value();
  }
  void TearDown() override {
    // The buffers go back in queue order before the device is destroyed.
    if (a_ || b_) {
      ExpectFreeAsync(q0_, kA);
      ExpectSignalTail(q0_, Event(1), false);
      ExpectFreeAsync(q0_, kB);
      ExpectSignalTail(q0_, Event(1), false);
      const SemaphoreValue m2[] = {{made_.get(), 2}};
      const SemaphoreValue m3[] = {{made_.get(), 3}};
      const SemaphoreValue m4[] = {{made_.get(), 4}};
      CUHAL_EXPECT_OK(device_->queue(0).Dealloca(m2, m3, std::move(a_)));
      model_.RunHostFunctions();
      CUHAL_EXPECT_OK(made_->Wait(3, Bound()));  // reached: the next one waits for nothing
      CUHAL_EXPECT_OK(device_->queue(0).Dealloca(m3, m4, std::move(b_)));
      model_.RunHostFunctions();
      CUHAL_EXPECT_OK(made_->Wait(4, Bound()));
      WaitUntilRetired();
    }
    QueueMockTest::TearDown();
  }

  static constexpr CUdeviceptr kA = 0xA000;
  static constexpr CUdeviceptr kB = 0xB000;
  std::shared_ptr<Semaphore> made_;
  Buffer a_;
  Buffer b_;
};

TEST_F(ExecuteMockTest, ReadyExecuteRunsItsBatchInOrderThenRecordsItsSignal) {
  auto s = NewSemaphore();
  TransferBatch batch;
  const std::uint32_t pattern = 0xC0FFEEu;
  CUHAL_ASSERT_OK(batch.Fill(a_, 0, kBytes, &pattern, sizeof(pattern)));
  CUHAL_ASSERT_OK(batch.Copy(a_, 0, b_, 0, kBytes));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemsetD32Async(kA, pattern, kBytes / 4, q0_))
                        .IN_SEQUENCE(seq_)
                        .WITH(InPrimary())
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemcpyAsync(kB, kA, kBytes, q0_))
                        .IN_SEQUENCE(seq_)
                        .WITH(InPrimary())
                        .RETURN(CUDA_SUCCESS));
  ExpectSignalTail(q0_, Event(1), /*create_event=*/false);
  const SemaphoreValue made[] = {{made_.get(), 2}};
  const SemaphoreValue s1[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Execute(made, s1, std::move(batch)));
  model_.RunHostFunctions();
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  WaitUntilRetired();
  ExpectIdleScheduler();
}

TEST_F(ExecuteMockTest, ExecuteFailingMidwayFailsItsSignalsAndTakesNothing) {
  auto s = NewSemaphore();
  TransferBatch batch;
  const std::uint32_t pattern = 1;
  CUHAL_ASSERT_OK(batch.Fill(a_, 0, kBytes, &pattern, sizeof(pattern)));
  CUHAL_ASSERT_OK(batch.Copy(a_, 0, b_, 0, kBytes));
  CUHAL_ASSERT_OK(batch.Fill(b_, 0, kBytes, &pattern, sizeof(pattern)));  // never reached
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemsetD32Async(kA, 1u, kBytes / 4, q0_))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemcpyAsync(kB, kA, kBytes, q0_))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_ERROR_ILLEGAL_ADDRESS));
  // Nothing after the failure: no event, no record, no host function.
  const SemaphoreValue s1[] = {{s.get(), 1}};
  const Status submitted = device_->queue(0).Execute({}, s1, std::move(batch));
  EXPECT_FALSE(submitted.ok());
  EXPECT_THAT(submitted.message(), HasSubstr("cuMemcpyAsync"));
  EXPECT_THAT(submitted.message(), HasSubstr("queue 0: execute (3 transfer command(s))"));
  const Status failed = s->Wait(1, Bound());
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.message(), HasSubstr("cuMemcpyAsync: CUDA_ERROR_ILLEGAL_ADDRESS"));
  ExpectIdleScheduler();
  EXPECT_EQ(device_->queue_scheduler().event_pool().outstanding(), 0u);
  EXPECT_EQ(model_.pending_host_functions(), 0u);
  // A later operation waiting on the failed semaphore fails too, without any driver call.
  auto t = NewSemaphore();
  const SemaphoreValue t1[] = {{t.get(), 1}};
  CUHAL_EXPECT_OK(device_->queue(1).Barrier(s1, t1));  // the failure travels by the semaphores
  const Status propagated = t->Wait(1, Bound());
  EXPECT_THAT(propagated.message(), HasSubstr("cuMemcpyAsync: CUDA_ERROR_ILLEGAL_ADDRESS"));
  ExpectIdleScheduler();
}

TEST_F(ExecuteMockTest, HostFunctionLaunchFailureWaitsForTheWorkAndGivesTheEventBack) {
  auto s = NewSemaphore();
  TransferBatch batch;
  CUHAL_ASSERT_OK(batch.Copy(a_, 0, b_, 0, kBytes));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemcpyAsync(kB, kA, kBytes, q0_))
                        .IN_SEQUENCE(seq_)
                        .RETURN(CUDA_SUCCESS));
  DriverModel* m = &model_;
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventRecord(Event(1), q0_))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(m->Record(_1, _2))
                        .RETURN(CUDA_SUCCESS));
  ExpectLaunch(q0_, CUDA_ERROR_OUT_OF_MEMORY);
  // Nothing will report the work's completion: the stream is waited for before anything the
  // work uses is released (the one synchronization a queue operation ever makes, on this path).
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamSynchronize(q0_))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(m->Synchronize(_1))
                        .RETURN(CUDA_SUCCESS));
  const SemaphoreValue s1[] = {{s.get(), 1}};
  const Status submitted = device_->queue(0).Execute({}, s1, std::move(batch));
  EXPECT_THAT(submitted.message(), HasSubstr("enqueueing its completion callback"));
  EXPECT_THAT(submitted.message(), HasSubstr("cuLaunchHostFunc"));
  const Status failed = s->Wait(1, Bound());
  EXPECT_THAT(failed.message(), HasSubstr("cuLaunchHostFunc: CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_EQ(device_->queue_scheduler().event_pool().outstanding(), 0u);
  EXPECT_EQ(device_->queue_scheduler().event_pool().pooled(), 1u);
  ExpectIdleScheduler();
}

}  // namespace
}  // namespace cuhal
