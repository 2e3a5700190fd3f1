// Copyright 2026 The cuhal Authors.
#include "sweep/queue_scenarios.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/device/device.h"
#include "core/driver/driver.h"
#include "sweep/core_scenarios.h"

namespace cuhal::sweep {
namespace {

using namespace std::chrono_literals;

// Bounds waits that must end: a scenario never hangs, it fails.
Deadline Bound() { return DeadlineAfter(120s); }

std::vector<std::byte> Pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 31 + seed) & 0xFF);
  return bytes;
}

StatusOr<std::unique_ptr<Device>> OpenTwoQueues(const Driver& driver, QueueScenarioMode mode) {
  DeviceParams params;
  params.queue_count = 2;
  params.event_pool_capacity = 16;  // more than any scenario has in use at once
  params.batch_completions = mode.batch_completions;
  params.issue_on_worker = mode.issue_on_worker;
  return Device::Create(driver, 0, params);
}

}  // namespace

// Host signals release deferred barriers; a queue-signalled value orders a second queue on the
// device; a multi-wait; a failure reaching a queue operation.
Status SemaphoreScenario(const CudaApi* api, QueueScenarioMode mode) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, OpenTwoQueues(*driver, mode));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> host, device->CreateSemaphore(0));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> a, device->CreateSemaphore(0));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> b, device->CreateSemaphore(0));
  const SemaphoreValue host1[] = {{host.get(), 1}};
  const SemaphoreValue a1[] = {{a.get(), 1}};
  const SemaphoreValue b1[] = {{b.get(), 1}};
  CUHAL_RETURN_IF_ERROR(device->queue(0).Barrier(host1, a1));  // deferred
  CUHAL_RETURN_IF_ERROR(host->Signal(1));                       // the worker issues it
  CUHAL_RETURN_IF_ERROR(a->Wait(1, Bound()));
  const SemaphoreValue a2[] = {{a.get(), 2}};
  CUHAL_RETURN_IF_ERROR(device->queue(0).Barrier({}, a2));  // ready: issued here
  CUHAL_RETURN_IF_ERROR(a->Wait(2, Bound()));
  // Both deferred behind the host; released in one pass of the worker, the second ordered after
  // the first on the device (cuStreamWaitEvent).
  const SemaphoreValue host2[] = {{host.get(), 2}};
  const SemaphoreValue a3[] = {{a.get(), 3}};
  CUHAL_RETURN_IF_ERROR(device->queue(0).Barrier(host2, a3));
  CUHAL_RETURN_IF_ERROR(device->queue(1).Barrier(a3, b1));
  CUHAL_RETURN_IF_ERROR(host->Signal(2));
  const SemaphoreValue both[] = {{a.get(), 3}, {b.get(), 1}};
  CUHAL_RETURN_IF_ERROR(Semaphore::WaitAll(both, Bound()));
  // A failure reaches a deferred operation and its signal semaphore.
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> doomed, device->CreateSemaphore(0));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> after, device->CreateSemaphore(0));
  const SemaphoreValue d1[] = {{doomed.get(), 1}};
  const SemaphoreValue f1[] = {{after.get(), 1}};
  CUHAL_RETURN_IF_ERROR(device->queue(1).Barrier(d1, f1));
  doomed->Fail(AbortedError("scenario failure"));
  if (after->Wait(1, Bound()).code() != StatusCode::kAborted) {
    return InternalError("a failure did not reach the operation waiting on it");
  }
  return device->Synchronize();
}

