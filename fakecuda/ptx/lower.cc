// Copyright 2026 The cuhal Authors.
// Lowering of PTX instructions to the interpreter's IR: the opcode and its modifiers pick a
// handler (ops.h), operands become slots. Whatever is not recognised here is reported as an
// unsupported instruction, with its line, rather than run approximately.
#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <string>

#include "fakecuda/ptx/parser_impl.h"

namespace fakecuda::ptx::internal {
namespace {

bool Has(const Statement& s, const char* m) {
  return std::find(s.mods.begin(), s.mods.end(), m) != s.mods.end();
}

std::vector<Type> Types(const Statement& s) {
  std::vector<Type> out;
  for (const std::string& m : s.mods) {
    if (m == "b128") return {Type::kNone, Type::kNone, Type::kNone};
    if (Type t = ParseType(m); t != Type::kNone) out.push_back(t);
  }
  return out;
}

std::string Unsupported(const Statement& s) {
  return "instruction '" + s.opcode + "' is not supported by fakecuda's PTX interpreter";
}

// Rounding modifiers: .rn .rz .rm .rp, and the integer-rounding .rni .rzi .rmi .rpi.
std::uint8_t RoundingOf(const Statement& s, bool* to_int) {
  *to_int = false;
  static const char* kModes[] = {"rn", "rz", "rm", "rp"};
  for (int k = 0; k < 4; ++k) {
    if (Has(s, kModes[k])) return static_cast<std::uint8_t>(k);
    if (Has(s, (std::string(kModes[k]) + "i").c_str())) {
      *to_int = true;
      return static_cast<std::uint8_t>(k);
    }
  }
  return kRnDefault;
}

int CmpOf(const Statement& s) {
  static const char* kCmps[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  for (int k = 0; k < 18; ++k) {
    if (Has(s, kCmps[k])) return k;
  }
  return -1;
}

std::uint8_t BoolOf(const Statement& s) {
  if (Has(s, "and")) return 1;
  if (Has(s, "or")) return 2;
  if (Has(s, "xor")) return 3;
  return 0;
}

Type WideOf(Type t) {
  switch (t) {
    case Type::kU16: case Type::kB16: return Type::kU32;
    case Type::kS16: return Type::kS32;
    case Type::kU32: case Type::kB32: return Type::kU64;
    case Type::kS32: return Type::kS64;
    default: return Type::kNone;
  }
}

// Modifiers of memory instructions that change nothing in a single-address-space, in-order fake.
bool IgnoredMemoryMod(const std::string& m) {
  static const std::set<std::string> kIgnored = {
      "weak", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "sys", "gpu", "cta",
      "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_normal", "L1::evict_unchanged",
      "L1::evict_first", "L1::evict_last", "L1::no_allocate", "L2::evict_normal",
      "L2::evict_first", "L2::evict_last", "L2::64B", "L2::128B", "L2::256B", "noftz", "mmio"};
  return kIgnored.count(m) != 0;
}

}  // namespace

Slot Parser::NewSlot() {
  fn_->init.push_back(0);
  return static_cast<Slot>(fn_->init.size() - 1);
}

Slot Parser::Const(std::uint64_t bits) {
  auto it = consts_.find(bits);
  if (it != consts_.end()) return it->second;
  Slot s = NewSlot();
  fn_->init[s] = bits;
  consts_[bits] = s;
  return s;
}

void Parser::Emit(Instr in) {
  in.line = line_;
  fn_->code.push_back(in);
}

Slot Parser::Src(const Operand& op, Type t, std::string* why) {
  switch (op.kind) {
    case Operand::kReg:
      return op.slot;
    case Operand::kImm: {
      std::uint64_t bits = op.imm;
      if (t == Type::kF32) {
        float f = 0;
        if (op.float_literal == 'f') return Const(op.imm & 0xffffffffu);
        if (op.float_literal == 'd') f = static_cast<float>(std::bit_cast<double>(op.imm));
        else if (op.float_literal == 'r') f = static_cast<float>(op.real);
        else f = static_cast<float>(static_cast<std::int64_t>(op.imm));
        bits = std::bit_cast<std::uint32_t>(f);
      } else if (t == Type::kF64) {
        double d = 0;
        if (op.float_literal == 'd') return Const(op.imm);
        if (op.float_literal == 'f') d = std::bit_cast<float>(static_cast<std::uint32_t>(op.imm));
        else if (op.float_literal == 'r') d = op.real;
        else d = static_cast<double>(static_cast<std::int64_t>(op.imm));
        bits = std::bit_cast<std::uint64_t>(d);
      } else if (op.float_literal == 'r') {
        *why = "a decimal real number as an integer operand";
        return kZeroSlot;
      } else if (t == Type::kPred) {
        bits &= 1;
      }
      return Const(bits);
    }
    case Operand::kSreg: {
      Instr in;
      in.fn = SelectSreg();
      in.d = NewSlot();
      in.imm = op.sreg;
      Emit(in);
      return in.d;
    }
    case Operand::kNegPred: {
      Instr in;
      in.fn = SelectPredLogic(IntOp::kNot);
      in.a = op.slot;
      in.d = NewSlot();
      Emit(in);
      return in.d;
    }
    case Operand::kSymbol: {
      const Symbol* sym = Find(op.name);
      if (sym == nullptr) {
        *why = "unknown name " + op.name;
        return kZeroSlot;
      }
      Instr in;
      switch (sym->kind) {
        case Symbol::kShared: return Const(sym->offset);
        case Symbol::kLocal:
          in.fn = SelectLocalAddress();
          in.imm = static_cast<std::int64_t>(sym->offset);
          break;
        case Symbol::kGlobal:
          in.fn = SelectGlobalAddress();
          in.index = static_cast<std::uint32_t>(sym->offset);
          break;
        default:
          *why = "the address of " + op.name + " as an operand is not supported";
          return kZeroSlot;
      }
      in.d = NewSlot();
      Emit(in);
      return in.d;
    }
    default:
      *why = "unexpected operand kind";
      return kZeroSlot;
  }
}

Slot Parser::Dst(const Operand& op, std::string* why) {
  if (op.kind == Operand::kReg) return op.slot;
  if (op.kind == Operand::kSink) return kSinkSlot;
  *why = "the destination must be a register";
  return kSinkSlot;
}

bool Parser::Addr(const Operand& op, Space space, Instr* in, std::string* why) {
  if (op.kind != Operand::kAddress) {
    *why = "expected an address [...]";
    return false;
  }
  in->space = space;
  in->imm = op.offset;
  in->a = kZeroSlot;
  if (op.has_base_reg) {
    in->a = op.slot;
    if (space == Space::kParamKernel || space == Space::kParamFrame) {
      *why = "parameter-space addresses held in registers are not supported";
      return false;
    }
    return true;
  }
  if (op.name.empty()) return true;  // an absolute address
  const Symbol* sym = Find(op.name);
  if (sym == nullptr) {
    *why = "unknown name " + op.name;
    return false;
  }
  switch (sym->kind) {
    case Symbol::kKernelParam:
    case Symbol::kFrameParam:
      if (space != Space::kParamKernel && space != Space::kParamFrame) {
        *why = "parameter " + op.name + " used outside the .param space";
        return false;
      }
      in->space = sym->kind == Symbol::kKernelParam ? Space::kParamKernel : Space::kParamFrame;
      in->imm += static_cast<std::int64_t>(sym->offset);
      return true;
    case Symbol::kShared:
      if (space == Space::kShared) {
        in->imm += static_cast<std::int64_t>(sym->offset);
      } else if (space == Space::kGeneric) {
        in->a = Const(kSharedWindow + sym->offset);
      } else {
        *why = "shared variable " + op.name + " used in another state space";
        return false;
      }
      return true;
    case Symbol::kLocal: {
      if (space != Space::kLocal && space != Space::kGeneric) {
        *why = "local variable " + op.name + " used in another state space";
        return false;
      }
      Instr la;
      la.fn = SelectLocalAddress();
      la.imm = static_cast<std::int64_t>(sym->offset);
      la.mode = space == Space::kGeneric ? 1 : 0;
      la.d = NewSlot();
      Emit(la);
      in->a = la.d;
      return true;
    }
    case Symbol::kGlobal: {
      if (space != Space::kGlobal && space != Space::kConst && space != Space::kGeneric) {
        *why = "module variable " + op.name + " used in another state space";
        return false;
      }
      Instr ga;
      ga.fn = SelectGlobalAddress();
      ga.index = static_cast<std::uint32_t>(sym->offset);
      ga.d = NewSlot();
      Emit(ga);
      in->a = ga.d;
      return true;
    }
    default:
      *why = "unexpected name " + op.name + " in an address";
      return false;
  }
}

bool Parser::KnownOpcode(const std::string& base) {
  static const std::set<std::string> kKnown = {
      "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "abs", "neg", "and",
      "or", "xor", "not", "cnot", "shl", "shr", "popc", "clz", "brev", "bfe", "bfi", "bfind",
      "prmt", "shf", "lop3", "copysign", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos",
      "tanh", "testp", "mul24", "mad24", "sad", "addc", "subc", "madc", "dp4a", "setp", "selp",
      "set", "cvt", "mov", "cvta", "ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu",
      "membar", "fence", "shfl", "vote", "activemask", "redux", "match", "bra", "call", "ret",
      "exit", "trap", "brkpt", "nanosleep", "pmevent", "griddepcontrol", "bar", "barrier"};
  return kKnown.count(base) != 0;
}

bool Parser::Lower(const Statement& s, std::string* why) {
  static const std::set<std::string> kArith = {
      "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "abs", "neg", "and",
      "or", "xor", "not", "cnot", "shl", "shr", "popc", "clz", "brev", "bfe", "bfi", "bfind",
      "prmt", "shf", "lop3", "copysign", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos",
      "tanh", "testp", "mul24", "mad24", "sad", "addc", "subc", "madc", "dp4a", "setp", "selp",
      "set", "cvt"};
  bool ok;
  if (kArith.count(s.base) != 0) {
    std::vector<Type> types = Types(s);
    ok = !types.empty() && LowerArith(s, types.back(), why);
  } else if (s.base == "mov" || s.base == "cvta") {
    ok = LowerMove(s, why);
  } else if (s.base == "ld" || s.base == "ldu" || s.base == "st" || s.base == "atom" || s.base == "red" ||
             s.base == "prefetch" || s.base == "prefetchu" || s.base == "membar" || s.base == "fence") {
    ok = LowerMemory(s, why);
  } else if (s.base == "shfl" || s.base == "vote" || s.base == "activemask" || s.base == "redux" ||
             s.base == "match") {
    ok = LowerWarp(s, why);
  } else {
    ok = LowerControl(s, why);
  }
  if (!ok && why->empty()) *why = Unsupported(s);
  return ok;
}

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
    if (t == Type::kF16) return false;
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

bool Parser::LowerMove(const Statement& s, std::string* why) {
  const auto& o = s.ops;
  std::vector<Type> ts = Types(s);
  if (ts.size() != 1 || o.size() != 2) return false;
  Type t = ts[0];
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  if (s.base == "cvta") {
    bool to = Has(s, "to");
    if (Has(s, "shared") || Has(s, "shared::cta")) in.space = Space::kShared;
    else if (Has(s, "local")) in.space = Space::kLocal;
    else if (Has(s, "global")) in.space = Space::kGlobal;
    else if (Has(s, "const")) in.space = Space::kConst;
    else return false;
    in.fn = SelectCvta(!to);
    in.width = static_cast<std::uint8_t>(TypeBytes(t));
    in.a = Src(o[1], t, why);
    in.d = Dst(o[0], why);
  } else if (o[0].kind == Operand::kVector) {
    in.fn = SelectUnpack();
    in.vec = static_cast<std::uint8_t>(o[0].elems.size());
    if (in.vec < 2 || in.vec > 4) return false;
    in.width = static_cast<std::uint8_t>(TypeBytes(t) / in.vec);
    for (std::size_t k = 0; k < o[0].elems.size(); ++k) in.v[k] = Dst(o[0].elems[k], why);
    in.a = Src(o[1], t, why);
  } else if (o[1].kind == Operand::kVector) {
    in.fn = SelectPack();
    in.vec = static_cast<std::uint8_t>(o[1].elems.size());
    if (in.vec < 2 || in.vec > 4) return false;
    in.width = static_cast<std::uint8_t>(TypeBytes(t) / in.vec);
    for (std::size_t k = 0; k < o[1].elems.size(); ++k) {
      in.v[k] = Src(o[1].elems[k], in.width == 4 ? Type::kB32 : in.width == 2 ? Type::kB16 : Type::kB8, why);
    }
    in.d = Dst(o[0], why);
  } else if (o[1].kind == Operand::kSreg) {
    in.fn = SelectSreg();
    in.imm = o[1].sreg;
    in.d = Dst(o[0], why);
  } else {
    in.fn = SelectMov();
    in.a = Src(o[1], t, why);
    in.d = Dst(o[0], why);
  }
  if (!why->empty()) return false;
  Emit(in);
  return true;
}

bool Parser::LowerMemory(const Statement& s, std::string* why) {
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  const std::string& b = s.base;
  if (b == "prefetch" || b == "prefetchu" || b == "membar" || b == "fence") {
    in.fn = SelectNop();
    Emit(in);
    return true;
  }
  Space space = Space::kGeneric;
  Type t = Type::kNone;
  int vec = 1;
  bool atom = b == "atom" || b == "red";
  AtomOp aop = AtomOp::kAdd;
  bool have_aop = false;
  static const struct {
    const char* name;
    AtomOp op;
  } kAtomOps[] = {{"add", AtomOp::kAdd}, {"min", AtomOp::kMin}, {"max", AtomOp::kMax},
                  {"exch", AtomOp::kExch}, {"cas", AtomOp::kCas}, {"and", AtomOp::kAnd},
                  {"or", AtomOp::kOr}, {"xor", AtomOp::kXor}, {"inc", AtomOp::kInc},
                  {"dec", AtomOp::kDec}};
  for (const std::string& m : s.mods) {
    if (m == "global") space = Space::kGlobal;
    else if (m == "shared" || m == "shared::cta") space = Space::kShared;
    else if (m == "local" && !atom) space = Space::kLocal;
    else if (m == "const" && !atom) space = Space::kConst;
    else if (m == "param" && !atom) space = Space::kParamKernel;  // refined by the symbol
    else if (m == "v2" || m == "v4") vec = m[1] - '0';
    else if (m == "b128") return false;
    else if (ParseType(m) != Type::kNone) t = ParseType(m);
    else if (IgnoredMemoryMod(m)) continue;
    else {
      bool found = false;
      for (const auto& k : kAtomOps) {
        if (atom && m == k.name) {
          aop = k.op;
          found = have_aop = true;
        }
      }
      if (!found) return false;
    }
  }
  if (t == Type::kNone || t == Type::kF16 || t == Type::kPred) return false;
  const auto& o = s.ops;
  if (atom) {
    if (!have_aop || vec != 1) return false;
    bool red = b == "red";
    std::size_t need = (red ? 2 : 3) + (aop == AtomOp::kCas ? 1 : 0);
    if (o.size() != need) return false;
    std::size_t k = red ? 0 : 1;
    if (!Addr(o[k], space, &in, why)) return false;
    in.fn = SelectAtom(aop, t);
    in.b = Src(o[k + 1], (aop == AtomOp::kInc || aop == AtomOp::kDec) ? Type::kU32 : t, why);
    if (aop == AtomOp::kCas) in.c = Src(o[k + 2], t, why);
    in.d = red ? kSinkSlot : Dst(o[0], why);
    if (!why->empty() || in.fn == nullptr) return false;
    Emit(in);
    return true;
  }
  if (o.size() != 2) return false;
  bool load = b == "ld" || b == "ldu";
  const Operand& value = load ? o[0] : o[1];
  if (!Addr(load ? o[1] : o[0], space, &in, why)) return false;
  in.fn = load ? SelectLoad() : SelectStore();
  in.width = static_cast<std::uint8_t>(TypeBytes(t));
  in.sign = IsSigned(t);
  in.vec = static_cast<std::uint8_t>(vec);
  if (vec == 1) {
    if (value.kind == Operand::kVector) return false;
    in.v[0] = load ? Dst(value, why) : Src(value, t, why);
  } else {
    if (value.kind != Operand::kVector || static_cast<int>(value.elems.size()) != vec) {
      *why = s.opcode + " needs a vector of " + std::to_string(vec);
      return false;
    }
    for (int k = 0; k < vec; ++k) {
      in.v[k] = load ? Dst(value.elems[static_cast<std::size_t>(k)], why)
                     : Src(value.elems[static_cast<std::size_t>(k)], t, why);
    }
  }
  if (!why->empty()) return false;
  Emit(in);
  return true;
}

bool Parser::LowerControl(const Statement& s, std::string* why) {
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  const std::string& b = s.base;
  const auto& o = s.ops;
  if (b == "bra") {
    if (o.size() != 1 || o[0].kind != Operand::kSymbol) return false;
    in.fn = SelectBranch();
    branch_fixups_.emplace_back(static_cast<std::uint32_t>(fn_->code.size()), o[0].name);
    Emit(in);
    return true;
  }
  if (b == "ret" || b == "exit" || b == "trap" || b == "brkpt" || b == "nanosleep" ||
      b == "pmevent" || b == "griddepcontrol") {
    in.fn = b == "ret" ? SelectRet() : b == "exit" ? SelectExit() : b == "trap" ? SelectTrap() : SelectNop();
    if (b == "nanosleep" && o.size() == 1) (void)Src(o[0], Type::kU32, why);
    Emit(in);
    return why->empty();
  }
  if (b == "call") {
    std::size_t k = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> rets, args;
    auto collect = [&](const Operand& list, std::vector<std::pair<std::uint64_t, std::uint64_t>>* out) {
      for (const Operand& e : list.elems) {
        const Symbol* sym = e.kind == Operand::kSymbol ? Find(e.name) : nullptr;
        if (sym == nullptr || sym->kind != Symbol::kFrameParam) {
          *why = "call arguments other than .param variables are not supported";
          return false;
        }
        out->emplace_back(sym->offset, sym->size);
      }
      return true;
    };
    if (k < o.size() && o[k].kind == Operand::kList) {
      if (!collect(o[k], &rets)) return false;
      ++k;
    }
    if (k >= o.size() || o[k].kind != Operand::kSymbol) {
      *why = "indirect calls are not supported";
      return false;
    }
    std::string callee = o[k].name;
    ++k;
    if (k < o.size() && o[k].kind == Operand::kList) {
      if (!collect(o[k], &args)) return false;
      ++k;
    }
    if (k != o.size()) {
      *why = "calls through a prototype are not supported";
      return false;
    }
    PendingCall pc;
    pc.function = fn_index_;
    pc.site = static_cast<std::uint32_t>(fn_->calls.size());
    pc.callee = callee;
    pc.args = std::move(args);
    pc.results = std::move(rets);
    pc.line = line_;
    calls_.push_back(std::move(pc));
    fn_->calls.emplace_back();
    in.fn = SelectCall();
    in.index = calls_.back().site;
    Emit(in);
    return true;
  }
  if (b == "bar" || b == "barrier") {
    if (Has(s, "warp")) {
      in.fn = SelectWarpYield();
      in.warp = SelectWarpSync();
      if (o.size() == 1) (void)Src(o[0], Type::kU32, why);
      Emit(in);
      return why->empty();
    }
    in.fn = SelectBarrier();
    if (Has(s, "red")) {
      if (Has(s, "popc")) in.mode = 2;
      else if (Has(s, "and")) in.mode = 3;
      else if (Has(s, "or")) in.mode = 4;
      else return false;
      if (o.size() != 3 && o.size() != 4) return false;
      in.d = Dst(o[0], why);
      in.a = Src(o[1], Type::kU32, why);
      if (o.size() == 4) in.b = Src(o[2], Type::kU32, why);
      in.c = Src(o.back(), Type::kPred, why);
      if (in.mode == 3) in.mode2 = 1;
    } else {
      in.mode = Has(s, "arrive") ? 1 : 0;
      if (o.empty() || o.size() > 2) return false;
      in.a = Src(o[0], Type::kU32, why);
      if (o.size() == 2) in.b = Src(o[1], Type::kU32, why);
    }
    if (in.b != kZeroSlot && in.b == Const(0)) in.b = kZeroSlot;
    Emit(in);
    return why->empty();
  }
  return false;
}

bool Parser::LowerWarp(const Statement& s, std::string* why) {
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  in.fn = SelectWarpYield();
  const auto& o = s.ops;
  const std::string& b = s.base;
  std::vector<Type> ts = Types(s);
  if (b == "activemask") {
    if (o.size() != 1) return false;
    in.warp = SelectActivemask();
    in.d = Dst(o[0], why);
    Emit(in);
    return why->empty();
  }
  if (!Has(s, "sync")) {
    *why = "'" + s.opcode + "' without .sync (removed for sm_70 and later) is not supported";
    return false;
  }
  if (b == "shfl") {
    static const char* kModes[] = {"up", "down", "bfly", "idx"};
    int mode = -1;
    for (int k = 0; k < 4; ++k) {
      if (Has(s, kModes[k])) mode = k;
    }
    if (mode < 0 || o.size() != 5 || ts.size() != 1 || TypeBytes(ts[0]) != 4) return false;
    in.warp = SelectShfl();
    in.mode = static_cast<std::uint8_t>(mode);
    if (o[0].kind == Operand::kPair) {
      in.d = Dst(o[0].elems[0], why);
      in.d2 = Dst(o[0].elems[1], why);
    } else {
      in.d = Dst(o[0], why);
    }
    in.a = Src(o[1], Type::kB32, why);
    in.b = Src(o[2], Type::kU32, why);
    in.c = Src(o[3], Type::kU32, why);
    in.e = Src(o[4], Type::kU32, why);
  } else if (b == "vote") {
    int mode = Has(s, "all") ? 0 : Has(s, "any") ? 1 : Has(s, "uni") ? 2 : Has(s, "ballot") ? 3 : -1;
    if (mode < 0 || o.size() != 3) return false;
    in.warp = SelectVote();
    in.mode = static_cast<std::uint8_t>(mode);
    in.d = Dst(o[0], why);
    in.a = Src(o[1], Type::kPred, why);
    in.e = Src(o[2], Type::kU32, why);
  } else if (b == "redux") {
    IntOp op;
    if (Has(s, "add")) op = IntOp::kAdd;
    else if (Has(s, "min")) op = IntOp::kMin;
    else if (Has(s, "max")) op = IntOp::kMax;
    else if (Has(s, "and")) op = IntOp::kAnd;
    else if (Has(s, "or")) op = IntOp::kOr;
    else if (Has(s, "xor")) op = IntOp::kXor;
    else return false;
    if (o.size() != 3 || ts.size() != 1) return false;
    in.warp = SelectRedux(op, ts[0]);
    in.d = Dst(o[0], why);
    in.a = Src(o[1], ts[0], why);
    in.e = Src(o[2], Type::kU32, why);
  } else if (b == "match") {
    bool all = Has(s, "all");
    if ((!all && !Has(s, "any")) || o.size() != 3 || ts.size() != 1) return false;
    in.warp = SelectMatch(all, ts[0]);
    if (o[0].kind == Operand::kPair) {
      in.d = Dst(o[0].elems[0], why);
      in.d2 = Dst(o[0].elems[1], why);
    } else {
      in.d = Dst(o[0], why);
    }
    in.a = Src(o[1], ts[0], why);
    in.e = Src(o[2], Type::kU32, why);
  } else {
    return false;
  }
  if (!why->empty() || in.warp == nullptr) return false;
  Emit(in);
  return true;
}

}  // namespace fakecuda::ptx::internal
