// Copyright 2026 The cuhal Authors.
// The static library's hooks: fakecuda's functions, linked directly.
#include "fakenccl/internal/fakecuda_hooks.h"

#include "fakecuda/fake_driver.h"

namespace fakenccl::internal {
namespace {

int DeviceCount() {
  fakecuda::FakeDriver* driver = fakecuda::Installed();
  return driver == nullptr ? -1 : static_cast<int>(driver->options().devices.size());
}

int ComputeCapabilityMajor(int device) {
  fakecuda::FakeDriver* driver = fakecuda::Installed();
  if (driver == nullptr || device < 0 ||
      static_cast<std::size_t>(device) >= driver->options().devices.size()) {
    return 0;
  }
  return driver->options().devices[static_cast<std::size_t>(device)].Attribute(
      CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
}

DriverFunctions Driver() {
  DriverFunctions d;
#define FAKENCCL_DRIVER_ADDRESS(name) d.name = &::name;
  FAKENCCL_DRIVER_FUNCTIONS(FAKENCCL_DRIVER_ADDRESS)
#undef FAKENCCL_DRIVER_ADDRESS
  return d;
}

const FakecudaHooks kHooks = {
    .enqueue_stream_work = &fakecuda::EnqueueStreamWork,
    .notify_stream_work = &fakecuda::NotifyStreamWork,
    .translate_device_pointer = &fakecuda::TranslateDevicePointer,
    .new_idle_clock = &fakecuda::NewIdleClock,
    .enter_blocked = &fakecuda::EnterBlocked,
    .leave_blocked = &fakecuda::LeaveBlocked,
    .enter_busy = &fakecuda::EnterBusy,
    .leave_busy = &fakecuda::LeaveBusy,
    .stream_device = &fakecuda::StreamDevice,
    .device_count = &DeviceCount,
    .compute_capability_major = &ComputeCapabilityMajor,
    .driver = Driver(),
};

}  // namespace

const FakecudaHooks* Hooks() { return &kHooks; }
const char* HooksUnavailableReason() { return ""; }

}  // namespace fakenccl::internal
