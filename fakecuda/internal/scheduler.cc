// Copyright 2026 The cuhal Authors.
// The fake driver's scheduler: which thread runs queued stream work, and when (driver_state.h,
// invariants 3 to 6).
//
// Threads. Any thread that drives the scheduler (an enqueue under the eager policy, a
// synchronization, a query) runs the fake's own work inline: it is the fake's code, touches only
// fake memory and takes no user lock. User work runs only on driver-owned threads, "lanes", as
// on the real driver (docs/driver_facts.md, measured on the H200): host functions and callbacks
// of one context run on that context's lane, one at a time, in an order the driver chooses among
// ready streams; kernel implementations run on the kernel lane, so a kernel still runs while a
// host function blocks. A waiter that needs user work hands its stream to the lane (`handoff_`)
// and waits. On a lane, outside any body, every kind of work of that lane may run inline.
//
// Order. Eager: oldest ready head first (program order), each lane running its user work as
// soon as it is ready. Adversarial: a waiter picks, with the seeded generator, among the ready
// heads it needs; a lane runs exactly the handed-off heads, plus, for host-function lanes, one
// seeded "idle release" of a pending host function when no thread entered the driver for
// DriverOptions::idle_release_us.
//
// Deadlock freedom. No thread waits on its own lane: inside user work, entry points other than
// the few the real driver allows there answer CUDA_ERROR_NOT_PERMITTED (entry.h), and a
// synchronization that would need the calling lane's own work (its own stream, another host
// function of its context) answers CUDA_ERROR_NOT_PERMITTED where the real driver hangs. Every
// wait is bounded (kWaitTickMs) and re-examines the state, so a lost notification costs a tick.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/mem_pool.h"
#include "fakecuda/race/race_detector.h"
#include "fakecuda/stream_work.h"
#include "fakecuda/virtual_clock.h"

namespace fakecuda {
namespace {

constexpr int kWaitTickMs = 10;
// A waiter that has waited this many ticks for user work still running says so on stderr.
constexpr int kSlowUserWorkTicks = 1000;  // 10 s
// How long a poll under the adversarial policy waits for the user work it handed over.
constexpr int kPollTicks = 5;

// The serial of the driver whose lane this thread is (0: not a lane), and which lane.
thread_local std::uint64_t t_lane_serial = 0;
thread_local std::uint64_t t_lane_key = 0;
// How deep the lane is in running work bodies (entry points called from a host function run at
// depth 1: they may run the fake's own work inline, never user work).
thread_local int t_body_depth = 0;

}  // namespace

bool DriverState::OnCallbackThread() const { return t_lane_serial == serial; }

std::uint64_t DriverState::LaneOf(const Stream* s) {
  if (!s->queue.empty() && s->queue.front().kind == OpKind::kKernel) return kKernelLane;
  return s->ctx_id;
}

bool DriverState::MayRunHere(const Stream* s) const {
  return t_lane_serial == serial && t_body_depth == 0 && t_lane_key == LaneOf(s);
}

bool DriverState::DepSatisfied(std::uint64_t stream_id, std::uint64_t seq) const {
  const Stream* s = streams_.FindStream(stream_id);
  if (s == nullptr) return true;  // reaped: everything it had completed
  return s->completed_seq >= seq;
}

bool DriverState::HeadReady(const Stream* s) const {
  if (s->queue.empty() || s->running) return false;
  const Op& op = s->queue.front();
  for (const auto& [sid, seq] : op.deps) {
    if (!DepSatisfied(sid, seq)) return false;
  }
  return !op.ready || op.ready();
}

bool DriverState::HeadIsUserWork(const Stream* s) {
  return !s->queue.empty() && s->queue.front().kind != OpKind::kDevice;
}

bool DriverState::StreamIdle(const Stream* s) const { return s->queue.empty() && !s->running; }

std::uint64_t DriverState::Enqueue(Stream* s, Op op) {
  op.seq = streams_.TakeSeq();
  Context* ctx = contexts_.Find(s->ctx_id);
  // Implicit synchronization with the legacy default stream: it waits for every blocking stream
  // of its context, and every blocking stream waits for it.
  if (ctx != nullptr) {
    if (s->legacy_default) {
      for (auto& [id, other] : streams_.streams()) {
        if (other.get() != s && other->ctx_id == s->ctx_id && !other->destroyed &&
            !(other->flags & CU_STREAM_NON_BLOCKING) && other->last_enqueued_seq > other->completed_seq) {
          op.deps.emplace_back(id, other->last_enqueued_seq);
        }
      }
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && ctx->legacy_stream_id != 0) {
      Stream* legacy = FindStream(ctx->legacy_stream_id);
      if (legacy && legacy->last_enqueued_seq > legacy->completed_seq) {
        op.deps.emplace_back(legacy->id, legacy->last_enqueued_seq);
      }
    }
  }
  // cuCtxWaitEvent (fakecuda/entry/streamctx_entry.cc): every op of the context waits for the
  // event records it named, until they complete.
  if (ctx != nullptr && !ctx->waits.empty()) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pending;
    for (const auto& w : ctx->waits) {
      if (DepSatisfied(w.first, w.second)) continue;
      pending.push_back(w);
      if (w.first != s->id) op.deps.push_back(w);
    }
    ctx->waits = std::move(pending);
  }
  for (const auto& [sid, dseq] : op.deps) {
    std::uint64_t& waited = s->waited[sid];
    waited = std::max(waited, dseq);
  }
  if (race_ != nullptr) race_->OnEnqueue(this, *s, op);
  const OpKind kind = op.kind;
  std::uint64_t seq = op.seq;
  s->last_enqueued_seq = seq;
  s->queue.push_back(std::move(op));
  Lane* lane = nullptr;
  if (kind != OpKind::kDevice) lane = EnsureLane(kind == OpKind::kKernel ? kKernelLane : s->ctx_id);
  cv.NotifyAll();
  NoteDriverProgress();
  if (options.policy == SchedulePolicy::kEager) {
    DrainEager();
    if (lane != nullptr) lane->cv.NotifyOne();
  }
  return seq;
}

