// Copyright 2026 The cuhal Authors.
// PLACEHOLDER: not modelled yet; every entry answers CUDA_ERROR_NOT_SUPPORTED.
#include "fakecuda/entry/entry.h"

extern "C" {

CUresult CUDAAPI cuModuleLoadData([[maybe_unused]] CUmodule *module, [[maybe_unused]] const void *image) {
  FAKECUDA_ENTER(cuModuleLoadData)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuModuleLoadDataEx([[maybe_unused]] CUmodule *module, [[maybe_unused]] const void *image, [[maybe_unused]] unsigned int numOptions, [[maybe_unused]] CUjit_option *options, [[maybe_unused]] void **optionValues) {
  FAKECUDA_ENTER(cuModuleLoadDataEx)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuModuleUnload([[maybe_unused]] CUmodule hmod) {
  FAKECUDA_ENTER(cuModuleUnload)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuModuleGetFunction([[maybe_unused]] CUfunction *hfunc, [[maybe_unused]] CUmodule hmod, [[maybe_unused]] const char *name) {
  FAKECUDA_ENTER(cuModuleGetFunction)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuModuleGetGlobal([[maybe_unused]] CUdeviceptr *dptr, [[maybe_unused]] size_t *bytes, [[maybe_unused]] CUmodule hmod, [[maybe_unused]] const char *name) {
  FAKECUDA_ENTER(cuModuleGetGlobal)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuFuncGetAttribute([[maybe_unused]] int *pi, [[maybe_unused]] CUfunction_attribute attrib, [[maybe_unused]] CUfunction hfunc) {
  FAKECUDA_ENTER(cuFuncGetAttribute)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuFuncSetAttribute([[maybe_unused]] CUfunction hfunc, [[maybe_unused]] CUfunction_attribute attrib, [[maybe_unused]] int value) {
  FAKECUDA_ENTER(cuFuncSetAttribute)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuLaunchKernel([[maybe_unused]] CUfunction f, [[maybe_unused]] unsigned int gridDimX, [[maybe_unused]] unsigned int gridDimY, [[maybe_unused]] unsigned int gridDimZ, [[maybe_unused]] unsigned int blockDimX, [[maybe_unused]] unsigned int blockDimY, [[maybe_unused]] unsigned int blockDimZ, [[maybe_unused]] unsigned int sharedMemBytes, [[maybe_unused]] CUstream hStream, [[maybe_unused]] void **kernelParams, [[maybe_unused]] void **extra) {
  FAKECUDA_ENTER(cuLaunchKernel)
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"
