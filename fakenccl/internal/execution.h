// Copyright 2026 The cuhal Authors.
// Execution: the data movement and reductions of a Slot that left kOpen for kReady, done without
// the engine lock (engine.h's invariant 3), and the stream work body that claims Slots and
// finishes Tasks (Engine::RunLeg). Engine::RunLeg and friends are declared in engine.h; this pair
// holds them and the executors below.
#ifndef CUHAL_FAKENCCL_INTERNAL_EXECUTION_H_
#define CUHAL_FAKENCCL_INTERNAL_EXECUTION_H_

#include <string>
#include <vector>

#include "fakenccl/internal/engine.h"

namespace fakenccl {
namespace internal {

// What executing one Slot gave.
struct ExecResult {
  bool ok = true;
  bool internal = false;  // the fake itself failed (ncclInternalError for everyone)
  std::string text;
  std::vector<int> bad_ranks;  // ranks whose buffers were not device memory
};

// Whether `c`, the call of the only rank of a communicator, moves nothing: an in-place
// all-reduce, broadcast, reduce, all-gather or reduce-scatter other than PreMulSum and the average
// of floating types (NCCL's one-rank path; docs/driver_facts.md, "NCCL 2.28.3, one rank on one
// GPU"). Its pointers are not even translated, so NULL or host memory succeeds.
bool InPlaceNoOpOnOneRank(const CallDesc& c);

// Executes a collective Slot: d[r] is rank r's call (all agree, SameCollective). Reads every
// input before writing any output, so in-place and overlapping buffers are safe. `where` names
// the Slot in messages. Thread-safety: touches only the ranks' device memory (through fakecuda's
// pointer translation) and its arguments; call without the engine lock.
ExecResult ExecuteCollective(const std::vector<CallDesc>& d, const std::string& where);
// Executes a point-to-point Slot: `send` of rank `src` into `recv` of rank `dst`.
ExecResult ExecutePointToPoint(const CallDesc& send, int src, const CallDesc& recv, int dst,
                               const std::string& where);

}  // namespace internal
}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_INTERNAL_EXECUTION_H_
