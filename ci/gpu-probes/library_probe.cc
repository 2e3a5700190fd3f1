// Library / kernel / occupancy probe for cuhal: how the real driver answers the library API
// (cuLibraryLoadData/LoadFromFile/Unload/GetKernel/GetKernelCount/EnumerateKernels/GetModule/
// GetGlobal/GetManaged/GetUnifiedFunction), the kernel API (cuKernelGetFunction/GetLibrary/
// GetName/GetAttribute/SetAttribute/SetCacheConfig/GetParamInfo), function introspection
// (cuFuncGetName/GetParamInfo/GetModule/IsLoaded/Load/GetAttribute/SetAttribute) and the
// occupancy queries, valid and invalid. A plain driver-API program (cuda.h, -lcuda), like
// vmm_probe.cc; see README.md.
//
//   library_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                              `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   library_probe list         the cases
//   library_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address, handle or pointer is printed, only
// relations ("same handle = yes"), so that the fake's output can equal the H200's.
//
// The kernels are PTX compiled by the driver's JIT. Those used for occupancy fix their register
// count with .maxnreg and keep more values live than that (so ptxas uses all of them), and
// declare their shared memory statically; their attributes are printed next to the occupancy.
#include <cuda.h>
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
  char line[2048];
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

// The main library: a C-named kernel, a mangled one, one with assorted parameters, a static
// (non-.visible) entry, a spinning kernel, two globals.
//   add_u32(u32* p, u32 v): *p += v (one thread)
//   _Z6squarePfi(float* p, int n): p[i] *= p[i] for i < n (one thread)
//   params(u8, u64, u32, .align 16 b8[24], u16, f64): nothing
//   hidden(): nothing (no .visible)
//   spin(u32* p, u32 n): loops n times, then *p = n
const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .global .align 4 .u32 counter = 7;
.visible .global .align 8 .b8 table[100];
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
.visible .entry _Z6squarePfi(.param .u64 _Z6squarePfi_param_0, .param .u32 _Z6squarePfi_param_1) {
  .reg .u64 %a;
  .reg .u32 %n, %i;
  .reg .f32 %f;
  .reg .pred %p;
  ld.param.u64 %a, [_Z6squarePfi_param_0];
  ld.param.u32 %n, [_Z6squarePfi_param_1];
  cvta.to.global.u64 %a, %a;
  mov.u32 %i, 0;
LOOP:
  setp.ge.u32 %p, %i, %n;
  @%p bra DONE;
  ld.global.f32 %f, [%a];
  mul.f32 %f, %f, %f;
  st.global.f32 [%a], %f;
  add.u64 %a, %a, 4;
  add.u32 %i, %i, 1;
  bra LOOP;
DONE:
  ret;
}
.visible .entry params(.param .u8 a, .param .u64 b, .param .u32 c, .param .align 16 .b8 d[24],
                       .param .u16 e, .param .f64 f) {
  ret;
}
.entry hidden() { ret; }
.visible .entry spin(.param .u64 p, .param .u32 n) {
  .reg .u64 %a;
  .reg .u32 %n, %i;
  .reg .pred %q;
  ld.param.u64 %a, [p];
  ld.param.u32 %n, [n];
  cvta.to.global.u64 %a, %a;
  mov.u32 %i, 0;
L:
  setp.ge.u32 %q, %i, %n;
  @%q bra E;
  add.u32 %i, %i, 1;
  bra L;
E:
  st.volatile.global.u32 [%a], %i;
  ret;
}
)";

const char* const kKernelNames[] = {"add_u32", "_Z6squarePfi", "params", "hidden", "spin"};

// A library with one managed variable.
const char kManagedPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .global .align 4 .attribute(.managed) .u32 mvar = 5;
.visible .global .align 4 .u32 plain = 3;
.visible .entry touch(.param .u64 p) { ret; }
)";

// A kernel "occ_<regs>_<shared>": .maxnreg `regs`, a static shared array of `shared` bytes
// (0: none) that it uses, and more live 32-bit values than `regs` (all loaded before any is
// stored), so that ptxas uses exactly `regs` registers.
std::string OccKernel(int regs, int shared) {
  int live = regs + 24;
  std::string s;
  char t[256];
  snprintf(t, sizeof t, ".visible .entry occ_%d_%d(.param .u64 p, .param .u64 q) .maxnreg %d {\n",
           regs, shared, regs);
  s += t;
  snprintf(t, sizeof t, "  .reg .u64 %%a, %%b;\n  .reg .u32 %%v<%d>;\n", live);
  s += t;
  if (shared > 0) {
    snprintf(t, sizeof t, "  .shared .align 16 .b8 sm[%d];\n", shared);
    s += t;
  }
  s += "  ld.param.u64 %a, [p];\n  ld.param.u64 %b, [q];\n";
  s += "  cvta.to.global.u64 %a, %a;\n  cvta.to.global.u64 %b, %b;\n";
  for (int i = 0; i < live; ++i) {
    snprintf(t, sizeof t, "  ld.volatile.global.u32 %%v%d, [%%a+%d];\n", i, 4 * i);
    s += t;
  }
  if (shared > 0) {
    s += "  st.volatile.shared.u32 [sm], %v0;\n";
    snprintf(t, sizeof t, "  st.volatile.shared.u32 [sm+%d], %%v1;\n", shared - 4);
    s += t;
    s += "  ld.volatile.shared.u32 %v0, [sm];\n";
  }
  for (int i = 0; i < live; ++i) {
    snprintf(t, sizeof t, "  st.volatile.global.u32 [%%b+%d], %%v%d;\n", 4 * (live - 1 - i),
             live - 1 - i);
    s += t;
  }
  s += "  ret;\n}\n";
  return s;
}

struct OccSpec {
  int regs;
  int shared;
};
const OccSpec kOcc[] = {{32, 0}, {64, 0}, {128, 0}, {255, 0}, {32, 4096}, {40, 20000},
                        {64, 49152}};

std::string OccPtx() {
  std::string s = ".version 8.0\n.target sm_90\n.address_size 64\n";
  for (const OccSpec& o : kOcc) s += OccKernel(o.regs, o.shared);
  return s;
}

std::string OccName(const OccSpec& o) {
  return "occ_" + std::to_string(o.regs) + "_" + std::to_string(o.shared);
}

