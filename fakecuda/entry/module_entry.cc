// Copyright 2026 The cuhal Authors.
// Entry points: modules, functions and kernel launches. The model is
// fakecuda/internal/module_model.h; images are read by fakecuda/internal/module_image.h; kernel
// implementations come from fakecuda/kernel_registry.h.
#include <algorithm>
#include <cstring>
#include <string>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/race/race_detector.h"
#include "fakecuda/internal/module_model.h"

using fakecuda::Context;
using fakecuda::DriverState;
using fakecuda::FunctionState;
using fakecuda::HandleKind;
using fakecuda::ModuleModel;
using fakecuda::ModuleState;

namespace fakecuda {
namespace {

int ComputeCapability(const DeviceProfile& p) {
  return p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
         p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

// Allocates and initializes a module variable as device memory of `ctx`.
CUresult AllocateGlobal(DriverState* st, Context* ctx, const GlobalInfo& g, GlobalVar* out)
    CUHAL_REQUIRES(st->mu) {
  Device& d = st->device(ctx->device);
  if (g.size > d.profile.total_memory - std::min(d.bytes_in_use, d.profile.total_memory)) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  Allocation a;
  a.data = MemoryMap::AllocateBacking(g.size, &a.mmapped, &a.mapped_size);
  if (a.data == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  if (!a.mmapped) std::memset(a.data, 0, g.size);  // mappings start zeroed
  if (!g.init.empty()) std::memcpy(a.data, g.init.data(), std::min(g.init.size(), g.size));
  a.id = st->NewId();
  a.type = MemoryType::kDevice;
  a.base = st->ReserveVa(ctx->device, g.size);
  a.size = g.size;
  a.device = ctx->device;
  a.ctx_id = ctx->id;
  a.module_global = true;
  a.created_by = "cuModuleLoadData: global " + g.name;
  out->address = a.base;
  out->size = g.size;
  out->allocation_id = a.id;
  st->AddDeviceAllocation(std::move(a));
  return CUDA_SUCCESS;
}

// Loads `image` into the current context: the common part of cuModuleLoadData(Ex).
CUresult LoadModule(DriverState* st, Context* ctx, const void* image, CUmodule* module,
                    std::string* log) CUHAL_REQUIRES(st->mu) {
  ModuleImage parsed;
  if (CUresult e = ParseModuleImage(image, &parsed, log); e != CUDA_SUCCESS) return e;
  const DeviceProfile& profile = st->device(ctx->device).profile;
  int cc = ComputeCapability(profile);
  if (parsed.format == ImageFormat::kPtx) {
    if (parsed.ptx_version > MaxPtxVersion(st->options.driver_version)) {
      *log = "PTX ISA version " + std::to_string(parsed.ptx_version / 10) + "." +
             std::to_string(parsed.ptx_version % 10) + " is newer than this driver supports";
      return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    }
    if (cc > 0 && parsed.target_sm > cc) {
      *log = "ptxas fatal: SM version specified by .target (sm_" +
             std::to_string(parsed.target_sm) + ") is higher than the device's (sm_" +
             std::to_string(cc) + ")";
      return CUDA_ERROR_INVALID_PTX;
    }
  }
  if (CUresult e = CheckKernelsRunnable(parsed, log); e != CUDA_SUCCESS) return e;
  ModuleModel& m = Modules(st);
  ModuleState mod;
  mod.id = st->NewId();
  mod.ctx_id = ctx->id;
  mod.device = ctx->device;
  for (const GlobalInfo& g : parsed.globals) {
    GlobalVar var;
    if (CUresult e = AllocateGlobal(st, ctx, g, &var); e != CUDA_SUCCESS) {
      for (const auto& [name, done] : mod.globals) {
        st->ReleaseAllocation(done.address);
      }
      return e;
    }
    mod.globals.emplace(g.name, var);
  }
  for (KernelInfo& k : parsed.kernels) {
    FunctionState f;
    f.id = st->NewId();
    f.module_id = mod.id;
    f.ctx_id = ctx->id;
    f.device = ctx->device;
    // The virtual architecture the PTX targets (".target sm_80" -> 80), as for cubins.
    f.ptx_version = parsed.format == ImageFormat::kPtx ? parsed.target_sm : cc;
    f.binary_version = cc;
    f.max_dynamic_shared = DefaultMaxDynamicShared(profile, k);
    f.program = parsed.program;
    f.ptx_function = parsed.program != nullptr ? parsed.program->FindFunction(k.name) : -1;
    f.kernel = std::move(k);
    mod.functions.emplace(f.kernel.name, f.id);
    m.functions.emplace(f.id, std::move(f));
  }
  *module = EncodeHandle<CUmodule>(HandleKind::kModule, mod.id);
  m.modules.emplace(mod.id, std::move(mod));
  return CUDA_SUCCESS;
}

// Writes `text` into a JIT log buffer option pair, as the driver does: NUL-terminated,
// truncated to the buffer, and the size option overwritten with the bytes written.
void WriteLog(const std::string& text, void** buffer_slot, void** size_slot) {
  if (buffer_slot == nullptr || size_slot == nullptr || *buffer_slot == nullptr) return;
  auto capacity = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(*size_slot));
  if (capacity == 0) return;
  std::size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(*buffer_slot, text.data(), n);
  static_cast<char*>(*buffer_slot)[n] = '\0';
  *size_slot = reinterpret_cast<void*>(static_cast<std::uintptr_t>(n + 1));
}

}  // namespace
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
  if (it == mod->functions.end()) return CUDA_ERROR_NOT_FOUND;
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
  const fakecuda::DeviceProfile& p = st->device(f->device).profile;
  switch (fakecuda::EnumBits(attrib)) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = fakecuda::FunctionMaxThreads(p, f->kernel); break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = f->kernel.static_shared_bytes; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = f->kernel.const_bytes; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = f->kernel.local_bytes; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *pi = f->kernel.num_regs > 0 ? f->kernel.num_regs : fakecuda::kDefaultRegisters;
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = f->ptx_version; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = f->binary_version; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = f->max_dynamic_shared; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = f->carveout; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *pi = f->cluster_dims[0]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *pi = f->cluster_dims[1]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *pi = f->cluster_dims[2]; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *pi = f->non_portable_cluster; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *pi = f->cluster_policy; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncGetAttribute");
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) try {
  FAKECUDA_ENTER(cuFuncSetAttribute)
  FunctionState* f = fakecuda::Modules(st).FindFunction(hfunc);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const fakecuda::DeviceProfile& p = st->device(f->device).profile;
  int attribute = fakecuda::EnumBits(attrib);
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (value < 0 || value > fakecuda::OptInMaxDynamicShared(p, f->kernel)) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      f->max_dynamic_shared = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
      f->carveout = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      if (value < 0) return CUDA_ERROR_INVALID_VALUE;
      f->cluster_dims[attribute - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      // Measured: any value is accepted; non-zero reads back as 1.
      f->non_portable_cluster = value != 0 ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      if (value < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT ||
          value > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      f->cluster_policy = value;
      return CUDA_SUCCESS;
    default:
      // Read-only (MAX_THREADS_PER_BLOCK, NUM_REGS, ...) or unknown.
      return CUDA_ERROR_INVALID_VALUE;
  }
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncSetAttribute");
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void** kernelParams, void** extra) try {
  FAKECUDA_ENTER(cuLaunchKernel)
  FunctionState* fn = fakecuda::Modules(st).FindFunction(f);
  if (fn == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  CUresult err;
  fakecuda::Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  const fakecuda::Context* stream_ctx = st->contexts().Find(s->ctx_id);
  if (stream_ctx == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (stream_ctx->sticky != CUDA_SUCCESS) return stream_ctx->sticky;
  // A module's functions run in the context the module was loaded into.
  if (s->ctx_id != fn->ctx_id) return CUDA_ERROR_INVALID_HANDLE;
  fakecuda::LaunchConfig config{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ},
                                sharedMemBytes};
  if (CUresult e = fakecuda::ValidateLaunch(st, *fn, config); e != CUDA_SUCCESS) return e;
  std::vector<std::byte> params;
  if (CUresult e = fakecuda::PackParams(fn->kernel, kernelParams, extra, &params);
      e != CUDA_SUCCESS) {
    return e;
  }
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureKernel(st, s, *fn, config, &params, &r)) return r;
  fakecuda::Op op;
  if (CUresult e = fakecuda::MakeKernelOp(st, *fn, config, std::move(params), "cuLaunchKernel", &op);
      e != CUDA_SUCCESS) {
    return e;
  }
  st->Enqueue(s, std::move(op));
  return fakecuda::TakeRaceVerdict();
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunchKernel");
}

}  // extern "C"
