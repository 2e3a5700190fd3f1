// Copyright 2026 The cuhal Authors.
#include "trace/counting_cuda_api.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <span>

namespace cuhal::trace {
namespace {

// One index per table entry, in list order (the order of CudaSymbols()).
enum SymbolIndex : std::size_t {
#define CUHAL_CU_PFN(kind, name, arity) kIndex_##name,
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
  kSymbolCount
};

// The process-wide slots the trampolines read (see the class comment).
std::atomic<const CudaApi*> g_inner{nullptr};
std::array<std::atomic<std::uint64_t>, kSymbolCount> g_counts{};
std::mutex g_slot_mu;
bool g_slot_taken = false;  // guarded by g_slot_mu

template <std::size_t Index, auto Member, typename Fn>
struct Trampoline;

template <std::size_t Index, auto Member, typename R, typename... Args>
struct Trampoline<Index, Member, R (*)(Args...)> {
  static R Call(Args... args) {
    g_counts[Index].fetch_add(1, std::memory_order_relaxed);
    return (g_inner.load(std::memory_order_acquire)->*Member)(args...);
  }
};

}  // namespace

StatusOr<std::unique_ptr<CountingCudaApi>> CountingCudaApi::Create(const CudaApi* inner) {
  if (inner == nullptr) return InvalidArgumentError("CountingCudaApi: null table");
  {
    std::lock_guard<std::mutex> lock(g_slot_mu);
    if (g_slot_taken) {
      return FailedPreconditionError(
          "CountingCudaApi: another counting table is alive (one per process)");
    }
    g_slot_taken = true;
  }
  std::unique_ptr<CountingCudaApi> counting(new CountingCudaApi());
  for (std::atomic<std::uint64_t>& c : g_counts) c.store(0, std::memory_order_relaxed);
  g_inner.store(inner, std::memory_order_release);
  CudaApi& api = counting->api_;
#define CUHAL_CU_PFN(kind, name, arity)                                                       \
  api.name = inner->name == nullptr                                                           \
                 ? nullptr                                                                    \
                 : &Trampoline<kIndex_##name, &CudaApi::name, decltype(&::name)>::Call;
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
  return counting;
}

CountingCudaApi::~CountingCudaApi() {
  g_inner.store(nullptr, std::memory_order_release);
  std::lock_guard<std::mutex> lock(g_slot_mu);
  g_slot_taken = false;
}

std::uint64_t CountingCudaApi::total() const noexcept {
  std::uint64_t sum = 0;
  for (const std::atomic<std::uint64_t>& c : g_counts) sum += c.load(std::memory_order_relaxed);
  return sum;
}

std::vector<std::pair<std::string_view, std::uint64_t>> CountingCudaApi::Counts() const {
  std::vector<std::pair<std::string_view, std::uint64_t>> counts;
  std::span<const SymbolInfo> symbols = CudaSymbols();
  for (std::size_t i = 0; i < kSymbolCount && i < symbols.size(); ++i) {
    const std::uint64_t n = g_counts[i].load(std::memory_order_relaxed);
    if (n > 0) counts.emplace_back(symbols[i].name, n);
  }
  return counts;
}

void CountingCudaApi::Reset() noexcept {
  for (std::atomic<std::uint64_t>& c : g_counts) c.store(0, std::memory_order_relaxed);
}

}  // namespace cuhal::trace
