// Copyright 2026 The cuhal Authors.
// A tiny stand-in for libcuda.so.1, built as a shared library for the real loader's tests. It
// resolves entry points through cuGetProcAddress the way the driver does: every name has one or
// more variants, each introduced at some CUDA version, and a request at version V gets the newest
// variant introduced at or before V:
//   cuMemAlloc        v1 (32-bit, exported as "cuMemAlloc") at 2000, _v2 at 3020
//   cuMemAllocAsync, cuMemAllocFromPoolAsync  at 11020 (earlier requests:
//                     CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
//   cuGetErrorName    at 6000
//   cuGetProcAddress  legacy (4 parameters) at 11030, _v2 at 12000
// Every other entry of core/symbols/cuda_symbols.inc exists from 2000 as a correctly typed stub
// returning CUDA_ERROR_NOT_SUPPORTED; cuInit, cuDriverGetVersion and cuGetErrorName work.
//
// Build variants (compile definitions):
//   CUHAL_TESTCUDA_HAS_V2       exports cuGetProcAddress_v2 (a CUDA >= 12.0 driver);
//   CUHAL_TESTCUDA_HAS_LEGACY   exports the legacy cuGetProcAddress (CUDA 11.3 and newer);
//   CUHAL_TESTCUDA_DRIVER_VERSION  what cuDriverGetVersion reports after Reset.
// The control functions of fake_lib_control.h configure it at run time.
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tests/symbols/fake_lib_control.h"

#ifndef CUHAL_TESTCUDA_HAS_V2
#error "define CUHAL_TESTCUDA_HAS_V2 to 0 or 1"
#endif
#ifndef CUHAL_TESTCUDA_HAS_LEGACY
#error "define CUHAL_TESTCUDA_HAS_LEGACY to 0 or 1"
#endif
#ifndef CUHAL_TESTCUDA_DRIVER_VERSION
#error "define CUHAL_TESTCUDA_DRIVER_VERSION"
#endif

namespace {

// The marker cuMemAlloc's variants write, so that a test can tell which one it called.
constexpr CUdeviceptr kMemAllocV2Base = 0x7e5700000000ULL;
constexpr unsigned int kMemAllocV1Base = 0x7e570000U;

struct State {
  std::mutex mu;
  std::set<std::string> hidden;
  int driver_version = CUHAL_TESTCUDA_DRIVER_VERSION;
  int v2_calls = 0;
  int legacy_calls = 0;
  int min_version = 0;
  int max_version = 0;
  cuuint64_t flags = 0;
  int init_calls = 0;
};

State& GetState() {
  // A plain static (no leaked heap object): the tests dlclose these libraries, and LeakSanitizer
  // would report a heap object whose only pointer was unmapped with them.
  static State state;
  return state;
}

template <typename Fp>
void* AsVoid(Fp fn) {
  void* address = nullptr;
  std::memcpy(&address, &fn, sizeof(address));
  return address;
}

// A stub for any entry of the list, typed exactly like cuda.h's declaration.
template <typename F>
struct Stub;
template <typename... Args>
struct Stub<CUresult(Args...)> {
  static CUresult Call(Args...) { return CUDA_ERROR_NOT_SUPPORTED; }
};

struct Variant {
  std::string name;  // The plain name cuGetProcAddress is asked for.
  int introduced;    // The first CUDA version that has this variant.
  void* address;
};

std::vector<Variant> BuildVariants();

const std::vector<Variant>& Variants() {
  static const std::vector<Variant> variants = BuildVariants();
  return variants;
}

// What the driver's resolver does; `status` may be null (the legacy resolver has none).
[[maybe_unused]] CUresult Resolve(const char* symbol, void** pfn, int version,
                                  cuuint64_t flags, CUdriverProcAddressQueryResult* status,
                                  bool legacy) {
  {
    State& state = GetState();
    std::lock_guard<std::mutex> lock(state.mu);
    ++(legacy ? state.legacy_calls : state.v2_calls);
    state.min_version = state.min_version == 0 ? version : std::min(state.min_version, version);
    state.max_version = std::max(state.max_version, version);
    state.flags |= flags;
    if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pfn = nullptr;
    if (state.hidden.count(symbol) != 0) {
      if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      return CUDA_ERROR_NOT_FOUND;
    }
  }
  const Variant* best = nullptr;
  bool known = false;
  for (const Variant& v : Variants()) {
    if (v.name != symbol) continue;
    known = true;
    if (v.introduced <= version && (best == nullptr || v.introduced > best->introduced)) best = &v;
  }
  if (best == nullptr) {
    if (status != nullptr) {
      *status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = best->address;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace

// ---- Entry points with real behaviour (cuda.h's macros are in force here: cuMemAlloc means
// cuMemAlloc_v2, cuGetProcAddress means cuGetProcAddress_v2). ----
extern "C" {

CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  ++state.init_calls;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  *version = state.driver_version;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_SUPPORTED: *name = "CUDA_ERROR_NOT_SUPPORTED"; return CUDA_SUCCESS;
    default: *name = nullptr; return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  *dptr = kMemAllocV2Base + bytesize;
  return CUDA_SUCCESS;
}

#if CUHAL_TESTCUDA_HAS_V2
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
  return Resolve(symbol, pfn, cudaVersion, flags, symbolStatus, /*legacy=*/false);
}
#endif

// ---- Control functions (fake_lib_control.h). ----
void cuhal_testcuda_Reset(void) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  state.hidden.clear();
  state.driver_version = CUHAL_TESTCUDA_DRIVER_VERSION;
  state.v2_calls = state.legacy_calls = state.min_version = state.max_version = 0;
  state.flags = 0;
  state.init_calls = 0;
}

void cuhal_testcuda_Hide(const char* name) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  state.hidden.insert(name);
}

void cuhal_testcuda_SetDriverVersion(int version) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  state.driver_version = version;
}

