// Copyright 2026 The cuhal Authors.
// Entry points: IPC memory and event handles (cuIpcGetMemHandle, cuIpcOpenMemHandle_v2,
// cuIpcCloseMemHandle, cuIpcGetEventHandle, cuIpcOpenEventHandle). The handle format and why
// handles of other processes cannot be opened: fakecuda/internal/ipc_model.h. The answers are
// modelled from cuda.h and UNMEASURED (ci/gpu-probes/misc_probe.cc, cases ipc:*, asks the H200;
// docs/driver_facts.md, "IPC, profiler, coredump attributes, green contexts (not measured)").
#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/ipc_model.h"

namespace fakecuda {
namespace {

// The answer for opening a handle in the process that exported it (any context of it).
constexpr CUresult kSameProcessOpen = CUDA_ERROR_INVALID_CONTEXT;
// The answer for a handle the fake cannot read (zeros, garbage, another kind's handle).
constexpr CUresult kUnreadableHandle = CUDA_ERROR_INVALID_VALUE;

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
  (void)ctx;
  const fakecuda::Allocation* a = st->memory().At(static_cast<std::uintptr_t>(dptr));
  if (a == nullptr || !fakecuda::Exportable(*a)) return CUDA_ERROR_INVALID_VALUE;
  IpcHandleBits bits;
  bits.kind = IpcKind::kMemory;
  bits.pid = fakecuda::CurrentPid();
  bits.driver_serial = st->serial;
  bits.object_id = a->id;
  bits.base = a->base;
  bits.size = a->size;
  bits.device = a->device;
  fakecuda::EncodeIpcHandle(bits, pHandle->reserved);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuIpcGetMemHandle");
}

CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                    unsigned int Flags) try {
  FAKECUDA_ENTER(cuIpcOpenMemHandle)
  if (pdptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if ((Flags & ~static_cast<unsigned>(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  IpcHandleBits bits;
  if (!fakecuda::DecodeIpcHandle(handle.reserved, IpcKind::kMemory, &bits)) {
    return fakecuda::kUnreadableHandle;
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
  if (pHandle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::Event* e = st->FindEvent(event);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if ((e->flags & CU_EVENT_INTERPROCESS) == 0) return CUDA_ERROR_INVALID_VALUE;
  IpcHandleBits bits;
  bits.kind = IpcKind::kEvent;
  bits.pid = fakecuda::CurrentPid();
  bits.driver_serial = st->serial;
  bits.object_id = e->id;
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
    return fakecuda::kUnreadableHandle;
  }
  if (bits.pid == fakecuda::CurrentPid()) return fakecuda::kSameProcessOpen;
  fakecuda::ReportCrossProcessOpen("cuIpcOpenEventHandle", bits.pid);
  return CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuIpcOpenEventHandle");
}

}  // extern "C"
