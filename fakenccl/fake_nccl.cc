// Copyright 2026 The cuhal Authors.
#include "fakenccl/fake_nccl.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "fakenccl/internal/engine.h"
#include "fakenccl/internal/shm_transport.h"

namespace fakenccl {
namespace {

std::atomic<FakeNccl*> g_installed{nullptr};
std::atomic<std::uint64_t> g_serial{1};

}  // namespace

std::string NcclInventory::ToString() const {
  std::string out;
  auto add = [&out](int n, const char* what) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + what;
  };
  add(communicators, "communicator(s)");
  add(reduction_ops, "reduction op(s)");
  return out.empty() ? "none" : out;
}

std::unique_ptr<FakeNccl> FakeNccl::Create(NcclOptions options, std::string* error) {
  if (options.version <= 0) {
    if (error != nullptr) {
      *error = "fakenccl: NcclOptions::version must be > 0 (NCCL_VERSION_CODE form, e.g. 22809), "
               "got " + std::to_string(options.version);
    }
    return nullptr;
  }
  if (options.timeout_ticks == 0) {
    if (error != nullptr) *error = "fakenccl: NcclOptions::timeout_ticks must be > 0";
    return nullptr;
  }
  if (options.wall_timeout_ms == 0) {
    if (error != nullptr) *error = "fakenccl: NcclOptions::wall_timeout_ms must be > 0";
    return nullptr;
  }
  return std::unique_ptr<FakeNccl>(new FakeNccl(options));
}

FakeNccl::FakeNccl(NcclOptions options)
    : options_(std::move(options)),
      serial_(g_serial.fetch_add(1, std::memory_order_relaxed)),
      engine_(std::make_shared<internal::Engine>(
          options_.timeout_ticks, std::chrono::milliseconds(static_cast<std::int64_t>(
                                      std::min<std::uint64_t>(options_.wall_timeout_ms,
                                                              std::uint64_t{1} << 40))))) {
  std::random_device device;
  std::seed_seq seed{device(), device(), device(), device()};
  random_.seed(seed);
}

FakeNccl::~FakeNccl() {
  FakeNccl* self = this;
  g_installed.compare_exchange_strong(self, nullptr);
}

NcclInventory FakeNccl::LiveObjects() const {
  internal::EngineInventory e = engine_->Inventory();
  NcclInventory inv;
  inv.communicators = e.communicators;
  inv.reduction_ops = e.reduction_ops;
  return inv;
}

std::string FakeNccl::LeakReport() const { return engine_->DescribeLive(); }

void FakeNccl::NewUniqueId(ncclUniqueId* id) {
  cuhal::MutexLock lock(mutex_);
  // Bytes 1..255: never zero, so that an id is never mistaken for a zeroed one.
  if (options_.cross_process) {
    internal::MakeShmUniqueId(random_(), id);
    return;
  }
  std::uniform_int_distribution<int> byte(1, 255);
  for (char& c : id->internal) c = static_cast<char>(static_cast<unsigned char>(byte(random_)));
}

void Install(FakeNccl* nccl) { g_installed.store(nccl, std::memory_order_release); }

FakeNccl* Installed() { return g_installed.load(std::memory_order_acquire); }

ScopedNccl::ScopedNccl(NcclOptions options) : previous_(Installed()) {
  std::string error;
  nccl_ = FakeNccl::Create(options, &error);
  if (nccl_ == nullptr) {
    std::fprintf(stderr, "fakenccl::ScopedNccl: %s\n", error.c_str());
    std::abort();
  }
  Install(nccl_.get());
}

ScopedNccl::~ScopedNccl() { Install(previous_); }

void FillNcclApi(cuhal::NcclApi* api) {
#define CUHAL_NCCL_PFN(kind, name, arity) api->name = &::name;
#include "core/symbols/nccl_symbols.inc"
#undef CUHAL_NCCL_PFN
}

std::string UniqueIdToHex(const ncclUniqueId& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof(id.internal));
  for (char c : id.internal) {
    const auto byte = static_cast<unsigned char>(c);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xf];
  }
  return out;
}

bool UniqueIdFromHex(std::string_view hex, ncclUniqueId* id) {
  if (hex.size() != 2 * sizeof(id->internal)) return false;
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  ncclUniqueId parsed{};
  for (std::size_t i = 0; i < sizeof(parsed.internal); ++i) {
    const int hi = digit(hex[2 * i]);
    const int lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    parsed.internal[i] = static_cast<char>((hi << 4) | lo);
  }
  *id = parsed;
  return true;
}

}  // namespace fakenccl
