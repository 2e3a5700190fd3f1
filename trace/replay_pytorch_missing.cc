// Copyright 2026 The cuhal Authors.
// The pytorch allocator in a build without PyTorch (CUHAL_WITH_TORCH OFF): refused, saying how
// to get it.
#include "trace/replay_backends.h"

namespace cuhal::trace::internal {

bool BuiltWithTorch() noexcept { return false; }

StatusOr<std::unique_ptr<ReplayAllocator>> CreatePyTorchReplayAllocator(const ReplayTarget&,
                                                                        const CudaApi*, int) {
  return UnimplementedError(
      "allocator pytorch: built without torch (configure with -DCUHAL_WITH_TORCH=ON)");
}

}  // namespace cuhal::trace::internal
