// Copyright 2026 The cuhal Authors.
// fakenccl's C entry points: nccl.h's functions, with its exact names and signatures, serving the
// installed fakenccl::FakeNccl. See fake_nccl.h for which ones are implemented so far.
//
// Every entry point listed in core/symbols/nccl_symbols.inc must be defined here: FillNcclApi
// takes each one's address, so a missing one fails to link. nccl.h declares them extern "C", so a
// definition whose signature differs from nccl.h's does not compile.
#include <nccl.h>

#include <cstdio>
#include <cstring>

#include "fakenccl/fake_nccl.h"

namespace fakenccl {
namespace {

// The text ncclGetLastError returns. Per thread (see fake_nccl.h); NCCL's buffer is 1024 bytes.
thread_local char t_last_error[1024] = "";

void SetLastError(const char* text) {
  std::snprintf(t_last_error, sizeof(t_last_error), "%s", text);
}

ncclResult_t NotImplemented(const char* name) {
  std::snprintf(t_last_error, sizeof(t_last_error),
                "fakenccl: %s is not implemented yet (issue 5)", name);
  return ncclInvalidUsage;
}

FakeNccl* InstalledOrSetError() {
  FakeNccl* nccl = Installed();
  if (nccl == nullptr) {
    SetLastError("fakenccl: no FakeNccl is installed (create a fakenccl::ScopedNccl first)");
  }
  return nccl;
}

}  // namespace
}  // namespace fakenccl

using fakenccl::NotImplemented;

// ---- Implemented -------------------------------------------------------------------------------

extern "C" ncclResult_t ncclGetVersion(int* version) {
  fakenccl::FakeNccl* nccl = fakenccl::InstalledOrSetError();
  if (nccl == nullptr) return ncclInvalidUsage;
  if (version == nullptr) {
    fakenccl::SetLastError("GetVersion : version argument is NULL");  // NCCL's PtrCheck text
    return ncclInvalidArgument;
  }
  *version = nccl->options().version;
  return ncclSuccess;
}

extern "C" ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id) {
  fakenccl::FakeNccl* nccl = fakenccl::InstalledOrSetError();
  if (nccl == nullptr) return ncclInvalidUsage;
  if (unique_id == nullptr) {
    fakenccl::SetLastError("GetUniqueId : out argument is NULL");  // NCCL's PtrCheck text
    return ncclInvalidArgument;
  }
  nccl->NewUniqueId(unique_id);
  return ncclSuccess;
}

// NCCL's own strings, word for word.
extern "C" const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

extern "C" const char* ncclGetLastError(ncclComm_t /*comm*/) { return fakenccl::t_last_error; }

// ---- Not implemented yet (issue 5) -------------------------------------------------------------
// Each returns ncclInvalidUsage and sets the last error to "fakenccl: <name> is not implemented
// yet (issue 5)".

extern "C" ncclResult_t ncclCommInitRank(ncclComm_t* /*comm*/, int /*nranks*/,
                                         ncclUniqueId /*comm_id*/, int /*rank*/) {
  return NotImplemented("ncclCommInitRank");
}

extern "C" ncclResult_t ncclCommInitRankConfig(ncclComm_t* /*comm*/, int /*nranks*/,
                                               ncclUniqueId /*comm_id*/, int /*rank*/,
                                               ncclConfig_t* /*config*/) {
  return NotImplemented("ncclCommInitRankConfig");
}

extern "C" ncclResult_t ncclCommInitAll(ncclComm_t* /*comm*/, int /*ndev*/,
                                        const int* /*devlist*/) {
  return NotImplemented("ncclCommInitAll");
}

extern "C" ncclResult_t ncclCommSplit(ncclComm_t /*comm*/, int /*color*/, int /*key*/,
                                      ncclComm_t* /*newcomm*/, ncclConfig_t* /*config*/) {
  return NotImplemented("ncclCommSplit");
}

extern "C" ncclResult_t ncclCommFinalize(ncclComm_t /*comm*/) {
  return NotImplemented("ncclCommFinalize");
}

extern "C" ncclResult_t ncclCommDestroy(ncclComm_t /*comm*/) {
  return NotImplemented("ncclCommDestroy");
}

extern "C" ncclResult_t ncclCommAbort(ncclComm_t /*comm*/) {
  return NotImplemented("ncclCommAbort");
}

extern "C" ncclResult_t ncclCommGetAsyncError(ncclComm_t /*comm*/,
                                              ncclResult_t* /*async_error*/) {
  return NotImplemented("ncclCommGetAsyncError");
}

