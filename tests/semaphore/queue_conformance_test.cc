// Copyright 2026 The cuhal Authors.
// Conformance of timeline semaphores and queue operations (core/semaphore, Queue::Alloca,
// Dealloca, Execute, Barrier) on every backend: the same bodies run against fakecuda ("fake",
// "fake_adversarial") and the installed CUDA driver ("real"). Topics follow IREE's CTS
// (semaphore_test, semaphore_submission_test, queue_alloca_test): semaphore values, timeouts,
// failure propagation, queue-to-queue waits, host-to-device waits, alloca/dealloca ordering and
// multi-wait. No test asserts a wall-clock time: deadlines only bound waits that must end.
// Every case runs twice per backend: "Backends/..." on a default device (a ready operation is
// issued by the submitting thread) and "IssueOnWorker/..." on one with
// DeviceParams::issue_on_worker (the device's worker issues every operation).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "core/device/device.h"
#include "core/driver/context_scope.h"
#include "core/driver/driver.h"
#include "tests/device/test_macros.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Bounds a wait that must end (never a timing assertion).
Deadline Bound() { return DeadlineAfter(60s); }

std::vector<std::byte> Pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 13 + seed) & 0xFF);
  return bytes;
}

class QueueConformanceTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CUHAL_ASSERT_OK_AND_ASSIGN(driver_, Driver::Create(&api()));
    CUHAL_ASSERT_OK_AND_ASSIGN(device_, Device::Create(*driver_, 0, Params()));
  }
  // Which instantiation runs: IssueOnWorker/... sets DeviceParams::issue_on_worker.
  static bool OnWorker() {
    const std::string_view suite =
        ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name();
    return suite.starts_with("IssueOnWorker/");
  }
  static DeviceParams Params() {
    DeviceParams params;
    params.queue_count = 2;
    params.issue_on_worker = OnWorker();
    return params;
  }
  // With issue_on_worker: waits until the worker has taken every operation submitted so far
  // (what the submitting thread does itself otherwise), before a test looks at the scheduler.
  void Settle() { device_->queue_scheduler().WaitForIssued(); }
  void TearDown() override {
    device_.reset();
    driver_.reset();
    BackendTest::TearDown();
  }
  std::shared_ptr<Semaphore> NewSemaphore(std::uint64_t initial = 0) {
    StatusOr<std::shared_ptr<Semaphore>> s = device_->CreateSemaphore(initial);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;
};

// --- semaphore values -----------------------------------------------------------------------

TEST_P(QueueConformanceTest, SemaphoreValuesOnlyGoUp) {
  auto s = NewSemaphore(5);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t v, s->Query());
  EXPECT_EQ(v, 5u);
  CUHAL_EXPECT_OK(s->Signal(6));
  EXPECT_EQ(s->Signal(6).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->Signal(2).code(), StatusCode::kInvalidArgument);
  CUHAL_ASSERT_OK_AND_ASSIGN(v, s->Query());
  EXPECT_EQ(v, 6u);
  EXPECT_THAT(s->name(), HasSubstr("semaphore"));
}

TEST_P(QueueConformanceTest, WaitOnReachedValueReturnsAtOnceAndUnreachedTimesOut) {
  auto s = NewSemaphore(3);
  CUHAL_EXPECT_OK(s->Wait(3, std::chrono::steady_clock::now()));  // a poll
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
  const Status timed_out = s->Wait(4, DeadlineAfter(1ms));
  EXPECT_EQ(timed_out.code(), StatusCode::kDeadlineExceeded) << timed_out;
  EXPECT_THAT(timed_out.message(), HasSubstr("at value 3"));
}

TEST_P(QueueConformanceTest, HostSignalWakesHostWaiter) {
  auto s = NewSemaphore();
  std::thread waiter([&] { CUHAL_EXPECT_OK(s->Wait(2, Bound())); });
  CUHAL_EXPECT_OK(s->Signal(1));
  CUHAL_EXPECT_OK(s->Signal(2));
  waiter.join();
}

TEST_P(QueueConformanceTest, FailReachesEveryWaiterAndStays) {
  auto s = NewSemaphore();
  std::vector<std::thread> waiters;
  std::vector<Status> results(3);
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&, i] { results[i] = s->Wait(10, Bound()); });
  }
  s->Fail(Status(StatusCode::kDataLoss, "the producer broke"));
  for (std::thread& t : waiters) t.join();
  for (const Status& r : results) {
    EXPECT_EQ(r.code(), StatusCode::kDataLoss) << r;
    EXPECT_THAT(r.message(), HasSubstr("the producer broke"));
  }
  EXPECT_EQ(s->Query().status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(s->Signal(1).code(), StatusCode::kDataLoss);
  s->Fail(InternalError("a second failure"));  // the first one wins
  EXPECT_THAT(s->Query().status().message(), HasSubstr("the producer broke"));
}

