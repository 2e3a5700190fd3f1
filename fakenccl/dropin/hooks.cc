// Copyright 2026 The cuhal Authors.
// The drop-in's hooks: fakecuda's functions found by name at run time (see
// fakenccl/internal/fakecuda_hooks.h). They are looked up in the drop-in libcuda.so.1 when it is
// loaded, then in the global scope (an executable that links fakecuda statically and exports its
// symbols, -rdynamic). For that, libcuda.so.1 must export these C++ symbols; its version script
// (fakecuda/dropin/libcuda.map) decides.
#include <dlfcn.h>

#include <atomic>
#include <string>

#include "core/base/mutex.h"
#include "fakecuda/fake_driver.h"
#include "fakenccl/internal/fakecuda_hooks.h"

namespace fakenccl::internal {
namespace {

// The Itanium-ABI names of the fakecuda functions fakenccl calls (stable as long as their
// declarations in fakecuda/stream_work.h, virtual_clock.h and fake_driver.h are).
constexpr const char* kEnqueue = "_ZN8fakecuda17EnqueueStreamWorkEP11CUstream_stNS_10StreamWorkE";
constexpr const char* kNotify = "_ZN8fakecuda16NotifyStreamWorkEv";
constexpr const char* kTranslate = "_ZN8fakecuda22TranslateDevicePointerEymPi";
constexpr const char* kNewIdleClock = "_ZN8fakecuda12NewIdleClockEim";
constexpr const char* kEnterBlocked = "_ZN8fakecuda12EnterBlockedEv";
constexpr const char* kLeaveBlocked = "_ZN8fakecuda12LeaveBlockedEv";
constexpr const char* kEnterBusy = "_ZN8fakecuda9EnterBusyEv";
constexpr const char* kLeaveBusy = "_ZN8fakecuda9LeaveBusyEv";
constexpr const char* kStreamDevice = "_ZN8fakecuda12StreamDeviceEP11CUstream_st";
constexpr const char* kInstalled = "_ZN8fakecuda9InstalledEv";
constexpr const char* kOptions = "_ZNK8fakecuda10FakeDriver7optionsEv";

using InstalledFn = fakecuda::FakeDriver* (*)();
// A non-virtual member function called as a function of its object pointer (Itanium C++ ABI).
using OptionsFn = const fakecuda::DriverOptions& (*)(const fakecuda::FakeDriver*);

FakecudaHooks g_hooks;                 // written once, before g_ready is published
InstalledFn g_installed = nullptr;     // ditto
OptionsFn g_options = nullptr;         // ditto
std::atomic<const FakecudaHooks*> g_ready{nullptr};  // the fast path once resolved
cuhal::Mutex g_mu;                                   // serializes resolution
std::string g_reason CUHAL_GUARDED_BY(g_mu) = "fakecuda's hooks were not looked up yet";

int DeviceCount() {
  fakecuda::FakeDriver* driver = g_installed();
  return driver == nullptr ? -1 : static_cast<int>(g_options(driver).devices.size());
}

int ComputeCapabilityMajor(int device) {
  fakecuda::FakeDriver* driver = g_installed();
  if (driver == nullptr || device < 0) return 0;
  const fakecuda::DriverOptions& options = g_options(driver);
  if (static_cast<std::size_t>(device) >= options.devices.size()) return 0;
  return options.devices[static_cast<std::size_t>(device)].Attribute(
      CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
}

template <typename Fn>
bool Find(void* handle, const char* name, Fn* out) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) return false;
  *out = reinterpret_cast<Fn>(symbol);
  return true;
}

bool ResolveFrom(void* handle) {
  FakecudaHooks h;
  InstalledFn installed = nullptr;
  OptionsFn options = nullptr;
  if (!Find(handle, kEnqueue, &h.enqueue_stream_work) ||
      !Find(handle, kNotify, &h.notify_stream_work) ||
      !Find(handle, kTranslate, &h.translate_device_pointer) ||
      !Find(handle, kNewIdleClock, &h.new_idle_clock) ||
      !Find(handle, kEnterBlocked, &h.enter_blocked) ||
      !Find(handle, kLeaveBlocked, &h.leave_blocked) ||
      !Find(handle, kEnterBusy, &h.enter_busy) || !Find(handle, kLeaveBusy, &h.leave_busy) ||
      !Find(handle, kStreamDevice, &h.stream_device) || !Find(handle, kInstalled, &installed) ||
      !Find(handle, kOptions, &options)) {
    return false;
  }
#define FAKENCCL_STRINGIFY(name) #name
#define FAKENCCL_SYMBOL(name) FAKENCCL_STRINGIFY(name)  // after cuda.h's macros (the _v2 names)
#define FAKENCCL_DRIVER_FIND(name) \
  if (!Find(handle, FAKENCCL_SYMBOL(name), &h.driver.name)) return false;
  FAKENCCL_DRIVER_FUNCTIONS(FAKENCCL_DRIVER_FIND)
#undef FAKENCCL_DRIVER_FIND
#undef FAKENCCL_SYMBOL
#undef FAKENCCL_STRINGIFY
  h.device_count = &DeviceCount;
  h.compute_capability_major = &ComputeCapabilityMajor;
  g_hooks = h;
  g_installed = installed;
  g_options = options;
  return true;
}

}  // namespace

const FakecudaHooks* Hooks() {
  if (const FakecudaHooks* ready = g_ready.load(std::memory_order_acquire)) return ready;
  cuhal::MutexLock lock(g_mu);
  if (const FakecudaHooks* ready = g_ready.load(std::memory_order_acquire)) return ready;
  // Never dlclose'd: fakecuda stays loaded for the process, as libcuda does.
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if ((libcuda != nullptr && ResolveFrom(libcuda)) || ResolveFrom(RTLD_DEFAULT)) {
    g_ready.store(&g_hooks, std::memory_order_release);
  } else {
    // Not cached: a libcuda.so.1 loaded later may still provide them.
    g_reason = std::string(
                   "fakecuda's stream-work hooks are not visible to the drop-in libnccl.so.2 (") +
               (libcuda != nullptr ? "the loaded libcuda.so.1 does not export them"
                                   : "no libcuda.so.1 is loaded") +
               ", and the executable does not export them): load the drop-in libcuda.so.1 "
               "built with its fakecuda::* hooks exported, or link fakecuda statically with "
               "-rdynamic";
  }
  return g_ready.load(std::memory_order_acquire);
}

const char* HooksUnavailableReason() {
  if (g_ready.load(std::memory_order_acquire) != nullptr) return "";
  cuhal::MutexLock lock(g_mu);
  // Copied per thread: another thread's failed lookup may rewrite g_reason.
  thread_local std::string copy;
  copy = g_reason;
  return copy.c_str();
}

}  // namespace fakenccl::internal
