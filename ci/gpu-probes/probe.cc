// Driver-fact probe for cuhal (issues 19 and 20). Runs on the GPU machine; see README.md.
//
//   probe all [jobs]   runs every case in its own process (fork+exec before any CUDA call),
//                      `jobs` at a time, each with a timeout; a case that does not finish is
//                      reported as HANG, one that dies as SIGNAL n. Timing cases run alone last.
//   probe <case>       runs one case.
//
// Every line a case prints is "<case>: <what> = <result>"; CUresults are printed by name.
// Caution: in the first run (2026-12-03) the cases "peer", "apiversion" and "elapsed" printed
// some out-values in the same call that produced them, so those values were read before the call
// (C++ leaves the order unspecified); case "gaps" re-measures them properly. Check the result code
// first and print values in a later statement.
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
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

#define R(expr) Say("%s = %s", #expr, Name(expr))

long Tid() { return syscall(SYS_gettid); }

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry empty() { ret; }
.visible .entry spin(.param .u64 ns) {
  .reg .u64 %t0, %t1, %d, %n;
  .reg .pred %p;
  ld.param.u64 %n, [ns];
  mov.u64 %t0, %globaltimer;
LOOP:
  mov.u64 %t1, %globaltimer;
  sub.u64 %d, %t1, %t0;
  setp.lt.u64 %p, %d, %n;
  @%p bra LOOP;
  ret;
}
)";

// ------------------------------------------------------------------------------------------
// Common setup: primary context current, module with `empty` and `spin`.
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule mod = nullptr;
  CUfunction empty = nullptr, spin = nullptr;
  bool Init() {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    CUresult r = cuModuleLoadData(&mod, kPtx);
    if (r != CUDA_SUCCESS) {
      Say("cuModuleLoadData = %s", Name(r));
      return false;
    }
    cuModuleGetFunction(&empty, mod, "empty");
    cuModuleGetFunction(&spin, mod, "spin");
    return true;
  }
  CUresult LaunchEmpty(CUstream s) {
    return cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr);
  }
  CUresult LaunchSpin(CUstream s, uint64_t ns) {
    void* args[] = {&ns};
    return cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
  }
};

// ------------------------------------------------------------------------------------------
// A. CUDA calls from inside a host function.
struct CbEnv {
  Base* b;
  const char* entry;
  bool setctx;
  CUstream own, idle, busy, spare_stream;
  CUevent ev_other, spare_event;
  CUdeviceptr d, d_to_free, pool_ptr;
  CUmemoryPool pool;
  char host[4096];
  std::atomic<int> done{0};
};

void Nop(void*) {}

CUresult CallEntry(CbEnv* e, const std::string& n) {
  if (n == "cuStreamSynchronize_own") return cuStreamSynchronize(e->own);
  if (n == "cuStreamSynchronize_idle") return cuStreamSynchronize(e->idle);
  if (n == "cuStreamSynchronize_busy") return cuStreamSynchronize(e->busy);
  if (n == "cuCtxSynchronize") return cuCtxSynchronize();
  if (n == "cuEventSynchronize_other") return cuEventSynchronize(e->ev_other);
  if (n == "cuEventRecord_other") return cuEventRecord(e->ev_other, e->idle);
  if (n == "cuEventRecord_own") return cuEventRecord(e->ev_other, e->own);
  if (n == "cuEventQuery") return cuEventQuery(e->ev_other);
  if (n == "cuStreamQuery_own") return cuStreamQuery(e->own);
  if (n == "cuStreamQuery_other") return cuStreamQuery(e->idle);
  if (n == "cuStreamWaitEvent") return cuStreamWaitEvent(e->idle, e->ev_other, 0);
  if (n == "cuMemcpyHtoD") return cuMemcpyHtoD(e->d, e->host, 256);
  if (n == "cuMemcpyDtoH") return cuMemcpyDtoH(e->host, e->d, 256);
  if (n == "cuMemcpyHtoDAsync") return cuMemcpyHtoDAsync(e->d, e->host, 256, e->idle);
  if (n == "cuMemsetD8Async") return cuMemsetD8Async(e->d, 1, 256, e->idle);
  if (n == "cuMemsetD8") return cuMemsetD8(e->d, 1, 256);
  if (n == "cuMemAlloc") {
    CUdeviceptr p = 0;
    CUresult r = cuMemAlloc(&p, 4096);
    Say("  cuMemAlloc out ptr %s", p ? "set" : "0");
    return r;
  }
  if (n == "cuMemFree") return cuMemFree(e->d_to_free);
  if (n == "cuMemAllocAsync") {
    CUdeviceptr p = 0;
    return cuMemAllocAsync(&p, 4096, e->idle);
  }
  if (n == "cuMemFreeAsync") return cuMemFreeAsync(e->pool_ptr, e->idle);
  if (n == "cuMemAllocFromPoolAsync") {
    CUdeviceptr p = 0;
    return cuMemAllocFromPoolAsync(&p, 4096, e->pool, e->idle);
  }
  if (n == "cuMemPoolTrimTo") return cuMemPoolTrimTo(e->pool, 0);
  if (n == "cuMemPoolGetAttribute") {
    uint64_t v = 0;
    return cuMemPoolGetAttribute(e->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v);
  }
  if (n == "cuLaunchHostFunc") return cuLaunchHostFunc(e->idle, Nop, nullptr);
  if (n == "cuLaunchKernel") return e->b->LaunchEmpty(e->idle);
  if (n == "cuEventCreate") {
    CUevent ev = nullptr;
    return cuEventCreate(&ev, 0);
  }
  if (n == "cuEventDestroy") return cuEventDestroy(e->spare_event);
  if (n == "cuStreamCreate") {
    CUstream s = nullptr;
    return cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  }
  if (n == "cuStreamDestroy") return cuStreamDestroy(e->spare_stream);
  if (n == "cuCtxGetCurrent") {
    CUcontext c = nullptr;
    return cuCtxGetCurrent(&c);
  }
  if (n == "cuCtxSetCurrent") return cuCtxSetCurrent(e->b->ctx);
  if (n == "cuCtxPushCurrent") return cuCtxPushCurrent(e->b->ctx);
  if (n == "cuCtxPopCurrent") {
    CUcontext c = nullptr;
    CUresult r = cuCtxPopCurrent(&c);
    Say("  popped %s", c == nullptr ? "NULL" : c == e->b->ctx ? "the stream's ctx" : "other");
    return r;
  }
  if (n == "cuCtxPushPop") {
    CUresult r = cuCtxPushCurrent(e->b->ctx);
    Say("  push = %s", Name(r));
    CUcontext c = nullptr;
    return cuCtxPopCurrent(&c);
  }
  if (n == "cuDevicePrimaryCtxRetain") {
    CUcontext c = nullptr;
    return cuDevicePrimaryCtxRetain(&c, e->b->dev);
  }
  if (n == "cuDevicePrimaryCtxRelease") return cuDevicePrimaryCtxRelease(e->b->dev);
  if (n == "cuDeviceGetAttribute") {
    int v = 0;
    return cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, e->b->dev);
  }
  if (n == "cuGetErrorName") {
    const char* s = nullptr;
    return cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s);
  }
  if (n == "cuMemGetInfo") {
    size_t f = 0, t = 0;
    return cuMemGetInfo(&f, &t);
  }
  if (n == "cuStreamGetFlags") {
    unsigned int f = 0;
    return cuStreamGetFlags(e->own, &f);
  }
  if (n == "cuCtxGetDevice") {
    CUdevice d = -1;
    return cuCtxGetDevice(&d);
  }
  if (n == "cuDriverGetVersion") {
    int v = 0;
    return cuDriverGetVersion(&v);
  }
  if (n == "cuPointerGetAttribute") {
    unsigned int t = 0;
    return cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, e->d);
  }
  if (n == "cuStreamGetCtx") {
    CUcontext c = nullptr;
    return cuStreamGetCtx(e->own, &c);
  }
  return CUDA_ERROR_NOT_FOUND;
}

const char* kCbEntries[] = {
    "cuStreamSynchronize_own", "cuStreamSynchronize_idle", "cuStreamSynchronize_busy",
    "cuCtxSynchronize", "cuEventSynchronize_other", "cuEventRecord_other", "cuEventRecord_own",
    "cuEventQuery", "cuStreamQuery_own", "cuStreamQuery_other", "cuStreamWaitEvent",
    "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyHtoDAsync", "cuMemsetD8Async", "cuMemsetD8",
    "cuMemAlloc", "cuMemFree", "cuMemAllocAsync", "cuMemFreeAsync", "cuMemAllocFromPoolAsync",
    "cuMemPoolTrimTo", "cuMemPoolGetAttribute", "cuLaunchHostFunc", "cuLaunchKernel",
    "cuEventCreate", "cuEventDestroy", "cuStreamCreate", "cuStreamDestroy", "cuCtxGetCurrent",
    "cuCtxSetCurrent", "cuCtxPushCurrent", "cuCtxPopCurrent", "cuCtxPushPop",
    "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuDeviceGetAttribute",
    "cuGetErrorName", "cuMemGetInfo", "cuStreamGetFlags", "cuCtxGetDevice", "cuDriverGetVersion",
    "cuPointerGetAttribute", "cuStreamGetCtx"};

