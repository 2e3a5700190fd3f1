// Copyright 2026 The cuhal Authors.
// Entry point: cuGetExportTable, the driver's private interfaces, looked up by UUID. The CUDA
// runtime (libcudart, static or shared) asks for them at its first call and gives up when the
// ones it needs are missing (issue 17). The tables and what their slots do:
// fakecuda/internal/export_tables.h and docs/cudart_on_the_fake.md. A UUID the fake does not
// serve answers CUDA_ERROR_NOT_SUPPORTED with *ppExportTable set to NULL, as the generated
// fallback did before this entry point existed (the real driver's answer for an unknown UUID is
// not measured). FAKECUDA_TRACE_EXPORT_TABLE=1 prints every lookup and slot call to stderr.
//
// The tables are static data that do not depend on the driver's state, so the entry point does
// not take the driver lock and answers before cuInit too (the runtime asks for one table before
// it calls cuInit); no driver installed: CUDA_ERROR_NOT_INITIALIZED, as every entry point.
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/export_tables.h"

using fakecuda::ExportTables;

extern "C" {

CUresult CUDAAPI cuGetExportTable(const void** ppExportTable,
                                  const CUuuid* pExportTableId) try {
  FAKECUDA_ENTER_NOLOCK(cuGetExportTable)
  if (ppExportTable == nullptr || pExportTableId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const void* table = ExportTables::Find(*pExportTableId);
  *ppExportTable = table;
  if (ExportTables::TraceOn()) {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(pExportTableId->bytes);
    const char* name = ExportTables::Name(*pExportTableId);
    ExportTables::Trace(
        "cuGetExportTable(%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x) "
        "-> %s",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
        b[14], b[15], name != nullptr ? name : "not served: CUDA_ERROR_NOT_SUPPORTED");
  }
  return table != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
} catch (...) {
  return ::fakecuda::EntryFailed("cuGetExportTable");
}

}  // extern "C"
