// Kernel launches through the CUDA runtime: <<<>>> with 1-3D shapes and dynamic
// shared memory, cudaLaunchKernel, cudaLaunchKernelEx with attributes,
// cooperative launch, invalid configurations, function attributes and occupancy
// queries; results are checked by sums.
#include <cstdio>

#include <cuda_runtime.h>

namespace {

void Show(const char* what, cudaError_t e) { std::printf("%s: %s\n", what, cudaGetErrorName(e)); }

constexpr int kMaxN = 1 << 16;
int host_buffer[kMaxN];

// Copies n ints back, prints their sum with the launch and synchronization
// results, clears them.
void Report(const char* label, int* d, int n) {
  cudaError_t launch = cudaGetLastError();
  cudaError_t sync = cudaDeviceSynchronize();
  cudaError_t copy = cudaMemcpy(host_buffer, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  long long sum = 0;
  for (int i = 0; i < n; ++i) sum += host_buffer[i];
  std::printf("%s: launch %s, sync %s, copy %s, sum %lld\n", label, cudaGetErrorName(launch),
              cudaGetErrorName(sync), cudaGetErrorName(copy), sum);
  cudaMemset(d, 0, n * sizeof(int));
}

// Each thread writes its linear index in the grid, times 3 plus 1; 3D grids and
// blocks.
__global__ void Index3D(int* out) {
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned i = block * blockDim.x * blockDim.y * blockDim.z + thread;
  out[i] = static_cast<int>(3 * i + 1);
}

// Block sums with dynamic shared memory and __syncthreads; one atomicAdd per
// block.
template <typename T>
__global__ void BlockSum(const T* in, int n, T* total) {
  extern __shared__ unsigned char raw[];
  T* s = reinterpret_cast<T*>(raw);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, s[0]);
}

__global__ void Iota(int* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = i;
  }
}

__global__ void Histogram(const int* in, int n, int* bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&bins[in[i] % 16], 1);
    atomicMax(&bins[16], in[i]);
    atomicMin(&bins[17], in[i]);
    atomicOr(&bins[18], 1 << (in[i] % 31));
  }
}

__global__ void AddScalar(int* out, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += value;
}