void CbBody(CbEnv* e) {
  CUcontext cur = reinterpret_cast<CUcontext>(1);
  CUresult r = cuCtxGetCurrent(&cur);
  Say("in callback: tid %s main, cuCtxGetCurrent = %s, current = %s",
      "!=", Name(r), cur == nullptr ? "NULL" : cur == e->b->ctx ? "stream's ctx" : "other");
  if (e->setctx) Say("in callback: cuCtxSetCurrent(ctx) = %s", Name(cuCtxSetCurrent(e->b->ctx)));
  Say("in callback: calling %s", e->entry);
  double t0 = NowUs();
  r = CallEntry(e, e->entry);
  Say("RESULT %s%s = %s (%.0f us)", e->entry, e->setctx ? " [after SetCurrent]" : "", Name(r),
      NowUs() - t0);
  int v = 0;
  Say("in callback: then cuDeviceGetAttribute = %s",
      Name(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, e->b->dev)));
  e->done = 1;
}
void HostFnTramp(void* p) { CbBody(static_cast<CbEnv*>(p)); }
void StreamCbTramp(CUstream, CUresult status, void* p) {
  Say("in callback: status argument = %s", Name(status));
  CbBody(static_cast<CbEnv*>(p));
}

int CaseCallback(const std::string& kind, const std::string& entry, bool setctx) {
  Base b;
  if (!b.Init()) return 2;
  CbEnv e;
  e.b = &b;
  e.entry = entry.c_str();
  e.setctx = setctx;
  cuStreamCreate(&e.own, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&e.idle, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&e.busy, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&e.spare_stream, CU_STREAM_NON_BLOCKING);
  cuEventCreate(&e.ev_other, CU_EVENT_DISABLE_TIMING);
  cuEventCreate(&e.spare_event, 0);
  cuMemAlloc(&e.d, 1 << 20);
  cuMemAlloc(&e.d_to_free, 4096);
  cuDeviceGetDefaultMemPool(&e.pool, b.dev);
  cuMemAllocAsync(&e.pool_ptr, 4096, e.idle);
  cuEventRecord(e.ev_other, e.idle);
  cuCtxSynchronize();
  if (entry == "cuDevicePrimaryCtxRelease") {
    CUcontext c;
    cuDevicePrimaryCtxRetain(&c, b.dev);  // so the callback's release does not drop it
  }
  b.LaunchSpin(e.busy, 500ull * 1000 * 1000);  // busy for 0.5 s
  CUresult r = kind == "hostfn" ? cuLaunchHostFunc(e.own, HostFnTramp, &e)
                                : cuStreamAddCallback(e.own, StreamCbTramp, &e, 0);
  Say("enqueue = %s", Name(r));
  double t0 = NowUs();
  r = cuStreamSynchronize(e.own);
  Say("host after: cuStreamSynchronize(own) = %s (%.0f us)", Name(r), NowUs() - t0);
  Say("host after: cuStreamQuery(idle) = %s", Name(cuStreamQuery(e.idle)));
  Say("host after: cuCtxSynchronize = %s", Name(cuCtxSynchronize()));
  CUdeviceptr p = 0;
  Say("host after: cuMemAlloc = %s", Name(cuMemAlloc(&p, 4096)));
  Say("host after: cuLaunchKernel+sync = %s/%s", Name(b.LaunchEmpty(e.own)),
      Name(cuStreamSynchronize(e.own)));
  Say("host after: callback finished = %d", e.done.load());
  return 0;
}

// Which thread runs callbacks.
struct TidRec {
  const char* what;
  long tid = 0;
  std::atomic<int> done{0};
};
void TidFn(void* p) {
  auto* t = static_cast<TidRec*>(p);
  t->tid = Tid();
  t->done = 1;
}
void TidCb(CUstream, CUresult, void* p) { TidFn(p); }

int CaseThreads() {
  Base b;
  if (!b.Init()) return 2;
  CUcontext ctx2 = nullptr;
  CUresult r = cuCtxCreate(&ctx2, nullptr, 0, b.dev);
  Say("cuCtxCreate = %s", Name(r));
  cuCtxSetCurrent(b.ctx);
  CUstream s1, s2, s3, s4;
  cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  cuCtxSetCurrent(ctx2);
  cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING);
  cuCtxSetCurrent(b.ctx);
  cuStreamCreate(&s4, 0);
  std::vector<TidRec> recs(8);
  const char* names[] = {"hostfn s1 ctxA", "hostfn s2 ctxA", "hostfn s3 ctxB",
                         "addcb s1 ctxA",  "hostfn s1 again", "hostfn legacy NULL stream",
                         "hostfn s4 blocking-flag stream", "addcb s3 ctxB"};
  CUstream where[] = {s1, s2, s3, s1, s1, nullptr, s4, s3};
  for (int i = 0; i < 8; ++i) {
    recs[i].what = names[i];
    if (i == 3 || i == 7)
      cuStreamAddCallback(where[i], TidCb, &recs[i], 0);
    else
      cuLaunchHostFunc(where[i], TidFn, &recs[i]);
  }
  cuCtxSynchronize();
  cuCtxSetCurrent(ctx2);
  cuCtxSynchronize();
  long main_tid = Tid();
  for (auto& t : recs)
    Say("%s: tid %ld (%s main thread; offset %ld)", t.what, t.tid,
        t.tid == main_tid ? "==" : "!=", t.tid - main_tid);
  // A second process-level look: a second round after a sync.
  TidRec again;
  again.what = "s2 after sync";
  cuLaunchHostFunc(s2, TidFn, &again);
  cuStreamSynchronize(s2);
  Say("second round s2: tid %ld (same as first s1: %s)", again.tid,
      again.tid == recs[0].tid ? "yes" : "no");
  return 0;
}

// ------------------------------------------------------------------------------------------
// B. A blocking host function.
struct Block {
  std::atomic<int> release{0};
  std::atomic<int> entered{0};
  std::atomic<int> exited{0};
  long tid = 0;
};
void BlockFn(void* p) {
  auto* b = static_cast<Block*>(p);
  b->tid = Tid();
  b->entered = 1;
  double t0 = NowUs();
  while (!b->release.load() && NowUs() - t0 < 3e6) {
  }
  b->exited = 1;
}
struct Flag {
  std::atomic<int> ran{0};
  long tid = 0;
};
void FlagFn(void* p) {
  auto* f = static_cast<Flag*>(p);
  f->tid = Tid();
  f->ran = 1;
}

