// Copyright 2026 The cuhal Authors.
// The virtual clock; see virtual_clock.h for the model and its invariants.
#include "fakecuda/virtual_clock.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>
#include <vector>

#include "core/base/mutex.h"

namespace fakecuda {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kMinRound = std::chrono::milliseconds(20);
constexpr auto kSettle = std::chrono::milliseconds(50);
// How long a participant's thread must have exited before it counts as idle (invariant 1 of the
// header): a program that drives a rank from a new thread at each step (the collectives tests
// do) has the next thread on its way, and under load (ASan, 2 cores, ctest -j2 beside a build)
// three such threads took over 20 ms to reach the fake while their peer waited: the clock jumped
// and reported them missing.
constexpr std::int64_t kExitSettleNs =
    std::chrono::nanoseconds(std::chrono::seconds(1)).count();
// How long after a NoteThreadPoll its thread counts as polling idly.
constexpr std::int64_t kPollFreshNs =
    std::chrono::nanoseconds(std::chrono::milliseconds(10)).count();

std::atomic<int> g_busy{0};                  // active ScopedBusy scopes, process-wide
std::atomic<std::uint64_t> g_driver_epoch{0};  // NoteDriverProgress and ScopedBusy ends

class IdleClockImpl;

// One thread's presence. Shared: clocks keep the presences of their participants after the
// threads exit (and read `exited`).
struct Presence {
  std::atomic<int> blocked{0};             // depth of ScopedBlocked on the thread
  std::atomic<std::uint64_t> entries{0};   // outermost blocked states entered
  std::atomic<std::int64_t> since_ns{0};   // steady time the current outermost one began
  std::atomic<bool> exited{false};
  std::atomic<std::int64_t> exited_ns{0};  // steady time the thread ended
  std::atomic<std::uint64_t> thread_polls{0};   // NoteThreadPoll calls
  std::atomic<std::int64_t> last_poll_ns{0};    // steady time of the last one (0: never)
  std::atomic<bool> watched{false};        // some clock has this thread as a participant
  cuhal::Mutex mu;
  std::vector<std::weak_ptr<IdleClockImpl>> clocks CUHAL_GUARDED_BY(mu);
};

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             SteadyClock::now().time_since_epoch())
      .count();
}

void ObserveAll(Presence& p);

// The calling thread's presence, made on first use; marked exited (and its clocks observed) when
// the thread ends.
struct PresenceHolder {
  std::shared_ptr<Presence> presence = std::make_shared<Presence>();
  PresenceHolder() = default;
  PresenceHolder(const PresenceHolder&) = delete;             // one per thread
  PresenceHolder& operator=(const PresenceHolder&) = delete;  // ditto
  ~PresenceHolder() {
    presence->exited_ns.store(NowNs(), std::memory_order_release);
    presence->exited.store(true, std::memory_order_release);
    if (!presence->watched.load(std::memory_order_acquire)) return;
    try {
      ObserveAll(*presence);
    } catch (...) {
      // Nothing to report to at thread exit; the other participants' observations see `exited`.
    }
  }
};

PresenceHolder& Holder() {
  thread_local PresenceHolder holder;
  return holder;
}

Presence& Current() { return *Holder().presence; }

