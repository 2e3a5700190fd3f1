// Stream/context-area probe for cuhal: how the real driver answers the stream and context entry
// points that fakecuda still answered with a generated fallback: ids (cuStreamGetId, cuCtxGetId),
// cuStreamGetDevice, stream attributes (cuStreamGet/SetAttribute, cuStreamCopyAttributes), stream
// memory operations (cuStreamWaitValue32/64_v2, cuStreamWriteValue32/64_v2,
// cuStreamBatchMemOp_v2), cuStreamAttachMemAsync, cuStreamBeginCaptureToGraph,
// cuStreamUpdateCaptureDependencies_v2, and the context calls cuCtxSetFlags,
// cuCtxRecordEvent/WaitEvent, cuCtxGet/SetCacheConfig, cuCtxGet/SetSharedMemConfig,
// cuCtxResetPersistingL2Cache, cuCtxGetExecAffinity, cuCtxAttach/Detach, plus the per-thread
// (_ptsz) forms. Valid and invalid calls, before cuInit, with no current context, and with
// garbage or destroyed handles. A plain driver-API program (cuda.h, -lcuda) like misc_probe.cc.
//
//   streamctx_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                                `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   streamctx_probe list         the cases
//   streamctx_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address, handle or id is printed: ids only as
// relations (equal, distinct, differences within one process). The deprecated entry points,
// the per-thread forms and the older-ABI forms are resolved with dlsym, so the probe compiles
// without deprecation warnings and loads on any libcuda.
//
//   g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include ci/gpu-probes/streamctx_probe.cc
//       -o /tmp/streamctx_probe -lcuda -ldl -lpthread && /tmp/streamctx_probe all 8
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

template <typename T>
T Sym(const char* name) {
  return reinterpret_cast<T>(dlsym(RTLD_DEFAULT, name));
}

// Entry points resolved at run time (deprecated, per-thread or older ABI).
using CtxAttachFn = CUresult (*)(CUcontext*, unsigned int);
using CtxDetachFn = CUresult (*)(CUcontext);
using GetShmFn = CUresult (*)(CUsharedconfig*);
using SetShmFn = CUresult (*)(CUsharedconfig);
using StreamIdFn = CUresult (*)(CUstream, unsigned long long*);
using StreamDevFn = CUresult (*)(CUstream, CUdevice*);
using GetAttrFn = CUresult (*)(CUstream, CUstreamAttrID, CUstreamAttrValue*);
using SetAttrFn = CUresult (*)(CUstream, CUstreamAttrID, const CUstreamAttrValue*);
using CopyAttrFn = CUresult (*)(CUstream, CUstream);
using Value32Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using Value64Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
using BatchFn = CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);
using AttachFn = CUresult (*)(CUstream, CUdeviceptr, size_t, unsigned int);
using BeginToGraphFn = CUresult (*)(CUstream, CUgraph, const CUgraphNode*, const CUgraphEdgeData*,
                                    size_t, CUstreamCaptureMode);
using UpdateDepsV2Fn = CUresult (*)(CUstream, CUgraphNode*, const CUgraphEdgeData*, size_t,
                                    unsigned int);
using UpdateDepsV1Fn = CUresult (*)(CUstream, CUgraphNode*, size_t, unsigned int);

CUresult Missing(const char* name) {
  Say("%s not exported", name);
  return CUDA_ERROR_NOT_FOUND;
}

CUresult CtxAttach(CUcontext* c, unsigned int f) {
  auto fn = Sym<CtxAttachFn>("cuCtxAttach");
  return fn ? fn(c, f) : Missing("cuCtxAttach");
}
CUresult CtxDetach(CUcontext c) {
  auto fn = Sym<CtxDetachFn>("cuCtxDetach");
  return fn ? fn(c) : Missing("cuCtxDetach");
}
CUresult CtxGetSharedMemConfig(CUsharedconfig* c) {
  auto fn = Sym<GetShmFn>("cuCtxGetSharedMemConfig");
  return fn ? fn(c) : Missing("cuCtxGetSharedMemConfig");
}
CUresult CtxSetSharedMemConfig(CUsharedconfig c) {
  auto fn = Sym<SetShmFn>("cuCtxSetSharedMemConfig");
  return fn ? fn(c) : Missing("cuCtxSetSharedMemConfig");
}

// cuStreamUpdateCaptureDependencies (cuda.h maps it to _v2) without edge data.
CUresult UpdateDeps(CUstream s, CUgraphNode* nodes, size_t n, unsigned int flags) {
  return cuStreamUpdateCaptureDependencies_v2(s, nodes, nullptr, n, flags);
}

// Primary context of device 0 current, two non-blocking streams.
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream s = nullptr;
  CUstream s2 = nullptr;
  bool Init() {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
    return true;
  }
};

CUcontext NewCtx(CUdevice dev) {
  CUcontext c = nullptr;
  CUctxCreateParams cp;
  memset(&cp, 0, sizeof cp);
  CUresult r = cuCtxCreate(&c, &cp, 0, dev);
  if (r != CUDA_SUCCESS) Say("cuCtxCreate = %s", Name(r));
  return c;
}

// A stream that was created and destroyed (the handle is stale).
CUstream DestroyedStream() {
  CUstream d = nullptr;
  cuStreamCreate(&d, CU_STREAM_NON_BLOCKING);
  cuStreamDestroy(d);
  return d;
}

std::string Delta(unsigned long long a, unsigned long long b) {
  long long d = static_cast<long long>(b - a);
  if (d > -1000 && d < 1000) return std::to_string(d);
  return d > 0 ? "large positive" : "large negative";
}

// ------------------------------------------------------------------------------------------
// Ids.

// ids:stream: cuStreamGetId on created, special and invalid streams.
int CaseStreamIds() {
  Base b;
  if (!b.Init()) return 1;
  unsigned long long i1 = 77, i2 = 77, i1b = 77, inull = 77, ileg = 77, ipt = 77, i3 = 77;
  R(cuStreamGetId(b.s, &i1));
  R(cuStreamGetId(b.s2, &i2));
  R(cuStreamGetId(b.s, &i1b));
  Say("same stream same id = %s, s2 - s1 = %s, s1 zero = %s", YesNo(i1 == i1b),
      Delta(i1, i2).c_str(), YesNo(i1 == 0));
  CUstream s3 = nullptr;
  cuStreamCreateWithPriority(&s3, CU_STREAM_DEFAULT, -1);
  R(cuStreamGetId(s3, &i3));
  Say("s3 - s2 = %s", Delta(i2, i3).c_str());
  R(cuStreamGetId(nullptr, &inull));
  R(cuStreamGetId(CU_STREAM_LEGACY, &ileg));
  R(cuStreamGetId(CU_STREAM_PER_THREAD, &ipt));
  Say("null id untouched = %s, null == legacy = %s, legacy == per-thread = %s", YesNo(inull == 77),
      YesNo(inull == ileg), YesNo(ileg == ipt));
  Say("legacy id = %s, per-thread id = %s", ileg < 16 ? std::to_string(ileg).c_str() : "large",
      ipt < 16 ? std::to_string(ipt).c_str() : "large");
  Say("legacy id < s1 id = %s, per-thread id < s1 id = %s", YesNo(ileg < i1), YesNo(ipt < i1));
  // Another thread's per-thread stream.
  unsigned long long ipt2 = 77;
  CUresult rt = CUDA_ERROR_UNKNOWN;
  std::thread t([&] {
    cuCtxSetCurrent(b.ctx);
    rt = cuStreamGetId(CU_STREAM_PER_THREAD, &ipt2);
  });
  t.join();
  Say("other thread per-thread id: %s, differs = %s", Name(rt), YesNo(ipt2 != ipt));
  // Destroy and recreate: ids are not reused.
  cuStreamDestroy(s3);
  CUstream s4 = nullptr;
  cuStreamCreate(&s4, CU_STREAM_NON_BLOCKING);
  unsigned long long i4 = 77;
  R(cuStreamGetId(s4, &i4));
  Say("recreated id differs from destroyed = %s, s4 - s3 = %s", YesNo(i4 != i3),
      Delta(i3, i4).c_str());
  // Invalid.
  R(cuStreamGetId(b.s, nullptr));
  // A stream of another context; then with no current context.
  CUcontext c2 = NewCtx(b.dev);
  CUstream sc2 = nullptr;
  cuStreamCreate(&sc2, CU_STREAM_NON_BLOCKING);
  unsigned long long ic2 = 77;
  R(cuStreamGetId(sc2, &ic2));
  Say("other context's stream - s4 = %s", Delta(i4, ic2).c_str());
  unsigned long long inull2 = 77;
  R(cuStreamGetId(nullptr, &inull2));
  Say("null stream id in the other context equals the first's = %s", YesNo(inull2 == inull));
  cuCtxSetCurrent(nullptr);
  unsigned long long iq = 77;
  R(cuStreamGetId(b.s, &iq));
  Say("id with no current context equals = %s", YesNo(iq == i1));
  iq = 77;
  R(cuStreamGetId(nullptr, &iq));
  R(cuStreamGetId(CU_STREAM_LEGACY, &iq));
  cuCtxSetCurrent(c2);
  cuStreamDestroy(sc2);
  cuCtxDestroy(c2);
  return 0;
}

// ids:ctx: cuCtxGetId on primary, created, null and invalid contexts.
int CaseCtxIds() {
  Base b;
  if (!b.Init()) return 1;
  unsigned long long p = 77, p2 = 77, cur = 77;
  R(cuCtxGetId(b.ctx, &p));
  R(cuCtxGetId(b.ctx, &p2));
  R(cuCtxGetId(nullptr, &cur));
  Say("same context same id = %s, null gives the current's = %s, zero = %s", YesNo(p == p2),
      YesNo(cur == p), YesNo(p == 0));
  Say("primary context id = %s", p < 16 ? std::to_string(p).c_str() : "large");
  unsigned long long sid = 77;
  cuStreamGetId(b.s, &sid);
  Say("stream s1 id - primary context id = %s", Delta(p, sid).c_str());
  CUcontext c1 = NewCtx(b.dev);
  CUcontext c2 = NewCtx(b.dev);
  unsigned long long i1 = 77, i2 = 77;
  R(cuCtxGetId(c1, &i1));
  R(cuCtxGetId(c2, &i2));
  Say("c1 - primary = %s, c2 - c1 = %s", Delta(p, i1).c_str(), Delta(i1, i2).c_str());
  cur = 77;
  R(cuCtxGetId(nullptr, &cur));
  Say("null gives the current (c2) = %s", YesNo(cur == i2));
  R(cuCtxGetId(c1, nullptr));
  R(cuCtxGetId(nullptr, nullptr));
  unsigned long long g = 77;
  R(cuCtxDestroy(c1));
  g = 77;
  Say("cuCtxGetId(destroyed) = %s, id %s", Name(cuCtxGetId(c1, &g)),
      g == 77 ? "untouched" : "written");
  R(cuCtxDestroy(c2));
  cuCtxSetCurrent(nullptr);
  g = 77;
  Say("cuCtxGetId(null, no current) = %s, id %s", Name(cuCtxGetId(nullptr, &g)),
      g == 77 ? "untouched" : "written");
  g = 77;
  R(cuCtxGetId(b.ctx, &g));
  Say("primary id while not current equals = %s", YesNo(g == p));
  // Primary context released to zero and retained again.
  cuStreamDestroy(b.s);
  cuStreamDestroy(b.s2);
  R(cuDevicePrimaryCtxRelease(b.dev));
  g = 77;
  Say("cuCtxGetId(released primary) = %s, id %s", Name(cuCtxGetId(b.ctx, &g)),
      g == 77 ? "untouched" : g == p ? "same" : "other");
  CUcontext again = nullptr;
  R(cuDevicePrimaryCtxRetain(&again, b.dev));
  Say("retained again same handle = %s", YesNo(again == b.ctx));
  g = 77;
  R(cuCtxGetId(again, &g));
  Say("re-retained primary id: same = %s, minus old = %s", YesNo(g == p), Delta(p, g).c_str());
  // cuDevicePrimaryCtxReset.
  R(cuDevicePrimaryCtxReset(b.dev));
  unsigned long long h = 77;
  R(cuCtxGetId(again, &h));
  Say("after reset: same as before = %s, minus before = %s", YesNo(h == g), Delta(g, h).c_str());
  return 0;
}

