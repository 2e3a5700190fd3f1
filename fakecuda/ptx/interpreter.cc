// Copyright 2026 The cuhal Authors.
#include "fakecuda/ptx/interpreter.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>

#include "fakecuda/ptx/thread.h"

namespace fakecuda::ptx {
namespace {

std::atomic<std::uint64_t> g_total_instructions{0};

// Runs `t` until it yields; returns the instructions executed.
std::uint64_t Run(Thread& t) {
  std::uint64_t n = 0;
  const Instr* code = t.fn->code.data();
  for (;;) {
    const Instr& in = code[t.pc];
    ++n;
    if (((t.r[in.guard] ^ in.guard_neg) & 1) == 0) {
      ++t.pc;
      continue;
    }
    Action a = in.fn(t, in);
    if (a == Action::kNext) {
      ++t.pc;
    } else if (a == Action::kJump) {
      code = t.fn->code.data();
    } else {
      return n;
    }
  }
}

void InitThread(Thread& t, Launch& l, Block& b, std::uint32_t linear) {
  const Function& k = *l.kernel;
  t.launch = &l;
  t.block = &b;
  t.fn = &k;
  t.pc = 0;
  t.reg_base = 0;
  t.state = ThreadState::kRunning;
  t.carry = false;
  t.linear = linear;
  t.tid = {linear % l.block[0], (linear / l.block[0]) % l.block[1], linear / (l.block[0] * l.block[1])};
  t.lane = linear % 32;
  t.warp_id = linear / 32;
  t.regs.resize(std::max(t.regs.size(), k.init.size()));
  std::copy(k.init.begin(), k.init.end(), t.regs.begin());
  t.r = t.regs.data();
  t.param_base = 0;
  t.local_base = (k.param_bytes + 15) / 16 * 16;
  std::size_t local = t.local_base + k.local_bytes;
  if (t.local.size() < local) t.local.resize(local);
  std::fill(t.local.begin(), t.local.begin() + static_cast<std::ptrdiff_t>(local), std::byte{0});
  t.frames.clear();
}

// Runs the lanes [begin, end) of one warp until none is running (warp collectives resolved).
void RunWarp(std::vector<Thread>& threads, std::size_t begin, std::size_t end, Launch& l) {
  Thread* group[32];
  for (;;) {
    for (std::size_t i = begin; i < end; ++i) {
      if (threads[i].state == ThreadState::kRunning) {
        l.instructions += Run(threads[i]);
        if (l.faulted) return;
      }
    }
    const Instr* at = nullptr;
    int n = 0;
    for (std::size_t i = begin; i < end; ++i) {
      Thread& t = threads[i];
      if (t.state != ThreadState::kWarp) continue;
      const Instr* here = &t.fn->code[t.pc];
      if (at == nullptr) at = here;
      if (here == at) group[n++] = &t;
    }
    if (at == nullptr) return;
    at->warp(group, n, *at);
    for (int i = 0; i < n; ++i) {
      group[i]->state = ThreadState::kRunning;
      ++group[i]->pc;
    }
  }
}

std::string DescribeDeadlock(const Launch& l, const Block& b, const std::vector<Thread>& threads) {
  std::ostringstream os;
  os << "kernel " << l.kernel_name << ": block (" << b.ctaid[0] << "," << b.ctaid[1] << ","
     << b.ctaid[2] << ") cannot make progress (a barrier that not every thread reaches):";
  int shown = 0;
  for (const Thread& t : threads) {
    if (t.state == ThreadState::kExited || shown >= 4) continue;
    ++shown;
    int line = t.pc > 0 && t.pc <= t.fn->code.size() ? t.fn->code[t.pc - 1].line : 0;
    os << " thread (" << t.tid[0] << "," << t.tid[1] << "," << t.tid[2] << ") waits at ptx line " << line
       << ";";
  }
  return os.str();
}

// Runs one block to completion; false when the launch failed.
bool RunBlock(Launch& l, Block& b, std::vector<Thread>& threads) {
  std::size_t n = threads.size();
  for (std::size_t i = 0; i < n; ++i) InitThread(threads[i], l, b, static_cast<std::uint32_t>(i));
  for (;;) {
    for (std::size_t w = 0; w < n; w += 32) {
      RunWarp(threads, w, std::min(n, w + 32), l);
      if (l.faulted) return false;
    }
    std::uint32_t live = 0;
    for (const Thread& t : threads) live += t.state != ThreadState::kExited ? 1 : 0;
    if (live == 0) return true;
    bool released = false;
    for (std::size_t id = 0; id < b.barriers.size(); ++id) {
      Block::Barrier& bar = b.barriers[id];
      if (bar.arrived == 0) continue;
      std::uint32_t expected = bar.expected != 0 ? bar.expected : live;
      if (bar.arrived < expected) continue;
      for (Thread& t : threads) {
        if (t.state != ThreadState::kBarrier || t.barrier != id) continue;
        const Instr& in = t.fn->code[t.pc - 1];
        if (in.mode == 2) t.r[in.d] = bar.reduce_popc;
        if (in.mode == 3) t.r[in.d] = bar.reduce_and ? 1 : 0;
        if (in.mode == 4) t.r[in.d] = bar.reduce_or ? 1 : 0;
        t.state = ThreadState::kRunning;
      }
      bar = Block::Barrier();
      released = true;
    }
    if (!released) {
      l.faulted = true;
      l.fault_code = CUDA_ERROR_LAUNCH_FAILED;
      l.fault = DescribeDeadlock(l, b, threads);
      return false;
    }
  }
}

}  // namespace

LaunchResult RunKernel(const LaunchRequest& request) {
  LaunchResult result;
  const Program& p = *request.program;
  GlobalMemory memory(request.resolver);
  Launch l;
  l.program = &p;
  l.kernel = &p.functions[static_cast<std::size_t>(request.kernel)];
  l.kernel_name = l.kernel->name;
  l.grid = request.grid;
  l.block = request.block;
  l.dynamic_shared = request.dynamic_shared;
  l.params = request.params;
  l.param_size = request.param_size;
  l.global_addresses = request.global_addresses;
  l.global_addresses.resize(p.globals.size(), 0);
  l.memory = &memory;
  Block b;
  std::size_t shared = request.dynamic_shared > 0 ? p.dynamic_shared_offset + request.dynamic_shared
                                                  : p.static_shared_bytes;
  std::vector<Thread> threads(static_cast<std::size_t>(l.block[0]) * l.block[1] * l.block[2]);
  for (std::uint32_t z = 0; z < l.grid[2] && !l.faulted; ++z) {
    for (std::uint32_t y = 0; y < l.grid[1] && !l.faulted; ++y) {
      for (std::uint32_t x = 0; x < l.grid[0] && !l.faulted; ++x) {
        b.ctaid = {x, y, z};
        b.shared.assign(shared, std::byte{0});
        b.barriers = {};
        RunBlock(l, b, threads);
      }
    }
  }
  result.instructions = l.instructions;
  g_total_instructions.fetch_add(l.instructions, std::memory_order_relaxed);
  if (l.faulted) {
    result.code = l.fault_code;
    result.message = l.fault;
  }
  return result;
}

std::uint64_t TotalInstructions() { return g_total_instructions.load(std::memory_order_relaxed); }

}  // namespace fakecuda::ptx
