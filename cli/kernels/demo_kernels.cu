// The kernel `cuhal demo` launches, in CUDA C++. nvcc compiles it to PTX when cuhal is built
// (cli/CMakeLists.txt) and the PTX is embedded in the cuhal program (cli/demo_ptx.h). On the fake
// driver, fakecuda's PTX interpreter runs it; on the real driver, the GPU. Its signature is that
// of add_one in fakecuda/sample_kernels.h, the demo's fallback where nvcc is missing.

// Adds 1 to data[i] for every i < n, in a grid-stride loop (any grid covers the buffer).
extern "C" __global__ void add_one(unsigned* data, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    data[i] += 1;
  }
}
