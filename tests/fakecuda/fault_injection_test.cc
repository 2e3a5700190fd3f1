// Copyright 2026 The cuhal Authors.
// fakecuda's fault injection, call log and leak report (issue 3, "Must model" 9). Fake only: the
// real driver has no such controls.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "fakecuda/fault_injector.h"
#include "tests/fakecuda/fake_fixture.h"

namespace cuhal::testing {
namespace {

using fakecuda::FaultRule;

class FaultInjectionTest : public FakeDriverTest {
 protected:
  void SetUp() override {
    FakeDriverTest::SetUp();
    ctx_ = std::make_unique<ScopedPrimaryContext>(api());
    ASSERT_EQ(ctx_->result(), CUDA_SUCCESS);
  }
  void TearDown() override {
    faults().ClearRules();
    ctx_.reset();
    EXPECT_EQ(fake().LiveObjects().Total(), 0) << fake().LeakReport();
    FakeDriverTest::TearDown();
  }

  static FaultRule Rule(std::string entry, FaultRule::Mode mode, CUresult error,
                        std::uint64_t n = 1) {
    FaultRule rule;
    rule.entry = std::move(entry);
    rule.mode = mode;
    rule.n = n;
    rule.error = error;
    return rule;
  }

  std::unique_ptr<ScopedPrimaryContext> ctx_;
};

// A rule limited to one thread sees only that thread's calls (sweeps of ranks-as-threads).
TEST(FaultInjectorThreadTest, RuleLimitedToAThreadCountsOnlyItsCalls) {
  fakecuda::FaultInjector faults;
  faults.EnableCallLog(true);
  FaultRule rule;
  rule.n = 2;  // the second call of this thread, whatever other threads call
  rule.error = CUDA_ERROR_OUT_OF_MEMORY;
  rule.thread = std::this_thread::get_id();
  faults.AddRule(rule);
  EXPECT_EQ(faults.OnCall("cuInit"), CUDA_SUCCESS);
  std::thread other([&] {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(faults.OnCall("cuStreamCreate"), CUDA_SUCCESS);
  });
  other.join();
  EXPECT_EQ(faults.OnCall("cuMemAlloc"), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(faults.OnCall("cuMemFree"), CUDA_SUCCESS);
  EXPECT_EQ(faults.injected(), 1u);
  EXPECT_EQ(faults.calls(), 6u);
  EXPECT_EQ(faults.CallLog(std::this_thread::get_id()),
            (std::vector<std::string>{"cuInit", "cuMemAlloc", "cuMemFree"}));
  EXPECT_EQ(faults.CallLog().size(), 6u);
}

// A rule for every entry point leaves cuGetExportTable alone (the CUDA runtime crashed at exit
// when one of its private tables was refused, fault_injector.h); a rule naming it fails it.
TEST(FaultInjectorWildcardTest, WildcardsLeaveTheExportTableLookupAlone) {
  fakecuda::FaultInjector faults;
  EXPECT_TRUE(faults.AddRulesFromSpec("*:nth:2:CUDA_ERROR_UNKNOWN", nullptr));
  EXPECT_EQ(faults.OnCall("cuInit"), CUDA_SUCCESS);
  EXPECT_EQ(faults.OnCall("cuGetExportTable"), CUDA_SUCCESS) << "not counted either";
  EXPECT_EQ(faults.OnCall("cuMemAlloc"), CUDA_ERROR_UNKNOWN);
  fakecuda::FaultInjector named;
  EXPECT_TRUE(named.AddRulesFromSpec("cuGetExportTable:nth:1:CUDA_ERROR_UNKNOWN", nullptr));
  EXPECT_EQ(named.OnCall("cuGetExportTable"), CUDA_ERROR_UNKNOWN);
  fakecuda::FaultInjector other;  // any other entry point can be exempted the same way
  other.ExemptFromWildcards("cuMemFree");
  EXPECT_TRUE(other.AddRulesFromSpec("*:every:0:CUDA_ERROR_UNKNOWN", nullptr));
  EXPECT_EQ(other.OnCall("cuMemFree"), CUDA_SUCCESS);
  EXPECT_EQ(other.OnCall("cuMemAlloc"), CUDA_ERROR_UNKNOWN);
}

TEST_F(FaultInjectionTest, NthCallOfOneEntryFailsOnce) {
  faults().AddRule(Rule("cuMemAlloc", FaultRule::Mode::kNth, CUDA_ERROR_OUT_OF_MEMORY, 2));
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  CUdeviceptr c = 0;
  EXPECT_EQ(api().cuMemAlloc(&a, 256), CUDA_SUCCESS);
  // Calls of other entries do not count towards the rule.
  int count = 0;
  EXPECT_EQ(api().cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAlloc(&b, 256), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(b, CUdeviceptr{0}) << "a failed call has no effect";
  EXPECT_EQ(api().cuMemAlloc(&c, 256), CUDA_SUCCESS);
  EXPECT_EQ(faults().injected(), 1u);
  EXPECT_EQ(fake().LiveObjects().device_allocations, 2);
  EXPECT_EQ(api().cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(c), CUDA_SUCCESS);
}

TEST_F(FaultInjectionTest, EveryCallFailsUntilTheRulesAreCleared) {
  faults().AddRule(Rule("cuStreamCreate", FaultRule::Mode::kEvery, CUDA_ERROR_OUT_OF_MEMORY));
  CUstream stream = nullptr;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(api().cuStreamCreate(&stream, 0), CUDA_ERROR_OUT_OF_MEMORY);
  }
  EXPECT_EQ(stream, nullptr);
  EXPECT_EQ(fake().LiveObjects().streams, 0);
  // Other entry points are unaffected.
  CUevent event = nullptr;
  ASSERT_EQ(api().cuEventCreate(&event, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(event), CUDA_SUCCESS);
  EXPECT_EQ(faults().injected(), 5u);
  faults().ClearRules();
  ASSERT_EQ(api().cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_F(FaultInjectionTest, RuleWithoutEntryMatchesEveryEntryPoint) {
  faults().AddRule(Rule("", FaultRule::Mode::kNth, CUDA_ERROR_UNKNOWN, 3));
  CUcontext current = nullptr;
  int count = 0;
  EXPECT_EQ(api().cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(api().cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
}

// The decisions of a fraction rule over `calls` calls of cuDeviceGetAttribute.
std::vector<bool> FractionPattern(const CudaApi& api, int calls) {
  std::vector<bool> failed;
  for (int i = 0; i < calls; ++i) {
    int value = 0;
    CUresult r = api.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0);
    EXPECT_TRUE(r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_PERMITTED) << r;
    failed.push_back(r != CUDA_SUCCESS);
  }
  return failed;
}

TEST_F(FaultInjectionTest, SeededFractionIsReproducible) {
  auto fraction_rule = [](std::uint64_t seed) {
    FaultRule rule;
    rule.entry = "cuDeviceGetAttribute";
    rule.mode = FaultRule::Mode::kFraction;
    rule.fraction = 0.3;
    rule.seed = seed;
    rule.error = CUDA_ERROR_NOT_PERMITTED;
    return rule;
  };
  constexpr int kCalls = 400;
  faults().AddRule(fraction_rule(42));
  const std::vector<bool> first = FractionPattern(api(), kCalls);
  const auto failures = std::count(first.begin(), first.end(), true);
  EXPECT_GT(failures, kCalls * 15 / 100);
  EXPECT_LT(failures, kCalls * 45 / 100);
  // ResetCounters restarts the rule's generator from its seed.
  faults().ResetCounters();
  EXPECT_EQ(FractionPattern(api(), kCalls), first);
  // So does a new driver with the same rule.
  ctx_.reset();
  ASSERT_NO_FATAL_FAILURE(Remake(BackendOptions{}));
  ctx_ = std::make_unique<ScopedPrimaryContext>(api());
  faults().AddRule(fraction_rule(42));
  EXPECT_EQ(FractionPattern(api(), kCalls), first);
  // Another seed, another pattern.
  faults().ClearRules();
  faults().AddRule(fraction_rule(43));
  EXPECT_NE(FractionPattern(api(), kCalls), first);
}

TEST_F(FaultInjectionTest, CallLogRecordsEveryCallInOrder) {
  faults().EnableCallLog(true);
  faults().ResetCounters();
  faults().AddRule(Rule("cuStreamCreate", FaultRule::Mode::kNth, CUDA_ERROR_OUT_OF_MEMORY, 1));
  CUdeviceptr ptr = 0;
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuMemAlloc(&ptr, 64), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamCreate(&stream, 0), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(api().cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_SUCCESS);
  const std::vector<std::string> expected = {"cuMemAlloc", "cuStreamCreate", "cuStreamCreate",
                                             "cuStreamDestroy", "cuMemFree"};
  EXPECT_EQ(faults().CallLog(), expected);
  EXPECT_EQ(faults().calls(), 5u);
  EXPECT_EQ(faults().calls("cuStreamCreate"), 2u);
  EXPECT_EQ(faults().calls("cuMemAlloc"), 1u);
  EXPECT_EQ(faults().injected(), 1u);
  faults().EnableCallLog(false);
  int count = 0;
  EXPECT_EQ(api().cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(faults().CallLog().size(), expected.size()) << "the log is off";
}

TEST_F(FaultInjectionTest, LeakReportListsLeakedObjects) {
  EXPECT_EQ(fake().LiveObjects().Total(), 1) << "the fixture's primary context retain";
  CUstream stream = nullptr;
  CUevent event = nullptr;
  CUdeviceptr ptr = 0;
  void* host = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventCreate(&event, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&ptr, 12345), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocHost(&host, 4096), CUDA_SUCCESS);
  fakecuda::Inventory live = fake().LiveObjects();
  EXPECT_EQ(live.streams, 1);
  EXPECT_EQ(live.events, 1);
  EXPECT_EQ(live.device_allocations, 1);
  EXPECT_EQ(live.host_allocations, 1);
  EXPECT_EQ(live.primary_retains, 1);
  EXPECT_EQ(live.contexts, 0);
  EXPECT_EQ(live.Total(), 5);
  EXPECT_NE(live.ToString().find("1 stream(s)"), std::string::npos) << live.ToString();
  const std::string report = fake().LeakReport();
  EXPECT_NE(report.find("stream"), std::string::npos) << report;
  EXPECT_NE(report.find("event"), std::string::npos) << report;
  EXPECT_NE(report.find("12345 bytes (cuMemAlloc)"), std::string::npos) << report;
  EXPECT_NE(report.find("cuMemAllocHost"), std::string::npos) << report;
  // Default streams are not the user's objects and are never reported.
  EXPECT_EQ(api().cuStreamQuery(CU_STREAM_LEGACY), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamQuery(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().streams, 1);

  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(event), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(host), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().Total(), 1);
  ctx_.reset();
  EXPECT_EQ(fake().LiveObjects().Total(), 0);
  EXPECT_EQ(fake().LiveObjects().ToString(), "none");
  EXPECT_EQ(fake().LeakReport(), "");
}

TEST_F(FaultInjectionTest, CreatedContextsAreCountedUntilDestroyed) {
  CUcontext created = nullptr;
  ASSERT_EQ(CreateContext(api(), &created, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().contexts, 1);
  EXPECT_NE(fake().LeakReport().find("context"), std::string::npos);
  EXPECT_EQ(api().cuCtxDestroy(created), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().contexts, 0);
}

TEST_F(FaultInjectionTest, RulesFromTheEnvironmentSyntax) {
  std::string error;
  ASSERT_TRUE(
      faults().AddRulesFromSpec("cuMemAlloc:nth:1:CUDA_ERROR_OUT_OF_MEMORY;"
                                "cuEventCreate:every:0:CUDA_ERROR_INVALID_VALUE",
                                &error))
      << error;
  CUdeviceptr ptr = 0;
  EXPECT_EQ(api().cuMemAlloc(&ptr, 64), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(api().cuMemAlloc(&ptr, 64), CUDA_SUCCESS);
  CUevent event = nullptr;
  EXPECT_EQ(api().cuEventCreate(&event, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_SUCCESS);
  faults().ClearRules();
  EXPECT_FALSE(
      faults().AddRulesFromSpec("cuMemAlloc:sometimes:1:CUDA_ERROR_OUT_OF_MEMORY", &error));
  EXPECT_NE(error.find("sometimes"), std::string::npos) << error;
  EXPECT_FALSE(faults().AddRulesFromSpec("cuMemAlloc:nth:1:CUDA_ERROR_NO_SUCH_THING", &error));
  ASSERT_EQ(api().cuMemAlloc(&ptr, 64), CUDA_SUCCESS) << "a rejected spec adds no rule";
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_SUCCESS);
}

// Found by fuzz/libfuzzer (cuda_faults_fuzzer): the numbers were read with strtoull/strtod,
// which take a prefix and wrap a sign, so "nth:3x" was nth 3, "nth:-1" nth 2^64 - 1 and
// "fraction:0.5abc" (the fuzzer's "0\3155") fraction 0.5. They are strict decimals now.
TEST(FaultSpecTest, NumbersAreStrict) {
  fakecuda::FaultInjector faults;
  std::string error;
  for (const char* spec : {"cuMemAlloc:nth:3x:CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:nth:-1:CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:nth: 3:CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:nth:18446744073709551616:CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:fraction:0\3155:CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:fraction:0.5abc:CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:fraction::CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:fraction:-0:CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:fraction:nan:CUDA_ERROR_OUT_OF_MEMORY",
                           "cuMemAlloc:fraction:0.5:CUDA_ERROR_OUT_OF_MEMORY@7x",
                           "cuMemAlloc:fraction:0.5:CUDA_ERROR_OUT_OF_MEMORY@",
                           // An empty name was stored as "*" and failed every entry point (seen
                           // when a test built its spec from a name list that had become empty).
                           ":nth:1:CUDA_ERROR_OUT_OF_MEMORY"}) {
    EXPECT_FALSE(faults.AddRulesFromSpec(spec, &error)) << spec;
    EXPECT_NE(error.find("FAKECUDA_FAULTS rule"), std::string::npos) << error;
  }
  EXPECT_EQ(faults.OnCall("cuMemAlloc"), CUDA_SUCCESS) << "a rejected spec adds no rule";
  EXPECT_TRUE(faults.AddRulesFromSpec("cuMemAlloc:fraction:.5:CUDA_ERROR_OUT_OF_MEMORY@18446744073709551615;"
                                      "cuMemAlloc:fraction:1e-3:CUDA_ERROR_OUT_OF_MEMORY;"
                                      "cuMemAlloc:nth:18446744073709551615:CUDA_ERROR_OUT_OF_MEMORY",
                                      &error))
      << error;
}

}  // namespace
}  // namespace cuhal::testing
