// Copyright 2026 The cuhal Authors.
// Handlers of the 16-bit floating-point types (f16, bf16 and their x2 pairs) and of tf32:
// arithmetic, comparisons and conversions (see ops.h for the rounding rules). Values are
// decoded exactly to double, computed there, and rounded once to the destination format by
// RoundToFormat, which implements every PTX rounding mode for any IEEE-like format.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fakecuda/ptx/ops_common.h"

namespace fakecuda::ptx {

std::uint32_t RoundToFormat(double x, int exp_bits, int mant_bits, std::uint8_t mode) {
  const std::uint32_t exp_all = (1u << exp_bits) - 1;
  const std::uint32_t sign = std::signbit(x) ? 1u << (exp_bits + mant_bits) : 0u;
  if (std::isnan(x)) return (exp_all << mant_bits) | ((1u << mant_bits) - 1);  // canonical 0x7fff
  const std::uint32_t inf = sign | (exp_all << mant_bits);
  const std::uint32_t max_finite = sign | ((exp_all - 1) << mant_bits) | ((1u << mant_bits) - 1);
  if (std::isinf(x)) return inf;
  double a = std::fabs(x);
  if (a == 0) return sign;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int emin = 1 - bias;
  int e = std::ilogb(a);
  if (e < emin) e = emin;                        // subnormal: the quantum of the smallest binade
  const double n = std::ldexp(a, mant_bits - e);  // exact: a / quantum
  double whole = std::floor(n);
  const double frac = n - whole;
  const bool negative = sign != 0;
  bool up = false;
  switch (mode) {
    case kRz: break;
    case kRm: up = negative && frac > 0; break;
    case kRp: up = !negative && frac > 0; break;
    case kRna: up = frac >= 0.5; break;
    default: up = frac > 0.5 || (frac == 0.5 && std::fmod(whole, 2.0) != 0); break;
  }
  if (up) whole += 1;
  // whole * 2^(e - mant_bits); whole < 2^mant_bits only in the subnormal binade.
  std::uint64_t m = static_cast<std::uint64_t>(whole);
  std::int64_t field = e + bias;
  if (m >= (std::uint64_t{2} << mant_bits)) {  // rounded up into the next binade
    m >>= 1;
    ++field;
  }
  if (m < (std::uint64_t{1} << mant_bits)) field = 0;  // subnormal (or zero)
  if (field >= static_cast<std::int64_t>(exp_all)) {  // overflow
    bool to_inf = mode == kRn || mode == kRnDefault || mode == kRna ||
                  (mode == kRm && negative) || (mode == kRp && !negative);
    return to_inf ? inf : max_finite;
  }
  std::uint32_t mant = static_cast<std::uint32_t>(m & ((std::uint64_t{1} << mant_bits) - 1));
  return sign | (static_cast<std::uint32_t>(field) << mant_bits) | mant;
}

double DecodeFormat(std::uint32_t bits, int exp_bits, int mant_bits) {
  const std::uint32_t exp_all = (1u << exp_bits) - 1;
  const bool negative = ((bits >> (exp_bits + mant_bits)) & 1) != 0;
  const std::uint32_t field = (bits >> mant_bits) & exp_all;
  const std::uint32_t mant = bits & ((1u << mant_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  double v;
  if (field == exp_all) {
    v = mant != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (field == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - bias - mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1u << mant_bits)), static_cast<int>(field) - bias - mant_bits);
  }
  return negative ? -v : v;
}

namespace {

struct F16 {
  static constexpr int kExp = 5, kMant = 10;
};
struct BF16 {
  static constexpr int kExp = 8, kMant = 7;
};

template <typename F>
double Decode(std::uint32_t bits) {
  return DecodeFormat(bits & 0xffffu, F::kExp, F::kMant);
}

template <typename F>
bool Subnormal(std::uint32_t bits) {
  return ((bits >> F::kMant) & ((1u << F::kExp) - 1)) == 0 && (bits & ((1u << F::kMant) - 1)) != 0;
}

template <typename F>
std::uint32_t FlushBits(std::uint32_t bits, bool ftz) {
  bits &= 0xffffu;
  return ftz && Subnormal<F>(bits) ? bits & 0x8000u : bits;
}

// The result bits of `r` (exact or round-to-odd) in format F with the modifiers of `in`.
template <typename F>
std::uint32_t Finish(const Instr& in, double r) {
  std::uint8_t mode = in.mode == kRnDefault ? std::uint8_t{kRn} : in.mode;
  if ((in.mode2 & kSat) != 0) r = std::isnan(r) || r <= 0 ? 0.0 : (r > 1 ? 1.0 : r);
  if ((in.mode2 & kRelu) != 0 && !std::isnan(r) && r <= 0) r = 0.0;
  std::uint32_t bits = RoundToFormat(r, F::kExp, F::kMant, mode);
  return FlushBits<F>(bits, (in.mode2 & kFtz) != 0);
}

// a * b + c for values of a 16-bit format: a * b is exact in double; the sum is made
// round-to-odd (sticky in the last bit), so rounding it once more to the 16-bit format gives the
// correctly rounded fma.
double FmaToOdd(double a, double b, double c) {
  const double p = a * b;
  const double s = p + c;
  if (!std::isfinite(s)) return s;
  const double bp = s - p;
  const double err = (p - (s - bp)) + (c - bp);  // TwoSum: s + err == p + c exactly
  if (err == 0) return s;
  std::uint64_t bits = std::bit_cast<std::uint64_t>(s);
  if ((err < 0) != std::signbit(s)) bits -= 1;  // s was rounded away from zero: step back
  return std::bit_cast<double>(bits | 1);
}

// max/min: a NaN operand gives the other one (both NaN: NaN); -0 orders below +0; .NaN
// propagates a NaN operand.
double MinMax(double a, double b, bool is_max, bool nan_propagating) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nan_propagating || (std::isnan(a) && std::isnan(b))) return std::numeric_limits<double>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b) return is_max ? (std::signbit(a) ? b : a) : (std::signbit(a) ? a : b);
  return is_max ? std::max(a, b) : std::min(a, b);
}

