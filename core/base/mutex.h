// Copyright 2026 The cuhal Authors.
// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with clang thread-safety
// annotations, so that "guarded by" is checked by the compiler (-Wthread-safety under clang; the
// annotations compile to nothing under GCC).
#ifndef CUHAL_CORE_BASE_MUTEX_H_
#define CUHAL_CORE_BASE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define CUHAL_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define CUHAL_THREAD_ANNOTATION_(x)
#endif

#define CUHAL_CAPABILITY(x) CUHAL_THREAD_ANNOTATION_(capability(x))
#define CUHAL_SCOPED_CAPABILITY CUHAL_THREAD_ANNOTATION_(scoped_lockable)
#define CUHAL_GUARDED_BY(x) CUHAL_THREAD_ANNOTATION_(guarded_by(x))
#define CUHAL_PT_GUARDED_BY(x) CUHAL_THREAD_ANNOTATION_(pt_guarded_by(x))
#define CUHAL_REQUIRES(...) CUHAL_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define CUHAL_EXCLUDES(...) CUHAL_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define CUHAL_ACQUIRE(...) CUHAL_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define CUHAL_RELEASE(...) CUHAL_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define CUHAL_ACQUIRED_AFTER(...) CUHAL_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))
#define CUHAL_NO_THREAD_SAFETY_ANALYSIS CUHAL_THREAD_ANNOTATION_(no_thread_safety_analysis)

namespace cuhal {

// A non-recursive mutex. Ownership: a plain member of the object it guards; neither copyable nor
// movable. Thread-safety: that is its purpose. Stream ordering: none (host-side only).
class CUHAL_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;             // a lock is tied to one object's address
  Mutex& operator=(const Mutex&) = delete;  // ditto

  void Lock() CUHAL_ACQUIRE() { mu_.lock(); }
  void Unlock() CUHAL_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for a scope.
class CUHAL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) CUHAL_ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() CUHAL_RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;             // one scope, one unlock
  MutexLock& operator=(const MutexLock&) = delete;  // ditto

 private:
  Mutex& mu_;
};

// A condition variable used with a Mutex the caller holds. Spurious wake-ups happen: callers
// loop on their predicate.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;             // waiters block on its address
  CondVar& operator=(const CondVar&) = delete;  // ditto

  void Wait(Mutex& mu) CUHAL_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
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
