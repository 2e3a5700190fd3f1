// Copyright 2026 The cuhal Authors.
// Queue operations and timeline semaphores (issue 20): the host cost of submitting a READY queue
// operation (Alloca, Dealloca, Execute of a small fill + copy batch, Barrier), semaphore
// signal-to-wake latency (host to host, queue to host), a queue-to-queue wait, and a two-queue
// pipeline's throughput; on fakecuda and on the real driver when one loads.
//
//   build/release/bench/queue_bench                                  # both backends
//   build/release/bench/queue_bench --benchmark_filter=/fake --benchmark_min_time=0.05
//   build/release/bench/queue_bench --benchmark_filter=/real         # on a GPU machine
//
// The host cost of a submission is the CPU column (the submitting thread's CPU time per
// operation); Time is wall time. Each name carries /fake or /real and no other "real" (no
// UseRealTime, whose /real_time suffix would make ci/nightly_report.py and
// --benchmark_filter=/real take a fake benchmark for a real one), so wall-time rates are
// computed here as counters (wake_us, items_per_s, ops_per_s).
//
// Every benchmark opens its own Device (device 0, two queues) over a COUNTING copy of the
// backend's table: each entry forwards to the backend and counts its calls (a relaxed atomic
// increment per call, a few ns). The counters report the driver calls made per operation while
// the clock ran, on every thread (the submitting thread and the device's worker); "per
// operation" except in BM_QueueToQueueWait, where they are per A + B pair:
//   calls        all driver calls per operation
//   host_syncs   cuStreamSynchronize + cuEventSynchronize + cuCtxSynchronize per operation: a
//                blocking host round trip to the device (0 expected)
//   queries      cuEventQuery + cuStreamQuery per operation: non-blocking completion checks (the
//                device's worker queries each operation's event once a host function says its
//                queue progressed; about 1 expected, none on the submitting thread)
//   <entry>      per-operation count of every entry that was called (cuEventRecord,
//                cuStreamWaitEvent, cuLaunchHostFunc, cuMemAllocFromPoolAsync, ...)
//   vcsw, ivcsw  voluntary / involuntary context switches of the submitting thread per operation
//                (getrusage(RUSAGE_THREAD)): a voluntary one is a sleep in the kernel, on a
//                contended lock (ours or the C library's) or in a driver call
//   sys_ns       the submitting thread's kernel-mode CPU time per operation (part of CPU)
//   deferred     (queue-to-queue and pipeline only) how often, sampled after a submission, the
//                scheduler held a deferred operation (one waiting for the host or the worker),
//                per operation; the sample (a lock of the scheduler) is inside the clock
// The submitting thread has the device's context current (as a runtime's submission thread
// usually does), so the core pushes no context. Targets (issue 20, on the H200): a ready
// submission <= 2 us of host time; a queue-to-queue wait makes no host round trip
// (BM_QueueToQueueWait: host_syncs=0, cuStreamWaitEvent=1, deferred=0).
//
// The submission benchmarks run five times: worker:1/poll_us:0 is the default device
// (DeviceParams::worker_enqueues_host_functions: the device's worker enqueues the completion
// host functions), worker:0 has the submitting thread enqueue one whenever its queue has none
// pending, worker:1/poll_us:20 is the polling mode (DeviceParams::completion_poll_interval: no
// host function at all; the worker queries the events every 20 us). on_worker:1 is
// DeviceParams::issue_on_worker: the submitting thread hands each operation to the worker, which
// makes every driver call (the per-operation counters count them on every thread; the CPU column
// is the submitting thread's alone). BM_DriverEventRecord and
// BM_DriverLaunchHostFunc time the two driver calls alone (no core code); BM_DriverAllocaFloor,
// BM_DriverDeallocaFloor and BM_DriverExecuteFloor make exactly the driver calls a ready Alloca /
// Dealloca / Execute makes on its thread (the work's calls and the completion event's record),
// the floor under each: a submission's cost minus its floor is the core's own.
//
// Submission benchmarks keep up to kBatch operations in flight: every kBatch iterations the clock
// stops, the host waits for the batch's signals (and frees what it allocated), and the clock
// starts again. The device's event pool holds kEventPoolCapacity >= kBatch events, so the steady
// state creates no event.
#include <sys/resource.h>
#include <time.h>

#include <benchmark/benchmark.h>
#include <cuda.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/bench_backend.h"
#include "core/device/device.h"
#include "core/device/queue.h"
#include "core/device/queue_scheduler.h"
#include "core/device/transfer_batch.h"
#include "core/driver/driver.h"
#include "core/semaphore/semaphore.h"
#include "core/symbols/cuda_api.h"

