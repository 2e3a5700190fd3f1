// Copyright 2026 The cuhal Authors.
#include "fakecuda/dropin/dropin_config.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

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

bool ParseCount(std::string_view s, unsigned long long max, unsigned long long* out) {
  if (s.empty() || s.size() > 19) return false;
  unsigned long long v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + static_cast<unsigned long long>(c - '0');
  }
  if (v > max) return false;
  *out = v;
  return true;
}

// Gives device i a UUID and PCI bus id distinct from every earlier device's.
void MakeDistinct(std::vector<DeviceProfile>* devices) {
  for (size_t i = 1; i < devices->size(); ++i) {
    DeviceProfile& d = (*devices)[i];
    auto clash = [&] {
      for (size_t j = 0; j < i; ++j) {
        if ((*devices)[j].uuid == d.uuid) return true;
      }
      return false;
    };
    while (clash()) {
      for (int b = 15; b >= 0 && ++d.uuid[static_cast<size_t>(b)] == 0; --b) {
      }
      // "DDDD:BB:dd.f": the next bus.
      unsigned domain = 0, bus = 0, dev = 0, fn = 0;
      if (std::sscanf(d.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) == 4) {
        char text[32];
        std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", domain, (bus + 1) & 0xFF, dev, fn);
        d.pci_bus_id = text;
      }
    }
  }
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
    unsigned long long count = 1;
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
    for (unsigned long long i = 0; i < count; ++i) devices->push_back(p);
  }
  if (devices->size() > 1024) {
    *error = "FAKECUDA_DEVICES: more than 1024 devices";
    return false;
  }
  MakeDistinct(devices);
  return true;
}

bool DriverOptionsFromEnvironment(const std::function<const char*(const char*)>& getenv,
                                  DriverOptions* options, std::string* error) {
  *options = DriverOptions();
  if (const char* v = getenv("FAKECUDA_DEVICES"); v != nullptr && *v != '\0') {
    if (!ParseDevicesSpec(v, &options->devices, error)) return false;
  }
  if (const char* v = getenv("FAKECUDA_POLICY"); v != nullptr && *v != '\0') {
    if (EqualsIgnoreCase(v, "eager")) {
      options->policy = SchedulePolicy::kEager;
    } else if (EqualsIgnoreCase(v, "adversarial")) {
      options->policy = SchedulePolicy::kAdversarial;
    } else {
      *error = std::string("FAKECUDA_POLICY '") + v + "': expected 'eager' or 'adversarial'";
      return false;
    }
  }
  if (const char* v = getenv("FAKECUDA_SEED"); v != nullptr && *v != '\0') {
    unsigned long long seed = 0;
    if (!ParseCount(Trim(v), ~0ULL, &seed)) {
      *error = std::string("FAKECUDA_SEED '") + v + "': expected a decimal integer";
      return false;
    }
    options->seed = seed;
  }
  if (const char* v = getenv("FAKECUDA_DRIVER_VERSION"); v != nullptr && *v != '\0') {
    unsigned long long version = 0;
    if (!ParseCount(Trim(v), 99999, &version) || version < 1000) {
      *error = std::string("FAKECUDA_DRIVER_VERSION '") + v + "': expected e.g. 13000";
      return false;
    }
    options->driver_version = static_cast<int>(version);
  }
  return true;
}

std::unique_ptr<FakeDriver> CreateDriverFromEnvironment(
    const std::function<const char*(const char*)>& getenv, std::string* error) {
  DriverOptions options;
  if (!DriverOptionsFromEnvironment(getenv, &options, error)) return nullptr;
  std::unique_ptr<FakeDriver> driver = FakeDriver::Create(std::move(options), error);
  if (driver == nullptr) return nullptr;
  if (const char* v = getenv("FAKECUDA_FAULTS"); v != nullptr && *v != '\0') {
    if (!driver->faults().AddRulesFromSpec(v, error)) return nullptr;
  }
  return driver;
}

std::vector<std::string> RegisterNoopKernelsFromEnvironment(
    const std::function<const char*(const char*)>& getenv) {
  std::vector<std::string> names;
  const char* v = getenv("FAKECUDA_NOOP_KERNELS");
  if (v == nullptr) return names;
  std::string_view spec(v);
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
