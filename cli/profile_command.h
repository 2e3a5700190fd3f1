// Copyright 2026 The cuhal Authors.
// `cuhal profile capture` (record a device profile for the fake from a driver, normally the real
// one) and `cuhal profile show` (describe a profile file).
#ifndef CUHAL_CLI_PROFILE_COMMAND_H_
#define CUHAL_CLI_PROFILE_COMMAND_H_

#include <ostream>
#include <string>

#include "cli/bindings.h"
#include "core/base/status.h"

namespace cuhal::cli {

struct ProfileCaptureOptions {
  // Where the JSON profile goes (overwritten).
  std::string out_path;
  // The device ordinal to record.
  int device = 0;
  // kReal (the point of capturing); kFake records the fake's own H200, which is how the command
  // is tested without a GPU.
  BackendKind backend = BackendKind::kReal;
};

// Binds the CUDA table, calls cuInit, records device `options.device` with
// fakecuda::CaptureProfile (fakecuda/profile_capture.h, the code fakecuda_capture uses), writes
// it as JSON (fakecuda::ProfileToJson) and says what it wrote, and which attributes the driver
// rejected. Errors: UNAVAILABLE naming the library when it cannot be loaded, the failing driver
// call (cuInit without a GPU), NOT_FOUND for a device the driver does not have, UNAVAILABLE
// naming the file when it cannot be written.
[[nodiscard]] Status RunProfileCapture(const ProfileCaptureOptions& options, std::ostream& out);

struct ProfileShowOptions {
  std::string path;
  // Also list every attribute with its value.
  bool all_attributes = false;
};

// Parses the file with fakecuda's loader (fakecuda/device_profile.h) and writes its name, UUID,
// PCI bus id, memory, driver version, key attributes and number of attributes. Errors: NOT_FOUND
// for a file that cannot be read; INVALID_ARGUMENT for a malformed one, naming the file and where
// the problem is (the JSON parser's line and column, or the bad field).
[[nodiscard]] Status RunProfileShow(const ProfileShowOptions& options, std::ostream& out);

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_PROFILE_COMMAND_H_
