// Copyright 2026 The cuhal Authors.
// The race detector's catalogue (fakecuda/race/race_detector.h): small plain cuda.h programs,
// racy and race-free, each with the verdict the detector must reach. Every program runs on a
// fake driver of its own with the detector in report mode (so the calls succeed and the findings
// are counted); a few cases check fail mode and the finding's text.
//
// Patterns follow the kinds CuSan's test suite covers (github.com/ahueck/cusan, test/: event
// record/wait/sync/query, stream sync, device sync, default-stream semantics, non-blocking
// streams, host functions, memset/memcpy kinds), plus IREE's (a host wait on the wrong event, a
// semaphore signal recorded before the work it guards) and stream-ordered allocation (pool reuse,
// use on an unordered stream, frees concurrent with use).
#include <cuda.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/kernel_registry.h"
#include "fakecuda/stream_work.h"
#include "fakenccl/fake_nccl.h"

namespace {

#define OK(call) ASSERT_EQ((call), CUDA_SUCCESS) << #call

enum class Verdict { kClean, kRace, kUseAfterFree };

constexpr std::size_t kBytes = 4096;

// What every program gets: a context, two blocking streams and a non-blocking one, a device
// buffer, pinned host memory, and kernels `rw` (reads and writes its pointer's allocation,
// undeclared) and `rd` (declared to read it).
struct Program {
  CUcontext ctx = nullptr;
  CUstream s1 = nullptr, s2 = nullptr, nb = nullptr;
  CUdeviceptr buf = 0;
  void* host = nullptr;
  CUfunction rw = nullptr, rd = nullptr;
  CUmodule module = nullptr;

  void Launch(CUfunction f, CUdeviceptr p, CUstream s) {
    void* args[] = {&p};
    ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
  }
};

using Body = std::function<void(Program&)>;

struct Case {
  const char* name;
  Verdict verdict;
  Body body;
  fakecuda::SchedulePolicy policy = fakecuda::SchedulePolicy::kEager;
};

void SetUpProgram(Program& p) {
  OK(cuInit(0));
  OK(cuDevicePrimaryCtxRetain(&p.ctx, 0));
  OK(cuCtxSetCurrent(p.ctx));
  OK(cuStreamCreate(&p.s1, CU_STREAM_DEFAULT));
  OK(cuStreamCreate(&p.s2, CU_STREAM_DEFAULT));
  OK(cuStreamCreate(&p.nb, CU_STREAM_NON_BLOCKING));
  OK(cuMemAlloc(&p.buf, kBytes));
  OK(cuMemAllocHost(&p.host, kBytes));
  OK(cuModuleLoadData(&p.module, "FAKECUDA-MODULE 1\nkernel rw 8\nkernel rd 8\n"));
  OK(cuModuleGetFunction(&p.rw, p.module, "rw"));
  OK(cuModuleGetFunction(&p.rd, p.module, "rd"));
}

void TearDownProgram(Program& p) {
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  cuModuleUnload(p.module);
  cuMemFreeHost(p.host);
  cuMemFree(p.buf);
  cuStreamDestroy(p.s1);
  cuStreamDestroy(p.s2);
  cuStreamDestroy(p.nb);
  cuDevicePrimaryCtxRelease(0);
}

// Runs `c` on a fresh driver in report mode; returns its findings.
std::vector<std::string> RunProgram(const Case& c, fakecuda::RaceCheck mode = fakecuda::RaceCheck::kReport) {
  fakecuda::DriverOptions options;
  options.policy = c.policy;
  options.idle_release_us = 0;  // host functions run only when needed: deterministic orders
  options.racecheck = mode;
  fakecuda::ScopedDriver driver(options);
  fakecuda::ScopedKernel rw("rw", [](const fakecuda::KernelLaunch&) { return CUDA_SUCCESS; });
  fakecuda::KernelOptions read_only;
  read_only.param_access = {fakecuda::ParamAccess::kRead};
  fakecuda::ScopedKernel rd("rd", [](const fakecuda::KernelLaunch&) { return CUDA_SUCCESS; },
                            read_only);
  Program p;
  SetUpProgram(p);
  if (!testing::Test::HasFatalFailure()) c.body(p);
  TearDownProgram(p);
  return driver->RaceFindings();
}

std::string Show(const std::vector<std::string>& findings) {
  std::string out;
  for (const std::string& f : findings) out += "  " + f + "\n";
  return out.empty() ? "  (none)\n" : out;
}

// Host functions used by the programs.
void SetFlag(void* flag) { static_cast<std::atomic<int>*>(flag)->store(1); }
void WaitFlag(void* flag) {
  while (static_cast<std::atomic<int>*>(flag)->load() == 0) std::this_thread::yield();
}
void SpinUntil(std::atomic<int>& flag) {
  while (flag.load() == 0) std::this_thread::yield();
}

// Graph building blocks (explicit graph API).
CUgraphNode AddMemset(CUgraph g, std::vector<CUgraphNode> deps, CUdeviceptr dst,
                      unsigned char value, CUcontext ctx, std::size_t bytes = kBytes) {
  CUDA_MEMSET_NODE_PARAMS m{};
  m.dst = dst;
  m.elementSize = 1;
  m.width = bytes;
  m.height = 1;
  m.pitch = bytes;
  m.value = value;
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphAddMemsetNode(&node, g, deps.data(), deps.size(), &m, ctx), CUDA_SUCCESS);
  return node;
}

