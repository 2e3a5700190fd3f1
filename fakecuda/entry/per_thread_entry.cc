// Copyright 2026 The cuhal Authors.
// Entry points: the per-thread-default-stream variants (`_ptsz`, `_ptds`) of the listed entry
// points, as cuda.h names them under CUDA_API_PER_THREAD_DEFAULT_STREAM (the list is
// fakecuda/internal/per_thread_list.inc), plus cuStreamGetCtx_v2_ptsz, the variant of a newer
// ABI that cuGetProcAddress hands out (error_entry.cc's kNewerAbis). Each forwards to its legacy
// entry point, which does the fault accounting under the plain name, so a call counts once
// whichever variant was called:
//   _ptsz (takes a stream): a NULL stream becomes CU_STREAM_PER_THREAD; CU_STREAM_LEGACY and
//         created streams pass through unchanged, as with the real driver;
//   _ptds (synchronous, no stream argument): runs with the implicit default stream switched to
//         the calling thread's per-thread stream (ScopedPerThreadDefaultStream).
//
// This file is compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM so that cuda.h declares every
// variant defined here: a signature that differs from cuda.h's is a compile error. The legacy
// functions are reached through asm labels because their cuda.h names are macros for the
// per-thread ones in this translation unit.
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda.h>

#include "fakecuda/internal/per_thread_mode.h"

namespace {

template <typename T>
T PerThread(T value) {
  return value;
}
CUstream PerThread(CUstream stream) { return stream == nullptr ? CU_STREAM_PER_THREAD : stream; }

}  // namespace

// Declares the legacy `legacy_symbol` (same type as `sym`) and defines `sym` to forward to it.
#define FAKECUDA_PTSZ(sym, legacy_symbol, params, args)                                   \
  extern "C" decltype(::sym) fakecuda_legacy_##sym __asm__(#legacy_symbol);               \
  extern "C" CUresult CUDAAPI sym params { return fakecuda_legacy_##sym args; }
#define FAKECUDA_PTDS(sym, legacy_symbol, params, args)                                   \
  extern "C" decltype(::sym) fakecuda_legacy_##sym __asm__(#legacy_symbol);               \
  extern "C" CUresult CUDAAPI sym params {                                                \
    ::fakecuda::ScopedPerThreadDefaultStream per_thread;                                  \
    return fakecuda_legacy_##sym args;                                                    \
  }

// --- streams and events ---
FAKECUDA_PTSZ(cuStreamQuery_ptsz, cuStreamQuery, (CUstream s), (PerThread(s)))
FAKECUDA_PTSZ(cuStreamSynchronize_ptsz, cuStreamSynchronize, (CUstream s), (PerThread(s)))
FAKECUDA_PTSZ(cuStreamWaitEvent_ptsz, cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int f),
              (PerThread(s), e, f))
FAKECUDA_PTSZ(cuStreamGetFlags_ptsz, cuStreamGetFlags, (CUstream s, unsigned int* f),
              (PerThread(s), f))
FAKECUDA_PTSZ(cuStreamGetPriority_ptsz, cuStreamGetPriority, (CUstream s, int* p),
              (PerThread(s), p))
FAKECUDA_PTSZ(cuStreamGetCtx_ptsz, cuStreamGetCtx, (CUstream s, CUcontext* c), (PerThread(s), c))
FAKECUDA_PTSZ(cuStreamGetCtx_v2_ptsz, cuStreamGetCtx_v2,
              (CUstream s, CUcontext* c, CUgreenCtx* g), (PerThread(s), c, g))
FAKECUDA_PTSZ(cuLaunchHostFunc_ptsz, cuLaunchHostFunc, (CUstream s, CUhostFn fn, void* data),
              (PerThread(s), fn, data))
FAKECUDA_PTSZ(cuStreamAddCallback_ptsz, cuStreamAddCallback,
              (CUstream s, CUstreamCallback cb, void* data, unsigned int f),
              (PerThread(s), cb, data, f))
FAKECUDA_PTSZ(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2,
              (CUstream s, CUstreamCaptureMode mode), (PerThread(s), mode))
FAKECUDA_PTSZ(cuStreamEndCapture_ptsz, cuStreamEndCapture, (CUstream s, CUgraph* g),
              (PerThread(s), g))
FAKECUDA_PTSZ(cuStreamIsCapturing_ptsz, cuStreamIsCapturing,
              (CUstream s, CUstreamCaptureStatus* status), (PerThread(s), status))
