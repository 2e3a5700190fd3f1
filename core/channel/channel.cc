// Copyright 2026 The cuhal Authors.
#include "core/channel/channel.h"

#include <cstring>
#include <limits>
#include <utility>

#include "core/device/device.h"
#include "core/device/queue.h"
#include "core/driver/context_scope.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

bool ToNccl(DataType type, ncclDataType_t* out) {
  switch (type) {
    case DataType::kInt8: *out = ncclInt8; return true;
    case DataType::kUint8: *out = ncclUint8; return true;
    case DataType::kInt32: *out = ncclInt32; return true;
    case DataType::kUint32: *out = ncclUint32; return true;
    case DataType::kInt64: *out = ncclInt64; return true;
    case DataType::kUint64: *out = ncclUint64; return true;
    case DataType::kFloat16: *out = ncclFloat16; return true;
    case DataType::kFloat32: *out = ncclFloat32; return true;
    case DataType::kFloat64: *out = ncclFloat64; return true;
    case DataType::kBfloat16: *out = ncclBfloat16; return true;
  }
  return false;
}

bool ToNccl(ReductionOp op, ncclRedOp_t* out) {
  switch (op) {
    case ReductionOp::kSum: *out = ncclSum; return true;
    case ReductionOp::kProduct: *out = ncclProd; return true;
    case ReductionOp::kMin: *out = ncclMin; return true;
    case ReductionOp::kMax: *out = ncclMax; return true;
    case ReductionOp::kAverage: *out = ncclAvg; return true;
  }
  return false;
}

// The device address of buffer[offset] (null for an empty buffer: NCCL ignores it there).
void* At(const Buffer& buffer, std::size_t offset) {
  if (!buffer) return nullptr;
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(buffer.device_ptr() + offset));
}

// OK when `count` elements of `type` at `offset` lie inside `buffer`; INVALID_ARGUMENT naming
// the values otherwise. `what` names the buffer ("send", "recv").
Status CheckElements(std::string_view what, const Buffer& buffer, std::size_t offset,
                     std::size_t count, DataType type) {
  const std::size_t element = DataTypeSize(type);
  if (count > std::numeric_limits<std::size_t>::max() / element) {
    return InvalidArgumentError(StrCat(what, " count ", count, " x ", element,
                                       "-byte elements overflows size_t"));
  }
  const std::size_t bytes = count * element;
  if (!buffer) {
    return InvalidArgumentError(StrCat(what, " buffer is empty (", count, " ", DataTypeName(type),
                                       " element(s) at offset ", offset, " requested)"));
  }
  if (offset > buffer.size() || bytes > buffer.size() - offset) {
    return InvalidArgumentError(StrCat(what, " range [", offset, ", ", offset, " + ", bytes,
                                       ") (", count, " x ", DataTypeName(type),
                                       ") is outside the ", buffer.size(), "-byte buffer"));
  }
  return OkStatus();
}

Status CheckRank(std::string_view what, int value, int count) {
  if (value < 0 || value >= count) {
    return InvalidArgumentError(
        StrCat(what, " ", value, " is outside the channel's ranks [0, ", count, ")"));
  }
  return OkStatus();
}

Status CheckTypeAndOp(DataType type, const ReductionOp* op) {
  ncclDataType_t nccl_type;
  if (!ToNccl(type, &nccl_type)) {
    return InvalidArgumentError(StrCat("unknown data type ", DataTypeName(type)));
  }
  ncclRedOp_t nccl_op;
  if (op != nullptr && !ToNccl(*op, &nccl_op)) {
    return InvalidArgumentError(StrCat("unknown reduction op ", ReductionOpName(*op)));
  }
  return OkStatus();
}

ncclDataType_t NcclType(DataType type) {
  ncclDataType_t out = ncclInt8;
  (void)ToNccl(type, &out);
  return out;
}
ncclRedOp_t NcclOp(ReductionOp op) {
  ncclRedOp_t out = ncclSum;
  (void)ToNccl(op, &out);
  return out;
}

// Destroys `comm` (ncclCommDestroy), falling back to ncclCommAbort, which also frees it, when
// that fails; every failure goes to ReportDroppedStatus. The caller has the context current.
void DestroyComm(const NcclApi* nccl, ncclComm_t comm, const std::string& context) noexcept {
  Status destroyed = CUHAL_NCCL(nccl, ncclCommDestroy, comm);
  if (destroyed.ok()) return;
  ReportDroppedStatus(std::move(destroyed).AddContext(
      StrCat(context, " (aborting the communicator instead)")));
  ReportDroppedStatus(CUHAL_NCCL(nccl, ncclCommAbort, comm).AddContext(context));
}

}  // namespace

