// ci/gpu-probes/ptx_numerics_probe.cu: NaN bits of f16/bf16/f32 arithmetic and conversions, and
// the tensor cores' rounding (mma.sync m16n8k16 f16 -> f32). Build and run on a GPU machine:
//   nvcc -arch=sm_90 -o /tmp/ptx_numerics_probe ci/gpu-probes/ptx_numerics_probe.cu && /tmp/ptx_numerics_probe
// Results: ci/gpu-probes/results/2026-12-05-probe-ptx-numerics.txt (docs/ptx_interpreter.md).
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void nan_probe(unsigned* out) {
  __half one = __float2half(1.0f);
  unsigned short in_nans[3] = {0x7e01, 0xfe01, 0x7c01};  // qNaN payload, negative, sNaN
  int k = 0;
  for (int i = 0; i < 3; ++i) {
    __half n = __ushort_as_half(in_nans[i]);
    out[k++] = __half_as_ushort(__hadd(n, one));
    out[k++] = __half_as_ushort(__hadd(one, n));
    out[k++] = __half_as_ushort(__hmul(n, one));
    out[k++] = __half_as_ushort(__hfma(n, one, one));
    out[k++] = __float_as_uint(__half2float(n));
    __nv_bfloat16 b = __ushort_as_bfloat16(in_nans[i] == 0x7e01 ? 0x7fc1 : in_nans[i] == 0xfe01 ? 0xffc1 : 0x7f81);
    out[k++] = __bfloat16_as_ushort(__hadd(b, __float2bfloat16(1.0f)));
    out[k++] = __float_as_uint(__bfloat162float(b));
  }
  float fn = __uint_as_float(0x7fc00001u);
  out[k++] = __float_as_uint(fn + 1.0f);
  out[k++] = __float_as_uint(__fmul_rn(fn, 2.0f));
  out[k++] = __half_as_ushort(__float2half_rn(fn));
  out[k++] = __bfloat16_as_ushort(__float2bfloat16_rn(fn));
  out[k++] = __half_as_ushort(__float2half_rn(__uint_as_float(0xffc12345u)));
  out[k++] = __half_as_ushort(__hsub(__float2half(0.0f), __float2half(0.0f)));
  out[k++] = __half_as_ushort(__hdiv(__float2half(0.0f), __float2half(0.0f)));
  out[k++] = __float_as_uint(0.0f / __uint_as_float(0u) + __uint_as_float(0x7f800001u));
  out[63] = k;
}

// D = A*B + C with mma.sync m16n8k16 row.col f32.f16.f16.f32; A row 0 = [a0, a1, 0...],
// B column 0 = [b0, b1, 0...] (each lane's fragment as the ISA lays it out), C[0][0] = c.
__global__ void mma_probe(const float* params, float* out) {
  int lane = threadIdx.x;
  int group = lane >> 2, tig = lane & 3;
  // A fragment: 4 regs of f16x2: a0..a7; rows group / group+8, cols tig*2 + (0,1) / +8.
  __half a[8];
  for (int i = 0; i < 8; ++i) a[i] = __float2half(0.0f);
  __half b[4];
  for (int i = 0; i < 4; ++i) b[i] = __float2half(0.0f);
  // A(row=0,col=0..7): lanes with group 0: a[0],a[1] = cols tig*2, tig*2+1
  int which = (int)params[6];
  if (group == 0 && tig == 0) { a[0] = __float2half(params[0]); a[1] = __float2half(params[1]); }
  if (group == 0 && tig == 1) { a[0] = __float2half(params[7]); a[1] = __float2half(params[8]); }
  // B(col=0 = group 0, rows tig*2, tig*2+1): b[0], b[1]
  if (group == 0 && tig == 0) { b[0] = __float2half(params[2]); b[1] = __float2half(params[3]); }
  if (group == 0 && tig == 1) { b[0] = __float2half(params[9]); b[1] = __float2half(params[10]); }
  float c[4] = {0, 0, 0, 0};
  if (lane == 0) c[0] = params[4];
  unsigned ra[4], rb[2];
  for (int i = 0; i < 4; ++i) ra[i] = (unsigned)__half_as_ushort(a[2*i]) | ((unsigned)__half_as_ushort(a[2*i+1]) << 16);
  for (int i = 0; i < 2; ++i) rb[i] = (unsigned)__half_as_ushort(b[2*i]) | ((unsigned)__half_as_ushort(b[2*i+1]) << 16);
  float d[4];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
        "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  (void)which;
  if (lane == 0) out[0] = d[0];
}

