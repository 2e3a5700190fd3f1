// Copyright 2026 The cuhal Authors.
#include "sweep/command_scenarios.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/command/command_buffer.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/executable/executable.h"
#include "fakecuda/sample_kernels.h"
#include "sweep/core_scenarios.h"

namespace cuhal::sweep {
namespace {

using namespace std::chrono_literals;

Deadline Bound() { return DeadlineAfter(120s); }

std::vector<std::uint32_t> Values(std::size_t n, std::uint32_t start) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + static_cast<std::uint32_t>(i * 7);
  return v;
}

StatusOr<std::unique_ptr<Device>> OpenTwoQueues(const Driver& driver) {
  DeviceParams params;
  params.queue_count = 2;
  params.event_pool_capacity = 16;
  // One completion host function per operation: a deterministic call sequence for the fault
  // sweep (sweep/queue_scenarios.h, "Determinism").
  params.batch_completions = false;
  return Device::Create(driver, 0, params);
}

ExecutableParams SampleParams() {
  ExecutableParams params;
  params.image = ImageBytes(fakecuda::kSamplePtx);
  params.entry_points = {"add_one", "shared_reverse"};
  params.name = "sample";
  return params;
}

// Submits `cb` on `queue` (no waits) to signal `done` = value, and waits for it.
Status Submit(Queue& queue, std::shared_ptr<const CommandBuffer> cb, BindingTable bindings,
              Semaphore& done, std::uint64_t value) {
  const SemaphoreValue signal[] = {{&done, value}};
  CUHAL_RETURN_IF_ERROR(queue.Execute({}, signal, std::move(cb), bindings));
  return done.Wait(value, Bound());
}

StatusOr<std::vector<std::uint32_t>> ReadBack(Queue& queue, const Buffer& buffer, std::size_t n) {
  std::vector<std::uint32_t> out(n);
  CUHAL_RETURN_IF_ERROR(queue.Read(buffer, 0, std::as_writable_bytes(std::span(out))));
  CUHAL_RETURN_IF_ERROR(queue.Synchronize());
  return out;
}

}  // namespace

Status ExecutableScenario(const CudaApi* api) {
  constexpr std::size_t kCount = 512;
  fakecuda::SampleKernels kernels;
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, OpenTwoQueues(*driver));
  CUHAL_ASSIGN_OR_RETURN(Buffer data, device->allocator().Allocate({}, kCount * 4));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> done, device->CreateSemaphore(0));
  {
    ExecutableCache cache(*device);
    CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> exe, cache.GetOrLoad(SampleParams()));
    CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> again,
                           cache.GetOrLoad(SampleParams()));
    if (again != exe || cache.statistics().loads != 1) {
      return InternalError("the cache loaded the same image twice");
    }
    CUHAL_ASSIGN_OR_RETURN(const EntryPoint* add_one, exe->LookupEntryPoint("add_one"));
    const std::vector<std::uint32_t> input = Values(kCount, 11);
    CUHAL_RETURN_IF_ERROR(device->queue(0).Write(std::as_bytes(std::span(input)), data, 0));
    CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<CommandBuffer> cb, CommandBuffer::Create(api));
    DispatchConfig config;
    config.workgroups = {2, 1, 1};
    config.block = {256, 1, 1};
    const BufferRef bindings[] = {BufferRef::Direct(data)};
    const std::uint32_t n[] = {kCount};
    CUHAL_RETURN_IF_ERROR(cb->Dispatch(*exe, add_one->ordinal, config, bindings, n));
    CUHAL_RETURN_IF_ERROR(cb->End());
    CUHAL_RETURN_IF_ERROR(device->queue(0).Synchronize());  // the write, before the execute
    CUHAL_RETURN_IF_ERROR(Submit(device->queue(0), std::move(cb), {}, *done, 1));
    CUHAL_ASSIGN_OR_RETURN(std::vector<std::uint32_t> got, ReadBack(device->queue(0), data, kCount));
    for (std::size_t i = 0; i < kCount; ++i) {
      if (got[i] != input[i] + 1) {
        return InternalError(StrCat("element ", i, " is ", got[i], ", expected ", input[i] + 1));
      }
    }
  }
  return device->Synchronize();
}

