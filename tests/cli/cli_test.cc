// Copyright 2026 The cuhal Authors.
// Runs the `cuhal` binary (CUHAL_CLI_PATH) as a separate process: every subcommand, and each kind
// of bad input (exit status and the message's key words). `trace replay` runs on the fake only.
#include <dlfcn.h>
#include <nccl.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kH200Path[] = CUHAL_SOURCE_DIR "/fakecuda/profiles/h200.json";
constexpr char kH200Uuid[] = "GPU-c976d970-a675-9a33-79fb-2ae73062e153";

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

// A temporary file holding `text`, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(::testing::TempDir() + "cuhal_cli_" + name) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;             // removes the file once
  TempFile& operator=(const TempFile&) = delete;  // ditto
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The committed H200 profile with `field` replaced by `value` (JSON text).
std::string H200With(const std::string& field, const nlohmann::json& value) {
  nlohmann::json profile = nlohmann::json::parse(ReadFile(kH200Path));
  profile[field] = value;
  return profile.dump();
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

// --- every level has --help -------------------------------------------------------------------

TEST(CliTest, HelpOnEveryLevel) {
  for (const char* command : {"", "version", "devices", "demo", "sweep", "profile",
                              "profile capture", "profile show", "trace", "trace replay"}) {
    const Result r = RunCuhal(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("Usage:")) << command;
    EXPECT_THAT(r.out, HasSubstr("--help")) << command;
  }
  const Result top = RunCuhal("--help");
  for (const char* sub : {"version", "devices", "demo", "sweep", "profile", "trace"}) {
    EXPECT_THAT(top.out, HasSubstr(sub));
  }
}

TEST(CliTest, UnknownFlagFails) {
  const Result r = RunCuhal("devices --frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--frobnicate"));
}

// --- devices -------------------------------------------------------------------------------------

TEST(CliTest, DevicesPrintsATable) {
  const Result r = RunCuhal("devices");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("CUDA driver API (fake): 13000 (13.0), 1 device\n"));
  EXPECT_THAT(r.out, ContainsRegex("ORDINAL +NAME +UUID +PCI BUS ID +MEMORY"));
  EXPECT_THAT(r.out, ContainsRegex(std::string("0 +NVIDIA H200 +") + kH200Uuid +
                                   " +0000:00:06.0 +139.8 GiB +9.0 +132 +yes"));
  EXPECT_THAT(r.err, IsEmpty());
}

TEST(CliTest, DevicesJsonParsesBack) {
  const Result r = RunCuhal("devices --count 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_EQ(doc["backend"], "fake");
  EXPECT_EQ(doc["driver_version"], 13000);
  EXPECT_EQ(doc["device_count"], 3);
  ASSERT_EQ(doc["devices"].size(), 3u);
  std::set<std::string> uuids, buses;
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json& d = doc["devices"][static_cast<std::size_t>(i)];
    EXPECT_EQ(d["ordinal"], i);
    EXPECT_EQ(d["name"], "NVIDIA H200");
    EXPECT_EQ(d["total_memory"], 150109880320ull);
    EXPECT_EQ(d["compute_capability"], "9.0");
    EXPECT_EQ(d["multiprocessor_count"], 132);
    EXPECT_EQ(d["memory_pools_supported"], true);
    uuids.insert(d["uuid"].get<std::string>());
    buses.insert(d["pci_bus_id"].get<std::string>());
  }
  EXPECT_EQ(doc["devices"][0]["uuid"], kH200Uuid);
  EXPECT_EQ(uuids.size(), 3u) << "each fake device has its own UUID";
  EXPECT_EQ(buses.size(), 3u) << "and its own PCI bus id";
}

TEST(CliTest, DevicesFromAProfileFile) {
  TempFile profile("custom.json", H200With("name", "Test GPU 9000"));
  const Result r = RunCuhal("devices --json --count 2 --profile '" + profile.path() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["devices"].size(), 2u);
  EXPECT_EQ(doc["devices"][1]["name"], "Test GPU 9000");
}