Stream* DriverState::PickReady(const std::vector<Stream*>& candidates) {
  if (candidates.empty()) return nullptr;
  if (options.policy == SchedulePolicy::kEager) {
    // Oldest head first: program order.
    return *std::min_element(candidates.begin(), candidates.end(), [](Stream* a, Stream* b) {
      return a->queue.front().seq < b->queue.front().seq;
    });
  }
  // Adversarial: any ready stream, chosen by the seed. Candidates come in id order, so the
  // choice depends only on the seed and the program, not on hash-table iteration order.
  return candidates[NextRandom() % candidates.size()];
}

void DriverState::RunHead(Stream* s) {
  Op& head = s->queue.front();
  s->running = true;
  double start = s->time_us;
  for (const auto& [sid, seq] : head.deps) {
    (void)seq;
    if (Stream* d = FindStream(sid)) start = std::max(start, d->time_us);
  }
  std::function<CUresult()> body = std::move(head.body);
  const OpKind kind = head.kind;
  const char* what = head.what;
  double cost = head.cost_us;
  CUresult result = CUDA_SUCCESS;
  bool threw = false;
  const std::uint64_t head_seq = head.seq;
  if (race_ != nullptr && kind == OpKind::kHostFunction) race_->OnHostFunctionStart(s->id, head_seq);
  if (body) {
    cuhal::MutexUnlock unlocked(mu);  // retaken when this block ends
    // Nothing the body throws escapes: a throwing host function is reported and its stream goes
    // on (the real driver would terminate the process); a throwing kernel implementation (or a
    // parameter read of the wrong size) fails like a faulting kernel, with a sticky
    // CUDA_ERROR_LAUNCH_FAILED.
    ++t_body_depth;
    // User work on a lane keeps every virtual clock still (a busy peer is never timed out).
    const bool busy = kind != OpKind::kDevice;
    if (busy) EnterBusy();
    try {
      result = body();
    } catch (const std::exception& e) {
      threw = true;
      std::fprintf(stderr, "fakecuda: %s: user work threw: %s\n", what, e.what());
    } catch (...) {
      threw = true;
      std::fprintf(stderr, "fakecuda: %s: user work threw a non-std::exception\n", what);
    }
    if (busy) LeaveBusy();
    --t_body_depth;
    body = nullptr;  // destroy captured state without the lock, like the body itself
  }
  if (threw) {
    if (kind == OpKind::kHostFunction) {
      ++host_function_exceptions_;
    } else {
      result = CUDA_ERROR_LAUNCH_FAILED;
    }
  }
  // `s` stays valid: a running stream is never reaped.
  Op done = std::move(s->queue.front());
  s->queue.pop_front();
  s->running = false;
  s->time_us = start + cost;
  s->completed_seq = done.seq;
  if (race_ != nullptr && kind == OpKind::kHostFunction) race_->OnHostFunctionDone(s->id, done.seq);
  if (done.record_event_id != 0) {
    Event* e = streams_.FindEvent(done.record_event_id);
    if (e != nullptr && e->generation == done.record_generation) {
      e->complete = true;
      e->time_us = s->time_us;
    }
  }
  if (result != CUDA_SUCCESS) {
    Context* c = contexts_.Find(s->ctx_id);
    if (c != nullptr && c->sticky == CUDA_SUCCESS) c->sticky = result;
  }
  cv.NotifyAll();
  NoteDriverProgress();
  for (auto& [key, lane] : lanes_) lane->cv.NotifyOne();
}

