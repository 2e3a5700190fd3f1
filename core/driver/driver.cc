// Copyright 2026 The cuhal Authors.
#include "core/driver/driver.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <span>
#include <utility>

#include "core/base/uuid.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

// The name of the first required entry of `table` that is null, or "" when none is.
template <typename Table>
std::string FirstMissingRequired(const Table& table, std::span<const SymbolInfo> symbols) {
  for (const SymbolInfo& symbol : symbols) {
    if (symbol.kind != SymbolKind::kRequired) continue;
    void* entry = nullptr;
    std::memcpy(&entry, reinterpret_cast<const char*>(&table) + symbol.offset, sizeof(entry));
    if (entry == nullptr) return symbol.name;
  }
  return {};
}

Status QueryAttribute(const CudaApi* api, CUdevice device, CUdevice_attribute attribute,
                      const char* what, int* value) {
  return CUHAL_CU(api, cuDeviceGetAttribute, value, attribute, device).AddContext(
      StrCat("reading ", what));
}

}  // namespace

std::string FormatDeviceUuid(const CUuuid& uuid) {
  std::array<unsigned char, 16> bytes;
  std::memcpy(bytes.data(), uuid.bytes, bytes.size());
  return FormatGpuUuid(bytes);
}

StatusOr<std::string> CanonicalDeviceUuid(std::string_view text) {
  auto invalid = [&] {
    return InvalidArgumentError(StrCat("'", text,
                                       "' is not a GPU UUID (expected "
                                       "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hex digits)"));
  };
  constexpr std::size_t kLength = 4 + 36;
  if (text.size() != kLength) return invalid();
  std::string out;
  out.reserve(kLength);
  for (std::size_t i = 0; i < 4; ++i) {
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  }
  if (out != "GPU-") return invalid();
  for (std::size_t i = 4; i < kLength; ++i) {
    const std::size_t pos = i - 4;
    const char c = text[i];
    if (pos == 8 || pos == 13 || pos == 18 || pos == 23) {
      if (c != '-') return invalid();
      out += '-';
      continue;
    }
    if (!std::isxdigit(static_cast<unsigned char>(c))) return invalid();
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

StatusOr<std::unique_ptr<Driver>> Driver::Create(const CudaApi* cuda, const NcclApi* nccl,
                                                 DriverOptions options) {
  const std::string context = StrCat("creating driver ", options.identifier);
  if (cuda == nullptr) {
    return InvalidArgumentError(StrCat(context, ": the CUDA table is null"));
  }
  if (std::string missing = FirstMissingRequired(*cuda, CudaSymbols()); !missing.empty()) {
    return InvalidArgumentError(StrCat(context, ": the CUDA table lacks required entry ", missing,
                                       " (", CountMissingRequired(*cuda), " missing)"));
  }
  if (nccl != nullptr) {
    if (std::string missing = FirstMissingRequired(*nccl, NcclSymbols()); !missing.empty()) {
      return InvalidArgumentError(StrCat(context, ": the NCCL table lacks required entry ",
                                         missing, " (", CountMissingRequired(*nccl),
                                         " missing)"));
    }
  }
  std::unique_ptr<Driver> driver(new Driver(cuda, nccl, std::move(options)));
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda, cuInit, 0), context, ": initializing CUDA");
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda, cuDriverGetVersion, &driver->driver_version_), context,
                        ": reading the driver version");
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda, cuDeviceGetCount, &driver->device_count_), context,
                        ": counting devices");
  return driver;
}

