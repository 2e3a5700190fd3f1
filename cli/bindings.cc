// Copyright 2026 The cuhal Authors.
#include "cli/bindings.h"

#include <utility>

#include "core/symbols/real_loader.h"
#include "fakecuda/fake_driver.h"
#include "fakenccl/fake_nccl.h"

namespace cuhal::cli {
namespace {

// A fake driver installed for the owner's lifetime, and the table that serves it.
struct FakeCudaOwner {
  fakecuda::ScopedDriver driver;
  CudaApi api;
};

struct FakeNcclOwner {
  fakenccl::ScopedNccl nccl;
  NcclApi api;
};

}  // namespace

std::string_view BackendName(BackendKind kind) {
  return kind == BackendKind::kFake ? "fake" : "real";
}

StatusOr<CudaBinding> BindCuda(BackendKind kind) {
  if (kind == BackendKind::kFake) {
    auto owner = std::make_shared<FakeCudaOwner>();
    fakecuda::FillCudaApi(&owner->api);
    const CudaApi* api = &owner->api;
    return CudaBinding{std::move(owner), api, "fake"};
  }
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<RealCuda> real, RealCuda::Load());
  std::string source = StrCat("real: ", real->loaded_path());
  std::shared_ptr<const RealCuda> owner = std::move(real);
  const CudaApi* api = &owner->api();
  return CudaBinding{std::move(owner), api, std::move(source)};
}

StatusOr<NcclBinding> BindNccl(BackendKind kind) {
  if (kind == BackendKind::kFake) {
    auto owner = std::make_shared<FakeNcclOwner>();
    fakenccl::FillNcclApi(&owner->api);
    const NcclApi* api = &owner->api;
    return NcclBinding{std::move(owner), api, "fake"};
  }
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<RealNccl> real, RealNccl::Load());
  std::string source = StrCat("real: ", real->loaded_path());
  std::shared_ptr<const RealNccl> owner = std::move(real);
  const NcclApi* api = &owner->api();
  return NcclBinding{std::move(owner), api, std::move(source)};
}

}  // namespace cuhal::cli