namespace {

using ::cuhal::Buffer;
using ::cuhal::CudaApi;
using ::cuhal::Device;
using ::cuhal::Driver;
using ::cuhal::MemoryHeap;
using ::cuhal::MemoryPoolKind;
using ::cuhal::Queue;
using ::cuhal::Semaphore;
using ::cuhal::SemaphoreValue;
using ::cuhal::Status;
using ::cuhal::TransferBatch;
using ::cuhal::bench::Backend;

constexpr int kBatch = 64;                     // operations in flight before the host waits
constexpr std::size_t kEventPoolCapacity = 256;  // >= kBatch * events per operation
constexpr std::size_t kSmallBytes = 4096;       // an Alloca's size, a fill's and a copy's length

// --- the counting table ----------------------------------------------------------------------

enum Entry : int {
#define CUHAL_CU_PFN(kind, name, arity) kEntry_##name,
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
  kEntryCount
};

constexpr std::array<const char*, kEntryCount> kEntryNames = {
#define CUHAL_CU_PFN(kind, name, arity) #name,
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
};

using Counts = std::array<std::uint64_t, kEntryCount>;

// One counter per entry, on its own cache line (the worker and the submitting thread both count).
struct alignas(64) PaddedCounter {
  std::atomic<std::uint64_t> value{0};
};

// The counting table of backend B (0 fake, 1 real): process-lifetime statics, set up once by
// CountingTable<B>() before any call goes through it.
template <int B>
struct Counting {
  static inline const CudaApi* inner = nullptr;
  static inline std::array<PaddedCounter, kEntryCount> counters{};
  static Counts Snapshot() {
    Counts out{};
    for (int i = 0; i < kEntryCount; ++i) {
      out[i] = counters[i].value.load(std::memory_order_relaxed);
    }
    return out;
  }
};

template <int B, int Index, auto Member>
struct Wrap;
template <int B, int Index, typename R, typename... A, R (*CudaApi::*Member)(A...)>
struct Wrap<B, Index, Member> {
  static R Call(A... args) {
    Counting<B>::counters[Index].value.fetch_add(1, std::memory_order_relaxed);
    return (Counting<B>::inner->*Member)(args...);
  }
};

template <int B>
const CudaApi* CountingTable(const CudaApi* inner) {
  static const CudaApi table = [inner] {
    Counting<B>::inner = inner;
    CudaApi t{};
#define CUHAL_CU_PFN(kind, name, arity) \
  if (inner->name != nullptr) t.name = &Wrap<B, kEntry_##name, &CudaApi::name>::Call;
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
    return t;
  }();
  return &table;
}

// --- one device per benchmark ----------------------------------------------------------------

struct BackendKind {
  const char* name;
  const Backend& (*backend)();
  const CudaApi* (*counting)(const CudaApi*);
  Counts (*snapshot)();
};

const Backend& Fake() { return ::cuhal::bench::FakeBackend(); }
const Backend& Real() { return ::cuhal::bench::RealBackend(); }
const BackendKind kFake{"fake", &Fake, &CountingTable<0>, &Counting<0>::Snapshot};
const BackendKind kReal{"real", &Real, &CountingTable<1>, &Counting<1>::Snapshot};

// A Driver and Device 0 (two queues, kEventPoolCapacity events) over the counting table, the
// device's context current on the benchmark thread, and the per-operation counters.
class Fixture {
 public:
  // `worker_enqueues`: DeviceParams::worker_enqueues_host_functions; `poll_us`:
  // DeviceParams::completion_poll_interval in microseconds.
  Fixture(benchmark::State& state, const BackendKind& kind, bool worker_enqueues = true,
          std::int64_t poll_us = 0, bool issue_on_worker = false)
      : state_(state), kind_(kind) {
    const Backend& b = kind.backend();
    if (!b.unavailable.empty()) {
      state.SkipWithError(b.unavailable.c_str());
      return;
    }
    api_ = kind.counting(b.api);
    auto driver = Driver::Create(api_);
    if (!Check(driver.status(), "creating the driver")) return;
    driver_ = std::move(driver).value();
    ::cuhal::DeviceParams params;
    params.queue_count = 2;
    params.event_pool_capacity = kEventPoolCapacity;
    params.worker_enqueues_host_functions = worker_enqueues;
    params.completion_poll_interval = std::chrono::microseconds(poll_us);
    params.issue_on_worker = issue_on_worker;
    auto device = Device::Create(*driver_, 0, params);
    if (!Check(device.status(), "creating device 0")) return;
    device_ = std::move(device).value();
    if (device_->pools() == nullptr) {
      state.SkipWithError("device 0 has no memory pools (queue-ordered allocation needs them)");
      return;
    }
    if (api_->cuCtxSetCurrent(device_->context()) != CUDA_SUCCESS) {
      state.SkipWithError("cuCtxSetCurrent failed");
      return;
    }
    ok_ = true;
    WarmUp();
  }
  ~Fixture() {
    if (device_ != nullptr) {
      Status synced = device_->Synchronize();
      if (!synced.ok()) std::fprintf(stderr, "queue_bench: %s\n", synced.ToString().c_str());
    }
    buffers_.clear();
    device_.reset();
    driver_.reset();
    if (api_ != nullptr) api_->cuCtxSetCurrent(nullptr);
  }
  Fixture(const Fixture&) = delete;             // owns a device
  Fixture& operator=(const Fixture&) = delete;  // ditto

  bool ok() const { return ok_; }
  Device& device() { return *device_; }
  Queue& queue(int i) { return device_->queue(i); }
  const CudaApi& api() const { return *api_; }

  // Skips the benchmark with `status` (prefixed by `what`) unless it is OK.
  bool Check(const Status& status, const char* what) {
    if (status.ok()) return true;
    const std::string message = std::string(what) + ": " + status.ToString();
    state_.SkipWithError(message.c_str());
    ok_ = false;
    return false;
  }

