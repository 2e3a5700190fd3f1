// Copyright 2026 The cuhal Authors.
#include "trace/alloc_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>

namespace cuhal::trace {
namespace {

using Json = nlohmann::json;

// Reads fields of one line's object, remembering the first problem (with its line).
class LineReader {
 public:
  LineReader(const Json& object, std::string_view source, int line)
      : object_(object), source_(source), line_(line) {}

  Status Error(std::string_view reason) const {
    return InvalidArgumentError(StrCat(source_, ":", line_, ": ", reason));
  }
  bool Has(const char* field) const { return object_.contains(field); }
  StatusOr<std::uint64_t> Unsigned(const char* field) const {
    auto it = object_.find(field);
    if (it == object_.end()) return Error(StrCat("missing field '", field, "'"));
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
      return Error(StrCat("field '", field, "' must be a non-negative integer, got ", it->dump()));
    }
    return it->get<std::uint64_t>();
  }
  StatusOr<std::string> String(const char* field) const {
    auto it = object_.find(field);
    if (it == object_.end()) return Error(StrCat("missing field '", field, "'"));
    if (!it->is_string()) {
      return Error(StrCat("field '", field, "' must be a string, got ", it->dump()));
    }
    return it->get<std::string>();
  }

 private:
  const Json& object_;
  std::string_view source_;
  int line_;
};

StatusOr<TraceOpKind> KindOf(std::string_view op) {
  if (op == "alloc") return TraceOpKind::kAlloc;
  if (op == "free") return TraceOpKind::kFree;
  if (op == "record") return TraceOpKind::kRecord;
  if (op == "wait") return TraceOpKind::kWait;
  if (op == "sync") return TraceOpKind::kSync;
  return InvalidArgumentError(StrCat("unknown op '", op,
                                     "' (alloc, free, record, wait, sync)"));
}

}  // namespace

std::string_view TraceOpKindName(TraceOpKind kind) noexcept {
  switch (kind) {
    case TraceOpKind::kAlloc: return "alloc";
    case TraceOpKind::kFree: return "free";
    case TraceOpKind::kRecord: return "record";
    case TraceOpKind::kWait: return "wait";
    case TraceOpKind::kSync: return "sync";
  }
  return "unknown";
}

