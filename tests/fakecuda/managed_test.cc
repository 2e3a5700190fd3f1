// Copyright 2026 The cuhal Authors.
// Conformance: pointer attributes of managed, device, pinned and pool memory, and the managed
// range attributes (cuMemAdvise, cuMemPrefetchAsync, cuMemRangeGetAttribute[s]).
//
// Every expectation here was measured 2026-12-06, H100 driver 580.159.04, managed_probe
// (ci/gpu-probes/managed_probe.cc; raw output ci/gpu-probes/results/2026-12-06-h100-managed.real.txt),
// the same driver branch as the project's H200. They are what NVIDIA's cuda-python tests
// test_cuda_pointer_attr and test_cuda_mem_range_attr check; each failed on the fake before it
// was corrected to agree.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

// Entry points the CudaApi table does not carry, found through cuGetProcAddress.
struct RangeApi {
  CUresult (*PointerSetAttribute)(const void*, CUpointer_attribute, CUdeviceptr) = nullptr;
  CUresult (*MemRangeGetAttribute)(void*, size_t, CUmem_range_attribute, CUdeviceptr,
                                   size_t) = nullptr;
  CUresult (*MemRangeGetAttributes)(void**, size_t*, CUmem_range_attribute*, size_t,
                                    CUdeviceptr, size_t) = nullptr;
};

class ManagedTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NE(api().cuGetProcAddress, nullptr);
    Get("cuPointerSetAttribute", &range_.PointerSetAttribute);
    Get("cuMemRangeGetAttribute", &range_.MemRangeGetAttribute);
    Get("cuMemRangeGetAttributes", &range_.MemRangeGetAttributes);
  }

  template <typename Fn>
  void Get(const char* name, Fn* fn) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    ASSERT_EQ(api().cuGetProcAddress(name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                                     &status),
              CUDA_SUCCESS)
        << name;
    ASSERT_NE(p, nullptr) << name;
    *fn = reinterpret_cast<Fn>(p);
  }

  // cuMemRangeGetAttribute into `n` ints preset to 55; the result code in *r.
  std::vector<int> Range(CUmem_range_attribute attr, size_t n, CUdeviceptr p, size_t count,
                         CUresult* r) {
    std::vector<int> v(4, 55);
    *r = range_.MemRangeGetAttribute(v.data(), n * sizeof(int), attr, p, count);
    return v;
  }
  std::vector<int> Range(CUmem_range_attribute attr, size_t n, CUdeviceptr p, size_t count) {
    CUresult r = CUDA_ERROR_UNKNOWN;
    std::vector<int> v = Range(attr, n, p, count, &r);
    EXPECT_EQ(r, CUDA_SUCCESS) << "attribute " << attr;
    return v;
  }

  RangeApi range_;
};

// The attributes every kind answers the same way; `gpu_direct`: cuMemAlloc memory only.
void ExpectCommonAttributes(const cuhal::CudaApi& api, CUdeviceptr p, bool device_alloc,
                            size_t mapping_size, const char* kind) {
  SCOPED_TRACE(kind);
  unsigned long long handle_types = 77;
  EXPECT_EQ(api.cuPointerGetAttribute(&handle_types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p),
            CUDA_SUCCESS);
  EXPECT_EQ(handle_types, 0u);
  int rdma = 77;
  EXPECT_EQ(api.cuPointerGetAttribute(&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p),
            CUDA_SUCCESS);
  EXPECT_EQ(rdma, device_alloc ? 1 : 0);
  int decompress = 77;
  EXPECT_EQ(api.cuPointerGetAttribute(&decompress, CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE,
                                      p),
            CUDA_SUCCESS);
  EXPECT_EQ(decompress, device_alloc ? 1 : 0);
  size_t mapping = 0;
  EXPECT_EQ(api.cuPointerGetAttribute(&mapping, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p + 100),
            CUDA_SUCCESS);
  EXPECT_EQ(mapping, mapping_size);
  CUdeviceptr mapping_base = 0;
  EXPECT_EQ(api.cuPointerGetAttribute(&mapping_base, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR,
                                      p + 100),
            CUDA_SUCCESS);
  EXPECT_EQ(mapping_base, p);
  unsigned long long block = 0;
  EXPECT_EQ(api.cuPointerGetAttribute(&block, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, p),
            CUDA_SUCCESS);
  EXPECT_NE(block, 0u);
}