  std::shared_ptr<Semaphore> NewSemaphore() {
    auto s = device_->CreateSemaphore(0);
    if (!Check(s.status(), "creating a semaphore")) return nullptr;
    return std::move(s).value();
  }

  // A device-local pool buffer of `bytes`, allocated directly (not queue-ordered).
  Buffer* NewBuffer(std::size_t bytes) {
    auto b = device_->allocator().Allocate(
        {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal}, bytes);
    if (!Check(b.status(), "allocating a buffer")) return nullptr;
    buffers_.push_back(std::make_unique<Buffer>(std::move(b).value()));
    return buffers_.back().get();
  }

  // One signalling Barrier on each queue, waited for: the event pool's first Acquire creates its
  // kEventPoolCapacity events here, not in the measured loop.
  void WarmUp() {
    std::shared_ptr<Semaphore> warm = NewSemaphore();
    if (warm == nullptr) return;
    for (int i = 0; i < device_->queue_count(); ++i) {
      const SemaphoreValue signal[] = {{warm.get(), static_cast<std::uint64_t>(i + 1)}};
      if (!Check(queue(i).Barrier({}, signal), "warming up")) return;
      if (!Check(warm->Wait(static_cast<std::uint64_t>(i + 1),
                            ::cuhal::DeadlineAfter(std::chrono::seconds(60))),
                 "warming up")) {
        return;
      }
    }
  }

  // Counting is on while the clock runs: Start at each ResumeTiming, Stop at each PauseTiming.
  // Wall time is accumulated over the same regions (wall_seconds()).
  void StartCounting() {
    started_ = kind_.snapshot();
    getrusage(RUSAGE_THREAD, &usage_started_);
    wall_started_ = std::chrono::steady_clock::now();
  }
  void StopCounting() {
    wall_ += std::chrono::steady_clock::now() - wall_started_;
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    vcsw_ += static_cast<std::uint64_t>(usage.ru_nvcsw - usage_started_.ru_nvcsw);
    ivcsw_ += static_cast<std::uint64_t>(usage.ru_nivcsw - usage_started_.ru_nivcsw);
    sys_ns_ += (usage.ru_stime.tv_sec - usage_started_.ru_stime.tv_sec) * 1'000'000'000LL +
               (usage.ru_stime.tv_usec - usage_started_.ru_stime.tv_usec) * 1'000LL;
    const Counts now = kind_.snapshot();
    for (int i = 0; i < kEntryCount; ++i) counted_[i] += now[i] - started_[i];
  }
  [[nodiscard]] double wall_seconds() const {
    return std::chrono::duration<double>(wall_).count();
  }
  // Records whether the scheduler has deferred operations right now (after a submission).
  void SampleDeferred() {
    if (device_->queue_scheduler().counts().deferred != 0) ++deferred_seen_;
  }
  // Reports the counters per operation (`ops_per_iteration` queue operations per iteration).
  void Report(int ops_per_iteration = 1) {
    const double ops = static_cast<double>(state_.iterations()) * ops_per_iteration;
    if (ops == 0) return;
    std::uint64_t total = 0;
    for (int i = 0; i < kEntryCount; ++i) {
      total += counted_[i];
      if (counted_[i] != 0) {
        state_.counters[kEntryNames[i]] = static_cast<double>(counted_[i]) / ops;
      }
    }
    const std::uint64_t syncs = counted_[kEntry_cuStreamSynchronize] +
                                counted_[kEntry_cuEventSynchronize] +
                                counted_[kEntry_cuCtxSynchronize];
    const std::uint64_t queries = counted_[kEntry_cuEventQuery] + counted_[kEntry_cuStreamQuery];
    state_.counters["calls"] = static_cast<double>(total) / ops;
    state_.counters["host_syncs"] = static_cast<double>(syncs) / ops;
    state_.counters["queries"] = static_cast<double>(queries) / ops;
    state_.counters["deferred"] = static_cast<double>(deferred_seen_) / ops;
    state_.counters["vcsw"] = static_cast<double>(vcsw_) / ops;
    state_.counters["ivcsw"] = static_cast<double>(ivcsw_) / ops;
    state_.counters["sys_ns"] = static_cast<double>(sys_ns_) / ops;
  }

