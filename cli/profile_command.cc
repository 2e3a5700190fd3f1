// Copyright 2026 The cuhal Authors.
#include "cli/profile_command.h"

#include <cuda.h>

#include <fstream>
#include <string>
#include <utility>

#include "cli/text_table.h"
#include "cli/version_command.h"
#include "core/base/status_or.h"
#include "core/base/uuid.h"
#include "core/symbols/api_status.h"
#include "fakecuda/device_profile.h"
#include "fakecuda/profile_capture.h"

namespace cuhal::cli {
namespace {

// The attributes `profile show` lists by default, with what a newcomer would call them.
struct KeyAttribute {
  CUdevice_attribute attribute;
  const char* label;
};
constexpr KeyAttribute kKeyAttributes[] = {
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessors"},
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size"},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block"},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "max threads per multiprocessor"},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "max shared memory per block (opt-in)"},
    {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache (bytes)"},
    {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate (kHz)"},
    {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "memory bus width (bits)"},
    {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, "memory pools supported"},
    {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, "managed memory"},
    {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, "concurrent managed access"},
    {CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, "host register supported"},
    {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified addressing"},
};

// How many attributes fakecuda knows by name (the CU_DEVICE_ATTRIBUTE_* of its cuda.h).
int KnownAttributeCount() {
  int known = 0;
  for (int a = 0; a < fakecuda::AttributeLimit(); ++a) {
    if (!fakecuda::AttributeName(a).empty()) ++known;
  }
  return known;
}

std::string Capacity(std::size_t bytes) {
  return StrCat(bytes, " bytes (", FormatBytes(bytes), ")");
}

}  // namespace

Status RunProfileCapture(const ProfileCaptureOptions& options, std::ostream& out) {
  const std::string_view backend = BackendName(options.backend);
  CUHAL_ASSIGN_OR_RETURN(CudaBinding cuda, BindCuda(options.backend), "--backend ", backend);
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda.api, cuInit, 0), "initializing the ", backend,
                        " CUDA driver");
  int count = 0;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda.api, cuDeviceGetCount, &count), "counting devices");
  if (options.device < 0 || options.device >= count) {
    return NotFoundError(StrCat("--device ", options.device, ": the ", backend, " driver has ",
                                count, count == 1 ? " device" : " devices",
                                count > 0 ? StrCat(" (0 to ", count - 1, ")") : std::string()));
  }
  fakecuda::DeviceProfile profile;
  std::string skipped;
  std::string error;
  if (!fakecuda::CaptureProfile(*cuda.api, options.device, &profile, &skipped, &error)) {
    return InternalError(StrCat("capturing device ", options.device, ": ", error));
  }
  {
    std::ofstream file(options.out_path, std::ios::trunc);
    if (!file) return UnavailableError(StrCat(options.out_path, ": cannot open for writing"));
    file << fakecuda::ProfileToJson(profile);
    file.close();
    if (!file) return UnavailableError(StrCat(options.out_path, ": writing failed"));
  }
  out << "Captured device " << options.device << " (" << cuda.source << "): " << profile.name
      << ", " << cuhal::FormatGpuUuid(profile.uuid) << ", " << FormatBytes(profile.total_memory)
      << ", " << profile.attributes.size() << " attributes -> " << options.out_path << "\n";
  if (!skipped.empty()) out << "Attributes the driver rejected (they read as 0):\n" << skipped;
  return OkStatus();
}

Status RunProfileShow(const ProfileShowOptions& options, std::ostream& out) {
  if (!std::ifstream(options.path)) {
    return NotFoundError(StrCat(options.path, ": cannot open for reading"));
  }
  fakecuda::DeviceProfile profile;
  std::string error;
  if (!fakecuda::LoadProfile(options.path, &profile, &error)) {
    return InvalidArgumentError(StrCat("malformed device profile: ", error));
  }
  const int major = profile.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = profile.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  out << "Profile:            " << options.path << "\n"
      << "Name:               " << profile.name << "\n"
      << "UUID:               " << cuhal::FormatGpuUuid(profile.uuid) << "\n"
      << "PCI bus id:         " << profile.pci_bus_id << "\n"
      << "Total memory:       " << Capacity(profile.total_memory) << "\n"
      << "Captured with:      CUDA driver API " << profile.driver_version << " ("
      << FormatCudaVersion(profile.driver_version) << ")\n"
      << "Compute capability: " << major << "." << minor << "\n"
      << "Attributes:         " << profile.attributes.size() << " (of "
      << KnownAttributeCount() << " known to this build; absent ones read as 0)\n\n"
      << "Key attributes:\n";
  TextTable table({"ATTRIBUTE", "VALUE", "CUDA NAME"});
  table.AlignRight(1);
  for (const KeyAttribute& key : kKeyAttributes) {
    table.AddRow({key.label, std::to_string(profile.Attribute(key.attribute)),
                  std::string(fakecuda::AttributeName(key.attribute))});
  }
  table.Render(out, "  ");
  if (options.all_attributes) {
    out << "\nEvery attribute in the file:\n";
    TextTable all({"CUDA NAME", "VALUE"});
    all.AlignRight(1);
    for (const auto& [attribute, value] : profile.attributes) {
      all.AddRow({std::string(fakecuda::AttributeName(attribute)), std::to_string(value)});
    }
    all.Render(out, "  ");
  }
  return OkStatus();
}

}  // namespace cuhal::cli
