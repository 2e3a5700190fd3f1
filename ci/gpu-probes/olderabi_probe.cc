// Older-ABI probe for cuhal: how the real driver answers the *older ABIs* of cuda.h's versioned
// entry points, the plain names libcuda.so.1 still exports (cuMemAlloc, cuMemcpyHtoD, cuCtxDestroy,
// cuGraphInstantiate, cuStreamWaitValue32, ...) and that cuGetProcAddress hands out for old
// cudaVersion arguments. Each is resolved with dlsym(RTLD_DEFAULT, "<plain name>") and called
// with the old signature (cuda.h's __CUDA_API_VERSION_INTERNAL section): the 32-bit
// CUdeviceptr_v1 / unsigned int memory forms, the pre-4.0 context push/pop/destroy, the CUDA 10/11
// graph forms (CUDA_KERNEL_NODE_PARAMS_v1, the error-node instantiate, the update-result
// ExecUpdate), the CUdevice forms of cuMemAdvise/cuMemPrefetchAsync, the failIdx batch copies, the
// v1 stream memory operations, link, IPC, graphics and texture-reference forms; valid, invalid
// and without a context. The "procaddress" case prints, for cudaVersion 3000 ... 13000, whether
// cuGetProcAddress hands out the plain symbol, the versioned one, another one or an error.
//
//   olderabi_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                               `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   olderabi_probe list         the cases
//   olderabi_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address or handle is printed, only relations.
//
//   g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include ci/gpu-probes/olderabi_probe.cc
//       -o /tmp/olderabi_probe -lcuda -ldl -lpthread && /tmp/olderabi_probe all 8
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

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

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
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  printf("%s: %s\n", g_case, line);
  fflush(stdout);
}

// Prints "<expr> = <CUresult>" (without the "fn::" of the older ABIs resolved with dlsym) and
// returns the result.
#define R(expr) Res(#expr, (expr))
CUresult Res(const char* what, CUresult r) {
  std::string w = what;
  for (size_t p; (p = w.find("fn::")) != std::string::npos;) w.erase(p, 4);
  Say("%s = %s", w.c_str(), Name(r));
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

typedef unsigned int Dptr1;  // CUdeviceptr_v1

// The older ABIs, with their old signatures, resolved by plain name. A missing one answers
// CUresult(999) (and a "note:" line says so).
template <typename F>
struct Stub;
template <typename... A>
struct Stub<CUresult (*)(A...)> {
  static CUresult Fn(A...) { return static_cast<CUresult>(999); }
};
#define STR2(x) #x
#define STR(x) STR2(x)
namespace v1 {
typedef CUresult (*CtxDestroyT)(CUcontext);
typedef CUresult (*CtxPopCurrentT)(CUcontext*);
typedef CUresult (*CtxPushCurrentT)(CUcontext);
typedef CUresult (*DeviceTotalMemT)(unsigned int*, CUdevice);
typedef CUresult (*EventDestroyT)(CUevent);
typedef CUresult (*GraphAddKernelNodeT)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t,
                                        const CUDA_KERNEL_NODE_PARAMS_v1*);
typedef CUresult (*GraphExecKernelNodeSetParamsT)(CUgraphExec, CUgraphNode,
                                                  const CUDA_KERNEL_NODE_PARAMS_v1*);
typedef CUresult (*GraphExecUpdateT)(CUgraphExec, CUgraph, CUgraphNode*,
                                     CUgraphExecUpdateResult*);
typedef CUresult (*GraphInstantiateT)(CUgraphExec*, CUgraph, CUgraphNode*, char*, size_t);
typedef CUresult (*GraphKernelNodeGetParamsT)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v1*);
typedef CUresult (*GraphKernelNodeSetParamsT)(CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1*);
typedef CUresult (*GraphRemoveDependenciesT)(CUgraph, const CUgraphNode*, const CUgraphNode*,
                                             size_t);
typedef CUresult (*GraphicsResourceGetMappedPointerT)(Dptr1*, unsigned int*, CUgraphicsResource);
typedef CUresult (*GraphicsResourceSetMapFlagsT)(CUgraphicsResource, unsigned int);
typedef CUresult (*IpcOpenMemHandleT)(CUdeviceptr*, CUipcMemHandle, unsigned int);
typedef CUresult (*LinkAddDataT)(CUlinkState, CUjitInputType, void*, size_t, const char*,
                                 unsigned int, CUjit_option*, void**);
typedef CUresult (*LinkAddFileT)(CUlinkState, CUjitInputType, const char*, unsigned int,
                                 CUjit_option*, void**);
typedef CUresult (*LinkCreateT)(unsigned int, CUjit_option*, void**, CUlinkState*);
typedef CUresult (*MemAdviseT)(CUdeviceptr, size_t, CUmem_advise, CUdevice);
typedef CUresult (*MemAllocT)(Dptr1*, unsigned int);
typedef CUresult (*MemAllocHostT)(void**, unsigned int);
typedef CUresult (*MemAllocPitchT)(Dptr1*, unsigned int*, unsigned int, unsigned int,
                                   unsigned int);
typedef CUresult (*MemFreeT)(Dptr1);
typedef CUresult (*MemGetAddressRangeT)(Dptr1*, unsigned int*, Dptr1);
typedef CUresult (*MemGetInfoT)(unsigned int*, unsigned int*);
typedef CUresult (*MemHostGetDevicePointerT)(Dptr1*, void*, unsigned int);
typedef CUresult (*MemHostRegisterT)(void*, size_t, unsigned int);
typedef CUresult (*MemPrefetchAsyncT)(CUdeviceptr, size_t, CUdevice, CUstream);
typedef CUresult (*Memcpy3DBatchAsyncT)(size_t, CUDA_MEMCPY3D_BATCH_OP*, size_t*,
                                        unsigned long long, CUstream);
typedef CUresult (*MemcpyBatchAsyncT)(CUdeviceptr*, CUdeviceptr*, size_t*, size_t,
                                      CUmemcpyAttributes*, size_t*, size_t, size_t*, CUstream);
typedef CUresult (*MemcpyDtoDT)(Dptr1, Dptr1, unsigned int);
typedef CUresult (*MemcpyDtoDAsyncT)(Dptr1, Dptr1, unsigned int, CUstream);
typedef CUresult (*MemcpyDtoHT)(void*, Dptr1, unsigned int);
typedef CUresult (*MemcpyDtoHAsyncT)(void*, Dptr1, unsigned int, CUstream);
typedef CUresult (*MemcpyHtoDT)(Dptr1, const void*, unsigned int);
typedef CUresult (*MemcpyHtoDAsyncT)(Dptr1, const void*, unsigned int, CUstream);
typedef CUresult (*MemsetD16T)(Dptr1, unsigned short, unsigned int);
typedef CUresult (*MemsetD2D16T)(Dptr1, unsigned int, unsigned short, unsigned int, unsigned int);
typedef CUresult (*MemsetD2D32T)(Dptr1, unsigned int, unsigned int, unsigned int, unsigned int);
typedef CUresult (*MemsetD2D8T)(Dptr1, unsigned int, unsigned char, unsigned int, unsigned int);
typedef CUresult (*MemsetD32T)(Dptr1, unsigned int, unsigned int);
typedef CUresult (*MemsetD8T)(Dptr1, unsigned char, unsigned int);
typedef CUresult (*ModuleGetGlobalT)(Dptr1*, unsigned int*, CUmodule, const char*);
typedef CUresult (*StreamBatchMemOpT)(CUstream, unsigned int, CUstreamBatchMemOpParams*,
                                      unsigned int);
typedef CUresult (*StreamDestroyT)(CUstream);
typedef CUresult (*StreamUpdateCaptureDependenciesT)(CUstream, CUgraphNode*, size_t,
                                                     unsigned int);
typedef CUresult (*StreamWaitValue32T)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
typedef CUresult (*StreamWaitValue64T)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
typedef CUresult (*StreamWriteValue32T)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
typedef CUresult (*StreamWriteValue64T)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
typedef CUresult (*TexRefGetAddressT)(Dptr1*, CUtexref);
typedef CUresult (*TexRefSetAddressT)(unsigned int*, CUtexref, Dptr1, unsigned int);
typedef CUresult (*TexRefSetAddress2DT)(CUtexref, const CUDA_ARRAY_DESCRIPTOR*, Dptr1,
                                        unsigned int);
}  // namespace v1

