// Copyright 2026 The cuhal Authors.
// fakecuda::ScopedDriver with invalid options: nothing is installed, the error is reported, and
// driver() stops the program with the error instead of dereferencing a null driver.
#include <cuda.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "fakecuda/fake_driver.h"

namespace fakecuda {
namespace {

DriverOptions InvalidOptions() {
  DriverOptions options;
  DeviceProfile nameless = BuiltinH200Profile();
  nameless.name.clear();
  options.devices.push_back(nameless);
  return options;
}

TEST(ScopedDriverTest, InvalidOptionsInstallNothingAndSayWhy) {
  ScopedDriver outer;  // a valid driver, installed before
  ASSERT_TRUE(outer.ok()) << outer.error();
  {
    ScopedDriver scoped(InvalidOptions());
    EXPECT_FALSE(scoped.ok());
    EXPECT_NE(scoped.error().find("device 0: profile needs a name"), std::string::npos)
        << scoped.error();
    EXPECT_EQ(Installed(), nullptr) << "neither the invalid driver nor the previous one serves";
    EXPECT_EQ(cuInit(0), CUDA_ERROR_NOT_INITIALIZED);
  }
  EXPECT_EQ(Installed(), &outer.driver()) << "the previous driver is back";
}

TEST(ScopedDriverTest, DriverOfInvalidOptionsAbortsWithTheError) {
  ScopedDriver scoped(InvalidOptions());
  ASSERT_FALSE(scoped.ok());
  EXPECT_DEATH((void)scoped.driver(), "invalid DriverOptions: device 0: profile needs a name");
  EXPECT_DEATH((void)scoped->faults(), "invalid DriverOptions");
}

TEST(ScopedDriverTest, CreateReturnsTheErrorOrAnInstalledDriver) {
  std::string error;
  EXPECT_EQ(ScopedDriver::Create(InvalidOptions(), &error), nullptr);
  EXPECT_NE(error.find("profile needs a name"), std::string::npos) << error;
  EXPECT_EQ(Installed(), nullptr) << "a failed Create leaves nothing installed";

  std::unique_ptr<ScopedDriver> scoped = ScopedDriver::Create(DriverOptions(), &error);
  ASSERT_NE(scoped, nullptr) << error;
  EXPECT_TRUE(scoped->ok());
  EXPECT_TRUE(scoped->error().empty());
  EXPECT_EQ(Installed(), &scoped->driver());
  EXPECT_EQ(cuInit(0), CUDA_SUCCESS);
}

}  // namespace
}  // namespace fakecuda