class IdleClockImpl final : public IdleClock,
                            public std::enable_shared_from_this<IdleClockImpl> {
 public:
  IdleClockImpl(int participants, std::uint64_t jump)
      : jump_(jump), parts_(static_cast<std::size_t>(std::max(participants, 1))) {}

  std::uint64_t Now() const override { return now_.load(std::memory_order_acquire); }

  void Bind(int index) override;
  void BindLike(int index, IdleClock& other, int other_index) override;
  void Leave(int index) override {
    cuhal::MutexLock lock(mu_);
    if (Part* p = At(index)) p->gone = true;
    progress_.fetch_add(1, std::memory_order_relaxed);
    ObserveLocked();
  }
  void NotePoll(int index) override {
    cuhal::MutexLock lock(mu_);
    if (Part* p = At(index)) {
      p->polling = true;
      ++p->polls;
    }
    ObserveLocked();
  }
  void NoteProgress() override { progress_.fetch_add(1, std::memory_order_relaxed); }

  void Observe() {
    cuhal::MutexLock lock(mu_);
    ObserveLocked();
  }

 private:
  struct Part {
    std::shared_ptr<Presence> presence;  // null: unbound
    bool gone = false;
    bool polling = false;
    std::uint64_t polls = 0;
  };
  struct Round {
    bool active = false;
    SteadyClock::time_point start;
    std::uint64_t progress = 0;
    std::uint64_t driver = 0;
    std::vector<std::uint64_t> evidence;
  };

  Part* At(int index) CUHAL_REQUIRES(mu_) {
    if (index < 0 || static_cast<std::size_t>(index) >= parts_.size()) return nullptr;
    return &parts_[static_cast<std::size_t>(index)];
  }
  static bool Live(const Part& p) {
    return p.presence != nullptr && !p.gone && !p.presence->exited.load(std::memory_order_acquire);
  }
  // Invariant 4: an unbound participant is not idle (it may be on its way).
  static bool Idle(const Part& p, std::int64_t now_ns) {
    if (p.presence == nullptr) return false;
    if (p.gone || p.polling || p.presence->blocked.load(std::memory_order_acquire) > 0) {
      return true;
    }
    if (p.presence->exited.load(std::memory_order_acquire)) {
      // Idle once it has been gone for kExitSettleNs (another thread may be taking the rank over).
      return now_ns - p.presence->exited_ns.load(std::memory_order_acquire) >= kExitSettleNs;
    }
    const std::int64_t last = p.presence->last_poll_ns.load(std::memory_order_acquire);
    return last != 0 && now_ns - last < kPollFreshNs;
  }
  static std::uint64_t Evidence(const Part& p) {
    return p.presence->entries.load(std::memory_order_acquire) +
           p.presence->thread_polls.load(std::memory_order_acquire) + p.polls;
  }
  void BindPresenceLocked(Part& p, std::shared_ptr<Presence> presence, bool* watch)
      CUHAL_REQUIRES(mu_);
  void Watch(const std::shared_ptr<Presence>& presence) CUHAL_EXCLUDES(mu_);
  void ObserveLocked() CUHAL_REQUIRES(mu_);

  const std::uint64_t jump_;
  std::atomic<std::uint64_t> now_{0};
  std::atomic<std::uint64_t> progress_{0};
  cuhal::Mutex mu_;
  std::vector<Part> parts_ CUHAL_GUARDED_BY(mu_);
  Round round_ CUHAL_GUARDED_BY(mu_);
};

void IdleClockImpl::BindPresenceLocked(Part& p, std::shared_ptr<Presence> presence, bool* watch) {
  p.polling = false;
  if (p.presence == presence) return;
  p.presence = std::move(presence);
  p.gone = false;
  *watch = true;
  progress_.fetch_add(1, std::memory_order_relaxed);
}

void IdleClockImpl::Watch(const std::shared_ptr<Presence>& presence) {
  // Not under mu_ (invariant 5: presence mutex before clock mutex, never the reverse).
  cuhal::MutexLock lock(presence->mu);
  std::erase_if(presence->clocks, [](const std::weak_ptr<IdleClockImpl>& w) { return w.expired(); });
  for (const auto& w : presence->clocks) {
    if (w.lock().get() == this) return;
  }
  presence->clocks.push_back(weak_from_this());
  presence->watched.store(true, std::memory_order_release);
}

