// Copyright 2026 The cuhal Authors.
// Conformance: cuGetProcAddress (the _v2 resolver cuda.h names cuGetProcAddress) and its
// symbolStatus answers. Measured on the GPU machine (H200, driver 580.159.04, CUDA 13.0) with
// tests/fakecuda_dropin/probe_program.cc; see probe_expected.txt. Expectations not measured there
// are marked UNMEASURED.
#include <gtest/gtest.h>

#include <cstring>

#include "core/symbols/cuda_api.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

class ProcAddressTest : public BackendTest {
 protected:
  int DriverVersion() {
    int version = 0;
    EXPECT_EQ(api().cuDriverGetVersion(&version), CUDA_SUCCESS);
    return version;
  }
};

TEST_P(ProcAddressTest, EveryTableEntryResolvesAtTheHeadersVersion) {
  for (const SymbolInfo& symbol : CudaSymbols()) {
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    EXPECT_EQ(api().cuGetProcAddress(symbol.name, &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                                     &status),
              CUDA_SUCCESS)
        << symbol.name;
    EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS) << symbol.name;
    EXPECT_NE(pfn, nullptr) << symbol.name;
  }
}

TEST_P(ProcAddressTest, ResolvedEntryPointsWork) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  ASSERT_EQ(api().cuGetProcAddress("cuDriverGetVersion", &pfn, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  decltype(&::cuDriverGetVersion) get_version = nullptr;
  std::memcpy(&get_version, &pfn, sizeof(pfn));
  int version = 0;
  ASSERT_EQ(get_version(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, DriverVersion());
  // symbolStatus is optional.
  EXPECT_EQ(api().cuGetProcAddress("cuInit", &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                                   nullptr),
            CUDA_SUCCESS);
  EXPECT_NE(pfn, nullptr);
}

TEST_P(ProcAddressTest, UnknownSymbol) {
  void* pfn = reinterpret_cast<void*>(1);
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  EXPECT_EQ(api().cuGetProcAddress("cuNoSuchFunction", &pfn, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS) << "measured: success, with the answer in symbolStatus";
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(pfn, nullptr);
  // Versioned names are not symbols: the resolver wants the base name.
  EXPECT_EQ(api().cuGetProcAddress("cuMemAlloc_v2", &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                                   &status),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

TEST_P(ProcAddressTest, TooOldAVersion) {
  void* pfn = reinterpret_cast<void*>(1);
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  // Stream-ordered allocation arrived in CUDA 11.2.
  EXPECT_EQ(api().cuGetProcAddress("cuMemAllocAsync", &pfn, 11010, CU_GET_PROC_ADDRESS_DEFAULT,
                                   &status),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(pfn, nullptr);
  EXPECT_EQ(api().cuGetProcAddress("cuMemAllocAsync", &pfn, 11020, CU_GET_PROC_ADDRESS_DEFAULT,
                                   &status),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_NE(pfn, nullptr);
}

TEST_P(ProcAddressTest, ArgumentErrors) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (IsFake()) {
    // Measured: the real driver crashes (SIGSEGV) on a NULL symbol or pfn; the fake answers.
    EXPECT_EQ(api().cuGetProcAddress(nullptr, &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                                     &status),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(api().cuGetProcAddress("cuInit", nullptr, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                                     &status),
              CUDA_ERROR_INVALID_VALUE);
  }
  // Newer than the driver (cuda.h: "If the specified CUDA version is greater than the driver
  // version, the API will return CUDA_ERROR_INVALID_VALUE").
  EXPECT_EQ(api().cuGetProcAddress("cuInit", &pfn, DriverVersion() + 1000,
                                   CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGetProcAddress("cuInit", &pfn, CUDA_VERSION, 4, &status),
            CUDA_ERROR_INVALID_VALUE)
      << "unknown flags";
}

TEST_P(ProcAddressTest, OlderAbisOfCtxCreate) {
  // Measured: requests below cuCtxCreate_v4's 12.5 get the older variants, not a refusal.
  void* v4 = nullptr;
  void* v3 = nullptr;
  void* v2 = nullptr;
  CUdriverProcAddressQueryResult status{};
  ASSERT_EQ(api().cuGetProcAddress("cuCtxCreate", &v4, 12050, 0, &status), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGetProcAddress("cuCtxCreate", &v3, 12040, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  ASSERT_EQ(api().cuGetProcAddress("cuCtxCreate", &v2, 3020, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_NE(v3, v4);
  EXPECT_NE(v2, v3);
  // cuCtxCreate_v2(pctx, flags, dev) creates a context like the current one does.
  using V2 = CUresult (*)(CUcontext*, unsigned int, CUdevice);
  V2 create = nullptr;
  std::memcpy(&create, &v2, sizeof(v2));
  CUcontext ctx = nullptr;
  ASSERT_EQ(create(&ctx, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxDestroy(ctx), CUDA_SUCCESS);
}

TEST_P(ProcAddressTest, PerThreadDefaultStreamVariants) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  void* legacy = nullptr;
  void* per_thread = nullptr;
  CUdriverProcAddressQueryResult status{};
  ASSERT_EQ(api().cuGetProcAddress("cuStreamSynchronize", &legacy, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuGetProcAddress("cuStreamSynchronize", &per_thread, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  ASSERT_NE(per_thread, nullptr);
  EXPECT_NE(per_thread, legacy) << "a distinct per-thread variant";
  decltype(&::cuStreamSynchronize) sync = nullptr;
  std::memcpy(&sync, &per_thread, sizeof(per_thread));
  EXPECT_EQ(sync(nullptr), CUDA_SUCCESS);
  // Entries that take no stream have one variant for both modes.
  void* init_legacy = nullptr;
  void* init_per_thread = nullptr;
  ASSERT_EQ(api().cuGetProcAddress("cuMemAlloc", &init_legacy, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuGetProcAddress("cuMemAlloc", &init_per_thread, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
            CUDA_SUCCESS);
  EXPECT_EQ(init_legacy, init_per_thread);
}

CUHAL_INSTANTIATE_BACKEND_TEST(ProcAddressTest);

}  // namespace
}  // namespace cuhal::testing
