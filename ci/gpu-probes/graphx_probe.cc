// Graph extras probe for cuhal: how the real driver answers the graph entry points fakecuda had
// not modelled: user objects (cuUserObjectCreate/Retain/Release, cuGraphRetain/ReleaseUserObject
// and when their destructors run), cuGraphNodeGet/SetEnabled, cuGraphExecGetFlags,
// cuGraphInstantiateWithParams, the host / event record / event wait node getters and setters
// (graph and executable graph), kernel node attributes and _v2 params,
// cuGraphChildGraphNodeGetGraph, cuGraphExecChildGraphNodeSetParams, cuGraphNodeFindInClone,
// cuGraphDebugDotPrint, the memory alloc/free node getters, cuGraphRemoveDependencies_v2, batch
// mem op nodes and (with invalid arguments only) external semaphore nodes. Valid calls, invalid
// ones, and reads back of the state they changed. A plain driver-API program (cuda.h, -lcuda),
// like graphnode_probe.cc.
//
//   graphx_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                             `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   graphx_probe list         the cases
//   graphx_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address or handle is printed, only relations, so
// that the fake's output can equal the real driver's.
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

#define R(expr) Res(#expr, (expr))
// Each line is numbered within its case ("[3] ..."), so that repeated calls stay apart.
int g_seq = 0;
CUresult Res(const char* what, CUresult r) {
  Say("[%d] %s = %s", ++g_seq, what, Name(r));
  return r;
}

const char* YesNo(bool b) { return b ? "yes" : "no"; }

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// empty(); add_u32(u32* p, u32 v): *p += v (one thread).
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

// User object destructors: how many ran, and whether each ran on the thread that dropped the
// last reference (g_drop_thread, set by the case just before it drops it).
std::atomic<int> g_destroyed{0};
std::atomic<int> g_on_caller{0};
std::atomic<int> g_on_other{0};
// Atomic: written by the case, read by destructors on the driver's threads.
std::atomic<pthread_t> g_drop_thread{};
void Destroy(void* data) {
  if (data != nullptr) ++*static_cast<std::atomic<int>*>(data);
  ++g_destroyed;
  if (pthread_equal(pthread_self(), g_drop_thread.load())) {
    ++g_on_caller;
  } else {
    ++g_on_other;
  }
}

// Waits up to `ms` for g_destroyed to reach `want`; returns the count.
int WaitDestroyed(int want, int ms = 2000) {
  for (int i = 0; i < ms && g_destroyed.load() < want; ++i) SleepMs(1);
  return g_destroyed.load();
}

std::atomic<int> g_host_a{0}, g_host_b{0};
void HostA(void*) { ++g_host_a; }
void HostB(void*) { ++g_host_b; }

// Primary context current, the module, a non-blocking stream, a 4 KiB device buffer (zeroed).
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule mod = nullptr;
  CUfunction empty = nullptr, add = nullptr;
  CUstream s = nullptr;
  CUdeviceptr buf = 0;
  bool Init() {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    CUresult r = cuModuleLoadData(&mod, kPtx);
    if (r != CUDA_SUCCESS) {
      Say("setup: cuModuleLoadData = %s", Name(r));
      return false;
    }
    cuModuleGetFunction(&empty, mod, "empty");
    cuModuleGetFunction(&add, mod, "add_u32");
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (cuMemAlloc(&buf, 4096) != CUDA_SUCCESS) return false;
    cuMemsetD8(buf, 0, 4096);
    return true;
  }
  unsigned Read(size_t off = 0) {
    unsigned v = 0;
    CUresult r = cuMemcpyDtoH(&v, buf + off, sizeof v);
    if (r != CUDA_SUCCESS) Say("read back: cuMemcpyDtoH = %s", Name(r));
    return v;
  }
  void Zero() { cuMemsetD8(buf, 0, 4096); }
  CUgraph Graph() {
    CUgraph g = nullptr;
    CUresult r = cuGraphCreate(&g, 0);
    if (r != CUDA_SUCCESS) Say("setup: cuGraphCreate = %s", Name(r));
    return g;
  }
  // add_u32(buf + off, v): `a` must outlive the node's creation.
  struct AddArgs {
    CUdeviceptr p;
    unsigned v;
    void* args[2];
  };
  CUDA_KERNEL_NODE_PARAMS KParams(AddArgs* a, size_t off, unsigned v) {
    a->p = buf + off;
    a->v = v;
    a->args[0] = &a->p;
    a->args[1] = &a->v;
    CUDA_KERNEL_NODE_PARAMS k;
    memset(&k, 0, sizeof k);
    k.func = add;
    k.gridDimX = k.gridDimY = k.gridDimZ = 1;
    k.blockDimX = k.blockDimY = k.blockDimZ = 1;
    k.kernelParams = a->args;
    return k;
  }
  CUgraphNode Kernel(CUgraph g, size_t off, unsigned v, CUgraphNode dep = nullptr) {
    AddArgs a;
    CUDA_KERNEL_NODE_PARAMS k = KParams(&a, off, v);
    CUgraphNode n = nullptr;
    CUresult r = cuGraphAddKernelNode(&n, g, dep ? &dep : nullptr, dep ? 1 : 0, &k);
    if (r != CUDA_SUCCESS) Say("setup: cuGraphAddKernelNode = %s", Name(r));
    return n;
  }
  CUgraphNode Empty(CUgraph g, CUgraphNode dep = nullptr) {
    CUgraphNode n = nullptr;
    CUresult r = cuGraphAddEmptyNode(&n, g, dep ? &dep : nullptr, dep ? 1 : 0);
    if (r != CUDA_SUCCESS) Say("setup: cuGraphAddEmptyNode = %s", Name(r));
    return n;
  }
  CUgraphNode Memset(CUgraph g, size_t off, unsigned value) {
    CUDA_MEMSET_NODE_PARAMS m;
    memset(&m, 0, sizeof m);
    m.dst = buf + off;
    m.value = value;
    m.elementSize = 4;
    m.width = 1;
    m.height = 1;
    CUgraphNode n = nullptr;
    CUresult r = cuGraphAddMemsetNode(&n, g, nullptr, 0, &m, ctx);
    if (r != CUDA_SUCCESS) Say("setup: cuGraphAddMemsetNode = %s", Name(r));
    return n;
  }
  CUgraphNode Memcpy(CUgraph g, size_t dst_off, size_t src_off, size_t bytes) {
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = buf + src_off;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = buf + dst_off;
    c.WidthInBytes = bytes;
    c.Height = 1;
    c.Depth = 1;
    CUgraphNode n = nullptr;
    CUresult r = cuGraphAddMemcpyNode(&n, g, nullptr, 0, &c, ctx);
    if (r != CUDA_SUCCESS) Say("setup: cuGraphAddMemcpyNode = %s", Name(r));
    return n;
  }
  CUgraphNode Host(CUgraph g, CUhostFn fn, void* data = nullptr) {
    CUDA_HOST_NODE_PARAMS h{fn, data};
    CUgraphNode n = nullptr;
    CUresult r = cuGraphAddHostNode(&n, g, nullptr, 0, &h);
    if (r != CUDA_SUCCESS) Say("setup: cuGraphAddHostNode = %s", Name(r));
    return n;
  }
  CUgraphExec Inst(CUgraph g, unsigned long long flags = 0) {
    CUgraphExec e = nullptr;
    CUresult r = cuGraphInstantiateWithFlags(&e, g, flags);
    if (r != CUDA_SUCCESS) Say("setup: instantiate = %s", Name(r));
    return e;
  }
  // Launches and synchronizes; prints both results (and the value at buf + off when off >= 0).
  void Launch(CUgraphExec e, const char* label, long off = 0) {
    CUresult l = cuGraphLaunch(e, s);
    CUresult y = cuStreamSynchronize(s);
    if (off >= 0) {
      Say("%s: launch = %s, sync = %s, value = %u", label, Name(l), Name(y),
          Read(static_cast<size_t>(off)));
    } else {
      Say("%s: launch = %s, sync = %s", label, Name(l), Name(y));
    }
  }
  size_t NodeCount(CUgraph g) {
    size_t n = 0;
    CUresult r = cuGraphGetNodes(g, nullptr, &n);
    if (r != CUDA_SUCCESS) Say("cuGraphGetNodes = %s", Name(r));
    return n;
  }
  int Type(CUgraphNode n) {
    CUgraphNodeType t = static_cast<CUgraphNodeType>(-1);
    CUresult r = cuGraphNodeGetType(n, &t);
    if (r != CUDA_SUCCESS) Say("cuGraphNodeGetType = %s", Name(r));
    return static_cast<int>(t);
  }
};

const CUgraphNode kGarbageNode = reinterpret_cast<CUgraphNode>(0x5a5a5a50);
const CUgraph kGarbageGraph = reinterpret_cast<CUgraph>(0x5a5a5a60);
const CUgraphExec kGarbageExec = reinterpret_cast<CUgraphExec>(0x5a5a5a70);
const CUuserObject kGarbageObject = reinterpret_cast<CUuserObject>(0x5a5a5a80);
const CUevent kGarbageEvent = reinterpret_cast<CUevent>(0x5a5a5a90);

// ---------------------------------------------------------------------------------------------
// preinit / noctx: before cuInit, and with no current context.

