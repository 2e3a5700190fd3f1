// Copyright 2026 The cuhal Authors.
// The fake driver's model: the owner of its subsystems and the scheduler that runs queued stream
// work. Internal to fakecuda; entry points (fakecuda/entry/*.cc) are thin wrappers that validate
// arguments and call into this. The state lives in typed subsystems, each with its own header,
// held privately here and reached through accessors that require the driver lock:
//   - contexts()  ContextTable: devices (primary-context state, memory budget), contexts, the
//                 destroyed contexts (fakecuda/internal/context_table.h);
//   - streams()   StreamTable: streams, events, their queued ops, the sequence numbers
//                 (fakecuda/internal/stream_table.h); the scheduler below works on it;
//   - memory()    MemoryMap: live allocations by base address, pointer lookup, their backing
//                 (fakecuda/internal/memory_map.h); ReleaseAllocation also settles the device's
//                 budget;
//   - pools()     PoolModel: memory pools (fakecuda/internal/mem_pool.h);
//   - modules()   ModuleModel: modules, functions (fakecuda/internal/module_model.h);
//   - graphs()    GraphModel: graphs, nodes, executable graphs (fakecuda/internal/graph_model.h);
//   - vmm()       VmmModel: virtual memory management, physical allocations, reservations and
//                 mappings (fakecuda/internal/vmm_model.h);
//   - arrays()    ArrayModel: CUDA arrays (fakecuda/internal/array_model.h).
//   - coredump()  CoredumpModel: GPU coredump settings (fakecuda/internal/coredump_model.h);
//   - resources() ResourceModel: device resources, descriptors, green contexts
//                 (fakecuda/internal/resource_model.h).
//   - libraries() LibraryModel: context-independent libraries and their kernels
//                 (fakecuda/internal/library_model.h).
//
// Invariants (the whole file relies on them):
//  1. One mutex (DriverState::mu) guards every subsystem (written as CUHAL_GUARDED_BY(mu) on the
//     private members and CUHAL_REQUIRES(mu) on the accessors and helpers, checked by Clang's
//     -Wthread-safety in the `thread-safety` preset; the subsystems have no lock of their own and
//     their objects are reached only through the accessors). Entry points take it for
//     their whole call except while an operation's body runs (RunHead releases it), so bodies may
//     block, touch memory or call back into the driver without deadlock.
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
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/base/mutex.h"
#include "fakecuda/fake_driver.h"
#include "fakecuda/internal/context_table.h"
#include "fakecuda/internal/memory_map.h"
#include "fakecuda/internal/pinned_chunks.h"
#include "fakecuda/internal/stream_table.h"

namespace fakecuda {

// Kind tags in the low 4 bits of handle values.
enum class HandleKind : std::uint64_t {
  kContext = 1,
  kStream = 2,
  kEvent = 3,
  kModule = 4,
  kFunction = 5,
  kPool = 6,
  kGraph = 7,       // fakecuda/internal/graph_model.h
  kGraphNode = 8,
  kGraphExec = 9,
  kLibrary = 10,  // fakecuda/internal/library_model.h
  kKernel = 11,
  kArray = 12,           // fakecuda/internal/array_model.h
  kMipmappedArray = 13,  // ditto
  kTexObject = 14,       // ditto (CUtexObject is an integer: the same encoding, as a number)
  kUserObject = 15,      // fakecuda/internal/user_object_model.h
};

struct Context;
struct Stream;
struct Event;
class MemPool;
struct Module;
class PoolModel;    // fakecuda/internal/mem_pool.h
class ModuleModel;  // fakecuda/internal/module_model.h
class GraphModel;   // fakecuda/internal/graph_model.h
class VmmModel;     // fakecuda/internal/vmm_model.h
class ArrayModel;   // fakecuda/internal/array_model.h
class CoredumpModel;  // fakecuda/internal/coredump_model.h
class ResourceModel;  // fakecuda/internal/resource_model.h
class LibraryModel;  // fakecuda/internal/library_model.h
class LegacyModel;   // fakecuda/internal/legacy_model.h
class RaceDetector;  // fakecuda/race/race_detector.h
class DevextModel;   // fakecuda/internal/devext_model.h

class DriverState {
 public:
  explicit DriverState(DriverOptions options);
  ~DriverState();
  DriverState(const DriverState&) = delete;             // owns threads, memory and a mutex
  DriverState& operator=(const DriverState&) = delete;  // ditto