FAKECUDA_PTSZ(cuStreamGetCaptureInfo_v3_ptsz, cuStreamGetCaptureInfo_v3,
              (CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
               const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* n),
              (PerThread(s), status, id, graph, deps, edges, n))
FAKECUDA_PTSZ(cuEventRecord_ptsz, cuEventRecord, (CUevent e, CUstream s), (e, PerThread(s)))
FAKECUDA_PTSZ(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags,
              (CUevent e, CUstream s, unsigned int f), (e, PerThread(s), f))

// --- memory ---
FAKECUDA_PTSZ(cuMemPrefetchAsync_v2_ptsz, cuMemPrefetchAsync_v2,
              (CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int f, CUstream s),
              (p, n, loc, f, PerThread(s)))
FAKECUDA_PTDS(cuMemcpy_ptds, cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n))
FAKECUDA_PTSZ(cuMemcpyAsync_ptsz, cuMemcpyAsync,
              (CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s), (d, src, n, PerThread(s)))
FAKECUDA_PTDS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2, (CUdeviceptr d, const void* s, size_t n),
              (d, s, n))
FAKECUDA_PTDS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2, (void* d, CUdeviceptr s, size_t n), (d, s, n))
FAKECUDA_PTDS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n),
              (d, s, n))
FAKECUDA_PTSZ(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2,
              (CUdeviceptr d, const void* src, size_t n, CUstream s), (d, src, n, PerThread(s)))
FAKECUDA_PTSZ(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2,
              (void* d, CUdeviceptr src, size_t n, CUstream s), (d, src, n, PerThread(s)))
FAKECUDA_PTSZ(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2,
              (CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s), (d, src, n, PerThread(s)))
FAKECUDA_PTDS(cuMemcpyPeer_ptds, cuMemcpyPeer,
              (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n),
              (d, dc, s, sc, n))
FAKECUDA_PTSZ(cuMemcpyPeerAsync_ptsz, cuMemcpyPeerAsync,
              (CUdeviceptr d, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s),
              (d, dc, src, sc, n, PerThread(s)))
FAKECUDA_PTDS(cuMemsetD8_v2_ptds, cuMemsetD8_v2, (CUdeviceptr d, unsigned char v, size_t n),
              (d, v, n))
FAKECUDA_PTDS(cuMemsetD16_v2_ptds, cuMemsetD16_v2, (CUdeviceptr d, unsigned short v, size_t n),
              (d, v, n))
FAKECUDA_PTDS(cuMemsetD32_v2_ptds, cuMemsetD32_v2, (CUdeviceptr d, unsigned int v, size_t n),
              (d, v, n))
FAKECUDA_PTSZ(cuMemsetD8Async_ptsz, cuMemsetD8Async,
              (CUdeviceptr d, unsigned char v, size_t n, CUstream s), (d, v, n, PerThread(s)))
FAKECUDA_PTSZ(cuMemsetD16Async_ptsz, cuMemsetD16Async,
              (CUdeviceptr d, unsigned short v, size_t n, CUstream s), (d, v, n, PerThread(s)))
FAKECUDA_PTSZ(cuMemsetD32Async_ptsz, cuMemsetD32Async,
              (CUdeviceptr d, unsigned int v, size_t n, CUstream s), (d, v, n, PerThread(s)))
FAKECUDA_PTSZ(cuMemAllocAsync_ptsz, cuMemAllocAsync, (CUdeviceptr* p, size_t n, CUstream s),
              (p, n, PerThread(s)))
FAKECUDA_PTSZ(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync,
              (CUdeviceptr* p, size_t n, CUmemoryPool pool, CUstream s),
              (p, n, pool, PerThread(s)))
FAKECUDA_PTSZ(cuMemFreeAsync_ptsz, cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, PerThread(s)))

// --- launches and graphs ---
FAKECUDA_PTSZ(cuLaunchKernel_ptsz, cuLaunchKernel,
              (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
               unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void** params,
               void** extra),
              (f, gx, gy, gz, bx, by, bz, shared, PerThread(s), params, extra))
// The stream is in the launch configuration: a copy with the per-thread stream resolved.
extern "C" decltype(::cuLaunchKernelEx_ptsz) fakecuda_legacy_cuLaunchKernelEx_ptsz __asm__(
    "cuLaunchKernelEx");
