// Copyright 2026 The cuhal Authors.
// Every collective x data type x reduction, in place and out of place, checked against a
// host-computed reference, with ranks as threads on their own fake devices. The rank counts come
// from CUHAL_NCCL_MATRIX_RANKS ("1,2,3" or "8": the 8-rank matrix is its own, slow, executable).
// With CUHAL_NCCL_MATRIX_SHM=1 the ids are cross-process ones (NcclOptions::cross_process): every
// call meets its peers and moves its data through the shared-memory transport
// (fakenccl/internal/shm_transport.h), which does not care whether the ranks are threads or
// processes, and must give the same results.
//
// Inputs are small integers chosen so that every partial result is exact in every type (fp8 E5M2
// holds the integers up to 8 exactly, E4M3 up to 16), so the reference is exact except for the
// average over 3 ranks, whose 1/3 scalar is rounded to the type (as NCCL does): that one is
// compared within a tolerance of the type's precision.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "fakenccl/datatypes.h"
#include "tests/fakenccl/nccl_support.h"

#ifndef CUHAL_NCCL_MATRIX_RANKS
#define CUHAL_NCCL_MATRIX_RANKS 1, 2, 3
#endif

namespace cuhal::testing {
namespace {

// Elements per rank and block: odd, to catch offset errors. The long variant's count is larger
// than the vector width and the fake's chunks, and a multiple of neither.
#ifndef CUHAL_NCCL_MATRIX_SHM
#define CUHAL_NCCL_MATRIX_SHM 0
#endif

#ifndef CUHAL_NCCL_MATRIX_COUNT
#define CUHAL_NCCL_MATRIX_COUNT 5
#endif
constexpr std::size_t kCount = CUHAL_NCCL_MATRIX_COUNT;

enum class Coll { kAllReduce, kReduce, kReduceScatter, kBroadcast, kAllGather, kAlltoAll, kGather,
                  kScatter };
enum class Op { kSum, kProd, kMax, kMin, kAvg, kPreMulHost, kPreMulDevice, kNone };

const char* CollName(Coll c) {
  switch (c) {
    case Coll::kAllReduce: return "AllReduce";
    case Coll::kReduce: return "Reduce";
    case Coll::kReduceScatter: return "ReduceScatter";
    case Coll::kBroadcast: return "Broadcast";
    case Coll::kAllGather: return "AllGather";
    case Coll::kAlltoAll: return "AlltoAll";
    case Coll::kGather: return "Gather";
    case Coll::kScatter: return "Scatter";
  }
  return "?";
}

const char* OpName(Op o) {
  switch (o) {
    case Op::kSum: return "sum";
    case Op::kProd: return "prod";
    case Op::kMax: return "max";
    case Op::kMin: return "min";
    case Op::kAvg: return "avg";
    case Op::kPreMulHost: return "premulsum(host scalar)";
    case Op::kPreMulDevice: return "premulsum(device scalar)";
    case Op::kNone: return "-";
  }
  return "?";
}

const std::vector<ncclDataType_t>& AllTypes() {
  static const std::vector<ncclDataType_t> types = {
      ncclInt8,    ncclUint8,   ncclInt32,    ncclUint32,     ncclInt64,     ncclUint64,
      ncclFloat16, ncclFloat32, ncclFloat64,  ncclBfloat16,   ncclFloat8e4m3, ncclFloat8e5m2};
  return types;
}

bool IsUnsigned(ncclDataType_t t) { return t == ncclUint8 || t == ncclUint32 || t == ncclUint64; }
bool IsSmallFloat(ncclDataType_t t) { return t == ncclFloat8e4m3 || t == ncclFloat8e5m2; }

// The largest input magnitude that keeps every partial sum exact over 8 ranks.
int Magnitude(ncclDataType_t t) {
  if (t == ncclFloat8e5m2) return 1;
  if (t == ncclFloat8e4m3) return 2;
  return 3;
}

double Input(ncclDataType_t t, Op op, int rank, std::size_t i) {
  const int m = Magnitude(t);
  const int k = static_cast<int>(i);
  switch (op) {
    case Op::kSum:
    case Op::kAvg:
    case Op::kPreMulHost:
    case Op::kPreMulDevice:
      if (IsUnsigned(t)) return (rank * 7 + k * 3) % (m + 1);
      return (rank * 7 + k * 3) % (2 * m + 1) - m;
    case Op::kProd: {
      static const int kSigned[] = {1, -1, 2};
      static const int kUnsigned[] = {1, 2, 1};
      int j = (rank + k) % 3;
      return IsUnsigned(t) ? kUnsigned[j] : kSigned[j];
    }
    case Op::kMax:
    case Op::kMin:
      if (IsUnsigned(t)) return (rank * 5 + k * 3) % 7;
      return (rank * 5 + k * 3) % 7 - 3;
    case Op::kNone:
      if (IsUnsigned(t)) return (rank * 11 + k * 5) % 15;
      return (rank * 11 + k * 5) % 15 - 7;
  }
  return 0;
}

double Scalar(ncclDataType_t t, int rank) {
  if (IsSmallFloat(t)) return rank % 2 == 0 ? 1 : -1;
  if (IsUnsigned(t)) return rank % 2 == 0 ? 2 : 1;
  return rank % 2 == 0 ? 2 : -1;
}

// The value of `v` after wrapping to the integer type `t`.
double WrapInt(ncclDataType_t t, std::int64_t v) {
  switch (t) {
    case ncclInt8: return static_cast<std::int8_t>(static_cast<std::uint8_t>(v));
    case ncclUint8: return static_cast<std::uint8_t>(v);
    case ncclInt32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case ncclUint32: return static_cast<std::uint32_t>(v);
    case ncclInt64: return static_cast<double>(v);
    case ncclUint64: return static_cast<double>(static_cast<std::uint64_t>(v));
    default: return static_cast<double>(v);
  }
}

// The reference reduction of element i over ranks, computed on the host.
double Reference(ncclDataType_t t, Op op, int n, std::size_t i, std::size_t block) {
  if (!fakenccl::IsFloatingType(t)) {
    std::int64_t acc = 0;
    for (int r = 0; r < n; ++r) {
      auto x = static_cast<std::int64_t>(Input(t, op, r, block + i));
      switch (op) {
        case Op::kSum:
        case Op::kAvg:
          acc = r == 0 ? x : acc + x;
          break;
        case Op::kPreMulHost:
        case Op::kPreMulDevice:
          acc += x * static_cast<std::int64_t>(Scalar(t, r));
          break;
        case Op::kProd:
          acc = r == 0 ? x : acc * x;
          break;
        case Op::kMax:
          acc = r == 0 ? x : std::max(acc, x);
          break;
        case Op::kMin:
          acc = r == 0 ? x : std::min(acc, x);
          break;
        case Op::kNone:
          break;
      }
    }
    if (op == Op::kAvg) {
      // NCCL's SumPostDiv: the wrapped sum divided by n, rounded toward zero.
      auto wrapped = static_cast<std::int64_t>(WrapInt(t, acc));
      return WrapInt(t, wrapped / n);
    }
    return WrapInt(t, acc);
  }
  double acc = 0;
  for (int r = 0; r < n; ++r) {
    double x = Input(t, op, r, block + i);
    switch (op) {
      case Op::kSum:
      case Op::kAvg:
        acc += x;
        break;
      case Op::kPreMulHost:
      case Op::kPreMulDevice:
        acc += x * Scalar(t, r);
        break;
      case Op::kProd:
        acc = r == 0 ? x : acc * x;
        break;
      case Op::kMax:
        acc = r == 0 ? x : std::max(acc, x);
        break;
      case Op::kMin:
        acc = r == 0 ? x : std::min(acc, x);
        break;
      case Op::kNone:
        break;
    }
  }
  return op == Op::kAvg ? acc / n : acc;
}

// Allowed error: zero, except for an average whose 1/n is not exact in the type.
double Tolerance(ncclDataType_t t, Op op, int n) {
  if (op != Op::kAvg || (n & (n - 1)) == 0 || !fakenccl::IsFloatingType(t)) return 0.0;
  double eps = 0;
  switch (t) {
    case ncclFloat8e5m2: eps = 0.25; break;
    case ncclFloat8e4m3: eps = 0.125; break;
    case ncclBfloat16: eps = 1.0 / 128; break;
    case ncclFloat16: eps = 1.0 / 1024; break;
    case ncclFloat32: eps = 1e-6; break;
    default: eps = 1e-14; break;
  }
  return 2.0 * Magnitude(t) * eps;
}

std::vector<std::byte> Encode(ncclDataType_t t, const std::vector<double>& values) {
  const std::size_t s = fakenccl::TypeSize(t);
  std::vector<std::byte> bytes(values.size() * s);
  for (std::size_t i = 0; i < values.size(); ++i) {
    fakenccl::EncodeElement(t, values[i], bytes.data() + i * s);
  }
  return bytes;
}

double Decode(ncclDataType_t t, const std::vector<std::byte>& bytes, std::size_t i) {
  return fakenccl::DecodeElement(t, bytes.data() + i * fakenccl::TypeSize(t));
}

struct Case {
  Coll coll;
  ncclDataType_t type;
  Op op;
  bool in_place;
};

std::string Describe(const Case& c, int n) {
  std::ostringstream os;
  os << CollName(c.coll) << " " << fakenccl::TypeName(c.type) << " " << OpName(c.op) << " "
     << (c.in_place ? "in-place" : "out-of-place") << " on " << n << " rank(s)";
  return os.str();
}

class CollectiveMatrixTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::string unavailable;
    std::string error;
    NcclBackendOptions options;
    options.device_count = 8;
    options.nccl.cross_process = CUHAL_NCCL_MATRIX_SHM != 0;
    // The transport moves a rank's data inside that rank's stream work, waiting there for its
    // peers; under the eager policy one thread may run several ranks' stream work in turn, so
    // ranks that are threads of one process need the adversarial policy, where each rank's work
    // runs on its own thread when it synchronizes (docs/fakenccl.md, "Across processes").
    if (CUHAL_NCCL_MATRIX_SHM != 0) options.policy = fakecuda::SchedulePolicy::kAdversarial;
    backend_ = NcclBackend::Create("fake", options, &unavailable, &error);
    ASSERT_NE(backend_, nullptr) << error << unavailable;
    n_ = GetParam();
    std::vector<int> devices;
    for (int r = 0; r < n_; ++r) devices.push_back(r);
    ranks_ = std::make_unique<RankThreads>(cuda(), devices);
    ASSERT_TRUE(ranks_->ok());
    ncclUniqueId id;
    ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
    comms_.assign(static_cast<size_t>(n_), nullptr);
    send_.assign(static_cast<size_t>(n_), 0);
    recv_.assign(static_cast<size_t>(n_), 0);
    scalar_.assign(static_cast<size_t>(n_), 0);
    const std::size_t bytes = kCount * 8 * static_cast<std::size_t>(n_);
    ranks_->Run([&](int r) {
      auto rr = static_cast<size_t>(r);
      EXPECT_EQ(nccl().ncclCommInitRank(&comms_[rr], n_, id, r), ncclSuccess);
      EXPECT_EQ(cuda().cuMemAlloc(&send_[rr], bytes), CUDA_SUCCESS);
      EXPECT_EQ(cuda().cuMemAlloc(&recv_[rr], bytes), CUDA_SUCCESS);
      EXPECT_EQ(cuda().cuMemAlloc(&scalar_[rr], 8), CUDA_SUCCESS);
    });
  }

