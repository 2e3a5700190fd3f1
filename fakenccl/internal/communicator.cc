// Copyright 2026 The cuhal Authors.
// Communicator lifecycle and split; see communicator.h (and engine.h for the invariants).
#include "fakenccl/internal/communicator.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fakenccl/internal/engine.h"
#include "fakenccl/internal/engine_state.h"
#include "fakenccl/internal/fakecuda_hooks.h"
#include "fakenccl/internal/shm_transport.h"

namespace fakenccl {
namespace internal {

int Mangle(ncclComm_t comm, int op) {
  if (op < static_cast<int>(ncclNumOps)) return op;
  std::uint64_t h = reinterpret_cast<std::uintptr_t>(comm);
  h ^= h >> 32;
  h *= 0x9e3779b97f4a7c13u;
  h >>= 32;
  h &= static_cast<std::uint64_t>(ncclMaxRedOp);
  int op1 = static_cast<int>(h) ^ op;
  return op1 < static_cast<int>(ncclNumOps) ? op : op1;
}

bool ValidType(int raw) { return raw >= 0 && raw < static_cast<int>(ncclNumTypes); }

// ---- Forming a communicator -------------------------------------------------------------------

void Engine::FormCommLocked(const std::vector<std::uint64_t>& handle_ids,
                            const std::string& label,
                            std::shared_ptr<fakecuda::IdleClock> clock) {
  static std::atomic<std::uint64_t> next_comm{1};
  auto comm = std::make_shared<CommShared>();
  comm->id = next_comm.fetch_add(1, std::memory_order_relaxed);
  comm->nranks = static_cast<int>(handle_ids.size());
  comm->label = Fmt("communicator #%" PRIu64 " (%d ranks, %s)", comm->id, comm->nranks,
                    label.c_str());
  comm->ranks.resize(handle_ids.size());
  comm->clock = clock ? std::move(clock) : NewClock(comm->nranks);
  for (std::size_t r = 0; r < handle_ids.size(); ++r) {
    RankState& rs = comm->ranks[r];
    rs.sends.assign(handle_ids.size(), 0);
    rs.recvs.assign(handle_ids.size(), 0);
    auto it = handles_.find(handle_ids[r]);
    if (it == handles_.end() || it->second->state != CommHandle::State::kInitializing) {
      // Aborted while the rendezvous was open: a rank that is gone from the start.
      rs.aborted = true;
      rs.destroyed = true;
      ClockLeave(comm->clock, static_cast<int>(r));
      continue;
    }
    CommHandle& h = *it->second;
    h.comm = comm;
    h.rank = static_cast<int>(r);
    h.state = CommHandle::State::kReady;
    h.init.reset();
    h.split.reset();
    rs.device = h.device;
    rs.handle_id = h.id;
  }
  ClockProgress(comm->clock);
  cv_.NotifyAll();
}

// ---- Initialization ---------------------------------------------------------------------------

void Engine::FailInitLocked(std::shared_ptr<InitRendezvous> keep, ncclResult_t error,
                            const std::string& text) {
  // `keep` holds the rendezvous: the handles' references to it are dropped below.
  InitRendezvous& rv = *keep;
  rv.done = true;
  for (std::uint64_t id : rv.members) {
    auto it = handles_.find(id);
    if (it == handles_.end() || it->second->state != CommHandle::State::kInitializing) continue;
    it->second->state = CommHandle::State::kFailed;
    it->second->init_error = error;
    it->second->init_text = text;
    it->second->init.reset();
  }
  auto it = inits_.find(rv.key);
  if (it != inits_.end() && it->second.get() == &rv) inits_.erase(it);
  ClockProgress(rv.clock);
  cv_.NotifyAll();
}

ncclResult_t Engine::InitRank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                              int device, int cc_major, bool blocking, bool wait,
                              const char* api, std::string* text) {
  if (IsShmUniqueId(id)) {  // ranks in other processes (cross_process.cc)
    return InitRankShm(out, nranks, id, rank, device, cc_major, blocking, api, text);
  }
  cuhal::MutexLock lock(mu_);
  std::string key(id.internal, sizeof(id.internal));
  std::shared_ptr<InitRendezvous>& slot = inits_[key];
  if (!slot) {
    slot = std::make_shared<InitRendezvous>();
    slot->key = key;
    slot->api = api;
    slot->nranks = nranks;
    slot->clock = NewClock(nranks);
    slot->start = StartDeadline(slot->clock.get());
    slot->by_rank.assign(static_cast<size_t>(nranks), 0);
  }
  std::shared_ptr<InitRendezvous> rv = slot;
  CommHandle* h = NewHandleLocked(api, device, cc_major, blocking);
  h->init = rv;
  h->init_rank = rank;
  rv->members.push_back(h->id);
  *out = EncodeComm(h->id);
  if (rv->nranks != nranks) {
    FailInitLocked(rv, ncclInvalidUsage,
                   Fmt("fakenccl: %s: ranks disagree on the size of the communicator of one "
                       "ncclUniqueId: rank %d passed nranks=%d, an earlier rank passed nranks=%d",
                       api, rank, nranks, rv->nranks));
  } else if (rv->by_rank[static_cast<size_t>(rank)] != 0) {
    FailInitLocked(rv, ncclInvalidUsage,
                   Fmt("fakenccl: %s: rank %d of %d joined the same ncclUniqueId twice", api,
                       rank, nranks));
  } else {
    rv->by_rank[static_cast<size_t>(rank)] = h->id;
    ClockBind(rv->clock, rank);
    ClockProgress(rv->clock);
    if (++rv->count == nranks) {
      rv->done = true;
      inits_.erase(rv->key);
      FormCommLocked(rv->by_rank, Fmt("made by %s", api), rv->clock);
    }
  }
  if (!wait) return ncclSuccess;
  std::uint64_t handle_id = h->id;
  lock.unlock();
  ncclResult_t result = WaitInitialized(handle_id, text);
  if (result != ncclSuccess) *out = nullptr;
  return result;
}

ncclResult_t Engine::WaitInitialized(std::uint64_t id, std::string* text) {
  cuhal::MutexLock lock(mu_);
  for (;;) {
    auto it = handles_.find(id);
    if (it == handles_.end()) {
      *text = "fakenccl: the communicator was aborted while it was being initialized";
      return ncclInvalidArgument;
    }
    CommHandle& h = *it->second;
    if (h.state == CommHandle::State::kReady) return ncclSuccess;
    if (h.state == CommHandle::State::kFailed) {
      *text = h.init_text;
      ncclResult_t error = h.init_error;
      // A blocking call hands back no communicator. UNMEASURED: what NCCL leaves in *newcomm
      // when its bootstrap fails.
      if (h.blocking) handles_.erase(it);
      return error;
    }
    if (h.init && Expired(h.init->clock.get(), h.init->start)) {
      std::shared_ptr<InitRendezvous> keep = h.init;
      InitRendezvous& rv = *keep;
      std::vector<int> missing;
      for (std::size_t r = 0; r < rv.by_rank.size(); ++r) {
        if (rv.by_rank[r] == 0) missing.push_back(static_cast<int>(r));
      }
      // UNMEASURED (a choice): NCCL's bootstrap would hang, or fail after its socket timeouts with
      // ncclSystemError or ncclRemoteError.
      FailInitLocked(keep, ncclSystemError,
                     Fmt("fakenccl: %s %s waiting for rank(s) %s of %d to join with the same "
                         "ncclUniqueId (NCCL's bootstrap would time out or hang)",
                         rv.api, ExpiryText(rv.clock.get(), rv.start).c_str(),
                         RankList(missing).c_str(), rv.nranks));
      continue;
    }
    if (h.split) {
      std::shared_ptr<SplitRendezvous> rv = h.split;
      std::shared_ptr<CommShared> parent = rv->parent.lock();
      if (parent && Expired(parent->clock.get(), rv->start)) {
        SplitTimeoutLocked(*parent, *rv);
        continue;
      }
    }
    WaitSliceLocked();
  }
}

ncclResult_t Engine::InitAll(ncclComm_t* comms, std::span<const int> devices,
                             std::span<const int> cc_major, std::string* /*text*/) {
  cuhal::MutexLock lock(mu_);
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    CommHandle* h = NewHandleLocked("ncclCommInitAll", devices[i], cc_major[i], true);
    ids.push_back(h->id);
    comms[i] = EncodeComm(h->id);
  }
  if (!ids.empty()) {
    FormCommLocked(ids, "made by ncclCommInitAll");
    // One thread drives every rank.
    const std::shared_ptr<fakecuda::IdleClock>& clock = handles_.at(ids[0])->comm->clock;
    for (std::size_t r = 0; r < ids.size(); ++r) ClockBind(clock, static_cast<int>(r));
  }
  return ncclSuccess;
}

