// Copyright 2026 The cuhal Authors.
// The differential fuzzer's own tests: the generator is deterministic and covers every
// operation, sequences survive a text round trip, the transcript diff finds the first difference,
// the fake runs generated sequences without leaking, and the minimizer shrinks a perturbed
// fake-vs-fake difference to the calls that matter.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "fuzz/executor.h"
#include "fuzz/minimize.h"
#include "fuzz/sequence.h"
#include "fuzz/transcript.h"

namespace cuhal::fuzz {
namespace {

TEST(FuzzGeneratorTest, SameSeedGivesTheSameSequence) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Sequence a = Generate(seed);
    Sequence b = Generate(seed);
    ASSERT_EQ(a, b) << "seed " << seed;
    EXPECT_GE(a.size(), 30u) << "seed " << seed;
    EXPECT_LE(a.size(), 80u) << "seed " << seed;
  }
  EXPECT_NE(Generate(1), Generate(2));
}

// The generator predicts that valid calls succeed and invalid ones fail; where the fake answers
// otherwise the executor skips what the prediction made possible. Rare, or the generator and the
// model disagree.
TEST(FuzzGeneratorTest, IdsAreIndicesAndTheFakeRunsAlmostEveryCall) {
  std::size_t calls = 0;
  std::size_t skipped = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    Sequence s = Generate(seed);
    for (std::size_t i = 0; i < s.size(); ++i) ASSERT_EQ(s[i].id, static_cast<int>(i));
    calls += s.size();
    for (const std::string& line : RunOnFake(s)) {
      if (line.find("-> SKIP(") != std::string::npos) ++skipped;
    }
  }
  EXPECT_LT(skipped * 100, calls) << skipped << " of " << calls << " calls skipped";
}

TEST(FuzzGeneratorTest, EveryOperationIsGenerated) {
  std::set<Op> seen;
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    for (const Call& c : Generate(seed)) seen.insert(c.op);
  }
  std::vector<std::string> missing;
#define CUHAL_FUZZ_CHECK_OP(name) \
  if (seen.count(Op::k##name) == 0) missing.push_back(#name);
  CUHAL_FUZZ_OPS(CUHAL_FUZZ_CHECK_OP)
#undef CUHAL_FUZZ_CHECK_OP
  EXPECT_TRUE(missing.empty()) << "never generated: " << ::testing::PrintToString(missing);
}

TEST(FuzzGeneratorTest, SequencesSurviveTheTextRoundTrip) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    Sequence s = Generate(seed);
    Sequence parsed;
    std::string error;
    ASSERT_TRUE(ParseSequence(FormatSequence(s), &parsed, &error)) << error;
    EXPECT_EQ(parsed, s);
  }
  Sequence parsed;
  std::string error;
  EXPECT_FALSE(ParseSequence("0 NoSuchOp a=-1 b=-1 c=-1 x=0 y=0 z=0\n", &parsed, &error));
  EXPECT_NE(error.find("line 1"), std::string::npos);
  EXPECT_FALSE(ParseSequence("0 MemAlloc a=-1 b=-1 c=-1 x=zz y=0 z=0\n", &parsed, &error));
}

TEST(FuzzGeneratorTest, ExcludedCallsAreListedWithReasons) {
  ASSERT_FALSE(ExcludedCalls().empty());
  for (const ExcludedCall& e : ExcludedCalls()) {
    EXPECT_GT(std::string(e.reason).size(), 10u) << e.call;
  }
}

// cuMemFreeAsync of pool memory after its pool was destroyed crashed the real driver later
// (ExcludedCalls): a pool is destroyed only once its memory is freed, by the generator and by
// the executor alike.
TEST(FuzzGeneratorTest, APoolWithLiveMemoryIsNotDestroyed) {
  Model model;
  const Call create{Op::kMemPoolCreate, 0};
  const Call alloc{Op::kMemAllocFromPoolAsync, 1, 0, kNullId, kNoId, 64};
  const Call other{Op::kMemPoolCreate, 2};
  const Call destroy{Op::kMemPoolDestroy, 3, 0};
  const Call destroy_other{Op::kMemPoolDestroy, 4, 2};
  const Call sync{Op::kCtxSynchronize, 5};
  const Call free_memory{Op::kMemFreeAsync, 6, 1, kNullId};
  for (const Call& c : {create, alloc, other}) {
    ASSERT_EQ(model.Check(c), "") << FormatCall(c);
    model.Apply(c, true);
  }
  EXPECT_NE(model.Check(destroy), "");
  EXPECT_EQ(model.Check(destroy_other), "");
  model.Apply(sync, true);
  ASSERT_EQ(model.Check(free_memory), "");
  model.Apply(free_memory, true);
  EXPECT_EQ(model.Check(destroy), "");
}

