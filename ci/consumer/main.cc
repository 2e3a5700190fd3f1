// Copyright 2026 The cuhal Authors.
// Uses the installed cuhal package: fills CudaApi/NcclApi tables from the fakes and calls through
// them. Exits 0 on success.
#include <cstdio>

#include "core/base/status.h"
#include "core/base/status_or.h"
#include "core/symbols/api_status.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"
#include "fakecuda/fake_driver.h"
#include "fakenccl/fake_nccl.h"

namespace {

cuhal::Status Run() {
  fakecuda::ScopedDriver driver;
  fakenccl::ScopedNccl nccl;
  cuhal::CudaApi cuda_api;
  fakecuda::FillCudaApi(&cuda_api);
  cuhal::NcclApi nccl_api;
  fakenccl::FillNcclApi(&nccl_api);

  CUHAL_RETURN_IF_ERROR(CUHAL_CU(&cuda_api, cuInit, 0));
  int driver_version = 0;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(&cuda_api, cuDriverGetVersion, &driver_version));
  int nccl_version = 0;
  CUHAL_RETURN_IF_ERROR(CUHAL_NCCL(&nccl_api, ncclGetVersion, &nccl_version));
  std::printf("cuhal consumer: CUDA driver API (fake) %d, NCCL (fake) %d\n", driver_version,
              nccl_version);
  return cuhal::OkStatus();
}

}  // namespace

int main() {
  const cuhal::Status status = Run();
  if (!status.ok()) {
    std::fprintf(stderr, "cuhal consumer: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
