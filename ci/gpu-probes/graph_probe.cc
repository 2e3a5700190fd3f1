// Graph and stream-capture probe for cuhal (issue 12, the fakecuda step): how the real driver
// answers stream capture (global, thread-local, relaxed), the calls refused while a stream
// captures and whether each invalidates the capture, fork/join across streams, cuStreamEndCapture
// of an invalidated or unjoined capture, capture state queries, graph instantiate/upload/launch,
// cuGraphExecUpdate's result info, the creation of every node kind cuhal records, and graph
// memory attributes and trim. A plain driver-API program (cuda.h, -lcuda), like probe.cc; see
// README.md.
//
//   graph_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                            `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   graph_probe list         the cases
//   graph_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". Values are printed in a statement after the call that
// produced them (never in the same expression).
#include <cuda.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* g_case = "?";

const char* Name(CUresult r) {
  const char* n = nullptr;
  if (cuGetErrorName(r, &n) != CUDA_SUCCESS || n == nullptr) {
    static thread_local char buf[32];
    snprintf(buf, sizeof buf, "CUresult(%d)", static_cast<int>(r));
    return buf;
  }
  return n;
}

void Say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Say(const char* fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  printf("%s: %s\n", g_case, line);
  fflush(stdout);
}

// Prints "<expr> = <CUresult>" and returns the result.
#define R(expr) Res(#expr, (expr))
CUresult Res(const char* what, CUresult r) {
  Say("%s = %s", what, Name(r));
  return r;
}

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* CaptureStatusName(CUstreamCaptureStatus s) {
  switch (s) {
    case CU_STREAM_CAPTURE_STATUS_NONE: return "NONE";
    case CU_STREAM_CAPTURE_STATUS_ACTIVE: return "ACTIVE";
    case CU_STREAM_CAPTURE_STATUS_INVALIDATED: return "INVALIDATED";
  }
  return "?";
}

const char* UpdateResultName(CUgraphExecUpdateResult r) {
  switch (r) {
    case CU_GRAPH_EXEC_UPDATE_SUCCESS: return "SUCCESS";
    case CU_GRAPH_EXEC_UPDATE_ERROR: return "ERROR";
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "ERROR_TOPOLOGY_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "ERROR_NODE_TYPE_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: return "ERROR_FUNCTION_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: return "ERROR_PARAMETERS_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: return "ERROR_NOT_SUPPORTED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
      return "ERROR_UNSUPPORTED_FUNCTION_CHANGE";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: return "ERROR_ATTRIBUTES_CHANGED";
  }
  return "?";
}

// add_u32(u32* p, u32 v): *p += v (one thread). empty(): nothing.
const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry empty() { ret; }
.visible .entry add_u32(.param .u64 p, .param .u32 v) {
  .reg .u64 %a;
  .reg .u32 %x, %y;
  ld.param.u64 %a, [p];
  ld.param.u32 %y, [v];
  cvta.to.global.u64 %a, %a;
  ld.global.u32 %x, [%a];
  add.u32 %x, %x, %y;
  st.global.u32 [%a], %x;
  ret;
}
)";

// Primary context current, the module loaded, two non-blocking streams, a 4 KiB buffer (zeroed).
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule mod = nullptr;
  CUfunction empty = nullptr, add = nullptr;
  CUstream s1 = nullptr, s2 = nullptr;
  CUdeviceptr buf = 0;
  bool Init() {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    CUresult r = cuModuleLoadData(&mod, kPtx);
    if (r != CUDA_SUCCESS) {
      Say("cuModuleLoadData = %s", Name(r));
      return false;
    }
    cuModuleGetFunction(&empty, mod, "empty");
    cuModuleGetFunction(&add, mod, "add_u32");
    cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
    cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
    if (cuMemAlloc(&buf, 4096) != CUDA_SUCCESS) return false;
    cuMemsetD8(buf, 0, 4096);
    return true;
  }
  CUresult LaunchEmpty(CUstream s) {
    return cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr);
  }
  CUresult LaunchAdd(CUstream s, CUdeviceptr p, unsigned v) {
    void* args[] = {&p, &v};
    return cuLaunchKernel(add, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
  }
  unsigned Read(CUdeviceptr p) {
    unsigned v = 0;
    CUresult r = cuMemcpyDtoH(&v, p, sizeof v);
    if (r != CUDA_SUCCESS) Say("read back: cuMemcpyDtoH = %s", Name(r));
    return v;
  }
  void CaptureState(const char* label, CUstream s) {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = cuStreamIsCapturing(s, &st);
    Say("%s: cuStreamIsCapturing = %s, status %s", label, Name(r), CaptureStatusName(st));
  }
};

CUstreamCaptureMode ParseMode(const std::string& m) {
  if (m == "thread_local") return CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
  if (m == "relaxed") return CU_STREAM_CAPTURE_MODE_RELAXED;
  return CU_STREAM_CAPTURE_MODE_GLOBAL;
}

void CUDA_CB NoopHost(void*) {}
void CUDA_CB CountHost(void* p) { ++*static_cast<int*>(p); }

