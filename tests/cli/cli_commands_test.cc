// Copyright 2026 The cuhal Authors.
// The cuhal program's command library (cli/), in-process: running a sweep in a child process
// (including children that crash), the text tables, the fake device set.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/bindings.h"
#include "cli/sweep_command.h"
#include "cli/text_table.h"
#include "core/base/uuid.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cuhal::cli {
namespace {

using ::testing::HasSubstr;

TEST(RunInChildTest, ReturnsWhatTheChildSent) {
  const ChildOutcome outcome = RunInChild([] { return std::string("calls 3\nline two"); });
  EXPECT_TRUE(outcome.completed) << outcome.crash;
  EXPECT_EQ(outcome.result, "calls 3\nline two");
  EXPECT_EQ(outcome.crash, "");
}

TEST(RunInChildTest, AChildKilledByASignalIsACrashNamingTheSignal) {
  const ChildOutcome outcome = RunInChild([]() -> std::string { std::abort(); });
  EXPECT_FALSE(outcome.completed);
  EXPECT_EQ(outcome.crash, "SIGABRT");
  const ChildOutcome killed = RunInChild([]() -> std::string {
    std::raise(SIGKILL);
    return "unreachable";
  });
  EXPECT_FALSE(killed.completed);
  EXPECT_EQ(killed.crash, "SIGKILL");
}

TEST(RunInChildTest, AChildThatExitsEarlyIsACrash) {
  // A sanitizer report ends the child with a non-zero exit status.
  const ChildOutcome failed = RunInChild([]() -> std::string { ::_exit(3); });
  EXPECT_FALSE(failed.completed);
  EXPECT_EQ(failed.crash, "exit status 3");
  const ChildOutcome silent = RunInChild([]() -> std::string { ::_exit(0); });
  EXPECT_FALSE(silent.completed);
  EXPECT_THAT(silent.crash, HasSubstr("without reporting a result"));
}

TEST(RunSweepTest, UnknownScenarioIsNotFoundBeforeAnythingRuns) {
  std::ostringstream out, progress;
  SweepOptions options;
  options.scenarios = {"driver create", "no such scenario"};
  const Status status = RunSweep(options, out, progress);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("'no such scenario'"));
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(progress.str(), "") << "nothing may run when one name is unknown";
}

TEST(TextTableTest, PadsColumnsAndAlignsNumbersRight) {
  TextTable table({"NAME", "COUNT"});
  table.AlignRight(1);
  table.AddRow({"a", "7"});
  table.AddRow({"longer name", "12345"});
  table.AddRow({"short row"});
  std::ostringstream out;
  table.Render(out, "  ");
  EXPECT_EQ(out.str(),
            "  NAME         COUNT\n"
            "  -----------  -----\n"
            "  a                7\n"
            "  longer name  12345\n"
            "  short row\n");
}

TEST(TextTableTest, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(262144), "256.0 KiB");
  EXPECT_EQ(FormatBytes(32u << 20), "32.0 MiB");
  EXPECT_EQ(FormatBytes(150109880320ull), "139.8 GiB");
}

TEST(FakeDeviceProfilesTest, CopiesGetTheirOwnUuidAndBusId) {
  StatusOr<std::vector<fakecuda::DeviceProfile>> devices = FakeDeviceProfiles("", 4);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 4u);
  EXPECT_EQ((*devices)[0].uuid, fakecuda::BuiltinH200Profile().uuid);
  EXPECT_EQ((*devices)[0].pci_bus_id, fakecuda::BuiltinH200Profile().pci_bus_id);
  std::set<std::string> uuids, buses;
  for (const fakecuda::DeviceProfile& d : *devices) {
    uuids.insert(cuhal::FormatGpuUuid(d.uuid));
    buses.insert(d.pci_bus_id);
    EXPECT_EQ(d.name, "NVIDIA H200");
  }
  EXPECT_EQ(uuids.size(), 4u);
  EXPECT_EQ(buses.size(), 4u);
  EXPECT_EQ((*devices)[1].pci_bus_id, "0000:01:06.0");
}

TEST(FakeDeviceProfilesTest, BadCountsAndFiles) {
  EXPECT_EQ(FakeDeviceProfiles("", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FakeDeviceProfiles("", 65).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(FakeDeviceProfiles("", 64).ok());
  const StatusOr<std::vector<fakecuda::DeviceProfile>> missing =
      FakeDeviceProfiles("/nonexistent/cuhal/profile.json", 1);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/cuhal/profile.json"));
}

TEST(BindFakeCudaTest, RefusedOptionsAreAnError) {
  fakecuda::DriverOptions options;
  options.devices.push_back(fakecuda::BuiltinH200Profile());
  options.devices.back().name = "";  // a profile without a name is invalid
  const StatusOr<CudaBinding> binding = BindFakeCuda(options);
  EXPECT_EQ(binding.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(binding.status().message(), HasSubstr("refused"));
}

}  // namespace
}  // namespace cuhal::cli