template <typename F, FloatOp kOp>
std::uint32_t One(const Instr& in, std::uint32_t ab, std::uint32_t bb, std::uint32_t cb) {
  const bool ftz = (in.mode2 & kFtz) != 0;
  if constexpr (kOp == FloatOp::kNeg) return (ab ^ 0x8000u) & 0xffffu;
  if constexpr (kOp == FloatOp::kAbs) return ab & 0x7fffu;
  const double a = Decode<F>(FlushBits<F>(ab, ftz));
  const double b = Decode<F>(FlushBits<F>(bb, ftz));
  const double c = Decode<F>(FlushBits<F>(cb, ftz));
  double r = 0;
  if constexpr (kOp == FloatOp::kAdd) r = a + b;
  if constexpr (kOp == FloatOp::kSub) r = a - b;
  if constexpr (kOp == FloatOp::kMul) r = a * b;
  if constexpr (kOp == FloatOp::kFma) r = FmaToOdd(a, b, c);
  if constexpr (kOp == FloatOp::kEx2) r = std::exp2(a);
  if constexpr (kOp == FloatOp::kTanh) r = std::tanh(a);
  if constexpr (kOp == FloatOp::kMin || kOp == FloatOp::kMax) {
    r = MinMax(a, b, kOp == FloatOp::kMax, (in.mode2 & kNanPropagating) != 0);
    if (!std::isnan(r)) {  // exact: keep the operand's bits (a zero's sign included)
      std::uint32_t pick = (r == a && std::signbit(r) == std::signbit(a)) ? ab : bb;
      std::uint32_t bits = FlushBits<F>(pick, ftz);
      if ((in.mode2 & kRelu) != 0 && (bits & 0x8000u) != 0) bits = 0;
      return bits;
    }
  }
  return Finish<F>(in, r);
}

template <typename F, int kLanes, FloatOp kOp>
Action HalfOp(Thread& t, const Instr& in) {
  std::uint32_t a = static_cast<std::uint32_t>(t.r[in.a]);
  std::uint32_t b = static_cast<std::uint32_t>(t.r[in.b]);
  std::uint32_t c = static_cast<std::uint32_t>(t.r[in.c]);
  std::uint32_t r = One<F, kOp>(in, a & 0xffffu, b & 0xffffu, c & 0xffffu);
  if constexpr (kLanes == 2) r |= One<F, kOp>(in, a >> 16, b >> 16, c >> 16) << 16;
  t.r[in.d] = r;
  return Action::kNext;
}

