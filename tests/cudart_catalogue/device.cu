// Copyright 2026 The cuhal Authors.
// Device management through the CUDA runtime: the device count, versions, properties and
// attributes, the current device (valid and invalid ordinals), limits, stream priorities, PCI bus
// ids, device flags, synchronization and reset; the error of each invalid use by name.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace {

void Show(const char* what, cudaError_t error) {
  std::printf("%s: %s\n", what, cudaGetErrorName(error));
}

void Versions() {
  int count = -1;
  Show("cudaGetDeviceCount", cudaGetDeviceCount(&count));
  std::printf("device count: %d\n", count);
  Show("cudaGetDeviceCount(nullptr)", cudaGetDeviceCount(nullptr));
  int driver = -1;
  int runtime = -1;
  Show("cudaDriverGetVersion", cudaDriverGetVersion(&driver));
  Show("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&runtime));
  std::printf("driver version %d, runtime version %d\n", driver, runtime);
  Show("cudaDriverGetVersion(nullptr)", cudaDriverGetVersion(nullptr));
}

void Properties(int count) {
  cudaDeviceProp p;
  std::memset(&p, 0, sizeof(p));
  Show("cudaGetDeviceProperties(0)", cudaGetDeviceProperties(&p, 0));
  std::printf("name: %s\n", p.name);
  std::printf("compute capability %d.%d, %d SMs, warp %d\n", p.major, p.minor,
              p.multiProcessorCount, p.warpSize);
  std::printf("totalGlobalMem %zu, totalConstMem %zu, l2CacheSize %d, memoryBusWidth %d\n",
              p.totalGlobalMem, p.totalConstMem, p.l2CacheSize, p.memoryBusWidth);
  std::printf("sharedMemPerBlock %zu, optin %zu, per SM %zu, reserved %zu\n", p.sharedMemPerBlock,
              p.sharedMemPerBlockOptin, p.sharedMemPerMultiprocessor, p.reservedSharedMemPerBlock);
  std::printf("regsPerBlock %d, regsPerMultiprocessor %d\n", p.regsPerBlock,
              p.regsPerMultiprocessor);
  std::printf("maxThreadsPerBlock %d, dims %d %d %d, grid %d %d %d\n", p.maxThreadsPerBlock,
              p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2], p.maxGridSize[0],
              p.maxGridSize[1], p.maxGridSize[2]);
  std::printf("maxThreadsPerMultiProcessor %d, maxBlocksPerMultiProcessor %d\n",
              p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor);
  std::printf("memPitch %zu, textureAlignment %zu, texturePitchAlignment %zu\n", p.memPitch,
              p.textureAlignment, p.texturePitchAlignment);
  std::printf("integrated %d, canMapHostMemory %d, concurrentKernels %d, asyncEngineCount %d\n",
              p.integrated, p.canMapHostMemory, p.concurrentKernels, p.asyncEngineCount);
  std::printf("unifiedAddressing %d, managedMemory %d, concurrentManagedAccess %d\n",
              p.unifiedAddressing, p.managedMemory, p.concurrentManagedAccess);
  std::printf("pageableMemoryAccess %d, hostNativeAtomicSupported %d, cooperativeLaunch %d\n",
              p.pageableMemoryAccess, p.hostNativeAtomicSupported, p.cooperativeLaunch);
  std::printf("streamPrioritiesSupported %d, memoryPoolsSupported %d, clusterLaunch %d\n",
              p.streamPrioritiesSupported, p.memoryPoolsSupported, p.clusterLaunch);
  std::printf("hostRegisterSupported %d, hostRegisterReadOnlySupported %d, isMultiGpuBoard %d\n",
              p.hostRegisterSupported, p.hostRegisterReadOnlySupported, p.isMultiGpuBoard);
  std::printf("persistingL2CacheMaxSize %d, accessPolicyMaxWindowSize %d\n",
              p.persistingL2CacheMaxSize, p.accessPolicyMaxWindowSize);
  bool uuid_set = false;
  for (char byte : p.uuid.bytes) uuid_set = uuid_set || byte != 0;
  std::printf("uuid set: %s\n", uuid_set ? "yes" : "no");
  Show("cudaGetDeviceProperties(count)", cudaGetDeviceProperties(&p, count));
  Show("cudaGetDeviceProperties(-1)", cudaGetDeviceProperties(&p, -1));
  Show("cudaGetDeviceProperties(nullptr)", cudaGetDeviceProperties(nullptr, 0));
}

