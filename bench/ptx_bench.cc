// Copyright 2026 The cuhal Authors.
// The speed of fakecuda's PTX interpreter (issue 16): thread-instructions per second on a plain
// arithmetic kernel (integer multiply-add, shifts, xor and f32 fma in a loop) and the time of a
// 1M-element vector add, both launched through the CudaApi table (load, launch, synchronize).
// Targets (issue 16): >= 100 M thread-instructions per second per core; the vector add well
// under a second.
//
//   build/release/bench/ptx_bench --benchmark_filter=fake
//   FAKECUDA_PTX_WORKERS=1 build/release/bench/ptx_bench --benchmark_filter=fake   (serial)
//
// The interpreter runs a launch's blocks on up to 8 worker threads (fakecuda/ptx/interpreter.h;
// FAKECUDA_PTX_WORKERS overrides the count); thread_instr_per_s is for the whole launch, so
// divide by the workers (the host's cores) for the per-core figure.
// Measured on the 2-core development machine (release build, load average 3.6 from other
// builds, 2026-12-03): arith 210 M thread-instr/s with 1 worker, 174-185 M/s with 2-4 (no cores
// free to gain from); the 1M vector add 156 ms a launch (148 M thread-instr/s).
//
// The same benchmarks run on the real driver when one loads (there, "thread_instr_per_s" counts
// the same PTX instructions the interpreter executes on the fake, which the GPU does not report).
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <string>
#include <vector>

#include "bench/bench_backend.h"
#include "core/symbols/cuda_api.h"
#include "fakecuda/ptx/interpreter.h"

namespace {

using ::cuhal::bench::Backend;

// nvcc 13.0 -ptx -arch=sm_90 -O3 of:
//   extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     if (i < n) c[i] = a[i] + b[i];
//   }
//   extern "C" __global__ void arith(unsigned* out, int iters) {
//     unsigned x = threadIdx.x + blockIdx.x * blockDim.x, y = 12345;
//     float f = 1.0f;
//     for (int k = 0; k < iters; ++k) {
//       x = x * 1664525u + 1013904223u;
//       y ^= x >> 7;
//       f = fmaf(f, 0.999f, 0.5f);
//     }
//     out[blockIdx.x * blockDim.x + threadIdx.x] = x + y + __float_as_uint(f);
//   }
constexpr char kPtx[] = R"(.version 9.0
.target sm_90
.address_size 64
	// .globl	vector_add
.visible .entry vector_add(
	.param .u64 vector_add_param_0,
	.param .u64 vector_add_param_1,
	.param .u64 vector_add_param_2,
	.param .u32 vector_add_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<11>;
	ld.param.u64 	%rd1, [vector_add_param_0];
	ld.param.u64 	%rd2, [vector_add_param_1];
	ld.param.u64 	%rd3, [vector_add_param_2];
	ld.param.u32 	%r2, [vector_add_param_3];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd4, %rd1;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	cvta.to.global.u64 	%rd7, %rd2;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.f32 	%f1, [%rd8];
	ld.global.f32 	%f2, [%rd6];
	add.f32 	%f3, %f2, %f1;
	cvta.to.global.u64 	%rd9, %rd3;
	add.s64 	%rd10, %rd9, %rd5;
	st.global.f32 	[%rd10], %f3;
$L__BB0_2:
	ret;
}
	// .globl	arith
.visible .entry arith(
	.param .u64 arith_param_0,
	.param .u32 arith_param_1
)
{
	.reg .pred 	%p<6>;
	.reg .f32 	%f<23>;
	.reg .b32 	%r<64>;
	.reg .b64 	%rd<5>;
	ld.param.u64 	%rd1, [arith_param_0];
	ld.param.u32 	%r26, [arith_param_1];
	mov.u32 	%r29, %ntid.x;
	mov.u32 	%r30, %ctaid.x;
	mov.u32 	%r31, %tid.x;
	mad.lo.s32 	%r1, %r30, %r29, %r31;
	setp.lt.s32 	%p1, %r26, 1;
	mov.u32 	%r63, 1065353216;
	mov.u32 	%r60, 12345;
	mov.u32 	%r59, %r1;
	@%p1 bra 	$L__BB1_7;
	add.s32 	%r34, %r26, -1;
	and.b32  	%r58, %r26, 3;
	setp.lt.u32 	%p2, %r34, 3;
	mov.u32 	%r60, 12345;
	mov.f32 	%f22, 0f3F800000;
	mov.u32 	%r59, %r1;
	@%p2 bra 	$L__BB1_4;
	sub.s32 	%r51, %r26, %r58;
	mov.u32 	%r60, 12345;
	mov.f32 	%f22, 0f3F800000;
	mov.u32 	%r59, %r1;
$L__BB1_3:
	mad.lo.s32 	%r36, %r59, 1664525, 1013904223;
	shr.u32 	%r37, %r36, 7;
	xor.b32  	%r38, %r37, %r60;
	mad.lo.s32 	%r39, %r36, 1664525, 1013904223;
	shr.u32 	%r40, %r39, 7;
	xor.b32  	%r41, %r40, %r38;
	mov.f32 	%f11, 0f3F000000;
	mov.f32 	%f12, 0f3F7FBE77;
	fma.rn.f32 	%f13, %f22, %f12, %f11;
	fma.rn.f32 	%f14, %f13, %f12, %f11;
	mad.lo.s32 	%r42, %r39, 1664525, 1013904223;
	shr.u32 	%r43, %r42, 7;
	xor.b32  	%r44, %r43, %r41;
	fma.rn.f32 	%f15, %f14, %f12, %f11;
	mad.lo.s32 	%r59, %r42, 1664525, 1013904223;
	shr.u32 	%r45, %r59, 7;
	xor.b32  	%r60, %r45, %r44;
	fma.rn.f32 	%f22, %f15, %f12, %f11;
	add.s32 	%r51, %r51, -4;
	setp.ne.s32 	%p3, %r51, 0;
	@%p3 bra 	$L__BB1_3;
$L__BB1_4:
	setp.eq.s32 	%p4, %r58, 0;
	@%p4 bra 	$L__BB1_6;
$L__BB1_5:
	.pragma "nounroll";
	mad.lo.s32 	%r59, %r59, 1664525, 1013904223;
	shr.u32 	%r46, %r59, 7;
	xor.b32  	%r60, %r46, %r60;
	mov.f32 	%f16, 0f3F000000;
	mov.f32 	%f17, 0f3F7FBE77;
	fma.rn.f32 	%f22, %f22, %f17, %f16;
	add.s32 	%r58, %r58, -1;
	setp.ne.s32 	%p5, %r58, 0;
	@%p5 bra 	$L__BB1_5;
$L__BB1_6:
	mov.b32 	%r63, %f22;
$L__BB1_7:
	add.s32 	%r47, %r59, %r60;
	add.s32 	%r48, %r47, %r63;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.u32 	[%rd4], %r48;
	ret;
}
)";

