// Copyright 2026 The cuhal Authors.
// Per-thread state of the fake driver: the current-context stack and a stable thread key.
#ifndef CUHAL_FAKECUDA_INTERNAL_THREAD_STATE_H_
#define CUHAL_FAKECUDA_INTERNAL_THREAD_STATE_H_

#include <cstdint>
#include <vector>

namespace fakecuda {

// The calling thread's context stack (context ids, top at back) for the driver instance with
// `serial`; a stack left over from another driver instance is discarded first.
std::vector<std::uint64_t>& ThreadContextStack(std::uint64_t serial);
// A process-unique, never-reused key for the calling thread.
std::uint64_t ThreadKey();

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_THREAD_STATE_H_
