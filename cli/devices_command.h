// Copyright 2026 The cuhal Authors.
// `cuhal devices`: the devices a CUDA driver (fake or real) reports, as a table or as JSON.
#ifndef CUHAL_CLI_DEVICES_COMMAND_H_
#define CUHAL_CLI_DEVICES_COMMAND_H_

#include <optional>
#include <ostream>
#include <string>

#include "cli/bindings.h"
#include "core/base/status.h"

namespace cuhal::cli {

struct DevicesOptions {
  BackendKind backend = BackendKind::kFake;
  // Fake only: the device profile file the fake devices are made from (empty: the built-in
  // H200) and how many (default 1). Setting either with the real backend is INVALID_ARGUMENT.
  std::string profile_path;
  std::optional<int> count;
  // JSON instead of a table:
  //   {"backend": "fake", "driver_version": 13000, "device_count": 1,
  //    "devices": [{"ordinal": 0, "name": "NVIDIA H200", "uuid": "GPU-...",
  //                 "pci_bus_id": "0000:00:06.0", "total_memory": 150109880320,
  //                 "compute_capability": "9.0", "multiprocessor_count": 132,
  //                 "memory_pools_supported": true, "managed_memory_supported": true,
  //                 "host_register_supported": true}]}
  bool json = false;
};

// Binds the tables of options.backend, creates a cuhal::Driver (cuInit) and writes every
// device (Driver::EnumerateDevices) to `out`. Nothing is written on error; errors name what
// failed (the library looked for, the profile file and the position of its problem, or the
// failing driver call).
[[nodiscard]] Status RunDevices(const DevicesOptions& options, std::ostream& out);

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_DEVICES_COMMAND_H_