int CaseBlocking() {
  Base b;
  if (!b.Init()) return 2;
  CUcontext ctx2 = nullptr;
  cuCtxCreate(&ctx2, nullptr, 0, b.dev);
  CUstream sB;
  cuStreamCreate(&sB, CU_STREAM_NON_BLOCKING);
  cuCtxSetCurrent(b.ctx);
  CUstream s1, s2, s3, s4;
  cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s4, CU_STREAM_NON_BLOCKING);
  CUevent e_before, e_after, e_s3;
  cuEventCreate(&e_before, 0);
  cuEventCreate(&e_after, 0);
  cuEventCreate(&e_s3, 0);
  CUdeviceptr d;
  cuMemAlloc(&d, 1 << 20);
  Block blk;
  Flag f3, fB, f1b, f4;
  cuEventRecord(e_before, s1);
  R(cuLaunchHostFunc(s1, BlockFn, &blk));
  R(cuEventRecord(e_after, s1));
  R(cuLaunchHostFunc(s1, FlagFn, &f1b));  // behind the blocker on its own stream
  R(cuStreamWaitEvent(s2, e_after, 0));
  R(cuMemsetD8Async(d, 1, 1024, s2));
  R(cuMemsetD8Async(d + 4096, 2, 1024, s3));
  R(cuLaunchHostFunc(s3, FlagFn, &f3));
  R(cuEventRecord(e_s3, s3));
  R(cuLaunchHostFunc(sB, FlagFn, &fB));
  R(b.LaunchEmpty(s4));
  R(cuStreamAddCallback(s4, [](CUstream, CUresult, void* p) { FlagFn(p); }, &f4, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Say("blocker entered = %d, exited = %d", blk.entered.load(), blk.exited.load());
  R(cuStreamQuery(s1));
  R(cuStreamQuery(s2));
  R(cuStreamQuery(s3));
  R(cuStreamQuery(s4));
  R(cuStreamQuery(sB));
  R(cuEventQuery(e_before));
  R(cuEventQuery(e_after));
  R(cuEventQuery(e_s3));
  Say("hostfn behind blocker on s1 ran = %d", f1b.ran.load());
  Say("hostfn on independent s3 (same ctx) ran while blocked = %d", f3.ran.load());
  Say("hostfn on ctxB stream ran while blocked = %d", fB.ran.load());
  Say("addcallback on s4 after kernel ran while blocked = %d", f4.ran.load());
  // Does an event sync on s3's event complete while s1 blocks?
  double t0 = NowUs();
  CUresult r = cuEventSynchronize(e_s3);
  Say("cuEventSynchronize(e_s3) while blocked = %s (%.0f us), blocker exited = %d", Name(r),
      NowUs() - t0, blk.exited.load());
  blk.release = 1;
  t0 = NowUs();
  R(cuStreamSynchronize(s1));
  Say("after release: s1 sync %.0f us; f1b ran = %d, f3 = %d, fB = %d, f4 = %d", NowUs() - t0,
      f1b.ran.load(), f3.ran.load(), fB.ran.load(), f4.ran.load());
  R(cuStreamSynchronize(s2));
  Say("tids: blocker %ld, s3 fn %ld, ctxB fn %ld, s4 cb %ld, s1 second %ld", blk.tid, f3.tid,
      fB.tid, f4.tid, f1b.tid);
  float ms = -1;
  R(cuEventElapsedTime(&ms, e_before, e_after));
  Say("elapsed e_before->e_after = %.3f ms", ms);
  return 0;
}

// ------------------------------------------------------------------------------------------
// C. Limits.
const size_t kVals[] = {0,       1,        1000,       1024,       4096,
                        1 << 20, 1u << 30, 1ull << 40, SIZE_MAX / 2, SIZE_MAX};

void LimitSweep(const char* phase) {
  for (int l = 0; l <= 10; ++l) {
    size_t def = 0xdead;
    CUresult g = cuCtxGetLimit(&def, static_cast<CUlimit>(l));
    for (size_t v : kVals) {
      CUresult s = cuCtxSetLimit(static_cast<CUlimit>(l), v);
      size_t back = 0xdead;
      CUresult g2 = cuCtxGetLimit(&back, static_cast<CUlimit>(l));
      Say("%s set limit %d to %zu = %s; read back %s %zu", phase, l, v, Name(s), Name(g2), back);
    }
    if (g == CUDA_SUCCESS) {
      CUresult s = cuCtxSetLimit(static_cast<CUlimit>(l), def);
      Say("%s restore limit %d to %zu = %s", phase, l, def, Name(s));
    }
  }
}

int CaseLimits() {
  cuInit(0);
  size_t v = 0xdead;
  R(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
  R(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 2048));
  R(cuCtxGetLimit(nullptr, CU_LIMIT_STACK_SIZE));
  Base b;
  if (!b.Init()) return 2;
  for (int l = -1; l <= 12; ++l) {
    v = 0xdead;
    CUresult r = cuCtxGetLimit(&v, static_cast<CUlimit>(l));
    Say("cuCtxGetLimit(limit %d) = %s value %zu", l, Name(r), v);
  }
  R(cuCtxGetLimit(nullptr, CU_LIMIT_STACK_SIZE));
  R(cuCtxGetLimit(nullptr, static_cast<CUlimit>(99)));
  R(cuCtxSetLimit(static_cast<CUlimit>(99), 0));
  R(cuCtxSetLimit(static_cast<CUlimit>(-1), 0));
  LimitSweep("before-launch");
  Say("launch empty = %s, sync = %s", Name(b.LaunchEmpty(nullptr)), Name(cuCtxSynchronize()));
  for (int l = 0; l <= 6; ++l) {
    for (size_t val : {size_t{1000}, size_t{4096}, size_t{1} << 24}) {
      CUresult s = cuCtxSetLimit(static_cast<CUlimit>(l), val);
      size_t back = 0xdead;
      CUresult g = cuCtxGetLimit(&back, static_cast<CUlimit>(l));
      Say("after-launch set limit %d to %zu = %s; read back %s %zu", l, val, Name(s), Name(g),
          back);
    }
  }
  // Limits of a created context.
  CUcontext c2 = nullptr;
  R(cuCtxCreate(&c2, nullptr, 0, b.dev));
  for (int l = 0; l <= 9; ++l) {
    v = 0xdead;
    CUresult r = cuCtxGetLimit(&v, static_cast<CUlimit>(l));
    Say("created ctx cuCtxGetLimit(limit %d) = %s value %zu", l, Name(r), v);
  }
  return 0;
}

// ------------------------------------------------------------------------------------------
// D. Peer access.
int CasePeer() {
  cuInit(0);
  int v = -7;
  int n = 0;
  cuDeviceGetCount(&n);
  Say("device count %d", n);
  CUresult pr = cuDeviceCanAccessPeer(&v, 0, 0);
  Say("cuDeviceCanAccessPeer(&v,0,0) = %s v=%d", Name(pr), v);
  v = -7;
  Say("cuDeviceCanAccessPeer(&v,0,1) = %s v=%d", Name(cuDeviceCanAccessPeer(&v, 0, 1)), v);
  v = -7;
  Say("cuDeviceCanAccessPeer(&v,-1,0) = %s v=%d", Name(cuDeviceCanAccessPeer(&v, -1, 0)), v);
  v = -7;
  Say("cuDeviceCanAccessPeer(&v,0,99) = %s v=%d", Name(cuDeviceCanAccessPeer(&v, 0, 99)), v);
  R(cuDeviceCanAccessPeer(nullptr, 0, 0));
  R(cuDeviceCanAccessPeer(nullptr, 0, 99));
  R(cuCtxEnablePeerAccess(nullptr, 0));  // no current context
  Base b;
  if (!b.Init()) return 2;
  R(cuCtxEnablePeerAccess(b.ctx, 0));
  R(cuCtxEnablePeerAccess(b.ctx, 0));
  R(cuCtxEnablePeerAccess(b.ctx, 1));
  R(cuCtxEnablePeerAccess(nullptr, 0));
  R(cuCtxEnablePeerAccess(nullptr, 1));
  R(cuCtxDisablePeerAccess(b.ctx));
  R(cuCtxDisablePeerAccess(nullptr));
  CUcontext c2 = nullptr;
  R(cuCtxCreate(&c2, nullptr, 0, b.dev));
  R(cuCtxSetCurrent(b.ctx));
  R(cuCtxEnablePeerAccess(c2, 0));
  R(cuCtxEnablePeerAccess(c2, 1));
  R(cuCtxDisablePeerAccess(c2));
  R(cuCtxDestroy(c2));
  R(cuCtxSetCurrent(b.ctx));
  R(cuCtxEnablePeerAccess(c2, 0));  // destroyed
  R(cuCtxDisablePeerAccess(c2));
  int a = -7;
  R(cuDeviceGetP2PAttribute(&a, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0));
  Say("  value %d", a);
  return 0;
}

// ------------------------------------------------------------------------------------------
// E. cuStreamAddCallback.
void StatusCb(CUstream s, CUresult status, void* p) {
  Say("callback got stream %s, status %s", s == *static_cast<CUstream*>(p) ? "same" : "other",
      Name(status));
}
int CaseAddCallback() {
  Base b;
  if (!b.Init()) return 2;
  CUstream s;
  cuStreamCreate(&s, 0);
  R(cuStreamAddCallback(s, StatusCb, &s, 1));
  R(cuStreamAddCallback(s, StatusCb, &s, 0xffffffffu));
  R(cuStreamAddCallback(s, nullptr, &s, 0));
  R(cuStreamAddCallback(s, nullptr, &s, 1));
  R(cuLaunchHostFunc(s, nullptr, nullptr));
  R(cuStreamAddCallback(s, StatusCb, &s, 0));
  R(cuStreamSynchronize(s));
  CUstream null_stream = nullptr;
  R(cuStreamAddCallback(nullptr, StatusCb, &null_stream, 0));
  R(cuStreamSynchronize(nullptr));
  CUstream ptd = CU_STREAM_PER_THREAD;
  R(cuStreamAddCallback(CU_STREAM_PER_THREAD, StatusCb, &ptd, 0));
  R(cuCtxSynchronize());
  // No current context.
  cuCtxSetCurrent(nullptr);
  R(cuStreamAddCallback(nullptr, StatusCb, &null_stream, 0));
  R(cuLaunchHostFunc(nullptr, Nop, nullptr));
  R(cuStreamAddCallback(s, StatusCb, &s, 0));
  cuCtxSetCurrent(b.ctx);
  R(cuCtxSynchronize());
  return 0;
}
int CaseAddCallbackDestroyed() {
  Base b;
  if (!b.Init()) return 2;
  CUstream s;
  cuStreamCreate(&s, 0);
  R(cuStreamDestroy(s));
  R(cuStreamAddCallback(s, StatusCb, &s, 0));
  R(cuLaunchHostFunc(s, Nop, nullptr));
  R(cuStreamQuery(s));
  R(cuCtxSynchronize());
  return 0;
}
int CaseAddCallbackBogus() {
  Base b;
  if (!b.Init()) return 2;
  CUstream s = reinterpret_cast<CUstream>(0x1234);
  R(cuStreamAddCallback(s, StatusCb, &s, 0));
  R(cuCtxSynchronize());
  return 0;
}

// ------------------------------------------------------------------------------------------
// F. cuCtxGetApiVersion.
int CaseApiVersion() {
  cuInit(0);
  unsigned v = 0xdead;
  Say("no ctx: cuCtxGetApiVersion(NULL,&v) = %s v=%u", Name(cuCtxGetApiVersion(nullptr, &v)), v);
  R(cuCtxGetApiVersion(nullptr, nullptr));
  Base b;
  if (!b.Init()) return 2;
  v = 0xdead;
  Say("primary: = %s v=%u", Name(cuCtxGetApiVersion(b.ctx, &v)), v);
  v = 0xdead;
  Say("NULL (primary current): = %s v=%u", Name(cuCtxGetApiVersion(nullptr, &v)), v);
  R(cuCtxGetApiVersion(b.ctx, nullptr));
  R(cuCtxGetApiVersion(nullptr, nullptr));
  CUcontext c4 = nullptr, c3 = nullptr;
  R(cuCtxCreate(&c4, nullptr, 0, b.dev));
  v = 0xdead;
  Say("created v4: = %s v=%u", Name(cuCtxGetApiVersion(c4, &v)), v);
  using V3 = CUresult (*)(CUcontext*, CUexecAffinityParam*, int, unsigned, CUdevice);
  using V2 = CUresult (*)(CUcontext*, unsigned, CUdevice);
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  auto v3 = reinterpret_cast<V3>(dlsym(h, "cuCtxCreate_v3"));
  auto v2 = reinterpret_cast<V2>(dlsym(h, "cuCtxCreate_v2"));
  auto v1 = reinterpret_cast<V2>(dlsym(h, "cuCtxCreate"));
  if (v3 != nullptr) {
    R(v3(&c3, nullptr, 0, 0, b.dev));
    v = 0xdead;
    Say("created v3: = %s v=%u", Name(cuCtxGetApiVersion(c3, &v)), v);
  }
  CUcontext c2 = nullptr, c1 = nullptr;
  if (v2 != nullptr) {
    R(v2(&c2, 0, b.dev));
    v = 0xdead;
    Say("created v2: = %s v=%u", Name(cuCtxGetApiVersion(c2, &v)), v);
  }
  if (v1 != nullptr) {
    CUresult r = v1(&c1, 0, b.dev);
    Say("created v1 (cuCtxCreate unversioned) = %s", Name(r));
    v = 0xdead;
    if (r == CUDA_SUCCESS) Say("created v1: = %s v=%u", Name(cuCtxGetApiVersion(c1, &v)), v);
  }
  R(cuCtxDestroy(c4));
  v = 0xdead;
  Say("destroyed: = %s v=%u", Name(cuCtxGetApiVersion(c4, &v)), v);
  v = 0xdead;
  Say("bogus handle 0x10: = %s v=%u",
      Name(cuCtxGetApiVersion(reinterpret_cast<CUcontext>(0x10), &v)), v);
  return 0;
}

// ------------------------------------------------------------------------------------------
// G. NCCL, through dlopen.
typedef struct ncclComm* ncclComm_t;
struct ncclUniqueId {
  char internal[128];
};
typedef int ncclResult_t;
struct Nccl {
  void* h = nullptr;
  ncclResult_t (*GetVersion)(int*);
  ncclResult_t (*GetUniqueId)(ncclUniqueId*);
  ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*CommDestroy)(ncclComm_t);
  ncclResult_t (*CommAbort)(ncclComm_t);
  ncclResult_t (*CommCount)(ncclComm_t, int*);
  ncclResult_t (*CommCuDevice)(ncclComm_t, int*);
  ncclResult_t (*CommUserRank)(ncclComm_t, int*);
  ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t*);
  const char* (*GetErrorString)(ncclResult_t);
  const char* (*GetLastError)(ncclComm_t);
  ncclResult_t (*AllReduce)(const void*, void*, size_t, int, int, ncclComm_t, CUstream);
  ncclResult_t (*Broadcast)(const void*, void*, size_t, int, int, ncclComm_t, CUstream);
  ncclResult_t (*Reduce)(const void*, void*, size_t, int, int, int, ncclComm_t, CUstream);
  ncclResult_t (*AllGather)(const void*, void*, size_t, int, ncclComm_t, CUstream);
  ncclResult_t (*ReduceScatter)(const void*, void*, size_t, int, int, ncclComm_t, CUstream);
  ncclResult_t (*GroupStart)();
  ncclResult_t (*GroupEnd)();
  bool Load() {
    h = dlopen("libnccl.so.2", RTLD_NOW);
    if (h == nullptr) {
      Say("dlopen libnccl.so.2: %s", dlerror());
      return false;
    }
#define L(f) *reinterpret_cast<void**>(&f) = dlsym(h, "nccl" #f)
    L(GetVersion);
    L(GetUniqueId);
    L(CommInitRank);
    L(CommDestroy);
    L(CommAbort);
    L(CommCount);
    L(CommCuDevice);
    L(CommUserRank);
    L(CommGetAsyncError);
    L(GetErrorString);
    L(GetLastError);
    L(AllReduce);
    L(Broadcast);
    L(Reduce);
    L(AllGather);
    L(ReduceScatter);
    L(GroupStart);
    L(GroupEnd);
#undef L
    return true;
  }
  ncclComm_t Init1() {
    ncclUniqueId id;
    GetUniqueId(&id);
    ncclComm_t c = nullptr;
    ncclResult_t r = CommInitRank(&c, 1, id, 0);
    Say("ncclCommInitRank(nranks=1) = %d", r);
    return c;
  }
};
#define N(expr)                                                                 \
  do {                                                                          \
    ncclResult_t r_ = (expr);                                                   \
    Say("%s = %d (%s); last error \"%s\"", #expr, r_, nc.GetErrorString(r_),    \
        nc.GetLastError(nullptr));                                              \
  } while (0)

