// Copyright 2026 The cuhal Authors.
// The kernel catalogue (tests/ptx/kernels/catalogue.cu, compiled by nvcc at build time) run
// through cuModuleLoadData + cuLaunchKernel and compared with host references: on the fake
// this is the PTX interpreter, on the real backend the GPU (the nightly runs both). Exact
// operations are compared bit for bit; approximate ones (ex2/lg2/sin/cos/rsqrt .approx) within
// bounds derived from the PTX ISA's stated maximum errors.
#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/ptx/catalogue_support.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

class CatalogueTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (backend_ == nullptr || HasFatalFailure() || IsSkipped()) return;
    std::string why;
    ptx_ = CataloguePtx(&why);
    if (ptx_.empty()) {
      GTEST_SKIP() << "no PTX catalogue: " << why;
    }
    ctx_ = std::make_unique<ScopedPrimaryContext>(api());
    ASSERT_EQ(ctx_->result(), CUDA_SUCCESS);
    ASSERT_EQ(api().cuModuleLoadData(&module_, ptx_.c_str()), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (module_ != nullptr) {
      EXPECT_EQ(api().cuModuleUnload(module_), CUDA_SUCCESS);
    }
    ctx_.reset();
    BackendTest::TearDown();
  }

  struct Dim3Like {
    Dim3Like(int x_, int y_ = 1, int z_ = 1)  // NOLINT(runtime/explicit): {n} at call sites
        : x(static_cast<unsigned>(x_)), y(static_cast<unsigned>(y_)), z(static_cast<unsigned>(z_)) {}
    unsigned x, y, z;
  };
  // Launches `name` and synchronizes.
  CUresult Launch(const char* name, Dim3Like grid, Dim3Like block, std::vector<void*> args,
                  unsigned shared = 0) {
    CUfunction f = nullptr;
    if (CUresult e = api().cuModuleGetFunction(&f, module_, name); e != CUDA_SUCCESS) return e;
    if (CUresult e = api().cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared,
                                          nullptr, args.data(), nullptr);
        e != CUDA_SUCCESS) {
      return e;
    }
    return api().cuCtxSynchronize();
  }
  std::string ptx_;
  std::unique_ptr<ScopedPrimaryContext> ctx_;
  CUmodule module_ = nullptr;
};

std::uint32_t Bits(float f) { return std::bit_cast<std::uint32_t>(f); }
std::uint64_t Bits(double d) { return std::bit_cast<std::uint64_t>(d); }

TEST_P(CatalogueTest, VectorAdd) {
  const int n = 10000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * static_cast<float>(i) + 0.1f;
    b[i] = 1.0f / static_cast<float>(i + 1);
  }
  DeviceBuffer<float> da(api(), a), db(api(), b), dc(api(), n);
  int count = n;
  ASSERT_EQ(Launch("vector_add", {(n + 255) / 256}, {256}, {da.slot(), db.slot(), dc.slot(), &count}),
            CUDA_SUCCESS);
  std::vector<float> c = dc.Download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(Bits(c[i]), Bits(a[i] + b[i])) << i;
}

TEST_P(CatalogueTest, SharedMemoryReduction) {
  const int n = 5000, blocks = (n + 255) / 256;
  std::vector<int> in(n);
  std::mt19937 rng(1);
  for (int& v : in) v = static_cast<int>(rng() % 2001) - 1000;
  DeviceBuffer<int> din(api(), in), dout(api(), blocks);
  int count = n;
  ASSERT_EQ(Launch("block_reduce", {blocks}, {256}, {din.slot(), dout.slot(), &count}),
            CUDA_SUCCESS);
  std::vector<int> out = dout.Download();
  for (int b = 0; b < blocks; ++b) {
    int sum = 0;
    for (int i = b * 256; i < std::min(n, (b + 1) * 256); ++i) sum += in[i];
    EXPECT_EQ(out[b], sum) << "block " << b;
  }
}

