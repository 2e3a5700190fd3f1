// Copyright 2026 The cuhal Authors.
#include "cli/version_command.h"

#include "core/base/status_or.h"
#include "core/symbols/api_status.h"
#include "core/symbols/real_loader.h"

#ifndef CUHAL_VERSION_STRING
#error "CUHAL_VERSION_STRING must be defined by the build (the project's version)"
#endif

namespace cuhal::cli {

std::string FormatCudaVersion(int version) {
  return StrCat(version / 1000, ".", (version % 1000) / 10);
}

std::string FormatNcclVersion(int version) {
  const NcclVersion v = DecodeNcclVersion(version);
  return StrCat(v.major, ".", v.minor, ".", v.patch);
}

Status RunVersion(BackendKind kind, std::ostream& out) {
  const std::string_view backend = BackendName(kind);
  out << "cuhal " << CUHAL_VERSION_STRING << "\n" << std::flush;

  CUHAL_ASSIGN_OR_RETURN(CudaBinding cuda, BindCuda(kind), "--backend ", backend);
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda.api, cuInit, 0), "initializing the ", backend,
                        " CUDA driver");
  int driver_version = 0;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(cuda.api, cuDriverGetVersion, &driver_version),
                        "reading the ", backend, " CUDA driver version");
  out << "CUDA driver API (" << cuda.source << "): " << driver_version << " ("
      << FormatCudaVersion(driver_version) << ")\n"
      << std::flush;

  CUHAL_ASSIGN_OR_RETURN(NcclBinding nccl, BindNccl(kind), "--backend ", backend);
  int nccl_version = 0;
  CUHAL_RETURN_IF_ERROR(CUHAL_NCCL(nccl.api, ncclGetVersion, &nccl_version), "reading the ",
                        backend, " NCCL version");
  out << "NCCL (" << nccl.source << "): " << nccl_version << " (" << FormatNcclVersion(nccl_version)
      << ")\n"
      << std::flush;
  return OkStatus();
}

}  // namespace cuhal::cli
