// Copyright 2026 The cuhal Authors.
// Tests of the sweep harness itself: it must pass a scenario that handles every failure, and it
// must catch each way a scenario can mishandle one (swallowing it, returning an error that does
// not name the call, leaking, declaring a silent failure it does not report, being
// non-deterministic).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "core/base/status_or.h"
#include "core/symbols/api_status.h"
#include "core/symbols/driver_handles.h"
#include "sweep/fault_sweep.h"

namespace cuhal::sweep {
namespace {

using ::testing::HasSubstr;

// Retains and releases the primary context of device 0 and reads its name in between; every
// failure is propagated with the call named (CUHAL_CU), and the retain is released on all paths.
Status WellBehaved(const CudaApi* api) {
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuInit, 0));
  CUcontext context = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDevicePrimaryCtxRetain, &context, 0));
  PrimaryContextHandle retain(api, 0 + 1);
  char name[64];
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDeviceGetName, name, 64, 0));
  return retain.Reset();
}

// A failed cuDevicePrimaryCtxRelease leaves the retain behind (nothing can release it): the
// scenarios below declare it as a cleanup call that may leave one retain.
SweepScenario Scenario(std::function<Status(const CudaApi*)> run) {
  SweepScenario scenario;
  scenario.name = "test scenario";
  scenario.run = std::move(run);
  fakecuda::Inventory one_retain;
  one_retain.primary_retains = 1;
  scenario.cleanup_calls["cuDevicePrimaryCtxRelease"] = {one_retain};
  return scenario;
}

TEST(FaultSweepTest, PassesAScenarioThatHandlesEveryFailure) {
  SweepReport report = RunFaultSweep(Scenario(&WellBehaved));
  EXPECT_TRUE(report.ok()) << report.Problems();
  EXPECT_EQ(report.calls, 4u);
  EXPECT_EQ(report.injected, 4u);
  EXPECT_EQ(report.entries, (std::vector<std::string>{"cuInit", "cuDevicePrimaryCtxRetain",
                                                      "cuDeviceGetName",
                                                      "cuDevicePrimaryCtxRelease"}));
  EXPECT_EQ(report.Summary(),
            "test scenario: calls swept 4, failures injected 4, leaks 0 (1 failed release(s) left "
            "the one object they could not release, as documented)");
  EXPECT_EQ(report.documented_leftovers, 1);
  ASSERT_EQ(report.runs.size(), 4u);
  EXPECT_EQ(report.runs[0].error, CUDA_ERROR_NO_DEVICE);  // SensibleError(cuInit)
  EXPECT_EQ(report.runs[2].error, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_THAT(report.runs[2].status.message(), HasSubstr("cuDeviceGetName"));
}

TEST(FaultSweepTest, CatchesASwallowedFailure) {
  SweepReport report = RunFaultSweep(Scenario([](const CudaApi* api) {
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuInit, 0));
    int count = 0;
    (void)api->cuDeviceGetCount(&count);  // the bug: the result is ignored
    return OkStatus();
  }));
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.Problems(), HasSubstr("cuDeviceGetCount"));
  EXPECT_THAT(report.Problems(), HasSubstr("swallowed"));
}

TEST(FaultSweepTest, CatchesAnErrorThatDoesNotNameTheCall) {
  SweepReport report = RunFaultSweep(Scenario([](const CudaApi* api) {
    if (api->cuInit(0) != CUDA_SUCCESS) return UnavailableError("CUDA did not start");
    return OkStatus();
  }));
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.Problems(), HasSubstr("does not name cuInit"));
}

TEST(FaultSweepTest, NamesAreMatchedAsWholeWords) {
  // An error naming cuMemFreeHost does not count as naming cuMemFree.
  SweepReport report = RunFaultSweep(Scenario([](const CudaApi* api) -> Status {
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuInit, 0));
    CUdevice device = 0;
    if (api->cuDeviceGet(&device, 0) != CUDA_SUCCESS) {
      return InternalError("cuDeviceGetCount failed");  // names the wrong call
    }
    return OkStatus();
  }));
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.Problems(), HasSubstr("does not name cuDeviceGet:"));
}

