// Copyright 2026 The cuhal Authors.
// fakenccl's C++ API: build a fake NCCL, install it, fill an NcclApi table from it.
//
// fakenccl is an in-process fake of NCCL whose ranks are threads of one process (or one thread
// driving several communicators inside ncclGroupStart/End, as with ncclCommInitAll). Each rank
// uses its own fakecuda device; collectives and send/recv meet per communicator and compute real
// results on fake device memory, in stream order, on the fakecuda streams they are given. See
// fakenccl/internal/engine.h for the rendezvous model and its invariants, and datatypes.h for the
// arithmetic.
//
// What is modelled (returning NCCL's codes, with NCCL's WARN texts through ncclGetLastError):
//   - ncclGetVersion (NcclOptions::version), ncclGetUniqueId (128 random non-zero bytes; a real
//     rendezvous key: communicators meet in a registry of this FakeNccl by id), error strings;
//   - ncclCommInitRank / InitRankConfig (blocking, and non-blocking: ncclInProgress, then
//     ncclCommGetAsyncError until ncclSuccess) / InitAll / Split (color, key, NCCL_SPLIT_NOCOLOR)
//     / Finalize / Destroy / Abort / Count / UserRank / CuDevice / GetAsyncError;
//   - ncclRedOpCreatePreMulSum (scalar in host or device memory) / ncclRedOpDestroy;
//   - AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll, Gather, Scatter, Send,
//     Recv, ncclGroupStart/End (nesting; group errors), on every ncclDataType_t and ncclRedOp_t;
//   - mismatched calls across ranks (kind/order, count, type, op, root, send/recv sizes) are an
//     async error ncclInvalidUsage naming the ranks and the call; a peer that never arrives is a
//     timeout on the virtual clock (ncclInvalidUsage, or ncclRemoteError when it died/aborted):
//     found as soon as every rank is blocked or gone, never while one is busy (NcclOptions);
//   - fault injection (NcclFaultInjector), including rank death, and a leak report;
//   - the rest of nccl.h 2.28, outside the NcclApi table (called by name; UNMEASURED, from NCCL
//     2.28.9's source: docs/fakenccl.md, "Entry points after 2.18"): ncclMemAlloc/Free (VMM
//     memory of the fake driver), ncclCommShrink, ncclCommRevoke, ncclCommRegister/Deregister,
//     ncclCommWindowRegister/Deregister, ncclCommInitRankScalable, ncclGroupSimulateEnd,
//     ncclResetDebugInit, ncclBcast. A one-rank collective out of place is NCCL's
//     cudaMemcpyAsync at the call (a pointer the driver refuses fails it at once).
//
// Deliberate differences from NCCL:
//   - The text behind ncclGetLastError() is kept per thread (NCCL keeps one process-wide buffer)
//     so that ranks running as threads do not overwrite each other's message; the comm argument
//     is ignored, as NCCL does. ncclCommGetAsyncError copies the communicator's error text there.
//   - ncclCommInitRank needs a current CUDA context on the calling thread (its device is the
//     rank's device); the CUDA runtime would fall back to device 0's primary context instead.
//     A NULL stream means the calling thread's current context's default stream; NCCL switches
//     to the communicator's device first. Both are reported as errors rather than guessed.
//   - ncclCommFinalize does not wait for outstanding work (the queued work keeps everything it
//     needs alive and completes when its streams run); a non-blocking Finalize is complete at
//     once.
//   - Under fakecuda's adversarial policy, work runs only when the host synchronizes, so every
//     rank must synchronize its own stream (as real programs do) for collectives to complete.
//     Under the eager policy, a group whose task becomes runnable through another rank's arrival
//     while nothing else runs in that scheduling pass completes at the next synchronization or
//     enqueue rather than at once (only groups that talk to several peers can meet this).
//   - Error codes the fake chooses where NCCL would hang: a rendezvous that times out reports
//     ncclRemoteError when a missing rank died (fault injection) or aborted, ncclInvalidUsage
//     when it is alive but never made the call (or its stream never reached it: the ungrouped
//     send/recv deadlock), and ncclSystemError for initialization (NCCL's bootstrap timeout).
//     A buffer that is not fake device memory faults its owner like a kernel would
//     (CUDA_ERROR_ILLEGAL_ADDRESS becomes its context's sticky error; its communicator's async
//     error is ncclUnhandledCudaError) and fails its peers with ncclRemoteError.
//   - AlltoAll, Gather and Scatter meet as collectives (one sequence number on every rank), not
//     as the grouped sends and receives NCCL turns them into: mixing an AlltoAll on one rank with
//     hand-written sends and receives on another is not matched: both sides time out as calls
//     the other ranks never made.
//
// The drop-in libnccl.so.2 (fakenccl/dropin/) is the same code as a shared library exporting
// nccl*/pnccl*, for unmodified programs; see dropin/dropin_main.cc for its FAKENCCL_* variables.
// Entry points are extern "C" functions named as in nccl.h. None lets an exception escape: one
// that reaches an entry point's boundary is answered ncclInternalError, with "fakenccl: <entry>:
// internal error: <what>" on stderr and in ncclGetLastError; collective work that throws on a
// stream fails its operation with ncclInternalError (the communicator's async error) instead. They serve the process-wide
// installed FakeNccl (Install/ScopedNccl), as libnccl is process-wide. With none installed, every
// entry point that needs one returns ncclInvalidUsage and sets the last error to
// "fakenccl: no FakeNccl is installed (create a fakenccl::ScopedNccl first)"; ncclGetErrorString
// and ncclGetLastError need none. fakenccl uses the installed fakecuda driver's streams and
// memory (fakecuda/stream_work.h): install a fakecuda driver too.
#ifndef CUHAL_FAKENCCL_FAKE_NCCL_H_
#define CUHAL_FAKENCCL_FAKE_NCCL_H_

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "core/base/mutex.h"
#include "core/symbols/nccl_api.h"
#include "fakenccl/nccl_fault_injector.h"

