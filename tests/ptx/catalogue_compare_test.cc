// Copyright 2026 The cuhal Authors.
// The kernel catalogue (tests/ptx/kernels/catalogue.cu) on the fake and on the real driver, the
// outputs compared with each other bit for bit (issue 16: "fake and real results compared, 0
// differences"). catalogue_test.cc checks each backend against host references; this test checks
// the two backends against each other, on every output element, including those the references
// leave out. Each case launches one kernel on the same inputs on both backends and counts:
//   exact values        outputs of exact operations (integer, IEEE-rounded float, atomics whose
//                       result does not depend on their order): a difference is a failure;
//   approximate values  outputs of .approx instructions (__expf, __logf, __sinf, __cosf, rsqrtf):
//                       counted and their largest distance in ulp reported; a distance beyond
//                       twice the PTX ISA's stated error (tests/ptx/approx_bounds.h: each backend
//                       may err by the bound) is a failure.
// After the last case it prints one summary line, which the GPU nightly (ci/gpu-nightly) keeps:
//   ptx catalogue, fake vs real: 0 differences in N exact values (18 kernels); ...
// Without a GPU the real side is skipped (a failure with CUHAL_REAL_REQUIRED=1) and the summary
// says the catalogue was not compared.
//
// CUHAL_PTX_COMPARE_WITH names the second backend: "real" (ptx_catalogue_compare_test) or
// "fake_adversarial" (ptx_catalogue_selfcompare_test, run in CI without a GPU: the comparison
// itself is exercised, and the interpreter's results must not depend on the scheduling policy).
#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/ptx/approx_bounds.h"
#include "tests/ptx/catalogue_support.h"
#include "tests/support/backend.h"

#ifndef CUHAL_PTX_COMPARE_WITH
#define CUHAL_PTX_COMPARE_WITH "real"
#endif
// The gtest instantiation name, distinct per executable (CTest test names must be unique).
#ifndef CUHAL_PTX_COMPARE_SUITE
#define CUHAL_PTX_COMPARE_SUITE FakeVsReal
#endif