  void TearDown() override {
    if (ranks_ != nullptr) {
      ranks_->Run([&](int r) {
        auto rr = static_cast<size_t>(r);
        if (comms_[rr] != nullptr) {
          EXPECT_EQ(nccl().ncclCommDestroy(comms_[rr]), ncclSuccess);
        }
        for (CUdeviceptr p : {send_[rr], recv_[rr], scalar_[rr]}) {
          if (p != 0) {
            EXPECT_EQ(cuda().cuMemFree(p), CUDA_SUCCESS);
          }
        }
      });
      ranks_.reset();
    }
    if (backend_ != nullptr) {
      EXPECT_EQ(backend_->fake_nccl()->LiveObjects().Total(), 0)
          << backend_->fake_nccl()->LeakReport();
      EXPECT_EQ(backend_->fake_cuda()->LiveObjects().Total(), 0)
          << backend_->fake_cuda()->LeakReport();
    }
    backend_.reset();
  }

  const CudaApi& cuda() const { return backend_->cuda(); }
  const NcclApi& nccl() const { return backend_->nccl(); }

  // Runs one case on every rank and returns each rank's output bytes.
  std::vector<std::vector<std::byte>> RunCase(const Case& c) {
    const std::size_t s = fakenccl::TypeSize(c.type);
    const std::size_t block = kCount * s;
    const std::size_t all = block * static_cast<std::size_t>(n_);
    const int root = n_ - 1 - (n_ / 3);  // not always 0
    std::vector<std::vector<std::byte>> out(static_cast<size_t>(n_));
    ranks_->Run([&](int r) {
      auto rr = static_cast<size_t>(r);
      CUstream stream = ranks_->stream(r);
      auto cs = reinterpret_cast<cudaStream_t>(stream);
      // How many elements this rank sends (and the offset of its own block for in-place forms).
      std::size_t in_count = kCount;
      if (c.coll == Coll::kReduceScatter || c.coll == Coll::kAlltoAll ||
          c.coll == Coll::kScatter) {
        in_count = kCount * static_cast<std::size_t>(n_);
      }
      std::vector<double> values(in_count);
      for (std::size_t i = 0; i < in_count; ++i) values[i] = Input(c.type, c.op, r, i);
      std::vector<std::byte> input = Encode(c.type, values);
      std::vector<std::byte> sentinel(all, std::byte{0x5a});
      ASSERT_EQ(cuda().cuMemcpyHtoD(recv_[rr], sentinel.data(), all), CUDA_SUCCESS);
      CUdeviceptr send = send_[rr];
      CUdeviceptr recv = recv_[rr];
      if (c.in_place) {
        send = recv;
        if (c.coll == Coll::kAllGather) send = recv + static_cast<size_t>(r) * block;
      }
      ASSERT_EQ(cuda().cuMemcpyHtoD(send, input.data(), input.size()), CUDA_SUCCESS);
      if (c.in_place && c.coll == Coll::kReduceScatter) {
        recv = send + static_cast<size_t>(r) * block;
      }
      ncclRedOp_t op = ncclSum;
      switch (c.op) {
        case Op::kSum: op = ncclSum; break;
        case Op::kProd: op = ncclProd; break;
        case Op::kMax: op = ncclMax; break;
        case Op::kMin: op = ncclMin; break;
        case Op::kAvg: op = ncclAvg; break;
        case Op::kPreMulHost:
        case Op::kPreMulDevice: {
          std::vector<std::byte> scalar = Encode(c.type, {Scalar(c.type, r)});
          if (c.op == Op::kPreMulHost) {
            ASSERT_EQ(nccl().ncclRedOpCreatePreMulSum(&op, scalar.data(), c.type,
                                                      ncclScalarHostImmediate, comms_[rr]),
                      ncclSuccess);
            scalar.assign(scalar.size(), std::byte{0});  // NCCL copies it at creation
          } else {
            ASSERT_EQ(cuda().cuMemcpyHtoD(scalar_[rr], scalar.data(), scalar.size()),
                      CUDA_SUCCESS);
            ASSERT_EQ(nccl().ncclRedOpCreatePreMulSum(&op, reinterpret_cast<void*>(scalar_[rr]),
                                                      c.type, ncclScalarDevice, comms_[rr]),
                      ncclSuccess);
          }
          break;
        }
        case Op::kNone: break;
      }
      auto sp = reinterpret_cast<const void*>(send);
      auto rp = reinterpret_cast<void*>(recv);
      ncclComm_t comm = comms_[rr];
      ncclResult_t result = ncclSuccess;
      switch (c.coll) {
        case Coll::kAllReduce:
          result = nccl().ncclAllReduce(sp, rp, kCount, c.type, op, comm, cs);
          break;
        case Coll::kReduce:
          result = nccl().ncclReduce(sp, rp, kCount, c.type, op, root, comm, cs);
          break;
        case Coll::kReduceScatter:
          result = nccl().ncclReduceScatter(sp, rp, kCount, c.type, op, comm, cs);
          break;
        case Coll::kBroadcast:
          result = nccl().ncclBroadcast(sp, rp, kCount, c.type, root, comm, cs);
          break;
        case Coll::kAllGather:
          result = nccl().ncclAllGather(sp, rp, kCount, c.type, comm, cs);
          break;
        case Coll::kAlltoAll:
          result = nccl().ncclAlltoAll(sp, rp, kCount, c.type, comm, cs);
          break;
        case Coll::kGather:
          result = nccl().ncclGather(sp, rp, kCount, c.type, root, comm, cs);
          break;
        case Coll::kScatter:
          result = nccl().ncclScatter(sp, rp, kCount, c.type, root, comm, cs);
          break;
      }
      EXPECT_EQ(result, ncclSuccess) << "rank " << r << ": " << nccl().ncclGetLastError(comm);
      EXPECT_EQ(cuda().cuStreamSynchronize(stream), CUDA_SUCCESS);
      if (c.op == Op::kPreMulHost || c.op == Op::kPreMulDevice) {
        EXPECT_EQ(nccl().ncclRedOpDestroy(op, comm), ncclSuccess);
      }
      ncclResult_t async = ncclSuccess;
      EXPECT_EQ(nccl().ncclCommGetAsyncError(comm, &async), ncclSuccess);
      EXPECT_EQ(async, ncclSuccess) << nccl().ncclGetLastError(comm);
      std::size_t out_bytes = block;
      CUdeviceptr from = recv;
      if (c.coll == Coll::kAllGather || c.coll == Coll::kAlltoAll ||
          (c.coll == Coll::kGather && r == root)) {
        out_bytes = all;
        from = recv_[rr];
      }
      out[rr].resize(out_bytes);
      EXPECT_EQ(cuda().cuMemcpyDtoH(out[rr].data(), from, out_bytes), CUDA_SUCCESS);
    });
    return out;
  }