int CaseNcclBasic() {
  Base b;
  if (!b.Init()) return 2;
  Nccl nc;
  if (!nc.Load()) return 2;
  int ver = 0;
  N(nc.GetVersion(&ver));
  Say("version %d", ver);
  N(nc.GetVersion(nullptr));
  for (int i = -1; i <= 10; ++i) Say("ncclGetErrorString(%d) = \"%s\"", i, nc.GetErrorString(i));
  Say("ncclGetLastError(NULL) at start = \"%s\"", nc.GetLastError(nullptr));
  ncclComm_t c = nc.Init1();
  int v = -7;
  N(nc.CommCount(c, &v));
  Say("count %d", v);
  N(nc.CommCuDevice(c, &v));
  Say("cudev %d", v);
  N(nc.CommUserRank(c, &v));
  Say("rank %d", v);
  N(nc.CommCount(c, nullptr));
  N(nc.CommCount(nullptr, &v));
  N(nc.CommCuDevice(nullptr, &v));
  N(nc.CommUserRank(nullptr, &v));
  ncclResult_t ae = -1;
  N(nc.CommGetAsyncError(c, &ae));
  Say("async error %d", ae);
  N(nc.CommGetAsyncError(nullptr, &ae));
  N(nc.CommGetAsyncError(c, nullptr));
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  const size_t n = 1024;
  CUdeviceptr sb, rb;
  cuMemAlloc(&sb, n * 4 * 2);
  cuMemAlloc(&rb, n * 4 * 2);
  std::vector<float> h(n, 1.5f), o(n, 0);
  cuMemcpyHtoD(sb, h.data(), n * 4);
  cuMemsetD8(rb, 0, n * 4);
  void* S = reinterpret_cast<void*>(sb);
  void* Rb = reinterpret_cast<void*>(rb);
  N(nc.AllReduce(S, Rb, n, 7, 0, c, s));
  cuStreamSynchronize(s);
  cuMemcpyDtoH(o.data(), rb, n * 4);
  Say("out-of-place allreduce moved data: recv[0]=%g recv[n-1]=%g", o[0], o[n - 1]);
  N(nc.AllReduce(S, S, n, 7, 0, c, s));
  N(nc.AllReduce(S, Rb, 0, 7, 0, c, s));
  N(nc.AllReduce(nullptr, nullptr, 0, 7, 0, c, s));
  N(nc.AllReduce(nullptr, nullptr, n, 7, 0, c, s));
  N(nc.AllReduce(S, Rb, n, 99, 0, c, s));
  N(nc.AllReduce(S, Rb, n, 12, 0, c, s));
  N(nc.AllReduce(S, Rb, n, -1, 0, c, s));
  N(nc.AllReduce(S, Rb, n, 7, 99, c, s));
  N(nc.AllReduce(S, Rb, n, 7, 5, c, s));
  N(nc.AllReduce(S, Rb, n, 7, -1, c, s));
  N(nc.AllReduce(S, Rb, n, 7, 0, nullptr, s));
  N(nc.Broadcast(S, Rb, n, 7, 0, c, s));
  N(nc.Broadcast(S, Rb, n, 7, 1, c, s));
  N(nc.Broadcast(S, Rb, n, 7, -1, c, s));
  N(nc.Reduce(S, Rb, n, 7, 0, 0, c, s));
  N(nc.Reduce(S, Rb, n, 7, 0, 1, c, s));
  N(nc.Reduce(S, Rb, n, 7, 0, -1, c, s));
  N(nc.AllGather(S, Rb, n, 7, c, s));
  N(nc.AllGather(S, Rb, 0, 7, c, s));
  N(nc.ReduceScatter(S, Rb, n, 7, 0, c, s));
  N(nc.ReduceScatter(S, Rb, n, 99, 0, c, s));
  N(nc.AllGather(S, Rb, n, 99, c, s));
  Say("stream sync = %s", Name(cuStreamSynchronize(s)));
  N(nc.CommGetAsyncError(c, &ae));
  Say("async error %d", ae);
  Say("ncclGetLastError(comm) = \"%s\"", nc.GetLastError(c));
  N(nc.GroupEnd());
  N(nc.GroupStart());
  N(nc.GroupEnd());
  N(nc.GroupStart());
  N(nc.AllReduce(S, Rb, n, 99, 0, c, s));
  N(nc.GroupEnd());
  N(nc.CommDestroy(nullptr));
  N(nc.CommAbort(nullptr));
  N(nc.CommAbort(c));
  ncclComm_t c2 = nc.Init1();
  N(nc.CommDestroy(c2));
  return 0;
}

