// Copyright 2026 The cuhal Authors.
// The cuhal CLI's table bindings: a CudaApi or NcclApi filled from the fake (fakecuda/fakenccl)
// or the real libraries (libcuda.so.1/libnccl.so.2 through core/symbols/real_loader.h), together
// with whatever keeps the table's implementation alive.
#ifndef CUHAL_CLI_BINDINGS_H_
#define CUHAL_CLI_BINDINGS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"
#include "fakecuda/fake_driver.h"

namespace cuhal::cli {

enum class BackendKind { kFake, kReal };

// "fake" or "real".
std::string_view BackendName(BackendKind kind);

// A bound CUDA table. Ownership: owns the implementation behind `api` (a fake driver installed
// for the binding's lifetime, or the loaded library); `api` is valid while the binding lives.
// Thread-safety: the table may be read from any thread. Stream ordering: the driver's.
struct CudaBinding {
  std::shared_ptr<const void> owner;
  const CudaApi* api = nullptr;
  std::string source;  // "fake", or "real: <the library file loaded>"
};

// A bound NCCL table; as CudaBinding.
struct NcclBinding {
  std::shared_ptr<const void> owner;
  const NcclApi* api = nullptr;
  std::string source;  // as CudaBinding::source
};

// The fake binding installs a fresh fake (process-wide, as the fakes' entry points require) for
// the binding's lifetime: destroy NCCL bindings before CUDA ones, in reverse order of creation.
// The real binding loads the library (paths from CUHAL_LIBCUDA_PATH / CUHAL_LIBNCCL_PATH when
// set); a missing library or entry is UNAVAILABLE naming it.
[[nodiscard]] StatusOr<CudaBinding> BindCuda(BackendKind kind);
[[nodiscard]] StatusOr<NcclBinding> BindNccl(BackendKind kind);
// The fake binding with these driver options (devices, schedule). INVALID_ARGUMENT with the
// fake's reason when it refuses the options.
[[nodiscard]] StatusOr<CudaBinding> BindFakeCuda(fakecuda::DriverOptions options);

// `count` fake devices made from the profile in the JSON file `profile_path` (the built-in H200
// when empty). Each copy after the first gets its own UUID (the previous one plus 1) and PCI bus
// id (the next bus number), as distinct GPUs of one machine have. Errors: INVALID_ARGUMENT for a
// count outside [1, 64] or a malformed profile (naming the file and the JSON position or field),
// NOT_FOUND for a file that cannot be read.
[[nodiscard]] StatusOr<std::vector<fakecuda::DeviceProfile>> FakeDeviceProfiles(
    const std::string& profile_path, int count);

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_BINDINGS_H_
