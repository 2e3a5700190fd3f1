// Copyright 2026 The cuhal Authors.
// cuhal_fuzz: the differential fuzzer's command line (docs/fuzzing.md).
//
//   cuhal_fuzz --backend fake|real --seeds A..B --transcript-dir D [--batch K] [--timeout S]
//   cuhal_fuzz --backend fake --seeds-from DIR --transcript-dir D   (the seeds DIR has)
//   cuhal_fuzz --compare DIR_A DIR_B [--show N]
//   cuhal_fuzz --minimize SEED [--backends fake,real] [--timeout S] [--minimize-budget S]
//   cuhal_fuzz --print SEED | --list-excluded
//
// Every sequence runs in a child process (this program, exec'd again with --child), K seeds per
// child: a crash or a hang (no progress for --timeout seconds) is recorded in that seed's
// transcript as "CRASH ..." or "HANG ...", and the run goes on with the next seed.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/symbols/real_loader.h"
#include "fuzz/executor.h"
#include "fuzz/minimize.h"
#include "fuzz/sequence.h"
#include "fuzz/transcript.h"

namespace cuhal::fuzz {
namespace {

struct Flags {
  std::string backend = "fake";
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  bool have_seeds = false;
  std::string dir;
  int batch = 25;
  int timeout_s = 10;
  int min_calls = 30;
  int max_calls = 80;
  int show = 5;
  bool child = false;
  std::string sequence_file;  // --run-sequence: run this sequence (a minimizer child)
  std::string out;            // its transcript
  std::vector<std::string> positional;
  std::string mode;           // "", compare, minimize, print, list-excluded
  std::uint64_t seed = 0;
  std::string backends = "fake,real";
  std::int64_t deadline = 0;  // --deadline: Unix time after which no new batch starts (0: none)
  int minimize_budget_s = 0;  // --minimize-budget: seconds of minimization (0: no limit)
  std::string seeds_from;     // --seeds-from: run the seeds this transcript directory has
  std::string known;          // --known: with --compare, the seeds known to differ, and why
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "cuhal_fuzz: %s\n"
               "usage: cuhal_fuzz --backend fake|real --seeds A..B --transcript-dir D "
               "[--batch K] [--timeout S] [--calls MIN..MAX] [--deadline UNIX_S]\n"
               "       cuhal_fuzz --backend B --seeds-from DIR --transcript-dir D [...]\n"
               "       cuhal_fuzz --compare DIR_A DIR_B [--show N] [--known FILE]\n"
               "       cuhal_fuzz --minimize SEED [--backends fake,real] [--timeout S] "
               "[--minimize-budget S]\n"
               "       cuhal_fuzz --print SEED | --list-excluded\n",
               why);
  std::exit(2);
}

bool ParseU64(std::string_view s, std::uint64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::string copy(s);
  *out = std::strtoull(copy.c_str(), &end, 10);
  return end != nullptr && *end == '\0';
}

bool ParseRange(std::string_view s, std::uint64_t* a, std::uint64_t* b) {
  std::size_t dots = s.find("..");
  if (dots == std::string_view::npos) return ParseU64(s, a) && ParseU64(s, b);
  return ParseU64(s.substr(0, dots), a) && ParseU64(s.substr(dots + 2), b) && *a <= *b;
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) Usage("missing value");
      return argv[++i];
    };
    std::uint64_t n = 0;
    std::uint64_t m = 0;
    if (arg == "--backend") {
      f.backend = value();
    } else if (arg == "--seeds") {
      if (!ParseRange(value(), &f.first, &f.last)) Usage("bad --seeds (A..B)");
      f.have_seeds = true;
    } else if (arg == "--transcript-dir") {
      f.dir = value();
    } else if (arg == "--batch") {
      if (!ParseU64(value(), &n) || n == 0) Usage("bad --batch");
      f.batch = static_cast<int>(n);
    } else if (arg == "--timeout") {
      if (!ParseU64(value(), &n) || n == 0) Usage("bad --timeout");
      f.timeout_s = static_cast<int>(n);
    } else if (arg == "--calls") {
      if (!ParseRange(value(), &n, &m) || n == 0) Usage("bad --calls (MIN..MAX)");
      f.min_calls = static_cast<int>(n);
      f.max_calls = static_cast<int>(m);
    } else if (arg == "--show") {
      if (!ParseU64(value(), &n)) Usage("bad --show");
      f.show = static_cast<int>(n);
    } else if (arg == "--child") {
      f.child = true;
    } else if (arg == "--run-sequence") {
      f.sequence_file = value();
    } else if (arg == "--out") {
      f.out = value();
    } else if (arg == "--compare") {
      f.mode = "compare";
    } else if (arg == "--minimize" || arg == "--print") {
      f.mode = arg.substr(2);
      if (!ParseU64(value(), &f.seed)) Usage("bad seed");
    } else if (arg == "--deadline") {
      if (!ParseU64(value(), &n)) Usage("bad --deadline (Unix seconds)");
      f.deadline = static_cast<std::int64_t>(n);
    } else if (arg == "--minimize-budget") {
      if (!ParseU64(value(), &n)) Usage("bad --minimize-budget (seconds)");
      f.minimize_budget_s = static_cast<int>(n);
    } else if (arg == "--backends") {
      f.backends = value();
    } else if (arg == "--known") {
      f.known = value();
    } else if (arg == "--seeds-from") {
      f.seeds_from = value();
    } else if (arg == "--list-excluded") {
      f.mode = "list-excluded";
    } else if (!arg.empty() && arg[0] == '-') {
      Usage(("unknown flag " + std::string(arg)).c_str());
    } else {
      f.positional.emplace_back(arg);
    }
  }
  return f;
}