// X(short name, plain symbol, versioned symbol: cuda.h's macro for the plain name)
#define V1_LIST(X)                                                                             \
  X(CtxDestroy, "cuCtxDestroy", STR(cuCtxDestroy))                                             \
  X(CtxPopCurrent, "cuCtxPopCurrent", STR(cuCtxPopCurrent))                                    \
  X(CtxPushCurrent, "cuCtxPushCurrent", STR(cuCtxPushCurrent))                                 \
  X(DeviceTotalMem, "cuDeviceTotalMem", STR(cuDeviceTotalMem))                                 \
  X(EventDestroy, "cuEventDestroy", STR(cuEventDestroy))                                       \
  X(GraphAddKernelNode, "cuGraphAddKernelNode", STR(cuGraphAddKernelNode))                     \
  X(GraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams",                            \
    STR(cuGraphExecKernelNodeSetParams))                                                       \
  X(GraphExecUpdate, "cuGraphExecUpdate", STR(cuGraphExecUpdate))                              \
  X(GraphInstantiate, "cuGraphInstantiate", STR(cuGraphInstantiate))                           \
  X(GraphKernelNodeGetParams, "cuGraphKernelNodeGetParams", STR(cuGraphKernelNodeGetParams))   \
  X(GraphKernelNodeSetParams, "cuGraphKernelNodeSetParams", STR(cuGraphKernelNodeSetParams))   \
  X(GraphRemoveDependencies, "cuGraphRemoveDependencies", STR(cuGraphRemoveDependencies))      \
  X(GraphicsResourceGetMappedPointer, "cuGraphicsResourceGetMappedPointer",                    \
    STR(cuGraphicsResourceGetMappedPointer))                                                   \
  X(GraphicsResourceSetMapFlags, "cuGraphicsResourceSetMapFlags",                              \
    STR(cuGraphicsResourceSetMapFlags))                                                        \
  X(IpcOpenMemHandle, "cuIpcOpenMemHandle", STR(cuIpcOpenMemHandle))                           \
  X(LinkAddData, "cuLinkAddData", STR(cuLinkAddData))                                          \
  X(LinkAddFile, "cuLinkAddFile", STR(cuLinkAddFile))                                          \
  X(LinkCreate, "cuLinkCreate", STR(cuLinkCreate))                                             \
  X(MemAdvise, "cuMemAdvise", STR(cuMemAdvise))                                                \
  X(MemAlloc, "cuMemAlloc", STR(cuMemAlloc))                                                   \
  X(MemAllocHost, "cuMemAllocHost", STR(cuMemAllocHost))                                       \
  X(MemAllocPitch, "cuMemAllocPitch", STR(cuMemAllocPitch))                                    \
  X(MemFree, "cuMemFree", STR(cuMemFree))                                                      \
  X(MemGetAddressRange, "cuMemGetAddressRange", STR(cuMemGetAddressRange))                     \
  X(MemGetInfo, "cuMemGetInfo", STR(cuMemGetInfo))                                             \
  X(MemHostGetDevicePointer, "cuMemHostGetDevicePointer", STR(cuMemHostGetDevicePointer))      \
  X(MemHostRegister, "cuMemHostRegister", STR(cuMemHostRegister))                              \
  X(MemPrefetchAsync, "cuMemPrefetchAsync", STR(cuMemPrefetchAsync))                           \
  X(Memcpy3DBatchAsync, "cuMemcpy3DBatchAsync", STR(cuMemcpy3DBatchAsync))                     \
  X(MemcpyBatchAsync, "cuMemcpyBatchAsync", STR(cuMemcpyBatchAsync))                           \
  X(MemcpyDtoD, "cuMemcpyDtoD", STR(cuMemcpyDtoD))                                             \
  X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync", STR(cuMemcpyDtoDAsync))                              \
  X(MemcpyDtoH, "cuMemcpyDtoH", STR(cuMemcpyDtoH))                                             \
  X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync", STR(cuMemcpyDtoHAsync))                              \
  X(MemcpyHtoD, "cuMemcpyHtoD", STR(cuMemcpyHtoD))                                             \
  X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync", STR(cuMemcpyHtoDAsync))                              \
  X(MemsetD16, "cuMemsetD16", STR(cuMemsetD16))                                                \
  X(MemsetD2D16, "cuMemsetD2D16", STR(cuMemsetD2D16))                                          \
  X(MemsetD2D32, "cuMemsetD2D32", STR(cuMemsetD2D32))                                          \
  X(MemsetD2D8, "cuMemsetD2D8", STR(cuMemsetD2D8))                                             \
  X(MemsetD32, "cuMemsetD32", STR(cuMemsetD32))                                                \
  X(MemsetD8, "cuMemsetD8", STR(cuMemsetD8))                                                   \
  X(ModuleGetGlobal, "cuModuleGetGlobal", STR(cuModuleGetGlobal))                              \
  X(StreamBatchMemOp, "cuStreamBatchMemOp", STR(cuStreamBatchMemOp))                           \
  X(StreamDestroy, "cuStreamDestroy", STR(cuStreamDestroy))                                    \
  X(StreamUpdateCaptureDependencies, "cuStreamUpdateCaptureDependencies",                      \
    STR(cuStreamUpdateCaptureDependencies))                                                    \
  X(StreamWaitValue32, "cuStreamWaitValue32", STR(cuStreamWaitValue32))                        \
  X(StreamWaitValue64, "cuStreamWaitValue64", STR(cuStreamWaitValue64))                        \
  X(StreamWriteValue32, "cuStreamWriteValue32", STR(cuStreamWriteValue32))                     \
  X(StreamWriteValue64, "cuStreamWriteValue64", STR(cuStreamWriteValue64))                     \
  X(TexRefGetAddress, "cuTexRefGetAddress", STR(cuTexRefGetAddress))                           \
  X(TexRefSetAddress, "cuTexRefSetAddress", STR(cuTexRefSetAddress))                           \
  X(TexRefSetAddress2D, "cuTexRefSetAddress2D", STR(cuTexRefSetAddress2D))

namespace fn {
#define FN_DECL(n, plain, versioned) v1::n##T n = nullptr;
V1_LIST(FN_DECL)
}  // namespace fn

void ResolveAll() {
#define FN_RESOLVE(n, plain, versioned)                                               \
  {                                                                                   \
    void* p = dlsym(RTLD_DEFAULT, plain);                                             \
    fn::n = p != nullptr ? reinterpret_cast<v1::n##T>(p) : &Stub<v1::n##T>::Fn;       \
    if (p == nullptr) printf("note: %s is not exported\n", plain);                    \
  }
  V1_LIST(FN_RESOLVE)
}

struct Names {
  const char* plain;
  const char* versioned;
};
const Names kNames[] = {
#define FN_NAME(n, plain, versioned) {plain, versioned},
    V1_LIST(FN_NAME)};

const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .global .align 4 .u32 gvar[4];
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

CUdevice g_dev = 0;
CUcontext g_ctx = nullptr;

bool Init() {
  CUresult r = cuInit(0);
  if (r != CUDA_SUCCESS) {
    Say("cuInit = %s", Name(r));
    return false;
  }
  cuDeviceGet(&g_dev, 0);
  if (cuDevicePrimaryCtxRetain(&g_ctx, g_dev) != CUDA_SUCCESS) return false;
  cuCtxSetCurrent(g_ctx);
  return true;
}

CUcontext NewCtx() {
  CUcontext c = nullptr;
  CUctxCreateParams cp;
  memset(&cp, 0, sizeof cp);
  CUresult r = cuCtxCreate(&c, &cp, 0, g_dev);
  if (r != CUDA_SUCCESS) Say("cuCtxCreate = %s", Name(r));
  return c;
}

Dptr1 Lo(CUdeviceptr p) { return static_cast<Dptr1>(p & 0xffffffffu); }
bool Fits32(CUdeviceptr p) { return p <= 0xffffffffull; }

uint32_t Read32(CUdeviceptr p) {
  uint32_t v = 0xdeadbeef;
  cuMemcpyDtoH(&v, p, 4);
  return v;
}

// ---- procaddress / exports ----

const char* Which(void* got, const Names& n) {
  void* plain = dlsym(RTLD_DEFAULT, n.plain);
  void* ver = dlsym(RTLD_DEFAULT, n.versioned);
  if (got == nullptr) return "null";
  if (got == plain) return "plain";
  if (got == ver) return "versioned";
  return "other";
}

const char* QName(CUdriverProcAddressQueryResult q) {
  switch (q) {
    case CU_GET_PROC_ADDRESS_SUCCESS: return "SUCCESS";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "SYMBOL_NOT_FOUND";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: return "VERSION_NOT_SUFFICIENT";
    default: return "?";
  }
}

int CaseExports() {
  for (const Names& n : kNames) {
    void* plain = dlsym(RTLD_DEFAULT, n.plain);
    void* ver = dlsym(RTLD_DEFAULT, n.versioned);
    Say("%s: plain exported = %s, versioned %s exported = %s, same = %s", n.plain,
        YesNo(plain != nullptr), n.versioned, YesNo(ver != nullptr),
        YesNo(plain != nullptr && plain == ver));
  }
  return 0;
}