int CasePreinit() {
  CUuserObject o = nullptr;
  std::atomic<int> n{0};
  R(cuUserObjectCreate(&o, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  R(cuUserObjectRetain(o, 1));
  R(cuUserObjectRelease(o, 1));
  R(cuGraphRetainUserObject(nullptr, o, 1, 0));
  R(cuGraphReleaseUserObject(nullptr, o, 1));
  unsigned en = 7;
  R(cuGraphNodeGetEnabled(nullptr, nullptr, &en));
  R(cuGraphNodeSetEnabled(nullptr, nullptr, 1));
  cuuint64_t fl = 7;
  R(cuGraphExecGetFlags(nullptr, &fl));
  CUDA_GRAPH_INSTANTIATE_PARAMS ip;
  memset(&ip, 0, sizeof ip);
  CUgraphExec e = nullptr;
  R(cuGraphInstantiateWithParams(&e, nullptr, &ip));
  CUDA_HOST_NODE_PARAMS hp{};
  R(cuGraphHostNodeGetParams(nullptr, &hp));
  CUevent ev = nullptr;
  R(cuGraphEventRecordNodeGetEvent(nullptr, &ev));
  CUgraph cg = nullptr;
  R(cuGraphChildGraphNodeGetGraph(nullptr, &cg));
  CUgraphNode fn = nullptr;
  R(cuGraphNodeFindInClone(&fn, nullptr, nullptr));
  R(cuGraphDebugDotPrint(nullptr, "/tmp/graphx_preinit.dot", 0));
  CUkernelNodeAttrValue v;
  R(cuGraphKernelNodeGetAttribute(nullptr, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  CUDA_MEM_ALLOC_NODE_PARAMS mp;
  R(cuGraphMemAllocNodeGetParams(nullptr, &mp));
  CUDA_BATCH_MEM_OP_NODE_PARAMS bp;
  memset(&bp, 0, sizeof bp);
  CUgraphNode bn = nullptr;
  R(cuGraphAddBatchMemOpNode(&bn, nullptr, nullptr, 0, &bp));
  Say("destructor ran = %d", n.load());
  return 0;
}

int CaseNoctx() {
  R(cuInit(0));
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext cur = reinterpret_cast<CUcontext>(0x1);
  cuCtxGetCurrent(&cur);
  Say("current context null = %s", YesNo(cur == nullptr));
  std::atomic<int> n{0};
  CUuserObject o = nullptr;
  R(cuUserObjectCreate(&o, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CUgraph g = nullptr;
  R(cuGraphCreate(&g, 0));
  if (o != nullptr && g != nullptr) R(cuGraphRetainUserObject(g, o, 1, 0));
  if (o != nullptr && g != nullptr) R(cuGraphReleaseUserObject(g, o, 1));
  CUgraphNode h = nullptr;
  CUDA_HOST_NODE_PARAMS hp{HostA, nullptr};
  if (g != nullptr) R(cuGraphAddHostNode(&h, g, nullptr, 0, &hp));
  CUDA_HOST_NODE_PARAMS got{};
  if (h != nullptr) R(cuGraphHostNodeGetParams(h, &got));
  Say("host params: fn = HostA %s", YesNo(got.fn == HostA));
  CUgraphExec e = nullptr;
  CUDA_GRAPH_INSTANTIATE_PARAMS ip;
  memset(&ip, 0, sizeof ip);
  ip.result_out = static_cast<CUgraphInstantiateResult>(77);
  if (g != nullptr) R(cuGraphInstantiateWithParams(&e, g, &ip));
  Say("result_out = %d", static_cast<int>(ip.result_out));
  cuuint64_t fl = 77;
  if (e != nullptr) R(cuGraphExecGetFlags(e, &fl));
  Say("flags = %llu", static_cast<unsigned long long>(fl));
  if (e != nullptr) R(cuGraphExecDestroy(e));
  CUgraph clone = nullptr;
  if (g != nullptr) R(cuGraphClone(&clone, g));
  CUgraphNode found = nullptr;
  if (clone != nullptr) R(cuGraphNodeFindInClone(&found, h, clone));
  Say("found a node = %s", YesNo(found != nullptr));
  std::string path = "/tmp/graphx_noctx_" + std::to_string(getpid()) + ".dot";
  if (g != nullptr) R(cuGraphDebugDotPrint(g, path.c_str(), 0));
  struct stat st;
  Say("dot file exists = %s", YesNo(stat(path.c_str(), &st) == 0));
  unlink(path.c_str());
  if (clone != nullptr) R(cuGraphDestroy(clone));
  if (g != nullptr) R(cuGraphDestroy(g));
  g_drop_thread.store(pthread_self());
  if (o != nullptr) R(cuUserObjectRelease(o, 1));
  Say("destructor ran = %d", WaitDestroyed(1));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// userobj:*: user objects.

int CaseUserobjCreate() {
  Base b;
  if (!b.Init()) return 1;
  std::atomic<int> n{0};
  CUuserObject keep = kGarbageObject;
  CUuserObject o = keep;
  R(cuUserObjectCreate(&o, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  Say("object set = %s", YesNo(o != nullptr && o != keep));
  CUuserObject x = keep;
  R(cuUserObjectCreate(nullptr, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  R(cuUserObjectCreate(&x, &n, Destroy, 1, 0));
  Say("flags 0: out untouched = %s", YesNo(x == keep));
  R(cuUserObjectCreate(&x, &n, Destroy, 1, 2));
  R(cuUserObjectCreate(&x, &n, Destroy, 1, 3));
  R(cuUserObjectCreate(&x, &n, nullptr, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  Say("null destroy: out untouched = %s", YesNo(x == keep));
  R(cuUserObjectCreate(&x, &n, Destroy, 0, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  Say("refcount 0: out untouched = %s", YesNo(x == keep));
  R(cuUserObjectCreate(&x, &n, Destroy, static_cast<unsigned>(INT_MAX) + 1u,
                       CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  Say("refcount INT_MAX+1: out untouched = %s", YesNo(x == keep));
  // A null ptr is allowed (the destructor gets it).
  CUuserObject y = nullptr;
  R(cuUserObjectCreate(&y, nullptr, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  // INT_MAX initial references.
  CUuserObject big = nullptr;
  R(cuUserObjectCreate(&big, &n, Destroy, INT_MAX, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  Say("destructors ran so far = %d", g_destroyed.load());
  g_drop_thread.store(pthread_self());
  if (y != nullptr) R(cuUserObjectRelease(y, 1));
  if (big != nullptr) R(cuUserObjectRelease(big, INT_MAX));
  if (o != nullptr) R(cuUserObjectRelease(o, 1));
  Say("destructors ran = %d (want 3), counted by ptr = %d", WaitDestroyed(3), n.load());
  return 0;
}

int CaseUserobjRefcount() {
  Base b;
  if (!b.Init()) return 1;
  std::atomic<int> n{0};
  CUuserObject o = nullptr;
  R(cuUserObjectCreate(&o, &n, Destroy, 2, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  R(cuUserObjectRetain(o, 3));  // 5
  R(cuUserObjectRetain(o, 0));
  R(cuUserObjectRetain(o, static_cast<unsigned>(INT_MAX) + 1u));
  R(cuUserObjectRetain(nullptr, 1));
  R(cuUserObjectRelease(o, 0));
  R(cuUserObjectRelease(o, static_cast<unsigned>(INT_MAX) + 1u));
  R(cuUserObjectRelease(nullptr, 1));
  R(cuUserObjectRelease(o, 4));  // 1
  SleepMs(50);
  Say("after releasing 4 of 5: destructor ran = %d", g_destroyed.load());
  g_drop_thread.store(pthread_self());
  R(cuUserObjectRelease(o, 1));  // 0
  Say("right after the last release: destructor ran = %d", g_destroyed.load());
  Say("after waiting: destructor ran = %d, on the releasing thread = %d, on another = %d",
      WaitDestroyed(1), g_on_caller.load(), g_on_other.load());
  // Releasing more than held (the object must stay alive: one reference kept).
  CUuserObject o2 = nullptr;
  R(cuUserObjectCreate(&o2, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  R(cuUserObjectRetain(o2, INT_MAX - 1));  // INT_MAX
  R(cuUserObjectRetain(o2, 1));            // overflow past INT_MAX?
  g_drop_thread.store(pthread_self());
  R(cuUserObjectRelease(o2, INT_MAX));
  SleepMs(50);
  Say("after releasing INT_MAX: destructors ran = %d", g_destroyed.load());
  if (g_destroyed.load() < 2) R(cuUserObjectRelease(o2, 1));
  Say("destructors ran = %d", WaitDestroyed(2));
  return 0;
}

int CaseUserobjGraph() {
  Base b;
  if (!b.Init()) return 1;
  std::atomic<int> n{0};
  CUuserObject o = nullptr;
  R(cuUserObjectCreate(&o, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CUgraph g = b.Graph();
  R(cuGraphRetainUserObject(g, o, 1, 0));
  R(cuGraphRetainUserObject(g, o, 2, 0));
  R(cuGraphRetainUserObject(g, o, 0, 0));
  R(cuGraphRetainUserObject(g, o, static_cast<unsigned>(INT_MAX) + 1u, 0));
  R(cuGraphRetainUserObject(g, o, 1, 2));
  R(cuGraphRetainUserObject(g, o, 1, 0xffffffffu));
  R(cuGraphRetainUserObject(g, nullptr, 1, 0));
  R(cuGraphRetainUserObject(nullptr, o, 1, 0));
  R(cuGraphReleaseUserObject(g, o, 0));
  R(cuGraphReleaseUserObject(g, o, static_cast<unsigned>(INT_MAX) + 1u));
  R(cuGraphReleaseUserObject(g, nullptr, 1));
  R(cuGraphReleaseUserObject(nullptr, o, 1));
  R(cuGraphReleaseUserObject(g, o, 4));  // more than the graph holds (3)
  R(cuGraphReleaseUserObject(g, o, 2));  // graph holds 1
  // An object the graph holds no reference to.
  CUuserObject o2 = nullptr;
  R(cuUserObjectCreate(&o2, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  R(cuGraphReleaseUserObject(g, o2, 1));
  // The caller's reference moved to the graph.
  R(cuGraphRetainUserObject(g, o2, 1, CU_GRAPH_USER_OBJECT_MOVE));
  g_drop_thread.store(pthread_self());
  R(cuUserObjectRelease(o, 1));  // the caller's; the graph still holds 1
  SleepMs(50);
  Say("graph holds both: destructors ran = %d", g_destroyed.load());
  R(cuGraphReleaseUserObject(g, o, 1));  // o's last reference
  Say("right after the graph's last release of o: destructors ran = %d", g_destroyed.load());
  Say("after waiting: destructors ran = %d, on the releasing thread = %d, on another = %d",
      WaitDestroyed(1), g_on_caller.load(), g_on_other.load());
  R(cuGraphDestroy(g));  // o2's last reference
  Say("right after cuGraphDestroy: destructors ran = %d", g_destroyed.load());
  Say("after waiting: destructors ran = %d, on the releasing thread = %d, on another = %d",
      WaitDestroyed(2), g_on_caller.load(), g_on_other.load());
  return 0;
}

int CaseUserobjExec() {
  Base b;
  if (!b.Init()) return 1;
  std::atomic<int> n{0};
  CUuserObject o = nullptr;
  R(cuUserObjectCreate(&o, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CUgraph g = b.Graph();
  b.Kernel(g, 0, 1);
  R(cuGraphRetainUserObject(g, o, 1, CU_GRAPH_USER_OBJECT_MOVE));
  CUgraphExec e = b.Inst(g);
  g_drop_thread.store(pthread_self());
  R(cuGraphDestroy(g));
  SleepMs(100);
  Say("graph destroyed, exec alive: destructors ran = %d", g_destroyed.load());
  // Release the graph-owned reference through a destroyed graph? No: the exec holds its own.
  b.Launch(e, "launch");
  R(cuGraphExecDestroy(e));
  Say("right after cuGraphExecDestroy: destructors ran = %d", g_destroyed.load());
  Say("after waiting: destructors ran = %d, on the releasing thread = %d, on another = %d",
      WaitDestroyed(1), g_on_caller.load(), g_on_other.load());
  // Exec destroyed while a launch is queued behind a host node that blocks for 300 ms.
  CUuserObject o2 = nullptr;
  R(cuUserObjectCreate(&o2, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CUgraph g2 = b.Graph();
  b.Host(g2, [](void*) { SleepMs(300); });
  R(cuGraphRetainUserObject(g2, o2, 1, CU_GRAPH_USER_OBJECT_MOVE));
  CUgraphExec e2 = b.Inst(g2);
  R(cuGraphDestroy(g2));
  R(cuGraphLaunch(e2, b.s));
  R(cuGraphExecDestroy(e2));
  SleepMs(50);
  Say("exec destroyed, launch running: destructors ran = %d", g_destroyed.load());
  R(cuStreamSynchronize(b.s));
  Say("after sync and waiting: destructors ran = %d", WaitDestroyed(2));
  return 0;
}

int CaseUserobjClone() {
  Base b;
  if (!b.Init()) return 1;
  std::atomic<int> n{0};
  CUuserObject o = nullptr;
  R(cuUserObjectCreate(&o, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CUgraph g = b.Graph();
  b.Empty(g);
  R(cuGraphRetainUserObject(g, o, 2, CU_GRAPH_USER_OBJECT_MOVE));  // moves 2 (caller owns 1)
  CUgraph c = nullptr;
  R(cuGraphClone(&c, g));
  R(cuGraphDestroy(g));
  SleepMs(100);
  Say("original destroyed, clone alive: destructors ran = %d", g_destroyed.load());
  R(cuGraphReleaseUserObject(c, o, 2));  // the clone's copies of the references
  SleepMs(100);
  Say("clone released 2: destructors ran = %d", g_destroyed.load());
  R(cuGraphDestroy(c));
  Say("after clone destroyed and waiting: destructors ran = %d", WaitDestroyed(1, 500));
  // A child graph node copies its graph: does it take the child's references?
  CUuserObject o2 = nullptr;
  R(cuUserObjectCreate(&o2, &n, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CUgraph child = b.Graph();
  b.Empty(child);
  R(cuGraphRetainUserObject(child, o2, 1, CU_GRAPH_USER_OBJECT_MOVE));
  CUgraph parent = b.Graph();
  CUgraphNode cn = nullptr;
  R(cuGraphAddChildGraphNode(&cn, parent, nullptr, 0, child));
  int before = g_destroyed.load();
  R(cuGraphDestroy(child));
  SleepMs(100);
  Say("child graph destroyed, parent alive: new destructors = %d", g_destroyed.load() - before);
  R(cuGraphDestroy(parent));
  SleepMs(100);
  Say("parent destroyed: new destructors = %d", g_destroyed.load() - before);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// enabled:*: cuGraphNodeGet/SetEnabled.

int CaseEnabledKernel() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode k = b.Kernel(g, 0, 1);
  CUgraphNode ms = b.Memset(g, 64, 5);
  CUgraphNode mc = b.Memcpy(g, 128, 256, 4);
  cuMemsetD32(b.buf + 256, 9, 1);
  CUgraphExec e = b.Inst(g);
  unsigned en = 7;
  R(cuGraphNodeGetEnabled(e, k, &en));
  Say("kernel enabled = %u", en);
  R(cuGraphNodeSetEnabled(e, k, 0));
  en = 7;
  R(cuGraphNodeGetEnabled(e, k, &en));
  Say("kernel enabled after disable = %u", en);
  R(cuGraphNodeSetEnabled(e, ms, 0));
  R(cuGraphNodeSetEnabled(e, mc, 0));
  en = 7;
  R(cuGraphNodeGetEnabled(e, ms, &en));
  Say("memset enabled = %u", en);
  en = 7;
  R(cuGraphNodeGetEnabled(e, mc, &en));
  Say("memcpy enabled = %u", en);
  b.Launch(e, "all disabled", 0);
  Say("memset target = %u, memcpy target = %u", b.Read(64), b.Read(128));
  R(cuGraphNodeSetEnabled(e, k, 2));
  en = 7;
  R(cuGraphNodeGetEnabled(e, k, &en));
  Say("kernel enabled after set 2 = %u", en);
  R(cuGraphNodeSetEnabled(e, ms, 1));
  R(cuGraphNodeSetEnabled(e, mc, 1));
  b.Launch(e, "all enabled", 0);
  Say("memset target = %u, memcpy target = %u", b.Read(64), b.Read(128));
  // The graph's own node is not affected; a new instantiation starts enabled.
  R(cuGraphNodeSetEnabled(e, k, 0));
  CUgraphExec e2 = b.Inst(g);
  en = 7;
  R(cuGraphNodeGetEnabled(e2, k, &en));
  Say("second exec: kernel enabled = %u", en);
  // cuGraphExecUpdate keeps (or resets) the disabled state?
  CUgraphExecUpdateResultInfo info;
  memset(&info, 0, sizeof info);
  R(cuGraphExecUpdate(e, g, &info));
  en = 7;
  R(cuGraphNodeGetEnabled(e, k, &en));
  Say("after cuGraphExecUpdate: kernel enabled = %u", en);
  // A node removed from the graph after instantiation.
  R(cuGraphDestroyNode(ms));
  en = 7;
  R(cuGraphNodeGetEnabled(e, ms, &en));
  Say("destroyed node: enabled = %u", en);
  R(cuGraphNodeSetEnabled(e, ms, 1));
  R(cuGraphExecDestroy(e2));
  R(cuGraphExecDestroy(e));
  R(cuGraphDestroy(g));
  return 0;
}

int CaseEnabledTypes() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode em = b.Empty(g);
  CUgraphNode h = b.Host(g, HostA);
  CUevent ev = nullptr;
  cuEventCreate(&ev, CU_EVENT_DEFAULT);
  CUgraphNode rec = nullptr, wt = nullptr;
  R(cuGraphAddEventRecordNode(&rec, g, nullptr, 0, ev));
  R(cuGraphAddEventWaitNode(&wt, g, nullptr, 0, ev));
  CUgraph child = b.Graph();
  b.Kernel(child, 0, 1);
  CUgraphNode cn = nullptr;
  R(cuGraphAddChildGraphNode(&cn, g, nullptr, 0, child));
  CUDA_MEM_ALLOC_NODE_PARAMS ap;
  memset(&ap, 0, sizeof ap);
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = b.dev;
  ap.bytesize = 4096;
  CUgraphNode an = nullptr, fn = nullptr;
  R(cuGraphAddMemAllocNode(&an, g, nullptr, 0, &ap));
  R(cuGraphAddMemFreeNode(&fn, g, &an, 1, ap.dptr));
  CUgraphExec e = b.Inst(g);
  struct {
    const char* name;
    CUgraphNode n;
  } nodes[] = {{"empty", em},       {"host", h},   {"event_record", rec}, {"event_wait", wt},
               {"child_graph", cn}, {"mem_alloc", an}, {"mem_free", fn}};
  for (auto& x : nodes) {
    unsigned en = 7;
    CUresult r1 = cuGraphNodeGetEnabled(e, x.n, &en);
    CUresult r2 = cuGraphNodeSetEnabled(e, x.n, 0);
    unsigned en2 = 7;
    CUresult r3 = cuGraphNodeGetEnabled(e, x.n, &en2);
    Say("%s: get = %s (%u), set 0 = %s, get = %s (%u)", x.name, Name(r1), en, Name(r2), Name(r3),
        en2);
  }
  g_host_a = 0;
  b.Launch(e, "launch", -1);
  Say("host node ran = %d", g_host_a.load());
  R(cuGraphExecDestroy(e));
  R(cuGraphDestroy(g));
  R(cuGraphDestroy(child));
  cuEventDestroy(ev);
  return 0;
}

int CaseEnabledInvalid() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode k = b.Kernel(g, 0, 1);
  CUgraphExec e = b.Inst(g);
  CUgraph g2 = b.Graph();
  CUgraphNode k2 = b.Kernel(g2, 0, 1);
  R(cuGraphNodeGetEnabled(e, k, nullptr));
  unsigned en = 7;
  R(cuGraphNodeGetEnabled(nullptr, k, &en));
  R(cuGraphNodeGetEnabled(e, nullptr, &en));
  R(cuGraphNodeGetEnabled(e, k2, &en));
  Say("other graph's node: enabled = %u", en);
  R(cuGraphNodeSetEnabled(nullptr, k, 0));
  R(cuGraphNodeSetEnabled(e, nullptr, 0));
  R(cuGraphNodeSetEnabled(e, k2, 0));
  // A node added to the graph after instantiation.
  CUgraphNode late = b.Kernel(g, 0, 1);
  en = 7;
  R(cuGraphNodeGetEnabled(e, late, &en));
  Say("node added after instantiation: enabled = %u", en);
  R(cuGraphNodeSetEnabled(e, late, 0));
  // A clone's node (same origin) against the original's exec.
  CUgraph c = nullptr;
  R(cuGraphClone(&c, g));
  CUgraphNode ck = nullptr;
  R(cuGraphNodeFindInClone(&ck, k, c));
  en = 7;
  R(cuGraphNodeGetEnabled(e, ck, &en));
  Say("clone's node: enabled = %u", en);
  // Destroyed exec.
  R(cuGraphExecDestroy(e));
  en = 7;
  R(cuGraphNodeGetEnabled(e, k, &en));
  R(cuGraphNodeSetEnabled(e, k, 0));
  R(cuGraphDestroy(c));
  R(cuGraphDestroy(g2));
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// execflags: cuGraphExecGetFlags.

int CaseExecFlags() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  b.Kernel(g, 0, 1);
  for (unsigned long long f : {0ull, 1ull, 8ull, 9ull, 4ull, 5ull, 12ull}) {
    CUgraphExec e = nullptr;
    CUresult r = cuGraphInstantiateWithFlags(&e, g, f);
    cuuint64_t got = 77;
    CUresult q = e ? cuGraphExecGetFlags(e, &got) : CUDA_ERROR_INVALID_VALUE;
    Say("instantiate flags %llu = %s, get = %s, flags = %llu", f, Name(r), e ? Name(q) : "-",
        e ? static_cast<unsigned long long>(got) : 0ull);
    if (e != nullptr) cuGraphExecDestroy(e);
  }
  // UPLOAD through cuGraphInstantiateWithParams.
  CUDA_GRAPH_INSTANTIATE_PARAMS ip;
  memset(&ip, 0, sizeof ip);
  ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
  ip.hUploadStream = b.s;
  CUgraphExec e = nullptr;
  R(cuGraphInstantiateWithParams(&e, g, &ip));
  cuuint64_t got = 77;
  if (e != nullptr) R(cuGraphExecGetFlags(e, &got));
  Say("upload: flags = %llu", static_cast<unsigned long long>(got));
  R(cuGraphExecGetFlags(e, nullptr));
  R(cuGraphExecGetFlags(nullptr, &got));
  // Captured graph (cuStreamBeginCapture / EndCapture) instantiated through the stream API.
  if (e != nullptr) R(cuGraphExecDestroy(e));
  got = 77;
  R(cuGraphExecGetFlags(e, &got));
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// instparams:*: cuGraphInstantiateWithParams.

void PrintIp(const char* label, CUresult r, const CUDA_GRAPH_INSTANTIATE_PARAMS& ip,
             CUgraphNode want_err, CUgraphExec e) {
  Say("%s = %s, result_out = %d, hErrNode_out: null = %s, the node = %s, exec set = %s", label,
      Name(r), static_cast<int>(ip.result_out), YesNo(ip.hErrNode_out == nullptr),
      YesNo(want_err != nullptr && ip.hErrNode_out == want_err),
      YesNo(e != nullptr && e != kGarbageExec));
}

CUDA_GRAPH_INSTANTIATE_PARAMS Ip(cuuint64_t flags, CUstream s = nullptr) {
  CUDA_GRAPH_INSTANTIATE_PARAMS ip;
  memset(&ip, 0, sizeof ip);
  ip.flags = flags;
  ip.hUploadStream = s;
  ip.hErrNode_out = kGarbageNode;
  ip.result_out = static_cast<CUgraphInstantiateResult>(77);
  return ip;
}

int CaseInstParamsBasic() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode k = b.Kernel(g, 0, 1);
  struct {
    const char* label;
    cuuint64_t flags;
    bool stream;
  } rows[] = {{"flags 0", 0, false},
              {"flags 0 with a stream", 0, true},
              {"auto free", 1, false},
              {"upload, stream", 2, true},
              {"upload, null stream", 2, false},
              {"device launch", 4, false},
              {"node priority", 8, false},
              {"all four, stream", 15, true},
              {"flag 16", 16, false},
              {"flag 1<<40", 1ull << 40, false}};
  for (auto& row : rows) {
    b.Zero();
    CUDA_GRAPH_INSTANTIATE_PARAMS ip = Ip(row.flags, row.stream ? b.s : nullptr);
    CUgraphExec e = kGarbageExec;
    CUresult r = cuGraphInstantiateWithParams(&e, g, &ip);
    PrintIp(row.label, r, ip, k, e);
    if (r == CUDA_SUCCESS) {
      b.Launch(e, row.label, 0);
      cuGraphExecDestroy(e);
    }
  }
  CUgraphExec e = kGarbageExec;
  R(cuGraphInstantiateWithParams(&e, g, nullptr));
  Say("null params: exec untouched = %s", YesNo(e == kGarbageExec));
  CUDA_GRAPH_INSTANTIATE_PARAMS ip = Ip(0);
  R(cuGraphInstantiateWithParams(nullptr, g, &ip));
  Say("null exec: result_out = %d", static_cast<int>(ip.result_out));
  ip = Ip(0);
  R(cuGraphInstantiateWithParams(&e, nullptr, &ip));
  Say("null graph: result_out = %d", static_cast<int>(ip.result_out));
  // An empty graph.
  CUgraph empty = b.Graph();
  ip = Ip(0);
  e = kGarbageExec;
  CUresult r = cuGraphInstantiateWithParams(&e, empty, &ip);
  PrintIp("empty graph", r, ip, nullptr, e);
  if (r == CUDA_SUCCESS) {
    b.Launch(e, "empty graph", -1);
    cuGraphExecDestroy(e);
  }
  // A destroyed stream as the upload stream.
  CUstream dead = nullptr;
  cuStreamCreate(&dead, CU_STREAM_NON_BLOCKING);
  cuStreamDestroy(dead);
  ip = Ip(2, dead);
  e = kGarbageExec;
  r = cuGraphInstantiateWithParams(&e, g, &ip);
  PrintIp("upload, destroyed stream", r, ip, k, e);
  if (r == CUDA_SUCCESS) cuGraphExecDestroy(e);
  R(cuGraphDestroy(empty));
  // A destroyed graph.
  R(cuGraphDestroy(g));
  ip = Ip(0);
  e = kGarbageExec;
  r = cuGraphInstantiateWithParams(&e, g, &ip);
  PrintIp("destroyed graph", r, ip, nullptr, e);
  return 0;
}

int CaseInstParamsErrors() {
  Base b;
  if (!b.Init()) return 1;
  // A cycle.
  CUgraph g = b.Graph();
  CUgraphNode a = b.Empty(g);
  CUgraphNode c = b.Empty(g, a);
  R(cuGraphAddDependencies(g, &c, &a, nullptr, 1));
  CUDA_GRAPH_INSTANTIATE_PARAMS ip = Ip(0);
  CUgraphExec e = kGarbageExec;
  CUresult r = cuGraphInstantiateWithParams(&e, g, &ip);
  Say("cycle = %s, result_out = %d, hErrNode_out: null = %s, a = %s, c = %s, exec untouched = %s",
      Name(r), static_cast<int>(ip.result_out), YesNo(ip.hErrNode_out == nullptr),
      YesNo(ip.hErrNode_out == a), YesNo(ip.hErrNode_out == c), YesNo(e == kGarbageExec));
  R(cuGraphDestroy(g));
  // Device launch with a host node.
  g = b.Graph();
  CUgraphNode k = b.Kernel(g, 0, 1);
  CUgraphNode h = b.Host(g, HostA);
  ip = Ip(CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH);
  e = kGarbageExec;
  r = cuGraphInstantiateWithParams(&e, g, &ip);
  Say("device launch with host node = %s, result_out = %d, err node: null = %s, host = %s, "
      "kernel = %s",
      Name(r), static_cast<int>(ip.result_out), YesNo(ip.hErrNode_out == nullptr),
      YesNo(ip.hErrNode_out == h), YesNo(ip.hErrNode_out == k));
  if (r == CUDA_SUCCESS) cuGraphExecDestroy(e);
  R(cuGraphDestroy(g));
  // Device launch with a memcpy node and with an empty graph.
  g = b.Graph();
  CUgraphNode mc = b.Memcpy(g, 0, 64, 4);
  ip = Ip(CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH);
  e = kGarbageExec;
  r = cuGraphInstantiateWithParams(&e, g, &ip);
  PrintIp("device launch with memcpy node", r, ip, mc, e);
  if (r == CUDA_SUCCESS) cuGraphExecDestroy(e);
  R(cuGraphDestroy(g));
  // Alloc node: a second live instantiation.
  g = b.Graph();
  CUDA_MEM_ALLOC_NODE_PARAMS ap;
  memset(&ap, 0, sizeof ap);
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = b.dev;
  ap.bytesize = 4096;
  CUgraphNode an = nullptr;
  R(cuGraphAddMemAllocNode(&an, g, nullptr, 0, &ap));
  ip = Ip(0);
  CUgraphExec e1 = kGarbageExec;
  r = cuGraphInstantiateWithParams(&e1, g, &ip);
  PrintIp("alloc graph, first", r, ip, an, e1);
  ip = Ip(0);
  e = kGarbageExec;
  r = cuGraphInstantiateWithParams(&e, g, &ip);
  PrintIp("alloc graph, second", r, ip, an, e);
  if (r == CUDA_SUCCESS) cuGraphExecDestroy(e);
  ip = Ip(CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH);
  e = kGarbageExec;
  if (e1 != kGarbageExec) cuGraphExecDestroy(e1);
  r = cuGraphInstantiateWithParams(&e, g, &ip);
  PrintIp("alloc graph, device launch", r, ip, an, e);
  if (r == CUDA_SUCCESS) cuGraphExecDestroy(e);
  R(cuGraphDestroy(g));
  // An unused conditional handle.
  g = b.Graph();
  b.Kernel(g, 0, 1);
  CUgraphConditionalHandle ch = 0;
  R(cuGraphConditionalHandleCreate(&ch, g, b.ctx, 0, 0));
  ip = Ip(0);
  e = kGarbageExec;
  r = cuGraphInstantiateWithParams(&e, g, &ip);
  PrintIp("unused conditional handle", r, ip, nullptr, e);
  if (r == CUDA_SUCCESS) cuGraphExecDestroy(e);
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// host:*: host node params.

int CaseHostParams() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  int data = 0;
  CUgraphNode h = b.Host(g, HostA, &data);
  CUDA_HOST_NODE_PARAMS p{nullptr, nullptr};
  R(cuGraphHostNodeGetParams(h, &p));
  Say("fn = HostA %s, userData = &data %s", YesNo(p.fn == HostA), YesNo(p.userData == &data));
  R(cuGraphHostNodeGetParams(h, nullptr));
  R(cuGraphHostNodeGetParams(nullptr, &p));
  CUDA_HOST_NODE_PARAMS q{HostB, nullptr};
  R(cuGraphHostNodeSetParams(h, &q));
  p = {nullptr, &data};
  R(cuGraphHostNodeGetParams(h, &p));
  Say("after set: fn = HostB %s, userData null %s", YesNo(p.fn == HostB),
      YesNo(p.userData == nullptr));
  CUDA_HOST_NODE_PARAMS nf{nullptr, &data};
  R(cuGraphHostNodeSetParams(h, &nf));
  p = {nullptr, nullptr};
  R(cuGraphHostNodeGetParams(h, &p));
  Say("after null fn set: fn = HostB %s, HostA %s, null %s", YesNo(p.fn == HostB),
      YesNo(p.fn == HostA), YesNo(p.fn == nullptr));
  R(cuGraphHostNodeSetParams(h, nullptr));
  R(cuGraphHostNodeSetParams(nullptr, &q));
  // Wrong node type.
  CUgraphNode em = b.Empty(g);
  CUgraphNode k = b.Kernel(g, 0, 1);
  R(cuGraphHostNodeGetParams(em, &p));
  R(cuGraphHostNodeGetParams(k, &p));
  R(cuGraphHostNodeSetParams(k, &q));
  g_host_a = 0;
  g_host_b = 0;
  CUgraphExec e = b.Inst(g);
  b.Launch(e, "launch", -1);
  Say("HostA ran %d, HostB ran %d", g_host_a.load(), g_host_b.load());
  R(cuGraphExecDestroy(e));
  // Destroyed node.
  R(cuGraphDestroyNode(h));
  R(cuGraphHostNodeGetParams(h, &p));
  R(cuGraphHostNodeSetParams(h, &q));
  R(cuGraphDestroy(g));
  return 0;
}

int CaseHostExec() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode h = b.Host(g, HostA);
  CUgraphNode k = b.Kernel(g, 0, 1);
  CUgraphExec e = b.Inst(g);
  CUDA_HOST_NODE_PARAMS q{HostB, nullptr};
  R(cuGraphExecHostNodeSetParams(e, h, &q));
  CUDA_HOST_NODE_PARAMS p{nullptr, nullptr};
  R(cuGraphHostNodeGetParams(h, &p));
  Say("graph's node unchanged: fn = HostA %s", YesNo(p.fn == HostA));
  g_host_a = 0;
  g_host_b = 0;
  b.Launch(e, "launch", -1);
  Say("HostA ran %d, HostB ran %d", g_host_a.load(), g_host_b.load());
  CUDA_HOST_NODE_PARAMS nf{nullptr, nullptr};
  R(cuGraphExecHostNodeSetParams(e, h, &nf));
  R(cuGraphExecHostNodeSetParams(e, h, nullptr));
  R(cuGraphExecHostNodeSetParams(nullptr, h, &q));
  R(cuGraphExecHostNodeSetParams(e, nullptr, &q));
  R(cuGraphExecHostNodeSetParams(e, k, &q));
  CUgraph g2 = b.Graph();
  CUgraphNode h2 = b.Host(g2, HostA);
  R(cuGraphExecHostNodeSetParams(e, h2, &q));
  CUgraphNode late = b.Host(g, HostA);
  R(cuGraphExecHostNodeSetParams(e, late, &q));
  g_host_a = 0;
  g_host_b = 0;
  b.Launch(e, "launch 2", -1);
  Say("HostA ran %d, HostB ran %d", g_host_a.load(), g_host_b.load());
  R(cuGraphExecDestroy(e));
  R(cuGraphExecHostNodeSetParams(e, h, &q));
  R(cuGraphDestroy(g2));
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// event:*: event record / wait node events.

int CaseEventNodes() {
  Base b;
  if (!b.Init()) return 1;
  CUevent e1 = nullptr, e2 = nullptr, dead = nullptr;
  cuEventCreate(&e1, CU_EVENT_DEFAULT);
  cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING);
  cuEventCreate(&dead, CU_EVENT_DEFAULT);
  cuEventDestroy(dead);
  CUgraph g = b.Graph();
  CUgraphNode rec = nullptr, wt = nullptr;
  R(cuGraphAddEventRecordNode(&rec, g, nullptr, 0, e1));
  R(cuGraphAddEventWaitNode(&wt, g, &rec, 1, e1));
  CUgraphNode k = b.Kernel(g, 0, 1);
  CUevent got = nullptr;
  R(cuGraphEventRecordNodeGetEvent(rec, &got));
  Say("record node event = e1 %s", YesNo(got == e1));
  got = nullptr;
  R(cuGraphEventWaitNodeGetEvent(wt, &got));
  Say("wait node event = e1 %s", YesNo(got == e1));
  R(cuGraphEventRecordNodeSetEvent(rec, e2));
  R(cuGraphEventWaitNodeSetEvent(wt, e2));
  got = nullptr;
  R(cuGraphEventRecordNodeGetEvent(rec, &got));
  Say("record node event = e2 %s", YesNo(got == e2));
  got = nullptr;
  R(cuGraphEventWaitNodeGetEvent(wt, &got));
  Say("wait node event = e2 %s", YesNo(got == e2));
  // Invalid.
  R(cuGraphEventRecordNodeGetEvent(rec, nullptr));
  R(cuGraphEventWaitNodeGetEvent(wt, nullptr));
  R(cuGraphEventRecordNodeGetEvent(nullptr, &got));
  R(cuGraphEventWaitNodeGetEvent(nullptr, &got));
  R(cuGraphEventRecordNodeGetEvent(wt, &got));
  R(cuGraphEventWaitNodeGetEvent(rec, &got));
  R(cuGraphEventRecordNodeGetEvent(k, &got));
  R(cuGraphEventRecordNodeSetEvent(rec, nullptr));
  R(cuGraphEventWaitNodeSetEvent(wt, nullptr));
  R(cuGraphEventRecordNodeSetEvent(wt, e1));
  R(cuGraphEventWaitNodeSetEvent(rec, e1));
  R(cuGraphEventRecordNodeSetEvent(k, e1));
  R(cuGraphEventRecordNodeSetEvent(nullptr, e1));
  R(cuGraphEventWaitNodeSetEvent(nullptr, e1));
  got = nullptr;
  R(cuGraphEventRecordNodeGetEvent(rec, &got));
  Say("record node event still e2 %s", YesNo(got == e2));
  // Run: the record node records e2.
  CUgraphExec x = b.Inst(g);
  b.Launch(x, "launch", 0);
  R(cuEventQuery(e2));
  // Executable graph setters.
  R(cuGraphExecEventRecordNodeSetEvent(x, rec, e1));
  R(cuGraphExecEventWaitNodeSetEvent(x, wt, e1));
  got = nullptr;
  R(cuGraphEventRecordNodeGetEvent(rec, &got));
  Say("graph's record node still e2 %s", YesNo(got == e2));
  b.Launch(x, "launch 2", 0);
  R(cuEventQuery(e1));
  R(cuGraphExecEventRecordNodeSetEvent(x, rec, nullptr));
  R(cuGraphExecEventWaitNodeSetEvent(x, wt, nullptr));
  R(cuGraphExecEventRecordNodeSetEvent(x, wt, e1));
  R(cuGraphExecEventWaitNodeSetEvent(x, rec, e1));
  R(cuGraphExecEventRecordNodeSetEvent(x, k, e1));
  R(cuGraphExecEventRecordNodeSetEvent(nullptr, rec, e1));
  R(cuGraphExecEventWaitNodeSetEvent(nullptr, wt, e1));
  R(cuGraphExecEventRecordNodeSetEvent(x, nullptr, e1));
  R(cuGraphExecEventWaitNodeSetEvent(x, nullptr, e1));
  CUgraphNode late = nullptr;
  R(cuGraphAddEventRecordNode(&late, g, nullptr, 0, e1));
  R(cuGraphExecEventRecordNodeSetEvent(x, late, e2));
  R(cuGraphExecDestroy(x));
  R(cuGraphExecEventRecordNodeSetEvent(x, rec, e1));
  R(cuGraphExecEventWaitNodeSetEvent(x, wt, e1));
  // A destroyed event.
  R(cuGraphEventRecordNodeSetEvent(rec, dead));
  R(cuGraphEventWaitNodeSetEvent(wt, dead));
  R(cuGraphDestroyNode(rec));
  R(cuGraphEventRecordNodeGetEvent(rec, &got));
  R(cuGraphDestroy(g));
  cuEventDestroy(e1);
  cuEventDestroy(e2);
  return 0;
}

// An event destroyed while a record node names it: the node's getter, then a launch.
int CaseEventDestroyed() {
  Base b;
  if (!b.Init()) return 1;
  CUevent ev = nullptr;
  cuEventCreate(&ev, CU_EVENT_DEFAULT);
  CUgraph g = b.Graph();
  CUgraphNode rec = nullptr;
  R(cuGraphAddEventRecordNode(&rec, g, nullptr, 0, ev));
  CUgraphExec x = b.Inst(g);
  R(cuEventDestroy(ev));
  CUevent got = nullptr;
  R(cuGraphEventRecordNodeGetEvent(rec, &got));
  Say("getter still returns it = %s", YesNo(got == ev));
  R(cuGraphExecDestroy(x));
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// kattr:*: kernel node attributes.

void PrintAttr(const char* label, CUkernelNodeAttrID id, const CUkernelNodeAttrValue& v) {
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      Say("%s: base null = %s, num_bytes = %zu, hitRatio = %g, hitProp = %d, missProp = %d",
          label, YesNo(v.accessPolicyWindow.base_ptr == nullptr),
          v.accessPolicyWindow.num_bytes, v.accessPolicyWindow.hitRatio,
          static_cast<int>(v.accessPolicyWindow.hitProp),
          static_cast<int>(v.accessPolicyWindow.missProp));
      break;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
      Say("%s: %u x %u x %u", label, v.clusterDim.x, v.clusterDim.y, v.clusterDim.z);
      break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      Say("%s: default = %u, remote = %u", label, v.memSyncDomainMap.default_,
          v.memSyncDomainMap.remote);
      break;
    case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
      Say("%s: deviceUpdatable = %d, devNode null = %s", label,
          v.deviceUpdatableKernelNode.deviceUpdatable,
          YesNo(v.deviceUpdatableKernelNode.devNode == nullptr));
      break;
    default:
      Say("%s: value = %d", label, v.priority);
  }
}

int CaseKattrGet() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode k = b.Kernel(g, 0, 1);
  for (int id = 0; id <= 18; ++id) {
    CUkernelNodeAttrValue v;
    memset(&v, 0x5a, sizeof v);
    CUresult r = cuGraphKernelNodeGetAttribute(k, static_cast<CUkernelNodeAttrID>(id), &v);
    char label[64];
    snprintf(label, sizeof label, "attr %d = %s", id, Name(r));
    if (r == CUDA_SUCCESS) {
      PrintAttr(label, static_cast<CUkernelNodeAttrID>(id), v);
    } else {
      Say("%s", label);
    }
  }
  CUkernelNodeAttrValue v;
  R(cuGraphKernelNodeGetAttribute(k, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, nullptr));
  R(cuGraphKernelNodeGetAttribute(nullptr, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  R(cuGraphKernelNodeGetAttribute(k, static_cast<CUkernelNodeAttrID>(1000), &v));
  CUgraphNode em = b.Empty(g);
  R(cuGraphKernelNodeGetAttribute(em, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  R(cuGraphKernelNodeSetAttribute(em, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  R(cuGraphDestroyNode(k));
  R(cuGraphKernelNodeGetAttribute(k, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  R(cuGraphDestroy(g));
  return 0;
}

int CaseKattrSet() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode k = b.Kernel(g, 0, 1);
  auto set_get = [&](const char* label, CUkernelNodeAttrID id, const CUkernelNodeAttrValue& v) {
    CUresult r = cuGraphKernelNodeSetAttribute(k, id, &v);
    CUkernelNodeAttrValue back;
    memset(&back, 0x5a, sizeof back);
    CUresult q = cuGraphKernelNodeGetAttribute(k, id, &back);
    char l[160];
    snprintf(l, sizeof l, "%s: set = %s, get = %s", label, Name(r), Name(q));
    PrintAttr(l, id, back);
  };
  CUkernelNodeAttrValue v;
  memset(&v, 0, sizeof v);
  v.priority = -3;
  set_get("priority -3", CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, v);
  v.priority = 100;
  set_get("priority 100", CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, v);
  v.priority = 0;
  set_get("priority 0", CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, v);
  memset(&v, 0, sizeof v);
  v.cooperative = 1;
  set_get("cooperative 1", CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, v);
  v.cooperative = 5;
  set_get("cooperative 5", CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, v);
  v.cooperative = 0;
  set_get("cooperative 0", CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, v);
  memset(&v, 0, sizeof v);
  v.clusterDim.x = 1;
  v.clusterDim.y = 1;
  v.clusterDim.z = 1;
  set_get("cluster 1x1x1", CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION, v);
  v.clusterDim.x = 2;
  set_get("cluster 2x1x1 (grid 1)", CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION, v);
  v.clusterDim.x = 0;
  v.clusterDim.y = 0;
  v.clusterDim.z = 0;
  set_get("cluster 0x0x0", CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION, v);
  memset(&v, 0, sizeof v);
  v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
  set_get("mem sync domain remote", CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, v);
  v.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(7);
  set_get("mem sync domain 7", CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, v);
  memset(&v, 0, sizeof v);
  v.memSyncDomainMap.default_ = 1;
  v.memSyncDomainMap.remote = 0;
  set_get("mem sync domain map 1/0", CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, v);
  memset(&v, 0, sizeof v);
  v.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(b.buf);
  v.accessPolicyWindow.num_bytes = 4096;
  v.accessPolicyWindow.hitRatio = 0.5f;
  v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
  v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
  set_get("access policy window", CU_KERNEL_NODE_ATTRIBUTE_ACCESS_POLICY_WINDOW, v);
  v.accessPolicyWindow.hitRatio = 2.0f;
  set_get("access policy window hitRatio 2", CU_KERNEL_NODE_ATTRIBUTE_ACCESS_POLICY_WINDOW, v);
  memset(&v, 0, sizeof v);
  v.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
  set_get("cluster scheduling spread",
          CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, v);
  memset(&v, 0, sizeof v);
  v.deviceUpdatableKernelNode.deviceUpdatable = 1;
  set_get("device updatable", CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, v);
  memset(&v, 0, sizeof v);
  v.programmaticStreamSerializationAllowed = 1;
  set_get("programmatic stream serialization",
          CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, v);
  memset(&v, 0, sizeof v);
  v.syncPolicy = CU_SYNC_POLICY_SPIN;
  set_get("synchronization policy", CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, v);
  memset(&v, 0, sizeof v);
  v.sharedMemCarveout = 50;
  set_get("carveout 50", CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, v);
  memset(&v, 0, sizeof v);
  set_get("ignore", CU_LAUNCH_ATTRIBUTE_IGNORE, v);
  R(cuGraphKernelNodeSetAttribute(k, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, nullptr));
  R(cuGraphKernelNodeSetAttribute(nullptr, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  R(cuGraphKernelNodeSetAttribute(k, static_cast<CUkernelNodeAttrID>(1000), &v));
  b.Zero();
  CUgraphExec x = b.Inst(g);
  if (x != nullptr) {
    b.Launch(x, "launch", 0);
    cuGraphExecDestroy(x);
  }
  R(cuGraphDestroy(g));
  return 0;
}

int CaseKattrCopy() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode k1 = b.Kernel(g, 0, 1);
  CUgraphNode k2 = b.Kernel(g, 0, 1);
  CUkernelNodeAttrValue v;
  memset(&v, 0, sizeof v);
  v.priority = -2;
  R(cuGraphKernelNodeSetAttribute(k1, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  memset(&v, 0, sizeof v);
  v.cooperative = 1;
  R(cuGraphKernelNodeSetAttribute(k1, CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, &v));
  memset(&v, 0, sizeof v);
  v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
  R(cuGraphKernelNodeSetAttribute(k2, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
  R(cuGraphKernelNodeCopyAttributes(k2, k1));
  for (CUkernelNodeAttrID id :
       {CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE,
        CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN}) {
    memset(&v, 0x5a, sizeof v);
    CUresult r = cuGraphKernelNodeGetAttribute(k2, id, &v);
    char l[64];
    snprintf(l, sizeof l, "dst attr %d = %s", static_cast<int>(id), Name(r));
    PrintAttr(l, id, v);
  }
  R(cuGraphKernelNodeCopyAttributes(k1, k1));
  CUgraphNode em = b.Empty(g);
  R(cuGraphKernelNodeCopyAttributes(em, k1));
  R(cuGraphKernelNodeCopyAttributes(k1, em));
  R(cuGraphKernelNodeCopyAttributes(nullptr, k1));
  R(cuGraphKernelNodeCopyAttributes(k1, nullptr));
  // Across graphs.
  CUgraph g2 = b.Graph();
  CUgraphNode k3 = b.Kernel(g2, 0, 1);
  R(cuGraphKernelNodeCopyAttributes(k3, k1));
  memset(&v, 0x5a, sizeof v);
  R(cuGraphKernelNodeGetAttribute(k3, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  Say("other graph's node priority = %d", v.priority);
  // Do attributes survive cuGraphClone and the kernel params setter?
  CUgraph c = nullptr;
  R(cuGraphClone(&c, g));
  CUgraphNode ck = nullptr;
  R(cuGraphNodeFindInClone(&ck, k1, c));
  memset(&v, 0x5a, sizeof v);
  R(cuGraphKernelNodeGetAttribute(ck, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  Say("clone's node priority = %d", v.priority);
  Base::AddArgs a;
  CUDA_KERNEL_NODE_PARAMS kp = b.KParams(&a, 0, 2);
  R(cuGraphKernelNodeSetParams(k1, &kp));
  memset(&v, 0x5a, sizeof v);
  R(cuGraphKernelNodeGetAttribute(k1, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  Say("after set params: priority = %d", v.priority);
  R(cuGraphDestroy(c));
  R(cuGraphDestroy(g2));
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// kparams: cuGraphKernelNodeGetParams_v2 / SetParams_v2.

void PrintKp(const char* label, const CUDA_KERNEL_NODE_PARAMS& p, const Base& b) {
  Say("%s: func = add %s, empty %s, null %s; grid %u,%u,%u block %u,%u,%u shmem %u; "
      "kernelParams null %s, extra null %s, kern null %s, ctx = primary %s, null %s",
      label, YesNo(p.func == b.add), YesNo(p.func == b.empty), YesNo(p.func == nullptr),
      p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ,
      p.sharedMemBytes, YesNo(p.kernelParams == nullptr), YesNo(p.extra == nullptr),
      YesNo(p.kern == nullptr), YesNo(p.ctx == b.ctx), YesNo(p.ctx == nullptr));
}

int CaseKparams() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  Base::AddArgs a;
  CUDA_KERNEL_NODE_PARAMS kp = b.KParams(&a, 0, 3);
  kp.gridDimX = 2;
  kp.blockDimY = 4;
  CUgraphNode k = nullptr;
  R(cuGraphAddKernelNode(&k, g, nullptr, 0, &kp));
  CUDA_KERNEL_NODE_PARAMS got;
  memset(&got, 0, sizeof got);
  R(cuGraphKernelNodeGetParams(k, &got));
  PrintKp("get", got, b);
  if (got.kernelParams != nullptr) {
    Say("kernelParams is the caller's array = %s, arg 0 points at the caller's = %s, "
        "arg0 = buf %s, arg1 = %u",
        YesNo(got.kernelParams == a.args), YesNo(got.kernelParams[0] == &a.p),
        YesNo(*static_cast<CUdeviceptr*>(got.kernelParams[0]) == b.buf),
        *static_cast<unsigned*>(got.kernelParams[1]));
  }
  // Set through the _v2 setter: new value, the empty kernel, extra.
  Base::AddArgs a2;
  CUDA_KERNEL_NODE_PARAMS kp2 = b.KParams(&a2, 0, 10);
  R(cuGraphKernelNodeSetParams(k, &kp2));
  a2.v = 999;  // the node must have copied the value
  memset(&got, 0, sizeof got);
  R(cuGraphKernelNodeGetParams(k, &got));
  PrintKp("after set", got, b);
  if (got.kernelParams != nullptr) {
    Say("after set: arg1 = %u", *static_cast<unsigned*>(got.kernelParams[1]));
  }
  CUgraphExec x = b.Inst(g);
  b.Launch(x, "launch", 0);
  cuGraphExecDestroy(x);
  // The kernel through a CUkernel (func null, kern set).
  CUlibrary lib = nullptr;
  CUresult lr = cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0);
  Say("cuLibraryLoadData = %s", Name(lr));
  CUkernel kern = nullptr;
  if (lib != nullptr) cuLibraryGetKernel(&kern, lib, "add_u32");
  if (kern != nullptr) {
    Base::AddArgs a3;
    CUDA_KERNEL_NODE_PARAMS kp3 = b.KParams(&a3, 0, 100);
    kp3.func = nullptr;
    kp3.kern = kern;
    kp3.ctx = b.ctx;
    R(cuGraphKernelNodeSetParams(k, &kp3));
    memset(&got, 0, sizeof got);
    R(cuGraphKernelNodeGetParams(k, &got));
    CUfunction kf = nullptr;
    cuKernelGetFunction(&kf, kern);
    Say("kern set: func = the kernel's function in ctx %s, kern = the kernel %s, kern null %s",
        YesNo(got.func != nullptr && got.func == kf), YesNo(got.kern == kern),
        YesNo(got.kern == nullptr));
    PrintKp("kern set", got, b);
    b.Zero();
    x = b.Inst(g);
    b.Launch(x, "launch kern", 0);
    cuGraphExecDestroy(x);
  }
  // Extra instead of kernelParams.
  struct {
    CUdeviceptr p;
    unsigned v;
    unsigned pad;
  } packed = {b.buf, 7, 0};
  size_t size = 12;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  CUDA_KERNEL_NODE_PARAMS kp4 = b.KParams(&a2, 0, 0);
  kp4.kernelParams = nullptr;
  kp4.extra = extra;
  R(cuGraphKernelNodeSetParams(k, &kp4));
  memset(&got, 0, sizeof got);
  R(cuGraphKernelNodeGetParams(k, &got));
  PrintKp("extra set", got, b);
  b.Zero();
  x = b.Inst(g);
  b.Launch(x, "launch extra", 0);
  cuGraphExecDestroy(x);
  // Invalid.
  R(cuGraphKernelNodeGetParams(k, nullptr));
  R(cuGraphKernelNodeGetParams(nullptr, &got));
  R(cuGraphKernelNodeSetParams(k, nullptr));
  R(cuGraphKernelNodeSetParams(nullptr, &kp2));
  CUgraphNode em = b.Empty(g);
  R(cuGraphKernelNodeGetParams(em, &got));
  R(cuGraphKernelNodeSetParams(em, &kp2));
  CUDA_KERNEL_NODE_PARAMS bad = kp2;
  bad.func = nullptr;
  R(cuGraphKernelNodeSetParams(k, &bad));
  bad = kp2;
  bad.gridDimX = 0;
  R(cuGraphKernelNodeSetParams(k, &bad));
  bad = kp2;
  bad.blockDimX = 2048;
  R(cuGraphKernelNodeSetParams(k, &bad));
  bad = kp2;
  bad.extra = extra;
  R(cuGraphKernelNodeSetParams(k, &bad));  // both kernelParams and extra
  memset(&got, 0, sizeof got);
  R(cuGraphKernelNodeGetParams(k, &got));
  PrintKp("after invalid sets", got, b);
  R(cuGraphDestroyNode(k));
  R(cuGraphKernelNodeGetParams(k, &got));
  R(cuGraphDestroy(g));
  if (lib != nullptr) cuLibraryUnload(lib);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// child:*: cuGraphChildGraphNodeGetGraph and cuGraphExecChildGraphNodeSetParams.

int CaseChildGet() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph child = b.Graph();
  CUgraphNode ck = b.Kernel(child, 0, 1);
  b.Kernel(child, 0, 1, ck);
  CUgraph g = b.Graph();
  CUgraphNode cn = nullptr;
  R(cuGraphAddChildGraphNode(&cn, g, nullptr, 0, child));
  CUgraph got = nullptr;
  R(cuGraphChildGraphNodeGetGraph(cn, &got));
  Say("got a graph = %s, the original child = %s", YesNo(got != nullptr), YesNo(got == child));
  CUgraph got2 = nullptr;
  R(cuGraphChildGraphNodeGetGraph(cn, &got2));
  Say("second call: same graph = %s", YesNo(got2 == got));
  if (got != nullptr) {
    Say("nodes in it = %zu", b.NodeCount(got));
    // Its nodes are not the original child's.
    CUgraphNode ns[4] = {};
    size_t n = 4;
    cuGraphGetNodes(got, ns, &n);
    Say("first node is the child's = %s, type = %d", YesNo(ns[0] == ck), b.Type(ns[0]));
    CUgraphNode found = nullptr;
    CUresult fr = cuGraphNodeFindInClone(&found, ck, got);
    Say("find the child's node in it = %s, found = %s", Name(fr), YesNo(found == ns[0]));
    // Changes to it are reflected in the node (the docs): add a node, then run.
    CUgraphNode extra = b.Kernel(got, 0, 10);
    Say("added a node to it = %s, nodes now = %zu", YesNo(extra != nullptr), b.NodeCount(got));
    CUgraphExec x = b.Inst(g);
    b.Launch(x, "launch (2 + 10 if reflected)", 0);
    if (x != nullptr) cuGraphExecDestroy(x);
    // The original child is unaffected.
    Say("original child nodes = %zu", b.NodeCount(child));
    // The returned graph cannot be destroyed? (owned by the node). Not tried: destroying it
    // would leave the node dangling on drivers that allow it.
    // Its child graph node's graph in a clone of the parent.
    CUgraph c = nullptr;
    R(cuGraphClone(&c, g));
    CUgraphNode ccn = nullptr;
    R(cuGraphNodeFindInClone(&ccn, cn, c));
    CUgraph cgot = nullptr;
    R(cuGraphChildGraphNodeGetGraph(ccn, &cgot));
    Say("clone's child graph: set = %s, the same as the original's = %s, nodes = %zu",
        YesNo(cgot != nullptr), YesNo(cgot == got), cgot ? b.NodeCount(cgot) : 0);
    R(cuGraphDestroy(c));
  }
  // Invalid.
  R(cuGraphChildGraphNodeGetGraph(cn, nullptr));
  R(cuGraphChildGraphNodeGetGraph(nullptr, &got));
  CUgraphNode em = b.Empty(g);
  got = reinterpret_cast<CUgraph>(0x1);
  R(cuGraphChildGraphNodeGetGraph(em, &got));
  Say("wrong type: out untouched = %s", YesNo(got == reinterpret_cast<CUgraph>(0x1)));
  R(cuGraphDestroyNode(cn));
  R(cuGraphChildGraphNodeGetGraph(cn, &got));
  R(cuGraphDestroy(g));
  R(cuGraphDestroy(child));
  return 0;
}

int CaseChildExec() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph child = b.Graph();
  CUgraphNode k1 = b.Kernel(child, 0, 1);
  b.Kernel(child, 0, 2, k1);
  CUgraph g = b.Graph();
  CUgraphNode cn = nullptr;
  R(cuGraphAddChildGraphNode(&cn, g, nullptr, 0, child));
  CUgraphNode top = b.Kernel(g, 64, 1);
  CUgraphExec x = b.Inst(g);
  b.Launch(x, "launch", 0);
  // Same topology, other values.
  CUgraph same = b.Graph();
  CUgraphNode s1 = b.Kernel(same, 0, 10);
  b.Kernel(same, 0, 20, s1);
  R(cuGraphExecChildGraphNodeSetParams(x, cn, same));
  b.Zero();
  b.Launch(x, "after set (30 if taken)", 0);
  // The clone of the child (cuGraphClone: same origin).
  CUgraph cl = nullptr;
  cuGraphClone(&cl, child);
  R(cuGraphExecChildGraphNodeSetParams(x, cn, cl));
  b.Zero();
  b.Launch(x, "after set to clone (3)", 0);
  // Other topologies.
  CUgraph fewer = b.Graph();
  b.Kernel(fewer, 0, 5);
  R(cuGraphExecChildGraphNodeSetParams(x, cn, fewer));
  CUgraph other_type = b.Graph();
  CUgraphNode m = b.Memset(other_type, 0, 4);
  b.Kernel(other_type, 0, 1, m);
  R(cuGraphExecChildGraphNodeSetParams(x, cn, other_type));
  CUgraph no_edge = b.Graph();
  b.Kernel(no_edge, 0, 1);
  b.Kernel(no_edge, 0, 1);
  R(cuGraphExecChildGraphNodeSetParams(x, cn, no_edge));
  CUgraph empty = b.Graph();
  R(cuGraphExecChildGraphNodeSetParams(x, cn, empty));
  b.Zero();
  b.Launch(x, "after invalid sets", 0);
  // Invalid arguments.
  R(cuGraphExecChildGraphNodeSetParams(x, cn, nullptr));
  R(cuGraphExecChildGraphNodeSetParams(nullptr, cn, same));
  R(cuGraphExecChildGraphNodeSetParams(x, nullptr, same));
  R(cuGraphExecChildGraphNodeSetParams(x, top, same));
  R(cuGraphExecChildGraphNodeSetParams(x, cn, g));  // its own parent
  R(cuGraphDestroy(same));
  R(cuGraphExecChildGraphNodeSetParams(x, cn, same));  // destroyed graph
  R(cuGraphExecDestroy(x));
  R(cuGraphExecChildGraphNodeSetParams(x, cn, child));
  for (CUgraph d : {cl, fewer, other_type, no_edge, empty, g, child}) cuGraphDestroy(d);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// clone:find: cuGraphNodeFindInClone.

int CaseCloneFind() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode a = b.Empty(g);
  CUgraphNode k = b.Kernel(g, 0, 1, a);
  CUgraph c = nullptr;
  R(cuGraphClone(&c, g));
  CUgraphNode f = nullptr;
  R(cuGraphNodeFindInClone(&f, k, c));
  Say("found: set = %s, the original = %s, type = %d", YesNo(f != nullptr), YesNo(f == k),
      b.Type(f));
  CUgraphNode f2 = nullptr;
  R(cuGraphNodeFindInClone(&f2, a, c));
  Say("found a: differs from k's = %s", YesNo(f2 != f));
  // The clone's own node, in the clone.
  CUgraphNode f3 = nullptr;
  R(cuGraphNodeFindInClone(&f3, f, c));
  Say("clone's node in the clone: itself = %s", YesNo(f3 == f));
  // The original node in the original graph.
  CUgraphNode keep = kGarbageNode;
  CUgraphNode x = keep;
  R(cuGraphNodeFindInClone(&x, k, g));
  Say("original graph: out = itself %s, untouched %s", YesNo(x == k), YesNo(x == keep));
  // A node added after cloning.
  CUgraphNode late = b.Empty(g);
  x = keep;
  R(cuGraphNodeFindInClone(&x, late, c));
  Say("late node: out untouched = %s", YesNo(x == keep));
  // A clone of the clone.
  CUgraph cc = nullptr;
  R(cuGraphClone(&cc, c));
  x = keep;
  R(cuGraphNodeFindInClone(&x, k, cc));
  Say("clone of clone, original node: out untouched = %s", YesNo(x == keep));
  x = keep;
  R(cuGraphNodeFindInClone(&x, f, cc));
  Say("clone of clone, clone's node: found = %s", YesNo(x != keep && x != nullptr));
  // Unrelated graph.
  CUgraph u = b.Graph();
  b.Empty(u);
  x = keep;
  R(cuGraphNodeFindInClone(&x, k, u));
  // Invalid.
  R(cuGraphNodeFindInClone(nullptr, k, c));
  R(cuGraphNodeFindInClone(&x, nullptr, c));
  R(cuGraphNodeFindInClone(&x, k, nullptr));
  // The original node destroyed: still found?
  R(cuGraphDestroyNode(a));
  x = keep;
  R(cuGraphNodeFindInClone(&x, a, c));
  Say("destroyed original node: found = %s", YesNo(x == f2));
  // The clone's node destroyed.
  R(cuGraphDestroyNode(f));
  x = keep;
  R(cuGraphNodeFindInClone(&x, k, c));
  Say("clone's node destroyed: out untouched = %s", YesNo(x == keep));
  // The original graph destroyed.
  R(cuGraphDestroy(g));
  x = keep;
  R(cuGraphNodeFindInClone(&x, a, c));
  R(cuGraphDestroy(cc));
  R(cuGraphDestroy(u));
  R(cuGraphDestroy(c));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// dot: cuGraphDebugDotPrint (the file's existence and first line only).

int CaseDot() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode k = b.Kernel(g, 0, 1);
  b.Host(g, HostA);
  b.Memset(g, 0, 1);
  CUgraph child = b.Graph();
  b.Empty(child);
  CUgraphNode cn = nullptr;
  cuGraphAddChildGraphNode(&cn, g, &k, 1, child);
  std::string base = "/tmp/graphx_dot_" + std::to_string(getpid());
  auto check = [&](const char* label, const std::string& path, unsigned flags, CUgraph gr) {
    unlink(path.c_str());
    CUresult r = cuGraphDebugDotPrint(gr, path.c_str(), flags);
    FILE* f = fopen(path.c_str(), "r");
    char line[256] = "";
    size_t lines = 0;
    bool nonempty = false;
    if (f) {
      char l[4096];
      bool first = true;
      while (fgets(l, sizeof l, f)) {
        if (first) {
          size_t m = strnlen(l, sizeof line - 1);
          memcpy(line, l, m);
          line[m] = 0;
          first = false;
        }
        ++lines;
        nonempty = true;
      }
      fclose(f);
    }
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    Say("%s = %s, file exists = %s, nonempty = %s, first line = \"%s\"", label, Name(r),
        YesNo(f != nullptr), YesNo(nonempty), line);
    (void)lines;
    unlink(path.c_str());
  };
  check("flags 0", base + "_a.dot", 0, g);
  check("verbose", base + "_b.dot", CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE, g);
  check("runtime types", base + "_c.dot", CU_GRAPH_DEBUG_DOT_FLAGS_RUNTIME_TYPES, g);
  check("all flags", base + "_d.dot", 0xffffu, g);
  check("flag 1<<31", base + "_e.dot", 1u << 31, g);
  check("bad directory", "/nonexistent_graphx_dir/x.dot", 0, g);
  CUgraph e = b.Graph();
  check("empty graph", base + "_f.dot", 0, e);
  R(cuGraphDebugDotPrint(g, nullptr, 0));
  R(cuGraphDebugDotPrint(nullptr, (base + "_g.dot").c_str(), 0));
  unlink((base + "_g.dot").c_str());
  R(cuGraphDestroy(e));
  R(cuGraphDestroy(child));
  R(cuGraphDestroy(g));
  check("destroyed graph", base + "_h.dot", 0, g);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// mem:params: cuGraphMemAllocNodeGetParams / cuGraphMemFreeNodeGetParams.

int CaseMemParams() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUDA_MEM_ALLOC_NODE_PARAMS ap;
  memset(&ap, 0, sizeof ap);
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = b.dev;
  ap.bytesize = 1000;
  CUmemAccessDesc acc;
  acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  acc.location.id = b.dev;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ap.accessDescs = &acc;
  ap.accessDescCount = 1;
  CUgraphNode an = nullptr;
  R(cuGraphAddMemAllocNode(&an, g, nullptr, 0, &ap));
  CUDA_MEM_ALLOC_NODE_PARAMS got;
  memset(&got, 0, sizeof got);
  R(cuGraphMemAllocNodeGetParams(an, &got));
  Say("dptr = the add's %s, bytesize = %zu, allocType = %d, handleTypes = %d, location %d/%d, "
      "win32 null %s, usage = %u, accessDescCount = %zu, accessDescs null %s, the caller's %s",
      YesNo(got.dptr == ap.dptr), got.bytesize, static_cast<int>(got.poolProps.allocType),
      static_cast<int>(got.poolProps.handleTypes), static_cast<int>(got.poolProps.location.type),
      got.poolProps.location.id, YesNo(got.poolProps.win32SecurityAttributes == nullptr),
      static_cast<unsigned>(got.poolProps.usage), got.accessDescCount,
      YesNo(got.accessDescs == nullptr), YesNo(got.accessDescs == &acc));
  if (got.accessDescs != nullptr && got.accessDescCount > 0 && got.accessDescs != &acc) {
    Say("accessDescs[0]: location %d/%d, flags %d",
        static_cast<int>(got.accessDescs[0].location.type), got.accessDescs[0].location.id,
        static_cast<int>(got.accessDescs[0].flags));
  }
  // Without access descriptors.
  CUDA_MEM_ALLOC_NODE_PARAMS ap2 = ap;
  ap2.accessDescs = nullptr;
  ap2.accessDescCount = 0;
  ap2.bytesize = 3 << 20;
  CUgraphNode an2 = nullptr;
  R(cuGraphAddMemAllocNode(&an2, g, &an, 1, &ap2));
  memset(&got, 0, sizeof got);
  R(cuGraphMemAllocNodeGetParams(an2, &got));
  Say("second: dptr = the add's %s, bytesize = %zu, accessDescCount = %zu, accessDescs null %s",
      YesNo(got.dptr == ap2.dptr), got.bytesize, got.accessDescCount,
      YesNo(got.accessDescs == nullptr));
  CUgraphNode fn = nullptr;
  R(cuGraphAddMemFreeNode(&fn, g, &an2, 1, ap.dptr));
  CUdeviceptr d = 0;
  R(cuGraphMemFreeNodeGetParams(fn, &d));
  Say("free node dptr = the alloc's %s", YesNo(d == ap.dptr));
  // Invalid.
  R(cuGraphMemAllocNodeGetParams(an, nullptr));
  R(cuGraphMemAllocNodeGetParams(nullptr, &got));
  R(cuGraphMemAllocNodeGetParams(fn, &got));
  R(cuGraphMemFreeNodeGetParams(fn, nullptr));
  R(cuGraphMemFreeNodeGetParams(nullptr, &d));
  R(cuGraphMemFreeNodeGetParams(an, &d));
  CUgraphNode em = b.Empty(g);
  R(cuGraphMemAllocNodeGetParams(em, &got));
  R(cuGraphMemFreeNodeGetParams(em, &d));
  // A captured alloc (cuMemAllocAsync in capture) and free.
  CUstream cs = nullptr;
  cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING);
  CUgraph cg = nullptr;
  R(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_RELAXED));
  CUdeviceptr p = 0;
  R(cuMemAllocAsync(&p, 5000, cs));
  R(cuMemFreeAsync(p, cs));
  R(cuStreamEndCapture(cs, &cg));
  if (cg != nullptr) {
    CUgraphNode ns[4] = {};
    size_t n = 4;
    cuGraphGetNodes(cg, ns, &n);
    for (size_t i = 0; i < n; ++i) {
      int t = b.Type(ns[i]);
      if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
        memset(&got, 0, sizeof got);
        CUresult r = cuGraphMemAllocNodeGetParams(ns[i], &got);
        Say("captured alloc = %s: dptr = the captured %s, bytesize = %zu, allocType = %d, "
            "location %d/%d, accessDescCount = %zu",
            Name(r), YesNo(got.dptr == p), got.bytesize,
            static_cast<int>(got.poolProps.allocType),
            static_cast<int>(got.poolProps.location.type), got.poolProps.location.id,
            got.accessDescCount);
      } else if (t == CU_GRAPH_NODE_TYPE_MEM_FREE) {
        d = 0;
        CUresult r = cuGraphMemFreeNodeGetParams(ns[i], &d);
        Say("captured free = %s: dptr = the captured %s", Name(r), YesNo(d == p));
      }
    }
    cuGraphDestroy(cg);
  }
  cuStreamDestroy(cs);
  R(cuGraphDestroyNode(fn));
  R(cuGraphMemFreeNodeGetParams(fn, &d));
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// deps:remove: cuGraphRemoveDependencies_v2.

size_t Deps(CUgraphNode n) {
  size_t c = 0;
  CUresult r = cuGraphNodeGetDependencies(n, nullptr, nullptr, &c);
  if (r != CUDA_SUCCESS) Say("cuGraphNodeGetDependencies = %s", Name(r));
  return c;
}

int CaseDepsRemove() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode a = b.Empty(g);
  CUgraphNode c = b.Empty(g);
  CUgraphNode d = b.Empty(g);
  CUgraphNode from[2] = {a, c};
  CUgraphNode to[2] = {d, d};
  R(cuGraphAddDependencies(g, from, to, nullptr, 2));
  Say("d deps = %zu", Deps(d));
  R(cuGraphRemoveDependencies(g, &a, &d, nullptr, 1));
  Say("d deps after removing a->d = %zu", Deps(d));
  R(cuGraphRemoveDependencies(g, &a, &d, nullptr, 1));  // already gone
  CUgraphEdgeData ed;
  memset(&ed, 0, sizeof ed);
  R(cuGraphRemoveDependencies(g, &c, &d, &ed, 1));  // default edge data
  Say("d deps after removing c->d with edge data = %zu", Deps(d));
  // An edge with a programmatic port, removed with and without matching edge data.
  R(cuGraphAddDependencies(g, &a, &d, nullptr, 1));
  R(cuGraphRemoveDependencies(g, &a, &d, nullptr, 0));
  Say("count 0: d deps = %zu", Deps(d));
  memset(&ed, 0, sizeof ed);
  ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
  R(cuGraphRemoveDependencies(g, &a, &d, &ed, 1));  // type mismatch
  Say("type mismatch: d deps = %zu", Deps(d));
  memset(&ed, 0, sizeof ed);
  ed.reserved[0] = 1;
  R(cuGraphRemoveDependencies(g, &a, &d, &ed, 1));
  Say("reserved set: d deps = %zu", Deps(d));
  // Both directions / duplicates in one call.
  CUgraphNode f2[2] = {a, a};
  CUgraphNode t2[2] = {d, d};
  R(cuGraphRemoveDependencies(g, f2, t2, nullptr, 2));
  Say("duplicate pair: d deps = %zu", Deps(d));
  R(cuGraphAddDependencies(g, &a, &d, nullptr, 1));
  CUgraphNode f3[2] = {a, c};
  CUgraphNode t3[2] = {d, d};  // c->d absent: all or nothing?
  R(cuGraphRemoveDependencies(g, f3, t3, nullptr, 2));
  Say("one of two absent: d deps = %zu", Deps(d));
  // Invalid.
  R(cuGraphRemoveDependencies(nullptr, &a, &d, nullptr, 1));
  R(cuGraphRemoveDependencies(g, nullptr, &d, nullptr, 1));
  R(cuGraphRemoveDependencies(g, &a, nullptr, nullptr, 1));
  R(cuGraphRemoveDependencies(g, nullptr, nullptr, nullptr, 0));
  CUgraph g2 = b.Graph();
  CUgraphNode o = b.Empty(g2);
  R(cuGraphRemoveDependencies(g, &o, &d, nullptr, 1));
  R(cuGraphRemoveDependencies(g2, &a, &d, nullptr, 1));
  R(cuGraphRemoveDependencies(g, &d, &d, nullptr, 1));
  R(cuGraphDestroyNode(a));
  R(cuGraphRemoveDependencies(g, &a, &d, nullptr, 1));
  Say("d deps at the end = %zu", Deps(d));
  R(cuGraphDestroy(g2));
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// batch:*: batch mem op nodes.

int CaseBatch() {
  Base b;
  if (!b.Init()) return 1;
  int attr = -1;
  cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, b.dev);
  Say("CAN_USE_STREAM_MEM_OPS_V1 = %d", attr);
  CUstreamBatchMemOpParams ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = b.buf;
  ops[0].writeValue.value = 42;
  ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[1].writeValue.address = b.buf + 8;
  ops[1].writeValue.value64 = 0x100000007ull;
  CUDA_BATCH_MEM_OP_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.ctx = b.ctx;
  p.count = 2;
  p.paramArray = ops;
  CUgraph g = b.Graph();
  CUgraphNode n = nullptr;
  R(cuGraphAddBatchMemOpNode(&n, g, nullptr, 0, &p));
  Say("node set = %s, type = %d", YesNo(n != nullptr), n ? b.Type(n) : -1);
  CUDA_BATCH_MEM_OP_NODE_PARAMS got;
  memset(&got, 0, sizeof got);
  if (n != nullptr) R(cuGraphBatchMemOpNodeGetParams(n, &got));
  if (n != nullptr) {
    Say("get: ctx = primary %s, count = %u, flags = %u, paramArray null %s, the caller's %s",
        YesNo(got.ctx == b.ctx), got.count, got.flags, YesNo(got.paramArray == nullptr),
        YesNo(got.paramArray == ops));
    if (got.paramArray != nullptr && got.paramArray != ops && got.count == 2) {
      Say("get: op0 %d value %u address = buf %s; op1 %d",
          static_cast<int>(got.paramArray[0].operation), got.paramArray[0].writeValue.value,
          YesNo(got.paramArray[0].writeValue.address == b.buf),
          static_cast<int>(got.paramArray[1].operation));
    }
    CUgraphExec x = b.Inst(g);
    if (x != nullptr) {
      b.Launch(x, "launch", 0);
      unsigned long long v64 = 0;
      cuMemcpyDtoH(&v64, b.buf + 8, 8);
      Say("64-bit value = %llx", v64);
      // Set on the graph's node.
      ops[0].writeValue.value = 43;
      CUDA_BATCH_MEM_OP_NODE_PARAMS p1 = p;
      p1.count = 1;
      R(cuGraphBatchMemOpNodeSetParams(n, &p1));
      memset(&got, 0, sizeof got);
      R(cuGraphBatchMemOpNodeGetParams(n, &got));
      Say("after set: count = %u", got.count);
      b.Zero();
      b.Launch(x, "exec unchanged", 0);
      // Set on the exec.
      ops[0].writeValue.value = 44;
      R(cuGraphExecBatchMemOpNodeSetParams(x, n, &p1));
      b.Zero();
      b.Launch(x, "after exec set", 0);
      CUDA_BATCH_MEM_OP_NODE_PARAMS p3 = p;
      p3.count = 3;
      CUstreamBatchMemOpParams ops3[3];
      memset(ops3, 0, sizeof ops3);
      for (auto& o : ops3) {
        o.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
        o.writeValue.address = b.buf;
        o.writeValue.value = 1;
      }
      p3.paramArray = ops3;
      R(cuGraphExecBatchMemOpNodeSetParams(x, n, &p3));  // more ops than instantiated
      R(cuGraphExecBatchMemOpNodeSetParams(x, n, nullptr));
      R(cuGraphExecBatchMemOpNodeSetParams(nullptr, n, &p1));
      R(cuGraphExecBatchMemOpNodeSetParams(x, nullptr, &p1));
      cuGraphExecDestroy(x);
    }
  }
  // Invalid.
  CUgraphNode y = nullptr;
  CUDA_BATCH_MEM_OP_NODE_PARAMS q = p;
  q.count = 0;
  R(cuGraphAddBatchMemOpNode(&y, g, nullptr, 0, &q));
  q = p;
  q.paramArray = nullptr;
  R(cuGraphAddBatchMemOpNode(&y, g, nullptr, 0, &q));
  q = p;
  q.flags = 1;
  R(cuGraphAddBatchMemOpNode(&y, g, nullptr, 0, &q));
  q = p;
  q.ctx = nullptr;
  CUresult r = cuGraphAddBatchMemOpNode(&y, g, nullptr, 0, &q);
  Say("null ctx = %s", Name(r));
  CUstreamBatchMemOpParams badop;
  memset(&badop, 0, sizeof badop);
  badop.operation = static_cast<CUstreamBatchMemOpType>(99);
  q = p;
  q.count = 1;
  q.paramArray = &badop;
  R(cuGraphAddBatchMemOpNode(&y, g, nullptr, 0, &q));
  R(cuGraphAddBatchMemOpNode(&y, g, nullptr, 0, nullptr));
  R(cuGraphAddBatchMemOpNode(nullptr, g, nullptr, 0, &p));
  R(cuGraphAddBatchMemOpNode(&y, nullptr, nullptr, 0, &p));
  R(cuGraphAddBatchMemOpNode(&y, g, nullptr, 1, &p));
  CUgraphNode em = b.Empty(g);
  R(cuGraphBatchMemOpNodeGetParams(em, &got));
  R(cuGraphBatchMemOpNodeSetParams(em, &p));
  R(cuGraphBatchMemOpNodeGetParams(nullptr, &got));
  if (n != nullptr) R(cuGraphBatchMemOpNodeGetParams(n, nullptr));
  if (n != nullptr) R(cuGraphBatchMemOpNodeSetParams(n, nullptr));
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// extsem: external semaphore nodes, with invalid arguments only.

int CaseExtsem() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode em = b.Empty(g);
  CUgraphNode n = nullptr;
  CUDA_EXT_SEM_SIGNAL_NODE_PARAMS sp;
  memset(&sp, 0, sizeof sp);
  CUDA_EXT_SEM_WAIT_NODE_PARAMS wp;
  memset(&wp, 0, sizeof wp);
  R(cuGraphAddExternalSemaphoresSignalNode(&n, g, nullptr, 0, &sp));  // 0 semaphores
  Say("signal, 0 semaphores: node set = %s", YesNo(n != nullptr));
  CUgraphNode sn = n;
  n = nullptr;
  R(cuGraphAddExternalSemaphoresWaitNode(&n, g, nullptr, 0, &wp));
  Say("wait, 0 semaphores: node set = %s", YesNo(n != nullptr));
  CUgraphNode wn = n;
  CUexternalSemaphore none = nullptr;
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sv;
  memset(&sv, 0, sizeof sv);
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wv;
  memset(&wv, 0, sizeof wv);
  sp.extSemArray = &none;
  sp.paramsArray = &sv;
  sp.numExtSems = 1;
  wp.extSemArray = &none;
  wp.paramsArray = &wv;
  wp.numExtSems = 1;
  n = nullptr;
  R(cuGraphAddExternalSemaphoresSignalNode(&n, g, nullptr, 0, &sp));  // a null semaphore
  R(cuGraphAddExternalSemaphoresWaitNode(&n, g, nullptr, 0, &wp));
  CUDA_EXT_SEM_SIGNAL_NODE_PARAMS nsp = sp;
  nsp.extSemArray = nullptr;
  R(cuGraphAddExternalSemaphoresSignalNode(&n, g, nullptr, 0, &nsp));
  R(cuGraphAddExternalSemaphoresSignalNode(&n, g, nullptr, 0, nullptr));
  R(cuGraphAddExternalSemaphoresWaitNode(&n, g, nullptr, 0, nullptr));
  R(cuGraphAddExternalSemaphoresSignalNode(nullptr, g, nullptr, 0, &sp));
  R(cuGraphAddExternalSemaphoresWaitNode(nullptr, g, nullptr, 0, &wp));
  R(cuGraphAddExternalSemaphoresSignalNode(&n, nullptr, nullptr, 0, &sp));
  R(cuGraphAddExternalSemaphoresWaitNode(&n, nullptr, nullptr, 0, &wp));
  CUDA_EXT_SEM_SIGNAL_NODE_PARAMS gsp;
  memset(&gsp, 0x5a, sizeof gsp);
  CUDA_EXT_SEM_WAIT_NODE_PARAMS gwp;
  memset(&gwp, 0x5a, sizeof gwp);
  R(cuGraphExternalSemaphoresSignalNodeGetParams(em, &gsp));
  R(cuGraphExternalSemaphoresWaitNodeGetParams(em, &gwp));
  R(cuGraphExternalSemaphoresSignalNodeGetParams(nullptr, &gsp));
  R(cuGraphExternalSemaphoresWaitNodeGetParams(nullptr, &gwp));
  R(cuGraphExternalSemaphoresSignalNodeSetParams(em, &sp));
  R(cuGraphExternalSemaphoresWaitNodeSetParams(em, &wp));
  R(cuGraphExternalSemaphoresSignalNodeSetParams(nullptr, &sp));
  R(cuGraphExternalSemaphoresWaitNodeSetParams(nullptr, &wp));
  if (sn != nullptr) {
    R(cuGraphExternalSemaphoresSignalNodeGetParams(sn, &gsp));
    Say("signal node get: numExtSems = %u", gsp.numExtSems);
    R(cuGraphExternalSemaphoresSignalNodeGetParams(sn, nullptr));
    R(cuGraphExternalSemaphoresSignalNodeSetParams(sn, nullptr));
    R(cuGraphExternalSemaphoresSignalNodeSetParams(sn, &sp));
  }
  if (wn != nullptr) {
    R(cuGraphExternalSemaphoresWaitNodeGetParams(wn, &gwp));
    Say("wait node get: numExtSems = %u", gwp.numExtSems);
    R(cuGraphExternalSemaphoresWaitNodeGetParams(wn, nullptr));
    R(cuGraphExternalSemaphoresWaitNodeSetParams(wn, nullptr));
    R(cuGraphExternalSemaphoresWaitNodeSetParams(wn, &wp));
  }
  CUgraphExec x = b.Inst(g);
  if (x != nullptr) {
    R(cuGraphExecExternalSemaphoresSignalNodeSetParams(x, em, &sp));
    R(cuGraphExecExternalSemaphoresWaitNodeSetParams(x, em, &wp));
    R(cuGraphExecExternalSemaphoresSignalNodeSetParams(x, nullptr, &sp));
    R(cuGraphExecExternalSemaphoresWaitNodeSetParams(x, nullptr, &wp));
    R(cuGraphExecExternalSemaphoresSignalNodeSetParams(nullptr, em, &sp));
    R(cuGraphExecExternalSemaphoresWaitNodeSetParams(nullptr, em, &wp));
    if (sn != nullptr) R(cuGraphExecExternalSemaphoresSignalNodeSetParams(x, sn, nullptr));
    if (wn != nullptr) R(cuGraphExecExternalSemaphoresWaitNodeSetParams(x, wn, nullptr));
    if (sn != nullptr) R(cuGraphExecExternalSemaphoresSignalNodeSetParams(x, sn, &sp));
    if (wn != nullptr) R(cuGraphExecExternalSemaphoresWaitNodeSetParams(x, wn, &wp));
    b.Launch(x, "launch", -1);
    cuGraphExecDestroy(x);
  }
  R(cuGraphDestroy(g));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// garbage:<entry>: one call with a garbage handle per case (a crash ends only that case).

int CaseGarbage(const std::string& which) {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode k = b.Kernel(g, 0, 1);
  CUgraphExec x = b.Inst(g);
  unsigned en = 0;
  cuuint64_t fl = 0;
  CUDA_HOST_NODE_PARAMS hp{};
  CUevent ev = nullptr;
  CUkernelNodeAttrValue v;
  memset(&v, 0, sizeof v);
  CUgraph cg = nullptr;
  CUgraphNode f = nullptr;
  CUDA_KERNEL_NODE_PARAMS kp;
  CUDA_MEM_ALLOC_NODE_PARAMS mp;
  CUDA_GRAPH_INSTANTIATE_PARAMS ip = Ip(0);
  CUgraphExec e = nullptr;
  if (which == "user_object_retain") R(cuUserObjectRetain(kGarbageObject, 1));
  if (which == "user_object_release") R(cuUserObjectRelease(kGarbageObject, 1));
  if (which == "graph_retain_user_object") R(cuGraphRetainUserObject(g, kGarbageObject, 1, 0));
  if (which == "graph_retain_user_object_graph") {
    CUuserObject o = nullptr;
    R(cuUserObjectCreate(&o, nullptr, Destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    R(cuGraphRetainUserObject(kGarbageGraph, o, 1, 0));
    R(cuUserObjectRelease(o, 1));
  }
  if (which == "node_get_enabled_exec") R(cuGraphNodeGetEnabled(kGarbageExec, k, &en));
  if (which == "node_get_enabled_node") R(cuGraphNodeGetEnabled(x, kGarbageNode, &en));
  if (which == "exec_get_flags") R(cuGraphExecGetFlags(kGarbageExec, &fl));
  if (which == "instantiate_with_params") {
    R(cuGraphInstantiateWithParams(&e, kGarbageGraph, &ip));
    Say("result_out = %d", static_cast<int>(ip.result_out));
  }
  if (which == "host_node_get_params") R(cuGraphHostNodeGetParams(kGarbageNode, &hp));
  if (which == "event_record_node_get_event") {
    R(cuGraphEventRecordNodeGetEvent(kGarbageNode, &ev));
  }
  if (which == "event_record_node_set_event") {
    CUgraphNode rec = nullptr;
    CUevent real = nullptr;
    cuEventCreate(&real, 0);
    R(cuGraphAddEventRecordNode(&rec, g, nullptr, 0, real));
    R(cuGraphEventRecordNodeSetEvent(rec, kGarbageEvent));
  }
  if (which == "kernel_node_get_attribute") {
    R(cuGraphKernelNodeGetAttribute(kGarbageNode, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v));
  }
  if (which == "kernel_node_get_params") R(cuGraphKernelNodeGetParams(kGarbageNode, &kp));
  if (which == "child_graph_node_get_graph") {
    R(cuGraphChildGraphNodeGetGraph(kGarbageNode, &cg));
  }
  if (which == "node_find_in_clone") R(cuGraphNodeFindInClone(&f, kGarbageNode, g));
  if (which == "node_find_in_clone_graph") R(cuGraphNodeFindInClone(&f, k, kGarbageGraph));
  if (which == "debug_dot_print") R(cuGraphDebugDotPrint(kGarbageGraph, "/tmp/graphx_g.dot", 0));
  if (which == "mem_alloc_node_get_params") R(cuGraphMemAllocNodeGetParams(kGarbageNode, &mp));
  if (which == "remove_dependencies") {
    CUgraphNode bad = kGarbageNode;
    R(cuGraphRemoveDependencies(g, &bad, &k, nullptr, 1));
  }
  if (x != nullptr) cuGraphExecDestroy(x);
  cuGraphDestroy(g);
  return 0;
}

const char* kGarbageCases[] = {"user_object_retain",
                               "user_object_release",
                               "graph_retain_user_object",
                               "graph_retain_user_object_graph",
                               "node_get_enabled_exec",
                               "node_get_enabled_node",
                               "exec_get_flags",
                               "instantiate_with_params",
                               "host_node_get_params",
                               "event_record_node_get_event",
                               "event_record_node_set_event",
                               "kernel_node_get_attribute",
                               "kernel_node_get_params",
                               "child_graph_node_get_graph",
                               "node_find_in_clone",
                               "node_find_in_clone_graph",
                               "debug_dot_print",
                               "mem_alloc_node_get_params",
                               "remove_dependencies"};

// ---------------------------------------------------------------------------------------------

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {
      "preinit",        "noctx",           "userobj:create",  "userobj:refcount",
      "userobj:graph",  "userobj:exec",    "userobj:clone",   "enabled:kernel",
      "enabled:types",  "enabled:invalid", "execflags",       "instparams:basic",
      "instparams:errors", "host:params",  "host:exec",       "event:nodes",
      "event:destroyed", "kattr:get",      "kattr:set",       "kattr:copy",
      "kparams",        "child:get",       "child:exec",      "clone:find",
      "dot",            "mem:params",      "deps:remove",     "batch",
      "extsem"};
  for (const char* g : kGarbageCases) cases.push_back(std::string("garbage:") + g);
  return cases;
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  if (c == "preinit") return CasePreinit();
  if (c == "noctx") return CaseNoctx();
  if (c == "userobj:create") return CaseUserobjCreate();
  if (c == "userobj:refcount") return CaseUserobjRefcount();
  if (c == "userobj:graph") return CaseUserobjGraph();
  if (c == "userobj:exec") return CaseUserobjExec();
  if (c == "userobj:clone") return CaseUserobjClone();
  if (c == "enabled:kernel") return CaseEnabledKernel();
  if (c == "enabled:types") return CaseEnabledTypes();
  if (c == "enabled:invalid") return CaseEnabledInvalid();
  if (c == "execflags") return CaseExecFlags();
  if (c == "instparams:basic") return CaseInstParamsBasic();
  if (c == "instparams:errors") return CaseInstParamsErrors();
  if (c == "host:params") return CaseHostParams();
  if (c == "host:exec") return CaseHostExec();
  if (c == "event:nodes") return CaseEventNodes();
  if (c == "event:destroyed") return CaseEventDestroyed();
  if (c == "kattr:get") return CaseKattrGet();
  if (c == "kattr:set") return CaseKattrSet();
  if (c == "kattr:copy") return CaseKattrCopy();
  if (c == "kparams") return CaseKparams();
  if (c == "child:get") return CaseChildGet();
  if (c == "child:exec") return CaseChildExec();
  if (c == "clone:find") return CaseCloneFind();
  if (c == "dot") return CaseDot();
  if (c == "mem:params") return CaseMemParams();
  if (c == "deps:remove") return CaseDepsRemove();
  if (c == "batch") return CaseBatch();
  if (c == "extsem") return CaseExtsem();
  if (c.rfind("garbage:", 0) == 0) return CaseGarbage(c.substr(8));
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
  std::string dir = "/tmp/graphx_probe_" + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && static_cast<int>(running.size()) < jobs) {
      Child ch;
      ch.name = cases[next++];
      ch.file = dir + "/case_" + std::to_string(seq++) + ".txt";
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
        verdict[running[i].name] = v;
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
    unlink(files[c].c_str());
    printf("== %s: %s\n", c.c_str(), verdict[c].c_str());
  }
  rmdir(dir.c_str());
  fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr, "usage: graphx_probe all [jobs] | graphx_probe list | graphx_probe <case>\n");
    return 2;
  }
  std::string a = argv[1];
  if (a == "list") {
    for (auto& c : Cases()) printf("%s\n", c.c_str());
    return 0;
  }
  if (a == "all") {
    int jobs = argc > 2 ? atoi(argv[2]) : 8;
    RunAll(argv[0], Cases(), jobs, 20.0);
    return 0;
  }
  return RunOne(a);
}