extern "C" ncclResult_t ncclCommCount(const ncclComm_t /*comm*/, int* /*count*/) {
  return NotImplemented("ncclCommCount");
}

extern "C" ncclResult_t ncclCommCuDevice(const ncclComm_t /*comm*/, int* /*device*/) {
  return NotImplemented("ncclCommCuDevice");
}

extern "C" ncclResult_t ncclCommUserRank(const ncclComm_t /*comm*/, int* /*rank*/) {
  return NotImplemented("ncclCommUserRank");
}

extern "C" ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* /*op*/, void* /*scalar*/,
                                                 ncclDataType_t /*datatype*/,
                                                 ncclScalarResidence_t /*residence*/,
                                                 ncclComm_t /*comm*/) {
  return NotImplemented("ncclRedOpCreatePreMulSum");
}

extern "C" ncclResult_t ncclRedOpDestroy(ncclRedOp_t /*op*/, ncclComm_t /*comm*/) {
  return NotImplemented("ncclRedOpDestroy");
}

extern "C" ncclResult_t ncclAllReduce(const void* /*sendbuff*/, void* /*recvbuff*/,
                                      size_t /*count*/, ncclDataType_t /*datatype*/,
                                      ncclRedOp_t /*op*/, ncclComm_t /*comm*/,
                                      cudaStream_t /*stream*/) {
  return NotImplemented("ncclAllReduce");
}

extern "C" ncclResult_t ncclBroadcast(const void* /*sendbuff*/, void* /*recvbuff*/,
                                      size_t /*count*/, ncclDataType_t /*datatype*/,
                                      int /*root*/, ncclComm_t /*comm*/,
                                      cudaStream_t /*stream*/) {
  return NotImplemented("ncclBroadcast");
}

extern "C" ncclResult_t ncclReduce(const void* /*sendbuff*/, void* /*recvbuff*/,
                                   size_t /*count*/, ncclDataType_t /*datatype*/,
                                   ncclRedOp_t /*op*/, int /*root*/, ncclComm_t /*comm*/,
                                   cudaStream_t /*stream*/) {
  return NotImplemented("ncclReduce");
}

extern "C" ncclResult_t ncclAllGather(const void* /*sendbuff*/, void* /*recvbuff*/,
                                      size_t /*sendcount*/, ncclDataType_t /*datatype*/,
                                      ncclComm_t /*comm*/, cudaStream_t /*stream*/) {
  return NotImplemented("ncclAllGather");
}

extern "C" ncclResult_t ncclReduceScatter(const void* /*sendbuff*/, void* /*recvbuff*/,
                                          size_t /*recvcount*/, ncclDataType_t /*datatype*/,
                                          ncclRedOp_t /*op*/, ncclComm_t /*comm*/,
                                          cudaStream_t /*stream*/) {
  return NotImplemented("ncclReduceScatter");
}

extern "C" ncclResult_t ncclAlltoAll(const void* /*sendbuff*/, void* /*recvbuff*/,
                                     size_t /*count*/, ncclDataType_t /*datatype*/,
                                     ncclComm_t /*comm*/, cudaStream_t /*stream*/) {
  return NotImplemented("ncclAlltoAll");
}

extern "C" ncclResult_t ncclGather(const void* /*sendbuff*/, void* /*recvbuff*/,
                                   size_t /*count*/, ncclDataType_t /*datatype*/, int /*root*/,
                                   ncclComm_t /*comm*/, cudaStream_t /*stream*/) {
  return NotImplemented("ncclGather");
}

extern "C" ncclResult_t ncclScatter(const void* /*sendbuff*/, void* /*recvbuff*/,
                                    size_t /*count*/, ncclDataType_t /*datatype*/, int /*root*/,
                                    ncclComm_t /*comm*/, cudaStream_t /*stream*/) {
  return NotImplemented("ncclScatter");
}

extern "C" ncclResult_t ncclSend(const void* /*sendbuff*/, size_t /*count*/,
                                 ncclDataType_t /*datatype*/, int /*peer*/, ncclComm_t /*comm*/,
                                 cudaStream_t /*stream*/) {
  return NotImplemented("ncclSend");
}

extern "C" ncclResult_t ncclRecv(void* /*recvbuff*/, size_t /*count*/,
                                 ncclDataType_t /*datatype*/, int /*peer*/, ncclComm_t /*comm*/,
                                 cudaStream_t /*stream*/) {
  return NotImplemented("ncclRecv");
}

extern "C" ncclResult_t ncclGroupStart() { return NotImplemented("ncclGroupStart"); }

extern "C" ncclResult_t ncclGroupEnd() { return NotImplemented("ncclGroupEnd"); }
