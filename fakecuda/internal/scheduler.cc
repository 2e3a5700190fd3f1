// Copyright 2026 The cuhal Authors.
// The fake driver's scheduler: which thread runs queued stream work, and when (driver_state.h,
// invariants 3 to 6).
//
// Threads. Any thread that drives the scheduler (an enqueue under the eager policy, a
// synchronization, a query) runs the fake's own work inline: it is the fake's code, touches only
// fake memory and takes no user lock. User work (OpKind::kHostFunction, kKernel) runs only on the
// driver's callback thread (one per DriverState, started with the first user work): a waiter that
// needs a user op hands its stream to the callback thread (`handoff_`) and waits. On the
// callback thread every kind of work may run inline.
//
// Order. Eager: oldest ready head first (program order), on the callback thread as soon as
// ready. Adversarial: a waiter picks, with the seeded generator, among the ready heads it needs;
// the callback thread runs exactly the handed-off heads, plus one seeded "idle release" of a
// pending host function when no thread entered the driver for DriverOptions::idle_release_us.
//
// Deadlock freedom. No thread waits on its own work: the callback thread never hands off and
// never waits for user work (entry points refuse to wait there, and SyncStream/SyncAll answer
// CUDA_ERROR_NOT_PERMITTED if they would). Every wait is bounded (kWaitTickMs) and re-examines
// the state, so a lost notification costs a tick, never a hang.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/internal/mem_pool.h"
#include "fakecuda/internal/thread_state.h"
#include "fakecuda/stream_work.h"

