// Copyright 2026 The cuhal Authors.
#include "sweep/fault_sweep.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "core/base/env.h"
#include "core/base/mutex.h"
#include "core/symbols/api_status.h"

namespace cuhal::sweep {
namespace {

// ReportDroppedStatus goes through a plain function pointer, so the capture target is global.
Mutex g_dropped_mu;
std::vector<Status>* g_dropped CUHAL_GUARDED_BY(g_dropped_mu) = nullptr;

void CaptureDropped(const Status& status) {
  MutexLock lock(g_dropped_mu);
  if (g_dropped != nullptr) g_dropped->push_back(status);
}

// Routes ReportDroppedStatus into `sink` for its lifetime.
class DroppedCapture {
 public:
  explicit DroppedCapture(std::vector<Status>* sink) {
    {
      MutexLock lock(g_dropped_mu);
      g_dropped = sink;
    }
    previous_ = SetDroppedStatusHandler(&CaptureDropped);
  }
  ~DroppedCapture() {
    SetDroppedStatusHandler(previous_);
    MutexLock lock(g_dropped_mu);
    g_dropped = nullptr;
  }
  DroppedCapture(const DroppedCapture&) = delete;             // restores the handler once
  DroppedCapture& operator=(const DroppedCapture&) = delete;  // ditto

