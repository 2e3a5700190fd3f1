// Copyright 2026 The cuhal Authors.
// Fault injection and call accounting for the fake driver's entry points.
#ifndef CUHAL_FAKECUDA_FAULT_INJECTOR_H_
#define CUHAL_FAKECUDA_FAULT_INJECTOR_H_

#include <cuda.h>

#include <string>
#include <string_view>

#include "fakecuda/call_faults.h"

namespace fakecuda {

// When a CUDA entry point fails, and with which CUresult (see BasicFaultRule).
using FaultRule = BasicFaultRule<CUresult, CUDA_ERROR_UNKNOWN>;

// Decides, for each entry-point call, whether to fail it; counts and optionally logs calls (all
// of that is CallFaults); adds the FAKECUDA_FAULTS syntax.
//
// Ownership: owned by its FakeDriver. Thread-safety: all methods are thread-safe; the fast path
// with no rules and no log is two relaxed atomic operations. Stream ordering: not applicable
// (faults are decided when the host calls, not when work runs).
//
// Environment (read by the drop-in library at start): FAKECUDA_FAULTS, a ';'-separated list of
// rules "entry:mode:value:ERROR" such as "cuMemAlloc:nth:3:CUDA_ERROR_OUT_OF_MEMORY",
// "*:every:0:CUDA_ERROR_UNKNOWN" or "cuStreamCreate:fraction:0.25:CUDA_ERROR_INVALID_VALUE@7"
// (the @7 is the seed).
//
// Rules for every entry point ("*") leave cuGetExportTable alone (ExemptFromWildcards): the real
// driver serves its private tables unconditionally, and the CUDA 13.0 runtime, refused one
// (tools_tls, context_local_storage, context_checks), carries on and crashes at exit (SIGSEGV in
// its exit handler; seen in the runtime fault sweep, tests/fakecuda_dropin/
// cudart_underneath_test.sh). A rule naming cuGetExportTable still fails it.
class FaultInjector : public CallFaults<FaultRule, CUDA_SUCCESS> {
 public:
  FaultInjector() { ExemptFromWildcards("cuGetExportTable"); }

  // Parses FAKECUDA_FAULTS syntax; false (with *error) on a malformed rule, adding none.
  bool AddRulesFromSpec(std::string_view spec, std::string* error);
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_FAULT_INJECTOR_H_
