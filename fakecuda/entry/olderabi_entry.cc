// Copyright 2026 The cuhal Authors.
// Entry points: the older ABIs of cuda.h's versioned entry points that the real driver still
// exports under their plain names and that cuGetProcAddress hands out for old cudaVersion
// arguments (error_entry.cc's kOlderAbiSpans), with the signatures of cuda.h's
// __CUDA_API_VERSION_INTERNAL section: the 32-bit (CUdeviceptr_v1, unsigned int sizes) memory
// calls of CUDA 2.x, the pre-4.0 context push/pop/destroy and stream/event destroy, the CUDA
// 10/11 graph forms, the CUdevice forms of cuMemAdvise/cuMemPrefetchAsync, the failIdx batch
// copies, and the IPC, graphics and texture-reference forms. (The v1 link, kernel-node get/set,
// remove-dependencies, capture-dependencies and stream memory-operation forms live with their
// current forms: the legacy, graphx and streamctx entry files.) Each converts its
// arguments and forwards to the current entry point, which does the fault accounting under the
// plain name; a 32-bit device pointer is zero-extended (fake device memory lies above 2^48, so it
// never names an allocation) and a 64-bit result is narrowed where the old form has 32 bits.
// What the real driver answers was measured by ci/gpu-probes/olderabi_probe.cc
// (docs/driver_facts.md, "Older ABIs"); lines not confirmed there say UNMEASURED.
#include <cuda.h>

#include <cstdint>
#include <cstring>

namespace {

using DevicePtrV1 = unsigned int;

constexpr std::uint64_t kMax32 = 0xffffffffull;

// The answer of an old form whose 64-bit result does not fit its 32 bits. UNMEASURED.
constexpr CUresult kDoesNotFit = CUDA_ERROR_INVALID_VALUE;

CUdeviceptr Widen(DevicePtrV1 p) { return static_cast<CUdeviceptr>(p); }

// CUdevice -> CUmemLocation for the CUdevice forms of cuMemAdvise / cuMemPrefetchAsync:
// CU_DEVICE_CPU is the host, every other value a device ordinal (an invalid one is refused by
// the current form). UNMEASURED.
CUmemLocation Location(CUdevice dev) {
  CUmemLocation loc;
  std::memset(&loc, 0, sizeof loc);
  if (dev == CU_DEVICE_CPU) {
    loc.type = CU_MEM_LOCATION_TYPE_HOST;
  } else if (dev == CU_DEVICE_INVALID) {
    loc.type = CU_MEM_LOCATION_TYPE_INVALID;
  } else {
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = dev;
  }
  return loc;
}

CUDA_KERNEL_NODE_PARAMS Widen(const CUDA_KERNEL_NODE_PARAMS_v1& p) {
  CUDA_KERNEL_NODE_PARAMS w;
  std::memset(&w, 0, sizeof w);
  w.func = p.func;
  w.gridDimX = p.gridDimX;
  w.gridDimY = p.gridDimY;
  w.gridDimZ = p.gridDimZ;
  w.blockDimX = p.blockDimX;
  w.blockDimY = p.blockDimY;
  w.blockDimZ = p.blockDimZ;
  w.sharedMemBytes = p.sharedMemBytes;
  w.kernelParams = p.kernelParams;
  w.extra = p.extra;
  return w;
}

}  // namespace