// The real driver gives a freed allocation's address to a stream or a module's globals created
// after the free (a stale cuMemsetD8 then succeeds): a freed pointer is named only until the next
// allocation, stream creation or module load.
TEST(FuzzGeneratorTest, StreamsAndModulesEndTheUseOfFreedPointers) {
  for (Op op : {Op::kStreamCreate, Op::kStreamCreateWithPriority, Op::kModuleLoadData,
                Op::kMemAlloc}) {
    Model model;
    const Call alloc{Op::kMemAlloc, 0, kNoId, kNoId, kNoId, 64};
    const Call free_memory{Op::kMemFree, 1, 0};
    const Call stale_memset{Op::kMemsetD8, 3, 0, kNoId, kNoId, 0, 1};
    model.Apply(alloc, true);
    model.Apply(free_memory, true);
    EXPECT_EQ(model.Stale(), std::vector<int>{0});
    EXPECT_EQ(model.Check(stale_memset), "");
    model.Apply(Call{op, 2, kNoId, kNoId, kNoId, op == Op::kMemAlloc ? 64u : 0u}, true);
    EXPECT_TRUE(model.Stale().empty()) << FormatCall(Call{op, 2});
    EXPECT_NE(model.Check(stale_memset), "") << FormatCall(Call{op, 2});
  }
}

TEST(FuzzTranscriptTest, FirstMismatchSkipsCommentsAndLeaksAndFindsTheFirstDifference) {
  std::vector<std::string> a = {"# seed 1 backend fake", "0 A -> CUDA_SUCCESS",
                                "1 B -> CUDA_SUCCESS", "LEAK 1 stream", "2 C -> CUDA_SUCCESS",
                                "END"};
  std::vector<std::string> b = {"# seed 1 backend real", "0 A -> CUDA_SUCCESS",
                                "1 B -> CUDA_SUCCESS", "2 C -> CUDA_SUCCESS", "END"};
  EXPECT_FALSE(FirstMismatch(a, b).has_value());
  b[3] = "2 C -> CUDA_ERROR_INVALID_VALUE";
  std::optional<Mismatch> m = FirstMismatch(a, b);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->index, 2);
  EXPECT_EQ(m->a, "2 C -> CUDA_SUCCESS");
  EXPECT_EQ(m->b, "2 C -> CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(CallIdOfLine(m->a), 2);
  EXPECT_EQ(CallIdOfLine("T cuMemFree h3 -> CUDA_SUCCESS"), -1);
  EXPECT_EQ(CallIdOfLine("END"), -1);
  // A transcript that stops early (a crash) differs where it stops.
  std::vector<std::string> crashed = {"0 A -> CUDA_SUCCESS", "CRASH signal 11"};
  m = FirstMismatch(crashed, {"0 A -> CUDA_SUCCESS", "1 B -> CUDA_SUCCESS", "END"});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->a, "CRASH signal 11");
  m = FirstMismatch({"0 A -> CUDA_SUCCESS"}, {"0 A -> CUDA_SUCCESS", "END"});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->a, "<missing>");
}

TEST(FuzzFakeTest, GeneratedSequencesRunToTheEndWithoutLeaksAndReproducibly) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Sequence s = Generate(seed);
    std::vector<std::string> first = RunOnFake(s);
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(first.back(), "END") << "seed " << seed;
    for (const std::string& line : first) {
      EXPECT_NE(line.rfind("LEAK", 0), 0u) << "seed " << seed << ": " << line;
      EXPECT_NE(line.rfind("RACE", 0), 0u) << "seed " << seed << ": " << line;
      EXPECT_EQ(line.find("CUresult("), std::string::npos) << line;
    }
    EXPECT_EQ(first.size(), s.size() + 4 /*prologue*/ + 1 /*END*/ +
                                static_cast<std::size_t>(std::count_if(
                                    first.begin(), first.end(),
                                    [](const std::string& l) { return l.rfind("T ", 0) == 0; })));
    EXPECT_FALSE(FirstMismatch(first, RunOnFake(s)).has_value()) << "seed " << seed;
  }
}