std::size_t DataTypeSize(DataType type) noexcept {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8:
      return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
      return 8;
  }
  return 0;
}

std::string DataTypeName(DataType type) {
  switch (type) {
    case DataType::kInt8: return "int8";
    case DataType::kUint8: return "uint8";
    case DataType::kInt32: return "int32";
    case DataType::kUint32: return "uint32";
    case DataType::kInt64: return "int64";
    case DataType::kUint64: return "uint64";
    case DataType::kFloat16: return "float16";
    case DataType::kFloat32: return "float32";
    case DataType::kFloat64: return "float64";
    case DataType::kBfloat16: return "bfloat16";
  }
  return StrCat("DataType(", static_cast<int>(type), ")");
}

std::string ReductionOpName(ReductionOp op) {
  switch (op) {
    case ReductionOp::kSum: return "sum";
    case ReductionOp::kProduct: return "product";
    case ReductionOp::kMin: return "min";
    case ReductionOp::kMax: return "max";
    case ReductionOp::kAverage: return "average";
  }
  return StrCat("ReductionOp(", static_cast<int>(op), ")");
}

Status RequireNcclTable(const NcclApi* nccl, std::string_view who) {
  if (nccl != nullptr) return OkStatus();
  return UnavailableError(StrCat(
      who, ": NCCL is not available: channels need libnccl.so.2 with major version ", NCCL_MAJOR,
      " (cuhal was built against nccl.h ", NCCL_MAJOR, ".", NCCL_MINOR, ".", NCCL_PATCH,
      "); pass an NcclApi table (RealNccl::Load or a fake) to Driver::Create"));
}

// --- Channel ---------------------------------------------------------------------------------

Channel::Channel(Device& device, Queue& queue, NcclCommHandle comm, int rank, int count)
    : device_(&device),
      queue_(&queue),
      api_(device.cuda_api()),
      nccl_(device.nccl_api()),
      rank_(rank),
      count_(count),
      comm_(std::move(comm)) {
  device_->live_channels_.fetch_add(1, std::memory_order_relaxed);
}

StatusOr<std::unique_ptr<Channel>> Channel::Create(Device& device, Queue& queue,
                                                    const ChannelId& id, int rank, int count) {
  const NcclApi* nccl = device.nccl_api();
  ncclUniqueId unique_id;
  static_assert(sizeof(unique_id.internal) == kChannelIdSize);
  std::memcpy(unique_id.internal, id.data(), kChannelIdSize);
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(device.cuda_api(),
                                                                 device.context()),
                         "making the device's context current");
  ncclComm_t comm = nullptr;
  // Blocking initialization: returns once every rank has joined (or NCCL gave up).
  Status init = CUHAL_NCCL(nccl, ncclCommInitRank, &comm, count, unique_id, rank);
  if (!init.ok()) {
    // NCCL hands back no communicator from a failed blocking initialization.
    ReportDroppedStatus(scope.Exit());
    return init;
  }
  NcclCommHandle handle(nccl, comm);
  if (Status exited = scope.Exit(); !exited.ok()) {
    DestroyComm(nccl, handle.Release(), "destroying the new communicator");
    return exited;
  }
  return std::unique_ptr<Channel>(new Channel(device, queue, std::move(handle), rank, count));
}

Channel::~Channel() {
  if (comm_) {
    const std::string context =
        StrCat("destroying channel rank ", rank_, " of ", count_, " on device ",
               device_->identifier());
    StatusOr<ContextScope> scope = ContextScope::Enter(api_, device_->context());
    if (!scope.ok()) {
      ReportDroppedStatus(Status(scope.status())
                              .AddContext("making the device's context current (destroying the "
                                          "communicator without it)")
                              .AddContext(context));
    }
    DestroyComm(nccl_, comm_.Release(), context);
    if (scope.ok()) ReportDroppedStatus(scope->Exit().AddContext(context));
  }
  device_->live_channels_.fetch_sub(1, std::memory_order_relaxed);
}

Status Channel::CheckUsable(std::string_view op_name) const {
  if (!comm_) {
    return FailedPreconditionError(StrCat(op_name, " on channel rank ", rank_, " of ", count_,
                                          ": the channel was aborted"));
  }
  return OkStatus();
}

