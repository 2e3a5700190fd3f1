// Copyright 2026 The cuhal Authors.
// Fault injection and call accounting for fakenccl's entry points (fakecuda's CallFaults with
// ncclResult_t), plus rank death.
#ifndef CUHAL_FAKENCCL_NCCL_FAULT_INJECTOR_H_
#define CUHAL_FAKENCCL_NCCL_FAULT_INJECTOR_H_

#include <nccl.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/mutex.h"
#include "fakecuda/call_faults.h"

namespace fakenccl {

// When an NCCL entry point fails, and with which ncclResult_t (see fakecuda::BasicFaultRule).
using NcclFaultRule = fakecuda::BasicFaultRule<ncclResult_t, ncclSystemError>;

// "Rank `rank` dies at its `nth` communication call": the nth collective or point-to-point call
// (ncclAllReduce, ncclSend, ...; 1-based, counted per communicator handle, calls with count 0
// that NCCL discards not counted) made on a communicator where the caller is rank `rank` (and,
// when `nranks` > 0, the communicator has that many ranks). From that call on, the handle is
// dead: its calls return ncclSuccess and post nothing, as if its process had vanished, so its
// peers wait for it, time out on the virtual clock and see ncclRemoteError.
struct RankDeathRule {
  int rank = 0;
  std::uint64_t nth = 1;
  int nranks = 0;  // 0: any communicator size
};

// Decides, for each entry-point call, whether to fail it; counts and optionally logs calls (all
// of that is fakecuda::CallFaults); holds the rank-death rules.
//
// Ownership: owned by its FakeNccl. Thread-safety: every method is thread-safe; with no rules and
// no log the per-call cost is two relaxed atomic operations. Stream ordering: not applicable
// (faults are decided when the host calls, before the call has any effect).
//
// Environment (read by the drop-in libnccl.so.2 at load): FAKENCCL_FAULTS, a ';'-separated list
// of rules "entry:mode:value:ERROR" such as "ncclAllReduce:nth:3:ncclSystemError",
// "*:every:0:ncclInternalError" or "ncclSend:fraction:0.25:ncclRemoteError@7" (the @7 is the
// seed), and rank deaths "die:RANK:NTH" or "die:RANK:NTH:NRANKS".
class NcclFaultInjector : public fakecuda::CallFaults<NcclFaultRule, ncclSuccess> {
 public:
  // Parses FAKENCCL_FAULTS syntax; false (with *error) on a malformed item, adding nothing.
  bool AddRulesFromSpec(std::string_view spec, std::string* error);
  void ClearRules();  // also clears rank-death rules

  void AddRankDeath(RankDeathRule rule);
  // True when a communicator rank (`rank` of `nranks`) that has now made `call` communication
  // calls (1-based) dies at this one.
  bool ShouldDie(int rank, int nranks, std::uint64_t call) const;

 private:
  mutable cuhal::Mutex deaths_mu_;
  std::vector<RankDeathRule> deaths_ CUHAL_GUARDED_BY(deaths_mu_);
};

// nccl.h's enumerator spelling ("ncclInvalidArgument"), or "ncclResult_t(<n>)".
std::string NcclResultName(ncclResult_t result);

}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_NCCL_FAULT_INJECTOR_H_
