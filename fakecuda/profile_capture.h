// Copyright 2026 The cuhal Authors.
// Recording a device profile (and the driver's error strings) through any CudaApi table: run it
// with the real binding on a GPU machine to produce the data files the fake serves.
#ifndef CUHAL_FAKECUDA_PROFILE_CAPTURE_H_
#define CUHAL_FAKECUDA_PROFILE_CAPTURE_H_

#include <string>

#include "core/symbols/cuda_api.h"
#include "fakecuda/device_profile.h"

namespace fakecuda {

// Reads name, UUID, PCI bus id, total memory, the driver version and every CU_DEVICE_ATTRIBUTE_*
// of `ordinal` through `api` (cuInit must have succeeded). Attributes the driver rejects are left
// out of the profile (so they read as 0) and listed in *skipped. False with *error on failure.
bool CaptureProfile(const cuhal::CudaApi& api, int ordinal, DeviceProfile* profile,
                    std::string* skipped, std::string* error);

// The driver's cuGetErrorName/cuGetErrorString for every CUresult of cuda.h, formatted as the
// lines of fakecuda/cuda_error_strings.inc: FAKECUDA_ERROR_STRING(CUDA_ERROR_X, "text").
std::string CaptureErrorStrings(const cuhal::CudaApi& api);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_PROFILE_CAPTURE_H_