const struct {
  const char* name;
  CUfunction_attribute a;
} kFuncAttrs[] = {
    {"MAX_THREADS_PER_BLOCK", CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
    {"SHARED_SIZE_BYTES", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
    {"CONST_SIZE_BYTES", CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES},
    {"LOCAL_SIZE_BYTES", CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
    {"NUM_REGS", CU_FUNC_ATTRIBUTE_NUM_REGS},
    {"PTX_VERSION", CU_FUNC_ATTRIBUTE_PTX_VERSION},
    {"BINARY_VERSION", CU_FUNC_ATTRIBUTE_BINARY_VERSION},
    {"CACHE_MODE_CA", CU_FUNC_ATTRIBUTE_CACHE_MODE_CA},
    {"MAX_DYNAMIC_SHARED_SIZE_BYTES", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES},
    {"PREFERRED_SHARED_MEMORY_CARVEOUT", CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT},
    {"CLUSTER_SIZE_MUST_BE_SET", CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET},
    {"REQUIRED_CLUSTER_WIDTH", CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH},
    {"REQUIRED_CLUSTER_HEIGHT", CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT},
    {"REQUIRED_CLUSTER_DEPTH", CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH},
    {"NON_PORTABLE_CLUSTER_SIZE_ALLOWED", CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED},
    {"CLUSTER_SCHEDULING_POLICY_PREFERENCE",
     CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE},
};

// Prints every function attribute of `f` (value, or the error).
void FuncAttrs(const char* label, CUfunction f) {
  for (const auto& a : kFuncAttrs) {
    int v = -12345;
    CUresult r = cuFuncGetAttribute(&v, a.a, f);
    if (r == CUDA_SUCCESS)
      Say("%s: cuFuncGetAttribute(%s) = %d", label, a.name, v);
    else
      Say("%s: cuFuncGetAttribute(%s) = %s (out %d)", label, a.name, Name(r), v);
  }
}
void KernelAttrs(const char* label, CUkernel k, CUdevice dev) {
  for (const auto& a : kFuncAttrs) {
    int v = -12345;
    CUresult r = cuKernelGetAttribute(&v, a.a, k, dev);
    if (r == CUDA_SUCCESS)
      Say("%s: cuKernelGetAttribute(%s) = %d", label, a.name, v);
    else
      Say("%s: cuKernelGetAttribute(%s) = %s (out %d)", label, a.name, Name(r), v);
  }
}

CUresult LoadLib(CUlibrary* lib, const void* code) {
  return cuLibraryLoadData(lib, code, nullptr, nullptr, 0, nullptr, nullptr, 0);
}

// cuInit, the primary context current, the main library loaded, its kernels, a 4 KiB buffer.
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUlibrary lib = nullptr;
  CUkernel add = nullptr, square = nullptr, params = nullptr, hidden = nullptr, spin = nullptr;
  CUdeviceptr buf = 0;
  bool Init(bool with_ctx = true) {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (with_ctx) {
      if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
      cuCtxSetCurrent(ctx);
    }
    CUresult r = LoadLib(&lib, kPtx);
    if (r != CUDA_SUCCESS) {
      Say("setup: cuLibraryLoadData = %s", Name(r));
      return false;
    }
    CUkernel* ks[] = {&add, &square, &params, &hidden, &spin};
    for (int i = 0; i < 5; ++i) {
      r = cuLibraryGetKernel(ks[i], lib, kKernelNames[i]);
      if (r != CUDA_SUCCESS) Say("setup: cuLibraryGetKernel(%s) = %s", kKernelNames[i], Name(r));
    }
    if (with_ctx) {
      if (cuMemAlloc(&buf, 4096) != CUDA_SUCCESS) return false;
      cuMemsetD8(buf, 0, 4096);
    }
    return true;
  }
  unsigned Read(size_t off = 0) {
    unsigned v = 0xdeadbeef;
    cuMemcpyDtoH(&v, buf + off, 4);
    return v;
  }
};

// A heap block of zeros: a "handle" the driver never gave out.
template <typename T>
T Wild() {
  static void* p = calloc(1, 4096);
  return reinterpret_cast<T>(p);
}

// ------------------------------------------------------------------------------------------
// noinit: every family before cuInit.
int CaseNoInit() {
  CUlibrary lib = Wild<CUlibrary>();
  R(cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  Say("out library unchanged = %s", YesNo(lib == Wild<CUlibrary>()));
  R(cuLibraryLoadFromFile(&lib, "/nonexistent.ptx", nullptr, nullptr, 0, nullptr, nullptr, 0));
  R(cuLibraryUnload(nullptr));
  unsigned n = 77;
  R(cuLibraryGetKernelCount(&n, nullptr));
  Say("count out = %u", n);
  CUkernel k = nullptr;
  R(cuLibraryGetKernel(&k, nullptr, "add_u32"));
  const char* name = nullptr;
  R(cuKernelGetName(&name, nullptr));
  R(cuFuncGetName(&name, nullptr));
  CUfunction f = nullptr;
  R(cuKernelGetFunction(&f, nullptr));
  int blocks = 77;
  R(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, nullptr, 128, 0));
  Say("blocks out = %d", blocks);
  int mg = 0, bs = 0;
  R(cuOccupancyMaxPotentialBlockSize(&mg, &bs, nullptr, nullptr, 0, 0));
  size_t dyn = 0;
  R(cuOccupancyAvailableDynamicSMemPerBlock(&dyn, nullptr, 1, 128));
  return 0;
}

// noctx: after cuInit with no current context: the library is context-independent until a
// function, module or global of it is asked for.
int CaseNoCtx() {
  Base b;
  if (!b.Init(/*with_ctx=*/false)) {
    Say("no load without a context: the rest with one");
    if (!b.Init()) return 1;
  }
  CUcontext cur = Wild<CUcontext>();
  R(cuCtxGetCurrent(&cur));
  Say("current context after load is null = %s", YesNo(cur == nullptr));
  unsigned flags = 0;
  int active = -1;
  R(cuDevicePrimaryCtxGetState(b.dev, &flags, &active));
  Say("primary context active after load = %d", active);
  unsigned n = 0;
  R(cuLibraryGetKernelCount(&n, b.lib));
  Say("kernel count = %u", n);
  const char* name = nullptr;
  R(cuKernelGetName(&name, b.add));
  Say("name = %s", name ? name : "(null)");
  int v = -12345;
  R(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_PTX_VERSION, b.add, b.dev));
  Say("PTX_VERSION = %d", v);
  v = -12345;
  R(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, b.add, b.dev));
  Say("MAX_THREADS_PER_BLOCK = %d", v);
  size_t off = 99, sz = 99;
  R(cuKernelGetParamInfo(b.add, 1, &off, &sz));
  Say("param 1 offset %zu size %zu", off, sz);
  CUlibrary l2 = nullptr;
  R(cuKernelGetLibrary(&l2, b.add));
  Say("kernel's library is the library = %s", YesNo(l2 == b.lib));
  R(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, b.add, b.dev));
  R(cuKernelSetCacheConfig(b.add, CU_FUNC_CACHE_PREFER_SHARED, b.dev));
  CUfunction f = Wild<CUfunction>();
  R(cuKernelGetFunction(&f, b.add));
  Say("function out unchanged = %s, null = %s", YesNo(f == Wild<CUfunction>()),
      YesNo(f == nullptr));
  CUmodule m = Wild<CUmodule>();
  R(cuLibraryGetModule(&m, b.lib));
  Say("module out unchanged = %s, null = %s", YesNo(m == Wild<CUmodule>()), YesNo(m == nullptr));
  CUdeviceptr p = 0;
  size_t bytes = 0;
  R(cuLibraryGetGlobal(&p, &bytes, b.lib, "counter"));
  Say("global bytes = %zu", bytes);
  int blocks = -1;
  R(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<CUfunction>(b.add),
                                                128, 0));
  Say("blocks (kernel as function, no context) = %d", blocks);
  R(cuDevicePrimaryCtxGetState(b.dev, &flags, &active));
  Say("primary context active now = %d", active);
  // Now a context.
  CUcontext ctx = nullptr;
  R(cuDevicePrimaryCtxRetain(&ctx, b.dev));
  R(cuCtxSetCurrent(ctx));
  R(cuKernelGetFunction(&f, b.add));
  R(cuLibraryGetModule(&m, b.lib));
  CUmodule fm = nullptr;
  R(cuFuncGetModule(&fm, f));
  Say("function's module is the library's module = %s", YesNo(fm == m));
  R(cuLibraryGetGlobal(&p, &bytes, b.lib, "counter"));
  unsigned val = 0;
  R(cuMemcpyDtoH(&val, p, 4));
  Say("global bytes = %zu value = %u", bytes, val);
  v = -1;
  R(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
  Say("function sees the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES set before it existed: %d", v);
  CUdeviceptr buf = 0;
  R(cuMemAlloc(&buf, 4096));
  cuMemsetD8(buf, 0, 4096);
  unsigned add = 5;
  void* args[] = {&buf, &add};
  R(cuLaunchKernel(reinterpret_cast<CUfunction>(b.add), 1, 1, 1, 1, 1, 1, 0, nullptr, args,
                   nullptr));
  R(cuCtxSynchronize());
  R(cuMemcpyDtoH(&val, buf, 4));
  Say("value after kernel launched by CUkernel = %u", val);
  cuMemFree(buf);
  // Unload with no context current.
  R(cuCtxSetCurrent(nullptr));
  R(cuLibraryUnload(b.lib));
  R(cuCtxSetCurrent(ctx));
  const char* fname = nullptr;
  R(cuFuncGetName(&fname, f));
  return 0;
}

// load: argument checking of cuLibraryLoadData, and what a failing call leaves in *library.
int CaseLoad() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  auto show = [](const char* what, CUlibrary lib, CUresult r) {
    Say("%s = %s (out unchanged = %s, null = %s)", what, Name(r),
        YesNo(lib == Wild<CUlibrary>()), YesNo(lib == nullptr));
    if (r == CUDA_SUCCESS) cuLibraryUnload(lib);
  };
  CUlibrary lib;
  CUresult r;
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0);
  show("valid PTX", lib, r);
  r = cuLibraryLoadData(nullptr, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0);
  show("null library", nullptr, r);
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0);
  show("null code", lib, r);
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib, "this is not an image", nullptr, nullptr, 0, nullptr, nullptr, 0);
  show("text garbage", lib, r);
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib, "", nullptr, nullptr, 0, nullptr, nullptr, 0);
  show("empty string", lib, r);
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib,
                        ".version 8.0\n.target sm_90\n.address_size 64\n"
                        ".visible .entry broken( {\n",
                        nullptr, nullptr, 0, nullptr, nullptr, 0);
  show("invalid PTX", lib, r);
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib,
                        ".version 99.0\n.target sm_90\n.address_size 64\n"
                        ".visible .entry k() { ret; }\n",
                        nullptr, nullptr, 0, nullptr, nullptr, 0);
  show("PTX version 99.0", lib, r);
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib, ".version 8.0\n.target sm_90\n.address_size 64\n", nullptr,
                        nullptr, 0, nullptr, nullptr, 0);
  show("PTX with no kernels", lib, r);
  if (r == CUDA_SUCCESS) {
    lib = nullptr;
    LoadLib(&lib, ".version 8.0\n.target sm_90\n.address_size 64\n");
    unsigned n = 99;
    CUresult cr = cuLibraryGetKernelCount(&n, lib);
    Say("no kernels: count %s = %u", Name(cr), n);
    CUkernel ks[2] = {nullptr, nullptr};
    Say("no kernels: enumerate 0 = %s", Name(cuLibraryEnumerateKernels(ks, 0, lib)));
    Say("no kernels: enumerate 2 = %s", Name(cuLibraryEnumerateKernels(ks, 2, lib)));
    CUmodule m = nullptr;
    Say("no kernels: get module = %s", Name(cuLibraryGetModule(&m, lib)));
    cuLibraryUnload(lib);
  }
  // JIT options.
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 1, nullptr, nullptr, 0);
  show("1 JIT option, null arrays", lib, r);
  {
    CUjit_option o[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void* v[] = {reinterpret_cast<void*>(static_cast<uintptr_t>(3))};
    lib = Wild<CUlibrary>();
    r = cuLibraryLoadData(&lib, kPtx, o, v, 1, nullptr, nullptr, 0);
    show("JIT OPTIMIZATION_LEVEL 3", lib, r);
    CUjit_option bad[] = {static_cast<CUjit_option>(9999)};
    lib = Wild<CUlibrary>();
    r = cuLibraryLoadData(&lib, kPtx, bad, v, 1, nullptr, nullptr, 0);
    show("JIT option 9999", lib, r);
  }
  {
    char log[256] = "untouched";
    CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* v[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log))};
    lib = Wild<CUlibrary>();
    r = cuLibraryLoadData(&lib,
                          ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry broken( {\n",
                          o, v, 2, nullptr, nullptr, 0);
    show("invalid PTX with an error log", lib, r);
    Say("error log written = %s", YesNo(strcmp(log, "untouched") != 0));
  }
  // Library options.
  lib = Wild<CUlibrary>();
  r = cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 1);
  show("1 library option, null arrays", lib, r);
  {
    CUlibraryOption o[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
    void* v[] = {reinterpret_cast<void*>(static_cast<uintptr_t>(1))};
    lib = Wild<CUlibrary>();
    r = cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, o, v, 1);
    show("BINARY_IS_PRESERVED 1", lib, r);
    CUlibraryOption u[] = {CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE};
    void* nv[] = {nullptr};
    lib = Wild<CUlibrary>();
    r = cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, u, nv, 1);
    show("HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE null", lib, r);
    CUlibraryOption n[] = {CU_LIBRARY_NUM_OPTIONS};
    lib = Wild<CUlibrary>();
    r = cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, n, v, 1);
    show("option NUM_OPTIONS", lib, r);
    CUlibraryOption big[] = {static_cast<CUlibraryOption>(77)};
    lib = Wild<CUlibrary>();
    r = cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, big, v, 1);
    show("option 77", lib, r);
  }
  // Two loads of one image: two libraries, distinct kernels.
  CUlibrary a = nullptr, b = nullptr;
  R(LoadLib(&a, kPtx));
  R(LoadLib(&b, kPtx));
  CUkernel ka = nullptr, kb = nullptr;
  cuLibraryGetKernel(&ka, a, "add_u32");
  cuLibraryGetKernel(&kb, b, "add_u32");
  Say("two loads: same library = %s, same kernel = %s", YesNo(a == b), YesNo(ka == kb));
  CUfunction fa = nullptr, fb = nullptr;
  cuKernelGetFunction(&fa, ka);
  cuKernelGetFunction(&fb, kb);
  Say("two loads: same function = %s", YesNo(fa == fb));
  R(cuLibraryUnload(a));
  R(cuLibraryUnload(b));
  return 0;
}

