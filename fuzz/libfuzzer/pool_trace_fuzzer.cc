// Copyright 2026 The cuhal Authors.
// libFuzzer target: the memory-pool trace format (tests/pools/trace_replayer.h, ParseTrace), the
// differential pool traces of tests/pools/traces. What parses is walked step by step.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/pools/trace_replayer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  cuhal::pools::Trace trace;
  std::string error;
  if (!cuhal::pools::ParseTrace(text, "fuzz.trace", &trace, &error)) {
    if (error.empty()) std::abort();  // a failure always says why
    return 0;
  }
  int last_line = 0;
  for (const auto& step : trace.steps) {
    if (step.line <= last_line) std::abort();  // steps come in file order, one per line
    last_line = step.line;
    if (step.op.empty()) std::abort();
    (void)cuhal::pools::ResultName(step.err);
  }
  return 0;
}
