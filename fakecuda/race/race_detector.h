// Copyright 2026 The cuhal Authors.
// fakecuda's stream-order race detector (FAKECUDA_RACECHECK=report|fail, DriverOptions::racecheck).
//
// It decides, when an operation is enqueued, whether each byte range it reads or writes is
// ordered after every earlier conflicting access (overlapping bytes, one of them a write), after
// the allocation it touches was made (stream-ordered memory) and before that allocation's free.
// The order is the one the CUDA programming model promises, not the one the fake's scheduler
// happened to run: work that completed early is still unordered when nothing in the program
// orders it.
//
// Model (vector clocks). Every stream is an agent; each position on a stream (an op, or a pool
// allocation or free that needs no op) has a key, the global sequence number of the op (or one
// taken for it), and the stream's vector clock after it: for each stream, the highest key known
// to happen before. Host threads carry clocks too (no positions of their own: host code touches
// device memory only through the driver). Edges:
//   * stream order: a position joins its stream's clock;
//   * enqueue: it joins the enqueuing host thread's clock (everything the thread had seen);
//   * the legacy default stream waits for every blocking stream of its context and they wait for
//     it (the fake's rule, DriverState::Enqueue), non-blocking streams do not; per-thread default
//     streams are blocking streams of their own;
//   * every dependency the fake queued (Op::deps: event waits on pending records, pool internal
//     dependencies, graph-exec serialization) and every event wait whose record had already
//     completed (Op::after_stream/after_seq);
//   * host synchronization (cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize, blocking
//     copies and frees, a cuStreamQuery/cuEventQuery that returned CUDA_SUCCESS): the host thread
//     joins the clock of the position it waited for;
//   * graph launches: each node of a launch is an agent of its own (one per executable graph
//     and node, reused by later launches), ordered after the launch's head position on the
//     stream and after the nodes it depends on, not after the nodes queued before it: two nodes
//     with no path between them are unordered, as on the GPU. The stream's next position
//     follows every node of the launch; an event record node records what it depends on;
//   * host functions: the thread running one joins its position; when it starts, its clock is
//     released to every host thread, which acquires it at its next enqueue (a host function is
//     how user code learns of device progress outside the driver, e.g. a semaphore signal; the
//     detector cannot see that wait, so it assumes any later host action may depend on it; the
//     release is at the start, not the return, because the thread it wakes may enqueue work
//     before the function has returned);
//   * host threads share their observations: what one thread learned by a synchronization is
//     released to every host thread likewise, since threads pass such knowledge on through
//     their own locks and condition variables, which the detector cannot see (cuhal's queue
//     scheduler does: one thread observes a semaphore's signal, another submits the work it
//     unblocks). So a race between threads is found only when no thread had synchronized with
//     the first access before the second was enqueued; never a false one.
// Accesses are kept per allocation instance (a pool address reused by a later allocation is a
// new instance): a free is a write of the whole allocation, every access after it is a
// use-after-free, and a pool allocation's accesses must be ordered after its allocation.
//
// Findings name both operations (entry point, stream, byte range, allocation and where it came
// from) and both host call sites (backtrace(3) frames outside fakecuda), and are reported once
// per pair of call sites: to stderr as one line ("fakecuda: race: ..." or
// "fakecuda: use-after-free: ..."), and, in kFail mode, as CUDA_ERROR_ILLEGAL_STATE returned by
// the call that enqueued the second operation (the operation is still queued and runs: the
// detector never changes what the program does; every finding fails its call, reported or not).
// A call site is the instruction that called the entry point; its frames are unwound at its
// first call and reused after (unwinding costs microseconds per operation, the check itself
// about a hundred nanoseconds), so the frames above a helper that wraps an entry point are
// those of the helper's first caller.
//
// Ownership: one per DriverState (DriverState::race(), null when the detector is off).
// Thread-safety: none of its own; every method is called with DriverState::mu held (the
// verdict, TakeRaceVerdict, is thread-local). Stream ordering: it observes, never orders.
#ifndef CUHAL_FAKECUDA_RACE_RACE_DETECTOR_H_
#define CUHAL_FAKECUDA_RACE_RACE_DETECTOR_H_

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/race/race_access.h"

namespace fakecuda {

class DriverState;
struct Stream;
struct Op;
struct Allocation;

namespace race {

// A vector clock: for each agent (dense index), the highest position key known to happen before.
using Clock = std::vector<std::uint64_t>;

// A host call site: interned backtrace frames.
using SiteId = std::uint32_t;

}  // namespace race

class RaceDetector {
 public:
  RaceDetector(RaceCheck mode, std::uint64_t driver_serial);
  ~RaceDetector();
  RaceDetector(const RaceDetector&) = delete;             // owns the clocks and shadows
  RaceDetector& operator=(const RaceDetector&) = delete;  // ditto

  RaceCheck mode() const { return mode_; }

