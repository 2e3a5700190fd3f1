// Copyright 2026 The cuhal Authors.
// Driver: the entry point of the device core. It is handed the CUDA (and optionally NCCL) tables,
// initializes CUDA and describes the devices it can see.
#ifndef CUHAL_CORE_DRIVER_DRIVER_H_
#define CUHAL_CORE_DRIVER_DRIVER_H_

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"

namespace cuhal {

// What one CUDA device is, as the driver reported it when it was queried.
struct DeviceInfo {
  int ordinal = -1;        // 0-based, in the driver's order (after CUDA_VISIBLE_DEVICES)
  CUdevice device = 0;     // the driver's handle for it (cuDeviceGet)
  std::string name;        // "NVIDIA H200"
  std::string uuid;        // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase hex
  std::string pci_bus_id;  // "0000:18:00.0"
  std::size_t total_memory = 0;  // bytes
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessor_count = 0;
  bool memory_pools_supported = false;   // CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED
  bool managed_memory_supported = false;  // CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
  bool host_register_supported = false;   // CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED
};

// "GPU-01234567-89ab-cdef-0123-456789abcdef" for the 16 bytes of a CUuuid (as nvidia-smi prints).
[[nodiscard]] std::string FormatDeviceUuid(const CUuuid& uuid);
// Checks and canonicalizes a device UUID string: "GPU-" (any case) followed by 32 hex digits in
// 8-4-4-4-12 groups (any case). Returns the lowercase form, or INVALID_ARGUMENT naming the text.
[[nodiscard]] StatusOr<std::string> CanonicalDeviceUuid(std::string_view text);

struct DriverOptions {
  // Names the driver in messages and in the devices it creates ("cuda").
  std::string identifier = "cuda";
};

// The device core's driver: holds the CUDA table (and the NCCL table when there is one),
// initializes CUDA once, and enumerates devices by ordinal or UUID.
//
// Ownership: the caller owns the Driver (unique_ptr from Create) and the tables it was given; the
// tables must outlive the Driver and every Device created from it (a Device borrows the tables,
// not the Driver, so a Device may outlive its Driver). Thread-safety: immutable after Create;
// every method may be called from any thread concurrently (each query makes its own driver calls,
// which are thread-safe). Stream ordering: none; nothing here touches a stream.
class Driver {
 public:
  // Checks the tables (every required entry present), calls cuInit(0), reads the driver version
  // and counts the devices. `nccl` may be null: everything works without it except channel
  // creation (RequireNccl says why). Errors: INVALID_ARGUMENT for a null CUDA table or an
  // incomplete table (naming the first missing entry); otherwise the failing driver call, named
  // with its CUresult, under "creating driver cuda: ...".
  [[nodiscard]] static StatusOr<std::unique_ptr<Driver>> Create(const CudaApi* cuda,
                                                                const NcclApi* nccl = nullptr,
                                                                DriverOptions options = {});

  Driver(const Driver&) = delete;             // devices refer to its tables by address
  Driver& operator=(const Driver&) = delete;  // ditto
  ~Driver() = default;

  [[nodiscard]] const std::string& identifier() const noexcept { return options_.identifier; }
  [[nodiscard]] const CudaApi* cuda() const noexcept { return cuda_; }
  // Null when the driver was created without NCCL.
  [[nodiscard]] const NcclApi* nccl() const noexcept { return nccl_; }
  // cuDriverGetVersion's answer (13000 for CUDA 13.0).
  [[nodiscard]] int driver_version() const noexcept { return driver_version_; }
  // cuDeviceGetCount's answer at Create (the device set of a process does not change).
  [[nodiscard]] int device_count() const noexcept { return device_count_; }

  // Describes the device with this ordinal (driver calls: cuDeviceGet, name, UUID, PCI bus id,
  // total memory and six attributes). INVALID_ARGUMENT for a negative ordinal, NOT_FOUND for one
  // >= device_count(), else the failing call under "querying device <ordinal>".
  [[nodiscard]] StatusOr<DeviceInfo> QueryDevice(int ordinal) const;
  // Every device, in ordinal order.
  [[nodiscard]] StatusOr<std::vector<DeviceInfo>> EnumerateDevices() const;
  // The device whose UUID is `uuid` ("GPU-...", compared case-insensitively). INVALID_ARGUMENT
  // for text that is not a GPU UUID, NOT_FOUND (listing the UUIDs present) when no device has it.
  [[nodiscard]] StatusOr<DeviceInfo> FindDeviceByUuid(std::string_view uuid) const;

  // OK when an NCCL table was given; otherwise UNAVAILABLE saying which library and version
  // channel creation needs.
  [[nodiscard]] Status RequireNccl() const;

 private:
  Driver(const CudaApi* cuda, const NcclApi* nccl, DriverOptions options)
      : cuda_(cuda), nccl_(nccl), options_(std::move(options)) {}

  const CudaApi* const cuda_;
  const NcclApi* const nccl_;
  const DriverOptions options_;
  int driver_version_ = 0;
  int device_count_ = 0;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DRIVER_DRIVER_H_