int CaseProcAddress(bool init) {
  if (init) cuInit(0);
  const int kVersions[] = {3000, 3010, 3020, 4000, 10000, 10010, 10020, 11000, 11030, 12000,
                           12030, 12050, 12080, 13000};
  for (const Names& n : kNames) {
    std::string line = std::string(n.plain) + " (" + n.versioned + "):";
    for (int v : kVersions) {
      void* got = nullptr;
      CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
      CUresult r = cuGetProcAddress_v2(n.plain, &got, v, CU_GET_PROC_ADDRESS_DEFAULT, &q);
      line += " " + std::to_string(v) + "=";
      if (r != CUDA_SUCCESS)
        line += std::string(Name(r)) + "/" + QName(q);
      else
        line += std::string(Which(got, n)) +
                (q == CU_GET_PROC_ADDRESS_SUCCESS ? "" : std::string("/") + QName(q));
    }
    Say("%s", line.c_str());
  }
  // The ptds/ptsz flags and the versioned name itself for a couple of names.
  for (const char* nm : {"cuMemAlloc", "cuMemcpyHtoD", "cuStreamDestroy", "cuMemcpyHtoDAsync"}) {
    const Names* n = nullptr;
    for (const Names& k : kNames)
      if (strcmp(k.plain, nm) == 0) n = &k;
    for (cuuint64_t f :
         {CU_GET_PROC_ADDRESS_LEGACY_STREAM, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM}) {
      for (int v : {3000, 3020, 13000}) {
        void* got = nullptr;
        CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
        CUresult r = cuGetProcAddress_v2(nm, &got, v, f, &q);
        Say("cuGetProcAddress(%s, %d, flags %llu) = %s, %s, gives %s", nm, v,
            static_cast<unsigned long long>(f), Name(r), QName(q),
            r == CUDA_SUCCESS ? Which(got, *n) : "-");
      }
    }
  }
  for (const Names& n : kNames) {
    void* got = nullptr;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = cuGetProcAddress_v2(n.versioned, &got, 13000, 0, &q);
    Say("cuGetProcAddress(\"%s\", 13000) = %s, %s, gives %s", n.versioned, Name(r), QName(q),
        r == CUDA_SUCCESS ? Which(got, n) : "-");
  }
  return 0;
}

// ---- memory ----

int CaseMemAlloc() {
  if (!Init()) return 1;
  Dptr1 p = 0x12345678;
  CUresult r = R(fn::MemAlloc(&p, 1 << 20));
  Say("v1 cuMemAlloc: ptr is 0 = %s, unchanged (0x12345678) = %s", YesNo(p == 0),
      YesNo(p == 0x12345678));
  if (r == CUDA_SUCCESS && p != 0) {
    CUdeviceptr base = 0;
    size_t sz = 0;
    Say("cuMemGetAddressRange_v2(zero-extended v1 ptr) = %s, size 1 MiB = %s",
        Name(cuMemGetAddressRange(&base, &sz, p)), YesNo(sz == (1u << 20)));
    uint32_t v = 0xa5a5a5a5, back = 0;
    Say("v1 HtoD = %s", Name(fn::MemcpyHtoD(p, &v, 4)));
    Say("v1 DtoH = %s, value back = %s", Name(fn::MemcpyDtoH(&back, p, 4)),
        YesNo(back == v));
    Say("v1 cuMemFree = %s", Name(fn::MemFree(p)));
    Say("v1 cuMemFree again = %s", Name(fn::MemFree(p)));
  }
  p = 0x12345678;
  R(fn::MemAlloc(&p, 0));
  Say("size 0: ptr is 0 = %s, unchanged = %s", YesNo(p == 0), YesNo(p == 0x12345678));
  R(fn::MemAlloc(nullptr, 64));
  p = 0x12345678;
  R(fn::MemAlloc(&p, 0xffffffffu));
  Say("4 GiB - 1: ptr is 0 = %s, unchanged = %s", YesNo(p == 0), YesNo(p == 0x12345678));
  // v2 allocations: do they fit 32 bits?
  CUdeviceptr d2 = 0;
  cuMemAlloc(&d2, 1 << 20);
  Say("v2 allocation fits in 32 bits = %s", YesNo(Fits32(d2)));
  int ok = 0, fits = 0;
  Dptr1 many[8] = {};
  for (Dptr1& m : many) {
    if (fn::MemAlloc(&m, 1 << 20) == CUDA_SUCCESS) {
      ++ok;
      if (m != 0) ++fits;
    }
  }
  Say("8 v1 allocations of 1 MiB: %d succeeded, %d non-zero", ok, fits);
  for (Dptr1 m : many)
    if (m != 0) fn::MemFree(m);
  R(fn::MemFree(0));
  R(fn::MemFree(Lo(d2)));
  Say("after v1 cuMemFree(truncated v2): v2 still valid (GetAddressRange) = %s",
      Name(cuMemGetAddressRange(nullptr, nullptr, d2)));
  R(fn::MemFree(0x5a5a0000u));
  cuMemFree(d2);
  return 0;
}

int CaseMemTruncated() {
  if (!Init()) return 1;
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 1 << 20);
  cuMemsetD32(d, 0x11111111u, (1 << 20) / 4);
  Dptr1 t = Lo(d);
  Say("v2 allocation fits in 32 bits = %s, truncated is 0 = %s", YesNo(Fits32(d)),
      YesNo(t == 0));
  uint32_t v = 0xa5a5a5a5, back = 0;
  R(fn::MemcpyHtoD(t, &v, 4));
  Say("v2 read of word 0 after v1 HtoD: is a5a5a5a5 = %s, is 11111111 = %s",
      YesNo(Read32(d) == v), YesNo(Read32(d) == 0x11111111u));
  back = 0;
  R(fn::MemcpyDtoH(&back, t, 4));
  Say("v1 DtoH value: is v2 word 0 = %s", YesNo(back == Read32(d)));
  R(fn::MemcpyDtoD(t + 16, t, 4));
  R(fn::MemsetD8(t, 0x22, 4));
  R(fn::MemsetD16(t, 0x3333, 2));
  R(fn::MemsetD32(t, 0x44444444u, 1));
  R(fn::MemsetD2D8(t, 64, 0x55, 4, 2));
  R(fn::MemsetD2D16(t, 64, 0x6666, 2, 2));
  R(fn::MemsetD2D32(t, 64, 0x77777777u, 1, 2));
  Say("v2 read of word 0 after the v1 memsets: 11111111 = %s, 77777777 = %s",
      YesNo(Read32(d) == 0x11111111u), YesNo(Read32(d) == 0x77777777u));
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  R(fn::MemcpyHtoDAsync(t, &v, 4, s));
  R(fn::MemcpyDtoHAsync(&back, t, 4, s));
  R(fn::MemcpyDtoDAsync(t + 32, t, 4, s));
  R(fn::MemcpyHtoDAsync(t, &v, 4, nullptr));
  R(fn::MemcpyHtoDAsync(t, &v, 4, Garbage<CUstream>()));
  R(cuStreamSynchronize(s));
  Dptr1 base = 0x12345678;
  unsigned int sz = 0x12345678;
  R(fn::MemGetAddressRange(&base, &sz, t));
  Say("v1 GetAddressRange: base is 0 = %s, base == truncated = %s, size 1 MiB = %s, size 0 = %s",
      YesNo(base == 0), YesNo(base == t), YesNo(sz == (1u << 20)), YesNo(sz == 0));
  R(fn::MemGetAddressRange(nullptr, nullptr, t));
  R(fn::MemGetAddressRange(&base, &sz, 0));
  R(fn::MemGetAddressRange(&base, &sz, 0x5a5a0000u));
  // Null and zero-size forms.
  R(fn::MemcpyHtoD(0, &v, 4));
  R(fn::MemcpyHtoD(t, nullptr, 4));
  R(fn::MemcpyHtoD(t, &v, 0));
  R(fn::MemcpyDtoH(nullptr, t, 4));
  R(fn::MemcpyDtoH(&back, 0, 4));
  R(fn::MemcpyDtoD(0, t, 4));
  R(fn::MemcpyDtoD(t, t, 0));
  R(fn::MemsetD8(0, 0, 4));
  R(fn::MemsetD8(t, 0, 0));
  R(fn::MemsetD32(t + 1, 0, 1));
  R(fn::MemsetD16(t + 1, 0, 1));
  R(fn::MemsetD2D8(t, 2, 0, 4, 2));
  R(fn::MemsetD2D32(t, 64, 0, 0, 2));
  R(fn::MemcpyHtoD(0x5a5a0000u, &v, 4));
  cuStreamDestroy(s);
  cuMemFree(d);
  return 0;
}

int CaseMemInfo() {
  if (!Init()) return 1;
  size_t f2 = 0, t2 = 0;
  cuMemGetInfo(&f2, &t2);
  unsigned int f1 = 0x12345678, t1 = 0x12345678;
  R(fn::MemGetInfo(&f1, &t1));
  Say("v2 total > 4 GiB = %s", YesNo(t2 > 0xffffffffull));
  Say("v1 total: unchanged = %s, 0 = %s, UINT_MAX = %s, low 32 bits of v2 = %s",
      YesNo(t1 == 0x12345678), YesNo(t1 == 0), YesNo(t1 == 0xffffffffu),
      YesNo(t1 == static_cast<unsigned int>(t2)));
  Say("v1 free: unchanged = %s, 0 = %s, UINT_MAX = %s, <= total = %s", YesNo(f1 == 0x12345678),
      YesNo(f1 == 0), YesNo(f1 == 0xffffffffu), YesNo(f1 <= t1));
  R(fn::MemGetInfo(nullptr, &t1));
  R(fn::MemGetInfo(&f1, nullptr));
  R(fn::MemGetInfo(nullptr, nullptr));
  size_t tm2 = 0;
  cuDeviceTotalMem(&tm2, g_dev);
  unsigned int tm1 = 0x12345678;
  R(fn::DeviceTotalMem(&tm1, g_dev));
  Say("v1 cuDeviceTotalMem: unchanged = %s, 0 = %s, UINT_MAX = %s, low 32 bits of v2 = %s",
      YesNo(tm1 == 0x12345678), YesNo(tm1 == 0), YesNo(tm1 == 0xffffffffu),
      YesNo(tm1 == static_cast<unsigned int>(tm2)));
  R(fn::DeviceTotalMem(nullptr, g_dev));
  R(fn::DeviceTotalMem(&tm1, -1));
  R(fn::DeviceTotalMem(&tm1, 99));
  return 0;
}

