// Copyright 2026 The cuhal Authors.
// Kernels for the fake driver: host implementations registered by name, run by cuLaunchKernel
// (and by kernel nodes of launched graphs) in stream order on fake device memory.
//
// Module images. cuModuleLoadData / cuModuleLoadDataEx accept, as a NUL-terminated string:
//  * PTX text, as nvcc/NVRTC produce it. fakecuda reads `.version`, `.target`, every `.entry`
//    (name and `.param` list: sizes, alignments, offsets), `.maxntid`/`.reqntid`/`.maxnreg`,
//    the `.shared`/`.local` declarations of each entry body (static shared and local sizes), and
//    module-scope `.global`/`.const` variables with their initializers (for cuModuleGetGlobal).
//    A kernel with an implementation registered under its entry name (the mangled name for
//    C++ kernels, e.g. "_Z5saxpyfPKfPfi") runs that; otherwise fakecuda's PTX interpreter
//    (fakecuda/ptx/) runs its body. A kernel with neither (its body uses an instruction the
//    interpreter does not implement, and nothing is registered at load time) makes the load
//    fail with CUDA_ERROR_NOT_SUPPORTED and the instruction and line in the JIT error log.
//  * fakecuda's own format, for tests that do not want to write PTX:
//        FAKECUDA-MODULE 1
//        # comment
//        kernel <name> [<size>[@<align>] ...] [shared=N] [regs=N] [maxthreads=N] [const=N] [local=N]
//        global <name> <bytes>
//    Each `kernel` line gives the byte size of every parameter in order (alignment defaults to
//    the largest power of two <= 8 dividing the size); `global` lines define zero-initialized
//    module variables. Example: "FAKECUDA-MODULE 1\nkernel saxpy 4 8 8 4\n".
//  Cubin (ELF) and fatbinary images are recognised and refused with CUDA_ERROR_NOT_SUPPORTED;
//  anything else is CUDA_ERROR_INVALID_IMAGE; PTX that does not parse is CUDA_ERROR_INVALID_PTX.
//
// Launching a kernel of a FAKECUDA-MODULE image whose name has no registered implementation (and
// no kAnyKernel fallback) fails synchronously with CUDA_ERROR_NOT_SUPPORTED (not sticky, nothing is queued): a test that
// forgot to register a kernel learns it at the launch, not from silently wrong data.
// Implementations are looked up at launch time, so they may be registered before or after the
// module is loaded. The drop-in library registers no-op implementations for the names listed in
// FAKECUDA_NOOP_KERNELS ("*": every kernel), see fakecuda/dropin/dropin_config.h.
//
// Usage:
//   fakecuda::ScopedKernel saxpy("saxpy", [](const fakecuda::KernelLaunch& l) -> CUresult {
//     float a = l.Param<float>(0);
//     int n = l.Param<int>(3);
//     const float* x = l.TranslateAs<const float>(l.Param<CUdeviceptr>(1), n);
//     float* y = l.TranslateAs<float>(l.Param<CUdeviceptr>(2), n);
//     if (x == nullptr || y == nullptr) return CUDA_ERROR_ILLEGAL_ADDRESS;  // becomes sticky
//     for (int i = 0; i < n; ++i) y[i] += a * x[i];
//     return CUDA_SUCCESS;
//   });
#ifndef CUHAL_FAKECUDA_KERNEL_REGISTRY_H_
#define CUHAL_FAKECUDA_KERNEL_REGISTRY_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fakecuda {

class DriverState;  // internal

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  std::uint64_t Count() const { return std::uint64_t{x} * y * z; }
};

// One launch of a kernel, as its implementation sees it: the launch configuration, the
// parameter values (copied when cuLaunchKernel was called, as the real driver does), and access
// to fake device memory.
//
// Ownership: owned by the queued launch; valid only during the implementation's call.
// Thread-safety: the implementation runs on whichever host thread drives the scheduler, without
// the driver lock; Translate takes the lock briefly, so an implementation must not hold a lock
// that another thread holds while calling the driver. Stream ordering: the implementation runs
// when the launch reaches the head of its stream, after all earlier work of that stream.
class KernelLaunch {
 public:
  std::string_view kernel_name() const { return name_; }
  Dim3 grid() const { return grid_; }
  Dim3 block() const { return block_; }
  unsigned shared_mem_bytes() const { return shared_mem_bytes_; }
  int device() const { return device_; }

