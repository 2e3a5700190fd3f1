// Copyright 2026 The cuhal Authors.
// Entry points: IPC memory and event handles (cuIpcGetMemHandle, cuIpcOpenMemHandle_v2,
// cuIpcCloseMemHandle, cuIpcGetEventHandle, cuIpcOpenEventHandle). The handle format and why
// handles of other processes cannot be opened: fakecuda/internal/ipc_model.h. The answers in the
// exporting process are the ones measured 2026-12-06 on H100 80GB HBM3, driver 580.159.04
// (ci/gpu-probes/misc_probe.cc, cases ipc:*); across processes the real driver maps the memory
// and the event (cases ipc:child:*), which the fake cannot (CUDA_ERROR_NOT_SUPPORTED).
#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/ipc_model.h"

namespace fakecuda {
namespace {

// The answer for opening a handle in the process that exported it (any context of it).
constexpr CUresult kSameProcessOpen = CUDA_ERROR_INVALID_CONTEXT;
// The answers for a handle the fake cannot read (zeros, garbage, another kind's handle), as
// measured: a memory handle CUDA_ERROR_INVALID_VALUE, an event handle CUDA_ERROR_MAP_FAILED.
constexpr CUresult kUnreadableMemHandle = CUDA_ERROR_INVALID_VALUE;
constexpr CUresult kUnreadableEventHandle = CUDA_ERROR_MAP_FAILED;

// Whether allocation `a` can be exported: cuMemAlloc / cuMemAllocPitch memory only.
bool Exportable(const Allocation& a) {
  return a.type == MemoryType::kDevice && !a.module_global;
}

}  // namespace
}  // namespace fakecuda

using fakecuda::IpcHandleBits;
using fakecuda::IpcKind;

extern "C" {

CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) try {
  FAKECUDA_ENTER(cuIpcGetMemHandle)
  if (pHandle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  // Measured: an interior pointer exports its allocation (the base's handle).
  const fakecuda::Allocation* a = st->memory().Find(static_cast<std::uintptr_t>(dptr));
  if (a == nullptr || !fakecuda::Exportable(*a)) return CUDA_ERROR_INVALID_VALUE;
  IpcHandleBits bits;
  bits.kind = IpcKind::kMemory;
  bits.pid = fakecuda::CurrentPid();
  bits.driver_serial = st->serial;
  bits.object_id = a->id;
  bits.base = a->base;
  bits.size = a->size;
  bits.device = a->device;
  bits.context_id = ctx->id;  // measured: another context's export of it differs
  fakecuda::EncodeIpcHandle(bits, pHandle->reserved);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuIpcGetMemHandle");
}

CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                    unsigned int Flags) try {
  FAKECUDA_ENTER(cuIpcOpenMemHandle)
  if (pdptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // cuda.h: Flags "must be specified as CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS". Measured: 0 and 2
  // are CUDA_ERROR_INVALID_VALUE, 0xffffffff passes (the other bits are not looked at).
  if ((Flags & CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == 0) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  IpcHandleBits bits;
  if (!fakecuda::DecodeIpcHandle(handle.reserved, IpcKind::kMemory, &bits)) {
    return fakecuda::kUnreadableMemHandle;
  }
  if (bits.pid == fakecuda::CurrentPid()) return fakecuda::kSameProcessOpen;
  fakecuda::ReportCrossProcessOpen("cuIpcOpenMemHandle", bits.pid);
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuIpcOpenMemHandle");
}

CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr) try {
  FAKECUDA_ENTER(cuIpcCloseMemHandle)
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  (void)dptr;
  // Nothing is ever opened here (ipc_model.h), so no pointer is an opened mapping.
  return CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuIpcCloseMemHandle");
}

CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) try {
  FAKECUDA_ENTER(cuIpcGetEventHandle)
  // Measured: no current context is CUDA_ERROR_INVALID_CONTEXT whatever the event; a null event
  // CUDA_ERROR_INVALID_VALUE; an event without CU_EVENT_INTERPROCESS CUDA_ERROR_INVALID_HANDLE
  // with the handle zeroed. (A garbage event crashes the real driver; the fake answers
  // CUDA_ERROR_INVALID_HANDLE and leaves the handle alone.)
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  if (pHandle == nullptr || event == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::Event* e = st->FindEvent(event);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if ((e->flags & CU_EVENT_INTERPROCESS) == 0) {
    std::memset(pHandle->reserved, 0, sizeof pHandle->reserved);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  IpcHandleBits bits;
  bits.kind = IpcKind::kEvent;
  bits.pid = fakecuda::CurrentPid();
  bits.driver_serial = st->serial;
  bits.object_id = e->id;
  bits.context_id = e->ctx_id;
  if (const fakecuda::Context* c = st->contexts().Find(e->ctx_id); c != nullptr) {
    bits.device = c->device;
  }
  fakecuda::EncodeIpcHandle(bits, pHandle->reserved);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuIpcGetEventHandle");
}

CUresult CUDAAPI cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) try {
  FAKECUDA_ENTER(cuIpcOpenEventHandle)
  if (phEvent == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  IpcHandleBits bits;
  if (!fakecuda::DecodeIpcHandle(handle.reserved, IpcKind::kEvent, &bits)) {
    return fakecuda::kUnreadableEventHandle;
  }
  if (bits.pid == fakecuda::CurrentPid()) return fakecuda::kSameProcessOpen;
  fakecuda::ReportCrossProcessOpen("cuIpcOpenEventHandle", bits.pid);
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuIpcOpenEventHandle");
}

}  // extern "C"
