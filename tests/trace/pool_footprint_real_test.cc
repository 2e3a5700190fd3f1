// Copyright 2026 The cuhal Authors.
// Footprint prediction (issue 13): every allocation trace shipped in bench/traces is replayed on
// the H200's memory pool and on fakecuda's, in the same process, and the pools' RESERVED and
// USED bytes are compared after every operation. The fake predicts the real pool's footprint
// when they agree at every step.
//
// Two pool configurations per trace: the driver's defaults (every reuse policy on), and
// CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC off. With the defaults, a block freed on one stream
// may be reused by another once the free happens to have completed on the GPU: a race with the
// GPU's progress. Measured on the H200 (docs/driver_facts.md, "Pool placement"), the defaults
// change the real pool's choices even on one stream (random_mixed: 224 MiB reserved high with
// the defaults, 160 MiB without opportunistic reuse); fakecuda models them (the 2026-12-05 dump
// agreed at every step, tests/trace/pool_footprint_test). A replay launches no kernel, so every
// free has completed on the GPU by the next call and the race never shows: with the fake's rule
// (docs/driver_facts.md, "Pool placement", rules 4-5) the GPU agreed at every step of every trace
// in both configurations (H100, driver 580.159.04, 2026-12-05). So both configurations must agree
// at every step: RESERVED, USED and the address of every allocation (relative to the pool's
// first). A trace with kernels in flight would need the GPU's progress, which this does not model.
//
// Prints one FOOTPRINT line per (trace, configuration) for the nightly report. Skipped, with the
// reason, without a usable GPU (CUHAL_REAL_REQUIRED=1 makes that a failure).
// CUHAL_FOOTPRINT_DUMP=<file> appends each step of both replays (op, address, reserved, used).
#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/env.h"
#include "tests/support/backend.h"
#include "tests/trace/pool_footprint_replay.h"
#include "trace/alloc_trace.h"

namespace cuhal::trace {
namespace {

std::vector<std::string> Traces() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(CUHAL_TRACE_DIR)) {
    if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Dump(const AllocTrace& trace, bool opportunistic, const FootprintReplay& fake,
          const FootprintReplay& real) {
  const std::optional<std::string> path = env::ReadString("CUHAL_FOOTPRINT_DUMP");
  if (!path) return;
  std::ofstream out(*path, std::ios::app);
  out << "== " << trace.name << (opportunistic ? " defaults" : " no-opportunistic") << "\n";
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    out << op.line << " " << TraceOpKindName(op.kind) << " id=" << op.id << " size=" << op.size
        << " stream=" << op.stream;
    for (const auto* r : {&fake, &real}) {
      if (i < r->steps.size()) {
        const FootprintStep& s = r->steps[i];
        out << (r == &fake ? " | fake " : " | real ") << testing::ResultName(s.result) << " 0x"
            << std::hex << s.address << std::dec << " R=" << s.reserved << " U=" << s.used;
      }
    }
    out << "\n";
  }
}

class PoolFootprintRealTest
    : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(PoolFootprintRealTest, FakePredictsTheRealPool) {
  const auto& [path, opportunistic] = GetParam();
  StatusOr<AllocTrace> trace = ReadAllocTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status();

  std::string unavailable, error;
  FootprintReplay real;
  {
    auto backend = testing::Backend::Create("real", {}, &unavailable, &error);
    if (backend == nullptr) {
      if (!error.empty()) FAIL() << error;
      GTEST_SKIP() << unavailable;
    }
    real = ReplayOnPool(backend->api(), *trace, opportunistic);
  }
  FootprintReplay fake;
  {
    auto backend = testing::Backend::Create("fake", {}, &unavailable, &error);
    ASSERT_NE(backend, nullptr) << error;
    fake = ReplayOnPool(backend->api(), *trace, opportunistic);
  }
  Dump(*trace, opportunistic, fake, real);
  ASSERT_EQ(real.fatal, "") << "real";
  ASSERT_EQ(fake.fatal, "") << "fake";

  std::size_t differing = 0;
  std::string first;
  // Addresses, as offsets from each pool's first allocation (the pools' bases differ).
  std::size_t differing_addresses = 0;
  std::string first_address;
  std::uint64_t fake_base = 0, real_base = 0;
  for (std::size_t i = 0; i < trace->ops.size(); ++i) {
    const FootprintStep& f = fake.steps[i];
    const FootprintStep& r = real.steps[i];
    if (f.address != 0 && r.address != 0) {
      if (fake_base == 0) fake_base = f.address;
      if (real_base == 0) real_base = r.address;
      if (f.address - fake_base != r.address - real_base && differing_addresses++ == 0) {
        first_address = "line " + std::to_string(trace->ops[i].line) + ": fake +" +
                        std::to_string(f.address - fake_base) + ", real +" +
                        std::to_string(r.address - real_base);
      }
    }
    if (f.result == r.result && f.reserved == r.reserved && f.used == r.used) continue;
    if (differing++ == 0) {
      first = "line " + std::to_string(trace->ops[i].line) + " (" +
              std::string(TraceOpKindName(trace->ops[i].kind)) + "): fake " +
              testing::ResultName(f.result) + " reserved " + std::to_string(f.reserved) +
              " used " + std::to_string(f.used) + ", real " + testing::ResultName(r.result) +
              " reserved " + std::to_string(r.reserved) + " used " + std::to_string(r.used);
    }
  }
  std::cout << "FOOTPRINT {\"trace\": \"" << trace->name << "\", \"config\": \""
            << (opportunistic ? "defaults" : "no-opportunistic") << "\", \"steps\": "
            << trace->ops.size() << ", \"differing_steps\": " << differing
            << ", \"differing_addresses\": " << differing_addresses
            << ", \"fake_reserved_high\": " << fake.reserved_high
            << ", \"real_reserved_high\": " << real.reserved_high
            << ", \"fake_used_high\": " << fake.used_high
            << ", \"real_used_high\": " << real.used_high << "}" << std::endl;
  const char* config = opportunistic ? " (defaults)" : " (no opportunistic reuse)";
  EXPECT_EQ(differing, 0u) << trace->name << config << ": " << differing
                           << " steps differ; the first: " << first;
  // Measured (docs/driver_facts.md, "Pool placement"): the fake places every allocation where the
  // driver does, on every shipped trace.
  EXPECT_EQ(differing_addresses, 0u) << trace->name << config << ": " << differing_addresses
                                     << " allocations placed elsewhere; the first: "
                                     << first_address;
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<std::string, bool>>& info) {
  std::string stem = std::filesystem::path(std::get<0>(info.param)).stem().string();
  return stem + (std::get<1>(info.param) ? "_defaults" : "_no_opportunistic");
}

INSTANTIATE_TEST_SUITE_P(Traces, PoolFootprintRealTest,
                         ::testing::Combine(::testing::ValuesIn(Traces()), ::testing::Bool()),
                         CaseName);

}  // namespace
}  // namespace cuhal::trace
