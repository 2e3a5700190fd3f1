// Copyright 2026 The cuhal Authors.
// The numbers of the FAKECUDA_FAULTS (fakecuda/fault_injector.h) and FAKENCCL_FAULTS
// (fakenccl/nccl_fault_injector.h) syntaxes, read by both parsers alike.
#ifndef CUHAL_FAKECUDA_FAULT_SPEC_NUMBERS_H_
#define CUHAL_FAKECUDA_FAULT_SPEC_NUMBERS_H_

#include <charconv>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace fakecuda {

// Counts, seeds and fractions are strict decimal text, as core/base/env.h reads numbers: no sign,
// space or trailing character; a count past 64 bits is refused, not wrapped. False (leaving *out) when `text` is not one.
inline bool ParseFaultCount(std::string_view text, std::uint64_t* out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  *out = value;
  return true;
}
// A probability: a decimal number ("0.25", ".5", "1", "1e-3") in [0, 1].
inline bool ParseFaultFraction(std::string_view text, double* out) {
  if (text.empty() || ((text[0] < '0' || text[0] > '9') && text[0] != '.')) return false;
  double value = 0.0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0.0 && value <= 1.0)) {
    return false;
  }
  *out = value;
  return true;
}

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_FAULT_SPEC_NUMBERS_H_