#define CUHAL_TESTCUDA_GETTER(type, fn, field) \
  type fn(void) {                              \
    State& state = GetState();                 \
    std::lock_guard<std::mutex> lock(state.mu); \
    return static_cast<type>(state.field);     \
  }
CUHAL_TESTCUDA_GETTER(int, cuhal_testcuda_V2Calls, v2_calls)
CUHAL_TESTCUDA_GETTER(int, cuhal_testcuda_LegacyCalls, legacy_calls)
CUHAL_TESTCUDA_GETTER(int, cuhal_testcuda_MinRequestedVersion, min_version)
CUHAL_TESTCUDA_GETTER(int, cuhal_testcuda_MaxRequestedVersion, max_version)
CUHAL_TESTCUDA_GETTER(unsigned long long, cuhal_testcuda_RequestedFlags, flags)  // NOLINT
CUHAL_TESTCUDA_GETTER(int, cuhal_testcuda_InitCalls, init_calls)
#undef CUHAL_TESTCUDA_GETTER

}  // extern "C"

namespace {

// Every entry of the list as a stub from 2000 (the list's macros see cuda.h's versioned names,
// so `decltype(::name)` is the current ABI, exactly as in CudaApi).
void AddStubs(std::vector<Variant>& out) {
#define CUHAL_CU_PFN(kind, name, arity) \
  out.push_back({#name, 2000, AsVoid(&Stub<decltype(::name)>::Call)});
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
}

}  // namespace

// ---- Entry points under their old, unversioned names. From here on cuda.h's macros are
// removed so that these names mean the old symbols. ----
#undef cuMemAlloc
#undef cuGetProcAddress

extern "C" {

// CUDA 3.1's cuMemAlloc: 32-bit device pointers.
CUresult cuMemAlloc(unsigned int* dptr, unsigned int bytesize) {
  if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  *dptr = kMemAllocV1Base + bytesize;
  return CUDA_SUCCESS;
}

// Entries whose newest variant has a different signature from the one cuda.h declares under the
// plain name (as the real driver 580 does at 13000): the plain forms succeed, the _v2 forms say
// CUDA_ERROR_NOT_SUPPORTED, so a test can tell which one the table holds.
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }
CUresult cuCtxSynchronize_v2(CUcontext) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuCtxGetDevice(CUdevice* device) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice_v2(CUdevice*, CUcontext) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuStreamGetCtx(CUstream, CUcontext* ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ctx = nullptr;
  return CUDA_SUCCESS;
}
CUresult cuStreamGetCtx_v2(CUstream, CUcontext*, CUgreenCtx*) { return CUDA_ERROR_NOT_SUPPORTED; }

#if CUHAL_TESTCUDA_HAS_LEGACY
// CUDA 11.3-11.8's cuGetProcAddress: no symbolStatus.
CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  return Resolve(symbol, pfn, cudaVersion, flags, nullptr, /*legacy=*/true);
}
#endif

}  // extern "C"

namespace {

std::vector<Variant> BuildVariants() {
  std::vector<Variant> out = {
      {"cuInit", 2000, AsVoid(&cuInit)},
      {"cuDriverGetVersion", 2020, AsVoid(&cuDriverGetVersion)},
      {"cuGetErrorName", 6000, AsVoid(&cuGetErrorName)},
      {"cuMemAlloc", 2000, AsVoid(&cuMemAlloc)},
      {"cuMemAlloc", 3020, AsVoid(&cuMemAlloc_v2)},
      {"cuMemAllocAsync", 11020, AsVoid(&Stub<decltype(::cuMemAllocAsync)>::Call)},
      {"cuMemAllocFromPoolAsync", 11020,
       AsVoid(&Stub<decltype(::cuMemAllocFromPoolAsync)>::Call)},
      {"cuCtxSynchronize", 2000, AsVoid(&cuCtxSynchronize)},
      {"cuCtxSynchronize", 13000, AsVoid(&cuCtxSynchronize_v2)},
      {"cuCtxGetDevice", 2000, AsVoid(&cuCtxGetDevice)},
      {"cuCtxGetDevice", 13000, AsVoid(&cuCtxGetDevice_v2)},
      {"cuStreamGetCtx", 9020, AsVoid(&cuStreamGetCtx)},
      {"cuStreamGetCtx", 12050, AsVoid(&cuStreamGetCtx_v2)},
#if CUHAL_TESTCUDA_HAS_LEGACY
      {"cuGetProcAddress", 11030, AsVoid(&cuGetProcAddress)},
#endif
#if CUHAL_TESTCUDA_HAS_V2
      {"cuGetProcAddress", 12000, AsVoid(&cuGetProcAddress_v2)},
#endif
  };
  std::vector<Variant> stubs;
  AddStubs(stubs);
  for (Variant& stub : stubs) {
    const bool modelled = std::any_of(out.begin(), out.end(),
                                      [&](const Variant& v) { return v.name == stub.name; });
    // cuGetProcAddress is only what the variant exports (a stub would make every driver
    // look like it has the _v2 resolver).
    if (!modelled && stub.name != "cuGetProcAddress") out.push_back(std::move(stub));
  }
  return out;
}

}  // namespace
