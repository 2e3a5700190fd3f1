// Copyright 2026 The cuhal Authors.
// Lowering of PTX instructions to the interpreter's IR: the opcode and its modifiers pick a
// handler (ops.h), operands become slots. This file holds the operand lowering (slots,
// constants, addresses) and the dispatch by opcode family to lower_<family>.cc; whatever is not
// recognised is reported as an unsupported instruction, with its line, rather than run
// approximately.
#include <string>
#include <vector>
#include <bit>
#include <cstdint>
#include <set>

#include "fakecuda/ptx/lower_util.h"

namespace fakecuda::ptx::internal {

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
        // A function's address (for an indirect call): it may be called from here.
        if (int f = p_->FindFunction(op.name); f >= 0) {
          fn_->callees.push_back(static_cast<std::uint32_t>(f));
          return Const(kFunctionWindow + static_cast<std::uint64_t>(f));
        }
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
      "exit", "trap", "brkpt", "nanosleep", "pmevent", "griddepcontrol", "bar", "barrier",
      "cp", "mma", "wmma", "ldmatrix"};
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
             s.base == "prefetch" || s.base == "prefetchu" || s.base == "membar" || s.base == "fence" ||
             s.base == "cp") {
    ok = LowerMemory(s, why);
  } else if (s.base == "shfl" || s.base == "vote" || s.base == "activemask" || s.base == "redux" ||
             s.base == "match") {
    ok = LowerWarp(s, why);
  } else if (s.base == "mma" || s.base == "wmma" || s.base == "ldmatrix") {
    ok = LowerMatrix(s, why);
  } else {
    ok = LowerControl(s, why);
  }
  if (!ok && why->empty()) *why = Unsupported(s);
  return ok;
}


}  // namespace fakecuda::ptx::internal
