// Copyright 2026 The cuhal Authors.
// The PTX interpreter's own behaviour on the fake: unsupported instructions refuse the load
// (unless a host implementation is registered), registered implementations keep priority, bad
// accesses fail the launch with a sticky CUDA_ERROR_ILLEGAL_ADDRESS and a memcheck-like report,
// and graphs' kernel nodes are interpreted too.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/kernel_registry.h"
#include "fakecuda/sample_kernels.h"
#include "tests/ptx/catalogue_support.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

// A kernel that uses a texture instruction (not implemented by the interpreter), line 9.
constexpr char kUnsupportedPtx[] = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry uses_texture(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<2>;
  tex.2d.v4.f32.f32 {%f0, %f1, %f2, %f3}, [tex0, {%f0, %f1}];
  ret;
}
)";

// NaN conversions and the tensor cores' rounding, as measured on sm_90 (H100, driver 580,
// 2026-12-05; ci/gpu-probes/ptx_numerics_probe.cu, results in ci/gpu-probes/results/
// 2026-12-05-probe-ptx-numerics.txt): cvt.f32.f16 / cvt.f32.bf16 of any NaN give the canonical
// 0x7fffffff; mma.sync rounds its f32 result toward zero. Lane 0 holds A[0][0] = A[0][1] =
// 3*2^-13 (f16 0x0e00) and B[0][0] = 2^-12 (0x0c00), lane 4 B[0][1] = B[1][1] = 2^-12: each
// product is 3*2^-25 = 0.75 ulp of 1, so with C = 1, D[0][0] = 1 + 0.75 ulp (1 toward zero,
// 1 + 1 ulp to nearest) and D[0][1] = 1 + 1.5 ulp (1 + 1 ulp toward zero, 1 + 2 ulp to nearest
// even).
constexpr char kNumericsPtx[] = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry numerics(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b16 %h<4>;
  .reg .f32 %f<12>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [out];
  cvta.to.global.u64 %rd0, %rd0;
  mov.u32 %r0, %laneid;
  setp.eq.u32 %p0, %r0, 0;
  setp.eq.u32 %p1, %r0, 4;
  mov.b16 %h0, 0x7e01;
  cvt.f32.f16 %f0, %h0;
  mov.b16 %h1, 0xfe01;
  cvt.f32.f16 %f1, %h1;
  mov.b16 %h2, 0x7c01;
  cvt.f32.f16 %f2, %h2;
  mov.b16 %h3, 0xffc1;
  cvt.f32.bf16 %f3, %h3;
  selp.b32 %r1, 0x0E000E00, 0, %p0;
  mov.b32 %r2, 0;
  mov.b32 %r3, 0;
  mov.b32 %r4, 0;
  selp.b32 %r5, 0x00000C00, 0, %p0;
  selp.b32 %r5, 0x0C000C00, %r5, %p1;
  mov.b32 %r6, 0;
  selp.f32 %f4, 0f3F800000, 0f00000000, %p0;
  mov.f32 %f5, %f4;
  mov.f32 %f6, 0f00000000;
  mov.f32 %f7, 0f00000000;
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f8, %f9, %f10, %f11}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f4, %f5, %f6, %f7};
  @!%p0 bra DONE;
  st.global.f32 [%rd0], %f0;
  st.global.f32 [%rd0+4], %f1;
  st.global.f32 [%rd0+8], %f2;
  st.global.f32 [%rd0+12], %f3;
  st.global.f32 [%rd0+16], %f8;
  st.global.f32 [%rd0+20], %f9;
DONE:
  ret;
}
)";

class InterpreterTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (backend_ == nullptr || HasFatalFailure() || IsSkipped()) return;
    ctx_ = std::make_unique<ScopedPrimaryContext>(api());
    ASSERT_EQ(ctx_->result(), CUDA_SUCCESS);
  }
  void TearDown() override {
    ctx_.reset();
    BackendTest::TearDown();
  }
  void LoadCatalogue() {
    std::string why;
    ptx_ = CataloguePtx(&why);
    if (ptx_.empty()) {
      GTEST_SKIP() << "no PTX catalogue: " << why;
    }
    ASSERT_EQ(api().cuModuleLoadData(&module_, ptx_.c_str()), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&vector_add_, module_, "vector_add"), CUDA_SUCCESS);
  }
  std::unique_ptr<ScopedPrimaryContext> ctx_;
  std::string ptx_;
  CUmodule module_ = nullptr;
  CUfunction vector_add_ = nullptr;
};

