// Copyright 2026 The cuhal Authors.
// Lowering of control flow (bra, call, ret, exit, trap, ...) and barriers (bar, barrier).
#include <string>
#include <vector>

#include "fakecuda/ptx/lower_util.h"

namespace fakecuda::ptx::internal {

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
    if (k < o.size() && o[k].kind == Operand::kReg) {
      // Through a register, with a prototype (or a list of possible targets) last.
      CallSite site;
      site.indirect = true;
      site.target = o[k].slot;
      ++k;
      if (k < o.size() && o[k].kind == Operand::kList) {
        if (!collect(o[k], &args)) return false;
        ++k;
      }
      if (k + 1 != o.size() || o[k].kind != Operand::kSymbol) {
        *why = "an indirect call needs a prototype or a target list last";
        return false;
      }
      for (std::size_t a = 0; a < args.size(); ++a) {
        site.args.push_back(ParamCopy{static_cast<std::uint32_t>(args[a].first), static_cast<std::uint32_t>(a),
                                      static_cast<std::uint32_t>(args[a].second)});
      }
      for (std::size_t r = 0; r < rets.size(); ++r) {
        site.results.push_back(ParamCopy{static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(rets[r].first),
                                         static_cast<std::uint32_t>(rets[r].second)});
      }
      fn_->calls.push_back(std::move(site));
      in.fn = SelectCall();
      in.index = static_cast<std::uint32_t>(fn_->calls.size() - 1);
      Emit(in);
      return true;
    }
    if (k >= o.size() || o[k].kind != Operand::kSymbol) {
      *why = "malformed call";
      return false;
    }
    std::string callee = o[k].name;
    ++k;
    if (k < o.size() && o[k].kind == Operand::kList) {
      if (!collect(o[k], &args)) return false;
      ++k;
    }
    if (k != o.size()) {
      *why = "a direct call with a prototype or target list is not supported";
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

}  // namespace fakecuda::ptx::internal
