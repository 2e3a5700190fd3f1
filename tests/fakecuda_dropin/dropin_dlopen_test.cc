// Copyright 2026 The cuhal Authors.
// The drop-in libcuda.so.1 as a dynamic loader sees it: what it exports, and its resolver
// cuGetProcAddress_v2 (the way the CUDA runtime and other language bindings find entry points).
// This test links neither cuhal nor fakecuda: it only dlopens the library.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

template <typename Fn>
Fn As(void* address) {
  Fn fn = nullptr;
  std::memcpy(&fn, &address, sizeof(fn));
  return fn;
}

class DropinDlopenTest : public ::testing::Test {
 protected:
  // One load for the whole suite, kept resident (RTLD_NODELETE) as a driver library is in
  // practice (dropin_unload_test.cc checks unloading). The library's constructor reads
  // FAKECUDA_DEVICES when it is loaded.
  static void SetUpTestSuite() {
    setenv("FAKECUDA_DEVICES", "3", 1);
    handle_ = dlopen(CUHAL_DROPIN_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    unsetenv("FAKECUDA_DEVICES");
  }
  void SetUp() override {
    ASSERT_NE(handle_, nullptr) << dlerror();
    resolve_ = As<decltype(&::cuGetProcAddress)>(dlsym(handle_, "cuGetProcAddress_v2"));
    ASSERT_NE(resolve_, nullptr);
  }
  // Resolves `name` at the header's version; fails the test if it cannot.
  template <typename Fn>
  Fn Resolve(const char* name, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    EXPECT_EQ(resolve_(name, &pfn, CUDA_VERSION, flags, &status), CUDA_SUCCESS) << name;
    EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS) << name;
    return As<Fn>(pfn);
  }

  static void* handle_;
  decltype(&::cuGetProcAddress) resolve_ = nullptr;
};

void* DropinDlopenTest::handle_ = nullptr;

TEST_F(DropinDlopenTest, ExportsTheDriversSymbolNamesOnly) {
  for (const char* name :
       {"cuInit", "cuMemAlloc_v2", "cuCtxDestroy_v2", "cuCtxCreate_v4", "cuEventElapsedTime_v2",
        "cuGetProcAddress", "cuGetProcAddress_v2", "cuGraphAddKernelNode_v2", "cuCtxCreate",
        "cuCtxCreate_v2", "cuCtxCreate_v3",
        "cuMemcpyHtoD_v2_ptds", "cuMemcpyHtoDAsync_v2_ptsz", "cuLaunchKernel_ptsz",
        "cuStreamBeginCapture_v2_ptsz", "cuGetErrorString"}) {
    EXPECT_NE(dlsym(handle_, name), nullptr) << name;
  }
  // The newer ABIs cuGetProcAddress hands out for the plain names (CUDA 12.5 and 13.0).
  for (const char* name : {"cuCtxSynchronize_v2", "cuCtxGetDevice_v2", "cuStreamGetCtx_v2",
                           "cuStreamGetCtx_v2_ptsz"}) {
    EXPECT_NE(dlsym(handle_, name), nullptr) << name;
  }
  // Plain names that the real driver only has in an older ABI are not the new one: cuMemAlloc
  // (the 32-bit ABI) is exported as a generated fallback (fakecuda/entry/fallback.h), a different
  // function from cuMemAlloc_v2. Of fakecuda's C++ internals only the hooks the drop-in
  // libnccl.so.2 looks up (fakenccl/dropin/hooks.cc) are exported.
  EXPECT_NE(dlsym(handle_, "cuMemAlloc"), nullptr);
  EXPECT_NE(dlsym(handle_, "cuMemAlloc"), dlsym(handle_, "cuMemAlloc_v2"));
  EXPECT_EQ(dlsym(handle_, "_ZN8fakecuda7InstallEPNS_10FakeDriverE"), nullptr);
  EXPECT_EQ(dlsym(handle_, "_ZN8fakecuda14InstalledStateEv"), nullptr);
  EXPECT_EQ(dlsym(handle_, "fakecuda_legacy_cuStreamQuery_ptsz"), nullptr);
  // The wake-up counter fakenccl's old clock used is gone (fakecuda/virtual_clock.h replaced it).
  EXPECT_EQ(dlsym(handle_, "_ZN8fakecuda18SchedulerWaitTicksEv"), nullptr);
  for (const char* name : {"_ZN8fakecuda17EnqueueStreamWorkEP11CUstream_stNS_10StreamWorkE",
                           "_ZN8fakecuda16NotifyStreamWorkEv",
                           "_ZN8fakecuda22TranslateDevicePointerEymPi",
                           "_ZN8fakecuda12StreamDeviceEP11CUstream_st", "_ZN8fakecuda9InstalledEv",
                           "_ZNK8fakecuda10FakeDriver7optionsEv"}) {
    EXPECT_NE(dlsym(handle_, name), nullptr) << name;
  }
}