namespace cuhal::testing {
namespace {

constexpr char kOther[] = CUHAL_PTX_COMPARE_WITH;

// One kernel argument: a device buffer (input, output, or both) or a scalar.
struct Arg {
  enum class Kind { kBuffer, kScalar };
  Kind kind = Kind::kBuffer;
  std::vector<std::byte> bytes;  // initial contents of a buffer, or the scalar's bytes
  bool output = false;           // downloaded and compared after the launch
  std::size_t element_size = 4;  // for counting values and ulp distances
  bool approximate = false;      // written by .approx instructions
  bool is_float = false;         // f32 elements (ulp distance)
  // Approximate f32 outputs: the largest distance two conforming backends may have per element
  // (twice the PTX ISA bound: tests/ptx/approx_bounds.h); a larger one fails.
  std::vector<double> tolerance;
};

struct Case {
  std::string name;
  std::string kernel;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared = 0;
  std::vector<Arg> args;
};

template <typename T>
Arg In(const std::vector<T>& v) {
  Arg a;
  a.bytes.resize(v.size() * sizeof(T));
  std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  a.element_size = sizeof(T);
  return a;
}
// An output buffer of `count` T, initially `init` everywhere.
template <typename T>
Arg Out(std::size_t count, T init = T{}) {
  Arg a = In(std::vector<T>(count, init));
  a.output = true;
  a.is_float = std::is_same_v<T, float>;
  return a;
}
template <typename T>
Arg Approx(std::size_t count) {
  Arg a = Out<T>(count);
  a.approximate = true;
  return a;
}
template <typename T>
Arg Scalar(T v) {
  Arg a;
  a.kind = Arg::Kind::kScalar;
  a.bytes.resize(sizeof(T));
  std::memcpy(a.bytes.data(), &v, sizeof(T));
  return a;
}

// float_math's approximate outputs for inputs x, with their tolerances.
Arg FloatMathApprox(const std::vector<float>& x) {
  Arg a = Approx<float>(4 * x.size());
  for (float f : x) {
    const double v = f, abs_plus_one = std::fabs(v) + 1.0;
    a.tolerance.push_back(2 * ptx_bounds::ExpBound(v));
    a.tolerance.push_back(2 * ptx_bounds::LogBound(abs_plus_one));
    a.tolerance.push_back(2 * ptx_bounds::SinCosBound(v));
    a.tolerance.push_back(2 * ptx_bounds::RsqrtBound(abs_plus_one));
  }
  return a;
}

// The catalogue's kernels on inputs like catalogue_test.cc's (other seeds).
std::vector<Case> Cases() {
  std::vector<Case> cases;
  std::mt19937 rng(20261203);
  auto ints = [&rng](std::size_t n, int lo, int hi) {
    std::vector<int> v(n);
    for (int& x : v) x = lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
    return v;
  };
  auto floats = [&rng](std::size_t n, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) * scale;
    return v;
  };
  {
    const int n = 10000;
    cases.push_back({"vector_add", "vector_add", {(n + 255) / 256, 1, 1}, {256, 1, 1}, 0,
                     {In(floats(n, 0.37f)), In(floats(n, 1.0f / 3.0f)), Out<float>(n), Scalar(n)}});
  }
  {
    const int n = 5000;
    cases.push_back({"block_reduce", "block_reduce", {(n + 255) / 256, 1, 1}, {256, 1, 1}, 0,
                     {In(ints(n, -1000, 1000)), Out<int>((n + 255) / 256), Scalar(n)}});
  }
  {
    const int n = 1000;
    cases.push_back({"warp_reduce", "warp_reduce", {4, 1, 1}, {256, 1, 1}, 0,
                     {In(floats(n, 1e-4f)), Out<float>(32), Out<unsigned>(32), Scalar(n)}});
  }
  {
    std::vector<int> in = ints(256, -100, 100);
    in[70] = 2000;
    in[200] = -5000;
    cases.push_back({"warp_shuffles", "warp_shuffles", {2, 1, 1}, {128, 1, 1}, 0,
                     {In(in), Out<int>(256), Out<int>(256), Out<int>(256), Out<int>(256)}});
  }
  {
    const int n = 37, k = 45, m = 29;
    cases.push_back({"matmul_tiled", "matmul_tiled", {(m + 15) / 16, (n + 15) / 16, 1},
                     {16, 16, 1}, 0,
                     {In(floats(n * k, 1.0f / 37.0f)), In(floats(k * m, 1.0f / 53.0f)),
                      Out<float>(n * m), Scalar(n), Scalar(k), Scalar(m)}});
  }
  {
    const int n = 100000;
    std::vector<unsigned char> data(n);
    for (auto& v : data) v = static_cast<unsigned char>(rng());
    cases.push_back({"histogram", "histogram", {8, 1, 1}, {128, 1, 1}, 0,
                     {In(data), Out<unsigned>(64), Scalar(n)}});
  }
  cases.push_back({"atomics", "atomics", {4, 1, 1}, {64, 1, 1}, 0,
                   {Out<int>(1, 0x7fffffff), Out<int>(1, -0x7fffffff - 1), Out<unsigned>(1),
                    Out<unsigned long long>(1), Out<float>(1), Out<int>(1), Out<unsigned>(1)}});
  {
    const int n = 200;
    cases.push_back({"inclusive_scan", "inclusive_scan", {1, 1, 1}, {256, 1, 1}, 256 * 4,
                     {In(ints(n, -50, 50)), Out<int>(n), Scalar(n)}});
  }
  {
    const int n = 300;
    std::vector<unsigned> in(n);
    for (unsigned& v : in) v = rng() % 1000000;
    in[0] = 0;
    in[1] = 4294967294u;
    cases.push_back({"calls_and_local", "calls_and_local", {static_cast<unsigned>(n + 63) / 64, 1, 1}, {64, 1, 1}, 0,
                     {In(in), Out<int>(n), Out<int>(n), Scalar(n), Scalar(3)}});
  }
  {
    std::vector<float> x = {0.0f, -0.0f, 0.5f, -0.5f, 1.0f, 2.75f, -3.5f, 9.99f, -9.99f, 1e-3f};
    std::vector<float> more = floats(246, 1e-3f);
    x.insert(x.end(), more.begin(), more.end());
    const int n = static_cast<int>(x.size());
    cases.push_back({"float_math", "float_math", {static_cast<unsigned>(n + 63) / 64, 1, 1}, {64, 1, 1}, 0,
                     {In(x), Out<float>(6 * n), FloatMathApprox(x), Out<int>(2 * n),
                      Out<double>(2 * n), Scalar(n)}});
  }
  {
    std::vector<int> a = {0, 1, -1, 7, -7, 100, -100, 0x7fffffff, -0x7fffffff - 1, 5};
    std::vector<int> b = {1, 3, -3, 0, 2, -7, 13, -1, 2, 0};
    for (int i = 0; i < 246; ++i) {
      a.push_back(static_cast<int>(rng()));
      b.push_back(static_cast<int>(rng()) >> (rng() % 31));
    }
    const int n = static_cast<int>(a.size());
    cases.push_back({"int_math", "int_math", {static_cast<unsigned>(n + 63) / 64, 1, 1}, {64, 1, 1}, 0,
                     {In(a), In(b), Out<int>(8 * n), Out<long long>(2 * n), Scalar(n)}});
  }
  {
    std::vector<float> x = floats(256, 1.0f / 997.0f);
    x[0] = 65000.0f;
    x[1] = 1e-5f;
    const int n = static_cast<int>(x.size());
    cases.push_back({"half_math", "half_math", {static_cast<unsigned>(n + 63) / 64, 1, 1}, {64, 1, 1}, 0,
                     {In(x), Out<std::uint16_t>(4 * n), Out<std::uint16_t>(3 * n),
                      Out<std::uint32_t>(n), Out<float>(2 * n), Scalar(n)}});
  }
  // Tensor-core inputs are small integers (f16 bits 0x4400 + k...): every sum is exact, so the
  // tensor cores' internal rounding cannot differ from the fake's.
  auto small_halves = [&rng](std::size_t n) {
    static const std::uint16_t kValues[] = {0xc400, 0xc200, 0xc000, 0xbc00, 0x0000,
                                            0x3c00, 0x4000, 0x4200, 0x4400};  // -4 .. 4
    std::vector<std::uint16_t> v(n);
    for (auto& x : v) x = kValues[rng() % 9];
    return v;
  };
  auto small_bf16 = [&rng](std::size_t n) {
    static const std::uint16_t kValues[] = {0xc080, 0xc000, 0xbf80, 0x0000, 0x3f80, 0x4000, 0x4080};
    std::vector<std::uint16_t> v(n);
    for (auto& x : v) x = kValues[rng() % 7];
    return v;
  };
  {
    std::vector<float> c(1024);
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.5f;
    Arg acc = In(c);
    acc.output = true;
    acc.is_float = true;
    cases.push_back({"wmma_f16", "wmma_f16", {2, 1, 1}, {64, 1, 1}, 0,
                     {In(small_halves(1024)), In(small_halves(1024)), acc}});
  }
  {
    std::vector<float> x(128), y(128);
    for (int i = 0; i < 128; ++i) {
      x[i] = static_cast<float>(i % 5);
      y[i] = static_cast<float>(static_cast<int>(rng() % 7) - 3);
    }
    cases.push_back({"wmma_bf16_tf32", "wmma_bf16_tf32", {1, 1, 1}, {32, 1, 1}, 0,
                     {In(small_bf16(256)), In(small_bf16(256)), In(x), In(y), Out<float>(256),
                      Out<float>(256)}});
  }
  cases.push_back({"mma_m16n8k16", "mma_m16n8k16", {1, 1, 1}, {32, 1, 1}, 0,
                   {In(small_halves(256)), In(small_halves(128)), Out<float>(128)}});
  cases.push_back({"ldmatrix_mma", "ldmatrix_mma", {1, 1, 1}, {32, 1, 1}, 0,
                   {In(small_halves(256)), In(small_halves(128)), Out<float>(128)}});
  cases.push_back({"indirect_calls", "indirect_calls", {3, 1, 1}, {128, 1, 1}, 0,
                   {In(ints(300, -1000, 1000)), Out<int>(300), Scalar(300)}});
  cases.push_back({"cp_async", "cp_async", {1, 1, 1}, {256, 1, 1}, 0,
                   {In(ints(256, -100000, 100000)), Out<int>(256)}});
  return cases;
}

// What one backend produced for one case.
struct Outputs {
  std::string failure;  // a CUDA call that failed (empty: all succeeded)
  std::vector<std::vector<std::byte>> buffers;  // each output argument's bytes, in order
};

Outputs RunCase(const CudaApi& api, const std::string& ptx, const Case& c) {
  Outputs out;
  auto check = [&out](CUresult r, const char* what) {
    if (r != CUDA_SUCCESS && out.failure.empty()) out.failure = std::string(what) + " = " + ResultName(r);
    return r == CUDA_SUCCESS;
  };
  ScopedPrimaryContext ctx(api);
  if (!check(ctx.result(), "retaining the primary context")) return out;
  CUmodule module = nullptr;
  if (!check(api.cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData")) return out;
  CUfunction f = nullptr;
  std::vector<CUdeviceptr> ptrs(c.args.size(), 0);
  if (check(api.cuModuleGetFunction(&f, module, c.kernel.c_str()), "cuModuleGetFunction")) {
    std::vector<void*> params;
    bool ok = true;
    for (std::size_t i = 0; i < c.args.size() && ok; ++i) {
      const Arg& a = c.args[i];
      if (a.kind == Arg::Kind::kScalar) {
        params.push_back(const_cast<std::byte*>(a.bytes.data()));
        continue;
      }
      ok = check(api.cuMemAlloc(&ptrs[i], std::max<std::size_t>(a.bytes.size(), 1)), "cuMemAlloc") &&
           check(api.cuMemcpyHtoD(ptrs[i], a.bytes.data(), a.bytes.size()), "cuMemcpyHtoD");
      params.push_back(&ptrs[i]);
    }
    if (ok && check(api.cuLaunchKernel(f, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
                                       c.block[2], c.shared, nullptr, params.data(), nullptr),
                    "cuLaunchKernel") &&
        check(api.cuCtxSynchronize(), "cuCtxSynchronize after the launch")) {
      for (std::size_t i = 0; i < c.args.size(); ++i) {
        if (!c.args[i].output) continue;
        std::vector<std::byte> bytes(c.args[i].bytes.size());
        if (!check(api.cuMemcpyDtoH(bytes.data(), ptrs[i], bytes.size()), "cuMemcpyDtoH")) break;
        out.buffers.push_back(std::move(bytes));
      }
    }
  }
  for (CUdeviceptr p : ptrs) {
    if (p != 0) (void)api.cuMemFree(p);
  }
  (void)api.cuModuleUnload(module);
  return out;
}

// Distance in ulp between two f32 bit patterns (both finite or equal).
std::uint64_t UlpDistance(std::uint32_t a, std::uint32_t b) {
  auto ordered = [](std::uint32_t u) -> std::int64_t {
    return (u & 0x80000000u) != 0 ? -static_cast<std::int64_t>(u & 0x7fffffffu)
                                  : static_cast<std::int64_t>(u);
  };
  std::int64_t d = ordered(a) - ordered(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

// Totals over every case, for the summary line.
struct Totals {
  int kernels = 0;
  std::uint64_t exact_values = 0;
  std::uint64_t exact_differences = 0;
  std::uint64_t approx_values = 0;
  std::uint64_t approx_not_identical = 0;
  std::uint64_t approx_max_ulp = 0;
  std::uint64_t approx_outside_bounds = 0;
  std::string not_compared;  // why the real side did not run (empty: it did)
};
Totals& TheTotals() {
  static Totals totals;
  return totals;
}

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Totals& t = TheTotals();
    if (t.kernels == 0) {
      std::printf("ptx catalogue, fake vs %s: not compared: %s\n", kOther,
                  t.not_compared.empty() ? "no case ran" : t.not_compared.c_str());
      return;
    }
    std::printf("ptx catalogue, fake vs %s: %llu differences in %llu exact values (%d kernels); "
                "%llu approximate values, %llu not bit-identical, max %llu ulp, %llu outside the PTX ISA "
                "bounds\n",
                kOther,
                static_cast<unsigned long long>(t.exact_differences),
                static_cast<unsigned long long>(t.exact_values), t.kernels,
                static_cast<unsigned long long>(t.approx_values),
                static_cast<unsigned long long>(t.approx_not_identical),
                static_cast<unsigned long long>(t.approx_max_ulp),
                static_cast<unsigned long long>(t.approx_outside_bounds));
  }
};
[[maybe_unused]] const auto* const kSummary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

class CatalogueCompareTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogueCompareTest, SameBitsOnBothBackends) {
  std::string why;
  const std::string ptx = CataloguePtx(&why);
  if (ptx.empty()) {
    TheTotals().not_compared = "no PTX catalogue: " + why;
    GTEST_SKIP() << "no PTX catalogue: " << why;
  }
  std::vector<Case> cases = Cases();
  auto it = std::find_if(cases.begin(), cases.end(),
                         [](const Case& c) { return c.name == GetParam(); });
  ASSERT_NE(it, cases.end());
  const Case& c = *it;

  Outputs fake;
  {
    std::string unavailable, error;
    std::unique_ptr<Backend> backend = Backend::Create("fake", {}, &unavailable, &error);
    ASSERT_NE(backend, nullptr) << error << unavailable;
    fake = RunCase(backend->api(), ptx, c);
    EXPECT_EQ(backend->fake()->LiveObjects().Total(), 0u) << backend->fake()->LeakReport();
  }
  ASSERT_EQ(fake.failure, "") << "on the fake";

  std::string unavailable, error;
  std::unique_ptr<Backend> backend = Backend::Create(kOther, {}, &unavailable, &error);
  if (backend == nullptr) {
    TheTotals().not_compared = std::string(kOther) + " is not available: " + error + unavailable;
    if (!error.empty()) FAIL() << error;
    TheTotals().not_compared = std::string(kOther) + " is not available: " + unavailable;
    GTEST_SKIP() << unavailable;
  }
  Outputs real = RunCase(backend->api(), ptx, c);
  ASSERT_EQ(real.failure, "") << "on " << kOther;
  if (backend->fake() != nullptr) {
    EXPECT_EQ(backend->fake()->LiveObjects().Total(), 0u) << backend->fake()->LeakReport();
  }
  ASSERT_EQ(real.buffers.size(), fake.buffers.size());

  Totals& totals = TheTotals();
  ++totals.kernels;
  std::uint64_t exact = 0, differences = 0, approx = 0, not_identical = 0, max_ulp = 0;
  std::uint64_t outside = 0;
  std::size_t buffer = 0;
  for (std::size_t i = 0; i < c.args.size(); ++i) {
    const Arg& a = c.args[i];
    if (!a.output) continue;
    const std::vector<std::byte>& f = fake.buffers[buffer];
    const std::vector<std::byte>& r = real.buffers[buffer];
    ++buffer;
    const std::size_t count = f.size() / a.element_size;
    for (std::size_t e = 0; e < count; ++e) {
      const bool same = std::memcmp(f.data() + e * a.element_size, r.data() + e * a.element_size,
                                    a.element_size) == 0;
      if (!a.approximate) {
        ++exact;
        if (!same) {
          ++differences;
          if (differences <= 10) {
            ADD_FAILURE() << c.kernel << ": argument " << i << ", element " << e
                          << " differs between fake and " << kOther;
          }
        }
        continue;
      }
      ++approx;
      if (same) continue;
      ++not_identical;
      if (a.is_float) {
        std::uint32_t fb, rb;
        std::memcpy(&fb, f.data() + e * 4, 4);
        std::memcpy(&rb, r.data() + e * 4, 4);
        max_ulp = std::max(max_ulp, UlpDistance(fb, rb));
        const double distance = std::fabs(static_cast<double>(std::bit_cast<float>(fb)) -
                                          static_cast<double>(std::bit_cast<float>(rb)));
        if (e < a.tolerance.size() && !(distance <= a.tolerance[e])) {
          ++outside;
          if (outside <= 10) {
            ADD_FAILURE() << c.kernel << ": argument " << i << ", element " << e << " differs by "
                          << distance << " between fake and " << kOther
                          << ", more than the PTX ISA bounds allow (" << a.tolerance[e] << ")";
          }
        }
      }
    }
  }
  totals.exact_values += exact;
  totals.exact_differences += differences;
  totals.approx_values += approx;
  totals.approx_not_identical += not_identical;
  totals.approx_max_ulp = std::max(totals.approx_max_ulp, max_ulp);
  totals.approx_outside_bounds += outside;
  std::printf("[ compare  ] %s: %llu differences in %llu exact values", c.kernel.c_str(),
              static_cast<unsigned long long>(differences), static_cast<unsigned long long>(exact));
  if (approx != 0) {
    std::printf("; %llu approximate values, %llu not bit-identical, max %llu ulp, %llu outside the "
                "PTX ISA bounds",
                static_cast<unsigned long long>(approx),
                static_cast<unsigned long long>(not_identical),
                static_cast<unsigned long long>(max_ulp), static_cast<unsigned long long>(outside));
  }
  std::printf("\n");
  EXPECT_EQ(differences, 0u) << c.kernel;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const Case& c : Cases()) names.push_back(c.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(CUHAL_PTX_COMPARE_SUITE, CatalogueCompareTest, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

}  // namespace
}  // namespace cuhal::testing
