// Copyright 2026 The cuhal Authors.
// Conformance: the graph extras of issue 14 (fakecuda/entry/graphx_entry.cc): user objects and
// when their destructors run, cuGraphNodeGet/SetEnabled, cuGraphExecGetFlags,
// cuGraphInstantiateWithParams, the host / event node getters and setters, kernel node attributes
// and parameters, cuGraphChildGraphNodeGetGraph, cuGraphNodeFindInClone, the memory alloc/free
// node getters, cuGraphRemoveDependencies, cuGraphDebugDotPrint and batch memory operation nodes.
// The entry points are not in cuhal's table, so they are resolved with cuGetProcAddress.
// "Measured": the answers of an H100, driver 580.159.04, 2026-12-06, to the same questions in
// ci/gpu-probes/graphx_probe.cc (ci/gpu-probes/results/2026-12-06-h100-graphx.real.txt; case
// names in parentheses); "UNMEASURED": cuda.h's word (docs/driver_facts.md, "Graph extras").
#include <gtest/gtest.h>

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "tests/fakecuda/graph_fixture.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

std::atomic<int> g_graphx_destroyed{0};
void GraphxCountDestroy(void* data) { static_cast<std::atomic<int>*>(data)->fetch_add(1); }
std::atomic<int> g_graphx_host_a{0}, g_graphx_host_b{0};
void GraphxHostA(void*) { g_graphx_host_a.fetch_add(1); }
void GraphxHostB(void*) { g_graphx_host_b.fetch_add(1); }

