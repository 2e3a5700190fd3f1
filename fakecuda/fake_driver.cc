// Copyright 2026 The cuhal Authors.
#include "fakecuda/fake_driver.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <sstream>
#include <string_view>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/thread_state.h"
#include "fakecuda/race/race_detector.h"

namespace fakecuda {
namespace {
std::atomic<FakeDriver*> g_installed{nullptr};
}  // namespace

std::string Inventory::ToString() const {
  std::ostringstream os;
  auto add = [&os](int n, const char* what) {
    if (n == 0) return;
    if (os.tellp() > 0) os << ", ";
    os << n << " " << what;
  };
  add(contexts, "context(s)");
  add(primary_retains, "primary context retain(s)");
  add(streams, "stream(s)");
  add(events, "event(s)");
  add(device_allocations, "device allocation(s)");
  add(host_allocations, "pinned host allocation(s)");
  add(host_registrations, "host registration(s)");
  add(managed_allocations, "managed allocation(s)");
  add(pools, "memory pool(s)");
  add(pool_allocations, "pool allocation(s)");
  add(modules, "module(s)");
  add(graphs, "graph(s)");
  add(graph_execs, "executable graph(s)");
  add(vmm_allocations, "VMM allocation(s)");
  add(vmm_reservations, "VMM reservation(s)");
  add(vmm_mappings, "VMM mapping(s)");
  add(arrays, "CUDA array(s)");
  add(green_contexts, "green context(s)");
  add(libraries, "library(ies)");
  std::string out = os.tellp() > 0 ? os.str() : "none";
  std::string runtime;
  if (runtime_primary_retains > 0) {
    runtime = std::to_string(runtime_primary_retains) + " primary context retain(s)";
  }
  if (runtime_libraries > 0) {
    runtime += (runtime.empty() ? "" : ", ") + std::to_string(runtime_libraries) + " library(ies)";
  }
  if (!runtime.empty()) out += " (not leaks: " + runtime + " held by the CUDA runtime)";
  return out;
}

std::unique_ptr<FakeDriver> FakeDriver::Create(DriverOptions options, std::string* error) {
  if (options.devices.empty()) options.devices.push_back(BuiltinH200Profile());
  for (size_t i = 0; i < options.devices.size(); ++i) {
    const DeviceProfile& p = options.devices[i];
    if (p.name.empty() || p.total_memory == 0) {
      if (error) *error = "device " + std::to_string(i) + ": profile needs a name and total_memory";
      return nullptr;
    }
  }
  if (!options.racecheck.has_value()) {
    RaceCheck mode = RaceCheck::kOff;
    std::string env_error;
    if (!RaceCheckFromEnvironment(&mode, &env_error)) {
      if (error) *error = env_error;
      return nullptr;
    }
    options.racecheck = mode;
  }
  return std::unique_ptr<FakeDriver>(new FakeDriver(std::make_unique<DriverState>(std::move(options))));
}

FakeDriver::FakeDriver(std::unique_ptr<DriverState> state) : state_(std::move(state)) {}

FakeDriver::~FakeDriver() {
  FakeDriver* self = this;
  g_installed.compare_exchange_strong(self, nullptr);
  if (state_->race() != nullptr) {
    cuhal::MutexLock lock(state_->mu);
    const std::size_t n = state_->race()->finding_count();
    if (n != 0) {
      std::fprintf(stderr, "fakecuda: race summary: %zu finding(s) (FAKECUDA_RACECHECK=%s)\n", n,
                   state_->race()->mode() == RaceCheck::kFail ? "fail" : "report");
    }
  }
}

RaceCheck FakeDriver::racecheck() const {
  return state_->race() == nullptr ? RaceCheck::kOff : state_->race()->mode();
}

std::vector<std::string> FakeDriver::RaceFindings() const {
  if (state_->race() == nullptr) return {};
  cuhal::MutexLock lock(state_->mu);
  return state_->race()->findings();
}

FaultInjector& FakeDriver::faults() { return state_->faults; }
const DriverOptions& FakeDriver::options() const { return state_->options; }

Inventory FakeDriver::LiveObjects() const {
  cuhal::MutexLock lock(state_->mu);
  return state_->CountLive();
}

std::string FakeDriver::LeakReport() const {
  cuhal::MutexLock lock(state_->mu);
  return state_->DescribeLive();
}

void Install(FakeDriver* driver) { g_installed.store(driver, std::memory_order_release); }
FakeDriver* Installed() { return g_installed.load(std::memory_order_acquire); }

DriverState* InstalledState() {
  FakeDriver* d = g_installed.load(std::memory_order_acquire);
  return d ? &d->state() : nullptr;
}

ScopedDriver::ScopedDriver(DriverOptions options) : ScopedDriver(std::move(options), false) {}

ScopedDriver::ScopedDriver(DriverOptions options, bool quiet)
    : driver_(FakeDriver::Create(std::move(options), &error_)), previous_(Installed()) {
  if (driver_ == nullptr && !quiet) {
    std::fprintf(stderr,
                 "fakecuda::ScopedDriver: invalid DriverOptions: %s; no fake driver is installed\n",
                 error_.c_str());
  }
  Install(driver_.get());
}

std::unique_ptr<ScopedDriver> ScopedDriver::Create(DriverOptions options, std::string* error) {
  std::unique_ptr<ScopedDriver> scoped(new ScopedDriver(std::move(options), true));
  if (!scoped->ok()) {
    if (error != nullptr) *error = scoped->error();
    return nullptr;  // restores the previous installation
  }
  return scoped;
}

FakeDriver& ScopedDriver::driver() {
  if (driver_ == nullptr) {
    std::fprintf(stderr, "fakecuda::ScopedDriver::driver(): no driver (invalid DriverOptions: %s)\n",
                 error_.c_str());
    std::abort();
  }
  return *driver_;
}

ScopedDriver::~ScopedDriver() { Install(previous_); }

std::uint64_t FakeDriver::HostFunctionExceptions() const {
  cuhal::MutexLock lock(state_->mu);
  return state_->host_function_exceptions();
}

bool PermittedInUserWork(const char* entry) noexcept {
  // Measured CUDA_SUCCESS from inside cuLaunchHostFunc and cuStreamAddCallback on the H200
  // (driver 580.159.04, ci/gpu-probes); cuEventRecordWithFlags, cuStreamAddCallback,
  // cuGetErrorString and the cuStreamGetCtx_v2 form are taken to behave as their measured
  // siblings.
  static constexpr std::string_view kPermitted[] = {
      "cuDriverGetVersion", "cuEventDestroy",   "cuEventQuery",      "cuEventRecord",
      "cuEventRecordWithFlags", "cuEventSynchronize", "cuGetErrorName", "cuGetErrorString",
      "cuLaunchHostFunc",   "cuMemsetD8Async",  "cuStreamAddCallback", "cuStreamDestroy",
      "cuStreamGetCtx",     "cuStreamGetFlags", "cuStreamQuery",     "cuStreamSynchronize",
      "cuStreamWaitEvent",
  };
  const std::string_view name(entry);
  for (std::string_view p : kPermitted) {
    if (p == name) return true;
  }
  return false;
}

CUresult EntryFailed(const char* entry) noexcept {
  CUresult result = CUDA_ERROR_UNKNOWN;
  const char* what = "an exception that is not a std::exception";
  try {
    throw;
  } catch (const std::bad_alloc& e) {
    result = CUDA_ERROR_OUT_OF_MEMORY;
    what = e.what();
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(stderr, "fakecuda: %s: the fake's implementation threw (%s); answering %s\n", entry,
               what, result == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_UNKNOWN");
  return result;
}

CUresult CurrentContextOrError(DriverState* st, Context** ctx) {
  auto& stack = ThreadContextStack(st->serial);
  if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  Context* c = st->contexts().Find(stack.back());
  if (c == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (c->sticky != CUDA_SUCCESS) return c->sticky;
  *ctx = c;
  return CUDA_SUCCESS;
}

}  // namespace fakecuda
