// Copyright 2026 The cuhal Authors.
#include "sweep/fault_sweep.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <utility>

#include "core/symbols/api_status.h"

namespace cuhal::sweep {
namespace {

// ReportDroppedStatus goes through a plain function pointer, so the capture target is global.
std::mutex g_dropped_mu;
std::vector<Status>* g_dropped = nullptr;  // guarded by g_dropped_mu

void CaptureDropped(const Status& status) {
  std::lock_guard<std::mutex> lock(g_dropped_mu);
  if (g_dropped != nullptr) g_dropped->push_back(status);
}

// Routes ReportDroppedStatus into `sink` for its lifetime.
class DroppedCapture {
 public:
  explicit DroppedCapture(std::vector<Status>* sink) {
    {
      std::lock_guard<std::mutex> lock(g_dropped_mu);
      g_dropped = sink;
    }
    previous_ = SetDroppedStatusHandler(&CaptureDropped);
  }
  ~DroppedCapture() {
    SetDroppedStatusHandler(previous_);
    std::lock_guard<std::mutex> lock(g_dropped_mu);
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
                    live.managed_allocations + live.pools + live.pool_allocations + live.modules;
  return live.Total() == known && live.contexts <= allowed.contexts &&
         live.primary_retains <= allowed.primary_retains && live.streams <= allowed.streams &&
         live.events <= allowed.events &&
         live.device_allocations <= allowed.device_allocations &&
         live.host_allocations <= allowed.host_allocations &&
         live.host_registrations <= allowed.host_registrations &&
         live.managed_allocations <= allowed.managed_allocations &&
         live.pools <= allowed.pools && live.pool_allocations <= allowed.pool_allocations &&
         live.modules <= allowed.modules;
}

bool Verbose() {
  const char* value = std::getenv("CUHAL_SWEEP_VERBOSE");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

struct RunResult {
  Status status;
  std::vector<std::string> log;
  std::uint64_t calls = 0;
  std::uint64_t injected = 0;
  fakecuda::Inventory live;
  std::string leak_report;
  std::vector<Status> dropped;
};

RunResult RunOnce(const SweepScenario& scenario, const fakecuda::FaultRule* rule) {
  RunResult result;
  fakecuda::ScopedDriver driver(scenario.driver_options);
  CudaApi api;
  fakecuda::FillCudaApi(&api);
  driver->faults().EnableCallLog(true);
  if (rule != nullptr) driver->faults().AddRule(*rule);
  {
    DroppedCapture capture(&result.dropped);
    result.status = scenario.run(&api);
  }
  result.log = driver->faults().CallLog();
  result.calls = driver->faults().calls();
  result.injected = driver->faults().injected();
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
  if (!problems.empty()) out += StrCat(" -- ", problems.size(), " problem(s)");
  return out;
}

std::string SweepReport::Problems(std::size_t limit) const {
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < limit; ++i) out += problems[i] + "\n";
  if (problems.size() > limit) out += StrCat("... and ", problems.size() - limit, " more\n");
  return out;
}

SweepReport RunFaultSweep(const SweepScenario& scenario) {
  SweepReport report;
  report.scenario = scenario.name;
  const bool verbose = Verbose();

  RunResult counting = RunOnce(scenario, nullptr);
  report.calls = counting.calls;
  report.entries = counting.log;
  if (!counting.status.ok()) {
    report.problems.push_back(StrCat("the scenario fails without any injected fault: ",
                                     counting.status.ToString()));
    return report;
  }
  if (counting.live.Total() != 0) {
    report.problems.push_back(StrCat("the scenario leaks without any injected fault: ",
                                     counting.live.ToString(), "\n", counting.leak_report));
    report.leaks++;
  }
  if (counting.log.size() != counting.calls) {
    report.problems.push_back(StrCat("the call log holds ", counting.log.size(),
                                     " entries but ", counting.calls, " calls were counted"));
    return report;
  }

  for (std::uint64_t k = 1; k <= report.calls; ++k) {
    const std::string& expected_entry = counting.log[k - 1];
    fakecuda::FaultRule rule;
    rule.entry = "";  // any entry point: the k-th call overall
    rule.mode = fakecuda::FaultRule::Mode::kNth;
    rule.n = k;
    rule.error = ErrorFor(scenario, expected_entry);

    RunResult result = RunOnce(scenario, &rule);
    SweepRun run;
    run.index = k;
    run.entry = result.log.size() >= k ? result.log[k - 1] : std::string("(not reached)");
    run.error = rule.error;
    run.status = result.status;
    run.dropped = result.dropped;
    run.leaked = result.live;
    run.leak_report = result.leak_report;
    report.injected += result.injected;

    const std::string where = StrCat(scenario.name, ": call ", k, " of ", report.calls, " (",
                                     run.entry, " -> ", ErrorName(rule.error), ")");
    std::vector<std::string> issues;
    if (result.injected != 1 || run.entry != expected_entry) {
      issues.push_back(StrCat("not deterministic: the counting run's call ", k, " was ",
                              expected_entry, ", this run's is ", run.entry, " and ",
                              result.injected, " fault(s) were injected"));
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
    if (run.leaked.Total() != 0) {
      const bool explained = run.recovered || (is_cleanup && !run.status.ok() &&
                                               NamesEntry(run.status.message(), run.entry));
      if (explained && Within(run.leaked, cleanup->second.may_leave)) {
        run.documented_leftover = true;
      } else {
        report.leaks++;
        issues.push_back(StrCat("leaked ", run.leaked.ToString(), ":\n", run.leak_report));
      }
    }
    if (run.recovered) report.recovered++;
    if (run.documented_leftover) report.documented_leftovers++;
    if (verbose) {
      std::cout << "  " << where << ": "
                << (run.status.ok() ? std::string("OK (recovered)") : run.status.ToString())
                << (run.leaked.Total() != 0 ? StrCat(" [left ", run.leaked.ToString(), "]") : "")
                << "\n";
    }
    for (const std::string& issue : issues) {
      report.problems.push_back(StrCat(where, ": ", issue, "\n    returned: ",
                                       run.status.ToString(),
                                       "\n    dropped: ", DescribeDropped(run.dropped)));
    }
    report.runs.push_back(std::move(run));
  }
  return report;
}

}  // namespace cuhal::sweep
