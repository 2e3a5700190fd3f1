// Copyright 2026 The cuhal Authors.
// Conformance: cuGetProcAddress (the _v2 resolver cuda.h names cuGetProcAddress) and its
// symbolStatus answers. Measured on the GPU machine (H200, driver 580.159.04, CUDA 13.0) with
// tests/fakecuda_dropin/probe_program.cc; see probe_expected.txt. Expectations not measured there
// are marked UNMEASURED.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/symbols/cuda_api.h"
#include "tests/support/backend.h"

// The per-thread variant of cuStreamGetCtx_v2 (cuda.h declares it only under
// CUDA_API_PER_THREAD_DEFAULT_STREAM); fakecuda's, for the fake-only identity checks.
extern "C" decltype(::cuStreamGetCtx_v2) cuStreamGetCtx_v2_ptsz;
extern "C" decltype(::cuStreamGetCtx) cuStreamGetCtx_ptsz;

namespace cuhal::testing {
namespace {

template <typename Fn>
Fn As(void* pfn) {
  Fn fn = nullptr;
  static_assert(sizeof(fn) == sizeof(pfn));
  std::memcpy(&fn, &pfn, sizeof(pfn));
  return fn;
}

template <typename Fn>
void* AsVoid(Fn fn) {
  void* pfn = nullptr;
  static_assert(sizeof(fn) == sizeof(pfn));
  std::memcpy(&pfn, &fn, sizeof(pfn));
  return pfn;
}

// cuGetProcAddress through api(), which must succeed; the test fails (and null is returned)
// otherwise.
void* ResolveOrFail(const CudaApi& api, const char* name, int version,
                    cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  EXPECT_EQ(api.cuGetProcAddress(name, &pfn, version, flags, &status), CUDA_SUCCESS)
      << name << " at " << version;
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS) << name << " at " << version;
  EXPECT_NE(pfn, nullptr) << name << " at " << version;
  return pfn;
}

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

// Newer ABIs under the plain names. Measured on driver 580.159.04 (CUDA 13.0): at 13000
// "cuCtxSynchronize" resolves to cuCtxSynchronize_v2(CUcontext) and "cuCtxGetDevice" to
// cuCtxGetDevice_v2(CUdevice*, CUcontext) (13.0), and "cuStreamGetCtx" to cuStreamGetCtx_v2(
// CUstream, CUcontext*, CUgreenCtx*) (12.5), although cuda.h 13.0 declares the older forms under
// the plain names. Each is called here through the type of the form resolved. Which form each
// version gets, and the calls' answers, were measured (H200, driver 580.159.04, ci/gpu-nightly
// 2026-12-03).
TEST_P(ProcAddressTest, CtxSynchronizeIsTheV2FormFrom13000) {
  ScopedPrimaryContext primary(api());
  ASSERT_EQ(primary.result(), CUDA_SUCCESS);
  void* v2 = ResolveOrFail(api(), "cuCtxSynchronize", 13000);
  void* v1 = ResolveOrFail(api(), "cuCtxSynchronize", 12000);
  ASSERT_NE(v2, nullptr);
  ASSERT_NE(v1, nullptr);
  EXPECT_NE(v1, v2);
  EXPECT_EQ(ResolveOrFail(api(), "cuCtxSynchronize", 12090), v1);
  auto sync_v1 = As<decltype(&::cuCtxSynchronize)>(v1);
  auto sync_v2 = As<decltype(&::cuCtxSynchronize_v2)>(v2);
  EXPECT_EQ(sync_v1(), CUDA_SUCCESS);
  EXPECT_EQ(sync_v2(nullptr), CUDA_SUCCESS) << "NULL: the current context";
  EXPECT_EQ(sync_v2(primary.get()), CUDA_SUCCESS);

  // A context that is not current: its work is waited for all the same.
  CUcontext other = nullptr;
  ASSERT_EQ(CreateContext(api(), &other, 0, 0), CUDA_SUCCESS);  // pushed
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  OrderLog log;
  ASSERT_EQ(LaunchAppend(api(), stream, &log, 1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(sync_v2(other), CUDA_SUCCESS);
  EXPECT_EQ(log.Snapshot(), std::vector<int>{1});
  ASSERT_EQ(api().cuCtxPushCurrent(other), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxDestroy(other), CUDA_SUCCESS);  // pops it
}

TEST_P(ProcAddressTest, CtxGetDeviceIsTheV2FormFrom13000) {
  ScopedPrimaryContext primary(api());
  ASSERT_EQ(primary.result(), CUDA_SUCCESS);
  void* v2 = ResolveOrFail(api(), "cuCtxGetDevice", 13000);
  void* v1 = ResolveOrFail(api(), "cuCtxGetDevice", 12000);
  ASSERT_NE(v2, nullptr);
  ASSERT_NE(v1, nullptr);
  EXPECT_NE(v1, v2);
  auto get_v1 = As<decltype(&::cuCtxGetDevice)>(v1);
  auto get_v2 = As<decltype(&::cuCtxGetDevice_v2)>(v2);
  CUdevice device = -1;
  EXPECT_EQ(get_v1(&device), CUDA_SUCCESS);
  EXPECT_EQ(device, 0);
  device = -1;
  EXPECT_EQ(get_v2(&device, nullptr), CUDA_SUCCESS) << "NULL: the current context";
  EXPECT_EQ(device, 0);
  device = -1;
  EXPECT_EQ(get_v2(&device, primary.get()), CUDA_SUCCESS);
  EXPECT_EQ(device, 0);
}

TEST_P(ProcAddressTest, StreamGetCtxIsTheV2FormFrom12050) {
  ScopedPrimaryContext primary(api());
  ASSERT_EQ(primary.result(), CUDA_SUCCESS);
  void* v2 = ResolveOrFail(api(), "cuStreamGetCtx", 13000);
  void* v1 = ResolveOrFail(api(), "cuStreamGetCtx", 12000);
  ASSERT_NE(v2, nullptr);
  ASSERT_NE(v1, nullptr);
  EXPECT_NE(v1, v2);
  EXPECT_EQ(ResolveOrFail(api(), "cuStreamGetCtx", 12050), v2);
  EXPECT_EQ(ResolveOrFail(api(), "cuStreamGetCtx", 12040), v1);
  auto get_v1 = As<decltype(&::cuStreamGetCtx)>(v1);
  auto get_v2 = As<decltype(&::cuStreamGetCtx_v2)>(v2);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  EXPECT_EQ(get_v1(stream, &ctx), CUDA_SUCCESS);
  EXPECT_EQ(ctx, primary.get());
  ctx = nullptr;
  alignas(8) static char green_sentinel;
  CUgreenCtx green = reinterpret_cast<CUgreenCtx>(&green_sentinel);
  EXPECT_EQ(get_v2(stream, &ctx, &green), CUDA_SUCCESS);
  EXPECT_EQ(ctx, primary.get());
  EXPECT_EQ(green, nullptr) << "a stream of a regular context has no green context";
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(ProcAddressTest);

// The newer ABIs' corners, on the fake only: which fakecuda functions are handed out, the
// per-thread variant, argument errors, and the fault accounting (under the plain names). Two
// devices, so that an explicit context of another device than the current one is seen to be used.
// UNMEASURED on real: the argument errors below follow cuda.h's documentation and the plain
// forms' answers; the per-thread answer (cuStreamGetCtx_v2_ptsz) follows cuda.h's mapping.
class NewerAbiFakeTest : public BackendTest {
 protected:
  BackendOptions Options() const override {
    BackendOptions options;
    options.device_count = 2;
    return options;
  }
};

TEST_P(NewerAbiFakeTest, HandsOutFakecudasFunctions) {
  EXPECT_EQ(ResolveOrFail(api(), "cuCtxSynchronize", 13000), AsVoid(&::cuCtxSynchronize_v2));
  EXPECT_EQ(ResolveOrFail(api(), "cuCtxSynchronize", 12090), AsVoid(&::cuCtxSynchronize));
  EXPECT_EQ(ResolveOrFail(api(), "cuCtxGetDevice", 13000), AsVoid(&::cuCtxGetDevice_v2));
  EXPECT_EQ(ResolveOrFail(api(), "cuCtxGetDevice", 12090), AsVoid(&::cuCtxGetDevice));
  EXPECT_EQ(ResolveOrFail(api(), "cuStreamGetCtx", 12050), AsVoid(&::cuStreamGetCtx_v2));
  EXPECT_EQ(ResolveOrFail(api(), "cuStreamGetCtx", 12040), AsVoid(&::cuStreamGetCtx));
  // The per-thread-default-stream flag picks the per-thread variant of whichever form applies.
  EXPECT_EQ(ResolveOrFail(api(), "cuStreamGetCtx", 13000,
                          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
            AsVoid(&::cuStreamGetCtx_v2_ptsz));
  EXPECT_EQ(ResolveOrFail(api(), "cuStreamGetCtx", 12000,
                          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
            AsVoid(&::cuStreamGetCtx_ptsz));
  EXPECT_EQ(ResolveOrFail(api(), "cuCtxSynchronize", 13000,
                          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
            AsVoid(&::cuCtxSynchronize_v2));
  // The entries' first versions are unchanged.
  void* pfn = reinterpret_cast<void*>(1);
  CUdriverProcAddressQueryResult status{};
  EXPECT_EQ(api().cuGetProcAddress("cuStreamGetCtx", &pfn, 9010, CU_GET_PROC_ADDRESS_DEFAULT,
                                   &status),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(pfn, nullptr);
}

TEST_P(NewerAbiFakeTest, NullContextWithoutACurrentOneIsInvalidContext) {
  auto sync_v2 = As<decltype(&::cuCtxSynchronize_v2)>(ResolveOrFail(api(), "cuCtxSynchronize",
                                                                    13000));
  auto get_v2 = As<decltype(&::cuCtxGetDevice_v2)>(ResolveOrFail(api(), "cuCtxGetDevice",
                                                                 13000));
  auto stream_v2 = As<decltype(&::cuStreamGetCtx_v2)>(ResolveOrFail(api(), "cuStreamGetCtx",
                                                                   13000));
  ASSERT_NE(sync_v2, nullptr);
  ASSERT_NE(get_v2, nullptr);
  ASSERT_NE(stream_v2, nullptr);
  CUdevice device = -1;
  CUcontext ctx = nullptr;
  CUgreenCtx green = nullptr;
  EXPECT_EQ(sync_v2(nullptr), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(get_v2(&device, nullptr), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(device, -1);
  EXPECT_EQ(stream_v2(nullptr, &ctx, &green), CUDA_ERROR_INVALID_CONTEXT);
  // The plain forms answer the same.
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(api().cuCtxGetDevice(&device), CUDA_ERROR_INVALID_CONTEXT);
}

TEST_P(NewerAbiFakeTest, ExplicitContextsAreUsedAndCheckedDirectly) {
  auto sync_v2 = As<decltype(&::cuCtxSynchronize_v2)>(ResolveOrFail(api(), "cuCtxSynchronize",
                                                                    13000));
  auto get_v2 = As<decltype(&::cuCtxGetDevice_v2)>(ResolveOrFail(api(), "cuCtxGetDevice",
                                                                 13000));
  ASSERT_NE(sync_v2, nullptr);
  ASSERT_NE(get_v2, nullptr);
  ScopedPrimaryContext primary(api(), 0);
  ASSERT_EQ(primary.result(), CUDA_SUCCESS);
  CUcontext other = nullptr;
  ASSERT_EQ(CreateContext(api(), &other, 0, 1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
  CUdevice device = -1;
  EXPECT_EQ(get_v2(&device, other), CUDA_SUCCESS);
  EXPECT_EQ(device, 1) << "the explicit context's device, not the current one's";
  EXPECT_EQ(get_v2(&device, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(get_v2(nullptr, other), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(sync_v2(other), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxDestroy(other), CUDA_SUCCESS);
  // A destroyed context: what the plain forms answer for a bad context.
  device = -1;
  EXPECT_EQ(get_v2(&device, other), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(device, -1);
  EXPECT_EQ(sync_v2(other), CUDA_ERROR_INVALID_CONTEXT);
}

TEST_P(NewerAbiFakeTest, StreamGetCtxV2Outputs) {
  auto stream_v2 = As<decltype(&::cuStreamGetCtx_v2)>(ResolveOrFail(api(), "cuStreamGetCtx",
                                                                   13000));
  auto stream_v2_ptsz = As<decltype(&::cuStreamGetCtx_v2)>(ResolveOrFail(
      api(), "cuStreamGetCtx", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  ASSERT_NE(stream_v2, nullptr);
  ASSERT_NE(stream_v2_ptsz, nullptr);
  ScopedPrimaryContext primary(api(), 1);
  ASSERT_EQ(primary.result(), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_DEFAULT), CUDA_SUCCESS);
  EXPECT_EQ(stream_v2(stream, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  alignas(8) static char green_sentinel;
  CUgreenCtx green = reinterpret_cast<CUgreenCtx>(&green_sentinel);
  EXPECT_EQ(stream_v2(stream, nullptr, &green), CUDA_SUCCESS) << "either output may be NULL";
  EXPECT_EQ(green, nullptr);
  CUcontext ctx = nullptr;
  EXPECT_EQ(stream_v2(stream, &ctx, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(ctx, primary.get());
  // The special handles name the current context's streams, in both variants.
  for (CUstream special : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
    ctx = nullptr;
    EXPECT_EQ(stream_v2(special, &ctx, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(ctx, primary.get());
    ctx = nullptr;
    EXPECT_EQ(stream_v2_ptsz(special, &ctx, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(ctx, primary.get());
  }
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(stream_v2(stream, &ctx, nullptr), CUDA_ERROR_INVALID_HANDLE) << "destroyed stream";
}

TEST_P(NewerAbiFakeTest, CountAndFailUnderThePlainNames) {
  ScopedPrimaryContext primary(api());
  ASSERT_EQ(primary.result(), CUDA_SUCCESS);
  auto sync_v2 = As<decltype(&::cuCtxSynchronize_v2)>(ResolveOrFail(api(), "cuCtxSynchronize",
                                                                    13000));
  auto get_v2 = As<decltype(&::cuCtxGetDevice_v2)>(ResolveOrFail(api(), "cuCtxGetDevice",
                                                                 13000));
  auto stream_v2 = As<decltype(&::cuStreamGetCtx_v2)>(ResolveOrFail(api(), "cuStreamGetCtx",
                                                                   13000));
  ASSERT_NE(sync_v2, nullptr);
  ASSERT_NE(get_v2, nullptr);
  ASSERT_NE(stream_v2, nullptr);
  fakecuda::FaultInjector& faults = fake().faults();
  faults.ResetCounters();
  faults.EnableCallLog(true);
  EXPECT_EQ(sync_v2(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(faults.CallLog(), std::vector<std::string>{"cuCtxSynchronize"});
  faults.EnableCallLog(false);

  std::string error;
  ASSERT_TRUE(faults.AddRulesFromSpec(
      "cuCtxGetDevice:nth:1:CUDA_ERROR_UNKNOWN;cuStreamGetCtx:nth:1:CUDA_ERROR_LAUNCH_FAILED",
      &error))
      << error;
  CUdevice device = -1;
  EXPECT_EQ(get_v2(&device, nullptr), CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(device, -1) << "a failed call changes nothing";
  EXPECT_EQ(get_v2(&device, nullptr), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  EXPECT_EQ(stream_v2(nullptr, &ctx, nullptr), CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(ctx, nullptr);
  faults.ClearRules();
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(NewerAbiFakeTest);

}  // namespace
}  // namespace cuhal::testing
