// Copyright 2026 The cuhal Authors.
// The control functions that the loader tests' tiny stand-in libraries (fake_libcuda.cc,
// fake_libnccl.cc) export next to their CUDA/NCCL entry points, and a helper that finds them.
// The tests reach them through dlsym on the same file the loader under test opens, so both see
// one loaded image and one configuration.
#ifndef CUHAL_TESTS_SYMBOLS_FAKE_LIB_CONTROL_H_
#define CUHAL_TESTS_SYMBOLS_FAKE_LIB_CONTROL_H_

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "core/base/status_or.h"
#include "core/symbols/dynamic_library.h"

extern "C" {
// Stand-in libcuda. Reset restores the defaults (nothing hidden, the variant's driver version,
// cuInit succeeds, counters zero).
void cuhal_testcuda_Reset(void);
// Makes cuGetProcAddress report `name` as CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND.
void cuhal_testcuda_Hide(const char* name);
void cuhal_testcuda_SetDriverVersion(int version);
// Calls of cuGetProcAddress_v2 and of the legacy cuGetProcAddress since Reset.
int cuhal_testcuda_V2Calls(void);
int cuhal_testcuda_LegacyCalls(void);
// Smallest and largest cudaVersion asked for since Reset (0 when none), and the OR of all flags.
int cuhal_testcuda_MinRequestedVersion(void);
int cuhal_testcuda_MaxRequestedVersion(void);
unsigned long long cuhal_testcuda_RequestedFlags(void);  // NOLINT(runtime/int)
int cuhal_testcuda_InitCalls(void);

// Stand-in libnccl.
void cuhal_testnccl_Reset(void);
void cuhal_testnccl_SetVersion(int code);
void cuhal_testnccl_SetVersionResult(int result);
int cuhal_testnccl_VersionCalls(void);
}

namespace cuhal::testing {

// Opens a stand-in library and looks up its control functions by name.
//
// Ownership: holds its own dlopen reference to the library. Thread-safety: like the functions it
// returns (the stand-ins lock their state). Stream ordering: not applicable.
class FakeLibrary {
 public:
  static StatusOr<FakeLibrary> Open(const std::string& path) {
    CUHAL_ASSIGN_OR_RETURN(DynamicLibrary library, DynamicLibrary::Open(path));
    return FakeLibrary(std::move(library));
  }

  // The control or entry function `name`, typed like `Fn`; null if the library lacks it.
  template <typename Fn>
  Fn* Get(const char* name) const {
    void* address = library_.Symbol(name);
    Fn* fn = nullptr;
    std::memcpy(&fn, &address, sizeof(address));
    return fn;
  }
  void* Symbol(const char* name) const { return library_.Symbol(name); }
  const DynamicLibrary& library() const { return library_; }

 private:
  explicit FakeLibrary(DynamicLibrary library) : library_(std::move(library)) {}
  DynamicLibrary library_;
};

// Sets (or, given nullopt, unsets) an environment variable for the scope, then restores it.
//
// Ownership: owns the saved value. Thread-safety: none; setenv is not thread-safe, use it only
// while no other thread reads the environment. Stream ordering: not applicable.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name); old != nullptr) saved_ = old;
    if (value.has_value()) {
      setenv(name, value->c_str(), /*overwrite=*/1);
    } else {
      unsetenv(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (saved_.has_value()) {
      setenv(name_.c_str(), saved_->c_str(), /*overwrite=*/1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace cuhal::testing

// Looks up the control function `fn` (declared above) in a FakeLibrary.
#define CUHAL_FAKE_FN(lib, fn) ((lib).Get<decltype(::fn)>(#fn))

#endif  // CUHAL_TESTS_SYMBOLS_FAKE_LIB_CONTROL_H_
