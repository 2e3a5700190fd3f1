// Copyright 2026 The cuhal Authors.
#include "fakenccl/datatypes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

namespace fakenccl {
namespace {

// An IEEE-754-like binary format of at most 16 bits.
struct SmallFormat {
  int exp_bits;
  int mant_bits;
  bool has_inf;   // all-ones exponent means infinity (mantissa 0) or NaN; false: OCP E4M3
  bool saturate;  // overflow (and infinity) gives the largest finite value
};

constexpr SmallFormat kHalf{5, 10, true, false};
constexpr SmallFormat kBfloat16{8, 7, true, false};
constexpr SmallFormat kE4m3{4, 3, false, true};
constexpr SmallFormat kE5m2{5, 2, true, true};

int Bias(const SmallFormat& f) { return (1 << (f.exp_bits - 1)) - 1; }

double MaxFinite(const SmallFormat& f) {
  int max_exp_field = f.has_inf ? (1 << f.exp_bits) - 2 : (1 << f.exp_bits) - 1;
  // E4M3 uses the all-ones exponent for numbers, except mantissa all ones (NaN).
  int max_mant = f.has_inf ? (1 << f.mant_bits) - 1 : (1 << f.mant_bits) - 2;
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(max_mant), -f.mant_bits),
                    max_exp_field - Bias(f));
}

std::uint32_t NanBits(const SmallFormat& f) {
  std::uint32_t exp_all = (1u << f.exp_bits) - 1;
  if (!f.has_inf) return (exp_all << f.mant_bits) | ((1u << f.mant_bits) - 1);
  return (exp_all << f.mant_bits) | (1u << (f.mant_bits - 1));
}

std::uint32_t EncodeSmall(double value, const SmallFormat& f) {
  const std::uint32_t sign = std::signbit(value) ? 1u << (f.exp_bits + f.mant_bits) : 0u;
  if (std::isnan(value)) return NanBits(f);
  const std::uint32_t exp_all = (1u << f.exp_bits) - 1;
  const double max_finite = MaxFinite(f);
  auto overflow = [&]() -> std::uint32_t {
    if (f.has_inf && !f.saturate) return sign | (exp_all << f.mant_bits);
    return sign | EncodeSmall(max_finite, f);
  };
  double a = std::fabs(value);
  if (std::isinf(a)) return overflow();
  if (a == 0.0) return sign;
  const int emin = 1 - Bias(f);
  int ex = 0;
  (void)std::frexp(a, &ex);  // a = m * 2^ex, m in [0.5, 1)
  int e = ex - 1;
  int quantum = (e < emin ? emin : e) - f.mant_bits;
  double rounded = std::nearbyint(std::ldexp(a, -quantum));  // ties to even
  double v = std::ldexp(rounded, quantum);
  if (v > max_finite) return overflow();
  if (v == 0.0) return sign;
  (void)std::frexp(v, &ex);
  e = ex - 1;
  std::uint32_t exp_field;
  std::uint32_t mant;
  if (e < emin) {
    exp_field = 0;
    mant = static_cast<std::uint32_t>(std::ldexp(v, -(emin - f.mant_bits)));
  } else {
    exp_field = static_cast<std::uint32_t>(e + Bias(f));
    mant = static_cast<std::uint32_t>(std::ldexp(v, f.mant_bits - e) -
                                      std::ldexp(1.0, f.mant_bits));
  }
  return sign | (exp_field << f.mant_bits) | mant;
}

double DecodeSmall(std::uint32_t bits, const SmallFormat& f) {
  const std::uint32_t mant_mask = (1u << f.mant_bits) - 1;
  const std::uint32_t exp_all = (1u << f.exp_bits) - 1;
  const bool negative = (bits >> (f.exp_bits + f.mant_bits)) & 1u;
  const std::uint32_t exp_field = (bits >> f.mant_bits) & exp_all;
  const std::uint32_t mant = bits & mant_mask;
  double v;
  if (exp_field == exp_all && f.has_inf) {
    v = mant == 0 ? INFINITY : NAN;
  } else if (exp_field == exp_all && !f.has_inf && mant == mant_mask) {
    v = NAN;
  } else if (exp_field == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - Bias(f) - f.mant_bits);
  } else {
    v = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -f.mant_bits),
                   static_cast<int>(exp_field) - Bias(f));
  }
  return negative ? -v : v;
}

