// Copyright 2026 The cuhal Authors.
// RealNccl against stand-in NCCL libraries (fake_libnccl.cc): the version check that comes first,
// required and optional entries, library paths and the environment override.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/symbols/nccl_api.h"
#include "core/symbols/real_loader.h"
#include "tests/symbols/fake_lib_control.h"

namespace cuhal {
namespace {

using ::cuhal::testing::FakeLibrary;
using ::cuhal::testing::ScopedEnv;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Stand-ins: a complete NCCL 2.28.9; one like NCCL 2.18 (no AlltoAll/Gather/Scatter); one that
// lacks the required ncclCommSplit; one without ncclGetVersion.
constexpr char kNccl[] = CUHAL_TEST_LIBNCCL;
constexpr char kNccl218[] = CUHAL_TEST_LIBNCCL_2_18;
constexpr char kNcclNoSplit[] = CUHAL_TEST_LIBNCCL_NO_SPLIT;
constexpr char kNcclNoVersion[] = CUHAL_TEST_LIBNCCL_NO_VERSION;

template <typename Fp>
void* AsVoid(Fp fn) {
  void* address = nullptr;
  std::memcpy(&address, &fn, sizeof(address));
  return address;
}

TEST(DecodeNcclVersionTest, BothEncodings) {
  EXPECT_EQ(DecodeNcclVersion(22809), (NcclVersion{2, 28, 9}));
  EXPECT_EQ(DecodeNcclVersion(21805), (NcclVersion{2, 18, 5}));
  EXPECT_EQ(DecodeNcclVersion(20906), (NcclVersion{2, 9, 6}));   // First of the new encoding.
  EXPECT_EQ(DecodeNcclVersion(2804), (NcclVersion{2, 8, 4}));    // Last of the old one.
  EXPECT_EQ(DecodeNcclVersion(30001), (NcclVersion{3, 0, 1}));
  EXPECT_EQ(DecodeNcclVersion(1605), (NcclVersion{1, 6, 5}));
  EXPECT_EQ(DecodeNcclVersion(0), (NcclVersion{0, 0, 0}));
  EXPECT_EQ(DecodeNcclVersion(-5), (NcclVersion{0, 0, 0}));
}

class RealNcclLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {kNccl, kNccl218, kNcclNoSplit}) {
      StatusOr<FakeLibrary> lib = FakeLibrary::Open(path);
      ASSERT_TRUE(lib.ok()) << lib.status();
      auto* reset = CUHAL_FAKE_FN(*lib, cuhal_testnccl_Reset);
      ASSERT_NE(reset, nullptr);
      reset();
      libs_.push_back(std::move(lib).value());
    }
  }
  const FakeLibrary& nccl() const { return libs_[0]; }
  const FakeLibrary& nccl_218() const { return libs_[1]; }
  const FakeLibrary& nccl_no_split() const { return libs_[2]; }

  std::vector<FakeLibrary> libs_;
};

TEST_F(RealNcclLoaderTest, ResolvesEveryEntry) {
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = kNccl});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const NcclApi& api = (*loaded)->api();
  EXPECT_EQ((*loaded)->version(), 22809);
  EXPECT_EQ(CountMissingRequired(api), 0);
  EXPECT_THAT((*loaded)->missing_optional(), IsEmpty());
  EXPECT_EQ((*loaded)->library_path(), kNccl);
  EXPECT_EQ(CUHAL_FAKE_FN(nccl(), cuhal_testnccl_VersionCalls)(), 1);

  EXPECT_EQ(AsVoid(api.ncclAllReduce), nccl().Symbol("ncclAllReduce"));
  EXPECT_EQ(AsVoid(api.ncclAlltoAll), nccl().Symbol("ncclAlltoAll"));
  int version = 0;
  ASSERT_EQ(api.ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, 22809);
  EXPECT_EQ(api.ncclAllReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, nullptr, nullptr),
            ncclInvalidUsage);
}

