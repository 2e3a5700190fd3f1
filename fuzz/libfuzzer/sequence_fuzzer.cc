// Copyright 2026 The cuhal Authors.
// libFuzzer target: the differential fuzzer's own text formats (fuzz/sequence.h ParseSequence, the
// regression files and --replay input; fuzz/transcript.h CallIdOfLine and FirstMismatch over
// transcript lines). A sequence that parses must format back to text that parses to the same
// calls, and is then stepped through the handle model as the executor does (Check, Apply).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/sequence.h"
#include "fuzz/transcript.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  // Transcript lines.
  std::vector<std::string> lines;
  for (std::string_view rest = text; !rest.empty();) {
    std::size_t nl = rest.find('\n');
    lines.emplace_back(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  for (const auto& line : lines) (void)cuhal::fuzz::CallIdOfLine(line);
  if (cuhal::fuzz::FirstMismatch(lines, lines).has_value()) std::abort();
  if (!lines.empty()) {
    std::vector<std::string> shorter(lines.begin(), lines.end() - 1);
    (void)cuhal::fuzz::FirstMismatch(lines, shorter);
  }

  // Sequences.
  cuhal::fuzz::Sequence sequence;
  std::string error;
  if (!cuhal::fuzz::ParseSequence(text, &sequence, &error)) {
    if (error.empty()) std::abort();  // a failure always says why
    return 0;
  }
  cuhal::fuzz::Sequence again;
  if (!cuhal::fuzz::ParseSequence(cuhal::fuzz::FormatSequence(sequence), &again, &error) ||
      again != sequence) {
    std::abort();
  }
  cuhal::fuzz::Model model;
  bool ok = true;
  for (const auto& call : sequence) {
    if (!model.Check(call).empty()) continue;  // the executor skips it
    model.Apply(call, ok);
    ok = !ok || call.x % 3 != 0;  // some creations fail, as on a real driver
  }
  (void)model.Stale();
  return 0;
}
