// Copyright 2026 The cuhal Authors.
// The engine's shared state: the rendezvous structures (every one guarded by Engine::mu_, see
// engine.h's invariant 1) and the small helpers that every part of the engine uses (clock
// operations, busy/blocked scopes, message formatting). Internal to fakenccl.
//
// Who owns what: communicator.cc (lifecycle, split) creates CommShared, InitRendezvous and
// SplitRendezvous; matching.cc (call matching) creates Slot and Task and moves Slots out of kOpen;
// execution.cc (data movement) claims kReady Slots, runs them and finishes Tasks.
#ifndef CUHAL_FAKENCCL_INTERNAL_ENGINE_STATE_H_
#define CUHAL_FAKENCCL_INTERNAL_ENGINE_STATE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fakecuda/virtual_clock.h"
#include "fakenccl/internal/engine.h"
#include "fakenccl/internal/fakecuda_hooks.h"
#include "fakenccl/internal/shm_transport.h"

namespace fakenccl {
namespace internal {

// ---- The rendezvous structures (all guarded by Engine::mu_) ----------------------------------

// One rank's part in a Slot.
struct Participant {
  bool posted = false;
  std::weak_ptr<Task> task;  // weak: a Slot never keeps a Task alive (no cycles)
  CallDesc desc;
};

struct Slot {
  enum class State { kOpen, kReady, kClaimed, kDone, kFailed };
  bool p2p = false;
  std::uint64_t seq = 0;  // collective sequence number, or k of the k-th send from src to dst
  int src = -1;
  int dst = -1;
  std::vector<Participant> parts;  // collective: one per rank; point to point: [0] send, [1] recv
  State state = State::kOpen;
  std::string failure;
  std::vector<int> bad_ranks;  // ranks whose buffers were not device memory
  std::size_t finished = 0;    // participants whose Task finished
};

struct RankState {
  int device = -1;
  std::uint64_t handle_id = 0;  // 0 once destroyed or aborted
  bool destroyed = false;
  bool aborted = false;
  bool dead = false;  // rank death (fault injection)
  ncclResult_t async_error = ncclSuccess;
  std::string async_text;
  std::uint64_t calls = 0;  // communication calls, for rank death
  std::uint64_t next_coll = 0;
  std::uint64_t next_split = 0;
  std::uint64_t next_task = 0;
  std::vector<std::uint64_t> sends;  // per peer: sends posted so far
  std::vector<std::uint64_t> recvs;  // per peer: receives posted so far
  std::vector<std::weak_ptr<Task>> pending;
};

struct SplitRendezvous {
  struct Post {
    bool posted = false;
    int color = 0;
    int key = 0;
    std::uint64_t child = 0;  // handle id; 0 for NCCL_SPLIT_NOCOLOR
  };
  std::uint64_t seq = 0;
  Deadline start;  // on the parent communicator's clock
  std::weak_ptr<CommShared> parent;
  std::vector<Post> posts;
  int count = 0;
  bool done = false;
  ncclResult_t error = ncclSuccess;
  std::string text;
};

struct CommShared {
  std::uint64_t id = 0;
  std::string label;  // "communicator #3 (4 ranks)"
  int nranks = 0;
  std::shared_ptr<fakecuda::IdleClock> clock;  // its ranks' virtual clock; null without fakecuda
  std::vector<RankState> ranks;
  std::map<std::uint64_t, std::shared_ptr<Slot>> colls;
  std::map<std::tuple<int, int, std::uint64_t>, std::shared_ptr<Slot>> p2ps;
  std::map<std::uint64_t, std::shared_ptr<SplitRendezvous>> splits;
  // Across processes (shm_transport.h): this process's one rank of the communicator; the other
  // RankStates are placeholders, and calls meet in the segment instead of `colls` and `p2ps`.
  std::shared_ptr<ShmComm> shm;
};

struct InitRendezvous {
  std::string key;
  const char* api = "";
  int nranks = 0;
  std::shared_ptr<fakecuda::IdleClock> clock;  // the joined ranks'; becomes the communicator's
  Deadline start;
  std::vector<std::uint64_t> by_rank;  // handle id per rank; 0 until it arrives
  std::vector<std::uint64_t> members;  // every handle that joined
  int count = 0;
  bool done = false;
};

struct Task {
  std::shared_ptr<CommShared> comm;
  int rank = 0;
  std::uint64_t ordinal = 0;
  std::vector<std::pair<std::shared_ptr<Slot>, std::size_t>> entries;  // (slot, participant)
  std::vector<CUstream> streams;  // one leg per distinct stream
  std::vector<char> at_head;
  std::vector<char> leg_done;
  bool first_head = false;  // some leg reached its head; `start` is set
  bool started = false;     // every leg is at its head
  Deadline start;
  bool done = false;
  // Across processes: entries[i]'s descriptor in the segment; the leg that claims the Task moves
  // the data of all its entries (shm_claimed), the other legs wait for shm_finished.
  std::vector<ShmTicket> tickets;
  bool shm_claimed = false;
  bool shm_finished = false;
};

// ---- Helpers ----------------------------------------------------------------------------------

// One slice of a host wait (invariant 5).
inline constexpr auto kHostSlice = std::chrono::milliseconds(10);

// The calling thread is blocked inside the fake (fakecuda/virtual_clock.h), through the hooks
// (nothing happens without fakecuda). A scope object of the calling thread: not shared, never
// moved; no stream ordering of its own.
class Blocked {
 public:
  Blocked() : hooks_(Hooks()) {
    if (hooks_ != nullptr) hooks_->enter_blocked();
  }
  ~Blocked() {
    if (hooks_ != nullptr) hooks_->leave_blocked();
  }
  Blocked(const Blocked&) = delete;             // one enter, one leave
  Blocked& operator=(const Blocked&) = delete;  // ditto

 private:
  const FakecudaHooks* hooks_;
};

// The calling thread moves data for every rank of a collective: no group's clock advances while
// it runs. Same ownership and threading as Blocked.
class Busy {
 public:
  Busy() : hooks_(Hooks()) {
    if (hooks_ != nullptr) hooks_->enter_busy();
  }
  ~Busy() {
    if (hooks_ != nullptr) hooks_->leave_busy();
  }
  Busy(const Busy&) = delete;             // one enter, one leave
  Busy& operator=(const Busy&) = delete;  // ditto

 private:
  const FakecudaHooks* hooks_;
};

// Null-tolerant clock operations (a clock is null when fakecuda cannot be reached).
inline void ClockBind(const std::shared_ptr<fakecuda::IdleClock>& clock, int index) {
  if (clock) clock->Bind(index);
}
inline void ClockLeave(const std::shared_ptr<fakecuda::IdleClock>& clock, int index) {
  if (clock) clock->Leave(index);
}
inline void ClockPoll(const std::shared_ptr<fakecuda::IdleClock>& clock, int index) {
  if (clock) clock->NotePoll(index);
}
inline void ClockProgress(const std::shared_ptr<fakecuda::IdleClock>& clock) {
  if (clock) clock->NoteProgress();
}

// printf-style formatting into a std::string (messages are at most 4 KiB).
std::string Fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
// "0, 2, 3".
std::string RankList(const std::vector<int>& ranks);
// Wakes fakecuda's waiting threads after a `ready` predicate may have changed (without mu_).
void NotifyFakecuda();

}  // namespace internal
}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_INTERNAL_ENGINE_STATE_H_
