// Copyright 2026 The cuhal Authors.
// libFuzzer target: allocation traces (trace/alloc_trace.h, ParseAllocTrace; the JSON-lines
// format of docs/alloc_trace_format.md that `cuhal trace replay` and bench/alloc_bench read).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "trace/alloc_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto trace = cuhal::trace::ParseAllocTrace(text, "fuzz.jsonl");
  if (!trace.ok()) {
    if (trace.status().message().empty()) std::abort();  // a failure always says why
    return 0;
  }
  int last_line = 0;
  for (const auto& op : trace->ops) {
    if (op.line <= last_line) std::abort();  // ops come in file order, one per line
    last_line = op.line;
    (void)cuhal::trace::TraceOpKindName(op.kind);
  }
  if (trace->live_at_end > trace->ops.size()) std::abort();
  return 0;
}
