// Copyright 2026 The cuhal Authors.
// fakenccl's engine: communicators, their rendezvous (initialization, split, collectives and
// point-to-point), and the execution of communication on fakecuda streams and memory. Internal to
// fakenccl; the entry points (entry_points.cc) check arguments and keep the per-thread state
// (last error, group), then call into this.
//
// Files (one concern each; the Engine's methods are defined in the file of their concern):
//   engine.h/.cc          the Engine, its handle table, clocks and inspection
//   engine_state.h/.cc    the rendezvous structures below (CommShared, Slot, Task, ...) and helpers
//   communicator.h/.cc    communicator lifecycle: init, split, finalize/destroy/abort, errors,
//                         queries, user reduction operators
//   matching.h/.cc        call matching: argument checks, posting calls into Slots, mismatch
//                         detection, timeouts, the stream work's `ready` predicate
//   execution.h/.cc       execution: the data movement and reductions of a ready Slot, the stream
//                         work body
//
// Model. A communicator of n ranks is one CommShared; each rank's ncclComm_t is a CommHandle
// (ranks are threads, or one thread driving several handles inside a group). A communication call
// is captured as a CallDesc when it is made; at the end of its group (a lone call is its own
// group) each handle's calls of the group become one Task, enqueued as fakecuda StreamWork on each
// distinct stream the calls named (a "leg" per stream). Calls meet other ranks' calls in Slots:
//   - a collective slot per communicator sequence number: the k-th collective call (count > 0)
//     of every rank meets in slot k;
//   - a point-to-point slot per (sender, receiver, k): the k-th ncclSend from a to b meets the
//     k-th ncclRecv at b from a (NCCL's matching rule), whatever the groups around them.
//
// Invariants of the rendezvous (the whole engine relies on them):
//  1. One mutex (Engine::mu_) guards every structure below, written as Clang thread-safety
//     annotations (the engine's own members CUHAL_GUARDED_BY(mu_), the *Locked helpers
//     CUHAL_REQUIRES(mu_), the methods that take it CUHAL_EXCLUDES(mu_); checked by the
//     `thread-safety` preset). The structures reached through shared_ptrs (CommShared, Slot,
//     Task, the rendezvous) are guarded by it too, which the analysis cannot express: they are
//     touched only in *Locked helpers or under a MutexLock of mu_. It is taken inside fakecuda's
//     `ready` predicates, which run under the fake driver's lock, so it is NEVER held while
//     calling fakecuda (EnqueueStreamWork, NotifyStreamWork, TranslateDevicePointer,
//     StreamDevice): lock order is driver lock -> mu_, never the reverse.
//  2. A Slot's participants are written only while it is kOpen. It leaves kOpen exactly once:
//     to kReady when every participant has posted and every participant's Task has all its legs
//     at the head of their streams (so all ranks' earlier stream work is complete: the inputs
//     are a consistent snapshot), or to kFailed (mismatch, timeout, abort, bad pointer).
//  3. A Task's legs become runnable (`ready` true) only when every Slot of the Task has left
//     kOpen, or the Task's rank aborted. Whichever leg body runs first executes every kReady Slot
//     of the Task (kReady -> kClaimed -> kDone, the data moved without mu_, reading every input
//     into host buffers before writing any output, so in-place and overlapping buffers are
//     safe); a body that finds a Slot kClaimed by another thread waits for kDone, which cannot
//     deadlock because a claimer waits for nothing. Each Slot is executed once, for all ranks.
//  4. A rank's Task cannot complete before its Slots are kDone or kFailed; its stream therefore
//     never runs past a collective whose outputs are not yet written.
//  5. Every wait is bounded, on two clocks (Expired):
//     - the virtual clock of the group (fakecuda/virtual_clock.h): one IdleClock per
//       communicator (CommShared::clock, its participants are the ranks, each bound to the
//       thread that last called for it, or gone once destroyed, aborted or dead) and one per
//       initialization rendezvous (the joined ranks; it becomes the communicator's). Virtual time
//       passes only when every rank of the group is idle (blocked in fakecuda's or fakenccl's
//       waits, polling ncclCommGetAsyncError with nothing to show, gone, its thread exited), and
//       then jumps past every pending deadline of the group: a missing rank is reported at once,
//       a busy one never;
//     - a wall-clock backstop (NcclOptions::wall_timeout_ms), for a rank that blocks where the
//       fake cannot see it, and for ranks that have not joined an initialization yet (the fake
//       cannot know which thread they will be, so they are never counted idle).
//     A Task whose Slots stay kOpen past a deadline that started when its first leg reached its
//     head fails those Slots, naming the missing ranks (ncclRemoteError when one of them died or
//     aborted, else ncclInvalidUsage), and runs as a no-op. Mismatched calls fail their Slot at
//     once, when the second call posts. Every state change a waiter may be waiting for notes
//     progress on the group's clock (a round in progress starts over). Host waits are 10 ms
//     slices, each inside a fakecuda blocked state (an observation of the clock).
//  6. Stream work closures hold shared_ptrs to the Engine, the Task and its CommShared: the
//     engine's state outlives the FakeNccl and the handles for as long as queued work needs it.
//     Nothing here holds a CommHandle except the handle table.
//  7. Nothing escapes: stream work (LegReady, RunLeg) catches everything and fails its Task's
//     Slots with ncclInternalError; the entry points catch everything at the C boundary.
#ifndef CUHAL_FAKENCCL_INTERNAL_ENGINE_H_
#define CUHAL_FAKENCCL_INTERNAL_ENGINE_H_