// ---- Split ------------------------------------------------------------------------------------

void Engine::FormSplitLocked(CommShared& parent, SplitRendezvous& rv) {
  std::map<int, std::vector<std::pair<int, int>>> by_color;  // color -> (key, parent rank)
  for (std::size_t r = 0; r < rv.posts.size(); ++r) {
    const SplitRendezvous::Post& p = rv.posts[r];
    if (p.child != 0) by_color[p.color].emplace_back(p.key, static_cast<int>(r));
  }
  for (auto& [color, members] : by_color) {
    std::sort(members.begin(), members.end());
    std::vector<std::uint64_t> ids;
    for (const auto& [key, r] : members) ids.push_back(rv.posts[static_cast<size_t>(r)].child);
    FormCommLocked(ids, Fmt("color %d of ncclCommSplit #%" PRIu64 " of communicator #%" PRIu64,
                            color, rv.seq, parent.id));
    // Each child rank is driven by the thread that drives its parent rank.
    auto it = handles_.find(ids[0]);
    if (it != handles_.end() && it->second->comm && it->second->comm->clock && parent.clock) {
      for (std::size_t i = 0; i < members.size(); ++i) {
        it->second->comm->clock->BindLike(static_cast<int>(i), *parent.clock, members[i].second);
      }
    }
  }
  rv.done = true;
  parent.splits.erase(rv.seq);
  ClockProgress(parent.clock);
  cv_.NotifyAll();
}

