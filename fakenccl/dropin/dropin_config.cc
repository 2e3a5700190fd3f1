// Copyright 2026 The cuhal Authors.
#include "fakenccl/dropin/dropin_config.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace fakenccl {

cuhal::StatusOr<NcclOptions> NcclOptionsFromEnvironment(const cuhal::env::Lookup& lookup) {
  NcclOptions options;
  CUHAL_ASSIGN_OR_RETURN(
      const std::uint64_t version,
      cuhal::env::ReadUnsigned("FAKENCCL_VERSION", static_cast<std::uint64_t>(options.version), 1,
                               static_cast<std::uint64_t>(std::numeric_limits<int>::max()),
                               lookup));
  options.version = static_cast<int>(version);
  CUHAL_ASSIGN_OR_RETURN(options.timeout_ticks,
                         cuhal::env::ReadUnsigned("FAKENCCL_TIMEOUT_TICKS", options.timeout_ticks,
                                                  1, std::numeric_limits<std::uint64_t>::max(),
                                                  lookup));
  CUHAL_ASSIGN_OR_RETURN(options.cross_process,
                         cuhal::env::ReadBool("FAKENCCL_CROSS_PROCESS", false, lookup));
  return options;
}

cuhal::StatusOr<std::unique_ptr<FakeNccl>> CreateNcclFromEnvironment(
    const cuhal::env::Lookup& lookup) {
  CUHAL_ASSIGN_OR_RETURN(NcclOptions options, NcclOptionsFromEnvironment(lookup));
  std::string error;
  std::unique_ptr<FakeNccl> nccl = FakeNccl::Create(options, &error);
  if (nccl == nullptr) return cuhal::InvalidArgumentError(std::move(error));
  if (std::optional<std::string> spec = cuhal::env::ReadString("FAKENCCL_FAULTS", lookup)) {
    if (!nccl->faults().AddRulesFromSpec(*spec, &error)) {
      return cuhal::InvalidArgumentError(std::move(error));
    }
  }
  return nccl;
}

cuhal::StatusOr<bool> NcclLeakReportFromEnvironment(const cuhal::env::Lookup& lookup) {
  return cuhal::env::ReadBool("FAKENCCL_LEAK_REPORT", false, lookup);
}

}  // namespace fakenccl