TEST(CliTest, DevicesRealBackendWithoutADriverNamesLibcuda) {
  if (void* libcuda = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL); libcuda != nullptr) {
    ::dlclose(libcuda);
    GTEST_SKIP() << "libcuda.so.1 is installed here: nothing to report missing";
  }
  const Result r = RunCuhal("devices --backend real", "unset CUHAL_LIBCUDA_PATH;");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal devices: UNAVAILABLE"));
  EXPECT_THAT(r.err, HasSubstr("libcuda.so.1"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(CliTest, DevicesRealBackendWithAMissingLibraryNamesItsPath) {
  const Result r = RunCuhal("devices --backend real",
                            "CUHAL_LIBCUDA_PATH=/nonexistent/cuhal-test/libcuda.so.1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/cuhal-test/libcuda.so.1"));
}

TEST(CliTest, DevicesFakeOnlyFlagsNeedTheFake) {
  const Result r = RunCuhal("devices --backend real --count 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--backend fake"));
}

TEST(CliTest, DevicesBadCount) {
  for (const char* count : {"0", "65", "-1"}) {
    const Result r = RunCuhal(std::string("devices --count ") + count);
    EXPECT_EQ(r.exit_code, 1) << count;
    EXPECT_THAT(r.err, HasSubstr("--count must be between 1 and 64")) << count;
  }
  const Result words = RunCuhal("devices --count many");
  EXPECT_NE(words.exit_code, 0);
  EXPECT_THAT(words.err, HasSubstr("many"));
}

TEST(CliTest, DevicesMissingProfile) {
  const Result r = RunCuhal("devices --profile /nonexistent/cuhal-test/p.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/cuhal-test/p.json: cannot open for reading"));
}

TEST(CliTest, DevicesMalformedProfileSaysWhere) {
  TempFile profile("devices_bad.json", "{\"name\": \"x\",\n  \"uuid\": oops}");
  const Result r = RunCuhal("devices --profile '" + profile.path() + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(profile.path()));
  EXPECT_THAT(r.err, HasSubstr("line 2, column"));
}

// --- demo ----------------------------------------------------------------------------------------

TEST(CliTest, DemoRunsOnTheFakeAndVerifiesEveryStep) {
  const Result r = RunCuhal("demo");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.err, IsEmpty());
  EXPECT_THAT(r.out, HasSubstr("on the fake CUDA driver and fake NCCL (no GPU needed)"));
  EXPECT_THAT(r.out, HasSubstr("4 devices"));
  EXPECT_THAT(r.out, HasSubstr("Opened device 0 (cuda:0)"));
  EXPECT_THAT(r.out, HasSubstr("all 65536 values\n   match. Verified."));
  EXPECT_THAT(r.out, HasSubstr("every value of B is two more than before, every value of A one "
                               "more. Verified."));
  EXPECT_THAT(r.out, HasSubstr("Graph target: instantiations 1, in-place updates 1 "
                               "(cuGraphExecKernelNodeSetParams), rebuilds 0."));
  EXPECT_THAT(r.out, HasSubstr("Pool statistics"));
  EXPECT_THAT(r.out, ContainsRegex("device-local pool +32.0 MiB +256.0 KiB"));
  EXPECT_THAT(r.out, ContainsRegex("other pool +32.0 MiB +256.0 KiB"));
  EXPECT_THAT(r.out, ContainsRegex("device-local pool +0 B +0 B +32.0 MiB"));
  EXPECT_THAT(r.out, HasSubstr("2 allocations, 2 frees, 0 live"));
  EXPECT_THAT(r.out, HasSubstr("7. Queue operations on two queues of device 0, ordered only by "
                               "semaphores S and T"));
  EXPECT_THAT(r.out, HasSubstr("Queue 1's last 3 operations were submitted before queue 0's "
                               "Execute"));
  EXPECT_THAT(r.out, HasSubstr("32768 values, then 32768 sevens, read back. Verified."));
  EXPECT_THAT(r.out, HasSubstr("8. All-reduce: 4 ranks"));
  EXPECT_THAT(r.out, HasSubstr("9. Closed everything"));
  EXPECT_THAT(r.out, ContainsRegex("3 +3 +4 +10\n"));
  EXPECT_THAT(r.out, HasSubstr("Device::CreateChannel"));
  EXPECT_THAT(r.out, HasSubstr("all-reduce result verified"));
  EXPECT_THAT(r.out, HasSubstr("hold no live object (no leaks)"));
}

