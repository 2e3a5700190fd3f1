// Copyright 2026 The cuhal Authors.
#include "core/device/device_params.h"

namespace cuhal {
namespace {

Status CheckPool(const MemoryPoolParams& pool, const char* field) {
  if (pool.minimum_capacity > pool.release_threshold) {
    return InvalidArgumentError(StrCat("DeviceParams.", field, ".minimum_capacity must be <= ",
                                       field, ".release_threshold (", pool.release_threshold,
                                       "), got ", pool.minimum_capacity));
  }
  return OkStatus();
}

}  // namespace

Status DeviceParams::Validate() const {
  if (queue_count < 1 || queue_count > kMaxQueueCount) {
    return InvalidArgumentError(StrCat("DeviceParams.queue_count must be in [1, ", kMaxQueueCount,
                                       "], got ", queue_count));
  }
  if (event_pool_capacity > kMaxEventPoolCapacity) {
    return InvalidArgumentError(StrCat("DeviceParams.event_pool_capacity must be <= ",
                                       kMaxEventPoolCapacity, ", got ", event_pool_capacity));
  }
  if (command_target != CommandTargetKind::kStream && command_target != CommandTargetKind::kGraph) {
    return InvalidArgumentError(StrCat("DeviceParams.command_target must be kStream or kGraph, got ",
                                       static_cast<int>(command_target)));
  }
  if (completion_poll_interval < std::chrono::microseconds(0) ||
      completion_poll_interval > std::chrono::seconds(1)) {
    return InvalidArgumentError(StrCat(
        "DeviceParams.completion_poll_interval must be in [0, 1000000] us, got ",
        completion_poll_interval.count(), " us"));
  }
  CUHAL_RETURN_IF_ERROR(CheckPool(device_local_pool, "device_local_pool"));
  CUHAL_RETURN_IF_ERROR(CheckPool(other_pool, "other_pool"));
  return OkStatus();
}

}  // namespace cuhal