// ---- Per-type arithmetic ---------------------------------------------------------------------

template <typename T>
T LoadRaw(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void StoreRaw(T v, std::byte* p) {
  std::memcpy(p, &v, sizeof(T));
}

// fmax and fmin of floating values as glibc computes std::fmax(a, b) and std::fmin(a, b) (the
// operand that is not NaN; on a tie, +0 against -0 included, b), written out: GCC treats fmax and
// fmin as commutative and may swap their operands, so which zero came out of a tie depended on
// inlining and register allocation (fakenccl_reduce_test saw fp8 maxima of +0 and -0 differ
// between Reduce and ReduceReference after an unrelated change).
template <typename T>
inline T FloatMax(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return a > b ? a : b;
}
template <typename T>
inline T FloatMin(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return a < b ? a : b;
}

// Integers: V = T, wrapping arithmetic done in the unsigned 64-bit domain.
template <typename T>
struct IntTraits {
  using V = T;
  static constexpr bool kIsInt = true;
  static constexpr std::size_t kSize = sizeof(T);
  static V Load(const std::byte* p) { return LoadRaw<T>(p); }
  static void Store(V v, std::byte* p) { StoreRaw<T>(v, p); }
  static V Add(V a, V b) {
    return static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  }
  static V Mul(V a, V b) {
    return static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  }
  static V Max(V a, V b) { return std::max(a, b); }
  static V Min(V a, V b) { return std::min(a, b); }
  // NCCL's SumPostDiv: the magnitude divided, rounded toward zero (64-bit, as any n fits).
  static V Div(V a, int n) {
    const auto d = static_cast<std::uint64_t>(n);
    if constexpr (std::is_signed_v<T>) {
      if (a < 0) {
        std::uint64_t magnitude =
            std::uint64_t{0} - static_cast<std::uint64_t>(static_cast<std::int64_t>(a));
        return static_cast<T>(std::uint64_t{0} - magnitude / d);
      }
    }
    return static_cast<T>(static_cast<std::uint64_t>(a) / d);
  }
  static V FromDouble(double) { return V{}; }  // unused for integers
};

// float and double: native arithmetic in their own precision.
template <typename T>
struct NativeFloatTraits {
  using V = T;
  static constexpr bool kIsInt = false;
  static constexpr std::size_t kSize = sizeof(T);
  static V Load(const std::byte* p) { return LoadRaw<T>(p); }
  static void Store(V v, std::byte* p) { StoreRaw<T>(v, p); }
  static V Add(V a, V b) { return a + b; }
  static V Mul(V a, V b) { return a * b; }
  static V Max(V a, V b) { return FloatMax(a, b); }
  static V Min(V a, V b) { return FloatMin(a, b); }
  static V Div(V a, int) { return a; }  // unused: float averages are PreMulSum
  static V FromDouble(double d) { return static_cast<T>(d); }
};

// Small formats: values held as the double they decode to; each operation rounds once.
template <typename Bits, const SmallFormat& kFormat>
struct SmallFloatTraits {
  using V = double;
  static constexpr bool kIsInt = false;
  static constexpr std::size_t kSize = sizeof(Bits);
  static V Load(const std::byte* p) { return DecodeSmall(LoadRaw<Bits>(p), kFormat); }
  static void Store(V v, std::byte* p) {
    StoreRaw<Bits>(static_cast<Bits>(EncodeSmall(v, kFormat)), p);
  }
  static V Round(V v) { return DecodeSmall(EncodeSmall(v, kFormat), kFormat); }
  static V Add(V a, V b) { return Round(a + b); }
  static V Mul(V a, V b) { return Round(a * b); }
  static V Max(V a, V b) { return FloatMax(a, b); }
  static V Min(V a, V b) { return FloatMin(a, b); }
  static V Div(V a, int) { return a; }
  static V FromDouble(double d) { return Round(d); }
};

// EncodeSmall by bit manipulation of the double (no frexp/ldexp/nearbyint): the same rounding
// (to nearest, ties to even, subnormals included) and the same overflow, infinity and NaN rules,
// bit for bit (fakenccl_reduce_test compares the reductions built on each).
template <const SmallFormat& kFormat>
std::uint32_t EncodeSmallFast(double value) {
  constexpr int kM = kFormat.mant_bits;
  constexpr int kBias = (1 << (kFormat.exp_bits - 1)) - 1;
  constexpr int kEmin = 1 - kBias;
  constexpr std::uint32_t kExpAll = (1u << kFormat.exp_bits) - 1;
  constexpr std::uint32_t kMaxExpField = kFormat.has_inf ? kExpAll - 1 : kExpAll;
  constexpr std::uint32_t kMaxMant = kFormat.has_inf ? (1u << kM) - 1 : (1u << kM) - 2;
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const std::uint32_t sign = (bits >> 63) != 0 ? 1u << (kFormat.exp_bits + kM) : 0u;
  const std::uint64_t abs = bits & ~(std::uint64_t{1} << 63);
  constexpr std::uint64_t kInfBits = std::uint64_t{0x7ff} << 52;
  if (abs > kInfBits) return NanBits(kFormat);
  auto overflow = [&]() -> std::uint32_t {
    if (kFormat.has_inf && !kFormat.saturate) return sign | (kExpAll << kM);
    return sign | (kMaxExpField << kM) | kMaxMant;
  };
  if (abs == kInfBits) return overflow();
  if (abs == 0) return sign;
  const int dexp = static_cast<int>(abs >> 52);
  const std::uint64_t frac = abs & ((std::uint64_t{1} << 52) - 1);
  const std::uint64_t sig = dexp == 0 ? frac : frac | (std::uint64_t{1} << 52);
  const int e = dexp == 0 ? -1022 : dexp - 1023;  // value = sig * 2^(e - 52)
  const int top = e < kEmin ? kEmin : e;
  const int shift = (52 - kM) + (top - e);  // value / 2^(top - kM) = sig / 2^shift
  std::uint64_t r = 0;
  if (shift < 64) {
    r = sig >> shift;
    const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (r & 1) != 0)) ++r;
  }
  if (r == 0) return sign;
  int exp = top;
  if (r >= (std::uint64_t{2} << kM)) {  // rounded up to the next binade
    r >>= 1;
    ++exp;
  }
  std::uint32_t exp_field;
  std::uint32_t mant;
  if (r < (std::uint64_t{1} << kM)) {  // subnormal (only when top == kEmin)
    exp_field = 0;
    mant = static_cast<std::uint32_t>(r);
  } else {
    if (exp + kBias > static_cast<int>(kMaxExpField)) return overflow();
    exp_field = static_cast<std::uint32_t>(exp + kBias);
    mant = static_cast<std::uint32_t>(r - (std::uint64_t{1} << kM));
    if (exp_field == kMaxExpField && mant > kMaxMant) return overflow();
  }
  return sign | (exp_field << kM) | mant;
}