 private:
  benchmark::State& state_;
  const BackendKind& kind_;
  const CudaApi* api_ = nullptr;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  Counts started_{};
  Counts counted_{};
  std::chrono::steady_clock::time_point wall_started_;
  std::chrono::steady_clock::duration wall_{};
  std::uint64_t deferred_seen_ = 0;
  rusage usage_started_{};
  std::uint64_t vcsw_ = 0, ivcsw_ = 0;
  long long sys_ns_ = 0;
  bool ok_ = false;
};

// Runs `submit(value)` once per iteration with value 1, 2, ...; every kBatch iterations stops the
// clock and calls `drain(value)` (wait for the batch, release what it holds).
// CPU time of the whole process (every thread: the submitting one, the device's worker, the
// driver's own) in nanoseconds.
double ProcessCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// Also reports all_cpu_ns: the process's CPU time per iteration over the whole loop, drains
// included (an upper bound on what one operation costs the host on every thread together, since
// the drains also wait and prepare the next batch). With DeviceParams::issue_on_worker the CPU
// column is the submitting thread's share only; all_cpu_ns is the total.
template <typename Submit, typename Drain>
void BatchedLoop(benchmark::State& state, Fixture& f, Submit submit, Drain drain) {
  std::uint64_t value = 0;
  int in_batch = 0;
  const double cpu_started = ProcessCpuNs();
  f.StartCounting();
  for (auto _ : state) {
    ++value;
    if (!submit(value)) break;
    if (++in_batch == kBatch) {
      state.PauseTiming();
      // With issue_on_worker the batch's driver calls are the worker's: counted once it made them.
      f.device().queue_scheduler().WaitForIssued();
      f.StopCounting();
      if (!drain(value)) break;
      in_batch = 0;
      f.StartCounting();
      state.ResumeTiming();
    }
  }
  if (f.ok()) f.device().queue_scheduler().WaitForIssued();
  f.StopCounting();
  if (f.ok()) drain(value);
  if (state.iterations() != 0) {
    state.counters["all_cpu_ns"] =
        (ProcessCpuNs() - cpu_started) / static_cast<double>(state.iterations());
  }
}

cuhal::Deadline Bound() { return cuhal::DeadlineAfter(std::chrono::seconds(60)); }

// --- submission of ready operations -----------------------------------------------------------

// Queue::Alloca of 4 KiB from the device-local pool, nothing to wait for, signalling S = n:
// cuMemAllocFromPoolAsync and cuEventRecord on the caller's thread (cuLaunchHostFunc only when
// the queue has no host function pending: about once per batch, see core/device/queue_scheduler.h).
void BM_SubmitReadyAlloca(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind, state.range(0) != 0, state.range(1), state.range(2) != 0);
  if (!f.ok()) return;
  std::shared_ptr<Semaphore> s = f.NewSemaphore();
  std::vector<Buffer> live;
  live.reserve(kBatch);
  Queue& q = f.queue(0);
  BatchedLoop(
      state, f,
      [&](std::uint64_t v) {
        const SemaphoreValue signal[] = {{s.get(), v}};
        auto buffer = q.Alloca({}, signal, MemoryPoolKind::kDeviceLocal, {}, kSmallBytes);
        if (!f.Check(buffer.status(), "Alloca")) return false;
        live.push_back(std::move(buffer).value());
        return true;
      },
      [&](std::uint64_t v) {
        const SemaphoreValue wait[] = {{s.get(), v}};
        for (Buffer& b : live) {
          if (!f.Check(q.Dealloca(wait, {}, std::move(b)), "Dealloca")) return false;
        }
        live.clear();
        return f.Check(s->Wait(v, Bound()), "waiting for the batch") &&
               f.Check(q.Synchronize(), "synchronizing");
      });
  f.Report();
}

// Queue::Dealloca of a 4 KiB pool buffer, nothing to wait for, signalling S = n: cuMemFreeAsync,
// cuEventRecord (and a shared cuLaunchHostFunc). The buffers are allocated (Alloca) while the
// clock stops.
void BM_SubmitReadyDealloca(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind, state.range(0) != 0, state.range(1), state.range(2) != 0);
  if (!f.ok()) return;
  std::shared_ptr<Semaphore> s = f.NewSemaphore();
  std::shared_ptr<Semaphore> made = f.NewSemaphore();
  std::vector<Buffer> ready;
  Queue& q = f.queue(0);
  std::uint64_t made_value = 0;
  auto refill = [&]() {
    ready.clear();
    const SemaphoreValue signal[] = {{made.get(), ++made_value}};
    for (int i = 0; i < kBatch; ++i) {
      auto buffer = q.Alloca({}, i + 1 == kBatch ? std::span<const SemaphoreValue>(signal)
                                                 : std::span<const SemaphoreValue>(),
                             MemoryPoolKind::kDeviceLocal, {}, kSmallBytes);
      if (!f.Check(buffer.status(), "Alloca")) return false;
      ready.push_back(std::move(buffer).value());
    }
    // Wait until the allocations completed so the measured Deallocas have nothing to wait for.
    return f.Check(made->Wait(made_value, Bound()), "waiting for the allocations");
  };
  if (!refill()) return;
  std::size_t next = 0;
  BatchedLoop(
      state, f,
      [&](std::uint64_t v) {
        const SemaphoreValue signal[] = {{s.get(), v}};
        return f.Check(q.Dealloca({}, signal, std::move(ready[next++])), "Dealloca");
      },
      [&](std::uint64_t v) {
        next = 0;
        return f.Check(s->Wait(v, Bound()), "waiting for the batch") && refill();
      });
  f.Report();
}

// Queue::Execute of a recorded batch (a 4 KiB fill of A, a 4 KiB copy A -> B), nothing to wait
// for, signalling S = n: cuMemsetD32Async, cuMemcpyAsync, cuEventRecord (and a shared
// cuLaunchHostFunc). The
// batches are recorded while the clock stops.
void BM_SubmitReadyExecute(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind, state.range(0) != 0, state.range(1), state.range(2) != 0);
  if (!f.ok()) return;
  std::shared_ptr<Semaphore> s = f.NewSemaphore();
  Buffer* a = f.NewBuffer(kSmallBytes);
  Buffer* b = f.NewBuffer(kSmallBytes);
  if (a == nullptr || b == nullptr) return;
  Queue& q = f.queue(0);
  std::vector<TransferBatch> batches;
  auto record = [&]() {
    batches.clear();
    for (int i = 0; i < kBatch; ++i) {
      TransferBatch batch;
      const std::uint32_t pattern = 0x01020304u + static_cast<std::uint32_t>(i);
      if (!f.Check(batch.Fill(*a, 0, kSmallBytes, &pattern, sizeof(pattern)), "recording") ||
          !f.Check(batch.Copy(*a, 0, *b, 0, kSmallBytes), "recording")) {
        return false;
      }
      batches.push_back(std::move(batch));
    }
    return true;
  };
  if (!record()) return;
  std::size_t next = 0;
  BatchedLoop(
      state, f,
      [&](std::uint64_t v) {
        const SemaphoreValue signal[] = {{s.get(), v}};
        return f.Check(q.Execute({}, signal, std::move(batches[next++])), "Execute");
      },
      [&](std::uint64_t v) {
        next = 0;
        return f.Check(s->Wait(v, Bound()), "waiting for the batch") && record();
      });
  f.Report();
}

