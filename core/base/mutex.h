// Copyright 2026 The cuhal Authors.
// Lock discipline written as Clang thread-safety annotations, and the annotated mutex, scoped lock,
// scoped unlock and condition variable that make them checkable.
//
// Header-only and dependency-free: the core and both fakes use it (the fakes include it as they
// include the table declarations, header-only). With Clang and -Wthread-safety (the
// `thread-safety` CMake preset, built in CI) every access to a member marked
// CUHAL_GUARDED_BY(mu) and every call of a function marked CUHAL_REQUIRES(mu) is checked to hold
// `mu`; with GCC the macros expand to nothing and the types cost what std::mutex costs.
//
// How to write a lock discipline with them:
//  - a mutex-guarded member: `int count_ CUHAL_GUARDED_BY(mu_);` (a pointer whose pointee is
//    guarded: CUHAL_PT_GUARDED_BY);
//  - a helper that needs the lock: `void Helper() CUHAL_REQUIRES(mu_);` (free functions:
//    `CUHAL_REQUIRES(st->mu)`); one that takes it itself: CUHAL_EXCLUDES(mu_);
//  - take it for a scope: `MutexLock lock(mu_);` (it may be Unlock()ed and Lock()ed again in that
//    same function);
//  - give it up for a scope inside a function that holds it (to run user code, say):
//    `{ MutexUnlock unlocked(mu_); ... }`;
//  - wait: `cv_.WaitFor(mu_, duration)` (requires mu_, releases it while waiting), or, where a
//    MutexLock is at hand, a std::condition_variable_any waiting on it.
// The analysis is intraprocedural: a lock passed by reference proves nothing to the callee, so
// helpers say CUHAL_REQUIRES(mu) instead of taking a lock parameter.
#ifndef CUHAL_CORE_BASE_MUTEX_H_
#define CUHAL_CORE_BASE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define CUHAL_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define CUHAL_THREAD_ANNOTATION_(x)  // GCC has no thread-safety analysis
#endif

#define CUHAL_CAPABILITY(x) CUHAL_THREAD_ANNOTATION_(capability(x))
#define CUHAL_SCOPED_CAPABILITY CUHAL_THREAD_ANNOTATION_(scoped_lockable)
#define CUHAL_GUARDED_BY(x) CUHAL_THREAD_ANNOTATION_(guarded_by(x))
#define CUHAL_PT_GUARDED_BY(x) CUHAL_THREAD_ANNOTATION_(pt_guarded_by(x))
#define CUHAL_ACQUIRED_BEFORE(...) CUHAL_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define CUHAL_ACQUIRED_AFTER(...) CUHAL_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))
#define CUHAL_REQUIRES(...) CUHAL_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define CUHAL_EXCLUDES(...) CUHAL_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define CUHAL_ACQUIRE(...) CUHAL_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define CUHAL_RELEASE(...) CUHAL_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define CUHAL_TRY_ACQUIRE(...) CUHAL_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define CUHAL_ASSERT_CAPABILITY(x) CUHAL_THREAD_ANNOTATION_(assert_capability(x))
#define CUHAL_RETURN_CAPABILITY(x) CUHAL_THREAD_ANNOTATION_(lock_returned(x))
#define CUHAL_NO_THREAD_SAFETY_ANALYSIS CUHAL_THREAD_ANNOTATION_(no_thread_safety_analysis)

namespace cuhal {

class CondVar;

// A std::mutex the analysis knows. Not recursive. Also BasicLockable (lock/unlock), for code that
// needs a standard lock type.
//
// Lock spins briefly (kSpins tries, a CPU pause between them) before it sleeps: the sections it
// guards are a few hundred nanoseconds, and glibc's mutex goes to sleep in the kernel at the
// first contended try, a futex wait and wake costing microseconds of CPU to both threads (a queue
// submission and the device's worker retiring operations contend exactly so). Absl's Mutex
// spins for the same reason.
class CUHAL_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;             // a mutex has an identity
  Mutex& operator=(const Mutex&) = delete;  // ditto

  void Lock() CUHAL_ACQUIRE() {
    if (!mu_.try_lock()) LockSlow();
  }
  void Unlock() CUHAL_RELEASE() { mu_.unlock(); }
  bool TryLock() CUHAL_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  void lock() CUHAL_ACQUIRE() { Lock(); }
  void unlock() CUHAL_RELEASE() { mu_.unlock(); }

  // Tells the analysis that the caller holds this mutex, where it cannot see it (a callback that
  // the holder of the lock calls through a std::function, say). Checks nothing at run time.
  void AssertHeld() const CUHAL_ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  static constexpr int kSpins = 64;
  void LockSlow() {
    for (int i = 0; i < kSpins; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield" ::: "memory");
#endif
      if (mu_.try_lock()) return;
    }
    mu_.lock();
  }
  std::mutex mu_;
};

// Holds `mu` from construction to destruction; may be released and retaken in between, within
// the function that owns it (MutexLock lock(mu); ... lock.Unlock(); ... lock.Lock();). Also
// BasicLockable (lock/unlock), so that a std::condition_variable_any can wait on it; the analysis
// sees such a wait as holding the lock throughout, which is what the caller observes.
class CUHAL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) CUHAL_ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() CUHAL_RELEASE() {
    if (held_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;             // owns a lock
  MutexLock& operator=(const MutexLock&) = delete;  // ditto

  void Unlock() CUHAL_RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  void Lock() CUHAL_ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }
  void unlock() CUHAL_RELEASE() { Unlock(); }
  void lock() CUHAL_ACQUIRE() { Lock(); }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// Releases `mu`, which the caller holds, from construction to destruction (and retakes it then,
// also when an exception unwinds the scope).
class CUHAL_SCOPED_CAPABILITY MutexUnlock {
 public:
  explicit MutexUnlock(Mutex& mu) CUHAL_RELEASE(mu) : mu_(mu) { mu_.Unlock(); }
  ~MutexUnlock() CUHAL_RELEASE() { mu_.Lock(); }
  MutexUnlock(const MutexUnlock&) = delete;             // owns an unlocked state
  MutexUnlock& operator=(const MutexUnlock&) = delete;  // ditto

 private:
  Mutex& mu_;
};

// A std::condition_variable that waits on a Mutex the caller holds (released while waiting,
// held again on return, as std::condition_variable::wait).
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;             // waiters refer to it
  CondVar& operator=(const CondVar&) = delete;  // ditto

  void Wait(Mutex& mu) CUHAL_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Returns std::cv_status::timeout when `timeout` passed without a notification.
  template <typename Rep, typename Period>
  std::cv_status WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout)
      CUHAL_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    std::cv_status status = cv_.wait_for(lock, timeout);
    lock.release();
    return status;
  }
  // Waits until notified or `deadline`; false when the deadline passed. A deadline of
  // time_point::max() waits without a timeout.
  bool WaitUntil(Mutex& mu, std::chrono::steady_clock::time_point deadline) CUHAL_REQUIRES(mu) {
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      Wait(mu);
      return true;
    }
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void NotifyOne() noexcept { cv_.notify_one(); }
  void NotifyAll() noexcept { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_BASE_MUTEX_H_
