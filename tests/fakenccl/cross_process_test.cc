// Copyright 2026 The cuhal Authors.
// fakenccl communicators whose ranks are processes (fakenccl/internal/shm_transport.h): the test
// starts its ranks as child processes (this executable again, with --cross-process-child=<job>),
// each on its own fakecuda + fakenccl, joined through one cross-process ncclUniqueId made here.
// Each child checks its own results and exits 0 when they are right; the parent checks every
// child's exit, and that nothing of the communicator is left in /dev/shm.
//
//   Collectives   every collective (8 kinds) on 4 types x 5 operators, 70001 elements (several
//                 chunks of the transport), against fakenccl::ReduceReference computed in each
//                 child from every rank's inputs; a grouped ring of sends and receives larger
//                 than a mailbox, a self send, and a group mixing a collective with them.
//   Mismatch      one process calls a different count: every process gets ncclInvalidUsage with
//                 the in-process engine's text; abort works.
//   Death         one process is SIGKILLed: the others get ncclRemoteError naming it; abort works.
//   FaultSweep    one process's n-th fakenccl call fails (NcclFaultInjector), for every process
//                 and every n until its life makes fewer calls: no process hangs or crashes, the
//                 faulty one sees the error, and /dev/shm stays clean.
//   StaleSegment  a rank killed while it waits for the others during initialization leaves the
//                 segment; the next initialization's sweep removes it.
//   OneRank       (in this process) a one-rank communicator across processes moves nothing for an
//                 in-place collective, as in-process: NULL succeeds.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fakenccl/datatypes.h"
#include "fakenccl/internal/shm_transport.h"
#include "tests/fakenccl/nccl_support.h"

extern char** environ;

