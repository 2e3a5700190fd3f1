// Copyright 2026 The cuhal Authors.
// The real binding of the symbol tables: CudaApi filled from the installed CUDA driver
// (libcuda.so.1) and NcclApi from the installed NCCL (libnccl.so.2), both found with dlopen.
//
// How the CUDA table is resolved, and why:
//   - dlsym finds only "cuGetProcAddress_v2" (or, on drivers older than CUDA 12.0, the legacy
//     "cuGetProcAddress", which has no symbolStatus out-parameter). Every table entry is then
//     asked for by its plain name ("cuMemAlloc") at one pinned API version; the driver answers
//     with the variant that was current at that version ("cuMemAlloc_v2"), which is the ABI the
//     table's function types (taken from cuda.h) expect. A plain dlsym("cuMemAlloc") would return
//     the 32-bit CUDA 3.1 entry point instead.
//   - A driver older than the pinned version would answer with older variants whose ABI may
//     differ from the table's types (cuCtxCreate_v2 has 3 parameters, the table's _v4 has 4), so
//     such a driver is refused with FAILED_PRECONDITION instead of handing out mistyped pointers.
//   - The legacy resolver is never stored in the table's cuGetProcAddress entry (its type is the
//     _v2 one); under it that optional entry stays null.
//   - cuGetProcAddress and cuDriverGetVersion work before cuInit; loading does not call cuInit.
//
// The loaded libraries stay mapped for the rest of the process (RTLD_NODELETE): libcuda and
// libnccl start threads and register exit handlers that must not outlive their code.
#ifndef CUHAL_CORE_SYMBOLS_REAL_LOADER_H_
#define CUHAL_CORE_SYMBOLS_REAL_LOADER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/dynamic_library.h"
#include "core/symbols/nccl_api.h"

namespace cuhal {

inline constexpr char kDefaultLibcudaName[] = "libcuda.so.1";
inline constexpr char kDefaultLibncclName[] = "libnccl.so.2";
inline constexpr char kLibcudaPathEnv[] = "CUHAL_LIBCUDA_PATH";
inline constexpr char kLibncclPathEnv[] = "CUHAL_LIBNCCL_PATH";

// The library path a load will dlopen: `requested` when it is not empty, else the value of the
// environment variable `env_var` when it is set and not empty, else `default_name`.
[[nodiscard]] std::string ResolveLibraryPath(std::string_view requested, const char* env_var,
                                             const char* default_name);

struct CudaLoadOptions {
  // The driver library to dlopen. Empty: $CUHAL_LIBCUDA_PATH if set, else "libcuda.so.1".
  std::string library_path;
  // The API version every entry is resolved at (1000 * major + 10 * minor). Must be in
  // [1000, kCudaApiVersion]; anything above would ask for ABIs newer than the table's types.
  // Values below kCudaApiVersion exist to test the loader: an entry whose signature changed
  // between them and kCudaApiVersion would be resolved to a variant the table mistypes.
  int api_version = kCudaApiVersion;
};

// A CudaApi resolved from the CUDA driver library.
//
// Ownership: returned as a unique_ptr so that the address of api() never changes (core objects
// keep `const CudaApi*`); not copyable or movable. The caller owns it and must keep it alive
// while any object that was handed &api() uses it. The library itself stays loaded for the rest
// of the process (see the top of this file), so destroying a RealCuda only drops a reference.
// Thread-safety: Load may be called from any thread, concurrently; the object is immutable after
// Load, so every accessor and every table entry may be used from any thread. Stream ordering: none
// of its own; each table entry keeps the driver's rules.
class RealCuda {
 public:
  // dlopens the driver, checks its version against options.api_version, and resolves every entry
  // of CudaSymbols(). Errors:
  //   INVALID_ARGUMENT     api_version out of range;
  //   UNAVAILABLE          the library cannot be loaded (the message names the path and carries
  //                        dlerror's text), exports no cuGetProcAddress, cuDriverGetVersion
  //                        fails, or a required entry is missing ("libcuda.so.1 (<path>):
  //                        required entry point cuFoo not found (symbolStatus=...)");
  //   FAILED_PRECONDITION  the driver is older than api_version.
  // Missing optional entries are left null and listed by missing_optional().
  [[nodiscard]] static StatusOr<std::unique_ptr<RealCuda>> Load(CudaLoadOptions options = {});

