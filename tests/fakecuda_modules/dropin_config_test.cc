// Copyright 2026 The cuhal Authors.
// The drop-in library's environment configuration (FAKECUDA_DEVICES, _POLICY, _SEED,
// _DRIVER_VERSION, _FAULTS, _LEAK_REPORT, _NOOP_KERNELS) and fakecuda::MakeDevicesDistinct.
#include "fakecuda/dropin/dropin_config.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <utility>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/base/uuid.h"
#include "fakecuda/kernel_registry.h"

namespace fakecuda {
namespace {

// A fake environment.
struct Env {
  std::map<std::string, std::string> vars;
  cuhal::env::Lookup Getter() const { return cuhal::env::MapLookup(vars); }
};

TEST(DropinConfigTest, DeviceCounts) {
  std::vector<DeviceProfile> devices;
  std::string error;
  ASSERT_TRUE(ParseDevicesSpec("2", &devices, &error)) << error;
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, BuiltinH200Profile().name);
  EXPECT_EQ(devices[0].uuid, BuiltinH200Profile().uuid) << "the first device is the profile itself";
  ASSERT_TRUE(ParseDevicesSpec(" 8xH200 ", &devices, &error)) << error;
  ASSERT_EQ(devices.size(), 8u);
  std::set<std::string> uuids, buses;
  for (const DeviceProfile& d : devices) {
    uuids.insert(cuhal::FormatGpuUuid(d.uuid));
    buses.insert(d.pci_bus_id);
  }
  EXPECT_EQ(uuids.size(), 8u) << "every device has its own UUID";
  EXPECT_EQ(buses.size(), 8u) << "and its own PCI bus id";
  ASSERT_TRUE(ParseDevicesSpec("h200,2Xh200", &devices, &error)) << error;
  EXPECT_EQ(devices.size(), 3u);
}

TEST(DropinConfigTest, ProfileFiles) {
  DeviceProfile custom = BuiltinH200Profile();
  custom.name = "Test GPU";
  std::string path = ::testing::TempDir() + "/cuhal_dropin_profile.json";
  {
    std::ofstream out(path);
    out << ProfileToJson(custom);
  }
  std::vector<DeviceProfile> devices;
  std::string error;
  ASSERT_TRUE(ParseDevicesSpec("H200,2x" + path, &devices, &error)) << error;
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].name, BuiltinH200Profile().name);
  EXPECT_EQ(devices[1].name, "Test GPU");
  EXPECT_NE(devices[1].uuid, devices[2].uuid);
  std::remove(path.c_str());
  EXPECT_FALSE(ParseDevicesSpec(path, &devices, &error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

TEST(DropinConfigTest, MalformedDevices) {
  std::vector<DeviceProfile> devices;
  std::string error;
  EXPECT_FALSE(ParseDevicesSpec("0", &devices, &error));
  EXPECT_NE(error.find("'0'"), std::string::npos) << error;
  EXPECT_FALSE(ParseDevicesSpec("3xA100", &devices, &error));
  EXPECT_NE(error.find("3xA100"), std::string::npos) << error;
  EXPECT_FALSE(ParseDevicesSpec("H200,,H200", &devices, &error));
  EXPECT_FALSE(ParseDevicesSpec("2000", &devices, &error));
}

TEST(DropinConfigTest, OptionsFromEnvironment) {
  Env env;
  DriverOptions options;
  ASSERT_TRUE(DriverOptionsFromEnvironment(env.Getter(), &options).ok());
  EXPECT_TRUE(options.devices.empty()) << "default: FakeDriver's one H200";
  EXPECT_EQ(options.policy, SchedulePolicy::kEager);
  EXPECT_EQ(options.seed, 0u);
  EXPECT_EQ(options.driver_version, DriverOptions().driver_version);
  env.vars = {{"FAKECUDA_DEVICES", "4"},
              {"FAKECUDA_POLICY", "Adversarial"},
              {"FAKECUDA_SEED", "12345"},
              {"FAKECUDA_DRIVER_VERSION", "12080"}};
  cuhal::Status status = DriverOptionsFromEnvironment(env.Getter(), &options);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(options.devices.size(), 4u);
  EXPECT_EQ(options.policy, SchedulePolicy::kAdversarial);
  EXPECT_EQ(options.seed, 12345u);
  EXPECT_EQ(options.driver_version, 12080);
  env.vars = {{"FAKECUDA_SEED", "18446744073709551615"}};
  ASSERT_TRUE(DriverOptionsFromEnvironment(env.Getter(), &options).ok());
  EXPECT_EQ(options.seed, ~std::uint64_t{0});
}

// Every malformed value is refused, with a message naming the variable and the value.
TEST(DropinConfigTest, InvalidOptionsAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"FAKECUDA_POLICY", "lazy"},
      {"FAKECUDA_POLICY", ""},
      {"FAKECUDA_SEED", "-1"},
      {"FAKECUDA_SEED", "12 "},
      {"FAKECUDA_SEED", "18446744073709551616"},
      {"FAKECUDA_SEED", ""},
      {"FAKECUDA_DRIVER_VERSION", "13.0"},
      {"FAKECUDA_DRIVER_VERSION", "999"},
      {"FAKECUDA_DRIVER_VERSION", "100000"},
      {"FAKECUDA_DEVICES", "3xA100"},
  };
  for (const auto& [name, value] : cases) {
    Env env;
    env.vars = {{name, value}};
    DriverOptions options;
    cuhal::Status status = DriverOptionsFromEnvironment(env.Getter(), &options);
    ASSERT_FALSE(status.ok()) << name << "='" << value << "' was accepted";
    EXPECT_EQ(status.code(), cuhal::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(name), std::string::npos) << status;
    EXPECT_NE(status.message().find(value), std::string::npos) << status;
    EXPECT_FALSE(CreateDriverFromEnvironment(env.Getter()).ok()) << name << "='" << value << "'";
  }
}