// Alloca on queue 0, a write and a read on queue 1 ordered after it on the device, Dealloca on
// queue 0 after them; then a deferred Alloca released by the host, freed again.
Status QueueAllocaDeallocaScenario(const CudaApi* api, QueueScenarioMode mode) {
  constexpr std::size_t kSize = 16 * 1024;
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, OpenTwoQueues(*driver, mode));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> s, device->CreateSemaphore(0));
  const SemaphoreValue v1[] = {{s.get(), 1}};
  const SemaphoreValue v2[] = {{s.get(), 2}};
  const SemaphoreValue v3[] = {{s.get(), 3}};
  const std::vector<std::byte> data = Pattern(kSize, 5);
  std::vector<std::byte> out(kSize);
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> host, device->CreateSemaphore(0));
  const SemaphoreValue h2[] = {{host.get(), 2}};
  {
    // All behind the host, released in one pass of the worker, chained on the device.
    CUHAL_ASSIGN_OR_RETURN(
        Buffer buffer, device->queue(0).Alloca(h2, v1, MemoryPoolKind::kDeviceLocal, {}, kSize));
    TransferBatch batch;
    CUHAL_RETURN_IF_ERROR(batch.Write(data, buffer, 0));
    CUHAL_RETURN_IF_ERROR(batch.Read(buffer, 0, out));
    CUHAL_RETURN_IF_ERROR(device->queue(1).Execute(v1, v2, std::move(batch)));
    CUHAL_RETURN_IF_ERROR(device->queue(0).Dealloca(v2, v3, std::move(buffer)));
    CUHAL_RETURN_IF_ERROR(host->Signal(2));
    CUHAL_RETURN_IF_ERROR(s->Wait(3, Bound()));
    if (out != data) return InternalError("read back the wrong bytes");
  }
  const SemaphoreValue v4[] = {{s.get(), 4}};
  const SemaphoreValue v5[] = {{s.get(), 5}};
  {
    const SemaphoreValue h3[] = {{host.get(), 3}};
    CUHAL_ASSIGN_OR_RETURN(
        Buffer buffer, device->queue(1).Alloca(h3, v4, MemoryPoolKind::kOther, {}, kSize));
    CUHAL_RETURN_IF_ERROR(device->queue(1).Dealloca(v4, v5, std::move(buffer)));
    CUHAL_RETURN_IF_ERROR(host->Signal(3));
    CUHAL_RETURN_IF_ERROR(s->Wait(5, Bound()));
  }
  return device->Synchronize();
}

// An Execute deferred behind the host (write, fill, copy, read), then a ready one.
Status QueueExecuteScenario(const CudaApi* api, QueueScenarioMode mode) {
  constexpr std::size_t kSize = 16 * 1024;
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, OpenTwoQueues(*driver, mode));
  CUHAL_ASSIGN_OR_RETURN(Buffer a, device->allocator().Allocate({}, kSize));
  CUHAL_ASSIGN_OR_RETURN(Buffer b, device->allocator().Allocate({}, kSize));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> host, device->CreateSemaphore(0));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> done, device->CreateSemaphore(0));
  const std::vector<std::byte> data = Pattern(kSize, 9);
  std::vector<std::byte> out(kSize);
  TransferBatch batch;
  CUHAL_RETURN_IF_ERROR(batch.Write(data, a, 0));
  const std::uint32_t word = 0xA5A5A5A5u;
  CUHAL_RETURN_IF_ERROR(batch.Fill(a, 0, 1024, &word, sizeof(word)));
  CUHAL_RETURN_IF_ERROR(batch.Copy(a, 0, b, 0, kSize));
  CUHAL_RETURN_IF_ERROR(batch.Read(b, 0, out));
  const SemaphoreValue h1[] = {{host.get(), 1}};
  const SemaphoreValue d1[] = {{done.get(), 1}};
  const SemaphoreValue d2[] = {{done.get(), 2}};
  CUHAL_RETURN_IF_ERROR(device->queue(0).Execute(h1, d1, std::move(batch)));
  CUHAL_RETURN_IF_ERROR(host->Signal(1));
  CUHAL_RETURN_IF_ERROR(done->Wait(1, Bound()));
  if (out[0] != std::byte{0xA5} || out[2048] != data[2048]) {
    return InternalError("the execute's transfers ran out of order");
  }
  std::vector<std::byte> again(kSize);
  TransferBatch read;
  CUHAL_RETURN_IF_ERROR(read.Read(a, 0, again));
  CUHAL_RETURN_IF_ERROR(device->queue(1).Execute(d1, d2, std::move(read)));
  CUHAL_RETURN_IF_ERROR(done->Wait(2, Bound()));
  if (again != out) return InternalError("the second execute read the wrong bytes");
  return device->Synchronize();
}