TEST_P(InterpreterTest, UnsupportedInstructionFailsTheLoadNamingItAndTheLine) {
  CUmodule module = nullptr;
  char log[1024] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(sizeof(log))};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(api().cuModuleLoadDataEx(&module, kUnsupportedPtx, 2, options, values),
            CUDA_ERROR_NOT_SUPPORTED);
  std::string err = ::testing::internal::GetCapturedStderr();
  std::string text(log);
  EXPECT_NE(text.find("tex.2d.v4.f32.f32"), std::string::npos) << text;
  EXPECT_NE(text.find("ptx line 9"), std::string::npos) << text;
  EXPECT_NE(text.find("uses_texture"), std::string::npos) << text;
  EXPECT_NE(err.find("tex.2d.v4.f32.f32"), std::string::npos) << err;
}

TEST_P(InterpreterTest, UnsupportedKernelLoadsWhenAHostImplementationIsRegistered) {
  int runs = 0;
  fakecuda::ScopedKernel stub("uses_texture", [&](const fakecuda::KernelLaunch&) {
    ++runs;
    return CUDA_SUCCESS;
  });
  CUmodule module = nullptr;
  ASSERT_EQ(api().cuModuleLoadData(&module, kUnsupportedPtx), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuModuleGetFunction(&f, module, "uses_texture"), CUDA_SUCCESS);
  CUdeviceptr out = 0;
  void* args[] = {&out};
  ASSERT_EQ(api().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(api().cuModuleUnload(module), CUDA_SUCCESS);
}

TEST_P(InterpreterTest, RegisteredImplementationKeepsPriority) {
  ASSERT_NO_FATAL_FAILURE(LoadCatalogue());
  if (module_ == nullptr) return;
  fakecuda::ScopedKernel stub("vector_add", [](const fakecuda::KernelLaunch& l) {
    float* c = l.TranslateAs<float>(l.Param<CUdeviceptr>(2), 4);
    for (int i = 0; i < 4; ++i) c[i] = 42.0f;
    return CUDA_SUCCESS;
  });
  std::vector<float> a = {1, 2, 3, 4};
  DeviceBuffer<float> da(api(), a), db(api(), a), dc(api(), 4);
  int n = 4;
  void* args[] = {da.slot(), db.slot(), dc.slot(), &n};
  ASSERT_EQ(api().cuLaunchKernel(vector_add_, 1, 1, 1, 4, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(dc.Download(), std::vector<float>(4, 42.0f));
  EXPECT_EQ(api().cuModuleUnload(module_), CUDA_SUCCESS);
}

TEST_P(InterpreterTest, OutOfBoundsAccessIsAStickyIllegalAddressNamingTheThread) {
  ASSERT_NO_FATAL_FAILURE(LoadCatalogue());
  if (module_ == nullptr) return;
  DeviceBuffer<float> da(api(), 100), db(api(), 100), dc(api(), 100);
  int n = 200;  // past the end of every buffer
  void* args[] = {da.slot(), db.slot(), dc.slot(), &n};
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(api().cuLaunchKernel(vector_add_, 2, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("kernel vector_add"), std::string::npos) << err;
  EXPECT_NE(err.find("Invalid __global__ read of size 4 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("thread (100,0,0) in block (0,0,0)"), std::string::npos) << err;
  // The first element past the end of a or of b (nvcc's code may load either first).
  auto at = [](CUdeviceptr p) {
    char text[32];
    std::snprintf(text, sizeof(text), "at 0x%016llx",
                  static_cast<unsigned long long>(p + 100 * sizeof(float)));
    return std::string(text);
  };
  EXPECT_TRUE(err.find(at(da.ptr())) != std::string::npos ||
              err.find(at(db.ptr())) != std::string::npos)
      << err;
  // Sticky, as on the GPU: the context is unusable from now on.
  CUdeviceptr p = 0;
  EXPECT_EQ(api().cuMemAlloc(&p, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  (void)api().cuModuleUnload(module_);
}

// Needs no nvcc: the fake's hand-written sample PTX, with no host implementation registered, runs
// on the interpreter; its add_one reads data[i] before writing it.
TEST_P(InterpreterTest, UnallocatedAddressIsAStickyIllegalAddressNamingKernelThreadAndAddress) {
  CUmodule module = nullptr;
  ASSERT_EQ(api().cuModuleLoadData(&module, fakecuda::kSamplePtx), CUDA_SUCCESS);
  CUfunction add_one = nullptr;
  ASSERT_EQ(api().cuModuleGetFunction(&add_one, module, "add_one"), CUDA_SUCCESS);
  // First a launch that works, so that the interpreter (not a missing registration) is what runs.
  std::vector<unsigned> values = {1, 2, 3};
  DeviceBuffer<unsigned> d(api(), values);
  unsigned n = 3;
  void* ok_args[] = {d.slot(), &n};
  ASSERT_EQ(api().cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, nullptr, ok_args, nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(d.Download(), (std::vector<unsigned>{2, 3, 4}));

  CUdeviceptr unallocated = 0x1000;  // below every allocation the fake hands out
  unsigned one = 1;
  void* bad_args[] = {&unallocated, &one};
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(api().cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, nullptr, bad_args, nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("kernel add_one"), std::string::npos) << err;
  EXPECT_NE(err.find("Invalid __global__ read of size 4 bytes at 0x0000000000001000"),
            std::string::npos) << err;
  EXPECT_NE(err.find("not inside any allocation"), std::string::npos) << err;
  EXPECT_NE(err.find("thread (0,0,0) in block (0,0,0)"), std::string::npos) << err;
  EXPECT_NE(err.find("ptx line"), std::string::npos) << err;
  // Sticky: later calls of the context fail with the same code.
  CUdeviceptr p = 0;
  EXPECT_EQ(api().cuMemAlloc(&p, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(api().cuLaunchKernel(add_one, 1, 1, 1, 1, 1, 1, 0, nullptr, ok_args, nullptr),
            CUDA_ERROR_ILLEGAL_ADDRESS);
  (void)api().cuModuleUnload(module);
}

// A kernel body that throws (here: a registered implementation, which runs on the kernel lane
// like the interpreter) fails the launch with a sticky CUDA_ERROR_LAUNCH_FAILED.
TEST_P(InterpreterTest, ThrowingKernelIsAStickyLaunchFailure) {
  fakecuda::ScopedKernel thrower("uses_texture", [](const fakecuda::KernelLaunch&) -> CUresult {
    throw std::runtime_error("kernel implementation threw");
  });
  CUmodule module = nullptr;
  ASSERT_EQ(api().cuModuleLoadData(&module, kUnsupportedPtx), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuModuleGetFunction(&f, module, "uses_texture"), CUDA_SUCCESS);
  CUdeviceptr out = 0;
  void* args[] = {&out};
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(api().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("kernel implementation threw"), std::string::npos) << err;
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
  (void)api().cuModuleUnload(module);
}

TEST_P(InterpreterTest, GraphKernelNodesAreInterpreted) {
  ASSERT_NO_FATAL_FAILURE(LoadCatalogue());
  if (module_ == nullptr) return;
  std::vector<float> a = {1, 2, 3, 4, 5}, b = {10, 20, 30, 40, 50};
  DeviceBuffer<float> da(api(), a), db(api(), b), dc(api(), 5);
  int n = 5;
  void* args[] = {da.slot(), db.slot(), dc.slot(), &n};
  CUgraph graph = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = vector_add_;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 32;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CUgraphNode node = nullptr;
  ASSERT_EQ(api().cuGraphAddKernelNode(&node, graph, nullptr, 0, &kp), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(dc.Download(), (std::vector<float>{11, 22, 33, 44, 55}));
  EXPECT_EQ(api().cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleUnload(module_), CUDA_SUCCESS);
}

TEST_P(InterpreterTest, NanConversionsAreCanonicalAndMmaRoundsTowardZeroAsMeasured) {
  CUmodule module = nullptr;
  ASSERT_EQ(api().cuModuleLoadData(&module, kNumericsPtx), CUDA_SUCCESS);
  CUfunction fn = nullptr;
  ASSERT_EQ(api().cuModuleGetFunction(&fn, module, "numerics"), CUDA_SUCCESS);
  DeviceBuffer<std::uint32_t> out(api(), std::vector<std::uint32_t>(6, 0));
  void* args[] = {out.slot()};
  ASSERT_EQ(api().cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  const std::vector<std::uint32_t> got = out.Download();
  const std::vector<std::uint32_t> measured = {0x7fffffffu, 0x7fffffffu, 0x7fffffffu,
                                               0x7fffffffu, 0x3f800000u, 0x3f800001u};
  for (std::size_t i = 0; i < measured.size(); ++i) {
    EXPECT_EQ(got[i], measured[i]) << "output " << i << std::hex << ": 0x" << got[i];
  }
  EXPECT_EQ(api().cuModuleUnload(module), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(InterpreterTest);

}  // namespace
}  // namespace cuhal::testing
