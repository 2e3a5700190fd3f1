// Copyright 2026 The cuhal Authors.
#include "tests/fakenccl/nccl_support.h"

#include "core/symbols/real_loader.h"
#include "fakecuda/virtual_clock.h"

void PrintTo(ncclResult_t result, std::ostream* os) {
  *os << cuhal::testing::NcclName(result) << " (" << static_cast<int>(result) << ")";
}

namespace cuhal::testing {
namespace {

struct RealLibNccl {
  std::unique_ptr<RealNccl> nccl;
  std::string unavailable;
};

const RealLibNccl& LoadRealNccl() {
  static const RealLibNccl* loaded = [] {
    auto* l = new RealLibNccl;  // never freed: libnccl stays loaded for the process anyway
    StatusOr<std::unique_ptr<RealNccl>> r = RealNccl::Load();
    if (r.ok()) {
      l->nccl = std::move(r).value();
    } else {
      l->unavailable = "no usable NCCL (set " + std::string(kLibncclPathEnv) +
                       " to choose one): " + r.status().ToString();
    }
    return l;
  }();
  return *loaded;
}

}  // namespace

std::string NcclName(ncclResult_t result) { return fakenccl::NcclResultName(result); }

std::unique_ptr<NcclBackend> NcclBackend::Create(std::string_view name,
                                                 NcclBackendOptions options,
                                                 std::string* unavailable, std::string* error) {
  auto backend = std::unique_ptr<NcclBackend>(new NcclBackend);
  BackendOptions cuda_options;
  cuda_options.policy = options.policy;
  cuda_options.device_count = options.device_count;
  if (name == "real") {
    const RealLibNccl& real = LoadRealNccl();
    if (real.nccl == nullptr) {
      RealUnreachable(real.unavailable, unavailable, error);
      return nullptr;
    }
    backend->cuda_ = Backend::Create(name, cuda_options, unavailable, error);
    if (backend->cuda_ == nullptr) return nullptr;
    backend->nccl_ = real.nccl->api();
    return backend;
  }
  backend->cuda_ = Backend::Create(name, cuda_options, unavailable, error);
  if (backend->cuda_ == nullptr) return nullptr;
  backend->fake_nccl_ = std::make_unique<fakenccl::ScopedNccl>(options.nccl);
  fakenccl::FillNcclApi(&backend->nccl_);
  return backend;
}

NcclBackend::~NcclBackend() {
  fake_nccl_.reset();  // before the fake driver, which its queued work may still reference
  cuda_.reset();
}

RankThreads::RankThreads(const CudaApi& api, std::vector<int> devices)
    : api_(api), devices_(std::move(devices)), streams_(devices_.size(), nullptr) {
  selected_.assign(devices_.size(), 0);
  for (int r = 0; r < size(); ++r) threads_.emplace_back([this, r] { Loop(r); });
  // Each thread's setup runs as the first job.
  std::vector<char> ok(devices_.size(), 0);
  Run([&](int r) {
    CUcontext ctx = nullptr;
    CUdevice dev = devices_[static_cast<size_t>(r)];
    if (api_.cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return;
    if (api_.cuCtxPushCurrent(ctx) != CUDA_SUCCESS) {
      (void)api_.cuDevicePrimaryCtxRelease(dev);
      return;
    }
    CUstream s = nullptr;
    if (api_.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return;
    streams_[static_cast<size_t>(r)] = s;
    ok[static_cast<size_t>(r)] = 1;
  });
  for (char c : ok) setup_ok_ = setup_ok_ && c != 0;
}

RankThreads::~RankThreads() {
  Run([&](int r) {
    CUstream s = streams_[static_cast<size_t>(r)];
    if (s != nullptr) {
      (void)api_.cuStreamSynchronize(s);
      (void)api_.cuStreamDestroy(s);
    }
    CUcontext current = nullptr;
    if (api_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != nullptr) {
      (void)api_.cuCtxPopCurrent(nullptr);
      (void)api_.cuDevicePrimaryCtxRelease(devices_[static_cast<size_t>(r)]);
    }
  });
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void RankThreads::Run(const std::function<void(int)>& fn) {
  std::unique_lock<std::mutex> lock(mu_);
  job_ = fn;
  selected_.assign(devices_.size(), 1);
  pending_ = size();
  ++generation_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

void RankThreads::RunOn(int rank, const std::function<void()>& fn) {
  std::unique_lock<std::mutex> lock(mu_);
  job_ = [&fn](int) { fn(); };
  selected_.assign(devices_.size(), 0);
  selected_[static_cast<size_t>(rank)] = 1;
  pending_ = 1;
  ++generation_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

void RankThreads::Loop(int rank) {
  std::uint64_t seen = 0;
  for (;;) {
    std::function<void(int)> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Idle between jobs: blocked, as far as the fakes' virtual clock is concerned (a rank that
      // has nothing more to do must not look busy to peers waiting for it).
      fakecuda::ScopedBlocked blocked;
      cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (!selected_[static_cast<size_t>(rank)]) continue;
      job = job_;
    }
    job(rank);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --pending_;
    }
    cv_.notify_all();
  }
}

void NcclBackendTest::SetUp() {
  std::string unavailable;
  std::string error;
  backend_ = NcclBackend::Create(GetParam(), Options(), &unavailable, &error);
  if (backend_ == nullptr) {
    if (!error.empty()) FAIL() << error;
    GTEST_SKIP() << unavailable;
  }
}

void NcclBackendTest::TearDown() {
  if (backend_ == nullptr) return;
  if (backend_->is_fake()) {
    fakenccl::NcclInventory nccl_live = backend_->fake_nccl()->LiveObjects();
    EXPECT_EQ(nccl_live.Total(), 0) << "leaked: " << nccl_live.ToString() << "\n"
                                    << backend_->fake_nccl()->LeakReport();
    fakecuda::Inventory cuda_live = backend_->fake_cuda()->LiveObjects();
    EXPECT_EQ(cuda_live.Total(), 0) << "leaked: " << cuda_live.ToString() << "\n"
                                    << backend_->fake_cuda()->LeakReport();
  }
  backend_.reset();
}

std::vector<ncclComm_t> NcclBackendTest::InitComms(RankThreads& ranks) {
  std::vector<ncclComm_t> comms(static_cast<size_t>(ranks.size()), nullptr);
  ncclUniqueId id;
  ncclResult_t r = nccl().ncclGetUniqueId(&id);
  EXPECT_EQ(r, ncclSuccess);
  if (r != ncclSuccess) return comms;
  ranks.Run([&](int rank) {
    ncclResult_t result = nccl().ncclCommInitRank(&comms[static_cast<size_t>(rank)], ranks.size(),
                                                  id, rank);
    EXPECT_EQ(result, ncclSuccess) << "rank " << rank << ": " << nccl().ncclGetLastError(nullptr);
  });
  return comms;
}

void NcclBackendTest::DestroyComms(RankThreads& ranks, std::vector<ncclComm_t>& comms) {
  ranks.Run([&](int rank) {
    ncclComm_t& c = comms[static_cast<size_t>(rank)];
    if (c == nullptr) return;
    ncclResult_t result = nccl().ncclCommDestroy(c);
    EXPECT_EQ(result, ncclSuccess) << "rank " << rank << ": " << nccl().ncclGetLastError(nullptr);
    c = nullptr;
  });
}

}  // namespace cuhal::testing