// Queue::Barrier, nothing to wait for, signalling S = n: cuEventRecord (and a shared
// cuLaunchHostFunc).
void BM_SubmitReadyBarrier(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind, state.range(0) != 0, state.range(1), state.range(2) != 0);
  if (!f.ok()) return;
  std::shared_ptr<Semaphore> s = f.NewSemaphore();
  Queue& q = f.queue(0);
  BatchedLoop(
      state, f,
      [&](std::uint64_t v) {
        const SemaphoreValue signal[] = {{s.get(), v}};
        return f.Check(q.Barrier({}, signal), "Barrier");
      },
      [&](std::uint64_t v) { return f.Check(s->Wait(v, Bound()), "waiting for the batch"); });
  f.Report();
}

// --- the driver's floor -----------------------------------------------------------------------

void CUDA_CB NoOpHostFunction(void*) {}

// cuLaunchHostFunc alone (an empty host function) on queue 0's stream: what a completion host
// function per operation would cost the submitting thread.
void BM_DriverLaunchHostFunc(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  const CudaApi& api = f.api();
  const CUstream stream = f.queue(0).stream();
  BatchedLoop(
      state, f,
      [&](std::uint64_t) {
        if (api.cuLaunchHostFunc(stream, &NoOpHostFunction, nullptr) == CUDA_SUCCESS) return true;
        state.SkipWithError("cuLaunchHostFunc failed");
        return false;
      },
      [&](std::uint64_t) { return api.cuStreamSynchronize(stream) == CUDA_SUCCESS; });
  f.Report();
}

// cuEventRecord alone, on queue 0's stream, of one of kBatch events created beforehand (no core
// code): the floor of a ready submission's host cost, since every queue operation records one.
// With `period` set, a second thread enqueues an empty host function on the same stream every
// `period` (the core's worker does about that while a queue is busy): whether the driver's
// record costs more with host functions pending or being enqueued beside it.
void EventRecordLoop(benchmark::State& state, const BackendKind* kind,
                     std::optional<std::chrono::microseconds> period) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  const CudaApi& api = f.api();
  const CUstream stream = f.queue(0).stream();
  std::vector<CUevent> events(kBatch, nullptr);
  for (CUevent& e : events) {
    if (api.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
      state.SkipWithError("cuEventCreate failed");
      for (CUevent made : events) {
        if (made != nullptr) api.cuEventDestroy(made);
      }
      return;
    }
  }
  std::atomic<bool> stop{false};
  std::atomic<bool> launch_failed{false};
  std::thread launcher;
  if (period.has_value()) {
    launcher = std::thread([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (api.cuLaunchHostFunc(stream, &NoOpHostFunction, nullptr) != CUDA_SUCCESS) {
          launch_failed = true;
          return;
        }
        std::this_thread::sleep_for(*period);
      }
    });
  }
  std::size_t next = 0;
  BatchedLoop(
      state, f,
      [&](std::uint64_t) {
        if (api.cuEventRecord(events[next++], stream) == CUDA_SUCCESS) return true;
        state.SkipWithError("cuEventRecord failed");
        return false;
      },
      [&](std::uint64_t) {
        next = 0;
        return api.cuStreamSynchronize(stream) == CUDA_SUCCESS;
      });
  stop = true;
  if (launcher.joinable()) launcher.join();
  if (launch_failed) state.SkipWithError("cuLaunchHostFunc failed on the launching thread");
  api.cuStreamSynchronize(stream);
  for (CUevent e : events) api.cuEventDestroy(e);
  f.Report();
}

void BM_DriverEventRecord(benchmark::State& state, const BackendKind* kind) {
  EventRecordLoop(state, kind, std::nullopt);
}

// Compare with BM_DriverEventRecord and BM_SubmitReadyBarrier/worker:1.
void BM_DriverEventRecordBesideHostFunctions(benchmark::State& state, const BackendKind* kind) {
  EventRecordLoop(state, kind, std::chrono::microseconds(state.range(0)));
}

