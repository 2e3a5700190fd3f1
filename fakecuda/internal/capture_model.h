// Copyright 2026 The cuhal Authors.
// The fake driver's stream capture: the capture sequences (cuStreamBeginCapture ..
// cuStreamEndCapture), which streams take part in each, each stream's capture dependencies, the
// events recorded inside a capture, and the threads' capture interaction modes
// (cuThreadExchangeStreamCaptureMode). Internal to fakecuda; the policy (what is captured, what
// is refused, what invalidates) is fakecuda/entry/capture_entry.cc, measured on the H200
// (docs/driver_facts.md, "Stream capture and graphs").
//
// Invariants:
//  1. A stream takes part in at most one capture sequence (streams_), and every stream listed in
//     a sequence's `streams` has an entry in streams_ naming it, and the reverse. A sequence ends
//     (End) all at once: its streams leave, its captured events are forgotten.
//  2. Dependencies are node ids of the sequence's graph (GraphModel); a node a stream or event
//     depends on is never destroyed while the sequence lives (the graph cannot be destroyed
//     while it is being captured, and captured nodes are only added).
//  3. Capture ids are never-reused driver ids (DriverState::NewId), so they are never 0.
#ifndef CUHAL_FAKECUDA_INTERNAL_CAPTURE_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_CAPTURE_MODEL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace fakecuda {

struct CaptureSequence {
  std::uint64_t id = 0;
  std::uint64_t graph_id = 0;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::uint64_t origin_stream = 0;
  std::uint64_t ctx_id = 0;
  std::uint64_t thread = 0;  // ThreadKey() of the thread that began it
  bool invalidated = false;
  std::set<std::uint64_t> streams;  // every stream in it, the origin included
  // Begun by cuStreamBeginCaptureToGraph: the graph is the user's (an invalidated or discarded
  // capture leaves it, with the nodes captured so far, instead of destroying it).
  bool user_graph = false;
  std::size_t user_graph_nodes = 0;  // its node count when the capture began
};

// A stream's part in a capture sequence.
struct StreamCapture {
  std::uint64_t capture_id = 0;
  std::vector<std::uint64_t> deps;  // what the stream's next captured node depends on
  // cuStreamGetCaptureInfo's output arrays: valid until the stream's next capture call.
  std::vector<CUgraphNode> dep_handles;
  std::vector<CUgraphEdgeData> edge_data;
};

// An event recorded in a capturing stream: what a stream that waits on it depends on.
struct CapturedEvent {
  std::uint64_t capture_id = 0;
  std::vector<std::uint64_t> deps;
};

// The capture sequences of one fake driver.
//
// Ownership: one per GraphModel (fakecuda/internal/graph_model.h), which DriverState holds.
// Thread-safety: none of its own; every use is under DriverState::mu (GraphModel is reached only
// through DriverState::graphs(), which requires it). Stream ordering: none: captured work is
// never enqueued; it becomes graph nodes.
class CaptureModel {
 public:
  CaptureModel() = default;
  CaptureModel(const CaptureModel&) = delete;             // owns the sequences
  CaptureModel& operator=(const CaptureModel&) = delete;  // ditto

  // No sequence at all (the fast path of every entry point that enqueues work).
  bool empty() const { return captures_.empty(); }
  const std::map<std::uint64_t, CaptureSequence>& all() const { return captures_; }
  CaptureSequence* Find(std::uint64_t id);
  // Starts sequence `seq` (id, graph, mode, origin, ctx, thread set) with its origin stream.
  CaptureSequence& Begin(CaptureSequence seq);
  // The capture part of `stream_id`, or null when it takes part in none.
  StreamCapture* OfStream(std::uint64_t stream_id);
  // The sequence `stream_id` takes part in, or null.
  CaptureSequence* SequenceOf(std::uint64_t stream_id);
  // Makes `stream_id` (in no sequence) join `capture_id` depending on `deps`.
  void Join(std::uint64_t stream_id, std::uint64_t capture_id, std::vector<std::uint64_t> deps);
  // Ends a sequence (invariant 1).
  void End(std::uint64_t capture_id);

  // The capture state of an event, or null when it was not recorded in a live sequence.
  const CapturedEvent* OfEvent(std::uint64_t event_id) const;
  void RecordEvent(std::uint64_t event_id, CapturedEvent captured) {
    events_[event_id] = std::move(captured);
  }
  void ForgetEvent(std::uint64_t event_id) { events_.erase(event_id); }

 private:
  std::map<std::uint64_t, CaptureSequence> captures_;
  std::map<std::uint64_t, StreamCapture> streams_;
  std::map<std::uint64_t, CapturedEvent> events_;
};

// The calling thread's capture interaction mode for the driver with `serial` (default
// CU_STREAM_CAPTURE_MODE_GLOBAL; reset when the thread first talks to another driver instance).
CUstreamCaptureMode& ThreadCaptureMode(std::uint64_t serial);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_CAPTURE_MODEL_H_
