// Copyright 2026 The cuhal Authors.
// The replay of allocation traces (trace/replay.h) on the fake driver: every shipped trace on
// every allocator that runs on the fake, its footprint against the trace's own used high, the
// driver calls the trace's events and synchronizations made, nothing leaked, and the errors.
#include "trace/replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "trace/alloc_trace.h"
#include "trace/counting_cuda_api.h"

namespace cuhal::trace {
namespace {

using ::testing::HasSubstr;

constexpr char kTracesDir[] = CUHAL_SOURCE_DIR "/bench/traces";

std::vector<std::string> ShippedTraces() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(kTracesDir)) {
    if (entry.path().extension() == ".jsonl") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::uint64_t Calls(const ReplayResult& r, std::string_view entry) {
  for (const auto& [name, n] : r.driver_calls_by_entry) {
    if (name == entry) return n;
  }
  return 0;
}

std::uint64_t CountOps(const AllocTrace& t, TraceOpKind kind, bool all_streams = false) {
  return static_cast<std::uint64_t>(std::count_if(t.ops.begin(), t.ops.end(), [&](const TraceOp& op) {
    return op.kind == kind && (!all_streams || op.stream < 0);
  }));
}

// A fake H200 with device 0's primary context retained for the test.
class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakecuda::FillCudaApi(&api_);
    ASSERT_EQ(api_.cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(api_.cuDevicePrimaryCtxRetain(&ctx_, 0), CUDA_SUCCESS);
    StatusOr<ReplayTarget> target = MakeReplayTarget(&api_, ctx_, 0, "fake");
    ASSERT_TRUE(target.ok()) << target.status();
    target_ = *std::move(target);
  }
  void TearDown() override {
    if (ctx_ != nullptr) {
      EXPECT_EQ(api_.cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    }
    EXPECT_EQ(driver_->LiveObjects().Total(), 0) << driver_->LeakReport();
  }

  fakecuda::ScopedDriver driver_;
  CudaApi api_;
  CUcontext ctx_ = nullptr;
  ReplayTarget target_;
};

TEST_F(ReplayTest, EveryShippedTraceOnTheDriverPool) {
  const std::vector<std::string> paths = ShippedTraces();
  ASSERT_GE(paths.size(), 5u);
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    StatusOr<AllocTrace> trace = ReadAllocTrace(path);
    ASSERT_TRUE(trace.ok()) << trace.status();
    StatusOr<ReplayResult> r = ReplayTrace(*trace, ReplayAllocatorKind::kDriverPool, target_);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->allocator, "driver-pool");
    EXPECT_EQ(r->operations, trace->ops.size());
    // The pool's used memory is the exact sum of live sizes: its high is the trace's.
    EXPECT_EQ(r->used_high, trace->used_high);
    EXPECT_GE(r->reserved_high, r->used_high);
    EXPECT_GE(r->reserved_per_used, 1.0);
    EXPECT_GT(r->ns_per_op_mean, 0);
    EXPECT_GE(r->ns_per_op_p99, r->ns_per_op_p50);
    EXPECT_EQ(r->series_stride, 1u);
    ASSERT_EQ(r->series.size(), trace->ops.size());
    EXPECT_EQ(r->series.back().op, trace->ops.size() - 1);
    for (const ReplaySeriesPoint& p : r->series) {
      ASSERT_LE(p.used, r->used_high);
      ASSERT_LE(p.reserved, r->reserved_high);
    }
    EXPECT_EQ(r->freed_at_end, trace->live_at_end);
    // Every trace operation made its driver call (and the live-at-end frees theirs).
    EXPECT_EQ(Calls(*r, "cuMemAllocFromPoolAsync"), CountOps(*trace, TraceOpKind::kAlloc));
    EXPECT_EQ(Calls(*r, "cuMemFreeAsync"),
              CountOps(*trace, TraceOpKind::kFree) + trace->live_at_end);
    EXPECT_EQ(Calls(*r, "cuEventRecord"), CountOps(*trace, TraceOpKind::kRecord));
    EXPECT_EQ(Calls(*r, "cuStreamWaitEvent"), CountOps(*trace, TraceOpKind::kWait));
    EXPECT_EQ(Calls(*r, "cuCtxSynchronize"), CountOps(*trace, TraceOpKind::kSync, true));
    EXPECT_EQ(Calls(*r, "cuStreamSynchronize"),
              CountOps(*trace, TraceOpKind::kSync) - CountOps(*trace, TraceOpKind::kSync, true));
    // No statistics query is counted.
    EXPECT_EQ(Calls(*r, "cuMemPoolGetAttribute"), 0u);
    EXPECT_EQ(driver_->LiveObjects().Total(), 1) << driver_->LeakReport();  // the primary retain
  }
}