bool DriverState::RunOrHandOff(Stream* s) {
  if (!HeadIsUserWork(s) || MayRunHere(s)) {
    RunHead(s);
    return true;
  }
  const std::uint64_t key = LaneOf(s);
  if (OnCallbackThread() && t_lane_key == key) return false;  // its lane is this thread, busy
  handoff_.insert(s->id);
  EnsureLane(key)->cv.NotifyOne();
  return false;
}

void DriverState::DrainEager() {
  for (;;) {
    std::vector<Stream*> ready;
    for (auto& [id, s] : streams_.streams()) {
      if (HeadReady(s.get()) && (!HeadIsUserWork(s.get()) || MayRunHere(s.get()))) {
        ready.push_back(s.get());
      }
    }
    if (ready.empty()) break;
    RunHead(PickReady(ready));
  }
  ReapStreams();
}

Stream* DriverState::FindNeededReady(Stream* target, std::uint64_t seq) {
  // Walk the chain of streams `target` (up to seq) waits on, transitively, and pick among the
  // ones whose head op is ready to run.
  std::vector<std::uint64_t> needed{target->id};
  std::vector<std::uint64_t> limit{seq};
  std::vector<Stream*> ready;
  bool predicate_blocked = false;
  for (size_t i = 0; i < needed.size() && i < 64; ++i) {
    Stream* s = FindStream(needed[i]);
    if (s == nullptr || s->queue.empty() || s->running) continue;
    const Op& head = s->queue.front();
    if (head.seq > limit[i]) continue;
    if (HeadReady(s)) {
      ready.push_back(s);
      continue;
    }
    bool deps_done = true;
    for (const auto& [sid, dseq] : head.deps) {
      if (!DepSatisfied(sid, dseq)) {
        deps_done = false;
        if (std::find(needed.begin(), needed.end(), sid) == needed.end()) {
          needed.push_back(sid);
          limit.push_back(dseq);
        }
      }
    }
    // Only a memory watch: a collective waiting for its peers must not make this thread run
    // other ranks' ready collectives (it would then block in them while its own rank's op
    // waits: fakenccl_collectives_shm_test hung until the wall-clock backstop).
    if (deps_done && head.watches_memory) predicate_blocked = true;
  }
  if (ready.empty() && predicate_blocked) {
    // A needed op waits on memory (a stream wait-value op, fakecuda/entry/streamctx_entry.cc)
    // that other work may write without a dependency the scheduler knows: any ready device work
    // may be needed, as on a GPU, where it all progresses.
    for (const auto& [id, s] : streams_.streams()) {
      if (HeadReady(s.get()) && s->queue.front().kind == OpKind::kDevice) ready.push_back(s.get());
    }
  }
  if (ready.empty()) return nullptr;
  std::sort(ready.begin(), ready.end(), [](Stream* a, Stream* b) { return a->id < b->id; });
  return PickReady(ready);
}

void DriverState::WaitForProgress() {
  ScopedBlocked blocked;  // the virtual clock (fakecuda/virtual_clock.h): this thread is idle here
  cv.WaitFor(mu, std::chrono::milliseconds(kWaitTickMs));
}

void DriverState::WaitForHandOff(std::uint64_t stream_id, std::uint64_t head_seq) {
  // Until the handed-off op has completed: so that the next choice (a seeded draw under the
  // adversarial policy) is made on the same state whatever the lane's timing.
  for (;;) {
    Stream* s = FindStream(stream_id);
    if (s == nullptr || s->completed_seq >= head_seq) return;
    WaitForProgress();
  }
}