extern "C" CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f,
                                                  void** params, void** extra) {
  if (config == nullptr) return fakecuda_legacy_cuLaunchKernelEx_ptsz(config, f, params, extra);
  CUlaunchConfig copy = *config;
  copy.hStream = PerThread(copy.hStream);
  return fakecuda_legacy_cuLaunchKernelEx_ptsz(&copy, f, params, extra);
}
FAKECUDA_PTSZ(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel,
              (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
               unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void** params),
              (f, gx, gy, gz, bx, by, bz, shared, PerThread(s), params))
FAKECUDA_PTSZ(cuGraphLaunch_ptsz, cuGraphLaunch, (CUgraphExec g, CUstream s), (g, PerThread(s)))
FAKECUDA_PTSZ(cuGraphUpload_ptsz, cuGraphUpload, (CUgraphExec g, CUstream s), (g, PerThread(s)))

// --- stream ids, attributes, memory operations, capture into a graph (streamctx_entry.cc,
// capture_entry.cc) ---
FAKECUDA_PTSZ(cuStreamGetId_ptsz, cuStreamGetId, (CUstream s, unsigned long long* id),
              (PerThread(s), id))
FAKECUDA_PTSZ(cuStreamGetDevice_ptsz, cuStreamGetDevice, (CUstream s, CUdevice* d),
              (PerThread(s), d))
FAKECUDA_PTSZ(cuStreamGetAttribute_ptsz, cuStreamGetAttribute,
              (CUstream s, CUstreamAttrID a, CUstreamAttrValue* v), (PerThread(s), a, v))
FAKECUDA_PTSZ(cuStreamSetAttribute_ptsz, cuStreamSetAttribute,
              (CUstream s, CUstreamAttrID a, const CUstreamAttrValue* v), (PerThread(s), a, v))
FAKECUDA_PTSZ(cuStreamCopyAttributes_ptsz, cuStreamCopyAttributes, (CUstream dst, CUstream src),
              (PerThread(dst), PerThread(src)))
FAKECUDA_PTSZ(cuStreamWaitValue32_v2_ptsz, cuStreamWaitValue32_v2,
              (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f), (PerThread(s), a, v, f))
FAKECUDA_PTSZ(cuStreamWaitValue64_v2_ptsz, cuStreamWaitValue64_v2,
              (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned int f), (PerThread(s), a, v, f))
FAKECUDA_PTSZ(cuStreamWriteValue32_v2_ptsz, cuStreamWriteValue32_v2,
              (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f), (PerThread(s), a, v, f))
FAKECUDA_PTSZ(cuStreamWriteValue64_v2_ptsz, cuStreamWriteValue64_v2,
              (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned int f), (PerThread(s), a, v, f))
FAKECUDA_PTSZ(cuStreamBatchMemOp_v2_ptsz, cuStreamBatchMemOp_v2,
              (CUstream s, unsigned int n, CUstreamBatchMemOpParams* p, unsigned int f),
              (PerThread(s), n, p, f))
FAKECUDA_PTSZ(cuStreamAttachMemAsync_ptsz, cuStreamAttachMemAsync,
              (CUstream s, CUdeviceptr p, size_t n, unsigned int f), (PerThread(s), p, n, f))
FAKECUDA_PTSZ(cuStreamBeginCaptureToGraph_ptsz, cuStreamBeginCaptureToGraph,
              (CUstream s, CUgraph g, const CUgraphNode* d, const CUgraphEdgeData* e, size_t n,
               CUstreamCaptureMode m),
              (PerThread(s), g, d, e, n, m))
FAKECUDA_PTSZ(cuStreamUpdateCaptureDependencies_v2_ptsz, cuStreamUpdateCaptureDependencies_v2,
              (CUstream s, CUgraphNode* d, const CUgraphEdgeData* e, size_t n, unsigned int f),
              (PerThread(s), d, e, n, f))
// The per-thread form of cuStreamUpdateCaptureDependencies' CUDA 11.3 ABI, which the driver
// exports (measured, streamctx_probe "ptsz"); cuda.h declares it only for its own build.
extern "C" CUresult CUDAAPI fakecuda_legacy_cuStreamUpdateCaptureDependencies_ptsz(
    CUstream s, CUgraphNode* d, size_t n, unsigned int f)
    __asm__("cuStreamUpdateCaptureDependencies");
