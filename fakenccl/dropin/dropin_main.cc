// Copyright 2026 The cuhal Authors.
// The drop-in libnccl.so.2: creates and installs a FakeNccl when the library is loaded,
// configured from the environment (FAKENCCL_VERSION, _TIMEOUT_TICKS, _FAULTS, _LEAK_REPORT: see
// dropin_config.h).
// The entry points, those outside cuhal's table included (ncclBcast, ncclCommRegister...), are
// fakenccl's (entry_points.cc, with their pnccl* aliases). Collectives run on fakecuda, found at
// run time (dropin/hooks.cc).
#include <nccl.h>

#include <cstdio>
#include <memory>
#include <utility>

#include "core/base/env.h"
#include "fakenccl/dropin/dropin_config.h"
#include "fakenccl/fake_nccl.h"

namespace {

// Owned by this library for the rest of the process: queued stream work may outlive unloading.
fakenccl::FakeNccl* g_nccl = nullptr;
bool g_leak_report = false;  // FAKENCCL_LEAK_REPORT, read once at load

__attribute__((constructor)) void FakencclDropinLoad() try {
  // Every variable is read here, so that an invalid one stops the library at once.
  const cuhal::env::Lookup lookup = cuhal::env::ProcessEnvironment;
  cuhal::StatusOr<bool> leak_report = fakenccl::NcclLeakReportFromEnvironment(lookup);
  cuhal::StatusOr<std::unique_ptr<fakenccl::FakeNccl>> nccl =
      leak_report.ok() ? fakenccl::CreateNcclFromEnvironment(lookup)
                       : cuhal::StatusOr<std::unique_ptr<fakenccl::FakeNccl>>(leak_report.status());
  if (!nccl.ok()) {
    // No FakeNccl: every entry point then answers ncclInvalidUsage.
    std::fprintf(stderr,
                 "fakenccl (libnccl.so.2): invalid configuration: %s; no fake NCCL is "
                 "installed, every call fails (README.md, Configuration)\n",
                 nccl.status().message().c_str());
    return;
  }
  g_leak_report = *leak_report;
  g_nccl = std::move(nccl).value().release();
  fakenccl::Install(g_nccl);
} catch (...) {
  std::fprintf(stderr, "fakenccl (libnccl.so.2): loading failed with an exception; no fake NCCL "
               "is installed\n");
}

__attribute__((destructor)) void FakencclDropinUnload() try {
  if (g_nccl == nullptr || !g_leak_report) return;
  std::fprintf(stderr, "fakenccl: leak report: %s\n%s",
               g_nccl->LiveObjects().ToString().c_str(), g_nccl->LeakReport().c_str());
} catch (...) {
  std::fprintf(stderr, "fakenccl (libnccl.so.2): the leak report failed with an exception\n");
}

}  // namespace
