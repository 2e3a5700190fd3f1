// Copyright 2026 The cuhal Authors.
// DeviceParams: how a Device is configured, with defaults and validation.
#ifndef CUHAL_CORE_DEVICE_DEVICE_PARAMS_H_
#define CUHAL_CORE_DEVICE_DEVICE_PARAMS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/base/status.h"
#include "core/command/command_target_kind.h"
#include "core/memory/memory_pool.h"

namespace cuhal {

// Everything a Device is configured with. A plain value (copy it freely; like any value, safe to
// read from several threads); Validate() before use (Device::Create does). Nothing here touches a
// stream. Defaults follow IREE's CUDA device where it has one.
struct DeviceParams {
  // Queue affinities are 64-bit masks (one bit per queue).
  static constexpr int kMaxQueueCount = 64;
  static constexpr std::size_t kMaxEventPoolCapacity = std::size_t{1} << 20;

  // Number of queues, each with its own non-blocking stream. In [1, 64].
  int queue_count = 1;
  // Use the stream-ordered allocator: create the device's two memory pools (when the device
  // supports them) so buffers may come from pools, and, later, queue-ordered allocation.
  bool async_allocations = true;
  // The device-local pool keeps what it reserved (threshold: no limit) until Trim gives it back
  // down to its minimum capacity: the steady state of a workload reuses it without driver work.
  MemoryPoolParams device_local_pool{.minimum_capacity = 0,
                                     .release_threshold =
                                         std::numeric_limits<std::uint64_t>::max()};
  // The other pool (staging, external) gives memory back at each synchronization (the driver's
  // default threshold, 0).
  MemoryPoolParams other_pool{.minimum_capacity = 0, .release_threshold = 0};
  // How many CUevents the device's event pool keeps ready for ordering queue operations
  // device-side (timepoints). Events are created on first use; one given back while the pool
  // holds this many is destroyed. 0 keeps none (every timepoint creates and destroys its event).
  // In [0, 2^20].
  std::size_t event_pool_capacity = 32;
  // How the device learns that queue operations completed (core/device/queue_scheduler.h,
  // COMPLETION). true: a queue has at most one completion host function (cuLaunchHostFunc)
  // pending, shared by every operation issued while it is, so ready submissions cost one
  // cuEventRecord each. false: one host function per operation (~5 us of host time each on an
  // H200), so that which driver calls are made, in which order, never depends on timing: the
  // fault sweeps (sweep/) use it, since they inject a failure by call index.
  bool batch_completions = true;
  // With batch_completions: which thread enqueues a queue's shared host function. true: the
  // device's worker (the submitting thread records the operation's event and, when the queue has
  // no host function pending, wakes the worker, which enqueues one covering every operation
  // numbered by then), so a ready submission makes one driver call (cuEventRecord) on the
  // submitting thread. false: the submitting thread enqueues it itself when the queue has none
  // pending (which call each thread makes then depends only on the device's progress; the mock
  // tests pin that order). Ignored when batch_completions is false.
  bool worker_enqueues_host_functions = true;
  // With batch_completions and worker_enqueues_host_functions: 0 (the default) has the worker
  // learn of completions from the host functions above. Above 0, the worker enqueues no host
  // function at all: while a queue has operations in flight it queries their events
  // (cuEventQuery) every `completion_poll_interval`, so no driver call of the worker's lands on
  // the streams the submitting threads record on (a cuLaunchHostFunc beside a submitting thread's
  // cuEventRecord on the same stream made it sleep in the driver: docs/driver_facts.md, "Queue
  // submission after recycling"). Costs: the worker wakes every interval while work is in
  // flight, and a signal reaches the host up to one interval late. In [0, 1 s].
  std::chrono::microseconds completion_poll_interval{0};
  // Which thread issues queue operations (Queue::Alloca, Dealloca, Execute, Barrier). false (the
  // default): the submitting thread issues a ready operation itself (its driver calls, from the
  // device-side waits to the completion event's record), so a failed driver call is returned by
  // the submission; only deferred operations reach the worker. true: the submitting thread
  // checks the operation, retains its semaphores and hands it to the device's worker, which
  // issues it (IREE HIP's dispatch thread): a submission makes no driver call, and its host cost
  // is the hand-over (docs/driver_facts.md, "Queue submission on the worker"). The driver calls'
  // own cost moves to the worker, which, after issuing, spins up to 50 us for more before it
  // sleeps, so that a steady stream of submissions pays no wake-up each. Then a failed driver
  // call reaches the signal semaphores only (and an Alloca's buffer:
  // Buffer::allocation_status()), and an Alloca's buffer gets its address when the worker makes
  // it (Buffer::device_ptr() waits for the worker, never for the device).
  bool issue_on_worker = false;
  // The target of command buffers made by Device::CreateCommandBuffer without one: kStream
  // (direct submission) or kGraph (CUDA graphs, instantiated once and re-launched).
  CommandTargetKind command_target = CommandTargetKind::kStream;

  // OK, or INVALID_ARGUMENT naming the first bad field and its value, e.g.
  // "DeviceParams.queue_count must be in [1, 64], got 0". A pool's minimum capacity above its
  // release threshold is refused: synchronizations would release what trims are told to keep.
  [[nodiscard]] Status Validate() const;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DEVICE_DEVICE_PARAMS_H_
