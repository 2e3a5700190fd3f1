// Copyright 2026 The cuhal Authors.
// What fakecuda/entry/module_entry.cc lends the older launch and load entry points of
// fakecuda/entry/legacy_entry.cc and link_entry.cc (cuLaunch, cuLaunchGrid[Async],
// cuLaunchCooperativeKernelMultiDevice, cuLinkComplete): the launch path of cuLaunchKernel and
// the module load of cuModuleLoadData.
#ifndef CUHAL_FAKECUDA_ENTRY_LEGACY_LAUNCH_H_
#define CUHAL_FAKECUDA_ENTRY_LEGACY_LAUNCH_H_

#include <cuda.h>

#include <string>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/module_model.h"

namespace fakecuda {

// cuLaunchKernel's checks and launch of `f` (a function, or a library kernel cast to one) with
// parameters as `kernelParams` or `extra`; `cooperative`: the grid must be co-resident, as
// cuLaunchCooperativeKernel's.
CUresult LaunchFunction(DriverState* st, CUfunction f, const LaunchConfig& config,
                        CUstream hStream, void** kernelParams, void** extra, const char* entry,
                        bool cooperative) CUHAL_REQUIRES(st->mu);

// cuModuleLoadData's load of `image` into the current context `ctx`, with the reason of a
// failure in *log.
CUresult LoadModuleImage(DriverState* st, Context* ctx, const void* image, CUmodule* module,
                         std::string* log) CUHAL_REQUIRES(st->mu);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_ENTRY_LEGACY_LAUNCH_H_
