// Copyright 2026 The cuhal Authors.
// libFuzzer target: FAKENCCL_FAULTS (fakenccl/nccl_fault_injector.h,
// NcclFaultInjector::AddRulesFromSpec): fault rules and rank deaths. What parses is then
// consulted as a communicator does on each call.
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fakenccl/nccl_fault_injector.h"

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
