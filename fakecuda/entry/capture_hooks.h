// Copyright 2026 The cuhal Authors.
// Stream capture as the other entry points see it (defined in fakecuda/entry/capture_entry.cc).
// Every entry point that enqueues work on a stream asks here first: when the stream takes part in
// a capture sequence, the work becomes a graph node instead of running (or the call is refused);
// synchronizing entry points ask whether they are allowed while streams capture, and invalidate
// the capture when not. Each hook is a no-op costing one emptiness test when nothing captures.
//
// The `Capture*` work hooks return true when capture handled the call; *result is then the
// entry point's answer. They return false when the call proceeds as usual (the stream does not
// capture; or, for the handle-taking ones, the stream handle is invalid, which the usual path
// reports). The `CaptureCheck*` hooks return the code to answer instead of proceeding
// (CUDA_SUCCESS: proceed). The rules are measured on the H200 (docs/driver_facts.md, "Stream
// capture and graphs").
#ifndef CUHAL_FAKECUDA_ENTRY_CAPTURE_HOOKS_H_
#define CUHAL_FAKECUDA_ENTRY_CAPTURE_HOOKS_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

struct FunctionState;
struct LaunchConfig;

// --- work on a stream ---
// cuLaunchKernel (after its arguments were validated): a kernel node.
bool CaptureKernel(DriverState* st, Stream* s, const FunctionState& f, const LaunchConfig& config,
                   std::vector<std::byte>* params, CUresult* result) CUHAL_REQUIRES(st->mu);
// cuLaunchHostFunc: a host node.
bool CaptureHostFunction(DriverState* st, Stream* s, CUhostFn fn, void* data, CUresult* result)
    CUHAL_REQUIRES(st->mu);
// The asynchronous copies (types are CU_MEMORYTYPE_HOST/DEVICE/UNIFIED; called before the
// entry point resolves its memory, which may be graph memory not yet allocated): a memcpy node.
bool CaptureCopy(DriverState* st, CUstream h, CUmemorytype dst_type, std::uintptr_t dst,
                 CUmemorytype src_type, std::uintptr_t src, std::size_t bytes, CUresult* result)
    CUHAL_REQUIRES(st->mu);
// The asynchronous copies with a CUDA array side (cuMemcpyHtoAAsync, cuMemcpyAtoHAsync,
// cuMemcpy2DAsync, cuMemcpy3DAsync), their sides already resolved by the caller: a memcpy node
// of `copy` (captured on the H100, measured 2026-12-06: array_probe "capture").
bool CaptureCopy3D(DriverState* st, CUstream h, const CUDA_MEMCPY3D& copy, CUresult* result)
    CUHAL_REQUIRES(st->mu);
// cuMemsetD{8,16,32}Async (one row of `count` elements) and cuMemsetD2D{8,16,32}Async
// (`height` rows, `pitch` bytes apart, unused for one row): a memset node.
bool CaptureMemset(DriverState* st, CUstream h, std::uintptr_t dst, unsigned value,
                   std::size_t element_size, std::size_t count, CUresult* result,
                   std::size_t pitch = 0, std::size_t height = 1) CUHAL_REQUIRES(st->mu);
// cuEventRecord (after the event/stream context check): the event becomes a captured event.
// Also forgets a previous capture of the event when `s` does not capture.
bool CaptureRecordEvent(DriverState* st, Event* e, Stream* s, CUresult* result)
    CUHAL_REQUIRES(st->mu);
// cuStreamWaitEvent: joins `s` to the event's capture, or adds the dependency.
bool CaptureWaitEvent(DriverState* st, Stream* s, Event* e, unsigned flags, CUresult* result)
    CUHAL_REQUIRES(st->mu);
// cuMemAllocAsync / cuMemAllocFromPoolAsync (bytes > 0): a memory alloc node on `device`.
bool CaptureAlloc(DriverState* st, Stream* s, std::size_t bytes, int device, CUdeviceptr* dptr,
                  CUresult* result) CUHAL_REQUIRES(st->mu);
// cuMemFreeAsync (dptr != 0): a memory free node.
bool CaptureFree(DriverState* st, Stream* s, CUdeviceptr dptr, CUresult* result)
    CUHAL_REQUIRES(st->mu);
// Work that cannot be captured (cuGraphLaunch, cuStreamAddCallback, cuMemPrefetchAsync, fakenccl
// work): refused with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, invalidating the capture.
bool CaptureRefuse(DriverState* st, Stream* s, CUresult* result) CUHAL_REQUIRES(st->mu);

// --- calls that synchronize or are unsafe while streams capture ---
// cuStreamSynchronize / cuStreamQuery of `s`.
CUresult CaptureCheckStreamSync(DriverState* st, const Stream* s) CUHAL_REQUIRES(st->mu);
// cuEventSynchronize / cuEventQuery of `e`.
CUresult CaptureCheckEventSync(DriverState* st, const Event* e) CUHAL_REQUIRES(st->mu);
// cuCtxSynchronize of context `ctx_id`.
CUresult CaptureCheckContextSync(DriverState* st, std::uint64_t ctx_id) CUHAL_REQUIRES(st->mu);
// A "potentially unsafe" call (cuMemAlloc, cuMemFree, host allocations; with refuse = false,
// module loads, which succeed but invalidate): what the calling thread's capture mode allows.
CUresult CaptureCheckUnsafe(DriverState* st, bool refuse) CUHAL_REQUIRES(st->mu);

// --- handles ---
// The answer of the stream entry points of fakecuda/entry/streamctx_entry.cc (and capture into a
// graph) when ResolveStream failed with `err`: a stream handle the fake once gave out (destroyed
// since) is CUDA_ERROR_CONTEXT_IS_DESTROYED, as the H100 answered (streamctx_probe "destroyed:*");
// anything else keeps `err`.
CUresult StaleStreamError(CUstream handle, CUresult err);

// --- teardown ---
// A stream destroyed while capturing: its capture is invalidated (its origin's: ended).
void CaptureOnStreamDestroyed(DriverState* st, std::uint64_t stream_id) CUHAL_REQUIRES(st->mu);
// (A context torn down: DriverState::TeardownContext discards its captures through GraphModel.)

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_ENTRY_CAPTURE_HOOKS_H_
