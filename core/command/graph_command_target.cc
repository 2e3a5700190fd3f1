// Copyright 2026 The cuhal Authors.
#include "core/command/graph_command_target.h"

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/device/queue.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

// The ranges `command` names, resolved for one submission, in a fixed order (fill/update: target;
// copy: source, target; dispatch: its bindings; others: none).
std::vector<ResolvedBinding> RangesOf(const Command& command, ResolvedBindings bindings) {
  std::vector<ResolvedBinding> ranges;
  if (const auto* fill = std::get_if<FillCommand>(&command)) {
    ranges.push_back(ResolveRange(fill->target, bindings));
  } else if (const auto* update = std::get_if<UpdateCommand>(&command)) {
    ranges.push_back(ResolveRange(update->target, bindings));
  } else if (const auto* copy = std::get_if<CopyCommand>(&command)) {
    ranges.push_back(ResolveRange(copy->source, bindings));
    ranges.push_back(ResolveRange(copy->target, bindings));
  } else if (const auto* dispatch = std::get_if<DispatchCommand>(&command)) {
    for (const RecordedRange& r : dispatch->bindings) ranges.push_back(ResolveRange(r, bindings));
  }
  return ranges;
}

bool Indirect(const Command& command) {
  if (const auto* fill = std::get_if<FillCommand>(&command)) return fill->target.indirect();
  if (const auto* update = std::get_if<UpdateCommand>(&command)) return update->target.indirect();
  if (const auto* copy = std::get_if<CopyCommand>(&command)) {
    return copy->source.indirect() || copy->target.indirect();
  }
  if (const auto* dispatch = std::get_if<DispatchCommand>(&command)) {
    for (const RecordedRange& r : dispatch->bindings) {
      if (r.indirect()) return true;
    }
  }
  return false;
}

// A node setter's answer for a change it does not support (the update falls back).
bool Refused(CUresult result) {
  return result == CUDA_ERROR_INVALID_VALUE || result == CUDA_ERROR_NOT_SUPPORTED;
}

// Calls `fn` (the table entry `name`) and returns its answer as a Status, the CUresult also in
// *result (the caller tells a refused update from a failure).
template <typename Fn, typename... Args>
Status CallKeepingResult(const CudaApi* api, Fn fn, const char* name, CUresult* result,
                         Args... args) {
  if (fn == nullptr) return MissingEntryStatus("libcuda", name);
  *result = fn(args...);
  return CudaResultToStatus(api, *result, name);
}

bool SameRanges(const std::vector<ResolvedBinding>& a, const std::vector<ResolvedBinding>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].address != b[i].address || a[i].length != b[i].length) return false;
  }
  return true;
}

CUDA_MEMSET_NODE_PARAMS MemsetParams(const FillCommand& c, const ResolvedBinding& target) {
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = target.address;
  p.elementSize = static_cast<unsigned>(c.pattern_length);
  p.width = target.length / c.pattern_length;
  p.height = 1;
  p.pitch = 0;
  switch (c.pattern_length) {
    case 1:
      p.value = c.pattern & 0xFFu;
      break;
    case 2:
      p.value = c.pattern & 0xFFFFu;
      break;
    default:
      p.value = c.pattern;
      break;
  }
  return p;
}

CUDA_MEMCPY3D CopyParams(CUdeviceptr source, CUdeviceptr target, std::size_t length) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  p.srcDevice = source;
  p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  p.dstDevice = target;
  p.WidthInBytes = length;
  p.Height = 1;
  p.Depth = 1;
  return p;
}

CUDA_MEMCPY3D UpdateParams(const UpdateCommand& c, const ResolvedBinding& target) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_HOST;
  p.srcHost = c.data.data();
  p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  p.dstDevice = target.address;
  p.WidthInBytes = c.data.size();
  p.Height = 1;
  p.Depth = 1;
  return p;
}

