// The kernel catalogue of tests/ptx: ordinary CUDA C++ kernels, compiled to PTX by nvcc at build
// time and run on fakecuda's PTX interpreter (tests/ptx/catalogue_test.cc has their references).
// Parameters: pointers first, then 32-bit scalars (cuhal's dispatch layout: bindings, then
// constants; core/command/command_buffer.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// Sum of each block's elements, through shared memory and __syncthreads (blockDim.x == 256).
extern "C" __global__ void block_reduce(const int* in, int* out, int n) {
  __shared__ int buf[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  buf[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}

// Sum of each warp's elements with __shfl_down_sync, then one atomicAdd per warp.
extern "C" __global__ void warp_reduce(const float* in, float* warp_sums, unsigned* ballots,
                                       int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  unsigned ballot = __ballot_sync(0xffffffffu, v > 0.5f);
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  int lane = threadIdx.x & 31;
  int warp = i >> 5;
  if (lane == 0) {
    warp_sums[warp] = v;
    ballots[warp] = ballot;
  }
}

// Warp-level xor butterfly (every lane gets the total) and shfl idx/up.
extern "C" __global__ void warp_shuffles(const int* in, int* bfly, int* idx, int* up, int* all) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  int s = v;
  for (int m = 1; m < 32; m <<= 1) s += __shfl_xor_sync(0xffffffffu, s, m);
  bfly[i] = s;
  idx[i] = __shfl_sync(0xffffffffu, v, (threadIdx.x * 7) & 31);
  up[i] = __shfl_up_sync(0xffffffffu, v, 3);
  all[i] = __all_sync(0xffffffffu, v >= 0) + 2 * __any_sync(0xffffffffu, v > 1000);
}

#define TILE 16
// C = A * B, A is n x k, B is k x m (row-major), tiles of 16 x 16 in shared memory.
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int n, int k,
                                        int m) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
    int ac = t * TILE + threadIdx.x;
    int br = t * TILE + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = (row < n && ac < k) ? A[row * k + ac] : 0.0f;
    bs[threadIdx.y][threadIdx.x] = (br < k && col < m) ? B[br * m + col] : 0.0f;
    __syncthreads();
    for (int j = 0; j < TILE; ++j) acc = fmaf(as[threadIdx.y][j], bs[j][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < n && col < m) C[row * m + col] = acc;
}

// Histogram of bytes into 64 bins: shared-memory atomics, then global atomics.
extern "C" __global__ void histogram(const unsigned char* data, unsigned* bins, int n) {
  __shared__ unsigned local[64];
  for (int b = threadIdx.x; b < 64; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&local[data[i] & 63], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 64; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

// Global atomics of several kinds and types.
extern "C" __global__ void atomics(int* imin, int* imax, unsigned* uor, unsigned long long* u64add,
                                   float* fadd, int* cas_count, unsigned* inc) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicMin(imin, 1000 - i);
  atomicMax(imax, i * 3 - 50);
  atomicOr(uor, 1u << (i & 31));
  atomicAdd(u64add, (unsigned long long)i << 20);
  atomicAdd(fadd, 0.5f);
  int old = *cas_count, assumed;
  do {
    assumed = old;
    old = atomicCAS(cas_count, assumed, assumed + 2);
  } while (old != assumed);
  atomicInc(inc, 100u);
}

// Inclusive scan of one block (Hillis-Steele in shared memory, dynamic shared memory).
extern "C" __global__ void inclusive_scan(const int* in, int* out, int n) {
  extern __shared__ int tmp[];
  int t = threadIdx.x;
  tmp[t] = t < n ? in[t] : 0;
  __syncthreads();
  for (int off = 1; off < blockDim.x; off <<= 1) {
    int v = t >= off ? tmp[t - off] : 0;
    __syncthreads();
    tmp[t] += v;
    __syncthreads();
  }
  if (t < n) out[t] = tmp[t];
}

__device__ __noinline__ int collatz_steps(long long x) {
  int steps = 0;
  while (x != 1) {
    x = (x & 1) ? 3 * x + 1 : x / 2;
    ++steps;
  }
  return steps;
}

__device__ __noinline__ void fill_digits(unsigned v, int* digits, int count) {
  for (int i = 0; i < count; ++i) {
    digits[i] = v % 10;
    v /= 10;
  }
}

// Device-function calls (not inlined) and a per-thread local array indexed at run time.
extern "C" __global__ void calls_and_local(const unsigned* in, int* steps, int* digit_sum,
                                           int n, int sel) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int digits[10];
  fill_digits(in[i], digits, 10);
  int sum = 0;
  for (int d = 0; d < 10; ++d) sum += digits[d] * (d + 1);
  digit_sum[i] = sum + digits[(i + sel) % 10];
  steps[i] = collatz_steps(in[i] + 1);
}

