// Copyright 2026 The cuhal Authors.
// The engine's side of communicators across processes (engine.h declares these methods;
// shm_transport.h moves the calls and data between processes). A rank whose communicator spans
// processes has a CommShared of its own with only its RankState live: its calls are posted to
// the segment at Launch (where mismatches are found, with the in-process texts), its stream work
// is ready once every rank posted (or the call failed), and the leg that claims the Task moves
// the data of all its calls through the segment without mu_ (invariants 1-5 of engine.h hold:
// a Slot leaves kOpen once, legs become ready only when every Slot left kOpen, every wait is
// bounded: here by the wall-clock backstop and the death of a peer process).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "fakenccl/internal/engine.h"
#include "fakenccl/internal/engine_state.h"
#include "fakenccl/internal/shm_transport.h"

namespace fakenccl {
namespace internal {

ncclResult_t Engine::InitRankShm(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                                 int device, int cc_major, bool blocking, const char* api,
                                 std::string* text) {
  // The rendezvous is in the segment; it blocks this thread (bounded: the wall-clock backstop)
  // whether or not the caller asked for a non-blocking communicator.
  std::shared_ptr<ShmComm> shm;
  ncclResult_t r = ShmComm::Join(id, nranks, rank, device, api, wall_timeout_, &shm, text);
  if (r != ncclSuccess) {
    *out = nullptr;
    return r;
  }
  cuhal::MutexLock lock(mu_);
  CommHandle* h = NewHandleLocked(api, device, cc_major, blocking);
  auto comm = std::make_shared<CommShared>();
  comm->id = h->id;
  comm->nranks = nranks;
  comm->label = Fmt("communicator %s (%d ranks across processes, made by %s)",
                    ShmSegmentName(id).c_str(), nranks, api);
  comm->ranks.resize(static_cast<std::size_t>(nranks));
  for (RankState& rs : comm->ranks) {
    rs.sends.assign(static_cast<std::size_t>(nranks), 0);
    rs.recvs.assign(static_cast<std::size_t>(nranks), 0);
  }
  shm->SetLabel(comm->label);
  comm->shm = std::move(shm);
  RankState& mine = comm->ranks[static_cast<std::size_t>(rank)];
  mine.device = device;
  mine.handle_id = h->id;
  h->comm = comm;
  h->rank = rank;
  h->state = CommHandle::State::kReady;
  *out = EncodeComm(h->id);
  return ncclSuccess;
}

void Engine::FailShmSlotLocked(CommShared& comm, Slot& slot, const ShmFailure& f) {
  std::vector<int> culprits;
  if (f.culprit >= 0) {
    culprits.push_back(f.culprit);
    slot.bad_ranks = culprits;
  }
  FailSlotLocked(comm, slot, f.error, f.text, culprits, f.culprit_error);
}

ncclResult_t Engine::LaunchShmCallLocked(CommShared& comm, RankState& rs, int rank,
                                         const CallDesc& d, Task& task, std::string* text) {
  auto slot = std::make_shared<Slot>();
  ShmTicket ticket;
  ncclResult_t r = ncclSuccess;
  std::size_t part = 0;
  if (IsPointToPoint(d.kind)) {
    const int peer = d.root;
    const bool send = d.kind == CallKind::kSend;
    const std::uint64_t k = send ? rs.sends[static_cast<std::size_t>(peer)]++
                                 : rs.recvs[static_cast<std::size_t>(peer)]++;
    slot->p2p = true;
    slot->seq = k;
    slot->src = send ? rank : peer;
    slot->dst = send ? peer : rank;
    slot->parts.resize(2);
    part = send ? 0 : 1;
    r = comm.shm->PostP2p(peer, k, d, comm.label, &ticket, text);
  } else {
    const std::uint64_t seq = rs.next_coll++;
    slot->seq = seq;
    slot->parts.resize(static_cast<std::size_t>(comm.nranks));
    part = static_cast<std::size_t>(rank);
    r = comm.shm->PostCollective(seq, d, comm.label, &ticket, text);
  }
  Participant& me = slot->parts[part];
  me.posted = true;
  me.desc = d;
  task.entries.emplace_back(slot, part);
  task.tickets.push_back(ticket);
  if (r != ncclSuccess) {
    FailSlotLocked(comm, *slot, r, *text);
    return r;
  }
  // A mismatch with an earlier rank's call fails the slot at once, as in-process.
  ShmFailure f;
  if (comm.shm->Settled(ticket, &f) && f.error != ncclSuccess) FailShmSlotLocked(comm, *slot, f);
  return ncclSuccess;
}

bool Engine::ShmLegReadyLocked(Task& task) {
  CommShared& comm = *task.comm;
  bool settled = true;
  for (std::size_t i = 0; i < task.entries.size(); ++i) {
    Slot& slot = *task.entries[i].first;
    if (slot.state != Slot::State::kOpen) continue;
    ShmFailure f;
    if (!comm.shm->Settled(task.tickets[i], &f)) {
      settled = false;
    } else if (f.error != ncclSuccess) {
      FailShmSlotLocked(comm, slot, f);
    } else if (task.started) {
      slot.state = Slot::State::kReady;  // every rank posted: this rank may move its data
    } else {
      settled = false;
    }
  }
  if (settled) return true;
  if (!task.first_head || !Expired(nullptr, task.start)) return false;
  const std::string expiry = ExpiryText(nullptr, task.start);
  for (std::size_t i = 0; i < task.entries.size(); ++i) {
    Slot& slot = *task.entries[i].first;
    if (slot.state != Slot::State::kOpen) continue;
    const std::vector<int> missing = comm.shm->Unposted(task.tickets[i]);
    ShmFailure f;
    f.error = ncclInvalidUsage;
    f.text = missing.empty()
                 ? Fmt("fakenccl: %s %s: rank %d's stream never reached the call (earlier work on "
                       "one of its streams is stuck)",
                       DescribeSlot(comm, slot).c_str(), expiry.c_str(), task.rank)
                 : Fmt("fakenccl: %s %s: rank(s) %s never made this call (a communicator across "
                       "processes: only the wall-clock backstop applies)",
                       DescribeSlot(comm, slot).c_str(), expiry.c_str(),
                       RankList(missing).c_str());
    comm.shm->Fail(task.tickets[i], &f);
    FailShmSlotLocked(comm, slot, f);
  }
  return true;
}

CUresult Engine::ShmRunLeg(Task& task, std::size_t leg) {
  cuhal::MutexLock lock(mu_);
  CommShared& comm = *task.comm;
  if (!task.shm_claimed) {
    task.shm_claimed = true;
    std::vector<ShmComm::Entry> entries;
    std::vector<Slot*> slots;
    for (std::size_t i = 0; i < task.entries.size(); ++i) {
      Slot& slot = *task.entries[i].first;
      if (slot.state != Slot::State::kReady) continue;  // failed, or this rank aborted
      slot.state = Slot::State::kClaimed;
      entries.push_back(ShmComm::Entry{task.tickets[i], slot.parts[task.entries[i].second].desc});
      slots.push_back(&slot);
    }
    std::vector<ShmFailure> results;
    if (!entries.empty()) {
      std::shared_ptr<ShmComm> shm = comm.shm;
      const auto deadline = task.start.wall + wall_timeout_;
      lock.unlock();  // invariant 3: data moves without mu_
      shm->Execute(entries, deadline, wall_timeout_, &results);
      lock.lock();
    }
    for (std::size_t j = 0; j < slots.size(); ++j) {
      if (results[j].error == ncclSuccess) {
        slots[j]->state = Slot::State::kDone;
      } else {
        FailShmSlotLocked(comm, *slots[j], results[j]);
      }
    }
    task.shm_finished = true;
    cv_.NotifyAll();
  } else {
    while (!task.shm_finished) WaitSliceLocked();
  }
  return EndLegLocked(task, leg);
}

bool Engine::ShmPollLocked(CommShared& comm, int rank) {
  bool changed = false;
  RankState& rs = comm.ranks[static_cast<std::size_t>(rank)];
  if (rs.async_error == ncclSuccess) {
    const std::string gone = comm.shm->PeerGone();
    if (!gone.empty()) {
      // A choice (UNMEASURED): NCCL notices a dead peer when its transport fails; the fake
      // reports it to every survivor as soon as its watcher sees the process gone.
      SetAsyncErrorLocked(comm, rank,
                          ncclRemoteError,
                          Fmt("fakenccl: %s: %s; the communicator is broken (ncclCommAbort it)",
                              comm.label.c_str(), gone.c_str()));
      changed = true;
    }
  }
  std::vector<std::shared_ptr<Task>> live;
  for (auto& weak : rs.pending) {
    if (std::shared_ptr<Task> t = weak.lock(); t && !t->done) live.push_back(std::move(t));
  }
  for (auto& t : live) {
    bool open_before = false;
    for (auto& [slot, part] : t->entries) open_before = open_before || slot->state == Slot::State::kOpen;
    if (!open_before) continue;
    ShmLegReadyLocked(*t);
    for (auto& [slot, part] : t->entries) changed = changed || slot->state != Slot::State::kOpen;
  }
  return changed;
}

}  // namespace internal
}  // namespace fakenccl
