// Copyright 2026 The cuhal Authors.
// Configuration from environment variables: the one parser for every variable that cuhal's fakes,
// its CLI, the sweep harness and the test support read (README.md "Configuration" lists them
// all). The rules, the same for every variable:
//   - unset: the variable's default;
//   - an integer: decimal digits only (no sign, no spaces, no "0x"), inside the variable's range;
//     a negative number, a value past the range or past 64 bits, and trailing junk are errors;
//   - a boolean: 1/0, true/false, yes/no, on/off, in any case;
//   - a choice: one of the variable's listed words, in any case;
//   - an empty value: an error for an integer, a boolean or a choice; for a string (a path, a
//     list) it means unset, as `VAR= program` is the shell's way of clearing one;
//   - an invalid value is an INVALID_ARGUMENT Status whose message names the variable, the value
//     and what is accepted, e.g.
//       FAKENCCL_TIMEOUT_TICKS='-1': expected a decimal integer in [1, 18446744073709551615]
//     and the component that reads it refuses to start (it never falls back to the default).
// Dependency-free (the standard library and core/base's Status), so the fakes may use it. The
// device core itself reads no environment variable except the real loader's library paths.
#ifndef CUHAL_CORE_BASE_ENV_H_
#define CUHAL_CORE_BASE_ENV_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/base/status_or.h"

namespace cuhal::env {

// Looks a variable up: its value, or null when it is unset. Tests pass their own; the default is
// the process environment (ProcessEnvironment).
using Lookup = std::function<const char*(const char* name)>;

// std::getenv(name).
const char* ProcessEnvironment(const char* name);
// A lookup over `vars` alone (for tests, or to configure from settings held elsewhere); `vars` must
// outlive the lookup.
Lookup MapLookup(const std::map<std::string, std::string>& vars);

// ---- Parsing one value ----------------------------------------------------------------------
// `name` only labels the error message. Each fails with INVALID_ARGUMENT as described above.

// A decimal integer in [min, max].
[[nodiscard]] StatusOr<std::uint64_t> ParseUnsigned(
    std::string_view name, std::string_view text, std::uint64_t min = 0,
    std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
// 1/0, true/false, yes/no, on/off (any case).
[[nodiscard]] StatusOr<bool> ParseBool(std::string_view name, std::string_view text);
// The index in `choices` of the word `text` is (compared in any case).
[[nodiscard]] StatusOr<std::size_t> ParseChoice(std::string_view name, std::string_view text,
                                                std::span<const std::string_view> choices);

// ---- Reading a variable ---------------------------------------------------------------------

// The variable's integer, or `fallback` when it is unset.
[[nodiscard]] StatusOr<std::uint64_t> ReadUnsigned(
    const char* name, std::uint64_t fallback, std::uint64_t min = 0,
    std::uint64_t max = std::numeric_limits<std::uint64_t>::max(),
    const Lookup& lookup = ProcessEnvironment);
// The variable's boolean, or `fallback` when it is unset.
[[nodiscard]] StatusOr<bool> ReadBool(const char* name, bool fallback,
                                      const Lookup& lookup = ProcessEnvironment);
// The variable's text, or nullopt when it is unset or empty. Never fails.
[[nodiscard]] std::optional<std::string> ReadString(const char* name,
                                                    const Lookup& lookup = ProcessEnvironment);

// The value mapped to the variable's word in `choices` (words compared in any case), or
// `fallback` when it is unset.
template <typename T>
[[nodiscard]] StatusOr<T> ReadChoice(const char* name, T fallback,
                                     std::initializer_list<std::pair<std::string_view, T>> choices,
                                     const Lookup& lookup = ProcessEnvironment) {
  const char* text = lookup(name);
  if (text == nullptr) return fallback;
  std::vector<std::string_view> words;
  words.reserve(choices.size());
  for (const auto& choice : choices) words.push_back(choice.first);
  CUHAL_ASSIGN_OR_RETURN(std::size_t index, ParseChoice(name, text, words));
  return (choices.begin() + index)->second;
}

}  // namespace cuhal::env

#endif  // CUHAL_CORE_BASE_ENV_H_