#include <cuda.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/base/mutex.h"
#include "fakecuda/virtual_clock.h"
#include "fakenccl/datatypes.h"

namespace fakenccl {

class NcclFaultInjector;

namespace internal {

enum class CallKind {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAlltoAll,
  kGather,
  kScatter,
  kSend,
  kRecv,
};
const char* CallKindApi(CallKind kind);  // "ncclAllReduce"
bool IsReduction(CallKind kind);
bool HasRoot(CallKind kind);
bool IsPointToPoint(CallKind kind);

// A reduction as captured at call time (a user op's scalar is copied then, as NCCL does, since
// the op may be destroyed before the group ends).
struct ReduceOp {
  ReduceKind kind = ReduceKind::kSum;
  ncclRedOp_t handle = ncclSum;   // as the user passed it, for messages
  bool scalar_on_device = false;  // PreMulSum with ncclScalarDevice: read when the work runs
  CUdeviceptr scalar_ptr = 0;
  ScalarBytes scalar{};
};

// One rank's communication call. The caller's data type and operator arrive as raw ints
// (raw_type, raw_op: C callers may pass any int, and an out-of-range value must not be loaded as
// the enum); CheckCall validates them and fills `type` and `op`.
struct CallDesc {
  CallKind kind = CallKind::kAllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  std::size_t count = 0;  // per NCCL's API: sendcount for AllGather, recvcount for ReduceScatter
  ncclDataType_t type = ncclFloat32;
  ReduceOp op;
  int root = 0;  // root, or the peer of a Send/Recv
  CUstream stream = nullptr;
  int raw_type = 0;
  int raw_op = 0;
};

// A call waiting in the calling thread's group for its ncclGroupEnd.
struct GroupOp {
  std::uint64_t handle_id = 0;
  CallDesc desc;
};

// When a wait began, on both clocks (invariant 5).
struct Deadline {
  std::uint64_t tick = 0;  // the group's IdleClock::Now()
  std::chrono::steady_clock::time_point wall;
};

struct Task;
struct Slot;
struct CommShared;
struct InitRendezvous;
struct SplitRendezvous;
struct ShmFailure;
struct RankState;

// A reduction operator made by ncclRedOpCreatePreMulSum.
struct UserOp {
  bool live = false;
  ncclDataType_t type = ncclFloat32;
  bool on_device = false;
  CUdeviceptr device_ptr = 0;
  ScalarBytes scalar{};
};

// One rank's ncclComm_t.
struct CommHandle {
  enum class State { kInitializing, kReady, kFailed };
  std::uint64_t id = 0;
  const char* created_by = "";
  int device = -1;
  int cc_major = 0;
  bool blocking = true;
  State state = State::kInitializing;
  ncclResult_t init_error = ncclSuccess;
  std::string init_text;
  std::shared_ptr<InitRendezvous> init;    // while initializing through ncclCommInitRank*
  std::shared_ptr<SplitRendezvous> split;  // while initializing through ncclCommSplit
  std::shared_ptr<CommShared> comm;        // once kReady
  int rank = -1;
  // While initializing: the rank in the init rendezvous, or the parent rank of a split (the
  // participant its ncclCommGetAsyncError polls count for).
  int init_rank = 0;
  bool finalized = false;
  bool destroy_requested = false;
  bool revoked = false;  // ncclCommRevoke
  // ncclCommRegister's ranges (page-aligned, with reference counts) and ncclCommWindowRegister's
  // windows, by their opaque handle values.
  struct Registration {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    int refs = 0;
  };
  std::map<std::uint64_t, Registration> registrations;
  struct Window {
    std::uintptr_t begin = 0;
    std::size_t size = 0;
    int flags = 0;
  };
  std::map<std::uint64_t, Window> windows;
  std::vector<UserOp> user_ops;  // index = op - ncclNumOps before mangling
};

// What the handle table knows about live communicators, for leak reports.
struct EngineInventory {
  int communicators = 0;
  int reduction_ops = 0;
};

// The engine. Ownership: shared by the FakeNccl that created it and by every stream work closure
// it queued (invariant 6). Thread-safety: every method may be called from any thread; each takes
// mu_ itself (callers never hold it). Stream ordering: see the invariants above.
class Engine : public std::enable_shared_from_this<Engine> {
 public:
  Engine(std::uint64_t timeout_ticks, std::chrono::milliseconds wall_timeout)
      : timeout_ticks_(timeout_ticks), wall_timeout_(wall_timeout) {}
  Engine(const Engine&) = delete;             // shared by closures through shared_ptr
  Engine& operator=(const Engine&) = delete;  // ditto

