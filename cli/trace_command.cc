// Copyright 2026 The cuhal Authors.
#include "cli/trace_command.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <utility>

#include "cli/text_table.h"
#include "core/base/status_or.h"
#include "core/symbols/api_status.h"
#include "trace/alloc_trace.h"
#include "trace/replay.h"

extern char** environ;

namespace cuhal::cli {
namespace {

using trace::ReplayAllocatorKind;
using trace::ReplayResult;

struct Skipped {
  std::string allocator;
  std::string reason;
};

// The allocators to run, in the order named (duplicates once), or every kind for "all".
// `all` is set when the set came from "all" (or nothing): then unavailable ones are skipped.
StatusOr<std::vector<ReplayAllocatorKind>> ResolveAllocators(
    const std::vector<std::string>& names, bool* all) {
  std::vector<std::string> split;
  for (const std::string& name : names) {
    std::stringstream list(name);
    std::string item;
    while (std::getline(list, item, ',')) {
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      if (!item.empty()) split.push_back(item);
    }
  }
  *all = split.empty() || std::find(split.begin(), split.end(), "all") != split.end();
  std::vector<ReplayAllocatorKind> kinds;
  for (const std::string& name : split) {
    if (name == "all") continue;
    CUHAL_ASSIGN_OR_RETURN(ReplayAllocatorKind kind, trace::ParseReplayAllocator(name),
                           "--allocator");
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  }
  if (*all) {
    const auto every = trace::ReplayAllocatorKinds();
    kinds.assign(every.begin(), every.end());
  }
  return kinds;
}

// Draws "[#####.....] core: timing 1/2 4000/8007" over the current terminal line, redrawing
// only when the bar's position changes.
class ProgressBar {
 public:
  explicit ProgressBar(std::ostream* out) : out_(out) {}

  void Draw(std::string_view allocator, std::string_view pass, std::uint64_t done,
            std::uint64_t total) {
    constexpr std::uint64_t kWidth = 30;
    const std::uint64_t filled = total == 0 ? kWidth : std::min(kWidth, kWidth * done / total);
    const std::string key = StrCat(allocator, "/", pass, "/", filled);
    if (key == last_) return;
    last_ = key;
    std::string bar(filled, '#');
    bar.append(kWidth - filled, '.');
    *out_ << "\r\033[K[" << bar << "] " << allocator << ": " << pass << " " << done << "/"
          << total << std::flush;
    drawn_ = true;
  }

  void Clear() {
    if (drawn_) *out_ << "\r\033[K" << std::flush;
    drawn_ = false;
  }

 private:
  std::ostream* out_;
  std::string last_;
  bool drawn_ = false;
};

// Device 0's primary context, retained for the replay and released when destroyed.
class PrimaryContext {
 public:
  static StatusOr<std::unique_ptr<PrimaryContext>> Retain(const CudaApi* api) {
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuInit, 0));
    CUdevice device = 0;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDeviceGet, &device, 0));
    CUcontext context = nullptr;
    CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuDevicePrimaryCtxRetain, &context, device));
    return std::unique_ptr<PrimaryContext>(new PrimaryContext(api, device, context));
  }
  ~PrimaryContext() { ReportDroppedStatus(CUHAL_CU(api_, cuDevicePrimaryCtxRelease, device_)); }
  PrimaryContext(const PrimaryContext&) = delete;             // releases the context once
  PrimaryContext& operator=(const PrimaryContext&) = delete;  // ditto

  [[nodiscard]] CUcontext context() const { return context_; }

 private:
  PrimaryContext(const CudaApi* api, CUdevice device, CUcontext context)
      : api_(api), device_(device), context_(context) {}

  const CudaApi* api_;
  CUdevice device_;
  CUcontext context_;
};

