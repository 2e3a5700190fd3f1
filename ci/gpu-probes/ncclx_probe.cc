// NCCL-area probe for cuhal (issue 14, area ncclx): how the real libnccl.so.2 answers the nccl.h
// 2.28 entry points the drop-in still answers with fallbacks (ncclMemAlloc, ncclMemFree,
// ncclCommInitRankScalable, ncclCommShrink, ncclCommRevoke, ncclCommWindowRegister,
// ncclCommWindowDeregister, ncclGroupSimulateEnd, ncclResetDebugInit), ncclBcast,
// ncclCommRegister/Deregister, and single-rank collectives (in place, out of place, on valid and
// bogus pointers) with what the communicator answers afterwards (ncclCommGetAsyncError,
// ncclGetLastError). A plain program: cuda.h with -lcuda, and libnccl.so.2 opened with dlopen
// (every nccl function through dlsym, so that the probe builds without -lnccl and loads on a
// library that lacks some of them: those print "not exported").
//
//   ncclx_probe all [jobs]   every case in its own process (fork+exec), `jobs` at a time, each
//                            with a timeout (HANG / SIGNAL n reported)
//   ncclx_probe list         the cases
//   ncclx_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", ncclResult_t and CUresult by name; each case ends
// with "== <case>: exit 0 | SIGNAL n | HANG". No raw address or handle is printed, only
// relations, so that the fake's output can equal the real library's. Fake side:
//   LD_LIBRARY_PATH=build/release/dropin:build/release/dropin-nccl ncclx_probe all 8
//
//   g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include ci/gpu-probes/ncclx_probe.cc
//       -o /tmp/ncclx_probe -lcuda -ldl -lpthread && /tmp/ncclx_probe all 8
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <nccl.h>
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

constexpr int kNotExported = -12345;

const char* NName(ncclResult_t r) {
  switch (static_cast<int>(r)) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    case kNotExported: return "not exported";
  }
  static thread_local char buf[40];
  snprintf(buf, sizeof buf, "ncclResult_t(%d)", static_cast<int>(r));
  return buf;
}

void Say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Say(const char* fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  printf("%s: %s\n", g_case, line);
  fflush(stdout);
}

#define R(expr) Res(#expr, (expr))
CUresult Res(const char* what, CUresult r) {
  Say("%s = %s", what, Name(r));
  return r;
}

const char* YesNo(bool b) { return b ? "yes" : "no"; }

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <typename T>
T Garbage() {
  return reinterpret_cast<T>(static_cast<uintptr_t>(0x5a5a5a5a5a5a0000ull));
}

// ------------------------------------------------------------------------------------------
// libnccl.so.2 through dlopen/dlsym.

#define NCCL_FUNCS(X)                                                                         \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommInitAll)                 \
  X(ncclCommInitRankConfig) X(ncclCommInitRankScalable) X(ncclCommFinalize)                   \
  X(ncclCommDestroy) X(ncclCommAbort) X(ncclCommRevoke) X(ncclCommSplit) X(ncclCommShrink)    \
  X(ncclGetErrorString) X(ncclGetLastError) X(ncclCommGetAsyncError) X(ncclCommCount)        \
  X(ncclCommCuDevice) X(ncclCommUserRank) X(ncclCommRegister) X(ncclCommDeregister)           \
  X(ncclCommWindowRegister) X(ncclCommWindowDeregister) X(ncclMemAlloc) X(ncclMemFree)        \
  X(ncclReduce) X(ncclBcast) X(ncclBroadcast) X(ncclAllReduce) X(ncclReduceScatter)           \
  X(ncclAllGather) X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd)                  \
  X(ncclGroupSimulateEnd)

struct Nccl {
#define DECL(f) decltype(&::f) f = nullptr;
  NCCL_FUNCS(DECL)
#undef DECL
  void (*ncclResetDebugInit)() = nullptr;
  void* lib = nullptr;
  bool Load() {
    lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      Say("dlopen(libnccl.so.2) = failed");
      return false;
    }
#define LOAD(f) f = reinterpret_cast<decltype(f)>(dlsym(lib, #f));
    NCCL_FUNCS(LOAD)
    LOAD(ncclResetDebugInit)
#undef LOAD
    return true;
  }
};
Nccl N;

// Calls N.fn(args) if exported and prints "fn(args) = result".
#define C(fn, ...) \
  NRes(#fn "(" #__VA_ARGS__ ")", N.fn ? N.fn(__VA_ARGS__) : static_cast<ncclResult_t>(kNotExported))
ncclResult_t NRes(const char* what, ncclResult_t r) {
  Say("%s = %s", what, NName(r));
  return r;
}

// Prints ncclGetLastError(comm)'s text (empty, or "null").
void LastError(const char* label, ncclComm_t comm) {
  if (!N.ncclGetLastError) return Say("%s: ncclGetLastError = not exported", label);
  const char* t = N.ncclGetLastError(comm);
  Say("%s: ncclGetLastError = \"%s\"", label, t ? t : "(null)");
}

// Prints the communicator's asynchronous error.
void AsyncError(const char* label, ncclComm_t comm) {
  ncclResult_t e = static_cast<ncclResult_t>(-1);
  ncclResult_t r = N.ncclCommGetAsyncError ? N.ncclCommGetAsyncError(comm, &e)
                                           : static_cast<ncclResult_t>(kNotExported);
  Say("%s: ncclCommGetAsyncError = %s, asyncError = %s", label, NName(r), NName(e));
}

// Primary context of device 0 current, a non-blocking stream.
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream s = nullptr;
  bool Init() {
    if (!N.Load()) return false;
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    return true;
  }
  cudaStream_t St() const { return reinterpret_cast<cudaStream_t>(s); }
};

// A one-rank communicator on device 0 (ncclCommInitAll or ncclGetUniqueId + ncclCommInitRank).
ncclComm_t OneRank(bool init_all = true) {
  ncclComm_t c = nullptr;
  if (init_all) {
    int dev0 = 0;
    C(ncclCommInitAll, &c, 1, &dev0);
  } else {
    ncclUniqueId id;
    C(ncclGetUniqueId, &id);
    C(ncclCommInitRank, &c, 1, id, 0);
  }
  Say("comm nonnull = %s", YesNo(c != nullptr));
  return c;
}