// Every value of a small format decoded once (DecodeSmall), for the fast traits below.
template <typename Bits, const SmallFormat& kFormat>
const double* DecodeTable() {
  static const std::vector<double>* table = [] {
    auto* t = new std::vector<double>(std::size_t{1} << (8 * sizeof(Bits)));  // never freed
    for (std::size_t i = 0; i < t->size(); ++i) {
      (*t)[i] = DecodeSmall(static_cast<std::uint32_t>(i), kFormat);
    }
    return t;
  }();
  return table->data();
}

// SmallFloatTraits with a decoding table and EncodeSmallFast: the same values, faster.
template <typename Bits, const SmallFormat& kFormat>
struct FastSmallFloatTraits : SmallFloatTraits<Bits, kFormat> {
  using V = double;
  static V Load(const std::byte* p) { return DecodeTable<Bits, kFormat>()[LoadRaw<Bits>(p)]; }
  static void Store(V v, std::byte* p) {
    StoreRaw<Bits>(static_cast<Bits>(EncodeSmallFast<kFormat>(v)), p);
  }
  static V Round(V v) { return DecodeTable<Bits, kFormat>()[EncodeSmallFast<kFormat>(v)]; }
  static V Add(V a, V b) { return Round(a + b); }
  static V Mul(V a, V b) { return Round(a * b); }
  static V FromDouble(double d) { return Round(d); }
};

