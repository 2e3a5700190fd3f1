// nvcc-options: -gencode arch=compute_80,code=sm_80
// A program with machine code for sm_80 only and no PTX: on a device of another
// architecture (an H100 or H200 is sm_90) its kernels cannot load; runtime
// calls that need no kernel still work.
#include <cstdio>

#include <cuda_runtime.h>

namespace {

void Show(const char* what, cudaError_t e) { std::printf("%s: %s\n", what, cudaGetErrorName(e)); }

__global__ void Fill(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2 * i;
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  int major = 0;
  int minor = 0;
  Show("cudaDeviceGetAttribute major",
       cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  Show("cudaDeviceGetAttribute minor",
       cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  std::printf("compute capability %d.%d\n", major, minor);

  int* d = nullptr;
  Show("cudaMalloc", cudaMalloc(&d, 256 * sizeof(int)));
  Show("cudaMemset", cudaMemset(d, 0, 256 * sizeof(int)));

  Fill<<<2, 128>>>(d, 256);
  Show("launch", cudaGetLastError());
  Show("get again", cudaGetLastError());
  Show("synchronize", cudaDeviceSynchronize());
  int n = 256;
  void* args[] = {&d, &n};
  Show("cudaLaunchKernel",
       cudaLaunchKernel(reinterpret_cast<const void*>(Fill), dim3(2), dim3(128), args, 0, 0));
  Show("get", cudaGetLastError());
  cudaFuncAttributes fa = {};
  Show("cudaFuncGetAttributes", cudaFuncGetAttributes(&fa, Fill));
  Show("get", cudaGetLastError());
  Show("cudaFuncSetAttribute",
       cudaFuncSetAttribute(Fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024));
  int blocks = -1;
  Show("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
       cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Fill, 128, 0));
  Show("get", cudaGetLastError());

  // What needs no kernel still works: copies, memset, streams, events, pinned
  // memory.
  int host[256];
  for (int i = 0; i < 256; ++i) host[i] = i + 1;
  Show("cudaMemcpy to device", cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice));
  cudaStream_t s;
  Show("cudaStreamCreate", cudaStreamCreate(&s));
  int* pinned = nullptr;
  Show("cudaMallocHost", cudaMallocHost(&pinned, sizeof(host)));
  Show("cudaMemsetAsync", cudaMemsetAsync(d, 0, 64 * sizeof(int), s));
  Show("cudaMemcpyAsync to host",
       cudaMemcpyAsync(pinned, d, sizeof(host), cudaMemcpyDeviceToHost, s));
  cudaEvent_t e;
  Show("cudaEventCreate", cudaEventCreate(&e));
  Show("cudaEventRecord", cudaEventRecord(e, s));
  Show("cudaEventSynchronize", cudaEventSynchronize(e));
  long long sum = 0;
  for (int i = 0; i < 256; ++i) sum += pinned[i];
  std::printf("sum after memset of the first 64 = %lld\n", sum);
  Show("cudaEventDestroy", cudaEventDestroy(e));
  Show("cudaStreamDestroy", cudaStreamDestroy(s));
  Show("cudaFreeHost", cudaFreeHost(pinned));
  Show("cudaFree", cudaFree(d));
  Show("cudaDeviceSynchronize", cudaDeviceSynchronize());
  Show("get", cudaGetLastError());
  std::printf("done\n");
  return 0;
}
