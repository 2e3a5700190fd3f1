// Copyright 2026 The cuhal Authors.
// Entry points: device resources and green contexts (cuDeviceGetDevResource,
// cuCtxGetDevResource, cuGreenCtxGetDevResource, cuDevSmResourceSplitByCount,
// cuDevResourceGenerateDesc, cuGreenCtxCreate/Destroy, cuCtxFromGreenCtx, cuGreenCtxGetId,
// cuGreenCtxStreamCreate, cuStreamGetGreenCtx, cuGreenCtxRecordEvent, cuGreenCtxWaitEvent).
// The model, and how a green context maps onto the fake's contexts:
// fakecuda/internal/resource_model.h. The answers follow what was measured 2026-12-06 on H100
// 80GB HBM3, driver 580.159.04 (ci/gpu-probes/misc_probe.cc, cases green:*); where the real
// driver crashed (garbage or null handles) the fake answers the error named at the entry point.
#include <algorithm>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/resource_model.h"

using fakecuda::GreenContext;
using fakecuda::ResourceModel;

namespace fakecuda {
namespace {

// The stream priority range of every fake device (stream_entry.cc: 0 least, -5 greatest).
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuDeviceGetDevResource(CUdevice device, CUdevResource* resource,
                                        CUdevResourceType type) try {
  FAKECUDA_ENTER(cuDeviceGetDevResource)
  if (!fakecuda::ValidDevice(st, device)) return CUDA_ERROR_INVALID_DEVICE;
  if (resource == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->resources().DeviceResource(device, type, resource);
} catch (...) {
  return ::fakecuda::EntryFailed("cuDeviceGetDevResource");
}

CUresult CUDAAPI cuCtxGetDevResource(CUcontext hCtx, CUdevResource* resource,
                                     CUdevResourceType type) try {
  FAKECUDA_ENTER(cuCtxGetDevResource)
  // Measured: a null context is CUDA_ERROR_INVALID_CONTEXT (not the current one).
  fakecuda::Context* c = st->FindContext(hCtx);
  if (c == nullptr) {
    return fakecuda::DecodeHandle(fakecuda::HandleKind::kContext, hCtx) != 0
               ? CUDA_ERROR_CONTEXT_IS_DESTROYED
               : CUDA_ERROR_INVALID_CONTEXT;
  }
  if (resource == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return st->resources().ContextResource(*c, type, resource);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxGetDevResource");
}

CUresult CUDAAPI cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource* resource,
                                          CUdevResourceType type) try {
  FAKECUDA_ENTER(cuGreenCtxGetDevResource)
  return st->resources().GreenResource(hCtx, type, resource);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGreenCtxGetDevResource");
}

CUresult CUDAAPI cuDevSmResourceSplitByCount(CUdevResource* result, unsigned int* nbGroups,
                                             const CUdevResource* input,
                                             CUdevResource* remaining, unsigned int useFlags,
                                             unsigned int minCount) try {
  FAKECUDA_ENTER(cuDevSmResourceSplitByCount)
  return st->resources().Split(result, nbGroups, input, remaining, useFlags, minCount);
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevSmResourceSplitByCount");
}

CUresult CUDAAPI cuDevResourceGenerateDesc(CUdevResourceDesc* phDesc, CUdevResource* resources,
                                           unsigned int nbResources) try {
  FAKECUDA_ENTER(cuDevResourceGenerateDesc)
  return st->resources().GenerateDesc(phDesc, resources, nbResources);
} catch (...) {
  return ::fakecuda::EntryFailed("cuDevResourceGenerateDesc");
}

CUresult CUDAAPI cuGreenCtxCreate(CUgreenCtx* phCtx, CUdevResourceDesc desc, CUdevice dev,
                                  unsigned int flags) try {
  FAKECUDA_ENTER(cuGreenCtxCreate)
  return st->resources().CreateGreen(phCtx, desc, dev, flags);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGreenCtxCreate");
}

CUresult CUDAAPI cuGreenCtxDestroy(CUgreenCtx hCtx) try {
  FAKECUDA_ENTER(cuGreenCtxDestroy)
  FAKECUDA_REFUSE_IN_USER_WORK()
  return st->resources().DestroyGreen(hCtx);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGreenCtxDestroy");
}

CUresult CUDAAPI cuCtxFromGreenCtx(CUcontext* pContext, CUgreenCtx hCtx) try {
  FAKECUDA_ENTER(cuCtxFromGreenCtx)
  if (pContext == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err = CUDA_SUCCESS;
  GreenContext* g = st->resources().FindGreen(hCtx, &err);
  if (g == nullptr) return err;
  *pContext = fakecuda::EncodeHandle<CUcontext>(fakecuda::HandleKind::kContext, g->ctx_id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuCtxFromGreenCtx");
}

CUresult CUDAAPI cuGreenCtxGetId(CUgreenCtx greenCtx, unsigned long long* greenCtxId) try {
  FAKECUDA_ENTER(cuGreenCtxGetId)
  CUresult err = CUDA_SUCCESS;
  GreenContext* g = st->resources().FindGreen(greenCtx, &err);
  if (g == nullptr) return err;
  if (greenCtxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *greenCtxId = g->id;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGreenCtxGetId");
}

CUresult CUDAAPI cuGreenCtxStreamCreate(CUstream* phStream, CUgreenCtx greenCtx,
                                        unsigned int flags, int priority) try {
  FAKECUDA_ENTER(cuGreenCtxStreamCreate)
  if (phStream == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult err = CUDA_SUCCESS;
  GreenContext* g = st->resources().FindGreen(greenCtx, &err);
  if (g == nullptr) return err;
  // cuda.h: CU_STREAM_NON_BLOCKING is required.
  if (flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::Context* ctx = st->contexts().Find(g->ctx_id);
  if (ctx == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  priority = std::clamp(priority, fakecuda::kGreatestPriority, fakecuda::kLeastPriority);
  fakecuda::Stream* s = st->NewStream(ctx, flags, priority);
  *phStream = fakecuda::EncodeHandle<CUstream>(fakecuda::HandleKind::kStream, s->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGreenCtxStreamCreate");
}

CUresult CUDAAPI cuStreamGetGreenCtx(CUstream hStream, CUgreenCtx* phCtx) try {
  FAKECUDA_ENTER(cuStreamGetGreenCtx)
  CUresult err = CUDA_SUCCESS;
  fakecuda::Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  if (phCtx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const GreenContext* g = st->resources().GreenOfContext(s->ctx_id);
  *phCtx = g != nullptr ? ResourceModel::GreenHandle(g->id) : nullptr;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuStreamGetGreenCtx");
}

CUresult CUDAAPI cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent) try {
  FAKECUDA_ENTER(cuGreenCtxRecordEvent)
  CUresult err = CUDA_SUCCESS;
  GreenContext* g = st->resources().FindGreen(hCtx, &err);
  if (g == nullptr) return err;
  return st->resources().RecordEvent(*g, hEvent);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGreenCtxRecordEvent");
}

CUresult CUDAAPI cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent) try {
  FAKECUDA_ENTER(cuGreenCtxWaitEvent)
  CUresult err = CUDA_SUCCESS;
  GreenContext* g = st->resources().FindGreen(hCtx, &err);
  if (g == nullptr) return err;
  return st->resources().WaitEvent(*g, hEvent);
} catch (...) {
  return ::fakecuda::EntryFailed("cuGreenCtxWaitEvent");
}

}  // extern "C"