int CaseNcclBogus(const std::string& coll, const std::string& kind, bool inplace) {
  Base b;
  if (!b.Init()) return 2;
  Nccl nc;
  if (!nc.Load()) return 2;
  ncclComm_t c = nc.Init1();
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  const size_t n = 1024;
  void* bogus = kind == "host" ? malloc(n * 16) : reinterpret_cast<void*>(0x10000);
  if (kind == "host") memset(bogus, 0, n * 16);
  CUdeviceptr good;
  cuMemAlloc(&good, n * 16);
  cuMemsetD8(good, 0, n * 16);
  void* send = bogus;
  void* recv = inplace ? bogus : reinterpret_cast<void*>(good);
  ncclResult_t r = -1;
  if (coll == "allreduce") r = nc.AllReduce(send, recv, n, 7, 0, c, s);
  if (coll == "broadcast") r = nc.Broadcast(send, recv, n, 7, 0, c, s);
  if (coll == "reduce") r = nc.Reduce(send, recv, n, 7, 0, 0, c, s);
  if (coll == "allgather") r = nc.AllGather(send, recv, n, 7, c, s);
  if (coll == "reducescatter") r = nc.ReduceScatter(send, recv, n, 7, 0, c, s);
  Say("%s %s %s = %d (%s); last \"%s\"", coll.c_str(), kind.c_str(),
      inplace ? "in-place" : "bogus-send->device-recv", r, nc.GetErrorString(r),
      nc.GetLastError(c));
  CUresult sr = cuStreamSynchronize(s);
  Say("stream sync = %s", Name(sr));
  ncclResult_t ae = -1;
  nc.CommGetAsyncError(c, &ae);
  Say("async error after = %d", ae);
  CUdeviceptr g2;
  cuMemAlloc(&g2, n * 4);
  r = nc.AllReduce(reinterpret_cast<void*>(good), reinterpret_cast<void*>(g2), n, 7, 0, c, s);
  Say("later valid allreduce = %d, sync = %s", r, Name(cuStreamSynchronize(s)));
  Say("ctx sync = %s", Name(cuCtxSynchronize()));
  Say("ncclCommDestroy = %d", nc.CommDestroy(c));
  return 0;
}

// ------------------------------------------------------------------------------------------
// H. Cost model.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int CaseCost() {
  Base b;
  if (!b.Init()) return 2;
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUevent e0, e1;
  cuEventCreate(&e0, 0);
  cuEventCreate(&e1, 0);
  const size_t kMax = 256u << 20;
  CUdeviceptr d0, d1;
  cuMemAlloc(&d0, kMax);
  cuMemAlloc(&d1, kMax);
  void* pinned = nullptr;
  cuMemHostAlloc(&pinned, kMax, 0);
  void* pageable = malloc(kMax);
  memset(pageable, 1, kMax);
  memset(pinned, 1, kMax);
  auto timeit = [&](const char* what, size_t bytes, const std::function<CUresult()>& op) {
    int reps = bytes >= (64u << 20) ? 5 : 20;
    op();
    cuStreamSynchronize(s);
    std::vector<double> one, host;
    for (int i = 0; i < reps; ++i) {
      cuEventRecord(e0, s);
      double t0 = NowUs();
      CUresult r = op();
      double t1 = NowUs();
      cuEventRecord(e1, s);
      cuEventSynchronize(e1);
      float ms = 0;
      cuEventElapsedTime(&ms, e0, e1);
      if (r != CUDA_SUCCESS) Say("%s failed %s", what, Name(r));
      one.push_back(ms * 1000.0);
      host.push_back(t1 - t0);
    }
    double med = Median(one);
    Say("COST %s bytes %zu: device %.2f us (%.2f GB/s), host call %.2f us", what, bytes, med,
        med > 0 ? bytes / med / 1e3 : 0.0, Median(host));
  };
  const size_t sizes[] = {4096, 65536, 1u << 20, 16u << 20, 256u << 20};
  for (size_t n : sizes) {
    timeit("HtoD_pinned", n, [&] { return cuMemcpyHtoDAsync(d0, pinned, n, s); });
    timeit("DtoH_pinned", n, [&] { return cuMemcpyDtoHAsync(pinned, d0, n, s); });
    timeit("HtoD_pageable", n, [&] { return cuMemcpyHtoDAsync(d0, pageable, n, s); });
    timeit("DtoH_pageable", n, [&] { return cuMemcpyDtoHAsync(pageable, d0, n, s); });
    timeit("DtoD", n, [&] { return cuMemcpyDtoDAsync(d1, d0, n, s); });
    timeit("memsetD8", n, [&] { return cuMemsetD8Async(d0, 3, n, s); });
    timeit("memsetD32", n, [&] { return cuMemsetD32Async(d0, 3, n / 4, s); });
  }
  timeit("empty_kernel", 0, [&] { return b.LaunchEmpty(s); });
  timeit("host_func", 0, [&] { return cuLaunchHostFunc(s, Nop, nullptr); });
  timeit("event_record_only", 0, [&] { return CUDA_SUCCESS; });
  // Launch-to-complete wall time of an empty kernel, host side.
  std::vector<double> wall;
  for (int i = 0; i < 50; ++i) {
    double t0 = NowUs();
    b.LaunchEmpty(s);
    cuStreamSynchronize(s);
    wall.push_back(NowUs() - t0);
  }
  Say("COST empty kernel launch+sync wall median %.2f us", Median(wall));
  // Host function: time from enqueue (idle stream) to the function running.
  static std::atomic<double> ran_at{0};
  wall.clear();
  for (int i = 0; i < 50; ++i) {
    double t0 = NowUs();
    cuLaunchHostFunc(s, [](void*) { ran_at = NowUs(); }, nullptr);
    cuStreamSynchronize(s);
    wall.push_back(ran_at.load() - t0);
  }
  Say("COST host func enqueue-to-run wall median %.2f us", Median(wall));
  // Sync copy wall time (pageable, legacy).
  for (size_t n : {size_t{4096}, size_t{1} << 20}) {
    wall.clear();
    for (int i = 0; i < 20; ++i) {
      double t0 = NowUs();
      cuMemcpyHtoD(d0, pageable, n);
      wall.push_back(NowUs() - t0);
    }
    Say("COST sync cuMemcpyHtoD pageable %zu wall median %.2f us", n, Median(wall));
  }
  Nccl nc;
  if (nc.Load()) {
    ncclComm_t c = nc.Init1();
    for (size_t n : {size_t{4096}, size_t{1} << 20, size_t{64} << 20}) {
      void* S = reinterpret_cast<void*>(d0);
      void* Rb = reinterpret_cast<void*>(d1);
      timeit("nccl_allreduce_oop", n, [&] { return static_cast<CUresult>(
                                                nc.AllReduce(S, Rb, n / 4, 7, 0, c, s)); });
      timeit("nccl_allreduce_inplace", n, [&] { return static_cast<CUresult>(
                                                    nc.AllReduce(S, S, n / 4, 7, 0, c, s)); });
    }
    nc.CommDestroy(c);
  }
  return 0;
}

