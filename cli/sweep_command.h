// Copyright 2026 The cuhal Authors.
// `cuhal sweep`: runs the device core's and the channels' fault sweeps (sweep/core_scenarios.h,
// sweep/channel_scenarios.h), each in a forked child process, with progress on stderr and a
// summary table on stdout.
#ifndef CUHAL_CLI_SWEEP_COMMAND_H_
#define CUHAL_CLI_SWEEP_COMMAND_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace cuhal::cli {

struct SweepOptions {
  // Scenario names (exact, as --list prints them); empty: every scenario.
  std::vector<std::string> scenarios;
  // Replaces each scenario's fake driver seed (the adversarial schedule's order).
  std::optional<std::uint64_t> seed;
  // Only list the scenarios.
  bool list = false;
  // Draw a progress bar on `progress` (when it is a terminal); otherwise one line per scenario.
  bool progress_bar = false;
};

// What became of a function run in a child process (see RunInChild).
struct ChildOutcome {
  bool completed = false;  // the child sent its whole result and exited with status 0
  std::string result;      // what it sent (possibly partial when it crashed)
  // When not completed: "SIGSEGV", "SIGABRT", ..., "exit status 1" (a sanitizer report), or why
  // the child could not be started.
  std::string crash;
};

// Forks; the child runs `body`, sends the string it returns to the parent through a pipe and
// exits at once (_exit: no exit handlers of the parent's state run in the child). The parent
// waits for it. A child that dies of a signal, exits non-zero, or exits without sending its
// result counts as crashed. Call from a single-threaded process (fork copies only the calling
// thread). Not for concurrent use.
[[nodiscard]] ChildOutcome RunInChild(const std::function<std::string()>& body);

// Lists the scenarios (options.list), or runs the chosen ones, one forked child each, and
// writes a summary table to `out`:
//   SCENARIO  CALLS SWEPT  FAILURES INJECTED  LEAKS  CRASHES  RESULT
// followed by the problems of any scenario that had some. Progress goes to `progress`.
// Errors: NOT_FOUND for an unknown scenario name (before anything runs); ABORTED when a
// scenario leaked, crashed or had an unexpected result (report.ok() false), naming them.
[[nodiscard]] Status RunSweep(const SweepOptions& options, std::ostream& out,
                              std::ostream& progress);

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_SWEEP_COMMAND_H_
