// Copyright 2026 The cuhal Authors.
// The real binding against the installed libcuda.so.1 and libnccl.so.2 (default paths, or
// $CUHAL_LIBCUDA_PATH / $CUHAL_LIBNCCL_PATH). On a machine without them, or without a GPU, the
// tests are skipped with the reason; set CUHAL_REAL_REQUIRED=1 (the GPU nightly does) to make
// such a skip a failure instead.
//
// What is a skip and what is a failure:
//   skip     the library cannot be dlopened; it is the toolkit's link stub; the driver is older
//            than the cuda.h cuhal was built with (FAILED_PRECONDITION); cuInit reports
//            CUDA_ERROR_NO_DEVICE or CUDA_ERROR_STUB_LIBRARY; NCCL of another major version;
//   failure  the library loads but a required entry point is missing (a wrong line in
//            cuda_symbols.inc / nccl_symbols.inc), or any other cuInit error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/symbols/dynamic_library.h"
#include "core/symbols/real_loader.h"
#include "tests/support/backend.h"

namespace cuhal {
namespace {

// Skips the current test with `reason`, or fails it when CUHAL_REAL_REQUIRED is on (or invalid).
#define CUHAL_SKIP_REAL(reason)                                                      \
  do {                                                                               \
    std::string cuhal_unavailable_;                                                  \
    std::string cuhal_error_;                                                        \
    ::cuhal::testing::RealUnreachable((reason), &cuhal_unavailable_, &cuhal_error_); \
    if (!cuhal_error_.empty()) {                                                     \
      FAIL() << cuhal_error_;                                                        \
    } else {                                                                         \
      GTEST_SKIP() << cuhal_unavailable_;                                            \
    }                                                                                \
  } while (false)

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return "[" + out + "]";
}

std::string CuError(const CudaApi& api, CUresult result) {
  const char* name = nullptr;
  if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
    return StrCat("CUresult ", static_cast<int>(result));
  }
  return name;
}

// Reads the code of a table entry as an address, to compare with dlsym's answers.
template <typename Fp>
void* AsVoid(Fp fn) {
  void* address = nullptr;
  std::memcpy(&address, &fn, sizeof(address));
  return address;
}

class RealCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::RealRequired().ok()) << testing::RealRequired().status();
    const std::string path = ResolveLibraryPath("", kLibcudaPathEnv, kDefaultLibcudaName);
    StatusOr<DynamicLibrary> probe = DynamicLibrary::Open(path);
    if (!probe.ok()) {
      CUHAL_SKIP_REAL(StrCat("no CUDA driver: looked for ", path, " (set ", kLibcudaPathEnv,
                             " to choose another): ", probe.status().message()));
    }
    if (probe->loaded_path().find("/stubs/") != std::string::npos) {
      CUHAL_SKIP_REAL(
          StrCat(probe->loaded_path(), " is the CUDA toolkit's link stub, not a driver"));
    }
    StatusOr<std::unique_ptr<RealCuda>> loaded = RealCuda::Load();
    if (!loaded.ok() && loaded.status().code() == StatusCode::kFailedPrecondition) {
      CUHAL_SKIP_REAL(StrCat("the installed driver cannot serve cuhal's table: ",
                             loaded.status().message()));
    }
    ASSERT_TRUE(loaded.ok()) << "RealCuda::Load() on " << path << ": " << loaded.status();
    cuda_ = std::move(loaded).value();
    const CUresult init = cuda_->api().cuInit(0);
    if (init == CUDA_ERROR_NO_DEVICE || init == CUDA_ERROR_STUB_LIBRARY) {
      CUHAL_SKIP_REAL(StrCat(cuda_->loaded_path(), ": cuInit(0) = ", CuError(cuda_->api(), init)));
    }
    ASSERT_EQ(init, CUDA_SUCCESS) << "cuInit(0) = " << CuError(cuda_->api(), init);
  }

  const CudaApi& api() const { return cuda_->api(); }

  std::unique_ptr<RealCuda> cuda_;
};

TEST_F(RealCudaTest, ResolvesEveryRequiredEntryAndReportsTheDriver) {
  for (const SymbolInfo& symbol : CudaSymbols()) {
    void* entry = nullptr;
    std::memcpy(&entry, reinterpret_cast<const char*>(&api()) + symbol.offset, sizeof(entry));
    if (symbol.kind == SymbolKind::kRequired) {
      EXPECT_NE(entry, nullptr) << symbol.name;
    }
  }
  EXPECT_EQ(CountMissingRequired(api()), 0);

  int version = 0;
  ASSERT_EQ(api().cuDriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, cuda_->driver_version());
  EXPECT_GE(version, kCudaApiVersion);
  int devices = 0;
  ASSERT_EQ(api().cuDeviceGetCount(&devices), CUDA_SUCCESS);
  EXPECT_GE(devices, 1);

  const std::vector<std::string> missing = cuda_->missing_optional();
  std::cout << kDefaultLibcudaName << ": driver version " << version << " (" << version / 1000
            << "." << (version % 1000) / 10 << "), " << devices << " device(s), "
            << missing.size() << " optional entries missing: " << Join(missing) << " ["
            << cuda_->loaded_path() << "]\n";
}

