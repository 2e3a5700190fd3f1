// Copyright 2026 The cuhal Authors.
// How fakenccl reaches fakecuda: every call fakenccl makes into fakecuda goes through this table.
//
// In the static library (cuhal::fakenccl) the table holds fakecuda's functions directly
// (fakecuda_hooks.cc). In the drop-in libnccl.so.2 (dropin/) fakecuda lives in another library
// (the drop-in libcuda.so.1, or the executable when it links fakecuda statically and exports its
// symbols), so the table is resolved by name with dlsym when first needed (dropin/hooks.cc); when
// they cannot be found, Hooks() is null, with the reason in HooksUnavailableReason(), and the
// entry points that need fakecuda fail with ncclUnhandledCudaError saying so.
#ifndef CUHAL_FAKENCCL_INTERNAL_FAKECUDA_HOOKS_H_
#define CUHAL_FAKENCCL_INTERNAL_FAKECUDA_HOOKS_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "fakecuda/stream_work.h"
#include "fakecuda/virtual_clock.h"

namespace fakenccl::internal {

// The CUDA driver API functions fakenccl calls where NCCL calls the runtime (ncclMemAlloc and
// ncclMemFree, the copy of a one-rank collective): the installed fake driver's entry points, so
// that fakenccl's memory is the fake driver's and its errors are the driver's. Names as cuda.h
// spells them (its macros give the versioned symbols, cuMemGetAddressRange_v2...).
#define FAKENCCL_DRIVER_FUNCTIONS(X)                                                          \
  X(cuInit) X(cuGetErrorString) X(cuCtxGetCurrent) X(cuCtxGetDevice) X(cuDeviceGet)           \
  X(cuDeviceGetCount) X(cuDeviceGetAttribute) X(cuDeviceCanAccessPeer)                        \
  X(cuMemGetAllocationGranularity) X(cuMemCreate) X(cuMemAddressReserve) X(cuMemMap)          \
  X(cuMemSetAccess) X(cuMemUnmap) X(cuMemRelease) X(cuMemAddressFree)                         \
  X(cuMemRetainAllocationHandle) X(cuMemGetAddressRange) X(cuPointerGetAttribute)             \
  X(cuMemcpyAsync) X(cuMemAlloc) X(cuMemFree)

struct DriverFunctions {
#define FAKENCCL_DRIVER_POINTER(name) decltype(&::name) name = nullptr;
  FAKENCCL_DRIVER_FUNCTIONS(FAKENCCL_DRIVER_POINTER)
#undef FAKENCCL_DRIVER_POINTER
};

// fakecuda/stream_work.h and virtual_clock.h, plus what fakenccl reads of the installed driver's options.
struct FakecudaHooks {
  CUresult (*enqueue_stream_work)(CUstream, fakecuda::StreamWork) = nullptr;
  void (*notify_stream_work)() = nullptr;
  std::byte* (*translate_device_pointer)(CUdeviceptr, std::size_t, int*) = nullptr;
  // fakecuda/virtual_clock.h: one set of thread presences per process, fakecuda's.
  std::shared_ptr<fakecuda::IdleClock> (*new_idle_clock)(int, std::uint64_t) = nullptr;
  void (*enter_blocked)() noexcept = nullptr;
  void (*leave_blocked)() noexcept = nullptr;
  void (*enter_busy)() noexcept = nullptr;
  void (*leave_busy)() noexcept = nullptr;
  int (*stream_device)(CUstream) = nullptr;
  // The installed driver's device count, or -1 when none is installed.
  int (*device_count)() = nullptr;
  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR of a device of the installed driver, or 0.
  int (*compute_capability_major)(int device) = nullptr;
  DriverFunctions driver;
};

// The table, or null when fakecuda cannot be reached (the drop-in without fakecuda's symbols).
// Thread-safe; the table never changes once returned.
const FakecudaHooks* Hooks();
// Why Hooks() is null ("" when it is not).
const char* HooksUnavailableReason();

}  // namespace fakenccl::internal

#endif  // CUHAL_FAKENCCL_INTERNAL_FAKECUDA_HOOKS_H_
