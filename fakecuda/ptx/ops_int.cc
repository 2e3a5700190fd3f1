// Copyright 2026 The cuhal Authors.
// Integer, bit-manipulation and predicate-logic handlers. Arithmetic is done on the unsigned
// type of the same width, so that wrap-around (which PTX defines) is never C++ overflow.
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fakecuda/ptx/ops_common.h"

namespace fakecuda::ptx {
namespace {

template <typename T> using U = std::make_unsigned_t<T>;
template <typename T> struct Wide;
template <> struct Wide<std::uint16_t> { using type = std::uint32_t; };
template <> struct Wide<std::int16_t> { using type = std::int32_t; };
template <> struct Wide<std::uint32_t> { using type = std::uint64_t; };
template <> struct Wide<std::int32_t> { using type = std::int64_t; };
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;
template <> struct Wide<std::uint64_t> { using type = std::uint64_t; };  // (not selected: no .wide)
template <> struct Wide<std::int64_t> { using type = std::int64_t; };
template <> struct Wide<std::uint8_t> { using type = std::uint16_t; };
template <> struct Wide<std::int8_t> { using type = std::int16_t; };

template <typename T>
T Hi(T a, T b) {
  if constexpr (sizeof(T) == 8) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>((static_cast<Int128>(a) * static_cast<Int128>(b)) >> 64);
    } else {
      return static_cast<T>((static_cast<Uint128>(a) * static_cast<Uint128>(b)) >> 64);
    }
  } else {
    using W = typename Wide<T>::type;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> (8 * sizeof(T)));
  }
}
template <typename T>
T Lo(T a, T b) {
  return static_cast<T>(static_cast<U<T>>(static_cast<U<T>>(a) * static_cast<U<T>>(b)));
}
template <typename T>
T Plus(T a, T b) { return static_cast<T>(static_cast<U<T>>(static_cast<U<T>>(a) + static_cast<U<T>>(b))); }
template <typename T>
T Minus(T a, T b) { return static_cast<T>(static_cast<U<T>>(static_cast<U<T>>(a) - static_cast<U<T>>(b))); }

#define FAKECUDA_PTX_BINARY(Name, expr)                       \
  template <typename T>                                       \
  struct Name {                                               \
    static Action Run(Thread& t, const Instr& in) {           \
      T a = Rd<T>(t, in.a);                                   \
      T b = Rd<T>(t, in.b);                                   \
      (void)a;                                                \
      (void)b;                                                \
      Wr<T>(t, in.d, static_cast<T>(expr));                   \
      return Action::kNext;                                   \
    }                                                         \
  };

FAKECUDA_PTX_BINARY(Add, Plus(a, b))
FAKECUDA_PTX_BINARY(Sub, Minus(a, b))
FAKECUDA_PTX_BINARY(MulLo, Lo(a, b))
FAKECUDA_PTX_BINARY(MulHi, Hi(a, b))
FAKECUDA_PTX_BINARY(Min, a < b ? a : b)
FAKECUDA_PTX_BINARY(Max, a < b ? b : a)
FAKECUDA_PTX_BINARY(And, a & b)
FAKECUDA_PTX_BINARY(Or, a | b)
FAKECUDA_PTX_BINARY(Xor, a ^ b)
FAKECUDA_PTX_BINARY(Abs, a < 0 ? Minus(T{0}, a) : a)
FAKECUDA_PTX_BINARY(Neg, Minus(T{0}, a))
FAKECUDA_PTX_BINARY(Not, ~a)
FAKECUDA_PTX_BINARY(Cnot, a == 0 ? 1 : 0)
FAKECUDA_PTX_BINARY(Popc, std::popcount(static_cast<U<T>>(a)))
FAKECUDA_PTX_BINARY(Clz, std::countl_zero(static_cast<U<T>>(a)))
#undef FAKECUDA_PTX_BINARY

template <typename T>
struct Div {
  static Action Run(Thread& t, const Instr& in) {
    T a = Rd<T>(t, in.a), b = Rd<T>(t, in.b);
    T q;
    if (b == 0) {
      q = static_cast<T>(~U<T>{0});
    } else if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1)) {
      q = a;
    } else {
      q = static_cast<T>(a / b);
    }
    Wr<T>(t, in.d, q);
    return Action::kNext;
  }
};

