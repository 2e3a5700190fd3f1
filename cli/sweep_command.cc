// Copyright 2026 The cuhal Authors.
#include "cli/sweep_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "cli/text_table.h"
#include "sweep/channel_scenarios.h"
#include "sweep/core_scenarios.h"
#include "sweep/fault_sweep.h"

namespace cuhal::cli {
namespace {

// "SIGSEGV" for the usual signals, else "signal <n>".
std::string SignalName(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGTRAP: return "SIGTRAP";
    case SIGPIPE: return "SIGPIPE";
    default: return StrCat("signal ", signal);
  }
}

void WriteAll(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The child's message: the result, then this marker, so that a partial write reads as a crash.
constexpr char kEndMarker[] = "\n--cuhal-child-done--\n";

// What one scenario's sweep reports to the parent (one "key value" per line, problems last).
struct ScenarioResult {
  std::uint64_t calls = 0;
  std::uint64_t injected = 0;
  std::uint64_t leaks = 0;
  std::uint64_t problem_count = 0;
  std::string problems;
  std::string crash;  // set when the child crashed
};

std::string Serialize(const sweep::SweepReport& report) {
  return StrCat("calls ", report.calls, "\ninjected ", report.injected, "\nleaks ", report.leaks,
                "\nproblems ", report.problems.size(), "\n", report.Problems(5));
}

ScenarioResult Deserialize(const std::string& text) {
  ScenarioResult result;
  std::istringstream in(text);
  std::string key;
  in >> key >> result.calls >> key >> result.injected >> key >> result.leaks >> key >>
      result.problem_count;
  std::getline(in, key);  // the end of the "problems" line
  std::ostringstream rest;
  rest << in.rdbuf();
  result.problems = rest.str();
  return result;
}

// Draws "[#####.....] name 12/40" over the current terminal line.
void DrawBar(std::FILE* tty, std::size_t index, std::size_t total, const std::string& name,
             std::uint64_t done, std::uint64_t calls) {
  constexpr int kWidth = 30;
  const int filled = calls == 0 ? 0 : static_cast<int>(kWidth * done / calls);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  std::fprintf(tty, "\r\033[K[%zu/%zu] [%s] %s: call %llu of %llu", index, total, bar.c_str(),
               name.c_str(), static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(calls));
  std::fflush(tty);
}

}  // namespace

ChildOutcome RunInChild(const std::function<std::string()>& body) {
  ChildOutcome outcome;
  int fds[2];
  if (::pipe(fds) != 0) {
    outcome.crash = StrCat("could not create a pipe: ", std::strerror(errno));
    return outcome;
  }
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) {
    outcome.crash = StrCat("could not fork: ", std::strerror(errno));
    ::close(fds[0]);
    ::close(fds[1]);
    return outcome;
  }
  if (pid == 0) {
    ::close(fds[0]);
    WriteAll(fds[1], body() + kEndMarker);
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string received;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    received.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::size_t marker = received.rfind(kEndMarker);
  const bool complete = marker != std::string::npos &&
                        marker + std::strlen(kEndMarker) == received.size();
  if (complete) received.resize(marker);
  outcome.result = std::move(received);
  if (WIFSIGNALED(status)) {
    outcome.crash = SignalName(WTERMSIG(status));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    outcome.crash = StrCat("exit status ", WEXITSTATUS(status));
  } else if (!complete) {
    outcome.crash = "exited without reporting a result";
  } else {
    outcome.completed = true;
  }
  return outcome;
}

Status RunSweep(const SweepOptions& options, std::ostream& out, std::ostream& progress) {
  std::vector<sweep::SweepScenario> all = sweep::CoreScenarios();
  for (sweep::SweepScenario& s : sweep::ChannelScenarios()) all.push_back(std::move(s));
  if (options.list) {
    for (const sweep::SweepScenario& s : all) out << s.name << "\n";
    return OkStatus();
  }
  std::vector<sweep::SweepScenario> chosen;
  if (options.scenarios.empty()) {
    chosen = all;
  } else {
    for (const std::string& name : options.scenarios) {
      auto it = std::find_if(all.begin(), all.end(),
                             [&name](const sweep::SweepScenario& s) { return s.name == name; });
      if (it == all.end()) {
        return NotFoundError(StrCat("no scenario named '", name,
                                    "' (`cuhal sweep --list` shows the scenarios)"));
      }
      chosen.push_back(*it);
    }
  }
  if (options.seed.has_value()) {
    for (sweep::SweepScenario& s : chosen) s.driver_options.seed = *options.seed;
  }

  TextTable table({"SCENARIO", "CALLS SWEPT", "FAILURES INJECTED", "LEAKS", "CRASHES", "RESULT"});
  for (std::size_t c = 1; c <= 4; ++c) table.AlignRight(c);
  std::vector<std::string> failed;
  std::string problems;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const sweep::SweepScenario& scenario = chosen[i];
    const std::size_t index = i + 1;
    progress.flush();
    ChildOutcome child = RunInChild([&] {
      sweep::SweepProgress on_progress;
      if (options.progress_bar) {
        on_progress = [&](std::uint64_t done, std::uint64_t calls) {
          DrawBar(stderr, index, chosen.size(), scenario.name, done, calls);
        };
      }
      return Serialize(sweep::RunFaultSweep(scenario, on_progress));
    });
    ScenarioResult result;
    if (child.completed) {
      result = Deserialize(child.result);
    } else {
      result.crash = child.crash;
    }
    const bool ok = result.crash.empty() && result.problem_count == 0 && result.leaks == 0;
    std::string verdict = "ok";
    if (!result.crash.empty()) {
      verdict = StrCat("crashed (", result.crash, ")");
    } else if (!ok) {
      verdict = StrCat(result.problem_count, " problem(s)");
    }
    if (!ok) {
      failed.push_back(scenario.name);
      problems += StrCat("\n", scenario.name, ": ", verdict, "\n",
                         result.crash.empty() ? result.problems : child.result);
    }
    const bool crashed = !result.crash.empty();
    table.AddRow({scenario.name, crashed ? "-" : StrCat(result.calls),
                  crashed ? "-" : StrCat(result.injected), crashed ? "-" : StrCat(result.leaks),
                  crashed ? "1" : "0", verdict});
    if (options.progress_bar) progress << "\r\033[K";
    progress << "[" << index << "/" << chosen.size() << "] " << scenario.name << ": " << verdict
             << (crashed ? "" : StrCat(" (", result.calls, " calls swept)")) << "\n";
    progress.flush();
  }

  out << "Fault sweep: each scenario ran once to count its driver calls, then once per call with "
         "that call\nfailing (fake CUDA driver and NCCL, one child process per scenario"
      << (options.seed.has_value() ? StrCat(", seed ", *options.seed) : std::string()) << ").\n\n";
  table.Render(out);
  if (!problems.empty()) out << problems;
  if (!failed.empty()) {
    std::string names;
    for (const std::string& name : failed) names += (names.empty() ? "" : ", ") + name;
    return AbortedError(StrCat(failed.size(), " of ", chosen.size(),
                               " scenario(s) leaked, crashed or had unexpected results: ", names));
  }
  return OkStatus();
}

}  // namespace cuhal::cli