StatusOr<DeviceInfo> Driver::QueryDevice(int ordinal) const {
  if (ordinal < 0) {
    return InvalidArgumentError(StrCat("device ordinal must be >= 0, got ", ordinal));
  }
  if (ordinal >= device_count_) {
    return NotFoundError(StrCat("no CUDA device with ordinal ", ordinal, " (driver ",
                                options_.identifier, " sees ", device_count_, " device(s))"));
  }
  const std::string context = StrCat("querying device ", ordinal);
  DeviceInfo info;
  info.ordinal = ordinal;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda_, cuDeviceGet, &info.device, ordinal), context);

  std::array<char, 256> name{};
  CUHAL_RETURN_IF_ERROR(
      CUHAL_CU(cuda_, cuDeviceGetName, name.data(), static_cast<int>(name.size()), info.device),
      context);
  name.back() = '\0';
  info.name = name.data();

  CUuuid uuid{};
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda_, cuDeviceGetUuid, &uuid, info.device), context);
  info.uuid = FormatDeviceUuid(uuid);

  std::array<char, 64> bus{};
  CUHAL_RETURN_IF_ERROR(
      CUHAL_CU(cuda_, cuDeviceGetPCIBusId, bus.data(), static_cast<int>(bus.size()), info.device),
      context);
  bus.back() = '\0';
  info.pci_bus_id = bus.data();

  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda_, cuDeviceTotalMem, &info.total_memory, info.device),
                        context);

  int value = 0;
  CUHAL_RETURN_IF_ERROR(QueryAttribute(cuda_, info.device,
                                       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                       "compute capability (major)", &value),
                        context);
  info.compute_capability_major = value;
  CUHAL_RETURN_IF_ERROR(QueryAttribute(cuda_, info.device,
                                       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                       "compute capability (minor)", &value),
                        context);
  info.compute_capability_minor = value;
  CUHAL_RETURN_IF_ERROR(QueryAttribute(cuda_, info.device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                       "multiprocessor count", &value),
                        context);
  info.multiprocessor_count = value;
  CUHAL_RETURN_IF_ERROR(
      QueryAttribute(cuda_, info.device, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                     "memory pool support", &value),
      context);
  info.memory_pools_supported = value != 0;
  CUHAL_RETURN_IF_ERROR(QueryAttribute(cuda_, info.device, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY,
                                       "managed memory support", &value),
                        context);
  info.managed_memory_supported = value != 0;
  CUHAL_RETURN_IF_ERROR(
      QueryAttribute(cuda_, info.device, CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED,
                     "host memory registration support", &value),
      context);
  info.host_register_supported = value != 0;
  return info;
}

StatusOr<std::vector<DeviceInfo>> Driver::EnumerateDevices() const {
  std::vector<DeviceInfo> devices;
  devices.reserve(static_cast<std::size_t>(device_count_));
  for (int ordinal = 0; ordinal < device_count_; ++ordinal) {
    CUHAL_ASSIGN_OR_RETURN(DeviceInfo info, QueryDevice(ordinal), "enumerating devices");
    devices.push_back(std::move(info));
  }
  return devices;
}

StatusOr<DeviceInfo> Driver::FindDeviceByUuid(std::string_view uuid) const {
  CUHAL_ASSIGN_OR_RETURN(std::string wanted, CanonicalDeviceUuid(uuid),
                         "looking up a device by UUID");
  const std::string context = StrCat("looking up device ", wanted);
  std::string present;
  for (int ordinal = 0; ordinal < device_count_; ++ordinal) {
    CUdevice device = 0;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda_, cuDeviceGet, &device, ordinal), context,
                          ": device ", ordinal);
    CUuuid raw{};
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda_, cuDeviceGetUuid, &raw, device), context, ": device ",
                          ordinal);
    std::string candidate = FormatDeviceUuid(raw);
    if (candidate == wanted) {
      CUHAL_ASSIGN_OR_RETURN(DeviceInfo info, QueryDevice(ordinal), context);
      return info;
    }
    present += StrCat(present.empty() ? "" : ", ", ordinal, ": ", candidate);
  }
  return NotFoundError(StrCat("no CUDA device has UUID ", wanted, " (driver ",
                              options_.identifier, " sees ", device_count_, " device(s)",
                              present.empty() ? "" : ": ", present, ")"));
}

Status Driver::RequireNccl() const {
  if (nccl_ != nullptr) return OkStatus();
  return UnavailableError(
      StrCat("NCCL is not available to driver ", options_.identifier, ": channels need ",
             "libnccl.so.2 with major version ", NCCL_MAJOR, " (cuhal was built against nccl.h ",
             NCCL_MAJOR, ".", NCCL_MINOR, ".", NCCL_PATCH,
             "); pass an NcclApi table (RealNccl::Load or a fake) to Driver::Create"));
}

}  // namespace cuhal
