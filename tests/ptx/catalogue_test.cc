// Copyright 2026 The cuhal Authors.
// The kernel catalogue (tests/ptx/kernels/catalogue.cu, compiled by nvcc at build time) run
// through cuhal (Executable from the device's ExecutableCache, a command buffer's dispatch executed
// on a queue) and compared with host references: on the fake
// this is the PTX interpreter, on the real backend the GPU (the nightly runs both). Exact
// operations are compared bit for bit; approximate ones (ex2/lg2/sin/cos/rsqrt .approx) within
// the PTX ISA's stated maximum errors (tests/ptx/approx_bounds.h).
#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/command/command_buffer.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/executable/executable.h"
#include "tests/device/test_macros.h"
#include "tests/ptx/approx_bounds.h"
#include "tests/ptx/catalogue_support.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

// Every entry point of the catalogue, in ordinal order.
const std::vector<std::string>& EntryPoints() {
  static const std::vector<std::string> kNames = {
      "vector_add", "block_reduce", "warp_reduce", "warp_shuffles", "matmul_tiled", "histogram",
      "atomics", "inclusive_scan", "calls_and_local", "float_math", "int_math", "half_math",
      "wmma_f16", "wmma_bf16_tf32", "mma_m16n8k16", "cp_async", "ldmatrix_mma", "indirect_calls"};
  return kNames;
}

// The catalogue as a user of cuhal runs it: one Device, the PTX loaded through the device's
// ExecutableCache, each launch a one-shot command buffer (one dispatch) executed on queue 0 and
// waited for through a semaphore; buffers come from the device's allocator and move through the
// queue (Write/Read).
class CatalogueTest : public BackendTest {
 public:
  void SetUp() override {
    BackendTest::SetUp();
    if (backend_ == nullptr || HasFatalFailure() || IsSkipped()) return;
    std::string why;
    ptx_ = CataloguePtx(&why);
    if (ptx_.empty()) {
      GTEST_SKIP() << "no PTX catalogue: " << why;
    }
    CUHAL_ASSERT_OK_AND_ASSIGN(driver_, Driver::Create(&api()));
    CUHAL_ASSERT_OK_AND_ASSIGN(device_, Device::Create(*driver_, 0, DeviceParams{}));
    cache_ = std::make_unique<ExecutableCache>(*device_);
    ExecutableParams params;
    params.image = ImageBytes(ptx_);
    params.entry_points = EntryPoints();
    params.name = "ptx catalogue";
    CUHAL_ASSERT_OK_AND_ASSIGN(executable_, cache_->GetOrLoad(params));
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Executable> again, cache_->GetOrLoad(params));
    EXPECT_EQ(again.get(), executable_.get());  // loaded once
  }
  void TearDown() override {
    executable_.reset();
    cache_.reset();
    buffers_.clear();
    device_.reset();
    driver_.reset();
    BackendTest::TearDown();
  }

  // A device buffer holding `host` (or `count` zero-initialized... elements when host is empty).
  template <typename T>
  const Buffer& In(const std::vector<T>& host) {
    StatusOr<Buffer> b = device_->allocator().Allocate({}, std::max<std::size_t>(host.size(), 1) * sizeof(T));
    EXPECT_TRUE(b.ok()) << b.status();
    buffers_.push_back(std::make_unique<Buffer>(b.ok() ? std::move(b).value() : Buffer()));
    if (!host.empty()) {
      Status w = device_->queue(0).Write(std::as_bytes(std::span(host)), *buffers_.back(), 0);
      EXPECT_TRUE(w.ok()) << w;
      EXPECT_TRUE(device_->queue(0).Synchronize().ok());
    }
    return *buffers_.back();
  }
  template <typename T>
  const Buffer& Out(std::size_t count, T init = T{}) {
    return In(std::vector<T>(count, init));
  }
  template <typename T>
  std::vector<T> Read(const Buffer& b, std::size_t count) {
    std::vector<T> out(count);
    Status r = device_->queue(0).Read(b, 0, std::as_writable_bytes(std::span(out)));
    EXPECT_TRUE(r.ok()) << r;
    EXPECT_TRUE(device_->queue(0).Synchronize().ok());
    return out;
  }

  struct Dim3Like {
    Dim3Like(int x_, int y_ = 1, int z_ = 1)  // NOLINT(runtime/explicit): {n} at call sites
        : x(static_cast<unsigned>(x_)), y(static_cast<unsigned>(y_)), z(static_cast<unsigned>(z_)) {}
    unsigned x, y, z;
  };
  // Dispatches entry point `name` with `bindings` (the kernel's pointer parameters, in order)
  // and `constants` (its 32-bit scalars) and waits for it.
  Status Launch(const char* name, Dim3Like grid, Dim3Like block,
                std::vector<const Buffer*> bindings, std::vector<std::uint32_t> constants = {},
                unsigned shared = 0) {
    CUHAL_ASSIGN_OR_RETURN(const EntryPoint* entry, executable_->LookupEntryPoint(name));
    CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<CommandBuffer> cb,
                           CommandBuffer::Create(device_->cuda_api()));
    DispatchConfig config;
    config.workgroups = {grid.x, grid.y, grid.z};
    config.block = {block.x, block.y, block.z};
    config.dynamic_shared_bytes = shared;
    std::vector<BufferRef> refs;
    for (const Buffer* b : bindings) refs.push_back(BufferRef::Direct(*b));
    CUHAL_RETURN_IF_ERROR(cb->Dispatch(*executable_, entry->ordinal, config, refs, constants));
    CUHAL_RETURN_IF_ERROR(cb->End());
    CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> done, device_->CreateSemaphore(0));
    const SemaphoreValue signal[] = {{done.get(), 1}};
    CUHAL_RETURN_IF_ERROR(device_->queue(0).Execute({}, signal, std::move(cb), BindingTable{}));
    return done->Wait(1, DeadlineAfter(std::chrono::seconds(120)));
  }

  std::string ptx_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<ExecutableCache> cache_;
  std::shared_ptr<const Executable> executable_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};


