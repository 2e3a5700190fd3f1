// Copyright 2026 The cuhal Authors.
// CachingAllocator (core/memory/caching_allocator.h) on fakecuda: reuse on one stream without a
// driver call, cross-stream reuse only behind an event wait or an observed completion (with the
// fake's race detector on), splitting and coalescing, Trim and the release threshold, the
// out-of-memory retry, every driver call failing once (a clear Status, nothing leaked),
// used/reserved accounting, and the footprint of bench/traces/random_mixed.jsonl; the same for
// expandable segments over fakecuda's VMM (each growth one cuMemCreate/cuMemMap/cuMemSetAccess
// at the end of a range whatever its size, the least growth, Trim and the release threshold
// unmapping whole idle growths at the end, the out-of-memory retry, the fallback without VMM,
// every driver call failing once).
#include "core/memory/caching_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/driver/driver.h"
#include "core/memory/buffer.h"
#include "fakecuda/fake_driver.h"
#include "tests/device/test_macros.h"
#include "tests/support/backend.h"
#include "trace/alloc_trace.h"

namespace cuhal::testing {
namespace {

using ::testing::HasSubstr;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = kKiB * kKiB;

const BufferParams kPool{MemoryHeap::kDeviceLocal, MemoryPoolKind::kDeviceLocal};

// Statuses reported through ReportDroppedStatus while a test runs.
std::vector<std::string>& Dropped() {
  static std::vector<std::string> dropped;
  return dropped;
}
void CollectDropped(const Status& status) { Dropped().push_back(status.ToString()); }

class CachingAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Dropped().clear();
    previous_handler_ = SetDroppedStatusHandler(&CollectDropped);
    ASSERT_NO_FATAL_FAILURE(Make());
  }
  void TearDown() override {
    Destroy();
    if (fake_ != nullptr) {
      EXPECT_EQ(fake_->driver().LiveObjects().Total(), 0) << fake_->driver().LeakReport();
      if (expect_no_race_) {
        EXPECT_THAT(fake_->driver().RaceFindings(), ::testing::IsEmpty());
      }
    }
    fake_.reset();
    SetDroppedStatusHandler(previous_handler_);
  }

  void Make(fakecuda::DriverOptions options = {}, CachingAllocatorParams params = {},
            int streams = 2) {
    Destroy();
    fake_.reset();
    if (!options.racecheck) options.racecheck = fakecuda::RaceCheck::kReport;
    fake_ = std::make_unique<fakecuda::ScopedDriver>(options);
    ASSERT_TRUE(fake_->ok()) << fake_->error();
    fakecuda::FillCudaApi(&api_);
    ASSERT_EQ(api_.cuInit(0), CUDA_SUCCESS);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Driver> driver, Driver::Create(&api_));
    CUHAL_ASSERT_OK_AND_ASSIGN(info_, driver->QueryDevice(0));
    ctx_ = std::make_unique<ScopedPrimaryContext>(api_, info_.device);
    ASSERT_EQ(ctx_->result(), CUDA_SUCCESS);
    streams_.assign(static_cast<std::size_t>(streams), nullptr);
    for (CUstream& s : streams_) {
      ASSERT_EQ(api_.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    }
    CUHAL_ASSERT_OK_AND_ASSIGN(allocator_,
                               CachingAllocator::Create(&api_, ctx_->get(), info_, params));
  }

  void Destroy() {
    if (fake_ == nullptr) return;
    faults().ClearRules();
    allocator_.reset();
    for (CUstream s : streams_) {
      if (s != nullptr) {
        EXPECT_EQ(api_.cuStreamDestroy(s), CUDA_SUCCESS);
      }
    }
    streams_.clear();
    ctx_.reset();
  }

  fakecuda::FakeDriver& fake() { return fake_->driver(); }
  fakecuda::FaultInjector& faults() { return fake().faults(); }
  CachingAllocator& alloc() { return *allocator_; }
  CachingAllocatorStatistics stats() { return allocator_->CacheStatistics(); }
  CUstream stream(int i) const { return streams_[static_cast<std::size_t>(i)]; }

  static fakecuda::FaultRule Rule(std::string entry, fakecuda::FaultMode mode, CUresult error,
                                  std::uint64_t n = 1) {
    fakecuda::FaultRule rule;
    rule.entry = std::move(entry);
    rule.mode = mode;
    rule.error = error;
    rule.n = n;
    return rule;
  }

  CudaApi api_;
  std::unique_ptr<fakecuda::ScopedDriver> fake_;
  DeviceInfo info_;
  std::unique_ptr<ScopedPrimaryContext> ctx_;
  std::vector<CUstream> streams_;
  std::unique_ptr<CachingAllocator> allocator_;
  bool expect_no_race_ = true;
  DroppedStatusHandler previous_handler_ = nullptr;
};

TEST_F(CachingAllocatorTest, ReusesAFreedBlockOnTheSameStreamWithoutADriverCall) {
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer first, alloc().AllocateOnStream(kPool, 3000, stream(0)));
  EXPECT_EQ(first.size(), 3000u);
  EXPECT_EQ(first.pool(), MemoryPoolKind::kDeviceLocal);
  const CUdeviceptr ptr = first.device_ptr();
  ASSERT_EQ(api_.cuMemsetD8Async(ptr, 0x11, 3000, stream(0)), CUDA_SUCCESS);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(first, stream(0)));
  EXPECT_FALSE(first);

  const std::uint64_t calls = faults().calls();
  for (int i = 0; i < 100; ++i) {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer again, alloc().AllocateOnStream(kPool, 2900, stream(0)));
    EXPECT_EQ(again.device_ptr(), ptr);
    CUHAL_ASSERT_OK(alloc().ReleaseOnStream(again, stream(0)));
  }
  EXPECT_EQ(faults().calls(), calls) << "the cache-hit path called the driver";
  const CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.driver_allocations, 1u);
  EXPECT_EQ(s.cache_hits, 100u);
  EXPECT_EQ(s.cache_misses, 1u);
  EXPECT_EQ(s.event_records, 0u);
  EXPECT_EQ(s.used_current, 0u);
  EXPECT_EQ(s.used_high, 3000u);
  EXPECT_EQ(s.reserved_current, 2 * kMiB);  // one small segment
  EXPECT_EQ(s.segments_current, 1u);
  ASSERT_EQ(api_.cuStreamSynchronize(stream(0)), CUDA_SUCCESS);
}

