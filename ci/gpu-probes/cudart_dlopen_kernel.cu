// Copyright 2026 The cuhal Authors.
// The kernels of cudart_dlopen_probe.cc, built by `nvcc -fatbin` (PTX only) at test time; the
// probe registers the fat binary with the runtime it loads, by these unmangled names.
extern "C" __global__ void fill(int* out, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + i;
}

extern "C" __global__ void write_through(int* p) { *p = 42; }
