// Error reporting through the CUDA runtime: launch errors (not sticky), error
// names and strings, a sticky error from a write through a null pointer, and
// recovery with cudaDeviceReset.
#include <cstdio>

#include <cuda_runtime.h>

namespace {

void Show(const char* what, cudaError_t e) { std::printf("%s: %s\n", what, cudaGetErrorName(e)); }

__global__ void Fill(int* out, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}

__global__ void WriteThrough(int* p) { *p = 42; }

__global__ void TrapIf(int* flag) {
  if (*flag != 0) __trap();
}

// Fills n ints with base+i on the device and prints the sum read back (or the
// error).
void FillAndSum(const char* label, int n, int base) {
  int* d = nullptr;
  cudaError_t e = cudaMalloc(&d, n * sizeof(int));
  if (e != cudaSuccess) {
    Show(label, e);
    return;
  }
  Fill<<<(n + 127) / 128, 128>>>(d, n, base);
  cudaError_t launch = cudaGetLastError();
  int host[1024];
  cudaError_t copy = cudaMemcpy(host, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  long long sum = 0;
  for (int i = 0; i < n && copy == cudaSuccess; ++i) sum += host[i];
  std::printf("%s: launch %s, copy %s, sum %lld\n", label, cudaGetErrorName(launch),
              cudaGetErrorName(copy), sum);
  Show("  free", cudaFree(d));
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  // Names and strings of a range of codes, including one that is not a code.
  const cudaError_t codes[] = {cudaSuccess,
                               cudaErrorInvalidValue,
                               cudaErrorMemoryAllocation,
                               cudaErrorInitializationError,
                               cudaErrorInvalidConfiguration,
                               cudaErrorInvalidDevicePointer,
                               cudaErrorInvalidResourceHandle,
                               cudaErrorNotReady,
                               cudaErrorIllegalAddress,
                               cudaErrorLaunchFailure,
                               cudaErrorNoKernelImageForDevice,
                               cudaErrorStreamCaptureInvalidated,
                               cudaErrorAssert,
                               static_cast<cudaError_t>(9999)};
  for (cudaError_t c : codes) {
    std::printf("code %d: %s / %s\n", static_cast<int>(c), cudaGetErrorName(c),
                cudaGetErrorString(c));
  }

  FillAndSum("before errors", 1000, 1);

  // A launch with a bad configuration fails at once; the error is not sticky.
  int* d = nullptr;
  Show("cudaMalloc", cudaMalloc(&d, 64 * sizeof(int)));
  Fill<<<1, 2048>>>(d, 64, 0);
  Show("peek after block of 2048", cudaPeekAtLastError());
  Show("peek again", cudaPeekAtLastError());
  Show("get", cudaGetLastError());
  Show("get again", cudaGetLastError());
  Fill<<<0, 32>>>(d, 64, 0);
  Show("get after grid of 0", cudaGetLastError());
  Fill<<<dim3(1, 70000, 1), 32>>>(d, 64, 0);
  Show("get after grid.y 70000", cudaGetLastError());
  Show("synchronize", cudaDeviceSynchronize());

  // Invalid arguments to API calls: not sticky either.
  int host_word = 0;
  Show("cudaMemcpy with kind 7", cudaMemcpy(d, d, 16, static_cast<cudaMemcpyKind>(7)));
  Show("cudaFree of a host pointer", cudaFree(&host_word));
  Show("get after cudaFree", cudaGetLastError());
  Show("cudaSetDevice 99", cudaSetDevice(99));
  Show("get after cudaSetDevice", cudaGetLastError());
  int device = -1;
  Show("cudaGetDevice", cudaGetDevice(&device));
  std::printf("current device %d\n", device);
  Show("cudaStreamSynchronize default", cudaStreamSynchronize(0));
  FillAndSum("after invalid calls", 256, 10);

  // A kernel that traps: the launch succeeds, the synchronization reports it,
  // and it sticks.
  int* flag = nullptr;
  Show("cudaMalloc flag", cudaMalloc(&flag, sizeof(int)));
  Show("cudaMemset flag", cudaMemset(flag, 0, sizeof(int)));
  TrapIf<<<1, 1>>>(flag);
  Show("no trap launch", cudaGetLastError());
  Show("no trap synchronize", cudaDeviceSynchronize());
  Show("cudaFree flag", cudaFree(flag));

  // A write through a null pointer: an illegal address, sticky.
  WriteThrough<<<1, 1>>>(nullptr);
  Show("null write launch", cudaGetLastError());
  Show("null write synchronize", cudaDeviceSynchronize());
  Show("synchronize again", cudaDeviceSynchronize());
  int* e = nullptr;
  Show("cudaMalloc after fault", cudaMalloc(&e, 16));
  Show("get", cudaGetLastError());
  Show("get again", cudaGetLastError());
  Show("peek", cudaPeekAtLastError());
  int host = 0;
  Show("cudaMemcpy after fault", cudaMemcpy(&host, d, sizeof(int), cudaMemcpyDeviceToHost));
  cudaStream_t s;
  Show("cudaStreamCreate after fault", cudaStreamCreate(&s));

  // cudaDeviceReset clears it; allocations and kernels work again.
  Show("cudaDeviceReset", cudaDeviceReset());
  Show("get after reset", cudaGetLastError());
  Show("synchronize after reset", cudaDeviceSynchronize());
  FillAndSum("after reset", 1000, 3);

  // __trap() with the flag set: the kernel is reported as failed
  // (cudaErrorLaunchFailure).
  Show("cudaMalloc flag", cudaMalloc(&flag, sizeof(int)));
  Show("cudaMemset flag", cudaMemset(flag, 1, sizeof(int)));
  TrapIf<<<1, 1>>>(flag);
  Show("trap launch", cudaGetLastError());
  Show("trap synchronize", cudaDeviceSynchronize());
  Show("cudaMalloc after trap", cudaMalloc(&e, 16));
  Show("get after trap", cudaGetLastError());
  Show("cudaDeviceReset", cudaDeviceReset());
  FillAndSum("after second reset", 512, 7);
  std::printf("done\n");
  return 0;
}
