// Copyright 2026 The cuhal Authors.
// Memory allocation through the CUDA runtime: device memory (zero bytes, too much, double free,
// freeing a host pointer), pitched memory, pinned host memory (cudaMallocHost, cudaHostAlloc and
// its flags, mapped pointers), registered host memory and its errors, managed memory (prefetch,
// advice, access from a kernel and from the host), pointer attributes of every kind of memory and
// the device's total memory. Addresses are never printed, only relations between them.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void Show(const char* what, cudaError_t error) {
  std::printf("%s: %s\n", what, cudaGetErrorName(error));
}

const char* YesNo(bool b) { return b ? "yes" : "no"; }

__global__ void AddOne(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

void DeviceMemory() {
  void* p = reinterpret_cast<void*>(1);
  Show("cudaMalloc(0 bytes)", cudaMalloc(&p, 0));
  std::printf("zero-byte pointer is null: %s\n", YesNo(p == nullptr));
  Show("cudaFree(nullptr)", cudaFree(nullptr));
  p = reinterpret_cast<void*>(1);
  Show("cudaMalloc(1 PiB)", cudaMalloc(&p, size_t{1} << 50));
  std::printf("failed allocation pointer is null: %s\n", YesNo(p == nullptr));
  Show("cudaGetLastError", cudaGetLastError());
  Show("cudaMalloc(nullptr out)", cudaMalloc(nullptr, 256));
  Show("cudaMalloc(1 MiB)", cudaMalloc(&p, 1 << 20));
  std::printf("aligned to 256 bytes: %s\n", YesNo(reinterpret_cast<uintptr_t>(p) % 256 == 0));
  Show("cudaFree", cudaFree(p));
  Show("cudaFree again", cudaFree(p));
  int on_stack = 0;
  Show("cudaFree(stack pointer)", cudaFree(&on_stack));
  void* heap = std::malloc(4096);
  Show("cudaFree(malloc pointer)", cudaFree(heap));
  std::free(heap);
  Show("cudaGetLastError", cudaGetLastError());
}

void PitchedMemory() {
  const size_t kWidths[] = {1, 100, 512, 513};
  for (size_t width : kWidths) {
    void* p = nullptr;
    size_t pitch = 0;
    cudaError_t error = cudaMallocPitch(&p, &pitch, width, 16);
    std::printf("cudaMallocPitch(width %zu, height 16): %s, pitch %zu\n", width,
                cudaGetErrorName(error), pitch);
    cudaFree(p);
  }
  void* p = nullptr;
  size_t pitch = 7;
  cudaError_t error = cudaMallocPitch(&p, &pitch, 0, 16);
  std::printf("cudaMallocPitch(width 0): %s, pitch %zu\n", cudaGetErrorName(error), pitch);
  cudaFree(p);
  Show("cudaMallocPitch(nullptr pitch)", cudaMallocPitch(&p, nullptr, 64, 4));
}

void PinnedMemory() {
  void* h = nullptr;
  Show("cudaMallocHost(4096)", cudaMallocHost(&h, 4096));
  std::memset(h, 7, 4096);
  unsigned flags = 0xdead;
  Show("cudaHostGetFlags(cudaMallocHost)", cudaHostGetFlags(&flags, h));
  std::printf("flags 0x%x\n", flags);
  Show("cudaFree(pinned pointer)", cudaFree(h));
  Show("cudaFreeHost", cudaFreeHost(h));
  void* d = nullptr;
  cudaMalloc(&d, 256);
  Show("cudaFreeHost(device pointer)", cudaFreeHost(d));
  cudaFree(d);
  Show("cudaFreeHost(nullptr)", cudaFreeHost(nullptr));

  struct {
    const char* name;
    unsigned flags;
  } const kFlags[] = {
      {"Default", cudaHostAllocDefault},
      {"Portable", cudaHostAllocPortable},
      {"Mapped", cudaHostAllocMapped},
      {"WriteCombined", cudaHostAllocWriteCombined},
      {"Portable|Mapped", cudaHostAllocPortable | cudaHostAllocMapped},
  };
  for (const auto& f : kFlags) {
    h = nullptr;
    cudaError_t error = cudaHostAlloc(&h, 8192, f.flags);
    flags = 0xdead;
    cudaError_t get = cudaHostGetFlags(&flags, h);
    void* dev = nullptr;
    cudaError_t map = cudaHostGetDevicePointer(&dev, h, 0);
    std::printf("cudaHostAlloc(%s): %s; flags %s 0x%x; device pointer %s, same as host %s\n",
                f.name, cudaGetErrorName(error), cudaGetErrorName(get), flags,
                cudaGetErrorName(map), YesNo(dev == h));
    cudaFreeHost(h);
  }
  Show("cudaHostAlloc(flags 0x100)", cudaHostAlloc(&h, 4096, 0x100));
  Show("cudaHostAlloc(0 bytes)", cudaHostAlloc(&h, 0, 0));
  void* heap = std::malloc(64);
  Show("cudaHostGetFlags(malloc pointer)", cudaHostGetFlags(&flags, heap));
  void* dev = nullptr;
  Show("cudaHostGetDevicePointer(malloc pointer)", cudaHostGetDevicePointer(&dev, heap, 0));
  std::free(heap);
  Show("cudaGetLastError", cudaGetLastError());
}

void RegisteredMemory() {
  const size_t kBytes = 1 << 16;
  void* h = std::aligned_alloc(4096, kBytes);
  std::memset(h, 3, kBytes);
  Show("cudaHostRegister(Default)", cudaHostRegister(h, kBytes, cudaHostRegisterDefault));
  unsigned flags = 0xdead;
  Show("cudaHostGetFlags(registered)", cudaHostGetFlags(&flags, h));
  std::printf("flags 0x%x\n", flags);
  void* dev = nullptr;
  Show("cudaHostGetDevicePointer(registered)", cudaHostGetDevicePointer(&dev, h, 0));
  std::printf("device pointer same as host: %s\n", YesNo(dev == h));
  Show("cudaHostRegister again", cudaHostRegister(h, kBytes, cudaHostRegisterDefault));
  Show("cudaHostRegister(overlapping half)",
       cudaHostRegister(static_cast<char*>(h) + kBytes / 2, kBytes / 2, 0));
  Show("cudaHostUnregister", cudaHostUnregister(h));
  Show("cudaHostUnregister again", cudaHostUnregister(h));
  Show("cudaHostRegister(Mapped|Portable)",
       cudaHostRegister(h, kBytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
  Show("cudaHostGetFlags", cudaHostGetFlags(&flags, h));
  std::printf("flags 0x%x\n", flags);
  Show("cudaHostUnregister", cudaHostUnregister(h));
  Show("cudaHostRegister(ReadOnly)", cudaHostRegister(h, kBytes, cudaHostRegisterReadOnly));
  Show("cudaHostUnregister", cudaHostUnregister(h));
  Show("cudaHostRegister(0 bytes)", cudaHostRegister(h, 0, 0));
  Show("cudaHostRegister(nullptr)", cudaHostRegister(nullptr, kBytes, 0));
  Show("cudaHostRegister(flags 0x100)", cudaHostRegister(h, kBytes, 0x100));
  Show("cudaHostUnregister(never registered)", cudaHostUnregister(h));
  Show("cudaGetLastError", cudaGetLastError());
  std::free(h);
}

void ManagedMemory() {
  const int kCount = 4096;
  int* m = nullptr;
  Show("cudaMallocManaged", cudaMallocManaged(&m, kCount * sizeof(int)));
  for (int i = 0; i < kCount; ++i) m[i] = i;
  cudaMemLocation device{cudaMemLocationTypeDevice, 0};
  cudaMemLocation host{cudaMemLocationTypeHost, 0};
  Show("cudaMemAdvise(SetPreferredLocation device)",
       cudaMemAdvise(m, kCount * sizeof(int), cudaMemAdviseSetPreferredLocation, device));
  Show("cudaMemAdvise(SetAccessedBy device)",
       cudaMemAdvise(m, kCount * sizeof(int), cudaMemAdviseSetAccessedBy, device));
  int preferred = -99;
  Show("cudaMemRangeGetAttribute(PreferredLocation)",
       cudaMemRangeGetAttribute(&preferred, sizeof(preferred),
                                cudaMemRangeAttributePreferredLocation, m, kCount * sizeof(int)));
  std::printf("preferred location %d\n", preferred);
  Show("cudaMemPrefetchAsync(device)", cudaMemPrefetchAsync(m, kCount * sizeof(int), device, 0, 0));
  AddOne<<<kCount / 256, 256>>>(m, kCount);
  Show("kernel launch", cudaGetLastError());
  Show("cudaDeviceSynchronize", cudaDeviceSynchronize());
  Show("cudaMemPrefetchAsync(host)", cudaMemPrefetchAsync(m, kCount * sizeof(int), host, 0, 0));
  Show("cudaDeviceSynchronize", cudaDeviceSynchronize());
  long long sum = 0;
  bool right = true;
  for (int i = 0; i < kCount; ++i) {
    sum += m[i];
    right = right && m[i] == i + 1;
  }
  std::printf("managed data after the kernel: sum %lld, every element right %s\n", sum,
              YesNo(right));
  Show("cudaMemAdvise(advice 99)",
       cudaMemAdvise(m, kCount * sizeof(int), static_cast<cudaMemoryAdvise>(99), device));
  Show("cudaMemPrefetchAsync(device 99)",
       cudaMemPrefetchAsync(m, kCount * sizeof(int), {cudaMemLocationTypeDevice, 99}, 0, 0));
  Show("cudaFree(managed)", cudaFree(m));
  Show("cudaMallocManaged(0 bytes)", cudaMallocManaged(&m, 0));
  Show("cudaMallocManaged(flags 0x10)", cudaMallocManaged(&m, 256, 0x10));
  Show("cudaMallocManaged(AttachHost)", cudaMallocManaged(&m, 256, cudaMemAttachHost));
  cudaFree(m);
  Show("cudaGetLastError", cudaGetLastError());
}

void PrintAttributes(const char* what, const void* p, const void* host_view) {
  cudaPointerAttributes a;
  std::memset(&a, 0x5a, sizeof(a));
  cudaError_t error = cudaPointerGetAttributes(&a, p);
  std::printf("attributes of %s: %s; type %d, device %d, devicePointer %s, hostPointer %s\n", what,
              cudaGetErrorName(error), static_cast<int>(a.type), a.device,
              a.devicePointer == nullptr ? "null"
              : a.devicePointer == p     ? "same"
                                         : "other",
              a.hostPointer == nullptr     ? "null"
              : a.hostPointer == host_view ? "same"
                                           : "other");
}

void PointerAttributes() {
  void* d = nullptr;
  cudaMalloc(&d, 4096);
  PrintAttributes("device memory", d, nullptr);
  PrintAttributes("device memory + 100", static_cast<char*>(d) + 100, nullptr);
  void* pinned = nullptr;
  cudaMallocHost(&pinned, 4096);
  PrintAttributes("cudaMallocHost memory", pinned, pinned);
  void* mapped = nullptr;
  cudaHostAlloc(&mapped, 4096, cudaHostAllocMapped);
  PrintAttributes("cudaHostAlloc(Mapped) memory", mapped, mapped);
  void* managed = nullptr;
  cudaMallocManaged(&managed, 4096);
  PrintAttributes("managed memory", managed, managed);
  void* registered = std::aligned_alloc(4096, 8192);
  cudaHostRegister(registered, 8192, 0);
  PrintAttributes("registered memory", registered, registered);
  cudaHostUnregister(registered);
  PrintAttributes("unregistered malloc memory", registered, registered);
  int on_stack = 0;
  PrintAttributes("a stack variable", &on_stack, &on_stack);
  PrintAttributes("nullptr", nullptr, nullptr);
  cudaFree(d);
  PrintAttributes("freed device memory", d, nullptr);
  Show("cudaPointerGetAttributes(nullptr out)", cudaPointerGetAttributes(nullptr, pinned));
  std::free(registered);
  cudaFreeHost(pinned);
  cudaFreeHost(mapped);
  cudaFree(managed);
  Show("cudaGetLastError", cudaGetLastError());
}

void MemoryInfo() {
  size_t free_bytes = 0;
  size_t total = 0;
  Show("cudaMemGetInfo", cudaMemGetInfo(&free_bytes, &total));
  std::printf("total %zu, free at most total %s\n", total, YesNo(free_bytes <= total));
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("total equals totalGlobalMem %s\n", YesNo(total == p.totalGlobalMem));
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  DeviceMemory();
  PitchedMemory();
  PinnedMemory();
  RegisteredMemory();
  ManagedMemory();
  PointerAttributes();
  MemoryInfo();
  return 0;
}