TEST_F(CachingAllocatorTest, SplitsBlocksAndCoalescesFreedNeighbours) {
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a, alloc().AllocateOnStream(kPool, 4096, stream(0)));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, alloc().AllocateOnStream(kPool, 100, stream(0)));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer c, alloc().AllocateOnStream(kPool, 8192, stream(0)));
  // Carved from one segment, in address order, each rounded to 512 bytes.
  EXPECT_EQ(b.device_ptr(), a.device_ptr() + 4096);
  EXPECT_EQ(c.device_ptr(), b.device_ptr() + 512);
  EXPECT_EQ(stats().segments_current, 1u);
  const CUdeviceptr base = a.device_ptr();
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(a, stream(0)));
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(c, stream(0)));
  // Best fit: a 4096-byte request takes a's hole, not the tail.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer d, alloc().AllocateOnStream(kPool, 4000, stream(0)));
  EXPECT_EQ(d.device_ptr(), base);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(d, stream(0)));
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(b, stream(0)));
  // Everything merged back into one 2 MiB block: the largest small request fits at the start.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer whole, alloc().AllocateOnStream(kPool, 1 * kMiB, stream(0)));
  EXPECT_EQ(whole.device_ptr(), base);
  EXPECT_EQ(stats().driver_allocations, 1u);
  // A large request comes from a large segment, never from the small one.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer large, alloc().AllocateOnStream(kPool, 3 * kMiB, stream(0)));
  EXPECT_EQ(stats().segments_current, 2u);
  EXPECT_EQ(stats().reserved_current, 2 * kMiB + 20 * kMiB);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(whole, stream(0)));
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(large, stream(0)));
}

TEST_F(CachingAllocatorTest, AnotherStreamReusesABlockOnlyBehindAnEventWait) {
  constexpr std::size_t kBytes = 64 * kKiB;
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer on_a, alloc().AllocateOnStream(kPool, kBytes, stream(0)));
  const CUdeviceptr ptr = on_a.device_ptr();
  ASSERT_EQ(api_.cuMemsetD8Async(ptr, 0xA1, kBytes, stream(0)), CUDA_SUCCESS);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(on_a, stream(0)));

  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer on_b, alloc().AllocateOnStream(kPool, kBytes, stream(1)));
  EXPECT_EQ(on_b.device_ptr(), ptr) << "B should take A's cached block, not grow";
  ASSERT_EQ(api_.cuMemsetD8Async(on_b.device_ptr(), 0xB2, kBytes, stream(1)), CUDA_SUCCESS);
  CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.event_records, 1u);
  EXPECT_EQ(s.stream_waits, 1u);
  EXPECT_EQ(s.event_queries, 0u);
  EXPECT_EQ(s.stream_synchronizations, 0u);
  EXPECT_EQ(s.driver_allocations, 1u);

  // The block now belongs to B: B reuses it at once, A would need another hand-over.
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(on_b, stream(1)));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer again, alloc().AllocateOnStream(kPool, kBytes, stream(1)));
  EXPECT_EQ(again.device_ptr(), ptr);
  EXPECT_EQ(stats().event_records, 1u);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(again, stream(1)));
  ASSERT_EQ(api_.cuCtxSynchronize(), CUDA_SUCCESS);
  // TearDown: the race detector saw A's and B's writes ordered.
}

TEST_F(CachingAllocatorTest, TheRaceDetectorSeesUnorderedReuse) {
  // The control of the test above: the same two writes without the allocator's wait race.
  expect_no_race_ = false;
  CUdeviceptr ptr = 0;
  ASSERT_EQ(api_.cuMemAlloc(&ptr, 4096), CUDA_SUCCESS);
  ASSERT_EQ(api_.cuMemsetD8Async(ptr, 1, 4096, stream(0)), CUDA_SUCCESS);
  ASSERT_EQ(api_.cuMemsetD8Async(ptr, 2, 4096, stream(1)), CUDA_SUCCESS);
  ASSERT_EQ(api_.cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_THAT(fake().RaceFindings(), ::testing::Not(::testing::IsEmpty()));
  ASSERT_EQ(api_.cuMemFree(ptr), CUDA_SUCCESS);
}

TEST_F(CachingAllocatorTest, AllocateTakesStreamFreedMemoryOnlyOnceTheHostSawItComplete) {
  constexpr std::size_t kBytes = 16 * kKiB;
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer on_a, alloc().AllocateOnStream(kPool, kBytes, stream(0)));
  const CUdeviceptr ptr = on_a.device_ptr();
  ASSERT_EQ(api_.cuMemsetD8Async(ptr, 0xA1, kBytes, stream(0)), CUDA_SUCCESS);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(on_a, stream(0)));

  // Ready on every stream: the eager fake completed A's work, so the query succeeds.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer everywhere, alloc().Allocate({}, kBytes));
  EXPECT_EQ(everywhere.device_ptr(), ptr);
  EXPECT_FALSE(everywhere.pool().has_value());
  CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.event_records, 1u);
  EXPECT_EQ(s.event_queries, 1u);
  EXPECT_EQ(s.stream_waits, 0u);
  EXPECT_EQ(s.driver_allocations, 1u);
  ASSERT_EQ(api_.cuMemsetD8Async(ptr, 0xB2, kBytes, stream(1)), CUDA_SUCCESS);
  ASSERT_EQ(api_.cuCtxSynchronize(), CUDA_SUCCESS);
  // Destroying the Buffer makes its block idle: any stream takes it without an event.
  CUHAL_ASSERT_OK(everywhere.Reset());
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer on_b, alloc().AllocateOnStream(kPool, kBytes, stream(1)));
  EXPECT_EQ(on_b.device_ptr(), ptr);
  EXPECT_EQ(stats().event_records, 1u);
  EXPECT_EQ(alloc().Statistics().heap(MemoryHeap::kDeviceLocal).buffers_current, 1u);
}

