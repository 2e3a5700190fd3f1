// Copyright 2026 The cuhal Authors.
// StreamCommandTarget: the direct target of a command buffer (IREE's stream_command_buffer):
// every submission issues the recorded commands one by one on the queue's stream.
#ifndef CUHAL_CORE_COMMAND_STREAM_COMMAND_TARGET_H_
#define CUHAL_CORE_COMMAND_STREAM_COMMAND_TARGET_H_

#include <cuda.h>

#include <vector>

#include "core/command/command_buffer.h"
#include "core/symbols/cuda_api.h"

namespace cuhal {

// Issues each recorded command as one stream operation: fill -> cuMemsetD8/D16/D32Async, update
// -> cuMemcpyHtoDAsync from the command's own copy of the bytes, copy -> cuMemcpyAsync,
// dispatch -> cuLaunchKernel, barrier -> nothing (the stream is in order already), signal event
// -> cuEventRecord, reset event -> nothing, wait events -> cuStreamWaitEvent, collective -> the
// channel's NCCL call (on the channel's queue, which must be the stream's).
//
// Ownership: owned by its CommandBuffer; borrows the table and the list. Thread-safety: Issue
// keeps no state, so concurrent Issues are fine. Stream ordering: the commands are enqueued in
// recording order on `stream`; Issue returns once they are enqueued (an update's bytes are the
// command's, which lives as long as the command buffer, so the asynchronous copy may read them
// later).
class StreamCommandTarget final : public CommandTarget {
 public:
  explicit StreamCommandTarget(const CudaApi* api) : api_(api) {}
  [[nodiscard]] const char* name() const noexcept override { return "stream"; }
  [[nodiscard]] Status Prepare(const std::vector<Command>& commands) override;
  [[nodiscard]] Status Issue(CUstream stream, ResolvedBindings bindings) override;

 private:
  [[nodiscard]] Status IssueOne(const Command& command, CUstream stream,
                                ResolvedBindings bindings) const;
  const CudaApi* const api_;
  const std::vector<Command>* commands_ = nullptr;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_COMMAND_STREAM_COMMAND_TARGET_H_
