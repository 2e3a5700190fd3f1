// Copyright 2026 The cuhal Authors.
// Conformance: behaviours measured on the H200 on 2026-12-03 (driver 580.159.04, CUDA 13.0)
// with ci/gpu-probes (`ci/gpu-probes/run.sh`, raw output in ci/gpu-probes/results/): context
// limits, peer access on one GPU, cuCtxGetApiVersion's argument order, out-parameters of failing
// calls, pointer attributes of pool allocations, PCI bus ids. The constants are the H200's; on
// another GPU the real backend would disagree with some of them (the nightly job runs on an
// H200). Each of these tests failed on the fake before it was corrected to agree.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

class H200FactsTest : public PrimaryContextTest {};

size_t GetLimit(const cuhal::CudaApi& api, int limit) {
  size_t v = 0xdead;
  EXPECT_EQ(api.cuCtxGetLimit(&v, static_cast<CUlimit>(limit)), CUDA_SUCCESS) << limit;
  return v;
}

// Sets `limit` to `value` and returns what the driver reads back.
size_t SetAndRead(const cuhal::CudaApi& api, int limit, size_t value) {
  EXPECT_EQ(api.cuCtxSetLimit(static_cast<CUlimit>(limit), value), CUDA_SUCCESS)
      << "limit " << limit << " value " << value;
  return GetLimit(api, limit);
}

TEST_P(H200FactsTest, LimitDefaults) {
  EXPECT_EQ(GetLimit(api(), CU_LIMIT_STACK_SIZE), 1024u);
  EXPECT_EQ(GetLimit(api(), CU_LIMIT_PRINTF_FIFO_SIZE), 8650752u);
  EXPECT_EQ(GetLimit(api(), CU_LIMIT_MALLOC_HEAP_SIZE), 8388608u);
  EXPECT_EQ(GetLimit(api(), CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT), 2048u);
  EXPECT_EQ(GetLimit(api(), CU_LIMIT_MAX_L2_FETCH_GRANULARITY), 64u);
  EXPECT_EQ(GetLimit(api(), CU_LIMIT_PERSISTING_L2_CACHE_SIZE), 11796480u);
  EXPECT_EQ(GetLimit(api(), CU_LIMIT_SHMEM_SIZE), 232448u);  // the opt-in shared memory
  EXPECT_EQ(GetLimit(api(), CU_LIMIT_CIG_ENABLED), 0u);
  size_t v = 0;
  EXPECT_EQ(api().cuCtxGetLimit(&v, CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH), CUDA_ERROR_UNSUPPORTED_LIMIT);
  EXPECT_EQ(api().cuCtxGetLimit(&v, CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED),
            CUDA_ERROR_UNSUPPORTED_LIMIT);
}

TEST_P(H200FactsTest, LimitArgumentChecks) {
  size_t v = 0;
  EXPECT_EQ(api().cuCtxGetLimit(&v, static_cast<CUlimit>(10)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxGetLimit(&v, static_cast<CUlimit>(-1)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxGetLimit(nullptr, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxGetLimit(nullptr, static_cast<CUlimit>(99)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxSetLimit(static_cast<CUlimit>(99), 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 2), CUDA_ERROR_UNSUPPORTED_LIMIT);
  EXPECT_EQ(api().cuCtxSetLimit(CU_LIMIT_SHMEM_SIZE, 1024), CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(api().cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 0), CUDA_ERROR_NOT_PERMITTED);
  // The context is checked before the out-pointer.
  CUcontext popped = nullptr;
  ASSERT_EQ(api().cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxGetLimit(nullptr, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(api().cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 2048), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(api().cuCtxPushCurrent(popped), CUDA_SUCCESS);
}

TEST_P(H200FactsTest, SetLimitRoundsAndClamps) {
  const auto& a = api();
  // Stack: 16-byte steps, at most 523712 bytes.
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_STACK_SIZE, 1), 16u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_STACK_SIZE, 1000), 1008u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_STACK_SIZE, 523712), 523712u);
  EXPECT_EQ(a.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 523713), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(GetLimit(a, CU_LIMIT_STACK_SIZE), 523712u) << "a refused value changes nothing";
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_STACK_SIZE, 1024), 1024u);
  // printf FIFO: at least 512 KiB, 256-byte steps, at most 2 GiB; SIZE_MAX wraps to 0.
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PRINTF_FIFO_SIZE, 1000), 524288u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PRINTF_FIFO_SIZE, 524289), 524544u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PRINTF_FIFO_SIZE, (size_t{1} << 31) + 1), size_t{1} << 31);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PRINTF_FIFO_SIZE, SIZE_MAX), 0u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PRINTF_FIFO_SIZE, 8650752), 8650752u);
  // malloc heap: at least 4 MiB, 64 KiB steps, at most 17681179680 bytes on the H200.
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_MALLOC_HEAP_SIZE, 0), 4194304u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_MALLOC_HEAP_SIZE, 4194305), 4259840u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_MALLOC_HEAP_SIZE, size_t{1} << 40), 17681179680u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_MALLOC_HEAP_SIZE, 8388608), 8388608u);
  // Pending launches: exact within [32, 599186].
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 0), 32u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 1000), 1000u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 599187), 599186u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 2048), 2048u);
  // L2 fetch granularity: exact up to 128, refused above.
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 100), 100u);
  EXPECT_EQ(a.cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 129), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 64), 64u);
  // Persisting L2: steps of 3932160 bytes (a tenth of the 39321600 maximum); 44040192 refused.
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 1), 3932160u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 3932161), 7864320u);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0), 0u);
  EXPECT_EQ(a.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 44040192), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(SetAndRead(a, CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 11796480), 11796480u);
}