// The driver calls of one ready Alloca / Dealloca / Execute with no core code around them: the
// work's own calls and the completion event's cuEventRecord, on queue 0's stream, in the same
// batches as BM_SubmitReady*. BM_SubmitReady* minus these is the core's own host cost per
// submission (docs/driver_facts.md, "Queue submission cost").
class DriverFloor {
 public:
  DriverFloor(benchmark::State& state, Fixture& f) : state_(state), api_(f.api()) {
    stream_ = f.queue(0).stream();
    pool_ = f.device().pools()->pool(MemoryPoolKind::kDeviceLocal).handle();
    events_.assign(kBatch, nullptr);
    for (CUevent& e : events_) {
      if (api_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
        Fail("cuEventCreate");
        return;
      }
    }
    ok_ = true;
  }
  ~DriverFloor() {
    api_.cuStreamSynchronize(stream_);
    for (CUevent e : events_) {
      if (e != nullptr) api_.cuEventDestroy(e);
    }
  }
  DriverFloor(const DriverFloor&) = delete;             // owns events
  DriverFloor& operator=(const DriverFloor&) = delete;  // ditto

  bool ok() const { return ok_; }
  CUstream stream() const { return stream_; }
  CUmemoryPool pool() const { return pool_; }
  const CudaApi& api() const { return api_; }
  // cuEventRecord of the next of kBatch events (what every queue operation records).
  bool Record(std::size_t i) {
    return Call(api_.cuEventRecord(events_[i], stream_), "cuEventRecord");
  }
  bool Call(CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return true;
    Fail(what);
    return false;
  }

 private:
  void Fail(const char* what) {
    state_.SkipWithError((std::string(what) + " failed").c_str());
    ok_ = false;
  }
  benchmark::State& state_;
  const CudaApi& api_;
  CUstream stream_ = nullptr;
  CUmemoryPool pool_ = nullptr;
  std::vector<CUevent> events_;
  bool ok_ = false;
};

// cuMemAllocFromPoolAsync of 4 KiB from the core's device-local pool + cuEventRecord.
void BM_DriverAllocaFloor(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  DriverFloor d(state, f);
  if (!d.ok()) return;
  std::vector<CUdeviceptr> live;
  live.reserve(kBatch);
  BatchedLoop(
      state, f,
      [&](std::uint64_t) {
        CUdeviceptr p = 0;
        if (!d.Call(d.api().cuMemAllocFromPoolAsync(&p, kSmallBytes, d.pool(), d.stream()),
                    "cuMemAllocFromPoolAsync")) {
          return false;
        }
        live.push_back(p);
        return d.Record(live.size() - 1);
      },
      [&](std::uint64_t) {
        for (CUdeviceptr p : live) {
          if (!d.Call(d.api().cuMemFreeAsync(p, d.stream()), "cuMemFreeAsync")) return false;
        }
        live.clear();
        return d.Call(d.api().cuStreamSynchronize(d.stream()), "cuStreamSynchronize");
      });
  for (CUdeviceptr p : live) d.api().cuMemFreeAsync(p, d.stream());
  f.Report();
}

// cuMemFreeAsync of a 4 KiB pool allocation + cuEventRecord (allocated while the clock stops).
void BM_DriverDeallocaFloor(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  DriverFloor d(state, f);
  if (!d.ok()) return;
  std::vector<CUdeviceptr> ready;
  auto refill = [&]() {
    ready.clear();
    for (int i = 0; i < kBatch; ++i) {
      CUdeviceptr p = 0;
      if (!d.Call(d.api().cuMemAllocFromPoolAsync(&p, kSmallBytes, d.pool(), d.stream()),
                  "cuMemAllocFromPoolAsync")) {
        return false;
      }
      ready.push_back(p);
    }
    return d.Call(d.api().cuStreamSynchronize(d.stream()), "cuStreamSynchronize");
  };
  if (!refill()) return;
  std::size_t next = 0;
  BatchedLoop(
      state, f,
      [&](std::uint64_t) {
        const std::size_t i = next++;
        return d.Call(d.api().cuMemFreeAsync(ready[i], d.stream()), "cuMemFreeAsync") &&
               d.Record(i);
      },
      [&](std::uint64_t) {
        next = 0;
        return refill();
      });
  for (std::size_t i = next; i < ready.size(); ++i) d.api().cuMemFreeAsync(ready[i], d.stream());
  f.Report();
}

// cuMemsetD32Async of 4 KiB + cuMemcpyAsync of 4 KiB device to device + cuEventRecord.
void BM_DriverExecuteFloor(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  DriverFloor d(state, f);
  if (!d.ok()) return;
  Buffer* a = f.NewBuffer(kSmallBytes);
  Buffer* b = f.NewBuffer(kSmallBytes);
  if (a == nullptr || b == nullptr) return;
  std::size_t next = 0;
  BatchedLoop(
      state, f,
      [&](std::uint64_t v) {
        const auto pattern = static_cast<unsigned int>(0x01020304u + v);
        return d.Call(d.api().cuMemsetD32Async(a->device_ptr(), pattern, kSmallBytes / 4,
                                               d.stream()),
                      "cuMemsetD32Async") &&
               d.Call(d.api().cuMemcpyAsync(b->device_ptr(), a->device_ptr(), kSmallBytes,
                                            d.stream()),
                      "cuMemcpyAsync") &&
               d.Record(next++);
      },
      [&](std::uint64_t) {
        next = 0;
        return d.Call(d.api().cuStreamSynchronize(d.stream()), "cuStreamSynchronize");
      });
  f.Report();
}

// --- signal-to-wake latency ------------------------------------------------------------------

