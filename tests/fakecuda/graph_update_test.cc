// Copyright 2026 The cuhal Authors.
// Conformance: updating an executable graph (cuGraphExecUpdate and the node setters
// cuGraphExec{Kernel,Memset,Memcpy}NodeSetParams). The answers marked "measured" are the H200's
// in ci/gpu-probes/results/2026-12-03-probe-graph.txt (cases exec_update:*, probe source
// ci/gpu-probes/graph_probe.cc); the probe made its changed graph with cuGraphClone, these tests
// build the changed graph with the same calls in the same order (the pairing is the same).
// Expectations marked "UNMEASURED" follow the CUDA documentation and have not run on the H200.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

// The probe's kernels, plus an atomic add for the grid case (the probe's plain add races when
// two blocks run it: the H200 read 6 where 9 is the race-free answer).
constexpr char kPtx[] = R"(
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
.visible .entry atomic_add_u32(.param .u64 p, .param .u32 v) {
  .reg .u64 %a;
  .reg .u32 %x, %y;
  ld.param.u64 %a, [p];
  ld.param.u32 %y, [v];
  cvta.to.global.u64 %a, %a;
  atom.global.add.u32 %x, [%a], %y;
  ret;
}
)";

// The probe's graph: kernel k = add(buf, 3) -> memset m = 16 bytes of 0x11 at buf + 64.
class GraphUpdateTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(api().cuModuleLoadData(&module_, kPtx), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&empty_, module_, "empty"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&add_, module_, "add_u32"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&atomic_add_, module_, "atomic_add_u32"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemAlloc(&buf_, 4096), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemsetD8(buf_, 0, 4096), CUDA_SUCCESS);
    p_ = buf_;
    kp_.func = add_;
    kp_.gridDimX = kp_.gridDimY = kp_.gridDimZ = 1;
    kp_.blockDimX = kp_.blockDimY = kp_.blockDimZ = 1;
    kp_.kernelParams = args_;
    ms_.dst = buf_ + 64;
    ms_.value = 0x11;
    ms_.elementSize = 1;
    ms_.width = 16;
    ms_.height = 1;
    ASSERT_EQ(api().cuGraphCreate(&g_, 0), CUDA_SUCCESS);
    ASSERT_EQ(api().cuGraphAddKernelNode(&k_, g_, nullptr, 0, &kp_), CUDA_SUCCESS);
    ASSERT_EQ(api().cuGraphAddMemsetNode(&m_, g_, &k_, 1, &ms_, ctx()), CUDA_SUCCESS);
    ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec_, g_, 0), CUDA_SUCCESS);
    ASSERT_NO_FATAL_FAILURE(Launch());
    ASSERT_EQ(Word(0), 3u);  // measured: "value after launch 1 (expect 3) = 3"
  }
  void TearDown() override {
    if (exec_ != nullptr) {
      EXPECT_EQ(api().cuGraphExecDestroy(exec_), CUDA_SUCCESS);
    }
    if (g2_ != nullptr) {
      EXPECT_EQ(api().cuGraphDestroy(g2_), CUDA_SUCCESS);
    }
    if (g_ != nullptr) {
      EXPECT_EQ(api().cuGraphDestroy(g_), CUDA_SUCCESS);
    }
    if (buf_ != 0) {
      EXPECT_EQ(api().cuMemFree(buf_), CUDA_SUCCESS);
    }
    if (stream_ != nullptr) {
      EXPECT_EQ(api().cuStreamDestroy(stream_), CUDA_SUCCESS);
    }
    if (module_ != nullptr) {
      EXPECT_EQ(api().cuModuleUnload(module_), CUDA_SUCCESS);
    }
    PrimaryContextTest::TearDown();
  }

  void Launch() {
    ASSERT_EQ(api().cuGraphLaunch(exec_, stream_), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  }
  unsigned Word(std::size_t offset) {
    unsigned v = 0;
    EXPECT_EQ(api().cuMemcpyDtoH(&v, buf_ + offset, sizeof(v)), CUDA_SUCCESS);
    return v;
  }
  unsigned Byte(std::size_t offset) {
    unsigned char b = 0;
    EXPECT_EQ(api().cuMemcpyDtoH(&b, buf_ + offset, 1), CUDA_SUCCESS);
    return b;
  }
  // The changed graph g2_: the same kernel and memset, from these parameters.
  void MakeG2(const CUDA_KERNEL_NODE_PARAMS& kp, const CUDA_MEMSET_NODE_PARAMS& ms) {
    ASSERT_EQ(api().cuGraphCreate(&g2_, 0), CUDA_SUCCESS);
    ASSERT_EQ(api().cuGraphAddKernelNode(&k2_, g2_, nullptr, 0, &kp), CUDA_SUCCESS);
    ASSERT_EQ(api().cuGraphAddMemsetNode(&m2_, g2_, &k2_, 1, &ms, ctx()), CUDA_SUCCESS);
  }
  CUresult Update(CUgraphExecUpdateResultInfo* info) {
    *info = CUgraphExecUpdateResultInfo{};
    info->result = CU_GRAPH_EXEC_UPDATE_ERROR;
    return api().cuGraphExecUpdate(exec_, g2_, info);
  }

  CUmodule module_ = nullptr;
  CUfunction empty_ = nullptr, add_ = nullptr, atomic_add_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr buf_ = 0;
  CUdeviceptr p_ = 0;
  unsigned v_ = 3;
  void* args_[2] = {&p_, &v_};
  CUDA_KERNEL_NODE_PARAMS kp_{};
  CUDA_MEMSET_NODE_PARAMS ms_{};
  CUgraph g_ = nullptr, g2_ = nullptr;
  CUgraphNode k_ = nullptr, m_ = nullptr, k2_ = nullptr, m2_ = nullptr;
  CUgraphExec exec_ = nullptr;
  // The probe's second parameters: add(buf + 128, 7).
  CUdeviceptr p2_ = 0;
  unsigned v2_ = 7;
  void* args2_[2] = {&p2_, &v2_};
};