  std::uint64_t timeout_ticks() const { return timeout_ticks_; }

  // Test hooks (invariant 7): the next `n` executions of a collective's data movement throw;
  // the next `n` CheckCall (every communication entry point) throw with the engine lock held.
  void ThrowInExecutionsForTesting(int n) {
    throw_in_executions_for_testing_.store(n, std::memory_order_relaxed);
  }
  void ThrowInCallsForTesting(int n) {
    throw_in_calls_for_testing_.store(n, std::memory_order_relaxed);
  }

  // ---- Communicator lifetime. Every function sets *text on error (NCCL-like WARN text).
  // ncclCommInitRank/InitRankConfig: joins the rendezvous of `id`. When `wait`, blocks until the
  // communicator forms or fails (then *out is NULL); otherwise returns ncclSuccess with *out set
  // and the handle initializing (the caller returns ncclInProgress, or waits at ncclGroupEnd).
  ncclResult_t InitRank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, int device,
                        int cc_major, bool blocking, bool wait, const char* api, std::string* text)
      CUHAL_EXCLUDES(mu_);
  // Waits until handle `id` is no longer initializing; its result. A failed blocking handle is
  // removed.
  ncclResult_t WaitInitialized(std::uint64_t id, std::string* text) CUHAL_EXCLUDES(mu_);
  // ncclCommInitAll: every rank at once; devices[i] is rank i's device.
  ncclResult_t InitAll(ncclComm_t* comms, std::span<const int> devices,
                       std::span<const int> cc_major, std::string* text) CUHAL_EXCLUDES(mu_);
  // ncclCommSplit. `blocking`: the new config's value, or -1 to inherit the parent's (a NULL
  // config). Blocks until the split completes when blocking and not `in_group`; otherwise
  // returns with *newcomm initializing (the group end waits for it; *child_blocking says whether).
  ncclResult_t Split(ncclComm_t parent, int color, int key, int blocking, bool in_group,
                     ncclComm_t* newcomm, bool* child_blocking, std::string* text)
      CUHAL_EXCLUDES(mu_);
  // ncclCommShrink: a split of the parent in which the ranks of `exclude` (which do not call it)
  // take part as NCCL_SPLIT_NOCOLOR and every caller has color 0 and its rank as key; NCCL's
  // checks of the list first. `blocking` as for Split.
  ncclResult_t Shrink(ncclComm_t parent, std::span<const int> exclude, int blocking,
                      bool in_group, ncclComm_t* newcomm, bool* child_blocking, std::string* text)
      CUHAL_EXCLUDES(mu_);
  // ncclCommRevoke: from then on the handle's communication calls fail with ncclInvalidUsage and
  // it counts as finalized (a later ncclCommRevoke or ncclCommFinalize is refused). An empty
  // *text on error: NCCL says nothing (no WARN).
  ncclResult_t Revoke(ncclComm_t comm, int flags, std::string* text) CUHAL_EXCLUDES(mu_);
  // ncclCommRegister/Deregister and ncclCommWindowRegister/Deregister: per handle tables of
  // registered ranges; handles are opaque values (EncodeRegistration), never pointers.
  ncclResult_t Register(ncclComm_t comm, const void* buff, std::size_t size, void** handle,
                        std::string* text) CUHAL_EXCLUDES(mu_);
  ncclResult_t Deregister(ncclComm_t comm, void* handle, std::string* text) CUHAL_EXCLUDES(mu_);
  ncclResult_t WindowRegister(ncclComm_t comm, const void* buff, std::size_t size,
                              ncclWindow_t* win, int flags, std::string* text)
      CUHAL_EXCLUDES(mu_);
  ncclResult_t WindowDeregister(ncclComm_t comm, ncclWindow_t win, std::string* text)
      CUHAL_EXCLUDES(mu_);
  // The number of ranks of a ready handle's communicator, or 0 (unknown or not ready handle).
  int ReadyRanks(ncclComm_t comm) const CUHAL_EXCLUDES(mu_);
  ncclResult_t Finalize(ncclComm_t comm, std::string* text) CUHAL_EXCLUDES(mu_);
  ncclResult_t Destroy(ncclComm_t comm, std::string* text) CUHAL_EXCLUDES(mu_);
  ncclResult_t Abort(ncclComm_t comm, std::string* text) CUHAL_EXCLUDES(mu_);
  ncclResult_t GetAsyncError(ncclComm_t comm, ncclResult_t* async_error, std::string* text)
      CUHAL_EXCLUDES(mu_);
  // ncclCommCount/UserRank/CuDevice: what = 0, 1, 2.
  ncclResult_t Query(ncclComm_t comm, int what, int* out, const char* op_name, std::string* text)
      CUHAL_EXCLUDES(mu_);

