// Copyright 2026 The cuhal Authors.
// A CUDA runtime program that names its runtime on the command line: it dlopens the libcudart
// it is given (libcudart.so.12 or libcudart.so.13), registers a fat binary the way nvcc's
// generated code does (__cudaRegisterFatBinary, __cudaRegisterFunction,
// __cudaRegisterFatBinaryEnd) and calls the runtime API a typical program uses, printing one line
// per call: what it called, the error name the runtime answered and the values it read back.
// It is plain C++ (g++ builds it; the runtime's functions are resolved by dlsym), so that one
// program runs on every runtime major version without a CUDA 12 toolkit: the test
// cudart12_test.sh runs it over the drop-in libcuda.so.1 with libcudart 12 and 13 and compares
// the two outputs, and ci/gpu-probes/cudart12.sh does the same on the real driver.
//   usage: cudart_dlopen_probe LIBCUDART FATBIN [--no-unregistered]
// FATBIN: a fat binary holding the PTX of cudart_dlopen_kernel.cu (nvcc -fatbin).
// --no-unregistered leaves out the launch of a host function never registered: libcudart 13
// hands that pointer to cuLaunchKernel as a kernel handle (seen on the fake, with gdb), which the
// real driver may not survive; the nightly job runs the probe both ways. Exit status:
// 0 when every call it checks answered as the line says; 1 on a wrong value, 2 on bad usage
// or a runtime that does not load. The first line names the runtime's version and is the only
// line expected to differ between runtimes.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// The runtime API's types, as the runtime's C ABI has them (cuda_runtime_api.h, driver_types.h);
// the layouts used here are the same in CUDA 12 and 13.
using Error = int;  // cudaError_t
using Stream = void*;
using Event = void*;
using MemPool = void*;
using Graph = void*;
using GraphExec = void*;
struct Dim3 {
  unsigned x, y, z;
};
struct FatbinWrapper {  // __fatBinC_Wrapper_t
  int magic;            // 0x466243b1
  int version;          // 1
  const void* data;     // the fat binary
  void* filename_or_fatbins;
};

constexpr int kMemcpyHostToDevice = 1;
constexpr int kMemcpyDeviceToHost = 2;
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMultiProcessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kMemPoolAttrReleaseThreshold = 4;
constexpr int kMemPoolAttrUsedMemCurrent = 7;
constexpr int kStreamNonBlocking = 1;
constexpr int kCaptureModeGlobal = 0;
constexpr int kMemAttachGlobal = 1;

// The runtime's entry points, resolved by name.
struct Runtime {
  void* handle = nullptr;
  Error (*RuntimeGetVersion)(int*);
  Error (*DriverGetVersion)(int*);
  Error (*GetDeviceCount)(int*);
  Error (*SetDevice)(int);
  Error (*GetDevice)(int*);
  Error (*DeviceGetAttribute)(int*, int, int);
  Error (*Malloc)(void**, size_t);
  Error (*Free)(void*);
  Error (*Memset)(void*, int, size_t);
  Error (*Memcpy)(void*, const void*, size_t, int);
  Error (*MallocHost)(void**, size_t);
  Error (*FreeHost)(void*);
  Error (*HostRegister)(void*, size_t, unsigned);
  Error (*HostUnregister)(void*);
  Error (*MallocManaged)(void**, size_t, unsigned);
  Error (*GetLastError)();
  Error (*PeekAtLastError)();
  const char* (*GetErrorName)(Error);
  const char* (*GetErrorString)(Error);
  Error (*StreamCreateWithFlags)(Stream*, unsigned);
  Error (*StreamDestroy)(Stream);
  Error (*StreamSynchronize)(Stream);
  Error (*StreamQuery)(Stream);
  Error (*EventCreate)(Event*);
  Error (*EventRecord)(Event, Stream);
  Error (*EventSynchronize)(Event);
  Error (*EventQuery)(Event);
  Error (*EventDestroy)(Event);
  Error (*MemcpyAsync)(void*, const void*, size_t, int, Stream);
  Error (*MemsetAsync)(void*, int, size_t, Stream);
  Error (*MallocAsync)(void**, size_t, Stream);
  Error (*FreeAsync)(void*, Stream);
  Error (*DeviceGetDefaultMemPool)(MemPool*, int);
  Error (*MemPoolSetAttribute)(MemPool, int, void*);
  Error (*MemPoolGetAttribute)(MemPool, int, void*);
  Error (*StreamBeginCapture)(Stream, int);
  Error (*StreamEndCapture)(Stream, Graph*);
  Error (*GraphInstantiate)(GraphExec*, Graph, unsigned long long);
  Error (*GraphLaunch)(GraphExec, Stream);
  Error (*GraphExecDestroy)(GraphExec);
  Error (*GraphDestroy)(Graph);
  Error (*LaunchKernel)(const void*, Dim3, Dim3, void**, size_t, Stream);
  Error (*DeviceSynchronize)();
  Error (*DeviceReset)();
  void** (*RegisterFatBinary)(void*);
  void (*RegisterFatBinaryEnd)(void**);
  void (*UnregisterFatBinary)(void**);
  void (*RegisterFunction)(void**, const char*, char*, const char*, int, void*, void*, void*,
                           void*, int*);
};

