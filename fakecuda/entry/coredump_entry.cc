// Copyright 2026 The cuhal Authors.
// Entry points: GPU coredump attributes, of the current context (cuCoredumpGetAttribute,
// cuCoredumpSetAttribute) and process-wide (the ...Global forms). The settings are
// fakecuda/internal/coredump_model.h's; UNMEASURED (ci/gpu-probes/misc_probe.cc, cases
// coredump:*, asks the H200; docs/driver_facts.md, "IPC, profiler, coredump attributes, green contexts (not measured)").
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/coredump_model.h"

extern "C" {

CUresult CUDAAPI cuCoredumpGetAttribute(CUcoredumpSettings attrib, void* value, size_t* size) try {
  FAKECUDA_ENTER(cuCoredumpGetAttribute)
  FAKECUDA_REQUIRE_CONTEXT()
  fakecuda::CoredumpModel& m = st->coredump();
  return m.Get(m.ForContext(ctx->id, ctx->flags), attrib, value, size);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCoredumpGetAttribute");
}

CUresult CUDAAPI cuCoredumpGetAttributeGlobal(CUcoredumpSettings attrib, void* value,
                                              size_t* size) try {
  FAKECUDA_ENTER(cuCoredumpGetAttributeGlobal)
  fakecuda::CoredumpModel& m = st->coredump();
  return m.Get(m.global(), attrib, value, size);
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
  FAKECUDA_ENTER(cuCoredumpSetAttributeGlobal)
  fakecuda::CoredumpModel& m = st->coredump();
  return m.Set(&m.global(), attrib, value, size, /*per_context=*/false);
} catch (...) {
  return ::fakecuda::EntryFailed("cuCoredumpSetAttributeGlobal");
}

}  // extern "C"
