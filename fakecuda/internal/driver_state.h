// Copyright 2026 The cuhal Authors.
// The fake driver's model: devices, contexts, streams, events, memory and the scheduler that runs
// queued stream work. Internal to fakecuda; entry points (fakecuda/entry/*.cc) are thin wrappers
// that validate arguments and call into this.
//
// Invariants (the whole file relies on them):
//  1. One mutex (DriverState::mu_) guards every member below. Entry points take it for their whole
//     call except while an operation's body runs (RunOp releases it), so bodies may block, touch
//     memory or call back into the driver without deadlock.
//  2. Handles given to the user (CUcontext, CUstream, CUevent, CUmodule, CUfunction, CUmemoryPool)
//     encode a never-reused 64-bit id (kind tag in the low bits), not a pointer; a stale handle is
//     therefore always detected (no use-after-free inside the fake), whatever the user does.
//  3. Every Op gets a global, increasing sequence number when enqueued. A stream's ops complete in
//     order; stream.completed_seq is the seq of its last completed op. A dependency (stream, seq)
//     is satisfied when that stream's completed_seq >= seq.
//  4. Virtual time: an op starts at max(its stream's time, its dependencies' end times) and ends
//     after its modelled cost. Event timestamps are virtual, so elapsed times are reproducible
//     and independent of the scheduling policy.
//  5. Who runs stream work (fakecuda/internal/scheduler.cc). Work that is the fake's own code
//     (copies, memsets, event records, waits, pool operations, fakenccl's collectives) may run on
//     any thread that drives the scheduler. Work that runs the *user's* code (host functions,
//     cuStreamAddCallback callbacks, graph host nodes, registered kernel implementations) runs
//     only on the driver-owned callback thread, as on the real driver, never on a caller's
//     thread: so a callback may take a lock its enqueuer holds. With the eager policy, the fake's
//     own work runs inside the call that enqueues it whenever it is ready, and the callback thread
//     runs user work as soon as it is ready; with the adversarial policy, work runs only when a
//     synchronization needs it or a query polls it (ties between streams broken by the seeded
//     generator), and pending host functions are also released, in seeded order, once no
//     thread has entered the driver for DriverOptions::idle_release_us (the real driver runs
//     host functions without being asked; a program that waits for one outside the driver would
//     otherwise wait forever).
//  6. CUDA calls from inside user work (on the callback thread) never block: a call that would
//     wait for stream work answers CUDA_ERROR_NOT_PERMITTED instead (see OnCallbackThread).
#ifndef CUHAL_FAKECUDA_INTERNAL_DRIVER_STATE_H_
#define CUHAL_FAKECUDA_INTERNAL_DRIVER_STATE_H_

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "fakecuda/fake_driver.h"