template <typename F>
bool Resolve(void* handle, const char* name, F*& out) {
  out = reinterpret_cast<F*>(dlsym(handle, name));
  if (out == nullptr) std::fprintf(stderr, "cudart_dlopen_probe: %s not found\n", name);
  return out != nullptr;
}

bool Load(const char* path, Runtime& rt) {
  rt.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (rt.handle == nullptr) {
    std::fprintf(stderr, "cudart_dlopen_probe: dlopen(%s): %s\n", path, dlerror());
    return false;
  }
  void* h = rt.handle;
  bool ok = true;
  ok &= Resolve(h, "cudaRuntimeGetVersion", rt.RuntimeGetVersion);
  ok &= Resolve(h, "cudaDriverGetVersion", rt.DriverGetVersion);
  ok &= Resolve(h, "cudaGetDeviceCount", rt.GetDeviceCount);
  ok &= Resolve(h, "cudaSetDevice", rt.SetDevice);
  ok &= Resolve(h, "cudaGetDevice", rt.GetDevice);
  ok &= Resolve(h, "cudaDeviceGetAttribute", rt.DeviceGetAttribute);
  ok &= Resolve(h, "cudaMalloc", rt.Malloc);
  ok &= Resolve(h, "cudaFree", rt.Free);
  ok &= Resolve(h, "cudaMemset", rt.Memset);
  ok &= Resolve(h, "cudaMemcpy", rt.Memcpy);
  ok &= Resolve(h, "cudaMallocHost", rt.MallocHost);
  ok &= Resolve(h, "cudaFreeHost", rt.FreeHost);
  ok &= Resolve(h, "cudaHostRegister", rt.HostRegister);
  ok &= Resolve(h, "cudaHostUnregister", rt.HostUnregister);
  ok &= Resolve(h, "cudaMallocManaged", rt.MallocManaged);
  ok &= Resolve(h, "cudaGetLastError", rt.GetLastError);
  ok &= Resolve(h, "cudaPeekAtLastError", rt.PeekAtLastError);
  ok &= Resolve(h, "cudaGetErrorName", rt.GetErrorName);
  ok &= Resolve(h, "cudaGetErrorString", rt.GetErrorString);
  ok &= Resolve(h, "cudaStreamCreateWithFlags", rt.StreamCreateWithFlags);
  ok &= Resolve(h, "cudaStreamDestroy", rt.StreamDestroy);
  ok &= Resolve(h, "cudaStreamSynchronize", rt.StreamSynchronize);
  ok &= Resolve(h, "cudaStreamQuery", rt.StreamQuery);
  ok &= Resolve(h, "cudaEventCreate", rt.EventCreate);
  ok &= Resolve(h, "cudaEventRecord", rt.EventRecord);
  ok &= Resolve(h, "cudaEventSynchronize", rt.EventSynchronize);
  ok &= Resolve(h, "cudaEventQuery", rt.EventQuery);
  ok &= Resolve(h, "cudaEventDestroy", rt.EventDestroy);
  ok &= Resolve(h, "cudaMemcpyAsync", rt.MemcpyAsync);
  ok &= Resolve(h, "cudaMemsetAsync", rt.MemsetAsync);
  ok &= Resolve(h, "cudaMallocAsync", rt.MallocAsync);
  ok &= Resolve(h, "cudaFreeAsync", rt.FreeAsync);
  ok &= Resolve(h, "cudaDeviceGetDefaultMemPool", rt.DeviceGetDefaultMemPool);
  ok &= Resolve(h, "cudaMemPoolSetAttribute", rt.MemPoolSetAttribute);
  ok &= Resolve(h, "cudaMemPoolGetAttribute", rt.MemPoolGetAttribute);
  ok &= Resolve(h, "cudaStreamBeginCapture", rt.StreamBeginCapture);
  ok &= Resolve(h, "cudaStreamEndCapture", rt.StreamEndCapture);
  ok &= Resolve(h, "cudaGraphInstantiate", rt.GraphInstantiate);
  ok &= Resolve(h, "cudaGraphLaunch", rt.GraphLaunch);
  ok &= Resolve(h, "cudaGraphExecDestroy", rt.GraphExecDestroy);
  ok &= Resolve(h, "cudaGraphDestroy", rt.GraphDestroy);
  ok &= Resolve(h, "cudaLaunchKernel", rt.LaunchKernel);
  ok &= Resolve(h, "cudaDeviceSynchronize", rt.DeviceSynchronize);
  ok &= Resolve(h, "cudaDeviceReset", rt.DeviceReset);
  ok &= Resolve(h, "__cudaRegisterFatBinary", rt.RegisterFatBinary);
  ok &= Resolve(h, "__cudaRegisterFatBinaryEnd", rt.RegisterFatBinaryEnd);
  ok &= Resolve(h, "__cudaUnregisterFatBinary", rt.UnregisterFatBinary);
  ok &= Resolve(h, "__cudaRegisterFunction", rt.RegisterFunction);
  return ok;
}

