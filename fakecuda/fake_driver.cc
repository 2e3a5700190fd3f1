// Copyright 2026 The cuhal Authors.
#include "fakecuda/fake_driver.h"

#include <atomic>
#include <cstdio>
#include <exception>
#include <new>
#include <sstream>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/thread_state.h"

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
  return os.tellp() > 0 ? os.str() : "none";
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
  return std::unique_ptr<FakeDriver>(new FakeDriver(std::make_unique<DriverState>(std::move(options))));
}

FakeDriver::FakeDriver(std::unique_ptr<DriverState> state) : state_(std::move(state)) {}

FakeDriver::~FakeDriver() {
  FakeDriver* self = this;
  g_installed.compare_exchange_strong(self, nullptr);
}

FaultInjector& FakeDriver::faults() { return state_->faults; }
const DriverOptions& FakeDriver::options() const { return state_->options; }

Inventory FakeDriver::LiveObjects() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->CountLive();
}

std::string FakeDriver::LeakReport() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->DescribeLive();
}

void Install(FakeDriver* driver) { g_installed.store(driver, std::memory_order_release); }
FakeDriver* Installed() { return g_installed.load(std::memory_order_acquire); }

DriverState* InstalledState() {
  FakeDriver* d = g_installed.load(std::memory_order_acquire);
  return d ? &d->state() : nullptr;
}

ScopedDriver::ScopedDriver(DriverOptions options)
    : driver_(FakeDriver::Create(std::move(options))), previous_(Installed()) {
  Install(driver_.get());
}

ScopedDriver::~ScopedDriver() { Install(previous_); }

std::uint64_t FakeDriver::HostFunctionExceptions() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->host_function_exceptions();
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
  auto it = st->contexts.find(stack.back());
  if (it == st->contexts.end()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (it->second->sticky != CUDA_SUCCESS) return it->second->sticky;
  *ctx = it->second.get();
  return CUDA_SUCCESS;
}

}  // namespace fakecuda
