// Copyright 2026 The cuhal Authors.
// Entry points: error names and strings, and the driver's entry-point resolver cuGetProcAddress.
//
// These answer before cuInit and even with no fake driver installed (the real ones do not need
// an initialized driver either). When a driver is installed they still count as calls and may be
// failed by its fault injector, like every other entry point.
//
// cuGetProcAddress resolves every entry of core/symbols/cuda_symbols.inc by its plain name, and
// every other function cuda.h declares through the generated table of fallback.h (a modelled
// entry point outside cuhal's table, or the fallback that answers CUDA_ERROR_NOT_SUPPORTED), at
// every version up to the driver's (the version each of those was introduced at is not known
// here: a request older than that gets the current form instead of VERSION_NOT_SUFFICIENT). What
// the real driver answers was measured on an H200 with driver 580.159.04 (CUDA 13.0) by
// tests/fakecuda_dropin/probe_program.cc, whose output the fake must reproduce
// (probe_expected.txt):
//  * an unknown name, or a version older than the entry (or than every ABI of it the fake has):
//    CUDA_SUCCESS, *pfn = NULL, *symbolStatus = SYMBOL_NOT_FOUND / VERSION_NOT_SUFFICIENT;
//  * cudaVersion above the driver's version, or unknown flags: CUDA_ERROR_INVALID_VALUE, with
//    *pfn and *symbolStatus untouched;
//  * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: the _ptsz/_ptds variant where the entry has
//    one (fakecuda/internal/per_thread_list.inc), a different function from the legacy one;
//  * a NULL symbol or pfn crashes the real driver; the fake answers CUDA_ERROR_INVALID_VALUE.
// The legacy 4-parameter resolver (exported as cuGetProcAddress, handed out for 11.3 <= version
// < 12.0) answers CUDA_ERROR_NOT_FOUND on failure and leaves *pfn alone, as measured.
// Newer ABIs: for a few entries the driver answers recent versions with a form newer than the one
// cuda.h 13.0 declares under the plain name (kNewerAbis): measured, at 13000 "cuCtxSynchronize"
// gives cuCtxSynchronize_v2(CUcontext) and "cuCtxGetDevice" cuCtxGetDevice_v2(CUdevice*,
// CUcontext) (both 13.0), and "cuStreamGetCtx" cuStreamGetCtx_v2(CUstream, CUcontext*,
// CUgreenCtx*) (12.5). Requests older than the newer form get the plain one. A caller that
// stores the answer in a pointer of the plain type must ask at an older version (cuhal's real
// loader pins these; fill_table.cc fills the plain functions directly).
// Older ABIs: for an entry whose current ABI is newer than the requested version the real driver
// hands out the older ABI. The fake hands out those of kOlderAbis (cuCtxCreate v1-v3, the legacy
// resolver, ...) and, for the entries of kOlderAbiSpans, the exported plain symbol (e.g. the
// 32-bit cuMemAlloc below 3.2: fakecuda/entry/olderabi_entry.cc); VERSION_NOT_SUFFICIENT for the
// rest.
#include <cstring>
#include <string_view>

#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/fallback.h"
#include "fakecuda/entry/older_abi.h"

