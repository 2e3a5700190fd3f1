// Copyright 2026 The cuhal Authors.
#include "sweep/core_scenarios.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/memory/allocator.h"
#include "sweep/command_scenarios.h"
#include "sweep/queue_scenarios.h"

namespace cuhal::sweep {
namespace {

// --- scenarios ----------------------------------------------------------------------------

Status DriverCreate(const CudaApi* api) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, driver->EnumerateDevices());
  CUHAL_ASSIGN_OR_RETURN(DeviceInfo found, driver->FindDeviceByUuid(devices.at(0).uuid));
  if (found.ordinal != 0) return InternalError("found the wrong device");
  return OkStatus();
}

Status DeviceCreateDestroy(const CudaApi* api) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  DeviceParams params;
  params.queue_count = 2;
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(*driver, 0, params));
  CUHAL_ASSIGN_OR_RETURN(std::int64_t major,
                         device->QueryI64("cuda.device", "compute_capability_major"));
  if (major != 9) return InternalError("unexpected compute capability");
  CUHAL_RETURN_IF_ERROR(device->BeginProfiling());
  CUHAL_RETURN_IF_ERROR(device->Synchronize());
  CUHAL_RETURN_IF_ERROR(device->EndProfiling());
  CUHAL_RETURN_IF_ERROR(device->Trim());
  return OkStatus();  // the device is destroyed here, in reverse order of creation
}

// Allocates a buffer of `params` (imported from host memory for the imported heap), and moves
// bytes through it: write, fill, copy to a device-local buffer, read back, map; then frees it.
Status BufferRoundTrip(const CudaApi* api, const BufferParams& params) {
  constexpr std::size_t kSize = 16 * 1024;
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(*driver, 0));
  std::vector<std::byte> host(kSize, std::byte{0x5A});  // declared before the buffer it backs
  Buffer buffer;
  if (params.heap == MemoryHeap::kImportedHost) {
    CUHAL_ASSIGN_OR_RETURN(buffer, device->allocator().Import(params, host.data(), host.size()));
  } else {
    CUHAL_ASSIGN_OR_RETURN(buffer, device->allocator().Allocate(params, kSize));
  }
  CUHAL_ASSIGN_OR_RETURN(Buffer staging, device->allocator().Allocate({}, kSize));
  Queue& queue = device->queue(0);
  std::vector<std::byte> data(kSize, std::byte{0x3C});
  CUHAL_RETURN_IF_ERROR(queue.Write(data, buffer, 0));
  const std::uint32_t word = 0xDEADBEEF;
  CUHAL_RETURN_IF_ERROR(queue.Fill(buffer, 0, 4096, &word, sizeof(word)));
  CUHAL_RETURN_IF_ERROR(queue.Copy(buffer, 0, staging, 0, kSize));
  std::vector<std::byte> out(kSize);
  CUHAL_RETURN_IF_ERROR(queue.Read(staging, 0, out));
  CUHAL_RETURN_IF_ERROR(queue.Synchronize());
  if (out[4096] != std::byte{0x3C}) return InternalError("read back the wrong bytes");
  if (buffer.host_visible()) {
    CUHAL_ASSIGN_OR_RETURN(std::span<std::byte> mapped, buffer.Map());
    if (mapped[4096] != std::byte{0x3C}) return InternalError("mapped the wrong bytes");
    CUHAL_RETURN_IF_ERROR(buffer.Unmap());
  }
  CUHAL_RETURN_IF_ERROR(staging.Reset());
  CUHAL_RETURN_IF_ERROR(buffer.Reset());
  return OkStatus();
}

