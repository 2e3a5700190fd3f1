// Copyright 2026 The cuhal Authors.
// RealCuda against stand-in driver libraries (fake_libcuda.cc): versioned resolution through
// cuGetProcAddress, required and optional entries, the driver-version check, the legacy resolver,
// library paths and the environment override.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/symbols/cuda_api.h"
#include "core/symbols/real_loader.h"
#include "tests/symbols/fake_lib_control.h"

namespace cuhal {
namespace {

using ::cuhal::testing::FakeLibrary;
using ::cuhal::testing::ScopedEnv;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Stand-ins: a CUDA 13 driver (both resolvers), a CUDA 11.8 driver (legacy resolver only), and a
// library that exports no resolver at all.
constexpr char kDriver[] = CUHAL_TEST_LIBCUDA;
constexpr char kLegacyDriver[] = CUHAL_TEST_LIBCUDA_LEGACY;
constexpr char kNoResolver[] = CUHAL_TEST_LIBCUDA_NO_RESOLVER;

// "13.0 (13000)" for 13000, as the loader writes versions.
std::string VersionText(int version) {
  return StrCat(version / 1000, ".", (version % 1000) / 10, " (", version, ")");
}

template <typename Fp>
void* AsVoid(Fp fn) {
  void* address = nullptr;
  std::memcpy(&address, &fn, sizeof(address));
  return address;
}

class RealCudaLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {kDriver, kLegacyDriver}) {
      StatusOr<FakeLibrary> lib = FakeLibrary::Open(path);
      ASSERT_TRUE(lib.ok()) << lib.status();
      auto* reset = CUHAL_FAKE_FN(*lib, cuhal_testcuda_Reset);
      ASSERT_NE(reset, nullptr);
      reset();
      libs_.push_back(std::move(lib).value());
    }
  }
  const FakeLibrary& driver() const { return libs_[0]; }
  const FakeLibrary& legacy_driver() const { return libs_[1]; }

  void Hide(const FakeLibrary& lib, const char* name) {
    CUHAL_FAKE_FN(lib, cuhal_testcuda_Hide)(name);
  }

  std::vector<FakeLibrary> libs_;
};

TEST_F(RealCudaLoaderTest, ResolvesEveryEntryAtThePinnedVersionWithoutCallingCuInit) {
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  const CudaApi& api = (*cuda)->api();
  EXPECT_EQ(CountMissingRequired(api), 0);
  EXPECT_THAT((*cuda)->missing_optional(), IsEmpty());
  EXPECT_EQ((*cuda)->library_path(), kDriver);
  EXPECT_EQ((*cuda)->driver_version(), kCudaApiVersion);
  EXPECT_EQ((*cuda)->api_version(), kCudaApiVersion);
  EXPECT_FALSE((*cuda)->used_legacy_get_proc_address());

  // Every request went through cuGetProcAddress_v2, at the pinned version, in default mode.
  EXPECT_GE(CUHAL_FAKE_FN(driver(), cuhal_testcuda_V2Calls)(),
            static_cast<int>(CudaSymbols().size()));
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_LegacyCalls)(), 0);
  // (cuCtxSynchronize, cuCtxGetDevice and cuStreamGetCtx are asked for at 12000: see
  // EntriesWithANewerAbiAreBoundToTheDeclaredOne.)
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_MinRequestedVersion)(), 12000);
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_MaxRequestedVersion)(), kCudaApiVersion);
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_RequestedFlags)(),
            static_cast<unsigned long long>(CU_GET_PROC_ADDRESS_DEFAULT));  // NOLINT
  // cuGetProcAddress works before cuInit; loading must not initialize the driver.
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_InitCalls)(), 0);
}

TEST_F(RealCudaLoaderTest, VersionedEntryResolvesToTheV2Variant) {
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  const CudaApi& api = (*cuda)->api();

  // The library exports both cuMemAlloc (CUDA 3.1, 32-bit) and cuMemAlloc_v2; the table must
  // hold the latter, which a plain dlsym("cuMemAlloc") would not give.
  void* v2 = driver().Symbol("cuMemAlloc_v2");
  void* v1 = driver().Symbol("cuMemAlloc");
  ASSERT_NE(v2, nullptr);
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(AsVoid(api.cuMemAlloc), v2);
  EXPECT_NE(AsVoid(api.cuMemAlloc), v1);
  CUdeviceptr ptr = 0;
  ASSERT_EQ(api.cuMemAlloc(&ptr, 4096), CUDA_SUCCESS);
  EXPECT_EQ(ptr, 0x7e5700000000ULL + 4096);  // The _v2 variant's 64-bit marker.

  // The resolver entry itself is the _v2 one.
  EXPECT_EQ(AsVoid(api.cuGetProcAddress), driver().Symbol("cuGetProcAddress_v2"));
}

