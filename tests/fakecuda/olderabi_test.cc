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

#include <cstdint>
#include <cstring>

#include "tests/fakecuda/graph_fixture.h"
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
  ASSERT_EQ(api().cuModuleLoadData(&module, kGraphTestPtx), CUDA_SUCCESS);
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

// Measured on the H100 (streamctx_probe "ptsz"): the v1 stream memory operations answer
// CUDA_ERROR_NOT_SUPPORTED on a created stream and write nothing (the v1 mem-ops attributes are
// 0). UNMEASURED: that cuGetProcAddress hands them out at 11.0 (the probe took the plain symbols).
TEST_P(OlderAbiTest, StreamMemoryOperationsV1AreNotSupported) {
  using Value32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
  using Value64 = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
  using Batch = CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);
  auto write32 = Older<Value32>("cuStreamWriteValue32", 11000);
  auto write64 = Older<Value64>("cuStreamWriteValue64", 11000);
  auto wait32 = Older<Value32>("cuStreamWaitValue32", 11000);
  auto wait64 = Older<Value64>("cuStreamWaitValue64", 11000);
  auto batch = Older<Batch>("cuStreamBatchMemOp", 11000);
  ASSERT_TRUE(write32 && write64 && wait32 && wait64 && batch);
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr d = 0;
  ASSERT_EQ(api().cuMemAlloc(&d, 64), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32(d, 0, 16), CUDA_SUCCESS);
  EXPECT_EQ(write32(s, d, 31, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(write64(s, d + 8, 32, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(wait32(s, d, 31, CU_STREAM_WAIT_VALUE_EQ), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(wait64(s, d + 8, 32, CU_STREAM_WAIT_VALUE_EQ), CUDA_ERROR_NOT_SUPPORTED);
  CUstreamBatchMemOpParams op;
  std::memset(&op, 0, sizeof op);
  op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op.writeValue.address = d + 16;
  op.writeValue.value = 33;
  EXPECT_EQ(batch(s, 1, &op, 0), CUDA_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  unsigned int words[6] = {1, 1, 1, 1, 1, 1};
  ASSERT_EQ(api().cuMemcpyDtoH(words, d, sizeof words), CUDA_SUCCESS);
  for (unsigned int w : words) EXPECT_EQ(w, 0u) << "nothing written";
  EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d), CUDA_SUCCESS);
}

// The 32-bit (CUDA 2.x) memory calls. Device memory lies above 4 GiB (the fake's above 2^48),
// so a v1 allocation cannot be named in 32 bits and a truncated 64-bit pointer names nothing.
// UNMEASURED: the real driver's answers (olderabi_probe "mem:*" has not run on a GPU yet).
TEST_P(OlderAbiTest, ThirtyTwoBitMemoryCallsCannotNameDeviceMemory) {
  auto alloc = Older<CUresult (*)(DevicePtrV1*, unsigned int)>("cuMemAlloc", 3000);
  auto free_v1 = Older<CUresult (*)(DevicePtrV1)>("cuMemFree", 3000);
  auto htod = Older<CUresult (*)(DevicePtrV1, const void*, unsigned int)>("cuMemcpyHtoD", 3000);
  auto dtoh = Older<CUresult (*)(void*, DevicePtrV1, unsigned int)>("cuMemcpyDtoH", 3000);
  auto memset32 =
      Older<CUresult (*)(DevicePtrV1, unsigned int, unsigned int)>("cuMemsetD32", 3000);
  auto range = Older<CUresult (*)(DevicePtrV1*, unsigned int*, DevicePtrV1)>(
      "cuMemGetAddressRange", 3000);
  ASSERT_TRUE(alloc && free_v1 && htod && dtoh && memset32 && range);
  CUdeviceptr d = 0;
  ASSERT_EQ(api().cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  ASSERT_GT(d, CUdeviceptr{0xffffffffu});
  ASSERT_EQ(api().cuMemsetD32(d, 0x11111111u, 1024), CUDA_SUCCESS);
  const auto truncated = static_cast<DevicePtrV1>(d);
  DevicePtrV1 p = 0x12345678;
  EXPECT_EQ(alloc(&p, 4096), CUDA_ERROR_INVALID_VALUE);  // UNMEASURED
  EXPECT_EQ(p, 0x12345678u) << "nothing written";        // UNMEASURED
  unsigned int v = 0xa5a5a5a5;
  EXPECT_EQ(htod(truncated, &v, 4), CUDA_ERROR_INVALID_VALUE);      // UNMEASURED
  EXPECT_EQ(dtoh(&v, truncated, 4), CUDA_ERROR_INVALID_VALUE);      // UNMEASURED
  EXPECT_EQ(memset32(truncated, 0, 1), CUDA_ERROR_INVALID_VALUE);   // UNMEASURED
  DevicePtrV1 base = 0;
  unsigned int size = 0;
  EXPECT_EQ(range(&base, &size, truncated), CUDA_ERROR_NOT_FOUND);  // UNMEASURED
  if (truncated != 0) {
    EXPECT_EQ(free_v1(truncated), CUDA_ERROR_INVALID_VALUE);  // UNMEASURED
  }
  EXPECT_EQ(free_v1(0x1000u), CUDA_ERROR_INVALID_VALUE);                        // UNMEASURED
  EXPECT_EQ(free_v1(0), CUDA_SUCCESS) << "as cuMemFree(0)";                    // UNMEASURED
  unsigned int word = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&word, d, 4), CUDA_SUCCESS);
  EXPECT_EQ(word, 0x11111111u) << "the 64-bit allocation is untouched";
  EXPECT_EQ(api().cuMemFree(d), CUDA_SUCCESS);
}

// UNMEASURED: a device with more than 4 GiB has no 32-bit total; the v1 forms refuse it.
TEST_P(OlderAbiTest, ThirtyTwoBitSizesRefuseMoreThanFourGiB) {
  auto info = Older<CUresult (*)(unsigned int*, unsigned int*)>("cuMemGetInfo", 3000);
  auto total = Older<CUresult (*)(unsigned int*, CUdevice)>("cuDeviceTotalMem", 3000);
  ASSERT_TRUE(info && total);
  size_t total64 = 0;
  ASSERT_EQ(api().cuDeviceTotalMem(&total64, 0), CUDA_SUCCESS);
  if (total64 <= 0xffffffffu) GTEST_SKIP() << "a device of 4 GiB or less";
  unsigned int f = 7;
  unsigned int t = 7;
  EXPECT_EQ(info(&f, &t), CUDA_ERROR_INVALID_VALUE);  // UNMEASURED
  EXPECT_EQ(t, 7u);                                   // UNMEASURED
  EXPECT_EQ(total(&t, 0), CUDA_ERROR_INVALID_VALUE);  // UNMEASURED
  EXPECT_EQ(total(&t, 99), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(total(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
}

// The v1 pinned allocation takes a 32-bit size and gives a host pointer (no narrowing).
TEST_P(OlderAbiTest, AllocHostV1AndHostRegisterV1) {
  auto alloc_host = Older<CUresult (*)(void**, unsigned int)>("cuMemAllocHost", 3000);
  auto reg = Older<CUresult (*)(void*, size_t, unsigned int)>("cuMemHostRegister", 6000);
  ASSERT_TRUE(alloc_host && reg);
  void* h = nullptr;
  ASSERT_EQ(alloc_host(&h, 4096), CUDA_SUCCESS);
  ASSERT_NE(h, nullptr);
  std::memset(h, 0x5a, 4096);
  EXPECT_EQ(alloc_host(nullptr, 64), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFreeHost(h), CUDA_SUCCESS);
  alignas(4096) static unsigned char buf[1 << 16];
  EXPECT_EQ(reg(buf, sizeof buf, 0), CUDA_SUCCESS);
  EXPECT_EQ(reg(buf, sizeof buf, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(api().cuMemHostUnregister(buf), CUDA_SUCCESS);
  EXPECT_EQ(reg(nullptr, 4096, 0), CUDA_ERROR_INVALID_VALUE);
}

// Fake only (garbage handles may crash the real driver): every older ABI answers an error for
// null pointers, garbage handles and huge sizes, without crashing.
TEST_P(OlderAbiTest, FakeAnswersGarbageWithErrors) {
  if (!IsFake()) GTEST_SKIP() << "garbage handles may crash the real driver";
  const auto garbage = reinterpret_cast<void*>(static_cast<uintptr_t>(0x5a5a5a5a5a5a0000ull));
  auto alloc_pitch = Older<CUresult (*)(DevicePtrV1*, unsigned int*, unsigned int, unsigned int,
                                        unsigned int)>("cuMemAllocPitch", 3000);
  auto host_ptr = Older<CUresult (*)(DevicePtrV1*, void*, unsigned int)>(
      "cuMemHostGetDevicePointer", 3000);
  auto global = Older<CUresult (*)(DevicePtrV1*, unsigned int*, CUmodule, const char*)>(
      "cuModuleGetGlobal", 3000);
  auto memset2d = Older<CUresult (*)(DevicePtrV1, unsigned int, unsigned int, unsigned int,
                                     unsigned int)>("cuMemsetD2D32", 3000);
  auto dtod = Older<CUresult (*)(DevicePtrV1, DevicePtrV1, unsigned int, CUstream)>(
      "cuMemcpyDtoDAsync", 3000);
  auto mapped = Older<CUresult (*)(DevicePtrV1*, unsigned int*, CUgraphicsResource)>(
      "cuGraphicsResourceGetMappedPointer", 3000);
  auto instantiate = Older<CUresult (*)(CUgraphExec*, CUgraph, CUgraphNode*, char*, size_t)>(
      "cuGraphInstantiate", 11000);
  auto update = Older<CUresult (*)(CUgraphExec, CUgraph, CUgraphNode*,
                                   CUgraphExecUpdateResult*)>("cuGraphExecUpdate", 11000);
  auto batch = Older<CUresult (*)(CUdeviceptr*, CUdeviceptr*, size_t*, size_t,
                                  CUmemcpyAttributes*, size_t*, size_t, size_t*, CUstream)>(
      "cuMemcpyBatchAsync", 12080);
  auto destroy = Older<CUresult (*)(CUcontext)>("cuCtxDestroy", 3020);
  ASSERT_TRUE(alloc_pitch && host_ptr && global && memset2d && dtod && mapped && instantiate &&
              update && batch && destroy);
  DevicePtrV1 p = 0;
  unsigned int u = 0;
  EXPECT_NE(alloc_pitch(&p, &u, 0xffffffffu, 0xffffffffu, 16), CUDA_SUCCESS);
  EXPECT_NE(alloc_pitch(nullptr, nullptr, 64, 4, 4), CUDA_SUCCESS);
  EXPECT_NE(host_ptr(&p, garbage, 0), CUDA_SUCCESS);
  EXPECT_NE(global(&p, &u, static_cast<CUmodule>(garbage), "x"), CUDA_SUCCESS);
  EXPECT_NE(memset2d(0x1000u, 0xffffffffu, 1, 0xffffffffu, 0xffffffffu), CUDA_SUCCESS);
  EXPECT_NE(dtod(0x1000u, 0x2000u, 0xffffffffu, static_cast<CUstream>(garbage)), CUDA_SUCCESS);
  EXPECT_NE(mapped(&p, &u, static_cast<CUgraphicsResource>(garbage)), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  CUgraphNode node = nullptr;
  char log[8];
  EXPECT_NE(instantiate(&exec, static_cast<CUgraph>(garbage), &node, log, sizeof log),
            CUDA_SUCCESS);
  CUgraphExecUpdateResult result{};
  EXPECT_NE(update(static_cast<CUgraphExec>(garbage), static_cast<CUgraph>(garbage), &node,
                   &result),
            CUDA_SUCCESS);
  size_t fail = 0;
  EXPECT_NE(batch(nullptr, nullptr, nullptr, 1, nullptr, nullptr, 0, &fail, nullptr),
            CUDA_SUCCESS);
  EXPECT_NE(destroy(static_cast<CUcontext>(garbage)), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(OlderAbiTest);

}  // namespace
}  // namespace cuhal::testing