TEST_P(ManagedTest, PointerAttributesOfEveryKindOfMemory) {
  CUdeviceptr managed = 0;
  CUdeviceptr device = 0;
  CUdeviceptr pool = 0;
  void* pinned = nullptr;
  ASSERT_EQ(api().cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&device, 4096), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocHost(&pinned, 4096), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAllocAsync(&pool, 4096, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  const auto host = reinterpret_cast<CUdeviceptr>(pinned);
  constexpr size_t k2MiB = size_t{2} << 20;

  ExpectCommonAttributes(api(), managed, false, k2MiB, "managed");
  ExpectCommonAttributes(api(), device, true, k2MiB, "device");
  ExpectCommonAttributes(api(), host, false, k2MiB, "pinned");
  ExpectCommonAttributes(api(), pool, false, size_t{32} << 20, "pool");

  // P2P tokens: device, managed and pool memory answer; pinned memory has the buffer written,
  // then refused.
  for (CUdeviceptr p : {managed, managed + 100, device, pool}) {
    CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens{};
    EXPECT_EQ(api().cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS, p),
              CUDA_SUCCESS);
  }
  unsigned char buf[16];
  std::memset(buf, 0xAB, sizeof(buf));
  EXPECT_EQ(api().cuPointerGetAttribute(buf, CU_POINTER_ATTRIBUTE_P2P_TOKENS, host),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(buf[0], 0xAB) << "written before the refusal";

  // SYNC_MEMOPS: 1 on device, managed and pool memory, 0 on pinned memory; settable on all.
  for (auto [p, initial] : {std::pair{managed, 1u}, std::pair{device, 1u}, std::pair{host, 0u},
                            std::pair{pool, 1u}}) {
    unsigned v = 77;
    EXPECT_EQ(api().cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p), CUDA_SUCCESS);
    EXPECT_EQ(v, initial);
    for (unsigned set : {1u, 0u}) {
      EXPECT_EQ(range_.PointerSetAttribute(&set, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p),
                CUDA_SUCCESS);
      v = 77;
      EXPECT_EQ(api().cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p),
                CUDA_SUCCESS);
      EXPECT_EQ(v, set);
    }
  }

  EXPECT_EQ(api().cuMemFree(managed), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(device), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFreeHost(pinned), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(pool), CUDA_SUCCESS);
}

