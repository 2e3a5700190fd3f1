// Copyright 2026 The cuhal Authors.
// Differential allocation traces for the stream-ordered allocator: a small text format, a parser,
// a replayer that runs a trace through any cuhal::CudaApi (fakecuda or the real driver), and
// comparisons (against the trace's expected values, and fake against real).
//
// Trace format (tests/pools/traces/*.trace), one step per line:
//
//   OP ARG... [-> KEY=VALUE ...] [# comment]
//
// '#' starts a comment; a step whose comment contains the word UNMEASURED states an expectation
// that nobody has checked on a real GPU yet (the real driver decides; the lead verifies it). A
// step's expectations come after "->". The replayer reads the trace pool's four statistics after
// EVERY step and compares them all; the trace only writes the ones that change (expected values
// carry forward from step to step, starting at 0). Every other expectation applies to its step
// only; a step with no err= expects CUDA_SUCCESS.
//
// Numbers: decimal, with an optional binary suffix K, M or G, and '+'-separated sums
// ("32M+1" is 33554433); "max" is UINT64_MAX.
//
// Steps (S: a stream name, E: an event name, K: a slot name; "legacy" names CU_STREAM_LEGACY):
//   pool create [PROPS]         create the trace pool (the pool whose statistics are compared)
//   pool default                use device 0's default pool (the replayer empties it first)
//   try_create [PROPS]          cuMemPoolCreate that is expected to fail (-> err=...)
//       PROPS: alloc=pinned|managed|N  loc=device|host|host_numa|N  dev=N  handles=N  max=BYTES
//              usage=N  reserved=N (first reserved byte)  win32=1
//   stream S [nonblocking]      cuStreamCreate
//   event E                     cuEventCreate(CU_EVENT_DISABLE_TIMING)
//   alloc K BYTES S             cuMemAllocFromPoolAsync from the trace pool  (-> reuse=yes|no)
//   alloc_async K BYTES S       cuMemAllocAsync (the current pool of S's device)
//   alloc_null BYTES S          cuMemAllocFromPoolAsync with dptr = NULL
//   free K S                    cuMemFreeAsync of slot K's (last) pointer
//   free_ptr WHAT S             cuMemFreeAsync of WHAT: null, unknown, interior:K (K + 256) or
//                               device (a cuMemAlloc block)
//   free_sync K                 cuMemFree of slot K
//   record E S / wait S E       cuEventRecord / cuStreamWaitEvent
//   sync_stream S / sync_event E / sync_ctx
//   query_stream S              one cuStreamQuery (never of a blocked stream, like the waits)
//   poll_stream S / poll_event E   query until it succeeds (completes work, proves nothing)
//   block S / unblock S         hold S's later work behind a host function / let it go
//   trim BYTES                  cuMemPoolTrimTo
//   set ATTR VALUE / get ATTR   cuMemPoolSetAttribute / GetAttribute (-> value=N)
//       ATTR: follow_event_deps opportunistic internal_deps release_threshold reserved_current
//             reserved_high used_current used_high
//   destroy                     cuMemPoolDestroy of the trace pool (its statistics stop being read)
//   destroy_default             cuMemPoolDestroy of device 0's default pool
//   set_current trace|default   cuDeviceSetMemPool(0, ...)
//   get_current                 cuDeviceGetMemPool(0) (-> current=trace|default|other)
//   set_access DEV none|read|rw [host]   cuMemPoolSetAccess with one descriptor
//   get_access DEV              cuMemPoolGetAccess (-> access=none|read|rw)
//   attr_pool K                 CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE of slot K (->
//   pool=trace|default|none) no_context / restore_context   cuCtxSetCurrent(NULL) / back to the
//   primary context
//
// Expectations: err=CUDA_ERROR_...  reserved= reserved_high= used= used_high=  reuse=yes|no
// (allocations: whether the new range overlaps memory freed earlier in the trace; required on a
// successful alloc)  same_as=K (the same address as slot K had)  value= current= access= pool=
#ifndef CUHAL_TESTS_POOLS_TRACE_REPLAYER_H_
#define CUHAL_TESTS_POOLS_TRACE_REPLAYER_H_

#include <cuda.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/symbols/cuda_api.h"

namespace cuhal::pools {

// RESERVED_MEM_CURRENT, RESERVED_MEM_HIGH, USED_MEM_CURRENT, USED_MEM_HIGH.
inline constexpr int kNumStats = 4;
inline constexpr std::array<const char*, kNumStats> kStatNames = {"reserved", "reserved_high",
                                                                  "used", "used_high"};
using PoolStats = std::array<std::uint64_t, kNumStats>;

struct TraceStep {
  int line = 0;
  std::string text;  // the step as written (without the comment)
  std::string op;
  std::vector<std::string> args;
  bool unmeasured = false;
  // Expectations.
  CUresult err = CUDA_SUCCESS;
  std::optional<PoolStats> stats;  // after the step (carried forward); none before a pool exists
  std::optional<bool> reuse;
  std::string same_as;
  std::map<std::string, std::string> values;  // value= current= access= pool=
};

struct Trace {
  std::string name;
  std::vector<TraceStep> steps;
  bool uses_gates = false;  // has block steps: needs a backend that can hold work
};

// Parses a trace; false with *error ("name:line: what") on a malformed one.
bool ParseTrace(std::string_view text, const std::string& name, Trace* trace, std::string* error);
bool LoadTrace(const std::string& path, Trace* trace, std::string* error);
// The *.trace files of `dir`, sorted.
std::vector<std::string> ListTraces(const std::string& dir);

// What one step did on one backend.
struct StepResult {
  CUresult err = CUDA_SUCCESS;
  std::optional<PoolStats> stats;     // read after the step (none when no pool is readable)
  CUresult stats_err = CUDA_SUCCESS;  // a failing cuMemPoolGetAttribute, if any
  std::optional<bool> reuse;          // successful allocations
  std::optional<bool> same;           // when same_as= was asked
  std::map<std::string, std::string> values;
};

struct ReplayResult {
  std::vector<StepResult> steps;   // one per trace step (fewer if the replay stopped)
  std::string fatal;               // why the replay could not run or stopped, if it did
  std::vector<std::string> notes;  // cleanup problems, gates that timed out
};

// Runs `trace` through `api` on device 0 (cuInit must have succeeded). Creates and destroys
// everything it uses; leaves no context current.
ReplayResult Replay(const cuhal::CudaApi& api, const Trace& trace);

// One disagreement.
struct Mismatch {
  std::string trace;
  int line = 0;
  std::string step;
  std::string what;   // "reserved", "err", "reuse", ...
  std::string left;   // expected (or the fake's value)
  std::string right;  // observed (or the real driver's value)
  bool unmeasured = false;
  std::string ToString(const char* left_name, const char* right_name) const;
};

// Observed against the trace's expectations.
std::vector<Mismatch> CompareToExpected(const Trace& trace, const ReplayResult& observed);
// Two backends against each other, step by step (left: fake, right: real).
std::vector<Mismatch> CompareResults(const Trace& trace, const ReplayResult& left,
                                     const ReplayResult& right);

// "CUDA_ERROR_INVALID_VALUE" (or "CUresult 12345").
std::string ResultName(CUresult result);

}  // namespace cuhal::pools

#endif  // CUHAL_TESTS_POOLS_TRACE_REPLAYER_H_
