// Copyright 2026 The cuhal Authors.
// Footprint prediction (issue 13), without a GPU: every shipped trace (bench/traces) replayed on
// fakecuda's pool, RESERVED, USED and every allocation's address compared after every operation
// with what the real pool did, as measured on the GPU machine and kept in
// tests/trace/footprints/real-<date>.txt (made from pool_footprint_real_test's
// CUHAL_FOOTPRINT_DUMP by tests/trace/footprints/make_expected.py; its header says how it is
// encoded). Both pool configurations must agree at every step: the driver's defaults and
// CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC off (docs/driver_facts.md, "Pool placement on real
// workloads"). pool_footprint_real_test checks the same against the driver itself, nightly.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/backend.h"
#include "tests/trace/pool_footprint_replay.h"
#include "trace/alloc_trace.h"

namespace cuhal::trace {
namespace {

constexpr char kExpected[] = CUHAL_SOURCE_DIR "/tests/trace/footprints/real-2026-12-05.txt";
constexpr char kTracesDir[] = CUHAL_SOURCE_DIR "/bench/traces";
constexpr std::uint64_t kGranule = std::uint64_t{32} << 20;

// One section of the expected file: the real pool's footprint for one trace and configuration.
struct Expected {
  std::string trace;
  std::string config;  // "defaults" or "no-opportunistic"
  std::size_t steps = 0;
  std::uint64_t reserved_high = 0;
  std::uint64_t used_high = 0;
  std::map<std::size_t, std::uint64_t> reserved_changes;  // step -> RESERVED from that step on
  std::vector<std::uint64_t> offsets;  // each allocation's offset from the pool's first
};

// Names a section in failure messages.
void PrintTo(const Expected& e, std::ostream* os) { *os << e.trace << " " << e.config; }

// Reads the expected file; a malformed one is reported through `error`.
std::vector<Expected> ReadExpected(std::string* error) {
  std::vector<Expected> out;
  std::ifstream in(kExpected);
  if (!in) {
    *error = std::string("cannot read ") + kExpected;
    return out;
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "trace") {
      Expected e;
      words >> e.trace >> e.config >> e.steps >> e.reserved_high >> e.used_high;
      if (!words) break;
      out.push_back(std::move(e));
      continue;
    }
    if (out.empty() || (kind != "R" && kind != "A")) break;
    std::string word;
    while (words >> word) {
      if (kind == "R") {
        const std::size_t colon = word.find(':');
        if (colon == std::string::npos) break;
        out.back().reserved_changes[std::stoull(word.substr(0, colon))] =
            std::stoull(word.substr(colon + 1)) * kGranule;
      } else {
        out.back().offsets.push_back(std::stoull(word, nullptr, 36) * 512);
      }
    }
    if (!words.eof()) break;
  }
  if (!in.eof()) *error = std::string(kExpected) + ":" + std::to_string(number) + ": malformed";
  return out;
}

std::vector<Expected> AllExpected() {
  std::string error;
  std::vector<Expected> out = ReadExpected(&error);
  if (!error.empty()) ADD_FAILURE() << error;
  return out;
}

class PoolFootprintTest : public ::testing::TestWithParam<Expected> {};

TEST_P(PoolFootprintTest, FakeMatchesTheMeasuredRealPool) {
  const Expected& expected = GetParam();
  StatusOr<AllocTrace> trace =
      ReadAllocTrace(std::string(kTracesDir) + "/" + expected.trace + ".jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ops.size(), expected.steps) << "the trace changed since the measurement";

  std::string unavailable, error;
  auto backend = testing::Backend::Create("fake", {}, &unavailable, &error);
  ASSERT_NE(backend, nullptr) << error << unavailable;
  const FootprintReplay fake =
      ReplayOnPool(backend->api(), *trace, expected.config == "defaults");
  ASSERT_EQ(fake.fatal, "");
  ASSERT_EQ(fake.steps.size(), expected.steps);

  std::size_t differing = 0, differing_addresses = 0, allocs = 0;
  std::string first, first_address;
  std::uint64_t reserved = 0, used = 0, fake_base = 0;
  std::map<std::uint64_t, std::uint64_t> live;  // id -> size
  for (std::size_t i = 0; i < expected.steps; ++i) {
    const TraceOp& op = trace->ops[i];
    const FootprintStep& f = fake.steps[i];
    if (auto it = expected.reserved_changes.find(i); it != expected.reserved_changes.end()) {
      reserved = it->second;
    }
    // The real pool's USED was the sum of the live allocations' sizes at every step.
    if (op.kind == TraceOpKind::kAlloc) {
      live[op.id] = op.size;
      used += op.size;
    } else if (op.kind == TraceOpKind::kFree) {
      used -= live[op.id];
      live.erase(op.id);
    }
    if (op.kind == TraceOpKind::kAlloc && allocs < expected.offsets.size()) {
      if (fake_base == 0) fake_base = f.address;
      const std::uint64_t want = expected.offsets[allocs++];
      if (f.address - fake_base != want && differing_addresses++ == 0) {
        first_address = "line " + std::to_string(op.line) + ": fake +" +
                        std::to_string(f.address - fake_base) + ", real +" +
                        std::to_string(want);
      }
    }
    if (f.result == CUDA_SUCCESS && f.reserved == reserved && f.used == used) continue;
    if (differing++ == 0) {
      first = "line " + std::to_string(op.line) + " (" + std::string(TraceOpKindName(op.kind)) +
              "): fake " + testing::ResultName(f.result) + " reserved " +
              std::to_string(f.reserved) + " used " + std::to_string(f.used) +
              ", real reserved " + std::to_string(reserved) + " used " + std::to_string(used);
    }
  }
  EXPECT_EQ(allocs, expected.offsets.size()) << "allocations in the trace and the file";
  EXPECT_EQ(differing, 0u) << differing << " steps differ; the first: " << first;
  EXPECT_EQ(differing_addresses, 0u)
      << differing_addresses << " allocations placed elsewhere; the first: " << first_address;
  EXPECT_EQ(fake.reserved_high, expected.reserved_high);
  EXPECT_EQ(fake.used_high, expected.used_high);
}

std::string CaseName(const ::testing::TestParamInfo<Expected>& info) {
  std::string name = info.param.trace + "_" + info.param.config;
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Traces, PoolFootprintTest, ::testing::ValuesIn(AllExpected()),
                         CaseName);

}  // namespace
}  // namespace cuhal::trace