extern "C" {

// Contexts, streams, events (pre-4.0 forms).
CUresult CUDAAPI FakecudaCtxDestroyV1(CUcontext ctx) __asm__("cuCtxDestroy");
CUresult CUDAAPI FakecudaCtxPopCurrentV1(CUcontext* pctx) __asm__("cuCtxPopCurrent");
CUresult CUDAAPI FakecudaCtxPushCurrentV1(CUcontext ctx) __asm__("cuCtxPushCurrent");
CUresult CUDAAPI FakecudaStreamDestroyV1(CUstream hStream) __asm__("cuStreamDestroy");
CUresult CUDAAPI FakecudaEventDestroyV1(CUevent hEvent) __asm__("cuEventDestroy");
// Memory with 32-bit device pointers and sizes (before CUDA 3.2).
CUresult CUDAAPI FakecudaDeviceTotalMemV1(unsigned int* bytes, CUdevice dev)
    __asm__("cuDeviceTotalMem");
CUresult CUDAAPI FakecudaMemGetInfoV1(unsigned int* free, unsigned int* total)
    __asm__("cuMemGetInfo");
CUresult CUDAAPI FakecudaMemAllocV1(unsigned int* dptr, unsigned int bytesize)
    __asm__("cuMemAlloc");
CUresult CUDAAPI FakecudaMemAllocPitchV1(unsigned int* dptr, unsigned int* pPitch,
                                         unsigned int WidthInBytes, unsigned int Height,
                                         unsigned int ElementSizeBytes) __asm__("cuMemAllocPitch");
CUresult CUDAAPI FakecudaMemFreeV1(unsigned int dptr) __asm__("cuMemFree");
CUresult CUDAAPI FakecudaMemGetAddressRangeV1(unsigned int* pbase, unsigned int* psize,
                                              unsigned int dptr) __asm__("cuMemGetAddressRange");
CUresult CUDAAPI FakecudaMemAllocHostV1(void** pp, unsigned int bytesize)
    __asm__("cuMemAllocHost");
CUresult CUDAAPI FakecudaMemHostGetDevicePointerV1(unsigned int* pdptr, void* p,
                                                   unsigned int Flags)
    __asm__("cuMemHostGetDevicePointer");
CUresult CUDAAPI FakecudaMemHostRegisterV1(void* p, size_t bytesize, unsigned int Flags)
    __asm__("cuMemHostRegister");
CUresult CUDAAPI FakecudaModuleGetGlobalV1(unsigned int* dptr, unsigned int* bytes,
                                           CUmodule hmod, const char* name)
    __asm__("cuModuleGetGlobal");
CUresult CUDAAPI FakecudaMemcpyHtoDV1(unsigned int dst, const void* src, unsigned int n)
    __asm__("cuMemcpyHtoD");
CUresult CUDAAPI FakecudaMemcpyDtoHV1(void* dst, unsigned int src, unsigned int n)
    __asm__("cuMemcpyDtoH");
CUresult CUDAAPI FakecudaMemcpyDtoDV1(unsigned int dst, unsigned int src, unsigned int n)
    __asm__("cuMemcpyDtoD");
CUresult CUDAAPI FakecudaMemcpyHtoDAsyncV1(unsigned int dst, const void* src, unsigned int n,
                                           CUstream s) __asm__("cuMemcpyHtoDAsync");
CUresult CUDAAPI FakecudaMemcpyDtoHAsyncV1(void* dst, unsigned int src, unsigned int n,
                                           CUstream s) __asm__("cuMemcpyDtoHAsync");
CUresult CUDAAPI FakecudaMemcpyDtoDAsyncV1(unsigned int dst, unsigned int src, unsigned int n,
                                           CUstream s) __asm__("cuMemcpyDtoDAsync");
CUresult CUDAAPI FakecudaMemsetD8V1(unsigned int dst, unsigned char v, unsigned int n)
    __asm__("cuMemsetD8");
CUresult CUDAAPI FakecudaMemsetD16V1(unsigned int dst, unsigned short v, unsigned int n)
    __asm__("cuMemsetD16");
CUresult CUDAAPI FakecudaMemsetD32V1(unsigned int dst, unsigned int v, unsigned int n)
    __asm__("cuMemsetD32");
CUresult CUDAAPI FakecudaMemsetD2D8V1(unsigned int dst, unsigned int pitch, unsigned char v,
                                      unsigned int w, unsigned int h) __asm__("cuMemsetD2D8");
CUresult CUDAAPI FakecudaMemsetD2D16V1(unsigned int dst, unsigned int pitch, unsigned short v,
                                       unsigned int w, unsigned int h) __asm__("cuMemsetD2D16");
CUresult CUDAAPI FakecudaMemsetD2D32V1(unsigned int dst, unsigned int pitch, unsigned int v,
                                       unsigned int w, unsigned int h) __asm__("cuMemsetD2D32");
CUresult CUDAAPI FakecudaTexRefSetAddressV1(unsigned int* ByteOffset, CUtexref hTexRef,
                                            unsigned int dptr, unsigned int bytes)
    __asm__("cuTexRefSetAddress");
CUresult CUDAAPI FakecudaTexRefSetAddress2DV1(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR* desc,
                                              unsigned int dptr, unsigned int Pitch)
    __asm__("cuTexRefSetAddress2D");
CUresult CUDAAPI FakecudaTexRefGetAddressV1(unsigned int* pdptr, CUtexref hTexRef)
    __asm__("cuTexRefGetAddress");
CUresult CUDAAPI FakecudaGraphicsResourceGetMappedPointerV1(unsigned int* pDevPtr,
                                                            unsigned int* pSize,
                                                            CUgraphicsResource resource)
    __asm__("cuGraphicsResourceGetMappedPointer");
CUresult CUDAAPI FakecudaGraphicsResourceSetMapFlagsV1(CUgraphicsResource resource,
                                                       unsigned int flags)
    __asm__("cuGraphicsResourceSetMapFlags");
// IPC (same signature as the current form).
CUresult CUDAAPI FakecudaIpcOpenMemHandleV1(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                            unsigned int Flags) __asm__("cuIpcOpenMemHandle");
// Unified memory with a CUdevice instead of a CUmemLocation (before 12.2).
CUresult CUDAAPI FakecudaMemAdviseV1(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                     CUdevice device) __asm__("cuMemAdvise");
CUresult CUDAAPI FakecudaMemPrefetchAsyncV1(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                            CUstream hStream) __asm__("cuMemPrefetchAsync");
// Batched copies with failIdx (12.8).
CUresult CUDAAPI FakecudaMemcpyBatchAsyncV1(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes,
                                            size_t count, CUmemcpyAttributes* attrs,
                                            size_t* attrsIdxs, size_t numAttrs, size_t* failIdx,
                                            CUstream hStream) __asm__("cuMemcpyBatchAsync");
CUresult CUDAAPI FakecudaMemcpy3DBatchAsyncV1(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList,
                                              size_t* failIdx, unsigned long long flags,
                                              CUstream hStream) __asm__("cuMemcpy3DBatchAsync");
// Graphs (CUDA 10 / 11 forms).
CUresult CUDAAPI FakecudaGraphInstantiateV1(CUgraphExec* phGraphExec, CUgraph hGraph,
                                            CUgraphNode* phErrorNode, char* logBuffer,
                                            size_t bufferSize) __asm__("cuGraphInstantiate");
CUresult CUDAAPI FakecudaGraphExecUpdateV1(CUgraphExec hGraphExec, CUgraph hGraph,
                                           CUgraphNode* hErrorNode_out,
                                           CUgraphExecUpdateResult* updateResult_out)
    __asm__("cuGraphExecUpdate");
CUresult CUDAAPI FakecudaGraphAddKernelNodeV1(CUgraphNode* phGraphNode, CUgraph hGraph,
                                              const CUgraphNode* dependencies,
                                              size_t numDependencies,
                                              const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
    __asm__("cuGraphAddKernelNode");
CUresult CUDAAPI FakecudaGraphExecKernelNodeSetParamsV1(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
    __asm__("cuGraphExecKernelNodeSetParams");


// ---- Contexts, streams, events ----

CUresult CUDAAPI FakecudaCtxDestroyV1(CUcontext ctx) { return cuCtxDestroy(ctx); }
CUresult CUDAAPI FakecudaCtxPopCurrentV1(CUcontext* pctx) { return cuCtxPopCurrent(pctx); }
CUresult CUDAAPI FakecudaCtxPushCurrentV1(CUcontext ctx) { return cuCtxPushCurrent(ctx); }
CUresult CUDAAPI FakecudaStreamDestroyV1(CUstream hStream) { return cuStreamDestroy(hStream); }
CUresult CUDAAPI FakecudaEventDestroyV1(CUevent hEvent) { return cuEventDestroy(hEvent); }

// ---- Memory, 32-bit ----

CUresult CUDAAPI FakecudaDeviceTotalMemV1(unsigned int* bytes, CUdevice dev) {
  size_t total = 0;
  CUresult r = cuDeviceTotalMem(bytes != nullptr ? &total : nullptr, dev);
  if (r != CUDA_SUCCESS) return r;
  if (total > kMax32) return kDoesNotFit;
  *bytes = static_cast<unsigned int>(total);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaMemGetInfoV1(unsigned int* free, unsigned int* total) {
  size_t f = 0, t = 0;
  CUresult r = cuMemGetInfo(free != nullptr ? &f : nullptr, total != nullptr ? &t : nullptr);
  if (r != CUDA_SUCCESS) return r;
  if ((free != nullptr && f > kMax32) || (total != nullptr && t > kMax32)) return kDoesNotFit;
  if (free != nullptr) *free = static_cast<unsigned int>(f);
  if (total != nullptr) *total = static_cast<unsigned int>(t);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaMemAllocV1(DevicePtrV1* dptr, unsigned int bytesize) {
  CUdeviceptr p = 0;
  CUresult r = cuMemAlloc(dptr != nullptr ? &p : nullptr, bytesize);
  if (r != CUDA_SUCCESS) return r;
  if (p > kMax32) {
    cuMemFree(p);
    return kDoesNotFit;
  }
  *dptr = static_cast<DevicePtrV1>(p);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaMemAllocPitchV1(DevicePtrV1* dptr, unsigned int* pPitch,
                                         unsigned int WidthInBytes, unsigned int Height,
                                         unsigned int ElementSizeBytes) {
  CUdeviceptr p = 0;
  size_t pitch = 0;
  CUresult r = cuMemAllocPitch(dptr != nullptr ? &p : nullptr,
                               pPitch != nullptr ? &pitch : nullptr, WidthInBytes, Height,
                               ElementSizeBytes);
  if (r != CUDA_SUCCESS) return r;
  if (p > kMax32 || pitch > kMax32) {
    cuMemFree(p);
    return kDoesNotFit;
  }
  *dptr = static_cast<DevicePtrV1>(p);
  *pPitch = static_cast<unsigned int>(pitch);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaMemFreeV1(DevicePtrV1 dptr) { return cuMemFree(Widen(dptr)); }

CUresult CUDAAPI FakecudaMemGetAddressRangeV1(DevicePtrV1* pbase, unsigned int* psize,
                                              DevicePtrV1 dptr) {
  CUdeviceptr base = 0;
  size_t size = 0;
  CUresult r = cuMemGetAddressRange(pbase != nullptr ? &base : nullptr,
                                    psize != nullptr ? &size : nullptr, Widen(dptr));
  if (r != CUDA_SUCCESS) return r;
  if (base > kMax32 || size > kMax32) return kDoesNotFit;
  if (pbase != nullptr) *pbase = static_cast<DevicePtrV1>(base);
  if (psize != nullptr) *psize = static_cast<unsigned int>(size);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaMemAllocHostV1(void** pp, unsigned int bytesize) {
  return cuMemAllocHost(pp, bytesize);
}

CUresult CUDAAPI FakecudaMemHostGetDevicePointerV1(DevicePtrV1* pdptr, void* p,
                                                   unsigned int Flags) {
  CUdeviceptr d = 0;
  CUresult r = cuMemHostGetDevicePointer(pdptr != nullptr ? &d : nullptr, p, Flags);
  if (r != CUDA_SUCCESS) return r;
  if (d > kMax32) return kDoesNotFit;
  *pdptr = static_cast<DevicePtrV1>(d);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaMemHostRegisterV1(void* p, size_t bytesize, unsigned int Flags) {
  return cuMemHostRegister(p, bytesize, Flags);
}

CUresult CUDAAPI FakecudaModuleGetGlobalV1(DevicePtrV1* dptr, unsigned int* bytes, CUmodule hmod,
                                           const char* name) {
  CUdeviceptr d = 0;
  size_t size = 0;
  CUresult r = cuModuleGetGlobal(dptr != nullptr ? &d : nullptr,
                                 bytes != nullptr ? &size : nullptr, hmod, name);
  if (r != CUDA_SUCCESS) return r;
  if (d > kMax32 || size > kMax32) return kDoesNotFit;
  if (dptr != nullptr) *dptr = static_cast<DevicePtrV1>(d);
  if (bytes != nullptr) *bytes = static_cast<unsigned int>(size);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaMemcpyHtoDV1(DevicePtrV1 dst, const void* src, unsigned int n) {
  return cuMemcpyHtoD(Widen(dst), src, n);
}
CUresult CUDAAPI FakecudaMemcpyDtoHV1(void* dst, DevicePtrV1 src, unsigned int n) {
  return cuMemcpyDtoH(dst, Widen(src), n);
}
CUresult CUDAAPI FakecudaMemcpyDtoDV1(DevicePtrV1 dst, DevicePtrV1 src, unsigned int n) {
  return cuMemcpyDtoD(Widen(dst), Widen(src), n);
}
CUresult CUDAAPI FakecudaMemcpyHtoDAsyncV1(DevicePtrV1 dst, const void* src, unsigned int n,
                                           CUstream s) {
  return cuMemcpyHtoDAsync(Widen(dst), src, n, s);
}
CUresult CUDAAPI FakecudaMemcpyDtoHAsyncV1(void* dst, DevicePtrV1 src, unsigned int n,
                                           CUstream s) {
  return cuMemcpyDtoHAsync(dst, Widen(src), n, s);
}
CUresult CUDAAPI FakecudaMemcpyDtoDAsyncV1(DevicePtrV1 dst, DevicePtrV1 src, unsigned int n,
                                           CUstream s) {
  return cuMemcpyDtoDAsync(Widen(dst), Widen(src), n, s);
}
CUresult CUDAAPI FakecudaMemsetD8V1(DevicePtrV1 dst, unsigned char v, unsigned int n) {
  return cuMemsetD8(Widen(dst), v, n);
}
CUresult CUDAAPI FakecudaMemsetD16V1(DevicePtrV1 dst, unsigned short v, unsigned int n) {
  return cuMemsetD16(Widen(dst), v, n);
}
CUresult CUDAAPI FakecudaMemsetD32V1(DevicePtrV1 dst, unsigned int v, unsigned int n) {
  return cuMemsetD32(Widen(dst), v, n);
}
CUresult CUDAAPI FakecudaMemsetD2D8V1(DevicePtrV1 dst, unsigned int pitch, unsigned char v,
                                      unsigned int w, unsigned int h) {
  return cuMemsetD2D8(Widen(dst), pitch, v, w, h);
}
CUresult CUDAAPI FakecudaMemsetD2D16V1(DevicePtrV1 dst, unsigned int pitch, unsigned short v,
                                       unsigned int w, unsigned int h) {
  return cuMemsetD2D16(Widen(dst), pitch, v, w, h);
}
CUresult CUDAAPI FakecudaMemsetD2D32V1(DevicePtrV1 dst, unsigned int pitch, unsigned int v,
                                       unsigned int w, unsigned int h) {
  return cuMemsetD2D32(Widen(dst), pitch, v, w, h);
}

// ---- Texture references, graphics resources ----

// cuda.h deprecates the texture-reference calls; these forward to them all the same.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

CUresult CUDAAPI FakecudaTexRefSetAddressV1(unsigned int* ByteOffset, CUtexref hTexRef,
                                            DevicePtrV1 dptr, unsigned int bytes) {
  size_t off = 0;
  CUresult r = cuTexRefSetAddress(ByteOffset != nullptr ? &off : nullptr, hTexRef, Widen(dptr),
                                  bytes);
  if (r == CUDA_SUCCESS && ByteOffset != nullptr) *ByteOffset = static_cast<unsigned int>(off);
  return r;
}

CUresult CUDAAPI FakecudaTexRefSetAddress2DV1(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR* desc,
                                              DevicePtrV1 dptr, unsigned int Pitch) {
  return cuTexRefSetAddress2D(hTexRef, desc, Widen(dptr), Pitch);
}

CUresult CUDAAPI FakecudaTexRefGetAddressV1(DevicePtrV1* pdptr, CUtexref hTexRef) {
  CUdeviceptr d = 0;
  CUresult r = cuTexRefGetAddress(pdptr != nullptr ? &d : nullptr, hTexRef);
  if (r != CUDA_SUCCESS) return r;
  if (d > kMax32) return kDoesNotFit;
  *pdptr = static_cast<DevicePtrV1>(d);
  return CUDA_SUCCESS;
}

#pragma GCC diagnostic pop

CUresult CUDAAPI FakecudaGraphicsResourceGetMappedPointerV1(DevicePtrV1* pDevPtr,
                                                            unsigned int* pSize,
                                                            CUgraphicsResource resource) {
  CUdeviceptr d = 0;
  size_t size = 0;
  CUresult r = cuGraphicsResourceGetMappedPointer(pDevPtr != nullptr ? &d : nullptr,
                                                  pSize != nullptr ? &size : nullptr, resource);
  if (r != CUDA_SUCCESS) return r;
  if (d > kMax32 || size > kMax32) return kDoesNotFit;
  if (pDevPtr != nullptr) *pDevPtr = static_cast<DevicePtrV1>(d);
  if (pSize != nullptr) *pSize = static_cast<unsigned int>(size);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaGraphicsResourceSetMapFlagsV1(CUgraphicsResource resource,
                                                       unsigned int flags) {
  return cuGraphicsResourceSetMapFlags(resource, flags);
}

// ---- IPC ----

CUresult CUDAAPI FakecudaIpcOpenMemHandleV1(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                            unsigned int Flags) {
  return cuIpcOpenMemHandle(pdptr, handle, Flags);
}

// ---- Unified memory ----

CUresult CUDAAPI FakecudaMemAdviseV1(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                     CUdevice device) {
  return cuMemAdvise(devPtr, count, advice, Location(device));
}
CUresult CUDAAPI FakecudaMemPrefetchAsyncV1(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                            CUstream hStream) {
  return cuMemPrefetchAsync(devPtr, count, Location(dstDevice), 0, hStream);
}

// ---- Batched copies ----

CUresult CUDAAPI FakecudaMemcpyBatchAsyncV1(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes,
                                            size_t count, CUmemcpyAttributes* attrs,
                                            size_t* attrsIdxs, size_t numAttrs, size_t* failIdx,
                                            CUstream hStream) {
  CUresult r = cuMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream);
  if (failIdx != nullptr && r != CUDA_SUCCESS) *failIdx = SIZE_MAX;  // UNMEASURED
  return r;
}
CUresult CUDAAPI FakecudaMemcpy3DBatchAsyncV1(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList,
                                              size_t* failIdx, unsigned long long flags,
                                              CUstream hStream) {
  CUresult r = cuMemcpy3DBatchAsync(numOps, opList, flags, hStream);
  if (failIdx != nullptr && r != CUDA_SUCCESS) *failIdx = SIZE_MAX;  // UNMEASURED
  return r;
}

// ---- Graphs ----

CUresult CUDAAPI FakecudaGraphInstantiateV1(CUgraphExec* phGraphExec, CUgraph hGraph,
                                            CUgraphNode* phErrorNode, char* logBuffer,
                                            size_t bufferSize) {
  CUresult r = cuGraphInstantiate(phGraphExec, hGraph, 0);
  (void)phErrorNode;  // UNMEASURED: what the old form writes to these
  (void)logBuffer;
  (void)bufferSize;
  return r;
}

CUresult CUDAAPI FakecudaGraphExecUpdateV1(CUgraphExec hGraphExec, CUgraph hGraph,
                                           CUgraphNode* hErrorNode_out,
                                           CUgraphExecUpdateResult* updateResult_out) {
  if (hErrorNode_out == nullptr || updateResult_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResultInfo info;
  std::memset(&info, 0, sizeof info);
  CUresult r = cuGraphExecUpdate(hGraphExec, hGraph, &info);
  *hErrorNode_out = info.errorNode;
  *updateResult_out = info.result;
  return r;
}

CUresult CUDAAPI FakecudaGraphAddKernelNodeV1(CUgraphNode* phGraphNode, CUgraph hGraph,
                                              const CUgraphNode* dependencies,
                                              size_t numDependencies,
                                              const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (nodeParams == nullptr) {
    return cuGraphAddKernelNode(phGraphNode, hGraph, dependencies, numDependencies, nullptr);
  }
  const CUDA_KERNEL_NODE_PARAMS w = Widen(*nodeParams);
  return cuGraphAddKernelNode(phGraphNode, hGraph, dependencies, numDependencies, &w);
}



CUresult CUDAAPI FakecudaGraphExecKernelNodeSetParamsV1(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (nodeParams == nullptr) return cuGraphExecKernelNodeSetParams(hGraphExec, hNode, nullptr);
  const CUDA_KERNEL_NODE_PARAMS w = Widen(*nodeParams);
  return cuGraphExecKernelNodeSetParams(hGraphExec, hNode, &w);
}



}  // extern "C"
