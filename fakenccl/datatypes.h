// Copyright 2026 The cuhal Authors.
// fakenccl's arithmetic: every ncclDataType_t of nccl.h (including half, bfloat16 and the two fp8
// formats, converted in software) and every reduction of ncclRedOp_t, computed on host bytes.
//
// How results relate to a GPU's:
//   - Integers wrap (two's complement), as the GPU's integer units do. Average of integers is the
//     wrapped sum divided by nranks, rounded toward zero (NCCL's SumPostDiv).
//   - float and double operate in their own precision (one rounding per binary operation).
//   - half, bfloat16 and fp8 are widened to double, combined, and rounded once back to the type
//     (round to nearest even). fp8 conversions saturate to the largest finite value (CUDA's
//     __NV_SATFINITE, which the __nv_fp8_* constructors NCCL uses apply) and keep NaN. UNMEASURED:
//     NCCL's bfloat16/fp8 kernels widen to float or half, so a result could differ in the last
//     bit when an intermediate is not exact in float; tests use values for which it is.
//   - Reductions combine ranks in rank order 0, 1, ..., n-1. NCCL's ring and tree orders differ,
//     which matters only for inexact floating-point sums.
//   - Average of floating types is PreMulSum with the scalar 1/nranks rounded to the type (as
//     NCCL's hostToDevRedOp does); PreMulSum multiplies each rank's input by that rank's scalar
//     (rounded to the type) and then sums.
#ifndef CUHAL_FAKENCCL_DATATYPES_H_
#define CUHAL_FAKENCCL_DATATYPES_H_

#include <nccl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace fakenccl {

// Bytes per element of `type`; 0 for a value outside nccl.h's enumeration.
std::size_t TypeSize(ncclDataType_t type);
// nccl.h's spelling ("ncclFloat32"), or "ncclDataType_t(<n>)" for an unknown value (static
// storage for known values; a thread-local buffer otherwise).
const char* TypeName(ncclDataType_t type);
bool IsFloatingType(ncclDataType_t type);

// What a reduction does, independent of how the ncclRedOp_t handle was made.
enum class ReduceKind { kSum, kProd, kMax, kMin, kAvg, kPreMulSum };
const char* ReduceKindName(ReduceKind kind);  // "ncclSum", ..., "PreMulSum"

// One element's bytes (the widest type is 8 bytes).
using ScalarBytes = std::array<std::byte, 8>;

// out[i] = inputs[0][i] (op) inputs[1][i] (op) ... for i < count. `inputs` holds one pointer per
// rank, each to `count` elements of `type`. For kPreMulSum, scalars[r] is rank r's scalar (its
// first TypeSize(type) bytes). `out` may not overlap the inputs. Requires a valid type and, for
// kAvg, nranks = inputs.size() >= 1.
void Reduce(ncclDataType_t type, ReduceKind kind, std::span<const std::byte* const> inputs,
            std::span<const ScalarBytes> scalars, std::size_t count, std::byte* out);
// The same reduction computed one element at a time through the generic per-type arithmetic:
// the definition Reduce's vectorized loops must match bit for bit. Exposed for tests.
void ReduceReference(ncclDataType_t type, ReduceKind kind,
                     std::span<const std::byte* const> inputs,
                     std::span<const ScalarBytes> scalars, std::size_t count, std::byte* out);

// Conversions between an element of a floating type and double (exact for decoding; encoding
// rounds to nearest even, overflow gives infinity for half/bfloat16 and the largest finite value
// for fp8). Integer types convert by value (encoding truncates modulo 2^bits). Exposed for tests.
double DecodeElement(ncclDataType_t type, const std::byte* element);
void EncodeElement(ncclDataType_t type, double value, std::byte* element);

// The IEEE-like small formats by themselves (bits in the low bits of the result).
std::uint16_t DoubleToHalfBits(double value);
double HalfBitsToDouble(std::uint16_t bits);
std::uint16_t DoubleToBfloat16Bits(double value);
double Bfloat16BitsToDouble(std::uint16_t bits);
std::uint8_t DoubleToE4m3Bits(double value);  // OCP FP8 E4M3 (no infinity; 0x7f/0xff is NaN)
double E4m3BitsToDouble(std::uint8_t bits);
std::uint8_t DoubleToE5m2Bits(double value);  // OCP FP8 E5M2 (IEEE-like, with infinity)
double E5m2BitsToDouble(std::uint8_t bits);

}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_DATATYPES_H_