Runtime rt;
int failures = 0;

// Prints "what: <error name>" and returns the error.
Error Show(const char* what, Error e) {
  std::printf("%s: %s\n", what, rt.GetErrorName(e));
  return e;
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::printf("WRONG: %s\n", what);
    ++failures;
  }
}

// The host-side stand-ins nvcc would generate for the kernels: only their addresses matter.
char fill_stub;
char write_through_stub;
char unregistered_stub;

void DeviceAndErrors() {
  int count = -1;
  Show("cudaGetDeviceCount", rt.GetDeviceCount(&count));
  std::printf("  devices: %d\n", count);
  Show("cudaSetDevice(0)", rt.SetDevice(0));
  Show("cudaSetDevice(count)", rt.SetDevice(count));
  Show("  cudaGetLastError", rt.GetLastError());
  int device = -1;
  Show("cudaGetDevice", rt.GetDevice(&device));
  std::printf("  device: %d\n", device);
  int value = -1;
  Show("cudaDeviceGetAttribute(MAX_THREADS_PER_BLOCK)",
       rt.DeviceGetAttribute(&value, kAttrMaxThreadsPerBlock, 0));
  std::printf("  value: %d\n", value);
  Show("cudaDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)",
       rt.DeviceGetAttribute(&value, kAttrComputeCapabilityMajor, 0));
  std::printf("  value: %d\n", value);
  int sms = -1;
  Show("cudaDeviceGetAttribute(MULTIPROCESSOR_COUNT)",
       rt.DeviceGetAttribute(&sms, kAttrMultiProcessorCount, 0));
  Check(sms > 0, "multiprocessor count > 0");
  Show("cudaDeviceGetAttribute(attribute 100000)", rt.DeviceGetAttribute(&value, 100000, 0));
  Show("cudaDeviceGetAttribute(device 99)",
       rt.DeviceGetAttribute(&value, kAttrMaxThreadsPerBlock, 99));
  const Error codes[] = {0, 1, 2, 3, 9, 98, 101, 209, 400, 600, 700, 719, 900, 999, 12345};
  for (Error code : codes) {
    std::printf("error %d: %s / %s\n", code, rt.GetErrorName(code), rt.GetErrorString(code));
  }
}

