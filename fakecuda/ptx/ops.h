// Copyright 2026 The cuhal Authors.
// The handlers of the PTX interpreter, by family: the lowering (lower.cc) picks one per
// instruction at load time, for the instruction's exact type, so that a handler does no
// decoding at run time. Each Select* returns null when the combination is not implemented (the
// lowering then reports the instruction as unsupported).
//
// Results: integer operations are bit-exact (division by zero gives all ones for the quotient
// and the dividend for the remainder: unmeasured on the H200); IEEE operations (add, sub, mul,
// fma, div.rn, sqrt.rn, rcp.rn, cvt) are correctly rounded in the requested mode, with .ftz
// flushing subnormal inputs and results; NaN results are the canonical NaN 0x7fffffff
// (f32) / 0x7fffffffffffffff (f64) (the f32 value is what the PTX ISA documents); the
// approximate instructions (ex2/lg2/sin/cos/rsqrt/rcp/sqrt/div .approx, tanh) use the host's
// correctly rounded or faithfully rounded libm, inside the ISA's stated error bounds.
#ifndef CUHAL_FAKECUDA_PTX_OPS_H_
#define CUHAL_FAKECUDA_PTX_OPS_H_

#include <cstdint>

#include "fakecuda/ptx/program.h"

namespace fakecuda::ptx {

enum class Type : std::uint8_t {
  kNone, kPred,
  kU8, kU16, kU32, kU64, kS8, kS16, kS32, kS64, kB8, kB16, kB32, kB64,
  kF16, kF32, kF64,
  kBF16, kF16x2, kBF16x2, kTF32,  // 16-bit floats (ops_half.cc) and tf32 (a b32 holding an f32)
};
int TypeBytes(Type t);
bool IsFloat(Type t);  // f16, f32, f64 (IsHalf types are lowered apart)
bool IsHalf(Type t);   // f16, bf16, f16x2, bf16x2
bool IsSigned(Type t);
Type Unsigned(Type t);  // b/s -> u of the same width; others unchanged

// Rounding modes (Instr::mode for float ops and cvt).
enum Rounding : std::uint8_t { kRn = 0, kRz, kRm, kRp, kRnDefault, kRna };
// Instr::mode2 bits.
inline constexpr std::uint8_t kFtz = 1;
inline constexpr std::uint8_t kSat = 2;
inline constexpr std::uint8_t kRoundToInt = 4;  // cvt.rni/rzi/rmi/rpi between floats

// --- integer (ops_int.cc) ---
enum class IntOp : std::uint8_t {
  kAdd, kSub, kAddSat, kSubSat, kMulLo, kMulHi, kMulWide, kMadLo, kMadHi, kMadWide, kDiv, kRem,
  kMin, kMax, kAbs, kNeg, kAnd, kOr, kXor, kNot, kCnot, kShl, kShr, kPopc, kClz, kBrev, kBfe,
  kBfi, kBfind, kAddCc, kAddc, kAddcCc, kSubCc, kSubc, kSubcCc, kMadLoCc, kMadcLo, kMadcLoCc,
  kMadcHi, kMadcHiCc, kMadHiCc, kMul24Lo, kMad24Lo, kSad,
};
Handler SelectInt(IntOp op, Type t);
Handler SelectPredLogic(IntOp op);  // and/or/xor/not on predicates
Handler SelectPrmt();               // prmt.b32 (default mode only)
Handler SelectShf(bool left, bool clamp);
Handler SelectLop3();
Handler SelectDp4a(bool a_signed, bool b_signed);

// --- comparison and selection (ops_compare.cc) ---
enum Cmp : std::uint8_t {
  kEq, kNe, kLt, kLe, kGt, kGe, kLo, kLs, kHi, kHs, kEqu, kNeu, kLtu, kLeu, kGtu, kGeu, kNum, kNan,
};
// setp.cmp[.bool].type d[|d2], a, b[, c]; Instr::mode = Cmp, mode2 = 0 none / 1 and / 2 or / 3 xor.
Handler SelectSetp(Type t);
Handler SelectSelp(Type t);
// set.cmp[.bool].dtype.stype: d = all ones (integer) or 1.0f (f32) when true.
Handler SelectSet(Type dtype, Type stype);
Handler SelectTestp(Type t);  // mode: 0 finite 1 infinite 2 number 3 notanumber 4 normal 5 subnormal

// --- floating point (ops_float.cc) ---
enum class FloatOp : std::uint8_t {
  kAdd, kSub, kMul, kFma, kDiv, kDivApprox, kRcp, kRcpApprox, kSqrt, kSqrtApprox, kRsqrt, kEx2,
  kLg2, kSin, kCos, kTanh, kMin, kMax, kAbs, kNeg, kCopysign,
};
Handler SelectFloat(FloatOp op, Type t);

// --- 16-bit floats and tf32 (ops_half.cc) ---
// Results are correctly rounded (round-to-nearest-even unless the instruction says otherwise):
// add/sub/mul compute exactly in double and round once, fma rounds the exact a*b+c (through a
// round-to-odd double), ex2/tanh .approx round the host's double result. .ftz flushes subnormal
// inputs and results, .sat clamps to [0, 1] (NaN to +0), .relu clamps below to +0. NaN results
// are the canonical NaN 0x7fff (f16 and bf16; modelled on the f32 rule, unmeasured).
// The x2 forms work on the halves independently: bits [0, 16) and [16, 32).
// Instr::mode: Rounding; mode2: kFtz, kSat, kRelu (below), kNanPropagating (min/max .NaN).
inline constexpr std::uint8_t kRelu = 8;
inline constexpr std::uint8_t kNanPropagating = 16;
Handler SelectHalf(FloatOp op, Type t);
// setp.cmp[.bool].{f16,bf16,f16x2,bf16x2} d[|d2], a, b[, c]: for x2, d is the lower halves'
// result and d2 the upper halves'. set.cmp[.bool].dtype.{f16,...} d, a, b[, c] with dtype u32,
// s32, f32 (scalar halves) or u32/s32/f16x2/bf16x2 (x2: per half all ones / 1.0).
Handler SelectHalfSetp(Type t);
Handler SelectHalfSet(Type dtype, Type stype);
// cvt where one side is a 16-bit float or tf32; x2 destinations take two sources:
// cvt.rn.f16x2.f32 d, a, b puts a in the upper half and b in the lower one.
Handler SelectHalfCvt(Type dst, Type src);
// The bits of `x` rounded to the float format of `exp_bits`/`mant_bits` (IEEE-like: subnormals,
// infinities) in `mode`; NaN gives the format's canonical NaN (all exponent bits, top mantissa
// bits). Exact for every double input.
std::uint32_t RoundToFormat(double x, int exp_bits, int mant_bits, std::uint8_t mode);
// The value of `bits` in that format (exact).
double DecodeFormat(std::uint32_t bits, int exp_bits, int mant_bits);

// --- conversions and moves (ops_convert.cc) ---
Handler SelectCvt(Type dst, Type src);
Handler SelectMov();                   // d = a
Handler SelectPack();                  // d = {v[0..vec)} of `width` bytes each
Handler SelectUnpack();                // {v[0..vec)} = a
Handler SelectSreg();                  // d = special register `imm` (Sreg)
Handler SelectLocalAddress();          // d = frame depot + imm (mode 1: generic)
Handler SelectGlobalAddress();         // d = module variable `index`
Handler SelectCvta(bool to_generic);   // space in Instr::space; width 4 or 8

enum Sreg : std::uint8_t {
  kTidX, kTidY, kTidZ, kNtidX, kNtidY, kNtidZ, kCtaidX, kCtaidY, kCtaidZ, kNctaidX, kNctaidY,
  kNctaidZ, kLaneid, kWarpid, kNwarpid, kSmid, kNsmid, kGridid, kClock, kClock64, kLanemaskEq,
  kLanemaskLt, kLanemaskLe, kLanemaskGt, kLanemaskGe, kDynamicSmemSize, kTotalSmemSize,
  kGlobaltimer,
};

// --- memory (ops_memory.cc) ---
Handler SelectLoad();   // v[0..vec) = [a + imm], `width` bytes each, sign-extended when `sign`
Handler SelectStore();  // [a + imm] = v[0..vec)
enum class AtomOp : std::uint8_t { kAdd, kMin, kMax, kExch, kCas, kAnd, kOr, kXor, kInc, kDec };
Handler SelectAtom(AtomOp op, Type t);  // d = old; [a + imm] op= b (cas: compare b, swap c)
Handler SelectNop();
Handler SelectFence();
// cp.async: [a + imm] (shared) = [b + c] (global), `width` bytes of which the first e come from
// the source (the rest zero); synchronous (ops_memory.cc).
Handler SelectCpAsync();  // membar / fence: a sequentially consistent fence

// --- warp-level matrix instructions (ops_matrix.cc) ---
// A fragment: which tile of which instruction a list of registers holds. The mma.sync forms use
// the PTX ISA's documented layouts (groupID = lane >> 2, threadID_in_group = lane % 4); the wmma
// forms, whose layout the ISA leaves unspecified, use fakecuda's own (the mma layouts side by
// side for the 16-column tiles, f16 A/B fragments repeating their 8 elements).
enum class Frag : std::uint8_t {
  kMmaA16, kMmaB16, kMmaC,     // mma.m16n8k16 .f16/.bf16 A (16x16), B (16x8); m16n8 C/D (f32)
  kMmaATf32, kMmaBTf32,        // mma.m16n8k8 .tf32 A (16x8), B (8x8)
  kWmmaA16, kWmmaB16, kWmmaC,  // wmma.m16n16k16 A, B (16x16); m16n16 C/D (f32)
  kWmmaATf32, kWmmaBTf32,      // wmma.m16n16k8 .tf32 A (16x8), B (8x16)
};
// Element types of Instr::width for matrix instructions.
inline constexpr std::uint8_t kElemF16 = 1, kElemBF16 = 2, kElemF32 = 3;
// wmma.load.{a,b,c}: Function::lists[index, +count) = the registers, [a + imm] the tile's first
// element, b the stride in elements; mode: Frag, mode2: 1 for column-major; width: element type.
Handler SelectWmmaLoad();
// wmma.store.d: the same, from the registers to memory.
Handler SelectWmmaStore();
// mma.sync / wmma.mma: Function::lists[index, ...) = D, A, B, C registers; mode: the A
// fragment's Frag (it names the shape); width: the A/B element type. D = A * B + C, each sum
// exact and rounded once to f32 (round-to-nearest-even: the H200's tensor cores sum with
// truncation, so results differ from it only where a sum is inexact). tf32 operands drop their
// low 13 bits. The whole warp must take part (otherwise the launch fails).
WarpHandler SelectMma();
// ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16: lists[index, +vec) the registers,
// [a + imm] each lane's row address; mode 1: .trans. The whole warp must take part.
WarpHandler SelectLdmatrix();
// The registers of fragment `f`.
int FragRegisters(Frag f, std::uint8_t element);

// --- control (ops_control.cc) ---
Handler SelectBranch();    // pc = imm
Handler SelectCall();      // Function::calls[index]
Handler SelectRet();
Handler SelectExit();
Handler SelectTrap();
// bar.sync / barrier.sync / bar.red: barrier `a` (a slot), thread count `b` (kZeroSlot: all);
// mode 0 sync, 1 arrive, 2 red.popc, 3 red.and, 4 red.or (d: result, c: predicate).
Handler SelectBarrier();
Handler SelectWarpYield();  // every warp collective's thread-side handler
enum ShflMode : std::uint8_t { kShflUp, kShflDown, kShflBfly, kShflIdx };
WarpHandler SelectShfl();                 // mode: ShflMode; d[|d2], a, b (lane), c (clamp)
WarpHandler SelectVote();                 // mode: 0 all 1 any 2 uni 3 ballot; a: predicate
WarpHandler SelectWarpSync();             // bar.warp.sync
WarpHandler SelectActivemask();
WarpHandler SelectRedux(IntOp op, Type t);  // add/min/max/and/or/xor
WarpHandler SelectMatch(bool all, Type t);

}  // namespace fakecuda::ptx

#endif  // CUHAL_FAKECUDA_PTX_OPS_H_