TEST_P(QueueConformanceTest, WaitAnyAndWaitAllOverOneDeadline) {
  auto a = NewSemaphore();
  auto b = NewSemaphore();
  const SemaphoreValue both[] = {{a.get(), 1}, {b.get(), 1}};
  EXPECT_EQ(Semaphore::WaitAll(both, DeadlineAfter(1ms)).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(Semaphore::WaitAny(both, DeadlineAfter(1ms)).status().code(),
            StatusCode::kDeadlineExceeded);
  std::thread signaller([&] { CUHAL_EXPECT_OK(b->Signal(1)); });
  CUHAL_ASSERT_OK_AND_ASSIGN(std::size_t index, Semaphore::WaitAny(both, Bound()));
  EXPECT_EQ(index, 1u);
  signaller.join();
  CUHAL_EXPECT_OK(a->Signal(1));
  CUHAL_EXPECT_OK(Semaphore::WaitAll(both, Bound()));
  const SemaphoreValue with_null[] = {{nullptr, 1}};
  EXPECT_EQ(Semaphore::WaitAll(with_null, Bound()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Semaphore::WaitAny({}, Bound()).status().code(), StatusCode::kInvalidArgument);
}

// A multi-wait must see every signal, whichever order they land in (IREE's missed signal).
TEST_P(QueueConformanceTest, WaitAllNeverMissesASignal) {
  for (int round = 0; round < 100; ++round) {
    auto a = NewSemaphore();
    auto b = NewSemaphore();
    const SemaphoreValue both[] = {{a.get(), 1}, {b.get(), 1}};
    std::thread signaller([&, round] {
      Semaphore* first = (round % 2 == 0) ? a.get() : b.get();
      Semaphore* second = (round % 2 == 0) ? b.get() : a.get();
      CUHAL_EXPECT_OK(first->Signal(1));
      CUHAL_EXPECT_OK(second->Signal(1));
    });
    CUHAL_EXPECT_OK(Semaphore::WaitAll(both, Bound()));
    signaller.join();
  }
}

TEST_P(QueueConformanceTest, WaitAnyEndsWithAFailure) {
  auto a = NewSemaphore();
  auto b = NewSemaphore();
  b->Fail(AbortedError("b gave up"));
  const SemaphoreValue both[] = {{a.get(), 1}, {b.get(), 1}};
  const StatusOr<std::size_t> any = Semaphore::WaitAny(both, Bound());
  EXPECT_EQ(any.status().code(), StatusCode::kAborted);
}

// --- queue operations -----------------------------------------------------------------------

TEST_P(QueueConformanceTest, BarrierWithoutWaitsSignals) {
  auto s = NewSemaphore();
  const SemaphoreValue signal[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, signal));
  CUHAL_EXPECT_OK(s->Wait(1, Bound()));
}

// Device::Synchronize waits for the streams AND for the worker to retire what completed: right
// after it, every issued operation's signals hold their values (no Wait needed), and nothing is
// in flight. (It once returned after the streams only; the signals came a moment later.)
TEST_P(QueueConformanceTest, DeviceSynchronizeLeavesEverySignalAtItsValue) {
  constexpr std::uint64_t kOperations = 16;  // per queue
  std::shared_ptr<Semaphore> s[2] = {NewSemaphore(), NewSemaphore()};
  for (std::uint64_t v = 1; v <= kOperations; ++v) {
    for (int q = 0; q < 2; ++q) {
      const SemaphoreValue signal[] = {{s[q].get(), v}};
      CUHAL_ASSERT_OK(device_->queue(q).Barrier({}, signal));
    }
  }
  CUHAL_ASSERT_OK(device_->Synchronize());
  for (int q = 0; q < 2; ++q) {
    CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t value, s[q]->Query());
    EXPECT_EQ(value, kOperations) << "queue " << q;
  }
  EXPECT_EQ(device_->queue_scheduler().counts().in_flight, 0u);
}