__global__ void BigShared(int* out) {
  __shared__ int s[12 * 1024];  // 48 KiB of static shared memory
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  int* d = nullptr;
  Show("cudaMalloc", cudaMalloc(&d, kMaxN * sizeof(int)));
  Show("cudaMemset", cudaMemset(d, 0, kMaxN * sizeof(int)));

  Index3D<<<64, 128>>>(d);
  Report("1D 64x128", d, 64 * 128);
  Index3D<<<dim3(4, 8), dim3(16, 16)>>>(d);
  Report("2D (4,8)x(16,16)", d, 4 * 8 * 256);
  Index3D<<<dim3(2, 3, 4), dim3(8, 4, 2)>>>(d);
  Report("3D (2,3,4)x(8,4,2)", d, 24 * 64);
  Index3D<<<1, 1024>>>(d);
  Report("1x1024", d, 1024);

  // Invalid configurations: the launch fails, nothing runs, the error is not
  // sticky.
  Index3D<<<1, 1025>>>(d);
  Report("block of 1025", d, 1025);
  Index3D<<<1, dim3(1, 1, 65)>>>(d);
  Report("block.z 65", d, 65);
  Index3D<<<0, 32>>>(d);
  Report("grid of 0", d, 32);
  Index3D<<<dim3(1, 65536), 1>>>(d);
  Report("grid.y 65536", d, 1);
  Index3D<<<1, 32, 1 << 20>>>(d);
  Report("1 MiB of dynamic shared memory", d, 32);

  // Dynamic shared memory reductions with templates.
  Iota<<<16, 256>>>(d, 10000);
  Show("Iota", cudaGetLastError());
  long long* total64 = nullptr;
  Show("cudaMalloc total", cudaMalloc(&total64, sizeof(long long)));
  int* total32 = reinterpret_cast<int*>(total64);
  Show("cudaMemset total", cudaMemset(total64, 0, sizeof(long long)));
  BlockSum<int><<<(10000 + 255) / 256, 256, 256 * sizeof(int)>>>(d, 10000, total32);
  int sum32 = 0;
  Show("BlockSum<int> sync", cudaDeviceSynchronize());
  cudaMemcpy(&sum32, total32, sizeof(int), cudaMemcpyDeviceToHost);
  std::printf("BlockSum<int> of 0..9999 = %d\n", sum32);
  float* f = nullptr;
  Show("cudaMalloc floats", cudaMalloc(&f, 4096 * sizeof(float)));
  float ones[4096];
  for (int i = 0; i < 4096; ++i) ones[i] = 0.5f;
  cudaMemcpy(f, ones, sizeof(ones), cudaMemcpyHostToDevice);
  float* ftotal = reinterpret_cast<float*>(total64);
  cudaMemset(ftotal, 0, sizeof(float));
  BlockSum<float><<<32, 128, 128 * sizeof(float)>>>(f, 4096, ftotal);
  float fsum = 0;
  Show("BlockSum<float> sync", cudaDeviceSynchronize());
  cudaMemcpy(&fsum, ftotal, sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("BlockSum<float> of 4096 halves = %.1f\n", fsum);

  // Atomics.
  int* bins = nullptr;
  Show("cudaMalloc bins", cudaMalloc(&bins, 19 * sizeof(int)));
  int init[19] = {};
  init[17] = 1 << 30;
  cudaMemcpy(bins, init, sizeof(init), cudaMemcpyHostToDevice);
  Histogram<<<40, 256>>>(d, 10000, bins);
  Show("Histogram sync", cudaDeviceSynchronize());
  cudaMemcpy(init, bins, sizeof(init), cudaMemcpyDeviceToHost);
  std::printf("bins:");
  for (int i = 0; i < 16; ++i) std::printf(" %d", init[i]);
  std::printf("\nmax %d min %d or 0x%x\n", init[16], init[17], init[18]);

  // cudaLaunchKernel and cudaLaunchKernelEx.
  int n = 1000;
  int value = 5;
  void* args[] = {&d, &n, &value};
  Show("cudaLaunchKernel",
       cudaLaunchKernel(reinterpret_cast<const void*>(AddScalar), dim3(8), dim3(128), args, 0, 0));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(4);
  config.blockDim = dim3(256);
  cudaLaunchAttribute attrs[2];
  attrs[0].id = cudaLaunchAttributePriority;
  attrs[0].val.priority = 0;
  attrs[1].id = cudaLaunchAttributeClusterDimension;
  attrs[1].val.clusterDim.x = 2;
  attrs[1].val.clusterDim.y = 1;
  attrs[1].val.clusterDim.z = 1;
  config.attrs = attrs;
  config.numAttrs = 1;
  Show("cudaLaunchKernelEx priority", cudaLaunchKernelEx(&config, AddScalar, d, n, 7));
  Report("after AddScalar 5 and 7 on 0..999", d, 10000);
  config.numAttrs = 2;
  Show("cudaLaunchKernelEx priority and cluster 2",
       cudaLaunchKernelEx(&config, AddScalar, d, n, 2));
  Report("after AddScalar 2 in clusters of 2", d, 10000);
  attrs[1].val.clusterDim.x = 3;
  Show("cudaLaunchKernelEx cluster 3 on grid 4", cudaLaunchKernelEx(&config, AddScalar, d, n, 1));
  Show("get", cudaGetLastError());
  config.numAttrs = 1;
  config.blockDim = dim3(2048);
  Show("cudaLaunchKernelEx block 2048", cudaLaunchKernelEx(&config, AddScalar, d, n, 1));
  Show("get", cudaGetLastError());

  // Cooperative launch: within the co-resident limit and beyond it.
  int sms = 0;
  int coop = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0);
  std::printf("SMs %d cooperative launch %d\n", sms, coop);
  int per_sm = 0;
  Show("occupancy AddScalar 256",
       cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, AddScalar, 256, 0));
  std::printf("AddScalar blocks per SM at 256 threads: %d\n", per_sm);
  Show("cudaLaunchCooperativeKernel 2 blocks",
       cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(AddScalar), dim3(2), dim3(256),
                                   args, 0, 0));
  Report("after cooperative AddScalar 5", d, 10000);
  Show("cudaLaunchCooperativeKernel too many blocks",
       cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(AddScalar), dim3(sms * per_sm + 1),
                                   dim3(256), args, 0, 0));
  Show("get", cudaGetLastError());

  // Function attributes (register counts come from ptxas on the real driver).
  cudaFuncAttributes fa = {};
  Show("cudaFuncGetAttributes BigShared", cudaFuncGetAttributes(&fa, BigShared));
  std::printf(
      "BigShared: shared %zu const %zu local %zu maxThreads %d regs %d "
      "ptx %d binary %d "
      "maxDynamicShared %d\n",
      fa.sharedSizeBytes, fa.constSizeBytes, fa.localSizeBytes, fa.maxThreadsPerBlock, fa.numRegs,
      fa.ptxVersion, fa.binaryVersion, fa.maxDynamicSharedSizeBytes);
  Show("cudaFuncGetAttributes BlockSum<int>", cudaFuncGetAttributes(&fa, BlockSum<int>));
  std::printf("BlockSum<int>: shared %zu regs %d maxThreads %d\n", fa.sharedSizeBytes, fa.numRegs,
              fa.maxThreadsPerBlock);
  BigShared<<<1, 256>>>(d);
  Report("BigShared 256", d, 256);

  // Opting in to more dynamic shared memory.
  int optin = 0;
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  std::printf("opt-in shared memory per block %d\n", optin);
  size_t big = 100 * 1024;
  Iota<<<1, 64>>>(d, 10000);
  cudaMemset(total64, 0, sizeof(long long));
  BlockSum<int><<<1, 64, big>>>(d, 64, total32);
  Show("BlockSum with 100 KiB before opt-in", cudaGetLastError());
  Show("cudaFuncSetAttribute 100 KiB",
       cudaFuncSetAttribute(BlockSum<int>, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
  BlockSum<int><<<1, 64, big>>>(d, 64, total32);
  Show("BlockSum with 100 KiB after opt-in", cudaGetLastError());
  Show("sync", cudaDeviceSynchronize());
  cudaMemcpy(&sum32, total32, sizeof(int), cudaMemcpyDeviceToHost);
  std::printf("BlockSum<int> of 0..63 = %d\n", sum32);
  Show("cudaFuncSetAttribute over the opt-in limit",
       cudaFuncSetAttribute(BlockSum<int>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin + 1));
  Show("cudaFuncGetAttributes BlockSum<int>", cudaFuncGetAttributes(&fa, BlockSum<int>));
  std::printf("BlockSum<int> maxDynamicShared %d\n", fa.maxDynamicSharedSizeBytes);

  // Occupancy.
  int blocks = 0;
  Show("occupancy BlockSum<int> 256 + 1 KiB",
       cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, BlockSum<int>, 256, 1024));
  std::printf("blocks per SM %d\n", blocks);
  Show("occupancy BigShared 256",
       cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, BigShared, 256, 0));
  std::printf("blocks per SM %d\n", blocks);
  Show("occupancy block of 0",
       cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, AddScalar, 0, 0));
  int min_grid = 0;
  int block_size = 0;
  Show("cudaOccupancyMaxPotentialBlockSize AddScalar",
       cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, AddScalar, 0, 0));
  std::printf("min grid %d block size %d\n", min_grid, block_size);

  Show("cudaFree", cudaFree(d));
  Show("cudaFree floats", cudaFree(f));
  Show("cudaFree bins", cudaFree(bins));
  Show("cudaFree total", cudaFree(total64));
  std::printf("done\n");
  return 0;
}