int CaseMemPitchHost() {
  if (!Init()) return 1;
  Dptr1 p = 0x12345678;
  unsigned int pitch = 0x12345678;
  R(fn::MemAllocPitch(&p, &pitch, 100, 4, 4));
  Say("v1 cuMemAllocPitch: ptr is 0 = %s, unchanged = %s, pitch unchanged = %s, pitch >= 100 = %s",
      YesNo(p == 0), YesNo(p == 0x12345678), YesNo(pitch == 0x12345678),
      YesNo(pitch >= 100 && pitch != 0x12345678));
  R(fn::MemAllocPitch(nullptr, &pitch, 100, 4, 4));
  R(fn::MemAllocPitch(&p, nullptr, 100, 4, 4));
  R(fn::MemAllocPitch(&p, &pitch, 100, 4, 3));
  R(fn::MemAllocPitch(&p, &pitch, 0, 4, 4));
  void* h = reinterpret_cast<void*>(1);
  CUresult r = R(fn::MemAllocHost(&h, 4096));
  Say("v1 cuMemAllocHost: ptr null = %s, unchanged = %s", YesNo(h == nullptr),
      YesNo(h == reinterpret_cast<void*>(1)));
  if (r == CUDA_SUCCESS && h != nullptr && h != reinterpret_cast<void*>(1)) {
    memset(h, 0, 4096);
    Dptr1 dp = 0x12345678;
    R(fn::MemHostGetDevicePointer(&dp, h, 0));
    CUdeviceptr dp2 = 0;
    cuMemHostGetDevicePointer(&dp2, h, 0);
    Say("v1 HostGetDevicePointer: unchanged = %s, 0 = %s, == low 32 of v2 = %s, v2 fits = %s",
        YesNo(dp == 0x12345678), YesNo(dp == 0), YesNo(dp == Lo(dp2)), YesNo(Fits32(dp2)));
    R(fn::MemHostGetDevicePointer(&dp, h, 1));
    R(fn::MemHostGetDevicePointer(nullptr, h, 0));
    R(cuMemFreeHost(h));
  }
  h = reinterpret_cast<void*>(1);
  R(fn::MemAllocHost(&h, 0));
  Say("size 0: null = %s, unchanged = %s", YesNo(h == nullptr),
      YesNo(h == reinterpret_cast<void*>(1)));
  R(fn::MemAllocHost(nullptr, 64));
  Dptr1 dp = 0x12345678;
  int local = 0;
  R(fn::MemHostGetDevicePointer(&dp, &local, 0));
  // cuMemHostRegister v1 (same signature as _v2).
  void* buf = aligned_alloc(4096, 1 << 16);
  R(fn::MemHostRegister(buf, 1 << 16, 0));
  R(fn::MemHostRegister(buf, 1 << 16, 0));
  R(cuMemHostUnregister(buf));
  R(fn::MemHostRegister(buf, 1 << 16, CU_MEMHOSTREGISTER_DEVICEMAP));
  CUdeviceptr dd = 0;
  Say("after v1 register DEVICEMAP: v2 HostGetDevicePointer = %s",
      Name(cuMemHostGetDevicePointer(&dd, buf, 0)));
  R(cuMemHostUnregister(buf));
  R(fn::MemHostRegister(buf, 1 << 16, 0x80));
  R(fn::MemHostRegister(nullptr, 1 << 16, 0));
  R(fn::MemHostRegister(buf, 0, 0));
  R(fn::MemHostRegister(buf, 1 << 16, CU_MEMHOSTREGISTER_READ_ONLY));
  cuMemHostUnregister(buf);
  free(buf);
  return 0;
}

int CaseMemNoCtx() {
  cuInit(0);
  cuDeviceGet(&g_dev, 0);
  Dptr1 p = 0x12345678;
  unsigned int u = 0, u2 = 0;
  uint32_t v = 0;
  void* h = nullptr;
  R(fn::MemAlloc(&p, 64));
  R(fn::MemFree(0x1000u));
  R(fn::MemGetInfo(&u, &u2));
  R(fn::DeviceTotalMem(&u, g_dev));
  R(fn::MemAllocPitch(&p, &u, 64, 4, 4));
  R(fn::MemAllocHost(&h, 64));
  R(fn::MemGetAddressRange(&p, &u, 0x1000u));
  R(fn::MemHostGetDevicePointer(&p, &v, 0));
  R(fn::MemcpyHtoD(0x1000u, &v, 4));
  R(fn::MemcpyDtoH(&v, 0x1000u, 4));
  R(fn::MemcpyDtoD(0x1000u, 0x2000u, 4));
  R(fn::MemcpyHtoDAsync(0x1000u, &v, 4, nullptr));
  R(fn::MemcpyDtoHAsync(&v, 0x1000u, 4, nullptr));
  R(fn::MemcpyDtoDAsync(0x1000u, 0x2000u, 4, nullptr));
  R(fn::MemsetD8(0x1000u, 0, 4));
  R(fn::MemsetD16(0x1000u, 0, 2));
  R(fn::MemsetD32(0x1000u, 0, 1));
  R(fn::MemsetD2D8(0x1000u, 64, 0, 4, 2));
  R(fn::MemsetD2D16(0x1000u, 64, 0, 2, 2));
  R(fn::MemsetD2D32(0x1000u, 64, 0, 1, 2));
  R(fn::CtxPopCurrent(nullptr));
  CUcontext c = Garbage<CUcontext>();
  R(fn::CtxPopCurrent(&c));
  Say("popped: null = %s", YesNo(c == nullptr));
  R(fn::StreamDestroy(nullptr));
  R(fn::EventDestroy(nullptr));
  return 0;
}

int CaseNoInit() {
  Dptr1 p = 0;
  unsigned int u = 0, u2 = 0;
  uint32_t v = 0;
  CUcontext c = nullptr;
  R(fn::MemAlloc(&p, 64));
  R(fn::MemFree(0x1000u));
  R(fn::MemGetInfo(&u, &u2));
  R(fn::DeviceTotalMem(&u, 0));
  R(fn::MemcpyHtoD(0x1000u, &v, 4));
  R(fn::MemsetD8(0x1000u, 0, 4));
  R(fn::CtxDestroy(nullptr));
  R(fn::CtxPopCurrent(&c));
  R(fn::CtxPushCurrent(nullptr));
  R(fn::StreamDestroy(nullptr));
  R(fn::EventDestroy(nullptr));
  R(fn::GraphInstantiate(nullptr, nullptr, nullptr, nullptr, 0));
  R(fn::LinkCreate(0, nullptr, nullptr, nullptr));
  CUipcMemHandle ih;
  memset(&ih, 0, sizeof ih);
  CUdeviceptr d = 0;
  R(fn::IpcOpenMemHandle(&d, ih, 1));
  return 0;
}

// ---- context / stream / event ----

int CaseCtx() {
  if (!Init()) return 1;
  CUcontext a = NewCtx();
  CUcontext cur = nullptr;
  cuCtxGetCurrent(&cur);
  Say("after cuCtxCreate: current is the new one = %s", YesNo(cur == a));
  CUcontext popped = nullptr;
  R(fn::CtxPopCurrent(&popped));
  Say("v1 pop gave the new one = %s", YesNo(popped == a));
  cuCtxGetCurrent(&cur);
  Say("after v1 pop: current is primary = %s, null = %s", YesNo(cur == g_ctx),
      YesNo(cur == nullptr));
  R(fn::CtxPushCurrent(a));
  cuCtxGetCurrent(&cur);
  Say("after v1 push: current is the new one = %s", YesNo(cur == a));
  R(fn::CtxPopCurrent(nullptr));
  cuCtxGetCurrent(&cur);
  Say("after v1 pop(nullptr): current is primary = %s", YesNo(cur == g_ctx));
  R(fn::CtxPushCurrent(nullptr));
  R(fn::CtxPushCurrent(Garbage<CUcontext>()));
  R(fn::CtxPushCurrent(a));
  R(fn::CtxDestroy(a));
  cuCtxGetCurrent(&cur);
  Say("after v1 destroy of the current: current is null = %s, is primary = %s",
      YesNo(cur == nullptr), YesNo(cur == g_ctx));
  R(fn::CtxDestroy(a));
  R(fn::CtxPushCurrent(a));
  R(fn::CtxDestroy(nullptr));
  R(fn::CtxDestroy(Garbage<CUcontext>()));
  CUcontext b = NewCtx();
  cuCtxPopCurrent(nullptr);
  R(fn::CtxDestroy(b));
  R(cuCtxPushCurrent(b));
  // Primary context through v1 destroy.
  R(fn::CtxDestroy(g_ctx));
  // Pop until empty.
  cuCtxSetCurrent(g_ctx);
  int n = 0;
  CUresult r;
  while ((r = fn::CtxPopCurrent(&popped)) == CUDA_SUCCESS && n < 10) ++n;
  Say("v1 pops until failure: %d then %s, out is null = %s", n, Name(r),
      YesNo(popped == nullptr));
  return 0;
}