void Engine::FailSplitLocked(CommShared& parent, SplitRendezvous& rv, ncclResult_t error,
                             const std::string& text) {
  rv.done = true;
  rv.error = error;
  rv.text = text;
  for (const SplitRendezvous::Post& p : rv.posts) {
    auto it = handles_.find(p.child);
    if (p.child == 0 || it == handles_.end()) continue;
    if (it->second->state != CommHandle::State::kInitializing) continue;
    it->second->state = CommHandle::State::kFailed;
    it->second->init_error = error;
    it->second->init_text = text;
    it->second->split.reset();
  }
  parent.splits.erase(rv.seq);
  ClockProgress(parent.clock);
  cv_.NotifyAll();
}

ncclResult_t Engine::SplitTimeoutLocked(CommShared& parent, SplitRendezvous& rv) {
  std::vector<int> missing;
  bool gone = false;
  for (std::size_t r = 0; r < rv.posts.size(); ++r) {
    if (rv.posts[r].posted) continue;
    missing.push_back(static_cast<int>(r));
    gone = gone || parent.ranks[r].dead || parent.ranks[r].aborted;
  }
  ncclResult_t error = gone ? ncclRemoteError : ncclInvalidUsage;
  FailSplitLocked(parent, rv, error,
                  Fmt("fakenccl: ncclCommSplit #%" PRIu64 " of %s %s: rank(s) %s never called it%s",
                      rv.seq, parent.label.c_str(),
                      ExpiryText(parent.clock.get(), rv.start).c_str(), RankList(missing).c_str(),
                      gone ? " (one of them died or aborted)" : ""));
  return error;
}

