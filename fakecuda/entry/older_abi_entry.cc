// Copyright 2026 The cuhal Authors.
// Entry points: older ABIs of listed entry points that the real driver still exports and that
// cuGetProcAddress hands out for older CUDA versions (error_entry.cc's table says which). Each
// forwards to the current entry point, which does the fault accounting under the plain name.
//   cuCtxCreate (v1, CUDA 2.0) and cuCtxCreate_v2 (3.2): (pctx, flags, dev)
//   cuCtxCreate_v3 (11.4): (pctx, paramsArray, numParams, flags, dev)
// cuda.h maps the name cuCtxCreate to cuCtxCreate_v4, so v1 is defined under its symbol name.
// Older ABIs with the current form's signature, which the CUDA runtime (libcudart 13.0) asks
// cuGetProcAddress for at these versions and without which it fails to start (issue 17,
// docs/cudart_on_the_fake.md): cuDeviceGetUuid (9.2; v2 differs only on MIG instances, which
// the fake has none of), cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxReset and
// cuDevicePrimaryCtxSetFlags (7.0) and cuEventElapsedTime (2.0). They forward to the current
// forms: UNMEASURED that the real driver's older forms behave the same on every edge case.
#include <cuda.h>

#include "fakecuda/entry/older_abi.h"

extern "C" {

CUresult CUDAAPI FakecudaDeviceGetUuidV1(CUuuid* uuid, CUdevice dev) {
  return cuDeviceGetUuid(uuid, dev);
}
CUresult CUDAAPI FakecudaDevicePrimaryCtxReleaseV1(CUdevice dev) {
  return cuDevicePrimaryCtxRelease(dev);
}
CUresult CUDAAPI FakecudaDevicePrimaryCtxResetV1(CUdevice dev) {
  return cuDevicePrimaryCtxReset(dev);
}
CUresult CUDAAPI FakecudaDevicePrimaryCtxSetFlagsV1(CUdevice dev, unsigned int flags) {
  return cuDevicePrimaryCtxSetFlags(dev, flags);
}
CUresult CUDAAPI FakecudaEventElapsedTimeV1(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return cuEventElapsedTime(pMilliseconds, hStart, hEnd);
}

CUresult CUDAAPI FakecudaCtxCreateV1(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return cuCtxCreate(pctx, nullptr, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return cuCtxCreate(pctx, nullptr, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                                unsigned int flags, CUdevice dev) {
  if (numParams < 0 || (numParams > 0 && paramsArray == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  if (numParams == 0) return cuCtxCreate(pctx, nullptr, flags, dev);
  CUctxCreateParams params{};
  params.execAffinityParams = paramsArray;
  params.numExecAffinityParams = numParams;
  return cuCtxCreate(pctx, &params, flags, dev);
}

}  // extern "C"
