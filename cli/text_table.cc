// Copyright 2026 The cuhal Authors.
#include "cli/text_table.h"

#include <algorithm>
#include <cstdio>

namespace cuhal::cli {
namespace {

void WriteLine(std::ostream& out, const std::string& indent, const std::vector<std::string>& cells,
               const std::vector<std::size_t>& widths, const std::vector<bool>& right) {
  std::string line = indent;
  for (std::size_t c = 0; c < widths.size(); ++c) {
    const std::string cell = c < cells.size() ? cells[c] : std::string();
    const std::string pad(widths[c] - std::min(widths[c], cell.size()), ' ');
    if (c > 0) line += "  ";
    line += right[c] ? pad + cell : cell + pad;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out << line << "\n";
}

}  // namespace

void TextTable::Render(std::ostream& out, const std::string& indent) const {
  std::vector<std::size_t> widths(header_.size(), 0);
  for (std::size_t c = 0; c < header_.size(); ++c) widths[c] = header_[c].size();
  for (const std::vector<std::string>& row : rows_) {
    for (std::size_t c = 0; c < widths.size() && c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  WriteLine(out, indent, header_, widths, right_);
  std::vector<std::string> dashes;
  for (std::size_t width : widths) dashes.emplace_back(width, '-');
  WriteLine(out, indent, dashes, widths, std::vector<bool>(widths.size(), false));
  for (const std::vector<std::string>& row : rows_) WriteLine(out, indent, row, widths, right_);
}

std::string FormatBytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace cuhal::cli
