// Copyright 2026 The cuhal Authors.
// Warp-level matrix instructions: mma.sync (m16n8k16 f16/bf16 -> f32, m16n8k8 tf32 -> f32) and
// wmma.load/store/mma (m16n16k16 f16/bf16, m16n16k8 tf32, f32 accumulators). A fragment element
// e of lane l stands for one (row, column) of its tile (Coord); the warp handler of mma gathers
// the tiles from the 32 lanes, multiplies, and scatters the result.
#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "fakecuda/ptx/ops_common.h"

namespace fakecuda::ptx {
namespace {

struct Shape {
  int rows, cols;  // of the tile
  int elements;    // distinct elements per lane
};

Shape ShapeOf(Frag f) {
  switch (f) {
    case Frag::kMmaA16: return {16, 16, 8};
    case Frag::kMmaB16: return {16, 8, 4};
    case Frag::kMmaC: return {16, 8, 4};
    case Frag::kMmaATf32: return {16, 8, 4};
    case Frag::kMmaBTf32: return {8, 8, 2};
    case Frag::kWmmaA16: return {16, 16, 8};
    case Frag::kWmmaB16: return {16, 16, 8};
    case Frag::kWmmaC: return {16, 16, 8};
    case Frag::kWmmaATf32: return {16, 8, 4};
    case Frag::kWmmaBTf32: return {8, 16, 4};
  }
  return {0, 0, 0};
}

// The (row, col) of element e (< ShapeOf(f).elements) of lane l.
void Coord(Frag f, int l, int e, int* row, int* col) {
  const int g = l >> 2, q = l & 3;
  switch (f) {
    case Frag::kMmaA16: case Frag::kWmmaA16:
      *row = g + 8 * ((e >> 1) & 1);
      *col = 2 * q + (e & 1) + 8 * (e >> 2);
      return;
    case Frag::kMmaB16: case Frag::kWmmaB16:
      *row = 2 * q + (e & 1) + 8 * ((e >> 1) & 1);
      *col = g + 8 * (e >> 2);
      return;
    case Frag::kMmaC: case Frag::kWmmaC:
      *row = g + 8 * ((e >> 1) & 1);
      *col = 2 * q + (e & 1) + 8 * (e >> 2);
      return;
    case Frag::kMmaATf32: case Frag::kWmmaATf32:
      *row = g + 8 * (e & 1);
      *col = q + 4 * (e >> 1);
      return;
    case Frag::kMmaBTf32: case Frag::kWmmaBTf32:
      *row = q + 4 * (e & 1);
      *col = g + 8 * (e >> 1);
      return;
  }
}

int ElementBytes(std::uint8_t element) { return element == kElemF32 ? 4 : 2; }

// Element e of a fragment held in `regs` (16-bit elements: two per register, the lower first).
std::uint32_t GetElement(const Thread& t, const Slot* regs, std::uint8_t element, int e) {
  if (element == kElemF32) return static_cast<std::uint32_t>(t.r[regs[e]]);
  return static_cast<std::uint32_t>(t.r[regs[e / 2]] >> (16 * (e % 2))) & 0xffffu;
}

void SetElement(Thread& t, const Slot* regs, std::uint8_t element, int e, std::uint32_t bits) {
  if (element == kElemF32) {
    t.r[regs[e]] = bits;
    return;
  }
  std::uint64_t& r = t.r[regs[e / 2]];
  const int shift = 16 * (e % 2);
  r = (r & ~(std::uint64_t{0xffff} << shift) & 0xffffffffULL) | (std::uint64_t{bits & 0xffffu} << shift);
}

double Value(std::uint32_t bits, std::uint8_t element, bool tf32) {
  switch (element) {
    case kElemF16: return DecodeFormat(bits, 5, 10);
    case kElemBF16: return DecodeFormat(bits, 8, 7);
    default: return static_cast<double>(std::bit_cast<float>(tf32 ? bits & ~0x1fffu : bits));
  }
}

// The number of elements a lane's registers hold (f16 A/B wmma fragments repeat theirs).
int HeldElements(Frag f, std::uint8_t element) {
  if ((f == Frag::kWmmaA16 || f == Frag::kWmmaB16) && element == kElemF16) return 16;
  return ShapeOf(f).elements;
}

Action WmmaMove(Thread& t, const Instr& in, bool store) {
  const Frag f = static_cast<Frag>(in.mode);
  const Shape shape = ShapeOf(f);
  const Slot* regs = t.fn->lists.data() + in.index;
  const std::uint64_t base = t.r[in.a] + static_cast<std::uint64_t>(in.imm);
  const std::uint64_t stride = static_cast<std::uint32_t>(t.r[in.b]);
  const int bytes = ElementBytes(in.width);
  const int held = HeldElements(f, in.width);
  for (int e = 0; e < held; ++e) {
    int row = 0, col = 0;
    Coord(f, static_cast<int>(t.lane), e % shape.elements, &row, &col);
    const std::uint64_t index = in.mode2 != 0 ? static_cast<std::uint64_t>(col) * stride + row
                                              : static_cast<std::uint64_t>(row) * stride + col;
    std::byte* p = Access(t, in.space, base + index * bytes, bytes, store);
    if (p == nullptr) return Action::kYield;
    if (store) {
      std::uint32_t v = GetElement(t, regs, in.width, e);
      std::memcpy(p, &v, bytes);  // little-endian: the low bytes
    } else {
      std::uint32_t v = 0;
      std::memcpy(&v, p, bytes);
      SetElement(t, regs, in.width, e, v);
    }
  }
  return Action::kNext;
}

Action WmmaLoad(Thread& t, const Instr& in) { return WmmaMove(t, in, false); }
Action WmmaStore(Thread& t, const Instr& in) { return WmmaMove(t, in, true); }

void Mma(Thread* const* lanes, int n, const Instr& in) {
  if (n != 32) {
    lanes[0]->Fault(CUDA_ERROR_LAUNCH_FAILED,
                    "mma with " + std::to_string(n) + " of the 32 lanes of a warp (the whole "
                    "warp must execute it: .sync.aligned)");
    return;
  }
  const Frag fa = static_cast<Frag>(in.mode);
  Frag fb, fc;
  switch (fa) {
    case Frag::kMmaA16: fb = Frag::kMmaB16; fc = Frag::kMmaC; break;
    case Frag::kMmaATf32: fb = Frag::kMmaBTf32; fc = Frag::kMmaC; break;
    case Frag::kWmmaA16: fb = Frag::kWmmaB16; fc = Frag::kWmmaC; break;
    default: fb = Frag::kWmmaBTf32; fc = Frag::kWmmaC; break;
  }
  const Shape sa = ShapeOf(fa), sb = ShapeOf(fb), sc = ShapeOf(fc);
  const bool tf32 = fa == Frag::kMmaATf32 || fa == Frag::kWmmaATf32;
  const std::uint8_t ab_element = tf32 ? kElemF32 : in.width;
  const int ra = FragRegisters(fa, ab_element), rb = FragRegisters(fb, ab_element);
  const int rc = FragRegisters(fc, kElemF32);
  double A[16][16] = {}, B[16][16] = {}, C[16][16] = {};
  for (int i = 0; i < 32; ++i) {
    Thread& t = *lanes[i];
    const Slot* list = t.fn->lists.data() + in.index;
    const Slot* d = list;
    const Slot* a = d + rc;
    const Slot* b = a + ra;
    const Slot* c = b + rb;
    const int l = static_cast<int>(t.lane);
    int row = 0, col = 0;
    for (int e = 0; e < sa.elements; ++e) {
      Coord(fa, l, e, &row, &col);
      A[row][col] = Value(GetElement(t, a, ab_element, e), ab_element, tf32);
    }
    for (int e = 0; e < sb.elements; ++e) {
      Coord(fb, l, e, &row, &col);
      B[row][col] = Value(GetElement(t, b, ab_element, e), ab_element, tf32);
    }
    for (int e = 0; e < sc.elements; ++e) {
      Coord(fc, l, e, &row, &col);
      C[row][col] = Value(GetElement(t, c, kElemF32, e), kElemF32, false);
    }
  }
  for (int i = 0; i < 32; ++i) {
    Thread& t = *lanes[i];
    const Slot* d = t.fn->lists.data() + in.index;
    const int l = static_cast<int>(t.lane);
    for (int e = 0; e < sc.elements; ++e) {
      int row = 0, col = 0;
      Coord(fc, l, e, &row, &col);
      double acc = C[row][col];
      for (int k = 0; k < sa.cols; ++k) acc += A[row][k] * B[k][col];
      // Rounded toward zero, as the tensor cores do (measured on sm_90: 1 + 0.75 ulp gives 1,
      // 1 + 1.5 ulp gives 1 + 1 ulp, -1 - 0.75 ulp gives -1, 2^24 + 1.5 gives 2^24;
      // ci/gpu-probes/results/2026-12-05-probe-ptx-numerics.txt). Past the f32 range that is
      // FLT_MAX, not infinity; an infinite operand stays infinite.
      float r = static_cast<float>(acc);
      if (std::isfinite(acc) && std::fabs(static_cast<double>(r)) > std::fabs(acc)) {
        r = std::nextafter(r, 0.0f);
      }
      if (std::isnan(r)) r = std::bit_cast<float>(0x7fffffffu);
      t.warp_value = std::bit_cast<std::uint32_t>(r);
      SetElement(t, d, kElemF32, e, static_cast<std::uint32_t>(t.warp_value));
    }
  }
  (void)sb;
}

// ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16: row r of matrix i is the 16 bytes at
// the address of lane 8i + r; lane l receives, per matrix, elements (l / 4, 2(l % 4) + {0, 1})
// (.trans: (2(l % 4) + {0, 1}, l / 4)), the first in the lower half.
void Ldmatrix(Thread* const* lanes, int n, const Instr& in) {
  if (n != 32) {
    lanes[0]->Fault(CUDA_ERROR_LAUNCH_FAILED, "ldmatrix with " + std::to_string(n) +
                                                  " of the 32 lanes of a warp (.sync.aligned)");
    return;
  }
  Thread* by_lane[32] = {};
  for (int i = 0; i < 32; ++i) by_lane[lanes[i]->lane] = lanes[i];
  std::uint16_t m[4][8][8] = {};
  for (int i = 0; i < in.vec; ++i) {
    for (int r = 0; r < 8; ++r) {
      Thread& t = *by_lane[8 * i + r];
      const std::uint64_t address = t.r[in.a] + static_cast<std::uint64_t>(in.imm);
      std::byte* p = Access(t, in.space, address, 16, false);
      if (p == nullptr) return;  // t faulted: the interpreter stops the block
      std::memcpy(m[i][r], p, 16);
    }
  }
  for (int k = 0; k < 32; ++k) {
    Thread& t = *lanes[k];
    const int l = static_cast<int>(t.lane);
    const Slot* d = t.fn->lists.data() + in.index;
    for (int i = 0; i < in.vec; ++i) {
      std::uint32_t lo, hi;
      if (in.mode != 0) {
        lo = m[i][2 * (l % 4)][l / 4];
        hi = m[i][2 * (l % 4) + 1][l / 4];
      } else {
        lo = m[i][l / 4][2 * (l % 4)];
        hi = m[i][l / 4][2 * (l % 4) + 1];
      }
      t.r[d[i]] = lo | (hi << 16);
    }
  }
}

}  // namespace

int FragRegisters(Frag f, std::uint8_t element) {
  const int held = HeldElements(f, element);
  return element == kElemF32 ? held : held / 2;
}

Handler SelectWmmaLoad() { return &WmmaLoad; }
Handler SelectWmmaStore() { return &WmmaStore; }
WarpHandler SelectMma() { return &Mma; }
WarpHandler SelectLdmatrix() { return &Ldmatrix; }

}  // namespace fakecuda::ptx
