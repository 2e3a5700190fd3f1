// Copyright 2026 The cuhal Authors.
// Call matching: the checks of one communication call (NCCL's ArgsCheck), the posting of a
// group's calls into their Slots (collective slots by sequence number, point-to-point slots by
// (sender, receiver, k)), mismatch detection, timeouts and failure of Slots, and the `ready`
// predicate of the stream work (Engine::LegReady). These are Engine methods (engine.h); this pair
// holds their definitions and the matching rules below.
#ifndef CUHAL_FAKENCCL_INTERNAL_MATCHING_H_
#define CUHAL_FAKENCCL_INTERNAL_MATCHING_H_

#include <string>

#include "fakenccl/internal/engine.h"

namespace fakenccl {
namespace internal {

// "ncclAllReduce(count=4, ncclFloat32, ncclSum)", for mismatch messages.
std::string DescribeCall(const CallDesc& d);
// Whether two ranks' collective calls at the same sequence number agree.
bool SameCollective(const CallDesc& a, const CallDesc& b);
// The simulated device time of a call on `nranks` ranks, in microseconds (fakecuda's cost model).
double CostUs(const CallDesc& d, int nranks);

}  // namespace internal
}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_INTERNAL_MATCHING_H_