// Three rounds of: queue 0 allocates and writes, queue 1 copies into its own buffer and reads
// back, queue 0 frees; every step ordered only by one semaphore. All of it is submitted behind
// one host signal, then released by the worker in one pass, ordered on the device.
Status TwoQueuePipelineScenario(const CudaApi* api, QueueScenarioMode mode) {
  constexpr std::size_t kSize = 8 * 1024;
  constexpr int kRounds = 3;
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, OpenTwoQueues(*driver, mode));
  CUHAL_ASSIGN_OR_RETURN(Buffer sink, device->allocator().Allocate({}, kSize));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> t, device->CreateSemaphore(0));
  std::vector<std::vector<std::byte>> data;
  std::vector<std::vector<std::byte>> out(kRounds, std::vector<std::byte>(kSize));
  for (int r = 0; r < kRounds; ++r) data.push_back(Pattern(kSize, 17 + r));
  // Round r starts at 4r+1 (1: the host's) and ends at 4r+5, the next round's start.
  std::uint64_t v = 1;
  for (int r = 0; r < kRounds; ++r) {
    const SemaphoreValue start[] = {{t.get(), v}};
    const SemaphoreValue allocated[] = {{t.get(), v + 1}};
    const SemaphoreValue written[] = {{t.get(), v + 2}};
    const SemaphoreValue consumed[] = {{t.get(), v + 3}};
    const SemaphoreValue freed[] = {{t.get(), v + 4}};
    CUHAL_ASSIGN_OR_RETURN(Buffer stage, device->queue(0).Alloca(
                                             start, allocated, MemoryPoolKind::kDeviceLocal, {},
                                             kSize));
    TransferBatch produce;
    CUHAL_RETURN_IF_ERROR(produce.Write(data[r], stage, 0));
    CUHAL_RETURN_IF_ERROR(device->queue(0).Execute(allocated, written, std::move(produce)));
    TransferBatch consume;
    CUHAL_RETURN_IF_ERROR(consume.Copy(stage, 0, sink, 0, kSize));
    CUHAL_RETURN_IF_ERROR(consume.Read(sink, 0, out[r]));
    CUHAL_RETURN_IF_ERROR(device->queue(1).Execute(written, consumed, std::move(consume)));
    CUHAL_RETURN_IF_ERROR(device->queue(0).Dealloca(consumed, freed, std::move(stage)));
    v += 4;
  }
  CUHAL_RETURN_IF_ERROR(t->Signal(1));
  CUHAL_RETURN_IF_ERROR(t->Wait(v, Bound()));
  for (int r = 0; r < kRounds; ++r) {
    if (out[r] != data[r]) return InternalError(StrCat("round ", r, " read the wrong bytes"));
  }
  return device->Synchronize();
}

std::vector<SweepScenario> QueueScenarios(QueueScenarioMode mode) {
  std::vector<SweepScenario> scenarios;
  auto add = [&](const char* name, Status (*run)(const CudaApi*, QueueScenarioMode)) {
    SweepScenario scenario;
    scenario.name = name;
    scenario.run = [run, mode](const CudaApi* api) { return run(api, mode); };
    scenario.cleanup_calls = DeviceCleanupCalls();
    scenario.cleanup_calls["cuEventDestroy"] = {};  // the event pool's, at teardown
    scenarios.push_back(std::move(scenario));
  };
  add("semaphore", &SemaphoreScenario);
  add("queue alloca/dealloca", &QueueAllocaDeallocaScenario);
  add("queue execute", &QueueExecuteScenario);
  add("two-queue pipeline", &TwoQueuePipelineScenario);
  return scenarios;
}

}  // namespace cuhal::sweep