// A kernel node's parameters; `addresses` and `pointers` hold what kernelParams points at and
// must live until the driver call that takes them (which copies them).
struct KernelArgs {
  std::vector<CUdeviceptr> addresses;
  std::vector<void*> pointers;
  CUDA_KERNEL_NODE_PARAMS params{};
};
void MakeKernelArgs(const DispatchCommand& c, const std::vector<ResolvedBinding>& ranges,
                    KernelArgs* args) {
  args->addresses.resize(ranges.size());
  args->pointers.clear();
  args->pointers.reserve(ranges.size() + c.constants.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    args->addresses[i] = ranges[i].address;
    args->pointers.push_back(&args->addresses[i]);
  }
  for (const std::uint32_t& constant : c.constants) {
    args->pointers.push_back(const_cast<std::uint32_t*>(&constant));
  }
  CUDA_KERNEL_NODE_PARAMS& p = args->params;
  p = CUDA_KERNEL_NODE_PARAMS{};
  p.func = c.function;
  p.gridDimX = c.config.workgroups[0];
  p.gridDimY = c.config.workgroups[1];
  p.gridDimZ = c.config.workgroups[2];
  p.blockDimX = c.config.block[0];
  p.blockDimY = c.config.block[1];
  p.blockDimZ = c.config.block[2];
  p.sharedMemBytes = c.config.dynamic_shared_bytes;
  p.kernelParams = args->pointers.empty() ? nullptr : args->pointers.data();
}

}  // namespace

GraphCommandTarget::~GraphCommandTarget() {
  MutexLock lock(mu_);
  // Executable graphs first (each Handle reports a failed release; nothing here can act on it).
  for (Segment& s : segments_) ReportDroppedStatus(s.exec.Reset());
  for (Segment& s : segments_) ReportDroppedStatus(s.graph.Reset());
}

Status GraphCommandTarget::Prepare(const std::vector<Command>& commands) {
  commands_ = &commands;
  steps_.clear();
  std::vector<Segment> segments;
  std::size_t begin = 0;
  auto close_segment = [&](std::size_t end) {
    bool has_nodes = false;
    for (std::size_t i = begin; i < end; ++i) {
      if (!std::holds_alternative<ResetEventCommand>(commands[i])) has_nodes = true;
    }
    if (has_nodes) {
      Segment segment;
      segment.begin = begin;
      segment.end = end;
      steps_.push_back(Step{false, segments.size()});
      segments.push_back(std::move(segment));
    }
  };
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (std::holds_alternative<CollectiveCommand>(commands[i])) {
      close_segment(i);
      steps_.push_back(Step{true, i});
      begin = i + 1;
    }
  }
  close_segment(commands.size());
  MutexLock lock(mu_);
  segments_ = std::move(segments);
  return OkStatus();
}