  // ---- Reduction operators.
  // Data types, residences and operators as raw ints (see CallDesc).
  ncclResult_t CreatePreMulSum(ncclRedOp_t* op, const void* scalar, int raw_type,
                               int raw_residence, ncclComm_t comm, std::string* text)
      CUHAL_EXCLUDES(mu_);
  ncclResult_t DestroyRedOp(int raw_op, ncclComm_t comm, std::string* text) CUHAL_EXCLUDES(mu_);

  // ---- Communication.
  // Checks one call as NCCL's ncclEnqueueCheck/taskAppend do (comm, readiness, root, type, op,
  // stream) and, when it is to be launched, appends it to *ops. Applies rank death (`faults`).
  ncclResult_t CheckCall(ncclComm_t comm, const CallDesc& desc, const char* op_name,
                         const NcclFaultInjector& faults, std::vector<GroupOp>* ops,
                         std::string* text) CUHAL_EXCLUDES(mu_);
  // Posts a group's calls to their slots and enqueues one Task per handle on its streams.
  ncclResult_t Launch(std::span<const GroupOp> ops, std::string* text) CUHAL_EXCLUDES(mu_);

  // ---- Inspection.
  EngineInventory Inventory() const CUHAL_EXCLUDES(mu_);
  std::string DescribeLive() const CUHAL_EXCLUDES(mu_);

  // ---- Called from fakecuda stream work (see invariants 2-4).
  bool LegReady(Task& task, std::size_t leg) CUHAL_EXCLUDES(mu_);
  CUresult RunLeg(Task& task, std::size_t leg) CUHAL_EXCLUDES(mu_);

