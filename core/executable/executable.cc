// Copyright 2026 The cuhal Authors.
#include "core/executable/executable.h"

#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "core/device/device.h"
#include "core/driver/context_scope.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

constexpr std::size_t kJitLogBytes = 16 * 1024;

// The log text up to its NUL (the driver NUL-terminates it; the bound guards against one that
// does not).
std::string LogText(const std::vector<char>& log) {
  return std::string(log.data(), strnlen(log.data(), log.size()));
}

Status ReadAttribute(const CudaApi* api, CUfunction function, CUfunction_attribute attribute,
                     const char* attribute_name, int* out) {
  return CUHAL_CU(api, cuFuncGetAttribute, out, attribute, function)
      .AddContext(StrCat("reading ", attribute_name));
}

const char* const kAxis[3] = {"x", "y", "z"};

}  // namespace

std::string_view ExecutableFormatName(ExecutableFormat format) {
  switch (format) {
    case ExecutableFormat::kPtx: return "PTX";
    case ExecutableFormat::kCubin: return "cubin";
    case ExecutableFormat::kFatbin: return "fatbin";
  }
  return "unknown";
}

ExecutableFormat DetectExecutableFormat(std::span<const std::byte> image) {
  if (image.size() >= 4 && image[0] == std::byte{0x7F} && image[1] == std::byte{'E'} &&
      image[2] == std::byte{'L'} && image[3] == std::byte{'F'}) {
    return ExecutableFormat::kCubin;
  }
  if (image.size() >= 4) {
    std::uint32_t magic = 0;
    std::memcpy(&magic, image.data(), sizeof(magic));
    if (magic == 0xBA55ED50u) return ExecutableFormat::kFatbin;
  }
  return ExecutableFormat::kPtx;
}