// fromfile: cuLibraryLoadFromFile.
int CaseFromFile() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  std::string dir = "/tmp/library_probe_file_" + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  std::string good = dir + "/good.ptx", bad = dir + "/bad.ptx", empty = dir + "/empty.ptx";
  FILE* f = fopen(good.c_str(), "w");
  fputs(kPtx, f);
  fclose(f);
  f = fopen(bad.c_str(), "w");
  fputs("not an image at all", f);
  fclose(f);
  f = fopen(empty.c_str(), "w");
  fclose(f);
  auto load = [](const char* what, const char* path) {
    CUlibrary lib = Wild<CUlibrary>();
    CUresult r = cuLibraryLoadFromFile(&lib, path, nullptr, nullptr, 0, nullptr, nullptr, 0);
    Say("%s = %s (out unchanged = %s)", what, Name(r), YesNo(lib == Wild<CUlibrary>()));
    if (r == CUDA_SUCCESS) {
      unsigned n = 0;
      cuLibraryGetKernelCount(&n, lib);
      Say("%s: kernel count = %u", what, n);
      CUkernel k = nullptr;
      Say("%s: get add_u32 = %s", what, Name(cuLibraryGetKernel(&k, lib, "add_u32")));
      cuLibraryUnload(lib);
    }
  };
  load("PTX file", good.c_str());
  load("garbage file", bad.c_str());
  load("empty file", empty.c_str());
  load("missing file", (dir + "/missing.ptx").c_str());
  load("directory", dir.c_str());
  load("null file name", nullptr);
  load("empty file name", "");
  R(cuLibraryLoadFromFile(nullptr, good.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  unlink(good.c_str());
  unlink(bad.c_str());
  unlink(empty.c_str());
  rmdir(dir.c_str());
  return 0;
}

// kernels: count, enumeration, look-up by name.
int CaseKernels() {
  Base b;
  if (!b.Init()) return 1;
  unsigned n = 0;
  R(cuLibraryGetKernelCount(&n, b.lib));
  Say("kernel count = %u", n);
  R(cuLibraryGetKernelCount(nullptr, b.lib));
  std::vector<CUkernel> ks(n + 3, Wild<CUkernel>());
  R(cuLibraryEnumerateKernels(ks.data(), n, b.lib));
  for (unsigned i = 0; i < n; ++i) {
    const char* name = nullptr;
    CUresult r = cuKernelGetName(&name, ks[i]);
    CUkernel by_name = nullptr;
    CUresult g = name ? cuLibraryGetKernel(&by_name, b.lib, name) : CUDA_ERROR_INVALID_VALUE;
    Say("enumerated[%u]: name %s = %s, equals cuLibraryGetKernel = %s (%s)", i, Name(r),
        name ? name : "(null)", YesNo(by_name == ks[i]), Name(g));
  }
  std::vector<CUkernel> more(n + 3, Wild<CUkernel>());
  R(cuLibraryEnumerateKernels(more.data(), n + 3, b.lib));
  int untouched = 0, same = 0;
  for (unsigned i = 0; i < n + 3; ++i) {
    if (more[i] == Wild<CUkernel>()) ++untouched;
    if (i < n && more[i] == ks[i]) ++same;
  }
  Say("enumerate n+3: entries untouched = %d, first n same order = %d", untouched, same);
  std::vector<CUkernel> fewer(n, Wild<CUkernel>());
  CUresult r = cuLibraryEnumerateKernels(fewer.data(), 2, b.lib);
  untouched = 0;
  same = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (fewer[i] == Wild<CUkernel>()) ++untouched;
    if (fewer[i] == ks[i]) ++same;
  }
  Say("enumerate 2 of %u = %s: entries untouched = %d, same as full enumeration = %d", n,
      Name(r), untouched, same);
  R(cuLibraryEnumerateKernels(fewer.data(), 0, b.lib));
  R(cuLibraryEnumerateKernels(nullptr, n, b.lib));
  R(cuLibraryEnumerateKernels(nullptr, 0, b.lib));
  R(cuLibraryEnumerateKernels(fewer.data(), n, nullptr));
  // Look-up.
  CUkernel k1 = nullptr, k2 = nullptr;
  R(cuLibraryGetKernel(&k1, b.lib, "add_u32"));
  R(cuLibraryGetKernel(&k2, b.lib, "add_u32"));
  Say("same name twice: same handle = %s", YesNo(k1 == k2));
  CUkernel k = Wild<CUkernel>();
  r = cuLibraryGetKernel(&k, b.lib, "nope");
  Say("unknown name = %s (out unchanged = %s, null = %s)", Name(r),
      YesNo(k == Wild<CUkernel>()), YesNo(k == nullptr));
  k = Wild<CUkernel>();
  r = cuLibraryGetKernel(&k, b.lib, "");
  Say("empty name = %s (out unchanged = %s)", Name(r), YesNo(k == Wild<CUkernel>()));
  r = cuLibraryGetKernel(&k, b.lib, "counter");
  Say("name of a global = %s", Name(r));
  r = cuLibraryGetKernel(&k, b.lib, "_Z6squarePfi");
  Say("mangled name = %s", Name(r));
  r = cuLibraryGetKernel(&k, b.lib, "square");
  Say("demangled base name = %s", Name(r));
  r = cuLibraryGetKernel(&k, b.lib, "hidden");
  Say("non-.visible entry = %s", Name(r));
  R(cuLibraryGetKernel(&k, b.lib, nullptr));
  R(cuLibraryGetKernel(nullptr, b.lib, "add_u32"));
  R(cuLibraryGetKernel(&k, nullptr, "add_u32"));
  CUlibrary l = Wild<CUlibrary>();
  R(cuKernelGetLibrary(&l, b.add));
  Say("kernel's library = the library: %s", YesNo(l == b.lib));
  R(cuKernelGetLibrary(nullptr, b.add));
  l = Wild<CUlibrary>();
  r = cuKernelGetLibrary(&l, nullptr);
  Say("cuKernelGetLibrary(null kernel) = %s (out unchanged = %s)", Name(r),
      YesNo(l == Wild<CUlibrary>()));
  // The module view.
  CUmodule m = nullptr;
  R(cuLibraryGetModule(&m, b.lib));
  unsigned fc = 0;
  R(cuModuleGetFunctionCount(&fc, m));
  Say("module function count = %u", fc);
  std::vector<CUfunction> fs(fc);
  R(cuModuleEnumerateFunctions(fs.data(), fc, m));
  for (unsigned i = 0; i < fc; ++i) {
    const char* name = nullptr;
    cuFuncGetName(&name, fs[i]);
    CUkernel kk = nullptr;
    CUfunction kf = nullptr;
    if (name && cuLibraryGetKernel(&kk, b.lib, name) == CUDA_SUCCESS) cuKernelGetFunction(&kf, kk);
    Say("module function[%u] = %s, equals cuKernelGetFunction = %s", i, name ? name : "(null)",
        YesNo(kf == fs[i]));
  }
  return 0;
}

// names: cuKernelGetName / cuFuncGetName.
int CaseNames() {
  Base b;
  if (!b.Init()) return 1;
  CUkernel ks[] = {b.add, b.square, b.params, b.hidden, b.spin};
  for (CUkernel k : ks) {
    const char* n1 = nullptr;
    const char* n2 = nullptr;
    CUresult r = cuKernelGetName(&n1, k);
    cuKernelGetName(&n2, k);
    CUfunction f = nullptr;
    cuKernelGetFunction(&f, k);
    const char* fn = nullptr;
    CUresult fr = cuFuncGetName(&fn, f);
    Say("kernel name %s = %s (same pointer twice = %s); function name %s = %s (same pointer as "
        "kernel's = %s)",
        Name(r), n1 ? n1 : "(null)", YesNo(n1 == n2), Name(fr), fn ? fn : "(null)",
        YesNo(fn == n1));
  }
  R(cuKernelGetName(nullptr, b.add));
  const char* name = "untouched";
  CUresult r = cuKernelGetName(&name, nullptr);
  Say("cuKernelGetName(null kernel) = %s (out untouched = %s)", Name(r),
      YesNo(name && strcmp(name, "untouched") == 0));
  CUfunction f = nullptr;
  cuKernelGetFunction(&f, b.add);
  R(cuFuncGetName(nullptr, f));
  name = "untouched";
  r = cuFuncGetName(&name, nullptr);
  Say("cuFuncGetName(null function) = %s (out untouched = %s)", Name(r),
      YesNo(name && strcmp(name, "untouched") == 0));
  // A module loaded the old way.
  CUmodule m = nullptr;
  R(cuModuleLoadData(&m, kPtx));
  CUfunction mf = nullptr;
  R(cuModuleGetFunction(&mf, m, "_Z6squarePfi"));
  name = nullptr;
  R(cuFuncGetName(&name, mf));
  Say("module function name = %s", name ? name : "(null)");
  R(cuModuleGetFunction(&mf, m, "hidden"));
  // A kernel handle given where a function is expected and the reverse.
  name = nullptr;
  r = cuFuncGetName(&name, reinterpret_cast<CUfunction>(b.square));
  Say("cuFuncGetName(kernel) = %s name = %s", Name(r), r == CUDA_SUCCESS && name ? name : "-");
  name = nullptr;
  r = cuKernelGetName(&name, reinterpret_cast<CUkernel>(mf));
  Say("cuKernelGetName(function) = %s name = %s", Name(r), r == CUDA_SUCCESS && name ? name : "-");
  cuModuleUnload(m);
  return 0;
}

// params: cuKernelGetParamInfo / cuFuncGetParamInfo.
int CaseParams() {
  Base b;
  if (!b.Init()) return 1;
  CUfunction f = nullptr;
  cuKernelGetFunction(&f, b.params);
  for (size_t i = 0; i < 7; ++i) {
    size_t off = 999, sz = 999;
    CUresult r = cuKernelGetParamInfo(b.params, i, &off, &sz);
    size_t foff = 999, fsz = 999;
    CUresult fr = cuFuncGetParamInfo(f, i, &foff, &fsz);
    Say("param %zu: kernel %s offset %zu size %zu; function %s offset %zu size %zu", i, Name(r),
        off, sz, Name(fr), foff, fsz);
  }
  size_t off = 999;
  R(cuKernelGetParamInfo(b.params, 3, &off, nullptr));
  Say("offset only = %zu", off);
  size_t sz = 999;
  R(cuKernelGetParamInfo(b.params, 3, nullptr, &sz));
  Say("size out = %zu", sz);
  R(cuFuncGetParamInfo(f, 3, nullptr, &sz));
  R(cuKernelGetParamInfo(b.hidden, 0, &off, &sz));
  R(cuKernelGetParamInfo(nullptr, 0, &off, &sz));
  R(cuFuncGetParamInfo(nullptr, 0, &off, &sz));
  R(cuKernelGetParamInfo(b.add, static_cast<size_t>(-1), &off, &sz));
  off = 999;
  sz = 999;
  R(cuKernelGetParamInfo(b.square, 1, &off, &sz));
  Say("_Z6squarePfi param 1 offset %zu size %zu", off, sz);
  return 0;
}