// Batched completions: operations issued while their queue's completion host function is held
// behind work on the stream share it, or the one the worker enqueues after it (see COMPLETION in
// core/device/queue_scheduler.h); every value is still reached, in order, nothing stays in flight.
TEST_P(QueueConformanceTest, OperationsIssuedBehindAPendingHostFunctionAllComplete) {
  if (!backend().can_hold_work()) {
    GTEST_SKIP() << "the eager fake runs a host function inside the call that enqueues it";
  }
  constexpr std::uint64_t kOperations = 100;
  auto s = NewSemaphore();
  CUHAL_ASSERT_OK_AND_ASSIGN(ContextScope scope, ContextScope::Enter(&api(), device_->context()));
  {
    StreamGate gate;
    ASSERT_EQ(gate.Close(api(), device_->context(), device_->queue(0).stream()), CUDA_SUCCESS);
    for (std::uint64_t v = 1; v <= kOperations; ++v) {
      const SemaphoreValue signal[] = {{s.get(), v}};
      CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, signal));
    }
    Settle();
    CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t held, s->Query());
    EXPECT_EQ(held, 0u) << "signalled before the stream ran";
    EXPECT_EQ(device_->queue_scheduler().counts().in_flight, kOperations);
    gate.Open();
    CUHAL_ASSERT_OK(s->Wait(kOperations / 2, Bound()));
    CUHAL_ASSERT_OK(s->Wait(kOperations, Bound()));
  }
  const Deadline deadline = Bound();
  while (device_->queue_scheduler().counts().in_flight != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(device_->queue_scheduler().counts().in_flight, 0u);
  CUHAL_ASSERT_OK(scope.Exit());
}

// Host-to-device: an operation that waits on a value only the host will signal is deferred and
// cannot run before the host signals.
TEST_P(QueueConformanceTest, HostSignalReleasesDeferredExecute) {
  constexpr std::size_t kSize = 4096;
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device_->allocator().Allocate({}, kSize));
  auto host = NewSemaphore();
  auto done = NewSemaphore();
  const std::vector<std::byte> data = Pattern(kSize, 1);
  std::vector<std::byte> out(kSize);
  TransferBatch batch;
  CUHAL_ASSERT_OK(batch.Write(data, buffer, 0));
  CUHAL_ASSERT_OK(batch.Read(buffer, 0, out));
  const SemaphoreValue wait[] = {{host.get(), 1}};
  const SemaphoreValue signal[] = {{done.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Execute(wait, signal, std::move(batch)));
  EXPECT_EQ(device_->queue_scheduler().counts().deferred, 1u);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t v, done->Query());
  EXPECT_EQ(v, 0u);  // cannot have run: its wait is not reached
  CUHAL_ASSERT_OK(host->Signal(1));
  CUHAL_ASSERT_OK(done->Wait(1, Bound()));
  EXPECT_EQ(out, data);
}

// Queue-to-queue: the consumer on queue 1 is ordered device-side after the producer on queue 0
// (nothing deferred: no host round trip), and sees its data.
TEST_P(QueueConformanceTest, QueueToQueueWaitIsOrderedOnTheDevice) {
  constexpr std::size_t kSize = 64 * 1024;
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a, device_->allocator().Allocate({}, kSize));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, device_->allocator().Allocate({}, kSize));
  auto produced = NewSemaphore();
  auto consumed = NewSemaphore();
  const std::vector<std::byte> data = Pattern(kSize, 2);
  std::vector<std::byte> out(kSize);
  TransferBatch produce;
  CUHAL_ASSERT_OK(produce.Write(data, a, 0));
  TransferBatch consume;
  CUHAL_ASSERT_OK(consume.Copy(a, 0, b, 0, kSize));
  CUHAL_ASSERT_OK(consume.Read(b, 0, out));
  const SemaphoreValue p1[] = {{produced.get(), 1}};
  const SemaphoreValue c1[] = {{consumed.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Execute({}, p1, std::move(produce)));
  CUHAL_ASSERT_OK(device_->queue(1).Execute(p1, c1, std::move(consume)));
  Settle();
  EXPECT_EQ(device_->queue_scheduler().counts().deferred, 0u);
  CUHAL_ASSERT_OK(consumed->Wait(1, Bound()));
  EXPECT_EQ(out, data);
  // The producer's own signal is reported by its host function, which the driver may run after
  // the consumer's (the adversarial schedule does): wait for it, do not assume it.
  CUHAL_EXPECT_OK(produced->Wait(1, Bound()));
}

// A chain submitted consumer-first: each link is deferred until its producer is submitted, then
// ordered device-side.
TEST_P(QueueConformanceTest, ConsumerSubmittedBeforeProducer) {
  auto s = NewSemaphore();
  const SemaphoreValue v1[] = {{s.get(), 1}};
  const SemaphoreValue v2[] = {{s.get(), 2}};
  const SemaphoreValue v3[] = {{s.get(), 3}};
  CUHAL_ASSERT_OK(device_->queue(1).Barrier(v2, v3));
  CUHAL_ASSERT_OK(device_->queue(0).Barrier(v1, v2));
  CUHAL_ASSERT_OK(s->Signal(1));
  CUHAL_EXPECT_OK(s->Wait(3, Bound()));
}

