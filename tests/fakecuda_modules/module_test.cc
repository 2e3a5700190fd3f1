// Copyright 2026 The cuhal Authors.
// Conformance: modules, functions, launches (issue 3, "Must model" 7). The same PTX runs on the
// real driver (JIT-compiled) and on the fake (registered host implementations, test_kernels.h).
// Error codes marked "measured" were read on the GPU machine (H200, driver 580.159.04) by
// tests/fakecuda_dropin/probe_program.cc (probe_expected.txt); UNMEASURED ones were not.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "fakecuda/sample_kernels.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

class ModuleTest : public BackendTest {
 protected:
  // Loads fakecuda::kSamplePtx into the current context and looks up its kernels.
  void LoadTestModule() {
    ASSERT_EQ(api().cuModuleLoadData(&module_, fakecuda::kSamplePtx), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&add_one_, module_, "add_one"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&write_params_, module_, "write_params"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&shared_reverse_, module_, "shared_reverse"), CUDA_SUCCESS);
  }
  // Every test unloads its module while its context is still current (a test that stops early
  // leaves it to the context's destruction, which unloads it too).
  void UnloadTestModule() {
    EXPECT_EQ(api().cuModuleUnload(module_), CUDA_SUCCESS);
    module_ = nullptr;
  }
  // Launches add_one over `n` elements at `data` on `stream`.
  CUresult LaunchAddOne(CUdeviceptr data, unsigned n, CUstream stream) {
    void* params[] = {&data, &n};
    return api().cuLaunchKernel(add_one_, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, params,
                                nullptr);
  }

  fakecuda::SampleKernels kernels_;
  CUmodule module_ = nullptr;
  CUfunction add_one_ = nullptr;
  CUfunction write_params_ = nullptr;
  CUfunction shared_reverse_ = nullptr;
};