// The real driver 580 answers "cuCtxSynchronize" and "cuCtxGetDevice" at 13000 with their 13.0
// _v2 forms (an extra CUcontext parameter) and "cuStreamGetCtx" with its 12.5 _v2 form (an extra
// CUgreenCtx*), while cuda.h 13.0 declares the old forms under the plain names. The table must
// hold the declared forms: calling a _v2 through the old type passes garbage (measured: crashes,
// or CUDA_ERROR_CONTEXT_IS_DESTROYED from cuCtxSynchronize).
TEST_F(RealCudaLoaderTest, EntriesWithANewerAbiAreBoundToTheDeclaredOne) {
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  const CudaApi& api = (*cuda)->api();
  EXPECT_EQ(AsVoid(api.cuCtxSynchronize), driver().Symbol("cuCtxSynchronize"));
  EXPECT_EQ(AsVoid(api.cuCtxGetDevice), driver().Symbol("cuCtxGetDevice"));
  EXPECT_EQ(AsVoid(api.cuStreamGetCtx), driver().Symbol("cuStreamGetCtx"));
  EXPECT_EQ(api.cuCtxSynchronize(), CUDA_SUCCESS);
  CUdevice device = -1;
  EXPECT_EQ(api.cuCtxGetDevice(&device), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  EXPECT_EQ(api.cuStreamGetCtx(nullptr, &ctx), CUDA_SUCCESS);
}

TEST_F(RealCudaLoaderTest, EntriesAreCallable) {
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  const CudaApi& api = (*cuda)->api();

  int version = 0;
  ASSERT_EQ(api.cuDriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, kCudaApiVersion);
  ASSERT_EQ(api.cuInit(0), CUDA_SUCCESS);
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_InitCalls)(), 1);
  const char* name = nullptr;
  ASSERT_EQ(api.cuGetErrorName(CUDA_ERROR_NOT_SUPPORTED, &name), CUDA_SUCCESS);
  EXPECT_STREQ(name, "CUDA_ERROR_NOT_SUPPORTED");
  // Entries the stand-in does not model are typed stubs.
  CUstream stream = nullptr;
  EXPECT_EQ(api.cuStreamCreate(&stream, 0), CUDA_ERROR_NOT_SUPPORTED);
}

TEST_F(RealCudaLoaderTest, MissingRequiredEntryIsUnavailableNamingIt) {
  Hide(driver(), "cuStreamCreate");
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable) << cuda.status();
  StatusOr<FakeLibrary> probe = FakeLibrary::Open(kDriver);
  ASSERT_TRUE(probe.ok());
  EXPECT_THAT(cuda.status().message(),
              HasSubstr(StrCat("libcuda.so.1 (", probe->library().loaded_path(),
                               "): required entry point cuStreamCreate not found "
                               "(symbolStatus=CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)")));
  EXPECT_THAT(cuda.status().message(), Not(HasSubstr("more required")));
}

TEST_F(RealCudaLoaderTest, AllMissingRequiredEntriesAreNamed) {
  Hide(driver(), "cuMemPoolCreate");
  Hide(driver(), "cuStreamCreate");
  Hide(driver(), "cuMemAlloc");
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable);
  // The first in list order is described; the others are listed.
  EXPECT_THAT(cuda.status().message(),
              HasSubstr("required entry point cuStreamCreate not found (symbolStatus="));
  EXPECT_THAT(cuda.status().message(),
              HasSubstr("2 more required entry points missing: cuMemAlloc, cuMemPoolCreate"));
}