// Host to host: this thread signals S = n and waits for T = n; a second thread waits for S = n
// and signals T = n. One iteration is two signal-to-wake hops; the counter wake_us is the wall
// time of one hop (the Time column is the wall time of an iteration; CPU is this thread's).
void BM_WakeHostToHost(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  std::shared_ptr<Semaphore> s = f.NewSemaphore();
  std::shared_ptr<Semaphore> t = f.NewSemaphore();
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    for (std::uint64_t v = 1;; ++v) {
      if (!s->Wait(v, Bound()).ok() || stop.load()) return;
      if (!t->Signal(v).ok()) return;
    }
  });
  std::uint64_t v = 0;
  f.StartCounting();
  for (auto _ : state) {
    ++v;
    if (!f.Check(s->Signal(v), "signalling S") || !f.Check(t->Wait(v, Bound()), "waiting T")) {
      break;
    }
  }
  f.StopCounting();
  stop.store(true);
  s->Fail(cuhal::AbortedError("the benchmark ended"));  // wakes the echo thread however it is
  echo.join();
  if (state.iterations() != 0) {
    state.counters["wake_us"] =
        f.wall_seconds() * 1e6 / static_cast<double>(2 * state.iterations());
  }
  f.Report(2);
}

// Queue to host: a Barrier on queue 0 signals S = n; this thread waits for S = n. The time is
// from submission to the host's wake: cuEventRecord + cuLaunchHostFunc (the queue is idle), the
// driver running the host function, the device's worker querying the event and retiring the
// operation (Advance), the waiter waking. The
// Time column (wall) is the latency; the counter wake_us says the same in microseconds.
void BM_WakeQueueToHost(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  std::shared_ptr<Semaphore> s = f.NewSemaphore();
  Queue& q = f.queue(0);
  std::uint64_t v = 0;
  f.StartCounting();
  for (auto _ : state) {
    ++v;
    const SemaphoreValue signal[] = {{s.get(), v}};
    if (!f.Check(q.Barrier({}, signal), "Barrier") || !f.Check(s->Wait(v, Bound()), "waiting")) {
      break;
    }
  }
  f.StopCounting();
  if (state.iterations() != 0) {
    state.counters["wake_us"] = f.wall_seconds() * 1e6 / static_cast<double>(state.iterations());
  }
  f.Report();
}

// --- queue to queue --------------------------------------------------------------------------

// Holds a stream at a host function until released (the host function makes no driver call; it
// only blocks its driver thread), so that work enqueued after it stays in flight.
class StreamGate {
 public:
  static void CUDA_CB Hold(void* user_data) {
    auto* gate = static_cast<StreamGate*>(user_data);
    std::unique_lock<std::mutex> lock(gate->mu_);
    gate->cv_.wait(lock, [gate] { return gate->open_; });
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
};

// Queue A signals S = n (a Barrier), queue B waits for S = n and signals T = n (a Barrier); one
// iteration is both submissions, and the counters are PER ITERATION (per A + B pair): expected
// cuEventRecord=2 (A's and B's signals), cuLaunchHostFunc well under 2 (shared by the
// operations of a batch), cuStreamWaitEvent=1 (B on A's event), host_syncs=0, deferred=0. Queue A's stream is held by a gate host
// function for each batch, so every wait of B is on an operation of A still in flight: the
// device-side path (cuEventRecord on A, cuStreamWaitEvent on B), with no host round trip
// (host_syncs = 0) and nothing deferred (deferred = 0). The gate opens when the clock stops.
void BM_QueueToQueueWait(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  std::shared_ptr<Semaphore> s = f.NewSemaphore();
  std::shared_ptr<Semaphore> t = f.NewSemaphore();
  Queue& a = f.queue(0);
  Queue& b = f.queue(1);
  StreamGate gate;
  auto close = [&] {
    gate.Close();
    return f.api().cuLaunchHostFunc(a.stream(), &StreamGate::Hold, &gate) == CUDA_SUCCESS ||
           f.Check(cuhal::InternalError("cuLaunchHostFunc (the gate) failed"), "gate");
  };
  // The gate's own cuLaunchHostFunc is made while the clock stops (not counted).
  if (!close()) return;
  BatchedLoop(
      state, f,
      [&](std::uint64_t v) {
        const SemaphoreValue sv[] = {{s.get(), v}};
        const SemaphoreValue tv[] = {{t.get(), v}};
        if (!f.Check(a.Barrier({}, sv), "Barrier on A") ||
            !f.Check(b.Barrier(sv, tv), "Barrier on B waiting for A")) {
          return false;
        }
        f.SampleDeferred();
        return true;
      },
      [&](std::uint64_t v) {
        gate.Open();
        return f.Check(t->Wait(v, Bound()), "waiting for T") && close();
      });
  gate.Open();
  f.Report();
}

// --- two-queue pipeline ----------------------------------------------------------------------

// Items per second of a pipeline ordered only by semaphores: for item n, queue A makes a 4 KiB
// buffer (Alloca) and fills it (Execute), signalling S = n; queue B waits for S = n, copies the
// buffer into a sink (Execute) and frees it (Dealloca), signalling T = n. Four queue operations
// per item (the counters are per operation). The host keeps at most range(0) items in flight
// (before submitting item n it waits for T = n - range(0)); it never waits on a stream. Counters
// items_per_s and ops_per_s are over wall time (the Time column is the wall time of one item).
void BM_TwoQueuePipeline(benchmark::State& state, const BackendKind* kind) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  const auto window = static_cast<std::uint64_t>(state.range(0));
  // made: item n allocated (A); s: item n filled (A); copied: item n copied to the sink (B);
  // t: item n freed (B).
  std::shared_ptr<Semaphore> made = f.NewSemaphore();
  std::shared_ptr<Semaphore> s = f.NewSemaphore();
  std::shared_ptr<Semaphore> copied = f.NewSemaphore();
  std::shared_ptr<Semaphore> t = f.NewSemaphore();
  Buffer* sink = f.NewBuffer(kSmallBytes);
  if (sink == nullptr) return;
  Queue& a = f.queue(0);
  Queue& b = f.queue(1);
  std::uint64_t n = 0;
  f.StartCounting();
  for (auto _ : state) {
    ++n;
    if (n > window && !f.Check(t->Wait(n - window, Bound()), "waiting for the window")) break;
    const SemaphoreValue made_n[] = {{made.get(), n}};
    const SemaphoreValue s_n[] = {{s.get(), n}};
    const SemaphoreValue copied_n[] = {{copied.get(), n}};
    const SemaphoreValue t_n[] = {{t.get(), n}};
    auto buffer = a.Alloca({}, made_n, MemoryPoolKind::kDeviceLocal, {}, kSmallBytes);
    if (!f.Check(buffer.status(), "Alloca on A")) break;
    TransferBatch fill;
    const std::uint32_t pattern = static_cast<std::uint32_t>(n);
    TransferBatch copy;
    if (!f.Check(fill.Fill(*buffer, 0, kSmallBytes, &pattern, sizeof(pattern)), "recording") ||
        !f.Check(copy.Copy(*buffer, 0, *sink, 0, kSmallBytes), "recording") ||
        !f.Check(a.Execute(made_n, s_n, std::move(fill)), "Execute on A") ||
        !f.Check(b.Execute(s_n, copied_n, std::move(copy)), "Execute on B") ||
        !f.Check(b.Dealloca(copied_n, t_n, std::move(buffer).value()), "Dealloca on B")) {
      break;
    }
    f.SampleDeferred();
  }
  f.StopCounting();
  if (f.ok()) f.Check(t->Wait(n, Bound()), "waiting for the last item");
  if (f.wall_seconds() > 0) {
    state.counters["items_per_s"] = static_cast<double>(state.iterations()) / f.wall_seconds();
    state.counters["ops_per_s"] = 4.0 * static_cast<double>(state.iterations()) / f.wall_seconds();
  }
  f.Report(4);
}