template <typename F, int kLanes>
Handler HalfFor(FloatOp op) {
  switch (op) {
    case FloatOp::kAdd: return &HalfOp<F, kLanes, FloatOp::kAdd>;
    case FloatOp::kSub: return &HalfOp<F, kLanes, FloatOp::kSub>;
    case FloatOp::kMul: return &HalfOp<F, kLanes, FloatOp::kMul>;
    case FloatOp::kFma: return &HalfOp<F, kLanes, FloatOp::kFma>;
    case FloatOp::kMin: return &HalfOp<F, kLanes, FloatOp::kMin>;
    case FloatOp::kMax: return &HalfOp<F, kLanes, FloatOp::kMax>;
    case FloatOp::kAbs: return &HalfOp<F, kLanes, FloatOp::kAbs>;
    case FloatOp::kNeg: return &HalfOp<F, kLanes, FloatOp::kNeg>;
    case FloatOp::kEx2: return &HalfOp<F, kLanes, FloatOp::kEx2>;
    case FloatOp::kTanh: return &HalfOp<F, kLanes, FloatOp::kTanh>;
    default: return nullptr;
  }
}

template <typename F>
bool CompareHalf(const Instr& in, std::uint32_t a, std::uint32_t b) {
  const bool ftz = (in.mode2 & kFtz) != 0;
  return Compare<double>(in.mode, Decode<F>(FlushBits<F>(a, ftz)), Decode<F>(FlushBits<F>(b, ftz)));
}

// setp: Instr::e holds the .bool op (mode2 carries .ftz here).
template <typename F, int kLanes>
Action HalfSetp(Thread& t, const Instr& in) {
  std::uint32_t a = static_cast<std::uint32_t>(t.r[in.a]), b = static_cast<std::uint32_t>(t.r[in.b]);
  const bool c = (t.r[in.c] & 1) != 0;
  const auto op = static_cast<std::uint8_t>(in.imm);
  const bool lo = CompareHalf<F>(in, a & 0xffffu, b & 0xffffu);
  if constexpr (kLanes == 1) {
    t.r[in.d] = Combine(op, lo, c) ? 1 : 0;
    t.r[in.d2] = Combine(op, !lo, c) ? 1 : 0;
  } else {
    t.r[in.d] = Combine(op, lo, c) ? 1 : 0;
    t.r[in.d2] = Combine(op, CompareHalf<F>(in, a >> 16, b >> 16), c) ? 1 : 0;
  }
  return Action::kNext;
}

// set: Instr::width is the destination element (4: u32/s32/f32 of a scalar compare, 2: halves of
// an x2 destination); Instr::sign: the destination is a float (1.0 for true).
template <typename F, int kLanes>
Action HalfSet(Thread& t, const Instr& in) {
  std::uint32_t a = static_cast<std::uint32_t>(t.r[in.a]), b = static_cast<std::uint32_t>(t.r[in.b]);
  const bool c = (t.r[in.c] & 1) != 0;
  const auto op = static_cast<std::uint8_t>(in.imm);
  auto value = [&](bool r) -> std::uint32_t {
    if (in.width == 4) return r ? (in.sign ? 0x3f800000u : 0xffffffffu) : 0u;
    if (!r) return 0u;
    return in.sign ? RoundToFormat(1.0, F::kExp, F::kMant, kRn) : 0xffffu;
  };
  std::uint32_t r = value(Combine(op, CompareHalf<F>(in, a & 0xffffu, b & 0xffffu), c));
  if constexpr (kLanes == 2) r |= value(Combine(op, CompareHalf<F>(in, a >> 16, b >> 16), c)) << 16;
  t.r[in.d] = r;
  return Action::kNext;
}

// --- conversions ---------------------------------------------------------------------------

double RoundToInt(double v, std::uint8_t mode) {
  switch (mode) {
    case kRz: return std::trunc(v);
    case kRm: return std::floor(v);
    case kRp: return std::ceil(v);
    default: return std::nearbyint(v);
  }
}

