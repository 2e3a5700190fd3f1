// Copyright 2026 The cuhal Authors.
// The engine's shared helpers; see engine_state.h.
#include "fakenccl/internal/engine_state.h"

#include <cstdarg>
#include <cstdio>

namespace fakenccl {
namespace internal {

std::string Fmt(const char* format, ...) {
  char buffer[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

std::string RankList(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

void NotifyFakecuda() {
  if (const FakecudaHooks* hooks = Hooks()) hooks->notify_stream_work();
}

}  // namespace internal
}  // namespace fakenccl
