// Copyright 2026 The cuhal Authors.
// The execution state of the PTX interpreter, per worker (interpreter.h): one Launch (grid,
// parameters, global memory, the worker's first fault), one Block at a time (shared memory,
// barriers), and the Threads of that block
// (program counter, register frames, local memory). Handlers (ops.h) read and write these
// directly; the interpreter (interpreter.h) schedules the threads.
//
// Invariants:
//  1. `Thread::r` points at the current frame's registers inside `Thread::regs`; anything that
//     grows `regs` (a call) recomputes it.
//  2. A thread's local stack holds, per frame, its parameter area then its .local depot; local
//     addresses are offsets into the whole stack, so a callee may use its caller's locals.
//  3. The first fault of a worker's block wins; once set, every thread of the block stops at its
//     next yield (the interpreter then reports the lowest faulting block of the grid).
//  4. Nothing here is shared between workers except the Program, the parameter buffer and
//     global memory (reached through atomic accesses).
#ifndef CUHAL_FAKECUDA_PTX_THREAD_H_
#define CUHAL_FAKECUDA_PTX_THREAD_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fakecuda/ptx/memory.h"
#include "fakecuda/ptx/program.h"

namespace fakecuda::ptx {

struct Block;

// A launch as the interpreter runs it.
struct Launch {
  const Program* program = nullptr;
  const Function* kernel = nullptr;
  std::string kernel_name;
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t dynamic_shared = 0;
  const std::byte* params = nullptr;
  std::size_t param_size = 0;
  std::vector<std::uint64_t> global_addresses;  // Program::globals, resolved
  GlobalMemory* memory = nullptr;
  std::uint64_t clock = 0;                      // %clock64: advances on every read
  bool faulted = false;
  int fault_code = 0;  // CUresult
  std::string fault;   // the report
  std::uint64_t instructions = 0;  // thread-instructions executed
};

enum class ThreadState : std::uint8_t { kRunning, kBarrier, kWarp, kExited };

struct Frame {
  const Function* fn = nullptr;
  std::uint32_t return_pc = 0;
  std::uint32_t reg_base = 0;
  std::uint64_t param_base = 0;
  std::uint64_t local_base = 0;
  const CallSite* site = nullptr;  // the call that made this frame (null: the kernel's)
};

struct Thread {
  std::uint64_t* r = nullptr;      // current frame's registers (invariant 1)
  std::uint32_t pc = 0;
  std::uint32_t reg_base = 0;      // current frame's first slot in `regs`
  const Function* fn = nullptr;
  Launch* launch = nullptr;
  Block* block = nullptr;
  ThreadState state = ThreadState::kRunning;
  std::uint8_t barrier = 0;        // the barrier waited at (kBarrier)
  bool carry = false;              // add.cc / addc
  std::array<std::uint32_t, 3> tid{0, 0, 0};
  std::uint32_t linear = 0;        // linear thread index in the block
  std::uint32_t lane = 0;
  std::uint32_t warp_id = 0;
  std::uint64_t param_base = 0;    // current frame's parameter area (local stack offset)
  std::uint64_t local_base = 0;    // current frame's depot
  std::vector<std::uint64_t> regs;
  std::vector<std::byte> local;
  std::vector<Frame> frames;
  std::uint64_t warp_value = 0;    // a lane's result of a warp collective, before it is written

  // Records the launch's first fault (a CUresult and its report) and stops this thread.
  void Fault(int code, const std::string& what);
};

// The state of one block while it runs.
struct Block {
  std::array<std::uint32_t, 3> ctaid{0, 0, 0};
  std::vector<std::byte> shared;
  struct Barrier {
    std::uint32_t arrived = 0;
    std::uint32_t expected = 0;  // 0: every live thread of the block
    std::uint32_t reduce_popc = 0;
    bool reduce_and = true;
    bool reduce_or = false;
  };
  std::array<Barrier, 16> barriers{};
};

// Memory access helpers for handlers. Each returns the host bytes of [address, address + size)
// in `space` for thread `t`, or null after recording the fault (CUDA_ERROR_ILLEGAL_ADDRESS or,
// for misalignment, CUDA_ERROR_MISALIGNED_ADDRESS).
std::byte* Access(Thread& t, Space space, std::uint64_t address, std::size_t size, bool write);

}  // namespace fakecuda::ptx

#endif  // CUHAL_FAKECUDA_PTX_THREAD_H_