// ------------------------------------------------------------------------------------------
// A. capture:<mode>: begin/end around a kernel launch, the graph it gives, and the state
// queries at every step.
int CaseCapture(const std::string& mode) {
  Base b;
  if (!b.Init()) return 1;
  b.CaptureState("before", b.s1);
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph g = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t ndeps = 99;
  CUresult r = cuStreamGetCaptureInfo(b.s1, &st, &id, &g, &deps, &edges, &ndeps);
  Say("before: cuStreamGetCaptureInfo = %s, status %s, id %llu, graph %s, deps %zu", Name(r),
      CaptureStatusName(st), static_cast<unsigned long long>(id), g ? "set" : "null", ndeps);
  R(cuStreamBeginCapture(b.s1, ParseMode(mode)));
  b.CaptureState("began", b.s1);
  st = CU_STREAM_CAPTURE_STATUS_NONE;
  r = cuStreamGetCaptureInfo(b.s1, &st, &id, &g, &deps, &edges, &ndeps);
  Say("began: cuStreamGetCaptureInfo = %s, status %s, id %s, graph %s, deps %zu", Name(r),
      CaptureStatusName(st), id ? "nonzero" : "0", g ? "set" : "null", ndeps);
  R(b.LaunchAdd(b.s1, b.buf, 5));
  r = cuStreamGetCaptureInfo(b.s1, &st, &id, &g, &deps, &edges, &ndeps);
  Say("after one launch: cuStreamGetCaptureInfo = %s, status %s, deps %zu", Name(r),
      CaptureStatusName(st), ndeps);
  // Optional outputs left null.
  r = cuStreamGetCaptureInfo(b.s1, &st, nullptr, nullptr, nullptr, nullptr, nullptr);
  Say("with null outputs: cuStreamGetCaptureInfo = %s", Name(r));
  R(cuStreamBeginCapture(b.s1, ParseMode(mode)));  // already capturing
  b.CaptureState("after a second begin", b.s1);
  b.CaptureState("legacy stream while s1 captures", nullptr);
  b.CaptureState("other stream while s1 captures", b.s2);
  CUgraph graph = nullptr;
  R(cuStreamEndCapture(b.s1, &graph));
  Say("graph = %s", graph ? "set" : "null");
  b.CaptureState("ended", b.s1);
  if (graph) {
    size_t n = 0;
    R(cuGraphGetNodes(graph, nullptr, &n));
    Say("captured nodes = %zu", n);
    Say("value before launch = %u", b.Read(b.buf));
    CUgraphExec exec = nullptr;
    R(cuGraphInstantiateWithFlags(&exec, graph, 0));
    if (exec) {
      R(cuGraphUpload(exec, b.s1));
      R(cuGraphLaunch(exec, b.s1));
      R(cuGraphLaunch(exec, b.s1));
      R(cuStreamSynchronize(b.s1));
      Say("value after two launches (expect 10) = %u", b.Read(b.buf));
      R(cuGraphExecDestroy(exec));
    }
    R(cuGraphDestroy(graph));
  }
  CUgraph none = nullptr;
  R(cuStreamEndCapture(b.s1, &none));  // not capturing
  R(cuStreamBeginCapture(nullptr, ParseMode(mode)));  // the legacy stream
  return 0;
}

// B. refused:<mode>:<call>:<same|other>: one call made while s1 captures (on the capturing
// thread, or on another thread), then whether the capture survived and what End says.
CUresult DoCall(Base& b, const std::string& call, CUevent captured_event, CUevent plain_event,
                std::vector<unsigned char>& host) {
  if (call == "stream_sync") return R(cuStreamSynchronize(b.s1));
  if (call == "stream_query") return R(cuStreamQuery(b.s1));
  if (call == "other_stream_sync") return R(cuStreamSynchronize(b.s2));
  if (call == "mem_alloc") {
    CUdeviceptr p = 0;
    CUresult r = R(cuMemAlloc(&p, 4096));
    if (r == CUDA_SUCCESS) cuMemFree(p);
    return r;
  }
  if (call == "mem_free") {
    CUdeviceptr p = 0;
    return R(cuMemFree(p));
  }
  if (call == "memcpy_htod") return R(cuMemcpyHtoD(b.buf, host.data(), 64));
  if (call == "memcpy_htod_async_other") {
    return R(cuMemcpyHtoDAsync(b.buf, host.data(), 64, b.s2));
  }
  if (call == "memcpy_htod_async_capturing") {
    return R(cuMemcpyHtoDAsync(b.buf, host.data(), 64, b.s1));
  }
  if (call == "event_sync_captured") return R(cuEventSynchronize(captured_event));
  if (call == "event_query_captured") return R(cuEventQuery(captured_event));
  if (call == "event_sync_plain") return R(cuEventSynchronize(plain_event));
  if (call == "event_query_plain") return R(cuEventQuery(plain_event));
  if (call == "ctx_sync") return R(cuCtxSynchronize());
  if (call == "legacy_launch") return R(b.LaunchEmpty(nullptr));
  if (call == "other_launch") return R(b.LaunchEmpty(b.s2));
  if (call == "host_fn") return R(cuLaunchHostFunc(b.s1, NoopHost, nullptr));
  if (call == "mem_alloc_async") {
    CUdeviceptr p = 0;
    CUresult r = R(cuMemAllocAsync(&p, 4096, b.s1));
    if (r == CUDA_SUCCESS) R(cuMemFreeAsync(p, b.s1));
    return r;
  }
  if (call == "module_load") {
    CUmodule m = nullptr;
    CUresult r = R(cuModuleLoadData(&m, kPtx));
    if (r == CUDA_SUCCESS) cuModuleUnload(m);
    return r;
  }
  Say("unknown call %s", call.c_str());
  return CUDA_ERROR_UNKNOWN;
}

int CaseRefused(const std::string& mode, const std::string& call, const std::string& where) {
  Base b;
  if (!b.Init()) return 1;
  std::vector<unsigned char> host(4096, 7);
  CUevent plain = nullptr, captured = nullptr;
  cuEventCreate(&plain, CU_EVENT_DEFAULT);
  cuEventCreate(&captured, CU_EVENT_DEFAULT);
  R(cuEventRecord(plain, b.s2));
  cuStreamSynchronize(b.s2);
  R(cuStreamBeginCapture(b.s1, ParseMode(mode)));
  R(b.LaunchAdd(b.s1, b.buf, 1));
  R(cuEventRecord(captured, b.s1));
  if (where == "other") {
    std::thread t([&] {
      cuCtxSetCurrent(b.ctx);
      DoCall(b, call, captured, plain, host);
    });
    t.join();
  } else {
    DoCall(b, call, captured, plain, host);
  }
  b.CaptureState("after the call", b.s1);
  R(b.LaunchAdd(b.s1, b.buf, 1));  // a launch after the call
  CUgraph graph = nullptr;
  R(cuStreamEndCapture(b.s1, &graph));
  Say("graph = %s", graph ? "set" : "null");
  b.CaptureState("after end", b.s1);
  if (graph) {
    size_t n = 0;
    cuGraphGetNodes(graph, nullptr, &n);
    Say("nodes = %zu", n);
    cuGraphDestroy(graph);
  }
  // Is the context still usable (no sticky error)?
  R(cuStreamSynchronize(b.s1));
  R(cuCtxSynchronize());
  return 0;
}