TEST_F(RealCudaTest, VersionedEntriesAreTheCurrentVariants) {
  // Measured on the H200 (driver 580, CUDA 13.0): cuGetProcAddress_v2 hands back the same
  // addresses that the versioned exports have.
  StatusOr<DynamicLibrary> library = DynamicLibrary::Open(cuda_->library_path());
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ(AsVoid(api().cuMemAlloc), library->Symbol("cuMemAlloc_v2"));
  EXPECT_NE(AsVoid(api().cuMemAlloc), library->Symbol("cuMemAlloc"));
  EXPECT_EQ(AsVoid(api().cuCtxCreate), library->Symbol("cuCtxCreate_v4"));
  EXPECT_EQ(AsVoid(api().cuGetProcAddress), library->Symbol("cuGetProcAddress_v2"));
}

TEST_F(RealCudaTest, DeviceMemoryRoundTripThroughTheTable) {
  // 64-bit device pointers and size_t sizes: only the _v2 variants get this right.
  CUdevice device = 0;
  ASSERT_EQ(api().cuDeviceGet(&device, 0), CUDA_SUCCESS);
  CUcontext context = nullptr;
  ASSERT_EQ(api().cuDevicePrimaryCtxRetain(&context, device), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSetCurrent(context), CUDA_SUCCESS);

  constexpr size_t kBytes = size_t{1} << 20;
  CUdeviceptr buffer = 0;
  CUresult result = api().cuMemAlloc(&buffer, kBytes);
  EXPECT_EQ(result, CUDA_SUCCESS) << CuError(api(), result);
  if (result == CUDA_SUCCESS) {
    EXPECT_NE(buffer, CUdeviceptr{0});
    EXPECT_EQ(api().cuMemsetD8(buffer, 0xA5, kBytes), CUDA_SUCCESS);
    std::vector<unsigned char> host(kBytes, 0);
    EXPECT_EQ(api().cuMemcpyDtoH(host.data(), buffer, kBytes), CUDA_SUCCESS);
    EXPECT_EQ(host.front(), 0xA5);
    EXPECT_EQ(host.back(), 0xA5);
    EXPECT_EQ(api().cuMemFree(buffer), CUDA_SUCCESS);
  }
  EXPECT_EQ(api().cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuDevicePrimaryCtxRelease(device), CUDA_SUCCESS);
}

TEST(RealNcclTest, LoadsAndReportsTheVersion) {
  ASSERT_TRUE(testing::RealRequired().ok()) << testing::RealRequired().status();
  const std::string path = ResolveLibraryPath("", kLibncclPathEnv, kDefaultLibncclName);
  StatusOr<DynamicLibrary> probe = DynamicLibrary::Open(path);
  if (!probe.ok()) {
    CUHAL_SKIP_REAL(StrCat("no NCCL: looked for ", path, " (set ", kLibncclPathEnv,
                           " to choose another): ", probe.status().message()));
  }
  StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load();
  if (!loaded.ok() && loaded.status().code() == StatusCode::kFailedPrecondition) {
    CUHAL_SKIP_REAL(StrCat("the installed NCCL cannot serve cuhal's table: ",
                           loaded.status().message()));
  }
  ASSERT_TRUE(loaded.ok()) << "RealNccl::Load() on " << path << ": " << loaded.status();
  const RealNccl& nccl = **loaded;

  EXPECT_EQ(CountMissingRequired(nccl.api()), 0);
  const NcclVersion version = DecodeNcclVersion(nccl.version());
  EXPECT_EQ(version.major, kNcclMajorVersion);
  int again = 0;
  ASSERT_EQ(nccl.api().ncclGetVersion(&again), ncclSuccess);
  EXPECT_EQ(again, nccl.version());
  EXPECT_NE(nccl.api().ncclGetErrorString(ncclInvalidArgument), nullptr);

  const std::vector<std::string> missing = nccl.missing_optional();
  std::cout << kDefaultLibncclName << ": version " << nccl.version() << " (" << version.major
            << "." << version.minor << "." << version.patch << "), " << missing.size()
            << " optional entries missing: " << Join(missing) << " [" << nccl.loaded_path()
            << "]\n";
}

}  // namespace
}  // namespace cuhal