  // Checks rank outputs against the reference; returns the number of mismatching elements.
  int Check(const Case& c, const std::vector<std::vector<std::byte>>& out) {
    const int root = n_ - 1 - (n_ / 3);
    const double tol = Tolerance(c.type, c.op, n_);
    int bad = 0;
    auto expect = [&](int r, std::size_t i, double got, double want) {
      if (std::fabs(got - want) <= tol || (std::isnan(got) && std::isnan(want))) return;
      if (++bad <= 3) {
        ADD_FAILURE() << Describe(c, n_) << ": rank " << r << " element " << i << " is " << got
                      << ", expected " << want;
      }
    };
    for (int r = 0; r < n_; ++r) {
      const std::vector<std::byte>& o = out[static_cast<size_t>(r)];
      switch (c.coll) {
        case Coll::kAllReduce:
          for (std::size_t i = 0; i < kCount; ++i) {
            expect(r, i, Decode(c.type, o, i), Reference(c.type, c.op, n_, i, 0));
          }
          break;
        case Coll::kReduce:
          if (r != root) break;
          for (std::size_t i = 0; i < kCount; ++i) {
            expect(r, i, Decode(c.type, o, i), Reference(c.type, c.op, n_, i, 0));
          }
          break;
        case Coll::kReduceScatter:
          for (std::size_t i = 0; i < kCount; ++i) {
            expect(r, i, Decode(c.type, o, i),
                   Reference(c.type, c.op, n_, i, static_cast<size_t>(r) * kCount));
          }
          break;
        case Coll::kBroadcast:
          for (std::size_t i = 0; i < kCount; ++i) {
            expect(r, i, Decode(c.type, o, i), Input(c.type, Op::kNone, root, i));
          }
          break;
        case Coll::kAllGather:
          for (int b = 0; b < n_; ++b) {
            for (std::size_t i = 0; i < kCount; ++i) {
              expect(r, static_cast<size_t>(b) * kCount + i,
                     Decode(c.type, o, static_cast<size_t>(b) * kCount + i),
                     Input(c.type, Op::kNone, b, i));
            }
          }
          break;
        case Coll::kAlltoAll:
          // Rank r's block b is rank b's block r.
          for (int b = 0; b < n_; ++b) {
            for (std::size_t i = 0; i < kCount; ++i) {
              expect(r, static_cast<size_t>(b) * kCount + i,
                     Decode(c.type, o, static_cast<size_t>(b) * kCount + i),
                     Input(c.type, Op::kNone, b, static_cast<size_t>(r) * kCount + i));
            }
          }
          break;
        case Coll::kGather:
          if (r != root) break;
          for (int b = 0; b < n_; ++b) {
            for (std::size_t i = 0; i < kCount; ++i) {
              expect(r, static_cast<size_t>(b) * kCount + i,
                     Decode(c.type, o, static_cast<size_t>(b) * kCount + i),
                     Input(c.type, Op::kNone, b, i));
            }
          }
          break;
        case Coll::kScatter:
          for (std::size_t i = 0; i < kCount; ++i) {
            expect(r, i, Decode(c.type, o, i),
                   Input(c.type, Op::kNone, root, static_cast<size_t>(r) * kCount + i));
          }
          break;
      }
    }
    return bad;
  }