TEST_P(GraphUpdateTest, ChangedKernelParametersUpdateInPlace) {
  p2_ = buf_ + 128;
  CUDA_KERNEL_NODE_PARAMS kp2 = kp_;
  kp2.kernelParams = args2_;
  ASSERT_NO_FATAL_FAILURE(MakeG2(kp2, ms_));
  CUgraphExecUpdateResultInfo info;
  EXPECT_EQ(Update(&info), CUDA_SUCCESS);  // measured
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  EXPECT_EQ(info.errorNode, nullptr);
  EXPECT_EQ(info.errorFromNode, nullptr);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 3u);  // measured: buf[0] = 3, buf[128] = 7, buf[64] = 0x11
  EXPECT_EQ(Word(128), 7u);
  EXPECT_EQ(Byte(64), 0x11u);
  EXPECT_EQ(Byte(256), 0x00u);
}

TEST_P(GraphUpdateTest, AnExtraNodeIsATopologyChangeAndLeavesTheExecutableGraph) {
  ASSERT_NO_FATAL_FAILURE(MakeG2(kp_, ms_));
  CUgraphNode extra = nullptr;
  ASSERT_EQ(api().cuGraphAddEmptyNode(&extra, g2_, &m2_, 1), CUDA_SUCCESS);
  CUgraphExecUpdateResultInfo info;
  EXPECT_EQ(Update(&info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);  // measured
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
  EXPECT_EQ(info.errorNode, nullptr);
  EXPECT_EQ(info.errorFromNode, nullptr);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 6u);  // measured: the old graph ran again
  EXPECT_EQ(Word(128), 0u);
  EXPECT_EQ(Byte(64), 0x11u);
}

TEST_P(GraphUpdateTest, ChangingTheFunctionInTheSameContextUpdates) {
  CUDA_KERNEL_NODE_PARAMS kp2 = kp_;
  kp2.func = empty_;
  kp2.kernelParams = nullptr;
  ASSERT_NO_FATAL_FAILURE(MakeG2(kp2, ms_));
  CUgraphExecUpdateResultInfo info;
  EXPECT_EQ(Update(&info), CUDA_SUCCESS);  // measured
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  EXPECT_EQ(info.errorNode, nullptr);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 3u);  // measured: the empty kernel ran
  EXPECT_EQ(Word(128), 0u);
  EXPECT_EQ(Byte(64), 0x11u);
}

TEST_P(GraphUpdateTest, ChangingTheGridUpdates) {
  // The atomic kernel in both graphs, so two blocks give a race-free answer.
  CUgraph g = nullptr;
  CUgraphNode k = nullptr, m = nullptr;
  CUDA_KERNEL_NODE_PARAMS kp = kp_;
  kp.func = atomic_add_;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddKernelNode(&k, g, nullptr, 0, &kp), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddMemsetNode(&m, g, &k, 1, &ms_, ctx()), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphExecDestroy(exec_), CUDA_SUCCESS);
  exec_ = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec_, g, 0), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 6u);
  CUDA_KERNEL_NODE_PARAMS kp2 = kp;
  kp2.gridDimX = 2;
  ASSERT_NO_FATAL_FAILURE(MakeG2(kp2, ms_));
  CUgraphExecUpdateResultInfo info;
  EXPECT_EQ(Update(&info), CUDA_SUCCESS);  // measured
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 12u);  // two blocks each added 3
  EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
}