ncclResult_t Engine::Split(ncclComm_t parent_comm, int color, int key, int blocking,
                           bool in_group, ncclComm_t* newcomm, bool* child_blocking,
                           std::string* text) {
  return SplitOrShrink(parent_comm, color, key, {}, blocking, in_group, newcomm, child_blocking,
                       text, "ncclCommSplit");
}

ncclResult_t Engine::SplitOrShrink(ncclComm_t parent_comm, int color, int key,
                                   std::span<const int> exclude, int blocking, bool in_group,
                                   ncclComm_t* newcomm, bool* child_blocking, std::string* text,
                                   const char* api) {
  cuhal::MutexLock lock(mu_);
  Lookup p = FindLocked(parent_comm, api, text);
  if (p.error != ncclSuccess) return p.error;
  if (newcomm == nullptr) {
    *text = Fmt("%s : newcomm argument is NULL", api);
    return ncclInvalidArgument;
  }
  const bool shrink = std::strcmp(api, "ncclCommShrink") == 0;
  if (shrink) {
    // NCCL's ncclCommInitChildComm for a shrink: the list, its count, the caller not in it (the
    // last two without a WARN), before the communicator's readiness.
    if (exclude.data() == nullptr) {
      *text = "ncclCommShrink : excludeRanksList argument is NULL";
      return ncclInvalidArgument;
    }
    if (exclude.empty()) {
      text->clear();
      return ncclInvalidArgument;
    }
    if (std::find(exclude.begin(), exclude.end(), p.handle->rank) != exclude.end()) {
      text->clear();
      return ncclInvalidArgument;
    }
  }
  if (ncclResult_t r = EnsureReadyLocked(*p.handle, text); r != ncclSuccess) return r;
  *newcomm = nullptr;
  if (p.handle->comm->shm) {
    *text = "fakenccl: ncclCommSplit of a communicator across processes is not modelled";
    return ncclInvalidUsage;
  }
  CommHandle& ph = *p.handle;
  if (shrink) key = ph.rank;  // NCCL: color 0, key = the caller's rank
  std::shared_ptr<CommShared> parent = ph.comm;
  RankState& rs = parent->ranks[static_cast<size_t>(ph.rank)];
  if (rs.dead) return ncclSuccess;  // a dead rank's calls have no effect
  ClockBind(parent->clock, ph.rank);
  ClockProgress(parent->clock);
  std::uint64_t seq = rs.next_split++;
  std::shared_ptr<SplitRendezvous>& slot = parent->splits[seq];
  if (!slot) {
    slot = std::make_shared<SplitRendezvous>();
    slot->seq = seq;
    slot->start = StartDeadline(parent->clock.get());
    slot->parent = parent;
    slot->posts.resize(static_cast<size_t>(parent->nranks));
  }
  std::shared_ptr<SplitRendezvous> rv = slot;
  // NCCL: a NULL config copies the parent's configuration.
  const bool resolved_blocking = blocking < 0 ? ph.blocking : blocking != 0;
  *child_blocking = resolved_blocking;
  const bool wait = resolved_blocking && !in_group;
  std::uint64_t child_id = 0;
  if (color != NCCL_SPLIT_NOCOLOR) {
    CommHandle* child = NewHandleLocked("ncclCommSplit", ph.device, ph.cc_major, resolved_blocking);
    child->split = rv;
    child->init_rank = ph.rank;  // polls count on the parent's clock, as this rank
    child_id = child->id;
    *newcomm = EncodeComm(child_id);
  }
  // A shrink: the excluded ranks do not call; they take part as NCCL_SPLIT_NOCOLOR.
  for (int x : exclude) {
    if (x < 0 || x >= parent->nranks) continue;  // NCCL ignores ranks that are not in it
    SplitRendezvous::Post& gone = rv->posts[static_cast<size_t>(x)];
    if (gone.posted) continue;
    gone.posted = true;
    gone.color = NCCL_SPLIT_NOCOLOR;
    ++rv->count;
  }
  SplitRendezvous::Post& post = rv->posts[static_cast<size_t>(ph.rank)];
  post.posted = true;
  post.color = color;
  post.key = key;
  post.child = child_id;
  if (++rv->count == parent->nranks) FormSplitLocked(*parent, *rv);
  if (!wait) return ncclSuccess;
  while (!rv->done) {
    if (Expired(parent->clock.get(), rv->start)) {
      SplitTimeoutLocked(*parent, *rv);
      break;
    }
    WaitSliceLocked();
  }
  if (rv->error != ncclSuccess) {
    if (child_id != 0) handles_.erase(child_id);
    *newcomm = nullptr;
    *text = rv->text;
    return rv->error;
  }
  return ncclSuccess;
}