CUgraphNode AddKernel(CUgraph g, std::vector<CUgraphNode> deps, CUfunction f, CUdeviceptr* arg) {
  void* args[] = {arg};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = f;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphAddKernelNode(&node, g, deps.data(), deps.size(), &kp), CUDA_SUCCESS);
  return node;
}

CUgraphExec Instantiate(CUgraph g) {
  CUgraphExec exec = nullptr;
  EXPECT_EQ(cuGraphInstantiate(&exec, g, 0), CUDA_SUCCESS);
  return exec;
}

// One single-rank communicator on device 0 of the fake (fakenccl), for the collective cases.
struct OneRank {
  fakenccl::ScopedNccl nccl;
  ncclComm_t comm = nullptr;
  OneRank() {
    int dev = 0;
    EXPECT_EQ(ncclCommInitAll(&comm, 1, &dev), ncclSuccess);
  }
  ~OneRank() {
    EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }
};

CUdeviceptr AllocAsync(CUstream s, std::size_t bytes = kBytes) {
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAllocAsync(&p, bytes, s), CUDA_SUCCESS);
  return p;
}

const std::vector<Case>& Catalogue() {
  using fakecuda::SchedulePolicy;
  static const std::vector<Case> cases = {
      // ---- race-free ----
      {"same_stream_write_then_read", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s1));
       }},
      {"event_record_wait", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuEventRecord(e, p.s1));
         OK(cuStreamWaitEvent(p.s2, e, 0));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s2));
         OK(cuEventDestroy(e));
       }},
      {"event_record_wait_adversarial", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuEventRecord(e, p.s1));
         OK(cuStreamWaitEvent(p.s2, e, 0));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
         OK(cuEventDestroy(e));
       },
       SchedulePolicy::kAdversarial},
      {"stream_synchronize", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuStreamSynchronize(p.s1));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
       }},
      {"event_synchronize", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuEventRecord(e, p.s1));
         OK(cuEventSynchronize(e));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
         OK(cuEventDestroy(e));
       }},
      {"context_synchronize", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuCtxSynchronize());
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
       }},
      {"stream_query_loop", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         while (cuStreamQuery(p.s1) == CUDA_ERROR_NOT_READY) {
         }
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
       },
       SchedulePolicy::kAdversarial},
      {"event_query_loop", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuEventRecord(e, p.s1));
         while (cuEventQuery(e) == CUDA_ERROR_NOT_READY) {
         }
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
         OK(cuEventDestroy(e));
       },
       SchedulePolicy::kAdversarial},
      {"legacy_stream_orders_blocking_streams", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, CU_STREAM_LEGACY));
         OK(cuMemsetD8Async(p.buf, 3, kBytes, p.s2));
       }},
      {"null_stream_is_legacy", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, nullptr));
       }},
      {"disjoint_ranges_of_one_allocation", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes / 2, p.s1));
         OK(cuMemsetD8Async(p.buf + kBytes / 2, 2, kBytes / 2, p.s2));
       }},
      {"two_readers", Verdict::kClean,
       [](Program& p) {
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes / 2, p.s1));
         OK(cuMemcpyDtoHAsync(static_cast<char*>(p.host) + kBytes / 2, p.buf, kBytes / 2, p.s2));
       }},
      {"blocking_copy_waits", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.nb));
         OK(cuStreamSynchronize(p.nb));
         std::vector<char> out(kBytes);
         OK(cuMemcpyDtoH(out.data(), p.buf, kBytes));  // legacy stream, waits
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
       }},
      {"synchronous_memset_then_nonblocking", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8(p.buf, 1, kBytes));  // waits for itself
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
       }},
      {"kernels_ordered_by_event", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
         p.Launch(p.rw, p.buf, p.s1);
         OK(cuEventRecord(e, p.s1));
         OK(cuStreamWaitEvent(p.s2, e, 0));
         p.Launch(p.rw, p.buf, p.s2);
         OK(cuEventDestroy(e));
       }},
      {"declared_read_only_kernels_share", Verdict::kClean,
       [](Program& p) {
         p.Launch(p.rd, p.buf, p.s1);
         p.Launch(p.rd, p.buf, p.s2);
       }},
      {"host_function_signal_after_work", Verdict::kClean,
       [](Program& p) {
         // IREE-style semaphore, correct: the signal is queued after the work it guards.
         static std::atomic<int> signalled;
         signalled = 0;
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuLaunchHostFunc(p.s1, SetFlag, &signalled));
         SpinUntil(signalled);
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
       }},
      {"stream_callback_orders_its_stream", Verdict::kClean,
       [](Program& p) {
         static std::atomic<int> flag;
         flag = 0;
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuLaunchHostFunc(p.s1, SetFlag, &flag));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s1));
       }},
      {"per_thread_stream_same_thread", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, CU_STREAM_PER_THREAD));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, CU_STREAM_PER_THREAD));
       }},
      {"per_thread_streams_of_two_threads_synchronized", Verdict::kClean,
       [](Program& p) {
         std::thread t([&p] {
           cuCtxSetCurrent(p.ctx);
           cuMemsetD8Async(p.buf, 1, kBytes, CU_STREAM_PER_THREAD);
           cuStreamSynchronize(CU_STREAM_PER_THREAD);
         });
         t.join();
         // The host thread that synchronized was another one: only the legacy stream's
         // implicit order (per-thread streams are blocking) orders this.
         OK(cuMemsetD8Async(p.buf, 2, kBytes, CU_STREAM_LEGACY));
       }},
      {"wait_on_completed_event", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuEventRecord(e, p.s1));  // eager: complete before the wait is queued
         OK(cuStreamWaitEvent(p.nb, e, 0));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
         OK(cuEventDestroy(e));
       }},
      {"wait_on_latest_record", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuEventRecord(e, p.s1));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuEventRecord(e, p.s1));
         OK(cuStreamWaitEvent(p.s2, e, 0));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
         OK(cuEventDestroy(e));
       },
       SchedulePolicy::kAdversarial},
      {"pool_alloc_use_free_one_stream", Verdict::kClean,
       [](Program& p) {
         CUdeviceptr a = AllocAsync(p.s1);
         OK(cuMemsetD8Async(a, 1, kBytes, p.s1));
         OK(cuMemcpyDtoHAsync(p.host, a, kBytes, p.s1));
         OK(cuMemFreeAsync(a, p.s1));
       }},
      {"pool_alloc_then_event_to_other_stream", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         CUdeviceptr a = AllocAsync(p.s1);
         OK(cuEventRecord(e, p.s1));
         OK(cuStreamWaitEvent(p.nb, e, 0));
         OK(cuMemsetD8Async(a, 1, kBytes, p.nb));
         OK(cuMemFreeAsync(a, p.nb));
         OK(cuEventDestroy(e));
       }},
      {"pool_reuse_across_streams_after_sync", Verdict::kClean,
       [](Program& p) {
         CUdeviceptr a = AllocAsync(p.s1);
         OK(cuMemsetD8Async(a, 1, kBytes, p.s1));
         OK(cuMemFreeAsync(a, p.s1));
         OK(cuStreamSynchronize(p.s1));
         CUdeviceptr b = AllocAsync(p.nb);  // may reuse a's bytes
         OK(cuMemsetD8Async(b, 2, kBytes, p.nb));
         OK(cuMemFreeAsync(b, p.nb));
       }},
      {"pool_reuse_follows_event_dependency", Verdict::kClean,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         CUdeviceptr a = AllocAsync(p.s1);
         OK(cuMemsetD8Async(a, 1, kBytes, p.s1));
         OK(cuMemFreeAsync(a, p.s1));
         OK(cuEventRecord(e, p.s1));
         OK(cuStreamWaitEvent(p.nb, e, 0));
         CUdeviceptr b = AllocAsync(p.nb);
         OK(cuMemsetD8Async(b, 2, kBytes, p.nb));
         OK(cuMemFreeAsync(b, p.nb));
         OK(cuEventDestroy(e));
       },
       SchedulePolicy::kAdversarial},
      {"readers_after_a_synchronized_writer", Verdict::kClean,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuStreamSynchronize(p.s1));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, 64, p.s2));
         OK(cuMemcpyDtoHAsync(static_cast<char*>(p.host) + 64, p.buf, 64, p.s1));
       }},
      {"cumemfree_waits_for_the_device", Verdict::kClean,
       [](Program& p) {
         CUdeviceptr d;
         OK(cuMemAlloc(&d, kBytes));
         OK(cuMemsetD8Async(d, 1, kBytes, p.nb));
         OK(cuMemFree(d));  // synchronizes first
       }},
      {"stream_work_ordered", Verdict::kClean,
       [](Program& p) {
         fakecuda::StreamWork w;
         w.run = [] { return CUDA_SUCCESS; };
         w.accesses = {{p.buf, kBytes, true}};
         OK(fakecuda::EnqueueStreamWork(p.s1, w));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s1));
       }},

      // ---- graphs: the graph's edges order its nodes, stream order orders launches ----
      {"graph_chain_of_nodes", Verdict::kClean,
       [](Program& p) {
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         CUgraphNode a = AddMemset(g, {}, p.buf, 1, p.ctx);
         AddMemset(g, {a}, p.buf, 2, p.ctx);
         CUgraphExec e = Instantiate(g);
         OK(cuGraphLaunch(e, p.s1));
         OK(cuStreamSynchronize(p.s1));
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
       }},
      {"graph_diamond", Verdict::kClean,
       [](Program& p) {
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         CUgraphNode root = AddMemset(g, {}, p.buf, 1, p.ctx);
         CUgraphNode r1 = AddKernel(g, {root}, p.rd, &p.buf);
         CUgraphNode r2 = AddKernel(g, {root}, p.rd, &p.buf);
         AddMemset(g, {r1, r2}, p.buf, 2, p.ctx);
         CUgraphExec e = Instantiate(g);
         OK(cuGraphLaunch(e, p.s1));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s1));  // after the launch, same stream
         OK(cuStreamSynchronize(p.s1));
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
       }},
      {"graph_launch_then_event_to_other_stream", Verdict::kClean,
       [](Program& p) {
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         AddMemset(g, {}, p.buf, 1, p.ctx);
         CUgraphExec e = Instantiate(g);
         CUevent ev;
         OK(cuEventCreate(&ev, 0));
         OK(cuGraphLaunch(e, p.s1));
         OK(cuEventRecord(ev, p.s1));
         OK(cuStreamWaitEvent(p.nb, ev, 0));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.nb));
         OK(cuStreamSynchronize(p.nb));
         OK(cuEventDestroy(ev));
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
       }},
      {"graph_relaunched_on_another_stream", Verdict::kClean,
       [](Program& p) {
         // Launches of one executable graph are ordered (the second waits for the first).
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         AddMemset(g, {}, p.buf, 1, p.ctx);
         CUgraphExec e = Instantiate(g);
         OK(cuGraphLaunch(e, p.s1));
         OK(cuGraphLaunch(e, p.nb));
         OK(cuCtxSynchronize());
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
       }},
      {"graph_host_node_after_its_writer", Verdict::kClean,
       [](Program& p) {
         // A host node that depends on the writer signals the host; the host then reads on
         // another stream.
         static std::atomic<int> flag;
         flag = 0;
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         CUgraphNode w = AddMemset(g, {}, p.buf, 1, p.ctx, kBytes / 2);
         AddMemset(g, {}, p.buf + kBytes / 2, 3, p.ctx, kBytes / 2);  // unordered, other bytes
         CUDA_HOST_NODE_PARAMS hp{};
         hp.fn = SetFlag;
         hp.userData = &flag;
         CUgraphNode h;
         OK(cuGraphAddHostNode(&h, g, &w, 1, &hp));
         CUgraphExec e = Instantiate(g);
         OK(cuGraphLaunch(e, p.s1));
         SpinUntil(flag);
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes / 2, p.nb));
         OK(cuStreamSynchronize(p.nb));
         OK(cuStreamSynchronize(p.s1));
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
       }},
      // ---- collectives (fakenccl) on their streams ----
      {"allreduce_then_read_on_its_stream", Verdict::kClean,
       [](Program& p) {
         OneRank r;
         OK(cuMemsetD8Async(p.buf, 0, kBytes, p.s1));
         ASSERT_EQ(ncclAllReduce(reinterpret_cast<void*>(p.buf), reinterpret_cast<void*>(p.buf),
                                 kBytes / 4, ncclFloat32, ncclSum, r.comm, p.s1),
                   ncclSuccess);
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s1));
       }},
      {"allreduce_event_to_reader", Verdict::kClean,
       [](Program& p) {
         OneRank r;
         CUevent ev;
         OK(cuEventCreate(&ev, 0));
         ASSERT_EQ(ncclAllReduce(reinterpret_cast<void*>(p.buf), reinterpret_cast<void*>(p.buf),
                                 kBytes / 4, ncclFloat32, ncclSum, r.comm, p.nb),
                   ncclSuccess);
         OK(cuEventRecord(ev, p.nb));
         OK(cuStreamWaitEvent(p.s2, ev, 0));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s2));
         OK(cuStreamSynchronize(p.s2));
         OK(cuEventDestroy(ev));
       }},
      // ---- racy ----
      {"two_streams_write_write", Verdict::kRace,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
       }},
      {"write_then_unordered_read", Verdict::kRace,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s2));
       }},
      {"read_then_unordered_write", Verdict::kRace,
       [](Program& p) {
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s1));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
       }},
      {"race_although_eager_ran_it_first", Verdict::kRace,
       [](Program& p) {
         // The eager scheduler completes the first memset at once; nothing orders it.
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.nb));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s1));
       }},
      {"partial_overlap", Verdict::kRace,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes / 2 + 1, p.s1));
         OK(cuMemsetD8Async(p.buf + kBytes / 2, 2, kBytes / 2, p.s2));
       }},
      {"copy_destination_overlaps_other_streams_source", Verdict::kRace,
       [](Program& p) {
         CUdeviceptr other;
         OK(cuMemAlloc(&other, kBytes));
         OK(cuMemcpyDtoDAsync(other, p.buf, kBytes, p.s1));
         OK(cuMemcpyHtoDAsync(p.buf, p.host, kBytes, p.s2));
         OK(cuStreamSynchronize(p.s1));
         OK(cuMemFree(other));
       }},
      {"pinned_host_memory_race", Verdict::kRace,
       [](Program& p) {
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s1));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.s2));
       }},
      {"host_waits_on_wrong_event", Verdict::kRace,
       [](Program& p) {
         // IREE-style: the event the host waits for was recorded before the work.
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuEventRecord(e, p.s1));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuEventSynchronize(e));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
         OK(cuEventDestroy(e));
       }},
      {"stream_waits_on_event_recorded_before_work", Verdict::kRace,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuEventRecord(e, p.s1));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuStreamWaitEvent(p.s2, e, 0));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
         OK(cuEventDestroy(e));
       },
       SchedulePolicy::kAdversarial},
      {"semaphore_signal_before_the_work_it_guards", Verdict::kRace,
       [](Program& p) {
         // IREE-style: the host function signalling the semaphore is queued before the work.
         static std::atomic<int> signalled;
         signalled = 0;
         OK(cuLaunchHostFunc(p.s1, SetFlag, &signalled));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         SpinUntil(signalled);
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
       }},
      {"host_function_not_yet_run_orders_nothing", Verdict::kRace,
       [](Program& p) {
         // s1 is held by a host function that waits for `go`; the memset and the host function
         // that would signal its completion are queued behind it and have not run when s2's
         // memset is enqueued. (A host function that has started releases its position to
         // every host thread: the thread it wakes may enqueue before it returns.)
         static std::atomic<int> go;
         static std::atomic<int> signalled;
         go = 0;
         signalled = 0;
         OK(cuLaunchHostFunc(p.s1, WaitFlag, &go));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuLaunchHostFunc(p.s1, SetFlag, &signalled));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
         go = 1;
       }},
      {"wait_on_never_recorded_event", Verdict::kRace,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuStreamWaitEvent(p.s2, e, 0));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
         OK(cuEventDestroy(e));
       }},
      {"event_recorded_on_the_wrong_stream", Verdict::kRace,
       [](Program& p) {
         CUevent e;
         OK(cuEventCreate(&e, 0));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuEventRecord(e, p.nb));
         OK(cuStreamWaitEvent(p.s2, e, 0));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
         OK(cuEventDestroy(e));
       }},
      {"host_synchronizes_the_wrong_stream", Verdict::kRace,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.s1));
         OK(cuStreamSynchronize(p.s2));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
       }},
      {"nonblocking_then_legacy", Verdict::kRace,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.nb));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, CU_STREAM_LEGACY));
       }},
      {"legacy_then_nonblocking", Verdict::kRace,
       [](Program& p) {
         OK(cuMemsetD8Async(p.buf, 1, kBytes, CU_STREAM_LEGACY));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.nb));
       }},
      {"dtod_copy_is_asynchronous", Verdict::kRace,
       [](Program& p) {
         CUdeviceptr other;
         OK(cuMemAlloc(&other, kBytes));
         OK(cuMemcpyDtoD(other, p.buf, kBytes));  // legacy stream, does not wait
         OK(cuMemsetD8Async(other, 0, kBytes, p.nb));
         OK(cuCtxSynchronize());
         OK(cuMemFree(other));
       }},
      {"per_thread_streams_of_two_threads", Verdict::kRace,
       [](Program& p) {
         std::thread t([&p] {
           cuCtxSetCurrent(p.ctx);
           cuMemsetD8Async(p.buf, 1, kBytes, CU_STREAM_PER_THREAD);
         });
         t.join();  // a thread join orders host code, not stream work
         OK(cuMemsetD8Async(p.buf, 2, kBytes, CU_STREAM_PER_THREAD));
       }},
      {"kernels_on_two_streams", Verdict::kRace,
       [](Program& p) {
         p.Launch(p.rw, p.buf, p.s1);
         p.Launch(p.rd, p.buf, p.s2);
       }},
      {"kernel_read_vs_memset", Verdict::kRace,
       [](Program& p) {
         p.Launch(p.rd, p.buf + 128, p.s1);  // an interior pointer: the whole allocation
         OK(cuMemsetD8Async(p.buf + kBytes - 1, 2, 1, p.s2));
       }},
      {"stream_work_unordered", Verdict::kRace,
       [](Program& p) {
         fakecuda::StreamWork w;
         w.run = [] { return CUDA_SUCCESS; };
         w.accesses = {{p.buf, 16, false}};
         OK(fakecuda::EnqueueStreamWork(p.s1, w));
         OK(cuMemsetD8Async(p.buf, 2, kBytes, p.s2));
       }},
      {"pool_memory_used_on_unordered_stream", Verdict::kRace,
       [](Program& p) {
         CUdeviceptr a = AllocAsync(p.s1);
         OK(cuMemsetD8Async(a, 1, kBytes, p.nb));
         OK(cuStreamSynchronize(p.nb));
         OK(cuMemFreeAsync(a, p.nb));
       }},
      {"graph_sibling_nodes_write_write", Verdict::kRace,
       [](Program& p) {
         // Queued one after the other on the stream, but the graph orders them not at all.
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         AddMemset(g, {}, p.buf, 1, p.ctx);
         AddMemset(g, {}, p.buf, 2, p.ctx);
         CUgraphExec e = Instantiate(g);
         OK(cuGraphLaunch(e, p.s1));
         OK(cuStreamSynchronize(p.s1));
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
       }},
      {"graph_kernel_node_vs_unrelated_memset_node", Verdict::kRace,
       [](Program& p) {
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         CUgraphNode root = AddMemset(g, {}, p.buf + kBytes / 2, 0, p.ctx, kBytes / 2);
         AddKernel(g, {root}, p.rd, &p.buf);   // reads all of buf
         AddMemset(g, {root}, p.buf, 7, p.ctx, kBytes / 2);  // a sibling writes its first half
         CUgraphExec e = Instantiate(g);
         OK(cuGraphLaunch(e, p.s1));
         OK(cuStreamSynchronize(p.s1));
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
       }},
      {"graph_launch_then_unordered_reader", Verdict::kRace,
       [](Program& p) {
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         AddMemset(g, {}, p.buf, 1, p.ctx);
         CUgraphExec e = Instantiate(g);
         OK(cuGraphLaunch(e, p.s1));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.nb));
         OK(cuCtxSynchronize());
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
       }},
      {"graph_event_record_node_before_the_writer", Verdict::kRace,
       [](Program& p) {
         // The record node does not depend on the memset node: waiting for it orders nothing.
         CUevent ev;
         OK(cuEventCreate(&ev, 0));
         CUgraph g;
         OK(cuGraphCreate(&g, 0));
         CUgraphNode rec;
         OK(cuGraphAddEventRecordNode(&rec, g, nullptr, 0, ev));
         AddMemset(g, {rec}, p.buf + kBytes / 2, 1, p.ctx, kBytes / 2);
         AddMemset(g, {}, p.buf, 1, p.ctx, kBytes / 2);
         CUgraphExec e = Instantiate(g);
         OK(cuGraphLaunch(e, p.s1));
         OK(cuStreamWaitEvent(p.nb, ev, 0));
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes / 2, p.nb));
         OK(cuCtxSynchronize());
         OK(cuGraphExecDestroy(e));
         OK(cuGraphDestroy(g));
         OK(cuEventDestroy(ev));
       }},
      {"allreduce_reader_on_unordered_stream", Verdict::kRace,
       [](Program& p) {
         OneRank r;
         ASSERT_EQ(ncclAllReduce(reinterpret_cast<void*>(p.buf), reinterpret_cast<void*>(p.buf),
                                 kBytes / 4, ncclFloat32, ncclSum, r.comm, p.s1),
                   ncclSuccess);
         OK(cuMemcpyDtoHAsync(p.host, p.buf, kBytes, p.nb));
       }},
      {"allreduce_send_buffer_written_on_another_stream", Verdict::kRace,
       [](Program& p) {
         OneRank r;
         CUdeviceptr out;
         OK(cuMemAlloc(&out, kBytes));
         OK(cuMemsetD8Async(p.buf, 1, kBytes, p.nb));  // not ordered before the collective
         ASSERT_EQ(ncclAllReduce(reinterpret_cast<void*>(p.buf), reinterpret_cast<void*>(out),
                                 kBytes / 4, ncclFloat32, ncclSum, r.comm, p.s1),
                   ncclSuccess);
         OK(cuCtxSynchronize());
         OK(cuMemFree(out));
       }},
      {"pool_free_concurrent_with_use", Verdict::kUseAfterFree,
       [](Program& p) {
         CUdeviceptr a = AllocAsync(p.s1);
         OK(cuMemsetD8Async(a, 1, kBytes, p.s1));
         OK(cuMemcpyDtoHAsync(p.host, a, kBytes, p.s1));
         OK(cuStreamSynchronize(p.s1));
         OK(cuMemsetD8Async(a, 2, kBytes, p.s2));
         OK(cuMemFreeAsync(a, p.s1));  // s2 may still be writing
       }},
      {"kernel_still_reading_when_freed_on_another_stream", Verdict::kUseAfterFree,
       [](Program& p) {
         CUdeviceptr d;
         OK(cuMemAlloc(&d, kBytes));
         p.Launch(p.rd, d, p.s2);
         OK(cuMemFreeAsync(d, p.s1));
       }},
      {"device_memory_freed_async_while_other_stream_reads", Verdict::kUseAfterFree,
       [](Program& p) {
         CUdeviceptr d;
         OK(cuMemAlloc(&d, kBytes));
         OK(cuMemcpyDtoHAsync(p.host, d, kBytes, p.s2));  // eager: has run (else the fake's
         OK(cuMemFreeAsync(d, p.nb));                      // copy could read freed memory)
       }},
      {"pool_reuse_without_order_to_the_old_reader", Verdict::kUseAfterFree,
       [](Program& p) {
         // The reader on s2 of the first allocation is not ordered before its free on s1.
         CUdeviceptr a = AllocAsync(p.s1);
         OK(cuStreamSynchronize(p.s1));
         OK(cuMemcpyDtoHAsync(p.host, a, kBytes, p.s2));
         OK(cuMemFreeAsync(a, p.s1));
         CUdeviceptr b = AllocAsync(p.s1);  // same stream: reuses a's bytes at once
         OK(cuMemsetD8Async(b, 2, kBytes, p.s1));
         OK(cuMemFreeAsync(b, p.s1));
       }},
  };
  return cases;
}