// ------------------------------------------------------------------------------------------
// I. Issue 14 odds and ends; and cuEventElapsedTime's NULL arguments.
int CaseReset() {
  Base b;
  if (!b.Init()) return 2;
  unsigned f = 0xdead;
  int active = -1;
  auto state = [&](const char* when) {
    f = 0xdead;
    active = -1;
    CUresult r = cuDevicePrimaryCtxGetState(b.dev, &f, &active);
    Say("%s: GetState = %s flags 0x%x active %d", when, Name(r), f, active);
  };
  state("retained");
  R(cuDevicePrimaryCtxSetFlags(b.dev, CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_LMEM_RESIZE_TO_MAX));
  state("after SetFlags(BLOCKING_SYNC|LMEM_RESIZE_TO_MAX)");
  unsigned cf = 0;
  R(cuCtxGetFlags(&cf));
  Say("  cuCtxGetFlags 0x%x", cf);
  R(cuDevicePrimaryCtxReset(b.dev));
  state("after Reset (was retained once)");
  CUcontext cur = nullptr;
  R(cuCtxGetCurrent(&cur));
  Say("  current after reset: %s", cur == nullptr ? "NULL" : cur == b.ctx ? "same handle" : "other");
  CUdeviceptr p = 0;
  R(cuMemAlloc(&p, 16));
  state("after cuMemAlloc on the reset primary ctx");
  R(cuCtxGetFlags(&cf));
  Say("  cuCtxGetFlags 0x%x", cf);
  R(cuDevicePrimaryCtxRelease(b.dev));
  state("after Release");
  R(cuDevicePrimaryCtxRelease(b.dev));
  state("after second Release");
  R(cuDevicePrimaryCtxReset(b.dev));
  state("after Reset of inactive");
  R(cuDevicePrimaryCtxSetFlags(b.dev, CU_CTX_SCHED_SPIN));
  state("after SetFlags(SPIN) inactive");
  CUcontext c = nullptr;
  R(cuDevicePrimaryCtxRetain(&c, b.dev));
  state("after Retain");
  Say("  same handle as first: %s", c == b.ctx ? "yes" : "no");
  R(cuDevicePrimaryCtxReset(b.dev));
  state("after Reset");
  R(cuDevicePrimaryCtxGetState(b.dev, nullptr, &active));
  R(cuDevicePrimaryCtxGetState(b.dev, &f, nullptr));
  return 0;
}

int CaseDestroyedCtx() {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext pc;
  cuDevicePrimaryCtxRetain(&pc, dev);
  CUcontext c = nullptr;
  R(cuCtxCreate(&c, nullptr, 0, dev));
  CUdeviceptr p = 0;
  R(cuMemAlloc(&p, 4096));
  CUstream s;
  R(cuStreamCreate(&s, 0));
  R(cuCtxDestroy(c));
  CUcontext cur = reinterpret_cast<CUcontext>(1);
  R(cuCtxGetCurrent(&cur));
  Say("  current after destroying the current ctx: %s",
      cur == nullptr ? "NULL" : cur == c ? "the destroyed handle" : "other");
  CUdeviceptr q = 0;
  R(cuMemAlloc(&q, 4096));
  CUstream s2 = nullptr;
  R(cuStreamCreate(&s2, 0));
  R(cuCtxSynchronize());
  R(cuCtxSetCurrent(c));
  R(cuCtxGetCurrent(&cur));
  Say("  current after SetCurrent(destroyed): %s",
      cur == nullptr ? "NULL" : cur == c ? "the destroyed handle" : "other");
  R(cuMemAlloc(&q, 4096));
  R(cuStreamCreate(&s2, 0));
  R(cuCtxPushCurrent(c));
  R(cuCtxSetCurrent(pc));
  R(cuMemFree(p));
  R(cuStreamQuery(s));
  R(cuStreamDestroy(s));
  unsigned v = 0;
  R(cuCtxGetApiVersion(c, &v));
  R(cuCtxDestroy(c));
  R(cuMemAlloc(&q, 4096));
  return 0;
}

int CaseOutParams() {
  Base b;
  if (!b.Init()) return 2;
  CUdeviceptr p = 0xdeadbeef;
  CUresult r = cuMemAlloc(&p, 1ull << 50);
  Say("cuMemAlloc(1<<50) = %s, *dptr %s (0x%llx)", Name(r), p == 0xdeadbeef ? "untouched" : "written",
      static_cast<unsigned long long>(p));
  p = 0xdeadbeef;
  r = cuMemAlloc(&p, 0);
  Say("cuMemAlloc(0) = %s, *dptr 0x%llx", Name(r), static_cast<unsigned long long>(p));
  CUstream s = reinterpret_cast<CUstream>(0xdeadbeef);
  r = cuStreamCreate(&s, 0xff);
  Say("cuStreamCreate(flags 0xff) = %s, *phStream %p", Name(r), static_cast<void*>(s));
  s = reinterpret_cast<CUstream>(0xdeadbeef);
  r = cuStreamCreateWithPriority(&s, 0xff, 0);
  Say("cuStreamCreateWithPriority(flags 0xff) = %s, *phStream %p", Name(r), static_cast<void*>(s));
  CUevent e = reinterpret_cast<CUevent>(0xdeadbeef);
  r = cuEventCreate(&e, 0xff);
  Say("cuEventCreate(flags 0xff) = %s, *phEvent %p", Name(r), static_cast<void*>(e));
  CUmemoryPool pool;
  cuDeviceGetDefaultMemPool(&pool, b.dev);
  CUstream ss;
  cuStreamCreate(&ss, 0);
  p = 0xdeadbeef;
  r = cuMemAllocFromPoolAsync(&p, 1ull << 50, pool, ss);
  Say("cuMemAllocFromPoolAsync(1<<50) = %s, *dptr 0x%llx", Name(r),
      static_cast<unsigned long long>(p));
  p = 0xdeadbeef;
  r = cuMemAllocAsync(&p, 1ull << 50, ss);
  Say("cuMemAllocAsync(1<<50) = %s, *dptr 0x%llx", Name(r), static_cast<unsigned long long>(p));
  void* h = reinterpret_cast<void*>(0xdeadbeef);
  r = cuMemHostAlloc(&h, 1ull << 50, 0);
  Say("cuMemHostAlloc(1<<50) = %s, *pp %p", Name(r), h);
  CUcontext c = reinterpret_cast<CUcontext>(0xdeadbeef);
  r = cuDevicePrimaryCtxRetain(&c, 99);
  Say("cuDevicePrimaryCtxRetain(dev 99) = %s, *pctx %p", Name(r), static_cast<void*>(c));
  CUdevice d = 12345;
  r = cuDeviceGet(&d, 99);
  Say("cuDeviceGet(99) = %s, *device %d", Name(r), d);
  return 0;
}