TEST_F(CachingAllocatorTest, HeldWorkIsNotReusedByAllocateUntilItCompletes) {
  // Adversarial fake with no idle release: A's memset stays pending until the host waits, so
  // the first query fails and Allocate grows instead of reusing.
  fakecuda::DriverOptions options;
  options.policy = fakecuda::SchedulePolicy::kAdversarial;
  options.idle_release_us = 0;
  ASSERT_NO_FATAL_FAILURE(Make(options));
  constexpr std::size_t kBytes = 16 * kKiB;
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer on_a, alloc().AllocateOnStream(kPool, kBytes, stream(0)));
  const CUdeviceptr ptr = on_a.device_ptr();
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(api_.cuMemsetD8Async(ptr, 0xA1, kBytes, stream(0)), CUDA_SUCCESS);
  }
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(on_a, stream(0)));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer everywhere, alloc().Allocate({}, kBytes));
  EXPECT_NE(everywhere.device_ptr(), ptr);
  EXPECT_EQ(stats().event_queries, 1u);
  EXPECT_EQ(stats().driver_allocations, 2u);
  ASSERT_EQ(api_.cuMemsetD8Async(everywhere.device_ptr(), 0xB2, kBytes, stream(1)),
            CUDA_SUCCESS);
  ASSERT_EQ(api_.cuCtxSynchronize(), CUDA_SUCCESS);
}

TEST_F(CachingAllocatorTest, TrimGivesBackIdleSegmentsAfterSynchronizingTheirStreams) {
  std::vector<Buffer> buffers;
  for (std::size_t size : {100 * kKiB, 3 * kMiB, 18 * kMiB}) {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, alloc().AllocateOnStream(kPool, size, stream(0)));
    ASSERT_EQ(api_.cuMemsetD8Async(b.device_ptr(), 1, size, stream(0)), CUDA_SUCCESS);
    buffers.push_back(std::move(b));
  }
  EXPECT_EQ(stats().reserved_current, 2 * kMiB + 20 * kMiB + 18 * kMiB);
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer live, alloc().AllocateOnStream(kPool, 1000, stream(1)));
  for (Buffer& b : buffers) CUHAL_ASSERT_OK(alloc().ReleaseOnStream(b, stream(0)));
  CUHAL_ASSERT_OK(alloc().Trim());
  CachingAllocatorStatistics s = stats();
  // The small segment holds `live` (on B, which took A's cached tail behind an event) and
  // stays; the two large ones go back. Both streams cached frees: both were synchronized.
  EXPECT_EQ(s.event_records, 1u);
  EXPECT_EQ(s.stream_synchronizations, 2u);
  EXPECT_EQ(s.driver_frees, 2u);
  EXPECT_EQ(s.reserved_current, 2 * kMiB);
  EXPECT_EQ(s.segments_current, 1u);
  EXPECT_EQ(fake().LiveObjects().device_allocations, 1);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(live, stream(1)));
  CUHAL_ASSERT_OK(alloc().Trim());
  EXPECT_EQ(stats().reserved_current, 0u);
  EXPECT_EQ(fake().LiveObjects().device_allocations, 0);
  EXPECT_EQ(stats().reserved_high, 2 * kMiB + 20 * kMiB + 18 * kMiB);
  CUHAL_ASSERT_OK(alloc().ResetHighWatermarks());
  EXPECT_EQ(stats().reserved_high, 0u);
  EXPECT_EQ(stats().used_high, 0u);
}

TEST_F(CachingAllocatorTest, TrimKeepsTheReleaseThreshold) {
  CachingAllocatorParams params;
  params.release_threshold = 20 * kMiB;
  ASSERT_NO_FATAL_FAILURE(Make({}, params));
  std::vector<Buffer> buffers;
  for (std::size_t size : {12 * kMiB, 14 * kMiB, 3 * kMiB}) {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, alloc().AllocateOnStream(kPool, size, stream(0)));
    buffers.push_back(std::move(b));
  }
  for (Buffer& b : buffers) CUHAL_ASSERT_OK(alloc().ReleaseOnStream(b, stream(0)));
  EXPECT_EQ(stats().reserved_current, 12 * kMiB + 14 * kMiB + 20 * kMiB);
  CUHAL_ASSERT_OK(alloc().Trim());
  // Largest first until at most 20 MiB stay cached: the 20 MiB and 14 MiB segments go.
  EXPECT_LE(stats().reserved_current, 20 * kMiB);
  EXPECT_EQ(stats().reserved_current, 12 * kMiB);
  EXPECT_EQ(stats().driver_frees, 2u);
}

