// Copyright 2026 The cuhal Authors.
// Lowering of the warp collectives: shfl.sync, vote.sync, activemask, redux.sync, match.sync.
#include <string>
#include <vector>

#include "fakecuda/ptx/lower_util.h"

namespace fakecuda::ptx::internal {

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