  // Set at construction; read without the lock.
  DriverOptions options;
  FaultInjector faults;      // thread-safe itself
  std::uint64_t serial = 0;  // distinguishes driver instances for thread-local state

  // The driver lock (invariant 1).
  mutable cuhal::Mutex mu;
  cuhal::CondVar cv;                     // notified whenever an op completes or work is enqueued
  std::atomic<bool> initialized{false};  // set by cuInit; read without the lock

  // The devices' count and profiles never change after construction: read without the lock
  // (cuDeviceGetAttribute's hot path). Everything else of a Device is guarded by mu.
  int device_count() const { return device_count_; }
  const DeviceProfile& profile(int device) const CUHAL_NO_THREAD_SAFETY_ANALYSIS {
    return contexts_.device(device).profile;
  }

  // --- subsystems (guarded by mu) ---
  // Devices, primary contexts and contexts (fakecuda/internal/context_table.h).
  ContextTable& contexts() CUHAL_REQUIRES(mu) { return contexts_; }
  const ContextTable& contexts() const CUHAL_REQUIRES(mu) { return contexts_; }
  Device& device(int ordinal) CUHAL_REQUIRES(mu) { return contexts_.device(ordinal); }
  const Device& device(int ordinal) const CUHAL_REQUIRES(mu) { return contexts_.device(ordinal); }
  // Streams, events, their queued ops and the sequence numbers (fakecuda/internal/stream_table.h).
  StreamTable& streams() CUHAL_REQUIRES(mu) { return streams_; }
  const StreamTable& streams() const CUHAL_REQUIRES(mu) { return streams_; }

  // The race detector, or null when it is off (DriverOptions::racecheck). Set at construction
  // and never changed, so the pointer is read without the lock; its methods require mu.
  RaceDetector* race() const { return race_.get(); }

  // --- subsystems created on first use (guarded by mu) ---
  // The memory-pool model (stream-ordered allocator).
  PoolModel& pools() CUHAL_REQUIRES(mu);
  // The pool model when some pool has been used, else null (the sync hooks are no-ops then).
  PoolModel* pools_if_used() const CUHAL_REQUIRES(mu) { return pools_.get(); }
  // Modules and functions.
  ModuleModel& modules() CUHAL_REQUIRES(mu);
  const ModuleModel* modules_if_used() const CUHAL_REQUIRES(mu) { return modules_.get(); }
  // Graphs, their nodes and executable graphs.
  GraphModel& graphs() CUHAL_REQUIRES(mu);
  // Virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap, ...).
  VmmModel& vmm() CUHAL_REQUIRES(mu);
  // The VMM model when some VMM call has been made, else null.
  const VmmModel* vmm_if_used() const CUHAL_REQUIRES(mu) { return vmm_.get(); }
  // CUDA arrays (cuArrayCreate, cuArray3DCreate, ...).
  ArrayModel& arrays() CUHAL_REQUIRES(mu);
  // GPU coredump settings.
  CoredumpModel& coredump() CUHAL_REQUIRES(mu);
  // Device resources and green contexts.
  ResourceModel& resources() CUHAL_REQUIRES(mu);
  // Libraries and their kernels (cuLibraryLoadData, ...).
  LibraryModel& libraries() CUHAL_REQUIRES(mu);
  const LibraryModel* libraries_if_used() const CUHAL_REQUIRES(mu) { return libraries_.get(); }
  // Callback registrations and pool export descriptors of the devext entry points.
  DevextModel& devext() CUHAL_REQUIRES(mu);
  // Link states, texture and surface references, surface objects (cuLinkCreate, ...).
  LegacyModel& legacy() CUHAL_REQUIRES(mu);

