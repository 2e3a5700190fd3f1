// Copyright 2026 The cuhal Authors.
// Turning CUresult and ncclResult_t into Status, with the driver's own names and strings.
#ifndef CUHAL_CORE_SYMBOLS_API_STATUS_H_
#define CUHAL_CORE_SYMBOLS_API_STATUS_H_

#include <source_location>
#include <string_view>

#include "core/base/status.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"

namespace cuhal {

// The canonical code cuhal reports for a driver result (CUDA_ERROR_OUT_OF_MEMORY ->
// kResourceExhausted, CUDA_ERROR_INVALID_VALUE -> kInvalidArgument, ...).
StatusCode CudaResultToCode(CUresult result);
StatusCode NcclResultToCode(ncclResult_t result);

// The enumerator's spelling from cuda.h / nccl.h ("CUDA_ERROR_OUT_OF_MEMORY"), or "" if unknown.
// Needs no driver.
std::string_view CudaResultEnumName(CUresult result);
std::string_view NcclResultEnumName(ncclResult_t result);

// OK for CUDA_SUCCESS; otherwise "<call>: <NAME> (<string>)" where NAME and string come from
// the table's cuGetErrorName/cuGetErrorString. When those entries are missing or fail, the
// enumerator's spelling from cuda.h stands in, and failing that "CUresult <number>". A `call`
// that is the versioned spelling of a CudaApi entry ("cuMemFree_v2", which is what a macro that
// forwards cuMemFree to CUHAL_CU passes) is reported by its plain name ("cuMemFree").
Status CudaResultToStatus(const CudaApi* api, CUresult result, std::string_view call,
                          std::source_location loc = std::source_location::current());
// OK for ncclSuccess; otherwise "<call>: <ncclName> (<ncclGetErrorString>)"; and, given a
// communicator, NCCL's last-error text for it.
Status NcclResultToStatus(const NcclApi* api, ncclResult_t result, std::string_view call,
                          ncclComm_t comm = nullptr,
                          std::source_location loc = std::source_location::current());

// UNIMPLEMENTED for an optional entry that the bound driver does not provide.
Status MissingEntryStatus(std::string_view library, std::string_view entry,
                          std::source_location loc = std::source_location::current());

}  // namespace cuhal

// Calls `api->fn(args...)` and yields a Status naming `fn` (its plain cuda.h name):
//   CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING),
//                         "creating queue ", i);
// A null entry (an optional one the driver lacks) yields UNIMPLEMENTED instead of a crash.
#define CUHAL_CU(api, fn, ...)                                                         \
  ((api)->fn == nullptr                                                                \
       ? ::cuhal::MissingEntryStatus("libcuda", #fn)                                   \
       : ::cuhal::CudaResultToStatus((api), (api)->fn(__VA_ARGS__), #fn))
#define CUHAL_NCCL(api, fn, ...)                                                       \
  ((api)->fn == nullptr                                                                \
       ? ::cuhal::MissingEntryStatus("libnccl", #fn)                                   \
       : ::cuhal::NcclResultToStatus((api), (api)->fn(__VA_ARGS__), #fn))

#endif  // CUHAL_CORE_SYMBOLS_API_STATUS_H_
