// Copyright 2026 The cuhal Authors.
// The instruction IR of fakecuda's PTX interpreter: what the parser (parser.h) produces from PTX
// text and the interpreter (interpreter.h) runs. Everything a run needs is decided here, at load
// time: every operand is a register-file slot (immediates are constant slots, special registers
// and variable addresses are read by small prefix instructions), every instruction carries the
// handler that implements its exact type and modifiers, branch targets are instruction indices.
//
// Invariants:
//  1. Slot 0 of every frame holds 1 (the "always" guard), slot 1 holds 0, slot 2 is a sink for
//     results nobody reads ("_"); constants follow the declared registers. A frame's registers
//     start as a copy of its function's `init` vector.
//  2. A slot holds the value's bits zero-extended to 64; readers truncate to the width of the
//     type they read, so a slot's upper bits never change a result.
//  3. Addresses are slot value + `imm`. Local addresses are offsets into the thread's local stack
//     (all frames), shared addresses offsets into the block's shared memory, kernel-parameter
//     addresses offsets into the launch's parameter buffer, frame-parameter addresses offsets
//     into the current frame's parameter area. Generic addresses of shared and local memory
//     live in windows that no host or fake-device address uses (kSharedWindow, kLocalWindow).
#ifndef CUHAL_FAKECUDA_PTX_PROGRAM_H_
#define CUHAL_FAKECUDA_PTX_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fakecuda::ptx {

using Slot = std::uint32_t;
inline constexpr Slot kTrueSlot = 0;
inline constexpr Slot kZeroSlot = 1;
inline constexpr Slot kSinkSlot = 2;
inline constexpr Slot kFirstFreeSlot = 3;

inline constexpr std::uint64_t kWindowMask = 0xFF00000000000000ULL;
inline constexpr std::uint64_t kSharedWindow = 0xFE00000000000000ULL;
inline constexpr std::uint64_t kLocalWindow = 0xFD00000000000000ULL;
inline constexpr std::uint64_t kFunctionWindow = 0xFC00000000000000ULL;  // function addresses

struct Instr;
struct Thread;

// What a handler tells the run loop.
enum class Action : std::uint8_t {
  kNext,   // go on with the next instruction
  kJump,   // the handler set the thread's pc
  kYield,  // the thread waits (barrier, warp collective) or has exited or faulted
};
using Handler = Action (*)(Thread& t, const Instr& in);
// A warp collective, run once for the lanes of one warp that wait at the same instruction.
using WarpHandler = void (*)(Thread* const* lanes, int count, const Instr& in);

enum class Space : std::uint8_t { kGeneric, kGlobal, kShared, kLocal, kConst, kParamKernel, kParamFrame };

struct Instr {
  Handler fn = nullptr;
  WarpHandler warp = nullptr;  // warp collectives only
  Slot guard = kTrueSlot;      // predicate slot; the instruction runs when (value ^ guard_neg) & 1
  std::uint8_t guard_neg = 0;
  Space space = Space::kGeneric;
  std::uint8_t width = 0;      // memory element bytes
  std::uint8_t vec = 1;        // vector elements (ld/st .v2/.v4, mov pack/unpack)
  std::uint8_t mode = 0;       // rounding mode, comparison, shuffle mode, ... (handler-specific)
  std::uint8_t mode2 = 0;
  bool sign = false;           // sign-extending loads
  Slot d = kSinkSlot;          // destination
  Slot d2 = kSinkSlot;         // second destination (setp p|q, shfl d|p)
  Slot a = kZeroSlot, b = kZeroSlot, c = kZeroSlot, e = kZeroSlot;  // sources
  Slot v[4] = {kSinkSlot, kSinkSlot, kSinkSlot, kSinkSlot};  // vector operands
  std::int64_t imm = 0;        // address offset, branch target, special register, ...
  std::uint32_t index = 0;     // callee / global variable / call-site table index
  int line = 0;                // PTX source line
};

// One argument or return value passed by a call: bytes copied between parameter areas.
struct ParamCopy {
  std::uint32_t from = 0;  // offset in the source frame's parameter area
  std::uint32_t to = 0;    // offset in the destination frame's parameter area
  std::uint32_t size = 0;
};

struct CallSite {
  std::uint32_t callee = 0;          // function index
  std::vector<ParamCopy> args;       // caller area -> callee area
  std::vector<ParamCopy> results;    // callee area -> caller area (at ret)
  // A call through a register (`call (r), %rd, (a), prototype;`): the callee is the function
  // whose address (kFunctionWindow + index) `target` holds at run time; args[k].to and
  // results[k].from are then the parameter's position k, resolved against the callee's layout
  // when the call runs.
  bool indirect = false;
  Slot target = 0;
};

struct Function {
  std::string name;
  bool is_entry = false;
  bool defined = false;                // has a body
  std::vector<Instr> code;
  std::vector<std::uint64_t> init;     // initial register file (invariant 1)
  std::uint32_t local_bytes = 0;       // .local depot of one frame
  std::uint32_t param_bytes = 0;       // this frame's parameter area (own params + call sites)
  std::vector<ParamCopy> params;       // own parameters: (unused, offset, size)
  std::vector<ParamCopy> results;      // own return values: (unused, offset, size)
  std::vector<CallSite> calls;
  std::vector<Slot> lists;             // operand lists of matrix instructions (Instr::index)
  std::vector<std::uint32_t> callees;  // functions this one calls (for error propagation)
  std::string error;                   // why it cannot run (unsupported instruction), or empty
  int error_line = 0;
};

// A parsed module: functions, module variables, the static shared-memory layout.
struct Program {
  std::vector<Function> functions;
  std::vector<std::string> globals;    // module .global/.const variables, by index
  std::uint32_t static_shared_bytes = 0;
  std::uint32_t dynamic_shared_offset = 0;  // where `.extern .shared` arrays start
  int FindFunction(const std::string& name) const;
  // Why entry `kernel` cannot run (its own error or one of a function it calls), or empty.
  std::string KernelError(int kernel) const;
};

}  // namespace fakecuda::ptx

#endif  // CUHAL_FAKECUDA_PTX_PROGRAM_H_