  // Where pinned host memory of cuMemHostAlloc/cuMemAllocHost lies, as cuMemHostGetFlags sees it.
  PinnedChunks& pinned_chunks() CUHAL_REQUIRES(mu) { return pinned_chunks_; }

  // --- helpers; all require mu held ---
  // A new, never reused id for a handle or allocation.
  std::uint64_t NewId() CUHAL_REQUIRES(mu) { return next_id_++; }
  // The next value of the seeded generator (adversarial scheduling).
  std::uint64_t NextRandom() CUHAL_REQUIRES(mu);

  Context* FindContext(CUcontext handle) CUHAL_REQUIRES(mu);
  Stream* FindStream(std::uint64_t id) CUHAL_REQUIRES(mu);
  Event* FindEvent(CUevent handle) CUHAL_REQUIRES(mu);

  // The calling thread's current context (top of its stack), or null.
  Context* CurrentContext() CUHAL_REQUIRES(mu);
  // Resolves a user stream handle (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a created
  // stream) relative to the current context. Sets *error when invalid.
  Stream* ResolveStream(CUstream handle, CUresult* error) CUHAL_REQUIRES(mu);
  // Creates a stream object in `ctx` (no checks), taking the next stream id of the driver's
  // counter for cuStreamGetId unless `public_id` names one (kNoPublicId: none, an internal stream).
  static constexpr std::uint64_t kNoPublicId = ~std::uint64_t{0};
  Stream* NewStream(Context* ctx, unsigned flags, int priority, std::uint64_t public_id = 0)
      CUHAL_REQUIRES(mu);

  // The scheduler (fakecuda/internal/scheduler.cc). Functions that run stream work release mu
  // while a body runs and hold it again when they return; pointers into the state may be stale
  // after them (look streams up again by id).
  //
  // Enqueues `op` on `stream`, adding the implicit legacy-stream dependencies, and runs ready
  // work under the eager policy. Returns the op's seq.
  std::uint64_t Enqueue(Stream* stream, Op op) CUHAL_REQUIRES(mu);
  // Runs queued work until `stream` has completed seq (0: everything queued so far on it).
  CUresult SyncStream(Stream* stream, std::uint64_t seq) CUHAL_REQUIRES(mu);
  // Runs queued work until every stream of `ctx_id` (0: of all contexts) is drained.
  CUresult SyncAll(std::uint64_t ctx_id) CUHAL_REQUIRES(mu);
  // The host has seen `stream_id` complete everything enqueued on it before `proven_below` (a
  // synchronization that found the work already done). Called by SyncStream; tells the memory
  // pools, which release memory only at such points.
  void NoteSynchronized(std::uint64_t stream_id, std::uint64_t proven_below) CUHAL_REQUIRES(mu);
  // Polling: completes at most one more op of `stream` (adversarial), then reports whether
  // everything up to `seq` has completed. A false answer is an idle poll of the calling thread
  // for the virtual clocks (NoteThreadPoll, fakecuda/virtual_clock.h).
  bool PollStream(Stream* stream, std::uint64_t seq) CUHAL_REQUIRES(mu);
  bool StreamIdle(const Stream* stream) const CUHAL_REQUIRES(mu);
  bool DepSatisfied(std::uint64_t stream_id, std::uint64_t seq) const CUHAL_REQUIRES(mu);
  // Erases destroyed streams whose queues have drained.
  void ReapStreams() CUHAL_REQUIRES(mu);
  // True on one of this driver's callback lanes (inside a host function, callback or kernel
  // implementation). Entry points refuse there as the real driver does (entry.h).
  bool OnCallbackThread() const;
  // Counts entry-point calls, for the adversarial policy's idle release. Lock-free.
  void NoteEntry() { entry_calls_.fetch_add(1, std::memory_order_relaxed); }
  // User work that threw or failed on the callback thread so far (host functions whose exception
  // the fake caught and reported on stderr), for tests.
  std::uint64_t host_function_exceptions() const CUHAL_REQUIRES(mu) {
    return host_function_exceptions_;
  }

