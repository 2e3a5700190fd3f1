// Copyright 2026 The cuhal Authors.
#include "fakenccl/fake_nccl.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace fakenccl {
namespace {

std::atomic<FakeNccl*> g_installed{nullptr};

}  // namespace

std::unique_ptr<FakeNccl> FakeNccl::Create(NcclOptions options, std::string* error) {
  if (options.version <= 0) {
    if (error != nullptr) {
      *error = "fakenccl: NcclOptions::version must be > 0 (NCCL_VERSION_CODE form, e.g. 22809), "
               "got " + std::to_string(options.version);
    }
    return nullptr;
  }
  return std::unique_ptr<FakeNccl>(new FakeNccl(options));
}

FakeNccl::FakeNccl(NcclOptions options) : options_(std::move(options)) {
  std::random_device device;
  std::seed_seq seed{device(), device(), device(), device()};
  random_.seed(seed);
}

void FakeNccl::NewUniqueId(ncclUniqueId* id) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Bytes 1..255: never zero, so that an id is never mistaken for a zeroed one.
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

}  // namespace fakenccl