int CaseStreamEvent() {
  if (!Init()) return 1;
  CUstream s = nullptr;
  cuStreamCreate(&s, 0);
  R(fn::StreamDestroy(s));
  R(fn::StreamDestroy(s));
  R(fn::StreamDestroy(nullptr));
  R(fn::StreamDestroy(CU_STREAM_LEGACY));
  R(fn::StreamDestroy(CU_STREAM_PER_THREAD));
  R(fn::StreamDestroy(Garbage<CUstream>()));
  // Destroy with work pending.
  CUstream s2 = nullptr;
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4 << 20);
  cuMemsetD8Async(d, 1, 4 << 20, s2);
  R(fn::StreamDestroy(s2));
  R(cuCtxSynchronize());
  CUevent e = nullptr;
  cuEventCreate(&e, 0);
  R(fn::EventDestroy(e));
  R(fn::EventDestroy(e));
  R(fn::EventDestroy(nullptr));
  R(fn::EventDestroy(Garbage<CUevent>()));
  cuEventCreate(&e, 0);
  cuEventRecord(e, nullptr);
  R(fn::EventDestroy(e));
  // Destroyed from another context.
  CUstream s3 = nullptr;
  cuStreamCreate(&s3, 0);
  CUevent e3 = nullptr;
  cuEventCreate(&e3, 0);
  CUcontext o = NewCtx();
  R(fn::StreamDestroy(s3));
  R(fn::EventDestroy(e3));
  cuCtxPopCurrent(nullptr);
  cuCtxDestroy(o);
  cuMemFree(d);
  return 0;
}

// ---- graph ----

struct Kernel {
  CUmodule mod = nullptr;
  CUfunction f = nullptr;
  bool Load() {
    CUresult r = cuModuleLoadData(&mod, kPtx);
    if (r != CUDA_SUCCESS) {
      Say("cuModuleLoadData = %s", Name(r));
      return false;
    }
    return cuModuleGetFunction(&f, mod, "add_u32") == CUDA_SUCCESS;
  }
};

int CaseGraphInstantiate() {
  if (!Init()) return 1;
  CUgraph g = nullptr;
  cuGraphCreate(&g, 0);
  CUgraphNode n = nullptr;
  cuGraphAddEmptyNode(&n, g, nullptr, 0);
  CUgraphExec x = nullptr;
  CUgraphNode err = Garbage<CUgraphNode>();
  char log[64];
  memset(log, 'x', sizeof log);
  R(fn::GraphInstantiate(&x, g, &err, log, sizeof log));
  Say("error node null = %s, unchanged = %s, log[0] is NUL = %s, log untouched = %s",
      YesNo(err == nullptr), YesNo(err == Garbage<CUgraphNode>()), YesNo(log[0] == 0),
      YesNo(log[0] == 'x'));
  R(cuGraphLaunch(x, nullptr));
  R(cuCtxSynchronize());
  CUgraphExec x2 = nullptr;
  R(fn::GraphInstantiate(&x2, g, nullptr, nullptr, 0));
  R(fn::GraphInstantiate(nullptr, g, nullptr, nullptr, 0));
  R(fn::GraphInstantiate(&x2, nullptr, nullptr, nullptr, 0));
  R(fn::GraphInstantiate(&x2, Garbage<CUgraph>(), nullptr, nullptr, 0));
  R(fn::GraphInstantiate(&x2, g, nullptr, log, 0));
  // ExecUpdate v1.
  CUgraphNode en = Garbage<CUgraphNode>();
  CUgraphExecUpdateResult ur = static_cast<CUgraphExecUpdateResult>(77);
  R(fn::GraphExecUpdate(x, g, &en, &ur));
  Say("update result = %d, error node null = %s", static_cast<int>(ur), YesNo(en == nullptr));
  CUgraph g2 = nullptr;
  cuGraphCreate(&g2, 0);
  CUgraphNode a = nullptr, b = nullptr;
  cuGraphAddEmptyNode(&a, g2, nullptr, 0);
  cuGraphAddEmptyNode(&b, g2, nullptr, 0);
  en = Garbage<CUgraphNode>();
  ur = static_cast<CUgraphExecUpdateResult>(77);
  R(fn::GraphExecUpdate(x, g2, &en, &ur));
  Say("topology change: update result = %d, error node null = %s, unchanged = %s",
      static_cast<int>(ur), YesNo(en == nullptr), YesNo(en == Garbage<CUgraphNode>()));
  R(fn::GraphExecUpdate(x, g, nullptr, &ur));
  R(fn::GraphExecUpdate(x, g, &en, nullptr));
  R(fn::GraphExecUpdate(nullptr, g, &en, &ur));
  R(fn::GraphExecUpdate(x, nullptr, &en, &ur));
  R(fn::GraphExecUpdate(Garbage<CUgraphExec>(), g, &en, &ur));
  // RemoveDependencies v1.
  cuGraphAddDependencies(g2, &a, &b, nullptr, 1);
  size_t ne = 0;
  cuGraphGetEdges(g2, nullptr, nullptr, nullptr, &ne);
  Say("edges before = %zu", ne);
  R(fn::GraphRemoveDependencies(g2, &a, &b, 1));
  cuGraphGetEdges(g2, nullptr, nullptr, nullptr, &ne);
  Say("edges after = %zu", ne);
  R(fn::GraphRemoveDependencies(g2, &a, &b, 1));
  R(fn::GraphRemoveDependencies(g2, nullptr, nullptr, 0));
  R(fn::GraphRemoveDependencies(g2, nullptr, &b, 1));
  R(fn::GraphRemoveDependencies(nullptr, &a, &b, 1));
  R(fn::GraphRemoveDependencies(Garbage<CUgraph>(), &a, &b, 1));
  cuGraphExecDestroy(x);
  if (x2 != nullptr) cuGraphExecDestroy(x2);
  cuGraphDestroy(g);
  cuGraphDestroy(g2);
  return 0;
}

int CaseGraphKernel() {
  if (!Init()) return 1;
  Kernel k;
  if (!k.Load()) return 1;
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 64);
  cuMemsetD32(d, 0, 16);
  unsigned int inc = 5;
  void* args[] = {&d, &inc};
  CUDA_KERNEL_NODE_PARAMS_v1 p;
  memset(&p, 0, sizeof p);
  p.func = k.f;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  CUgraph g = nullptr;
  cuGraphCreate(&g, 0);
  CUgraphNode n = nullptr;
  R(fn::GraphAddKernelNode(&n, g, nullptr, 0, &p));
  CUgraphNodeType t = static_cast<CUgraphNodeType>(99);
  cuGraphNodeGetType(n, &t);
  Say("node type = %d", static_cast<int>(t));
  CUDA_KERNEL_NODE_PARAMS_v1 q;
  memset(&q, 0x5a, sizeof q);
  R(fn::GraphKernelNodeGetParams(n, &q));
  Say("v1 get: func same = %s, grid %u %u %u, block %u %u %u, smem %u, params same = %s, "
      "extra null = %s",
      YesNo(q.func == k.f), q.gridDimX, q.gridDimY, q.gridDimZ, q.blockDimX, q.blockDimY,
      q.blockDimZ, q.sharedMemBytes, YesNo(q.kernelParams == args), YesNo(q.extra == nullptr));
  CUDA_KERNEL_NODE_PARAMS q2;
  memset(&q2, 0, sizeof q2);
  R(cuGraphKernelNodeGetParams(n, &q2));
  Say("v2 get: func same = %s, kern null = %s, ctx null = %s, ctx current = %s",
      YesNo(q2.func == k.f), YesNo(q2.kern == nullptr), YesNo(q2.ctx == nullptr),
      YesNo(q2.ctx == g_ctx));
  CUgraphExec x = nullptr;
  R(cuGraphInstantiate(&x, g, 0));
  R(cuGraphLaunch(x, nullptr));
  R(cuCtxSynchronize());
  Say("value after launch = %u", Read32(d));
  p.gridDimX = 2;
  inc = 7;
  R(fn::GraphKernelNodeSetParams(n, &p));
  memset(&q, 0, sizeof q);
  fn::GraphKernelNodeGetParams(n, &q);
  Say("after v1 set: gridDimX = %u", q.gridDimX);
  p.gridDimX = 3;
  R(fn::GraphExecKernelNodeSetParams(x, n, &p));
  R(cuGraphLaunch(x, nullptr));
  R(cuCtxSynchronize());
  Say("value after exec-set launch (3 blocks x 7) = %u", Read32(d));
  // Invalid.
  R(fn::GraphAddKernelNode(&n, g, nullptr, 0, nullptr));
  R(fn::GraphAddKernelNode(nullptr, g, nullptr, 0, &p));
  R(fn::GraphAddKernelNode(&n, nullptr, nullptr, 0, &p));
  CUDA_KERNEL_NODE_PARAMS_v1 bad = p;
  bad.func = nullptr;
  CUgraphNode m = nullptr;
  R(fn::GraphAddKernelNode(&m, g, nullptr, 0, &bad));
  bad = p;
  bad.blockDimX = 4096;
  R(fn::GraphAddKernelNode(&m, g, nullptr, 0, &bad));
  bad = p;
  bad.func = Garbage<CUfunction>();
  R(fn::GraphAddKernelNode(&m, g, nullptr, 0, &bad));
  R(fn::GraphKernelNodeGetParams(n, nullptr));
  R(fn::GraphKernelNodeGetParams(nullptr, &q));
  R(fn::GraphKernelNodeGetParams(Garbage<CUgraphNode>(), &q));
  R(fn::GraphKernelNodeSetParams(n, nullptr));
  R(fn::GraphKernelNodeSetParams(nullptr, &p));
  R(fn::GraphExecKernelNodeSetParams(x, n, nullptr));
  R(fn::GraphExecKernelNodeSetParams(nullptr, n, &p));
  R(fn::GraphExecKernelNodeSetParams(x, nullptr, &p));
  CUgraphNode e = nullptr;
  cuGraphAddEmptyNode(&e, g, nullptr, 0);
  R(fn::GraphKernelNodeGetParams(e, &q));
  R(fn::GraphKernelNodeSetParams(e, &p));
  R(fn::GraphExecKernelNodeSetParams(x, e, &p));
  // A v2 kernel node (with a CUkernel) read back through v1.
  CUlibrary lib = nullptr;
  CUkernel kern = nullptr;
  if (cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS &&
      cuLibraryGetKernel(&kern, lib, "add_u32") == CUDA_SUCCESS) {
    CUDA_KERNEL_NODE_PARAMS p2;
    memset(&p2, 0, sizeof p2);
    p2.kern = kern;
    p2.gridDimX = p2.gridDimY = p2.gridDimZ = 1;
    p2.blockDimX = p2.blockDimY = p2.blockDimZ = 1;
    p2.kernelParams = args;
    CUgraphNode kn = nullptr;
    R(cuGraphAddKernelNode(&kn, g, nullptr, 0, &p2));
    memset(&q, 0x5a, sizeof q);
    R(fn::GraphKernelNodeGetParams(kn, &q));
    Say("v1 get of a CUkernel node: func null = %s, func is 5a-garbage = %s, grid %u",
        YesNo(q.func == nullptr), YesNo(q.func == reinterpret_cast<CUfunction>(
                                            0x5a5a5a5a5a5a5a5aull)), q.gridDimX);
  }
  // Stale node after graph destroy.
  cuGraphExecDestroy(x);
  cuGraphDestroy(g);
  if (lib) cuLibraryUnload(lib);
  cuMemFree(d);
  cuModuleUnload(k.mod);
  return 0;
}