// Float buffers: fills `n` floats at `p` with seed + i.
CUresult Fill(CUdeviceptr p, size_t n, float seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = seed + static_cast<float>(i);
  return cuMemcpyHtoD(p, v.data(), n * sizeof(float));
}
// Prints whether `n` floats at `p` are seed + i.
void Check(const char* label, CUdeviceptr p, size_t n, float seed) {
  std::vector<float> v(n, -7.0f);
  CUresult r = cuMemcpyDtoH(v.data(), p, n * sizeof(float));
  bool ok = true;
  for (size_t i = 0; i < n; ++i) ok = ok && v[i] == seed + static_cast<float>(i);
  Say("%s: read %s, holds seed %g = %s", label, Name(r), static_cast<double>(seed), YesNo(ok));
}

// ------------------------------------------------------------------------------------------
// Cases.

// version: ncclGetVersion, the error strings, ncclGetLastError(nullptr), ncclResetDebugInit.
int CaseVersion() {
  if (!N.Load()) return 1;
  int v = -1;
  C(ncclGetVersion, &v);
  Say("version = %d (header %d)", v, NCCL_VERSION_CODE);
  C(ncclGetVersion, nullptr);
  for (int r : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1}) {
    const char* t = N.ncclGetErrorString ? N.ncclGetErrorString(static_cast<ncclResult_t>(r))
                                         : "not exported";
    Say("ncclGetErrorString(%d) = \"%s\"", r, t ? t : "(null)");
  }
  LastError("before anything", nullptr);
  Say("ncclResetDebugInit exported = %s", YesNo(N.ncclResetDebugInit != nullptr));
  if (N.ncclResetDebugInit) {
    N.ncclResetDebugInit();
    Say("ncclResetDebugInit() = returned");
    N.ncclResetDebugInit();
    Say("ncclResetDebugInit() again = returned");
  }
  v = -1;
  C(ncclGetVersion, &v);
  Say("version after reset = %d", v);
  LastError("after reset", nullptr);
  return 0;
}

// memalloc:noinit: ncclMemAlloc/ncclMemFree before any CUDA call of the program.
int CaseMemAllocNoInit() {
  if (!N.Load()) return 1;
  void* p = nullptr;
  C(ncclMemAlloc, &p, 1 << 20);
  Say("p nonnull = %s", YesNo(p != nullptr));
  CUcontext cur = Garbage<CUcontext>();
  R(cuCtxGetCurrent(&cur));
  Say("a context current afterwards = %s", YesNo(cur != nullptr && cur != Garbage<CUcontext>()));
  if (p) C(ncclMemFree, p);
  LastError("after", nullptr);
  return 0;
}

// Prints what the driver says of an ncclMemAlloc pointer.
void Describe(const char* label, void* p, size_t asked) {
  CUdeviceptr d = reinterpret_cast<CUdeviceptr>(p);
  unsigned int type = 0;
  CUresult r = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d);
  Say("%s: MEMORY_TYPE %s = %u", label, Name(r), type);
  CUdeviceptr base = 0;
  size_t size = 0;
  r = cuMemGetAddressRange(&base, &size, d);
  Say("%s: cuMemGetAddressRange %s, base == p = %s, size >= asked = %s, size %% 2MiB = %zu",
      label, Name(r), YesNo(base == d), YesNo(size >= asked), size % (2u << 20));
  Say("%s: size == asked = %s, size == asked rounded to 2MiB = %s", label, YesNo(size == asked),
      YesNo(size == ((asked + (2u << 20) - 1) & ~size_t((2u << 20) - 1))));
  int ord = -1;
  r = cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d);
  Say("%s: DEVICE_ORDINAL %s = %d", label, Name(r), ord);
  int legacy_ipc = -1;
  r = cuPointerGetAttribute(&legacy_ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, d);
  Say("%s: IS_LEGACY_CUDA_IPC_CAPABLE %s = %d", label, Name(r), legacy_ipc);
  CUmemGenericAllocationHandle h = 0;
  r = cuMemRetainAllocationHandle(&h, p);
  Say("%s: cuMemRetainAllocationHandle = %s (a VMM allocation)", label, Name(r));
  if (r == CUDA_SUCCESS) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    CUresult pr = cuMemGetAllocationPropertiesFromHandle(&prop, h);
    Say("%s: props %s: type %d, location type %d id %d, handle types %d, gpuDirectRDMA %d",
        label, Name(pr), static_cast<int>(prop.type), static_cast<int>(prop.location.type),
        prop.location.id, static_cast<int>(prop.requestedHandleTypes),
        static_cast<int>(prop.allocFlags.gpuDirectRDMACapable));
    CUmemLocation loc;
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = 0;
    unsigned long long flags = 99;
    CUresult ar = cuMemGetAccess(&flags, &loc, d);
    Say("%s: cuMemGetAccess %s = %llu", label, Name(ar), flags);
    Say("%s: cuMemRelease(retained) = %s", label, Name(cuMemRelease(h)));
  }
}

// memalloc:valid: ncclMemAlloc of a few sizes, what the pointer is, data through it, frees.
int CaseMemAllocValid() {
  Base b;
  if (!b.Init()) return 1;
  for (size_t n : {size_t(1), size_t(4096), size_t(1) << 20, size_t(3) << 20}) {
    void* p = nullptr;
    char label[64];
    snprintf(label, sizeof label, "size %zu", n);
    ncclResult_t r = C(ncclMemAlloc, &p, n);
    Say("%s: p nonnull = %s", label, YesNo(p != nullptr));
    if (r != ncclSuccess || !p) continue;
    Describe(label, p, n);
    size_t bytes = n < 4096 ? 4 : 4096;
    Say("%s: write %s", label, Name(Fill(reinterpret_cast<CUdeviceptr>(p), bytes / 4, 3.0f)));
    Check(label, reinterpret_cast<CUdeviceptr>(p), bytes / 4, 3.0f);
    Say("%s: memset %s", label,
        Name(cuMemsetD8(reinterpret_cast<CUdeviceptr>(p), 0, n)));
    C(ncclMemFree, p);
    unsigned int type = 0;
    CUresult pr = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        reinterpret_cast<CUdeviceptr>(p));
    Say("%s: MEMORY_TYPE after free = %s", label, Name(pr));
  }
  // Two allocations are distinct and do not overlap.
  void* a = nullptr;
  void* c = nullptr;
  C(ncclMemAlloc, &a, 1 << 20);
  C(ncclMemAlloc, &c, 1 << 20);
  uintptr_t ua = reinterpret_cast<uintptr_t>(a), uc = reinterpret_cast<uintptr_t>(c);
  Say("two allocations distinct = %s, 1MiB apart at least = %s", YesNo(a != c),
      YesNo(ua > uc ? ua - uc >= (1u << 20) : uc - ua >= (1u << 20)));
  C(ncclMemFree, a);
  C(ncclMemFree, c);
  LastError("after", nullptr);
  return 0;
}

