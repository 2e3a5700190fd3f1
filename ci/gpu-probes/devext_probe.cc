// Device-extras area probe for cuhal (issue 14): how the real driver answers the entry points that
// fakecuda still answers with a generated fallback in the "devext" group: the deprecated device
// queries (cuDeviceComputeCapability, cuDeviceGetProperties), the smaller device queries
// (exec affinity, LUID, 1D linear texture width, host/P2P atomic capabilities, NvSciSync
// attributes, async notifications, GPUDirect RDMA flush), CUDA 13's location-based pool getters
// (cuMemGetDefaultMemPool, cuMemGetMemPool, cuMemSetMemPool), memory-pool IPC (export/import of a
// POSIX-fd pool and of its pointers, also from a child process), dma-buf handles
// (cuMemGetHandleForAddressRange), cuProfilerInitialize, the checkpoint calls (only safe ones on
// the probe's own pid), driver logs, multicast objects, external memory and semaphores, graphics
// interop with no graphics API, and the batched copies / prefetches / discards / decompression.
// A plain driver-API program (cuda.h, -lcuda), like misc_probe.cc; see README.md.
//
//   devext_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                             `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   devext_probe list         the cases
//   devext_probe <case>       one case
//
// The calls that crashed the real driver in the first run (H100, driver 580.159.04, 2026-12-06:
// ci/gpu-probes/results/2026-12-06-h100-devext.real.txt, made by this probe at commit d747969)
// run only in their own cases, crash:<name> (CRASHY), so that the rest of each case is measured;
// elsewhere they print "= skipped, see crash:<name>".
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address, handle or descriptor is printed, only
// relations and values that should be equal on the fake and the H200. Entry points newer than
// CUDA 12.0 are resolved with dlsym (LOAD), so the probe loads on an older libcuda and prints
// "<fn> exported = no" there.
//
//   g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include ci/gpu-probes/devext_probe.cc
//       -o /tmp/devext_probe -lcuda -ldl -lpthread && /tmp/devext_probe all 8
#include <cuda.h>
#include <cudaProfiler.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

const char* g_case = "?";
std::string g_crash_at;     // the crashy call this process runs ("": none)
bool g_crashy_off = false;  // run crashy calls as ordinary ones (where they did not crash)
bool g_quiet = false;       // a crash:<name> case before its call

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
  if (g_quiet) return;
  printf("%s: %s\n", g_case, line);
  fflush(stdout);
}

#define R(expr) Res(#expr, (expr))
CUresult Res(const char* what, CUresult r) {
  Say("%s = %s", what, Name(r));
  return r;
}

const char* YesNo(bool b) { return b ? "yes" : "no"; }

// Calls that crashed the real driver (H100, driver 580.159.04, 2026-12-06) run only in their own
// case, crash:<name>, so that the rest of their parent case is measured: elsewhere they print
// "<call> = skipped, see crash:<name>". A crash:<name> case runs its parent case silently up to
// that call, prints the call's result and ends.

template <typename F>
void Crashy(const char* name, const char* what, F call) {
  if (g_crashy_off) {
    CUresult r = call();
    printf("%s: %s = %s\n", g_case, what, Name(r));
    return;
  }
  if (g_crash_at != name) {
    if (!g_quiet) printf("%s: %s = skipped, see crash:%s\n", g_case, what, name);
    return;
  }
  g_quiet = false;
  fflush(stdout);
  CUresult r = call();
  printf("%s: %s = %s\n", g_case, what, Name(r));
  fflush(stdout);
  _exit(0);
}
#define CRASHY(name, expr) Crashy(name, #expr, [&] { return (expr); })

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <typename T>
T Garbage() {
  if constexpr (std::is_pointer_v<T>)
    return reinterpret_cast<T>(static_cast<uintptr_t>(0x5a5a5a5a5a5a0000ull));
  else
    return static_cast<T>(0x5a5a5a5a5a5a0000ull);
}

template <typename T>
T Load(const char* name) {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (p == nullptr) Say("%s exported = no", name);
  return reinterpret_cast<T>(p);
}
// Declares a local `fn` (shadowing the global declaration) resolved with dlsym; returns 0 from the
// case when it is missing.
#define LOAD(fn)                                        \
  auto fn = Load<decltype(&::fn)>(#fn);                 \
  if (fn == nullptr) return 0

bool AllBytes(const void* p, size_t n, unsigned char v) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != v) return false;
  return true;
}

// Primary context of device 0 current, a non-blocking stream.
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream s = nullptr;
  bool Init() {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    return true;
  }
};

int Attr(CUdevice_attribute a, CUdevice dev = 0) {
  int v = -12345;
  CUresult r = cuDeviceGetAttribute(&v, a, dev);
  return r == CUDA_SUCCESS ? v : -99999;
}

std::vector<unsigned char> Pattern(size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed + i * 7);
  return v;
}
CUresult WritePattern(CUdeviceptr va, size_t n, unsigned char seed) {
  auto in = Pattern(n, seed);
  return cuMemcpyHtoD(va, in.data(), n);
}
void CheckPattern(const char* label, CUdeviceptr va, size_t n, unsigned char seed) {
  std::vector<unsigned char> out(n, 0);
  CUresult r = cuMemcpyDtoH(out.data(), va, n);
  Say("%s: read %s, pattern matches = %s", label, Name(r), YesNo(out == Pattern(n, seed)));
}

const char* PoolRel(CUmemoryPool p, CUmemoryPool def, CUmemoryPool mine = nullptr) {
  if (p == nullptr) return "null";
  if (p == Garbage<CUmemoryPool>()) return "untouched";
  if (p == def) return "the default pool";
  if (mine != nullptr && p == mine) return "the created pool";
  return "another pool";
}

CUmemLocation Loc(CUmemLocationType t, int id) {
  CUmemLocation l;
  l.type = t;
  l.id = id;
  return l;
}

// ------------------------------------------------------------------------------------------
// Deprecated device queries.

// dev:cc: cuDeviceComputeCapability against the attributes.
int CaseComputeCapability() {
  int major = -1, minor = -1;
  R(cuDeviceComputeCapability(&major, &minor, 0));
  Say("before cuInit: major = %d, minor = %d", major, minor);
  R(cuInit(0));
  major = minor = -1;
  R(cuDeviceComputeCapability(&major, &minor, 0));
  Say("major = %d, minor = %d, equal attributes = %s", major, minor,
      YesNo(major == Attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) &&
            minor == Attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)));
  major = minor = -1;
  R(cuDeviceComputeCapability(nullptr, &minor, 0));
  Say("minor after null major = %d", minor);
  R(cuDeviceComputeCapability(&major, nullptr, 0));
  Say("major after null minor = %d", major);
  R(cuDeviceComputeCapability(nullptr, nullptr, 0));
  major = minor = -1;
  R(cuDeviceComputeCapability(&major, &minor, -1));
  Say("after bad device: major = %d, minor = %d", major, minor);
  R(cuDeviceComputeCapability(&major, &minor, 1));
  R(cuDeviceComputeCapability(&major, &minor, 99));
  return 0;
}