StatusOr<DeviceLaunchLimits> QueryDeviceLaunchLimits(const CudaApi* api, CUdevice device) {
  DeviceLaunchLimits limits;
  struct Query {
    CUdevice_attribute attribute;
    const char* name;
    int* out;
  };
  const Query queries[] = {
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
       &limits.max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X",
       &limits.max_block_dim[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y",
       &limits.max_block_dim[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z",
       &limits.max_block_dim[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X",
       &limits.max_grid_dim[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y",
       &limits.max_grid_dim[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z",
       &limits.max_grid_dim[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
       &limits.max_shared_per_block_optin},
  };
  for (const Query& q : queries) {
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDeviceGetAttribute, q.out, q.attribute, device),
                          "reading ", q.name);
  }
  return limits;
}

StatusOr<std::unique_ptr<Executable>> Executable::Create(Device& device,
                                                         const ExecutableParams& params) {
  return Create(device.cuda_api(), device.context(), device.info().device, params);
}

StatusOr<std::unique_ptr<Executable>> Executable::Create(const CudaApi* api, CUcontext context,
                                                         CUdevice device,
                                                         const ExecutableParams& params) {
  const ExecutableFormat format = DetectExecutableFormat(params.image);
  const std::string what = StrCat("loading executable ", params.name, " (",
                                  ExecutableFormatName(format), ", ", params.image.size(),
                                  " bytes)");
  if (params.image.empty()) return InvalidArgumentError(StrCat(what, ": the image is empty"));
  if (params.entry_points.empty()) {
    return InvalidArgumentError(StrCat(what, ": no entry points were named"));
  }
  std::set<std::string_view> names;
  for (const std::string& name : params.entry_points) {
    if (name.empty()) return InvalidArgumentError(StrCat(what, ": an entry point name is empty"));
    if (!names.insert(name).second) {
      return InvalidArgumentError(StrCat(what, ": entry point ", name, " is named twice"));
    }
  }
  CUHAL_ASSIGN_OR_RETURN(DeviceLaunchLimits limits, QueryDeviceLaunchLimits(api, device), what);

  // PTX is text the driver reads up to its NUL: hand it a terminated copy.
  std::vector<std::byte> terminated;
  const void* image = params.image.data();
  if (format == ExecutableFormat::kPtx && params.image.back() != std::byte{0}) {
    terminated.assign(params.image.begin(), params.image.end());
    terminated.push_back(std::byte{0});
    image = terminated.data();
  }

  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api, context), what,
                         ": making the device's context current");
  std::vector<char> error_log(kJitLogBytes, '\0');
  std::vector<char> info_log(kJitLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(std::uintptr_t{kJitLogBytes}),
                    info_log.data(), reinterpret_cast<void*>(std::uintptr_t{kJitLogBytes})};
  CUmodule raw = nullptr;
  Status loaded = CUHAL_CU(api, cuModuleLoadDataEx, &raw, image, 4, options, values);
  if (!loaded.ok()) {
    const std::string log = LogText(error_log);
    ReportDroppedStatus(scope.Exit());
    // The log goes after the driver's answer: "...: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX
    // (...); JIT error log: <log>".
    if (log.empty()) return std::move(loaded).AddContext(what);
    return Status(loaded.code(), StrCat(what, ": ", loaded.message(), "; JIT error log: ", log));
  }
  std::unique_ptr<Executable> executable(
      new Executable(params.name, format, context, ModuleHandle(api, raw)));
  executable->limits_ = limits;
  executable->info_log_ = LogText(info_log);

  auto describe = [&]() -> Status {
    for (std::size_t i = 0; i < params.entry_points.size(); ++i) {
      EntryPoint entry;
      entry.name = params.entry_points[i];
      entry.ordinal = static_cast<std::uint32_t>(i);
      const std::string entry_what = StrCat("entry point ", i, " (", entry.name, ")");
      CUHAL_RETURN_IF_ERROR(
          CUHAL_CU(api, cuModuleGetFunction, &entry.function, raw, entry.name.c_str()),
          entry_what);
      EntryPointAttributes& a = entry.attributes;
      const struct {
        CUfunction_attribute attribute;
        const char* name;
        int* out;
      } reads[] = {
          {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
           &a.max_threads_per_block},
          {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES",
           &a.static_shared_bytes},
          {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
           "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", &a.max_dynamic_shared_bytes},
          {CU_FUNC_ATTRIBUTE_NUM_REGS, "CU_FUNC_ATTRIBUTE_NUM_REGS", &a.registers},
          {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES",
           &a.local_bytes},
          {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES",
           &a.const_bytes},
          {CU_FUNC_ATTRIBUTE_PTX_VERSION, "CU_FUNC_ATTRIBUTE_PTX_VERSION", &a.ptx_version},
          {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "CU_FUNC_ATTRIBUTE_BINARY_VERSION",
           &a.binary_version},
      };
      for (const auto& r : reads) {
        CUHAL_RETURN_IF_ERROR(ReadAttribute(api, entry.function, r.attribute, r.name, r.out),
                              entry_what);
      }
      executable->entry_points_.push_back(std::move(entry));
    }
    return OkStatus();
  };
  Status described = describe();
  if (!described.ok()) {
    // Unload before restoring the context (the module is the context's).
    ReportDroppedStatus(executable->module_.Reset().AddContext(StrCat(what, ": unloading the module")));
    ReportDroppedStatus(scope.Exit());
    return std::move(described).AddContext(what);
  }
  CUHAL_RETURN_IF_ERROR(scope.Exit(), what);
  return executable;
}

StatusOr<const EntryPoint*> Executable::entry_point(std::uint32_t ordinal) const {
  if (ordinal >= entry_points_.size()) {
    return OutOfRangeError(StrCat("executable ", name_, ": entry point ordinal ", ordinal,
                                  " is out of range (", entry_points_.size(), " entry points)"));
  }
  return &entry_points_[ordinal];
}

StatusOr<const EntryPoint*> Executable::LookupEntryPoint(std::string_view name) const {
  for (const EntryPoint& entry : entry_points_) {
    if (entry.name == name) return &entry;
  }
  return NotFoundError(StrCat("executable ", name_, " has no entry point named ", name));
}

Status Executable::ValidateDispatch(std::uint32_t ordinal, const DispatchConfig& config) const {
  CUHAL_ASSIGN_OR_RETURN(const EntryPoint* entry, entry_point(ordinal));
  const std::string what =
      StrCat("dispatch of ", name_, " entry point ", ordinal, " (", entry->name, ")");
  std::uint64_t threads = 1;
  for (int axis = 0; axis < 3; ++axis) {
    const std::uint32_t groups = config.workgroups[axis];
    if (groups == 0 || groups > static_cast<std::uint32_t>(limits_.max_grid_dim[axis])) {
      return InvalidArgumentError(StrCat(what, ": workgroup count ", kAxis[axis], " = ", groups,
                                         " is outside [1, ", limits_.max_grid_dim[axis],
                                         "] (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_",
                                         axis == 0 ? "X" : axis == 1 ? "Y" : "Z", ")"));
    }
    const std::uint32_t dim = config.block[axis];
    if (dim == 0 || dim > static_cast<std::uint32_t>(limits_.max_block_dim[axis])) {
      return InvalidArgumentError(StrCat(what, ": block dimension ", kAxis[axis], " = ", dim,
                                         " is outside [1, ", limits_.max_block_dim[axis],
                                         "] (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_",
                                         axis == 0 ? "X" : axis == 1 ? "Y" : "Z", ")"));
    }
    threads *= dim;
  }
  if (threads > static_cast<std::uint64_t>(entry->attributes.max_threads_per_block)) {
    return InvalidArgumentError(StrCat(what, ": ", threads,
                                       " threads per block exceed the entry point's maximum of ",
                                       entry->attributes.max_threads_per_block,
                                       " (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)"));
  }
  if (config.dynamic_shared_bytes >
      static_cast<std::uint32_t>(entry->attributes.max_dynamic_shared_bytes)) {
    return InvalidArgumentError(StrCat(what, ": ", config.dynamic_shared_bytes,
                                       " bytes of dynamic shared memory exceed the entry point's "
                                       "maximum of ",
                                       entry->attributes.max_dynamic_shared_bytes,
                                       " (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)"));
  }
  const std::uint64_t shared = std::uint64_t{config.dynamic_shared_bytes} +
                               static_cast<std::uint64_t>(entry->attributes.static_shared_bytes);
  if (shared > static_cast<std::uint64_t>(limits_.max_shared_per_block_optin)) {
    return InvalidArgumentError(StrCat(what, ": ", shared, " bytes of shared memory (",
                                       entry->attributes.static_shared_bytes, " static + ",
                                       config.dynamic_shared_bytes,
                                       " dynamic) exceed the device's maximum of ",
                                       limits_.max_shared_per_block_optin,
                                       " (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)"));
  }
  return OkStatus();
}

StatusOr<std::shared_ptr<const Executable>> ExecutableCache::GetOrLoad(
    const ExecutableParams& params) {
  // The key: the entry point list, then the image bytes (exact content, not a hash).
  std::string key;
  for (const std::string& name : params.entry_points) {
    key += name;
    key.push_back('\0');
  }
  key.push_back('\n');
  key.append(reinterpret_cast<const char*>(params.image.data()), params.image.size());
  MutexLock lock(mu_);
  auto it = executables_.find(key);
  if (it != executables_.end()) {
    ++hits_;
    return it->second;
  }
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Executable> loaded, Executable::Create(device_, params),
                         "executable cache of ", device_.identifier());
  std::shared_ptr<const Executable> shared(std::move(loaded));
  executables_.emplace(std::move(key), shared);
  ++loads_;
  return shared;
}

ExecutableCache::Statistics ExecutableCache::statistics() const {
  MutexLock lock(mu_);
  return Statistics{loads_, hits_, executables_.size()};
}

void ExecutableCache::Clear() {
  std::map<std::string, std::shared_ptr<const Executable>> dropped;
  {
    MutexLock lock(mu_);
    dropped.swap(executables_);
  }
}

}  // namespace cuhal
