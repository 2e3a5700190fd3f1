// Copyright 2026 The cuhal Authors.
// The shared-memory transport of fakenccl's communicators across processes (issue 18, item 2):
// ranks in different processes of one machine (or threads, it does not matter) form one fake
// communicator through a POSIX shared-memory segment named by the ncclUniqueId.
//
// The segment (one per communicator; "/fakenccl.<pid>.<hex>", pid: the process that made the id)
// holds, all fixed-size and computed from nranks:
//   - a header: the init rendezvous (nranks, ranks joined, a failure text), a process-shared
//     robust mutex (guards every write below that is not one rank's own counter), the `epoch`,
//     a futex word bumped (and woken) at every state change a peer may wait for, and the
//     `data_epoch`, bumped at those and at every chunk of data moved (only ranks moving data
//     wait on it, so a chunk wakes no watcher);
//   - per rank: pid and process start time (liveness), device, and its state (live, destroyed,
//     aborted, died; a rank's death is written by a survivor's watcher);
//   - a ring of kCollSlots collective descriptors (the k-th collective of every rank meets in
//     slot k % kCollSlots) and, per ordered pair (src, dst), a ring of kP2pSlots point-to-point
//     descriptors (the k-th send from src to dst meets the k-th receive), each with its failure
//     (error, culprit, text) and per-rank `done` marks;
//   - data: kDataSlots staging areas of kStagingBytes per rank for collectives (collective k
//     uses area k % kDataSlots, once every rank finished collective k - kDataSlots), each in
//     kChunkHalves halves of kChunkBytes (chunk g of an area, counted over its collectives, uses
//     half g % kChunkHalves), and one mailbox per ordered pair for point-to-point data;
//     per-rank monotonic chunk counters (deposited, consumed; sent, received) order the chunks.
//
// Invariants:
//  1. The segment is unlinked as soon as every rank has mapped it (the last rank to join
//     unlinks), and by every rank whose initialization fails; a segment whose ranks all died
//     before that is removed by the next initialization on the machine (StaleSegmentSweep: every
//     registered pid dead, or no pid registered and the id's maker dead). Nothing stays in
//     /dev/shm after a normal or a killed run (once the next one starts, for a run killed during
//     initialization).
//  2. A descriptor is written once, by its rank, under the segment mutex, before the rank's
//     `posted` mark (release); matching compares it with the marks already posted (the same
//     checks and texts as the in-process engine: SameCollective, DescribeCall). A slot that
//     fails keeps its first failure; readers check `failed` (acquire) before its text.
//  3. Data moves in chunks of at most kChunkBytes per rank: a rank deposits chunk g into its
//     half of its own staging area once every rank consumed chunk g - kChunkHalves (the last
//     one in that half), so it may deposit the next chunk while its peers still read this one;
//     it computes its own outputs of chunk g from the staging areas only once every rank
//     deposited chunk g, with fakenccl's reductions (datatypes.h: the same arithmetic, in rank
//     order), then marks chunk g consumed. Each rank writes only its own device memory; a
//     rank's inputs are read before any of its outputs that overlap them are written (a
//     snapshot when the overlap is not the in-place pattern that chunking keeps safe: chunk g's
//     outputs never overlap the inputs of a later chunk, read at a later deposit). The
//     in-place collective of a one-rank communicator that NCCL's one-rank path skips moves
//     nothing (InPlaceNoOpOnOneRank, as in-process).
//  4. Every wait is a futex wait on `epoch` of at most 10 ms (on `data_epoch`, of at most 1 ms
//     after up to 100 us of yields, while moving data), after which the waiter checks its
//     deadline (the wall-clock backstop) and the liveness of the ranks it waits for: a dead
//     process (gone from /proc, a zombie, or a reused pid) fails the wait at once with
//     ncclRemoteError naming the rank and its pid. Nothing waits forever.
//  5. The segment mutex is never held while calling fakecuda or waiting, and is never taken
//     with a lock other than the engine's mu_ held (lock order: driver lock -> engine mu_ ->
//     segment mutex). `ready` predicates read the segment without it (atomics only).
#ifndef CUHAL_FAKENCCL_INTERNAL_SHM_TRANSPORT_H_
#define CUHAL_FAKENCCL_INTERNAL_SHM_TRANSPORT_H_

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fakenccl/internal/engine.h"

