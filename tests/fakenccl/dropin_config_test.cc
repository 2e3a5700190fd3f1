// Copyright 2026 The cuhal Authors.
// The drop-in libnccl.so.2's environment configuration (fakenccl/dropin/dropin_config.h):
// FAKENCCL_VERSION, _TIMEOUT_TICKS, _FAULTS and _LEAK_REPORT, parsed strictly; any invalid value
// (a bad FAKENCCL_FAULTS included) refuses the whole configuration.
#include "fakenccl/dropin/dropin_config.h"

#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fakenccl {
namespace {

// A fake environment.
struct Env {
  std::map<std::string, std::string> vars;
  cuhal::env::Lookup Getter() const { return cuhal::env::MapLookup(vars); }
};

TEST(NcclDropinConfigTest, DefaultsWhenUnset) {
  Env env;
  cuhal::StatusOr<NcclOptions> options = NcclOptionsFromEnvironment(env.Getter());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->version, NcclOptions().version);
  EXPECT_EQ(options->timeout_ticks, NcclOptions().timeout_ticks);
  EXPECT_FALSE(options->cross_process);
  EXPECT_FALSE(NcclLeakReportFromEnvironment(env.Getter()).value());
}

TEST(NcclDropinConfigTest, ValuesAreRead) {
  Env env;
  env.vars = {{"FAKENCCL_VERSION", "22901"},
              {"FAKENCCL_TIMEOUT_TICKS", "18446744073709551615"},
              {"FAKENCCL_LEAK_REPORT", "on"},
              {"FAKENCCL_CROSS_PROCESS", "1"}};
  cuhal::StatusOr<NcclOptions> options = NcclOptionsFromEnvironment(env.Getter());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->cross_process);
  EXPECT_EQ(options->version, 22901);
  EXPECT_EQ(options->timeout_ticks, std::numeric_limits<std::uint64_t>::max());
  EXPECT_TRUE(NcclLeakReportFromEnvironment(env.Getter()).value());
}

// The case first: "-1" used to become 2^64-1 ticks.
TEST(NcclDropinConfigTest, InvalidValuesAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"FAKENCCL_TIMEOUT_TICKS", "-1"},
      {"FAKENCCL_TIMEOUT_TICKS", "0"},
      {"FAKENCCL_TIMEOUT_TICKS", "10ms"},
      {"FAKENCCL_TIMEOUT_TICKS", ""},
      {"FAKENCCL_TIMEOUT_TICKS", "18446744073709551616"},
      {"FAKENCCL_VERSION", "0"},
      {"FAKENCCL_VERSION", "2.28.9"},
      {"FAKENCCL_VERSION", "2147483648"},
      {"FAKENCCL_CROSS_PROCESS", "maybe"},
  };
  for (const auto& [name, value] : cases) {
    Env env;
    env.vars = {{name, value}};
    cuhal::StatusOr<NcclOptions> options = NcclOptionsFromEnvironment(env.Getter());
    ASSERT_FALSE(options.ok()) << name << "='" << value << "' was accepted";
    EXPECT_EQ(options.status().code(), cuhal::StatusCode::kInvalidArgument);
    EXPECT_NE(options.status().message().find(name + "='" + value + "'"), std::string::npos)
        << options.status();
    EXPECT_FALSE(CreateNcclFromEnvironment(env.Getter()).ok()) << name << "='" << value << "'";
  }
  Env env;
  env.vars = {{"FAKENCCL_LEAK_REPORT", "please"}};
  EXPECT_FALSE(NcclLeakReportFromEnvironment(env.Getter()).ok());
}

TEST(NcclDropinConfigTest, FaultsAreInstalledOrTheConfigurationIsRefused) {
  Env env;
  env.vars = {{"FAKENCCL_FAULTS", "ncclAllReduce:nth:1:ncclSystemError"}};
  cuhal::StatusOr<std::unique_ptr<FakeNccl>> nccl = CreateNcclFromEnvironment(env.Getter());
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  EXPECT_EQ((*nccl)->faults().OnCall("ncclAllReduce"), ncclSystemError);
  EXPECT_EQ((*nccl)->faults().OnCall("ncclAllReduce"), ncclSuccess);
  // A bad rule used to be reported in one line and then ignored (no faults at all).
  env.vars = {{"FAKENCCL_FAULTS", "ncclAllReduce:sometimes:1:ncclSystemError"}};
  nccl = CreateNcclFromEnvironment(env.Getter());
  ASSERT_FALSE(nccl.ok());
  EXPECT_NE(nccl.status().message().find("FAKENCCL_FAULTS"), std::string::npos) << nccl.status();
}

}  // namespace
}  // namespace fakenccl
