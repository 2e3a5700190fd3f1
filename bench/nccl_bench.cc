// Copyright 2026 The cuhal Authors.
// The bandwidth and cost of NCCL collectives on fakenccl, next to the real NCCL's when one loads,
// and next to the machine's memcpy, all measured in one run.
//
//   build/release/bench/nccl_bench                                   # everything
//   build/release/bench/nccl_bench --benchmark_filter='Memcpy|fake'  # no real NCCL
//   build/release/bench/nccl_bench --benchmark_min_time=0.1           # quicker
//
// Benchmarks named ".../fake" (fakenccl on fakecuda, ranks 1, 2 and 4 in one process, driven from
// one thread in a group as ncclCommInitAll programs do), ".../fakeshm" (fakenccl across 2 and 4
// processes: this process is rank 0 and starts the other ranks as child processes of this
// executable, joined through a cross-process ncclUniqueId; see "Ranks as processes" below) and
// ".../real" (1 rank); the real ones are skipped with the reason when libcuda.so.1 or
// libnccl.so.2 cannot be loaded or there is no GPU (CUHAL_LIBNCCL_PATH picks the NCCL library).
// Sizes are 4 B to 64 MiB in powers of 4. Times are wall-clock times.
//
// Counters: "bytes" is the size S of the collective as nccl-tests counts it (the all-reduce and
// broadcast buffer, all-gather's receive buffer, reduce-scatter's send buffer; per rank) and
// "GB/s" is S per second of one collective including its stream synchronizations (nccl-tests'
// algorithm bandwidth, 1e9 bytes). Across processes that is per rank: every process moves its
// own rank's data, in parallel. In one process, "all_ranks_GB/s" counts the bytes written into
// every rank's receive buffer together: one thread moves them all, so that is the figure to set
// against one memcpy. Every call is out of place (a one-rank in-place call moves nothing, as
// NCCL's; BM_AllReduceInPlace measures that separately). BM_Memcpy is std::memcpy of S bytes
// between two host buffers: the machine's copy bandwidth the fake's is compared with.
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <fcntl.h>
#include <nccl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"
#include "core/symbols/real_loader.h"
#include "fakecuda/fake_driver.h"
#include "fakenccl/fake_nccl.h"

extern char** environ;

