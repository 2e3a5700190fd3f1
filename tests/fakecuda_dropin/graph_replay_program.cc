// Copyright 2026 The cuhal Authors.
// A plain cuda.h program (no cuhal) that captures a stream into a graph (a memset, a kernel, a
// host-to-device and a device-to-device copy, and a kernel on an accumulator), replays the graph
// three times and prints every return code and the results, one per line. Its output on the
// drop-in fake must equal its output on the real driver (graph_replay_expected.txt). Build and
// run it against the real libcuda.so.1 with
//   g++ -std=c++17 -I/usr/local/cuda/include -o /tmp/graph_replay
//       tests/fakecuda_dropin/graph_replay_program.cc -lcuda && /tmp/graph_replay
// (one command line)
// and against the drop-in through LD_LIBRARY_PATH=<build>/dropin (the CTest
// fakecuda_dropin_graph_replay does that).
#include <cuda.h>

#include <cstdio>

namespace {

int g_failures = 0;

const char* Name(CUresult r) {
  const char* name = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) return "(unnamed)";
  return name;
}

// Prints "<what> = <CUresult>" and returns the result.
#define R(expr) Res(#expr, (expr))
CUresult Res(const char* what, CUresult r) {
  std::printf("%s = %s\n", what, Name(r));
  if (r != CUDA_SUCCESS) ++g_failures;
  return r;
}

// add_u32(u32* p, u32 v): *p += v (one thread).
const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
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

const char* NodeTypeName(CUgraphNodeType t) {
  switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
      return "KERNEL";
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      return "MEMCPY";
    case CU_GRAPH_NODE_TYPE_MEMSET:
      return "MEMSET";
    case CU_GRAPH_NODE_TYPE_HOST:
      return "HOST";
    case CU_GRAPH_NODE_TYPE_GRAPH:
      return "GRAPH";
    case CU_GRAPH_NODE_TYPE_EMPTY:
      return "EMPTY";
    default:
      return "OTHER";
  }
}

unsigned host_source[4] = {100, 101, 102, 103};  // outlives the graph

}  // namespace

int main() {
  R(cuInit(0));
  CUdevice dev = 0;
  R(cuDeviceGet(&dev, 0));
  CUcontext ctx = nullptr;
  R(cuDevicePrimaryCtxRetain(&ctx, dev));
  R(cuCtxSetCurrent(ctx));
  CUmodule mod = nullptr;
  R(cuModuleLoadData(&mod, kPtx));
  CUfunction add = nullptr;
  R(cuModuleGetFunction(&add, mod, "add_u32"));
  CUstream s = nullptr;
  R(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr buf = 0, acc = 0;
  R(cuMemAlloc(&buf, 16 * sizeof(unsigned)));
  R(cuMemAlloc(&acc, sizeof(unsigned)));
  R(cuMemsetD32(buf, 0, 16));
  R(cuMemsetD32(acc, 0, 1));

  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  R(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  R(cuStreamIsCapturing(s, &status));
  std::printf("capturing = %s\n", status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "yes" : "no");
  R(cuMemsetD32Async(buf, 1, 16, s));
  CUdeviceptr p = buf;
  unsigned v = 5;
  void* args[] = {&p, &v};
  R(cuLaunchKernel(add, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  R(cuMemcpyHtoDAsync(buf + 4 * sizeof(unsigned), host_source, sizeof host_source, s));
  R(cuMemcpyDtoDAsync(buf + 8 * sizeof(unsigned), buf, 8 * sizeof(unsigned), s));
  CUdeviceptr q = acc;
  unsigned one = 1;
  void* acc_args[] = {&q, &one};
  R(cuLaunchKernel(add, 1, 1, 1, 1, 1, 1, 0, s, acc_args, nullptr));
  CUgraph graph = nullptr;
  R(cuStreamEndCapture(s, &graph));
  R(cuStreamIsCapturing(s, &status));
  std::printf("capturing = %s\n", status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "yes" : "no");

  unsigned before[16] = {};
  R(cuMemcpyDtoH(before, buf, sizeof before));
  std::printf("before replay: buf[0] = %u (nothing ran during capture)\n", before[0]);
  size_t n = 0;
  R(cuGraphGetNodes(graph, nullptr, &n));
  std::printf("nodes = %zu\n", n);
  CUgraphNode nodes[8] = {};
  n = 8;
  R(cuGraphGetNodes(graph, nodes, &n));
  for (size_t i = 0; i < n && i < 8; ++i) {
    CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
    R(cuGraphNodeGetType(nodes[i], &t));
    std::printf("node %zu type = %s\n", i, NodeTypeName(t));
  }
  CUgraphExec exec = nullptr;
  R(cuGraphInstantiateWithFlags(&exec, graph, 0));
  for (int replay = 1; replay <= 3; ++replay) {
    R(cuGraphLaunch(exec, s));
    R(cuStreamSynchronize(s));
    unsigned out[16] = {};
    unsigned total = 0;
    R(cuMemcpyDtoH(out, buf, sizeof out));
    R(cuMemcpyDtoH(&total, acc, sizeof total));
    std::printf("replay %d: buf =", replay);
    for (unsigned x : out) std::printf(" %u", x);
    std::printf(", acc = %u\n", total);
  }
  R(cuGraphExecDestroy(exec));
  R(cuGraphDestroy(graph));
  R(cuMemFree(buf));
  R(cuMemFree(acc));
  R(cuStreamDestroy(s));
  R(cuModuleUnload(mod));
  R(cuDevicePrimaryCtxRelease(dev));
  std::printf("graph replay: %s\n", g_failures == 0 ? "OK" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