int CaseCaptureDeps() {
  if (!Init()) return 1;
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUgraph g = nullptr;
  cuGraphCreate(&g, 0);
  CUgraphNode n = nullptr;
  cuGraphAddEmptyNode(&n, g, nullptr, 0);
  R(fn::StreamUpdateCaptureDependencies(s, &n, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  R(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 64);
  cuMemsetD8Async(d, 1, 64, s);
  CUstreamCaptureStatus st;
  CUgraph cg = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t nd = 0;
  cuStreamGetCaptureInfo(s, &st, nullptr, &cg, &deps, nullptr, &nd);
  Say("deps before = %zu", nd);
  CUgraphNode added = nullptr;
  cuGraphAddEmptyNode(&added, cg, nullptr, 0);
  R(fn::StreamUpdateCaptureDependencies(s, &added, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  cuStreamGetCaptureInfo(s, &st, nullptr, &cg, &deps, nullptr, &nd);
  Say("deps after add = %zu", nd);
  R(fn::StreamUpdateCaptureDependencies(s, &added, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  cuStreamGetCaptureInfo(s, &st, nullptr, &cg, &deps, nullptr, &nd);
  Say("deps after set = %zu, is the added one = %s", nd, YesNo(nd == 1 && deps[0] == added));
  R(fn::StreamUpdateCaptureDependencies(s, &added, 1, 7));
  R(fn::StreamUpdateCaptureDependencies(s, nullptr, 1, 0));
  R(fn::StreamUpdateCaptureDependencies(s, nullptr, 0, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  cuStreamGetCaptureInfo(s, &st, nullptr, &cg, &deps, nullptr, &nd);
  Say("deps after set to none = %zu", nd);
  R(fn::StreamUpdateCaptureDependencies(s, &n, 1, 0));
  R(fn::StreamUpdateCaptureDependencies(nullptr, &added, 1, 0));
  R(fn::StreamUpdateCaptureDependencies(Garbage<CUstream>(), &added, 1, 0));
  CUgraph out = nullptr;
  R(cuStreamEndCapture(s, &out));
  if (out) cuGraphDestroy(out);
  cuGraphDestroy(g);
  cuStreamDestroy(s);
  cuMemFree(d);
  return 0;
}

// ---- stream memory operations ----

int CaseStreamMemOps() {
  if (!Init()) return 1;
  int a1 = -1, a2 = -1;
  cuDeviceGetAttribute(&a1, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, g_dev);
  cuDeviceGetAttribute(&a2, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, g_dev);
  Say("attrs: wait NOR = %d, 64-bit mem ops = %d", a1, a2);
  for (int attr : {92, 93, 94}) {  // CU_DEVICE_ATTRIBUTE_CAN_USE_*_V1 (deprecated)
    int v = -1;
    CUresult r = cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(attr), g_dev);
    Say("attr %d (v1 mem ops) = %s, value %d", attr, Name(r), v);
  }
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 64);
  cuMemsetD32(d, 0, 16);
  R(fn::StreamWriteValue32(s, d, 42, 0));
  R(fn::StreamWriteValue64(s, d + 8, 0x100000002ull, 0));
  R(fn::StreamWaitValue32(s, d, 42, CU_STREAM_WAIT_VALUE_EQ));
  R(fn::StreamWaitValue64(s, d + 8, 0x100000002ull, CU_STREAM_WAIT_VALUE_GEQ));
  R(cuStreamSynchronize(s));
  uint64_t v64 = 0;
  cuMemcpyDtoH(&v64, d + 8, 8);
  Say("values: u32 = %u, u64 is 0x100000002 = %s", Read32(d), YesNo(v64 == 0x100000002ull));
  R(fn::StreamWriteValue32(s, d, 1, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
  R(fn::StreamWaitValue32(s, d, 1, CU_STREAM_WAIT_VALUE_FLUSH));
  R(fn::StreamWaitValue32(s, d, 1, CU_STREAM_WAIT_VALUE_NOR));
  R(fn::StreamWaitValue32(s, d, 1, 0x10));
  R(fn::StreamWriteValue32(s, d, 1, 0x10));
  R(fn::StreamWriteValue32(s, d + 1, 1, 0));
  R(fn::StreamWriteValue64(s, d + 4, 1, 0));
  R(fn::StreamWaitValue64(s, d + 4, 1, 0));
  R(fn::StreamWriteValue32(s, 0, 1, 0));
  R(fn::StreamWriteValue32(Garbage<CUstream>(), d, 1, 0));
  R(fn::StreamWriteValue32(nullptr, d, 3, 0));
  R(cuCtxSynchronize());
  CUstreamBatchMemOpParams ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = d + 16;
  ops[0].writeValue.value = 9;
  ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[1].waitValue.address = d + 16;
  ops[1].waitValue.value = 9;
  ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  R(fn::StreamBatchMemOp(s, 2, ops, 0));
  R(cuStreamSynchronize(s));
  Say("batch wrote 9 = %s", YesNo(Read32(d + 16) == 9));
  R(fn::StreamBatchMemOp(s, 0, ops, 0));
  R(fn::StreamBatchMemOp(s, 2, nullptr, 0));
  R(fn::StreamBatchMemOp(s, 2, ops, 1));
  ops[0].operation = static_cast<CUstreamBatchMemOpType>(99);
  R(fn::StreamBatchMemOp(s, 1, ops, 0));
  ops[0].flushRemoteWrites.operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
  R(fn::StreamBatchMemOp(s, 1, ops, 0));
  ops[0].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
  ops[0].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_SYS;
  R(fn::StreamBatchMemOp(s, 1, ops, 0));
  R(cuStreamSynchronize(s));
  cuStreamDestroy(s);
  cuMemFree(d);
  return 0;
}

// ---- managed: advise / prefetch v1 ----

int CaseManaged() {
  if (!Init()) return 1;
  CUdeviceptr m = 0;
  R(cuMemAllocManaged(&m, 1 << 20, CU_MEM_ATTACH_GLOBAL));
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  R(fn::MemAdvise(m, 1 << 20, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, g_dev));
  int loc = -7;
  cuMemRangeGetAttribute(&loc, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 1 << 20);
  Say("preferred location after v1 advise = %s", loc == g_dev ? "device 0" :
      loc == CU_DEVICE_CPU ? "cpu" : loc == CU_DEVICE_INVALID ? "invalid" : "other");
  R(fn::MemAdvise(m, 1 << 20, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU));
  cuMemRangeGetAttribute(&loc, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 1 << 20);
  Say("preferred location after v1 advise CPU = %s", loc == g_dev ? "device 0" :
      loc == CU_DEVICE_CPU ? "cpu" : loc == CU_DEVICE_INVALID ? "invalid" : "other");
  R(fn::MemAdvise(m, 1 << 20, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, g_dev));
  R(fn::MemAdvise(m, 1 << 20, CU_MEM_ADVISE_SET_READ_MOSTLY, g_dev));
  int rm = -1;
  cuMemRangeGetAttribute(&rm, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 1 << 20);
  Say("read mostly = %d", rm);
  R(fn::MemAdvise(m, 1 << 20, CU_MEM_ADVISE_SET_ACCESSED_BY, g_dev));
  R(fn::MemAdvise(m, 1 << 20, CU_MEM_ADVISE_SET_ACCESSED_BY, CU_DEVICE_CPU));
  R(fn::MemAdvise(m, 1 << 20, static_cast<CUmem_advise>(99), g_dev));
  R(fn::MemAdvise(m, 1 << 20, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 99));
  R(fn::MemAdvise(m, 1 << 20, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_INVALID));
  R(fn::MemAdvise(m, 0, CU_MEM_ADVISE_SET_READ_MOSTLY, g_dev));
  R(fn::MemAdvise(0, 1 << 20, CU_MEM_ADVISE_SET_READ_MOSTLY, g_dev));
  R(fn::MemAdvise(m + 1, 16, CU_MEM_ADVISE_SET_READ_MOSTLY, g_dev));
  R(fn::MemAdvise(m, 2 << 20, CU_MEM_ADVISE_SET_READ_MOSTLY, g_dev));
  R(fn::MemPrefetchAsync(m, 1 << 20, g_dev, s));
  R(cuStreamSynchronize(s));
  int last = -7;
  cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, 1 << 20);
  Say("last prefetch location = %s", last == g_dev ? "device 0" :
      last == CU_DEVICE_CPU ? "cpu" : last == CU_DEVICE_INVALID ? "invalid" : "other");
  R(fn::MemPrefetchAsync(m, 1 << 20, CU_DEVICE_CPU, s));
  R(cuStreamSynchronize(s));
  cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, 1 << 20);
  Say("last prefetch location = %s", last == g_dev ? "device 0" :
      last == CU_DEVICE_CPU ? "cpu" : last == CU_DEVICE_INVALID ? "invalid" : "other");
  R(fn::MemPrefetchAsync(m, 1 << 20, 99, s));
  R(fn::MemPrefetchAsync(m, 1 << 20, CU_DEVICE_INVALID, s));
  R(fn::MemPrefetchAsync(m, 0, g_dev, s));
  R(fn::MemPrefetchAsync(0, 1 << 20, g_dev, s));
  R(fn::MemPrefetchAsync(m, 2 << 20, g_dev, s));
  R(fn::MemPrefetchAsync(m, 1 << 20, g_dev, nullptr));
  R(fn::MemPrefetchAsync(m, 1 << 20, g_dev, Garbage<CUstream>()));
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 1 << 20);
  R(fn::MemPrefetchAsync(d, 1 << 20, g_dev, s));
  R(fn::MemAdvise(d, 1 << 20, CU_MEM_ADVISE_SET_READ_MOSTLY, g_dev));
  R(cuStreamSynchronize(s));
  cuStreamDestroy(s);
  cuMemFree(d);
  cuMemFree(m);
  return 0;
}

// ---- batch copies v1 (with failIdx) ----

int CaseBatch() {
  if (!Init()) return 1;
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUdeviceptr a = 0, b = 0;
  cuMemAlloc(&a, 4096);
  cuMemAlloc(&b, 4096);
  cuMemsetD32(a, 0x01020304u, 1024);
  cuMemsetD32(b, 0, 1024);
  CUdeviceptr dsts[1] = {b}, srcs[1] = {a};
  size_t sizes[1] = {4096};
  CUmemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attr.srcLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
  attr.dstLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
  size_t idx = 0;
  size_t fail = 12345;
  R(fn::MemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, &fail, s));
  R(cuStreamSynchronize(s));
  Say("failIdx = %s, copied = %s",
      fail == 12345 ? "unchanged" : fail == SIZE_MAX ? "SIZE_MAX" : std::to_string(fail).c_str(),
      YesNo(Read32(b) == 0x01020304u));
  fail = 12345;
  R(fn::MemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, nullptr, s));
  R(fn::MemcpyBatchAsync(dsts, srcs, sizes, 0, &attr, &idx, 1, &fail, s));
  Say("count 0: failIdx = %s",
      fail == 12345 ? "unchanged" : fail == SIZE_MAX ? "SIZE_MAX" : std::to_string(fail).c_str());
  CUmemcpyAttributes bad = attr;
  bad.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  fail = 12345;
  R(fn::MemcpyBatchAsync(dsts, srcs, sizes, 1, &bad, &idx, 1, &fail, s));
  Say("invalid attr: failIdx = %s",
      fail == 12345 ? "unchanged" : fail == SIZE_MAX ? "SIZE_MAX" : std::to_string(fail).c_str());
  R(fn::MemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, &fail, nullptr));
  R(fn::MemcpyBatchAsync(nullptr, srcs, sizes, 1, &attr, &idx, 1, &fail, s));
  // 3D batch v1.
  CUDA_MEMCPY3D_BATCH_OP op;
  memset(&op, 0, sizeof op);
  op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.src.op.ptr.ptr = a;
  op.src.op.ptr.rowLength = 1024;
  op.src.op.ptr.layerHeight = 1;
  op.src.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
  op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.dst.op.ptr.ptr = b;
  op.dst.op.ptr.rowLength = 1024;
  op.dst.op.ptr.layerHeight = 1;
  op.dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
  op.extent.width = 4096;
  op.extent.height = 1;
  op.extent.depth = 1;
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  cuMemsetD32(b, 0, 1024);
  fail = 12345;
  R(fn::Memcpy3DBatchAsync(1, &op, &fail, 0, s));
  R(cuStreamSynchronize(s));
  Say("3D: failIdx = %s, copied = %s",
      fail == 12345 ? "unchanged" : fail == SIZE_MAX ? "SIZE_MAX" : std::to_string(fail).c_str(),
      YesNo(Read32(b) == 0x01020304u));
  R(fn::Memcpy3DBatchAsync(1, &op, nullptr, 0, s));
  R(fn::Memcpy3DBatchAsync(1, &op, &fail, 1, s));
  R(fn::Memcpy3DBatchAsync(0, &op, &fail, 0, s));
  R(fn::Memcpy3DBatchAsync(1, nullptr, &fail, 0, s));
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  fail = 12345;
  R(fn::Memcpy3DBatchAsync(1, &op, &fail, 0, s));
  Say("3D invalid order: failIdx = %s",
      fail == 12345 ? "unchanged" : fail == SIZE_MAX ? "SIZE_MAX" : std::to_string(fail).c_str());
  R(cuStreamSynchronize(s));
  cuStreamDestroy(s);
  cuMemFree(a);
  cuMemFree(b);
  return 0;
}

// ---- link, module global, IPC, graphics, texref ----

int CaseLink() {
  if (!Init()) return 1;
  CUlinkState ls = nullptr;
  R(fn::LinkCreate(0, nullptr, nullptr, &ls));
  Say("state null = %s", YesNo(ls == nullptr));
  if (ls != nullptr) {
    R(fn::LinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), sizeof kPtx, "k.ptx", 0,
                      nullptr, nullptr));
    R(fn::LinkAddData(ls, CU_JIT_INPUT_PTX, nullptr, 10, "k.ptx", 0, nullptr, nullptr));
    R(fn::LinkAddData(ls, static_cast<CUjitInputType>(99), const_cast<char*>(kPtx),
                      sizeof kPtx, "k", 0, nullptr, nullptr));
    R(fn::LinkAddFile(ls, CU_JIT_INPUT_PTX, "/nonexistent/x.ptx", 0, nullptr, nullptr));
    R(fn::LinkAddFile(ls, CU_JIT_INPUT_PTX, nullptr, 0, nullptr, nullptr));
    char path[] = "/tmp/olderabi_probe_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
      ssize_t w = write(fd, kPtx, strlen(kPtx));
      (void)w;
      close(fd);
      std::string p2 = std::string(path) + ".ptx";
      rename(path, p2.c_str());
      CUlinkState l2 = nullptr;
      fn::LinkCreate(0, nullptr, nullptr, &l2);
      R(fn::LinkAddFile(l2, CU_JIT_INPUT_PTX, p2.c_str(), 0, nullptr, nullptr));
      void* cubin = nullptr;
      size_t sz = 0;
      R(cuLinkComplete(l2, &cubin, &sz));
      Say("cubin non-empty = %s", YesNo(cubin != nullptr && sz > 0));
      cuLinkDestroy(l2);
      unlink(p2.c_str());
    }
    void* cubin = nullptr;
    size_t sz = 0;
    R(cuLinkComplete(ls, &cubin, &sz));
    Say("cubin non-empty = %s", YesNo(cubin != nullptr && sz > 0));
    R(cuLinkDestroy(ls));
  }
  R(fn::LinkCreate(0, nullptr, nullptr, nullptr));
  CUjit_option o = static_cast<CUjit_option>(999);
  void* ov = nullptr;
  R(fn::LinkCreate(1, &o, &ov, &ls));
  R(fn::LinkCreate(1, nullptr, nullptr, &ls));
  R(fn::LinkAddData(nullptr, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), sizeof kPtx, "k", 0,
                    nullptr, nullptr));
  R(fn::LinkAddFile(nullptr, CU_JIT_INPUT_PTX, "/tmp/x.ptx", 0, nullptr, nullptr));
  return 0;
}