namespace fakenccl {

namespace internal {
class Engine;
}  // namespace internal

struct NcclOptions {
  // What ncclGetVersion reports, in NCCL_VERSION_CODE form (2.28.9 is 22809). Must be > 0.
  int version = NCCL_VERSION_CODE;
  // How long a rendezvous (initialization, split, a collective or send/recv) waits for missing
  // ranks, in ticks of its group's virtual clock (fakecuda/virtual_clock.h). Each communicator
  // has one; its participants are the ranks, each bound to the thread that last called for it.
  // Virtual time counts idle time only: it stands still while any rank runs (in user code, or in
  // the fake: a busy rank is never timed out, however long it takes), and when every rank is
  // idle (blocked in a fakecuda synchronization or a fakenccl wait, polling
  // ncclCommGetAsyncError with nothing to show, gone: destroyed, aborted, died, or its thread
  // exited), confirmed over a quiescent round of about 20 ms, it jumps past every pending
  // deadline: a missing rank is reported at once. So any value > 0 times out at the same moment;
  // the unit is kept for the deadlines' bookkeeping (not wake-ups, not milliseconds: that was the
  // meaning before the virtual clock). A polling loop ends because each ncclCommGetAsyncError
  // poll that finds its call still waiting counts as an idle instant of the polling rank, and so
  // does each cuStreamQuery/cuEventQuery that answers CUDA_ERROR_NOT_READY (for 10 ms). Must
  // be > 0.
  std::uint64_t timeout_ticks = 30000;
  // The wall-clock backstop, in milliseconds: a rendezvous that has waited this long fails even
  // though the virtual clock stood still. It ends waits the fake cannot judge: a rank blocked
  // where the fake cannot see (the user's own mutex or join; tests may mark such waits with
  // fakecuda::ScopedBlocked), a rank busy for longer than this, and a rank that has not yet
  // called ncclCommInitRank (the fake cannot know which thread it will be, so a missing rank at
  // initialization is reported only by this backstop). Must be > 0.
  std::uint64_t wall_timeout_ms = 120000;
  // Whether ncclGetUniqueId makes ids for communicators across processes: such an id names a
  // shared-memory segment (fakenccl/internal/shm_transport.h), and ncclCommInitRank with it,
  // in any process of the machine (or any thread), joins one communicator whose calls meet and
  // whose data moves through that segment. Off: ids are keys of this FakeNccl's in-process
  // registry. (What an id is travels with it: any FakeNccl joins a cross-process id so.)
  bool cross_process = false;
};

// Counts of live fakenccl objects, for leak reports.
struct NcclInventory {
  int communicators = 0;  // ncclComm_t handles neither destroyed nor aborted
  int reduction_ops = 0;  // ncclRedOpCreatePreMulSum ops not destroyed (of live communicators)