void Memory() {
  constexpr size_t kBytes = 1 << 20;
  void* d = nullptr;
  Show("cudaMalloc(1 MiB)", rt.Malloc(&d, kBytes));
  Show("cudaMemset", rt.Memset(d, 0x5a, kBytes));
  std::vector<unsigned char> host(kBytes, 0);
  Show("cudaMemcpy(D2H)", rt.Memcpy(host.data(), d, kBytes, kMemcpyDeviceToHost));
  Check(host[0] == 0x5a && host[kBytes - 1] == 0x5a, "memset bytes read back");
  for (size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i * 7);
  Show("cudaMemcpy(H2D)", rt.Memcpy(d, host.data(), kBytes, kMemcpyHostToDevice));
  std::vector<unsigned char> back(kBytes, 0);
  Show("cudaMemcpy(D2H)", rt.Memcpy(back.data(), d, kBytes, kMemcpyDeviceToHost));
  Check(back == host, "bytes copied there and back");
  Show("cudaMemcpy(kind 7)", rt.Memcpy(back.data(), d, 16, 7));
  Show("  cudaGetLastError", rt.GetLastError());
  Show("cudaFree", rt.Free(d));
  Show("cudaFree(nullptr)", rt.Free(nullptr));
  Show("cudaFree(freed)", rt.Free(d));
  Show("  cudaPeekAtLastError", rt.PeekAtLastError());
  Show("  cudaGetLastError", rt.GetLastError());
  Show("  cudaGetLastError", rt.GetLastError());
  void* huge = nullptr;
  Show("cudaMalloc(1 PiB)", rt.Malloc(&huge, size_t{1} << 50));
  std::printf("  pointer: %s\n", huge == nullptr ? "null" : "set");
  Show("  cudaGetLastError", rt.GetLastError());
  Show("cudaMalloc(null out)", rt.Malloc(nullptr, 16));
  Show("  cudaGetLastError", rt.GetLastError());

  void* pinned = nullptr;
  Show("cudaMallocHost", rt.MallocHost(&pinned, 4096));
  if (pinned != nullptr) std::memset(pinned, 1, 4096);
  Show("cudaFreeHost", rt.FreeHost(pinned));
  std::vector<char> registered(8192);
  Show("cudaHostRegister", rt.HostRegister(registered.data(), registered.size(), 0));
  Show("cudaHostRegister(again)", rt.HostRegister(registered.data(), registered.size(), 0));
  Show("  cudaGetLastError", rt.GetLastError());
  Show("cudaHostUnregister", rt.HostUnregister(registered.data()));
  Show("cudaHostUnregister(again)", rt.HostUnregister(registered.data()));
  Show("  cudaGetLastError", rt.GetLastError());
  int* managed = nullptr;
  Show("cudaMallocManaged", rt.MallocManaged(reinterpret_cast<void**>(&managed), 4096,
                                             kMemAttachGlobal));
  if (managed != nullptr) {
    managed[0] = 41;
    Show("cudaMemset(managed)", rt.Memset(managed + 1, 0, 4));
    Show("cudaDeviceSynchronize", rt.DeviceSynchronize());
    std::printf("  managed: %d %d\n", managed[0], managed[1]);
  }
  Show("cudaFree(managed)", rt.Free(managed));
  Show("cudaMallocManaged(flags 0)",
       rt.MallocManaged(reinterpret_cast<void**>(&managed), 4096, 0));
  Show("  cudaGetLastError", rt.GetLastError());
}