TEST_P(ModuleTest, LoadPtxAndFindItsKernels) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(LoadTestModule());
  EXPECT_NE(add_one_, nullptr);
  EXPECT_NE(add_one_, write_params_);
  CUfunction again = nullptr;
  ASSERT_EQ(api().cuModuleGetFunction(&again, module_, "add_one"), CUDA_SUCCESS);
  EXPECT_EQ(again, add_one_) << "the same kernel is the same CUfunction";
  // Measured (differential fuzzer, H100 driver 580.159.04, 2026-12-06): an unknown name
  // clears the out-parameter.
  CUfunction missing = add_one_;
  EXPECT_EQ(api().cuModuleGetFunction(&missing, module_, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(missing, nullptr);
  EXPECT_EQ(api().cuModuleGetFunction(nullptr, module_, "add_one"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuModuleGetFunction(&missing, module_, nullptr), CUDA_ERROR_INVALID_VALUE);
  UnloadTestModule();
}

TEST_P(ModuleTest, LoadDataArgumentErrors) {
  CUmodule module = nullptr;
  // No current context.
  EXPECT_EQ(api().cuModuleLoadData(&module, fakecuda::kSamplePtx), CUDA_ERROR_INVALID_CONTEXT);
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleLoadData(nullptr, fakecuda::kSamplePtx), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuModuleLoadData(&module, nullptr), CUDA_ERROR_INVALID_VALUE);
  // Not an image at all.
  EXPECT_EQ(api().cuModuleLoadData(&module, "hello, world"), CUDA_ERROR_INVALID_IMAGE);  // measured
  // PTX that does not compile.
  const char* broken = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry broken(\n";
  EXPECT_EQ(api().cuModuleLoadData(&module, broken), CUDA_ERROR_INVALID_PTX);  // measured
}

TEST_P(ModuleTest, LoadDataExWritesTheErrorLog) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  char error_log[1024];
  std::memset(error_log, 'x', sizeof(error_log));
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(std::uintptr_t{sizeof(error_log)})};
  CUmodule module = nullptr;
  const char* broken = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry broken(\n";
  EXPECT_EQ(api().cuModuleLoadDataEx(&module, broken, 2, options, values), CUDA_ERROR_INVALID_PTX);
  EXPECT_GT(std::strlen(error_log), 0u) << "the JIT explains the failure";
  EXPECT_LT(std::strlen(error_log), sizeof(error_log));
  // A good image through the Ex variant.
  ASSERT_EQ(api().cuModuleLoadDataEx(&module_, fakecuda::kSamplePtx, 0, nullptr, nullptr), CUDA_SUCCESS);
  CUfunction f = nullptr;
  EXPECT_EQ(api().cuModuleGetFunction(&f, module_, "add_one"), CUDA_SUCCESS);
  // Options without their arrays.
  CUmodule other = nullptr;
  EXPECT_EQ(api().cuModuleLoadDataEx(&other, fakecuda::kSamplePtx, 1, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);  // measured
  UnloadTestModule();
}

TEST_P(ModuleTest, PtxForANewerGpuDoesNotLoad) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  // The H200 is sm_90; sm_120 PTX cannot be compiled for it.
  const char* newer =
      ".version 8.7\n.target sm_120\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  CUmodule module = nullptr;
  EXPECT_EQ(api().cuModuleLoadData(&module, newer), CUDA_ERROR_INVALID_PTX);  // measured
}

TEST_P(ModuleTest, GlobalsAreDeviceMemoryWithTheirInitializers) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(LoadTestModule());
  CUdeviceptr counter = 0;
  size_t bytes = 0;
  ASSERT_EQ(api().cuModuleGetGlobal(&counter, &bytes, module_, "fakecuda_counter"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  unsigned value = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&value, counter, sizeof(value)), CUDA_SUCCESS);
  EXPECT_EQ(value, 7u);
  // Writable like any device memory.
  unsigned nine = 9;
  ASSERT_EQ(api().cuMemcpyHtoD(counter, &nine, sizeof(nine)), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(&value, counter, sizeof(value)), CUDA_SUCCESS);
  EXPECT_EQ(value, 9u);

  CUdeviceptr table = 0;
  ASSERT_EQ(api().cuModuleGetGlobal(&table, &bytes, module_, "fakecuda_table"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 16u);
  unsigned words[4] = {};
  ASSERT_EQ(api().cuMemcpyDtoH(words, table, sizeof(words)), CUDA_SUCCESS);
  EXPECT_EQ(words[0], 1u);
  EXPECT_EQ(words[3], 4u);

  CUdeviceptr constant = 0;
  ASSERT_EQ(api().cuModuleGetGlobal(&constant, &bytes, module_, "fakecuda_const"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  ASSERT_EQ(api().cuMemcpyDtoH(&value, constant, sizeof(value)), CUDA_SUCCESS);
  EXPECT_EQ(value, 42u);

  // Either output may be omitted.
  EXPECT_EQ(api().cuModuleGetGlobal(nullptr, &bytes, module_, "fakecuda_counter"), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleGetGlobal(&counter, nullptr, module_, "fakecuda_counter"), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleGetGlobal(&counter, &bytes, module_, "no_such_global"),
            CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(api().cuModuleGetGlobal(&counter, &bytes, module_, nullptr), CUDA_ERROR_INVALID_VALUE);
  UnloadTestModule();
}

TEST_P(ModuleTest, MemFreeRefusesAModuleGlobal) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(LoadTestModule());
  CUdeviceptr counter = 0;
  size_t bytes = 0;
  ASSERT_EQ(api().cuModuleGetGlobal(&counter, &bytes, module_, "fakecuda_counter"), CUDA_SUCCESS);
  // A module variable is the module's memory, not an allocation of cuMemAlloc, and cuMemFree
  // refuses it (measured: H200, driver 580.159.04, ci/gpu-nightly 2026-12-03).
  EXPECT_EQ(api().cuMemFree(counter), CUDA_ERROR_INVALID_VALUE);
  if (IsFake()) {
    // UNMEASURED on real (and not run there): cuMemFreeAsync refuses it too.
    EXPECT_EQ(api().cuMemFreeAsync(counter, nullptr), CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  }
  // The variable is still there, with its initializer.
  unsigned value = 0;
  EXPECT_EQ(api().cuMemcpyDtoH(&value, counter, sizeof(value)), CUDA_SUCCESS);
  EXPECT_EQ(value, 7u);
  UnloadTestModule();
}

TEST_P(ModuleTest, FunctionAttributes) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(LoadTestModule());
  int value = -1;
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, add_one_),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1024);
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                     shared_reverse_),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 256) << ".maxntid 256";
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, shared_reverse_),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1024);
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, add_one_),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 0);
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, add_one_), CUDA_SUCCESS);
  EXPECT_GT(value, 0);
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_PTX_VERSION, add_one_), CUDA_SUCCESS);
  EXPECT_EQ(value, 80);  // measured
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_BINARY_VERSION, add_one_),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 90) << "JIT-compiled for the H200 (sm_90)";  // measured
  // Dynamic shared memory: 48 KiB minus the static part by default, up to the opt-in limit.
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     shared_reverse_),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 49152 - 1024);
  int optin = 0;
  ASSERT_EQ(api().cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                       0),
            CUDA_SUCCESS);
  if (optin == 0) optin = 232448;  // a profile without the attribute: the fake assumes the H200's
  EXPECT_EQ(api().cuFuncSetAttribute(shared_reverse_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     optin - 1024),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     shared_reverse_),
            CUDA_SUCCESS);
  EXPECT_EQ(value, optin - 1024);
  EXPECT_EQ(api().cuFuncSetAttribute(shared_reverse_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     optin - 1024 + 1),
            CUDA_ERROR_INVALID_VALUE);
  // Read-only attributes and bad arguments.
  EXPECT_EQ(api().cuFuncSetAttribute(add_one_, CU_FUNC_ATTRIBUTE_NUM_REGS, 8),
            CUDA_ERROR_INVALID_VALUE);  // measured
  EXPECT_EQ(api().cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, add_one_),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX, add_one_),
            CUDA_ERROR_INVALID_VALUE);  // measured
  EXPECT_EQ(api().cuFuncSetAttribute(add_one_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuFuncSetAttribute(add_one_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101),
            CUDA_ERROR_INVALID_VALUE);  // measured
  UnloadTestModule();
}

