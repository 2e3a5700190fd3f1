// Copyright 2026 The cuhal Authors.
// Internal to the replay (trace/replay.cc): the allocators that live in source files of their
// own, so that a build without PyTorch compiles none of PyTorch's headers.
#ifndef CUHAL_TRACE_REPLAY_BACKENDS_H_
#define CUHAL_TRACE_REPLAY_BACKENDS_H_

#include <memory>

#include "core/base/status_or.h"
#include "trace/replay.h"

namespace cuhal::trace::internal {

// Whether replay_pytorch.cc (true) or replay_pytorch_missing.cc (false) was compiled.
bool BuiltWithTorch() noexcept;

// The pytorch allocator on `target` (the real driver), with `streams` streams made through
// `api`. Without torch: UNIMPLEMENTED "built without torch (configure with
// -DCUHAL_WITH_TORCH=ON)".
StatusOr<std::unique_ptr<ReplayAllocator>> CreatePyTorchReplayAllocator(
    const ReplayTarget& target, const CudaApi* api, int streams);

}  // namespace cuhal::trace::internal

#endif  // CUHAL_TRACE_REPLAY_BACKENDS_H_