TEST_F(RealCudaLoaderTest, MissingOptionalEntriesAreNullAndListed) {
  // (The graph entries are required since the graph command target calls them.)
  Hide(driver(), "cuModuleGetGlobal");
  Hide(driver(), "cuStreamBeginCapture");
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  const CudaApi& api = (*cuda)->api();
  EXPECT_EQ(api.cuModuleGetGlobal, nullptr);
  EXPECT_EQ(api.cuStreamBeginCapture, nullptr);
  EXPECT_NE(api.cuModuleGetFunction, nullptr);
  EXPECT_NE(api.cuStreamEndCapture, nullptr);
  EXPECT_THAT((*cuda)->missing_optional(),
              ElementsAre("cuStreamBeginCapture", "cuModuleGetGlobal"));
}

TEST_F(RealCudaLoaderTest, EntryNewerThanTheApiVersionIsVersionNotSufficient) {
  // cuMemAllocFromPoolAsync (required) arrived in CUDA 11.2.
  StatusOr<std::unique_ptr<RealCuda>> cuda =
      RealCuda::Load({.library_path = kDriver, .api_version = 11000});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(cuda.status().message(),
              HasSubstr("required entry point cuMemAllocFromPoolAsync not found "
                        "(symbolStatus=CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)"));
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_MaxRequestedVersion)(), 11000);
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_MinRequestedVersion)(), 11000);
}

TEST_F(RealCudaLoaderTest, DriverOlderThanTheApiVersionIsFailedPrecondition) {
  const int old_driver = kCudaApiVersion - 200;  // e.g. 12.8 against a 13.0 cuda.h
  CUHAL_FAKE_FN(driver(), cuhal_testcuda_SetDriverVersion)(old_driver);
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kFailedPrecondition) << cuda.status();
  EXPECT_THAT(cuda.status().message(), HasSubstr(VersionText(old_driver)));
  EXPECT_THAT(cuda.status().message(), HasSubstr(VersionText(kCudaApiVersion)));

  // The same driver is fine for a table pinned at its own version.
  StatusOr<std::unique_ptr<RealCuda>> pinned =
      RealCuda::Load({.library_path = kDriver, .api_version = old_driver});
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ((*pinned)->driver_version(), old_driver);
}

TEST_F(RealCudaLoaderTest, ApiVersionOutOfRangeIsInvalidArgument) {
  for (int version : {kCudaApiVersion + 10, 999, 0, -1}) {
    StatusOr<std::unique_ptr<RealCuda>> cuda =
        RealCuda::Load({.library_path = kDriver, .api_version = version});
    ASSERT_FALSE(cuda.ok()) << version;
    EXPECT_EQ(cuda.status().code(), StatusCode::kInvalidArgument) << version;
  }
}

TEST_F(RealCudaLoaderTest, LegacyResolverIsUsedWhenV2IsAbsent) {
  // A CUDA 11.8 driver: only the 4-parameter cuGetProcAddress.
  ASSERT_EQ(legacy_driver().Symbol("cuGetProcAddress_v2"), nullptr);
  StatusOr<std::unique_ptr<RealCuda>> cuda =
      RealCuda::Load({.library_path = kLegacyDriver, .api_version = 11080});
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  const CudaApi& api = (*cuda)->api();
  EXPECT_TRUE((*cuda)->used_legacy_get_proc_address());
  EXPECT_EQ(CountMissingRequired(api), 0);
  EXPECT_GT(CUHAL_FAKE_FN(legacy_driver(), cuhal_testcuda_LegacyCalls)(), 0);
  EXPECT_EQ(CUHAL_FAKE_FN(legacy_driver(), cuhal_testcuda_MaxRequestedVersion)(), 11080);
  EXPECT_EQ(AsVoid(api.cuMemAlloc), legacy_driver().Symbol("cuMemAlloc_v2"));
  // The legacy resolver has a different signature, so it never lands in the _v2-typed slot.
  EXPECT_EQ(api.cuGetProcAddress, nullptr);
  EXPECT_THAT((*cuda)->missing_optional(), ElementsAre("cuGetProcAddress"));
}

TEST_F(RealCudaLoaderTest, LegacyResolverMissingRequiredEntryIsUnavailable) {
  Hide(legacy_driver(), "cuStreamSynchronize");
  StatusOr<std::unique_ptr<RealCuda>> cuda =
      RealCuda::Load({.library_path = kLegacyDriver, .api_version = 11080});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(cuda.status().message(),
              HasSubstr("required entry point cuStreamSynchronize not found (legacy cuGetProcAddress, "
                        "no symbolStatus: CUDA_ERROR_NOT_FOUND)"));
}

