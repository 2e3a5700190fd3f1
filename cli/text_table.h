// Copyright 2026 The cuhal Authors.
// TextTable: the plain-text tables the cuhal program prints (devices, sweep summaries, pool
// statistics).
#ifndef CUHAL_CLI_TEXT_TABLE_H_
#define CUHAL_CLI_TEXT_TABLE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace cuhal::cli {

// A table of text cells under a header row, rendered with columns padded to their widest cell
// and separated by two spaces, with a dashed line under the header:
//   ORDINAL  NAME
//   -------  -----------
//         0  NVIDIA H200
// Columns marked right-aligned (numbers) are padded on the left. Rows shorter than the header
// are padded with empty cells; cells past the header's width are ignored.
//
// Ownership: a value type. Thread-safety: as any value. Stream ordering: not applicable.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {
    right_.assign(header_.size(), false);
  }

  // Pads column `column` on the left (for numbers).
  void AlignRight(std::size_t column) {
    if (column < right_.size()) right_[column] = true;
  }
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  [[nodiscard]] std::size_t row_count() const { return rows_.size(); }

  // Writes the table, each line prefixed by `indent`, with no trailing spaces.
  void Render(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// 150109880320 -> "139.8 GiB"; 1048576 -> "1.0 MiB"; 512 -> "512 B" (binary units, one decimal).
std::string FormatBytes(std::uint64_t bytes);

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_TEXT_TABLE_H_
