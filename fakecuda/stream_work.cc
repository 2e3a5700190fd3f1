// Copyright 2026 The cuhal Authors.
#include "fakecuda/stream_work.h"

#include "core/base/mutex.h"
#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/driver_state.h"
#include "fakecuda/race/race_detector.h"

namespace fakecuda {

CUresult EnqueueStreamWork(CUstream stream, StreamWork work) {
  DriverState* st = InstalledState();
  if (st == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  // Not an entry point: no caller of one to name the race detector's call site by (it unwinds).
  if (st->race() != nullptr) NoteRaceCaller(nullptr);
  CUresult err;
  Stream* s = st->ResolveStream(stream, &err);
  if (s == nullptr) return err;
  if (CUresult sticky = st->contexts().StickyError(s->ctx_id); sticky != CUDA_SUCCESS) {
    return sticky;
  }
  // Collectives are not captured (not modelled): refused, invalidating the capture.
  if (CUresult r = CUDA_SUCCESS; CaptureRefuse(st, s, &r)) return r;
  Op op;
  op.what = work.what;
  op.ready = std::move(work.ready);
  op.body = std::move(work.run);
  op.cost_us = work.cost_us;
  if (st->race() != nullptr) op.accesses = std::move(work.accesses);
  st->Enqueue(s, std::move(op));
  return TakeRaceVerdict();
}

void NotifyStreamWork() {
  DriverState* st = InstalledState();
  if (st == nullptr) return;
  { cuhal::MutexLock lock(st->mu); }
  st->cv.NotifyAll();
}

std::byte* TranslateDevicePointer(CUdeviceptr ptr, std::size_t bytes, int* device) {
  DriverState* st = InstalledState();
  if (st == nullptr) return nullptr;
  cuhal::MutexLock lock(st->mu);
  Allocation* a = st->FindAllocation(ptr, bytes == 0 ? 1 : bytes);
  if (a == nullptr) return nullptr;
  if (device) *device = a->device;
  return a->data + (ptr - a->base);
}

int StreamDevice(CUstream stream) {
  DriverState* st = InstalledState();
  if (st == nullptr) return -1;
  cuhal::MutexLock lock(st->mu);
  CUresult err;
  Stream* s = st->ResolveStream(stream, &err);
  if (s == nullptr) return -1;
  const Context* c = st->contexts().Find(s->ctx_id);
  return c == nullptr ? -1 : c->device;
}

}  // namespace fakecuda
