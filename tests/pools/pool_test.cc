// Copyright 2026 The cuhal Authors.
// fakecuda's memory pools beyond what the single-device traces can show: pool allocations as
// ordinary device memory (copies, memsets, pointer attributes), the device total shared with
// cuMemAlloc, several devices (current pools, access, allocations across devices), destruction
// and the leak inventory, stream ordering of internal dependencies, threads (for TSan), and
// fault injection into every pool entry point.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

cuuint64_t Stat(const CudaApi& api, CUmemoryPool pool, CUmemPool_attribute attr) {
  cuuint64_t v = ~cuuint64_t{0};
  EXPECT_EQ(api.cuMemPoolGetAttribute(pool, attr, &v), CUDA_SUCCESS);
  return v;
}
cuuint64_t Reserved(const CudaApi& api, CUmemoryPool pool) {
  return Stat(api, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
}
cuuint64_t Used(const CudaApi& api, CUmemoryPool pool) {
  return Stat(api, pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
}

CUmemPoolProps DeviceProps(int device, size_t max_size = 0) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  props.maxSize = max_size;
  return props;
}

class PoolTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ctx_ = std::make_unique<ScopedPrimaryContext>(api());
    ASSERT_EQ(ctx_->result(), CUDA_SUCCESS);
    ASSERT_EQ(api().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    CUmemPoolProps props = DeviceProps(0);
    ASSERT_EQ(api().cuMemPoolCreate(&pool_, &props), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (ctx_ != nullptr) {
      if (pool_ != nullptr) {
        EXPECT_EQ(api().cuMemPoolDestroy(pool_), CUDA_SUCCESS);
      }
      if (stream_ != nullptr) {
        EXPECT_EQ(api().cuStreamDestroy(stream_), CUDA_SUCCESS);
      }
      ctx_.reset();
    }
    BackendTest::TearDown();
  }

  std::unique_ptr<ScopedPrimaryContext> ctx_;
  CUstream stream_ = nullptr;
  CUmemoryPool pool_ = nullptr;
};

TEST_P(PoolTest, PoolAllocationsAreDeviceMemory) {
  constexpr size_t kBytes = 3000;
  CUdeviceptr p = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&p, kBytes, pool_, stream_), CUDA_SUCCESS);
  EXPECT_EQ(p % 512, 0u);
  ASSERT_EQ(api().cuMemsetD8Async(p, 0x5A, kBytes, stream_), CUDA_SUCCESS);
  std::vector<unsigned char> host(kBytes, 0);
  ASSERT_EQ(api().cuMemcpyDtoHAsync(host.data(), p, kBytes, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](unsigned char c) { return c == 0x5A; }));

  CUmemoryPool owner = nullptr;
  ASSERT_EQ(api().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, pool_);
  unsigned type = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_SUCCESS);
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_DEVICE});
  size_t range = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 100),
            CUDA_SUCCESS);
  EXPECT_EQ(range, kBytes);
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_EQ(api().cuMemGetAddressRange(&base, &size, p + 2999), CUDA_SUCCESS);
  EXPECT_EQ(base, p);
  EXPECT_EQ(size, kBytes);

  // A memset past the allocation's end is refused, though the pool's memory continues.
  EXPECT_EQ(api().cuMemsetD8Async(p, 0, kBytes + 1, stream_), CUDA_ERROR_INVALID_VALUE);

  // cuMemAllocAsync comes from the current (default) pool.
  CUdeviceptr q = 0;
  ASSERT_EQ(api().cuMemAllocAsync(&q, 16, stream_), CUDA_SUCCESS);
  CUmemoryPool default_pool = nullptr;
  ASSERT_EQ(api().cuDeviceGetDefaultMemPool(&default_pool, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, q),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, default_pool);

  EXPECT_EQ(api().cuMemFreeAsync(p, stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeAsync(q, stream_), CUDA_SUCCESS);
  // A freed pointer is no allocation any more.
  EXPECT_EQ(api().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
}

// Live memory never overlaps, across pools and cuMemAlloc; a pool's addresses come back after
// its memory was released (measured on the H200: tests/pools/traces/trim.trace).
TEST_P(PoolTest, LiveRangesNeverOverlapAndReleasedAddressesComeBack) {
  CUmemoryPool second = nullptr;
  CUmemPoolProps props = DeviceProps(0);
  ASSERT_EQ(api().cuMemPoolCreate(&second, &props), CUDA_SUCCESS);
  CUdeviceptr plain = 0;
  ASSERT_EQ(api().cuMemAlloc(&plain, 5 * kMiB), CUDA_SUCCESS);
  CUdeviceptr first_address = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::pair<CUdeviceptr, size_t>> live = {{plain, 5 * kMiB}};
    for (size_t bytes : {kMiB, 40 * kMiB, size_t{1}, 31 * kMiB, 100 * kMiB}) {
      for (CUmemoryPool pool : {pool_, second}) {
        CUdeviceptr p = 0;
        ASSERT_EQ(api().cuMemAllocFromPoolAsync(&p, bytes, pool, stream_), CUDA_SUCCESS);
        for (const auto& [b, s] : live) {
          EXPECT_FALSE(p < b + s && b < p + bytes) << "overlaps live memory";
        }
        live.emplace_back(p, bytes);
      }
    }
    if (round == 0) first_address = live[1].first;
    EXPECT_EQ(live[1].first, first_address) << "round " << round;
    for (size_t i = 1; i < live.size(); ++i) {
      ASSERT_EQ(api().cuMemFreeAsync(live[i].first, stream_), CUDA_SUCCESS);
    }
    ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);  // releases everything
    EXPECT_EQ(Reserved(api(), pool_), 0u);
    EXPECT_EQ(Reserved(api(), second), 0u);
  }
  EXPECT_EQ(api().cuMemFree(plain), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemPoolDestroy(second), CUDA_SUCCESS);
}

