// Copyright 2026 The cuhal Authors.
#include "core/command/command_buffer.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "core/command/graph_command_target.h"
#include "core/command/stream_command_target.h"
#include "core/device/queue.h"

namespace cuhal {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Calls fn(range, role) for every range `command` names.
template <typename Fn>
void ForEachRange(const Command& command, Fn&& fn) {
  std::visit(Overloaded{
                 [&](const FillCommand& c) { fn(c.target, "target"); },
                 [&](const UpdateCommand& c) { fn(c.target, "target"); },
                 [&](const CopyCommand& c) {
                   fn(c.source, "source");
                   fn(c.target, "target");
                 },
                 [&](const DispatchCommand& c) {
                   for (const RecordedRange& r : c.bindings) fn(r, "binding");
                 },
                 [&](const CollectiveCommand& c) {
                   fn(c.send, "send");
                   fn(c.recv, "recv");
                 },
                 [&](const auto&) {},
             },
             command);
}

std::string RefText(const BufferRef& ref) {
  if (ref.buffer != nullptr) return StrCat("buffer range at offset ", ref.offset);
  return StrCat("binding slot ", ref.slot, " at offset ", ref.offset);
}

}  // namespace

const char* CommandName(const Command& command) {
  return std::visit(Overloaded{
                        [](const FillCommand&) { return "fill"; },
                        [](const UpdateCommand&) { return "update"; },
                        [](const CopyCommand&) { return "copy"; },
                        [](const DispatchCommand&) { return "dispatch"; },
                        [](const BarrierCommand&) { return "barrier"; },
                        [](const SignalEventCommand&) { return "signal event"; },
                        [](const ResetEventCommand&) { return "reset event"; },
                        [](const WaitEventsCommand&) { return "wait events"; },
                        [](const CollectiveCommand&) { return "collective"; },
                    },
                    command);
}

ResolvedBinding ResolveRange(const RecordedRange& range, ResolvedBindings bindings) {
  if (!range.indirect()) return ResolvedBinding{range.address, range.length};
  const ResolvedBinding& b = bindings[range.slot];
  const std::size_t length = range.length == kWholeBuffer ? b.length - range.offset : range.length;
  return ResolvedBinding{b.address + range.offset, length};
}

StatusOr<std::shared_ptr<CommandBuffer>> CommandBuffer::Create(const CudaApi* api,
                                                               CommandBufferParams params) {
  const std::string what = StrCat("creating ", params.name);
  if (api == nullptr) return InvalidArgumentError(StrCat(what, ": the CUDA table is null"));
  if (params.mode == CommandBufferMode::kOneShot && params.binding_capacity != 0) {
    return InvalidArgumentError(StrCat(what, ": a one-shot command buffer takes no binding table (",
                                       "binding_capacity ", params.binding_capacity, ")"));
  }
  return std::shared_ptr<CommandBuffer>(new CommandBuffer(api, std::move(params)));
}

CommandBuffer::~CommandBuffer() = default;

Status CommandBuffer::CheckRecording(const char* what) const {
  if (target_ != nullptr) {
    return FailedPreconditionError(
        StrCat(params_.name, ": ", what, " after End (the command buffer is no longer recording)"));
  }
  return OkStatus();
}