namespace {

Status CommandBufferScenario(const CudaApi* api, CommandTargetKind target) {
  constexpr std::size_t kCount = 256;
  constexpr std::size_t kBytes = kCount * 4;
  fakecuda::SampleKernels kernels;
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, OpenTwoQueues(*driver));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe,
                         Executable::Create(*device, SampleParams()));
  CUHAL_ASSIGN_OR_RETURN(Event event, device->CreateEvent());
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> done, device->CreateSemaphore(0));
  CommandBufferParams params;
  params.mode = CommandBufferMode::kReusable;
  params.binding_capacity = 2;
  params.target = target;
  params.name = "sweep command buffer";
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<CommandBuffer> cb, CommandBuffer::Create(api, params));
  // out = reverse(update(constants) + 1) over slot 0 (scratch) and slot 1 (out).
  const std::uint32_t zero = 0;
  const std::vector<std::uint32_t> constants = Values(kCount, 3);
  CUHAL_RETURN_IF_ERROR(cb->Fill(BufferRef::Slot(0), &zero, 4));
  CUHAL_RETURN_IF_ERROR(cb->Update(std::as_bytes(std::span(constants)), BufferRef::Slot(0)));
  CUHAL_RETURN_IF_ERROR(cb->ExecutionBarrier());
  DispatchConfig config;
  config.block = {256, 1, 1};
  const BufferRef scratch[] = {BufferRef::Slot(0)};
  const std::uint32_t n[] = {kCount};
  CUHAL_RETURN_IF_ERROR(cb->Dispatch(*exe, 0, config, scratch, n));
  CUHAL_RETURN_IF_ERROR(cb->Dispatch(*exe, 1, config, scratch));
  CUHAL_RETURN_IF_ERROR(cb->SignalEvent(event));
  const Event* events[] = {&event};
  CUHAL_RETURN_IF_ERROR(cb->WaitEvents(events));
  CUHAL_RETURN_IF_ERROR(cb->ResetEvent(event));
  CUHAL_RETURN_IF_ERROR(cb->Copy(BufferRef::Slot(0), BufferRef::Slot(1)));
  CUHAL_RETURN_IF_ERROR(cb->End());
  std::vector<std::uint32_t> want(constants);
  for (std::uint32_t& v : want) v += 1;
  std::reverse(want.begin(), want.end());
  for (int round = 0; round < 2; ++round) {
    CUHAL_ASSIGN_OR_RETURN(Buffer a, device->allocator().Allocate({}, kBytes));
    CUHAL_ASSIGN_OR_RETURN(Buffer b, device->allocator().Allocate({}, kBytes));
    const Binding table[] = {{&a}, {&b}};
    CUHAL_RETURN_IF_ERROR(Submit(device->queue(round), cb, table, *done,
                                 static_cast<std::uint64_t>(round + 1)));
    CUHAL_ASSIGN_OR_RETURN(std::vector<std::uint32_t> got, ReadBack(device->queue(0), b, kCount));
    if (got != want) return InternalError(StrCat("round ", round, ": wrong data"));
  }
  // A one-shot command buffer over direct buffers.
  CUHAL_ASSIGN_OR_RETURN(Buffer c, device->allocator().Allocate({}, kBytes));
  CommandBufferParams once_params;
  once_params.target = target;
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<CommandBuffer> once,
                         CommandBuffer::Create(api, once_params));
  const std::uint32_t nine = 9;
  CUHAL_RETURN_IF_ERROR(once->Fill(BufferRef::Direct(c), &nine, 4));
  CUHAL_RETURN_IF_ERROR(once->End());
  CUHAL_RETURN_IF_ERROR(Submit(device->queue(1), once, {}, *done, 3));
  CUHAL_ASSIGN_OR_RETURN(std::vector<std::uint32_t> got, ReadBack(device->queue(0), c, kCount));
  if (got != std::vector<std::uint32_t>(kCount, 9)) return InternalError("one-shot: wrong data");
  if (target == CommandTargetKind::kGraph) {
    // Instantiated once; the second table's buffers were updated into it, not rebuilt.
    const CommandTargetStatistics stats = cb->statistics().target;
    if (stats.instantiations != 1 || stats.launches != 2 ||
        stats.in_place_updates + stats.reuses != 1 || stats.rebuilds != 0) {
      return InternalError(StrCat("graph statistics: ", stats.instantiations, " instantiations, ",
                                  stats.launches, " launches, ", stats.in_place_updates,
                                  " in-place updates, ", stats.reuses, " reuses, ",
                                  stats.rebuilds, " rebuilds"));
    }
  }
  cb.reset();
  once.reset();
  return device->Synchronize();
}

}  // namespace

Status StreamCommandBufferScenario(const CudaApi* api) {
  return CommandBufferScenario(api, CommandTargetKind::kStream);
}

Status GraphCommandBufferScenario(const CudaApi* api) {
  return CommandBufferScenario(api, CommandTargetKind::kGraph);
}

std::vector<SweepScenario> CommandScenarios() {
  std::vector<SweepScenario> scenarios;
  auto add = [&](const char* name, Status (*run)(const CudaApi*)) {
    SweepScenario scenario;
    scenario.name = name;
    scenario.run = run;
    scenario.cleanup_calls = DeviceCleanupCalls();
    scenario.cleanup_calls["cuEventDestroy"] = {};  // the event pool's and the HAL event's
    scenario.cleanup_calls["cuModuleUnload"] = {};  // the executable's
    // The graph target's, at destruction (or when a failed submission drops its graph).
    fakecuda::Inventory exec_left;
    exec_left.graph_execs = 1;
    scenario.cleanup_calls["cuGraphExecDestroy"] = {exec_left};
    fakecuda::Inventory graph_left;
    graph_left.graphs = 1;
    scenario.cleanup_calls["cuGraphDestroy"] = {graph_left};
    scenarios.push_back(std::move(scenario));
  };
  add("executable", &ExecutableScenario);
  add("command buffer (stream)", &StreamCommandBufferScenario);
  add("command buffer (graph)", &GraphCommandBufferScenario);
  return scenarios;
}

}  // namespace cuhal::sweep
