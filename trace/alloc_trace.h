// Copyright 2026 The cuhal Authors.
// Allocation traces (docs/alloc_trace_format.md): what a program asked an allocator for, in
// order, read from the versioned JSON-lines format into memory and checked whole, so that a
// replay never meets a malformed or inconsistent operation half-way.
#ifndef CUHAL_TRACE_ALLOC_TRACE_H_
#define CUHAL_TRACE_ALLOC_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status_or.h"

namespace cuhal::trace {

inline constexpr std::string_view kAllocTraceFormat = "cuhal-alloc-trace";
inline constexpr int kAllocTraceVersion = 1;

enum class TraceOpKind { kAlloc, kFree, kRecord, kWait, kSync };
[[nodiscard]] std::string_view TraceOpKindName(TraceOpKind kind) noexcept;

// One operation line. `stream` is -1 only for a `sync` of every stream.
struct TraceOp {
  TraceOpKind kind = TraceOpKind::kSync;
  std::uint64_t id = 0;     // alloc, free
  std::uint64_t size = 0;   // alloc
  std::uint64_t event = 0;  // record, wait
  int stream = -1;
  std::optional<std::uint64_t> t_ns;
  int line = 0;  // its line in the file (1 is the header)
};

// What the recording allocator reported for the run (the header's optional `measured`).
struct TraceMeasurement {
  std::string allocator;
  std::uint64_t reserved_high = 0;
  std::uint64_t used_high = 0;
};

// A whole trace. Plain value: owned by whoever read it; not synchronized (read-only sharing is
// safe); no stream ordering of its own (its operations name the streams of a replay).
struct AllocTrace {
  std::string name;
  int streams = 0;
  std::string provenance;
  std::optional<TraceMeasurement> measured;
  std::vector<TraceOp> ops;
  // Derived while reading: the largest sum of live allocation sizes (what any allocator must
  // provide at least), and how many allocations are still live after the last operation.
  std::uint64_t used_high = 0;
  std::uint64_t live_at_end = 0;
};

// Parses and checks a trace. `source` names it in errors ("bench/traces/x.jsonl"). Errors:
// INVALID_ARGUMENT "SOURCE:LINE: REASON" for the first bad line (not JSON, a missing or mistyped
// field, an unknown format, version or op, a stream out of range, a free or a reused id that is
// not live, a wait for an event never recorded, a size of 0, an operation count that differs
// from the header's).
[[nodiscard]] StatusOr<AllocTrace> ParseAllocTrace(std::string_view text, std::string_view source);
// Reads the file at `path`, then ParseAllocTrace. NOT_FOUND when it cannot be opened (with the
// system's reason).
[[nodiscard]] StatusOr<AllocTrace> ReadAllocTrace(const std::string& path);

}  // namespace cuhal::trace

#endif  // CUHAL_TRACE_ALLOC_TRACE_H_