TEST_P(CatalogueTest, WarpShuffleReduction) {
  const int n = 1000, threads = 1024, warps = threads / 32;
  std::vector<float> in(n);
  std::mt19937 rng(2);
  for (float& v : in) v = static_cast<float>(rng() % 1000) / 1000.0f;
  DeviceBuffer<float> din(api(), in), dsums(api(), warps);
  DeviceBuffer<unsigned> dballots(api(), warps);
  int count = n;
  ASSERT_EQ(Launch("warp_reduce", {threads / 256}, {256}, {din.slot(), dsums.slot(), dballots.slot(), &count}),
            CUDA_SUCCESS);
  std::vector<float> sums = dsums.Download();
  std::vector<unsigned> ballots = dballots.Download();
  for (int w = 0; w < warps; ++w) {
    float v[32];
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) {
      int i = w * 32 + l;
      v[l] = i < n ? in[i] : 0.0f;
      if (v[l] > 0.5f) ballot |= 1u << l;
    }
    // The tree of __shfl_down_sync: lanes past the end read their own value.
    for (int offset = 16; offset > 0; offset >>= 1) {
      float next[32];
      for (int l = 0; l < 32; ++l) next[l] = v[l] + (l + offset < 32 ? v[l + offset] : v[l]);
      std::copy(next, next + 32, v);
    }
    EXPECT_EQ(Bits(sums[w]), Bits(v[0])) << "warp " << w;
    EXPECT_EQ(ballots[w], ballot) << "warp " << w;
  }
}

TEST_P(CatalogueTest, WarpShufflesAndVotes) {
  const int n = 256;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 37) % 101 - (i == 200 ? 5000 : 0) + (i == 70 ? 2000 : 0);
  DeviceBuffer<int> din(api(), in), dbfly(api(), n), didx(api(), n), dup(api(), n), dall(api(), n);
  ASSERT_EQ(Launch("warp_shuffles", {2}, {128}, {din.slot(), dbfly.slot(), didx.slot(), dup.slot(), dall.slot()}),
            CUDA_SUCCESS);
  std::vector<int> bfly = dbfly.Download(), idx = didx.Download(), up = dup.Download(), all = dall.Download();
  for (int i = 0; i < n; ++i) {
    int base = i / 32 * 32, lane = i % 32;
    int total = 0;
    bool all_nonneg = true, any_big = false;
    for (int l = 0; l < 32; ++l) {
      total += in[base + l];
      all_nonneg = all_nonneg && in[base + l] >= 0;
      any_big = any_big || in[base + l] > 1000;
    }
    EXPECT_EQ(bfly[i], total) << i;
    EXPECT_EQ(idx[i], in[base + ((lane * 7) & 31)]) << i;
    EXPECT_EQ(up[i], lane >= 3 ? in[i - 3] : in[i]) << i;
    EXPECT_EQ(all[i], (all_nonneg ? 1 : 0) + 2 * (any_big ? 1 : 0)) << i;
  }
}

TEST_P(CatalogueTest, TiledMatrixMultiply) {
  const int n = 37, k = 45, m = 29;
  std::vector<float> A(n * k), B(k * m);
  std::mt19937 rng(3);
  for (float& v : A) v = static_cast<float>(static_cast<int>(rng() % 2000) - 1000) / 37.0f;
  for (float& v : B) v = static_cast<float>(static_cast<int>(rng() % 2000) - 1000) / 53.0f;
  DeviceBuffer<float> dA(api(), A), dB(api(), B), dC(api(), n * m);
  int nn = n, kk = k, mm = m;
  ASSERT_EQ(Launch("matmul_tiled", {(m + 15) / 16, (n + 15) / 16}, {16, 16},
                   {dA.slot(), dB.slot(), dC.slot(), &nn, &kk, &mm}),
            CUDA_SUCCESS);
  std::vector<float> C = dC.Download();
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < m; ++c) {
      float acc = 0.0f;
      for (int j = 0; j < k; ++j) acc = std::fma(A[r * k + j], B[j * m + c], acc);
      ASSERT_EQ(Bits(C[r * m + c]), Bits(acc)) << r << "," << c;
    }
  }
}

