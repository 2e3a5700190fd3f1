// Copyright 2026 The cuhal Authors.
#include "fakecuda/kernel_registry.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/base/mutex.h"
#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/mem_pool.h"

namespace fakecuda {
namespace {

// The process-wide registry. Its mutex is a leaf: it is taken while the driver lock is held (at
// launch), and nothing is called while holding it.
struct Registry {
  cuhal::Mutex mu;
  std::map<std::string, std::shared_ptr<const internal::KernelRegistration>, std::less<>> kernels
      CUHAL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  static Registry registry;
  return registry;
}

void Set(const std::string& name, std::shared_ptr<const internal::KernelRegistration> reg) {
  Registry& r = GetRegistry();
  cuhal::MutexLock lock(r.mu);
  if (reg == nullptr) {
    r.kernels.erase(name);
  } else {
    r.kernels[name] = std::move(reg);
  }
}

}  // namespace

KernelLaunch::KernelLaunch(DriverState* state, std::string name, Dim3 grid, Dim3 block,
                           unsigned shared_mem_bytes, int device, std::vector<std::byte> params,
                           std::vector<std::pair<std::size_t, std::size_t>> offsets)
    : state_(state),
      name_(std::move(name)),
      grid_(grid),
      block_(block),
      shared_mem_bytes_(shared_mem_bytes),
      device_(device),
      params_(std::move(params)),
      offsets_(std::move(offsets)) {}

std::span<const std::byte> KernelLaunch::param(std::size_t i) const {
  if (i >= offsets_.size()) return {};
  return std::span<const std::byte>(params_).subspan(offsets_[i].first, offsets_[i].second);
}

void KernelLaunch::CopyParam(std::size_t i, void* out, std::size_t size) const {
  if (i >= offsets_.size() || offsets_[i].second != size) {
    // Thrown into the scheduler, which fails this launch (a sticky CUDA_ERROR_LAUNCH_FAILED, as
    // a faulting kernel) and prints the message; the process goes on.
    std::ostringstream os;
    os << "kernel " << name_ << ": Param(" << i << ") read as " << size << " bytes, but the kernel has "
       << offsets_.size() << " parameter(s)";
    if (i < offsets_.size()) os << " and this one has " << offsets_[i].second << " bytes";
    throw std::invalid_argument(os.str());
  }
  std::memcpy(out, params_.data() + offsets_[i].first, size);
}

std::byte* KernelLaunch::Translate(CUdeviceptr ptr, std::size_t bytes) const {
  cuhal::MutexLock lock(state_->mu);
  const std::size_t need = std::max<std::size_t>(bytes, 1);
  Allocation* a = state_->FindAllocation(ptr, need);
  if (a != nullptr && a->data != nullptr) return a->data + (ptr - a->base);
  // Pool memory freed (cuMemFreeAsync) after this launch was queued: still mapped by its pool.
  MappedPoolRun run;
  if (!PoolsMappedRun(*state_, ptr, &run) || run.size - (ptr - run.base) < need) return nullptr;
  return run.data + (ptr - run.base);
}

void RegisterKernel(std::string name, KernelFn fn, KernelOptions options) {
  auto reg = std::make_shared<internal::KernelRegistration>();
  reg->fn = std::move(fn);
  reg->options = options;
  Set(name, std::move(reg));
}

bool UnregisterKernel(std::string_view name) {
  Registry& r = GetRegistry();
  cuhal::MutexLock lock(r.mu);
  auto it = r.kernels.find(name);
  if (it == r.kernels.end()) return false;
  r.kernels.erase(it);
  return true;
}

bool IsKernelRegistered(std::string_view name) {
  Registry& r = GetRegistry();
  cuhal::MutexLock lock(r.mu);
  return r.kernels.count(name) != 0;
}

ScopedKernel::ScopedKernel(std::string name, KernelFn fn, KernelOptions options)
    : name_(std::move(name)), previous_(internal::FindKernel(name_)) {
  RegisterKernel(name_, std::move(fn), options);
}

ScopedKernel::~ScopedKernel() { Set(name_, previous_); }

namespace internal {
std::shared_ptr<const KernelRegistration> FindKernel(std::string_view name) {
  Registry& r = GetRegistry();
  cuhal::MutexLock lock(r.mu);
  auto it = r.kernels.find(name);
  if (it == r.kernels.end()) it = r.kernels.find(kAnyKernel);
  return it == r.kernels.end() ? nullptr : it->second;
}
}  // namespace internal

}  // namespace fakecuda