// C. fork_join:<joined|unjoined>: s1 captures, forks into s2 through an event, s2 launches;
// joined: s2 records an event s1 waits on before End.
int CaseForkJoin(const std::string& variant) {
  Base b;
  if (!b.Init()) return 1;
  CUevent fork = nullptr, join = nullptr;
  cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING);
  cuEventCreate(&join, CU_EVENT_DISABLE_TIMING);
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  R(b.LaunchAdd(b.s1, b.buf, 1));
  R(cuEventRecord(fork, b.s1));
  R(cuStreamWaitEvent(b.s2, fork, 0));
  b.CaptureState("s2 after waiting on the fork event", b.s2);
  cuuint64_t id1 = 0, id2 = 0;
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  cuStreamGetCaptureInfo(b.s1, &st, &id1, nullptr, nullptr, nullptr, nullptr);
  cuStreamGetCaptureInfo(b.s2, &st, &id2, nullptr, nullptr, nullptr, nullptr);
  Say("s1 and s2 share one capture id = %s", id1 == id2 && id1 != 0 ? "yes" : "no");
  R(b.LaunchAdd(b.s2, b.buf + 4, 1));
  if (variant == "joined") {
    R(cuEventRecord(join, b.s2));
    R(cuStreamWaitEvent(b.s1, join, 0));
  }
  CUgraph graph = nullptr;
  R(cuStreamEndCapture(b.s1, &graph));
  Say("graph = %s", graph ? "set" : "null");
  b.CaptureState("s1 after end", b.s1);
  b.CaptureState("s2 after end", b.s2);
  R(b.LaunchEmpty(b.s2));  // is s2 usable afterwards?
  R(cuStreamSynchronize(b.s2));
  if (variant == "unjoined") {
    // Ending on the forked stream instead.
    CUgraph g2 = nullptr;
    R(cuStreamEndCapture(b.s2, &g2));
  }
  if (graph) {
    size_t n = 0;
    cuGraphGetNodes(graph, nullptr, &n);
    Say("nodes = %zu", n);
    cuGraphDestroy(graph);
  }
  // End from the forked stream while the origin still captures.
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  R(cuEventRecord(fork, b.s1));
  R(cuStreamWaitEvent(b.s2, fork, 0));
  CUgraph g3 = nullptr;
  R(cuStreamEndCapture(b.s2, &g3));
  b.CaptureState("s1 after ending the fork", b.s1);
  CUgraph g4 = nullptr;
  R(cuStreamEndCapture(b.s1, &g4));
  if (g4) cuGraphDestroy(g4);
  return 0;
}

// D. end_wrong_thread:<mode>: cuStreamEndCapture from a thread other than the one that began.
int CaseEndWrongThread(const std::string& mode) {
  Base b;
  if (!b.Init()) return 1;
  R(cuStreamBeginCapture(b.s1, ParseMode(mode)));
  R(b.LaunchEmpty(b.s1));
  CUgraph graph = nullptr;
  std::thread t([&] {
    cuCtxSetCurrent(b.ctx);
    R(cuStreamEndCapture(b.s1, &graph));
  });
  t.join();
  b.CaptureState("after the other thread's end", b.s1);
  if (!graph) R(cuStreamEndCapture(b.s1, &graph));
  if (graph) cuGraphDestroy(graph);
  // cuThreadExchangeStreamCaptureMode: what the thread's mode was and is.
  CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
  R(cuThreadExchangeStreamCaptureMode(&m));
  Say("previous thread mode = %d", static_cast<int>(m));
  R(cuThreadExchangeStreamCaptureMode(&m));
  return 0;
}