int main() {
  unsigned* d; cudaMalloc(&d, 64 * 4); cudaMemset(d, 0, 256);
  nan_probe<<<1, 1>>>(d);
  unsigned h[64]; cudaMemcpy(h, d, 256, cudaMemcpyDeviceToHost);
  const char* names[] = {"hadd(n,1)", "hadd(1,n)", "hmul(n,1)", "hfma(n,1,1)", "half2float(n)", "bf16 hadd(n,1)", "bf162float(n)"};
  const char* ins[] = {"f16 0x7e01 / bf16 0x7fc1", "f16 0xfe01 / bf16 0xffc1", "f16 0x7c01 (sNaN) / bf16 0x7f81"};
  int k = 0;
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 7; ++j) printf("nan %s: %s = 0x%x\n", ins[i], names[j], h[k++]);
  const char* more[] = {"f32 0x7fc00001 + 1", "f32 0x7fc00001 * 2", "f2h_rn(0x7fc00001)", "f2bf16_rn(0x7fc00001)", "f2h_rn(0xffc12345)", "h 0-0", "h 0/0", "f32 0/0 + 0x7f800001"};
  for (int j = 0; j < 8; ++j) printf("nan %s = 0x%x\n", more[j], h[k++]);
  float* p; float* o; cudaMalloc(&p, 64); cudaMalloc(&o, 16);
  struct Case { const char* what; float v[11]; } cases[] = {
    {"c=1 + (3*2^-13)(2^-12) [exact 1+0.75ulp]", {3.0f/8192, 0, 1.0f/4096, 0, 1.0f, 0, 0, 0, 0, 0, 0}},
    {"c=1 + (2^-12)(2^-12)*... [1+0.5ulp tie]", {1.0f/4096, 0, 1.0f/2048, 0, 1.0f, 0, 0, 0, 0, 0, 0}},
    {"c=1 + (2^-12)(2^-12)+(2^-12)(2^-12)*1.5 [1+ 0.625ulp]", {1.0f/4096, 1.5f/4096, 1.0f/2048, 1.0f/4096, 1.0f, 0, 0, 0, 0, 0, 0}},
    {"c=-1 - (3*2^-13)(2^-12)", {-3.0f/8192, 0, 1.0f/4096, 0, -1.0f, 0, 0, 0, 0, 0, 0}},
    {"c=0: 1*1 + 2^-11*2^-11*... a0=1,b0=1,a1=2^-11,b1=2^-13", {1.0f, 1.0f/2048, 1.0f, 1.0f/8192, 0.0f, 0, 0, 0, 0, 0, 0}},
    {"c=2^24: +1*1 +1*0.5", {1.0f, 1.0f, 1.0f, 0.5f, 16777216.0f, 0, 0, 0, 0, 0, 0}},
    {"c=1: products 2^-24*0.75 in four terms", {1.0f/4096, 1.0f/4096, 0.75f/4096, 0.75f/4096, 1.0f, 0, 0, 1.0f/4096, 1.0f/4096, 0.75f/4096, 0.75f/4096}},
  };
  for (auto& cs : cases) {
    cudaMemcpy(p, cs.v, sizeof(cs.v), cudaMemcpyHostToDevice);
    mma_probe<<<1, 32>>>(p, o);
    float r; cudaMemcpy(&r, o, 4, cudaMemcpyDeviceToHost);
    unsigned bits; memcpy(&bits, &r, 4);
    printf("mma %s = %.10g (0x%08x)\n", cs.what, r, bits);
  }
  printf("status %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