// Fault accounting without requiring an installed driver or cuInit.
#define FAKECUDA_ENTER_ANYTIME(name)                                              \
  if (::fakecuda::DriverState* fakecuda_st_ = ::fakecuda::InstalledState()) {     \
    if (CUresult fakecuda_injected_ = fakecuda_st_->faults.OnCall(#name);         \
        fakecuda_injected_ != CUDA_SUCCESS) {                                     \
      return fakecuda_injected_;                                                  \
    }                                                                             \
  }

// The per-thread variants (fakecuda/entry/per_thread_entry.cc), declared with the types of their
// legacy entry points (identical by construction).
extern "C" {
#define FAKECUDA_PER_THREAD(plain, symbol) decltype(::plain) symbol;
#include "fakecuda/internal/per_thread_list.inc"
#undef FAKECUDA_PER_THREAD
}

// The legacy 4-parameter cuGetProcAddress (CUDA 11.3 - 11.8 drivers' only resolver); cuda.h
// maps the name to cuGetProcAddress_v2, so it is defined under its symbol name.
extern "C" CUresult CUDAAPI FakecudaGetProcAddressLegacy(const char* symbol, void** pfn,
                                                         int cudaVersion, cuuint64_t flags)
    __asm__("cuGetProcAddress");
// Older ABIs: fakecuda/entry/older_abi.h.
// Older ABIs of the capture and graph entry points (capture_entry.cc, graph_query_entry.cc).
extern "C" {
CUresult CUDAAPI FakecudaStreamBeginCaptureV1(CUstream hStream) __asm__("cuStreamBeginCapture");
CUresult CUDAAPI FakecudaStreamGetCaptureInfoV1(CUstream hStream, CUstreamCaptureStatus* status,
                                                cuuint64_t* id) __asm__("cuStreamGetCaptureInfo");
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* status,
                                           cuuint64_t* id, CUgraph* graph,
                                           const CUgraphNode** deps, size_t* num_deps);
CUresult CUDAAPI FakecudaGraphGetEdgesV1(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                         size_t* numEdges) __asm__("cuGraphGetEdges");
CUresult CUDAAPI FakecudaGraphNodeGetDependenciesV1(CUgraphNode hNode, CUgraphNode* dependencies,
                                                    size_t* numDependencies)
    __asm__("cuGraphNodeGetDependencies");
CUresult CUDAAPI FakecudaGraphNodeGetDependentNodesV1(CUgraphNode hNode,
                                                      CUgraphNode* dependentNodes,
                                                      size_t* numDependentNodes)
    __asm__("cuGraphNodeGetDependentNodes");
CUresult CUDAAPI FakecudaGraphAddDependenciesV1(CUgraph hGraph, const CUgraphNode* from,
                                                const CUgraphNode* to, size_t numDependencies)
    __asm__("cuGraphAddDependencies");
CUresult CUDAAPI FakecudaGraphAddNodeV1(CUgraphNode* phGraphNode, CUgraph hGraph,
                                        const CUgraphNode* dependencies, size_t numDependencies,
                                        CUgraphNodeParams* nodeParams) __asm__("cuGraphAddNode");
}
// The cuStreamGetCtx_v2 per-thread variant (per_thread_entry.cc; cuda.h declares it only under
// CUDA_API_PER_THREAD_DEFAULT_STREAM).
extern "C" decltype(::cuStreamGetCtx_v2) cuStreamGetCtx_v2_ptsz;