// Waits up to 2 s for `count` to reach `want` (destructors run on a driver thread).
int GraphxWaitFor(const std::atomic<int>& count, int want) {
  for (int i = 0; i < 2000 && count.load() < want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return count.load();
}

class GraphxTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(api().cuModuleLoadData(&module_, kGraphTestPtx), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleGetFunction(&add_, module_, "add_u32"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemAlloc(&buf_, 4096), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemsetD8(buf_, 0, 4096), CUDA_SUCCESS);
    ASSERT_EQ(api().cuGraphCreate(&g_, 0), CUDA_SUCCESS);
  }
  void TearDown() override {
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

  template <typename Fn>
  Fn Proc(const char* name) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    EXPECT_EQ(api().cuGetProcAddress(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q),
              CUDA_SUCCESS)
        << name;
    EXPECT_NE(fn, nullptr) << name;
    return reinterpret_cast<Fn>(fn);
  }
#define GRAPHX_PROC(name) Proc<decltype(&::name)>(#name)

  // add_u32(buf + 0, v) as a kernel node of `g` (depending on `dep` when given).
  CUgraphNode Kernel(CUgraph g, unsigned v, CUgraphNode dep = nullptr) {
    CUdeviceptr p = buf_;
    void* args[] = {&p, &v};
    CUDA_KERNEL_NODE_PARAMS kp{};
    kp.func = add_;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CUgraphNode n = nullptr;
    EXPECT_EQ(api().cuGraphAddKernelNode(&n, g, dep ? &dep : nullptr, dep ? 1 : 0, &kp),
              CUDA_SUCCESS);
    return n;
  }
  CUgraphNode Empty(CUgraph g) {
    CUgraphNode n = nullptr;
    EXPECT_EQ(api().cuGraphAddEmptyNode(&n, g, nullptr, 0), CUDA_SUCCESS);
    return n;
  }
  // Instantiates `g`, launches it once, synchronizes and destroys the executable graph.
  void RunOnce(CUgraph g) {
    CUgraphExec e = nullptr;
    ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
    ASSERT_EQ(api().cuGraphLaunch(e, stream_), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
    ASSERT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
  }
  unsigned Word() {
    unsigned v = 0;
    EXPECT_EQ(api().cuMemcpyDtoH(&v, buf_, sizeof v), CUDA_SUCCESS);
    return v;
  }

  CUmodule module_ = nullptr;
  CUfunction add_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr buf_ = 0;
  CUgraph g_ = nullptr;
};

std::atomic<bool> g_graphx_on_releasing_thread{false};
std::atomic<int> g_graphx_thread_checked{0};
pthread_t g_graphx_releasing_thread;
void GraphxRecordThread(void*) {
  g_graphx_on_releasing_thread = pthread_equal(pthread_self(), g_graphx_releasing_thread) != 0;
  g_graphx_thread_checked.fetch_add(1);
}

// Measured (userobj:create, userobj:refcount): a count of 0, a null destructor and flags other
// than CU_USER_OBJECT_NO_DESTRUCTOR_SYNC are refused, a count above INT_MAX is not; retain and
// release take 1..INT_MAX; the release that brings the count to zero runs the destructor inside
// the call, on the calling thread.
TEST_P(GraphxTest, UserObjectReleaseRunsTheDestructorInsideTheCall) {
  auto create = GRAPHX_PROC(cuUserObjectCreate);
  auto retain = GRAPHX_PROC(cuUserObjectRetain);
  auto release = GRAPHX_PROC(cuUserObjectRelease);
  ASSERT_NE(release, nullptr);
  std::atomic<int> destroyed{0};
  CUuserObject o = nullptr;
  EXPECT_EQ(create(&o, &destroyed, GraphxCountDestroy, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(&o, &destroyed, nullptr, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(&o, &destroyed, GraphxCountDestroy, 0, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(create(&o, &destroyed, GraphxCountDestroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_SUCCESS);
  EXPECT_EQ(retain(o, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(release(o, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(retain(o, static_cast<unsigned>(INT_MAX) + 1u), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(retain(o, 2), CUDA_SUCCESS);
  ASSERT_EQ(release(o, 2), CUDA_SUCCESS);
  EXPECT_EQ(destroyed.load(), 0);
  ASSERT_EQ(release(o, 1), CUDA_SUCCESS);
  EXPECT_EQ(destroyed.load(), 1) << "inside the call";
  // On the calling thread.
  CUuserObject t = nullptr;
  ASSERT_EQ(create(&t, nullptr, GraphxRecordThread, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_SUCCESS);
  g_graphx_thread_checked = 0;
  g_graphx_releasing_thread = pthread_self();
  ASSERT_EQ(release(t, 1), CUDA_SUCCESS);
  EXPECT_EQ(g_graphx_thread_checked.load(), 1);
  EXPECT_TRUE(g_graphx_on_releasing_thread.load());
  // A count above INT_MAX is taken at creation (never released here: its destructor never runs).
  CUuserObject big = nullptr;
  EXPECT_EQ(create(&big, &destroyed, GraphxCountDestroy, static_cast<unsigned>(INT_MAX) + 1u,
                   CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_SUCCESS);
}

// Measured (userobj:exec, userobj:graph): an executable graph keeps its graph's references after
// the graph is destroyed, until it is destroyed itself; then, and when a graph releases the
// last reference, the destructor runs on a driver thread, not inside the call.
TEST_P(GraphxTest, GraphAndExecutableGraphKeepUserObjectsAlive) {
  auto create = GRAPHX_PROC(cuUserObjectCreate);
  auto graph_retain = GRAPHX_PROC(cuGraphRetainUserObject);
  auto graph_release = GRAPHX_PROC(cuGraphReleaseUserObject);
  ASSERT_NE(graph_release, nullptr);
  std::atomic<int> destroyed{0};
  CUuserObject o = nullptr;
  ASSERT_EQ(create(&o, &destroyed, GraphxCountDestroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_SUCCESS);
  CUgraph g = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  Kernel(g, 1);
  EXPECT_EQ(graph_retain(g, o, 1, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(graph_retain(g, o, 0, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(graph_retain(g, o, 1, CU_GRAPH_USER_OBJECT_MOVE), CUDA_SUCCESS);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(destroyed.load(), 0);
  ASSERT_EQ(api().cuGraphLaunch(e, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Word(), 1u);
  ASSERT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
  EXPECT_EQ(GraphxWaitFor(destroyed, 1), 1);
  // The graph's own reference released explicitly: on a driver thread.
  CUuserObject t = nullptr;
  ASSERT_EQ(create(&t, nullptr, GraphxRecordThread, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_SUCCESS);
  ASSERT_EQ(graph_retain(g_, t, 1, CU_GRAPH_USER_OBJECT_MOVE), CUDA_SUCCESS);
  g_graphx_thread_checked = 0;
  g_graphx_releasing_thread = pthread_self();
  EXPECT_EQ(graph_release(g_, t, 1), CUDA_SUCCESS);
  EXPECT_EQ(GraphxWaitFor(g_graphx_thread_checked, 1), 1);
  EXPECT_FALSE(g_graphx_on_releasing_thread.load());
}

// Measured (userobj:graph): releases are not checked against what the graph holds: releasing
// more than it holds, or an object it holds nothing of, succeeds and takes the object's count
// down (to zero: the destructor runs).
TEST_P(GraphxTest, GraphReleaseIsNotCheckedAgainstWhatTheGraphHolds) {
  auto create = GRAPHX_PROC(cuUserObjectCreate);
  auto graph_release = GRAPHX_PROC(cuGraphReleaseUserObject);
  ASSERT_NE(graph_release, nullptr);
  std::atomic<int> destroyed{0};
  CUuserObject o = nullptr;
  ASSERT_EQ(create(&o, &destroyed, GraphxCountDestroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_SUCCESS);
  EXPECT_EQ(graph_release(g_, o, 1), CUDA_SUCCESS);
  EXPECT_EQ(GraphxWaitFor(destroyed, 1), 1);
}

// Measured (userobj:clone): a child graph node keeps its child graph's references after that
// graph is destroyed; destroying the parent lets them go.
TEST_P(GraphxTest, ChildGraphNodeKeepsItsGraphsUserObjects) {
  auto create = GRAPHX_PROC(cuUserObjectCreate);
  auto graph_retain = GRAPHX_PROC(cuGraphRetainUserObject);
  ASSERT_NE(graph_retain, nullptr);
  std::atomic<int> destroyed{0};
  CUuserObject o = nullptr;
  ASSERT_EQ(create(&o, &destroyed, GraphxCountDestroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_SUCCESS);
  CUgraph child = nullptr, parent = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&child, 0), CUDA_SUCCESS);
  Empty(child);
  ASSERT_EQ(graph_retain(child, o, 1, CU_GRAPH_USER_OBJECT_MOVE), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphCreate(&parent, 0), CUDA_SUCCESS);
  CUgraphNode cn = nullptr;
  ASSERT_EQ(api().cuGraphAddChildGraphNode(&cn, parent, nullptr, 0, child), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphDestroy(child), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(destroyed.load(), 0);
  ASSERT_EQ(api().cuGraphDestroy(parent), CUDA_SUCCESS);
  EXPECT_EQ(GraphxWaitFor(destroyed, 1), 1);
}

// Measured (enabled:kernel, enabled:types): a disabled kernel, memset or memcpy node runs as an
// empty node; other node types, and a node removed from the graph since, are
// CUDA_ERROR_INVALID_VALUE.
TEST_P(GraphxTest, DisabledKernelNodeRunsAsAnEmptyNode) {
  auto set_enabled = GRAPHX_PROC(cuGraphNodeSetEnabled);
  auto get_enabled = GRAPHX_PROC(cuGraphNodeGetEnabled);
  ASSERT_NE(get_enabled, nullptr);
  CUgraphNode k = Kernel(g_, 1);
  CUgraphNode em = Empty(g_);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_SUCCESS);
  unsigned on = 7;
  ASSERT_EQ(get_enabled(e, k, &on), CUDA_SUCCESS);
  EXPECT_EQ(on, 1u);
  ASSERT_EQ(set_enabled(e, k, 0), CUDA_SUCCESS);
  ASSERT_EQ(get_enabled(e, k, &on), CUDA_SUCCESS);
  EXPECT_EQ(on, 0u);
  ASSERT_EQ(api().cuGraphLaunch(e, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Word(), 0u);
  ASSERT_EQ(set_enabled(e, k, 1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(e, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Word(), 1u);
  EXPECT_EQ(set_enabled(e, em, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get_enabled(e, em, &on), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get_enabled(e, k, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuGraphDestroyNode(k), CUDA_SUCCESS);
  EXPECT_EQ(get_enabled(e, k, &on), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
}

// Measured (execflags): AUTO_FREE_ON_LAUNCH and DEVICE_LAUNCH are reported; USE_NODE_PRIORITY and
// UPLOAD are not.
TEST_P(GraphxTest, ExecGetFlagsReturnsTheInstantiationFlags) {
  auto get_flags = GRAPHX_PROC(cuGraphExecGetFlags);
  auto instantiate = GRAPHX_PROC(cuGraphInstantiateWithParams);
  ASSERT_NE(instantiate, nullptr);
  Kernel(g_, 1);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(
                &e, g_, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH),
            CUDA_SUCCESS);
  cuuint64_t flags = 77;
  ASSERT_EQ(get_flags(e, &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
  EXPECT_EQ(get_flags(e, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
  CUDA_GRAPH_INSTANTIATE_PARAMS p{};
  p.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  p.hUploadStream = stream_;
  ASSERT_EQ(instantiate(&e, g_, &p), CUDA_SUCCESS);
  ASSERT_EQ(get_flags(e, &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, 0u);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
}

// Measured (instparams:*, noctx): success reports CUDA_GRAPH_INSTANTIATE_SUCCESS and no node; a
// cycle a -> b -> a CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE and b; no current context
// CUDA_ERROR_INVALID_CONTEXT with CUDA_GRAPH_INSTANTIATE_ERROR.
TEST_P(GraphxTest, InstantiateWithParamsReportsTheResultAndTheNode) {
  auto instantiate = GRAPHX_PROC(cuGraphInstantiateWithParams);
  ASSERT_NE(instantiate, nullptr);
  CUgraphNode a = Kernel(g_, 1);
  CUDA_GRAPH_INSTANTIATE_PARAMS p{};
  p.result_out = static_cast<CUgraphInstantiateResult>(77);
  CUgraphExec e = nullptr;
  ASSERT_EQ(instantiate(&e, g_, &p), CUDA_SUCCESS);
  EXPECT_EQ(p.result_out, CUDA_GRAPH_INSTANTIATE_SUCCESS);
  EXPECT_EQ(p.hErrNode_out, nullptr);
  ASSERT_EQ(api().cuGraphLaunch(e, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Word(), 1u);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
  EXPECT_EQ(instantiate(&e, g_, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  p = CUDA_GRAPH_INSTANTIATE_PARAMS{};
  EXPECT_EQ(instantiate(&e, g_, &p), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(p.result_out, CUDA_GRAPH_INSTANTIATE_ERROR);
  ASSERT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
  CUgraphNode b = Kernel(g_, 1, a);
  ASSERT_EQ(api().cuGraphAddDependencies(g_, &b, &a, nullptr, 1), CUDA_SUCCESS);
  p = CUDA_GRAPH_INSTANTIATE_PARAMS{};
  EXPECT_EQ(instantiate(&e, g_, &p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(p.result_out, CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE);
  EXPECT_EQ(p.hErrNode_out, b);
}

// Measured (host:params, host:exec): the host node's function and data round-trip; a null
// function is refused; the executable graph's setter changes only what the executable graph runs.
TEST_P(GraphxTest, HostNodeParamsRoundTripAndTheExecSetterChangesOnlyTheExec) {
  auto get = GRAPHX_PROC(cuGraphHostNodeGetParams);
  auto set = GRAPHX_PROC(cuGraphHostNodeSetParams);
  auto exec_set = GRAPHX_PROC(cuGraphExecHostNodeSetParams);
  ASSERT_NE(exec_set, nullptr);
  int data = 0;
  CUDA_HOST_NODE_PARAMS hp{GraphxHostA, &data};
  CUgraphNode h = nullptr;
  ASSERT_EQ(api().cuGraphAddHostNode(&h, g_, nullptr, 0, &hp), CUDA_SUCCESS);
  CUDA_HOST_NODE_PARAMS got{};
  ASSERT_EQ(get(h, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.fn, &GraphxHostA);
  EXPECT_EQ(got.userData, &data);
  CUDA_HOST_NODE_PARAMS null_fn{nullptr, nullptr};
  EXPECT_EQ(set(h, &null_fn), CUDA_ERROR_INVALID_VALUE);
  CUgraphNode k = Kernel(g_, 1);
  EXPECT_EQ(get(k, &got), CUDA_ERROR_INVALID_VALUE);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_SUCCESS);
  CUDA_HOST_NODE_PARAMS b{GraphxHostB, nullptr};
  ASSERT_EQ(exec_set(e, h, &b), CUDA_SUCCESS);
  g_graphx_host_a = 0;
  g_graphx_host_b = 0;
  ASSERT_EQ(api().cuGraphLaunch(e, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(g_graphx_host_a.load(), 0);
  EXPECT_EQ(g_graphx_host_b.load(), 1);
  ASSERT_EQ(get(h, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.fn, &GraphxHostA);
  EXPECT_EQ(exec_set(e, k, &b), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
}

// Measured (event:nodes): event record / wait nodes return and take their events; a null event
// or a node of the other type is CUDA_ERROR_INVALID_VALUE; a destroyed event is taken.
TEST_P(GraphxTest, EventNodesReturnAndTakeTheirEvents) {
  auto rec_get = GRAPHX_PROC(cuGraphEventRecordNodeGetEvent);
  auto rec_set = GRAPHX_PROC(cuGraphEventRecordNodeSetEvent);
  auto wait_get = GRAPHX_PROC(cuGraphEventWaitNodeGetEvent);
  auto wait_set = GRAPHX_PROC(cuGraphEventWaitNodeSetEvent);
  auto exec_rec_set = GRAPHX_PROC(cuGraphExecEventRecordNodeSetEvent);
  ASSERT_NE(exec_rec_set, nullptr);
  CUevent e1 = nullptr, e2 = nullptr;
  ASSERT_EQ(api().cuEventCreate(&e1, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventCreate(&e2, 0), CUDA_SUCCESS);
  CUgraphNode rec = nullptr, wt = nullptr;
  ASSERT_EQ(api().cuGraphAddEventRecordNode(&rec, g_, nullptr, 0, e1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddEventWaitNode(&wt, g_, &rec, 1, e1), CUDA_SUCCESS);
  CUevent got = nullptr;
  ASSERT_EQ(rec_get(rec, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, e1);
  ASSERT_EQ(rec_set(rec, e2), CUDA_SUCCESS);
  ASSERT_EQ(wait_set(wt, e2), CUDA_SUCCESS);
  ASSERT_EQ(wait_get(wt, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, e2);
  EXPECT_EQ(rec_get(wt, &got), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(rec_set(rec, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUevent dead = nullptr;
  ASSERT_EQ(api().cuEventCreate(&dead, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventDestroy(dead), CUDA_SUCCESS);
  CUgraphNode other = nullptr;
  ASSERT_EQ(api().cuGraphAddEventWaitNode(&other, g_, nullptr, 0, e1), CUDA_SUCCESS);
  EXPECT_EQ(wait_set(other, dead), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphDestroyNode(other), CUDA_SUCCESS);
  CUgraphExec x = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&x, g_, 0), CUDA_SUCCESS);
  EXPECT_EQ(exec_rec_set(x, rec, e1), CUDA_SUCCESS);
  EXPECT_EQ(exec_rec_set(x, wt, e1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(rec_get(rec, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, e2);
  EXPECT_EQ(api().cuGraphExecDestroy(x), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(e1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(e2), CUDA_SUCCESS);
}

// Measured (kattr:*): attributes read back what was set, a priority clamped into [-5, 0], a
// cluster the grid is not a multiple of is CUDA_ERROR_INVALID_CLUSTER_SIZE,
// PREFERRED_CLUSTER_DIMENSION is not a node attribute; UNMEASURED: CopyAttributes copies them,
// a node of another type is CUDA_ERROR_INVALID_VALUE.
TEST_P(GraphxTest, KernelNodeAttributesReadBackAndCopy) {
  auto get = GRAPHX_PROC(cuGraphKernelNodeGetAttribute);
  auto set = GRAPHX_PROC(cuGraphKernelNodeSetAttribute);
  auto copy = GRAPHX_PROC(cuGraphKernelNodeCopyAttributes);
  ASSERT_NE(copy, nullptr);
  CUgraphNode k1 = Kernel(g_, 1);
  CUgraphNode k2 = Kernel(g_, 1, k1);  // after k1: both add to the same word (no race)
  CUkernelNodeAttrValue v{};
  v.priority = -2;
  ASSERT_EQ(set(k1, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v), CUDA_SUCCESS);
  CUkernelNodeAttrValue back{};
  ASSERT_EQ(get(k1, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &back), CUDA_SUCCESS);
  EXPECT_EQ(back.priority, -2);
  CUkernelNodeAttrValue high{};
  high.priority = 100;
  ASSERT_EQ(set(k2, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &high), CUDA_SUCCESS);
  ASSERT_EQ(get(k2, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &back), CUDA_SUCCESS);
  EXPECT_EQ(back.priority, 0);
  CUkernelNodeAttrValue cluster{};
  cluster.clusterDim.x = 2;
  cluster.clusterDim.y = cluster.clusterDim.z = 1;
  EXPECT_EQ(set(k2, CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION, &cluster),
            CUDA_ERROR_INVALID_CLUSTER_SIZE);
  EXPECT_EQ(get(k2, CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION, &back),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(copy(k2, k1), CUDA_SUCCESS);
  back = CUkernelNodeAttrValue{};
  ASSERT_EQ(get(k2, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &back), CUDA_SUCCESS);
  EXPECT_EQ(back.priority, -2);
  CUgraphNode em = Empty(g_);
  EXPECT_EQ(get(em, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &back), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(copy(em, k1), CUDA_ERROR_INVALID_VALUE);
  RunOnce(g_);
  EXPECT_EQ(Word(), 2u);
}

// Measured (kparams): cuGraphKernelNodeGetParams returns the node's function, its context and
// launch shape and its own copy of the parameters (not the caller's array); SetParams replaces
// them (the next launch runs the new ones); parameters given as `extra` come back as `extra`.
TEST_P(GraphxTest, KernelNodeParamsReadBackTheNodesCopy) {
  auto get = GRAPHX_PROC(cuGraphKernelNodeGetParams);
  auto set = GRAPHX_PROC(cuGraphKernelNodeSetParams);
  ASSERT_NE(set, nullptr);
  CUgraphNode k = Kernel(g_, 3);
  CUDA_KERNEL_NODE_PARAMS got{};
  ASSERT_EQ(get(k, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.func, add_);
  EXPECT_EQ(got.ctx, ctx());
  EXPECT_EQ(got.kern, nullptr);
  EXPECT_EQ(got.extra, nullptr);
  EXPECT_EQ(got.gridDimX, 1u);
  EXPECT_EQ(got.blockDimX, 1u);
  ASSERT_NE(got.kernelParams, nullptr);
  EXPECT_EQ(*static_cast<CUdeviceptr*>(got.kernelParams[0]), buf_);
  EXPECT_EQ(*static_cast<unsigned*>(got.kernelParams[1]), 3u);
  CUdeviceptr p = buf_;
  unsigned v = 10;
  void* args[] = {&p, &v};
  got.kernelParams = args;
  got.extra = nullptr;
  ASSERT_EQ(set(k, &got), CUDA_SUCCESS);
  RunOnce(g_);
  EXPECT_EQ(Word(), 10u);
  struct {
    CUdeviceptr p;
    unsigned v;
    unsigned pad;
  } packed = {buf_, 7, 0};
  size_t size = 12;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  got.kernelParams = nullptr;
  got.extra = extra;
  ASSERT_EQ(set(k, &got), CUDA_SUCCESS);
  CUDA_KERNEL_NODE_PARAMS again{};
  ASSERT_EQ(get(k, &again), CUDA_SUCCESS);
  EXPECT_EQ(again.kernelParams, nullptr);
  EXPECT_NE(again.extra, nullptr);
  RunOnce(g_);
  EXPECT_EQ(Word(), 17u);
  CUgraphNode em = Empty(g_);
  EXPECT_EQ(get(em, &got), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get(k, nullptr), CUDA_ERROR_INVALID_VALUE);
}

// Measured (child:get): the child graph node's graph is its own copy, not the graph it was made
// from, the same each time; a node added to it runs with the node (cuda.h: "Changes to the graph
// will be reflected in the node").
TEST_P(GraphxTest, ChildGraphNodeGraphChangesAreReflectedInTheNode) {
  auto get_graph = GRAPHX_PROC(cuGraphChildGraphNodeGetGraph);
  ASSERT_NE(get_graph, nullptr);
  CUgraph child = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&child, 0), CUDA_SUCCESS);
  Kernel(child, 1);
  CUgraphNode cn = nullptr;
  ASSERT_EQ(api().cuGraphAddChildGraphNode(&cn, g_, nullptr, 0, child), CUDA_SUCCESS);
  CUgraph inner = nullptr;
  ASSERT_EQ(get_graph(cn, &inner), CUDA_SUCCESS);
  ASSERT_NE(inner, nullptr);
  EXPECT_NE(inner, child);
  CUgraph again = nullptr;
  ASSERT_EQ(get_graph(cn, &again), CUDA_SUCCESS);
  EXPECT_EQ(again, inner);
  // After the node cloned from `child` (both add to the same word: ordered, no race).
  CUgraphNode first = nullptr;
  size_t count = 1;
  ASSERT_EQ(api().cuGraphGetNodes(inner, &first, &count), CUDA_SUCCESS);
  ASSERT_EQ(count, 1u);
  Kernel(inner, 10, first);
  RunOnce(g_);
  EXPECT_EQ(Word(), 11u);
  CUgraphNode em = Empty(g_);
  EXPECT_EQ(get_graph(em, &again), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphDestroy(child), CUDA_SUCCESS);
}

// Measured (clone:find): a clone's copy of each original node is found; a node added after
// cloning, or a node of the clone itself, is not (and the out-parameter is written).
TEST_P(GraphxTest, FindInCloneFindsEachOriginalNodesCopy) {
  auto find = GRAPHX_PROC(cuGraphNodeFindInClone);
  ASSERT_NE(find, nullptr);
  CUgraphNode a = Empty(g_);
  CUgraphNode k = Kernel(g_, 1, a);
  CUgraph c = nullptr;
  ASSERT_EQ(api().cuGraphClone(&c, g_), CUDA_SUCCESS);
  CUgraphNode fa = nullptr, fk = nullptr;
  ASSERT_EQ(find(&fa, a, c), CUDA_SUCCESS);
  ASSERT_EQ(find(&fk, k, c), CUDA_SUCCESS);
  EXPECT_NE(fa, a);
  EXPECT_NE(fk, k);
  EXPECT_NE(fa, fk);
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  ASSERT_EQ(api().cuGraphNodeGetType(fk, &type), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_KERNEL);
  CUgraphNode late = Empty(g_);
  CUgraphNode out = nullptr;
  EXPECT_EQ(find(&out, late, c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(find(&out, fk, c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(find(nullptr, k, c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphDestroy(c), CUDA_SUCCESS);
}

// Measured (mem:params): an alloc node returns its address, size and pool properties; a free node
// its address; other node types are CUDA_ERROR_INVALID_VALUE; a node of a graph with memory
// nodes cannot be destroyed (CUDA_ERROR_NOT_SUPPORTED, as cuda.h says).
TEST_P(GraphxTest, MemoryNodeGettersReturnTheAllocation) {
  auto alloc_get = GRAPHX_PROC(cuGraphMemAllocNodeGetParams);
  auto free_get = GRAPHX_PROC(cuGraphMemFreeNodeGetParams);
  ASSERT_NE(free_get, nullptr);
  CUDA_MEM_ALLOC_NODE_PARAMS ap{};
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = 0;
  ap.bytesize = 1000;
  CUgraphNode an = nullptr, fn = nullptr;
  ASSERT_EQ(api().cuGraphAddMemAllocNode(&an, g_, nullptr, 0, &ap), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddMemFreeNode(&fn, g_, &an, 1, ap.dptr), CUDA_SUCCESS);
  CUDA_MEM_ALLOC_NODE_PARAMS got{};
  ASSERT_EQ(alloc_get(an, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.dptr, ap.dptr);
  EXPECT_EQ(got.bytesize, 1000u);
  EXPECT_EQ(got.poolProps.allocType, CU_MEM_ALLOCATION_TYPE_PINNED);
  EXPECT_EQ(got.poolProps.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
  CUdeviceptr d = 0;
  ASSERT_EQ(free_get(fn, &d), CUDA_SUCCESS);
  EXPECT_EQ(d, ap.dptr);
  EXPECT_EQ(alloc_get(fn, &got), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(free_get(an, &d), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphDestroyNode(fn), CUDA_ERROR_NOT_SUPPORTED);
  CUgraphNode em = Empty(g_);
  EXPECT_EQ(api().cuGraphDestroyNode(em), CUDA_ERROR_NOT_SUPPORTED);
}

// Measured (deps:remove): an existing edge goes; an absent one is CUDA_ERROR_INVALID_VALUE, and
// the pairs before it in the call are removed all the same.
TEST_P(GraphxTest, RemoveDependenciesRemovesOnlyExistingEdges) {
  auto remove = GRAPHX_PROC(cuGraphRemoveDependencies);
  ASSERT_NE(remove, nullptr);
  CUgraphNode a = Empty(g_);
  CUgraphNode b = Empty(g_);
  CUgraphNode c = Empty(g_);
  CUgraphNode from[] = {a, b};
  CUgraphNode to[] = {c, c};
  ASSERT_EQ(api().cuGraphAddDependencies(g_, from, to, nullptr, 2), CUDA_SUCCESS);
  ASSERT_EQ(remove(g_, &a, &c, nullptr, 1), CUDA_SUCCESS);
  size_t n = 0;
  ASSERT_EQ(api().cuGraphNodeGetDependencies(c, nullptr, nullptr, &n), CUDA_SUCCESS);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(remove(g_, &a, &c, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  CUgraphNode present_first[] = {b, a};
  EXPECT_EQ(remove(g_, present_first, to, nullptr, 2), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuGraphNodeGetDependencies(c, nullptr, nullptr, &n), CUDA_SUCCESS);
  EXPECT_EQ(n, 0u);
}

// UNMEASURED beyond the first line: the file is a DOT graph.
TEST_P(GraphxTest, DebugDotPrintWritesADotFile) {
  auto print = GRAPHX_PROC(cuGraphDebugDotPrint);
  ASSERT_NE(print, nullptr);
  Kernel(g_, 1);
  const std::string path = "/tmp/cuhal_graphx_test_" + std::to_string(getpid()) + ".dot";
  ASSERT_EQ(print(g_, path.c_str(), 0), CUDA_SUCCESS);
  std::FILE* f = std::fopen(path.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char line[256] = "";
  ASSERT_NE(std::fgets(line, sizeof line, f), nullptr);
  std::fclose(f);
  std::remove(path.c_str());
  EXPECT_EQ(std::string(line), "digraph dot {\n");
  EXPECT_EQ(print(g_, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
}

// Measured (batch): a batch node of 32- and 64-bit writes writes them at each launch; no
// operations is accepted, a null context is not.
TEST_P(GraphxTest, BatchMemOpNodeWritesItsValues) {
  auto add = GRAPHX_PROC(cuGraphAddBatchMemOpNode);
  auto get = GRAPHX_PROC(cuGraphBatchMemOpNodeGetParams);
  ASSERT_NE(get, nullptr);
  CUstreamBatchMemOpParams ops[2];
  std::memset(ops, 0, sizeof ops);
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = buf_;
  ops[0].writeValue.value = 42;
  ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[1].writeValue.address = buf_ + 8;
  ops[1].writeValue.value64 = 0x100000007ull;
  CUDA_BATCH_MEM_OP_NODE_PARAMS p{};
  p.ctx = ctx();
  p.count = 2;
  p.paramArray = ops;
  CUgraphNode n = nullptr;
  ASSERT_EQ(add(&n, g_, nullptr, 0, &p), CUDA_SUCCESS);
  CUDA_BATCH_MEM_OP_NODE_PARAMS got{};
  ASSERT_EQ(get(n, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.count, 2u);
  EXPECT_EQ(got.ctx, ctx());
  RunOnce(g_);
  EXPECT_EQ(Word(), 42u);
  unsigned long long v64 = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&v64, buf_ + 8, 8), CUDA_SUCCESS);
  EXPECT_EQ(v64, 0x100000007ull);
  p.count = 0;
  EXPECT_EQ(add(&n, g_, nullptr, 0, &p), CUDA_SUCCESS);
  p.count = 2;
  p.ctx = nullptr;
  EXPECT_EQ(add(&n, g_, nullptr, 0, &p), CUDA_ERROR_INVALID_VALUE);
}

// --- fake only: what the real driver may crash on, and the fake's own choices ---

class GraphxFakeTest : public GraphxTest {};

// The fake's choice: an executable graph destroyed with a launch queued keeps its user object
// references until that launch is done.
TEST_P(GraphxFakeTest, QueuedLaunchKeepsTheUserObjectAlive) {
  auto create = GRAPHX_PROC(cuUserObjectCreate);
  auto graph_retain = GRAPHX_PROC(cuGraphRetainUserObject);
  ASSERT_NE(graph_retain, nullptr);
  std::atomic<int> destroyed{0};
  CUuserObject o = nullptr;
  ASSERT_EQ(create(&o, &destroyed, GraphxCountDestroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_SUCCESS);
  CUgraph g = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUDA_HOST_NODE_PARAMS hp{[](void*) { std::this_thread::sleep_for(
                               std::chrono::milliseconds(100)); },
                           nullptr};
  CUgraphNode h = nullptr;
  ASSERT_EQ(api().cuGraphAddHostNode(&h, g, nullptr, 0, &hp), CUDA_SUCCESS);
  ASSERT_EQ(graph_retain(g, o, 1, CU_GRAPH_USER_OBJECT_MOVE), CUDA_SUCCESS);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(e, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(GraphxWaitFor(destroyed, 1), 1);
}

// The fake's answer to handles the real driver may crash on: CUDA_ERROR_INVALID_VALUE.
TEST_P(GraphxFakeTest, GarbageHandlesAreInvalidValue) {
  auto retain = GRAPHX_PROC(cuUserObjectRetain);
  auto get_enabled = GRAPHX_PROC(cuGraphNodeGetEnabled);
  auto get_flags = GRAPHX_PROC(cuGraphExecGetFlags);
  auto host_get = GRAPHX_PROC(cuGraphHostNodeGetParams);
  auto find = GRAPHX_PROC(cuGraphNodeFindInClone);
  ASSERT_NE(find, nullptr);
  const auto garbage = reinterpret_cast<CUgraphNode>(0x5a5a5a50);
  EXPECT_EQ(retain(reinterpret_cast<CUuserObject>(0x5a5a5a80), 1), CUDA_ERROR_INVALID_VALUE);
  unsigned on = 0;
  EXPECT_EQ(get_enabled(reinterpret_cast<CUgraphExec>(0x5a5a5a70), garbage, &on),
            CUDA_ERROR_INVALID_VALUE);
  cuuint64_t flags = 0;
  EXPECT_EQ(get_flags(reinterpret_cast<CUgraphExec>(0x5a5a5a70), &flags),
            CUDA_ERROR_INVALID_VALUE);
  CUDA_HOST_NODE_PARAMS hp{};
  EXPECT_EQ(host_get(garbage, &hp), CUDA_ERROR_INVALID_VALUE);
  CUgraphNode out = nullptr;
  EXPECT_EQ(find(&out, garbage, g_), CUDA_ERROR_INVALID_VALUE);
}

// Measured (extsem): a node naming a null semaphore is made; the fake refuses a graph holding
// one at launch (CUDA_ERROR_NOT_SUPPORTED: it runs no external semaphore node).
TEST_P(GraphxFakeTest, ExternalSemaphoreNodeIsMadeButNotRun) {
  auto add = GRAPHX_PROC(cuGraphAddExternalSemaphoresSignalNode);
  auto get = GRAPHX_PROC(cuGraphExternalSemaphoresSignalNodeGetParams);
  ASSERT_NE(get, nullptr);
  CUexternalSemaphore none = nullptr;
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sv{};
  CUDA_EXT_SEM_SIGNAL_NODE_PARAMS p{};
  p.extSemArray = &none;
  p.paramsArray = &sv;
  p.numExtSems = 1;
  CUgraphNode n = nullptr;
  ASSERT_EQ(add(&n, g_, nullptr, 0, &p), CUDA_SUCCESS);
  CUDA_EXT_SEM_SIGNAL_NODE_PARAMS got{};
  ASSERT_EQ(get(n, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.numExtSems, 1u);
  EXPECT_EQ(add(&n, g_, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphLaunch(e, stream_), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
}

#undef GRAPHX_PROC

CUHAL_INSTANTIATE_BACKEND_TEST(GraphxTest);
CUHAL_INSTANTIATE_FAKE_ONLY_TEST(GraphxFakeTest);

}  // namespace
}  // namespace cuhal::testing
