// Copyright 2026 The cuhal Authors.
// fakecuda's C++ API: build a fake CUDA driver, install it, fill a CudaApi table from it.
#ifndef CUHAL_FAKECUDA_FAKE_DRIVER_H_
#define CUHAL_FAKECUDA_FAKE_DRIVER_H_

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/symbols/cuda_api.h"
#include "fakecuda/device_profile.h"
#include "fakecuda/fault_injector.h"

namespace fakecuda {

// When queued stream work completes.
enum class SchedulePolicy {
  // Work runs as soon as it is enqueued and its dependencies allow: the friendliest order.
  kEager,
  // Work is held back until the host synchronizes on it (stream/event/context sync, a blocking
  // copy) or polls (each cuStreamQuery/cuEventQuery on pending work completes one more
  // operation); the order across streams is drawn from `seed`. Code that forgets a
  // synchronization reads stale data, reproducibly. Pending host functions are released
  // (in seeded order) when no thread has entered the driver for `idle_release_us`.
  kAdversarial,
};

// What the stream-order race detector does (fakecuda/race/race_detector.h).
enum class RaceCheck {
  kOff,     // nothing: no cost beyond one branch per enqueue
  kReport,  // each finding printed to stderr, once per pair of call sites
  kFail,    // as kReport, and the call that enqueued the second operation of a finding returns
            // CUDA_ERROR_ILLEGAL_STATE (the operation is still queued and runs)
};

struct DriverOptions {
  // One entry per fake device, in ordinal order. Empty means one built-in H200.
  std::vector<DeviceProfile> devices;
  SchedulePolicy policy = SchedulePolicy::kEager;
  std::uint64_t seed = 0;
  // What cuDriverGetVersion reports.
  int driver_version = 13000;
  // Adversarial policy: once no thread has entered the driver for this long (host wall time),
  // the driver runs the work up to one pending host function, as the real driver would without
  // being asked. 0: never (host functions then run only when a synchronization or a query needs
  // them; use it for tests that must be deterministic whatever the machine's load).
  std::uint64_t idle_release_us = 2000;
  // The race detector. Unset: what FAKECUDA_RACECHECK says (off|report|fail; unset: off), so
  // that any program on the fake (and the drop-in libcuda.so.1) can be checked without changes.
  std::optional<RaceCheck> racecheck;
};

// Counts of live fake objects, for leak reports.
struct Inventory {
  int contexts = 0;          // created contexts (cuCtxCreate) not destroyed
  int primary_retains = 0;   // outstanding cuDevicePrimaryCtxRetain references
  // Outstanding primary-context retains the CUDA runtime (libcudart) holds, not counted above nor
  // in Total(): the runtime does not release a retain whose context cudaDeviceReset reset
  // (docs/cudart_on_the_fake.md, "The leak report"). Not a leak of the program.
  int runtime_primary_retains = 0;
  // Libraries the CUDA runtime loaded from the program's fat-binary wrappers and still holds (it
  // unloads them at exit; one whose cuLibraryUnload failed stays): not in Total() either.
  int runtime_libraries = 0;
  int streams = 0;
  int events = 0;
  int device_allocations = 0;
  int host_allocations = 0;  // pinned host memory
  int host_registrations = 0;
  int managed_allocations = 0;
  int pools = 0;             // user-created memory pools
  int pool_allocations = 0;  // live cuMemAllocAsync allocations
  int modules = 0;
  int graphs = 0;       // cuGraphCreate graphs not destroyed
  int graph_execs = 0;  // instantiated graphs not destroyed
  int vmm_allocations = 0;   // cuMemCreate/import handles whose memory is not gone
  int vmm_reservations = 0;  // cuMemAddressReserve ranges not freed
  int vmm_mappings = 0;      // cuMemMap mappings not unmapped
  int arrays = 0;            // CUDA arrays (cuArrayCreate, cuArray3DCreate) not destroyed
  int green_contexts = 0;    // cuGreenCtxCreate green contexts not destroyed
  int libraries = 0;         // cuLibraryLoadData/cuLibraryLoadFromFile libraries not unloaded

