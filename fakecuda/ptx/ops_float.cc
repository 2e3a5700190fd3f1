// Copyright 2026 The cuhal Authors.
// Floating-point handlers. IEEE operations round in the instruction's mode: round-to-nearest
// uses the host's default mode; .rz/.rm/.rp switch the host's rounding mode around the one
// operation (operands and result pass through volatile objects so the compiler cannot move the
// operation out of the switched region).
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fakecuda/ptx/ops_common.h"

namespace fakecuda::ptx {
namespace {

template <typename T>
T Canonical(T v) {
  if (std::isnan(v)) {
    if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(0x7fffffffu);
    else return std::bit_cast<double>(0x7fffffffffffffffULL);
  }
  return v;
}

template <typename T>
T Flush(T v, bool ftz) {
  if (ftz && std::fpclassify(v) == FP_SUBNORMAL) return std::copysign(T{0}, v);
  return v;
}

int HostMode(std::uint8_t mode) {
  switch (mode) {
    case kRz: return FE_TOWARDZERO;
    case kRm: return FE_DOWNWARD;
    case kRp: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

// Runs `op` with operands in the rounding mode `mode`.
template <typename T, typename Op>
T Rounded(std::uint8_t mode, Op op, T a, T b = T{0}, T c = T{0}) {
  if (mode == kRn || mode == kRnDefault) return op(a, b, c);
  volatile T va = a, vb = b, vc = c;
  int old = std::fegetround();
  std::fesetround(HostMode(mode));
  volatile T r = op(va, vb, vc);
  std::fesetround(old);
  return r;
}

template <typename T>
T Finish(const Instr& in, T r) {
  bool ftz = (in.mode2 & kFtz) != 0;
  r = Flush(Canonical(r), ftz);
  if (in.mode2 & kSat) {
    if (std::isnan(r) || r < T{0}) r = T{0};  // +0 (also for -0 and NaN)
    if (r > T{1}) r = T{1};
    if (r == T{0}) r = T{0};
  }
  return r;
}

#define FAKECUDA_PTX_FLOAT(Name, expr)                                                  \
  template <typename T>                                                                 \
  struct Name {                                                                         \
    static Action Run(Thread& t, const Instr& in) {                                     \
      bool ftz = (in.mode2 & kFtz) != 0;                                                \
      T a = Flush(Rd<T>(t, in.a), ftz);                                                 \
      T b = Flush(Rd<T>(t, in.b), ftz);                                                 \
      T c = Flush(Rd<T>(t, in.c), ftz);                                                 \
      T r = Rounded<T>(in.mode, [](T x, T y, T z) -> T { (void)x; (void)y; (void)z; return expr; }, a, b, c); \
      Wr<T>(t, in.d, Finish(in, r));                                                    \
      return Action::kNext;                                                             \
    }                                                                                   \
  };

FAKECUDA_PTX_FLOAT(Add, x + y)
FAKECUDA_PTX_FLOAT(Sub, x - y)
FAKECUDA_PTX_FLOAT(Mul, x * y)
FAKECUDA_PTX_FLOAT(Fma, std::fma(x, y, z))
FAKECUDA_PTX_FLOAT(Div, x / y)
FAKECUDA_PTX_FLOAT(Rcp, T{1} / x)
FAKECUDA_PTX_FLOAT(Sqrt, std::sqrt(x))
FAKECUDA_PTX_FLOAT(DivApprox, x / y)
FAKECUDA_PTX_FLOAT(RcpApprox, T{1} / x)
FAKECUDA_PTX_FLOAT(SqrtApprox, std::sqrt(x))
FAKECUDA_PTX_FLOAT(Rsqrt, static_cast<T>(1.0 / std::sqrt(static_cast<double>(x))))
FAKECUDA_PTX_FLOAT(Ex2, static_cast<T>(std::exp2(static_cast<double>(x))))
FAKECUDA_PTX_FLOAT(Lg2, static_cast<T>(std::log2(static_cast<double>(x))))
FAKECUDA_PTX_FLOAT(Sin, static_cast<T>(std::sin(static_cast<double>(x))))
FAKECUDA_PTX_FLOAT(Cos, static_cast<T>(std::cos(static_cast<double>(x))))
FAKECUDA_PTX_FLOAT(Tanh, static_cast<T>(std::tanh(static_cast<double>(x))))
#undef FAKECUDA_PTX_FLOAT

// min/max: a NaN operand gives the other one; -0 orders below +0.
template <typename T, bool kMax>
T MinMax(T a, T b) {
  if (std::isnan(a)) return Canonical(b);
  if (std::isnan(b)) return a;
  if (a == b) {
    bool a_neg = std::signbit(a);
    return kMax ? (a_neg ? b : a) : (a_neg ? a : b);
  }
  return kMax ? (a > b ? a : b) : (a < b ? a : b);
}

template <typename T>
struct Min {
  static Action Run(Thread& t, const Instr& in) {
    bool ftz = (in.mode2 & kFtz) != 0;
    Wr<T>(t, in.d, Flush(MinMax<T, false>(Flush(Rd<T>(t, in.a), ftz), Flush(Rd<T>(t, in.b), ftz)), ftz));
    return Action::kNext;
  }
};
template <typename T>
struct Max {
  static Action Run(Thread& t, const Instr& in) {
    bool ftz = (in.mode2 & kFtz) != 0;
    Wr<T>(t, in.d, Flush(MinMax<T, true>(Flush(Rd<T>(t, in.a), ftz), Flush(Rd<T>(t, in.b), ftz)), ftz));
    return Action::kNext;
  }
};

// abs/neg change the sign bit only (NaNs keep their payload).
template <typename T>
struct Abs {
  static Action Run(Thread& t, const Instr& in) {
    T a = Flush(Rd<T>(t, in.a), (in.mode2 & kFtz) != 0);
    Wr<T>(t, in.d, std::fabs(a));
    return Action::kNext;
  }
};
template <typename T>
struct Neg {
  static Action Run(Thread& t, const Instr& in) {
    T a = Flush(Rd<T>(t, in.a), (in.mode2 & kFtz) != 0);
    Wr<T>(t, in.d, -a);
    return Action::kNext;
  }
};
// copysign d, a, b: b with the sign of a.
template <typename T>
struct Copysign {
  static Action Run(Thread& t, const Instr& in) {
    Wr<T>(t, in.d, std::copysign(Rd<T>(t, in.b), Rd<T>(t, in.a)));
    return Action::kNext;
  }
};

}  // namespace

Handler SelectFloat(FloatOp op, Type t) {
  bool f32 = t == Type::kF32;
  switch (op) {
    case FloatOp::kAdd: return ForFloat<Add>(t);
    case FloatOp::kSub: return ForFloat<Sub>(t);
    case FloatOp::kMul: return ForFloat<Mul>(t);
    case FloatOp::kFma: return ForFloat<Fma>(t);
    case FloatOp::kDiv: return ForFloat<Div>(t);
    case FloatOp::kDivApprox: return f32 ? ForFloat<DivApprox>(t) : nullptr;
    case FloatOp::kRcp: return ForFloat<Rcp>(t);
    case FloatOp::kRcpApprox: return ForFloat<RcpApprox>(t);
    case FloatOp::kSqrt: return ForFloat<Sqrt>(t);
    case FloatOp::kSqrtApprox: return f32 ? ForFloat<SqrtApprox>(t) : nullptr;
    case FloatOp::kRsqrt: return ForFloat<Rsqrt>(t);
    case FloatOp::kEx2: return f32 ? ForFloat<Ex2>(t) : nullptr;
    case FloatOp::kLg2: return f32 ? ForFloat<Lg2>(t) : nullptr;
    case FloatOp::kSin: return f32 ? ForFloat<Sin>(t) : nullptr;
    case FloatOp::kCos: return f32 ? ForFloat<Cos>(t) : nullptr;
    case FloatOp::kTanh: return f32 ? ForFloat<Tanh>(t) : nullptr;
    case FloatOp::kMin: return ForFloat<Min>(t);
    case FloatOp::kMax: return ForFloat<Max>(t);
    case FloatOp::kAbs: return ForFloat<Abs>(t);
    case FloatOp::kNeg: return ForFloat<Neg>(t);
    case FloatOp::kCopysign: return ForFloat<Copysign>(t);
  }
  return nullptr;
}

}  // namespace fakecuda::ptx