std::string SeedPath(const std::string& dir, std::uint64_t seed) {
  return dir + "/" + std::to_string(seed) + ".txt";
}

// ---------------------------------------------------------------------------------------------
// In the child: run sequences on one backend.

// Runs `sequence` on `backend`, handing each transcript line to `emit`. `real` is loaded once
// per process. Returns false (with a message on stderr) when the backend cannot run here.
//
// Test backends, so that the child-process paths are tested without a GPU (fuzz/CMakeLists.txt):
// the fake with cuEventQuery answering CUDA_ERROR_INVALID_HANDLE ("fake-perturbed"), aborting
// the process ("fake-aborting") or never returning ("fake-hanging").
CUresult PerturbedEventQuery(CUevent) { return CUDA_ERROR_INVALID_HANDLE; }
CUresult AbortingEventQuery(CUevent) { std::abort(); }
CUresult HangingEventQuery(CUevent) {
  for (;;) pause();
}

// The real driver's table, loaded once per process; null (with a message) where it cannot load.
const CudaApi* RealApi() {
  static std::unique_ptr<RealCuda> real;
  if (real == nullptr) {
    StatusOr<std::unique_ptr<RealCuda>> loaded = RealCuda::Load();
    if (!loaded.ok()) {
      std::fprintf(stderr, "cuhal_fuzz: cannot load the real driver: %s\n",
                   loaded.status().ToString().c_str());
      return nullptr;
    }
    real = std::move(loaded).value();
  }
  return &real->api();
}

bool RunSequence(const std::string& backend, const Sequence& sequence, const LineSink& emit) {
  if (backend == "fake") {
    RunOnFake(sequence, emit);
    return true;
  }
  if (backend == "fake-perturbed" || backend == "fake-aborting" || backend == "fake-hanging") {
    auto query = backend == "fake-perturbed"  ? &PerturbedEventQuery
                 : backend == "fake-aborting" ? &AbortingEventQuery
                                              : &HangingEventQuery;
    RunOnFake(sequence, emit, [query](CudaApi* api) { api->cuEventQuery = query; });
    return true;
  }
  if (backend != "real") {
    std::fprintf(stderr, "cuhal_fuzz: unknown backend '%s'\n", backend.c_str());
    return false;
  }
  const CudaApi* real = RealApi();
  if (real == nullptr) return false;
  Execute(*real, sequence, emit);
  return true;
}

// A transcript file written line by line, flushed, so that a crash leaves what came before.
class TranscriptFile {
 public:
  explicit TranscriptFile(const std::string& path) : file_(std::fopen(path.c_str(), "w")) {}
  ~TranscriptFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  TranscriptFile(const TranscriptFile&) = delete;             // owns a FILE
  TranscriptFile& operator=(const TranscriptFile&) = delete;  // ditto
  bool ok() const { return file_ != nullptr; }
  void Line(const std::string& line) {
    std::fputs(line.c_str(), file_);
    std::fputc('\n', file_);
    std::fflush(file_);
  }