// attrs: cuKernelGetAttribute and cuFuncGetAttribute of library kernels.
int CaseAttrs() {
  Base b;
  if (!b.Init()) return 1;
  KernelAttrs("add_u32", b.add, b.dev);
  CUfunction f = nullptr;
  cuKernelGetFunction(&f, b.add);
  FuncAttrs("add_u32", f);
  int v = -12345;
  CUresult r = cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, b.add, b.dev);
  Say("attribute MAX = %s (out %d)", Name(r), v);
  r = cuKernelGetAttribute(&v, static_cast<CUfunction_attribute>(-1), b.add, b.dev);
  Say("attribute -1 = %s", Name(r));
  r = cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, f);
  Say("cuFuncGetAttribute MAX = %s", Name(r));
  R(cuKernelGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, b.add, b.dev));
  R(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr, b.dev));
  R(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, b.add, -1));
  R(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, b.add, 64));
  int count = 0;
  cuDeviceGetCount(&count);
  R(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, b.add, count));
  R(cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  R(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr));
  // The other kernels' main attributes.
  CUkernel ks[] = {b.square, b.params, b.hidden, b.spin};
  const char* names[] = {"_Z6squarePfi", "params", "hidden", "spin"};
  for (int i = 0; i < 4; ++i) {
    int t = -1, s = -1, l = -1, c = -1;
    cuKernelGetAttribute(&t, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, ks[i], b.dev);
    cuKernelGetAttribute(&s, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, ks[i], b.dev);
    cuKernelGetAttribute(&l, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, ks[i], b.dev);
    cuKernelGetAttribute(&c, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, ks[i], b.dev);
    Say("%s: MAX_THREADS %d SHARED %d LOCAL %d CONST %d", names[i], t, s, l, c);
  }
  return 0;
}

// setattr: cuKernelSetAttribute / cuKernelSetCacheConfig and what functions see.
int CaseSetAttr() {
  Base b;
  if (!b.Init()) return 1;
  CUfunction before = nullptr;
  cuKernelGetFunction(&before, b.add);
  auto show = [&](const char* what, CUfunction_attribute a) {
    int kv = -12345, fv = -12345;
    CUresult kr = cuKernelGetAttribute(&kv, a, b.add, b.dev);
    CUresult fr = cuFuncGetAttribute(&fv, a, before);
    Say("%s: kernel %s %d, function %s %d", what, Name(kr), kv, Name(fr), fv);
  };
  struct {
    const char* name;
    CUfunction_attribute a;
    int v;
  } sets[] = {
      {"MAX_DYNAMIC_SHARED_SIZE_BYTES 65536", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
       65536},
      {"MAX_DYNAMIC_SHARED_SIZE_BYTES 232448", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
       232448},
      {"MAX_DYNAMIC_SHARED_SIZE_BYTES 232449", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
       232449},
      {"MAX_DYNAMIC_SHARED_SIZE_BYTES -1", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1},
      {"PREFERRED_SHARED_MEMORY_CARVEOUT 50", CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
       50},
      {"PREFERRED_SHARED_MEMORY_CARVEOUT 101", CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
       101},
      {"PREFERRED_SHARED_MEMORY_CARVEOUT -1", CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
       -1},
      {"REQUIRED_CLUSTER_WIDTH 2", CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2},
      {"NON_PORTABLE_CLUSTER_SIZE_ALLOWED 1",
       CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1},
      {"CLUSTER_SCHEDULING_POLICY_PREFERENCE 1",
       CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 1},
      {"NUM_REGS 16", CU_FUNC_ATTRIBUTE_NUM_REGS, 16},
      {"MAX_THREADS_PER_BLOCK 128", CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 128},
      {"CACHE_MODE_CA 1", CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 1},
  };
  for (const auto& s : sets) {
    CUresult r = cuKernelSetAttribute(s.a, s.v, b.add, b.dev);
    Say("cuKernelSetAttribute(%s) = %s", s.name, Name(r));
    show(s.name, s.a);
  }
  CUfunction after = nullptr;
  cuKernelGetFunction(&after, b.add);
  Say("function after the sets is the same handle = %s", YesNo(after == before));
  R(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, b.add, -1));
  R(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, b.add, 64));
  R(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, nullptr, b.dev));
  R(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX, 1, b.add, b.dev));
  // A set through the function: does the kernel see it?
  R(cuFuncSetAttribute(before, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 4096));
  show("after cuFuncSetAttribute 4096", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  // A function of another context: does it see the kernel's value?
  CUcontext c2 = nullptr;
  CUctxCreateParams* none = nullptr;
  R(cuCtxCreate(&c2, none, 0, b.dev));
  CUfunction f2 = nullptr;
  R(cuKernelGetFunction(&f2, b.add));
  int v = -1;
  R(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f2));
  Say("other context's function MAX_DYNAMIC_SHARED_SIZE_BYTES = %d", v);
  R(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 2048, b.add, b.dev));
  R(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f2));
  Say("other context's function after a kernel set of 2048 = %d", v);
  R(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, before));
  Say("first context's function after a kernel set of 2048 = %d", v);
  cuCtxDestroy(c2);
  cuCtxSetCurrent(b.ctx);
  // Cache config.
  R(cuKernelSetCacheConfig(b.add, CU_FUNC_CACHE_PREFER_SHARED, b.dev));
  R(cuKernelSetCacheConfig(b.add, CU_FUNC_CACHE_PREFER_EQUAL, b.dev));
  R(cuKernelSetCacheConfig(b.add, static_cast<CUfunc_cache>(4), b.dev));
  R(cuKernelSetCacheConfig(b.add, static_cast<CUfunc_cache>(-1), b.dev));
  R(cuKernelSetCacheConfig(b.add, CU_FUNC_CACHE_PREFER_L1, -1));
  R(cuKernelSetCacheConfig(b.add, CU_FUNC_CACHE_PREFER_L1, 64));
  R(cuKernelSetCacheConfig(nullptr, CU_FUNC_CACHE_PREFER_L1, b.dev));
  return 0;
}

// launch: a CUkernel in place of a CUfunction.
int CaseLaunch() {
  Base b;
  if (!b.Init()) return 1;
  unsigned add = 3;
  void* args[] = {&b.buf, &add};
  R(cuLaunchKernel(reinterpret_cast<CUfunction>(b.add), 1, 1, 1, 1, 1, 1, 0, nullptr, args,
                   nullptr));
  R(cuCtxSynchronize());
  Say("value after CUkernel launch = %u", b.Read());
  CUfunction f = nullptr;
  R(cuKernelGetFunction(&f, b.add));
  R(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  R(cuCtxSynchronize());
  Say("value after function launch = %u", b.Read());
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
  R(cuLaunchKernelEx(&cfg, reinterpret_cast<CUfunction>(b.add), args, nullptr));
  R(cuCtxSynchronize());
  Say("value after cuLaunchKernelEx of CUkernel = %u", b.Read());
  // The mangled kernel on floats.
  float x[3] = {2, 3, 4};
  cuMemcpyHtoD(b.buf + 64, x, sizeof x);
  CUdeviceptr p = b.buf + 64;
  int n = 3;
  void* sargs[] = {&p, &n};
  R(cuLaunchKernel(reinterpret_cast<CUfunction>(b.square), 1, 1, 1, 1, 1, 1, 0, nullptr, sargs,
                   nullptr));
  R(cuCtxSynchronize());
  cuMemcpyDtoH(x, b.buf + 64, sizeof x);
  Say("squares = %g %g %g", x[0], x[1], x[2]);
  // Block too large for a kernel launched as CUkernel.
  R(cuLaunchKernel(reinterpret_cast<CUfunction>(b.add), 1, 1, 1, 2048, 1, 1, 0, nullptr, args,
                   nullptr));
  // Another context: launching the kernel there without cuKernelGetFunction.
  CUcontext c2 = nullptr;
  CUctxCreateParams* none = nullptr;
  R(cuCtxCreate(&c2, none, 0, b.dev));
  CUdeviceptr buf2 = 0;
  cuMemAlloc(&buf2, 256);
  cuMemsetD8(buf2, 0, 256);
  void* args2[] = {&buf2, &add};
  R(cuLaunchKernel(reinterpret_cast<CUfunction>(b.add), 1, 1, 1, 1, 1, 1, 0, nullptr, args2,
                   nullptr));
  R(cuCtxSynchronize());
  unsigned v = 0;
  cuMemcpyDtoH(&v, buf2, 4);
  Say("value in the second context = %u", v);
  CUfunction f2 = nullptr;
  R(cuKernelGetFunction(&f2, b.add));
  Say("second context's function differs from the first's = %s", YesNo(f2 != f));
  // The first context's function launched while the second is current.
  CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args2, nullptr);
  Say("first context's function launched in the second = %s", Name(r));
  cuCtxSynchronize();
  cuMemFree(buf2);
  cuCtxDestroy(c2);
  cuCtxSetCurrent(b.ctx);
  // Graph kernel node of a CUkernel.
  CUgraph g = nullptr;
  cuGraphCreate(&g, 0);
  CUDA_KERNEL_NODE_PARAMS kp;
  memset(&kp, 0, sizeof kp);
  kp.func = reinterpret_cast<CUfunction>(b.add);
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CUgraphNode node = nullptr;
  R(cuGraphAddKernelNode(&node, g, nullptr, 0, &kp));
  CUgraphExec ge = nullptr;
  R(cuGraphInstantiate(&ge, g, 0));
  if (ge) {
    R(cuGraphLaunch(ge, nullptr));
    R(cuCtxSynchronize());
    cuGraphExecDestroy(ge);
  }
  Say("value after graph launch = %u", b.Read());
  cuGraphDestroy(g);
  return 0;
}

