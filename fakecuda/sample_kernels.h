// Copyright 2026 The cuhal Authors.
// A sample PTX module and host implementations of its kernels for the fake: what the module and
// graph conformance tests load and what `cuhal demo` launches. On the real driver the same PTX is
// JIT-compiled and runs on the GPU; on the fake the registered implementations run: a test passes
// on both only if they agree.
#ifndef CUHAL_FAKECUDA_SAMPLE_KERNELS_H_
#define CUHAL_FAKECUDA_SAMPLE_KERNELS_H_

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "fakecuda/kernel_registry.h"

namespace fakecuda {

// Kernels (hand-written PTX, as nvcc would emit for sm_80):
//   add_one(unsigned* data, unsigned n)         data[i] += 1 for i < n (i = global thread index)
//   write_params(unsigned* out, unsigned char a, struct {unsigned w[4];} s /*align 8*/,
//                unsigned c)                    out[0] = a, out[1..4] = s.w, out[5] = c
//   shared_reverse(unsigned* data)              reverses data[0, blockDim.x) through 1 KiB of
//                                               static shared memory; .maxntid 256
// Module variables: fakecuda_counter (u32 = 7), fakecuda_table (16 bytes: u32 1, 2, 3, 4),
// fakecuda_const (.const u32 = 42).
inline constexpr char kSamplePtx[] = R"PTX(//
// cuhal sample module (hand-written PTX)
//
.version 8.0
.target sm_80
.address_size 64

.visible .global .align 4 .u32 fakecuda_counter = 7;
.visible .global .align 4 .b8 fakecuda_table[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};
.visible .const .align 4 .u32 fakecuda_const = 42;

.visible .entry add_one(
	.param .u64 add_one_param_0,
	.param .u32 add_one_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [add_one_param_0];
	ld.param.u32 	%r2, [add_one_param_1];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	add.s32 	%r7, %r6, 1;
	st.global.u32 	[%rd4], %r7;
$L__BB0_2:
	ret;
}

.visible .entry write_params(
	.param .u64 write_params_param_0,
	.param .u8 write_params_param_1,
	.param .align 8 .b8 write_params_param_2[16],
	.param .u32 write_params_param_3
)
{
	.reg .b16 	%rs<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [write_params_param_0];
	ld.param.u8 	%rs1, [write_params_param_1];
	ld.param.u32 	%r2, [write_params_param_2];
	ld.param.u32 	%r3, [write_params_param_2+4];
	ld.param.u32 	%r4, [write_params_param_2+8];
	ld.param.u32 	%r5, [write_params_param_2+12];
	ld.param.u32 	%r6, [write_params_param_3];
	cvta.to.global.u64 	%rd2, %rd1;
	cvt.u32.u16 	%r1, %rs1;
	st.global.u32 	[%rd2], %r1;
	st.global.u32 	[%rd2+4], %r2;
	st.global.u32 	[%rd2+8], %r3;
	st.global.u32 	[%rd2+12], %r4;
	st.global.u32 	[%rd2+16], %r5;
	st.global.u32 	[%rd2+20], %r6;
	ret;
}

.visible .entry shared_reverse(
	.param .u64 shared_reverse_param_0
)
.maxntid 256, 1, 1
{
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<5>;
	.shared .align 4 .b8 shared_reverse_smem[1024];

	ld.param.u64 	%rd1, [shared_reverse_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r2, %ntid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r3, [%rd4];
	mov.u32 	%r4, shared_reverse_smem;
	shl.b32 	%r5, %r1, 2;
	add.s32 	%r6, %r4, %r5;
	st.shared.u32 	[%r6], %r3;
	bar.sync 	0;
	sub.s32 	%r7, %r2, %r1;
	add.s32 	%r8, %r7, -1;
	shl.b32 	%r9, %r8, 2;
	add.s32 	%r10, %r4, %r9;
	ld.shared.u32 	%r11, [%r10];
	st.global.u32 	[%rd4], %r11;
	ret;
}
)PTX";

// Byte offsets of write_params' parameters in its packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER).
inline constexpr std::size_t kWriteParamsOut = 0;
inline constexpr std::size_t kWriteParamsA = 8;
inline constexpr std::size_t kWriteParamsS = 16;
inline constexpr std::size_t kWriteParamsC = 32;
inline constexpr std::size_t kWriteParamsBytes = 36;

// Registers the fake implementations of kSamplePtx's kernels for its lifetime.
//
// Ownership: the creator owns it; each kernel is registered (fakecuda::ScopedKernel) until it is
// destroyed. Thread-safety: create and destroy on one thread; the registry is thread-safe.
// Stream ordering: the kernels run in the stream order of their launches, like any fake kernel.
class SampleKernels {
 public:
  SampleKernels() {
    kernels_.push_back(std::make_unique<ScopedKernel>(
        "add_one", [](const KernelLaunch& l) -> CUresult {
          auto n = l.Param<unsigned>(1);
          std::uint64_t threads = l.grid().Count() * l.block().Count();
          std::uint64_t count = std::min<std::uint64_t>(n, threads);
          auto* data = l.TranslateAs<unsigned>(l.Param<CUdeviceptr>(0), count);
          if (data == nullptr && count > 0) return CUDA_ERROR_ILLEGAL_ADDRESS;
          for (std::uint64_t i = 0; i < count; ++i) data[i] += 1;
          return CUDA_SUCCESS;
        }));
    kernels_.push_back(std::make_unique<ScopedKernel>(
        "write_params", [](const KernelLaunch& l) -> CUresult {
          auto* out = l.TranslateAs<unsigned>(l.Param<CUdeviceptr>(0), 6);
          if (out == nullptr) return CUDA_ERROR_ILLEGAL_ADDRESS;
          out[0] = l.Param<unsigned char>(1);
          std::memcpy(out + 1, l.param(2).data(), 16);
          out[5] = l.Param<unsigned>(3);
          return CUDA_SUCCESS;
        }));
    kernels_.push_back(std::make_unique<ScopedKernel>(
        "shared_reverse", [](const KernelLaunch& l) -> CUresult {
          unsigned n = l.block().x;
          auto* data = l.TranslateAs<unsigned>(l.Param<CUdeviceptr>(0), n);
          if (data == nullptr) return CUDA_ERROR_ILLEGAL_ADDRESS;
          std::reverse(data, data + n);
          return CUDA_SUCCESS;
        }));
  }

 private:
  std::vector<std::unique_ptr<ScopedKernel>> kernels_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_SAMPLE_KERNELS_H_
