// Copyright 2026 The cuhal Authors.
// Conformance: CUDA graphs (the node kinds a graph-based command buffer needs). Codes marked
// "measured" were read on the GPU machine by tests/fakecuda_dropin/probe_program.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "fakecuda/sample_kernels.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

class GraphTest : public BackendTest {
 protected:
  fakecuda::SampleKernels kernels_;
};

void CUDA_CB CountCall(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

TEST_P(GraphTest, MemsetKernelMemcpyHostNodesRunInDependencyOrder) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUmodule module = nullptr;
  CUfunction add_one = nullptr;
  ASSERT_EQ(api().cuModuleLoadData(&module, fakecuda::kSamplePtx), CUDA_SUCCESS);
  ASSERT_EQ(api().cuModuleGetFunction(&add_one, module, "add_one"), CUDA_SUCCESS);
  constexpr unsigned kN = 512;
  CUdeviceptr data = 0;
  ASSERT_EQ(api().cuMemAlloc(&data, kN * sizeof(unsigned)), CUDA_SUCCESS);
  std::vector<unsigned> host(kN, 0);
  std::atomic<int> host_calls{0};

  CUgraph graph = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  // memset(5) -> add_one -> memcpy to host -> host function; an empty node joins them first.
  CUgraphNode start = nullptr, memset = nullptr, kernel = nullptr, copy = nullptr, done = nullptr;
  ASSERT_EQ(api().cuGraphAddEmptyNode(&start, graph, nullptr, 0), CUDA_SUCCESS);
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = data;
  ms.value = 5;
  ms.elementSize = 4;
  ms.width = kN;
  ms.height = 1;
  ASSERT_EQ(api().cuGraphAddMemsetNode(&memset, graph, &start, 1, &ms, ctx.get()), CUDA_SUCCESS);
  unsigned n = kN;
  void* params[] = {&data, &n};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = add_one;
  kp.gridDimX = kN / 256;
  kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 256;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = params;
  ASSERT_EQ(api().cuGraphAddKernelNode(&kernel, graph, &memset, 1, &kp), CUDA_SUCCESS);
  n = 0;  // parameters were copied when the node was added
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = data;
  cp.dstMemoryType = CU_MEMORYTYPE_HOST;
  cp.dstHost = host.data();
  cp.WidthInBytes = kN * sizeof(unsigned);
  cp.Height = 1;
  cp.Depth = 1;
  ASSERT_EQ(api().cuGraphAddMemcpyNode(&copy, graph, &kernel, 1, &cp, ctx.get()), CUDA_SUCCESS);
  CUDA_HOST_NODE_PARAMS hp{};
  hp.fn = CountCall;
  hp.userData = &host_calls;
  ASSERT_EQ(api().cuGraphAddHostNode(&done, graph, &copy, 1, &hp), CUDA_SUCCESS);

  CUgraphExec exec = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  for (int launch = 1; launch <= 2; ++launch) {
    std::fill(host.begin(), host.end(), 0u);
    ASSERT_EQ(api().cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
    EXPECT_EQ(host_calls.load(), launch);
    for (unsigned i = 0; i < kN; ++i) ASSERT_EQ(host[i], 6u) << "launch " << launch << " element " << i;
  }
  // The executable graph is a snapshot: destroying the graph leaves it usable.
  ASSERT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(host_calls.load(), 3);
  EXPECT_EQ(api().cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(data), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleUnload(module), CUDA_SUCCESS);
}

TEST_P(GraphTest, EventRecordNodesTimeTheGraph) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUevent begin = nullptr, end = nullptr;
  ASSERT_EQ(api().cuEventCreate(&begin, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventCreate(&end, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  CUdeviceptr data = 0;
  ASSERT_EQ(api().cuMemAlloc(&data, 1 << 20), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUgraphNode record_begin = nullptr, memset = nullptr, record_end = nullptr;
  ASSERT_EQ(api().cuGraphAddEventRecordNode(&record_begin, graph, nullptr, 0, begin), CUDA_SUCCESS);
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = data;
  ms.value = 1;
  ms.elementSize = 1;
  ms.width = 1 << 20;
  ms.height = 1;
  ASSERT_EQ(api().cuGraphAddMemsetNode(&memset, graph, &record_begin, 1, &ms, ctx.get()),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddEventRecordNode(&record_end, graph, &memset, 1, end), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventSynchronize(end), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventQuery(begin), CUDA_SUCCESS);
  float ms_elapsed = -1;
  ASSERT_EQ(api().cuEventElapsedTime(&ms_elapsed, begin, end), CUDA_SUCCESS);
  EXPECT_GE(ms_elapsed, 0.0f);
  unsigned char byte = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&byte, data + 12345, 1), CUDA_SUCCESS);
  EXPECT_EQ(byte, 1);
  EXPECT_EQ(api().cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(data), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(begin), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(end), CUDA_SUCCESS);
}

TEST_P(GraphTest, EventWaitNodeOrdersAfterAnotherStream) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUstream producer = nullptr, consumer = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&producer, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamCreate(&consumer, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUevent ready = nullptr;
  ASSERT_EQ(api().cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  CUdeviceptr data = 0;
  ASSERT_EQ(api().cuMemAlloc(&data, sizeof(unsigned)), CUDA_SUCCESS);
  unsigned value = 77;
  std::vector<unsigned> staged(1, 0);
  // The producer writes 77, then records `ready`; the graph waits for it and copies the value.
  ASSERT_EQ(api().cuMemsetD32Async(data, value, 1, producer), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventRecord(ready, producer), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUgraphNode wait = nullptr, copy = nullptr;
  ASSERT_EQ(api().cuGraphAddEventWaitNode(&wait, graph, nullptr, 0, ready), CUDA_SUCCESS);
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = data;
  cp.dstMemoryType = CU_MEMORYTYPE_HOST;
  cp.dstHost = staged.data();
  cp.WidthInBytes = sizeof(unsigned);
  cp.Height = 1;
  cp.Depth = 1;
  ASSERT_EQ(api().cuGraphAddMemcpyNode(&copy, graph, &wait, 1, &cp, ctx.get()), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(exec, consumer), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(consumer), CUDA_SUCCESS);
  EXPECT_EQ(staged[0], 77u);
  EXPECT_EQ(api().cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(ready), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(producer), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(consumer), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(data), CUDA_SUCCESS);
}

TEST_P(GraphTest, ArgumentErrors) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  EXPECT_EQ(api().cuGraphCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphCreate(&graph, 1), CUDA_ERROR_INVALID_VALUE);  // measured
  ASSERT_EQ(api().cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUgraphNode node = nullptr;
  EXPECT_EQ(api().cuGraphAddEmptyNode(nullptr, graph, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphAddEmptyNode(&node, nullptr, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphAddEmptyNode(&node, graph, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuGraphAddEmptyNode(&node, graph, nullptr, 0), CUDA_SUCCESS);
  // A dependency from another graph.
  CUgraph other = nullptr;
  CUgraphNode foreign = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&other, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddEmptyNode(&foreign, other, nullptr, 0), CUDA_SUCCESS);
  CUgraphNode bad = nullptr;
  EXPECT_EQ(api().cuGraphAddEmptyNode(&bad, graph, &foreign, 1), CUDA_ERROR_INVALID_VALUE);  // measured
  // Host node without a function; memset of a bad element size.
  CUDA_HOST_NODE_PARAMS hp{};
  EXPECT_EQ(api().cuGraphAddHostNode(&bad, graph, nullptr, 0, &hp), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr data = 0;
  ASSERT_EQ(api().cuMemAlloc(&data, 64), CUDA_SUCCESS);
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = data;
  ms.elementSize = 3;
  ms.width = 4;
  ms.height = 1;
  EXPECT_EQ(api().cuGraphAddMemsetNode(&bad, graph, nullptr, 0, &ms, ctx.get()),
            CUDA_ERROR_INVALID_VALUE);
  CUgraphExec exec = nullptr;
  EXPECT_EQ(api().cuGraphInstantiateWithFlags(nullptr, graph, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphInstantiateWithFlags(&exec, graph, 1ull << 20),
            CUDA_ERROR_INVALID_VALUE);  // measured
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(data), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(GraphTest);

}  // namespace
}  // namespace cuhal::testing