int CasePtrAttr() {
  Base b;
  if (!b.Init()) return 2;
  CUstream s;
  cuStreamCreate(&s, 0);
  CUmemoryPool def;
  cuDeviceGetDefaultMemPool(&def, b.dev);
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool mine;
  R(cuMemPoolCreate(&mine, &props));
  CUdeviceptr pd = 0, pm = 0, pa = 0;
  R(cuMemAllocAsync(&pd, 1000, s));
  R(cuMemAllocFromPoolAsync(&pm, 3000, mine, s));
  R(cuMemAlloc(&pa, 1000));
  cuStreamSynchronize(s);
  struct {
    const char* name;
    CUdeviceptr p;
    CUmemoryPool pool;
  } ptrs[] = {{"default-pool+0", pd, def}, {"default-pool+100", pd + 100, def},
              {"own-pool+0", pm, mine},    {"cuMemAlloc+0", pa, nullptr},
              {"cuMemAlloc+100", pa + 100, nullptr}};
  for (auto& x : ptrs) {
    unsigned mt = 0;
    CUresult r = cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, x.p);
    Say("%s MEMORY_TYPE = %s %u", x.name, Name(r), mt);
    CUcontext c = reinterpret_cast<CUcontext>(1);
    r = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, x.p);
    Say("%s CONTEXT = %s %s", x.name, Name(r),
        c == nullptr ? "NULL" : c == b.ctx ? "primary" : "other");
    CUmemoryPool mp = reinterpret_cast<CUmemoryPool>(1);
    r = cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, x.p);
    Say("%s MEMPOOL_HANDLE = %s %s", x.name, Name(r),
        mp == nullptr ? "NULL" : mp == x.pool ? "its pool" : mp == def ? "default" : "other");
    int im = -1;
    r = cuPointerGetAttribute(&im, CU_POINTER_ATTRIBUTE_IS_MANAGED, x.p);
    Say("%s IS_MANAGED = %s %d", x.name, Name(r), im);
    CUdeviceptr rs = 1;
    r = cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, x.p);
    Say("%s RANGE_START = %s base%+lld", x.name, Name(r),
        static_cast<long long>(rs) - static_cast<long long>(x.p));
    size_t sz = 1;
    r = cuPointerGetAttribute(&sz, CU_POINTER_ATTRIBUTE_RANGE_SIZE, x.p);
    Say("%s RANGE_SIZE = %s %zu", x.name, Name(r), sz);
    int ord = -1;
    r = cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, x.p);
    Say("%s DEVICE_ORDINAL = %s %d", x.name, Name(r), ord);
    int mapped = -1;
    r = cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, x.p);
    Say("%s MAPPED = %s %d", x.name, Name(r), mapped);
    int ipc = -1;
    r = cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, x.p);
    Say("%s IS_LEGACY_CUDA_IPC_CAPABLE = %s %d", x.name, Name(r), ipc);
    unsigned long long ht = 77;
    r = cuPointerGetAttribute(&ht, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, x.p);
    Say("%s ALLOWED_HANDLE_TYPES = %s %llu", x.name, Name(r), ht);
    int sm = -1;
    r = cuPointerGetAttribute(&sm, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, x.p);
    Say("%s SYNC_MEMOPS = %s %d", x.name, Name(r), sm);
    CUdeviceptr dp = 1;
    r = cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, x.p);
    Say("%s DEVICE_POINTER = %s %s", x.name, Name(r), dp == x.p ? "same" : "other");
    void* hp = reinterpret_cast<void*>(1);
    r = cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, x.p);
    Say("%s HOST_POINTER = %s %p", x.name, Name(r), hp);
    size_t ms = 1;
    r = cuPointerGetAttribute(&ms, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, x.p);
    Say("%s MAPPING_SIZE = %s %zu", x.name, Name(r), ms);
    unsigned af = 77;
    r = cuPointerGetAttribute(&af, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, x.p);
    Say("%s ACCESS_FLAGS = %s %u", x.name, Name(r), af);
  }
  // After the pool allocation is freed (and the free completed).
  R(cuMemFreeAsync(pd, s));
  cuStreamSynchronize(s);
  unsigned mt = 77;
  CUresult r = cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pd);
  Say("freed default-pool MEMORY_TYPE = %s %u", Name(r), mt);
  return 0;
}

std::string Esc(const char* b, int n) {
  std::string o;
  for (int i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(b[i]);
    if (c == 0)
      o += "\\0";
    else if (c < 32 || c > 126) {
      char t[8];
      snprintf(t, sizeof t, "\\x%02x", c);
      o += t;
    } else
      o += static_cast<char>(c);
  }
  return o;
}
int CasePciBus() {
  cuInit(0);
  char buf[64];
  memset(buf, 'X', sizeof buf);
  CUresult r = cuDeviceGetPCIBusId(buf, 64, 0);
  Say("cuDeviceGetPCIBusId(64) = %s \"%s\"", Name(r), Esc(buf, 20).c_str());
  std::string id(buf);
  for (int len : {0, 1, 5, 12, 13, 14, -1}) {
    memset(buf, 'X', sizeof buf);
    r = cuDeviceGetPCIBusId(buf, len, 0);
    Say("cuDeviceGetPCIBusId(len %d) = %s buf \"%s\"", len, Name(r), Esc(buf, 20).c_str());
  }
  R(cuDeviceGetPCIBusId(nullptr, 64, 0));
  R(cuDeviceGetPCIBusId(buf, 64, 99));
  std::string lower = id, shortid = id.substr(5);
  for (auto& ch : lower) ch = static_cast<char>(tolower(ch));
  const std::string ids[] = {id,
                             lower,
                             shortid,
                             id.substr(0, id.size() - 2),
                             id + "x",
                             id + " ",
                             " " + id,
                             "0000:99:00.0",
                             "",
                             "garbage",
                             "0:0:6.0",
                             "00000000:00:06.0",
                             "0000:00:06.9",
                             "0000-00-06.0",
                             "1:2",
                             "0000:00:06.0:junk"};
  for (auto& s : ids) {
    CUdevice d = 12345;
    r = cuDeviceGetByPCIBusId(&d, s.c_str());
    Say("cuDeviceGetByPCIBusId(\"%s\") = %s dev %d", s.c_str(), Name(r), d);
  }
  R(cuDeviceGetByPCIBusId(nullptr, id.c_str()));
  CUdevice d = 0;
  R(cuDeviceGetByPCIBusId(&d, nullptr));
  return 0;
}

int CaseElapsed() {
  Base b;
  if (!b.Init()) return 2;
  CUstream s;
  cuStreamCreate(&s, 0);
  CUevent e0, e1, nt, unrec, pend;
  cuEventCreate(&e0, 0);
  cuEventCreate(&e1, 0);
  cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING);
  cuEventCreate(&unrec, 0);
  cuEventCreate(&pend, 0);
  cuEventRecord(e0, s);
  cuEventRecord(e1, s);
  cuEventRecord(nt, s);
  cuStreamSynchronize(s);
  float ms = -1;
  Say("valid = %s", Name(cuEventElapsedTime(&ms, e0, e1)));
  R(cuEventElapsedTime(nullptr, e0, e1));
  R(cuEventElapsedTime(&ms, nullptr, e1));
  R(cuEventElapsedTime(&ms, e0, nullptr));
  R(cuEventElapsedTime(&ms, nullptr, nullptr));
  R(cuEventElapsedTime(nullptr, nullptr, nullptr));
  R(cuEventElapsedTime(&ms, e0, nt));
  R(cuEventElapsedTime(&ms, nt, e1));
  R(cuEventElapsedTime(&ms, e0, unrec));
  R(cuEventElapsedTime(&ms, unrec, e1));
  R(cuEventElapsedTime(nullptr, e0, unrec));
  b.LaunchSpin(s, 300ull * 1000 * 1000);
  cuEventRecord(pend, s);
  R(cuEventElapsedTime(&ms, e0, pend));
  R(cuEventElapsedTime(&ms, pend, e0));
  cuStreamSynchronize(s);
  ms = -1;
  Say("e1->e0 reversed = %s %.4f", Name(cuEventElapsedTime(&ms, e1, e0)), ms);
  R(cuEventDestroy(unrec));
  R(cuEventElapsedTime(&ms, e0, unrec));
  // cuEventElapsedTime_v2 (13.0) if present.
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  using F = CUresult (*)(float*, CUevent, CUevent);
  auto v2 = reinterpret_cast<F>(dlsym(h, "cuEventElapsedTime_v2"));
  Say("cuEventElapsedTime_v2 symbol %s", v2 ? "present" : "absent");
  if (v2) {
    Say("v2 valid = %s", Name(v2(&ms, e0, e1)));
    Say("v2 NULL out = %s", Name(v2(nullptr, e0, e1)));
    Say("v2 NULL start = %s", Name(v2(&ms, nullptr, e1)));
    Say("v2 NULL end = %s", Name(v2(&ms, e0, nullptr)));
  }
  return 0;
}


