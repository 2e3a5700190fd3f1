// Copyright 2026 The cuhal Authors.
// Control-flow handlers (bra, call, ret, exit, trap), barriers and the warp collectives
// (shfl.sync, vote.sync, activemask, redux.sync, match.sync, bar.warp.sync). A collective's
// thread-side handler only makes the thread wait; the interpreter runs the WarpHandler once for
// the lanes of a warp that wait at the same instruction, then moves them past it.
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "fakecuda/ptx/ops_common.h"

namespace fakecuda::ptx {
namespace {

Action Branch(Thread& t, const Instr& in) {
  t.pc = static_cast<std::uint32_t>(in.imm);
  return Action::kJump;
}

constexpr std::uint64_t Align16(std::uint64_t v) { return (v + 15) / 16 * 16; }

Action Call(Thread& t, const Instr& in) {
  const CallSite& site = t.fn->calls[in.index];
  std::uint32_t callee_index = site.callee;
  const std::vector<Function>& functions = t.launch->program->functions;
  if (site.indirect) {
    const std::uint64_t v = t.r[site.target];
    const std::uint64_t index = v - kFunctionWindow;
    if ((v & kWindowMask) != kFunctionWindow || index >= functions.size() || !functions[index].defined ||
        functions[index].params.size() != site.args.size() ||
        functions[index].results.size() != site.results.size()) {
      char text[160];
      std::snprintf(text, sizeof(text), "indirect call to 0x%016llx, which is no function of this "
                    "module with the call's prototype", static_cast<unsigned long long>(v));
      t.Fault(CUDA_ERROR_ILLEGAL_INSTRUCTION, text);
      return Action::kYield;
    }
    callee_index = static_cast<std::uint32_t>(index);
  }
  const Function& callee = functions[callee_index];
  if (t.frames.size() >= 1024) {
    t.Fault(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "call stack overflow (1024 frames)");
    return Action::kYield;
  }
  t.frames.push_back(Frame{t.fn, t.pc + 1, t.reg_base, t.param_base, t.local_base, &site});
  std::uint32_t reg_base = t.reg_base + static_cast<std::uint32_t>(t.fn->init.size());
  if (t.regs.size() < reg_base + callee.init.size()) t.regs.resize(reg_base + callee.init.size());
  std::copy(callee.init.begin(), callee.init.end(), t.regs.begin() + reg_base);
  std::uint64_t param_base = Align16(t.local_base + t.fn->local_bytes);
  std::uint64_t local_base = Align16(param_base + callee.param_bytes);
  std::uint64_t top = local_base + callee.local_bytes;
  if (t.local.size() < top) t.local.resize(top);
  std::fill(t.local.begin() + static_cast<std::ptrdiff_t>(param_base),
            t.local.begin() + static_cast<std::ptrdiff_t>(top), std::byte{0});
  for (const ParamCopy& c : site.args) {
    if (site.indirect) {  // c.to is the argument's position (program.h)
      const ParamCopy& p = callee.params[c.to];
      std::memcpy(t.local.data() + param_base + p.to, t.local.data() + t.param_base + c.from,
                  std::min(c.size, p.size));
    } else {
      std::memcpy(t.local.data() + param_base + c.to, t.local.data() + t.param_base + c.from, c.size);
    }
  }
  t.fn = &callee;
  t.pc = 0;
  t.reg_base = reg_base;
  t.r = t.regs.data() + reg_base;
  t.param_base = param_base;
  t.local_base = local_base;
  return Action::kJump;
}

Action Exit(Thread& t, const Instr&) {
  t.state = ThreadState::kExited;
  return Action::kYield;
}

Action Ret(Thread& t, const Instr& in) {
  if (t.frames.empty()) return Exit(t, in);
  Frame f = t.frames.back();
  t.frames.pop_back();
  for (const ParamCopy& c : f.site->results) {
    if (f.site->indirect) {  // c.from is the result's position (program.h)
      const ParamCopy& r = t.fn->results[c.from];
      std::memcpy(t.local.data() + f.param_base + c.to, t.local.data() + t.param_base + r.to,
                  std::min(c.size, r.size));
    } else {
      std::memcpy(t.local.data() + f.param_base + c.to, t.local.data() + t.param_base + c.from, c.size);
    }
  }
  t.fn = f.fn;
  t.pc = f.return_pc;
  t.reg_base = f.reg_base;
  t.r = t.regs.data() + f.reg_base;
  t.param_base = f.param_base;
  t.local_base = f.local_base;
  return Action::kJump;
}

Action Trap(Thread& t, const Instr&) {
  t.Fault(CUDA_ERROR_LAUNCH_FAILED, "trap instruction");
  return Action::kYield;
}

Action Barrier(Thread& t, const Instr& in) {
  std::uint32_t id = Rd<std::uint32_t>(t, in.a) & 15;
  Block::Barrier& bar = t.block->barriers[id];
  bar.arrived++;
  bar.expected = in.b == kZeroSlot ? 0 : Rd<std::uint32_t>(t, in.b);
  bool p = (t.r[in.c] & 1) != 0;
  bar.reduce_popc += p ? 1 : 0;
  bar.reduce_and = bar.reduce_and && p;
  bar.reduce_or = bar.reduce_or || p;
  if (in.mode == 1) return Action::kNext;  // bar.arrive
  t.state = ThreadState::kBarrier;
  t.barrier = static_cast<std::uint8_t>(id);
  ++t.pc;
  return Action::kYield;
}

Action WarpYield(Thread& t, const Instr&) {
  t.state = ThreadState::kWarp;
  return Action::kYield;
}

std::uint32_t GroupMask(Thread* const* lanes, int n) {
  std::uint32_t m = 0;
  for (int i = 0; i < n; ++i) m |= 1u << lanes[i]->lane;
  return m;
}

void Shfl(Thread* const* lanes, int n, const Instr& in) {
  Thread* by_lane[32] = {};
  for (int i = 0; i < n; ++i) by_lane[lanes[i]->lane] = lanes[i];
  bool pvals[32] = {};
  for (int i = 0; i < n; ++i) {
    Thread& t = *lanes[i];
    int lane = static_cast<int>(t.lane);
    int bval = static_cast<int>(Rd<std::uint32_t>(t, in.b) & 0x1f);
    std::uint32_t c = Rd<std::uint32_t>(t, in.c);
    int cval = static_cast<int>(c & 0x1f);
    int segmask = static_cast<int>((c >> 8) & 0x1f);
    int max_lane = (lane & segmask) | (cval & ~segmask);
    int min_lane = lane & segmask;
    int j = lane;
    bool pval = false;
    switch (in.mode) {
      case kShflUp: j = lane - bval; pval = j >= max_lane; break;
      case kShflDown: j = lane + bval; pval = j <= max_lane; break;
      case kShflBfly: j = lane ^ bval; pval = j <= max_lane; break;
      default: j = min_lane | (bval & ~segmask); pval = j <= max_lane; break;
    }
    if (!pval || j < 0 || j > 31) j = lane;
    Thread* src = by_lane[j] != nullptr ? by_lane[j] : &t;
    t.warp_value = static_cast<std::uint32_t>(src->r[in.a]);
    pvals[i] = pval;
  }
  for (int i = 0; i < n; ++i) {
    lanes[i]->r[in.d] = lanes[i]->warp_value;
    lanes[i]->r[in.d2] = pvals[i] ? 1 : 0;
  }
}

void Vote(Thread* const* lanes, int n, const Instr& in) {
  std::uint32_t ballot = 0;
  for (int i = 0; i < n; ++i) {
    if (lanes[i]->r[in.a] & 1) ballot |= 1u << lanes[i]->lane;
  }
  std::uint32_t group = GroupMask(lanes, n);
  std::uint64_t r = 0;
  switch (in.mode) {
    case 0: r = ballot == group; break;
    case 1: r = ballot != 0; break;
    case 2: r = ballot == group || ballot == 0; break;
    default: r = ballot; break;
  }
  for (int i = 0; i < n; ++i) lanes[i]->r[in.d] = r;
}

void WarpSync(Thread* const*, int, const Instr&) {}

void Activemask(Thread* const* lanes, int n, const Instr& in) {
  std::uint32_t group = GroupMask(lanes, n);
  for (int i = 0; i < n; ++i) lanes[i]->r[in.d] = group;
}

template <typename T, IntOp kOp>
void Redux(Thread* const* lanes, int n, const Instr& in) {
  T acc = Rd<T>(*lanes[0], in.a);
  for (int i = 1; i < n; ++i) {
    T v = Rd<T>(*lanes[i], in.a);
    switch (kOp) {
      case IntOp::kAdd: acc = static_cast<T>(static_cast<std::uint32_t>(acc) + static_cast<std::uint32_t>(v)); break;
      case IntOp::kMin: acc = std::min(acc, v); break;
      case IntOp::kMax: acc = std::max(acc, v); break;
      case IntOp::kAnd: acc = acc & v; break;
      case IntOp::kOr: acc = acc | v; break;
      default: acc = acc ^ v; break;
    }
  }
  for (int i = 0; i < n; ++i) Wr<T>(*lanes[i], in.d, acc);
}

template <typename T, bool kAll>
void Match(Thread* const* lanes, int n, const Instr& in) {
  std::uint32_t group = GroupMask(lanes, n);
  if (kAll) {
    bool same = true;
    for (int i = 1; i < n; ++i) same = same && Rd<T>(*lanes[i], in.a) == Rd<T>(*lanes[0], in.a);
    for (int i = 0; i < n; ++i) {
      lanes[i]->r[in.d] = same ? group : 0;
      lanes[i]->r[in.d2] = same ? 1 : 0;
    }
    return;
  }
  for (int i = 0; i < n; ++i) {
    std::uint32_t m = 0;
    for (int j = 0; j < n; ++j) {
      if (Rd<T>(*lanes[j], in.a) == Rd<T>(*lanes[i], in.a)) m |= 1u << lanes[j]->lane;
    }
    lanes[i]->warp_value = m;
  }
  for (int i = 0; i < n; ++i) lanes[i]->r[in.d] = lanes[i]->warp_value;
}

}  // namespace

Handler SelectBranch() { return &Branch; }
Handler SelectCall() { return &Call; }
Handler SelectRet() { return &Ret; }
Handler SelectExit() { return &Exit; }
Handler SelectTrap() { return &Trap; }
Handler SelectBarrier() { return &Barrier; }
Handler SelectWarpYield() { return &WarpYield; }
WarpHandler SelectShfl() { return &Shfl; }
WarpHandler SelectVote() { return &Vote; }
WarpHandler SelectWarpSync() { return &WarpSync; }
WarpHandler SelectActivemask() { return &Activemask; }

WarpHandler SelectRedux(IntOp op, Type t) {
  bool s = t == Type::kS32;
  bool u = t == Type::kU32;
  bool b = t == Type::kB32;
  switch (op) {
    case IntOp::kAdd: return s ? &Redux<std::int32_t, IntOp::kAdd> : (u ? &Redux<std::uint32_t, IntOp::kAdd> : nullptr);
    case IntOp::kMin: return s ? &Redux<std::int32_t, IntOp::kMin> : (u ? &Redux<std::uint32_t, IntOp::kMin> : nullptr);
    case IntOp::kMax: return s ? &Redux<std::int32_t, IntOp::kMax> : (u ? &Redux<std::uint32_t, IntOp::kMax> : nullptr);
    case IntOp::kAnd: return b ? &Redux<std::uint32_t, IntOp::kAnd> : nullptr;
    case IntOp::kOr: return b ? &Redux<std::uint32_t, IntOp::kOr> : nullptr;
    case IntOp::kXor: return b ? &Redux<std::uint32_t, IntOp::kXor> : nullptr;
    default: return nullptr;
  }
}

WarpHandler SelectMatch(bool all, Type t) {
  if (TypeBytes(t) == 4) return all ? &Match<std::uint32_t, true> : &Match<std::uint32_t, false>;
  if (TypeBytes(t) == 8) return all ? &Match<std::uint64_t, true> : &Match<std::uint64_t, false>;
  return nullptr;
}

}  // namespace fakecuda::ptx
