// Copyright 2026 The cuhal Authors.
// Probe: pointer attributes of every kind of memory, and the managed-memory range attributes
// (cuMemAdvise, cuMemPrefetchAsync, cuMemRangeGetAttribute[s]). One process; every line is
// "<case>: <what> = <result>", CUresults by name, no raw addresses (pointers are printed as
// relations: "ptr", "ptr+N", "null", "other"). Run on the real driver and on the drop-in
// (LD_LIBRARY_PATH) and diff. Accepts and ignores the areas.sh arguments ("all 8").
//   g++ -std=c++17 -I/usr/local/cuda/include managed_probe.cc -o managed_probe -lcuda
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char* Name(CUresult r) {
  const char* n = nullptr;
  if (cuGetErrorName(r, &n) != CUDA_SUCCESS || n == nullptr) return "?";
  return n;
}

std::string Rel(std::uint64_t v, std::uint64_t base) {
  if (v == 0) return "null";
  if (v == base) return "ptr";
  if (v > base && v - base < (1u << 30)) return "ptr+" + std::to_string(v - base);
  if (v < base && base - v < (1u << 30)) return "ptr-" + std::to_string(base - v);
  return "other";
}

const char* kAttrNames[] = {"?", "CONTEXT", "MEMORY_TYPE", "DEVICE_POINTER", "HOST_POINTER",
                            "P2P_TOKENS", "SYNC_MEMOPS", "BUFFER_ID", "IS_MANAGED",
                            "DEVICE_ORDINAL", "IS_LEGACY_CUDA_IPC_CAPABLE", "RANGE_START_ADDR",
                            "RANGE_SIZE", "MAPPED", "ALLOWED_HANDLE_TYPES",
                            "IS_GPU_DIRECT_RDMA_CAPABLE", "ACCESS_FLAGS", "MEMPOOL_HANDLE",
                            "MAPPING_SIZE", "MAPPING_BASE_ADDR", "MEMORY_BLOCK_ID",
                            "IS_HW_DECOMPRESS_CAPABLE"};

// The value of attribute `a` (its size as cuda.h documents it) as text.
std::string Value(int a, const unsigned char* buf, std::uint64_t ptr, CUcontext ctx) {
  std::uint64_t u64 = 0;
  unsigned u32 = 0;
  std::memcpy(&u64, buf, 8);
  std::memcpy(&u32, buf, 4);
  switch (a) {
    case 1: return u64 == reinterpret_cast<std::uintptr_t>(ctx) ? "current ctx" : (u64 ? "other ctx" : "null");
    case 3: case 4: case 11: case 19: return Rel(u64, ptr);
    case 5: return "(tokens)";
    case 7: case 20: return u64 ? "nonzero id" : "0";
    case 17: return u64 ? "a pool" : "null";
    case 12: case 18: return std::to_string(u64);
    default: return std::to_string(u32);
  }
}

