// Copyright 2026 The cuhal Authors.
// Runs a fuzz sequence against any CudaApi table and writes its transcript.
//
// Transcript format (docs/fuzzing.md): one line per call,
//   "<id> <Op> a=<ref> b=<ref> c=<ref> x=<x> y=<y> z=<z> -> <result> [<output> ...]"
// where a ref is "h<id>" (a handle of the sequence), "null" or "-"; <result> is the cuda.h name
// of the CUresult, "SUCCESS|NOT_READY" for the timing-dependent answers of queries, or
// "SKIP(<why>)" for a call the model refused (the same on every backend); outputs are in model
// terms ("out=h12", "ctx=primary", "hash=..." of memory contents, attribute values). Before the
// calls: the prologue (cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent); after:
// teardown lines ("T ...") that free what the sequence left, and "END".
#ifndef CUHAL_FUZZ_EXECUTOR_H_
#define CUHAL_FUZZ_EXECUTOR_H_

#include <functional>
#include <string>
#include <vector>

#include "core/symbols/cuda_api.h"
#include "fuzz/sequence.h"

namespace cuhal::fuzz {

using LineSink = std::function<void(const std::string& line)>;

// Runs `sequence` on `api` (which must be initialized or initializable by cuInit), calling
// `emit` with each transcript line as soon as it is known (so that a crash leaves the lines
// before it). Never throws; a failing call is a line, not an error. Leaves no context current
// and releases every object the sequence left, as far as the driver lets it.
// `before_release`, when set, runs after the teardown has freed the sequence's objects and
// before the executor drops its own primary-context retain (which would make the driver destroy
// whatever the teardown missed, hiding it from a leak check).
void Execute(const CudaApi& api, const Sequence& sequence, const LineSink& emit,
             const std::function<void()>& before_release = nullptr);

// Runs `sequence` on a fresh in-process fakecuda driver and returns its transcript; when the
// driver still holds objects after the teardown (other than the executor's own primary-context
// retain), or any at all after the executor's last release, adds "LEAK <report>" lines; each
// stream-order race fakecuda's detector found adds a "RACE <finding>" line.
// `wrap`, when set, may change the table before it is used (tests perturb one entry with it).
std::vector<std::string> RunOnFake(const Sequence& sequence,
                                   const std::function<void(CudaApi*)>& wrap = nullptr);
// The same, handing each line to `emit` as soon as it is known.
void RunOnFake(const Sequence& sequence, const LineSink& emit,
               const std::function<void(CudaApi*)>& wrap = nullptr);

}  // namespace cuhal::fuzz

#endif  // CUHAL_FUZZ_EXECUTOR_H_
