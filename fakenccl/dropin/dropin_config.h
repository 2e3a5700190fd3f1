// Copyright 2026 The cuhal Authors.
// How the drop-in libnccl.so.2 configures its FakeNccl from the environment:
//   FAKENCCL_VERSION        what ncclGetVersion reports, a decimal integer in [1, 2147483647]
//                           (default: the nccl.h it was built with, NCCL_VERSION_CODE);
//   FAKENCCL_TIMEOUT_TICKS  NcclOptions::timeout_ticks, a decimal integer >= 1 (default 30000);
//   FAKENCCL_CROSS_PROCESS  a boolean: NcclOptions::cross_process (ncclGetUniqueId makes ids of
//                           communicators across processes). Default: off;
//   FAKENCCL_FAULTS         fault rules and rank deaths (NcclFaultInjector's syntax);
//   FAKENCCL_LEAK_REPORT    a boolean: print live communicators to stderr when the library
//                           unloads. Default: off.
// Values follow core/base/env.h's rules. An invalid value of any of them (a bad FAKENCCL_FAULTS
// included) is an error naming the variable; the drop-in then installs no FakeNccl, so every
// entry point answers ncclInvalidUsage (README.md "Configuration"), as the drop-in libcuda.so.1
// does with a bad FAKECUDA_* variable.
#ifndef CUHAL_FAKENCCL_DROPIN_DROPIN_CONFIG_H_
#define CUHAL_FAKENCCL_DROPIN_DROPIN_CONFIG_H_

#include <memory>

#include "core/base/env.h"
#include "core/base/status_or.h"
#include "fakenccl/fake_nccl.h"

namespace fakenccl {

// FAKENCCL_VERSION, FAKENCCL_TIMEOUT_TICKS and FAKENCCL_CROSS_PROCESS through `lookup`, over NcclOptions' defaults;
// INVALID_ARGUMENT naming the variable when one is invalid.
cuhal::StatusOr<NcclOptions> NcclOptionsFromEnvironment(const cuhal::env::Lookup& lookup);

// The drop-in's FakeNccl: the options above and the rules of FAKENCCL_FAULTS;
// INVALID_ARGUMENT when any of them is invalid.
cuhal::StatusOr<std::unique_ptr<FakeNccl>> CreateNcclFromEnvironment(
    const cuhal::env::Lookup& lookup);

// FAKENCCL_LEAK_REPORT (default false).
cuhal::StatusOr<bool> NcclLeakReportFromEnvironment(const cuhal::env::Lookup& lookup);

}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_DROPIN_DROPIN_CONFIG_H_
