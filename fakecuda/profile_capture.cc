// Copyright 2026 The cuhal Authors.
#include "fakecuda/profile_capture.h"

#include <cstring>
#include <sstream>

namespace fakecuda {

bool CaptureProfile(const cuhal::CudaApi& api, int ordinal, DeviceProfile* profile,
                    std::string* skipped, std::string* error) {
  auto fail = [error](const std::string& what, CUresult r) {
    if (error) *error = what + " failed with CUresult " + std::to_string(static_cast<int>(r));
    return false;
  };
  CUdevice dev = 0;
  if (CUresult r = api.cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS) return fail("cuDeviceGet", r);
  DeviceProfile p;
  char name[256] = {};
  if (CUresult r = api.cuDeviceGetName(name, sizeof(name), dev); r != CUDA_SUCCESS) {
    return fail("cuDeviceGetName", r);
  }
  p.name = name;
  CUuuid uuid;
  if (CUresult r = api.cuDeviceGetUuid(&uuid, dev); r != CUDA_SUCCESS) {
    return fail("cuDeviceGetUuid", r);
  }
  std::memcpy(p.uuid.data(), uuid.bytes, 16);
  char bus[64] = {};
  if (CUresult r = api.cuDeviceGetPCIBusId(bus, sizeof(bus), dev); r != CUDA_SUCCESS) {
    return fail("cuDeviceGetPCIBusId", r);
  }
  p.pci_bus_id = bus;
  size_t total = 0;
  if (CUresult r = api.cuDeviceTotalMem(&total, dev); r != CUDA_SUCCESS) {
    return fail("cuDeviceTotalMem", r);
  }
  p.total_memory = total;
  if (CUresult r = api.cuDriverGetVersion(&p.driver_version); r != CUDA_SUCCESS) {
    return fail("cuDriverGetVersion", r);
  }
  std::ostringstream skip;
  for (int attr = 1; attr < AttributeLimit(); ++attr) {
    if (AttributeName(attr).empty()) continue;
    int value = 0;
    CUresult r = api.cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(attr), dev);
    if (r != CUDA_SUCCESS) {
      skip << AttributeName(attr) << " (CUresult " << static_cast<int>(r) << ")\n";
      continue;
    }
    p.attributes[attr] = value;
  }
  if (skipped) *skipped = skip.str();
  *profile = std::move(p);
  return true;
}

std::string CaptureErrorStrings(const cuhal::CudaApi& api) {
  std::ostringstream os;
  os << "// cuGetErrorString of the real driver for every CUresult of cuda.h, captured by\n"
        "// fakecuda_capture (fakecuda/capture). One line per code: FAKECUDA_ERROR_STRING(code, text).\n"
        "// No include guard: X-macro list.\n";
  struct Code {
    const char* name;
    CUresult value;
  };
  static const Code kCodes[] = {
#define CUHAL_CU_RESULT(name) {#name, name},
#include "core/symbols/cu_result_list.inc"
#undef CUHAL_CU_RESULT
  };
  for (const Code& c : kCodes) {
    const char* text = nullptr;
    if (api.cuGetErrorString(c.value, &text) != CUDA_SUCCESS || text == nullptr) text = "";
    std::string escaped;
    for (const char* p = text; *p; ++p) {
      if (*p == '"' || *p == '\\') escaped += '\\';
      escaped += *p;
    }
    os << "FAKECUDA_ERROR_STRING(" << c.name << ", \"" << escaped << "\")\n";
  }
  return os.str();
}

}  // namespace fakecuda