// E. exec_update:<param|topology|function|node_type|memset_value|memcpy_target>: an explicit
// graph instantiated once, changed, and updated in place.
int CaseExecUpdate(const std::string& what) {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr p = b.buf;
  unsigned v = 3;
  void* args[] = {&p, &v};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = b.add;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CUgraph g = nullptr;
  R(cuGraphCreate(&g, 0));
  CUgraphNode k = nullptr, m = nullptr;
  R(cuGraphAddKernelNode(&k, g, nullptr, 0, &kp));
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = b.buf + 64;
  ms.value = 0x11;
  ms.elementSize = 1;
  ms.width = 16;
  ms.height = 1;
  R(cuGraphAddMemsetNode(&m, g, &k, 1, &ms, b.ctx));
  CUgraphExec exec = nullptr;
  R(cuGraphInstantiateWithFlags(&exec, g, 0));
  R(cuGraphLaunch(exec, b.s1));
  R(cuStreamSynchronize(b.s1));
  Say("value after launch 1 (expect 3) = %u", b.Read(b.buf));

  // The changed graph: a copy (cuGraphClone) with one change.
  CUgraph g2 = nullptr;
  R(cuGraphClone(&g2, g));
  CUgraphNode k2 = nullptr, m2 = nullptr;
  size_t n = 2;
  CUgraphNode nodes[2] = {};
  R(cuGraphGetNodes(g2, nodes, &n));
  for (size_t i = 0; i < n; ++i) {
    CUgraphNodeType t;
    cuGraphNodeGetType(nodes[i], &t);
    if (t == CU_GRAPH_NODE_TYPE_KERNEL) k2 = nodes[i];
    if (t == CU_GRAPH_NODE_TYPE_MEMSET) m2 = nodes[i];
  }
  CUdeviceptr p2 = b.buf + 128;
  unsigned v2 = 7;
  void* args2[] = {&p2, &v2};
  if (what == "param") {
    CUDA_KERNEL_NODE_PARAMS kp2 = kp;
    kp2.kernelParams = args2;
    R(cuGraphKernelNodeSetParams(k2, &kp2));
  } else if (what == "topology") {
    CUgraphNode extra = nullptr;
    R(cuGraphAddEmptyNode(&extra, g2, &m2, 1));
  } else if (what == "function") {
    CUDA_KERNEL_NODE_PARAMS kp2 = kp;
    kp2.func = b.empty;
    kp2.kernelParams = nullptr;
    R(cuGraphKernelNodeSetParams(k2, &kp2));
  } else if (what == "grid") {
    CUDA_KERNEL_NODE_PARAMS kp2 = kp;
    kp2.gridDimX = 2;
    R(cuGraphKernelNodeSetParams(k2, &kp2));
  } else if (what == "node_type") {
    // Same topology, the memset replaced by an empty node.
    R(cuGraphDestroyNode(m2));
    CUgraphNode e = nullptr;
    R(cuGraphAddEmptyNode(&e, g2, &k2, 1));
  } else if (what == "memset_value") {
    CUDA_MEMSET_NODE_PARAMS ms2 = ms;
    ms2.value = 0x22;
    R(cuGraphMemsetNodeSetParams(m2, &ms2));
  } else if (what == "memset_target") {
    CUDA_MEMSET_NODE_PARAMS ms2 = ms;
    ms2.dst = b.buf + 256;
    R(cuGraphMemsetNodeSetParams(m2, &ms2));
  }
  CUgraphExecUpdateResultInfo info{};
  info.result = CU_GRAPH_EXEC_UPDATE_ERROR;
  CUresult r = cuGraphExecUpdate(exec, g2, &info);
  Say("cuGraphExecUpdate = %s", Name(r));
  Say("result = %s, errorNode %s, errorFromNode %s", UpdateResultName(info.result),
      info.errorNode ? "set" : "null", info.errorFromNode ? "set" : "null");
  R(cuGraphLaunch(exec, b.s1));
  R(cuStreamSynchronize(b.s1));
  Say("after the update's launch: buf[0] = %u, buf[128] = %u", b.Read(b.buf), b.Read(b.buf + 128));
  unsigned char row[16] = {};
  cuMemcpyDtoH(row, b.buf + 256, 16);
  Say("after the update's launch: buf[256] = 0x%02x", row[0]);
  cuMemcpyDtoH(row, b.buf + 64, 16);
  Say("after the update's launch: buf[64] = 0x%02x", row[0]);
  // Setting one node of the executable graph directly.
  CUDA_KERNEL_NODE_PARAMS kp3 = kp;
  kp3.kernelParams = args2;
  R(cuGraphExecKernelNodeSetParams(exec, k, &kp3));
  R(cuGraphExecUpdate(exec, g, &info));  // back to the original
  Say("back to the original: result = %s", UpdateResultName(info.result));
  R(cuGraphExecDestroy(exec));
  R(cuGraphDestroy(g2));
  R(cuGraphDestroy(g));
  return 0;
}