TEST_F(ReplayTest, TheShippedTracesMakeEventsWaitsAndSyncs) {
  StatusOr<AllocTrace> trace = ReadAllocTrace(std::string(kTracesDir) + "/multi_stream.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_GT(CountOps(*trace, TraceOpKind::kRecord), 0u);
  ASSERT_GT(CountOps(*trace, TraceOpKind::kWait), 0u);
  ASSERT_GT(CountOps(*trace, TraceOpKind::kSync), 0u);
  StatusOr<ReplayResult> r = ReplayTrace(*trace, ReplayAllocatorKind::kDriverPool, target_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(Calls(*r, "cuEventRecord"), 0u);
  EXPECT_GT(Calls(*r, "cuStreamWaitEvent"), 0u);
  EXPECT_GT(Calls(*r, "cuCtxSynchronize") + Calls(*r, "cuStreamSynchronize"), 0u);
}

TEST_F(ReplayTest, EveryShippedTraceOnTheCoreAllocators) {
  for (ReplayAllocatorKind kind : {ReplayAllocatorKind::kCore, ReplayAllocatorKind::kCoreExpandable,
                                   ReplayAllocatorKind::kCorePool}) {
    for (const std::string& path : ShippedTraces()) {
      SCOPED_TRACE(StrCat(ReplayAllocatorName(kind), " ", path));
      StatusOr<AllocTrace> trace = ReadAllocTrace(path);
      ASSERT_TRUE(trace.ok()) << trace.status();
      StatusOr<ReplayResult> r = ReplayTrace(*trace, kind, target_);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->used_high, trace->used_high);
      EXPECT_GE(r->reserved_high, r->used_high);
      EXPECT_GT(r->ns_per_op_mean, 0);
      EXPECT_EQ(r->series.size(), trace->ops.size());
      EXPECT_EQ(r->freed_at_end, trace->live_at_end);
      EXPECT_EQ(Calls(*r, "cuEventRecord") >= CountOps(*trace, TraceOpKind::kRecord), true);
      EXPECT_EQ(driver_->LiveObjects().Total(), 1) << driver_->LeakReport();
    }
  }
}

TEST_F(ReplayTest, LongTracesAreSampledEveryStrideOps) {
  StatusOr<AllocTrace> trace = ReadAllocTrace(std::string(kTracesDir) + "/multi_stream.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const std::uint64_t n = trace->ops.size();  // 8007
  ReplayOptions options;
  options.max_series_points = 1000;
  options.repeat = 2;
  StatusOr<ReplayResult> r = ReplayTrace(*trace, ReplayAllocatorKind::kDriverPool, target_, options);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::uint64_t stride = (n + 999) / 1000;
  EXPECT_EQ(r->series_stride, stride);
  const std::uint64_t expected = (n - 1) / stride + 1 + ((n - 1) % stride == 0 ? 0 : 1);
  EXPECT_EQ(r->series.size(), expected);
  EXPECT_EQ(r->series[1].op, stride);
  EXPECT_EQ(r->series.back().op, n - 1);
  EXPECT_EQ(r->repeat, 2);
}

TEST_F(ReplayTest, ProgressIsReportedForEveryPass) {
  StatusOr<AllocTrace> trace =
      ReadAllocTrace(std::string(kTracesDir) + "/pytorch_conv_train_two_streams.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::vector<std::string> finished;
  ReplayOptions options;
  options.progress = [&](std::string_view, std::string_view pass, std::uint64_t done,
                         std::uint64_t total) {
    if (done == total) finished.emplace_back(pass);
  };
  ASSERT_TRUE(ReplayTrace(*trace, ReplayAllocatorKind::kDriverPool, target_, options).ok());
  EXPECT_THAT(finished, ::testing::ElementsAre("timing 1/1", "per-op timing 1/1", "footprint"));
}

TEST_F(ReplayTest, AFailingOperationNamesTheLineTheOpAndTheCall) {
  // More than the device has (the fake H200 has 141 GiB).
  StatusOr<AllocTrace> trace = ParseAllocTrace(
      R"({"format":"cuhal-alloc-trace","version":1,"name":"huge","streams":1,"operations":2,"provenance":"test"})"
      "\n"
      R"({"op":"alloc","id":1,"size":16,"stream":0})"
      "\n"
      R"({"op":"alloc","id":2,"size":1000000000000000,"stream":0})"
      "\n",
      "huge.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status();
  StatusOr<ReplayResult> r = ReplayTrace(*trace, ReplayAllocatorKind::kDriverPool, target_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("huge.jsonl:3: op 1 (alloc id 2 of 1000000000000000 bytes on stream 0)"));
  EXPECT_THAT(r.status().message(), HasSubstr("cuMemAllocFromPoolAsync"));
  EXPECT_EQ(driver_->LiveObjects().Total(), 1) << driver_->LeakReport();
}

TEST_F(ReplayTest, TimeReplayPassTimesEveryOperation) {
  StatusOr<AllocTrace> trace =
      ReadAllocTrace(std::string(kTracesDir) + "/pytorch_conv_train_two_streams.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::vector<std::uint64_t> ns;
  StatusOr<std::uint64_t> sum =
      TimeReplayPass(*trace, ReplayAllocatorKind::kCore, target_, &ns);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(ns.size(), trace->ops.size());
  EXPECT_GT(*sum, 0u);
}

TEST(ReplayAllocatorNames, UnknownNamesListTheValidOnes) {
  StatusOr<ReplayAllocatorKind> k = ParseReplayAllocator("jemalloc");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(k.status().message(), HasSubstr("unknown allocator 'jemalloc'"));
  EXPECT_THAT(k.status().message(), HasSubstr("driver-pool, core, core-expandable, core-pool, pytorch, all"));
  for (ReplayAllocatorKind kind : ReplayAllocatorKinds()) {
    StatusOr<ReplayAllocatorKind> parsed = ParseReplayAllocator(ReplayAllocatorName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
}

TEST_F(ReplayTest, PyTorchNeedsTorchAndTheRealDriver) {
  Status s = ReplayAllocatorAvailable(ReplayAllocatorKind::kPyTorch, target_);
  ASSERT_FALSE(s.ok());
  if (ReplayBuiltWithTorch()) {
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(s.message(), HasSubstr("needs the real driver"));
  } else {
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    EXPECT_THAT(s.message(), HasSubstr("built without torch (configure with -DCUHAL_WITH_TORCH=ON)"));
  }
  StatusOr<AllocTrace> trace =
      ReadAllocTrace(std::string(kTracesDir) + "/pytorch_conv_train_two_streams.jsonl");
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(ReplayTrace(*trace, ReplayAllocatorKind::kPyTorch, target_).status().code(), s.code());
}

TEST_F(ReplayTest, BadOptionsAreRefused) {
  StatusOr<AllocTrace> trace =
      ReadAllocTrace(std::string(kTracesDir) + "/pytorch_conv_train_two_streams.jsonl");
  ASSERT_TRUE(trace.ok());
  ReplayOptions options;
  options.repeat = 0;
  EXPECT_EQ(ReplayTrace(*trace, ReplayAllocatorKind::kCore, target_, options).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CountingCudaApiTest, CountsEachEntryAndAllowsOneAtATime) {
  fakecuda::ScopedDriver driver;
  CudaApi api;
  fakecuda::FillCudaApi(&api);
  StatusOr<std::unique_ptr<CountingCudaApi>> counting = CountingCudaApi::Create(&api);
  ASSERT_TRUE(counting.ok()) << counting.status();
  EXPECT_EQ(CountingCudaApi::Create(&api).status().code(), StatusCode::kFailedPrecondition);
  const CudaApi& c = (*counting)->api();
  int version = 0;
  ASSERT_EQ(c.cuDriverGetVersion(&version), CUDA_SUCCESS);
  ASSERT_EQ(c.cuDriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, 13000);
  ASSERT_EQ(c.cuInit(0), CUDA_SUCCESS);
  EXPECT_EQ((*counting)->total(), 3u);
  using Count = std::pair<std::string_view, std::uint64_t>;
  EXPECT_THAT((*counting)->Counts(), ::testing::UnorderedElementsAre(Count{"cuInit", 1},
                                                                     Count{"cuDriverGetVersion", 2}));
  (*counting)->Reset();
  EXPECT_EQ((*counting)->total(), 0u);
  counting->reset();
  EXPECT_TRUE(CountingCudaApi::Create(&api).ok());
}

}  // namespace
}  // namespace cuhal::trace