void Attributes(int count) {
  struct {
    const char* name;
    cudaDeviceAttr attr;
  } const kAttributes[] = {
      {"MaxThreadsPerBlock", cudaDevAttrMaxThreadsPerBlock},
      {"WarpSize", cudaDevAttrWarpSize},
      {"MultiProcessorCount", cudaDevAttrMultiProcessorCount},
      {"ComputeCapabilityMajor", cudaDevAttrComputeCapabilityMajor},
      {"ComputeCapabilityMinor", cudaDevAttrComputeCapabilityMinor},
      {"MaxSharedMemoryPerBlockOptin", cudaDevAttrMaxSharedMemoryPerBlockOptin},
      {"L2CacheSize", cudaDevAttrL2CacheSize},
      {"ClockRate", cudaDevAttrClockRate},
      {"MemoryClockRate", cudaDevAttrMemoryClockRate},
      {"GlobalMemoryBusWidth", cudaDevAttrGlobalMemoryBusWidth},
      {"ComputeMode", cudaDevAttrComputeMode},
      {"ConcurrentManagedAccess", cudaDevAttrConcurrentManagedAccess},
      {"MemoryPoolsSupported", cudaDevAttrMemoryPoolsSupported},
      {"UnifiedAddressing", cudaDevAttrUnifiedAddressing},
      {"MaxBlocksPerMultiprocessor", cudaDevAttrMaxBlocksPerMultiprocessor},
      {"CooperativeLaunch", cudaDevAttrCooperativeLaunch},
      {"HostRegisterSupported", cudaDevAttrHostRegisterSupported},
      {"MaxPitch", cudaDevAttrMaxPitch},
  };
  for (const auto& a : kAttributes) {
    int value = -1;
    cudaError_t error = cudaDeviceGetAttribute(&value, a.attr, 0);
    std::printf("attribute %s: %s %d\n", a.name, cudaGetErrorName(error), value);
  }
  int value = -1;
  Show("cudaDeviceGetAttribute(attribute 9999)",
       cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(9999), 0));
  Show("cudaDeviceGetAttribute(device count)",
       cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, count));
  Show("cudaDeviceGetAttribute(nullptr)", cudaDeviceGetAttribute(nullptr, cudaDevAttrWarpSize, 0));
}

void CurrentDevice(int count) {
  int device = -1;
  Show("cudaGetDevice", cudaGetDevice(&device));
  std::printf("current device %d\n", device);
  Show("cudaSetDevice(0)", cudaSetDevice(0));
  Show("cudaSetDevice(count)", cudaSetDevice(count));
  Show("cudaPeekAtLastError", cudaPeekAtLastError());
  Show("cudaGetLastError", cudaGetLastError());
  Show("cudaGetLastError again", cudaGetLastError());
  Show("cudaSetDevice(-1)", cudaSetDevice(-1));
  device = -1;
  Show("cudaGetDevice", cudaGetDevice(&device));
  std::printf("current device %d\n", device);
  Show("cudaGetDevice(nullptr)", cudaGetDevice(nullptr));
  Show("cudaGetLastError", cudaGetLastError());
}

void Limits() {
  struct {
    const char* name;
    cudaLimit limit;
  } const kLimits[] = {
      {"StackSize", cudaLimitStackSize},
      {"PrintfFifoSize", cudaLimitPrintfFifoSize},
      {"MallocHeapSize", cudaLimitMallocHeapSize},
      {"DevRuntimeSyncDepth", cudaLimitDevRuntimeSyncDepth},
      {"DevRuntimePendingLaunchCount", cudaLimitDevRuntimePendingLaunchCount},
      {"MaxL2FetchGranularity", cudaLimitMaxL2FetchGranularity},
      {"PersistingL2CacheSize", cudaLimitPersistingL2CacheSize},
  };
  for (const auto& l : kLimits) {
    size_t value = 0;
    cudaError_t error = cudaDeviceGetLimit(&value, l.limit);
    std::printf("limit %s: %s %zu\n", l.name, cudaGetErrorName(error), value);
  }
  size_t value = 0;
  Show("cudaDeviceSetLimit(StackSize, 4096)", cudaDeviceSetLimit(cudaLimitStackSize, 4096));
  Show("cudaDeviceGetLimit(StackSize)", cudaDeviceGetLimit(&value, cudaLimitStackSize));
  std::printf("stack size now %zu\n", value);
  Show("cudaDeviceSetLimit(MallocHeapSize, 16 MiB)",
       cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16 << 20));
  Show("cudaDeviceGetLimit(MallocHeapSize)", cudaDeviceGetLimit(&value, cudaLimitMallocHeapSize));
  std::printf("malloc heap size now %zu\n", value);
  Show("cudaDeviceSetLimit(limit 99)", cudaDeviceSetLimit(static_cast<cudaLimit>(99), 1));
  Show("cudaDeviceGetLimit(limit 99)", cudaDeviceGetLimit(&value, static_cast<cudaLimit>(99)));
  Show("cudaDeviceGetLimit(nullptr)", cudaDeviceGetLimit(nullptr, cudaLimitStackSize));
}

