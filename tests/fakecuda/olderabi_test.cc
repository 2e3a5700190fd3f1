// Copyright 2026 The cuhal Authors.
// Conformance: the older ABIs of cuda.h's versioned entry points (issue 14), which the real
// driver still exports under their plain names and which cuGetProcAddress hands out for old
// cudaVersion arguments (fakecuda/entry/olderabi_entry.cc): the 32-bit memory calls (CUDA 2.x),
// the pre-4.0 context/stream/event calls, the CUDA 10/11 graph forms and the CUdevice forms of
// cuMemAdvise / cuMemPrefetchAsync. Each test resolves the old form through cuGetProcAddress at a
// version before the current form and calls it with the old signature. The expectations come
// from ci/gpu-probes/olderabi_probe.cc on the H100 (driver 580.159.04; docs/driver_facts.md,
// "Older ABIs"); one not confirmed there carries "// UNMEASURED" on its line.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

using DevicePtrV1 = unsigned int;

class OlderAbiTest : public PrimaryContextTest {
 protected:
  // The entry point `name` as cuGetProcAddress hands it out for `version`, or null.
  template <typename Fn>
  Fn Older(const char* name, int version) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (api().cuGetProcAddress == nullptr ||
        api().cuGetProcAddress(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
            CUDA_SUCCESS) {
      return nullptr;
    }
    Fn fn = nullptr;
    static_assert(sizeof(fn) == sizeof(p));
    std::memcpy(&fn, &p, sizeof(fn));
    return fn;
  }
  void* Current(const char* name) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    api().cuGetProcAddress(name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    return p;
  }
};

constexpr char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
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

// cuGetProcAddress hands out another function than the current form below the version that
// introduced the current form, and the current form from that version on.
TEST_P(OlderAbiTest, ProcAddressHandsOutTheOlderAbiBelowTheCurrentForm) {
  struct Row {
    const char* name;
    int older;    // a version that gets the older ABI
    int current;  // the version the current form came with
  };
  for (const Row& row : {Row{"cuMemAlloc", 3000, 3020}, Row{"cuMemcpyHtoD", 3000, 3020},
                         Row{"cuCtxDestroy", 3020, 4000}, Row{"cuStreamDestroy", 3020, 4000},
                         Row{"cuGraphExecUpdate", 11000, 12000},
                         Row{"cuMemAdvise", 12000, 12020}}) {
    SCOPED_TRACE(row.name);
    void* older = Older<void*>(row.name, row.older);
    void* current = Current(row.name);
    ASSERT_NE(older, nullptr);
    ASSERT_NE(current, nullptr);
    EXPECT_NE(older, current);
    EXPECT_EQ(Older<void*>(row.name, row.current), current);
  }
}

