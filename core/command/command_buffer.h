// Copyright 2026 The cuhal Authors.
// CommandBuffer: one recording API for device work (fill, update, copy, dispatch, execution
// barriers, HAL events, collectives), replayed on a queue by a CommandTarget (IREE's
// command_buffer, with stream_command_buffer and graph_command_buffer as its targets).
#ifndef CUHAL_CORE_COMMAND_COMMAND_BUFFER_H_
#define CUHAL_CORE_COMMAND_COMMAND_BUFFER_H_

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/base/mutex.h"
#include "core/base/status_or.h"
#include "core/channel/channel.h"
#include "core/command/command_target_kind.h"
#include "core/executable/executable.h"
#include "core/memory/buffer.h"
#include "core/semaphore/event.h"
#include "core/symbols/cuda_api.h"

namespace cuhal {

class CommandTarget;

inline constexpr std::size_t kWholeBuffer = std::numeric_limits<std::size_t>::max();
inline constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

// A range a command reads or writes: either a buffer named now ("direct": its address is recorded)
// or a slot of the binding table given at submission ("indirect", reusable command buffers only:
// the address is resolved at each submission, so one recording runs over different buffers).
struct BufferRef {
  const Buffer* buffer = nullptr;  // direct
  std::uint32_t slot = kNoSlot;    // indirect
  std::size_t offset = 0;          // into the buffer, or into the slot's binding
  std::size_t length = kWholeBuffer;  // kWholeBuffer: to the end of the buffer/binding

  static BufferRef Direct(const Buffer& b, std::size_t offset = 0,
                          std::size_t length = kWholeBuffer) {
    return BufferRef{&b, kNoSlot, offset, length};
  }
  static BufferRef Slot(std::uint32_t slot, std::size_t offset = 0,
                        std::size_t length = kWholeBuffer) {
    return BufferRef{nullptr, slot, offset, length};
  }
};

// One entry of a binding table: the buffer a slot stands for in one submission, and the range of
// it the slot covers.
struct Binding {
  const Buffer* buffer = nullptr;
  std::size_t offset = 0;
  std::size_t length = kWholeBuffer;
};
using BindingTable = std::span<const Binding>;

// A recorded range: the address and length for a direct ref; the slot and the offset/length
// within it for an indirect one (length kWholeBuffer: to the end of the binding).
struct RecordedRange {
  CUdeviceptr address = 0;  // direct only
  std::uint32_t slot = kNoSlot;
  std::size_t offset = 0;   // indirect only
  std::size_t length = 0;   // direct: exact; indirect: exact or kWholeBuffer
  std::size_t alignment = 1;  // of the address and the length (fills), checked when resolved
  [[nodiscard]] bool indirect() const noexcept { return slot != kNoSlot; }
};

// The slots of one submission resolved to addresses (what a target replays with).
struct ResolvedBinding {
  CUdeviceptr address = 0;
  std::size_t length = 0;
};
using ResolvedBindings = std::span<const ResolvedBinding>;

// --- the recorded commands (what a CommandTarget replays) ---------------------------------------
struct FillCommand {
  RecordedRange target;
  std::uint32_t pattern = 0;  // the low pattern_length bytes
  std::size_t pattern_length = 1;
};
struct UpdateCommand {
  std::vector<std::byte> data;  // copied at record time
  RecordedRange target;
};
struct CopyCommand {
  RecordedRange source;
  RecordedRange target;
};
struct DispatchCommand {
  const Executable* executable = nullptr;  // borrowed
  std::uint32_t ordinal = 0;
  CUfunction function = nullptr;
  DispatchConfig config;
  // Kernel parameters, IREE's layout: one CUdeviceptr per binding (in order), then one 32-bit
  // value per constant.
  std::vector<RecordedRange> bindings;
  std::vector<std::uint32_t> constants;
};
struct BarrierCommand {};
struct SignalEventCommand {
  CUevent event = nullptr;
};
struct ResetEventCommand {
  CUevent event = nullptr;
};
struct WaitEventsCommand {
  std::vector<CUevent> events;
};
struct CollectiveCommand {
  Channel* channel = nullptr;  // borrowed
  CollectiveKind kind = CollectiveKind::kAllReduce;
  RecordedRange send;
  RecordedRange recv;
  std::size_t count = 0;  // elements (per rank for AllGather's send, ReduceScatter's recv)
  DataType type = DataType::kFloat32;
  ReductionOp op = ReductionOp::kSum;
  int root = 0;
};
using Command = std::variant<FillCommand, UpdateCommand, CopyCommand, DispatchCommand,
                             BarrierCommand, SignalEventCommand, ResetEventCommand,
                             WaitEventsCommand, CollectiveCommand>;
// "fill", "update", "copy", "dispatch", "barrier", "signal event", "reset event", "wait events",
// "collective".
[[nodiscard]] const char* CommandName(const Command& command);

enum class CommandBufferMode {
  kOneShot,   // submitted at most once; direct buffer refs only
  kReusable,  // submitted any number of times, each with its own binding table
};
struct CommandBufferParams {
  CommandBufferMode mode = CommandBufferMode::kOneShot;
  // Where the commands run (command_target_kind.h). Unset: the device's default
  // (DeviceParams.command_target) when made by Device::CreateCommandBuffer, kStream otherwise.
  std::optional<CommandTargetKind> target;
  // Indirect refs may name slots [0, binding_capacity); a submission's table needs at least as
  // many entries as the highest slot used + 1. Must be 0 for one-shot command buffers.
  std::uint32_t binding_capacity = 0;
  std::string name = "command buffer";
};

// A recorded list of device work, replayed on a queue (Queue::Execute) by its target.
//
// Lifecycle: Create (recording) -> record commands -> End (the target takes the list) -> submit
// (Queue::Execute, or Issue for a caller that drives a stream itself). Recording methods check
// their arguments at once (direct ranges against their buffers, dispatches against the entry
// point's and the device's limits: Executable::ValidateDispatch) and return INVALID_ARGUMENT /
// OUT_OF_RANGE / FAILED_PRECONDITION without recording anything; recording after End is
// FAILED_PRECONDITION. Update copies its host bytes at record time.
//
// Binding tables: an indirect ref (BufferRef::Slot) is resolved at each submission against that
// submission's table (checked then: a missing slot, an empty buffer or a range past the binding is
// INVALID_ARGUMENT / OUT_OF_RANGE before anything is enqueued), so a reusable command buffer runs
// over different buffers each time. One-shot buffers take only direct refs and are submitted once
// (a second submission is FAILED_PRECONDITION).
//
// Targets: the commands are stored as a plain list (commands()); at End the command buffer makes
// its CommandTarget (params.target) and hands it the list once; every submission resolves the
// bindings and asks the target to Issue the list on the queue's stream. The stream target
// (StreamCommandTarget) issues each command as a stream operation; the graph target
// (GraphCommandTarget) builds CUgraphs from the same list at its first Issue, instantiates them
// once, and on later submissions updates the executable graphs from the new bindings (node
// setters, else cuGraphExecUpdate, else a rebuild: statistics().target says which) and re-launches
// them, with no change here or in Queue::Execute.
//
// Ownership: made by Create and shared (shared_ptr): Queue::Execute keeps a reference until the
// submission retires, so the caller may drop its own. It records addresses, not Buffer objects:
// direct buffers' memory and bound buffers' memory must stay allocated until the submissions that
// use them have signalled. Executables, Events and Channels it names are borrowed and must outlive
// it. Thread-safety: recording is one thread at a time (like a value) and must end (End) before
// the first submission; once ended it is immutable apart from its statistics, and may be
// submitted from several threads (the target serializes its own state). Stream ordering: the
// commands of one submission run in recording order on the executing queue's stream, after the
// submission's waits and before its signals; an execution barrier orders all earlier commands
// before all later ones (a no-op on a stream, which is ordered already; a dependency edge in a
// graph). Event commands are ordered like any stream operation (cuEventRecord / cuStreamWaitEvent
// on the same stream).
class CommandBuffer {
 public:
  // A command buffer in the recording state. INVALID_ARGUMENT for a one-shot command buffer with
  // a binding capacity, or a null table.
  [[nodiscard]] static StatusOr<std::shared_ptr<CommandBuffer>> Create(
      const CudaApi* api, CommandBufferParams params = {});
  CommandBuffer(const CommandBuffer&) = delete;             // submissions point at it
  CommandBuffer& operator=(const CommandBuffer&) = delete;  // ditto
  ~CommandBuffer();

