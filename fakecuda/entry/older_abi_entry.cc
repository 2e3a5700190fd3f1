// Copyright 2026 The cuhal Authors.
// Entry points: older ABIs of listed entry points that the real driver still exports and that
// cuGetProcAddress hands out for older CUDA versions (error_entry.cc's table says which). Each
// forwards to the current entry point, which does the fault accounting under the plain name.
//   cuCtxCreate (v1, CUDA 2.0) and cuCtxCreate_v2 (3.2): (pctx, flags, dev)
//   cuCtxCreate_v3 (11.4): (pctx, paramsArray, numParams, flags, dev)
// cuda.h maps the name cuCtxCreate to cuCtxCreate_v4, so v1 is defined under its symbol name.
#include <cuda.h>

extern "C" {

CUresult CUDAAPI FakecudaCtxCreateV1(CUcontext* pctx, unsigned int flags, CUdevice dev)
    __asm__("cuCtxCreate");
CUresult CUDAAPI cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                                unsigned int flags, CUdevice dev);

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