TEST_F(DropinDlopenTest, ResolverAnswers) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  // The current variant of each entry: the versioned symbol.
  ASSERT_EQ(resolve_("cuMemAlloc", &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  EXPECT_EQ(pfn, dlsym(handle_, "cuMemAlloc_v2"));
  ASSERT_EQ(resolve_("cuMemcpyHtoDAsync", &pfn, CUDA_VERSION,
                     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
            CUDA_SUCCESS);
  EXPECT_EQ(pfn, dlsym(handle_, "cuMemcpyHtoDAsync_v2_ptsz"));
  ASSERT_EQ(resolve_("cuMemcpyHtoDAsync", &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                     &status),
            CUDA_SUCCESS);
  EXPECT_EQ(pfn, dlsym(handle_, "cuMemcpyHtoDAsync_v2"));
  // Unknown names and too-old versions.
  EXPECT_EQ(resolve_("cuNoSuchFunction", &pfn, CUDA_VERSION, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(pfn, nullptr);
  EXPECT_EQ(resolve_("cuMemAllocAsync", &pfn, 11000, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  // The legacy resolver of CUDA 11.3-11.8 drivers.
  ASSERT_EQ(resolve_("cuGetProcAddress", &pfn, 11080, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(pfn, dlsym(handle_, "cuGetProcAddress"));
  ASSERT_EQ(resolve_("cuCtxCreate", &pfn, 11040, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(pfn, dlsym(handle_, "cuCtxCreate_v3"));
  EXPECT_EQ(resolve_(nullptr, &pfn, CUDA_VERSION, 0, &status), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(DropinDlopenTest, ProgramThroughResolvedPointers) {
  auto init = Resolve<decltype(&::cuInit)>("cuInit");
  auto device_count = Resolve<decltype(&::cuDeviceGetCount)>("cuDeviceGetCount");
  auto ctx_create = Resolve<decltype(&::cuCtxCreate)>("cuCtxCreate");
  auto ctx_destroy = Resolve<decltype(&::cuCtxDestroy)>("cuCtxDestroy");
  auto mem_alloc = Resolve<decltype(&::cuMemAlloc)>("cuMemAlloc");
  auto mem_free = Resolve<decltype(&::cuMemFree)>("cuMemFree");
  auto htod = Resolve<decltype(&::cuMemcpyHtoD)>("cuMemcpyHtoD");
  auto dtoh = Resolve<decltype(&::cuMemcpyDtoH)>("cuMemcpyDtoH");
  auto error_name = Resolve<decltype(&::cuGetErrorName)>("cuGetErrorName");
  ASSERT_TRUE(init && device_count && ctx_create && ctx_destroy && mem_alloc && mem_free && htod &&
              dtoh && error_name);
  int count = 0;
  EXPECT_EQ(device_count(&count), CUDA_ERROR_NOT_INITIALIZED) << "before cuInit";
  ASSERT_EQ(init(0), CUDA_SUCCESS);
  ASSERT_EQ(device_count(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 3) << "FAKECUDA_DEVICES=3";
  CUcontext ctx = nullptr;
  ASSERT_EQ(ctx_create(&ctx, nullptr, 0, 2), CUDA_SUCCESS);
  CUdeviceptr ptr = 0;
  ASSERT_EQ(mem_alloc(&ptr, 1024), CUDA_SUCCESS);
  std::vector<char> in(1024), out(1024, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<char>(i * 7);
  ASSERT_EQ(htod(ptr, in.data(), in.size()), CUDA_SUCCESS);
  ASSERT_EQ(dtoh(out.data(), ptr, out.size()), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  const char* name = nullptr;
  ASSERT_EQ(error_name(mem_free(ptr + 1), &name), CUDA_SUCCESS);
  EXPECT_STREQ(name, "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(mem_free(ptr), CUDA_SUCCESS);
  EXPECT_EQ(ctx_destroy(ctx), CUDA_SUCCESS);
}

}  // namespace