// streamdev: cuStreamGetDevice.
int CaseStreamDevice() {
  Base b;
  if (!b.Init()) return 1;
  CUdevice d = 77;
  R(cuStreamGetDevice(b.s, &d));
  Say("device = %d", d);
  d = 77;
  R(cuStreamGetDevice(nullptr, &d));
  Say("device = %d", d);
  d = 77;
  R(cuStreamGetDevice(CU_STREAM_LEGACY, &d));
  Say("device = %d", d);
  d = 77;
  R(cuStreamGetDevice(CU_STREAM_PER_THREAD, &d));
  Say("device = %d", d);
  R(cuStreamGetDevice(b.s, nullptr));
  d = 77;
  d = 77;
  cuCtxSetCurrent(nullptr);
  d = 77;
  R(cuStreamGetDevice(b.s, &d));
  Say("device = %d", d);
  d = 77;
  R(cuStreamGetDevice(nullptr, &d));
  Say("device = %d", d);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Stream attributes.

std::string Show(CUstreamAttrID id, const CUstreamAttrValue& v) {
  char t[256];
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: {
      const CUaccessPolicyWindow& w = v.accessPolicyWindow;
      snprintf(t, sizeof t, "window base %s, bytes %zu, hitRatio %g, hitProp %d, missProp %d",
               w.base_ptr == nullptr ? "null" : "set", w.num_bytes, w.hitRatio,
               static_cast<int>(w.hitProp), static_cast<int>(w.missProp));
      break;
    }
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      snprintf(t, sizeof t, "syncPolicy %d", static_cast<int>(v.syncPolicy));
      break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      snprintf(t, sizeof t, "priority %d", v.priority);
      break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      snprintf(t, sizeof t, "domain map default %u remote %u", v.memSyncDomainMap.default_,
               v.memSyncDomainMap.remote);
      break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      snprintf(t, sizeof t, "domain %d", static_cast<int>(v.memSyncDomain));
      break;
    default: {
      bool untouched = true;
      for (size_t i = 0; i < sizeof v.pad; ++i)
        untouched = untouched && static_cast<unsigned char>(v.pad[i]) == 0x5a;
      snprintf(t, sizeof t, "value %s, first word %u", untouched ? "untouched" : "written",
               *reinterpret_cast<const unsigned*>(&v));
    }
  }
  return t;
}

const int kAllAttrs[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 99};
const int kStreamAttrs[] = {1, 3, 8, 9, 10};

void GetAll(const char* label, CUstream s, const int* ids, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    CUstreamAttrValue v;
    memset(&v, 0x5a, sizeof v);
    auto id = static_cast<CUstreamAttrID>(ids[i]);
    CUresult r = cuStreamGetAttribute(s, id, &v);
    Say("%s get attr %d = %s%s%s", label, ids[i], Name(r), r == CUDA_SUCCESS ? ", " : "",
        r == CUDA_SUCCESS ? Show(id, v).c_str() : "");
  }
}

CUresult SetAttr(CUstream s, int id, const CUstreamAttrValue& v) {
  return cuStreamSetAttribute(s, static_cast<CUstreamAttrID>(id), &v);
}

std::string GetOne(CUstream s, int id) {
  CUstreamAttrValue v;
  memset(&v, 0x5a, sizeof v);
  CUresult r = cuStreamGetAttribute(s, static_cast<CUstreamAttrID>(id), &v);
  if (r != CUDA_SUCCESS) return Name(r);
  return Show(static_cast<CUstreamAttrID>(id), v);
}

// attr:get: defaults of every attribute id on created and special streams.
int CaseAttrGet() {
  Base b;
  if (!b.Init()) return 1;
  GetAll("s", b.s, kAllAttrs, sizeof kAllAttrs / sizeof *kAllAttrs);
  GetAll("null", nullptr, kStreamAttrs, 5);
  GetAll("legacy", CU_STREAM_LEGACY, kStreamAttrs, 5);
  GetAll("per-thread", CU_STREAM_PER_THREAD, kStreamAttrs, 5);
  CUstream hi = nullptr, lo = nullptr;
  int least = 0, greatest = 0;
  R(cuCtxGetStreamPriorityRange(&least, &greatest));
  Say("priority range least %d greatest %d", least, greatest);
  cuStreamCreateWithPriority(&hi, CU_STREAM_NON_BLOCKING, greatest);
  cuStreamCreateWithPriority(&lo, CU_STREAM_NON_BLOCKING, least);
  Say("high-priority stream: %s", GetOne(hi, 8).c_str());
  Say("low-priority stream: %s", GetOne(lo, 8).c_str());
  R(cuStreamGetAttribute(b.s, CU_LAUNCH_ATTRIBUTE_PRIORITY, nullptr));
  cuCtxSetCurrent(nullptr);
  GetAll("no ctx s", b.s, kStreamAttrs, 1);
  GetAll("no ctx null", nullptr, kStreamAttrs, 1);
  return 0;
}

// attr:set: setting each stream attribute and reading it back, valid and invalid values.
int CaseAttrSet() {
  Base b;
  if (!b.Init()) return 1;
  CUstreamAttrValue v;
  // Priority.
  int least = 0, greatest = 0;
  cuCtxGetStreamPriorityRange(&least, &greatest);
  for (int p : {greatest, least, greatest - 1, least + 1, -1, 100}) {
    memset(&v, 0, sizeof v);
    v.priority = p;
    Say("set priority %d = %s, read back: %s", p, Name(SetAttr(b.s, 8, v)), GetOne(b.s, 8).c_str());
    int gp = 77;
    cuStreamGetPriority(b.s, &gp);
    Say("cuStreamGetPriority = %d", gp);
  }
  // Synchronization policy.
  for (int p : {1, 2, 3, 4, 0, 5}) {
    memset(&v, 0, sizeof v);
    v.syncPolicy = static_cast<CUsynchronizationPolicy>(p);
    Say("set syncPolicy %d = %s, read back: %s", p, Name(SetAttr(b.s, 3, v)),
        GetOne(b.s, 3).c_str());
  }
  // Memory sync domain and map.
  for (int d : {1, 0, 2}) {
    memset(&v, 0, sizeof v);
    v.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(d);
    Say("set domain %d = %s, read back: %s", d, Name(SetAttr(b.s, 10, v)),
        GetOne(b.s, 10).c_str());
  }
  for (auto m : {std::pair<int, int>{1, 0}, {0, 1}, {3, 3}, {4, 0}, {0, 200}}) {
    memset(&v, 0, sizeof v);
    v.memSyncDomainMap.default_ = static_cast<unsigned char>(m.first);
    v.memSyncDomainMap.remote = static_cast<unsigned char>(m.second);
    Say("set domain map %d/%d = %s, read back: %s", m.first, m.second, Name(SetAttr(b.s, 9, v)),
        GetOne(b.s, 9).c_str());
  }
  // Access policy window.
  int max_window = 0, persist_max = 0;
  cuDeviceGetAttribute(&max_window, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, b.dev);
  cuDeviceGetAttribute(&persist_max, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, b.dev);
  Say("max access policy window = %d, max persisting L2 = %d", max_window, persist_max);
  CUdeviceptr buf = 0;
  cuMemAlloc(&buf, 1 << 20);
  struct W {
    const char* what;
    size_t bytes;
    float ratio;
    int hit, miss;
    bool null_base;
  };
  const W ws[] = {{"valid", 1 << 20, 0.5f, 2, 1, false},
                  {"ratio 1", 4096, 1.0f, 2, 0, false},
                  {"ratio 0", 4096, 0.0f, 0, 0, false},
                  {"ratio 1.5", 4096, 1.5f, 2, 1, false},
                  {"ratio -0.5", 4096, -0.5f, 2, 1, false},
                  {"hitProp 3", 4096, 0.5f, 3, 1, false},
                  {"missProp 2", 4096, 0.5f, 2, 2, false},
                  {"missProp 3", 4096, 0.5f, 2, 3, false},
                  {"bytes 0", 0, 0.5f, 2, 1, false},
                  {"bytes = max", static_cast<size_t>(max_window), 0.5f, 2, 1, false},
                  {"bytes > max", static_cast<size_t>(max_window) + 1, 0.5f, 2, 1, false},
                  {"null base", 4096, 0.5f, 2, 1, true},
                  {"reset", 0, 0.0f, 0, 0, true}};
  for (const W& w : ws) {
    memset(&v, 0, sizeof v);
    v.accessPolicyWindow.base_ptr = w.null_base ? nullptr : reinterpret_cast<void*>(buf);
    v.accessPolicyWindow.num_bytes = w.bytes;
    v.accessPolicyWindow.hitRatio = w.ratio;
    v.accessPolicyWindow.hitProp = static_cast<CUaccessProperty>(w.hit);
    v.accessPolicyWindow.missProp = static_cast<CUaccessProperty>(w.miss);
    Say("set window %s = %s, read back: %s", w.what, Name(SetAttr(b.s, 1, v)),
        GetOne(b.s, 1).c_str());
  }
  // Ids that are not stream attributes.
  for (int id : {0, 2, 4, 5, 6, 7, 11, 12, 13, 14, 16, 99}) {
    memset(&v, 0, sizeof v);
    Say("set attr %d (zeros) = %s", id, Name(SetAttr(b.s, id, v)));
  }
  memset(&v, 0, sizeof v);
  v.priority = greatest;
  R(cuStreamSetAttribute(b.s, CU_LAUNCH_ATTRIBUTE_PRIORITY, nullptr));
  // Special streams.
  for (auto sp : {std::pair<const char*, CUstream>{"null", nullptr}, {"legacy", CU_STREAM_LEGACY},
                  {"per-thread", CU_STREAM_PER_THREAD}}) {
    memset(&v, 0, sizeof v);
    v.syncPolicy = CU_SYNC_POLICY_SPIN;
    Say("%s set syncPolicy 2 = %s, read back: %s", sp.first, Name(SetAttr(sp.second, 3, v)),
        GetOne(sp.second, 3).c_str());
    memset(&v, 0, sizeof v);
    v.priority = greatest;
    Say("%s set priority = %s, read back: %s", sp.first, Name(SetAttr(sp.second, 8, v)),
        GetOne(sp.second, 8).c_str());
  }
  memset(&v, 0, sizeof v);
  v.syncPolicy = CU_SYNC_POLICY_SPIN;
  // Attributes of a stream being captured.
  R(cuStreamBeginCapture(b.s2, CU_STREAM_CAPTURE_MODE_RELAXED));
  v.syncPolicy = CU_SYNC_POLICY_YIELD;
  Say("capturing set syncPolicy = %s, read back: %s", Name(SetAttr(b.s2, 3, v)),
      GetOne(b.s2, 3).c_str());
  CUgraph g = nullptr;
  R(cuStreamEndCapture(b.s2, &g));
  if (g) cuGraphDestroy(g);
  cuCtxSetCurrent(nullptr);
  Say("no ctx set = %s", Name(SetAttr(b.s, 3, v)));
  Say("no ctx null set = %s", Name(SetAttr(nullptr, 3, v)));
  cuCtxSetCurrent(b.ctx);
  cuMemFree(buf);
  return 0;
}