class RaceCatalogue : public testing::TestWithParam<std::size_t> {};

TEST_P(RaceCatalogue, Verdict) {
  const Case& c = Catalogue()[GetParam()];
  const std::vector<std::string> findings = RunProgram(c);
  bool race = false, uaf = false;
  for (const std::string& f : findings) {
    race = race || f.rfind("race: ", 0) == 0;
    uaf = uaf || f.rfind("use-after-free: ", 0) == 0;
  }
  switch (c.verdict) {
    case Verdict::kClean:
      EXPECT_TRUE(findings.empty()) << c.name << " should be race-free; findings:\n" << Show(findings);
      break;
    case Verdict::kRace:
      EXPECT_TRUE(race && !uaf) << c.name << " should be a race; findings:\n" << Show(findings);
      break;
    case Verdict::kUseAfterFree:
      EXPECT_TRUE(uaf) << c.name << " should be a use-after-free; findings:\n" << Show(findings);
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, RaceCatalogue, testing::Range<std::size_t>(0, Catalogue().size()),
                         [](const testing::TestParamInfo<std::size_t>& param) {
                           return std::string(Catalogue()[param.param].name);
                         });

TEST(RaceCatalogueSize, AtLeastFortyPrograms) { EXPECT_GE(Catalogue().size(), 40u); }

const Case* Find(const char* name) {
  for (const Case& c : Catalogue()) {
    if (std::string(c.name) == name) return &c;
  }
  return nullptr;
}

TEST(RaceFailMode, TheSecondAccessReturnsIllegalState) {
  fakecuda::DriverOptions options;
  options.racecheck = fakecuda::RaceCheck::kFail;
  fakecuda::ScopedDriver driver(options);
  Program p;
  SetUpProgram(p);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(cuMemsetD8Async(p.buf, 1, kBytes, p.s1), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8Async(p.buf, 2, kBytes, p.s2), CUDA_ERROR_ILLEGAL_STATE);
  // The next, ordered call succeeds again.
  EXPECT_EQ(cuStreamSynchronize(p.s2), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(p.s1), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8Async(p.buf, 3, kBytes, p.s1), CUDA_SUCCESS);
  TearDownProgram(p);
  EXPECT_EQ(driver->RaceFindings().size(), 1u);
}

TEST(RaceFailMode, OffFindsNothingAndFailsNothing) {
  const Case* c = Find("two_streams_write_write");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(RunProgram(*c, fakecuda::RaceCheck::kOff).empty());
}

TEST(RaceReport, NamesBothOperationsOnce) {
  fakecuda::DriverOptions options;
  options.racecheck = fakecuda::RaceCheck::kReport;
  fakecuda::ScopedDriver driver(options);
  Program p;
  SetUpProgram(p);
  ASSERT_FALSE(HasFatalFailure());
  for (int i = 0; i < 3; ++i) {  // the same pair of call sites three times: one finding
    EXPECT_EQ(cuMemsetD8Async(p.buf, 1, kBytes, p.s1), CUDA_SUCCESS);
    EXPECT_EQ(cuMemcpyDtoHAsync(p.host, p.buf, 64, p.s2), CUDA_SUCCESS);
  }
  TearDownProgram(p);
  const std::vector<std::string> findings = driver->RaceFindings();
  ASSERT_GE(findings.size(), 1u) << Show(findings);
  const std::string& f = findings[0];
  EXPECT_NE(f.find("cuMemcpyDtoHAsync"), std::string::npos) << f;
  EXPECT_NE(f.find("cuMemsetD8Async"), std::string::npos) << f;
  EXPECT_NE(f.find("cuMemAlloc"), std::string::npos) << f;
  EXPECT_NE(f.find("no happens-before"), std::string::npos) << f;
  // The call sites: this program's frames (an anonymous-namespace function has no exported
  // name: it shows as binary+offset, for addr2line).
  EXPECT_NE(f.find("race_catalogue_test"), std::string::npos) << "call site: " << f;
  EXPECT_EQ(f.find("libasan"), std::string::npos) << f;
  // Loop iterations repeat the same call sites (the memset on s1 of the next iteration against
  // the read on s2 is a second pair).
  EXPECT_LE(findings.size(), 2u) << Show(findings);
}

}  // namespace