Status PoolsAndTrim(const CudaApi* api) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(*driver, 0));
  if (device->pools() == nullptr) return InternalError("the fake H200 should have pools");
  {
    CUHAL_ASSIGN_OR_RETURN(
        Buffer local,
        device->allocator().Allocate(
            {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal}, 4096));
    CUHAL_ASSIGN_OR_RETURN(
        Buffer other,
        device->allocator().Allocate(
            {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kOther}, 1 << 20));
    const std::uint8_t zero = 0;
    CUHAL_RETURN_IF_ERROR(device->queue(0).Fill(other, 0, other.size(), &zero, 1));
    CUHAL_RETURN_IF_ERROR(device->queue(0).Copy(other, 0, local, 0, local.size()));
    CUHAL_RETURN_IF_ERROR(device->Synchronize());
    CUHAL_ASSIGN_OR_RETURN(MemoryPoolsStatistics stats, device->QueryPoolStatistics());
    if (stats.other.used_current != (1u << 20)) return InternalError("wrong used bytes");
    CUHAL_RETURN_IF_ERROR(local.Reset());
    CUHAL_RETURN_IF_ERROR(other.Reset());
  }
  CUHAL_RETURN_IF_ERROR(device->Trim());
  CUHAL_RETURN_IF_ERROR(device->pools()->ResetHighWatermarks());
  CUHAL_ASSIGN_OR_RETURN(MemoryPoolsStatistics stats, device->QueryPoolStatistics());
  if (stats.device_local.reserved_current != 0) return InternalError("trim kept memory");
  return OkStatus();
}

// --- the table ------------------------------------------------------------------------------

SweepScenario Make(std::string name, std::function<Status(const CudaApi*)> run) {
  SweepScenario scenario;
  scenario.name = std::move(name);
  scenario.run = std::move(run);
  scenario.cleanup_calls = DeviceCleanupCalls();  // one built-in H200 (the default)
  return scenario;
}

SweepScenario HeapScenario(std::string name, BufferParams params) {
  return Make(std::move(name),
              [params](const CudaApi* api) { return BufferRoundTrip(api, params); });
}

}  // namespace

// Cleanup calls of the device core whose failure cannot be returned (destructors report it
// through ReportDroppedStatus), and what such a failure leaves behind. Streams, allocations and
// registrations are covered by the final release of the primary context (the driver destroys a
// context's objects with it); a pool and the primary context's retain themselves are not.
std::map<std::string, CleanupCall> DeviceCleanupCalls() {
  fakecuda::Inventory one_pool;
  one_pool.pools = 1;
  fakecuda::Inventory one_retain;
  one_retain.primary_retains = 1;
  return {
      {"cuCtxGetCurrent", {}},      // entering the context in a destructor
      {"cuCtxPushCurrent", {}},     // ditto
      {"cuCtxPopCurrent", {}},      // leaving it
      {"cuStreamSynchronize", {}},  // waiting for the queues before destroying them
      {"cuStreamDestroy", {}},
      {"cuMemFree", {}},
      {"cuMemFreeHost", {}},
      {"cuMemHostUnregister", {}},
      {"cuMemFreeAsync", {}},  // recovered: freed synchronously with cuMemFree instead
      {"cuMemPoolDestroy", {one_pool}},
      {"cuDevicePrimaryCtxRelease", {one_retain}},
  };
}

std::vector<SweepScenario> CoreScenarios() {
  std::vector<SweepScenario> scenarios;
  SweepScenario driver = Make("driver create", &DriverCreate);
  driver.cleanup_calls.clear();  // nothing to clean up: every failure must be returned
  scenarios.push_back(std::move(driver));
  scenarios.push_back(Make("device create/destroy", &DeviceCreateDestroy));
  scenarios.push_back(HeapScenario("buffers: device-local", {}));
  scenarios.push_back(HeapScenario(
      "buffers: host-pinned", {.heap = MemoryHeap::kHostPinned, .pool = std::nullopt}));
  scenarios.push_back(
      HeapScenario("buffers: managed", {.heap = MemoryHeap::kManaged, .pool = std::nullopt}));
  scenarios.push_back(HeapScenario(
      "buffers: imported-host", {.heap = MemoryHeap::kImportedHost, .pool = std::nullopt}));
  scenarios.push_back(HeapScenario(
      "buffers: device-local pool",
      {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal}));
  scenarios.push_back(Make("pools and trim", &PoolsAndTrim));
  // The same buffer traffic with queued work held back until the host synchronizes.
  SweepScenario adversarial = HeapScenario(
      "buffers: device-local pool, adversarial schedule",
      {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal});
  adversarial.driver_options.policy = fakecuda::SchedulePolicy::kAdversarial;
  adversarial.driver_options.seed = 7;
  scenarios.push_back(std::move(adversarial));
  for (SweepScenario& queue : QueueScenarios()) scenarios.push_back(std::move(queue));
  for (SweepScenario& command : CommandScenarios()) scenarios.push_back(std::move(command));
  return scenarios;
}

}  // namespace cuhal::sweep
