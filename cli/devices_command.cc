// Copyright 2026 The cuhal Authors.
#include "cli/devices_command.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "cli/text_table.h"
#include "cli/version_command.h"
#include "core/base/status_or.h"
#include "core/driver/driver.h"

namespace cuhal::cli {
namespace {

std::string YesNo(bool value) { return value ? "yes" : "no"; }

std::string ComputeCapability(const DeviceInfo& info) {
  return StrCat(info.compute_capability_major, ".", info.compute_capability_minor);
}

void WriteJson(const CudaBinding& binding, const Driver& driver,
               const std::vector<DeviceInfo>& devices, std::ostream& out) {
  nlohmann::ordered_json doc;
  doc["backend"] = binding.source;
  doc["driver_version"] = driver.driver_version();
  doc["device_count"] = devices.size();
  doc["devices"] = nlohmann::ordered_json::array();
  for (const DeviceInfo& d : devices) {
    nlohmann::ordered_json j;
    j["ordinal"] = d.ordinal;
    j["name"] = d.name;
    j["uuid"] = d.uuid;
    j["pci_bus_id"] = d.pci_bus_id;
    j["total_memory"] = static_cast<std::uint64_t>(d.total_memory);
    j["compute_capability"] = ComputeCapability(d);
    j["multiprocessor_count"] = d.multiprocessor_count;
    j["memory_pools_supported"] = d.memory_pools_supported;
    j["managed_memory_supported"] = d.managed_memory_supported;
    j["host_register_supported"] = d.host_register_supported;
    doc["devices"].push_back(std::move(j));
  }
  // Replace invalid UTF-8 (a driver's name string) instead of throwing.
  out << doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

void WriteTable(const CudaBinding& binding, const Driver& driver,
                const std::vector<DeviceInfo>& devices, std::ostream& out) {
  out << "CUDA driver API (" << binding.source << "): " << driver.driver_version() << " ("
      << FormatCudaVersion(driver.driver_version()) << "), " << devices.size()
      << (devices.size() == 1 ? " device" : " devices") << "\n\n";
  TextTable table({"ORDINAL", "NAME", "UUID", "PCI BUS ID", "MEMORY", "CC", "SMS", "POOLS",
                   "MANAGED", "HOST REGISTER"});
  table.AlignRight(0);
  table.AlignRight(4);
  table.AlignRight(6);
  for (const DeviceInfo& d : devices) {
    table.AddRow({std::to_string(d.ordinal), d.name, d.uuid, d.pci_bus_id,
                  FormatBytes(d.total_memory), ComputeCapability(d),
                  std::to_string(d.multiprocessor_count), YesNo(d.memory_pools_supported),
                  YesNo(d.managed_memory_supported), YesNo(d.host_register_supported)});
  }
  table.Render(out);
}

}  // namespace

Status RunDevices(const DevicesOptions& options, std::ostream& out) {
  CudaBinding binding;
  if (options.backend == BackendKind::kFake) {
    CUHAL_ASSIGN_OR_RETURN(
        std::vector<fakecuda::DeviceProfile> profiles,
        FakeDeviceProfiles(options.profile_path, options.count.value_or(1)));
    fakecuda::DriverOptions driver_options;
    driver_options.devices = std::move(profiles);
    CUHAL_ASSIGN_OR_RETURN(binding, BindFakeCuda(std::move(driver_options)));
  } else {
    if (!options.profile_path.empty() || options.count.has_value()) {
      return InvalidArgumentError(
          "--profile and --count describe fake devices: they need --backend fake");
    }
    CUHAL_ASSIGN_OR_RETURN(binding, BindCuda(BackendKind::kReal), "--backend real");
  }
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(binding.api),
                         "--backend ", BackendName(options.backend));
  CUHAL_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, driver->EnumerateDevices());
  if (options.json) {
    WriteJson(binding, *driver, devices, out);
  } else {
    WriteTable(binding, *driver, devices, out);
  }
  return OkStatus();
}

}  // namespace cuhal::cli
