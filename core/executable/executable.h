// Copyright 2026 The cuhal Authors.
// Executable: a loaded device code image (PTX, cubin or fatbin) with its entry points, their
// attributes and the dispatch checks (IREE's native_executable); ExecutableCache loads each image
// once per device (IREE's executable_cache).
#ifndef CUHAL_CORE_EXECUTABLE_EXECUTABLE_H_
#define CUHAL_CORE_EXECUTABLE_EXECUTABLE_H_

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/mutex.h"
#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"

namespace cuhal {

class Device;

enum class ExecutableFormat { kPtx, kCubin, kFatbin };
// "PTX", "cubin", "fatbin".
[[nodiscard]] std::string_view ExecutableFormatName(ExecutableFormat format);
// What an image is, by its first bytes: an ELF header is a cubin, the fatbin magic (0xBA55ED50,
// little-endian) a fatbin, anything else is taken as PTX text.
[[nodiscard]] ExecutableFormat DetectExecutableFormat(std::span<const std::byte> image);

// What to load.
struct ExecutableParams {
  // The image bytes. PTX need not be NUL-terminated (a terminated copy is handed to the driver).
  std::span<const std::byte> image;
  // The entry points, by name (the mangled name for C++ kernels), in ordinal order: ordinal i is
  // entry_points[i] (IREE's export ordinals). At least one; no duplicates.
  std::vector<std::string> entry_points;
  // Names the executable in every message about it.
  std::string name = "executable";
};
// ExecutableParams::image over text (PTX).
[[nodiscard]] inline std::span<const std::byte> ImageBytes(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

// An entry point's attributes as the driver reports them (cuFuncGetAttribute).
struct EntryPointAttributes {
  int max_threads_per_block = 0;     // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  int static_shared_bytes = 0;       // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  int max_dynamic_shared_bytes = 0;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int registers = 0;                 // CU_FUNC_ATTRIBUTE_NUM_REGS
  int local_bytes = 0;               // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
  int const_bytes = 0;               // CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES
  int ptx_version = 0;               // CU_FUNC_ATTRIBUTE_PTX_VERSION (major * 10 + minor)
  int binary_version = 0;            // CU_FUNC_ATTRIBUTE_BINARY_VERSION
};

// The device's launch limits (cuDeviceGetAttribute), read once per executable.
struct DeviceLaunchLimits {
  int max_threads_per_block = 0;                 // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  std::array<int, 3> max_block_dim{};            // CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z
  std::array<int, 3> max_grid_dim{};             // CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X/Y/Z
  int max_shared_per_block_optin = 0;  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
};
// Reads them for `device`. Errors name cuDeviceGetAttribute and the attribute.
[[nodiscard]] StatusOr<DeviceLaunchLimits> QueryDeviceLaunchLimits(const CudaApi* api,
                                                                   CUdevice device);

struct EntryPoint {
  std::string name;
  std::uint32_t ordinal = 0;
  CUfunction function = nullptr;
  EntryPointAttributes attributes;
};

// The launch configuration of one dispatch.
struct DispatchConfig {
  std::array<std::uint32_t, 3> workgroups{1, 1, 1};  // grid, in blocks
  std::array<std::uint32_t, 3> block{1, 1, 1};       // threads per block
  std::uint32_t dynamic_shared_bytes = 0;
};

// One image loaded into one device's context (cuModuleLoadDataEx), with its entry points looked
// up (cuModuleGetFunction) and their attributes read (cuFuncGetAttribute) at creation.
//
// Ownership: move-only owner of the module (unique_ptr from Create); destruction unloads it
// (cuModuleUnload; a failure goes to ReportDroppedStatus). It borrows the table and the context:
// destroy it before its Device, and only once no dispatch of it is pending (recorded command
// buffers borrow it: they must be destroyed, or their work completed, first).
// Thread-safety: immutable after Create; every method may be called from any thread.
// Stream ordering: none of its own; a dispatch of it runs in the order of the command buffer that
// records it (core/command/command_buffer.h).
class Executable {
 public:
  // Loads `params.image` with `context` current for the call (made current and restored).
  // Errors: INVALID_ARGUMENT for an empty image, no entry points or a duplicate; the failing
  // driver call otherwise: a failed load carries the JIT error log ("JIT error log: ...") when
  // the driver wrote one; a missing entry point is NOT_FOUND naming it. On an error nothing is
  // left loaded.
  [[nodiscard]] static StatusOr<std::unique_ptr<Executable>> Create(const CudaApi* api,
                                                                    CUcontext context,
                                                                    CUdevice device,
                                                                    const ExecutableParams& params);
  // The same on `device`'s primary context.
  [[nodiscard]] static StatusOr<std::unique_ptr<Executable>> Create(Device& device,
                                                                    const ExecutableParams& params);
  Executable(const Executable&) = delete;             // owns the module
  Executable& operator=(const Executable&) = delete;  // ditto
  ~Executable() = default;                            // the handle unloads the module

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] ExecutableFormat format() const noexcept { return format_; }
  [[nodiscard]] CUmodule module() const noexcept { return module_.get(); }
  [[nodiscard]] CUcontext context() const noexcept { return context_; }
  [[nodiscard]] const DeviceLaunchLimits& device_limits() const noexcept { return limits_; }
  // The JIT info log of the load (empty when the driver wrote none).
  [[nodiscard]] const std::string& info_log() const noexcept { return info_log_; }

  [[nodiscard]] std::size_t entry_point_count() const noexcept { return entry_points_.size(); }
  // Entry point `ordinal`, or OUT_OF_RANGE naming the ordinal and the count.
  [[nodiscard]] StatusOr<const EntryPoint*> entry_point(std::uint32_t ordinal) const;
  // The entry point named `name`, or NOT_FOUND.
  [[nodiscard]] StatusOr<const EntryPoint*> LookupEntryPoint(std::string_view name) const;

  // Checks `config` against entry point `ordinal`'s limits and the device's: every workgroup
  // count in [1, max grid dim], every block dim in [1, max block dim], the block's threads <=
  // the entry point's max threads per block (which is <= the device's), dynamic shared memory <=
  // the entry point's max dynamic shared size and static + dynamic <= the device's opt-in
  // maximum. INVALID_ARGUMENT naming the limit, its value and the requested value.
  [[nodiscard]] Status ValidateDispatch(std::uint32_t ordinal, const DispatchConfig& config) const;

 private:
  Executable(std::string name, ExecutableFormat format, CUcontext context, ModuleHandle module)
      : name_(std::move(name)), format_(format), context_(context), module_(std::move(module)) {}

  const std::string name_;
  const ExecutableFormat format_;
  const CUcontext context_;
  ModuleHandle module_;
  DeviceLaunchLimits limits_;
  std::string info_log_;
  std::vector<EntryPoint> entry_points_;
};

// Loads each image once per device: a second request for the same image content (and the same
// entry point list) returns the executable already loaded (IREE's executable_cache).
//
// Ownership: one cache per Device, made and owned by the caller; it borrows the Device, which
// must outlive it. The executables are shared (shared_ptr): they stay loaded while the cache or
// any caller holds them; destroy the cache and drop every executable before the Device.
// Thread-safety: every method may be called from any thread; concurrent requests for the same
// image load it once (the load runs under the cache's lock). Stream ordering: none.
class ExecutableCache {
 public:
  explicit ExecutableCache(Device& device) : device_(device) {}
  ExecutableCache(const ExecutableCache&) = delete;             // executables point at it
  ExecutableCache& operator=(const ExecutableCache&) = delete;  // ditto

  // The executable for `params` (params.name is used only when it is loaded now). Errors are
  // Executable::Create's; a failed load is not cached (the next request tries again).
  [[nodiscard]] StatusOr<std::shared_ptr<const Executable>> GetOrLoad(
      const ExecutableParams& params);

  struct Statistics {
    std::uint64_t loads = 0;  // images loaded (cuModuleLoadDataEx succeeded)
    std::uint64_t hits = 0;   // requests answered from the cache
    std::size_t size = 0;     // executables held
  };
  [[nodiscard]] Statistics statistics() const;
  // Drops the cache's references (executables still held elsewhere stay loaded).
  void Clear();

 private:
  Device& device_;
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<const Executable>> executables_ CUHAL_GUARDED_BY(mu_);
  std::uint64_t loads_ CUHAL_GUARDED_BY(mu_) = 0;
  std::uint64_t hits_ CUHAL_GUARDED_BY(mu_) = 0;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_EXECUTABLE_EXECUTABLE_H_