// funcload: cuFuncIsLoaded / cuFuncLoad and the module loading mode.
int CaseFuncLoad() {
  Base b;
  if (!b.Init()) return 1;
  CUmoduleLoadingMode mode = static_cast<CUmoduleLoadingMode>(0);
  R(cuModuleGetLoadingMode(&mode));
  Say("loading mode = %s", mode == CU_MODULE_LAZY_LOADING    ? "LAZY"
                           : mode == CU_MODULE_EAGER_LOADING ? "EAGER"
                                                             : "?");
  CUfunction f = nullptr;
  cuKernelGetFunction(&f, b.add);
  CUfunctionLoadingState s = CU_FUNCTION_LOADING_STATE_MAX;
  R(cuFuncIsLoaded(&s, f));
  Say("state after cuKernelGetFunction = %d", static_cast<int>(s));
  R(cuFuncLoad(f));
  R(cuFuncIsLoaded(&s, f));
  Say("state after cuFuncLoad = %d", static_cast<int>(s));
  CUfunction g = nullptr;
  cuKernelGetFunction(&g, b.spin);
  unsigned n = 1;
  void* args[] = {&b.buf, &n};
  cuLaunchKernel(g, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
  cuCtxSynchronize();
  R(cuFuncIsLoaded(&s, g));
  Say("state after a launch = %d", static_cast<int>(s));
  R(cuFuncIsLoaded(nullptr, f));
  s = CU_FUNCTION_LOADING_STATE_MAX;
  R(cuFuncIsLoaded(&s, nullptr));
  Say("state out after null function = %d", static_cast<int>(s));
  R(cuFuncLoad(nullptr));
  CUmodule m = nullptr;
  R(cuModuleLoadData(&m, kPtx));
  CUfunction mf = nullptr;
  cuModuleGetFunction(&mf, m, "add_u32");
  R(cuFuncIsLoaded(&s, mf));
  Say("module function state = %d", static_cast<int>(s));
  R(cuFuncLoad(mf));
  cuModuleUnload(m);
  s = CU_FUNCTION_LOADING_STATE_MAX;
  R(cuFuncIsLoaded(&s, reinterpret_cast<CUfunction>(b.add)));
  Say("kernel as function state = %d", static_cast<int>(s));
  return 0;
}

// module: cuLibraryGetModule, cuFuncGetModule, and unloading the library's module.
int CaseModule() {
  Base b;
  if (!b.Init()) return 1;
  CUmodule m1 = nullptr, m2 = nullptr;
  R(cuLibraryGetModule(&m1, b.lib));
  R(cuLibraryGetModule(&m2, b.lib));
  Say("twice: same module = %s", YesNo(m1 == m2));
  CUfunction f = nullptr, mf = nullptr;
  cuKernelGetFunction(&f, b.add);
  R(cuModuleGetFunction(&mf, m1, "add_u32"));
  Say("cuModuleGetFunction equals cuKernelGetFunction = %s", YesNo(mf == f));
  CUmodule fm = nullptr;
  R(cuFuncGetModule(&fm, f));
  Say("cuFuncGetModule = library's module: %s", YesNo(fm == m1));
  R(cuFuncGetModule(nullptr, f));
  fm = Wild<CUmodule>();
  CUresult r = cuFuncGetModule(&fm, nullptr);
  Say("cuFuncGetModule(null) = %s (out unchanged = %s)", Name(r), YesNo(fm == Wild<CUmodule>()));
  R(cuLibraryGetModule(nullptr, b.lib));
  R(cuLibraryGetModule(&m1, nullptr));
  CUdeviceptr gp = 0, mp = 0;
  size_t gb = 0, mb = 0;
  R(cuLibraryGetGlobal(&gp, &gb, b.lib, "counter"));
  R(cuModuleGetGlobal(&mp, &mb, m2, "counter"));
  Say("library global = module global: %s, sizes %zu %zu", YesNo(gp == mp), gb, mb);
  // A module of the old API: cuFuncGetModule.
  CUmodule om = nullptr;
  cuModuleLoadData(&om, kPtx);
  CUfunction of = nullptr;
  cuModuleGetFunction(&of, om, "add_u32");
  R(cuFuncGetModule(&fm, of));
  Say("old-API function's module = its module: %s", YesNo(fm == om));
  cuModuleUnload(om);
  // Unloading the library's module through the module API.
  r = cuModuleUnload(m2);
  Say("cuModuleUnload(library's module) = %s", Name(r));
  CUfunction f2 = nullptr;
  r = cuKernelGetFunction(&f2, b.add);
  Say("cuKernelGetFunction after = %s, same function = %s", Name(r), YesNo(f2 == f));
  CUmodule m3 = nullptr;
  r = cuLibraryGetModule(&m3, b.lib);
  Say("cuLibraryGetModule after = %s, same module = %s", Name(r), YesNo(m3 == m2));
  unsigned add = 1;
  void* args[] = {&b.buf, &add};
  r = cuLaunchKernel(reinterpret_cast<CUfunction>(b.add), 1, 1, 1, 1, 1, 1, 0, nullptr, args,
                     nullptr);
  CUresult sync = cuCtxSynchronize();
  Say("CUkernel launch after = %s, sync %s, value %u", Name(r), Name(sync), b.Read());
  R(cuLibraryUnload(b.lib));
  return 0;
}

// globals: cuLibraryGetGlobal / cuLibraryGetManaged / cuLibraryGetUnifiedFunction.
int CaseGlobals() {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr p = 0;
  size_t n = 0;
  R(cuLibraryGetGlobal(&p, &n, b.lib, "counter"));
  unsigned v = 0;
  cuMemcpyDtoH(&v, p, 4);
  Say("counter: bytes %zu value %u", n, v);
  CUdeviceptr p2 = 0;
  R(cuLibraryGetGlobal(&p2, &n, b.lib, "counter"));
  Say("twice: same address = %s", YesNo(p == p2));
  R(cuLibraryGetGlobal(&p, &n, b.lib, "table"));
  Say("table: bytes %zu, 8-aligned %s", n, YesNo(p % 8 == 0));
  p = 12345;
  n = 12345;
  CUresult r = cuLibraryGetGlobal(&p, &n, b.lib, "nope");
  Say("unknown = %s (outs unchanged = %s)", Name(r), YesNo(p == 12345 && n == 12345));
  R(cuLibraryGetGlobal(&p, &n, b.lib, "add_u32"));
  R(cuLibraryGetGlobal(nullptr, &n, b.lib, "counter"));
  Say("bytes only = %zu", n);
  R(cuLibraryGetGlobal(&p, nullptr, b.lib, "counter"));
  R(cuLibraryGetGlobal(nullptr, nullptr, b.lib, "counter"));
  R(cuLibraryGetGlobal(&p, &n, b.lib, nullptr));
  R(cuLibraryGetGlobal(&p, &n, nullptr, "counter"));
  // A write through one context, read in another.
  R(cuLibraryGetGlobal(&p, &n, b.lib, "counter"));
  v = 41;
  cuMemcpyHtoD(p, &v, 4);
  CUcontext c2 = nullptr;
  CUctxCreateParams* none = nullptr;
  cuCtxCreate(&c2, none, 0, b.dev);
  R(cuLibraryGetGlobal(&p2, &n, b.lib, "counter"));
  v = 0;
  cuMemcpyDtoH(&v, p2, 4);
  Say("second context: different address = %s, value %u", YesNo(p2 != p), v);
  cuCtxDestroy(c2);
  cuCtxSetCurrent(b.ctx);
  // Managed.
  R(cuLibraryGetManaged(&p, &n, b.lib, "counter"));
  R(cuLibraryGetManaged(&p, &n, b.lib, "nope"));
  CUlibrary ml = nullptr;
  r = LoadLib(&ml, kManagedPtx);
  Say("managed library load = %s", Name(r));
  if (r == CUDA_SUCCESS) {
    p = 0;
    n = 0;
    R(cuLibraryGetManaged(&p, &n, ml, "mvar"));
    unsigned host = 0;
    if (p) {
      cuCtxSynchronize();
      host = *reinterpret_cast<volatile unsigned*>(p);
    }
    Say("mvar: bytes %zu, host read %u", n, host);
    unsigned mt = 0;
    R(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
    Say("mvar is managed = %u", mt);
    R(cuLibraryGetGlobal(&p2, &n, ml, "mvar"));
    Say("cuLibraryGetGlobal(mvar) same address = %s", YesNo(p2 == p));
    R(cuLibraryGetManaged(&p, &n, ml, "plain"));
    R(cuLibraryGetManaged(nullptr, &n, ml, "mvar"));
    R(cuLibraryGetManaged(&p, nullptr, ml, "mvar"));
    R(cuLibraryGetManaged(&p, &n, ml, nullptr));
    R(cuLibraryGetManaged(&p, &n, nullptr, "mvar"));
    cuLibraryUnload(ml);
  }
  // Unified functions.
  void* fp = Wild<void*>();
  r = cuLibraryGetUnifiedFunction(&fp, b.lib, "add_u32");
  Say("unified add_u32 = %s (out unchanged = %s, null = %s)", Name(r),
      YesNo(fp == Wild<void*>()), YesNo(fp == nullptr));
  fp = Wild<void*>();
  r = cuLibraryGetUnifiedFunction(&fp, b.lib, "nope");
  Say("unified nope = %s (out unchanged = %s, null = %s)", Name(r), YesNo(fp == Wild<void*>()),
      YesNo(fp == nullptr));
  R(cuLibraryGetUnifiedFunction(nullptr, b.lib, "add_u32"));
  R(cuLibraryGetUnifiedFunction(&fp, b.lib, nullptr));
  R(cuLibraryGetUnifiedFunction(&fp, nullptr, "add_u32"));
  return 0;
}

// unload: cuLibraryUnload and everything that outlives it.
int CaseUnload() {
  Base b;
  if (!b.Init()) return 1;
  CUfunction f = nullptr;
  cuKernelGetFunction(&f, b.add);
  CUmodule m = nullptr;
  cuLibraryGetModule(&m, b.lib);
  CUdeviceptr gp = 0;
  size_t gn = 0;
  cuLibraryGetGlobal(&gp, &gn, b.lib, "counter");
  R(cuLibraryUnload(b.lib));
  R(cuLibraryUnload(b.lib));
  unsigned n = 99;
  R(cuLibraryGetKernelCount(&n, b.lib));
  CUkernel k = nullptr;
  R(cuLibraryGetKernel(&k, b.lib, "add_u32"));
  CUfunction f2 = nullptr;
  R(cuKernelGetFunction(&f2, b.add));
  const char* name = nullptr;
  R(cuKernelGetName(&name, b.add));
  CUlibrary l = nullptr;
  R(cuKernelGetLibrary(&l, b.add));
  int v = 0;
  R(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, b.add, b.dev));
  R(cuFuncGetName(&name, f));
  R(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  CUmodule fm = nullptr;
  R(cuFuncGetModule(&fm, f));
  CUfunction mf = nullptr;
  R(cuModuleGetFunction(&mf, m, "add_u32"));
  R(cuModuleUnload(m));
  unsigned add = 1;
  void* args[] = {&b.buf, &add};
  R(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  R(cuLaunchKernel(reinterpret_cast<CUfunction>(b.add), 1, 1, 1, 1, 1, 1, 0, nullptr, args,
                   nullptr));
  R(cuCtxSynchronize());
  int blocks = -1;
  R(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 0));
  // Is the global's memory gone?
  CUdeviceptr base = 0;
  size_t size = 0;
  R(cuMemGetAddressRange(&base, &size, gp));
  unsigned x = 0;
  R(cuMemcpyDtoH(&x, gp, 4));
  R(cuCtxSynchronize());
  return 0;
}

// inflight: cuLibraryUnload while a kernel of it runs.
int CaseInflight() {
  Base b;
  if (!b.Init()) return 1;
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  unsigned n = 2000000;
  void* args[] = {&b.buf, &n};
  R(cuLaunchKernel(reinterpret_cast<CUfunction>(b.spin), 1, 1, 1, 1, 1, 1, 0, s, args,
                   nullptr));
  R(cuLibraryUnload(b.lib));
  CUresult q = cuStreamQuery(s);
  Say("stream after unload returned: %s", q == CUDA_ERROR_NOT_READY ? "still running"
                                          : q == CUDA_SUCCESS        ? "done"
                                                                     : Name(q));
  R(cuStreamSynchronize(s));
  Say("value = %u (expected %u)", b.Read(), n);
  R(cuCtxSynchronize());
  return 0;
}

// ctx: one library, several contexts; context destruction.
int CaseCtx() {
  Base b;
  if (!b.Init()) return 1;
  CUfunction fa = nullptr;
  cuKernelGetFunction(&fa, b.add);
  CUcontext c2 = nullptr;
  CUctxCreateParams* none = nullptr;
  R(cuCtxCreate(&c2, none, 0, b.dev));
  CUfunction fb = nullptr;
  R(cuKernelGetFunction(&fb, b.add));
  Say("function per context: differ = %s", YesNo(fa != fb));
  CUmodule ma = nullptr, mb = nullptr;
  R(cuLibraryGetModule(&mb, b.lib));
  cuCtxSetCurrent(b.ctx);
  cuLibraryGetModule(&ma, b.lib);
  Say("module per context: differ = %s", YesNo(ma != mb));
  // A library loaded while c2 is current survives c2.
  cuCtxSetCurrent(c2);
  CUlibrary l2 = nullptr;
  R(LoadLib(&l2, kPtx));
  CUkernel k2 = nullptr;
  cuLibraryGetKernel(&k2, l2, "add_u32");
  CUfunction f2 = nullptr;
  cuKernelGetFunction(&f2, k2);
  R(cuCtxDestroy(c2));
  const char* name = nullptr;
  R(cuFuncGetName(&name, fb));
  R(cuFuncGetName(&name, f2));
  int v = 0;
  R(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, fb));
  R(cuCtxSetCurrent(b.ctx));
  unsigned n = 0;
  R(cuLibraryGetKernelCount(&n, l2));
  Say("library loaded in the destroyed context: kernel count %u", n);
  CUfunction f3 = nullptr;
  R(cuKernelGetFunction(&f3, k2));
  unsigned add = 2;
  void* args[] = {&b.buf, &add};
  R(cuLaunchKernel(f3, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  R(cuCtxSynchronize());
  Say("value = %u", b.Read());
  R(cuLibraryUnload(l2));
  // Primary context reset: the library's function in it is re-created.
  R(cuDevicePrimaryCtxRelease(b.dev));
  R(cuDevicePrimaryCtxReset(b.dev));
  R(cuFuncGetName(&name, fa));
  CUcontext p = nullptr;
  R(cuDevicePrimaryCtxRetain(&p, b.dev));
  cuCtxSetCurrent(p);
  CUfunction fa2 = nullptr;
  R(cuKernelGetFunction(&fa2, b.add));
  R(cuFuncGetName(&name, fa2));
  Say("name after reset = %s", name ? name : "(null)");
  CUdeviceptr buf = 0;
  cuMemAlloc(&buf, 64);
  cuMemsetD8(buf, 0, 64);
  void* args2[] = {&buf, &add};
  R(cuLaunchKernel(reinterpret_cast<CUfunction>(b.add), 1, 1, 1, 1, 1, 1, 0, nullptr, args2,
                   nullptr));
  R(cuCtxSynchronize());
  unsigned x = 0;
  cuMemcpyDtoH(&x, buf, 4);
  Say("value after reset = %u", x);
  R(cuLibraryUnload(b.lib));
  return 0;
}

// The occupancy kernels' library and functions.
struct Occ {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUlibrary lib = nullptr;
  std::vector<CUfunction> fs;
  std::vector<CUkernel> ks;
  bool Init() {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    std::string ptx = OccPtx();
    CUresult r = LoadLib(&lib, ptx.c_str());
    if (r != CUDA_SUCCESS) {
      Say("setup: occupancy library = %s", Name(r));
      return false;
    }
    for (const OccSpec& o : kOcc) {
      CUkernel k = nullptr;
      CUfunction f = nullptr;
      cuLibraryGetKernel(&k, lib, OccName(o).c_str());
      cuKernelGetFunction(&f, k);
      ks.push_back(k);
      fs.push_back(f);
    }
    return true;
  }
};

const int kBlockSizes[] = {1, 32, 33, 64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 1024};

// occ: the occupancy of kernels of known registers and shared memory.
int CaseOcc() {
  Occ o;
  if (!o.Init()) return 1;
  const struct {
    const char* name;
    CUdevice_attribute a;
  } dattrs[] = {
      {"MULTIPROCESSOR_COUNT", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {"MAX_REGISTERS_PER_MULTIPROCESSOR", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
      {"MAX_REGISTERS_PER_BLOCK", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {"MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
      {"MAX_SHARED_MEMORY_PER_BLOCK", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
      {"MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {"RESERVED_SHARED_MEMORY_PER_BLOCK", CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK},
      {"MAX_THREADS_PER_MULTIPROCESSOR", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
      {"MAX_BLOCKS_PER_MULTIPROCESSOR", CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR},
      {"WARP_SIZE", CU_DEVICE_ATTRIBUTE_WARP_SIZE},
  };
  for (const auto& d : dattrs) {
    int v = -1;
    cuDeviceGetAttribute(&v, d.a, o.dev);
    Say("device %s = %d", d.name, v);
  }
  for (size_t i = 0; i < o.fs.size(); ++i) {
    std::string name = OccName(kOcc[i]);
    int regs = -1, shared = -1, local = -1, maxt = -1, dyn = -1;
    cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, o.fs[i]);
    cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, o.fs[i]);
    cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, o.fs[i]);
    cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, o.fs[i]);
    cuFuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, o.fs[i]);
    Say("%s: NUM_REGS %d SHARED_SIZE_BYTES %d MAX_THREADS_PER_BLOCK %d "
        "MAX_DYNAMIC_SHARED_SIZE_BYTES %d",
        name.c_str(), regs, shared, maxt, dyn);
    Say("%s: LOCAL_SIZE_BYTES (spills) nonzero = %s", name.c_str(), YesNo(local > 0));
    std::string row;
    for (int bs : kBlockSizes) {
      int n = -1;
      CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, o.fs[i], bs, 0);
      row += " " + std::to_string(bs) + ":" +
             (r == CUDA_SUCCESS ? std::to_string(n) : std::string(Name(r)));
    }
    Say("%s: blocks/SM by block size (no dynamic shared):%s", name.c_str(), row.c_str());
    row.clear();
    for (size_t dyn_bytes : {size_t{1}, size_t{1024}, size_t{8192}, size_t{20000},
                             size_t{48 * 1024}, size_t{48 * 1024 + 1}, size_t{100000}}) {
      int n = -1;
      CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, o.fs[i], 128, dyn_bytes);
      row += " " + std::to_string(dyn_bytes) + ":" +
             (r == CUDA_SUCCESS ? std::to_string(n) : std::string(Name(r)));
    }
    Say("%s: blocks/SM of 128 threads by dynamic shared bytes:%s", name.c_str(), row.c_str());
    int mg = -1, bs = -1;
    CUresult r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, o.fs[i], nullptr, 0, 0);
    Say("%s: potential block size = %s min grid %d block %d", name.c_str(), Name(r), mg, bs);
    r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, o.fs[i], nullptr, 0, 200);
    Say("%s: potential block size (limit 200) = %s min grid %d block %d", name.c_str(), Name(r),
        mg, bs);
    r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, o.fs[i], nullptr, 16384, 0);
    Say("%s: potential block size (16384 dynamic) = %s min grid %d block %d", name.c_str(),
        Name(r), mg, bs);
    r = cuOccupancyMaxPotentialBlockSize(
        &mg, &bs, o.fs[i], [](int b) -> size_t { return static_cast<size_t>(b) * 40; }, 0, 0);
    Say("%s: potential block size (40 bytes a thread) = %s min grid %d block %d", name.c_str(),
        Name(r), mg, bs);
    row.clear();
    for (int nb : {1, 2, 3, 4, 7, 8, 16, 32, 33}) {
      size_t d = 0;
      r = cuOccupancyAvailableDynamicSMemPerBlock(&d, o.fs[i], nb, 128);
      row += " " + std::to_string(nb) + ":" +
             (r == CUDA_SUCCESS ? std::to_string(d) : std::string(Name(r)));
    }
    Say("%s: available dynamic shared per block of 128 by blocks/SM:%s", name.c_str(),
        row.c_str());
    row.clear();
    for (int bsz : {32, 256, 1024}) {
      size_t d = 0;
      r = cuOccupancyAvailableDynamicSMemPerBlock(&d, o.fs[i], 1, bsz);
      row += " " + std::to_string(bsz) + ":" +
             (r == CUDA_SUCCESS ? std::to_string(d) : std::string(Name(r)));
    }
    Say("%s: available dynamic shared, 1 block, by block size:%s", name.c_str(), row.c_str());
  }
  // Flags and a CUkernel given as the function.
  int a = -1, c = -1;
  R(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&a, o.fs[0], 256, 0,
                                                          CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
  cuOccupancyMaxActiveBlocksPerMultiprocessor(&c, o.fs[0], 256, 0);
  Say("DISABLE_CACHING_OVERRIDE: %d, default %d", a, c);
  CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&a, o.fs[0], 256, 0, 2);
  Say("flags 2 = %s", Name(r));
  int mg = -1, bs = -1;
  r = cuOccupancyMaxPotentialBlockSizeWithFlags(&mg, &bs, o.fs[1], nullptr, 0, 0,
                                                CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE);
  Say("potential with DISABLE_CACHING_OVERRIDE = %s %d %d", Name(r), mg, bs);
  r = cuOccupancyMaxPotentialBlockSizeWithFlags(&mg, &bs, o.fs[1], nullptr, 0, 0, 2);
  Say("potential with flags 2 = %s", Name(r));
  a = -1;
  r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&a, reinterpret_cast<CUfunction>(o.ks[1]), 256,
                                                  0);
  Say("kernel given as function = %s %d", Name(r), a);
  return 0;
}