template <typename T>
struct Rem {
  static Action Run(Thread& t, const Instr& in) {
    T a = Rd<T>(t, in.a), b = Rd<T>(t, in.b);
    T r;
    if (b == 0) {
      r = a;
    } else if (std::is_signed_v<T> && b == T(-1)) {
      r = 0;
    } else {
      r = static_cast<T>(a % b);
    }
    Wr<T>(t, in.d, r);
    return Action::kNext;
  }
};

template <typename T>
struct AddSat {
  static Action Run(Thread& t, const Instr& in) {
    std::int64_t v = std::int64_t{Rd<T>(t, in.a)} + Rd<T>(t, in.b);
    if (v > std::numeric_limits<T>::max()) v = std::numeric_limits<T>::max();
    if (v < std::numeric_limits<T>::min()) v = std::numeric_limits<T>::min();
    Wr<T>(t, in.d, static_cast<T>(v));
    return Action::kNext;
  }
};
template <typename T>
struct SubSat {
  static Action Run(Thread& t, const Instr& in) {
    std::int64_t v = std::int64_t{Rd<T>(t, in.a)} - Rd<T>(t, in.b);
    if (v > std::numeric_limits<T>::max()) v = std::numeric_limits<T>::max();
    if (v < std::numeric_limits<T>::min()) v = std::numeric_limits<T>::min();
    Wr<T>(t, in.d, static_cast<T>(v));
    return Action::kNext;
  }
};

template <typename T>
struct MulWide {
  static Action Run(Thread& t, const Instr& in) {
    using W = typename Wide<T>::type;
    Wr<W>(t, in.d, static_cast<W>(static_cast<W>(Rd<T>(t, in.a)) * static_cast<W>(Rd<T>(t, in.b))));
    return Action::kNext;
  }
};
template <typename T>
struct MadWide {
  static Action Run(Thread& t, const Instr& in) {
    using W = typename Wide<T>::type;
    W p = static_cast<W>(static_cast<W>(Rd<T>(t, in.a)) * static_cast<W>(Rd<T>(t, in.b)));
    Wr<W>(t, in.d, Plus(p, Rd<W>(t, in.c)));
    return Action::kNext;
  }
};
template <typename T>
struct MadLo {
  static Action Run(Thread& t, const Instr& in) {
    Wr<T>(t, in.d, Plus(Lo(Rd<T>(t, in.a), Rd<T>(t, in.b)), Rd<T>(t, in.c)));
    return Action::kNext;
  }
};
template <typename T>
struct MadHi {
  static Action Run(Thread& t, const Instr& in) {
    Wr<T>(t, in.d, Plus(Hi(Rd<T>(t, in.a), Rd<T>(t, in.b)), Rd<T>(t, in.c)));
    return Action::kNext;
  }
};
template <typename T>
struct Mul24Lo {
  static Action Run(Thread& t, const Instr& in) {
    auto ext = [](T v) -> std::int64_t {
      if constexpr (std::is_signed_v<T>) return (static_cast<std::int64_t>(v) << 40) >> 40;
      return static_cast<std::int64_t>(v & 0xffffff);
    };
    std::int64_t p = ext(Rd<T>(t, in.a)) * ext(Rd<T>(t, in.b));
    if (in.mode2 == 1) p += static_cast<std::int64_t>(Rd<T>(t, in.c));
    Wr<T>(t, in.d, static_cast<T>(p));
    return Action::kNext;
  }
};

// Shift amounts are unsigned 32-bit; amounts past the width give 0 (or the sign for shr.s).
template <typename T>
struct Shl {
  static Action Run(Thread& t, const Instr& in) {
    std::uint32_t n = Rd<std::uint32_t>(t, in.b);
    U<T> a = static_cast<U<T>>(Rd<T>(t, in.a));
    Wr<T>(t, in.d, static_cast<T>(n >= 8 * sizeof(T) ? U<T>{0} : static_cast<U<T>>(a << n)));
    return Action::kNext;
  }
};
template <typename T>
struct Shr {
  static Action Run(Thread& t, const Instr& in) {
    std::uint32_t n = Rd<std::uint32_t>(t, in.b);
    T a = Rd<T>(t, in.a);
    if (n >= 8 * sizeof(T)) {
      Wr<T>(t, in.d, static_cast<T>(std::is_signed_v<T> && a < 0 ? T(-1) : T(0)));
    } else {
      Wr<T>(t, in.d, static_cast<T>(a >> n));
    }
    return Action::kNext;
  }
};