namespace fakenccl {
namespace internal {

// Whether `id` names a shared-memory segment (made by MakeShmUniqueId).
bool IsShmUniqueId(const ncclUniqueId& id);
// Fills *id with the cross-process marker and a fresh segment name built from `random` (its
// 64 bits and this process's pid).
void MakeShmUniqueId(std::uint64_t random, ncclUniqueId* id);
// The segment name in `id` ("" when it is not a cross-process id).
std::string ShmSegmentName(const ncclUniqueId& id);
// Unlinks every fakenccl segment of /dev/shm whose ranks are all dead (invariant 1). Returns how
// many it removed.
int StaleSegmentSweep();

// A slot's failure as the transport reports it.
struct ShmFailure {
  ncclResult_t error = ncclSuccess;
  std::string text;
  int culprit = -1;  // a rank whose own error is culprit_error (its buffers), or -1
  ncclResult_t culprit_error = ncclSuccess;
};

// Which descriptor a call posted.
struct ShmTicket {
  bool p2p = false;
  std::uint64_t seq = 0;  // collective sequence number, or k of the k-th send from src to dst
  int src = -1;
  int dst = -1;
  bool send = false;
};

// One rank's view of a communicator across processes: the mapped segment and a watcher thread.
//
// Ownership: shared (shared_ptr) by the rank's CommShared and the stream work that uses it; the
// last owner stops the watcher and unmaps. Thread-safety: every method may be called from any
// thread; Post* require the caller to serialize them per rank (the engine calls them under its
// mu_), Execute is called by one thread at a time per Task. Ordering: see the invariants above;
// the watcher (one per ShmComm) wakes every 10 ms or at each epoch change, marks dead peers in the
// segment and wakes fakecuda's waiters (so `ready` predicates are re-evaluated).
class ShmComm {
 public:
  // Joins rank `rank` of `nranks` on the segment of `id`: creates it or maps it, checks the
  // ranks agree (the in-process engine's texts), registers this process, and blocks until every
  // rank has joined (then the last one unlinks the segment), a rank's join failed, a joined rank
  // died, or `timeout` passed. Returns ncclInvalidUsage (disagreement), ncclRemoteError (a dead
  // rank), ncclSystemError (timeout, or the segment cannot be made) with *text.
  static ncclResult_t Join(const ncclUniqueId& id, int nranks, int rank, int device,
                           const char* api, std::chrono::milliseconds timeout,
                           std::shared_ptr<ShmComm>* out, std::string* text);
  ~ShmComm();
  ShmComm(const ShmComm&) = delete;             // owns a mapping and a thread
  ShmComm& operator=(const ShmComm&) = delete;  // ditto

  int nranks() const { return nranks_; }
  int rank() const { return rank_; }
  // The communicator's name in messages; set once, right after Join, before any other use.
  void SetLabel(std::string label) { label_ = std::move(label); }

  // Posts this rank's collective #seq (invariant 2). ncclInvalidUsage with the in-process
  // engine's mismatch text when it disagrees with an earlier rank's (the slot fails for all);
  // ncclInvalidUsage when the ring is full (a rank kCollSlots collectives ahead of a peer).
  ncclResult_t PostCollective(std::uint64_t seq, const CallDesc& d, const std::string& label,
                              ShmTicket* ticket, std::string* text);
  // Posts this rank's k-th send to (or receive from) `peer`; a size mismatch as in-process.
  ncclResult_t PostP2p(int peer, std::uint64_t k, const CallDesc& d, const std::string& label,
                       ShmTicket* ticket, std::string* text);

  // Whether every participant of `t` posted (true), or `t` failed (true, *failure set), or it
  // waits (false). A participant that has not posted and is gone fails it (died or aborted:
  // ncclRemoteError; destroyed: ncclInvalidUsage). Lock-free (called in `ready` predicates).
  bool Settled(const ShmTicket& t, ShmFailure* failure);
  // The participants of `t` that have not posted it yet.
  std::vector<int> Unposted(const ShmTicket& t);
  // Fails `t` for every rank (the first failure wins; *failure gets the one that stands).
  void Fail(const ShmTicket& t, ShmFailure* failure);

  // One call of this rank to execute: its ticket and its own descriptor.
  struct Entry {
    ShmTicket ticket;
    CallDesc desc;
  };
  // Moves the data of `entries` (every one Settled without failure) for this rank, all of them
  // progressing together (a group's sends and receives in any order), until each is done or
  // failed (a failure of a peer, a dead peer, a bad pointer of this rank, or `deadline`).
  // results[i] is entry i's failure (error ncclSuccess when done). Call without the engine lock.
  void Execute(std::span<const Entry> entries, std::chrono::steady_clock::time_point deadline,
               std::chrono::milliseconds timeout, std::vector<ShmFailure>* results);

  // This rank leaves: destroyed (false) or aborted / died (true); peers waiting for it fail.
  void MarkGone(bool aborted, bool died);
  // "" while every peer lives; else why not ("rank 1 (pid 4242) died").
  std::string PeerGone();

  struct Layout;

 private:
  ShmComm(int nranks, int rank, void* base, std::size_t bytes, std::string name);
  void WatchLoop();
  bool CheckPeers();  // marks dead peers; true when one was newly marked
  void Notify();      // a state change: wakes every waiter (and the watchers)
  void NotifyData();  // data moved: wakes the waiters of data_epoch only (Execute's)
  void WaitEpoch(std::uint32_t seen, std::chrono::milliseconds slice);
  void WaitData(std::uint32_t seen, std::chrono::milliseconds slice);
  std::string DescribeGone(int r);

  const int nranks_;
  const int rank_;
  void* const base_;
  const std::size_t bytes_;
  const std::string name_;
  std::unique_ptr<Layout> layout_;
  std::string label_;
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

}  // namespace internal
}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_INTERNAL_SHM_TRANSPORT_H_