// memalloc:invalid: null out-pointer, size 0, huge sizes, double free, foreign pointers.
int CaseMemAllocInvalid() {
  Base b;
  if (!b.Init()) return 1;
  C(ncclMemAlloc, nullptr, 1 << 20);
  LastError("after null out", nullptr);
  void* p = Garbage<void*>();
  C(ncclMemAlloc, &p, 0);
  Say("size 0: p = %s", p == Garbage<void*>() ? "untouched" : p == nullptr ? "null" : "set");
  if (p != Garbage<void*>() && p != nullptr) C(ncclMemFree, p);
  LastError("after size 0", nullptr);
  p = Garbage<void*>();
  C(ncclMemAlloc, &p, size_t(1) << 50);
  Say("1PiB: p = %s", p == Garbage<void*>() ? "untouched" : p == nullptr ? "null" : "set");
  LastError("after 1PiB", nullptr);
  p = Garbage<void*>();
  C(ncclMemAlloc, &p, ~size_t(0));
  Say("SIZE_MAX: p = %s", p == Garbage<void*>() ? "untouched" : p == nullptr ? "null" : "set");
  LastError("after SIZE_MAX", nullptr);
  C(ncclMemFree, nullptr);
  LastError("after free null", nullptr);
  C(ncclMemFree, Garbage<void*>());
  LastError("after free garbage", nullptr);
  CUdeviceptr legacy = 0;
  R(cuMemAlloc(&legacy, 1 << 20));
  C(ncclMemFree, reinterpret_cast<void*>(legacy));
  LastError("after free of a cuMemAlloc pointer", nullptr);
  R(cuMemFree(legacy));
  void* q = nullptr;
  C(ncclMemAlloc, &q, 1 << 20);
  C(ncclMemFree, static_cast<char*>(q) + 256);
  LastError("after free of an interior pointer", nullptr);
  C(ncclMemFree, q);
  C(ncclMemFree, q);
  LastError("after double free", nullptr);
  std::vector<char> host(4096);
  C(ncclMemFree, host.data());
  LastError("after free of a host pointer", nullptr);
  return 0;
}

// memalloc:cross: ncclMemAlloc memory freed by cuMemFree, and with no context current.
int CaseMemAllocCross() {
  Base b;
  if (!b.Init()) return 1;
  void* p = nullptr;
  C(ncclMemAlloc, &p, 1 << 20);
  R(cuMemFree(reinterpret_cast<CUdeviceptr>(p)));
  C(ncclMemFree, p);
  R(cuCtxSetCurrent(nullptr));
  void* q = nullptr;
  C(ncclMemAlloc, &q, 1 << 20);
  CUcontext cur = Garbage<CUcontext>();
  R(cuCtxGetCurrent(&cur));
  Say("no ctx: current afterwards = %s",
      cur == nullptr ? "none" : cur == b.ctx ? "the primary context" : "other");
  R(cuCtxSetCurrent(nullptr));
  if (q) C(ncclMemFree, q);
  R(cuCtxGetCurrent(&cur));
  Say("after free: current = %s",
      cur == nullptr ? "none" : cur == b.ctx ? "the primary context" : "other");
  return 0;
}

// memalloc:ctx: ncclMemAlloc with a created (non-primary) context current: the pointer's
// context, the current context afterwards, the memory used from the primary context.
int CaseMemAllocCtx() {
  Base b;
  if (!b.Init()) return 1;
  CUcontext mine = nullptr;
  R(cuCtxCreate(&mine, nullptr, 0, b.dev));
  R(cuCtxSetCurrent(mine));
  void* p = nullptr;
  C(ncclMemAlloc, &p, 1 << 20);
  CUcontext cur = Garbage<CUcontext>();
  R(cuCtxGetCurrent(&cur));
  Say("current afterwards = %s", cur == mine ? "the created context"
                                 : cur == b.ctx ? "the primary context" : "other");
  if (p == nullptr) return 0;
  CUcontext owner = Garbage<CUcontext>();
  CUresult r = cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT,
                                     reinterpret_cast<CUdeviceptr>(p));
  Say("CONTEXT %s = %s", Name(r), owner == mine ? "the created context"
                                  : owner == b.ctx ? "the primary context"
                                  : owner == nullptr ? "null" : "other");
  Say("write in the created context = %s",
      Name(Fill(reinterpret_cast<CUdeviceptr>(p), 16, 21.0f)));
  R(cuCtxSetCurrent(b.ctx));
  Check("read in the primary context", reinterpret_cast<CUdeviceptr>(p), 16, 21.0f);
  C(ncclMemFree, p);
  R(cuCtxGetCurrent(&cur));
  Say("current after free = %s", cur == mine ? "the created context"
                                 : cur == b.ctx ? "the primary context" : "other");
  R(cuCtxDestroy(mine));
  return 0;
}

