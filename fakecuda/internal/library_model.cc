// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/library_model.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "fakecuda/entry/entry.h"

namespace fakecuda {

LibraryState* LibraryModel::FindLibrary(CUlibrary handle) {
  auto it = libraries.find(DecodeHandle(HandleKind::kLibrary, handle));
  return it == libraries.end() ? nullptr : &it->second;
}

KernelState* LibraryModel::FindKernel(CUkernel handle) {
  auto it = kernels.find(DecodeHandle(HandleKind::kKernel, handle));
  return it == kernels.end() ? nullptr : &it->second;
}

const KernelInfo& LibraryModel::Info(const KernelState& k) const {
  return libraries.at(k.library_id).image->kernels[k.index];
}

void LibraryModel::CountLive(const DriverState& st, Inventory* inventory) const {
  for (const auto& [id, lib] : libraries) {
    ++(lib.runtime_registered ? inventory->runtime_libraries : inventory->libraries);
    for (const auto& [name, g] : lib.managed) {
      const Allocation* a = st.memory().At(g.address);
      if (a != nullptr && a->id == g.allocation_id) --inventory->managed_allocations;
    }
  }
}

std::string LibraryModel::Describe() const {
  std::vector<std::uint64_t> ids;
  for (const auto& [id, lib] : libraries) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  std::ostringstream os;
  for (std::uint64_t id : ids) {
    const LibraryState& lib = libraries.at(id);
    os << "library " << id << " (" << lib.kernels.size() << " kernel(s), "
       << lib.image->globals.size() << " global(s); " << lib.loaded_by << ")"
       << (lib.runtime_registered ? " held by the CUDA runtime, not the program (its registration "
                                    "of the program's fat binary; not a leak)"
                                  : "")
       << "\n";
  }
  return os.str();
}

LibraryModel& Libraries(DriverState* st) { return st->libraries(); }

CUlibrary AddLibrary(DriverState* st, ModuleImage image, std::string loaded_by) {
  LibraryModel& m = Libraries(st);
  LibraryState lib;
  lib.id = st->NewId();
  lib.loaded_by = std::move(loaded_by);
  for (std::size_t i = 0; i < image.kernels.size(); ++i) {
    KernelState k;
    k.id = st->NewId();
    k.library_id = lib.id;
    k.index = i;
    lib.kernels.push_back(k.id);
    m.kernels.emplace(k.id, std::move(k));
  }
  lib.image = std::make_shared<const ModuleImage>(std::move(image));
  CUlibrary handle = EncodeHandle<CUlibrary>(HandleKind::kLibrary, lib.id);
  m.libraries.emplace(lib.id, std::move(lib));
  return handle;
}

namespace {

// Applies a kernel's settings for the function's device to the function.
void ApplySettings(DriverState* st, const KernelState& k, FunctionState* f)
    CUHAL_REQUIRES(st->mu) {
  auto it = k.settings.find(f->device);
  if (it == k.settings.end()) return;
  const DeviceProfile& p = st->device(f->device).profile;
  for (const auto& [attribute, value] : it->second.attributes) {
    (void)SetFunctionAttribute(p, f, attribute, value);
  }
  if (it->second.cache_config >= 0) f->cache_config = it->second.cache_config;
}

}  // namespace

CUresult LibraryModuleIn(DriverState* st, LibraryState* lib, Context* ctx, ModuleState** out) {
  ModuleModel& mods = Modules(st);
  if (auto it = lib->modules.find(ctx->id); it != lib->modules.end()) {
    if (auto m = mods.modules.find(it->second); m != mods.modules.end()) {
      *out = &m->second;
      return CUDA_SUCCESS;
    }
    lib->modules.erase(it);  // unloaded with its context, or by cuModuleUnload
  }
  std::uint64_t module_id = 0;
  if (CUresult e = InstantiateModule(st, ctx, *lib->image, lib->id, &module_id, &lib->managed);
      e != CUDA_SUCCESS) {
    return e;
  }
  ModuleState& mod = mods.modules.at(module_id);
  LibraryModel& m = Libraries(st);
  for (std::uint64_t kid : lib->kernels) {
    const KernelState& k = m.kernels.at(kid);
    auto f = mod.functions.find(lib->image->kernels[k.index].name);
    if (f == mod.functions.end()) continue;
    FunctionState& fs = mods.functions.at(f->second);
    fs.kernel_id = kid;
    ApplySettings(st, k, &fs);
  }
  lib->modules[ctx->id] = module_id;
  *out = &mod;
  return CUDA_SUCCESS;
}

CUresult KernelFunctionIn(DriverState* st, const KernelState& kernel, Context* ctx,
                          FunctionState** out) {
  LibraryModel& m = Libraries(st);
  LibraryState& lib = m.libraries.at(kernel.library_id);
  ModuleState* mod = nullptr;
  if (CUresult e = LibraryModuleIn(st, &lib, ctx, &mod); e != CUDA_SUCCESS) return e;
  auto f = mod->functions.find(lib.image->kernels[kernel.index].name);
  if (f == mod->functions.end()) return CUDA_ERROR_NOT_FOUND;
  *out = &Modules(st).functions.at(f->second);
  return CUDA_SUCCESS;
}

FunctionState KernelView(DriverState* st, const KernelState& kernel, int device) {
  const LibraryModel& m = Libraries(st);
  const LibraryState& lib = m.libraries.at(kernel.library_id);
  const DeviceProfile& p = st->device(device).profile;
  int cc = p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
           p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  FunctionState f;
  f.kernel_id = kernel.id;
  f.device = device;
  f.kernel = lib.image->kernels[kernel.index];
  // As InstantiateModule sets them.
  f.ptx_version = lib.image->format == ImageFormat::kPtx ? lib.image->target_sm : cc;
  f.binary_version = cc;
  f.max_dynamic_shared = DefaultMaxDynamicShared(p, f.kernel);
  ApplySettings(st, kernel, &f);
  return f;
}

void SetKernelSetting(DriverState* st, KernelState* kernel, int device, int attribute,
                      int value) {
  KernelDeviceSettings& s = kernel->settings[device];
  if (attribute < 0) {
    s.cache_config = value;
  } else {
    s.attributes[attribute] = value;
  }
  for (auto& [id, f] : Modules(st).functions) {
    if (f.kernel_id != kernel->id || f.device != device) continue;
    if (attribute < 0) {
      f.cache_config = value;
    } else if (attribute >= 32 || (f.set_on_function & (std::uint32_t{1} << attribute)) == 0) {
      (void)SetFunctionAttribute(st->device(device).profile, &f, attribute, value);
    }
  }
}

bool IsLiveKernel(DriverState* st, CUfunction handle) {
  if (st->libraries_if_used() == nullptr) return false;
  return Libraries(st).FindKernel(reinterpret_cast<CUkernel>(handle)) != nullptr;
}

FunctionState* ResolveFunction(DriverState* st, CUfunction handle, std::uint64_t ctx_id,
                               CUresult* error) {
  *error = CUDA_ERROR_INVALID_HANDLE;
  if (FunctionState* f = Modules(st).FindFunction(handle); f != nullptr) return f;
  if (st->libraries_if_used() == nullptr) return nullptr;
  KernelState* k = Libraries(st).FindKernel(reinterpret_cast<CUkernel>(handle));
  if (k == nullptr) return nullptr;
  Context* ctx = st->contexts().Find(ctx_id);
  if (ctx == nullptr) return nullptr;
  FunctionState* f = nullptr;
  if (CUresult e = KernelFunctionIn(st, *k, ctx, &f); e != CUDA_SUCCESS) {
    *error = e;
    return nullptr;
  }
  return f;
}

CUresult ResolveNodeFunction(DriverState* st, CUfunction func, CUkernel kern, CUcontext ctx,
                             FunctionState** out) {
  if (func != nullptr) {
    // Measured 2026-12-06, H100 driver 580.159.04 (ci/gpu-probes/library_probe.cc, case
    // "launch"): unlike cuLaunchKernel, a kernel node does not take a CUkernel cast into `func`
    // (CUDA_ERROR_INVALID_HANDLE); the kernel goes in `kern`.
    if (FunctionState* f = Modules(st).FindFunction(func); f != nullptr) {
      *out = f;
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (kern == nullptr || st->libraries_if_used() == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  KernelState* k = Libraries(st).FindKernel(kern);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  Context* c = nullptr;
  if (ctx != nullptr) {
    c = st->FindContext(ctx);
    if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  } else if (CUresult e = CurrentContextOrError(st, &c); e != CUDA_SUCCESS) {
    return e;
  }
  return KernelFunctionIn(st, *k, c, out);
}

void UnloadLibrary(DriverState* st, std::uint64_t library_id) {
  LibraryModel& m = Libraries(st);
  auto it = m.libraries.find(library_id);
  if (it == m.libraries.end()) return;
  std::vector<std::uint64_t> contexts;
  for (const auto& [ctx_id, module_id] : it->second.modules) contexts.push_back(ctx_id);
  // The work queued in those contexts may run the library's kernels: let it finish first (the
  // scheduler releases the lock meanwhile, so look everything up again after).
  for (std::uint64_t ctx_id : contexts) {
    if (st->contexts().IsLive(ctx_id)) (void)st->SyncAll(ctx_id);
  }
  LibraryModel& after = Libraries(st);
  it = after.libraries.find(library_id);
  if (it == after.libraries.end()) return;  // unloaded meanwhile by another thread
  for (const auto& [ctx_id, module_id] : it->second.modules) {
    auto mod = Modules(st).modules.find(module_id);
    if (mod != Modules(st).modules.end() && mod->second.library_id == library_id) {
      UnloadModule(st, module_id);
    }
  }
  for (const auto& [name, g] : it->second.managed) {
    const Allocation* a = st->memory().At(g.address);
    if (a != nullptr && a->id == g.allocation_id) st->ReleaseAllocation(g.address);
  }
  for (std::uint64_t kid : it->second.kernels) after.kernels.erase(kid);
  after.libraries.erase(it);
}

}  // namespace fakecuda
