// Copyright 2026 The cuhal Authors.
// Channel: one rank's NCCL communicator, bound to one queue of a Device, with the collective and
// point-to-point operations on buffers (IREE's iree_hal_channel_t over NCCL); ChannelParams, what
// Device::CreateChannel is asked for; ChannelGroup, a scope that fuses calls into one NCCL group.
#ifndef CUHAL_CORE_CHANNEL_CHANNEL_H_
#define CUHAL_CORE_CHANNEL_CHANNEL_H_

#include <cuda.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/base/status_or.h"
#include "core/channel/channel_provider.h"
#include "core/memory/buffer.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"
#include "core/symbols/nccl_api.h"

namespace cuhal {

class Device;
class Queue;

// ChannelParams::rank / count: ask the device's ChannelProvider (IREE_HAL_CHANNEL_RANK_DEFAULT,
// IREE_HAL_CHANNEL_COUNT_DEFAULT).
inline constexpr int kChannelRankDefault = -1;
inline constexpr int kChannelCountDefault = -1;
// Channel::Split's color for "this rank joins no new channel" (NCCL_SPLIT_NOCOLOR).
inline constexpr int kChannelSplitNoColor = NCCL_SPLIT_NOCOLOR;

// What Device::CreateChannel makes.
struct ChannelParams {
  // The queue whose stream the channel's operations are enqueued on: a mask over the device's
  // queues (bit i = queue i) with exactly one bit set, below queue_count().
  std::uint64_t queue_affinity = 1;
  // This participant's rank in [0, count), or kChannelRankDefault (ask the provider).
  int rank = kChannelRankDefault;
  // The number of participants (>= 1), or kChannelCountDefault (ask the provider).
  int count = kChannelCountDefault;
  // The group's NCCL unique id (kChannelIdSize bytes, not all zero), agreed on by the caller; or
  // empty: rank 0 makes one (ncclGetUniqueId) and the provider exchanges it under `group`. The
  // bytes are read during CreateChannel only.
  std::span<const std::byte> id;
  // The key the provider exchanges the id under (IREE's params.group).
  std::string group;
};

// Element types of collective operations (mapped to ncclDataType_t).
enum class DataType : int {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBfloat16,
};
// Reductions (mapped to ncclRedOp_t).
enum class ReductionOp : int {
  kSum,
  kProduct,
  kMin,
  kMax,
  kAverage,  // NCCL's ncclAvg (the sum divided by the channel's count)
};
// The collectives a recorded command buffer can hold (Channel::CollectiveOnAddresses).
enum class CollectiveKind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter };
// "AllReduce", "Broadcast", ...
[[nodiscard]] const char* CollectiveKindName(CollectiveKind kind) noexcept;
// Bytes per element; 0 for a value outside the enum.
[[nodiscard]] std::size_t DataTypeSize(DataType type) noexcept;
// "float32", "sum"; "DataType(<n>)" / "ReductionOp(<n>)" for a value outside the enum.
[[nodiscard]] std::string DataTypeName(DataType type);
[[nodiscard]] std::string ReductionOpName(ReductionOp op);

// UNAVAILABLE naming libnccl.so.2 and the NCCL version cuhal was built against when `nccl` is
// null (what channel creation needs); OK otherwise.
[[nodiscard]] Status RequireNcclTable(const NcclApi* nccl, std::string_view who);