TEST_P(CatalogueTest, HistogramWithAtomics) {
  const int n = 100000;
  std::vector<unsigned char> data(n);
  std::mt19937 rng(4);
  for (auto& v : data) v = static_cast<unsigned char>(rng());
  DeviceBuffer<unsigned char> dd(api(), data);
  DeviceBuffer<unsigned> dbins(api(), std::vector<unsigned>(64, 0));
  int count = n;
  ASSERT_EQ(Launch("histogram", {8}, {128}, {dd.slot(), &count, dbins.slot()}), CUDA_SUCCESS);
  std::vector<unsigned> bins = dbins.Download(), want(64, 0);
  for (unsigned char v : data) want[v & 63]++;
  EXPECT_EQ(bins, want);
}

TEST_P(CatalogueTest, AtomicKinds) {
  DeviceBuffer<int> imin(api(), std::vector<int>{INT_MAX}), imax(api(), std::vector<int>{INT_MIN});
  DeviceBuffer<unsigned> uor(api(), std::vector<unsigned>{0}), inc(api(), std::vector<unsigned>{0});
  DeviceBuffer<unsigned long long> u64(api(), std::vector<unsigned long long>{0});
  DeviceBuffer<float> fadd(api(), std::vector<float>{0.0f});
  DeviceBuffer<int> cas(api(), std::vector<int>{0});
  ASSERT_EQ(Launch("atomics", {4}, {64},
                   {imin.slot(), imax.slot(), uor.slot(), u64.slot(), fadd.slot(), cas.slot(), inc.slot()}),
            CUDA_SUCCESS);
  unsigned long long sum = 0;
  for (unsigned long long i = 0; i < 256; ++i) sum += i << 20;
  EXPECT_EQ(imin.Download()[0], 1000 - 255);
  EXPECT_EQ(imax.Download()[0], 255 * 3 - 50);
  EXPECT_EQ(uor.Download()[0], 0xffffffffu);
  EXPECT_EQ(u64.Download()[0], sum);
  EXPECT_EQ(fadd.Download()[0], 128.0f);
  EXPECT_EQ(cas.Download()[0], 512);
  EXPECT_EQ(inc.Download()[0], 256u % 101u);  // atomicInc wraps to 0 after 100
}

TEST_P(CatalogueTest, InclusiveScanWithDynamicSharedMemory) {
  const int n = 200;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 13) % 17 - 8;
  DeviceBuffer<int> din(api(), in), dout(api(), n);
  int count = n;
  ASSERT_EQ(Launch("inclusive_scan", {1}, {256}, {din.slot(), dout.slot(), &count}, 256 * sizeof(int)),
            CUDA_SUCCESS);
  std::vector<int> out = dout.Download();
  int acc = 0;
  for (int i = 0; i < n; ++i) {
    acc += in[i];
    EXPECT_EQ(out[i], acc) << i;
  }
}

TEST_P(CatalogueTest, DeviceFunctionCallsAndLocalArrays) {
  const int n = 300;
  std::vector<unsigned> in(n);
  std::mt19937 rng(5);
  for (unsigned& v : in) v = rng() % 1000000;
  in[0] = 0;
  in[1] = 4294967294u;
  DeviceBuffer<unsigned> din(api(), in);
  DeviceBuffer<int> dsteps(api(), n), dsum(api(), n);
  int count = n, sel = 3;
  ASSERT_EQ(Launch("calls_and_local", {(n + 63) / 64}, {64}, {din.slot(), dsteps.slot(), dsum.slot(), &count, &sel}),
            CUDA_SUCCESS);
  std::vector<int> steps = dsteps.Download(), sums = dsum.Download();
  for (int i = 0; i < n; ++i) {
    int digits[10];
    unsigned v = in[i];
    for (int d = 0; d < 10; ++d) {
      digits[d] = static_cast<int>(v % 10);
      v /= 10;
    }
    int sum = 0;
    for (int d = 0; d < 10; ++d) sum += digits[d] * (d + 1);
    EXPECT_EQ(sums[i], sum + digits[(i + sel) % 10]) << i;
    long long x = static_cast<long long>(static_cast<unsigned>(in[i] + 1));
    int s = 0;
    while (x != 1) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      ++s;
    }
    EXPECT_EQ(steps[i], s) << i;
  }
}

