// Copyright 2026 The cuhal Authors.
// The `cuhal` command line. Subcommands:
//   cuhal version [--backend fake|real]        the CUDA driver and NCCL versions (via the tables)
//   cuhal devices [--backend fake|real] [--profile FILE] [--count N] [--json]
//                                              the devices and their key attributes
//   cuhal demo [--backend fake|real]           a tour of the device core (fake: no GPU needed)
//   cuhal sweep [SCENARIO...] [--seed N] [--list]
//                                              the device core's fault sweeps
//   cuhal profile capture OUT.json [--device N] [--backend real|fake]
//                                              record a device profile for the fake
//   cuhal profile show FILE [--all]            describe a device profile file
//   cuhal trace replay TRACE [--backend fake|real] [--allocator NAME|all]... [--repeat N]
//                      [--json] [--plot FILE]
//                                              replay an allocation trace on each allocator
// Every level takes --help; the program takes --version.
// Exit status: 0 on success; 1 when a command fails (the error is printed to stderr, naming the
// command); CLI11's non-zero codes for bad flags, arguments or subcommands.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/bindings.h"
#include "cli/demo_command.h"
#include "cli/devices_command.h"
#include "cli/profile_command.h"
#include "cli/sweep_command.h"
#include "cli/trace_command.h"
#include "cli/version_command.h"

namespace {

using cuhal::cli::BackendKind;

int Fail(const char* command, const cuhal::Status& status) {
  std::fprintf(stderr, "cuhal %s: %s\n", command, status.ToString().c_str());
  return 1;
}

BackendKind ToBackend(const std::string& name) {
  return name == "real" ? BackendKind::kReal : BackendKind::kFake;
}

// Adds --backend to `command`, defaulting to `*backend`.
void AddBackendOption(CLI::App* command, std::string* backend) {
  command
      ->add_option("--backend", *backend,
                   "fake: the in-process fake driver and NCCL; real: libcuda.so.1 and "
                   "libnccl.so.2 (paths from CUHAL_LIBCUDA_PATH / CUHAL_LIBNCCL_PATH)")
      ->check(CLI::IsMember({"fake", "real"}))
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuhal: a simulation-first CUDA device core, with fake CUDA and NCCL drivers",
               "cuhal"};
  app.set_version_flag("--version", std::string("cuhal ") + CUHAL_VERSION_STRING);
  // At most one subcommand; none is reported below (CLI11's own "required" check would also
  // swallow the name of an unknown subcommand).
  app.require_subcommand(0, 1);
  app.footer(
      "Start with `cuhal demo` (no GPU needed). `cuhal <command> --help` describes each "
      "command.");

  // version
  std::string version_backend = "fake";
  CLI::App* version = app.add_subcommand(
      "version", "Print the CUDA driver and NCCL versions, as reported through the driver tables");
  AddBackendOption(version, &version_backend);

  // devices
  std::string devices_backend = "fake";
  cuhal::cli::DevicesOptions devices_options;
  int device_count = 1;
  CLI::App* devices = app.add_subcommand(
      "devices", "List the devices with their key attributes (a table, or JSON with --json)");
  AddBackendOption(devices, &devices_backend);
  devices->add_option(
      "--profile", devices_options.profile_path,
      "Fake backend: make the devices from this device profile JSON file (default: the built-in "
      "H200, fakecuda/profiles/h200.json)");
  CLI::Option* count_flag = devices->add_option(
      "--count", device_count, "Fake backend: how many devices (1 to 64; default 1)");
  devices->add_flag("--json", devices_options.json, "Print JSON instead of a table");

  // demo
  std::string demo_backend = "fake";
  CLI::App* demo = app.add_subcommand(
      "demo",
      "A tour of the device core: driver, device, buffers from the memory pools, copies, a "
      "kernel, pool statistics and an all-reduce across 4 ranks (fake by default: no GPU needed)");
  AddBackendOption(demo, &demo_backend);