TEST(DropinConfigTest, DriverWithFaultsFromEnvironment) {
  Env env;
  env.vars = {{"FAKECUDA_DEVICES", "2"},
              {"FAKECUDA_FAULTS", "cuMemAlloc:nth:1:CUDA_ERROR_OUT_OF_MEMORY"}};
  cuhal::StatusOr<std::unique_ptr<FakeDriver>> driver = CreateDriverFromEnvironment(env.Getter());
  ASSERT_TRUE(driver.ok()) << driver.status();
  EXPECT_EQ((*driver)->options().devices.size(), 2u);
  EXPECT_EQ((*driver)->faults().OnCall("cuMemAlloc"), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ((*driver)->faults().OnCall("cuMemAlloc"), CUDA_SUCCESS);
  env.vars = {{"FAKECUDA_FAULTS", "cuMemAlloc:sometimes:1:CUDA_ERROR_OUT_OF_MEMORY"}};
  driver = CreateDriverFromEnvironment(env.Getter());
  ASSERT_FALSE(driver.ok());
  EXPECT_NE(driver.status().message().find("FAKECUDA_FAULTS"), std::string::npos)
      << driver.status();
}

TEST(DropinConfigTest, LeakReportIsABoolean) {
  Env env;
  EXPECT_FALSE(LeakReportFromEnvironment(env.Getter()).value());
  for (const char* on : {"1", "true", "YES", "on"}) {
    env.vars = {{"FAKECUDA_LEAK_REPORT", on}};
    EXPECT_TRUE(LeakReportFromEnvironment(env.Getter()).value()) << on;
  }
  for (const char* off : {"0", "false", "no", "Off"}) {
    env.vars = {{"FAKECUDA_LEAK_REPORT", off}};
    EXPECT_FALSE(LeakReportFromEnvironment(env.Getter()).value()) << off;
  }
  env.vars = {{"FAKECUDA_LEAK_REPORT", "2"}};
  cuhal::StatusOr<bool> bad = LeakReportFromEnvironment(env.Getter());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("FAKECUDA_LEAK_REPORT='2'"), std::string::npos)
      << bad.status();
}

