// Copyright 2026 The cuhal Authors.
// The fake driver's libraries (CUlibrary) and their kernels (CUkernel): the context-independent
// loading API of CUDA 12+, which the CUDA runtime uses for fat binaries. Internal to fakecuda;
// the entry points are fakecuda/entry/library_entry.cc (and occupancy_entry.cc, which accepts a
// CUkernel where a CUfunction is expected).
//
// LibraryModel is owned by the DriverState (DriverState::libraries(), created on first use) and,
// like every subsystem, guarded by DriverState::mu: the functions below say
// CUHAL_REQUIRES(st->mu). A library is the parsed image and the kernels it names; it belongs to
// no context. Its load into a context is an ordinary module of the ModuleModel
// (ModuleState::library_id names the library), made on first need there: cuKernelGetFunction,
// cuLibraryGetModule, cuLibraryGetGlobal/GetManaged, or a launch of a CUkernel (cuLaunchKernel
// and the graph kernel node accept one in place of a CUfunction; the context is the stream's).
// Destroying a context unloads that module with the context's other modules
// (ModulesOnContextTeardown); the library notices (its map of modules is checked against the
// ModuleModel on every use) and loads again into a context that asks later. cuLibraryUnload
// first waits for the queued work of every context the library is loaded into (as
// cuModuleUnload does for its context), then unloads those modules and forgets the kernels.
// Stream ordering: none of this is stream-ordered; a queued launch owns copies of what it needs
// (module_model.h, invariant 4). Handles (CUlibrary, CUkernel) are never-reused ids with a kind
// tag, so stale and foreign handles are always detected.
#ifndef CUHAL_FAKECUDA_INTERNAL_LIBRARY_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_LIBRARY_MODEL_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/module_image.h"
#include "fakecuda/internal/module_model.h"

namespace fakecuda {

// What cuKernelSetAttribute / cuKernelSetCacheConfig set for one device: applied to the
// kernel's functions on that device, those that exist and those made later.
struct KernelDeviceSettings {
  std::map<int, int> attributes;  // CUfunction_attribute -> value
  int cache_config = -1;          // CUfunc_cache; -1: never set
};

struct KernelState {
  std::uint64_t id = 0;
  std::uint64_t library_id = 0;
  std::size_t index = 0;  // in the library image's kernels
  std::map<int, KernelDeviceSettings> settings;  // by device ordinal
};

struct LibraryState {
  std::uint64_t id = 0;
  std::shared_ptr<const ModuleImage> image;
  std::vector<std::uint64_t> kernels;  // kernel ids, in the image's order
  std::map<std::uint64_t, std::uint64_t> modules;  // context id -> module id (may be stale)
  // Managed variables: one per library, shared across contexts (as documented: "registered
  // when the library is loaded into at least one context"), released by cuLibraryUnload.
  ManagedVars managed;
  // Not CUDA_SUCCESS: the image did not parse or check, and the library (with no kernels) answers
  // this error when a kernel, module or global of it is asked for: the real driver loads
  // lazily and fails then (measured 2026-12-06, H100 driver 580.159.04; library_entry.cc).
  CUresult load_error = CUDA_SUCCESS;
  std::string loaded_by;                           // for the leak report
  // Loaded from a fat-binary wrapper (__fatBinC_Wrapper_t): the CUDA runtime's registration of
  // the program's kernels, which the runtime unloads at exit; the leak report names it as the
  // runtime's (Inventory::runtime_libraries).
  bool runtime_registered = false;
};

class LibraryModel {
 public:
  std::unordered_map<std::uint64_t, LibraryState> libraries;
  std::unordered_map<std::uint64_t, KernelState> kernels;

  LibraryState* FindLibrary(CUlibrary handle);
  KernelState* FindKernel(CUkernel handle);
  // The kernel's description in its library's image (the kernel must be live).
  const KernelInfo& Info(const KernelState& k) const;

  // The inventory and the leak report: live libraries (their managed variables are part of
  // them, not managed allocations of the user's).
  void CountLive(const DriverState& st, Inventory* inventory) const CUHAL_REQUIRES(st.mu);
  std::string Describe() const;
};

// The model of `st` (created on first use). Requires st->mu held.
LibraryModel& Libraries(DriverState* st) CUHAL_REQUIRES(st->mu);

// Creates a library of a parsed image; returns its handle.
CUlibrary AddLibrary(DriverState* st, ModuleImage image, std::string loaded_by)
    CUHAL_REQUIRES(st->mu);

// The library's module in `ctx`, loaded now if it is not yet (CUDA_ERROR_OUT_OF_MEMORY when its
// globals do not fit).
CUresult LibraryModuleIn(DriverState* st, LibraryState* lib, Context* ctx, ModuleState** out)
    CUHAL_REQUIRES(st->mu);

// The function of `kernel` in `ctx` (its library loaded there if needed).
CUresult KernelFunctionIn(DriverState* st, const KernelState& kernel, Context* ctx,
                          FunctionState** out) CUHAL_REQUIRES(st->mu);

// The function `kernel` has, or would have, on `device`: the image's description, the device's
// defaults and the kernel's settings for that device (what cuKernelGetAttribute reports). Not
// in any table; its id is 0.
FunctionState KernelView(DriverState* st, const KernelState& kernel, int device)
    CUHAL_REQUIRES(st->mu);

// Records a cuKernelSetAttribute / cuKernelSetCacheConfig (attribute -1: the cache config) for
// `device` and applies it to the kernel's existing functions on that device, except to those
// that had the attribute set through cuFuncSetAttribute: measured 2026-12-06, H100 driver
// 580.159.04 (ci/gpu-probes/library_probe.cc, case "setattr"), a function set to 4096 with
// cuFuncSetAttribute keeps 4096 after its kernel is set to 2048, while the kernel's function in
// another context follows the kernel.
void SetKernelSetting(DriverState* st, KernelState* kernel, int device, int attribute, int value)
    CUHAL_REQUIRES(st->mu);

// Resolves a CUfunction argument that may also be a CUkernel cast to CUfunction (what
// cuLaunchKernel and the occupancy queries accept): a function handle is looked up; a kernel
// handle gives the kernel's function in the context `ctx_id` (loaded if needed). Null with
// *error = CUDA_ERROR_INVALID_HANDLE for anything else (or when ctx_id names no live context).
FunctionState* ResolveFunction(DriverState* st, CUfunction handle, std::uint64_t ctx_id,
                               CUresult* error) CUHAL_REQUIRES(st->mu);

// The function of a kernel node's parameters (CUDA_KERNEL_NODE_PARAMS): `func` (a function; a
// kernel cast to one is CUDA_ERROR_INVALID_HANDLE, as measured), else `kern` in `ctx` (null:
// the current context). CUDA_ERROR_INVALID_HANDLE when neither names a live object; the errors of
// CurrentContextOrError when a context is needed and there is none.
CUresult ResolveNodeFunction(DriverState* st, CUfunction func, CUkernel kern, CUcontext ctx,
                             FunctionState** out) CUHAL_REQUIRES(st->mu);

// Whether `handle` is a live CUkernel.
bool IsLiveKernel(DriverState* st, CUfunction handle) CUHAL_REQUIRES(st->mu);

// Unloads a library: waits for the work of the contexts it is loaded into, unloads its modules,
// forgets it and its kernels.
void UnloadLibrary(DriverState* st, std::uint64_t library_id) CUHAL_REQUIRES(st->mu);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_LIBRARY_MODEL_H_