void PriorityRange() {
  int least = 99;
  int greatest = 99;
  Show("cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange(&least, &greatest));
  std::printf("stream priorities: least %d, greatest %d\n", least, greatest);
  Show("cudaDeviceGetStreamPriorityRange(nullptr, nullptr)",
       cudaDeviceGetStreamPriorityRange(nullptr, nullptr));
}

void PciBusIds(int count) {
  char bus_id[32] = {};
  Show("cudaDeviceGetPCIBusId", cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), 0));
  unsigned domain = 0, bus = 0, slot = 0, function = 0;
  int fields = std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &slot, &function);
  std::printf("bus id has domain:bus:device.function: %s, length %zu\n", fields == 4 ? "yes" : "no",
              std::strlen(bus_id));
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("bus id matches the properties: %s\n",
              static_cast<int>(bus) == p.pciBusID && static_cast<int>(slot) == p.pciDeviceID &&
                      static_cast<int>(domain) == p.pciDomainID
                  ? "yes"
                  : "no");
  int device = -1;
  Show("cudaDeviceGetByPCIBusId(own id)", cudaDeviceGetByPCIBusId(&device, bus_id));
  std::printf("device of the bus id: %d\n", device);
  char short_id[8] = {};
  Show("cudaDeviceGetPCIBusId(8-byte buffer)",
       cudaDeviceGetPCIBusId(short_id, sizeof(short_id), 0));
  std::printf("short buffer holds %zu characters\n", strnlen(short_id, sizeof(short_id)));
  Show("cudaDeviceGetPCIBusId(device count)", cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), count));
  Show("cudaDeviceGetByPCIBusId(\"not a bus id\")",
       cudaDeviceGetByPCIBusId(&device, "not a bus id"));
  Show("cudaDeviceGetByPCIBusId(\"0000:ff:1f.7\")",
       cudaDeviceGetByPCIBusId(&device, "0000:ff:1f.7"));
}

void Flags() {
  unsigned flags = 0xdead;
  Show("cudaGetDeviceFlags", cudaGetDeviceFlags(&flags));
  std::printf("device flags 0x%x\n", flags);
  Show("cudaSetDeviceFlags(BlockingSync)", cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  Show("cudaGetDeviceFlags", cudaGetDeviceFlags(&flags));
  std::printf("device flags 0x%x\n", flags);
  Show("cudaSetDeviceFlags(0x1000)", cudaSetDeviceFlags(0x1000));
  Show("cudaSetDeviceFlags(Spin|Yield)",
       cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceScheduleYield));
  Show("cudaGetDeviceFlags(nullptr)", cudaGetDeviceFlags(nullptr));
  Show("cudaSetDeviceFlags(Auto)", cudaSetDeviceFlags(cudaDeviceScheduleAuto));
  Show("cudaGetDeviceFlags", cudaGetDeviceFlags(&flags));
  std::printf("device flags 0x%x\n", flags);
}

void SynchronizeAndReset() {
  void* p = nullptr;
  Show("cudaMalloc", cudaMalloc(&p, 1 << 20));
  Show("cudaMemset", cudaMemset(p, 1, 1 << 20));
  Show("cudaDeviceSynchronize", cudaDeviceSynchronize());
  Show("cudaDeviceReset", cudaDeviceReset());
  int device = -1;
  Show("cudaGetDevice after reset", cudaGetDevice(&device));
  std::printf("current device %d\n", device);
  size_t stack = 0;
  Show("cudaDeviceGetLimit(StackSize) after reset", cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  std::printf("stack size after reset %zu\n", stack);
  unsigned flags = 0;
  Show("cudaGetDeviceFlags after reset", cudaGetDeviceFlags(&flags));
  std::printf("device flags 0x%x\n", flags);
  Show("cudaMalloc after reset", cudaMalloc(&p, 1 << 20));
  Show("cudaFree", cudaFree(p));
  Show("cudaDeviceSynchronize", cudaDeviceSynchronize());
  Show("cudaDeviceReset", cudaDeviceReset());
  Show("cudaDeviceReset twice", cudaDeviceReset());
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  int count = 0;
  Versions();
  cudaGetDeviceCount(&count);
  Properties(count);
  Attributes(count);
  CurrentDevice(count);
  Limits();
  PriorityRange();
  PciBusIds(count);
  Flags();
  SynchronizeAndReset();
  Show("cudaGetLastError at the end", cudaGetLastError());
  return 0;
}