template <typename Call>
Status Channel::Enqueue(std::string_view context, Call&& call) {
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, device_->context()),
                         context, ": making the device's context current");
  Status status = call();
  if (!status.ok()) {
    ReportDroppedStatus(scope.Exit());
    return std::move(status).AddContext(std::string(context));
  }
  return scope.Exit().AddContext(std::string(context));
}

StatusOr<std::unique_ptr<Channel>> Channel::Split(int color, int key) {
  const std::string context = StrCat("splitting channel rank ", rank_, " of ", count_,
                                     " (color ", color, ", key ", key, ")");
  CUHAL_RETURN_IF_ERROR(CheckUsable("Split"));
  if (color < 0 && color != kChannelSplitNoColor) {
    return InvalidArgumentError(StrCat(context, ": color must be >= 0 or kChannelSplitNoColor"));
  }
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, device_->context()),
                         context, ": making the device's context current");
  ncclComm_t comm = nullptr;
  Status split = CUHAL_NCCL(nccl_, ncclCommSplit, comm_.get(), color, key, &comm, nullptr);
  if (!split.ok()) {
    ReportDroppedStatus(scope.Exit());
    return std::move(split).AddContext(context);
  }
  NcclCommHandle handle(nccl_, comm);
  int rank = -1;
  int count = -1;
  Status status;
  if (comm != nullptr) {
    status = CUHAL_NCCL(nccl_, ncclCommUserRank, comm, &rank);
    if (status.ok()) status = CUHAL_NCCL(nccl_, ncclCommCount, comm, &count);
  }
  if (status.ok()) status = scope.Exit();
  if (!status.ok()) {
    if (comm != nullptr) DestroyComm(nccl_, handle.Release(), context);
    ReportDroppedStatus(scope.Exit());
    return std::move(status).AddContext(context);
  }
  if (comm == nullptr) return std::unique_ptr<Channel>();  // kChannelSplitNoColor
  return std::unique_ptr<Channel>(new Channel(*device_, *queue_, std::move(handle), rank, count));
}

Status Channel::Abort() {
  if (!comm_) return OkStatus();
  const std::string context = StrCat("aborting channel rank ", rank_, " of ", count_);
  CUHAL_ASSIGN_OR_RETURN(ContextScope scope, ContextScope::Enter(api_, device_->context()),
                         context, ": making the device's context current");
  // The communicator is gone whatever ncclCommAbort answers (a failed abort cannot be retried).
  Status aborted = CUHAL_NCCL(nccl_, ncclCommAbort, comm_.Release());
  if (!aborted.ok()) {
    ReportDroppedStatus(scope.Exit());
    return std::move(aborted).AddContext(context);
  }
  return scope.Exit().AddContext(context);
}