// dev:props: cuDeviceGetProperties, every field and its attribute.
int CaseDeviceProperties() {
  CUdevprop p;
  memset(&p, 0x7f, sizeof p);
  R(cuDeviceGetProperties(&p, 0));
  Say("before cuInit: untouched = %s", YesNo(AllBytes(&p, sizeof p, 0x7f)));
  R(cuInit(0));
  memset(&p, 0x7f, sizeof p);
  R(cuDeviceGetProperties(&p, 0));
  Say("maxThreadsPerBlock = %d (attribute %d)", p.maxThreadsPerBlock,
      Attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  Say("maxThreadsDim = %d %d %d", p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
  Say("maxGridSize = %d %d %d", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
  Say("sharedMemPerBlock = %d (attribute %d)", p.sharedMemPerBlock,
      Attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  Say("totalConstantMemory = %d (attribute %d)", p.totalConstantMemory,
      Attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY));
  Say("SIMDWidth = %d (attribute %d)", p.SIMDWidth, Attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE));
  Say("memPitch = %d (attribute %d)", p.memPitch, Attr(CU_DEVICE_ATTRIBUTE_MAX_PITCH));
  Say("regsPerBlock = %d (attribute %d)", p.regsPerBlock,
      Attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
  Say("clockRate = %d (attribute %d)", p.clockRate, Attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  Say("textureAlign = %d (attribute %d)", p.textureAlign,
      Attr(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
  Say("dims equal attributes = %s",
      YesNo(p.maxThreadsDim[0] == Attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X) &&
            p.maxThreadsDim[1] == Attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y) &&
            p.maxThreadsDim[2] == Attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z) &&
            p.maxGridSize[0] == Attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X) &&
            p.maxGridSize[1] == Attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y) &&
            p.maxGridSize[2] == Attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)));
  R(cuDeviceGetProperties(nullptr, 0));
  memset(&p, 0x7f, sizeof p);
  R(cuDeviceGetProperties(&p, -1));
  Say("after bad device: untouched = %s", YesNo(AllBytes(&p, sizeof p, 0x7f)));
  R(cuDeviceGetProperties(&p, 1));
  R(cuDeviceGetProperties(&p, 99));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Smaller device queries.

// dev:misc: exec affinity, LUID, 1D linear texture width.
int CaseDeviceMisc() {
  int pi = -7;
  R(cuDeviceGetExecAffinitySupport(&pi, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
  Say("before cuInit: value = %d", pi);
  R(cuInit(0));
  pi = -7;
  R(cuDeviceGetExecAffinitySupport(&pi, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
  Say("SM_COUNT supported = %d", pi);
  pi = -7;
  R(cuDeviceGetExecAffinitySupport(&pi, CU_EXEC_AFFINITY_TYPE_MAX, 0));
  Say("value after MAX = %d", pi);
  R(cuDeviceGetExecAffinitySupport(&pi, static_cast<CUexecAffinityType>(-1), 0));
  R(cuDeviceGetExecAffinitySupport(nullptr, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
  pi = -7;
  R(cuDeviceGetExecAffinitySupport(&pi, CU_EXEC_AFFINITY_TYPE_SM_COUNT, -1));
  Say("value after bad device = %d", pi);
  R(cuDeviceGetExecAffinitySupport(&pi, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 99));

  char luid[8];
  unsigned int mask = 77;
  memset(luid, 0x5a, sizeof luid);
  R(cuDeviceGetLuid(luid, &mask, 0));
  Say("luid untouched = %s, zero = %s, mask = %u", YesNo(AllBytes(luid, 8, 0x5a)),
      YesNo(AllBytes(luid, 8, 0)), mask);
  R(cuDeviceGetLuid(nullptr, &mask, 0));
  R(cuDeviceGetLuid(luid, nullptr, 0));
  R(cuDeviceGetLuid(luid, &mask, -1));
  R(cuDeviceGetLuid(luid, &mask, 99));

  struct F {
    CUarray_format f;
    const char* n;
  } fmts[] = {{CU_AD_FORMAT_UNSIGNED_INT8, "U8"},   {CU_AD_FORMAT_UNSIGNED_INT16, "U16"},
              {CU_AD_FORMAT_UNSIGNED_INT32, "U32"}, {CU_AD_FORMAT_FLOAT, "FLOAT"},
              {CU_AD_FORMAT_HALF, "HALF"},          {CU_AD_FORMAT_BC1_UNORM, "BC1"},
              {CU_AD_FORMAT_NV12, "NV12"},          {static_cast<CUarray_format>(0x77), "0x77"}};
  for (auto& f : fmts) {
    for (unsigned ch : {1u, 2u, 4u}) {
      size_t w = 12345;
      CUresult r = cuDeviceGetTexture1DLinearMaxWidth(&w, f.f, ch, 0);
      Say("cuDeviceGetTexture1DLinearMaxWidth(%s, %u channels) = %s, width = %zu", f.n, ch,
          Name(r), w);
    }
  }
  for (unsigned ch : {0u, 3u, 5u}) {
    size_t w = 12345;
    CUresult r = cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, ch, 0);
    Say("cuDeviceGetTexture1DLinearMaxWidth(FLOAT, %u channels) = %s, width = %zu", ch, Name(r),
        w);
  }
  Say("attribute MAXIMUM_TEXTURE1D_LINEAR_WIDTH = %d",
      Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH));
  R(cuDeviceGetTexture1DLinearMaxWidth(nullptr, CU_AD_FORMAT_FLOAT, 1, 0));
  size_t w = 0;
  R(cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 1, -1));
  R(cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 1, 99));
  return 0;
}

// dev:atomics: host and P2P atomic capabilities of every operation.
int CaseAtomics() {
  LOAD(cuDeviceGetHostAtomicCapabilities);
  LOAD(cuDeviceGetP2PAtomicCapabilities);
  CUatomicOperation op = CU_ATOMIC_OPERATION_INTEGER_ADD;
  unsigned int cap = 77;
  R(cuDeviceGetHostAtomicCapabilities(&cap, &op, 1, 0));
  Say("before cuInit: cap = %u", cap);
  R(cuInit(0));
  CUatomicOperation ops[CU_ATOMIC_OPERATION_MAX];
  unsigned int caps[CU_ATOMIC_OPERATION_MAX];
  for (int i = 0; i < CU_ATOMIC_OPERATION_MAX; ++i) {
    ops[i] = static_cast<CUatomicOperation>(i);
    caps[i] = 0xdead;
  }
  R(cuDeviceGetHostAtomicCapabilities(caps, ops, CU_ATOMIC_OPERATION_MAX, 0));
  for (int i = 0; i < CU_ATOMIC_OPERATION_MAX; ++i) Say("host op %d: caps = 0x%x", i, caps[i]);
  for (int i = 0; i < CU_ATOMIC_OPERATION_MAX; ++i) caps[i] = 0xdead;
  R(cuDeviceGetP2PAtomicCapabilities(caps, ops, CU_ATOMIC_OPERATION_MAX, 0, 0));
  for (int i = 0; i < CU_ATOMIC_OPERATION_MAX; ++i) Say("p2p 0->0 op %d: caps = 0x%x", i, caps[i]);
  cap = 77;
  R(cuDeviceGetHostAtomicCapabilities(&cap, &op, 0, 0));
  Say("cap after count 0 = %u", cap);
  R(cuDeviceGetHostAtomicCapabilities(nullptr, &op, 1, 0));
  R(cuDeviceGetHostAtomicCapabilities(&cap, nullptr, 1, 0));
  R(cuDeviceGetHostAtomicCapabilities(nullptr, nullptr, 0, 0));
  CUatomicOperation bad = CU_ATOMIC_OPERATION_MAX;
  cap = 77;
  R(cuDeviceGetHostAtomicCapabilities(&cap, &bad, 1, 0));
  Say("cap after MAX op = %u", cap);
  bad = static_cast<CUatomicOperation>(-1);
  R(cuDeviceGetHostAtomicCapabilities(&cap, &bad, 1, 0));
  R(cuDeviceGetHostAtomicCapabilities(&cap, &op, 1, -1));
  R(cuDeviceGetHostAtomicCapabilities(&cap, &op, 1, 99));
  cap = 77;
  R(cuDeviceGetP2PAtomicCapabilities(&cap, &op, 1, 0, 0));
  Say("p2p 0->0 INTEGER_ADD cap = 0x%x", cap);
  R(cuDeviceGetP2PAtomicCapabilities(&cap, &op, 1, 0, 1));
  R(cuDeviceGetP2PAtomicCapabilities(&cap, &op, 1, 1, 0));
  R(cuDeviceGetP2PAtomicCapabilities(&cap, &op, 1, -1, 0));
  R(cuDeviceGetP2PAtomicCapabilities(nullptr, &op, 1, 0, 0));
  R(cuDeviceGetP2PAtomicCapabilities(&cap, nullptr, 1, 0, 0));
  R(cuDeviceGetP2PAtomicCapabilities(&cap, &bad, 1, 0, 0));
  cap = 77;
  R(cuDeviceGetP2PAtomicCapabilities(&cap, &op, 0, 0, 0));
  Say("cap after count 0 = %u", cap);
  return 0;
}

std::atomic<int> g_async_calls{0};
void AsyncCb(CUasyncNotificationInfo*, void*, CUasyncCallbackHandle) { ++g_async_calls; }

// dev:notify: NvSciSync attributes, async notifications, GPUDirect RDMA flush.
int CaseDeviceNotify() {
  char attrs[256];
  R(cuDeviceGetNvSciSyncAttributes(attrs, 0, 0));
  CUasyncCallbackHandle h = Garbage<CUasyncCallbackHandle>();
  R(cuDeviceRegisterAsyncNotification(0, AsyncCb, nullptr, &h));
  R(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                               CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
  R(cuInit(0));
  memset(attrs, 0x5a, sizeof attrs);
  R(cuDeviceGetNvSciSyncAttributes(attrs, 0, CUDA_NVSCISYNC_ATTR_SIGNAL));
  Say("attrs untouched = %s", YesNo(AllBytes(attrs, sizeof attrs, 0x5a)));
  R(cuDeviceGetNvSciSyncAttributes(attrs, 0, CUDA_NVSCISYNC_ATTR_WAIT));
  R(cuDeviceGetNvSciSyncAttributes(attrs, 0, 0));
  R(cuDeviceGetNvSciSyncAttributes(attrs, 0, 3));
  R(cuDeviceGetNvSciSyncAttributes(attrs, 0, 4));
  R(cuDeviceGetNvSciSyncAttributes(nullptr, 0, CUDA_NVSCISYNC_ATTR_SIGNAL));
  R(cuDeviceGetNvSciSyncAttributes(attrs, -1, CUDA_NVSCISYNC_ATTR_SIGNAL));
  R(cuDeviceGetNvSciSyncAttributes(attrs, 99, CUDA_NVSCISYNC_ATTR_SIGNAL));

  h = Garbage<CUasyncCallbackHandle>();
  CUresult r = R(cuDeviceRegisterAsyncNotification(0, AsyncCb, nullptr, &h));
  Say("handle = %s", h == Garbage<CUasyncCallbackHandle>() ? "untouched"
                     : h == nullptr                        ? "null"
                                                           : "set");
  CUasyncCallbackHandle h2 = Garbage<CUasyncCallbackHandle>();
  int user = 0;
  CUresult r2 = R(cuDeviceRegisterAsyncNotification(0, AsyncCb, &user, &h2));
  if (r == CUDA_SUCCESS && r2 == CUDA_SUCCESS) Say("second handle differs = %s", YesNo(h != h2));
  R(cuDeviceRegisterAsyncNotification(0, nullptr, nullptr, &h2));
  CRASHY("notify:null-handle", cuDeviceRegisterAsyncNotification(0, AsyncCb, nullptr, nullptr));
  R(cuDeviceRegisterAsyncNotification(-1, AsyncCb, nullptr, &h2));
  R(cuDeviceRegisterAsyncNotification(99, AsyncCb, nullptr, &h2));
  if (r == CUDA_SUCCESS) {
    R(cuDeviceUnregisterAsyncNotification(-1, h));
    R(cuDeviceUnregisterAsyncNotification(0, h));
    R(cuDeviceUnregisterAsyncNotification(0, h));
  }
  if (r2 == CUDA_SUCCESS) R(cuDeviceUnregisterAsyncNotification(0, h2));
  R(cuDeviceUnregisterAsyncNotification(0, nullptr));
  R(cuDeviceUnregisterAsyncNotification(0, Garbage<CUasyncCallbackHandle>()));
  Say("callbacks run = %d", g_async_calls.load());

  Say("attribute GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = %d",
      Attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS));
  Say("attribute GPU_DIRECT_RDMA_WRITES_ORDERING = %d",
      Attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING));
  Say("attribute GPU_DIRECT_RDMA_SUPPORTED = %d", Attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED));
  R(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                               CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
  Base b;
  if (!b.Init()) return 1;
  R(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                               CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
  R(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                               CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES));
  R(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                               static_cast<CUflushGPUDirectRDMAWritesScope>(0)));
  R(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                               static_cast<CUflushGPUDirectRDMAWritesScope>(300)));
  R(cuFlushGPUDirectRDMAWrites(static_cast<CUflushGPUDirectRDMAWritesTarget>(1),
                               CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
  return 0;
}

// ------------------------------------------------------------------------------------------
// CUDA 13's location-based pool getters.

// pool:get: cuMemGetDefaultMemPool / cuMemGetMemPool for every location and type.
int CasePoolGet() {
  LOAD(cuMemGetDefaultMemPool);
  LOAD(cuMemGetMemPool);
  CUmemoryPool p = Garbage<CUmemoryPool>();
  CUmemLocation dev0 = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  R(cuMemGetDefaultMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  R(cuMemGetMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  R(cuInit(0));
  Say("attribute MEMORY_POOLS_SUPPORTED = %d", Attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED));
  Say("attribute HOST_MEMORY_POOLS_SUPPORTED = %d",
      Attr(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED));
  Say("attribute HOST_NUMA_MEMORY_POOLS_SUPPORTED = %d",
      Attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED));
  Say("attribute HOST_NUMA_ID = %d", Attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID));
  Say("attribute CONCURRENT_MANAGED_ACCESS = %d",
      Attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS));
  CUmemoryPool def = nullptr;
  R(cuDeviceGetDefaultMemPool(&def, 0));
  // No context current: the getters need none?
  p = Garbage<CUmemoryPool>();
  R(cuMemGetDefaultMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  Say("no context: pool = %s", PoolRel(p, def));
  Base b;
  if (!b.Init()) return 1;
  struct L {
    CUmemLocationType t;
    int id;
    const char* n;
  } locs[] = {{CU_MEM_LOCATION_TYPE_DEVICE, 0, "DEVICE 0"},
              {CU_MEM_LOCATION_TYPE_DEVICE, 1, "DEVICE 1"},
              {CU_MEM_LOCATION_TYPE_DEVICE, -1, "DEVICE -1"},
              {CU_MEM_LOCATION_TYPE_HOST, 0, "HOST"},
              {CU_MEM_LOCATION_TYPE_HOST, 5, "HOST id 5"},
              {CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, "HOST_NUMA 0"},
              {CU_MEM_LOCATION_TYPE_HOST_NUMA, 1, "HOST_NUMA 1"},
              {CU_MEM_LOCATION_TYPE_HOST_NUMA, 999, "HOST_NUMA 999"},
              {CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, "HOST_NUMA_CURRENT"},
              {CU_MEM_LOCATION_TYPE_NONE, 0, "NONE"},
              {static_cast<CUmemLocationType>(9), 0, "type 9"}};
  struct T {
    CUmemAllocationType t;
    const char* n;
  } types[] = {{CU_MEM_ALLOCATION_TYPE_PINNED, "PINNED"},
               {CU_MEM_ALLOCATION_TYPE_MANAGED, "MANAGED"},
               {CU_MEM_ALLOCATION_TYPE_INVALID, "INVALID"},
               {static_cast<CUmemAllocationType>(7), "7"}};
  std::map<std::string, CUmemoryPool> seen;
  for (auto& l : locs) {
    for (auto& t : types) {
      CUmemLocation loc = Loc(l.t, l.id);
      p = Garbage<CUmemoryPool>();
      CUresult r = cuMemGetDefaultMemPool(&p, &loc, t.t);
      std::string key = std::string(l.n) + "/" + t.n;
      const char* rel = PoolRel(p, def);
      std::string same;
      if (r == CUDA_SUCCESS) {
        for (auto& [k, v] : seen)
          if (v == p && k != key) same += " same as " + k;
        seen[key] = p;
      }
      Say("cuMemGetDefaultMemPool(%s, %s) = %s, pool = %s%s, location after = %d/%d", l.n, t.n,
          Name(r), rel, same.c_str(), static_cast<int>(loc.type), loc.id);
      CUmemoryPool q = Garbage<CUmemoryPool>();
      r = cuMemGetMemPool(&q, &loc, t.t);
      Say("cuMemGetMemPool(%s, %s) = %s, pool = %s, equals default = %s", l.n, t.n, Name(r),
          PoolRel(q, def), YesNo(r == CUDA_SUCCESS && q == p));
    }
  }
  // Attributes of the host and managed default pools.
  for (auto& [k, v] : seen) {
    if (v == def) continue;
    cuuint64_t th = 77;
    CUresult r = cuMemPoolGetAttribute(v, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &th);
    Say("%s default pool: RELEASE_THRESHOLD = %s %llu", k.c_str(), Name(r),
        static_cast<unsigned long long>(th));
    CUmemAccess_flags f = static_cast<CUmemAccess_flags>(77);
    r = cuMemPoolGetAccess(&f, v, &dev0);
    Say("%s default pool: access from device 0 = %s %d", k.c_str(), Name(r), static_cast<int>(f));
    r = cuMemPoolDestroy(v);
    Say("%s default pool: cuMemPoolDestroy = %s", k.c_str(), Name(r));
  }
  R(cuMemGetDefaultMemPool(nullptr, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  R(cuMemGetDefaultMemPool(&p, nullptr, CU_MEM_ALLOCATION_TYPE_PINNED));
  R(cuMemGetMemPool(nullptr, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  R(cuMemGetMemPool(&p, nullptr, CU_MEM_ALLOCATION_TYPE_PINNED));
  return 0;
}

// pool:set: cuMemSetMemPool and what reads it back (cuMemGetMemPool, cuDeviceGetMemPool,
// cuMemAllocAsync).
int CasePoolSet() {
  LOAD(cuMemGetDefaultMemPool);
  LOAD(cuMemGetMemPool);
  LOAD(cuMemSetMemPool);
  CUmemLocation dev0 = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, nullptr));
  Base b;
  if (!b.Init()) return 1;
  CUmemoryPool def = nullptr, mine = nullptr, hostpool = nullptr, mine2 = nullptr;
  R(cuDeviceGetDefaultMemPool(&def, 0));
  CUmemPoolProps pp;
  memset(&pp, 0, sizeof pp);
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.location = dev0;
  R(cuMemPoolCreate(&mine, &pp));
  R(cuMemPoolCreate(&mine2, &pp));
  R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, mine));
  CUmemoryPool p = Garbage<CUmemoryPool>();
  R(cuMemGetMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  Say("cuMemGetMemPool after set = %s", PoolRel(p, def, mine));
  p = Garbage<CUmemoryPool>();
  R(cuDeviceGetMemPool(&p, 0));
  Say("cuDeviceGetMemPool after set = %s", PoolRel(p, def, mine));
  p = Garbage<CUmemoryPool>();
  R(cuMemGetDefaultMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  Say("cuMemGetDefaultMemPool after set = %s", PoolRel(p, def, mine));
  CUdeviceptr a = 0;
  if (R(cuMemAllocAsync(&a, 4096, b.s)) == CUDA_SUCCESS) {
    CUmemoryPool owner = Garbage<CUmemoryPool>();
    R(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
    Say("cuMemAllocAsync comes from = %s", PoolRel(owner, def, mine));
    R(cuMemFreeAsync(a, b.s));
    R(cuStreamSynchronize(b.s));
  }
  // cuDeviceSetMemPool is seen by cuMemGetMemPool.
  R(cuDeviceSetMemPool(0, mine2));
  p = Garbage<CUmemoryPool>();
  R(cuMemGetMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  Say("cuMemGetMemPool after cuDeviceSetMemPool = %s, the second created = %s",
      PoolRel(p, def, mine), YesNo(p == mine2));
  // Mismatches.
  R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_MANAGED, mine));
  CUmemLocation host = Loc(CU_MEM_LOCATION_TYPE_HOST, 0);
  R(cuMemSetMemPool(&host, CU_MEM_ALLOCATION_TYPE_PINNED, mine));
  CUmemLocation dev1 = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 1);
  R(cuMemSetMemPool(&dev1, CU_MEM_ALLOCATION_TYPE_PINNED, mine));
  CUmemLocation devm1 = Loc(CU_MEM_LOCATION_TYPE_DEVICE, -1);
  R(cuMemSetMemPool(&devm1, CU_MEM_ALLOCATION_TYPE_PINNED, mine));
  R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, nullptr));
  CRASHY("pool:set-garbage",
         cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, Garbage<CUmemoryPool>()));
  R(cuMemSetMemPool(nullptr, CU_MEM_ALLOCATION_TYPE_PINNED, mine));
  R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_INVALID, mine));
  p = Garbage<CUmemoryPool>();
  R(cuMemGetMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  Say("after the failed sets = %s, the second created = %s", PoolRel(p, def, mine),
      YesNo(p == mine2));
  // A host pool, set as the host location's current pool.
  CUmemPoolProps hp;
  memset(&hp, 0, sizeof hp);
  hp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  hp.location = host;
  if (R(cuMemPoolCreate(&hostpool, &hp)) == CUDA_SUCCESS) {
    R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, hostpool));
    CUmemoryPool hdef = nullptr;
    R(cuMemGetDefaultMemPool(&hdef, &host, CU_MEM_ALLOCATION_TYPE_PINNED));
    R(cuMemSetMemPool(&host, CU_MEM_ALLOCATION_TYPE_PINNED, hostpool));
    p = Garbage<CUmemoryPool>();
    R(cuMemGetMemPool(&p, &host, CU_MEM_ALLOCATION_TYPE_PINNED));
    Say("host current after set = %s, the host pool = %s, host default = %s",
        PoolRel(p, def, mine), YesNo(p == hostpool), YesNo(p == hdef));
    CUmemLocation numa0 = Loc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
    R(cuMemSetMemPool(&numa0, CU_MEM_ALLOCATION_TYPE_PINNED, hostpool));
    R(cuMemSetMemPool(&host, CU_MEM_ALLOCATION_TYPE_PINNED, hdef));
    p = Garbage<CUmemoryPool>();
    R(cuMemGetMemPool(&p, &host, CU_MEM_ALLOCATION_TYPE_PINNED));
    Say("host current after reset = the host default: %s", YesNo(p == hdef));
  }
  // A managed pool.
  CUmemPoolProps mp;
  memset(&mp, 0, sizeof mp);
  mp.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
  mp.location = dev0;
  CUmemoryPool managed = nullptr;
  if (R(cuMemPoolCreate(&managed, &mp)) == CUDA_SUCCESS) {
    R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_MANAGED, managed));
    p = Garbage<CUmemoryPool>();
    R(cuMemGetMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_MANAGED));
    Say("managed current = the managed pool: %s", YesNo(p == managed));
    R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, managed));
  }
  // Destroying the current pool: the current goes back to the default?
  R(cuMemPoolDestroy(mine2));
  p = Garbage<CUmemoryPool>();
  R(cuMemGetMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  Say("after destroying the current pool = %s", PoolRel(p, def, mine));
  R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, mine2));
  // The default pool set back explicitly.
  R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, def));
  p = Garbage<CUmemoryPool>();
  R(cuDeviceGetMemPool(&p, 0));
  Say("cuDeviceGetMemPool after setting the default = %s", PoolRel(p, def, mine));
  R(cuMemPoolDestroy(mine));
  if (hostpool) R(cuMemPoolDestroy(hostpool));
  if (managed) R(cuMemPoolDestroy(managed));
  // No current context.
  cuCtxSetCurrent(nullptr);
  R(cuMemSetMemPool(&dev0, CU_MEM_ALLOCATION_TYPE_PINNED, def));
  p = Garbage<CUmemoryPool>();
  R(cuMemGetMemPool(&p, &dev0, CU_MEM_ALLOCATION_TYPE_PINNED));
  Say("no context: current = %s", PoolRel(p, def));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Memory-pool IPC.