void RegisterAll() {
  for (const BackendKind* k : {&kFake, &kReal}) {
    const std::string suffix = std::string("/") + k->name;
    // The ready submissions, each in every mode (see the top of this file).
    using Submission = void (*)(benchmark::State&, const BackendKind*);
    const std::pair<const char*, Submission> submissions[] = {
        {"BM_SubmitReadyAlloca", BM_SubmitReadyAlloca},
        {"BM_SubmitReadyDealloca", BM_SubmitReadyDealloca},
        {"BM_SubmitReadyExecute", BM_SubmitReadyExecute},
        {"BM_SubmitReadyBarrier", BM_SubmitReadyBarrier}};
    for (const auto& [name, run] : submissions) {
      benchmark::RegisterBenchmark((name + suffix).c_str(), run, k)
          ->ArgNames({"worker", "poll_us", "on_worker"})
          ->Args({1, 0, 0})
          ->Args({0, 0, 0})
          ->Args({1, 20, 0})
          ->Args({1, 0, 1})
          ->Args({1, 20, 1});
    }
    benchmark::RegisterBenchmark(("BM_WakeHostToHost" + suffix).c_str(), BM_WakeHostToHost, k);
    benchmark::RegisterBenchmark(("BM_DriverEventRecord" + suffix).c_str(), BM_DriverEventRecord,
                                 k);
    benchmark::RegisterBenchmark(("BM_DriverLaunchHostFunc" + suffix).c_str(),
                                 BM_DriverLaunchHostFunc, k);
    benchmark::RegisterBenchmark(("BM_DriverAllocaFloor" + suffix).c_str(),
                                 BM_DriverAllocaFloor, k);
    benchmark::RegisterBenchmark(("BM_DriverDeallocaFloor" + suffix).c_str(),
                                 BM_DriverDeallocaFloor, k);
    benchmark::RegisterBenchmark(("BM_DriverExecuteFloor" + suffix).c_str(),
                                 BM_DriverExecuteFloor, k);
    benchmark::RegisterBenchmark(("BM_DriverEventRecordBesideHostFunctions" + suffix).c_str(),
                                 BM_DriverEventRecordBesideHostFunctions, k)
        ->ArgNames({"period_us"})
        ->Arg(20)
        ->Arg(200);
    benchmark::RegisterBenchmark(("BM_WakeQueueToHost" + suffix).c_str(), BM_WakeQueueToHost,
                                 k);
    benchmark::RegisterBenchmark(("BM_QueueToQueueWait" + suffix).c_str(), BM_QueueToQueueWait,
                                 k);
    benchmark::RegisterBenchmark(("BM_TwoQueuePipeline" + suffix).c_str(), BM_TwoQueuePipeline,
                                 k)
        ->ArgNames({"window"})
        ->Arg(1)
        ->Arg(16);
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
