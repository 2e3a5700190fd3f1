// Copyright 2026 The cuhal Authors.
// `cuhal demo`: a guided tour of the device core, on the fake CUDA driver and fake NCCL by
// default (no GPU needed): driver and devices, a device with its queue and memory pools, buffers
// from both pools, copies, a kernel launch, pool statistics, queue operations on two queues
// ordered only by timeline semaphores (queue-ordered Alloca/Dealloca, Execute), and an all-reduce
// across four ranks through core channels (Device::CreateChannel, one thread per rank).
#ifndef CUHAL_CLI_DEMO_COMMAND_H_
#define CUHAL_CLI_DEMO_COMMAND_H_

#include <ostream>

#include "cli/bindings.h"
#include "core/base/status.h"

namespace cuhal::cli {

struct DemoOptions {
  // kFake: four fake H200s (fakecuda) and fakenccl. kReal: libcuda.so.1 and libnccl.so.2; the
  // all-reduce then spans min(4, device count) ranks, and is skipped, saying why, when NCCL
  // cannot be loaded.
  BackendKind backend = BackendKind::kFake;
};

// Runs the tour, writing what each step did as it completes (numbered steps, readable by someone
// new to cuhal). Every result is checked (data read back, the kernel's output, the all-reduce's
// sums, the pipeline's read-back); a mismatch is INTERNAL naming the first bad element. On the fake the output is
// deterministic (no addresses, no timings) and the last step confirms that the fake driver and
// fake NCCL hold no live object. Errors name the step and the failing call.
[[nodiscard]] Status RunDemo(const DemoOptions& options, std::ostream& out);

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_DEMO_COMMAND_H_