template <typename Tr>
void ReduceTyped(ReduceKind kind, std::span<const std::byte* const> inputs,
                 std::span<const ScalarBytes> scalars, std::size_t count, std::byte* out) {
  using V = typename Tr::V;
  const int n = static_cast<int>(inputs.size());
  // Per-rank multipliers for PreMulSum, and for the average of floating types (1/n, rounded to
  // the type like NCCL's __float2half(float(1.0/nRanks))).
  std::vector<V> mul;
  bool premul = false;
  if (kind == ReduceKind::kPreMulSum) {
    premul = true;
    for (int r = 0; r < n; ++r) mul.push_back(Tr::Load(scalars[static_cast<size_t>(r)].data()));
  } else if (kind == ReduceKind::kAvg && !Tr::kIsInt) {
    premul = true;
    V inv = Tr::FromDouble(static_cast<double>(static_cast<float>(1.0 / n)));
    if constexpr (std::is_same_v<V, double> && Tr::kSize == 8) inv = 1.0 / n;  // f64: 1.0/nRanks
    mul.assign(static_cast<size_t>(n), inv);
  }
  for (std::size_t i = 0; i < count; ++i) {
    V acc{};
    for (int r = 0; r < n; ++r) {
      V x = Tr::Load(inputs[static_cast<size_t>(r)] + i * Tr::kSize);
      if (premul) x = Tr::Mul(x, mul[static_cast<size_t>(r)]);
      if (r == 0) {
        acc = x;
        continue;
      }
      switch (kind) {
        case ReduceKind::kSum:
        case ReduceKind::kAvg:
        case ReduceKind::kPreMulSum:
          acc = Tr::Add(acc, x);
          break;
        case ReduceKind::kProd:
          acc = Tr::Mul(acc, x);
          break;
        case ReduceKind::kMax:
          acc = Tr::Max(acc, x);
          break;
        case ReduceKind::kMin:
          acc = Tr::Min(acc, x);
          break;
      }
    }
    if (kind == ReduceKind::kAvg && Tr::kIsInt) acc = Tr::Div(acc, n);
    Tr::Store(acc, out + i * Tr::kSize);
  }
}


// ---- Fast reductions -------------------------------------------------------------------------
// The same results as ReduceTyped, bit for bit, for the types with native arithmetic (integers,
// float, double), written as loops the compiler vectorizes: a cache line of elements at a time,
// acc = in[0] (times its multiplier), then acc = acc (op) in[r] for r = 1, ..., n-1, in
// registers, then stored. Each element therefore sees the same operations in the same order as
// in ReduceTyped; every input is read once and the output written once.

template <typename T>
bool Aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0;
}

// Wrapping integer arithmetic in a wide-enough unsigned type (what IntTraits does in 64 bits).
template <typename T>
using WideUnsigned = std::conditional_t<sizeof(T) <= 4, std::uint32_t, std::uint64_t>;

// a * b, wrapping for integers (two's complement, as the GPU computes it; signed overflow in
// C++ is undefined).
template <typename T>
inline T Times(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using W = WideUnsigned<T>;
    return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
  } else {
    return a * b;
  }
}

template <typename T, ReduceKind kKind>
inline T Combine(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using W = WideUnsigned<T>;
    if constexpr (kKind == ReduceKind::kProd) {
      return Times(a, b);
    } else if constexpr (kKind == ReduceKind::kMax) {
      return a < b ? b : a;  // std::max
    } else if constexpr (kKind == ReduceKind::kMin) {
      return b < a ? b : a;  // std::min
    } else {
      return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
    }
  } else {
    if constexpr (kKind == ReduceKind::kProd) {
      return a * b;
    } else if constexpr (kKind == ReduceKind::kMax) {
      return FloatMax(a, b);
    } else if constexpr (kKind == ReduceKind::kMin) {
      return FloatMin(a, b);
    } else {
      return a + b;
    }
  }
}

// out[i .. i+len) = in[0] (* m0) (op) in[1] (* m1) (op) ... for elements i .. i+len, folded in
// rank order in `acc` (kept in registers by the caller's fixed len).
template <typename T, ReduceKind kKind, bool kPremul, std::size_t kLen>
inline void FoldLanes(std::span<const std::byte* const> inputs, std::span<const T> mul,
                      std::size_t i, T* out) {
  T acc[kLen];
  const T* in0 = reinterpret_cast<const T*>(inputs[0]) + i;
  for (std::size_t l = 0; l < kLen; ++l) {
    T x = in0[l];
    if constexpr (kPremul) x = Times(x, mul[0]);
    acc[l] = x;
  }
  for (std::size_t r = 1; r < inputs.size(); ++r) {
    const T* in = reinterpret_cast<const T*>(inputs[r]) + i;
    for (std::size_t l = 0; l < kLen; ++l) {
      T x = in[l];
      if constexpr (kPremul) x = Times(x, mul[r]);
      acc[l] = Combine<T, kKind>(acc[l], x);
    }
  }
  for (std::size_t l = 0; l < kLen; ++l) out[i + l] = acc[l];
}