// attr:copy: cuStreamCopyAttributes.
int CaseAttrCopy() {
  Base b;
  if (!b.Init()) return 1;
  int least = 0, greatest = 0;
  cuCtxGetStreamPriorityRange(&least, &greatest);
  CUdeviceptr buf = 0;
  cuMemAlloc(&buf, 1 << 20);
  CUstreamAttrValue v;
  memset(&v, 0, sizeof v);
  v.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(buf);
  v.accessPolicyWindow.num_bytes = 65536;
  v.accessPolicyWindow.hitRatio = 0.25f;
  v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
  v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
  R(SetAttr(b.s, 1, v));
  memset(&v, 0, sizeof v);
  v.syncPolicy = CU_SYNC_POLICY_BLOCKING_SYNC;
  R(SetAttr(b.s, 3, v));
  memset(&v, 0, sizeof v);
  v.priority = greatest;
  R(SetAttr(b.s, 8, v));
  memset(&v, 0, sizeof v);
  v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
  R(SetAttr(b.s, 10, v));
  memset(&v, 0, sizeof v);
  v.memSyncDomainMap.default_ = 1;
  v.memSyncDomainMap.remote = 0;
  R(SetAttr(b.s, 9, v));
  R(cuStreamCopyAttributes(b.s2, b.s));
  GetAll("dst", b.s2, kStreamAttrs, 5);
  int gp = 77;
  cuStreamGetPriority(b.s2, &gp);
  Say("dst cuStreamGetPriority = %d", gp);
  Say("window base equals source = %s", YesNo([&] {
        CUstreamAttrValue w;
        memset(&w, 0, sizeof w);
        cuStreamGetAttribute(b.s2, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &w);
        return w.accessPolicyWindow.base_ptr == reinterpret_cast<void*>(buf);
      }()));
  R(cuStreamCopyAttributes(b.s, b.s));
  CUstream fresh = nullptr;
  cuStreamCreate(&fresh, CU_STREAM_NON_BLOCKING);
  R(cuStreamCopyAttributes(b.s2, fresh));
  GetAll("dst after copy from fresh", b.s2, kStreamAttrs, 5);
  R(cuStreamCopyAttributes(nullptr, b.s));
  GetAll("null dst", nullptr, kStreamAttrs, 5);
  R(cuStreamCopyAttributes(b.s2, nullptr));
  R(cuStreamCopyAttributes(CU_STREAM_LEGACY, b.s));
  R(cuStreamCopyAttributes(b.s, CU_STREAM_PER_THREAD));
  // Streams of two contexts.
  CUcontext c2 = NewCtx(b.dev);
  CUstream o = nullptr;
  cuStreamCreate(&o, CU_STREAM_NON_BLOCKING);
  R(cuStreamCopyAttributes(o, b.s));
  Say("other context dst: %s", GetOne(o, 3).c_str());
  cuStreamDestroy(o);
  cuCtxDestroy(c2);
  cuCtxSetCurrent(nullptr);
  R(cuStreamCopyAttributes(b.s2, b.s));
  cuCtxSetCurrent(b.ctx);
  cuMemFree(buf);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Context configuration.

// cachecfg: cuCtxGet/SetCacheConfig and cuCtxGet/SetSharedMemConfig.
int CaseCacheConfig() {
  Base b;
  if (!b.Init()) return 1;
  CUfunc_cache c = static_cast<CUfunc_cache>(77);
  R(cuCtxGetCacheConfig(&c));
  Say("default = %d", static_cast<int>(c));
  for (int v : {1, 2, 3, 0, 4, -1}) {
    c = static_cast<CUfunc_cache>(77);
    CUresult r = cuCtxSetCacheConfig(static_cast<CUfunc_cache>(v));
    cuCtxGetCacheConfig(&c);
    Say("set %d = %s, read back %d", v, Name(r), static_cast<int>(c));
  }
  R(cuCtxGetCacheConfig(nullptr));
  R(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));
  CUcontext c2 = NewCtx(b.dev);
  c = static_cast<CUfunc_cache>(77);
  R(cuCtxGetCacheConfig(&c));
  Say("new context's = %d", static_cast<int>(c));
  cuCtxDestroy(c2);
  cuCtxSetCurrent(b.ctx);
  c = static_cast<CUfunc_cache>(77);
  cuCtxGetCacheConfig(&c);
  Say("primary's still = %d", static_cast<int>(c));
  CUsharedconfig sc = static_cast<CUsharedconfig>(77);
  R(CtxGetSharedMemConfig(&sc));
  Say("shared default = %d", static_cast<int>(sc));
  for (int v : {1, 2, 0, 3, -1}) {
    sc = static_cast<CUsharedconfig>(77);
    CUresult r = CtxSetSharedMemConfig(static_cast<CUsharedconfig>(v));
    CtxGetSharedMemConfig(&sc);
    Say("shared set %d = %s, read back %d", v, Name(r), static_cast<int>(sc));
  }
  R(CtxGetSharedMemConfig(nullptr));
  R(cuCtxResetPersistingL2Cache());
  cuCtxSetCurrent(nullptr);
  c = static_cast<CUfunc_cache>(77);
  Say("no ctx get = %s, value %d", Name(cuCtxGetCacheConfig(&c)), static_cast<int>(c));
  R(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_SHARED));
  R(cuCtxSetCacheConfig(static_cast<CUfunc_cache>(9)));
  sc = static_cast<CUsharedconfig>(77);
  Say("no ctx shared get = %s, value %d", Name(CtxGetSharedMemConfig(&sc)), static_cast<int>(sc));
  R(CtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE));
  R(cuCtxResetPersistingL2Cache());
  R(cuCtxGetCacheConfig(nullptr));
  return 0;
}

// ctxflags: cuCtxSetFlags and what cuCtxGetFlags / cuDevicePrimaryCtxGetState then say.
int CaseCtxFlags() {
  Base b;
  if (!b.Init()) return 1;
  unsigned int f = 77;
  R(cuCtxGetFlags(&f));
  Say("default flags = 0x%x", f);
  const unsigned vals[] = {0x1, 0x2, 0x4, 0x0, 0x3, 0x5, 0x7, 0x8, 0x10, 0x20, 0x40, 0x80,
                           0x100, 0x200, 0xff, 0x80000000u, 0xffffffffu};
  for (unsigned v : vals) {
    CUresult r = cuCtxSetFlags(v);
    f = 77;
    cuCtxGetFlags(&f);
    unsigned pf = 77;
    int active = 0;
    cuDevicePrimaryCtxGetState(b.dev, &pf, &active);
    Say("set 0x%x = %s, ctx flags 0x%x, primary state flags 0x%x", v, Name(r), f, pf);
  }
  cuCtxSetFlags(0);
  CUcontext c2 = NewCtx(b.dev);
  f = 77;
  cuCtxGetFlags(&f);
  Say("created context flags = 0x%x", f);
  R(cuCtxSetFlags(CU_CTX_SCHED_BLOCKING_SYNC));
  f = 77;
  cuCtxGetFlags(&f);
  Say("created context flags = 0x%x", f);
  R(cuCtxSetFlags(CU_CTX_MAP_HOST | CU_CTX_SYNC_MEMOPS));
  f = 77;
  cuCtxGetFlags(&f);
  Say("created context flags = 0x%x", f);
  cuCtxDestroy(c2);
  cuCtxSetCurrent(nullptr);
  R(cuCtxSetFlags(0));
  R(cuCtxSetFlags(CU_CTX_SCHED_SPIN));
  R(cuCtxSetFlags(0x100));
  return 0;
}

