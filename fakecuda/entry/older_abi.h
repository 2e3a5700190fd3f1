// Copyright 2026 The cuhal Authors.
// The older ABIs fakecuda/entry/older_abi_entry.cc defines, declared once for it and for
// error_entry.cc's cuGetProcAddress table. The v1 names cuda.h maps elsewhere are defined under
// their symbol names (__asm__).
#ifndef CUHAL_FAKECUDA_ENTRY_OLDER_ABI_H_
#define CUHAL_FAKECUDA_ENTRY_OLDER_ABI_H_

#include <cuda.h>

extern "C" {
CUresult CUDAAPI FakecudaCtxCreateV1(CUcontext* pctx, unsigned int flags, CUdevice dev)
    __asm__("cuCtxCreate");
CUresult CUDAAPI cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                                unsigned int flags, CUdevice dev);
CUresult CUDAAPI FakecudaDeviceGetUuidV1(CUuuid* uuid, CUdevice dev) __asm__("cuDeviceGetUuid");
CUresult CUDAAPI FakecudaDevicePrimaryCtxReleaseV1(CUdevice dev)
    __asm__("cuDevicePrimaryCtxRelease");
CUresult CUDAAPI FakecudaDevicePrimaryCtxResetV1(CUdevice dev) __asm__("cuDevicePrimaryCtxReset");
CUresult CUDAAPI FakecudaDevicePrimaryCtxSetFlagsV1(CUdevice dev, unsigned int flags)
    __asm__("cuDevicePrimaryCtxSetFlags");
CUresult CUDAAPI FakecudaEventElapsedTimeV1(float* pMilliseconds, CUevent hStart, CUevent hEnd)
    __asm__("cuEventElapsedTime");
}

#endif  // CUHAL_FAKECUDA_ENTRY_OLDER_ABI_H_