// comm:basic: one-rank communicators, their queries, invalid init arguments, destroy/abort.
int CaseCommBasic(bool init_all) {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank(init_all);
  int n = -1, dev = -1, rank = -1;
  C(ncclCommCount, c, &n);
  C(ncclCommCuDevice, c, &dev);
  C(ncclCommUserRank, c, &rank);
  Say("count %d, device %d, rank %d", n, dev, rank);
  AsyncError("fresh", c);
  LastError("fresh", c);
  C(ncclCommCount, c, nullptr);
  C(ncclCommCount, nullptr, &n);
  ncclResult_t e = static_cast<ncclResult_t>(-1);
  C(ncclCommGetAsyncError, nullptr, &e);
  C(ncclCommGetAsyncError, c, nullptr);
  LastError("after null queries", c);
  C(ncclCommFinalize, c);
  AsyncError("finalized", c);
  C(ncclCommDestroy, c);
  C(ncclCommDestroy, nullptr);
  C(ncclCommAbort, nullptr);
  C(ncclCommFinalize, nullptr);
  LastError("after null destroy", nullptr);
  if (init_all) {
    ncclComm_t d = Garbage<ncclComm_t>();
    int devs[2] = {0, 0};
    C(ncclCommInitAll, nullptr, 1, devs);
    C(ncclCommInitAll, &d, 1, nullptr);
    Say("after null devlist: comm = %s", d == Garbage<ncclComm_t>() ? "untouched"
                                         : d == nullptr               ? "null" : "set");
    if (d != Garbage<ncclComm_t>() && d != nullptr) C(ncclCommDestroy, d);
    d = nullptr;
    int bad = 7;
    C(ncclCommInitAll, &d, 1, &bad);
    LastError("after bad device", nullptr);
  } else {
    ncclUniqueId id;
    C(ncclGetUniqueId, &id);
    C(ncclGetUniqueId, nullptr);
    ncclComm_t d = nullptr;
    C(ncclCommInitRank, &d, 1, id, 1);
    C(ncclCommInitRank, &d, 0, id, 0);
    C(ncclCommInitRank, &d, 1, id, -1);
    C(ncclCommInitRank, nullptr, 1, id, 0);
    LastError("after bad ranks", nullptr);
  }
  return 0;
}

// comm:initall0: ncclCommInitAll with ndev 0 (alone: NCCL 2.28.9 may crash on it).
int CaseInitAllZero() {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t d = Garbage<ncclComm_t>();
  int devs[2] = {0, 0};
  C(ncclCommInitAll, &d, 0, devs);
  Say("comm = %s", d == Garbage<ncclComm_t>() ? "untouched" : d == nullptr ? "null" : "set");
  LastError("after", nullptr);
  return 0;
}

// comm:abort: an abort of a live one-rank communicator.
int CaseCommAbort() {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  C(ncclCommAbort, c);
  LastError("after abort", nullptr);
  return 0;
}

// Pointers of a single-rank collective's case.
struct Bufs {
  CUdeviceptr send = 0, recv = 0;
};

constexpr size_t kCount = 1024;

ncclResult_t Coll(const std::string& coll, const void* s, void* r, size_t n, ncclComm_t c,
                  cudaStream_t st) {
  if (coll == "allreduce") return C(ncclAllReduce, s, r, n, ncclFloat, ncclSum, c, st);
  if (coll == "broadcast") return C(ncclBroadcast, s, r, n, ncclFloat, 0, c, st);
  if (coll == "reduce") return C(ncclReduce, s, r, n, ncclFloat, ncclSum, 0, c, st);
  if (coll == "allgather") return C(ncclAllGather, s, r, n, ncclFloat, c, st);
  if (coll == "reducescatter") return C(ncclReduceScatter, s, r, n, ncclFloat, ncclSum, c, st);
  if (coll == "bcast") return C(ncclBcast, r, n, ncclFloat, 0, c, st);
  return ncclInternalError;
}

// single:<coll>:<mode>: one single-rank collective of 1024 floats. Modes: inplace, outofplace
// (valid buffers); bogus-inplace (one garbage pointer for both), bogus-send, bogus-recv,
// null-inplace, null-send, host-inplace (a malloc'd pointer), zero-null (count 0, null pointers).
// Then the stream, the data, the communicator's errors and whether a valid all-reduce still
// works.
int CaseSingle(const std::string& coll, const std::string& mode) {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  CUdeviceptr a = 0, d = 0;
  R(cuMemAlloc(&a, kCount * sizeof(float)));
  R(cuMemAlloc(&d, kCount * sizeof(float)));
  Fill(a, kCount, 1.0f);
  Fill(d, kCount, 5000.0f);
  void* va = reinterpret_cast<void*>(a);
  void* vd = reinterpret_cast<void*>(d);
  void* g = Garbage<void*>();
  std::vector<float> host(kCount, 0.0f);
  void* s = va;
  void* r = vd;
  size_t n = kCount;
  if (mode == "inplace") r = va;
  if (mode == "bogus-inplace") s = r = g;
  if (mode == "bogus-send") s = g;
  if (mode == "bogus-recv") r = g;
  if (mode == "null-inplace") s = r = nullptr;
  if (mode == "null-send") s = nullptr;
  if (mode == "host-inplace") s = r = host.data();
  if (mode == "zero-null") { s = r = nullptr; n = 0; }
  if (coll == "bcast" && mode == "outofplace") r = vd;  // bcast is in place on r
  Say("mode %s: send == recv = %s", mode.c_str(), YesNo(s == r));
  Coll(coll, s, r, n, c, b.St());
  LastError("after call", c);
  R(cuStreamQuery(b.s));
  R(cuStreamSynchronize(b.s));
  R(cuCtxSynchronize());
  Check("a (send)", a, kCount, 1.0f);
  if (mode == "outofplace" || mode == "bogus-send") {
    Check("d (recv) holds the send data", d, kCount, 1.0f);
    Check("d (recv) untouched", d, kCount, 5000.0f);
  }
  AsyncError("after", c);
  LastError("after sync", c);
  // A valid out-of-place all-reduce afterwards.
  Fill(a, kCount, 7.0f);
  Fill(d, kCount, 0.0f);
  C(ncclAllReduce, va, vd, kCount, ncclFloat, ncclSum, c, b.St());
  R(cuStreamSynchronize(b.s));
  Check("valid all-reduce afterwards", d, kCount, 7.0f);
  AsyncError("at the end", c);
  C(ncclCommDestroy, c);
  return 0;
}