bool DriverState::RunOrWait(Stream* s) {
  const std::uint64_t id = s->id;
  const std::uint64_t head_seq = s->queue.front().seq;
  if (RunOrHandOff(s)) return true;
  if (OnCallbackThread() && t_lane_key == LaneOf(s)) return false;  // never wait for oneself
  WaitForHandOff(id, head_seq);
  return true;
}

void DriverState::Step(Stream* target, std::uint64_t seq) {
  if (Stream* runnable = FindNeededReady(target, seq)) {
    if (RunOrWait(runnable)) return;
  }
  // Nothing this thread can run: the callback thread or another thread is running a needed op,
  // or an op waits for work another thread has yet to enqueue (a collective's peers). Wait for
  // the world to change.
  WaitForProgress();
}

namespace {
// Whether some op `waiter` needs is user work running on the callback thread right now.
bool UserWorkRunning(const StreamTable::StreamMap& streams) {
  for (const auto& [id, s] : streams) {
    if (s->running && !s->queue.empty() && s->queue.front().kind != OpKind::kDevice) return true;
  }
  return false;
}
}  // namespace

CUresult DriverState::SyncStream(Stream* s, std::uint64_t seq) {
  std::uint64_t id = s->id;
  // Once this returns, the host has seen every op (and pool free) ordered on the stream before
  // `proven_below` complete.
  const std::uint64_t proven_below = seq == 0 ? streams_.next_seq() : seq;
  if (seq == 0) seq = s->last_enqueued_seq;
  int slow_ticks = 0;
  for (;;) {
    Stream* cur = FindStream(id);
    if (cur == nullptr || cur->completed_seq >= seq) break;
    if (OnCallbackThread()) {
      // Inside user work: the fake's own work this wait needs runs here, other lanes' work is
      // handed over and waited for (a host function may wait for a kernel, as on the GPU); if
      // the wait needs this lane's own work (its own stream, another host function of its
      // context), it could only end when this body returns: the real driver hangs there, the
      // fake answers CUDA_ERROR_NOT_PERMITTED.
      if (NeedsOwnLane(cur, seq)) return CUDA_ERROR_NOT_PERMITTED;
    }
    Step(cur, seq);
    if (++slow_ticks == kSlowUserWorkTicks && UserWorkRunning(streams_.streams())) {
      std::fprintf(stderr,
                   "fakecuda: a synchronization has waited 10 s for stream %llu; a host function "
                   "or kernel implementation it needs is still running\n",
                   static_cast<unsigned long long>(id));
    }
  }
  ReapStreams();
  NoteSynchronized(id, proven_below);
  Stream* cur = FindStream(id);
  if (cur != nullptr) {
    if (CUresult sticky = contexts_.StickyError(cur->ctx_id); sticky != CUDA_SUCCESS) {
      return sticky;
    }
  }
  return CUDA_SUCCESS;
}

void DriverState::NoteSynchronized(std::uint64_t stream_id, std::uint64_t proven_below) {
  if (race_ != nullptr) race_->OnHostWaited(stream_id, proven_below);
  PoolsOnStreamSync(this, stream_id, proven_below);
}

CUresult DriverState::SyncAll(std::uint64_t ctx_id) {
  for (;;) {
    std::vector<Stream*> pending;
    for (auto& [id, s] : streams_.streams()) {
      if ((ctx_id == 0 || s->ctx_id == ctx_id) && !StreamIdle(s.get())) pending.push_back(s.get());
    }
    if (pending.empty()) break;
    std::sort(pending.begin(), pending.end(), [](Stream* a, Stream* b) { return a->id < b->id; });
    std::vector<Stream*> ready;
    for (Stream* s : pending) {
      if (HeadReady(s)) ready.push_back(s);
    }
    if (OnCallbackThread()) {
      // Unreachable through the entry points (cuCtxSynchronize is refused inside user work);
      // kept so that no internal caller can wait for its own lane.
      return CUDA_ERROR_NOT_PERMITTED;
    } else if (!ready.empty()) {
      if (!RunOrWait(PickReady(ready))) WaitForProgress();
    } else {
      Step(pending[NextRandom() % pending.size()], ~std::uint64_t{0});
    }
  }
  ReapStreams();
  if (race_ != nullptr) race_->OnContextSynchronized(this, ctx_id);
  PoolsOnContextSync(this, ctx_id);
  if (ctx_id != 0) {
    if (CUresult sticky = contexts_.StickyError(ctx_id); sticky != CUDA_SUCCESS) return sticky;
  }
  return CUDA_SUCCESS;
}

