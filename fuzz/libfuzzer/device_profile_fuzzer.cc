// Copyright 2026 The cuhal Authors.
// libFuzzer target: device profile JSON (fakecuda/device_profile.h, ParseProfile). A profile that
// parses must survive the round trip through ProfileToJson unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fakecuda/device_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  fakecuda::DeviceProfile profile;
  std::string error;
  if (!fakecuda::ParseProfile(json, &profile, &error)) {
    if (error.empty()) std::abort();  // a failure always says why
    return 0;
  }
  (void)profile.Attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  fakecuda::DeviceProfile again;
  std::string again_error;
  if (!fakecuda::ParseProfile(fakecuda::ProfileToJson(profile), &again, &again_error)) std::abort();
  if (again.name != profile.name || again.uuid != profile.uuid ||
      again.pci_bus_id != profile.pci_bus_id || again.total_memory != profile.total_memory ||
      again.driver_version != profile.driver_version || again.attributes != profile.attributes) {
    std::abort();
  }
  return 0;
}