  // Virtual bandwidths for op costs.
  static double CopyCostUs(std::size_t bytes, bool device_to_device);
  static double MemsetCostUs(std::size_t bytes);
  // A host function's span on the device timeline (H200: 27 us).
  static constexpr double kHostFunctionCostUs = 27.0;

  // --- memory ---
  // The live allocations (fakecuda/internal/memory_map.h).
  MemoryMap& memory() CUHAL_REQUIRES(mu) { return memory_; }
  const MemoryMap& memory() const CUHAL_REQUIRES(mu) { return memory_; }
  // The allocation containing [ptr, ptr+size), or null.
  Allocation* FindAllocation(std::uintptr_t ptr, std::size_t size = 1) CUHAL_REQUIRES(mu) {
    return memory_.Find(ptr, size);
  }
  // Reserves `size` bytes of virtual addresses of `device` (512-byte aligned). Never reused.
  CUdeviceptr ReserveVa(int device, std::size_t size, std::size_t alignment = 512)
      CUHAL_REQUIRES(mu);
  // Adds a device allocation (cuMemAlloc, a module variable) to the memory map and charges its
  // size to its device.
  void AddDeviceAllocation(Allocation a) CUHAL_REQUIRES(mu);
  // Releases the allocation at `base` (none: nothing happens): gives device memory back to its
  // device's budget and frees the backing the map owns. The only way memory leaves the map other
  // than through the pool model.
  void ReleaseAllocation(std::uintptr_t base) CUHAL_REQUIRES(mu);

  // The live objects, and one line on each. Both include what the CUDA runtime's release of a
  // primary context at exit destroyed (NoteRuntimeTeardown): objects the program never freed.
  Inventory CountLive() const CUHAL_REQUIRES(mu);
  std::string DescribeLive() const CUHAL_REQUIRES(mu);
  // Called when the CUDA runtime's release of its retain at exit (Device::runtime_retains) has
  // destroyed a primary context, with CountLive() and DescribeLive() as they were just before:
  // what the context still held is what the program left for the runtime's teardown to free,
  // a leak of the program's that the real driver would free silently. Kept for the leak report.
  void NoteRuntimeTeardown(const Inventory& before, const std::string& described_before)
      CUHAL_REQUIRES(mu);

  // Destroys a context's streams/events (used by cuCtxDestroy and primary context release).
  void TeardownContext(std::uint64_t ctx_id) CUHAL_REQUIRES(mu);

 private:
  // Runs the head op of `s` (must be ready; user work only on the callback thread). Releases the
  // lock while the body runs; catches whatever the body throws.
  void RunHead(Stream* s) CUHAL_REQUIRES(mu);
  // Whether `s`'s head op runs user code (and so must run on a callback lane).
  static bool HeadIsUserWork(const Stream* s);
  // The lane that runs `s`'s head op: kKernelLane for kernel implementations, the stream's
  // context id for host functions (one lane per context, as the real driver's callback thread).
  static std::uint64_t LaneOf(const Stream* s);
  static constexpr std::uint64_t kKernelLane = 0;
  // Runs `s`'s ready head here when this thread may run it; otherwise hands it to its lane
  // (which runs it soon) and returns false.
  bool RunOrHandOff(Stream* s) CUHAL_REQUIRES(mu);
  // RunOrHandOff, then, if handed off, waits until that op has completed. False only inside
  // user work whose own lane would have to run it.
  bool RunOrWait(Stream* s) CUHAL_REQUIRES(mu);
  void WaitForHandOff(std::uint64_t stream_id, std::uint64_t head_seq) CUHAL_REQUIRES(mu);
  // True on the lane that runs `s`'s head, outside any work body.
  bool MayRunHere(const Stream* s) const;
  // Inside user work on a lane: whether reaching (target, seq) needs work of this very lane
  // (which cannot run until the current body returns).
  bool NeedsOwnLane(Stream* target, std::uint64_t seq) CUHAL_REQUIRES(mu);
  // A driver-owned thread that runs one kind of user work. Reached only through lanes_, so its
  // fields are guarded by mu as lanes_ is (the thread reads `key` only, which never changes).
  struct Lane {
    std::uint64_t key = 0;
    std::thread thread;
    cuhal::CondVar cv;      // wakes it
    bool finished = false;  // its loop returned (its context is gone); join it
  };
  Lane* EnsureLane(std::uint64_t key) CUHAL_REQUIRES(mu);
  // Stops and joins every lane (waits for the user work they are running, if any).
  void StopLanes() CUHAL_EXCLUDES(mu);
  void LaneLoop(Lane* lane) CUHAL_EXCLUDES(mu);
  // Adversarial policy: runs, in seeded order, the work up to one pending host function of the
  // lane's context.
  void ReleaseIdleHostFunction(std::uint64_t ctx_id) CUHAL_REQUIRES(mu);
  // Waits (bounded) for another thread to change the scheduler's state.
  void WaitForProgress() CUHAL_REQUIRES(mu);

