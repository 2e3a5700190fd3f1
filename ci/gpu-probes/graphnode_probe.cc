// Generic graph-node API and conditional-node probe for cuhal: how the real driver answers
// cuGraphAddNode (cuda.h 13's _v2 with edge data, and the older symbol without), cuGraphNodeSetParams,
// cuGraphExecNodeSetParams and cuGraphConditionalHandleCreate, for every node type
// CUgraphNodeParams can describe, valid and invalid; and how conditional nodes (IF, IF/ELSE,
// WHILE, SWITCH) behave: their body graphs, what may go inside them, instantiate, clone, update,
// queries, and what runs at launch for each default value. A plain driver-API program (cuda.h,
// -lcuda), like vmm_probe.cc; see README.md.
//
//   graphnode_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                                `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   graphnode_probe list         the cases
//   graphnode_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address or handle is printed, only relations, so
// that the fake's output can equal the real driver's.
//
// Safety: no WHILE node is launched whose condition could stay nonzero: WHILE nodes are launched
// only with default 0, or (cond:device:while) with a body kernel that clears the condition, and
// that only after the same process saw a device-side cudaGraphSetConditional take effect.
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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

// setcond(h, v): cudaGraphSetConditional(h, v). count_while(u32* p, h, limit): *p += 1; if the
// new value >= limit, cudaGraphSetConditional(h, 0). As nvcc 13.0 emits the call.
const char kCondPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.extern .func cudaGraphSetConditional
(
  .param .b64 cudaGraphSetConditional_param_0,
  .param .b32 cudaGraphSetConditional_param_1
)
;
.visible .entry setcond(.param .u64 h, .param .u32 v) {
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [h];
  ld.param.u32 %r1, [v];
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd1;
  .param .b32 param1;
  st.param.b32 [param1+0], %r1;
  call.uni cudaGraphSetConditional, (param0, param1);
  }
  ret;
}
.visible .entry count_while(.param .u64 p, .param .u64 h, .param .u32 limit) {
  .reg .pred %q;
  .reg .b64 %rd<3>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [h];
  ld.param.u32 %r1, [limit];
  cvta.to.global.u64 %rd1, %rd1;
  ld.global.u32 %r2, [%rd1];
  add.u32 %r2, %r2, 1;
  st.global.u32 [%rd1], %r2;
  setp.lt.u32 %q, %r2, %r1;
  @%q bra DONE;
  mov.u32 %r3, 0;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd2;
  .param .b32 param1;
  st.param.b32 [param1+0], %r3;
  call.uni cudaGraphSetConditional, (param0, param1);
  }
DONE:
  ret;
}
)";

using AddNodeV1Fn = CUresult (*)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t,
                                 CUgraphNodeParams*);
using AddNodeV2Fn = CUresult (*)(CUgraphNode*, CUgraph, const CUgraphNode*,
                                 const CUgraphEdgeData*, size_t, CUgraphNodeParams*);

CUgraphNodeParams P(CUgraphNodeType type) {
  CUgraphNodeParams p;
  memset(&p, 0, sizeof p);
  p.type = type;
  return p;
}

CUgraphNodeParams P(int type) { return P(static_cast<CUgraphNodeType>(type)); }

void CountHost(void* data) { ++*static_cast<int*>(data); }

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
  // Kernel node params of add_u32(buf + off, *v): `args` must outlive the call that uses them.
  struct AddArgs {
    CUdeviceptr p;
    unsigned v;
    void* args[2];
  };
  CUgraphNodeParams Kernel(AddArgs* a, size_t off, unsigned v) {
    a->p = buf + off;
    a->v = v;
    a->args[0] = &a->p;
    a->args[1] = &a->v;
    CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_KERNEL);
    p.kernel.func = add;
    p.kernel.gridDimX = p.kernel.gridDimY = p.kernel.gridDimZ = 1;
    p.kernel.blockDimX = p.kernel.blockDimY = p.kernel.blockDimZ = 1;
    p.kernel.kernelParams = a->args;
    return p;
  }
  CUgraphNodeParams Memset(size_t off, unsigned value, size_t width = 1) {
    CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_MEMSET);
    p.memset.dst = buf + off;
    p.memset.value = value;
    p.memset.elementSize = 4;
    p.memset.width = width;
    p.memset.height = 1;
    p.memset.ctx = ctx;
    return p;
  }
  CUgraphNodeParams Memcpy(size_t dst_off, size_t src_off, size_t bytes) {
    CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_MEMCPY);
    p.memcpy.copyCtx = ctx;
    CUDA_MEMCPY3D& c = p.memcpy.copyParams;
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = buf + src_off;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = buf + dst_off;
    c.WidthInBytes = bytes;
    c.Height = 1;
    c.Depth = 1;
    return p;
  }
  // Adds `p` (no dependencies, or one) and returns the node (null on failure, printed). The
  // driver's outputs (alloc.dptr, conditional.phGraph_out) are written back into `p`.
  CUgraphNode Add(CUgraph g, CUgraphNodeParams& p, CUgraphNode dep = nullptr,
                  const char* label = "setup") {
    CUgraphNode n = nullptr;
    CUresult r = cuGraphAddNode(&n, g, dep ? &dep : nullptr, nullptr, dep ? 1 : 0, &p);
    if (r != CUDA_SUCCESS) Say("%s: cuGraphAddNode = %s", label, Name(r));
    return r == CUDA_SUCCESS ? n : nullptr;
  }
  CUgraphNode Add(CUgraph g, CUgraphNodeParams&& p, CUgraphNode dep = nullptr,
                  const char* label = "setup") {
    return Add(g, p, dep, label);
  }
  // Instantiates, launches `times` times (synchronizing after each, printing the value at buf +
  // off after each when `off` >= 0) and destroys the executable graph. Returns instantiate's.
  CUresult Run(CUgraph g, const char* label, int times = 1, long off = 0) {
    CUgraphExec e = nullptr;
    CUresult r = cuGraphInstantiate(&e, g, 0);
    Say("%s: instantiate = %s", label, Name(r));
    if (r != CUDA_SUCCESS) return r;
    for (int i = 0; i < times; ++i) {
      CUresult l = cuGraphLaunch(e, s);
      CUresult y = cuStreamSynchronize(s);
      if (off >= 0) {
        Say("%s: launch %d = %s, sync = %s, value = %u", label, i + 1, Name(l), Name(y),
            Read(static_cast<size_t>(off)));
      } else {
        Say("%s: launch %d = %s, sync = %s", label, i + 1, Name(l), Name(y));
      }
    }
    Say("%s: cuGraphExecDestroy = %s", label, Name(cuGraphExecDestroy(e)));
    return r;
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

// A conditional node's params (the handle made by the caller).
CUgraphNodeParams Cond(CUgraphConditionalHandle h, CUgraphConditionalNodeType type, unsigned size,
                       CUcontext ctx) {
  CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_CONDITIONAL);
  p.conditional.handle = h;
  p.conditional.type = type;
  p.conditional.size = size;
  p.conditional.ctx = ctx;
  return p;
}

// Body i of a conditional node added from `p` (null when the driver wrote no array).
CUgraph Body(const CUgraphNodeParams& p, unsigned i) {
  return p.conditional.phGraph_out != nullptr ? p.conditional.phGraph_out[i] : nullptr;
}

// ---------------------------------------------------------------------------------------------
// add:<type>: cuGraphAddNode of every node type, valid (then run) and invalid.

int CaseAddCommon() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_EMPTY);
  CUgraphNode n = nullptr;
  R(cuGraphAddNode(&n, g, nullptr, nullptr, 0, &p));
  Say("node set = %s, type = %d, nodes in graph = %zu", YesNo(n != nullptr), b.Type(n),
      b.NodeCount(g));
  CUgraphNode keep = reinterpret_cast<CUgraphNode>(0x1);
  CUgraphNode x = keep;
  R(cuGraphAddNode(nullptr, g, nullptr, nullptr, 0, &p));
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, nullptr));
  Say("null params: out untouched = %s", YesNo(x == keep));
  R(cuGraphAddNode(&x, nullptr, nullptr, nullptr, 0, &p));
  Say("null graph: out untouched = %s", YesNo(x == keep));
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 1, &p));
  CUgraphNode deps[2] = {n, n};
  R(cuGraphAddNode(&x, g, deps, nullptr, 2, &p));  // duplicate dependency
  x = nullptr;
  R(cuGraphAddNode(&x, g, deps, nullptr, 1, &p));
  CUgraphNodeParams r0 = P(CU_GRAPH_NODE_TYPE_EMPTY);
  r0.reserved0[0] = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &r0));
  CUgraphNodeParams r0b = P(CU_GRAPH_NODE_TYPE_EMPTY);
  r0b.reserved0[2] = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &r0b));
  CUgraphNodeParams r1 = P(CU_GRAPH_NODE_TYPE_EMPTY);
  r1.reserved1[0] = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &r1));
  CUgraphNodeParams r1e = P(CU_GRAPH_NODE_TYPE_EMPTY);
  r1e.reserved1[28] = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &r1e));
  CUgraphNodeParams r2 = P(CU_GRAPH_NODE_TYPE_EMPTY);
  r2.reserved2 = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &r2));
  // Padding past a used union member: memset uses 56 bytes (7 long longs).
  CUgraphNodeParams ms = b.Memset(0, 1);
  ms.reserved1[7] = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &ms));
  ms.reserved1[7] = 0;
  ms.reserved1[28] = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &ms));
  CUgraphNodeParams t14 = P(14);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &t14));
  CUgraphNodeParams tneg = P(-1);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &tneg));
  CUgraphNodeParams t99 = P(99);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &t99));
  // Edge data.
  CUgraphEdgeData ed;
  memset(&ed, 0, sizeof ed);
  R(cuGraphAddNode(&x, g, &n, &ed, 1, &p));
  ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
  R(cuGraphAddNode(&x, g, &n, &ed, 1, &p));
  memset(&ed, 0, sizeof ed);
  ed.from_port = 1;
  R(cuGraphAddNode(&x, g, &n, &ed, 1, &p));
  memset(&ed, 0, sizeof ed);
  ed.reserved[0] = 1;
  R(cuGraphAddNode(&x, g, &n, &ed, 1, &p));
  memset(&ed, 0, sizeof ed);
  R(cuGraphAddNode(&x, g, nullptr, &ed, 0, &p));
  Say("nodes in graph = %zu", b.NodeCount(g));
  // A dependency of another graph, a destroyed graph, a garbage graph.
  CUgraph g2 = b.Graph();
  CUgraphNode other = b.Add(g2, P(CU_GRAPH_NODE_TYPE_EMPTY));
  R(cuGraphAddNode(&x, g, &other, nullptr, 1, &p));
  R(cuGraphDestroy(g2));
  x = keep;
  R(cuGraphAddNode(&x, g2, nullptr, nullptr, 0, &p));
  Say("destroyed graph: out untouched = %s", YesNo(x == keep));
  R(cuGraphDestroy(g));
  return 0;
}

