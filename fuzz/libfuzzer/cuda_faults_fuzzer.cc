// Copyright 2026 The cuhal Authors.
// libFuzzer target: FAKECUDA_FAULTS (fakecuda/fault_injector.h, FaultInjector::AddRulesFromSpec).
// An accepted spec's numbers must be strict (fault_spec_check.h); its rules are then consulted for
// a few entry points, as the drop-in does on each call.
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fakecuda/fault_injector.h"
#include "fuzz/libfuzzer/fault_spec_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view spec(reinterpret_cast<const char*>(data), size);
  fakecuda::FaultInjector faults;
  std::string error;
  if (!faults.AddRulesFromSpec(spec, &error)) {
    if (error.empty()) std::abort();  // a failure always says why
    // "adding none": a rejected spec leaves no rule behind.
    for (int i = 0; i < 4; ++i) {
      if (faults.OnCall("cuMemAlloc") != CUDA_SUCCESS) std::abort();
    }
    return 0;
  }
  for (std::string_view item : cuhal::libfuzzer::SplitOn(spec, ';')) {
    if (!item.empty() && !cuhal::libfuzzer::RuleNumbersAreStrict(item)) std::abort();
  }
  for (int i = 0; i < 8; ++i) {
    (void)faults.OnCall("cuMemAlloc");
    (void)faults.OnCall("cuStreamCreate");
    (void)faults.OnCall("cuInit");
  }
  if (faults.calls() != 24 || faults.injected() > 24) std::abort();
  return 0;
}