// One participant (rank) of a collective group: an NCCL communicator (ncclComm_t) of the device
// it was made on, whose operations are enqueued on one of that device's queues.
//
// Creation: Device::CreateChannel (blocking initialization: ncclCommInitRank returns once every
// rank has joined; cuhal uses no non-blocking ncclConfig_t, so ncclInProgress never arises) or
// Split. Destruction: ncclCommDestroy, in the device's context (made current for the call and
// restored after). A failed destroy goes to ReportDroppedStatus and the communicator is then
// aborted (ncclCommAbort, which frees it), so a failure leaks nothing; nothing throws or aborts.
//
// Ownership: the caller owns the Channel (unique_ptr). It owns its communicator and borrows its
// Device and the Device's queue: every Channel (splits included) must be destroyed before its
// Device (a Device destroyed with live channels reports FAILED_PRECONDITION through
// ReportDroppedStatus, and the channel's later use is undefined). Buffers passed to an operation
// must stay allocated until the operation completed (Queue::Synchronize).
// Thread-safety: NCCL's rule for a communicator: use a Channel from one thread at a time (rank(),
// count() and the other const accessors from any thread). Ranks of one group that live in one
// process are driven from different threads (or from one thread inside a ChannelGroup).
// Stream ordering: every operation is enqueued on the channel's queue (the Queue's rule: it runs
// after the queue's earlier work and before its later work, and returns once enqueued). A
// collective completes only once every rank has enqueued the matching call and reached it on its
// own queue; a failure of the communication itself surfaces at the queue's next Synchronize or
// through QueryAsyncError. Errors returned by an operation are about enqueueing it: arguments are
// checked (INVALID_ARGUMENT naming the values) before any driver or NCCL call.
class Channel {
 public:
  Channel(const Channel&) = delete;             // owns a communicator
  Channel& operator=(const Channel&) = delete;  // ditto
  // Destroys the communicator (see the class comment); nothing when aborted.
  ~Channel();

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int count() const noexcept { return count_; }
  [[nodiscard]] Device& device() const noexcept { return *device_; }
  [[nodiscard]] Queue& queue() const noexcept { return *queue_; }
  // The communicator (null once aborted). Do not destroy it.
  [[nodiscard]] ncclComm_t comm() const noexcept { return comm_.get(); }
  [[nodiscard]] bool aborted() const noexcept { return !comm_; }

  // Splits the group (ncclCommSplit; a collective call of every rank of this channel): the ranks
  // that pass the same `color` (>= 0) form a new channel, ranked by `key` (ties by their rank
  // here), on this channel's queue. A rank passing kChannelSplitNoColor joins none and gets a
  // null channel (OK). Blocking, like creation.
  [[nodiscard]] StatusOr<std::unique_ptr<Channel>> Split(int color, int key);

  // Aborts the communicator (ncclCommAbort): pending operations are abandoned, the communicator
  // is freed, and every later operation of this channel fails with FAILED_PRECONDITION. Meant for
  // a group that cannot make progress (a peer died). OK when already aborted.
  [[nodiscard]] Status Abort();

  // The communicator's asynchronous error (ncclCommGetAsyncError): OK, or the error of a
  // communication that failed after it was enqueued, named by the call that reported it.
  [[nodiscard]] Status QueryAsyncError() const;

  // recv[ro, +n) = op over all ranks of send[so, +n), n = `count` elements of `type`.
  [[nodiscard]] Status AllReduce(const Buffer& send, std::size_t send_offset, Buffer& recv,
                                 std::size_t recv_offset, std::size_t count, DataType type,
                                 ReductionOp op);
  // recv[ro, +n) on every rank = send[so, +n) of rank `root`. `send` is read only on the root
  // (other ranks may pass an empty Buffer).
  [[nodiscard]] Status Broadcast(const Buffer& send, std::size_t send_offset, Buffer& recv,
                                 std::size_t recv_offset, std::size_t count, DataType type,
                                 int root);
  // recv[ro, +n) on rank `root` = op over all ranks of send[so, +n). `recv` is written only on
  // the root (other ranks may pass an empty Buffer).
  [[nodiscard]] Status Reduce(const Buffer& send, std::size_t send_offset, Buffer& recv,
                              std::size_t recv_offset, std::size_t count, DataType type,
                              ReductionOp op, int root);
  // recv[ro + r * n, +n) = send[so, +n) of rank r, for every rank r: recv holds count() * n.
  [[nodiscard]] Status AllGather(const Buffer& send, std::size_t send_offset, Buffer& recv,
                                 std::size_t recv_offset, std::size_t send_count, DataType type);
  // recv[ro, +n) on rank r = op over all ranks of their send[so + r * n, +n): send holds
  // count() * n.
  [[nodiscard]] Status ReduceScatter(const Buffer& send, std::size_t send_offset, Buffer& recv,
                                     std::size_t recv_offset, std::size_t recv_count,
                                     DataType type, ReductionOp op);
  // Point to point: send[so, +n) to rank `peer`, which receives it with a matching Recv. The
  // k-th Send to a peer matches the peer's k-th Recv from this rank. A send and a receive that
  // depend on each other (a ring) must be issued inside one ChannelGroup, or they deadlock.
  [[nodiscard]] Status Send(const Buffer& send, std::size_t send_offset, std::size_t count,
                            DataType type, int peer);
  [[nodiscard]] Status Recv(Buffer& recv, std::size_t recv_offset, std::size_t count,
                            DataType type, int peer);

