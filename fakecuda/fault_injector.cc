// Copyright 2026 The cuhal Authors.
#include "fakecuda/fault_injector.h"

#include <cstdlib>
#include <cstring>


namespace fakecuda {
namespace {

// splitmix64: a small, well-mixed, seedable generator.
std::uint64_t NextRandom(std::uint64_t* state) {
  std::uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool ParseCuResult(std::string_view name, CUresult* out) {
  struct Code {
    std::string_view name;
    CUresult value;
  };
  static constexpr Code kCodes[] = {
#define CUHAL_CU_RESULT(code) {#code, code},
#include "core/symbols/cu_result_list.inc"
#undef CUHAL_CU_RESULT
  };
  for (const Code& c : kCodes) {
    if (c.name == name) {
      *out = c.value;
      return true;
    }
  }
  return false;
}

}  // namespace

void FaultInjector::AddRule(FaultRule rule) {
  std::lock_guard<std::mutex> lock(mu_);
  ActiveRule active{std::move(rule)};
  active.rng = active.rule.seed;
  rules_.push_back(std::move(active));
  slow_path_.store(true, std::memory_order_release);
}

bool FaultInjector::AddRulesFromSpec(std::string_view spec, std::string* error) {
  std::vector<FaultRule> parsed;
  while (!spec.empty()) {
    size_t end = spec.find(';');
    std::string_view item = spec.substr(0, end);
    spec = end == std::string_view::npos ? std::string_view() : spec.substr(end + 1);
    if (item.empty()) continue;
    auto fail = [&](const char* why) {
      if (error) *error = "FAKECUDA_FAULTS rule '" + std::string(item) + "': " + why;
      return false;
    };
    std::string_view parts[4];
    std::string_view rest = item;
    for (int i = 0; i < 4; ++i) {
      size_t colon = i < 3 ? rest.find(':') : std::string_view::npos;
      if (i < 3 && colon == std::string_view::npos) {
        return fail("expected entry:mode:value:ERROR");
      }
      parts[i] = rest.substr(0, colon);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
    FaultRule rule;
    rule.entry = parts[0] == "*" ? std::string() : std::string(parts[0]);
    std::string value(parts[2]);
    std::string_view code = parts[3];
    if (size_t at = code.find('@'); at != std::string_view::npos) {
      rule.seed = std::strtoull(std::string(code.substr(at + 1)).c_str(), nullptr, 10);
      code = code.substr(0, at);
    }
    if (parts[1] == "nth") {
      rule.mode = FaultRule::Mode::kNth;
      rule.n = std::strtoull(value.c_str(), nullptr, 10);
      if (rule.n == 0) return fail("nth needs a count >= 1");
    } else if (parts[1] == "every") {
      rule.mode = FaultRule::Mode::kEvery;
    } else if (parts[1] == "fraction") {
      rule.mode = FaultRule::Mode::kFraction;
      rule.fraction = std::strtod(value.c_str(), nullptr);
      if (!(rule.fraction >= 0.0 && rule.fraction <= 1.0)) return fail("fraction must be in [0, 1]");
    } else {
      return fail("mode must be nth, every or fraction");
    }
    if (!ParseCuResult(code, &rule.error) || rule.error == CUDA_SUCCESS) {
      return fail("unknown CUresult name");
    }
    parsed.push_back(std::move(rule));
  }
  for (auto& rule : parsed) AddRule(std::move(rule));
  return true;
}

void FaultInjector::ClearRules() {
  std::lock_guard<std::mutex> lock(mu_);
  rules_.clear();
  slow_path_.store(log_enabled_, std::memory_order_release);
}

CUresult FaultInjector::OnCall(const char* entry) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (!slow_path_.load(std::memory_order_acquire)) [[likely]] return CUDA_SUCCESS;
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
      case FaultRule::Mode::kNth:
        fire = r.matched == r.rule.n;
        if (fire) r.spent = true;
        break;
      case FaultRule::Mode::kEvery:
        fire = true;
        break;
      case FaultRule::Mode::kFraction: {
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
  return CUDA_SUCCESS;
}

std::uint64_t FaultInjector::calls(std::string_view entry) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::uint64_t n = 0;
  for (const char* e : log_) n += (entry == e);
  return n;
}

void FaultInjector::ResetCounters() {
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

void FaultInjector::EnableCallLog(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  log_enabled_ = on;
  slow_path_.store(on || !rules_.empty(), std::memory_order_release);
}

std::vector<std::string> FaultInjector::CallLog() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {log_.begin(), log_.end()};
}

std::vector<std::string> FaultInjector::CallLog(std::thread::id thread) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < log_.size(); ++i) {
    if (log_threads_[i] == thread) out.emplace_back(log_[i]);
  }
  return out;
}

}  // namespace fakecuda