namespace {

constexpr int kFakeDevices = 8;

// A CUDA and NCCL pair with `ranks` communicators made by ncclCommInitAll on devices 0..ranks-1,
// a stream and a buffer per rank. Set up once per process and kept: benchmarks may run in any
// order.
struct World {
  const cuhal::CudaApi* cuda = nullptr;
  const cuhal::NcclApi* nccl = nullptr;
  std::vector<CUcontext> ctx;
  std::vector<CUstream> streams;
  std::vector<CUdeviceptr> send;  // kMaxBytes per rank
  std::vector<CUdeviceptr> recv;  // kMaxBytes per rank
  std::vector<ncclComm_t> comms;
  std::string unavailable;
};

constexpr std::size_t kMinBytes = 4;
constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

// Makes the contexts, streams and buffers of `ranks` ranks on devices first_device,
// first_device + 1, ...; sets w->unavailable when it cannot.
void SetupBuffers(World* w, int ranks, int first_device) {
  if (CUresult r = w->cuda->cuInit(0); r != CUDA_SUCCESS) {
    w->unavailable = "cuInit(0) failed: " + std::to_string(static_cast<int>(r));
    return;
  }
  int count = 0;
  if (w->cuda->cuDeviceGetCount(&count) != CUDA_SUCCESS || count < first_device + ranks) {
    w->unavailable = "needs " + std::to_string(first_device + ranks) + " devices";
    return;
  }
  w->ctx.resize(static_cast<size_t>(ranks));
  w->streams.resize(static_cast<size_t>(ranks));
  w->send.resize(static_cast<size_t>(ranks));
  w->recv.resize(static_cast<size_t>(ranks));
  w->comms.resize(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    auto rr = static_cast<size_t>(r);
    if (w->cuda->cuDevicePrimaryCtxRetain(&w->ctx[rr], first_device + r) != CUDA_SUCCESS ||
        w->cuda->cuCtxPushCurrent(w->ctx[rr]) != CUDA_SUCCESS ||
        w->cuda->cuStreamCreate(&w->streams[rr], CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        w->cuda->cuMemAlloc(&w->send[rr], kMaxBytes) != CUDA_SUCCESS ||
        w->cuda->cuMemAlloc(&w->recv[rr], kMaxBytes) != CUDA_SUCCESS ||
        w->cuda->cuMemsetD8(w->send[rr], 1, kMaxBytes) != CUDA_SUCCESS ||  // touched once
        w->cuda->cuMemsetD8(w->recv[rr], 0, kMaxBytes) != CUDA_SUCCESS ||
        w->cuda->cuCtxPopCurrent(nullptr) != CUDA_SUCCESS) {
      w->unavailable = "CUDA setup failed on device " + std::to_string(first_device + r);
      return;
    }
  }
}

void Setup(World* w, int ranks) {
  SetupBuffers(w, ranks, 0);
  if (!w->unavailable.empty()) return;
  // ncclCommInitAll switches devices itself (the real one through the runtime); the fake needs
  // nothing current.
  if (ncclResult_t r = w->nccl->ncclCommInitAll(w->comms.data(), ranks, nullptr);
      r != ncclSuccess) {
    w->unavailable = std::string("ncclCommInitAll: ") + w->nccl->ncclGetErrorString(r);
  }
}

// The fake driver (kFakeDevices H200s) and fakenccl of this process, installed once and kept.
struct FakeApis {
  const cuhal::CudaApi* cuda;
  const cuhal::NcclApi* nccl;
};
FakeApis Fakes() {
  static fakecuda::ScopedDriver* driver = [] {
    fakecuda::DriverOptions options;
    options.devices.assign(kFakeDevices, fakecuda::BuiltinH200Profile());
    return new fakecuda::ScopedDriver(options);  // lives for the process
  }();
  static fakenccl::ScopedNccl* nccl = new fakenccl::ScopedNccl();
  static cuhal::CudaApi* cuda_api = [] {
    auto* api = new cuhal::CudaApi;
    fakecuda::FillCudaApi(api);
    return api;
  }();
  static cuhal::NcclApi* nccl_api = [] {
    auto* api = new cuhal::NcclApi;
    fakenccl::FillNcclApi(api);
    return api;
  }();
  (void)driver;
  (void)nccl;
  return FakeApis{cuda_api, nccl_api};
}

const World& FakeWorld(int ranks) {
  static std::vector<std::unique_ptr<World>> worlds(kFakeDevices + 1);
  std::unique_ptr<World>& w = worlds[static_cast<size_t>(ranks)];
  if (w == nullptr) {
    w = std::make_unique<World>();
    w->cuda = Fakes().cuda;
    w->nccl = Fakes().nccl;
    Setup(w.get(), ranks);
  }
  return *w;
}

const World& RealWorld() {
  static const World* world = [] {
    auto* w = new World;
    auto cuda = cuhal::RealCuda::Load();
    if (!cuda.ok()) {
      w->unavailable = cuda.status().ToString();
      return w;
    }
    auto nccl = cuhal::RealNccl::Load();
    if (!nccl.ok()) {
      w->unavailable = nccl.status().ToString();
      return w;
    }
    w->cuda = &std::move(cuda).value().release()->api();  // kept for the process
    w->nccl = &std::move(nccl).value().release()->api();
    Setup(w, 1);
    return w;
  }();
  return *world;
}

enum class Coll : std::int32_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast };

// The element count per rank's block of a collective of size S on n ranks, and S as moved:
// all-gather and reduce-scatter split S into n blocks (at least one element each, so S is rounded
// for sizes below 4n bytes).
struct Shape {
  std::size_t count;
  std::size_t bytes;
};
Shape ShapeOf(Coll coll, std::size_t size, std::size_t n) {
  std::size_t count = size / sizeof(float);
  const bool split = coll == Coll::kAllGather || coll == Coll::kReduceScatter;
  if (split) count = std::max<std::size_t>(1, count / n);
  return Shape{count, split ? count * sizeof(float) * n : count * sizeof(float)};
}

// Enqueues rank `rank`'s call of `coll` (float32 sum, root 0) on w's stream `local` (the rank's
// index in this process); `in_place` passes the receive buffer (or all-gather's own block of it)
// as the send buffer.
ncclResult_t Issue(const World& w, std::size_t local, std::size_t rank, Coll coll,
                   std::size_t count, bool in_place) {
  void* recv = reinterpret_cast<void*>(w.recv[local]);
  const void* send = in_place ? recv : reinterpret_cast<const void*>(w.send[local]);
  if (in_place && coll == Coll::kAllGather) {
    send = reinterpret_cast<const std::byte*>(recv) + rank * count * sizeof(float);
  }
  auto stream = reinterpret_cast<cudaStream_t>(w.streams[local]);
  ncclComm_t comm = w.comms[local];
  switch (coll) {
    case Coll::kAllReduce:
      return w.nccl->ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream);
    case Coll::kAllGather:
      return w.nccl->ncclAllGather(send, recv, count, ncclFloat32, comm, stream);
    case Coll::kReduceScatter:
      return w.nccl->ncclReduceScatter(send, recv, count, ncclFloat32, ncclSum, comm, stream);
    case Coll::kBroadcast:
      return w.nccl->ncclBroadcast(send, recv, count, ncclFloat32, 0, comm, stream);
  }
  return ncclInvalidArgument;
}