// A device buffer of `count` T made by the fixture (In/Out), read back through the queue.
template <typename T>
class Buf {
 public:
  Buf(CatalogueTest* test, const std::vector<T>& host)
      : test_(test), count_(host.size()), buffer_(&test->In(host)) {}
  Buf(CatalogueTest* test, std::size_t count)
      : test_(test), count_(count), buffer_(&test->Out<T>(count)) {}
  const Buffer* b() const { return buffer_; }
  std::vector<T> Download() const { return test_->Read<T>(*buffer_, count_); }

 private:
  CatalogueTest* test_;
  std::size_t count_;
  const Buffer* buffer_;
};

template <typename T>
std::uint32_t U(T v) {
  static_assert(sizeof(T) == 4);
  return std::bit_cast<std::uint32_t>(v);
}

std::uint32_t Bits(float f) { return std::bit_cast<std::uint32_t>(f); }
std::uint64_t Bits(double d) { return std::bit_cast<std::uint64_t>(d); }

TEST_P(CatalogueTest, VectorAdd) {
  const int n = 10000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * static_cast<float>(i) + 0.1f;
    b[i] = 1.0f / static_cast<float>(i + 1);
  }
  Buf<float> da(this, a), db(this, b), dc(this, n);
  int count = n;
  CUHAL_ASSERT_OK(Launch("vector_add", {(n + 255) / 256}, {256}, {da.b(), db.b(), dc.b()}, {U(count)}));
  std::vector<float> c = dc.Download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(Bits(c[i]), Bits(a[i] + b[i])) << i;
}