TEST_P(QueueConformanceTest, AllocaExecuteDeallocaInQueueOrder) {
  constexpr std::size_t kSize = 8192;
  auto s = NewSemaphore();
  const SemaphoreValue v1[] = {{s.get(), 1}};
  const SemaphoreValue v2[] = {{s.get(), 2}};
  const SemaphoreValue v3[] = {{s.get(), 3}};
  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer buffer, device_->queue(0).Alloca({}, v1, MemoryPoolKind::kDeviceLocal, {}, kSize));
  EXPECT_NE(buffer.device_ptr(), 0u);  // the handle and its address exist at once
  EXPECT_EQ(buffer.size(), kSize);
  const std::vector<std::byte> data = Pattern(kSize, 3);
  std::vector<std::byte> out(kSize);
  TransferBatch batch;
  CUHAL_ASSERT_OK(batch.Write(data, buffer, 0));
  CUHAL_ASSERT_OK(batch.Read(buffer, 0, out));
  CUHAL_ASSERT_OK(device_->queue(1).Execute(v1, v2, std::move(batch)));
  CUHAL_ASSERT_OK(device_->queue(0).Dealloca(v2, v3, std::move(buffer)));
  CUHAL_ASSERT_OK(s->Wait(3, Bound()));
  EXPECT_EQ(out, data);
  EXPECT_EQ(device_->allocator().live_buffers(), 0u);
  CUHAL_ASSERT_OK(device_->Synchronize());
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics stats, device_->QueryPoolStatistics());
  EXPECT_EQ(stats.device_local.used_current, 0u);
}

TEST_P(QueueConformanceTest, AllocaWaitingOnTheHostSignalsOnlyAfterIt) {
  auto host = NewSemaphore();
  auto ready = NewSemaphore();
  const SemaphoreValue wait[] = {{host.get(), 1}};
  const SemaphoreValue signal[] = {{ready.get(), 1}};
  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer buffer, device_->queue(0).Alloca(wait, signal, MemoryPoolKind::kOther, {}, 1024));
  EXPECT_NE(buffer.device_ptr(), 0u);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t v, ready->Query());
  EXPECT_EQ(v, 0u);
  CUHAL_ASSERT_OK(host->Signal(1));
  CUHAL_ASSERT_OK(ready->Wait(1, Bound()));
  const SemaphoreValue freed[] = {{ready.get(), 2}};
  CUHAL_ASSERT_OK(device_->queue(0).Dealloca(signal, freed, std::move(buffer)));
  CUHAL_ASSERT_OK(ready->Wait(2, Bound()));
}

TEST_P(QueueConformanceTest, DeallocaOfANonPoolBufferFreesAfterItsWaits) {
  auto s = NewSemaphore();
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device_->allocator().Allocate({}, 4096));
  const SemaphoreValue v1[] = {{s.get(), 1}};
  const SemaphoreValue v2[] = {{s.get(), 2}};
  CUHAL_ASSERT_OK(device_->queue(0).Dealloca(v1, v2, std::move(buffer)));
  EXPECT_EQ(device_->allocator().live_buffers(), 1u);  // held until its wait is reached
  CUHAL_ASSERT_OK(s->Signal(1));
  CUHAL_ASSERT_OK(s->Wait(2, Bound()));
  EXPECT_EQ(device_->allocator().live_buffers(), 0u);
}