TEST_F(CachingAllocatorTest, OutOfMemoryGivesBackTheCacheAndRetriesOnce) {
  {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer small, alloc().AllocateOnStream(kPool, 4096, stream(0)));
    CUHAL_ASSERT_OK(alloc().ReleaseOnStream(small, stream(0)));
  }
  faults().AddRule(Rule("cuMemAlloc", fakecuda::FaultMode::kNth, CUDA_ERROR_OUT_OF_MEMORY));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer large, alloc().AllocateOnStream(kPool, 5 * kMiB, stream(0)));
  CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.driver_allocations, 3u);  // the small segment, the failure, the retry
  EXPECT_EQ(s.driver_frees, 1u);        // the cached small segment went back
  EXPECT_EQ(s.stream_synchronizations, 1u);
  EXPECT_EQ(s.reserved_current, 20 * kMiB);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(large, stream(0)));

  faults().AddRule(Rule("cuMemAlloc", fakecuda::FaultMode::kEvery, CUDA_ERROR_OUT_OF_MEMORY));
  StatusOr<Buffer> refused = alloc().AllocateOnStream(kPool, 30 * kMiB, stream(1));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("31457280 bytes"));  // the request
  EXPECT_THAT(refused.status().message(), HasSubstr("bytes reserved"));
  EXPECT_THAT(refused.status().message(), HasSubstr("bytes used"));
  EXPECT_THAT(refused.status().message(), HasSubstr("stream 0x"));
  EXPECT_THAT(refused.status().message(), HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_EQ(stats().reserved_current, 0u);  // the cached large segment went back too
}

TEST_F(CachingAllocatorTest, AccountsUsedAndReservedBytes) {
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a, alloc().AllocateOnStream(kPool, 1000, stream(0)));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, alloc().Allocate({}, 2 * kMiB + 1));
  CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.used_current, 1000u + 2 * kMiB + 1);
  EXPECT_EQ(s.reserved_current, 2 * kMiB + 20 * kMiB);
  EXPECT_EQ(alloc().Statistics().heap(MemoryHeap::kDeviceLocal).bytes_current,
            1000u + 2 * kMiB + 1);
  CUHAL_ASSERT_OK(b.Reset());
  EXPECT_EQ(stats().used_current, 1000u);
  EXPECT_EQ(stats().used_high, 1000u + 2 * kMiB + 1);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(a, stream(0)));
  EXPECT_EQ(stats().used_current, 0u);
  EXPECT_EQ(alloc().live_buffers(), 0u);
  // Other heaps are not this allocator's.
  StatusOr<Buffer> pinned = alloc().Allocate({MemoryHeap::kHostPinned, std::nullopt}, 4096);
  EXPECT_EQ(pinned.status().code(), StatusCode::kUnimplemented);
  StatusOr<Buffer> huge = alloc().AllocateOnStream(kPool, info_.total_memory + 1, stream(0));
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
}

TEST_F(CachingAllocatorTest, DestroyingWithLiveBuffersReportsAndFreesEverySegment) {
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer live, alloc().AllocateOnStream(kPool, 4096, stream(0)));
  // The Buffer must not outlive its allocator: keep it in storage that is never destroyed.
  alignas(Buffer) static unsigned char storage[sizeof(Buffer)];
  new (storage) Buffer(std::move(live));
  allocator_.reset();
  ASSERT_EQ(Dropped().size(), 1u);
  EXPECT_THAT(Dropped()[0], HasSubstr("1 live buffer"));
  EXPECT_EQ(fake().LiveObjects().device_allocations, 0);
}

// Every driver call the allocator makes fails once (the n-th call, for every n until none is
// left): each failure is a Status naming the call, nothing leaks, and the allocator still works.
TEST_F(CachingAllocatorTest, EveryDriverCallFailingOnceIsReportedAndLeaksNothing) {
  int failures_seen = 0;
  for (std::uint64_t n = 1; n < 200; ++n) {
    ASSERT_NO_FATAL_FAILURE(Make());
    Dropped().clear();
    faults().ResetCounters();
    faults().AddRule(Rule("", fakecuda::FaultMode::kNth, CUDA_ERROR_UNKNOWN, n));
    std::vector<Status> errors;
    const auto note = [&](Status s) {
      if (!s.ok()) errors.push_back(std::move(s));
    };
    {
      // A miss (segment), a hand-over to another stream, a host-idle reclaim, a large miss,
      // a trim: every slow path.
      StatusOr<Buffer> a = alloc().AllocateOnStream(kPool, 4096, stream(0));
      note(a.status());
      if (a.ok()) note(alloc().ReleaseOnStream(*a, stream(0)));
      StatusOr<Buffer> b = alloc().AllocateOnStream(kPool, 4096, stream(1));
      note(b.status());
      if (b.ok()) note(alloc().ReleaseOnStream(*b, stream(1)));
      StatusOr<Buffer> c = alloc().Allocate({}, 4096);
      note(c.status());
      StatusOr<Buffer> d = alloc().AllocateOnStream(kPool, 3 * kMiB, stream(0));
      note(d.status());
      if (d.ok()) note(alloc().ReleaseOnStream(*d, stream(0)));
      note(alloc().Trim());
    }
    allocator_.reset();  // and its destruction
    const bool injected = faults().injected() > 0;
    faults().ClearRules();
    for (const Status& e : errors) {
      EXPECT_THAT(e.message(), HasSubstr("CUDA_ERROR_UNKNOWN")) << "n=" << n << ": " << e;
      EXPECT_THAT(e.message(), HasSubstr(": cu")) << "n=" << n << ": " << e;
    }
    for (const std::string& d : Dropped()) {
      EXPECT_THAT(d, HasSubstr("CUDA_ERROR_UNKNOWN")) << "n=" << n << ": " << d;
    }
    failures_seen += static_cast<int>(errors.size() + Dropped().size());
    EXPECT_EQ(fake().LiveObjects().device_allocations, 0) << "n=" << n << fake().LeakReport();
    EXPECT_EQ(fake().LiveObjects().events, 0) << "n=" << n << fake().LeakReport();
    if (!injected) break;
  }
  EXPECT_GT(failures_seen, 5);
  Dropped().clear();
}

// --- expandable segments (CachingAllocatorParams::expandable_segments, over fakecuda's VMM) ----

CachingAllocatorParams Expandable() {
  CachingAllocatorParams params;
  params.expandable_segments = true;
  return params;
}