// Float math: exact operations (sqrtf, fmaf, division, conversions) and approximate ones.
extern "C" __global__ void float_math(const float* x, float* exact, float* approx, int* conv,
                                      double* dbl, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  float a = fabsf(v) + 1.0f;
  exact[6 * i + 0] = sqrtf(a);
  exact[6 * i + 1] = fmaf(v, 3.0f, -1.25f);
  exact[6 * i + 2] = v / a;
  exact[6 * i + 3] = fminf(v, 0.25f) * fmaxf(v, -0.5f);
  exact[6 * i + 4] = (float)(int)(v * 100.0f);
  exact[6 * i + 5] = rintf(v * 7.0f) + floorf(v) + ceilf(v) + truncf(v * 3.0f);
  approx[4 * i + 0] = __expf(v);
  approx[4 * i + 1] = __logf(a);
  approx[4 * i + 2] = __sinf(v) + __cosf(v);
  approx[4 * i + 3] = rsqrtf(a);
  conv[2 * i + 0] = __float2int_rn(v * 1000.0f);
  conv[2 * i + 1] = (int)(unsigned)(a * 1e9f);
  double d = (double)v;
  dbl[2 * i + 0] = sqrt(d * d + 1.0) / (d + 3.0);
  dbl[2 * i + 1] = fma(d, 1.0 / 3.0, (double)i);
}

// Integer division and modulo (signed and unsigned, 32 and 64 bit), min/max/abs, bit tricks.
extern "C" __global__ void int_math(const int* a, const int* b, int* out32, long long* out64,
                                    int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  unsigned ux = (unsigned)x, uy = (unsigned)y;
  out32[8 * i + 0] = y != 0 ? x / y : 0;
  out32[8 * i + 1] = y != 0 ? x % y : 0;
  out32[8 * i + 2] = uy != 0 ? (int)(ux / uy) : 0;
  out32[8 * i + 3] = uy != 0 ? (int)(ux % uy) : 0;
  out32[8 * i + 4] = min(x, y) ^ max(x, y) ^ abs(x);
  out32[8 * i + 5] = __popc(ux) + (__clz(ux) << 8) + (__brev(ux) & 0xff0000);
  out32[8 * i + 6] = __mulhi(x, y) + (int)__umulhi(ux, uy);
  out32[8 * i + 7] = (x >> (y & 31)) + (int)(ux >> (uy & 15)) + (x << 3);
  long long lx = (long long)x * 1000003LL + i, ly = (long long)y * 7 + 1;
  out64[2 * i + 0] = ly != 0 ? lx / ly : 0;
  out64[2 * i + 1] = ly != 0 ? lx % ly : 0;
}

// Half-precision math: f16 and bf16 scalar and f16x2 arithmetic and conversions.
extern "C" __global__ void half_math(const float* x, unsigned short* h, unsigned short* bf,
                                     unsigned* h2, float* back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  __half a = __float2half_rn(v), b = __float2half_rz(v * 0.37f);
  __half r0 = __hadd(a, b), r1 = __hmul(a, b), r2 = __hfma(a, b, __float2half_rn(0.25f));
  __half r3 = __hsub(__hmax(a, b), __hmin(a, b));
  h[4 * i + 0] = __half_as_ushort(r0);
  h[4 * i + 1] = __half_as_ushort(r1);
  h[4 * i + 2] = __half_as_ushort(r2);
  h[4 * i + 3] = __half_as_ushort(__hlt(a, b) ? r3 : __hneg(r3));
  __nv_bfloat16 c = __float2bfloat16_rn(v), d = __float2bfloat16_rn(v * 3.1f);
  bf[3 * i + 0] = __bfloat16_as_ushort(__hadd(c, d));
  bf[3 * i + 1] = __bfloat16_as_ushort(__hmul(c, d));
  bf[3 * i + 2] = __bfloat16_as_ushort(__hfma(c, d, c));
  __half2 p = __floats2half2_rn(v, v * 0.5f), q = __floats2half2_rn(1.5f, -v);
  __half2 s = __hfma2(p, q, p);
  h2[i] = *reinterpret_cast<unsigned*>(&s);
  back[2 * i + 0] = __half2float(r2) + __low2float(s);
  back[2 * i + 1] = __bfloat162float(d) + (float)__half2int_rn(a) + (float)__half2short_rz(b);
}

// One 16x16x16 WMMA per warp (f16 in, f32 accumulate): C = A * B + C, A row-major, B column-major.
extern "C" __global__ void wmma_f16(const __half* a, const __half* b, float* c) {
  using namespace nvcuda;
  int tile = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::load_matrix_sync(fa, a + tile * 256, 16);
  wmma::load_matrix_sync(fb, b + tile * 256, 16);
  wmma::load_matrix_sync(fc, c + tile * 256, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c + tile * 256, fc, 16, wmma::mem_row_major);
}

