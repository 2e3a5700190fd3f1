// Copyright 2026 The cuhal Authors.
// For the fault-spec fuzz targets: what an accepted FAKECUDA_FAULTS / FAKENCCL_FAULTS spec must
// look like, checked independently of the parsers. Their numbers are strict: a count or a seed is
// a decimal integer that fits its type (no sign, no trailing text, no wrap-around), a fraction a
// whole decimal number, a rank a decimal int.
#ifndef CUHAL_FUZZ_LIBFUZZER_FAULT_SPEC_CHECK_H_
#define CUHAL_FUZZ_LIBFUZZER_FAULT_SPEC_CHECK_H_

#include <charconv>
#include <cstdint>
#include <limits>
#include <string_view>
#include <system_error>
#include <vector>

namespace cuhal::libfuzzer {

inline std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    std::size_t at = s.find(sep);
    parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return parts;
    s = s.substr(at + 1);
  }
}

inline bool IsStrictUnsigned(std::string_view text,
                             std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value <= max;
}

inline bool IsStrictFraction(std::string_view text) {
  if (text.empty() || ((text[0] < '0' || text[0] > '9') && text[0] != '.')) return false;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 0.0 && value <= 1.0;
}

// One accepted "entry:mode:value:ERROR[@seed]" rule: are its numbers strict?
inline bool RuleNumbersAreStrict(std::string_view item) {
  std::vector<std::string_view> parts = SplitOn(item, ':');
  if (parts.size() < 4) return false;
  std::string_view code = item.substr(parts[0].size() + parts[1].size() + parts[2].size() + 3);
  if (std::size_t at = code.find('@'); at != std::string_view::npos) {
    if (!IsStrictUnsigned(code.substr(at + 1))) return false;
  }
  if (parts[1] == "nth") return IsStrictUnsigned(parts[2]);
  if (parts[1] == "fraction") return IsStrictFraction(parts[2]);
  return true;
}

}  // namespace cuhal::libfuzzer

#endif  // CUHAL_FUZZ_LIBFUZZER_FAULT_SPEC_CHECK_H_
