// Copyright 2026 The cuhal Authors.
#include "fakecuda/dropin/dropin_config.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <optional>

#include "fakecuda/kernel_registry.h"

namespace fakecuda {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// A decimal count in [0, max] (core/base/env.h's integer rules); false when `s` is not one.
bool ParseCount(std::string_view s, std::uint64_t max, std::uint64_t* out) {
  cuhal::StatusOr<std::uint64_t> count = cuhal::env::ParseUnsigned("count", s, 0, max);
  if (!count.ok()) return false;
  *out = *count;
  return true;
}

}  // namespace

bool ParseDevicesSpec(std::string_view spec, std::vector<DeviceProfile>* devices, std::string* error) {
  devices->clear();
  spec = Trim(spec);
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = Trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    auto fail = [&](const std::string& why) {
      *error = "FAKECUDA_DEVICES item '" + std::string(item) + "': " + why;
      return false;
    };
    if (item.empty()) return fail("empty item");
    std::uint64_t count = 1;
    std::string_view profile = item;
    if (ParseCount(item, 1024, &count)) {
      profile = "H200";  // a bare number: that many H200s
    } else if (size_t x = item.find_first_of("xX"); x != std::string_view::npos && x > 0 &&
                                                     ParseCount(item.substr(0, x), 1024, &count)) {
      profile = Trim(item.substr(x + 1));
    }
    if (count == 0) return fail("at least one device is needed");
    DeviceProfile p;
    if (EqualsIgnoreCase(profile, "H200")) {
      p = BuiltinH200Profile();
    } else {
      std::string why;
      if (!LoadProfile(std::string(profile), &p, &why)) {
        return fail("not 'H200' and not a readable profile file: " + why);
      }
    }
    for (std::uint64_t i = 0; i < count; ++i) devices->push_back(p);
  }
  if (devices->size() > 1024) {
    *error = "FAKECUDA_DEVICES: more than 1024 devices";
    return false;
  }
  MakeDevicesDistinct(devices);
  return true;
}

cuhal::Status DriverOptionsFromEnvironment(const cuhal::env::Lookup& lookup,
                                           DriverOptions* options) {
  namespace env = cuhal::env;
  *options = DriverOptions();
  if (std::optional<std::string> spec = env::ReadString("FAKECUDA_DEVICES", lookup)) {
    std::string error;
    if (!ParseDevicesSpec(*spec, &options->devices, &error)) {
      return cuhal::InvalidArgumentError(std::move(error));
    }
  }
  CUHAL_ASSIGN_OR_RETURN(options->policy,
                         env::ReadChoice<SchedulePolicy>(
                             "FAKECUDA_POLICY", options->policy,
                             {{"eager", SchedulePolicy::kEager},
                              {"adversarial", SchedulePolicy::kAdversarial}},
                             lookup));
  CUHAL_ASSIGN_OR_RETURN(options->seed,
                         env::ReadUnsigned("FAKECUDA_SEED", options->seed, 0,
                                           std::numeric_limits<std::uint64_t>::max(), lookup));
  CUHAL_ASSIGN_OR_RETURN(
      const std::uint64_t version,
      env::ReadUnsigned("FAKECUDA_DRIVER_VERSION",
                        static_cast<std::uint64_t>(options->driver_version), 1000, 99999, lookup));
  options->driver_version = static_cast<int>(version);
  return cuhal::OkStatus();
}

cuhal::StatusOr<std::unique_ptr<FakeDriver>> CreateDriverFromEnvironment(
    const cuhal::env::Lookup& lookup) {
  DriverOptions options;
  CUHAL_RETURN_IF_ERROR(DriverOptionsFromEnvironment(lookup, &options));
  std::string error;
  std::unique_ptr<FakeDriver> driver = FakeDriver::Create(std::move(options), &error);
  if (driver == nullptr) return cuhal::InvalidArgumentError(std::move(error));
  if (std::optional<std::string> spec = cuhal::env::ReadString("FAKECUDA_FAULTS", lookup)) {
    if (!driver->faults().AddRulesFromSpec(*spec, &error)) {
      return cuhal::InvalidArgumentError(std::move(error));
    }
  }
  return driver;
}

cuhal::StatusOr<bool> LeakReportFromEnvironment(const cuhal::env::Lookup& lookup) {
  return cuhal::env::ReadBool("FAKECUDA_LEAK_REPORT", false, lookup);
}

std::vector<std::string> RegisterNoopKernelsFromEnvironment(const cuhal::env::Lookup& lookup) {
  std::vector<std::string> names;
  const std::optional<std::string> value = cuhal::env::ReadString("FAKECUDA_NOOP_KERNELS", lookup);
  if (!value) return names;
  std::string_view spec(*value);
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view name = Trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (name.empty()) continue;
    RegisterKernel(std::string(name), [](const KernelLaunch&) { return CUDA_SUCCESS; });
    names.emplace_back(name);
  }
  return names;
}

}  // namespace fakecuda