 private:
  std::FILE* file_;
};

// Where a child's time goes, with CUHAL_FUZZ_TIMING set: the time from one transcript line to
// the next is the call the next line reports (prologue "P cuX", calls "<id> <Op>", teardown
// "T cuX"); at the child's end one line per name, "timing <name> <calls> <ms>", goes to stderr
// (fuzz.sh adds them up over the run). Not thread-safe; one per child.
class CallTimes {
 public:
  CallTimes() : on_(std::getenv("CUHAL_FUZZ_TIMING") != nullptr) {}
  CallTimes(const CallTimes&) = delete;             // prints once, at its end
  CallTimes& operator=(const CallTimes&) = delete;  // ditto
  ~CallTimes() {
    for (const auto& [name, t] : totals_) {
      std::fprintf(stderr, "timing %s %llu %.3f\n", name.c_str(),
                   static_cast<unsigned long long>(t.calls), t.ms);
    }
  }
  void Start() { last_ = std::chrono::steady_clock::now(); }
  void Line(const std::string& line) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    std::size_t a = line.find(' ');
    std::size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
    std::string name = a == std::string::npos ? line : line.substr(a + 1, b - a - 1);
    Total& t = totals_[name];
    ++t.calls;
    t.ms += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }

 private:
  struct Total {
    std::uint64_t calls = 0;
    double ms = 0;
  };
  bool on_;
  std::chrono::steady_clock::time_point last_;
  std::map<std::string, Total> totals_;
};

