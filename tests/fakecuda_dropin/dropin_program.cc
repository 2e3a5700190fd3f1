// Copyright 2026 The cuhal Authors.
// A plain CUDA driver API program: it includes cuda.h and nothing of cuhal, and is linked
// against a libcuda.so.1 (the drop-in fake, found through LD_LIBRARY_PATH). Built twice: as is,
// and with CUDA_API_PER_THREAD_DEFAULT_STREAM (cuda.h then calls the _ptds/_ptsz entry points).
//
//   dropin_program [roundtrip]   init, devices, context, stream, memory round trip, events,
//                                module load; prints "dropin program: OK ..." and exits 0
//   dropin_program expect-oom    the first cuMemAlloc must fail with CUDA_ERROR_OUT_OF_MEMORY
//                                (run with FAKECUDA_FAULTS=cuMemAlloc:nth:1:CUDA_ERROR_OUT_OF_MEMORY)
//   dropin_program leak          leaves a stream and an allocation behind (for the leak report)
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const char* Name(CUresult r) {
  const char* name = nullptr;
  return cuGetErrorName(r, &name) == CUDA_SUCCESS ? name : "(unknown CUresult)";
}

#define CHECK(call)                                                                       \
  do {                                                                                    \
    CUresult check_result_ = (call);                                                      \
    if (check_result_ != CUDA_SUCCESS) {                                                  \
      std::fprintf(stderr, "dropin program: FAILED %s -> %s (line %d)\n", #call,          \
                   Name(check_result_), __LINE__);                                        \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

#define EXPECT_TRUE(condition)                                                            \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      std::fprintf(stderr, "dropin program: FAILED expectation %s (line %d)\n", #condition, \
                   __LINE__);                                                             \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

constexpr char kPtx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry noop(.param .u64 p)\n{\n\tret;\n}\n";

int RoundTrip() {
  int version = 0;
  CHECK(cuDriverGetVersion(&version));  // allowed before cuInit
  CHECK(cuInit(0));
  int count = 0;
  CHECK(cuDeviceGetCount(&count));
  EXPECT_TRUE(count >= 1);
  CUdevice dev = 0;
  CHECK(cuDeviceGet(&dev, 0));
  char name[256] = {};
  CHECK(cuDeviceGetName(name, sizeof(name), dev));
  size_t total = 0;
  CHECK(cuDeviceTotalMem(&total, dev));
  int sms = 0;
  CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  EXPECT_TRUE(total > 0 && sms > 0);

  CUcontext ctx = nullptr;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, dev));
  CUstream stream = nullptr;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent start = nullptr, stop = nullptr;
  CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));

  constexpr size_t kCount = 1 << 18;
  constexpr size_t kBytes = kCount * sizeof(unsigned);
  std::vector<unsigned> host(kCount), back(kCount, 0);
  for (size_t i = 0; i < kCount; ++i) host[i] = static_cast<unsigned>(i * 2654435761u);
  CUdeviceptr a = 0, b = 0;
  CHECK(cuMemAlloc(&a, kBytes));
  CHECK(cuMemAlloc(&b, kBytes));
  // Asynchronous round trip on a stream, timed with events.
  CHECK(cuEventRecord(start, stream));
  CHECK(cuMemcpyHtoDAsync(a, host.data(), kBytes, stream));
  CHECK(cuMemcpyDtoDAsync(b, a, kBytes, stream));
  CHECK(cuMemcpyDtoHAsync(back.data(), b, kBytes, stream));
  CHECK(cuEventRecord(stop, stream));
  CHECK(cuEventSynchronize(stop));
  CHECK(cuStreamSynchronize(stream));
  EXPECT_TRUE(std::memcmp(host.data(), back.data(), kBytes) == 0);
  float ms = -1.0f;
  CHECK(cuEventElapsedTime(&ms, start, stop));
  EXPECT_TRUE(ms > 0.0f);
  // Synchronous copies and memsets on the default stream.
  CHECK(cuMemsetD32(a, 0x01020304u, kCount));
  CHECK(cuMemcpyDtoH(back.data(), a, kBytes));
  EXPECT_TRUE(back[0] == 0x01020304u && back[kCount - 1] == 0x01020304u);
  CHECK(cuMemcpyHtoD(a, host.data(), kBytes));
  CHECK(cuMemcpyDtoH(back.data(), a, kBytes));
  EXPECT_TRUE(std::memcmp(host.data(), back.data(), kBytes) == 0);
  size_t free_bytes = 0, total_bytes = 0;
  CHECK(cuMemGetInfo(&free_bytes, &total_bytes));
  EXPECT_TRUE(free_bytes <= total_bytes - 2 * kBytes);

  // Errors are reported with their names and strings.
  CUdeviceptr zero = 0;
  CUresult invalid = cuMemAlloc(&zero, 0);
  const char* text = nullptr;
  CHECK(cuGetErrorString(invalid, &text));
  EXPECT_TRUE(invalid == CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(std::strcmp(Name(invalid), "CUDA_ERROR_INVALID_VALUE") == 0);

  // A module: loading it and finding its kernel needs no implementation.
  CUmodule module = nullptr;
  CUfunction noop = nullptr;
  CHECK(cuModuleLoadData(&module, kPtx));
  CHECK(cuModuleGetFunction(&noop, module, "noop"));
  CHECK(cuModuleUnload(module));

  CHECK(cuMemFree(a));
  CHECK(cuMemFree(b));
  CHECK(cuEventDestroy(start));
  CHECK(cuEventDestroy(stop));
  CHECK(cuStreamDestroy(stream));
  CHECK(cuCtxDestroy(ctx));
  std::printf("dropin program: OK (%d device(s), %s, driver %d, round trip of %zu bytes, %s: %s)\n",
              count, name, version, kBytes, Name(invalid), text);
  return 0;
}

int ExpectOom() {
  CHECK(cuInit(0));
  CUcontext ctx = nullptr;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, 0));
  CUdeviceptr p = 0;
  CUresult first = cuMemAlloc(&p, 4096);
  EXPECT_TRUE(first == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(cuMemAlloc(&p, 4096));  // the rule fired once
  CHECK(cuMemFree(p));
  CHECK(cuCtxDestroy(ctx));
  std::printf("dropin program: OK (first cuMemAlloc: %s)\n", Name(first));
  return 0;
}

int Leak() {
  CHECK(cuInit(0));
  CUcontext ctx = nullptr;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CHECK(cuCtxSetCurrent(ctx));
  CUstream stream = nullptr;
  CUdeviceptr p = 0;
  CHECK(cuStreamCreate(&stream, 0));
  CHECK(cuMemAlloc(&p, 4096));
  std::printf("dropin program: OK (leaving a stream and an allocation behind)\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "roundtrip";
  if (std::strcmp(mode, "roundtrip") == 0) return RoundTrip();
  if (std::strcmp(mode, "expect-oom") == 0) return ExpectOom();
  if (std::strcmp(mode, "leak") == 0) return Leak();
  std::fprintf(stderr, "usage: %s [roundtrip|expect-oom|leak]\n", argv[0]);
  return 2;
}