template <typename T>
struct Brev {
  static Action Run(Thread& t, const Instr& in) {
    U<T> a = static_cast<U<T>>(Rd<T>(t, in.a)), r = 0;
    for (unsigned i = 0; i < 8 * sizeof(T); ++i) r = static_cast<U<T>>(r | (((a >> i) & 1) << (8 * sizeof(T) - 1 - i)));
    Wr<T>(t, in.d, static_cast<T>(r));
    return Action::kNext;
  }
};

// bfe: position b, length c (bits 0-7 of each); signed types sign-extend from the last bit.
template <typename T>
struct Bfe {
  static Action Run(Thread& t, const Instr& in) {
    constexpr unsigned kBits = 8 * sizeof(T);
    unsigned pos = Rd<std::uint32_t>(t, in.b) & 0xff, len = Rd<std::uint32_t>(t, in.c) & 0xff;
    U<T> a = static_cast<U<T>>(Rd<T>(t, in.a));
    U<T> r = 0;
    bool sbit = false;
    if constexpr (std::is_signed_v<T>) {
      unsigned top = len == 0 ? 0 : pos + len - 1;
      sbit = len != 0 && ((top >= kBits) ? (a >> (kBits - 1)) & 1 : (a >> top) & 1);
    }
    for (unsigned i = 0; i < kBits; ++i) {
      bool bit;
      if (i < len && pos + i < kBits) {
        bit = (a >> (pos + i)) & 1;
      } else {
        bit = sbit;
      }
      if (bit) r = static_cast<U<T>>(r | (U<T>{1} << i));
    }
    Wr<T>(t, in.d, static_cast<T>(r));
    return Action::kNext;
  }
};

// bfi: insert the low `c` bits of a into b at position... PTX order: bfi d, f, b, pos, len ->
// here a = f, b = b, c = pos, e = len.
template <typename T>
struct Bfi {
  static Action Run(Thread& t, const Instr& in) {
    constexpr unsigned kBits = 8 * sizeof(T);
    unsigned pos = Rd<std::uint32_t>(t, in.c) & 0xff, len = Rd<std::uint32_t>(t, in.e) & 0xff;
    U<T> f = static_cast<U<T>>(Rd<T>(t, in.a));
    U<T> r = static_cast<U<T>>(Rd<T>(t, in.b));
    for (unsigned i = 0; i < len && pos + i < kBits; ++i) {
      U<T> bit = U<T>{1} << (pos + i);
      r = static_cast<U<T>>(((f >> i) & 1) ? (r | bit) : (r & ~bit));
    }
    Wr<T>(t, in.d, static_cast<T>(r));
    return Action::kNext;
  }
};

// bfind: the position of the most significant non-sign bit, 0xffffffff when none; mode2 1:
// .shiftamt (the left shift that would bring it to the top).
template <typename T>
struct Bfind {
  static Action Run(Thread& t, const Instr& in) {
    constexpr int kBits = 8 * sizeof(T);
    T a = Rd<T>(t, in.a);
    U<T> u = static_cast<U<T>>(a);
    if constexpr (std::is_signed_v<T>) {
      if (a < 0) u = static_cast<U<T>>(~u);
    }
    std::uint32_t r = 0xffffffffu;
    if (u != 0) {
      int msb = kBits - 1 - std::countl_zero(u);
      r = in.mode2 == 1 ? static_cast<std::uint32_t>(kBits - 1 - msb) : static_cast<std::uint32_t>(msb);
    }
    Wr<std::uint32_t>(t, in.d, r);
    return Action::kNext;
  }
};