TEST_F(CachingAllocatorTest, ExpandableGrowthMapsWhatTheRequestLacksAsOneAllocation) {
  ASSERT_NO_FATAL_FAILURE(Make({}, Expandable()));
  // 2.5 MiB: one growth of two 2 MiB granules; the 1.5 MiB rest is split off and ends the range.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a,
                             alloc().AllocateOnStream(kPool, 5 * kMiB / 2, stream(0)));
  CachingAllocatorStatistics s = stats();
  EXPECT_TRUE(s.expandable);
  EXPECT_EQ(s.reserved_current, 4 * kMiB);
  EXPECT_EQ(s.driver_allocations, 1u) << "one cuMemCreate for both granules";
  EXPECT_EQ(s.vmm_maps, 1u);
  EXPECT_EQ(fake().LiveObjects().vmm_reservations, 1);
  EXPECT_EQ(fake().LiveObjects().vmm_allocations, 1);
  EXPECT_EQ(fake().LiveObjects().vmm_mappings, 1);
  EXPECT_EQ(fake().LiveObjects().device_allocations, 0) << "no cuMemAlloc segment";
  // 3 MiB fits no free block: the 1.5 MiB tail is extended by one granule, not a new segment.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, alloc().AllocateOnStream(kPool, 3 * kMiB, stream(0)));
  s = stats();
  EXPECT_EQ(s.reserved_current, 6 * kMiB);
  EXPECT_EQ(s.driver_allocations, 2u);
  EXPECT_EQ(s.vmm_maps, 2u);
  EXPECT_EQ(b.device_ptr(), a.device_ptr() + 5 * kMiB / 2) << "b extends the range after a";
  // b spans both growths (two mappings): bytes written across the boundary read back.
  std::vector<unsigned char> in(3 * kMiB), out(3 * kMiB, 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  ASSERT_EQ(api_.cuMemcpyHtoDAsync(b.device_ptr(), in.data(), in.size(), stream(0)),
            CUDA_SUCCESS);
  ASSERT_EQ(api_.cuMemcpyDtoHAsync(out.data(), b.device_ptr(), out.size(), stream(0)),
            CUDA_SUCCESS);
  ASSERT_EQ(api_.cuStreamSynchronize(stream(0)), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  // A large request is still one growth: 64 MiB lacks 62.5 MiB beyond the free 1.5 MiB tail.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer c, alloc().AllocateOnStream(kPool, 64 * kMiB, stream(0)));
  s = stats();
  EXPECT_EQ(s.reserved_current, 70 * kMiB);
  EXPECT_EQ(s.driver_allocations, 3u);
  EXPECT_EQ(s.vmm_maps, 3u);
  EXPECT_EQ(fake().LiveObjects().vmm_mappings, 3);
  ASSERT_EQ(api_.cuMemsetD8Async(c.device_ptr(), 0x5a, 64 * kMiB, stream(0)), CUDA_SUCCESS);
  unsigned char last = 0;
  ASSERT_EQ(api_.cuMemcpyDtoHAsync(&last, c.device_ptr() + 64 * kMiB - 1, 1, stream(0)),
            CUDA_SUCCESS);
  ASSERT_EQ(api_.cuStreamSynchronize(stream(0)), CUDA_SUCCESS);
  EXPECT_EQ(last, 0x5a);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(c, stream(0)));
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(b, stream(0)));
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(a, stream(0)));
}

TEST_F(CachingAllocatorTest, ExpandableLeastGrowthMapsAheadAndLaterRequestsHit) {
  CachingAllocatorParams params = Expandable();
  params.expandable_min_growth = 15 * kMiB;  // rounded up to 16 MiB (2 MiB granules)
  ASSERT_NO_FATAL_FAILURE(Make({}, params));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a, alloc().AllocateOnStream(kPool, 3 * kMiB, stream(0)));
  EXPECT_EQ(stats().reserved_current, 16 * kMiB);
  EXPECT_EQ(stats().driver_allocations, 1u);
  std::vector<Buffer> more;
  for (int i = 0; i < 3; ++i) {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, alloc().AllocateOnStream(kPool, 3 * kMiB, stream(0)));
    more.push_back(std::move(b));
  }
  CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.reserved_current, 16 * kMiB) << "12 MiB live: every request after the first hit";
  EXPECT_EQ(s.driver_allocations, 1u);
  EXPECT_EQ(s.cache_misses, 1u);
  // A request larger than the least growth maps what it lacks: 17 MiB beyond the free 4 MiB
  // tail, rounded up to 18 MiB.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer big, alloc().AllocateOnStream(kPool, 21 * kMiB, stream(0)));
  s = stats();
  EXPECT_EQ(s.reserved_current, 34 * kMiB);
  EXPECT_EQ(s.driver_allocations, 2u);
  EXPECT_EQ(big.device_ptr(), a.device_ptr() + 12 * kMiB);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(big, stream(0)));
  for (Buffer& b : more) CUHAL_ASSERT_OK(alloc().ReleaseOnStream(b, stream(0)));
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(a, stream(0)));
  CUHAL_ASSERT_OK(alloc().Trim());
  EXPECT_EQ(stats().reserved_current, 0u);
  EXPECT_EQ(fake().LiveObjects().vmm_allocations, 0);
}

