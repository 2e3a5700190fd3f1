// Copyright 2026 The cuhal Authors.
// The PTX interpreter's block-parallel execution (fakecuda/ptx/interpreter.h), driven directly
// (ParseProgram + RunKernel over host buffers, no driver): the same launch with 1, 2, 4 and 8
// workers gives the same memory and the same fault report; atomics from every block are not lost.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fakecuda/ptx/interpreter.h"
#include "fakecuda/ptx/parser.h"

namespace fakecuda::ptx {
namespace {

// Every thread adds 1 to counter[0] and its global index to counter[1] (64-bit), keeps the old
// value of counter[0] in seen[i] (atom returns it), and stores its block's x into out[i].
constexpr char kPtx[] = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry count(.param .u64 counter, .param .u64 seen, .param .u64 out, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [counter];
  ld.param.u64 %rd2, [seen];
  ld.param.u64 %rd3, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  atom.global.add.u32 %r6, [%rd1], 1;
  cvt.u64.u32 %rd4, %r5;
  atom.global.add.u64 %rd5, [%rd1+8], %rd4;
  mul.wide.u32 %rd6, %r5, 4;
  add.s64 %rd7, %rd2, %rd6;
  st.global.u32 [%rd7], %r6;
  add.s64 %rd8, %rd3, %rd6;
  st.global.u32 [%rd8], %r2;
DONE:
  ret;
}
)";

constexpr std::uint64_t kBase = 0x7000'0000'0000ULL;

// Host buffers standing for device allocations at kBase, kBase + 1 MiB, ...
class Memory {
 public:
  std::uint64_t Add(std::size_t bytes) {
    buffers_.emplace_back(bytes, std::byte{0});
    return kBase + (buffers_.size() - 1) * (1u << 20);
  }
  template <typename T>
  std::vector<T> Read(std::uint64_t address, std::size_t count) const {
    std::vector<T> out(count);
    std::memcpy(out.data(), buffers_[(address - kBase) >> 20].data(), count * sizeof(T));
    return out;
  }
  RegionResolver Resolver() {
    return [this](std::uint64_t address, Region* out) {
      if (address < kBase) return false;
      std::size_t i = (address - kBase) >> 20;
      if (i >= buffers_.size()) return false;
      *out = Region{kBase + i * (1u << 20), buffers_[i].size(), buffers_[i].data()};
      return true;
    };
  }

 private:
  std::vector<std::vector<std::byte>> buffers_;
};

struct Outcome {
  LaunchResult result;
  std::vector<std::uint64_t> counter;
  std::vector<std::uint32_t> seen, out;
};

Outcome Launch(const Program& program, unsigned workers, std::uint32_t n, std::uint32_t blocks,
           bool bad_out = false) {
  Memory memory;
  std::uint64_t counter = memory.Add(16);
  std::uint64_t seen = memory.Add(4 * n);
  std::uint64_t out = bad_out ? 0x1000 : memory.Add(4 * n);
  struct {
    std::uint64_t counter, seen, out;
    std::uint32_t n;
  } params{counter, seen, out, n};
  LaunchRequest request;
  request.program = &program;
  request.kernel = program.FindFunction("count");
  request.grid = {blocks, 1, 1};
  request.block = {128, 1, 1};
  request.params = reinterpret_cast<const std::byte*>(&params);
  request.param_size = sizeof(params);
  request.resolver = memory.Resolver();
  request.workers = workers;
  Outcome run;
  run.result = RunKernel(request);
  run.counter = memory.Read<std::uint64_t>(counter, 2);
  run.seen = memory.Read<std::uint32_t>(seen, n);
  if (!bad_out) run.out = memory.Read<std::uint32_t>(out, n);
  return run;
}

std::shared_ptr<Program> Parse() {
  std::string error;
  std::shared_ptr<Program> p = ParseProgram(kPtx, &error);
  EXPECT_NE(p, nullptr) << error;
  if (p != nullptr) {
    EXPECT_EQ(p->KernelError(p->FindFunction("count")), "");
  }
  return p;
}

TEST(PtxWorkersTest, AtomicsFromEveryBlockCountOnceWhateverTheWorkerCount) {
  std::shared_ptr<Program> program = Parse();
  ASSERT_NE(program, nullptr);
  const std::uint32_t blocks = 97, n = blocks * 128 - 5;
  for (unsigned workers : {1u, 2u, 4u, 8u}) {
    SCOPED_TRACE(workers);
    Outcome r = Launch(*program, workers, n, blocks);
    ASSERT_EQ(r.result.code, 0) << r.result.message;
    EXPECT_EQ(r.counter[0], n);
    EXPECT_EQ(r.counter[1], static_cast<std::uint64_t>(n) * (n - 1) / 2);
    // The old values of counter[0] are a permutation of 0..n-1: no update was lost or doubled.
    std::vector<bool> hit(n, false);
    for (std::uint32_t v : r.seen) {
      ASSERT_LT(v, n);
      EXPECT_FALSE(hit[v]) << v;
      hit[v] = true;
    }
    for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(r.out[i], i / 128) << i;
    // Every thread but the 5 past n: 19 instructions, the 5 others: 11.
    EXPECT_EQ(r.result.instructions, static_cast<std::uint64_t>(n) * 19 + 5 * 11);
  }
}

TEST(PtxWorkersTest, FaultReportIsTheLowestFaultingBlocksWhateverTheWorkerCount) {
  std::shared_ptr<Program> program = Parse();
  ASSERT_NE(program, nullptr);
  std::string serial;
  for (unsigned workers : {1u, 2u, 4u, 8u}) {
    SCOPED_TRACE(workers);
    Outcome r = Launch(*program, workers, 64 * 128, 64, /*bad_out=*/true);
    EXPECT_EQ(r.result.code, 700);  // CUDA_ERROR_ILLEGAL_ADDRESS
    EXPECT_NE(r.result.message.find("block (0,0,0)"), std::string::npos) << r.result.message;
    if (workers == 1) serial = r.result.message;
    EXPECT_EQ(r.result.message, serial);
  }
}

}  // namespace
}  // namespace fakecuda::ptx
