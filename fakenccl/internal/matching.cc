// Copyright 2026 The cuhal Authors.
// Call matching; see matching.h (and engine.h for the invariants).
#include "fakenccl/internal/matching.h"

#include <algorithm>
#include <cinttypes>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fakenccl/internal/communicator.h"
#include "fakenccl/internal/engine_state.h"
#include "fakenccl/internal/fakecuda_hooks.h"
#include "fakenccl/nccl_fault_injector.h"

namespace fakenccl {
namespace internal {

std::string DescribeCall(const CallDesc& d) {
  std::ostringstream os;
  os << CallKindApi(d.kind) << "(count=" << d.count << ", " << TypeName(d.type);
  if (IsReduction(d.kind)) os << ", " << ReduceKindName(d.op.kind);
  if (HasRoot(d.kind)) os << ", root=" << d.root;
  if (IsPointToPoint(d.kind)) os << ", peer=" << d.root;
  os << ")";
  return os.str();
}

bool SameCollective(const CallDesc& a, const CallDesc& b) {
  if (a.kind != b.kind || a.count != b.count || a.type != b.type) return false;
  if (IsReduction(a.kind) && a.op.kind != b.op.kind) return false;
  if (HasRoot(a.kind) && a.root != b.root) return false;
  return true;
}

double CostUs(const CallDesc& d, int nranks) {
  double bytes = static_cast<double>(d.count * TypeSize(d.type));
  if (d.kind == CallKind::kAllGather || d.kind == CallKind::kReduceScatter ||
      d.kind == CallKind::kAlltoAll) {
    bytes *= nranks;
  }
  return 5.0 + bytes / 2.0e5;  // ~200 GB/s, 5 us launch: NVLink-class figures
}

bool Engine::CheckTimeoutsLocked(CommShared& comm, int rank, bool* waiting) {
  RankState& rs = comm.ranks[static_cast<size_t>(rank)];
  bool failed = false;
  std::vector<std::shared_ptr<Task>> live;
  for (auto& weak : rs.pending) {
    if (std::shared_ptr<Task> t = weak.lock(); t && !t->done) live.push_back(std::move(t));
  }
  rs.pending.clear();
  for (auto& t : live) rs.pending.push_back(t);
  for (auto& t : live) {
    if (!t->first_head) continue;
    bool settled = true;
    for (auto& [slot, part] : t->entries) settled = SlotSettledLocked(*slot) && settled;
    if (settled) continue;
    if (Expired(comm.clock.get(), t->start)) {
      const std::string expiry = ExpiryText(comm.clock.get(), t->start);
      for (auto& [slot, part] : t->entries) {
        if (slot->state == Slot::State::kOpen) FailSlotTimeoutLocked(comm, *slot, expiry);
      }
      failed = true;
    } else {
      *waiting = true;
    }
  }
  return failed;
}

// ---- Communication: checking and launching -----------------------------------------------------

ncclResult_t Engine::CheckCall(ncclComm_t comm, const CallDesc& desc, const char* op_name,
                               const NcclFaultInjector& faults, std::vector<GroupOp>* ops,
                               std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, op_name, text);
  if (l.error != ncclSuccess) return l.error;
  if (l.handle->revoked) {  // NCCL's ncclEnqueueCheck, right after its CommCheck
    *text = Fmt("%s: communicator was revoked", op_name);
    return ncclInvalidUsage;
  }
  if (throw_in_calls_for_testing_.load(std::memory_order_relaxed) > 0 &&
      throw_in_calls_for_testing_.fetch_sub(1, std::memory_order_relaxed) > 0) {
    throw std::runtime_error("injected exception in CheckCall (test hook)");
  }
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  CommHandle& h = *l.handle;
  const int n = h.comm->nranks;
  // NCCL's ArgsCheck, in its order.
  const int root = (HasRoot(desc.kind) || IsPointToPoint(desc.kind)) ? desc.root : 0;
  if (root < 0 || root >= n) {
    *text = Fmt("%s : invalid root %d (root should be in the 0..%d range)", op_name, root, n);
    return ncclInvalidArgument;
  }
  if (!ValidType(desc.raw_type)) {
    *text = Fmt("%s : invalid type %d", op_name, desc.raw_type);
    return ncclInvalidArgument;
  }
  CallDesc d = desc;
  d.type = static_cast<ncclDataType_t>(desc.raw_type);
  const int opv = desc.raw_op;
  if (opv < 0) {
    *text = Fmt("%s : invalid reduction operation %d", op_name, opv);
    return ncclInvalidArgument;
  }
  const UserOp* user = nullptr;
  if (opv >= static_cast<int>(ncclNumOps)) {
    int ix = Mangle(comm, opv) - static_cast<int>(ncclNumOps);
    if (ix < 0 || static_cast<std::size_t>(ix) >= h.user_ops.size() ||
        !h.user_ops[static_cast<size_t>(ix)].live) {
      *text = Fmt("%s : reduction operation %d unknown to this communicator", op_name, opv);
      return ncclInvalidArgument;
    }
    user = &h.user_ops[static_cast<size_t>(ix)];
    d.op.handle = static_cast<ncclRedOp_t>(opv);
    d.op.kind = ReduceKind::kPreMulSum;
    d.op.scalar_on_device = user->on_device;
    d.op.scalar_ptr = user->device_ptr;
    d.op.scalar = user->scalar;
  } else {
    static constexpr ReduceKind kBuiltin[] = {ReduceKind::kSum, ReduceKind::kProd,
                                              ReduceKind::kMax, ReduceKind::kMin,
                                              ReduceKind::kAvg};
    d.op.handle = static_cast<ncclRedOp_t>(opv);
    d.op.kind = kBuiltin[opv];
  }
  RankState* rs = &h.comm->ranks[static_cast<size_t>(h.rank)];
  if (rs->dead) return ncclSuccess;  // a dead rank's calls vanish
  // NCCL's taskAppend: empty collectives are discarded (point-to-point calls are not: a zero-byte
  // send still meets its receive here; UNMEASURED).
  if (!IsPointToPoint(d.kind) && d.count == 0) return ncclSuccess;
  if (IsReduction(d.kind) && (d.type == ncclFloat8e4m3 || d.type == ncclFloat8e5m2) &&
      h.cc_major < 9) {
    *text = "FP8 reduction support begins with sm90 capable devices.";
    return ncclInvalidArgument;
  }
  if (IsReduction(d.kind) && user != nullptr && user->type != d.type) {
    *text =
        "Data type supplied to user-created ncclRedOp_t does not match type given to reduction "
        "operation";
    return ncclInvalidArgument;
  }
  const int device = h.device;
  const int rank = h.rank;
  const std::uint64_t id = h.id;
  lock.unlock();  // invariant 1: fakecuda is called without mu_
  const FakecudaHooks* hooks = Hooks();
  if (hooks == nullptr) {
    *text = Fmt("fakenccl: %s: %s", op_name, HooksUnavailableReason());
    return ncclUnhandledCudaError;
  }
  const int stream_device = hooks->stream_device(d.stream);
  if (stream_device < 0) {
    // UNMEASURED: NCCL's cudaStreamGetCaptureInfo on a bad handle; it may also crash.
    *text = Fmt(
        "Cuda failure 'invalid resource handle' (fakenccl: %s: stream %p is not a stream of the "
        "installed fake driver, or it is NULL/legacy/per-thread and the calling thread has no "
        "current context)",
        op_name, static_cast<void*>(d.stream));
    return ncclUnhandledCudaError;
  }
  if (stream_device != device) {
    // UNMEASURED: needs two GPUs; real NCCL may instead fail with ncclUnhandledCudaError when it
    // records its launch event on the foreign stream.
    *text = Fmt("fakenccl: %s: stream %p belongs to device %d but rank %d of the communicator is "
                "on device %d",
                op_name, static_cast<void*>(d.stream), stream_device, rank, device);
    return ncclInvalidArgument;
  }
  lock.lock();
  auto it = handles_.find(id);
  if (it == handles_.end() || it->second->state != CommHandle::State::kReady) {
    *text = Fmt("fakenccl: %s: the communicator was destroyed during the call", op_name);
    return ncclInvalidArgument;
  }
  rs = &it->second->comm->ranks[static_cast<size_t>(rank)];
  if (rs->dead) return ncclSuccess;
  ++rs->calls;
  std::shared_ptr<CommShared> shared = it->second->comm;
  if (faults.ShouldDie(rank, n, rs->calls)) {
    rs->dead = true;  // from this call on, nothing this handle does reaches its peers
    if (shared->shm) shared->shm->MarkGone(/*aborted=*/false, /*died=*/true);
    ClockLeave(shared->clock, rank);
    return ncclSuccess;
  }
  ClockBind(shared->clock, rank);  // this thread drives the rank (and is not polling)
  ops->push_back(GroupOp{id, d});
  return ncclSuccess;
}

void Engine::SetAsyncErrorLocked(CommShared& comm, int rank, ncclResult_t error,
                                 const std::string& text) {
  RankState& rs = comm.ranks[static_cast<size_t>(rank)];
  if (rs.async_error != ncclSuccess) return;
  rs.async_error = error;
  rs.async_text = text;
}

std::string Engine::DescribeSlot(const CommShared& comm, const Slot& slot) const {
  if (slot.p2p) {
    return Fmt("ncclSend/ncclRecv #%" PRIu64 " from rank %d to rank %d of %s", slot.seq,
               slot.src, slot.dst, comm.label.c_str());
  }
  const char* api = "collective";
  for (const Participant& p : slot.parts) {
    if (p.posted) {
      api = CallKindApi(p.desc.kind);
      break;
    }
  }
  return Fmt("collective #%" PRIu64 " (%s) of %s", slot.seq, api, comm.label.c_str());
}

void Engine::FailSlotLocked(CommShared& comm, Slot& slot, ncclResult_t error,
                            const std::string& text, const std::vector<int>& culprits,
                            ncclResult_t culprit_error) {
  if (slot.state == Slot::State::kFailed || slot.state == Slot::State::kDone) return;
  slot.state = Slot::State::kFailed;
  slot.failure = text;
  std::vector<int> involved;
  if (slot.p2p) {
    involved.push_back(slot.src);
    if (slot.dst != slot.src) involved.push_back(slot.dst);
  } else {
    for (int r = 0; r < comm.nranks; ++r) involved.push_back(r);
  }
  for (int r : involved) {
    bool culprit = std::find(culprits.begin(), culprits.end(), r) != culprits.end();
    SetAsyncErrorLocked(comm, r, culprit ? culprit_error : error, text);
  }
  ClockProgress(comm.clock);
  cv_.NotifyAll();
}

void Engine::FailSlotTimeoutLocked(CommShared& comm, Slot& slot, const std::string& expiry) {
  std::string missing;
  std::vector<int> waiting;
  bool gone = false;
  auto rank_of = [&](std::size_t i) {
    return slot.p2p ? (i == 0 ? slot.src : slot.dst) : static_cast<int>(i);
  };
  for (std::size_t i = 0; i < slot.parts.size(); ++i) {
    const Participant& p = slot.parts[i];
    const int r = rank_of(i);
    const RankState& rs = comm.ranks[static_cast<size_t>(r)];
    std::shared_ptr<Task> t = p.task.lock();
    std::string why;
    if (!p.posted) {
      if (rs.dead) {
        why = Fmt("rank %d died (injected rank death at its communication call #%" PRIu64 ")", r,
                  rs.calls);
        gone = true;
      } else if (rs.aborted) {
        why = Fmt("rank %d aborted its communicator", r);
        gone = true;
      } else if (rs.destroyed) {
        why = Fmt("rank %d destroyed its communicator without making this call", r);
      } else {
        why = Fmt("rank %d never made this call (it has made %" PRIu64
                  " communication calls on this communicator)",
                  r, rs.calls);
      }
    } else if (!t || !t->started) {
      why = Fmt(
          "rank %d made the call but its stream never reached it (earlier work on that stream is "
          "stuck; for send/recv this is the deadlock that grouping with ncclGroupStart/End avoids)",
          r);
    } else {
      waiting.push_back(r);
      continue;
    }
    missing += (missing.empty() ? "" : "; ") + why;
  }
  // The choice (see fake_nccl.h): a peer that died or aborted is a remote
  // failure; a peer that is alive but never made the call is the program's bug. UNMEASURED: real
  // NCCL hangs in both cases (or reports ncclRemoteError/ncclSystemError from its network layer).
  ncclResult_t error = gone ? ncclRemoteError : ncclInvalidUsage;
  FailSlotLocked(comm, slot, error,
                 Fmt("fakenccl: %s %s: %s; waiting: rank(s) %s", DescribeSlot(comm, slot).c_str(),
                     expiry.c_str(), missing.c_str(), RankList(waiting).c_str()));
}

bool Engine::SlotSettledLocked(Slot& slot) {
  if (slot.state != Slot::State::kOpen) return true;
  for (const Participant& p : slot.parts) {
    if (!p.posted) return false;
    std::shared_ptr<Task> t = p.task.lock();
    if (!t || !t->started) return false;
  }
  slot.state = Slot::State::kReady;
  return true;
}

namespace {

// The device bytes call `d` of rank `rank` (of `nranks`) reads and writes on its own stream, as
// NCCL's API defines its buffers (a root-only buffer only on the root), for fakecuda's race
// detector. Only the calling rank's own buffers: another rank's are that rank's accesses.
void AppendCallAccesses(const CallDesc& d, int rank, int nranks,
                        std::vector<fakecuda::RaceAccess>* out) {
  const std::size_t bytes = d.count * TypeSize(d.type);
  const std::size_t all = bytes * static_cast<std::size_t>(nranks);
  const bool root = rank == d.root;
  auto read = [out](const void* p, std::size_t n) {
    if (p != nullptr && n != 0) out->push_back({reinterpret_cast<std::uintptr_t>(p), n, false});
  };
  auto write = [out](const void* p, std::size_t n) {
    if (p != nullptr && n != 0) out->push_back({reinterpret_cast<std::uintptr_t>(p), n, true});
  };
  switch (d.kind) {
    case CallKind::kAllReduce:
      read(d.sendbuff, bytes);
      write(d.recvbuff, bytes);
      break;
    case CallKind::kBroadcast:
      if (root) read(d.sendbuff, bytes);
      write(d.recvbuff, bytes);
      break;
    case CallKind::kReduce:
      read(d.sendbuff, bytes);
      if (root) write(d.recvbuff, bytes);
      break;
    case CallKind::kAllGather:
      read(d.sendbuff, bytes);
      write(d.recvbuff, all);
      break;
    case CallKind::kReduceScatter:
      read(d.sendbuff, all);
      write(d.recvbuff, bytes);
      break;
    case CallKind::kAlltoAll:
      read(d.sendbuff, all);
      write(d.recvbuff, all);
      break;
    case CallKind::kGather:
      read(d.sendbuff, bytes);
      if (root) write(d.recvbuff, all);
      break;
    case CallKind::kScatter:
      if (root) read(d.sendbuff, all);
      write(d.recvbuff, bytes);
      break;
    case CallKind::kSend:
      read(d.sendbuff, bytes);
      break;
    case CallKind::kRecv:
      write(d.recvbuff, bytes);
      break;
  }
}

}  // namespace

ncclResult_t Engine::Launch(std::span<const GroupOp> ops, std::string* text) {
  ncclResult_t result = ncclSuccess;
  std::vector<std::shared_ptr<Task>> tasks;
  std::vector<double> costs;
  std::vector<const char*> whats;
  // For fakecuda's race detector: per task, per leg, the bytes its calls read and write.
  std::vector<std::vector<std::vector<fakecuda::RaceAccess>>> accesses;
  {
    cuhal::MutexLock lock(mu_);
    std::vector<std::uint64_t> order;
    for (const GroupOp& op : ops) {
      if (std::find(order.begin(), order.end(), op.handle_id) == order.end()) {
        order.push_back(op.handle_id);
      }
    }
    for (std::uint64_t id : order) {
      auto it = handles_.find(id);
      if (it == handles_.end()) {
        *text = "fakenccl: a communicator of the group was destroyed before ncclGroupEnd";
        result = ncclInvalidArgument;
        continue;
      }
      CommHandle& h = *it->second;
      if (ncclResult_t r = EnsureReadyLocked(h, text); r != ncclSuccess) {
        result = r;
        continue;
      }
      std::shared_ptr<CommShared> comm = h.comm;
      RankState& rs = comm->ranks[static_cast<size_t>(h.rank)];
      if (rs.dead) continue;
      auto task = std::make_shared<Task>();
      task->comm = comm;
      task->rank = h.rank;
      task->ordinal = rs.next_task++;
      double cost = 0.0;
      const char* what = nullptr;
      std::vector<std::vector<fakecuda::RaceAccess>> task_accesses;
      for (const GroupOp& op : ops) {
        if (op.handle_id != id) continue;
        const CallDesc& d = op.desc;
        what = what == nullptr ? CallKindApi(d.kind) : "ncclGroupEnd";
        cost += CostUs(d, comm->nranks);
        auto leg_it = std::find(task->streams.begin(), task->streams.end(), d.stream);
        const std::size_t leg = static_cast<std::size_t>(leg_it - task->streams.begin());
        if (leg_it == task->streams.end()) {
          task->streams.push_back(d.stream);
          task_accesses.emplace_back();
        }
        AppendCallAccesses(d, h.rank, comm->nranks, &task_accesses[leg]);
        if (comm->shm) {  // across processes: the call meets its peers in the segment
          if (ncclResult_t r = LaunchShmCallLocked(*comm, rs, h.rank, d, *task, text);
              r != ncclSuccess) {
            result = r;
          }
          continue;
        }
        std::shared_ptr<Slot> slot;
        std::size_t part = 0;
        if (IsPointToPoint(d.kind)) {
          const int peer = d.root;
          const bool send = d.kind == CallKind::kSend;
          const int src = send ? h.rank : peer;
          const int dst = send ? peer : h.rank;
          std::uint64_t k = send ? rs.sends[static_cast<size_t>(peer)]++
                                 : rs.recvs[static_cast<size_t>(peer)]++;
          std::shared_ptr<Slot>& s = comm->p2ps[std::make_tuple(src, dst, k)];
          if (!s) {
            s = std::make_shared<Slot>();
            s->p2p = true;
            s->seq = k;
            s->src = src;
            s->dst = dst;
            s->parts.resize(2);
          }
          slot = s;
          part = send ? 0 : 1;
        } else {
          std::uint64_t seq = rs.next_coll++;
          std::shared_ptr<Slot>& s = comm->colls[seq];
          if (!s) {
            s = std::make_shared<Slot>();
            s->seq = seq;
            s->parts.resize(static_cast<size_t>(comm->nranks));
          }
          slot = s;
          part = static_cast<size_t>(h.rank);
        }
        // Compare with what the other ranks posted (invariant 2: only while kOpen).
        std::string mismatch;
        if (slot->state == Slot::State::kOpen) {
          if (slot->p2p) {
            const Participant& other = slot->parts[1 - part];
            std::size_t mine = d.count * TypeSize(d.type);
            if (other.posted &&
                other.desc.count * TypeSize(other.desc.type) != mine) {
              const CallDesc& s = part == 0 ? d : other.desc;
              const CallDesc& r = part == 0 ? other.desc : d;
              mismatch = Fmt(
                  "fakenccl: mismatched point-to-point calls on %s: rank %d's ncclSend #%" PRIu64
                  " to rank %d sends %zu bytes (%zu x %s) but rank %d's matching ncclRecv "
                  "expects %zu bytes (%zu x %s)",
                  comm->label.c_str(), slot->src, slot->seq, slot->dst,
                  s.count * TypeSize(s.type), s.count, TypeName(s.type), slot->dst,
                  r.count * TypeSize(r.type), r.count, TypeName(r.type));
            }
          } else {
            for (std::size_t q = 0; q < slot->parts.size(); ++q) {
              const Participant& other = slot->parts[q];
              if (!other.posted || SameCollective(other.desc, d)) continue;
              mismatch = Fmt(
                  "fakenccl: mismatched collective #%" PRIu64 " on %s: rank %zu called %s but "
                  "rank %d called %s",
                  slot->seq, comm->label.c_str(), q, DescribeCall(other.desc).c_str(), h.rank,
                  DescribeCall(d).c_str());
              break;
            }
          }
        }
        Participant& me = slot->parts[part];
        me.posted = true;
        me.task = task;
        me.desc = d;
        task->entries.emplace_back(slot, part);
        if (!mismatch.empty()) {
          FailSlotLocked(*comm, *slot, ncclInvalidUsage, mismatch);
        } else if (slot->state == Slot::State::kOpen) {
          // A participant that aborted can never post: fail now rather than at the timeout.
          for (std::size_t q = 0; q < slot->parts.size(); ++q) {
            int r = slot->p2p ? (q == 0 ? slot->src : slot->dst) : static_cast<int>(q);
            if (!slot->parts[q].posted && comm->ranks[static_cast<size_t>(r)].aborted) {
              FailSlotLocked(*comm, *slot, ncclRemoteError,
                             Fmt("fakenccl: %s needs rank %d, which aborted its communicator",
                                 DescribeSlot(*comm, *slot).c_str(), r));
              break;
            }
          }
        }
      }
      task->at_head.assign(task->streams.size(), 0);
      task->leg_done.assign(task->streams.size(), 0);
      // Forget finished tasks so that the list stays as short as the work in flight.
      std::erase_if(rs.pending, [](const std::weak_ptr<Task>& w) {
        std::shared_ptr<Task> t = w.lock();
        return !t || t->done;
      });
      rs.pending.push_back(task);
      ClockProgress(comm->clock);  // posts: a round of the group's clock starts over
      tasks.push_back(task);
      costs.push_back(cost);
      whats.push_back(what);
      accesses.push_back(std::move(task_accesses));
    }
  }
  std::shared_ptr<Engine> self = shared_from_this();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    std::shared_ptr<Task> task = tasks[i];
    for (std::size_t leg = 0; leg < task->streams.size(); ++leg) {
      fakecuda::StreamWork work;
      work.what = whats[i];
      work.ready = [self, task, leg] { return self->LegReady(*task, leg); };
      work.run = [self, task, leg] { return self->RunLeg(*task, leg); };
      work.cost_us = costs[i];
      work.accesses = std::move(accesses[i][leg]);
      CUresult r = Hooks()->enqueue_stream_work(task->streams[leg], std::move(work));
      if (r != CUDA_SUCCESS) {
        cuhal::MutexLock lock(mu_);
        std::string why = Fmt(
            "fakenccl: rank %d could not enqueue its work on stream %p: CUresult %d", task->rank,
            static_cast<void*>(task->streams[leg]), static_cast<int>(r));
        for (auto& [slot, part] : task->entries) {
          FailSlotLocked(*task->comm, *slot, ncclRemoteError, why, {task->rank},
                         ncclUnhandledCudaError);
        }
        task->at_head[leg] = 1;
        task->leg_done[leg] = 1;
        if (std::all_of(task->leg_done.begin(), task->leg_done.end(), [](char c) { return c; })) {
          FinishTaskLocked(*task);
        }
        *text = why;
        result = ncclUnhandledCudaError;
      }
    }
  }
  return result;
}

