// Copyright 2026 The cuhal Authors.
// The drop-in libcuda.so.1: creates and installs a fake driver when the library is loaded
// (configured from the environment, see dropin_config.h) and tears it down when it is unloaded,
// first printing the leak report when FAKECUDA_LEAK_REPORT=1. Every cu* entry point of fakecuda
// is exported under the real driver's symbol names; nothing else is (libcuda.map).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "fakecuda/dropin/dropin_config.h"
#include "fakecuda/fake_driver.h"

namespace {

// Owned by this library from its constructor to its destructor. Not guarded: both run while the
// loader holds its lock, before and after any other code of the library may run.
fakecuda::FakeDriver* g_driver = nullptr;

const char* GetEnv(const char* name) { return std::getenv(name); }

__attribute__((constructor)) void FakecudaDropinLoad() {
  std::string error;
  std::unique_ptr<fakecuda::FakeDriver> driver = fakecuda::CreateDriverFromEnvironment(GetEnv, &error);
  if (driver == nullptr) {
    // No driver: every entry point then answers CUDA_ERROR_NOT_INITIALIZED, as a broken install.
    std::fprintf(stderr, "fakecuda (libcuda.so.1): %s; no fake driver is installed\n", error.c_str());
    return;
  }
  fakecuda::RegisterNoopKernelsFromEnvironment(GetEnv);
  g_driver = driver.release();
  fakecuda::Install(g_driver);
}

__attribute__((destructor)) void FakecudaDropinUnload() {
  if (g_driver == nullptr) return;
  const char* report = std::getenv("FAKECUDA_LEAK_REPORT");
  if (report != nullptr && std::strcmp(report, "1") == 0) {
    fakecuda::Inventory live = g_driver->LiveObjects();
    std::fprintf(stderr, "fakecuda: leak report: %s\n%s", live.ToString().c_str(),
                 g_driver->LeakReport().c_str());
  }
  if (fakecuda::Installed() == g_driver) fakecuda::Install(nullptr);
  delete g_driver;
  g_driver = nullptr;
}

}  // namespace