// Carry chains (add.cc, addc, ...), 32 and 64 bit unsigned arithmetic.
template <typename T>
struct Carry {
  template <bool kUseCarry, bool kSetCarry, bool kSub>
  static Action Run(Thread& t, const Instr& in) {
    using UT = U<T>;
    UT a = static_cast<UT>(Rd<T>(t, in.a)), b = static_cast<UT>(Rd<T>(t, in.b));
    UT cin = kUseCarry ? (t.carry ? 1 : 0) : 0;
    UT r;
    bool cout;
    if constexpr (kSub) {
      // a - b - borrow; the carry flag holds the borrow.
      r = static_cast<UT>(a - b - cin);
      cout = a < b || static_cast<UT>(a - b) < cin;
    } else {
      r = static_cast<UT>(a + b + cin);
      cout = r < a || (cin != 0 && r == a);
    }
    if (kSetCarry) t.carry = cout;
    Wr<T>(t, in.d, static_cast<T>(r));
    return Action::kNext;
  }
};
template <typename T> struct AddCc { static Action Run(Thread& t, const Instr& in) { return Carry<T>::template Run<false, true, false>(t, in); } };
template <typename T> struct Addc { static Action Run(Thread& t, const Instr& in) { return Carry<T>::template Run<true, false, false>(t, in); } };
template <typename T> struct AddcCc { static Action Run(Thread& t, const Instr& in) { return Carry<T>::template Run<true, true, false>(t, in); } };
template <typename T> struct SubCc { static Action Run(Thread& t, const Instr& in) { return Carry<T>::template Run<false, true, true>(t, in); } };
template <typename T> struct Subc { static Action Run(Thread& t, const Instr& in) { return Carry<T>::template Run<true, false, true>(t, in); } };
template <typename T> struct SubcCc { static Action Run(Thread& t, const Instr& in) { return Carry<T>::template Run<true, true, true>(t, in); } };

// mad[c].lo/hi[.cc]: d = lo/hi(a * b) + c [+ carry], carry out when .cc.
template <typename T>
struct MadCarry {
  template <bool kHi, bool kUseCarry, bool kSetCarry>
  static Action Run(Thread& t, const Instr& in) {
    using UT = U<T>;
    UT p = static_cast<UT>(kHi ? Hi(Rd<T>(t, in.a), Rd<T>(t, in.b)) : Lo(Rd<T>(t, in.a), Rd<T>(t, in.b)));
    UT c = static_cast<UT>(Rd<T>(t, in.c));
    UT cin = kUseCarry ? (t.carry ? 1 : 0) : 0;
    UT r = static_cast<UT>(p + c + cin);
    if (kSetCarry) t.carry = r < p || (cin != 0 && r == p);
    Wr<T>(t, in.d, static_cast<T>(r));
    return Action::kNext;
  }
};
template <typename T> struct MadLoCc { static Action Run(Thread& t, const Instr& in) { return MadCarry<T>::template Run<false, false, true>(t, in); } };
template <typename T> struct MadcLo { static Action Run(Thread& t, const Instr& in) { return MadCarry<T>::template Run<false, true, false>(t, in); } };
template <typename T> struct MadcLoCc { static Action Run(Thread& t, const Instr& in) { return MadCarry<T>::template Run<false, true, true>(t, in); } };
template <typename T> struct MadHiCc { static Action Run(Thread& t, const Instr& in) { return MadCarry<T>::template Run<true, false, true>(t, in); } };
template <typename T> struct MadcHi { static Action Run(Thread& t, const Instr& in) { return MadCarry<T>::template Run<true, true, false>(t, in); } };
template <typename T> struct MadcHiCc { static Action Run(Thread& t, const Instr& in) { return MadCarry<T>::template Run<true, true, true>(t, in); } };

template <typename T>
struct Sad {
  static Action Run(Thread& t, const Instr& in) {
    T a = Rd<T>(t, in.a), b = Rd<T>(t, in.b);
    T diff = a < b ? Minus(b, a) : Minus(a, b);
    Wr<T>(t, in.d, Plus(diff, Rd<T>(t, in.c)));
    return Action::kNext;
  }
};

Action PredAnd(Thread& t, const Instr& in) { t.r[in.d] = (t.r[in.a] & t.r[in.b]) & 1; return Action::kNext; }
Action PredOr(Thread& t, const Instr& in) { t.r[in.d] = (t.r[in.a] | t.r[in.b]) & 1; return Action::kNext; }
Action PredXor(Thread& t, const Instr& in) { t.r[in.d] = (t.r[in.a] ^ t.r[in.b]) & 1; return Action::kNext; }
Action PredNot(Thread& t, const Instr& in) { t.r[in.d] = ~t.r[in.a] & 1; return Action::kNext; }

