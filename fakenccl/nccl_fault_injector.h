// Copyright 2026 The cuhal Authors.
// Fault injection and call accounting for fakenccl's entry points, shaped like fakecuda's
// FaultInjector (which returns CUresult, so it cannot be reused as is), plus rank death.
#ifndef CUHAL_FAKENCCL_NCCL_FAULT_INJECTOR_H_
#define CUHAL_FAKENCCL_NCCL_FAULT_INJECTOR_H_

#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fakenccl {

// When a rule fires.
struct NcclFaultRule {
  enum class Mode {
    kNth,       // the n-th matching call (1-based), once
    kEvery,     // every matching call
    kFraction,  // each matching call with probability `fraction`, drawn from `seed`
  };
  std::string entry;  // nccl.h name ("ncclAllReduce"); empty matches every entry point
  Mode mode = Mode::kNth;
  std::uint64_t n = 1;
  double fraction = 0.0;
  std::uint64_t seed = 0;
  ncclResult_t error = ncclSystemError;
  // When set, the rule sees only calls made on this thread (others neither match nor count
  // towards `n`): sweeps one rank of several ranks-as-threads deterministically.
  std::optional<std::thread::id> thread{};
};

// "Rank `rank` dies at its `nth` communication call": the nth collective or point-to-point call
// (ncclAllReduce, ncclSend, ...; 1-based, counted per communicator handle, calls with count 0
// that NCCL discards not counted) made on a communicator where the caller is rank `rank` (and,
// when `nranks` > 0, the communicator has that many ranks). From that call on, the handle is
// dead: its calls return ncclSuccess and post nothing, as if its process had vanished, so its
// peers wait for it, time out on the virtual clock and see ncclRemoteError.
struct RankDeathRule {
  int rank = 0;
  std::uint64_t nth = 1;
  int nranks = 0;  // 0: any communicator size
};

// Decides, for each entry-point call, whether to fail it; counts and optionally logs calls;
// holds the rank-death rules.
//
// Ownership: owned by its FakeNccl. Thread-safety: every method is thread-safe; with no rules and
// no log the per-call cost is two relaxed atomic operations. Stream ordering: not applicable
// (faults are decided when the host calls, before the call has any effect).
//
// Environment (read by the drop-in libnccl.so.2 at load): FAKENCCL_FAULTS, a ';'-separated list
// of rules "entry:mode:value:ERROR" such as "ncclAllReduce:nth:3:ncclSystemError",
// "*:every:0:ncclInternalError" or "ncclSend:fraction:0.25:ncclRemoteError@7" (the @7 is the
// seed), and rank deaths "die:RANK:NTH" or "die:RANK:NTH:NRANKS".
class NcclFaultInjector {
 public:
  NcclFaultInjector() = default;
  NcclFaultInjector(const NcclFaultInjector&) = delete;             // holds a mutex
  NcclFaultInjector& operator=(const NcclFaultInjector&) = delete;  // ditto

  void AddRule(NcclFaultRule rule);
  // Parses FAKENCCL_FAULTS syntax; false (with *error) on a malformed item, adding nothing.
  bool AddRulesFromSpec(std::string_view spec, std::string* error);
  void ClearRules();  // also clears rank-death rules

  void AddRankDeath(RankDeathRule rule);
  // True when a communicator rank (`rank` of `nranks`) that has now made `call` communication
  // calls (1-based) dies at this one.
  bool ShouldDie(int rank, int nranks, std::uint64_t call) const;

  // Called at the top of every entry point with its nccl.h name. Returns ncclSuccess, or the
  // error to return instead of doing anything.
  ncclResult_t OnCall(const char* entry);

  // Calls seen (failed ones included) since the last ResetCounters.
  std::uint64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  // Calls of one entry point, counted from the call log (0 unless the log is enabled).
  std::uint64_t calls(std::string_view entry) const;
  std::uint64_t injected() const { return injected_.load(std::memory_order_relaxed); }
  void ResetCounters();

  // The call log: every entry point called, in order (off by default).
  void EnableCallLog(bool on);
  std::vector<std::string> CallLog() const;
  // The entries of the call log that were called on `thread`, in order.
  std::vector<std::string> CallLog(std::thread::id thread) const;

 private:
  struct ActiveRule {
    NcclFaultRule rule;
    std::uint64_t matched = 0;
    std::uint64_t rng = 0;
    bool spent = false;
  };
  std::atomic<std::uint64_t> calls_{0};
  std::atomic<std::uint64_t> injected_{0};
  std::atomic<bool> slow_path_{false};  // rules or the log are active
  mutable std::mutex mu_;
  std::vector<ActiveRule> rules_;       // guarded by mu_
  std::vector<RankDeathRule> deaths_;   // guarded by mu_
  bool log_enabled_ = false;            // guarded by mu_
  std::vector<const char*> log_;        // guarded by mu_; entry names are string literals
  std::vector<std::thread::id> log_threads_;  // guarded by mu_; the caller of each log_ entry
};

// nccl.h's enumerator spelling ("ncclInvalidArgument"), or "ncclResult_t(<n>)".
std::string NcclResultName(ncclResult_t result);

}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_NCCL_FAULT_INJECTOR_H_
