// Copyright 2026 The cuhal Authors.
// MockCudaApi: a trompeloeil mock of every CudaApi entry, generated from cuda_symbols.inc, and the
// means to point a CudaApi table at it.
#ifndef CUHAL_TESTS_MOCKS_MOCK_CUDA_API_H_
#define CUHAL_TESTS_MOCKS_MOCK_CUDA_API_H_

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "core/symbols/cuda_api.h"
#include "tests/mocks/mock_dispatch.h"  // GoogleTest + trompeloeil's GoogleTest adapter

namespace cuhal::mocks {

// One trompeloeil mock function per line of cuda_symbols.inc, with the name and the signature of
// the CudaApi entry (so of cuda.h). cuda.h #defines many names to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2); the mock functions follow those defines exactly as the table
// does, so write the plain names everywhere and the preprocessor keeps them in step:
//
//   MockCudaApi mock;
//   CudaApi api = mock.Table();                      // every entry -> mock
//   REQUIRE_CALL(mock, cuMemAlloc(_, 4096)).SIDE_EFFECT(*_1 = 0x1000).RETURN(CUDA_SUCCESS);
//   CUdeviceptr p = 0;
//   EXPECT_EQ(api.cuMemAlloc(&p, 4096), CUDA_SUCCESS);
//
// A table entry cannot lack its mock: both come from the same list, and mock_cuda_api.cc fails
// to compile if CudaApi ever holds an entry that the list does not (trompeloeil's static_assert
// checks each line's arity against cuda.h).
//
// Ownership: the mock owns its expectations; a table filled from it holds only pointers to static
// trampolines, so tables may be copied freely and outlive the mock (a call through them then
// fails the test instead of crashing).
//
// Thread-safety and the "current mock": a table of plain C function pointers cannot say which
// mock it belongs to, so the trampolines forward to the CURRENT MockCudaApi, which is the one that
// most recently called Fill()/Table(). It stops being current when it is destroyed or when another
// MockCudaApi fills a table; at most one MockCudaApi receives calls at a time in a process. Calls
// may come from any thread (trompeloeil serializes matching); the destructor waits for calls in
// flight into this mock to return. Never destroy a mock from inside one of its own actions.
// A call that no expectation matches, or that finds no current mock, is a GoogleTest failure and
// returns CUDA_ERROR_UNKNOWN (exceptions never cross the table). Include this header, never
// <trompeloeil.hpp> alone (its GoogleTest adapter must be seen by every user).
//
// Stream ordering: none; a mock call returns when its action returns, and runs no queued work.
class MockCudaApi {
 public:
  static constexpr const char* kMockName = "MockCudaApi";
  // What a call returns when the mock could not answer it.
  static constexpr CUresult kFailureResult = CUDA_ERROR_UNKNOWN;

  MockCudaApi() = default;
  ~MockCudaApi();
  MockCudaApi(const MockCudaApi&) = delete;             // trompeloeil mocks are not copyable
  MockCudaApi& operator=(const MockCudaApi&) = delete;  // ditto
  MockCudaApi(MockCudaApi&&) = delete;                  // a table routes to this object's address
  MockCudaApi& operator=(MockCudaApi&&) = delete;       // ditto

  // Points every entry of `*api` (required and optional) at this mock and makes this mock the
  // current one. A test that wants an optional entry missing sets it to nullptr afterwards.
  void Fill(CudaApi* api);
  // A fresh table filled by Fill().
  [[nodiscard]] CudaApi Table();

  // Installs ALLOW_CALLs (kept until the mock is destroyed; later expectations take precedence)
  // that answer the error lookups as a driver would: cuGetErrorName gives the cuda.h enumerator
  // name (CUDA_ERROR_INVALID_VALUE and nullptr for an unknown code), cuGetErrorString gives
  // kMockErrorString. Use it when a test does not care about the text of an error.
  void AllowErrorLookups();
  // Answers Driver::Create and Driver::QueryDevice(0) permissively (not pinned): cuInit,
  // cuDriverGetVersion (13000), one device named "Mock GPU" with UUID bytes 0xAB, bus id
  // 0000:18:00.0, 80 GiB, and each attribute as `attribute` says.
  void AllowDeviceQueries(std::function<int(CUdevice_attribute)> attribute);
  static constexpr const char* kMockErrorString = "error string from MockCudaApi";

  // The plain cuda.h name of the CudaApi entry at byte offset `offset` ("?" if none).
  static std::string_view EntryName(std::size_t offset);

#define CUHAL_CU_PFN(kind, name, arity) MAKE_MOCK##arity(name, decltype(::name));
#include "core/symbols/cuda_symbols.inc"
#undef CUHAL_CU_PFN

 private:
  // Declared after the mock functions: expectations must go before the mocks they belong to.
  std::vector<std::unique_ptr<trompeloeil::expectation>> defaults_;
};

}  // namespace cuhal::mocks

#endif  // CUHAL_TESTS_MOCKS_MOCK_CUDA_API_H_