// single:args: argument checks of single-rank collectives (datatype, op, root, null comm,
// counts), each followed by the communicator's errors.
int CaseSingleArgs() {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  CUdeviceptr a = 0, d = 0;
  R(cuMemAlloc(&a, kCount * sizeof(float)));
  R(cuMemAlloc(&d, kCount * sizeof(float)));
  void* va = reinterpret_cast<void*>(a);
  void* vd = reinterpret_cast<void*>(d);
  cudaStream_t st = b.St();
  C(ncclAllReduce, va, vd, kCount, static_cast<ncclDataType_t>(99), ncclSum, c, st);
  LastError("bad datatype", c);
  C(ncclAllReduce, va, vd, kCount, ncclFloat, static_cast<ncclRedOp_t>(99), c, st);
  LastError("bad op", c);
  C(ncclBroadcast, va, vd, kCount, ncclFloat, 1, c, st);
  LastError("root 1", c);
  C(ncclReduce, va, vd, kCount, ncclFloat, ncclSum, -1, c, st);
  LastError("root -1", c);
  C(ncclBcast, va, kCount, ncclFloat, 1, c, st);
  LastError("bcast root 1", c);
  C(ncclAllReduce, va, vd, kCount, ncclFloat, ncclSum, nullptr, st);
  LastError("null comm", nullptr);
  C(ncclAllReduce, va, vd, 0, ncclFloat, ncclSum, c, st);
  LastError("count 0", c);
  C(ncclSend, va, kCount, ncclFloat, 0, c, st);
  LastError("send to self outside a group", c);
  C(ncclGroupStart);
  C(ncclSend, va, kCount, ncclFloat, 0, c, st);
  C(ncclRecv, vd, kCount, ncclFloat, 0, c, st);
  C(ncclGroupEnd);
  R(cuStreamSynchronize(b.s));
  Fill(a, kCount, 2.0f);
  Fill(d, kCount, 0.0f);
  C(ncclGroupStart);
  C(ncclSend, va, kCount, ncclFloat, 0, c, st);
  C(ncclRecv, vd, kCount, ncclFloat, 0, c, st);
  C(ncclGroupEnd);
  R(cuStreamSynchronize(b.s));
  Check("self send/recv", d, kCount, 2.0f);
  C(ncclSend, va, kCount, ncclFloat, 1, c, st);
  LastError("send to peer 1", c);
  AsyncError("at the end", c);
  C(ncclCommDestroy, c);
  return 0;
}

// register: ncclCommRegister/Deregister on a one-rank communicator.
int CaseRegister() {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  CUdeviceptr a = 0;
  R(cuMemAlloc(&a, 1 << 20));
  void* va = reinterpret_cast<void*>(a);
  void* h = Garbage<void*>();
  C(ncclCommRegister, c, va, 1 << 20, &h);
  Say("handle = %s", h == Garbage<void*>() ? "untouched" : h == nullptr ? "null" : "set");
  void* h2 = Garbage<void*>();
  C(ncclCommRegister, c, va, 1 << 20, &h2);
  Say("second handle = %s, same as first = %s",
      h2 == Garbage<void*>() ? "untouched" : h2 == nullptr ? "null" : "set", YesNo(h2 == h));
  void* nm = nullptr;
  C(ncclMemAlloc, &nm, 1 << 21);
  void* h3 = Garbage<void*>();
  C(ncclCommRegister, c, nm, 1 << 21, &h3);
  Say("ncclMemAlloc buffer handle = %s",
      h3 == Garbage<void*>() ? "untouched" : h3 == nullptr ? "null" : "set");
  void* hx = Garbage<void*>();
  C(ncclCommRegister, c, nullptr, 1 << 20, &hx);
  Say("null buffer: handle = %s",
      hx == Garbage<void*>() ? "untouched" : hx == nullptr ? "null" : "set");
  hx = Garbage<void*>();
  C(ncclCommRegister, c, va, 0, &hx);
  Say("size 0: handle = %s", hx == Garbage<void*>() ? "untouched" : hx == nullptr ? "null" : "set");
  hx = Garbage<void*>();
  C(ncclCommRegister, nullptr, va, 1 << 20, &hx);
  Say("null comm: handle = %s",
      hx == Garbage<void*>() ? "untouched" : hx == nullptr ? "null" : "set");
  std::vector<char> host(1 << 20);
  hx = Garbage<void*>();
  C(ncclCommRegister, c, host.data(), 1 << 20, &hx);
  Say("host buffer: handle = %s",
      hx == Garbage<void*>() ? "untouched" : hx == nullptr ? "null" : "set");
  LastError("after registers", c);
  if (h != Garbage<void*>()) C(ncclCommDeregister, c, h);
  if (h2 != Garbage<void*>() && h2 != h) C(ncclCommDeregister, c, h2);
  if (h3 != Garbage<void*>()) C(ncclCommDeregister, c, h3);
  C(ncclCommDeregister, c, nullptr);
  C(ncclCommDeregister, nullptr, h);
  LastError("after deregisters", c);
  C(ncclMemFree, nm);
  C(ncclCommDestroy, c);
  return 0;
}

// register:nullhandle: ncclCommRegister with a NULL handle pointer (alone: it may crash).
int CaseRegisterNullHandle() {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  CUdeviceptr a = 0;
  R(cuMemAlloc(&a, 1 << 20));
  C(ncclCommRegister, c, reinterpret_cast<void*>(a), 1 << 20, nullptr);
  LastError("after", c);
  C(ncclCommDestroy, c);
  return 0;
}

// register:garbage: deregistering a garbage handle and one deregistered already (separate so a
// crash of the real library shows as a SIGNAL of this case only).
int CaseRegisterGarbage(bool twice) {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  CUdeviceptr a = 0;
  R(cuMemAlloc(&a, 1 << 20));
  void* h = nullptr;
  C(ncclCommRegister, c, reinterpret_cast<void*>(a), 1 << 20, &h);
  if (twice) {
    C(ncclCommDeregister, c, h);
    C(ncclCommDeregister, c, h);
  } else {
    C(ncclCommDeregister, c, Garbage<void*>());
    C(ncclCommDeregister, c, h);
  }
  LastError("after", c);
  C(ncclCommDestroy, c);
  return 0;
}

const char* WinState(ncclWindow_t w) {
  return w == Garbage<ncclWindow_t>() ? "untouched" : w == nullptr ? "null" : "set";
}