TEST_P(QueueConformanceTest, MultiWaitOperationWaitsForEveryValue) {
  auto a = NewSemaphore();
  auto b = NewSemaphore();
  auto done = NewSemaphore();
  const SemaphoreValue waits[] = {{a.get(), 1}, {b.get(), 2}};
  const SemaphoreValue signal[] = {{done.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(1).Barrier(waits, signal));
  CUHAL_ASSERT_OK(a->Signal(1));
  EXPECT_EQ(done->Wait(1, DeadlineAfter(1ms)).code(), StatusCode::kDeadlineExceeded);
  CUHAL_ASSERT_OK(b->Signal(1));
  EXPECT_EQ(done->Wait(1, DeadlineAfter(1ms)).code(), StatusCode::kDeadlineExceeded);
  // The second value comes from a queue operation this time.
  const SemaphoreValue b2[] = {{b.get(), 2}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier({}, b2));
  CUHAL_ASSERT_OK(done->Wait(1, Bound()));
}

// --- failure propagation --------------------------------------------------------------------

TEST_P(QueueConformanceTest, FailedWaitFailsTheOperationsSignalsAndTheirDependents) {
  auto upstream = NewSemaphore();
  auto mid = NewSemaphore();
  auto last = NewSemaphore();
  const SemaphoreValue u1[] = {{upstream.get(), 1}};
  const SemaphoreValue m1[] = {{mid.get(), 1}};
  const SemaphoreValue l1[] = {{last.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier(u1, m1));
  CUHAL_ASSERT_OK(device_->queue(1).Barrier(m1, l1));
  upstream->Fail(Status(StatusCode::kDataLoss, "upstream producer failed"));
  const Status waited = last->Wait(1, Bound());
  EXPECT_EQ(waited.code(), StatusCode::kDataLoss) << waited;
  EXPECT_THAT(waited.message(), HasSubstr("upstream producer failed"));
  EXPECT_TRUE(mid->failed());
  // An operation submitted on a failed semaphore fails at once.
  auto after = NewSemaphore();
  const SemaphoreValue a1[] = {{after.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier(l1, a1));
  Settle();  // on the worker, "at once" is when the worker takes it
  EXPECT_TRUE(after->failed());
}

// A failure after a device-side wait was enqueued still reaches the consumer.
TEST_P(QueueConformanceTest, FailureReachesAConsumerOrderedOnTheDevice) {
  auto s = NewSemaphore();
  auto t = NewSemaphore();
  const SemaphoreValue s1[] = {{s.get(), 1}};
  const SemaphoreValue t1[] = {{t.get(), 1}};
  auto gate = NewSemaphore();
  const SemaphoreValue g1[] = {{gate.get(), 1}};
  // Producer deferred behind the host gate; consumer deferred behind the producer.
  CUHAL_ASSERT_OK(device_->queue(0).Barrier(g1, s1));
  CUHAL_ASSERT_OK(device_->queue(1).Barrier(s1, t1));
  gate->Fail(AbortedError("gate failed"));
  EXPECT_EQ(t->Wait(1, Bound()).code(), StatusCode::kAborted);
}

TEST_P(QueueConformanceTest, NullSemaphoreIsInvalidArgument) {
  const SemaphoreValue bad[] = {{nullptr, 1}};
  EXPECT_EQ(device_->queue(0).Barrier(bad, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->queue(0).Barrier({}, bad).code(), StatusCode::kInvalidArgument);
}

// --- teardown -------------------------------------------------------------------------------

TEST_P(QueueConformanceTest, DestroyingTheDeviceFailsDeferredOperations) {
  auto never = NewSemaphore();
  auto s = NewSemaphore();
  const SemaphoreValue wait[] = {{never.get(), 1}};
  const SemaphoreValue signal[] = {{s.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Barrier(wait, signal));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device_->allocator().Allocate({}, 4096));
  CUHAL_ASSERT_OK(device_->queue(1).Dealloca(wait, {}, std::move(buffer)));
  device_.reset();  // fails the deferred operations, frees the held buffer, joins the worker
  const Status status = s->Wait(1, Bound());
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status;
  EXPECT_THAT(status.message(), HasSubstr("was destroyed"));
  CUHAL_EXPECT_OK(never->Signal(1));  // the semaphores outlive the device, host-only
}

TEST_P(QueueConformanceTest, OperationsWithNothingToSignalAreCleanedUp) {
  for (int i = 0; i < 8; ++i) CUHAL_ASSERT_OK(device_->queue(i % 2).Barrier({}, {}));
  TransferBatch empty;
  CUHAL_ASSERT_OK(device_->queue(0).Execute({}, {}, std::move(empty)));
  CUHAL_ASSERT_OK(device_->Synchronize());
  device_.reset();  // joins the worker: would hang if they were never retired
}

TEST_P(QueueConformanceTest, HalEventCreateDestroy) {
  CUHAL_ASSERT_OK_AND_ASSIGN(Event event, device_->CreateEvent());
  EXPECT_TRUE(event);
  EXPECT_NE(event.handle(), nullptr);
  CUHAL_EXPECT_OK(event.Reset());
  EXPECT_FALSE(event);
}

// --- driver failures (fake only: fault injection) -------------------------------------------

TEST_P(QueueConformanceTest, FailedDriverCallFailsTheSignalsNamingTheCall) {
  if (!IsFake()) GTEST_SKIP() << "fault injection is a fake feature";
  constexpr std::size_t kSize = 4096;
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device_->allocator().Allocate({}, kSize));
  auto host = NewSemaphore();
  auto done = NewSemaphore();
  std::vector<std::byte> out(kSize);
  TransferBatch batch;
  CUHAL_ASSERT_OK(batch.Read(buffer, 0, out));
  const SemaphoreValue wait[] = {{host.get(), 1}};
  const SemaphoreValue signal[] = {{done.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Execute(wait, signal, std::move(batch)));
  fake().faults().AddRule({.entry = "cuMemcpyDtoHAsync", .mode = fakecuda::FaultMode::kNth,
                           .n = 1, .error = CUDA_ERROR_LAUNCH_FAILED});
  CUHAL_ASSERT_OK(host->Signal(1));  // the worker issues it; the copy fails
  const Status status = done->Wait(1, Bound());
  EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status;  // CUDA_ERROR_LAUNCH_FAILED
  EXPECT_THAT(status.message(), HasSubstr("cuMemcpyDtoHAsync"));
  EXPECT_THAT(status.message(), HasSubstr("queue 0: execute"));
  fake().faults().ClearRules();
}

TEST_P(QueueConformanceTest, FailedAllocaIsReturnedAtOnce) {
  if (!IsFake()) GTEST_SKIP() << "fault injection is a fake feature";
  if (OnWorker()) GTEST_SKIP() << "the worker makes the allocation: FailedAllocaOnTheWorker";
  auto s = NewSemaphore();
  const SemaphoreValue signal[] = {{s.get(), 1}};
  fake().faults().AddRule({.entry = "cuMemAllocFromPoolAsync", .mode = fakecuda::FaultMode::kNth,
                           .n = 1, .error = CUDA_ERROR_OUT_OF_MEMORY});
  StatusOr<Buffer> buffer =
      device_->queue(0).Alloca({}, signal, MemoryPoolKind::kDeviceLocal, {}, 4096);
  EXPECT_EQ(buffer.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(buffer.status().message(), HasSubstr("cuMemAllocFromPoolAsync"));
  EXPECT_TRUE(s->failed());
  fake().faults().ClearRules();
}

// Polling mode (DeviceParams::completion_poll_interval): the device learns of completions by
// querying events, and never enqueues a host function; everything completes as in the default
// mode, deferred work included.
std::atomic<int> g_host_launches{0};
decltype(CudaApi::cuLaunchHostFunc) g_launch_host_func = nullptr;
CUresult CUDAAPI CountingLaunchHostFunc(CUstream stream, CUhostFn fn, void* user_data) {
  g_host_launches.fetch_add(1);
  return g_launch_host_func(stream, fn, user_data);
}

TEST_P(QueueConformanceTest, PollingModeCompletesEverythingWithoutHostFunctions) {
  device_.reset();
  driver_.reset();
  static CudaApi counting;  // the driver borrows its table
  counting = api();
  g_launch_host_func = counting.cuLaunchHostFunc;
  counting.cuLaunchHostFunc = &CountingLaunchHostFunc;
  g_host_launches = 0;
  CUHAL_ASSERT_OK_AND_ASSIGN(driver_, Driver::Create(&counting));
  DeviceParams params = Params();
  params.completion_poll_interval = 50us;
  CUHAL_ASSERT_OK_AND_ASSIGN(device_, Device::Create(*driver_, 0, params));

  constexpr std::size_t kSize = 8192;
  constexpr int kRounds = 20;
  auto s = NewSemaphore();
  auto host = NewSemaphore();
  const std::vector<std::byte> data = Pattern(kSize, 5);
  std::vector<std::vector<std::byte>> outs(kRounds, std::vector<std::byte>(kSize));
  for (int i = 0; i < kRounds; ++i) {
    const std::uint64_t base = 3 * static_cast<std::uint64_t>(i);
    const SemaphoreValue wait_alloca[] = {{s.get(), base}};
    const SemaphoreValue v1[] = {{s.get(), base + 1}};
    const SemaphoreValue v2[] = {{s.get(), base + 2}};
    const SemaphoreValue v3[] = {{s.get(), base + 3}};
    // Round 0's alloca waits for the host (deferred); the others for the previous round.
    const SemaphoreValue host1[] = {{host.get(), 1}};
    const std::span<const SemaphoreValue> waits =
        i == 0 ? std::span<const SemaphoreValue>(host1)
               : std::span<const SemaphoreValue>(wait_alloca);
    CUHAL_ASSERT_OK_AND_ASSIGN(
        Buffer buffer,
        device_->queue(i % 2).Alloca(waits, v1, MemoryPoolKind::kDeviceLocal, {}, kSize));
    TransferBatch batch;
    CUHAL_ASSERT_OK(batch.Write(data, buffer, 0));
    CUHAL_ASSERT_OK(batch.Read(buffer, 0, outs[static_cast<std::size_t>(i)]));
    CUHAL_ASSERT_OK(device_->queue((i + 1) % 2).Execute(v1, v2, std::move(batch)));
    CUHAL_ASSERT_OK(device_->queue(i % 2).Dealloca(v2, v3, std::move(buffer)));
  }
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t before, s->Query());
  EXPECT_EQ(before, 0u) << "everything waits for the host's signal";
  CUHAL_ASSERT_OK(host->Signal(1));
  CUHAL_ASSERT_OK(s->Wait(3 * kRounds, Bound()));
  for (const std::vector<std::byte>& out : outs) EXPECT_EQ(out, data);
  CUHAL_ASSERT_OK(device_->Synchronize());
  EXPECT_EQ(device_->allocator().live_buffers(), 0u);
  EXPECT_EQ(device_->queue_scheduler().counts().in_flight, 0u);
  EXPECT_EQ(device_->queue_scheduler().counts().deferred, 0u);
  EXPECT_EQ(g_host_launches.load(), 0) << "polling mode enqueues no host function";
  device_.reset();
  driver_.reset();
}

// --- issue on the worker (DeviceParams::issue_on_worker) -------------------------------------

// The buffer of a worker-made Alloca exists at once; its address arrives when the worker made
// the allocation (device_ptr() waits for that), and the memory is usable in queue order.
TEST_P(QueueConformanceTest, AllocaBufferGetsItsAddressFromTheWorker) {
  constexpr std::size_t kSize = 4096;
  auto host = NewSemaphore();
  auto s = NewSemaphore();
  const SemaphoreValue h1[] = {{host.get(), 1}};
  const SemaphoreValue v1[] = {{s.get(), 1}};
  const SemaphoreValue v2[] = {{s.get(), 2}};
  const SemaphoreValue v3[] = {{s.get(), 3}};
  // Deferred behind the host: the allocation is still made at once (by the worker when on it).
  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer buffer, device_->queue(0).Alloca(h1, v1, MemoryPoolKind::kDeviceLocal, {}, kSize));
  EXPECT_TRUE(buffer);
  EXPECT_EQ(buffer.size(), kSize);
  EXPECT_NE(buffer.device_ptr(), 0u);
  CUHAL_EXPECT_OK(buffer.allocation_status());
  CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t v, s->Query());
  EXPECT_EQ(v, 0u) << "signalled before the host's signal";
  const std::vector<std::byte> data = Pattern(kSize, 7);
  std::vector<std::byte> out(kSize);
  TransferBatch batch;
  CUHAL_ASSERT_OK(batch.Write(data, buffer, 0));
  CUHAL_ASSERT_OK(batch.Read(buffer, 0, out));
  CUHAL_ASSERT_OK(device_->queue(1).Execute(v1, v2, std::move(batch)));
  CUHAL_ASSERT_OK(device_->queue(0).Dealloca(v2, v3, std::move(buffer)));
  CUHAL_ASSERT_OK(host->Signal(1));
  CUHAL_ASSERT_OK(s->Wait(3, Bound()));
  EXPECT_EQ(out, data);
  CUHAL_ASSERT_OK(device_->Synchronize());
  EXPECT_EQ(device_->allocator().live_buffers(), 0u);
}

// A buffer destroyed right after its Alloca was submitted (the worker may not have made it yet)
// frees what the worker makes: nothing leaks, whichever comes first.
TEST_P(QueueConformanceTest, AllocaBufferDestroyedAtOnceLeaksNothing) {
  auto s = NewSemaphore();
  for (std::uint64_t i = 1; i <= 32; ++i) {
    const SemaphoreValue signal[] = {{s.get(), i}};
    CUHAL_ASSERT_OK_AND_ASSIGN(
        Buffer buffer,
        device_->queue(i % 2).Alloca({}, signal, MemoryPoolKind::kDeviceLocal, {}, 256 * i));
    CUHAL_ASSERT_OK(s->Wait(i, Bound()));  // its work completed: safe to free on the host
  }
  CUHAL_ASSERT_OK(device_->Synchronize());
  EXPECT_EQ(device_->allocator().live_buffers(), 0u);
}

// Queue::Synchronize covers what was submitted before it, also when the worker issues it: the
// stream has the operation's work on it, so its signal is reached once the worker retires it.
TEST_P(QueueConformanceTest, QueueSynchronizeCoversWhatWasSubmittedBefore) {
  constexpr std::size_t kSize = 16 * 1024;
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device_->allocator().Allocate({}, kSize));
  std::vector<std::byte> out(kSize);
  const std::vector<std::byte> data = Pattern(kSize, 9);
  for (int round = 0; round < 8; ++round) {
    TransferBatch batch;
    CUHAL_ASSERT_OK(batch.Write(data, buffer, 0));
    CUHAL_ASSERT_OK(batch.Read(buffer, 0, out));
    std::fill(out.begin(), out.end(), std::byte{0});
    CUHAL_ASSERT_OK(device_->queue(0).Execute({}, {}, std::move(batch)));
    CUHAL_ASSERT_OK(device_->queue(0).Synchronize());
    ASSERT_EQ(out, data) << "round " << round;
  }
}

// With the worker issuing, a failing allocation reaches the signals and the buffer (the caller
// got its handle before the worker tried); refused arguments are still returned at once.
TEST_P(QueueConformanceTest, FailedAllocaOnTheWorker) {
  if (!IsFake()) GTEST_SKIP() << "fault injection is a fake feature";
  if (!OnWorker()) GTEST_SKIP() << "the submitting thread allocates: FailedAllocaIsReturnedAtOnce";
  EXPECT_EQ(device_->queue(0).Alloca({}, {}, MemoryPoolKind::kDeviceLocal, {}, 0).status().code(),
            StatusCode::kInvalidArgument);
  auto s = NewSemaphore();
  const SemaphoreValue signal[] = {{s.get(), 1}};
  fake().faults().AddRule({.entry = "cuMemAllocFromPoolAsync", .mode = fakecuda::FaultMode::kNth,
                           .n = 1, .error = CUDA_ERROR_OUT_OF_MEMORY});
  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer buffer, device_->queue(0).Alloca({}, signal, MemoryPoolKind::kDeviceLocal, {}, 4096));
  const Status made = buffer.allocation_status();
  EXPECT_EQ(made.code(), StatusCode::kResourceExhausted) << made;
  EXPECT_THAT(made.message(), HasSubstr("cuMemAllocFromPoolAsync"));
  EXPECT_EQ(buffer.device_ptr(), 0u);
  const Status signalled = s->Wait(1, Bound());
  EXPECT_EQ(signalled.code(), StatusCode::kResourceExhausted) << signalled;
  // Deallocating it fails its own signals, naming the failed allocation; nothing is freed twice.
  auto d = NewSemaphore();
  const SemaphoreValue freed[] = {{d.get(), 1}};
  CUHAL_ASSERT_OK(device_->queue(0).Dealloca({}, freed, std::move(buffer)));
  const Status dealloca = d->Wait(1, Bound());
  EXPECT_EQ(dealloca.code(), StatusCode::kFailedPrecondition) << dealloca;
  EXPECT_THAT(dealloca.message(), HasSubstr("allocation failed"));
  fake().faults().ClearRules();
  CUHAL_ASSERT_OK(device_->Synchronize());
  EXPECT_EQ(device_->allocator().live_buffers(), 0u);
}