TEST_P(CatalogueTest, SharedMemoryReduction) {
  const int n = 5000, blocks = (n + 255) / 256;
  std::vector<int> in(n);
  std::mt19937 rng(1);
  for (int& v : in) v = static_cast<int>(rng() % 2001) - 1000;
  Buf<int> din(this, in), dout(this, blocks);
  int count = n;
  CUHAL_ASSERT_OK(Launch("block_reduce", {blocks}, {256}, {din.b(), dout.b()}, {U(count)}));
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
  Buf<float> din(this, in), dsums(this, warps);
  Buf<unsigned> dballots(this, warps);
  int count = n;
  CUHAL_ASSERT_OK(Launch("warp_reduce", {threads / 256}, {256}, {din.b(), dsums.b(), dballots.b()}, {U(count)}));
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
  Buf<int> din(this, in), dbfly(this, n), didx(this, n), dup(this, n), dall(this, n);
  CUHAL_ASSERT_OK(Launch("warp_shuffles", {2}, {128}, {din.b(), dbfly.b(), didx.b(), dup.b(), dall.b()}));
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
  Buf<float> dA(this, A), dB(this, B), dC(this, n * m);
  int nn = n, kk = k, mm = m;
  CUHAL_ASSERT_OK(Launch("matmul_tiled", {(m + 15) / 16, (n + 15) / 16}, {16, 16},
                   {dA.b(), dB.b(), dC.b()}, {U(nn), U(kk), U(mm)}));
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
  Buf<unsigned char> dd(this, data);
  Buf<unsigned> dbins(this, std::vector<unsigned>(64, 0));
  int count = n;
  CUHAL_ASSERT_OK(Launch("histogram", {8}, {128}, {dd.b(), dbins.b()}, {U(count)}));
  std::vector<unsigned> bins = dbins.Download(), want(64, 0);
  for (unsigned char v : data) want[v & 63]++;
  EXPECT_EQ(bins, want);
}