StatusOr<RecordedRange> CommandBuffer::Record(const BufferRef& ref, const std::string& what,
                                              std::size_t alignment) {
  if (ref.buffer != nullptr && ref.slot != kNoSlot) {
    return InvalidArgumentError(StrCat(what, ": a buffer ref names both a buffer and slot ",
                                       ref.slot));
  }
  RecordedRange range;
  range.alignment = alignment;
  if (ref.buffer == nullptr) {
    if (ref.slot == kNoSlot) {
      return InvalidArgumentError(StrCat(what, ": a buffer ref names neither a buffer nor a slot"));
    }
    if (params_.mode != CommandBufferMode::kReusable) {
      return InvalidArgumentError(StrCat(what, ": binding slot ", ref.slot,
                                         " in a one-shot command buffer (indirect refs need a "
                                         "reusable one)"));
    }
    if (ref.slot >= params_.binding_capacity) {
      return OutOfRangeError(StrCat(what, ": binding slot ", ref.slot,
                                    " is outside the binding capacity ",
                                    params_.binding_capacity));
    }
    if (ref.length != kWholeBuffer && (ref.length % alignment != 0 || ref.length == 0)) {
      return InvalidArgumentError(StrCat(what, ": length ", ref.length,
                                         " must be a non-zero multiple of ", alignment));
    }
    range.slot = ref.slot;
    range.offset = ref.offset;
    range.length = ref.length;
    return range;
  }
  const Buffer& buffer = *ref.buffer;
  if (!buffer) return FailedPreconditionError(StrCat(what, ": the buffer is empty"));
  if (ref.offset > buffer.size()) {
    return OutOfRangeError(StrCat(what, ": offset ", ref.offset, " is past the end of the ",
                                  buffer.size(), "-byte buffer"));
  }
  const std::size_t length = ref.length == kWholeBuffer ? buffer.size() - ref.offset : ref.length;
  CUHAL_RETURN_IF_ERROR(buffer.CheckRange(ref.offset, length, what));
  range.address = buffer.device_ptr() + ref.offset;
  range.length = length;
  if (range.address % alignment != 0 || length % alignment != 0) {
    return InvalidArgumentError(StrCat(what, ": address 0x", std::hex,
                                       static_cast<std::uint64_t>(range.address), std::dec,
                                       " and length ", length, " must be multiples of ",
                                       alignment));
  }
  return range;
}

Status CommandBuffer::Fill(BufferRef target, const void* pattern, std::size_t pattern_length) {
  CUHAL_RETURN_IF_ERROR(CheckRecording("fill"));
  const std::string what = StrCat(params_.name, ": fill of ", RefText(target));
  if (pattern == nullptr) return InvalidArgumentError(StrCat(what, ": the pattern is null"));
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4) {
    return InvalidArgumentError(
        StrCat(what, ": the pattern length must be 1, 2 or 4, got ", pattern_length));
  }
  FillCommand command;
  CUHAL_ASSIGN_OR_RETURN(command.target, Record(target, what, pattern_length));
  std::memcpy(&command.pattern, pattern, pattern_length);
  command.pattern_length = pattern_length;
  commands_.emplace_back(std::move(command));
  return OkStatus();
}

Status CommandBuffer::Update(std::span<const std::byte> source, BufferRef target) {
  CUHAL_RETURN_IF_ERROR(CheckRecording("update"));
  const std::string what =
      StrCat(params_.name, ": update of ", source.size(), " bytes into ", RefText(target));
  if (source.empty()) return InvalidArgumentError(StrCat(what, ": no bytes to write"));
  if (target.length != kWholeBuffer && target.length != source.size()) {
    return InvalidArgumentError(StrCat(what, ": the target length ", target.length,
                                       " differs from the source's ", source.size()));
  }
  target.length = source.size();
  UpdateCommand command;
  CUHAL_ASSIGN_OR_RETURN(command.target, Record(target, what));
  command.data.assign(source.begin(), source.end());
  commands_.emplace_back(std::move(command));
  return OkStatus();
}

Status CommandBuffer::Copy(BufferRef source, BufferRef target) {
  CUHAL_RETURN_IF_ERROR(CheckRecording("copy"));
  const std::string what =
      StrCat(params_.name, ": copy from ", RefText(source), " to ", RefText(target));
  // One side kWholeBuffer: it takes the other side's length.
  if (source.length == kWholeBuffer && target.length != kWholeBuffer) source.length = target.length;
  if (target.length == kWholeBuffer && source.length != kWholeBuffer) target.length = source.length;
  CopyCommand command;
  CUHAL_ASSIGN_OR_RETURN(command.source, Record(source, StrCat(what, ": source")));
  CUHAL_ASSIGN_OR_RETURN(command.target, Record(target, StrCat(what, ": target")));
  const bool source_known = command.source.length != kWholeBuffer;
  const bool target_known = command.target.length != kWholeBuffer;
  if (source_known && target_known && command.source.length != command.target.length) {
    return InvalidArgumentError(StrCat(what, ": the source length ", command.source.length,
                                       " differs from the target length ",
                                       command.target.length));
  }
  // One side known: the other takes its length.
  if (source_known && !target_known) command.target.length = command.source.length;
  if (target_known && !source_known) command.source.length = command.target.length;
  if (command.source.length == 0) return InvalidArgumentError(StrCat(what, ": nothing to copy"));
  if (!command.source.indirect() && !command.target.indirect() &&
      command.source.address < command.target.address + command.target.length &&
      command.target.address < command.source.address + command.source.length) {
    return InvalidArgumentError(StrCat(what, ": the source and target ranges overlap"));
  }
  commands_.emplace_back(std::move(command));
  return OkStatus();
}