namespace fakecuda {

// Kind tags in the low 4 bits of handle values.
enum class HandleKind : std::uint64_t {
  kContext = 1,
  kStream = 2,
  kEvent = 3,
  kModule = 4,
  kFunction = 5,
  kPool = 6,
  kGraph = 7,       // fakecuda/internal/module_model.h
  kGraphNode = 8,
  kGraphExec = 9,
};

struct Context;
struct Stream;
struct Event;
class MemPool;
struct Module;

struct Device {
  int ordinal = 0;
  DeviceProfile profile;
  std::uint64_t primary_ctx_id = 0;  // 0 while inactive
  int primary_refcount = 0;
  unsigned primary_flags = 0;
  std::size_t bytes_in_use = 0;  // device allocations + pool reservations
  CUdeviceptr next_va = 0;       // bump pointer of this device's virtual address range
  std::uint64_t default_pool_id = 0;
  std::uint64_t current_pool_id = 0;
};

struct Context {
  std::uint64_t id = 0;
  int device = 0;
  bool primary = false;
  unsigned flags = 0;
  CUresult sticky = CUDA_SUCCESS;  // once set, every call on this context returns it
  std::uint64_t legacy_stream_id = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> per_thread_streams;  // thread key -> stream id
  std::map<int, std::size_t> limits;
  std::set<std::uint64_t> peers;  // contexts whose memory this one may access
};

// What an Op runs: the fake's own code, or the user's (which runs on the callback thread only).
enum class OpKind { kDevice, kHostFunction, kKernel };

// One unit of stream work.
struct Op {
  std::uint64_t seq = 0;
  OpKind kind = OpKind::kDevice;
  const char* what = "";  // the entry point that queued it, for reports
  std::vector<std::pair<std::uint64_t, std::uint64_t>> deps;  // (stream id, seq)
  std::function<bool()> ready;  // extra readiness (collectives waiting for peers); may be empty
  // The work. Runs with the driver lock released; returns a sticky error or CUDA_SUCCESS.
  std::function<CUresult()> body;
  double cost_us = 0.0;
  std::uint64_t record_event_id = 0;  // for event records: the event to stamp
  std::uint64_t record_generation = 0;
};

struct Stream {
  std::uint64_t id = 0;
  std::uint64_t ctx_id = 0;
  unsigned flags = 0;
  int priority = 0;
  bool legacy_default = false;
  bool per_thread_default = false;
  bool destroyed = false;  // destroyed by the user; kept until its queue drains
  bool running = false;    // its head op's body is executing right now
  std::deque<Op> queue;
  std::uint64_t completed_seq = 0;
  std::uint64_t last_enqueued_seq = 0;
  double time_us = 0.0;  // virtual time at which its last completed op ended
  // For each stream this one's ops have waited for (events, implicit legacy-stream ordering,
  // pool internal dependencies): the highest seq waited for. The pool model reads it to decide
  // which stream-ordered frees this stream may reuse.
  std::unordered_map<std::uint64_t, std::uint64_t> waited;
};

struct Event {
  std::uint64_t id = 0;
  std::uint64_t ctx_id = 0;
  unsigned flags = 0;
  std::uint64_t generation = 0;  // incremented by each record
  std::uint64_t stream_id = 0;   // stream of the last record (0: never recorded)
  std::uint64_t seq = 0;         // seq of the last record's op
  bool complete = true;          // the last record has completed (or it was never recorded)
  double time_us = 0.0;          // virtual timestamp of the last completed record
};

enum class MemoryType { kDevice, kPinnedHost, kRegisteredHost, kManaged, kPool };

struct Allocation {
  std::uint64_t id = 0;
  MemoryType type = MemoryType::kDevice;
  std::uintptr_t base = 0;  // device VA (device/pool) or host address (host/managed)
  std::size_t size = 0;
  std::byte* data = nullptr;  // host backing
  bool mmapped = false;
  std::size_t mapped_size = 0;
  int device = 0;
  std::uint64_t ctx_id = 0;
  unsigned flags = 0;
  std::uint64_t pool_id = 0;
  // A module variable (cuModuleGetGlobal): device memory owned by its module, released when the
  // module is unloaded; cuMemFree and cuMemFreeAsync refuse it (it is not cuMemAlloc memory).
  bool module_global = false;
  std::string created_by;  // entry point, for leak reports
};

class DriverState {
 public:
  explicit DriverState(DriverOptions options);
  ~DriverState();

  DriverOptions options;
  FaultInjector faults;
  std::uint64_t serial = 0;  // distinguishes driver instances for thread-local state

  // --- guarded by mu ---
  mutable std::mutex mu;
  std::condition_variable cv;  // notified whenever an op completes or work is enqueued
  std::atomic<bool> initialized{false};  // set by cuInit; read without the lock
  std::vector<Device> devices;
  std::unordered_map<std::uint64_t, std::unique_ptr<Context>> contexts;
  std::unordered_map<std::uint64_t, std::unique_ptr<Stream>> streams;
  std::unordered_map<std::uint64_t, std::unique_ptr<Event>> events;
  std::map<std::uintptr_t, Allocation> allocations;  // by base address
  std::uint64_t next_id = 1;
  std::uint64_t next_seq = 1;
  std::uint64_t rng = 0;
  // Extension slots for other parts of the fake (pools, modules) to hang their state on.
  std::shared_ptr<void> pool_state;
  std::shared_ptr<void> module_state;

  // --- helpers; all require mu held ---
  std::uint64_t NewId() { return next_id++; }
  std::uint64_t NextRandom();

  Context* FindContext(CUcontext handle);
  Stream* FindStream(std::uint64_t id);
  Event* FindEvent(CUevent handle);

  // The calling thread's current context (top of its stack), or null.
  Context* CurrentContext();
  // Resolves a user stream handle (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a created
  // stream) relative to the current context. Sets *error when invalid.
  Stream* ResolveStream(CUstream handle, CUresult* error);
  // Creates a stream object in `ctx` (no checks).
  Stream* NewStream(Context* ctx, unsigned flags, int priority);