TEST_F(CachingAllocatorTest, ExpandableTrimUnmapsOnlyWholeIdleGrowthsAtTheEnd) {
  ASSERT_NO_FATAL_FAILURE(Make({}, Expandable()));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a,
                             alloc().AllocateOnStream(kPool, 5 * kMiB / 2, stream(0)));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, alloc().AllocateOnStream(kPool, 3 * kMiB, stream(0)));
  ASSERT_EQ(api_.cuMemsetD8Async(b.device_ptr(), 1, 3 * kMiB, stream(0)), CUDA_SUCCESS);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(b, stream(0)));
  CUHAL_ASSERT_OK(alloc().Trim());
  // The stream was synchronized; its free tail [2.5 MiB, 6 MiB) covers the second growth
  // [4 MiB, 6 MiB) whole and the first only in part (a lives there): one growth goes back.
  CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.stream_synchronizations, 1u);
  EXPECT_EQ(s.reserved_current, 4 * kMiB);
  EXPECT_EQ(s.vmm_unmaps, 1u);
  EXPECT_EQ(s.driver_frees, 1u);
  EXPECT_EQ(fake().LiveObjects().vmm_mappings, 1);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(a, stream(0)));
  CUHAL_ASSERT_OK(alloc().Trim());
  s = stats();
  EXPECT_EQ(s.reserved_current, 0u);
  EXPECT_EQ(s.reserved_high, 6 * kMiB);
  EXPECT_EQ(fake().LiveObjects().vmm_mappings, 0);
  EXPECT_EQ(fake().LiveObjects().vmm_allocations, 0);
  EXPECT_EQ(fake().LiveObjects().vmm_reservations, 1) << "the addresses stay reserved";
  // Small requests have their own range: one granule.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer c, alloc().Allocate({}, 4096));
  EXPECT_EQ(stats().reserved_current, 2 * kMiB);
  EXPECT_EQ(fake().LiveObjects().vmm_reservations, 2);
}

TEST_F(CachingAllocatorTest, ExpandableTrimKeepsTheReleaseThresholdInWholeGrowths) {
  CachingAllocatorParams params = Expandable();
  params.release_threshold = 5 * kMiB;
  ASSERT_NO_FATAL_FAILURE(Make({}, params));
  // Three growths of 4, 6 and 8 MiB, one buffer each, all freed: 18 MiB idle at the end.
  std::vector<Buffer> buffers;
  for (std::size_t mib : {4, 6, 8}) {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, alloc().AllocateOnStream(kPool, mib * kMiB, stream(0)));
    buffers.push_back(std::move(b));
  }
  EXPECT_EQ(stats().driver_allocations, 3u);
  for (Buffer& b : buffers) CUHAL_ASSERT_OK(alloc().ReleaseOnStream(b, stream(0)));
  CUHAL_ASSERT_OK(alloc().Trim());
  // Newest first until at most 5 MiB stay: 8 MiB (10 stay), 6 MiB (4 stay); the 4 MiB growth
  // is kept whole.
  CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.reserved_current, 4 * kMiB);
  EXPECT_EQ(s.vmm_unmaps, 2u);
  EXPECT_EQ(s.driver_frees, 2u);
  EXPECT_EQ(fake().LiveObjects().vmm_mappings, 1);
  // The kept growth serves a request that fits it without a driver call.
  const std::uint64_t calls = faults().calls();
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer again, alloc().AllocateOnStream(kPool, 4 * kMiB, stream(0)));
  EXPECT_EQ(faults().calls(), calls);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(again, stream(0)));
}

TEST_F(CachingAllocatorTest, ExpandableOutOfMemoryGivesBackWholeGrowthsAndRetriesOnce) {
  ASSERT_NO_FATAL_FAILURE(Make({}, Expandable()));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a, alloc().AllocateOnStream(kPool, 8 * kMiB, stream(1)));
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(a, stream(1)));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer held, alloc().AllocateOnStream(kPool, 2 * kMiB, stream(0)));
  // held extended nothing: stream 1's free 8 MiB is not stream 0's until handed over, and the
  // hand-over took it (an event wait): held lives in the first growth.
  EXPECT_EQ(stats().driver_allocations, 1u);
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(held, stream(0)));
  faults().AddRule(Rule("cuMemCreate", fakecuda::FaultMode::kNth, CUDA_ERROR_OUT_OF_MEMORY));
  // 16 MiB lacks 8 MiB beyond the free tail: cuMemCreate fails once, the cache goes back (the
  // whole idle 8 MiB growth, after synchronizing stream 0), and the retry maps 16 MiB.
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer big, alloc().AllocateOnStream(kPool, 16 * kMiB, stream(0)));
  CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.driver_allocations, 3u);
  EXPECT_EQ(s.vmm_unmaps, 1u);
  EXPECT_EQ(s.reserved_current, 16 * kMiB);
  EXPECT_EQ(fake().LiveObjects().vmm_mappings, 1);
  faults().ClearRules();
  faults().AddRule(Rule("cuMemCreate", fakecuda::FaultMode::kEvery, CUDA_ERROR_OUT_OF_MEMORY));
  StatusOr<Buffer> refused = alloc().AllocateOnStream(kPool, 32 * kMiB, stream(0));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_EQ(stats().reserved_current, 16 * kMiB) << "the live growth stays";
  faults().ClearRules();
  CUHAL_ASSERT_OK(alloc().ReleaseOnStream(big, stream(0)));
}

TEST_F(CachingAllocatorTest, ExpandableSegmentsFallBackToClassicWithoutVmm) {
  CudaApi without_vmm = api_;
  without_vmm.cuMemCreate = nullptr;
  CUHAL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CachingAllocator> classic,
      CachingAllocator::Create(&without_vmm, ctx_->get(), info_, Expandable()));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, classic->AllocateOnStream(kPool, 4096, stream(0)));
  EXPECT_FALSE(classic->CacheStatistics().expandable);
  EXPECT_EQ(classic->CacheStatistics().reserved_current, 2 * kMiB) << "a classic small segment";
  EXPECT_EQ(fake().LiveObjects().device_allocations, 1);
  CUHAL_ASSERT_OK(classic->ReleaseOnStream(b, stream(0)));
}

// Three variants: exact growths; a least growth of 6 MiB with a 2 MiB release threshold (Trim
// gives back some growths and keeps others); and the first with every second cuMemCreate out of
// memory (the retry after giving back the cache, failing anywhere).
struct ExpandableFaultVariant {
  const char* name;
  std::uint64_t min_growth;
  std::uint64_t release_threshold;
  bool out_of_memory;
};

void PrintTo(const ExpandableFaultVariant& variant, std::ostream* os) { *os << variant.name; }