bool DriverState::PollStream(Stream* s, std::uint64_t seq) {
  if (seq == 0) seq = s->last_enqueued_seq;
  if (s->completed_seq >= seq) return true;
  if (options.policy == SchedulePolicy::kEager) {
    // Ready predicates may have changed since the work was enqueued without anything telling
    // the scheduler (a collective whose deadline passed on the virtual clock): look again, as a
    // synchronization would, and run what became ready.
    const std::uint64_t id = s->id;
    DrainEager();
    s = FindStream(id);
    if (s == nullptr) return true;
  }
  if (options.policy == SchedulePolicy::kAdversarial) {
    // Each poll completes one more op that the query needs (on the stream itself or, through
    // any chain of waits, on a stream it depends on), so a polling loop always terminates. User
    // work is handed to the callback thread; a later poll sees it done.
    std::uint64_t id = s->id;
    if (Stream* runnable = FindNeededReady(s, seq)) {
      const std::uint64_t runnable_id = runnable->id;
      const std::uint64_t head_seq = runnable->queue.front().seq;
      if (!RunOrHandOff(runnable) && !OnCallbackThread()) {
        // Handed to the callback thread: this poll still completes it, unless it blocks (on a
        // lock this thread holds, say) for longer than a few ticks; then the poll says NOT_READY.
        for (int tick = 0; tick < kPollTicks; ++tick) {
          Stream* r = FindStream(runnable_id);
          if (r == nullptr || r->completed_seq >= head_seq) break;
          WaitForProgress();
        }
      }
    }
    s = FindStream(id);
    if (s == nullptr) return true;
  }
  if (s->completed_seq >= seq) return true;
  // The caller polls for work that is still pending: an idle poll for the virtual clocks
  // (fakecuda/virtual_clock.h), so that a cuStreamQuery loop on work only a timeout can end
  // (a collective whose peer never comes) sees that timeout fire.
  NoteThreadPoll();
  return false;
}

void DriverState::ReapStreams() {
  for (auto it = streams_.streams().begin(); it != streams_.streams().end();) {
    if (it->second->destroyed && StreamIdle(it->second.get())) {
      handoff_.erase(it->first);
      it = streams_.EraseStream(it);
    } else {
      ++it;
    }
  }
}

// --- lanes ---

bool DriverState::NeedsOwnLane(Stream* target, std::uint64_t seq) {
  // The chain of streams (target, seq) waits on, as FindNeededReady walks it: does any link wait
  // for work of the calling lane, running now or queued at its head?
  std::vector<std::uint64_t> needed{target->id};
  std::vector<std::uint64_t> limit{seq};
  for (size_t i = 0; i < needed.size() && i < 64; ++i) {
    Stream* s = FindStream(needed[i]);
    if (s == nullptr || s->queue.empty()) continue;
    const Op& head = s->queue.front();
    if (head.seq > limit[i]) continue;
    if (head.kind != OpKind::kDevice && LaneOf(s) == t_lane_key) return true;
    // Work of this lane further down the stream, before seq, is needed too.
    for (const Op& op : s->queue) {
      if (op.seq > limit[i]) break;
      if (op.kind == OpKind::kHostFunction && s->ctx_id == t_lane_key) return true;
      if (op.kind == OpKind::kKernel && t_lane_key == kKernelLane) return true;
    }
    for (const auto& [sid, dseq] : head.deps) {
      if (!DepSatisfied(sid, dseq) &&
          std::find(needed.begin(), needed.end(), sid) == needed.end()) {
        needed.push_back(sid);
        limit.push_back(dseq);
      }
    }
  }
  return false;
}

DriverState::Lane* DriverState::EnsureLane(std::uint64_t key) {
  // Join lanes whose context went away (they return on their own).
  for (auto it = lanes_.begin(); it != lanes_.end();) {
    if (it->second->finished && it->first != key) {
      if (it->second->thread.joinable()) it->second->thread.join();
      it = lanes_.erase(it);
    } else {
      ++it;
    }
  }
  auto& slot = lanes_[key];
  if (slot != nullptr && slot->finished) {
    if (slot->thread.joinable()) slot->thread.join();
    slot.reset();
  }
  if (slot == nullptr) {
    slot = std::make_unique<Lane>();
    slot->key = key;
    if (!stop_lanes_) {
      Lane* lane = slot.get();
      lane->thread = std::thread([this, lane] { LaneLoop(lane); });
    }
  }
  return slot.get();
}

