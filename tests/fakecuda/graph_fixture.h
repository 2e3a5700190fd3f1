// Copyright 2026 The cuhal Authors.
// The fixture of the graph and stream-capture conformance tests (graph_capture_test.cc,
// graph_test.cc): the set-up of ci/gpu-probes/graph_probe.cc's `Base`, whose H200 answers
// (ci/gpu-probes/results/2026-12-03-probe-graph.txt) the tests assert: device 0's primary
// context current, a module with `empty()` and `add_u32(u32* p, u32 v)` (*p += v), two
// non-blocking streams and a zeroed 4 KiB device buffer.
#ifndef CUHAL_TESTS_FAKECUDA_GRAPH_FIXTURE_H_
#define CUHAL_TESTS_FAKECUDA_GRAPH_FIXTURE_H_

#include <cuda.h>
#include <gtest/gtest.h>

#include "tests/support/backend.h"

namespace cuhal::testing {

// The probe's kernels (graph_probe.cc kPtx), run by fakecuda's PTX interpreter.
inline constexpr char kGraphTestPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry empty() { ret; }
.visible .entry add_u32(.param .u64 p, .param .u32 v) {
  .reg .u64 %a;
  .reg .u32 %x, %y;
  ld.param.u64 %a, [p];
  ld.param.u32 %y, [v];
  cvta.to.global.u64 %a, %a;
  ld.global.u32 %x, [%a];
  add.u32 %x, %x, %y;
  st.global.u32 [%a], %x;
  ret;
}
)";

inline constexpr CUstreamCaptureMode kCaptureModes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL,
                                                        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                                        CU_STREAM_CAPTURE_MODE_RELAXED};

inline const char* ModeName(CUstreamCaptureMode mode) {
  switch (mode) {
    case CU_STREAM_CAPTURE_MODE_GLOBAL:
      return "global";
    case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL:
      return "thread_local";
    case CU_STREAM_CAPTURE_MODE_RELAXED:
      return "relaxed";
  }
  return "?";
}

class GraphTestBase : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(api().cuModuleLoadData(&module_, kGraphTestPtx), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&empty_, module_, "empty"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&add_, module_, "add_u32"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamCreate(&s1_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamCreate(&s2_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemAlloc(&buf_, 4096), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemsetD8(buf_, 0, 4096), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (buf_ != 0) {
      EXPECT_EQ(api().cuMemFree(buf_), CUDA_SUCCESS);
    }
    if (s1_ != nullptr) {
      EXPECT_EQ(api().cuStreamDestroy(s1_), CUDA_SUCCESS);
    }
    if (s2_ != nullptr) {
      EXPECT_EQ(api().cuStreamDestroy(s2_), CUDA_SUCCESS);
    }
    if (module_ != nullptr) {
      EXPECT_EQ(api().cuModuleUnload(module_), CUDA_SUCCESS);
    }
    PrimaryContextTest::TearDown();
  }

  CUresult LaunchEmpty(CUstream s) {
    return api().cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr);
  }
  CUresult LaunchAdd(CUstream s, CUdeviceptr p, unsigned v) {
    void* args[] = {&p, &v};
    return api().cuLaunchKernel(add_, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
  }
  unsigned Read(CUdeviceptr p) {
    unsigned v = 0;
    EXPECT_EQ(api().cuMemcpyDtoH(&v, p, sizeof v), CUDA_SUCCESS);
    return v;
  }
  unsigned char ReadByte(CUdeviceptr p) {
    unsigned char v = 0;
    EXPECT_EQ(api().cuMemcpyDtoH(&v, p, 1), CUDA_SUCCESS);
    return v;
  }
  CUstreamCaptureStatus Status(CUstream s) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    EXPECT_EQ(api().cuStreamIsCapturing(s, &status), CUDA_SUCCESS);
    return status;
  }
  size_t NodeCount(CUgraph g) {
    size_t n = 0;
    EXPECT_EQ(api().cuGraphGetNodes(g, nullptr, &n), CUDA_SUCCESS);
    return n;
  }

  CUmodule module_ = nullptr;
  CUfunction empty_ = nullptr;
  CUfunction add_ = nullptr;
  CUstream s1_ = nullptr;
  CUstream s2_ = nullptr;
  CUdeviceptr buf_ = 0;
};

}  // namespace cuhal::testing

#endif  // CUHAL_TESTS_FAKECUDA_GRAPH_FIXTURE_H_
