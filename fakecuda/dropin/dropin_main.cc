// Copyright 2026 The cuhal Authors.
// The drop-in libcuda.so.1: creates and installs a fake driver when the library is loaded
// (configured from the environment, see dropin_config.h) and tears it down when it is unloaded,
// first printing the leak report when FAKECUDA_LEAK_REPORT is on. Every cu* entry point of fakecuda
// is exported under the real driver's symbol names; nothing else is (libcuda.map).
#include <cstdio>
#include <memory>
#include <string>

#include "core/base/env.h"
#include "fakecuda/dropin/dropin_config.h"
#include "fakecuda/fake_driver.h"

namespace {

// Owned by this library from its constructor to its destructor. Not guarded: both run while the
// loader holds its lock, before and after any other code of the library may run.
fakecuda::FakeDriver* g_driver = nullptr;
bool g_leak_report = false;  // FAKECUDA_LEAK_REPORT, read once at load

__attribute__((constructor)) void FakecudaDropinLoad() {
  // Every variable is read here, so that an invalid one stops the driver at once, whichever it is.
  const cuhal::env::Lookup lookup = cuhal::env::ProcessEnvironment;
  cuhal::StatusOr<bool> leak_report = fakecuda::LeakReportFromEnvironment(lookup);
  cuhal::StatusOr<std::unique_ptr<fakecuda::FakeDriver>> driver =
      leak_report.ok() ? fakecuda::CreateDriverFromEnvironment(lookup)
                       : cuhal::StatusOr<std::unique_ptr<fakecuda::FakeDriver>>(leak_report.status());
  if (!driver.ok()) {
    // No driver: every entry point then answers CUDA_ERROR_NOT_INITIALIZED, cuInit included.
    std::fprintf(stderr,
                 "fakecuda (libcuda.so.1): invalid configuration: %s; no fake driver is "
                 "installed, cuInit fails (README.md, Configuration)\n",
                 driver.status().message().c_str());
    return;
  }
  g_leak_report = *leak_report;
  fakecuda::RegisterNoopKernelsFromEnvironment(lookup);
  g_driver = std::move(driver).value().release();
  fakecuda::Install(g_driver);
}

__attribute__((destructor)) void FakecudaDropinUnload() {
  if (g_driver == nullptr) return;
  if (g_leak_report) {
    fakecuda::Inventory live = g_driver->LiveObjects();
    std::fprintf(stderr, "fakecuda: leak report: %s\n%s", live.ToString().c_str(),
                 g_driver->LeakReport().c_str());
  }
  if (fakecuda::Installed() == g_driver) fakecuda::Install(nullptr);
  delete g_driver;
  g_driver = nullptr;
}

}  // namespace