void SetCounters(benchmark::State& state, std::size_t bytes, std::size_t ranks) {
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["ranks"] = static_cast<double>(ranks);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes));
}

// One collective of size S = state.range(0) on every rank (grouped from this thread), then each
// stream synchronized; `in_place` passes the receive buffer as the send buffer.
void RunCollective(benchmark::State& state, const World& w, Coll coll, bool in_place = false) {
  if (!w.unavailable.empty()) {
    state.SkipWithError(w.unavailable.c_str());
    return;
  }
  const std::size_t n = w.comms.size();
  const Shape shape = ShapeOf(coll, static_cast<std::size_t>(state.range(0)), n);
  for (auto _ : state) {
    w.nccl->ncclGroupStart();
    for (std::size_t r = 0; r < n; ++r) Issue(w, r, r, coll, shape.count, in_place);
    if (w.nccl->ncclGroupEnd() != ncclSuccess) {
      state.SkipWithError("ncclGroupEnd failed");
      return;
    }
    for (CUstream s : w.streams) {
      if (w.cuda->cuStreamSynchronize(s) != CUDA_SUCCESS) {
        state.SkipWithError("cuStreamSynchronize failed");
        return;
      }
    }
  }
  SetCounters(state, shape.bytes, n);
  // The fake moves every rank's data in this process: n receive buffers of S for all-reduce,
  // broadcast and all-gather, n of S/n for reduce-scatter (the comparison with one memcpy).
  const double delivered = coll == Coll::kReduceScatter ? static_cast<double>(shape.bytes)
                                                        : static_cast<double>(shape.bytes * n);
  state.counters["all_ranks_GB/s"] =
      benchmark::Counter(delivered * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- Ranks as processes -----------------------------------------------------------------------
// A communicator across processes (fakenccl::NcclOptions::cross_process): this process is rank
// 0; ranks 1..n-1 are children running this executable again (kChildEnv set: main() runs
// ChildMain instead of the benchmarks), each with its own fake driver and fakenccl, joined
// through one cross-process ncclUniqueId. Each child is driven through a socket (kChildFd on its
// side): a Command, answered by one byte once its call completed (its stream synchronized).
// Children die with this process (PR_SET_PDEATHSIG) and are reaped by ShutDownProcWorlds.

constexpr char kChildEnv[] = "CUHAL_NCCL_BENCH_CHILD";  // "<rank> <nranks> <parent pid> <id hex>"
constexpr int kChildFd = 3;

struct Command {
  std::int32_t exit;  // 1: destroy the communicator and exit
  Coll coll;
  std::uint64_t count;
};

struct ProcWorld {
  World world;  // this process's rank (0): one stream, buffer pair and communicator
  int nranks = 0;
  std::vector<pid_t> children;
  std::vector<int> sockets;  // one per child, in rank order
};

// Writes all of `data` to the socket `fd`; false when the peer is gone (no SIGPIPE).
bool WriteAll(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

// Reads all of `data` from `fd`; false when the peer is gone.
bool ReadAll(int fd, void* data, std::size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;  // the peer is gone
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

// Starts rank `rank` of `nranks` as a child; returns its pid (or -1) and its socket in *fd.
pid_t SpawnRank(int rank, int nranks, const ncclUniqueId& id, int* fd) {
  *fd = -1;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
  // Above kChildFd, so that the dup2 below cannot clobber it (both stay close-on-exec here).
  const int theirs = fcntl(pair[1], F_DUPFD_CLOEXEC, 10);
  close(pair[1]);
  char exe[4096] = {};
  if (theirs < 0 || readlink("/proc/self/exe", exe, sizeof(exe) - 1) <= 0) {
    close(pair[0]);
    if (theirs >= 0) close(theirs);
    return -1;
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.push_back(std::string(kChildEnv) + "=" + std::to_string(rank) + " " +
                        std::to_string(nranks) + " " + std::to_string(getpid()) + " " +
                        fakenccl::UniqueIdToHex(id));
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  char* argv[] = {exe, nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, theirs, kChildFd);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(theirs);
  if (rc != 0) {
    close(pair[0]);
    return -1;
  }
  *fd = pair[0];
  return pid;
}

// Waits for `pid` at most `patience`, then kills it; reaps it either way.
void Reap(pid_t pid, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::vector<std::unique_ptr<ProcWorld>>& ProcWorlds() {
  static auto* worlds = new std::vector<std::unique_ptr<ProcWorld>>(kFakeDevices + 1);
  return *worlds;
}

// The world of `nranks` processes, set up on first use and kept until ShutDownProcWorlds.
ProcWorld& GetProcWorld(int nranks) {
  std::unique_ptr<ProcWorld>& pw = ProcWorlds()[static_cast<std::size_t>(nranks)];
  if (pw != nullptr) return *pw;
  pw = std::make_unique<ProcWorld>();
  pw->nranks = nranks;
  World& w = pw->world;
  w.cuda = Fakes().cuda;
  w.nccl = Fakes().nccl;
  SetupBuffers(&w, 1, 0);
  if (!w.unavailable.empty()) return *pw;
  fakenccl::NcclOptions options;
  options.cross_process = true;
  ncclUniqueId id{};
  fakenccl::FakeNccl::Create(options)->NewUniqueId(&id);
  for (int r = 1; r < nranks; ++r) {
    int fd = -1;
    const pid_t pid = SpawnRank(r, nranks, id, &fd);
    if (pid < 0) {
      w.unavailable = "cannot start rank " + std::to_string(r) + " as a process";
      return *pw;  // the ranks started fail their ncclCommInitRank at the backstop and exit
    }
    pw->children.push_back(pid);
    pw->sockets.push_back(fd);
  }
  // ncclCommInitRank takes the current device (the fake's: the current context's).
  w.cuda->cuCtxPushCurrent(w.ctx[0]);
  if (ncclResult_t r = w.nccl->ncclCommInitRank(&w.comms[0], nranks, id, 0); r != ncclSuccess) {
    w.unavailable = std::string("ncclCommInitRank across processes: ") +
                    w.nccl->ncclGetErrorString(r) + ": " + w.nccl->ncclGetLastError(nullptr);
    w.comms[0] = nullptr;
  }
  w.cuda->cuCtxPopCurrent(nullptr);
  return *pw;
}

// Tells every child to exit, destroys this process's communicators across processes and reaps
// the children (killed when they do not exit within 10 s).
void ShutDownProcWorlds() {
  for (std::unique_ptr<ProcWorld>& pw : ProcWorlds()) {
    if (pw == nullptr) continue;
    const Command bye{1, Coll::kAllReduce, 0};
    for (int fd : pw->sockets) {
      WriteAll(fd, &bye, sizeof(bye));
      close(fd);
    }
    if (!pw->world.comms.empty() && pw->world.comms[0] != nullptr) {
      pw->world.nccl->ncclCommDestroy(pw->world.comms[0]);
    }
    for (pid_t pid : pw->children) Reap(pid, std::chrono::seconds(10));
    pw.reset();
  }
}

// One collective of size S per rank across `nranks` processes: each iteration sends the command
// to every child, makes rank 0's call, synchronizes its stream, and waits for every child's
// acknowledgement (its call made and its stream synchronized). "GB/s" is per rank: S per second
// of one collective, which every process moves for its own rank in parallel (nccl-tests'
// algorithm bandwidth, as a real multi-process run reports it).
void RunCollectiveProcs(benchmark::State& state, int nranks, Coll coll) {
  ProcWorld& pw = GetProcWorld(nranks);
  const World& w = pw.world;
  if (!w.unavailable.empty()) {
    state.SkipWithError(w.unavailable.c_str());
    return;
  }
  const Shape shape =
      ShapeOf(coll, static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(nranks));
  const Command command{0, coll, shape.count};
  for (auto _ : state) {
    for (int fd : pw.sockets) {
      if (!WriteAll(fd, &command, sizeof(command))) {
        state.SkipWithError("a rank process is gone");
        return;
      }
    }
    if (Issue(w, 0, 0, coll, shape.count, false) != ncclSuccess ||
        w.cuda->cuStreamSynchronize(w.streams[0]) != CUDA_SUCCESS) {
      state.SkipWithError("rank 0's collective failed");
      return;
    }
    for (int fd : pw.sockets) {
      char ok = 0;
      if (!ReadAll(fd, &ok, 1) || ok != 1) {
        state.SkipWithError("a rank process's collective failed");
        return;
      }
    }
  }
  SetCounters(state, shape.bytes, static_cast<std::size_t>(nranks));
}

// The child's side: rank `rank` of the communicator of `hex_id`, answering commands on kChildFd
// until told to exit or the parent is gone. Returns the exit status.
int ChildMain(const char* spec) {
  int rank = 0;
  int nranks = 0;
  long parent = 0;
  char hex[2 * sizeof(ncclUniqueId::internal) + 1] = {};
  if (std::sscanf(spec, "%d %d %ld %256s", &rank, &nranks, &parent, hex) != 4) return 2;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != static_cast<pid_t>(parent)) return 3;  // the parent died before the prctl
  World w;
  w.cuda = Fakes().cuda;
  w.nccl = Fakes().nccl;
  SetupBuffers(&w, 1, rank % kFakeDevices);
  if (!w.unavailable.empty()) return 4;
  w.cuda->cuCtxPushCurrent(w.ctx[0]);
  ncclUniqueId id{};
  if (!fakenccl::UniqueIdFromHex(hex, &id)) return 2;
  if (w.nccl->ncclCommInitRank(&w.comms[0], nranks, id, rank) != ncclSuccess) return 5;
  Command command{};
  while (ReadAll(kChildFd, &command, sizeof(command)) && command.exit == 0) {
    const bool ok = Issue(w, 0, static_cast<std::size_t>(rank), command.coll, command.count,
                          false) == ncclSuccess &&
                    w.cuda->cuStreamSynchronize(w.streams[0]) == CUDA_SUCCESS;
    const char answer = ok ? 1 : 0;
    if (!WriteAll(kChildFd, &answer, 1)) break;
  }
  w.nccl->ncclCommDestroy(w.comms[0]);
  return 0;
}

// std::memcpy of S bytes between two host buffers (touched once, kept for the process).
void BM_Memcpy(benchmark::State& state) {
  static std::vector<std::byte>* from = new std::vector<std::byte>(kMaxBytes, std::byte{1});
  static std::vector<std::byte>* to = new std::vector<std::byte>(kMaxBytes, std::byte{0});
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    std::memcpy(to->data(), from->data(), bytes);
    benchmark::ClobberMemory();
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes));
}

// The error path: an argument check that fails (NCCL's ArgsCheck).
void RunArgumentError(benchmark::State& state, const World& w) {
  if (!w.unavailable.empty()) {
    state.SkipWithError(w.unavailable.c_str());
    return;
  }
  void* p = reinterpret_cast<void*>(w.recv[0]);
  for (auto _ : state) {
    benchmark::DoNotOptimize(w.nccl->ncclAllReduce(p, p, 4, ncclNumTypes, ncclSum, w.comms[0],
                                                   reinterpret_cast<cudaStream_t>(w.streams[0])));
  }
}

// The sizes: kMinBytes, 4 * kMinBytes, ..., kMaxBytes.
// Times are wall-clock times (UseRealTime): the work of a collective is done by other threads
// and processes too, which this thread's CPU time does not see.
void Sizes(benchmark::internal::Benchmark* b) {
  for (std::size_t s = kMinBytes; s <= kMaxBytes; s *= 4) b->Arg(static_cast<std::int64_t>(s));
  b->UseRealTime();
}

#define CUHAL_NCCL_BENCH(Name, coll)                                                        \
  void BM_##Name##_1Rank_fake(benchmark::State& s) { RunCollective(s, FakeWorld(1), coll); } \
  void BM_##Name##_2Ranks_fake(benchmark::State& s) { RunCollective(s, FakeWorld(2), coll); } \
  void BM_##Name##_4Ranks_fake(benchmark::State& s) { RunCollective(s, FakeWorld(4), coll); } \
  void BM_##Name##_1Rank_real(benchmark::State& s) { RunCollective(s, RealWorld(), coll); }   \
  BENCHMARK(BM_##Name##_1Rank_fake)->Apply(Sizes);                                          \
  BENCHMARK(BM_##Name##_2Ranks_fake)->Apply(Sizes);                                         \
  BENCHMARK(BM_##Name##_4Ranks_fake)->Apply(Sizes);                                         \
  BENCHMARK(BM_##Name##_1Rank_real)->Apply(Sizes);                                          \
  void BM_##Name##_2Procs_fakeshm(benchmark::State& s) { RunCollectiveProcs(s, 2, coll); }  \
  void BM_##Name##_4Procs_fakeshm(benchmark::State& s) { RunCollectiveProcs(s, 4, coll); }  \
  BENCHMARK(BM_##Name##_2Procs_fakeshm)->Apply(Sizes);                                      \
  BENCHMARK(BM_##Name##_4Procs_fakeshm)->Apply(Sizes)

BENCHMARK(BM_Memcpy)->Apply(Sizes);
CUHAL_NCCL_BENCH(AllReduce, Coll::kAllReduce);
CUHAL_NCCL_BENCH(AllGather, Coll::kAllGather);
CUHAL_NCCL_BENCH(ReduceScatter, Coll::kReduceScatter);
CUHAL_NCCL_BENCH(Broadcast, Coll::kBroadcast);

// One rank in place: nothing moves (NCCL's one-rank path), so only the call's fixed cost remains.
void BM_AllReduceInPlace_1Rank_fake(benchmark::State& s) {
  RunCollective(s, FakeWorld(1), Coll::kAllReduce, /*in_place=*/true);
}
void BM_AllReduceInPlace_1Rank_real(benchmark::State& s) {
  RunCollective(s, RealWorld(), Coll::kAllReduce, /*in_place=*/true);
}
BENCHMARK(BM_AllReduceInPlace_1Rank_fake)->Arg(4)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
BENCHMARK(BM_AllReduceInPlace_1Rank_real)->Arg(4)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();

void BM_ArgumentError_fake(benchmark::State& s) { RunArgumentError(s, FakeWorld(1)); }
void BM_ArgumentError_real(benchmark::State& s) { RunArgumentError(s, RealWorld()); }
BENCHMARK(BM_ArgumentError_fake);
BENCHMARK(BM_ArgumentError_real);

}  // namespace

// BENCHMARK_MAIN's, unless this process is a rank of a cross-process benchmark (kChildEnv).
int main(int argc, char** argv) {
  if (const char* spec = std::getenv(kChildEnv); spec != nullptr) return ChildMain(spec);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  ShutDownProcWorlds();
  return 0;
}
