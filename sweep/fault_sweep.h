// Copyright 2026 The cuhal Authors.
// The exhaustive fault sweep: a reusable test utility that fails every driver call of a scenario,
// one at a time, and checks that each failure ends cleanly.
//
//   SweepScenario scenario;
//   scenario.name = "device create/destroy";
//   scenario.run = [](const CudaApi* api) -> Status { ...create, use, destroy core objects... };
//   scenario.cleanup_calls = {{"cuStreamDestroy", {}}};  // see below
//   SweepReport report = RunFaultSweep(scenario);
//   std::cout << report.Summary() << "\n";   // "<name>: calls swept N, failures injected N, ..."
//   EXPECT_TRUE(report.ok()) << report.Problems();
//
// What it does:
//  1. Counting run: a fresh fakecuda driver (installed for the run), the call log on, the scenario
//     once without faults. It must succeed and leak nothing; its call log names every call.
//  2. For each call index k in 1..N: a fresh driver with one rule, FaultRule{entry = "" (any),
//     kNth, n = k, error = ErrorFor(k-th entry)}, the call log on, and ReportDroppedStatus
//     captured. The run passes when
//       - the k-th call was reached and was the same entry as in the counting run (otherwise the
//         scenario is not deterministic, which defeats the sweep);
//       - the scenario returned an error whose message names the injected entry as a whole word
//         ("cuStreamCreate"), or it returned OK, the entry is one of the scenario's declared
//         cleanup calls AND a status naming that entry reached ReportDroppedStatus (a documented
//         recovery: a cleanup call, typically in a destructor, whose failure nobody can return);
//       - after the scenario returned (all of its objects destroyed), the fake holds no live
//         object (FakeDriver::LiveObjects().Total() == 0), except, when the failed entry is a
//         declared cleanup call, what its failure is documented to leave behind
//         (CleanupCall::may_leave: the one object whose release failed, e.g. a pool whose
//         cuMemPoolDestroy failed; a release cannot be retried safely on a real driver).
//     No crash and no sanitizer report are checked by running the sweep in the sanitizer builds.
//
// Each failing run adds a problem (with the injected call, the returned status, the dropped
// statuses and the fake's leak report); report.ok() is true when there is none.
//
// Adding a scenario: write a `Status(const CudaApi*)` function that creates, uses and destroys
// core objects (everything it makes must be gone when it returns), list its cleanup calls,
// and add one entry to CoreScenarios() in sweep/core_scenarios.cc.
//
// Scenarios that also use NCCL (channels, sweep/channel_scenarios.h) set `run_with_nccl` instead
// of `run`: each run then also gets a fresh fakenccl (installed, its call log on), whose
// NcclFaultInjector is a second call counter. The NCCL calls are swept after the CUDA calls, one
// NcclFaultRule{kNth, n = k} per call, with the same checks; live communicators after a run count
// as leaks too (CleanupCall::nccl_may_leave). Scenarios whose ranks are threads set
// `calling_thread_only`: only the calls made on the thread that runs the scenario (one rank's) are
// counted, logged and failed, because the interleaving of the other threads' calls is not
// deterministic; the other ranks must still end cleanly (no hang, no leak).
#ifndef CUHAL_SWEEP_FAULT_SWEEP_H_
#define CUHAL_SWEEP_FAULT_SWEEP_H_

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"
#include "fakecuda/fake_driver.h"
#include "fakenccl/fake_nccl.h"

namespace cuhal::sweep {

// A cleanup entry point of a scenario: its injected failure may be absorbed (the scenario then
// returns OK, having reported the failure through ReportDroppedStatus), and what its failure is
// documented to leave behind, whether absorbed or returned.
struct CleanupCall {
  // Objects that may remain live after such a run (the one whose release failed). Zero for
  // releases that a later, broader release covers (a stream or an allocation is destroyed with
  // its context when the primary context is released).
  fakecuda::Inventory may_leave;
  // Likewise for fakenccl's objects (scenarios with run_with_nccl).
  fakenccl::NcclInventory nccl_may_leave{};
};

struct SweepScenario {
  std::string name;
  // Creates, uses and destroys core objects through `api`; returns the first error.
  std::function<Status(const CudaApi* api)> run;
  // The fake driver each run gets (fresh each time). Default: one H200.
  fakecuda::DriverOptions driver_options;
  // The scenario's cleanup calls (see CleanupCall), by plain cuda.h name.
  std::map<std::string, CleanupCall> cleanup_calls;
  // The error injected into each entry point; entries not listed get `default_error`, or, when
  // that is CUDA_SUCCESS, SensibleError(entry).
  std::map<std::string, CUresult> errors;
  CUresult default_error = CUDA_SUCCESS;