Status Channel::QueryAsyncError() const {
  const std::string context = StrCat("querying channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable("QueryAsyncError"));
  ncclResult_t async = ncclSuccess;
  CUHAL_RETURN_IF_ERROR(CUHAL_NCCL(nccl_, ncclCommGetAsyncError, comm_.get(), &async), context);
  return NcclResultToStatus(nccl_, async, "ncclCommGetAsyncError (asynchronous error)",
                            comm_.get())
      .AddContext(context);
}

Status Channel::AllReduce(const Buffer& send, std::size_t send_offset, Buffer& recv,
                          std::size_t recv_offset, std::size_t count, DataType type,
                          ReductionOp op) {
  const std::string context = StrCat("AllReduce on channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable("AllReduce"));
  CUHAL_RETURN_IF_ERROR(CheckTypeAndOp(type, &op), context);
  CUHAL_RETURN_IF_ERROR(CheckElements("send", send, send_offset, count, type), context);
  CUHAL_RETURN_IF_ERROR(CheckElements("recv", recv, recv_offset, count, type), context);
  return Enqueue(context, [&] {
    return CUHAL_NCCL(nccl_, ncclAllReduce, At(send, send_offset), At(recv, recv_offset), count,
                      NcclType(type), NcclOp(op), comm_.get(),
                      reinterpret_cast<cudaStream_t>(queue_->stream()));
  });
}

Status Channel::Broadcast(const Buffer& send, std::size_t send_offset, Buffer& recv,
                          std::size_t recv_offset, std::size_t count, DataType type, int root) {
  const std::string context =
      StrCat("Broadcast (root ", root, ") on channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable("Broadcast"));
  CUHAL_RETURN_IF_ERROR(CheckTypeAndOp(type, nullptr), context);
  CUHAL_RETURN_IF_ERROR(CheckRank("root", root, count_), context);
  if (rank_ == root) {
    CUHAL_RETURN_IF_ERROR(CheckElements("send", send, send_offset, count, type), context);
  }
  CUHAL_RETURN_IF_ERROR(CheckElements("recv", recv, recv_offset, count, type), context);
  return Enqueue(context, [&] {
    return CUHAL_NCCL(nccl_, ncclBroadcast, rank_ == root ? At(send, send_offset) : nullptr,
                      At(recv, recv_offset), count, NcclType(type), root, comm_.get(),
                      reinterpret_cast<cudaStream_t>(queue_->stream()));
  });
}

Status Channel::Reduce(const Buffer& send, std::size_t send_offset, Buffer& recv,
                       std::size_t recv_offset, std::size_t count, DataType type, ReductionOp op,
                       int root) {
  const std::string context =
      StrCat("Reduce (root ", root, ") on channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable("Reduce"));
  CUHAL_RETURN_IF_ERROR(CheckTypeAndOp(type, &op), context);
  CUHAL_RETURN_IF_ERROR(CheckRank("root", root, count_), context);
  CUHAL_RETURN_IF_ERROR(CheckElements("send", send, send_offset, count, type), context);
  if (rank_ == root) {
    CUHAL_RETURN_IF_ERROR(CheckElements("recv", recv, recv_offset, count, type), context);
  }
  return Enqueue(context, [&] {
    return CUHAL_NCCL(nccl_, ncclReduce, At(send, send_offset),
                      rank_ == root ? At(recv, recv_offset) : nullptr, count, NcclType(type),
                      NcclOp(op), root, comm_.get(),
                      reinterpret_cast<cudaStream_t>(queue_->stream()));
  });
}

const char* CollectiveKindName(CollectiveKind kind) noexcept {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "AllReduce";
    case CollectiveKind::kBroadcast: return "Broadcast";
    case CollectiveKind::kReduce: return "Reduce";
    case CollectiveKind::kAllGather: return "AllGather";
    case CollectiveKind::kReduceScatter: return "ReduceScatter";
  }
  return "CollectiveKind(?)";
}

Status Channel::CollectiveOnAddresses(CollectiveKind kind, CUdeviceptr send, CUdeviceptr recv,
                                      std::size_t count, DataType type, ReductionOp op,
                                      int root) {
  const std::string context =
      StrCat(CollectiveKindName(kind), " (recorded) on channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable(CollectiveKindName(kind)));
  const bool reduces = kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduce ||
                       kind == CollectiveKind::kReduceScatter;
  CUHAL_RETURN_IF_ERROR(CheckTypeAndOp(type, reduces ? &op : nullptr), context);
  if (kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce) {
    CUHAL_RETURN_IF_ERROR(CheckRank("root", root, count_), context);
  }
  void* s = reinterpret_cast<void*>(static_cast<std::uintptr_t>(send));
  void* r = reinterpret_cast<void*>(static_cast<std::uintptr_t>(recv));
  auto stream = reinterpret_cast<cudaStream_t>(queue_->stream());
  return Enqueue(context, [&] {
    switch (kind) {
      case CollectiveKind::kAllReduce:
        return CUHAL_NCCL(nccl_, ncclAllReduce, s, r, count, NcclType(type), NcclOp(op),
                          comm_.get(), stream);
      case CollectiveKind::kBroadcast:
        return CUHAL_NCCL(nccl_, ncclBroadcast, s, r, count, NcclType(type), root, comm_.get(),
                          stream);
      case CollectiveKind::kReduce:
        return CUHAL_NCCL(nccl_, ncclReduce, s, r, count, NcclType(type), NcclOp(op), root,
                          comm_.get(), stream);
      case CollectiveKind::kAllGather:
        return CUHAL_NCCL(nccl_, ncclAllGather, s, r, count, NcclType(type), comm_.get(),
                          stream);
      case CollectiveKind::kReduceScatter:
        return CUHAL_NCCL(nccl_, ncclReduceScatter, s, r, count, NcclType(type), NcclOp(op),
                          comm_.get(), stream);
    }
    return InvalidArgumentError("unknown collective kind");
  });
}

Status Channel::AllGather(const Buffer& send, std::size_t send_offset, Buffer& recv,
                          std::size_t recv_offset, std::size_t send_count, DataType type) {
  const std::string context = StrCat("AllGather on channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable("AllGather"));
  CUHAL_RETURN_IF_ERROR(CheckTypeAndOp(type, nullptr), context);
  CUHAL_RETURN_IF_ERROR(CheckElements("send", send, send_offset, send_count, type), context);
  const auto ranks = static_cast<std::size_t>(count_);
  if (send_count > std::numeric_limits<std::size_t>::max() / ranks) {
    return InvalidArgumentError(
        StrCat(context, ": send_count ", send_count, " x ", count_, " ranks overflows size_t"));
  }
  CUHAL_RETURN_IF_ERROR(CheckElements("recv", recv, recv_offset, send_count * ranks, type),
                        context);
  return Enqueue(context, [&] {
    return CUHAL_NCCL(nccl_, ncclAllGather, At(send, send_offset), At(recv, recv_offset),
                      send_count, NcclType(type), comm_.get(),
                      reinterpret_cast<cudaStream_t>(queue_->stream()));
  });
}

Status Channel::ReduceScatter(const Buffer& send, std::size_t send_offset, Buffer& recv,
                              std::size_t recv_offset, std::size_t recv_count, DataType type,
                              ReductionOp op) {
  const std::string context = StrCat("ReduceScatter on channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable("ReduceScatter"));
  CUHAL_RETURN_IF_ERROR(CheckTypeAndOp(type, &op), context);
  const auto ranks = static_cast<std::size_t>(count_);
  if (recv_count > std::numeric_limits<std::size_t>::max() / ranks) {
    return InvalidArgumentError(
        StrCat(context, ": recv_count ", recv_count, " x ", count_, " ranks overflows size_t"));
  }
  CUHAL_RETURN_IF_ERROR(CheckElements("send", send, send_offset, recv_count * ranks, type),
                        context);
  CUHAL_RETURN_IF_ERROR(CheckElements("recv", recv, recv_offset, recv_count, type), context);
  return Enqueue(context, [&] {
    return CUHAL_NCCL(nccl_, ncclReduceScatter, At(send, send_offset), At(recv, recv_offset),
                      recv_count, NcclType(type), NcclOp(op), comm_.get(),
                      reinterpret_cast<cudaStream_t>(queue_->stream()));
  });
}

Status Channel::Send(const Buffer& send, std::size_t send_offset, std::size_t count,
                     DataType type, int peer) {
  const std::string context =
      StrCat("Send to rank ", peer, " on channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable("Send"));
  CUHAL_RETURN_IF_ERROR(CheckTypeAndOp(type, nullptr), context);
  CUHAL_RETURN_IF_ERROR(CheckRank("peer", peer, count_), context);
  CUHAL_RETURN_IF_ERROR(CheckElements("send", send, send_offset, count, type), context);
  return Enqueue(context, [&] {
    return CUHAL_NCCL(nccl_, ncclSend, At(send, send_offset), count, NcclType(type), peer,
                      comm_.get(), reinterpret_cast<cudaStream_t>(queue_->stream()));
  });
}

Status Channel::Recv(Buffer& recv, std::size_t recv_offset, std::size_t count, DataType type,
                     int peer) {
  const std::string context =
      StrCat("Recv from rank ", peer, " on channel rank ", rank_, " of ", count_);
  CUHAL_RETURN_IF_ERROR(CheckUsable("Recv"));
  CUHAL_RETURN_IF_ERROR(CheckTypeAndOp(type, nullptr), context);
  CUHAL_RETURN_IF_ERROR(CheckRank("peer", peer, count_), context);
  CUHAL_RETURN_IF_ERROR(CheckElements("recv", recv, recv_offset, count, type), context);
  return Enqueue(context, [&] {
    return CUHAL_NCCL(nccl_, ncclRecv, At(recv, recv_offset), count, NcclType(type), peer,
                      comm_.get(), reinterpret_cast<cudaStream_t>(queue_->stream()));
  });
}

// --- ChannelGroup ----------------------------------------------------------------------------

StatusOr<ChannelGroup> ChannelGroup::Begin(const NcclApi* nccl) {
  CUHAL_RETURN_IF_ERROR(RequireNcclTable(nccl, "beginning a channel group"));
  CUHAL_RETURN_IF_ERROR(CUHAL_NCCL(nccl, ncclGroupStart), "beginning a channel group");
  return ChannelGroup(nccl);
}

ChannelGroup::ChannelGroup(ChannelGroup&& other) noexcept
    : nccl_(std::exchange(other.nccl_, nullptr)) {}

ChannelGroup::~ChannelGroup() { ReportDroppedStatus(End()); }

Status ChannelGroup::End() noexcept {
  const NcclApi* nccl = std::exchange(nccl_, nullptr);
  if (nccl == nullptr) return OkStatus();
  return CUHAL_NCCL(nccl, ncclGroupEnd).AddContext("ending a channel group");
}

}  // namespace cuhal