// F. nodes: every node kind cuhal records, created explicitly, then instantiated and launched.
int CaseNodes() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = nullptr;
  R(cuGraphCreate(&g, 0));
  CUgraphNode empty = nullptr;
  R(cuGraphAddEmptyNode(&empty, g, nullptr, 0));
  // Kernel.
  CUdeviceptr p = b.buf;
  unsigned v = 1;
  void* args[] = {&p, &v};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = b.add;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CUgraphNode kernel = nullptr;
  R(cuGraphAddKernelNode(&kernel, g, &empty, 1, &kp));
  CUDA_KERNEL_NODE_PARAMS bad = kp;
  bad.func = nullptr;
  CUgraphNode unused = nullptr;
  Say("kernel node with a null function = %s", Name(cuGraphAddKernelNode(&unused, g, nullptr, 0, &bad)));
  bad = kp;
  bad.blockDimX = 4096;
  Say("kernel node with 4096 threads = %s", Name(cuGraphAddKernelNode(&unused, g, nullptr, 0, &bad)));
  // Memset: 1, 2, 4-byte elements, and an invalid one.
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = b.buf + 512;
  ms.value = 0xAB;
  ms.elementSize = 1;
  ms.width = 64;
  ms.height = 1;
  CUgraphNode memset_node = nullptr;
  R(cuGraphAddMemsetNode(&memset_node, g, &kernel, 1, &ms, b.ctx));
  CUDA_MEMSET_NODE_PARAMS ms3 = ms;
  ms3.elementSize = 3;
  Say("memset node with elementSize 3 = %s",
      Name(cuGraphAddMemsetNode(&unused, g, nullptr, 0, &ms3, b.ctx)));
  ms3 = ms;
  ms3.elementSize = 4;
  ms3.dst = b.buf + 513;
  Say("memset node, 4-byte elements, unaligned dst = %s",
      Name(cuGraphAddMemsetNode(&unused, g, nullptr, 0, &ms3, b.ctx)));
  ms3 = ms;
  ms3.height = 2;
  ms3.pitch = 0;
  Say("memset node, height 2, pitch 0 = %s",
      Name(cuGraphAddMemsetNode(&unused, g, nullptr, 0, &ms3, b.ctx)));
  // Memcpy: device to device (buf+512 -> buf+1024), and host to device (pageable).
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = b.buf + 512;
  cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.dstDevice = b.buf + 1024;
  cp.WidthInBytes = 64;
  cp.Height = 1;
  cp.Depth = 1;
  CUgraphNode memcpy_dd = nullptr;
  R(cuGraphAddMemcpyNode(&memcpy_dd, g, &memset_node, 1, &cp, b.ctx));
  static unsigned char host_src[64];
  memset(host_src, 0x5C, sizeof host_src);
  CUDA_MEMCPY3D hd{};
  hd.srcMemoryType = CU_MEMORYTYPE_HOST;
  hd.srcHost = host_src;
  hd.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  hd.dstDevice = b.buf + 2048;
  hd.WidthInBytes = 64;
  hd.Height = 1;
  hd.Depth = 1;
  CUgraphNode memcpy_hd = nullptr;
  R(cuGraphAddMemcpyNode(&memcpy_hd, g, &memcpy_dd, 1, &hd, b.ctx));
  CUDA_MEMCPY3D cpbad = cp;
  cpbad.WidthInBytes = 0;
  Say("memcpy node of 0 bytes = %s", Name(cuGraphAddMemcpyNode(&unused, g, nullptr, 0, &cpbad, b.ctx)));
  // Host.
  static int host_calls = 0;
  CUDA_HOST_NODE_PARAMS hp{};
  hp.fn = CountHost;
  hp.userData = &host_calls;
  CUgraphNode host = nullptr;
  R(cuGraphAddHostNode(&host, g, &memcpy_hd, 1, &hp));
  CUDA_HOST_NODE_PARAMS hpbad{};
  Say("host node with a null fn = %s", Name(cuGraphAddHostNode(&unused, g, nullptr, 0, &hpbad)));
  // Event record / wait.
  CUevent ev = nullptr;
  cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
  CUgraphNode rec = nullptr, wait = nullptr;
  R(cuGraphAddEventRecordNode(&rec, g, &host, 1, ev));
  R(cuGraphAddEventWaitNode(&wait, g, &rec, 1, ev));
  Say("event record node with a null event = %s",
      Name(cuGraphAddEventRecordNode(&unused, g, nullptr, 0, nullptr)));
  // Child graph (one kernel node).
  CUgraph child = nullptr;
  R(cuGraphCreate(&child, 0));
  CUgraphNode ck = nullptr;
  R(cuGraphAddKernelNode(&ck, child, nullptr, 0, &kp));
  CUgraphNode childnode = nullptr;
  R(cuGraphAddChildGraphNode(&childnode, g, &wait, 1, child));
  // Memory alloc/free nodes.
  CUDA_MEM_ALLOC_NODE_PARAMS ap{};
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = 0;
  ap.bytesize = 1 << 20;
  CUgraphNode alloc = nullptr;
  R(cuGraphAddMemAllocNode(&alloc, g, &childnode, 1, &ap));
  Say("alloc node dptr = %s", ap.dptr ? "set" : "0");
  CUDA_MEMSET_NODE_PARAMS msa = ms;
  msa.dst = ap.dptr;
  CUgraphNode memset_alloc = nullptr;
  R(cuGraphAddMemsetNode(&memset_alloc, g, &alloc, 1, &msa, b.ctx));
  CUgraphNode free_node = nullptr;
  R(cuGraphAddMemFreeNode(&free_node, g, &memset_alloc, 1, ap.dptr));
  Say("free node of an address no alloc node made = %s",
      Name(cuGraphAddMemFreeNode(&unused, g, nullptr, 0, b.buf)));
  Say("second free node of the same address = %s",
      Name(cuGraphAddMemFreeNode(&unused, g, &free_node, 1, ap.dptr)));
  // An alloc node inside a child graph.
  CUgraph child2 = nullptr;
  cuGraphCreate(&child2, 0);
  CUDA_MEM_ALLOC_NODE_PARAMS ap2 = ap;
  ap2.dptr = 0;
  R(cuGraphAddMemAllocNode(&unused, child2, nullptr, 0, &ap2));
  Say("child graph node whose graph has an alloc node = %s",
      Name(cuGraphAddChildGraphNode(&unused, g, nullptr, 0, child2)));
  size_t n = 0;
  R(cuGraphGetNodes(g, nullptr, &n));
  Say("nodes = %zu", n);
  // Instantiate (the invalid nodes above failed, so nothing of them is in the graph).
  CUgraphExec exec = nullptr;
  R(cuGraphInstantiateWithFlags(&exec, g, 0));
  CUgraphExec exec2 = nullptr;
  Say("second instantiation of a graph with alloc nodes = %s",
      Name(cuGraphInstantiateWithFlags(&exec2, g, 0)));
  if (exec2) cuGraphExecDestroy(exec2);
  R(cuGraphUpload(exec, b.s1));
  R(cuGraphLaunch(exec, b.s1));
  R(cuStreamSynchronize(b.s1));
  Say("kernel x2 (graph + child): buf[0] (expect 2) = %u", b.Read(b.buf));
  unsigned char row[64];
  cuMemcpyDtoH(row, b.buf + 1024, 64);
  Say("memset then memcpy: buf[1024] (expect 0xab) = 0x%02x", row[0]);
  cuMemcpyDtoH(row, b.buf + 2048, 64);
  Say("host to device memcpy: buf[2048] (expect 0x5c) = 0x%02x", row[0]);
  Say("host node calls (expect 1) = %d", host_calls);
  R(cuGraphLaunch(exec, b.s1));
  R(cuStreamSynchronize(b.s1));
  Say("after a second launch: buf[0] (expect 4) = %u, host calls = %d", b.Read(b.buf), host_calls);
  R(cuGraphExecDestroy(exec));
  R(cuGraphDestroy(g));
  R(cuGraphDestroy(child));
  R(cuGraphDestroy(child2));
  return 0;
}

