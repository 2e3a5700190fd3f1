// Copyright 2026 The cuhal Authors.
// The drop-in library's environment configuration (FAKECUDA_DEVICES, _POLICY, _SEED,
// _DRIVER_VERSION, _FAULTS).
#include "fakecuda/dropin/dropin_config.h"

#include <gtest/gtest.h>

#include <cstdio>
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
  std::function<const char*(const char*)> Getter() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
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
  std::string error;
  ASSERT_TRUE(DriverOptionsFromEnvironment(env.Getter(), &options, &error)) << error;
  EXPECT_TRUE(options.devices.empty()) << "default: FakeDriver's one H200";
  EXPECT_EQ(options.policy, SchedulePolicy::kEager);
  env.vars = {{"FAKECUDA_DEVICES", "4"},
              {"FAKECUDA_POLICY", "Adversarial"},
              {"FAKECUDA_SEED", "12345"},
              {"FAKECUDA_DRIVER_VERSION", "12080"}};
  ASSERT_TRUE(DriverOptionsFromEnvironment(env.Getter(), &options, &error)) << error;
  EXPECT_EQ(options.devices.size(), 4u);
  EXPECT_EQ(options.policy, SchedulePolicy::kAdversarial);
  EXPECT_EQ(options.seed, 12345u);
  EXPECT_EQ(options.driver_version, 12080);
  env.vars = {{"FAKECUDA_POLICY", "lazy"}};
  EXPECT_FALSE(DriverOptionsFromEnvironment(env.Getter(), &options, &error));
  EXPECT_NE(error.find("FAKECUDA_POLICY"), std::string::npos);
  env.vars = {{"FAKECUDA_SEED", "-1"}};
  EXPECT_FALSE(DriverOptionsFromEnvironment(env.Getter(), &options, &error));
  env.vars = {{"FAKECUDA_DRIVER_VERSION", "13.0"}};
  EXPECT_FALSE(DriverOptionsFromEnvironment(env.Getter(), &options, &error));
}

TEST(DropinConfigTest, DriverWithFaultsFromEnvironment) {
  Env env;
  env.vars = {{"FAKECUDA_DEVICES", "2"},
              {"FAKECUDA_FAULTS", "cuMemAlloc:nth:1:CUDA_ERROR_OUT_OF_MEMORY"}};
  std::string error;
  std::unique_ptr<FakeDriver> driver = CreateDriverFromEnvironment(env.Getter(), &error);
  ASSERT_NE(driver, nullptr) << error;
  EXPECT_EQ(driver->options().devices.size(), 2u);
  EXPECT_EQ(driver->faults().OnCall("cuMemAlloc"), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(driver->faults().OnCall("cuMemAlloc"), CUDA_SUCCESS);
  env.vars = {{"FAKECUDA_FAULTS", "cuMemAlloc:sometimes:1:CUDA_ERROR_OUT_OF_MEMORY"}};
  EXPECT_EQ(CreateDriverFromEnvironment(env.Getter(), &error), nullptr);
  EXPECT_NE(error.find("FAKECUDA_FAULTS"), std::string::npos) << error;
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
