// Miscellaneous-area probe for cuhal: how the real driver answers the IPC entry points
// (cuIpcGetMemHandle, cuIpcOpenMemHandle_v2, cuIpcCloseMemHandle, cuIpcGetEventHandle,
// cuIpcOpenEventHandle: in one process and from a child process that opens the parent's handles),
// the profiler controls (cuProfilerStart/Stop, cuProfilerInitialize if exported), the coredump
// attributes (cuCoredump{Get,Set}Attribute[Global]) and device resources / green contexts
// (cuDeviceGetDevResource, cuCtxGetDevResource, cuDevSmResourceSplitByCount,
// cuDevResourceGenerateDesc, cuGreenCtx*, cuCtxFromGreenCtx, cuStreamGetGreenCtx), valid and
// invalid, before cuInit and with garbage handles. A plain driver-API program (cuda.h, -lcuda),
// like vmm_probe.cc; see README.md.
//
//   misc_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                           `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   misc_probe list         the cases
//   misc_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address, handle or descriptor is printed, only
// relations, so that the fake's output can equal the H200's. The IPC child cases fork+exec this
// program again ("ipcchild:<mode>", reading the parent's 64-byte handles from its stdin); the
// child's lines carry the parent case's name and "child:" so the comparison shows them in place.
// cuProfilerStart/Stop/Initialize (cudaProfiler.h) are resolved with dlsym, so the probe loads on a
// libcuda without them.
//
//   g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include ci/gpu-probes/misc_probe.cc
//       -o /tmp/misc_probe -lcuda -ldl && /tmp/misc_probe all 8
#include <cuda.h>
#include <cudaProfiler.h>
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

// Prints "<expr> = <CUresult>" and returns the result.
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

// Writes a pattern of `n` bytes (seeded) at `va`; returns the copy's result.
CUresult WritePattern(CUdeviceptr va, size_t n, unsigned char seed) {
  std::vector<unsigned char> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(seed + i * 7);
  return cuMemcpyHtoD(va, in.data(), n);
}
// Reads `n` bytes at `va`; prints whether they are the seeded pattern.
void CheckPattern(const char* label, CUdeviceptr va, size_t n, unsigned char seed) {
  std::vector<unsigned char> out(n, 0);
  CUresult r = cuMemcpyDtoH(out.data(), va, n);
  bool ok = true;
  for (size_t i = 0; i < n; ++i) ok = ok && out[i] == static_cast<unsigned char>(seed + i * 7);
  Say("%s: read %s, pattern matches = %s", label, Name(r), YesNo(ok));
}

// ------------------------------------------------------------------------------------------
// IPC in one process.

