// Copyright 2026 The cuhal Authors.
// Device profiles: what a fake device reports, captured from a real GPU into a JSON file.
#ifndef CUHAL_FAKECUDA_DEVICE_PROFILE_H_
#define CUHAL_FAKECUDA_DEVICE_PROFILE_H_

#include <cuda.h>

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fakecuda {

// Everything cuDeviceGet* reports for one device.
//
// JSON form (written by ProfileToJson, read by ParseProfile):
//   {"format": "cuhal-device-profile-1", "name": "NVIDIA H200", "uuid": "GPU-xxxxxxxx-xxxx-...",
//    "pci_bus_id": "0000:18:00.0", "total_memory": 150...,
//    "driver_version": 13000,
//    "attributes": {"CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK": 1024, ...}}
// Attribute keys are the cuda.h enumerator names; unknown keys are an error (a typo must not
// silently become "unsupported"); attributes absent from the file report 0.
struct DeviceProfile {
  std::string name;
  std::array<unsigned char, 16> uuid{};
  std::string pci_bus_id;
  std::size_t total_memory = 0;
  int driver_version = 0;  // the driver it was captured with (informational)
  std::map<int, int> attributes;  // CUdevice_attribute -> value

  int Attribute(CUdevice_attribute attr) const {
    auto it = attributes.find(static_cast<int>(attr));
    return it == attributes.end() ? 0 : it->second;
  }
};

// Parses a profile; on failure returns false and sets *error to what is wrong and where
// ("attributes.CU_DEVICE_ATTRIBUTE_FOO: unknown attribute").
bool ParseProfile(std::string_view json, DeviceProfile* profile, std::string* error);
// Reads and parses a file; errors name the file.
bool LoadProfile(const std::string& path, DeviceProfile* profile, std::string* error);
std::string ProfileToJson(const DeviceProfile& profile);

// The NVIDIA H200 profile captured on the GPU machine (fakecuda/profiles/h200.json, embedded).
const DeviceProfile& BuiltinH200Profile();

// Makes every device distinct from the earlier ones, as on a real multi-GPU host: a device whose
// UUID repeats an earlier device's gets the next UUID (a 128-bit increment) and the next PCI bus
// number ("DDDD:BB:dd.f" with BB + 1), until it clashes with none. Devices already distinct keep
// their identity, so the first device is always its profile unchanged.
void MakeDevicesDistinct(std::vector<DeviceProfile>* devices);
// `count` devices made from `profile`, distinct as above.
std::vector<DeviceProfile> DistinctDevices(const DeviceProfile& profile, int count);

// The cuda.h spelling of an attribute ("CU_DEVICE_ATTRIBUTE_WARP_SIZE"), or "" if unknown.
std::string_view AttributeName(int attribute);
// The attribute named `name`, or -1.
int AttributeFromName(std::string_view name);
// One past the largest valid CUdevice_attribute of the cuda.h fakecuda was built with.
int AttributeLimit();

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" -> 16 bytes (the other way: cuhal::FormatGpuUuid,
// core/base/uuid.h).
bool UuidFromString(std::string_view text, std::array<unsigned char, 16>* uuid);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_DEVICE_PROFILE_H_