int CaseModuleGlobal() {
  if (!Init()) return 1;
  Kernel k;
  if (!k.Load()) return 1;
  Dptr1 g = 0x12345678;
  unsigned int sz = 0x12345678;
  CUdeviceptr g2 = 0;
  size_t sz2 = 0;
  cuModuleGetGlobal(&g2, &sz2, k.mod, "gvar");
  R(fn::ModuleGetGlobal(&g, &sz, k.mod, "gvar"));
  Say("v1: ptr unchanged = %s, 0 = %s, == low 32 of v2 = %s, v2 fits = %s, size = %u",
      YesNo(g == 0x12345678), YesNo(g == 0), YesNo(g == Lo(g2)), YesNo(Fits32(g2)), sz);
  R(fn::ModuleGetGlobal(&g, nullptr, k.mod, "gvar"));
  R(fn::ModuleGetGlobal(nullptr, &sz, k.mod, "gvar"));
  R(fn::ModuleGetGlobal(nullptr, nullptr, k.mod, "gvar"));
  R(fn::ModuleGetGlobal(&g, &sz, k.mod, "nope"));
  R(fn::ModuleGetGlobal(&g, &sz, k.mod, nullptr));
  R(fn::ModuleGetGlobal(&g, &sz, nullptr, "gvar"));
  R(fn::ModuleGetGlobal(&g, &sz, Garbage<CUmodule>(), "gvar"));
  cuModuleUnload(k.mod);
  R(fn::ModuleGetGlobal(&g, &sz, k.mod, "gvar"));
  return 0;
}

