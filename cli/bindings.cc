// Copyright 2026 The cuhal Authors.
#include "cli/bindings.h"

#include <cstdio>
#include <fstream>
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

// As FakeCudaOwner, for a driver made (and validated) by the caller: installs it for the owner's
// lifetime and restores the previously installed one afterwards.
class InstalledFakeCuda {
 public:
  explicit InstalledFakeCuda(std::unique_ptr<fakecuda::FakeDriver> driver)
      : driver_(std::move(driver)), previous_(fakecuda::Installed()) {
    fakecuda::Install(driver_.get());
    fakecuda::FillCudaApi(&api_);
  }
  ~InstalledFakeCuda() { fakecuda::Install(previous_); }
  InstalledFakeCuda(const InstalledFakeCuda&) = delete;             // restores once
  InstalledFakeCuda& operator=(const InstalledFakeCuda&) = delete;  // ditto

  const CudaApi* api() const { return &api_; }

 private:
  std::unique_ptr<fakecuda::FakeDriver> driver_;
  fakecuda::FakeDriver* previous_;
  CudaApi api_;
};

constexpr int kMaxFakeDevices = 64;

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

StatusOr<CudaBinding> BindFakeCuda(fakecuda::DriverOptions options) {
  std::string error;
  std::unique_ptr<fakecuda::FakeDriver> driver =
      fakecuda::FakeDriver::Create(std::move(options), &error);
  if (driver == nullptr) {
    return InvalidArgumentError(StrCat("the fake CUDA driver refused its options: ", error));
  }
  auto owner = std::make_shared<InstalledFakeCuda>(std::move(driver));
  const CudaApi* api = owner->api();
  return CudaBinding{std::move(owner), api, "fake"};
}

StatusOr<std::vector<fakecuda::DeviceProfile>> FakeDeviceProfiles(const std::string& profile_path,
                                                                  int count) {
  if (count < 1 || count > kMaxFakeDevices) {
    return InvalidArgumentError(
        StrCat("--count must be between 1 and ", kMaxFakeDevices, ", got ", count));
  }
  fakecuda::DeviceProfile profile = fakecuda::BuiltinH200Profile();
  if (!profile_path.empty()) {
    if (!std::ifstream(profile_path)) {
      return NotFoundError(StrCat(profile_path, ": cannot open for reading"));
    }
    std::string error;
    if (!fakecuda::LoadProfile(profile_path, &profile, &error)) {
      return InvalidArgumentError(StrCat("malformed device profile: ", error));
    }
  }
  return fakecuda::DistinctDevices(profile, count);
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
