// Copyright 2026 The cuhal Authors.
// Tests of core/symbols/api_status.h: CUresult / ncclResult_t to Status, names, codes, and the
// CUHAL_CU / CUHAL_NCCL call macros.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iterator>
#include <string>

#include "core/base/status.h"
#include "core/base/status_or.h"
#include "core/symbols/api_status.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"
#include "tests/mocks/mock_cuda_api.h"
#include "tests/mocks/mock_nccl_api.h"

namespace cuhal {
namespace {

using ::testing::HasSubstr;
using trompeloeil::_;

// A table whose error lookups answer like the real driver does for two codes, and fail otherwise.
CudaApi TableWithErrorLookups() {
  CudaApi api;
  api.cuGetErrorName = [](CUresult result, const char** name) -> CUresult {
    switch (result) {
      case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
      case CUDA_ERROR_INVALID_VALUE: *name = "DRIVER_SAYS_INVALID_VALUE"; return CUDA_SUCCESS;
      default: *name = nullptr; return CUDA_ERROR_INVALID_VALUE;
    }
  };
  api.cuGetErrorString = [](CUresult result, const char** text) -> CUresult {
    switch (result) {
      case CUDA_ERROR_OUT_OF_MEMORY: *text = "out of memory"; return CUDA_SUCCESS;
      case CUDA_ERROR_INVALID_VALUE: *text = "invalid argument"; return CUDA_SUCCESS;
      default: *text = nullptr; return CUDA_ERROR_INVALID_VALUE;
    }
  };
  return api;
}

TEST(CudaResultToStatusTest, SuccessIsOk) {
  const CudaApi api = TableWithErrorLookups();
  EXPECT_TRUE(CudaResultToStatus(&api, CUDA_SUCCESS, "cuInit").ok());
  EXPECT_TRUE(CudaResultToStatus(nullptr, CUDA_SUCCESS, "cuInit").ok());
}

TEST(CudaResultToStatusTest, SuccessDoesNotAskTheDriver) {
  mocks::MockCudaApi mock;  // no expectations: any call into it fails the test
  const CudaApi api = mock.Table();
  EXPECT_TRUE(CudaResultToStatus(&api, CUDA_SUCCESS, "cuInit").ok());
}

TEST(CudaResultToStatusTest, NameAndStringComeFromTheTable) {
  const CudaApi api = TableWithErrorLookups();
  Status status = CudaResultToStatus(&api, CUDA_ERROR_INVALID_VALUE, "cuFoo");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "cuFoo: DRIVER_SAYS_INVALID_VALUE (invalid argument)");
}

TEST(CudaResultToStatusTest, NameAndStringFromTheMock) {
  mocks::MockCudaApi mock;
  const CudaApi api = mock.Table();
  REQUIRE_CALL(mock, cuGetErrorName(CUDA_ERROR_NOT_READY, _))
      .SIDE_EFFECT(*_2 = "MOCK_NOT_READY")
      .RETURN(CUDA_SUCCESS);
  REQUIRE_CALL(mock, cuGetErrorString(CUDA_ERROR_NOT_READY, _))
      .SIDE_EFFECT(*_2 = "device not ready")
      .RETURN(CUDA_SUCCESS);
  Status status = CudaResultToStatus(&api, CUDA_ERROR_NOT_READY, "cuStreamQuery");
  EXPECT_EQ(status.message(), "cuStreamQuery: MOCK_NOT_READY (device not ready)");
}

TEST(CudaResultToStatusTest, WithoutLookupsTheBuiltInNameStandsIn) {
  CudaApi no_lookups;  // every entry null
  Status status = CudaResultToStatus(&no_lookups, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(CudaResultToStatus(nullptr, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc").message(),
            "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY");
}

TEST(CudaResultToStatusTest, FailingLookupsFallBackToTheBuiltInName) {
  const CudaApi api = TableWithErrorLookups();  // knows only two codes
  EXPECT_EQ(CudaResultToStatus(&api, CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize").message(),
            "cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS");
}

// CUresult has no fixed underlying type, so only values within its enumerators' bit range
// (0..1023; CUDA_ERROR_UNKNOWN is 999) are valid: UBSan rejects a CUresult of 12345. 1000 is a
// valid value that no enumerator names.
constexpr CUresult kUnknownCuResult = static_cast<CUresult>(1000);

TEST(CudaResultToStatusTest, UnknownCodeIsNumbered) {
  const CUresult unknown = kUnknownCuResult;
  CudaApi no_lookups;
  Status status = CudaResultToStatus(&no_lookups, unknown, "cuFoo");
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(), "cuFoo: CUresult 1000");
  const CudaApi api = TableWithErrorLookups();
  EXPECT_EQ(CudaResultToStatus(&api, unknown, "cuFoo").message(), "cuFoo: CUresult 1000");
}

TEST(CudaResultToStatusTest, RecordsTheCallersLocation) {
  CudaApi api;
  api.cuCtxSynchronize = []() -> CUresult { return CUDA_ERROR_INVALID_CONTEXT; };
  const int line = __LINE__ + 1;
  Status status = CUHAL_CU(&api, cuCtxSynchronize);
  EXPECT_EQ(status.location().line(), static_cast<unsigned>(line));
  EXPECT_THAT(status.location().file_name(), HasSubstr("api_status_test.cc"));
}

// The chain of the Status documentation, built the way core builds it.
Status RetainPrimaryContext(const CudaApi* api, CUdevice device) {
  CUcontext context = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDevicePrimaryCtxRetain, &context, device),
                        "retaining primary context");
  return OkStatus();
}

Status CreateDevice(const CudaApi* api, CUdevice device) {
  CUHAL_RETURN_IF_ERROR(RetainPrimaryContext(api, device), "creating device ", device);
  return OkStatus();
}

TEST(CudaResultToStatusTest, ContextChainHasTheDocumentedForm) {
  CudaApi api = TableWithErrorLookups();
  api.cuDevicePrimaryCtxRetain = [](CUcontext*, CUdevice) -> CUresult {
    return CUDA_ERROR_OUT_OF_MEMORY;
  };
  Status status = CreateDevice(&api, 0);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "creating device 0: retaining primary context: cuDevicePrimaryCtxRetain: "
            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

TEST(CuhalCuTest, NullOptionalEntryIsUnimplementedNotACrash) {
  CudaApi api;  // cuFuncSetAttribute (optional) is null
  Status status =
      CUHAL_CU(&api, cuFuncSetAttribute, nullptr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            "cuFuncSetAttribute is not provided by the bound libcuda (optional entry point "
            "missing)");
}

TEST(CuhalCuTest, NamesThePlainFunctionEvenForVersionedEntries) {
  CudaApi api;
  api.cuMemFree = [](CUdeviceptr) -> CUresult { return CUDA_ERROR_INVALID_VALUE; };
  EXPECT_EQ(CUHAL_CU(&api, cuMemFree, 0x10).message(), "cuMemFree: CUDA_ERROR_INVALID_VALUE");
  // Through another macro, cuMemFree reaches CUHAL_CU already expanded to cuMemFree_v2.
#define CALL_THROUGH_WRAPPER(table, fn, ...) CUHAL_CU(table, fn, __VA_ARGS__)
  EXPECT_EQ(CALL_THROUGH_WRAPPER(&api, cuMemFree, 0x10).message(),
            "cuMemFree: CUDA_ERROR_INVALID_VALUE");
  api.cuMemFree = nullptr;
  EXPECT_THAT(CALL_THROUGH_WRAPPER(&api, cuMemFree, 0x10).message(),
              ::testing::StartsWith("cuMemFree is not provided"));
#undef CALL_THROUGH_WRAPPER
  // A name that is not a table entry passes unchanged.
  EXPECT_EQ(CudaResultToStatus(nullptr, CUDA_ERROR_INVALID_VALUE, "cuFoo_v2").message(),
            "cuFoo_v2: CUDA_ERROR_INVALID_VALUE");
}

TEST(CudaResultCodeTest, MapsToCanonicalCodes) {
  EXPECT_EQ(CudaResultToCode(CUDA_SUCCESS), StatusCode::kOk);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_OUT_OF_MEMORY), StatusCode::kResourceExhausted);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_INVALID_VALUE), StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_INVALID_HANDLE), StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_NOT_INITIALIZED), StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_NO_DEVICE), StatusCode::kUnavailable);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_NOT_SUPPORTED), StatusCode::kUnimplemented);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_NOT_FOUND), StatusCode::kNotFound);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_ILLEGAL_ADDRESS), StatusCode::kDataLoss);
  EXPECT_EQ(CudaResultToCode(CUDA_ERROR_UNKNOWN), StatusCode::kInternal);
  EXPECT_EQ(CudaResultToCode(kUnknownCuResult), StatusCode::kInternal);
}