// affinity: cuCtxGetExecAffinity.
int CaseAffinity() {
  Base b;
  if (!b.Init()) return 1;
  int sms = 0, supported = 77;
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, b.dev);
  R(cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, b.dev));
  Say("exec affinity supported = %d", supported);
  CUexecAffinityParam p;
  memset(&p, 0x5a, sizeof p);
  R(cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  Say("type %d, smCount equals the SM count = %s, smCount %s", static_cast<int>(p.type),
      YesNo(p.param.smCount.val == static_cast<unsigned>(sms)),
      p.param.smCount.val == 0x5a5a5a5au ? "untouched" : "written");
  memset(&p, 0x5a, sizeof p);
  R(cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_MAX));
  R(cuCtxGetExecAffinity(&p, static_cast<CUexecAffinityType>(7)));
  R(cuCtxGetExecAffinity(nullptr, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  CUcontext c2 = NewCtx(b.dev);
  memset(&p, 0x5a, sizeof p);
  R(cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  Say("created context smCount equals the SM count = %s",
      YesNo(p.param.smCount.val == static_cast<unsigned>(sms)));
  cuCtxDestroy(c2);
  cuCtxSetCurrent(nullptr);
  memset(&p, 0x5a, sizeof p);
  R(cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  R(cuCtxGetExecAffinity(nullptr, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  return 0;
}

// attach: cuCtxAttach / cuCtxDetach (deprecated).
int CaseAttach() {
  Base b;
  if (!b.Init()) return 1;
  CUcontext a = Garbage<CUcontext>();
  R(CtxAttach(&a, 0));
  Say("attached = %s", a == b.ctx ? "the current (primary)" : a == nullptr ? "null"
                       : a == Garbage<CUcontext>() ? "untouched" : "other");
  if (a == b.ctx) R(CtxDetach(a));
  R(CtxAttach(&a, 1));
  R(CtxAttach(nullptr, 0));
  R(CtxDetach(nullptr));
  CUcontext c2 = NewCtx(b.dev);
  a = Garbage<CUcontext>();
  R(CtxAttach(&a, 0));
  Say("attached = %s", a == c2 ? "the current (created)" : a == nullptr ? "null"
                       : a == Garbage<CUcontext>() ? "untouched" : "other");
  unsigned api = 0;
  R(CtxDetach(c2));
  R(cuCtxGetApiVersion(c2, &api));
  R(CtxDetach(c2));
  R(cuCtxGetApiVersion(c2, &api));
  CUcontext cur = Garbage<CUcontext>();
  R(cuCtxGetCurrent(&cur));
  Say("current after detaching = %s", cur == c2 ? "c2" : cur == nullptr ? "null" : "other");
  R(CtxDetach(c2));
  R(cuCtxDestroy(c2));
  cuCtxSetCurrent(nullptr);
  a = Garbage<CUcontext>();
  R(CtxAttach(&a, 0));
  Say("attached = %s", a == nullptr ? "null" : a == Garbage<CUcontext>() ? "untouched" : "other");
  R(CtxDetach(b.ctx));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Stream memory operations.

void MemOpAttrs(CUdevice dev) {
  const std::pair<const char*, CUdevice_attribute> as[] = {
      {"CAN_USE_STREAM_MEM_OPS_V1", CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1},
      {"CAN_USE_64_BIT_STREAM_MEM_OPS_V1", CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1},
      {"CAN_USE_STREAM_WAIT_VALUE_NOR_V1", CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1},
      {"CAN_FLUSH_REMOTE_WRITES", CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES},
      {"CAN_USE_64_BIT_STREAM_MEM_OPS", CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS},
      {"CAN_USE_STREAM_WAIT_VALUE_NOR", CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR},
      {"CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM",
       CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM}};
  for (auto& a : as) {
    int v = 77;
    CUresult r = cuDeviceGetAttribute(&v, a.second, dev);
    Say("attribute %s = %s, %d", a.first, Name(r), v);
  }
}

uint32_t Read32(CUdeviceptr p) {
  uint32_t v = 0xdeadbeef;
  cuMemcpyDtoH(&v, p, 4);
  return v;
}
uint64_t Read64(CUdeviceptr p) {
  uint64_t v = 0xdeadbeefull;
  cuMemcpyDtoH(&v, p, 8);
  return v;
}

// memops:write: cuStreamWriteValue32/64 on device, host-mapped and managed memory.
int CaseWrite() {
  Base b;
  if (!b.Init()) return 1;
  MemOpAttrs(b.dev);
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  cuMemsetD8(d, 0, 4096);
  R(cuStreamWriteValue32(b.s, d, 0x11223344u, 0));
  R(cuStreamSynchronize(b.s));
  Say("read back 0x%x", Read32(d));
  R(cuStreamWriteValue32(b.s, d + 4, 5, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
  R(cuStreamSynchronize(b.s));
  Say("read back %u", Read32(d + 4));
  R(cuStreamWriteValue64(b.s, d + 8, 0x1122334455667788ull, 0));
  R(cuStreamSynchronize(b.s));
  Say("read back 0x%llx", static_cast<unsigned long long>(Read64(d + 8)));
  R(cuStreamWriteValue32(nullptr, d + 16, 9, 0));
  R(cuCtxSynchronize());
  Say("null stream read back %u", Read32(d + 16));
  R(cuStreamWriteValue32(CU_STREAM_LEGACY, d + 20, 10, 0));
  R(cuStreamWriteValue64(CU_STREAM_PER_THREAD, d + 24, 11, 0));
  R(cuCtxSynchronize());
  Say("legacy/per-thread read back %u %llu", Read32(d + 20),
      static_cast<unsigned long long>(Read64(d + 24)));
  // Invalid.
  R(cuStreamWriteValue32(b.s, d + 2, 1, 0));
  R(cuStreamWriteValue64(b.s, d + 4, 1, 0));
  R(cuStreamWriteValue32(b.s, d, 1, 2));
  R(cuStreamWriteValue32(b.s, d, 1, 0xffffffffu));
  R(cuStreamWriteValue64(b.s, d, 1, 2));
  R(cuStreamSynchronize(b.s));
  Say("after invalid writes word 0 = 0x%x", Read32(d));
  // Host-mapped memory.
  void* h = nullptr;
  R(cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
  CUdeviceptr hd = 0;
  R(cuMemHostGetDevicePointer(&hd, h, 0));
  memset(h, 0, 4096);
  R(cuStreamWriteValue32(b.s, hd, 42, 0));
  R(cuStreamWriteValue64(b.s, hd + 8, 43, 0));
  R(cuStreamSynchronize(b.s));
  Say("host-mapped read %u %llu", static_cast<volatile uint32_t*>(h)[0],
      static_cast<unsigned long long>(static_cast<volatile uint64_t*>(h)[1]));
  R(cuStreamWriteValue32(b.s, reinterpret_cast<CUdeviceptr>(h) + 16, 44, 0));
  R(cuStreamSynchronize(b.s));
  Say("host pointer itself read %u", static_cast<volatile uint32_t*>(h)[4]);
  // Registered host memory.
  std::vector<uint64_t> reg(512, 0);
  R(cuMemHostRegister(reg.data(), 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
  CUdeviceptr rd = 0;
  cuMemHostGetDevicePointer(&rd, reg.data(), 0);
  R(cuStreamWriteValue64(b.s, rd, 45, 0));
  R(cuStreamSynchronize(b.s));
  Say("registered read %llu", static_cast<unsigned long long>(reg[0]));
  cuMemHostUnregister(reg.data());
  // Managed memory.
  CUdeviceptr m = 0;
  R(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
  R(cuStreamWriteValue32(b.s, m, 46, 0));
  R(cuStreamSynchronize(b.s));
  Say("managed read %u", *reinterpret_cast<volatile uint32_t*>(m));
  // Invalid streams.
  // Memory of another context.
  CUcontext c2 = NewCtx(b.dev);
  CUstream o = nullptr;
  cuStreamCreate(&o, CU_STREAM_NON_BLOCKING);
  R(cuStreamWriteValue32(o, d + 32, 47, 0));
  R(cuStreamSynchronize(o));
  Say("other context wrote %u", Read32(d + 32));
  R(cuStreamWriteValue32(b.s, d + 36, 48, 0));
  cuStreamDestroy(o);
  cuCtxDestroy(c2);
  cuCtxSetCurrent(nullptr);
  R(cuStreamWriteValue32(b.s, d, 1, 0));
  R(cuStreamWriteValue32(nullptr, d, 1, 0));
  cuCtxSetCurrent(b.ctx);
  cuStreamSynchronize(b.s);
  cuMemFreeHost(h);
  cuMemFree(m);
  cuMemFree(d);
  return 0;
}

// memops:wait: cuStreamWaitValue32/64, satisfied and blocking, released from the host and by a
// write on another stream.
int CaseWait() {
  Base b;
  if (!b.Init()) return 1;
  void* h = nullptr;
  cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP);
  memset(h, 0, 4096);
  volatile uint32_t* flag = static_cast<volatile uint32_t*>(h);
  volatile uint64_t* flag64 = static_cast<volatile uint64_t*>(h) + 4;
  CUdeviceptr hd = 0;
  cuMemHostGetDevicePointer(&hd, h, 0);
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  cuMemsetD8(d, 0, 4096);
  // Already satisfied.
  *flag = 5;
  R(cuStreamWaitValue32(b.s, hd, 5, CU_STREAM_WAIT_VALUE_EQ));
  R(cuStreamWaitValue32(b.s, hd, 3, CU_STREAM_WAIT_VALUE_GEQ));
  R(cuStreamWaitValue32(b.s, hd, 4, CU_STREAM_WAIT_VALUE_AND));
  R(cuStreamWaitValue32(b.s, hd, 2, CU_STREAM_WAIT_VALUE_NOR));
  R(cuStreamWaitValue32(b.s, hd, 5, CU_STREAM_WAIT_VALUE_EQ | CU_STREAM_WAIT_VALUE_FLUSH));
  R(cuStreamSynchronize(b.s));
  // GEQ is a wrapping comparison: 0xfffffff0 - 5 is negative as int32.
  R(cuStreamWaitValue32(b.s, hd, 0xfffffff0u, CU_STREAM_WAIT_VALUE_GEQ));
  R(cuStreamSynchronize(b.s));
  // Blocking on host memory, released by the host.
  *flag = 0;
  R(cuStreamWaitValue32(b.s, hd, 1, CU_STREAM_WAIT_VALUE_EQ));
  R(cuMemsetD32Async(d, 7, 1, b.s));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  R(cuStreamQuery(b.s));
  Say("memset done before release = %s", YesNo(Read32(d) == 7));
  *flag = 1;
  R(cuStreamSynchronize(b.s));
  Say("memset done after release = %s", YesNo(Read32(d) == 7));
  // 64-bit, on device memory, released by a write from another stream.
  R(cuStreamWaitValue64(b.s, d + 64, 0x100000000ull, CU_STREAM_WAIT_VALUE_GEQ));
  R(cuMemsetD32Async(d + 4, 8, 1, b.s));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  R(cuStreamQuery(b.s));
  R(cuStreamWriteValue64(b.s2, d + 64, 0x100000001ull, 0));
  R(cuStreamSynchronize(b.s2));
  R(cuStreamSynchronize(b.s));
  Say("second memset done = %s", YesNo(Read32(d + 4) == 8));
  // AND / NOR blocking.
  *flag64 = 0;
  R(cuStreamWaitValue64(b.s, hd + 32, 0x6, CU_STREAM_WAIT_VALUE_AND));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  R(cuStreamQuery(b.s));
  *flag64 = 2;
  R(cuStreamSynchronize(b.s));
  *flag = 0xffffffffu;
  R(cuStreamWaitValue32(b.s, hd, 0, CU_STREAM_WAIT_VALUE_NOR));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  R(cuStreamQuery(b.s));
  *flag = 0xfffffffeu;
  R(cuStreamSynchronize(b.s));
  // Event recorded behind a wait.
  CUevent e = nullptr;
  cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
  *flag = 0;
  R(cuStreamWaitValue32(b.s, hd, 9, CU_STREAM_WAIT_VALUE_EQ));
  R(cuEventRecord(e, b.s));
  R(cuEventQuery(e));
  R(cuStreamWaitEvent(b.s2, e, 0));
  R(cuStreamQuery(b.s2));
  *flag = 9;
  R(cuEventSynchronize(e));
  R(cuStreamSynchronize(b.s2));
  // Invalid.
  R(cuStreamWaitValue32(b.s, hd + 2, 0, 0));
  R(cuStreamWaitValue64(b.s, hd + 4, 0, 0));
  R(cuStreamWaitValue32(b.s, hd, 0, 4));
  R(cuStreamWaitValue32(b.s, hd, 0, 0x7));
  R(cuStreamWaitValue32(b.s, hd, 0, 1u << 29));
  R(cuStreamWaitValue32(b.s, hd, 0, 0xffffffffu));
  R(cuStreamWaitValue64(b.s, hd, 0, 4));
  R(cuStreamSynchronize(b.s));
  cuCtxSetCurrent(nullptr);
  R(cuStreamWaitValue32(b.s, hd, 0, 0));
  R(cuStreamWaitValue64(nullptr, hd, 0, 0));
  cuCtxSetCurrent(b.ctx);
  cuEventDestroy(e);
  cuMemFreeHost(h);
  cuMemFree(d);
  return 0;
}

CUstreamBatchMemOpParams Op(CUstreamBatchMemOpType t, CUdeviceptr a, uint64_t v,
                            unsigned flags) {
  CUstreamBatchMemOpParams p;
  memset(&p, 0, sizeof p);
  p.operation = t;
  if (t == CU_STREAM_MEM_OP_WAIT_VALUE_32 || t == CU_STREAM_MEM_OP_WAIT_VALUE_64) {
    p.waitValue.address = a;
    p.waitValue.value64 = v;
    if (t == CU_STREAM_MEM_OP_WAIT_VALUE_32) p.waitValue.value = static_cast<uint32_t>(v);
    p.waitValue.flags = flags;
  } else if (t == CU_STREAM_MEM_OP_WRITE_VALUE_32 || t == CU_STREAM_MEM_OP_WRITE_VALUE_64) {
    p.writeValue.address = a;
    p.writeValue.value64 = v;
    if (t == CU_STREAM_MEM_OP_WRITE_VALUE_32) p.writeValue.value = static_cast<uint32_t>(v);
    p.writeValue.flags = flags;
  } else {
    p.memoryBarrier.flags = flags;
  }
  return p;
}

// memops:batch: cuStreamBatchMemOp_v2.
int CaseBatch() {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  cuMemsetD8(d, 0, 4096);
  std::vector<CUstreamBatchMemOpParams> ops = {
      Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 1, 0),
      Op(CU_STREAM_MEM_OP_WAIT_VALUE_32, d, 1, CU_STREAM_WAIT_VALUE_EQ),
      Op(CU_STREAM_MEM_OP_WRITE_VALUE_64, d + 8, 0x200000002ull, 0),
      Op(CU_STREAM_MEM_OP_BARRIER, 0, 0, CU_STREAM_MEMORY_BARRIER_TYPE_GPU),
      Op(CU_STREAM_MEM_OP_WAIT_VALUE_64, d + 8, 0x200000002ull, CU_STREAM_WAIT_VALUE_GEQ),
      Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 16, 3, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)};
  R(cuStreamBatchMemOp(b.s, static_cast<unsigned>(ops.size()), ops.data(), 0));
  R(cuStreamSynchronize(b.s));
  Say("read back %u 0x%llx %u", Read32(d), static_cast<unsigned long long>(Read64(d + 8)),
      Read32(d + 16));
  R(cuStreamBatchMemOp(b.s, 0, ops.data(), 0));
  R(cuStreamBatchMemOp(b.s, 0, nullptr, 0));
  R(cuStreamBatchMemOp(b.s, 1, ops.data(), 1));
  R(cuStreamBatchMemOp(nullptr, 1, ops.data(), 0));
  R(cuStreamSynchronize(nullptr));
  for (unsigned n : {255u, 256u, 257u, 1024u}) {
    std::vector<CUstreamBatchMemOpParams> many(n, Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 32, 4,
                                                     0));
    Say("batch of %u writes = %s", n, Name(cuStreamBatchMemOp(b.s, n, many.data(), 0)));
  }
  R(cuStreamSynchronize(b.s));
  const std::pair<const char*, CUstreamBatchMemOpParams> bad[] = {
      {"op 0", Op(static_cast<CUstreamBatchMemOpType>(0), d, 0, 0)},
      {"op 7", Op(static_cast<CUstreamBatchMemOpType>(7), d, 0, 0)},
      {"op 99", Op(static_cast<CUstreamBatchMemOpType>(99), d, 0, 0)},
      {"write unaligned", Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 1, 0, 0)},
      {"write64 unaligned", Op(CU_STREAM_MEM_OP_WRITE_VALUE_64, d + 4, 0, 0)},
      {"write bad flags", Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 0, 2)},
      {"wait bad flags", Op(CU_STREAM_MEM_OP_WAIT_VALUE_32, d, 0, 4)},
      {"barrier flags 2", Op(CU_STREAM_MEM_OP_BARRIER, 0, 0, 2)},
      {"barrier SYS", Op(CU_STREAM_MEM_OP_BARRIER, 0, 0, CU_STREAM_MEMORY_BARRIER_TYPE_SYS)},
      {"flush", Op(CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES, 0, 0, 0)},
      {"flush flags 1", Op(CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES, 0, 0, 1)}};
  for (auto& x : bad) {
    CUstreamBatchMemOpParams p = x.second;
    Say("batch %s = %s", x.first, Name(cuStreamBatchMemOp(b.s, 1, &p, 0)));
  }
  // A good op followed by a bad one: was the first enqueued?
  cuMemsetD8(d, 0, 16);
  CUstreamBatchMemOpParams two[2] = {Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 6, 0),
                                     Op(static_cast<CUstreamBatchMemOpType>(99), d, 0, 0)};
  R(cuStreamBatchMemOp(b.s, 2, two, 0));
  R(cuStreamSynchronize(b.s));
  Say("first op of a failed batch ran = %s", YesNo(Read32(d) == 6));
  CUstreamBatchMemOpParams one = Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 1, 0);
  cuCtxSetCurrent(nullptr);
  R(cuStreamBatchMemOp(b.s, 1, &one, 0));
  R(cuStreamBatchMemOp(nullptr, 1, &one, 0));
  cuCtxSetCurrent(b.ctx);
  R(cuStreamBatchMemOp(b.s, 1, nullptr, 0));  // last: a null array with a count may crash
  cuMemFree(d);
  return 0;
}

// addr:<where>:<op>: one memory operation on a bad address, then a synchronize (its own process:
// a fault may poison the context).
int CaseAddr(const std::string& where, const std::string& op) {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  uint64_t host = 0;
  CUdeviceptr a = 0;
  if (where == "zero") a = 0;
  else if (where == "garbage") a = 0x5a5a5a5a0000ull;
  else if (where == "pastend") a = d + 4096;
  else if (where == "tail") a = d + 4092;
  else if (where == "unaligned") a = d + 2;
  else if (where == "hoststack") a = reinterpret_cast<CUdeviceptr>(&host);
  else if (where == "freed") {
    CUdeviceptr f = 0;
    cuMemAlloc(&f, 1 << 21);
    cuMemFree(f);
    a = f;
  }
  CUresult r = CUDA_ERROR_UNKNOWN;
  if (op == "write32") r = cuStreamWriteValue32(b.s, a, 1, 0);
  if (op == "write64") r = cuStreamWriteValue64(b.s, a, 1, 0);
  // GEQ 0 is satisfied by any value, so a wait that reads memory completes.
  if (op == "wait32") r = cuStreamWaitValue32(b.s, a, 0, CU_STREAM_WAIT_VALUE_GEQ);
  if (op == "wait64") r = cuStreamWaitValue64(b.s, a, 0, CU_STREAM_WAIT_VALUE_GEQ);
  if (op == "batch") {
    CUstreamBatchMemOpParams p = Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, a, 1, 0);
    r = cuStreamBatchMemOp(b.s, 1, &p, 0);
  }
  Say("%s at %s = %s", op.c_str(), where.c_str(), Name(r));
  R(cuStreamSynchronize(b.s));
  if (where == "hoststack") Say("host word = %llu", static_cast<unsigned long long>(host));
  R(cuMemsetD8(d, 0, 4));
  return 0;
}

// memops:capture: memory operations while the stream is captured.
int CaseMemOpCapture() {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  cuMemsetD8(d, 0, 4096);
  R(cuStreamBeginCapture(b.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuStreamWriteValue32(b.s, d, 12, 0));
  R(cuStreamWaitValue32(b.s, d, 12, CU_STREAM_WAIT_VALUE_EQ));
  CUstreamBatchMemOpParams one = Op(CU_STREAM_MEM_OP_WRITE_VALUE_64, d + 8, 13, 0);
  R(cuStreamBatchMemOp(b.s, 1, &one, 0));
  CUgraph g = nullptr;
  R(cuStreamEndCapture(b.s, &g));
  size_t n = 0;
  if (g) {
    R(cuGraphGetNodes(g, nullptr, &n));
    Say("captured nodes = %zu", n);
    std::vector<CUgraphNode> nodes(n);
    cuGraphGetNodes(g, nodes.data(), &n);
    for (size_t i = 0; i < n; ++i) {
      CUgraphNodeType t = static_cast<CUgraphNodeType>(-1);
      cuGraphNodeGetType(nodes[i], &t);
      CUDA_BATCH_MEM_OP_NODE_PARAMS p;
      memset(&p, 0, sizeof p);
      CUresult r = cuGraphBatchMemOpNodeGetParams(nodes[i], &p);
      Say("node %zu type %d, batch params %s count %u flags %u ctx is current %s", i,
          static_cast<int>(t), Name(r), p.count, p.flags, YesNo(p.ctx == b.ctx));
      if (r == CUDA_SUCCESS && p.count > 0 && p.paramArray)
        Say("node %zu op %d", i, static_cast<int>(p.paramArray[0].operation));
    }
    CUgraphExec ge = nullptr;
    R(cuGraphInstantiate(&ge, g, 0));
    if (ge) {
      R(cuGraphLaunch(ge, b.s));
      R(cuStreamSynchronize(b.s));
      Say("graph wrote %u %llu", Read32(d), static_cast<unsigned long long>(Read64(d + 8)));
      cuGraphExecDestroy(ge);
    }
    cuGraphDestroy(g);
  }
  // Capture in global mode on another stream, then a memop on the legacy stream.
  R(cuStreamBeginCapture(b.s2, CU_STREAM_CAPTURE_MODE_GLOBAL));
  R(cuStreamWriteValue32(CU_STREAM_LEGACY, d, 1, 0));
  g = nullptr;
  R(cuStreamEndCapture(b.s2, &g));
  if (g) cuGraphDestroy(g);
  cuMemFree(d);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Context events.

// ctxevent:record: cuCtxRecordEvent behind blocked work, on other contexts, invalid.
int CaseCtxRecord() {
  Base b;
  if (!b.Init()) return 1;
  void* h = nullptr;
  cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP);
  memset(h, 0, 4096);
  volatile uint32_t* flag = static_cast<volatile uint32_t*>(h);
  CUdeviceptr hd = 0;
  cuMemHostGetDevicePointer(&hd, h, 0);
  CUevent e = nullptr, et = nullptr;
  cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
  cuEventCreate(&et, CU_EVENT_DEFAULT);
  // Idle context.
  R(cuCtxRecordEvent(b.ctx, e));
  R(cuEventSynchronize(e));
  R(cuEventQuery(e));
  R(cuCtxRecordEvent(b.ctx, et));
  R(cuEventSynchronize(et));
  // Behind a blocked stream.
  R(cuStreamWaitValue32(b.s, hd, 1, CU_STREAM_WAIT_VALUE_EQ));
  R(cuCtxRecordEvent(b.ctx, e));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  R(cuEventQuery(e));
  *flag = 1;
  R(cuEventSynchronize(e));
  R(cuEventQuery(e));
  // Work submitted after the record does not hold the event.
  *flag = 0;
  R(cuCtxRecordEvent(b.ctx, e));
  R(cuStreamWaitValue32(b.s, hd, 1, CU_STREAM_WAIT_VALUE_EQ));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  R(cuEventQuery(e));
  *flag = 1;
  R(cuStreamSynchronize(b.s));
  // Blocked legacy (null) stream.
  *flag = 0;
  R(cuStreamWaitValue32(nullptr, hd, 1, CU_STREAM_WAIT_VALUE_EQ));
  R(cuCtxRecordEvent(b.ctx, e));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  R(cuEventQuery(e));
  *flag = 1;
  R(cuEventSynchronize(e));
  // Null context, non-current context, event of another context.
  R(cuCtxRecordEvent(nullptr, e));
  CUcontext c2 = NewCtx(b.dev);
  CUevent e2 = nullptr;
  cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING);
  R(cuCtxRecordEvent(b.ctx, e));
  R(cuCtxRecordEvent(b.ctx, e2));
  R(cuCtxRecordEvent(c2, e));
  R(cuEventSynchronize(e));
  cuCtxSetCurrent(b.ctx);
  R(cuCtxRecordEvent(c2, e2));
  // Invalid.
  R(cuCtxRecordEvent(b.ctx, nullptr));
  CUevent de = nullptr;
  cuEventCreate(&de, 0);
  cuEventDestroy(de);
  cuEventDestroy(e2);
  R(cuCtxDestroy(c2));
  cuCtxSetCurrent(b.ctx);
  R(cuCtxRecordEvent(c2, e));
  // During a capture.
  R(cuStreamBeginCapture(b.s2, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuCtxRecordEvent(b.ctx, e));
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  R(cuStreamIsCapturing(b.s2, &st));
  Say("capture status = %d", static_cast<int>(st));
  CUgraph g = nullptr;
  R(cuStreamEndCapture(b.s2, &g));
  if (g) cuGraphDestroy(g);
  R(cuCtxRecordEvent(b.ctx, e));
  cuCtxSetCurrent(nullptr);
  R(cuCtxRecordEvent(b.ctx, e));
  R(cuCtxRecordEvent(nullptr, e));
  cuCtxSetCurrent(b.ctx);
  cuCtxSynchronize();
  cuEventDestroy(e);
  cuEventDestroy(et);
  cuMemFreeHost(h);
  return 0;
}

// ctxevent:wait: cuCtxWaitEvent makes later work of the context wait.
int CaseCtxWait() {
  Base b;
  if (!b.Init()) return 1;
  void* h = nullptr;
  cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP);
  memset(h, 0, 4096);
  volatile uint32_t* flag = static_cast<volatile uint32_t*>(h);
  CUdeviceptr hd = 0;
  cuMemHostGetDevicePointer(&hd, h, 0);
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  cuMemsetD8(d, 0, 4096);
  CUevent e = nullptr;
  cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
  R(cuCtxWaitEvent(b.ctx, e));  // never recorded
  R(cuStreamWaitValue32(b.s, hd, 1, CU_STREAM_WAIT_VALUE_EQ));
  R(cuEventRecord(e, b.s));
  R(cuCtxWaitEvent(b.ctx, e));
  volatile uint32_t* out = static_cast<volatile uint32_t*>(h) + 16;
  R(cuMemsetD32Async(hd + 64, 5, 1, b.s2));
  CUstream s3 = nullptr;
  cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING);
  R(cuMemsetD32Async(hd + 68, 6, 1, s3));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  R(cuStreamQuery(b.s2));
  Say("existing stream's later work ran before release = %s", YesNo(out[0] == 5));
  R(cuStreamQuery(s3));
  Say("new stream's work ran before release = %s", YesNo(out[1] == 6));
  *flag = 1;
  R(cuCtxSynchronize());
  Say("after release: %s %s", YesNo(out[0] == 5), YesNo(out[1] == 6));
  // Another context waits on this context's event.
  CUcontext c2 = NewCtx(b.dev);
  cuCtxSetCurrent(b.ctx);
  *flag = 0;
  R(cuStreamWaitValue32(b.s, hd, 1, CU_STREAM_WAIT_VALUE_EQ));
  R(cuEventRecord(e, b.s));
  R(cuCtxWaitEvent(c2, e));
  cuCtxSetCurrent(c2);
  CUstream o = nullptr;
  cuStreamCreate(&o, CU_STREAM_NON_BLOCKING);
  CUdeviceptr d2 = 0;
  cuMemAlloc(&d2, 4096);
  R(cuMemsetD32Async(d2, 9, 1, o));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  R(cuStreamQuery(o));
  *flag = 1;
  R(cuStreamSynchronize(o));
  cuMemFree(d2);
  cuStreamDestroy(o);
  cuCtxSetCurrent(b.ctx);
  // Invalid.
  R(cuCtxWaitEvent(nullptr, e));
  R(cuCtxWaitEvent(b.ctx, nullptr));
  CUevent de = nullptr;
  cuEventCreate(&de, 0);
  cuEventDestroy(de);
  R(cuCtxDestroy(c2));
  cuCtxSetCurrent(b.ctx);
  R(cuCtxWaitEvent(c2, e));
  // Event recorded in a capture.
  CUevent ce = nullptr;
  cuEventCreate(&ce, CU_EVENT_DISABLE_TIMING);
  R(cuStreamBeginCapture(b.s2, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuEventRecord(ce, b.s2));
  R(cuCtxWaitEvent(b.ctx, ce));
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  R(cuStreamIsCapturing(b.s2, &st));
  Say("capture status = %d", static_cast<int>(st));
  CUgraph g = nullptr;
  R(cuStreamEndCapture(b.s2, &g));
  if (g) cuGraphDestroy(g);
  R(cuStreamBeginCapture(b.s2, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuCtxWaitEvent(b.ctx, e));
  g = nullptr;
  R(cuStreamEndCapture(b.s2, &g));
  if (g) cuGraphDestroy(g);
  cuCtxSetCurrent(nullptr);
  R(cuCtxWaitEvent(b.ctx, e));
  R(cuCtxWaitEvent(nullptr, e));
  cuCtxSetCurrent(b.ctx);
  cuCtxSynchronize();
  cuEventDestroy(ce);
  cuEventDestroy(e);
  cuMemFree(d);
  cuMemFreeHost(h);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Managed memory attach.

// attachmem: cuStreamAttachMemAsync.
int CaseAttachMem() {
  Base b;
  if (!b.Init()) return 1;
  int cma = 0, pma = 0;
  cuDeviceGetAttribute(&cma, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, b.dev);
  cuDeviceGetAttribute(&pma, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, b.dev);
  Say("concurrent managed access = %d, pageable memory access = %d", cma, pma);
  CUdeviceptr m = 0, mh = 0, d = 0;
  cuMemAllocManaged(&m, 1 << 16, CU_MEM_ATTACH_GLOBAL);
  cuMemAllocManaged(&mh, 1 << 16, CU_MEM_ATTACH_HOST);
  cuMemAlloc(&d, 4096);
  R(cuStreamAttachMemAsync(b.s, m, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamSynchronize(b.s));
  R(cuStreamAttachMemAsync(b.s, m, 0, CU_MEM_ATTACH_HOST));
  R(cuStreamAttachMemAsync(b.s, m, 0, CU_MEM_ATTACH_GLOBAL));
  R(cuStreamAttachMemAsync(b.s, m, 1 << 16, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(b.s, m, 4096, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(b.s, m, (1 << 16) + 1, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(b.s, m + 4096, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(b.s, mh, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(b.s, m, 0, 0));
  R(cuStreamAttachMemAsync(b.s, m, 0, 3));
  R(cuStreamAttachMemAsync(b.s, m, 0, 8));
  R(cuStreamAttachMemAsync(b.s, m, 0, CU_MEM_ATTACH_SINGLE | CU_MEM_ATTACH_GLOBAL));
  R(cuStreamAttachMemAsync(nullptr, m, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(nullptr, m, 0, CU_MEM_ATTACH_GLOBAL));
  R(cuStreamAttachMemAsync(CU_STREAM_LEGACY, m, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(CU_STREAM_PER_THREAD, m, 0, CU_MEM_ATTACH_HOST));
  R(cuStreamAttachMemAsync(b.s, d, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(b.s, 0, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(b.s, static_cast<CUdeviceptr>(0x5a5a5a5a0000ull), 0,
                           CU_MEM_ATTACH_SINGLE));
  std::vector<char> pageable(1 << 16);
  R(cuStreamAttachMemAsync(b.s, reinterpret_cast<CUdeviceptr>(pageable.data()), 0,
                           CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(b.s, reinterpret_cast<CUdeviceptr>(pageable.data()), 4096,
                           CU_MEM_ATTACH_SINGLE));
  R(cuStreamSynchronize(b.s));
  // Host access after attaching to a stream.
  R(cuStreamAttachMemAsync(b.s, m, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamSynchronize(b.s));
  reinterpret_cast<volatile int*>(m)[0] = 3;
  Say("host wrote the stream-attached memory");
  // During capture.
  R(cuStreamBeginCapture(b.s2, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuStreamAttachMemAsync(b.s2, m, 0, CU_MEM_ATTACH_GLOBAL));
  CUgraph g = nullptr;
  R(cuStreamEndCapture(b.s2, &g));
  if (g) cuGraphDestroy(g);
  // Destroying the stream with memory attached.
  R(cuStreamAttachMemAsync(b.s2, m, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamDestroy(b.s2));
  R(cuMemFree(m));
  cuCtxSetCurrent(nullptr);
  R(cuStreamAttachMemAsync(b.s, mh, 0, CU_MEM_ATTACH_SINGLE));
  R(cuStreamAttachMemAsync(nullptr, mh, 0, CU_MEM_ATTACH_GLOBAL));
  cuCtxSetCurrent(b.ctx);
  cuMemFree(mh);
  cuMemFree(d);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Capture into an existing graph.

size_t NodeCount(CUgraph g) {
  size_t n = 0;
  cuGraphGetNodes(g, nullptr, &n);
  return n;
}
size_t EdgeCount(CUgraph g) {
  size_t n = 0;
  cuGraphGetEdges(g, nullptr, nullptr, nullptr, &n);
  return n;
}

// capture:tograph: cuStreamBeginCaptureToGraph.
int CaseCaptureToGraph() {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  CUgraph g = nullptr;
  cuGraphCreate(&g, 0);
  R(cuStreamBeginCaptureToGraph(b.s, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph cg = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* ed = nullptr;
  size_t nd = 77;
  cuuint64_t cid = 0;
  R(cuStreamGetCaptureInfo(b.s, &st, &cid, &cg, &deps, &ed, &nd));
  Say("status %d, capture graph is the given = %s, deps %zu", static_cast<int>(st),
      YesNo(cg == g), nd);
  R(cuMemsetD32Async(d, 1, 4, b.s));
  CUgraph out = nullptr;
  R(cuStreamEndCapture(b.s, &out));
  Say("returned graph is the given = %s, nodes %zu", YesNo(out == g), NodeCount(g));
  // Capture again into the same graph, depending on the existing node.
  std::vector<CUgraphNode> nodes(NodeCount(g));
  size_t n = nodes.size();
  cuGraphGetNodes(g, nodes.data(), &n);
  R(cuStreamBeginCaptureToGraph(b.s, g, nodes.data(), nullptr, n,
                                CU_STREAM_CAPTURE_MODE_RELAXED));
  nd = 77;
  R(cuStreamGetCaptureInfo(b.s, &st, &cid, &cg, &deps, &ed, &nd));
  Say("deps %zu, first is the node = %s", nd, YesNo(nd > 0 && deps && deps[0] == nodes[0]));
  R(cuMemsetD32Async(d + 16, 2, 4, b.s));
  out = nullptr;
  R(cuStreamEndCapture(b.s, &out));
  Say("returned graph is the given = %s, nodes %zu, edges %zu", YesNo(out == g), NodeCount(g),
      EdgeCount(g));
  // With edge data.
  CUgraphEdgeData edge;
  memset(&edge, 0, sizeof edge);
  R(cuStreamBeginCaptureToGraph(b.s, g, nodes.data(), &edge, 1, CU_STREAM_CAPTURE_MODE_RELAXED));
  out = nullptr;
  R(cuStreamEndCapture(b.s, &out));
  Say("empty capture: nodes %zu, edges %zu", NodeCount(g), EdgeCount(g));
  edge.type = 99;
  R(cuStreamBeginCaptureToGraph(b.s, g, nodes.data(), &edge, 1, CU_STREAM_CAPTURE_MODE_RELAXED));
  cuStreamEndCapture(b.s, &out);
  // The graph launches.
  CUgraphExec ge = nullptr;
  R(cuGraphInstantiate(&ge, g, 0));
  if (ge) {
    cuMemsetD8(d, 0, 4096);
    R(cuGraphLaunch(ge, b.s));
    R(cuStreamSynchronize(b.s));
    Say("graph wrote %u %u", Read32(d), Read32(d + 16));
    cuGraphExecDestroy(ge);
  }
  // Invalid.
  R(cuStreamBeginCaptureToGraph(b.s, nullptr, nullptr, nullptr, 0,
                                CU_STREAM_CAPTURE_MODE_GLOBAL));
  R(cuStreamBeginCaptureToGraph(b.s, g, nullptr, nullptr, 0,
                                static_cast<CUstreamCaptureMode>(7)));
  R(cuStreamBeginCaptureToGraph(nullptr, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  R(cuStreamBeginCaptureToGraph(CU_STREAM_LEGACY, g, nullptr, nullptr, 0,
                                CU_STREAM_CAPTURE_MODE_GLOBAL));
  // A node of another graph as dependency.
  CUgraph g2 = nullptr;
  cuGraphCreate(&g2, 0);
  CUgraphNode empty = nullptr;
  cuGraphAddEmptyNode(&empty, g2, nullptr, 0);
  R(cuStreamBeginCaptureToGraph(b.s, g, &empty, nullptr, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  st = CU_STREAM_CAPTURE_STATUS_NONE;
  cuStreamIsCapturing(b.s, &st);
  Say("capturing after the foreign dependency = %d", static_cast<int>(st));
  if (st != CU_STREAM_CAPTURE_STATUS_NONE) cuStreamEndCapture(b.s, &out);
  // Already capturing; two streams capturing into the same graph.
  R(cuStreamBeginCaptureToGraph(b.s, g2, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuStreamBeginCaptureToGraph(b.s, g2, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuStreamBeginCaptureToGraph(b.s2, g2, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuMemsetD32Async(d, 3, 1, b.s2));
  R(cuStreamEndCapture(b.s2, &out));
  Say("second stream returned g2 = %s", YesNo(out == g2));
  R(cuMemsetD32Async(d, 4, 1, b.s));
  R(cuStreamEndCapture(b.s, &out));
  Say("first stream returned g2 = %s, g2 nodes %zu", YesNo(out == g2), NodeCount(g2));
  // A third graph, captured into once.
  CUgraph g3 = nullptr;
  cuGraphCreate(&g3, 0);
  R(cuStreamBeginCaptureToGraph(b.s, g3, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuMemsetD32Async(d, 5, 1, b.s));
  out = Garbage<CUgraph>();
  R(cuStreamEndCapture(b.s, &out));
  Say("returned g3 = %s", YesNo(out == g3));
  cuGraphDestroy(g3);
  // An invalidated capture into a given graph: what does the graph keep?
  CUgraph g4 = nullptr;
  cuGraphCreate(&g4, 0);
  R(cuStreamBeginCaptureToGraph(b.s, g4, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  R(cuMemsetD32Async(d, 5, 1, b.s));
  R(cuStreamSynchronize(b.s));
  out = Garbage<CUgraph>();
  R(cuStreamEndCapture(b.s, &out));
  Say("invalidated: out %s, g4 nodes %zu", out == nullptr ? "null" : out == g4 ? "g4" : "other",
      NodeCount(g4));
  cuGraphDestroy(g4);
  cuCtxSetCurrent(nullptr);
  R(cuStreamBeginCaptureToGraph(b.s, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  cuCtxSetCurrent(b.ctx);
  st = CU_STREAM_CAPTURE_STATUS_NONE;
  cuStreamIsCapturing(b.s, &st);
  if (st != CU_STREAM_CAPTURE_STATUS_NONE) cuStreamEndCapture(b.s, &out);
  // Last (a null array with a count may crash the driver).
  R(cuStreamBeginCaptureToGraph(b.s, g, nullptr, nullptr, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  cuGraphDestroy(g);
  cuGraphDestroy(g2);
  cuMemFree(d);
  return 0;
}

// capture:update: cuStreamUpdateCaptureDependencies_v2 (and the older ABI form).
int CaseUpdateDeps() {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  CUgraph g = nullptr;
  cuGraphCreate(&g, 0);
  CUgraphNode e1 = nullptr, e2 = nullptr;
  cuGraphAddEmptyNode(&e1, g, nullptr, 0);
  cuGraphAddEmptyNode(&e2, g, nullptr, 0);
  CUgraphNode none = nullptr;
  R(UpdateDeps(b.s, &none, 0, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  R(cuStreamBeginCaptureToGraph(b.s, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
  auto deps = [&](const char* what) {
    CUstreamCaptureStatus st;
    const CUgraphNode* dp = nullptr;
    const CUgraphEdgeData* ed = nullptr;
    size_t n = 77;
    CUresult r = cuStreamGetCaptureInfo(b.s, &st, nullptr, nullptr, &dp, &ed, &n);
    std::string which;
    for (size_t i = 0; i < n && dp; ++i)
      which += dp[i] == e1 ? " e1" : dp[i] == e2 ? " e2" : " other";
    Say("%s: info %s, status %d, deps %zu:%s", what, Name(r), static_cast<int>(st), n,
        which.c_str());
  };
  deps("begin");
  R(UpdateDeps(b.s, &e1, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  deps("add e1");
  R(UpdateDeps(b.s, &e1, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  deps("add e1 again");
  R(UpdateDeps(b.s, &e2, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  deps("add e2");
  R(UpdateDeps(b.s, &e2, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  deps("set e2");
  R(UpdateDeps(b.s, nullptr, 0, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  deps("set none");
  CUgraphNode both[2] = {e1, e2};
  R(UpdateDeps(b.s, both, 2, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  deps("set both");
  CUgraphEdgeData ed[2];
  memset(ed, 0, sizeof ed);
  R(cuStreamUpdateCaptureDependencies_v2(b.s, both, ed, 2, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  deps("v2 set both with edge data");
  ed[0].type = 99;
  R(cuStreamUpdateCaptureDependencies_v2(b.s, both, ed, 2, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  deps("v2 bad edge type");
  R(UpdateDeps(b.s, &e1, 1, 2));
  R(UpdateDeps(b.s, &e1, 1, 0xffffffffu));
  CUgraph g2 = nullptr;
  cuGraphCreate(&g2, 0);
  CUgraphNode foreign = nullptr;
  cuGraphAddEmptyNode(&foreign, g2, nullptr, 0);
  R(UpdateDeps(b.s, &foreign, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  deps("after foreign");
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  cuStreamIsCapturing(b.s, &st);
  if (st == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    R(UpdateDeps(b.s, both, 2, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    R(cuMemsetD32Async(d, 1, 1, b.s));
  }
  CUgraph out = nullptr;
  R(cuStreamEndCapture(b.s, &out));
  Say("nodes %zu, edges %zu", NodeCount(g), EdgeCount(g));
  // Older ABI form.
  auto v1 = Sym<UpdateDepsV1Fn>("cuStreamUpdateCaptureDependencies");
  if (v1) {
    R(cuStreamBeginCapture(b.s, CU_STREAM_CAPTURE_MODE_RELAXED));
    R(v1(b.s, &e1, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
    CUgraph o2 = nullptr;
    R(cuStreamEndCapture(b.s, &o2));
    if (o2) cuGraphDestroy(o2);
  }
  R(UpdateDeps(nullptr, &e1, 1, 0));
  cuCtxSetCurrent(nullptr);
  R(UpdateDeps(b.s, &e1, 1, 0));
  cuCtxSetCurrent(b.ctx);
  // Last (a null array with a count may crash the driver).
  R(cuStreamBeginCapture(b.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(UpdateDeps(b.s, nullptr, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  cuStreamEndCapture(b.s, &out);
  cuGraphDestroy(g);
  cuGraphDestroy(g2);
  cuMemFree(d);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Per-thread and older-ABI forms.

// ptsz: the _ptsz forms on the null stream (meaning the per-thread stream) and a created one.
int CasePtsz() {
  Base b;
  if (!b.Init()) return 1;
  unsigned long long pt = 77, viaptsz = 77, viaptsz_s = 77, sid = 77;
  cuStreamGetId(CU_STREAM_PER_THREAD, &pt);
  cuStreamGetId(b.s, &sid);
  auto getid = Sym<StreamIdFn>("cuStreamGetId_ptsz");
  if (getid) {
    R(getid(nullptr, &viaptsz));
    R(getid(b.s, &viaptsz_s));
    Say("null via _ptsz is the per-thread stream = %s, created stream same = %s",
        YesNo(viaptsz == pt), YesNo(viaptsz_s == sid));
  }
  auto getdev = Sym<StreamDevFn>("cuStreamGetDevice_ptsz");
  if (getdev) {
    CUdevice d = 77;
    R(getdev(nullptr, &d));
    Say("device %d", d);
  }
  auto getattr = Sym<GetAttrFn>("cuStreamGetAttribute_ptsz");
  auto setattr = Sym<SetAttrFn>("cuStreamSetAttribute_ptsz");
  auto copyattr = Sym<CopyAttrFn>("cuStreamCopyAttributes_ptsz");
  if (getattr && setattr && copyattr) {
    CUstreamAttrValue v;
    memset(&v, 0, sizeof v);
    v.syncPolicy = CU_SYNC_POLICY_YIELD;
    R(setattr(nullptr, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    Say("per-thread stream now: %s", GetOne(CU_STREAM_PER_THREAD, 3).c_str());
    Say("legacy stream now: %s", GetOne(CU_STREAM_LEGACY, 3).c_str());
    memset(&v, 0x5a, sizeof v);
    R(getattr(nullptr, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    Say("read via _ptsz: %s", Show(CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, v).c_str());
    R(copyattr(b.s, nullptr));
    Say("copied from per-thread: %s", GetOne(b.s, 3).c_str());
  }
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  cuMemsetD8(d, 0, 4096);
  auto w32 = Sym<Value32Fn>("cuStreamWriteValue32_v2_ptsz");
  auto w64 = Sym<Value64Fn>("cuStreamWriteValue64_v2_ptsz");
  auto q32 = Sym<Value32Fn>("cuStreamWaitValue32_v2_ptsz");
  auto q64 = Sym<Value64Fn>("cuStreamWaitValue64_v2_ptsz");
  auto batch = Sym<BatchFn>("cuStreamBatchMemOp_v2_ptsz");
  if (w32 && w64 && q32 && q64 && batch) {
    R(w32(nullptr, d, 21, 0));
    R(w64(nullptr, d + 8, 22, 0));
    R(q32(nullptr, d, 21, CU_STREAM_WAIT_VALUE_EQ));
    R(q64(nullptr, d + 8, 22, CU_STREAM_WAIT_VALUE_EQ));
    CUstreamBatchMemOpParams one = Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 16, 23, 0);
    R(batch(nullptr, 1, &one, 0));
    R(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    Say("read back %u %llu %u", Read32(d), static_cast<unsigned long long>(Read64(d + 8)),
        Read32(d + 16));
  }
  // Older-ABI (v1) memop forms.
  auto o32 = Sym<Value32Fn>("cuStreamWriteValue32");
  auto o64 = Sym<Value64Fn>("cuStreamWriteValue64");
  auto ow32 = Sym<Value32Fn>("cuStreamWaitValue32");
  auto ow64 = Sym<Value64Fn>("cuStreamWaitValue64");
  auto obatch = Sym<BatchFn>("cuStreamBatchMemOp");
  if (o32 && o64 && ow32 && ow64 && obatch) {
    R(o32(b.s, d + 32, 31, 0));
    R(o64(b.s, d + 40, 32, 0));
    R(ow32(b.s, d + 32, 31, CU_STREAM_WAIT_VALUE_EQ));
    R(ow64(b.s, d + 40, 32, CU_STREAM_WAIT_VALUE_EQ));
    CUstreamBatchMemOpParams one = Op(CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 48, 33, 0);
    R(obatch(b.s, 1, &one, 0));
    CUstreamBatchMemOpParams bar = Op(CU_STREAM_MEM_OP_BARRIER, 0, 0, 0);
    R(obatch(b.s, 1, &bar, 0));
    R(cuStreamSynchronize(b.s));
    Say("v1 read back %u %llu %u", Read32(d + 32),
        static_cast<unsigned long long>(Read64(d + 40)), Read32(d + 48));
  } else {
    Say("older-ABI memops exported = no");
  }
  auto att = Sym<AttachFn>("cuStreamAttachMemAsync_ptsz");
  if (att) {
    CUdeviceptr m = 0;
    cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL);
    R(att(nullptr, m, 0, CU_MEM_ATTACH_SINGLE));
    R(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    cuMemFree(m);
  }
  auto begin = Sym<BeginToGraphFn>("cuStreamBeginCaptureToGraph_ptsz");
  auto upd = Sym<UpdateDepsV2Fn>("cuStreamUpdateCaptureDependencies_v2_ptsz");
  auto updv1 = Sym<UpdateDepsV1Fn>("cuStreamUpdateCaptureDependencies_ptsz");
  if (begin && upd) {
    CUgraph g = nullptr;
    cuGraphCreate(&g, 0);
    CUgraphNode e = nullptr;
    cuGraphAddEmptyNode(&e, g, nullptr, 0);
    R(begin(nullptr, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    R(cuStreamIsCapturing(CU_STREAM_PER_THREAD, &st));
    Say("per-thread stream capturing = %d", static_cast<int>(st));
    R(upd(nullptr, &e, nullptr, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
    if (updv1) R(updv1(nullptr, &e, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
    R(cuMemsetD32Async(d, 1, 1, CU_STREAM_PER_THREAD));
    CUgraph out = nullptr;
    R(cuStreamEndCapture(CU_STREAM_PER_THREAD, &out));
    Say("returned the given graph = %s, nodes %zu, edges %zu", YesNo(out == g), NodeCount(g),
        EdgeCount(g));
    cuGraphDestroy(g);
  }
  cuMemFree(d);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Every function with garbage / null arguments, before cuInit and without a context.

const char* const kFunctions[] = {
    "cuStreamGetId", "cuStreamGetDevice", "cuStreamGetAttribute", "cuStreamSetAttribute",
    "cuStreamCopyAttributes", "cuStreamWaitValue32", "cuStreamWaitValue64",
    "cuStreamWriteValue32", "cuStreamWriteValue64", "cuStreamBatchMemOp",
    "cuStreamAttachMemAsync", "cuStreamBeginCaptureToGraph", "cuStreamUpdateCaptureDependencies",
    "cuCtxGetId", "cuCtxSetFlags", "cuCtxRecordEvent", "cuCtxWaitEvent", "cuCtxGetCacheConfig",
    "cuCtxSetCacheConfig", "cuCtxGetSharedMemConfig", "cuCtxSetSharedMemConfig",
    "cuCtxResetPersistingL2Cache", "cuCtxGetExecAffinity", "cuCtxAttach", "cuCtxDetach"};

// Calls `fn` with garbage handles, null pointers or (`destroyed`) handles of a destroyed stream,
// context and event, and prints the result.
void CallWith(const std::string& fn, const std::string& mode) {
  bool null = mode == "null";
  CUstream s = null ? nullptr : Garbage<CUstream>();
  CUcontext c = null ? nullptr : Garbage<CUcontext>();
  CUevent ev = null ? nullptr : Garbage<CUevent>();
  if (mode == "destroyed") {
    CUcontext cur = nullptr;
    cuCtxGetCurrent(&cur);
    s = DestroyedStream();
    cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
    cuEventDestroy(ev);
    CUdevice dev = 0;
    cuDeviceGet(&dev, 0);
    c = NewCtx(dev);
    cuCtxDestroy(c);
    cuCtxSetCurrent(cur);
  }
  unsigned long long id = 77;
  CUdevice dev = 77;
  CUstreamAttrValue v;
  memset(&v, 0, sizeof v);
  CUstreamBatchMemOpParams op = Op(CU_STREAM_MEM_OP_BARRIER, 0, 0, 0);
  CUfunc_cache cc = static_cast<CUfunc_cache>(77);
  CUsharedconfig sc = static_cast<CUsharedconfig>(77);
  CUexecAffinityParam ap;
  memset(&ap, 0x5a, sizeof ap);
  auto cur_ctx = [] {
    CUcontext cc = nullptr;
    cuCtxGetCurrent(&cc);
    return cc;
  };
  CUcontext out = Garbage<CUcontext>();
  CUgraphNode node = nullptr;
  CUresult r = CUDA_ERROR_UNKNOWN;
  std::string after;
  if (fn == "cuStreamGetId") {
    r = cuStreamGetId(s, null ? nullptr : &id);
    after = id == 77 ? "id untouched" : "id written";
  } else if (fn == "cuStreamGetDevice") {
    r = cuStreamGetDevice(s, null ? nullptr : &dev);
    after = "device " + std::to_string(dev);
  } else if (fn == "cuStreamGetAttribute") {
    r = cuStreamGetAttribute(s, CU_LAUNCH_ATTRIBUTE_PRIORITY, null ? nullptr : &v);
  } else if (fn == "cuStreamSetAttribute") {
    r = cuStreamSetAttribute(s, CU_LAUNCH_ATTRIBUTE_PRIORITY, null ? nullptr : &v);
  } else if (fn == "cuStreamCopyAttributes") {
    r = cuStreamCopyAttributes(s, s);
  } else if (fn == "cuStreamWaitValue32") {
    r = cuStreamWaitValue32(s, null ? 0 : 0x5a5a5a5a0000ull, 0, 0);
  } else if (fn == "cuStreamWaitValue64") {
    r = cuStreamWaitValue64(s, null ? 0 : 0x5a5a5a5a0000ull, 0, 0);
  } else if (fn == "cuStreamWriteValue32") {
    r = cuStreamWriteValue32(s, null ? 0 : 0x5a5a5a5a0000ull, 0, 0);
  } else if (fn == "cuStreamWriteValue64") {
    r = cuStreamWriteValue64(s, null ? 0 : 0x5a5a5a5a0000ull, 0, 0);
  } else if (fn == "cuStreamBatchMemOp") {
    r = cuStreamBatchMemOp(s, 1, null ? nullptr : &op, 0);
  } else if (fn == "cuStreamAttachMemAsync") {
    r = cuStreamAttachMemAsync(s, null ? 0 : 0x5a5a5a5a0000ull, 0, CU_MEM_ATTACH_SINGLE);
  } else if (fn == "cuStreamBeginCaptureToGraph") {
    r = cuStreamBeginCaptureToGraph(s, null ? nullptr : Garbage<CUgraph>(), nullptr, nullptr, 0,
                                    CU_STREAM_CAPTURE_MODE_GLOBAL);
  } else if (fn == "cuStreamUpdateCaptureDependencies") {
    node = null ? nullptr : Garbage<CUgraphNode>();
    r = UpdateDeps(s, null ? nullptr : &node, 1, 0);
  } else if (fn == "cuCtxGetId") {
    r = cuCtxGetId(c, null ? nullptr : &id);
    after = id == 77 ? "id untouched" : "id written";
  } else if (fn == "cuCtxSetFlags") {
    r = cuCtxSetFlags(null ? 0 : 0xffffffffu);
  } else if (fn == "cuCtxRecordEvent" && mode == "destroyed") {
    r = cuCtxRecordEvent(c, nullptr);
    Say("%s(destroyed context) = %s", fn.c_str(), Name(r));
    r = cuCtxRecordEvent(cur_ctx(), ev);
  } else if (fn == "cuCtxWaitEvent" && mode == "destroyed") {
    r = cuCtxWaitEvent(c, nullptr);
    Say("%s(destroyed context) = %s", fn.c_str(), Name(r));
    r = cuCtxWaitEvent(cur_ctx(), ev);
  } else if (fn == "cuCtxRecordEvent") {
    r = cuCtxRecordEvent(c, ev);
  } else if (fn == "cuCtxWaitEvent") {
    r = cuCtxWaitEvent(c, ev);
  } else if (fn == "cuCtxGetCacheConfig") {
    r = cuCtxGetCacheConfig(null ? nullptr : &cc);
    after = "config " + std::to_string(static_cast<int>(cc));
  } else if (fn == "cuCtxSetCacheConfig") {
    r = cuCtxSetCacheConfig(static_cast<CUfunc_cache>(null ? 0 : 77));
  } else if (fn == "cuCtxGetSharedMemConfig") {
    r = CtxGetSharedMemConfig(null ? nullptr : &sc);
    after = "config " + std::to_string(static_cast<int>(sc));
  } else if (fn == "cuCtxSetSharedMemConfig") {
    r = CtxSetSharedMemConfig(static_cast<CUsharedconfig>(null ? 0 : 77));
  } else if (fn == "cuCtxResetPersistingL2Cache") {
    r = cuCtxResetPersistingL2Cache();
  } else if (fn == "cuCtxGetExecAffinity") {
    r = cuCtxGetExecAffinity(null ? nullptr : &ap, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
  } else if (fn == "cuCtxAttach") {
    r = CtxAttach(null ? nullptr : &out, 0);
    after = out == Garbage<CUcontext>() ? "context untouched" : out ? "context set" : "null";
  } else if (fn == "cuCtxDetach") {
    r = CtxDetach(c);
  } else {
    Say("unknown function %s", fn.c_str());
    return;
  }
  Say("%s(%s) = %s%s%s", fn.c_str(), mode.c_str(), Name(r),
      after.empty() ? "" : ", ", after.c_str());
}

// noinit: every function before cuInit, garbage and null arguments.
int CaseNoInit() {
  for (const char* f : kFunctions) CallWith(f, "garbage");
  for (const char* f : kFunctions) CallWith(f, "null");
  R(cuInit(0));
  return 0;
}

// null:<fn>: after cuInit with the primary context current, null handles and pointers.
int CaseNull(const std::string& fn) {
  Base b;
  if (!b.Init()) return 1;
  CallWith(fn, "null");
  return 0;
}

// garbage:<fn>: the same with garbage handles (its own case: the driver may crash).
int CaseGarbage(const std::string& fn) {
  Base b;
  if (!b.Init()) return 1;
  CallWith(fn, "garbage");
  return 0;
}

// destroyed:<fn>: the same with destroyed handles.
int CaseDestroyed(const std::string& fn) {
  Base b;
  if (!b.Init()) return 1;
  CallWith(fn, "destroyed");
  return 0;
}

// noctx:<fn>: after cuInit, no context current, null then garbage handles.
int CaseNoCtx(const std::string& fn) {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CallWith(fn, "null");
  CallWith(fn, "garbage");
  return 0;
}

// ------------------------------------------------------------------------------------------

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {
      "ids:stream", "ids:ctx", "streamdev", "attr:get", "attr:set", "attr:copy", "cachecfg",
      "ctxflags", "affinity", "attach", "memops:write", "memops:wait", "memops:batch",
      "memops:capture", "ctxevent:record", "ctxevent:wait", "attachmem", "capture:tograph",
      "capture:update", "ptsz", "noinit"};
  for (const char* w : {"zero", "garbage", "pastend", "tail", "unaligned", "hoststack", "freed"})
    for (const char* o : {"write32", "write64", "wait32", "wait64", "batch"})
      cases.push_back(std::string("addr:") + w + ":" + o);
  for (const char* m : {"null:", "garbage:", "destroyed:", "noctx:"})
    for (const char* f : kFunctions) cases.push_back(std::string(m) + f);
  return cases;
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  auto rest = [&](const char* prefix) { return c.substr(strlen(prefix)); };
  if (c == "ids:stream") return CaseStreamIds();
  if (c == "ids:ctx") return CaseCtxIds();
  if (c == "streamdev") return CaseStreamDevice();
  if (c == "attr:get") return CaseAttrGet();
  if (c == "attr:set") return CaseAttrSet();
  if (c == "attr:copy") return CaseAttrCopy();
  if (c == "cachecfg") return CaseCacheConfig();
  if (c == "ctxflags") return CaseCtxFlags();
  if (c == "affinity") return CaseAffinity();
  if (c == "attach") return CaseAttach();
  if (c == "memops:write") return CaseWrite();
  if (c == "memops:wait") return CaseWait();
  if (c == "memops:batch") return CaseBatch();
  if (c == "memops:capture") return CaseMemOpCapture();
  if (c == "ctxevent:record") return CaseCtxRecord();
  if (c == "ctxevent:wait") return CaseCtxWait();
  if (c == "attachmem") return CaseAttachMem();
  if (c == "capture:tograph") return CaseCaptureToGraph();
  if (c == "capture:update") return CaseUpdateDeps();
  if (c == "ptsz") return CasePtsz();
  if (c == "noinit") return CaseNoInit();
  if (c.rfind("addr:", 0) == 0) {
    std::string r = rest("addr:");
    size_t colon = r.find(':');
    return CaseAddr(r.substr(0, colon), r.substr(colon + 1));
  }
  if (c.rfind("null:", 0) == 0) return CaseNull(rest("null:"));
  if (c.rfind("garbage:", 0) == 0) return CaseGarbage(rest("garbage:"));
  if (c.rfind("destroyed:", 0) == 0) return CaseDestroyed(rest("destroyed:"));
  if (c.rfind("noctx:", 0) == 0) return CaseNoCtx(rest("noctx:"));
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
  std::string dir = "/tmp/streamctx_probe_" + std::to_string(getpid());
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
        verdict[running[i].name] = v;  // no time: the lines compare equal across drivers
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
    fprintf(stderr, "usage: streamctx_probe all [jobs] | list | <case>\n");
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