// window: ncclCommWindowRegister/Deregister on a one-rank communicator.
int CaseWindow() {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  void* nm = nullptr;
  C(ncclMemAlloc, &nm, 1 << 21);
  ncclWindow_t w = Garbage<ncclWindow_t>();
  C(ncclCommWindowRegister, c, nm, 1 << 21, &w, NCCL_WIN_DEFAULT);
  Say("window = %s", WinState(w));
  LastError("after default", c);
  ncclWindow_t ws = Garbage<ncclWindow_t>();
  void* nm2 = nullptr;
  C(ncclMemAlloc, &nm2, 1 << 21);
  C(ncclCommWindowRegister, c, nm2, 1 << 21, &ws, NCCL_WIN_COLL_SYMMETRIC);
  Say("symmetric window = %s", WinState(ws));
  LastError("after symmetric", c);
  // A collective through the registered buffers.
  Fill(reinterpret_cast<CUdeviceptr>(nm), 256, 4.0f);
  C(ncclAllReduce, nm, nm2, 256, ncclFloat, ncclSum, c, b.St());
  R(cuStreamSynchronize(b.s));
  Check("all-reduce between windows", reinterpret_cast<CUdeviceptr>(nm2), 256, 4.0f);
  CUdeviceptr legacy = 0;
  R(cuMemAlloc(&legacy, 1 << 21));
  ncclWindow_t wl = Garbage<ncclWindow_t>();
  C(ncclCommWindowRegister, c, reinterpret_cast<void*>(legacy), 1 << 21, &wl, NCCL_WIN_DEFAULT);
  Say("cuMemAlloc buffer window = %s", WinState(wl));
  LastError("after cuMemAlloc buffer", c);
  ncclWindow_t wx = Garbage<ncclWindow_t>();
  C(ncclCommWindowRegister, c, nullptr, 1 << 21, &wx, NCCL_WIN_DEFAULT);
  Say("null buffer window = %s", WinState(wx));
  C(ncclCommWindowRegister, c, nm, 1 << 21, nullptr, NCCL_WIN_DEFAULT);
  wx = Garbage<ncclWindow_t>();
  C(ncclCommWindowRegister, c, nm, 0, &wx, NCCL_WIN_DEFAULT);
  Say("size 0 window = %s", WinState(wx));
  wx = Garbage<ncclWindow_t>();
  C(ncclCommWindowRegister, c, static_cast<char*>(nm) + 256, 4096, &wx, NCCL_WIN_DEFAULT);
  Say("unaligned window = %s", WinState(wx));
  ncclWindow_t wu = wx;
  wx = Garbage<ncclWindow_t>();
  C(ncclCommWindowRegister, c, nm, 1 << 21, &wx, 0x80);
  Say("flags 0x80 window = %s", WinState(wx));
  ncclWindow_t wf = wx;
  LastError("after invalid registers", c);
  for (ncclWindow_t x : {w, ws, wl, wu, wf})
    if (x != Garbage<ncclWindow_t>() && x != nullptr) C(ncclCommWindowDeregister, c, x);
  C(ncclCommWindowDeregister, c, nullptr);
  LastError("after deregisters", c);
  C(ncclMemFree, nm);
  C(ncclMemFree, nm2);
  C(ncclCommDestroy, c);
  return 0;
}

// window:nullcomm: ncclCommWindowRegister/Deregister with a NULL communicator (alone: they
// may crash).
int CaseWindowNullComm() {
  Base b;
  if (!b.Init()) return 1;
  void* nm = nullptr;
  C(ncclMemAlloc, &nm, 1 << 21);
  ncclWindow_t wx = Garbage<ncclWindow_t>();
  C(ncclCommWindowRegister, nullptr, nullptr, 0, &wx, NCCL_WIN_DEFAULT);
  Say("null comm, null buffer: window = %s", WinState(wx));
  C(ncclCommWindowDeregister, nullptr, nullptr);
  C(ncclCommWindowRegister, nullptr, nm, 1 << 21, &wx, NCCL_WIN_DEFAULT);
  Say("null comm window = %s", WinState(wx));
  LastError("after", nullptr);
  C(ncclMemFree, nm);
  return 0;
}

// window:garbage / window:twice: deregistering a garbage window, one deregistered already.
int CaseWindowGarbage(bool twice) {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  void* nm = nullptr;
  C(ncclMemAlloc, &nm, 1 << 21);
  ncclWindow_t w = nullptr;
  C(ncclCommWindowRegister, c, nm, 1 << 21, &w, NCCL_WIN_DEFAULT);
  if (twice) {
    C(ncclCommWindowDeregister, c, w);
    C(ncclCommWindowDeregister, c, w);
  } else {
    C(ncclCommWindowDeregister, c, Garbage<ncclWindow_t>());
    C(ncclCommWindowDeregister, c, w);
  }
  LastError("after", c);
  C(ncclMemFree, nm);
  C(ncclCommDestroy, c);
  return 0;
}

// shrink:<mode>: ncclCommShrink of a one-rank communicator. Modes: none (NULL list, count 0),
// empty (a list, count 0), self (exclude rank 0), bad (exclude rank 5, not a rank), args (null
// pointers, negative count, bad flags), abort (NCCL_SHRINK_ABORT, exclude rank 5), config (a
// blocking config, exclude rank 5).
int CaseShrink(const std::string& mode) {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  ncclComm_t nc = Garbage<ncclComm_t>();
  auto state = [&]() {
    return nc == Garbage<ncclComm_t>() ? "untouched" : nc == nullptr ? "null" : nc == c ? "parent"
                                                                                          : "new";
  };
  int ex0 = 0, ex5 = 5;
  if (mode == "none") {
    C(ncclCommShrink, c, nullptr, 0, &nc, nullptr, NCCL_SHRINK_DEFAULT);
  } else if (mode == "empty") {
    C(ncclCommShrink, c, &ex5, 0, &nc, nullptr, NCCL_SHRINK_DEFAULT);
  } else if (mode == "abort") {
    C(ncclCommShrink, c, &ex5, 1, &nc, nullptr, NCCL_SHRINK_ABORT);
  } else if (mode == "config") {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 1;
    C(ncclCommShrink, c, &ex5, 1, &nc, &cfg, NCCL_SHRINK_DEFAULT);
  } else if (mode == "self") {
    C(ncclCommShrink, c, &ex0, 1, &nc, nullptr, NCCL_SHRINK_DEFAULT);
  } else if (mode == "bad") {
    C(ncclCommShrink, c, &ex5, 1, &nc, nullptr, NCCL_SHRINK_DEFAULT);
  } else if (mode == "args") {
    C(ncclCommShrink, nullptr, nullptr, 0, &nc, nullptr, NCCL_SHRINK_DEFAULT);
    Say("null comm: newcomm = %s", state());
    C(ncclCommShrink, c, nullptr, 0, nullptr, nullptr, NCCL_SHRINK_DEFAULT);
    C(ncclCommShrink, c, nullptr, 1, &nc, nullptr, NCCL_SHRINK_DEFAULT);
    Say("null list, count 1: newcomm = %s", state());
    C(ncclCommShrink, c, &ex0, -1, &nc, nullptr, NCCL_SHRINK_DEFAULT);
    Say("count -1: newcomm = %s", state());
    C(ncclCommShrink, c, nullptr, 0, &nc, nullptr, 0x10);
    Say("flags 0x10: newcomm = %s", state());
  }
  Say("newcomm = %s", state());
  LastError("after shrink", c);
  AsyncError("parent", c);
  if (nc != Garbage<ncclComm_t>() && nc != nullptr && nc != c) {
    int n = -1, r = -1;
    C(ncclCommCount, nc, &n);
    C(ncclCommUserRank, nc, &r);
    Say("new comm: count %d, rank %d", n, r);
    AsyncError("new comm", nc);
    CUdeviceptr a = 0, d = 0;
    R(cuMemAlloc(&a, kCount * sizeof(float)));
    R(cuMemAlloc(&d, kCount * sizeof(float)));
    Fill(a, kCount, 9.0f);
    C(ncclAllReduce, reinterpret_cast<void*>(a), reinterpret_cast<void*>(d), kCount, ncclFloat,
      ncclSum, nc, b.St());
    R(cuStreamSynchronize(b.s));
    Check("all-reduce on the new comm", d, kCount, 9.0f);
    C(ncclCommDestroy, nc);
  }
  // The parent still works?
  CUdeviceptr a = 0, d = 0;
  R(cuMemAlloc(&a, kCount * sizeof(float)));
  R(cuMemAlloc(&d, kCount * sizeof(float)));
  Fill(a, kCount, 11.0f);
  C(ncclAllReduce, reinterpret_cast<void*>(a), reinterpret_cast<void*>(d), kCount, ncclFloat,
    ncclSum, c, b.St());
  R(cuStreamSynchronize(b.s));
  Check("all-reduce on the parent", d, kCount, 11.0f);
  C(ncclCommDestroy, c);
  return 0;
}