TEST(CudaResultEnumNameTest, EveryListedCodeHasItsSpelling) {
  int codes = 0;
#define CUHAL_CU_RESULT(name)                                                   \
  ++codes;                                                                      \
  EXPECT_EQ(CudaResultEnumName(name), #name);                                   \
  if (name != CUDA_SUCCESS) {                                                   \
    EXPECT_NE(CudaResultToCode(name), StatusCode::kOk) << #name;                \
    EXPECT_EQ(CudaResultToStatus(nullptr, name, "cuX").message(), "cuX: " #name); \
  }
#include "core/symbols/cu_result_list.inc"
#undef CUHAL_CU_RESULT
  EXPECT_GT(codes, 90);  // CUDA 13.0 has about a hundred
  EXPECT_EQ(CudaResultEnumName(kUnknownCuResult), "");
}

// --- NCCL -----------------------------------------------------------------------------------

NcclApi NcclTableWithErrorStrings() {
  NcclApi api;
  api.ncclGetErrorString = [](ncclResult_t result) -> const char* {
    return result == ncclInvalidArgument ? "invalid argument (run with NCCL_DEBUG=WARN)"
                                         : "unhandled error";
  };
  return api;
}

TEST(NcclResultToStatusTest, SuccessIsOk) {
  EXPECT_TRUE(NcclResultToStatus(nullptr, ncclSuccess, "ncclAllReduce").ok());
  mocks::MockNcclApi mock;  // no expectations: any call into it fails the test
  const NcclApi api = mock.Table();
  EXPECT_TRUE(
      NcclResultToStatus(&api, ncclSuccess, "ncclAllReduce", reinterpret_cast<ncclComm_t>(1))
          .ok());
}

TEST(NcclResultToStatusTest, NameAndStringFromTheTable) {
  const NcclApi api = NcclTableWithErrorStrings();
  Status status = NcclResultToStatus(&api, ncclInvalidArgument, "ncclAllReduce");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "ncclAllReduce: ncclInvalidArgument (invalid argument (run with NCCL_DEBUG=WARN))");
}

TEST(NcclResultToStatusTest, WithoutATableTheEnumNameStandsAlone) {
  EXPECT_EQ(NcclResultToStatus(nullptr, ncclSystemError, "ncclCommInitRank").message(),
            "ncclCommInitRank: ncclSystemError");
  // ncclNumResults counts the results and names none. (An arbitrary number such as 77 would be
  // outside the enum's valid range, 0..15, which UBSan rejects.)
  EXPECT_EQ(NcclResultToStatus(nullptr, ncclNumResults, "ncclSend").message(),
            "ncclSend: ncclResult_t 8");
}

TEST(NcclResultToStatusTest, LastErrorOfTheCommunicatorIsAppended) {
  mocks::MockNcclApi mock;
  const NcclApi api = mock.Table();
  const ncclComm_t comm = reinterpret_cast<ncclComm_t>(0xC0);
  REQUIRE_CALL(mock, ncclGetErrorString(ncclRemoteError)).RETURN("remote process exited");
  REQUIRE_CALL(mock, ncclGetLastError(comm)).RETURN("peer 3 closed the connection");
  Status status = NcclResultToStatus(&api, ncclRemoteError, "ncclAllReduce", comm);
  EXPECT_EQ(status.code(), StatusCode::kAborted);
  EXPECT_EQ(status.message(),
            "ncclAllReduce: ncclRemoteError (remote process exited): last NCCL error: peer 3 "
            "closed the connection");
}

TEST(NcclResultToStatusTest, EmptyLastErrorAddsNothing) {
  mocks::MockNcclApi mock;
  const NcclApi api = mock.Table();
  mock.AllowErrorLookups();  // ncclGetLastError -> ""
  const ncclComm_t comm = reinterpret_cast<ncclComm_t>(0xC0);
  EXPECT_EQ(NcclResultToStatus(&api, ncclInternalError, "ncclBroadcast", comm).message(),
            "ncclBroadcast: ncclInternalError (ncclInternalError)");
}

TEST(NcclResultToStatusTest, WithoutACommunicatorLastErrorIsNotAsked) {
  mocks::MockNcclApi mock;
  const NcclApi api = mock.Table();
  REQUIRE_CALL(mock, ncclGetErrorString(ncclInvalidUsage)).RETURN("");
  FORBID_CALL(mock, ncclGetLastError(_));
  EXPECT_EQ(NcclResultToStatus(&api, ncclInvalidUsage, "ncclGroupEnd").message(),
            "ncclGroupEnd: ncclInvalidUsage");
}

TEST(CuhalNcclTest, NullOptionalEntryIsUnimplemented) {
  NcclApi api;  // ncclAlltoAll (optional, NCCL >= 2.28) is null
  Status status = CUHAL_NCCL(&api, ncclAlltoAll, nullptr, nullptr, 0, ncclFloat32, nullptr,
                             nullptr);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            "ncclAlltoAll is not provided by the bound libnccl (optional entry point missing)");
}