int CaseIpc() {
  if (!Init()) return 1;
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 1 << 21);
  CUipcMemHandle h;
  memset(&h, 0, sizeof h);
  R(cuIpcGetMemHandle(&h, d));
  CUdeviceptr o = 0x1234;
  R(fn::IpcOpenMemHandle(&o, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  Say("out unchanged = %s, 0 = %s, == the allocation = %s", YesNo(o == 0x1234), YesNo(o == 0),
      YesNo(o == d));
  R(fn::IpcOpenMemHandle(&o, h, 0));
  R(fn::IpcOpenMemHandle(&o, h, 2));
  R(fn::IpcOpenMemHandle(nullptr, h, 1));
  CUipcMemHandle z;
  memset(&z, 0, sizeof z);
  R(fn::IpcOpenMemHandle(&o, z, 1));
  memset(&z, 0x5a, sizeof z);
  R(fn::IpcOpenMemHandle(&o, z, 1));
  cuMemFree(d);
  return 0;
}

int CaseGraphics() {
  if (!Init()) return 1;
  Dptr1 p = 0x12345678;
  unsigned int sz = 0x12345678;
  R(fn::GraphicsResourceGetMappedPointer(&p, &sz, nullptr));
  R(fn::GraphicsResourceGetMappedPointer(&p, &sz, Garbage<CUgraphicsResource>()));
  R(fn::GraphicsResourceGetMappedPointer(nullptr, nullptr, nullptr));
  Say("out unchanged = %s, size unchanged = %s", YesNo(p == 0x12345678),
      YesNo(sz == 0x12345678));
  R(fn::GraphicsResourceSetMapFlags(nullptr, 0));
  R(fn::GraphicsResourceSetMapFlags(nullptr, 99));
  R(fn::GraphicsResourceSetMapFlags(Garbage<CUgraphicsResource>(), 0));
  return 0;
}

int CaseTexRef() {
  if (!Init()) return 1;
  typedef CUresult (*CreateT)(CUtexref*);
  typedef CUresult (*DestroyT)(CUtexref);
  CreateT create = reinterpret_cast<CreateT>(dlsym(RTLD_DEFAULT, "cuTexRefCreate"));
  DestroyT destroy = reinterpret_cast<DestroyT>(dlsym(RTLD_DEFAULT, "cuTexRefDestroy"));
  CUtexref t = nullptr;
  if (create == nullptr || create(&t) != CUDA_SUCCESS || t == nullptr) {
    Say("cuTexRefCreate unavailable");
    t = nullptr;
  }
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 1 << 16);
  Dptr1 got = 0x12345678;
  if (t != nullptr) {
    R(fn::TexRefGetAddress(&got, t));
    Say("unset: out unchanged = %s, 0 = %s", YesNo(got == 0x12345678), YesNo(got == 0));
    unsigned int off = 0x12345678;
    cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT32, 1);
    R(fn::TexRefSetAddress(&off, t, Lo(d), 1 << 16));
    Say("v1 set: offset unchanged = %s, 0 = %s", YesNo(off == 0x12345678), YesNo(off == 0));
    got = 0x12345678;
    R(fn::TexRefGetAddress(&got, t));
    Say("v1 get after v1 set: unchanged = %s, == truncated = %s, 0 = %s",
        YesNo(got == 0x12345678), YesNo(got == Lo(d)), YesNo(got == 0));
    size_t off2 = 0;
    R(cuTexRefSetAddress(&off2, t, d, 1 << 16));
    got = 0x12345678;
    R(fn::TexRefGetAddress(&got, t));
    Say("v1 get after v2 set: unchanged = %s, == truncated = %s, v2 fits = %s",
        YesNo(got == 0x12345678), YesNo(got == Lo(d)), YesNo(Fits32(d)));
    R(fn::TexRefGetAddress(nullptr, t));
    R(fn::TexRefSetAddress(nullptr, t, Lo(d), 1 << 16));
    R(fn::TexRefSetAddress(&off, t, 0, 0));
    R(fn::TexRefSetAddress(&off, t, 0x5a5a0000u, 64));
    CUDA_ARRAY_DESCRIPTOR ad;
    memset(&ad, 0, sizeof ad);
    ad.Format = CU_AD_FORMAT_UNSIGNED_INT32;
    ad.NumChannels = 1;
    ad.Width = 64;
    ad.Height = 64;
    R(fn::TexRefSetAddress2D(t, &ad, Lo(d), 256));
    R(fn::TexRefSetAddress2D(t, nullptr, Lo(d), 256));
    R(fn::TexRefSetAddress2D(t, &ad, Lo(d), 3));
    R(fn::TexRefSetAddress2D(t, &ad, 0, 256));
    if (destroy != nullptr) destroy(t);
  }
  unsigned int off = 0;
  R(fn::TexRefGetAddress(&got, nullptr));
  R(fn::TexRefSetAddress(&off, nullptr, Lo(d), 64));
  R(fn::TexRefSetAddress2D(nullptr, nullptr, Lo(d), 256));
  cuMemFree(d);
  return 0;
}

std::vector<std::string> Cases() {
  return {"exports",      "procaddress",  "procaddress:noinit", "mem:alloc",
          "mem:truncated", "mem:info",    "mem:pitchhost",      "mem:noctx",
          "noinit",       "ctx",          "streamevent",        "graph:instantiate",
          "graph:kernel", "capturedeps",  "streammemops",       "managed",
          "batch",        "link",         "module:global",      "ipc",
          "graphics",     "texref"};
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  ResolveAll();
  if (c == "exports") return CaseExports();
  if (c == "procaddress") return CaseProcAddress(true);
  if (c == "procaddress:noinit") return CaseProcAddress(false);
  if (c == "mem:alloc") return CaseMemAlloc();
  if (c == "mem:truncated") return CaseMemTruncated();
  if (c == "mem:info") return CaseMemInfo();
  if (c == "mem:pitchhost") return CaseMemPitchHost();
  if (c == "mem:noctx") return CaseMemNoCtx();
  if (c == "noinit") return CaseNoInit();
  if (c == "ctx") return CaseCtx();
  if (c == "streamevent") return CaseStreamEvent();
  if (c == "graph:instantiate") return CaseGraphInstantiate();
  if (c == "graph:kernel") return CaseGraphKernel();
  if (c == "capturedeps") return CaseCaptureDeps();
  if (c == "streammemops") return CaseStreamMemOps();
  if (c == "managed") return CaseManaged();
  if (c == "batch") return CaseBatch();
  if (c == "link") return CaseLink();
  if (c == "module:global") return CaseModuleGlobal();
  if (c == "ipc") return CaseIpc();
  if (c == "graphics") return CaseGraphics();
  if (c == "texref") return CaseTexRef();
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
  std::string dir = "/tmp/olderabi_probe_run_" + std::to_string(getpid());
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
    fprintf(stderr, "usage: olderabi_probe all [jobs] | list | <case>\n");
    return 2;
  }
  std::string a = argv[1];
  if (a == "list") {
    for (auto& c : Cases()) printf("%s\n", c.c_str());
    return 0;
  }
  if (a == "all") {
    int jobs = argc > 2 ? atoi(argv[2]) : 8;
    RunAll(argv[0], Cases(), jobs, 30.0);
    return 0;
  }
  return RunOne(a);
}
