// Copyright 2026 The cuhal Authors.
// Streams and events through the CUDA runtime: creation with flags and priorities, queries while
// work is held back (a host function waits for the program's go-ahead, so that "not ready" is
// deterministic), synchronization, events (timing, disabled timing, never recorded), waits between
// streams, the order of host functions and callbacks, the legacy and per-thread default streams,
// and kernels on streams with their results checked. Times are never printed, only their sign.
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace {

void Show(const char* what, cudaError_t error) {
  std::printf("%s: %s\n", what, cudaGetErrorName(error));
}

__global__ void Fill(int* p, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

__global__ void AddFrom(int* p, const int* q, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += q[i];
}

constexpr int kCount = 1024;

// Reads the device array and prints whether every element equals `value`.
void Expect(const char* what, const int* device, int value) {
  static int host[kCount];
  cudaError_t error = cudaMemcpy(host, device, sizeof(host), cudaMemcpyDeviceToHost);
  int right = 0;
  for (int v : host) right += v == value;
  std::printf("%s: %s, %d of %d elements are %d\n", what, cudaGetErrorName(error), right, kCount,
              value);
}

// A gate a host function waits behind: the stream it is enqueued on stays busy until Open.
// Only one gate is ever closed at a time (the host functions of a context run one at a time on
// one driver thread: docs/driver_facts.md). A call the program makes while the gate is closed
// must not wait for the held-back stream (the real driver would then deadlock, as the H100 run of
// 2026-12-06 did): a watchdog opens the gate after kWatchdogSeconds and Open then says so.
constexpr int kWatchdogSeconds = 10;
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> forced{false};
  std::thread watchdog;
  static void CUDART_CB Wait(void* data) {
    auto* gate = static_cast<Gate*>(data);
    while (!gate->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void Close(cudaStream_t stream) {
    open = false;
    forced = false;
    cudaLaunchHostFunc(stream, Wait, this);
    watchdog = std::thread([this] {
      for (int i = 0; i < kWatchdogSeconds * 1000 && !open.load(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!open.exchange(true)) forced = true;
    });
  }
  void Open() {
    open = true;
    if (watchdog.joinable()) watchdog.join();
    if (forced) {
      std::printf("== the watchdog opened the gate after %d s: a call waited for the held-back "
                  "stream\n",
                  kWatchdogSeconds);
    }
  }
  ~Gate() {
    open = true;
    if (watchdog.joinable()) watchdog.join();
  }
};

// Launches each kernel once, before any gate is closed. With lazy loading (CUDA_MODULE_LOADING,
// LAZY by default since CUDA 12.2) a kernel is loaded at its first launch, and loading "might
// require context synchronization" (CUDA C++ Programming Guide, "Lazy Loading", possible issues):
// a first launch while a gate is closed would wait for the held-back host function, which waits
// for the program. The H100 run of 2026-12-06 hung with the first Fill launch behind a gate.
void LoadKernels(int* a, int* b) {
  Fill<<<kCount / 256, 256>>>(a, kCount, 0);
  AddFrom<<<kCount / 256, 256>>>(b, a, kCount);
  cudaDeviceSynchronize();
}

void Creation() {
  cudaStream_t s = nullptr;
  unsigned flags = 99;
  int priority = 99;
  Show("cudaStreamCreate", cudaStreamCreate(&s));
  Show("cudaStreamGetFlags", cudaStreamGetFlags(s, &flags));
  Show("cudaStreamGetPriority", cudaStreamGetPriority(s, &priority));
  std::printf("flags %u, priority %d\n", flags, priority);
  int device = -1;
  Show("cudaStreamGetDevice", cudaStreamGetDevice(s, &device));
  std::printf("stream device %d\n", device);
  Show("cudaStreamQuery(empty)", cudaStreamQuery(s));
  Show("cudaStreamSynchronize(empty)", cudaStreamSynchronize(s));
  Show("cudaStreamDestroy", cudaStreamDestroy(s));

  Show("cudaStreamCreateWithFlags(NonBlocking)",
       cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Show("cudaStreamGetFlags", cudaStreamGetFlags(s, &flags));
  std::printf("flags %u\n", flags);
  cudaStreamDestroy(s);
  Show("cudaStreamCreateWithFlags(0x10)", cudaStreamCreateWithFlags(&s, 0x10));

  int least = 0;
  int greatest = 0;
  cudaDeviceGetStreamPriorityRange(&least, &greatest);
  const int kPriorities[] = {least, greatest, greatest - 10, least + 10};
  for (int asked : kPriorities) {
    cudaError_t error = cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, asked);
    priority = 99;
    cudaStreamGetPriority(s, &priority);
    flags = 99;
    cudaStreamGetFlags(s, &flags);
    std::printf("cudaStreamCreateWithPriority(%d): %s, priority %d, flags %u\n", asked,
                cudaGetErrorName(error), priority, flags);
    if (error == cudaSuccess) cudaStreamDestroy(s);
  }
  Show("cudaStreamCreate(nullptr)", cudaStreamCreate(nullptr));

  Show("cudaStreamGetFlags(legacy)", cudaStreamGetFlags(cudaStreamLegacy, &flags));
  std::printf("legacy stream flags %u\n", flags);
  Show("cudaStreamGetPriority(legacy)", cudaStreamGetPriority(cudaStreamLegacy, &priority));
  std::printf("legacy stream priority %d\n", priority);
  Show("cudaStreamGetFlags(per-thread)", cudaStreamGetFlags(cudaStreamPerThread, &flags));
  std::printf("per-thread stream flags %u\n", flags);
  Show("cudaStreamGetFlags(nullptr out)", cudaStreamGetFlags(cudaStreamLegacy, nullptr));
  Show("cudaGetLastError", cudaGetLastError());
}

void QueriesAndEvents(int* a) {
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  cudaEvent_t untimed = nullptr;
  cudaEvent_t never = nullptr;
  Show("cudaEventCreate", cudaEventCreate(&start));
  Show("cudaEventCreateWithFlags(BlockingSync)",
       cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
  Show("cudaEventCreateWithFlags(DisableTiming)",
       cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  Show("cudaEventCreate", cudaEventCreate(&never));
  cudaEvent_t bad = nullptr;
  Show("cudaEventCreateWithFlags(0x100)", cudaEventCreateWithFlags(&bad, 0x100));
  Show("cudaEventQuery(never recorded)", cudaEventQuery(never));
  Show("cudaEventSynchronize(never recorded)", cudaEventSynchronize(never));
  Show("cudaGetLastError", cudaGetLastError());

  Gate gate;
  Show("cudaEventRecord(start)", cudaEventRecord(start, s));
  gate.Close(s);
  Fill<<<kCount / 256, 256, 0, s>>>(a, kCount, 3);
  Show("kernel launch", cudaGetLastError());
  Show("cudaEventRecord(stop)", cudaEventRecord(stop, s));
  Show("cudaEventRecord(untimed)", cudaEventRecord(untimed, s));
  Show("cudaStreamQuery(held back)", cudaStreamQuery(s));
  // `start` is ahead of the gate: it completes (a query right away could still see it pending).
  Show("cudaEventSynchronize(start)", cudaEventSynchronize(start));
  Show("cudaEventQuery(stop, held back)", cudaEventQuery(stop));
  float ms = -1;
  Show("cudaEventElapsedTime(stop not done)", cudaEventElapsedTime(&ms, start, stop));
  gate.Open();
  Show("cudaEventSynchronize(stop)", cudaEventSynchronize(stop));
  Show("cudaEventQuery(stop)", cudaEventQuery(stop));
  Show("cudaStreamQuery", cudaStreamQuery(s));
  ms = -1;
  Show("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start, stop));
  std::printf("elapsed time at least 0: %s\n", ms >= 0 ? "yes" : "no");
  Show("cudaEventElapsedTime(disabled timing)", cudaEventElapsedTime(&ms, start, untimed));
  Show("cudaEventElapsedTime(never recorded)", cudaEventElapsedTime(&ms, start, never));
  Show("cudaEventElapsedTime(nullptr out)", cudaEventElapsedTime(nullptr, start, stop));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s));
  Expect("after the held-back kernel", a, 3);

  Show("cudaEventRecordWithFlags(Default)", cudaEventRecordWithFlags(start, s, 0));
  Show("cudaEventRecordWithFlags(0x100)", cudaEventRecordWithFlags(start, s, 0x100));
  Show("cudaEventRecord(on the legacy stream)", cudaEventRecord(never, 0));
  Show("cudaEventSynchronize", cudaEventSynchronize(never));
  Show("cudaGetLastError", cudaGetLastError());
  for (cudaEvent_t e : {start, stop, untimed, never}) cudaEventDestroy(e);
  Show("cudaStreamDestroy", cudaStreamDestroy(s));
}

void WaitBetweenStreams(int* a, int* b) {
  cudaStream_t first = nullptr;
  cudaStream_t second = nullptr;
  cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking);
  cudaEvent_t done = nullptr;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  Fill<<<kCount / 256, 256, 0, second>>>(b, kCount, 10);
  cudaStreamSynchronize(second);
  Gate gate;
  gate.Close(first);
  Fill<<<kCount / 256, 256, 0, first>>>(a, kCount, 5);
  Show("cudaEventRecord(first)", cudaEventRecord(done, first));
  Show("cudaStreamWaitEvent(second)", cudaStreamWaitEvent(second, done, 0));
  AddFrom<<<kCount / 256, 256, 0, second>>>(b, a, kCount);
  Show("kernel launch on second", cudaGetLastError());
  Show("cudaStreamQuery(second, waiting)", cudaStreamQuery(second));
  gate.Open();
  Show("cudaStreamSynchronize(second)", cudaStreamSynchronize(second));
  Expect("second stream saw the first's kernel", b, 15);
  Show("cudaStreamWaitEvent(flags 0x100)", cudaStreamWaitEvent(second, done, 0x100));
  cudaEvent_t never = nullptr;
  cudaEventCreate(&never);
  Show("cudaStreamWaitEvent(never recorded)", cudaStreamWaitEvent(second, never, 0));
  Show("cudaStreamSynchronize(second)", cudaStreamSynchronize(second));
  Show("cudaGetLastError", cudaGetLastError());
  cudaEventDestroy(never);
  cudaEventDestroy(done);
  cudaStreamDestroy(first);
  cudaStreamDestroy(second);
}

// Host functions and callbacks append their letter to `order`.
std::string order;
void CUDART_CB Append(void* letter) { order += *static_cast<const char*>(letter); }
cudaError_t callback_status = cudaErrorUnknown;
void CUDART_CB Callback(cudaStream_t, cudaError_t status, void* letter) {
  callback_status = status;
  order += *static_cast<const char*>(letter);
}

void HostFunctions(int* a) {
  static const char kLetters[] = "ABCDE";
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  order.clear();
  Fill<<<kCount / 256, 256, 0, s>>>(a, kCount, 1);
  Show("cudaLaunchHostFunc(A)", cudaLaunchHostFunc(s, Append, const_cast<char*>(kLetters)));
  Show("cudaStreamAddCallback(B)",
       cudaStreamAddCallback(s, Callback, const_cast<char*>(kLetters + 1), 0));
  Fill<<<kCount / 256, 256, 0, s>>>(a, kCount, 2);
  Show("cudaLaunchHostFunc(C)", cudaLaunchHostFunc(s, Append, const_cast<char*>(kLetters + 2)));
  Show("cudaStreamAddCallback(D)",
       cudaStreamAddCallback(s, Callback, const_cast<char*>(kLetters + 3), 0));
  Show("cudaLaunchHostFunc(E, legacy stream)",
       cudaLaunchHostFunc(0, Append, const_cast<char*>(kLetters + 4)));
  Show("cudaDeviceSynchronize", cudaDeviceSynchronize());
  std::printf("host function order: %s, callback status %s\n", order.c_str(),
              cudaGetErrorName(callback_status));
  Expect("after the host functions", a, 2);
  Show("cudaStreamAddCallback(flags 1)",
       cudaStreamAddCallback(s, Callback, const_cast<char*>(kLetters), 1));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s));
  Show("cudaGetLastError", cudaGetLastError());
  cudaStreamDestroy(s);
}

// Whether `stream`'s kernel ran while another stream is held back: its event is queried right
// away, then (when not ready) again once the gate opens.
void KernelWhileHeldBack(const char* what, cudaStream_t held, cudaStream_t stream, int* a,
                         int value) {
  Gate gate;
  gate.Close(held);
  Fill<<<kCount / 256, 256, 0, stream>>>(a, kCount, value);
  cudaEvent_t done = nullptr;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  cudaEventRecord(done, stream);
  // Give independent work time to finish before the query.
  for (int i = 0; i < 2000 && cudaEventQuery(done) == cudaErrorNotReady; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::printf("%s: %s while held back\n", what, cudaGetErrorName(cudaEventQuery(done)));
  gate.Open();
  cudaEventSynchronize(done);
  cudaStreamSynchronize(held);
  Expect(what, a, value);
  cudaEventDestroy(done);
}

void DefaultStreams(int* a) {
  cudaStream_t blocking = nullptr;
  cudaStream_t non_blocking = nullptr;
  cudaStreamCreate(&blocking);
  cudaStreamCreateWithFlags(&non_blocking, cudaStreamNonBlocking);
  KernelWhileHeldBack("legacy stream behind a blocking stream", blocking, cudaStreamLegacy, a, 21);
  KernelWhileHeldBack("legacy stream beside a non-blocking stream", non_blocking, cudaStreamLegacy,
                      a, 22);
  KernelWhileHeldBack("blocking stream behind the legacy stream", cudaStreamLegacy, blocking, a,
                      23);
  KernelWhileHeldBack("per-thread stream beside a blocking stream", blocking, cudaStreamPerThread,
                      a, 24);
  KernelWhileHeldBack("per-thread stream behind the legacy stream", cudaStreamLegacy,
                      cudaStreamPerThread, a, 25);
  KernelWhileHeldBack("blocking stream beside the per-thread stream", cudaStreamPerThread, blocking,
                      a, 26);
  Show("cudaStreamSynchronize(per-thread)", cudaStreamSynchronize(cudaStreamPerThread));
  Show("cudaStreamQuery(legacy)", cudaStreamQuery(cudaStreamLegacy));
  Show("cudaGetLastError", cudaGetLastError());
  cudaStreamDestroy(blocking);
  cudaStreamDestroy(non_blocking);
}

void DestroyWhileBusy(int* a) {
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  Gate gate;
  gate.Close(s);
  Fill<<<kCount / 256, 256, 0, s>>>(a, kCount, 42);
  Show("cudaStreamDestroy(held back)", cudaStreamDestroy(s));
  gate.Open();
  Show("cudaDeviceSynchronize", cudaDeviceSynchronize());
  Expect("work of the destroyed stream", a, 42);
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  int* a = nullptr;
  int* b = nullptr;
  cudaMalloc(&a, kCount * sizeof(int));
  cudaMalloc(&b, kCount * sizeof(int));
  LoadKernels(a, b);
  Creation();
  QueriesAndEvents(a);
  WaitBetweenStreams(a, b);
  HostFunctions(a);
  DefaultStreams(a);
  DestroyWhileBusy(a);
  cudaFree(a);
  cudaFree(b);
  Show("cudaGetLastError at the end", cudaGetLastError());
  return 0;
}