Status GraphCommandTarget::Build(const Segment& segment, ResolvedBindings bindings,
                                 GraphHandle* graph, std::vector<Node>* nodes) const {
  const CudaApi* api = api_;
  const CUcontext context = context_;
  CUgraph raw = nullptr;
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuGraphCreate, &raw, 0), "creating its graph");
  GraphHandle owned(api, raw);  // destroyed (with its nodes) if a node cannot be added
  std::vector<Node> made;
  CUgraphNode previous = nullptr;
  for (std::size_t index = segment.begin; index < segment.end; ++index) {
    const Command& command = (*commands_)[index];
    const std::vector<ResolvedBinding> ranges = RangesOf(command, bindings);
    const std::size_t deps = previous == nullptr ? 0 : 1;
    auto add = [&](CUgraphNodeType type, std::size_t event,
                   const std::function<Status(CUgraphNode*)>& call) -> Status {
      Node node;
      node.command = index;
      node.type = type;
      node.event = event;
      node.indirect = Indirect(command);
      node.ranges = ranges;
      CUHAL_RETURN_IF_ERROR(call(&node.node), "command ", index, " (", CommandName(command), ")");
      previous = node.node;
      made.push_back(std::move(node));
      return OkStatus();
    };
    Status status = std::visit(
        [&](const auto& c) -> Status {
          using T = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<T, FillCommand>) {
            const CUDA_MEMSET_NODE_PARAMS p = MemsetParams(c, ranges[0]);
            return add(CU_GRAPH_NODE_TYPE_MEMSET, 0, [&](CUgraphNode* out) {
              return CUHAL_CU(api, cuGraphAddMemsetNode, out, raw, &previous, deps, &p, context);
            });
          } else if constexpr (std::is_same_v<T, UpdateCommand>) {
            const CUDA_MEMCPY3D p = UpdateParams(c, ranges[0]);
            return add(CU_GRAPH_NODE_TYPE_MEMCPY, 0, [&](CUgraphNode* out) {
              return CUHAL_CU(api, cuGraphAddMemcpyNode, out, raw, &previous, deps, &p, context);
            });
          } else if constexpr (std::is_same_v<T, CopyCommand>) {
            const CUDA_MEMCPY3D p =
                CopyParams(ranges[0].address, ranges[1].address, ranges[0].length);
            return add(CU_GRAPH_NODE_TYPE_MEMCPY, 0, [&](CUgraphNode* out) {
              return CUHAL_CU(api, cuGraphAddMemcpyNode, out, raw, &previous, deps, &p, context);
            });
          } else if constexpr (std::is_same_v<T, DispatchCommand>) {
            KernelArgs args;
            MakeKernelArgs(c, ranges, &args);
            return add(CU_GRAPH_NODE_TYPE_KERNEL, 0, [&](CUgraphNode* out) {
              return CUHAL_CU(api, cuGraphAddKernelNode, out, raw, &previous, deps, &args.params);
            });
          } else if constexpr (std::is_same_v<T, BarrierCommand>) {
            return add(CU_GRAPH_NODE_TYPE_EMPTY, 0, [&](CUgraphNode* out) {
              return CUHAL_CU(api, cuGraphAddEmptyNode, out, raw, &previous, deps);
            });
          } else if constexpr (std::is_same_v<T, SignalEventCommand>) {
            return add(CU_GRAPH_NODE_TYPE_EVENT_RECORD, 0, [&](CUgraphNode* out) {
              return CUHAL_CU(api, cuGraphAddEventRecordNode, out, raw, &previous, deps, c.event);
            });
          } else if constexpr (std::is_same_v<T, WaitEventsCommand>) {
            for (std::size_t e = 0; e < c.events.size(); ++e) {
              const std::size_t n = previous == nullptr ? 0 : 1;
              CUHAL_RETURN_IF_ERROR(add(CU_GRAPH_NODE_TYPE_WAIT_EVENT, e, [&](CUgraphNode* out) {
                return CUHAL_CU(api, cuGraphAddEventWaitNode, out, raw, &previous, n, c.events[e]);
              }));
            }
            return OkStatus();
          } else if constexpr (std::is_same_v<T, ResetEventCommand>) {
            return OkStatus();  // nothing to record on CUDA (see CommandBuffer::ResetEvent)
          } else {
            return InternalError("a collective inside a graph segment");  // Prepare splits them
          }
        },
        command);
    CUHAL_RETURN_IF_ERROR(status);
  }
  *graph = std::move(owned);
  *nodes = std::move(made);
  return OkStatus();
}

Status GraphCommandTarget::Instantiate(Segment& segment, ResolvedBindings bindings) {
  // Drop what the segment held (a failed or replaced executable graph).
  Status dropped = segment.exec.Reset();
  Status dropped_graph = segment.graph.Reset();
  segment.nodes.clear();
  CUHAL_RETURN_IF_ERROR(dropped, "destroying its previous executable graph");
  CUHAL_RETURN_IF_ERROR(dropped_graph, "destroying its previous graph");
  if (context_ == nullptr) {
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuCtxGetCurrent, &context_), "finding its context");
    if (context_ == nullptr) {
      return FailedPreconditionError("no context is current to build its graph in");
    }
  }
  GraphHandle graph;
  std::vector<Node> nodes;
  CUHAL_RETURN_IF_ERROR(Build(segment, bindings, &graph, &nodes));
  CUgraphExec exec = nullptr;
  // On failure `graph` is destroyed here, with its nodes.
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuGraphInstantiateWithFlags, &exec, graph.get(), 0),
                        "instantiating its graph of ", nodes.size(), " node(s)");
  segment.exec = GraphExecHandle(api_, exec);
  segment.graph = std::move(graph);
  segment.nodes = std::move(nodes);
  instantiations_.fetch_add(1, std::memory_order_relaxed);
  return OkStatus();
}

