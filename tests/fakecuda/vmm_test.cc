// Copyright 2026 The cuhal Authors.
// Conformance: virtual memory management (cuMemGetAllocationGranularity, cuMemCreate/Release,
// cuMemAddressReserve/Free, cuMemMap/Unmap, cuMemSetAccess/GetAccess, the handle calls) and how
// copies, memsets, pointer attributes and cuMemGetInfo treat mapped, inaccessible and unmapped
// virtual addresses.
//
// Every expectation here is an answer of the H200 (driver 580.159.04, CUDA 13.0) to
// ci/gpu-probes/vmm_probe.cc on 2026-12-04 (ci/gpu-probes/results/2026-12-04-probe-vmm.txt; the
// probe case is named beside each test); docs/driver_facts.md, "Virtual memory management
// (VMM)", summarizes them. This suite itself has not run on the GPU machine yet. The FakeVmmTest
// suite holds what is the fake's own (fault injection, leak inventory, the answers to calls that
// crash the real driver, a test that poisons its context).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

constexpr size_t kG = size_t{2} << 20;  // the measured granularity

CUmemAllocationProp DeviceProp(int device = 0) {
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  return p;
}

CUmemAccessDesc Access(unsigned long long flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                       CUmemLocationType type = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0) {
  CUmemAccessDesc d;
  std::memset(&d, 0, sizeof d);
  d.location.type = type;
  d.location.id = id;
  d.flags = static_cast<CUmemAccess_flags>(flags);
  return d;
}

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

class VmmTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (api().cuMemCreate == nullptr) GTEST_SKIP() << "the driver has no VMM entry points";
  }

  CUmemGenericAllocationHandle Create(size_t size, CUmemAllocationProp prop = DeviceProp()) {
    CUmemGenericAllocationHandle h = 0;
    EXPECT_EQ(api().cuMemCreate(&h, size, &prop, 0), CUDA_SUCCESS);
    return h;
  }
  CUdeviceptr Reserve(size_t size) {
    CUdeviceptr p = 0;
    EXPECT_EQ(api().cuMemAddressReserve(&p, size, 0, 0, 0), CUDA_SUCCESS);
    return p;
  }
  void MapRw(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h) {
    ASSERT_EQ(api().cuMemMap(va, size, 0, h, 0), CUDA_SUCCESS);
    CUmemAccessDesc d = Access();
    ASSERT_EQ(api().cuMemSetAccess(va, size, &d, 1), CUDA_SUCCESS);
  }
  size_t FreeBytes() {
    size_t free = 0;
    size_t total = 0;
    EXPECT_EQ(api().cuMemGetInfo(&free, &total), CUDA_SUCCESS);
    return free;
  }
  unsigned long long AccessOf(CUdeviceptr p, CUresult* r = nullptr) {
    unsigned long long flags = 77;
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUresult res = api().cuMemGetAccess(&flags, &loc, p);
    if (r != nullptr) *r = res;
    return flags;
  }
  // The context still works: a synchronization and a small allocation round trip.
  void ExpectUsable() {
    EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
    CUdeviceptr p = 0;
    ASSERT_EQ(api().cuMemAlloc(&p, 4096), CUDA_SUCCESS);
    EXPECT_EQ(api().cuMemFree(p), CUDA_SUCCESS);
  }
};

// Case "granularity".
TEST_P(VmmTest, GranularityIsTwoMiBWhateverThePropertySays) {
  size_t g = 0;
  CUmemAllocationProp p = DeviceProp();
  ASSERT_EQ(api().cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            CUDA_SUCCESS);
  EXPECT_EQ(g, kG);
  g = 0;
  EXPECT_EQ(api().cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
            CUDA_SUCCESS);
  EXPECT_EQ(g, kG);
  // Not even the location or the type is checked here.
  p.location.type = CU_MEM_LOCATION_TYPE_INVALID;
  p.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
  g = 0;
  EXPECT_EQ(api().cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            CUDA_SUCCESS);
  EXPECT_EQ(g, kG);
  g = 12345;
  EXPECT_EQ(api().cuMemGetAllocationGranularity(
                &g, &p, static_cast<CUmemAllocationGranularity_flags>(2)),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(g, 12345u) << "left untouched when refused";
  EXPECT_EQ(api().cuMemGetAllocationGranularity(nullptr, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemGetAllocationGranularity(&g, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            CUDA_ERROR_INVALID_VALUE);
}

// Case "create".
TEST_P(VmmTest, CreateTakesWholeGranulesOnly) {
  CUmemAllocationProp p = DeviceProp();
  CUmemGenericAllocationHandle h = 0;
  for (size_t bad : {size_t{0}, size_t{1}, size_t{4096}, kG / 2, kG + 4096}) {
    EXPECT_EQ(api().cuMemCreate(&h, bad, &p, 0), CUDA_ERROR_INVALID_VALUE) << bad << " bytes";
  }
  EXPECT_EQ(api().cuMemCreate(&h, kG, &p, 1), CUDA_ERROR_INVALID_VALUE) << "flags 1";
  EXPECT_EQ(api().cuMemCreate(&h, size_t{1} << 50, &p, 0), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(api().cuMemCreate(nullptr, kG, &p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemCreate(&h, kG, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuMemCreate(&h, 3 * kG, &p, 0), CUDA_SUCCESS);
  EXPECT_NE(h, 0u);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
}

// Case "create": the property's fields, one at a time.
TEST_P(VmmTest, CreateChecksEveryFieldOfTheProperty) {
  auto create = [&](CUmemAllocationProp p) {
    CUmemGenericAllocationHandle h = 0;
    CUresult r = api().cuMemCreate(&h, kG, &p, 0);
    if (r == CUDA_SUCCESS) {
      EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
    }
    return r;
  };
  int devices = 0;
  ASSERT_EQ(api().cuDeviceGetCount(&devices), CUDA_SUCCESS);
  EXPECT_EQ(create(DeviceProp(devices)), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(create(DeviceProp(-1)), CUDA_ERROR_INVALID_DEVICE);
  CUmemAllocationProp p = DeviceProp();
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  p.location.id = 5;  // any id
  EXPECT_EQ(create(p), CUDA_SUCCESS);
  p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  p.location.id = 99;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE);
  p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE);
  p.location.type = CU_MEM_LOCATION_TYPE_INVALID;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE);
  p = DeviceProp();
  p.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE);
  p = DeviceProp();
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_WIN32;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE);
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  EXPECT_EQ(create(p), CUDA_ERROR_NOT_PERMITTED) << "no IMEX channel";
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  EXPECT_EQ(create(p), CUDA_SUCCESS);
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE) << "host memory cannot be exported";
  p = DeviceProp();
  p.allocFlags.compressionType = 7;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE);
  p = DeviceProp();
  static int dummy;
  p.win32HandleMetaData = &dummy;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE);
  p = DeviceProp();
  p.allocFlags.reserved[0] = 1;
  EXPECT_EQ(create(p), CUDA_ERROR_INVALID_VALUE);
}

