// Copyright 2026 The cuhal Authors.
#include "core/symbols/api_status.h"

#include <string>

namespace cuhal {

StatusCode CudaResultToCode(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS:
      return StatusCode::kOk;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_SOURCE:
      return StatusCode::kInvalidArgument;
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_TOO_MANY_PEERS:
    case CUDA_ERROR_MAP_FAILED:
      return StatusCode::kResourceExhausted;
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE:
    case CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
    case CUDA_ERROR_PEER_ACCESS_NOT_ENABLED:
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    case CUDA_ERROR_ILLEGAL_STATE:
      return StatusCode::kFailedPrecondition;
    case CUDA_ERROR_NOT_FOUND:
      return StatusCode::kNotFound;
    case CUDA_ERROR_NOT_READY:
      return StatusCode::kUnavailable;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
    case CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND:
      return StatusCode::kUnavailable;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_NOT_PERMITTED:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return StatusCode::kUnimplemented;
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_TIMEOUT:
      return StatusCode::kDeadlineExceeded;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
      return StatusCode::kDataLoss;
    case CUDA_ERROR_ALREADY_MAPPED:
    case CUDA_ERROR_ALREADY_ACQUIRED:
      return StatusCode::kAlreadyExists;
    default:
      return StatusCode::kInternal;
  }
}

StatusCode NcclResultToCode(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return StatusCode::kOk;
    case ncclInvalidArgument: return StatusCode::kInvalidArgument;
    case ncclInvalidUsage: return StatusCode::kFailedPrecondition;
    case ncclInProgress: return StatusCode::kUnavailable;
    case ncclRemoteError: return StatusCode::kAborted;
    case ncclSystemError: return StatusCode::kUnavailable;
    case ncclUnhandledCudaError:
    case ncclInternalError:
    default: return StatusCode::kInternal;
  }
}

std::string_view CudaResultEnumName(CUresult result) {
  switch (result) {
#define CUHAL_CU_RESULT(name) \
  case name:                  \
    return #name;
#include "core/symbols/cu_result_list.inc"
#undef CUHAL_CU_RESULT
    default:
      return {};
  }
}

std::string_view NcclResultEnumName(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return {};
  }
}

namespace {

#define CUHAL_STRINGIZE_EXPANDED_INNER_(x) #x
#define CUHAL_STRINGIZE_EXPANDED_(x) CUHAL_STRINGIZE_EXPANDED_INNER_(x)

// The plain cuda.h name of a CudaApi entry given its versioned spelling ("cuMemFree_v2" ->
// "cuMemFree"); anything else is returned unchanged. CUHAL_CU stringizes its `fn` argument, which
// is already the versioned spelling when fn reached CUHAL_CU through another macro (as in
// driver_handles.h's traits), because cuda.h #defines cuMemFree to cuMemFree_v2. Error path only.
std::string_view PlainCudaName(std::string_view call) {
  struct Spelling {
    std::string_view expanded;
    std::string_view plain;
  };
  static constexpr Spelling kSpellings[] = {
#define CUHAL_CU_PFN(kind, name, arity) {CUHAL_STRINGIZE_EXPANDED_(name), #name},
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN
  };
  for (const Spelling& spelling : kSpellings) {
    if (spelling.expanded == call) return spelling.plain;
  }
  return call;
}

#undef CUHAL_STRINGIZE_EXPANDED_
#undef CUHAL_STRINGIZE_EXPANDED_INNER_

}  // namespace

Status CudaResultToStatus(const CudaApi* api, CUresult result, std::string_view call,
                          std::source_location loc) {
  if (result == CUDA_SUCCESS) [[likely]] return OkStatus();
  call = PlainCudaName(call);
  std::string name;
  std::string text;
  const char* p = nullptr;
  if (api && api->cuGetErrorName && api->cuGetErrorName(result, &p) == CUDA_SUCCESS && p) name = p;
  p = nullptr;
  if (api && api->cuGetErrorString && api->cuGetErrorString(result, &p) == CUDA_SUCCESS && p) {
    text = p;
  }
  if (name.empty()) name = std::string(CudaResultEnumName(result));
  if (name.empty()) name = StrCat("CUresult ", static_cast<int>(result));
  std::string message = StrCat(call, ": ", name);
  if (!text.empty()) message += StrCat(" (", text, ")");
  return Status(CudaResultToCode(result), std::move(message), loc);
}

Status NcclResultToStatus(const NcclApi* api, ncclResult_t result, std::string_view call,
                          ncclComm_t comm, std::source_location loc) {
  if (result == ncclSuccess) [[likely]] return OkStatus();
  std::string name(NcclResultEnumName(result));
  if (name.empty()) name = StrCat("ncclResult_t ", static_cast<int>(result));
  std::string message = StrCat(call, ": ", name);
  if (api && api->ncclGetErrorString) {
    if (const char* text = api->ncclGetErrorString(result); text && *text) {
      message += StrCat(" (", text, ")");
    }
  }
  if (comm && api && api->ncclGetLastError) {
    if (const char* last = api->ncclGetLastError(comm); last && *last) {
      message += StrCat(": last NCCL error: ", last);
    }
  }
  return Status(NcclResultToCode(result), std::move(message), loc);
}

Status MissingEntryStatus(std::string_view library, std::string_view entry,
                          std::source_location loc) {
  if (library == "libcuda") entry = PlainCudaName(entry);
  return Status(StatusCode::kUnimplemented,
                StrCat(entry, " is not provided by the bound ", library,
                       " (optional entry point missing)"),
                loc);
}

}  // namespace cuhal
