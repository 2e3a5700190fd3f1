// Copyright 2026 The cuhal Authors.
// Entry points: initialization, versions, devices.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "fakecuda/entry/entry.h"

using fakecuda::DriverState;
using fakecuda::ValidDevice;

extern "C" {

CUresult CUDAAPI cuInit(unsigned int Flags) try {
  FAKECUDA_ENTER_NOLOCK(cuInit)
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  cuhal::MutexLock lock(st->mu);
  if (st->contexts().device_count() == 0) return CUDA_ERROR_NO_DEVICE;
  st->initialized = true;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuInit");
}

CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) try {
  // Works before cuInit, as the real driver does.
  FAKECUDA_ENTER_NOLOCK(cuDriverGetVersion)
  if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = st->options.driver_version;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDriverGetVersion");
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) try {
  FAKECUDA_ENTER(cuDeviceGet)
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGet");
}

CUresult CUDAAPI cuDeviceGetCount(int* count) try {
  FAKECUDA_ENTER(cuDeviceGetCount)
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(static_cast<std::size_t>(st->contexts().device_count()));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetCount");
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetName)
  // len == 0 crashes the real driver (measured on the H200, driver 580); the fake refuses it.
  if (name == nullptr || len == 0) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  // Like the real driver: copies at most len - 1 characters and always terminates; a negative
  // len is not an error there and the whole name is written (measured on the H200).
  const std::string& n = st->device(dev).profile.name;
  size_t count = len < 0 ? n.size() : std::min(n.size(), static_cast<size_t>(len) - 1);
  std::memcpy(name, n.data(), count);
  name[count] = '\0';
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetName");
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetUuid)
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  std::memcpy(uuid->bytes, st->device(dev).profile.uuid.data(), 16);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetUuid");
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceTotalMem)
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = st->device(dev).profile.total_memory;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceTotalMem");
}

CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) try {
  FAKECUDA_ENTER_NOLOCK(cuDeviceGetAttribute)
  // Profiles are immutable once the driver exists: no lock needed on this hot path.
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  *pi = st->profile(dev).Attribute(attrib);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetAttribute");
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceGetPCIBusId)
  // Measured on the H200 (ci/gpu-probes, case "pcibus"): len 0 writes nothing; a buffer too
  // short for the id and its NUL is CUDA_ERROR_INVALID_VALUE but still gets the truncated,
  // terminated id (len 5: "0000"); a negative len is refused after writing what len 12 would.
  if (pciBusId == nullptr || len == 0) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  const std::string& id = st->device(dev).profile.pci_bus_id;
  size_t room = len < 0 ? 12 : static_cast<size_t>(len);
  size_t count = std::min(id.size(), room - 1);
  std::memcpy(pciBusId, id.data(), count);
  pciBusId[count] = '\0';
  return len > 0 && static_cast<size_t>(len) > id.size() ? CUDA_SUCCESS
                                                          : CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetPCIBusId");
}

}  // extern "C"

namespace {

struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
};

// Parses a PCI bus id the way the H200's driver accepts it (ci/gpu-probes, case "pcibus"):
// "domain:bus:device.function", "domain:bus:device" (function 0) or "bus:device.function"
// (domain 0), hexadecimal fields of any width, leading blanks skipped, nothing after the last
// field ("0000:00:06.0 " and "0000:00:06.0:junk" are refused). sscanf's %x is what the driver
// behaves like: "0000:00:06.0x" is accepted.
bool ParsePciBusId(const char* text, PciAddress* out) {
  PciAddress a;
  int end = -1;
  if (std::sscanf(text, " %x:%x:%x.%x%n", &a.domain, &a.bus, &a.device, &a.function, &end) == 4 &&
      text[end] == '\0') {
    *out = a;
    return true;
  }
  a = PciAddress{};
  end = -1;
  if (std::sscanf(text, " %x:%x:%x%n", &a.domain, &a.bus, &a.device, &end) == 3 &&
      text[end] == '\0') {
    *out = a;
    return true;
  }
  a = PciAddress{};
  end = -1;
  if (std::sscanf(text, " %x:%x.%x%n", &a.bus, &a.device, &a.function, &end) == 3 &&
      text[end] == '\0') {
    *out = a;
    return true;
  }
  return false;
}

bool SamePci(const PciAddress& a, const PciAddress& b) {
  return a.domain == b.domain && a.bus == b.bus && a.device == b.device &&
         a.function == b.function;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) try {
  FAKECUDA_ENTER(cuDeviceGetByPCIBusId)
  if (dev == nullptr || pciBusId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  PciAddress want;
  if (!ParsePciBusId(pciBusId, &want)) return CUDA_ERROR_INVALID_VALUE;
  for (const fakecuda::Device& d : st->contexts().devices()) {
    PciAddress have;
    if (ParsePciBusId(d.profile.pci_bus_id.c_str(), &have) && SamePci(have, want)) {
      *dev = d.ordinal;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_DEVICE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetByPCIBusId");
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) try {
  FAKECUDA_ENTER(cuDeviceCanAccessPeer)
  if (canAccessPeer == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev) || !ValidDevice(st, peerDev)) return CUDA_ERROR_INVALID_DEVICE;
  // Fake devices of one driver sit on one NVLink-connected host; a device is not its own peer.
  *canAccessPeer = dev != peerDev ? 1 : 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceCanAccessPeer");
}

CUresult CUDAAPI cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib,
                                          CUdevice srcDevice, CUdevice dstDevice) try {
  FAKECUDA_ENTER(cuDeviceGetP2PAttribute)
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, srcDevice) || !ValidDevice(st, dstDevice) || srcDevice == dstDevice) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
      *value = 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
      *value = 1;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetP2PAttribute");
}

}  // extern "C"