int CaseAddAbi() {
  Base b;
  if (!b.Init()) return 1;
  auto v1 = reinterpret_cast<AddNodeV1Fn>(dlsym(RTLD_DEFAULT, "cuGraphAddNode"));
  auto v2 = reinterpret_cast<AddNodeV2Fn>(dlsym(RTLD_DEFAULT, "cuGraphAddNode_v2"));
  Say("symbol cuGraphAddNode present = %s", YesNo(v1 != nullptr));
  Say("symbol cuGraphAddNode_v2 present = %s", YesNo(v2 != nullptr));
  CUgraph g = b.Graph();
  CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_EMPTY);
  CUgraphNode a = nullptr, c = nullptr, d = nullptr;
  if (v1) {
    Say("v1 empty = %s", Name(v1(&a, g, nullptr, 0, &p)));
    Say("v1 with a dependency = %s", Name(v1(&c, g, &a, 1, &p)));
    Say("v1 null params = %s", Name(v1(&d, g, nullptr, 0, nullptr)));
    CUgraphNodeParams bad = P(14);
    Say("v1 type 14 = %s", Name(v1(&d, g, nullptr, 0, &bad)));
    size_t deps = 0;
    cuGraphNodeGetDependencies(c, nullptr, nullptr, &deps);
    Say("v1 node dependencies = %zu", deps);
  }
  if (v2) {
    CUgraphEdgeData ed;
    memset(&ed, 0, sizeof ed);
    Say("v2 with default edge data = %s", Name(v2(&d, g, &a, &ed, 1, &p)));
  }
  Say("nodes in graph = %zu", b.NodeCount(g));
  void* fn = nullptr;
  CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = cuGetProcAddress("cuGraphAddNode", &fn, 12020, 0, &q);
  Say("cuGetProcAddress(cuGraphAddNode, 12020) = %s, is the cuGraphAddNode symbol = %s", Name(r),
      YesNo(fn != nullptr && fn == reinterpret_cast<void*>(v1)));
  fn = nullptr;
  r = cuGetProcAddress("cuGraphAddNode", &fn, 13000, 0, &q);
  Say("cuGetProcAddress(cuGraphAddNode, 13000) = %s, is the cuGraphAddNode_v2 symbol = %s",
      Name(r), YesNo(fn != nullptr && fn == reinterpret_cast<void*>(v2)));
  cuGraphDestroy(g);
  return 0;
}

int CaseAddKernel() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  Base::AddArgs a;
  CUgraphNode n = b.Add(g, b.Kernel(&a, 0, 5), nullptr, "valid");
  Say("valid: node set = %s, type = %d", YesNo(n != nullptr), b.Type(n));
  a.v = 1000;  // the node copied the parameters when it was added
  b.Run(g, "valid", 2);
  CUgraphNode x = nullptr;
  CUgraphNodeParams p = b.Kernel(&a, 0, 1);
  p.kernel.func = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // neither func nor kern
  p = b.Kernel(&a, 0, 1);
  p.kernel.gridDimX = 0;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Kernel(&a, 0, 1);
  p.kernel.blockDimX = 2048;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Kernel(&a, 0, 1);
  p.kernel.sharedMemBytes = 1 << 30;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Kernel(&a, 0, 1);
  p.kernel.ctx = reinterpret_cast<CUcontext>(0x10);  // ignored when func is set (cuda.h)
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Kernel(&a, 0, 1);
  p.kernel.kernelParams = nullptr;
  p.kernel.extra = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // a kernel with parameters, none given
  // The empty kernel without parameters.
  p = P(CU_GRAPH_NODE_TYPE_KERNEL);
  p.kernel.func = b.empty;
  p.kernel.gridDimX = p.kernel.gridDimY = p.kernel.gridDimZ = 1;
  p.kernel.blockDimX = p.kernel.blockDimY = p.kernel.blockDimZ = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  Say("nodes in graph = %zu", b.NodeCount(g));
  b.Zero();
  b.Run(g, "after adds");
  cuGraphDestroy(g);
  return 0;
}

int CaseAddMemcpy() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode set = b.Add(g, b.Memset(0, 77));
  CUgraphNode n = b.Add(g, b.Memcpy(64, 0, 4), set, "valid");
  Say("valid: node set = %s, type = %d", YesNo(n != nullptr), b.Type(n));
  b.Run(g, "valid", 1, 64);
  CUgraphNode x = nullptr;
  CUgraphNodeParams p = b.Memcpy(128, 0, 4);
  p.memcpy.flags = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memcpy(128, 0, 4);
  p.memcpy.reserved = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memcpy(128, 0, 4);
  p.memcpy.copyCtx = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memcpy(128, 0, 0);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memcpy(128, 0, 8192);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memcpy(128, 0, 4);
  p.memcpy.copyParams.srcDevice = 0;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  unsigned host = 1234;
  p = b.Memcpy(128, 0, 4);
  p.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_HOST;
  p.memcpy.copyParams.srcHost = &host;
  p.memcpy.copyParams.srcDevice = 0;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // from pageable host memory
  cuGraphDestroy(g);
  return 0;
}

int CaseAddMemset() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode n = b.Add(g, b.Memset(0, 42), nullptr, "valid");
  Say("valid: node set = %s, type = %d", YesNo(n != nullptr), b.Type(n));
  b.Run(g, "valid");
  CUgraphNode x = nullptr;
  CUgraphNodeParams p = b.Memset(0, 1);
  p.memset.ctx = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memset(0, 1);
  p.memset.ctx = reinterpret_cast<CUcontext>(0x10);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memset(0, 1);
  p.memset.elementSize = 3;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memset(0, 1);
  p.memset.dst = 0;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memset(0, 1, 4096);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // past the end of the buffer
  p = b.Memset(2, 1);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // misaligned for 4-byte elements
  p = b.Memset(0, 1);
  p.memset.width = 0;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = b.Memset(0, 1, 4);
  p.memset.height = 2;
  p.memset.pitch = 8;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // pitch below the row
  cuGraphDestroy(g);
  return 0;
}

int CaseAddHost() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  int count = 0;
  CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_HOST);
  p.host.fn = CountHost;
  p.host.userData = &count;
  CUgraphNode n = b.Add(g, p, nullptr, "valid");
  Say("valid: node set = %s, type = %d", YesNo(n != nullptr), b.Type(n));
  b.Run(g, "valid", 2, -1);
  Say("host function calls = %d", count);
  CUgraphNode x = nullptr;
  p.host.fn = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p.host.fn = CountHost;
  p.host.userData = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // null user data is allowed?
  cuGraphDestroy(g);
  return 0;
}

int CaseAddGraph() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph child = b.Graph();
  b.Add(child, b.Memset(0, 9));
  CUgraph g = b.Graph();
  CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_GRAPH);
  p.graph.graph = child;
  CUgraphNode n = b.Add(g, p, nullptr, "clone");
  Say("clone: node set = %s, type = %d", YesNo(n != nullptr), b.Type(n));
  b.Run(g, "clone");
  CUgraphNode x = nullptr;
  CUgraphNodeParams q = P(CU_GRAPH_NODE_TYPE_GRAPH);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &q));  // null graph
  q.graph.graph = g;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &q));  // itself
  q.graph.graph = child;
  q.graph.ownership = static_cast<CUgraphChildGraphNodeOwnership>(2);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &q));
  // Ownership MOVE: the child belongs to the parent afterwards.
  CUgraph moved = b.Graph();
  b.Add(moved, b.Memset(4, 3));
  q.graph.graph = moved;
  q.graph.ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE;
  CUgraph g2 = b.Graph();
  R(cuGraphAddNode(&x, g2, nullptr, nullptr, 0, &q));
  Say("move: nodes in moved graph = %zu", b.NodeCount(moved));
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &q));  // moved again, into another parent
  q.graph.ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &q));  // cloned after it was moved
  CUgraphExec e = nullptr;
  R(cuGraphInstantiate(&e, moved, 0));  // a moved graph cannot be instantiated on its own
  if (e) cuGraphExecDestroy(e);
  b.Run(g2, "move", 1, 4);
  // A child graph with an alloc node: CLONE refused, MOVE allowed?
  CUgraph withalloc = b.Graph();
  CUgraphNodeParams al = P(CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  al.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  al.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  al.alloc.poolProps.location.id = 0;
  al.alloc.bytesize = 1 << 20;
  b.Add(withalloc, al);
  q.graph.graph = withalloc;
  q.graph.ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE;
  CUgraph g3 = b.Graph();
  R(cuGraphAddNode(&x, g3, nullptr, nullptr, 0, &q));
  q.graph.ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE;
  R(cuGraphAddNode(&x, g3, nullptr, nullptr, 0, &q));
  R(cuGraphDestroy(g3));
  R(cuGraphDestroy(g2));
  R(cuGraphDestroy(g));
  R(cuGraphDestroy(child));
  return 0;
}

