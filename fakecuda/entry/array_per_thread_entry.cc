// Copyright 2026 The cuhal Authors.
// Entry points: the per-thread-default-stream variants (`_ptds`, `_ptsz`) of the copies of
// array_entry.cc and of the 2D memsets of memory_pitched_entry.cc, as cuda.h names them under
// CUDA_API_PER_THREAD_DEFAULT_STREAM. Each forwards to its legacy entry point (which does the
// fault accounting under the plain name), as per_thread_entry.cc's do:
//   _ptsz (takes a stream): a NULL stream becomes CU_STREAM_PER_THREAD;
//   _ptds (synchronous): runs with the implicit default stream switched to the calling thread's
//         per-thread stream (ScopedPerThreadDefaultStream).
// Compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM so that cuda.h declares every variant defined
// here (a signature that differs from cuda.h's is a compile error); the legacy functions are
// reached through asm labels because their cuda.h names are macros for the per-thread ones here.
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda.h>

#include "fakecuda/internal/per_thread_mode.h"

namespace {

CUstream PerThread(CUstream stream) { return stream == nullptr ? CU_STREAM_PER_THREAD : stream; }

}  // namespace

#define FAKECUDA_ARRAY_PTSZ(sym, legacy_symbol, params, args)                             \
  extern "C" decltype(::sym) fakecuda_legacy_##sym __asm__(#legacy_symbol);               \
  extern "C" CUresult CUDAAPI sym params { return fakecuda_legacy_##sym args; }
#define FAKECUDA_ARRAY_PTDS(sym, legacy_symbol, params, args)                             \
  extern "C" decltype(::sym) fakecuda_legacy_##sym __asm__(#legacy_symbol);               \
  extern "C" CUresult CUDAAPI sym params {                                                \
    ::fakecuda::ScopedPerThreadDefaultStream per_thread;                                  \
    return fakecuda_legacy_##sym args;                                                    \
  }

FAKECUDA_ARRAY_PTDS(cuMemcpyHtoA_v2_ptds, cuMemcpyHtoA_v2,
                    (CUarray a, size_t off, const void* h, size_t n), (a, off, h, n))
FAKECUDA_ARRAY_PTDS(cuMemcpyAtoH_v2_ptds, cuMemcpyAtoH_v2,
                    (void* h, CUarray a, size_t off, size_t n), (h, a, off, n))
FAKECUDA_ARRAY_PTDS(cuMemcpyDtoA_v2_ptds, cuMemcpyDtoA_v2,
                    (CUarray a, size_t off, CUdeviceptr d, size_t n), (a, off, d, n))
FAKECUDA_ARRAY_PTDS(cuMemcpyAtoD_v2_ptds, cuMemcpyAtoD_v2,
                    (CUdeviceptr d, CUarray a, size_t off, size_t n), (d, a, off, n))
FAKECUDA_ARRAY_PTDS(cuMemcpyAtoA_v2_ptds, cuMemcpyAtoA_v2,
                    (CUarray d, size_t doff, CUarray s, size_t soff, size_t n),
                    (d, doff, s, soff, n))
FAKECUDA_ARRAY_PTSZ(cuMemcpyHtoAAsync_v2_ptsz, cuMemcpyHtoAAsync_v2,
                    (CUarray a, size_t off, const void* h, size_t n, CUstream s),
                    (a, off, h, n, PerThread(s)))
FAKECUDA_ARRAY_PTSZ(cuMemcpyAtoHAsync_v2_ptsz, cuMemcpyAtoHAsync_v2,
                    (void* h, CUarray a, size_t off, size_t n, CUstream s),
                    (h, a, off, n, PerThread(s)))
FAKECUDA_ARRAY_PTDS(cuMemcpy2D_v2_ptds, cuMemcpy2D_v2, (const CUDA_MEMCPY2D* c), (c))
FAKECUDA_ARRAY_PTDS(cuMemcpy2DUnaligned_v2_ptds, cuMemcpy2DUnaligned_v2,
                    (const CUDA_MEMCPY2D* c), (c))
FAKECUDA_ARRAY_PTSZ(cuMemcpy2DAsync_v2_ptsz, cuMemcpy2DAsync_v2,
                    (const CUDA_MEMCPY2D* c, CUstream s), (c, PerThread(s)))
FAKECUDA_ARRAY_PTDS(cuMemcpy3D_v2_ptds, cuMemcpy3D_v2, (const CUDA_MEMCPY3D* c), (c))
FAKECUDA_ARRAY_PTSZ(cuMemcpy3DAsync_v2_ptsz, cuMemcpy3DAsync_v2,
                    (const CUDA_MEMCPY3D* c, CUstream s), (c, PerThread(s)))
FAKECUDA_ARRAY_PTDS(cuMemcpy3DPeer_ptds, cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER* c), (c))
FAKECUDA_ARRAY_PTSZ(cuMemcpy3DPeerAsync_ptsz, cuMemcpy3DPeerAsync,
                    (const CUDA_MEMCPY3D_PEER* c, CUstream s), (c, PerThread(s)))
FAKECUDA_ARRAY_PTDS(cuMemsetD2D8_v2_ptds, cuMemsetD2D8_v2,
                    (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h), (d, p, v, w, h))
FAKECUDA_ARRAY_PTDS(cuMemsetD2D16_v2_ptds, cuMemsetD2D16_v2,
                    (CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h),
                    (d, p, v, w, h))
FAKECUDA_ARRAY_PTDS(cuMemsetD2D32_v2_ptds, cuMemsetD2D32_v2,
                    (CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h), (d, p, v, w, h))
FAKECUDA_ARRAY_PTSZ(cuMemsetD2D8Async_ptsz, cuMemsetD2D8Async,
                    (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s),
                    (d, p, v, w, h, PerThread(s)))
FAKECUDA_ARRAY_PTSZ(cuMemsetD2D16Async_ptsz, cuMemsetD2D16Async,
                    (CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s),
                    (d, p, v, w, h, PerThread(s)))
FAKECUDA_ARRAY_PTSZ(cuMemsetD2D32Async_ptsz, cuMemsetD2D32Async,
                    (CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h, CUstream s),
                    (d, p, v, w, h, PerThread(s)))