TEST(CuhalNcclTest, CallsThroughTheTable) {
  mocks::MockNcclApi mock;
  const NcclApi api = mock.Table();
  mock.AllowErrorLookups();
  REQUIRE_CALL(mock, ncclGroupEnd()).RETURN(ncclInProgress);
  Status status = CUHAL_NCCL(&api, ncclGroupEnd);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "ncclGroupEnd: ncclInProgress (ncclInProgress)");
}

TEST(NcclResultCodeTest, MapsAndNamesEveryResult) {
  struct Case {
    ncclResult_t result;
    const char* name;
    StatusCode code;
  };
  const Case cases[] = {
      {ncclSuccess, "ncclSuccess", StatusCode::kOk},
      {ncclUnhandledCudaError, "ncclUnhandledCudaError", StatusCode::kInternal},
      {ncclSystemError, "ncclSystemError", StatusCode::kUnavailable},
      {ncclInternalError, "ncclInternalError", StatusCode::kInternal},
      {ncclInvalidArgument, "ncclInvalidArgument", StatusCode::kInvalidArgument},
      {ncclInvalidUsage, "ncclInvalidUsage", StatusCode::kFailedPrecondition},
      {ncclRemoteError, "ncclRemoteError", StatusCode::kAborted},
      {ncclInProgress, "ncclInProgress", StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NcclResultEnumName(c.result), c.name);
    EXPECT_EQ(NcclResultToCode(c.result), c.code) << c.name;
  }
  // Every value below ncclNumResults is covered by the table above.
  EXPECT_EQ(static_cast<int>(ncclNumResults), static_cast<int>(std::size(cases)));
  EXPECT_EQ(NcclResultEnumName(ncclNumResults), "");
}

}  // namespace
}  // namespace cuhal