TEST_P(H200FactsTest, PeerAccessOnOneDevice) {
  int can = -1;
  ASSERT_EQ(api().cuDeviceCanAccessPeer(&can, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(can, 0);
  EXPECT_EQ(api().cuDeviceCanAccessPeer(nullptr, 0, 99), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxEnablePeerAccess(ctx(), 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
  EXPECT_EQ(api().cuCtxEnablePeerAccess(ctx(), 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuCtxEnablePeerAccess(nullptr, 1), CUDA_ERROR_INVALID_CONTEXT)
      << "the peer is checked before the flags";
  EXPECT_EQ(api().cuCtxDisablePeerAccess(ctx()), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  EXPECT_EQ(api().cuCtxDisablePeerAccess(nullptr), CUDA_ERROR_INVALID_CONTEXT);
  CUcontext created = nullptr;
  ASSERT_EQ(api().cuCtxCreate(&created, nullptr, 0, 0), CUDA_SUCCESS);
  CUcontext popped = nullptr;
  ASSERT_EQ(api().cuCtxPopCurrent(&popped), CUDA_SUCCESS);  // the primary is current again
  ASSERT_EQ(popped, created);
  EXPECT_EQ(api().cuCtxEnablePeerAccess(created, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
  ASSERT_EQ(api().cuCtxDestroy(created), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxEnablePeerAccess(created, 0), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(api().cuCtxDisablePeerAccess(created), CUDA_ERROR_CONTEXT_IS_DESTROYED);
}

TEST_P(H200FactsTest, ApiVersionChecksTheContextFirst) {
  unsigned v = 0;
  ASSERT_EQ(api().cuCtxGetApiVersion(nullptr, &v), CUDA_SUCCESS);
  EXPECT_EQ(v, 3020u);
  CUcontext popped = nullptr;
  ASSERT_EQ(api().cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxGetApiVersion(nullptr, nullptr), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(api().cuCtxGetApiVersion(popped, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuCtxPushCurrent(popped), CUDA_SUCCESS);
}

TEST_P(H200FactsTest, FailedAllocationsClearTheirOutParameters) {
  CUdeviceptr p = 0xdeadbeef;
  EXPECT_EQ(api().cuMemAlloc(&p, size_t{1} << 50), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(p, 0u);
  p = 0xdeadbeef;
  EXPECT_EQ(api().cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(p, 0u);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  p = 0xdeadbeef;
  EXPECT_EQ(api().cuMemAllocAsync(&p, size_t{1} << 50, stream), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(p, 0u);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  // Bad flags leave the out-parameter alone.
  CUstream s = reinterpret_cast<CUstream>(0xdeadbeef);
  EXPECT_EQ(api().cuStreamCreate(&s, 0xff), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(s, reinterpret_cast<CUstream>(0xdeadbeef));
  CUevent e = reinterpret_cast<CUevent>(0xdeadbeef);
  EXPECT_EQ(api().cuEventCreate(&e, 0xff), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(e, reinterpret_cast<CUevent>(0xdeadbeef));
}

TEST_P(H200FactsTest, PointerAttributesOfPoolAndPlainAllocations) {
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(api().cuDeviceGetDefaultMemPool(&pool, 0), CUDA_SUCCESS);
  CUdeviceptr pooled = 0;
  CUdeviceptr plain = 0;
  ASSERT_EQ(api().cuMemAllocAsync(&pooled, 1000, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&plain, 1000), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);

  CUcontext c = reinterpret_cast<CUcontext>(0x1);
  ASSERT_EQ(api().cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, pooled + 100),
            CUDA_SUCCESS);
  EXPECT_EQ(c, nullptr) << "pool memory belongs to no context";
  ASSERT_EQ(api().cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, plain), CUDA_SUCCESS);
  EXPECT_EQ(c, ctx());
  CUmemoryPool mp = nullptr;
  ASSERT_EQ(api().cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, pooled + 100),
            CUDA_SUCCESS);
  EXPECT_EQ(mp, pool);
  CUdeviceptr start = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                        pooled + 100),
            CUDA_SUCCESS);
  EXPECT_EQ(start, pooled);
  size_t size = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, pooled + 100),
            CUDA_SUCCESS);
  EXPECT_EQ(size, 1000u);
  int ipc = -1;
  ASSERT_EQ(api().cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                        pooled),
            CUDA_SUCCESS);
  EXPECT_EQ(ipc, 0);
  ASSERT_EQ(api().cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                        plain),
            CUDA_SUCCESS);
  EXPECT_EQ(ipc, 1);
  unsigned long long handle_types = 77;
  ASSERT_EQ(api().cuPointerGetAttribute(&handle_types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
                                        pooled),
            CUDA_SUCCESS);
  EXPECT_EQ(handle_types, 0u);
  size_t mapping = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&mapping, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, pooled),
            CUDA_SUCCESS);
  EXPECT_EQ(mapping, size_t{32} << 20);
  ASSERT_EQ(api().cuPointerGetAttribute(&mapping, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, plain),
            CUDA_SUCCESS);
  EXPECT_EQ(mapping, size_t{2} << 20);
  void* host = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(api().cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, pooled),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(host, nullptr);

  EXPECT_EQ(api().cuMemFreeAsync(pooled, stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(plain), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_P(H200FactsTest, PciBusIdShortBuffersAndParsing) {
  char full[64] = {};
  ASSERT_EQ(api().cuDeviceGetPCIBusId(full, sizeof(full), 0), CUDA_SUCCESS);
  const std::string id = full;  // "0000:00:06.0" on the H200 machine
  ASSERT_EQ(id.size(), 12u);
  char buf[32];
  std::memset(buf, 'X', sizeof(buf));
  EXPECT_EQ(api().cuDeviceGetPCIBusId(buf, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(buf[0], 'X') << "len 0 writes nothing";
  EXPECT_EQ(api().cuDeviceGetPCIBusId(buf, 5, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(std::string(buf), id.substr(0, 4)) << "a short buffer still gets the truncated id";
  EXPECT_EQ(api().cuDeviceGetPCIBusId(buf, 12, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(std::string(buf), id.substr(0, 11));
  EXPECT_EQ(api().cuDeviceGetPCIBusId(buf, 13, 0), CUDA_SUCCESS);
  EXPECT_EQ(std::string(buf), id);

  auto lookup = [&](const std::string& text) {
    CUdevice d = 12345;
    CUresult r = api().cuDeviceGetByPCIBusId(&d, text.c_str());
    EXPECT_EQ(d, r == CUDA_SUCCESS ? 0 : 12345) << text << ": written only on success";
    return r;
  };
  EXPECT_EQ(lookup(id), CUDA_SUCCESS);
  EXPECT_EQ(lookup(id.substr(5)), CUDA_SUCCESS) << "bus:device.function";
  EXPECT_EQ(lookup(id.substr(0, 10)), CUDA_SUCCESS) << "domain:bus:device";
  EXPECT_EQ(lookup(" " + id), CUDA_SUCCESS);
  EXPECT_EQ(lookup("0000" + id), CUDA_SUCCESS) << "a wider domain";
  EXPECT_EQ(lookup(id + " "), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(lookup(id + ":junk"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(lookup(""), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(lookup("garbage"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(lookup("1:2"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(lookup(id.substr(0, 11) + "9"), CUDA_ERROR_INVALID_DEVICE) << "another function";
}

CUHAL_INSTANTIATE_BACKEND_TEST(H200FactsTest);

}  // namespace
}  // namespace cuhal::testing
