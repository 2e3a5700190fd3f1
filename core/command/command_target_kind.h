// Copyright 2026 The cuhal Authors.
// CommandTargetKind and CommandTargetStatistics: which target replays a command buffer, and what
// it did (kept apart from command_buffer.h so that DeviceParams can name the default target).
#ifndef CUHAL_CORE_COMMAND_COMMAND_TARGET_KIND_H_
#define CUHAL_CORE_COMMAND_COMMAND_TARGET_KIND_H_

#include <cstdint>

namespace cuhal {

// Where the recorded commands run.
enum class CommandTargetKind {
  // Issued one by one on the queue's stream at each submission (StreamCommandTarget).
  kStream,
  // Built into CUDA graphs from explicit nodes at the first submission, instantiated once and
  // re-launched; later bindings update the executable graphs (GraphCommandTarget).
  kGraph,
};
// "stream", "graph".
[[nodiscard]] constexpr const char* CommandTargetKindName(CommandTargetKind kind) noexcept {
  return kind == CommandTargetKind::kGraph ? "graph" : "stream";
}

// What a command buffer's target did across its submissions (all 0 for the stream target).
// Counted per graph: a graph command buffer split at collectives has one graph per run of
// commands between them, and each counts on its own.
struct CommandTargetStatistics {
  std::uint64_t instantiations = 0;       // cuGraphInstantiateWithFlags that succeeded
  std::uint64_t launches = 0;             // cuGraphLaunch that succeeded
  std::uint64_t reuses = 0;               // launches with nothing to update
  std::uint64_t in_place_updates = 0;     // updates done with node setters only
  std::uint64_t nodes_updated = 0;        // node setter calls of those updates
  std::uint64_t whole_graph_updates = 0;  // updates done with cuGraphExecUpdate
  std::uint64_t rebuilds = 0;             // re-instantiations after the first
};

}  // namespace cuhal

#endif  // CUHAL_CORE_COMMAND_COMMAND_TARGET_KIND_H_