// revoke:<mode>: ncclCommRevoke of a one-rank communicator (valid: flags 0; badflags; null;
// twice), then the communicator's errors, a collective, a split and destroy.
int CaseRevoke(const std::string& mode) {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  if (mode == "null") {
    C(ncclCommRevoke, nullptr, NCCL_REVOKE_DEFAULT);
    LastError("after", nullptr);
    C(ncclCommDestroy, c);
    return 0;
  }
  if (mode == "badflags") C(ncclCommRevoke, c, 1);
  if (mode == "valid" || mode == "twice") C(ncclCommRevoke, c, NCCL_REVOKE_DEFAULT);
  if (mode == "twice") C(ncclCommRevoke, c, NCCL_REVOKE_DEFAULT);
  LastError("after revoke", c);
  AsyncError("after revoke", c);
  int n = -1;
  C(ncclCommCount, c, &n);
  Say("count = %d", n);
  CUdeviceptr a = 0, d = 0;
  R(cuMemAlloc(&a, kCount * sizeof(float)));
  R(cuMemAlloc(&d, kCount * sizeof(float)));
  Fill(a, kCount, 13.0f);
  Fill(d, kCount, 0.0f);
  C(ncclAllReduce, reinterpret_cast<void*>(a), reinterpret_cast<void*>(d), kCount, ncclFloat,
    ncclSum, c, b.St());
  R(cuStreamSynchronize(b.s));
  Check("all-reduce after revoke", d, kCount, 13.0f);
  LastError("after all-reduce", c);
  AsyncError("after all-reduce", c);
  ncclComm_t nc = Garbage<ncclComm_t>();
  C(ncclCommSplit, c, 0, 0, &nc, nullptr);
  Say("split: newcomm = %s", nc == Garbage<ncclComm_t>() ? "untouched"
                             : nc == nullptr               ? "null" : "set");
  if (nc != Garbage<ncclComm_t>() && nc != nullptr) C(ncclCommDestroy, nc);
  nc = Garbage<ncclComm_t>();
  C(ncclCommShrink, c, nullptr, 0, &nc, nullptr, NCCL_SHRINK_DEFAULT);
  Say("shrink: newcomm = %s", nc == Garbage<ncclComm_t>() ? "untouched"
                              : nc == nullptr               ? "null" : "set");
  if (nc != Garbage<ncclComm_t>() && nc != nullptr) C(ncclCommDestroy, nc);
  C(ncclCommFinalize, c);
  C(ncclCommDestroy, c);
  return 0;
}

// scalable: ncclCommInitRankScalable with one and two ids, and invalid arguments.
int CaseScalable(const std::string& mode) {
  Base b;
  if (!b.Init()) return 1;
  ncclUniqueId ids[2];
  C(ncclGetUniqueId, &ids[0]);
  C(ncclGetUniqueId, &ids[1]);
  ncclComm_t c = Garbage<ncclComm_t>();
  auto state = [&]() {
    return c == Garbage<ncclComm_t>() ? "untouched" : c == nullptr ? "null" : "set";
  };
  if (mode == "one") {
    C(ncclCommInitRankScalable, &c, 1, 0, 1, ids, nullptr);
  } else if (mode == "two") {
    C(ncclCommInitRankScalable, &c, 1, 0, 2, ids, nullptr);
  } else if (mode == "config") {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 1;
    C(ncclCommInitRankScalable, &c, 1, 0, 1, ids, &cfg);
  } else if (mode == "nullids") {
    C(ncclCommInitRankScalable, &c, 1, 0, 1, nullptr, nullptr);
    Say("null ids: comm = %s", state());
    LastError("after", nullptr);
    return 0;
  } else if (mode == "args") {
    C(ncclCommInitRankScalable, &c, 1, 0, 0, ids, nullptr);
    Say("nId 0: comm = %s", state());
    C(ncclCommInitRankScalable, &c, 1, 1, 1, ids, nullptr);
    Say("rank 1 of 1: comm = %s", state());
    C(ncclCommInitRankScalable, &c, 0, 0, 1, ids, nullptr);
    Say("0 ranks: comm = %s", state());
    C(ncclCommInitRankScalable, nullptr, 1, 0, 1, ids, nullptr);
    C(ncclCommInitRankScalable, &c, 1, 0, -1, ids, nullptr);
    Say("nId -1: comm = %s", state());
    LastError("after", nullptr);
    return 0;
  }
  Say("comm = %s", state());
  if (c == Garbage<ncclComm_t>() || c == nullptr) return 0;
  int n = -1, r = -1;
  C(ncclCommCount, c, &n);
  C(ncclCommUserRank, c, &r);
  Say("count %d, rank %d", n, r);
  AsyncError("fresh", c);
  CUdeviceptr a = 0, d = 0;
  R(cuMemAlloc(&a, kCount * sizeof(float)));
  R(cuMemAlloc(&d, kCount * sizeof(float)));
  Fill(a, kCount, 17.0f);
  C(ncclAllReduce, reinterpret_cast<void*>(a), reinterpret_cast<void*>(d), kCount, ncclFloat,
    ncclSum, c, b.St());
  R(cuStreamSynchronize(b.s));
  Check("all-reduce", d, kCount, 17.0f);
  C(ncclCommDestroy, c);
  return 0;
}