TEST(DeviceProfileTest, MakeDevicesDistinctGivesEachDeviceItsOwnIdentity) {
  const DeviceProfile& h200 = BuiltinH200Profile();
  std::vector<DeviceProfile> devices = DistinctDevices(h200, 3);
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].uuid, h200.uuid) << "the first device is the profile itself";
  EXPECT_EQ(devices[0].pci_bus_id, h200.pci_bus_id);
  // The next UUIDs, and the next bus numbers ("0000:00:06.0" -> "0000:01:06.0", "0000:02:06.0").
  std::array<unsigned char, 16> next = h200.uuid;
  for (size_t i = 1; i < devices.size(); ++i) {
    for (int b = 15; b >= 0 && ++next[static_cast<size_t>(b)] == 0; --b) {
    }
    EXPECT_EQ(devices[i].uuid, next) << "device " << i;
  }
  EXPECT_EQ(h200.pci_bus_id, "0000:00:06.0") << "the expectations below assume it";
  EXPECT_EQ(devices[1].pci_bus_id, "0000:01:06.0");
  EXPECT_EQ(devices[2].pci_bus_id, "0000:02:06.0");

  // Devices that are already distinct are left alone.
  DeviceProfile other = h200;
  other.uuid[0] ^= 0xFF;
  other.pci_bus_id = "0000:40:00.0";
  std::vector<DeviceProfile> mixed = {h200, other};
  MakeDevicesDistinct(&mixed);
  EXPECT_EQ(mixed[1].uuid, other.uuid);
  EXPECT_EQ(mixed[1].pci_bus_id, "0000:40:00.0");
  EXPECT_TRUE(DistinctDevices(h200, 0).empty());
}

// Found by fuzz/libfuzzer (device_profile_fuzzer): a number too large for a double made
// nlohmann::json throw out_of_range (not parse_error) through ParseProfile, which terminated the
// process that read FAKECUDA_DEVICES; integers beyond int were narrowed into wrong values
// (driver_version 4294967297 read as 1, an attribute of 2^64 - 1 as -1).
TEST(DeviceProfileTest, ParseProfileRefusesNumbersOutOfRange) {
  DeviceProfile custom = BuiltinH200Profile();
  custom.driver_version = 12345;
  custom.attributes[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 777777;
  const std::string json = ProfileToJson(custom);
  auto with = [&json](const std::string& from, const std::string& to) {
    std::string out = json;
    size_t at = out.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) out.replace(at, from.size(), to);
    return out;
  };
  DeviceProfile profile;
  std::string error;
  ASSERT_TRUE(ParseProfile(json, &profile, &error)) << error;
  EXPECT_EQ(profile.driver_version, 12345);

  EXPECT_FALSE(ParseProfile(with("777777", "2147E83647"), &profile, &error));
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
  EXPECT_FALSE(ParseProfile(with("777777", "1E400"), &profile, &error));
  EXPECT_FALSE(ParseProfile(with("777777", "18446744073709551615"), &profile, &error));
  EXPECT_NE(error.find("out of int range"), std::string::npos) << error;
  EXPECT_FALSE(ParseProfile(with("777777", "2147483648"), &profile, &error));
  EXPECT_TRUE(ParseProfile(with("777777", "-2147483648"), &profile, &error)) << error;
  EXPECT_FALSE(ParseProfile(with("12345", "4294967297"), &profile, &error));
  EXPECT_NE(error.find("driver_version: out of int range"), std::string::npos) << error;
  EXPECT_FALSE(ParseProfile(with("12345", "-9223372036854775808"), &profile, &error));
}

TEST(DropinConfigTest, NoopKernels) {
  Env env;
  EXPECT_TRUE(RegisterNoopKernelsFromEnvironment(env.Getter()).empty());
  env.vars = {{"FAKECUDA_NOOP_KERNELS", "alpha, beta,,"}};
  EXPECT_EQ(RegisterNoopKernelsFromEnvironment(env.Getter()),
            (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_TRUE(IsKernelRegistered("alpha"));
  EXPECT_TRUE(IsKernelRegistered("beta"));
  EXPECT_TRUE(UnregisterKernel("alpha"));
  EXPECT_TRUE(UnregisterKernel("beta"));
}

}  // namespace
}  // namespace fakecuda
