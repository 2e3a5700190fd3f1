// Copyright 2026 The cuhal Authors.
// Entry points: GPU coredump attributes, of the current context (cuCoredumpGetAttribute,
// cuCoredumpSetAttribute) and process-wide (the ...Global forms). The settings are
// fakecuda/internal/coredump_model.h's, as measured 2026-12-06 on H100 80GB HBM3, driver
// 580.159.04 (ci/gpu-probes/misc_probe.cc, cases coredump:* and noinit): the process-wide forms
// answer before cuInit as after it (FAKECUDA_ENTER_ANY_INIT); the per-context ones need cuInit
// and a current context.
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/coredump_model.h"

// FAKECUDA_ENTER without the cuInit check (measured: the ...Global forms work before cuInit).
#define FAKECUDA_ENTER_ANY_INIT(name) \
  FAKECUDA_ENTER_NOLOCK_NAMED(#name)  \
  cuhal::MutexLock lock(st->mu);

extern "C" {

CUresult CUDAAPI cuCoredumpGetAttribute(CUcoredumpSettings attrib, void* value, size_t* size) try {
  FAKECUDA_ENTER(cuCoredumpGetAttribute)
  FAKECUDA_REQUIRE_CONTEXT()
  fakecuda::CoredumpModel& m = st->coredump();
  return m.Get(m.ForContext(ctx->id, ctx->flags), attrib, value, size, /*per_context=*/true);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCoredumpGetAttribute");
}

CUresult CUDAAPI cuCoredumpGetAttributeGlobal(CUcoredumpSettings attrib, void* value,
                                              size_t* size) try {
  FAKECUDA_ENTER_ANY_INIT(cuCoredumpGetAttributeGlobal)
  fakecuda::CoredumpModel& m = st->coredump();
  return m.Get(m.global(), attrib, value, size, /*per_context=*/false);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCoredumpGetAttributeGlobal");
}

CUresult CUDAAPI cuCoredumpSetAttribute(CUcoredumpSettings attrib, void* value, size_t* size) try {
  FAKECUDA_ENTER(cuCoredumpSetAttribute)
  FAKECUDA_REQUIRE_CONTEXT()
  fakecuda::CoredumpModel& m = st->coredump();
  return m.Set(&m.ForContext(ctx->id, ctx->flags), attrib, value, size, /*per_context=*/true);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCoredumpSetAttribute");
}

CUresult CUDAAPI cuCoredumpSetAttributeGlobal(CUcoredumpSettings attrib, void* value,
                                              size_t* size) try {
  FAKECUDA_ENTER_ANY_INIT(cuCoredumpSetAttributeGlobal)
  fakecuda::CoredumpModel& m = st->coredump();
  return m.Set(&m.global(), attrib, value, size, /*per_context=*/false);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCoredumpSetAttributeGlobal");
}

}  // extern "C"
