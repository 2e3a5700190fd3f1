// Copyright 2026 The cuhal Authors.
// An unmodified CUDA runtime program (issue 17), built by nvcc at test time (cudart_test.sh) and
// run on the drop-in libcuda.so.1: device count and properties, allocation, a copy round trip
// through two device buffers, memset, a kernel launch (`<<<>>>`: the fake's interpreter runs the
// PTX of the program's fat binary) and free, on every device. Prints one line per check and
// "cudart program: OK" at the end, or "FAILED: <what>" and exits 1.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

__global__ void AddIndex(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += i;
}

namespace {

bool Check(cudaError_t e, const char* what) {
  std::printf("%s -> %s\n", what, cudaGetErrorName(e));
  if (e != cudaSuccess) {
    std::printf("FAILED: %s\n", what);
    return false;
  }
  return true;
}

bool RoundTrip(int device) {
  constexpr int kCount = 4096;
  static int host_in[kCount];
  static int host_out[kCount];
  for (int i = 0; i < kCount; ++i) host_in[i] = i * 7 + device;
  if (!Check(cudaSetDevice(device), "cudaSetDevice")) return false;
  cudaDeviceProp prop{};
  if (!Check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties")) return false;
  std::printf("device %d: %s, compute capability %d.%d, %d SMs\n", device, prop.name, prop.major,
              prop.minor, prop.multiProcessorCount);
  int* a = nullptr;
  int* b = nullptr;
  if (!Check(cudaMalloc(&a, sizeof(host_in)), "cudaMalloc a")) return false;
  if (!Check(cudaMalloc(&b, sizeof(host_in)), "cudaMalloc b")) return false;
  if (a == nullptr || b == nullptr || a == b) {
    std::printf("FAILED: cudaMalloc gave %p and %p\n", static_cast<void*>(a),
                static_cast<void*>(b));
    return false;
  }
  if (!Check(cudaMemcpy(a, host_in, sizeof(host_in), cudaMemcpyHostToDevice),
             "cudaMemcpy HtoD") ||
      !Check(cudaMemcpy(b, a, sizeof(host_in), cudaMemcpyDeviceToDevice), "cudaMemcpy DtoD") ||
      !Check(cudaMemcpy(host_out, b, sizeof(host_out), cudaMemcpyDeviceToHost),
             "cudaMemcpy DtoH")) {
    return false;
  }
  if (std::memcmp(host_in, host_out, sizeof(host_in)) != 0) {
    std::printf("FAILED: the round trip changed the data\n");
    return false;
  }
  std::printf("round trip of %zu bytes: equal\n", sizeof(host_in));
  if (!Check(cudaMemset(b, 0x5A, sizeof(host_in)), "cudaMemset") ||
      !Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") ||
      !Check(cudaMemcpy(host_out, b, sizeof(host_out), cudaMemcpyDeviceToHost),
             "cudaMemcpy DtoH")) {
    return false;
  }
  if (host_out[0] != 0x5A5A5A5A || host_out[kCount - 1] != 0x5A5A5A5A) {
    std::printf("FAILED: cudaMemset wrote %#x\n", static_cast<unsigned>(host_out[0]));
    return false;
  }
  // The kernel adds each element's index to the 0x5A5A5A5A the memset left.
  AddIndex<<<kCount / 256, 256>>>(b, kCount);
  if (!Check(cudaGetLastError(), "launch") ||
      !Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") ||
      !Check(cudaMemcpy(host_out, b, sizeof(host_out), cudaMemcpyDeviceToHost),
             "cudaMemcpy DtoH")) {
    return false;
  }
  for (int i = 0; i < kCount; ++i) {
    if (host_out[i] != 0x5A5A5A5A + i) {
      std::printf("FAILED: after the kernel, element %d is %#x\n", i,
                  static_cast<unsigned>(host_out[i]));
      return false;
    }
  }
  std::printf("kernel: %d elements right\n", kCount);
  return Check(cudaFree(a), "cudaFree a") && Check(cudaFree(b), "cudaFree b");
}

}  // namespace

int main() {
  int driver = 0;
  int runtime = 0;
  if (!Check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion") ||
      !Check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion")) {
    return 1;
  }
  std::printf("driver %d, runtime %d\n", driver, runtime);
  int count = 0;
  if (!Check(cudaGetDeviceCount(&count), "cudaGetDeviceCount")) return 1;
  std::printf("%d device(s)\n", count);
  if (count < 1) {
    std::printf("FAILED: no device\n");
    return 1;
  }
  for (int device = 0; device < count; ++device) {
    if (!RoundTrip(device)) return 1;
  }
  if (!Check(cudaFree(nullptr), "cudaFree(nullptr)")) return 1;
  std::printf("cudart program: OK (%d device(s))\n", count);
  return 0;
}
