// Copyright 2026 The cuhal Authors.
// Lowering of moves (mov, its vector pack/unpack forms, cvta) and memory instructions (ld, st,
// atom, red, prefetch, fences).
#include <string>
#include <vector>

#include "fakecuda/ptx/lower_util.h"

namespace fakecuda::ptx::internal {

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
    in.fn = b == "membar" || b == "fence" ? SelectFence() : SelectNop();
    Emit(in);
    return true;
  }
  if (b == "cp") return LowerCpAsync(s, why);
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
  if (t == Type::kNone || t == Type::kPred || t == Type::kTF32) return false;
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

// cp.async.{ca,cg}.shared{::cta}.global [dst], [src], size{, src-size}{, cache-policy};
// cp.async.commit_group; cp.async.wait_group N; cp.async.wait_all. The bulk (TMA) forms and
// .mbarrier completion are not supported.
bool Parser::LowerCpAsync(const Statement& s, std::string* why) {
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  const auto& o = s.ops;
  if (s.mods.empty() || s.mods[0] != "async") return false;
  if (Has(s, "commit_group") || Has(s, "wait_group") || Has(s, "wait_all")) {
    if (s.mods.size() != 2) return false;
    in.fn = SelectNop();  // every copy is already complete (SelectCpAsync)
    Emit(in);
    return true;
  }
  for (std::size_t k = 1; k < s.mods.size(); ++k) {
    const std::string& m = s.mods[k];
    if (m != "ca" && m != "cg" && m != "shared" && m != "shared::cta" && m != "global" &&
        m != "L2::64B" && m != "L2::128B" && m != "L2::256B" && m != "L2::cache_hint") {
      return false;
    }
  }
  if (o.size() < 3 || o.size() > 5 || o[2].kind != Operand::kImm) return false;
  const std::uint64_t size = o[2].imm;
  if (size != 4 && size != 8 && size != 16) return false;
  if (!Addr(o[0], Space::kShared, &in, why)) return false;
  Instr src;
  if (!Addr(o[1], Space::kGlobal, &src, why)) return false;
  in.b = src.a;
  in.c = Const(static_cast<std::uint64_t>(src.imm));
  in.width = static_cast<std::uint8_t>(size);
  in.e = o.size() >= 4 ? Src(o[3], Type::kU32, why) : Const(size);
  if (o.size() == 5) (void)Src(o[4], Type::kB64, why);  // the cache policy: no effect here
  in.fn = SelectCpAsync();
  if (!why->empty()) return false;
  Emit(in);
  return true;
}

}  // namespace fakecuda::ptx::internal