Status CommandBuffer::Dispatch(const Executable& executable, std::uint32_t ordinal,
                               const DispatchConfig& config, std::span<const BufferRef> bindings,
                               std::span<const std::uint32_t> constants) {
  CUHAL_RETURN_IF_ERROR(CheckRecording("dispatch"));
  CUHAL_RETURN_IF_ERROR(executable.ValidateDispatch(ordinal, config), params_.name);
  CUHAL_ASSIGN_OR_RETURN(const EntryPoint* entry, executable.entry_point(ordinal));
  DispatchCommand command;
  command.executable = &executable;
  command.ordinal = ordinal;
  command.function = entry->function;
  command.config = config;
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    CUHAL_ASSIGN_OR_RETURN(RecordedRange range,
                           Record(bindings[i], StrCat(params_.name, ": dispatch of ", entry->name,
                                                      ": binding ", i)));
    command.bindings.push_back(range);
  }
  command.constants.assign(constants.begin(), constants.end());
  commands_.emplace_back(std::move(command));
  return OkStatus();
}

Status CommandBuffer::ExecutionBarrier() {
  CUHAL_RETURN_IF_ERROR(CheckRecording("execution barrier"));
  commands_.emplace_back(BarrierCommand{});
  return OkStatus();
}

Status CommandBuffer::SignalEvent(const Event& event) {
  CUHAL_RETURN_IF_ERROR(CheckRecording("signal event"));
  if (!event) return InvalidArgumentError(StrCat(params_.name, ": signal of an empty event"));
  commands_.emplace_back(SignalEventCommand{event.handle()});
  return OkStatus();
}

Status CommandBuffer::ResetEvent(const Event& event) {
  CUHAL_RETURN_IF_ERROR(CheckRecording("reset event"));
  if (!event) return InvalidArgumentError(StrCat(params_.name, ": reset of an empty event"));
  commands_.emplace_back(ResetEventCommand{event.handle()});
  return OkStatus();
}

Status CommandBuffer::WaitEvents(std::span<const Event* const> events) {
  CUHAL_RETURN_IF_ERROR(CheckRecording("wait events"));
  WaitEventsCommand command;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i] == nullptr || !*events[i]) {
      return InvalidArgumentError(StrCat(params_.name, ": wait on event ", i, ", which is empty"));
    }
    command.events.push_back(events[i]->handle());
  }
  if (command.events.empty()) {
    return InvalidArgumentError(StrCat(params_.name, ": wait on no events"));
  }
  commands_.emplace_back(std::move(command));
  return OkStatus();
}