namespace fakecuda {
namespace {

// --- errors ---

// The bits of an enum argument as an int, without an (undefined) load of an out-of-range value.
template <typename E>
int AsInt(const E& value) {
  static_assert(sizeof(E) == sizeof(int));
  int out = 0;
  std::memcpy(&out, &value, sizeof(out));
  return out;
}

// Codes arrive as ints in a CUresult: compared as ints, so that values outside the enumeration
// (which the caller may pass) are never loaded as the enum type.
const char* ErrorName(int error) {
  switch (error) {
#define CUHAL_CU_RESULT(name) \
  case static_cast<int>(name):  \
    return #name;
#include "core/symbols/cu_result_list.inc"
#undef CUHAL_CU_RESULT
  }
  return nullptr;
}

const char* ErrorString(int error) {
  switch (error) {
#define FAKECUDA_ERROR_STRING(name, text) \
  case static_cast<int>(name):            \
    return text;
#include "fakecuda/cuda_error_strings.inc"
#undef FAKECUDA_ERROR_STRING
  }
  return nullptr;
}

// --- cuGetProcAddress ---

template <typename Fp>
void* AsVoid(Fp fn) {
  void* address = nullptr;
  static_assert(sizeof(fn) == sizeof(address));
  std::memcpy(&address, &fn, sizeof(address));
  return address;
}

// The CUDA versions at which an entry point first existed (in any form) and at which its current
// form (the one cuda.h 13.0 names, e.g. cuCtxCreate_v4) was introduced. Entries not listed here
// have existed in their current form since before CUDA 3.0 (2000).
struct Introduced {
  std::string_view name;
  int first;
  int current;
};
constexpr Introduced kIntroduced[] = {
    {"cuGetProcAddress", 11030, 12000},
    {"cuGetErrorName", 6000, 6000},
    {"cuGetErrorString", 6000, 6000},
    {"cuDeviceGetUuid", 9020, 11040},
    {"cuDeviceTotalMem", 2000, 3020},
    {"cuDeviceGetPCIBusId", 4010, 4010},
    {"cuDeviceGetByPCIBusId", 4010, 4010},
    {"cuDeviceCanAccessPeer", 4000, 4000},
    {"cuDeviceGetP2PAttribute", 8000, 8000},
    {"cuDevicePrimaryCtxRetain", 7000, 7000},
    {"cuDevicePrimaryCtxRelease", 7000, 11000},
    {"cuDevicePrimaryCtxSetFlags", 7000, 11000},
    {"cuDevicePrimaryCtxGetState", 7000, 7000},
    {"cuDevicePrimaryCtxReset", 7000, 11000},
    {"cuCtxCreate", 2000, 12050},
    {"cuCtxDestroy", 2000, 4000},
    {"cuCtxPushCurrent", 2000, 4000},
    {"cuCtxPopCurrent", 2000, 4000},
    {"cuCtxSetCurrent", 4000, 4000},
    {"cuCtxGetCurrent", 4000, 4000},
    {"cuCtxGetFlags", 7000, 7000},
    {"cuCtxGetApiVersion", 3020, 3020},
    {"cuCtxGetStreamPriorityRange", 5050, 5050},
    {"cuCtxGetLimit", 3010, 3010},
    {"cuCtxSetLimit", 3010, 3010},
    {"cuCtxEnablePeerAccess", 4000, 4000},
    {"cuCtxDisablePeerAccess", 4000, 4000},
    {"cuStreamCreateWithPriority", 5050, 5050},
    {"cuStreamDestroy", 2000, 4000},
    {"cuStreamGetFlags", 5050, 5050},
    {"cuStreamGetPriority", 5050, 5050},
    {"cuStreamGetCtx", 9020, 9020},
    {"cuLaunchHostFunc", 10000, 10000},
    {"cuStreamAddCallback", 5000, 5000},
    {"cuStreamBeginCapture", 10000, 10010},
    {"cuStreamEndCapture", 10000, 10000},
    {"cuStreamIsCapturing", 10000, 10000},
    {"cuEventDestroy", 2000, 4000},
    {"cuEventRecordWithFlags", 11010, 11010},
    {"cuEventElapsedTime", 2000, 12080},
    {"cuMemAlloc", 2000, 3020},
    {"cuMemFree", 2000, 3020},
    {"cuMemGetInfo", 2000, 3020},
    {"cuMemGetAddressRange", 2000, 3020},
    {"cuMemAllocHost", 2000, 3020},
    {"cuMemHostGetDevicePointer", 2020, 3020},
    {"cuMemHostGetFlags", 2030, 2030},
    {"cuMemHostRegister", 4000, 6050},
    {"cuMemHostUnregister", 4000, 4000},
    {"cuMemAllocManaged", 6000, 6000},
    {"cuMemPrefetchAsync", 8000, 12020},
    {"cuMemAdvise", 8000, 12020},
    {"cuMemcpy", 4000, 4000},
    {"cuMemcpyAsync", 4000, 4000},
    {"cuMemcpyHtoD", 2000, 3020},
    {"cuMemcpyDtoH", 2000, 3020},
    {"cuMemcpyDtoD", 2000, 3020},
    {"cuMemcpyHtoDAsync", 2000, 3020},
    {"cuMemcpyDtoHAsync", 2000, 3020},
    {"cuMemcpyDtoDAsync", 3000, 3020},
    {"cuMemcpyPeer", 4000, 4000},
    {"cuMemcpyPeerAsync", 4000, 4000},
    {"cuMemsetD8", 2000, 3020},
    {"cuMemsetD16", 2000, 3020},
    {"cuMemsetD32", 2000, 3020},
    {"cuMemsetD8Async", 3020, 3020},
    {"cuMemsetD16Async", 3020, 3020},
    {"cuMemsetD32Async", 3020, 3020},
    {"cuPointerGetAttribute", 4000, 4000},
    {"cuPointerGetAttributes", 7000, 7000},
    {"cuMemPoolCreate", 11020, 11020},
    {"cuMemPoolDestroy", 11020, 11020},
    {"cuMemPoolSetAttribute", 11020, 11020},
    {"cuMemPoolGetAttribute", 11020, 11020},
    {"cuMemPoolTrimTo", 11020, 11020},
    {"cuMemPoolSetAccess", 11020, 11020},
    {"cuMemPoolGetAccess", 11020, 11020},
    {"cuMemAllocAsync", 11020, 11020},
    {"cuMemAllocFromPoolAsync", 11020, 11020},
    {"cuMemFreeAsync", 11020, 11020},
    {"cuDeviceGetDefaultMemPool", 11020, 11020},
    {"cuDeviceGetMemPool", 11020, 11020},
    {"cuDeviceSetMemPool", 11020, 11020},
    // Virtual memory management: CUDA 10.2, cuMemRetainAllocationHandle 11.0 (cuda.h's
    // documentation; not measured).
    {"cuMemGetAllocationGranularity", 10020, 10020},
    {"cuMemCreate", 10020, 10020},
    {"cuMemRelease", 10020, 10020},
    {"cuMemGetAllocationPropertiesFromHandle", 10020, 10020},
    {"cuMemAddressReserve", 10020, 10020},
    {"cuMemAddressFree", 10020, 10020},
    {"cuMemMap", 10020, 10020},
    {"cuMemUnmap", 10020, 10020},
    {"cuMemSetAccess", 10020, 10020},
    {"cuMemGetAccess", 10020, 10020},
    {"cuMemRetainAllocationHandle", 11000, 11000},
    {"cuMemExportToShareableHandle", 10020, 10020},
    {"cuMemImportFromShareableHandle", 10020, 10020},
    {"cuModuleLoadDataEx", 2010, 2010},
    {"cuModuleGetGlobal", 2000, 3020},
    {"cuFuncSetAttribute", 9000, 9000},
    {"cuLaunchKernel", 4000, 4000},
    {"cuGraphCreate", 10000, 10000},
    {"cuGraphDestroy", 10000, 10000},
    {"cuGraphAddEmptyNode", 10000, 10000},
    {"cuGraphAddKernelNode", 10000, 12000},
    {"cuGraphAddMemcpyNode", 10000, 10000},
    {"cuGraphAddMemsetNode", 10000, 10000},
    {"cuGraphAddHostNode", 10000, 10000},
    {"cuGraphAddEventRecordNode", 11010, 11010},
    {"cuGraphAddEventWaitNode", 11010, 11010},
    {"cuGraphInstantiateWithFlags", 11040, 11040},
    {"cuGraphExecDestroy", 10000, 10000},
    {"cuGraphLaunch", 10000, 10000},
    {"cuStreamGetCaptureInfo", 10010, 12030},
    {"cuThreadExchangeStreamCaptureMode", 10010, 10010},
    {"cuGraphGetNodes", 10000, 10000},
    {"cuGraphGetRootNodes", 10000, 10000},
    {"cuGraphGetEdges", 10000, 12030},
    {"cuGraphAddNode", 12020, 12030},
    {"cuGraphNodeSetParams", 12020, 12020},
    {"cuGraphExecNodeSetParams", 12020, 12020},
    {"cuGraphConditionalHandleCreate", 12030, 12030},
    {"cuGraphNodeGetType", 10000, 10000},
    {"cuGraphNodeGetDependencies", 10000, 12030},
    {"cuGraphNodeGetDependentNodes", 10000, 12030},
    {"cuGraphAddDependencies", 10000, 12030},
    {"cuGraphDestroyNode", 10000, 10000},
    {"cuGraphClone", 10000, 10000},
    {"cuGraphAddChildGraphNode", 10000, 10000},
    {"cuGraphAddMemAllocNode", 11040, 11040},
    {"cuGraphAddMemFreeNode", 11040, 11040},
    {"cuGraphUpload", 11010, 11010},
    {"cuDeviceGetGraphMemAttribute", 11040, 11040},
    {"cuDeviceSetGraphMemAttribute", 11040, 11040},
    {"cuDeviceGraphMemTrim", 11040, 11040},
    {"cuGraphExecKernelNodeSetParams", 10010, 12000},
    {"cuGraphExecMemsetNodeSetParams", 10020, 10020},
    {"cuGraphExecMemcpyNodeSetParams", 10020, 10020},
    {"cuGraphExecUpdate", 10020, 12000},
};
// The older ABIs the fake implements, handed out for requests older than an entry's current
// form (measured on driver 580.159.04: cuCtxCreate at 12040 and at 3020 succeed). Requests that
// fall below an entry's current form with no older ABI listed here are answered
// VERSION_NOT_SUFFICIENT, where the real driver would hand out an ABI the fake lacks.
struct OlderAbi {
  std::string_view name;
  int introduced;
  void* (*address)();
};
constexpr OlderAbi kOlderAbis[] = {
    {"cuCtxCreate", 2000, [] { return AsVoid(&::FakecudaCtxCreateV1); }},
    {"cuCtxCreate", 3020, [] { return AsVoid(&::cuCtxCreate_v2); }},
    {"cuCtxCreate", 11040, [] { return AsVoid(&::cuCtxCreate_v3); }},
    {"cuGetProcAddress", 11030, [] { return AsVoid(&::FakecudaGetProcAddressLegacy); }},
    {"cuStreamBeginCapture", 10000, [] { return AsVoid(&::FakecudaStreamBeginCaptureV1); }},
    {"cuStreamGetCaptureInfo", 10010, [] { return AsVoid(&::FakecudaStreamGetCaptureInfoV1); }},
    {"cuStreamGetCaptureInfo", 11030, [] { return AsVoid(&::cuStreamGetCaptureInfo_v2); }},
    {"cuGraphGetEdges", 10000, [] { return AsVoid(&::FakecudaGraphGetEdgesV1); }},
    {"cuGraphNodeGetDependencies", 10000,
     [] { return AsVoid(&::FakecudaGraphNodeGetDependenciesV1); }},
    {"cuGraphNodeGetDependentNodes", 10000,
     [] { return AsVoid(&::FakecudaGraphNodeGetDependentNodesV1); }},
    {"cuGraphAddDependencies", 10000, [] { return AsVoid(&::FakecudaGraphAddDependenciesV1); }},
    {"cuGraphAddNode", 12020, [] { return AsVoid(&::FakecudaGraphAddNodeV1); }},
    // Asked for at these versions by the CUDA runtime 13.0 (older_abi_entry.cc).
    {"cuDeviceGetUuid", 9020, [] { return AsVoid(&::FakecudaDeviceGetUuidV1); }},
    {"cuDevicePrimaryCtxRelease", 7000,
     [] { return AsVoid(&::FakecudaDevicePrimaryCtxReleaseV1); }},
    {"cuDevicePrimaryCtxReset", 7000, [] { return AsVoid(&::FakecudaDevicePrimaryCtxResetV1); }},
    {"cuDevicePrimaryCtxSetFlags", 7000,
     [] { return AsVoid(&::FakecudaDevicePrimaryCtxSetFlagsV1); }},
    {"cuEventElapsedTime", 2000, [] { return AsVoid(&::FakecudaEventElapsedTimeV1); }},
};

// Older ABIs handed out by the exported plain symbol (the generated table's older-ABI row, kind
// k_older: fakecuda/entry/olderabi_entry.cc and the other files that define an older ABI, or its
// fallback): for first <= cudaVersion < current that symbol, below first nothing
// (VERSION_NOT_SUFFICIENT), from current on the current form. These rows take precedence over
// kIntroduced. UNMEASURED.
struct OlderAbiSpan {
  std::string_view name;
  int first;
  int current;
};
constexpr OlderAbiSpan kOlderAbiSpans[] = {
    {"cuCtxDestroy", 2000, 4000},
    {"cuCtxPopCurrent", 2000, 4000},
    {"cuCtxPushCurrent", 2000, 4000},
    {"cuStreamDestroy", 2000, 4000},
    {"cuEventDestroy", 2000, 4000},
    {"cuDeviceTotalMem", 2000, 3020},
    {"cuMemGetInfo", 2000, 3020},
    {"cuMemAlloc", 2000, 3020},
    {"cuMemAllocPitch", 2000, 3020},
    {"cuMemFree", 2000, 3020},
    {"cuMemGetAddressRange", 2000, 3020},
    {"cuMemAllocHost", 2000, 3020},
    {"cuMemHostGetDevicePointer", 2020, 3020},
    {"cuMemHostRegister", 4000, 6050},
    {"cuModuleGetGlobal", 2000, 3020},
    {"cuMemcpyHtoD", 2000, 3020},
    {"cuMemcpyDtoH", 2000, 3020},
    {"cuMemcpyDtoD", 2000, 3020},
    {"cuMemcpyHtoDAsync", 2000, 3020},
    {"cuMemcpyDtoHAsync", 2000, 3020},
    {"cuMemcpyDtoDAsync", 3000, 3020},
    {"cuMemsetD8", 2000, 3020},
    {"cuMemsetD16", 2000, 3020},
    {"cuMemsetD32", 2000, 3020},
    {"cuMemsetD2D8", 2000, 3020},
    {"cuMemsetD2D16", 2000, 3020},
    {"cuMemsetD2D32", 2000, 3020},
    {"cuTexRefSetAddress", 2000, 3020},
    {"cuTexRefSetAddress2D", 2020, 3020},
    {"cuTexRefGetAddress", 2000, 3020},
    {"cuGraphicsResourceGetMappedPointer", 3000, 3020},
    {"cuGraphicsResourceSetMapFlags", 3000, 6050},
    {"cuLinkCreate", 5050, 6050},
    {"cuLinkAddData", 5050, 6050},
    {"cuLinkAddFile", 5050, 6050},
    {"cuIpcOpenMemHandle", 4010, 11000},
    {"cuMemAdvise", 8000, 12020},
    {"cuMemPrefetchAsync", 8000, 12020},
    {"cuMemcpyBatchAsync", 12080, 13000},
    {"cuMemcpy3DBatchAsync", 12080, 13000},
    {"cuStreamWaitValue32", 8000, 11070},
    {"cuStreamWaitValue64", 9000, 11070},
    {"cuStreamWriteValue32", 8000, 11070},
    {"cuStreamWriteValue64", 9000, 11070},
    {"cuStreamBatchMemOp", 8000, 11070},
    {"cuGraphInstantiate", 10000, 12000},
    {"cuGraphExecUpdate", 10020, 12000},
    {"cuGraphAddKernelNode", 10000, 12000},
    {"cuGraphKernelNodeGetParams", 10000, 12000},
    {"cuGraphKernelNodeSetParams", 10000, 12000},
    {"cuGraphExecKernelNodeSetParams", 10010, 12000},
    {"cuGraphRemoveDependencies", 10000, 12030},
    {"cuStreamUpdateCaptureDependencies", 11030, 12030},
};

const OlderAbiSpan* FindOlderAbiSpan(std::string_view name, int cuda_version) {
  for (const OlderAbiSpan& span : kOlderAbiSpans) {
    if (span.name == name && cuda_version < span.current) return &span;
  }
  return nullptr;
}

// The newer ABIs the driver hands out for the plain names from the version they were introduced
// at, although cuda.h 13.0 still declares the older form under the plain name (measured on driver
// 580.159.04, see the top of this file). `per_thread` is the variant for
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, where cuda.h has one (UNMEASURED: that the real
// driver hands out cuStreamGetCtx_v2_ptsz for that flag; cuda.h maps the name to it).
struct NewerAbi {
  std::string_view name;
  int introduced;
  void* (*address)();
  void* (*per_thread)();  // null when there is no per-thread variant
};
constexpr NewerAbi kNewerAbis[] = {
    {"cuStreamGetCtx", 12050, [] { return AsVoid(&::cuStreamGetCtx_v2); },
     [] { return AsVoid(&::cuStreamGetCtx_v2_ptsz); }},
    {"cuCtxGetDevice", 13000, [] { return AsVoid(&::cuCtxGetDevice_v2); }, nullptr},
    {"cuCtxSynchronize", 13000, [] { return AsVoid(&::cuCtxSynchronize_v2); }, nullptr},
};

// The per-thread-default-stream variants exist from CUDA 7.0.
constexpr int kPerThreadIntroduced = 7000;

// The newest of kNewerAbis for `name` that `cuda_version` asks for, or null.
const NewerAbi* FindNewerAbi(std::string_view name, int cuda_version) {
  const NewerAbi* best = nullptr;
  for (const NewerAbi& newer : kNewerAbis) {
    if (newer.name == name && newer.introduced <= cuda_version &&
        (best == nullptr || newer.introduced > best->introduced)) {
      best = &newer;
    }
  }
  return best;
}

struct ProcEntry {
  std::string_view name;
  void* legacy;
  void* per_thread;  // null when the entry has no per-thread variant
  int first;
  int current;
};

// One row per entry of core/symbols/cuda_symbols.inc.
class ProcTable {
 public:
  ProcTable() {
#define CUHAL_CU_PFN(kind, name, arity) Add(#name, AsVoid(&::name));
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
#define FAKECUDA_PER_THREAD(plain, symbol) SetPerThread(#plain, AsVoid(&::symbol));
#include "fakecuda/internal/per_thread_list.inc"
#undef FAKECUDA_PER_THREAD
  }
  const ProcEntry* Find(std::string_view name) const {
    for (int i = 0; i < size_; ++i) {
      if (entries_[i].name == name) return &entries_[i];
    }
    return nullptr;
  }

 private:
  void Add(std::string_view name, void* fn) {
    ProcEntry e{name, fn, nullptr, 2000, 2000};
    for (const Introduced& in : kIntroduced) {
      if (in.name == name) {
        e.first = in.first;
        e.current = in.current;
      }
    }
    entries_[size_++] = e;
  }
  void SetPerThread(std::string_view name, void* fn) {
    for (int i = 0; i < size_; ++i) {
      if (entries_[i].name == name) entries_[i].per_thread = fn;
    }
  }
  static constexpr int kMaxEntries = 256;
  ProcEntry entries_[kMaxEntries];
  int size_ = 0;
};

const ProcTable& Procs() {
  static const ProcTable table;  // immutable after construction (thread-safe static init)
  return table;
}

// The row of the generated table (fallback.h) for the plain name `name` of the given kind, or null.
const ApiEntry* FindApi(std::string_view name, ApiKind kind) {
  for (int i = 0; i < kApiEntryCount; ++i) {
    if (kApiEntries[i].kind == kind && kApiEntries[i].plain == name) return &kApiEntries[i];
  }
  return nullptr;
}

// The driver version cuGetProcAddress compares cudaVersion against.
int DriverVersion() {
  DriverState* st = InstalledState();
  return st != nullptr ? st->options.driver_version : CUDA_VERSION;
}

// The resolver shared by cuGetProcAddress_v2 and the legacy cuGetProcAddress.
CUresult Resolve(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                 CUdriverProcAddressQueryResult* status, bool legacy) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  constexpr cuuint64_t kKnownFlags =
      CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  // Measured: the real driver leaves *pfn and *symbolStatus alone here.
  if ((flags & ~kKnownFlags) != 0 || cuda_version > DriverVersion()) return CUDA_ERROR_INVALID_VALUE;
  // Measured: the legacy resolver leaves *pfn alone when it fails; the _v2 one nulls it.
  if (!legacy) *pfn = nullptr;
  // Measured: a symbol that is unknown or too new for cudaVersion is CUDA_SUCCESS with a null
  // *pfn and the reason in *symbolStatus (the legacy resolver, which has no symbolStatus, says
  // CUDA_ERROR_NOT_FOUND instead).
  const CUresult not_found = legacy ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
  std::string_view name(symbol);
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0 &&
                          cuda_version >= kPerThreadIntroduced;
  if (const OlderAbiSpan* span = FindOlderAbiSpan(name, cuda_version); span != nullptr) {
    if (cuda_version < span->first) {
      if (status != nullptr) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return not_found;
    }
    const ApiEntry* older = FindApi(name, ApiKind::k_older);
    if (older == nullptr) {
      if (status != nullptr) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return not_found;
    }
    *pfn = AsVoid(older->address);
    if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  const ProcEntry* e = Procs().Find(name);
  if (e == nullptr) {
    // The rest of cuda.h (the generated table, fallback.h): modelled entry points outside
    // cuhal's symbol table and the fallbacks, at every version up to the driver's (UNMEASURED:
    // the version each was introduced at; older requests get the current form).
    const ApiEntry* api = FindApi(name, ApiKind::k_current);
    if (api == nullptr) {
      if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      return not_found;
    }
    // The per-thread variant, unless it is a fallback and the legacy one is modelled (then the
    // modelled one, with legacy-stream semantics, as cuhal's own table answers such entries).
    const ApiEntry* variant = per_thread ? FindApi(name, ApiKind::k_per_thread) : nullptr;
    if (variant != nullptr && !variant->modelled && api->modelled) variant = nullptr;
    *pfn = AsVoid(variant != nullptr ? variant->address : api->address);
    if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  void* fn = nullptr;
  if (const NewerAbi* newer = FindNewerAbi(name, cuda_version); newer != nullptr) {
    fn = per_thread && newer->per_thread != nullptr ? newer->per_thread() : newer->address();
  } else if (cuda_version >= e->current) {
    fn = per_thread && e->per_thread != nullptr ? e->per_thread : e->legacy;
  } else {
    int best = 0;
    for (const OlderAbi& older : kOlderAbis) {
      if (older.name == name && older.introduced <= cuda_version && older.introduced > best) {
        best = older.introduced;
        fn = older.address();
      }
    }
  }
  if (fn == nullptr) {
    if (status != nullptr) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return not_found;
  }
  *pfn = fn;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) try {
  FAKECUDA_ENTER_ANYTIME(cuGetErrorName)
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = fakecuda::ErrorName(fakecuda::AsInt(error));
  return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGetErrorName");
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) try {
  FAKECUDA_ENTER_ANYTIME(cuGetErrorString)
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = fakecuda::ErrorString(fakecuda::AsInt(error));
  return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGetErrorString");
}

CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                  cuuint64_t flags, CUdriverProcAddressQueryResult* symbolStatus) try {
  FAKECUDA_ENTER_ANYTIME(cuGetProcAddress)
  return fakecuda::Resolve(symbol, pfn, cudaVersion, flags, symbolStatus, /*legacy=*/false);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGetProcAddress");
}

CUresult CUDAAPI FakecudaGetProcAddressLegacy(const char* symbol, void** pfn, int cudaVersion,
                                              cuuint64_t flags) try {
  FAKECUDA_ENTER_ANYTIME(cuGetProcAddress)
  return fakecuda::Resolve(symbol, pfn, cudaVersion, flags, nullptr, /*legacy=*/true);
} catch (...) {
  return ::fakecuda::EntryFailed("FakecudaGetProcAddressLegacy");
}

}  // extern "C"