  [[nodiscard]] const CommandBufferParams& params() const noexcept { return params_; }
  [[nodiscard]] CommandBufferMode mode() const noexcept { return params_.mode; }

  // --- recording (see the class comment) --------------------------------------------------------
  // target = pattern repeated (pattern_length 1, 2 or 4; offset, length and address multiples of
  // it).
  [[nodiscard]] Status Fill(BufferRef target, const void* pattern, std::size_t pattern_length);
  // target[0, source.size()) = source, copied now. target.length must be kWholeBuffer or
  // source.size().
  [[nodiscard]] Status Update(std::span<const std::byte> source, BufferRef target);
  // target = source (same length; kWholeBuffer on one side takes the other's; both kWholeBuffer
  // takes the smaller at submission, and must be equal).
  [[nodiscard]] Status Copy(BufferRef source, BufferRef target);
  // Launches entry point `ordinal` of `executable` with `config`, its kernel parameters being one
  // device address per binding (in order) and then one 32-bit value per constant.
  [[nodiscard]] Status Dispatch(const Executable& executable, std::uint32_t ordinal,
                                const DispatchConfig& config, std::span<const BufferRef> bindings,
                                std::span<const std::uint32_t> constants = {});
  // Every command recorded before runs before every command recorded after.
  [[nodiscard]] Status ExecutionBarrier();
  // The HAL event is signalled when the commands before have completed (cuEventRecord).
  [[nodiscard]] Status SignalEvent(const Event& event);
  // Puts the event back to unsignalled. On CUDA this records nothing: the next signal overwrites
  // the event's state (IREE's CUDA driver does the same).
  [[nodiscard]] Status ResetEvent(const Event& event);
  // The commands after wait until every event was signalled (cuStreamWaitEvent each).
  [[nodiscard]] Status WaitEvents(std::span<const Event* const> events);
  // A collective on `channel` (the submission's queue must be the channel's queue:
  // FAILED_PRECONDITION at submission otherwise). `count` elements of `type`: per rank for
  // kAllGather's send and kReduceScatter's recv, so recv (AllGather) and send (ReduceScatter)
  // hold channel.count() * count. `op` for the reductions, `root` for Broadcast and Reduce.
  [[nodiscard]] Status Collective(Channel& channel, CollectiveKind kind, BufferRef send,
                                  BufferRef recv, std::size_t count, DataType type,
                                  ReductionOp op = ReductionOp::kSum, int root = 0);
  // Ends recording and hands the list to the target. FAILED_PRECONDITION when already ended.
  [[nodiscard]] Status End();

