// Copyright 2026 The cuhal Authors.
// Runs the `cuhal` binary (CUHAL_CLI_PATH) as a separate process.
#include <nccl.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

struct Result {
  int exit_code = -1;  // -1 when the process did not exit normally
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `cuhal <args>` through the shell, with optional environment assignments in front.
Result RunCuhal(const std::string& args, const std::string& env = "") {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string base = ::testing::TempDir() + "cuhal_cli_" + test->name();
  const std::string out_path = base + ".out";
  const std::string err_path = base + ".err";
  const std::string command = env + " '" CUHAL_CLI_PATH "' " + args + " >'" + out_path +
                              "' 2>'" + err_path + "'";
  const int status = std::system(command.c_str());
  Result result;
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

std::string ExpectedNcclLine() {
  std::ostringstream line;
  line << "NCCL (fake): " << NCCL_VERSION_CODE << " (" << NCCL_MAJOR << "." << NCCL_MINOR << "."
       << NCCL_PATCH << ")";
  return line.str();
}

TEST(CliTest, VersionPrintsFakeVersionsThroughTheTables) {
  const Result r = RunCuhal("version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cuhal " CUHAL_VERSION_STRING "\n"));
  EXPECT_THAT(r.out, HasSubstr("CUDA driver API (fake): 13000 (13.0)\n"));
  EXPECT_THAT(r.out, HasSubstr(ExpectedNcclLine() + "\n"));
  EXPECT_THAT(r.err, IsEmpty());
}

TEST(CliTest, ExplicitFakeBackendIsTheDefault) {
  const Result r = RunCuhal("version --backend fake");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("CUDA driver API (fake): 13000 (13.0)\n"));
}

TEST(CliTest, VersionFlag) {
  const Result r = RunCuhal("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cuhal " CUHAL_VERSION_STRING));
}

TEST(CliTest, UnknownSubcommandFails) {
  const Result r = RunCuhal("frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("frobnicate"));
}

TEST(CliTest, MissingSubcommandFails) {
  const Result r = RunCuhal("");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("subcommand"));
}

TEST(CliTest, UnknownBackendFails) {
  const Result r = RunCuhal("version --backend imaginary");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--backend"));
  EXPECT_THAT(r.err, HasSubstr("imaginary"));
}

TEST(CliTest, RealBackendWithMissingLibraryNamesIt) {
  const Result r = RunCuhal("version --backend real",
                            "CUHAL_LIBCUDA_PATH=/nonexistent/cuhal-test/libcuda.so.1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/cuhal-test/libcuda.so.1"));
  EXPECT_THAT(r.out, Not(HasSubstr("CUDA driver API")));
}

}  // namespace
