// Copyright 2026 The cuhal Authors.
// The `cuhal` command line. Subcommands:
//   cuhal version [--backend fake|real]   the CUDA driver and NCCL versions, through the tables
// Exit status: 0 on success; 1 when a command fails (the error is printed to stderr); CLI11's
// non-zero codes for bad flags or subcommands.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <string>

#include "cli/bindings.h"
#include "cli/version_command.h"

namespace {

int Fail(const char* command, const cuhal::Status& status) {
  std::fprintf(stderr, "cuhal %s: %s\n", command, status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuhal: a simulation-first CUDA device core, with fake CUDA and NCCL drivers",
               "cuhal"};
  app.set_version_flag("--version", std::string("cuhal ") + CUHAL_VERSION_STRING);
  // At most one subcommand; none is reported below (CLI11's own "required" check would also
  // swallow the name of an unknown subcommand).
  app.require_subcommand(0, 1);

  std::string backend = "fake";

  CLI::App* version = app.add_subcommand(
      "version", "Print the CUDA driver and NCCL versions, as reported through the driver tables");
  version
      ->add_option("--backend", backend,
                   "fake: the in-process fake driver and NCCL (default); real: libcuda.so.1 and "
                   "libnccl.so.2 (paths from CUHAL_LIBCUDA_PATH / CUHAL_LIBNCCL_PATH)")
      ->check(CLI::IsMember({"fake", "real"}));

  CLI11_PARSE(app, argc, argv);

  if (app.get_subcommands().empty()) {
    std::fprintf(stderr, "cuhal: a subcommand is required\n%s", app.help().c_str());
    return 2;
  }
  if (version->parsed()) {
    const cuhal::cli::BackendKind kind =
        backend == "real" ? cuhal::cli::BackendKind::kReal : cuhal::cli::BackendKind::kFake;
    cuhal::Status status = cuhal::cli::RunVersion(kind, std::cout);
    if (!status.ok()) return Fail("version", status);
  }
  return 0;
}