// The kernel step runs add_one compiled by nvcc from CUDA C++ on fakecuda's PTX interpreter; a
// build without nvcc falls back to the hand-written sample (a registered host function) and
// says why.
TEST(CliTest, DemoKernelIsCompiledCudaCppOnThePtxInterpreter) {
  const Result r = RunCuhal("demo");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string missing = CUHAL_NVCC_MISSING;
  if (missing.empty()) {
    EXPECT_THAT(r.out, HasSubstr("loaded the PTX nvcc compiled from CUDA C++ "
                                 "(cli/kernels/demo_kernels.cu)"));
    EXPECT_THAT(r.out, ContainsRegex("fakecuda's PTX interpreter ran them \\([1-9][0-9]* "
                                     "thread-instructions\\)"));
  } else {
    EXPECT_THAT(r.out, HasSubstr("no CUDA C++ kernel (" + missing + ")"));
    EXPECT_THAT(r.out, HasSubstr("A host function registered under its name ran them"));
  }
}

TEST(CliTest, DemoOutputIsDeterministic) {
  const Result first = RunCuhal("demo --backend fake");
  const Result second = RunCuhal("demo");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, second.out);
}

TEST(CliTest, DemoRealBackendWithAMissingLibraryNamesIt) {
  const Result r = RunCuhal("demo --backend real",
                            "CUHAL_LIBCUDA_PATH=/nonexistent/cuhal-test/libcuda.so.1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal demo: UNAVAILABLE"));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/cuhal-test/libcuda.so.1"));
}

// --- sweep ---------------------------------------------------------------------------------------

TEST(CliTest, SweepListShowsTheScenarios) {
  const Result r = RunCuhal("sweep --list");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("driver create\n"));
  EXPECT_THAT(r.out, HasSubstr("device create/destroy\n"));
  EXPECT_THAT(r.out, HasSubstr("pools and trim\n"));
  EXPECT_THAT(r.out, HasSubstr("buffers: device-local pool, adversarial schedule\n"));
}

TEST(CliTest, SweepOneScenario) {
  const Result r = RunCuhal("sweep 'driver create'");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, ContainsRegex("SCENARIO +CALLS SWEPT +FAILURES INJECTED +LEAKS +CRASHES"));
  // Every call swept was failed once; no leak, no crash.
  std::smatch row;
  ASSERT_TRUE(std::regex_search(r.out, row,
                                std::regex("driver create +([0-9]+) +([0-9]+) +([0-9]+) +"
                                           "([0-9]+) +ok\n")))
      << r.out;
  EXPECT_GT(std::stoi(row[1]), 0);
  EXPECT_EQ(row[1], row[2]);
  EXPECT_EQ(row[3], "0") << "leaks";
  EXPECT_EQ(row[4], "0") << "crashes";
  // Not a terminal: one progress line per scenario on stderr, no bar.
  EXPECT_THAT(r.err, HasSubstr("[1/1] driver create: ok ("));
  EXPECT_THAT(r.err, Not(HasSubstr("\r")));
}

TEST(CliTest, SweepWithASeed) {
  const Result r = RunCuhal("sweep --seed 42 'buffers: device-local pool, adversarial schedule'");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("seed 42"));
  EXPECT_THAT(r.out, ContainsRegex("adversarial schedule +[0-9]+ +[0-9]+ +0 +0 +ok"));
}