TEST_P(CatalogueTest, AtomicKinds) {
  Buf<int> imin(this, std::vector<int>{INT_MAX}), imax(this, std::vector<int>{INT_MIN});
  Buf<unsigned> uor(this, std::vector<unsigned>{0}), inc(this, std::vector<unsigned>{0});
  Buf<unsigned long long> u64(this, std::vector<unsigned long long>{0});
  Buf<float> fadd(this, std::vector<float>{0.0f});
  Buf<int> cas(this, std::vector<int>{0});
  CUHAL_ASSERT_OK(Launch("atomics", {4}, {64},
                   {imin.b(), imax.b(), uor.b(), u64.b(), fadd.b(), cas.b(), inc.b()}));
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
  Buf<int> din(this, in), dout(this, n);
  int count = n;
  CUHAL_ASSERT_OK(Launch("inclusive_scan", {1}, {256}, {din.b(), dout.b()}, {U(count)}, 256 * sizeof(int)));
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
  Buf<unsigned> din(this, in);
  Buf<int> dsteps(this, n), dsum(this, n);
  int count = n, sel = 3;
  CUHAL_ASSERT_OK(Launch("calls_and_local", {(n + 63) / 64}, {64}, {din.b(), dsteps.b(), dsum.b()}, {U(count), U(sel)}));
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
  Buf<float> dx(this, x), dexact(this, 6 * n), dapprox(this, 4 * n);
  Buf<int> dconv(this, 2 * n);
  Buf<double> ddbl(this, 2 * n);
  int count = n;
  CUHAL_ASSERT_OK(Launch("float_math", {(n + 63) / 64}, {64},
                   {dx.b(), dexact.b(), dapprox.b(), dconv.b(), ddbl.b()}, {U(count)}));
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
    // The approximate outputs within the PTX ISA's bounds (tests/ptx/approx_bounds.h).
    const double dv = static_cast<double>(v), da = static_cast<double>(a);
    EXPECT_NEAR(approx[4 * i + 0], std::exp(dv), ptx_bounds::ExpBound(dv)) << v;
    EXPECT_NEAR(approx[4 * i + 1], std::log(da), ptx_bounds::LogBound(da)) << v;
    EXPECT_NEAR(approx[4 * i + 2], std::sin(dv) + std::cos(dv), ptx_bounds::SinCosBound(dv)) << v;
    EXPECT_NEAR(approx[4 * i + 3], 1.0 / std::sqrt(da), ptx_bounds::RsqrtBound(da)) << v;
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
  Buf<int> da(this, a), db(this, b), d32(this, 8 * n);
  Buf<long long> d64(this, 2 * n);
  int count = n;
  CUHAL_ASSERT_OK(Launch("int_math", {(n + 63) / 64}, {64},
                   {da.b(), db.b(), d32.b(), d64.b()}, {U(count)}));
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

// --- 16-bit floats, tensor-core matrix instructions, cp.async (host references below) ---------

std::uint16_t H(_Float16 h) { return std::bit_cast<std::uint16_t>(h); }
// float -> f16 rounded toward zero (a round-to-nearest conversion stepped back when it went up).
_Float16 HalfRz(float v) {
  _Float16 h = static_cast<_Float16>(v);
  if (std::fabs(static_cast<float>(h)) > std::fabs(v)) {
    h = std::bit_cast<_Float16>(static_cast<std::uint16_t>(std::bit_cast<std::uint16_t>(h) - 1));
  }
  return h;
}
// float -> bf16, round to nearest even (finite inputs).
std::uint16_t Bf16(float v) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
float Bf16Value(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }
// Exact in double for the catalogue's operands, then rounded once.
_Float16 HalfFma(_Float16 a, _Float16 b, _Float16 c) {
  return static_cast<_Float16>(static_cast<double>(a) * static_cast<double>(b) + static_cast<double>(c));
}

TEST_P(CatalogueTest, HalfPrecisionArithmeticAndConversions) {
  std::vector<float> x = {0.0f, 1.0f, -1.0f, 0.333f, 2.5f, -7.75f, 100.1f, 1e-5f, -3e-7f, 65000.0f};
  std::mt19937 rng(8);
  for (int i = 0; i < 118; ++i) x.push_back(static_cast<float>(static_cast<int>(rng() % 20001) - 10000) / 997.0f);
  const int n = static_cast<int>(x.size());
  Buf<float> dx(this, x), dback(this, 2 * n);
  Buf<std::uint16_t> dh(this, 4 * n), dbf(this, 3 * n);
  Buf<std::uint32_t> dh2(this, n);
  int count = n;
  CUHAL_ASSERT_OK(Launch("half_math", {(n + 63) / 64}, {64}, {dx.b(), dh.b(), dbf.b(), dh2.b(), dback.b()},
                         {U(count)}));
  std::vector<std::uint16_t> h = dh.Download(), bf = dbf.Download();
  std::vector<std::uint32_t> h2 = dh2.Download();
  std::vector<float> back = dback.Download();
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    const _Float16 a = static_cast<_Float16>(v), b = HalfRz(v * 0.37f);
    const _Float16 r0 = static_cast<_Float16>(a + b), r1 = static_cast<_Float16>(a * b);
    const _Float16 r2 = HalfFma(a, b, static_cast<_Float16>(0.25f));
    const _Float16 r3 = static_cast<_Float16>((a > b ? a : b) - (a < b ? a : b));
    EXPECT_EQ(h[4 * i + 0], H(r0)) << v;
    EXPECT_EQ(h[4 * i + 1], H(r1)) << v;
    EXPECT_EQ(h[4 * i + 2], H(r2)) << v;
    EXPECT_EQ(h[4 * i + 3], H(a < b ? r3 : static_cast<_Float16>(-r3))) << v;
    const std::uint16_t c = Bf16(v), d = Bf16(v * 3.1f);
    EXPECT_EQ(bf[3 * i + 0], Bf16(Bf16Value(c) + Bf16Value(d))) << v;
    EXPECT_EQ(bf[3 * i + 1], Bf16(Bf16Value(c) * Bf16Value(d))) << v;
    EXPECT_EQ(bf[3 * i + 2], Bf16(std::fma(Bf16Value(c), Bf16Value(d), Bf16Value(c)))) << v;
    const _Float16 p_lo = static_cast<_Float16>(v), p_hi = static_cast<_Float16>(v * 0.5f);
    const _Float16 q_lo = static_cast<_Float16>(1.5f), q_hi = static_cast<_Float16>(-v);
    const _Float16 s_lo = HalfFma(p_lo, q_lo, p_lo), s_hi = HalfFma(p_hi, q_hi, p_hi);
    EXPECT_EQ(h2[i], H(s_lo) | (static_cast<std::uint32_t>(H(s_hi)) << 16)) << v;
    EXPECT_EQ(Bits(back[2 * i + 0]), Bits(static_cast<float>(r2) + static_cast<float>(s_lo))) << v;
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    const int rni = static_cast<int>(std::nearbyint(fa));
    const int rzi = static_cast<int>(std::max(-32768.0f, std::min(32767.0f, std::trunc(fb))));
    EXPECT_EQ(Bits(back[2 * i + 1]), Bits(Bf16Value(d) + static_cast<float>(rni) + static_cast<float>(rzi))) << v;
  }
}

