// Copyright 2026 The cuhal Authors.
#include "trace/alloc_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace cuhal::trace {
namespace {

using ::testing::HasSubstr;

constexpr const char* kHeader =
    R"({"format":"cuhal-alloc-trace","version":1,"name":"t","streams":2,"operations":)";

// A trace of `ops` (one JSON object per element) under a header that declares them.
std::string Trace(const std::vector<std::string>& ops, int declared = -1) {
  std::string text = StrCat(kHeader, declared < 0 ? ops.size() : static_cast<std::size_t>(declared),
                            R"(,"provenance":"test"})", "\n");
  for (const std::string& op : ops) text += op + "\n";
  return text;
}

// The status of parsing `text`, which must fail.
Status Refused(const std::string& text) {
  StatusOr<AllocTrace> t = ParseAllocTrace(text, "x.jsonl");
  EXPECT_FALSE(t.ok());
  return t.ok() ? OkStatus() : t.status();
}

TEST(AllocTraceTest, ReadsEveryOperationAndDerivesTheUsedHigh) {
  const std::string text = Trace({
      R"({"op":"alloc","id":1,"size":100,"stream":0,"t_ns":0})",
      R"({"op":"alloc","id":2,"size":50,"stream":1})",
      R"({"op":"record","event":7,"stream":1})",
      R"({"op":"wait","event":7,"stream":0})",
      R"({"op":"free","id":1,"stream":0,"t_ns":10})",
      R"({"op":"alloc","id":3,"size":20,"stream":0})",
      R"({"op":"sync","stream":1})",
      R"({"op":"sync"})",
  });
  StatusOr<AllocTrace> t = ParseAllocTrace(text, "x.jsonl");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->name, "t");
  EXPECT_EQ(t->streams, 2);
  ASSERT_EQ(t->ops.size(), 8u);
  EXPECT_EQ(t->ops[1].kind, TraceOpKind::kAlloc);
  EXPECT_EQ(t->ops[1].stream, 1);
  EXPECT_FALSE(t->ops[1].t_ns.has_value());
  EXPECT_EQ(t->ops[4].kind, TraceOpKind::kFree);
  EXPECT_EQ(t->ops[4].t_ns, 10u);
  EXPECT_EQ(t->ops[4].line, 6);
  EXPECT_EQ(t->ops[3].event, 7u);
  EXPECT_EQ(t->ops[7].stream, -1);  // every stream
  EXPECT_EQ(t->used_high, 150u);
  EXPECT_EQ(t->live_at_end, 2u);
  EXPECT_FALSE(t->measured.has_value());
}

TEST(AllocTraceTest, EachMalformedLineIsRefusedWithItsLineAndReason) {
  struct Case {
    std::string text;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"", "x.jsonl: empty (no header line)"},
      {"{not json\n", "x.jsonl:1: not a JSON object"},
      {"[1,2]\n", "x.jsonl:1: not a JSON object"},
      {R"({"format":"other","version":1})" "\n", "x.jsonl:1: format is 'other'"},
      {R"({"format":"cuhal-alloc-trace","version":2})" "\n", "x.jsonl:1: version 2 is not supported"},
      {R"({"format":"cuhal-alloc-trace","version":1,"name":"t","streams":0,"operations":0,"provenance":""})" "\n",
       "x.jsonl:1: streams must be 1 to 1024, got 0"},
      {R"({"format":"cuhal-alloc-trace","version":1,"streams":1})" "\n", "x.jsonl:1: missing field 'name'"},
      {Trace({R"({"op":"alloc","id":1,"size":-4,"stream":0})"}),
       "x.jsonl:2: field 'size' must be a non-negative integer, got -4"},
      {Trace({R"({"op":"alloc","id":1,"size":0,"stream":0})"}), "x.jsonl:2: alloc 1 has size 0"},
      {Trace({R"({"op":"alloc","id":1,"size":8})"}), "x.jsonl:2: missing field 'stream'"},
      {Trace({R"({"op":"alloc","id":1,"size":8,"stream":2})"}),
       "x.jsonl:2: stream 2 is out of range (the header declares 2)"},
      {Trace({R"({"op":"grow","id":1})"}), "x.jsonl:2: unknown op 'grow'"},
      {Trace({R"({"id":1})"}), "x.jsonl:2: missing field 'op'"},
      {Trace({R"({"op":"free","id":4,"stream":0})"}), "x.jsonl:2: free of id 4, which was never allocated"},
      {Trace({R"({"op":"alloc","id":1,"size":8,"stream":0})", R"({"op":"free","id":1,"stream":0})",
              R"({"op":"free","id":1,"stream":0})"}),
       "x.jsonl:4: free of id 1, which was freed before"},
      {Trace({R"({"op":"alloc","id":1,"size":8,"stream":0})",
              R"({"op":"alloc","id":1,"size":8,"stream":1})"}),
       "x.jsonl:3: id 1 is already live"},
      {Trace({R"({"op":"alloc","id":1,"size":8,"stream":0})", R"({"op":"free","id":1,"stream":0})",
              R"({"op":"alloc","id":1,"size":8,"stream":0})"}),
       "x.jsonl:4: id 1 was used before"},
      {Trace({R"({"op":"wait","event":3,"stream":0})"}), "x.jsonl:2: wait for event 3, which was never recorded"},
      {Trace({R"({"op":"sync"})"}, 5), "x.jsonl:1: the header declares 5 operations, the file has 1 (in lines 2 to 2)"},
      {Trace({R"({"op":"sync"})", ""}) + R"({"op":"sync"})" "\n", "x.jsonl:3: empty line"},
      {Trace({R"({"op":"sync","t_ns":"soon"})"}), "x.jsonl:2: field 't_ns' must be a non-negative integer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Status s = Refused(c.text);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
}

TEST(AllocTraceTest, AMissingFileIsNotFoundNamingIt) {
  StatusOr<AllocTrace> t = ReadAllocTrace("/nonexistent/cuhal/none.jsonl");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr("/nonexistent/cuhal/none.jsonl"));
  EXPECT_THAT(t.status().message(), HasSubstr("No such file"));
}

// The traces shipped in bench/traces: each reads, and the used high its requests imply agrees
// with what PyTorch's caching allocator reported (it rounds each request up to 512 bytes, so its
// figure is at least the trace's and at most 0.5% more here).
TEST(AllocTraceTest, ShippedTracesReadAndAgreeWithTheirMeasurement) {
  int read = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(CUHAL_SOURCE_DIR) + "/bench/traces")) {
    if (entry.path().extension() != ".jsonl") continue;
    SCOPED_TRACE(entry.path().string());
    StatusOr<AllocTrace> t = ReadAllocTrace(entry.path().string());
    ASSERT_TRUE(t.ok()) << t.status();
    ++read;
    EXPECT_EQ(t->name, entry.path().stem().string());
    EXPECT_FALSE(t->provenance.empty());
    EXPECT_GT(t->ops.size(), 100u);
    if (!t->measured.has_value()) continue;
    EXPECT_GE(t->measured->used_high, t->used_high);
    EXPECT_LE(static_cast<double>(t->measured->used_high),
              static_cast<double>(t->used_high) * 1.005);
    EXPECT_GE(t->measured->reserved_high, t->measured->used_high);
  }
  EXPECT_GE(read, 3);
}

}  // namespace
}  // namespace cuhal::trace