Status GraphCommandTarget::SetNode(CUgraphExec exec, const Node& node,
                                   const std::vector<ResolvedBinding>& ranges,
                                   CUresult* result) const {
  const Command& command = (*commands_)[node.command];
  const CudaApi* api = api_;
  if (const auto* fill = std::get_if<FillCommand>(&command)) {
    const CUDA_MEMSET_NODE_PARAMS p = MemsetParams(*fill, ranges[0]);
    return CallKeepingResult(api, api->cuGraphExecMemsetNodeSetParams,
                             "cuGraphExecMemsetNodeSetParams", result, exec, node.node, &p,
                             context_);
  }
  if (const auto* update = std::get_if<UpdateCommand>(&command)) {
    const CUDA_MEMCPY3D p = UpdateParams(*update, ranges[0]);
    return CallKeepingResult(api, api->cuGraphExecMemcpyNodeSetParams,
                             "cuGraphExecMemcpyNodeSetParams", result, exec, node.node, &p,
                             context_);
  }
  if (std::holds_alternative<CopyCommand>(command)) {
    const CUDA_MEMCPY3D p = CopyParams(ranges[0].address, ranges[1].address, ranges[0].length);
    return CallKeepingResult(api, api->cuGraphExecMemcpyNodeSetParams,
                             "cuGraphExecMemcpyNodeSetParams", result, exec, node.node, &p,
                             context_);
  }
  if (const auto* dispatch = std::get_if<DispatchCommand>(&command)) {
    KernelArgs args;
    MakeKernelArgs(*dispatch, ranges, &args);
    return CallKeepingResult(api, api->cuGraphExecKernelNodeSetParams,
                             "cuGraphExecKernelNodeSetParams", result, exec, node.node,
                             &args.params);
  }
  return InternalError(StrCat("command ", node.command, " (", CommandName(command),
                              ") has no parameters to update"));
}

Status GraphCommandTarget::Update(Segment& segment, ResolvedBindings bindings) {
  // The nodes whose addresses differ from what the executable graph holds.
  std::vector<std::pair<std::size_t, std::vector<ResolvedBinding>>> changed;
  for (std::size_t i = 0; i < segment.nodes.size(); ++i) {
    const Node& node = segment.nodes[i];
    if (!node.indirect) continue;
    std::vector<ResolvedBinding> ranges = RangesOf((*commands_)[node.command], bindings);
    if (!SameRanges(ranges, node.ranges)) changed.emplace_back(i, std::move(ranges));
  }
  if (changed.empty()) {
    reuses_.fetch_add(1, std::memory_order_relaxed);
    return OkStatus();
  }
  // 1. In place, node by node. A setter that refuses the change (INVALID_VALUE / NOT_SUPPORTED:
  // e.g. an operand in memory of another kind or context) moves on to 2; any other failure is
  // returned.
  std::uint64_t set = 0;
  for (auto& [i, ranges] : changed) {
    CUresult result = CUDA_SUCCESS;
    Status status = SetNode(segment.exec.get(), segment.nodes[i], ranges, &result);
    if (!status.ok() && !Refused(result)) {
      status.AddContext(StrCat("updating the node of command ", segment.nodes[i].command, " (",
                               CommandName((*commands_)[segment.nodes[i].command]), ")"));
      return status;
    }
    if (!status.ok()) break;
    segment.nodes[i].ranges = ranges;
    ++set;
  }
  if (set == changed.size()) {
    in_place_updates_.fetch_add(1, std::memory_order_relaxed);
    nodes_updated_.fetch_add(set, std::memory_order_relaxed);
    return OkStatus();
  }
  // 2. The whole graph: a fresh graph with the new bindings, of the same shape, given to
  // cuGraphExecUpdate (it sets every node, so the setters' partial changes do not matter). The
  // fresh graph is only a template and is destroyed at once; the node setters keep taking the
  // instantiated graph's node handles. A refusal (GRAPH_EXEC_UPDATE_FAILURE) moves on to 3.
  {
    GraphHandle fresh;
    std::vector<Node> fresh_nodes;
    CUHAL_RETURN_IF_ERROR(Build(segment, bindings, &fresh, &fresh_nodes),
                          "building a graph to update its executable graph from");
    CUgraphExecUpdateResultInfo info{};
    CUresult result = CUDA_SUCCESS;
    const CudaApi* api = api_;
    Status updated = CallKeepingResult(api, api->cuGraphExecUpdate, "cuGraphExecUpdate", &result,
                                       segment.exec.get(), fresh.get(), &info);
    CUHAL_RETURN_IF_ERROR(fresh.Reset(),
                          "destroying the graph it updated its executable graph from");
    if (updated.ok()) {
      for (std::size_t i = 0; i < segment.nodes.size(); ++i) {
        segment.nodes[i].ranges = std::move(fresh_nodes[i].ranges);
      }
      whole_graph_updates_.fetch_add(1, std::memory_order_relaxed);
      return OkStatus();
    }
    if (result != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) return updated;
  }
  // 3. Rebuild.
  CUHAL_RETURN_IF_ERROR(Instantiate(segment, bindings), "rebuilding its graph for new bindings");
  rebuilds_.fetch_add(1, std::memory_order_relaxed);
  return OkStatus();
}

