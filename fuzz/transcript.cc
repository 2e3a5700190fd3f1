// Copyright 2026 The cuhal Authors.
#include "fuzz/transcript.h"

#include <charconv>
#include <fstream>

namespace cuhal::fuzz {
namespace {

bool Compared(std::string_view line) {
  return !line.empty() && line[0] != '#' && line.substr(0, 5) != "LEAK " &&
         line.substr(0, 5) != "RACE ";
}

std::vector<std::string> ComparedLines(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const std::string& line : lines) {
    if (Compared(line)) out.push_back(line);
  }
  return out;
}

}  // namespace

std::optional<Mismatch> FirstMismatch(const std::vector<std::string>& a,
                                      const std::vector<std::string>& b) {
  std::vector<std::string> ca = ComparedLines(a);
  std::vector<std::string> cb = ComparedLines(b);
  std::size_t n = std::max(ca.size(), cb.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& la = i < ca.size() ? ca[i] : "<missing>";
    const std::string& lb = i < cb.size() ? cb[i] : "<missing>";
    if (i >= ca.size() || i >= cb.size() || la != lb) {
      return Mismatch{static_cast<int>(i), i < ca.size() ? la : "<missing>",
                      i < cb.size() ? lb : "<missing>"};
    }
  }
  return std::nullopt;
}

int CallIdOfLine(std::string_view line) {
  int id = -1;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), id);
  if (ec != std::errc() || end == line.data() || end == line.data() + line.size() || *end != ' ') {
    return -1;
  }
  return id;
}

bool ReadLines(const std::string& path, std::vector<std::string>* lines) {
  std::ifstream in(path);
  if (!in) return false;
  lines->clear();
  std::string line;
  while (std::getline(in, line)) lines->push_back(line);
  return true;
}

bool WriteLines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::trunc);
  for (const std::string& line : lines) out << line << '\n';
  return static_cast<bool>(out);
}

}  // namespace cuhal::fuzz