// Small integers: every product and sum is exact, so the tensor cores' internal rounding cannot
// show and the result is the exact one on the fake and the GPU alike.
std::vector<_Float16> SmallHalves(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<_Float16> v(n);
  for (auto& x : v) x = static_cast<_Float16>(static_cast<int>(rng() % 9) - 4);
  return v;
}

TEST_P(CatalogueTest, WmmaF16MatrixMultiplyAccumulate) {
  const int tiles = 4;  // 2 blocks of 2 warps
  std::vector<_Float16> a = SmallHalves(256 * tiles, 9), b = SmallHalves(256 * tiles, 10);
  std::vector<float> c(256 * tiles);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.5f;
  Buf<_Float16> da(this, a), db(this, b);
  Buf<float> dc(this, c);
  CUHAL_ASSERT_OK(Launch("wmma_f16", {2}, {64}, {da.b(), db.b(), dc.b()}));
  std::vector<float> out = dc.Download();
  for (int t = 0; t < tiles; ++t) {
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 16; ++j) {
        float acc = c[t * 256 + i * 16 + j];
        for (int k = 0; k < 16; ++k) {
          acc += static_cast<float>(a[t * 256 + i * 16 + k]) * static_cast<float>(b[t * 256 + j * 16 + k]);
        }
        ASSERT_EQ(Bits(out[t * 256 + i * 16 + j]), Bits(acc)) << t << ": " << i << "," << j;
      }
    }
  }
}

TEST_P(CatalogueTest, WmmaBf16AndTf32) {
  std::mt19937 rng(11);
  std::vector<std::uint16_t> a(256), b(256);
  for (auto& v : a) v = Bf16(static_cast<float>(static_cast<int>(rng() % 9) - 4));
  for (auto& v : b) v = Bf16(static_cast<float>(static_cast<int>(rng() % 5) - 2) * 0.25f);
  // tf32 keeps 10 mantissa bits: 1 + 2^-12 loses its low part (rounded to nearest, away).
  std::vector<float> x(128), y(128);
  for (int i = 0; i < 128; ++i) {
    x[i] = static_cast<float>(i % 5) + (i % 3 == 0 && i % 5 != 0 ? 1.0f / 4096 : 0.0f);
    y[i] = static_cast<float>(static_cast<int>(rng() % 7) - 3);
  }
  Buf<std::uint16_t> da(this, a), db(this, b);
  Buf<float> dx(this, x), dy(this, y), dc(this, 256), dd(this, 256);
  CUHAL_ASSERT_OK(Launch("wmma_bf16_tf32", {1}, {32}, {da.b(), db.b(), dx.b(), dy.b(), dc.b(), dd.b()}));
  std::vector<float> c = dc.Download(), d = dd.Download();
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      float acc = 1.0f;
      for (int k = 0; k < 16; ++k) acc += Bf16Value(a[i * 16 + k]) * Bf16Value(b[k * 16 + j]);
      EXPECT_EQ(Bits(c[j * 16 + i]), Bits(acc)) << i << "," << j;  // stored column-major
      float t = 0.0f;
      for (int k = 0; k < 8; ++k) t += std::trunc(x[i * 8 + k]) * y[k * 16 + j];
      EXPECT_EQ(Bits(d[i * 16 + j]), Bits(t)) << i << "," << j;
    }
  }
}

