// Copyright 2026 The cuhal Authors.
#include "fakecuda/fake_driver.h"

namespace fakecuda {

void FillCudaApi(cuhal::CudaApi* api) {
  // Every entry of the list must have a fakecuda implementation: a missing one fails to link.
#define CUHAL_CU_PFN(kind, name, arity) api->name = &::name;
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
}

}  // namespace fakecuda
