// Copyright 2026 The cuhal Authors.
// Fault injection and call accounting for the fake driver's entry points.
#ifndef CUHAL_FAKECUDA_FAULT_INJECTOR_H_
#define CUHAL_FAKECUDA_FAULT_INJECTOR_H_

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fakecuda {

// When a rule fires.
struct FaultRule {
  enum class Mode {
    kNth,       // the n-th matching call (1-based), once
    kEvery,     // every matching call
    kFraction,  // each matching call with probability `fraction`, drawn from `seed`
  };
  std::string entry;  // plain cuda.h name ("cuMemAlloc"); empty matches every entry point
  Mode mode = Mode::kNth;
  std::uint64_t n = 1;
  double fraction = 0.0;
  std::uint64_t seed = 0;
  CUresult error = CUDA_ERROR_UNKNOWN;
  // When set, the rule sees only calls made on this thread (others neither match nor count
  // towards `n`): sweeps one rank of several ranks-as-threads deterministically.
  std::optional<std::thread::id> thread{};
};

// Decides, for each entry-point call, whether to fail it; counts and optionally logs calls.
//
// Ownership: owned by its FakeDriver. Thread-safety: all methods are thread-safe; the fast path
// with no rules and no log is two relaxed atomic operations. Stream ordering: not applicable
// (faults are decided when the host calls, not when work runs).
//
// Environment (read by the drop-in library at start): FAKECUDA_FAULTS, a ';'-separated list of
// rules "entry:mode:value:ERROR" such as "cuMemAlloc:nth:3:CUDA_ERROR_OUT_OF_MEMORY",
// "*:every:0:CUDA_ERROR_UNKNOWN" or "cuStreamCreate:fraction:0.25:CUDA_ERROR_INVALID_VALUE@7"
// (the @7 is the seed).
class FaultInjector {
 public:
  FaultInjector() = default;
  FaultInjector(const FaultInjector&) = delete;             // holds a mutex
  FaultInjector& operator=(const FaultInjector&) = delete;  // ditto

  void AddRule(FaultRule rule);
  // Parses FAKECUDA_FAULTS syntax; false (with *error) on a malformed rule, adding none.
  bool AddRulesFromSpec(std::string_view spec, std::string* error);
  void ClearRules();

  // Called at the top of every entry point with its plain name. Returns CUDA_SUCCESS, or the
  // error to return instead of doing anything.
  CUresult OnCall(const char* entry);

  // Calls seen (including failed ones) since the last ResetCounters.
  std::uint64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  // Calls of one entry point, counted from the call log (0 unless the log is enabled).
  std::uint64_t calls(std::string_view entry) const;
  // Faults injected since the last ResetCounters.
  std::uint64_t injected() const { return injected_.load(std::memory_order_relaxed); }
  void ResetCounters();

  // The call log: every entry point called, in order (off by default).
  void EnableCallLog(bool on);
  std::vector<std::string> CallLog() const;
  // The entries of the call log that were called on `thread`, in order.
  std::vector<std::string> CallLog(std::thread::id thread) const;

 private:
  struct ActiveRule {
    FaultRule rule;
    std::uint64_t matched = 0;
    std::uint64_t rng = 0;
    bool spent = false;
  };
  std::atomic<std::uint64_t> calls_{0};
  std::atomic<std::uint64_t> injected_{0};
  std::atomic<bool> slow_path_{false};  // rules or the log are active
  mutable std::mutex mu_;
  std::vector<ActiveRule> rules_;   // guarded by mu_
  bool log_enabled_ = false;        // guarded by mu_
  std::vector<const char*> log_;    // guarded by mu_; entry names are string literals
  std::vector<std::thread::id> log_threads_;  // guarded by mu_; the caller of each log_ entry
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_FAULT_INJECTOR_H_