// ---- Stream work -------------------------------------------------------------------------------

bool Engine::LegReady(Task& task, std::size_t leg) {
  // Called by fakecuda under its lock: must not throw into the scheduler.
  try {
    cuhal::MutexLock lock(mu_);
    if (task.done) return true;
    CommShared& comm = *task.comm;
    if (!task.at_head[leg]) {
      task.at_head[leg] = 1;
      ClockProgress(comm.clock);
    }
    if (!task.first_head) {
      task.first_head = true;
      task.start = StartDeadline(comm.clock.get());
    }
    task.started =
        std::all_of(task.at_head.begin(), task.at_head.end(), [](char c) { return c; });
    if (comm.ranks[static_cast<size_t>(task.rank)].aborted) return true;
    if (comm.shm) return ShmLegReadyLocked(task);
    bool settled = true;
    for (auto& [slot, part] : task.entries) settled = SlotSettledLocked(*slot) && settled;
    if (settled) return true;
    if (Expired(comm.clock.get(), task.start)) {
      const std::string expiry = ExpiryText(comm.clock.get(), task.start);
      for (auto& [slot, part] : task.entries) {
        if (slot->state == Slot::State::kOpen) FailSlotTimeoutLocked(comm, *slot, expiry);
      }
      return true;
    }
    return false;
  } catch (...) {
    // Out of memory for a message: let the leg run; its body fails what is still open.
    return true;
  }
}

}  // namespace internal
}  // namespace fakenccl