int CaseAddEvent() {
  Base b;
  if (!b.Init()) return 1;
  CUevent ev = nullptr;
  cuEventCreate(&ev, CU_EVENT_DEFAULT);
  CUgraph g = b.Graph();
  CUgraphNodeParams rec = P(CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  rec.eventRecord.event = ev;
  CUgraphNode r = b.Add(g, rec, nullptr, "record");
  Say("record: node set = %s, type = %d", YesNo(r != nullptr), b.Type(r));
  CUgraphNodeParams wait = P(CU_GRAPH_NODE_TYPE_WAIT_EVENT);
  wait.eventWait.event = ev;
  CUgraphNode w = b.Add(g, wait, r, "wait");
  Say("wait: node set = %s, type = %d", YesNo(w != nullptr), b.Type(w));
  b.Run(g, "record+wait", 1, -1);
  Say("event query after the launch = %s", Name(cuEventQuery(ev)));
  CUgraphNode x = nullptr;
  rec.eventRecord.event = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &rec));
  wait.eventWait.event = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &wait));
  CUevent dead = nullptr;
  cuEventCreate(&dead, CU_EVENT_DEFAULT);
  cuEventDestroy(dead);
  cuGraphDestroy(g);
  cuEventDestroy(ev);
  return 0;
}

CUgraphNodeParams AllocParams(size_t bytes) {
  CUgraphNodeParams al = P(CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  al.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  al.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  al.alloc.poolProps.location.id = 0;
  al.alloc.bytesize = bytes;
  return al;
}

int CaseAddMem() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNodeParams al = AllocParams(1 << 20);
  CUgraphNode a = nullptr;
  R(cuGraphAddNode(&a, g, nullptr, nullptr, 0, &al));
  Say("alloc: type = %d, dptr written = %s", b.Type(a), YesNo(al.alloc.dptr != 0));
  CUgraphNodeParams ms = b.Memset(0, 5);
  ms.memset.dst = al.alloc.dptr;
  CUgraphNode m = b.Add(g, ms, a);
  CUgraphNodeParams cp = b.Memcpy(0, 0, 4);
  cp.memcpy.copyParams.srcDevice = al.alloc.dptr;
  CUgraphNode c = b.Add(g, cp, m);
  CUgraphNodeParams fr = P(CU_GRAPH_NODE_TYPE_MEM_FREE);
  fr.free.dptr = al.alloc.dptr;
  CUgraphNode f = nullptr;
  R(cuGraphAddNode(&f, g, &c, nullptr, 1, &fr));
  Say("free: type = %d", b.Type(f));
  b.Run(g, "alloc+memset+copy+free", 2);
  CUgraphNode x = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &fr));  // a second free of the same allocation
  CUgraphNodeParams bad = AllocParams(0);
  bad.alloc.dptr = 0;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &bad));
  Say("size 0: dptr written = %s", YesNo(bad.alloc.dptr != 0));
  bad = AllocParams(4096);
  bad.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_INVALID;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &bad));
  bad = AllocParams(4096);
  bad.alloc.poolProps.location.id = 99;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &bad));
  bad = AllocParams(4096);
  bad.alloc.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &bad));
  bad = AllocParams(4096);
  bad.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &bad));
  CUgraphNodeParams fr2 = P(CU_GRAPH_NODE_TYPE_MEM_FREE);
  fr2.free.dptr = 0;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &fr2));
  fr2.free.dptr = b.buf;  // cuMemAlloc memory
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &fr2));
  R(cuGraphDestroy(g));
  return 0;
}

int CaseAddUnmodelled() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphNode x = nullptr;
  // External semaphores: none, and a null semaphore.
  CUgraphNodeParams sig = P(CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &sig));
  CUexternalSemaphore none[1] = {nullptr};
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp[1];
  memset(sp, 0, sizeof sp);
  sig.extSemSignal.extSemArray = none;
  sig.extSemSignal.paramsArray = sp;
  sig.extSemSignal.numExtSems = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &sig));
  sig.extSemSignal.extSemArray = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &sig));
  CUgraphNodeParams wt = P(CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &wt));
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp[1];
  memset(wp, 0, sizeof wp);
  wt.extSemWait.extSemArray = none;
  wt.extSemWait.paramsArray = wp;
  wt.extSemWait.numExtSems = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &wt));
  // Batch memory operations: none, null array, one 32-bit write.
  CUgraphNodeParams mo = P(CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
  mo.memOp.ctx = b.ctx;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &mo));
  mo.memOp.count = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &mo));
  CUstreamBatchMemOpParams op[1];
  memset(op, 0, sizeof op);
  op[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op[0].writeValue.address = b.buf + 256;
  op[0].writeValue.value = 31;
  mo.memOp.paramArray = op;
  mo.memOp.ctx = nullptr;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &mo));
  mo.memOp.ctx = b.ctx;
  mo.memOp.flags = 1;
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &mo));
  mo.memOp.flags = 0;
  op[0].writeValue.operation = static_cast<CUstreamBatchMemOpType>(99);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &mo));
  op[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  x = nullptr;
  CUresult r = R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &mo));
  if (r == CUDA_SUCCESS) {
    Say("batch mem op: type = %d", b.Type(x));
    b.Run(g, "batch mem op", 1, 256);
  }
  Say("nodes in graph = %zu", b.NodeCount(g));
  cuGraphDestroy(g);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// setparams:<type> / execsetparams:<type>

