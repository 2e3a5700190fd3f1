// Copyright 2026 The cuhal Authors.
// Test support for NCCL: a CUDA backend (tests/support) plus an NcclApi table, fake (fakenccl over
// fakecuda) or real (the installed libnccl.so.2 through cuhal::RealNccl), and ranks as threads.
//
//   class MyNcclTest : public cuhal::testing::NcclBackendTest {};
//   TEST_P(MyNcclTest, Something) {
//     RankThreads ranks(cuda(), {0});            // one thread on device 0, with a stream
//     std::vector<ncclComm_t> comms = InitComms(ranks);
//     ...
//     DestroyComms(ranks, comms);
//   }
//
// The real backend is skipped, with the reason printed, when libcuda.so.1/libnccl.so.2 cannot be
// loaded or there is no GPU (CUHAL_REAL_REQUIRED=1 turns that into a failure). Set
// CUHAL_LIBNCCL_PATH to pick the NCCL library (for example the one of the nvidia-nccl wheel).
#ifndef CUHAL_TESTS_FAKENCCL_NCCL_SUPPORT_H_
#define CUHAL_TESTS_FAKENCCL_NCCL_SUPPORT_H_

#include <cuda.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/symbols/nccl_api.h"
#include "fakenccl/fake_nccl.h"
#include "tests/support/backend.h"

// gtest prints ncclResult_t values by their nccl.h names ("ncclInvalidArgument (4)").
void PrintTo(ncclResult_t result, std::ostream* os);

namespace cuhal::testing {

struct NcclBackendOptions {
  int device_count = 1;
  fakecuda::SchedulePolicy policy = fakecuda::SchedulePolicy::kEager;
  fakenccl::NcclOptions nccl;  // fake only
};

// A CUDA backend and an NCCL table over it.
//
// Ownership: owns the CUDA Backend and, for the fake, the installed FakeNccl (one per process at a
// time). The real NcclApi comes from one process-wide RealNccl (libnccl stays loaded anyway).
// Thread-safety: cuda() and nccl() may be used from any thread.
class NcclBackend {
 public:
  // "fake", "fake_adversarial" or "real"; null with *unavailable (skip) or *error (fail).
  static std::unique_ptr<NcclBackend> Create(std::string_view name, NcclBackendOptions options,
                                             std::string* unavailable, std::string* error);
  ~NcclBackend();
  NcclBackend(const NcclBackend&) = delete;             // owns installed fakes
  NcclBackend& operator=(const NcclBackend&) = delete;  // ditto

  const CudaApi& cuda() const { return cuda_->api(); }
  const NcclApi& nccl() const { return nccl_; }
  bool is_fake() const { return cuda_->is_fake(); }
  Backend& cuda_backend() { return *cuda_; }
  fakecuda::FakeDriver* fake_cuda() const { return cuda_->fake(); }
  fakenccl::FakeNccl* fake_nccl() const { return fake_nccl_ ? &fake_nccl_->nccl() : nullptr; }

 private:
  NcclBackend() = default;
  std::unique_ptr<Backend> cuda_;
  std::unique_ptr<fakenccl::ScopedNccl> fake_nccl_;
  NcclApi nccl_;
};

// Ranks as threads: thread r makes the primary context of device devices[r] current and creates
// a stream on it (CU_STREAM_NON_BLOCKING); Run executes a function on every rank's thread at once.
//
// Ownership: owns its threads, their primary-context retains and streams; the destructor releases
// them (streams destroyed, contexts popped and released, threads joined). Thread-safety: Run and
// the destructor from one (the test's) thread. Stream ordering: none of its own.
class RankThreads {
 public:
  RankThreads(const CudaApi& api, std::vector<int> devices);
  ~RankThreads();
  RankThreads(const RankThreads&) = delete;             // owns threads
  RankThreads& operator=(const RankThreads&) = delete;  // ditto

  int size() const { return static_cast<int>(devices_.size()); }
  int device(int rank) const { return devices_[static_cast<size_t>(rank)]; }
  CUstream stream(int rank) const { return streams_[static_cast<size_t>(rank)]; }
  // Whether every thread made its context current and created its stream.
  bool ok() const { return setup_ok_; }
  // Runs fn(rank) on each rank's thread concurrently; returns when every call returned.
  void Run(const std::function<void(int)>& fn);
  // Runs fn(rank) on one rank's thread only.
  void RunOn(int rank, const std::function<void()>& fn);

 private:
  void Loop(int rank);

  const CudaApi& api_;
  std::vector<int> devices_;
  std::vector<CUstream> streams_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t generation_ = 0;                   // guarded by mu_
  std::function<void(int)> job_;                   // guarded by mu_
  std::vector<char> selected_;                     // guarded by mu_: ranks that run job_
  int pending_ = 0;                                // guarded by mu_
  bool stop_ = false;                              // guarded by mu_
  bool setup_ok_ = true;                           // written before the first Run returns
};

// Base fixture: SetUp makes the NCCL backend named by the parameter (skipping when unavailable);
// TearDown checks, on the fake, that no communicator or CUDA object leaked.
class NcclBackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  virtual NcclBackendOptions Options() const { return {}; }

  void SetUp() override;
  void TearDown() override;

  const CudaApi& cuda() const { return backend_->cuda(); }
  const NcclApi& nccl() const { return backend_->nccl(); }
  bool IsFake() const { return backend_->is_fake(); }
  fakenccl::FakeNccl& fake_nccl() { return *backend_->fake_nccl(); }
  fakecuda::FakeDriver& fake_cuda() { return *backend_->fake_cuda(); }

  // One communicator over `ranks` (ncclGetUniqueId here, ncclCommInitRank on each rank's thread).
  // Fails the test (and returns what it has) when a call fails.
  std::vector<ncclComm_t> InitComms(RankThreads& ranks);
  // ncclCommDestroy on each rank's thread; skips null handles.
  void DestroyComms(RankThreads& ranks, std::vector<ncclComm_t>& comms);

  std::unique_ptr<NcclBackend> backend_;
};

// NCCL's result names ("ncclInvalidArgument").
std::string NcclName(ncclResult_t result);

// The NCCL backends of this executable's flavour (tests/support/flavour.h).
inline std::vector<std::string> CompiledNcclBackends() {
  return ParseBackendList(CompiledFlavour().nccl_backends, BackendFilter::kAll);
}
#define CUHAL_INSTANTIATE_NCCL_BACKEND_TEST(Suite)                                        \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                               \
                           ::testing::ValuesIn(::cuhal::testing::CompiledNcclBackends()), \
                           ::cuhal::testing::BackendParamName)

}  // namespace cuhal::testing

#endif  // CUHAL_TESTS_FAKENCCL_NCCL_SUPPORT_H_
