// Copyright 2026 The cuhal Authors.
// An unmodified CUDA runtime program for what the fake offers underneath the runtime (issue 17;
// cudart_underneath_test.sh builds it with nvcc once and runs it in many ways). The first
// argument picks what it does:
//   work      allocate (device and pinned), a stream and an event, copy in, launch a kernel, copy
//             out, synchronize, check, and free everything; any runtime error is printed as
//             "runtime error: <cudaError name> (<number>) at <call>", everything made so far is
//             freed, and the program exits 1 (the fault sweep runs this)
//   reset     `work`, cudaDeviceReset, `work` again, cudaDeviceReset (the leak report)
//   leak      `reset`, plus a cuDevicePrimaryCtxRetain of its own that it never releases
//   race      a kernel on stream A writes a buffer that a cudaMemcpyAsync on stream B reads, with
//             no event between them (the race detector)
//   ordered   the same with cudaEventRecord on A and cudaStreamWaitEvent on B between them
// It prints what it read and the event times, so that two runs can be compared, and ends with
// "<mode>: OK" (exit 0) or exits 1.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

__global__ void AddIndex(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += i;
}

__global__ void Fill(int* p, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value + i;
}

namespace {

constexpr int kCount = 1024;

// False, with the error printed, unless `e` is cudaSuccess.
bool Ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("runtime error: %s (%d) at %s\n", cudaGetErrorName(e), static_cast<int>(e), what);
  return false;
}

// What `work` made, all freed by Release whether or not the work got to the end.
struct Resources {
  int* a = nullptr;
  int* b = nullptr;
  int* host = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;

  // Whether every release succeeded (each is tried).
  bool Release() {
    bool ok = true;
    if (start != nullptr) ok &= Ok(cudaEventDestroy(start), "cudaEventDestroy start");
    if (stop != nullptr) ok &= Ok(cudaEventDestroy(stop), "cudaEventDestroy stop");
    if (stream != nullptr) ok &= Ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
    if (host != nullptr) ok &= Ok(cudaFreeHost(host), "cudaFreeHost");
    if (b != nullptr) ok &= Ok(cudaFree(b), "cudaFree b");
    if (a != nullptr) ok &= Ok(cudaFree(a), "cudaFree a");
    return ok;
  }
};

