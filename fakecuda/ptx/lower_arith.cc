// Copyright 2026 The cuhal Authors.
// Lowering of the arithmetic families: integer, f32/f64 floating point, comparison and
// selection (setp, set, selp, testp) and conversions (cvt).
#include <string>
#include <vector>

#include "fakecuda/ptx/lower_util.h"

namespace fakecuda::ptx::internal {

bool Parser::LowerArith(const Statement& s, Type t, std::string* why) {
  const auto& o = s.ops;
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  bool to_int = false;
  in.mode = RoundingOf(s, &to_int);
  if (Has(s, "ftz")) in.mode2 |= kFtz;
  if (Has(s, "sat")) in.mode2 |= kSat;
  const std::string& b = s.base;
  if (b == "cvt") {
    std::vector<Type> ts = Types(s);
    if (ts.size() == 2 && (IsHalf(ts[0]) || IsHalf(ts[1]) || ts[0] == Type::kTF32)) {
      return LowerHalfCvt(s, ts[0], ts[1], why);
    }
  } else if (IsHalf(t) || (b == "set" && Types(s).size() == 2 && IsHalf(Types(s)[1]))) {
    if (b == "selp") {
      t = TypeBytes(t) == 2 ? Type::kB16 : Type::kB32;  // selp moves bits
    } else if (b == "set" && Types(s).size() != 2) {
      // "set.lt.f16" names one type where set needs two (.dtype.stype): Types(s)[1] was read
      // past the end of the vector (found by ptx_fuzzer).
      *why = "set needs a destination and a source type";
      return false;
    } else {
      return LowerHalf(s, b == "set" ? Types(s)[1] : t, why);
    }
  }
  auto need = [&](std::size_t n) {
    if (o.size() != n) *why = s.opcode + " needs " + std::to_string(n) + " operands";
    return o.size() == n;
  };
  auto src = [&](std::size_t k, Type ty) { return Src(o[k], ty, why); };
  auto done = [&]() {
    if (!why->empty()) return false;
    if (in.fn == nullptr) return false;
    Emit(in);
    return true;
  };
  if (b == "setp") {
    int cmp = CmpOf(s);
    if (cmp < 0 || (o.size() != 3 && o.size() != 4)) return false;
    in.fn = SelectSetp(t);
    in.mode = static_cast<std::uint8_t>(cmp);
    in.mode2 = BoolOf(s);
    in.a = src(1, t);
    in.b = src(2, t);
    in.c = o.size() == 4 ? src(3, Type::kPred) : kZeroSlot;
    if (o[0].kind == Operand::kPair) {
      in.d = Dst(o[0].elems[0], why);
      in.d2 = Dst(o[0].elems[1], why);
    } else {
      in.d = Dst(o[0], why);
    }
    return done();
  }
  if (b == "set") {
    std::vector<Type> ts = Types(s);
    int cmp = CmpOf(s);
    if (cmp < 0 || ts.size() != 2 || (o.size() != 3 && o.size() != 4)) return false;
    in.fn = SelectSet(ts[0], ts[1]);
    in.mode = static_cast<std::uint8_t>(cmp);
    in.mode2 = BoolOf(s);
    in.a = src(1, ts[1]);
    in.b = src(2, ts[1]);
    in.c = o.size() == 4 ? src(3, Type::kPred) : kZeroSlot;
    in.d = Dst(o[0], why);
    return done();
  }
  if (b == "selp") {
    if (!need(4)) return false;
    in.fn = SelectSelp(t);
    in.a = src(1, t);
    in.b = src(2, t);
    in.c = src(3, Type::kPred);
    in.d = Dst(o[0], why);
    return done();
  }
  if (b == "cvt") {
    std::vector<Type> ts = Types(s);
    if (ts.size() != 2 || !need(2)) return false;
    if (to_int) in.mode2 |= kRoundToInt;
    in.fn = SelectCvt(ts[0], ts[1]);
    in.a = src(1, ts[1]);
    in.d = Dst(o[0], why);
    return done();
  }
  if (b == "testp") {
    static const char* kModes[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
    int mode = -1;
    for (int k = 0; k < 6; ++k) {
      if (Has(s, kModes[k])) mode = k;
    }
    if (mode < 0 || !need(2)) return false;
    in.fn = SelectTestp(t);
    in.mode = static_cast<std::uint8_t>(mode);
    in.a = src(1, t);
    in.d = Dst(o[0], why);
    return done();
  }
  if (o.empty()) return false;
  in.d = Dst(o[0], why);
  if (t == Type::kPred) {
    IntOp op = b == "and" ? IntOp::kAnd : b == "or" ? IntOp::kOr : b == "xor" ? IntOp::kXor : IntOp::kNot;
    if (b != "and" && b != "or" && b != "xor" && b != "not") return false;
    in.fn = SelectPredLogic(op);
    in.a = src(1, t);
    if (o.size() > 2) in.b = src(2, t);
    return done();
  }
  if (IsFloat(t)) {
    bool approx = Has(s, "approx");
    FloatOp op;
    std::size_t n = 3;
    if (b == "add") op = FloatOp::kAdd;
    else if (b == "sub") op = FloatOp::kSub;
    else if (b == "mul") op = FloatOp::kMul;
    else if (b == "fma" || b == "mad") { op = FloatOp::kFma; n = 4; }
    else if (b == "div") op = approx || Has(s, "full") ? FloatOp::kDivApprox : FloatOp::kDiv;
    else if (b == "rcp") { op = approx ? FloatOp::kRcpApprox : FloatOp::kRcp; n = 2; }
    else if (b == "sqrt") { op = approx ? FloatOp::kSqrtApprox : FloatOp::kSqrt; n = 2; }
    else if (b == "rsqrt") { op = FloatOp::kRsqrt; n = 2; }
    else if (b == "ex2") { op = FloatOp::kEx2; n = 2; }
    else if (b == "lg2") { op = FloatOp::kLg2; n = 2; }
    else if (b == "sin") { op = FloatOp::kSin; n = 2; }
    else if (b == "cos") { op = FloatOp::kCos; n = 2; }
    else if (b == "tanh") { op = FloatOp::kTanh; n = 2; }
    else if (b == "min") op = FloatOp::kMin;
    else if (b == "max") op = FloatOp::kMax;
    else if (b == "abs") { op = FloatOp::kAbs; n = 2; }
    else if (b == "neg") { op = FloatOp::kNeg; n = 2; }
    else if (b == "copysign") op = FloatOp::kCopysign;
    else return false;
    if (Has(s, "NaN") || Has(s, "xorsign") || Has(s, "relu") || Has(s, "oob")) return false;
    if (!need(n)) return false;
    in.fn = SelectFloat(op, t);
    in.a = src(1, t);
    if (n > 2) in.b = src(2, t);
    if (n > 3) in.c = src(3, t);
    return done();
  }
  // Integer.
  bool cc = Has(s, "cc");
  Type u32 = Type::kU32;
  std::size_t n = 3;
  IntOp op;
  Type a_type = t, b_type = t, c_type = t;
  if (b == "add") op = Has(s, "sat") ? IntOp::kAddSat : cc ? IntOp::kAddCc : IntOp::kAdd;
  else if (b == "sub") op = Has(s, "sat") ? IntOp::kSubSat : cc ? IntOp::kSubCc : IntOp::kSub;
  else if (b == "addc") op = cc ? IntOp::kAddcCc : IntOp::kAddc;
  else if (b == "subc") op = cc ? IntOp::kSubcCc : IntOp::kSubc;
  else if (b == "mul") {
    if (Has(s, "wide")) op = IntOp::kMulWide;
    else if (Has(s, "hi")) op = IntOp::kMulHi;
    else op = IntOp::kMulLo;
  } else if (b == "mad") {
    n = 4;
    if (Has(s, "wide")) { op = IntOp::kMadWide; c_type = WideOf(t); }
    else if (Has(s, "hi")) op = cc ? IntOp::kMadHiCc : IntOp::kMadHi;
    else op = cc ? IntOp::kMadLoCc : IntOp::kMadLo;
  } else if (b == "madc") {
    n = 4;
    if (Has(s, "hi")) op = cc ? IntOp::kMadcHiCc : IntOp::kMadcHi;
    else op = cc ? IntOp::kMadcLoCc : IntOp::kMadcLo;
  } else if (b == "mul24") {
    if (Has(s, "hi")) return false;
    op = IntOp::kMul24Lo;
  } else if (b == "mad24") {
    if (Has(s, "hi") || Has(s, "sat")) return false;
    op = IntOp::kMad24Lo;
    n = 4;
    in.mode2 = 1;
  } else if (b == "sad") { op = IntOp::kSad; n = 4; }
  else if (b == "div") op = IntOp::kDiv;
  else if (b == "rem") op = IntOp::kRem;
  else if (b == "min") { if (Has(s, "relu")) return false; op = IntOp::kMin; }
  else if (b == "max") { if (Has(s, "relu")) return false; op = IntOp::kMax; }
  else if (b == "abs") { op = IntOp::kAbs; n = 2; }
  else if (b == "neg") { op = IntOp::kNeg; n = 2; }
  else if (b == "and") op = IntOp::kAnd;
  else if (b == "or") op = IntOp::kOr;
  else if (b == "xor") op = IntOp::kXor;
  else if (b == "not") { op = IntOp::kNot; n = 2; }
  else if (b == "cnot") { op = IntOp::kCnot; n = 2; }
  else if (b == "shl") { op = IntOp::kShl; b_type = u32; }
  else if (b == "shr") { op = IntOp::kShr; b_type = u32; }
  else if (b == "popc") { op = IntOp::kPopc; n = 2; }
  else if (b == "clz") { op = IntOp::kClz; n = 2; }
  else if (b == "brev") { op = IntOp::kBrev; n = 2; }
  else if (b == "bfind") { op = IntOp::kBfind; n = 2; if (Has(s, "shiftamt")) in.mode2 = 1; }
  else if (b == "bfe") { op = IntOp::kBfe; n = 4; b_type = c_type = u32; }
  else if (b == "bfi") {
    if (!need(5)) return false;
    in.fn = SelectInt(IntOp::kBfi, t);
    in.a = src(1, t);
    in.b = src(2, t);
    in.c = src(3, u32);
    in.e = src(4, u32);
    return done();
  } else if (b == "prmt") {
    if (s.mods.size() != 1 || !need(4)) return false;  // the default mode only
    in.fn = SelectPrmt();
    in.a = src(1, u32);
    in.b = src(2, u32);
    in.c = src(3, u32);
    return done();
  } else if (b == "shf") {
    if (!need(4) || t != Type::kB32) return false;
    in.fn = SelectShf(Has(s, "l"), Has(s, "clamp"));
    in.a = src(1, u32);
    in.b = src(2, u32);
    in.c = src(3, u32);
    return done();
  } else if (b == "lop3") {
    if (!need(5) || o[4].kind != Operand::kImm) return false;
    in.fn = SelectLop3();
    in.a = src(1, u32);
    in.b = src(2, u32);
    in.c = src(3, u32);
    in.imm = static_cast<std::int64_t>(o[4].imm & 0xff);
    return done();
  } else if (b == "dp4a") {
    std::vector<Type> ts = Types(s);
    if (ts.size() != 2 || !need(4)) return false;
    in.fn = SelectDp4a(IsSigned(ts[0]), IsSigned(ts[1]));
    in.a = src(1, u32);
    in.b = src(2, u32);
    in.c = src(3, u32);
    return done();
  } else {
    return false;
  }
  if (!need(n)) return false;
  in.fn = SelectInt(op, t);
  in.a = src(1, a_type);
  if (n > 2) in.b = src(2, b_type);
  if (n > 3) in.c = src(3, c_type);
  return done();
}

}  // namespace fakecuda::ptx::internal