TEST_P(OlderAbiTest, ContextPushPopAndDestroyV1ActLikeTheCurrentForms) {
  auto push = Older<CUresult (*)(CUcontext)>("cuCtxPushCurrent", 3020);
  auto pop = Older<CUresult (*)(CUcontext*)>("cuCtxPopCurrent", 3020);
  auto destroy = Older<CUresult (*)(CUcontext)>("cuCtxDestroy", 3020);
  ASSERT_TRUE(push && pop && destroy);
  CUcontext created = nullptr;
  ASSERT_EQ(api().cuCtxCreate(&created, nullptr, 0, 0), CUDA_SUCCESS);
  CUcontext popped = nullptr;
  EXPECT_EQ(pop(&popped), CUDA_SUCCESS);
  EXPECT_EQ(popped, created);
  CUcontext current = nullptr;
  EXPECT_EQ(api().cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, ctx());
  EXPECT_EQ(push(created), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, created);
  EXPECT_EQ(pop(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(push(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(destroy(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(destroy(created), CUDA_SUCCESS);
  EXPECT_EQ(destroy(created), CUDA_ERROR_CONTEXT_IS_DESTROYED);  // UNMEASURED
}

TEST_P(OlderAbiTest, StreamAndEventDestroyV1) {
  auto stream_destroy = Older<CUresult (*)(CUstream)>("cuStreamDestroy", 3020);
  auto event_destroy = Older<CUresult (*)(CUevent)>("cuEventDestroy", 3020);
  ASSERT_TRUE(stream_destroy && event_destroy);
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(stream_destroy(s), CUDA_SUCCESS);
  EXPECT_EQ(stream_destroy(nullptr), CUDA_ERROR_INVALID_HANDLE);  // UNMEASURED
  CUevent e = nullptr;
  ASSERT_EQ(api().cuEventCreate(&e, 0), CUDA_SUCCESS);
  EXPECT_EQ(event_destroy(e), CUDA_SUCCESS);
  EXPECT_EQ(event_destroy(nullptr), CUDA_ERROR_INVALID_HANDLE);  // UNMEASURED
}

TEST_P(OlderAbiTest, AdviseAndPrefetchV1TakeADeviceOrdinal) {
  auto advise = Older<CUresult (*)(CUdeviceptr, size_t, CUmem_advise, CUdevice)>("cuMemAdvise",
                                                                                12000);
  auto prefetch = Older<CUresult (*)(CUdeviceptr, size_t, CUdevice, CUstream)>(
      "cuMemPrefetchAsync", 12000);
  ASSERT_TRUE(advise && prefetch);
  CUdeviceptr m = 0;
  ASSERT_EQ(api().cuMemAllocManaged(&m, 1 << 20, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(advise(m, 1 << 20, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 0), CUDA_SUCCESS);
  EXPECT_EQ(advise(m, 1 << 20, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU),
            CUDA_SUCCESS);
  EXPECT_EQ(advise(m, 1 << 20, CU_MEM_ADVISE_SET_READ_MOSTLY, 0), CUDA_SUCCESS);
  EXPECT_EQ(advise(m, 1 << 20, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 99),
            CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(advise(m, 1 << 20, static_cast<CUmem_advise>(99), 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(prefetch(m, 1 << 20, 0, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(prefetch(m, 1 << 20, CU_DEVICE_CPU, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(prefetch(m, 1 << 20, 99, nullptr), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(m), CUDA_SUCCESS);
}

TEST_P(OlderAbiTest, GraphKernelNodeV1AndExecUpdateV1) {
  auto add_kernel = Older<CUresult (*)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t,
                                       const CUDA_KERNEL_NODE_PARAMS_v1*)>(
      "cuGraphAddKernelNode", 11000);
  auto exec_set = Older<CUresult (*)(CUgraphExec, CUgraphNode,
                                     const CUDA_KERNEL_NODE_PARAMS_v1*)>(
      "cuGraphExecKernelNodeSetParams", 11000);
  auto update = Older<CUresult (*)(CUgraphExec, CUgraph, CUgraphNode*,
                                   CUgraphExecUpdateResult*)>("cuGraphExecUpdate", 11000);
  ASSERT_TRUE(add_kernel && exec_set && update);
  CUmodule module = nullptr;
  CUfunction add = nullptr;
  ASSERT_EQ(api().cuModuleLoadData(&module, kPtx), CUDA_SUCCESS);
  ASSERT_EQ(api().cuModuleGetFunction(&add, module, "add_u32"), CUDA_SUCCESS);
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 64), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32(buf, 0, 16), CUDA_SUCCESS);
  unsigned int inc = 5;
  void* args[] = {&buf, &inc};
  CUDA_KERNEL_NODE_PARAMS_v1 p;
  std::memset(&p, 0, sizeof p);
  p.func = add;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  CUgraph g = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUgraphNode n = nullptr;
  ASSERT_EQ(add_kernel(&n, g, nullptr, 0, &p), CUDA_SUCCESS);
  EXPECT_EQ(add_kernel(&n, g, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec, g, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  unsigned int value = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&value, buf, 4), CUDA_SUCCESS);
  EXPECT_EQ(value, 5u);
  inc = 7;
  EXPECT_EQ(exec_set(exec, n, &p), CUDA_SUCCESS);
  EXPECT_EQ(exec_set(exec, n, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(&value, buf, 4), CUDA_SUCCESS);
  EXPECT_EQ(value, 12u);
  // Update from the same graph, then from a graph of another topology.
  CUgraphNode error_node = nullptr;
  auto result = static_cast<CUgraphExecUpdateResult>(77);
  EXPECT_EQ(update(exec, g, &error_node, &result), CUDA_SUCCESS);
  EXPECT_EQ(result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  EXPECT_EQ(error_node, nullptr);
  CUgraph other = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&other, 0), CUDA_SUCCESS);
  CUgraphNode a = nullptr;
  CUgraphNode b = nullptr;
  ASSERT_EQ(api().cuGraphAddEmptyNode(&a, other, nullptr, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddEmptyNode(&b, other, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(update(exec, other, &error_node, &result), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
  EXPECT_EQ(api().cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleUnload(module), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(OlderAbiTest);

}  // namespace
}  // namespace cuhal::testing
