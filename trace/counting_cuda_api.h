// Copyright 2026 The cuhal Authors.
// CountingCudaApi: a CudaApi whose every entry counts its calls and forwards to another table, so
// that a replay can say how many driver calls an allocator made, the same way for every
// allocator that takes a table (the fake's, the real driver's, a mock's).
#ifndef CUHAL_TRACE_COUNTING_CUDA_API_H_
#define CUHAL_TRACE_COUNTING_CUDA_API_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"

namespace cuhal::trace {

// A table of trampolines: entry `cuFoo` adds one to cuFoo's count and calls inner->cuFoo with
// the same arguments (entries null in `inner` stay null). Function pointers carry no state, so
// the trampolines reach the inner table and the counts through process-wide slots: at most one
// CountingCudaApi exists at a time (Create refuses a second).
//
// Ownership: the creator owns it (unique_ptr; the address of api() never changes); `inner` is
// borrowed and must outlive it, and api() must not be used after it is destroyed.
// Thread-safety: api() may be called from any thread (the counts are atomic, relaxed: a total
// read while other threads call may miss their latest calls); Reset and the reads may be called
// from any thread. Stream ordering: none of its own; each entry keeps the driver's rules.
class CountingCudaApi {
 public:
  // FAILED_PRECONDITION when another CountingCudaApi is alive; INVALID_ARGUMENT for null.
  [[nodiscard]] static StatusOr<std::unique_ptr<CountingCudaApi>> Create(const CudaApi* inner);
  ~CountingCudaApi();
  CountingCudaApi(const CountingCudaApi&) = delete;             // owns the process-wide slot
  CountingCudaApi& operator=(const CountingCudaApi&) = delete;  // ditto

  [[nodiscard]] const CudaApi& api() const noexcept { return api_; }
  // Calls through api() since Create or the last Reset, over every entry.
  [[nodiscard]] std::uint64_t total() const noexcept;
  // The entries called at least once, with their counts, in table order.
  [[nodiscard]] std::vector<std::pair<std::string_view, std::uint64_t>> Counts() const;
  void Reset() noexcept;

 private:
  CountingCudaApi() = default;
  CudaApi api_;
};

}  // namespace cuhal::trace

#endif  // CUHAL_TRACE_COUNTING_CUDA_API_H_