// Case "props".
// One variation per allocation, as the probe measured them (props: handle 0x10, compression
// GENERIC, gpuDirectRDMACapable 1, usage TILE_POOL). The four together were refused by the H200
// (CUDA_ERROR_INVALID_VALUE from cuMemCreate, vmm_test on 2026-12-04); which pair it refuses is
// not measured, so no combination is asserted here (docs/driver_facts.md).
TEST_P(VmmTest, PropertiesKeepLocationCompressionAndExportableTypesOnly) {
  struct Variation {
    const char* what;
    void (*apply)(CUmemAllocationProp&);
  };
  const Variation variations[] = {
      {"handle 0x10",
       [](CUmemAllocationProp& p) {
         p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(0x10);
       }},
      {"usage TILE_POOL",
       [](CUmemAllocationProp& p) { p.allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL; }},
      {"compression GENERIC",
       [](CUmemAllocationProp& p) {
         p.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
       }},
      {"gpuDirectRDMACapable 1",
       [](CUmemAllocationProp& p) { p.allocFlags.gpuDirectRDMACapable = 1; }},
  };
  for (const Variation& v : variations) {
    SCOPED_TRACE(v.what);
    CUmemAllocationProp p = DeviceProp();
    v.apply(p);
    CUmemGenericAllocationHandle h = Create(kG, p);
    CUmemAllocationProp q;
    std::memset(&q, 0xab, sizeof q);
    ASSERT_EQ(api().cuMemGetAllocationPropertiesFromHandle(&q, h), CUDA_SUCCESS);
    EXPECT_EQ(q.type, CU_MEM_ALLOCATION_TYPE_PINNED);
    EXPECT_EQ(static_cast<unsigned>(q.requestedHandleTypes), 0u) << "unknown bits dropped";
    EXPECT_EQ(q.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
    EXPECT_EQ(q.location.id, 0);
    EXPECT_EQ(q.win32HandleMetaData, nullptr);
    EXPECT_EQ(q.allocFlags.compressionType, p.allocFlags.compressionType);
    EXPECT_EQ(q.allocFlags.gpuDirectRDMACapable, p.allocFlags.gpuDirectRDMACapable);
    EXPECT_EQ(q.allocFlags.usage, 0) << "the usage is not kept";
    EXPECT_EQ(api().cuMemGetAllocationPropertiesFromHandle(nullptr, h),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  }
  // Host memory reads back as HOST_NUMA node 0, whatever id HOST was given.
  CUmemAllocationProp p = DeviceProp();
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  p.location.id = 5;
  CUmemGenericAllocationHandle h = Create(kG, p);
  CUmemAllocationProp q;
  ASSERT_EQ(api().cuMemGetAllocationPropertiesFromHandle(&q, h), CUDA_SUCCESS);
  EXPECT_EQ(q.location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  EXPECT_EQ(q.location.id, 0);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemGetAllocationPropertiesFromHandle(&q, 0), CUDA_ERROR_INVALID_VALUE);
}

// Cases "bad:release_twice", "bad:release_0".
TEST_P(VmmTest, ReleaseTwiceIsInvalidValue) {
  CUmemGenericAllocationHandle h = Create(kG);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemRelease(0), CUDA_ERROR_INVALID_VALUE);
}

// Case "reserve".
TEST_P(VmmTest, ReserveChecksSizeAlignmentFlagsAndHint) {
  CUdeviceptr p = 0;
  for (size_t bad : {size_t{0}, size_t{1}, size_t{4096}, kG + 4096}) {
    EXPECT_EQ(api().cuMemAddressReserve(&p, bad, 0, 0, 0), CUDA_ERROR_INVALID_VALUE) << bad;
  }
  EXPECT_EQ(api().cuMemAddressReserve(&p, kG, 3 * kG, 0, 0), CUDA_ERROR_INVALID_VALUE)
      << "alignment not a power of two";
  EXPECT_EQ(api().cuMemAddressReserve(&p, kG, 12288, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemAddressReserve(&p, kG, 0, 0, 1), CUDA_ERROR_INVALID_VALUE) << "flags";
  EXPECT_EQ(api().cuMemAddressReserve(nullptr, kG, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemAddressReserve(&p, size_t{1} << 47, 0, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
  // Small power-of-two alignments still give granule-aligned addresses; large ones are obeyed.
  for (size_t align : {size_t{1}, size_t{4096}, kG, 64 * kG, size_t{1} << 30}) {
    ASSERT_EQ(api().cuMemAddressReserve(&p, kG, align, 0, 0), CUDA_SUCCESS) << align;
    EXPECT_EQ(p % kG, 0u);
    EXPECT_EQ(p % align, 0u);
    EXPECT_EQ(api().cuMemAddressFree(p, kG), CUDA_SUCCESS);
  }
  if (IsFake() && kThreadSanitizer) {
    // The fake backs its VMM addresses with one host mapping; ThreadSanitizer's memory layout
    // does not leave 1 TiB of contiguous host address space (2 TiB always fails, 1 TiB only
    // sometimes), so the fake answers CUDA_ERROR_OUT_OF_MEMORY there. The plain and ASan builds
    // check the H200's answer.
    std::printf("VmmTest: the 1 TiB reservation is not checked on the fake under ThreadSanitizer "
                "(too little host address space)\n");
    return;
  }
  ASSERT_EQ(api().cuMemAddressReserve(&p, size_t{1} << 40, 0, 0, 0), CUDA_SUCCESS) << "1 TiB";
  EXPECT_EQ(api().cuMemAddressFree(p, size_t{1} << 40), CUDA_SUCCESS);
}

// Case "reserve": fixed address hints.
TEST_P(VmmTest, AFreeHintIsHonouredAndAnOccupiedOneIsNot) {
  CUdeviceptr a = Reserve(4 * kG);
  ASSERT_NE(a, 0u);
  ASSERT_EQ(api().cuMemAddressFree(a, 4 * kG), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(api().cuMemAddressReserve(&p, kG, 0, a + kG, 0), CUDA_SUCCESS);
  EXPECT_EQ(p, a + kG) << "inside a freed reservation";
  EXPECT_EQ(api().cuMemAddressFree(p, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressReserve(&p, kG, 0, a + 4096, 0), CUDA_ERROR_INVALID_VALUE)
      << "a hint off the granularity";
  CUdeviceptr kept = 0;
  ASSERT_EQ(api().cuMemAddressReserve(&kept, 4 * kG, 0, a, 0), CUDA_SUCCESS);
  EXPECT_EQ(kept, a);
  ASSERT_EQ(api().cuMemAddressReserve(&p, kG, 0, a + kG, 0), CUDA_SUCCESS);
  EXPECT_NE(p, a + kG) << "inside a live reservation: elsewhere";
  EXPECT_TRUE(p + kG <= a || a + 4 * kG <= p) << "and disjoint from it";
  EXPECT_EQ(api().cuMemAddressFree(p, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(a, 4 * kG), CUDA_SUCCESS);
}

// Case "reserve": placement is first fit (a second reservation right after the first; a freed
// range is taken again without a hint).
TEST_P(VmmTest, ReservationsArePlacedFirstFit) {
  CUdeviceptr a = Reserve(4 * kG);
  CUdeviceptr b = Reserve(4 * kG);
  EXPECT_EQ(b, a + 4 * kG);
  ASSERT_EQ(api().cuMemAddressFree(a, 4 * kG), CUDA_SUCCESS);
  CUdeviceptr c = Reserve(4 * kG);
  EXPECT_EQ(c, a);
  EXPECT_EQ(api().cuMemAddressFree(b, 4 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(c, 4 * kG), CUDA_SUCCESS);
}

// Cases "reserve" and "bad:address_free_twice".
TEST_P(VmmTest, AddressFreeTakesExactlyOneWholeReservation) {
  CUdeviceptr a = Reserve(4 * kG);
  EXPECT_EQ(api().cuMemAddressFree(a, kG), CUDA_ERROR_INVALID_VALUE) << "smaller";
  EXPECT_EQ(api().cuMemAddressFree(a, 8 * kG), CUDA_ERROR_INVALID_VALUE) << "larger";
  EXPECT_EQ(api().cuMemAddressFree(a + kG, kG), CUDA_ERROR_INVALID_VALUE) << "a middle part";
  EXPECT_EQ(api().cuMemAddressFree(0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(a), CUDA_ERROR_INVALID_VALUE) << "not cuMemAlloc memory";
  EXPECT_EQ(api().cuMemAddressFree(a, 4 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(a, 4 * kG), CUDA_ERROR_INVALID_VALUE) << "twice";
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 4096), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(buf, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
}

// Case "map": cuMemMap maps a whole handle, never a part of one.
TEST_P(VmmTest, MapTakesTheWholeHandleAtOffsetZero) {
  CUmemGenericAllocationHandle h1 = Create(kG), h2 = Create(2 * kG);
  CUdeviceptr r = Reserve(8 * kG);
  EXPECT_EQ(api().cuMemMap(r, kG, 0, h2, 0), CUDA_ERROR_NOT_SUPPORTED) << "half of h2";
  EXPECT_EQ(api().cuMemMap(r, kG, kG, h2, 0), CUDA_ERROR_NOT_SUPPORTED) << "h2's second half";
  EXPECT_EQ(api().cuMemMap(r, 4096, 0, h1, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(api().cuMemMap(r, 2 * kG, 0, h1, 0), CUDA_ERROR_NOT_SUPPORTED) << "past h1";
  EXPECT_EQ(api().cuMemMap(r + kG / 2 + 4096, kG, 0, h1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemMap(r, 0, 0, h1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemMap(r, kG, 0, h1, 1), CUDA_ERROR_INVALID_VALUE) << "flags";
  EXPECT_EQ(api().cuMemMap(r, kG, 0, 0, 0), CUDA_ERROR_INVALID_VALUE) << "handle 0";
  EXPECT_EQ(api().cuMemMap(0, kG, 0, h1, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuMemMap(r, kG, 0, h1, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemMap(r, kG, 0, h1, 0), CUDA_ERROR_INVALID_VALUE) << "already mapped";
  ASSERT_EQ(api().cuMemMap(r + 2 * kG, 2 * kG, 0, h2, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemMap(r + 3 * kG, 2 * kG, 0, h2, 0), CUDA_ERROR_INVALID_VALUE)
      << "overlaps a mapping's end";
  ASSERT_EQ(api().cuMemMap(r + 5 * kG, kG, 0, h1, 0), CUDA_SUCCESS) << "one handle, two VAs";
  EXPECT_EQ(api().cuMemAddressFree(r, 8 * kG), CUDA_ERROR_INVALID_VALUE) << "still mapped";
  EXPECT_EQ(api().cuMemUnmap(r, 8 * kG), CUDA_SUCCESS) << "every mapping in one call";
  CUdeviceptr q = Reserve(kG);
  ASSERT_EQ(api().cuMemAddressFree(q, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemMap(q, kG, 0, h1, 0), CUDA_ERROR_INVALID_VALUE) << "freed reservation";
  EXPECT_EQ(api().cuMemAddressFree(r, 8 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h2), CUDA_SUCCESS);
}

// Case "map": the fake's memory lookup resolves a range across two mappings of one reservation.
TEST_P(VmmTest, CopiesAndMemsetsSpanTwoAdjacentMappings) {
  CUmemGenericAllocationHandle h1 = Create(kG), h2 = Create(kG);
  CUdeviceptr r = Reserve(2 * kG);
  ASSERT_EQ(api().cuMemMap(r, kG, 0, h1, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemMap(r + kG, kG, 0, h2, 0), CUDA_SUCCESS);
  CUmemAccessDesc rw = Access();
  ASSERT_EQ(api().cuMemSetAccess(r, 2 * kG, &rw, 1), CUDA_SUCCESS) << "both in one call";
  std::vector<unsigned char> in(256), out(256, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 1);
  ASSERT_EQ(api().cuMemcpyHtoD(r + kG - 128, in.data(), in.size()), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(out.data(), r + kG - 128, out.size()), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  unsigned char b = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&b, r + kG, 1), CUDA_SUCCESS);
  EXPECT_EQ(b, in[128]) << "the second half landed in the second mapping";
  ASSERT_EQ(api().cuMemsetD8(r + kG - 32, 0x5a, 64), CUDA_SUCCESS);
  std::vector<unsigned char> m(64);
  ASSERT_EQ(api().cuMemcpyDtoH(m.data(), r + kG - 32, 64), CUDA_SUCCESS);
  EXPECT_EQ(m, std::vector<unsigned char>(64, 0x5a));
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(r, 0x22, 2 * kG, s), CUDA_SUCCESS);
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 4096), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoDAsync(buf, r + kG - 2048, 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  std::vector<unsigned char> got(4096);
  ASSERT_EQ(api().cuMemcpyDtoH(got.data(), buf, got.size()), CUDA_SUCCESS);
  EXPECT_EQ(got, std::vector<unsigned char>(4096, 0x22));
  EXPECT_EQ(api().cuMemcpyHtoD(r + 2 * kG - 2048, got.data(), 4096), CUDA_ERROR_INVALID_VALUE)
      << "into the unmapped end";
  EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemUnmap(r, 2 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, 2 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h2), CUDA_SUCCESS);
}

// Cases "access:noaccess:*", "access:unmapped:*", "access:partial:*": refused at the call, with
// nothing moved and the context unharmed.
TEST_P(VmmTest, CopiesToVaWithoutAccessOrMappingAreInvalidValue) {
  CUmemGenericAllocationHandle h = Create(kG);
  CUdeviceptr r = Reserve(2 * kG);
  ASSERT_EQ(api().cuMemMap(r, kG, 0, h, 0), CUDA_SUCCESS);
  std::vector<unsigned char> host(4096, 9);
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 4096), CUDA_SUCCESS);
  // Mapped, no cuMemSetAccess yet.
  EXPECT_EQ(api().cuMemcpyHtoD(r, host.data(), 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpyDtoH(host.data(), r, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD8(r, 1, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpyDtoD(buf, r, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD8Async(r, 1, 4096, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(AccessOf(r), 0u);
  CUdeviceptr dp = 0;
  EXPECT_EQ(api().cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, r),
            CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr base = 0;
  size_t size = 0;
  EXPECT_EQ(api().cuMemGetAddressRange(&base, &size, r), CUDA_ERROR_NOT_FOUND);
  // Reserved, never mapped.
  EXPECT_EQ(api().cuMemcpyHtoD(r + kG, host.data(), 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD8(r + kG, 1, 4096), CUDA_ERROR_INVALID_VALUE);
  // Accessible, but the range runs past the mapping: nothing of it is written.
  CUmemAccessDesc rw = Access();
  ASSERT_EQ(api().cuMemSetAccess(r, kG, &rw, 1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8(r, 0x12, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemcpyHtoD(r + kG - 2048, host.data(), 4096), CUDA_ERROR_INVALID_VALUE);
  std::vector<unsigned char> tail(2048);
  ASSERT_EQ(api().cuMemcpyDtoH(tail.data(), r + kG - 2048, tail.size()), CUDA_SUCCESS);
  EXPECT_EQ(tail, std::vector<unsigned char>(2048, 0x12)) << "untouched";
  ExpectUsable();
  EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, 2 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
}

// Cases "access:readonly:*" and "map" (PROT_READ). The memset is synchronized before the access
// changes: on the H200 a memset still running then faults (the probe's setup did not wait).
TEST_P(VmmTest, ReadOnlyAccessAllowsReadsAndRefusesWrites) {
  CUmemGenericAllocationHandle h = Create(kG);
  CUdeviceptr r = Reserve(kG);
  MapRw(r, kG, h);
  ASSERT_EQ(api().cuMemsetD8(r, 0x12, kG), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  CUmemAccessDesc ro = Access(CU_MEM_ACCESS_FLAGS_PROT_READ);
  ASSERT_EQ(api().cuMemSetAccess(r, kG, &ro, 1), CUDA_SUCCESS);
  EXPECT_EQ(AccessOf(r), 1u);
  std::vector<unsigned char> host(4096, 0);
  EXPECT_EQ(api().cuMemcpyDtoH(host.data(), r, 4096), CUDA_SUCCESS);
  EXPECT_EQ(host, std::vector<unsigned char>(4096, 0x12));
  EXPECT_EQ(api().cuMemsetD8(r, 1, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpyHtoD(r, host.data(), 4096), CUDA_ERROR_INVALID_VALUE);
  // Two descriptors for one device: the last one wins.
  CUmemAccessDesc two[] = {Access(), Access(CU_MEM_ACCESS_FLAGS_PROT_READ)};
  ASSERT_EQ(api().cuMemSetAccess(r, kG, two, 2), CUDA_SUCCESS);
  EXPECT_EQ(AccessOf(r), 1u);
  CUmemAccessDesc none = Access(CU_MEM_ACCESS_FLAGS_PROT_NONE);
  ASSERT_EQ(api().cuMemSetAccess(r, kG, &none, 1), CUDA_SUCCESS);
  EXPECT_EQ(AccessOf(r), 0u);
  EXPECT_EQ(api().cuMemcpyDtoH(host.data(), r, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
}

// Case "map": cuMemSetAccess covers whole mappings back to back, with valid descriptors.
TEST_P(VmmTest, SetAccessNeedsWholeMappingsAndValidDescriptors) {
  CUmemGenericAllocationHandle h1 = Create(kG), h2 = Create(2 * kG);
  CUdeviceptr r = Reserve(8 * kG);
  ASSERT_EQ(api().cuMemMap(r, kG, 0, h1, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemMap(r + kG, 2 * kG, 0, h2, 0), CUDA_SUCCESS);
  CUmemAccessDesc d = Access();
  EXPECT_EQ(api().cuMemSetAccess(r + kG, kG, &d, 1), CUDA_ERROR_INVALID_VALUE) << "half of h2";
  EXPECT_EQ(api().cuMemSetAccess(r, 4 * kG, &d, 1), CUDA_ERROR_INVALID_VALUE) << "past them";
  EXPECT_EQ(api().cuMemSetAccess(r + 4 * kG, kG, &d, 1), CUDA_ERROR_INVALID_VALUE) << "unmapped";
  EXPECT_EQ(api().cuMemSetAccess(r, 4096, &d, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemSetAccess(r, 0, &d, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemSetAccess(r, kG, &d, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemSetAccess(r, kG, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  int devices = 0;
  ASSERT_EQ(api().cuDeviceGetCount(&devices), CUDA_SUCCESS);
  CUmemAccessDesc bad = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_DEVICE,
                               devices);
  EXPECT_EQ(api().cuMemSetAccess(r, kG, &bad, 1), CUDA_ERROR_INVALID_VALUE)
      << "a missing device is INVALID_VALUE here (not INVALID_DEVICE)";
  bad = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_HOST);
  EXPECT_EQ(api().cuMemSetAccess(r, kG, &bad, 1), CUDA_ERROR_NOT_SUPPORTED);
  bad = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_INVALID);
  EXPECT_EQ(api().cuMemSetAccess(r, kG, &bad, 1), CUDA_ERROR_INVALID_VALUE);
  bad = Access(2);
  EXPECT_EQ(api().cuMemSetAccess(r, kG, &bad, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(AccessOf(r), 0u) << "no refused call changed anything";
  EXPECT_EQ(api().cuMemSetAccess(r, 3 * kG, &d, 1), CUDA_SUCCESS);
  EXPECT_EQ(AccessOf(r + 2 * kG + 4096), 3u);
  // cuMemGetAccess's own checks.
  CUresult res = CUDA_SUCCESS;
  EXPECT_EQ(AccessOf(r + 4 * kG, &res), 0u) << "written 0";
  EXPECT_EQ(res, CUDA_ERROR_INVALID_VALUE) << "and refused: not mapped";
  unsigned long long flags = 0;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, devices};
  EXPECT_EQ(api().cuMemGetAccess(&flags, &loc, r), CUDA_ERROR_INVALID_DEVICE);
  loc = {CU_MEM_LOCATION_TYPE_HOST, 0};
  EXPECT_EQ(api().cuMemGetAccess(&flags, &loc, r), CUDA_SUCCESS);
  EXPECT_EQ(flags, 3u) << "the host reads as read-write";
  EXPECT_EQ(api().cuMemGetAccess(nullptr, &loc, r), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemGetAccess(&flags, nullptr, r), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 4096), CUDA_SUCCESS);
  EXPECT_EQ(AccessOf(buf, &res), 0u);
  EXPECT_EQ(res, CUDA_SUCCESS) << "cuMemAlloc memory: no VMM access, answered";
  EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
  // A remap starts with no access again.
  ASSERT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemMap(r, kG, 0, h1, 0), CUDA_SUCCESS);
  EXPECT_EQ(AccessOf(r), 0u);
  EXPECT_EQ(api().cuMemUnmap(r, 3 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, 8 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h2), CUDA_SUCCESS);
}

// Cases "map" and "bad:unmap_twice": unmapping never splits a mapping, and reserved VA with
// nothing mapped unmaps successfully (so a second unmap succeeds too).
TEST_P(VmmTest, UnmapIsLenientAboutEmptyVaButNeverSplitsAMapping) {
  CUmemGenericAllocationHandle h = Create(2 * kG);
  CUdeviceptr r = Reserve(4 * kG);
  ASSERT_EQ(api().cuMemMap(r, 2 * kG, 0, h, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemUnmap(r, kG), CUDA_ERROR_INVALID_VALUE) << "half of the mapping";
  EXPECT_EQ(api().cuMemUnmap(r + kG, 2 * kG), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemUnmap(r, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemUnmap(r + 4096, 2 * kG), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemUnmap(r, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemUnmap(0, kG), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemUnmap(r + 2 * kG, kG), CUDA_SUCCESS) << "reserved, nothing mapped";
  EXPECT_EQ(api().cuMemUnmap(r, 4 * kG), CUDA_SUCCESS) << "the mapping and empty VA";
  EXPECT_EQ(api().cuMemUnmap(r, 2 * kG), CUDA_SUCCESS) << "twice";
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 4096), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemUnmap(buf, kG), CUDA_ERROR_INVALID_VALUE) << "not reserved";
  EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, 4 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
}

// Case "map": pointer attributes of mapped VA.
TEST_P(VmmTest, PointerAttributesNameTheReservationAndTheMapping) {
  CUmemGenericAllocationHandle h1 = Create(kG), h2 = Create(2 * kG);
  CUdeviceptr r = Reserve(8 * kG);
  MapRw(r, kG, h1);
  MapRw(r + kG, 2 * kG, h2);
  const CUdeviceptr p = r + 2 * kG + 64;
  CUcontext c = reinterpret_cast<CUcontext>(1);
  EXPECT_EQ(api().cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p), CUDA_SUCCESS);
  EXPECT_EQ(c, nullptr) << "VMM memory belongs to no context";
  unsigned type = 0;
  EXPECT_EQ(api().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p),
            CUDA_SUCCESS);
  EXPECT_EQ(type, static_cast<unsigned>(CU_MEMORYTYPE_DEVICE));
  CUdeviceptr start = 0;
  size_t size = 0;
  EXPECT_EQ(api().cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p),
            CUDA_SUCCESS);
  EXPECT_EQ(start, r) << "the reservation's start";
  EXPECT_EQ(api().cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p), CUDA_SUCCESS);
  EXPECT_EQ(size, 8 * kG) << "the reservation's size";
  EXPECT_EQ(api().cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p),
            CUDA_SUCCESS);
  EXPECT_EQ(start, r + kG);
  EXPECT_EQ(api().cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p),
            CUDA_SUCCESS);
  EXPECT_EQ(size, 2 * kG);
  int mapped = 0;
  EXPECT_EQ(api().cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, p), CUDA_SUCCESS);
  EXPECT_EQ(mapped, 1);
  int access = 0;
  EXPECT_EQ(api().cuPointerGetAttribute(&access, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p),
            CUDA_SUCCESS);
  EXPECT_EQ(access, 3);
  void* hp = reinterpret_cast<void*>(1);
  EXPECT_EQ(api().cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(hp, nullptr) << "written NULL, then refused";
  unsigned long long id1 = 0, id2 = 0, blk1 = 0, blk2 = 0;
  EXPECT_EQ(api().cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, r), CUDA_SUCCESS);
  EXPECT_EQ(api().cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, p), CUDA_SUCCESS);
  EXPECT_EQ(api().cuPointerGetAttribute(&blk1, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, r),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuPointerGetAttribute(&blk2, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, p),
            CUDA_SUCCESS);
  EXPECT_NE(id1, 0u);
  EXPECT_NE(id1, id2);
  EXPECT_NE(blk1, blk2);
  CUdeviceptr base = 0;
  EXPECT_EQ(api().cuMemGetAddressRange(&base, &size, p), CUDA_SUCCESS);
  EXPECT_EQ(base, r + kG) << "the mapping, unlike RANGE_START_ADDR";
  EXPECT_EQ(size, 2 * kG);
  // Reserved VA with nothing mapped: refused singly, zeros in the plural form.
  EXPECT_EQ(api().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, r + 4 * kG),
            CUDA_ERROR_INVALID_VALUE);
  CUpointer_attribute list[] = {CU_POINTER_ATTRIBUTE_MAPPED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  int v_mapped = 77, v_ordinal = 77;
  void* data[] = {&v_mapped, &v_ordinal};
  EXPECT_EQ(api().cuPointerGetAttributes(2, list, data, r + 4 * kG), CUDA_SUCCESS);
  EXPECT_EQ(v_mapped, 0);
  EXPECT_EQ(v_ordinal, -2);
  EXPECT_EQ(api().cuMemUnmap(r, 3 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, 8 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h2), CUDA_SUCCESS);
}

// Case "lifetime": cuMemGetInfo counts physical memory from cuMemCreate to the last unmap after
// the last release; reserving, mapping and access cost nothing.
TEST_P(VmmTest, ReleasedWhileMappedTheMemoryStaysUntilUnmapped) {
  const size_t f0 = FreeBytes();
  CUmemGenericAllocationHandle h = Create(4 * kG);
  EXPECT_EQ(f0 - FreeBytes(), 4 * kG);
  CUdeviceptr r = Reserve(4 * kG);
  MapRw(r, 4 * kG, h);
  EXPECT_EQ(f0 - FreeBytes(), 4 * kG);
  ASSERT_EQ(api().cuMemsetD8(r, 0x3c, 4 * kG), CUDA_SUCCESS);
  CUmemGenericAllocationHandle k = 0;
  ASSERT_EQ(api().cuMemRetainAllocationHandle(&k, reinterpret_cast<void*>(r + kG + 12345)),
            CUDA_SUCCESS);
  EXPECT_EQ(k, h) << "the same handle, from any address of the mapping";
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(k), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_ERROR_INVALID_VALUE) << "one more than referenced";
  EXPECT_EQ(f0 - FreeBytes(), 4 * kG) << "still mapped: still there";
  unsigned char b = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&b, r + 3 * kG, 1), CUDA_SUCCESS);
  EXPECT_EQ(b, 0x3c);
  CUmemAllocationProp q;
  EXPECT_EQ(api().cuMemGetAllocationPropertiesFromHandle(&q, h), CUDA_SUCCESS)
      << "the handle answers while mapped";
  EXPECT_EQ(api().cuMemAddressFree(r, 4 * kG), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(r), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuMemUnmap(r, 4 * kG), CUDA_SUCCESS);
  EXPECT_EQ(FreeBytes(), f0) << "back at the last unmap";
  EXPECT_EQ(api().cuMemAddressFree(r, 4 * kG), CUDA_SUCCESS);
  // Retain refuses what is not mapped VMM memory.
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 4096), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRetainAllocationHandle(&k, reinterpret_cast<void*>(buf)),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemRetainAllocationHandle(&k, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
  // Host-located memory costs the device nothing.
  CUmemAllocationProp hp = DeviceProp();
  hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
  CUmemGenericAllocationHandle hh = Create(4 * kG, hp);
  EXPECT_EQ(FreeBytes(), f0);
  EXPECT_EQ(api().cuMemRelease(hh), CUDA_SUCCESS);
}

// Case "export": a POSIX file descriptor round trip in one process.
TEST_P(VmmTest, ExportedDescriptorImportsAnotherHandleOnTheSameMemory) {
  CUmemAllocationProp p = DeviceProp();
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = Create(2 * kG, p), plain = Create(kG);
  int fd = -1;
  ASSERT_EQ(api().cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                               0),
            CUDA_SUCCESS);
  EXPECT_GE(fd, 0);
  int x = -1;
  EXPECT_EQ(api().cuMemExportToShareableHandle(&x, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemExportToShareableHandle(&x, h, CU_MEM_HANDLE_TYPE_FABRIC, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemExportToShareableHandle(&x, plain,
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE)
      << "not created exportable";
  EXPECT_EQ(api().cuMemExportToShareableHandle(nullptr, h,
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);
  const size_t f0 = FreeBytes();
  CUmemGenericAllocationHandle imp = 0;
  ASSERT_EQ(api().cuMemImportFromShareableHandle(
                &imp, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_SUCCESS);
  EXPECT_NE(imp, h) << "another handle value";
  EXPECT_EQ(FreeBytes(), f0) << "the same memory, not more";
  CUmemAllocationProp q;
  ASSERT_EQ(api().cuMemGetAllocationPropertiesFromHandle(&q, imp), CUDA_SUCCESS);
  EXPECT_EQ(static_cast<unsigned>(q.requestedHandleTypes), 0u);
  EXPECT_EQ(q.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
  CUdeviceptr r1 = Reserve(2 * kG), r2 = Reserve(2 * kG);
  MapRw(r1, 2 * kG, h);
  MapRw(r2, 2 * kG, imp);
  ASSERT_EQ(api().cuMemsetD8(r1, 0x4d, 2 * kG), CUDA_SUCCESS);
  unsigned char b = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&b, r2 + kG, 1), CUDA_SUCCESS);
  EXPECT_EQ(b, 0x4d) << "written through the original, read through the import";
  EXPECT_EQ(api().cuMemUnmap(r1, 2 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemUnmap(r2, 2 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r1, 2 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r2, 2 * kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(imp), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(plain), CUDA_SUCCESS);
  close(fd);
}

// Case "noctx": no VMM call needs a current context; a copy does.
TEST_P(VmmTest, VmmCallsNeedNoCurrentContext) {
  CUcontext popped = nullptr;
  ASSERT_EQ(api().cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  CUcontext cur = reinterpret_cast<CUcontext>(1);
  ASSERT_EQ(api().cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  ASSERT_EQ(cur, nullptr);
  CUmemAllocationProp p = DeviceProp();
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr r = 0;
  EXPECT_EQ(api().cuMemCreate(&h, kG, &p, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressReserve(&r, kG, 0, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemMap(r, kG, 0, h, 0), CUDA_SUCCESS);
  CUmemAccessDesc d = Access();
  EXPECT_EQ(api().cuMemSetAccess(r, kG, &d, 1), CUDA_SUCCESS);
  EXPECT_EQ(AccessOf(r), 3u);
  unsigned char b = 0;
  EXPECT_EQ(api().cuMemcpyDtoH(&b, r, 1), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxPushCurrent(popped), CUDA_SUCCESS);
}

// Case "contexts": VMM objects outlive the context that made them.
TEST_P(VmmTest, MappingsOutliveTheContextTheyWereMadeIn) {
  CUcontext c2 = nullptr;
  ASSERT_EQ(CreateContext(api(), &c2, 0, 0), CUDA_SUCCESS);
  CUmemGenericAllocationHandle h = Create(kG);
  CUdeviceptr r = Reserve(kG);
  MapRw(r, kG, h);
  ASSERT_EQ(api().cuMemsetD8(r, 0x61, kG), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxDestroy(c2), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
  unsigned char b = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&b, r, 1), CUDA_SUCCESS);
  EXPECT_EQ(b, 0x61);
  EXPECT_EQ(AccessOf(r), 3u);
  EXPECT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
}

// Case "attrs".
TEST_P(VmmTest, DeviceAttributesOfVmmAndItsHandleTypes) {
  auto attr = [&](CUdevice_attribute a) {
    int v = -1;
    EXPECT_EQ(api().cuDeviceGetAttribute(&v, a, 0), CUDA_SUCCESS);
    return v;
  };
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED), 0);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED), 0);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED), 1);
}

CUHAL_INSTANTIATE_BACKEND_TEST(VmmTest);

// The fake's own: what it answers where the H200 crashes, its inventory, its fault injection,
// and a test that leaves its context poisoned.
class FakeVmmTest : public VmmTest {};

// Cases "bad:*_bogus", "bad:map_released", "bad:export_released": the H200 dies with SIGSEGV;
// the fake answers CUDA_ERROR_INVALID_VALUE and goes on.
TEST_P(FakeVmmTest, BogusAndStaleHandlesAreInvalidValueNotACrash) {
  const CUmemGenericAllocationHandle bogus = 0x12345678;
  CUmemGenericAllocationHandle stale = Create(kG);
  ASSERT_EQ(api().cuMemRelease(stale), CUDA_SUCCESS);
  CUdeviceptr r = Reserve(kG);
  CUmemAllocationProp q;
  int fd = -1;
  for (CUmemGenericAllocationHandle h : {bogus, stale}) {
    EXPECT_EQ(api().cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(api().cuMemGetAllocationPropertiesFromHandle(&q, h), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(api().cuMemMap(r, kG, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(api().cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                                 0),
              CUDA_ERROR_INVALID_VALUE);
  }
  CUmemGenericAllocationHandle imp = 0;
  EXPECT_EQ(api().cuMemImportFromShareableHandle(&imp, reinterpret_cast<void*>(std::intptr_t{3}),
                                                 CU_MEM_HANDLE_TYPE_FABRIC),
            CUDA_ERROR_NOT_PERMITTED)
      << "a fabric handle is not read";
  EXPECT_EQ(api().cuMemImportFromShareableHandle(&imp, reinterpret_cast<void*>(std::intptr_t{-1}),
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemAddressFree(r, kG), CUDA_SUCCESS);
}

// UNMEASURED on the H200 (not tried there): ranges that wrap around the address space, and a
// remap of other memory under queued work, are answered, never walked or crashed on.
TEST_P(FakeVmmTest, WrappingRangesAndRemapsUnderQueuedWorkNeverCrash) {
  CUmemGenericAllocationHandle h1 = Create(kG), h2 = Create(kG);
  CUdeviceptr r = Reserve(kG);
  MapRw(r, kG, h1);
  const size_t huge = ~size_t{0} - kG + 1;  // granule-aligned, wraps from r
  CUmemAccessDesc d = Access();
  EXPECT_EQ(api().cuMemSetAccess(r, huge, &d, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemUnmap(r, huge), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD8(r, 0, ~size_t{0} - 7), CUDA_ERROR_INVALID_VALUE);
  unsigned char host[16] = {};
  EXPECT_EQ(api().cuMemcpyHtoD(r + 8, host, ~size_t{0} - 7), CUDA_ERROR_INVALID_VALUE);
  // A memset queued behind a gate; meanwhile the VA is unmapped and another handle mapped there.
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  static std::atomic<bool> open;
  open = false;
  auto gate = [](void*) {
    while (!open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  ASSERT_EQ(api().cuLaunchHostFunc(s, gate, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(r, 0x77, kG, s), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS);
  MapRw(r, kG, h2);
  ASSERT_EQ(api().cuMemsetD8(r, 0x11, kG), CUDA_SUCCESS);
  open = true;
  EXPECT_EQ(api().cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS)
      << "the queued memset was for the old mapping";
  EXPECT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAddressFree(r, kG), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h2), CUDA_SUCCESS);
  EXPECT_EQ(api().cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);  // poisoned; the stream goes too
}

// Seeded random sequences of VMM calls, copies and memsets with arguments right and wrong
// (live, stale and bogus handles; reserved, unmapped, misaligned and foreign addresses; sizes of
// whole and partial granules): every call answers, nothing crashes (ASan/UBSan builds), and
// once everything is unmapped, freed and released, no VMM object is left.
TEST_P(FakeVmmTest, RandomCallSequencesNeverCrashAndLeaveNothing) {
  std::uint64_t rng = 0x9e3779b97f4a7c15ull;
  auto next = [&rng](std::uint64_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n == 0 ? 0 : rng % n;
  };
  std::vector<CUmemGenericAllocationHandle> handles = {0, 0x12345678};
  std::vector<std::pair<CUdeviceptr, size_t>> reservations;
  std::vector<int> fds;
  std::vector<std::pair<CUdeviceptr, size_t>> maps;  // every successful cuMemMap
  std::map<CUmemGenericAllocationHandle, size_t> sizes;  // of the handles cuMemCreate made
  int created = 0, mapped = 0, copied = 0, accessible = 0;
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 64 * 1024), CUDA_SUCCESS);
  std::vector<unsigned char> host(64 * 1024, 3);
  auto size = [&] {
    switch (next(4)) {
      case 0: return kG * (1 + next(3));
      case 1: return size_t{4096} * next(3);
      case 2: return kG * (1 + next(3)) + 4096;
      default: return size_t{0};
    }
  };
  auto handle = [&] { return handles[next(handles.size())]; };
  auto address = [&]() -> CUdeviceptr {
    if (reservations.empty() || next(8) == 0) return next(2) ? buf : CUdeviceptr{0};
    const auto& [base, n] = reservations[next(reservations.size())];
    switch (next(3)) {
      case 0: return base;
      case 1: return base + kG * next(n / kG + 1);
      default: return base + next(n + kG);
    }
  };
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  for (int i = 0; i < 3000; ++i) {
    CUmemAllocationProp prop = DeviceProp(next(5) == 0 ? 1 : 0);
    if (next(4) == 0) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemAccessDesc desc = Access(next(4), next(5) == 0 ? CU_MEM_LOCATION_TYPE_HOST
                                                        : CU_MEM_LOCATION_TYPE_DEVICE,
                                  static_cast<int>(next(3)) - 1);
    CUmemGenericAllocationHandle h = 0;
    CUdeviceptr p = 0;
    unsigned long long flags = 0;
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    switch (next(14)) {
      case 0:
        if (const size_t n = size(); api().cuMemCreate(&h, n, &prop, 0) == CUDA_SUCCESS) {
          handles.push_back(h);
          sizes[h] = n;
          ++created;
        }
        break;
      case 1:
        (void)api().cuMemRelease(handle());
        break;
      case 2: {
        const size_t n = size() * (1 + next(4));
        if (api().cuMemAddressReserve(&p, n, next(2) ? 0 : kG << next(3),
                                      next(3) == 0 ? address() : 0, 0) == CUDA_SUCCESS) {
          reservations.emplace_back(p, n);
        }
        break;
      }
      case 3:
        if (!reservations.empty() && next(3) == 0) {
          const size_t k = next(reservations.size());
          if (api().cuMemAddressFree(reservations[k].first, next(4) == 0
                                                                ? size()
                                                                : reservations[k].second) ==
              CUDA_SUCCESS) {
            reservations.erase(reservations.begin() + static_cast<long>(k));
          }
        }
        break;
      case 4: {
        const CUdeviceptr va = address();
        const CUmemGenericAllocationHandle x = handle();
        const size_t n = sizes.count(x) != 0 && next(4) != 0 ? sizes[x] : size();
        if (api().cuMemMap(va, n, next(4) == 0 ? kG : 0, x, 0) == CUDA_SUCCESS) {
          maps.emplace_back(va, n);
          ++mapped;
        }
        break;
      }
      case 5:
        (void)api().cuMemUnmap(address(), size());
        break;
      case 6:
        if (api().cuMemSetAccess(address(), next(2) != 0 && !maps.empty() ? maps.back().second
                                                                            : size(),
                                 &desc, 1) == CUDA_SUCCESS) {
          ++accessible;
        }
        break;
      case 7:
        (void)api().cuMemGetAccess(&flags, &loc, address());
        break;
      case 8:
        if (api().cuMemRetainAllocationHandle(&h, reinterpret_cast<void*>(address())) ==
            CUDA_SUCCESS) {
          handles.push_back(h);
        }
        break;
      case 9:
        if (api().cuMemcpyHtoD(address(), host.data(), 1 + next(host.size())) == CUDA_SUCCESS) {
          ++copied;
        }
        (void)api().cuMemcpyDtoH(host.data(), address(), next(host.size()));
        break;
      case 10:
        (void)api().cuMemsetD8Async(address(), 7, next(3 * kG), s);
        break;
      case 11: {
        int fd = -1;
        if (api().cuMemExportToShareableHandle(&fd, handle(),
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                               0) == CUDA_SUCCESS) {
          fds.push_back(fd);
          if (api().cuMemImportFromShareableHandle(
                  &h, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == CUDA_SUCCESS) {
            handles.push_back(h);
          }
        }
        break;
      }
      case 12: {
        // Room for the largest value (P2P_TOKENS: two 64-bit tokens, written as on the driver).
        unsigned long long v[8] = {};
        (void)api().cuPointerGetAttribute(
            v, static_cast<CUpointer_attribute>(1 + next(21)), address());
        break;
      }
      default:
        (void)api().cuMemcpyDtoDAsync(buf, address(), next(64 * 1024), s);
        break;
    }
  }
  (void)api().cuStreamSynchronize(s);  // may fault: queued work whose mapping went
  // The sequence reached the calls' successful paths, not only their refusals.
  RecordProperty("created", created);
  RecordProperty("mapped", mapped);
  RecordProperty("accessible", accessible);
  RecordProperty("copied", copied);
  EXPECT_GT(created, 20);
  EXPECT_GT(mapped, 5);
  EXPECT_GT(accessible, 0);
  EXPECT_GT(copied, 0);
  // Each mapping still there is one of those recorded (a later, overlapping one is recorded
  // too), and its reservation is alive (cuMemAddressFree refuses one with a mapping).
  for (const auto& [va, n] : maps) (void)api().cuMemUnmap(va, n);
  for (const auto& [base, n] : reservations) {
    EXPECT_EQ(api().cuMemAddressFree(base, n), CUDA_SUCCESS);
  }
  for (CUmemGenericAllocationHandle x : handles) {
    while (api().cuMemRelease(x) == CUDA_SUCCESS) {
    }
  }
  for (int fd : fds) close(fd);
  const fakecuda::Inventory live = fake().LiveObjects();
  EXPECT_EQ(live.vmm_allocations, 0) << fake().LeakReport();
  EXPECT_EQ(live.vmm_reservations, 0) << fake().LeakReport();
  EXPECT_EQ(live.vmm_mappings, 0) << fake().LeakReport();
  EXPECT_EQ(api().cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);  // the buffer and the stream too
}

TEST_P(FakeVmmTest, LiveVmmObjectsAreInTheInventoryAndTheLeakReport) {
  CUmemGenericAllocationHandle h = Create(kG);
  CUdeviceptr r = Reserve(2 * kG);
  ASSERT_EQ(api().cuMemMap(r, kG, 0, h, 0), CUDA_SUCCESS);
  fakecuda::Inventory live = fake().LiveObjects();
  EXPECT_EQ(live.vmm_allocations, 1);
  EXPECT_EQ(live.vmm_reservations, 1);
  EXPECT_EQ(live.vmm_mappings, 1);
  EXPECT_EQ(live.device_allocations, 0);
  const std::string report = fake().LeakReport();
  EXPECT_NE(report.find("VMM allocation"), std::string::npos) << report;
  EXPECT_NE(report.find("VMM reservation"), std::string::npos) << report;
  EXPECT_NE(report.find("cuMemMap"), std::string::npos) << report;
  // Released but mapped: the memory is still live.
  ASSERT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().vmm_allocations, 1);
  ASSERT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS);
  live = fake().LiveObjects();
  EXPECT_EQ(live.vmm_allocations, 0);
  EXPECT_EQ(live.vmm_mappings, 0);
  EXPECT_EQ(live.vmm_reservations, 1);
  EXPECT_EQ(api().cuMemAddressFree(r, 2 * kG), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().Total(), 1) << fake().LeakReport();  // the test's primary retain
}

TEST_P(FakeVmmTest, FaultInjectionFailsVmmCallsWithoutEffect) {
  fakecuda::FaultRule rule;
  rule.entry = "cuMemCreate";
  rule.mode = fakecuda::FaultRule::Mode::kNth;
  rule.n = 1;
  rule.error = CUDA_ERROR_OUT_OF_MEMORY;
  fake().faults().AddRule(rule);
  const size_t f0 = FreeBytes();
  CUmemAllocationProp p = DeviceProp();
  CUmemGenericAllocationHandle h = 0;
  EXPECT_EQ(api().cuMemCreate(&h, kG, &p, 0), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(h, 0u);
  EXPECT_EQ(fake().LiveObjects().vmm_allocations, 0);
  EXPECT_EQ(FreeBytes(), f0);
  ASSERT_EQ(api().cuMemCreate(&h, kG, &p, 0), CUDA_SUCCESS) << "only the first call fails";
  CUdeviceptr r = Reserve(kG);
  rule.entry = "cuMemMap";
  rule.error = CUDA_ERROR_UNKNOWN;
  fake().faults().AddRule(rule);
  EXPECT_EQ(api().cuMemMap(r, kG, 0, h, 0), CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(fake().LiveObjects().vmm_mappings, 0);
  EXPECT_EQ(api().cuMemAddressFree(r, kG), CUDA_SUCCESS) << "nothing was mapped";
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  fake().faults().ClearRules();
}

// Case "inflight:unmap" and "inflight:release": cuMemUnmap does not wait for queued work, which
// then faults with a sticky CUDA_ERROR_ILLEGAL_ADDRESS; a release keeps the memory for it. Fake
// only: on the GPU the fault poisons the process's primary context for the rest of the suite.
TEST_P(FakeVmmTest, UnmapUnderQueuedWorkMakesItFaultAndReleaseDoesNot) {
  CUmemGenericAllocationHandle h = Create(kG);
  CUdeviceptr r = Reserve(kG);
  MapRw(r, kG, h);
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  static std::atomic<bool> open;
  open = false;
  auto gate = [](void*) {
    while (!open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  // First a release under queued work: the memset still lands.
  ASSERT_EQ(api().cuLaunchHostFunc(s, gate, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(r, 0x20, kG, s), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), CUDA_SUCCESS);
  open = true;
  ASSERT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  unsigned char b = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&b, r + 100, 1), CUDA_SUCCESS);
  EXPECT_EQ(b, 0x20);
  // Then an unmap under queued work: the memset faults when it runs.
  open = false;
  ASSERT_EQ(api().cuLaunchHostFunc(s, gate, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(r, 0x30, kG, s), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemUnmap(r, kG), CUDA_SUCCESS) << "returns at once";
  open = true;
  EXPECT_EQ(api().cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS) << "sticky";
  EXPECT_EQ(api().cuMemAddressFree(r, kG), CUDA_SUCCESS) << "VMM calls still answer";
  EXPECT_EQ(fake().LiveObjects().vmm_allocations, 0);
  // The poisoned primary context goes with a reset (its stream with it).
  EXPECT_EQ(api().cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(FakeVmmTest);

}  // namespace
}  // namespace cuhal::testing
