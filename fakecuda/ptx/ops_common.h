// Copyright 2026 The cuhal Authors.
// Helpers shared by the handler files (ops_*.cc): typed register reads and writes, and the
// selection of a handler template's instantiation for a PTX type.
#ifndef CUHAL_FAKECUDA_PTX_OPS_COMMON_H_
#define CUHAL_FAKECUDA_PTX_OPS_COMMON_H_

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "fakecuda/ptx/ops.h"
#include "fakecuda/ptx/thread.h"

namespace fakecuda::ptx {

// The value of slot `s` as a T (invariant 2 of program.h: truncated to T's width).
template <typename T>
inline T Rd(const Thread& t, Slot s) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(t.r[s]));
  } else if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<double>(t.r[s]);
  } else if constexpr (std::is_same_v<T, bool>) {
    return (t.r[s] & 1) != 0;
  } else {
    return static_cast<T>(t.r[s]);
  }
}

template <typename T>
inline void Wr(Thread& t, Slot s, T v) {
  if constexpr (std::is_same_v<T, float>) {
    t.r[s] = std::bit_cast<std::uint32_t>(v);
  } else if constexpr (std::is_same_v<T, double>) {
    t.r[s] = std::bit_cast<std::uint64_t>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    t.r[s] = v ? 1 : 0;
  } else {
    t.r[s] = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
  }
}

// Comparison `cmp` (Cmp) of a and b; floats: the ordered and unordered forms.
template <typename T>
inline bool Compare(std::uint8_t cmp, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    bool unordered = std::isnan(a) || std::isnan(b);
    switch (cmp) {
      case kEq: return !unordered && a == b;
      case kNe: return !unordered && a != b;
      case kLt: return !unordered && a < b;
      case kLe: return !unordered && a <= b;
      case kGt: return !unordered && a > b;
      case kGe: return !unordered && a >= b;
      case kEqu: return unordered || a == b;
      case kNeu: return unordered || a != b;
      case kLtu: return unordered || a < b;
      case kLeu: return unordered || a <= b;
      case kGtu: return unordered || a > b;
      case kGeu: return unordered || a >= b;
      case kNum: return !unordered;
      case kNan: return unordered;
      default: return false;
    }
  } else {
    using UT = std::make_unsigned_t<T>;
    UT ua = static_cast<UT>(a), ub = static_cast<UT>(b);
    switch (cmp) {
      case kEq: return a == b;
      case kNe: return a != b;
      case kLt: return a < b;
      case kLe: return a <= b;
      case kGt: return a > b;
      case kGe: return a >= b;
      case kLo: return ua < ub;
      case kLs: return ua <= ub;
      case kHi: return ua > ub;
      case kHs: return ua >= ub;
      default: return false;
    }
  }
}

// setp/set's .bool combination (Instr::mode2: 0 none, 1 and, 2 or, 3 xor) of r with c.
inline bool Combine(std::uint8_t op, bool r, bool c) {
  switch (op) {
    case 1: return r && c;
    case 2: return r || c;
    case 3: return r != c;
    default: return r;
  }
}

// Op<T>::Run for the integer type `t` (b types as unsigned), or null.
template <template <typename> class Op>
Handler ForInt(Type t, bool allow8 = false) {
  switch (t) {
    case Type::kU8: case Type::kB8: return allow8 ? &Op<std::uint8_t>::Run : nullptr;
    case Type::kS8: return allow8 ? &Op<std::int8_t>::Run : nullptr;
    case Type::kU16: case Type::kB16: return &Op<std::uint16_t>::Run;
    case Type::kU32: case Type::kB32: return &Op<std::uint32_t>::Run;
    case Type::kU64: case Type::kB64: return &Op<std::uint64_t>::Run;
    case Type::kS16: return &Op<std::int16_t>::Run;
    case Type::kS32: return &Op<std::int32_t>::Run;
    case Type::kS64: return &Op<std::int64_t>::Run;
    default: return nullptr;
  }
}

template <template <typename> class Op>
Handler ForFloat(Type t) {
  switch (t) {
    case Type::kF32: return &Op<float>::Run;
    case Type::kF64: return &Op<double>::Run;
    default: return nullptr;
  }
}

}  // namespace fakecuda::ptx

#endif  // CUHAL_FAKECUDA_PTX_OPS_COMMON_H_
