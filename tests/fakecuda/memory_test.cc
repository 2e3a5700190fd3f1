// Copyright 2026 The cuhal Authors.
// Conformance: memory (issue 3, "Must model" 6): device allocations and frees, cuMemGetInfo,
// out-of-memory, pinned, registered and managed host memory, every cuMemcpy*/cuMemset* variant of
// cuda_symbols.inc (sync and async) with data checked, bounds and alignment errors, pointer
// attributes.
//
// Every expectation of the parameterized tests here was checked against the real driver (NVIDIA
// H200, driver 580, CUDA 13.0) on 2026-12-02: the whole suite passed there (with the table's
// cuCtxSynchronize, cuCtxGetDevice and cuStreamGetCtx entries bound to their CUDA 13.0 cuda.h
// ABI; see tests/support/backend.h). An expectation added since, not yet run there, carries a
// "// UNMEASURED" comment on its line.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGiB = size_t{1} << 30;

// A page-aligned, heap-allocated host buffer (pageable memory).
struct PageableBuffer {
  explicit PageableBuffer(size_t n)
      : size(n), data(static_cast<unsigned char*>(std::aligned_alloc(4096, n))) {}
  ~PageableBuffer() { std::free(data); }
  PageableBuffer(const PageableBuffer&) = delete;
  PageableBuffer& operator=(const PageableBuffer&) = delete;
  size_t size;
  unsigned char* data;
};

class MemoryTest : public PrimaryContextTest {
 protected:
  size_t FreeBytes() {
    size_t free = 0;
    size_t total = 0;
    EXPECT_EQ(api().cuMemGetInfo(&free, &total), CUDA_SUCCESS);
    return free;
  }
};

std::vector<unsigned char> Pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<unsigned char>((i * 131 + seed * 7 + 1) & 0xFF);
  return out;
}

TEST_P(MemoryTest, AllocAndFree) {
  CUdeviceptr ptr = 0;
  ASSERT_EQ(api().cuMemAlloc(&ptr, 4 * kKiB), CUDA_SUCCESS);
  EXPECT_NE(ptr, CUdeviceptr{0});
  EXPECT_EQ(ptr % 256, 0u) << "cuMemAlloc memory is aligned for any type";
  CUdeviceptr other = 0;
  ASSERT_EQ(api().cuMemAlloc(&other, 1), CUDA_SUCCESS);
  EXPECT_NE(other, ptr);
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(other), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemAlloc(nullptr, 16), CUDA_ERROR_INVALID_VALUE);
}