// The source value of a cvt as a double (exact), for every source type.
template <typename S>
double SourceValue(Thread& t, const Instr& in) {
  const bool ftz = (in.mode2 & kFtz) != 0;
  if constexpr (std::is_same_v<S, F16> || std::is_same_v<S, BF16>) {
    return Decode<S>(FlushBits<S>(static_cast<std::uint32_t>(t.r[in.a]), ftz));
  } else if constexpr (std::is_floating_point_v<S>) {
    S v = Rd<S>(t, in.a);
    if (ftz && std::fpclassify(v) == FP_SUBNORMAL) v = std::copysign(S{0}, v);
    return static_cast<double>(v);
  } else {
    return static_cast<double>(Rd<S>(t, in.a));
  }
}

// cvt to a 16-bit float (or from one to another, with .rni-style rounding to an integer).
template <typename D, typename S>
Action CvtToHalf(Thread& t, const Instr& in) {
  double v = SourceValue<S>(t, in);
  if ((in.mode2 & kRoundToInt) != 0 && std::isfinite(v)) v = std::copysign(RoundToInt(v, in.mode), v);
  Instr fin = in;
  if ((in.mode2 & kRoundToInt) != 0) fin.mode = kRn;  // the integer is exact (or overflows)
  t.r[in.d] = Finish<D>(fin, v);
  return Action::kNext;
}

// cvt.rn.{f16x2,bf16x2}.f32 d, a, b: a to the upper half, b to the lower one.
template <typename D>
Action CvtPairToHalf(Thread& t, const Instr& in) {
  auto one = [&](Slot s) {
    float v = Rd<float>(t, s);
    if ((in.mode2 & kFtz) != 0 && std::fpclassify(v) == FP_SUBNORMAL) v = std::copysign(0.0f, v);
    return Finish<D>(in, static_cast<double>(v));
  };
  t.r[in.d] = (one(in.a) << 16) | one(in.b);
  return Action::kNext;
}

// cvt from a 16-bit float to f32/f64 (exact) or to an integer (rounded, saturated, NaN -> 0).
template <typename D, typename S>
Action CvtFromHalf(Thread& t, const Instr& in) {
  double v = SourceValue<S>(t, in);
  if constexpr (std::is_floating_point_v<D>) {
    if (std::isnan(v)) {
      // Any NaN becomes the canonical NaN, sign and payload dropped (measured on sm_90, H100,
      // 2026-12-05, .device/probe16.cu: cvt.f32.f16 and cvt.f32.bf16 of 0x7e01, 0xfe01 and the
      // signalling 0x7c01 all give 0x7fffffff; f64 is the same rule, unmeasured).
      if constexpr (std::is_same_v<D, float>) {
        t.r[in.d] = 0x7fffffffu;
      } else {
        t.r[in.d] = 0x7fffffffffffffffULL;
      }
    } else {
      Wr<D>(t, in.d, static_cast<D>(v));
    }
  } else {
    using L = std::numeric_limits<D>;
    double r = RoundToInt(v, in.mode);
    D d;
    if (std::isnan(r)) d = 0;
    else if (r <= static_cast<double>(L::min())) d = L::min();
    else if (r >= static_cast<double>(L::max())) d = L::max();
    else d = static_cast<D>(r);
    Wr<D>(t, in.d, d);
  }
  return Action::kNext;
}

// cvt.{rna,rn,rz}.tf32.f32: an f32 rounded to 10 mantissa bits, the low 13 bits zero.
Action CvtToTf32(Thread& t, const Instr& in) {
  float v = Rd<float>(t, in.a);
  std::uint8_t mode = in.mode == kRnDefault ? std::uint8_t{kRna} : in.mode;
  std::uint32_t bits = RoundToFormat(static_cast<double>(v), 8, 10, mode);
  if (std::isnan(v)) bits = 0x7fffffffu >> 13;
  t.r[in.d] = bits << 13;
  return Action::kNext;
}

template <typename S>
Handler CvtToHalfFrom(Type dst, Type src) {
  if (dst == Type::kF16) return &CvtToHalf<F16, S>;
  if (dst == Type::kBF16) return &CvtToHalf<BF16, S>;
  (void)src;
  return nullptr;
}

