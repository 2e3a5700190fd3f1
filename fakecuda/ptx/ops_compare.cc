// Copyright 2026 The cuhal Authors.
// Comparison and selection handlers: setp, selp, set, testp.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "fakecuda/ptx/ops_common.h"

namespace fakecuda::ptx {
namespace {

template <typename T>
struct Setp {
  static Action Run(Thread& t, const Instr& in) {
    bool r = Compare<T>(in.mode, Rd<T>(t, in.a), Rd<T>(t, in.b));
    bool c = (t.r[in.c] & 1) != 0;
    t.r[in.d] = Combine(in.mode2, r, c) ? 1 : 0;
    t.r[in.d2] = Combine(in.mode2, !r, c) ? 1 : 0;
    return Action::kNext;
  }
};

template <typename T>
struct Selp {
  static Action Run(Thread& t, const Instr& in) {
    t.r[in.d] = (t.r[in.c] & 1) ? t.r[in.a] : t.r[in.b];
    return Action::kNext;
  }
};

template <typename D, typename S>
Action Set(Thread& t, const Instr& in) {
  bool r = Combine(in.mode2, Compare<S>(in.mode, Rd<S>(t, in.a), Rd<S>(t, in.b)), (t.r[in.c] & 1) != 0);
  if constexpr (std::is_same_v<D, float>) {
    Wr<float>(t, in.d, r ? 1.0f : 0.0f);
  } else {
    Wr<D>(t, in.d, r ? static_cast<D>(~std::make_unsigned_t<D>{0}) : D{0});
  }
  return Action::kNext;
}

template <typename S>
struct SetFor {
  static Handler Get(Type d) {
    switch (d) {
      case Type::kU32: case Type::kB32: return &Set<std::uint32_t, S>;
      case Type::kS32: return &Set<std::int32_t, S>;
      case Type::kF32: return &Set<float, S>;
      default: return nullptr;
    }
  }
};

template <typename T>
struct Testp {
  static Action Run(Thread& t, const Instr& in) {
    T a = Rd<T>(t, in.a);
    bool r = false;
    switch (in.mode) {
      case 0: r = std::isfinite(a); break;
      case 1: r = std::isinf(a); break;
      case 2: r = !std::isnan(a); break;
      case 3: r = std::isnan(a); break;
      case 4: r = std::isnormal(a); break;
      case 5: r = std::fpclassify(a) == FP_SUBNORMAL; break;
      default: break;
    }
    t.r[in.d] = r ? 1 : 0;
    return Action::kNext;
  }
};

}  // namespace

Handler SelectSetp(Type t) {
  if (IsFloat(t)) return ForFloat<Setp>(t);
  return ForInt<Setp>(t);
}

Handler SelectSelp(Type t) {
  if (IsFloat(t)) return ForFloat<Selp>(t);
  return ForInt<Selp>(t);
}

Handler SelectSet(Type dtype, Type stype) {
  switch (stype) {
    case Type::kU16: case Type::kB16: return SetFor<std::uint16_t>::Get(dtype);
    case Type::kS16: return SetFor<std::int16_t>::Get(dtype);
    case Type::kU32: case Type::kB32: return SetFor<std::uint32_t>::Get(dtype);
    case Type::kS32: return SetFor<std::int32_t>::Get(dtype);
    case Type::kU64: case Type::kB64: return SetFor<std::uint64_t>::Get(dtype);
    case Type::kS64: return SetFor<std::int64_t>::Get(dtype);
    case Type::kF32: return SetFor<float>::Get(dtype);
    case Type::kF64: return SetFor<double>::Get(dtype);
    default: return nullptr;
  }
}

Handler SelectTestp(Type t) { return ForFloat<Testp>(t); }

}  // namespace fakecuda::ptx