#define CUHAL_BENCH_CHECK(state, call)                                                    \
  do {                                                                                    \
    if (CUresult r_ = (call); r_ != CUDA_SUCCESS) {                                       \
      (state).SkipWithError((#call " = " + ::cuhal::bench::ResultName(r_)).c_str());     \
      return;                                                                             \
    }                                                                                     \
  } while (false)

// Runs `kernel` of kPtx `state.iterations()` times with `args`; reports thread-instructions per
// second (from the interpreter's counter, fake only).
void RunLaunches(benchmark::State& state, const Backend& b, const char* kernel, unsigned grid,
                 unsigned block, std::vector<void*> args) {
  const cuhal::CudaApi& api = *b.api;
  CUmodule module = nullptr;
  CUHAL_BENCH_CHECK(state, api.cuModuleLoadData(&module, kPtx));
  CUfunction f = nullptr;
  CUHAL_BENCH_CHECK(state, api.cuModuleGetFunction(&f, module, kernel));
  std::uint64_t before = fakecuda::ptx::TotalInstructions();
  for (auto _ : state) {
    CUHAL_BENCH_CHECK(state, api.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, nullptr, args.data(), nullptr));
    CUHAL_BENCH_CHECK(state, api.cuCtxSynchronize());
  }
  double instructions = static_cast<double>(fakecuda::ptx::TotalInstructions() - before);
  state.counters["thread_instr_per_s"] = benchmark::Counter(instructions, benchmark::Counter::kIsRate);
  state.counters["thread_instr_per_launch"] = instructions / static_cast<double>(state.iterations());
  CUHAL_BENCH_CHECK(state, api.cuModuleUnload(module));
}

void Arithmetic(benchmark::State& state, const Backend& b) {
  if (!b.unavailable.empty()) {
    state.SkipWithError(b.unavailable.c_str());
    return;
  }
  CUHAL_BENCH_CHECK(state, b.api->cuCtxSetCurrent(b.ctx));
  const unsigned grid = 64, block = 256;
  CUdeviceptr out = 0;
  CUHAL_BENCH_CHECK(state, b.api->cuMemAlloc(&out, grid * block * sizeof(unsigned)));
  int iters = 256;
  RunLaunches(state, b, "arith", grid, block, {&out, &iters});
  (void)b.api->cuMemFree(out);
}

void VectorAdd1M(benchmark::State& state, const Backend& b) {
  if (!b.unavailable.empty()) {
    state.SkipWithError(b.unavailable.c_str());
    return;
  }
  CUHAL_BENCH_CHECK(state, b.api->cuCtxSetCurrent(b.ctx));
  const int n = 1 << 20;
  CUdeviceptr a = 0, bb = 0, c = 0;
  CUHAL_BENCH_CHECK(state, b.api->cuMemAlloc(&a, n * sizeof(float)));
  CUHAL_BENCH_CHECK(state, b.api->cuMemAlloc(&bb, n * sizeof(float)));
  CUHAL_BENCH_CHECK(state, b.api->cuMemAlloc(&c, n * sizeof(float)));
  std::vector<float> host(n, 1.5f);
  CUHAL_BENCH_CHECK(state, b.api->cuMemcpyHtoD(a, host.data(), n * sizeof(float)));
  CUHAL_BENCH_CHECK(state, b.api->cuMemcpyHtoD(bb, host.data(), n * sizeof(float)));
  int count = n;
  RunLaunches(state, b, "vector_add", n / 256, 256, {&a, &bb, &c, &count});
  (void)b.api->cuMemFree(a);
  (void)b.api->cuMemFree(bb);
  (void)b.api->cuMemFree(c);
}

void RegisterAll() {
  for (auto [name, backend] : {std::pair{"fake", &::cuhal::bench::FakeBackend},
                               std::pair{"real", &::cuhal::bench::RealBackend}}) {
    benchmark::RegisterBenchmark((std::string("PtxArithmetic/") + name).c_str(),
                                 [backend](benchmark::State& s) { Arithmetic(s, backend()); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark((std::string("PtxVectorAdd1M/") + name).c_str(),
                                 [backend](benchmark::State& s) { VectorAdd1M(s, backend()); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