TEST_P(CatalogueTest, MmaSyncM16n8k16InTheIsaLayout) {
  std::vector<_Float16> a = SmallHalves(256, 12), b = SmallHalves(128, 13);
  Buf<_Float16> da(this, a), db(this, b);
  Buf<float> dd(this, 128);
  CUHAL_ASSERT_OK(Launch("mma_m16n8k16", {1}, {32}, {da.b(), db.b(), dd.b()}));
  std::vector<float> d = dd.Download();
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 8; ++j) {
      float acc = 0.5f;
      for (int k = 0; k < 16; ++k) acc += static_cast<float>(a[i * 16 + k]) * static_cast<float>(b[k * 8 + j]);
      EXPECT_EQ(Bits(d[i * 8 + j]), Bits(acc)) << i << "," << j;
    }
  }
}

TEST_P(CatalogueTest, LdmatrixFeedsMmaSync) {
  std::vector<_Float16> a = SmallHalves(256, 14), b = SmallHalves(128, 15);
  Buf<_Float16> da(this, a), db(this, b);
  Buf<float> dd(this, 128);
  CUHAL_ASSERT_OK(Launch("ldmatrix_mma", {1}, {32}, {da.b(), db.b(), dd.b()}));
  std::vector<float> d = dd.Download();
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 8; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < 16; ++k) acc += static_cast<float>(a[i * 16 + k]) * static_cast<float>(b[k * 8 + j]);
      EXPECT_EQ(Bits(d[i * 8 + j]), Bits(acc)) << i << "," << j;
    }
  }
}

TEST_P(CatalogueTest, IndirectCallsThroughFunctionPointers) {
  const int n = 300;
  std::vector<int> in(n);
  std::mt19937 rng(16);
  for (int& v : in) v = static_cast<int>(rng() % 2001) - 1000;
  Buf<int> din(this, in), dout(this, n);
  int count = n;
  CUHAL_ASSERT_OK(Launch("indirect_calls", {(n + 127) / 128}, {128}, {din.b(), dout.b()}, {U(count)}));
  std::vector<int> out = dout.Download();
  for (int i = 0; i < n; ++i) {
    const int k = in[i] & 3, b = i + 1;
    const int want = k <= 1 ? in[i] + b : k == 2 ? in[i] * b : in[i] - b;
    EXPECT_EQ(out[i], want) << i;
  }
}

TEST_P(CatalogueTest, CpAsyncCopiesAndZeroFills) {
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = i * 11 - 1000;
  Buf<int> din(this, in), dout(this, 256);
  CUHAL_ASSERT_OK(Launch("cp_async", {1}, {256}, {din.b(), dout.b()}));
  std::vector<int> out = dout.Download();
  for (int t = 0; t < 256; ++t) EXPECT_EQ(out[t], in[255 - t] + (t < 254 ? in[t] : 0)) << t;
}

CUHAL_INSTANTIATE_BACKEND_TEST(CatalogueTest);

}  // namespace
}  // namespace cuhal::testing
