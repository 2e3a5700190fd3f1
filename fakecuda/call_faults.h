// Copyright 2026 The cuhal Authors.
// Fault rules and call accounting shared by fakecuda's FaultInjector (CUresult) and fakenccl's
// NcclFaultInjector (ncclResult_t): which call of which entry point fails, with what, and the
// call counters and call log the fault sweeps read.
#ifndef CUHAL_FAKECUDA_CALL_FAULTS_H_
#define CUHAL_FAKECUDA_CALL_FAULTS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/mutex.h"

namespace fakecuda {

// When a rule fires.
enum class FaultMode {
  kNth,       // the n-th matching call (1-based), once
  kEvery,     // every matching call
  kFraction,  // each matching call with probability `fraction`, drawn from `seed`
};

// One fault rule of an API whose calls return `Result` (`kDefaultError` unless set).
template <typename Result, Result kDefaultError>
struct BasicFaultRule {
  using Mode = FaultMode;
  std::string entry;  // the header's plain name ("cuMemAlloc"); empty matches every entry point
  Mode mode = Mode::kNth;
  std::uint64_t n = 1;
  double fraction = 0.0;
  std::uint64_t seed = 0;
  Result error = kDefaultError;
  // When set, the rule sees only calls made on this thread (others neither match nor count
  // towards `n`): sweeps one rank of several ranks-as-threads deterministically.
  std::optional<std::thread::id> thread{};
};

// Decides, for each entry-point call, whether to fail it; counts and optionally logs calls.
//
// Ownership: a base of the injectors, owned by their fake driver. Thread-safety: every method is
// thread-safe; with no rules and no log, OnCall costs two atomic operations. Stream ordering: not
// applicable (faults are decided when the host calls, before the call has any effect).
template <typename Rule, auto kSuccess>
class CallFaults {
 public:
  using Result = decltype(kSuccess);

  CallFaults() = default;
  CallFaults(const CallFaults&) = delete;             // holds a mutex
  CallFaults& operator=(const CallFaults&) = delete;  // ditto

  void AddRule(Rule rule) {
    cuhal::MutexLock lock(mu_);
    ActiveRule active{std::move(rule)};
    active.rng = active.rule.seed;
    rules_.push_back(std::move(active));
    slow_path_.store(true, std::memory_order_release);
  }
  void ClearRules() {
    cuhal::MutexLock lock(mu_);
    rules_.clear();
    slow_path_.store(log_enabled_, std::memory_order_release);
  }

  // Called at the top of every entry point with its plain name (a string literal: the log keeps
  // the pointer). Returns kSuccess, or the error to return instead of doing anything.
  Result OnCall(const char* entry) {
    calls_.fetch_add(1, std::memory_order_relaxed);
    if (!slow_path_.load(std::memory_order_acquire)) [[likely]] return kSuccess;
    cuhal::MutexLock lock(mu_);
    const std::thread::id caller = std::this_thread::get_id();
    if (log_enabled_) {
      log_.push_back(entry);
      log_threads_.push_back(caller);
    }
    const bool exempt = std::find(wildcard_exempt_.begin(), wildcard_exempt_.end(),
                                  std::string_view(entry)) != wildcard_exempt_.end();
    for (ActiveRule& r : rules_) {
      if (r.spent) continue;
      if (r.rule.entry.empty() ? exempt : r.rule.entry != entry) continue;
      if (r.rule.thread.has_value() && *r.rule.thread != caller) continue;
      ++r.matched;
      bool fire = false;
      switch (r.rule.mode) {
        case FaultMode::kNth:
          fire = r.matched == r.rule.n;
          if (fire) r.spent = true;
          break;
        case FaultMode::kEvery:
          fire = true;
          break;
        case FaultMode::kFraction:
          fire = static_cast<double>(NextRandom(&r.rng) >> 11) * 0x1.0p-53 < r.rule.fraction;
          break;
      }
      if (fire) {
        injected_.fetch_add(1, std::memory_order_relaxed);
        return r.rule.error;
      }
    }
    return kSuccess;
  }

  // Rules for every entry point (an empty `entry`, "*" in the spec) neither match nor count calls
  // of `entry`; a rule that names it still does. For entry points a real driver never fails for
  // the callers that use them, where a fault tests nothing but those callers (fakecuda: the CUDA
  // runtime's private-table lookup, FaultInjector).
  void ExemptFromWildcards(std::string entry) {
    cuhal::MutexLock lock(mu_);
    wildcard_exempt_.push_back(std::move(entry));
  }

  // Calls seen (failed ones included) since the last ResetCounters.
  std::uint64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  // Calls of one entry point, counted from the call log (0 unless the log is enabled).
  std::uint64_t calls(std::string_view entry) const {
    cuhal::MutexLock lock(mu_);
    std::uint64_t n = 0;
    for (const char* e : log_) n += (entry == e);
    return n;
  }
  // Faults injected since the last ResetCounters.
  std::uint64_t injected() const { return injected_.load(std::memory_order_relaxed); }
  // Zeroes the counters, empties the log and rearms every rule.
  void ResetCounters() {
    cuhal::MutexLock lock(mu_);
    calls_.store(0, std::memory_order_relaxed);
    injected_.store(0, std::memory_order_relaxed);
    log_.clear();
    log_threads_.clear();
    for (ActiveRule& r : rules_) {
      r.matched = 0;
      r.spent = false;
      r.rng = r.rule.seed;
    }
  }

  // The call log: every entry point called, in order (off by default).
  void EnableCallLog(bool on) {
    cuhal::MutexLock lock(mu_);
    log_enabled_ = on;
    slow_path_.store(on || !rules_.empty(), std::memory_order_release);
  }
  std::vector<std::string> CallLog() const {
    cuhal::MutexLock lock(mu_);
    return {log_.begin(), log_.end()};
  }
  // The entries of the call log that were called on `thread`, in order.
  std::vector<std::string> CallLog(std::thread::id thread) const {
    cuhal::MutexLock lock(mu_);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < log_.size(); ++i) {
      if (log_threads_[i] == thread) out.emplace_back(log_[i]);
    }
    return out;
  }

 private:
  struct ActiveRule {
    Rule rule;
    std::uint64_t matched = 0;
    std::uint64_t rng = 0;
    bool spent = false;
  };

  // splitmix64: small, well mixed, seedable.
  static std::uint64_t NextRandom(std::uint64_t* state) {
    std::uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::atomic<std::uint64_t> calls_{0};
  std::atomic<std::uint64_t> injected_{0};
  std::atomic<bool> slow_path_{false};  // rules or the log are active
  mutable cuhal::Mutex mu_;
  std::vector<ActiveRule> rules_ CUHAL_GUARDED_BY(mu_);
  bool log_enabled_ CUHAL_GUARDED_BY(mu_) = false;
  std::vector<const char*> log_ CUHAL_GUARDED_BY(mu_);  // entry names are string literals
  std::vector<std::thread::id> log_threads_ CUHAL_GUARDED_BY(mu_);  // the caller of each log_ entry
  std::vector<std::string> wildcard_exempt_ CUHAL_GUARDED_BY(mu_);  // ExemptFromWildcards
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_CALL_FAULTS_H_