template <typename T, ReduceKind kKind, bool kPremul>
void ReduceNativeAs(std::span<const std::byte* const> inputs, std::span<const T> mul,
                    std::size_t count, std::byte* out_bytes) {
  T* out = reinterpret_cast<T*>(out_bytes);
  constexpr std::size_t kLanes = 64 / sizeof(T);  // one cache line of elements at a time
  std::size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    FoldLanes<T, kKind, kPremul, kLanes>(inputs, mul, i, out);
  }
  for (; i < count; ++i) FoldLanes<T, kKind, kPremul, 1>(inputs, mul, i, out);
}

// Returns false (nothing done) when a pointer is not aligned for T: the caller falls back to
// ReduceTyped, which reads bytes.
template <typename Tr>
bool ReduceNative(ReduceKind kind, std::span<const std::byte* const> inputs,
                  std::span<const ScalarBytes> scalars, std::size_t count, std::byte* out) {
  using T = typename Tr::V;
  if (inputs.empty() || !Aligned<T>(out)) return false;
  for (const std::byte* p : inputs) {
    if (!Aligned<T>(p)) return false;
  }
  const int n = static_cast<int>(inputs.size());
  std::vector<T> mul;
  if (kind == ReduceKind::kPreMulSum) {
    for (int r = 0; r < n; ++r) mul.push_back(Tr::Load(scalars[static_cast<size_t>(r)].data()));
  } else if (kind == ReduceKind::kAvg && !Tr::kIsInt) {
    // As ReduceTyped: 1/n rounded through float, except double's exact 1.0/n.
    T inv = Tr::FromDouble(static_cast<double>(static_cast<float>(1.0 / n)));
    if constexpr (std::is_same_v<T, double>) inv = 1.0 / n;
    mul.assign(static_cast<size_t>(n), inv);
  }
  const std::span<const T> m(mul);
  if (n == 1 && mul.empty() && !(Tr::kIsInt && kind == ReduceKind::kAvg)) {
    std::memcpy(out, inputs[0], count * sizeof(T));  // one rank: each element as it is
    return true;
  }
  switch (kind) {
    case ReduceKind::kSum:
      ReduceNativeAs<T, ReduceKind::kSum, false>(inputs, m, count, out);
      return true;
    case ReduceKind::kProd:
      ReduceNativeAs<T, ReduceKind::kProd, false>(inputs, m, count, out);
      return true;
    case ReduceKind::kMax:
      ReduceNativeAs<T, ReduceKind::kMax, false>(inputs, m, count, out);
      return true;
    case ReduceKind::kMin:
      ReduceNativeAs<T, ReduceKind::kMin, false>(inputs, m, count, out);
      return true;
    case ReduceKind::kPreMulSum:
      ReduceNativeAs<T, ReduceKind::kSum, true>(inputs, m, count, out);
      return true;
    case ReduceKind::kAvg:
      if constexpr (Tr::kIsInt) {
        // The wrapped sum, then NCCL's SumPostDiv per element.
        ReduceNativeAs<T, ReduceKind::kSum, false>(inputs, m, count, out);
        T* o = reinterpret_cast<T*>(out);
        for (std::size_t i = 0; i < count; ++i) o[i] = Tr::Div(o[i], n);
      } else {
        ReduceNativeAs<T, ReduceKind::kSum, true>(inputs, m, count, out);
      }
      return true;
  }
  return false;
}

template <typename Tr>
void ReduceFast(ReduceKind kind, std::span<const std::byte* const> inputs,
                std::span<const ScalarBytes> scalars, std::size_t count, std::byte* out) {
  if (!ReduceNative<Tr>(kind, inputs, scalars, count, out)) {
    ReduceTyped<Tr>(kind, inputs, scalars, count, out);
  }
}

}  // namespace

