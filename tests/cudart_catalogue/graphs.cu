// CUDA graphs through the runtime: stream capture in the three modes (kernels,
// copies, memsets, host functions), calls refused during capture,
// instantiation, launch, upload and update, and graphs built node by node;
// results are checked by sums.
#include <cstdio>

#include <cuda_runtime.h>

namespace {

void Show(const char* what, cudaError_t e) { std::printf("%s: %s\n", what, cudaGetErrorName(e)); }

constexpr int kN = 4096;
int host_buffer[kN];

__global__ void AddScalar(int* out, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += value;
}

__global__ void Scale(int* out, int n, int factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] *= factor;
}

void CUDART_CB Count(void* data) { ++*static_cast<int*>(data); }

// Copies the buffer back and prints its sum.
void PrintSum(const char* label, const int* d) {
  cudaError_t e = cudaMemcpy(host_buffer, d, sizeof(host_buffer), cudaMemcpyDeviceToHost);
  long long sum = 0;
  for (int x : host_buffer) sum += x;
  std::printf("%s: copy %s, sum %lld\n", label, cudaGetErrorName(e), sum);
}

void PrintCounts(const char* label, cudaGraph_t g) {
  size_t nodes = 0, edges = 0;
  cudaError_t a = cudaGraphGetNodes(g, nullptr, &nodes);
  cudaError_t b = cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges);
  std::printf("%s: %zu nodes, %zu edges (%s %s)\n", label, nodes, edges, cudaGetErrorName(a),
              cudaGetErrorName(b));
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  int* d = nullptr;
  Show("cudaMalloc", cudaMalloc(&d, kN * sizeof(int)));
  cudaStream_t s, side;
  Show("cudaStreamCreate", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Show("cudaStreamCreate side", cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  int host_calls = 0;

  // Global capture: memset, kernels, a host function; nothing runs until the
  // graph is launched.
  cudaStreamCaptureStatus status;
  Show("cudaStreamIsCapturing before", cudaStreamIsCapturing(s, &status));
  std::printf("status %d\n", static_cast<int>(status));
  Show("cudaStreamBeginCapture global", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  Show("cudaStreamIsCapturing", cudaStreamIsCapturing(s, &status));
  std::printf("status %d\n", static_cast<int>(status));
  Show("cudaMemsetAsync", cudaMemsetAsync(d, 0, kN * sizeof(int), s));
  AddScalar<<<kN / 256, 256, 0, s>>>(d, kN, 3);
  Scale<<<kN / 256, 256, 0, s>>>(d, kN, 2);
  Show("cudaLaunchHostFunc", cudaLaunchHostFunc(s, Count, &host_calls));
  unsigned long long id = 0;
  cudaGraph_t captured = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t ndeps = 0;
  Show("cudaStreamGetCaptureInfo",
       cudaStreamGetCaptureInfo(s, &status, &id, &captured, &deps, nullptr, &ndeps));
  std::printf("status %d, id nonzero %d, graph set %d, %zu dependencies\n",
              static_cast<int>(status), id != 0, captured != nullptr, ndeps);
  cudaGraph_t g = nullptr;
  Show("cudaStreamEndCapture", cudaStreamEndCapture(s, &g));
  PrintCounts("captured graph", g);
  std::printf("host function ran during capture: %d\n", host_calls);
  cudaGraphExec_t exec = nullptr;
  Show("cudaGraphInstantiate", cudaGraphInstantiate(&exec, g, 0));
  Show("cudaGraphUpload", cudaGraphUpload(exec, s));
  Show("cudaGraphLaunch", cudaGraphLaunch(exec, s));
  Show("cudaGraphLaunch again", cudaGraphLaunch(exec, s));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s));
  std::printf("host function calls: %d\n", host_calls);
  PrintSum("after two launches ((0+3)*2)", d);

  // Calls refused during a global capture invalidate it.
  Show("cudaStreamBeginCapture global", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  AddScalar<<<kN / 256, 256, 0, s>>>(d, kN, 1);
  int* extra = nullptr;
  Show("cudaMalloc during global capture", cudaMalloc(&extra, 256));
  Show("cudaStreamIsCapturing", cudaStreamIsCapturing(s, &status));
  std::printf("status %d\n", static_cast<int>(status));
  cudaGraph_t invalid = reinterpret_cast<cudaGraph_t>(1);
  Show("cudaStreamEndCapture", cudaStreamEndCapture(s, &invalid));
  std::printf("graph is null: %d\n", invalid == nullptr);
  Show("get", cudaGetLastError());
  Show("cudaStreamBeginCapture global", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  Show("cudaStreamSynchronize during capture", cudaStreamSynchronize(s));
  Show("cudaStreamEndCapture", cudaStreamEndCapture(s, &invalid));
  Show("cudaStreamBeginCapture on the legacy stream",
       cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));
  Show("cudaStreamEndCapture not capturing", cudaStreamEndCapture(s, &invalid));
  Show("get", cudaGetLastError());

  // Thread-local capture refuses cudaMalloc too; relaxed capture allows it.
  Show("cudaStreamBeginCapture thread-local",
       cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  Show("cudaMalloc during thread-local capture", cudaMalloc(&extra, 256));
  Show("cudaStreamEndCapture", cudaStreamEndCapture(s, &invalid));
  Show("get", cudaGetLastError());
  Show("cudaStreamBeginCapture relaxed", cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  Show("cudaMalloc during relaxed capture", cudaMalloc(&extra, 256 * sizeof(int)));
  Show("cudaMemcpyAsync device to device",
       cudaMemcpyAsync(extra, d, 256 * sizeof(int), cudaMemcpyDeviceToDevice, s));
  AddScalar<<<1, 256, 0, s>>>(extra, 256, 1000);
  Show("cudaMemcpyAsync back",
       cudaMemcpyAsync(d, extra, 256 * sizeof(int), cudaMemcpyDeviceToDevice, s));
  cudaGraph_t relaxed = nullptr;
  Show("cudaStreamEndCapture", cudaStreamEndCapture(s, &relaxed));
  PrintCounts("relaxed graph", relaxed);
  Show("get", cudaGetLastError());

  // Update the first executable graph with a graph of the same shape but other
  // values.
  Show("cudaStreamBeginCapture global", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  Show("cudaMemsetAsync", cudaMemsetAsync(d, 0, kN * sizeof(int), s));
  AddScalar<<<kN / 256, 256, 0, s>>>(d, kN, 5);
  Scale<<<kN / 256, 256, 0, s>>>(d, kN, 3);
  Show("cudaLaunchHostFunc", cudaLaunchHostFunc(s, Count, &host_calls));
  cudaGraph_t g2 = nullptr;
  Show("cudaStreamEndCapture", cudaStreamEndCapture(s, &g2));
  cudaGraphExecUpdateResultInfo info = {};
  Show("cudaGraphExecUpdate same shape", cudaGraphExecUpdate(exec, g2, &info));
  std::printf("update result %d\n", static_cast<int>(info.result));
  Show("cudaGraphLaunch", cudaGraphLaunch(exec, s));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s));
  PrintSum("after the updated graph ((0+5)*3)", d);
  Show("cudaGraphExecUpdate other shape", cudaGraphExecUpdate(exec, relaxed, &info));
  std::printf("update result %d\n", static_cast<int>(info.result));
  Show("get", cudaGetLastError());

  // A graph built node by node: memset -> kernel -> (host, child graph) ->
  // event record, with an empty join node and a copy at the end.
  cudaGraph_t built = nullptr;
  Show("cudaGraphCreate", cudaGraphCreate(&built, 0));
  cudaMemsetParams ms = {};
  ms.dst = d;
  ms.value = 1;
  ms.elementSize = sizeof(int);
  ms.width = kN;
  ms.height = 1;
  cudaGraphNode_t memset_node, kernel_node, host_node, child_node, empty_node, record_node,
      wait_node, copy_node;
  Show("cudaGraphAddMemsetNode", cudaGraphAddMemsetNode(&memset_node, built, nullptr, 0, &ms));
  int n = kN;
  int add = 9;
  void* args[] = {&d, &n, &add};
  cudaKernelNodeParams kp = {};
  kp.func = reinterpret_cast<void*>(AddScalar);
  kp.gridDim = dim3(kN / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = args;
  Show("cudaGraphAddKernelNode", cudaGraphAddKernelNode(&kernel_node, built, &memset_node, 1, &kp));
  cudaHostNodeParams hp = {};
  hp.fn = Count;
  hp.userData = &host_calls;
  Show("cudaGraphAddHostNode", cudaGraphAddHostNode(&host_node, built, &kernel_node, 1, &hp));
  cudaGraph_t child = nullptr;
  Show("cudaGraphCreate child", cudaGraphCreate(&child, 0));
  int factor = 2;
  void* scale_args[] = {&d, &n, &factor};
  kp.func = reinterpret_cast<void*>(Scale);
  kp.kernelParams = scale_args;
  cudaGraphNode_t child_kernel;
  Show("cudaGraphAddKernelNode in child",
       cudaGraphAddKernelNode(&child_kernel, child, nullptr, 0, &kp));
  Show("cudaGraphAddChildGraphNode",
       cudaGraphAddChildGraphNode(&child_node, built, &kernel_node, 1, child));
  cudaGraphNode_t join[] = {host_node, child_node};
  Show("cudaGraphAddEmptyNode", cudaGraphAddEmptyNode(&empty_node, built, join, 2));
  cudaEvent_t ev;
  Show("cudaEventCreate", cudaEventCreate(&ev));
  Show("cudaGraphAddEventRecordNode",
       cudaGraphAddEventRecordNode(&record_node, built, &empty_node, 1, ev));
  Show("cudaGraphAddEventWaitNode",
       cudaGraphAddEventWaitNode(&wait_node, built, &record_node, 1, ev));
  Show("cudaGraphAddMemcpyNode1D",
       cudaGraphAddMemcpyNode1D(&copy_node, built, &wait_node, 1, extra, d, 256 * sizeof(int),
                                cudaMemcpyDeviceToDevice));
  PrintCounts("built graph", built);
  PrintCounts("child graph", child);
  cudaGraph_t clone = nullptr;
  Show("cudaGraphClone", cudaGraphClone(&clone, built));
  PrintCounts("clone", clone);
  cudaGraphExec_t built_exec = nullptr;
  Show("cudaGraphInstantiate built", cudaGraphInstantiate(&built_exec, built, 0));
  Show("cudaGraphLaunch built", cudaGraphLaunch(built_exec, s));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s));
  PrintSum("built graph (memset 1 bytes, +9, *2)", d);
  std::printf("host function calls: %d\n", host_calls);

  // Change the executable graph's kernel node parameters; the graph itself
  // keeps its own.
  add = -1;  // the memset writes 1 into each int: (1 - 1) * 2 = 0
  kp.func = reinterpret_cast<void*>(AddScalar);
  kp.kernelParams = args;
  Show("cudaGraphExecKernelNodeSetParams",
       cudaGraphExecKernelNodeSetParams(built_exec, kernel_node, &kp));
  Show("cudaGraphLaunch built", cudaGraphLaunch(built_exec, s));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s));
  PrintSum("after the exec's parameters changed (all 0)", d);
  cudaGraphExec_t clone_exec = nullptr;
  Show("cudaGraphInstantiate clone", cudaGraphInstantiate(&clone_exec, clone, 0));
  Show("cudaGraphLaunch clone", cudaGraphLaunch(clone_exec, s));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s));
  PrintSum("the clone keeps +9", d);
  int copied[256];
  cudaMemcpy(copied, extra, sizeof(copied), cudaMemcpyDeviceToHost);
  long long copy_sum = 0;
  for (int x : copied) copy_sum += x;
  std::printf("copy node's destination sum %lld\n", copy_sum);

  // Invalid uses of explicit graphs.
  cudaGraphNode_t bad;
  Show("cudaGraphAddKernelNode null params",
       cudaGraphAddKernelNode(&bad, built, nullptr, 0, nullptr));
  Show("cudaGraphAddEmptyNode with null dependencies",
       cudaGraphAddEmptyNode(&bad, built, nullptr, 2));
  Show("cudaStreamBeginCapture side", cudaStreamBeginCapture(side, cudaStreamCaptureModeGlobal));
  Show("cudaGraphLaunch into a capturing stream", cudaGraphLaunch(exec, side));
  cudaGraph_t discarded = nullptr;
  Show("cudaStreamEndCapture", cudaStreamEndCapture(side, &discarded));
  if (discarded != nullptr) cudaGraphDestroy(discarded);
  Show("get", cudaGetLastError());

  // Clean-up: every call's result on one line.
  std::printf("clean-up:");
  cudaGraphExec_t execs[] = {exec, built_exec, clone_exec};
  for (cudaGraphExec_t x : execs) std::printf(" %s", cudaGetErrorName(cudaGraphExecDestroy(x)));
  cudaGraph_t graphs[] = {g, g2, relaxed, built, child, clone};
  for (cudaGraph_t x : graphs) std::printf(" %s", cudaGetErrorName(cudaGraphDestroy(x)));
  std::printf(" %s", cudaGetErrorName(cudaEventDestroy(ev)));
  std::printf(" %s", cudaGetErrorName(cudaFree(extra)));
  std::printf(" %s", cudaGetErrorName(cudaFree(d)));
  std::printf(" %s", cudaGetErrorName(cudaStreamDestroy(s)));
  std::printf(" %s\n", cudaGetErrorName(cudaStreamDestroy(side)));
  std::printf("done\n");
  return 0;
}
