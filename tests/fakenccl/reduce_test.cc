// Copyright 2026 The cuhal Authors.
// fakenccl::Reduce (typed loops the compiler vectorizes, datatypes.cc) against
// fakenccl::ReduceReference (one element at a time through the generic per-type arithmetic, the
// fake's definition of every result), byte for byte: every data type and reduction, 1 to 7 ranks,
// element counts around the vector widths and the loops' chunk sizes, aligned and misaligned
// buffers (NaN results compared as NaN for float and double, see BothNan). Inputs are random bit
// patterns (NaNs, infinities, signed zeros, subnormals included) mixed with small integers, so
// that sums and products also stay finite and exercise rounding.
#include <gtest/gtest.h>
#include <nccl.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fakenccl/datatypes.h"

namespace {

using fakenccl::ReduceKind;
using fakenccl::ScalarBytes;

const ncclDataType_t kTypes[] = {ncclInt8,    ncclUint8,   ncclInt32,   ncclUint32,
                                 ncclInt64,   ncclUint64,  ncclFloat16, ncclFloat32,
                                 ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
const ReduceKind kKinds[] = {ReduceKind::kSum, ReduceKind::kProd, ReduceKind::kMax,
                             ReduceKind::kMin, ReduceKind::kAvg,  ReduceKind::kPreMulSum};

// Fills `bytes` of elements of `type`: every other element random bits, the rest small values.
void Fill(ncclDataType_t type, std::mt19937_64& rng, std::byte* p, std::size_t count) {
  const std::size_t s = fakenccl::TypeSize(type);
  for (std::size_t i = 0; i < count; ++i) {
    if (rng() % 2 == 0) {
      std::uint64_t bits = rng();
      std::memcpy(p + i * s, &bits, s);
    } else {
      fakenccl::EncodeElement(type, static_cast<double>(static_cast<int>(rng() % 9) - 4),
                              p + i * s);
    }
  }
}

// float and double: which NaN comes out when NaNs meet (the sign and payload of one operand, or
// x86's default NaN) depends on the operand order the compiler picks for a commutative operation,
// which is not part of the fake's contract (a GPU gives its canonical NaN). Every other result is
// compared bit for bit; the small formats' NaN is always the format's canonical one.
bool BothNan(ncclDataType_t type, const std::byte* a, const std::byte* b) {
  if (type != ncclFloat32 && type != ncclFloat64) return false;
  return std::isnan(fakenccl::DecodeElement(type, a)) &&
         std::isnan(fakenccl::DecodeElement(type, b));
}

std::string Describe(ncclDataType_t type, ReduceKind kind, int n, std::size_t count,
                     std::size_t misalign) {
  return std::string(fakenccl::TypeName(type)) + " " + fakenccl::ReduceKindName(kind) + " over " +
         std::to_string(n) + " rank(s), " + std::to_string(count) + " elements, misaligned by " +
         std::to_string(misalign);
}

void CheckOne(ncclDataType_t type, ReduceKind kind, int n, std::size_t count,
              std::size_t misalign, std::mt19937_64& rng) {
  const std::size_t s = fakenccl::TypeSize(type);
  const std::size_t bytes = count * s;
  // Each rank's input at `misalign` bytes past an 8-aligned start (a misaligned buffer takes the
  // element-at-a-time path; it must give the same bytes too).
  std::vector<std::vector<std::uint64_t>> storage(static_cast<std::size_t>(n));
  std::vector<const std::byte*> inputs;
  for (auto& v : storage) {
    v.assign(bytes / 8 + 2, 0);
    auto* p = reinterpret_cast<std::byte*>(v.data()) + misalign;
    Fill(type, rng, p, count);
    inputs.push_back(p);
  }
  std::vector<ScalarBytes> scalars(static_cast<std::size_t>(n));
  for (ScalarBytes& sc : scalars) {
    // A PreMulSum scalar: small values, or random bits (NaN and infinity included) now and then.
    if (rng() % 4 == 0) {
      std::uint64_t bits = rng();
      std::memcpy(sc.data(), &bits, s);
    } else {
      fakenccl::EncodeElement(type, static_cast<double>(static_cast<int>(rng() % 5) - 2),
                              sc.data());
    }
  }
  std::vector<std::uint64_t> fast_storage(bytes / 8 + 2, 0x5a5a5a5a5a5a5a5au);
  std::vector<std::uint64_t> ref_storage(bytes / 8 + 2, 0x5a5a5a5a5a5a5a5au);
  auto* fast = reinterpret_cast<std::byte*>(fast_storage.data()) + misalign;
  auto* ref = reinterpret_cast<std::byte*>(ref_storage.data()) + misalign;
  fakenccl::Reduce(type, kind, inputs, scalars, count, fast);
  fakenccl::ReduceReference(type, kind, inputs, scalars, count, ref);
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(fast + i * s, ref + i * s, s) != 0 &&
        !BothNan(type, fast + i * s, ref + i * s)) {
      ADD_FAILURE() << Describe(type, kind, n, count, misalign) << ": element " << i
                    << " differs: Reduce gives "
                    << fakenccl::DecodeElement(type, fast + i * s) << ", ReduceReference "
                    << fakenccl::DecodeElement(type, ref + i * s);
      return;
    }
  }
  // Nothing written past the end.
  EXPECT_EQ(std::memcmp(fast + bytes, ref + bytes, 8 - misalign), 0)
      << Describe(type, kind, n, count, misalign);
}