// Second call: values the first run printed before the call (argument order), and limit edges.
int CaseGaps() {
  Base b;
  if (!b.Init()) return 2;
  int v = -7;
  CUresult r = cuDeviceCanAccessPeer(&v, 0, 0);
  Say("cuDeviceCanAccessPeer(&v,0,0) = %s v=%d", Name(r), v);
  unsigned av = 0xdead;
  r = cuCtxGetApiVersion(b.ctx, &av);
  Say("cuCtxGetApiVersion(primary) = %s v=%u", Name(r), av);
  av = 0xdead;
  r = cuCtxGetApiVersion(nullptr, &av);
  Say("cuCtxGetApiVersion(NULL, primary current) = %s v=%u", Name(r), av);
  CUcontext c4 = nullptr;
  cuCtxCreate(&c4, nullptr, 0, b.dev);
  av = 0xdead;
  r = cuCtxGetApiVersion(c4, &av);
  Say("cuCtxGetApiVersion(created v4) = %s v=%u", Name(r), av);
  using V2 = CUresult (*)(CUcontext*, unsigned, CUdevice);
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  auto v2 = reinterpret_cast<V2>(dlsym(h, "cuCtxCreate_v2"));
  CUcontext c2 = nullptr;
  if (v2 != nullptr && v2(&c2, 0, b.dev) == CUDA_SUCCESS) {
    av = 0xdead;
    r = cuCtxGetApiVersion(c2, &av);
    Say("cuCtxGetApiVersion(created v2) = %s v=%u", Name(r), av);
  }
  cuCtxSetCurrent(b.ctx);
  CUevent e0, e1;
  cuEventCreate(&e0, 0);
  cuEventCreate(&e1, 0);
  cuEventRecord(e0, nullptr);
  b.LaunchSpin(nullptr, 1000000);
  cuEventRecord(e1, nullptr);
  cuCtxSynchronize();
  float ms = -1;
  r = cuEventElapsedTime(&ms, e1, e0);
  Say("cuEventElapsedTime_v2(e1, e0) reversed = %s ms=%.4f", Name(r), ms);
  ms = -1;
  r = cuEventElapsedTime(&ms, e0, e0);
  Say("cuEventElapsedTime_v2(e0, e0) = %s ms=%.4f", Name(r), ms);
  using F = CUresult (*)(float*, CUevent, CUevent);
  auto v1 = reinterpret_cast<F>(dlsym(h, "cuEventElapsedTime"));
  if (v1) {
    Say("cuEventElapsedTime (v1 symbol) NULL out = %s", Name(v1(nullptr, e0, e1)));
    Say("cuEventElapsedTime (v1 symbol) NULL start = %s", Name(v1(&ms, nullptr, e1)));
    Say("cuEventElapsedTime (v1 symbol) NULL end = %s", Name(v1(&ms, e0, nullptr)));
  }
  int attr = 0;
  cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, b.dev);
  Say("MAX_PERSISTING_L2_CACHE_SIZE attribute %d", attr);
  cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, b.dev);
  Say("L2_CACHE_SIZE attribute %d", attr);
  cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, b.dev);
  Say("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN %d", attr);
  size_t fr = 0, tot = 0;
  cuMemGetInfo(&fr, &tot);
  Say("cuMemGetInfo free %zu total %zu", fr, tot);
  auto probe = [&](int l, size_t val) {
    size_t back = 0xdead;
    CUresult s = cuCtxSetLimit(static_cast<CUlimit>(l), val);
    CUresult g = cuCtxGetLimit(&back, static_cast<CUlimit>(l));
    Say("limit %d set %zu = %s; read back %s %zu", l, val, Name(s), Name(g), back);
  };
  // Stack: the largest accepted value (binary search), and rounding.
  size_t lo = 4096, hi = 1 << 20;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (cuCtxSetLimit(CU_LIMIT_STACK_SIZE, mid) == CUDA_SUCCESS) lo = mid; else hi = mid;
  }
  Say("stack: largest accepted %zu", lo);
  for (size_t x : {lo, lo + 1, size_t{17}, size_t{31}, size_t{33}, size_t{1024}}) probe(0, x);
  const size_t big[] = {size_t{1} << 31, (size_t{1} << 31) + 1, size_t{1} << 32,
                        size_t{1} << 34, size_t{1} << 35, SIZE_MAX - 4095, SIZE_MAX - 65535,
                        SIZE_MAX - (size_t{1} << 21), size_t{1} << 63, (size_t{1} << 63) + 1};
  for (size_t x : {size_t{524287}, size_t{524289}, size_t{600000}, size_t{1048577},
                   size_t{8650752}})
    probe(1, x);
  for (size_t x : big) probe(1, x);
  for (size_t x : {size_t{4194305}, size_t{5000000}, size_t{8388609}, size_t{1} << 33})
    probe(2, x);
  for (size_t x : big) probe(2, x);
  for (size_t x : {size_t{31}, size_t{33}, size_t{100000}, size_t{599185}, size_t{599186},
                   size_t{599187}})
    probe(4, x);
  for (size_t x : {size_t{2}, size_t{31}, size_t{32}, size_t{33}, size_t{64}, size_t{100},
                   size_t{127}, size_t{128}, size_t{129}})
    probe(5, x);
  for (size_t x : {size_t{3932160}, size_t{3932161}, size_t{7864320}, size_t{11796480},
                   size_t{11796481}, size_t{23592960}, size_t{44040192}, size_t{45000000},
                   size_t{47185920}, size_t{47185921}, size_t{62914560}, size_t{62914561},
                   size_t{100000000}})
    probe(6, x);
  return 0;
}

int CaseDestroyed2() {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext pc;
  cuDevicePrimaryCtxRetain(&pc, dev);
  CUcontext c = nullptr;
  R(cuCtxCreate(&c, nullptr, 0, dev));
  CUdeviceptr p = 0;
  R(cuMemAlloc(&p, 4096));
  R(cuCtxDestroy(c));
  R(cuCtxDestroy(c));
  R(cuCtxSetCurrent(pc));
  CUdeviceptr q = 0;
  R(cuMemAlloc(&q, 4096));
  R(cuMemFree(p));
  R(cuMemFree(q));
  unsigned f = 0;
  R(cuCtxGetFlags(&f));
  CUdevice d = -1;
  R(cuCtxPushCurrent(c));
  R(cuCtxGetDevice(&d));
  R(cuCtxSynchronize());
  R(cuCtxGetFlags(&f));
  CUcontext popped = nullptr;
  R(cuCtxPopCurrent(&popped));
  Say("  popped the destroyed handle: %s", popped == c ? "yes" : "no");
  return 0;
}

int CaseInfo() {
  cuInit(0);
  int v = 0;
  cuDriverGetVersion(&v);
  Say("cuDriverGetVersion %d", v);
  char name[128] = {};
  cuDeviceGetName(name, sizeof name, 0);
  Say("device %s", name);
  Nccl nc;
  if (nc.Load()) {
    int nv = 0;
    nc.GetVersion(&nv);
    Say("ncclGetVersion %d", nv);
  }
  return 0;
}

// ------------------------------------------------------------------------------------------
std::vector<std::string> ParallelCases() {
  std::vector<std::string> c = {"info",          "threads",  "blocking",        "limits",
                                "peer",          "addcb",    "addcb_destroyed", "addcb_bogus",
                                "apiversion",    "reset",    "destroyed_ctx",   "outparams",
                                "ptrattr",       "pcibus",   "elapsed",         "nccl_basic"};
  for (const char* e : kCbEntries) {
    c.push_back(std::string("cb:hostfn:") + e);
    c.push_back(std::string("cb:addcb:") + e);
    c.push_back(std::string("cbset:hostfn:") + e);
  }
  for (const char* coll : {"allreduce", "broadcast", "reduce", "allgather", "reducescatter"})
    for (const char* kind : {"host", "unalloc"})
      for (const char* place : {"inplace", "oop"})
        c.push_back(std::string("ncclbogus:") + coll + ":" + kind + ":" + place);
  return c;
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  auto parts = [&](int i) {
    size_t a = 0;
    for (int k = 0; k < i; ++k) a = c.find(':', a) + 1;
    size_t e = c.find(':', a);
    return c.substr(a, e == std::string::npos ? std::string::npos : e - a);
  };
  if (c.rfind("cb:", 0) == 0) return CaseCallback(parts(1), parts(2), false);
  if (c.rfind("cbset:", 0) == 0) return CaseCallback(parts(1), parts(2), true);
  if (c.rfind("ncclbogus:", 0) == 0) return CaseNcclBogus(parts(1), parts(2), parts(3) == "inplace");
  static const std::map<std::string, int (*)()> kCases = {
      {"info", CaseInfo},       {"threads", CaseThreads},
      {"blocking", CaseBlocking}, {"limits", CaseLimits},
      {"peer", CasePeer},       {"addcb", CaseAddCallback},
      {"addcb_destroyed", CaseAddCallbackDestroyed}, {"addcb_bogus", CaseAddCallbackBogus},
      {"apiversion", CaseApiVersion}, {"reset", CaseReset},
      {"destroyed_ctx", CaseDestroyedCtx}, {"outparams", CaseOutParams},
      {"ptrattr", CasePtrAttr}, {"pcibus", CasePciBus},
      {"elapsed", CaseElapsed}, {"nccl_basic", CaseNcclBasic},
      {"cost", CaseCost}, {"gaps", CaseGaps}, {"destroyed2", CaseDestroyed2}};
  auto it = kCases.find(c);
  if (it == kCases.end()) {
    fprintf(stderr, "unknown case %s\n", c.c_str());
    return 3;
  }
  return it->second();
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
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && static_cast<int>(running.size()) < jobs) {
      Child ch;
      ch.name = cases[next++];
      ch.file = "/tmp/probe_case_" + std::to_string(seq++) + ".txt";
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
    printf("== %s: %s\n", c.c_str(), verdict[c].c_str());
  }
  fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr, "usage: probe all [jobs] | probe list | probe <case>\n");
    return 2;
  }
  std::string a = argv[1];
  if (a == "list") {
    for (auto& c : ParallelCases()) printf("%s\n", c.c_str());
    printf("cost\n");
    return 0;
  }
  if (a == "second") {
    RunAll(argv[0], {"gaps", "destroyed2"}, 2, 60.0);
    return 0;
  }
  if (a == "all" || a == "parallel") {
    int jobs = argc > 2 ? atoi(argv[2]) : 8;
    RunAll(argv[0], ParallelCases(), jobs, 6.0);
    if (a == "all") RunAll(argv[0], {"cost"}, 1, 120.0);
    return 0;
  }
  return RunOne(a);
}