  int Total() const {
    return contexts + primary_retains + streams + events + device_allocations + host_allocations +
           host_registrations + managed_allocations + pools + pool_allocations + modules +
           graphs + graph_execs + vmm_allocations + vmm_reservations + vmm_mappings +
           arrays + green_contexts + libraries;
  }
  // "2 streams, 1 event" or "none", then " (not leaks: 1 primary context retain(s), 1
  // library(ies) held by the CUDA runtime)" when the runtime holds any.
  std::string ToString() const;
};

class DriverState;  // internal

// A fake CUDA driver instance: devices, contexts, streams, memory, with fault injection and an
// inventory of live objects.
//
// Ownership: the creator owns it (unique_ptr). While installed (Install/ScopedDriver) the C entry
// points serve it; it must outlive its installation. Destroying it frees every object it still
// holds (Inventory tells which were leaked first).
// Thread-safety: every method and every entry point may be called from any thread, as with the
// real driver. Stream ordering: the scheduler (see SchedulePolicy) decides when queued work runs;
// within a stream, work completes in order.
class FakeDriver {
 public:
  // Returns null and sets *error when the options are invalid (e.g. a profile without a name).
  static std::unique_ptr<FakeDriver> Create(DriverOptions options, std::string* error = nullptr);
  ~FakeDriver();
  FakeDriver(const FakeDriver&) = delete;             // owns threads' shared state
  FakeDriver& operator=(const FakeDriver&) = delete;  // ditto

  FaultInjector& faults();
  // Live objects now.
  Inventory LiveObjects() const;
  // Human-readable list of each live object (kind, handle, where it was created); empty if none.
  std::string LeakReport() const;
  const DriverOptions& options() const;
  // Host functions (cuLaunchHostFunc, cuStreamAddCallback, graph host nodes) that threw so far:
  // the fake caught each, reported it on stderr and went on with its stream.
  std::uint64_t HostFunctionExceptions() const;
  // The race detector's mode, and its findings so far (each the line it printed, without the
  // "fakecuda: " prefix); empty when the detector is off.
  RaceCheck racecheck() const;
  std::vector<std::string> RaceFindings() const;

  DriverState& state() { return *state_; }  // internal use by the entry points

 private:
  explicit FakeDriver(std::unique_ptr<DriverState> state);
  std::unique_ptr<DriverState> state_;
};

// The process-wide driver that the C entry points (cuInit, ...) serve; null when none. Install
// replaces any previous one (it does not own it).
void Install(FakeDriver* driver);
FakeDriver* Installed();

// Creates a driver and installs it for its lifetime; restores the previous one afterwards.
//
// Invalid options (FakeDriver::Create fails) cannot go unnoticed: the constructor prints the
// error to stderr and installs no driver (every entry point then answers
// CUDA_ERROR_NOT_INITIALIZED, cuInit included); ok() is false and error() says why; driver() and
// operator-> print the error and abort instead of handing out a null driver. Callers that can
// report the error themselves check ok(), or use Create.
class ScopedDriver {
 public:
  explicit ScopedDriver(DriverOptions options = {});
  // Null, with *error set, when the options are invalid (then nothing is installed).
  static std::unique_ptr<ScopedDriver> Create(DriverOptions options, std::string* error);
  ~ScopedDriver();
  ScopedDriver(const ScopedDriver&) = delete;             // owns an installation
  ScopedDriver& operator=(const ScopedDriver&) = delete;  // ditto

  // Whether the options were valid and the driver is installed.
  bool ok() const { return driver_ != nullptr; }
  // Why the options were invalid ("" when ok()).
  const std::string& error() const { return error_; }
  // The installed driver; aborts, printing error(), when !ok().
  FakeDriver& driver();
  FakeDriver* operator->() { return &driver(); }

 private:
  ScopedDriver(DriverOptions options, bool quiet);  // quiet: Create reports the error itself

  std::string error_;  // before driver_: its constructor writes here
  std::unique_ptr<FakeDriver> driver_;
  FakeDriver* previous_;
};

// Fills every entry of `api` with fakecuda's entry points (they serve the installed driver).
void FillCudaApi(cuhal::CudaApi* api);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_FAKE_DRIVER_H_