TEST_P(CatalogueTest, FloatMath) {
  std::vector<float> x = {0.0f, -0.0f, 0.5f, -0.5f, 1.0f, 2.75f, -3.5f, 9.99f, -9.99f, 1e-3f, 0.1f, 7.25f};
  std::mt19937 rng(6);
  for (int i = 0; i < 100; ++i) x.push_back(static_cast<float>(static_cast<int>(rng() % 20000) - 10000) / 1000.0f);
  const int n = static_cast<int>(x.size());
  DeviceBuffer<float> dx(api(), x), dexact(api(), 6 * n), dapprox(api(), 4 * n);
  DeviceBuffer<int> dconv(api(), 2 * n);
  DeviceBuffer<double> ddbl(api(), 2 * n);
  int count = n;
  ASSERT_EQ(Launch("float_math", {(n + 63) / 64}, {64},
                   {dx.slot(), dexact.slot(), dapprox.slot(), dconv.slot(), ddbl.slot(), &count}),
            CUDA_SUCCESS);
  std::vector<float> exact = dexact.Download(), approx = dapprox.Download();
  std::vector<int> conv = dconv.Download();
  std::vector<double> dbl = ddbl.Download();
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    float a = std::fabs(v) + 1.0f;
    EXPECT_EQ(Bits(exact[6 * i + 0]), Bits(std::sqrt(a))) << v;
    EXPECT_EQ(Bits(exact[6 * i + 1]), Bits(std::fma(v, 3.0f, -1.25f))) << v;
    EXPECT_EQ(Bits(exact[6 * i + 2]), Bits(v / a)) << v;
    EXPECT_EQ(Bits(exact[6 * i + 3]), Bits(std::fmin(v, 0.25f) * std::fmax(v, -0.5f))) << v;
    EXPECT_EQ(Bits(exact[6 * i + 4]), Bits(static_cast<float>(static_cast<int>(v * 100.0f)))) << v;
    EXPECT_EQ(Bits(exact[6 * i + 5]),
              Bits(std::nearbyint(v * 7.0f) + std::floor(v) + std::ceil(v) + std::trunc(v * 3.0f)))
        << v;
    // __expf is ex2.approx(x * log2(e)): ex2's 2 ulp plus the product's rounding, scaled by |x|.
    double e = std::exp(static_cast<double>(v));
    EXPECT_NEAR(approx[4 * i + 0], e, e * (4e-7 + std::fabs(v) * 1.2e-7)) << v;
    EXPECT_NEAR(approx[4 * i + 1], std::log(static_cast<double>(a)), 2e-6) << v;
    EXPECT_NEAR(approx[4 * i + 2], std::sin(static_cast<double>(v)) + std::cos(static_cast<double>(v)), 2e-5) << v;
    double rs = 1.0 / std::sqrt(static_cast<double>(a));
    EXPECT_NEAR(approx[4 * i + 3], rs, rs * 3e-7) << v;
    EXPECT_EQ(conv[2 * i + 0], static_cast<int>(std::nearbyint(v * 1000.0f))) << v;
    float big = a * 1e9f;
    unsigned sat = big >= 4294967296.0f ? 0xffffffffu : static_cast<unsigned>(big);
    EXPECT_EQ(conv[2 * i + 1], static_cast<int>(sat)) << v;
    double d = static_cast<double>(v);
    EXPECT_EQ(Bits(dbl[2 * i + 0]), Bits(std::sqrt(d * d + 1.0) / (d + 3.0))) << v;
    EXPECT_EQ(Bits(dbl[2 * i + 1]), Bits(std::fma(d, 1.0 / 3.0, static_cast<double>(i)))) << v;
  }
}

