// Copyright 2026 The cuhal Authors.
// Helpers shared by the lowering files (lower*.cc): reading an instruction's modifiers. Not part
// of fakecuda's interface.
#ifndef CUHAL_FAKECUDA_PTX_LOWER_UTIL_H_
#define CUHAL_FAKECUDA_PTX_LOWER_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fakecuda/ptx/parser_impl.h"

namespace fakecuda::ptx::internal {

inline bool Has(const Statement& s, const char* m) {
  return std::find(s.mods.begin(), s.mods.end(), m) != s.mods.end();
}

inline std::vector<Type> Types(const Statement& s) {
  std::vector<Type> out;
  for (const std::string& m : s.mods) {
    if (m == "b128") return {Type::kNone, Type::kNone, Type::kNone};
    if (Type t = ParseType(m); t != Type::kNone) out.push_back(t);
  }
  return out;
}

inline std::string Unsupported(const Statement& s) {
  return "instruction '" + s.opcode + "' is not supported by fakecuda's PTX interpreter";
}

// Rounding modifiers: .rn .rz .rm .rp, and the integer-rounding .rni .rzi .rmi .rpi.
inline std::uint8_t RoundingOf(const Statement& s, bool* to_int) {
  *to_int = false;
  static const char* kModes[] = {"rn", "rz", "rm", "rp"};
  for (int k = 0; k < 4; ++k) {
    if (Has(s, kModes[k])) return static_cast<std::uint8_t>(k);
    if (Has(s, (std::string(kModes[k]) + "i").c_str())) {
      *to_int = true;
      return static_cast<std::uint8_t>(k);
    }
  }
  return kRnDefault;
}

inline int CmpOf(const Statement& s) {
  static const char* kCmps[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  for (int k = 0; k < 18; ++k) {
    if (Has(s, kCmps[k])) return k;
  }
  return -1;
}

inline std::uint8_t BoolOf(const Statement& s) {
  if (Has(s, "and")) return 1;
  if (Has(s, "or")) return 2;
  if (Has(s, "xor")) return 3;
  return 0;
}

inline Type WideOf(Type t) {
  switch (t) {
    case Type::kU16: case Type::kB16: return Type::kU32;
    case Type::kS16: return Type::kS32;
    case Type::kU32: case Type::kB32: return Type::kU64;
    case Type::kS32: return Type::kS64;
    default: return Type::kNone;
  }
}

// Modifiers of memory instructions that change nothing in a single-address-space, in-order fake.
inline bool IgnoredMemoryMod(const std::string& m) {
  static const std::set<std::string> kIgnored = {
      "weak", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "sys", "gpu", "cta",
      "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_normal", "L1::evict_unchanged",
      "L1::evict_first", "L1::evict_last", "L1::no_allocate", "L2::evict_normal",
      "L2::evict_first", "L2::evict_last", "L2::64B", "L2::128B", "L2::256B", "noftz", "mmio"};
  return kIgnored.count(m) != 0;
}


}  // namespace fakecuda::ptx::internal

#endif  // CUHAL_FAKECUDA_PTX_LOWER_UTIL_H_
