// Copyright 2026 The cuhal Authors.
// Conversion and move handlers: cvt (every pair of integer and f32/f64 types, with rounding,
// saturation and .ftz), mov and its vector pack/unpack forms, special registers, variable
// addresses and cvta. Also the small type helpers of ops.h.
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fakecuda/ptx/ops_common.h"

namespace fakecuda::ptx {

int TypeBytes(Type t) {
  switch (t) {
    case Type::kPred: return 1;
    case Type::kU8: case Type::kS8: case Type::kB8: return 1;
    case Type::kU16: case Type::kS16: case Type::kB16: case Type::kF16: case Type::kBF16: return 2;
    case Type::kU32: case Type::kS32: case Type::kB32: case Type::kF32: case Type::kF16x2:
    case Type::kBF16x2: case Type::kTF32: return 4;
    case Type::kU64: case Type::kS64: case Type::kB64: case Type::kF64: return 8;
    default: return 0;
  }
}
bool IsFloat(Type t) { return t == Type::kF16 || t == Type::kF32 || t == Type::kF64; }
bool IsHalf(Type t) {
  return t == Type::kF16 || t == Type::kBF16 || t == Type::kF16x2 || t == Type::kBF16x2;
}
bool IsSigned(Type t) { return t == Type::kS8 || t == Type::kS16 || t == Type::kS32 || t == Type::kS64; }
Type Unsigned(Type t) {
  switch (t) {
    case Type::kS8: case Type::kB8: return Type::kU8;
    case Type::kS16: case Type::kB16: return Type::kU16;
    case Type::kS32: case Type::kB32: return Type::kU32;
    case Type::kS64: case Type::kB64: return Type::kU64;
    default: return t;
  }
}

namespace {

int HostMode(std::uint8_t mode) {
  switch (mode) {
    case kRz: return FE_TOWARDZERO;
    case kRm: return FE_DOWNWARD;
    case kRp: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

template <typename T>
T Flush(T v, bool ftz) {
  if (ftz && std::fpclassify(v) == FP_SUBNORMAL) return std::copysign(T{0}, v);
  return v;
}

template <typename T>
T Canonical(T v) {
  if (std::isnan(v)) {
    if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(0x7fffffffu);
    else return std::bit_cast<double>(0x7fffffffffffffffULL);
  }
  return v;
}

double RoundToInt(double v, std::uint8_t mode) {
  switch (mode) {
    case kRz: return std::trunc(v);
    case kRm: return std::floor(v);
    case kRp: return std::ceil(v);
    default: return std::nearbyint(v);  // ties to even in the default mode
  }
}

template <typename D, typename S>
Action Cvt(Thread& t, const Instr& in) {
  bool ftz = (in.mode2 & kFtz) != 0;
  S s = Rd<S>(t, in.a);
  D d{};
  if constexpr (!std::is_floating_point_v<D> && !std::is_floating_point_v<S>) {
    if (in.mode2 & kSat) {
      using L = std::numeric_limits<D>;
      if constexpr (std::is_signed_v<S>) {
        std::int64_t v = s;
        if (v < static_cast<std::int64_t>(L::min())) d = L::min();
        else if (v >= 0 && static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(L::max())) d = L::max();
        else d = static_cast<D>(v);
      } else {
        std::uint64_t v = s;
        d = v > static_cast<std::uint64_t>(L::max()) ? L::max() : static_cast<D>(v);
      }
    } else {
      d = static_cast<D>(s);
    }
  } else if constexpr (!std::is_floating_point_v<D>) {
    // float -> integer: round, NaN -> 0, saturate to the range.
    double v = RoundToInt(static_cast<double>(Flush(s, ftz)), in.mode);
    using L = std::numeric_limits<D>;
    // 2^(bits - 1) for signed D, 2^bits for unsigned (exact in a double; std::ldexp is not
    // constexpr before C++23).
    constexpr double kMaxPlusOne =
        (std::is_signed_v<D> ? 1.0 : 2.0) *
        static_cast<double>(std::uint64_t{1} << (8 * sizeof(D) - 1));
    if (std::isnan(v)) d = 0;
    else if (v <= static_cast<double>(L::min())) d = L::min();
    else if (v >= kMaxPlusOne) d = L::max();
    else d = static_cast<D>(v);
  } else if constexpr (!std::is_floating_point_v<S>) {
    // integer -> float
    if (in.mode == kRn || in.mode == kRnDefault) {
      d = static_cast<D>(s);
    } else {
      volatile S vs = s;
      int old = std::fegetround();
      std::fesetround(HostMode(in.mode));
      volatile D r = static_cast<D>(vs);
      std::fesetround(old);
      d = r;
    }
    if (in.mode2 & kSat) d = d < D{0} ? D{0} : (d > D{1} ? D{1} : d);
  } else {
    // float -> float
    S x = Flush(s, ftz);
    if (in.mode2 & kRoundToInt) {
      d = static_cast<D>(RoundToInt(static_cast<double>(x), in.mode));
      if (x == S{0} || std::isinf(x)) d = static_cast<D>(x);
      if (d == D{0}) d = std::copysign(D{0}, static_cast<D>(x));
    } else if (sizeof(D) >= sizeof(S) || in.mode == kRn || in.mode == kRnDefault) {
      d = static_cast<D>(x);
    } else {
      volatile S vs = x;
      int old = std::fegetround();
      std::fesetround(HostMode(in.mode));
      volatile D r = static_cast<D>(vs);
      std::fesetround(old);
      d = r;
    }
    d = Flush(Canonical(d), ftz);
    if (in.mode2 & kSat) {
      if (std::isnan(d) || d < D{0}) d = D{0};
      if (d > D{1}) d = D{1};
    }
  }
  Wr<D>(t, in.d, d);
  return Action::kNext;
}

template <typename D>
Handler CvtFrom(Type src) {
  switch (src) {
    case Type::kU8: case Type::kB8: return &Cvt<D, std::uint8_t>;
    case Type::kU16: case Type::kB16: return &Cvt<D, std::uint16_t>;
    case Type::kU32: case Type::kB32: return &Cvt<D, std::uint32_t>;
    case Type::kU64: case Type::kB64: return &Cvt<D, std::uint64_t>;
    case Type::kS8: return &Cvt<D, std::int8_t>;
    case Type::kS16: return &Cvt<D, std::int16_t>;
    case Type::kS32: return &Cvt<D, std::int32_t>;
    case Type::kS64: return &Cvt<D, std::int64_t>;
    case Type::kF32: return &Cvt<D, float>;
    case Type::kF64: return &Cvt<D, double>;
    default: return nullptr;
  }
}

Action Mov(Thread& t, const Instr& in) {
  t.r[in.d] = t.r[in.a];
  return Action::kNext;
}

Action Pack(Thread& t, const Instr& in) {
  std::uint64_t v = 0;
  unsigned bits = 8u * in.width;
  std::uint64_t mask = bits >= 64 ? ~0ULL : ((1ULL << bits) - 1);
  for (int i = in.vec - 1; i >= 0; --i) v = (bits >= 64 ? 0 : v << bits) | (t.r[in.v[i]] & mask);
  t.r[in.d] = v;
  return Action::kNext;
}

Action Unpack(Thread& t, const Instr& in) {
  std::uint64_t v = t.r[in.a];
  unsigned bits = 8u * in.width;
  std::uint64_t mask = bits >= 64 ? ~0ULL : ((1ULL << bits) - 1);
  for (int i = 0; i < in.vec; ++i) {
    t.r[in.v[i]] = (v >> (bits * static_cast<unsigned>(i))) & mask;
  }
  t.r[kSinkSlot] = 0;
  return Action::kNext;
}

Action SpecialRegister(Thread& t, const Instr& in) {
  const Launch& l = *t.launch;
  std::uint64_t v = 0;
  std::uint32_t warps = (l.block[0] * l.block[1] * l.block[2] + 31) / 32;
  switch (in.imm) {
    case kTidX: v = t.tid[0]; break;
    case kTidY: v = t.tid[1]; break;
    case kTidZ: v = t.tid[2]; break;
    case kNtidX: v = l.block[0]; break;
    case kNtidY: v = l.block[1]; break;
    case kNtidZ: v = l.block[2]; break;
    case kCtaidX: v = t.block->ctaid[0]; break;
    case kCtaidY: v = t.block->ctaid[1]; break;
    case kCtaidZ: v = t.block->ctaid[2]; break;
    case kNctaidX: v = l.grid[0]; break;
    case kNctaidY: v = l.grid[1]; break;
    case kNctaidZ: v = l.grid[2]; break;
    case kLaneid: v = t.lane; break;
    case kWarpid: v = t.warp_id; break;
    case kNwarpid: v = warps; break;
    case kSmid: v = 0; break;
    case kNsmid: v = 132; break;
    case kGridid: v = 1; break;
    case kClock: case kClock64: case kGlobaltimer: v = (t.launch->clock += 16); break;
    case kLanemaskEq: v = 1u << t.lane; break;
    case kLanemaskLt: v = (1u << t.lane) - 1; break;
    case kLanemaskLe: v = t.lane == 31 ? 0xffffffffu : (2u << t.lane) - 1; break;
    case kLanemaskGt: v = t.lane == 31 ? 0u : ~((2u << t.lane) - 1) & 0xffffffffu; break;
    case kLanemaskGe: v = ~((1u << t.lane) - 1) & 0xffffffffu; break;
    case kDynamicSmemSize: v = l.dynamic_shared; break;
    case kTotalSmemSize: v = t.block->shared.size(); break;
    default: break;
  }
  t.r[in.d] = v;
  return Action::kNext;
}

Action LocalAddress(Thread& t, const Instr& in) {
  t.r[in.d] = (in.mode != 0 ? kLocalWindow : 0) + t.local_base + static_cast<std::uint64_t>(in.imm);
  return Action::kNext;
}

Action GlobalAddress(Thread& t, const Instr& in) {
  t.r[in.d] = t.launch->global_addresses[in.index];
  return Action::kNext;
}

std::uint64_t Window(Space s) {
  switch (s) {
    case Space::kShared: return kSharedWindow;
    case Space::kLocal: return kLocalWindow;
    default: return 0;
  }
}

Action CvtaToGeneric(Thread& t, const Instr& in) {
  std::uint64_t a = in.width == 4 ? static_cast<std::uint32_t>(t.r[in.a]) : t.r[in.a];
  std::uint64_t w = Window(in.space);
  t.r[in.d] = w != 0 ? w + (a & ~kWindowMask) : a;
  return Action::kNext;
}

Action CvtaToSpace(Thread& t, const Instr& in) {
  std::uint64_t a = t.r[in.a];
  t.r[in.d] = Window(in.space) != 0 ? (a & ~kWindowMask) : a;
  return Action::kNext;
}

}  // namespace

Handler SelectCvt(Type dst, Type src) {
  switch (dst) {
    case Type::kU8: case Type::kB8: return CvtFrom<std::uint8_t>(src);
    case Type::kU16: case Type::kB16: return CvtFrom<std::uint16_t>(src);
    case Type::kU32: case Type::kB32: return CvtFrom<std::uint32_t>(src);
    case Type::kU64: case Type::kB64: return CvtFrom<std::uint64_t>(src);
    case Type::kS8: return CvtFrom<std::int8_t>(src);
    case Type::kS16: return CvtFrom<std::int16_t>(src);
    case Type::kS32: return CvtFrom<std::int32_t>(src);
    case Type::kS64: return CvtFrom<std::int64_t>(src);
    case Type::kF32: return CvtFrom<float>(src);
    case Type::kF64: return CvtFrom<double>(src);
    default: return nullptr;
  }
}

Handler SelectMov() { return &Mov; }
Handler SelectPack() { return &Pack; }
Handler SelectUnpack() { return &Unpack; }
Handler SelectSreg() { return &SpecialRegister; }
Handler SelectLocalAddress() { return &LocalAddress; }
Handler SelectGlobalAddress() { return &GlobalAddress; }
Handler SelectCvta(bool to_generic) { return to_generic ? &CvtaToGeneric : &CvtaToSpace; }

}  // namespace fakecuda::ptx