TEST(CliTest, SweepUnknownScenarioFails) {
  const Result r = RunCuhal("sweep nonexistent");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no scenario named 'nonexistent'"));
  EXPECT_THAT(r.err, HasSubstr("--list"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(CliTest, SweepBadSeedFails) {
  const Result r = RunCuhal("sweep --seed lots");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("lots"));
}

// --- profile -------------------------------------------------------------------------------------

TEST(CliTest, ProfileShowCommittedH200) {
  const Result r = RunCuhal(std::string("profile show '") + kH200Path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Name:               NVIDIA H200\n"));
  EXPECT_THAT(r.out, HasSubstr(std::string("UUID:               ") + kH200Uuid + "\n"));
  EXPECT_THAT(r.out, HasSubstr("PCI bus id:         0000:00:06.0\n"));
  EXPECT_THAT(r.out, HasSubstr("Total memory:       150109880320 bytes (139.8 GiB)\n"));
  EXPECT_THAT(r.out, HasSubstr("Compute capability: 9.0\n"));
  EXPECT_THAT(r.out, HasSubstr("Attributes:         147 "));
  EXPECT_THAT(r.out,
              ContainsRegex("multiprocessors +132 +CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"));
  EXPECT_THAT(r.out, Not(HasSubstr("Every attribute")));
}

TEST(CliTest, ProfileShowAllListsEveryAttribute) {
  const Result r = RunCuhal(std::string("profile show --all '") + kH200Path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string all = r.out.substr(r.out.find("Every attribute"));
  std::size_t rows = 0;
  for (std::size_t pos = all.find("\n  CU_DEVICE_ATTRIBUTE_"); pos != std::string::npos;
       pos = all.find("\n  CU_DEVICE_ATTRIBUTE_", pos + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 147u);
}

TEST(CliTest, ProfileShowMissingFile) {
  const Result r = RunCuhal("profile show /nonexistent/cuhal-test/p.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal profile show: NOT_FOUND"));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/cuhal-test/p.json: cannot open for reading"));
}

TEST(CliTest, ProfileShowUnreadableFile) {
  // A directory opens but cannot be read as a profile.
  const Result r = RunCuhal("profile show '" + ::testing::TempDir() + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(::testing::TempDir()));
}

TEST(CliTest, ProfileShowMalformedJsonSaysWhere) {
  TempFile profile("show_bad.json", "{\n  \"name\": \"x\",\n  \"uuid\": [1, 2,\n}");
  const Result r = RunCuhal("profile show '" + profile.path() + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr(profile.path()));
  EXPECT_THAT(r.err, HasSubstr("not valid JSON"));
  EXPECT_THAT(r.err, HasSubstr("line 4, column 1"));
}

TEST(CliTest, ProfileShowEmptyFile) {
  TempFile profile("show_empty.json", "");
  const Result r = RunCuhal("profile show '" + profile.path() + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("not valid JSON"));
}

TEST(CliTest, ProfileShowBadFieldNamesIt) {
  struct Case {
    std::string file;
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"bad_uuid.json", H200With("uuid", "GPU-not-a-uuid"), "uuid: missing or not of the form"},
      {"bad_memory.json", H200With("total_memory", -5), "total_memory:"},
      {"bad_name.json", H200With("name", 7), "name:"},
      {"bad_attribute.json",
       H200With("attributes", nlohmann::json{{"CU_DEVICE_ATTRIBUTE_BOGUS", 1}}),
       "attributes.CU_DEVICE_ATTRIBUTE_BOGUS: unknown attribute"},
      {"bad_top.json", "[1, 2, 3]", "top level: expected an object"},
  };
  for (const Case& c : cases) {
    TempFile profile(c.file, c.text);
    const Result r = RunCuhal("profile show '" + profile.path() + "'");
    EXPECT_EQ(r.exit_code, 1) << c.file;
    EXPECT_THAT(r.err, HasSubstr(profile.path() + ": " + c.message)) << c.file;
  }
}

TEST(CliTest, ProfileNeedsASubcommandAndAFile) {
  const Result none = RunCuhal("profile");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.err, HasSubstr("capture or show"));
  const Result unknown = RunCuhal("profile frobnicate");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_THAT(unknown.err, HasSubstr("frobnicate"));
  const Result no_file = RunCuhal("profile show");
  EXPECT_NE(no_file.exit_code, 0);
  EXPECT_THAT(no_file.err, HasSubstr("file is required"));
  const Result no_out = RunCuhal("profile capture");
  EXPECT_NE(no_out.exit_code, 0);
  EXPECT_THAT(no_out.err, HasSubstr("out is required"));
}

TEST(CliTest, ProfileCaptureFromTheFakeReproducesTheCommittedProfile) {
  const std::string out = ::testing::TempDir() + "cuhal_cli_captured.json";
  const Result r = RunCuhal("profile capture --backend fake --device 0 '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Captured device 0 (fake): NVIDIA H200"));
  EXPECT_THAT(r.out, HasSubstr("147 attributes -> " + out));
  EXPECT_EQ(nlohmann::json::parse(ReadFile(out)), nlohmann::json::parse(ReadFile(kH200Path)));
  const Result shown = RunCuhal("profile show '" + out + "'");
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr(kH200Uuid));
  std::remove(out.c_str());
}

TEST(CliTest, ProfileCaptureRealBackendWithAMissingLibraryNamesIt) {
  const Result r = RunCuhal("profile capture '" + ::testing::TempDir() + "cuhal_cli_real.json'",
                            "CUHAL_LIBCUDA_PATH=/nonexistent/cuhal-test/libcuda.so.1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal profile capture: UNAVAILABLE"));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/cuhal-test/libcuda.so.1"));
}

TEST(CliTest, ProfileCaptureDeviceOutOfRange) {
  const Result r = RunCuhal("profile capture --backend fake --device 3 '" + ::testing::TempDir() +
                            "cuhal_cli_none.json'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND: --device 3: the fake driver has 1 device"));
}