TEST_F(RealNcclLoaderTest, OtherMajorVersionIsFailedPreconditionNamingBoth) {
  CUHAL_FAKE_FN(nccl(), cuhal_testnccl_SetVersion)(30001);
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = kNccl});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kFailedPrecondition) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr("NCCL version 3.0.1 (30001)"));
  EXPECT_THAT(loaded.status().message(),
              HasSubstr(StrCat("nccl.h ", NCCL_MAJOR, ".", NCCL_MINOR, ".", NCCL_PATCH,
                               " (major ", kNcclMajorVersion, ")")));

  // An NCCL 1.x library (old encoding) is refused the same way.
  CUHAL_FAKE_FN(nccl(), cuhal_testnccl_SetVersion)(1605);
  StatusOr<std::unique_ptr<RealNccl>> old = RealNccl::Load({.library_path = kNccl});
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(old.status().message(), HasSubstr("NCCL version 1.6.5 (1605)"));
}

TEST_F(RealNcclLoaderTest, OldVersionEncodingOfTheSameMajorIsAccepted) {
  CUHAL_FAKE_FN(nccl_218(), cuhal_testnccl_SetVersion)(2804);
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = kNccl218});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->version(), 2804);
}

TEST_F(RealNcclLoaderTest, VersionIsCheckedBeforeAnyOtherEntry) {
  // This library also lacks a required entry; the version mismatch must be what is reported.
  CUHAL_FAKE_FN(nccl_no_split(), cuhal_testnccl_SetVersion)(30001);
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = kNcclNoSplit});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kFailedPrecondition) << loaded.status();
}

TEST_F(RealNcclLoaderTest, MissingRequiredEntryIsUnavailableNamingIt) {
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = kNcclNoSplit});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnavailable) << loaded.status();
  EXPECT_THAT(loaded.status().message(),
              HasSubstr(StrCat("libnccl.so.2 (", nccl_no_split().library().loaded_path(),
                               "): required entry point ncclCommSplit not found")));
}

TEST_F(RealNcclLoaderTest, MissingOptionalEntriesAreNullAndListed) {
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = kNccl218});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const NcclApi& api = (*loaded)->api();
  EXPECT_EQ((*loaded)->version(), 21805);
  EXPECT_EQ(api.ncclAlltoAll, nullptr);
  EXPECT_EQ(api.ncclGather, nullptr);
  EXPECT_EQ(api.ncclScatter, nullptr);
  EXPECT_NE(api.ncclAllGather, nullptr);
  EXPECT_THAT((*loaded)->missing_optional(),
              ElementsAre("ncclAlltoAll", "ncclGather", "ncclScatter"));
}

TEST_F(RealNcclLoaderTest, LibraryWithoutGetVersionIsUnavailable) {
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = kNcclNoVersion});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("required entry point ncclGetVersion not found"));
}

TEST_F(RealNcclLoaderTest, FailingGetVersionIsUnavailable) {
  CUHAL_FAKE_FN(nccl(), cuhal_testnccl_SetVersionResult)(ncclSystemError);
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = kNccl});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(loaded.status().message(), HasSubstr("ncclGetVersion failed: ncclSystemError"));
}

TEST_F(RealNcclLoaderTest, NonexistentPathIsUnavailableNamingPathAndDlerror) {
  const std::string path = "/nonexistent/cuhal/libnccl.so.2";
  (void)dlerror();
  ASSERT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr);
  const std::string dl_error = dlerror();

  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load({.library_path = path});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(loaded.status().message(), HasSubstr(path));
  EXPECT_THAT(loaded.status().message(), HasSubstr(dl_error));
}

TEST_F(RealNcclLoaderTest, EnvironmentVariableChoosesTheLibraryWhenNoPathIsGiven) {
  {
    ScopedEnv env(kLibncclPathEnv, std::string(kNccl218));
    StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ((*loaded)->library_path(), kNccl218);
    EXPECT_EQ((*loaded)->version(), 21805);
  }
  {
    ScopedEnv env(kLibncclPathEnv, std::string("/nonexistent/from-env/libnccl.so.2"));
    StatusOr<std::unique_ptr<RealNccl>> from_env = RealNccl::Load();
    ASSERT_FALSE(from_env.ok());
    EXPECT_THAT(from_env.status().message(), HasSubstr("/nonexistent/from-env/libnccl.so.2"));
    StatusOr<std::unique_ptr<RealNccl>> explicit_path = RealNccl::Load({.library_path = kNccl});
    ASSERT_TRUE(explicit_path.ok()) << explicit_path.status();
  }
  EXPECT_STREQ(kDefaultLibncclName, "libnccl.so.2");
  EXPECT_STREQ(kLibncclPathEnv, "CUHAL_LIBNCCL_PATH");
}

}  // namespace
}  // namespace cuhal
