// Copyright 2026 The cuhal Authors.
// Entry points: modules, functions and kernel launches. The model is
// fakecuda/internal/module_model.h; images are read by fakecuda/internal/module_image.h; kernel
// implementations come from fakecuda/kernel_registry.h.
#include <algorithm>
#include <cstring>
#include <string>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/legacy_launch.h"
#include "fakecuda/race/race_detector.h"
#include "fakecuda/internal/library_model.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/occupancy.h"

using fakecuda::Context;
using fakecuda::DriverState;
using fakecuda::FunctionState;
using fakecuda::HandleKind;
using fakecuda::ModuleModel;
using fakecuda::ModuleState;

namespace fakecuda {
namespace {

// Loads `image` into the current context: the common part of cuModuleLoadData(Ex).
CUresult LoadModule(DriverState* st, Context* ctx, const void* image, CUmodule* module,
                    std::string* log) CUHAL_REQUIRES(st->mu) {
  ModuleImage parsed;
  if (CUresult e = ParseModuleImage(image, &parsed, log); e != CUDA_SUCCESS) return e;
  if (CUresult e = CheckImageForDevice(st, ctx->device, parsed, log); e != CUDA_SUCCESS) return e;
  if (CUresult e = CheckKernelsRunnable(parsed, log); e != CUDA_SUCCESS) return e;
  std::uint64_t id = 0;
  if (CUresult e = InstantiateModule(st, ctx, parsed, /*library_id=*/0, &id); e != CUDA_SUCCESS) {
    return e;
  }
  *module = EncodeHandle<CUmodule>(HandleKind::kModule, id);
  return CUDA_SUCCESS;
}

// A cooperative launch's grid must be co-resident. Documented for cuLaunchCooperativeKernel
// (and CU_LAUNCH_ATTRIBUTE_COOPERATIVE): more blocks than the device's SM count times the
// function's occupancy (cuOccupancyMaxActiveBlocksPerMultiprocessor) is
// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE; a device without COOPERATIVE_LAUNCH does not support
// it. The fake runs the grid as any other (grid-wide barriers are not modelled).
CUresult CheckCooperative(DriverState* st, const FunctionState& fn, const LaunchConfig& config)
    CUHAL_REQUIRES(st->mu) {
  const DeviceProfile& profile = st->device(fn.device).profile;
  if (profile.Attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) == 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  OccupancyInputs in = OccupancyInputsOf(profile, fn);
  int threads = static_cast<int>(config.block.Count());  // at most 1024: ValidateLaunch passed
  std::uint64_t resident =
      static_cast<std::uint64_t>(MaxActiveBlocks(in, threads, config.shared_mem_bytes)) *
      static_cast<std::uint64_t>(in.sm_count);
  return config.grid.Count() > resident ? CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE : CUDA_SUCCESS;
}

// What cuLaunchKernelEx's attributes ask of a launch beyond its configuration.
struct LaunchOptions {
  bool cooperative = false;         // the grid must be co-resident (CheckCooperative)
  unsigned cluster[3] = {0, 0, 0};  // CLUSTER_DIMENSION; x 0: none (CheckCluster)
};

// A cluster shape given at launch (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION). UNMEASURED for the
// launch itself; the answers are those measured for the cluster occupancy queries, which take
// the same configuration (fakecuda/entry/occupancy_entry.cc, H100 driver 580.159.04): a grid the
// cluster does not divide, or a cluster above the portable 8 blocks (16 with
// NON_PORTABLE_CLUSTER_SIZE_ALLOWED), is CUDA_ERROR_INVALID_CLUSTER_SIZE. The fake runs the
// blocks as any other grid (cluster special registers and distributed shared memory are not
// modelled).
CUresult CheckCluster(const FunctionState& fn, const LaunchConfig& config, const unsigned* dims) {
  const unsigned dx = dims[0], dy = std::max(dims[1], 1u), dz = std::max(dims[2], 1u);
  if (config.grid.x % dx != 0 || config.grid.y % dy != 0 || config.grid.z % dz != 0) {
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  std::uint64_t size = std::uint64_t{dx} * dy * dz;
  return size > (fn.non_portable_cluster != 0 ? 16u : 8u) ? CUDA_ERROR_INVALID_CLUSTER_SIZE
                                                          : CUDA_SUCCESS;
}

// cuLaunchKernel, cuLaunchKernelEx and cuLaunchCooperativeKernel: `f` is a function, or a
// library kernel cast to one: then the kernel's function in the stream's context
// (fakecuda/internal/library_model.h).
CUresult LaunchKernel(DriverState* st, CUfunction f, const LaunchConfig& config, CUstream hStream,
                      void** kernelParams, void** extra, const char* entry,
                      const LaunchOptions& options = {}) CUHAL_REQUIRES(st->mu) {
  if (Modules(st).FindFunction(f) == nullptr && !IsLiveKernel(st, f)) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  const Context* stream_ctx = st->contexts().Find(s->ctx_id);
  if (stream_ctx == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (stream_ctx->sticky != CUDA_SUCCESS) return stream_ctx->sticky;
  FunctionState* fn = ResolveFunction(st, f, s->ctx_id, &err);
  if (fn == nullptr) return err;
  // A module's functions run in the context the module was loaded into.
  if (s->ctx_id != fn->ctx_id) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult e = ValidateLaunch(st, *fn, config); e != CUDA_SUCCESS) return e;
  if (options.cooperative) {
    if (CUresult e = CheckCooperative(st, *fn, config); e != CUDA_SUCCESS) return e;
  }
  if (options.cluster[0] != 0) {
    if (CUresult e = CheckCluster(*fn, config, options.cluster); e != CUDA_SUCCESS) return e;
  }
  std::vector<std::byte> params;
  if (CUresult e = PackParams(fn->kernel, kernelParams, extra, &params); e != CUDA_SUCCESS) {
    return e;
  }
  if (CUresult r = CUDA_SUCCESS; CaptureKernel(st, s, *fn, config, &params, &r)) return r;
  Op op;
  if (CUresult e = MakeKernelOp(st, *fn, config, std::move(params), entry, &op);
      e != CUDA_SUCCESS) {
    return e;
  }
  st->Enqueue(s, std::move(op));
  return TakeRaceVerdict();
}

}  // namespace

CUresult LaunchFunction(DriverState* st, CUfunction f, const LaunchConfig& config,
                        CUstream hStream, void** kernelParams, void** extra, const char* entry,
                        bool cooperative) {
  LaunchOptions options;
  options.cooperative = cooperative;
  return LaunchKernel(st, f, config, hStream, kernelParams, extra, entry, options);
}

CUresult LoadModuleImage(DriverState* st, Context* ctx, const void* image, CUmodule* module,
                         std::string* log) {
  CUresult r = LoadModule(st, ctx, image, module, log);
  // As cuModuleLoadData: a load invalidates the captures that prohibit unsafe calls.
  if (r == CUDA_SUCCESS) (void)CaptureCheckUnsafe(st, false);
  return r;
}

}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) try {
  FAKECUDA_ENTER(cuModuleLoadData)
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  std::string log;
  CUresult r = fakecuda::LoadModule(st, ctx, image, module, &log);
  // Measured: a module load succeeds but invalidates the captures that prohibit unsafe calls.
  if (r == CUDA_SUCCESS) (void)fakecuda::CaptureCheckUnsafe(st, false);
  return r;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleLoadData");
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                    CUjit_option* options, void** optionValues) try {
  FAKECUDA_ENTER(cuModuleLoadDataEx)
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (numOptions > 0 && (options == nullptr || optionValues == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  void** info_buffer = nullptr;
  void** info_size = nullptr;
  void** error_buffer = nullptr;
  void** error_size = nullptr;
  for (unsigned i = 0; i < numOptions; ++i) {
    int option = fakecuda::EnumBits(options[i]);
    if (option < 0 || option >= CU_JIT_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
    switch (option) {
      case CU_JIT_INFO_LOG_BUFFER: info_buffer = &optionValues[i]; break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: info_size = &optionValues[i]; break;
      case CU_JIT_ERROR_LOG_BUFFER: error_buffer = &optionValues[i]; break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: error_size = &optionValues[i]; break;
      default: break;  // optimization levels, targets, caching: no effect on the fake
    }
  }
  FAKECUDA_REQUIRE_CONTEXT()
  std::string log;
  CUresult result = fakecuda::LoadModule(st, ctx, image, module, &log);
  if (result == CUDA_SUCCESS) (void)fakecuda::CaptureCheckUnsafe(st, false);  // as cuModuleLoadData
  // Output options: the logs and the (virtual) compile time.
  fakecuda::WriteLog(result == CUDA_SUCCESS ? std::string() : log, error_buffer, error_size);
  fakecuda::WriteLog(std::string(), info_buffer, info_size);
  for (unsigned i = 0; i < numOptions; ++i) {
    if (fakecuda::EnumBits(options[i]) == CU_JIT_WALL_TIME) {
      float ms = 0.0f;
      optionValues[i] = nullptr;
      std::memcpy(&optionValues[i], &ms, sizeof(ms));
    }
  }
  return result;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleLoadDataEx");
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) try {
  FAKECUDA_ENTER(cuModuleUnload)
  ModuleModel& m = fakecuda::Modules(st);
  ModuleState* mod = m.FindModule(hmod);
  if (mod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // Measured 2026-12-06, H100 driver 580.159.04 (library_probe, case "module"): a library's
  // module (cuLibraryGetModule) is not the caller's to unload: CUDA_ERROR_NOT_PERMITTED, and
  // the library keeps it (cuLibraryUnload unloads it).
  if (mod->library_id != 0) return CUDA_ERROR_NOT_PERMITTED;
  // Unloading waits for the context's queued work (which may use the module) to finish.
  std::uint64_t id = mod->id;
  (void)st->SyncAll(mod->ctx_id);
  if (m.modules.count(id) == 0) return CUDA_ERROR_INVALID_HANDLE;  // unloaded meanwhile
  fakecuda::UnloadModule(st, id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleUnload");
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) try {
  FAKECUDA_ENTER(cuModuleGetFunction)
  if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  ModuleState* mod = fakecuda::Modules(st).FindModule(hmod);
  if (mod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  auto it = mod->functions.find(std::string_view(name));
  if (it == mod->functions.end()) {
    // Measured (differential fuzzer, H100 driver 580.159.04, 2026-12-06, 71 calls): an unknown
    // name clears *hfunc.
    *hfunc = nullptr;
    return CUDA_ERROR_NOT_FOUND;
  }
  *hfunc = fakecuda::EncodeHandle<CUfunction>(HandleKind::kFunction, it->second);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleGetFunction");
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod,
                                   const char* name) try {
  FAKECUDA_ENTER(cuModuleGetGlobal)
  // Measured: asking for neither output is INVALID_VALUE.
  if (name == nullptr || (dptr == nullptr && bytes == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  ModuleState* mod = fakecuda::Modules(st).FindModule(hmod);
  if (mod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  auto it = mod->globals.find(std::string_view(name));
  if (it == mod->globals.end()) return CUDA_ERROR_NOT_FOUND;
  if (dptr != nullptr) *dptr = it->second.address;
  if (bytes != nullptr) *bytes = it->second.size;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleGetGlobal");
}

CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) try {
  FAKECUDA_ENTER(cuFuncGetAttribute)
  if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FunctionState* f = fakecuda::Modules(st).FindFunction(hfunc);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return fakecuda::GetFunctionAttribute(st->device(f->device).profile, *f,
                                       fakecuda::EnumBits(attrib), pi);
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncGetAttribute");
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) try {
  FAKECUDA_ENTER(cuFuncSetAttribute)
  FunctionState* f = fakecuda::Modules(st).FindFunction(hfunc);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  int attribute = fakecuda::EnumBits(attrib);
  CUresult r = fakecuda::SetFunctionAttribute(st->device(f->device).profile, f, attribute, value);
  if (r == CUDA_SUCCESS && attribute >= 0 && attribute < 32) {
    f->set_on_function |= std::uint32_t{1} << attribute;
  }
  return r;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncSetAttribute");
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void** kernelParams, void** extra) try {
  FAKECUDA_ENTER(cuLaunchKernel)
  fakecuda::LaunchConfig config{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ},
                                sharedMemBytes};
  return fakecuda::LaunchKernel(st, f, config, hStream, kernelParams, extra, "cuLaunchKernel");
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunchKernel");
}

// Measured 2026-12-06, H100 driver 580.159.04 (ci/gpu-probes/library_probe.cc, case "launch"):
// cuLaunchKernelEx with no launch attributes launches a function or a CUkernel cast to one as
// cuLaunchKernel does. Launch attributes: "ignore" (CU_LAUNCH_ATTRIBUTE_IGNORE) is skipped;
// PRIORITY is accepted and has no effect (the fake runs a stream's work in order, as it does for
// stream priorities); COOPERATIVE makes it a cooperative launch (CheckCooperative);
// CLUSTER_DIMENSION gives a cluster shape (CheckCluster). The others are not modelled:
// CUDA_ERROR_NOT_SUPPORTED.
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                  void** extra) try {
  FAKECUDA_ENTER(cuLaunchKernelEx)
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (config->numAttrs > 0 && config->attrs == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::LaunchOptions options;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttributeValue& value = config->attrs[i].value;
    switch (fakecuda::EnumBits(config->attrs[i].id)) {
      case CU_LAUNCH_ATTRIBUTE_IGNORE:
      case CU_LAUNCH_ATTRIBUTE_PRIORITY: break;
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: options.cooperative = value.cooperative != 0; break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        options.cluster[0] = value.clusterDim.x;
        options.cluster[1] = value.clusterDim.y;
        options.cluster[2] = value.clusterDim.z;
        break;
      default: return CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  fakecuda::LaunchConfig launch{{config->gridDimX, config->gridDimY, config->gridDimZ},
                                {config->blockDimX, config->blockDimY, config->blockDimZ},
                                config->sharedMemBytes};
  return fakecuda::LaunchKernel(st, f, launch, config->hStream, kernelParams, extra,
                                "cuLaunchKernelEx", options);
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunchKernelEx");
}

// cuLaunchKernel whose grid must be co-resident (CheckCooperative); the CUDA runtime's
// cudaLaunchCooperativeKernel comes here. Grid-wide barriers are not modelled.
CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void** kernelParams) try {
  FAKECUDA_ENTER(cuLaunchCooperativeKernel)
  fakecuda::LaunchConfig config{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ},
                                sharedMemBytes};
  fakecuda::LaunchOptions options;
  options.cooperative = true;
  return fakecuda::LaunchKernel(st, f, config, hStream, kernelParams, nullptr,
                                "cuLaunchCooperativeKernel", options);
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunchCooperativeKernel");
}

}  // extern "C"
