// Copyright 2026 The cuhal Authors.
// The fake driver's streams and events, and the queued stream work (ops) they hold, with the
// global sequence numbers that order it. The scheduler that runs the work is DriverState's
// (fakecuda/internal/scheduler.cc); this is the state it works on.
//
// Invariants:
//  1. Every op gets a global, increasing sequence number (TakeSeq) when enqueued. A stream's ops
//     complete in order; Stream::completed_seq is the seq of its last completed op. A dependency
//     (stream, seq) is satisfied when that stream's completed_seq >= seq, or the stream is gone
//     (it is reaped only once drained).
//  2. Stream and event ids are never reused (DriverState::NewId). A stream destroyed by the user
//     stays here (Stream::destroyed) until its queue drains (DriverState::ReapStreams), so queued
//     work and waits on it stay valid.
//  3. Nothing refers to an event by pointer across a release of the driver lock: records name it
//     by (id, generation), so destroying an event with a pending record is safe.
#ifndef CUHAL_FAKECUDA_INTERNAL_STREAM_TABLE_H_
#define CUHAL_FAKECUDA_INTERNAL_STREAM_TABLE_H_

#include <cuda.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fakecuda/race/race_access.h"

namespace fakecuda {

// What an Op runs: the fake's own code, or the user's (which runs on the callback thread only).
enum class OpKind { kDevice, kHostFunction, kKernel };

// One unit of stream work.
struct Op {
  std::uint64_t seq = 0;
  OpKind kind = OpKind::kDevice;
  const char* what = "";  // the entry point that queued it, for reports
  std::vector<std::pair<std::uint64_t, std::uint64_t>> deps;  // (stream id, seq)
  std::function<bool()> ready;  // extra readiness (collectives waiting for peers); may be empty
  // `ready` watches device memory that any device work may write (cuStreamWaitValue*): a
  // synchronization blocked on it may run unrelated ready device work (FindNeededReady).
  bool watches_memory = false;
  // The work. Runs with the driver lock released; returns a sticky error or CUDA_SUCCESS.
  std::function<CUresult()> body;
  double cost_us = 0.0;
  std::uint64_t record_event_id = 0;  // for event records: the event to stamp
  std::uint64_t record_generation = 0;
  // For the race detector (fakecuda/race/race_detector.h), filled only when it is on: the bytes
  // the op reads and writes, and an order that needs no wait (an event wait whose record had
  // completed: (stream id, seq) of that record).
  std::vector<RaceAccess> accesses;
  std::uint64_t after_stream = 0;
  std::uint64_t after_seq = 0;
  // A graph node's op (cuGraphLaunch, race detector only): the executable graph's id and the
  // node's; the detector orders it after the launch's head and the node's dependencies
  // (RaceDetector::OnGraphNode), not after the nodes queued before it on the stream.
  std::uint64_t graph_exec = 0;
  std::uint64_t graph_node = 0;
};

struct Stream {
  std::uint64_t id = 0;
  // What cuStreamGetId reports (fakecuda/entry/streamctx_entry.cc): the real driver's stream ids
  // come from a counter of their own (StreamTable::TakePublicIds); 0 for the fake's internal
  // streams.
  std::uint64_t public_id = 0;
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
  // The race detector's agent for this stream (RaceDetector::StreamAgent), once it has one.
  mutable std::size_t race_agent = static_cast<std::size_t>(-1);
  // cuStreamSetAttribute's values (fakecuda/entry/streamctx_entry.cc; the priority attribute is
  // `priority`), copied by cuStreamCopyAttributes. The fake only stores them.
  CUaccessPolicyWindow access_policy{};
  int sync_policy = -1;  // measured: a new stream reads -1 (no policy set)
  CUlaunchMemSyncDomainMap mem_sync_domain_map{0, 1};
  int mem_sync_domain = CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT;
};

struct Event {
  std::uint64_t id = 0;
  std::uint64_t ctx_id = 0;
  unsigned flags = 0;
  std::uint64_t generation = 0;  // incremented by each record
  std::uint64_t stream_id = 0;   // stream of the last record (0: never recorded)
  std::uint64_t seq = 0;         // seq of the last record's op
  bool complete = true;          // the last record has completed (or it was never recorded)
  // The recording stream's `waited` at the last record: a wait for this event orders the waiting
  // stream after everything the recording stream was ordered after (memory pools follow event
  // dependencies transitively, measured on the H200: docs/driver_facts.md, "Pool placement").
  std::unordered_map<std::uint64_t, std::uint64_t> waited;
  double time_us = 0.0;          // virtual timestamp of the last completed record
};

// The streams and events of one fake driver.
//
// Ownership: one per DriverState, held privately by it (DriverState::streams()); owns the Stream
// and Event objects (pointers stay valid until they are erased, which happens only with the
// driver lock held: look them up again by id after anything that may release it). Thread-safety:
// none of its own; every use is under DriverState::mu, which the accessor requires (checked by
// the thread-safety preset). Stream ordering: invariant 1.
class StreamTable {
 public:
  using StreamMap = std::unordered_map<std::uint64_t, std::unique_ptr<Stream>>;
  using EventMap = std::unordered_map<std::uint64_t, std::unique_ptr<Event>>;

  StreamTable() = default;
  StreamTable(const StreamTable&) = delete;             // owns the streams and events
  StreamTable& operator=(const StreamTable&) = delete;  // ditto

  // --- sequence numbers (invariant 1) ---
  // The seq the next enqueued op gets.
  std::uint64_t next_seq() const { return next_seq_; }
  // Takes the next seq.
  std::uint64_t TakeSeq() { return next_seq_++; }
  // Takes `n` consecutive stream ids of the driver's counter (Stream::public_id), returning the
  // first: created streams take one each, contexts take the ids of their internal streams.
  std::uint64_t TakePublicIds(std::uint64_t n) {
    const std::uint64_t first = next_public_id_;
    next_public_id_ += n;
    return first;
  }

  // --- streams ---
  Stream* FindStream(std::uint64_t id);
  const Stream* FindStream(std::uint64_t id) const;
  // Creates stream `id` of context `ctx_id`.
  Stream* AddStream(std::uint64_t id, std::uint64_t ctx_id, unsigned flags, int priority);
  // Erases the stream at `it` (the scheduler's reaping), returning the next position.
  StreamMap::const_iterator EraseStream(StreamMap::const_iterator it);
  // Every stream, for the scheduler's scans (the Stream objects are mutable through it).
  const StreamMap& streams() const { return streams_; }

  // --- events ---
  Event* FindEvent(std::uint64_t id);
  // Creates event `id` of context `ctx_id`.
  Event* AddEvent(std::uint64_t id, std::uint64_t ctx_id, unsigned flags);
  void EraseEvent(std::uint64_t id) { events_.erase(id); }
  const EventMap& events() const { return events_; }

  // Erases every stream and event of context `ctx_id` (its work has drained).
  void EraseContext(std::uint64_t ctx_id);

 private:
  StreamMap streams_;
  EventMap events_;
  std::uint64_t next_seq_ = 1;
  std::uint64_t next_public_id_ = 1;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_STREAM_TABLE_H_