// ipc:mem: handles of a cuMemAlloc allocation, valid and invalid, and opening them in the same
// process.
int CaseIpcMem() {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr buf = 0;
  R(cuMemAlloc(&buf, 1 << 20));
  CUipcMemHandle h1, h2;
  memset(&h1, 0, sizeof h1);
  memset(&h2, 0x77, sizeof h2);
  R(cuIpcGetMemHandle(&h1, buf));
  Say("handle nonzero = %s", YesNo(!AllBytes(&h1, sizeof h1, 0)));
  R(cuIpcGetMemHandle(&h2, buf));
  Say("second handle equals first = %s", YesNo(memcmp(&h1, &h2, sizeof h1) == 0));
  CUipcMemHandle h3;
  memset(&h3, 0x77, sizeof h3);
  R(cuIpcGetMemHandle(&h3, buf + 4096));
  Say("interior handle untouched = %s, equals base handle = %s",
      YesNo(AllBytes(&h3, sizeof h3, 0x77)), YesNo(memcmp(&h1, &h3, sizeof h1) == 0));
  R(cuIpcGetMemHandle(nullptr, buf));
  memset(&h3, 0x77, sizeof h3);
  R(cuIpcGetMemHandle(&h3, 0));
  Say("handle after failure untouched = %s", YesNo(AllBytes(&h3, sizeof h3, 0x77)));
  R(cuIpcGetMemHandle(&h3, static_cast<CUdeviceptr>(0x5a5a5a5a0000ull)));
  int host = 0;
  R(cuIpcGetMemHandle(&h3, reinterpret_cast<CUdeviceptr>(&host)));
  // A second allocation has a different handle.
  CUdeviceptr buf2 = 0;
  R(cuMemAlloc(&buf2, 4096));
  CUipcMemHandle h4;
  memset(&h4, 0, sizeof h4);
  R(cuIpcGetMemHandle(&h4, buf2));
  Say("second allocation's handle differs = %s", YesNo(memcmp(&h1, &h4, sizeof h1) != 0));
  // Opening in the exporting process.
  CUdeviceptr opened = 77;
  R(cuIpcOpenMemHandle(&opened, h1, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  Say("opened pointer = %s", opened == 77 ? "untouched" : opened == 0 ? "0" : opened == buf ? "the original" : "other");
  opened = 77;
  R(cuIpcOpenMemHandle(&opened, h1, 0));
  Say("opened pointer = %s", opened == 77 ? "untouched" : opened == 0 ? "0" : opened == buf ? "the original" : "other");
  R(cuIpcOpenMemHandle(&opened, h1, 2));
  R(cuIpcOpenMemHandle(&opened, h1, 0xffffffffu));
  R(cuIpcOpenMemHandle(nullptr, h1, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  CUipcMemHandle zero;
  memset(&zero, 0, sizeof zero);
  opened = 77;
  R(cuIpcOpenMemHandle(&opened, zero, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  Say("opened pointer = %s", opened == 77 ? "untouched" : opened == 0 ? "0" : "other");
  CUipcMemHandle junk;
  memset(&junk, 0x5a, sizeof junk);
  R(cuIpcOpenMemHandle(&opened, junk, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  // Opening in another context of the exporting process.
  CUcontext other = nullptr;
  CUctxCreateParams cp;
  memset(&cp, 0, sizeof cp);
  if (R(cuCtxCreate(&other, &cp, 0, b.dev)) == CUDA_SUCCESS) {
    opened = 77;
    R(cuIpcOpenMemHandle(&opened, h1, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    Say("opened pointer = %s", opened == 77 ? "untouched" : opened == 0 ? "0" : opened == buf ? "the original" : "other");
    CUipcMemHandle h5;
    memset(&h5, 0x77, sizeof h5);
    R(cuIpcGetMemHandle(&h5, buf));
    Say("handle from the other context equals the first = %s", YesNo(memcmp(&h1, &h5, sizeof h1) == 0));
    R(cuCtxDestroy(other));
    cuCtxSetCurrent(b.ctx);
  }
  // Closing what was not opened.
  R(cuIpcCloseMemHandle(buf));
  R(cuIpcCloseMemHandle(0));
  R(cuIpcCloseMemHandle(static_cast<CUdeviceptr>(0x5a5a5a5a0000ull)));
  R(cuIpcCloseMemHandle(buf + 4096));
  // The allocation still works after all that.
  R(WritePattern(buf, 4096, 3));
  CheckPattern("buffer after the failed opens", buf, 4096, 3);
  // Handle of a freed allocation.
  R(cuMemFree(buf2));
  memset(&h4, 0x77, sizeof h4);
  R(cuIpcGetMemHandle(&h4, buf2));
  Say("handle after failure untouched = %s", YesNo(AllBytes(&h4, sizeof h4, 0x77)));
  // The handle of the freed allocation, opened.
  R(cuIpcGetMemHandle(&h3, buf));
  R(cuMemFree(buf));
  R(cuIpcOpenMemHandle(&opened, h3, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  // No current context.
  R(cuMemAlloc(&buf, 4096));
  R(cuIpcGetMemHandle(&h1, buf));
  cuCtxSetCurrent(nullptr);
  R(cuIpcGetMemHandle(&h2, buf));
  R(cuIpcOpenMemHandle(&opened, h1, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  R(cuIpcCloseMemHandle(buf));
  cuCtxSetCurrent(b.ctx);
  R(cuMemFree(buf));
  return 0;
}

// ipc:kinds: which allocations export a handle.
int CaseIpcKinds() {
  Base b;
  if (!b.Init()) return 1;
  CUipcMemHandle h;
  auto get = [&](const char* what, CUdeviceptr p) {
    memset(&h, 0x77, sizeof h);
    CUresult r = cuIpcGetMemHandle(&h, p);
    Say("cuIpcGetMemHandle(%s) = %s, handle untouched = %s", what, Name(r),
        YesNo(AllBytes(&h, sizeof h, 0x77)));
  };
  CUdeviceptr a = 0;
  if (R(cuMemAlloc(&a, 1 << 20)) == CUDA_SUCCESS) get("cuMemAlloc", a);
  CUdeviceptr small = 0;
  if (R(cuMemAlloc(&small, 1)) == CUDA_SUCCESS) get("cuMemAlloc 1 byte", small);
  CUdeviceptr big = 0;
  if (R(cuMemAlloc(&big, 64ull << 20)) == CUDA_SUCCESS) get("cuMemAlloc 64 MiB", big);
  CUdeviceptr pitch = 0;
  size_t pitch_bytes = 0;
  if (R(cuMemAllocPitch(&pitch, &pitch_bytes, 1000, 10, 4)) == CUDA_SUCCESS)
    get("cuMemAllocPitch", pitch);
  CUdeviceptr managed = 0;
  if (R(cuMemAllocManaged(&managed, 1 << 20, CU_MEM_ATTACH_GLOBAL)) == CUDA_SUCCESS)
    get("cuMemAllocManaged", managed);
  void* host = nullptr;
  if (R(cuMemAllocHost(&host, 1 << 20)) == CUDA_SUCCESS) {
    get("cuMemAllocHost", reinterpret_cast<CUdeviceptr>(host));
    CUdeviceptr dp = 0;
    if (cuMemHostGetDevicePointer(&dp, host, 0) == CUDA_SUCCESS) get("cuMemAllocHost device pointer", dp);
  }
  void* mapped = nullptr;
  if (R(cuMemHostAlloc(&mapped, 1 << 20, CU_MEMHOSTALLOC_DEVICEMAP)) == CUDA_SUCCESS)
    get("cuMemHostAlloc DEVICEMAP", reinterpret_cast<CUdeviceptr>(mapped));
  CUdeviceptr async = 0;
  if (R(cuMemAllocAsync(&async, 1 << 20, b.s)) == CUDA_SUCCESS) {
    cuStreamSynchronize(b.s);
    get("cuMemAllocAsync (default pool)", async);
  }
  CUmemPoolProps pp;
  memset(&pp, 0, sizeof pp);
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  pp.location.id = 0;
  pp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemoryPool pool = nullptr;
  if (R(cuMemPoolCreate(&pool, &pp)) == CUDA_SUCCESS) {
    CUdeviceptr pa = 0;
    if (R(cuMemAllocFromPoolAsync(&pa, 1 << 20, pool, b.s)) == CUDA_SUCCESS) {
      cuStreamSynchronize(b.s);
      get("cuMemAllocFromPoolAsync (POSIX_FD pool)", pa);
      cuMemFreeAsync(pa, b.s);
    }
  }
  CUmemAllocationProp p;
  memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  size_t g = 0;
  cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  CUmemGenericAllocationHandle vh = 0;
  CUdeviceptr va = 0;
  if (g && R(cuMemCreate(&vh, g, &p, 0)) == CUDA_SUCCESS &&
      R(cuMemAddressReserve(&va, g, 0, 0, 0)) == CUDA_SUCCESS &&
      R(cuMemMap(va, g, 0, vh, 0)) == CUDA_SUCCESS) {
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location = p.location;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    cuMemSetAccess(va, g, &d, 1);
    get("cuMemCreate+cuMemMap", va);
  }
  // A created (non-primary) context's allocation.
  CUcontext c2 = nullptr;
  CUctxCreateParams cp;
  memset(&cp, 0, sizeof cp);
  if (R(cuCtxCreate(&c2, &cp, 0, b.dev)) == CUDA_SUCCESS) {
    CUdeviceptr x = 0;
    if (cuMemAlloc(&x, 4096) == CUDA_SUCCESS) {
      get("cuMemAlloc in a created context", x);
      cuCtxSetCurrent(b.ctx);
      get("created context's cuMemAlloc, primary current", x);
      cuCtxSetCurrent(c2);
      cuMemFree(x);
    }
    cuCtxDestroy(c2);
    cuCtxSetCurrent(b.ctx);
  }
  return 0;
}

// ipc:event: event handles by event flags, valid and invalid, and opening in the same process.
int CaseIpcEvent() {
  Base b;
  if (!b.Init()) return 1;
  struct {
    const char* name;
    unsigned flags;
  } kinds[] = {{"DEFAULT", CU_EVENT_DEFAULT},
               {"DISABLE_TIMING", CU_EVENT_DISABLE_TIMING},
               {"INTERPROCESS", CU_EVENT_INTERPROCESS},
               {"INTERPROCESS|DISABLE_TIMING", CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING},
               {"INTERPROCESS|DISABLE_TIMING|BLOCKING_SYNC",
                CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC}};
  CUevent ipc = nullptr;
  CUipcEventHandle eh;
  for (auto& k : kinds) {
    CUevent e = nullptr;
    CUresult r = cuEventCreate(&e, k.flags);
    Say("cuEventCreate(%s) = %s", k.name, Name(r));
    if (r != CUDA_SUCCESS) continue;
    CUipcEventHandle h;
    memset(&h, 0x77, sizeof h);
    r = cuIpcGetEventHandle(&h, e);
    Say("cuIpcGetEventHandle(%s) = %s, handle untouched = %s, nonzero = %s", k.name, Name(r),
        YesNo(AllBytes(&h, sizeof h, 0x77)), YesNo(!AllBytes(&h, sizeof h, 0)));
    if (r == CUDA_SUCCESS && ipc == nullptr) {
      ipc = e;
      eh = h;
    } else {
      cuEventDestroy(e);
    }
  }
  if (ipc == nullptr) return 0;
  CUipcEventHandle h2;
  memset(&h2, 0, sizeof h2);
  R(cuIpcGetEventHandle(&h2, ipc));
  Say("second handle equals first = %s", YesNo(memcmp(&eh, &h2, sizeof eh) == 0));
  R(cuIpcGetEventHandle(nullptr, ipc));
  R(cuIpcGetEventHandle(&h2, nullptr));
  // The IPC event works locally.
  R(cuEventRecord(ipc, b.s));
  R(cuStreamWaitEvent(b.s, ipc, 0));
  R(cuEventSynchronize(ipc));
  R(cuEventQuery(ipc));
  float ms = 0;
  R(cuEventElapsedTime(&ms, ipc, ipc));
  // Opening in the exporting process.
  CUevent opened = Garbage<CUevent>();
  R(cuIpcOpenEventHandle(&opened, eh));
  Say("opened event = %s", opened == Garbage<CUevent>() ? "untouched" : opened == nullptr ? "null" : opened == ipc ? "the original" : "other");
  if (opened != Garbage<CUevent>() && opened != nullptr && opened != ipc) {
    R(cuEventQuery(opened));
    R(cuEventRecord(opened, b.s));
    R(cuStreamSynchronize(b.s));
    R(cuEventDestroy(opened));
  }
  R(cuIpcOpenEventHandle(nullptr, eh));
  CUipcEventHandle zero;
  memset(&zero, 0, sizeof zero);
  opened = Garbage<CUevent>();
  R(cuIpcOpenEventHandle(&opened, zero));
  Say("opened event = %s", opened == Garbage<CUevent>() ? "untouched" : opened == nullptr ? "null" : "other");
  CUipcEventHandle junk;
  memset(&junk, 0x5a, sizeof junk);
  R(cuIpcOpenEventHandle(&opened, junk));
  // Destroyed event.
  R(cuEventDestroy(ipc));
  memset(&h2, 0x77, sizeof h2);
  R(cuIpcGetEventHandle(&h2, ipc));
  Say("handle after failure untouched = %s", YesNo(AllBytes(&h2, sizeof h2, 0x77)));
  // The handle of the destroyed event, opened in the exporting process.
  opened = Garbage<CUevent>();
  R(cuIpcOpenEventHandle(&opened, eh));
  // No current context.
  CUevent e2 = nullptr;
  R(cuEventCreate(&e2, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  cuCtxSetCurrent(nullptr);
  R(cuIpcGetEventHandle(&h2, e2));
  R(cuIpcOpenEventHandle(&opened, h2));
  cuCtxSetCurrent(b.ctx);
  R(cuEventDestroy(e2));
  return 0;
}

// ------------------------------------------------------------------------------------------
// IPC across processes: the parent exports, a child (this program again, fork+exec'd with the
// handles on its stdin) opens. The child's lines are printed under the parent's case name.

struct Handles {
  CUipcMemHandle mem;
  CUipcEventHandle event;
};

// Runs "ipcchild:<mode>" with `h` on its stdin; waits for it and prints how it ended.
void RunChild(const std::string& mode, const Handles& h) {
  int fds[2];
  if (pipe(fds) != 0) return;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[0], 0);
    close(fds[0]);
    close(fds[1]);
    std::string c = "ipcchild:" + mode;
    execl("/proc/self/exe", "misc_probe", c.c_str(), g_case, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[0]);
  ssize_t w = write(fds[1], &h, sizeof h);
  (void)w;
  close(fds[1]);
  int st = 0;
  double start = NowUs();
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (NowUs() - start > 8e6) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      Say("child: HANG");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFSIGNALED(st))
    Say("child: ended by SIGNAL %d", WTERMSIG(st));
  else
    Say("child: exit %d", WEXITSTATUS(st));
}

#define CR(expr) Say("child: %s = %s", #expr, Name(expr))

// The child side.
int CaseIpcChildSide(const std::string& mode) {
  Handles h;
  size_t got = 0;
  while (got < sizeof h) {
    ssize_t n = read(0, reinterpret_cast<char*>(&h) + got, sizeof h - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got != sizeof h) {
    Say("child: handles read = no");
    return 1;
  }
  CUdeviceptr p = 0;
  if (mode == "noinit") {
    CR(cuIpcOpenMemHandle(&p, h.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CUevent e = nullptr;
    CR(cuIpcOpenEventHandle(&e, h.event));
    return 0;
  }
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  if (mode == "noctx") {
    CR(cuIpcOpenMemHandle(&p, h.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CUevent e = nullptr;
    CR(cuIpcOpenEventHandle(&e, h.event));
    return 0;
  }
  cuCtxSetCurrent(ctx);
  if (mode == "freed") {
    p = 77;
    CR(cuIpcOpenMemHandle(&p, h.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    Say("child: opened pointer = %s", p == 77 ? "untouched" : p == 0 ? "0" : "set");
    if (p != 77 && p != 0) CR(cuIpcCloseMemHandle(p));
    CUevent e = Garbage<CUevent>();
    CR(cuIpcOpenEventHandle(&e, h.event));
    Say("child: opened event = %s", e == Garbage<CUevent>() ? "untouched" : e == nullptr ? "null" : "set");
    if (e != Garbage<CUevent>() && e != nullptr) CR(cuEventDestroy(e));
    return 0;
  }
  // basic
  CR(cuIpcOpenMemHandle(&p, h.mem, 2));
  p = 77;
  CR(cuIpcOpenMemHandle(&p, h.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  Say("child: opened pointer = %s", p == 77 ? "untouched" : p == 0 ? "0" : "set");
  if (p == 77 || p == 0) return 0;
  CUdeviceptr base = 0;
  size_t size = 0;
  CR(cuMemGetAddressRange(&base, &size, p));
  Say("child: address range base is the pointer = %s, size = %zu", YesNo(base == p), size);
  unsigned int mt = 0;
  CR(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
  Say("child: memory type = %s", mt == CU_MEMORYTYPE_DEVICE ? "DEVICE" : mt == CU_MEMORYTYPE_HOST ? "HOST" : "other");
  std::vector<unsigned char> out(1 << 20);
  CUresult r = cuMemcpyDtoH(out.data(), p, out.size());
  bool ok = true;
  for (size_t i = 0; i < out.size(); ++i) ok = ok && out[i] == static_cast<unsigned char>(11 + i * 7);
  Say("child: read %s, parent's pattern = %s", Name(r), YesNo(ok));
  CR(WritePattern(p, 4096, 22));
  CR(cuMemsetD8(p + 4096, 0xcd, 4096));
  CR(cuCtxSynchronize());
  CUipcMemHandle again;
  memset(&again, 0x77, sizeof again);
  CR(cuIpcGetMemHandle(&again, p));
  Say("child: re-exported handle equals the parent's = %s", YesNo(memcmp(&again, &h.mem, sizeof again) == 0));
  CUdeviceptr p2 = 0;
  CR(cuIpcOpenMemHandle(&p2, h.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  Say("child: second open same pointer = %s", YesNo(p2 == p));
  CR(cuIpcCloseMemHandle(p + 4096));
  CR(cuMemFree(p));
  CR(cuIpcCloseMemHandle(p));
  CR(cuIpcCloseMemHandle(p));
  CR(cuIpcCloseMemHandle(p));
  unsigned char byte = 0;
  CR(cuMemcpyDtoH(&byte, p, 1));
  CUdeviceptr p3 = 0;
  CR(cuIpcOpenMemHandle(&p3, h.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  if (p3) CR(cuIpcCloseMemHandle(p3));
  CUipcMemHandle junk;
  memset(&junk, 0x5a, sizeof junk);
  CR(cuIpcOpenMemHandle(&p3, junk, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  // The event.
  CUevent e = Garbage<CUevent>();
  CR(cuIpcOpenEventHandle(&e, h.event));
  Say("child: opened event = %s", e == Garbage<CUevent>() ? "untouched" : e == nullptr ? "null" : "set");
  if (e != Garbage<CUevent>() && e != nullptr) {
    CUstream s = nullptr;
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    CR(cuEventQuery(e));
    CR(cuEventSynchronize(e));
    CR(cuStreamWaitEvent(s, e, 0));
    CR(cuEventRecord(e, s));
    CR(cuStreamSynchronize(s));
    float ms = 0;
    CR(cuEventElapsedTime(&ms, e, e));
    CUipcEventHandle eh2;
    memset(&eh2, 0x77, sizeof eh2);
    CR(cuIpcGetEventHandle(&eh2, e));
    Say("child: re-exported event handle equals the parent's = %s", YesNo(memcmp(&eh2, &h.event, sizeof eh2) == 0));
    CUevent e2 = nullptr;
    CR(cuIpcOpenEventHandle(&e2, h.event));
    Say("child: second open same event = %s", YesNo(e2 == e));
    if (e2 && e2 != e) CR(cuEventDestroy(e2));
    CR(cuEventDestroy(e));
    cuStreamDestroy(s);
  }
  return 0;
}

// ipc:child:<mode>: the parent's side.
int CaseIpcChild(const std::string& mode) {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr buf = 0;
  R(cuMemAlloc(&buf, 1 << 20));
  std::vector<unsigned char> in(1 << 20);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(11 + i * 7);
  R(cuMemcpyHtoD(buf, in.data(), in.size()));
  Handles h;
  R(cuIpcGetMemHandle(&h.mem, buf));
  CUevent e = nullptr;
  R(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  R(cuIpcGetEventHandle(&h.event, e));
  R(cuEventRecord(e, b.s));
  R(cuStreamSynchronize(b.s));
  if (mode == "freed") {
    R(cuMemFree(buf));
    R(cuEventDestroy(e));
  }
  RunChild(mode, h);
  if (mode == "basic") {
    CheckPattern("parent: child's write", buf, 4096, 22);
    std::vector<unsigned char> out(4096);
    cuMemcpyDtoH(out.data(), buf + 4096, 4096);
    Say("parent: child's memset seen = %s", YesNo(AllBytes(out.data(), out.size(), 0xcd)));
    CheckPattern("parent: rest untouched", buf + (1 << 19), 4096, static_cast<unsigned char>(11 + (1 << 19) * 7));
    R(cuEventQuery(e));
    R(cuEventDestroy(e));
    R(cuMemFree(buf));
  } else if (mode != "freed") {
    R(cuEventDestroy(e));
    R(cuMemFree(buf));
  }
  return 0;
}

// ------------------------------------------------------------------------------------------
// Profiler.

typedef CUresult(CUDAAPI* ProfilerInitializeFn)(const char*, const char*, CUoutput_mode);
typedef CUresult(CUDAAPI* ProfilerFn)();

// cuProfilerStart/Stop are declared by cudaProfiler.h, not cuda.h: resolved at run time so that
// the probe loads on a libcuda that does not export them (CUDA_ERROR_NOT_FOUND then).
CUresult CallProfiler(const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name);
  if (f == nullptr) return CUDA_ERROR_NOT_FOUND;
  return reinterpret_cast<ProfilerFn>(f)();
}
CUresult ProfilerStart() { return CallProfiler("cuProfilerStart"); }
CUresult ProfilerStop() { return CallProfiler("cuProfilerStop"); }

// profiler:<noinit|noctx|ctx|destroyed>.
int CaseProfiler(const std::string& mode) {
  void* sym = dlsym(RTLD_DEFAULT, "cuProfilerInitialize");
  Say("exported: cuProfilerInitialize = %s, cuProfilerStart = %s, cuProfilerStop = %s", YesNo(sym != nullptr),
      YesNo(dlsym(RTLD_DEFAULT, "cuProfilerStart") != nullptr),
      YesNo(dlsym(RTLD_DEFAULT, "cuProfilerStop") != nullptr));
  if (mode == "noinit") {
    R(ProfilerStart());
    R(ProfilerStop());
    return 0;
  }
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  void* gp = nullptr;
  CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = cuGetProcAddress("cuProfilerStart", &gp, 13000, 0, &q);
  Say("cuGetProcAddress(cuProfilerStart) = %s, found = %s", Name(r), YesNo(gp != nullptr));
  gp = nullptr;
  r = cuGetProcAddress("cuProfilerInitialize", &gp, 13000, 0, &q);
  Say("cuGetProcAddress(cuProfilerInitialize) = %s, found = %s", Name(r), YesNo(gp != nullptr));
  if (mode == "noctx") {
    R(ProfilerStart());
    R(ProfilerStop());
    R(ProfilerStop());
    return 0;
  }
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  if (mode == "ctx") {
    R(ProfilerStop());
    R(ProfilerStart());
    R(ProfilerStart());
    R(ProfilerStop());
    R(ProfilerStop());
    R(ProfilerStart());
    CUdeviceptr p = 0;
    R(cuMemAlloc(&p, 4096));
    R(cuMemsetD8(p, 1, 4096));
    R(ProfilerStop());
    R(cuMemFree(p));
    if (sym) {
      auto fn = reinterpret_cast<ProfilerInitializeFn>(sym);
      R(fn(nullptr, nullptr, CU_OUT_KEY_VALUE_PAIR));
      R(fn("/nonexistent/config", "/tmp/misc_probe_profiler_out", CU_OUT_CSV));
    }
    return 0;
  }
  // destroyed: a created context, destroyed, left current.
  CUcontext c2 = nullptr;
  CUctxCreateParams cp;
  memset(&cp, 0, sizeof cp);
  R(cuCtxCreate(&c2, &cp, 0, dev));
  R(ProfilerStart());
  R(cuCtxDestroy(c2));
  CUcontext cur = nullptr;
  cuCtxGetCurrent(&cur);
  Say("current after destroy = %s", cur == nullptr ? "null" : "set");
  R(ProfilerStop());
  return 0;
}

// ------------------------------------------------------------------------------------------
// Coredump attributes.

typedef CUresult(CUDAAPI* CoredumpFn)(CUcoredumpSettings, void*, size_t*);

const char* AttrName(int a) {
  switch (a) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION: return "ENABLE_ON_EXCEPTION";
    case CU_COREDUMP_TRIGGER_HOST: return "TRIGGER_HOST";
    case CU_COREDUMP_LIGHTWEIGHT: return "LIGHTWEIGHT";
    case CU_COREDUMP_ENABLE_USER_TRIGGER: return "ENABLE_USER_TRIGGER";
    case CU_COREDUMP_FILE: return "FILE";
    case CU_COREDUMP_PIPE: return "PIPE";
    case CU_COREDUMP_GENERATION_FLAGS: return "GENERATION_FLAGS";
    case CU_COREDUMP_MAX: return "MAX";
    default: {
      static char t[32];
      snprintf(t, sizeof t, "attr(%d)", a);
      return t;
    }
  }
}

// A string value with this machine's host name and pid replaced by <host> and <pid>.
std::string Generic(const char* s) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::string v = s, pid = std::to_string(getpid());
  for (size_t at; host[0] && (at = v.find(host)) != std::string::npos;) v.replace(at, strlen(host), "<host>");
  for (size_t at; (at = v.find(pid)) != std::string::npos;) v.replace(at, pid.size(), "<pid>");
  return v;
}

// Prints the value in `buf` of `size` bytes (an attribute's value as the driver wrote it).
std::string ValueText(int attr, const unsigned char* buf, size_t size) {
  char t[1200];
  if (attr == CU_COREDUMP_FILE || attr == CU_COREDUMP_PIPE) {
    size_t len = strnlen(reinterpret_cast<const char*>(buf), size);
    std::string g = len < size ? Generic(reinterpret_cast<const char*>(buf)) : std::string("(unterminated)");
    if (g.size() > 64) g = g.substr(0, 16) + "...";
    snprintf(t, sizeof t, "\"%s\" (length %zu)", g.c_str(), len);
    return t;
  }
  if (size == 1) {
    snprintf(t, sizeof t, "%u", buf[0]);
  } else if (size == 4) {
    unsigned v;
    memcpy(&v, buf, 4);
    snprintf(t, sizeof t, "%u", v);
  } else if (size == 8) {
    unsigned long long v;
    memcpy(&v, buf, 8);
    snprintf(t, sizeof t, "%llu", v);
  } else {
    snprintf(t, sizeof t, "(%zu bytes, first %u)", size, size ? buf[0] : 0u);
  }
  return t;
}

// Reads attribute `a` through `get`; prints result, size and value.
void ShowAttr(const char* fn, CoredumpFn get, int a) {
  size_t size = 0;
  CUresult r = get(static_cast<CUcoredumpSettings>(a), nullptr, &size);
  Say("%s(%s, null, &size) = %s, size = %zu", fn, AttrName(a), Name(r), size);
  if (r != CUDA_SUCCESS || size == 0 || size > 4096) return;
  std::vector<unsigned char> buf(size + 16, 0x77);
  size_t s2 = size;
  r = get(static_cast<CUcoredumpSettings>(a), buf.data(), &s2);
  Say("%s(%s) = %s, size after = %zu, value = %s, bytes past size untouched = %s", fn,
      AttrName(a), Name(r), s2, r == CUDA_SUCCESS ? ValueText(a, buf.data(), size).c_str() : "-",
      YesNo(AllBytes(buf.data() + size, 16, 0x77)));
}

void ProbeAttrSizes(const char* fn, CoredumpFn get, int a) {
  size_t size = 0;
  if (get(static_cast<CUcoredumpSettings>(a), nullptr, &size) != CUDA_SUCCESS || size == 0) return;
  std::vector<unsigned char> buf(size + 64, 0x77);
  size_t small = size - 1;
  CUresult r = get(static_cast<CUcoredumpSettings>(a), buf.data(), &small);
  Say("%s(%s, size %s) = %s, size after = %s, buffer untouched = %s", fn, AttrName(a), "one short",
      Name(r), small == size - 1 ? "unchanged" : small == size ? "the size" : std::to_string(small).c_str(),
      YesNo(AllBytes(buf.data(), buf.size(), 0x77)));
  size_t big = size + 8;
  r = get(static_cast<CUcoredumpSettings>(a), buf.data(), &big);
  Say("%s(%s, size %s) = %s, size after = %s", fn, AttrName(a), "8 more", Name(r),
      big == size + 8 ? "unchanged" : big == size ? "the size" : std::to_string(big).c_str());
  size_t zero = 0;
  r = get(static_cast<CUcoredumpSettings>(a), buf.data(), &zero);
  Say("%s(%s, size 0) = %s, size after = %zu", fn, AttrName(a), Name(r), zero);
  r = get(static_cast<CUcoredumpSettings>(a), buf.data(), nullptr);
  Say("%s(%s, size null) = %s", fn, AttrName(a), Name(r));
}

// Sets attribute `a` through `set` to `value` (size `n`) and prints the result.
CUresult SetAttr(const char* fn, CoredumpFn set, int a, const void* value, size_t n, const char* what) {
  size_t s = n;
  CUresult r = set(static_cast<CUcoredumpSettings>(a), const_cast<void*>(value), &s);
  Say("%s(%s, %s, size %zu) = %s, size after = %zu", fn, AttrName(a), what, n, Name(r), s);
  return r;
}

// coredump:<global|ctx|noctx|mixed>.
int CaseCoredump(const std::string& mode) {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  bool global = mode == "global";
  const char* gname = global ? "cuCoredumpGetAttributeGlobal" : "cuCoredumpGetAttribute";
  const char* sname = global ? "cuCoredumpSetAttributeGlobal" : "cuCoredumpSetAttribute";
  CoredumpFn get = global ? cuCoredumpGetAttributeGlobal : cuCoredumpGetAttribute;
  CoredumpFn set = global ? cuCoredumpSetAttributeGlobal : cuCoredumpSetAttribute;
  if (mode == "noctx") {
    for (int a = 1; a < CU_COREDUMP_MAX; ++a) ShowAttr(gname, get, a);
    unsigned char t = 1;
    SetAttr(sname, set, CU_COREDUMP_ENABLE_ON_EXCEPTION, &t, 1, "true");
    for (int a = 1; a < CU_COREDUMP_MAX; ++a) ShowAttr("cuCoredumpGetAttributeGlobal", cuCoredumpGetAttributeGlobal, a);
    return 0;
  }
  cuCtxSetCurrent(ctx);
  if (mode == "mixed") {
    // Global set before a context exists vs after; context set seen globally?
    unsigned char t = 1;
    SetAttr("cuCoredumpSetAttributeGlobal", cuCoredumpSetAttributeGlobal, CU_COREDUMP_LIGHTWEIGHT, &t, 1, "true");
    ShowAttr("cuCoredumpGetAttribute", cuCoredumpGetAttribute, CU_COREDUMP_LIGHTWEIGHT);
    ShowAttr("cuCoredumpGetAttribute", cuCoredumpGetAttribute, CU_COREDUMP_GENERATION_FLAGS);
    ShowAttr("cuCoredumpGetAttributeGlobal", cuCoredumpGetAttributeGlobal, CU_COREDUMP_GENERATION_FLAGS);
    SetAttr("cuCoredumpSetAttribute", cuCoredumpSetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION, &t, 1, "true");
    ShowAttr("cuCoredumpGetAttribute", cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION);
    ShowAttr("cuCoredumpGetAttributeGlobal", cuCoredumpGetAttributeGlobal, CU_COREDUMP_ENABLE_ON_EXCEPTION);
    // A context created after a global set.
    SetAttr("cuCoredumpSetAttributeGlobal", cuCoredumpSetAttributeGlobal, CU_COREDUMP_TRIGGER_HOST, "\0", 1, "false");
    CUcontext c2 = nullptr;
    CUctxCreateParams cp;
    memset(&cp, 0, sizeof cp);
    R(cuCtxCreate(&c2, &cp, 0, dev));
    ShowAttr("cuCoredumpGetAttribute (created context)", cuCoredumpGetAttribute, CU_COREDUMP_TRIGGER_HOST);
    ShowAttr("cuCoredumpGetAttribute (created context)", cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION);
    ShowAttr("cuCoredumpGetAttribute (created context)", cuCoredumpGetAttribute, CU_COREDUMP_LIGHTWEIGHT);
    R(cuCtxDestroy(c2));
    // A context created with CU_CTX_COREDUMP_ENABLE.
    R(cuCtxCreate(&c2, &cp, CU_CTX_COREDUMP_ENABLE, dev));
    ShowAttr("cuCoredumpGetAttribute (CU_CTX_COREDUMP_ENABLE)", cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION);
    R(cuCtxDestroy(c2));
    R(cuCtxCreate(&c2, &cp, CU_CTX_USER_COREDUMP_ENABLE, dev));
    ShowAttr("cuCoredumpGetAttribute (CU_CTX_USER_COREDUMP_ENABLE)", cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_USER_TRIGGER);
    ShowAttr("cuCoredumpGetAttribute (CU_CTX_USER_COREDUMP_ENABLE)", cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION);
    R(cuCtxDestroy(c2));
    // Destroyed context current.
    R(cuCtxCreate(&c2, &cp, 0, dev));
    R(cuCtxDestroy(c2));
    size_t sz = 0;
    R(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, &sz));
    sz = 1;
    R(cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &t, &sz));
    return 0;
  }
  // global / ctx: every attribute's default, sizes, invalid attributes, then set and read back.
  for (int a = 0; a <= CU_COREDUMP_MAX + 1; ++a) ShowAttr(gname, get, a);
  ShowAttr(gname, get, -1);
  ShowAttr(gname, get, 1000);
  for (int a = 1; a < CU_COREDUMP_MAX; ++a) ProbeAttrSizes(gname, get, a);
  size_t sz = 0;
  Say("%s(ENABLE_ON_EXCEPTION, null, null) = %s", gname, Name(get(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, nullptr)));
  // Size queries through the setter.
  for (int a = 0; a <= CU_COREDUMP_MAX; ++a) {
    sz = 0;
    CUresult r = set(static_cast<CUcoredumpSettings>(a), nullptr, &sz);
    Say("%s(%s, null, &size) = %s, size = %zu", sname, AttrName(a), Name(r), sz);
  }
  Say("%s(ENABLE_ON_EXCEPTION, null, null) = %s", sname, Name(set(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, nullptr)));
  unsigned char t = 1, f = 0;
  Say("%s(ENABLE_ON_EXCEPTION, &true, null) = %s", sname, Name(set(CU_COREDUMP_ENABLE_ON_EXCEPTION, &t, nullptr)));
  // Strings first (the pipe's name before the user trigger).
  std::string file = "/tmp/misc_probe_core";
  std::string pipe_name = "/tmp/misc_probe_corepipe." + std::to_string(getpid());
  SetAttr(sname, set, CU_COREDUMP_FILE, file.c_str(), file.size() + 1, "\"/tmp/misc_probe_core\"");
  ShowAttr(gname, get, CU_COREDUMP_FILE);
  SetAttr(sname, set, CU_COREDUMP_FILE, "/tmp/x", 3, "\"/tmp/x\" size 3 (no terminator)");
  ShowAttr(gname, get, CU_COREDUMP_FILE);
  SetAttr(sname, set, CU_COREDUMP_FILE, file.c_str(), file.size() + 1, "\"/tmp/misc_probe_core\"");
  std::string longs(1023, 'a'), longer(1024, 'b'), huge(5000, 'c');
  SetAttr(sname, set, CU_COREDUMP_FILE, longs.c_str(), longs.size() + 1, "1023 characters");
  ShowAttr(gname, get, CU_COREDUMP_FILE);
  SetAttr(sname, set, CU_COREDUMP_FILE, longer.c_str(), longer.size() + 1, "1024 characters");
  ShowAttr(gname, get, CU_COREDUMP_FILE);
  SetAttr(sname, set, CU_COREDUMP_FILE, huge.c_str(), huge.size() + 1, "5000 characters");
  SetAttr(sname, set, CU_COREDUMP_FILE, "", 1, "\"\"");
  ShowAttr(gname, get, CU_COREDUMP_FILE);
  SetAttr(sname, set, CU_COREDUMP_PIPE, pipe_name.c_str(), pipe_name.size() + 1, "\"/tmp/misc_probe_corepipe.<pid>\"");
  ShowAttr(gname, get, CU_COREDUMP_PIPE);
  for (int a : {CU_COREDUMP_ENABLE_ON_EXCEPTION, CU_COREDUMP_TRIGGER_HOST, CU_COREDUMP_LIGHTWEIGHT,
                CU_COREDUMP_ENABLE_USER_TRIGGER}) {
    SetAttr(sname, set, a, &t, 1, "true");
    ShowAttr(gname, get, a);
    unsigned char two = 2;
    SetAttr(sname, set, a, &two, 1, "2");
    ShowAttr(gname, get, a);
    int four = 1;
    SetAttr(sname, set, a, &four, 4, "int 1 (size 4)");
    SetAttr(sname, set, a, &f, 0, "false (size 0)");
    SetAttr(sname, set, a, &f, 1, "false");
    ShowAttr(gname, get, a);
  }
  ShowAttr(gname, get, CU_COREDUMP_GENERATION_FLAGS);
  SetAttr(sname, set, CU_COREDUMP_LIGHTWEIGHT, &t, 1, "true");
  ShowAttr(gname, get, CU_COREDUMP_GENERATION_FLAGS);
  SetAttr(sname, set, CU_COREDUMP_LIGHTWEIGHT, &f, 1, "false");
  ShowAttr(gname, get, CU_COREDUMP_GENERATION_FLAGS);
  SetAttr(sname, set, CU_COREDUMP_TRIGGER_HOST, &f, 1, "false");
  ShowAttr(gname, get, CU_COREDUMP_GENERATION_FLAGS);
  SetAttr(sname, set, CU_COREDUMP_TRIGGER_HOST, &t, 1, "true");
  for (unsigned long long v : {0ull, 1ull, 2ull, 0x10ull, 0x2full, 0x3full, 0x40ull, 0xffffffffull}) {
    char w[64];
    snprintf(w, sizeof w, "0x%llx (8 bytes)", v);
    SetAttr(sname, set, CU_COREDUMP_GENERATION_FLAGS, &v, 8, w);
    ShowAttr(gname, get, CU_COREDUMP_GENERATION_FLAGS);
    ShowAttr(gname, get, CU_COREDUMP_LIGHTWEIGHT);
    ShowAttr(gname, get, CU_COREDUMP_TRIGGER_HOST);
  }
  int fl4 = 2;
  SetAttr(sname, set, CU_COREDUMP_GENERATION_FLAGS, &fl4, 4, "2 (4 bytes)");
  ShowAttr(gname, get, CU_COREDUMP_GENERATION_FLAGS);
  int junk = 1;
  SetAttr(sname, set, 0, &junk, 4, "attr 0");
  SetAttr(sname, set, CU_COREDUMP_MAX, &junk, 4, "MAX");
  SetAttr(sname, set, 1000, &junk, 4, "attr 1000");
  unlink(pipe_name.c_str());
  if (!global) {
    // Without a current context.
    cuCtxSetCurrent(nullptr);
    sz = 0;
    R(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, &sz));
    Say("size = %zu", sz);
    sz = 1;
    R(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &t, &sz));
    R(cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &t, &sz));
  }
  return 0;
}

// ------------------------------------------------------------------------------------------
// Device resources and green contexts.

std::string ResText(const CUdevResource& r) {
  char t[160];
  snprintf(t, sizeof t, "type %d, smCount %u, minSmPartitionSize %u, smCoscheduledAlignment %u",
           static_cast<int>(r.type), r.sm.smCount, r.sm.minSmPartitionSize,
           r.sm.smCoscheduledAlignment);
  return t;
}

CUdevResource Filled() {
  CUdevResource r;
  memset(&r, 0x77, sizeof r);
  return r;
}
bool Untouched(const CUdevResource& r) { return AllBytes(&r, sizeof r, 0x77); }

// green:resource: the device's and a context's SM resource, valid and invalid.
int CaseResource() {
  Base b;
  if (!b.Init()) return 1;
  int sms = 0;
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, b.dev);
  int major = 0, minor = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, b.dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, b.dev);
  Say("MULTIPROCESSOR_COUNT = %d, compute capability = %d.%d", sms, major, minor);
  CUdevResource r = Filled();
  R(cuDeviceGetDevResource(b.dev, &r, CU_DEV_RESOURCE_TYPE_SM));
  Say("device resource: %s", ResText(r).c_str());
  Say("device resource: smCount equals MULTIPROCESSOR_COUNT = %s", YesNo(static_cast<int>(r.sm.smCount) == sms));
  Say("device resource: padding bytes zero = %s, untouched = %s",
      YesNo(AllBytes(r._internal_padding, sizeof r._internal_padding, 0)),
      YesNo(AllBytes(r._internal_padding, sizeof r._internal_padding, 0x77)));
  Say("device resource: bytes past sm zero = %s, untouched = %s",
      YesNo(AllBytes(r._oversize + sizeof(CUdevSmResource), sizeof r._oversize - sizeof(CUdevSmResource), 0)),
      YesNo(AllBytes(r._oversize + sizeof(CUdevSmResource), sizeof r._oversize - sizeof(CUdevSmResource), 0x77)));
  CUdevResource r2 = Filled();
  R(cuDeviceGetDevResource(b.dev, &r2, CU_DEV_RESOURCE_TYPE_SM));
  Say("second query identical bytes = %s", YesNo(memcmp(&r, &r2, sizeof r) == 0));
  for (int type : {0, 2, 3, 1000, -1}) {
    CUdevResource x = Filled();
    CUresult e = cuDeviceGetDevResource(b.dev, &x, static_cast<CUdevResourceType>(type));
    Say("cuDeviceGetDevResource(type %d) = %s, out untouched = %s, out type = %d", type, Name(e),
        YesNo(Untouched(x)), static_cast<int>(x.type));
  }
  CUdevResource x = Filled();
  R(cuDeviceGetDevResource(-1, &x, CU_DEV_RESOURCE_TYPE_SM));
  Say("out untouched = %s", YesNo(Untouched(x)));
  R(cuDeviceGetDevResource(1000, &x, CU_DEV_RESOURCE_TYPE_SM));
  R(cuDeviceGetDevResource(b.dev, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  // Context resources.
  CUdevResource c = Filled();
  R(cuCtxGetDevResource(b.ctx, &c, CU_DEV_RESOURCE_TYPE_SM));
  Say("primary context resource: %s", ResText(c).c_str());
  Say("primary context resource identical bytes to the device's = %s", YesNo(memcmp(&c, &r, sizeof c) == 0));
  x = Filled();
  R(cuCtxGetDevResource(nullptr, &x, CU_DEV_RESOURCE_TYPE_SM));
  Say("null context: out untouched = %s, %s", YesNo(Untouched(x)), ResText(x).c_str());
  R(cuCtxGetDevResource(b.ctx, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  R(cuCtxGetDevResource(b.ctx, &x, static_cast<CUdevResourceType>(0)));
  R(cuCtxGetDevResource(b.ctx, &x, static_cast<CUdevResourceType>(2)));
  CUcontext c2 = nullptr;
  CUctxCreateParams cp;
  memset(&cp, 0, sizeof cp);
  R(cuCtxCreate(&c2, &cp, 0, b.dev));
  x = Filled();
  R(cuCtxGetDevResource(c2, &x, CU_DEV_RESOURCE_TYPE_SM));
  Say("created context resource: %s", ResText(x).c_str());
  R(cuCtxDestroy(c2));
  x = Filled();
  R(cuCtxGetDevResource(c2, &x, CU_DEV_RESOURCE_TYPE_SM));
  Say("destroyed context: out untouched = %s", YesNo(Untouched(x)));
  cuCtxSetCurrent(nullptr);
  x = Filled();
  R(cuCtxGetDevResource(nullptr, &x, CU_DEV_RESOURCE_TYPE_SM));
  R(cuDeviceGetDevResource(b.dev, &x, CU_DEV_RESOURCE_TYPE_SM));
  return 0;
}

// Splits `in` by `min_count` with `flags`: the query, then the split into as many groups.
void Split(const CUdevResource& in, unsigned min_count, unsigned flags, bool with_remaining = true) {
  unsigned n = 12345;
  CUresult r = cuDevSmResourceSplitByCount(nullptr, &n, &in, nullptr, flags, min_count);
  Say("split query(min %u, flags %u) = %s, groups = %u", min_count, flags, Name(r), n);
  if (r != CUDA_SUCCESS || n == 0 || n > 200) return;
  std::vector<CUdevResource> out(n + 1, Filled());
  CUdevResource rem = Filled();
  unsigned m = n;
  r = cuDevSmResourceSplitByCount(out.data(), &m, &in, with_remaining ? &rem : nullptr, flags, min_count);
  std::string sizes;
  for (unsigned i = 0; i < m && i < n; ++i) {
    sizes += (i ? "," : "") + std::to_string(out[i].sm.smCount);
  }
  Say("split(min %u, flags %u) = %s, groups = %u, group SMs = [%s], group[0] = %s", min_count,
      flags, Name(r), m, sizes.c_str(), ResText(out[0]).c_str());
  Say("split(min %u, flags %u): element past the groups untouched = %s, remaining = %s", min_count, flags,
      YesNo(Untouched(out[n])), with_remaining ? (Untouched(rem) ? "untouched" : ResText(rem).c_str()) : "not asked");
}

// green:split: cuDevSmResourceSplitByCount.
int CaseSplit() {
  Base b;
  if (!b.Init()) return 1;
  CUdevResource dev = Filled();
  if (R(cuDeviceGetDevResource(b.dev, &dev, CU_DEV_RESOURCE_TYPE_SM)) != CUDA_SUCCESS) return 0;
  Say("device resource: %s", ResText(dev).c_str());
  for (unsigned mc : {0u, 1u, 2u, 4u, 7u, 8u, 9u, 15u, 16u, 17u, 24u, 32u, 33u, 64u, 66u, 67u, 128u, 132u, 133u, 1000u})
    Split(dev, mc, 0);
  for (unsigned mc : {0u, 1u, 2u, 3u, 8u, 9u, 66u, 132u})
    Split(dev, mc, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING);
  for (unsigned mc : {0u, 8u, 16u, 32u, 66u})
    Split(dev, mc, CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE);
  Split(dev, 8, 3);
  Split(dev, 8, 4);
  Split(dev, 8, 0x80000000u);
  Split(dev, 16, 0, false);
  // Fewer groups than possible.
  std::vector<CUdevResource> out(4, Filled());
  CUdevResource rem = Filled();
  unsigned n = 2;
  R(cuDevSmResourceSplitByCount(out.data(), &n, &dev, &rem, 0, 16));
  Say("asked 2 groups of 16: groups = %u, group SMs = %u,%u, third untouched = %s, remaining = %s", n,
      out[0].sm.smCount, out[1].sm.smCount, YesNo(Untouched(out[2])), ResText(rem).c_str());
  n = 0;
  R(cuDevSmResourceSplitByCount(out.data(), &n, &dev, &rem, 0, 16));
  Say("groups = %u", n);
  n = 1;
  out.assign(4, Filled());
  rem = Filled();
  R(cuDevSmResourceSplitByCount(out.data(), &n, &dev, &rem, 0, 0));
  Say("asked 1 group of min 0: groups = %u, group[0] = %s, remaining = %s", n, ResText(out[0]).c_str(), ResText(rem).c_str());
  // Invalid arguments.
  R(cuDevSmResourceSplitByCount(out.data(), nullptr, &dev, &rem, 0, 8));
  R(cuDevSmResourceSplitByCount(nullptr, nullptr, &dev, &rem, 0, 8));
  n = 2;
  R(cuDevSmResourceSplitByCount(out.data(), &n, nullptr, &rem, 0, 8));
  CUdevResource bad = dev;
  bad.type = CU_DEV_RESOURCE_TYPE_INVALID;
  n = 2;
  R(cuDevSmResourceSplitByCount(out.data(), &n, &bad, &rem, 0, 8));
  bad.type = static_cast<CUdevResourceType>(2);
  n = 2;
  R(cuDevSmResourceSplitByCount(out.data(), &n, &bad, &rem, 0, 8));
  CUdevResource zero;
  memset(&zero, 0, sizeof zero);
  zero.type = CU_DEV_RESOURCE_TYPE_SM;
  n = 2;
  R(cuDevSmResourceSplitByCount(out.data(), &n, &zero, &rem, 0, 8));
  CUdevResource forged = Filled();
  n = 2;
  R(cuDevSmResourceSplitByCount(out.data(), &n, &forged, &rem, 0, 8));
  // A user-made resource with the device's numbers but no internal state.
  CUdevResource made;
  memset(&made, 0, sizeof made);
  made.type = CU_DEV_RESOURCE_TYPE_SM;
  made.sm = dev.sm;
  n = 2;
  R(cuDevSmResourceSplitByCount(out.data(), &n, &made, &rem, 0, 8));
  Say("groups = %u", n);
  // Splitting a split result again.
  out.assign(4, Filled());
  n = 2;
  if (R(cuDevSmResourceSplitByCount(out.data(), &n, &dev, &rem, 0, 32)) == CUDA_SUCCESS) {
    std::vector<CUdevResource> o2(4, Filled());
    unsigned k = 2;
    R(cuDevSmResourceSplitByCount(o2.data(), &k, &out[0], nullptr, 0, 8));
    Say("split of a group: groups = %u, group[0] = %s", k, ResText(o2[0]).c_str());
    k = 2;
    R(cuDevSmResourceSplitByCount(o2.data(), &k, &rem, nullptr, 0, 8));
    Say("split of the remaining: groups = %u", k);
  }
  // Context resource split.
  CUdevResource c = Filled();
  R(cuCtxGetDevResource(b.ctx, &c, CU_DEV_RESOURCE_TYPE_SM));
  Split(c, 16, 0);
  return 0;
}

// green:desc: cuDevResourceGenerateDesc.
int CaseDesc() {
  Base b;
  if (!b.Init()) return 1;
  CUdevResource dev = Filled();
  R(cuDeviceGetDevResource(b.dev, &dev, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResourceDesc d = Garbage<CUdevResourceDesc>();
  R(cuDevResourceGenerateDesc(&d, &dev, 1));
  Say("desc = %s", d == Garbage<CUdevResourceDesc>() ? "untouched" : d ? "set" : "null");
  CUdevResourceDesc d2 = nullptr;
  R(cuDevResourceGenerateDesc(&d2, &dev, 1));
  Say("second desc of the same resource equals the first = %s", YesNo(d2 == d));
  std::vector<CUdevResource> g(4, Filled()), h(4, Filled());
  CUdevResource rem = Filled(), rem2 = Filled();
  unsigned n = 3, m = 3;
  R(cuDevSmResourceSplitByCount(g.data(), &n, &dev, &rem, 0, 16));
  R(cuDevSmResourceSplitByCount(h.data(), &m, &dev, &rem2, 0, 16));
  CUdevResourceDesc e = nullptr;
  R(cuDevResourceGenerateDesc(&e, &g[0], 1));
  R(cuDevResourceGenerateDesc(&e, g.data(), 2));
  R(cuDevResourceGenerateDesc(&e, g.data(), n));
  CUdevResource mix[3] = {g[0], rem, g[1]};
  R(cuDevResourceGenerateDesc(&e, mix, 2));
  R(cuDevResourceGenerateDesc(&e, &rem, 1));
  Say("remaining: %s", ResText(rem).c_str());
  CUdevResource cross[2] = {g[0], h[1]};
  R(cuDevResourceGenerateDesc(&e, cross, 2));
  CUdevResource same[2] = {g[0], g[0]};
  R(cuDevResourceGenerateDesc(&e, same, 2));
  CUdevResource devplus[2] = {dev, g[0]};
  R(cuDevResourceGenerateDesc(&e, devplus, 2));
  CUdevResource devdev[2] = {dev, dev};
  R(cuDevResourceGenerateDesc(&e, devdev, 2));
  // Invalid.
  e = Garbage<CUdevResourceDesc>();
  R(cuDevResourceGenerateDesc(nullptr, &dev, 1));
  R(cuDevResourceGenerateDesc(&e, nullptr, 1));
  Say("desc after failure = %s", e == Garbage<CUdevResourceDesc>() ? "untouched" : e ? "set" : "null");
  R(cuDevResourceGenerateDesc(&e, &dev, 0));
  R(cuDevResourceGenerateDesc(&e, nullptr, 0));
  CUdevResource bad = dev;
  bad.type = CU_DEV_RESOURCE_TYPE_INVALID;
  R(cuDevResourceGenerateDesc(&e, &bad, 1));
  bad.type = static_cast<CUdevResourceType>(2);
  R(cuDevResourceGenerateDesc(&e, &bad, 1));
  CUdevResource forged = Filled();
  R(cuDevResourceGenerateDesc(&e, &forged, 1));
  CUdevResource made;
  memset(&made, 0, sizeof made);
  made.type = CU_DEV_RESOURCE_TYPE_SM;
  made.sm = dev.sm;
  R(cuDevResourceGenerateDesc(&e, &made, 1));
  made.sm.smCount = 16;
  R(cuDevResourceGenerateDesc(&e, &made, 1));
  std::vector<CUdevResource> many(200, dev);
  R(cuDevResourceGenerateDesc(&e, many.data(), 200));
  // No context current.
  cuCtxSetCurrent(nullptr);
  R(cuDevResourceGenerateDesc(&e, &g[0], 1));
  return 0;
}

// Makes a green context of `min_count` SMs (the first group of a split; 0: the whole device).
CUresult MakeGreen(CUdevice dev, unsigned min_count, CUgreenCtx* out, CUdevResource* used = nullptr) {
  CUdevResource r = Filled();
  CUresult e = cuDeviceGetDevResource(dev, &r, CU_DEV_RESOURCE_TYPE_SM);
  if (e != CUDA_SUCCESS) return e;
  CUdevResource g[1] = {r};
  if (min_count) {
    unsigned n = 1;
    e = cuDevSmResourceSplitByCount(g, &n, &r, nullptr, 0, min_count);
    if (e != CUDA_SUCCESS) return e;
  }
  if (used) *used = g[0];
  CUdevResourceDesc d = nullptr;
  e = cuDevResourceGenerateDesc(&d, g, 1);
  if (e != CUDA_SUCCESS) return e;
  return cuGreenCtxCreate(out, d, dev, CU_GREEN_CTX_DEFAULT_STREAM);
}

// green:ctx: create, convert, query, destroy, and invalid use.
int CaseGreenCtx() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUdevResource r = Filled();
  R(cuDeviceGetDevResource(dev, &r, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResource g[2] = {r, r};
  unsigned n = 2;
  R(cuDevSmResourceSplitByCount(g, &n, &r, nullptr, 0, 16));
  CUdevResourceDesc d = nullptr;
  R(cuDevResourceGenerateDesc(&d, g, 1));
  // Before the primary context is retained by anyone.
  unsigned pflags = 0;
  int active = -1;
  cuDevicePrimaryCtxGetState(dev, &pflags, &active);
  Say("primary context active before = %d", active);
  CUgreenCtx gc = Garbage<CUgreenCtx>();
  R(cuGreenCtxCreate(&gc, d, dev, 0));
  Say("green context after failure = %s", gc == Garbage<CUgreenCtx>() ? "untouched" : gc ? "set" : "null");
  R(cuGreenCtxCreate(&gc, d, dev, 2));
  R(cuGreenCtxCreate(&gc, d, dev, 3));
  R(cuGreenCtxCreate(&gc, nullptr, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  R(cuGreenCtxCreate(nullptr, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  R(cuGreenCtxCreate(&gc, d, -1, CU_GREEN_CTX_DEFAULT_STREAM));
  R(cuGreenCtxCreate(&gc, d, 1000, CU_GREEN_CTX_DEFAULT_STREAM));
  R(cuGreenCtxCreate(&gc, Garbage<CUdevResourceDesc>(), dev, CU_GREEN_CTX_DEFAULT_STREAM));
  gc = nullptr;
  R(cuGreenCtxCreate(&gc, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  Say("green context = %s", gc ? "set" : "null");
  if (!gc) return 0;
  cuDevicePrimaryCtxGetState(dev, &pflags, &active);
  Say("primary context active after = %d", active);
  CUcontext cur = Garbage<CUcontext>();
  cuCtxGetCurrent(&cur);
  Say("current context after create = %s", cur == nullptr ? "null" : "set");
  // A second green context from the same descriptor.
  CUgreenCtx gc2 = nullptr;
  R(cuGreenCtxCreate(&gc2, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  Say("second green context differs = %s", YesNo(gc2 != gc));
  // Resources.
  CUdevResource gr = Filled();
  R(cuGreenCtxGetDevResource(gc, &gr, CU_DEV_RESOURCE_TYPE_SM));
  Say("green context resource: %s", ResText(gr).c_str());
  Say("green context resource identical bytes to the group = %s", YesNo(memcmp(&gr, &g[0], sizeof gr) == 0));
  R(cuGreenCtxGetDevResource(gc, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  R(cuGreenCtxGetDevResource(gc, &gr, static_cast<CUdevResourceType>(0)));
  R(cuGreenCtxGetDevResource(gc, &gr, static_cast<CUdevResourceType>(2)));
  R(cuGreenCtxGetDevResource(nullptr, &gr, CU_DEV_RESOURCE_TYPE_SM));
  // Ids.
  unsigned long long id1 = 0, id2 = 0, cid = 0, pid = 0;
  R(cuGreenCtxGetId(gc, &id1));
  R(cuGreenCtxGetId(gc2, &id2));
  Say("green ids nonzero = %s, differ = %s", YesNo(id1 && id2), YesNo(id1 != id2));
  R(cuGreenCtxGetId(gc, nullptr));
  R(cuGreenCtxGetId(nullptr, &id1));
  // Conversion.
  CUcontext c = Garbage<CUcontext>();
  R(cuCtxFromGreenCtx(&c, gc));
  Say("converted context = %s", c == Garbage<CUcontext>() ? "untouched" : c ? "set" : "null");
  CUcontext c_again = nullptr;
  R(cuCtxFromGreenCtx(&c_again, gc));
  Say("second conversion same context = %s", YesNo(c_again == c));
  CUcontext primary = nullptr;
  R(cuDevicePrimaryCtxRetain(&primary, dev));
  Say("converted context is the primary context handle = %s", YesNo(c == primary));
  R(cuCtxGetId(c, &cid));
  R(cuCtxGetId(primary, &pid));
  Say("converted context id equals green id = %s, equals primary id = %s", YesNo(cid == id1), YesNo(cid == pid));
  CUcontext c2 = nullptr;
  R(cuCtxFromGreenCtx(&c2, gc2));
  Say("second green context's converted context differs = %s", YesNo(c2 != c));
  R(cuCtxFromGreenCtx(nullptr, gc));
  CUcontext cx = Garbage<CUcontext>();
  R(cuCtxFromGreenCtx(&cx, nullptr));
  Say("converted after failure = %s", cx == Garbage<CUcontext>() ? "untouched" : cx ? "set" : "null");
  // Context queries on the converted context.
  CUdevResource cr = Filled();
  R(cuCtxGetDevResource(c, &cr, CU_DEV_RESOURCE_TYPE_SM));
  Say("converted context resource: %s", ResText(cr).c_str());
  R(cuCtxSetCurrent(c));
  CUdevice cd = -1;
  R(cuCtxGetDevice(&cd));
  Say("device = %d", cd);
  unsigned int cflags = 0;
  R(cuCtxGetFlags(&cflags));
  Say("flags = 0x%x", cflags);
  unsigned ver = 0;
  R(cuCtxGetApiVersion(c, &ver));
  Say("api version = %u", ver);
  cur = nullptr;
  cuCtxGetCurrent(&cur);
  Say("current is the converted context = %s", YesNo(cur == c));
  R(cuCtxSynchronize());
  int sm_attr = 0;
  R(cuDeviceGetAttribute(&sm_attr, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  Say("MULTIPROCESSOR_COUNT with green current = %d", sm_attr);
  CUdeviceptr p = 0;
  R(cuMemAlloc(&p, 1 << 16));
  R(cuMemsetD32(p, 0x01020304, 1 << 14));
  unsigned v = 0;
  R(cuMemcpyDtoH(&v, p + 4, 4));
  Say("value = 0x%x", v);
  CUcontext pctx = nullptr;
  R(cuPointerGetAttribute(&pctx, CU_POINTER_ATTRIBUTE_CONTEXT, p));
  Say("allocation's context is the converted context = %s, primary = %s", YesNo(pctx == c), YesNo(pctx == primary));
  R(cuCtxSetCurrent(primary));
  R(cuMemcpyDtoH(&v, p, 4));
  R(cuMemFree(p));
  R(cuCtxPushCurrent(c));
  CUcontext popped = nullptr;
  R(cuCtxPopCurrent(&popped));
  Say("popped the converted context = %s", YesNo(popped == c));
  // Destroying the converted context as if ordinary.
  R(cuCtxDestroy(c2));
  R(cuDevicePrimaryCtxRelease(dev));
  // Destroy.
  R(cuCtxSetCurrent(c));
  R(cuGreenCtxDestroy(gc));
  cur = Garbage<CUcontext>();
  R(cuCtxGetCurrent(&cur));
  Say("current after destroying the current green context = %s", cur == nullptr ? "null" : cur == c ? "the converted context" : "other");
  R(cuCtxSynchronize());
  R(cuCtxSetCurrent(primary));
  R(cuGreenCtxDestroy(gc));
  R(cuGreenCtxGetId(gc, &id1));
  gr = Filled();
  R(cuGreenCtxGetDevResource(gc, &gr, CU_DEV_RESOURCE_TYPE_SM));
  R(cuCtxFromGreenCtx(&cx, gc));
  R(cuCtxGetDevResource(c, &gr, CU_DEV_RESOURCE_TYPE_SM));
  R(cuCtxSetCurrent(c));
  cuCtxSetCurrent(primary);
  R(cuGreenCtxDestroy(gc2));
  R(cuGreenCtxDestroy(nullptr));
  cuDevicePrimaryCtxGetState(dev, &pflags, &active);
  Say("primary context active at the end = %d", active);
  // The whole device as one green context.
  CUgreenCtx whole = nullptr;
  R(MakeGreen(dev, 0, &whole));
  if (whole) R(cuGreenCtxDestroy(whole));
  // Many.
  std::vector<CUgreenCtx> many;
  CUresult last = CUDA_SUCCESS;
  for (int i = 0; i < 64 && last == CUDA_SUCCESS; ++i) {
    CUgreenCtx x = nullptr;
    last = cuGreenCtxCreate(&x, d, dev, CU_GREEN_CTX_DEFAULT_STREAM);
    if (last == CUDA_SUCCESS) many.push_back(x);
  }
  Say("64 green contexts from one descriptor: created %zu, last = %s", many.size(), Name(last));
  for (CUgreenCtx x : many) cuGreenCtxDestroy(x);
  return 0;
}

// green:streams: streams of a green context, events, work on them.
int CaseGreenStreams() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUgreenCtx gc = nullptr;
  if (R(MakeGreen(dev, 16, &gc)) != CUDA_SUCCESS) return 0;
  CUcontext c = nullptr;
  R(cuCtxFromGreenCtx(&c, gc));
  CUcontext primary = nullptr;
  R(cuDevicePrimaryCtxRetain(&primary, dev));
  // Streams; no context current.
  CUstream s = Garbage<CUstream>();
  R(cuGreenCtxStreamCreate(&s, gc, 0, 0));
  Say("stream after flags 0 = %s", s == Garbage<CUstream>() ? "untouched" : s ? "set" : "null");
  if (s && s != Garbage<CUstream>()) cuStreamDestroy(s);
  s = nullptr;
  R(cuGreenCtxStreamCreate(&s, gc, CU_STREAM_NON_BLOCKING, 0));
  R(cuGreenCtxStreamCreate(nullptr, gc, CU_STREAM_NON_BLOCKING, 0));
  CUstream sx = nullptr;
  R(cuGreenCtxStreamCreate(&sx, nullptr, CU_STREAM_NON_BLOCKING, 0));
  R(cuGreenCtxStreamCreate(&sx, gc, 2, 0));
  R(cuGreenCtxStreamCreate(&sx, gc, CU_STREAM_NON_BLOCKING | 2, 0));
  int lo = 0, hi = 0;
  cuCtxSetCurrent(primary);
  R(cuCtxGetStreamPriorityRange(&lo, &hi));
  cuCtxSetCurrent(nullptr);
  CUstream sp = nullptr;
  R(cuGreenCtxStreamCreate(&sp, gc, CU_STREAM_NON_BLOCKING, -100));
  int prio = 77;
  if (sp) {
    R(cuStreamGetPriority(sp, &prio));
    Say("priority -100 clamps to the greatest = %s", YesNo(prio == hi));
    cuStreamDestroy(sp);
  }
  sp = nullptr;
  R(cuGreenCtxStreamCreate(&sp, gc, CU_STREAM_NON_BLOCKING, 100));
  if (sp) {
    R(cuStreamGetPriority(sp, &prio));
    Say("priority 100 clamps to the least = %s", YesNo(prio == lo));
    cuStreamDestroy(sp);
  }
  CUcontext cur = Garbage<CUcontext>();
  cuCtxGetCurrent(&cur);
  Say("current after stream create = %s", cur == nullptr ? "null" : "set");
  if (!s) return 0;
  unsigned sf = 77;
  R(cuStreamGetFlags(s, &sf));
  Say("stream flags = %u", sf);
  CUcontext sc = nullptr;
  R(cuStreamGetCtx(s, &sc));
  Say("stream's context is the converted context = %s", YesNo(sc == c));
  CUgreenCtx back = Garbage<CUgreenCtx>();
  R(cuStreamGetGreenCtx(s, &back));
  Say("stream's green context = %s", back == gc ? "the green context" : back == nullptr ? "null" : back == Garbage<CUgreenCtx>() ? "untouched" : "other");
  unsigned long long sid = 0;
  R(cuStreamGetId(s, &sid));
  // An ordinary stream's green context.
  R(cuCtxSetCurrent(primary));
  CUstream ps = nullptr;
  R(cuStreamCreate(&ps, CU_STREAM_NON_BLOCKING));
  back = Garbage<CUgreenCtx>();
  R(cuStreamGetGreenCtx(ps, &back));
  Say("ordinary stream's green context = %s", back == nullptr ? "null" : back == Garbage<CUgreenCtx>() ? "untouched" : "other");
  back = Garbage<CUgreenCtx>();
  R(cuStreamGetGreenCtx(nullptr, &back));
  Say("null stream's green context = %s", back == nullptr ? "null" : back == Garbage<CUgreenCtx>() ? "untouched" : "other");
  back = Garbage<CUgreenCtx>();
  R(cuStreamGetGreenCtx(CU_STREAM_PER_THREAD, &back));
  R(cuStreamGetGreenCtx(s, nullptr));
  // A stream created with cuStreamCreate while the converted context is current.
  R(cuCtxSetCurrent(c));
  CUstream cs = nullptr;
  R(cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
  back = Garbage<CUgreenCtx>();
  R(cuStreamGetGreenCtx(cs, &back));
  Say("cuStreamCreate stream (green current) green context = %s", back == gc ? "the green context" : back == nullptr ? "null" : back == Garbage<CUgreenCtx>() ? "untouched" : "other");
  back = Garbage<CUgreenCtx>();
  R(cuStreamGetGreenCtx(nullptr, &back));
  Say("null stream (green current) green context = %s", back == gc ? "the green context" : back == nullptr ? "null" : back == Garbage<CUgreenCtx>() ? "untouched" : "other");
  // Work on the green stream: memory allocated in the primary context.
  R(cuCtxSetCurrent(primary));
  CUdeviceptr a = 0, b2 = 0;
  R(cuMemAlloc(&a, 1 << 20));
  R(cuMemAlloc(&b2, 1 << 20));
  R(cuCtxSetCurrent(nullptr));
  R(cuMemsetD8Async(a, 0x3c, 1 << 20, s));
  R(cuMemcpyDtoDAsync(b2, a, 1 << 20, s));
  std::vector<unsigned char> host(1 << 20, 0);
  R(cuMemcpyDtoHAsync(host.data(), b2, host.size(), s));
  R(cuStreamSynchronize(s));
  Say("green stream memset+copy: all bytes 0x3c = %s", YesNo(AllBytes(host.data(), host.size(), 0x3c)));
  R(cuStreamQuery(s));
  // The same with the converted context current, then with the primary one current.
  for (int pass = 0; pass < 2; ++pass) {
    const char* who = pass == 0 ? "converted context current" : "primary context current";
    R(cuCtxSetCurrent(pass == 0 ? c : primary));
    const unsigned char v = static_cast<unsigned char>(0x51 + pass);
    CUresult m = cuMemsetD8Async(a, v, 1 << 20, s);
    CUresult k = cuMemcpyDtoDAsync(b2, a, 1 << 20, s);
    std::fill(host.begin(), host.end(), 0);
    CUresult h = cuMemcpyDtoHAsync(host.data(), b2, host.size(), s);
    CUresult y = cuStreamSynchronize(s);
    Say("green stream, %s: memset %s, copy %s, read %s, sync %s, all bytes 0x%02x = %s", who, Name(m),
        Name(k), Name(h), Name(y), v, YesNo(AllBytes(host.data(), host.size(), v)));
  }
  R(cuCtxSetCurrent(nullptr));
  // Events.
  CUevent e = nullptr;
  R(cuCtxSetCurrent(primary));
  R(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  R(cuCtxSetCurrent(nullptr));
  R(cuGreenCtxRecordEvent(gc, e));
  R(cuEventSynchronize(e));
  R(cuGreenCtxWaitEvent(gc, e));
  R(cuStreamWaitEvent(s, e, 0));
  R(cuEventRecord(e, s));
  R(cuGreenCtxWaitEvent(gc, e));
  R(cuStreamSynchronize(s));
  R(cuGreenCtxRecordEvent(gc, nullptr));
  R(cuGreenCtxWaitEvent(gc, nullptr));
  R(cuGreenCtxRecordEvent(nullptr, e));
  R(cuGreenCtxWaitEvent(nullptr, e));
  // An event made in the converted context, recorded by the green context.
  R(cuCtxSetCurrent(c));
  CUevent ge = nullptr;
  R(cuEventCreate(&ge, 0));
  R(cuGreenCtxRecordEvent(gc, ge));
  R(cuEventSynchronize(ge));
  R(cuEventDestroy(ge));
  R(cuCtxSetCurrent(primary));
  // A long host function on the green stream: does cuGreenCtxRecordEvent wait for it?
  static volatile int done = 0;
  R(cuLaunchHostFunc(s, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); done = 1; }, nullptr));
  R(cuGreenCtxRecordEvent(gc, e));
  R(cuEventQuery(e));
  R(cuEventSynchronize(e));
  Say("host function done when the green context's event completed = %s", YesNo(done == 1));
  R(cuStreamSynchronize(s));
  // Destroy the green context with its stream alive.
  R(cuStreamDestroy(cs));
  R(cuGreenCtxDestroy(gc));
  R(cuStreamQuery(s));
  R(cuMemsetD8Async(a, 1, 16, s));
  back = Garbage<CUgreenCtx>();
  R(cuStreamGetGreenCtx(s, &back));
  R(cuStreamDestroy(s));
  R(cuGreenCtxRecordEvent(gc, e));
  R(cuGreenCtxWaitEvent(gc, e));
  R(cuGreenCtxStreamCreate(&sx, gc, CU_STREAM_NON_BLOCKING, 0));
  R(cuEventDestroy(e));
  R(cuStreamDestroy(ps));
  R(cuMemFree(a));
  R(cuMemFree(b2));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Before cuInit, and garbage handles.

// Calls `fn` (one of the entry points of this probe) with garbage handles and valid out-pointers.
void CallWithGarbage(const std::string& fn) {
  CUipcMemHandle mh;
  memset(&mh, 0x5a, sizeof mh);
  CUipcEventHandle eh;
  memset(&eh, 0x5a, sizeof eh);
  CUdeviceptr p = 77;
  CUevent e = Garbage<CUevent>();
  CUdevResource r = Filled();
  unsigned n = 2;
  CUdevResource out[2] = {Filled(), Filled()};
  CUdevResourceDesc d = Garbage<CUdevResourceDesc>();
  CUgreenCtx gc = Garbage<CUgreenCtx>();
  CUcontext c = Garbage<CUcontext>();
  CUstream s = Garbage<CUstream>();
  unsigned long long id = 77;
  unsigned char v = 1;
  size_t sz = 1;
  CUresult res = CUDA_ERROR_UNKNOWN;
  std::string after;
  if (fn == "cuIpcGetMemHandle") {
    res = cuIpcGetMemHandle(&mh, static_cast<CUdeviceptr>(0x5a5a5a5a0000ull));
    after = AllBytes(&mh, sizeof mh, 0x5a) ? "handle untouched" : "handle written";
  } else if (fn == "cuIpcOpenMemHandle") {
    res = cuIpcOpenMemHandle(&p, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    after = p == 77 ? "pointer untouched" : p == 0 ? "pointer 0" : "pointer set";
  } else if (fn == "cuIpcCloseMemHandle") {
    res = cuIpcCloseMemHandle(static_cast<CUdeviceptr>(0x5a5a5a5a0000ull));
  } else if (fn == "cuIpcGetEventHandle") {
    res = cuIpcGetEventHandle(&eh, Garbage<CUevent>());
    after = AllBytes(&eh, sizeof eh, 0x5a) ? "handle untouched" : "handle written";
  } else if (fn == "cuIpcOpenEventHandle") {
    res = cuIpcOpenEventHandle(&e, eh);
    after = e == Garbage<CUevent>() ? "event untouched" : e == nullptr ? "event null" : "event set";
  } else if (fn == "cuProfilerStart") {
    res = ProfilerStart();
  } else if (fn == "cuProfilerStop") {
    res = ProfilerStop();
  } else if (fn == "cuCoredumpGetAttribute") {
    res = cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &v, &sz);
  } else if (fn == "cuCoredumpGetAttributeGlobal") {
    res = cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &v, &sz);
    after = "value " + std::to_string(v);
  } else if (fn == "cuCoredumpSetAttribute") {
    res = cuCoredumpSetAttribute(CU_COREDUMP_LIGHTWEIGHT, &v, &sz);
  } else if (fn == "cuCoredumpSetAttributeGlobal") {
    res = cuCoredumpSetAttributeGlobal(CU_COREDUMP_LIGHTWEIGHT, &v, &sz);
  } else if (fn == "cuDeviceGetDevResource") {
    res = cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM);
    after = Untouched(r) ? "resource untouched" : "resource written";
  } else if (fn == "cuCtxGetDevResource") {
    res = cuCtxGetDevResource(Garbage<CUcontext>(), &r, CU_DEV_RESOURCE_TYPE_SM);
    after = Untouched(r) ? "resource untouched" : "resource written";
  } else if (fn == "cuGreenCtxGetDevResource") {
    res = cuGreenCtxGetDevResource(Garbage<CUgreenCtx>(), &r, CU_DEV_RESOURCE_TYPE_SM);
    after = Untouched(r) ? "resource untouched" : "resource written";
  } else if (fn == "cuDevSmResourceSplitByCount") {
    CUdevResource in = Filled();
    in.type = CU_DEV_RESOURCE_TYPE_SM;
    res = cuDevSmResourceSplitByCount(out, &n, &in, &r, 0, 8);
    after = "groups " + std::to_string(n);
  } else if (fn == "cuDevResourceGenerateDesc") {
    CUdevResource in = Filled();
    in.type = CU_DEV_RESOURCE_TYPE_SM;
    res = cuDevResourceGenerateDesc(&d, &in, 1);
    after = d == Garbage<CUdevResourceDesc>() ? "desc untouched" : d ? "desc set" : "desc null";
  } else if (fn == "cuGreenCtxCreate") {
    res = cuGreenCtxCreate(&gc, Garbage<CUdevResourceDesc>(), 0, CU_GREEN_CTX_DEFAULT_STREAM);
    after = gc == Garbage<CUgreenCtx>() ? "green context untouched" : gc ? "green context set" : "green context null";
  } else if (fn == "cuGreenCtxDestroy") {
    res = cuGreenCtxDestroy(Garbage<CUgreenCtx>());
  } else if (fn == "cuCtxFromGreenCtx") {
    res = cuCtxFromGreenCtx(&c, Garbage<CUgreenCtx>());
    after = c == Garbage<CUcontext>() ? "context untouched" : c ? "context set" : "context null";
  } else if (fn == "cuGreenCtxRecordEvent") {
    res = cuGreenCtxRecordEvent(Garbage<CUgreenCtx>(), Garbage<CUevent>());
  } else if (fn == "cuGreenCtxWaitEvent") {
    res = cuGreenCtxWaitEvent(Garbage<CUgreenCtx>(), Garbage<CUevent>());
  } else if (fn == "cuGreenCtxStreamCreate") {
    res = cuGreenCtxStreamCreate(&s, Garbage<CUgreenCtx>(), CU_STREAM_NON_BLOCKING, 0);
    after = s == Garbage<CUstream>() ? "stream untouched" : s ? "stream set" : "stream null";
  } else if (fn == "cuGreenCtxGetId") {
    res = cuGreenCtxGetId(Garbage<CUgreenCtx>(), &id);
    after = id == 77 ? "id untouched" : "id written";
  } else if (fn == "cuStreamGetGreenCtx") {
    res = cuStreamGetGreenCtx(Garbage<CUstream>(), &gc);
    after = gc == Garbage<CUgreenCtx>() ? "green context untouched" : gc ? "green context set" : "green context null";
  } else {
    Say("unknown function %s", fn.c_str());
    return;
  }
  Say("%s(garbage) = %s%s%s", fn.c_str(), Name(res), after.empty() ? "" : ", ", after.c_str());
}

const char* const kFunctions[] = {
    "cuIpcGetMemHandle", "cuIpcOpenMemHandle", "cuIpcCloseMemHandle", "cuIpcGetEventHandle",
    "cuIpcOpenEventHandle", "cuProfilerStart", "cuProfilerStop", "cuCoredumpGetAttribute",
    "cuCoredumpGetAttributeGlobal", "cuCoredumpSetAttribute", "cuCoredumpSetAttributeGlobal",
    "cuDeviceGetDevResource", "cuCtxGetDevResource", "cuGreenCtxGetDevResource",
    "cuDevSmResourceSplitByCount", "cuDevResourceGenerateDesc", "cuGreenCtxCreate",
    "cuGreenCtxDestroy", "cuCtxFromGreenCtx", "cuGreenCtxRecordEvent", "cuGreenCtxWaitEvent",
    "cuGreenCtxStreamCreate", "cuGreenCtxGetId", "cuStreamGetGreenCtx"};

// noinit: every function before cuInit, garbage arguments.
int CaseNoInit() {
  for (const char* f : kFunctions) CallWithGarbage(f);
  // And with null out-pointers.
  CUipcMemHandle mh;
  memset(&mh, 0, sizeof mh);
  CUipcEventHandle eh;
  memset(&eh, 0, sizeof eh);
  R(cuIpcGetMemHandle(nullptr, 0));
  R(cuIpcOpenMemHandle(nullptr, mh, 0));
  R(cuIpcGetEventHandle(nullptr, nullptr));
  R(cuIpcOpenEventHandle(nullptr, eh));
  R(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, nullptr));
  size_t sz = 0;
  R(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, nullptr, &sz));
  Say("size = %zu", sz);
  R(cuDeviceGetDevResource(0, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  R(cuDevSmResourceSplitByCount(nullptr, nullptr, nullptr, nullptr, 0, 0));
  R(cuDevResourceGenerateDesc(nullptr, nullptr, 0));
  R(cuGreenCtxCreate(nullptr, nullptr, 0, 0));
  R(cuGreenCtxDestroy(nullptr));
  R(cuCtxFromGreenCtx(nullptr, nullptr));
  R(cuGreenCtxGetId(nullptr, nullptr));
  R(cuStreamGetGreenCtx(nullptr, nullptr));
  // After all that, cuInit and a coredump attribute set before it.
  R(cuInit(0));
  unsigned char v = 0;
  sz = 1;
  R(cuCoredumpGetAttributeGlobal(CU_COREDUMP_LIGHTWEIGHT, &v, &sz));
  Say("LIGHTWEIGHT after a pre-init set = %u", v);
  return 0;
}

// garbage:<fn>: after cuInit with the primary context current, garbage handles.
int CaseGarbage(const std::string& fn) {
  Base b;
  if (!b.Init()) return 1;
  CallWithGarbage(fn);
  return 0;
}

// noctx:<fn>: after cuInit, no context current, garbage handles (what is checked first).
int CaseNoCtxGarbage(const std::string& fn) {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CallWithGarbage(fn);
  return 0;
}

// ------------------------------------------------------------------------------------------

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {"ipc:mem", "ipc:kinds", "ipc:event", "ipc:child:basic",
                                    "ipc:child:freed", "ipc:child:noctx", "ipc:child:noinit"};
  for (const char* m : {"noinit", "noctx", "ctx", "destroyed"})
    cases.push_back(std::string("profiler:") + m);
  for (const char* m : {"global", "ctx", "noctx", "mixed"})
    cases.push_back(std::string("coredump:") + m);
  for (const char* m : {"resource", "split", "desc", "ctx", "streams"})
    cases.push_back(std::string("green:") + m);
  cases.push_back("noinit");
  for (const char* f : kFunctions) cases.push_back(std::string("garbage:") + f);
  for (const char* f : kFunctions) cases.push_back(std::string("noctx:") + f);
  return cases;
}

int RunOne(const std::string& c, const char* parent_case) {
  g_case = c.c_str();
  auto rest = [&](const char* prefix) { return c.substr(strlen(prefix)); };
  if (c.rfind("ipcchild:", 0) == 0) {
    g_case = parent_case ? parent_case : c.c_str();
    return CaseIpcChildSide(rest("ipcchild:"));
  }
  if (c == "ipc:mem") return CaseIpcMem();
  if (c == "ipc:kinds") return CaseIpcKinds();
  if (c == "ipc:event") return CaseIpcEvent();
  if (c.rfind("ipc:child:", 0) == 0) return CaseIpcChild(rest("ipc:child:"));
  if (c.rfind("profiler:", 0) == 0) return CaseProfiler(rest("profiler:"));
  if (c.rfind("coredump:", 0) == 0) return CaseCoredump(rest("coredump:"));
  if (c == "green:resource") return CaseResource();
  if (c == "green:split") return CaseSplit();
  if (c == "green:desc") return CaseDesc();
  if (c == "green:ctx") return CaseGreenCtx();
  if (c == "green:streams") return CaseGreenStreams();
  if (c == "noinit") return CaseNoInit();
  if (c.rfind("garbage:", 0) == 0) return CaseGarbage(rest("garbage:"));
  if (c.rfind("noctx:", 0) == 0) return CaseNoCtxGarbage(rest("noctx:"));
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
  std::string dir = "/tmp/misc_probe_" + std::to_string(getpid());
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
    fprintf(stderr, "usage: misc_probe all [jobs] | misc_probe list | misc_probe <case>\n");
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
  return RunOne(a, argc > 2 ? argv[2] : nullptr);
}