  int Total() const { return communicators + reduction_ops; }
  // "2 communicator(s), 1 reduction op(s)" or "none".
  std::string ToString() const;
};

// A fake NCCL instance.
//
// Ownership: the creator owns it (unique_ptr). While installed (Install/ScopedNccl) the C entry
// points serve it; it must outlive its installation. Its engine (the communicators' shared state)
// is also referenced by the stream work it queued, so destroying the FakeNccl while work is queued
// is safe; handles made by it become invalid. Thread-safety: every method and every entry point
// may be called from any thread (each ncclComm_t from one thread at a time, as NCCL requires).
// Stream ordering: each collective runs on the fakecuda stream it is given, after the work
// queued there before it and before the work queued after it, once every rank's call has
// reached the head of its own stream.
class FakeNccl {
 public:
  // Returns null and sets *error (when given) when the options are invalid (version <= 0,
  // timeout_ticks == 0, wall_timeout_ms == 0).
  static std::unique_ptr<FakeNccl> Create(NcclOptions options = {}, std::string* error = nullptr);
  ~FakeNccl();
  FakeNccl(const FakeNccl&) = delete;             // installed by address; holds a mutex
  FakeNccl& operator=(const FakeNccl&) = delete;  // ditto

  const NcclOptions& options() const { return options_; }
  NcclFaultInjector& faults() { return faults_; }
  const NcclFaultInjector& faults() const { return faults_; }

  // Live communicators and reduction ops now.
  NcclInventory LiveObjects() const;
  // One line per live communicator (handle, rank, device, who made it); empty if none.
  std::string LeakReport() const;

  // Fills *id with 128 random non-zero bytes (what ncclGetUniqueId returns). Thread-safe.
  void NewUniqueId(ncclUniqueId* id);

  internal::Engine& engine() { return *engine_; }  // for the entry points
  // Distinguishes FakeNccl instances (per-thread state of an old instance is discarded).
  std::uint64_t serial() const { return serial_; }

 private:
  explicit FakeNccl(NcclOptions options);

  const NcclOptions options_;
  const std::uint64_t serial_;
  NcclFaultInjector faults_;
  std::shared_ptr<internal::Engine> engine_;
  cuhal::Mutex mutex_;
  std::mt19937_64 random_ CUHAL_GUARDED_BY(mutex_);
};

// The process-wide FakeNccl that the C entry points (ncclGetVersion, ...) serve; null when none.
// Install replaces any previous one (it does not own it). Thread-safe.
void Install(FakeNccl* nccl);
FakeNccl* Installed();

// Creates a FakeNccl and installs it for its lifetime; restores the previous one afterwards.
// Not thread-safe with respect to other ScopedNccl objects: nest them, do not interleave them.
class ScopedNccl {
 public:
  // Aborts (printing why) when the options are invalid: it is a test fixture.
  explicit ScopedNccl(NcclOptions options = {});
  ~ScopedNccl();
  ScopedNccl(const ScopedNccl&) = delete;             // restores the previous one exactly once
  ScopedNccl& operator=(const ScopedNccl&) = delete;  // ditto
  FakeNccl& nccl() { return *nccl_; }
  FakeNccl* operator->() { return nccl_.get(); }

 private:
  std::unique_ptr<FakeNccl> nccl_;
  FakeNccl* previous_;
};

// Fills every entry of `api` with fakenccl's entry points (they serve the installed FakeNccl).
// The table stays valid for the life of the process.
void FillNcclApi(cuhal::NcclApi* api);

// An ncclUniqueId as text, to hand it to another process (its environment or arguments), as
// programs that start their ranks themselves do with a communicator across processes: 256
// lowercase hex digits, two per byte of id.internal.
std::string UniqueIdToHex(const ncclUniqueId& id);
// Parses UniqueIdToHex's text into *id: false, and *id untouched, unless `hex` is exactly 256 hex
// digits.
bool UniqueIdFromHex(std::string_view hex, ncclUniqueId* id);

}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_FAKE_NCCL_H_
