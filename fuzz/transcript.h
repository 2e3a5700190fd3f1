// Copyright 2026 The cuhal Authors.
// Transcripts (executor.h gives the line format): comparison, and files on disk.
#ifndef CUHAL_FUZZ_TRANSCRIPT_H_
#define CUHAL_FUZZ_TRANSCRIPT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuhal::fuzz {

// The first line where two transcripts differ. Comment lines ("#...") and leak and race lines
// ("LEAK ...", "RACE ...", which only the fake writes) are not compared; a transcript that ends early (a
// crash or a hang) differs at the first line it lacks, shown as "<missing>".
struct Mismatch {
  int index = 0;  // among the compared lines
  std::string a;
  std::string b;
};
std::optional<Mismatch> FirstMismatch(const std::vector<std::string>& a,
                                      const std::vector<std::string>& b);

// The call id a transcript line is about ("17 MemFree ..." -> 17), or -1 for prologue,
// teardown and status lines.
int CallIdOfLine(std::string_view line);

// Reads a file's lines (false when it cannot be read); writes them, one per line.
bool ReadLines(const std::string& path, std::vector<std::string>* lines);
bool WriteLines(const std::string& path, const std::vector<std::string>& lines);

}  // namespace cuhal::fuzz

#endif  // CUHAL_FUZZ_TRANSCRIPT_H_