// ---- Finalize, destroy, abort, errors ----------------------------------------------------------

ncclResult_t Engine::Finalize(ncclComm_t comm, std::string* text) {
  if (comm == nullptr) return ncclSuccess;  // NCCL: a NULL comm finalizes nothing
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "CommFinalize", text);
  if (l.error != ncclSuccess) return l.error;
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  if (l.handle->finalized) {
    *text = "fakenccl: ncclCommFinalize: the communicator was already finalized";
    return ncclInvalidArgument;
  }
  l.handle->finalized = true;
  return ncclSuccess;
}

ncclResult_t Engine::Destroy(ncclComm_t comm, std::string* text) {
  if (comm == nullptr) return ncclSuccess;
  cuhal::MutexLock lock(mu_);
  auto it = handles_.find(DecodeComm(comm));
  if (it == handles_.end()) {
    *text = Fmt("comm %p has already been destroyed", static_cast<void*>(comm));
    return ncclInvalidArgument;
  }
  CommHandle& h = *it->second;
  h.destroy_requested = true;
  // NCCL's ncclCommDestroy returns the communicator's error without destroying it: a broken
  // communicator is for ncclCommAbort. (From NCCL's source; UNMEASURED on a GPU, where a one-rank
  // communicator cannot be broken on purpose.)
  if (ncclResult_t r = EnsureReadyLocked(h, text); r != ncclSuccess) return r;
  RankState& rs = h.comm->ranks[static_cast<size_t>(h.rank)];
  rs.destroyed = true;
  rs.handle_id = 0;
  if (h.comm->shm) h.comm->shm->MarkGone(/*aborted=*/false, /*died=*/false);
  ClockLeave(h.comm->clock, h.rank);  // it can make no call of the group any more
  handles_.erase(it);
  cv_.NotifyAll();
  return ncclSuccess;
}

void Engine::AbortRankLocked(CommShared& comm, int rank, const char* why) {
  RankState& rs = comm.ranks[static_cast<size_t>(rank)];
  rs.aborted = true;
  rs.destroyed = true;
  rs.handle_id = 0;
  if (comm.shm) comm.shm->MarkGone(/*aborted=*/true, /*died=*/false);
  ClockLeave(comm.clock, rank);
  std::string text =
      Fmt("fakenccl: rank %d of %s %s; operations that needed it fail", rank, comm.label.c_str(),
          why);
  auto involves = [rank](const Slot& s) {
    return s.p2p ? (s.src == rank || s.dst == rank) : true;
  };
  std::vector<std::shared_ptr<Slot>> open;
  for (auto& [seq, s] : comm.colls) {
    if (s->state == Slot::State::kOpen && involves(*s)) open.push_back(s);
  }
  for (auto& [key, s] : comm.p2ps) {
    if (s->state == Slot::State::kOpen && involves(*s)) open.push_back(s);
  }
  for (auto& s : open) FailSlotLocked(comm, *s, ncclRemoteError, text);
  std::vector<std::shared_ptr<SplitRendezvous>> splits;
  for (auto& [seq, rv] : comm.splits) {
    if (!rv->posts[static_cast<size_t>(rank)].posted) splits.push_back(rv);
  }
  for (auto& rv : splits) FailSplitLocked(comm, *rv, ncclRemoteError, text);
  cv_.NotifyAll();
}

