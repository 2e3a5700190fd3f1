// Copyright 2026 The cuhal Authors.
// The per-thread-default-stream mode of the `_ptds` entry points (fakecuda/entry/per_thread_entry.cc).
#ifndef CUHAL_FAKECUDA_INTERNAL_PER_THREAD_MODE_H_
#define CUHAL_FAKECUDA_INTERNAL_PER_THREAD_MODE_H_

namespace fakecuda {

namespace internal {
inline thread_local bool t_implicit_stream_per_thread = false;
}  // namespace internal

// True while a `_ptds` entry point (cuMemcpyHtoD_v2_ptds, ...) runs on the calling thread: the
// default stream those synchronous calls use implicitly (NULL or CU_STREAM_LEGACY inside the fake)
// is then the calling thread's per-thread default stream. DriverState::ResolveStream honours it.
inline bool ImplicitStreamIsPerThread() { return internal::t_implicit_stream_per_thread; }

// Sets the mode for its scope. Thread-safety: per thread. Not copyable (a scope).
class ScopedPerThreadDefaultStream {
 public:
  ScopedPerThreadDefaultStream() : previous_(internal::t_implicit_stream_per_thread) {
    internal::t_implicit_stream_per_thread = true;
  }
  ~ScopedPerThreadDefaultStream() { internal::t_implicit_stream_per_thread = previous_; }
  ScopedPerThreadDefaultStream(const ScopedPerThreadDefaultStream&) = delete;
  ScopedPerThreadDefaultStream& operator=(const ScopedPerThreadDefaultStream&) = delete;

 private:
  bool previous_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_PER_THREAD_MODE_H_
