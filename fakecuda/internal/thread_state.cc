// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/thread_state.h"

#include <atomic>

namespace fakecuda {
namespace {
struct ThreadState {
  std::uint64_t serial = 0;
  std::vector<std::uint64_t> stack;
  std::uint64_t key = 0;
};
thread_local ThreadState t_state;
std::atomic<std::uint64_t> g_next_key{1};
}  // namespace

std::vector<std::uint64_t>& ThreadContextStack(std::uint64_t serial) {
  if (t_state.serial != serial) {
    t_state.serial = serial;
    t_state.stack.clear();
  }
  return t_state.stack;
}

std::uint64_t ThreadKey() {
  if (t_state.key == 0) t_state.key = g_next_key.fetch_add(1);
  return t_state.key;
}

}  // namespace fakecuda