  std::map<std::uint64_t, std::unique_ptr<Lane>> lanes_ CUHAL_GUARDED_BY(mu);
  bool stop_lanes_ CUHAL_GUARDED_BY(mu) = false;
  // Streams whose ready user-work head a waiter needs.
  std::set<std::uint64_t> handoff_ CUHAL_GUARDED_BY(mu);
  std::atomic<std::uint64_t> entry_calls_{0};
  const int device_count_;
  std::uint64_t host_function_exceptions_ CUHAL_GUARDED_BY(mu) = 0;
  std::uint64_t next_id_ CUHAL_GUARDED_BY(mu) = 1;
  PinnedChunks pinned_chunks_ CUHAL_GUARDED_BY(mu);
  std::uint64_t rng_ CUHAL_GUARDED_BY(mu) = 0;
  // The devices and contexts (see contexts()).
  ContextTable contexts_ CUHAL_GUARDED_BY(mu);
  // The streams and events (see streams()).
  StreamTable streams_ CUHAL_GUARDED_BY(mu);
  // The memory map (see memory()).
  MemoryMap memory_ CUHAL_GUARDED_BY(mu);
  // Subsystems (see pools() and modules()). Declared last: destroyed before the maps above.
  std::unique_ptr<PoolModel> pools_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<ModuleModel> modules_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<GraphModel> graphs_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<VmmModel> vmm_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<ArrayModel> arrays_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<CoredumpModel> coredump_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<ResourceModel> resources_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<LibraryModel> libraries_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<DevextModel> devext_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<LegacyModel> legacy_ CUHAL_GUARDED_BY(mu);
  // NoteRuntimeTeardown: what the runtime's releases at exit destroyed, and their lines.
  Inventory runtime_teardown_ CUHAL_GUARDED_BY(mu);
  std::string runtime_teardown_lines_ CUHAL_GUARDED_BY(mu);
  std::unique_ptr<RaceDetector> race_;  // see race(); its state is used under mu only

  bool HeadReady(const Stream* s) const CUHAL_REQUIRES(mu);
  // Picks a stream with a ready head among `candidates` (seeded under adversarial).
  Stream* PickReady(const std::vector<Stream*>& candidates) CUHAL_REQUIRES(mu);
  void DrainEager() CUHAL_REQUIRES(mu);
  // A stream whose ready head op is needed for `target` to reach `seq` (directly or through a
  // chain of waits), chosen as PickReady does; null when none can run now.
  Stream* FindNeededReady(Stream* target, std::uint64_t seq) CUHAL_REQUIRES(mu);
  // Makes progress towards (stream, seq): runs a ready op it needs, or waits for another thread.
  void Step(Stream* target, std::uint64_t seq) CUHAL_REQUIRES(mu);
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