  std::size_t param_count() const { return offsets_.size(); }
  // The bytes of parameter i (empty when i is out of range).
  std::span<const std::byte> param(std::size_t i) const;
  // The whole packed parameter buffer (what CU_LAUNCH_PARAM_BUFFER_POINTER would hold).
  std::span<const std::byte> param_buffer() const { return params_; }
  // Parameter i as a T. When i is out of range or sizeof(T) differs from the parameter's size
  // (a bug in the kernel implementation, or a module whose kernel has other parameters), it
  // throws std::invalid_argument: the launch fails with a sticky CUDA_ERROR_LAUNCH_FAILED and
  // the message on stderr, as a faulting kernel would; the process goes on.
  template <typename T>
  T Param(std::size_t i) const {
    static_assert(std::is_trivially_copyable_v<T>, "kernel parameters are bytes");
    T value{};
    CopyParam(i, &value, sizeof(T));
    return value;
  }

  // The host bytes behind [ptr, ptr + bytes) of memory the device may access (device, pool,
  // managed, pinned or registered host memory of this driver), or null when that range is not
  // inside one live allocation: a kernel then typically returns CUDA_ERROR_ILLEGAL_ADDRESS.
  std::byte* Translate(CUdeviceptr ptr, std::size_t bytes) const;
  template <typename T>
  T* TranslateAs(CUdeviceptr ptr, std::size_t count = 1) const {
    return reinterpret_cast<T*>(Translate(ptr, count * sizeof(T)));
  }

  // Internal: built by the fake's launch path.
  KernelLaunch(DriverState* state, std::string name, Dim3 grid, Dim3 block,
               unsigned shared_mem_bytes, int device, std::vector<std::byte> params,
               std::vector<std::pair<std::size_t, std::size_t>> offsets);

 private:
  void CopyParam(std::size_t i, void* out, std::size_t size) const;

  DriverState* state_;
  std::string name_;
  Dim3 grid_;
  Dim3 block_;
  unsigned shared_mem_bytes_;
  int device_;
  std::vector<std::byte> params_;
  std::vector<std::pair<std::size_t, std::size_t>> offsets_;  // (offset, size) per parameter
};

// A kernel implementation. Returns CUDA_SUCCESS, or the error the kernel raised on the device
// (CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ASSERT, CUDA_ERROR_LAUNCH_FAILED, ...): that error
// becomes the context's sticky error, as a device fault does on real hardware.
using KernelFn = std::function<CUresult(const KernelLaunch&)>;

// How a kernel uses a pointer parameter, for the race detector (fakecuda/race/race_detector.h).
enum class ParamAccess {
  kUnknown,    // as if undeclared: the allocation it points into is read and written, all of it
  kNone,       // not a pointer the kernel dereferences
  kRead,       // reads the allocation it points into
  kReadWrite,  // reads and writes it
};

struct KernelOptions {
  // Virtual duration of one launch (event timing, scheduling order); not real time.
  double cost_us = 7.1;  // an empty kernel on the H200, launch to completion
  // Per parameter (missing entries: kUnknown); only 8-byte parameters can point anywhere.
  std::vector<ParamAccess> param_access;
};

// The name under which a registration serves every kernel that has none of its own (for
// example a no-op, so that programs whose kernels do not matter to a test run on the fake).
inline constexpr std::string_view kAnyKernel = "*";

// Registers `fn` as the implementation of every kernel named `name` (or, with kAnyKernel, of
// every kernel without a registration of its own), in every module and every fake driver of the
// process, replacing any previous registration of that name.
// Thread-safety: the registry is process-wide and thread-safe; launches already queued keep the
// implementation they were launched with.
void RegisterKernel(std::string name, KernelFn fn, KernelOptions options = {});
// Removes the registration; false if there was none.
bool UnregisterKernel(std::string_view name);
// Whether `name` itself is registered (a kAnyKernel registration does not count).
bool IsKernelRegistered(std::string_view name);

namespace internal {
// The registration of `name` at this moment, or null (used by the launch path).
struct KernelRegistration {
  KernelFn fn;
  KernelOptions options;
};
std::shared_ptr<const KernelRegistration> FindKernel(std::string_view name);
}  // namespace internal

// Registers a kernel for its lifetime (restoring whatever was registered under the name before).
class ScopedKernel {
 public:
  ScopedKernel(std::string name, KernelFn fn, KernelOptions options = {});
  ~ScopedKernel();
  ScopedKernel(const ScopedKernel&) = delete;             // owns the registration
  ScopedKernel& operator=(const ScopedKernel&) = delete;  // ditto

 private:
  std::string name_;
  std::shared_ptr<const internal::KernelRegistration> previous_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_KERNEL_REGISTRY_H_