  [[nodiscard]] bool ended() const noexcept { return target_ != nullptr; }
  [[nodiscard]] const std::vector<Command>& commands() const noexcept { return commands_; }
  // The highest slot used + 1 (0: no indirect refs).
  [[nodiscard]] std::uint32_t slots_used() const noexcept { return slots_used_; }

  // --- submission -------------------------------------------------------------------------------
  // Checks `bindings` against the recorded slots and resolves them to addresses (see the class
  // comment). Also claims a one-shot buffer's single submission. Called by Queue::Execute at
  // submission; Issue then runs later on the queue's stream.
  [[nodiscard]] StatusOr<std::vector<ResolvedBinding>> Resolve(BindingTable bindings) const;
  // Enqueues the recorded work on `stream` with `resolved` (from Resolve), through the target.
  // The stream's context must be current. Stops at the first failing command, naming it.
  [[nodiscard]] Status Issue(CUstream stream, ResolvedBindings resolved) const;
  // FAILED_PRECONDITION when a recorded collective's channel does not enqueue on `stream` (the
  // submission's queue must be the channel's queue). Queue::Execute checks it at submission.
  [[nodiscard]] Status CheckRunsOn(CUstream stream) const;

  struct Statistics {
    std::uint64_t submissions = 0;  // successful Resolve calls
    std::uint64_t issues = 0;       // Issue calls that enqueued everything
    CommandTargetStatistics target;  // the target's own (all 0 for the stream target)
  };
  [[nodiscard]] Statistics statistics() const noexcept;
  // The target this command buffer runs on (params().target, or kStream when unset).
  [[nodiscard]] CommandTargetKind target_kind() const noexcept {
    return params_.target.value_or(CommandTargetKind::kStream);
  }

 private:
  CommandBuffer(const CudaApi* api, CommandBufferParams params)
      : api_(api), params_(std::move(params)) {}
  [[nodiscard]] Status CheckRecording(const char* what) const;
  // Checks `ref` and turns it into a RecordedRange; `alignment` for the address and length of a
  // direct ref (indirect: checked at submission).
  [[nodiscard]] StatusOr<RecordedRange> Record(const BufferRef& ref, const std::string& what,
                                               std::size_t alignment = 1);
  [[nodiscard]] std::string Describe(std::size_t index) const;

  const CudaApi* const api_;
  const CommandBufferParams params_;
  std::vector<Command> commands_;
  std::uint32_t slots_used_ = 0;
  std::vector<bool> slot_used_;  // by slot index, up to slots_used_
  std::unique_ptr<CommandTarget> target_;  // set by End
  mutable std::atomic<bool> submitted_{false};
  mutable std::atomic<std::uint64_t> submissions_{0};
  mutable std::atomic<std::uint64_t> issues_{0};
};

// Where a command buffer's list runs (the "replayer"). Made by CommandBuffer::End, which hands it
// the finished list once (Prepare); then each submission calls Issue.
//
// Ownership: owned by its CommandBuffer; borrows the table and the list (which outlives it).
// Thread-safety: Issue may be called from several threads at once (concurrent submissions of a
// reusable command buffer): an implementation serializes its own state (a graph target's
// instantiated graph). Stream ordering: Issue enqueues one execution of the whole list on
// `stream`, in recording order, and returns once enqueued.
class CommandTarget {
 public:
  virtual ~CommandTarget() = default;
  [[nodiscard]] virtual const char* name() const noexcept = 0;
  // Takes the finished list (at End); may check or pre-build what it needs.
  [[nodiscard]] virtual Status Prepare(const std::vector<Command>& commands) = 0;
  // Enqueues one execution of the list on `stream` with `bindings` resolved (context current).
  [[nodiscard]] virtual Status Issue(CUstream stream, ResolvedBindings bindings) = 0;
  // What the target did across submissions (a graph target's instantiations and updates).
  [[nodiscard]] virtual CommandTargetStatistics statistics() const noexcept { return {}; }
};

// The address and length of `range` in one submission.
[[nodiscard]] ResolvedBinding ResolveRange(const RecordedRange& range, ResolvedBindings bindings);

}  // namespace cuhal

#endif  // CUHAL_CORE_COMMAND_COMMAND_BUFFER_H_