// occattr: function attributes that change occupancy.
int CaseOccAttr() {
  Occ o;
  if (!o.Init()) return 1;
  CUfunction f = o.fs[4];  // occ_32_4096
  auto row = [&](const char* what) {
    std::string s;
    for (int bs : {32, 128, 256}) {
      int n = -1;
      CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, bs, 0);
      s += " " + std::to_string(bs) + ":" + (r == CUDA_SUCCESS ? std::to_string(n) : Name(r));
    }
    size_t d = 0;
    CUresult r = cuOccupancyAvailableDynamicSMemPerBlock(&d, f, 2, 128);
    Say("%s: blocks/SM%s; dynamic for 2 blocks of 128 = %s %zu", what, s.c_str(), Name(r), d);
  };
  row("default");
  for (int carve : {0, 10, 25, 50, 75, 100, -1}) {
    CUresult r = cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carve);
    std::string w = "carveout " + std::to_string(carve) + " (" + Name(r) + ")";
    row(w.c_str());
  }
  R(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
  row("cache config PREFER_L1");
  R(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED));
  row("cache config PREFER_SHARED");
  R(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_NONE));
  // Dynamic shared memory beyond the default limit needs the opt-in.
  CUfunction g = o.fs[0];
  int n = -1;
  CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, g, 128, 100000);
  Say("100000 dynamic before opt-in = %s %d", Name(r), n);
  R(cuFuncSetAttribute(g, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
  r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, g, 128, 100000);
  Say("100000 dynamic after opt-in = %s %d", Name(r), n);
  r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, g, 128, 100001);
  Say("100001 dynamic after opt-in of 100000 = %s %d", Name(r), n);
  size_t d = 0;
  r = cuOccupancyAvailableDynamicSMemPerBlock(&d, g, 1, 128);
  Say("available dynamic after opt-in, 1 block = %s %zu", Name(r), d);
  int mg = -1, bs = -1;
  r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, g, nullptr, 100000, 0);
  Say("potential with 100000 dynamic = %s %d %d", Name(r), mg, bs);
  // The kernel-level attribute, then a fresh function.
  R(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 150000, o.ks[1], o.dev));
  r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, o.fs[1], 128, 150000);
  Say("150000 dynamic after kernel opt-in = %s %d", Name(r), n);
  // .reqntid / .maxntid kernels.
  CUlibrary l = nullptr;
  r = LoadLib(&l,
              ".version 8.0\n.target sm_90\n.address_size 64\n"
              ".visible .entry maxt() .maxntid 256 { ret; }\n"
              ".visible .entry reqt() .reqntid 64 { ret; }\n"
              ".visible .entry minb() .maxntid 128 .minnctapersm 4 { ret; }\n");
  Say("ntid library = %s", Name(r));
  for (const char* kn : {"maxt", "reqt", "minb"}) {
    CUkernel k = nullptr;
    CUfunction kf = nullptr;
    cuLibraryGetKernel(&k, l, kn);
    cuKernelGetFunction(&kf, k);
    int mt = -1;
    cuFuncGetAttribute(&mt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kf);
    std::string s;
    for (int b : {32, 64, 128, 256, 512}) {
      int m = -1;
      CUresult rr = cuOccupancyMaxActiveBlocksPerMultiprocessor(&m, kf, b, 0);
      s += " " + std::to_string(b) + ":" + (rr == CUDA_SUCCESS ? std::to_string(m) : Name(rr));
    }
    r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, kf, nullptr, 0, 0);
    Say("%s: MAX_THREADS_PER_BLOCK %d; blocks/SM%s; potential %s %d %d", kn, mt, s.c_str(),
        Name(r), mg, bs);
  }
  return 0;
}

