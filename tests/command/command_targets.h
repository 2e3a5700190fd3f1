// Copyright 2026 The cuhal Authors.
// The command buffer targets every shared test body runs over (RMM's pattern: one body, many
// factories): the direct stream target and the CUDA graph target.
#ifndef CUHAL_TESTS_COMMAND_COMMAND_TARGETS_H_
#define CUHAL_TESTS_COMMAND_COMMAND_TARGETS_H_

#include <string>
#include <vector>

#include "core/command/command_buffer.h"

namespace cuhal::testing {

struct CommandTargetCase {
  CommandTargetKind kind;
  const char* name;
};

inline std::vector<CommandTargetCase> CommandTargets() {
  return {{CommandTargetKind::kStream, "stream"}, {CommandTargetKind::kGraph, "graph"}};
}

// CommandBufferParams for `target`, `mode` and `binding_capacity`.
inline CommandBufferParams TargetParams(const CommandTargetCase& target,
                                        CommandBufferMode mode = CommandBufferMode::kOneShot,
                                        std::uint32_t binding_capacity = 0) {
  CommandBufferParams params;
  params.mode = mode;
  params.target = target.kind;
  params.binding_capacity = binding_capacity;
  params.name = std::string("command buffer (") + target.name + ")";
  return params;
}

}  // namespace cuhal::testing

#endif  // CUHAL_TESTS_COMMAND_COMMAND_TARGETS_H_