Status CommandBuffer::Collective(Channel& channel, CollectiveKind kind, BufferRef send,
                                 BufferRef recv, std::size_t count, DataType type,
                                 ReductionOp op, int root) {
  CUHAL_RETURN_IF_ERROR(CheckRecording("collective"));
  const std::string what = StrCat(params_.name, ": ", CollectiveKindName(kind), " of ", count,
                                  " x ", DataTypeName(type), " on channel rank ", channel.rank(),
                                  " of ", channel.count());
  const std::size_t element = DataTypeSize(type);
  if (element == 0) return InvalidArgumentError(StrCat(what, ": unknown data type"));
  if (count == 0) return InvalidArgumentError(StrCat(what, ": no elements"));
  const auto ranks = static_cast<std::size_t>(channel.count());
  std::size_t send_bytes = count * element;
  std::size_t recv_bytes = count * element;
  if (kind == CollectiveKind::kAllGather) recv_bytes *= ranks;
  if (kind == CollectiveKind::kReduceScatter) send_bytes *= ranks;
  if (kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce) {
    if (root < 0 || root >= channel.count()) {
      return InvalidArgumentError(StrCat(what, ": root ", root, " is outside the channel's ranks [0, ",
                                         channel.count(), ")"));
    }
  }
  auto sized = [](BufferRef ref, std::size_t bytes, const std::string& side) -> StatusOr<BufferRef> {
    if (ref.length != kWholeBuffer && ref.length < bytes) {
      return InvalidArgumentError(StrCat(side, ": the range holds ", ref.length,
                                         " bytes, the collective needs ", bytes));
    }
    ref.length = bytes;
    return ref;
  };
  CollectiveCommand command;
  command.channel = &channel;
  command.kind = kind;
  command.count = count;
  command.type = type;
  command.op = op;
  command.root = root;
  CUHAL_ASSIGN_OR_RETURN(BufferRef s, sized(send, send_bytes, StrCat(what, ": send")));
  CUHAL_ASSIGN_OR_RETURN(BufferRef r, sized(recv, recv_bytes, StrCat(what, ": recv")));
  CUHAL_ASSIGN_OR_RETURN(command.send, Record(s, StrCat(what, ": send")));
  CUHAL_ASSIGN_OR_RETURN(command.recv, Record(r, StrCat(what, ": recv")));
  commands_.emplace_back(std::move(command));
  return OkStatus();
}

Status CommandBuffer::End() {
  CUHAL_RETURN_IF_ERROR(CheckRecording("End"));
  slot_used_.clear();
  slots_used_ = 0;
  for (const Command& command : commands_) {
    ForEachRange(command, [&](const RecordedRange& r, const char*) {
      if (!r.indirect()) return;
      if (r.slot >= slot_used_.size()) slot_used_.resize(r.slot + 1, false);
      slot_used_[r.slot] = true;
    });
  }
  slots_used_ = static_cast<std::uint32_t>(slot_used_.size());
  std::unique_ptr<CommandTarget> target;
  switch (target_kind()) {
    case CommandTargetKind::kStream: target = std::make_unique<StreamCommandTarget>(api_); break;
    case CommandTargetKind::kGraph: target = std::make_unique<GraphCommandTarget>(api_); break;
  }
  CUHAL_RETURN_IF_ERROR(target->Prepare(commands_), params_.name, ": preparing its ",
                        target->name(), " target");
  target_ = std::move(target);
  return OkStatus();
}