 private:
  struct Lookup {
    CommHandle* handle = nullptr;
    ncclResult_t error = ncclSuccess;
  };
  // Finds `comm`; NULL or unknown handles give ncclInvalidArgument with NCCL's texts.
  Lookup FindLocked(ncclComm_t comm, const char* op_name, std::string* text) CUHAL_REQUIRES(mu_);
  CommHandle* NewHandleLocked(const char* created_by, int device, int cc_major, bool blocking)
      CUHAL_REQUIRES(mu_);
  // NCCL's ncclCommEnsureReady: ncclInvalidArgument while initializing, else the async error.
  ncclResult_t EnsureReadyLocked(CommHandle& h, std::string* text) CUHAL_REQUIRES(mu_);
  // Forms a communicator of the handles; `clock` is the rendezvous' (or null: a new one).
  void FormCommLocked(const std::vector<std::uint64_t>& handle_ids, const std::string& label,
                      std::shared_ptr<fakecuda::IdleClock> clock = nullptr) CUHAL_REQUIRES(mu_);
  void FailInitLocked(std::shared_ptr<InitRendezvous> rv, ncclResult_t error,
                      const std::string& text) CUHAL_REQUIRES(mu_);
  void FormSplitLocked(CommShared& parent, SplitRendezvous& rv) CUHAL_REQUIRES(mu_);
  // Split's and Shrink's body; `api` names the entry point in texts.
  ncclResult_t SplitOrShrink(ncclComm_t parent, int color, int key, std::span<const int> exclude,
                             int blocking, bool in_group, ncclComm_t* newcomm,
                             bool* child_blocking, std::string* text, const char* api)
      CUHAL_EXCLUDES(mu_);
  void FailSplitLocked(CommShared& parent, SplitRendezvous& rv, ncclResult_t error,
                       const std::string& text) CUHAL_REQUIRES(mu_);
  ncclResult_t SplitTimeoutLocked(CommShared& parent, SplitRendezvous& rv) CUHAL_REQUIRES(mu_);
  // Invariant 5's clocks.
  std::shared_ptr<fakecuda::IdleClock> NewClock(int participants) const;
  Deadline StartDeadline(const fakecuda::IdleClock* clock) const;
  bool Expired(const fakecuda::IdleClock* clock, const Deadline& d) const;
  std::string ExpiryText(const fakecuda::IdleClock* clock, const Deadline& d) const;
  // One 10 ms slice of a host wait, blocked (fakecuda/virtual_clock.h).
  void WaitSliceLocked() CUHAL_REQUIRES(mu_);
  CUresult RunLegOrThrow(Task& task, std::size_t leg) CUHAL_EXCLUDES(mu_);
  CUresult RunLegFailed(Task& task, std::size_t leg, const char* what) noexcept CUHAL_EXCLUDES(mu_);
  // Returns true when some slot failed (the caller then notifies fakecuda, without mu_).
  bool CheckTimeoutsLocked(CommShared& comm, int rank, bool* waiting) CUHAL_REQUIRES(mu_);
  bool SlotSettledLocked(Slot& slot) CUHAL_REQUIRES(mu_);
  void FailSlotLocked(CommShared& comm, Slot& slot, ncclResult_t error,
                      const std::string& text, const std::vector<int>& culprits = {},
                      ncclResult_t culprit_error = ncclSuccess) CUHAL_REQUIRES(mu_);
  void FailSlotTimeoutLocked(CommShared& comm, Slot& slot, const std::string& expiry)
      CUHAL_REQUIRES(mu_);
  void AbortRankLocked(CommShared& comm, int rank, const char* why) CUHAL_REQUIRES(mu_);
  void SetAsyncErrorLocked(CommShared& comm, int rank, ncclResult_t error, const std::string& text)
      CUHAL_REQUIRES(mu_);
  void FinishTaskLocked(Task& task) CUHAL_REQUIRES(mu_);
  // Marks `leg` of `task` done (finishing the task when it was its last) and wakes the waiters;
  // CUDA_ERROR_ILLEGAL_ADDRESS when leg 0 found this rank's buffers bad (a kernel's fault).
  CUresult EndLegLocked(Task& task, std::size_t leg) CUHAL_REQUIRES(mu_);
  std::string DescribeSlot(const CommShared& comm, const Slot& slot) const;
  // ---- Across processes (cross_process.cc, over shm_transport.h).
  ncclResult_t InitRankShm(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                           int device, int cc_major, bool blocking, const char* api,
                           std::string* text) CUHAL_EXCLUDES(mu_);
  // Launch's part for one call on a communicator across processes: posts it to the segment and
  // adds a local Slot for it to `task` (failed at once on a mismatch, as in-process).
  ncclResult_t LaunchShmCallLocked(CommShared& comm, RankState& rs, int rank, const CallDesc& d,
                                   Task& task, std::string* text) CUHAL_REQUIRES(mu_);
  bool ShmLegReadyLocked(Task& task) CUHAL_REQUIRES(mu_);
  CUresult ShmRunLeg(Task& task, std::size_t leg) CUHAL_EXCLUDES(mu_);
  // ncclCommGetAsyncError's look at the segment: failures of pending calls, dead peers.
  bool ShmPollLocked(CommShared& comm, int rank) CUHAL_REQUIRES(mu_);
  void FailShmSlotLocked(CommShared& comm, Slot& slot, const ShmFailure& f) CUHAL_REQUIRES(mu_);

  const std::uint64_t timeout_ticks_;
  const std::chrono::milliseconds wall_timeout_;
  std::atomic<int> throw_in_executions_for_testing_{0};
  std::atomic<int> throw_in_calls_for_testing_{0};

  mutable cuhal::Mutex mu_;
  cuhal::CondVar cv_;  // notified when a rendezvous forms, a slot settles or is done
  std::uint64_t next_id_ CUHAL_GUARDED_BY(mu_) = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<CommHandle>> handles_ CUHAL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<InitRendezvous>> inits_ CUHAL_GUARDED_BY(mu_);
};

// The encoding of a handle id in an ncclComm_t (never a dereferenceable pointer).
ncclComm_t EncodeComm(std::uint64_t id);
std::uint64_t DecodeComm(ncclComm_t comm);  // 0 when it cannot be one of ours

}  // namespace internal
}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_INTERNAL_ENGINE_H_