TEST(CliTest, ProfileCaptureUnwritableOutput) {
  const Result r = RunCuhal("profile capture --backend fake /nonexistent/cuhal-test/out.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/cuhal-test/out.json: cannot open for writing"));
}

// --- trace replay --------------------------------------------------------------------------------

constexpr char kMultiStream[] = CUHAL_SOURCE_DIR "/bench/traces/multi_stream.jsonl";

// The largest sum of live allocation sizes over a trace file (what every allocator's used high
// must be), computed here independently of the trace reader.
std::uint64_t TraceUsedHigh(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // the header
  std::map<std::uint64_t, std::uint64_t> live;
  std::uint64_t used = 0, high = 0;
  while (std::getline(in, line)) {
    const nlohmann::json op = nlohmann::json::parse(line);
    if (op["op"] == "alloc") {
      live[op["id"].get<std::uint64_t>()] = op["size"].get<std::uint64_t>();
      used += op["size"].get<std::uint64_t>();
      high = std::max(high, used);
    } else if (op["op"] == "free") {
      used -= live[op["id"].get<std::uint64_t>()];
      live.erase(op["id"].get<std::uint64_t>());
    }
  }
  return high;
}

TEST(CliTest, TraceReplayPrintsATablePerAllocator) {
  const Result r =
      RunCuhal(std::string("trace replay '") + kMultiStream + "' --allocator driver-pool,core");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Trace multi_stream ("));
  EXPECT_THAT(r.out, ContainsRegex("ALLOCATOR +NS/OP MEAN +NS/OP P99 +RESERVED HIGH \\(MiB\\) +"
                                   "USED HIGH \\(MiB\\) +RESERVED/USED +DRIVER CALLS"));
  EXPECT_THAT(r.out, ContainsRegex("\ndriver-pool +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ "
                                   "+[0-9]+\n"));
  EXPECT_THAT(r.out, ContainsRegex("\ncore +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+"));
  EXPECT_THAT(r.out, Not(HasSubstr("core-pool"))) << "only the allocators asked for run";
  EXPECT_THAT(r.err, IsEmpty()) << "no progress bar when stderr is not a terminal";
}

TEST(CliTest, TraceReplayJsonParsesBack) {
  const Result r = RunCuhal(std::string("trace replay '") + kMultiStream +
                            "' --allocator driver-pool --allocator core --repeat 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  const std::uint64_t used_high = TraceUsedHigh(kMultiStream);
  ASSERT_GT(used_high, 0u);
  EXPECT_EQ(doc["trace"], "multi_stream");
  EXPECT_EQ(doc["backend"], "fake");
  EXPECT_EQ(doc["streams"], 4);
  EXPECT_EQ(doc["trace_used_high"], used_high);
  EXPECT_EQ(doc["repeat"], 2);
  ASSERT_EQ(doc["allocators"].size(), 2u);
  EXPECT_EQ(doc["allocators"][0]["allocator"], "driver-pool");
  EXPECT_EQ(doc["allocators"][1]["allocator"], "core");
  for (const nlohmann::json& a : doc["allocators"]) {
    SCOPED_TRACE(a["allocator"].dump());
    EXPECT_EQ(a["operations"], doc["operations"]);
    EXPECT_EQ(a["repeat"], 2);
    EXPECT_EQ(a["used_high"], used_high);
    EXPECT_GE(a["reserved_high"].get<std::uint64_t>(), used_high);
    EXPECT_GE(a["reserved_per_used"].get<double>(), 1.0);
    EXPECT_GT(a["ns_per_op_mean"].get<double>(), 0.0);
    EXPECT_GE(a["ns_per_op_p99"].get<double>(), a["ns_per_op_p50"].get<double>());
    for (const char* key : {"ns_per_op_timed_mean", "alloc_ns_mean", "free_ns_mean",
                            "driver_calls", "freed_at_end", "series_stride"}) {
      EXPECT_TRUE(a.contains(key)) << key;
    }
    EXPECT_GT(a["driver_calls"].get<std::uint64_t>(), 0u);
    EXPECT_TRUE(a["driver_calls_by_entry"].is_object());
    const nlohmann::json& series = a["series"];
    ASSERT_EQ(series["op"].size(), doc["operations"].get<std::size_t>());
    ASSERT_EQ(series["reserved"].size(), series["op"].size());
    ASSERT_EQ(series["used"].size(), series["op"].size());
    std::uint64_t series_used_high = 0;
    for (const nlohmann::json& u : series["used"]) {
      series_used_high = std::max(series_used_high, u.get<std::uint64_t>());
    }
    EXPECT_EQ(series_used_high, used_high);
  }
  EXPECT_TRUE(doc["skipped"].empty()) << "nothing is skipped when the allocators are named";
}

TEST(CliTest, TraceReplayAllSkipsPyTorchOnTheFakeWithTheReason) {
  const Result r = RunCuhal(std::string("trace replay '") + kMultiStream + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  std::vector<std::string> names;
  for (const nlohmann::json& a : doc["allocators"]) names.push_back(a["allocator"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"driver-pool", "core", "core-expandable", "core-pool"}));
  ASSERT_EQ(doc["skipped"].size(), 1u);
  EXPECT_EQ(doc["skipped"][0]["allocator"], "pytorch");
  EXPECT_THAT(doc["skipped"][0]["reason"].get<std::string>(),
              ContainsRegex("built without torch|needs the real driver"));
}

TEST(CliTest, TraceReplayPyTorchAskedForOnTheFakeFails) {
  const Result r = RunCuhal(std::string("trace replay '") + kMultiStream + "' --allocator pytorch");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal trace replay: "));
  EXPECT_THAT(r.err, ContainsRegex("built without torch|needs the real driver"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(CliTest, TraceReplayMissingFile) {
  const Result r = RunCuhal("trace replay /nonexistent/cuhal-test/t.jsonl");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal trace replay: NOT_FOUND"));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/cuhal-test/t.jsonl"));
  EXPECT_THAT(r.err, HasSubstr("No such file or directory"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(CliTest, TraceReplayMalformedTraceSaysWhichLine) {
  TempFile t("bad_trace.jsonl",
             "{\"format\":\"cuhal-alloc-trace\",\"version\":1,\"name\":\"bad\",\"streams\":1,"
             "\"provenance\":\"test\",\"operations\":2}\n"
             "{\"op\":\"alloc\",\"id\":0,\"size\":4096,\"stream\":0}\n"
             "{\"op\":\"free\",\"id\":7,\"stream\":0}\n");
  const Result r = RunCuhal("trace replay '" + t.path() + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal trace replay: INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr(t.path() + ":3: "));
  EXPECT_THAT(r.err, HasSubstr("free of id 7, which was never allocated"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(CliTest, TraceReplayUnknownAllocatorListsTheNames) {
  const Result r =
      RunCuhal(std::string("trace replay '") + kMultiStream + "' --allocator core,jemalloc");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal trace replay: INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr("'jemalloc'"));
  EXPECT_THAT(r.err, HasSubstr("driver-pool, core, core-expandable, core-pool, pytorch"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(CliTest, TraceReplayBadRepeatAndMissingTrace) {
  EXPECT_NE(RunCuhal(std::string("trace replay '") + kMultiStream + "' --repeat 0").exit_code, 0);
  EXPECT_NE(RunCuhal("trace replay").exit_code, 0);
  const Result r = RunCuhal("trace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("replay"));
}

TEST(CliTest, TraceReplayPlotWithoutPythonNamesIt) {
  const Result r = RunCuhal(std::string("trace replay '") + kMultiStream +
                                "' --allocator core --plot '" + ::testing::TempDir() +
                                "cuhal_cli_noplot.png'",
                            "PATH=/nonexistent/cuhal-test");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuhal trace replay: UNAVAILABLE"));
  EXPECT_THAT(r.err, HasSubstr("python3"));
}

TEST(CliTest, TraceReplayPlotWritesAnImage) {
  if (std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
    std::printf("skipped: python3 cannot import matplotlib\n");
    GTEST_SKIP() << "python3 cannot import matplotlib";
  }
  const std::string png = ::testing::TempDir() + "cuhal_cli_plot.png";
  std::remove(png.c_str());
  const Result r = RunCuhal(std::string("trace replay '") + kMultiStream +
                            "' --allocator driver-pool,core --plot '" + png + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string image = ReadFile(png);
  ASSERT_GE(image.size(), 8u);
  EXPECT_EQ(image.substr(1, 3), "PNG");
  EXPECT_THAT(r.out, HasSubstr("driver-pool"));
  std::remove(png.c_str());
}

}  // namespace
