// Copyright 2026 The cuhal Authors.
// PLACEHOLDER: not modelled yet; every entry answers CUDA_ERROR_NOT_SUPPORTED.
#include "fakecuda/entry/entry.h"

extern "C" {

CUresult CUDAAPI cuGetErrorName([[maybe_unused]] CUresult error, [[maybe_unused]] const char **pStr) {
  FAKECUDA_ENTER(cuGetErrorName)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGetErrorString([[maybe_unused]] CUresult error, [[maybe_unused]] const char **pStr) {
  FAKECUDA_ENTER(cuGetErrorString)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGetProcAddress([[maybe_unused]] const char *symbol, [[maybe_unused]] void **pfn, [[maybe_unused]] int cudaVersion, [[maybe_unused]] cuuint64_t flags, [[maybe_unused]] CUdriverProcAddressQueryResult *symbolStatus) {
  FAKECUDA_ENTER(cuGetProcAddress)
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"
