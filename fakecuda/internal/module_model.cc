// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/module_model.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "fakecuda/internal/mem_pool.h"
#include "fakecuda/ptx/interpreter.h"

namespace fakecuda {
namespace {

// A profile attribute, or the H200's value when the profile does not have it (a profile
// captured from a real GPU always does).
int Limit(const DeviceProfile& p, CUdevice_attribute attribute, int h200_value) {
  int v = p.Attribute(attribute);
  return v > 0 ? v : h200_value;
}

const ModuleModel* ModelOf(const DriverState& st) CUHAL_REQUIRES(st.mu) {
  return st.modules_if_used();
}

int ComputeCapability(const DeviceProfile& p) {
  return p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
         p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

// Allocates and initializes a module variable as device memory of `ctx` (a library's managed
// variable: of no context).
CUresult AllocateGlobal(DriverState* st, Context* ctx, const GlobalInfo& g, bool library_owned,
                        GlobalVar* out) CUHAL_REQUIRES(st->mu) {
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
  // A managed variable is managed memory: its address is usable on the host, as
  // cuMemAllocManaged's (memory_entry.cc).
  a.type = g.managed ? MemoryType::kManaged : MemoryType::kDevice;
  a.base = g.managed ? reinterpret_cast<std::uintptr_t>(a.data) : st->ReserveVa(ctx->device, g.size);
  a.size = g.size;
  a.device = ctx->device;
  a.ctx_id = library_owned ? 0 : ctx->id;
  a.module_global = true;
  a.created_by = (library_owned ? "cuLibraryLoadData: managed " : "cuModuleLoadData: global ") +
                 g.name;
  out->address = a.base;
  out->size = g.size;
  out->allocation_id = a.id;
  out->library_owned = library_owned;
  if (g.managed) {
    st->memory().Add(std::move(a));
  } else {
    st->AddDeviceAllocation(std::move(a));
  }
  return CUDA_SUCCESS;
}

}  // namespace

ModuleState* ModuleModel::FindModule(CUmodule handle) {
  auto it = modules.find(DecodeHandle(HandleKind::kModule, handle));
  return it == modules.end() ? nullptr : &it->second;
}

FunctionState* ModuleModel::FindFunction(CUfunction handle) {
  auto it = functions.find(DecodeHandle(HandleKind::kFunction, handle));
  return it == functions.end() ? nullptr : &it->second;
}

ModuleModel& Modules(DriverState* st) { return st->modules(); }

int FunctionMaxThreads(const DeviceProfile& p, const KernelInfo& k) {
  int max_threads = Limit(p, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024);
  if (k.max_threads > 0) max_threads = std::min(max_threads, k.max_threads);
  int regs = k.num_regs > 0 ? k.num_regs : kDefaultRegisters;
  int warp = Limit(p, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32);
  int by_registers = Limit(p, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536) / regs / warp * warp;
  if (by_registers > 0) max_threads = std::min(max_threads, by_registers);
  return max_threads;
}

int DefaultMaxDynamicShared(const DeviceProfile& p, const KernelInfo& k) {
  return std::max(0, Limit(p, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152) -
                         k.static_shared_bytes);
}

int OptInMaxDynamicShared(const DeviceProfile& p, const KernelInfo& k) {
  return std::max(0, Limit(p, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448) -
                         k.static_shared_bytes);
}

CUresult ValidateLaunch(const DriverState* st, const FunctionState& f, const LaunchConfig& c) {
  const DeviceProfile& p = st->device(f.device).profile;
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0 || c.block.x == 0 || c.block.y == 0 ||
      c.block.z == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (c.block.x > static_cast<unsigned>(Limit(p, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024)) ||
      c.block.y > static_cast<unsigned>(Limit(p, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024)) ||
      c.block.z > static_cast<unsigned>(Limit(p, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (c.grid.x > static_cast<unsigned>(Limit(p, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647)) ||
      c.grid.y > static_cast<unsigned>(Limit(p, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535)) ||
      c.grid.z > static_cast<unsigned>(Limit(p, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::uint64_t threads = c.block.Count();
  if (threads > static_cast<std::uint64_t>(Limit(p, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const auto& req = f.kernel.reqntid;
  if (req[0] != 0 && (c.block.x != req[0] || c.block.y != req[1] || c.block.z != req[2])) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Measured: a block over the kernel's .maxntid is INVALID_VALUE. Over a register-count limit
  // (which a fake kernel only has with `regs=`), the real driver's documented answer.
  if (f.kernel.max_threads > 0 && threads > static_cast<std::uint64_t>(f.kernel.max_threads)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (threads > static_cast<std::uint64_t>(FunctionMaxThreads(p, f.kernel))) {
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  }
  if (c.shared_mem_bytes > static_cast<unsigned>(f.max_dynamic_shared)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (f.cluster_dims[0] > 0) {
    if (c.grid.x % static_cast<unsigned>(f.cluster_dims[0]) != 0 ||
        c.grid.y % static_cast<unsigned>(std::max(f.cluster_dims[1], 1)) != 0 ||
        c.grid.z % static_cast<unsigned>(std::max(f.cluster_dims[2], 1)) != 0) {
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
  }
  return CUDA_SUCCESS;
}

CUresult PackParams(const KernelInfo& k, void** kernel_params, void** extra,
                    std::vector<std::byte>* out) {
  if (kernel_params != nullptr && extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  out->assign(k.param_bytes, std::byte{0});
  if (extra != nullptr) {
    const void* buffer = nullptr;
    const std::size_t* size = nullptr;
    // The list ends with CU_LAUNCH_PARAM_END (NULL); a bound keeps a missing end from running
    // through memory forever.
    for (std::size_t i = 0;; i += 2) {
      if (i >= 64) return CUDA_ERROR_INVALID_VALUE;
      void* key = extra[i];
      if (key == CU_LAUNCH_PARAM_END) break;
      if (key == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        buffer = extra[i + 1];
      } else if (key == CU_LAUNCH_PARAM_BUFFER_SIZE) {
        size = static_cast<const std::size_t*>(extra[i + 1]);
      } else {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    if (buffer == nullptr || size == nullptr) {
      // A buffer without its size "has no effect": the kernel's parameters are then missing.
      return k.params.empty() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    // Measured (H200, 580.159.04), kernel of 12 parameter bytes (u64, u32): buffers of 16, 17 and
    // 64 bytes are LAUNCH_OUT_OF_RESOURCES ("too many arguments"); 8 and 12 bytes launch.
    if (*size > k.param_bytes) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    std::memcpy(out->data(), buffer, std::min(*size, k.param_bytes));
    return CUDA_SUCCESS;
  }
  if (k.params.empty()) return CUDA_SUCCESS;
  if (kernel_params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (kernel_params[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(out->data() + k.params[i].offset, kernel_params[i], k.params[i].size);
  }
  return CUDA_SUCCESS;
}

CUresult CheckFatbinForDevice(const FatbinContents& fatbin, int cc, std::string* log) {
  if (!fatbin.present) return CUDA_SUCCESS;
  if (fatbin.has_ptx && (cc <= 0 || fatbin.ptx_sm <= cc)) return CUDA_SUCCESS;  // what it runs
  std::string cubins;
  bool cubin_fits = false;
  for (const FatbinContents::Cubin& c : fatbin.cubins) {
    cubins += (cubins.empty() ? "" : ", ") + std::string("sm_") + std::to_string(c.sm) +
              (c.arch_specific ? "a" : "");
    // A cubin runs on its major version's later minors; an arch-specific one on its own only.
    cubin_fits |= cc > 0 && c.sm / 10 == cc / 10 && c.sm <= cc &&
                  (!c.arch_specific || c.sm == cc);
  }
  const std::string device = "sm_" + std::to_string(cc);
  if (cubin_fits) {
    *log = "fakecuda: the fat binary has machine code that fits " + device + " (cubins: " +
           cubins + ") and no PTX for it: the real driver would run the cubin, fakecuda runs "
           "only PTX (rebuild with PTX, e.g. nvcc -arch=" + device + ", or add -gencode "
           "arch=compute_" +
           std::to_string(cc) + ",code=compute_" + std::to_string(cc) + ")";
    std::fprintf(stderr, "%s\n", log->c_str());
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  *log = "no image in the fat binary fits " + device + ": " +
         (cubins.empty() ? std::string("no cubins") : "cubins for " + cubins) + ", " +
         (fatbin.has_ptx ? "PTX for sm_" + std::to_string(fatbin.ptx_sm) + " and later"
                         : std::string("no PTX"));
  return CUDA_ERROR_NO_BINARY_FOR_GPU;
}

CUresult CheckImageForDevice(const DriverState* st, int device, const ModuleImage& parsed,
                             std::string* log) {
  const DeviceProfile& profile = st->device(device).profile;
  int cc = ComputeCapability(profile);
  if (CUresult e = CheckFatbinForDevice(parsed.fatbin, cc, log); e != CUDA_SUCCESS) return e;
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
  return CUDA_SUCCESS;
}

CUresult InstantiateModule(DriverState* st, Context* ctx, const ModuleImage& parsed,
                           std::uint64_t library_id, std::uint64_t* module_id,
                           ManagedVars* managed) {
  const DeviceProfile& profile = st->device(ctx->device).profile;
  int cc = ComputeCapability(profile);
  ModuleModel& m = Modules(st);
  ModuleState mod;
  mod.id = st->NewId();
  mod.library_id = library_id;
  mod.ctx_id = ctx->id;
  mod.device = ctx->device;
  mod.texrefs = parsed.texrefs;
  mod.surfrefs = parsed.surfrefs;
  for (const GlobalInfo& g : parsed.globals) {
    GlobalVar var;
    bool shared = g.managed && managed != nullptr;
    if (auto it = shared ? managed->find(g.name) : ManagedVars::iterator();
        shared && it != managed->end()) {
      var = it->second;
    } else if (CUresult e = AllocateGlobal(st, ctx, g, shared, &var); e != CUDA_SUCCESS) {
      for (const auto& [name, done] : mod.globals) {
        if (!done.library_owned) st->ReleaseAllocation(done.address);
      }
      return e;
    } else if (shared) {
      managed->emplace(g.name, var);
    }
    mod.globals.emplace(g.name, var);
  }
  for (const KernelInfo& k : parsed.kernels) {
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
    f.kernel = k;
    mod.functions.emplace(f.kernel.name, f.id);
    m.functions.emplace(f.id, std::move(f));
  }
  *module_id = mod.id;
  m.modules.emplace(mod.id, std::move(mod));
  return CUDA_SUCCESS;
}

void WriteLog(const std::string& text, void** buffer_slot, void** size_slot) {
  if (buffer_slot == nullptr || size_slot == nullptr || *buffer_slot == nullptr) return;
  auto capacity = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(*size_slot));
  if (capacity == 0) return;
  std::size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(*buffer_slot, text.data(), n);
  static_cast<char*>(*buffer_slot)[n] = '\0';
  *size_slot = reinterpret_cast<void*>(static_cast<std::uintptr_t>(n + 1));
}

CUresult GetFunctionAttribute(const DeviceProfile& p, const FunctionState& f, int attribute,
                              int* out) {
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *out = FunctionMaxThreads(p, f.kernel); break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *out = f.kernel.static_shared_bytes; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *out = f.kernel.const_bytes; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *out = f.kernel.local_bytes; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *out = f.kernel.num_regs > 0 ? f.kernel.num_regs : kDefaultRegisters;
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *out = f.ptx_version; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *out = f.binary_version; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *out = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *out = f.max_dynamic_shared; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *out = f.carveout; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *out = 0; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *out = f.cluster_dims[0]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *out = f.cluster_dims[1]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *out = f.cluster_dims[2]; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *out = f.non_portable_cluster; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *out = f.cluster_policy; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult SetFunctionAttribute(const DeviceProfile& p, FunctionState* f, int attribute, int value) {
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (value < 0 || value > OptInMaxDynamicShared(p, f->kernel)) {
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
}

CUresult CheckKernelsRunnable(const ModuleImage& image, std::string* log) {
  if (image.format != ImageFormat::kPtx) return CUDA_SUCCESS;
  for (const KernelInfo& k : image.kernels) {
    if (IsKernelRegistered(k.name) || IsKernelRegistered(kAnyKernel)) continue;
    std::string why;
    if (image.program == nullptr) {
      why = image.program_error;
    } else if (int index = image.program->FindFunction(k.name); index < 0) {
      why = "no body";
    } else {
      why = image.program->KernelError(index);
    }
    if (why.empty()) continue;
    *log = "fakecuda: kernel " + k.name + " cannot run on the fake (no host implementation is "
           "registered and the PTX interpreter does not support it): " + why;
    std::fprintf(stderr, "%s\n", log->c_str());
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_SUCCESS;
}

namespace {

// The op body that interprets kernel `f`'s PTX.
CUresult MakeInterpretedOp(DriverState* st, const FunctionState& f, const LaunchConfig& c,
                           std::vector<std::byte> params, const char* what, Op* op)
    CUHAL_REQUIRES(st->mu) {
  if (f.program == nullptr || f.ptx_function < 0 ||
      !f.program->KernelError(f.ptx_function).empty()) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  auto request = std::make_shared<ptx::LaunchRequest>();
  request->program = f.program.get();
  request->kernel = f.ptx_function;
  request->grid = {c.grid.x, c.grid.y, c.grid.z};
  request->block = {c.block.x, c.block.y, c.block.z};
  request->dynamic_shared = c.shared_mem_bytes;
  ModuleModel& m = Modules(st);
  if (auto mod = m.modules.find(f.module_id); mod != m.modules.end()) {
    for (const std::string& name : f.program->globals) {
      auto g = mod->second.globals.find(name);
      request->global_addresses.push_back(g == mod->second.globals.end() ? 0 : g->second.address);
    }
  }
  // Runs inside the op body, on the kernel lane, with the driver lock released.
  request->resolver = [st](std::uint64_t address, ptx::Region* out) {
    cuhal::MutexLock lock(st->mu);
    Allocation* a = st->FindAllocation(static_cast<std::uintptr_t>(address), 1);
    if (a != nullptr && a->data != nullptr) {
      *out = ptx::Region{a->base, a->size, a->data};
      return true;
    }
    // Pool memory freed with cuMemFreeAsync after this launch was queued (the free takes the
    // allocation out of the map at once) is still mapped by its pool, as on the GPU.
    MappedPoolRun run;
    if (!PoolsMappedRun(*st, static_cast<std::uintptr_t>(address), &run)) return false;
    *out = ptx::Region{run.base, run.size, run.data};
    return true;
  };
  op->what = what;
  op->kind = OpKind::kKernel;
  op->cost_us = KernelOptions{}.cost_us;
  std::shared_ptr<const ptx::Program> program = f.program;  // kept alive by the queued op
  auto bytes = std::make_shared<std::vector<std::byte>>(std::move(params));
  op->body = [program, request, bytes]() -> CUresult {
    request->params = bytes->data();
    request->param_size = bytes->size();
    ptx::LaunchResult r = ptx::RunKernel(*request);
    if (r.code != 0) std::fprintf(stderr, "fakecuda: %s\n", r.message.c_str());
    return static_cast<CUresult>(r.code);
  };
  return CUDA_SUCCESS;
}

}  // namespace

CUresult MakeKernelOp(DriverState* st, const FunctionState& f, const LaunchConfig& c,
                      std::vector<std::byte> params, const char* what, Op* op) {
  std::shared_ptr<const internal::KernelRegistration> reg = internal::FindKernel(f.kernel.name);
  if (st->race() != nullptr) {
    // The race detector's view of the launch: every 8-byte parameter that points into an
    // allocation reads and writes all of it, unless the registration declares better.
    for (std::size_t i = 0; i < f.kernel.params.size(); ++i) {
      const KernelParamInfo& p = f.kernel.params[i];
      if (p.size != sizeof(std::uint64_t) || p.offset + p.size > params.size()) continue;
      ParamAccess declared = ParamAccess::kUnknown;
      if (reg != nullptr && i < reg->options.param_access.size()) {
        declared = reg->options.param_access[i];
      }
      if (declared == ParamAccess::kNone) continue;
      std::uint64_t value = 0;
      std::memcpy(&value, params.data() + p.offset, sizeof(value));
      const Allocation* a = st->FindAllocation(static_cast<std::uintptr_t>(value), 1);
      if (a == nullptr) continue;
      op->accesses.push_back({a->base, a->size, declared != ParamAccess::kRead});
    }
  }
  if (reg == nullptr) return MakeInterpretedOp(st, f, c, std::move(params), what, op);
  std::vector<std::pair<std::size_t, std::size_t>> offsets;
  offsets.reserve(f.kernel.params.size());
  for (const KernelParamInfo& p : f.kernel.params) offsets.emplace_back(p.offset, p.size);
  auto launch = std::make_shared<const KernelLaunch>(st, f.kernel.name, c.grid, c.block,
                                                     c.shared_mem_bytes, f.device,
                                                     std::move(params), std::move(offsets));
  op->what = what;
  op->kind = OpKind::kKernel;
  op->cost_us = reg->options.cost_us;
  op->body = [reg, launch] { return reg->fn(*launch); };
  return CUDA_SUCCESS;
}

void UnloadModule(DriverState* st, std::uint64_t module_id) {
  ModuleModel& m = Modules(st);
  auto it = m.modules.find(module_id);
  if (it == m.modules.end()) return;
  for (const auto& [name, g] : it->second.globals) {
    if (g.library_owned) continue;  // the library's (cuLibraryUnload releases it)
    const Allocation* a = st->memory().At(g.address);
    if (a != nullptr && a->id == g.allocation_id) st->ReleaseAllocation(g.address);
  }
  for (const auto& [name, fid] : it->second.functions) m.functions.erase(fid);
  m.modules.erase(it);
}

void ModulesOnContextTeardown(DriverState* st, std::uint64_t ctx_id) {
  if (st->modules_if_used() == nullptr) return;
  ModuleModel& m = Modules(st);
  std::vector<std::uint64_t> doomed;
  for (const auto& [id, mod] : m.modules) {
    if (mod.ctx_id == ctx_id) doomed.push_back(id);
  }
  for (std::uint64_t id : doomed) UnloadModule(st, id);
}

void ModulesCountLive(const DriverState& st, Inventory* inventory) {
  const ModuleModel* m = ModelOf(st);
  if (m == nullptr) return;
  for (const auto& [id, mod] : m->modules) {
    if (mod.library_id == 0) ++inventory->modules;
    for (const auto& [name, g] : mod.globals) {
      if (g.library_owned) continue;  // counted once, by the library model
      const Allocation* a = st.memory().At(g.address);
      if (a != nullptr && a->id == g.allocation_id) {
        --(a->type == MemoryType::kManaged ? inventory->managed_allocations
                                           : inventory->device_allocations);
      }
    }
  }
}

std::string ModulesDescribe(const DriverState& st) {
  const ModuleModel* m = ModelOf(st);
  if (m == nullptr) return "";
  std::ostringstream os;
  std::vector<std::uint64_t> ids;
  for (const auto& [id, mod] : m->modules) {
    if (mod.library_id == 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  for (std::uint64_t id : ids) {
    const ModuleState& mod = m->modules.at(id);
    os << "module " << id << " in context " << mod.ctx_id << " (" << mod.functions.size()
       << " kernel(s), " << mod.globals.size() << " global(s); cuModuleLoadData)\n";
  }
  return os.str();
}

}  // namespace fakecuda