  // --- positions (driver lock held) ---
  // `op` (its seq set, deps added) is being enqueued on `s`: computes its clock and checks its
  // accesses.
  void OnEnqueue(DriverState* st, const Stream& s, const Op& op);
  // A stream-ordered allocation (pool memory: id, base, size) made on `s` at `key`.
  void OnAllocAsync(DriverState* st, const Stream& s, std::uint64_t alloc_id, std::uintptr_t base,
                    std::size_t size, std::uint64_t key, const char* what);
  // A stream-ordered free of `a` on `s` at `key` (cuMemFreeAsync): a write of all of `a`.
  void OnFreeAsync(DriverState* st, const Stream& s, const Allocation& a, std::uint64_t key,
                   const char* what);
  // Graph launches (cuGraphLaunch, pass 2, in topological order): node `node` of executable
  // `exec`, launched on `s` behind the head op at `head`, depends on `deps` (node ids of the
  // same launch). Called for every node before its op (if any) is enqueued with
  // Op::graph_exec/graph_node set.
  void OnGraphNode(DriverState* st, const Stream& s, std::uint64_t exec, std::uint64_t node,
                   std::uint64_t head, const std::vector<std::uint64_t>& deps);
  // The stream's positions from `key` on follow the nodes `nodes` of executable `exec`: called
  // before an event record node (with that node) and after the launch (with every node, `key`
  // the launch's last seq).
  void OnGraphJoin(const Stream& s, std::uint64_t exec, const std::vector<std::uint64_t>& nodes,
                   std::uint64_t key);
  // Allocation `alloc_id` left the memory map: forget its accesses.
  void OnRelease(std::uint64_t alloc_id);

  // --- host synchronization (driver lock held) ---
  // The calling thread saw everything of stream `stream_id` at keys <= `key` complete.
  void OnHostWaited(std::uint64_t stream_id, std::uint64_t key);
  // The calling thread saw every stream of context `ctx_id` (0: every context) drain.
  void OnContextSynchronized(DriverState* st, std::uint64_t ctx_id);
  // A host function at (stream_id, key) starts on the calling thread / has returned.
  void OnHostFunctionStart(std::uint64_t stream_id, std::uint64_t key);
  void OnHostFunctionDone(std::uint64_t stream_id, std::uint64_t key);

  // --- results (driver lock held) ---
  std::size_t finding_count() const { return findings_.size(); }
  const std::vector<std::string>& findings() const { return findings_; }

 private:
  struct Agent;
  struct Record;
  struct Shadow;
  struct Host;

  Agent& StreamAgent(const Stream& s);
  Agent* NodeAgent(std::uint64_t exec, std::uint64_t node);
  race::Clock& HostClock();
  // Adds a position at `key` on `s` (all edges but the op's own deps) and returns its agent.
  Agent& Position(DriverState* st, const Stream& s, std::uint64_t key, const Op* op);
  // The clock of stream `stream_id` at keys <= key (empty when unknown).
  void JoinStreamAt(race::Clock* into, std::uint64_t stream_id, std::uint64_t key, bool* changed);
  Shadow* ShadowFor(DriverState* st, std::uintptr_t addr, std::uintptr_t* base_out);
  void CheckAccess(DriverState* st, const Stream& s, const Agent& b, std::uint64_t key,
                   const char* what, race::SiteId site, const RaceAccess& access);
  void Report(bool use_after_free, const std::string& text, race::SiteId a, race::SiteId b);
  std::unique_ptr<Shadow> NewShadow();
  void DropShadow(std::uint64_t alloc_id);
  const std::string& Origin(Shadow& sh);  // where the allocation came from, for reports
  race::SiteId CaptureSite();
  race::SiteId UnwindSite();
  std::string DescribeSite(race::SiteId site);

  const RaceCheck mode_;
  const std::uint64_t serial_;  // this detector's, for thread-local caches
  std::vector<std::unique_ptr<Agent>> agents_;               // by dense index
  std::unordered_map<std::uint64_t, std::size_t> stream_agents_;  // stream id -> index
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> node_agents_;  // (exec, node)
  std::unordered_map<std::uint64_t, std::size_t> host_nodes_;  // host node op seq -> agent
  std::unordered_map<std::thread::id, std::unique_ptr<Host>> host_clocks_;
  race::Clock released_;  // joined clocks of host functions that returned
  std::unordered_map<std::uint64_t, std::unique_ptr<Shadow>> shadows_;  // by allocation id
  std::vector<std::unique_ptr<Shadow>> spare_shadows_;
  std::vector<std::vector<void*>> sites_;
  std::unordered_map<std::size_t, std::vector<race::SiteId>> site_index_;  // frames hash -> ids
  std::unordered_map<void*, race::SiteId> caller_sites_;  // entry point's return address -> id
  struct CallerSlot {
    void* caller = nullptr;
    race::SiteId id = 0;
  };
  std::array<CallerSlot, 16> caller_cache_{};
  std::set<std::pair<race::SiteId, race::SiteId>> reported_;
  std::vector<std::string> findings_;
};

// The verdict of the calling thread's last enqueue under kFail: CUDA_ERROR_ILLEGAL_STATE once
// after a finding, else `result`. Entry points that enqueue accesses return through it.
namespace race {
inline thread_local CUresult t_verdict = CUDA_SUCCESS;
}  // namespace race
inline CUresult TakeRaceVerdict(CUresult result = CUDA_SUCCESS) {
  if (race::t_verdict == CUDA_SUCCESS) [[likely]] return result;
  race::t_verdict = CUDA_SUCCESS;
  return result == CUDA_SUCCESS ? CUDA_ERROR_ILLEGAL_STATE : result;
}

// The mode FAKECUDA_RACECHECK asks for ("off", "report", "fail"; unset: off); false with *error
// when it holds anything else.
bool RaceCheckFromEnvironment(RaceCheck* mode, std::string* error);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_RACE_RACE_DETECTOR_H_
