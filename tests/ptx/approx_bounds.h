// Copyright 2026 The cuhal Authors.
// The PTX ISA's stated error bounds of the approximate instructions, as the catalogue checks
// them (docs/ptx_interpreter.md lists them per instruction with their sources). Each function
// gives the largest absolute error a conforming GPU (or the fake) may have on one output of the
// catalogue's float_math kernel, from its input v, derived from the instructions nvcc 13 emits
// for it (sm_90, -O3):
//   __expf(v)            mul.f32 t, v, log2(e); ex2.approx.f32 t
//   __logf(a)            lg2.approx.f32 t, a; mul.f32 t, ln(2)
//   __sinf(v)+__cosf(v)  sin.approx.f32 + cos.approx.f32, then add.f32
//   rsqrtf(a)            rsqrt.approx.f32
// with a = |v| + 1. Two conforming implementations may differ by twice the bound.
#ifndef CUHAL_TESTS_PTX_APPROX_BOUNDS_H_
#define CUHAL_TESTS_PTX_APPROX_BOUNDS_H_

#include <cmath>

namespace cuhal::testing::ptx_bounds {

// PTX ISA 9.0, per instruction (f32, no .ftz subtleties at these magnitudes):
inline constexpr double kEx2Ulp = 2.0;                   // ex2.approx.f32: 2 ulp, full range
inline const double kLg2Abs = std::ldexp(1.0, -22) * 1.5;  // lg2.approx.f32: 2^-22.6 absolute
inline const double kSinCosAbs = std::ldexp(1.0, -20) * 0.71;  // sin/cos.approx.f32: 2^-20.5
                                                               // absolute, |x| <= 100 pi
inline const double kRsqrtRel = std::ldexp(1.0, -22) * 0.54;   // rsqrt.approx.f32: 2^-22.9 rel.
inline const double kF32Ulp = std::ldexp(1.0, -23);            // one f32 ulp at 1.0

// |error| of each float_math approximate output for input v.
inline double ExpBound(double v) {
  constexpr double kLn2 = 0.6931471805599453;
  const double t = std::fabs(v) * 1.4426950408889634;  // the ex2 argument
  const double t_ulp = t > 0 ? std::ldexp(kF32Ulp, std::ilogb(t)) : 0.0;
  // ex2's 2 ulp (relative: at most 2^-23 each), plus the argument's errors (half an ulp of t from
  // the product, t * 2^-24 from the f32 constant log2(e)) times d(2^t)/dt / 2^t = ln2.
  const double relative = kEx2Ulp * kF32Ulp + kLn2 * (0.5 * t_ulp + t * kF32Ulp / 2);
  return std::exp(v) * relative * 1.01;
}
inline double LogBound(double a) {
  const double r = std::fabs(std::log(a));
  const double r_ulp = r > 0 ? std::ldexp(kF32Ulp, std::ilogb(r)) : 0.0;
  // lg2's absolute bound scaled by ln2, the f32 constant ln2 (relative 2^-24), the product's
  // rounding (half an ulp of the result).
  return (kLg2Abs * 0.6931471805599453 + r * kF32Ulp / 2 + 0.5 * r_ulp) * 1.01;
}
inline double SinCosBound(double v) {
  // two absolute bounds plus the sum's rounding (half an ulp of |sin| + |cos| <= 1.5).
  (void)v;
  return 2 * kSinCosAbs + 0.5 * kF32Ulp * 2;
}
inline double RsqrtBound(double a) { return kRsqrtRel / std::sqrt(a) + 0.5 * kF32Ulp; }

}  // namespace cuhal::testing::ptx_bounds

#endif  // CUHAL_TESTS_PTX_APPROX_BOUNDS_H_