TEST_P(GraphUpdateTest, AnotherNodeTypeInTheSamePlaceIsANodeTypeChange) {
  // Same topology (kernel -> one node), the memset replaced by an empty node.
  ASSERT_EQ(api().cuGraphCreate(&g2_, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddKernelNode(&k2_, g2_, nullptr, 0, &kp_), CUDA_SUCCESS);
  CUgraphNode e = nullptr;
  ASSERT_EQ(api().cuGraphAddEmptyNode(&e, g2_, &k2_, 1), CUDA_SUCCESS);
  CUgraphExecUpdateResultInfo info;
  EXPECT_EQ(Update(&info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);  // measured
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
  EXPECT_NE(info.errorNode, nullptr);  // measured: "errorNode set"
  EXPECT_EQ(info.errorNode, e);        // UNMEASURED: which node (the documentation: hGraph's)
  EXPECT_EQ(info.errorFromNode, nullptr);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 6u);  // measured
  EXPECT_EQ(Byte(64), 0x11u);
}

TEST_P(GraphUpdateTest, ChangingTheMemsetValueUpdates) {
  CUDA_MEMSET_NODE_PARAMS ms2 = ms_;
  ms2.value = 0x22;
  ASSERT_NO_FATAL_FAILURE(MakeG2(kp_, ms2));
  CUgraphExecUpdateResultInfo info;
  EXPECT_EQ(Update(&info), CUDA_SUCCESS);  // measured
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 6u);  // measured
  EXPECT_EQ(Byte(64), 0x22u);
  EXPECT_EQ(Byte(256), 0x00u);
}

TEST_P(GraphUpdateTest, ChangingTheMemsetTargetUpdates) {
  CUDA_MEMSET_NODE_PARAMS ms2 = ms_;
  ms2.dst = buf_ + 256;
  ASSERT_NO_FATAL_FAILURE(MakeG2(kp_, ms2));
  CUgraphExecUpdateResultInfo info;
  EXPECT_EQ(Update(&info), CUDA_SUCCESS);  // measured
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 6u);  // measured
  EXPECT_EQ(Byte(256), 0x11u);
  EXPECT_EQ(Byte(64), 0x11u);  // from the first launch
}

TEST_P(GraphUpdateTest, KernelNodeSetterThenUpdateBackToTheOriginal) {
  p2_ = buf_ + 128;
  CUDA_KERNEL_NODE_PARAMS kp3 = kp_;
  kp3.kernelParams = args2_;
  EXPECT_EQ(api().cuGraphExecKernelNodeSetParams(exec_, k_, &kp3), CUDA_SUCCESS);  // measured
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 3u);  // the setter took effect at the next launch
  EXPECT_EQ(Word(128), 7u);
  // Back to the original graph (measured: SUCCESS).
  CUgraphExecUpdateResultInfo info{};
  EXPECT_EQ(api().cuGraphExecUpdate(exec_, g_, &info), CUDA_SUCCESS);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Word(0), 6u);
  EXPECT_EQ(Word(128), 7u);
}

TEST_P(GraphUpdateTest, MemsetAndMemcpyNodeSetters) {
  // Memset: a new target and value, 1D (UNMEASURED).
  CUDA_MEMSET_NODE_PARAMS ms2 = ms_;
  ms2.dst = buf_ + 512;
  ms2.value = 0x33;
  EXPECT_EQ(api().cuGraphExecMemsetNodeSetParams(exec_, m_, &ms2, ctx()), CUDA_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(Launch());
  EXPECT_EQ(Byte(512), 0x33u);
  EXPECT_EQ(Byte(512 + 15), 0x33u);
  EXPECT_EQ(Byte(512 + 16), 0x00u);
  // The wrong node kind, a null parameter block, a node of another graph (UNMEASURED).
  EXPECT_EQ(api().cuGraphExecMemsetNodeSetParams(exec_, k_, &ms2, ctx()), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphExecKernelNodeSetParams(exec_, m_, &kp_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphExecKernelNodeSetParams(exec_, k_, nullptr), CUDA_ERROR_INVALID_VALUE);

  // Memcpy: a graph whose one memcpy node is re-pointed (UNMEASURED).
  CUgraph g = nullptr;
  CUgraphNode copy = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = buf_ + 512;
  cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.dstDevice = buf_ + 1024;
  cp.WidthInBytes = 16;
  cp.Height = 1;
  cp.Depth = 1;
  ASSERT_EQ(api().cuGraphAddMemcpyNode(&copy, g, nullptr, 0, &cp, ctx()), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec, g, 0), CUDA_SUCCESS);
  CUDA_MEMCPY3D cp2 = cp;
  cp2.dstDevice = buf_ + 2048;
  EXPECT_EQ(api().cuGraphExecMemcpyNodeSetParams(exec, copy, &cp2, ctx()), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Byte(2048), 0x33u);
  EXPECT_EQ(Byte(1024), 0x00u);
  // A zero-length copy is refused (the CUDA documentation: not supported).
  CUDA_MEMCPY3D empty = cp;
  empty.WidthInBytes = 0;
  EXPECT_EQ(api().cuGraphExecMemcpyNodeSetParams(exec, copy, &empty, ctx()),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(GraphUpdateTest);

}  // namespace
}  // namespace cuhal::testing