ncclResult_t Engine::Abort(ncclComm_t comm, std::string* text) {
  if (comm == nullptr) return ncclSuccess;
  {
    cuhal::MutexLock lock(mu_);
    Lookup l = FindLocked(comm, "CommAbort", text);
    if (l.error != ncclSuccess) return l.error;
    CommHandle& h = *l.handle;
    if (h.state == CommHandle::State::kInitializing && h.init) {
      ClockLeave(h.init->clock, h.init_rank);
      FailInitLocked(h.init, ncclRemoteError,
                     "fakenccl: a rank aborted its communicator while it was being initialized");
    } else if (h.state == CommHandle::State::kReady) {
      AbortRankLocked(*h.comm, h.rank, "aborted its communicator (ncclCommAbort)");
    }
    const std::uint64_t id = h.id;
    handles_.erase(id);
  }
  NotifyFakecuda();  // tasks waiting on the aborted rank can now run (as no-ops)
  return ncclSuccess;
}

ncclResult_t Engine::GetAsyncError(ncclComm_t comm, ncclResult_t* async_error,
                                   std::string* text) {
  bool failed_any = false;
  bool polled = false;
  {
    cuhal::MutexLock lock(mu_);
    Lookup l = FindLocked(comm, "ncclGetAsyncError", text);
    if (l.error != ncclSuccess) return l.error;
    if (async_error == nullptr) {
      *text = "ncclGetAsyncError : asyncError argument is NULL";
      return ncclInvalidArgument;
    }
    std::uint64_t id = l.handle->id;
    if (l.handle->state == CommHandle::State::kInitializing) {
      CommHandle& h = *l.handle;
      if (h.init && Expired(h.init->clock.get(), h.init->start)) {
        lock.unlock();
        (void)WaitInitialized(id, text);  // fails the rendezvous (the handle stays: non-blocking)
        lock.lock();
      } else if (h.init) {
        ClockPoll(h.init->clock, h.init_rank);  // an idle poll (fakecuda/virtual_clock.h)
        polled = true;
      } else if (h.split) {
        std::shared_ptr<SplitRendezvous> rv = h.split;
        std::shared_ptr<CommShared> parent = rv->parent.lock();
        if (parent && Expired(parent->clock.get(), rv->start)) {
          SplitTimeoutLocked(*parent, *rv);
        } else if (parent) {
          ClockPoll(parent->clock, h.init_rank);
          polled = true;
        }
      }
      auto it = handles_.find(id);
      if (it == handles_.end()) {
        *text = "fakenccl: the communicator went away while being polled";
        return ncclInvalidArgument;
      }
      l.handle = it->second.get();
    }
    CommHandle& h = *l.handle;
    switch (h.state) {
      case CommHandle::State::kInitializing:
        *async_error = ncclInProgress;
        return ncclSuccess;
      case CommHandle::State::kFailed:
        *async_error = h.init_error;
        *text = h.init_text;
        return ncclSuccess;
      case CommHandle::State::kReady:
        break;
    }
    std::shared_ptr<CommShared> c = h.comm;
    bool waiting = false;
    if (c->shm) {
      failed_any = ShmPollLocked(*c, h.rank);
      polled = true;
    } else {
      failed_any = CheckTimeoutsLocked(*c, h.rank, &waiting);
    }
    if (waiting && !failed_any) {
      ClockPoll(c->clock, h.rank);  // an idle poll (fakecuda/virtual_clock.h)
      polled = true;
    }
    RankState& rs = c->ranks[static_cast<size_t>(h.rank)];
    *async_error = rs.async_error;
    if (rs.async_error != ncclSuccess) *text = rs.async_text;
  }
  if (failed_any) NotifyFakecuda();
  // A polling loop must not starve the threads it waits for (nor spin a core flat out).
  if (polled) std::this_thread::yield();
  return ncclSuccess;
}