  // Enqueues `op` on `stream`, adding the implicit legacy-stream dependencies, and runs ready
  // work under the eager policy. Returns the op's seq.
  std::uint64_t Enqueue(Stream* stream, Op op, std::unique_lock<std::mutex>& lock);
  // Runs queued work until `stream` has completed seq (0: everything queued so far on it).
  CUresult SyncStream(Stream* stream, std::uint64_t seq, std::unique_lock<std::mutex>& lock);
  // Runs queued work until every stream of `ctx_id` (0: of all contexts) is drained.
  CUresult SyncAll(std::uint64_t ctx_id, std::unique_lock<std::mutex>& lock);
  // The host has seen `stream_id` complete everything enqueued on it before `proven_below` (a
  // synchronization that found the work already done). Called by SyncStream; tells the memory
  // pools, which release memory only at such points.
  void NoteSynchronized(std::uint64_t stream_id, std::uint64_t proven_below);
  // Polling: completes at most one more op of `stream` (adversarial), then reports whether
  // everything up to `seq` has completed.
  bool PollStream(Stream* stream, std::uint64_t seq, std::unique_lock<std::mutex>& lock);
  bool StreamIdle(const Stream* stream) const;
  bool DepSatisfied(std::uint64_t stream_id, std::uint64_t seq) const;
  // Erases destroyed streams whose queues have drained.
  void ReapStreams();
  // True on this driver's callback thread (inside a host function, callback or kernel
  // implementation). Entry points that would wait for stream work refuse there.
  bool OnCallbackThread() const;
  // Counts entry-point calls, for the adversarial policy's idle release. Lock-free.
  void NoteEntry() { entry_calls_.fetch_add(1, std::memory_order_relaxed); }
  // User work that threw or failed on the callback thread so far (host functions whose exception
  // the fake caught and reported on stderr), for tests.
  std::uint64_t host_function_exceptions() const { return host_function_exceptions_; }

  // Virtual bandwidths for op costs.
  static double CopyCostUs(std::size_t bytes, bool device_to_device);

  // --- memory ---
  // The allocation containing [ptr, ptr+size), or null.
  Allocation* FindAllocation(std::uintptr_t ptr, std::size_t size = 1);
  // Reserves `size` bytes of virtual addresses of `device` (512-byte aligned). Never reused.
  CUdeviceptr ReserveVa(int device, std::size_t size, std::size_t alignment = 512);
  // Host backing for device memory: lazily committed (mmap) when large, so the whole of a
  // fake H200's memory can be allocated if little of it is touched.
  static std::byte* AllocateBacking(std::size_t size, bool* mmapped, std::size_t* mapped_size);
  static void FreeBacking(std::byte* data, bool mmapped, std::size_t mapped_size);
  void ReleaseAllocation(std::map<std::uintptr_t, Allocation>::iterator it);

  Inventory CountLive() const;
  std::string DescribeLive() const;

  // Destroys a context's streams/events (used by cuCtxDestroy and primary context release).
  void TeardownContext(std::uint64_t ctx_id, std::unique_lock<std::mutex>& lock);

 private:
  // Runs the head op of `s` (must be ready; user work only on the callback thread). Releases the
  // lock while the body runs; catches whatever the body throws.
  void RunHead(Stream* s, std::unique_lock<std::mutex>& lock);
  // Whether `s`'s head op runs user code (and so must run on the callback thread).
  static bool HeadIsUserWork(const Stream* s);
  // Runs `s`'s ready head here when this thread may run it; otherwise hands it to the callback
  // thread (which runs it soon) and returns false.
  bool RunOrHandOff(Stream* s, std::unique_lock<std::mutex>& lock);
  // True on the callback thread outside any work body: the one place user work may run.
  bool MayRunUserWork() const;
  void EnsureCallbackThread();
  // Stops and joins the callback thread (waits for the user work it is running, if any).
  void StopCallbackThread();
  void CallbackLoop();
  // Adversarial policy: runs, in seeded order, the work up to one pending host function.
  void ReleaseIdleHostFunction(std::unique_lock<std::mutex>& lock);
  // Waits (bounded) for another thread to change the scheduler's state.
  void WaitForProgress(std::unique_lock<std::mutex>& lock);

  std::thread callback_thread_;
  std::condition_variable callback_cv_;  // wakes the callback thread
  bool stop_callbacks_ = false;
  std::set<std::uint64_t> handoff_;  // streams whose ready user-work head a waiter needs
  std::atomic<std::uint64_t> entry_calls_{0};
  std::uint64_t host_function_exceptions_ = 0;
  bool HeadReady(const Stream* s) const;
  // Picks a stream with a ready head among `candidates` (seeded under adversarial).
  Stream* PickReady(const std::vector<Stream*>& candidates);
  void DrainEager(std::unique_lock<std::mutex>& lock);
  // A stream whose ready head op is needed for `target` to reach `seq` (directly or through a
  // chain of waits), chosen as PickReady does; null when none can run now.
  Stream* FindNeededReady(Stream* target, std::uint64_t seq);
  // Makes progress towards (stream, seq): runs a ready op it needs, or waits for another thread.
  void Step(Stream* target, std::uint64_t seq, std::unique_lock<std::mutex>& lock);
};

// Handle encoding.
template <typename H>
inline H EncodeHandle(HandleKind kind, std::uint64_t id) {
  return reinterpret_cast<H>(static_cast<std::uintptr_t>((id << 4) | static_cast<std::uint64_t>(kind)));
}
template <typename H>
inline std::uint64_t DecodeHandle(HandleKind kind, H handle) {
  auto v = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
  if ((v & 0xF) != static_cast<std::uint64_t>(kind)) return 0;
  return v >> 4;
}

// The installed driver's state, or null.
DriverState* InstalledState();

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_DRIVER_STATE_H_