// G. graph_mem: cuDeviceGetGraphMemAttribute around a graph whose alloc node has no free node
// (the memory outlives the launch until freed), and cuDeviceGraphMemTrim.
void GraphMem(CUdevice dev, const char* label) {
  const struct {
    CUgraphMem_attribute a;
    const char* n;
  } attrs[] = {{CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, "used"},
               {CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, "used_high"},
               {CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, "reserved"},
               {CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, "reserved_high"}};
  std::string line;
  for (const auto& at : attrs) {
    cuuint64_t value = 0;
    CUresult r = cuDeviceGetGraphMemAttribute(dev, at.a, &value);
    char t[128];
    snprintf(t, sizeof t, " %s=%s:%llu", at.n, Name(r), static_cast<unsigned long long>(value));
    line += t;
  }
  Say("%s:%s", label, line.c_str());
}

int CaseGraphMem() {
  Base b;
  if (!b.Init()) return 1;
  GraphMem(b.dev, "start");
  CUgraph g = nullptr;
  R(cuGraphCreate(&g, 0));
  CUDA_MEM_ALLOC_NODE_PARAMS ap{};
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = 0;
  ap.bytesize = 3 << 20;
  CUgraphNode alloc = nullptr;
  R(cuGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
  GraphMem(b.dev, "after adding an alloc node");
  CUgraphExec exec = nullptr;
  R(cuGraphInstantiateWithFlags(&exec, g, 0));
  GraphMem(b.dev, "after instantiate");
  R(cuGraphUpload(exec, b.s1));
  R(cuStreamSynchronize(b.s1));
  GraphMem(b.dev, "after upload");
  R(cuGraphLaunch(exec, b.s1));
  R(cuStreamSynchronize(b.s1));
  GraphMem(b.dev, "after launch (no free node)");
  Say("relaunch while its allocation is live = %s", Name(cuGraphLaunch(exec, b.s1)));
  R(cuStreamSynchronize(b.s1));
  R(cuMemFreeAsync(ap.dptr, b.s1));
  R(cuStreamSynchronize(b.s1));
  GraphMem(b.dev, "after cuMemFreeAsync");
  R(cuDeviceGraphMemTrim(b.dev));
  GraphMem(b.dev, "after trim with the exec alive");
  R(cuGraphExecDestroy(exec));
  R(cuDeviceGraphMemTrim(b.dev));
  GraphMem(b.dev, "after exec destroy and trim");
  cuuint64_t zero = 0;
  R(cuDeviceSetGraphMemAttribute(b.dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
  R(cuDeviceSetGraphMemAttribute(b.dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero));
  cuuint64_t one = 1;
  Say("setting used_high to 1 = %s",
      Name(cuDeviceSetGraphMemAttribute(b.dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &one)));
  Say("setting used (current) = %s",
      Name(cuDeviceSetGraphMemAttribute(b.dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero)));
  GraphMem(b.dev, "after resetting the highs");
  R(cuGraphDestroy(g));
  // Captured stream-ordered allocation: cuMemAllocAsync / cuMemAllocFromPoolAsync in a capture.
  CUmemoryPool pool = nullptr;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  R(cuMemPoolCreate(&pool, &props));
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUdeviceptr a = 0, c = 0;
  R(cuMemAllocAsync(&a, 1 << 20, b.s1));
  Say("cuMemAllocFromPoolAsync (own pool) in capture = %s",
      Name(cuMemAllocFromPoolAsync(&c, 1 << 20, pool, b.s1)));
  if (a) R(cuMemFreeAsync(a, b.s1));
  if (c) R(cuMemFreeAsync(c, b.s1));
  CUgraph cg = nullptr;
  R(cuStreamEndCapture(b.s1, &cg));
  if (cg) {
    size_t n = 0;
    cuGraphGetNodes(cg, nullptr, &n);
    Say("captured alloc/free graph nodes = %zu", n);
    CUgraphExec ce = nullptr;
    R(cuGraphInstantiateWithFlags(&ce, cg, 0));
    if (ce) {
      R(cuGraphLaunch(ce, b.s1));
      R(cuStreamSynchronize(b.s1));
      cuGraphExecDestroy(ce);
    }
    cuGraphDestroy(cg);
  }
  R(cuMemPoolDestroy(pool));
  return 0;
}

// H. capture_misc: a captured graph launched into a capturing stream, host functions and event
// records in capture, capture of a stream whose context is not current, and
// CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.
int CaseCaptureMisc() {
  Base b;
  if (!b.Init()) return 1;
  // An inner graph captured first.
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(b.LaunchAdd(b.s1, b.buf, 1));
  CUgraph inner = nullptr;
  R(cuStreamEndCapture(b.s1, &inner));
  CUgraphExec inner_exec = nullptr;
  R(cuGraphInstantiateWithFlags(&inner_exec, inner, 0));
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  Say("cuGraphLaunch into a capturing stream = %s", Name(cuGraphLaunch(inner_exec, b.s1)));
  static int calls = 0;
  R(cuLaunchHostFunc(b.s1, CountHost, &calls));
  CUevent ev = nullptr;
  cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
  R(cuEventRecord(ev, b.s1));
  R(cuMemsetD32Async(b.buf + 64, 0xdeadbeef, 4, b.s1));
  R(cuMemcpyDtoDAsync(b.buf + 128, b.buf + 64, 16, b.s1));
  R(cuMemcpyAsync(b.buf + 256, b.buf + 64, 16, b.s1));
  CUgraph outer = nullptr;
  R(cuStreamEndCapture(b.s1, &outer));
  if (outer) {
    size_t n = 0;
    cuGraphGetNodes(outer, nullptr, &n);
    Say("outer nodes = %zu", n);
    std::vector<CUgraphNode> nodes(n);
    cuGraphGetNodes(outer, nodes.data(), &n);
    std::string types;
    for (CUgraphNode node : nodes) {
      CUgraphNodeType t;
      cuGraphNodeGetType(node, &t);
      types += " " + std::to_string(static_cast<int>(t));
    }
    Say("outer node types =%s", types.c_str());
    CUgraphExec e = nullptr;
    R(cuGraphInstantiateWithFlags(&e, outer, 0));
    if (e) {
      R(cuGraphLaunch(e, b.s1));
      R(cuStreamSynchronize(b.s1));
      Say("buf[0] (expect 1) = %u, host calls (expect 1) = %d, buf[128] = 0x%x", b.Read(b.buf),
          calls, b.Read(b.buf + 128));
      cuGraphExecDestroy(e);
    }
    cuGraphDestroy(outer);
  }
  // Context not current while capturing.
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUcontext popped = nullptr;
  R(cuCtxPopCurrent(&popped));
  Say("launch with no current context into the capturing stream = %s", Name(b.LaunchEmpty(b.s1)));
  CUgraph g = nullptr;
  R(cuStreamEndCapture(b.s1, &g));
  R(cuCtxPushCurrent(b.ctx));
  if (g) cuGraphDestroy(g);
  // Instantiate flags.
  CUgraph ga = nullptr;
  cuGraphCreate(&ga, 0);
  CUgraphExec ea = nullptr;
  R(cuGraphInstantiateWithFlags(&ea, ga, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
  R(cuGraphLaunch(ea, b.s1));  // an empty graph
  R(cuStreamSynchronize(b.s1));
  R(cuGraphExecDestroy(ea));
  R(cuGraphInstantiateWithFlags(&ea, ga, 0x100));  // an undefined flag
  R(cuGraphDestroy(ga));
  R(cuGraphExecDestroy(inner_exec));
  R(cuGraphDestroy(inner));
  return 0;
}


// I. modelling: what fakecuda models without a measurement yet (docs/driver_facts.md, "Modelling
// choices" of stream capture): each line is one of them, to be compared with the fake's answer.
int CaseModelling() {
  Base b;
  if (!b.Init()) return 1;
  CUevent ev = nullptr;
  cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
  R(cuEventRecord(ev, b.s2));
  // Waiting on an event recorded outside the capture.
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuStreamWaitEvent(b.s1, ev, 0));
  b.CaptureState("after waiting on an uncaptured event", b.s1);
  CUgraph g = nullptr;
  R(cuStreamEndCapture(b.s1, &g));
  if (g) cuGraphDestroy(g), g = nullptr;
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuStreamWaitEvent(b.s1, ev, CU_EVENT_WAIT_EXTERNAL));
  R(cuStreamEndCapture(b.s1, &g));
  if (g) {
    size_t n = 0;
    cuGraphGetNodes(g, nullptr, &n);
    Say("external wait: nodes = %zu", n);
    cuGraphDestroy(g), g = nullptr;
  }
  // The legacy stream while a blocking stream captures.
  CUstream blocking = nullptr;
  cuStreamCreate(&blocking, CU_STREAM_DEFAULT);
  R(cuStreamBeginCapture(blocking, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(b.LaunchEmpty(nullptr));
  b.CaptureState("blocking stream after a legacy launch", blocking);
  R(cuStreamEndCapture(blocking, &g));
  if (g) cuGraphDestroy(g), g = nullptr;
  cuStreamDestroy(blocking);
  // A stream callback and a prefetch in capture.
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuStreamAddCallback(b.s1, [](CUstream, CUresult, void*) {}, nullptr, 0));
  b.CaptureState("after cuStreamAddCallback", b.s1);
  R(cuStreamEndCapture(b.s1, &g));
  if (g) cuGraphDestroy(g), g = nullptr;
  // Zero-byte copy and memset in capture.
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuMemcpyDtoDAsync(b.buf + 64, b.buf, 0, b.s1));
  R(cuMemsetD8Async(b.buf, 1, 0, b.s1));
  R(cuStreamEndCapture(b.s1, &g));
  if (g) {
    size_t n = 0;
    cuGraphGetNodes(g, nullptr, &n);
    Say("zero-byte copy and memset: nodes = %zu", n);
    cuGraphDestroy(g), g = nullptr;
  }
  // The capture's graph before End; GetCaptureInfo of an invalidated capture.
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph cg = nullptr;
  cuuint64_t id = 0;
  R(cuStreamGetCaptureInfo(b.s1, &st, &id, &cg, nullptr, nullptr, nullptr));
  CUgraphExec ce = nullptr;
  Say("instantiating the capturing graph = %s", Name(cuGraphInstantiateWithFlags(&ce, cg, 0)));
  if (ce) cuGraphExecDestroy(ce);
  CUgraph clone = nullptr;
  Say("cloning the capturing graph = %s", Name(cuGraphClone(&clone, cg)));
  if (clone) cuGraphDestroy(clone);
  R(cuStreamQuery(b.s1));  // invalidates
  id = 0;
  cg = nullptr;
  size_t nd = 99;
  R(cuStreamGetCaptureInfo(b.s1, &st, &id, &cg, nullptr, nullptr, &nd));
  Say("invalidated: status %s, id %s, graph %s, deps %zu", CaptureStatusName(st), id ? "set" : "0",
      cg ? "set" : "null", nd);
  R(cuStreamEndCapture(b.s1, &g));
  // Destroying the origin stream while it captures, then an unsafe call (global mode).
  CUstream doomed = nullptr;
  cuStreamCreate(&doomed, CU_STREAM_NON_BLOCKING);
  R(cuStreamBeginCapture(doomed, CU_STREAM_CAPTURE_MODE_GLOBAL));
  R(cuStreamDestroy(doomed));
  CUdeviceptr p = 0;
  R(cuMemAlloc(&p, 64));
  if (p) cuMemFree(p);
  // cuMemFreeAsync in capture of cuMemAlloc memory; captured node order.
  R(cuMemAlloc(&p, 64));
  R(cuStreamBeginCapture(b.s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuMemFreeAsync(p, b.s1));
  b.CaptureState("after freeing cuMemAlloc memory in capture", b.s1);
  R(cuStreamEndCapture(b.s1, &g));
  if (g) cuGraphDestroy(g), g = nullptr;
  cuMemFree(p);
  // Edges: a duplicate and a cycle.
  cuGraphCreate(&g, 0);
  CUgraphNode a = nullptr, c = nullptr;
  cuGraphAddEmptyNode(&a, g, nullptr, 0);
  cuGraphAddEmptyNode(&c, g, &a, 1);
  Say("duplicate edge = %s", Name(cuGraphAddDependencies(g, &a, &c, nullptr, 1)));
  Say("cycle = %s", Name(cuGraphAddDependencies(g, &c, &a, nullptr, 1)));
  cuGraphDestroy(g);
  return 0;
}

std::vector<std::string> Cases() {
  std::vector<std::string> cases;
  const char* modes[] = {"global", "thread_local", "relaxed"};
  for (const char* m : modes) cases.push_back(std::string("capture:") + m);
  const char* calls[] = {"stream_sync",          "stream_query",
                         "other_stream_sync",    "mem_alloc",
                         "mem_free",             "memcpy_htod",
                         "memcpy_htod_async_other", "memcpy_htod_async_capturing",
                         "event_sync_captured",  "event_query_captured",
                         "event_sync_plain",     "event_query_plain",
                         "ctx_sync",             "legacy_launch",
                         "other_launch",         "host_fn",
                         "mem_alloc_async",      "module_load"};
  for (const char* m : modes) {
    for (const char* c : calls) {
      for (const char* w : {"same", "other"}) {
        cases.push_back(std::string("refused:") + m + ":" + c + ":" + w);
      }
    }
  }
  cases.push_back("fork_join:joined");
  cases.push_back("fork_join:unjoined");
  for (const char* m : modes) cases.push_back(std::string("end_wrong_thread:") + m);
  for (const char* u : {"param", "topology", "function", "grid", "node_type", "memset_value",
                        "memset_target"}) {
    cases.push_back(std::string("exec_update:") + u);
  }
  cases.push_back("nodes");
  cases.push_back("graph_mem");
  cases.push_back("capture_misc");
  cases.push_back("modelling");
  return cases;
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  auto part = [&](int i) {
    size_t a = 0;
    for (int k = 0; k < i; ++k) a = c.find(':', a) + 1;
    size_t e = c.find(':', a);
    return c.substr(a, e == std::string::npos ? std::string::npos : e - a);
  };
  if (c.rfind("capture:", 0) == 0) return CaseCapture(part(1));
  if (c.rfind("refused:", 0) == 0) return CaseRefused(part(1), part(2), part(3));
  if (c.rfind("fork_join:", 0) == 0) return CaseForkJoin(part(1));
  if (c.rfind("end_wrong_thread:", 0) == 0) return CaseEndWrongThread(part(1));
  if (c.rfind("exec_update:", 0) == 0) return CaseExecUpdate(part(1));
  if (c == "nodes") return CaseNodes();
  if (c == "graph_mem") return CaseGraphMem();
  if (c == "capture_misc") return CaseCaptureMisc();
  if (c == "modelling") return CaseModelling();
  fprintf(stderr, "unknown case %s\n", c.c_str());
  return 3;
}

struct Child {
  std::string name;
  pid_t pid;
  double start;
  std::string file;
};

// Runs `cases` `jobs` at a time; each child's output goes to its own file, printed in order.
void RunAll(const char* self, const std::vector<std::string>& cases, int jobs, double timeout_s) {
  std::vector<Child> running;
  std::map<std::string, std::string> verdict, files;
  size_t next = 0;
  int seq = 0;
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && static_cast<int>(running.size()) < jobs) {
      Child ch;
      ch.name = cases[next++];
      ch.file = "/tmp/graph_probe_case_" + std::to_string(seq++) + ".txt";
      fflush(stdout);
      pid_t pid = fork();
      if (pid == 0) {
        int fd = open(ch.file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        setpgid(0, 0);
        execl(self, self, ch.name.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      ch.pid = pid;
      ch.start = NowUs();
      running.push_back(ch);
    }
    for (size_t i = 0; i < running.size();) {
      int st = 0;
      pid_t r = waitpid(running[i].pid, &st, WNOHANG);
      std::string v;
      if (r == running[i].pid) {
        char t[64];
        if (WIFSIGNALED(st))
          snprintf(t, sizeof t, "SIGNAL %d", WTERMSIG(st));
        else
          snprintf(t, sizeof t, "exit %d", WEXITSTATUS(st));
        v = t;
      } else if (NowUs() - running[i].start > timeout_s * 1e6) {
        kill(-running[i].pid, SIGKILL);
        kill(running[i].pid, SIGKILL);
        waitpid(running[i].pid, &st, 0);
        v = "HANG (killed after timeout)";
      }
      if (!v.empty()) {
        char t[64];
        snprintf(t, sizeof t, " %.2fs", (NowUs() - running[i].start) / 1e6);
        verdict[running[i].name] = v + t;
        files[running[i].name] = running[i].file;
        running.erase(running.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& c : cases) {
    FILE* f = fopen(files[c].c_str(), "r");
    char line[2048];
    while (f && fgets(line, sizeof line, f)) fputs(line, stdout);
    if (f) fclose(f);
    printf("== %s: %s\n", c.c_str(), verdict[c].c_str());
  }
  fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr, "usage: graph_probe all [jobs] | graph_probe list | graph_probe <case>\n");
    return 2;
  }
  std::string a = argv[1];
  if (a == "list") {
    for (auto& c : Cases()) printf("%s\n", c.c_str());
    return 0;
  }
  if (a == "all") {
    int jobs = argc > 2 ? atoi(argv[2]) : 8;
    RunAll(argv[0], Cases(), jobs, 10.0);
    return 0;
  }
  return RunOne(a);
}
