// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/capture_model.h"

#include <utility>

namespace fakecuda {

CaptureSequence* CaptureModel::Find(std::uint64_t id) {
  auto it = captures_.find(id);
  return it == captures_.end() ? nullptr : &it->second;
}

CaptureSequence& CaptureModel::Begin(CaptureSequence seq) {
  const std::uint64_t id = seq.id;
  const std::uint64_t origin = seq.origin_stream;
  seq.streams = {origin};
  CaptureSequence& stored = captures_[id] = std::move(seq);
  StreamCapture& part = streams_[origin];
  part = StreamCapture{};
  part.capture_id = id;
  return stored;
}

StreamCapture* CaptureModel::OfStream(std::uint64_t stream_id) {
  auto it = streams_.find(stream_id);
  return it == streams_.end() ? nullptr : &it->second;
}

CaptureSequence* CaptureModel::SequenceOf(std::uint64_t stream_id) {
  StreamCapture* part = OfStream(stream_id);
  return part == nullptr ? nullptr : Find(part->capture_id);
}

void CaptureModel::Join(std::uint64_t stream_id, std::uint64_t capture_id,
                        std::vector<std::uint64_t> deps) {
  CaptureSequence* seq = Find(capture_id);
  if (seq == nullptr) return;
  seq->streams.insert(stream_id);
  StreamCapture& part = streams_[stream_id];
  part = StreamCapture{};
  part.capture_id = capture_id;
  part.deps = std::move(deps);
}

void CaptureModel::End(std::uint64_t capture_id) {
  auto it = captures_.find(capture_id);
  if (it == captures_.end()) return;
  for (std::uint64_t s : it->second.streams) streams_.erase(s);
  for (auto e = events_.begin(); e != events_.end();) {
    e = e->second.capture_id == capture_id ? events_.erase(e) : std::next(e);
  }
  captures_.erase(it);
}

const CapturedEvent* CaptureModel::OfEvent(std::uint64_t event_id) const {
  auto it = events_.find(event_id);
  if (it == events_.end() || captures_.count(it->second.capture_id) == 0) return nullptr;
  return &it->second;
}

CUstreamCaptureMode& ThreadCaptureMode(std::uint64_t serial) {
  struct Mode {
    std::uint64_t serial = 0;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  };
  thread_local Mode mode;
  if (mode.serial != serial) {
    mode.serial = serial;
    mode.mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  }
  return mode.mode;
}

}  // namespace fakecuda