TEST_P(ModuleTest, LaunchRunsTheKernelInStreamOrder) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(LoadTestModule());
  constexpr unsigned kN = 1000;
  std::vector<unsigned> host(kN);
  std::iota(host.begin(), host.end(), 0u);
  CUdeviceptr data = 0;
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuMemAlloc(&data, kN * sizeof(unsigned)), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyHtoDAsync(data, host.data(), kN * sizeof(unsigned), stream), CUDA_SUCCESS);
  ASSERT_EQ(LaunchAddOne(data, kN, stream), CUDA_SUCCESS);
  ASSERT_EQ(LaunchAddOne(data, kN - 10, stream), CUDA_SUCCESS);  // the last 10 are left alone
  std::vector<unsigned> out(kN);
  ASSERT_EQ(api().cuMemcpyDtoHAsync(out.data(), data, kN * sizeof(unsigned), stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  for (unsigned i = 0; i < kN; ++i) {
    ASSERT_EQ(out[i], i + (i < kN - 10 ? 2u : 1u)) << "element " << i;
  }
  // The legacy default stream, and the static shared memory kernel.
  std::vector<unsigned> block(256);
  std::iota(block.begin(), block.end(), 0u);
  ASSERT_EQ(api().cuMemcpyHtoD(data, block.data(), 256 * sizeof(unsigned)), CUDA_SUCCESS);
  void* params[] = {&data};
  ASSERT_EQ(api().cuLaunchKernel(shared_reverse_, 1, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(block.data(), data, 256 * sizeof(unsigned)), CUDA_SUCCESS);
  EXPECT_EQ(block[0], 255u);
  EXPECT_EQ(block[255], 0u);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(data), CUDA_SUCCESS);
  UnloadTestModule();
}

TEST_P(ModuleTest, ParametersByPointerArrayAndByPackedBuffer) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(LoadTestModule());
  CUdeviceptr out = 0;
  ASSERT_EQ(api().cuMemAlloc(&out, 6 * sizeof(unsigned)), CUDA_SUCCESS);
  unsigned char a = 200;
  alignas(8) unsigned s[4] = {11, 22, 33, 44};
  unsigned c = 0xdeadbeef;
  void* params[] = {&out, &a, s, &c};
  ASSERT_EQ(api().cuLaunchKernel(write_params_, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
            CUDA_SUCCESS);
  unsigned got[6] = {};
  ASSERT_EQ(api().cuMemcpyDtoH(got, out, sizeof(got)), CUDA_SUCCESS);
  EXPECT_EQ(got[0], 200u);
  EXPECT_EQ(got[1], 11u);
  EXPECT_EQ(got[4], 44u);
  EXPECT_EQ(got[5], 0xdeadbeefu);

  // The same launch through `extra`: the caller lays the parameters out (PTX alignment rules).
  alignas(8) unsigned char buffer[fakecuda::kWriteParamsBytes] = {};
  unsigned c2 = 7;
  unsigned char a2 = 3;
  unsigned s2[4] = {5, 6, 7, 8};
  std::memcpy(buffer + fakecuda::kWriteParamsOut, &out, sizeof(out));
  std::memcpy(buffer + fakecuda::kWriteParamsA, &a2, 1);
  std::memcpy(buffer + fakecuda::kWriteParamsS, s2, sizeof(s2));
  std::memcpy(buffer + fakecuda::kWriteParamsC, &c2, sizeof(c2));
  size_t size = sizeof(buffer);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  ASSERT_EQ(api().cuLaunchKernel(write_params_, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(got, out, sizeof(got)), CUDA_SUCCESS);
  EXPECT_EQ(got[0], 3u);
  EXPECT_EQ(got[1], 5u);
  EXPECT_EQ(got[4], 8u);
  EXPECT_EQ(got[5], 7u);
  // Both ways at once.
  EXPECT_EQ(api().cuLaunchKernel(write_params_, 1, 1, 1, 1, 1, 1, 0, nullptr, params, extra),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(out), CUDA_SUCCESS);
  UnloadTestModule();
}

TEST_P(ModuleTest, LaunchConfigurationLimits) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(LoadTestModule());
  CUdeviceptr data = 0;
  ASSERT_EQ(api().cuMemAlloc(&data, 4096), CUDA_SUCCESS);
  unsigned n = 0;  // the kernels do nothing with n == 0
  void* params[] = {&data, &n};
  auto launch = [&](unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                    unsigned shared) {
    return api().cuLaunchKernel(add_one_, gx, gy, gz, bx, by, bz, shared, nullptr, params, nullptr);
  };
  EXPECT_EQ(launch(1, 1, 1, 1024, 1, 1, 0), CUDA_SUCCESS);
  EXPECT_EQ(launch(1, 1, 1, 1025, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 1, 1, 65, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 32, 32, 2, 0), CUDA_ERROR_INVALID_VALUE) << "2048 threads";
  EXPECT_EQ(launch(0, 1, 1, 1, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 0, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 65536, 1, 1, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 1, 1, 1, 49152), CUDA_SUCCESS);
  EXPECT_EQ(launch(1, 1, 1, 1, 1, 1, 49153), CUDA_ERROR_INVALID_VALUE);
  // Over the kernel's own limit (.maxntid 256) but within the device's.
  void* reverse_params[] = {&data};
  EXPECT_EQ(api().cuLaunchKernel(shared_reverse_, 1, 1, 1, 512, 1, 1, 0, nullptr, reverse_params,
                                 nullptr),
            CUDA_ERROR_INVALID_VALUE);  // measured
  if (IsFake()) {
    // Missing parameters. Not probed on the real driver: if it launched anyway, the kernel would
    // read garbage pointers and poison the context for the rest of the suite.
    EXPECT_EQ(api().cuLaunchKernel(add_one_, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
              CUDA_ERROR_INVALID_VALUE);  // measured (probe launch.no_params)
  }
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS) << "failed launches are not sticky";
  EXPECT_EQ(api().cuMemFree(data), CUDA_SUCCESS);
  UnloadTestModule();
}

CUHAL_INSTANTIATE_BACKEND_TEST(ModuleTest);

// A kernel queued before a cuMemFreeAsync of the pool memory it writes, on the same stream, runs
// before the free takes effect: stream order makes this well defined, on the GPU and on the fake
// (whose free used to take the allocation out of its map at the call, so the queued kernel faulted
// with a sticky CUDA_ERROR_ILLEGAL_ADDRESS).
TEST_P(ModuleTest, KernelQueuedBeforeFreeAsyncOfItsPoolMemoryRuns) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(LoadTestModule());
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  constexpr unsigned kCount = 1024;
  CUdeviceptr data = 0;
  ASSERT_EQ(api().cuMemAllocAsync(&data, kCount * sizeof(unsigned), stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32Async(data, 0, kCount, stream), CUDA_SUCCESS);
  // Hold the stream so that the kernel and the free are both queued before the kernel runs.
  std::atomic<bool> release{false};
  auto hold = [](void* flag) {
    while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
  };
  ASSERT_EQ(api().cuLaunchHostFunc(stream, hold, &release), CUDA_SUCCESS);
  EXPECT_EQ(LaunchAddOne(data, kCount, stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeAsync(data, stream), CUDA_SUCCESS);
  release.store(true);
  EXPECT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS) << "no sticky error";
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  UnloadTestModule();
}

}  // namespace
}  // namespace cuhal::testing