class ExpandableFaultTest : public CachingAllocatorTest,
                            public ::testing::WithParamInterface<ExpandableFaultVariant> {};

INSTANTIATE_TEST_SUITE_P(
    Variants, ExpandableFaultTest,
    ::testing::Values(
        ExpandableFaultVariant{"exact", 0, std::numeric_limits<std::uint64_t>::max(), false},
        ExpandableFaultVariant{"least6MiBThreshold2MiB", 6 * kMiB, 2 * kMiB, false},
        ExpandableFaultVariant{"outOfMemoryRetry", 0, std::numeric_limits<std::uint64_t>::max(),
                               true}),
    [](const ::testing::TestParamInfo<ExpandableFaultVariant>& variant) {
      return std::string(variant.param.name);
    });

TEST_P(ExpandableFaultTest, EveryDriverCallFailingOnceIsReportedAndLeaksNothing) {
  const ExpandableFaultVariant& variant = GetParam();
  CachingAllocatorParams params = Expandable();
  params.expandable_min_growth = variant.min_growth;
  params.release_threshold = variant.release_threshold;
  int failures_seen = 0;
  for (std::uint64_t n = 1; n < 300; ++n) {
    ASSERT_NO_FATAL_FAILURE(Make({}, params));
    Dropped().clear();
    faults().ResetCounters();
    faults().AddRule(Rule("", fakecuda::FaultMode::kNth, CUDA_ERROR_UNKNOWN, n));
    if (variant.out_of_memory) {
      faults().AddRule(Rule("cuMemCreate", fakecuda::FaultMode::kNth, CUDA_ERROR_OUT_OF_MEMORY, 2));
    }
    std::vector<Status> errors;
    const auto note = [&](Status s) {
      if (!s.ok()) errors.push_back(std::move(s));
    };
    {
      // The decision, a reservation and a growth, a tail extension, a hand-over, a host-idle
      // allocation, a trim that unmaps growths, a growth after it, and destruction.
      StatusOr<Buffer> a = alloc().AllocateOnStream(kPool, 5 * kMiB / 2, stream(0));
      note(a.status());
      StatusOr<Buffer> b = alloc().AllocateOnStream(kPool, 3 * kMiB, stream(0));
      note(b.status());
      if (b.ok()) note(alloc().ReleaseOnStream(*b, stream(0)));
      StatusOr<Buffer> c = alloc().AllocateOnStream(kPool, 4096, stream(1));
      note(c.status());
      if (c.ok()) note(alloc().ReleaseOnStream(*c, stream(1)));
      note(alloc().Trim());
      StatusOr<Buffer> d = alloc().Allocate({}, 6 * kMiB);
      note(d.status());
      if (a.ok()) note(alloc().ReleaseOnStream(*a, stream(0)));
    }
    allocator_.reset();
    // (The out-of-memory rule injects too: whether the n-th call was reached decides.)
    const bool injected =
        variant.out_of_memory ? faults().calls() >= n : faults().injected() > 0;
    faults().ClearRules();
    for (const Status& e : errors) {
      EXPECT_THAT(e.message(), HasSubstr("CUDA_ERROR_UNKNOWN")) << "n=" << n << ": " << e;
      EXPECT_THAT(e.message(), HasSubstr(": cu")) << "n=" << n << ": " << e;
    }
    for (const std::string& d : Dropped()) {
      EXPECT_THAT(d, HasSubstr("CUDA_ERROR_UNKNOWN")) << "n=" << n << ": " << d;
    }
    failures_seen += static_cast<int>(errors.size() + Dropped().size());
    const fakecuda::Inventory live = fake().LiveObjects();
    EXPECT_EQ(live.vmm_allocations + live.vmm_mappings + live.vmm_reservations +
                  live.device_allocations + live.events,
              0)
        << "n=" << n << fake().LeakReport();
    if (!injected) break;
  }
  EXPECT_GT(failures_seen, 10);
  Dropped().clear();
}

// --- trace replays --------------------------------------------------------------------------

struct ReplayResult {
  CachingAllocatorStatistics stats;
  std::uint64_t trace_used_high = 0;
};

// Replays `trace` on the allocator, streams[i] for the trace's stream i, events made here.
Status Replay(const CudaApi& api, CachingAllocator& allocator, const trace::AllocTrace& trace,
              const std::vector<CUstream>& streams) {
  std::unordered_map<std::uint64_t, Buffer> live;
  std::map<std::uint64_t, CUevent> events;
  Status status;
  for (const trace::TraceOp& op : trace.ops) {
    CUstream s = op.stream >= 0 ? streams[static_cast<std::size_t>(op.stream)] : nullptr;
    switch (op.kind) {
      case trace::TraceOpKind::kAlloc: {
        CUHAL_ASSIGN_OR_RETURN(Buffer b, allocator.AllocateOnStream(kPool, op.size, s));
        live.emplace(op.id, std::move(b));
        break;
      }
      case trace::TraceOpKind::kFree: {
        auto it = live.find(op.id);
        CUHAL_RETURN_IF_ERROR(allocator.ReleaseOnStream(it->second, s));
        live.erase(it);
        break;
      }
      case trace::TraceOpKind::kRecord: {
        CUevent& e = events[op.event];
        if (e == nullptr && api.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
          return InternalError("cuEventCreate");
        }
        if (api.cuEventRecord(e, s) != CUDA_SUCCESS) return InternalError("cuEventRecord");
        break;
      }
      case trace::TraceOpKind::kWait:
        if (api.cuStreamWaitEvent(s, events[op.event], 0) != CUDA_SUCCESS) {
          return InternalError("cuStreamWaitEvent");
        }
        break;
      case trace::TraceOpKind::kSync:
        if ((op.stream < 0 ? api.cuCtxSynchronize() : api.cuStreamSynchronize(s)) !=
            CUDA_SUCCESS) {
          return InternalError("synchronize");
        }
        break;
    }
  }
  for (auto& [id, b] : live) CUHAL_RETURN_IF_ERROR(allocator.ReleaseOnStream(b, streams[0]));
  if (api.cuCtxSynchronize() != CUDA_SUCCESS) return InternalError("cuCtxSynchronize");
  for (auto& [id, e] : events) api.cuEventDestroy(e);
  return status;
}

