// Copyright 2026 The cuhal Authors.
// The benchmarks' two backends: fakecuda and the real driver (libcuda.so.1 through RealCuda),
// each with device 0's primary context retained once per process.
#ifndef CUHAL_BENCH_BENCH_BACKEND_H_
#define CUHAL_BENCH_BENCH_BACKEND_H_

#include <cuda.h>

#include <string>

#include "core/symbols/cuda_api.h"

namespace cuhal::bench {

// One driver with device 0's primary context, set up on first use and kept for the process (the
// benchmarks may run in any order, any number of times). Ownership: process-lifetime statics;
// never destroyed. Thread-safety: set up once (function-local static); read-only afterwards.
// Stream ordering: none of its own.
struct Backend {
  const CudaApi* api = nullptr;
  CUcontext ctx = nullptr;
  std::string unavailable;  // non-empty: the benchmark skips with this reason
};

// An installed fakecuda driver (one H200).
const Backend& FakeBackend();
// The real driver; `unavailable` says why when it does not load or has no device.
const Backend& RealBackend();

// "CUDA_ERROR_OUT_OF_MEMORY" (or "CUresult N").
std::string ResultName(CUresult result);

}  // namespace cuhal::bench

#endif  // CUHAL_BENCH_BENCH_BACKEND_H_
