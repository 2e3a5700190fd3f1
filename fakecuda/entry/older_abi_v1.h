// Copyright 2026 The cuhal Authors.
// The older ABIs fakecuda/entry/olderabi_entry.cc defines under the plain names of cuda.h's
// versioned entry points (cuMemAlloc, cuMemcpyHtoD, cuCtxDestroy, cuGraphInstantiate, ...), with
// the old signatures of cuda.h's __CUDA_API_VERSION_INTERNAL section, declared once for it and
// for error_entry.cc's cuGetProcAddress table. `unsigned int` device pointers are cuda.h's
// CUdeviceptr_v1; CUDA_KERNEL_NODE_PARAMS_v1 is the CUDA 10 layout (no kern/ctx fields).
#ifndef CUHAL_FAKECUDA_ENTRY_OLDER_ABI_V1_H_
#define CUHAL_FAKECUDA_ENTRY_OLDER_ABI_V1_H_

#include <cuda.h>

#include <cstddef>

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
// Linking and IPC (same signatures as the current forms).
CUresult CUDAAPI FakecudaLinkCreateV1(unsigned int numOptions, CUjit_option* options,
                                      void** optionValues, CUlinkState* stateOut)
    __asm__("cuLinkCreate");
CUresult CUDAAPI FakecudaLinkAddDataV1(CUlinkState state, CUjitInputType type, void* data,
                                       size_t size, const char* name, unsigned int numOptions,
                                       CUjit_option* options, void** optionValues)
    __asm__("cuLinkAddData");
CUresult CUDAAPI FakecudaLinkAddFileV1(CUlinkState state, CUjitInputType type, const char* path,
                                       unsigned int numOptions, CUjit_option* options,
                                       void** optionValues) __asm__("cuLinkAddFile");
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
// Stream memory operations, v1 (needed the driver's stream mem-ops switch; CUDA 8.0).
CUresult CUDAAPI FakecudaStreamWaitValue32V1(CUstream s, CUdeviceptr addr, cuuint32_t value,
                                             unsigned int flags) __asm__("cuStreamWaitValue32");
CUresult CUDAAPI FakecudaStreamWaitValue64V1(CUstream s, CUdeviceptr addr, cuuint64_t value,
                                             unsigned int flags) __asm__("cuStreamWaitValue64");
CUresult CUDAAPI FakecudaStreamWriteValue32V1(CUstream s, CUdeviceptr addr, cuuint32_t value,
                                              unsigned int flags) __asm__("cuStreamWriteValue32");
CUresult CUDAAPI FakecudaStreamWriteValue64V1(CUstream s, CUdeviceptr addr, cuuint64_t value,
                                              unsigned int flags) __asm__("cuStreamWriteValue64");
CUresult CUDAAPI FakecudaStreamBatchMemOpV1(CUstream s, unsigned int count,
                                            CUstreamBatchMemOpParams* paramArray,
                                            unsigned int flags) __asm__("cuStreamBatchMemOp");
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
CUresult CUDAAPI FakecudaGraphKernelNodeGetParamsV1(CUgraphNode hNode,
                                                    CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
    __asm__("cuGraphKernelNodeGetParams");
CUresult CUDAAPI FakecudaGraphKernelNodeSetParamsV1(CUgraphNode hNode,
                                                    const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
    __asm__("cuGraphKernelNodeSetParams");
CUresult CUDAAPI FakecudaGraphExecKernelNodeSetParamsV1(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
    __asm__("cuGraphExecKernelNodeSetParams");
CUresult CUDAAPI FakecudaGraphRemoveDependenciesV1(CUgraph hGraph, const CUgraphNode* from,
                                                   const CUgraphNode* to, size_t numDependencies)
    __asm__("cuGraphRemoveDependencies");
CUresult CUDAAPI FakecudaStreamUpdateCaptureDependenciesV1(CUstream hStream,
                                                           CUgraphNode* dependencies,
                                                           size_t numDependencies,
                                                           unsigned int flags)
    __asm__("cuStreamUpdateCaptureDependencies");
}

#endif  // CUHAL_FAKECUDA_ENTRY_OLDER_ABI_V1_H_