void StreamsEventsPools() {
  Stream stream = nullptr;
  Show("cudaStreamCreateWithFlags(NON_BLOCKING)",
       rt.StreamCreateWithFlags(&stream, kStreamNonBlocking));
  Show("cudaStreamCreateWithFlags(flags 8)", rt.StreamCreateWithFlags(&stream, 8));
  Show("  cudaGetLastError", rt.GetLastError());
  Event start = nullptr, stop = nullptr;
  Show("cudaEventCreate", rt.EventCreate(&start));
  Show("cudaEventCreate", rt.EventCreate(&stop));
  Show("cudaEventRecord", rt.EventRecord(start, stream));

  MemPool pool = nullptr;
  Show("cudaDeviceGetDefaultMemPool", rt.DeviceGetDefaultMemPool(&pool, 0));
  unsigned long long threshold = 1 << 20;
  Show("cudaMemPoolSetAttribute(RELEASE_THRESHOLD)",
       rt.MemPoolSetAttribute(pool, kMemPoolAttrReleaseThreshold, &threshold));
  void* a = nullptr;
  Show("cudaMallocAsync(64 KiB)", rt.MallocAsync(&a, 65536, stream));
  Show("cudaMemsetAsync", rt.MemsetAsync(a, 3, 65536, stream));
  std::vector<unsigned char> host(65536, 0);
  Show("cudaMemcpyAsync(D2H)", rt.MemcpyAsync(host.data(), a, host.size(), kMemcpyDeviceToHost,
                                             stream));
  unsigned long long used = 0;
  Show("cudaMemPoolGetAttribute(USED_MEM_CURRENT)",
       rt.MemPoolGetAttribute(pool, kMemPoolAttrUsedMemCurrent, &used));
  std::printf("  used: %llu\n", used);
  Show("cudaFreeAsync", rt.FreeAsync(a, stream));
  Show("cudaEventRecord", rt.EventRecord(stop, stream));
  Show("cudaStreamSynchronize", rt.StreamSynchronize(stream));
  Check(host[0] == 3 && host[65535] == 3, "memset bytes read back asynchronously");
  Show("cudaStreamQuery", rt.StreamQuery(stream));
  Show("cudaEventQuery", rt.EventQuery(stop));
  Show("cudaEventSynchronize", rt.EventSynchronize(stop));
  Show("cudaMemPoolGetAttribute(USED_MEM_CURRENT)",
       rt.MemPoolGetAttribute(pool, kMemPoolAttrUsedMemCurrent, &used));
  std::printf("  used: %llu\n", used);
  Show("cudaFreeAsync(nullptr)", rt.FreeAsync(nullptr, stream));
  Show("  cudaGetLastError", rt.GetLastError());

  // Stream capture: a memset captured into a graph, instantiated and launched twice.
  void* d = nullptr;
  Show("cudaMalloc", rt.Malloc(&d, 4096));
  Show("cudaStreamBeginCapture(GLOBAL)", rt.StreamBeginCapture(stream, kCaptureModeGlobal));
  Show("cudaMemsetAsync(captured)", rt.MemsetAsync(d, 9, 4096, stream));
  void* illegal = nullptr;
  Show("cudaMalloc(during global capture)", rt.Malloc(&illegal, 16));
  Graph graph = nullptr;
  Show("cudaStreamEndCapture", rt.StreamEndCapture(stream, &graph));
  std::printf("  graph: %s\n", graph == nullptr ? "null" : "set");
  Show("  cudaGetLastError", rt.GetLastError());
  Show("cudaStreamBeginCapture(GLOBAL)", rt.StreamBeginCapture(stream, kCaptureModeGlobal));
  Show("cudaMemsetAsync(captured)", rt.MemsetAsync(d, 9, 4096, stream));
  Show("cudaStreamEndCapture", rt.StreamEndCapture(stream, &graph));
  GraphExec exec = nullptr;
  Show("cudaGraphInstantiate", rt.GraphInstantiate(&exec, graph, 0));
  Show("cudaGraphLaunch", rt.GraphLaunch(exec, stream));
  Show("cudaGraphLaunch", rt.GraphLaunch(exec, stream));
  Show("cudaStreamSynchronize", rt.StreamSynchronize(stream));
  unsigned char byte = 0;
  Show("cudaMemcpy(D2H)", rt.Memcpy(&byte, static_cast<char*>(d) + 4095, 1, kMemcpyDeviceToHost));
  std::printf("  byte: %d\n", byte);
  Show("cudaGraphExecDestroy", rt.GraphExecDestroy(exec));
  Show("cudaGraphDestroy", rt.GraphDestroy(graph));
  Show("cudaFree", rt.Free(d));
  Show("cudaEventDestroy", rt.EventDestroy(start));
  Show("cudaEventDestroy", rt.EventDestroy(stop));
  Show("cudaStreamDestroy", rt.StreamDestroy(stream));
}

bool launch_unregistered = true;