int CaseSetParams(bool exec) {
  Base b;
  if (!b.Init()) return 1;
  const char* label = exec ? "exec" : "graph";
  CUgraph g = b.Graph();
  Base::AddArgs a;
  CUgraphNode k = b.Add(g, b.Kernel(&a, 0, 1));
  CUgraphNode m = b.Add(g, b.Memset(64, 10), k);
  CUgraphNode c = b.Add(g, b.Memcpy(128, 64, 4), m);
  int count1 = 0, count2 = 0;
  CUgraphNodeParams hp = P(CU_GRAPH_NODE_TYPE_HOST);
  hp.host.fn = CountHost;
  hp.host.userData = &count1;
  CUgraphNode h = b.Add(g, hp, c);
  CUgraph child = b.Graph();
  b.Add(child, b.Memset(192, 20));
  CUgraphNodeParams cp = P(CU_GRAPH_NODE_TYPE_GRAPH);
  cp.graph.graph = child;
  CUgraphNode ch = b.Add(g, cp, h);
  CUgraphNode em = b.Add(g, P(CU_GRAPH_NODE_TYPE_EMPTY), ch);
  CUevent ev1 = nullptr, ev2 = nullptr;
  cuEventCreate(&ev1, CU_EVENT_DEFAULT);
  cuEventCreate(&ev2, CU_EVENT_DEFAULT);
  CUgraphNodeParams rp = P(CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  rp.eventRecord.event = ev1;
  CUgraphNode rec = b.Add(g, rp, em);
  CUgraphNodeParams wp = P(CU_GRAPH_NODE_TYPE_WAIT_EVENT);
  wp.eventWait.event = ev1;
  CUgraphNode wait = b.Add(g, wp, rec);
  CUgraphNodeParams al = AllocParams(1 << 20);
  CUgraphNode alloc = b.Add(g, al, wait);
  CUgraphNodeParams fp = P(CU_GRAPH_NODE_TYPE_MEM_FREE);
  fp.free.dptr = al.alloc.dptr;
  CUgraphNode fr = b.Add(g, fp, alloc);
  CUgraphExec e = nullptr;
  if (exec) {
    R(cuGraphInstantiate(&e, g, 0));
    R(cuGraphLaunch(e, b.s));
    cuStreamSynchronize(b.s);
    Say("first launch: kernel %u, memset %u, memcpy %u, child %u, host calls %d", b.Read(0),
        b.Read(64), b.Read(128), b.Read(192), count1);
    b.Zero();
  }
  auto Set = [&](CUgraphNode n, CUgraphNodeParams* p) {
    return exec ? cuGraphExecNodeSetParams(e, n, p) : cuGraphNodeSetParams(n, p);
  };
  Base::AddArgs a2;
  CUgraphNodeParams kp = b.Kernel(&a2, 0, 7);
  Say("%s: kernel v 7 = %s", label, Name(Set(k, &kp)));
  CUgraphNodeParams mp = b.Memset(64, 11);
  Say("%s: memset value 11 = %s", label, Name(Set(m, &mp)));
  CUgraphNodeParams cpp = b.Memcpy(132, 64, 4);
  Say("%s: memcpy dst + 4 = %s", label, Name(Set(c, &cpp)));
  hp.host.userData = &count2;
  Say("%s: host userData = %s", label, Name(Set(h, &hp)));
  CUgraph child2 = b.Graph();
  b.Add(child2, b.Memset(192, 21));
  CUgraphNodeParams cp2 = P(CU_GRAPH_NODE_TYPE_GRAPH);
  cp2.graph.graph = child2;
  Say("%s: child graph (same shape, value 21) = %s", label, Name(Set(ch, &cp2)));
  CUgraphNodeParams ep = P(CU_GRAPH_NODE_TYPE_EMPTY);
  Say("%s: empty = %s", label, Name(Set(em, &ep)));
  rp.eventRecord.event = ev2;
  Say("%s: event record other event = %s", label, Name(Set(rec, &rp)));
  wp.eventWait.event = ev2;
  Say("%s: event wait other event = %s", label, Name(Set(wait, &wp)));
  Say("%s: mem alloc = %s", label, Name(Set(alloc, &al)));
  Say("%s: mem free = %s", label, Name(Set(fr, &fp)));
  // Wrong type, null, reserved bytes, bad values.
  Say("%s: memset params on the kernel node = %s", label, Name(Set(k, &mp)));
  Say("%s: kernel params on the memset node = %s", label, Name(Set(m, &kp)));
  Say("%s: null params = %s", label, Name(Set(m, nullptr)));
  Say("%s: null node = %s", label, Name(Set(nullptr, &mp)));
  CUgraphNodeParams bad = b.Memset(64, 12);
  bad.reserved0[0] = 1;
  Say("%s: reserved0 set = %s", label, Name(Set(m, &bad)));
  bad = b.Memset(64, 12);
  bad.reserved2 = 1;
  Say("%s: reserved2 set = %s", label, Name(Set(m, &bad)));
  bad = b.Memset(64, 12);
  bad.memset.elementSize = 3;
  Say("%s: memset element size 3 = %s", label, Name(Set(m, &bad)));
  bad = b.Memset(64, 12);
  bad.memset.dst = 0;
  Say("%s: memset dst 0 = %s", label, Name(Set(m, &bad)));
  bad = P(14);
  Say("%s: type 14 = %s", label, Name(Set(m, &bad)));
  CUgraphNodeParams hbad = P(CU_GRAPH_NODE_TYPE_HOST);
  Say("%s: host fn null = %s", label, Name(Set(h, &hbad)));
  CUgraphNodeParams kbad = b.Kernel(&a2, 0, 7);
  kbad.kernel.gridDimX = 0;
  Say("%s: kernel grid 0 = %s", label, Name(Set(k, &kbad)));
  CUgraphNodeParams ebad = P(CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  Say("%s: event record null event = %s", label, Name(Set(rec, &ebad)));
  CUgraph child3 = b.Graph();
  CUgraphNodeParams cp3 = P(CU_GRAPH_NODE_TYPE_GRAPH);
  cp3.graph.graph = child3;
  Say("%s: child graph with another shape (empty) = %s", label, Name(Set(ch, &cp3)));
  CUgraphNodeParams cpnull = P(CU_GRAPH_NODE_TYPE_GRAPH);
  Say("%s: child graph null = %s", label, Name(Set(ch, &cpnull)));
  CUgraph other = b.Graph();
  CUgraphNode on = b.Add(other, b.Memset(64, 13));
  Say("%s: node of another graph = %s", label, Name(Set(on, &mp)));
  if (exec) {
    Say("exec: null exec = %s", Name(cuGraphExecNodeSetParams(nullptr, m, &mp)));
    R(cuGraphLaunch(e, b.s));
    cuStreamSynchronize(b.s);
    Say("second launch: kernel %u, memset %u, memcpy %u/%u, child %u, host calls %d/%d",
        b.Read(0), b.Read(64), b.Read(128), b.Read(132), b.Read(192), count1, count2);
    R(cuGraphExecDestroy(e));
    Say("exec destroyed: set = %s", Name(cuGraphExecNodeSetParams(e, m, &mp)));
  } else {
    CUgraphNodeType t;
    cuGraphNodeGetType(on, &t);
    cuGraphDestroyNode(on);
    Say("graph: destroyed node = %s", Name(cuGraphNodeSetParams(on, &mp)));
    b.Run(g, "after set", 1, -1);
    Say("after set: kernel %u, memset %u, memcpy %u/%u, child %u, host calls %d/%d", b.Read(0),
        b.Read(64), b.Read(128), b.Read(132), b.Read(192), count1, count2);
  }
  cuGraphDestroy(other);
  cuGraphDestroy(g);
  cuGraphDestroy(child);
  cuGraphDestroy(child2);
  cuGraphDestroy(child3);
  cuEventDestroy(ev1);
  cuEventDestroy(ev2);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// handle: cuGraphConditionalHandleCreate.

int CaseHandle() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphConditionalHandle h1 = 0, h2 = 0, h3 = 0;
  R(cuGraphConditionalHandleCreate(&h1, g, b.ctx, 0, 0));
  R(cuGraphConditionalHandleCreate(&h2, g, b.ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
  R(cuGraphConditionalHandleCreate(&h3, g, nullptr, 5, 0));
  Say("handles nonzero = %s %s %s, distinct = %s", YesNo(h1 != 0), YesNo(h2 != 0),
      YesNo(h3 != 0), YesNo(h1 != h2 && h2 != h3 && h1 != h3));
  CUgraph g2 = b.Graph();
  CUgraphConditionalHandle h4 = 0;
  R(cuGraphConditionalHandleCreate(&h4, g2, b.ctx, 0, 0));
  Say("handle of another graph distinct = %s", YesNo(h4 != h1 && h4 != h2 && h4 != h3));
  const CUgraphConditionalHandle keep = 0x5a5a;
  CUgraphConditionalHandle x = keep;
  R(cuGraphConditionalHandleCreate(nullptr, g, b.ctx, 0, 0));
  R(cuGraphConditionalHandleCreate(&x, nullptr, b.ctx, 0, 0));
  Say("null graph: out untouched = %s", YesNo(x == keep));
  R(cuGraphConditionalHandleCreate(&x, g, b.ctx, 0, 2));
  R(cuGraphConditionalHandleCreate(&x, g, b.ctx, 0, 3));
  R(cuGraphConditionalHandleCreate(&x, g, b.ctx, 0, 0x80000000u));
  Say("bad flags: out untouched = %s", YesNo(x == keep));
  R(cuGraphConditionalHandleCreate(&x, g, reinterpret_cast<CUcontext>(0x10), 0, 0));
  R(cuGraphConditionalHandleCreate(&x, g, b.ctx, 0xffffffffu, CU_GRAPH_COND_ASSIGN_DEFAULT));
  CUgraph dead = b.Graph();
  cuGraphDestroy(dead);
  x = keep;
  R(cuGraphConditionalHandleCreate(&x, dead, b.ctx, 0, 0));
  Say("destroyed graph: out untouched = %s", YesNo(x == keep));
  // Another context (not current) as the handle's context.
  CUcontext other = nullptr;
  CUctxCreateParams cp;
  memset(&cp, 0, sizeof cp);
  CUresult r = cuCtxCreate(&other, &cp, 0, b.dev);
  Say("setup: cuCtxCreate = %s", Name(r));
  cuCtxSetCurrent(b.ctx);
  if (r == CUDA_SUCCESS) {
    R(cuGraphConditionalHandleCreate(&x, g, other, 0, 0));
    cuCtxDestroy(other);
    R(cuGraphConditionalHandleCreate(&x, g, other, 0, 0));  // destroyed context
  }
  // Many handles in one graph (no node uses them): instantiate.
  for (int i = 0; i < 100; ++i) {
    CUgraphConditionalHandle y = 0;
    CUresult rr = cuGraphConditionalHandleCreate(&y, g, b.ctx, 0, 0);
    if (rr != CUDA_SUCCESS) {
      Say("handle %d = %s", i, Name(rr));
      break;
    }
  }
  b.Add(g, P(CU_GRAPH_NODE_TYPE_EMPTY));
  b.Run(g, "graph with unused handles", 1, -1);
  cuGraphDestroy(g);
  cuGraphDestroy(g2);
  return 0;
}

int CaseNoContext(bool init) {
  if (!init) {
    CUgraphConditionalHandle h = 0;
    R(cuGraphConditionalHandleCreate(&h, nullptr, nullptr, 0, 0));
    CUgraphNode n = nullptr;
    CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_EMPTY);
    R(cuGraphAddNode(&n, nullptr, nullptr, nullptr, 0, &p));
    R(cuGraphNodeSetParams(nullptr, &p));
    R(cuGraphExecNodeSetParams(nullptr, nullptr, &p));
    auto v1 = reinterpret_cast<AddNodeV1Fn>(dlsym(RTLD_DEFAULT, "cuGraphAddNode"));
    if (v1) Say("v1 = %s", Name(v1(&n, nullptr, nullptr, 0, &p)));
    return 0;
  }
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  Base::AddArgs a;
  CUgraphNode k = b.Add(g, b.Kernel(&a, 0, 1));
  CUgraphExec e = nullptr;
  cuGraphInstantiate(&e, g, 0);
  R(cuCtxSetCurrent(nullptr));
  CUgraphNode n = nullptr;
  CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_EMPTY);
  R(cuGraphAddNode(&n, g, nullptr, nullptr, 0, &p));
  CUgraphNodeParams ms = b.Memset(0, 1);
  R(cuGraphAddNode(&n, g, nullptr, nullptr, 0, &ms));
  ms.memset.ctx = nullptr;
  R(cuGraphAddNode(&n, g, nullptr, nullptr, 0, &ms));
  CUgraphNodeParams mc = b.Memcpy(64, 0, 4);
  mc.memcpy.copyCtx = nullptr;
  R(cuGraphAddNode(&n, g, nullptr, nullptr, 0, &mc));
  Base::AddArgs a2;
  CUgraphNodeParams kp = b.Kernel(&a2, 0, 2);
  R(cuGraphAddNode(&n, g, nullptr, nullptr, 0, &kp));
  R(cuGraphNodeSetParams(k, &kp));
  R(cuGraphExecNodeSetParams(e, k, &kp));
  CUgraphConditionalHandle h = 0;
  R(cuGraphConditionalHandleCreate(&h, g, nullptr, 0, 0));
  R(cuGraphConditionalHandleCreate(&h, g, b.ctx, 0, 0));
  CUgraphNodeParams cp = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, nullptr);
  R(cuGraphAddNode(&n, g, nullptr, nullptr, 0, &cp));
  cp.conditional.ctx = b.ctx;
  R(cuGraphAddNode(&n, g, nullptr, nullptr, 0, &cp));
  cuCtxSetCurrent(b.ctx);
  cuGraphExecDestroy(e);
  cuGraphDestroy(g);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// cond:add:<variant>: conditional node creation.

int CaseCondAdd() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphConditionalHandle h = 0;
  cuGraphConditionalHandleCreate(&h, g, b.ctx, 0, 0);
  struct V {
    const char* name;
    CUgraphConditionalNodeType type;
    unsigned size;
  } vs[] = {{"IF 1", CU_GRAPH_COND_TYPE_IF, 1},         {"IF 2", CU_GRAPH_COND_TYPE_IF, 2},
            {"IF 0", CU_GRAPH_COND_TYPE_IF, 0},         {"IF 3", CU_GRAPH_COND_TYPE_IF, 3},
            {"WHILE 1", CU_GRAPH_COND_TYPE_WHILE, 1},   {"WHILE 0", CU_GRAPH_COND_TYPE_WHILE, 0},
            {"WHILE 2", CU_GRAPH_COND_TYPE_WHILE, 2},   {"SWITCH 0", CU_GRAPH_COND_TYPE_SWITCH, 0},
            {"SWITCH 1", CU_GRAPH_COND_TYPE_SWITCH, 1}, {"SWITCH 5", CU_GRAPH_COND_TYPE_SWITCH, 5},
            {"SWITCH 1000", CU_GRAPH_COND_TYPE_SWITCH, 1000},
            {"type 3", static_cast<CUgraphConditionalNodeType>(3), 1}};
  for (const V& v : vs) {
    CUgraph gv = b.Graph();
    CUgraphConditionalHandle hv = 0;
    cuGraphConditionalHandleCreate(&hv, gv, b.ctx, 0, 0);
    CUgraphNodeParams p = Cond(hv, v.type, v.size, b.ctx);
    CUgraph mine[2] = {reinterpret_cast<CUgraph>(0x77), reinterpret_cast<CUgraph>(0x77)};
    p.conditional.phGraph_out = mine;
    CUgraphNode n = nullptr;
    CUresult r = cuGraphAddNode(&n, gv, nullptr, nullptr, 0, &p);
    bool out_is_mine = p.conditional.phGraph_out == mine;
    bool mine_untouched = mine[0] == reinterpret_cast<CUgraph>(0x77);
    Say("%s: cuGraphAddNode = %s, phGraph_out still the caller's array = %s, caller's array "
        "untouched = %s",
        v.name, Name(r), YesNo(out_is_mine), YesNo(mine_untouched));
    if (r == CUDA_SUCCESS && !out_is_mine && p.conditional.phGraph_out != nullptr) {
      Say("%s: type = %d, nodes in graph = %zu", v.name, b.Type(n), b.NodeCount(gv));
      unsigned show = v.size < 4 ? v.size : 4;
      bool all_set = true, distinct = true;
      for (unsigned i = 0; i < v.size; ++i) {
        CUgraph bi = p.conditional.phGraph_out[i];
        all_set = all_set && bi != nullptr && bi != reinterpret_cast<CUgraph>(0x77);
        for (unsigned j = 0; j < i; ++j) distinct = distinct && bi != p.conditional.phGraph_out[j];
      }
      Say("%s: bodies set = %s, distinct = %s, not the parent = %s", v.name, YesNo(all_set),
          YesNo(distinct), YesNo(p.conditional.phGraph_out[0] != gv));
      for (unsigned i = 0; i < show; ++i) {
        Say("%s: body %u nodes = %zu", v.name, i, b.NodeCount(p.conditional.phGraph_out[i]));
      }
    }
    cuGraphDestroy(gv);
  }
  // Bad handles and contexts.
  CUgraphNode x = nullptr;
  CUgraphNodeParams p = Cond(0, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // handle 0
  p = Cond(0x123456789ull, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // garbage handle
  CUgraph g2 = b.Graph();
  CUgraphConditionalHandle h2 = 0;
  cuGraphConditionalHandleCreate(&h2, g2, b.ctx, 0, 0);
  p = Cond(h2, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // handle of another graph
  p = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, nullptr);
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));  // ctx null (the current one)
  p = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, reinterpret_cast<CUcontext>(0x10));
  R(cuGraphAddNode(&x, g, nullptr, nullptr, 0, &p));
  p = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  CUgraphNode c1 = nullptr;
  R(cuGraphAddNode(&c1, g, nullptr, nullptr, 0, &p));
  CUgraphNodeParams p2 = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  CUgraphNode c2 = nullptr;
  R(cuGraphAddNode(&c2, g, nullptr, nullptr, 0, &p2));  // the same handle, second node
  Say("nodes in graph = %zu", b.NodeCount(g));
  b.Run(g, "two nodes, one handle", 1, -1);
  // A context other than the handle's.
  CUcontext other = nullptr;
  CUctxCreateParams cpar;
  memset(&cpar, 0, sizeof cpar);
  if (cuCtxCreate(&other, &cpar, 0, b.dev) == CUDA_SUCCESS) {
    cuCtxSetCurrent(b.ctx);
    CUgraph g3 = b.Graph();
    CUgraphConditionalHandle h3 = 0;
    cuGraphConditionalHandleCreate(&h3, g3, b.ctx, 0, 0);
    p = Cond(h3, CU_GRAPH_COND_TYPE_IF, 1, other);
    R(cuGraphAddNode(&x, g3, nullptr, nullptr, 0, &p));  // node ctx != handle ctx
    CUgraphConditionalHandle h4 = 0;
    cuGraphConditionalHandleCreate(&h4, g3, other, 0, 0);
    p = Cond(h4, CU_GRAPH_COND_TYPE_IF, 1, other);
    R(cuGraphAddNode(&x, g3, nullptr, nullptr, 0, &p));  // both the other (non-current) one
    cuGraphDestroy(g3);
    cuCtxDestroy(other);
    cuCtxSetCurrent(b.ctx);
  }
  // The v1 symbol.
  auto v1 = reinterpret_cast<AddNodeV1Fn>(dlsym(RTLD_DEFAULT, "cuGraphAddNode"));
  if (v1) {
    CUgraph g4 = b.Graph();
    CUgraphConditionalHandle h5 = 0;
    cuGraphConditionalHandleCreate(&h5, g4, b.ctx, 0, 0);
    CUgraphNodeParams p5 = Cond(h5, CU_GRAPH_COND_TYPE_SWITCH, 3, b.ctx);
    CUresult r = v1(&x, g4, nullptr, 0, &p5);
    Say("v1 SWITCH 3 = %s, bodies set = %s", Name(r),
        YesNo(r == CUDA_SUCCESS && p5.conditional.phGraph_out != nullptr &&
              p5.conditional.phGraph_out[2] != nullptr));
    cuGraphDestroy(g4);
  }
  cuGraphDestroy(g);
  cuGraphDestroy(g2);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// cond:run:<kind>: what runs at launch for host-set default values.

// Adds a conditional node to `g` (with handle `h`) and fills each body i with add_u32(buf, 10^i).
CUgraphNode CondWithBodies(Base& b, CUgraph g, CUgraphConditionalHandle h,
                           CUgraphConditionalNodeType type, unsigned size,
                           std::vector<Base::AddArgs>* args, CUgraphNode dep = nullptr) {
  CUgraphNodeParams p = Cond(h, type, size, b.ctx);
  CUgraphNode n = b.Add(g, p, dep, "conditional");
  if (n == nullptr || p.conditional.phGraph_out == nullptr) return nullptr;
  args->resize(size);
  unsigned v = 1;
  for (unsigned i = 0; i < size; ++i, v *= 10) {
    b.Add(p.conditional.phGraph_out[i], b.Kernel(&(*args)[i], 0, v), nullptr, "body");
  }
  return n;
}

int CaseCondRun(const std::string& kind) {
  Base b;
  if (!b.Init()) return 1;
  struct V {
    const char* name;
    CUgraphConditionalNodeType type;
    unsigned size, def, flags;
  };
  std::vector<V> vs;
  const unsigned D = CU_GRAPH_COND_ASSIGN_DEFAULT;
  if (kind == "if") {
    vs = {{"IF default 1", CU_GRAPH_COND_TYPE_IF, 1, 1, D},
          {"IF default 0", CU_GRAPH_COND_TYPE_IF, 1, 0, D},
          {"IF default 7", CU_GRAPH_COND_TYPE_IF, 1, 7, D},
          {"IF/ELSE default 1", CU_GRAPH_COND_TYPE_IF, 2, 1, D},
          {"IF/ELSE default 0", CU_GRAPH_COND_TYPE_IF, 2, 0, D},
          {"IF no flag, value 1", CU_GRAPH_COND_TYPE_IF, 1, 1, 0},
          {"IF/ELSE no flag, value 1", CU_GRAPH_COND_TYPE_IF, 2, 1, 0}};
  } else if (kind == "switch") {
    vs = {{"SWITCH 3 default 0", CU_GRAPH_COND_TYPE_SWITCH, 3, 0, D},
          {"SWITCH 3 default 1", CU_GRAPH_COND_TYPE_SWITCH, 3, 1, D},
          {"SWITCH 3 default 2", CU_GRAPH_COND_TYPE_SWITCH, 3, 2, D},
          {"SWITCH 3 default 3", CU_GRAPH_COND_TYPE_SWITCH, 3, 3, D},
          {"SWITCH 3 default 100", CU_GRAPH_COND_TYPE_SWITCH, 3, 100, D},
          {"SWITCH 1 default 0", CU_GRAPH_COND_TYPE_SWITCH, 1, 0, D},
          {"SWITCH 3 no flag, value 2", CU_GRAPH_COND_TYPE_SWITCH, 3, 2, 0}};
  } else {  // while: only default 0 (a nonzero one would never end)
    vs = {{"WHILE default 0", CU_GRAPH_COND_TYPE_WHILE, 1, 0, D}};
  }
  for (const V& v : vs) {
    b.Zero();
    CUgraph g = b.Graph();
    CUgraphConditionalHandle h = 0;
    CUresult r = cuGraphConditionalHandleCreate(&h, g, b.ctx, v.def, v.flags);
    if (r != CUDA_SUCCESS) {
      Say("%s: cuGraphConditionalHandleCreate = %s", v.name, Name(r));
      continue;
    }
    std::vector<Base::AddArgs> args;
    // A kernel before the conditional node (adds 1000000), one after (adds 100000000: no; 0).
    Base::AddArgs pre;
    CUgraphNode k = b.Add(g, b.Kernel(&pre, 0, 1000000));
    CondWithBodies(b, g, h, v.type, v.size, &args, k);
    b.Run(g, v.name, 2);
    cuGraphDestroy(g);
  }
  if (kind == "if") {
    // Empty bodies: instantiate and launch with nothing in the body.
    CUgraph g = b.Graph();
    CUgraphConditionalHandle h = 0;
    cuGraphConditionalHandleCreate(&h, g, b.ctx, 1, D);
    CUgraphNodeParams p = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
    b.Add(g, p);
    b.Run(g, "IF with an empty body", 1, -1);
    cuGraphDestroy(g);
  }
  if (kind == "while") {
    // WHILE with an empty body and default 0.
    CUgraph g = b.Graph();
    CUgraphConditionalHandle h = 0;
    cuGraphConditionalHandleCreate(&h, g, b.ctx, 0, D);
    CUgraphNodeParams p = Cond(h, CU_GRAPH_COND_TYPE_WHILE, 1, b.ctx);
    b.Add(g, p);
    b.Run(g, "WHILE with an empty body, default 0", 1, -1);
    cuGraphDestroy(g);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// cond:device:<kind>: the condition set from device code (cudaGraphSetConditional).

int CaseCondDevice(const std::string& kind) {
  Base b;
  if (!b.Init()) return 1;
  CUmodule cm = nullptr;
  CUresult r = R(cuModuleLoadData(&cm, kCondPtx));
  if (r != CUDA_SUCCESS) return 0;
  CUfunction setcond = nullptr, count_while = nullptr;
  R(cuModuleGetFunction(&setcond, cm, "setcond"));
  R(cuModuleGetFunction(&count_while, cm, "count_while"));
  const unsigned D = CU_GRAPH_COND_ASSIGN_DEFAULT;
  struct SetArgs {
    CUgraphConditionalHandle h;
    unsigned v;
    void* args[2];
  };
  auto SetNode = [&](SetArgs* s, CUgraphConditionalHandle h, unsigned v) {
    s->h = h;
    s->v = v;
    s->args[0] = &s->h;
    s->args[1] = &s->v;
    CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_KERNEL);
    p.kernel.func = setcond;
    p.kernel.gridDimX = p.kernel.gridDimY = p.kernel.gridDimZ = 1;
    p.kernel.blockDimX = p.kernel.blockDimY = p.kernel.blockDimZ = 1;
    p.kernel.kernelParams = s->args;
    return p;
  };
  // Always first: IF default 0, a kernel before it sets 1. Gates the WHILE case.
  bool device_set_works = false;
  {
    b.Zero();
    CUgraph g = b.Graph();
    CUgraphConditionalHandle h = 0;
    cuGraphConditionalHandleCreate(&h, g, b.ctx, 0, D);
    SetArgs sa;
    CUgraphNode k = b.Add(g, SetNode(&sa, h, 1));
    std::vector<Base::AddArgs> args;
    CondWithBodies(b, g, h, CU_GRAPH_COND_TYPE_IF, 1, &args, k);
    b.Run(g, "IF default 0, set 1 before", 2);
    device_set_works = b.Read(0) == 2;
    cuGraphDestroy(g);
  }
  if (kind == "if") {
    // Without the flag: a kernel after the node sets 1; is the value kept for the next launch?
    b.Zero();
    CUgraph g = b.Graph();
    CUgraphConditionalHandle h = 0;
    cuGraphConditionalHandleCreate(&h, g, b.ctx, 0, 0);
    std::vector<Base::AddArgs> args;
    CUgraphNode c = CondWithBodies(b, g, h, CU_GRAPH_COND_TYPE_IF, 1, &args);
    SetArgs sa;
    b.Add(g, SetNode(&sa, h, 1), c);
    b.Run(g, "IF no flag, set 1 after", 3);
    cuGraphDestroy(g);
    // With the flag (default 0): the same.
    b.Zero();
    g = b.Graph();
    cuGraphConditionalHandleCreate(&h, g, b.ctx, 0, D);
    c = CondWithBodies(b, g, h, CU_GRAPH_COND_TYPE_IF, 1, &args);
    b.Add(g, SetNode(&sa, h, 1), c);
    b.Run(g, "IF default 0, set 1 after", 3);
    cuGraphDestroy(g);
    // IF/ELSE default 1, set 0 before.
    b.Zero();
    g = b.Graph();
    cuGraphConditionalHandleCreate(&h, g, b.ctx, 1, D);
    CUgraphNode k = b.Add(g, SetNode(&sa, h, 0));
    CondWithBodies(b, g, h, CU_GRAPH_COND_TYPE_IF, 2, &args, k);
    b.Run(g, "IF/ELSE default 1, set 0 before", 1);
    cuGraphDestroy(g);
  } else if (kind == "switch") {
    b.Zero();
    CUgraph g = b.Graph();
    CUgraphConditionalHandle h = 0;
    cuGraphConditionalHandleCreate(&h, g, b.ctx, 0, D);
    SetArgs sa;
    CUgraphNode k = b.Add(g, SetNode(&sa, h, 2));
    std::vector<Base::AddArgs> args;
    CondWithBodies(b, g, h, CU_GRAPH_COND_TYPE_SWITCH, 3, &args, k);
    b.Run(g, "SWITCH 3 default 0, set 2 before", 2);
    cuGraphDestroy(g);
  } else if (kind == "while") {
    Say("device-side set took effect = %s", YesNo(device_set_works));
    if (!device_set_works) return 0;  // a WHILE could then never end
    b.Zero();
    CUgraph g = b.Graph();
    CUgraphConditionalHandle h = 0;
    cuGraphConditionalHandleCreate(&h, g, b.ctx, 1, D);
    CUgraphNodeParams p = Cond(h, CU_GRAPH_COND_TYPE_WHILE, 1, b.ctx);
    if (b.Add(g, p) == nullptr || p.conditional.phGraph_out == nullptr) return 0;
    struct {
      CUdeviceptr p;
      CUgraphConditionalHandle h;
      unsigned limit;
    } cw = {b.buf, h, 3};
    void* cargs[] = {&cw.p, &cw.h, &cw.limit};
    CUgraphNodeParams kp = P(CU_GRAPH_NODE_TYPE_KERNEL);
    kp.kernel.func = count_while;
    kp.kernel.gridDimX = kp.kernel.gridDimY = kp.kernel.gridDimZ = 1;
    kp.kernel.blockDimX = kp.kernel.blockDimY = kp.kernel.blockDimZ = 1;
    kp.kernel.kernelParams = cargs;
    b.Add(Body(p, 0), kp);
    // 3 iterations on the first launch; on the second the counter is already >= 3: one.
    b.Run(g, "WHILE default 1, body counts to 3", 2);
    cuGraphDestroy(g);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// cond:body:<type>: which nodes a conditional body may hold (added, then instantiated).

int CaseCondBody(const std::string& type) {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphConditionalHandle h = 0;
  cuGraphConditionalHandleCreate(&h, g, b.ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
  CUgraphNodeParams cp = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  CUgraphNode c = b.Add(g, cp);
  if (c == nullptr || cp.conditional.phGraph_out == nullptr) return 0;
  CUgraph body = cp.conditional.phGraph_out[0];
  CUgraphNodeParams p = P(CU_GRAPH_NODE_TYPE_EMPTY);
  Base::AddArgs a;
  int count = 0;
  CUevent ev = nullptr;
  cuEventCreate(&ev, CU_EVENT_DEFAULT);
  CUgraph child = nullptr;
  unsigned host = 4321;
  CUgraphConditionalHandle inner = 0;
  bool uses_alloc = false;
  if (type == "empty") {
  } else if (type == "kernel") {
    p = b.Kernel(&a, 0, 3);
  } else if (type == "memset") {
    p = b.Memset(0, 3);
  } else if (type == "memcpy") {
    cuMemsetD32(b.buf + 64, 3, 1);
    p = b.Memcpy(0, 64, 4);
  } else if (type == "memcpy_host") {
    p = b.Memcpy(0, 64, 4);
    p.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_HOST;
    p.memcpy.copyParams.srcHost = &host;
  } else if (type == "host") {
    p = P(CU_GRAPH_NODE_TYPE_HOST);
    p.host.fn = CountHost;
    p.host.userData = &count;
  } else if (type == "graph") {
    child = b.Graph();
    b.Add(child, b.Memset(0, 3));
    p = P(CU_GRAPH_NODE_TYPE_GRAPH);
    p.graph.graph = child;
  } else if (type == "graph_with_host") {
    child = b.Graph();
    CUgraphNodeParams hp = P(CU_GRAPH_NODE_TYPE_HOST);
    hp.host.fn = CountHost;
    hp.host.userData = &count;
    b.Add(child, hp);
    p = P(CU_GRAPH_NODE_TYPE_GRAPH);
    p.graph.graph = child;
  } else if (type == "event_record") {
    p = P(CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    p.eventRecord.event = ev;
  } else if (type == "event_wait") {
    p = P(CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    p.eventWait.event = ev;
  } else if (type == "mem_alloc") {
    p = AllocParams(1 << 20);
    uses_alloc = true;
  } else if (type == "mem_free") {
    CUgraphNodeParams al = AllocParams(1 << 20);
    CUgraphNode an = b.Add(g, al);  // an allocation of the parent graph, freed in the body
    if (an) cuGraphAddDependencies(g, &an, &c, nullptr, 1);
    p = P(CU_GRAPH_NODE_TYPE_MEM_FREE);
    p.free.dptr = al.alloc.dptr;
  } else if (type == "cond_parent_handle" || type == "cond_body_handle") {
    cuGraphConditionalHandleCreate(&inner, type == "cond_parent_handle" ? g : body, b.ctx, 1,
                                   CU_GRAPH_COND_ASSIGN_DEFAULT);
    p = Cond(inner, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  } else if (type == "cond_same_handle") {
    p = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  } else if (type == "kernel_other_ctx") {
    // A kernel of another context (cuda.h: every kernel of a body must be of the node's context).
    CUcontext other = nullptr;
    CUctxCreateParams cpar;
    memset(&cpar, 0, sizeof cpar);
    CUresult rc = cuCtxCreate(&other, &cpar, 0, b.dev);
    CUmodule om = nullptr;
    CUfunction oadd = nullptr;
    if (rc == CUDA_SUCCESS) rc = cuModuleLoadData(&om, kPtx);
    if (rc == CUDA_SUCCESS) rc = cuModuleGetFunction(&oadd, om, "add_u32");
    Say("setup: other context and its module = %s", Name(rc));
    cuCtxSetCurrent(b.ctx);
    p = b.Kernel(&a, 0, 3);
    p.kernel.func = oadd;
  }
  CUgraphNode n = nullptr;
  CUresult r = cuGraphAddNode(&n, body, nullptr, nullptr, 0, &p);
  Say("add %s to an IF body = %s", type.c_str(), Name(r));
  if (r == CUDA_SUCCESS && p.type == CU_GRAPH_NODE_TYPE_CONDITIONAL &&
      p.conditional.phGraph_out != nullptr) {
    Base::AddArgs a2;
    b.Add(p.conditional.phGraph_out[0], b.Kernel(&a2, 0, 3), nullptr, "inner body");
  }
  if (r == CUDA_SUCCESS && p.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && uses_alloc) {
    CUgraphNodeParams fr = P(CU_GRAPH_NODE_TYPE_MEM_FREE);
    fr.free.dptr = p.alloc.dptr;
    CUgraphNode f = nullptr;
    Say("free of it in the body = %s", Name(cuGraphAddNode(&f, body, &n, nullptr, 1, &fr)));
  }
  b.Run(g, "parent", 1);
  Say("host calls = %d", count);
  cuGraphDestroy(g);
  if (child) cuGraphDestroy(child);
  cuEventDestroy(ev);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// cond:graph_ops: queries, instantiate, clone, child graphs, update, setters on conditional nodes.

int CaseCondGraphOps() {
  Base b;
  if (!b.Init()) return 1;
  const unsigned D = CU_GRAPH_COND_ASSIGN_DEFAULT;
  CUgraph g = b.Graph();
  CUgraphConditionalHandle h = 0;
  cuGraphConditionalHandleCreate(&h, g, b.ctx, 1, D);
  std::vector<Base::AddArgs> args;
  Base::AddArgs pre;
  CUgraphNode k = b.Add(g, b.Kernel(&pre, 0, 100));
  CUgraphNodeParams cp = Cond(h, CU_GRAPH_COND_TYPE_IF, 2, b.ctx);
  CUgraphNode c = b.Add(g, cp, k);
  if (c == nullptr || cp.conditional.phGraph_out == nullptr) return 0;
  CUgraph body0 = cp.conditional.phGraph_out[0], body1 = cp.conditional.phGraph_out[1];
  Base::AddArgs a0, a1;
  CUgraphNode b0 = b.Add(body0, b.Kernel(&a0, 0, 1));
  b.Add(body1, b.Kernel(&a1, 0, 10));
  Say("type = %d, parent nodes = %zu, body nodes = %zu/%zu", b.Type(c), b.NodeCount(g),
      b.NodeCount(body0), b.NodeCount(body1));
  size_t deps = 0, dependents = 0, roots = 0, edges = 0;
  cuGraphNodeGetDependencies(c, nullptr, nullptr, &deps);
  cuGraphNodeGetDependentNodes(k, nullptr, nullptr, &dependents);
  cuGraphGetRootNodes(g, nullptr, &roots);
  cuGraphGetEdges(g, nullptr, nullptr, nullptr, &edges);
  Say("conditional deps = %zu, kernel dependents = %zu, roots = %zu, edges = %zu", deps,
      dependents, roots, edges);
  size_t broots = 0;
  cuGraphGetRootNodes(body0, nullptr, &broots);
  Say("body roots = %zu", broots);
  // Instantiate twice; clone; use as a child graph.
  CUgraphExec e1 = nullptr, e2 = nullptr;
  R(cuGraphInstantiate(&e1, g, 0));
  R(cuGraphInstantiate(&e2, g, 0));
  if (e2) cuGraphExecDestroy(e2);
  CUgraph clone = nullptr;
  R(cuGraphClone(&clone, g));
  if (clone) cuGraphDestroy(clone);
  R(cuGraphClone(&clone, body0));  // a body (no conditional inside)
  if (clone) {
    Say("body clone nodes = %zu", b.NodeCount(clone));
    cuGraphDestroy(clone);
  }
  CUgraph parent = b.Graph();
  CUgraphNode x = nullptr;
  R(cuGraphAddChildGraphNode(&x, parent, nullptr, 0, g));
  CUgraphNodeParams gp = P(CU_GRAPH_NODE_TYPE_GRAPH);
  gp.graph.graph = g;
  R(cuGraphAddNode(&x, parent, nullptr, nullptr, 0, &gp));
  gp.graph.graph = body0;
  R(cuGraphAddNode(&x, parent, nullptr, nullptr, 0, &gp));  // a body as a child graph
  // Launch e1; setters on the conditional node.
  b.Zero();
  R(cuGraphLaunch(e1, b.s));
  cuStreamSynchronize(b.s);
  Say("launch: value = %u", b.Read(0));
  CUgraphNodeParams same = Cond(h, CU_GRAPH_COND_TYPE_IF, 2, b.ctx);
  R(cuGraphNodeSetParams(c, &same));
  R(cuGraphExecNodeSetParams(e1, c, &same));
  CUgraphNodeParams sw = Cond(h, CU_GRAPH_COND_TYPE_SWITCH, 2, b.ctx);
  R(cuGraphNodeSetParams(c, &sw));
  // A body kernel node's parameters in the executable graph.
  Base::AddArgs a0b;
  CUgraphNodeParams kp = b.Kernel(&a0b, 0, 2);
  R(cuGraphExecNodeSetParams(e1, b0, &kp));
  R(cuGraphNodeSetParams(b0, &kp));
  b.Zero();
  R(cuGraphLaunch(e1, b.s));
  cuStreamSynchronize(b.s);
  Say("launch after the body setters: value = %u", b.Read(0));
  // cuGraphExecUpdate from an identical graph whose body kernel adds 5, default 0 (else: 50).
  CUgraph g2 = b.Graph();
  CUgraphConditionalHandle h2 = 0;
  cuGraphConditionalHandleCreate(&h2, g2, b.ctx, 0, D);
  Base::AddArgs pre2;
  CUgraphNode k2 = b.Add(g2, b.Kernel(&pre2, 0, 100));
  CUgraphNodeParams cp2 = Cond(h2, CU_GRAPH_COND_TYPE_IF, 2, b.ctx);
  b.Add(g2, cp2, k2);
  Base::AddArgs c0, c1;
  b.Add(Body(cp2, 0), b.Kernel(&c0, 0, 5));
  b.Add(Body(cp2, 1), b.Kernel(&c1, 0, 50));
  CUgraphExecUpdateResultInfo info;
  memset(&info, 0, sizeof info);
  R(cuGraphExecUpdate(e1, g2, &info));
  Say("update from an identical graph: result %d, errorNode set = %s", static_cast<int>(info.result),
      YesNo(info.errorNode != nullptr));
  b.Zero();
  R(cuGraphLaunch(e1, b.s));
  cuStreamSynchronize(b.s);
  Say("launch after update: value = %u", b.Read(0));
  // Update from a graph whose body has one more node.
  CUgraph g3 = b.Graph();
  CUgraphConditionalHandle h3 = 0;
  cuGraphConditionalHandleCreate(&h3, g3, b.ctx, 1, D);
  Base::AddArgs pre3;
  CUgraphNode k3 = b.Add(g3, b.Kernel(&pre3, 0, 100));
  CUgraphNodeParams cp3 = Cond(h3, CU_GRAPH_COND_TYPE_IF, 2, b.ctx);
  b.Add(g3, cp3, k3);
  Base::AddArgs d0, d1, d2;
  b.Add(Body(cp3, 0), b.Kernel(&d0, 0, 5));
  b.Add(Body(cp3, 0), b.Kernel(&d2, 0, 5));
  b.Add(Body(cp3, 1), b.Kernel(&d1, 0, 50));
  memset(&info, 0, sizeof info);
  R(cuGraphExecUpdate(e1, g3, &info));
  Say("update from a graph with another body topology: result %d, errorNode set = %s",
      static_cast<int>(info.result), YesNo(info.errorNode != nullptr));
  // Update from a graph with a SWITCH instead of the IF.
  CUgraph g4 = b.Graph();
  CUgraphConditionalHandle h4 = 0;
  cuGraphConditionalHandleCreate(&h4, g4, b.ctx, 1, D);
  Base::AddArgs pre4;
  CUgraphNode k4 = b.Add(g4, b.Kernel(&pre4, 0, 100));
  CUgraphNodeParams cp4 = Cond(h4, CU_GRAPH_COND_TYPE_SWITCH, 2, b.ctx);
  b.Add(g4, cp4, k4);
  Base::AddArgs e0, e1a;
  b.Add(Body(cp4, 0), b.Kernel(&e0, 0, 5));
  b.Add(Body(cp4, 1), b.Kernel(&e1a, 0, 50));
  memset(&info, 0, sizeof info);
  R(cuGraphExecUpdate(e1, g4, &info));
  Say("update from a graph with a SWITCH: result %d, errorNode set = %s",
      static_cast<int>(info.result), YesNo(info.errorNode != nullptr));
  // Update from a graph with an empty node in place of the conditional.
  CUgraph g5 = b.Graph();
  Base::AddArgs pre5;
  CUgraphNode k5 = b.Add(g5, b.Kernel(&pre5, 0, 100));
  b.Add(g5, P(CU_GRAPH_NODE_TYPE_EMPTY), k5);
  memset(&info, 0, sizeof info);
  R(cuGraphExecUpdate(e1, g5, &info));
  Say("update from a graph with an empty node instead: result %d, errorNode set = %s",
      static_cast<int>(info.result), YesNo(info.errorNode != nullptr));
  b.Zero();
  R(cuGraphLaunch(e1, b.s));
  cuStreamSynchronize(b.s);
  Say("launch after the failed updates: value = %u", b.Read(0));
  R(cuGraphUpload(e1, b.s));
  R(cuGraphExecDestroy(e1));
  // Instantiate again now that the first one is gone.
  CUgraphExec e3 = nullptr;
  R(cuGraphInstantiate(&e3, g, 0));
  if (e3) cuGraphExecDestroy(e3);
  // Destroying the conditional node, then the graph.
  R(cuGraphDestroyNode(c));
  Say("parent nodes after destroying it = %zu", b.NodeCount(g));
  b.Run(g, "after destroying the conditional node", 1);
  for (CUgraph gg : {g, g2, g3, g4, g5, parent}) cuGraphDestroy(gg);
  return 0;
}

// cond:nested: conditional inside a conditional's body, and a child graph holding a conditional.
int CaseCondNested() {
  Base b;
  if (!b.Init()) return 1;
  const unsigned D = CU_GRAPH_COND_ASSIGN_DEFAULT;
  CUgraph g = b.Graph();
  CUgraphConditionalHandle outer = 0, inner = 0;
  cuGraphConditionalHandleCreate(&outer, g, b.ctx, 1, D);
  cuGraphConditionalHandleCreate(&inner, g, b.ctx, 2, D);
  CUgraphNodeParams op = Cond(outer, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  if (b.Add(g, op) == nullptr || op.conditional.phGraph_out == nullptr) return 0;
  CUgraph ob = op.conditional.phGraph_out[0];
  Base::AddArgs a;
  CUgraphNode k = b.Add(ob, b.Kernel(&a, 0, 1));
  CUgraphNodeParams ip = Cond(inner, CU_GRAPH_COND_TYPE_SWITCH, 3, b.ctx);
  CUgraphNode in = nullptr;
  R(cuGraphAddNode(&in, ob, &k, nullptr, 1, &ip));
  if (in && ip.conditional.phGraph_out != nullptr) {
    std::vector<Base::AddArgs> args(3);
    unsigned v = 10;
    for (int i = 0; i < 3; ++i, v *= 10) b.Add(Body(ip, i), b.Kernel(&args[i], 0, v));
    Say("outer body nodes = %zu, inner type = %d", b.NodeCount(ob), b.Type(in));
    b.Run(g, "IF(1) { add 1; SWITCH(2) {10, 100, 1000} }", 2);
  }
  // Handle created on the body graph, used there.
  CUgraph g2 = b.Graph();
  CUgraphConditionalHandle o2 = 0, i2 = 0;
  cuGraphConditionalHandleCreate(&o2, g2, b.ctx, 1, D);
  CUgraphNodeParams op2 = Cond(o2, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  if (b.Add(g2, op2) == nullptr || op2.conditional.phGraph_out == nullptr) return 0;
  R(cuGraphConditionalHandleCreate(&i2, Body(op2, 0), b.ctx, 1, D));
  CUgraphNodeParams ip2 = Cond(i2, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  CUgraphNode in2 = nullptr;
  R(cuGraphAddNode(&in2, Body(op2, 0), nullptr, nullptr, 0, &ip2));
  if (in2 && ip2.conditional.phGraph_out != nullptr) {
    Base::AddArgs a2;
    b.Add(Body(ip2, 0), b.Kernel(&a2, 0, 7));
    b.Zero();
    b.Run(g2, "handle made on the body graph", 1);
  }
  // The parent's handle used in the body's nested node when the parent has it in use too.
  CUgraph g3 = b.Graph();
  CUgraphConditionalHandle o3 = 0;
  cuGraphConditionalHandleCreate(&o3, g3, b.ctx, 1, D);
  CUgraphNodeParams op3 = Cond(o3, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  if (b.Add(g3, op3) == nullptr || op3.conditional.phGraph_out == nullptr) return 0;
  CUgraphNodeParams ip3 = Cond(o3, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  CUgraphNode in3 = nullptr;
  R(cuGraphAddNode(&in3, Body(op3, 0), nullptr, nullptr, 0, &ip3));
  if (in3 && ip3.conditional.phGraph_out != nullptr) {
    Base::AddArgs a3;
    b.Add(Body(ip3, 0), b.Kernel(&a3, 0, 9));
    b.Zero();
    b.Run(g3, "the outer handle reused inside", 1);
  }
  // A handle of the body graph used by a node of the parent graph.
  CUgraph g4 = b.Graph();
  CUgraphConditionalHandle o4 = 0, b4 = 0;
  cuGraphConditionalHandleCreate(&o4, g4, b.ctx, 1, D);
  CUgraphNodeParams op4 = Cond(o4, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  if (b.Add(g4, op4) == nullptr || op4.conditional.phGraph_out == nullptr) return 0;
  cuGraphConditionalHandleCreate(&b4, Body(op4, 0), b.ctx, 1, D);
  CUgraphNodeParams pp4 = Cond(b4, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  CUgraphNode x = nullptr;
  R(cuGraphAddNode(&x, g4, nullptr, nullptr, 0, &pp4));
  for (CUgraph gg : {g, g2, g3, g4}) cuGraphDestroy(gg);
  return 0;
}

// cond:destroy_body: destroying a body graph the driver owns (may be refused).
int CaseCondDestroyBody() {
  Base b;
  if (!b.Init()) return 1;
  CUgraph g = b.Graph();
  CUgraphConditionalHandle h = 0;
  cuGraphConditionalHandleCreate(&h, g, b.ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT);
  CUgraphNodeParams cp = Cond(h, CU_GRAPH_COND_TYPE_IF, 1, b.ctx);
  if (b.Add(g, cp) == nullptr || cp.conditional.phGraph_out == nullptr) return 0;
  CUgraph body = cp.conditional.phGraph_out[0];
  CUgraphExec e = nullptr;
  R(cuGraphInstantiate(&e, body, 0));  // a body instantiated on its own
  if (e) cuGraphExecDestroy(e);
  R(cuGraphDestroy(body));
  Say("parent nodes = %zu", b.NodeCount(g));
  b.Run(g, "parent after its body was destroyed", 1, -1);
  R(cuGraphDestroy(g));
  return 0;
}

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {"add:common", "add:abi",  "add:kernel", "add:memcpy",
                                    "add:memset", "add:host", "add:graph",  "add:event",
                                    "add:mem",    "add:unmodelled", "setparams:graph",
                                    "setparams:exec", "handle", "noctx", "noinit", "cond:add",
                                    "cond:run:if", "cond:run:switch", "cond:run:while",
                                    "cond:device:if", "cond:device:switch", "cond:device:while"};
  for (const char* t : {"empty", "kernel", "memset", "memcpy", "memcpy_host", "host", "graph",
                        "graph_with_host", "event_record", "event_wait", "mem_alloc", "mem_free",
                        "cond_parent_handle", "cond_body_handle", "cond_same_handle",
                        "kernel_other_ctx"}) {
    cases.push_back(std::string("cond:body:") + t);
  }
  cases.push_back("cond:graph_ops");
  cases.push_back("cond:nested");
  cases.push_back("cond:destroy_body");
  return cases;
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  auto after = [&](const char* prefix) { return c.substr(strlen(prefix)); };
  if (c == "add:common") return CaseAddCommon();
  if (c == "add:abi") return CaseAddAbi();
  if (c == "add:kernel") return CaseAddKernel();
  if (c == "add:memcpy") return CaseAddMemcpy();
  if (c == "add:memset") return CaseAddMemset();
  if (c == "add:host") return CaseAddHost();
  if (c == "add:graph") return CaseAddGraph();
  if (c == "add:event") return CaseAddEvent();
  if (c == "add:mem") return CaseAddMem();
  if (c == "add:unmodelled") return CaseAddUnmodelled();
  if (c == "setparams:graph") return CaseSetParams(false);
  if (c == "setparams:exec") return CaseSetParams(true);
  if (c == "handle") return CaseHandle();
  if (c == "noctx") return CaseNoContext(true);
  if (c == "noinit") return CaseNoContext(false);
  if (c == "cond:add") return CaseCondAdd();
  if (c.rfind("cond:run:", 0) == 0) return CaseCondRun(after("cond:run:"));
  if (c.rfind("cond:device:", 0) == 0) return CaseCondDevice(after("cond:device:"));
  if (c.rfind("cond:body:", 0) == 0) return CaseCondBody(after("cond:body:"));
  if (c == "cond:graph_ops") return CaseCondGraphOps();
  if (c == "cond:nested") return CaseCondNested();
  if (c == "cond:destroy_body") return CaseCondDestroyBody();
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
  std::string dir = "/tmp/graphnode_probe_" + std::to_string(getpid());
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
    fprintf(stderr, "usage: graphnode_probe all [jobs] | graphnode_probe list | graphnode_probe <case>\n");
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