  // One collective on raw device addresses, without the buffer checks (the caller checked the
  // ranges; `count` as in the methods above: per rank for AllGather's send and ReduceScatter's
  // recv): what a recorded command buffer runs (core/command), so that it does not depend on the
  // Buffer objects. The type, op and root are checked; enqueued on this channel's queue.
  [[nodiscard]] Status CollectiveOnAddresses(CollectiveKind kind, CUdeviceptr send,
                                             CUdeviceptr recv, std::size_t count, DataType type,
                                             ReductionOp op, int root);

 private:
  friend class Device;  // the maker (Device::CreateChannel)

  // Initializes rank `rank` of `count` with `id` on `queue` of `device` (ncclCommInitRank in the
  // device's context).
  [[nodiscard]] static StatusOr<std::unique_ptr<Channel>> Create(Device& device, Queue& queue,
                                                                 const ChannelId& id, int rank,
                                                                 int count);
  Channel(Device& device, Queue& queue, NcclCommHandle comm, int rank, int count);

  // FAILED_PRECONDITION when aborted; INVALID_ARGUMENT for a bad type/op.
  [[nodiscard]] Status CheckUsable(std::string_view op_name) const;
  // Enqueues one NCCL call (`call` makes it) in the device's context.
  template <typename Call>
  [[nodiscard]] Status Enqueue(std::string_view context, Call&& call);

  Device* const device_;
  Queue* const queue_;
  const CudaApi* const api_;
  const NcclApi* const nccl_;
  const int rank_;
  const int count_;
  NcclCommHandle comm_;
};

// A group of NCCL calls (ncclGroupStart ... ncclGroupEnd) on the calling thread: the operations
// issued on any channels between Begin and End are launched together at End. That is what lets a
// ring of Send/Recv proceed, and lets one thread drive several ranks of a group (for example one
// Split per rank's channel). Groups nest (only the outermost End launches).
//
//   CUHAL_ASSIGN_OR_RETURN(ChannelGroup group, ChannelGroup::Begin(device.nccl_api()));
//   CUHAL_RETURN_IF_ERROR(channel.Send(buffer, 0, n, DataType::kFloat32, next));
//   CUHAL_RETURN_IF_ERROR(channel.Recv(buffer, n * 4, n, DataType::kFloat32, previous));
//   CUHAL_RETURN_IF_ERROR(group.End());
//
// Ownership: move-only; at most one live ChannelGroup owns a given ncclGroupStart. Thread-safety:
// NCCL's group state is per thread: Begin and End on the same thread. Stream ordering: the calls
// of a group are enqueued on their queues at End (errors of the grouped calls surface there).
// Destroying a ChannelGroup that was not ended ends it; its failure goes to ReportDroppedStatus.
class [[nodiscard]] ChannelGroup {
 public:
  [[nodiscard]] static StatusOr<ChannelGroup> Begin(const NcclApi* nccl);
  ChannelGroup(ChannelGroup&& other) noexcept;
  ChannelGroup& operator=(ChannelGroup&&) = delete;  // tied to one ncclGroupStart
  ChannelGroup(const ChannelGroup&) = delete;        // two owners would end it twice
  ChannelGroup& operator=(const ChannelGroup&) = delete;
  ~ChannelGroup();

  // ncclGroupEnd. Idempotent (later calls return OK).
  [[nodiscard]] Status End() noexcept;

 private:
  explicit ChannelGroup(const NcclApi* nccl) noexcept : nccl_(nccl) {}
  const NcclApi* nccl_ = nullptr;  // null once ended
};

}  // namespace cuhal

#endif  // CUHAL_CORE_CHANNEL_CHANNEL_H_
