// Copyright 2026 The cuhal Authors.
#include "fakecuda/fault_injector.h"

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "fakecuda/fault_spec_numbers.h"

namespace fakecuda {
namespace {

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
    // An empty name would be stored as the wildcard and fail every entry point: "*" says that.
    if (parts[0].empty()) return fail("empty entry name (\"*\" is every entry point)");
    FaultRule rule;
    rule.entry = parts[0] == "*" ? std::string() : std::string(parts[0]);
    std::string_view value = parts[2];
    std::string_view code = parts[3];
    // The numbers are strict (ParseFaultCount, ParseFaultFraction): strtoull and strtod took
    // "3x", "-1" (as 2^64 - 1) and "0.5abc" (found by cuda_faults_fuzzer).
    if (size_t at = code.find('@'); at != std::string_view::npos) {
      if (!ParseFaultCount(code.substr(at + 1), &rule.seed)) return fail("bad seed after '@'");
      code = code.substr(0, at);
    }
    if (parts[1] == "nth") {
      rule.mode = FaultRule::Mode::kNth;
      if (!ParseFaultCount(value, &rule.n) || rule.n == 0) return fail("nth needs a count >= 1");
    } else if (parts[1] == "every") {
      rule.mode = FaultRule::Mode::kEvery;
    } else if (parts[1] == "fraction") {
      rule.mode = FaultRule::Mode::kFraction;
      if (!ParseFaultFraction(value, &rule.fraction)) return fail("fraction must be in [0, 1]");
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

}  // namespace fakecuda
