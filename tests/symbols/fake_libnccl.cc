// Copyright 2026 The cuhal Authors.
// A tiny stand-in for libnccl.so.2, built as a shared library for the real loader's tests. It
// exports the entry points of core/symbols/nccl_symbols.inc under their nccl.h names (NCCL is
// resolved with plain dlsym), typed as nccl.h declares them; all but ncclGetVersion and
// ncclGetErrorString return ncclInvalidUsage.
//
// Build variants (compile definitions, each 0 or 1 unless said otherwise):
//   CUHAL_TESTNCCL_VERSION           the code ncclGetVersion reports after Reset (e.g. 22809);
//   CUHAL_TESTNCCL_HAS_GET_VERSION   exports ncclGetVersion;
//   CUHAL_TESTNCCL_HAS_OPTIONAL      exports ncclAlltoAll, ncclGather, ncclScatter (NCCL 2.28);
//   CUHAL_TESTNCCL_HAS_COMM_SPLIT    exports ncclCommSplit (a required entry).
#include <nccl.h>

#include <mutex>

#include "tests/symbols/fake_lib_control.h"

#if !defined(CUHAL_TESTNCCL_VERSION) || !defined(CUHAL_TESTNCCL_HAS_GET_VERSION) || \
    !defined(CUHAL_TESTNCCL_HAS_OPTIONAL) || !defined(CUHAL_TESTNCCL_HAS_COMM_SPLIT)
#error "fake_libnccl.cc needs all CUHAL_TESTNCCL_* definitions"
#endif

namespace {

struct State {
  std::mutex mu;
  int version = CUHAL_TESTNCCL_VERSION;
  ncclResult_t version_result = ncclSuccess;
  int version_calls = 0;
};

State& GetState() {
  // A plain static (no leaked heap object): the tests dlclose these libraries, and LeakSanitizer
  // would report a heap object whose only pointer was unmapped with them.
  static State state;
  return state;
}

}  // namespace

extern "C" {

#if CUHAL_TESTNCCL_HAS_GET_VERSION
ncclResult_t ncclGetVersion(int* version) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  ++state.version_calls;
  if (state.version_result != ncclSuccess) return state.version_result;
  if (version == nullptr) return ncclInvalidArgument;
  *version = state.version;
  return ncclSuccess;
}
#endif

ncclResult_t ncclGetUniqueId(ncclUniqueId*) { return ncclInvalidUsage; }
const char* ncclGetErrorString(ncclResult_t result) {
  return result == ncclSuccess ? "no error" : "stand-in NCCL error";
}
const char* ncclGetLastError(ncclComm_t) { return ""; }

ncclResult_t ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int) { return ncclInvalidUsage; }
ncclResult_t ncclCommInitRankConfig(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*) {
  return ncclInvalidUsage;
}
ncclResult_t ncclCommInitAll(ncclComm_t*, int, const int*) { return ncclInvalidUsage; }
#if CUHAL_TESTNCCL_HAS_COMM_SPLIT
ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*) {
  return ncclInvalidUsage;
}
#endif
ncclResult_t ncclCommFinalize(ncclComm_t) { return ncclInvalidUsage; }
ncclResult_t ncclCommDestroy(ncclComm_t) { return ncclInvalidUsage; }
ncclResult_t ncclCommAbort(ncclComm_t) { return ncclInvalidUsage; }
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t*) { return ncclInvalidUsage; }
ncclResult_t ncclCommCount(const ncclComm_t, int*) { return ncclInvalidUsage; }
ncclResult_t ncclCommCuDevice(const ncclComm_t, int*) { return ncclInvalidUsage; }
ncclResult_t ncclCommUserRank(const ncclComm_t, int*) { return ncclInvalidUsage; }

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t*, void*, ncclDataType_t, ncclScalarResidence_t,
                                      ncclComm_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclRedOpDestroy(ncclRedOp_t, ncclComm_t) { return ncclInvalidUsage; }

ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                           cudaStream_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                           cudaStream_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                        cudaStream_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclReduceScatter(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                               cudaStream_t) {
  return ncclInvalidUsage;
}
#if CUHAL_TESTNCCL_HAS_OPTIONAL
ncclResult_t ncclAlltoAll(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclGather(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                        cudaStream_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclScatter(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                         cudaStream_t) {
  return ncclInvalidUsage;
}
#endif

ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) {
  return ncclInvalidUsage;
}
ncclResult_t ncclGroupStart() { return ncclSuccess; }
ncclResult_t ncclGroupEnd() { return ncclSuccess; }

// ---- Control functions (fake_lib_control.h). ----
void cuhal_testnccl_Reset(void) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  state.version = CUHAL_TESTNCCL_VERSION;
  state.version_result = ncclSuccess;
  state.version_calls = 0;
}

void cuhal_testnccl_SetVersion(int code) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  state.version = code;
}

void cuhal_testnccl_SetVersionResult(int result) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  state.version_result = static_cast<ncclResult_t>(result);
}

int cuhal_testnccl_VersionCalls(void) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  return state.version_calls;
}

}  // extern "C"