void Kernels(void** module) {
  constexpr int kN = 4096;
  int* d = nullptr;
  Show("cudaMalloc", rt.Malloc(reinterpret_cast<void**>(&d), kN * sizeof(int)));
  int n = kN, base = 100;
  void* args[] = {&d, &base, &n};
  Show("cudaLaunchKernel(fill)",
       rt.LaunchKernel(&fill_stub, Dim3{kN / 128, 1, 1}, Dim3{128, 1, 1}, args, 0, nullptr));
  std::vector<int> host(kN, 0);
  Show("cudaMemcpy(D2H)", rt.Memcpy(host.data(), d, kN * sizeof(int), kMemcpyDeviceToHost));
  bool right = true;
  for (int i = 0; i < kN; ++i) right &= host[i] == base + i;
  std::printf("  kernel: %d elements %s\n", kN, right ? "right" : "WRONG");
  Check(right, "the kernel's elements");
  Show("cudaLaunchKernel(block 2048)",
       rt.LaunchKernel(&fill_stub, Dim3{1, 1, 1}, Dim3{2048, 1, 1}, args, 0, nullptr));
  Show("  cudaGetLastError", rt.GetLastError());
  Show("  cudaGetLastError", rt.GetLastError());
  Show("cudaLaunchKernel(grid 0)",
       rt.LaunchKernel(&fill_stub, Dim3{0, 1, 1}, Dim3{128, 1, 1}, args, 0, nullptr));
  Show("  cudaGetLastError", rt.GetLastError());
  if (launch_unregistered) {
    Show("cudaLaunchKernel(unregistered)",
         rt.LaunchKernel(&unregistered_stub, Dim3{1, 1, 1}, Dim3{1, 1, 1}, args, 0, nullptr));
    Show("  cudaGetLastError", rt.GetLastError());
  }
  Show("cudaFree", rt.Free(d));

  // A sticky error: a kernel writes through a null pointer. Every later call answers it, and
  // cudaDeviceReset ends the context (what the device answers afterwards is measured, not
  // assumed: docs/driver_facts.md "cudaDeviceReset after a sticky fault").
  int* null_pointer = nullptr;
  void* fault_args[] = {&null_pointer};
  Show("cudaLaunchKernel(write_through null)",
       rt.LaunchKernel(&write_through_stub, Dim3{1, 1, 1}, Dim3{1, 1, 1}, fault_args, 0,
                       nullptr));
  Show("cudaDeviceSynchronize", rt.DeviceSynchronize());
  Show("  cudaGetLastError", rt.GetLastError());
  Show("  cudaGetLastError", rt.GetLastError());
  void* after = nullptr;
  Show("cudaMalloc(after the fault)", rt.Malloc(&after, 16));
  rt.UnregisterFatBinary(module);
  Show("cudaDeviceReset", rt.DeviceReset());
  int count = -1;
  Show("cudaGetDeviceCount(after reset)", rt.GetDeviceCount(&count));
  std::printf("  devices: %d\n", count);
  Show("cudaMalloc(after reset)", rt.Malloc(&after, 16));
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  if (argc == 4 && std::strcmp(argv[3], "--no-unregistered") == 0) {
    launch_unregistered = false;
  } else if (argc != 3) {
    std::fprintf(stderr, "usage: cudart_dlopen_probe LIBCUDART FATBIN [--no-unregistered]\n");
    return 2;
  }
  std::ifstream file(argv[2], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.empty()) {
    std::fprintf(stderr, "cudart_dlopen_probe: cannot read the fat binary %s\n", argv[2]);
    return 2;
  }
  // The runtime reads the fat binary in 8-byte words: keep it aligned, alive until exit.
  static std::vector<std::uint64_t> fatbin;
  fatbin.resize((bytes.size() + 7) / 8);
  std::memcpy(fatbin.data(), bytes.data(), bytes.size());
  if (!Load(argv[1], rt)) return 2;

  int runtime_version = 0, driver_version = 0;
  rt.RuntimeGetVersion(&runtime_version);
  std::printf("runtime %d\n", runtime_version);  // the one line that differs between runtimes
  Show("cudaDriverGetVersion", rt.DriverGetVersion(&driver_version));
  std::printf("  driver: %d\n", driver_version);

  // What nvcc's generated code does at load time.
  static FatbinWrapper wrapper{0x466243b1, 1, fatbin.data(), nullptr};
  void** module = rt.RegisterFatBinary(&wrapper);
  rt.RegisterFunction(module, &fill_stub, const_cast<char*>("fill"), "fill", -1, nullptr,
                      nullptr, nullptr, nullptr, nullptr);
  rt.RegisterFunction(module, &write_through_stub, const_cast<char*>("write_through"),
                      "write_through", -1, nullptr, nullptr, nullptr, nullptr, nullptr);
  rt.RegisterFatBinaryEnd(module);

  DeviceAndErrors();
  Memory();
  StreamsEventsPools();
  Kernels(module);
  std::printf("%s\n", failures == 0 ? "cudart_dlopen_probe: done" : "cudart_dlopen_probe: FAILED");
  return failures == 0 ? 0 : 1;
}