nlohmann::ordered_json ResultJson(const ReplayResult& r) {
  nlohmann::ordered_json j;
  j["allocator"] = r.allocator;
  j["operations"] = r.operations;
  j["repeat"] = r.repeat;
  j["ns_per_op_mean"] = r.ns_per_op_mean;
  j["ns_per_op_p50"] = r.ns_per_op_p50;
  j["ns_per_op_p99"] = r.ns_per_op_p99;
  j["ns_per_op_timed_mean"] = r.ns_per_op_timed_mean;
  j["alloc_ns_mean"] = r.alloc_ns_mean;
  j["free_ns_mean"] = r.free_ns_mean;
  j["reserved_high"] = r.reserved_high;
  j["used_high"] = r.used_high;
  j["reserved_per_used"] = r.reserved_per_used;
  j["driver_calls"] = r.driver_calls;
  nlohmann::ordered_json by_entry = nlohmann::ordered_json::object();
  for (const auto& [entry, calls] : r.driver_calls_by_entry) by_entry[entry] = calls;
  j["driver_calls_by_entry"] = std::move(by_entry);
  j["freed_at_end"] = r.freed_at_end;
  j["series_stride"] = r.series_stride;
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  nlohmann::ordered_json reserved = nlohmann::ordered_json::array();
  nlohmann::ordered_json used = nlohmann::ordered_json::array();
  for (const trace::ReplaySeriesPoint& p : r.series) {
    ops.push_back(p.op);
    reserved.push_back(p.reserved);
    used.push_back(p.used);
  }
  j["series"] = {{"op", std::move(ops)}, {"reserved", std::move(reserved)},
                 {"used", std::move(used)}};
  return j;
}

nlohmann::ordered_json ReportJson(const TraceReplayOptions& options,
                                  const trace::AllocTrace& t,
                                  const std::vector<ReplayResult>& results,
                                  const std::vector<Skipped>& skipped) {
  nlohmann::ordered_json doc;
  doc["trace"] = t.name;
  doc["source"] = options.trace_path;
  doc["backend"] = std::string(BackendName(options.backend));
  doc["streams"] = t.streams;
  doc["operations"] = t.ops.size();
  doc["trace_used_high"] = t.used_high;
  doc["repeat"] = options.repeat;
  doc["allocators"] = nlohmann::ordered_json::array();
  for (const ReplayResult& r : results) doc["allocators"].push_back(ResultJson(r));
  doc["skipped"] = nlohmann::ordered_json::array();
  for (const Skipped& s : skipped) {
    doc["skipped"].push_back({{"allocator", s.allocator}, {"reason", s.reason}});
  }
  return doc;
}

std::string Fixed(double value, int decimals) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << value;
  return s.str();
}

std::string MiB(std::uint64_t bytes) {
  return Fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1);
}

void WriteTable(const TraceReplayOptions& options, const trace::AllocTrace& t,
                const std::vector<ReplayResult>& results, const std::vector<Skipped>& skipped,
                std::ostream& out) {
  out << "Trace " << t.name << " (" << options.trace_path << "): " << t.ops.size()
      << " operations on " << t.streams << (t.streams == 1 ? " stream" : " streams")
      << ", used high " << MiB(t.used_high) << " MiB; backend " << BackendName(options.backend)
      << ", " << options.repeat << (options.repeat == 1 ? " timing pass" : " timing passes")
      << "\n\n";
  TextTable table({"ALLOCATOR", "NS/OP MEAN", "NS/OP P99", "RESERVED HIGH (MiB)",
                   "USED HIGH (MiB)", "RESERVED/USED", "DRIVER CALLS"});
  for (std::size_t c = 1; c <= 6; ++c) table.AlignRight(c);
  for (const ReplayResult& r : results) {
    table.AddRow({r.allocator, Fixed(r.ns_per_op_mean, 1), Fixed(r.ns_per_op_p99, 1),
                  MiB(r.reserved_high), MiB(r.used_high), Fixed(r.reserved_per_used, 3),
                  std::to_string(r.driver_calls)});
  }
  table.Render(out);
  for (const Skipped& s : skipped) out << "\nskipped " << s.allocator << ": " << s.reason;
  if (!skipped.empty()) out << "\n";
}