// Measured by the differential fuzzer on the H200 (driver 580.159.04, 2026-12-06): every pinned
// allocation reports CU_MEMHOSTALLOC_DEVICEMAP (PORTABLE reads back 3), and cuMemHostAlloc with
// an unknown flag clears *pp as its out-of-memory failure does.
TEST_P(MemoryTest, PinnedAllocationsReportDeviceMapAndBadFlagsClearTheOutPointer) {
  void* host = nullptr;
  ASSERT_EQ(api().cuMemHostAlloc(&host, 4096, CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
  unsigned got = 0;
  ASSERT_EQ(api().cuMemHostGetFlags(&got, host), CUDA_SUCCESS);
  EXPECT_EQ(got, unsigned{CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP});
  EXPECT_EQ(api().cuMemFreeHost(host), CUDA_SUCCESS);
  void* bad = &got;
  EXPECT_EQ(api().cuMemHostAlloc(&bad, 64, 128), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(bad, nullptr);
}

// Measured by the differential fuzzer (H100, driver 580.159.04, 2026-12-06; 1,246 of 1,246 reads
// fit, fakecuda/internal/pinned_chunks.h): pinned allocations are placed in 2 MiB chunks
// (write-combined ones in chunks of their own); every allocation in a chunk reports
// CU_MEMHOSTALLOC_PORTABLE exactly when the allocation that opened the chunk asked for it.
// (Assumes no other pinned memory is live: true between the tests of this suite.)
TEST_P(MemoryTest, PinnedPortabilityIsTheChoiceOfTheAllocationThatOpenedTheChunk) {
  constexpr unsigned kPortable = CU_MEMHOSTALLOC_PORTABLE;
  constexpr unsigned kMapped = CU_MEMHOSTALLOC_DEVICEMAP;
  constexpr unsigned kCombined = CU_MEMHOSTALLOC_WRITECOMBINED;
  auto flags_of = [&](void* p) {
    unsigned got = 0;
    EXPECT_EQ(api().cuMemHostGetFlags(&got, p), CUDA_SUCCESS);
    return got;
  };
  void* plain = nullptr;
  void* portable = nullptr;
  ASSERT_EQ(api().cuMemHostAlloc(&plain, 64, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemHostAlloc(&portable, 4096, kPortable), CUDA_SUCCESS);
  EXPECT_EQ(flags_of(plain), kMapped);
  EXPECT_EQ(flags_of(portable), kMapped) << "the chunk was opened without PORTABLE";
  void* combined = nullptr;
  ASSERT_EQ(api().cuMemHostAlloc(&combined, 64, kCombined), CUDA_SUCCESS);
  EXPECT_EQ(flags_of(combined), kCombined | kMapped) << "write-combined memory has its own chunks";
  EXPECT_EQ(api().cuMemFreeHost(plain), CUDA_SUCCESS);
  EXPECT_EQ(flags_of(portable), kMapped) << "the chunk keeps its choice while it holds memory";
  EXPECT_EQ(api().cuMemFreeHost(portable), CUDA_SUCCESS);
  // Empty again: the next allocation decides.
  ASSERT_EQ(api().cuMemHostAlloc(&portable, 1, kPortable | kMapped), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemHostAlloc(&plain, 1 << 20, 0), CUDA_SUCCESS);
  EXPECT_EQ(flags_of(portable), kPortable | kMapped);
  EXPECT_EQ(flags_of(plain), kPortable | kMapped) << "the chunk was opened with PORTABLE";
  // A second 1 MiB no longer fits that 2 MiB chunk: it opens one of its own, without PORTABLE.
  void* second = nullptr;
  ASSERT_EQ(api().cuMemHostAlloc(&second, 1 << 20, 0), CUDA_SUCCESS);
  EXPECT_EQ(flags_of(second), kMapped) << "a new chunk, opened without PORTABLE";
  EXPECT_EQ(api().cuMemFreeHost(second), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(plain), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(portable), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(combined), CUDA_SUCCESS);
}

// Measured by the differential fuzzer (H100, driver 580.159.04, 2026-12-06; 91 calls): a transfer
// of 0 bytes at the address one past the end of an allocation succeeds.
TEST_P(MemoryTest, ZeroByteTransfersAtTheEndOfAnAllocationSucceed) {
  CUdeviceptr ptr = 0;
  ASSERT_EQ(api().cuMemAlloc(&ptr, 4), CUDA_SUCCESS);
  unsigned char host[4] = {};
  EXPECT_EQ(api().cuMemcpyDtoH(host, ptr + 4, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemcpyHtoD(ptr + 4, host, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemsetD8Async(ptr + 4, 7, 0, nullptr), CUDA_SUCCESS);
  // And the host side of a 0-byte copy may be null (22 calls of the fuzzer's third run).
  EXPECT_EQ(api().cuMemcpyHtoD(ptr + 4, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemcpyHtoD(ptr, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_SUCCESS);
}

TEST_P(MemoryTest, ZeroByteAllocationIsInvalidValue) {
  CUdeviceptr ptr = 0;
  EXPECT_EQ(api().cuMemAlloc(&ptr, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(MemoryTest, DoubleFreeAndBadPointersAreInvalidValue) {
  CUdeviceptr ptr = 0;
  ASSERT_EQ(api().cuMemAlloc(&ptr, 64 * kKiB), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(ptr + 256), CUDA_ERROR_INVALID_VALUE) << "interior pointer";
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_ERROR_INVALID_VALUE) << "double free";
  int local = 0;
  EXPECT_EQ(api().cuMemFree(reinterpret_cast<CUdeviceptr>(&local)), CUDA_ERROR_INVALID_VALUE)
      << "host pointer";
}

TEST_P(MemoryTest, MemGetInfoTracksAllocations) {
  // A first allocation may make the driver set up per-context state; measure after it.
  CUdeviceptr warm = 0;
  ASSERT_EQ(api().cuMemAlloc(&warm, 4 * kKiB), CUDA_SUCCESS);
  size_t free = 0;
  size_t total = 0;
  ASSERT_EQ(api().cuMemGetInfo(&free, &total), CUDA_SUCCESS);
  EXPECT_LE(free, total);
  // Measured on the H200: either output may be NULL (even both); the other is still written.
  size_t total_only = 0;
  EXPECT_EQ(api().cuMemGetInfo(nullptr, &total_only), CUDA_SUCCESS);
  EXPECT_EQ(total_only, total);
  EXPECT_EQ(api().cuMemGetInfo(nullptr, nullptr), CUDA_SUCCESS);
  // On a real GPU the free figure also moves with other processes (the nightly runs its test
  // programs in parallel on one GPU; one attempt there saw 956 MiB go between two reads). An
  // attempt disturbed that way is retried: a driver that does not track allocations fails every
  // attempt, and the fake (nothing else moves its figure) must pass the first, exactly.
  const int attempts = IsFake() ? 1 : 5;
  bool tracked = false;
  for (int attempt = 0; attempt < attempts && !tracked; ++attempt) {
    const size_t before = FreeBytes();
    CUdeviceptr big = 0;
    ASSERT_EQ(api().cuMemAlloc(&big, kGiB), CUDA_SUCCESS);
    const size_t during = FreeBytes();
    ASSERT_EQ(api().cuMemFree(big), CUDA_SUCCESS);
    const size_t after = FreeBytes();
    if (IsFake()) {
      EXPECT_EQ(before - during, kGiB);
      EXPECT_EQ(after, before);
    }
    // The real driver rounds allocations up to its page size: allow some slack.
    tracked = before >= during && before - during >= kGiB &&
              before - during <= kGiB + 64 * kMiB && after + 64 * kMiB >= before;
    if (!tracked) {
      std::printf("attempt %d: free %zu before, %zu during a 1 GiB allocation, %zu after\n",
                  attempt, before, during, after);
    }
  }
  EXPECT_TRUE(tracked) << "cuMemGetInfo did not follow a 1 GiB cuMemAlloc/cuMemFree";
  EXPECT_EQ(api().cuMemFree(warm), CUDA_SUCCESS);
}

TEST_P(MemoryTest, AllocationBeyondTotalIsOutOfMemoryAndNotSticky) {
  size_t total = 0;
  ASSERT_EQ(api().cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
  CUdeviceptr ptr = 0;
  EXPECT_EQ(api().cuMemAlloc(&ptr, total + kGiB), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(api().cuMemAlloc(&ptr, total * 4), CUDA_ERROR_OUT_OF_MEMORY);
  // Out of memory is not a sticky error: the context still works.
  ASSERT_EQ(api().cuMemAlloc(&ptr, 4 * kKiB), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(ptr), CUDA_SUCCESS);
}

TEST_P(MemoryTest, PinnedHostMemory) {
  void* pinned = nullptr;
  ASSERT_EQ(api().cuMemAllocHost(&pinned, 64 * kKiB), CUDA_SUCCESS);
  ASSERT_NE(pinned, nullptr);
  std::memset(pinned, 0x3C, 64 * kKiB);  // host-accessible
  EXPECT_EQ(static_cast<unsigned char*>(pinned)[64 * kKiB - 1], 0x3C);
  CUdeviceptr mapped = 0;
  EXPECT_EQ(api().cuMemHostGetDevicePointer(&mapped, pinned, 0), CUDA_SUCCESS);
  EXPECT_EQ(mapped, reinterpret_cast<CUdeviceptr>(pinned));
  EXPECT_EQ(api().cuMemFreeHost(pinned), CUDA_SUCCESS);

  const unsigned flags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP;
  void* host = nullptr;
  ASSERT_EQ(api().cuMemHostAlloc(&host, 4 * kKiB, flags), CUDA_SUCCESS);
  unsigned got = 0;
  ASSERT_EQ(api().cuMemHostGetFlags(&got, host), CUDA_SUCCESS);
  EXPECT_EQ(got & flags, flags);
  EXPECT_EQ(api().cuMemFreeHost(host), CUDA_SUCCESS);
  void* wc = nullptr;
  ASSERT_EQ(api().cuMemHostAlloc(&wc, 4 * kKiB, CU_MEMHOSTALLOC_WRITECOMBINED), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(wc), CUDA_SUCCESS);
  void* bad = nullptr;
  EXPECT_EQ(api().cuMemHostAlloc(&bad, 4 * kKiB, 0x80), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(MemoryTest, FreeHostOfMemoryThatIsNotPinnedIsInvalidValue) {
  PageableBuffer pageable(4 * kKiB);
  EXPECT_EQ(api().cuMemFreeHost(pageable.data), CUDA_ERROR_INVALID_VALUE);
  unsigned flags = 0;
  EXPECT_EQ(api().cuMemHostGetFlags(&flags, pageable.data), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(MemoryTest, RegisteredHostMemory) {
  PageableBuffer buffer(64 * kKiB);
  std::vector<unsigned char> data = Pattern(64 * kKiB, 3);
  std::memcpy(buffer.data, data.data(), data.size());
  ASSERT_EQ(api().cuMemHostRegister(buffer.data, buffer.size, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemHostRegister(buffer.data, buffer.size, 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(api().cuMemHostRegister(buffer.data + 8 * kKiB, 8 * kKiB, 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  // Registered memory takes part in asynchronous copies like pinned memory.
  CUdeviceptr dev = 0;
  ASSERT_EQ(api().cuMemAlloc(&dev, buffer.size), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyHtoDAsync(dev, buffer.data, buffer.size, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(dev, 0xEE, 16, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoHAsync(buffer.data, dev, buffer.size, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  std::fill(data.begin(), data.begin() + 16, 0xEE);
  EXPECT_EQ(std::memcmp(buffer.data, data.data(), data.size()), 0);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(dev), CUDA_SUCCESS);

  EXPECT_EQ(api().cuMemHostUnregister(buffer.data), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemHostUnregister(buffer.data), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  PageableBuffer unknown(4 * kKiB);
  EXPECT_EQ(api().cuMemHostUnregister(unknown.data), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_EQ(api().cuMemHostRegister(nullptr, 4 * kKiB, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemHostRegister(unknown.data, 0, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(MemoryTest, ManagedMemoryIsHostDereferenceable) {
  CUdeviceptr managed = 0;
  ASSERT_EQ(api().cuMemAllocManaged(&managed, 8 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  auto* host = reinterpret_cast<unsigned char*>(managed);
  std::memset(host, 0x11, 4 * kKiB);
  ASSERT_EQ(api().cuMemsetD8(managed + 4 * kKiB, 0x5A, 4 * kKiB), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(host[0], 0x11);
  EXPECT_EQ(host[4 * kKiB - 1], 0x11);
  EXPECT_EQ(host[4 * kKiB], 0x5A);
  EXPECT_EQ(host[8 * kKiB - 1], 0x5A);
  std::vector<unsigned char> copy(8 * kKiB);
  ASSERT_EQ(api().cuMemcpyDtoH(copy.data(), managed, copy.size()), CUDA_SUCCESS);
  EXPECT_EQ(copy[0], 0x11);
  EXPECT_EQ(copy[8 * kKiB - 1], 0x5A);
  int is_managed = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed),
            CUDA_SUCCESS);
  EXPECT_EQ(is_managed, 1);
  EXPECT_EQ(api().cuMemFree(managed), CUDA_SUCCESS);
  CUdeviceptr bad = 0;
  EXPECT_EQ(api().cuMemAllocManaged(&bad, 4 * kKiB, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemAllocManaged(&bad, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(MemoryTest, SynchronousCopiesAndMemsets) {
  constexpr size_t kSize = 256 * kKiB;
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  ASSERT_EQ(api().cuMemAlloc(&a, kSize), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&b, kSize), CUDA_SUCCESS);
  const std::vector<unsigned char> src = Pattern(kSize, 1);
  std::vector<unsigned char> out(kSize, 0);

  // HtoD, DtoD, DtoH.
  ASSERT_EQ(api().cuMemcpyHtoD(a, src.data(), kSize), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoD(b, a, kSize), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(out.data(), b, kSize), CUDA_SUCCESS);
  EXPECT_EQ(out, src);

  // cuMemcpy infers each side's kind from the unified address.
  const std::vector<unsigned char> src2 = Pattern(kSize, 2);
  ASSERT_EQ(api().cuMemcpy(a, reinterpret_cast<CUdeviceptr>(src2.data()), kSize), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpy(b + 4 * kKiB, a, 8 * kKiB), CUDA_SUCCESS);  // device to device
  std::fill(out.begin(), out.end(), 0);
  ASSERT_EQ(api().cuMemcpy(reinterpret_cast<CUdeviceptr>(out.data()), a, kSize), CUDA_SUCCESS);
  EXPECT_EQ(out, src2);
  ASSERT_EQ(api().cuMemcpyDtoH(out.data(), b, kSize), CUDA_SUCCESS);
  std::vector<unsigned char> expect_b = src;
  std::copy(src2.begin(), src2.begin() + 8 * kKiB, expect_b.begin() + 4 * kKiB);
  EXPECT_EQ(out, expect_b);

  // Memsets: 8, 16 and 32 bits, at offsets that keep each element aligned.
  ASSERT_EQ(api().cuMemsetD8(a, 0xAB, 3), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD16(a + 4, 0x1234, 2), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32(a + 8, 0xDEADBEEF, 2), CUDA_SUCCESS);
  unsigned char head[17] = {};
  ASSERT_EQ(api().cuMemcpyDtoH(head, a, sizeof(head)), CUDA_SUCCESS);
  const unsigned char expected_head[17] = {0xAB, 0xAB, 0xAB, src2[3], 0x34,    0x12,
                                           0x34, 0x12, 0xEF, 0xBE,    0xAD,    0xDE,
                                           0xEF, 0xBE, 0xAD, 0xDE,    src2[16]};
  EXPECT_EQ(std::memcmp(head, expected_head, sizeof(head)), 0);

  // Peer copies within one context.
  ASSERT_EQ(api().cuMemcpyPeer(b, ctx(), a, ctx(), 16), CUDA_SUCCESS);
  unsigned char peer[16] = {};
  ASSERT_EQ(api().cuMemcpyDtoH(peer, b, sizeof(peer)), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(peer, expected_head, sizeof(peer)), 0);

  // Zero-byte copies do nothing and succeed.
  EXPECT_EQ(api().cuMemcpyHtoD(a, src.data(), 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(b), CUDA_SUCCESS);
}

TEST_P(MemoryTest, AsynchronousCopiesAndMemsets) {
  constexpr size_t kSize = 128 * kKiB;
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  ASSERT_EQ(api().cuMemAlloc(&a, kSize), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&b, kSize), CUDA_SUCCESS);
  void* in_raw = nullptr;
  void* out_raw = nullptr;
  ASSERT_EQ(api().cuMemAllocHost(&in_raw, kSize), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocHost(&out_raw, kSize), CUDA_SUCCESS);
  auto* in = static_cast<unsigned char*>(in_raw);
  auto* out = static_cast<unsigned char*>(out_raw);
  const std::vector<unsigned char> src = Pattern(kSize, 5);
  std::memcpy(in, src.data(), kSize);
  std::memset(out, 0, kSize);

  // HtoD, DtoD, DtoH on one stream: stream order is all the synchronization they need.
  ASSERT_EQ(api().cuMemcpyHtoDAsync(a, in, kSize, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoDAsync(b, a, kSize, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8Async(b, 0x77, 5, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD16Async(b + 8, 0xBEEF, 3, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32Async(b + 16, 0x01020304, 2, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoHAsync(out, b, kSize, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  std::vector<unsigned char> expected = src;
  const unsigned char edits[24] = {0x77, 0x77, 0x77, 0x77, 0x77, src[5], src[6],  src[7],
                                   0xEF, 0xBE, 0xEF, 0xBE, 0xEF, 0xBE,   src[14], src[15],
                                   0x04, 0x03, 0x02, 0x01, 0x04, 0x03,   0x02,    0x01};
  std::copy(std::begin(edits), std::end(edits), expected.begin());
  EXPECT_EQ(std::memcmp(out, expected.data(), kSize), 0);

  // cuMemcpyAsync with unified addresses, and the peer form.
  std::memset(out, 0, kSize);
  ASSERT_EQ(api().cuMemcpyAsync(a, reinterpret_cast<CUdeviceptr>(in), kSize, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyPeerAsync(b, ctx(), a, ctx(), kSize, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(out), b, kSize, stream),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(out, src.data(), kSize), 0);

  // Asynchronous copies to pageable memory work too (the driver stages them).
  std::vector<unsigned char> pageable(kSize, 0);
  ASSERT_EQ(api().cuMemcpyDtoHAsync(pageable.data(), a, kSize, stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(pageable, src);

  EXPECT_EQ(api().cuMemFreeHost(in), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(out), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(b), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_P(MemoryTest, OutOfBoundsCopiesAndMemsetsAreInvalidValue) {
  constexpr size_t kSize = 64 * kKiB;
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  ASSERT_EQ(api().cuMemAlloc(&a, kSize), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&b, kSize), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  // Host buffers larger than the copies, so that only the device side is out of bounds.
  std::vector<unsigned char> host(4 * kSize, 0x42);
  const size_t over = kSize + 4 * kKiB;
  EXPECT_EQ(api().cuMemcpyHtoD(a, host.data(), over), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpyDtoH(host.data(), a + kSize / 2, kSize), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpyDtoD(b, a, over), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpy(b, a, over), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpyHtoDAsync(a, host.data(), over, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpyDtoHAsync(host.data(), a, over, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemcpyDtoDAsync(b, a, over, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD8(a, 0, over), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD32(a, 0, over / 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD8Async(a, 0, over, stream), CUDA_ERROR_INVALID_VALUE);
  // An address in no allocation at all.
  EXPECT_EQ(api().cuMemcpyHtoD(a + 64 * kGiB, host.data(), 16), CUDA_ERROR_INVALID_VALUE);
  // The failed calls changed nothing and did not poison the context.
  ASSERT_EQ(api().cuStreamSynchronize(stream), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(b), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_P(MemoryTest, MisalignedMemsetsAreInvalidValue) {
  CUdeviceptr a = 0;
  ASSERT_EQ(api().cuMemAlloc(&a, 4 * kKiB), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemsetD16(a + 1, 0, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD32(a + 2, 0, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD16Async(a + 1, 0, 4, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD32Async(a + 2, 0, 4, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemsetD32(a + 4, 0, 4), CUDA_SUCCESS) << "4-byte aligned is fine";
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(a), CUDA_SUCCESS);
}

TEST_P(MemoryTest, PointerAttributesOfDeviceMemory) {
  constexpr size_t kSize = 64 * kKiB;
  CUdeviceptr a = 0;
  ASSERT_EQ(api().cuMemAlloc(&a, kSize), CUDA_SUCCESS);
  const CUdeviceptr inside = a + 1000;
  unsigned type = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, inside),
            CUDA_SUCCESS);
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_DEVICE});
  int ordinal = -1;
  ASSERT_EQ(api().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, inside),
            CUDA_SUCCESS);
  EXPECT_EQ(ordinal, 0);
  CUdeviceptr start = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, inside),
            CUDA_SUCCESS);
  EXPECT_EQ(start, a);
  size_t range = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, inside),
            CUDA_SUCCESS);
  EXPECT_EQ(range, kSize);
  CUcontext owner = nullptr;
  ASSERT_EQ(api().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, inside),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, ctx());
  int managed = -1;
  ASSERT_EQ(api().cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, inside),
            CUDA_SUCCESS);
  EXPECT_EQ(managed, 0);
  CUdeviceptr device_pointer = 0;
  ASSERT_EQ(
      api().cuPointerGetAttribute(&device_pointer, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, inside),
      CUDA_SUCCESS);
  EXPECT_EQ(device_pointer, inside);
  EXPECT_EQ(api().cuPointerGetAttribute(nullptr, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a),
            CUDA_ERROR_INVALID_VALUE);
  // cuMemGetAddressRange agrees.
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_EQ(api().cuMemGetAddressRange(&base, &size, inside), CUDA_SUCCESS);
  EXPECT_EQ(base, a);
  EXPECT_EQ(size, kSize);
  // The plural form.
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                      CU_POINTER_ATTRIBUTE_IS_MANAGED};
  unsigned p_type = 0;
  int p_ordinal = -1;
  int p_managed = -1;
  void* data[] = {&p_type, &p_ordinal, &p_managed};
  ASSERT_EQ(api().cuPointerGetAttributes(3, attributes, data, inside), CUDA_SUCCESS);
  EXPECT_EQ(p_type, unsigned{CU_MEMORYTYPE_DEVICE});
  EXPECT_EQ(p_ordinal, 0);
  EXPECT_EQ(p_managed, 0);
  EXPECT_EQ(api().cuMemFree(a), CUDA_SUCCESS);
}

TEST_P(MemoryTest, PointerAttributesOfHostAndManagedMemory) {
  void* pinned = nullptr;
  ASSERT_EQ(api().cuMemAllocHost(&pinned, 4 * kKiB), CUDA_SUCCESS);
  unsigned type = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        reinterpret_cast<CUdeviceptr>(pinned)),
            CUDA_SUCCESS);
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_HOST});
  void* host_pointer = nullptr;
  ASSERT_EQ(api().cuPointerGetAttribute(&host_pointer, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                        reinterpret_cast<CUdeviceptr>(pinned)),
            CUDA_SUCCESS);
  EXPECT_EQ(host_pointer, pinned);
  EXPECT_EQ(api().cuMemFreeHost(pinned), CUDA_SUCCESS);

  CUdeviceptr managed = 0;
  ASSERT_EQ(api().cuMemAllocManaged(&managed, 4 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(api().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, managed),
            CUDA_SUCCESS);
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_DEVICE});
  int is_managed = 0;
  ASSERT_EQ(api().cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed),
            CUDA_SUCCESS);
  EXPECT_EQ(is_managed, 1);
  EXPECT_EQ(api().cuMemFree(managed), CUDA_SUCCESS);
}

TEST_P(MemoryTest, PointerAttributesOfUnknownPointers) {
  int local = 0;
  const auto unknown = reinterpret_cast<CUdeviceptr>(&local);
  unsigned type = 12345;
  // The singular form fails for memory the driver does not know.
  EXPECT_EQ(api().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, unknown),
            CUDA_ERROR_INVALID_VALUE);
  // The plural form succeeds and reports "not a CUDA allocation".
  CUpointer_attribute attributes[] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
      CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_CONTEXT};
  unsigned p_type = 12345;
  int p_ordinal = 12345;
  int p_managed = 12345;
  CUcontext p_ctx = reinterpret_cast<CUcontext>(0x1);
  void* data[] = {&p_type, &p_ordinal, &p_managed, &p_ctx};
  ASSERT_EQ(api().cuPointerGetAttributes(4, attributes, data, unknown), CUDA_SUCCESS);
  EXPECT_EQ(p_type, 0u);
  EXPECT_EQ(p_ordinal, CU_DEVICE_INVALID);  // -2, measured on the H200
  EXPECT_EQ(p_managed, 0);
  EXPECT_EQ(p_ctx, nullptr);
}

CUHAL_INSTANTIATE_BACKEND_TEST(MemoryTest);

// Filling all of a fake H200's memory: allocations are backed lazily, so the 141 GiB fit on a
// small machine. Fake only: on the real driver the free figure includes memory that cannot be
// taken in practice, and filling a shared GPU is not a test's business.
class FakeMemoryTest : public MemoryTest {};

TEST_P(FakeMemoryTest, WholeDeviceCanBeAllocatedAndThenNothingMore) {
  size_t free = 0;
  size_t total = 0;
  ASSERT_EQ(api().cuMemGetInfo(&free, &total), CUDA_SUCCESS);
  ASSERT_EQ(free, total);
  std::vector<CUdeviceptr> chunks;
  constexpr size_t kChunk = 16 * kGiB;
  size_t left = free;
  while (left > 0) {
    const size_t n = std::min(left, kChunk);
    CUdeviceptr p = 0;
    ASSERT_EQ(api().cuMemAlloc(&p, n), CUDA_SUCCESS) << left << " bytes left";
    chunks.push_back(p);
    left -= n;
  }
  EXPECT_EQ(FreeBytes(), 0u);
  CUdeviceptr one = 0;
  EXPECT_EQ(api().cuMemAlloc(&one, 1), CUDA_ERROR_OUT_OF_MEMORY);
  // Touch a little of the first and last chunk: the memory is real where it is used.
  ASSERT_EQ(api().cuMemsetD8(chunks.front(), 0x1F, 4096), CUDA_SUCCESS);
  ASSERT_EQ(
      api().cuMemsetD8(chunks.back() + (total - (chunks.size() - 1) * kChunk) - 4096, 0x2F, 4096),
      CUDA_SUCCESS);
  unsigned char byte = 0;
  ASSERT_EQ(api().cuMemcpyDtoH(&byte, chunks.front() + 4095, 1), CUDA_SUCCESS);
  EXPECT_EQ(byte, 0x1F);
  for (CUdeviceptr p : chunks) {
    EXPECT_EQ(api().cuMemFree(p), CUDA_SUCCESS);
  }
  EXPECT_EQ(FreeBytes(), total);
  ASSERT_EQ(api().cuMemAlloc(&one, 1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(one), CUDA_SUCCESS);
}

TEST_P(FakeMemoryTest, DevicePointersAreNotHostAddresses) {
  CUdeviceptr a = 0;
  ASSERT_EQ(api().cuMemAlloc(&a, 4 * kKiB), CUDA_SUCCESS);
  // As on real hardware, a device address is outside the host's user address space (47 bits), so
  // dereferencing it on the host faults instead of silently reading fake backing memory.
  EXPECT_GE(a, CUdeviceptr{1} << 47);
  // Passing it where host memory is expected is refused.
  EXPECT_EQ(api().cuMemcpyDtoH(reinterpret_cast<void*>(a), a, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(a), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(FakeMemoryTest);

}  // namespace
}  // namespace cuhal::testing