StatusOr<std::vector<ResolvedBinding>> CommandBuffer::Resolve(BindingTable bindings) const {
  const std::string what = StrCat(params_.name, ": submission");
  if (target_ == nullptr) {
    return FailedPreconditionError(StrCat(what, ": the command buffer is still recording (End "
                                          "it first)"));
  }
  if (params_.mode == CommandBufferMode::kOneShot && !bindings.empty()) {
    return InvalidArgumentError(StrCat(what, ": a one-shot command buffer takes no binding table (",
                                       bindings.size(), " entries given)"));
  }
  if (bindings.size() < slots_used_) {
    return InvalidArgumentError(StrCat(what, ": the binding table has ", bindings.size(),
                                       " entries, the commands use slots up to ",
                                       slots_used_ - 1));
  }
  std::vector<ResolvedBinding> resolved(bindings.size());
  for (std::size_t i = 0; i < slots_used_; ++i) {
    if (!slot_used_[i]) continue;
    const Binding& b = bindings[i];
    if (b.buffer == nullptr || !*b.buffer) {
      return InvalidArgumentError(StrCat(what, ": binding slot ", i, " has no buffer"));
    }
    if (b.offset > b.buffer->size()) {
      return OutOfRangeError(StrCat(what, ": binding slot ", i, ": offset ", b.offset,
                                    " is past the end of the ", b.buffer->size(),
                                    "-byte buffer"));
    }
    const std::size_t length = b.length == kWholeBuffer ? b.buffer->size() - b.offset : b.length;
    CUHAL_RETURN_IF_ERROR(b.buffer->CheckRange(b.offset, length, StrCat("binding slot ", i)),
                          what);
    resolved[i] = ResolvedBinding{b.buffer->device_ptr() + b.offset, length};
  }
  // Every indirect range of every command must fit its binding now.
  for (std::size_t index = 0; index < commands_.size(); ++index) {
    Status problem;
    const Command& command = commands_[index];
    ForEachRange(command, [&](const RecordedRange& r, const char* role) {
      if (!problem.ok() || !r.indirect()) return;
      const ResolvedBinding& b = resolved[r.slot];
      const std::string where = StrCat(what, ": command ", index, " (", CommandName(command),
                                       ") ", role, " in binding slot ", r.slot);
      if (r.offset > b.length || (r.length != kWholeBuffer && r.length > b.length - r.offset)) {
        problem = OutOfRangeError(StrCat(where, ": offset ", r.offset, " length ",
                                         r.length == kWholeBuffer ? std::string("(whole)")
                                                                  : std::to_string(r.length),
                                         " is outside the ", b.length, "-byte binding"));
        return;
      }
      const ResolvedBinding at = ResolveRange(r, resolved);
      if (at.length == 0) {
        problem = InvalidArgumentError(StrCat(where, ": the range is empty"));
      } else if (at.address % r.alignment != 0 || at.length % r.alignment != 0) {
        problem = InvalidArgumentError(StrCat(where, ": address 0x", std::hex,
                                              static_cast<std::uint64_t>(at.address), std::dec,
                                              " and length ", at.length,
                                              " must be multiples of ", r.alignment));
      }
    });
    if (const auto* copy = std::get_if<CopyCommand>(&command); problem.ok() && copy != nullptr) {
      const ResolvedBinding s = ResolveRange(copy->source, resolved);
      const ResolvedBinding t = ResolveRange(copy->target, resolved);
      if (s.length != t.length) {
        problem = InvalidArgumentError(StrCat(what, ": command ", index, " (copy): the source is ",
                                              s.length, " bytes, the target ", t.length));
      } else if (s.address < t.address + t.length && t.address < s.address + s.length) {
        problem = InvalidArgumentError(
            StrCat(what, ": command ", index, " (copy): the source and target ranges overlap"));
      }
    }
    CUHAL_RETURN_IF_ERROR(problem);
  }
  if (params_.mode == CommandBufferMode::kOneShot && submitted_.exchange(true)) {
    return FailedPreconditionError(
        StrCat(what, ": a one-shot command buffer was already submitted"));
  }
  submissions_.fetch_add(1);
  return resolved;
}

Status CommandBuffer::Issue(CUstream stream, ResolvedBindings resolved) const {
  if (target_ == nullptr) {
    return FailedPreconditionError(StrCat(params_.name, ": issued while still recording"));
  }
  CUHAL_RETURN_IF_ERROR(target_->Issue(stream, resolved), params_.name, " (", target_->name(),
                        " target)");
  issues_.fetch_add(1);
  return OkStatus();
}

CommandBuffer::Statistics CommandBuffer::statistics() const noexcept {
  Statistics s{submissions_.load(), issues_.load(), {}};
  if (target_ != nullptr) s.target = target_->statistics();
  return s;
}

Status CommandBuffer::CheckRunsOn(CUstream stream) const {
  for (std::size_t i = 0; i < commands_.size(); ++i) {
    const auto* c = std::get_if<CollectiveCommand>(&commands_[i]);
    if (c != nullptr && c->channel->queue().stream() != stream) {
      return FailedPreconditionError(StrCat(
          params_.name, ": command ", i, " (", CollectiveKindName(c->kind),
          ") is on a channel of queue ", c->channel->queue().index(),
          ", which is not the queue it is submitted to"));
    }
  }
  return OkStatus();
}

}  // namespace cuhal