Status GraphCommandTarget::Launch(Segment& segment, CUstream stream, ResolvedBindings bindings) {
  if (!segment.exec) {
    CUHAL_RETURN_IF_ERROR(Instantiate(segment, bindings));
  } else {
    CUHAL_RETURN_IF_ERROR(Update(segment, bindings));
  }
  CUHAL_RETURN_IF_ERROR(CUHAL_CU(api_, cuGraphLaunch, segment.exec.get(), stream),
                        "launching its graph of ", segment.nodes.size(), " node(s)");
  launches_.fetch_add(1, std::memory_order_relaxed);
  return OkStatus();
}

Status GraphCommandTarget::IssueCollective(std::size_t index, CUstream stream,
                                           ResolvedBindings bindings) const {
  const auto& c = std::get<CollectiveCommand>((*commands_)[index]);
  if (c.channel->queue().stream() != stream) {
    return FailedPreconditionError(StrCat("command ", index, " (collective): the channel (rank ",
                                          c.channel->rank(), ") enqueues on queue ",
                                          c.channel->queue().index(),
                                          ", not on the stream this command buffer runs on"));
  }
  const ResolvedBinding s = ResolveRange(c.send, bindings);
  const ResolvedBinding r = ResolveRange(c.recv, bindings);
  return c.channel->CollectiveOnAddresses(c.kind, s.address, r.address, c.count, c.type, c.op,
                                          c.root);
}

Status GraphCommandTarget::Issue(CUstream stream, ResolvedBindings bindings) {
  if (commands_ == nullptr) return FailedPreconditionError("the graph target was not prepared");
  MutexLock lock(mu_);
  for (const Step& step : steps_) {
    if (step.collective) {
      CUHAL_RETURN_IF_ERROR(IssueCollective(step.index, stream, bindings), "command ", step.index,
                            " (collective, issued on the stream between its graphs)");
      continue;
    }
    Segment& segment = segments_[step.index];
    Status status = Launch(segment, stream, bindings);
    if (!status.ok()) {
      // Nothing half-updated survives: the next submission rebuilds this graph.
      ReportDroppedStatus(segment.exec.Reset());
      ReportDroppedStatus(segment.graph.Reset());
      segment.nodes.clear();
      status.AddContext(StrCat("graph of commands ", segment.begin, " to ", segment.end - 1));
      return status;
    }
  }
  return OkStatus();
}

CommandTargetStatistics GraphCommandTarget::statistics() const noexcept {
  CommandTargetStatistics s;
  s.instantiations = instantiations_.load(std::memory_order_relaxed);
  s.launches = launches_.load(std::memory_order_relaxed);
  s.reuses = reuses_.load(std::memory_order_relaxed);
  s.in_place_updates = in_place_updates_.load(std::memory_order_relaxed);
  s.nodes_updated = nodes_updated_.load(std::memory_order_relaxed);
  s.whole_graph_updates = whole_graph_updates_.load(std::memory_order_relaxed);
  s.rebuilds = rebuilds_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace cuhal