extern "C" CUresult CUDAAPI cuStreamUpdateCaptureDependencies_ptsz(CUstream s, CUgraphNode* d,
                                                                  size_t n, unsigned int f) {
  return fakecuda_legacy_cuStreamUpdateCaptureDependencies_ptsz(PerThread(s), d, n, f);
}

// The upload stream is in the parameters: a copy with the per-thread stream resolved, whose
// results are written back (graphx_entry.cc).
extern "C" decltype(::cuGraphInstantiateWithParams_ptsz)
    fakecuda_legacy_cuGraphInstantiateWithParams_ptsz __asm__("cuGraphInstantiateWithParams");
extern "C" CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(
    CUgraphExec* exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  if (params == nullptr) {
    return fakecuda_legacy_cuGraphInstantiateWithParams_ptsz(exec, graph, params);
  }
  CUDA_GRAPH_INSTANTIATE_PARAMS copy = *params;
  copy.hUploadStream = PerThread(copy.hUploadStream);
  const CUresult r = fakecuda_legacy_cuGraphInstantiateWithParams_ptsz(exec, graph, &copy);
  params->hErrNode_out = copy.hErrNode_out;
  params->result_out = copy.result_out;
  return r;
}
// --- batches, external semaphores, graphics (devext_batch_entry.cc, devext_entry.cc) ---
FAKECUDA_PTSZ(cuMemcpyBatchAsync_v2_ptsz, cuMemcpyBatchAsync_v2,
              (CUdeviceptr* d, CUdeviceptr* s, size_t* n, size_t c, CUmemcpyAttributes* a,
               size_t* ai, size_t na, CUstream st),
              (d, s, n, c, a, ai, na, PerThread(st)))
FAKECUDA_PTSZ(cuMemcpy3DBatchAsync_v2_ptsz, cuMemcpy3DBatchAsync_v2,
              (size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long f, CUstream s),
              (n, ops, f, PerThread(s)))
FAKECUDA_PTSZ(cuMemPrefetchBatchAsync_ptsz, cuMemPrefetchBatchAsync,
              (CUdeviceptr* p, size_t* n, size_t c, CUmemLocation* l, size_t* li, size_t nl,
               unsigned long long f, CUstream s),
              (p, n, c, l, li, nl, f, PerThread(s)))
FAKECUDA_PTSZ(cuMemDiscardBatchAsync_ptsz, cuMemDiscardBatchAsync,
              (CUdeviceptr* p, size_t* n, size_t c, unsigned long long f, CUstream s),
              (p, n, c, f, PerThread(s)))
FAKECUDA_PTSZ(cuMemDiscardAndPrefetchBatchAsync_ptsz, cuMemDiscardAndPrefetchBatchAsync,
              (CUdeviceptr* p, size_t* n, size_t c, CUmemLocation* l, size_t* li, size_t nl,
               unsigned long long f, CUstream s),
              (p, n, c, l, li, nl, f, PerThread(s)))
FAKECUDA_PTSZ(cuMemBatchDecompressAsync_ptsz, cuMemBatchDecompressAsync,
              (CUmemDecompressParams* p, size_t c, unsigned int f, size_t* e, CUstream s),
              (p, c, f, e, PerThread(s)))
FAKECUDA_PTSZ(cuSignalExternalSemaphoresAsync_ptsz, cuSignalExternalSemaphoresAsync,
              (const CUexternalSemaphore* e, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* p,
               unsigned int n, CUstream s),
              (e, p, n, PerThread(s)))
FAKECUDA_PTSZ(cuWaitExternalSemaphoresAsync_ptsz, cuWaitExternalSemaphoresAsync,
              (const CUexternalSemaphore* e, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* p,
               unsigned int n, CUstream s),
              (e, p, n, PerThread(s)))
FAKECUDA_PTSZ(cuGraphicsMapResources_ptsz, cuGraphicsMapResources,
              (unsigned int c, CUgraphicsResource* r, CUstream s), (c, r, PerThread(s)))
FAKECUDA_PTSZ(cuGraphicsUnmapResources_ptsz, cuGraphicsUnmapResources,
              (unsigned int c, CUgraphicsResource* r, CUstream s), (c, r, PerThread(s)))
// The legacy area (fakecuda/entry/legacy_entry.cc).
FAKECUDA_PTSZ(cuMemMapArrayAsync_ptsz, cuMemMapArrayAsync,
              (CUarrayMapInfo* list, unsigned int count, CUstream s), (list, count, PerThread(s)))
