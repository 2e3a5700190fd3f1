// Copyright 2026 The cuhal Authors.
// How the fake's simulated copy engines touch device and pinned memory: the bytes a memset or a
// copy (on a stream or as a graph node) moves.
//
// On the GPU two streams with no order between them may write the same bytes at once; the
// result is unspecified but nothing crashes. On the fake, each stream's work runs on a lane
// thread, so the same racy program makes two host threads write the same bytes at once: a data
// race in C++ terms, which ThreadSanitizer would report from inside the fake, pointing at
// fakecuda/ instead of at the program. That race is the program's, and the race detector
// (fakecuda/race/race_detector.h) reports it in CUDA's terms (which call, which stream, which
// bytes). So under ThreadSanitizer the engines' byte moves are excluded from its view, and only
// those: the fake's own state (queues, events, pools, the detector) stays checked. Kernels'
// memory accesses are not covered here: a kernel's loads and stores are the interpreter's (see
// fakecuda/ptx/).
//
// Functions only; thread-safe as memmove/memset are. No stream-ordering rule of its own: the
// caller runs them inside an op body, in that op's place in its stream.
#ifndef CUHAL_FAKECUDA_INTERNAL_ENGINE_ACCESS_H_
#define CUHAL_FAKECUDA_INTERNAL_ENGINE_ACCESS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SANITIZE_THREAD__)
#define CUHAL_FAKECUDA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUHAL_FAKECUDA_TSAN 1
#endif
#endif

#if defined(CUHAL_FAKECUDA_TSAN)
extern "C" void __tsan_ignore_thread_begin();  // NOLINT: ThreadSanitizer's runtime interface
extern "C" void __tsan_ignore_thread_end();    // NOLINT
#endif

namespace fakecuda {

// While one lives, this thread's plain memory accesses are invisible to ThreadSanitizer (its
// synchronization is still seen). A no-op in other builds.
class EngineAccessScope {
 public:
#if defined(CUHAL_FAKECUDA_TSAN)
  EngineAccessScope() { __tsan_ignore_thread_begin(); }
  ~EngineAccessScope() { __tsan_ignore_thread_end(); }
#else
  // User-provided (not defaulted): a scope object is then not an "unused variable".
  EngineAccessScope() {}   // NOLINT(modernize-use-equals-default)
  ~EngineAccessScope() {}  // NOLINT(modernize-use-equals-default)
#endif
  EngineAccessScope(const EngineAccessScope&) = delete;
  EngineAccessScope& operator=(const EngineAccessScope&) = delete;
};

// memmove of [from, from + n) to [to, to + n) by a copy engine.
inline void EngineMove(std::byte* to, const std::byte* from, std::size_t n) {
  EngineAccessScope scope;
  std::memmove(to, from, n);
}

// Fills `count` elements of `elem` bytes (1, 2 or 4) at `to` with the low bytes of `value`, as
// cuMemsetD8/D16/D32 do (little-endian).
inline void EngineFill(std::byte* to, unsigned value, std::size_t elem, std::size_t count) {
  EngineAccessScope scope;
  if (elem == 1) {
    std::memset(to, static_cast<int>(value & 0xFF), count);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (elem == 2) {
      auto v = static_cast<std::uint16_t>(value);
      std::memcpy(to + i * 2, &v, 2);
    } else {
      auto v = static_cast<std::uint32_t>(value);
      std::memcpy(to + i * 4, &v, 4);
    }
  }
}

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_ENGINE_ACCESS_H_
