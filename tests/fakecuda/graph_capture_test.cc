// Copyright 2026 The cuhal Authors.
// Conformance: stream capture (issue 12, item 5). Each test is one case (or one family of cases)
// of ci/gpu-probes/graph_probe.cc, and asserts exactly the H200's answers recorded in
// ci/gpu-probes/results/2026-12-03-probe-graph.txt (driver 580, CUDA 13.0): the test names say
// which case. Expectations the probe did not measure (the fake's modelling choices, listed in
// docs/driver_facts.md) are in the fake-only suite at the end.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/fakecuda/graph_fixture.h"

namespace cuhal::testing {
namespace {

class CaptureTest : public GraphTestBase {};

void CUDA_CB NoopHost(void*) {}
void CUDA_CB CountCaptureHost(void* p) { ++*static_cast<int*>(p); }

// capture:<mode>: begin/end around one launch, the state queries at every step, the graph.
TEST_P(CaptureTest, BeginQueryEndReplay) {
  for (CUstreamCaptureMode mode : kCaptureModes) {
    SCOPED_TRACE(ModeName(mode));
    ASSERT_EQ(api().cuMemsetD8(buf_, 0, 4096), CUDA_SUCCESS);
    EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_NONE);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    cuuint64_t id = 0;
    CUgraph g = nullptr;
    const CUgraphNode* deps = nullptr;
    const CUgraphEdgeData* edges = nullptr;
    size_t ndeps = 99;
    ASSERT_EQ(api().cuStreamGetCaptureInfo(s1_, &st, &id, &g, &deps, &edges, &ndeps), CUDA_SUCCESS);
    EXPECT_EQ(st, CU_STREAM_CAPTURE_STATUS_NONE);
    EXPECT_EQ(id, 0u);
    EXPECT_EQ(g, nullptr);
    EXPECT_EQ(ndeps, 99u);  // not written when not capturing
    ASSERT_EQ(api().cuStreamBeginCapture(s1_, mode), CUDA_SUCCESS);
    EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_ACTIVE);
    ASSERT_EQ(api().cuStreamGetCaptureInfo(s1_, &st, &id, &g, &deps, &edges, &ndeps), CUDA_SUCCESS);
    EXPECT_EQ(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    EXPECT_NE(id, 0u);
    EXPECT_NE(g, nullptr);
    EXPECT_EQ(ndeps, 0u);
    EXPECT_EQ(LaunchAdd(s1_, buf_, 5), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamGetCaptureInfo(s1_, &st, &id, &g, &deps, &edges, &ndeps), CUDA_SUCCESS);
    EXPECT_EQ(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    EXPECT_EQ(ndeps, 1u);
    EXPECT_EQ(api().cuStreamGetCaptureInfo(s1_, &st, nullptr, nullptr, nullptr, nullptr, nullptr),
              CUDA_SUCCESS);
    EXPECT_EQ(api().cuStreamBeginCapture(s1_, mode), CUDA_ERROR_ILLEGAL_STATE);
    EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_ACTIVE);
    EXPECT_EQ(Status(nullptr), CU_STREAM_CAPTURE_STATUS_NONE);
    EXPECT_EQ(Status(s2_), CU_STREAM_CAPTURE_STATUS_NONE);
    CUgraph graph = nullptr;
    ASSERT_EQ(api().cuStreamEndCapture(s1_, &graph), CUDA_SUCCESS);
    ASSERT_NE(graph, nullptr);
    EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_NONE);
    EXPECT_EQ(NodeCount(graph), 1u);
    EXPECT_EQ(Read(buf_), 0u);  // captured, not run
    CUgraphExec exec = nullptr;
    ASSERT_EQ(api().cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
    EXPECT_EQ(api().cuGraphUpload(exec, s1_), CUDA_SUCCESS);
    EXPECT_EQ(api().cuGraphLaunch(exec, s1_), CUDA_SUCCESS);
    EXPECT_EQ(api().cuGraphLaunch(exec, s1_), CUDA_SUCCESS);
    EXPECT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
    EXPECT_EQ(Read(buf_), 10u);
    EXPECT_EQ(api().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    EXPECT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
    CUgraph none = nullptr;
    EXPECT_EQ(api().cuStreamEndCapture(s1_, &none), CUDA_ERROR_ILLEGAL_STATE);
    EXPECT_EQ(api().cuStreamBeginCapture(nullptr, mode), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  }
}

// refused:<mode>:<call>:<same|other>: the H200's answers (generated from the results file).
struct RefusedCase {
  const char* call;
  CUstreamCaptureMode mode;
  bool other_thread;
  CUresult result;   // what the call answered
  bool invalidates;  // the capture was INVALIDATED after it
  size_t nodes;      // nodes of the graph when the capture survived
};

constexpr RefusedCase kRefused[] = {
    {"stream_sync", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"stream_sync", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"stream_query", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"stream_query", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"other_stream_sync", CU_STREAM_CAPTURE_MODE_GLOBAL, false,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"other_stream_sync", CU_STREAM_CAPTURE_MODE_GLOBAL, true,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"mem_alloc", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true,
     0},
    {"mem_alloc", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true,
     0},
    {"mem_free", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true,
     0},
    {"mem_free", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true,
     0},
    {"memcpy_htod", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_SUCCESS, false, 2},
    {"memcpy_htod", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_other", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_other", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_capturing", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_SUCCESS, false, 3},
    {"memcpy_htod_async_capturing", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_SUCCESS, false, 3},
    {"event_sync_captured", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_ERROR_CAPTURED_EVENT, true,
     0},
    {"event_sync_captured", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_ERROR_CAPTURED_EVENT, true,
     0},
    {"event_query_captured", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_ERROR_CAPTURED_EVENT, true,
     0},
    {"event_query_captured", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_ERROR_CAPTURED_EVENT, true,
     0},
    {"event_sync_plain", CU_STREAM_CAPTURE_MODE_GLOBAL, false,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"event_sync_plain", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"event_query_plain", CU_STREAM_CAPTURE_MODE_GLOBAL, false,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"event_query_plain", CU_STREAM_CAPTURE_MODE_GLOBAL, true,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"ctx_sync", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true,
     0},
    {"ctx_sync", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true,
     0},
    {"legacy_launch", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_SUCCESS, false, 2},
    {"legacy_launch", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_SUCCESS, false, 2},
    {"other_launch", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_SUCCESS, false, 2},
    {"other_launch", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_SUCCESS, false, 2},
    {"host_fn", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_SUCCESS, false, 3},
    {"host_fn", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_SUCCESS, false, 3},
    {"mem_alloc_async", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_SUCCESS, false, 4},
    {"mem_alloc_async", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_SUCCESS, false, 4},
    {"module_load", CU_STREAM_CAPTURE_MODE_GLOBAL, false, CUDA_SUCCESS, true, 0},
    {"module_load", CU_STREAM_CAPTURE_MODE_GLOBAL, true, CUDA_SUCCESS, true, 0},
    {"stream_sync", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"stream_sync", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"stream_query", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"stream_query", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"other_stream_sync", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"other_stream_sync", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"mem_alloc", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"mem_alloc", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"mem_free", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"mem_free", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"memcpy_htod", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_SUCCESS, false, 2},
    {"memcpy_htod", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_other", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_other", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_capturing", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_SUCCESS, false,
     3},
    {"memcpy_htod_async_capturing", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false,
     3},
    {"event_sync_captured", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_ERROR_CAPTURED_EVENT,
     true, 0},
    {"event_sync_captured", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_ERROR_CAPTURED_EVENT,
     true, 0},
    {"event_query_captured", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_ERROR_CAPTURED_EVENT,
     true, 0},
    {"event_query_captured", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_ERROR_CAPTURED_EVENT,
     true, 0},
    {"event_sync_plain", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"event_sync_plain", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"event_query_plain", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true, 0},
    {"event_query_plain", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"ctx_sync", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"ctx_sync", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"legacy_launch", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_SUCCESS, false, 2},
    {"legacy_launch", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"other_launch", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_SUCCESS, false, 2},
    {"other_launch", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"host_fn", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_SUCCESS, false, 3},
    {"host_fn", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 3},
    {"mem_alloc_async", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_SUCCESS, false, 4},
    {"mem_alloc_async", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 4},
    {"module_load", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, CUDA_SUCCESS, true, 0},
    {"module_load", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, CUDA_SUCCESS, false, 2},
    {"stream_sync", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"stream_sync", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"stream_query", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"stream_query", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     true, 0},
    {"other_stream_sync", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"other_stream_sync", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"mem_alloc", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"mem_alloc", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"mem_free", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"mem_free", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"memcpy_htod", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"memcpy_htod", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_other", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_other", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"memcpy_htod_async_capturing", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 3},
    {"memcpy_htod_async_capturing", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 3},
    {"event_sync_captured", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_ERROR_CAPTURED_EVENT, true,
     0},
    {"event_sync_captured", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_ERROR_CAPTURED_EVENT, true,
     0},
    {"event_query_captured", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_ERROR_CAPTURED_EVENT, true,
     0},
    {"event_query_captured", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_ERROR_CAPTURED_EVENT, true,
     0},
    {"event_sync_plain", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"event_sync_plain", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"event_query_plain", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"event_query_plain", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"ctx_sync", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true,
     0},
    {"ctx_sync", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, true,
     0},
    {"legacy_launch", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"legacy_launch", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"other_launch", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"other_launch", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
    {"host_fn", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 3},
    {"host_fn", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 3},
    {"mem_alloc_async", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 4},
    {"mem_alloc_async", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 4},
    {"module_load", CU_STREAM_CAPTURE_MODE_RELAXED, false, CUDA_SUCCESS, false, 2},
    {"module_load", CU_STREAM_CAPTURE_MODE_RELAXED, true, CUDA_SUCCESS, false, 2},
};

class CaptureRefusedTest : public GraphTestBase {
 protected:
  CUresult DoCall(const std::string& call, CUevent captured, CUevent plain) {
    std::vector<unsigned char> host(4096, 7);
    if (call == "stream_sync") return api().cuStreamSynchronize(s1_);
    if (call == "stream_query") return api().cuStreamQuery(s1_);
    if (call == "other_stream_sync") return api().cuStreamSynchronize(s2_);
    if (call == "mem_alloc") {
      CUdeviceptr p = 0;
      CUresult r = api().cuMemAlloc(&p, 4096);
      if (r == CUDA_SUCCESS) api().cuMemFree(p);
      return r;
    }
    if (call == "mem_free") return api().cuMemFree(0);
    if (call == "memcpy_htod") return api().cuMemcpyHtoD(buf_, host.data(), 64);
    if (call == "memcpy_htod_async_other") {
      static unsigned char source[64];  // outlives the copy (no synchronization allowed here)
      return api().cuMemcpyHtoDAsync(buf_, source, 64, s2_);
    }
    if (call == "memcpy_htod_async_capturing") {
      static unsigned char pinned_like[64];  // outlives the graph
      return api().cuMemcpyHtoDAsync(buf_, pinned_like, 64, s1_);
    }
    if (call == "event_sync_captured") return api().cuEventSynchronize(captured);
    if (call == "event_query_captured") return api().cuEventQuery(captured);
    if (call == "event_sync_plain") return api().cuEventSynchronize(plain);
    if (call == "event_query_plain") return api().cuEventQuery(plain);
    if (call == "ctx_sync") return api().cuCtxSynchronize();
    if (call == "legacy_launch") return LaunchEmpty(nullptr);
    if (call == "other_launch") return LaunchEmpty(s2_);
    if (call == "host_fn") return api().cuLaunchHostFunc(s1_, NoopHost, nullptr);
    if (call == "mem_alloc_async") {
      CUdeviceptr p = 0;
      CUresult r = api().cuMemAllocAsync(&p, 4096, s1_);
      if (r == CUDA_SUCCESS) {
        EXPECT_EQ(api().cuMemFreeAsync(p, s1_), CUDA_SUCCESS);
      }
      return r;
    }
    if (call == "module_load") {
      CUmodule m = nullptr;
      CUresult r = api().cuModuleLoadData(&m, kGraphTestPtx);
      if (r == CUDA_SUCCESS) api().cuModuleUnload(m);
      return r;
    }
    ADD_FAILURE() << "unknown call " << call;
    return CUDA_ERROR_UNKNOWN;
  }

  void Run(const char* call) {
    int ran = 0;
    for (const RefusedCase& c : kRefused) {
      if (std::string(c.call) != call) continue;
      ++ran;
      SCOPED_TRACE(std::string(ModeName(c.mode)) +
                   (c.other_thread ? " other thread" : " same thread"));
      CUevent plain = nullptr, captured = nullptr;
      ASSERT_EQ(api().cuEventCreate(&plain, CU_EVENT_DEFAULT), CUDA_SUCCESS);
      ASSERT_EQ(api().cuEventCreate(&captured, CU_EVENT_DEFAULT), CUDA_SUCCESS);
      EXPECT_EQ(api().cuEventRecord(plain, s2_), CUDA_SUCCESS);
      EXPECT_EQ(api().cuStreamSynchronize(s2_), CUDA_SUCCESS);
      ASSERT_EQ(api().cuStreamBeginCapture(s1_, c.mode), CUDA_SUCCESS);
      EXPECT_EQ(LaunchAdd(s1_, buf_, 1), CUDA_SUCCESS);
      EXPECT_EQ(api().cuEventRecord(captured, s1_), CUDA_SUCCESS);
      CUresult r = CUDA_ERROR_UNKNOWN;
      if (c.other_thread) {
        std::thread t([&] {
          ScopedPushContext push(api(), ctx());
          r = DoCall(call, captured, plain);
        });
        t.join();
      } else {
        r = DoCall(call, captured, plain);
      }
      EXPECT_EQ(r, c.result) << ResultName(r);
      EXPECT_EQ(Status(s1_), c.invalidates ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                           : CU_STREAM_CAPTURE_STATUS_ACTIVE);
      EXPECT_EQ(LaunchAdd(s1_, buf_, 1),
                c.invalidates ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS);
      CUgraph graph = nullptr;
      EXPECT_EQ(api().cuStreamEndCapture(s1_, &graph),
                c.invalidates ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS);
      EXPECT_EQ(graph == nullptr, c.invalidates);
      EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_NONE);
      if (graph != nullptr) {
        EXPECT_EQ(NodeCount(graph), c.nodes);
        EXPECT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
      }
      EXPECT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
      EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
      EXPECT_EQ(api().cuEventDestroy(plain), CUDA_SUCCESS);
      EXPECT_EQ(api().cuEventDestroy(captured), CUDA_SUCCESS);
    }
    EXPECT_EQ(ran, 6);
  }
};

#define CUHAL_REFUSED_TEST(call) \
  TEST_P(CaptureRefusedTest, call) { Run(#call); }
CUHAL_REFUSED_TEST(stream_sync)
CUHAL_REFUSED_TEST(stream_query)
CUHAL_REFUSED_TEST(other_stream_sync)
CUHAL_REFUSED_TEST(mem_alloc)
CUHAL_REFUSED_TEST(mem_free)
CUHAL_REFUSED_TEST(memcpy_htod)
CUHAL_REFUSED_TEST(memcpy_htod_async_other)
CUHAL_REFUSED_TEST(memcpy_htod_async_capturing)
CUHAL_REFUSED_TEST(event_sync_captured)
CUHAL_REFUSED_TEST(event_query_captured)
CUHAL_REFUSED_TEST(event_sync_plain)
CUHAL_REFUSED_TEST(event_query_plain)
CUHAL_REFUSED_TEST(ctx_sync)
CUHAL_REFUSED_TEST(legacy_launch)
CUHAL_REFUSED_TEST(other_launch)
CUHAL_REFUSED_TEST(host_fn)
CUHAL_REFUSED_TEST(mem_alloc_async)
CUHAL_REFUSED_TEST(module_load)
#undef CUHAL_REFUSED_TEST

// fork_join:joined: s2 joins through an event, launches, and is joined back.
TEST_P(CaptureTest, ForkJoinJoined) {
  CUevent fork = nullptr, join = nullptr;
  ASSERT_EQ(api().cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventCreate(&join, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamBeginCapture(s1_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(LaunchAdd(s1_, buf_, 1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventRecord(fork, s1_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamWaitEvent(s2_, fork, 0), CUDA_SUCCESS);
  EXPECT_EQ(Status(s2_), CU_STREAM_CAPTURE_STATUS_ACTIVE);
  cuuint64_t id1 = 0, id2 = 0;
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  EXPECT_EQ(api().cuStreamGetCaptureInfo(s1_, &st, &id1, nullptr, nullptr, nullptr, nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamGetCaptureInfo(s2_, &st, &id2, nullptr, nullptr, nullptr, nullptr),
            CUDA_SUCCESS);
  EXPECT_NE(id1, 0u);
  EXPECT_EQ(id1, id2);
  EXPECT_EQ(LaunchAdd(s2_, buf_ + 4, 1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventRecord(join, s2_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamWaitEvent(s1_, join, 0), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(api().cuStreamEndCapture(s1_, &graph), CUDA_SUCCESS);
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(Status(s2_), CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(LaunchEmpty(s2_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(s2_), CUDA_SUCCESS);
  EXPECT_EQ(NodeCount(graph), 2u);  // event record and wait make no nodes
  EXPECT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
  // Ending on the forked stream while the origin captures.
  ASSERT_EQ(api().cuStreamBeginCapture(s1_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventRecord(fork, s1_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamWaitEvent(s2_, fork, 0), CUDA_SUCCESS);
  CUgraph g3 = nullptr;
  EXPECT_EQ(api().cuStreamEndCapture(s2_, &g3), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
  EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  CUgraph g4 = nullptr;
  EXPECT_EQ(api().cuStreamEndCapture(s1_, &g4), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(g4, nullptr);
  EXPECT_EQ(api().cuEventDestroy(fork), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(join), CUDA_SUCCESS);
}

// fork_join:unjoined: s2's work is never waited for by the origin.
TEST_P(CaptureTest, ForkJoinUnjoined) {
  CUevent fork = nullptr;
  ASSERT_EQ(api().cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamBeginCapture(s1_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(LaunchAdd(s1_, buf_, 1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventRecord(fork, s1_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamWaitEvent(s2_, fork, 0), CUDA_SUCCESS);
  EXPECT_EQ(Status(s2_), CU_STREAM_CAPTURE_STATUS_ACTIVE);
  EXPECT_EQ(LaunchAdd(s2_, buf_ + 4, 1), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  EXPECT_EQ(api().cuStreamEndCapture(s1_, &graph), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(Status(s2_), CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(LaunchEmpty(s2_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(s2_), CUDA_SUCCESS);
  CUgraph g2 = nullptr;
  EXPECT_EQ(api().cuStreamEndCapture(s2_, &g2), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_EQ(Read(buf_), 0u);  // nothing captured ran
  EXPECT_EQ(api().cuEventDestroy(fork), CUDA_SUCCESS);
}

// end_wrong_thread:<mode>, and cuThreadExchangeStreamCaptureMode.
TEST_P(CaptureTest, EndOnAnotherThread) {
  for (CUstreamCaptureMode mode : kCaptureModes) {
    SCOPED_TRACE(ModeName(mode));
    ASSERT_EQ(api().cuStreamBeginCapture(s1_, mode), CUDA_SUCCESS);
    EXPECT_EQ(LaunchEmpty(s1_), CUDA_SUCCESS);
    CUgraph graph = nullptr;
    CUresult r = CUDA_ERROR_UNKNOWN;
    std::thread t([&] {
      ScopedPushContext push(api(), ctx());
      r = api().cuStreamEndCapture(s1_, &graph);
    });
    t.join();
    const bool relaxed = mode == CU_STREAM_CAPTURE_MODE_RELAXED;
    EXPECT_EQ(r, relaxed ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    EXPECT_EQ(Status(s1_), CU_STREAM_CAPTURE_STATUS_NONE);
    if (graph == nullptr) {
      EXPECT_EQ(api().cuStreamEndCapture(s1_, &graph), CUDA_ERROR_ILLEGAL_STATE);
    }
    EXPECT_EQ(graph != nullptr, relaxed);
    if (graph != nullptr) {
      EXPECT_EQ(api().cuGraphDestroy(graph), CUDA_SUCCESS);
    }
  }
}

TEST_P(CaptureTest, ThreadExchangeStreamCaptureMode) {
  CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
  EXPECT_EQ(api().cuThreadExchangeStreamCaptureMode(&m), CUDA_SUCCESS);
  EXPECT_EQ(m, CU_STREAM_CAPTURE_MODE_GLOBAL);  // the default
  EXPECT_EQ(api().cuThreadExchangeStreamCaptureMode(&m), CUDA_SUCCESS);
  EXPECT_EQ(m, CU_STREAM_CAPTURE_MODE_RELAXED);  // what the first call set
}

// capture_misc: a graph launched into a capturing stream invalidates it; capture with no
// current context; instantiate flags.
TEST_P(CaptureTest, Misc) {
  ASSERT_EQ(api().cuStreamBeginCapture(s1_, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
  EXPECT_EQ(LaunchAdd(s1_, buf_, 1), CUDA_SUCCESS);
  CUgraph inner = nullptr;
  ASSERT_EQ(api().cuStreamEndCapture(s1_, &inner), CUDA_SUCCESS);
  CUgraphExec inner_exec = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&inner_exec, inner, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamBeginCapture(s1_, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphLaunch(inner_exec, s1_), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  static int calls = 0;
  EXPECT_EQ(api().cuLaunchHostFunc(s1_, CountCaptureHost, &calls), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CUevent ev = nullptr;
  ASSERT_EQ(api().cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventRecord(ev, s1_), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(api().cuMemsetD32Async(buf_ + 64, 0xdeadbeef, 4, s1_),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(api().cuMemcpyDtoDAsync(buf_ + 128, buf_ + 64, 16, s1_),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(api().cuMemcpyAsync(buf_ + 256, buf_ + 64, 16, s1_),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CUgraph outer = nullptr;
  EXPECT_EQ(api().cuStreamEndCapture(s1_, &outer), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(outer, nullptr);
  EXPECT_EQ(calls, 0);
  // The stream's context need not be current.
  ASSERT_EQ(api().cuStreamBeginCapture(s1_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  CUcontext popped = nullptr;
  ASSERT_EQ(api().cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  EXPECT_EQ(LaunchEmpty(s1_), CUDA_SUCCESS);
  CUgraph g = nullptr;
  EXPECT_EQ(api().cuStreamEndCapture(s1_, &g), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxPushCurrent(popped), CUDA_SUCCESS);
  if (g != nullptr) {
    EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
  }
  // Instantiate flags.
  CUgraph ga = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&ga, 0), CUDA_SUCCESS);
  CUgraphExec ea = nullptr;
  EXPECT_EQ(
      api().cuGraphInstantiateWithFlags(&ea, ga, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH),
      CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphLaunch(ea, s1_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphExecDestroy(ea), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphInstantiateWithFlags(&ea, ga, 0x100), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphDestroy(ga), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphExecDestroy(inner_exec), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(inner), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(ev), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 0u);
}

CUHAL_INSTANTIATE_BACKEND_TEST(CaptureTest);
CUHAL_INSTANTIATE_BACKEND_TEST(CaptureRefusedTest);

}  // namespace
}  // namespace cuhal::testing