TEST_P(CatalogueTest, IntegerDivisionModuloAndBits) {
  std::vector<int> a = {0, 1, -1, 7, -7, 100, -100, INT_MAX, INT_MIN, 123456789, -987654321, 5};
  std::vector<int> b = {1, 3, -3, 0, 2, -7, 13, -1, 2, 1000, 17, 0};
  std::mt19937 rng(7);
  for (int i = 0; i < 100; ++i) {
    a.push_back(static_cast<int>(rng()));
    b.push_back(static_cast<int>(rng()) >> (rng() % 31));
  }
  const int n = static_cast<int>(a.size());
  DeviceBuffer<int> da(api(), a), db(api(), b), d32(api(), 8 * n);
  DeviceBuffer<long long> d64(api(), 2 * n);
  int count = n;
  ASSERT_EQ(Launch("int_math", {(n + 63) / 64}, {64},
                   {da.slot(), db.slot(), d32.slot(), d64.slot(), &count}),
            CUDA_SUCCESS);
  std::vector<int> o32 = d32.Download();
  std::vector<long long> o64 = d64.Download();
  for (int i = 0; i < n; ++i) {
    int x = a[i], y = b[i];
    unsigned ux = static_cast<unsigned>(x), uy = static_cast<unsigned>(y);
    bool overflow = x == INT_MIN && y == -1;
    if (!overflow) {
      EXPECT_EQ(o32[8 * i + 0], y != 0 ? x / y : 0) << x << "/" << y;
      EXPECT_EQ(o32[8 * i + 1], y != 0 ? x % y : 0) << x << "%" << y;
    }
    EXPECT_EQ(o32[8 * i + 2], uy != 0 ? static_cast<int>(ux / uy) : 0) << i;
    EXPECT_EQ(o32[8 * i + 3], uy != 0 ? static_cast<int>(ux % uy) : 0) << i;
    unsigned absx = x < 0 ? 0u - ux : ux;
    EXPECT_EQ(o32[8 * i + 4], std::min(x, y) ^ std::max(x, y) ^ static_cast<int>(absx)) << i;
    unsigned rev = 0;
    for (int k = 0; k < 32; ++k) rev |= ((ux >> k) & 1u) << (31 - k);
    int clz = ux == 0 ? 32 : std::countl_zero(ux);
    EXPECT_EQ(o32[8 * i + 5], std::popcount(ux) + (clz << 8) + static_cast<int>(rev & 0xff0000)) << i;
    int mulhi = static_cast<int>((static_cast<long long>(x) * y) >> 32);
    unsigned umulhi = static_cast<unsigned>((static_cast<unsigned long long>(ux) * uy) >> 32);
    EXPECT_EQ(o32[8 * i + 6], static_cast<int>(static_cast<unsigned>(mulhi) + umulhi)) << i;
    unsigned sh = static_cast<unsigned>(x >> (y & 31)) + (ux >> (uy & 15)) + (ux << 3);
    EXPECT_EQ(o32[8 * i + 7], static_cast<int>(sh)) << i;
    long long lx = static_cast<long long>(x) * 1000003LL + i, ly = static_cast<long long>(y) * 7 + 1;
    EXPECT_EQ(o64[2 * i + 0], lx / ly) << i;
    EXPECT_EQ(o64[2 * i + 1], lx % ly) << i;
  }
}

CUHAL_INSTANTIATE_BACKEND_TEST(CatalogueTest);

}  // namespace
}  // namespace cuhal::testing