int ChildMain(const Flags& f) {
  if (!f.sequence_file.empty()) {
    std::vector<std::string> text;
    Sequence sequence;
    std::string error;
    std::string joined;
    if (!ReadLines(f.sequence_file, &text)) return 3;
    for (const std::string& line : text) joined += line + "\n";
    if (!ParseSequence(joined, &sequence, &error)) {
      std::fprintf(stderr, "cuhal_fuzz: %s: %s\n", f.sequence_file.c_str(), error.c_str());
      return 3;
    }
    TranscriptFile out(f.out);
    if (!out.ok()) return 3;
    return RunSequence(f.backend, sequence, [&](const std::string& l) { out.Line(l); }) ? 0 : 3;
  }
  CallTimes times;
  for (std::uint64_t seed = f.first; seed <= f.last; ++seed) {
    std::printf("start %llu\n", static_cast<unsigned long long>(seed));
    std::fflush(stdout);
    TranscriptFile out(SeedPath(f.dir, seed));
    if (!out.ok()) return 3;
    out.Line("# seed " + std::to_string(seed) + " backend " + f.backend);
    Sequence sequence = Generate(seed, f.min_calls, f.max_calls);
    times.Start();
    if (!RunSequence(f.backend, sequence, [&](const std::string& l) {
          times.Line(l);
          out.Line(l);
        })) {
      return 3;
    }
    std::printf("done %llu\n", static_cast<unsigned long long>(seed));
    std::fflush(stdout);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// In the parent: children, with a timeout on progress.

struct ChildOutcome {
  enum Kind { kOk, kExit, kSignal, kTimeout, kSpawnFailed } kind = kOk;
  int code = 0;  // exit code or signal
  std::optional<std::uint64_t> running;  // the seed started and not done when it ended
  std::optional<std::uint64_t> last_done;
};

ChildOutcome RunChild(const std::vector<std::string>& args, int timeout_s) {
  ChildOutcome outcome;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    outcome.kind = ChildOutcome::kSpawnFailed;
    return outcome;
  }
  pid_t pid = fork();
  if (pid < 0) {
    outcome.kind = ChildOutcome::kSpawnFailed;
    return outcome;
  }
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string buffer;
  bool timed_out = false;
  for (;;) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    int ready = poll(&p, 1, timeout_s * 1000);
    if (ready == 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (ready < 0) continue;  // EINTR
    char chunk[256];
    ssize_t n = read(pipe_fds[0], chunk, sizeof(chunk));
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      std::uint64_t seed = 0;
      if (line.rfind("start ", 0) == 0 && ParseU64(line.substr(6), &seed)) {
        outcome.running = seed;
      } else if (line.rfind("done ", 0) == 0 && ParseU64(line.substr(5), &seed)) {
        outcome.running.reset();
        outcome.last_done = seed;
      }
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (timed_out) {
    outcome.kind = ChildOutcome::kTimeout;
  } else if (WIFSIGNALED(status)) {
    outcome.kind = ChildOutcome::kSignal;
    outcome.code = WTERMSIG(status);
  } else if (WEXITSTATUS(status) != 0) {
    outcome.kind = ChildOutcome::kExit;
    outcome.code = WEXITSTATUS(status);
  }
  return outcome;
}

std::string Describe(const ChildOutcome& o, int timeout_s) {
  switch (o.kind) {
    case ChildOutcome::kSignal: return "CRASH signal " + std::to_string(o.code) + " (" +
                                       strsignal(o.code) + ")";
    case ChildOutcome::kExit: return "CRASH exit " + std::to_string(o.code);
    case ChildOutcome::kTimeout: return "HANG no progress for " + std::to_string(timeout_s) + " s";
    case ChildOutcome::kSpawnFailed: return "CRASH could not start the child";
    case ChildOutcome::kOk: break;
  }
  return "OK";
}

void AppendLine(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << line << '\n';
}

// The status a transcript ends with: "" (complete), "CRASH ..." or "HANG ...", "INCOMPLETE".
std::string Ending(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) {
    if (l.rfind("CRASH", 0) == 0 || l.rfind("HANG", 0) == 0) return l;
  }
  return !lines.empty() && lines.back() == "END" ? "" : "INCOMPLETE";
}

// The seed ranges to run: --seeds A..B, or with --seeds-from DIR the seeds of DIR's transcripts
// (<seed>.txt), as maximal runs of consecutive seeds.
std::vector<std::pair<std::uint64_t, std::uint64_t>> SeedRanges(const Flags& f) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  if (f.seeds_from.empty()) {
    ranges.emplace_back(f.first, f.last);
    return ranges;
  }
  std::vector<std::uint64_t> seeds;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(f.seeds_from, ec)) {
    std::uint64_t seed = 0;
    if (entry.path().extension() == ".txt" && ParseU64(entry.path().stem().string(), &seed)) {
      seeds.push_back(seed);
    }
  }
  if (ec) Usage(("cannot read --seeds-from " + f.seeds_from).c_str());
  std::sort(seeds.begin(), seeds.end());
  for (std::uint64_t seed : seeds) {
    if (!ranges.empty() && ranges.back().second + 1 == seed) {
      ranges.back().second = seed;
    } else {
      ranges.emplace_back(seed, seed);
    }
  }
  return ranges;
}