// Runs `python3 script json_path plot_path`, the script's output going to this process's.
Status RunPlotScript(const std::string& json_path, const std::string& plot_path) {
  const std::string script = PlotScriptPath();
  if (::access(script.c_str(), R_OK) != 0) {
    return NotFoundError(StrCat("--plot: the plot script ", script, " cannot be read (",
                                std::strerror(errno), "; set CUHAL_PLOT_SCRIPT to its path)"));
  }
  std::string python = "python3";
  std::vector<char*> argv = {python.data(), const_cast<char*>(script.c_str()),
                             const_cast<char*>(json_path.c_str()),
                             const_cast<char*>(plot_path.c_str()), nullptr};
  std::fflush(nullptr);
  pid_t pid = 0;
  const int spawn_error = ::posix_spawnp(&pid, "python3", nullptr, nullptr, argv.data(), environ);
  if (spawn_error != 0) {
    return UnavailableError(StrCat("--plot needs python3 (with matplotlib): python3 could not be "
                                   "run: ",
                                   std::strerror(spawn_error)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return InternalError(StrCat("--plot: waiting for python3: ", std::strerror(errno)));
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return OkStatus();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    return UnavailableError(
        "--plot needs matplotlib for python3 (pip install matplotlib): " + script +
        " could not import it");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return UnavailableError("--plot needs python3 (with matplotlib): python3 was not found");
  }
  return UnknownError(StrCat("--plot: ", script, " failed (",
                             WIFEXITED(status) ? StrCat("exit status ", WEXITSTATUS(status))
                                               : StrCat("signal ", WTERMSIG(status)),
                             ")"));
}

// Writes `doc` to a temporary file, plots it into options.plot_path and removes the file.
Status WritePlot(const nlohmann::ordered_json& doc, const std::string& plot_path) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string json_path =
      StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp", "/cuhal_replay_XXXXXX");
  const int fd = ::mkstemp(json_path.data());
  if (fd < 0) {
    return InternalError(
        StrCat("--plot: cannot create a temporary file ", json_path, ": ", std::strerror(errno)));
  }
  ::close(fd);
  {
    std::ofstream file(json_path);
    file << doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    if (!file) {
      std::remove(json_path.c_str());
      return InternalError(StrCat("--plot: cannot write the temporary file ", json_path));
    }
  }
  Status status = RunPlotScript(json_path, plot_path);
  std::remove(json_path.c_str());
  return status;
}

}  // namespace

std::string PlotScriptPath() {
  const char* env = std::getenv("CUHAL_PLOT_SCRIPT");
  if (env != nullptr && *env != '\0') return env;
  return CUHAL_SOURCE_DIR "/bench/traces/plot_replay.py";
}

Status RunTraceReplay(const TraceReplayOptions& options, std::ostream& out,
                      std::ostream& progress) {
  if (options.repeat < 1) {
    return InvalidArgumentError(StrCat("--repeat must be >= 1, got ", options.repeat));
  }
  bool all = false;
  CUHAL_ASSIGN_OR_RETURN(std::vector<ReplayAllocatorKind> kinds,
                         ResolveAllocators(options.allocators, &all));
  CUHAL_ASSIGN_OR_RETURN(trace::AllocTrace t, trace::ReadAllocTrace(options.trace_path));

  CUHAL_ASSIGN_OR_RETURN(CudaBinding binding, BindCuda(options.backend), "--backend ",
                         BackendName(options.backend));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<PrimaryContext> context,
                         PrimaryContext::Retain(binding.api), "--backend ",
                         BackendName(options.backend));
  CUHAL_ASSIGN_OR_RETURN(
      trace::ReplayTarget target,
      trace::MakeReplayTarget(binding.api, context->context(), 0,
                              std::string(BackendName(options.backend))),
      "--backend ", BackendName(options.backend));

  // Which allocators run: all available ones (the others skipped, with the reason), or every
  // one named, each of which must be available.
  std::vector<ReplayAllocatorKind> run;
  std::vector<Skipped> skipped;
  for (ReplayAllocatorKind kind : kinds) {
    Status available = trace::ReplayAllocatorAvailable(kind, target);
    if (available.ok()) {
      run.push_back(kind);
    } else if (all) {
      // "allocator pytorch: built without torch (...)": the name is in the report already.
      const std::string name(trace::ReplayAllocatorName(kind));
      std::string reason(available.message());
      const std::string prefix = StrCat("allocator ", name, ": ");
      if (reason.starts_with(prefix)) reason.erase(0, prefix.size());
      skipped.push_back({name, std::move(reason)});
    } else {
      return available;
    }
  }

  ProgressBar bar(&progress);
  trace::ReplayOptions replay_options;
  replay_options.repeat = options.repeat;
  if (options.progress_bar) {
    replay_options.progress = [&bar](std::string_view allocator, std::string_view pass,
                                     std::uint64_t done, std::uint64_t total) {
      bar.Draw(allocator, pass, done, total);
    };
  }
  std::vector<ReplayResult> results;
  for (ReplayAllocatorKind kind : run) {
    StatusOr<ReplayResult> result = trace::ReplayTrace(t, kind, target, replay_options);
    if (!result.ok()) {
      bar.Clear();
      return std::move(result).status();
    }
    results.push_back(*std::move(result));
  }
  bar.Clear();

  const nlohmann::ordered_json doc = ReportJson(options, t, results, skipped);
  if (!options.plot_path.empty()) CUHAL_RETURN_IF_ERROR(WritePlot(doc, options.plot_path));
  if (options.json) {
    out << doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  } else {
    WriteTable(options, t, results, skipped, out);
  }
  return OkStatus();
}

}  // namespace cuhal::cli
