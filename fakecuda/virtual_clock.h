// Copyright 2026 The cuhal Authors.
// The fakes' virtual clock for timeouts: it counts the idle time of a waiting group, never wall
// time and never wake-ups.
//
// A fake that waits for other threads (fakenccl's rendezvous: a collective waiting for its peers)
// must time out when the peers can never come, and must never time out while a peer is merely
// busy. Wall time cannot tell the two apart, and neither can counting wake-ups. What can: whether
// every thread that could still make the wait succeed is itself blocked inside the fake. Then
// nothing can change any more, and virtual time jumps past the pending deadlines, so a missing
// peer is reported at once; while any of them runs (in user code or in the fake), no virtual time
// passes, however long it takes.
//
// Pieces:
//   - Every thread has a presence (created on first use): whether it is blocked inside the fake
//     now (ScopedBlocked, nestable), how many times it entered a blocked state, and whether the
//     thread has exited.
//   - An IdleClock is the virtual clock of one waiting group (fakenccl: one per communicator, and
//     one per initialization rendezvous). It has a fixed number of participants (ranks), each
//     bound to the thread that drives it (Bind), or gone (Leave: destroyed, aborted, died).
//   - ScopedBusy marks a driver-owned thread running user work (a host function, a kernel,
//     stream work) on behalf of possibly blocked threads: while any is active, no clock advances.
//
// Invariants (what the fakes rely on):
//  1. A clock's Now() never changes while any live participant of its group is running, or while
//     a ScopedBusy is active anywhere in the process. It advances only when every participant is
//     idle (blocked inside the fake, polling idly, gone, or its thread exited at least 1 s ago:
//     a program may drive the rank from a new thread that is on its way; never while one
//     is unbound: see 4; polling idly is a NotePoll of its participant since its last Bind, or a
//     NoteThreadPoll of its thread less than 10 ms ago) and that has been confirmed by a
//     quiescent round (2).
//  2. A quiescent round starts when an observation finds every participant idle. It completes at
//     a later observation, at least kMinRound (20 ms) later, when every participant is still
//     idle, nothing reported progress in between (NoteProgress on the clock, NoteDriverProgress
//     or the end of a ScopedBusy), and every live participant has given fresh evidence: it
//     entered a new blocked state or polled again since the round started (so it re-checked the
//     world after the round began), or it has stayed inside one blocked state for kSettle
//     (50 ms; a long wait of the user's own, marked with ScopedBlocked). Any observation that
//     finds a participant running abandons the round. A completed round advances Now() by the
//     clock's jump (the caller passes its timeout + 1: every pending deadline of the group
//     expires, they all have the same length).
//  3. Observations happen on the observing threads, never on a thread of the clock's own: when a
//     participant's thread enters a blocked state (ScopedBlocked's constructor), at each
//     NotePoll or NoteThreadPoll, and when a participant's thread exits. A wait inside the fake
//     must therefore re-enter its blocked state at least every few milliseconds (a sliced wait:
//     fakecuda's scheduler waits 10 ms at a time, fakenccl's waits likewise), or no observation
//     completes a round.
//  4. An unbound participant never counts as idle: the clock cannot know which thread it will
//     be, nor whether that thread is on its way (fakenccl binds every rank of a communicator when
//     it forms; an initialization rendezvous binds each rank as it joins, so a rank missing at
//     initialization is reported by fakenccl's wall-clock backstop only).
//  5. Locks: each clock has one mutex, each presence one; a presence's mutex may be held while
//     taking a clock's, never the reverse, and neither is held while calling anything outside
//     this file. Everything may be called with the fake driver's lock or fakenccl's engine lock
//     held. ScopedBlocked/ScopedBusy cost a thread-local lookup and two atomic operations when
//     the thread takes part in no group (fakecuda alone), so they may wrap every wait.
//
// Known limit: a thread woken by fakecuda's scheduler (an op it waited for completed) still looks
// blocked until it runs again. The rounds' fresh-evidence rule makes a premature jump need that
// thread to stay unscheduled for a whole round; fakecuda's scheduler closes the gap entirely by
// calling NoteDriverProgress() whenever an op completes or is enqueued.
//
// What a scheduler must call (fakecuda's stream scheduler, and any future fake that waits):
//   - ScopedBlocked around every blocking wait of a thread (a stream, context or event
//     synchronization waiting for work another thread runs), re-entered at least every 10 ms;
//   - ScopedBusy around user work it runs on a thread of its own (host functions, registered
//     kernels, StreamWork bodies), so that threads blocked on that work do not look idle;
//   - NoteDriverProgress() after an op completes (optional today: closes the known limit).
#ifndef CUHAL_FAKECUDA_VIRTUAL_CLOCK_H_
#define CUHAL_FAKECUDA_VIRTUAL_CLOCK_H_

