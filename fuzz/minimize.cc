// Copyright 2026 The cuhal Authors.
#include "fuzz/minimize.h"

#include <algorithm>
#include <utility>

namespace cuhal::fuzz {

Sequence Minimize(const Sequence& sequence, const FailurePredicate& fails,
                  MinimizeOptions options, int* tests) {
  int count = 0;
  auto test = [&](const Sequence& candidate) {
    if (count >= options.max_tests || std::chrono::steady_clock::now() >= options.deadline) {
      return false;
    }
    ++count;
    return fails(candidate);
  };
  Sequence current = sequence;
  // ddmin: try to drop one of n chunks; on success keep the rest with one chunk fewer.
  std::size_t n = 2;
  while (current.size() >= 2 && count < options.max_tests) {
    std::size_t chunk = (current.size() + n - 1) / n;
    bool reduced = false;
    for (std::size_t start = 0; start < current.size(); start += chunk) {
      Sequence complement;
      for (std::size_t i = 0; i < current.size(); ++i) {
        if (i < start || i >= start + chunk) complement.push_back(current[i]);
      }
      if (test(complement)) {
        current = std::move(complement);
        n = std::max<std::size_t>(n - 1, 2);
        reduced = true;
        break;
      }
    }
    if (reduced) continue;
    if (n >= current.size()) break;
    n = std::min(n * 2, current.size());
  }
  // 1-minimal: no single call can go.
  for (bool changed = true; changed && count < options.max_tests;) {
    changed = false;
    for (std::size_t i = 0; i < current.size(); ++i) {
      Sequence without = current;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      if (test(without)) {
        current = std::move(without);
        changed = true;
        break;
      }
    }
  }
  if (tests != nullptr) *tests = count;
  return current;
}

namespace {

std::string CppString(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

std::string RegressionTest(const std::string& name, const std::string& comment,
                           const Sequence& sequence, const std::vector<std::string>& expected) {
  std::string out = "// " + comment + "\n";
  out += "TEST(FuzzRegression, " + name + ") {\n";
  out += "  constexpr char kSequence[] = R\"seq(\n" + FormatSequence(sequence) + ")seq\";\n";
  out += "  const std::vector<std::string> kExpected = {\n";
  for (const std::string& line : expected) {
    if (line.empty() || line[0] == '#') continue;
    out += "      " + CppString(line) + ",\n";
  }
  out += "  };\n";
  out += "  cuhal::fuzz::Sequence sequence;\n";
  out += "  std::string error;\n";
  out += "  ASSERT_TRUE(cuhal::fuzz::ParseSequence(kSequence, &sequence, &error)) << error;\n";
  out += "  std::vector<std::string> fake = cuhal::fuzz::RunOnFake(sequence);\n";
  out += "  std::optional<cuhal::fuzz::Mismatch> m = cuhal::fuzz::FirstMismatch(fake, kExpected);\n";
  out += "  EXPECT_FALSE(m.has_value()) << \"fake: \" << m->a << \"\\nexpected: \" << m->b;\n";
  out += "}\n";
  return out;
}

}  // namespace cuhal::fuzz