TEST(ReduceTest, VectorizedLoopsMatchTheReferenceBitForBit) {
  std::mt19937_64 rng(20261205);
  // Around the vector widths (up to 64 bytes), and past the loops' 16 KiB chunks for every size.
  const std::size_t kCounts[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 65, 129, 1023, 2049, 16385};
  for (ncclDataType_t type : kTypes) {
    for (ReduceKind kind : kKinds) {
      for (int n : {1, 2, 3, 4, 7}) {
        for (std::size_t count : kCounts) {
          for (std::size_t misalign : {std::size_t{0}, std::size_t{1}}) {
            if (misalign != 0 && fakenccl::TypeSize(type) == 1) continue;  // never misaligned
            CheckOne(type, kind, n, count, misalign, rng);
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

// The small formats' fast encoder, through PreMulSum on one rank (out = round(x * m)): every bit
// pattern of the format times multipliers that land on rounding ties, binade edges, the
// subnormal range and overflow, against the reference's frexp/ldexp encoder.
TEST(ReduceTest, SmallFormatsRoundLikeTheReference) {
  const double kMultipliers[] = {1.0,         -1.0,       0.5,          1.5,       1.0 / 3.0,
                                 3.0,         1.0 + 1e-9, 1.0 - 1e-9,   0x1p-8,    0x1p-20,
                                 0x1p-130,    0x1p+8,     0x1p+100,     1.0 / 7.0, 0.0,
                                 1.00390625,  0.99609375, 1.0009765625, 0x1.8p-1, 1e300};
  for (ncclDataType_t type : {ncclFloat16, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2}) {
    const std::size_t s = fakenccl::TypeSize(type);
    const std::size_t count = std::size_t{1} << (8 * s);
    std::vector<std::byte> in(count * s);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(in.data() + i * s, &i, s);
    const std::byte* inputs[] = {in.data()};
    for (double m : kMultipliers) {
      std::vector<ScalarBytes> scalars(1);
      // The scalar is m rounded to the type (what PreMulSum reads): the products are of two
      // values of the type, exact in double, so the only rounding is the encoder's.
      fakenccl::EncodeElement(type, m, scalars[0].data());
      std::vector<std::byte> fast(count * s);
      std::vector<std::byte> ref(count * s);
      fakenccl::Reduce(type, ReduceKind::kPreMulSum, inputs, scalars, count, fast.data());
      fakenccl::ReduceReference(type, ReduceKind::kPreMulSum, inputs, scalars, count,
                                ref.data());
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(std::memcmp(fast.data() + i * s, ref.data() + i * s, s), 0)
            << fakenccl::TypeName(type) << ": pattern " << i << " times " << m;
      }
    }
    // And sums of every pattern with a few others (two ranks).
    for (std::uint32_t other : {0x0001u, 0x0080u, 0x3c00u, 0x7bffu, 0x8001u, 0x0003u}) {
      std::vector<std::byte> second(count * s);
      for (std::size_t i = 0; i < count; ++i) std::memcpy(second.data() + i * s, &other, s);
      const std::byte* two[] = {in.data(), second.data()};
      std::vector<ScalarBytes> scalars(2);
      std::vector<std::byte> fast(count * s);
      std::vector<std::byte> ref(count * s);
      fakenccl::Reduce(type, ReduceKind::kSum, two, scalars, count, fast.data());
      fakenccl::ReduceReference(type, ReduceKind::kSum, two, scalars, count, ref.data());
      ASSERT_EQ(fast, ref) << fakenccl::TypeName(type) << " + " << other;
    }
  }
}

// The reference itself, on values whose results are known: a test that the comparison above
// compares against the fake's arithmetic and not against itself.
TEST(ReduceTest, ReferenceComputesKnownValues) {
  const float a[] = {1.5f, -2.0f, 3.0f};
  const float b[] = {2.0f, 4.0f, -1.0f};
  const std::byte* inputs[] = {reinterpret_cast<const std::byte*>(a),
                               reinterpret_cast<const std::byte*>(b)};
  std::vector<ScalarBytes> scalars(2);
  float out[3] = {};
  fakenccl::Reduce(ncclFloat32, ReduceKind::kSum, inputs, scalars, 3,
                   reinterpret_cast<std::byte*>(out));
  EXPECT_EQ(out[0], 3.5f);
  EXPECT_EQ(out[1], 2.0f);
  EXPECT_EQ(out[2], 2.0f);
  fakenccl::Reduce(ncclFloat32, ReduceKind::kMax, inputs, scalars, 3,
                   reinterpret_cast<std::byte*>(out));
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], 4.0f);
  EXPECT_EQ(out[2], 3.0f);
  const std::int8_t x[] = {100, -128};
  const std::int8_t y[] = {100, -1};
  const std::byte* int_inputs[] = {reinterpret_cast<const std::byte*>(x),
                                   reinterpret_cast<const std::byte*>(y)};
  std::int8_t sum[2] = {};
  fakenccl::Reduce(ncclInt8, ReduceKind::kSum, int_inputs, scalars, 2,
                   reinterpret_cast<std::byte*>(sum));
  EXPECT_EQ(sum[0], static_cast<std::int8_t>(-56));  // 200 wraps
  EXPECT_EQ(sum[1], static_cast<std::int8_t>(127));  // -129 wraps
  fakenccl::Reduce(ncclInt8, ReduceKind::kAvg, int_inputs, scalars, 2,
                   reinterpret_cast<std::byte*>(sum));
  EXPECT_EQ(sum[0], static_cast<std::int8_t>(-28));  // the wrapped sum, divided toward zero
}

}  // namespace
