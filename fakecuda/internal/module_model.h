// Copyright 2026 The cuhal Authors.
// The fake driver's modules, functions and kernel launches. Internal to fakecuda; the entry points
// are fakecuda/entry/module_entry.cc (and graph_entry.cc for kernel nodes). Graphs are
// fakecuda/internal/graph_model.h.
//
// Invariants:
//  1. Everything here is guarded by DriverState::mu and is owned by the DriverState
//     (DriverState::modules(), created on first use; Modules() below).  The functions below say
//     CUHAL_REQUIRES(st->mu); the ModuleModel's maps are reached only through them.
//  2. Handles (CUmodule, CUfunction) encode never-reused ids
//     with a kind tag, as every fake handle does: stale handles are always detected.
//  3. A module belongs to the context current when it was loaded; destroying that context
//     unloads it (ModulesOnContextTeardown), freeing its global variables, whose memory is
//     ordinary device allocations tagged as module globals.
//  4. A queued kernel launch owns copies of everything it needs (parameter bytes, the
//     implementation), so unloading a module or destroying a graph while work is queued is safe.
#ifndef CUHAL_FAKECUDA_INTERNAL_MODULE_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_MODULE_MODEL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/module_image.h"
#include "fakecuda/kernel_registry.h"

namespace fakecuda {

struct FunctionState {
  std::uint64_t id = 0;
  std::uint64_t module_id = 0;
  std::uint64_t kernel_id = 0;  // the library kernel (CUkernel) it is the function of; 0: none
  std::uint64_t ctx_id = 0;
  int device = 0;
  KernelInfo kernel;
  // The interpreter's program of the module and this kernel's function in it (-1: none, as for
  // FAKECUDA-MODULE images); used when no host implementation is registered.
  std::shared_ptr<const ptx::Program> program;
  int ptx_function = -1;
  int ptx_version = 0;
  int binary_version = 0;
  // Settable attributes (cuFuncSetAttribute).
  int max_dynamic_shared = 0;
  int carveout = -1;
  int cluster_dims[3] = {0, 0, 0};
  int non_portable_cluster = 0;
  int cluster_policy = 0;
  int cache_config = CU_FUNC_CACHE_PREFER_NONE;  // cuFuncSetCacheConfig / cuKernelSetCacheConfig
  // Bit a: attribute a was set through cuFuncSetAttribute; a library kernel's later
  // cuKernelSetAttribute of it no longer reaches this function (measured; library_model.h).
  std::uint32_t set_on_function = 0;
  // The deprecated execution control (fakecuda/entry/legacy_entry.cc): the block shape of
  // cuFuncSetBlockShape (x 0: never set), cuFuncSetSharedSize's bytes, the bytes cuParamSet[ifv]
  // wrote and cuParamSetSize's size, which cuLaunch and cuLaunchGrid launch with.
  unsigned legacy_block[3] = {0, 0, 0};
  unsigned legacy_shared = 0;
  std::vector<std::byte> legacy_params;
  unsigned legacy_param_size = 0;
};

struct GlobalVar {
  CUdeviceptr address = 0;
  std::size_t size = 0;
  std::uint64_t allocation_id = 0;  // the Allocation backing it (until the module unloads)
  // A library's managed variable: one for the library, shared by its modules in every context,
  // released by cuLibraryUnload, not by the module (fakecuda/internal/library_model.h).
  bool library_owned = false;
};

// A library's managed variables by name (shared by its loads into contexts).
using ManagedVars = std::map<std::string, GlobalVar, std::less<>>;

struct ModuleState {
  std::uint64_t id = 0;
  // The library (fakecuda/internal/library_model.h) this is the load of into one context; 0: a
  // module of cuModuleLoadData. A library's modules are not the user's: the inventory counts the
  // library instead.
  std::uint64_t library_id = 0;
  std::uint64_t ctx_id = 0;
  int device = 0;
  std::map<std::string, std::uint64_t, std::less<>> functions;  // name -> function id
  std::map<std::string, GlobalVar, std::less<>> globals;
  std::vector<std::string> texrefs;   // `.texref` names (cuModuleGetTexRef)
  std::vector<std::string> surfrefs;  // `.surfref` names (cuModuleGetSurfRef)
};

// A kernel launch configuration.
struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  unsigned shared_mem_bytes = 0;
};

class ModuleModel {
 public:
  std::unordered_map<std::uint64_t, ModuleState> modules;
  std::unordered_map<std::uint64_t, FunctionState> functions;

  ModuleState* FindModule(CUmodule handle);
  FunctionState* FindFunction(CUfunction handle);
};

// The bits of an enum value the user passed, as an int: switching on the int instead of the enum
// keeps an out-of-range value (which callers may pass) from being loaded as the enum type.
template <typename E>
int EnumBits(const E& value) {
  static_assert(sizeof(E) == sizeof(int));
  int out = 0;
  std::memcpy(&out, &value, sizeof(out));
  return out;
}

// The model of `st` (created on first use). Requires st->mu held.
ModuleModel& Modules(DriverState* st) CUHAL_REQUIRES(st->mu);

// --- loading (require st->mu held) ---

