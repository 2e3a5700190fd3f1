// Copyright 2026 The cuhal Authors.
// Lowering of the 16-bit floating-point instructions (f16, bf16, f16x2, bf16x2: add, sub, mul,
// fma, min, max, abs, neg, ex2/tanh .approx, setp, set) and of every cvt with a 16-bit float or
// tf32 side (ops_half.cc).
#include <string>
#include <vector>

#include "fakecuda/ptx/lower_util.h"

namespace fakecuda::ptx::internal {

bool Parser::LowerHalf(const Statement& s, Type t, std::string* why) {
  const auto& o = s.ops;
  const std::string& b = s.base;
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  bool to_int = false;
  in.mode = RoundingOf(s, &to_int);
  if (to_int) return false;
  if (Has(s, "ftz")) in.mode2 |= kFtz;
  if (Has(s, "sat")) in.mode2 |= kSat;
  if (Has(s, "relu")) in.mode2 |= kRelu;
  if (Has(s, "NaN")) in.mode2 |= kNanPropagating;
  if (Has(s, "xorsign") || Has(s, "oob") || Has(s, "satfinite")) return false;
  auto src = [&](std::size_t k) { return Src(o[k], Type::kB32, why); };
  if (b == "setp" || b == "set") {
    int cmp = CmpOf(s);
    if (cmp < 0 || (o.size() != 3 && o.size() != 4)) return false;
    std::vector<Type> ts = Types(s);
    if (b == "set") {
      if (ts.size() != 2) return false;
      in.fn = SelectHalfSet(ts[0], ts[1]);
      const bool x2 = ts[1] == Type::kF16x2 || ts[1] == Type::kBF16x2;
      in.width = x2 ? 2 : 4;  // x2: a result per half
      in.sign = ts[0] == Type::kF32 || IsHalf(ts[0]);
      in.d = Dst(o[0], why);
    } else {
      in.fn = SelectHalfSetp(t);
      if (o[0].kind == Operand::kPair) {
        in.d = Dst(o[0].elems[0], why);
        in.d2 = Dst(o[0].elems[1], why);
      } else {
        in.d = Dst(o[0], why);
      }
    }
    in.mode = static_cast<std::uint8_t>(cmp);
    in.imm = BoolOf(s);
    in.a = src(1);
    in.b = src(2);
    in.c = o.size() == 4 ? Src(o[3], Type::kPred, why) : kZeroSlot;
    if (!why->empty() || in.fn == nullptr) return false;
    Emit(in);
    return true;
  }
  FloatOp op;
  std::size_t n = 3;
  if (b == "add") op = FloatOp::kAdd;
  else if (b == "sub") op = FloatOp::kSub;
  else if (b == "mul") op = FloatOp::kMul;
  else if (b == "fma") { op = FloatOp::kFma; n = 4; }
  else if (b == "min") op = FloatOp::kMin;
  else if (b == "max") op = FloatOp::kMax;
  else if (b == "abs") { op = FloatOp::kAbs; n = 2; }
  else if (b == "neg") { op = FloatOp::kNeg; n = 2; }
  else if (b == "ex2" && Has(s, "approx")) { op = FloatOp::kEx2; n = 2; }
  else if (b == "tanh" && Has(s, "approx")) { op = FloatOp::kTanh; n = 2; }
  else return false;
  if (o.size() != n) return false;
  in.fn = SelectHalf(op, t);
  in.d = Dst(o[0], why);
  in.a = src(1);
  if (n > 2) in.b = src(2);
  if (n > 3) in.c = src(3);
  if (!why->empty() || in.fn == nullptr) return false;
  Emit(in);
  return true;
}

bool Parser::LowerHalfCvt(const Statement& s, Type dst, Type src, std::string* why) {
  const auto& o = s.ops;
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  bool to_int = false;
  in.mode = RoundingOf(s, &to_int);
  if (Has(s, "rna")) in.mode = kRna;
  if (to_int) in.mode2 |= kRoundToInt;
  if (Has(s, "ftz")) in.mode2 |= kFtz;
  if (Has(s, "sat")) in.mode2 |= kSat;
  if (Has(s, "relu")) in.mode2 |= kRelu;
  if (Has(s, "satfinite")) return false;
  const bool pair = dst == Type::kF16x2 || dst == Type::kBF16x2;
  if (o.size() != (pair ? 3u : 2u)) return false;
  // A float-to-integer cvt rounds with .rni etc.; a conversion to a 16-bit float from a wider
  // one must name its rounding (PTX requires it), which RoundingOf has read.
  in.fn = SelectHalfCvt(dst, src);
  in.d = Dst(o[0], why);
  in.a = Src(o[1], IsHalf(src) ? Type::kB16 : src, why);
  if (pair) in.b = Src(o[2], src, why);
  if (!why->empty() || in.fn == nullptr) return false;
  Emit(in);
  return true;
}

}  // namespace fakecuda::ptx::internal