// cuda-python's test_cuda_pointer_attr: the list form with every attribute up to
// MEMPOOL_HANDLE but P2P_TOKENS succeeds, and agrees with the singular form.
TEST_P(ManagedTest, PointerGetAttributesListAgreesWithSingularForm) {
  CUdeviceptr managed = 0;
  CUdeviceptr device = 0;
  ASSERT_EQ(api().cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&device, 4096), CUDA_SUCCESS);
  std::vector<CUpointer_attribute> list;
  for (int a = CU_POINTER_ATTRIBUTE_CONTEXT; a <= CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE; ++a) {
    if (a != CU_POINTER_ATTRIBUTE_P2P_TOKENS) list.push_back(static_cast<CUpointer_attribute>(a));
  }
  for (CUdeviceptr p : {managed, managed + 100, device}) {
    std::vector<unsigned long long> values(list.size(), 0);
    std::vector<void*> data;
    for (auto& v : values) data.push_back(&v);
    ASSERT_EQ(api().cuPointerGetAttributes(static_cast<unsigned>(list.size()), list.data(),
                                           data.data(), p),
              CUDA_SUCCESS);
    for (size_t i = 0; i < list.size(); ++i) {
      unsigned long long single = 0;
      CUresult r = api().cuPointerGetAttribute(&single, list[i], p);
      if (list[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER && p == device) {
        // Refused by the singular form; NULL in the list.
        EXPECT_EQ(r, CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ(values[i], 0u);
        continue;
      }
      EXPECT_EQ(r, CUDA_SUCCESS) << "attribute " << list[i];
      EXPECT_EQ(values[i], single) << "attribute " << list[i];
    }
  }
  EXPECT_EQ(api().cuMemFree(managed), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(device), CUDA_SUCCESS);
}

// cuda-python's test_cuda_mem_range_attr, then prefetches and unset advice.
TEST_P(ManagedTest, RangeAttributesFollowAdviceAndPrefetch) {
  int concurrent = 0;
  ASSERT_EQ(api().cuDeviceGetAttribute(&concurrent,
                                       CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0),
            CUDA_SUCCESS);
  ASSERT_EQ(concurrent, 1);
  CUdeviceptr p = 0;
  ASSERT_EQ(api().cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  using V = std::vector<int>;
  // Fresh: no advice, no prefetch.
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, 1, p, 4096), (V{0, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, 1, p, 4096), (V{-2, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, 3, p, 4096), (V{-2, -2, -2, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, 1, p, 4096),
            (V{-2, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, 1, p, 4096),
            (V{0, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, 1, p, 4096),
            (V{-2, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, 1, p, 4096),
            (V{0, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, 1, p, 4096),
            (V{-2, 55, 55, 55}));

  const CUmemLocation on_device{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  const CUmemLocation on_cpu{CU_MEM_LOCATION_TYPE_HOST, CU_DEVICE_CPU};
  ASSERT_EQ(api().cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, on_device), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, on_cpu),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, on_cpu), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, on_device), CUDA_SUCCESS);
  for (size_t count : {size_t{4096}, size_t{2048}}) {
    SCOPED_TRACE(count);
    EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, 1, p, count), (V{1, 55, 55, 55}));
    EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, 1, p, count),
              (V{-1, 55, 55, 55}));
    // The device before the CPU, whatever the order of the advice.
    EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, 3, p, count), (V{0, -1, -2, 55}));
    EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, 1, p, count),
              (V{-2, 55, 55, 55}));
    EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, 1, p, count),
              (V{2, 55, 55, 55}));
    EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, 1, p, count),
              (V{-1, 55, 55, 55}));
  }

  ASSERT_EQ(api().cuMemPrefetchAsync(p, 4096, on_device, 0, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, 1, p, 4096), (V{0, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, 1, p, 4096),
            (V{1, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, 1, p, 4096),
            (V{0, 55, 55, 55}));
  ASSERT_EQ(api().cuMemPrefetchAsync(p, 4096, on_cpu, 0, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, 1, p, 4096),
            (V{-1, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, 1, p, 4096),
            (V{2, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, 1, p, 4096),
            (V{-1, 55, 55, 55}));

  ASSERT_EQ(api().cuMemAdvise(p, 4096, CU_MEM_ADVISE_UNSET_READ_MOSTLY, on_device), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAdvise(p, 4096, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, on_device),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAdvise(p, 4096, CU_MEM_ADVISE_UNSET_ACCESSED_BY, on_cpu), CUDA_SUCCESS);
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, 1, p, 4096), (V{0, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, 1, p, 4096), (V{-2, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, 3, p, 4096), (V{0, -2, -2, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, 1, p, 4096),
            (V{0, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, 1, p, 4096),
            (V{-2, 55, 55, 55}));
  EXPECT_EQ(Range(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, 1, p, 4096),
            (V{-1, 55, 55, 55}))
      << "unsetting advice leaves the last prefetch";

  // The list form, as cuda-python calls it.
  int a[1] = {55};
  int b[1] = {55};
  int c[3] = {55, 55, 55};
  int d[1] = {55};
  void* data[4] = {a, b, c, d};
  size_t sizes[4] = {4, 4, 12, 4};
  CUmem_range_attribute attrs[4] = {
      CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
      CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
  ASSERT_EQ(range_.MemRangeGetAttributes(data, sizes, attrs, 4, p, 4096), CUDA_SUCCESS);
  EXPECT_EQ(a[0], 0);
  EXPECT_EQ(b[0], -2);
  EXPECT_EQ((V{c[0], c[1], c[2]}), (V{0, -2, -2}));
  EXPECT_EQ(d[0], -1);
  EXPECT_EQ(api().cuMemFree(p), CUDA_SUCCESS);
}

TEST_P(ManagedTest, RangeAttributeArgumentErrors) {
  CUdeviceptr p = 0;
  CUdeviceptr device = 0;
  ASSERT_EQ(api().cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemAlloc(&device, 4096), CUDA_SUCCESS);
  int v[4] = {55, 55, 55, 55};
  auto get = [&](size_t bytes, int attr, CUdeviceptr ptr, size_t count) {
    return range_.MemRangeGetAttribute(v, bytes, static_cast<CUmem_range_attribute>(attr), ptr,
                                       count);
  };
  EXPECT_EQ(get(8, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get(2, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get(6, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get(16, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, 4096), CUDA_SUCCESS);
  EXPECT_EQ(get(4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get(4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 8192), CUDA_ERROR_INVALID_VALUE)
      << "past the end";
  EXPECT_EQ(get(4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, device, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(range_.MemRangeGetAttribute(nullptr, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 4096),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get(4, 99, p, 4096), CUDA_ERROR_INVALID_VALUE);
  const CUmemLocation on_device{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  EXPECT_EQ(api().cuMemAdvise(device, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, on_device),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(device), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(ManagedTest);

}  // namespace
}  // namespace cuhal::testing