// The leak check itself: a table whose cuStreamDestroy does nothing leaves the stream live.
CUresult StreamDestroyThatLeaks(CUstream) { return CUDA_SUCCESS; }

TEST(FuzzFakeTest, ALeakAfterTeardownIsReported) {
  Sequence s = {Call{Op::kStreamCreate, 0}};
  std::vector<std::string> clean = RunOnFake(s);
  EXPECT_EQ(std::count_if(clean.begin(), clean.end(),
                          [](const std::string& l) { return l.rfind("LEAK", 0) == 0; }),
            0);
  std::vector<std::string> leaky =
      RunOnFake(s, [](CudaApi* api) { api->cuStreamDestroy = &StreamDestroyThatLeaks; });
  ASSERT_GE(leaky.size(), 2u);
  EXPECT_EQ(leaky.back(), "END");
  EXPECT_NE(std::find(leaky.begin(), leaky.end(), "LEAK 1 stream(s)"), leaky.end())
      << ::testing::PrintToString(leaky);
}

TEST(FuzzMinimizeTest, KeepsExactlyTheCallsThePredicateNeeds) {
  Sequence s = Generate(7);
  ASSERT_GT(s.size(), 10u);
  int need_a = s[3].id;
  int need_b = s[9].id;
  auto fails = [&](const Sequence& c) {
    bool a = false;
    bool b = false;
    for (const Call& call : c) {
      a = a || call.id == need_a;
      b = b || call.id == need_b;
    }
    return a && b;
  };
  int tests = 0;
  Sequence minimal = Minimize(s, fails, {}, &tests);
  ASSERT_EQ(minimal.size(), 2u);
  EXPECT_EQ(minimal[0].id, need_a);
  EXPECT_EQ(minimal[1].id, need_b);
  EXPECT_GT(tests, 0);
}

// The test-only perturbation: a table whose cuEventQuery answers a code the fake never would.
CUresult PerturbedEventQuery(CUevent) { return CUDA_ERROR_INVALID_HANDLE; }
void Perturb(CudaApi* api) { api->cuEventQuery = &PerturbedEventQuery; }

TEST(FuzzMinimizeTest, ShrinksAPerturbedEntryToTheCallsThatMatter) {
  // A seed whose sequence queries a live event (the perturbed entry is reached).
  Sequence chosen;
  std::optional<Mismatch> original;
  for (std::uint64_t seed = 0; seed < 300 && !original; ++seed) {
    Sequence s = Generate(seed);
    std::optional<Mismatch> m = FirstMismatch(RunOnFake(s), RunOnFake(s, Perturb));
    if (m && m->a.find(" EventQuery ") != std::string::npos) {
      chosen = s;
      original = m;
    }
  }
  ASSERT_TRUE(original.has_value()) << "no seed in 0..299 queries an event";
  int target = CallIdOfLine(original->a);
  ASSERT_GE(target, 0);
  auto fails = [&](const Sequence& c) {
    std::optional<Mismatch> m = FirstMismatch(RunOnFake(c), RunOnFake(c, Perturb));
    return m && CallIdOfLine(m->a) == target;
  };
  Sequence minimal = Minimize(chosen, fails);
  // The query, and the creation of the event it names: nothing else matters.
  ASSERT_EQ(minimal.size(), 2u) << FormatSequence(minimal);
  EXPECT_EQ(minimal[0].op, Op::kEventCreate);
  EXPECT_EQ(minimal[1].op, Op::kEventQuery);
  EXPECT_EQ(minimal[1].a, minimal[0].id);
  EXPECT_TRUE(fails(minimal));
  // And the regression test it prints replays it.
  std::string test = RegressionTest("Example", "example", minimal, RunOnFake(minimal, Perturb));
  EXPECT_NE(test.find("TEST(FuzzRegression, Example)"), std::string::npos);
  EXPECT_NE(test.find("EventQuery"), std::string::npos);
}

}  // namespace
}  // namespace cuhal::fuzz
