// Copyright 2026 The cuhal Authors.
// Entry points: initialization, versions, devices.
#include <algorithm>
#include <cstring>

#include "fakecuda/entry/entry.h"

using fakecuda::DriverState;
using fakecuda::ValidDevice;

extern "C" {

CUresult CUDAAPI cuInit(unsigned int Flags) try {
  FAKECUDA_ENTER_NOLOCK(cuInit)
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  cuhal::MutexLock lock(st->mu);
  if (st->devices.empty()) return CUDA_ERROR_NO_DEVICE;
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
  *count = static_cast<int>(st->devices.size());
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
  const std::string& n = st->devices[static_cast<size_t>(dev)].profile.name;
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
  std::memcpy(uuid->bytes, st->devices[static_cast<size_t>(dev)].profile.uuid.data(), 16);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetUuid");
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) try {
  FAKECUDA_ENTER(cuDeviceTotalMem)
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = st->devices[static_cast<size_t>(dev)].profile.total_memory;
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
  if (pciBusId == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  const std::string& id = st->devices[static_cast<size_t>(dev)].profile.pci_bus_id;
  size_t count = std::min(id.size(), static_cast<size_t>(len) - 1);
  std::memcpy(pciBusId, id.data(), count);
  pciBusId[count] = '\0';
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetPCIBusId");
}

CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) try {
  FAKECUDA_ENTER(cuDeviceGetByPCIBusId)
  if (dev == nullptr || pciBusId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (const fakecuda::Device& d : st->devices) {
    if (strcasecmp(d.profile.pci_bus_id.c_str(), pciBusId) == 0) {
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