CUmemoryPool MakeIpcPool(CUmemAllocationHandleType ht) {
  CUmemPoolProps pp;
  memset(&pp, 0, sizeof pp);
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.handleTypes = ht;
  pp.location = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  CUmemoryPool p = nullptr;
  CUresult r = cuMemPoolCreate(&p, &pp);
  Say("cuMemPoolCreate(handleTypes %d) = %s", static_cast<int>(ht), Name(r));
  return r == CUDA_SUCCESS ? p : nullptr;
}

// pool:ipc: export/import of a pool and of its pointers within the process.
int CasePoolIpc() {
  Base b;
  if (!b.Init()) return 1;
  Say("attribute MEMPOOL_SUPPORTED_HANDLE_TYPES = %d",
      Attr(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES));
  CUmemoryPool pool = MakeIpcPool(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemoryPool plain = MakeIpcPool(CU_MEM_HANDLE_TYPE_NONE);
  if (pool == nullptr || plain == nullptr) return 1;
  int fd = -7;
  R(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  Say("fd >= 0 = %s", YesNo(fd >= 0));
  int fd2 = -7;
  R(cuMemPoolExportToShareableHandle(&fd2, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  Say("second fd >= 0 = %s, differs = %s", YesNo(fd2 >= 0), YesNo(fd2 != fd));
  if (fd2 >= 0) close(fd2);
  int bad = -7;
  R(cuMemPoolExportToShareableHandle(&bad, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1));
  Say("fd after flags 1 = %d", bad);
  R(cuMemPoolExportToShareableHandle(&bad, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  R(cuMemPoolExportToShareableHandle(&bad, pool, CU_MEM_HANDLE_TYPE_NONE, 0));
  R(cuMemPoolExportToShareableHandle(&bad, pool, CU_MEM_HANDLE_TYPE_WIN32, 0));
  R(cuMemPoolExportToShareableHandle(nullptr, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  R(cuMemPoolExportToShareableHandle(&bad, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  Say("fd after the plain pool = %d", bad);
  CUmemoryPool def = nullptr;
  cuDeviceGetDefaultMemPool(&def, 0);
  R(cuMemPoolExportToShareableHandle(&bad, def, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  R(cuMemPoolExportToShareableHandle(&bad, nullptr, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CRASHY("pool:export-garbage",
         cuMemPoolExportToShareableHandle(&bad, Garbage<CUmemoryPool>(),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  // Importing in the exporting process.
  CUmemoryPool imported = Garbage<CUmemoryPool>();
  CUresult ri = R(cuMemPoolImportFromShareableHandle(
      &imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  Say("imported pool = %s", imported == Garbage<CUmemoryPool>() ? "untouched"
                            : imported == nullptr                ? "null"
                            : imported == pool                   ? "the exported pool"
                                                                 : "another pool");
  R(cuMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1));
  R(cuMemPoolImportFromShareableHandle(nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemoryPool junk = Garbage<CUmemoryPool>();
  R(cuMemPoolImportFromShareableHandle(&junk, reinterpret_cast<void*>(static_cast<intptr_t>(-1)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  int devnull = open("/dev/null", O_RDONLY);
  R(cuMemPoolImportFromShareableHandle(&junk, reinterpret_cast<void*>(static_cast<intptr_t>(devnull)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  Say("pool after bad fds untouched = %s", YesNo(junk == Garbage<CUmemoryPool>()));
  R(cuMemPoolImportFromShareableHandle(&junk, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_FABRIC, 0));
  // A cuMemCreate fd imported as a pool.
  CUmemAllocationProp ap;
  memset(&ap, 0, sizeof ap);
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  ap.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle vh = 0;
  if (cuMemCreate(&vh, 2 << 20, &ap, 0) == CUDA_SUCCESS) {
    int vfd = -1;
    if (cuMemExportToShareableHandle(&vfd, vh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) ==
        CUDA_SUCCESS) {
      R(cuMemPoolImportFromShareableHandle(&junk,
                                           reinterpret_cast<void*>(static_cast<intptr_t>(vfd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      close(vfd);
    }
    cuMemRelease(vh);
  }
  // Pointers.
  CUdeviceptr a = 0;
  R(cuMemAllocFromPoolAsync(&a, 1 << 20, pool, b.s));
  R(cuStreamSynchronize(b.s));
  R(WritePattern(a, 4096, 11));
  CUmemPoolPtrExportData d1, d2;
  memset(&d1, 0, sizeof d1);
  memset(&d2, 0x77, sizeof d2);
  R(cuMemPoolExportPointer(&d1, a));
  Say("export data nonzero = %s", YesNo(!AllBytes(&d1, sizeof d1, 0)));
  R(cuMemPoolExportPointer(&d2, a));
  Say("second export equals first = %s", YesNo(memcmp(&d1, &d2, sizeof d1) == 0));
  memset(&d2, 0x77, sizeof d2);
  R(cuMemPoolExportPointer(&d2, a + 4096));
  Say("interior export untouched = %s, equals base = %s", YesNo(AllBytes(&d2, sizeof d2, 0x77)),
      YesNo(memcmp(&d1, &d2, sizeof d1) == 0));
  R(cuMemPoolExportPointer(nullptr, a));
  R(cuMemPoolExportPointer(&d2, 0));
  R(cuMemPoolExportPointer(&d2, Garbage<CUdeviceptr>()));
  CUdeviceptr pa = 0;
  R(cuMemAllocFromPoolAsync(&pa, 4096, plain, b.s));
  R(cuStreamSynchronize(b.s));
  memset(&d2, 0x77, sizeof d2);
  R(cuMemPoolExportPointer(&d2, pa));
  Say("export of the plain pool's pointer untouched = %s", YesNo(AllBytes(&d2, sizeof d2, 0x77)));
  CUdeviceptr da = 0;
  R(cuMemAllocAsync(&da, 4096, b.s));
  R(cuStreamSynchronize(b.s));
  R(cuMemPoolExportPointer(&d2, da));
  CUdeviceptr m = 0;
  R(cuMemAlloc(&m, 4096));
  R(cuMemPoolExportPointer(&d2, m));
  // Importing a pointer in the exporting process.
  CUdeviceptr ip = 77;
  R(cuMemPoolImportPointer(&ip, pool, &d1));
  Say("imported pointer = %s", ip == 77 ? "untouched" : ip == 0 ? "0" : ip == a ? "the original" : "other");
  if (ri == CUDA_SUCCESS) {
    ip = 77;
    R(cuMemPoolImportPointer(&ip, imported, &d1));
    Say("imported pointer via the imported pool = %s",
        ip == 77 ? "untouched" : ip == 0 ? "0" : ip == a ? "the original" : "other");
  }
  R(cuMemPoolImportPointer(nullptr, pool, &d1));
  R(cuMemPoolImportPointer(&ip, pool, nullptr));
  R(cuMemPoolImportPointer(&ip, nullptr, &d1));
  R(cuMemPoolImportPointer(&ip, Garbage<CUmemoryPool>(), &d1));
  CUmemPoolPtrExportData junkd;
  memset(&junkd, 0x5a, sizeof junkd);
  R(cuMemPoolImportPointer(&ip, pool, &junkd));
  R(cuMemPoolImportPointer(&ip, plain, &d1));
  // Destroying the imported pool, freeing, then exporting the freed pointer.
  R(cuMemFreeAsync(a, b.s));
  R(cuStreamSynchronize(b.s));
  memset(&d2, 0x77, sizeof d2);
  R(cuMemPoolExportPointer(&d2, a));
  R(cuMemFreeAsync(pa, b.s));
  R(cuMemFreeAsync(da, b.s));
  R(cuStreamSynchronize(b.s));
  R(cuMemFree(m));
  if (ri == CUDA_SUCCESS && imported != pool) R(cuMemPoolDestroy(imported));
  R(cuMemPoolDestroy(pool));
  R(cuMemPoolDestroy(plain));
  // Export of a destroyed pool.
  R(cuMemPoolExportToShareableHandle(&bad, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  if (fd >= 0) close(fd);
  close(devnull);
  return 0;
}

// pool:child: the parent exports an IPC pool (fd inherited by the child) and a pointer (export
// data on the child's stdin); the child imports both and reads the pattern; the parent then reads
// what the child wrote.
int CasePoolChild(const char* self) {
  Base b;
  if (!b.Init()) return 1;
  CUmemoryPool pool = MakeIpcPool(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  if (pool == nullptr) return 1;
  int fd = -1;
  if (R(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) !=
      CUDA_SUCCESS)
    return 1;
  CUdeviceptr a = 0;
  R(cuMemAllocFromPoolAsync(&a, 1 << 20, pool, b.s));
  R(cuStreamSynchronize(b.s));
  R(WritePattern(a, 4096, 21));
  CUmemPoolPtrExportData d;
  memset(&d, 0, sizeof d);
  R(cuMemPoolExportPointer(&d, a));
  int in[2];
  if (pipe(in) != 0) return 1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    close(in[1]);
    fcntl(fd, F_SETFD, 0);  // the exported descriptor may be close-on-exec
    char fdarg[32];
    snprintf(fdarg, sizeof fdarg, "%d", fd);
    execl(self, self, "poolchild", g_case, fdarg, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  ssize_t w = write(in[1], &d, sizeof d);
  (void)w;
  close(in[1]);
  int st = 0;
  waitpid(pid, &st, 0);
  Say("child exit = %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  CheckPattern("parent after the child wrote", a, 4096, 22);
  R(cuMemFreeAsync(a, b.s));
  R(cuStreamSynchronize(b.s));
  R(cuMemPoolDestroy(pool));
  close(fd);
  return 0;
}

int PoolChildSide(int fd) {
  CUmemPoolPtrExportData d;
  size_t got = 0;
  while (got < sizeof d) {
    ssize_t n = read(0, reinterpret_cast<char*>(&d) + got, sizeof d - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  Say("child: read export data = %s", YesNo(got == sizeof d));
  CUmemoryPool p = Garbage<CUmemoryPool>();
  R(cuMemPoolImportFromShareableHandle(&p, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  Say("child: before cuInit pool untouched = %s", YesNo(p == Garbage<CUmemoryPool>()));
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr ip = 0;
  R(cuMemPoolImportPointer(&ip, p == Garbage<CUmemoryPool>() ? nullptr : p, &d));
  if (R(cuMemPoolImportFromShareableHandle(&p, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) !=
      CUDA_SUCCESS)
    return 2;
  Say("child: imported pool set = %s", YesNo(p != nullptr && p != Garbage<CUmemoryPool>()));
  CUmemAccess_flags f = static_cast<CUmemAccess_flags>(77);
  CUmemLocation dev0 = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  R(cuMemPoolGetAccess(&f, p, &dev0));
  Say("child: access = %d", static_cast<int>(f));
  ip = 77;
  if (R(cuMemPoolImportPointer(&ip, p, &d)) == CUDA_SUCCESS) {
    CheckPattern("child: imported pointer", ip, 4096, 21);
    R(WritePattern(ip, 4096, 22));
    CUdeviceptr ip2 = 0;
    R(cuMemPoolImportPointer(&ip2, p, &d));
    Say("child: second import same pointer = %s", YesNo(ip2 == ip));
    CUmemoryPool owner = nullptr;
    R(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, ip));
    Say("child: pointer's pool = the imported pool: %s", YesNo(owner == p));
    CUdeviceptr x = 0;
    R(cuMemAllocFromPoolAsync(&x, 4096, p, b.s));
    CUmemPoolPtrExportData d2;
    R(cuMemPoolExportPointer(&d2, ip));
    R(cuMemFreeAsync(ip, b.s));
    R(cuStreamSynchronize(b.s));
    R(cuMemFree(ip));
  }
  cuuint64_t v = 77;
  R(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
  int fd2 = -1;
  R(cuMemPoolExportToShareableHandle(&fd2, p, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  if (fd2 >= 0) close(fd2);
  R(cuMemPoolDestroy(p));
  return 0;
}

// ------------------------------------------------------------------------------------------
// dma-buf.

// dmabuf: cuMemGetHandleForAddressRange.
int CaseDmaBuf() {
  int fd = -7;
  R(cuMemGetHandleForAddressRange(&fd, 0, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  Base b;
  if (!b.Init()) return 1;
  Say("attribute DMA_BUF_SUPPORTED = %d", Attr(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED));
  CUdeviceptr a = 0;
  R(cuMemAlloc(&a, 4 << 20));
  auto get = [&](const char* what, CUdeviceptr p, size_t n, CUmemRangeHandleType t,
                 unsigned long long flags) {
    int f = -7;
    CUresult r = cuMemGetHandleForAddressRange(&f, p, n, t, flags);
    Say("cuMemGetHandleForAddressRange(%s) = %s, fd %s", what, Name(r),
        f == -7 ? "untouched" : f >= 0 ? ">= 0" : "negative");
    if (r == CUDA_SUCCESS && f >= 0) {
      struct stat sb;
      Say("%s: fstat works = %s", what, YesNo(fstat(f, &sb) == 0));
      close(f);
    }
  };
  get("base 4 MiB", a, 4 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("base 64 KiB", a, 64 << 10, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("base 4 KiB", a, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("base 100 bytes", a, 100, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("offset 64 KiB", a + (64 << 10), 64 << 10, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("offset 4 KiB", a + 4096, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("past the end", a, 8 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("size 0", a, 0, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("PCIE flag", a, 4 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
      CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
  get("flags 2", a, 4 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 2);
  get("type 0", a, 4 << 20, static_cast<CUmemRangeHandleType>(0), 0);
  get("type 2", a, 4 << 20, static_cast<CUmemRangeHandleType>(2), 0);
  get("null pointer", 0, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  get("garbage pointer", Garbage<CUdeviceptr>(), 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  R(cuMemGetHandleForAddressRange(nullptr, a, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  void* host = nullptr;
  if (cuMemAllocHost(&host, 2 << 20) == CUDA_SUCCESS) {
    get("cuMemAllocHost", reinterpret_cast<CUdeviceptr>(host), 2 << 20,
        CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    cuMemFreeHost(host);
  }
  CUdeviceptr mg = 0;
  if (cuMemAllocManaged(&mg, 2 << 20, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS) {
    get("cuMemAllocManaged", mg, 2 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    cuMemFree(mg);
  }
  CUdeviceptr as = 0;
  if (cuMemAllocAsync(&as, 2 << 20, b.s) == CUDA_SUCCESS) {
    cuStreamSynchronize(b.s);
    get("cuMemAllocAsync", as, 2 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    cuMemFreeAsync(as, b.s);
    cuStreamSynchronize(b.s);
  }
  cuCtxSetCurrent(nullptr);
  get("no context", a, 4 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  cuCtxSetCurrent(b.ctx);
  R(cuMemFree(a));
  get("freed", a, 4 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Profiler, checkpoint, logs.

// profiler:init: cuProfilerInitialize.
int CaseProfilerInit() {
  LOAD(cuProfilerInitialize);
  R(cuProfilerInitialize(nullptr, nullptr, CU_OUT_KEY_VALUE_PAIR));
  Base b;
  if (!b.Init()) return 1;
  R(cuProfilerInitialize(nullptr, nullptr, CU_OUT_KEY_VALUE_PAIR));
  R(cuProfilerInitialize("/dev/null", "/tmp/cuhal_devext_profile.out", CU_OUT_KEY_VALUE_PAIR));
  R(cuProfilerInitialize("/dev/null", "/tmp/cuhal_devext_profile.out", CU_OUT_CSV));
  R(cuProfilerInitialize("/dev/null", "/tmp/cuhal_devext_profile.out",
                         static_cast<CUoutput_mode>(7)));
  R(cuProfilerInitialize("/nonexistent/config", "/tmp/cuhal_devext_profile.out",
                         CU_OUT_KEY_VALUE_PAIR));
  struct stat sb;
  Say("output file exists = %s", YesNo(stat("/tmp/cuhal_devext_profile.out", &sb) == 0));
  unlink("/tmp/cuhal_devext_profile.out");
  cuCtxSetCurrent(nullptr);
  R(cuProfilerInitialize("/dev/null", "/tmp/cuhal_devext_profile.out", CU_OUT_KEY_VALUE_PAIR));
  return 0;
}

const char* StateName(CUprocessState s) {
  switch (s) {
    case CU_PROCESS_STATE_RUNNING: return "RUNNING";
    case CU_PROCESS_STATE_LOCKED: return "LOCKED";
    case CU_PROCESS_STATE_CHECKPOINTED: return "CHECKPOINTED";
    case CU_PROCESS_STATE_FAILED: return "FAILED";
    default: return "other";
  }
}

// checkpoint:<mode>: noinit | init (cuInit only) | ctx. Only the probe's own pid with safe calls,
// plus invalid pids and arguments.
int CaseCheckpoint(const std::string& mode) {
  LOAD(cuCheckpointProcessGetState);
  LOAD(cuCheckpointProcessGetRestoreThreadId);
  LOAD(cuCheckpointProcessLock);
  LOAD(cuCheckpointProcessCheckpoint);
  LOAD(cuCheckpointProcessRestore);
  LOAD(cuCheckpointProcessUnlock);
  Base b;
  if (mode == "init") R(cuInit(0));
  if (mode == "ctx" && !b.Init()) return 1;
  int me = getpid();
  // A live non-CUDA process: a forked child that sleeps.
  pid_t other = fork();
  if (other == 0) {
    pause();
    _exit(0);
  }
  CUprocessState s = static_cast<CUprocessState>(77);
  R(cuCheckpointProcessGetState(me, &s));
  Say("own state = %s", s == 77 ? "untouched" : StateName(s));
  R(cuCheckpointProcessGetState(me, nullptr));
  s = static_cast<CUprocessState>(77);
  R(cuCheckpointProcessGetState(other, &s));
  Say("non-CUDA child state = %s", s == 77 ? "untouched" : StateName(s));
  R(cuCheckpointProcessGetState(0, &s));
  R(cuCheckpointProcessGetState(-1, &s));
  R(cuCheckpointProcessGetState(0x3fffffff, &s));
  int tid = -7;
  R(cuCheckpointProcessGetRestoreThreadId(me, &tid));
  Say("restore tid = %s", tid == -7 ? "untouched" : tid == me ? "the pid" : tid > 0 ? "positive, not the pid" : "other");
  R(cuCheckpointProcessGetRestoreThreadId(me, nullptr));
  tid = -7;
  R(cuCheckpointProcessGetRestoreThreadId(other, &tid));
  R(cuCheckpointProcessGetRestoreThreadId(-1, &tid));
  R(cuCheckpointProcessGetRestoreThreadId(0x3fffffff, &tid));
  // Lock/Checkpoint/Restore/Unlock only with invalid pids or arguments (nonzero reserved
  // fields); never a valid lock of this process.
  CUcheckpointLockArgs la;
  memset(&la, 0, sizeof la);
  R(cuCheckpointProcessLock(-1, &la));
  R(cuCheckpointProcessLock(0x3fffffff, &la));
  R(cuCheckpointProcessLock(other, &la));
  la.reserved0 = 1;
  R(cuCheckpointProcessLock(-1, &la));
  CUcheckpointCheckpointArgs ca;
  memset(&ca, 0, sizeof ca);
  R(cuCheckpointProcessCheckpoint(-1, &ca));
  R(cuCheckpointProcessCheckpoint(-1, nullptr));
  R(cuCheckpointProcessCheckpoint(other, nullptr));
  ca.reserved[0] = 1;
  R(cuCheckpointProcessCheckpoint(me, &ca));
  CUcheckpointRestoreArgs ra;
  memset(&ra, 0, sizeof ra);
  R(cuCheckpointProcessRestore(-1, &ra));
  R(cuCheckpointProcessRestore(-1, nullptr));
  ra.reserved1 = 1;
  R(cuCheckpointProcessRestore(me, &ra));
  CUcheckpointUnlockArgs ua;
  memset(&ua, 0, sizeof ua);
  R(cuCheckpointProcessUnlock(-1, &ua));
  R(cuCheckpointProcessUnlock(other, nullptr));
  ua.reserved[0] = 1;
  R(cuCheckpointProcessUnlock(me, &ua));
  s = static_cast<CUprocessState>(77);
  R(cuCheckpointProcessGetState(me, &s));
  Say("own state at the end = %s", s == 77 ? "untouched" : StateName(s));
  kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
  s = static_cast<CUprocessState>(77);
  R(cuCheckpointProcessGetState(other, &s));
  if (mode == "ctx") {
    CUdeviceptr a = 0;
    R(cuMemAlloc(&a, 4096));
    R(cuMemFree(a));
  }
  return 0;
}

std::atomic<int> g_log_calls{0};
std::string g_log_first;
void LogCb(void* data, CUlogLevel level, char* message, size_t length) {
  if (g_log_calls++ == 0) {
    g_log_first = std::string(message, strnlen(message, length));
    (void)level;
    (void)data;
  }
}

// Prints a log text with digits replaced by '#' (timestamps, pids).
std::string Shape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '\n') o += "\\n";
    else if (c >= '0' && c <= '9') o += '#';
    else o += c;
  }
  return o.substr(0, 300);
}

// logs: register/unregister, current, dumps, after an error that the driver logs.
int CaseLogs() {
  LOAD(cuLogsRegisterCallback);
  LOAD(cuLogsUnregisterCallback);
  LOAD(cuLogsCurrent);
  LOAD(cuLogsDumpToFile);
  LOAD(cuLogsDumpToMemory);
  CUlogIterator it = 77;
  R(cuLogsCurrent(&it, 0));
  Say("before cuInit: iterator = %s", it == 77 ? "untouched" : "set");
  CUlogsCallbackHandle h = Garbage<CUlogsCallbackHandle>();
  CUresult rh = R(cuLogsRegisterCallback(LogCb, nullptr, &h));
  if (rh == CUDA_SUCCESS) R(cuLogsUnregisterCallback(h));
  R(cuInit(0));
  it = 77;
  R(cuLogsCurrent(&it, 0));
  Say("iterator = %u", it);
  CUlogIterator start = it;
  R(cuLogsCurrent(nullptr, 0));
  R(cuLogsCurrent(&it, 1));
  h = Garbage<CUlogsCallbackHandle>();
  rh = R(cuLogsRegisterCallback(LogCb, nullptr, &h));
  Say("handle = %s", h == Garbage<CUlogsCallbackHandle>() ? "untouched" : h == nullptr ? "null" : "set");
  R(cuLogsRegisterCallback(nullptr, nullptr, &h));
  CUlogsCallbackHandle h2 = nullptr;
  R(cuLogsRegisterCallback(LogCb, nullptr, nullptr));
  CUresult rh2 = R(cuLogsRegisterCallback(LogCb, &h2, &h2));
  // Provoke errors the driver may log.
  CUdeviceptr p = 0;
  R(cuMemAlloc(&p, 4096));  // no context
  Base b;
  if (!b.Init()) return 1;
  R(cuMemAlloc(&p, 1ull << 50));  // out of memory
  R(cuMemFree(Garbage<CUdeviceptr>()));
  CRASHY("logs:sync-garbage", cuStreamSynchronize(Garbage<CUstream>()));
  Say("callback calls > 0 = %s", YesNo(g_log_calls.load() > 0));
  if (g_log_calls.load() > 0) Say("first message shape = %s", Shape(g_log_first).c_str());
  // Dump to memory.
  size_t size = 0;
  CUlogIterator i0 = start;
  R(cuLogsDumpToMemory(&i0, nullptr, &size, 0));
  Say("size with null buffer = %zu", size);
  std::vector<char> buf(1 << 16, 'Z');
  size = buf.size();
  i0 = start;
  CUresult rd = R(cuLogsDumpToMemory(&i0, buf.data(), &size, 0));
  Say("dumped size > 0 = %s, iterator advanced = %s", YesNo(size > 0), YesNo(i0 != start));
  if (rd == CUDA_SUCCESS) {
    std::string text(buf.data(), strnlen(buf.data(), std::min(size, buf.size())));
    Say("dump shape = %s", Shape(text).c_str());
  }
  size = buf.size();
  R(cuLogsDumpToMemory(nullptr, buf.data(), &size, 0));
  Say("dump with null iterator: size > 0 = %s", YesNo(size > 0));
  R(cuLogsDumpToMemory(&i0, buf.data(), nullptr, 0));
  size = 4;
  i0 = start;
  R(cuLogsDumpToMemory(&i0, buf.data(), &size, 0));
  Say("size after a 4-byte buffer = %zu", size);
  size = buf.size();
  R(cuLogsDumpToMemory(&i0, buf.data(), &size, 1));
  CUlogIterator far = 0x7fffffff;
  size = buf.size();
  R(cuLogsDumpToMemory(&far, buf.data(), &size, 0));
  Say("size after a far iterator = %zu", size);
  // Dump to a file.
  const char* path = "/tmp/cuhal_devext_logs.txt";
  unlink(path);
  i0 = start;
  R(cuLogsDumpToFile(&i0, path, 0));
  struct stat sb;
  bool exists = stat(path, &sb) == 0;
  Say("file exists = %s, nonempty = %s", YesNo(exists), YesNo(exists && sb.st_size > 0));
  unlink(path);
  R(cuLogsDumpToFile(nullptr, path, 0));
  unlink(path);
  R(cuLogsDumpToFile(&i0, nullptr, 0));
  R(cuLogsDumpToFile(&i0, "/nonexistent/dir/file", 0));
  R(cuLogsDumpToFile(&i0, path, 1));
  unlink(path);
  if (rh == CUDA_SUCCESS) {
    R(cuLogsUnregisterCallback(h));
    R(cuLogsUnregisterCallback(h));
  }
  if (rh2 == CUDA_SUCCESS) R(cuLogsUnregisterCallback(h2));
  R(cuLogsUnregisterCallback(nullptr));
  R(cuLogsUnregisterCallback(Garbage<CUlogsCallbackHandle>()));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Multicast.

// multicast: a single GPU without NVSwitch.
int CaseMulticast() {
  CUmulticastObjectProp mp;
  memset(&mp, 0, sizeof mp);
  mp.numDevices = 1;
  mp.size = 2 << 20;
  mp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t g = 77;
  R(cuMulticastGetGranularity(&g, &mp, CU_MULTICAST_GRANULARITY_MINIMUM));
  Base b;
  if (!b.Init()) return 1;
  Say("attribute MULTICAST_SUPPORTED = %d", Attr(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED));
  g = 77;
  R(cuMulticastGetGranularity(&g, &mp, CU_MULTICAST_GRANULARITY_MINIMUM));
  Say("granularity = %zu", g);
  g = 77;
  R(cuMulticastGetGranularity(&g, &mp, CU_MULTICAST_GRANULARITY_RECOMMENDED));
  Say("granularity = %zu", g);
  R(cuMulticastGetGranularity(&g, &mp, static_cast<CUmulticastGranularity_flags>(2)));
  R(cuMulticastGetGranularity(nullptr, &mp, CU_MULTICAST_GRANULARITY_MINIMUM));
  R(cuMulticastGetGranularity(&g, nullptr, CU_MULTICAST_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle mc = 0x77;
  R(cuMulticastCreate(&mc, &mp));
  Say("handle = %s", mc == 0x77 ? "untouched" : mc == 0 ? "0" : "set");
  mp.numDevices = 0;
  R(cuMulticastCreate(&mc, &mp));
  mp.numDevices = 1;
  mp.size = 0;
  R(cuMulticastCreate(&mc, &mp));
  mp.size = 2 << 20;
  mp.handleTypes = 0;
  R(cuMulticastCreate(&mc, &mp));
  R(cuMulticastCreate(nullptr, &mp));
  R(cuMulticastCreate(&mc, nullptr));
  CUmemGenericAllocationHandle junk = 0x5a5a5a5a0000ull;
  R(cuMulticastAddDevice(junk, 0));
  R(cuMulticastAddDevice(0, 0));
  // A real VMM handle as the multicast object.
  CUmemAllocationProp ap;
  memset(&ap, 0, sizeof ap);
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  CUmemGenericAllocationHandle vh = 0;
  R(cuMemCreate(&vh, 2 << 20, &ap, 0));
  R(cuMulticastAddDevice(vh, 0));
  R(cuMulticastBindMem(junk, 0, vh, 0, 2 << 20, 0));
  R(cuMulticastBindMem(vh, 0, vh, 0, 2 << 20, 0));
  CUdeviceptr a = 0;
  R(cuMemAlloc(&a, 2 << 20));
  R(cuMulticastBindAddr(junk, 0, a, 2 << 20, 0));
  R(cuMulticastBindAddr(vh, 0, a, 2 << 20, 0));
  R(cuMulticastUnbind(junk, 0, 0, 2 << 20));
  R(cuMulticastUnbind(vh, 0, 0, 2 << 20));
  R(cuMemRelease(vh));
  R(cuMemFree(a));
  return 0;
}

// ------------------------------------------------------------------------------------------
// External memory and semaphores.

const char* ExtRel(void* h) {
  return h == Garbage<void*>() ? "untouched" : h == nullptr ? "null" : "set";
}

// extmem:<mode>: errors | vmm (an opaque fd from cuMemCreate/cuMemExportToShareableHandle).
int CaseExtMem(const std::string& mode) {
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
  memset(&d, 0, sizeof d);
  d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = -1;
  d.size = 2 << 20;
  CUexternalMemory em = Garbage<CUexternalMemory>();
  if (mode == "errors") R(cuImportExternalMemory(&em, &d));
  Base b;
  if (!b.Init()) return 1;
  if (mode == "errors") {
    R(cuImportExternalMemory(&em, &d));
    Say("handle = %s", ExtRel(em));
    R(cuImportExternalMemory(nullptr, &d));
    R(cuImportExternalMemory(&em, nullptr));
    int devnull = open("/dev/null", O_RDWR);
    d.handle.fd = devnull;
    R(cuImportExternalMemory(&em, &d));
    Say("handle after /dev/null = %s, fd still open = %s", ExtRel(em),
        YesNo(fcntl(devnull, F_GETFD) != -1));
    d.handle.fd = 1000;  // not open
    R(cuImportExternalMemory(&em, &d));
    d.handle.fd = devnull;
    d.size = 0;
    R(cuImportExternalMemory(&em, &d));
    d.size = 2 << 20;
    d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD;
    R(cuImportExternalMemory(&em, &d));
    for (int t : {0, 2, 3, 4, 5, 6, 7, 8, 10}) {
      d.type = static_cast<CUexternalMemoryHandleType>(t);
      d.handle.win32.handle = nullptr;
      d.handle.win32.name = nullptr;
      CUresult r = cuImportExternalMemory(&em, &d);
      Say("cuImportExternalMemory(type %d, null handle) = %s", t, Name(r));
    }
    d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    d.handle.fd = devnull;
    d.flags = 1;
    R(cuImportExternalMemory(&em, &d));
    d.flags = 0;
    d.reserved[0] = 1;
    R(cuImportExternalMemory(&em, &d));
    close(devnull);
    CUdeviceptr p = 77;
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd;
    memset(&bd, 0, sizeof bd);
    bd.size = 4096;
    R(cuExternalMemoryGetMappedBuffer(&p, nullptr, &bd));
    CRASHY("extmem:buffer-garbage", cuExternalMemoryGetMappedBuffer(&p, Garbage<CUexternalMemory>(), &bd));
    CRASHY("extmem:buffer-garbage-null-out",
           cuExternalMemoryGetMappedBuffer(nullptr, Garbage<CUexternalMemory>(), &bd));
    CRASHY("extmem:buffer-garbage-null-desc",
           cuExternalMemoryGetMappedBuffer(&p, Garbage<CUexternalMemory>(), nullptr));
    CUmipmappedArray mm = Garbage<CUmipmappedArray>();
    CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md;
    memset(&md, 0, sizeof md);
    md.arrayDesc.Width = 64;
    md.arrayDesc.Format = CU_AD_FORMAT_FLOAT;
    md.arrayDesc.NumChannels = 1;
    md.numLevels = 1;
    R(cuExternalMemoryGetMappedMipmappedArray(&mm, nullptr, &md));
    CRASHY("extmem:mipmap-garbage",
           cuExternalMemoryGetMappedMipmappedArray(&mm, Garbage<CUexternalMemory>(), &md));
    CRASHY("extmem:mipmap-garbage-null-out",
           cuExternalMemoryGetMappedMipmappedArray(nullptr, Garbage<CUexternalMemory>(), &md));
    R(cuDestroyExternalMemory(nullptr));
    CRASHY("extmem:destroy-garbage", cuDestroyExternalMemory(Garbage<CUexternalMemory>()));
    cuCtxSetCurrent(nullptr);
    R(cuImportExternalMemory(&em, &d));
    CRASHY("extmem:destroy-garbage-noctx", cuDestroyExternalMemory(Garbage<CUexternalMemory>()));
    return 0;
  }
  // vmm: an opaque fd of a cuMemCreate allocation, imported.
  CUmemAllocationProp ap;
  memset(&ap, 0, sizeof ap);
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  ap.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle vh = 0;
  const size_t kSize = 2 << 20;
  if (R(cuMemCreate(&vh, kSize, &ap, 0)) != CUDA_SUCCESS) return 1;
  CUdeviceptr va = 0;
  R(cuMemAddressReserve(&va, kSize, 0, 0, 0));
  R(cuMemMap(va, kSize, 0, vh, 0));
  CUmemAccessDesc acc;
  acc.location = ap.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  R(cuMemSetAccess(va, kSize, &acc, 1));
  R(WritePattern(va, 4096, 31));
  int fd = -1;
  R(cuMemExportToShareableHandle(&fd, vh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  d.handle.fd = fd;
  d.size = kSize;
  em = Garbage<CUexternalMemory>();
  CUresult ri = R(cuImportExternalMemory(&em, &d));
  Say("handle = %s, fd still open = %s", ExtRel(em), YesNo(fcntl(fd, F_GETFD) != -1));
  if (ri != CUDA_SUCCESS) return 0;
  CUexternalMemory em2 = Garbage<CUexternalMemory>();
  d.size = kSize / 2;
  CUresult ri2 = R(cuImportExternalMemory(&em2, &d));
  d.size = kSize * 2;
  CUexternalMemory em3 = Garbage<CUexternalMemory>();
  CUresult ri3 = R(cuImportExternalMemory(&em3, &d));
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd;
  memset(&bd, 0, sizeof bd);
  bd.size = kSize;
  CUdeviceptr p = 77;
  R(cuExternalMemoryGetMappedBuffer(&p, em, &bd));
  Say("mapped = %s, equals the VMM mapping = %s", p == 77 ? "untouched" : p == 0 ? "0" : "set",
      YesNo(p == va));
  if (p != 77 && p != 0) {
    CheckPattern("mapped buffer", p, 4096, 31);
    R(WritePattern(p, 4096, 32));
    CheckPattern("VMM mapping after a write through the buffer", va, 4096, 32);
    CUmemorytype mt = static_cast<CUmemorytype>(0);
    R(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
    Say("memory type = %d", static_cast<int>(mt));
    CUdeviceptr base = 0;
    size_t sz = 0;
    R(cuMemGetAddressRange(&base, &sz, p + 100));
    Say("range: base is the mapping = %s, size = %zu", YesNo(base == p), sz);
  }
  CUdeviceptr p2 = 77;
  bd.offset = 4096;
  bd.size = 4096;
  R(cuExternalMemoryGetMappedBuffer(&p2, em, &bd));
  Say("offset mapping = %s", p2 == 77 ? "untouched" : p2 == p + 4096 ? "the first + 4096" : "other");
  if (p2 != 77 && p2 != 0) {
    std::vector<unsigned char> x(4096, 1), y(4096, 2);
    CUresult r1 = cuMemcpyDtoH(x.data(), p2, 4096);
    CUresult r2 = cuMemcpyDtoH(y.data(), va + 4096, 4096);
    Say("offset mapping reads %s/%s, same bytes as the VMM mapping + 4096 = %s", Name(r1),
        Name(r2), YesNo(x == y));
  }
  bd.offset = 0;
  bd.size = kSize * 2;
  R(cuExternalMemoryGetMappedBuffer(&p2, em, &bd));
  bd.size = 0;
  R(cuExternalMemoryGetMappedBuffer(&p2, em, &bd));
  bd.size = 4096;
  bd.flags = 1;
  R(cuExternalMemoryGetMappedBuffer(&p2, em, &bd));
  bd.flags = 0;
  bd.offset = 100;
  R(cuExternalMemoryGetMappedBuffer(&p2, em, &bd));
  CUmipmappedArray mm = Garbage<CUmipmappedArray>();
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md;
  memset(&md, 0, sizeof md);
  md.arrayDesc.Width = 64;
  md.arrayDesc.Height = 64;
  md.arrayDesc.Format = CU_AD_FORMAT_FLOAT;
  md.arrayDesc.NumChannels = 1;
  md.numLevels = 1;
  CUresult rm = R(cuExternalMemoryGetMappedMipmappedArray(&mm, em, &md));
  Say("mipmap = %s", ExtRel(mm));
  if (rm == CUDA_SUCCESS) {
    CUarray lvl = nullptr;
    R(cuMipmappedArrayGetLevel(&lvl, mm, 0));
    R(cuMipmappedArrayDestroy(mm));
  }
  md.numLevels = 0;
  CRASHY("extmem:mipmap-0-levels", cuExternalMemoryGetMappedMipmappedArray(&mm, em, &md));
  // Destroying the external memory: the mapped buffer goes away?
  if (p != 77 && p != 0) R(cuMemFree(p));
  R(cuDestroyExternalMemory(em));
  R(cuDestroyExternalMemory(em));
  R(cuExternalMemoryGetMappedBuffer(&p2, em, &bd));
  if (ri2 == CUDA_SUCCESS) R(cuDestroyExternalMemory(em2));
  if (ri3 == CUDA_SUCCESS) R(cuDestroyExternalMemory(em3));
  CheckPattern("VMM mapping at the end", va, 4096, 32);
  R(cuMemUnmap(va, kSize));
  R(cuMemAddressFree(va, kSize));
  R(cuMemRelease(vh));
  close(fd);
  return 0;
}

// extsem: external semaphores with invalid arguments and bad fds.
int CaseExtSem() {
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d;
  memset(&d, 0, sizeof d);
  d.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = -1;
  CUexternalSemaphore es = Garbage<CUexternalSemaphore>();
  R(cuImportExternalSemaphore(&es, &d));
  Base b;
  if (!b.Init()) return 1;
  R(cuImportExternalSemaphore(&es, &d));
  Say("handle = %s", ExtRel(es));
  R(cuImportExternalSemaphore(nullptr, &d));
  R(cuImportExternalSemaphore(&es, nullptr));
  int devnull = open("/dev/null", O_RDWR);
  d.handle.fd = devnull;
  R(cuImportExternalSemaphore(&es, &d));
  Say("handle after /dev/null = %s, fd still open = %s", ExtRel(es),
      YesNo(fcntl(devnull, F_GETFD) != -1));
  d.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  R(cuImportExternalSemaphore(&es, &d));
  for (int t : {0, 2, 3, 4, 5, 6, 7, 8, 10, 11}) {
    d.type = static_cast<CUexternalSemaphoreHandleType>(t);
    d.handle.win32.handle = nullptr;
    d.handle.win32.name = nullptr;
    CUresult r = cuImportExternalSemaphore(&es, &d);
    Say("cuImportExternalSemaphore(type %d, null handle) = %s", t, Name(r));
  }
  d.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = devnull;
  d.flags = 1;
  R(cuImportExternalSemaphore(&es, &d));
  // A cuMemCreate fd as a semaphore.
  CUmemAllocationProp ap;
  memset(&ap, 0, sizeof ap);
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  ap.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle vh = 0;
  if (cuMemCreate(&vh, 2 << 20, &ap, 0) == CUDA_SUCCESS) {
    int vfd = -1;
    if (cuMemExportToShareableHandle(&vfd, vh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) ==
        CUDA_SUCCESS) {
      d.handle.fd = vfd;
      d.flags = 0;
      es = Garbage<CUexternalSemaphore>();
      CUresult r = R(cuImportExternalSemaphore(&es, &d));
      if (r == CUDA_SUCCESS) {
        CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp0;
        memset(&sp0, 0, sizeof sp0);
        CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp0;
        memset(&wp0, 0, sizeof wp0);
        CRASHY("extsem:signal-vmm", cuSignalExternalSemaphoresAsync(&es, &sp0, 1, b.s));
        CRASHY("extsem:wait-vmm", cuWaitExternalSemaphoresAsync(&es, &wp0, 1, b.s));
        R(cuDestroyExternalSemaphore(es));
        R(cuDestroyExternalSemaphore(es));
      }
      close(vfd);
    }
    cuMemRelease(vh);
  }
  close(devnull);
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp;
  memset(&sp, 0, sizeof sp);
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp;
  memset(&wp, 0, sizeof wp);
  CUexternalSemaphore g = Garbage<CUexternalSemaphore>();
  CUexternalSemaphore nul = nullptr;
  R(cuSignalExternalSemaphoresAsync(nullptr, &sp, 1, b.s));
  R(cuSignalExternalSemaphoresAsync(&g, &sp, 0, b.s));
  R(cuSignalExternalSemaphoresAsync(nullptr, nullptr, 0, b.s));
  R(cuSignalExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr));
  R(cuWaitExternalSemaphoresAsync(nullptr, &wp, 1, b.s));
  R(cuWaitExternalSemaphoresAsync(&g, &wp, 0, b.s));
  R(cuWaitExternalSemaphoresAsync(nullptr, nullptr, 0, b.s));
  R(cuWaitExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr));
  CRASHY("extsem:signal-garbage", cuSignalExternalSemaphoresAsync(&g, &sp, 1, b.s));
  CRASHY("extsem:signal-null-handle", cuSignalExternalSemaphoresAsync(&nul, &sp, 1, b.s));
  CRASHY("extsem:signal-null-params", cuSignalExternalSemaphoresAsync(&g, nullptr, 1, b.s));
  CRASHY("extsem:signal-garbage-stream",
         cuSignalExternalSemaphoresAsync(&g, &sp, 1, Garbage<CUstream>()));
  CRASHY("extsem:wait-garbage", cuWaitExternalSemaphoresAsync(&g, &wp, 1, b.s));
  CRASHY("extsem:wait-null-handle", cuWaitExternalSemaphoresAsync(&nul, &wp, 1, b.s));
  CRASHY("extsem:wait-null-params", cuWaitExternalSemaphoresAsync(&g, nullptr, 1, b.s));
  CRASHY("extsem:destroy-null", cuDestroyExternalSemaphore(nullptr));
  CRASHY("extsem:destroy-garbage", cuDestroyExternalSemaphore(Garbage<CUexternalSemaphore>()));
  R(cuStreamSynchronize(b.s));
  R(cuCtxSynchronize());
  cuCtxSetCurrent(nullptr);
  CRASHY("extsem:signal-garbage-noctx", cuSignalExternalSemaphoresAsync(&g, &sp, 1, nullptr));
  R(cuWaitExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr));
  R(cuImportExternalSemaphore(&es, &d));
  CRASHY("extsem:destroy-garbage-noctx",
         cuDestroyExternalSemaphore(Garbage<CUexternalSemaphore>()));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Graphics interop with no graphics API.

int CaseGraphics(const std::string& mode) {
  if (mode != "noinit") {
    if (mode == "noctx") {
      if (cuInit(0) != CUDA_SUCCESS) return 1;
    } else {
      Base b;
      if (!b.Init()) return 1;
    }
  }
  CUgraphicsResource g = Garbage<CUgraphicsResource>();
  CUgraphicsResource nul = nullptr;
  CUgraphicsResource two[2] = {g, g};
  // Every call with a garbage resource crashed the real driver after cuInit (none before).
  g_crashy_off = mode == "noinit";
  const bool ctx = mode == "ctx";
  auto crash = [&](const char* what) { return ctx ? what : "graphics:noctx"; };
  R(cuGraphicsMapResources(0, nullptr, nullptr));
  R(cuGraphicsMapResources(1, nullptr, nullptr));
  R(cuGraphicsUnmapResources(0, nullptr, nullptr));
  R(cuGraphicsUnmapResources(1, nullptr, nullptr));
  R(cuGraphicsUnregisterResource(nullptr));
  CUdeviceptr p = 77;
  size_t sz = 77;
  R(cuGraphicsResourceGetMappedPointer(&p, &sz, nullptr));
  Say("pointer untouched = %s, size untouched = %s", YesNo(p == 77), YesNo(sz == 77));
  R(cuGraphicsResourceGetMappedPointer(nullptr, nullptr, nullptr));
  CUmipmappedArray mm = nullptr;
  R(cuGraphicsResourceGetMappedMipmappedArray(&mm, nullptr));
  R(cuGraphicsResourceSetMapFlags(nullptr, CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE));
  R(cuGraphicsResourceSetMapFlags(nullptr, 77));
  CUarray arr = nullptr;
  R(cuGraphicsSubResourceGetMappedArray(&arr, nullptr, 0, 0));
  CRASHY(crash("graphics:map-garbage"), cuGraphicsMapResources(1, &g, nullptr));
  CRASHY(crash("graphics:map-null-element"), cuGraphicsMapResources(1, &nul, nullptr));
  CRASHY(crash("graphics:map-0-garbage"), cuGraphicsMapResources(0, &g, nullptr));
  CRASHY(crash("graphics:map-two-garbage"), cuGraphicsMapResources(2, two, nullptr));
  CRASHY(crash("graphics:map-garbage-stream"),
         cuGraphicsMapResources(1, &g, Garbage<CUstream>()));
  CRASHY(crash("graphics:unmap-garbage"), cuGraphicsUnmapResources(1, &g, nullptr));
  CRASHY(crash("graphics:unmap-null-element"), cuGraphicsUnmapResources(1, &nul, nullptr));
  CRASHY(crash("graphics:unmap-0-garbage"), cuGraphicsUnmapResources(0, &g, nullptr));
  CRASHY(crash("graphics:unregister-garbage"), cuGraphicsUnregisterResource(g));
  p = 77;
  sz = 77;
  CRASHY(crash("graphics:pointer-garbage"), cuGraphicsResourceGetMappedPointer(&p, &sz, g));
  CRASHY(crash("graphics:pointer-garbage-null-out"),
         cuGraphicsResourceGetMappedPointer(nullptr, nullptr, g));
  CRASHY(crash("graphics:mipmap-garbage"), cuGraphicsResourceGetMappedMipmappedArray(&mm, g));
  CRASHY(crash("graphics:mipmap-garbage-null-out"),
         cuGraphicsResourceGetMappedMipmappedArray(nullptr, g));
  CRASHY(crash("graphics:flags-garbage"),
         cuGraphicsResourceSetMapFlags(g, CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE));
  CRASHY(crash("graphics:flags-garbage-77"), cuGraphicsResourceSetMapFlags(g, 77));
  CRASHY(crash("graphics:array-garbage"), cuGraphicsSubResourceGetMappedArray(&arr, g, 0, 0));
  CRASHY(crash("graphics:array-garbage-null-out"),
         cuGraphicsSubResourceGetMappedArray(nullptr, g, 0, 0));
  CRASHY(crash("graphics:array-garbage-5-5"), cuGraphicsSubResourceGetMappedArray(&arr, g, 5, 5));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Batched copies.

// batch:copy: cuMemcpyBatchAsync_v2 with real copies, then its argument checks.
int CaseBatchCopy() {
  LOAD(cuMemcpyBatchAsync_v2);
  Base b;
  if (!b.Init()) return 1;
  const size_t n = 64 << 10;
  CUdeviceptr d1 = 0, d2 = 0, d3 = 0;
  R(cuMemAlloc(&d1, n));
  R(cuMemAlloc(&d2, n));
  R(cuMemAlloc(&d3, n));
  void* pinned = nullptr;
  R(cuMemAllocHost(&pinned, n));
  std::vector<unsigned char> pageable = Pattern(n, 41);
  memcpy(pinned, Pattern(n, 42).data(), n);
  std::vector<unsigned char> out(n, 0);
  CUmemcpyAttributes at;
  memset(&at, 0, sizeof at);
  at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t idx0 = 0;
  // Three copies: pageable -> d1, d1 -> d2, pinned -> d3 (one attribute for all).
  CUdeviceptr dsts[3] = {d1, d2, d3};
  CUdeviceptr srcs[3] = {reinterpret_cast<CUdeviceptr>(pageable.data()), d1,
                         reinterpret_cast<CUdeviceptr>(pinned)};
  size_t sizes[3] = {n, n, n};
  R(cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 3, &at, &idx0, 1, b.s));
  R(cuStreamSynchronize(b.s));
  CheckPattern("d1 (pageable source)", d1, n, 41);
  CheckPattern("d2 (device source, same batch)", d2, n, 41);
  CheckPattern("d3 (pinned source)", d3, n, 42);
  // D2H into pageable and pinned memory, two attributes.
  CUmemcpyAttributes ats[2];
  memset(ats, 0, sizeof ats);
  ats[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  ats[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
  size_t idxs[2] = {0, 1};
  memset(pinned, 0, n);
  CUdeviceptr dsts2[2] = {reinterpret_cast<CUdeviceptr>(out.data()),
                          reinterpret_cast<CUdeviceptr>(pinned)};
  CUdeviceptr srcs2[2] = {d2, d3};
  size_t sizes2[2] = {n, 1000};
  R(cuMemcpyBatchAsync_v2(dsts2, srcs2, sizes2, 2, ats, idxs, 2, b.s));
  R(cuStreamSynchronize(b.s));
  Say("pageable destination matches = %s", YesNo(out == Pattern(n, 41)));
  std::vector<unsigned char> pin(static_cast<unsigned char*>(pinned),
                                 static_cast<unsigned char*>(pinned) + n);
  auto p42 = Pattern(n, 42);
  Say("pinned destination: first 1000 match = %s, rest zero = %s",
      YesNo(std::equal(pin.begin(), pin.begin() + 1000, p42.begin())),
      YesNo(AllBytes(pin.data() + 1000, n - 1000, 0)));
  // DURING_API_CALL from a stack buffer, then the buffer is overwritten before the sync.
  {
    std::vector<unsigned char> eph = Pattern(4096, 43);
    CUmemcpyAttributes ae;
    memset(&ae, 0, sizeof ae);
    ae.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    CUdeviceptr dd = d1;
    CUdeviceptr ss = reinterpret_cast<CUdeviceptr>(eph.data());
    size_t sz = 4096;
    R(cuMemcpyBatchAsync_v2(&dd, &ss, &sz, 1, &ae, &idx0, 1, b.s));
    memset(eph.data(), 0, eph.size());
    R(cuStreamSynchronize(b.s));
    CheckPattern("DURING_API_CALL copy, source overwritten after the call", d1, 4096, 43);
  }
  // Attribute ranges: idxs {0, 2} over 3 copies.
  {
    R(WritePattern(d1, n, 44));
    R(cuMemsetD8(d2, 0, n));
    R(cuMemsetD8(d3, 0, n));
    CUdeviceptr dd[3] = {d2, d3, d2 + 4096};
    CUdeviceptr ss[3] = {d1, d1, d1 + 4096};
    size_t sz[3] = {4096, 4096, 4096};
    size_t ix[2] = {0, 2};
    CUmemcpyAttributes aa[2];
    memset(aa, 0, sizeof aa);
    aa[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    aa[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    R(cuMemcpyBatchAsync_v2(dd, ss, sz, 3, aa, ix, 2, b.s));
    R(cuStreamSynchronize(b.s));
    CheckPattern("ranged attributes: d2", d2, 8192, 44);
    CheckPattern("ranged attributes: d3", d3, 4096, 44);
  }
  // Argument checks.
  size_t one = 4096;
  CUdeviceptr dd = d2, ss = d1;
  auto call = [&](const char* what, CUdeviceptr* dp, CUdeviceptr* sp, size_t* szp, size_t count,
                  CUmemcpyAttributes* ap, size_t* ip, size_t na, CUstream st) {
    CUresult r = cuMemcpyBatchAsync_v2(dp, sp, szp, count, ap, ip, na, st);
    Say("cuMemcpyBatchAsync(%s) = %s", what, Name(r));
    return r;
  };
  call("count 0", &dd, &ss, &one, 0, &at, &idx0, 1, b.s);
  call("count 0, all null", nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, b.s);
  call("null dsts", nullptr, &ss, &one, 1, &at, &idx0, 1, b.s);
  call("null srcs", &dd, nullptr, &one, 1, &at, &idx0, 1, b.s);
  call("null sizes", &dd, &ss, nullptr, 1, &at, &idx0, 1, b.s);
  call("null attrs", &dd, &ss, &one, 1, nullptr, &idx0, 1, b.s);
  call("null attrsIdxs", &dd, &ss, &one, 1, &at, nullptr, 1, b.s);
  call("numAttrs 0", &dd, &ss, &one, 1, &at, &idx0, 0, b.s);
  call("numAttrs 0, null attrs", &dd, &ss, &one, 1, nullptr, nullptr, 0, b.s);
  call("numAttrs 2 > count 1", &dd, &ss, &one, 1, ats, idxs, 2, b.s);
  size_t idx1 = 1;
  call("attrsIdxs[0] = 1", &dd, &ss, &one, 1, &at, &idx1, 1, b.s);
  {
    CUdeviceptr d2s[2] = {d2, d3};
    CUdeviceptr s2s[2] = {d1, d1};
    size_t z2[2] = {64, 64};
    size_t rev[2] = {1, 0};
    size_t same[2] = {0, 0};
    call("attrsIdxs not increasing", d2s, s2s, z2, 2, ats, rev, 2, b.s);
    call("attrsIdxs repeated", d2s, s2s, z2, 2, ats, same, 2, b.s);
  }
  CUmemcpyAttributes bad = at;
  bad.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  call("srcAccessOrder INVALID", &dd, &ss, &one, 1, &bad, &idx0, 1, b.s);
  bad.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(9);
  call("srcAccessOrder 9", &dd, &ss, &one, 1, &bad, &idx0, 1, b.s);
  bad = at;
  bad.flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
  call("flag PREFER_OVERLAP", &dd, &ss, &one, 1, &bad, &idx0, 1, b.s);
  bad.flags = 2;
  call("flags 2", &dd, &ss, &one, 1, &bad, &idx0, 1, b.s);
  bad = at;
  bad.srcLocHint = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  bad.dstLocHint = Loc(CU_MEM_LOCATION_TYPE_HOST, 0);
  call("location hints", &dd, &ss, &one, 1, &bad, &idx0, 1, b.s);
  bad.srcLocHint = Loc(static_cast<CUmemLocationType>(9), 0);
  call("bad location hint", &dd, &ss, &one, 1, &bad, &idx0, 1, b.s);
  size_t zero = 0;
  call("size 0", &dd, &ss, &zero, 1, &at, &idx0, 1, b.s);
  CUdeviceptr nulp = 0;
  call("null destination pointer", &nulp, &ss, &one, 1, &at, &idx0, 1, b.s);
  call("null source pointer", &dd, &nulp, &one, 1, &at, &idx0, 1, b.s);
  CUdeviceptr gp = Garbage<CUdeviceptr>();
  call("garbage destination", &gp, &ss, &one, 1, &at, &idx0, 1, b.s);
  size_t big = n + 1;
  CUdeviceptr d3e = d3;
  call("past the end", &d3e, &ss, &big, 1, &at, &idx0, 1, b.s);
  call("legacy stream", &dd, &ss, &one, 1, &at, &idx0, 1, nullptr);
  CRASHY("batch:copy-per-thread-stream",
         cuMemcpyBatchAsync_v2(&dd, &ss, &one, 1, &at, &idx0, 1, CU_STREAM_PER_THREAD));
  CRASHY("batch:copy-garbage-stream",
         cuMemcpyBatchAsync_v2(&dd, &ss, &one, 1, &at, &idx0, 1, Garbage<CUstream>()));
  R(cuStreamSynchronize(b.s));
  R(cuCtxSynchronize());
  // Inside stream capture.
  CUgraph graph = nullptr;
  if (R(cuStreamBeginCapture(b.s, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
    call("capturing", &dd, &ss, &one, 1, &at, &idx0, 1, b.s);
    R(cuStreamEndCapture(b.s, &graph));
    if (graph) {
      size_t nodes = 0;
      R(cuGraphGetNodes(graph, nullptr, &nodes));
      Say("captured nodes = %zu", nodes);
      cuGraphDestroy(graph);
    }
  }
  cuCtxSetCurrent(nullptr);
  call("no context, explicit stream", &dd, &ss, &one, 1, &at, &idx0, 1, b.s);
  call("no context, legacy stream", &dd, &ss, &one, 1, &at, &idx0, 1, nullptr);
  cuCtxSetCurrent(b.ctx);
  R(cuStreamSynchronize(b.s));
  R(cuMemFree(d1));
  R(cuMemFree(d2));
  R(cuMemFree(d3));
  R(cuMemFreeHost(pinned));
  return 0;
}

// batch:copy3d: cuMemcpy3DBatchAsync_v2 between pointers and an array.
int CaseBatchCopy3D() {
  LOAD(cuMemcpy3DBatchAsync_v2);
  Base b;
  if (!b.Init()) return 1;
  const size_t w = 256, h = 16;
  CUdeviceptr src = 0, dst = 0;
  R(cuMemAlloc(&src, w * h));
  R(cuMemAlloc(&dst, w * h));
  R(WritePattern(src, w * h, 51));
  R(cuMemsetD8(dst, 0, w * h));
  CUDA_MEMCPY3D_BATCH_OP op;
  memset(&op, 0, sizeof op);
  op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.src.op.ptr.ptr = src;
  op.src.op.ptr.rowLength = w;
  op.src.op.ptr.layerHeight = h;
  op.dst = op.src;
  op.dst.op.ptr.ptr = dst;
  op.extent.width = w;
  op.extent.height = h;
  op.extent.depth = 1;
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  R(cuMemcpy3DBatchAsync_v2(1, &op, 0, b.s));
  R(cuStreamSynchronize(b.s));
  CheckPattern("pointer to pointer", dst, w * h, 51);
  // Through an array and back.
  CUDA_ARRAY3D_DESCRIPTOR ad;
  memset(&ad, 0, sizeof ad);
  ad.Width = w;
  ad.Height = h;
  ad.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  ad.NumChannels = 1;
  CUarray arr = nullptr;
  if (R(cuArray3DCreate(&arr, &ad)) == CUDA_SUCCESS) {
    CUDA_MEMCPY3D_BATCH_OP ops[2];
    memset(ops, 0, sizeof ops);
    ops[0] = op;
    memset(&ops[0].dst, 0, sizeof ops[0].dst);  // the operand is a union: no stale offsets
    ops[0].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    ops[0].dst.op.array.array = arr;
    ops[1] = op;
    memset(&ops[1].src, 0, sizeof ops[1].src);
    ops[1].src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    ops[1].src.op.array.array = arr;
    R(cuMemsetD8(dst, 0, w * h));
    R(cuMemcpy3DBatchAsync_v2(2, ops, 0, b.s));
    R(cuStreamSynchronize(b.s));
    CheckPattern("pointer to array to pointer", dst, w * h, 51);
    CUDA_MEMCPY3D_BATCH_OP bad = ops[0];
    bad.dst.op.array.array = Garbage<CUarray>();
    CRASHY("batch:copy3d-garbage-array", cuMemcpy3DBatchAsync_v2(1, &bad, 0, b.s));
    bad = ops[0];
    bad.dst.op.array.offset.x = w;
    R(cuMemcpy3DBatchAsync_v2(1, &bad, 0, b.s));
    R(cuArrayDestroy(arr));
  }
  auto with = [&](const char* what, CUDA_MEMCPY3D_BATCH_OP o, unsigned long long flags) {
    CUresult r = cuMemcpy3DBatchAsync_v2(1, &o, flags, b.s);
    Say("cuMemcpy3DBatchAsync(%s) = %s", what, Name(r));
  };
  CUDA_MEMCPY3D_BATCH_OP o = op;
  with("flags 1", o, 1);
  o.extent.depth = 0;
  with("depth 0", o, 0);
  o = op;
  o.extent.width = 0;
  with("width 0", o, 0);
  o = op;
  o.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  with("srcAccessOrder INVALID", o, 0);
  o = op;
  o.flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
  with("op flag PREFER_OVERLAP", o, 0);
  o = op;
  o.src.type = static_cast<CUmemcpy3DOperandType>(0);
  with("operand type 0", o, 0);
  o = op;
  o.src.op.ptr.rowLength = 0;
  o.src.op.ptr.layerHeight = 0;
  with("rowLength 0", o, 0);
  o = op;
  o.src.op.ptr.rowLength = w / 2;
  with("rowLength < width", o, 0);
  o = op;
  o.extent.depth = 2;
  with("depth 2 past the allocation", o, 0);
  o = op;
  o.src.op.ptr.ptr = 0;
  with("null source", o, 0);
  R(cuMemcpy3DBatchAsync_v2(0, &op, 0, b.s));
  R(cuMemcpy3DBatchAsync_v2(0, nullptr, 0, b.s));
  R(cuMemcpy3DBatchAsync_v2(1, nullptr, 0, b.s));
  R(cuMemcpy3DBatchAsync_v2(1, &op, 0, nullptr));
  CRASHY("batch:copy3d-garbage-stream", cuMemcpy3DBatchAsync_v2(1, &op, 0, Garbage<CUstream>()));
  R(cuStreamSynchronize(b.s));
  R(cuCtxSynchronize());
  R(cuMemFree(src));
  R(cuMemFree(dst));
  return 0;
}

// batch:prefetch: prefetch / discard / discard-and-prefetch batches, batch decompression.
int CaseBatchPrefetch() {
  LOAD(cuMemPrefetchBatchAsync);
  LOAD(cuMemDiscardBatchAsync);
  LOAD(cuMemDiscardAndPrefetchBatchAsync);
  Base b;
  if (!b.Init()) return 1;
  const size_t n = 2 << 20;
  CUdeviceptr m1 = 0, m2 = 0, d = 0;
  R(cuMemAllocManaged(&m1, n, CU_MEM_ATTACH_GLOBAL));
  R(cuMemAllocManaged(&m2, n, CU_MEM_ATTACH_GLOBAL));
  R(cuMemAlloc(&d, n));
  memset(reinterpret_cast<void*>(m1), 0x61, n);
  memset(reinterpret_cast<void*>(m2), 0x62, n);
  CUdeviceptr ptrs[2] = {m1, m2};
  size_t sizes[2] = {n, n};
  CUmemLocation dev0 = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  CUmemLocation host = Loc(CU_MEM_LOCATION_TYPE_HOST, 0);
  size_t idx0 = 0;
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, &dev0, &idx0, 1, 0, b.s));
  R(cuStreamSynchronize(b.s));
  int loc = -7;
  R(cuMemRangeGetAttribute(&loc, sizeof loc, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m1, n));
  Say("m1 last prefetch location = %d", loc);
  CUmemLocation locs[2] = {dev0, host};
  size_t idxs[2] = {0, 1};
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, b.s));
  R(cuStreamSynchronize(b.s));
  loc = -7;
  R(cuMemRangeGetAttribute(&loc, sizeof loc, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m2, n));
  Say("m2 last prefetch location = %d", loc);
  Say("contents kept = %s",
      YesNo(AllBytes(reinterpret_cast<void*>(m1), n, 0x61) &&
            AllBytes(reinterpret_cast<void*>(m2), n, 0x62)));
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 0, &dev0, &idx0, 1, 0, b.s));
  R(cuMemPrefetchBatchAsync(nullptr, sizes, 2, &dev0, &idx0, 1, 0, b.s));
  R(cuMemPrefetchBatchAsync(ptrs, nullptr, 2, &dev0, &idx0, 1, 0, b.s));
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, nullptr, &idx0, 1, 0, b.s));
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, &dev0, nullptr, 1, 0, b.s));
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, &dev0, &idx0, 0, 0, b.s));
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, &dev0, &idx0, 1, 1, b.s));
  size_t idx1 = 1;
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, &dev0, &idx1, 1, 0, b.s));
  CUmemLocation bad = Loc(CU_MEM_LOCATION_TYPE_DEVICE, 5);
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, &bad, &idx0, 1, 0, b.s));
  CUdeviceptr dp[1] = {d};
  R(cuMemPrefetchBatchAsync(dp, sizes, 1, &dev0, &idx0, 1, 0, b.s));
  size_t zero = 0;
  R(cuMemPrefetchBatchAsync(ptrs, &zero, 1, &dev0, &idx0, 1, 0, b.s));
  R(cuMemPrefetchBatchAsync(ptrs, sizes, 2, &dev0, &idx0, 1, 0, nullptr));
  CRASHY("batch:prefetch-garbage-stream",
         cuMemPrefetchBatchAsync(ptrs, sizes, 2, &dev0, &idx0, 1, 0, Garbage<CUstream>()));
  R(cuStreamSynchronize(b.s));
  // Discards.
  R(cuMemDiscardBatchAsync(ptrs, sizes, 2, 0, b.s));
  R(cuStreamSynchronize(b.s));
  R(cuMemDiscardBatchAsync(ptrs, sizes, 0, 0, b.s));
  R(cuMemDiscardBatchAsync(nullptr, sizes, 2, 0, b.s));
  R(cuMemDiscardBatchAsync(ptrs, nullptr, 2, 0, b.s));
  R(cuMemDiscardBatchAsync(ptrs, sizes, 2, 1, b.s));
  R(cuMemDiscardBatchAsync(dp, sizes, 1, 0, b.s));
  size_t half = n / 2 + 1;
  R(cuMemDiscardBatchAsync(ptrs, &half, 1, 0, b.s));
  R(cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 2, &dev0, &idx0, 1, 0, b.s));
  R(cuStreamSynchronize(b.s));
  R(cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, b.s));
  R(cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 0, &dev0, &idx0, 1, 0, b.s));
  R(cuMemDiscardAndPrefetchBatchAsync(nullptr, sizes, 2, &dev0, &idx0, 1, 0, b.s));
  R(cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 2, nullptr, &idx0, 1, 0, b.s));
  R(cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 2, &dev0, &idx0, 1, 1, b.s));
  R(cuMemDiscardAndPrefetchBatchAsync(dp, sizes, 1, &dev0, &idx0, 1, 0, b.s));
  R(cuStreamSynchronize(b.s));
  R(cuCtxSynchronize());
  R(cuMemFree(m1));
  R(cuMemFree(m2));
  R(cuMemFree(d));
  return 0;
}

// batch:decompress: cuMemBatchDecompressAsync on a GPU without a decompression engine?
int CaseBatchDecompress() {
  LOAD(cuMemBatchDecompressAsync);
  Base b;
  if (!b.Init()) return 1;
  Say("attribute MEM_DECOMPRESS_ALGORITHM_MASK = %d",
      Attr(CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK));
  Say("attribute MEM_DECOMPRESS_MAXIMUM_LENGTH = %d",
      Attr(CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH));
  CUdeviceptr src = 0, dst = 0, act = 0;
  R(cuMemAlloc(&src, 4096));
  R(cuMemAlloc(&dst, 4096));
  R(cuMemAlloc(&act, 4096));
  CUmemDecompressParams p;
  memset(&p, 0, sizeof p);
  p.srcNumBytes = 16;
  p.dstNumBytes = 4096;
  p.dstActBytes = reinterpret_cast<cuuint32_t*>(act);
  p.src = reinterpret_cast<const void*>(src);
  p.dst = reinterpret_cast<void*>(dst);
  p.algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
  size_t err = 77;
  R(cuMemBatchDecompressAsync(&p, 1, 0, &err, b.s));
  Say("errorIndex = %zu", err);
  p.algo = CU_MEM_DECOMPRESS_ALGORITHM_SNAPPY;
  err = 77;
  R(cuMemBatchDecompressAsync(&p, 1, 0, &err, b.s));
  Say("errorIndex = %zu", err);
  p.algo = static_cast<CUmemDecompressAlgorithm>(0);
  R(cuMemBatchDecompressAsync(&p, 1, 0, &err, b.s));
  err = 77;
  R(cuMemBatchDecompressAsync(&p, 0, 0, &err, b.s));
  Say("errorIndex = %zu", err);
  R(cuMemBatchDecompressAsync(nullptr, 1, 0, &err, b.s));
  R(cuMemBatchDecompressAsync(nullptr, 0, 0, nullptr, b.s));
  p.algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
  R(cuMemBatchDecompressAsync(&p, 1, 1, &err, b.s));
  R(cuMemBatchDecompressAsync(&p, 1, 0, nullptr, b.s));
  CRASHY("batch:decompress-garbage-stream",
         cuMemBatchDecompressAsync(&p, 1, 0, &err, Garbage<CUstream>()));
  R(cuStreamSynchronize(b.s));
  R(cuMemFree(src));
  R(cuMemFree(dst));
  R(cuMemFree(act));
  return 0;
}

// noinit: the simple entry points before cuInit.
int CaseNoInit() {
  int i = 0;
  size_t z = 0;
  R(cuDeviceGetTexture1DLinearMaxWidth(&z, CU_AD_FORMAT_FLOAT, 1, 0));
  R(cuDeviceGetLuid(nullptr, nullptr, 0));
  R(cuDeviceGetExecAffinitySupport(&i, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
  R(cuDeviceUnregisterAsyncNotification(0, nullptr));
  CUmemoryPool p = nullptr;
  R(cuMemPoolExportToShareableHandle(&i, p, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  R(cuMemPoolImportFromShareableHandle(&p, nullptr, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemPoolPtrExportData d;
  memset(&d, 0, sizeof d);
  R(cuMemPoolExportPointer(&d, 0));
  CUdeviceptr dp = 0;
  R(cuMemPoolImportPointer(&dp, nullptr, &d));
  CUexternalMemory em = nullptr;
  R(cuImportExternalMemory(&em, nullptr));
  R(cuDestroyExternalMemory(nullptr));
  R(cuDestroyExternalSemaphore(nullptr));
  R(cuSignalExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr));
  R(cuGraphicsUnregisterResource(nullptr));
  R(cuMulticastAddDevice(0, 0));
  R(cuMemGetHandleForAddressRange(nullptr, 0, 0, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  {
    LOAD(cuMemcpyBatchAsync_v2);
    R(cuMemcpyBatchAsync_v2(nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr));
  }
  {
    LOAD(cuMemcpy3DBatchAsync_v2);
    R(cuMemcpy3DBatchAsync_v2(0, nullptr, 0, nullptr));
  }
  {
    LOAD(cuMemPrefetchBatchAsync);
    R(cuMemPrefetchBatchAsync(nullptr, nullptr, 0, nullptr, nullptr, 0, 0, nullptr));
  }
  {
    LOAD(cuMemBatchDecompressAsync);
    R(cuMemBatchDecompressAsync(nullptr, 0, 0, nullptr, nullptr));
  }
  {
    LOAD(cuMemSetMemPool);
    R(cuMemSetMemPool(nullptr, CU_MEM_ALLOCATION_TYPE_PINNED, nullptr));
  }
  return 0;
}

// ------------------------------------------------------------------------------------------

// The crashy calls (see Crashy) and their parent cases.
const std::vector<std::pair<std::string, std::string>>& CrashyCalls() {
  static const std::vector<std::pair<std::string, std::string>> calls = {
    {"notify:null-handle", "dev:notify"},
    {"pool:set-garbage", "pool:set"},
    {"pool:export-garbage", "pool:ipc"},
    {"logs:sync-garbage", "logs"},
    {"extmem:buffer-garbage", "extmem:errors"},
    {"extmem:buffer-garbage-null-out", "extmem:errors"},
    {"extmem:buffer-garbage-null-desc", "extmem:errors"},
    {"extmem:mipmap-garbage", "extmem:errors"},
    {"extmem:mipmap-garbage-null-out", "extmem:errors"},
    {"extmem:destroy-garbage", "extmem:errors"},
    {"extmem:destroy-garbage-noctx", "extmem:errors"},
    {"extmem:mipmap-0-levels", "extmem:vmm"},
    {"extsem:signal-vmm", "extsem"},
    {"extsem:wait-vmm", "extsem"},
    {"extsem:signal-garbage", "extsem"},
    {"extsem:signal-null-handle", "extsem"},
    {"extsem:signal-null-params", "extsem"},
    {"extsem:signal-garbage-stream", "extsem"},
    {"extsem:wait-garbage", "extsem"},
    {"extsem:wait-null-handle", "extsem"},
    {"extsem:wait-null-params", "extsem"},
    {"extsem:destroy-null", "extsem"},
    {"extsem:destroy-garbage", "extsem"},
    {"extsem:signal-garbage-noctx", "extsem"},
    {"extsem:destroy-garbage-noctx", "extsem"},
    {"graphics:map-garbage", "graphics:ctx"},
    {"graphics:map-null-element", "graphics:ctx"},
    {"graphics:map-0-garbage", "graphics:ctx"},
    {"graphics:map-two-garbage", "graphics:ctx"},
    {"graphics:map-garbage-stream", "graphics:ctx"},
    {"graphics:unmap-garbage", "graphics:ctx"},
    {"graphics:unmap-null-element", "graphics:ctx"},
    {"graphics:unmap-0-garbage", "graphics:ctx"},
    {"graphics:unregister-garbage", "graphics:ctx"},
    {"graphics:pointer-garbage", "graphics:ctx"},
    {"graphics:pointer-garbage-null-out", "graphics:ctx"},
    {"graphics:mipmap-garbage", "graphics:ctx"},
    {"graphics:mipmap-garbage-null-out", "graphics:ctx"},
    {"graphics:flags-garbage", "graphics:ctx"},
    {"graphics:flags-garbage-77", "graphics:ctx"},
    {"graphics:array-garbage", "graphics:ctx"},
    {"graphics:array-garbage-null-out", "graphics:ctx"},
    {"graphics:array-garbage-5-5", "graphics:ctx"},
    {"batch:copy-per-thread-stream", "batch:copy"},
    {"batch:copy-garbage-stream", "batch:copy"},
    {"batch:copy3d-garbage-array", "batch:copy3d"},
    {"batch:copy3d-garbage-stream", "batch:copy3d"},
    {"batch:prefetch-garbage-stream", "batch:prefetch"},
    {"batch:decompress-garbage-stream", "batch:decompress"},
  };
  return calls;
}

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {"dev:cc",          "dev:props",        "dev:misc",       "dev:atomics",
          "dev:notify",      "pool:get",         "pool:set",       "pool:ipc",
          "pool:child",      "dmabuf",           "profiler:init",  "checkpoint:noinit",
          "checkpoint:init", "checkpoint:ctx",   "logs",           "multicast",
          "extmem:errors",   "extmem:vmm",       "extsem",         "graphics:noinit",
          "graphics:noctx",  "graphics:ctx",     "batch:copy",     "batch:copy3d",
          "batch:prefetch",  "batch:decompress", "noinit"};
  for (const auto& [name, parent] : CrashyCalls()) cases.push_back("crash:" + name);
  return cases;
}

int RunOne(const std::string& arg, const char* self, int argc, char** argv) {
  g_case = arg.c_str();
  std::string c = arg;
  if (arg.rfind("crash:", 0) == 0) {
    for (const auto& [name, parent] : CrashyCalls()) {
      if (arg == "crash:" + name) {
        g_crash_at = name;
        g_quiet = true;
        c = parent;
      }
    }
  }
  auto rest = [&](const char* prefix) { return c.substr(strlen(prefix)); };
  if (c == "poolchild") {
    if (argc < 4) return 2;
    g_case = argv[2];
    return PoolChildSide(atoi(argv[3]));
  }
  if (c == "dev:cc") return CaseComputeCapability();
  if (c == "dev:props") return CaseDeviceProperties();
  if (c == "dev:misc") return CaseDeviceMisc();
  if (c == "dev:atomics") return CaseAtomics();
  if (c == "dev:notify") return CaseDeviceNotify();
  if (c == "pool:get") return CasePoolGet();
  if (c == "pool:set") return CasePoolSet();
  if (c == "pool:ipc") return CasePoolIpc();
  if (c == "pool:child") return CasePoolChild(self);
  if (c == "dmabuf") return CaseDmaBuf();
  if (c == "profiler:init") return CaseProfilerInit();
  if (c.rfind("checkpoint:", 0) == 0) return CaseCheckpoint(rest("checkpoint:"));
  if (c == "logs") return CaseLogs();
  if (c == "multicast") return CaseMulticast();
  if (c.rfind("extmem:", 0) == 0) return CaseExtMem(rest("extmem:"));
  if (c == "extsem") return CaseExtSem();
  if (c.rfind("graphics:", 0) == 0) return CaseGraphics(rest("graphics:"));
  if (c == "batch:copy") return CaseBatchCopy();
  if (c == "batch:copy3d") return CaseBatchCopy3D();
  if (c == "batch:prefetch") return CaseBatchPrefetch();
  if (c == "batch:decompress") return CaseBatchDecompress();
  if (c == "noinit") return CaseNoInit();
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
  std::string dir = "/tmp/devext_probe_" + std::to_string(getpid());
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
    fprintf(stderr, "usage: devext_probe all [jobs] | devext_probe list | devext_probe <case>\n");
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
  return RunOne(a, argv[0], argc, argv);
}