TEST(FaultSweepTest, CatchesALeakOnAnErrorPath) {
  SweepReport report = RunFaultSweep(Scenario([](const CudaApi* api) -> Status {
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuInit, 0));
    CUcontext context = nullptr;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDevicePrimaryCtxRetain, &context, 0));
    char name[64];
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDeviceGetName, name, 64, 0));  // the bug: no release
    return CUHAL_CU(api, cuDevicePrimaryCtxRelease, 0);
  }));
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.leaks, 1);
  EXPECT_THAT(report.Problems(), HasSubstr("call 3 of 4 (cuDeviceGetName"));
  EXPECT_THAT(report.Problems(), HasSubstr("primary context retain"));
}

TEST(FaultSweepTest, CatchesALeakWithoutFaults) {
  SweepReport report = RunFaultSweep(Scenario([](const CudaApi* api) -> Status {
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuInit, 0));
    CUcontext context = nullptr;
    return CUHAL_CU(api, cuDevicePrimaryCtxRetain, &context, 0);
  }));
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.Problems(), HasSubstr("leaks without any injected fault"));
}

TEST(FaultSweepTest, DeclaredSilentFailuresMustBeReported) {
  auto releasing = [](bool report_it) {
    return [report_it](const CudaApi* api) -> Status {
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuInit, 0));
      CUcontext context = nullptr;
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDevicePrimaryCtxRetain, &context, 0));
      Status released = CUHAL_CU(api, cuDevicePrimaryCtxRelease, 0);
      if (report_it) ReportDroppedStatus(released);
      return OkStatus();
    };
  };
  SweepScenario reported = Scenario(releasing(true));
  SweepReport good = RunFaultSweep(reported);
  EXPECT_TRUE(good.ok()) << good.Problems();
  EXPECT_EQ(good.recovered, 1);
  EXPECT_EQ(good.documented_leftovers, 1);
  EXPECT_THAT(good.Summary(), HasSubstr("leaks 0 (recovered silently 1"));

  SweepScenario unreported = Scenario(releasing(false));
  SweepReport bad = RunFaultSweep(unreported);
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.Problems(), HasSubstr("no status naming cuDevicePrimaryCtxRelease"));

  SweepScenario undeclared_leftover = Scenario(releasing(true));
  undeclared_leftover.cleanup_calls["cuDevicePrimaryCtxRelease"] = {};
  SweepReport leaky = RunFaultSweep(undeclared_leftover);
  EXPECT_FALSE(leaky.ok());
  EXPECT_EQ(leaky.leaks, 1);
}

TEST(FaultSweepTest, CatchesANonDeterministicScenario) {
  std::atomic<int> runs{0};
  SweepReport report = RunFaultSweep(Scenario([&runs](const CudaApi* api) -> Status {
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuInit, 0));
    if (runs.fetch_add(1) == 0) {  // only the counting run makes this call
      int version = 0;
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDriverGetVersion, &version));
    }
    int count = 0;
    return CUHAL_CU(api, cuDeviceGetCount, &count);
  }));
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.Problems(), HasSubstr("not deterministic"));
}

TEST(FaultSweepTest, UsesTheConfiguredErrors) {
  SweepScenario scenario = Scenario(&WellBehaved);
  scenario.default_error = CUDA_ERROR_INVALID_VALUE;
  scenario.errors["cuDeviceGetName"] = CUDA_ERROR_NOT_PERMITTED;
  SweepReport report = RunFaultSweep(scenario);
  ASSERT_EQ(report.runs.size(), 4u);
  EXPECT_EQ(report.runs[0].error, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(report.runs[2].error, CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(report.runs[2].status.code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace cuhal::sweep