namespace cuhal::testing {
namespace {

// ---- The parent's side ------------------------------------------------------------------------

ncclUniqueId NewCrossProcessId() {
  fakenccl::NcclOptions options;
  options.cross_process = true;
  std::unique_ptr<fakenccl::FakeNccl> nccl = fakenccl::FakeNccl::Create(options);
  ncclUniqueId id{};
  nccl->NewUniqueId(&id);
  return id;
}

// The /dev/shm entry of `id`'s segment, and whether it exists.
bool SegmentExists(const ncclUniqueId& id) {
  const std::string path = "/dev/shm" + fakenccl::internal::ShmSegmentName(id);
  return access(path.c_str(), F_OK) == 0;
}

struct Child {
  pid_t pid = -1;
  int status = 0;
  bool exited = false;
};

// Starts `nranks` ranks of `job` (or only those in `only`), waits for them (at most 120 s; then
// they are killed and the test fails). `fault` is "rank:n" or "".
std::vector<Child> RunRanks(const std::string& job, int nranks, const ncclUniqueId& id,
                            const std::string& fault = "", std::vector<int> only = {}) {
  if (only.empty()) {
    for (int r = 0; r < nranks; ++r) only.push_back(r);
  }
  std::vector<Child> children(static_cast<std::size_t>(nranks));
  char exe[4096] = {};
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  EXPECT_GT(len, 0);
  for (int r : only) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    env_strings.push_back("CUHAL_XP_ID=" + fakenccl::UniqueIdToHex(id));
    env_strings.push_back("CUHAL_XP_RANK=" + std::to_string(r));
    env_strings.push_back("CUHAL_XP_NRANKS=" + std::to_string(nranks));
    env_strings.push_back("CUHAL_XP_FAULT=" + fault);
    std::vector<char*> envp;
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string arg = "--cross-process-child=" + job;
    char* argv[] = {exe, arg.data(), nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, exe, nullptr, nullptr, argv, envp.data());
    EXPECT_EQ(rc, 0) << std::strerror(rc);
    children[static_cast<std::size_t>(r)].pid = rc == 0 ? pid : -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    bool all = true;
    for (Child& c : children) {
      if (c.pid <= 0 || c.exited) continue;
      if (waitpid(c.pid, &c.status, WNOHANG) == c.pid) {
        c.exited = true;
      } else {
        all = false;
      }
    }
    if (all) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << job << ": a rank process did not end within 120 s; killing them";
      for (Child& c : children) {
        if (c.pid > 0 && !c.exited) kill(c.pid, SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return children;
}

std::string Describe(const Child& c) {
  if (WIFEXITED(c.status)) return "exit " + std::to_string(WEXITSTATUS(c.status));
  if (WIFSIGNALED(c.status)) return "signal " + std::to_string(WTERMSIG(c.status));
  return "status " + std::to_string(c.status);
}

void ExpectAllExitZero(const std::vector<Child>& children) {
  for (std::size_t r = 0; r < children.size(); ++r) {
    EXPECT_TRUE(WIFEXITED(children[r].status) && WEXITSTATUS(children[r].status) == 0)
        << "rank " << r << ": " << Describe(children[r]);
  }
}

TEST(CrossProcessTest, EveryCollectiveAndSendRecvAcrossTwoAndFourProcesses) {
  for (int n : {2, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    const ncclUniqueId id = NewCrossProcessId();
    ExpectAllExitZero(RunRanks("collectives", n, id));
    EXPECT_FALSE(SegmentExists(id));
  }
}

TEST(CrossProcessTest, AMismatchedCallFailsEveryProcessWithTheInProcessText) {
  const ncclUniqueId id = NewCrossProcessId();
  ExpectAllExitZero(RunRanks("mismatch", 3, id));
  EXPECT_FALSE(SegmentExists(id));
}

TEST(CrossProcessTest, AKilledProcessIsReportedToTheOthersAndAbortWorks) {
  const ncclUniqueId id = NewCrossProcessId();
  std::vector<Child> children = RunRanks("death", 3, id);
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(WIFEXITED(children[static_cast<std::size_t>(r)].status) &&
                WEXITSTATUS(children[static_cast<std::size_t>(r)].status) == 0)
        << "rank " << r << ": " << Describe(children[static_cast<std::size_t>(r)]);
  }
  EXPECT_TRUE(WIFSIGNALED(children[2].status) && WTERMSIG(children[2].status) == SIGKILL)
      << Describe(children[2]);
  EXPECT_FALSE(SegmentExists(id));
}

// Exit codes of the sweep's children: 0 the fault did not fire and everything succeeded;
// kFired: it fired here (or on a peer) and was reported as an error; anything else: wrong.
constexpr int kFired = 10;

TEST(CrossProcessTest, FaultSweepOneProcesssCallsFailInTurn) {
  constexpr int kRanks = 2;
  int runs = 0;
  int fired_runs = 0;
  for (int faulty = 0; faulty < kRanks; ++faulty) {
    for (int n = 1;; ++n) {
      SCOPED_TRACE("call " + std::to_string(n) + " of rank " + std::to_string(faulty) + " fails");
      ASSERT_LT(n, 50) << "the sweep does not end";
      const ncclUniqueId id = NewCrossProcessId();
      std::vector<Child> children =
          RunRanks("sweep", kRanks, id, std::to_string(faulty) + ":" + std::to_string(n));
      ++runs;
      bool fired = false;
      for (int r = 0; r < kRanks; ++r) {
        const Child& c = children[static_cast<std::size_t>(r)];
        ASSERT_TRUE(WIFEXITED(c.status)) << "rank " << r << ": " << Describe(c);
        const int code = WEXITSTATUS(c.status);
        EXPECT_TRUE(code == 0 || code == kFired) << "rank " << r << ": " << Describe(c);
        if (r == faulty) fired = code == kFired;
      }
      EXPECT_FALSE(SegmentExists(id));
      if (!fired) break;
      ++fired_runs;
    }
  }
  std::printf("fault sweep: %d run(s), %d with the fault fired\n", runs, fired_runs);
  EXPECT_GT(fired_runs, 2 * kRanks) << "a rank's life makes more than two fakenccl calls";
}

TEST(CrossProcessTest, ASegmentLeftByAKilledInitializationIsSweptByTheNext) {
  const ncclUniqueId id = NewCrossProcessId();
  // Rank 0 of 2 alone: it creates the segment and waits for rank 1, which never comes.
  char exe[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.push_back("CUHAL_XP_ID=" + fakenccl::UniqueIdToHex(id));
  env_strings.push_back("CUHAL_XP_RANK=0");
  env_strings.push_back("CUHAL_XP_NRANKS=2");
  env_strings.push_back("CUHAL_XP_FAULT=");
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string arg = "--cross-process-child=lonely";
  char* argv[] = {exe, arg.data(), nullptr};
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, exe, nullptr, nullptr, argv, envp.data()), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!SegmentExists(id) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(SegmentExists(id)) << "rank 0 never created its segment";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // it registers under the lock
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(SegmentExists(id)) << "the killed rank's segment should still be there";
  EXPECT_GE(fakenccl::internal::StaleSegmentSweep(), 1);
  EXPECT_FALSE(SegmentExists(id));
}

// docs/driver_facts.md, "NCCL 2.28.3, one rank on one GPU": on one rank an in-place collective
// moves nothing and translates no pointer, so NULL succeeds; a communicator across processes of
// one rank (here, in this process) takes the same path as the in-process one.
TEST(CrossProcessTest, OneRankInPlaceMovesNothingSoNullSucceeds) {
  NcclBackendOptions options;
  options.nccl.cross_process = true;
  std::string unavailable;
  std::string error;
  std::unique_ptr<NcclBackend> backend = NcclBackend::Create("fake", options, &unavailable, &error);
  ASSERT_NE(backend, nullptr) << error << unavailable;
  RankThreads thread(backend->cuda(), std::vector<int>{0});
  ASSERT_TRUE(thread.ok());
  ncclUniqueId id{};
  ASSERT_EQ(backend->nccl().ncclGetUniqueId(&id), ncclSuccess);
  ASSERT_TRUE(fakenccl::internal::IsShmUniqueId(id));
  thread.RunOn(0, [&] {
    const NcclApi& nccl = backend->nccl();
    auto stream = reinterpret_cast<cudaStream_t>(thread.stream(0));
    ncclComm_t comm = nullptr;
    ASSERT_EQ(nccl.ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
    EXPECT_EQ(nccl.ncclAllReduce(nullptr, nullptr, 1024, ncclFloat32, ncclSum, comm, stream),
              ncclSuccess);
    EXPECT_EQ(nccl.ncclBroadcast(nullptr, nullptr, 1024, ncclFloat32, 0, comm, stream),
              ncclSuccess);
    EXPECT_EQ(nccl.ncclAllGather(nullptr, nullptr, 1024, ncclFloat32, comm, stream), ncclSuccess);
    EXPECT_EQ(nccl.ncclReduceScatter(nullptr, nullptr, 1024, ncclFloat32, ncclSum, comm, stream),
              ncclSuccess);
    EXPECT_EQ(backend->cuda().cuStreamSynchronize(thread.stream(0)), CUDA_SUCCESS);
    ncclResult_t async = ncclInternalError;
    EXPECT_EQ(nccl.ncclCommGetAsyncError(comm, &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess) << nccl.ncclGetLastError(comm);
    EXPECT_EQ(nccl.ncclCommDestroy(comm), ncclSuccess);
  });
  EXPECT_FALSE(SegmentExists(id));
}

// ---- The children's side ----------------------------------------------------------------------

// One rank process: its own fake driver and fake NCCL, one thread with a context and a stream.
// Failures are counted (and printed) in `failures`; the exit code says whether there were any.
class RankProcess {
 public:
  RankProcess(int wall_timeout_ms, const std::string& fault) {
    const char* hex = std::getenv("CUHAL_XP_ID");
    if (hex == nullptr || !fakenccl::UniqueIdFromHex(hex, &id_)) {
      std::fprintf(stderr, "rank process: CUHAL_XP_ID is not an ncclUniqueId in hex: %s\n",
                   hex == nullptr ? "(unset)" : hex);
      ++failures_;
    }
    rank_ = std::atoi(std::getenv("CUHAL_XP_RANK"));
    n_ = std::atoi(std::getenv("CUHAL_XP_NRANKS"));
    NcclBackendOptions options;
    options.nccl.cross_process = true;
    options.nccl.wall_timeout_ms = static_cast<std::uint64_t>(wall_timeout_ms);
    std::string unavailable;
    std::string error;
    backend_ = NcclBackend::Create("fake", options, &unavailable, &error);
    if (backend_ == nullptr) Fail("backend: " + error + unavailable);
    if (!fault.empty()) {
      if (!backend_->fake_nccl()->faults().AddRulesFromSpec(fault, &error)) Fail(error);
    }
    thread_ = std::make_unique<RankThreads>(cuda(), std::vector<int>{0});
    if (!thread_->ok()) Fail("no context or stream");
  }
  ~RankProcess() {
    thread_.reset();
    backend_.reset();
  }
  RankProcess(const RankProcess&) = delete;             // owns the fakes
  RankProcess& operator=(const RankProcess&) = delete;  // ditto

  const CudaApi& cuda() const { return backend_->cuda(); }
  const NcclApi& nccl() const { return backend_->nccl(); }
  CUstream stream() const { return thread_->stream(0); }
  cudaStream_t cs() const { return reinterpret_cast<cudaStream_t>(stream()); }
  int rank() const { return rank_; }
  int n() const { return n_; }
  const ncclUniqueId& id() const { return id_; }
  fakenccl::FakeNccl& fake() { return *backend_->fake_nccl(); }
  void On(const std::function<void()>& fn) { thread_->RunOn(0, fn); }

  void Fail(const std::string& what) {
    ++failures_;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank_, what.c_str());
  }
  void Check(bool ok, const std::string& what) {
    if (!ok) Fail(what);
  }
  int failures() const { return failures_; }

 private:
  ncclUniqueId id_{};
  int rank_ = 0;
  int n_ = 0;
  std::unique_ptr<NcclBackend> backend_;
  std::unique_ptr<RankThreads> thread_;
  int failures_ = 0;
};

// Rank q's input element i for `type` and `op`: small integers, exact in every type.
double InputValue(ncclDataType_t type, ncclRedOp_t op, int q, std::size_t i) {
  const bool is_unsigned = type == ncclUint8 || type == ncclUint32 || type == ncclUint64;
  const int k = static_cast<int>(i % 1009);
  if (op == ncclProd) {
    static const int kValues[] = {1, 2, 1};
    return kValues[(q + k) % 3] * ((!is_unsigned && (q + k) % 5 == 0) ? -1 : 1);
  }
  const int v = (q * 7 + k * 3) % 5;
  return is_unsigned ? v : v - 2;
}

std::vector<std::byte> Inputs(ncclDataType_t type, ncclRedOp_t op, int q, std::size_t count) {
  const std::size_t s = fakenccl::TypeSize(type);
  std::vector<std::byte> bytes(count * s);
  for (std::size_t i = 0; i < count; ++i) {
    fakenccl::EncodeElement(type, InputValue(type, op, q, i), bytes.data() + i * s);
  }
  return bytes;
}

fakenccl::ReduceKind KindOf(ncclRedOp_t op) {
  switch (op) {
    case ncclProd: return fakenccl::ReduceKind::kProd;
    case ncclMax: return fakenccl::ReduceKind::kMax;
    case ncclMin: return fakenccl::ReduceKind::kMin;
    case ncclAvg: return fakenccl::ReduceKind::kAvg;
    default: return fakenccl::ReduceKind::kSum;
  }
}

int RunCollectives(RankProcess& p) {
  const int n = p.n();
  const int me = p.rank();
  const int root = n - 1;
  constexpr std::size_t kCount = 70001;
  constexpr std::size_t kRing = 300001;  // floats in the ring of sends and receives
  const std::size_t max_bytes = std::max(kCount * 8 * static_cast<std::size_t>(n), kRing * 4);
  p.On([&] {
    ncclComm_t comm = nullptr;
    if (p.nccl().ncclCommInitRank(&comm, n, p.id(), me) != ncclSuccess) {
      p.Fail(std::string("ncclCommInitRank: ") + p.nccl().ncclGetLastError(nullptr));
      return;
    }
    CUdeviceptr send = 0;
    CUdeviceptr recv = 0;
    p.Check(p.cuda().cuMemAlloc(&send, max_bytes) == CUDA_SUCCESS, "cuMemAlloc");
    p.Check(p.cuda().cuMemAlloc(&recv, max_bytes) == CUDA_SUCCESS, "cuMemAlloc");
    int checked = 0;
    auto run = [&](const char* what, ncclDataType_t type, ncclRedOp_t op,
                   const std::function<ncclResult_t()>& call) {
      ncclResult_t r = call();
      p.Check(r == ncclSuccess, std::string(what) + ": " + p.nccl().ncclGetLastError(comm));
      p.Check(p.cuda().cuStreamSynchronize(p.stream()) == CUDA_SUCCESS, "cuStreamSynchronize");
      ncclResult_t async = ncclSuccess;
      r = p.nccl().ncclCommGetAsyncError(comm, &async);
      const std::string text = p.nccl().ncclGetLastError(comm);
      p.Check(r == ncclSuccess && async == ncclSuccess,
              std::string(what) + " " + fakenccl::TypeName(type) + " op " + std::to_string(op) +
                  ": async error: " + text);
    };
    auto read = [&](CUdeviceptr from, std::size_t bytes) {
      std::vector<std::byte> out(bytes);
      p.Check(p.cuda().cuMemcpyDtoH(out.data(), from, bytes) == CUDA_SUCCESS, "cuMemcpyDtoH");
      return out;
    };
    auto expect_equal = [&](const std::vector<std::byte>& got, const std::byte* want,
                            std::size_t bytes, const std::string& what) {
      ++checked;
      if (got.size() < bytes || std::memcmp(got.data(), want, bytes) != 0) {
        std::size_t at = 0;
        while (at < bytes && at < got.size() && got[at] == want[at]) ++at;
        p.Fail(what + ": differs from the reference at byte " + std::to_string(at));
      }
    };
    const std::vector<ncclDataType_t> types = {ncclFloat32, ncclInt32, ncclBfloat16, ncclFloat64};
    const std::vector<ncclRedOp_t> ops = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
    for (ncclDataType_t type : types) {
      const std::size_t s = fakenccl::TypeSize(type);
      const std::size_t block = kCount * s;
      for (ncclRedOp_t op : ops) {
        const std::string tag = std::string(fakenccl::TypeName(type)) + " op " + std::to_string(op);
        // Every rank's inputs (this rank's own, and the reference's view of the others').
        std::vector<std::vector<std::byte>> all(static_cast<std::size_t>(n));
        std::vector<std::vector<std::byte>> wide(static_cast<std::size_t>(n));
        for (int q = 0; q < n; ++q) {
          all[static_cast<std::size_t>(q)] = Inputs(type, op, q, kCount);
          wide[static_cast<std::size_t>(q)] = Inputs(type, op, q + 11, kCount * n);
        }
        std::vector<fakenccl::ScalarBytes> scalars(static_cast<std::size_t>(n));
        // AllReduce and Reduce.
        std::vector<const std::byte*> ptrs;
        for (auto& v : all) ptrs.push_back(v.data());
        std::vector<std::byte> want(block);
        fakenccl::ReduceReference(type, KindOf(op), ptrs, scalars, kCount, want.data());
        p.cuda().cuMemcpyHtoD(send, all[static_cast<std::size_t>(me)].data(), block);
        run("ncclAllReduce", type, op, [&] {
          return p.nccl().ncclAllReduce(reinterpret_cast<void*>(send), reinterpret_cast<void*>(recv),
                                        kCount, type, op, comm, p.cs());
        });
        expect_equal(read(recv, block), want.data(), block, "AllReduce " + tag);
        run("ncclReduce", type, op, [&] {
          return p.nccl().ncclReduce(reinterpret_cast<void*>(send), reinterpret_cast<void*>(send),
                                     kCount, type, op, root, comm, p.cs());  // in place
        });
        if (me == root) expect_equal(read(send, block), want.data(), block, "Reduce " + tag);
        // ReduceScatter: rank me gets the reduction of everyone's block `me`.
        std::vector<const std::byte*> wptrs;
        for (auto& v : wide) wptrs.push_back(v.data() + static_cast<std::size_t>(me) * block);
        fakenccl::ReduceReference(type, KindOf(op), wptrs, scalars, kCount, want.data());
        p.cuda().cuMemcpyHtoD(send, wide[static_cast<std::size_t>(me)].data(), block * n);
        run("ncclReduceScatter", type, op, [&] {
          return p.nccl().ncclReduceScatter(reinterpret_cast<void*>(send),
                                            reinterpret_cast<void*>(recv), kCount, type, op, comm,
                                            p.cs());
        });
        expect_equal(read(recv, block), want.data(), block, "ReduceScatter " + tag);
      }
      // Data movement (no operator).
      std::vector<std::vector<std::byte>> all(static_cast<std::size_t>(n));
      std::vector<std::vector<std::byte>> wide(static_cast<std::size_t>(n));
      for (int q = 0; q < n; ++q) {
        all[static_cast<std::size_t>(q)] = Inputs(type, ncclSum, q + 3, kCount);
        wide[static_cast<std::size_t>(q)] = Inputs(type, ncclSum, q + 5, kCount * n);
      }
      const std::string tag = fakenccl::TypeName(type);
      p.cuda().cuMemcpyHtoD(send, all[static_cast<std::size_t>(me)].data(), block);
      run("ncclBroadcast", type, ncclSum, [&] {
        return p.nccl().ncclBroadcast(reinterpret_cast<void*>(send), reinterpret_cast<void*>(recv),
                                      kCount, type, root, comm, p.cs());
      });
      expect_equal(read(recv, block), all[static_cast<std::size_t>(root)].data(), block,
                   "Broadcast " + tag);
      // AllGather in place: this rank's block sits at its place in the output.
      p.cuda().cuMemcpyHtoD(recv + static_cast<std::size_t>(me) * block,
                            all[static_cast<std::size_t>(me)].data(), block);
      run("ncclAllGather", type, ncclSum, [&] {
        return p.nccl().ncclAllGather(
            reinterpret_cast<void*>(recv + static_cast<std::size_t>(me) * block),
            reinterpret_cast<void*>(recv), kCount, type, comm, p.cs());
      });
      std::vector<std::byte> gathered;
      for (auto& v : all) gathered.insert(gathered.end(), v.begin(), v.end());
      expect_equal(read(recv, block * n), gathered.data(), block * n, "AllGather " + tag);
      run("ncclGather", type, ncclSum, [&] {
        return p.nccl().ncclGather(reinterpret_cast<void*>(send), reinterpret_cast<void*>(recv),
                                   kCount, type, root, comm, p.cs());
      });
      if (me == root) expect_equal(read(recv, block * n), gathered.data(), block * n, "Gather");
      p.cuda().cuMemcpyHtoD(send, wide[static_cast<std::size_t>(me)].data(), block * n);
      run("ncclAlltoAll", type, ncclSum, [&] {
        return p.nccl().ncclAlltoAll(reinterpret_cast<void*>(send), reinterpret_cast<void*>(recv),
                                     kCount, type, comm, p.cs());
      });
      std::vector<std::byte> a2a;
      for (auto& v : wide) {
        const std::byte* from = v.data() + static_cast<std::size_t>(me) * block;
        a2a.insert(a2a.end(), from, from + block);
      }
      expect_equal(read(recv, block * n), a2a.data(), block * n, "AlltoAll " + tag);
      run("ncclScatter", type, ncclSum, [&] {
        return p.nccl().ncclScatter(reinterpret_cast<void*>(send), reinterpret_cast<void*>(recv),
                                    kCount, type, root, comm, p.cs());
      });
      expect_equal(read(recv, block),
                   wide[static_cast<std::size_t>(root)].data() + static_cast<std::size_t>(me) * block,
                   block, "Scatter " + tag);
    }
    // A grouped ring of sends and receives larger than a mailbox, with a self send and an
    // all-reduce in the same group.
    const int next = (me + 1) % n;
    const int prev = (me + n - 1) % n;
    std::vector<std::byte> mine = Inputs(ncclFloat32, ncclSum, me + 20, kRing);
    std::vector<std::byte> theirs = Inputs(ncclFloat32, ncclSum, prev + 20, kRing);
    const std::size_t ring_bytes = kRing * 4;
    CUdeviceptr self_in = 0;
    CUdeviceptr self_out = 0;
    p.Check(p.cuda().cuMemAlloc(&self_in, 64) == CUDA_SUCCESS, "cuMemAlloc");
    p.Check(p.cuda().cuMemAlloc(&self_out, 64) == CUDA_SUCCESS, "cuMemAlloc");
    std::vector<std::byte> self_data = Inputs(ncclFloat32, ncclSum, me + 40, 16);
    p.cuda().cuMemcpyHtoD(self_in, self_data.data(), 64);
    p.cuda().cuMemcpyHtoD(send, mine.data(), ring_bytes);
    run("grouped send/recv", ncclFloat32, ncclSum, [&] {
      p.nccl().ncclGroupStart();
      p.nccl().ncclRecv(reinterpret_cast<void*>(recv), kRing, ncclFloat32, prev, comm, p.cs());
      p.nccl().ncclSend(reinterpret_cast<void*>(send), kRing, ncclFloat32, next, comm, p.cs());
      p.nccl().ncclSend(reinterpret_cast<void*>(self_in), 16, ncclFloat32, me, comm, p.cs());
      p.nccl().ncclRecv(reinterpret_cast<void*>(self_out), 16, ncclFloat32, me, comm, p.cs());
      p.nccl().ncclAllReduce(reinterpret_cast<void*>(self_in), reinterpret_cast<void*>(self_in), 16,
                             ncclFloat32, ncclMax, comm, p.cs());
      return p.nccl().ncclGroupEnd();
    });
    expect_equal(read(recv, ring_bytes), theirs.data(), ring_bytes, "ring send/recv");
    expect_equal(read(self_out, 64), self_data.data(), 64, "self send/recv");
    p.Check(p.nccl().ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
    for (CUdeviceptr ptr : {send, recv, self_in, self_out}) p.cuda().cuMemFree(ptr);
    std::printf("rank %d of %d: %d results checked against the reference\n", me, n, checked);
    p.Check(checked == (me == root ? 4 * (5 * 3 + 5) + 2 : 4 * (5 * 2 + 4) + 2),
            "unexpected number of checks: " + std::to_string(checked));
  });
  return p.failures() == 0 ? 0 : 1;
}

// On p's thread: joins the communicator and allocates a 64-byte buffer; false (a failure
// counted) when the join fails.
bool JoinWithBuffer(RankProcess& p, ncclComm_t* comm, CUdeviceptr* buf) {
  if (p.nccl().ncclCommInitRank(comm, p.n(), p.id(), p.rank()) != ncclSuccess) {
    p.Fail("ncclCommInitRank");
    return false;
  }
  p.cuda().cuMemAlloc(buf, 64);
  return true;
}

int RunMismatch(RankProcess& p) {
  p.On([&] {
    ncclComm_t comm = nullptr;
    CUdeviceptr buf = 0;
    if (!JoinWithBuffer(p, &comm, &buf)) return;
    const std::size_t count = p.rank() == p.n() - 1 ? 9 : 8;
    p.Check(p.nccl().ncclAllReduce(reinterpret_cast<void*>(buf), reinterpret_cast<void*>(buf),
                                   count, ncclFloat32, ncclSum, comm, p.cs()) == ncclSuccess,
            "ncclAllReduce itself");
    p.cuda().cuStreamSynchronize(p.stream());
    ncclResult_t async = ncclSuccess;
    for (int i = 0; i < 100000 && async == ncclSuccess; ++i) {
      p.nccl().ncclCommGetAsyncError(comm, &async);
      if (async == ncclSuccess) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const std::string text = p.nccl().ncclGetLastError(comm);
    p.Check(async == ncclInvalidUsage, "async error " + std::to_string(async) + ": " + text);
    p.Check(text.find("mismatched collective #0") != std::string::npos &&
                text.find("ncclAllReduce(count=8, ncclFloat32, ncclSum)") != std::string::npos &&
                text.find("ncclAllReduce(count=9, ncclFloat32, ncclSum)") != std::string::npos,
            "text: " + text);
    // The communicator is broken: further calls return the error; abort works.
    p.Check(p.nccl().ncclAllReduce(reinterpret_cast<void*>(buf), reinterpret_cast<void*>(buf), 8,
                                   ncclFloat32, ncclSum, comm, p.cs()) == ncclInvalidUsage,
            "a call after the error");
    p.Check(p.nccl().ncclCommAbort(comm) == ncclSuccess, "ncclCommAbort");
    p.cuda().cuMemFree(buf);
  });
  return p.failures() == 0 ? 0 : 1;
}

int RunDeath(RankProcess& p) {
  p.On([&] {
    ncclComm_t comm = nullptr;
    CUdeviceptr buf = 0;
    if (!JoinWithBuffer(p, &comm, &buf)) return;
    p.nccl().ncclAllReduce(reinterpret_cast<void*>(buf), reinterpret_cast<void*>(buf), 16,
                           ncclFloat32, ncclSum, comm, p.cs());
    p.Check(p.cuda().cuStreamSynchronize(p.stream()) == CUDA_SUCCESS, "first all-reduce");
    if (p.rank() == p.n() - 1) raise(SIGKILL);  // dies without a word
    p.nccl().ncclAllReduce(reinterpret_cast<void*>(buf), reinterpret_cast<void*>(buf), 16,
                           ncclFloat32, ncclSum, comm, p.cs());
    p.cuda().cuStreamSynchronize(p.stream());  // ends: the call fails (a no-op)
    ncclResult_t async = ncclSuccess;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (async == ncclSuccess && std::chrono::steady_clock::now() < deadline) {
      p.nccl().ncclCommGetAsyncError(comm, &async);
      if (async == ncclSuccess) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const std::string text = p.nccl().ncclGetLastError(comm);
    p.Check(async == ncclRemoteError, "async error " + std::to_string(async) + ": " + text);
    p.Check(text.find("rank " + std::to_string(p.n() - 1) + " (process ") != std::string::npos &&
                text.find("died") != std::string::npos,
            "text: " + text);
    p.Check(p.nccl().ncclCommAbort(comm) == ncclSuccess, "ncclCommAbort");
    p.cuda().cuMemFree(buf);
  });
  return p.failures() == 0 ? 0 : 1;
}

// A channel's life with the fault armed: init, all-reduce, destroy; an error anywhere makes the
// rank abort its communicator (so that its peers see it at once) and end with kFired.
int RunSweepLife(RankProcess& p) {
  bool error = false;
  p.On([&] {
    ncclComm_t comm = nullptr;
    if (p.nccl().ncclCommInitRank(&comm, p.n(), p.id(), p.rank()) != ncclSuccess) {
      error = true;
      return;
    }
    CUdeviceptr buf = 0;
    p.cuda().cuMemAlloc(&buf, 64);
    ncclResult_t r = p.nccl().ncclAllReduce(reinterpret_cast<void*>(buf),
                                            reinterpret_cast<void*>(buf), 16, ncclFloat32, ncclSum,
                                            comm, p.cs());
    p.cuda().cuStreamSynchronize(p.stream());
    ncclResult_t async = ncclSuccess;
    if (r == ncclSuccess) r = p.nccl().ncclCommGetAsyncError(comm, &async);
    if (r == ncclSuccess && async == ncclSuccess) r = p.nccl().ncclCommDestroy(comm);
    if (r != ncclSuccess || async != ncclSuccess) {
      error = true;
      p.nccl().ncclCommAbort(comm);  // may itself be the injected failure
    }
    p.cuda().cuMemFree(buf);
  });
  const bool fired = p.fake().faults().injected() > 0;
  if (fired && !error) {
    std::fprintf(stderr, "rank %d: the injected failure went unreported\n", p.rank());
    return 1;
  }
  if (p.fake().LiveObjects().communicators != 0 && !fired) return 1;
  if (error) return kFired;
  return p.failures() == 0 ? 0 : 1;
}

int RunLonely(RankProcess& p) {
  p.On([&] {
    ncclComm_t comm = nullptr;
    p.nccl().ncclCommInitRank(&comm, p.n(), p.id(), p.rank());  // killed while it waits
  });
  return 1;
}

int ChildMain(const std::string& job) {
  const char* fault = std::getenv("CUHAL_XP_FAULT");
  std::string spec;
  int faulty = -1;
  if (fault != nullptr && *fault != '\0') {
    faulty = std::atoi(fault);
    spec = std::string("*:nth:") + (std::strchr(fault, ':') + 1) + ":ncclSystemError";
  }
  const int rank = std::atoi(std::getenv("CUHAL_XP_RANK"));
  RankProcess p(job == "sweep" || job == "lonely" ? 5000 : 60000, rank == faulty ? spec : "");
  if (p.failures() != 0) return 1;
  if (job == "collectives") return RunCollectives(p);
  if (job == "mismatch") return RunMismatch(p);
  if (job == "death") return RunDeath(p);
  if (job == "sweep") return RunSweepLife(p);
  if (job == "lonely") return RunLonely(p);
  std::fprintf(stderr, "unknown job %s\n", job.c_str());
  return 2;
}

}  // namespace
}  // namespace cuhal::testing

int main(int argc, char** argv) {
  constexpr char kChild[] = "--cross-process-child=";
  if (argc == 2 && std::strncmp(argv[1], kChild, sizeof(kChild) - 1) == 0) {
    return cuhal::testing::ChildMain(argv[1] + sizeof(kChild) - 1);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