Action Prmt(Thread& t, const Instr& in) {
  std::uint64_t bytes = (std::uint64_t{Rd<std::uint32_t>(t, in.b)} << 32) | Rd<std::uint32_t>(t, in.a);
  std::uint32_t sel = Rd<std::uint32_t>(t, in.c), r = 0;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t s = (sel >> (4 * i)) & 0xf;
    std::uint32_t byte = static_cast<std::uint32_t>(bytes >> (8 * (s & 7))) & 0xff;
    if (s & 8) byte = (byte & 0x80) ? 0xff : 0;  // replicate the sign
    r |= byte << (8 * i);
  }
  Wr<std::uint32_t>(t, in.d, r);
  return Action::kNext;
}

template <bool kLeft, bool kClamp>
Action Shf(Thread& t, const Instr& in) {
  std::uint32_t lo = Rd<std::uint32_t>(t, in.a), hi = Rd<std::uint32_t>(t, in.b);
  std::uint32_t n = Rd<std::uint32_t>(t, in.c);
  n = kClamp ? (n > 32 ? 32 : n) : (n & 31);
  std::uint64_t both = (std::uint64_t{hi} << 32) | lo;
  std::uint32_t r = kLeft ? static_cast<std::uint32_t>((both << n) >> 32) : static_cast<std::uint32_t>(both >> n);
  Wr<std::uint32_t>(t, in.d, r);
  return Action::kNext;
}

Action Lop3(Thread& t, const Instr& in) {
  std::uint32_t a = Rd<std::uint32_t>(t, in.a), b = Rd<std::uint32_t>(t, in.b);
  std::uint32_t c = Rd<std::uint32_t>(t, in.c), lut = static_cast<std::uint32_t>(in.imm), r = 0;
  for (int i = 0; i < 32; ++i) {
    unsigned idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
    r |= ((lut >> idx) & 1u) << i;
  }
  Wr<std::uint32_t>(t, in.d, r);
  return Action::kNext;
}

template <bool kASigned, bool kBSigned>
Action Dp4a(Thread& t, const Instr& in) {
  std::uint32_t a = Rd<std::uint32_t>(t, in.a), b = Rd<std::uint32_t>(t, in.b);
  std::int64_t sum = kASigned || kBSigned ? static_cast<std::int64_t>(Rd<std::int32_t>(t, in.c))
                                          : static_cast<std::int64_t>(Rd<std::uint32_t>(t, in.c));
  for (int i = 0; i < 4; ++i) {
    std::int64_t x = kASigned ? static_cast<std::int8_t>(a >> (8 * i)) : static_cast<std::uint8_t>(a >> (8 * i));
    std::int64_t y = kBSigned ? static_cast<std::int8_t>(b >> (8 * i)) : static_cast<std::uint8_t>(b >> (8 * i));
    sum += x * y;
  }
  Wr<std::uint32_t>(t, in.d, static_cast<std::uint32_t>(sum));
  return Action::kNext;
}

}  // namespace

