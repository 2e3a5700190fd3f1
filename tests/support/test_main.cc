// Copyright 2026 The cuhal Authors.
// The main() of the GoogleTest programs (in place of gtest_main): runs every selected test, and
// when the environment variable CUHAL_GTEST_SKIP_EXIT_CODE names an exit code, exits with it if
// every test that ran was skipped and none failed. CTest runs a program's suites as one test each
// (tests/CMakeLists.txt, "one CTest test per suite") with that variable set and the same code as
// SKIP_RETURN_CODE, so a suite of real-driver tests on a machine without a GPU is reported as
// skipped, not passed, and a suite where one case failed is still reported as failed. Run by
// hand, without the variable, a program exits as gtest_main's does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  testing::InitGoogleMock(&argc, argv);
  const int result = RUN_ALL_TESTS();
  const char* skip_code = std::getenv("CUHAL_GTEST_SKIP_EXIT_CODE");
  if (result != 0 || skip_code == nullptr || *skip_code == '\0') return result;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  if (unit.successful_test_count() == 0 && unit.failed_test_count() == 0 &&
      unit.skipped_test_count() > 0) {
    return std::atoi(skip_code);
  }
  return result;
}