// The checks of a parsed image against the device that loads it: a fat binary's images
// (CheckFatbinForDevice), the PTX ISA version the driver JIT-compiles
// (CUDA_ERROR_UNSUPPORTED_PTX_VERSION) and a .target above the device's
// (CUDA_ERROR_INVALID_PTX), with the reason in *log.
// Whether a fat binary has an image for a device of compute capability `cc` (major * 10 +
// minor): its PTX (the oldest, which the fake runs) for `cc` or an older architecture, as the
// real driver JIT-compiles it. Else CUDA_ERROR_NO_BINARY_FOR_GPU, as the real driver answers when
// no image fits (the runtime's cudaErrorNoKernelImageForDevice), unless a cubin fits the device
// (same major version, minor not above the device's; an arch-specific one, sm_90a, on its own
// architecture only): the real driver would run that machine code, fakecuda cannot, and it
// answers CUDA_ERROR_NOT_SUPPORTED with the reason in *log, also printed on stderr (as
// CheckKernelsRunnable does for PTX it cannot run; docs/cudart_on_the_fake.md, known
// differences). CUDA_SUCCESS for an image that is not a fat binary; with cc 0 (unknown), a fat
// binary's PTX is taken to fit and its cubins not.
CUresult CheckFatbinForDevice(const FatbinContents& fatbin, int cc, std::string* log);
CUresult CheckImageForDevice(const DriverState* st, int device, const ModuleImage& image,
                             std::string* log) CUHAL_REQUIRES(st->mu);
// Creates a module of `image` (already checked) in `ctx`: allocates and initializes its globals
// (managed ones as managed memory), creates its functions; *module_id is the new module's id.
// A library's load passes its `managed` variables: those already there are shared, not
// allocated again, and new ones are added to it (owned by no context). CUDA_ERROR_OUT_OF_MEMORY
// when the globals do not fit (nothing is left behind then).
CUresult InstantiateModule(DriverState* st, Context* ctx, const ModuleImage& image,
                           std::uint64_t library_id, std::uint64_t* module_id,
                           ManagedVars* managed = nullptr) CUHAL_REQUIRES(st->mu);

// Writes `text` into a JIT log buffer option pair, as the driver does: NUL-terminated,
// truncated to the buffer, and the size option overwritten with the bytes written.
void WriteLog(const std::string& text, void** buffer_slot, void** size_slot);

// --- function attributes ---

// cuFuncGetAttribute of `f` (a device of profile `p`); CUDA_ERROR_INVALID_VALUE for an unknown
// attribute.
CUresult GetFunctionAttribute(const DeviceProfile& p, const FunctionState& f, int attribute,
                              int* out);
// cuFuncSetAttribute: the settable attributes and their ranges; CUDA_ERROR_INVALID_VALUE for a
// read-only or unknown attribute or a value out of range (nothing changes then).
CUresult SetFunctionAttribute(const DeviceProfile& p, FunctionState* f, int attribute, int value);

// --- launches (require st->mu held) ---

// The largest block a launch of `k` may use on a device of profile `p` (registers and
// .maxntid/.reqntid considered): CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK.
int FunctionMaxThreads(const DeviceProfile& p, const KernelInfo& k);
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES by default, and the most it may be set to.
int DefaultMaxDynamicShared(const DeviceProfile& p, const KernelInfo& k);
int OptInMaxDynamicShared(const DeviceProfile& p, const KernelInfo& k);

// Checks a launch configuration against the device profile and the function: the errors
// cuLaunchKernel returns synchronously.
CUresult ValidateLaunch(const DriverState* st, const FunctionState& f, const LaunchConfig& c)
    CUHAL_REQUIRES(st->mu);
// Packs the parameters given as `kernelParams` or `extra` into the kernel's parameter buffer.
CUresult PackParams(const KernelInfo& k, void** kernel_params, void** extra,
                    std::vector<std::byte>* out);
// Whether every kernel of a PTX image can run: each needs a registered host implementation (of
// its own or kAnyKernel) or a body the interpreter supports. Otherwise CUDA_ERROR_NOT_SUPPORTED
// with *log naming the kernel, the instruction and its line (also printed on stderr): the PTX is
// valid (the real JIT would accept it), the fake cannot run it, and a wrong result at run time
// would be worse than a refusal at load.
CUresult CheckKernelsRunnable(const ModuleImage& image, std::string* log);
// Builds the op that runs kernel `f`: its registered host implementation, else the PTX
// interpreter (CUDA_ERROR_NOT_SUPPORTED: neither).
CUresult MakeKernelOp(DriverState* st, const FunctionState& f, const LaunchConfig& c,
                      std::vector<std::byte> params, const char* what, Op* op)
    CUHAL_REQUIRES(st->mu);

// --- hooks called by DriverState (require st->mu held) ---

// Unloads the modules of a context being destroyed (its work has drained).
void ModulesOnContextTeardown(DriverState* st, std::uint64_t ctx_id) CUHAL_REQUIRES(st->mu);
// Adds modules to the inventory (and takes module globals out of the device allocations, which
// they are not from the user's point of view).
void ModulesCountLive(const DriverState& st, Inventory* inventory) CUHAL_REQUIRES(st.mu);
// Leak report lines for live modules.
std::string ModulesDescribe(const DriverState& st) CUHAL_REQUIRES(st.mu);

// Releases a module's globals and forgets it and its functions.
void UnloadModule(DriverState* st, std::uint64_t module_id) CUHAL_REQUIRES(st->mu);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_MODULE_MODEL_H_