ncclResult_t Engine::Query(ncclComm_t comm, int what, int* out, const char* op_name,
                           std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, op_name, text);
  if (l.error != ncclSuccess) return l.error;
  if (out == nullptr) {
    static const char* const kNames[] = {"count", "rank", "devid"};
    *text = Fmt("%s : %s argument is NULL", op_name, kNames[what]);
    return ncclInvalidArgument;
  }
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  switch (what) {
    case 0: *out = l.handle->comm->nranks; break;
    case 1: *out = l.handle->rank; break;
    default: *out = l.handle->device; break;
  }
  return ncclSuccess;
}

// ---- Reduction operators -----------------------------------------------------------------------

ncclResult_t Engine::CreatePreMulSum(ncclRedOp_t* op, const void* scalar, int raw_type,
                                     int raw_residence, ncclComm_t comm, std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclRedOpCreatePreMulSum", text);
  if (l.error != ncclSuccess) return l.error;
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  // UNMEASURED: NCCL checks none of these three and would crash or copy garbage; the fake refuses.
  if (op == nullptr) {
    *text = "fakenccl: ncclRedOpCreatePreMulSum: op is NULL (NCCL would crash writing it)";
    return ncclInvalidArgument;
  }
  if (!ValidType(raw_type)) {
    *text = Fmt("fakenccl: ncclRedOpCreatePreMulSum: invalid type %d", raw_type);
    return ncclInvalidArgument;
  }
  const auto type = static_cast<ncclDataType_t>(raw_type);
  if (scalar == nullptr) {
    *text = "fakenccl: ncclRedOpCreatePreMulSum: scalar is NULL (NCCL would crash reading it)";
    return ncclInvalidArgument;
  }
  CommHandle& h = *l.handle;
  std::size_t ix = 0;
  while (ix < h.user_ops.size() && h.user_ops[ix].live) ++ix;
  if (ix == h.user_ops.size()) h.user_ops.emplace_back();
  UserOp& u = h.user_ops[ix];
  u = UserOp{};
  u.live = true;
  u.type = type;
  // NCCL: anything but ncclScalarHostImmediate is a device pointer read when the kernel runs.
  u.on_device = raw_residence != static_cast<int>(ncclScalarHostImmediate);
  if (u.on_device) {
    u.device_ptr = reinterpret_cast<CUdeviceptr>(scalar);
  } else {
    std::memcpy(u.scalar.data(), scalar, TypeSize(type));
  }
  *op = static_cast<ncclRedOp_t>(
      Mangle(comm, static_cast<int>(ncclNumOps) + static_cast<int>(ix)));
  return ncclSuccess;
}

ncclResult_t Engine::DestroyRedOp(int op, ncclComm_t comm, std::string* text) {
  if (0 <= op && op < static_cast<int>(ncclNumOps)) {
    *text = "ncclRedOpDestroy : operator is a NCCL builtin.";
    return ncclInvalidArgument;
  }
  if (op < 0) {
    *text = "ncclRedOpDestroy :  operator is garbage.";
    return ncclInvalidArgument;
  }
  if (comm == nullptr) {
    *text = "ncclRedOpDestroy : invalid communicator passed.";
    return ncclInvalidArgument;
  }
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclRedOpDestroy", text);
  if (l.error != ncclSuccess) return l.error;
  int ix = Mangle(comm, op) - static_cast<int>(ncclNumOps);
  std::vector<UserOp>& ops = l.handle->user_ops;
  if (ix < 0 || static_cast<std::size_t>(ix) >= ops.size() ||
      !ops[static_cast<size_t>(ix)].live) {
    *text = "ncclRedOpDestroy : operator unknown to this communicator.";
    return ncclInvalidArgument;
  }
  ops[static_cast<size_t>(ix)].live = false;
  return ncclSuccess;
}

}  // namespace internal
}  // namespace fakenccl
