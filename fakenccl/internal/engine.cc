// Copyright 2026 The cuhal Authors.
// The engine's core: small helpers, the clocks of invariant 5, the handle table and inspection.
// The rest of the engine is split along its seams (see engine.h): communicator.cc (lifecycle and
// split), matching.cc (call matching, mismatch detection, timeouts) and execution.cc (data
// movement); engine_state.h holds the rendezvous structures they share.
#include "fakenccl/internal/engine.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "fakenccl/internal/engine_state.h"
#include "fakenccl/internal/fakecuda_hooks.h"

namespace fakenccl {
namespace internal {

namespace {

constexpr std::uintptr_t kCommTag = 0xC;

}  // namespace

// ---- Small helpers ----------------------------------------------------------------------------

const char* CallKindApi(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce: return "ncclAllReduce";
    case CallKind::kBroadcast: return "ncclBroadcast";
    case CallKind::kReduce: return "ncclReduce";
    case CallKind::kAllGather: return "ncclAllGather";
    case CallKind::kReduceScatter: return "ncclReduceScatter";
    case CallKind::kAlltoAll: return "ncclAlltoAll";
    case CallKind::kGather: return "ncclGather";
    case CallKind::kScatter: return "ncclScatter";
    case CallKind::kSend: return "ncclSend";
    case CallKind::kRecv: return "ncclRecv";
  }
  return "nccl?";
}

bool IsReduction(CallKind kind) {
  return kind == CallKind::kAllReduce || kind == CallKind::kReduce ||
         kind == CallKind::kReduceScatter;
}

bool HasRoot(CallKind kind) {
  return kind == CallKind::kBroadcast || kind == CallKind::kReduce || kind == CallKind::kGather ||
         kind == CallKind::kScatter;
}

bool IsPointToPoint(CallKind kind) { return kind == CallKind::kSend || kind == CallKind::kRecv; }

ncclComm_t EncodeComm(std::uint64_t id) {
  return reinterpret_cast<ncclComm_t>(static_cast<std::uintptr_t>((id << 4) | kCommTag));
}

std::uint64_t DecodeComm(ncclComm_t comm) {
  auto v = reinterpret_cast<std::uintptr_t>(comm);
  if ((v & 0xF) != kCommTag) return 0;
  return static_cast<std::uint64_t>(v >> 4);
}

std::shared_ptr<fakecuda::IdleClock> Engine::NewClock(int participants) const {
  const FakecudaHooks* hooks = Hooks();
  if (hooks == nullptr) return nullptr;
  // A quiescent round jumps past every pending deadline of the group (they all have this length).
  const std::uint64_t jump = timeout_ticks_ == ~std::uint64_t{0} ? timeout_ticks_ : timeout_ticks_ + 1;
  return hooks->new_idle_clock(participants, jump);
}

Deadline Engine::StartDeadline(const fakecuda::IdleClock* clock) const {
  Deadline d;
  d.tick = clock != nullptr ? clock->Now() : 0;
  d.wall = std::chrono::steady_clock::now();
  return d;
}

bool Engine::Expired(const fakecuda::IdleClock* clock, const Deadline& d) const {
  if (clock != nullptr && clock->Now() - d.tick > timeout_ticks_) return true;
  return std::chrono::steady_clock::now() - d.wall > wall_timeout_;
}

std::string Engine::ExpiryText(const fakecuda::IdleClock* clock, const Deadline& d) const {
  if (clock != nullptr && clock->Now() - d.tick > timeout_ticks_) {
    return "timed out (every rank that could still make it was blocked or gone: no virtual time "
           "passes while one runs)";
  }
  return Fmt("timed out after the wall-clock backstop of %lld ms (a rank is neither done nor "
             "blocked inside the fake: busy, or blocked somewhere the fake cannot see)",
             static_cast<long long>(wall_timeout_.count()));
}

void Engine::WaitSliceLocked() {
  Blocked blocked;  // an observation of the clocks of this thread's groups
  cv_.WaitFor(mu_, kHostSlice);
}

Engine::Lookup Engine::FindLocked(ncclComm_t comm, const char* op_name, std::string* text) {
  Lookup out;
  if (comm == nullptr) {
    *text = Fmt("%s : comm argument is NULL", op_name);
    out.error = ncclInvalidArgument;
    return out;
  }
  auto it = handles_.find(DecodeComm(comm));
  if (it == handles_.end()) {
    *text = Fmt(
        "Error: corrupted comm object detected (fakenccl: %s: %p is not a live communicator: "
        "never created, or already destroyed or aborted)",
        op_name, static_cast<void*>(comm));
    out.error = ncclInvalidArgument;
    return out;
  }
  out.handle = it->second.get();
  return out;
}

CommHandle* Engine::NewHandleLocked(const char* created_by, int device, int cc_major,
                                    bool blocking) {
  auto h = std::make_unique<CommHandle>();
  h->id = next_id_++;
  h->created_by = created_by;
  h->device = device;
  h->cc_major = cc_major;
  h->blocking = blocking;
  CommHandle* raw = h.get();
  handles_.emplace(raw->id, std::move(h));
  return raw;
}

ncclResult_t Engine::EnsureReadyLocked(CommHandle& h, std::string* text) {
  switch (h.state) {
    case CommHandle::State::kInitializing:
      *text = "Attempt to use communicator before the previous operation returned ncclSuccess";
      return ncclInvalidArgument;
    case CommHandle::State::kFailed:
      *text = h.init_text;
      return h.init_error;
    case CommHandle::State::kReady: {
      RankState& rs = h.comm->ranks[static_cast<size_t>(h.rank)];
      if (rs.async_error != ncclSuccess) {
        *text = rs.async_text;
        return rs.async_error;
      }
      return ncclSuccess;
    }
  }
  return ncclInternalError;
}


// ---- Inspection --------------------------------------------------------------------------------

EngineInventory Engine::Inventory() const {
  cuhal::MutexLock lock(mu_);
  EngineInventory inv;
  for (const auto& [id, h] : handles_) {
    ++inv.communicators;
    for (const UserOp& u : h->user_ops) inv.reduction_ops += u.live ? 1 : 0;
  }
  return inv;
}

std::string Engine::DescribeLive() const {
  cuhal::MutexLock lock(mu_);
  std::vector<std::uint64_t> ids;
  for (const auto& [id, h] : handles_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  std::ostringstream os;
  for (std::uint64_t id : ids) {
    const CommHandle& h = *handles_.at(id);
    os << "communicator " << static_cast<void*>(EncodeComm(id)) << " (" << h.created_by << ")";
    if (h.state == CommHandle::State::kReady) {
      os << ": rank " << h.rank << " of " << h.comm->label;
    } else {
      os << (h.state == CommHandle::State::kInitializing ? ": still initializing"
                                                          : ": failed to initialize");
    }
    os << ", device " << h.device;
    int ops = 0;
    for (const UserOp& u : h.user_ops) ops += u.live ? 1 : 0;
    if (ops > 0) os << ", " << ops << " reduction op(s) not destroyed";
    os << "\n";
  }
  return os.str();
}

}  // namespace internal
}  // namespace fakenccl