bool Steps(Resources& r) {
  const size_t bytes = kCount * sizeof(int);
  if (!Ok(cudaMalloc(&r.a, bytes), "cudaMalloc a") ||
      !Ok(cudaMalloc(&r.b, bytes), "cudaMalloc b") ||
      !Ok(cudaMallocHost(&r.host, bytes), "cudaMallocHost") ||
      !Ok(cudaStreamCreate(&r.stream), "cudaStreamCreate") ||
      !Ok(cudaEventCreate(&r.start), "cudaEventCreate start") ||
      !Ok(cudaEventCreate(&r.stop), "cudaEventCreate stop")) {
    return false;
  }
  for (int i = 0; i < kCount; ++i) r.host[i] = 3 * i;
  if (!Ok(cudaEventRecord(r.start, r.stream), "cudaEventRecord start") ||
      !Ok(cudaMemcpyAsync(r.a, r.host, bytes, cudaMemcpyHostToDevice, r.stream),
          "cudaMemcpyAsync HtoD") ||
      !Ok(cudaMemsetAsync(r.b, 0, bytes, r.stream), "cudaMemsetAsync")) {
    return false;
  }
  AddIndex<<<kCount / 256, 256, 0, r.stream>>>(r.a, kCount);
  if (!Ok(cudaGetLastError(), "AddIndex<<<>>>") ||
      !Ok(cudaMemcpyAsync(r.b, r.a, bytes, cudaMemcpyDeviceToDevice, r.stream),
          "cudaMemcpyAsync DtoD") ||
      !Ok(cudaMemcpyAsync(r.host, r.b, bytes, cudaMemcpyDeviceToHost, r.stream),
          "cudaMemcpyAsync DtoH") ||
      !Ok(cudaEventRecord(r.stop, r.stream), "cudaEventRecord stop") ||
      !Ok(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize") ||
      !Ok(cudaEventSynchronize(r.stop), "cudaEventSynchronize")) {
    return false;
  }
  float ms = 0;
  if (!Ok(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime")) return false;
  for (int i = 0; i < kCount; ++i) {
    if (r.host[i] != 4 * i) {
      std::printf("FAILED: element %d is %d, not %d\n", i, r.host[i], 4 * i);
      return false;
    }
  }
  std::printf("work: %d elements right, %.6f ms between the events\n", kCount, ms);
  return true;
}

bool Work() {
  Resources r;
  const bool ok = Steps(r);
  return r.Release() && ok;
}

bool Reset() { return Ok(cudaDeviceReset(), "cudaDeviceReset"); }

// A retain of the program's own, through the driver entry point the runtime hands out.
bool RetainAndKeep() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (!Ok(cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxRetain", &fn, 12000,
                                           cudaEnableDefault, &found),
          "cudaGetDriverEntryPointByVersion") ||
      fn == nullptr) {
    return false;
  }
  CUcontext ctx = nullptr;
  CUresult r = reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(fn)(&ctx, 0);
  std::printf("cuDevicePrimaryCtxRetain -> %d (kept)\n", static_cast<int>(r));
  return r == CUDA_SUCCESS;
}

// A kernel on stream a writes a buffer that a copy on stream b reads, ordered by an event or not.
bool Race(bool ordered) {
  cudaStream_t a = nullptr, b = nullptr;
  cudaEvent_t written = nullptr;
  int* buffer = nullptr;
  static int host[kCount];
  bool ok = Ok(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), "cudaStreamCreate a") &&
            Ok(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), "cudaStreamCreate b") &&
            Ok(cudaEventCreateWithFlags(&written, cudaEventDisableTiming), "cudaEventCreate") &&
            Ok(cudaMalloc(&buffer, sizeof(host)), "cudaMalloc") &&
            Ok(cudaMemset(buffer, 0, sizeof(host)), "cudaMemset");
  if (ok) {
    Fill<<<kCount / 256, 256, 0, a>>>(buffer, kCount, 1000);
    ok = Ok(cudaGetLastError(), "Fill<<<>>> on a");
  }
  if (ok && ordered) {
    ok = Ok(cudaEventRecord(written, a), "cudaEventRecord a") &&
         Ok(cudaStreamWaitEvent(b, written, 0), "cudaStreamWaitEvent b");
  }
  if (ok) {
    ok = Ok(cudaMemcpyAsync(host, buffer, sizeof(host), cudaMemcpyDeviceToHost, b),
            "cudaMemcpyAsync DtoH on b") &&
         Ok(cudaStreamSynchronize(b), "cudaStreamSynchronize b") &&
         Ok(cudaStreamSynchronize(a), "cudaStreamSynchronize a");
  }
  if (ok) {
    long long sum = 0;
    for (int v : host) sum += v;
    std::printf("read on b: host[0]=%d host[%d]=%d sum=%lld\n", host[0], kCount - 1,
                host[kCount - 1], sum);
  }
  if (buffer != nullptr) ok &= Ok(cudaFree(buffer), "cudaFree");
  if (written != nullptr) ok &= Ok(cudaEventDestroy(written), "cudaEventDestroy");
  if (b != nullptr) ok &= Ok(cudaStreamDestroy(b), "cudaStreamDestroy b");
  if (a != nullptr) ok &= Ok(cudaStreamDestroy(a), "cudaStreamDestroy a");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "work";
  bool ok = false;
  if (std::strcmp(mode, "work") == 0) {
    ok = Work();
  } else if (std::strcmp(mode, "reset") == 0 || std::strcmp(mode, "leak") == 0) {
    ok = Work() && Reset() && (std::strcmp(mode, "leak") != 0 || RetainAndKeep()) && Work() &&
         Reset();
  } else if (std::strcmp(mode, "race") == 0 || std::strcmp(mode, "ordered") == 0) {
    ok = Race(std::strcmp(mode, "ordered") == 0);
  } else {
    std::printf("FAILED: unknown mode %s\n", mode);
    return 2;
  }
  if (!ok) return 1;
  std::printf("%s: OK\n", mode);
  return 0;
}