TEST_F(RealCudaLoaderTest, PrefersV2WhenBothResolversAreExported) {
  ASSERT_NE(driver().Symbol("cuGetProcAddress"), nullptr);
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_GT(CUHAL_FAKE_FN(driver(), cuhal_testcuda_V2Calls)(), 0);
  EXPECT_EQ(CUHAL_FAKE_FN(driver(), cuhal_testcuda_LegacyCalls)(), 0);
}

TEST_F(RealCudaLoaderTest, LibraryWithoutResolverIsUnavailable) {
  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kNoResolver});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(cuda.status().message(),
              HasSubstr("exports neither cuGetProcAddress_v2 nor cuGetProcAddress"));
}

TEST_F(RealCudaLoaderTest, NonexistentPathIsUnavailableNamingPathAndDlerror) {
  const std::string path = "/nonexistent/cuhal/libcuda.so.1";
  (void)dlerror();
  ASSERT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr);
  const std::string dl_error = dlerror();

  StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = path});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(cuda.status().message(), HasSubstr("libcuda.so.1"));
  EXPECT_THAT(cuda.status().message(), HasSubstr(path));
  EXPECT_THAT(cuda.status().message(), HasSubstr(dl_error));
}

TEST_F(RealCudaLoaderTest, EnvironmentVariableChoosesTheLibraryWhenNoPathIsGiven) {
  {
    ScopedEnv env(kLibcudaPathEnv, std::string(kDriver));
    StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load();
    ASSERT_TRUE(cuda.ok()) << cuda.status();
    EXPECT_EQ((*cuda)->library_path(), kDriver);
  }
  {
    ScopedEnv env(kLibcudaPathEnv, std::string("/nonexistent/from-env/libcuda.so.1"));
    StatusOr<std::unique_ptr<RealCuda>> from_env = RealCuda::Load();
    ASSERT_FALSE(from_env.ok());
    EXPECT_EQ(from_env.status().code(), StatusCode::kUnavailable);
    EXPECT_THAT(from_env.status().message(), HasSubstr("/nonexistent/from-env/libcuda.so.1"));
    // An explicit path wins over the variable.
    StatusOr<std::unique_ptr<RealCuda>> explicit_path = RealCuda::Load({.library_path = kDriver});
    ASSERT_TRUE(explicit_path.ok()) << explicit_path.status();
  }
}

TEST(ResolveLibraryPathTest, ExplicitThenEnvironmentThenDefault) {
  constexpr char kVar[] = "CUHAL_TEST_RESOLVE_LIBRARY_PATH";
  {
    ScopedEnv env(kVar, std::nullopt);
    EXPECT_EQ(ResolveLibraryPath("", kVar, "libdefault.so.1"), "libdefault.so.1");
    EXPECT_EQ(ResolveLibraryPath("/x/liby.so", kVar, "libdefault.so.1"), "/x/liby.so");
  }
  {
    ScopedEnv env(kVar, std::string(""));  // Set but empty counts as unset.
    EXPECT_EQ(ResolveLibraryPath("", kVar, "libdefault.so.1"), "libdefault.so.1");
  }
  {
    ScopedEnv env(kVar, std::string("/from/env.so"));
    EXPECT_EQ(ResolveLibraryPath("", kVar, "libdefault.so.1"), "/from/env.so");
    EXPECT_EQ(ResolveLibraryPath("/x/liby.so", kVar, "libdefault.so.1"), "/x/liby.so");
  }
  EXPECT_STREQ(kDefaultLibcudaName, "libcuda.so.1");
  EXPECT_STREQ(kLibcudaPathEnv, "CUHAL_LIBCUDA_PATH");
}

TEST_F(RealCudaLoaderTest, ConcurrentLoadsAgree) {
  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<RealCuda>> loaded(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      StatusOr<std::unique_ptr<RealCuda>> cuda = RealCuda::Load({.library_path = kDriver});
      if (cuda.ok()) {
        loaded[i] = std::move(cuda).value();
      } else {
        errors[i] = cuda.status().ToString();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_NE(loaded[i], nullptr) << errors[i];
    EXPECT_EQ(std::memcmp(&loaded[i]->api(), &loaded[0]->api(), sizeof(CudaApi)), 0);
  }
}

}  // namespace
}  // namespace cuhal