int RunSeeds(const Flags& f, const char* self) {
  if ((!f.have_seeds && f.seeds_from.empty()) || f.dir.empty()) {
    Usage("--seeds (or --seeds-from) and --transcript-dir are required");
  }
  std::error_code ec;
  std::filesystem::create_directories(f.dir, ec);
  int crashes = 0;
  int hangs = 0;
  std::vector<std::uint64_t> ran;
  std::uint64_t not_run = 0;
  for (auto [first, last] : SeedRanges(f)) {
    std::uint64_t next = first;
    while (next <= last) {
      if (f.deadline != 0 && std::time(nullptr) >= f.deadline) break;  // the rest is not run
      std::uint64_t end = std::min<std::uint64_t>(last, next + f.batch - 1);
      std::vector<std::string> args = {
          self, "--child", "--backend", f.backend,
          "--seeds", std::to_string(next) + ".." + std::to_string(end),
          "--transcript-dir", f.dir,
          "--calls", std::to_string(f.min_calls) + ".." + std::to_string(f.max_calls)};
      ChildOutcome o = RunChild(args, f.timeout_s);
      if (o.kind == ChildOutcome::kOk) {
        for (std::uint64_t s = next; s <= end; ++s) ran.push_back(s);
        next = end + 1;
        continue;
      }
      if (o.kind == ChildOutcome::kExit && o.code == 3) {
        std::fprintf(stderr, "cuhal_fuzz: the %s backend cannot run here\n", f.backend.c_str());
        return 3;
      }
      std::string what = Describe(o, f.timeout_s);
      std::uint64_t culprit = o.running ? *o.running : (o.last_done ? *o.last_done + 1 : next);
      if (!o.running) what += " (between sequences)";
      if (culprit > end) {  // ended after its last sequence: the process's exit
        std::fprintf(stderr, "cuhal_fuzz: seeds %llu..%llu: %s at exit\n",
                     static_cast<unsigned long long>(next), static_cast<unsigned long long>(end),
                     what.c_str());
        ++crashes;
        for (std::uint64_t s = next; s <= end; ++s) ran.push_back(s);
        next = end + 1;
        continue;
      }
      AppendLine(SeedPath(f.dir, culprit), what);
      std::fprintf(stderr, "cuhal_fuzz: seed %llu: %s\n",
                   static_cast<unsigned long long>(culprit), what.c_str());
      (o.kind == ChildOutcome::kTimeout ? hangs : crashes)++;
      for (std::uint64_t s = next; s <= culprit; ++s) ran.push_back(s);
      next = culprit + 1;
    }
    if (next <= last) not_run += last - next + 1;
  }
  // The summary, and the fake's leak check.
  int leaks = 0;
  int races = 0;
  int incomplete = 0;
  for (std::uint64_t seed : ran) {
    std::vector<std::string> lines;
    if (!ReadLines(SeedPath(f.dir, seed), &lines)) {
      ++incomplete;
      continue;
    }
    bool leaked = false;
    bool raced = false;
    for (const std::string& l : lines) {
      leaked = leaked || l.rfind("LEAK ", 0) == 0;
      raced = raced || l.rfind("RACE ", 0) == 0;
    }
    if (raced) {
      ++races;
      if (races <= f.show) std::printf("seed %llu has a stream-order race: see %s\n",
                                       static_cast<unsigned long long>(seed),
                                       SeedPath(f.dir, seed).c_str());
    }
    if (leaked) {
      ++leaks;
      if (leaks <= f.show) std::printf("seed %llu leaks: see %s\n",
                                       static_cast<unsigned long long>(seed),
                                       SeedPath(f.dir, seed).c_str());
    }
    std::string ending = Ending(lines);
    if (ending == "INCOMPLETE") ++incomplete;
  }
  std::printf("backend %s: sequences %zu, crashes %d, hangs %d, leaks %d, incomplete %d, "
              "not run (deadline) %llu, races %d\n",
              f.backend.c_str(), ran.size(), crashes, hangs, leaks, incomplete,
              static_cast<unsigned long long>(not_run), races);
  return crashes + hangs + leaks + incomplete + races == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// --compare

// --known FILE: one line per seed known to differ, "<seed> <class> <why>" ('#' starts a comment).
// Returns false (with the line) on a malformed line.
bool ReadKnown(const std::string& path, std::map<std::uint64_t, std::string>* known) {
  std::vector<std::string> lines;
  if (!ReadLines(path, &lines)) {
    std::fprintf(stderr, "cuhal_fuzz: cannot read --known %s\n", path.c_str());
    return false;
  }
  for (const std::string& line : lines) {
    if (line.empty() || line[0] == '#') continue;
    std::size_t sp = line.find(' ');
    std::size_t sp2 = sp == std::string::npos ? sp : line.find(' ', sp + 1);
    std::uint64_t seed = 0;
    if (sp == std::string::npos || !ParseU64(line.substr(0, sp), &seed)) {
      std::fprintf(stderr, "cuhal_fuzz: %s: not '<seed> <class> <why>': %s\n", path.c_str(),
                   line.c_str());
      return false;
    }
    (*known)[seed] = line.substr(sp + 1, sp2 == std::string::npos ? sp2 : sp2 - sp - 1);
  }
  return true;
}

int Compare(const Flags& f) {
  if (f.positional.size() != 2) Usage("--compare needs DIR_A DIR_B");
  std::map<std::uint64_t, std::string> known;  // seed -> class
  if (!f.known.empty() && !ReadKnown(f.known, &known)) return 2;
  std::map<std::string, int> known_by_class;
  int stale = 0;
  const std::string& da = f.positional[0];
  const std::string& db = f.positional[1];
  std::vector<std::uint64_t> seeds;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(da, ec)) {
    std::uint64_t seed = 0;
    if (entry.path().extension() == ".txt" && ParseU64(entry.path().stem().string(), &seed)) {
      seeds.push_back(seed);
    }
  }
  if (ec) {
    std::fprintf(stderr, "cuhal_fuzz: cannot read %s\n", da.c_str());
    return 2;
  }
  std::sort(seeds.begin(), seeds.end());
  int mismatches = 0;
  int missing = 0;
  int a_bad = 0;
  int b_bad = 0;
  std::map<std::string, int> by_call;
  for (std::uint64_t seed : seeds) {
    std::vector<std::string> a;
    std::vector<std::string> b;
    ReadLines(SeedPath(da, seed), &a);
    if (!ReadLines(SeedPath(db, seed), &b)) {
      ++missing;
      continue;
    }
    std::string ea = Ending(a);
    std::string eb = Ending(b);
    if (!ea.empty()) {
      ++a_bad;
      if (a_bad <= f.show) std::printf("seed %llu: %s: %s\n",
                                       static_cast<unsigned long long>(seed), da.c_str(),
                                       ea.c_str());
    }
    auto listed = known.find(seed);
    if (listed != known.end()) {  // known: counted by class (a crash of A's is still one above)
      if (FirstMismatch(a, b) || !eb.empty()) {
        ++known_by_class[listed->second];
      } else {
        ++stale;
        std::printf("seed %llu: listed as known (%s) but the transcripts agree: remove it\n",
                    static_cast<unsigned long long>(seed), listed->second.c_str());
      }
      continue;
    }
    if (!eb.empty()) {
      ++b_bad;
      if (b_bad <= f.show) std::printf("seed %llu: %s: %s\n",
                                       static_cast<unsigned long long>(seed), db.c_str(),
                                       eb.c_str());
    }
    std::optional<Mismatch> m = FirstMismatch(a, b);
    if (!m) continue;
    ++mismatches;
    std::string call = m->a;
    std::size_t sp = call.find(' ');
    std::string op = sp == std::string::npos ? call : call.substr(sp + 1, call.find(' ', sp + 1) - sp - 1);
    by_call[op]++;
    if (mismatches <= f.show) {
      std::printf("seed %llu: first mismatch at line %d\n  %s: %s\n  %s: %s\n",
                  static_cast<unsigned long long>(seed), m->index, da.c_str(), m->a.c_str(),
                  db.c_str(), m->b.c_str());
    }
  }
  std::printf("compared %zu sequences: mismatches %d, missing %d, crashes/hangs %d (%s) %d (%s)\n",
              seeds.size() - missing, mismatches, missing, a_bad, da.c_str(), b_bad, db.c_str());
  if (!by_call.empty()) {
    std::printf("first mismatching call, by operation:");
    for (const auto& [op, count] : by_call) std::printf(" %s=%d", op.c_str(), count);
    std::printf("\n");
  }
  if (!f.known.empty()) {
    int total = 0;
    for (const auto& [c, n] : known_by_class) total += n;
    std::printf("known differences (%s): %d", f.known.c_str(), total);
    for (const auto& [c, n] : known_by_class) std::printf(" %s=%d", c.c_str(), n);
    std::printf("; listed but agreeing: %d\n", stale);
  }
  return mismatches + missing + a_bad + b_bad + stale == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// --minimize

// Runs `sequence` on `backend` in a child; the transcript, with a CRASH/HANG line if it died.
std::vector<std::string> RunIsolated(const char* self, const std::string& backend,
                                     const Sequence& sequence, int timeout_s,
                                     const std::string& scratch) {
  std::string seq_path = scratch + "/candidate.seq";
  std::string out_path = scratch + "/candidate." + backend + ".txt";
  std::ofstream(seq_path, std::ios::trunc) << FormatSequence(sequence);
  std::filesystem::remove(out_path);
  ChildOutcome o = RunChild({self, "--child", "--backend", backend, "--run-sequence", seq_path,
                             "--out", out_path},
                            timeout_s);
  std::vector<std::string> lines;
  ReadLines(out_path, &lines);
  if (o.kind != ChildOutcome::kOk) lines.push_back(Describe(o, timeout_s));
  return lines;
}

int MinimizeSeed(const Flags& f, const char* self) {
  std::size_t comma = f.backends.find(',');
  if (comma == std::string::npos) Usage("--backends needs two names, e.g. fake,real");
  std::string ba = f.backends.substr(0, comma);
  std::string bb = f.backends.substr(comma + 1);
  char scratch_template[] = "/tmp/cuhal_fuzz_min.XXXXXX";
  const char* scratch = mkdtemp(scratch_template);
  if (scratch == nullptr) return 2;
  Sequence sequence = Generate(f.seed, f.min_calls, f.max_calls);
  auto run_both = [&](const Sequence& s) {
    return std::make_pair(RunIsolated(self, ba, s, f.timeout_s, scratch),
                          RunIsolated(self, bb, s, f.timeout_s, scratch));
  };
  auto [a0, b0] = run_both(sequence);
  std::optional<Mismatch> m0 = FirstMismatch(a0, b0);
  if (!m0) {
    std::printf("seed %llu: %s and %s agree; nothing to minimize\n",
                static_cast<unsigned long long>(f.seed), ba.c_str(), bb.c_str());
    std::filesystem::remove_all(scratch);
    return 0;
  }
  // The same failure: the first mismatch is about the same call (or both are not calls, e.g. a
  // crash line against END).
  int target = CallIdOfLine(m0->a) >= 0 ? CallIdOfLine(m0->a) : CallIdOfLine(m0->b);
  std::printf("seed %llu: first mismatch (call %d):\n  %s: %s\n  %s: %s\n",
              static_cast<unsigned long long>(f.seed), target, ba.c_str(), m0->a.c_str(),
              bb.c_str(), m0->b.c_str());
  // Calls after the mismatching one cannot matter to it (unless the failure is a teardown one).
  Sequence start = sequence;
  if (target >= 0) {
    start.clear();
    for (const Call& c : sequence) {
      if (c.id <= target) start.push_back(c);
    }
  }
  auto fails = [&](const Sequence& s) {
    auto [a, b] = run_both(s);
    std::optional<Mismatch> m = FirstMismatch(a, b);
    if (!m) return false;
    int id = CallIdOfLine(m->a) >= 0 ? CallIdOfLine(m->a) : CallIdOfLine(m->b);
    return id == target;
  };
  if (!fails(start)) start = sequence;
  int tests = 0;
  MinimizeOptions options;
  if (f.minimize_budget_s > 0) {
    options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(f.minimize_budget_s);
  }
  Sequence minimal = Minimize(start, fails, options, &tests);
  auto [a, b] = run_both(minimal);
  std::optional<Mismatch> m = FirstMismatch(a, b);
  std::printf("minimized from %zu to %zu calls in %d runs of both backends\n", sequence.size(),
              minimal.size(), tests);
  std::string comment = "cuhal_fuzz --minimize " + std::to_string(f.seed) + ": " + ba + " and " +
                        bb + " differ.\n//   " + ba + ": " + (m ? m->a : "?") + "\n//   " + bb +
                        ": " + (m ? m->b : "?");
  std::printf("\n%s", RegressionTest("Seed" + std::to_string(f.seed), comment, minimal, b).c_str());
  std::filesystem::remove_all(scratch);
  return 1;
}

int Main(int argc, char** argv) {
  Flags f = ParseFlags(argc, argv);
  if (f.child) return ChildMain(f);
  if (f.mode == "list-excluded") {
    std::printf("Calls cuhal_fuzz never generates, and why:\n");
    for (const ExcludedCall& e : ExcludedCalls()) std::printf("- %s\n    %s\n", e.call, e.reason);
    return 0;
  }
  if (f.mode == "print") {
    std::fputs(FormatSequence(Generate(f.seed, f.min_calls, f.max_calls)).c_str(), stdout);
    return 0;
  }
  if (f.mode == "compare") return Compare(f);
  if (f.mode == "minimize") return MinimizeSeed(f, argv[0]);
  return RunSeeds(f, argv[0]);
}

}  // namespace
}  // namespace cuhal::fuzz

// Under AddressSanitizer the CUDA driver fails cuInit unless ASan leaves its shadow gap
// unprotected (tests/support/real_asan_options.cc has the measurement). ASAN_OPTIONS still wins.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() { return "protect_shadow_gap=0"; }

int main(int argc, char** argv) { return cuhal::fuzz::Main(argc, argv); }
