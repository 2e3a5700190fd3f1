// Copyright 2026 The cuhal Authors.
// MockNcclApi: a trompeloeil mock of every NcclApi entry, generated from nccl_symbols.inc, and
// the means to point an NcclApi table at it.
#ifndef CUHAL_TESTS_MOCKS_MOCK_NCCL_API_H_
#define CUHAL_TESTS_MOCKS_MOCK_NCCL_API_H_

#include <nccl.h>

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "core/symbols/nccl_api.h"
#include "tests/mocks/mock_dispatch.h"  // GoogleTest + trompeloeil's GoogleTest adapter

namespace cuhal::mocks {

// One trompeloeil mock function per line of nccl_symbols.inc, named and typed as in nccl.h:
//
//   MockNcclApi mock;
//   NcclApi api = mock.Table();
//   REQUIRE_CALL(mock, ncclCommCount(comm, _)).SIDE_EFFECT(*_2 = 8).RETURN(ncclSuccess);
//
// Ownership, thread-safety, the "current mock" rule and failure handling are those of
// MockCudaApi (see mock_cuda_api.h), per mock type: at most one MockNcclApi receives calls at a
// time, namely the one that most recently filled a table. An unanswered call is a GoogleTest
// failure and returns ncclInternalError (or, for ncclGetErrorString and ncclGetLastError, a fixed
// non-null string). Stream ordering: none; a collective's mock returns when its action returns.
class MockNcclApi {
 public:
  static constexpr const char* kMockName = "MockNcclApi";
  static constexpr ncclResult_t kFailureResult = ncclInternalError;

  MockNcclApi() = default;
  ~MockNcclApi();
  MockNcclApi(const MockNcclApi&) = delete;             // trompeloeil mocks are not copyable
  MockNcclApi& operator=(const MockNcclApi&) = delete;  // ditto
  MockNcclApi(MockNcclApi&&) = delete;                  // a table routes to this object's address
  MockNcclApi& operator=(MockNcclApi&&) = delete;       // ditto

  // Points every entry of `*api` at this mock and makes this mock the current one.
  void Fill(NcclApi* api);
  [[nodiscard]] NcclApi Table();

  // ALLOW_CALLs, kept until the mock is destroyed: ncclGetErrorString gives the nccl.h enumerator
  // name ("ncclInvalidArgument"), ncclGetLastError gives "".
  void AllowErrorLookups();

  // The nccl.h name of the NcclApi entry at byte offset `offset` ("?" if none).
  static std::string_view EntryName(std::size_t offset);

#define CUHAL_NCCL_PFN(kind, name, arity) MAKE_MOCK##arity(name, decltype(::name));
#include "core/symbols/nccl_symbols.inc"
#undef CUHAL_NCCL_PFN

 private:
  // Declared after the mock functions: expectations must go before the mocks they belong to.
  std::vector<std::unique_ptr<trompeloeil::expectation>> defaults_;
};

}  // namespace cuhal::mocks

#endif  // CUHAL_TESTS_MOCKS_MOCK_NCCL_API_H_