void IdleClockImpl::ObserveLocked() {
  const std::int64_t observed_ns = NowNs();
  const bool idle = g_busy.load(std::memory_order_acquire) == 0 &&
                    std::all_of(parts_.begin(), parts_.end(),
                                [observed_ns](const Part& p) { return Idle(p, observed_ns); });
  if (!idle) {
    round_.active = false;
    return;
  }
  const SteadyClock::time_point now = SteadyClock::now();
  const std::uint64_t progress = progress_.load(std::memory_order_relaxed);
  const std::uint64_t driver = g_driver_epoch.load(std::memory_order_acquire);
  if (!round_.active || round_.progress != progress || round_.driver != driver) {
    round_.active = true;
    round_.start = now;
    round_.progress = progress;
    round_.driver = driver;
    round_.evidence.assign(parts_.size(), 0);
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      if (Live(parts_[i])) round_.evidence[i] = Evidence(parts_[i]);
    }
    return;
  }
  if (now - round_.start < kMinRound) return;
  const std::int64_t now_ns = NowNs();
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    const Part& p = parts_[i];
    if (!Live(p) || Evidence(p) != round_.evidence[i]) continue;
    // No fresh evidence: only a long, unbroken blocked state will do.
    const bool blocked = p.presence->blocked.load(std::memory_order_acquire) > 0;
    const std::int64_t since = p.presence->since_ns.load(std::memory_order_acquire);
    if (!blocked || now_ns - since < std::chrono::nanoseconds(kSettle).count() ||
        now - round_.start < kSettle) {
      return;
    }
  }
  now_.fetch_add(jump_, std::memory_order_acq_rel);
  round_.active = false;
}

void ObserveAll(Presence& p) {
  std::vector<std::shared_ptr<IdleClockImpl>> clocks;
  {
    cuhal::MutexLock lock(p.mu);
    for (const auto& w : p.clocks) {
      if (std::shared_ptr<IdleClockImpl> c = w.lock()) clocks.push_back(std::move(c));
    }
  }
  for (const auto& c : clocks) c->Observe();
}

void IdleClockImpl::Bind(int index) {
  std::shared_ptr<Presence> presence = Holder().presence;
  bool watch = false;
  {
    cuhal::MutexLock lock(mu_);
    Part* p = At(index);
    if (p == nullptr) return;
    BindPresenceLocked(*p, presence, &watch);
  }
  if (watch) Watch(presence);
}

void IdleClockImpl::BindLike(int index, IdleClock& other_clock, int other_index) {
  auto& other = static_cast<IdleClockImpl&>(other_clock);
  std::shared_ptr<Presence> presence;
  {
    cuhal::MutexLock lock(other.mu_);
    if (Part* q = other.At(other_index)) presence = q->presence;
  }
  if (presence == nullptr) return;
  bool watch = false;
  {
    cuhal::MutexLock lock(mu_);
    Part* p = At(index);
    if (p == nullptr) return;
    BindPresenceLocked(*p, presence, &watch);
  }
  if (watch) Watch(presence);
}

}  // namespace

void EnterBlocked() noexcept {
  Presence& p = Current();
  if (p.blocked.fetch_add(1, std::memory_order_acq_rel) != 0) return;  // nested
  p.since_ns.store(NowNs(), std::memory_order_release);
  p.entries.fetch_add(1, std::memory_order_acq_rel);
  if (p.watched.load(std::memory_order_acquire)) {
    try {
      ObserveAll(p);
    } catch (...) {
      // Out of memory while observing: this observation is skipped (a later one completes it).
    }
  }
}

void LeaveBlocked() noexcept { Current().blocked.fetch_sub(1, std::memory_order_acq_rel); }

void EnterBusy() noexcept { g_busy.fetch_add(1, std::memory_order_acq_rel); }

void LeaveBusy() noexcept {
  g_driver_epoch.fetch_add(1, std::memory_order_acq_rel);
  g_busy.fetch_sub(1, std::memory_order_acq_rel);
}

void NoteDriverProgress() noexcept { g_driver_epoch.fetch_add(1, std::memory_order_acq_rel); }

void NoteThreadPoll() noexcept {
  Presence& p = Current();
  p.last_poll_ns.store(NowNs(), std::memory_order_release);
  p.thread_polls.fetch_add(1, std::memory_order_acq_rel);
  if (p.watched.load(std::memory_order_acquire)) {
    try {
      ObserveAll(p);
    } catch (...) {
      // Out of memory while observing: this observation is skipped (a later one completes it).
    }
  }
}

std::shared_ptr<IdleClock> NewIdleClock(int participants, std::uint64_t jump) {
  return std::make_shared<IdleClockImpl>(participants, jump);
}

}  // namespace fakecuda