// simulate:<mode>: ncclGroupSimulateEnd after a grouped all-reduce (valid), with no group,
// with a null or uninitialised ncclSimInfo_t.
int CaseSimulate(const std::string& mode) {
  Base b;
  if (!b.Init()) return 1;
  ncclComm_t c = OneRank();
  CUdeviceptr a = 0, d = 0;
  R(cuMemAlloc(&a, kCount * sizeof(float)));
  R(cuMemAlloc(&d, kCount * sizeof(float)));
  Fill(a, kCount, 19.0f);
  Fill(d, kCount, 0.0f);
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  if (mode == "badmagic") info.magic = 0;
  if (mode == "badversion") info.version = 1;
  if (mode != "nogroup") C(ncclGroupStart);
  if (mode != "nogroup" && mode != "empty")
    C(ncclAllReduce, reinterpret_cast<void*>(a), reinterpret_cast<void*>(d), kCount, ncclFloat,
      ncclSum, c, b.St());
  if (mode == "null")
    C(ncclGroupSimulateEnd, nullptr);
  else
    C(ncclGroupSimulateEnd, &info);
  Say("estimatedTime: > 0 = %s, unchanged (NCCL_UNDEF_FLOAT) = %s",
      YesNo(info.estimatedTime > 0), YesNo(info.estimatedTime == NCCL_UNDEF_FLOAT));
  Say("size %zu magic 0x%x version %u", info.size, info.magic, info.version);
  LastError("after simulate", c);
  R(cuStreamSynchronize(b.s));
  Check("recv after simulate (ran?)", d, kCount, 19.0f);
  Check("recv after simulate (untouched?)", d, kCount, 0.0f);
  C(ncclGroupEnd);
  LastError("after a GroupEnd", c);
  C(ncclAllReduce, reinterpret_cast<void*>(a), reinterpret_cast<void*>(d), kCount, ncclFloat,
    ncclSum, c, b.St());
  R(cuStreamSynchronize(b.s));
  Check("all-reduce afterwards", d, kCount, 19.0f);
  AsyncError("at the end", c);
  C(ncclCommDestroy, c);
  return 0;
}

const char* const kColls[] = {"allreduce", "broadcast", "reduce",
                              "allgather", "reducescatter", "bcast"};
const char* const kModes[] = {"inplace",    "outofplace",   "bogus-inplace", "bogus-send",
                              "bogus-recv", "null-inplace", "null-send",     "host-inplace",
                              "zero-null"};

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {"version",        "memalloc:noinit", "memalloc:valid",
                                    "memalloc:invalid", "memalloc:cross", "memalloc:ctx",
                                    "comm:initall",    "comm:initrank",  "comm:initall0",
                                    "comm:abort",
                                    "single:args"};
  for (const char* c : kColls)
    for (const char* m : kModes) cases.push_back(std::string("single:") + c + ":" + m);
  for (const char* m : {"none", "empty", "abort", "self", "bad", "args", "config"})
    cases.push_back(std::string("shrink:") + m);
  for (const char* m : {"valid", "badflags", "null", "twice"})
    cases.push_back(std::string("revoke:") + m);
  cases.insert(cases.end(), {"window", "window:garbage", "window:twice", "window:nullcomm",
                             "register", "register:garbage", "register:twice",
                             "register:nullhandle"});
  for (const char* m : {"one", "two", "config", "args", "nullids"})
    cases.push_back(std::string("scalable:") + m);
  for (const char* m : {"valid", "nogroup", "empty", "null", "badmagic", "badversion"})
    cases.push_back(std::string("simulate:") + m);
  return cases;
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  auto rest = [&](const char* prefix) { return c.substr(strlen(prefix)); };
  if (c == "version") return CaseVersion();
  if (c == "memalloc:noinit") return CaseMemAllocNoInit();
  if (c == "memalloc:valid") return CaseMemAllocValid();
  if (c == "memalloc:invalid") return CaseMemAllocInvalid();
  if (c == "memalloc:cross") return CaseMemAllocCross();
  if (c == "memalloc:ctx") return CaseMemAllocCtx();
  if (c == "comm:initall") return CaseCommBasic(true);
  if (c == "comm:initrank") return CaseCommBasic(false);
  if (c == "comm:abort") return CaseCommAbort();
  if (c == "comm:initall0") return CaseInitAllZero();
  if (c == "single:args") return CaseSingleArgs();
  if (c.rfind("single:", 0) == 0) {
    std::string r = rest("single:");
    size_t colon = r.find(':');
    return CaseSingle(r.substr(0, colon), r.substr(colon + 1));
  }
  if (c.rfind("shrink:", 0) == 0) return CaseShrink(rest("shrink:"));
  if (c.rfind("revoke:", 0) == 0) return CaseRevoke(rest("revoke:"));
  if (c == "window") return CaseWindow();
  if (c == "window:garbage") return CaseWindowGarbage(false);
  if (c == "window:twice") return CaseWindowGarbage(true);
  if (c == "window:nullcomm") return CaseWindowNullComm();
  if (c == "register") return CaseRegister();
  if (c == "register:garbage") return CaseRegisterGarbage(false);
  if (c == "register:twice") return CaseRegisterGarbage(true);
  if (c == "register:nullhandle") return CaseRegisterNullHandle();
  if (c.rfind("scalable:", 0) == 0) return CaseScalable(rest("scalable:"));
  if (c.rfind("simulate:", 0) == 0) return CaseSimulate(rest("simulate:"));
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
  std::string dir = "/tmp/ncclx_probe_" + std::to_string(getpid());
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
    char line[4096];
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
    fprintf(stderr, "usage: ncclx_probe all [jobs] | ncclx_probe list | ncclx_probe <case>\n");
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