std::size_t TypeSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* TypeName(ncclDataType_t type) {
  switch (type) {
    case ncclInt8: return "ncclInt8";
    case ncclUint8: return "ncclUint8";
    case ncclInt32: return "ncclInt32";
    case ncclUint32: return "ncclUint32";
    case ncclInt64: return "ncclInt64";
    case ncclUint64: return "ncclUint64";
    case ncclFloat16: return "ncclFloat16";
    case ncclFloat32: return "ncclFloat32";
    case ncclFloat64: return "ncclFloat64";
    case ncclBfloat16: return "ncclBfloat16";
    case ncclFloat8e4m3: return "ncclFloat8e4m3";
    case ncclFloat8e5m2: return "ncclFloat8e5m2";
    default: {
      thread_local char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "ncclDataType_t(%d)", static_cast<int>(type));
      return buffer;
    }
  }
}

bool IsFloatingType(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
    case ncclFloat32:
    case ncclFloat64:
    case ncclBfloat16:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return true;
    default:
      return false;
  }
}

const char* ReduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return "ncclSum";
    case ReduceKind::kProd: return "ncclProd";
    case ReduceKind::kMax: return "ncclMax";
    case ReduceKind::kMin: return "ncclMin";
    case ReduceKind::kAvg: return "ncclAvg";
    case ReduceKind::kPreMulSum: return "PreMulSum";
  }
  return "?";
}

void Reduce(ncclDataType_t type, ReduceKind kind, std::span<const std::byte* const> inputs,
            std::span<const ScalarBytes> scalars, std::size_t count, std::byte* out) {
  switch (type) {
    case ncclInt8: return ReduceFast<IntTraits<std::int8_t>>(kind, inputs, scalars, count, out);
    case ncclUint8: return ReduceFast<IntTraits<std::uint8_t>>(kind, inputs, scalars, count, out);
    case ncclInt32: return ReduceFast<IntTraits<std::int32_t>>(kind, inputs, scalars, count, out);
    case ncclUint32:
      return ReduceFast<IntTraits<std::uint32_t>>(kind, inputs, scalars, count, out);
    case ncclInt64: return ReduceFast<IntTraits<std::int64_t>>(kind, inputs, scalars, count, out);
    case ncclUint64:
      return ReduceFast<IntTraits<std::uint64_t>>(kind, inputs, scalars, count, out);
    case ncclFloat32:
      return ReduceFast<NativeFloatTraits<float>>(kind, inputs, scalars, count, out);
    case ncclFloat64:
      return ReduceFast<NativeFloatTraits<double>>(kind, inputs, scalars, count, out);
    case ncclFloat16:
      return ReduceTyped<FastSmallFloatTraits<std::uint16_t, kHalf>>(kind, inputs, scalars, count, out);
    case ncclBfloat16:
      return ReduceTyped<FastSmallFloatTraits<std::uint16_t, kBfloat16>>(kind, inputs, scalars, count,
                                                                     out);
    case ncclFloat8e4m3:
      return ReduceTyped<FastSmallFloatTraits<std::uint8_t, kE4m3>>(kind, inputs, scalars, count, out);
    case ncclFloat8e5m2:
      return ReduceTyped<FastSmallFloatTraits<std::uint8_t, kE5m2>>(kind, inputs, scalars, count, out);
    default:
      return;
  }
}

void ReduceReference(ncclDataType_t type, ReduceKind kind, std::span<const std::byte* const> inputs,
            std::span<const ScalarBytes> scalars, std::size_t count, std::byte* out) {
  switch (type) {
    case ncclInt8: return ReduceTyped<IntTraits<std::int8_t>>(kind, inputs, scalars, count, out);
    case ncclUint8: return ReduceTyped<IntTraits<std::uint8_t>>(kind, inputs, scalars, count, out);
    case ncclInt32: return ReduceTyped<IntTraits<std::int32_t>>(kind, inputs, scalars, count, out);
    case ncclUint32:
      return ReduceTyped<IntTraits<std::uint32_t>>(kind, inputs, scalars, count, out);
    case ncclInt64: return ReduceTyped<IntTraits<std::int64_t>>(kind, inputs, scalars, count, out);
    case ncclUint64:
      return ReduceTyped<IntTraits<std::uint64_t>>(kind, inputs, scalars, count, out);
    case ncclFloat32:
      return ReduceTyped<NativeFloatTraits<float>>(kind, inputs, scalars, count, out);
    case ncclFloat64:
      return ReduceTyped<NativeFloatTraits<double>>(kind, inputs, scalars, count, out);
    case ncclFloat16:
      return ReduceTyped<SmallFloatTraits<std::uint16_t, kHalf>>(kind, inputs, scalars, count, out);
    case ncclBfloat16:
      return ReduceTyped<SmallFloatTraits<std::uint16_t, kBfloat16>>(kind, inputs, scalars, count,
                                                                     out);
    case ncclFloat8e4m3:
      return ReduceTyped<SmallFloatTraits<std::uint8_t, kE4m3>>(kind, inputs, scalars, count, out);
    case ncclFloat8e5m2:
      return ReduceTyped<SmallFloatTraits<std::uint8_t, kE5m2>>(kind, inputs, scalars, count, out);
    default:
      return;
  }
}