  // sweep
  cuhal::cli::SweepOptions sweep_options;
  std::uint64_t seed = 0;
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "Run the device core's fault sweeps: every driver call of a scenario fails once, in turn; "
      "fails on any leak, crash or unexpected result");
  sweep->add_option("scenario", sweep_options.scenarios,
                    "Scenarios to run, by name (quote names with spaces); default: all");
  CLI::Option* seed_flag =
      sweep->add_option("--seed", seed, "The fake driver's seed for every scenario");
  sweep->add_flag("--list", sweep_options.list, "List the scenarios and exit");

  // profile
  CLI::App* profile = app.add_subcommand("profile", "Capture or show device profiles");
  profile->require_subcommand(0, 1);  // as for the program: unknown names are reported by name
  cuhal::cli::ProfileCaptureOptions capture_options;
  std::string capture_backend = "real";
  CLI::App* capture = profile->add_subcommand(
      "capture", "Record a device profile (JSON, for the fake) from the real driver");
  capture->add_option("out", capture_options.out_path, "The JSON file to write")->required();
  capture->add_option("--device", capture_options.device, "The device ordinal to record")
      ->capture_default_str();
  AddBackendOption(capture, &capture_backend);
  cuhal::cli::ProfileShowOptions show_options;
  CLI::App* show = profile->add_subcommand(
      "show", "Describe a device profile file: name, UUID, bus id, memory, key attributes");
  show->add_option("file", show_options.path, "The device profile JSON file")->required();
  show->add_flag("--all", show_options.all_attributes, "Also list every attribute");

  // trace
  CLI::App* trace = app.add_subcommand("trace", "Work with allocation traces");
  trace->require_subcommand(0, 1);  // as for the program: unknown names are reported by name
  cuhal::cli::TraceReplayOptions replay_options;
  std::string replay_backend = "fake";
  CLI::App* replay = trace->add_subcommand(
      "replay",
      "Replay an allocation trace (docs/alloc_trace_format.md) on each allocator: ns/op, "
      "reserved and used highs, driver calls (a table, or JSON with --json)");
  replay->add_option("trace", replay_options.trace_path, "The trace file (.jsonl)")->required();
  AddBackendOption(replay, &replay_backend);
  replay
      ->add_option("--allocator", replay_options.allocators,
                   "Allocators to replay on (repeatable, or a comma list): driver-pool, core, "
                   "core-expandable, core-pool, pytorch, or all (default: every one available "
                   "here; the others are reported as skipped)")
      ->delimiter(',');
  replay->add_option("--repeat", replay_options.repeat, "Timing passes per allocator")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  replay->add_flag("--json", replay_options.json,
                   "Print JSON (every result and the series) instead of a table");
  replay->add_option("--plot", replay_options.plot_path,
                     "Also plot reserved and used over the operations into this image file "
                     "(python3 with matplotlib; the script: $CUHAL_PLOT_SCRIPT or "
                     "bench/traces/plot_replay.py)");

  CLI11_PARSE(app, argc, argv);

  if (app.get_subcommands().empty()) {
    std::fprintf(stderr, "cuhal: a subcommand is required\n%s", app.help().c_str());
    return 2;
  }
  if (profile->parsed() && profile->get_subcommands().empty()) {
    std::fprintf(stderr,
                 "cuhal profile: a subcommand is required: capture or show (see cuhal profile "
                 "--help)\n");
    return 2;
  }
  if (trace->parsed() && trace->get_subcommands().empty()) {
    std::fprintf(stderr,
                 "cuhal trace: a subcommand is required: replay (see cuhal trace --help)\n");
    return 2;
  }
  if (version->parsed()) {
    cuhal::Status status = cuhal::cli::RunVersion(ToBackend(version_backend), std::cout);
    if (!status.ok()) return Fail("version", status);
  }
  if (devices->parsed()) {
    devices_options.backend = ToBackend(devices_backend);
    if (count_flag->count() > 0) devices_options.count = device_count;
    cuhal::Status status = cuhal::cli::RunDevices(devices_options, std::cout);
    if (!status.ok()) return Fail("devices", status);
  }
  if (demo->parsed()) {
    cuhal::Status status = cuhal::cli::RunDemo({.backend = ToBackend(demo_backend)}, std::cout);
    if (!status.ok()) return Fail("demo", status);
  }
  if (sweep->parsed()) {
    if (seed_flag->count() > 0) sweep_options.seed = seed;
    sweep_options.progress_bar = ::isatty(STDERR_FILENO) == 1;
    cuhal::Status status = cuhal::cli::RunSweep(sweep_options, std::cout, std::cerr);
    if (!status.ok()) return Fail("sweep", status);
  }
  if (capture->parsed()) {
    capture_options.backend = ToBackend(capture_backend);
    cuhal::Status status = cuhal::cli::RunProfileCapture(capture_options, std::cout);
    if (!status.ok()) return Fail("profile capture", status);
  }
  if (show->parsed()) {
    cuhal::Status status = cuhal::cli::RunProfileShow(show_options, std::cout);
    if (!status.ok()) return Fail("profile show", status);
  }
  if (replay->parsed()) {
    replay_options.backend = ToBackend(replay_backend);
    replay_options.progress_bar = ::isatty(STDERR_FILENO) == 1;
    cuhal::Status status = cuhal::cli::RunTraceReplay(replay_options, std::cout, std::cerr);
    if (!status.ok()) return Fail("trace replay", status);
  }
  return 0;
}