// The footprint of PyTorch's size classes on the shipped mixed trace: 168 MiB reserved for
// 123.7 MiB used (1.358x; PyTorch's own allocator measured 1.36x on the H200 on the 200,000-op
// version of this trace). Issue 13 asks for 1.3x: not reached by these size classes (tuning them
// to this one trace moved the ratio between 1.22x and 1.85x, and made the other traces worse);
// this bound catches a regression of the policy, it does not claim the target. Expandable
// segments reach it (ExpandableRandomMixedTraceFootprintMeetsTheTarget).
TEST_F(CachingAllocatorTest, RandomMixedTraceFootprintIsWithinPyTorchs) {
  CUHAL_ASSERT_OK_AND_ASSIGN(
      trace::AllocTrace trace,
      trace::ReadAllocTrace(std::string(CUHAL_SOURCE_DIR) + "/bench/traces/random_mixed.jsonl"));
  CUHAL_ASSERT_OK(Replay(api_, alloc(), trace, streams_));
  const CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.used_high, trace.used_high);
  EXPECT_EQ(s.used_current, 0u);
  const double ratio = static_cast<double>(s.reserved_high) / static_cast<double>(s.used_high);
  std::printf("random_mixed: reserved_high %llu, used_high %llu, ratio %.3f, %llu segments "
              "allocated, %llu hits, %llu misses\n",
              static_cast<unsigned long long>(s.reserved_high),
              static_cast<unsigned long long>(s.used_high), ratio,
              static_cast<unsigned long long>(s.driver_allocations),
              static_cast<unsigned long long>(s.cache_hits),
              static_cast<unsigned long long>(s.cache_misses));
  EXPECT_LE(ratio, 1.36);
  EXPECT_EQ(s.driver_frees, 0u);
}

TEST_F(CachingAllocatorTest, MultiStreamTraceReplaysWithoutRaces) {
  ASSERT_NO_FATAL_FAILURE(Make({}, {}, 4));
  CUHAL_ASSERT_OK_AND_ASSIGN(
      trace::AllocTrace trace,
      trace::ReadAllocTrace(std::string(CUHAL_SOURCE_DIR) + "/bench/traces/multi_stream.jsonl"));
  CUHAL_ASSERT_OK(Replay(api_, alloc(), trace, streams_));
  const CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.used_high, trace.used_high);
  std::printf("multi_stream: reserved_high %llu, used_high %llu, ratio %.3f, %llu event "
              "hand-overs\n",
              static_cast<unsigned long long>(s.reserved_high),
              static_cast<unsigned long long>(s.used_high),
              static_cast<double>(s.reserved_high) / static_cast<double>(s.used_high),
              static_cast<unsigned long long>(s.stream_waits));
  // TearDown checks the race detector found nothing.
}

// Expandable segments on the same trace: 148 MiB reserved for 123.7 MiB used (1.197x), as
// bench/traces/simulate_segments.py predicts (its classic column is the 168 MiB above, measured
// on the H200): issue 13's 1.3x, met.
TEST_F(CachingAllocatorTest, ExpandableRandomMixedTraceFootprintMeetsTheTarget) {
  ASSERT_NO_FATAL_FAILURE(Make({}, Expandable()));
  CUHAL_ASSERT_OK_AND_ASSIGN(
      trace::AllocTrace trace,
      trace::ReadAllocTrace(std::string(CUHAL_SOURCE_DIR) + "/bench/traces/random_mixed.jsonl"));
  CUHAL_ASSERT_OK(Replay(api_, alloc(), trace, streams_));
  const CachingAllocatorStatistics s = stats();
  ASSERT_TRUE(s.expandable);
  EXPECT_EQ(s.used_high, trace.used_high);
  const double ratio = static_cast<double>(s.reserved_high) / static_cast<double>(s.used_high);
  std::printf("random_mixed, expandable: reserved_high %llu, used_high %llu, ratio %.3f, %llu "
              "growths\n",
              static_cast<unsigned long long>(s.reserved_high),
              static_cast<unsigned long long>(s.used_high), ratio,
              static_cast<unsigned long long>(s.vmm_maps));
  EXPECT_EQ(s.reserved_high, 148 * kMiB);
  // One cuMemCreate/cuMemMap per growth, not per granule (74 granules are mapped at the high).
  EXPECT_EQ(s.driver_allocations, s.vmm_maps);
  EXPECT_LT(s.vmm_maps, s.reserved_high / (2 * kMiB) / 2);
  EXPECT_LE(ratio, 1.3);
}

TEST_F(CachingAllocatorTest, ExpandableMultiStreamTraceReplaysWithoutRaces) {
  ASSERT_NO_FATAL_FAILURE(Make({}, Expandable(), 4));
  CUHAL_ASSERT_OK_AND_ASSIGN(
      trace::AllocTrace trace,
      trace::ReadAllocTrace(std::string(CUHAL_SOURCE_DIR) + "/bench/traces/multi_stream.jsonl"));
  CUHAL_ASSERT_OK(Replay(api_, alloc(), trace, streams_));
  const CachingAllocatorStatistics s = stats();
  EXPECT_EQ(s.used_high, trace.used_high);
  std::printf("multi_stream, expandable: reserved_high %llu, used_high %llu, ratio %.3f\n",
              static_cast<unsigned long long>(s.reserved_high),
              static_cast<unsigned long long>(s.used_high),
              static_cast<double>(s.reserved_high) / static_cast<double>(s.used_high));
  // TearDown checks the race detector found nothing.
}

}  // namespace
}  // namespace cuhal::testing
