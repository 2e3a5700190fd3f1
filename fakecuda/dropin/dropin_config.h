// Copyright 2026 The cuhal Authors.
// How the drop-in libcuda.so.1 configures its fake driver from the environment.
//
//   FAKECUDA_DEVICES   the devices, a ','-separated list of items "[N x]PROFILE" where PROFILE is
//                      "H200" (the built-in profile, any case) or the path of a profile JSON
//                      file (fakecuda/device_profile.h); a bare number N means N x H200.
//                      Examples: "2", "8xH200", "/opt/profiles/a100.json", "H200,2x/p/l40s.json".
//                      Devices that would repeat an earlier device's UUID get the next UUID and
//                      the next PCI bus number, so every device is distinct. Default: 1 x H200.
//   FAKECUDA_POLICY    "eager" (default) or "adversarial" (fakecuda::SchedulePolicy).
//   FAKECUDA_SEED      the scheduler's seed, a decimal integer (default 0).
//   FAKECUDA_DRIVER_VERSION  what cuDriverGetVersion reports, in [1000, 99999] (default 13000).
//   FAKECUDA_FAULTS    fault rules (fakecuda/fault_injector.h), e.g.
//                      "cuMemAlloc:nth:3:CUDA_ERROR_OUT_OF_MEMORY;*:fraction:0.01:CUDA_ERROR_UNKNOWN@7".
//   FAKECUDA_LEAK_REPORT  a boolean: print the live-object report to stderr when the library
//                      unloads (at process exit). Default: off.
//   FAKECUDA_RACECHECK "off" (default), "report" or "fail": the stream-order race detector
//                      (fakecuda/race/race_detector.h); read by FakeDriver::Create whenever
//                      DriverOptions::racecheck is unset, so it applies to the C++ API too.
//   FAKECUDA_NOOP_KERNELS  ','-separated kernel names that run as no-ops (a program's kernels
//                      have no host implementation in the drop-in); "*" makes every kernel
//                      without one a no-op. Default: none (launching them is
//                      CUDA_ERROR_NOT_SUPPORTED, see fakecuda/kernel_registry.h).
// Values follow core/base/env.h's rules (strict integers, booleans 1/0 true/false yes/no on/off,
// choices in any case). An invalid value of any of them is an error naming the variable; the
// drop-in then installs no driver, so cuInit fails (README.md "Configuration").
#ifndef CUHAL_FAKECUDA_DROPIN_DROPIN_CONFIG_H_
#define CUHAL_FAKECUDA_DROPIN_DROPIN_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/base/env.h"
#include "core/base/status_or.h"
#include "fakecuda/device_profile.h"
#include "fakecuda/fake_driver.h"

namespace fakecuda {

// Parses a FAKECUDA_DEVICES value; false with *error (naming the item) when malformed or when a
// profile file cannot be read.
bool ParseDevicesSpec(std::string_view spec, std::vector<DeviceProfile>* devices, std::string* error);

// Reads FAKECUDA_DEVICES, FAKECUDA_POLICY, FAKECUDA_SEED and FAKECUDA_DRIVER_VERSION through
// `lookup` into *options; INVALID_ARGUMENT naming the variable when one is invalid.
cuhal::Status DriverOptionsFromEnvironment(const cuhal::env::Lookup& lookup, DriverOptions* options);

// Creates the drop-in's driver from the environment (the variables above and FAKECUDA_FAULTS);
// INVALID_ARGUMENT when the environment is invalid.
cuhal::StatusOr<std::unique_ptr<FakeDriver>> CreateDriverFromEnvironment(
    const cuhal::env::Lookup& lookup);

// FAKECUDA_LEAK_REPORT (default false).
cuhal::StatusOr<bool> LeakReportFromEnvironment(const cuhal::env::Lookup& lookup);

// Registers the no-op kernels FAKECUDA_NOOP_KERNELS names (process-wide); the names registered.
std::vector<std::string> RegisterNoopKernelsFromEnvironment(const cuhal::env::Lookup& lookup);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_DROPIN_DROPIN_CONFIG_H_
