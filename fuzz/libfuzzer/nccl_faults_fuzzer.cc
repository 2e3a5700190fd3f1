// Copyright 2026 The cuhal Authors.
// libFuzzer target: FAKENCCL_FAULTS (fakenccl/nccl_fault_injector.h,
// NcclFaultInjector::AddRulesFromSpec): fault rules and rank deaths. An accepted spec's numbers
// must be strict (fault_spec_check.h); what parses is then consulted as a communicator does on
// each call.
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fakenccl/nccl_fault_injector.h"
#include "fuzz/libfuzzer/fault_spec_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view spec(reinterpret_cast<const char*>(data), size);
  fakenccl::NcclFaultInjector faults;
  std::string error;
  if (!faults.AddRulesFromSpec(spec, &error)) {
    if (error.empty()) std::abort();  // a failure always says why
    // "adding nothing": no fault and no death after a rejected spec.
    if (faults.OnCall("ncclAllReduce") != ncclSuccess) std::abort();
    for (int rank = 0; rank < 4; ++rank) {
      if (faults.ShouldDie(rank, 4, 1)) std::abort();
    }
    return 0;
  }
  constexpr std::uint64_t kIntMax = std::numeric_limits<int>::max();
  for (std::string_view item : cuhal::libfuzzer::SplitOn(spec, ';')) {
    if (item.empty()) continue;
    std::vector<std::string_view> parts = cuhal::libfuzzer::SplitOn(item, ':');
    bool strict = parts[0] == "die"
                      ? cuhal::libfuzzer::IsStrictUnsigned(parts[1], kIntMax) &&
                            cuhal::libfuzzer::IsStrictUnsigned(parts[2]) &&
                            (parts.size() == 3 || cuhal::libfuzzer::IsStrictUnsigned(parts[3], kIntMax))
                      : cuhal::libfuzzer::RuleNumbersAreStrict(item);
    if (!strict) std::abort();
  }
  for (int i = 0; i < 8; ++i) {
    ncclResult_t result = faults.OnCall("ncclAllReduce");
    (void)fakenccl::NcclResultName(result);
    (void)faults.OnCall("ncclSend");
  }
  for (int rank = -1; rank < 4; ++rank) {
    for (std::uint64_t call = 0; call < 4; ++call) (void)faults.ShouldDie(rank, 4, call);
  }
  faults.ClearRules();
  if (faults.OnCall("ncclAllReduce") != ncclSuccess) std::abort();
  return 0;
}
