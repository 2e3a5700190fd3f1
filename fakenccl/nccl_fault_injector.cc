// Copyright 2026 The cuhal Authors.
#include "fakenccl/nccl_fault_injector.h"

#include <cstdlib>

namespace fakenccl {
namespace {

// splitmix64: small, well mixed, seedable.
std::uint64_t NextRandom(std::uint64_t* state) {
  std::uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr ncclResult_t kAllResults[] = {ncclSuccess,         ncclUnhandledCudaError,
                                        ncclSystemError,     ncclInternalError,
                                        ncclInvalidArgument, ncclInvalidUsage,
                                        ncclRemoteError,     ncclInProgress};

bool ParseResult(std::string_view name, ncclResult_t* out) {
  for (ncclResult_t r : kAllResults) {
    if (NcclResultName(r) == name) {
      *out = r;
      return true;
    }
  }
  return false;
}

bool ParseUint(std::string_view text, std::uint64_t* out) {
  if (text.empty()) return false;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    size_t at = s.find(sep);
    parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s = s.substr(at + 1);
  }
  return parts;
}

}  // namespace

std::string NcclResultName(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "ncclResult_t(" + std::to_string(static_cast<int>(result)) + ")";
  }
}

void NcclFaultInjector::AddRule(NcclFaultRule rule) {
  std::lock_guard<std::mutex> lock(mu_);
  ActiveRule active{std::move(rule)};
  active.rng = active.rule.seed;
  rules_.push_back(std::move(active));
  slow_path_.store(true, std::memory_order_release);
}

bool NcclFaultInjector::AddRulesFromSpec(std::string_view spec, std::string* error) {
  std::vector<NcclFaultRule> rules;
  std::vector<RankDeathRule> deaths;
  for (std::string_view item : Split(spec, ';')) {
    if (item.empty()) continue;
    auto fail = [&](const char* why) {
      if (error != nullptr) *error = "FAKENCCL_FAULTS item '" + std::string(item) + "': " + why;
      return false;
    };
    std::vector<std::string_view> parts = Split(item, ':');
    if (parts[0] == "die") {
      RankDeathRule death;
      std::uint64_t rank = 0;
      std::uint64_t nranks = 0;
      if ((parts.size() != 3 && parts.size() != 4) || !ParseUint(parts[1], &rank) ||
          !ParseUint(parts[2], &death.nth) || death.nth == 0 ||
          (parts.size() == 4 && !ParseUint(parts[3], &nranks))) {
        return fail("expected die:RANK:NTH or die:RANK:NTH:NRANKS (NTH >= 1)");
      }
      death.rank = static_cast<int>(rank);
      death.nranks = static_cast<int>(nranks);
      deaths.push_back(death);
      continue;
    }
    if (parts.size() != 4) return fail("expected entry:mode:value:ERROR");
    NcclFaultRule rule;
    rule.entry = parts[0] == "*" ? std::string() : std::string(parts[0]);
    std::string_view code = parts[3];
    if (size_t at = code.find('@'); at != std::string_view::npos) {
      if (!ParseUint(code.substr(at + 1), &rule.seed)) return fail("bad seed after '@'");
      code = code.substr(0, at);
    }
    std::string value(parts[2]);
    if (parts[1] == "nth") {
      rule.mode = NcclFaultRule::Mode::kNth;
      if (!ParseUint(parts[2], &rule.n) || rule.n == 0) return fail("nth needs a count >= 1");
    } else if (parts[1] == "every") {
      rule.mode = NcclFaultRule::Mode::kEvery;
    } else if (parts[1] == "fraction") {
      rule.mode = NcclFaultRule::Mode::kFraction;
      rule.fraction = std::strtod(value.c_str(), nullptr);
      if (!(rule.fraction >= 0.0 && rule.fraction <= 1.0)) {
        return fail("fraction must be in [0, 1]");
      }
    } else {
      return fail("mode must be nth, every or fraction");
    }
    if (!ParseResult(code, &rule.error) || rule.error == ncclSuccess) {
      return fail("unknown ncclResult_t name (or ncclSuccess)");
    }
    rules.push_back(std::move(rule));
  }
  for (NcclFaultRule& rule : rules) AddRule(std::move(rule));
  for (const RankDeathRule& death : deaths) AddRankDeath(death);
  return true;
}

void NcclFaultInjector::ClearRules() {
  std::lock_guard<std::mutex> lock(mu_);
  rules_.clear();
  deaths_.clear();
  slow_path_.store(log_enabled_, std::memory_order_release);
}

void NcclFaultInjector::AddRankDeath(RankDeathRule rule) {
  std::lock_guard<std::mutex> lock(mu_);
  deaths_.push_back(rule);
}

bool NcclFaultInjector::ShouldDie(int rank, int nranks, std::uint64_t call) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const RankDeathRule& d : deaths_) {
    if (d.rank == rank && d.nth == call && (d.nranks == 0 || d.nranks == nranks)) return true;
  }
  return false;
}

ncclResult_t NcclFaultInjector::OnCall(const char* entry) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (!slow_path_.load(std::memory_order_acquire)) [[likely]] return ncclSuccess;
  std::lock_guard<std::mutex> lock(mu_);
  const std::thread::id caller = std::this_thread::get_id();
  if (log_enabled_) {
    log_.push_back(entry);
    log_threads_.push_back(caller);
  }
  for (ActiveRule& r : rules_) {
    if (r.spent) continue;
    if (!r.rule.entry.empty() && r.rule.entry != entry) continue;
    if (r.rule.thread.has_value() && *r.rule.thread != caller) continue;
    ++r.matched;
    bool fire = false;
    switch (r.rule.mode) {
      case NcclFaultRule::Mode::kNth:
        fire = r.matched == r.rule.n;
        if (fire) r.spent = true;
        break;
      case NcclFaultRule::Mode::kEvery:
        fire = true;
        break;
      case NcclFaultRule::Mode::kFraction: {
        double u = static_cast<double>(NextRandom(&r.rng) >> 11) * 0x1.0p-53;
        fire = u < r.rule.fraction;
        break;
      }
    }
    if (fire) {
      injected_.fetch_add(1, std::memory_order_relaxed);
      return r.rule.error;
    }
  }
  return ncclSuccess;
}

std::uint64_t NcclFaultInjector::calls(std::string_view entry) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::uint64_t n = 0;
  for (const char* e : log_) n += (entry == e);
  return n;
}

void NcclFaultInjector::ResetCounters() {
  std::lock_guard<std::mutex> lock(mu_);
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

void NcclFaultInjector::EnableCallLog(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  log_enabled_ = on;
  slow_path_.store(on || !rules_.empty(), std::memory_order_release);
}

std::vector<std::string> NcclFaultInjector::CallLog() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {log_.begin(), log_.end()};
}

std::vector<std::string> NcclFaultInjector::CallLog(std::thread::id thread) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < log_.size(); ++i) {
    if (log_threads_[i] == thread) out.emplace_back(log_[i]);
  }
  return out;
}

}  // namespace fakenccl