StatusOr<AllocTrace> ParseAllocTrace(std::string_view text, std::string_view source) {
  AllocTrace trace;
  std::uint64_t declared_ops = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> live;  // id -> size
  std::unordered_set<std::uint64_t> ever_allocated;
  std::unordered_set<std::uint64_t> recorded_events;
  std::uint64_t used = 0;
  int line = 0;
  std::size_t at = 0;
  bool header_seen = false;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view raw = text.substr(at, end - at);
    at = end + 1;
    ++line;
    if (raw.find_first_not_of(" \t\r") == std::string_view::npos) {
      if (at >= text.size()) break;  // a trailing empty line
      return InvalidArgumentError(StrCat(source, ":", line, ": empty line"));
    }
    const Json object = Json::parse(raw.begin(), raw.end(), nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded() || !object.is_object()) {
      return InvalidArgumentError(StrCat(source, ":", line, ": not a JSON object"));
    }
    LineReader r(object, source, line);
    if (!header_seen) {
      header_seen = true;
      CUHAL_ASSIGN_OR_RETURN(std::string format, r.String("format"));
      if (format != kAllocTraceFormat) {
        return r.Error(StrCat("format is '", format, "', not '", kAllocTraceFormat, "'"));
      }
      CUHAL_ASSIGN_OR_RETURN(std::uint64_t version, r.Unsigned("version"));
      if (version != static_cast<std::uint64_t>(kAllocTraceVersion)) {
        return r.Error(StrCat("version ", version, " is not supported (this reader reads ",
                              kAllocTraceVersion, ")"));
      }
      CUHAL_ASSIGN_OR_RETURN(trace.name, r.String("name"));
      CUHAL_ASSIGN_OR_RETURN(std::uint64_t streams, r.Unsigned("streams"));
      if (streams == 0 || streams > 1024) {
        return r.Error(StrCat("streams must be 1 to 1024, got ", streams));
      }
      trace.streams = static_cast<int>(streams);
      CUHAL_ASSIGN_OR_RETURN(declared_ops, r.Unsigned("operations"));
      CUHAL_ASSIGN_OR_RETURN(trace.provenance, r.String("provenance"));
      if (auto m = object.find("measured"); m != object.end()) {
        if (!m->is_object()) return r.Error("field 'measured' must be an object");
        LineReader mr(*m, source, line);
        TraceMeasurement measured;
        CUHAL_ASSIGN_OR_RETURN(measured.allocator, mr.String("allocator"));
        CUHAL_ASSIGN_OR_RETURN(measured.reserved_high, mr.Unsigned("reserved_high"));
        CUHAL_ASSIGN_OR_RETURN(measured.used_high, mr.Unsigned("used_high"));
        trace.measured = std::move(measured);
      }
      trace.ops.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(declared_ops, 1u << 24)));
      continue;
    }
    CUHAL_ASSIGN_OR_RETURN(std::string op_name, r.String("op"));
    StatusOr<TraceOpKind> kind = KindOf(op_name);
    if (!kind.ok()) return r.Error(kind.status().message());
    TraceOp op;
    op.kind = *kind;
    op.line = line;
    if (r.Has("t_ns")) {
      CUHAL_ASSIGN_OR_RETURN(op.t_ns, r.Unsigned("t_ns"));
    }
    if (op.kind != TraceOpKind::kSync || r.Has("stream")) {
      CUHAL_ASSIGN_OR_RETURN(std::uint64_t stream, r.Unsigned("stream"));
      if (stream >= static_cast<std::uint64_t>(trace.streams)) {
        return r.Error(StrCat("stream ", stream, " is out of range (the header declares ",
                              trace.streams, ")"));
      }
      op.stream = static_cast<int>(stream);
    }
    switch (op.kind) {
      case TraceOpKind::kAlloc: {
        CUHAL_ASSIGN_OR_RETURN(op.id, r.Unsigned("id"));
        CUHAL_ASSIGN_OR_RETURN(op.size, r.Unsigned("size"));
        if (op.size == 0) return r.Error(StrCat("alloc ", op.id, " has size 0"));
        if (!ever_allocated.insert(op.id).second) {
          return r.Error(StrCat("id ", op.id, live.contains(op.id) ? " is already live"
                                                                   : " was used before"));
        }
        live.emplace(op.id, op.size);
        used += op.size;
        trace.used_high = std::max(trace.used_high, used);
        break;
      }
      case TraceOpKind::kFree: {
        CUHAL_ASSIGN_OR_RETURN(op.id, r.Unsigned("id"));
        auto it = live.find(op.id);
        if (it == live.end()) {
          return r.Error(StrCat("free of id ", op.id,
                                ever_allocated.contains(op.id) ? ", which was freed before"
                                                               : ", which was never allocated"));
        }
        used -= it->second;
        live.erase(it);
        break;
      }
      case TraceOpKind::kRecord: {
        CUHAL_ASSIGN_OR_RETURN(op.event, r.Unsigned("event"));
        recorded_events.insert(op.event);
        break;
      }
      case TraceOpKind::kWait: {
        CUHAL_ASSIGN_OR_RETURN(op.event, r.Unsigned("event"));
        if (!recorded_events.contains(op.event)) {
          return r.Error(StrCat("wait for event ", op.event, ", which was never recorded"));
        }
        break;
      }
      case TraceOpKind::kSync:
        break;
    }
    trace.ops.push_back(op);
  }
  if (!header_seen) return InvalidArgumentError(StrCat(source, ": empty (no header line)"));
  if (trace.ops.size() != declared_ops) {
    return InvalidArgumentError(StrCat(source, ":1: the header declares ", declared_ops,
                                       " operations, the file has ", trace.ops.size(),
                                       " (in lines 2 to ", line, ")"));
  }
  trace.live_at_end = live.size();
  return trace;
}

StatusOr<AllocTrace> ReadAllocTrace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFoundError(StrCat("cannot open allocation trace ", path, ": ",
                                std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return Status(StatusCode::kDataLoss,
                  StrCat("reading allocation trace ", path, ": ", std::strerror(errno)));
  }
  return ParseAllocTrace(text.str(), path);
}

}  // namespace cuhal::trace