  // Instead of `run`, for scenarios that use NCCL: gets the fakenccl table too (see the top of
  // this file). Exactly one of `run` and `run_with_nccl` is set.
  std::function<Status(const CudaApi* api, const NcclApi* nccl)> run_with_nccl;
  // The fake NCCL each run gets (fresh each time).
  fakenccl::NcclOptions nccl_options;
  // The error injected into each NCCL entry point; entries not listed get ncclSystemError.
  std::map<std::string, ncclResult_t> nccl_errors;
  // Count, log and fail only the calls made on the thread that calls `run`/`run_with_nccl`.
  bool calling_thread_only = false;
};

// The error a real driver would plausibly return from `entry`: CUDA_ERROR_NO_DEVICE for cuInit,
// CUDA_ERROR_INVALID_CONTEXT for the context-stack calls, CUDA_ERROR_LAUNCH_FAILED for
// synchronizations (an asynchronous failure surfacing), CUDA_ERROR_OUT_OF_MEMORY for the rest.
CUresult SensibleError(const std::string& entry);

// The outcome of one injected failure.
struct SweepRun {
  std::uint64_t index = 0;  // 1-based call index
  std::string entry;        // the entry point that failed
  CUresult error = CUDA_SUCCESS;
  bool nccl = false;                     // the failed call was an NCCL call (nccl_error)
  ncclResult_t nccl_error = ncclSuccess;
  Status status;                  // what the scenario returned
  std::vector<Status> dropped;    // what reached ReportDroppedStatus
  fakecuda::Inventory leaked;     // live objects after the scenario returned
  fakenccl::NcclInventory nccl_leaked;
  std::string leak_report;
  bool recovered = false;            // OK, the failure of a cleanup call reported
  bool documented_leftover = false;  // left what CleanupCall::may_leave allows
};

struct SweepReport {
  std::string scenario;
  std::uint64_t calls = 0;     // calls of the counting run (CUDA and NCCL)
  std::uint64_t cuda_calls = 0;  // of which CUDA calls (swept first)
  std::uint64_t nccl_calls = 0;  // and NCCL calls (swept after them)
  std::uint64_t injected = 0;  // faults actually injected (one per run that reached its call)
  int leaks = 0;               // runs that left undocumented live objects
  int recovered = 0;             // runs that ended OK, a cleanup call's failure reported
  int documented_leftovers = 0;  // runs that left what a failed cleanup call may leave
  std::vector<std::string> entries;  // the counting run's call log (CUDA, then NCCL)
  std::vector<SweepRun> runs;
  std::vector<std::string> problems;

  [[nodiscard]] bool ok() const { return problems.empty(); }
  // "<scenario>: calls swept N, failures injected N, leaks 0 (recovered silently R, ...)";
  // leaks counts runs that left objects no declared cleanup failure explains.
  [[nodiscard]] std::string Summary() const;
  // Every problem, one per paragraph (at most `limit` of them).
  [[nodiscard]] std::string Problems(std::size_t limit = 20) const;
};

// Called by RunFaultSweep on its own thread: once after the counting run with (0, total), then
// after each injected-failure run with (runs done so far, total), total being the calls swept.
// Not called when the counting run fails.
using SweepProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Runs the sweep (see the top of this file). Installs fakecuda drivers (one at a time) and a
// dropped-status handler for its duration: do not run two sweeps at once in one process.
// Set CUHAL_SWEEP_VERBOSE=1 (a boolean) to print every run's injected call and returned status;
// an invalid value is the report's one problem, and nothing runs. `progress`,
// when set, is told how far the sweep has got (for progress bars).
SweepReport RunFaultSweep(const SweepScenario& scenario, const SweepProgress& progress = {});

}  // namespace cuhal::sweep

#endif  // CUHAL_SWEEP_FAULT_SWEEP_H_