// occbad: invalid occupancy queries.
int CaseOccBad() {
  Occ o;
  if (!o.Init()) return 1;
  CUfunction f = o.fs[0];
  auto blocks = [&](const char* what, int bs, size_t dyn) {
    int n = 77;
    CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, bs, dyn);
    Say("blocks %s = %s (out %d)", what, Name(r), n);
  };
  blocks("block 0", 0, 0);
  blocks("block -1", -1, 0);
  blocks("block 1025", 1025, 0);
  blocks("block 4096", 4096, 0);
  blocks("dynamic 1 GiB", 128, size_t{1} << 30);
  blocks("dynamic 232448", 32, 232448);
  R(cuOccupancyMaxActiveBlocksPerMultiprocessor(nullptr, f, 128, 0));
  int n = 77;
  R(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, 128, 0, 0xffffffffu));
  int mg = 77, bs = 77;
  CUresult r = cuOccupancyMaxPotentialBlockSize(nullptr, &bs, f, nullptr, 0, 0);
  Say("potential null minGrid = %s", Name(r));
  r = cuOccupancyMaxPotentialBlockSize(&mg, nullptr, f, nullptr, 0, 0);
  Say("potential null blockSize = %s", Name(r));
  mg = bs = 77;
  r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, f, nullptr, 0, -5);
  Say("potential limit -5 = %s %d %d", Name(r), mg, bs);
  mg = bs = 77;
  r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, f, nullptr, 0, 4096);
  Say("potential limit 4096 = %s %d %d", Name(r), mg, bs);
  mg = bs = 77;
  r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, f, nullptr, size_t{1} << 30, 0);
  Say("potential 1 GiB dynamic = %s %d %d", Name(r), mg, bs);
  mg = bs = 77;
  r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, nullptr, nullptr, 0, 0);
  Say("potential null function = %s (outs %d %d)", Name(r), mg, bs);
  size_t d = 77;
  r = cuOccupancyAvailableDynamicSMemPerBlock(nullptr, f, 1, 128);
  Say("available null out = %s", Name(r));
  for (auto nb_bs : {std::pair<int, int>{0, 128}, {-1, 128}, {1, 0}, {1, -1}, {1, 1025},
                     {64, 1024}, {33, 32}, {32, 32}, {3, 1024}}) {
    d = 77;
    r = cuOccupancyAvailableDynamicSMemPerBlock(&d, f, nb_bs.first, nb_bs.second);
    Say("available %d blocks of %d = %s (out %zu)", nb_bs.first, nb_bs.second, Name(r), d);
  }
  // No context current.
  cuCtxSetCurrent(nullptr);
  n = -1;
  r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 128, 0);
  Say("no current context = %s %d", Name(r), n);
  r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, f, nullptr, 0, 0);
  Say("potential, no current context = %s %d %d", Name(r), mg, bs);
  return 0;
}