template <typename S>
Handler CvtFromHalfTo(Type dst) {
  switch (dst) {
    case Type::kF32: return &CvtFromHalf<float, S>;
    case Type::kF64: return &CvtFromHalf<double, S>;
    case Type::kU8: case Type::kB8: return &CvtFromHalf<std::uint8_t, S>;
    case Type::kS8: return &CvtFromHalf<std::int8_t, S>;
    case Type::kU16: case Type::kB16: return &CvtFromHalf<std::uint16_t, S>;
    case Type::kS16: return &CvtFromHalf<std::int16_t, S>;
    case Type::kU32: case Type::kB32: return &CvtFromHalf<std::uint32_t, S>;
    case Type::kS32: return &CvtFromHalf<std::int32_t, S>;
    case Type::kU64: case Type::kB64: return &CvtFromHalf<std::uint64_t, S>;
    case Type::kS64: return &CvtFromHalf<std::int64_t, S>;
    default: return nullptr;
  }
}

}  // namespace

Handler SelectHalf(FloatOp op, Type t) {
  switch (t) {
    case Type::kF16: return HalfFor<F16, 1>(op);
    case Type::kF16x2: return HalfFor<F16, 2>(op);
    case Type::kBF16: return HalfFor<BF16, 1>(op);
    case Type::kBF16x2: return HalfFor<BF16, 2>(op);
    default: return nullptr;
  }
}

Handler SelectHalfSetp(Type t) {
  switch (t) {
    case Type::kF16: return &HalfSetp<F16, 1>;
    case Type::kF16x2: return &HalfSetp<F16, 2>;
    case Type::kBF16: return &HalfSetp<BF16, 1>;
    case Type::kBF16x2: return &HalfSetp<BF16, 2>;
    default: return nullptr;
  }
}

Handler SelectHalfSet(Type dtype, Type stype) {
  const bool x2 = stype == Type::kF16x2 || stype == Type::kBF16x2;
  const bool d32 = dtype == Type::kU32 || dtype == Type::kS32 || dtype == Type::kB32 || dtype == Type::kF32;
  if (!x2 && !d32) return nullptr;
  switch (stype) {
    case Type::kF16: return &HalfSet<F16, 1>;
    case Type::kF16x2: return &HalfSet<F16, 2>;
    case Type::kBF16: return &HalfSet<BF16, 1>;
    case Type::kBF16x2: return &HalfSet<BF16, 2>;
    default: return nullptr;
  }
}

Handler SelectHalfCvt(Type dst, Type src) {
  if (dst == Type::kTF32) return src == Type::kF32 ? &CvtToTf32 : nullptr;
  if (dst == Type::kF16x2) return src == Type::kF32 ? &CvtPairToHalf<F16> : nullptr;
  if (dst == Type::kBF16x2) return src == Type::kF32 ? &CvtPairToHalf<BF16> : nullptr;
  if (src == Type::kF16) {
    if (dst == Type::kF16 || dst == Type::kBF16) return CvtToHalfFrom<F16>(dst, src);
    return CvtFromHalfTo<F16>(dst);
  }
  if (src == Type::kBF16) {
    if (dst == Type::kF16 || dst == Type::kBF16) return CvtToHalfFrom<BF16>(dst, src);
    return CvtFromHalfTo<BF16>(dst);
  }
  if (dst != Type::kF16 && dst != Type::kBF16) return nullptr;
  switch (src) {
    case Type::kF32: return CvtToHalfFrom<float>(dst, src);
    case Type::kF64: return CvtToHalfFrom<double>(dst, src);
    case Type::kU8: case Type::kB8: return CvtToHalfFrom<std::uint8_t>(dst, src);
    case Type::kS8: return CvtToHalfFrom<std::int8_t>(dst, src);
    case Type::kU16: case Type::kB16: return CvtToHalfFrom<std::uint16_t>(dst, src);
    case Type::kS16: return CvtToHalfFrom<std::int16_t>(dst, src);
    case Type::kU32: case Type::kB32: return CvtToHalfFrom<std::uint32_t>(dst, src);
    case Type::kS32: return CvtToHalfFrom<std::int32_t>(dst, src);
    case Type::kU64: case Type::kB64: return CvtToHalfFrom<std::uint64_t>(dst, src);
    case Type::kS64: return CvtToHalfFrom<std::int64_t>(dst, src);
    default: return nullptr;
  }
}

}  // namespace fakecuda::ptx
