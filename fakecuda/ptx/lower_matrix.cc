// Copyright 2026 The cuhal Authors.
// Lowering of the warp-level matrix instructions (ops_matrix.cc): mma.sync.aligned
// m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 and m16n8k8.row.col.f32.tf32.tf32.f32, and
// wmma.load/store/mma for m16n16k16 (f16, bf16) and m16n16k8 (tf32) with f32 accumulators.
// Other shapes and types (f16 accumulators, integer and fp8 mma, sparse mma, wgmma) are
// reported unsupported.
#include <string>
#include <vector>

#include "fakecuda/ptx/lower_util.h"

namespace fakecuda::ptx::internal {
namespace {

std::uint8_t ElementOf(Type t) {
  switch (t) {
    case Type::kF16: return kElemF16;
    case Type::kBF16: return kElemBF16;
    case Type::kTF32: case Type::kF32: return kElemF32;
    default: return 0;
  }
}

}  // namespace

bool Parser::AppendList(const Operand& op, int count, bool dst, std::string* why) {
  if (op.kind != Operand::kVector || static_cast<int>(op.elems.size()) != count) {
    *why = "expected a vector of " + std::to_string(count) + " registers";
    return false;
  }
  for (const Operand& e : op.elems) {
    fn_->lists.push_back(dst ? Dst(e, why) : Src(e, Type::kB32, why));
  }
  return why->empty();
}

bool Parser::LowerMatrix(const Statement& s, std::string* why) {
  Instr in;
  in.guard = s.guard;
  in.guard_neg = s.guard_neg ? 1 : 0;
  const auto& o = s.ops;
  if (s.base == "ldmatrix") {
    // ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}{.shared{::cta}}.b16 d, [a]
    int count = Has(s, "x1") ? 1 : Has(s, "x2") ? 2 : Has(s, "x4") ? 4 : 0;
    if (!Has(s, "sync") || !Has(s, "aligned") || !Has(s, "m8n8") || !Has(s, "b16") || count == 0 ||
        o.size() != 2) {
      return false;
    }
    for (const std::string& m : s.mods) {
      if (m != "sync" && m != "aligned" && m != "m8n8" && m != "b16" && m != "trans" &&
          m != "shared" && m != "shared::cta" && m[0] != 'x') {
        return false;
      }
    }
    Space space = Has(s, "shared") || Has(s, "shared::cta") ? Space::kShared : Space::kGeneric;
    if (!Addr(o[1], space, &in, why)) return false;
    in.index = static_cast<std::uint32_t>(fn_->lists.size());
    if (o[0].kind == Operand::kVector) {
      if (!AppendList(o[0], count, true, why)) return false;
    } else if (count == 1) {
      fn_->lists.push_back(Dst(o[0], why));
    } else {
      return false;
    }
    in.vec = static_cast<std::uint8_t>(count);
    in.mode = Has(s, "trans") ? 1 : 0;
    in.fn = SelectWarpYield();
    in.warp = SelectLdmatrix();
    if (!why->empty()) return false;
    Emit(in);
    return true;
  }
  if (!Has(s, "sync") || !Has(s, "aligned")) return false;
  std::vector<Type> ts = Types(s);
  const bool wmma = s.base == "wmma";
  const bool k16 = Has(s, "m16n8k16") || Has(s, "m16n16k16");
  const bool k8 = Has(s, "m16n8k8") || Has(s, "m16n16k8");
  if (wmma != (Has(s, "m16n16k16") || Has(s, "m16n16k8")) || (!k16 && !k8)) return false;
  if (wmma && (Has(s, "load") || Has(s, "store"))) {
    const bool load = Has(s, "load");
    if (ts.size() != 1 || o.size() != 3) return false;
    Frag f;
    std::uint8_t element = ElementOf(ts[0]);
    if (element == 0) return false;
    if (Has(s, "a")) f = k16 ? Frag::kWmmaA16 : Frag::kWmmaATf32;
    else if (Has(s, "b")) f = k16 ? Frag::kWmmaB16 : Frag::kWmmaBTf32;
    else if (Has(s, "c") || Has(s, "d")) f = Frag::kWmmaC;
    else return false;
    if ((f == Frag::kWmmaC) != (ts[0] == Type::kF32)) return false;  // f16 accumulators: no
    if (k8 && f != Frag::kWmmaC && ts[0] != Type::kTF32) return false;
    if (k16 && f != Frag::kWmmaC && element == kElemF32) return false;
    Space space = Has(s, "global") ? Space::kGlobal : Has(s, "shared") || Has(s, "shared::cta") ? Space::kShared : Space::kGeneric;
    if (!Addr(o[load ? 1 : 0], space, &in, why)) return false;
    in.index = static_cast<std::uint32_t>(fn_->lists.size());
    if (!AppendList(o[load ? 0 : 1], FragRegisters(f, element), load, why)) return false;
    in.b = Src(o[2], Type::kU32, why);
    in.fn = load ? SelectWmmaLoad() : SelectWmmaStore();
    in.mode = static_cast<std::uint8_t>(f);
    in.mode2 = Has(s, "col") ? 1 : 0;
    in.width = element;
    if (!why->empty()) return false;
    Emit(in);
    return true;
  }
  if (!wmma && !(Has(s, "row") && Has(s, "col"))) return false;
  if (o.size() != 4 || ts.empty() || ts.front() != Type::kF32 || ts.back() != Type::kF32) return false;
  // wmma f16 names only the accumulator types (.f32.f32); the others name A and B too.
  Type ab = ts.size() == 2 && wmma ? Type::kF16 : (ts.size() == 4 && ts[1] == ts[2] ? ts[1] : Type::kNone);
  if (ab == Type::kNone || Has(s, "satfinite") || Has(s, "sp")) return false;
  Frag fa;
  if (k16 && (ab == Type::kF16 || ab == Type::kBF16)) fa = wmma ? Frag::kWmmaA16 : Frag::kMmaA16;
  else if (k8 && ab == Type::kTF32) fa = wmma ? Frag::kWmmaATf32 : Frag::kMmaATf32;
  else return false;
  const std::uint8_t element = ab == Type::kTF32 ? kElemF32 : ElementOf(ab);
  Frag fb = fa == Frag::kMmaA16 ? Frag::kMmaB16 : fa == Frag::kMmaATf32 ? Frag::kMmaBTf32
          : fa == Frag::kWmmaA16 ? Frag::kWmmaB16 : Frag::kWmmaBTf32;
  Frag fc = wmma ? Frag::kWmmaC : Frag::kMmaC;
  in.index = static_cast<std::uint32_t>(fn_->lists.size());
  if (!AppendList(o[0], FragRegisters(fc, kElemF32), true, why) ||
      !AppendList(o[1], FragRegisters(fa, element), false, why) ||
      !AppendList(o[2], FragRegisters(fb, element), false, why) ||
      !AppendList(o[3], FragRegisters(fc, kElemF32), false, why)) {
    return false;
  }
  in.fn = SelectWarpYield();
  in.warp = SelectMma();
  in.mode = static_cast<std::uint8_t>(fa);
  in.width = element;
  Emit(in);
  return true;
}

}  // namespace fakecuda::ptx::internal
