// Copyright 2026 The cuhal Authors.
// `cuhal version`: the CUDA driver and NCCL versions, as reported through the tables.
#ifndef CUHAL_CLI_VERSION_COMMAND_H_
#define CUHAL_CLI_VERSION_COMMAND_H_

#include <ostream>
#include <string>

#include "cli/bindings.h"
#include "core/base/status.h"

namespace cuhal::cli {

// 13000 -> "13.0" (cuDriverGetVersion's encoding: 1000 * major + 10 * minor).
std::string FormatCudaVersion(int version);
// 22809 -> "2.28.9"; 2708 -> "2.7.8" (NCCL_VERSION's two encodings).
std::string FormatNcclVersion(int version);

// Binds the tables of `kind`, calls cuInit(0), cuDriverGetVersion and ncclGetVersion through
// them, and writes, one per line as each is known:
//   cuhal 0.1.0
//   CUDA driver API (fake): 13000 (13.0)
//   NCCL (fake): 22809 (2.28.9)
// (the real backend writes "(real: <library file>)"). Returns the first error, with context;
// lines already written stay written.
[[nodiscard]] Status RunVersion(BackendKind kind, std::ostream& out);

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_VERSION_COMMAND_H_