void DriverState::StopLanes() {
  cuhal::MutexLock lock(mu);
  stop_lanes_ = true;
  std::vector<std::thread> threads;
  for (auto& [key, lane] : lanes_) lane->cv.NotifyAll();
  for (auto& [key, lane] : lanes_) {
    if (lane->thread.joinable()) threads.push_back(std::move(lane->thread));
  }
  lock.unlock();
  for (std::thread& t : threads) t.join();
  lock.lock();
  lanes_.clear();
}

void DriverState::LaneLoop(Lane* lane) {
  t_lane_serial = serial;
  t_lane_key = lane->key;
  const std::uint64_t key = lane->key;
  cuhal::MutexLock lock(mu);
  std::uint64_t calls_seen = entry_calls_.load(std::memory_order_relaxed);
  auto mine = [key](const Stream* s) { return HeadIsUserWork(s) && LaneOf(s) == key; };
  // The driver is going away only when its owner destroys it; any work still queued then is
  // abandoned with it (the owner's teardown synchronizes first when it cares).
  while (!stop_lanes_) {
    // Work a waiter handed over (both policies), then, under eager, any ready work of the lane.
    Stream* next = nullptr;
    for (auto it = handoff_.begin(); it != handoff_.end();) {
      Stream* s = FindStream(*it);
      if (s == nullptr || !HeadIsUserWork(s)) {
        it = handoff_.erase(it);
        continue;
      }
      if (mine(s) && HeadReady(s)) {
        next = s;
        handoff_.erase(it);
        break;
      }
      ++it;
    }
    if (next == nullptr && options.policy == SchedulePolicy::kEager) {
      std::vector<Stream*> ready;
      for (auto& [id, s] : streams_.streams()) {
        if (mine(s.get()) && HeadReady(s.get())) ready.push_back(s.get());
      }
      next = PickReady(ready);
    }
    if (next != nullptr) {
      RunHead(next);
      if (options.policy == SchedulePolicy::kEager) DrainEager();
      ReapStreams();
      continue;
    }
    // A host-function lane whose context is gone, with nothing queued for it, ends.
    if (key != kKernelLane && !contexts_.IsLive(key)) {
      bool queued = false;
      for (auto& [id, s] : streams_.streams()) queued = queued || s->ctx_id == key;
      if (!queued) break;
    }
    const bool idle_release = key != kKernelLane &&
                              options.policy == SchedulePolicy::kAdversarial &&
                              options.idle_release_us != 0;
    if (idle_release) {
      lane->cv.WaitFor(mu, std::chrono::microseconds(options.idle_release_us));
      const std::uint64_t calls = entry_calls_.load(std::memory_order_relaxed);
      if (calls == calls_seen && handoff_.empty() && !stop_lanes_) {
        ReleaseIdleHostFunction(key);
      }
      calls_seen = entry_calls_.load(std::memory_order_relaxed);
    } else {
      lane->cv.WaitFor(mu, std::chrono::milliseconds(kWaitTickMs));
    }
  }
  lane->finished = true;
  t_lane_serial = 0;
}

void DriverState::ReleaseIdleHostFunction(std::uint64_t ctx_id) {
  // Streams of the context with a host function queued, in id order; one chosen by the seed.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pending;  // (stream, host function seq)
  for (auto& [id, s] : streams_.streams()) {
    if (s->ctx_id != ctx_id) continue;
    for (const Op& op : s->queue) {
      if (op.kind == OpKind::kHostFunction) {
        pending.emplace_back(id, op.seq);
        break;
      }
    }
  }
  if (pending.empty()) return;
  std::sort(pending.begin(), pending.end());
  const auto [stream_id, seq] = pending[NextRandom() % pending.size()];
  // Run what that host function needs, then it: this lane runs its own work and the fake's,
  // and hands kernels to the kernel lane.
  for (int waits = 0; waits < kPollTicks;) {
    Stream* s = FindStream(stream_id);
    if (s == nullptr || s->completed_seq >= seq) break;
    Stream* runnable = FindNeededReady(s, seq);
    if (runnable == nullptr || !RunOrWait(runnable)) {
      WaitForProgress();  // blocked on a peer, or on another lane's work
      ++waits;
    }
  }
  ReapStreams();
}

}  // namespace fakecuda