  std::unique_ptr<NcclBackend> backend_;
  int n_ = 0;
  std::unique_ptr<RankThreads> ranks_;
  std::vector<ncclComm_t> comms_;
  std::vector<CUdeviceptr> send_;
  std::vector<CUdeviceptr> recv_;
  std::vector<CUdeviceptr> scalar_;
};

TEST_P(CollectiveMatrixTest, ReductionsOfEveryTypeAndOperator) {
  int cases = 0;
  for (Coll coll : {Coll::kAllReduce, Coll::kReduce, Coll::kReduceScatter}) {
    for (ncclDataType_t type : AllTypes()) {
      for (Op op : {Op::kSum, Op::kProd, Op::kMax, Op::kMin, Op::kAvg, Op::kPreMulHost,
                    Op::kPreMulDevice}) {
        for (bool in_place : {false, true}) {
          Case c{coll, type, op, in_place};
          SCOPED_TRACE(Describe(c, n_));
          Check(c, RunCase(c));
          ++cases;
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 12 * 7 * 2);
}

TEST_P(CollectiveMatrixTest, DataMovementOfEveryType) {
  for (Coll coll : {Coll::kBroadcast, Coll::kAllGather, Coll::kAlltoAll, Coll::kGather,
                    Coll::kScatter}) {
    for (ncclDataType_t type : AllTypes()) {
      for (bool in_place : {false, true}) {
        // NCCL defines in-place forms for Broadcast and AllGather only (AlltoAll, Gather and
        // Scatter are grouped sends and receives).
        if (in_place && coll != Coll::kBroadcast && coll != Coll::kAllGather) continue;
        Case c{coll, type, Op::kNone, in_place};
        SCOPED_TRACE(Describe(c, n_));
        Check(c, RunCase(c));
        if (HasFatalFailure()) return;
      }
    }
  }
}

std::string RanksName(const ::testing::TestParamInfo<int>& param) {
  return std::to_string(param.param) + "ranks";
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectiveMatrixTest, ::testing::Values(CUHAL_NCCL_MATRIX_RANKS),
                         RanksName);

}  // namespace
}  // namespace cuhal::testing