TEST_P(PoolTest, SubAllocationsArePackedAt512Bytes) {
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  CUdeviceptr c = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&a, 1, pool_, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&b, 513, pool_, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&c, 1, pool_, stream_), CUDA_SUCCESS);
  EXPECT_EQ(b, a + 512);
  EXPECT_EQ(c, b + 1024);
  EXPECT_EQ(Used(api(), pool_), 515u);
  EXPECT_EQ(Reserved(api(), pool_), 32 * kMiB);
  for (CUdeviceptr p : {a, b, c}) EXPECT_EQ(api().cuMemFreeAsync(p, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
}

TEST_P(PoolTest, CuMemFreeOfPoolMemory) {
  CUdeviceptr p = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&p, 4096, pool_, stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFreeAsync(p, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(Used(api(), pool_), 4096u) << "measured: cuMemFree does not lower USED";
  EXPECT_EQ(Reserved(api(), pool_), 0u);  // cuMemFree synchronizes; threshold 0
  // The range is free again: the next allocation gets it.
  CUdeviceptr q = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&q, 4096, pool_, stream_), CUDA_SUCCESS);
  EXPECT_EQ(q, p);
  EXPECT_EQ(api().cuMemFreeAsync(q, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
}

// cuMemFreeAsync of cuMemAlloc memory is accepted (measured) and frees it in stream order.
TEST_P(PoolTest, FreeAsyncOfCuMemAllocMemory) {
  CUdeviceptr p = 0;
  ASSERT_EQ(api().cuMemAlloc(&p, kMiB), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(p, 1, kMiB, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemFreeAsync(p, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(p), CUDA_ERROR_INVALID_VALUE) << "already freed";
  size_t free = 0;
  size_t total = 0;
  ASSERT_EQ(api().cuMemGetInfo(&free, &total), CUDA_SUCCESS);
  EXPECT_EQ(free, total);
}

TEST_P(PoolTest, ArgumentErrors) {
  CUdeviceptr p = 0;
  EXPECT_EQ(api().cuMemPoolCreate(nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUmemoryPool other = nullptr;
  EXPECT_EQ(api().cuMemPoolCreate(&other, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUmemoryPool bogus = reinterpret_cast<CUmemoryPool>(std::uintptr_t{0x1230});
  EXPECT_EQ(api().cuMemAllocFromPoolAsync(&p, 1, bogus, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemAllocFromPoolAsync(&p, 1, nullptr, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemPoolDestroy(bogus), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemPoolTrimTo(bogus, 0), CUDA_ERROR_INVALID_VALUE);
  cuuint64_t v = 0;
  EXPECT_EQ(api().cuMemPoolGetAttribute(bogus, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemPoolGetAttribute(pool_, static_cast<CUmemPool_attribute>(99), &v),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemPoolSetAttribute(pool_, static_cast<CUmemPool_attribute>(99), &v),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  CUmemoryPool out = nullptr;
  EXPECT_EQ(api().cuDeviceGetDefaultMemPool(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuDeviceGetDefaultMemPool(&out, 7), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(api().cuDeviceGetMemPool(&out, -1), CUDA_ERROR_INVALID_DEVICE);
  // Measured (H100, 2026-12-06, tests/cudart_catalogue/pools.cu): not INVALID_DEVICE.
  EXPECT_EQ(api().cuDeviceSetMemPool(7, pool_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuDeviceSetMemPool(0, bogus), CUDA_ERROR_INVALID_VALUE);
  // A destroyed stream.
  CUstream dead = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&dead, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamDestroy(dead), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAllocFromPoolAsync(&p, 1, pool_, dead), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(api().cuMemAllocAsync(&p, 1, dead), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(Used(api(), pool_), 0u);
}

TEST_P(PoolTest, DestroyIsDeferredAndTheInventoryCountsPools) {
  if (!IsFake()) GTEST_SKIP() << "the inventory is the fake's";
  CUdeviceptr p = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&p, 4096, pool_, stream_), CUDA_SUCCESS);
  size_t free_before = 0;
  size_t total = 0;
  ASSERT_EQ(api().cuMemGetInfo(&free_before, &total), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().pools, 1);
  EXPECT_EQ(fake().LiveObjects().pool_allocations, 1);
  EXPECT_NE(fake().LeakReport().find("memory pool"), std::string::npos);
  ASSERT_EQ(api().cuMemPoolDestroy(pool_), CUDA_SUCCESS);
  CUmemoryPool destroyed = pool_;
  pool_ = nullptr;
  EXPECT_EQ(fake().LiveObjects().pools, 0);
  EXPECT_EQ(fake().LiveObjects().pool_allocations, 1);
  // The handle is dead at once; its allocation still works and still reserves memory.
  EXPECT_EQ(api().cuMemPoolTrimTo(destroyed, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD8Async(p, 1, 4096, stream_), CUDA_SUCCESS);
  size_t free_now = 0;
  ASSERT_EQ(api().cuMemGetInfo(&free_now, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_now, free_before);
  ASSERT_EQ(api().cuMemFreeAsync(p, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().pool_allocations, 0);
  ASSERT_EQ(api().cuMemGetInfo(&free_now, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_now, total) << "the destroyed pool's memory went back with its last allocation";
}

// At maxSize, idle granules are given back to make room for a placement that needs new ones; a
// failed allocation leaves the pool as it was.
TEST_P(PoolTest, IdleGranulesMakeRoomAtTheLimit) {
  CUmemoryPool small = nullptr;
  CUmemPoolProps props = DeviceProps(0, 64 * kMiB);
  ASSERT_EQ(api().cuMemPoolCreate(&small, &props), CUDA_SUCCESS);
  cuuint64_t keep = ~cuuint64_t{0};
  ASSERT_EQ(api().cuMemPoolSetAttribute(small, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep),
            CUDA_SUCCESS);
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&a, 32 * kMiB, small, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&b, 32 * kMiB, small, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemFreeAsync(a, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);  // a's granule is idle, kept
  EXPECT_EQ(Reserved(api(), small), 64 * kMiB);
  CUdeviceptr c = 0;
  EXPECT_EQ(api().cuMemAllocFromPoolAsync(&c, 40 * kMiB, small, stream_), CUDA_ERROR_OUT_OF_MEMORY)
      << "even without the idle granule, 40 MiB past b needs 64 MiB more";
  EXPECT_EQ(Reserved(api(), small), 64 * kMiB) << "a failed allocation changes nothing";
  ASSERT_EQ(api().cuMemFreeAsync(b, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemPoolTrimTo(small, 0), CUDA_SUCCESS);
  EXPECT_EQ(Reserved(api(), small), 0u);

  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&a, 32 * kMiB, small, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&b, kMiB, small, stream_), CUDA_SUCCESS);
  EXPECT_EQ(b, a + 32 * kMiB);
  ASSERT_EQ(api().cuMemFreeAsync(a, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&c, 40 * kMiB, small, stream_), CUDA_SUCCESS)
      << "placed after b, it needs a third granule: the idle first one makes room";
  EXPECT_EQ(c, b + kMiB);
  EXPECT_EQ(Reserved(api(), small), 64 * kMiB);
  ASSERT_EQ(api().cuMemFreeAsync(b, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemFreeAsync(c, stream_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemPoolDestroy(small), CUDA_SUCCESS);
}

// An internal dependency orders the allocating stream after the free it reuses.
TEST_P(PoolTest, InternalDependencyOrdersTheStreams) {
  CUmemoryPool small = nullptr;
  CUmemPoolProps props = DeviceProps(0, 32 * kMiB);
  ASSERT_EQ(api().cuMemPoolCreate(&small, &props), CUDA_SUCCESS);
  CUstream other = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  OrderLog log;
  CUdeviceptr a = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&a, 32 * kMiB, small, stream_), CUDA_SUCCESS);
  ASSERT_EQ(LaunchAppend(api(), stream_, &log, 1), CUDA_SUCCESS);  // the last use of a
  ASSERT_EQ(api().cuMemFreeAsync(a, stream_), CUDA_SUCCESS);
  CUdeviceptr b = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&b, kMiB, small, other), CUDA_SUCCESS);
  EXPECT_EQ(b, a);
  ASSERT_EQ(LaunchAppend(api(), other, &log, 2), CUDA_SUCCESS);  // the first use of b
  ASSERT_EQ(api().cuStreamSynchronize(other), CUDA_SUCCESS);
  EXPECT_EQ(log.Snapshot(), (std::vector<int>{1, 2}));
  ASSERT_EQ(api().cuMemFreeAsync(b, other), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemPoolDestroy(small), CUDA_SUCCESS);
}

// Frees on the legacy default stream, and on a blocking stream while the legacy stream has work,
// carry the implicit legacy-stream ordering.
TEST_P(PoolTest, LegacyStreamFrees) {
  CUstream blocking = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&blocking, CU_STREAM_DEFAULT), CUDA_SUCCESS);
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&a, 4096, pool_, CU_STREAM_LEGACY), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&b, 4096, pool_, blocking), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(a, 7, 4096, CU_STREAM_LEGACY), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemFreeAsync(b, blocking), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemFreeAsync(a, CU_STREAM_LEGACY), CUDA_SUCCESS);
  CUdeviceptr c = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&c, 4096, pool_, CU_STREAM_LEGACY), CUDA_SUCCESS);
  EXPECT_EQ(c, a) << "the same stream reuses its own free at once";
  ASSERT_EQ(api().cuMemFreeAsync(c, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Reserved(api(), pool_), 0u);
  EXPECT_EQ(api().cuStreamDestroy(blocking), CUDA_SUCCESS);
}

// Many threads allocating and freeing on their own streams while others read statistics and
// trim: consistent totals at the end, and a clean run under ThreadSanitizer.
TEST_P(PoolTest, ConcurrentAllocationAndFree) {
  constexpr int kThreads = 4;
  constexpr int kIterations = 300;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ScopedPushContext push(api(), ctx_->get());
      CUstream s = nullptr;
      if (api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        ++failures;
        return;
      }
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<CUdeviceptr> live;
      for (int i = 0; i < kIterations; ++i) {
        if (live.size() < 8 && rng() % 3 != 0) {
          CUdeviceptr p = 0;
          size_t bytes = 1 + rng() % (2 * kMiB);
          if (api().cuMemAllocFromPoolAsync(&p, bytes, pool_, s) != CUDA_SUCCESS ||
              api().cuMemsetD8Async(p, static_cast<unsigned char>(t), bytes, s) != CUDA_SUCCESS) {
            ++failures;
          } else {
            live.push_back(p);
          }
        } else if (!live.empty()) {
          if (api().cuMemFreeAsync(live.back(), s) != CUDA_SUCCESS) ++failures;
          live.pop_back();
        }
        if (i % 50 == 0 && api().cuStreamSynchronize(s) != CUDA_SUCCESS) ++failures;
      }
      for (CUdeviceptr p : live) {
        if (api().cuMemFreeAsync(p, s) != CUDA_SUCCESS) ++failures;
      }
      if (api().cuStreamSynchronize(s) != CUDA_SUCCESS) ++failures;
      if (api().cuStreamDestroy(s) != CUDA_SUCCESS) ++failures;
    });
  }
  std::thread observer([&] {
    for (int i = 0; i < 200; ++i) {
      cuuint64_t v = 0;
      if (api().cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v) !=
              CUDA_SUCCESS ||
          api().cuMemPoolTrimTo(pool_, 0) != CUDA_SUCCESS) {
        ++failures;
      }
    }
  });
  for (auto& t : threads) t.join();
  observer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Used(api(), pool_), 0u);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Reserved(api(), pool_), 0u);
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(PoolTest);

// --- several devices ---

class MultiDevicePoolTest : public BackendTest {
 protected:
  BackendOptions Options() const override {
    BackendOptions options;
    options.device_count = 2;
    return options;
  }
};

TEST_P(MultiDevicePoolTest, CurrentPoolsAccessAndCrossDeviceAllocation) {
  ScopedPrimaryContext ctx1(api(), 1);
  ASSERT_EQ(ctx1.result(), CUDA_SUCCESS);
  CUstream s1 = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);  // device 1
  ScopedPrimaryContext ctx0(api(), 0);
  ASSERT_EQ(ctx0.result(), CUDA_SUCCESS);
  CUstream s0 = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);  // device 0

  CUmemoryPool default0 = nullptr;
  CUmemoryPool default1 = nullptr;
  ASSERT_EQ(api().cuDeviceGetDefaultMemPool(&default0, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuDeviceGetDefaultMemPool(&default1, 1), CUDA_SUCCESS);
  EXPECT_NE(default0, default1);
  CUmemoryPool current = nullptr;
  ASSERT_EQ(api().cuDeviceGetMemPool(&current, 1), CUDA_SUCCESS);
  EXPECT_EQ(current, default1);

  CUmemoryPool pool1 = nullptr;
  CUmemPoolProps props = DeviceProps(1);
  ASSERT_EQ(api().cuMemPoolCreate(&pool1, &props), CUDA_SUCCESS);
  EXPECT_EQ(api().cuDeviceSetMemPool(0, pool1), CUDA_ERROR_INVALID_VALUE) << "another device's";
  ASSERT_EQ(api().cuDeviceSetMemPool(1, pool1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuDeviceGetMemPool(&current, 1), CUDA_SUCCESS);
  EXPECT_EQ(current, pool1);

  // cuMemAllocAsync on device 1's stream, with device 0's context current: device 1's current
  // pool. cuMemAllocFromPoolAsync: any pool, any stream.
  CUdeviceptr a = 0;
  ASSERT_EQ(api().cuMemAllocAsync(&a, 4096, s1), CUDA_SUCCESS);
  CUmemoryPool owner = nullptr;
  ASSERT_EQ(api().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, pool1);
  int ordinal = -1;
  ASSERT_EQ(api().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, a),
            CUDA_SUCCESS);
  EXPECT_EQ(ordinal, 1);
  CUdeviceptr b = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&b, 4096, pool1, s0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b),
            CUDA_SUCCESS);
  EXPECT_EQ(ordinal, 1);

  // Access: the owner reads and writes; a peer only once granted; all or nothing.
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_MAX;
  ASSERT_EQ(api().cuMemPoolGetAccess(&flags, pool1, &loc), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CUmemAccessDesc descs[2] = {
      {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE},
      {{CU_MEM_LOCATION_TYPE_DEVICE, 9}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE}};
  EXPECT_EQ(api().cuMemPoolSetAccess(pool1, descs, 2), CUDA_ERROR_INVALID_DEVICE);
  ASSERT_EQ(api().cuMemPoolGetAccess(&flags, pool1, &loc), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE) << "a failed call changes nothing";
  ASSERT_EQ(api().cuMemPoolSetAccess(pool1, descs, 1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemPoolGetAccess(&flags, pool1, &loc), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  descs[0].flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  ASSERT_EQ(api().cuMemPoolSetAccess(pool1, descs, 1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemPoolGetAccess(&flags, pool1, &loc), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
  loc.id = 1;
  ASSERT_EQ(api().cuMemPoolGetAccess(&flags, pool1, &loc), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CUmemAccessDesc own = {{CU_MEM_LOCATION_TYPE_DEVICE, 1}, CU_MEM_ACCESS_FLAGS_PROT_NONE};
  EXPECT_EQ(api().cuMemPoolSetAccess(pool1, &own, 1), CUDA_ERROR_INVALID_DEVICE);  // measured

  // Frees on another device's stream; then destroying the current pool makes the default current.
  ASSERT_EQ(api().cuMemFreeAsync(a, s0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemFreeAsync(b, s1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemPoolDestroy(pool1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuDeviceGetMemPool(&current, 1), CUDA_SUCCESS);
  EXPECT_EQ(current, default1);
  EXPECT_EQ(api().cuMemPoolDestroy(default1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuStreamSynchronize(s0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(s0), CUDA_SUCCESS);
  {
    ScopedPushContext push(api(), ctx1.get());
    EXPECT_EQ(api().cuStreamDestroy(s1), CUDA_SUCCESS);
  }
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(MultiDevicePoolTest);

// --- the device total is shared with cuMemAlloc ---

TEST(PoolDeviceTotalTest, PoolsAndCuMemAllocShareTheDeviceTotal) {
  fakecuda::DriverOptions options;
  fakecuda::DeviceProfile profile = fakecuda::BuiltinH200Profile();
  profile.total_memory = 96 * kMiB;
  options.devices.push_back(profile);
  fakecuda::ScopedDriver driver(options);
  CudaApi api;
  fakecuda::FillCudaApi(&api);
  ASSERT_EQ(api.cuInit(0), CUDA_SUCCESS);
  {
    ScopedPrimaryContext ctx(api);
    ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
    CUstream s = nullptr;
    ASSERT_EQ(api.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    CUdeviceptr plain = 0;
    ASSERT_EQ(api.cuMemAlloc(&plain, 70 * kMiB), CUDA_SUCCESS);
    CUdeviceptr p = 0;
    EXPECT_EQ(api.cuMemAllocAsync(&p, 1, s), CUDA_ERROR_OUT_OF_MEMORY) << "a granule needs 32 MiB";
    CUmemoryPool pool = nullptr;
    ASSERT_EQ(api.cuDeviceGetMemPool(&pool, 0), CUDA_SUCCESS);
    EXPECT_EQ(Reserved(api, pool), 0u) << "a failed allocation reserves nothing";
    ASSERT_EQ(api.cuMemFree(plain), CUDA_SUCCESS);
    ASSERT_EQ(api.cuMemAllocAsync(&p, 1, s), CUDA_SUCCESS);
    size_t free = 0;
    size_t total = 0;
    ASSERT_EQ(api.cuMemGetInfo(&free, &total), CUDA_SUCCESS);
    EXPECT_EQ(free, 64 * kMiB) << "the pool's reservation counts against the device";
    EXPECT_EQ(api.cuMemAlloc(&plain, 70 * kMiB), CUDA_ERROR_OUT_OF_MEMORY);
    // The pool grows over its idle granule: 90 MiB needs two more.
    CUdeviceptr q = 0;
    ASSERT_EQ(api.cuMemFreeAsync(p, s), CUDA_SUCCESS);
    cuuint64_t keep = ~cuuint64_t{0};
    ASSERT_EQ(api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep),
              CUDA_SUCCESS);
    ASSERT_EQ(api.cuStreamSynchronize(s), CUDA_SUCCESS);
    EXPECT_EQ(Reserved(api, pool), 32 * kMiB);
    ASSERT_EQ(api.cuMemAllocAsync(&q, 90 * kMiB, s), CUDA_SUCCESS);
    EXPECT_EQ(Reserved(api, pool), 96 * kMiB);
    ASSERT_EQ(api.cuMemFreeAsync(q, s), CUDA_SUCCESS);
    ASSERT_EQ(api.cuStreamSynchronize(s), CUDA_SUCCESS);
    ASSERT_EQ(api.cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
    ASSERT_EQ(api.cuMemGetInfo(&free, &total), CUDA_SUCCESS);
    EXPECT_EQ(free, total);
    EXPECT_EQ(api.cuStreamDestroy(s), CUDA_SUCCESS);
  }
  EXPECT_EQ(driver->LiveObjects().Total(), 0) << driver->LeakReport();
}

TEST(PoolInitTest, EveryEntryPointNeedsCuInit) {
  fakecuda::ScopedDriver driver;
  CudaApi api;
  fakecuda::FillCudaApi(&api);
  CUmemoryPool pool = nullptr;
  CUdeviceptr p = 0;
  CUmemPoolProps props = DeviceProps(0);
  EXPECT_EQ(api.cuMemPoolCreate(&pool, &props), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(api.cuDeviceGetDefaultMemPool(&pool, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(api.cuDeviceGetMemPool(&pool, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(api.cuMemAllocAsync(&p, 1, nullptr), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(api.cuMemFreeAsync(p, nullptr), CUDA_ERROR_NOT_INITIALIZED);
}

// --- fault injection ---

// Everything a pool entry point could change.
struct Snapshot {
  fakecuda::Inventory live;
  std::vector<cuuint64_t> stats;
  size_t free_memory = 0;
  CUmemoryPool current = nullptr;
  CUmemAccess_flags access = CU_MEM_ACCESS_FLAGS_PROT_MAX;

  bool operator==(const Snapshot& o) const {
    return live.Total() == o.live.Total() && live.pools == o.live.pools &&
           live.pool_allocations == o.live.pool_allocations && stats == o.stats &&
           free_memory == o.free_memory && current == o.current && access == o.access;
  }
};

Snapshot Take(const CudaApi& api, fakecuda::FakeDriver& fake, CUmemoryPool pool) {
  Snapshot s;
  s.live = fake.LiveObjects();
  for (CUmemPool_attribute attr :
       {CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
        CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES}) {
    int v = -1;
    EXPECT_EQ(api.cuMemPoolGetAttribute(pool, attr, &v), CUDA_SUCCESS);
    s.stats.push_back(static_cast<cuuint64_t>(v));
  }
  for (CUmemPool_attribute attr :
       {CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        CU_MEMPOOL_ATTR_USED_MEM_HIGH}) {
    s.stats.push_back(Stat(api, pool, attr));
  }
  size_t total = 0;
  EXPECT_EQ(api.cuMemGetInfo(&s.free_memory, &total), CUDA_SUCCESS);
  EXPECT_EQ(api.cuDeviceGetMemPool(&s.current, 0), CUDA_SUCCESS);
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 1};
  EXPECT_EQ(api.cuMemPoolGetAccess(&s.access, pool, &loc), CUDA_SUCCESS);
  return s;
}

class PoolFaultTest : public BackendTest {
 protected:
  BackendOptions Options() const override {
    BackendOptions options;
    options.device_count = 2;
    return options;
  }
};

// Each pool entry point, failed by the injector, returns the injected error and changes nothing.
TEST_P(PoolFaultTest, AnInjectedFailureChangesNothing) {
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUmemoryPool pool = nullptr;
  CUmemPoolProps props = DeviceProps(0);
  ASSERT_EQ(api().cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  CUdeviceptr live = 0;
  CUdeviceptr freed = 0;
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&live, 4096, pool, s), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocFromPoolAsync(&freed, 4096, pool, s), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemFreeAsync(freed, s), CUDA_SUCCESS);  // pending: a trim could release it

  constexpr CUresult kInjected = CUDA_ERROR_LAUNCH_FAILED;
  constexpr CUdeviceptr kSentinel = 0xabcdef;
  CUmemoryPool pool_out = nullptr;
  CUdeviceptr ptr_out = kSentinel;
  cuuint64_t value = 12345;
  cuuint64_t zero = 0;
  int int_value = 0;
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_MAX;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 1};
  CUmemAccessDesc grant{{CU_MEM_LOCATION_TYPE_DEVICE, 1}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  struct Case {
    const char* entry;
    std::function<CUresult()> call;
  };
  const std::vector<Case> cases = {
      {"cuMemPoolCreate", [&] { return api().cuMemPoolCreate(&pool_out, &props); }},
      {"cuMemPoolDestroy", [&] { return api().cuMemPoolDestroy(pool); }},
      {"cuMemPoolSetAttribute",
       [&] { return api().cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero); }},
      {"cuMemPoolSetAttribute",
       [&] {
         return api().cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                                            &int_value);
       }},
      {"cuMemPoolGetAttribute",
       [&] { return api().cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &value); }},
      {"cuMemPoolTrimTo", [&] { return api().cuMemPoolTrimTo(pool, 0); }},
      {"cuMemPoolSetAccess", [&] { return api().cuMemPoolSetAccess(pool, &grant, 1); }},
      {"cuMemPoolGetAccess", [&] { return api().cuMemPoolGetAccess(&flags, pool, &loc); }},
      {"cuMemAllocAsync", [&] { return api().cuMemAllocAsync(&ptr_out, 4096, s); }},
      {"cuMemAllocFromPoolAsync",
       [&] { return api().cuMemAllocFromPoolAsync(&ptr_out, 4096, pool, s); }},
      {"cuMemFreeAsync", [&] { return api().cuMemFreeAsync(live, s); }},
      {"cuDeviceGetDefaultMemPool", [&] { return api().cuDeviceGetDefaultMemPool(&pool_out, 0); }},
      {"cuDeviceGetMemPool", [&] { return api().cuDeviceGetMemPool(&pool_out, 0); }},
      {"cuDeviceSetMemPool", [&] { return api().cuDeviceSetMemPool(0, pool); }},
      {"cuMemFree", [&] { return api().cuMemFree(live); }},  // PoolFreeSync
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.entry);
    const Snapshot before = Take(api(), fake(), pool);
    fakecuda::FaultRule rule;
    rule.entry = c.entry;
    rule.mode = fakecuda::FaultRule::Mode::kEvery;
    rule.error = kInjected;
    fake().faults().AddRule(rule);
    pool_out = nullptr;
    ptr_out = kSentinel;
    value = 12345;
    flags = CU_MEM_ACCESS_FLAGS_PROT_MAX;
    EXPECT_EQ(c.call(), kInjected);
    fake().faults().ClearRules();
    EXPECT_EQ(pool_out, nullptr) << "an output was written";
    EXPECT_EQ(ptr_out, kSentinel) << "an output was written";
    EXPECT_EQ(value, 12345u) << "an output was written";
    EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_MAX) << "an output was written";
    EXPECT_TRUE(Take(api(), fake(), pool) == before) << "state changed";
  }
  // Without the rule, the calls work (the cases were valid calls).
  EXPECT_EQ(api().cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeAsync(live, s), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemPoolDestroy(pool), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
}

// A scenario with a failure injected at each of its driver calls in turn: every run ends with
// the injected error, without a crash, and leaks nothing once it has cleaned up.
CUresult PoolScenario(const CudaApi& api) {
  CUresult first = CUDA_SUCCESS;
  auto check = [&first](CUresult r) {
    if (first == CUDA_SUCCESS) first = r;
    return first == CUDA_SUCCESS;
  };
  CUcontext ctx = nullptr;
  if (!check(api.cuDevicePrimaryCtxRetain(&ctx, 0))) return first;
  CUstream s = nullptr;
  CUmemoryPool pool = nullptr;
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  CUevent e = nullptr;
  if (check(api.cuCtxPushCurrent(ctx))) {
    CUmemPoolProps props = DeviceProps(0, 64 * kMiB);
    cuuint64_t threshold = 32 * kMiB;
    if (check(api.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) &&
        check(api.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING)) &&
        check(api.cuMemPoolCreate(&pool, &props)) &&
        check(api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold)) &&
        check(api.cuMemAllocFromPoolAsync(&a, 40 * kMiB, pool, s)) &&
        check(api.cuMemAllocAsync(&b, 4096, s)) && check(api.cuMemsetD8Async(a, 1, 4096, s)) &&
        check(api.cuMemFreeAsync(a, s))) {
      a = 0;
      if (check(api.cuEventRecord(e, s)) && check(api.cuEventSynchronize(e)) &&
          check(api.cuMemPoolTrimTo(pool, 0)) && check(api.cuMemFreeAsync(b, s))) {
        b = 0;
        check(api.cuStreamSynchronize(s));
      }
    }
    // Cleanup: whatever was made is unmade. A cleanup call that fails is reported and tried
    // once more (the rule fires once), which is the recovery that leaves nothing behind.
    auto undo = [&check](const std::function<CUresult()>& call) {
      if (!check(call())) call();
    };
    if (a != 0) undo([&] { return api.cuMemFreeAsync(a, s); });
    if (b != 0) undo([&] { return api.cuMemFree(b); });
    if (s != nullptr) undo([&] { return api.cuStreamSynchronize(s); });
    if (pool != nullptr) undo([&] { return api.cuMemPoolDestroy(pool); });
    if (e != nullptr) undo([&] { return api.cuEventDestroy(e); });
    if (s != nullptr) undo([&] { return api.cuStreamDestroy(s); });
    undo([&] { return api.cuCtxPopCurrent(nullptr); });
  }
  if (CUresult r = api.cuDevicePrimaryCtxRelease(0); !check(r)) api.cuDevicePrimaryCtxRelease(0);
  return first;
}

TEST(PoolFaultSweepTest, EveryCallFailsCleanly) {
  std::uint64_t calls = 0;
  {
    std::string unavailable;
    std::string error;
    auto backend = Backend::Create("fake", {}, &unavailable, &error);
    ASSERT_NE(backend, nullptr) << error;
    backend->fake()->faults().ResetCounters();
    ASSERT_EQ(PoolScenario(backend->api()), CUDA_SUCCESS);
    calls = backend->fake()->faults().calls();
    ASSERT_EQ(backend->fake()->LiveObjects().Total(), 0) << backend->fake()->LeakReport();
  }
  ASSERT_GT(calls, 10u);
  for (std::uint64_t n = 1; n <= calls; ++n) {
    for (const char* name : {"fake", "fake_adversarial"}) {
      SCOPED_TRACE(std::string(name) + ", failing call " + std::to_string(n));
      std::string unavailable;
      std::string error;
      auto backend = Backend::Create(name, {}, &unavailable, &error);
      ASSERT_NE(backend, nullptr) << error;
      backend->fake()->faults().ResetCounters();
      fakecuda::FaultRule rule;
      rule.mode = fakecuda::FaultRule::Mode::kNth;
      rule.n = n;
      rule.error = CUDA_ERROR_LAUNCH_FAILED;
      backend->fake()->faults().AddRule(rule);
      EXPECT_EQ(PoolScenario(backend->api()), CUDA_ERROR_LAUNCH_FAILED);
      EXPECT_EQ(backend->fake()->faults().injected(), 1u);
      fakecuda::Inventory live = backend->fake()->LiveObjects();
      EXPECT_EQ(live.Total(), 0) << live.ToString() << "\n" << backend->fake()->LeakReport();
    }
  }
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(PoolFaultTest);

}  // namespace
}  // namespace cuhal::testing