// An Alloca whose wait fails before the worker looked at it: its buffer learns it (no endless
// wait in device_ptr()), and a device destroyed with dispatched work still pending ends cleanly.
TEST_P(QueueConformanceTest, AllocaBehindAFailedWaitTellsItsBuffer) {
  auto upstream = NewSemaphore();
  upstream->Fail(Status(StatusCode::kDataLoss, "upstream is gone"));
  auto s = NewSemaphore();
  const SemaphoreValue wait[] = {{upstream.get(), 1}};
  const SemaphoreValue signal[] = {{s.get(), 1}};
  StatusOr<Buffer> buffer =
      device_->queue(0).Alloca(wait, signal, MemoryPoolKind::kDeviceLocal, {}, 64);
  EXPECT_EQ(s->Wait(1, Bound()).code(), StatusCode::kDataLoss);
  if (OnWorker()) {
    // The handle came first; the failure reaches it.
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    const Status made = buffer->allocation_status();
    EXPECT_EQ(made.code(), StatusCode::kDataLoss) << made;
    EXPECT_THAT(made.message(), HasSubstr("upstream is gone"));
    EXPECT_EQ(buffer->device_ptr(), 0u);
    CUHAL_EXPECT_OK(buffer->Reset());
  } else {
    EXPECT_EQ(buffer.status().code(), StatusCode::kDataLoss) << buffer.status();
  }
  for (int i = 0; i < 16; ++i) CUHAL_ASSERT_OK(device_->queue(i % 2).Barrier({}, {}));
  device_.reset();  // the worker issues what was dispatched, then exits
}

CUHAL_INSTANTIATE_BACKEND_TEST(QueueConformanceTest);
INSTANTIATE_TEST_SUITE_P(IssueOnWorker, QueueConformanceTest,
                         ::testing::ValuesIn(::cuhal::testing::CompiledBackends()),
                         ::cuhal::testing::BackendParamName);

}  // namespace
}  // namespace cuhal::testing