  RealCuda(const RealCuda&) = delete;
  RealCuda& operator=(const RealCuda&) = delete;
  // Not movable either: the table's address must stay fixed.
  RealCuda(RealCuda&&) = delete;
  RealCuda& operator=(RealCuda&&) = delete;
  ~RealCuda() = default;

  [[nodiscard]] const CudaApi& api() const noexcept { return api_; }
  // The path that was given to dlopen (after the default/environment rules).
  [[nodiscard]] const std::string& library_path() const noexcept { return library_.path(); }
  // The file the dynamic linker loaded for it.
  [[nodiscard]] const std::string& loaded_path() const noexcept { return library_.loaded_path(); }
  // The optional entries that the driver does not provide (null in api()), in list order.
  [[nodiscard]] std::vector<std::string> missing_optional() const { return missing_optional_; }
  // cuDriverGetVersion's answer, e.g. 13000.
  [[nodiscard]] int driver_version() const noexcept { return driver_version_; }
  // The version the entries were resolved at.
  [[nodiscard]] int api_version() const noexcept { return api_version_; }
  // True when the driver only had the legacy (CUDA 11.3-11.8) cuGetProcAddress.
  [[nodiscard]] bool used_legacy_get_proc_address() const noexcept { return legacy_resolver_; }

 private:
  explicit RealCuda(DynamicLibrary library) : library_(std::move(library)) {}

  DynamicLibrary library_;
  CudaApi api_;
  std::vector<std::string> missing_optional_;
  int driver_version_ = 0;
  int api_version_ = 0;
  bool legacy_resolver_ = false;
};

struct NcclLoadOptions {
  // The NCCL library to dlopen. Empty: $CUHAL_LIBNCCL_PATH if set, else "libnccl.so.2".
  std::string library_path;
};

// An NCCL version code split into its parts.
struct NcclVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  friend bool operator==(const NcclVersion&, const NcclVersion&) = default;
};

// Decodes ncclGetVersion's code: NCCL >= 2.9 encodes major*10000 + minor*100 + patch (22809 is
// 2.28.9), older releases major*1000 + minor*100 + patch (2804 is 2.8.4).
[[nodiscard]] NcclVersion DecodeNcclVersion(int code);

// An NcclApi resolved from the NCCL library.
//
// Ownership: returned as a unique_ptr so that &api() is stable; not copyable or movable; the
// caller keeps it alive while the table is in use; the library stays loaded for the process.
// Thread-safety: Load may be called from any thread; immutable afterwards, usable from any thread.
// Stream ordering: none of its own; each collective is ordered on the stream it is given.
class RealNccl {
 public:
  // dlopens NCCL, calls its ncclGetVersion before resolving anything else, and then dlsyms every
  // entry of NcclSymbols(). Errors:
  //   UNAVAILABLE          the library cannot be loaded (path and dlerror's text), has no
  //                        ncclGetVersion or it fails, or a required entry is missing (named);
  //   FAILED_PRECONDITION  its major version differs from kNcclMajorVersion (both are named).
  // Missing optional entries are left null and listed by missing_optional().
  [[nodiscard]] static StatusOr<std::unique_ptr<RealNccl>> Load(NcclLoadOptions options = {});

  RealNccl(const RealNccl&) = delete;
  RealNccl& operator=(const RealNccl&) = delete;
  RealNccl(RealNccl&&) = delete;
  RealNccl& operator=(RealNccl&&) = delete;
  ~RealNccl() = default;

  [[nodiscard]] const NcclApi& api() const noexcept { return api_; }
  [[nodiscard]] const std::string& library_path() const noexcept { return library_.path(); }
  [[nodiscard]] const std::string& loaded_path() const noexcept { return library_.loaded_path(); }
  [[nodiscard]] std::vector<std::string> missing_optional() const { return missing_optional_; }
  // ncclGetVersion's code, e.g. 22809; DecodeNcclVersion splits it.
  [[nodiscard]] int version() const noexcept { return version_; }

 private:
  explicit RealNccl(DynamicLibrary library) : library_(std::move(library)) {}

  DynamicLibrary library_;
  NcclApi api_;
  std::vector<std::string> missing_optional_;
  int version_ = 0;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_SYMBOLS_REAL_LOADER_H_
