// Copyright 2026 The cuhal Authors.
// Memory handlers (ld, st, atom, red) and the address translation of every state space, with
// the faults of bad accesses (reported as compute-sanitizer's memcheck does).
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <type_traits>

#include "fakecuda/ptx/ops_common.h"

namespace fakecuda::ptx {

void Thread::Fault(int code, const std::string& what) {
  state = ThreadState::kExited;
  if (launch->faulted) return;
  launch->faulted = true;
  launch->fault_code = code;
  std::ostringstream os;
  os << "kernel " << launch->kernel_name << ": " << what << " by thread (" << tid[0] << "," << tid[1]
     << "," << tid[2] << ") in block (" << block->ctaid[0] << "," << block->ctaid[1] << ","
     << block->ctaid[2] << ")";
  if (fn != nullptr && pc < fn->code.size()) {
    os << " at ptx line " << fn->code[pc].line << " of " << fn->name;
  }
  launch->fault = os.str();
}

namespace {

const char* SpaceName(Space s) {
  switch (s) {
    case Space::kGlobal: return "__global__";
    case Space::kShared: return "__shared__";
    case Space::kLocal: return "__local__";
    case Space::kConst: return "__constant__";
    case Space::kParamKernel: case Space::kParamFrame: return "__param__";
    default: return "__generic__";
  }
}

std::byte* Bad(Thread& t, Space s, std::uint64_t address, std::size_t size, bool write, const char* why) {
  t.Fault(CUDA_ERROR_ILLEGAL_ADDRESS, DescribeBadAccess(SpaceName(s), write, size, address, why));
  return nullptr;
}

std::byte* InBuffer(Thread& t, Space s, std::byte* data, std::size_t buffer_size, std::uint64_t offset,
                    std::uint64_t shown, std::size_t size, bool write) {
  if (offset < buffer_size && buffer_size - offset >= size) return data + offset;
  return Bad(t, s, shown, size, write, "out of bounds");
}

}  // namespace

std::byte* Access(Thread& t, Space space, std::uint64_t address, std::size_t size, bool write) {
  if (size > 1 && (address & (size - 1)) != 0) {
    t.Fault(CUDA_ERROR_MISALIGNED_ADDRESS,
            DescribeBadAccess(SpaceName(space), write, size, address, "misaligned address"));
    return nullptr;
  }
  switch (space) {
    case Space::kGeneric: {
      std::uint64_t w = address & kWindowMask;
      if (w == kSharedWindow) {
        return InBuffer(t, Space::kShared, t.block->shared.data(), t.block->shared.size(),
                        address & ~kWindowMask, address, size, write);
      }
      if (w == kLocalWindow) {
        return InBuffer(t, Space::kLocal, t.local.data(), t.local.size(), address & ~kWindowMask,
                        address, size, write);
      }
      [[fallthrough]];
    }
    case Space::kGlobal:
    case Space::kConst: {
      std::byte* p = t.launch->memory->Translate(address, size);
      if (p == nullptr) {
        return Bad(t, space == Space::kConst ? Space::kConst : Space::kGlobal, address, size, write,
                   "address is not inside any allocation");
      }
      return p;
    }
    case Space::kShared:
      return InBuffer(t, space, t.block->shared.data(), t.block->shared.size(), address, address, size, write);
    case Space::kLocal:
      return InBuffer(t, space, t.local.data(), t.local.size(), address, address, size, write);
    case Space::kParamKernel:
      if (write) return Bad(t, space, address, size, write, "kernel parameters are read-only");
      return InBuffer(t, space, const_cast<std::byte*>(t.launch->params), t.launch->param_size, address,
                      address, size, write);
    case Space::kParamFrame:
      return InBuffer(t, space, t.local.data(), t.local.size(), t.param_base + address, address, size, write);
  }
  return nullptr;
}

namespace {

// Memory is reached through relaxed atomic accesses of the element size: blocks run on several
// workers (interpreter.h), and a program may read what another block writes with atomics (the
// CUDA idiom `old = *p; do { ... } while (atomicCAS(p, ...) != ...)`); on x86-64 a relaxed
// atomic access is a plain move. Access() has checked the alignment.
template <typename U>
U LoadElement(std::byte* p) {
  return std::atomic_ref<U>(*reinterpret_cast<U*>(p)).load(std::memory_order_relaxed);
}
template <typename U>
void StoreElement(std::byte* p, std::uint64_t v) {
  std::atomic_ref<U>(*reinterpret_cast<U*>(p)).store(static_cast<U>(v), std::memory_order_relaxed);
}

Action Load(Thread& t, const Instr& in) {
  std::uint64_t address = t.r[in.a] + static_cast<std::uint64_t>(in.imm);
  std::size_t w = in.width;
  std::byte* p = Access(t, in.space, address, w * in.vec, false);
  if (p == nullptr) return Action::kYield;
  for (int i = 0; i < in.vec; ++i, p += w) {
    std::uint64_t v = 0;
    switch (w) {
      case 1: { std::uint8_t x = LoadElement<std::uint8_t>(p); v = in.sign ? static_cast<std::uint64_t>(static_cast<std::int8_t>(x)) : x; break; }
      case 2: { std::uint16_t x = LoadElement<std::uint16_t>(p); v = in.sign ? static_cast<std::uint64_t>(static_cast<std::int16_t>(x)) : x; break; }
      case 4: { std::uint32_t x = LoadElement<std::uint32_t>(p); v = in.sign ? static_cast<std::uint64_t>(static_cast<std::int32_t>(x)) : x; break; }
      default: v = LoadElement<std::uint64_t>(p); break;
    }
    t.r[in.v[i]] = v;
  }
  t.r[kSinkSlot] = 0;
  return Action::kNext;
}

Action Store(Thread& t, const Instr& in) {
  std::uint64_t address = t.r[in.a] + static_cast<std::uint64_t>(in.imm);
  std::size_t w = in.width;
  std::byte* p = Access(t, in.space, address, w * in.vec, true);
  if (p == nullptr) return Action::kYield;
  for (int i = 0; i < in.vec; ++i, p += w) {
    switch (w) {
      case 1: StoreElement<std::uint8_t>(p, t.r[in.v[i]]); break;
      case 2: StoreElement<std::uint16_t>(p, t.r[in.v[i]]); break;
      case 4: StoreElement<std::uint32_t>(p, t.r[in.v[i]]); break;
      default: StoreElement<std::uint64_t>(p, t.r[in.v[i]]); break;
    }
  }
  return Action::kNext;
}

Action Nop(Thread&, const Instr&) { return Action::kNext; }

// cp.async.{ca,cg}.shared.global [a + imm], [b + c], width{, e}: done at once (a program may
// read the destination only after cp.async.wait_group/wait_all, which are then no-ops; a copy
// finished early is one of the executions the PTX memory model allows). Bytes past the source
// size e are zero-filled.
Action CpAsync(Thread& t, const Instr& in) {
  const std::uint64_t dst = t.r[in.a] + static_cast<std::uint64_t>(in.imm);
  const std::uint64_t src = t.r[in.b] + t.r[in.c];
  const std::size_t size = in.width;
  const std::size_t src_size = std::min<std::uint64_t>(t.r[in.e], size);
  std::byte bytes[16] = {};
  if (src_size == size) {
    std::byte* p = Access(t, Space::kGlobal, src, size, false);
    if (p == nullptr) return Action::kYield;
    std::memcpy(bytes, p, size);
  } else {
    for (std::size_t k = 0; k < src_size; ++k) {
      std::byte* p = Access(t, Space::kGlobal, src + k, 1, false);
      if (p == nullptr) return Action::kYield;
      bytes[k] = *p;
    }
  }
  std::byte* q = Access(t, in.space, dst, size, true);
  if (q == nullptr) return Action::kYield;
  std::memcpy(q, bytes, size);
  return Action::kNext;
}

// membar/fence: a seq_cst read-modify-write on one process-wide atomic.
// Every fence of every worker thread touches the same word, so the fences are
// totally ordered and each one synchronizes with the ones before it: the
// guarantee of a seq_cst fence for threads that all fence, expressed in a form
// ThreadSanitizer understands (it does not model atomic_thread_fence).
std::atomic<std::uint64_t> fence_word{0};

Action Fence(Thread&, const Instr&) {
  fence_word.fetch_add(1, std::memory_order_seq_cst);
  return Action::kNext;
}

template <typename T>
T FlushF(T v) {
  if constexpr (std::is_same_v<T, float>) {
    if (std::fpclassify(v) == FP_SUBNORMAL) return std::copysign(0.0f, v);
  }
  return v;
}

// The new value of an atomic: `old` op `b` (cas: `c` when old == b).
template <typename T, AtomOp kOp>
T AtomResult(T old, T b, T c) {
  T r = old;
  if constexpr (kOp == AtomOp::kAdd) {
    if constexpr (std::is_floating_point_v<T>) {
      r = FlushF<T>(FlushF<T>(old) + FlushF<T>(b));  // f32: subnormals flushed (PTX ISA)
      if constexpr (std::is_same_v<T, float>) {
        if (std::isnan(r)) r = std::bit_cast<float>(std::uint32_t{0x7fffffff});
      }
    } else {
      r = static_cast<T>(static_cast<std::make_unsigned_t<T>>(old) + static_cast<std::make_unsigned_t<T>>(b));
    }
  } else if constexpr (kOp == AtomOp::kMin) {
    r = b < old ? b : old;
  } else if constexpr (kOp == AtomOp::kMax) {
    r = b > old ? b : old;
  } else if constexpr (kOp == AtomOp::kExch) {
    r = b;
  } else if constexpr (kOp == AtomOp::kCas) {
    if (old == b) r = c;
  } else if constexpr (kOp == AtomOp::kAnd) {
    r = old & b;
  } else if constexpr (kOp == AtomOp::kOr) {
    r = old | b;
  } else if constexpr (kOp == AtomOp::kXor) {
    r = old ^ b;
  } else if constexpr (kOp == AtomOp::kInc) {
    r = (old >= b) ? T{0} : static_cast<T>(old + 1);
  } else if constexpr (kOp == AtomOp::kDec) {
    r = (old == 0 || old > b) ? b : static_cast<T>(old - 1);
  }
  return r;
}

// Atomic across the workers of a launch (interpreter.h): a compare-and-swap loop on the element's
// bits, sequentially consistent (stronger than every .sem the PTX allows).
template <typename T, AtomOp kOp>
Action Atom(Thread& t, const Instr& in) {
  using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
  std::uint64_t address = t.r[in.a] + static_cast<std::uint64_t>(in.imm);
  std::byte* p = Access(t, in.space, address, sizeof(T), true);
  if (p == nullptr) return Action::kYield;
  const T b = Rd<T>(t, in.b);
  const T c = kOp == AtomOp::kCas ? Rd<T>(t, in.c) : T{};
  std::atomic_ref<Bits> cell(*reinterpret_cast<Bits*>(p));
  Bits old_bits = cell.load();
  T old;
  for (;;) {
    old = std::bit_cast<T>(old_bits);
    const Bits new_bits = std::bit_cast<Bits>(AtomResult<T, kOp>(old, b, c));
    if (new_bits == old_bits) break;  // nothing to write (a failed cas, a min above, ...)
    if (cell.compare_exchange_weak(old_bits, new_bits)) break;
  }
  Wr<T>(t, in.d, old);
  return Action::kNext;
}

template <AtomOp kOp>
Handler AtomFor(Type t) {
  constexpr bool kBits = kOp == AtomOp::kAnd || kOp == AtomOp::kOr || kOp == AtomOp::kXor ||
                         kOp == AtomOp::kExch || kOp == AtomOp::kCas;
  constexpr bool kArith = kOp == AtomOp::kAdd || kOp == AtomOp::kMin || kOp == AtomOp::kMax;
  switch (t) {
    case Type::kB32: case Type::kU32: return &Atom<std::uint32_t, kOp>;
    case Type::kB64: case Type::kU64:
      if constexpr (kOp == AtomOp::kInc || kOp == AtomOp::kDec) return nullptr;
      return &Atom<std::uint64_t, kOp>;
    case Type::kS32:
      if constexpr (kArith) return &Atom<std::int32_t, kOp>;
      if constexpr (kBits) return &Atom<std::uint32_t, kOp>;
      return nullptr;
    case Type::kS64:
      if constexpr (kArith) return &Atom<std::int64_t, kOp>;
      if constexpr (kBits) return &Atom<std::uint64_t, kOp>;
      return nullptr;
    case Type::kF32:
      if constexpr (kOp == AtomOp::kAdd || kOp == AtomOp::kExch) return &Atom<float, kOp>;
      return nullptr;
    case Type::kF64:
      if constexpr (kOp == AtomOp::kAdd) return &Atom<double, kOp>;
      return nullptr;
    case Type::kB16: case Type::kU16:
      if constexpr (kOp == AtomOp::kCas) return &Atom<std::uint16_t, kOp>;
      return nullptr;
    default: return nullptr;
  }
}

}  // namespace

Handler SelectLoad() { return &Load; }
Handler SelectStore() { return &Store; }
Handler SelectNop() { return &Nop; }
Handler SelectFence() { return &Fence; }
Handler SelectCpAsync() { return &CpAsync; }

Handler SelectAtom(AtomOp op, Type t) {
  switch (op) {
    case AtomOp::kAdd: return AtomFor<AtomOp::kAdd>(t);
    case AtomOp::kMin: return AtomFor<AtomOp::kMin>(t);
    case AtomOp::kMax: return AtomFor<AtomOp::kMax>(t);
    case AtomOp::kExch: return AtomFor<AtomOp::kExch>(t);
    case AtomOp::kCas: return AtomFor<AtomOp::kCas>(t);
    case AtomOp::kAnd: return AtomFor<AtomOp::kAnd>(t);
    case AtomOp::kOr: return AtomFor<AtomOp::kOr>(t);
    case AtomOp::kXor: return AtomFor<AtomOp::kXor>(t);
    case AtomOp::kInc: return AtomFor<AtomOp::kInc>(t);
    case AtomOp::kDec: return AtomFor<AtomOp::kDec>(t);
  }
  return nullptr;
}

}  // namespace fakecuda::ptx