double DecodeElement(ncclDataType_t type, const std::byte* p) {
  switch (type) {
    case ncclInt8: return LoadRaw<std::int8_t>(p);
    case ncclUint8: return LoadRaw<std::uint8_t>(p);
    case ncclInt32: return LoadRaw<std::int32_t>(p);
    case ncclUint32: return LoadRaw<std::uint32_t>(p);
    case ncclInt64: return static_cast<double>(LoadRaw<std::int64_t>(p));
    case ncclUint64: return static_cast<double>(LoadRaw<std::uint64_t>(p));
    case ncclFloat32: return LoadRaw<float>(p);
    case ncclFloat64: return LoadRaw<double>(p);
    case ncclFloat16: return DecodeSmall(LoadRaw<std::uint16_t>(p), kHalf);
    case ncclBfloat16: return DecodeSmall(LoadRaw<std::uint16_t>(p), kBfloat16);
    case ncclFloat8e4m3: return DecodeSmall(LoadRaw<std::uint8_t>(p), kE4m3);
    case ncclFloat8e5m2: return DecodeSmall(LoadRaw<std::uint8_t>(p), kE5m2);
    default: return 0.0;
  }
}

void EncodeElement(ncclDataType_t type, double v, std::byte* p) {
  switch (type) {
    case ncclInt8: return StoreRaw(static_cast<std::int8_t>(static_cast<std::int64_t>(v)), p);
    case ncclUint8: return StoreRaw(static_cast<std::uint8_t>(static_cast<std::int64_t>(v)), p);
    case ncclInt32: return StoreRaw(static_cast<std::int32_t>(static_cast<std::int64_t>(v)), p);
    case ncclUint32: return StoreRaw(static_cast<std::uint32_t>(static_cast<std::int64_t>(v)), p);
    case ncclInt64: return StoreRaw(static_cast<std::int64_t>(v), p);
    case ncclUint64:
      return StoreRaw(v < 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(v))
                            : static_cast<std::uint64_t>(v),
                      p);
    case ncclFloat32: return StoreRaw(static_cast<float>(v), p);
    case ncclFloat64: return StoreRaw(v, p);
    case ncclFloat16: return StoreRaw(static_cast<std::uint16_t>(EncodeSmall(v, kHalf)), p);
    case ncclBfloat16: return StoreRaw(static_cast<std::uint16_t>(EncodeSmall(v, kBfloat16)), p);
    case ncclFloat8e4m3: return StoreRaw(static_cast<std::uint8_t>(EncodeSmall(v, kE4m3)), p);
    case ncclFloat8e5m2: return StoreRaw(static_cast<std::uint8_t>(EncodeSmall(v, kE5m2)), p);
    default: return;
  }
}

std::uint16_t DoubleToHalfBits(double v) {
  return static_cast<std::uint16_t>(EncodeSmall(v, kHalf));
}
double HalfBitsToDouble(std::uint16_t bits) { return DecodeSmall(bits, kHalf); }
std::uint16_t DoubleToBfloat16Bits(double v) {
  return static_cast<std::uint16_t>(EncodeSmall(v, kBfloat16));
}
double Bfloat16BitsToDouble(std::uint16_t bits) { return DecodeSmall(bits, kBfloat16); }
std::uint8_t DoubleToE4m3Bits(double v) { return static_cast<std::uint8_t>(EncodeSmall(v, kE4m3)); }
double E4m3BitsToDouble(std::uint8_t bits) { return DecodeSmall(bits, kE4m3); }
std::uint8_t DoubleToE5m2Bits(double v) { return static_cast<std::uint8_t>(EncodeSmall(v, kE5m2)); }
double E5m2BitsToDouble(std::uint8_t bits) { return DecodeSmall(bits, kE5m2); }

}  // namespace fakenccl