// One 16x16x16 bf16 WMMA and one 16x16x8 tf32 WMMA (row-major everything).
extern "C" __global__ void wmma_bf16_tf32(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                          const float* x, const float* y, float* c, float* d) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 1.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_col_major);
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> ta;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> tb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> tc;
  wmma::fill_fragment(tc, 0.0f);
  wmma::load_matrix_sync(ta, x, 8);
  wmma::load_matrix_sync(tb, y, 16);
  for (int i = 0; i < ta.num_elements; ++i) ta.x[i] = wmma::__float_to_tf32(ta.x[i]);
  for (int i = 0; i < tb.num_elements; ++i) tb.x[i] = wmma::__float_to_tf32(tb.x[i]);
  wmma::mma_sync(tc, ta, tb, tc);
  wmma::store_matrix_sync(d, tc, 16, wmma::mem_row_major);
}

// mma.sync m16n8k16 (f16 -> f32) from inline PTX, the fragments in the ISA's documented layout:
// A 16x16 row-major, B 16x8 (k x n) row-major, D 16x8 row-major.
extern "C" __global__ void mma_m16n8k16(const __half* a, const __half* b, float* d) {
  int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  unsigned ra[4], rb[2];
  for (int r = 0; r < 4; ++r) {
    int row = g + 8 * (r & 1), col = 2 * q + 8 * (r >> 1);
    __half2 v = __halves2half2(a[row * 16 + col], a[row * 16 + col + 1]);
    ra[r] = *reinterpret_cast<unsigned*>(&v);
  }
  for (int r = 0; r < 2; ++r) {
    int k = 2 * q + 8 * r;
    __half2 v = __halves2half2(b[k * 8 + g], b[(k + 1) * 8 + g]);
    rb[r] = *reinterpret_cast<unsigned*>(&v);
  }
  float c0 = 0.5f, c1 = 0.5f, c2 = 0.5f, c3 = 0.5f;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  d[g * 8 + 2 * q] = c0;
  d[g * 8 + 2 * q + 1] = c1;
  d[(g + 8) * 8 + 2 * q] = c2;
  d[(g + 8) * 8 + 2 * q + 1] = c3;
}

// cp.async into shared memory (4- and 16-byte copies, the last 8 bytes zero-filled), then a
// reversal (blockDim.x == 256).
extern "C" __global__ void cp_async(const int* in, int* out) {
  __shared__ __align__(16) int s[256];
  __shared__ __align__(16) int4 v[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], 4);
  if (t < 64) __pipeline_memcpy_async(&v[t], &in[4 * t], 16, t == 63 ? 8 : 0);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = s[255 - t] + reinterpret_cast<const int*>(v)[t];
}

// The CUTLASS pattern: A (16x16, row-major) and B (16x8 k x n, row-major) staged in shared
// memory, fragments loaded with ldmatrix (.x4 for A, .x2.trans for B), then mma.sync m16n8k16.
extern "C" __global__ void ldmatrix_mma(const __half* a, const __half* b, float* d) {
  __shared__ __align__(16) __half sa[16 * 16];
  __shared__ __align__(16) __half sb[16 * 8];
  int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  for (int i = lane; i < 256; i += 32) sa[i] = a[i];
  for (int i = lane; i < 128; i += 32) sb[i] = b[i];
  __syncwarp();
  unsigned ra[4], rb[2];
  int m = lane >> 3, r = lane & 7;
  unsigned a_row = static_cast<unsigned>(__cvta_generic_to_shared(&sa[(r + 8 * (m & 1)) * 16 + 8 * (m >> 1)]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(a_row));
  unsigned b_row = static_cast<unsigned>(__cvta_generic_to_shared(&sb[(lane & 15) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
               : "=r"(rb[0]), "=r"(rb[1]) : "r"(b_row));
  float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  d[g * 8 + 2 * q] = c0;
  d[g * 8 + 2 * q + 1] = c1;
  d[(g + 8) * 8 + 2 * q] = c2;
  d[(g + 8) * 8 + 2 * q + 1] = c3;
}

// Indirect calls: a function pointer chosen per thread (nvcc emits call through a register with
// a .callprototype).
typedef int (*int_op)(int, int);
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
extern "C" __global__ void indirect_calls(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int_op ops[3] = {op_add, op_mul, op_sub};
  int_op f = ops[in[i] & 3 ? (in[i] & 3) - 1 : 0];
  out[i] = f(in[i], i + 1);
}
