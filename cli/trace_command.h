// Copyright 2026 The cuhal Authors.
// `cuhal trace replay`: replays an allocation trace (docs/alloc_trace_format.md) on each chosen
// allocator (trace/replay.h) on the fake or the real driver, and reports what each costs (ns per
// operation) and holds (reserved against used bytes): a table, or JSON, and optionally a plot
// (bench/traces/plot_replay.py).
#ifndef CUHAL_CLI_TRACE_COMMAND_H_
#define CUHAL_CLI_TRACE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/bindings.h"
#include "core/base/status.h"

namespace cuhal::cli {

struct TraceReplayOptions {
  std::string trace_path;
  BackendKind backend = BackendKind::kFake;
  // Allocator names (trace/replay.h: ReplayAllocatorName), each possibly a comma list; "all" or
  // empty: every allocator available on the backend in this build, the others reported as
  // skipped with the reason (pytorch without torch, or on the fake). A name asked for
  // explicitly that cannot run is an error.
  std::vector<std::string> allocators;
  int repeat = 1;  // timing passes per allocator (>= 1)
  // JSON instead of the table:
  //   {"trace": "multi_stream", "source": "bench/traces/multi_stream.jsonl", "backend": "fake",
  //    "streams": 4, "operations": 8007, "trace_used_high": 123, "repeat": 1,
  //    "allocators": [{"allocator": "driver-pool", "operations": 8007, "repeat": 1,
  //                    "ns_per_op_mean": 1.5, "ns_per_op_p50": ..., "ns_per_op_p99": ...,
  //                    "ns_per_op_timed_mean": ..., "alloc_ns_mean": ...,
  //                    "free_ns_mean": ..., "reserved_high": ...,
  //                    "used_high": ..., "reserved_per_used": 1.2, "driver_calls": ...,
  //                    "driver_calls_by_entry": {"cuMemFreeAsync": 9, ...},
  //                    "freed_at_end": 0, "series_stride": 1,
  //                    "series": {"op": [0, ...], "reserved": [...], "used": [...]}}],
  //    "skipped": [{"allocator": "pytorch", "reason": "..."}]}
  bool json = false;
  // Also plot reserved and used over the operations into this file (the JSON above written to
  // a temporary file, then `python3 PLOT_SCRIPT JSON FILE`).
  std::string plot_path;
  // Draw a progress bar on `progress` (the caller sets it when that is a terminal).
  bool progress_bar = false;
};

// The plot script: $CUHAL_PLOT_SCRIPT when set, else bench/traces/plot_replay.py in the source
// tree this program was built from.
[[nodiscard]] std::string PlotScriptPath();

// Reads and checks the trace, resolves the allocators, binds the backend's table, retains
// device 0's primary context, replays the trace on each allocator and writes the table (or the
// JSON) to `out`; skipped allocators are listed after the table. Nothing is written to `out` on
// error. Errors: NOT_FOUND for a trace that cannot be opened (path and reason);
// INVALID_ARGUMENT for a malformed trace ("PATH:LINE: reason"), an unknown allocator (listing
// the valid names) or repeat < 1; UNIMPLEMENTED / FAILED_PRECONDITION for an allocator asked
// for by name that cannot run here (why); the binding's or the replay's error otherwise;
// UNAVAILABLE when the plot cannot be made (python3 or matplotlib missing, naming which).
[[nodiscard]] Status RunTraceReplay(const TraceReplayOptions& options, std::ostream& out,
                                    std::ostream& progress);

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_TRACE_COMMAND_H_