Handler SelectInt(IntOp op, Type t) {
  bool w64 = TypeBytes(t) == 8, w32 = TypeBytes(t) == 4;
  switch (op) {
    case IntOp::kAdd: return ForInt<Add>(t);
    case IntOp::kSub: return ForInt<Sub>(t);
    case IntOp::kAddSat: return t == Type::kS32 ? &AddSat<std::int32_t>::Run : nullptr;
    case IntOp::kSubSat: return t == Type::kS32 ? &SubSat<std::int32_t>::Run : nullptr;
    case IntOp::kMulLo: return ForInt<MulLo>(t);
    case IntOp::kMulHi: return ForInt<MulHi>(t);
    case IntOp::kMulWide: return w64 ? nullptr : ForInt<MulWide>(t);
    case IntOp::kMadLo: return ForInt<MadLo>(t);
    case IntOp::kMadHi: return ForInt<MadHi>(t);
    case IntOp::kMadWide: return w64 ? nullptr : ForInt<MadWide>(t);
    case IntOp::kDiv: return ForInt<Div>(t);
    case IntOp::kRem: return ForInt<Rem>(t);
    case IntOp::kMin: return ForInt<Min>(t);
    case IntOp::kMax: return ForInt<Max>(t);
    case IntOp::kAbs: return IsSigned(t) ? ForInt<Abs>(t) : nullptr;
    case IntOp::kNeg: return IsSigned(t) ? ForInt<Neg>(t) : nullptr;
    case IntOp::kAnd: return ForInt<And>(t);
    case IntOp::kOr: return ForInt<Or>(t);
    case IntOp::kXor: return ForInt<Xor>(t);
    case IntOp::kNot: return ForInt<Not>(t);
    case IntOp::kCnot: return ForInt<Cnot>(t);
    case IntOp::kShl: return ForInt<Shl>(Unsigned(t));
    case IntOp::kShr: return ForInt<Shr>(t);
    case IntOp::kPopc: return w32 || w64 ? ForInt<Popc>(Unsigned(t)) : nullptr;
    case IntOp::kClz: return w32 || w64 ? ForInt<Clz>(Unsigned(t)) : nullptr;
    case IntOp::kBrev: return w32 || w64 ? ForInt<Brev>(Unsigned(t)) : nullptr;
    case IntOp::kBfe: return w32 || w64 ? ForInt<Bfe>(t) : nullptr;
    case IntOp::kBfi: return w32 || w64 ? ForInt<Bfi>(Unsigned(t)) : nullptr;
    case IntOp::kBfind: return w32 || w64 ? ForInt<Bfind>(t) : nullptr;
    case IntOp::kAddCc: return w32 || w64 ? ForInt<AddCc>(Unsigned(t)) : nullptr;
    case IntOp::kAddc: return w32 || w64 ? ForInt<Addc>(Unsigned(t)) : nullptr;
    case IntOp::kAddcCc: return w32 || w64 ? ForInt<AddcCc>(Unsigned(t)) : nullptr;
    case IntOp::kSubCc: return w32 || w64 ? ForInt<SubCc>(Unsigned(t)) : nullptr;
    case IntOp::kSubc: return w32 || w64 ? ForInt<Subc>(Unsigned(t)) : nullptr;
    case IntOp::kSubcCc: return w32 || w64 ? ForInt<SubcCc>(Unsigned(t)) : nullptr;
    case IntOp::kMadLoCc: return w32 || w64 ? ForInt<MadLoCc>(t) : nullptr;
    case IntOp::kMadcLo: return w32 || w64 ? ForInt<MadcLo>(t) : nullptr;
    case IntOp::kMadcLoCc: return w32 || w64 ? ForInt<MadcLoCc>(t) : nullptr;
    case IntOp::kMadHiCc: return w32 || w64 ? ForInt<MadHiCc>(t) : nullptr;
    case IntOp::kMadcHi: return w32 || w64 ? ForInt<MadcHi>(t) : nullptr;
    case IntOp::kMadcHiCc: return w32 || w64 ? ForInt<MadcHiCc>(t) : nullptr;
    case IntOp::kMul24Lo: case IntOp::kMad24Lo:
      if (t == Type::kS32) return &Mul24Lo<std::int32_t>::Run;
      return t == Type::kU32 || t == Type::kB32 ? &Mul24Lo<std::uint32_t>::Run : nullptr;
    case IntOp::kSad: return ForInt<Sad>(t);
  }
  return nullptr;
}

Handler SelectPredLogic(IntOp op) {
  switch (op) {
    case IntOp::kAnd: return &PredAnd;
    case IntOp::kOr: return &PredOr;
    case IntOp::kXor: return &PredXor;
    case IntOp::kNot: return &PredNot;
    default: return nullptr;
  }
}

Handler SelectPrmt() { return &Prmt; }
Handler SelectShf(bool left, bool clamp) {
  if (left) return clamp ? &Shf<true, true> : &Shf<true, false>;
  return clamp ? &Shf<false, true> : &Shf<false, false>;
}
Handler SelectLop3() { return &Lop3; }
Handler SelectDp4a(bool a_signed, bool b_signed) {
  if (a_signed) return b_signed ? &Dp4a<true, true> : &Dp4a<true, false>;
  return b_signed ? &Dp4a<false, true> : &Dp4a<false, false>;
}

}  // namespace fakecuda::ptx
