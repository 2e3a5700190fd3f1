// Copyright 2026 The cuhal Authors.
#include "fakecuda/ptx/interpreter.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "core/base/mutex.h"
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
    if (l.faulted) return;  // the collective faulted (a bad ldmatrix row, a partial mma warp)
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

// What the workers of one launch share: the next block to claim and the first fault.
//
// Thread-safety: next_block and stop_after are atomics; the fault fields are guarded by mu.
// Determinism: blocks are claimed in linear order, so when a block faults every block before it
// has been claimed and runs to completion; the fault reported is the one of the lowest faulting
// block, the same one a serial run (block by block, in order) reports.
struct GridState {
  std::atomic<std::uint64_t> next_block{0};
  std::atomic<std::uint64_t> stop_after{~std::uint64_t{0}};  // the lowest faulting block so far
  std::atomic<std::uint64_t> instructions{0};
  cuhal::Mutex mu;
  std::uint64_t fault_block CUHAL_GUARDED_BY(mu) = ~std::uint64_t{0};
  int fault_code CUHAL_GUARDED_BY(mu) = 0;
  std::string fault CUHAL_GUARDED_BY(mu);
};

// One worker: claims blocks until none is left (or one before the next has faulted), each run
// with this worker's own Launch copy, global-memory cache, Block and Threads.
void RunWorker(const LaunchRequest& request, const Launch& base, std::size_t shared_bytes,
               GridState& grid) {
  GlobalMemory memory(request.resolver);
  Launch l = base;
  l.memory = &memory;
  Block b;
  std::vector<Thread> threads(static_cast<std::size_t>(l.block[0]) * l.block[1] * l.block[2]);
  const std::uint64_t total = static_cast<std::uint64_t>(l.grid[0]) * l.grid[1] * l.grid[2];
  for (;;) {
    std::uint64_t index = grid.next_block.fetch_add(1, std::memory_order_relaxed);
    if (index >= total || index > grid.stop_after.load(std::memory_order_relaxed)) break;
    b.ctaid = {static_cast<std::uint32_t>(index % l.grid[0]),
               static_cast<std::uint32_t>(index / l.grid[0] % l.grid[1]),
               static_cast<std::uint32_t>(index / (static_cast<std::uint64_t>(l.grid[0]) * l.grid[1]))};
    b.shared.assign(shared_bytes, std::byte{0});
    b.barriers = {};
    if (RunBlock(l, b, threads)) continue;
    cuhal::MutexLock lock(grid.mu);
    if (index < grid.fault_block) {
      grid.fault_block = index;
      grid.fault_code = l.fault_code;
      grid.fault = l.fault;
      grid.stop_after.store(index, std::memory_order_relaxed);
    }
    break;
  }
  grid.instructions.fetch_add(l.instructions, std::memory_order_relaxed);
}

// The worker count: FAKECUDA_PTX_WORKERS when set (1: serial), else the host's cores (at most
// kMaxWorkers); never more than there are blocks.
constexpr unsigned kMaxWorkers = 8;
unsigned WorkerCount(const LaunchRequest& request, std::uint64_t blocks) {
  unsigned n = request.workers;
  if (n == 0) {
    static const unsigned from_env = [] {
      const char* v = std::getenv("FAKECUDA_PTX_WORKERS");
      long parsed = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
      return parsed > 0 ? static_cast<unsigned>(std::min<long>(parsed, 64)) : 0u;
    }();
    n = from_env != 0 ? from_env : std::min(kMaxWorkers, std::max(1u, std::thread::hardware_concurrency()));
  }
  return static_cast<unsigned>(std::min<std::uint64_t>(n, std::max<std::uint64_t>(blocks, 1)));
}

}  // namespace

LaunchResult RunKernel(const LaunchRequest& request) {
  LaunchResult result;
  const Program& p = *request.program;
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
  std::size_t shared = request.dynamic_shared > 0 ? p.dynamic_shared_offset + request.dynamic_shared
                                                  : p.static_shared_bytes;
  const std::uint64_t blocks = static_cast<std::uint64_t>(l.grid[0]) * l.grid[1] * l.grid[2];
  GridState grid;
  const unsigned workers = WorkerCount(request, blocks);
  if (workers <= 1) {
    RunWorker(request, l, shared, grid);
  } else {
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    for (unsigned w = 1; w < workers; ++w) {
      pool.emplace_back([&request, &l, shared, &grid] { RunWorker(request, l, shared, grid); });
    }
    RunWorker(request, l, shared, grid);  // the calling thread is worker 0
    for (std::thread& t : pool) t.join();
  }
  result.instructions = grid.instructions.load();
  g_total_instructions.fetch_add(result.instructions, std::memory_order_relaxed);
  cuhal::MutexLock lock(grid.mu);
  if (grid.fault_code != 0) {
    result.code = grid.fault_code;
    result.message = grid.fault;
  }
  return result;
}

std::uint64_t TotalInstructions() { return g_total_instructions.load(std::memory_order_relaxed); }

}  // namespace fakecuda::ptx