void Attributes(const char* kind, CUdeviceptr p, CUcontext ctx) {
  for (int a = 1; a <= 21; ++a) {
    unsigned char buf[64];
    std::memset(buf, 0xAB, sizeof(buf));
    CUresult r = cuPointerGetAttribute(buf, static_cast<CUpointer_attribute>(a), p);
    std::printf("ptr:%s: %s = %s%s%s\n", kind, kAttrNames[a], Name(r),
                r == CUDA_SUCCESS ? ", " : (buf[0] == 0xAB ? ", untouched" : ", written"),
                r == CUDA_SUCCESS ? Value(a, buf, p, ctx).c_str() : "");
  }
  // The list form with cuda-python's list (every attribute but P2P_TOKENS, up to 17).
  std::vector<CUpointer_attribute> list;
  for (int a = 1; a <= 17; ++a) if (a != 5) list.push_back(static_cast<CUpointer_attribute>(a));
  std::vector<std::vector<unsigned char>> bufs(list.size(), std::vector<unsigned char>(64, 0xAB));
  std::vector<void*> data;
  for (auto& b : bufs) data.push_back(b.data());
  CUresult r = cuPointerGetAttributes(static_cast<unsigned>(list.size()), list.data(), data.data(), p);
  std::printf("ptr:%s: cuPointerGetAttributes(16 attributes) = %s\n", kind, Name(r));
  if (r == CUDA_SUCCESS) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::printf("ptr:%s: list %s = %s\n", kind, kAttrNames[list[i]],
                  Value(list[i], bufs[i].data(), p, ctx).c_str());
    }
  }
  for (int v : {1, 0}) {
    unsigned int value = static_cast<unsigned>(v);
    r = cuPointerSetAttribute(&value, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
    unsigned int back = 77;
    CUresult g = cuPointerGetAttribute(&back, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
    std::printf("ptr:%s: SetAttribute(SYNC_MEMOPS, %d) = %s; get = %s, %u\n", kind, v, Name(r),
                Name(g), back);
  }
}

std::string Ints(const int* v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

void RangeQueries(const char* when, CUdeviceptr p, std::size_t size) {
  struct Q { int attr; const char* name; std::size_t bytes; };
  const Q qs[] = {{1, "READ_MOSTLY", 4}, {2, "PREFERRED_LOCATION", 4}, {3, "ACCESSED_BY", 12},
                  {4, "LAST_PREFETCH_LOCATION", 4}, {5, "PREFERRED_LOCATION_TYPE", 4},
                  {6, "PREFERRED_LOCATION_ID", 4}, {7, "LAST_PREFETCH_LOCATION_TYPE", 4},
                  {8, "LAST_PREFETCH_LOCATION_ID", 4}};
  for (const Q& q : qs) {
    int v[4] = {55, 55, 55, 55};
    CUresult r = cuMemRangeGetAttribute(v, q.bytes, static_cast<CUmem_range_attribute>(q.attr), p, size);
    std::printf("range:%s: %s (%zu bytes) = %s, [%s]\n", when, q.name, q.bytes, Name(r),
                Ints(v, 4).c_str());
  }
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CUresult r = cuInit(0);
  if (r != CUDA_SUCCESS) { std::printf("init: cuInit = %s\n", Name(r)); return 1; }
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  int concurrent = -1;
  cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev);
  std::printf("device: CONCURRENT_MANAGED_ACCESS = %d\n", concurrent);

  CUdeviceptr managed = 0, device = 0, pool = 0;
  void* pinned = nullptr;
  std::printf("alloc: cuMemAllocManaged(4096, GLOBAL) = %s\n",
              Name(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL)));
  std::printf("alloc: cuMemAlloc(4096) = %s\n", Name(cuMemAlloc(&device, 4096)));
  std::printf("alloc: cuMemAllocHost(4096) = %s\n", Name(cuMemAllocHost(&pinned, 4096)));
  std::printf("alloc: cuMemAllocAsync(4096) = %s\n", Name(cuMemAllocAsync(&pool, 4096, nullptr)));
  cuCtxSynchronize();
  Attributes("managed", managed, ctx);
  Attributes("managed+100", managed + 100, ctx);
  Attributes("device", device, ctx);
  Attributes("pinned", reinterpret_cast<CUdeviceptr>(pinned), ctx);
  Attributes("pool", pool, ctx);

  // cuda-python's test_cuda_mem_range_attr, then more.
  RangeQueries("fresh", managed, 4096);
  CUmemLocation on_device{CU_MEM_LOCATION_TYPE_DEVICE, static_cast<int>(dev)};
  CUmemLocation on_cpu{CU_MEM_LOCATION_TYPE_HOST, CU_DEVICE_CPU};
  std::printf("advise: SET_READ_MOSTLY(device) = %s\n",
              Name(cuMemAdvise(managed, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, on_device)));
  std::printf("advise: SET_PREFERRED_LOCATION(cpu) = %s\n",
              Name(cuMemAdvise(managed, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, on_cpu)));
  std::printf("advise: SET_ACCESSED_BY(cpu) = %s\n",
              Name(cuMemAdvise(managed, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, on_cpu)));
  std::printf("advise: SET_ACCESSED_BY(device) = %s\n",
              Name(cuMemAdvise(managed, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, on_device)));
  RangeQueries("advised", managed, 4096);
  RangeQueries("advised, first half", managed, 2048);
  std::printf("prefetch: to device = %s\n", Name(cuMemPrefetchAsync(managed, 4096, on_device, 0, nullptr)));
  cuCtxSynchronize();
  RangeQueries("prefetched to device", managed, 4096);
  std::printf("prefetch: to cpu = %s\n", Name(cuMemPrefetchAsync(managed, 4096, on_cpu, 0, nullptr)));
  cuCtxSynchronize();
  RangeQueries("prefetched to cpu", managed, 4096);
  std::printf("advise: UNSET_READ_MOSTLY = %s\n",
              Name(cuMemAdvise(managed, 4096, CU_MEM_ADVISE_UNSET_READ_MOSTLY, on_device)));
  std::printf("advise: UNSET_PREFERRED_LOCATION = %s\n",
              Name(cuMemAdvise(managed, 4096, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, on_device)));
  std::printf("advise: UNSET_ACCESSED_BY(cpu) = %s\n",
              Name(cuMemAdvise(managed, 4096, CU_MEM_ADVISE_UNSET_ACCESSED_BY, on_cpu)));
  RangeQueries("unset", managed, 4096);

  // The list form, as cuda-python calls it.
  {
    int a[1] = {55}, b[1] = {55}, c[3] = {55, 55, 55}, d[1] = {55};
    void* data[4] = {a, b, c, d};
    size_t sizes[4] = {4, 4, 12, 4};
    CUmem_range_attribute attrs[4] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                                      CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
                                      CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                                      CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
    r = cuMemRangeGetAttributes(data, sizes, attrs, 4, managed, 4096);
    std::printf("range list: cuMemRangeGetAttributes = %s, [%d] [%d] [%s] [%d]\n", Name(r), a[0],
                b[0], Ints(c, 3).c_str(), d[0]);
  }
  // Argument errors.
  {
    int v[4] = {55, 55, 55, 55};
    std::printf("range err: READ_MOSTLY 8 bytes = %s\n",
                Name(cuMemRangeGetAttribute(v, 8, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, 4096)));
    std::printf("range err: READ_MOSTLY 2 bytes = %s\n",
                Name(cuMemRangeGetAttribute(v, 2, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, 4096)));
    std::printf("range err: ACCESSED_BY 6 bytes = %s\n",
                Name(cuMemRangeGetAttribute(v, 6, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, managed, 4096)));
    std::printf("range err: ACCESSED_BY 16 bytes = %s, [%s]\n",
                Name(cuMemRangeGetAttribute(v, 16, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, managed, 4096)),
                Ints(v, 4).c_str());
    std::printf("range err: count 0 = %s\n",
                Name(cuMemRangeGetAttribute(v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, 0)));
    std::printf("range err: past the end = %s\n",
                Name(cuMemRangeGetAttribute(v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, 8192)));
    std::printf("range err: device memory = %s\n",
                Name(cuMemRangeGetAttribute(v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, device, 4096)));
    std::printf("range err: null data = %s\n",
                Name(cuMemRangeGetAttribute(nullptr, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, 4096)));
    std::printf("range err: attribute 99 = %s\n",
                Name(cuMemRangeGetAttribute(v, 4, static_cast<CUmem_range_attribute>(99), managed, 4096)));
    std::printf("advise err: device memory = %s\n",
                Name(cuMemAdvise(device, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, on_device)));
  }
  cuMemFree(managed);
  cuMemFree(device);
  cuMemFreeHost(pinned);
  cuMemFree(pool);
  std::printf("== managed: exit 0\n");
  return 0;
}
