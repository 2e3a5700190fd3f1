// Copyright 2026 The cuhal Authors.
// Conformance: the stream and context entry points that had been fakecuda fallbacks (issue 14):
// stream and context ids, cuStreamGetDevice, stream attributes, the stream memory operations
// (write and wait values, batches), context-wide event records and waits, the context cache
// preferences and execution affinity, and capture into an existing graph
// (cuStreamBeginCaptureToGraph, cuStreamUpdateCaptureDependencies). The entry points are not in
// cuhal's CudaApi table: they are resolved through cuGetProcAddress.
//
// The expectations follow ci/gpu-probes/streamctx_probe.cc's output on the real driver (H100 80GB
// HBM3, driver 580.159.04, 2026-12-06; docs/driver_facts.md, "Streams and contexts: ids,
// attributes, memory operations"); one the probe did not measure carries "// UNMEASURED" on its
// line.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

struct StreamCtxApi {
  CUresult (*StreamGetId)(CUstream, unsigned long long*) = nullptr;
  CUresult (*StreamGetDevice)(CUstream, CUdevice*) = nullptr;
  CUresult (*CtxGetId)(CUcontext, unsigned long long*) = nullptr;
  CUresult (*StreamGetAttribute)(CUstream, CUstreamAttrID, CUstreamAttrValue*) = nullptr;
  CUresult (*StreamSetAttribute)(CUstream, CUstreamAttrID, const CUstreamAttrValue*) = nullptr;
  CUresult (*StreamCopyAttributes)(CUstream, CUstream) = nullptr;
  CUresult (*WriteValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned) = nullptr;
  CUresult (*WriteValue64)(CUstream, CUdeviceptr, cuuint64_t, unsigned) = nullptr;
  CUresult (*WaitValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned) = nullptr;
  CUresult (*WaitValue64)(CUstream, CUdeviceptr, cuuint64_t, unsigned) = nullptr;
  CUresult (*BatchMemOp)(CUstream, unsigned, CUstreamBatchMemOpParams*, unsigned) = nullptr;
  CUresult (*CtxRecordEvent)(CUcontext, CUevent) = nullptr;
  CUresult (*CtxWaitEvent)(CUcontext, CUevent) = nullptr;
  CUresult (*CtxGetCacheConfig)(CUfunc_cache*) = nullptr;
  CUresult (*CtxSetCacheConfig)(CUfunc_cache) = nullptr;
  CUresult (*CtxGetExecAffinity)(CUexecAffinityParam*, CUexecAffinityType) = nullptr;
  CUresult (*CtxResetPersistingL2Cache)() = nullptr;
  CUresult (*BeginCaptureToGraph)(CUstream, CUgraph, const CUgraphNode*, const CUgraphEdgeData*,
                                  size_t, CUstreamCaptureMode) = nullptr;
  CUresult (*UpdateCaptureDependencies)(CUstream, CUgraphNode*, const CUgraphEdgeData*, size_t,
                                        unsigned) = nullptr;
  CUresult (*GetCaptureInfo)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*,
                             const CUgraphNode**, const CUgraphEdgeData**, size_t*) = nullptr;
};

class StreamCtxTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Get("cuStreamGetId", &x_.StreamGetId);
    Get("cuStreamGetDevice", &x_.StreamGetDevice);
    Get("cuCtxGetId", &x_.CtxGetId);
    Get("cuStreamGetAttribute", &x_.StreamGetAttribute);
    Get("cuStreamSetAttribute", &x_.StreamSetAttribute);
    Get("cuStreamCopyAttributes", &x_.StreamCopyAttributes);
    Get("cuStreamWriteValue32", &x_.WriteValue32);
    Get("cuStreamWriteValue64", &x_.WriteValue64);
    Get("cuStreamWaitValue32", &x_.WaitValue32);
    Get("cuStreamWaitValue64", &x_.WaitValue64);
    Get("cuStreamBatchMemOp", &x_.BatchMemOp);
    Get("cuCtxRecordEvent", &x_.CtxRecordEvent);
    Get("cuCtxWaitEvent", &x_.CtxWaitEvent);
    Get("cuCtxGetCacheConfig", &x_.CtxGetCacheConfig);
    Get("cuCtxSetCacheConfig", &x_.CtxSetCacheConfig);
    Get("cuCtxGetExecAffinity", &x_.CtxGetExecAffinity);
    Get("cuCtxResetPersistingL2Cache", &x_.CtxResetPersistingL2Cache);
    Get("cuStreamBeginCaptureToGraph", &x_.BeginCaptureToGraph);
    Get("cuStreamUpdateCaptureDependencies", &x_.UpdateCaptureDependencies);
    Get("cuStreamGetCaptureInfo", &x_.GetCaptureInfo);
    ASSERT_EQ(api().cuStreamCreate(&s1_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamCreate(&s2_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (s1_ != nullptr) api().cuStreamDestroy(s1_);
    if (s2_ != nullptr) api().cuStreamDestroy(s2_);
    PrimaryContextTest::TearDown();
  }
  template <typename Fn>
  void Get(const char* name, Fn** fn) {
    ASSERT_TRUE(ResolveEntry(api(), name, fn)) << name;
  }

  // Host-mapped pinned memory: the host writes it while the device waits on it.
  struct Mapped {
    void* host = nullptr;
    CUdeviceptr dev = 0;
    volatile std::uint32_t* word(int i) const { return static_cast<std::uint32_t*>(host) + i; }
  };
  Mapped MapHost(const cuhal::CudaApi& api) {
    Mapped m;
    EXPECT_EQ(api.cuMemHostAlloc(&m.host, 4096, CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
    std::memset(m.host, 0, 4096);
    EXPECT_EQ(api.cuMemHostGetDevicePointer(&m.dev, m.host, 0), CUDA_SUCCESS);
    return m;
  }

  StreamCtxApi x_;
  CUstream s1_ = nullptr;
  CUstream s2_ = nullptr;
};

TEST_P(StreamCtxTest, StreamIdsAreUniqueIncreasingAndStable) {
  unsigned long long a = 0, a_again = 0, b = 0;
  ASSERT_EQ(x_.StreamGetId(s1_, &a), CUDA_SUCCESS);
  ASSERT_EQ(x_.StreamGetId(s1_, &a_again), CUDA_SUCCESS);
  ASSERT_EQ(x_.StreamGetId(s2_, &b), CUDA_SUCCESS);
  EXPECT_EQ(a, a_again);
  EXPECT_NE(a, 0u);
  EXPECT_EQ(b - a, 1u);  // consecutive creations: consecutive ids
  unsigned long long legacy = 0, null_stream = 0, per_thread = 0;
  ASSERT_EQ(x_.StreamGetId(CU_STREAM_LEGACY, &legacy), CUDA_SUCCESS);
  ASSERT_EQ(x_.StreamGetId(nullptr, &null_stream), CUDA_SUCCESS);
  ASSERT_EQ(x_.StreamGetId(CU_STREAM_PER_THREAD, &per_thread), CUDA_SUCCESS);
  EXPECT_EQ(legacy, null_stream);
  EXPECT_NE(legacy, per_thread);
  EXPECT_LT(legacy, a);
  EXPECT_EQ(x_.StreamGetId(s1_, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(StreamCtxTest, CtxIdOfNullIsTheCurrentContextsAndStable) {
  unsigned long long id = 0, again = 0, current = 0;
  ASSERT_EQ(x_.CtxGetId(ctx(), &id), CUDA_SUCCESS);
  ASSERT_EQ(x_.CtxGetId(ctx(), &again), CUDA_SUCCESS);
  ASSERT_EQ(x_.CtxGetId(nullptr, &current), CUDA_SUCCESS);
  EXPECT_EQ(id, again);
  EXPECT_EQ(id, current);
  CUcontext other = nullptr;
  CUctxCreateParams params{};
  ASSERT_EQ(api().cuCtxCreate(&other, &params, 0, 0), CUDA_SUCCESS);
  unsigned long long other_id = 0;
  ASSERT_EQ(x_.CtxGetId(other, &other_id), CUDA_SUCCESS);
  EXPECT_GT(other_id, id);
  CUcontext third = nullptr;
  ASSERT_EQ(api().cuCtxCreate(&third, &params, 0, 0), CUDA_SUCCESS);
  unsigned long long third_id = 0;
  ASSERT_EQ(x_.CtxGetId(third, &third_id), CUDA_SUCCESS);
  EXPECT_EQ(third_id, other_id + 1);  // a counter of contexts
  ASSERT_EQ(api().cuCtxDestroy(third), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(x_.CtxGetId(other, &other_id), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  ASSERT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
  EXPECT_EQ(x_.CtxGetId(ctx(), nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(StreamCtxTest, StreamGetDeviceIsTheContextsDevice) {
  CUdevice d = 77;
  ASSERT_EQ(x_.StreamGetDevice(s1_, &d), CUDA_SUCCESS);
  EXPECT_EQ(d, 0);
  d = 77;
  ASSERT_EQ(x_.StreamGetDevice(nullptr, &d), CUDA_SUCCESS);
  EXPECT_EQ(d, 0);
  EXPECT_EQ(x_.StreamGetDevice(s1_, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(StreamCtxTest, StreamAttributesReadBackAndCopy) {
  CUstreamAttrValue fresh;
  std::memset(&fresh, 0, sizeof fresh);
  ASSERT_EQ(x_.StreamGetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &fresh),
            CUDA_SUCCESS);
  // Read as an int: -1 is no CUsynchronizationPolicy (loading it as one is undefined behaviour).
  int fresh_policy = 0;
  std::memcpy(&fresh_policy, &fresh.syncPolicy, sizeof fresh_policy);
  EXPECT_EQ(fresh_policy, -1) << "no policy set on a new stream";
  CUstreamAttrValue v;
  std::memset(&v, 0, sizeof v);
  v.syncPolicy = CU_SYNC_POLICY_BLOCKING_SYNC;
  ASSERT_EQ(x_.StreamSetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v),
            CUDA_SUCCESS);
  std::memset(&v, 0, sizeof v);
  v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
  ASSERT_EQ(x_.StreamSetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, &v), CUDA_SUCCESS);
  CUstreamAttrValue out;
  std::memset(&out, 0, sizeof out);
  ASSERT_EQ(x_.StreamGetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &out),
            CUDA_SUCCESS);
  EXPECT_EQ(out.syncPolicy, CU_SYNC_POLICY_BLOCKING_SYNC);
  ASSERT_EQ(x_.StreamCopyAttributes(s2_, s1_), CUDA_SUCCESS);
  std::memset(&out, 0, sizeof out);
  ASSERT_EQ(x_.StreamGetAttribute(s2_, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &out),
            CUDA_SUCCESS);
  EXPECT_EQ(out.syncPolicy, CU_SYNC_POLICY_BLOCKING_SYNC);
  std::memset(&out, 0, sizeof out);
  ASSERT_EQ(x_.StreamGetAttribute(s2_, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, &out), CUDA_SUCCESS);
  EXPECT_EQ(out.memSyncDomain, CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE);
  EXPECT_EQ(x_.StreamGetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &out),
            CUDA_ERROR_INVALID_VALUE) << "a launch-only attribute";
  std::memset(&v, 0, sizeof v);
  v.syncPolicy = static_cast<CUsynchronizationPolicy>(5);
  EXPECT_EQ(x_.StreamSetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v),
            CUDA_ERROR_INVALID_VALUE);
  std::memset(&v, 0, sizeof v);
  v.accessPolicyWindow.num_bytes = 4096;
  v.accessPolicyWindow.hitRatio = 0.5f;
  v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_PERSISTING;
  EXPECT_EQ(x_.StreamSetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v),
            CUDA_ERROR_INVALID_VALUE) << "a persisting miss property";
  v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
  EXPECT_EQ(x_.StreamSetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v),
            CUDA_SUCCESS);
  v.accessPolicyWindow.hitRatio = 1.5f;
  EXPECT_EQ(x_.StreamSetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v),
            CUDA_ERROR_INVALID_VALUE);
  std::memset(&v, 0, sizeof v);
  v.priority = -100;
  ASSERT_EQ(x_.StreamSetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v), CUDA_SUCCESS);
  int priority = 0;
  ASSERT_EQ(api().cuStreamGetPriority(s1_, &priority), CUDA_SUCCESS);
  EXPECT_EQ(priority, -5) << "clamped to the greatest priority";
}

TEST_P(StreamCtxTest, CopyAttributesBetweenContextsIsInvalidValue) {
  CUcontext other = nullptr;
  CUctxCreateParams params{};
  ASSERT_EQ(api().cuCtxCreate(&other, &params, 0, 0), CUDA_SUCCESS);
  CUstream foreign = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&foreign, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(x_.StreamCopyAttributes(foreign, s1_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuStreamDestroy(foreign), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxDestroy(other), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, CacheConfigReadsBackWhatWasSet) {
  CUfunc_cache c = static_cast<CUfunc_cache>(77);
  ASSERT_EQ(x_.CtxGetCacheConfig(&c), CUDA_SUCCESS);
  EXPECT_EQ(c, CU_FUNC_CACHE_PREFER_NONE);
  ASSERT_EQ(x_.CtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1), CUDA_SUCCESS);
  ASSERT_EQ(x_.CtxGetCacheConfig(&c), CUDA_SUCCESS);
  EXPECT_EQ(c, CU_FUNC_CACHE_PREFER_L1);
  EXPECT_EQ(x_.CtxSetCacheConfig(static_cast<CUfunc_cache>(4)), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(x_.CtxSetCacheConfig(CU_FUNC_CACHE_PREFER_NONE), CUDA_SUCCESS);
  EXPECT_EQ(x_.CtxGetCacheConfig(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.CtxResetPersistingL2Cache(), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, ExecAffinityOfAnOrdinaryContextIsEverySm) {
  int sms = 0;
  ASSERT_EQ(api().cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0),
            CUDA_SUCCESS);
  CUexecAffinityParam p;
  std::memset(&p, 0, sizeof p);
  ASSERT_EQ(x_.CtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT), CUDA_SUCCESS);
  EXPECT_EQ(p.param.smCount.val, static_cast<unsigned>(sms));
  EXPECT_EQ(x_.CtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_MAX),
            CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
}

TEST_P(StreamCtxTest, WriteValuesLandInDeviceAndMappedMemory) {
  CUdeviceptr d = 0;
  ASSERT_EQ(api().cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8(d, 0, 4096), CUDA_SUCCESS);
  ASSERT_EQ(x_.WriteValue32(s1_, d, 0x11223344u, 0), CUDA_SUCCESS);
  ASSERT_EQ(x_.WriteValue64(s1_, d + 8, 0x1122334455667788ull, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  std::uint32_t w32 = 0;
  std::uint64_t w64 = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&w32, d, 4), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(&w64, d + 8, 8), CUDA_SUCCESS);
  EXPECT_EQ(w32, 0x11223344u);
  EXPECT_EQ(w64, 0x1122334455667788ull);
  EXPECT_EQ(x_.WriteValue32(s1_, d + 2, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.WriteValue32(s1_, d, 1, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER),
            CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr managed = 0;
  ASSERT_EQ(api().cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(x_.WriteValue32(s1_, managed, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(managed), CUDA_SUCCESS);
  Mapped m = MapHost(api());
  ASSERT_EQ(x_.WriteValue32(s1_, m.dev + 4, 42, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(*m.word(1), 42u);
  EXPECT_EQ(api().cuMemFreeHost(m.host), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, WaitValueHoldsTheStreamUntilTheHostWrites) {
  Mapped m = MapHost(api());
  ASSERT_EQ(x_.WaitValue32(s1_, m.dev, 1, CU_STREAM_WAIT_VALUE_EQ), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32Async(m.dev + 8, 7, 1, s1_), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(api().cuStreamQuery(s1_), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(*m.word(2), 0u);
  *m.word(0) = 1;
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(*m.word(2), 7u);
  // Released by a write on another stream (64-bit, GEQ).
  ASSERT_EQ(x_.WaitValue64(s1_, m.dev + 16, 5, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(api().cuStreamQuery(s1_), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(x_.WriteValue64(s2_, m.dev + 16, 6, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(m.host), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, BatchMemOpRunsItsOperationsInOrder) {
  Mapped m = MapHost(api());
  CUstreamBatchMemOpParams ops[3];
  std::memset(ops, 0, sizeof ops);
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = m.dev;
  ops[0].writeValue.value = 3;
  ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[1].waitValue.address = m.dev;
  ops[1].waitValue.value = 3;
  ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  ops[2].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[2].writeValue.address = m.dev + 8;
  ops[2].writeValue.value64 = 0x500000005ull;
  ASSERT_EQ(x_.BatchMemOp(s1_, 3, ops, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(*m.word(0), 3u);
  EXPECT_EQ(*m.word(2), 5u);
  EXPECT_EQ(*m.word(3), 5u);
  EXPECT_EQ(x_.BatchMemOp(s1_, 1, ops, 1), CUDA_ERROR_INVALID_VALUE);  // flags must be 0
  std::vector<CUstreamBatchMemOpParams> many(256, ops[0]);
  EXPECT_EQ(x_.BatchMemOp(s1_, 255, many.data(), 0), CUDA_SUCCESS);
  EXPECT_EQ(x_.BatchMemOp(s1_, 256, many.data(), 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(m.host), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, CtxRecordEventWaitsForEveryStreamOfTheContext) {
  Mapped m = MapHost(api());
  CUevent e = nullptr;
  ASSERT_EQ(api().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(x_.WaitValue32(s1_, m.dev, 1, CU_STREAM_WAIT_VALUE_EQ), CUDA_SUCCESS);
  ASSERT_EQ(x_.CtxRecordEvent(ctx(), e), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(api().cuEventQuery(e), CUDA_ERROR_NOT_READY);
  *m.word(0) = 1;
  EXPECT_EQ(api().cuEventSynchronize(e), CUDA_SUCCESS);
  EXPECT_EQ(x_.CtxRecordEvent(ctx(), nullptr), CUDA_ERROR_INVALID_HANDLE);
  CUcontext other = nullptr;
  CUctxCreateParams params{};
  ASSERT_EQ(api().cuCtxCreate(&other, &params, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(x_.CtxRecordEvent(other, e), CUDA_ERROR_INVALID_HANDLE) << "the event's context";
  EXPECT_EQ(api().cuCtxDestroy(other), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(e), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(m.host), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, CtxWaitEventHoldsLaterWorkOfTheContext) {
  Mapped m = MapHost(api());
  CUevent e = nullptr;
  ASSERT_EQ(api().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(x_.WaitValue32(s1_, m.dev, 1, CU_STREAM_WAIT_VALUE_EQ), CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventRecord(e, s1_), CUDA_SUCCESS);
  ASSERT_EQ(x_.CtxWaitEvent(ctx(), e), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32Async(m.dev + 8, 9, 1, s2_), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(api().cuStreamQuery(s2_), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(*m.word(2), 0u);
  *m.word(0) = 1;
  ASSERT_EQ(api().cuStreamSynchronize(s2_), CUDA_SUCCESS);
  EXPECT_EQ(*m.word(2), 9u);
  EXPECT_EQ(api().cuEventDestroy(e), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(m.host), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, CaptureToGraphAddsNodesToTheGivenGraph) {
  CUdeviceptr d = 0;
  ASSERT_EQ(api().cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  CUgraph g = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUgraphNode root = nullptr;
  ASSERT_EQ(api().cuGraphAddEmptyNode(&root, g, nullptr, 0), CUDA_SUCCESS);
  ASSERT_EQ(x_.BeginCaptureToGraph(s1_, g, &root, nullptr, 1, CU_STREAM_CAPTURE_MODE_RELAXED),
            CUDA_SUCCESS);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph capturing = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t ndeps = 0;
  ASSERT_EQ(x_.GetCaptureInfo(s1_, &status, nullptr, &capturing, &deps, nullptr, &ndeps),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  EXPECT_EQ(capturing, g);
  ASSERT_EQ(ndeps, 1u);
  EXPECT_EQ(deps[0], root);
  ASSERT_EQ(api().cuMemsetD32Async(d, 1, 4, s1_), CUDA_SUCCESS);
  CUgraph out = nullptr;
  ASSERT_EQ(api().cuStreamEndCapture(s1_, &out), CUDA_SUCCESS);
  EXPECT_EQ(out, g);
  size_t n = 0;
  ASSERT_EQ(api().cuGraphGetNodes(g, nullptr, &n), CUDA_SUCCESS);
  EXPECT_EQ(n, 2u);
  // Another stream cannot capture into it while this one does.
  ASSERT_EQ(x_.BeginCaptureToGraph(s1_, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED),
            CUDA_SUCCESS);
  EXPECT_EQ(x_.BeginCaptureToGraph(s2_, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED),
            CUDA_ERROR_ILLEGAL_STATE);
  ASSERT_EQ(api().cuStreamEndCapture(s1_, &out), CUDA_SUCCESS);
  EXPECT_EQ(x_.BeginCaptureToGraph(s1_, nullptr, nullptr, nullptr, 0,
                                   CU_STREAM_CAPTURE_MODE_RELAXED),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, InvalidatedCaptureToGraphLeavesTheGraphAsItWas) {
  CUdeviceptr d = 0;
  ASSERT_EQ(api().cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  CUgraph g = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUgraphNode root = nullptr;
  ASSERT_EQ(api().cuGraphAddEmptyNode(&root, g, nullptr, 0), CUDA_SUCCESS);
  ASSERT_EQ(x_.BeginCaptureToGraph(s1_, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32Async(d, 5, 1, s1_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(s1_), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph out = reinterpret_cast<CUgraph>(1);
  EXPECT_EQ(api().cuStreamEndCapture(s1_, &out), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(out, nullptr);
  size_t n = 0;
  ASSERT_EQ(api().cuGraphGetNodes(g, nullptr, &n), CUDA_SUCCESS);
  EXPECT_EQ(n, 1u) << "the captured memset node is gone";
  EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(d), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, CtxSetFlagsKeepsSchedulingAndSyncMemops) {
  CUresult (*set_flags)(unsigned) = nullptr;
  ASSERT_TRUE(ResolveEntry(api(), "cuCtxSetFlags", &set_flags));
  CUcontext created = nullptr;
  CUctxCreateParams params{};
  ASSERT_EQ(api().cuCtxCreate(&created, &params, 0, 0), CUDA_SUCCESS);
  unsigned flags = 77;
  ASSERT_EQ(api().cuCtxGetFlags(&flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, 0u) << "no MAP_HOST on a created context";
  ASSERT_EQ(set_flags(CU_CTX_SCHED_BLOCKING_SYNC), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxGetFlags(&flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, unsigned{CU_CTX_SCHED_BLOCKING_SYNC});
  ASSERT_EQ(set_flags(CU_CTX_MAP_HOST | CU_CTX_SYNC_MEMOPS), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxGetFlags(&flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, unsigned{CU_CTX_SYNC_MEMOPS}) << "MAP_HOST is not kept";
  EXPECT_EQ(set_flags(CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(set_flags(0x100), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxDestroy(created), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, CtxDetachDestroysACreatedContextOnceNoAttachmentIsLeft) {
  CUresult (*attach)(CUcontext*, unsigned) = nullptr;
  CUresult (*detach)(CUcontext) = nullptr;
  ASSERT_TRUE(ResolveEntry(api(), "cuCtxAttach", &attach));
  ASSERT_TRUE(ResolveEntry(api(), "cuCtxDetach", &detach));
  CUcontext created = nullptr;
  CUctxCreateParams params{};
  ASSERT_EQ(api().cuCtxCreate(&created, &params, 0, 0), CUDA_SUCCESS);
  CUcontext got = nullptr;
  ASSERT_EQ(attach(&got, 0), CUDA_SUCCESS);
  EXPECT_EQ(got, created);
  EXPECT_EQ(attach(&got, 1), CUDA_ERROR_INVALID_VALUE);
  unsigned version = 0;
  ASSERT_EQ(detach(created), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxGetApiVersion(created, &version), CUDA_SUCCESS) << "still attached once";
  ASSERT_EQ(detach(created), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxGetApiVersion(created, &version), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(detach(created), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(api().cuCtxDestroy(created), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  ASSERT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
}

TEST_P(StreamCtxTest, UpdateCaptureDependenciesAddsAndReplaces) {
  CUgraphNode none = nullptr;
  EXPECT_EQ(x_.UpdateCaptureDependencies(s1_, &none, nullptr, 0,
                                         CU_STREAM_ADD_CAPTURE_DEPENDENCIES),
            CUDA_ERROR_ILLEGAL_STATE);  // not capturing (cuda.h)
  CUgraph g = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUgraphNode a = nullptr, b = nullptr;
  ASSERT_EQ(api().cuGraphAddEmptyNode(&a, g, nullptr, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphAddEmptyNode(&b, g, nullptr, 0), CUDA_SUCCESS);
  ASSERT_EQ(x_.BeginCaptureToGraph(s1_, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED),
            CUDA_SUCCESS);
  auto count = [&] {
    CUstreamCaptureStatus status;
    const CUgraphNode* deps = nullptr;
    size_t n = 99;
    EXPECT_EQ(x_.GetCaptureInfo(s1_, &status, nullptr, nullptr, &deps, nullptr, &n),
              CUDA_SUCCESS);
    return n;
  };
  ASSERT_EQ(x_.UpdateCaptureDependencies(s1_, &a, nullptr, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES),
            CUDA_SUCCESS);
  ASSERT_EQ(x_.UpdateCaptureDependencies(s1_, &b, nullptr, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES),
            CUDA_SUCCESS);
  EXPECT_EQ(count(), 2u);
  ASSERT_EQ(x_.UpdateCaptureDependencies(s1_, &b, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES),
            CUDA_SUCCESS);
  EXPECT_EQ(count(), 1u);
  EXPECT_EQ(x_.UpdateCaptureDependencies(s1_, &a, nullptr, 1, 7), CUDA_ERROR_INVALID_VALUE);
  CUgraph out = nullptr;
  ASSERT_EQ(api().cuStreamEndCapture(s1_, &out), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(StreamCtxTest);

// Fake only: where the real driver crashes (garbage and destroyed handles, NULL value pointers)
// the fake answers an error; the per-thread forms resolve NULL to the per-thread stream.
class StreamCtxFakeTest : public StreamCtxTest {};

TEST_P(StreamCtxFakeTest, GarbageAndStaleHandlesAnswerErrors) {
  const auto garbage_stream = reinterpret_cast<CUstream>(std::uintptr_t{0x5a5a5a5a5a5a0000});
  const auto garbage_ctx = reinterpret_cast<CUcontext>(std::uintptr_t{0x5a5a5a5a5a5a0000});
  const auto garbage_event = reinterpret_cast<CUevent>(std::uintptr_t{0x5a5a5a5a5a5a0000});
  unsigned long long id = 0;
  EXPECT_EQ(x_.StreamGetId(garbage_stream, &id), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(x_.CtxGetId(garbage_ctx, &id), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(x_.CtxRecordEvent(ctx(), garbage_event), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(x_.CtxWaitEvent(garbage_ctx, nullptr), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(x_.StreamGetAttribute(s1_, CU_LAUNCH_ATTRIBUTE_PRIORITY, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x_.BatchMemOp(s1_, 1, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  CUstream gone = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&gone, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamDestroy(gone), CUDA_SUCCESS);
  EXPECT_EQ(x_.StreamGetId(gone, &id), CUDA_ERROR_CONTEXT_IS_DESTROYED);  // as measured
  EXPECT_EQ(x_.WriteValue32(gone, 0, 0, 0), CUDA_ERROR_CONTEXT_IS_DESTROYED);
}

TEST_P(StreamCtxFakeTest, PerThreadFormTakesNullAsThePerThreadStream) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  ASSERT_EQ(api().cuGetProcAddress("cuStreamGetId", &p, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
            CUDA_SUCCESS);
  ASSERT_NE(p, nullptr);
  auto* ptsz = reinterpret_cast<CUresult (*)(CUstream, unsigned long long*)>(p);
  EXPECT_NE(reinterpret_cast<void*>(ptsz), reinterpret_cast<void*>(x_.StreamGetId));
  unsigned long long via_ptsz = 0, per_thread = 1, legacy = 2;
  ASSERT_EQ(ptsz(nullptr, &via_ptsz), CUDA_SUCCESS);
  ASSERT_EQ(x_.StreamGetId(CU_STREAM_PER_THREAD, &per_thread), CUDA_SUCCESS);
  ASSERT_EQ(x_.StreamGetId(CU_STREAM_LEGACY, &legacy), CUDA_SUCCESS);
  EXPECT_EQ(via_ptsz, per_thread);
  EXPECT_NE(via_ptsz, legacy);
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(StreamCtxFakeTest);

}  // namespace
}  // namespace cuhal::testing