namespace fakecuda {
namespace {

// Scheduler waits with nothing runnable, process-wide (see SchedulerWaitTicks).
std::atomic<std::uint64_t> g_wait_ticks{0};
constexpr int kWaitTickMs = 10;
// A waiter that has waited this many ticks for user work still running says so on stderr.
constexpr int kSlowUserWorkTicks = 1000;  // 10 s
// How long a poll under the adversarial policy waits for the user work it handed over.
constexpr int kPollTicks = 5;

// The serial of the driver whose callback thread this is (0: not a callback thread).
thread_local std::uint64_t t_callback_serial = 0;
// How deep the callback thread is in running work bodies (entry points called from a host
// function run at depth 1: they may run the fake's own work inline, never user work).
thread_local int t_body_depth = 0;

}  // namespace

std::uint64_t SchedulerWaitTicks() { return g_wait_ticks.load(std::memory_order_relaxed); }

bool DriverState::OnCallbackThread() const { return t_callback_serial == serial; }

bool DriverState::MayRunUserWork() const {
  return t_callback_serial == serial && t_body_depth == 0;
}

bool DriverState::DepSatisfied(std::uint64_t stream_id, std::uint64_t seq) const {
  auto it = streams.find(stream_id);
  if (it == streams.end()) return true;  // reaped: everything it had completed
  return it->second->completed_seq >= seq;
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

std::uint64_t DriverState::Enqueue(Stream* s, Op op, std::unique_lock<std::mutex>& lock) {
  op.seq = next_seq++;
  Context* ctx = contexts.count(s->ctx_id) ? contexts[s->ctx_id].get() : nullptr;
  // Implicit synchronization with the legacy default stream: it waits for every blocking stream
  // of its context, and every blocking stream waits for it.
  if (ctx != nullptr) {
    if (s->legacy_default) {
      for (auto& [id, other] : streams) {
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
  for (const auto& [sid, dseq] : op.deps) {
    std::uint64_t& waited = s->waited[sid];
    waited = std::max(waited, dseq);
  }
  const bool user_work = op.kind != OpKind::kDevice;
  std::uint64_t seq = op.seq;
  s->last_enqueued_seq = seq;
  s->queue.push_back(std::move(op));
  if (user_work) EnsureCallbackThread();
  cv.notify_all();
  if (options.policy == SchedulePolicy::kEager) {
    DrainEager(lock);
    callback_cv_.notify_one();
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

void DriverState::RunHead(Stream* s, std::unique_lock<std::mutex>& lock) {
  Op& head = s->queue.front();
  s->running = true;
  double start = s->time_us;
  for (const auto& [sid, seq] : head.deps) {
    (void)seq;
    if (Stream* d = FindStream(sid)) start = std::max(start, d->time_us);
  }
  std::function<CUresult()> body = std::move(head.body);
  const OpKind kind = head.kind;
  const std::uint64_t ctx_id = s->ctx_id;
  const char* what = head.what;
  double cost = head.cost_us;
  CUresult result = CUDA_SUCCESS;
  bool threw = false;
  if (body) {
    lock.unlock();
    // Nothing the body throws escapes: a throwing host function is reported and its stream goes
    // on (the real driver would terminate the process); a throwing kernel implementation (or a
    // parameter read of the wrong size) fails like a faulting kernel, with a sticky
    // CUDA_ERROR_LAUNCH_FAILED.
    ++t_body_depth;
    // User work runs with its stream's context current, as the real driver's callback thread.
    std::vector<std::uint64_t>* stack = nullptr;
    if (kind != OpKind::kDevice && OnCallbackThread()) {
      stack = &ThreadContextStack(serial);
      stack->push_back(ctx_id);
    }
    try {
      result = body();
    } catch (const std::exception& e) {
      threw = true;
      std::fprintf(stderr, "fakecuda: %s: user work threw: %s\n", what, e.what());
    } catch (...) {
      threw = true;
      std::fprintf(stderr, "fakecuda: %s: user work threw a non-std::exception\n", what);
    }
    if (stack != nullptr) ThreadContextStack(serial).clear();
    --t_body_depth;
    body = nullptr;  // destroy captured state without the lock, like the body itself
    lock.lock();
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
  if (done.record_event_id != 0) {
    auto it = events.find(done.record_event_id);
    if (it != events.end() && it->second->generation == done.record_generation) {
      it->second->complete = true;
      it->second->time_us = s->time_us;
    }
  }
  if (result != CUDA_SUCCESS) {
    auto it = contexts.find(s->ctx_id);
    if (it != contexts.end() && it->second->sticky == CUDA_SUCCESS) it->second->sticky = result;
  }
  cv.notify_all();
  callback_cv_.notify_one();
}

bool DriverState::RunOrHandOff(Stream* s, std::unique_lock<std::mutex>& lock) {
  if (!HeadIsUserWork(s) || MayRunUserWork()) {
    RunHead(s, lock);
    return true;
  }
  if (OnCallbackThread()) return false;  // inside user work: the callback loop runs it later
  handoff_.insert(s->id);
  EnsureCallbackThread();
  callback_cv_.notify_one();
  return false;
}

void DriverState::DrainEager(std::unique_lock<std::mutex>& lock) {
  const bool on_callback = MayRunUserWork();
  for (;;) {
    std::vector<Stream*> ready;
    for (auto& [id, s] : streams) {
      if (HeadReady(s.get()) && (on_callback || !HeadIsUserWork(s.get()))) ready.push_back(s.get());
    }
    if (ready.empty()) break;
    RunHead(PickReady(ready), lock);
  }
  ReapStreams();
}

Stream* DriverState::FindNeededReady(Stream* target, std::uint64_t seq) {
  // Walk the chain of streams `target` (up to seq) waits on, transitively, and pick among the
  // ones whose head op is ready to run.
  std::vector<std::uint64_t> needed{target->id};
  std::vector<std::uint64_t> limit{seq};
  std::vector<Stream*> ready;
  for (size_t i = 0; i < needed.size() && i < 64; ++i) {
    Stream* s = FindStream(needed[i]);
    if (s == nullptr || s->queue.empty() || s->running) continue;
    const Op& head = s->queue.front();
    if (head.seq > limit[i]) continue;
    if (HeadReady(s)) {
      ready.push_back(s);
      continue;
    }
    for (const auto& [sid, dseq] : head.deps) {
      if (!DepSatisfied(sid, dseq) &&
          std::find(needed.begin(), needed.end(), sid) == needed.end()) {
        needed.push_back(sid);
        limit.push_back(dseq);
      }
    }
  }
  if (ready.empty()) return nullptr;
  std::sort(ready.begin(), ready.end(), [](Stream* a, Stream* b) { return a->id < b->id; });
  return PickReady(ready);
}

void DriverState::WaitForProgress(std::unique_lock<std::mutex>& lock) {
  cv.wait_for(lock, std::chrono::milliseconds(kWaitTickMs));
  g_wait_ticks.fetch_add(1, std::memory_order_relaxed);
}

void DriverState::Step(Stream* target, std::uint64_t seq, std::unique_lock<std::mutex>& lock) {
  if (Stream* runnable = FindNeededReady(target, seq)) {
    if (RunOrHandOff(runnable, lock)) return;
  }
  // Nothing this thread can run: the callback thread or another thread is running a needed op,
  // or an op waits for work another thread has yet to enqueue (a collective's peers). Wait for
  // the world to change.
  WaitForProgress(lock);
}

namespace {
// Whether some op `waiter` needs is user work running on the callback thread right now.
bool UserWorkRunning(const std::unordered_map<std::uint64_t, std::unique_ptr<Stream>>& streams) {
  for (const auto& [id, s] : streams) {
    if (s->running && !s->queue.empty() && s->queue.front().kind != OpKind::kDevice) return true;
  }
  return false;
}
}  // namespace

CUresult DriverState::SyncStream(Stream* s, std::uint64_t seq, std::unique_lock<std::mutex>& lock) {
  std::uint64_t id = s->id;
  // Once this returns, the host has seen every op (and pool free) ordered on the stream before
  // `proven_below` complete.
  const std::uint64_t proven_below = seq == 0 ? next_seq : seq;
  if (seq == 0) seq = s->last_enqueued_seq;
  int slow_ticks = 0;
  for (;;) {
    Stream* cur = FindStream(id);
    if (cur == nullptr || cur->completed_seq >= seq) break;
    if (OnCallbackThread()) {
      // Inside user work: run the fake's own work this wait needs; if what it needs is user
      // work, or is running, waiting could only end when the callback thread (this one)
      // returns. The real driver refuses such calls.
      Stream* runnable = FindNeededReady(cur, seq);
      if (runnable == nullptr || HeadIsUserWork(runnable)) return CUDA_ERROR_NOT_PERMITTED;
      RunHead(runnable, lock);
      continue;
    }
    Step(cur, seq, lock);
    if (++slow_ticks == kSlowUserWorkTicks && UserWorkRunning(streams)) {
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
    auto it = contexts.find(cur->ctx_id);
    if (it != contexts.end() && it->second->sticky != CUDA_SUCCESS) return it->second->sticky;
  }
  return CUDA_SUCCESS;
}

void DriverState::NoteSynchronized(std::uint64_t stream_id, std::uint64_t proven_below) {
  PoolsOnStreamSync(this, stream_id, proven_below);
}

CUresult DriverState::SyncAll(std::uint64_t ctx_id, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    std::vector<Stream*> pending;
    for (auto& [id, s] : streams) {
      if ((ctx_id == 0 || s->ctx_id == ctx_id) && !StreamIdle(s.get())) pending.push_back(s.get());
    }
    if (pending.empty()) break;
    std::sort(pending.begin(), pending.end(), [](Stream* a, Stream* b) { return a->id < b->id; });
    std::vector<Stream*> ready;
    for (Stream* s : pending) {
      if (HeadReady(s)) ready.push_back(s);
    }
    if (OnCallbackThread()) {
      // See SyncStream: the fake's own work runs here, anything else is refused.
      auto it = std::find_if(ready.begin(), ready.end(),
                             [](Stream* s) { return !HeadIsUserWork(s); });
      if (it == ready.end()) return CUDA_ERROR_NOT_PERMITTED;
      RunHead(*it, lock);
    } else if (!ready.empty()) {
      if (!RunOrHandOff(PickReady(ready), lock)) WaitForProgress(lock);
    } else {
      Step(pending[NextRandom() % pending.size()], ~std::uint64_t{0}, lock);
    }
  }
  ReapStreams();
  PoolsOnContextSync(this, ctx_id);
  if (ctx_id != 0) {
    auto it = contexts.find(ctx_id);
    if (it != contexts.end() && it->second->sticky != CUDA_SUCCESS) return it->second->sticky;
  }
  return CUDA_SUCCESS;
}

bool DriverState::PollStream(Stream* s, std::uint64_t seq, std::unique_lock<std::mutex>& lock) {
  if (seq == 0) seq = s->last_enqueued_seq;
  if (s->completed_seq >= seq) return true;
  if (options.policy == SchedulePolicy::kAdversarial) {
    // Each poll completes one more op that the query needs (on the stream itself or, through
    // any chain of waits, on a stream it depends on), so a polling loop always terminates. User
    // work is handed to the callback thread; a later poll sees it done.
    std::uint64_t id = s->id;
    if (Stream* runnable = FindNeededReady(s, seq)) {
      const std::uint64_t runnable_id = runnable->id;
      const std::uint64_t head_seq = runnable->queue.front().seq;
      if (!RunOrHandOff(runnable, lock) && !OnCallbackThread()) {
        // Handed to the callback thread: this poll still completes it, unless it blocks (on a
        // lock this thread holds, say) for longer than a few ticks; then the poll says NOT_READY.
        for (int tick = 0; tick < kPollTicks; ++tick) {
          Stream* r = FindStream(runnable_id);
          if (r == nullptr || r->completed_seq >= head_seq) break;
          WaitForProgress(lock);
        }
      }
    }
    s = FindStream(id);
    if (s == nullptr) return true;
  }
  return s->completed_seq >= seq;
}

void DriverState::ReapStreams() {
  for (auto it = streams.begin(); it != streams.end();) {
    if (it->second->destroyed && StreamIdle(it->second.get())) {
      handoff_.erase(it->first);
      it = streams.erase(it);
    } else {
      ++it;
    }
  }
}

// --- the callback thread ---

void DriverState::EnsureCallbackThread() {
  if (callback_thread_.joinable() || stop_callbacks_) return;
  callback_thread_ = std::thread([this] { CallbackLoop(); });
}

void DriverState::StopCallbackThread() {
  std::unique_lock<std::mutex> lock(mu);
  stop_callbacks_ = true;
  callback_cv_.notify_all();
  lock.unlock();
  if (callback_thread_.joinable()) callback_thread_.join();
}

void DriverState::CallbackLoop() {
  t_callback_serial = serial;
  std::unique_lock<std::mutex> lock(mu);
  std::uint64_t calls_seen = entry_calls_.load(std::memory_order_relaxed);
  // The driver is going away only when its owner destroys it; any work still queued then is
  // abandoned with it (the owner's teardown synchronizes first when it cares).
  while (!stop_callbacks_) {
    // Work a waiter handed over (both policies), then, under eager, any ready user work.
    Stream* next = nullptr;
    for (auto it = handoff_.begin(); it != handoff_.end();) {
      Stream* s = FindStream(*it);
      if (s == nullptr || !HeadIsUserWork(s)) {
        it = handoff_.erase(it);
        continue;
      }
      if (HeadReady(s)) {
        next = s;
        handoff_.erase(it);
        break;
      }
      ++it;
    }
    if (next == nullptr && options.policy == SchedulePolicy::kEager) {
      std::vector<Stream*> ready;
      for (auto& [id, s] : streams) {
        if (HeadReady(s.get()) && HeadIsUserWork(s.get())) ready.push_back(s.get());
      }
      next = PickReady(ready);
    }
    if (next != nullptr) {
      RunHead(next, lock);
      if (options.policy == SchedulePolicy::kEager) DrainEager(lock);
      ReapStreams();
      continue;
    }
    const bool idle_release = options.policy == SchedulePolicy::kAdversarial &&
                              options.idle_release_us != 0;
    if (idle_release) {
      callback_cv_.wait_for(lock, std::chrono::microseconds(options.idle_release_us));
      const std::uint64_t calls = entry_calls_.load(std::memory_order_relaxed);
      if (calls == calls_seen && handoff_.empty() && !stop_callbacks_) {
        ReleaseIdleHostFunction(lock);
      }
      calls_seen = entry_calls_.load(std::memory_order_relaxed);
    } else {
      callback_cv_.wait_for(lock, std::chrono::milliseconds(kWaitTickMs));
    }
  }
  t_callback_serial = 0;
}

void DriverState::ReleaseIdleHostFunction(std::unique_lock<std::mutex>& lock) {
  // Streams with a host function queued, in id order; one chosen by the seed.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pending;  // (stream, host function seq)
  for (auto& [id, s] : streams) {
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
  // Run what that host function needs, then it (this is the callback thread: anything may run).
  for (;;) {
    Stream* s = FindStream(stream_id);
    if (s == nullptr || s->completed_seq >= seq) break;
    Stream* runnable = FindNeededReady(s, seq);
    if (runnable == nullptr) break;  // blocked on a peer or another thread's running op
    RunHead(runnable, lock);
  }
  ReapStreams();
}

}  // namespace fakecuda
