// Copyright 2026 The cuhal Authors.
#include "fakenccl/nccl_fault_injector.h"

#include <climits>
#include <cstdlib>

#include "fakecuda/fault_spec_numbers.h"

namespace fakenccl {
namespace {

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

// Strict decimal (fakecuda::ParseFaultCount): the digit loop this replaces wrapped past 64 bits
// ("18446744073709551617" read as 1; found by nccl_faults_fuzzer).
bool ParseUint(std::string_view text, std::uint64_t* out) {
  return fakecuda::ParseFaultCount(text, out);
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
      // Ranks are ints: a larger RANK was cast into another rank ("die:4294967296:1" killed
      // rank 0).
      if (rank > static_cast<std::uint64_t>(INT_MAX) || nranks > static_cast<std::uint64_t>(INT_MAX)) {
        return fail("RANK and NRANKS must fit an int");
      }
      death.rank = static_cast<int>(rank);
      death.nranks = static_cast<int>(nranks);
      deaths.push_back(death);
      continue;
    }
    if (parts.size() != 4) return fail("expected entry:mode:value:ERROR");
    NcclFaultRule rule;
    // An empty name would be stored as the wildcard and fail every entry point: "*" says that.
    if (parts[0].empty()) return fail("empty entry name (\"*\" is every entry point)");
    rule.entry = parts[0] == "*" ? std::string() : std::string(parts[0]);
    std::string_view code = parts[3];
    if (size_t at = code.find('@'); at != std::string_view::npos) {
      if (!ParseUint(code.substr(at + 1), &rule.seed)) return fail("bad seed after '@'");
      code = code.substr(0, at);
    }
    if (parts[1] == "nth") {
      rule.mode = NcclFaultRule::Mode::kNth;
      if (!ParseUint(parts[2], &rule.n) || rule.n == 0) return fail("nth needs a count >= 1");
    } else if (parts[1] == "every") {
      rule.mode = NcclFaultRule::Mode::kEvery;
    } else if (parts[1] == "fraction") {
      rule.mode = NcclFaultRule::Mode::kFraction;
      // Strict: strtod took "0.5abc" (found by nccl_faults_fuzzer).
      if (!fakecuda::ParseFaultFraction(parts[2], &rule.fraction)) {
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
  CallFaults::ClearRules();
  cuhal::MutexLock lock(deaths_mu_);
  deaths_.clear();
}

void NcclFaultInjector::AddRankDeath(RankDeathRule rule) {
  cuhal::MutexLock lock(deaths_mu_);
  deaths_.push_back(rule);
}

bool NcclFaultInjector::ShouldDie(int rank, int nranks, std::uint64_t call) const {
  cuhal::MutexLock lock(deaths_mu_);
  for (const RankDeathRule& d : deaths_) {
    if (d.rank == rank && d.nth == call && (d.nranks == 0 || d.nranks == nranks)) return true;
  }
  return false;
}

}  // namespace fakenccl
