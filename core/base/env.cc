// Copyright 2026 The cuhal Authors.
#include "core/base/env.h"

#include <cctype>
#include <cstdlib>

namespace cuhal::env {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

Status Invalid(std::string_view name, std::string_view text, std::string_view expected) {
  return InvalidArgumentError(StrCat(name, "='", text, "': expected ", expected));
}

}  // namespace

const char* ProcessEnvironment(const char* name) { return std::getenv(name); }

Lookup MapLookup(const std::map<std::string, std::string>& vars) {
  return [&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

StatusOr<std::uint64_t> ParseUnsigned(std::string_view name, std::string_view text,
                                      std::uint64_t min, std::uint64_t max) {
  const std::string expected = StrCat("a decimal integer in [", min, ", ", max, "]");
  if (text.empty()) return Invalid(name, text, expected);
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return Invalid(name, text, expected);
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return Invalid(name, text, expected);  // past 64 bits
    }
    value = value * 10 + digit;
  }
  if (value < min || value > max) return Invalid(name, text, expected);
  return value;
}

StatusOr<bool> ParseBool(std::string_view name, std::string_view text) {
  static constexpr std::string_view kTrue[] = {"1", "true", "yes", "on"};
  static constexpr std::string_view kFalse[] = {"0", "false", "no", "off"};
  for (std::string_view word : kTrue) {
    if (EqualsIgnoreCase(text, word)) return true;
  }
  for (std::string_view word : kFalse) {
    if (EqualsIgnoreCase(text, word)) return false;
  }
  return Invalid(name, text, "a boolean: 1/0, true/false, yes/no or on/off");
}

StatusOr<std::size_t> ParseChoice(std::string_view name, std::string_view text,
                                  std::span<const std::string_view> choices) {
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (!text.empty() && EqualsIgnoreCase(text, choices[i])) return i;
  }
  std::string expected = "one of";
  for (std::size_t i = 0; i < choices.size(); ++i) {
    expected += StrCat(i == 0 ? " '" : ", '", choices[i], "'");
  }
  return Invalid(name, text, expected);
}

StatusOr<std::uint64_t> ReadUnsigned(const char* name, std::uint64_t fallback, std::uint64_t min,
                                     std::uint64_t max, const Lookup& lookup) {
  const char* text = lookup(name);
  if (text == nullptr) return fallback;
  return ParseUnsigned(name, text, min, max);
}

StatusOr<bool> ReadBool(const char* name, bool fallback, const Lookup& lookup) {
  const char* text = lookup(name);
  if (text == nullptr) return fallback;
  return ParseBool(name, text);
}

std::optional<std::string> ReadString(const char* name, const Lookup& lookup) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  return std::string(text);
}

}  // namespace cuhal::env