#include <cstdint>
#include <memory>

namespace fakecuda {

// The calling thread enters / leaves a blocked state inside the fake (nestable; balanced).
// Lock-free when the thread takes part in no group. Prefer ScopedBlocked.
void EnterBlocked() noexcept;
void LeaveBlocked() noexcept;
// A thread runs user work on behalf of others (see the top of this file). Prefer ScopedBusy.
void EnterBusy() noexcept;
void LeaveBusy() noexcept;
// Something changed that may let a blocked thread continue (process-wide; abandons every round).
void NoteDriverProgress() noexcept;
// The calling thread polled the fake and found the work it polls still pending (fakecuda's
// cuStreamQuery and cuEventQuery answering CUDA_ERROR_NOT_READY): for every clock the thread
// takes part in, it counts as idle for the next kPollFresh (10 ms), as if blocked, and the poll
// is fresh evidence (invariant 2); observes those clocks. A loop that polls only the stream
// (never blocking, never asking fakenccl) is thus seen idle while it polls back to back, and no
// longer once it does anything else for longer than that: a poller that also computes between
// polls for more than 10 ms ends every round it is seen in.
void NoteThreadPoll() noexcept;

// RAII forms. Also for user code: a thread that blocks in its own synchronization (a mutex, a
// condition variable, a join) while its peers wait in the fake may wrap that wait in a
// ScopedBlocked so that the fakes see it idle (otherwise only the wall-clock backstop ends them).
class ScopedBlocked {
 public:
  ScopedBlocked() noexcept { EnterBlocked(); }
  ~ScopedBlocked() { LeaveBlocked(); }
  ScopedBlocked(const ScopedBlocked&) = delete;             // one enter, one leave
  ScopedBlocked& operator=(const ScopedBlocked&) = delete;  // ditto
};

class ScopedBusy {
 public:
  ScopedBusy() noexcept { EnterBusy(); }
  ~ScopedBusy() { LeaveBusy(); }
  ScopedBusy(const ScopedBusy&) = delete;             // one enter, one leave
  ScopedBusy& operator=(const ScopedBusy&) = delete;  // ditto
};

// The virtual clock of one waiting group. Made by NewIdleClock; shared (shared_ptr) by whoever
// waits on it. Thread-safety: every method may be called from any thread, with any lock of the
// fakes held (invariant 5). Methods are virtual so that the drop-in libnccl.so.2 runs fakecuda's
// implementation (one set of thread presences per process) through the table it looks up.
class IdleClock {
 public:
  virtual ~IdleClock() = default;
  // Virtual time in ticks; starts at 0; monotonic; lock-free.
  virtual std::uint64_t Now() const = 0;
  // Participant `index` is driven by the calling thread from now on (and is not polling).
  virtual void Bind(int index) = 0;
  // Participant `index` is driven by the thread that drives `other`'s participant `other_index`
  // (nothing happens when that one is unbound). `other` must come from NewIdleClock too.
  virtual void BindLike(int index, IdleClock& other, int other_index) = 0;
  // Participant `index` is gone: it can no longer make any wait of the group succeed.
  virtual void Leave(int index) = 0;
  // Participant `index` (bound to the calling thread) polled and found it still has to wait:
  // until its next Bind, it counts as idle, and each poll is fresh evidence (invariant 2).
  virtual void NotePoll(int index) = 0;
  // The group's state changed (a post, a completion): abandons a round in progress. Lock-free.
  virtual void NoteProgress() = 0;
};

// A clock of `participants` (> 0) participants, all unbound (so not idle: invariant 4), whose
// completed rounds advance Now() by `jump`.
std::shared_ptr<IdleClock> NewIdleClock(int participants, std::uint64_t jump);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_VIRTUAL_CLOCK_H_
