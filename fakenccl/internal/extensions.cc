// Copyright 2026 The cuhal Authors.
// The Engine's part of the nccl.h entry points that arrived after cuhal's table: ncclCommShrink
// (a split whose excluded ranks take part as NCCL_SPLIT_NOCOLOR, communicator.cc), ncclCommRevoke,
// buffer registration (ncclCommRegister/Deregister) and windows (ncclCommWindowRegister/
// Deregister). The fake moves data the same way whether a buffer is registered or not, so
// registrations and windows are bookkeeping: a handle answers what NCCL answers for it (found,
// counted, refused) and nothing else depends on it. Checks follow NCCL 2.28.9's source in its
// order. UNMEASURED, all of it: the GPU run of ci/gpu-probes/ncclx_probe.cc did not happen
// (docs/fakenccl.md, "Entry points after 2.18").
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <string>

#include "fakenccl/internal/engine.h"
#include "fakenccl/internal/engine_state.h"

namespace fakenccl::internal {
namespace {

// Registration and window handles: opaque non-null values with a tag of their own (never
// dereferenceable, never equal to a communicator's encoding).
constexpr std::uintptr_t kRegistrationTag = 0x5;
constexpr std::uintptr_t kWindowTag = 0x9;
constexpr std::uintptr_t kPage = 4096;  // NCCL's registration cache rounds ranges to pages

std::uint64_t NextId() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void* Encode(std::uint64_t id, std::uintptr_t tag) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>((id << 4) | tag));
}

std::uint64_t Decode(const void* value, std::uintptr_t tag) {
  auto v = reinterpret_cast<std::uintptr_t>(value);
  return (v & 0xF) == tag ? static_cast<std::uint64_t>(v >> 4) : 0;
}

}  // namespace

ncclResult_t Engine::Shrink(ncclComm_t parent, std::span<const int> exclude, int blocking,
                            bool in_group, ncclComm_t* newcomm, bool* child_blocking,
                            std::string* text) {
  return SplitOrShrink(parent, 0, -1, exclude, blocking, in_group, newcomm, child_blocking, text,
                       "ncclCommShrink");
}

ncclResult_t Engine::Revoke(ncclComm_t comm, int flags, std::string* text) {
  text->clear();
  if (comm == nullptr) return ncclSuccess;  // NCCL 2.28.9: a NULL comm revokes nothing
  if (flags != NCCL_REVOKE_DEFAULT) return ncclInvalidArgument;
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclCommRevoke", text);
  if (l.error != ncclSuccess) return l.error;  // NCCL reads the object: a crash, or garbage
  CommHandle& h = *l.handle;
  // Refused while a destroy or finalize is under way, and a second time.
  if (h.destroy_requested || h.finalized || h.revoked) return ncclInvalidArgument;
  h.revoked = true;
  h.finalized = true;  // NCCL sets finalizeCalled
  return ncclSuccess;
}

ncclResult_t Engine::Register(ncclComm_t comm, const void* buff, std::size_t size, void** handle,
                              std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclCommRegister", text);
  if (l.error != ncclSuccess) return l.error;
  if (handle == nullptr) {
    // NCCL 2.28.9 writes through it (a crash); the fake refuses.
    *text = "fakenccl: ncclCommRegister : handle argument is NULL (NCCL writes through it)";
    return ncclInvalidArgument;
  }
  const auto begin = reinterpret_cast<std::uintptr_t>(buff) & ~(kPage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(buff) + size + kPage - 1) & ~(kPage - 1);
  auto& regs = l.handle->registrations;
  for (auto& [id, reg] : regs) {
    if (reg.begin <= begin && reg.end >= end) {  // inside a registered range: the same handle
      ++reg.refs;
      *handle = Encode(id, kRegistrationTag);
      return ncclSuccess;
    }
  }
  const std::uint64_t id = NextId();
  regs[id] = CommHandle::Registration{begin, end, 1};
  *handle = Encode(id, kRegistrationTag);
  return ncclSuccess;
}

ncclResult_t Engine::Deregister(ncclComm_t comm, void* handle, std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclCommRegister", text);  // NCCL's text names Register
  if (l.error != ncclSuccess) return l.error;
  if (handle == nullptr) return ncclSuccess;
  auto& regs = l.handle->registrations;
  auto it = regs.find(Decode(handle, kRegistrationTag));
  if (it == regs.end()) {
    *text = "Deregister: Could not find handle";
    return ncclInvalidUsage;
  }
  if (--it->second.refs == 0) regs.erase(it);
  return ncclSuccess;
}

ncclResult_t Engine::WindowRegister(ncclComm_t comm, const void* buff, std::size_t size,
                                    ncclWindow_t* win, int flags, std::string* text) {
  // NCCL 2.28.9: a NULL buffer or a zero size registers nothing and succeeds, *win untouched.
  if (buff == nullptr || size == 0) return ncclSuccess;
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclCommWindowRegister", text);
  if (l.error != ncclSuccess) return l.error;  // NCCL dereferences it: a crash
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  if (win == nullptr) {
    *text = "fakenccl: ncclCommWindowRegister : win argument is NULL (NCCL writes through it)";
    return ncclInvalidArgument;
  }
  const std::uint64_t id = NextId();
  l.handle->windows[id] =
      CommHandle::Window{reinterpret_cast<std::uintptr_t>(buff), size, flags};
  *win = static_cast<ncclWindow_t>(Encode(id, kWindowTag));
  return ncclSuccess;
}

ncclResult_t Engine::WindowDeregister(ncclComm_t comm, ncclWindow_t win, std::string* text) {
  if (win == nullptr) return ncclSuccess;  // NCCL 2.28.9: nothing to do, whatever the comm
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclCommWindowDeregister", text);
  if (l.error != ncclSuccess) return l.error;
  auto& windows = l.handle->windows;
  auto it = windows.find(Decode(win, kWindowTag));
  if (it == windows.end()) {
    // UNMEASURED: NCCL looks the window up in its own tables (a crash or garbage on a foreign
    // value); the fake refuses it.
    *text = Fmt("fakenccl: ncclCommWindowDeregister: %p is not a live window of this "
                "communicator",
                static_cast<void*>(win));
    return ncclInvalidArgument;
  }
  windows.erase(it);
  return ncclSuccess;
}

int Engine::ReadyRanks(ncclComm_t comm) const {
  cuhal::MutexLock lock(mu_);
  auto it = handles_.find(DecodeComm(comm));
  if (it == handles_.end() || it->second->state != CommHandle::State::kReady) return 0;
  return it->second->comm->nranks;
}

}  // namespace fakenccl::internal