 private:
  DroppedStatusHandler previous_ = nullptr;
};

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Whether `text` names `entry` as a whole word ("cuMemFree" is not named by "cuMemFreeHost").
bool NamesEntry(std::string_view text, std::string_view entry) {
  for (std::size_t pos = text.find(entry); pos != std::string_view::npos;
       pos = text.find(entry, pos + 1)) {
    const bool starts = pos == 0 || !IsIdentifierChar(text[pos - 1]);
    const std::size_t end = pos + entry.size();
    const bool ends = end == text.size() || !IsIdentifierChar(text[end]);
    if (starts && ends) return true;
  }
  return false;
}

// Whether every kind of live object is within `allowed`. Kinds this file does not know (added to
// Inventory later) must be zero: their count is whatever Total() has beyond the known ones.
bool Within(const fakecuda::Inventory& live, const fakecuda::Inventory& allowed) {
  const int known = live.contexts + live.primary_retains + live.streams + live.events +
                    live.device_allocations + live.host_allocations + live.host_registrations +
                    live.managed_allocations + live.pools + live.pool_allocations + live.modules +
                    live.graphs + live.graph_execs + live.vmm_allocations +
                    live.vmm_reservations + live.vmm_mappings;
  return live.Total() == known && live.contexts <= allowed.contexts &&
         live.primary_retains <= allowed.primary_retains && live.streams <= allowed.streams &&
         live.events <= allowed.events &&
         live.device_allocations <= allowed.device_allocations &&
         live.host_allocations <= allowed.host_allocations &&
         live.host_registrations <= allowed.host_registrations &&
         live.managed_allocations <= allowed.managed_allocations &&
         live.pools <= allowed.pools && live.pool_allocations <= allowed.pool_allocations &&
         live.modules <= allowed.modules && live.graphs <= allowed.graphs &&
         live.graph_execs <= allowed.graph_execs &&
         live.vmm_allocations <= allowed.vmm_allocations &&
         live.vmm_reservations <= allowed.vmm_reservations &&
         live.vmm_mappings <= allowed.vmm_mappings;
}

// CUHAL_SWEEP_VERBOSE (a boolean, default off).
StatusOr<bool> Verbose() { return env::ReadBool("CUHAL_SWEEP_VERBOSE", false); }

struct RunResult {
  Status status;
  std::vector<std::string> log;
  std::uint64_t calls = 0;
  std::uint64_t injected = 0;
  fakecuda::Inventory live;
  std::string leak_report;
  std::vector<Status> dropped;
  // NCCL (scenarios with run_with_nccl).
  std::vector<std::string> nccl_log;
  std::uint64_t nccl_calls = 0;
  std::uint64_t nccl_injected = 0;
  fakenccl::NcclInventory nccl_live;
  std::string nccl_leak_report;
};

// One run of the scenario with at most one of the rules (each limited to the calling thread when
// the scenario asks for it).
RunResult RunOnce(const SweepScenario& scenario, const fakecuda::FaultRule* rule,
                  const fakenccl::NcclFaultRule* nccl_rule = nullptr) {
  RunResult result;
  const std::thread::id self = std::this_thread::get_id();
  std::optional<std::thread::id> only;
  if (scenario.calling_thread_only) only = self;
  fakecuda::ScopedDriver driver(scenario.driver_options);
  if (!driver.ok()) {
    result.status = InvalidArgumentError(
        StrCat("the scenario's fakecuda::DriverOptions are invalid: ", driver.error()));
    return result;
  }
  CudaApi api;
  fakecuda::FillCudaApi(&api);
  driver->faults().EnableCallLog(true);
  if (rule != nullptr) {
    fakecuda::FaultRule limited = *rule;
    limited.thread = only;
    driver->faults().AddRule(std::move(limited));
  }
  // Declared after the driver: destroyed first (its queued work may use the driver).
  std::optional<fakenccl::ScopedNccl> nccl;
  NcclApi nccl_api;
  if (scenario.run_with_nccl) {
    nccl.emplace(scenario.nccl_options);
    fakenccl::FillNcclApi(&nccl_api);
    nccl->nccl().faults().EnableCallLog(true);
    if (nccl_rule != nullptr) {
      fakenccl::NcclFaultRule limited = *nccl_rule;
      limited.thread = only;
      nccl->nccl().faults().AddRule(std::move(limited));
    }
  }
  {
    DroppedCapture capture(&result.dropped);
    result.status = scenario.run_with_nccl ? scenario.run_with_nccl(&api, &nccl_api)
                                           : scenario.run(&api);
  }
  if (only.has_value()) {
    result.log = driver->faults().CallLog(*only);
    result.calls = result.log.size();
  } else {
    result.log = driver->faults().CallLog();
    result.calls = driver->faults().calls();
  }
  result.injected = driver->faults().injected();
  if (nccl.has_value()) {
    fakenccl::NcclFaultInjector& faults = nccl->nccl().faults();
    if (only.has_value()) {
      result.nccl_log = faults.CallLog(*only);
      result.nccl_calls = result.nccl_log.size();
    } else {
      result.nccl_log = faults.CallLog();
      result.nccl_calls = faults.calls();
    }
    result.nccl_injected = faults.injected();
    result.nccl_live = nccl->nccl().LiveObjects();
    result.nccl_leak_report = nccl->nccl().LeakReport();
    nccl.reset();  // before the driver's inventory: its queued work holds fake streams
  }
  result.live = driver->LiveObjects();
  result.leak_report = driver->LeakReport();
  return result;
}

std::string DescribeDropped(const std::vector<Status>& dropped) {
  if (dropped.empty()) return "none";
  std::string out;
  for (const Status& s : dropped) out += "\n      " + s.ToString();
  return out;
}

CUresult ErrorFor(const SweepScenario& scenario, const std::string& entry) {
  if (auto it = scenario.errors.find(entry); it != scenario.errors.end()) return it->second;
  if (scenario.default_error != CUDA_SUCCESS) return scenario.default_error;
  return SensibleError(entry);
}

std::string ErrorName(CUresult error) {
  std::string_view name = CudaResultEnumName(error);
  return name.empty() ? StrCat("CUresult ", static_cast<int>(error)) : std::string(name);
}

ncclResult_t NcclErrorFor(const SweepScenario& scenario, const std::string& entry) {
  if (auto it = scenario.nccl_errors.find(entry); it != scenario.nccl_errors.end()) {
    return it->second;
  }
  return ncclSystemError;
}

}  // namespace

CUresult SensibleError(const std::string& entry) {
  if (entry == "cuInit") return CUDA_ERROR_NO_DEVICE;
  if (entry == "cuCtxGetCurrent" || entry == "cuCtxPushCurrent" || entry == "cuCtxPopCurrent" ||
      entry == "cuCtxSetCurrent") {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (entry == "cuStreamSynchronize" || entry == "cuCtxSynchronize" ||
      entry == "cuEventSynchronize") {
    return CUDA_ERROR_LAUNCH_FAILED;
  }
  return CUDA_ERROR_OUT_OF_MEMORY;
}

std::string SweepReport::Summary() const {
  std::string out = StrCat(scenario, ": calls swept ", calls, ", failures injected ", injected,
                           ", leaks ", leaks);
  if (recovered > 0) {
    out += StrCat(" (recovered silently ", recovered);
    if (documented_leftovers > 0) {
      out += StrCat(", of which ", documented_leftovers,
                    " left the one object whose release failed, as documented");
    }
    out += ")";
  } else if (documented_leftovers > 0) {
    out += StrCat(" (", documented_leftovers,
                  " failed release(s) left the one object they could not release, as documented)");
  }
  if (nccl_calls > 0) out += StrCat(" [", cuda_calls, " CUDA + ", nccl_calls, " NCCL calls]");
  if (!problems.empty()) out += StrCat(" -- ", problems.size(), " problem(s)");
  return out;
}

std::string SweepReport::Problems(std::size_t limit) const {
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < limit; ++i) out += problems[i] + "\n";
  if (problems.size() > limit) out += StrCat("... and ", problems.size() - limit, " more\n");
  return out;
}

SweepReport RunFaultSweep(const SweepScenario& scenario, const SweepProgress& progress) {
  SweepReport report;
  report.scenario = scenario.name;
  StatusOr<bool> verbose_or = Verbose();
  if (!verbose_or.ok()) {  // an invalid configuration: no sweep at all
    report.problems.push_back(verbose_or.status().message());
    return report;
  }
  const bool verbose = *verbose_or;

  RunResult counting = RunOnce(scenario, nullptr);
  report.cuda_calls = counting.calls;
  report.nccl_calls = counting.nccl_calls;
  report.calls = counting.calls + counting.nccl_calls;
  report.entries = counting.log;
  report.entries.insert(report.entries.end(), counting.nccl_log.begin(), counting.nccl_log.end());
  if (!counting.status.ok()) {
    report.problems.push_back(StrCat("the scenario fails without any injected fault: ",
                                     counting.status.ToString()));
    return report;
  }
  if (counting.live.Total() != 0 || counting.nccl_live.Total() != 0) {
    report.problems.push_back(StrCat("the scenario leaks without any injected fault: ",
                                     counting.live.ToString(), "; NCCL ",
                                     counting.nccl_live.ToString(), "\n", counting.leak_report,
                                     counting.nccl_leak_report));
    report.leaks++;
  }
  if (counting.log.size() != counting.calls || counting.nccl_log.size() != counting.nccl_calls) {
    report.problems.push_back(StrCat("the call log holds ", counting.log.size(), " + ",
                                     counting.nccl_log.size(), " entries but ", counting.calls,
                                     " + ", counting.nccl_calls, " calls were counted"));
    return report;
  }
  if (progress) progress(0, report.calls);

  for (std::uint64_t i = 1; i <= report.calls; ++i) {
    // CUDA calls 1..cuda_calls first, then NCCL calls 1..nccl_calls.
    const bool is_nccl = i > report.cuda_calls;
    const std::uint64_t k = is_nccl ? i - report.cuda_calls : i;
    const std::string& expected_entry = report.entries[i - 1];
    SweepRun run;
    run.index = i;
    run.nccl = is_nccl;
    RunResult result;
    std::uint64_t injected = 0;
    std::string error_name;
    if (!is_nccl) {
      fakecuda::FaultRule rule;
      rule.entry = "";  // any entry point: the k-th call overall
      rule.mode = fakecuda::FaultRule::Mode::kNth;
      rule.n = k;
      rule.error = ErrorFor(scenario, expected_entry);
      result = RunOnce(scenario, &rule);
      run.entry = result.log.size() >= k ? result.log[k - 1] : std::string("(not reached)");
      run.error = rule.error;
      error_name = ErrorName(rule.error);
      injected = result.injected + result.nccl_injected;
    } else {
      fakenccl::NcclFaultRule rule;
      rule.entry = "";
      rule.mode = fakenccl::NcclFaultRule::Mode::kNth;
      rule.n = k;
      rule.error = NcclErrorFor(scenario, expected_entry);
      result = RunOnce(scenario, nullptr, &rule);
      run.entry =
          result.nccl_log.size() >= k ? result.nccl_log[k - 1] : std::string("(not reached)");
      run.nccl_error = rule.error;
      error_name = std::string(NcclResultEnumName(rule.error));
      injected = result.injected + result.nccl_injected;
    }
    run.status = result.status;
    run.dropped = result.dropped;
    run.leaked = result.live;
    run.nccl_leaked = result.nccl_live;
    run.leak_report = result.leak_report + result.nccl_leak_report;
    report.injected += injected;

    const std::string where =
        StrCat(scenario.name, ": call ", i, " of ", report.calls, " (", is_nccl ? "NCCL " : "",
               run.entry, " -> ", error_name, ")");
    std::vector<std::string> issues;
    if (injected != 1 || run.entry != expected_entry) {
      issues.push_back(StrCat("not deterministic: the counting run's ",
                              is_nccl ? "NCCL" : "CUDA", " call ", k, " was ", expected_entry,
                              ", this run's is ", run.entry, " and ", injected,
                              " fault(s) were injected"));
    }
    const auto cleanup = scenario.cleanup_calls.find(run.entry);
    const bool is_cleanup = cleanup != scenario.cleanup_calls.end();
    if (run.status.ok()) {
      bool reported = false;
      for (const Status& s : run.dropped) reported = reported || NamesEntry(s.message(), run.entry);
      if (!is_cleanup) {
        issues.push_back(StrCat("the scenario returned OK: the failure was swallowed (", run.entry,
                                " is not a declared cleanup call); dropped statuses: ",
                                DescribeDropped(run.dropped)));
      } else if (!reported) {
        issues.push_back(StrCat("the scenario returned OK, but no status naming ", run.entry,
                                " reached ReportDroppedStatus; dropped statuses: ",
                                DescribeDropped(run.dropped)));
      } else {
        run.recovered = true;
      }
    } else if (!NamesEntry(run.status.message(), run.entry)) {
      issues.push_back(StrCat("the returned error does not name ", run.entry, ": ",
                              run.status.ToString()));
    }
    if (run.leaked.Total() != 0 || run.nccl_leaked.Total() != 0) {
      const bool explained = run.recovered || (is_cleanup && !run.status.ok() &&
                                               NamesEntry(run.status.message(), run.entry));
      if (explained && Within(run.leaked, cleanup->second.may_leave) &&
          run.nccl_leaked.communicators <= cleanup->second.nccl_may_leave.communicators &&
          run.nccl_leaked.reduction_ops <= cleanup->second.nccl_may_leave.reduction_ops) {
        run.documented_leftover = true;
      } else {
        report.leaks++;
        issues.push_back(StrCat("leaked ", run.leaked.ToString(), "; NCCL ",
                                run.nccl_leaked.ToString(), ":\n", run.leak_report));
      }
    }
    if (run.recovered) report.recovered++;
    if (run.documented_leftover) report.documented_leftovers++;
    if (verbose) {
      std::cout << "  " << where << ": "
                << (run.status.ok() ? std::string("OK (recovered)") : run.status.ToString())
                << (run.leaked.Total() != 0 ? StrCat(" [left ", run.leaked.ToString(), "]") : "")
                << (run.nccl_leaked.Total() != 0
                        ? StrCat(" [left NCCL ", run.nccl_leaked.ToString(), "]")
                        : "")
                << "\n";
    }
    for (const std::string& issue : issues) {
      report.problems.push_back(StrCat(where, ": ", issue, "\n    returned: ",
                                       run.status.ToString(),
                                       "\n    dropped: ", DescribeDropped(run.dropped)));
    }
    report.runs.push_back(std::move(run));
    if (progress) progress(i, report.calls);
  }
  return report;
}

}  // namespace cuhal::sweep