// cluster: cuOccupancyMaxPotentialClusterSize / cuOccupancyMaxActiveClusters.
int CaseCluster() {
  Occ o;
  if (!o.Init()) return 1;
  auto config = [](unsigned gx, unsigned bx, size_t shm) {
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = gx;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = bx;
    c.blockDimY = c.blockDimZ = 1;
    c.sharedMemBytes = static_cast<unsigned>(shm);
    return c;
  };
  for (size_t i = 0; i < o.fs.size(); ++i) {
    std::string name = OccName(kOcc[i]);
    std::string row;
    for (unsigned bx : {32u, 128u, 256u, 1024u}) {
      CUlaunchConfig c = config(64, bx, 0);
      int cs = -1;
      CUresult r = cuOccupancyMaxPotentialClusterSize(&cs, o.fs[i], &c);
      row += " " + std::to_string(bx) + ":" + (r == CUDA_SUCCESS ? std::to_string(cs) : Name(r));
    }
    Say("%s: max potential cluster size by block size:%s", name.c_str(), row.c_str());
    row.clear();
    for (unsigned cx : {1u, 2u, 4u, 8u, 16u}) {
      CUlaunchConfig c = config(64, 128, 0);
      CUlaunchAttribute at;
      memset(&at, 0, sizeof at);
      at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      at.value.clusterDim.x = cx;
      at.value.clusterDim.y = at.value.clusterDim.z = 1;
      c.attrs = &at;
      c.numAttrs = 1;
      int nc = -1;
      CUresult r = cuOccupancyMaxActiveClusters(&nc, o.fs[i], &c);
      row += " " + std::to_string(cx) + ":" + (r == CUDA_SUCCESS ? std::to_string(nc) : Name(r));
    }
    Say("%s: max active clusters (block 128) by cluster size:%s", name.c_str(), row.c_str());
  }
  CUfunction f = o.fs[0];
  // Non-portable sizes.
  R(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
  CUlaunchConfig c = config(64, 128, 0);
  int cs = -1;
  R(cuOccupancyMaxPotentialClusterSize(&cs, f, &c));
  Say("non-portable allowed: potential cluster size %d", cs);
  CUlaunchAttribute at;
  memset(&at, 0, sizeof at);
  at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  at.value.clusterDim.x = 16;
  at.value.clusterDim.y = at.value.clusterDim.z = 1;
  c.attrs = &at;
  c.numAttrs = 1;
  int nc = -1;
  R(cuOccupancyMaxActiveClusters(&nc, f, &c));
  Say("non-portable allowed: active clusters of 16 = %d", nc);
  at.value.clusterDim.x = 32;
  nc = -1;
  CUresult r = cuOccupancyMaxActiveClusters(&nc, f, &c);
  Say("clusters of 32 = %s %d", Name(r), nc);
  at.value.clusterDim.x = 3;
  nc = -1;
  r = cuOccupancyMaxActiveClusters(&nc, f, &c);
  Say("clusters of 3 (grid 64) = %s %d", Name(r), nc);
  at.value.clusterDim.x = 2;
  at.value.clusterDim.y = 2;
  c.gridDimY = 2;
  nc = -1;
  r = cuOccupancyMaxActiveClusters(&nc, f, &c);
  Say("clusters of 2x2 = %s %d", Name(r), nc);
  // A cluster dimension on the potential size query.
  c = config(64, 128, 0);
  at.value.clusterDim.x = 4;
  at.value.clusterDim.y = 1;
  c.attrs = &at;
  c.numAttrs = 1;
  cs = -1;
  r = cuOccupancyMaxPotentialClusterSize(&cs, f, &c);
  Say("potential size with a cluster dimension given = %s %d", Name(r), cs);
  // Dynamic shared memory.
  c = config(64, 128, 40000);
  cs = -1;
  r = cuOccupancyMaxPotentialClusterSize(&cs, f, &c);
  Say("potential, 40000 dynamic = %s %d", Name(r), cs);
  // A required cluster size set on the function.
  CUfunction g = o.fs[1];
  r = cuFuncSetAttribute(g, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4);
  Say("set REQUIRED_CLUSTER_WIDTH 4 = %s", Name(r));
  c = config(64, 128, 0);
  cs = -1;
  r = cuOccupancyMaxPotentialClusterSize(&cs, g, &c);
  Say("potential with required width 4 = %s %d", Name(r), cs);
  nc = -1;
  r = cuOccupancyMaxActiveClusters(&nc, g, &c);
  Say("active clusters with required width 4, no attribute = %s %d", Name(r), nc);
  // No cluster attribute at all.
  c = config(64, 128, 0);
  nc = -1;
  r = cuOccupancyMaxActiveClusters(&nc, o.fs[2], &c);
  Say("active clusters, no cluster attribute = %s %d", Name(r), nc);
  // Invalid.
  R(cuOccupancyMaxPotentialClusterSize(nullptr, f, &c));
  R(cuOccupancyMaxPotentialClusterSize(&cs, f, nullptr));
  R(cuOccupancyMaxPotentialClusterSize(&cs, nullptr, &c));
  R(cuOccupancyMaxActiveClusters(nullptr, f, &c));
  R(cuOccupancyMaxActiveClusters(&nc, f, nullptr));
  R(cuOccupancyMaxActiveClusters(&nc, nullptr, &c));
  c = config(64, 0, 0);
  R(cuOccupancyMaxPotentialClusterSize(&cs, f, &c));
  c = config(64, 2048, 0);
  R(cuOccupancyMaxPotentialClusterSize(&cs, f, &c));
  c = config(0, 128, 0);
  r = cuOccupancyMaxPotentialClusterSize(&cs, f, &c);
  Say("potential, grid 0 = %s %d", Name(r), cs);
  c = config(64, 128, 0);
  r = cuOccupancyMaxPotentialClusterSize(&cs, reinterpret_cast<CUfunction>(o.ks[0]), &c);
  Say("potential, kernel given as function = %s %d", Name(r), cs);
  return 0;
}

// bad:<kind>:<function>: one call with a handle the driver did not give out (wild: a heap
// block of zeros), one that is stale (its library unloaded), null, or of the other kind
// (swapped: a CUmodule for a CUlibrary, a CUfunction for a CUkernel, a CUkernel for a
// CUfunction).
const char* const kBadFns[] = {
    "LibraryUnload",       "LibraryGetKernel",     "LibraryGetKernelCount",
    "LibraryEnumerateKernels", "LibraryGetModule", "LibraryGetGlobal",
    "LibraryGetManaged",   "LibraryGetUnifiedFunction", "KernelGetFunction",
    "KernelGetLibrary",    "KernelGetName",        "KernelGetAttribute",
    "KernelSetAttribute",  "KernelSetCacheConfig", "KernelGetParamInfo",
    "FuncGetName",         "FuncGetParamInfo",     "FuncGetModule",
    "FuncIsLoaded",        "FuncLoad",             "FuncGetAttribute",
    "FuncSetAttribute",    "LaunchKernel",         "OccupancyMaxActiveBlocks",
    "OccupancyMaxPotentialBlockSize", "OccupancyAvailableDynamicSMem",
    "OccupancyMaxPotentialClusterSize", "OccupancyMaxActiveClusters"};
const char* const kBadKinds[] = {"null", "wild", "stale", "swapped"};

int CaseBad(const std::string& kind, const std::string& fn) {
  Base b;
  if (!b.Init()) return 1;
  CUlibrary lib = nullptr;
  CUkernel k = nullptr;
  CUfunction f = nullptr;
  if (kind == "null") {
  } else if (kind == "wild") {
    lib = Wild<CUlibrary>();
    k = Wild<CUkernel>();
    f = Wild<CUfunction>();
  } else if (kind == "stale") {
    CUlibrary l = nullptr;
    LoadLib(&l, kPtx);
    cuLibraryGetKernel(&k, l, "add_u32");
    cuKernelGetFunction(&f, k);
    cuLibraryUnload(l);
    lib = l;
  } else if (kind == "swapped") {
    CUmodule m = nullptr;
    cuLibraryGetModule(&m, b.lib);
    lib = reinterpret_cast<CUlibrary>(m);
    CUfunction kf = nullptr;
    cuKernelGetFunction(&kf, b.add);
    k = reinterpret_cast<CUkernel>(kf);
    f = reinterpret_cast<CUfunction>(b.add);
  } else {
    return 3;
  }
  CUresult r = CUDA_ERROR_UNKNOWN;
  std::string out;
  char t[160];
  if (fn == "LibraryUnload") {
    r = cuLibraryUnload(lib);
  } else if (fn == "LibraryGetKernel") {
    CUkernel o = Wild<CUkernel>();
    r = cuLibraryGetKernel(&o, lib, "add_u32");
    out = o == Wild<CUkernel>() ? "out unchanged" : o == nullptr ? "out null" : "out set";
  } else if (fn == "LibraryGetKernelCount") {
    unsigned n = 77;
    r = cuLibraryGetKernelCount(&n, lib);
    snprintf(t, sizeof t, "count %u", n);
    out = t;
  } else if (fn == "LibraryEnumerateKernels") {
    CUkernel ks[5] = {};
    r = cuLibraryEnumerateKernels(ks, 5, lib);
  } else if (fn == "LibraryGetModule") {
    CUmodule m = Wild<CUmodule>();
    r = cuLibraryGetModule(&m, lib);
    out = m == Wild<CUmodule>() ? "out unchanged" : m == nullptr ? "out null" : "out set";
  } else if (fn == "LibraryGetGlobal") {
    CUdeviceptr p = 77;
    size_t n = 77;
    r = cuLibraryGetGlobal(&p, &n, lib, "counter");
    snprintf(t, sizeof t, "outs unchanged %s", YesNo(p == 77 && n == 77));
    out = t;
  } else if (fn == "LibraryGetManaged") {
    CUdeviceptr p = 77;
    size_t n = 77;
    r = cuLibraryGetManaged(&p, &n, lib, "counter");
  } else if (fn == "LibraryGetUnifiedFunction") {
    void* p = nullptr;
    r = cuLibraryGetUnifiedFunction(&p, lib, "add_u32");
  } else if (fn == "KernelGetFunction") {
    CUfunction o = Wild<CUfunction>();
    r = cuKernelGetFunction(&o, k);
    out = o == Wild<CUfunction>() ? "out unchanged" : o == nullptr ? "out null" : "out set";
  } else if (fn == "KernelGetLibrary") {
    CUlibrary o = Wild<CUlibrary>();
    r = cuKernelGetLibrary(&o, k);
    out = o == Wild<CUlibrary>() ? "out unchanged" : o == nullptr ? "out null" : "out set";
  } else if (fn == "KernelGetName") {
    const char* n = "untouched";
    r = cuKernelGetName(&n, k);
    out = n == nullptr ? "out null" : strcmp(n, "untouched") == 0 ? "out unchanged" : n;
  } else if (fn == "KernelGetAttribute") {
    int v = 77;
    r = cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, b.dev);
    snprintf(t, sizeof t, "out %d", v);
    out = t;
  } else if (fn == "KernelSetAttribute") {
    r = cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, k, b.dev);
  } else if (fn == "KernelSetCacheConfig") {
    r = cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, b.dev);
  } else if (fn == "KernelGetParamInfo") {
    size_t o = 77, s = 77;
    r = cuKernelGetParamInfo(k, 0, &o, &s);
    snprintf(t, sizeof t, "offset %zu size %zu", o, s);
    out = t;
  } else if (fn == "FuncGetName") {
    const char* n = "untouched";
    r = cuFuncGetName(&n, f);
    out = n == nullptr ? "out null" : strcmp(n, "untouched") == 0 ? "out unchanged" : n;
  } else if (fn == "FuncGetParamInfo") {
    size_t o = 77, s = 77;
    r = cuFuncGetParamInfo(f, 0, &o, &s);
    snprintf(t, sizeof t, "offset %zu size %zu", o, s);
    out = t;
  } else if (fn == "FuncGetModule") {
    CUmodule m = Wild<CUmodule>();
    r = cuFuncGetModule(&m, f);
    out = m == Wild<CUmodule>() ? "out unchanged" : m == nullptr ? "out null" : "out set";
  } else if (fn == "FuncIsLoaded") {
    CUfunctionLoadingState s = CU_FUNCTION_LOADING_STATE_MAX;
    r = cuFuncIsLoaded(&s, f);
    snprintf(t, sizeof t, "state %d", static_cast<int>(s));
    out = t;
  } else if (fn == "FuncLoad") {
    r = cuFuncLoad(f);
  } else if (fn == "FuncGetAttribute") {
    int v = 77;
    r = cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    snprintf(t, sizeof t, "out %d", v);
    out = t;
  } else if (fn == "FuncSetAttribute") {
    r = cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024);
  } else if (fn == "LaunchKernel") {
    unsigned add = 1;
    void* args[] = {&b.buf, &add};
    r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
    CUresult s = cuCtxSynchronize();
    snprintf(t, sizeof t, "sync %s value %u", Name(s), b.Read());
    out = t;
  } else if (fn == "OccupancyMaxActiveBlocks") {
    int n = 77;
    r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 128, 0);
    snprintf(t, sizeof t, "out %d", n);
    out = t;
  } else if (fn == "OccupancyMaxPotentialBlockSize") {
    int mg = 77, bs = 77;
    r = cuOccupancyMaxPotentialBlockSize(&mg, &bs, f, nullptr, 0, 0);
    snprintf(t, sizeof t, "outs %d %d", mg, bs);
    out = t;
  } else if (fn == "OccupancyAvailableDynamicSMem") {
    size_t d = 77;
    r = cuOccupancyAvailableDynamicSMemPerBlock(&d, f, 1, 128);
    snprintf(t, sizeof t, "out %zu", d);
    out = t;
  } else if (fn == "OccupancyMaxPotentialClusterSize" || fn == "OccupancyMaxActiveClusters") {
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = 64;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 128;
    c.blockDimY = c.blockDimZ = 1;
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.clusterDim.x = 2;
    at.value.clusterDim.y = at.value.clusterDim.z = 1;
    int n = 77;
    if (fn == "OccupancyMaxActiveClusters") {
      c.attrs = &at;
      c.numAttrs = 1;
      r = cuOccupancyMaxActiveClusters(&n, f, &c);
    } else {
      r = cuOccupancyMaxPotentialClusterSize(&n, f, &c);
    }
    snprintf(t, sizeof t, "out %d", n);
    out = t;
  } else {
    return 3;
  }
  Say("%s(%s) = %s%s%s", fn.c_str(), kind.c_str(), Name(r), out.empty() ? "" : "; ",
      out.c_str());
  // The context still works.
  CUresult s = cuCtxSynchronize();
  unsigned add = 1;
  void* args[] = {&b.buf, &add};
  cuMemsetD8(b.buf, 0, 4);
  CUresult l = cuLaunchKernel(reinterpret_cast<CUfunction>(b.add), 1, 1, 1, 1, 1, 1, 0, nullptr,
                              args, nullptr);
  CUresult s2 = cuCtxSynchronize();
  Say("after: sync %s, launch %s, sync %s, value %u", Name(s), Name(l), Name(s2), b.Read());
  return 0;
}

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {"noinit", "noctx",  "load",  "fromfile", "kernels",
                                    "names",  "params", "attrs", "setattr",  "launch",
                                    "funcload", "module", "globals", "unload", "inflight",
                                    "ctx",    "occ",    "occattr", "occbad", "cluster"};
  for (const char* k : kBadKinds)
    for (const char* f : kBadFns) cases.push_back(std::string("bad:") + k + ":" + f);
  return cases;
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  auto part = [&](int i) {
    size_t a = 0;
    for (int k = 0; k < i; ++k) a = c.find(':', a) + 1;
    size_t e = c.find(':', a);
    return c.substr(a, e == std::string::npos ? std::string::npos : e - a);
  };
  if (c == "noinit") return CaseNoInit();
  if (c == "noctx") return CaseNoCtx();
  if (c == "load") return CaseLoad();
  if (c == "fromfile") return CaseFromFile();
  if (c == "kernels") return CaseKernels();
  if (c == "names") return CaseNames();
  if (c == "params") return CaseParams();
  if (c == "attrs") return CaseAttrs();
  if (c == "setattr") return CaseSetAttr();
  if (c == "launch") return CaseLaunch();
  if (c == "funcload") return CaseFuncLoad();
  if (c == "module") return CaseModule();
  if (c == "globals") return CaseGlobals();
  if (c == "unload") return CaseUnload();
  if (c == "inflight") return CaseInflight();
  if (c == "ctx") return CaseCtx();
  if (c == "occ") return CaseOcc();
  if (c == "occattr") return CaseOccAttr();
  if (c == "occbad") return CaseOccBad();
  if (c == "cluster") return CaseCluster();
  if (c.rfind("bad:", 0) == 0) return CaseBad(part(1), part(2));
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
  std::string dir = "/tmp/library_probe_" + std::to_string(getpid());
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
    fprintf(stderr, "usage: library_probe all [jobs] | library_probe list | library_probe <case>\n");
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
