// Legacy-area probe for cuhal: how the real driver answers the JIT linker (cuLinkCreate_v2,
// cuLinkAddData_v2, cuLinkAddFile_v2, cuLinkComplete, cuLinkDestroy), cuModuleLoad (a file path)
// and cuModuleLoadFatBinary, the tensor-map encoders (cuTensorMapEncodeTiled, ...Im2col,
// ...Im2colWide, cuTensorMapReplaceAddress: each documented validity rule broken once, and the
// 128 bytes of valid encodings printed for a fixed, made-up global address so that the layout can
// be read off), surface objects (cuSurfObjectCreate/Destroy/GetResourceDesc),
// cuLaunchCooperativeKernelMultiDevice, the deprecated execution-control family
// (cuFuncSetBlockShape, cuFuncSetSharedSize, cuFuncSetSharedMemConfig, cuParamSet*, cuLaunch,
// cuLaunchGrid[Async]),
// texture and surface references (cuTexRef*, cuSurfRef*, cuModuleGetTexRef/SurfRef),
// cuMipmappedArrayGetMemoryRequirements and cuMemMapArrayAsync; valid and invalid, before cuInit,
// without a context and with garbage handles. A plain driver-API program (cuda.h, -lcuda), like
// misc_probe.cc; see README.md. The kernels are PTX strings (compiled by the driver's JIT).
//
//   legacy_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                             `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   legacy_probe crashes [jobs]  the calls that crashed the H100's driver, a case each
//   legacy_probe list         the cases
//   legacy_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address or handle is printed, only relations (the
// tensor maps' bytes are printed only for a made-up global address, the same in every run). The
// deprecated entry points, cuTensorMapEncodeIm2colWide and cuLaunchCooperativeKernelMultiDevice
// are resolved with dlsym (a missing one answers "CUresult(999)"), so the probe loads anywhere.
//
//   g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include ci/gpu-probes/legacy_probe.cc
//       -o /tmp/legacy_probe -lcuda -ldl -lpthread && /tmp/legacy_probe all 8
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

// Prints "<expr> = <CUresult>" (without the "dl::" of entry points resolved with dlsym) and
// returns the result.
#define R(expr) Res(#expr, (expr))
CUresult Res(const char* what, CUresult r) {
  std::string w = what;
  for (size_t p; (p = w.find("dl::")) != std::string::npos;) w.erase(p, 4);
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

// Entry points that a libcuda may lack, resolved with dlsym; a missing one is a stub answering
// CUresult(999).
template <typename F>
struct Stub;
template <typename... A>
struct Stub<CUresult (*)(A...)> {
  static CUresult Fn(A...) { return static_cast<CUresult>(999); }
};
#define STR2(x) #x
#define STR(x) STR2(x)
#define DL_DECL(name) decltype(&::name) name = nullptr;
#define DL_LIST(X)                                                                              \
  X(cuModuleGetTexRef) X(cuModuleGetSurfRef) X(cuFuncSetBlockShape) X(cuFuncSetSharedSize)      \
  X(cuFuncSetSharedMemConfig) X(cuParamSetSize) X(cuParamSeti) X(cuParamSetf) X(cuParamSetv)    \
  X(cuParamSetTexRef) X(cuLaunch) X(cuLaunchGrid) X(cuLaunchGridAsync)                          \
  X(cuLaunchCooperativeKernelMultiDevice) X(cuTexRefCreate) X(cuTexRefDestroy)                  \
  X(cuTexRefSetArray) X(cuTexRefSetMipmappedArray) X(cuTexRefSetAddress)                        \
  X(cuTexRefSetAddress2D) X(cuTexRefSetFormat) X(cuTexRefSetAddressMode)                        \
  X(cuTexRefSetFilterMode) X(cuTexRefSetMipmapFilterMode) X(cuTexRefSetMipmapLevelBias)         \
  X(cuTexRefSetMipmapLevelClamp) X(cuTexRefSetMaxAnisotropy) X(cuTexRefSetBorderColor)          \
  X(cuTexRefSetFlags) X(cuTexRefGetAddress) X(cuTexRefGetArray) X(cuTexRefGetMipmappedArray)    \
  X(cuTexRefGetAddressMode) X(cuTexRefGetFilterMode) X(cuTexRefGetFormat)                       \
  X(cuTexRefGetMipmapFilterMode) X(cuTexRefGetMipmapLevelBias) X(cuTexRefGetMipmapLevelClamp)   \
  X(cuTexRefGetMaxAnisotropy) X(cuTexRefGetBorderColor) X(cuTexRefGetFlags)                     \
  X(cuSurfRefGetArray) X(cuSurfRefSetArray) X(cuTensorMapEncodeIm2colWide)
namespace dl {
DL_LIST(DL_DECL)
}  // namespace dl
#define DL_RESOLVE(name)                                                        \
  {                                                                             \
    void* p = dlsym(RTLD_DEFAULT, STR(name));                                   \
    dl::name = p != nullptr ? reinterpret_cast<decltype(dl::name)>(p)           \
                            : &Stub<decltype(dl::name)>::Fn;                    \
    if (p == nullptr) printf("note: %s is not exported\n", STR(name));          \
  }
void ResolveAll() { DL_LIST(DL_RESOLVE) }

// The main module. add_u32(u32* p, u32 v): *p += v (one thread). count(u32* p): atomically adds
// one per thread. store_f32(f32* p, f32 v): *p = v. dims(u32* p): thread 0 of block 0 writes
// ntid.x/y/z, nctaid.x/y/z and the dynamic shared size.
const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
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
.visible .entry count(.param .u64 p) {
  .reg .u64 %a;
  .reg .u32 %x;
  ld.param.u64 %a, [p];
  cvta.to.global.u64 %a, %a;
  atom.global.add.u32 %x, [%a], 1;
  ret;
}
.visible .entry store_f32(.param .u64 p, .param .f32 v) {
  .reg .u64 %a;
  .reg .f32 %f;
  ld.param.u64 %a, [p];
  ld.param.f32 %f, [v];
  cvta.to.global.u64 %a, %a;
  st.global.f32 [%a], %f;
  ret;
}
.visible .entry dims(.param .u64 p) {
  .reg .u64 %a;
  .reg .u32 %x, %t;
  .reg .pred %q;
  ld.param.u64 %a, [p];
  cvta.to.global.u64 %a, %a;
  mov.u32 %t, %tid.x;
  mov.u32 %x, %ctaid.x;
  or.b32 %t, %t, %x;
  setp.ne.u32 %q, %t, 0;
  @%q bra DONE;
  mov.u32 %x, %ntid.x;
  st.global.u32 [%a], %x;
  mov.u32 %x, %ntid.y;
  st.global.u32 [%a+4], %x;
  mov.u32 %x, %ntid.z;
  st.global.u32 [%a+8], %x;
  mov.u32 %x, %nctaid.x;
  st.global.u32 [%a+12], %x;
  mov.u32 %x, %nctaid.y;
  st.global.u32 [%a+16], %x;
  mov.u32 %x, %nctaid.z;
  st.global.u32 [%a+20], %x;
  mov.u32 %x, %dynamic_smem_size;
  st.global.u32 [%a+24], %x;
DONE:
  ret;
}
)";

// Separate compilation: kCaller calls an external function that kCallee defines.
const char kCaller[] = R"(
.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 r) triple(.param .b32 x);
.visible .entry caller(.param .u64 p) {
  .reg .u64 %a;
  .reg .b32 %x, %y;
  ld.param.u64 %a, [p];
  cvta.to.global.u64 %a, %a;
  ld.global.u32 %x, [%a];
  {
    .param .b32 px;
    .param .b32 pr;
    st.param.b32 [px], %x;
    call.uni (pr), triple, (px);
    ld.param.b32 %y, [pr];
  }
  st.global.u32 [%a], %y;
  ret;
}
)";
const char kCallee[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) triple(.param .b32 x) {
  .reg .b32 %v;
  ld.param.b32 %v, [x];
  mul.lo.u32 %v, %v, 3;
  st.param.b32 [r], %v;
  ret;
}
)";

// A module with a texture reference and a surface reference (and a kernel).
const char kRefPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.global .texref tex0;
.global .surfref surf0;
.visible .entry nothing() { ret; }
)";

// A surface-object kernel: reads the 32-bit texel (x, y) of surface `s`, adds one, writes it back.
const char kSurfPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry bump(.param .u64 s, .param .u32 x, .param .u32 y) {
  .reg .u64 %s;
  .reg .u32 %x, %y, %v;
  ld.param.u64 %s, [s];
  ld.param.u32 %x, [x];
  ld.param.u32 %y, [y];
  mul.lo.u32 %x, %x, 4;
  suld.b.2d.b32.trap {%v}, [%s, {%x, %y}];
  add.u32 %v, %v, 1;
  sust.b.2d.b32.trap [%s, {%x, %y}], {%v};
  ret;
}
)";

const char kBadPtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken( {\n";

// Primary context of device 0 current, a non-blocking stream, the main module.
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream s = nullptr;
  CUmodule mod = nullptr;
  CUfunction add = nullptr, count = nullptr, store = nullptr, dims = nullptr;
  bool Init(bool module = true) {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (!module) return true;
    CUresult r = cuModuleLoadData(&mod, kPtx);
    if (r != CUDA_SUCCESS) {
      Say("main module load = %s", Name(r));
      return false;
    }
    cuModuleGetFunction(&add, mod, "add_u32");
    cuModuleGetFunction(&count, mod, "count");
    cuModuleGetFunction(&store, mod, "store_f32");
    cuModuleGetFunction(&dims, mod, "dims");
    return true;
  }
};

std::string TempDir() {
  char tmpl[] = "/tmp/legacy_probe_XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

bool WriteFile(const std::string& path, const void* data, size_t n) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  fclose(f);
  return ok;
}

uint32_t ReadU32(CUdeviceptr p) {
  uint32_t v = 0xdeadbeef;
  cuMemcpyDtoH(&v, p, 4);
  return v;
}
void SetU32(CUdeviceptr p, uint32_t v) { cuMemcpyHtoD(p, &v, 4); }

const char* ModState(CUmodule m) {
  return m == Garbage<CUmodule>() ? "untouched" : m == nullptr ? "null" : "set";
}

// Runs add_u32 from module `m` on a fresh word holding 10, adding 5: prints the word after.
void TryAdd(const char* label, CUmodule m) {
  CUfunction f = nullptr;
  CUresult r = cuModuleGetFunction(&f, m, "add_u32");
  if (r != CUDA_SUCCESS) {
    Say("%s: get add_u32 = %s", label, Name(r));
    return;
  }
  CUdeviceptr buf = 0;
  cuMemAlloc(&buf, 16);
  SetU32(buf, 10);
  unsigned v = 5;
  void* args[] = {&buf, &v};
  r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
  CUresult s = cuCtxSynchronize();
  Say("%s: launch = %s, sync = %s, value = %u", label, Name(r), Name(s), ReadU32(buf));
  cuMemFree(buf);
}

// ------------------------------------------------------------------------------------------
// cuModuleLoad / cuModuleLoadFatBinary.

// Links kPtx into a cubin; returns it (empty on failure).
std::vector<char> LinkedCubin(const char* ptx) {
  std::vector<char> out;
  CUlinkState st = nullptr;
  if (cuLinkCreate(0, nullptr, nullptr, &st) != CUDA_SUCCESS) return out;
  void* cubin = nullptr;
  size_t size = 0;
  if (cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(ptx), strlen(ptx) + 1, "p.ptx", 0,
                    nullptr, nullptr) == CUDA_SUCCESS &&
      cuLinkComplete(st, &cubin, &size) == CUDA_SUCCESS && cubin != nullptr)
    out.assign(static_cast<char*>(cubin), static_cast<char*>(cubin) + size);
  cuLinkDestroy(st);
  return out;
}

// module:load: cuModuleLoad of PTX, cubin, garbage, empty, missing, directory; null arguments.
int CaseModuleLoad() {
  Base b;
  if (!b.Init(false)) return 1;
  std::string dir = TempDir();
  std::string ptx = dir + "/good.ptx", bad = dir + "/bad.ptx", empty = dir + "/empty.bin",
              junk = dir + "/junk.bin", cubin = dir + "/good.cubin";
  WriteFile(ptx, kPtx, strlen(kPtx));
  WriteFile(bad, kBadPtx, strlen(kBadPtx));
  WriteFile(empty, "", 0);
  WriteFile(junk, "this is not an image at all\n", 28);
  std::vector<char> cb = LinkedCubin(kPtx);
  Say("linked cubin for the file = %s", YesNo(!cb.empty()));
  WriteFile(cubin, cb.data(), cb.size());
  auto load = [&](const char* what, const char* path) {
    CUmodule m = Garbage<CUmodule>();
    CUresult r = cuModuleLoad(&m, path);
    Say("cuModuleLoad(%s) = %s (module %s)", what, Name(r), ModState(m));
    if (r == CUDA_SUCCESS) {
      TryAdd(what, m);
      R(cuModuleUnload(m));
    }
  };
  load("PTX file", ptx.c_str());
  load("cubin file", cubin.c_str());
  load("invalid PTX file", bad.c_str());
  load("empty file", empty.c_str());
  load("text garbage file", junk.c_str());
  load("missing file", (dir + "/missing.ptx").c_str());
  load("missing directory", "/nonexistent_dir_cuhal/x.ptx");
  load("a directory", dir.c_str());
  load("empty path", "");
  load("null path", nullptr);
  R(cuModuleLoad(nullptr, ptx.c_str()));
  R(cuModuleLoad(nullptr, nullptr));
  // An unreadable file (mode 000; root reads it anyway).
  std::string noread = dir + "/noread.ptx";
  WriteFile(noread, kPtx, strlen(kPtx));
  chmod(noread.c_str(), 0);
  load("mode-000 file", noread.c_str());
  // Relative path.
  if (chdir(dir.c_str()) == 0) load("relative path", "good.ptx");
  // Two loads of one file are two modules.
  CUmodule m1 = nullptr, m2 = nullptr;
  R(cuModuleLoad(&m1, ptx.c_str()));
  R(cuModuleLoad(&m2, ptx.c_str()));
  Say("two loads give different modules = %s", YesNo(m1 != m2));
  cuModuleUnload(m1);
  cuModuleUnload(m2);
  // No context current.
  cuCtxSetCurrent(nullptr);
  load("PTX file, no context", ptx.c_str());
  load("missing file, no context", (dir + "/missing.ptx").c_str());
  for (const std::string& f : {ptx, bad, empty, junk, cubin, noread}) unlink(f.c_str());
  rmdir(dir.c_str());
  return 0;
}

// module:fatbinary: cuModuleLoadFatBinary of PTX text, a cubin, garbage, null; and cuModuleLoadData
// of the same cubin.
int CaseModuleFatBinary() {
  Base b;
  if (!b.Init(false)) return 1;
  std::vector<char> cb = LinkedCubin(kPtx);
  Say("linked cubin = %s", YesNo(!cb.empty()));
  auto load = [&](const char* what, const void* image) {
    CUmodule m = Garbage<CUmodule>();
    CUresult r = cuModuleLoadFatBinary(&m, image);
    Say("cuModuleLoadFatBinary(%s) = %s (module %s)", what, Name(r), ModState(m));
    if (r == CUDA_SUCCESS) {
      TryAdd(what, m);
      R(cuModuleUnload(m));
    }
  };
  load("PTX text", kPtx);
  if (!cb.empty()) load("cubin", cb.data());
  load("text garbage", "this is not an image at all");
  load("invalid PTX", kBadPtx);
  static const unsigned char zeros[256] = {};
  load("zero bytes", zeros);
  // A fat binary header (magic 0xba55ed50, version 1, header size 16, fat size 0): empty.
  static const uint32_t empty_fatbin[8] = {0xba55ed50u, 0x00100001u, 0, 0, 0, 0, 0, 0};
  load("empty fat binary", empty_fatbin);
  // The wrapper (magic 0x466243b1, version 1, data pointer) around that empty fat binary.
  struct {
    int magic;
    int version;
    const void* data;
    void* filename;
  } wrapper = {0x466243b1, 1, empty_fatbin, nullptr};
  load("wrapper of an empty fat binary", &wrapper);
  load("null image", nullptr);
  R(cuModuleLoadFatBinary(nullptr, kPtx));
  if (!cb.empty()) {
    CUmodule m = nullptr;
    if (R(cuModuleLoadData(&m, cb.data())) == CUDA_SUCCESS) {
      TryAdd("cuModuleLoadData(cubin)", m);
      cuModuleUnload(m);
    }
  }
  cuCtxSetCurrent(nullptr);
  load("PTX text, no context", kPtx);
  return 0;
}

// ------------------------------------------------------------------------------------------
// The JIT linker.

// link:basic: PTX in, cubin out, loaded and run; the cubin's header; the state after completion.
int CaseLinkBasic() {
  Base b;
  if (!b.Init(false)) return 1;
  CUlinkState st = Garbage<CUlinkState>();
  if (R(cuLinkCreate(0, nullptr, nullptr, &st)) != CUDA_SUCCESS) return 0;
  Say("state set = %s", YesNo(st != nullptr && st != Garbage<CUlinkState>()));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "main.ptx", 0,
                  nullptr, nullptr));
  void* cubin = Garbage<void*>();
  size_t size = 77;
  R(cuLinkComplete(st, &cubin, &size));
  bool ok = cubin != nullptr && cubin != Garbage<void*>();
  Say("cubin set = %s, size > 64 = %s", YesNo(ok), YesNo(size > 64));
  if (ok) {
    const unsigned char* c = static_cast<const unsigned char*>(cubin);
    Say("ELF magic = %s, class 64 = %s, little endian = %s", YesNo(memcmp(c, "\x7f" "ELF", 4) == 0),
        YesNo(c[4] == 2), YesNo(c[5] == 1));
    uint16_t type = 0, machine = 0;
    memcpy(&type, c + 16, 2);
    memcpy(&machine, c + 18, 2);
    Say("e_type = %u, e_machine = %u, e_ident[7] (ABI) = %u", type, machine, c[7]);
    CUmodule m = nullptr;
    if (R(cuModuleLoadData(&m, cubin)) == CUDA_SUCCESS) {
      TryAdd("module from the linked cubin", m);
      CUfunction f = nullptr;
      R(cuModuleGetFunction(&f, m, "dims"));
      R(cuModuleGetFunction(&f, m, "nope"));
      cuModuleUnload(m);
    }
    CUlibrary lib = nullptr;
    if (R(cuLibraryLoadData(&lib, cubin, nullptr, nullptr, 0, nullptr, nullptr, 0)) ==
        CUDA_SUCCESS)
      cuLibraryUnload(lib);
    // Linking the cubin again as CU_JIT_INPUT_CUBIN.
    std::vector<char> copy(c, c + size);
    CUlinkState st2 = nullptr;
    R(cuLinkCreate(0, nullptr, nullptr, &st2));
    R(cuLinkAddData(st2, CU_JIT_INPUT_CUBIN, copy.data(), copy.size(), "again.cubin", 0, nullptr,
                    nullptr));
    void* c2 = nullptr;
    size_t s2 = 0;
    R(cuLinkComplete(st2, &c2, &s2));
    Say("relinked cubin set = %s", YesNo(c2 != nullptr));
    if (c2) {
      CUmodule m2 = nullptr;
      if (R(cuModuleLoadData(&m2, c2)) == CUDA_SUCCESS) {
        TryAdd("module from the relinked cubin", m2);
        cuModuleUnload(m2);
      }
    }
    R(cuLinkDestroy(st2));
  }
  // After completion.
  void* again = Garbage<void*>();
  size_t size2 = 77;
  R(cuLinkComplete(st, &again, &size2));
  Say("second completion: same image = %s, same size = %s, untouched = %s",
      YesNo(again == cubin), YesNo(size2 == size), YesNo(again == Garbage<void*>()));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kCallee), strlen(kCallee) + 1,
                  "late.ptx", 0, nullptr, nullptr));
  R(cuLinkDestroy(st));
  // Two states at once; both give an image.
  CUlinkState a = nullptr, c = nullptr;
  R(cuLinkCreate(0, nullptr, nullptr, &a));
  R(cuLinkCreate(0, nullptr, nullptr, &c));
  Say("two states differ = %s", YesNo(a != c));
  R(cuLinkDestroy(a));
  R(cuLinkDestroy(c));
  return 0;
}

// link:separate: an extern function resolved by a second PTX input; unresolved alone.
int CaseLinkSeparate() {
  Base b;
  if (!b.Init(false)) return 1;
  CUlinkState st = nullptr;
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kCaller), strlen(kCaller) + 1,
                  "caller.ptx", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kCallee), strlen(kCallee) + 1,
                  "callee.ptx", 0, nullptr, nullptr));
  void* cubin = nullptr;
  size_t size = 0;
  if (R(cuLinkComplete(st, &cubin, &size)) == CUDA_SUCCESS) {
    CUmodule m = nullptr;
    if (R(cuModuleLoadData(&m, cubin)) == CUDA_SUCCESS) {
      CUfunction f = nullptr;
      R(cuModuleGetFunction(&f, m, "caller"));
      CUdeviceptr buf = 0;
      cuMemAlloc(&buf, 4);
      SetU32(buf, 7);
      void* args[] = {&buf};
      R(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
      R(cuCtxSynchronize());
      Say("caller: 7 tripled = %u", ReadU32(buf));
      cuMemFree(buf);
      cuModuleUnload(m);
    }
  }
  R(cuLinkDestroy(st));
  // The caller alone: the undefined function.
  char err[4096] = {0};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {err, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof err))};
  R(cuLinkCreate(2, opts, vals, &st));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kCaller), strlen(kCaller) + 1,
                  "caller.ptx", 0, nullptr, nullptr));
  cubin = Garbage<void*>();
  R(cuLinkComplete(st, &cubin, &size));
  Say("cubin after failed completion: untouched = %s, null = %s",
      YesNo(cubin == Garbage<void*>()), YesNo(cubin == nullptr));
  Say("error log mentions triple = %s", YesNo(strstr(err, "triple") != nullptr));
  R(cuLinkDestroy(st));
  // The same PTX added twice: a duplicate definition.
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "a.ptx", 0,
                  nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "b.ptx", 0,
                  nullptr, nullptr));
  R(cuLinkComplete(st, &cubin, &size));
  R(cuLinkDestroy(st));
  return 0;
}

// link:errors: argument checking of cuLinkCreate/AddData/AddFile/Complete/Destroy.
int CaseLinkErrors() {
  Base b;
  if (!b.Init(false)) return 1;
  CUlinkState st = nullptr;
  R(cuLinkCreate(0, nullptr, nullptr, nullptr));
  CUjit_option opt = CU_JIT_LOG_VERBOSE;
  void* val = reinterpret_cast<void*>(1);
  CUlinkState s2 = Garbage<CUlinkState>();
  R(cuLinkCreate(1, nullptr, nullptr, &s2));
  Say("state after failure: untouched = %s, null = %s", YesNo(s2 == Garbage<CUlinkState>()),
      YesNo(s2 == nullptr));
  if (s2 != nullptr && s2 != Garbage<CUlinkState>()) cuLinkDestroy(s2);
  s2 = Garbage<CUlinkState>();
  R(cuLinkCreate(1, &opt, nullptr, &s2));
  if (s2 != nullptr && s2 != Garbage<CUlinkState>()) cuLinkDestroy(s2);
  s2 = Garbage<CUlinkState>();
  if (R(cuLinkCreate(1, &opt, &val, &s2)) == CUDA_SUCCESS) cuLinkDestroy(s2);
  CUjit_option bad_opt = static_cast<CUjit_option>(9999);
  s2 = Garbage<CUlinkState>();
  if (R(cuLinkCreate(1, &bad_opt, &val, &s2)) == CUDA_SUCCESS) cuLinkDestroy(s2);
  // Options that are common: optimisation level, target from context, info log, wall time.
  char info[2048] = {0};
  float wall = -1;
  CUjit_option opts[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_TARGET_FROM_CUCONTEXT,
                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_WALL_TIME, CU_JIT_GENERATE_LINE_INFO};
  void* vals[] = {reinterpret_cast<void*>(3), nullptr, info,
                  reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof info)), &wall,
                  reinterpret_cast<void*>(1)};
  if (R(cuLinkCreate(6, opts, vals, &st)) == CUDA_SUCCESS) {
    R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "m.ptx", 0,
                    nullptr, nullptr));
    void* c = nullptr;
    size_t n = 0;
    R(cuLinkComplete(st, &c, &n));
    Say("wall time written (>= 0) = %s", YesNo(wall >= 0));
    R(cuLinkDestroy(st));
  }
  // A target option: sm_90 and one the device cannot run (sm_100).
  for (int t : {90, 100}) {
    CUjit_option o = CU_JIT_TARGET;
    void* v = reinterpret_cast<void*>(static_cast<uintptr_t>(t));
    if (R(cuLinkCreate(1, &o, &v, &st)) == CUDA_SUCCESS) {
      R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "m.ptx",
                      0, nullptr, nullptr));
      void* c = nullptr;
      size_t n = 0;
      if (R(cuLinkComplete(st, &c, &n)) == CUDA_SUCCESS) {
        CUmodule m = nullptr;
        if (R(cuModuleLoadData(&m, c)) == CUDA_SUCCESS) cuModuleUnload(m);
      }
      R(cuLinkDestroy(st));
    }
  }
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  void* cubin = Garbage<void*>();
  size_t size = 77;
  // Completing with nothing added.
  R(cuLinkComplete(st, &cubin, &size));
  Say("empty completion: cubin untouched = %s, size untouched = %s",
      YesNo(cubin == Garbage<void*>()), YesNo(size == 77));
  R(cuLinkDestroy(st));
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  char* ptx = const_cast<char*>(kPtx);
  size_t n = strlen(kPtx) + 1;
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, nullptr, n, "x", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, ptx, 0, "x", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, ptx, n, nullptr, 0, nullptr, nullptr));
  R(cuLinkAddData(st, static_cast<CUjitInputType>(99), ptx, n, "x", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_CUBIN, ptx, n, "x", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_FATBINARY, ptx, n, "x", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_OBJECT, ptx, n, "x", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_LIBRARY, ptx, n, "x", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_NVVM, ptx, n, "x", 0, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, ptx, n, "x", 1, nullptr, nullptr));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>("garbage text"), 13, "x", 0, nullptr,
                  nullptr));
  R(cuLinkComplete(st, &cubin, &size));
  R(cuLinkDestroy(st));
  // Invalid PTX: where the error shows, and the error log.
  char err[4096] = {0};
  CUjit_option eo[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* ev[] = {err, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof err))};
  R(cuLinkCreate(2, eo, ev, &st));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kBadPtx), strlen(kBadPtx) + 1,
                  "bad.ptx", 0, nullptr, nullptr));
  Say("error log nonempty = %s, names the input = %s", YesNo(err[0] != 0),
      YesNo(strstr(err, "bad.ptx") != nullptr));
  R(cuLinkComplete(st, &cubin, &size));
  R(cuLinkDestroy(st));
  // A PTX input whose size excludes the terminating NUL.
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, ptx, strlen(kPtx), "nonul.ptx", 0, nullptr, nullptr));
  cubin = nullptr;
  if (R(cuLinkComplete(st, &cubin, &size)) == CUDA_SUCCESS) Say("cubin set = %s", YesNo(cubin));
  R(cuLinkDestroy(st));
  // Null out-parameters of cuLinkComplete.
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, ptx, n, "m.ptx", 0, nullptr, nullptr));
  R(cuLinkComplete(st, nullptr, &size));
  R(cuLinkComplete(st, &cubin, nullptr));
  R(cuLinkComplete(st, &cubin, &size));
  R(cuLinkDestroy(st));
  // cuLinkAddFile.
  std::string dir = TempDir();
  std::string good = dir + "/good.ptx", bad = dir + "/bad.ptx";
  WriteFile(good, kPtx, strlen(kPtx));
  WriteFile(bad, kBadPtx, strlen(kBadPtx));
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  R(cuLinkAddFile(st, CU_JIT_INPUT_PTX, (dir + "/missing.ptx").c_str(), 0, nullptr, nullptr));
  R(cuLinkAddFile(st, CU_JIT_INPUT_PTX, nullptr, 0, nullptr, nullptr));
  R(cuLinkAddFile(st, CU_JIT_INPUT_PTX, "", 0, nullptr, nullptr));
  R(cuLinkAddFile(st, CU_JIT_INPUT_PTX, dir.c_str(), 0, nullptr, nullptr));
  R(cuLinkAddFile(st, CU_JIT_INPUT_PTX, bad.c_str(), 0, nullptr, nullptr));
  R(cuLinkAddFile(st, static_cast<CUjitInputType>(99), good.c_str(), 0, nullptr, nullptr));
  R(cuLinkAddFile(st, CU_JIT_INPUT_PTX, good.c_str(), 0, nullptr, nullptr));
  cubin = nullptr;
  if (R(cuLinkComplete(st, &cubin, &size)) == CUDA_SUCCESS && cubin) {
    CUmodule m = nullptr;
    if (R(cuModuleLoadData(&m, cubin)) == CUDA_SUCCESS) {
      TryAdd("module from cuLinkAddFile", m);
      cuModuleUnload(m);
    }
  }
  R(cuLinkDestroy(st));
  unlink(good.c_str());
  unlink(bad.c_str());
  rmdir(dir.c_str());
  R(cuLinkDestroy(nullptr));
  R(cuLinkAddData(nullptr, CU_JIT_INPUT_PTX, ptx, n, "x", 0, nullptr, nullptr));
  R(cuLinkAddFile(nullptr, CU_JIT_INPUT_PTX, "x.ptx", 0, nullptr, nullptr));
  R(cuLinkComplete(nullptr, &cubin, &size));
  return 0;
}

// link:noctx: the linker with no context current, and with the state's context destroyed.
int CaseLinkNoCtx() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUlinkState st = Garbage<CUlinkState>();
  if (R(cuLinkCreate(0, nullptr, nullptr, &st)) == CUDA_SUCCESS) {
    R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "m.ptx", 0,
                    nullptr, nullptr));
    void* c = nullptr;
    size_t n = 0;
    R(cuLinkComplete(st, &c, &n));
    Say("cubin set = %s", YesNo(c != nullptr));
    R(cuLinkDestroy(st));
  } else {
    Say("state: untouched = %s, null = %s", YesNo(st == Garbage<CUlinkState>()),
        YesNo(st == nullptr));
  }
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  CUctxCreateParams cp;
  memset(&cp, 0, sizeof cp);
  R(cuCtxCreate(&ctx, &cp, 0, dev));
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  R(cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "m.ptx", 0,
                  nullptr, nullptr));
  R(cuCtxDestroy(ctx));
  void* c = nullptr;
  size_t n = 0;
  R(cuLinkComplete(st, &c, &n));
  R(cuLinkDestroy(st));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Tensor maps. Valid encodings print their 128 bytes (hex, with an FNV-1a hash) for a made-up
// global address: the encoders are host-side, and the address is the same in every run.

const uintptr_t kAddr = 0x7f1234560000ull;

uint64_t Fnv(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

std::string Hex(const void* p, size_t n) {
  std::string s;
  char t[4];
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    snprintf(t, sizeof t, "%02x", b[i]);
    s += t;
    if (i % 8 == 7 && i + 1 < n) s += ' ';
  }
  return s;
}

// A 64-byte-aligned buffer of 256 bytes: a CUtensorMap at an offset, pre-filled with 0xa5.
struct MapBuf {
  alignas(64) unsigned char b[256];
  CUtensorMap* At(size_t off) {
    memset(b, 0xa5, sizeof b);
    return reinterpret_cast<CUtensorMap*>(b + off);
  }
};

void ShowMap(const char* kind, const std::string& label, CUresult r, const CUtensorMap* m,
             bool bytes) {
  bool untouched = true;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(m);
  for (int i = 0; i < 128; ++i) untouched = untouched && p[i] == 0xa5;
  if (r != CUDA_SUCCESS || !bytes) {
    Say("%s %s = %s (map untouched = %s)", kind, label.c_str(), Name(r), YesNo(untouched));
    return;
  }
  Say("%s %s = %s, hash %016llx, bytes %s", kind, label.c_str(), Name(r),
      static_cast<unsigned long long>(Fnv(m, 128)), Hex(m, 128).c_str());
}

struct Tiled {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint32_t rank = 2;
  uintptr_t addr = kAddr;
  cuuint64_t dim[5] = {64, 32, 4, 3, 2};
  cuuint64_t stride[4] = {256, 8192, 32768, 98304};
  cuuint32_t box[5] = {32, 8, 2, 1, 1};
  cuuint32_t estride[5] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave il = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  bool null_dim = false, null_stride = false, null_box = false, null_estride = false;
  size_t map_off = 0;
  bool null_map = false;
  CUresult Encode(const std::string& label, bool bytes = true) {
    MapBuf buf;
    CUtensorMap* m = buf.At(map_off);
    CUresult r = cuTensorMapEncodeTiled(null_map ? nullptr : m, type, rank,
                                        reinterpret_cast<void*>(addr), null_dim ? nullptr : dim,
                                        null_stride ? nullptr : stride, null_box ? nullptr : box,
                                        null_estride ? nullptr : estride, il, sw, l2, oob);
    ShowMap("tiled", label, r, m, bytes && addr == kAddr);
    return r;
  }
};

// tensormap:tiled:valid: valid encodings, one parameter changed at a time from a base.
int CaseTiledValid() {
  Base b;
  if (!b.Init(false)) return 1;
  Tiled base;
  base.Encode("base");
  base.Encode("base again");
  for (int t = 0; t <= 15; ++t) {
    Tiled v;
    v.type = static_cast<CUtensorMapDataType>(t);
    if (t >= 13) {  // packed: 128-multiple dims, 32-multiple strides, box[0] 128 for ALIGN16B
      v.dim[0] = 256;
      v.box[0] = 128;
    } else {
      static const int kSize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
      v.box[0] = 128 / kSize[t] / 2;
    }
    v.Encode("type " + std::to_string(t));
  }
  for (cuuint32_t rank = 1; rank <= 5; ++rank) {
    Tiled v;
    v.rank = rank;
    v.Encode("rank " + std::to_string(rank));
  }
  struct DimCase {
    const char* label;
    cuuint64_t d0, d1;
  } dims[] = {{"dims 65x33", 65, 33},         {"dims 1x1", 1, 1},
              {"dims 4x1", 4, 1},             {"dims 64x4294967296", 64, 4294967296ull},
              {"dims 64x65536", 64, 65536},   {"dims 64x1000000", 64, 1000000},
              {"dims 2x32 (box larger)", 2, 32}};
  for (auto& d : dims) {
    Tiled v;
    v.dim[0] = d.d0;
    v.dim[1] = d.d1;
    v.Encode(d.label);
  }
  for (cuuint64_t s : {16ull, 272ull, 4096ull, 65536ull, 1099511627760ull}) {
    Tiled v;
    v.stride[0] = s;
    v.Encode("stride " + std::to_string(s));
  }
  for (cuuint32_t bx : {4u, 8u, 36u, 64u, 256u}) {
    Tiled v;
    v.box[0] = bx;
    v.Encode("box[0] " + std::to_string(bx));
  }
  for (cuuint32_t bx : {1u, 7u, 32u, 256u}) {
    Tiled v;
    v.box[1] = bx;
    v.Encode("box[1] " + std::to_string(bx));
  }
  for (cuuint32_t e : {2u, 3u, 8u}) {
    Tiled v;
    v.estride[1] = e;
    v.Encode("estride[1] " + std::to_string(e));
    Tiled w;
    w.estride[0] = e;
    w.Encode("estride[0] " + std::to_string(e));
  }
  {
    Tiled v;
    v.estride[0] = 0;
    v.Encode("estride[0] 0 (interleave none)");
  }
  for (int s = 0; s <= 6; ++s) {
    Tiled v;
    v.box[0] = 8;  // 32 bytes: within every swizzle span
    v.sw = static_cast<CUtensorMapSwizzle>(s);
    v.Encode("swizzle " + std::to_string(s));
  }
  for (int s = 1; s <= 6; ++s) {
    Tiled v;
    v.box[0] = s == 1 ? 8 : s == 2 ? 16 : 32;  // the span exactly
    v.sw = static_cast<CUtensorMapSwizzle>(s);
    v.Encode("swizzle " + std::to_string(s) + " full span");
  }
  for (int l = 0; l <= 3; ++l) {
    Tiled v;
    v.l2 = static_cast<CUtensorMapL2promotion>(l);
    v.Encode("l2 " + std::to_string(l));
  }
  {
    Tiled v;
    v.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    v.Encode("oob nan");
  }
  for (int il = 1; il <= 2; ++il) {
    Tiled v;
    v.rank = 3;
    v.il = static_cast<CUtensorMapInterleave>(il);
    if (il == 2) v.sw = CU_TENSOR_MAP_SWIZZLE_32B;
    v.box[0] = 3;
    v.Encode("interleave " + std::to_string(il));
    v.estride[0] = 2;
    v.Encode("interleave " + std::to_string(il) + " estride[0] 2");
  }
  for (uintptr_t a :
       {kAddr + 16, kAddr + 32, kAddr + 0x1000, static_cast<uintptr_t>(0x10),
        static_cast<uintptr_t>(0xffffffffff0ull), static_cast<uintptr_t>(1ull << 56)}) {
    Tiled v;
    v.addr = a;
    MapBuf buf;
    CUtensorMap* m = buf.At(0);
    CUresult r = cuTensorMapEncodeTiled(m, v.type, v.rank, reinterpret_cast<void*>(a), v.dim,
                                        v.stride, v.box, v.estride, v.il, v.sw, v.l2, v.oob);
    char label[64];
    snprintf(label, sizeof label, "address %#llx", static_cast<unsigned long long>(a));
    ShowMap("tiled", label, r, m, true);
  }
  {
    Tiled v;
    v.rank = 5;
    v.dim[0] = 128;
    v.stride[0] = 512;
    v.stride[1] = 512 * 32;
    v.stride[2] = 512 * 32 * 4;
    v.stride[3] = 512 * 32 * 4 * 3;
    v.box[0] = 16;
    v.box[1] = 4;
    v.box[2] = 3;
    v.box[3] = 2;
    v.box[4] = 2;
    v.estride[2] = 2;
    v.estride[3] = 1;
    v.estride[4] = 4;
    v.Encode("rank 5 mixed");
  }
  // A real device allocation: only whether it succeeds.
  CUdeviceptr dbuf = 0;
  cuMemAlloc(&dbuf, 1 << 20);
  Tiled v;
  v.addr = static_cast<uintptr_t>(dbuf);
  v.Encode("device allocation", false);
  int host_word = 0;
  v.addr = reinterpret_cast<uintptr_t>(&host_word) & ~static_cast<uintptr_t>(63);
  v.Encode("host stack address", false);
  cuMemFree(dbuf);
  return 0;
}

// tensormap:tiled:invalid: each documented rule broken once.
int CaseTiledInvalid() {
  Base b;
  if (!b.Init(false)) return 1;
  auto run = [](const char* label, void (*mut)(Tiled&)) {
    Tiled v;
    mut(v);
    v.Encode(label);
  };
  run("null map", [](Tiled& v) { v.null_map = true; });
  run("map at +16", [](Tiled& v) { v.map_off = 16; });
  run("map at +32", [](Tiled& v) { v.map_off = 32; });
  run("map at +64", [](Tiled& v) { v.map_off = 64; });
  run("type 16", [](Tiled& v) { v.type = static_cast<CUtensorMapDataType>(16); });
  run("type 99", [](Tiled& v) { v.type = static_cast<CUtensorMapDataType>(99); });
  run("type -1", [](Tiled& v) { v.type = static_cast<CUtensorMapDataType>(-1); });
  run("rank 0", [](Tiled& v) { v.rank = 0; });
  run("rank 6", [](Tiled& v) { v.rank = 6; });
  run("rank 2 interleave 16B", [](Tiled& v) { v.il = CU_TENSOR_MAP_INTERLEAVE_16B; });
  run("null address", [](Tiled& v) { v.addr = 0; });
  run("address +8", [](Tiled& v) { v.addr = kAddr + 8; });
  run("address +4", [](Tiled& v) { v.addr = kAddr + 4; });
  run("interleave 32B address +16", [](Tiled& v) {
    v.rank = 3;
    v.il = CU_TENSOR_MAP_INTERLEAVE_32B;
    v.sw = CU_TENSOR_MAP_SWIZZLE_32B;
    v.addr = kAddr + 16;
  });
  run("16U4_ALIGN16B address +16", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.addr = kAddr + 16;
  });
  run("null dims", [](Tiled& v) { v.null_dim = true; });
  run("dims[0] 0", [](Tiled& v) { v.dim[0] = 0; });
  run("dims[1] 0", [](Tiled& v) { v.dim[1] = 0; });
  run("dims[1] 2^32+1", [](Tiled& v) { v.dim[1] = 4294967297ull; });
  run("dims[0] 2^32+1", [](Tiled& v) { v.dim[0] = 4294967297ull; });
  run("16U6 dims[0] 192", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    v.dim[0] = 192;
    v.box[0] = 128;
  });
  run("16U4_ALIGN8B dims[0] 63", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
    v.dim[0] = 63;
  });
  run("null strides", [](Tiled& v) { v.null_stride = true; });
  run("rank 1 null strides", [](Tiled& v) {
    v.rank = 1;
    v.null_stride = true;
  });
  run("stride 8", [](Tiled& v) { v.stride[0] = 8; });
  run("stride 264", [](Tiled& v) { v.stride[0] = 264; });
  run("stride 0", [](Tiled& v) { v.stride[0] = 0; });
  run("stride 2^40", [](Tiled& v) { v.stride[0] = 1ull << 40; });
  run("stride 128 (less than a row)", [](Tiled& v) { v.stride[0] = 128; });
  run("rank 3 stride[1] less than stride[0]", [](Tiled& v) {
    v.rank = 3;
    v.stride[1] = 128;
  });
  run("interleave 32B stride 16-multiple", [](Tiled& v) {
    v.rank = 3;
    v.il = CU_TENSOR_MAP_INTERLEAVE_32B;
    v.sw = CU_TENSOR_MAP_SWIZZLE_32B;
    v.stride[0] = 272;
  });
  run("16U4_ALIGN16B stride 16-multiple", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.stride[0] = 272;
  });
  run("null box", [](Tiled& v) { v.null_box = true; });
  run("box[0] 0", [](Tiled& v) { v.box[0] = 0; });
  run("box[1] 0", [](Tiled& v) { v.box[1] = 0; });
  run("box[1] 257", [](Tiled& v) { v.box[1] = 257; });
  run("box[0] 260", [](Tiled& v) { v.box[0] = 260; });
  run("box[0] 3 (12 bytes)", [](Tiled& v) { v.box[0] = 3; });
  run("16U4_ALIGN16B box[0] 64", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 64;
  });
  run("null estrides", [](Tiled& v) { v.null_estride = true; });
  run("estride[1] 0", [](Tiled& v) { v.estride[1] = 0; });
  run("estride[1] 9", [](Tiled& v) { v.estride[1] = 9; });
  run("estride[0] 9", [](Tiled& v) { v.estride[0] = 9; });
  run("interleave 3", [](Tiled& v) {
    v.rank = 3;
    v.il = static_cast<CUtensorMapInterleave>(3);
  });
  run("swizzle 7", [](Tiled& v) { v.sw = static_cast<CUtensorMapSwizzle>(7); });
  run("swizzle 32B inner 128 bytes", [](Tiled& v) { v.sw = CU_TENSOR_MAP_SWIZZLE_32B; });
  run("swizzle 64B inner 128 bytes", [](Tiled& v) {
    v.sw = CU_TENSOR_MAP_SWIZZLE_64B;
  });
  run("swizzle 128B inner 256 bytes", [](Tiled& v) {
    v.sw = CU_TENSOR_MAP_SWIZZLE_128B;
    v.box[0] = 64;
  });
  run("swizzle 32B inner 48 bytes", [](Tiled& v) {
    v.sw = CU_TENSOR_MAP_SWIZZLE_32B;
    v.box[0] = 12;
  });
  run("interleave 32B swizzle none", [](Tiled& v) {
    v.rank = 3;
    v.il = CU_TENSOR_MAP_INTERLEAVE_32B;
  });
  run("interleave 32B swizzle 64B", [](Tiled& v) {
    v.rank = 3;
    v.il = CU_TENSOR_MAP_INTERLEAVE_32B;
    v.sw = CU_TENSOR_MAP_SWIZZLE_64B;
  });
  run("interleave 16B swizzle 128B box 256 bytes", [](Tiled& v) {
    v.rank = 3;
    v.il = CU_TENSOR_MAP_INTERLEAVE_16B;
    v.sw = CU_TENSOR_MAP_SWIZZLE_128B;
    v.box[0] = 64;
  });
  run("16U6 interleave 16B", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    v.rank = 3;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.il = CU_TENSOR_MAP_INTERLEAVE_16B;
  });
  run("16U6 swizzle 32B", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.sw = CU_TENSOR_MAP_SWIZZLE_32B;
  });
  run("16U6 swizzle 64B", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.sw = CU_TENSOR_MAP_SWIZZLE_64B;
  });
  run("16U6 swizzle 128B", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.sw = CU_TENSOR_MAP_SWIZZLE_128B;
  });
  run("16U6 swizzle 128B_ATOM_64B", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.sw = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
  });
  run("16U4_ALIGN16B swizzle 64B", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.sw = CU_TENSOR_MAP_SWIZZLE_64B;
  });
  run("16U4_ALIGN16B swizzle 128B_ATOM_64B", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.sw = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
  });
  run("l2 4", [](Tiled& v) { v.l2 = static_cast<CUtensorMapL2promotion>(4); });
  run("oob 2", [](Tiled& v) { v.oob = static_cast<CUtensorMapFloatOOBfill>(2); });
  run("oob nan uint8", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    v.box[0] = 16;
    v.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  });
  run("oob nan int32", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_INT32;
    v.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  });
  run("oob nan 16U4_ALIGN8B", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
    v.dim[0] = 256;
    v.box[0] = 128;
    v.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  });
  run("oob nan bfloat16", [](Tiled& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    v.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  });
  run("two rules broken (rank 0, null dims)", [](Tiled& v) {
    v.rank = 0;
    v.null_dim = true;
  });
  return 0;
}

struct Im2col {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint32_t rank = 4;
  uintptr_t addr = kAddr;
  cuuint64_t dim[5] = {64, 16, 16, 2, 2};
  cuuint64_t stride[4] = {256, 4096, 65536, 131072};
  int lower[3] = {-1, -1, -1};
  int upper[3] = {-1, -1, -1};
  cuuint32_t channels = 32, pixels = 64;
  cuuint32_t estride[5] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave il = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  bool null_lower = false, null_upper = false, null_map = false;
  size_t map_off = 0;
  CUresult Encode(const std::string& label) {
    MapBuf buf;
    CUtensorMap* m = buf.At(map_off);
    CUresult r = cuTensorMapEncodeIm2col(
        null_map ? nullptr : m, type, rank, reinterpret_cast<void*>(addr), dim, stride,
        null_lower ? nullptr : lower, null_upper ? nullptr : upper, channels, pixels, estride,
        il, sw, l2, oob);
    ShowMap("im2col", label, r, m, addr == kAddr);
    return r;
  }
};

// tensormap:im2col: valid encodings (one parameter changed at a time) and each rule broken.
int CaseIm2col() {
  Base b;
  if (!b.Init(false)) return 1;
  Im2col base;
  base.Encode("base");
  for (cuuint32_t rank : {3u, 5u}) {
    Im2col v;
    v.rank = rank;
    v.Encode("rank " + std::to_string(rank));
  }
  for (int t : {0, 1, 6, 9, 13, 14, 15}) {
    Im2col v;
    v.type = static_cast<CUtensorMapDataType>(t);
    if (t >= 13) {
      v.dim[0] = 128;
      v.channels = 128;
    }
    v.Encode("type " + std::to_string(t));
  }
  for (int l : {-128, -2, 0, 1, 127}) {
    Im2col v;
    v.lower[0] = l;
    v.Encode("lower[0] " + std::to_string(l));
  }
  for (int l : {-2, 0, 127}) {
    Im2col v;
    v.lower[1] = l;
    v.Encode("lower[1] " + std::to_string(l));
    Im2col w;
    w.upper[0] = l;
    w.Encode("upper[0] " + std::to_string(l));
  }
  {
    Im2col v;
    v.rank = 3;
    v.lower[0] = -32768;
    v.upper[0] = 32767;
    v.Encode("rank 3 lower -32768 upper 32767");
    Im2col w;
    w.rank = 5;
    w.lower[0] = -16;
    w.upper[2] = 15;
    w.Encode("rank 5 lower[0] -16 upper[2] 15");
  }
  for (cuuint32_t c : {1u, 8u, 64u, 256u}) {
    Im2col v;
    v.channels = c;
    v.Encode("channels " + std::to_string(c));
  }
  for (cuuint32_t p : {1u, 32u, 1024u}) {
    Im2col v;
    v.pixels = p;
    v.Encode("pixels " + std::to_string(p));
  }
  for (int s = 1; s <= 6; ++s) {
    Im2col v;
    v.channels = 8;
    v.sw = static_cast<CUtensorMapSwizzle>(s);
    v.Encode("swizzle " + std::to_string(s));
  }
  {
    Im2col v;
    v.estride[1] = 2;
    v.estride[2] = 3;
    v.Encode("estrides 1,2,3,1");
    Im2col w;
    w.l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    w.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    w.Encode("l2 256B oob nan");
    Im2col x;
    x.il = CU_TENSOR_MAP_INTERLEAVE_16B;
    x.Encode("interleave 16B");
    x.il = CU_TENSOR_MAP_INTERLEAVE_32B;
    x.sw = CU_TENSOR_MAP_SWIZZLE_32B;
    x.Encode("interleave 32B");
  }
  auto run = [](const char* label, void (*mut)(Im2col&)) {
    Im2col v;
    mut(v);
    v.Encode(label);
  };
  run("null map", [](Im2col& v) { v.null_map = true; });
  run("map at +16", [](Im2col& v) { v.map_off = 16; });
  run("rank 2", [](Im2col& v) { v.rank = 2; });
  run("rank 6", [](Im2col& v) { v.rank = 6; });
  run("type 16", [](Im2col& v) { v.type = static_cast<CUtensorMapDataType>(16); });
  run("null address", [](Im2col& v) { v.addr = 0; });
  run("address +8", [](Im2col& v) { v.addr = kAddr + 8; });
  run("dims[1] 0", [](Im2col& v) { v.dim[1] = 0; });
  run("stride 8", [](Im2col& v) { v.stride[0] = 8; });
  run("rank 4 lower -129", [](Im2col& v) { v.lower[0] = -129; });
  run("rank 4 upper 128", [](Im2col& v) { v.upper[1] = 128; });
  run("rank 5 lower -17", [](Im2col& v) {
    v.rank = 5;
    v.lower[2] = -17;
  });
  run("rank 5 upper 16", [](Im2col& v) {
    v.rank = 5;
    v.upper[0] = 16;
  });
  run("rank 3 lower -32769", [](Im2col& v) {
    v.rank = 3;
    v.lower[0] = -32769;
  });
  run("zero-area box (W 16, lower 0, upper -16)", [](Im2col& v) {
    v.lower[0] = 0;
    v.upper[0] = -16;
  });
  run("negative-area box (lower 10, upper -10)", [](Im2col& v) {
    v.lower[1] = 10;
    v.upper[1] = -10;
  });
  run("channels 0", [](Im2col& v) { v.channels = 0; });
  run("channels 257", [](Im2col& v) { v.channels = 257; });
  run("16U4_ALIGN16B channels 64", [](Im2col& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    v.dim[0] = 128;
    v.channels = 64;
  });
  run("pixels 0", [](Im2col& v) { v.pixels = 0; });
  run("pixels 1025", [](Im2col& v) { v.pixels = 1025; });
  run("estride 0", [](Im2col& v) { v.estride[2] = 0; });
  run("estride 9", [](Im2col& v) { v.estride[2] = 9; });
  run("swizzle 32B channels 32 (128 bytes)", [](Im2col& v) { v.sw = CU_TENSOR_MAP_SWIZZLE_32B; });
  run("swizzle 128B channels 64 (256 bytes)", [](Im2col& v) {
    v.channels = 64;
    v.sw = CU_TENSOR_MAP_SWIZZLE_128B;
  });
  run("interleave 32B swizzle none", [](Im2col& v) { v.il = CU_TENSOR_MAP_INTERLEAVE_32B; });
  run("l2 4", [](Im2col& v) { v.l2 = static_cast<CUtensorMapL2promotion>(4); });
  run("oob nan int32", [](Im2col& v) {
    v.type = CU_TENSOR_MAP_DATA_TYPE_INT32;
    v.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  });
  return 0;
}

// tensormap:wide: cuTensorMapEncodeIm2colWide (documented for compute capability 10.0 and up).
int CaseIm2colWide() {
  Base b;
  if (!b.Init(false)) return 1;
  int major = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, b.dev);
  Say("compute capability major >= 10 = %s", YesNo(major >= 10));
  cuuint64_t dim[5] = {64, 32, 16, 2, 2};
  cuuint64_t stride[4] = {256, 8192, 131072, 262144};
  cuuint32_t es[5] = {1, 1, 1, 1, 1};
  auto enc = [&](const char* label, CUtensorMap* m, CUtensorMapDataType t, cuuint32_t rank,
                 uintptr_t addr, int lo, int hi, cuuint32_t ch, cuuint32_t px,
                 CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle sw) {
    MapBuf buf;
    CUtensorMap* mm = m ? buf.At(0) : nullptr;
    CUresult r = dl::cuTensorMapEncodeIm2colWide(
        mm, t, rank, reinterpret_cast<void*>(addr), dim, stride, lo, hi, ch, px, es,
        CU_TENSOR_MAP_INTERLEAVE_NONE, mode, sw, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (mm) {
      ShowMap("wide", label, r, mm, addr == kAddr);
    } else {
      Say("wide %s = %s", label, Name(r));
    }
  };
  CUtensorMap* some = reinterpret_cast<CUtensorMap*>(1);
  const auto F = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const auto W = CU_TENSOR_MAP_IM2COL_WIDE_MODE_W;
  const auto W128 = CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128;
  enc("base (rank 3, mode W, swizzle 128B)", some, F, 3, kAddr, -1, -1, 16, 32, W,
      CU_TENSOR_MAP_SWIZZLE_128B);
  enc("rank 4", some, F, 4, kAddr, -1, -1, 16, 32, W, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("rank 5", some, F, 5, kAddr, -1, -1, 16, 32, W, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("mode W128", some, F, 3, kAddr, -1, -1, 16, 32, W128, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("swizzle 64B", some, F, 3, kAddr, -1, -1, 16, 32, W, CU_TENSOR_MAP_SWIZZLE_64B);
  enc("swizzle none", some, F, 3, kAddr, -1, -1, 16, 32, W, CU_TENSOR_MAP_SWIZZLE_NONE);
  enc("swizzle 32B", some, F, 3, kAddr, -1, -1, 8, 32, W, CU_TENSOR_MAP_SWIZZLE_32B);
  enc("null map", nullptr, F, 3, kAddr, -1, -1, 16, 32, W, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("rank 2", some, F, 2, kAddr, -1, -1, 16, 32, W, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("mode 2", some, F, 3, kAddr, -1, -1, 16, 32, static_cast<CUtensorMapIm2ColWideMode>(2),
      CU_TENSOR_MAP_SWIZZLE_128B);
  enc("lower -32769", some, F, 3, kAddr, -32769, -1, 16, 32, W, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("channels 257", some, F, 3, kAddr, -1, -1, 257, 32, W, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("pixels 1025", some, F, 3, kAddr, -1, -1, 16, 1025, W, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("address +8", some, F, 3, kAddr + 8, -1, -1, 16, 32, W, CU_TENSOR_MAP_SWIZZLE_128B);
  enc("type 16", some, static_cast<CUtensorMapDataType>(16), 3, kAddr, -1, -1, 16, 32, W,
      CU_TENSOR_MAP_SWIZZLE_128B);
  return 0;
}

// tensormap:replace: cuTensorMapReplaceAddress against a fresh encoding at the new address.
int CaseReplace() {
  Base b;
  if (!b.Init(false)) return 1;
  auto encode = [](CUtensorMap* m, uintptr_t addr, bool il32) {
    cuuint64_t dim[3] = {64, 32, 4};
    cuuint64_t stride[2] = {256, 8192};
    cuuint32_t box[3] = {il32 ? 8u : 32u, 8, 2};
    cuuint32_t es[3] = {1, 1, 1};
    return cuTensorMapEncodeTiled(
        m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, reinterpret_cast<void*>(addr), dim, stride, box,
        es, il32 ? CU_TENSOR_MAP_INTERLEAVE_32B : CU_TENSOR_MAP_INTERLEAVE_NONE,
        il32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  MapBuf a, c;
  CUtensorMap* ma = a.At(0);
  CUtensorMap* mc = c.At(0);
  R(encode(ma, kAddr, false));
  for (uintptr_t to : {kAddr + 0x100000, kAddr + 16, kAddr + 32, kAddr, kAddr + 8,
                       static_cast<uintptr_t>(0), static_cast<uintptr_t>(1ull << 56)}) {
    CUresult r = cuTensorMapReplaceAddress(ma, reinterpret_cast<void*>(to));
    CUresult r2 = encode(mc, to, false);
    Say("replace with %#llx = %s (fresh encoding %s); equals the fresh encoding = %s",
        static_cast<unsigned long long>(to), Name(r), Name(r2), YesNo(memcmp(ma, mc, 128) == 0));
  }
  // Interleave 32B: 16-aligned is not enough.
  R(encode(ma, kAddr, true));
  R(cuTensorMapReplaceAddress(ma, reinterpret_cast<void*>(kAddr + 16)));
  R(cuTensorMapReplaceAddress(ma, reinterpret_cast<void*>(kAddr + 32)));
  R(encode(mc, kAddr + 32, true));
  Say("interleave 32B replaced equals fresh = %s", YesNo(memcmp(ma, mc, 128) == 0));
  // A misaligned map, and maps never encoded.
  CUtensorMap* off = a.At(16);
  R(cuTensorMapReplaceAddress(off, reinterpret_cast<void*>(kAddr)));
  CUtensorMap* zero = a.At(0);
  memset(zero, 0, 128);
  R(cuTensorMapReplaceAddress(zero, reinterpret_cast<void*>(kAddr)));
  Say("zero map after replace: %s", Hex(zero, 128).c_str());
  CUtensorMap* junk = a.At(0);
  R(cuTensorMapReplaceAddress(junk, reinterpret_cast<void*>(kAddr)));
  Say("0xa5 map after replace: %s", Hex(junk, 128).c_str());
  // An im2col map.
  int lo[2] = {-1, -1}, hi[2] = {-1, -1};
  cuuint64_t dim[4] = {64, 16, 16, 2};
  cuuint64_t stride[3] = {256, 4096, 65536};
  cuuint32_t es[4] = {1, 1, 1, 1};
  MapBuf d;
  CUtensorMap* md = d.At(0);
  R(cuTensorMapEncodeIm2col(md, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, reinterpret_cast<void*>(kAddr),
                            dim, stride, lo, hi, 32, 64, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  R(cuTensorMapReplaceAddress(md, reinterpret_cast<void*>(kAddr + 0x2000)));
  R(cuTensorMapEncodeIm2col(mc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                            reinterpret_cast<void*>(kAddr + 0x2000), dim, stride, lo, hi, 32, 64,
                            es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  Say("im2col replaced equals fresh = %s", YesNo(memcmp(md, mc, 128) == 0));
  return 0;
}

// tensormap:noctx: the encoders with no context current (after cuInit) and before cuInit.
int CaseTensorNoCtx(bool init) {
  if (init && cuInit(0) != CUDA_SUCCESS) return 1;
  Tiled v;
  v.Encode("valid");
  v.rank = 0;
  v.Encode("rank 0");
  Im2col w;
  w.Encode("valid");
  MapBuf a;
  CUtensorMap* m = a.At(0);
  R(cuTensorMapReplaceAddress(m, reinterpret_cast<void*>(kAddr)));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Surface objects.

CUarray MakeArray(unsigned w, unsigned h, CUarray_format fmt, unsigned ch, unsigned flags,
                  CUresult* res = nullptr) {
  CUDA_ARRAY3D_DESCRIPTOR d;
  memset(&d, 0, sizeof d);
  d.Width = w;
  d.Height = h;
  d.Format = fmt;
  d.NumChannels = ch;
  d.Flags = flags;
  CUarray a = nullptr;
  CUresult r = cuArray3DCreate(&a, &d);
  if (res) *res = r;
  return r == CUDA_SUCCESS ? a : nullptr;
}

CUDA_RESOURCE_DESC ArrayRes(CUarray a) {
  CUDA_RESOURCE_DESC rd;
  memset(&rd, 0, sizeof rd);
  rd.resType = CU_RESOURCE_TYPE_ARRAY;
  rd.res.array.hArray = a;
  return rd;
}

// surfobj:basic: create from arrays with and without SURFACE_LDST, read the description back,
// destroy; the invalid resource kinds.
int CaseSurfObj() {
  Base b;
  if (!b.Init(false)) return 1;
  CUarray ldst = MakeArray(16, 8, CU_AD_FORMAT_UNSIGNED_INT32, 1, CUDA_ARRAY3D_SURFACE_LDST);
  CUarray plain = MakeArray(16, 8, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0);
  Say("arrays made = %s", YesNo(ldst && plain));
  CUDA_RESOURCE_DESC rd = ArrayRes(ldst);
  CUsurfObject so = 77, so2 = 77;
  R(cuSurfObjectCreate(&so, &rd));
  Say("object nonzero = %s", YesNo(so != 0 && so != 77));
  R(cuSurfObjectCreate(&so2, &rd));
  Say("second object differs = %s", YesNo(so2 != so));
  CUDA_RESOURCE_DESC back;
  memset(&back, 0x5a, sizeof back);
  R(cuSurfObjectGetResourceDesc(&back, so));
  Say("desc back: type array = %s, same array = %s, flags = %u", YesNo(back.resType ==
      CU_RESOURCE_TYPE_ARRAY), YesNo(back.res.array.hArray == ldst), back.flags);
  bool rest_zero = true;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&back.res.array.hArray) + 8;
  const unsigned char* end = reinterpret_cast<const unsigned char*>(&back.flags);
  for (; p < end; ++p) rest_zero = rest_zero && *p == 0;
  Say("desc back: rest of the union zero = %s", YesNo(rest_zero));
  R(cuSurfObjectGetResourceDesc(nullptr, so));
  R(cuSurfObjectDestroy(so2));
  R(cuSurfObjectDestroy(so2));
  memset(&back, 0x5a, sizeof back);
  R(cuSurfObjectGetResourceDesc(&back, so2));
  R(cuSurfObjectDestroy(0));
  R(cuSurfObjectGetResourceDesc(&back, 0));
  R(cuSurfObjectGetResourceDesc(&back, 0x5a5a5a5aull));
  R(cuSurfObjectDestroy(0x5a5a5a5aull));
  // Invalid creations.
  CUsurfObject bad = 77;
  rd = ArrayRes(plain);
  R(cuSurfObjectCreate(&bad, &rd));
  Say("object after failure = %s", bad == 77 ? "untouched" : bad == 0 ? "0" : "set");
  R(cuSurfObjectCreate(&bad, nullptr));
  rd = ArrayRes(nullptr);
  R(cuSurfObjectCreate(&bad, &rd));
  rd = ArrayRes(ldst);
  rd.flags = 1;
  R(cuSurfObjectCreate(&bad, &rd));
  CUdeviceptr lin = 0;
  cuMemAlloc(&lin, 1 << 16);
  memset(&rd, 0, sizeof rd);
  rd.resType = CU_RESOURCE_TYPE_LINEAR;
  rd.res.linear.devPtr = lin;
  rd.res.linear.format = CU_AD_FORMAT_UNSIGNED_INT32;
  rd.res.linear.numChannels = 1;
  rd.res.linear.sizeInBytes = 1 << 16;
  R(cuSurfObjectCreate(&bad, &rd));
  memset(&rd, 0, sizeof rd);
  rd.resType = CU_RESOURCE_TYPE_PITCH2D;
  rd.res.pitch2D.devPtr = lin;
  rd.res.pitch2D.format = CU_AD_FORMAT_UNSIGNED_INT32;
  rd.res.pitch2D.numChannels = 1;
  rd.res.pitch2D.width = 16;
  rd.res.pitch2D.height = 8;
  rd.res.pitch2D.pitchInBytes = 512;
  R(cuSurfObjectCreate(&bad, &rd));
  rd.resType = static_cast<CUresourcetype>(9);
  R(cuSurfObjectCreate(&bad, &rd));
  // A mipmapped array with SURFACE_LDST: as a resource of type MIPMAPPED_ARRAY, and one level.
  CUDA_ARRAY3D_DESCRIPTOR md;
  memset(&md, 0, sizeof md);
  md.Width = 16;
  md.Height = 16;
  md.Format = CU_AD_FORMAT_FLOAT;
  md.NumChannels = 1;
  md.Flags = CUDA_ARRAY3D_SURFACE_LDST;
  CUmipmappedArray mm = nullptr;
  if (R(cuMipmappedArrayCreate(&mm, &md, 3)) == CUDA_SUCCESS) {
    memset(&rd, 0, sizeof rd);
    rd.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    rd.res.mipmap.hMipmappedArray = mm;
    R(cuSurfObjectCreate(&bad, &rd));
    CUarray level = nullptr;
    R(cuMipmappedArrayGetLevel(&level, mm, 1));
    rd = ArrayRes(level);
    CUsurfObject lo = 0;
    if (R(cuSurfObjectCreate(&lo, &rd)) == CUDA_SUCCESS) cuSurfObjectDestroy(lo);
    cuMipmappedArrayDestroy(mm);
  }
  // A 3D array and a layered one with SURFACE_LDST; other formats.
  CUDA_ARRAY3D_DESCRIPTOR d3;
  memset(&d3, 0, sizeof d3);
  d3.Width = 8;
  d3.Height = 8;
  d3.Depth = 4;
  d3.Format = CU_AD_FORMAT_HALF;
  d3.NumChannels = 4;
  d3.Flags = CUDA_ARRAY3D_SURFACE_LDST;
  for (unsigned extra : {0u, static_cast<unsigned>(CUDA_ARRAY3D_LAYERED),
                         static_cast<unsigned>(CUDA_ARRAY3D_CUBEMAP)}) {
    CUDA_ARRAY3D_DESCRIPTOR dd = d3;
    dd.Flags |= extra;
    if (extra == CUDA_ARRAY3D_CUBEMAP) dd.Depth = 6;
    CUarray a = nullptr;
    CUresult r = cuArray3DCreate(&a, &dd);
    CUsurfObject o = 0;
    CUresult r2 = CUDA_ERROR_UNKNOWN;
    if (r == CUDA_SUCCESS) {
      rd = ArrayRes(a);
      r2 = cuSurfObjectCreate(&o, &rd);
      if (r2 == CUDA_SUCCESS) cuSurfObjectDestroy(o);
      cuArrayDestroy(a);
    }
    Say("3D half4 array flags %#x: create %s, surface object %s", dd.Flags, Name(r), Name(r2));
  }
  // Destroying the array under a live surface object.
  CUarray tmp = MakeArray(4, 4, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
  rd = ArrayRes(tmp);
  CUsurfObject o = 0;
  R(cuSurfObjectCreate(&o, &rd));
  R(cuArrayDestroy(tmp));
  memset(&back, 0, sizeof back);
  R(cuSurfObjectGetResourceDesc(&back, o));
  R(cuSurfObjectDestroy(o));
  // Surface object destroyed from another context current / none.
  rd = ArrayRes(ldst);
  R(cuSurfObjectCreate(&o, &rd));
  cuCtxSetCurrent(nullptr);
  R(cuSurfObjectGetResourceDesc(&back, o));
  R(cuSurfObjectDestroy(o));
  CUsurfObject o3 = 77;
  R(cuSurfObjectCreate(&o3, &rd));
  cuCtxSetCurrent(b.ctx);
  R(cuSurfObjectDestroy(so));
  cuMemFree(lin);
  cuArrayDestroy(ldst);
  cuArrayDestroy(plain);
  return 0;
}

// surfobj:kernel: a kernel reads and writes an array through a surface object (suld/sust).
int CaseSurfKernel() {
  Base b;
  if (!b.Init(false)) return 1;
  CUarray a = MakeArray(16, 8, CU_AD_FORMAT_UNSIGNED_INT32, 1, CUDA_ARRAY3D_SURFACE_LDST);
  std::vector<uint32_t> host(16 * 8);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint32_t>(i * 10);
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = 16 * 4;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = 16 * 4;
  c.Height = 8;
  R(cuMemcpy2D(&c));
  CUDA_RESOURCE_DESC rd = ArrayRes(a);
  CUsurfObject so = 0;
  R(cuSurfObjectCreate(&so, &rd));
  CUmodule m = nullptr;
  if (R(cuModuleLoadData(&m, kSurfPtx)) != CUDA_SUCCESS) return 0;
  CUfunction f = nullptr;
  R(cuModuleGetFunction(&f, m, "bump"));
  unsigned x = 3, y = 2;
  void* args[] = {&so, &x, &y};
  R(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  R(cuCtxSynchronize());
  std::swap(c.srcMemoryType, c.dstMemoryType);
  c.srcArray = a;
  c.srcHost = nullptr;
  c.dstArray = nullptr;
  c.dstHost = host.data();
  c.dstPitch = 16 * 4;
  R(cuMemcpy2D(&c));
  Say("texel (3,2) = %u (was 350), texel (2,3) = %u", host[2 * 16 + 3], host[3 * 16 + 2]);
  R(cuSurfObjectDestroy(so));
  cuModuleUnload(m);
  cuArrayDestroy(a);
  return 0;
}

// ------------------------------------------------------------------------------------------
// cuLaunchCooperativeKernelMultiDevice.

int CaseCoopMulti() {
  Base b;
  if (!b.Init()) return 1;
  int coop = -1, multi = -1, ndev = 0;
  cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, b.dev);
  cuDeviceGetAttribute(&multi, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, b.dev);
  cuDeviceGetCount(&ndev);
  Say("COOPERATIVE_LAUNCH = %d, COOPERATIVE_MULTI_DEVICE_LAUNCH = %d, devices > 1 = %s", coop,
      multi, YesNo(ndev > 1));
  CUdeviceptr buf = 0;
  cuMemAlloc(&buf, 64);
  SetU32(buf, 0);
  void* args[] = {&buf};
  CUDA_LAUNCH_PARAMS lp;
  memset(&lp, 0, sizeof lp);
  lp.function = b.count;
  lp.gridDimX = 2;
  lp.gridDimY = 1;
  lp.gridDimZ = 1;
  lp.blockDimX = 32;
  lp.blockDimY = 1;
  lp.blockDimZ = 1;
  lp.hStream = b.s;
  lp.kernelParams = args;
  CUresult r = R(dl::cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0));
  R(cuCtxSynchronize());
  Say("count after = %u", ReadU32(buf));
  unsigned all = CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC |
                 CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC;
  R(dl::cuLaunchCooperativeKernelMultiDevice(&lp, 1, all));
  R(cuCtxSynchronize());
  Say("count after the second = %u", ReadU32(buf));
  (void)r;
  R(dl::cuLaunchCooperativeKernelMultiDevice(&lp, 1, 4));
  R(dl::cuLaunchCooperativeKernelMultiDevice(nullptr, 1, 0));
  R(dl::cuLaunchCooperativeKernelMultiDevice(&lp, 0, 0));
  R(dl::cuLaunchCooperativeKernelMultiDevice(&lp, static_cast<unsigned>(ndev) + 1, 0));
  CUDA_LAUNCH_PARAMS l2 = lp;
  l2.hStream = nullptr;
  R(dl::cuLaunchCooperativeKernelMultiDevice(&l2, 1, 0));
  l2 = lp;
  l2.hStream = CU_STREAM_PER_THREAD;
  R(dl::cuLaunchCooperativeKernelMultiDevice(&l2, 1, 0));
  l2 = lp;
  l2.function = nullptr;
  R(dl::cuLaunchCooperativeKernelMultiDevice(&l2, 1, 0));
  l2 = lp;
  l2.gridDimX = 100000;
  R(dl::cuLaunchCooperativeKernelMultiDevice(&l2, 1, 0));
  l2 = lp;
  l2.blockDimX = 2048;
  R(dl::cuLaunchCooperativeKernelMultiDevice(&l2, 1, 0));
  l2 = lp;
  l2.kernelParams = nullptr;
  R(dl::cuLaunchCooperativeKernelMultiDevice(&l2, 1, 0));
  CUDA_LAUNCH_PARAMS two[2] = {lp, lp};
  R(dl::cuLaunchCooperativeKernelMultiDevice(two, 2, 0));
  CUstream s2 = nullptr;
  cuStreamCreate(&s2, 0);
  two[1].hStream = s2;
  R(dl::cuLaunchCooperativeKernelMultiDevice(two, 2, 0));
  R(cuCtxSynchronize());
  cuMemFree(buf);
  return 0;
}

// ------------------------------------------------------------------------------------------
// The deprecated execution control: cuFuncSetBlockShape, cuParamSet*, cuLaunch*.

int CaseParamLaunch() {
  Base b;
  if (!b.Init()) return 1;
  CUdeviceptr buf = 0;
  cuMemAlloc(&buf, 64);
  SetU32(buf, 10);
  // add_u32(u64 p, u32 v): p at 0, v at 8.
  R(dl::cuFuncSetBlockShape(b.add, 1, 1, 1));
  R(dl::cuParamSetSize(b.add, 12));
  R(dl::cuParamSetv(b.add, 0, &buf, 8));
  R(dl::cuParamSeti(b.add, 8, 5));
  R(dl::cuLaunch(b.add));
  R(cuCtxSynchronize());
  Say("after cuLaunch: %u (10 + 5 expected)", ReadU32(buf));
  R(dl::cuLaunchGrid(b.add, 1, 1));
  R(cuCtxSynchronize());
  Say("after cuLaunchGrid: %u", ReadU32(buf));
  R(dl::cuLaunchGridAsync(b.add, 1, 1, b.s));
  R(cuStreamSynchronize(b.s));
  Say("after cuLaunchGridAsync: %u", ReadU32(buf));
  R(dl::cuLaunchGridAsync(b.add, 1, 1, nullptr));
  R(cuCtxSynchronize());
  Say("after cuLaunchGridAsync on the null stream: %u", ReadU32(buf));
  // The parameters stay: another launch adds 5 again; a new value.
  R(dl::cuParamSeti(b.add, 8, 100));
  R(dl::cuLaunchGrid(b.add, 1, 1));
  R(cuCtxSynchronize());
  Say("after cuParamSeti 100: %u", ReadU32(buf));
  // count(u64 p) with block shape 4x2x1 and grid 3x2: 48 threads.
  SetU32(buf, 0);
  R(dl::cuFuncSetBlockShape(b.count, 4, 2, 1));
  R(dl::cuParamSetSize(b.count, 8));
  R(dl::cuParamSetv(b.count, 0, &buf, 8));
  R(dl::cuLaunchGrid(b.count, 3, 2));
  R(cuCtxSynchronize());
  Say("count threads after cuLaunchGrid(3, 2) with block 4x2x1: %u", ReadU32(buf));
  SetU32(buf, 0);
  R(dl::cuLaunch(b.count));
  R(cuCtxSynchronize());
  Say("count threads after cuLaunch: %u", ReadU32(buf));
  // dims: block shape, grid, dynamic shared size.
  CUdeviceptr dbuf = 0;
  cuMemAlloc(&dbuf, 64);
  cuMemsetD8(dbuf, 0xff, 64);
  R(dl::cuFuncSetBlockShape(b.dims, 8, 4, 2));
  R(dl::cuFuncSetSharedSize(b.dims, 256));
  R(dl::cuParamSetSize(b.dims, 8));
  R(dl::cuParamSetv(b.dims, 0, &dbuf, 8));
  R(dl::cuLaunchGrid(b.dims, 5, 3));
  R(cuCtxSynchronize());
  uint32_t d[7];
  cuMemcpyDtoH(d, dbuf, sizeof d);
  Say("dims: ntid %u,%u,%u nctaid %u,%u,%u dynamic smem %u", d[0], d[1], d[2], d[3], d[4], d[5],
      d[6]);
  // The block shape set with cuFuncSetBlockShape does not reach cuLaunchKernel.
  cuMemsetD8(dbuf, 0xff, 64);
  void* args[] = {&dbuf};
  R(cuLaunchKernel(b.dims, 2, 1, 1, 3, 1, 1, 0, nullptr, args, nullptr));
  R(cuCtxSynchronize());
  cuMemcpyDtoH(d, dbuf, sizeof d);
  Say("cuLaunchKernel after: ntid %u,%u,%u nctaid %u,%u,%u dynamic smem %u", d[0], d[1], d[2],
      d[3], d[4], d[5], d[6]);
  // A float parameter.
  R(dl::cuFuncSetBlockShape(b.store, 1, 1, 1));
  R(dl::cuParamSetSize(b.store, 12));
  R(dl::cuParamSetv(b.store, 0, &buf, 8));
  R(dl::cuParamSetf(b.store, 8, 2.5f));
  R(dl::cuLaunchGrid(b.store, 1, 1));
  R(cuCtxSynchronize());
  float fv = 0;
  cuMemcpyDtoH(&fv, buf, 4);
  Say("store_f32 after cuParamSetf 2.5: %g", fv);
  // A parameter size larger than the kernel's, and smaller.
  R(dl::cuParamSetSize(b.store, 64));
  R(dl::cuLaunchGrid(b.store, 1, 1));
  R(cuCtxSynchronize());
  R(dl::cuParamSetSize(b.store, 4));
  R(dl::cuLaunchGrid(b.store, 1, 1));
  R(cuCtxSynchronize());
  R(dl::cuParamSetSize(b.store, 12));
  // Argument checking.
  R(dl::cuParamSetSize(b.add, 4097));
  R(dl::cuParamSetSize(b.add, 4096));
  R(dl::cuParamSetSize(b.add, 32764));
  R(dl::cuParamSetSize(b.add, 32768));
  R(dl::cuParamSetSize(b.add, 0));
  R(dl::cuParamSetSize(b.add, 12));
  R(dl::cuParamSeti(b.add, 12, 1));
  R(dl::cuParamSeti(b.add, 4096, 1));
  R(dl::cuParamSeti(b.add, 2, 1));
  R(dl::cuParamSetf(b.add, 4094, 1.0f));
  R(dl::cuParamSetv(b.add, 0, nullptr, 8));
  R(dl::cuParamSetv(b.add, 0, &buf, 0));
  R(dl::cuParamSetv(b.add, 4090, &buf, 8));
  R(dl::cuFuncSetBlockShape(b.add, 0, 1, 1));
  R(dl::cuFuncSetBlockShape(b.add, -1, 1, 1));
  R(dl::cuFuncSetBlockShape(b.add, 1025, 1, 1));
  R(dl::cuFuncSetBlockShape(b.add, 32, 32, 2));
  R(dl::cuFuncSetBlockShape(b.add, 1, 1, 65));
  R(dl::cuFuncSetBlockShape(b.add, 1, 1, 1));
  R(dl::cuLaunchGrid(b.add, 0, 1));
  R(dl::cuLaunchGrid(b.add, -1, 1));
  R(dl::cuLaunchGrid(b.add, 1, 65536));
  R(dl::cuLaunchGrid(b.add, 1, 65535));
  R(cuCtxSynchronize());
  R(dl::cuFuncSetSharedSize(b.add, 48 * 1024));
  R(dl::cuLaunchGrid(b.add, 1, 1));
  R(dl::cuFuncSetSharedSize(b.add, 48 * 1024 + 1));
  R(dl::cuLaunchGrid(b.add, 1, 1));
  R(dl::cuFuncSetSharedSize(b.add, 1u << 30));
  R(dl::cuLaunchGrid(b.add, 1, 1));
  R(cuCtxSynchronize());
  R(dl::cuFuncSetSharedSize(b.add, 0));
  // Block shape too large for the launch.
  R(dl::cuFuncSetBlockShape(b.add, 1024, 2, 1));
  R(dl::cuLaunchGrid(b.add, 1, 1));
  R(dl::cuLaunch(b.add));
  R(cuCtxSynchronize());
  // A function never given a block shape or parameters (fresh module).
  CUmodule m = nullptr;
  cuModuleLoadData(&m, kPtx);
  CUfunction fresh = nullptr;
  cuModuleGetFunction(&fresh, m, "count");
  R(dl::cuLaunch(fresh));
  R(cuCtxSynchronize());
  R(dl::cuFuncSetBlockShape(fresh, 2, 1, 1));
  R(dl::cuLaunch(fresh));
  R(cuCtxSynchronize());
  // After unloading its module.
  R(cuModuleUnload(m));
  // cuFuncSetSharedMemConfig: each value, then a bad one; the attribute after.
  for (int c : {0, 1, 2, 3, -1}) {
    char label[80];
    snprintf(label, sizeof label, "cuFuncSetSharedMemConfig(add, %d)", c);
    Res(label, dl::cuFuncSetSharedMemConfig(b.add, static_cast<CUsharedconfig>(c)));
  }
  // No context current.
  cuCtxSetCurrent(nullptr);
  R(dl::cuFuncSetBlockShape(b.add, 1, 1, 1));
  R(dl::cuParamSetSize(b.add, 12));
  R(dl::cuParamSeti(b.add, 8, 1));
  R(dl::cuLaunch(b.add));
  R(dl::cuLaunchGrid(b.add, 1, 1));
  R(dl::cuLaunchGridAsync(b.add, 1, 1, b.s));
  R(dl::cuFuncSetSharedSize(b.add, 0));
  R(dl::cuFuncSetSharedMemConfig(b.add, CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE));
  cuCtxSetCurrent(b.ctx);
  // Null function.
  R(dl::cuFuncSetBlockShape(nullptr, 1, 1, 1));
  R(dl::cuFuncSetSharedSize(nullptr, 0));
  R(dl::cuFuncSetSharedMemConfig(nullptr, CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE));
  R(dl::cuParamSetSize(nullptr, 8));
  R(dl::cuParamSeti(nullptr, 0, 1));
  R(dl::cuParamSetf(nullptr, 0, 1));
  R(dl::cuParamSetv(nullptr, 0, &buf, 8));
  R(dl::cuParamSetTexRef(nullptr, CU_PARAM_TR_DEFAULT, nullptr));
  R(dl::cuLaunch(nullptr));
  R(dl::cuLaunchGrid(nullptr, 1, 1));
  R(dl::cuLaunchGridAsync(nullptr, 1, 1, nullptr));
  // A CUkernel (library) given where a CUfunction is expected.
  CUlibrary lib = nullptr;
  if (cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS) {
    CUkernel k = nullptr;
    cuLibraryGetKernel(&k, lib, "count");
    CUfunction kf = reinterpret_cast<CUfunction>(k);
    SetU32(buf, 0);
    R(dl::cuFuncSetBlockShape(kf, 4, 1, 1));
    R(dl::cuParamSetSize(kf, 8));
    R(dl::cuParamSetv(kf, 0, &buf, 8));
    R(dl::cuLaunchGrid(kf, 2, 1));
    R(cuCtxSynchronize());
    Say("count threads after cuLaunchGrid of a CUkernel: %u", ReadU32(buf));
    cuLibraryUnload(lib);
  }
  cuMemFree(buf);
  cuMemFree(dbuf);
  return 0;
}

// legacy:sticky: what an error launch leaves behind (a bad launch does not poison the context).
int CaseParamFaulting() {
  Base b;
  if (!b.Init()) return 1;
  // add_u32 with a null pointer parameter: an illegal address.
  CUdeviceptr zero = 0;
  R(dl::cuFuncSetBlockShape(b.add, 1, 1, 1));
  R(dl::cuParamSetSize(b.add, 12));
  R(dl::cuParamSetv(b.add, 0, &zero, 8));
  R(dl::cuParamSeti(b.add, 8, 1));
  R(dl::cuLaunchGrid(b.add, 1, 1));
  R(cuCtxSynchronize());
  R(dl::cuLaunchGrid(b.add, 1, 1));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Texture and surface references.

// texref:standalone: cuTexRefCreate, every setter and getter, defaults, invalid values, destroy.
int CaseTexRef() {
  Base b;
  if (!b.Init(false)) return 1;
  CUtexref t = Garbage<CUtexref>();
  if (R(dl::cuTexRefCreate(&t)) != CUDA_SUCCESS) {
    Say("texref: untouched = %s, null = %s", YesNo(t == Garbage<CUtexref>()), YesNo(t == nullptr));
    R(dl::cuTexRefCreate(nullptr));
    R(dl::cuTexRefDestroy(nullptr));
    return 0;
  }
  Say("texref set = %s", YesNo(t != nullptr));
  R(dl::cuTexRefCreate(nullptr));
  // Defaults.
  CUaddress_mode am = static_cast<CUaddress_mode>(77);
  CUfilter_mode fm = static_cast<CUfilter_mode>(77);
  CUarray_format fmt = static_cast<CUarray_format>(77);
  int nch = 77, aniso = 77;
  unsigned flags = 77;
  float bias = 77, lo = 77, hi = 77, border[4] = {77, 77, 77, 77};
  CUdeviceptr dp = 77;
  CUarray arr = Garbage<CUarray>();
  CUmipmappedArray mma = Garbage<CUmipmappedArray>();
  auto dump = [&](const char* when) {
    Say("%s: GetAddressMode(0) %s %d", when, Name(dl::cuTexRefGetAddressMode(&am, t, 0)), am);
    Say("%s: GetAddressMode(2) %s %d", when, Name(dl::cuTexRefGetAddressMode(&am, t, 2)), am);
    Say("%s: GetFilterMode %s %d", when, Name(dl::cuTexRefGetFilterMode(&fm, t)), fm);
    Say("%s: GetFormat %s %#x %d", when, Name(dl::cuTexRefGetFormat(&fmt, &nch, t)), fmt, nch);
    Say("%s: GetMipmapFilterMode %s %d", when, Name(dl::cuTexRefGetMipmapFilterMode(&fm, t)), fm);
    Say("%s: GetMipmapLevelBias %s %g", when, Name(dl::cuTexRefGetMipmapLevelBias(&bias, t)),
        bias);
    Say("%s: GetMipmapLevelClamp %s %g %g", when,
        Name(dl::cuTexRefGetMipmapLevelClamp(&lo, &hi, t)), lo, hi);
    Say("%s: GetMaxAnisotropy %s %d", when, Name(dl::cuTexRefGetMaxAnisotropy(&aniso, t)), aniso);
    Say("%s: GetBorderColor %s %g %g %g %g", when, Name(dl::cuTexRefGetBorderColor(border, t)),
        border[0], border[1], border[2], border[3]);
    Say("%s: GetFlags %s %#x", when, Name(dl::cuTexRefGetFlags(&flags, t)), flags);
    dp = 77;
    CUresult r = dl::cuTexRefGetAddress(&dp, t);
    Say("%s: GetAddress %s %s", when, Name(r), dp == 77 ? "untouched" : dp == 0 ? "0" : "set");
    arr = Garbage<CUarray>();
    r = dl::cuTexRefGetArray(&arr, t);
    Say("%s: GetArray %s %s", when, Name(r),
        arr == Garbage<CUarray>() ? "untouched" : arr == nullptr ? "null" : "set");
    mma = Garbage<CUmipmappedArray>();
    r = dl::cuTexRefGetMipmappedArray(&mma, t);
    Say("%s: GetMipmappedArray %s %s", when, Name(r),
        mma == Garbage<CUmipmappedArray>() ? "untouched" : mma == nullptr ? "null" : "set");
  };
  dump("defaults");
  // Setters.
  R(dl::cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP));
  R(dl::cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_MIRROR));
  R(dl::cuTexRefSetAddressMode(t, 2, CU_TR_ADDRESS_MODE_BORDER));
  R(dl::cuTexRefSetAddressMode(t, 3, CU_TR_ADDRESS_MODE_CLAMP));
  R(dl::cuTexRefSetAddressMode(t, -1, CU_TR_ADDRESS_MODE_CLAMP));
  R(dl::cuTexRefSetAddressMode(t, 0, static_cast<CUaddress_mode>(9)));
  R(dl::cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
  R(dl::cuTexRefSetFilterMode(t, static_cast<CUfilter_mode>(9)));
  R(dl::cuTexRefSetMipmapFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
  R(dl::cuTexRefSetMipmapFilterMode(t, static_cast<CUfilter_mode>(9)));
  R(dl::cuTexRefSetFormat(t, CU_AD_FORMAT_HALF, 2));
  R(dl::cuTexRefSetFormat(t, CU_AD_FORMAT_FLOAT, 3));
  R(dl::cuTexRefSetFormat(t, CU_AD_FORMAT_FLOAT, 0));
  R(dl::cuTexRefSetFormat(t, static_cast<CUarray_format>(0x77), 1));
  R(dl::cuTexRefSetMipmapLevelBias(t, 1.5f));
  R(dl::cuTexRefSetMipmapLevelClamp(t, 0.5f, 4.0f));
  R(dl::cuTexRefSetMipmapLevelClamp(t, 4.0f, 0.5f));
  R(dl::cuTexRefSetMaxAnisotropy(t, 8));
  R(dl::cuTexRefSetMaxAnisotropy(t, 17));
  float bc[4] = {0.25f, 0.5f, 0.75f, 1.0f};
  R(dl::cuTexRefSetBorderColor(t, bc));
  R(dl::cuTexRefSetBorderColor(t, nullptr));
  R(dl::cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_READ_AS_INTEGER));
  R(dl::cuTexRefSetFlags(t, 0x80000000u));
  dump("after setters");
  // Binding to linear memory, a 2D pitched region, an array, a mipmapped array.
  CUdeviceptr lin = 0;
  cuMemAlloc(&lin, 1 << 20);
  size_t off = 77;
  R(dl::cuTexRefSetAddress(&off, t, lin, 4096));
  Say("byte offset = %zu", off);
  dp = 0;
  R(dl::cuTexRefGetAddress(&dp, t));
  Say("address back equals = %s", YesNo(dp == lin));
  off = 77;
  R(dl::cuTexRefSetAddress(&off, t, lin + 4, 4096));
  Say("byte offset for +4 = %zu", off);
  R(dl::cuTexRefSetAddress(nullptr, t, lin, 4096));
  R(dl::cuTexRefSetAddress(&off, t, lin, size_t{1} << 40));
  R(dl::cuTexRefSetAddress(&off, t, 0, 0));
  CUDA_ARRAY_DESCRIPTOR ad;
  memset(&ad, 0, sizeof ad);
  ad.Width = 64;
  ad.Height = 32;
  ad.Format = CU_AD_FORMAT_FLOAT;
  ad.NumChannels = 1;
  R(dl::cuTexRefSetAddress2D(t, &ad, lin, 512));
  R(dl::cuTexRefSetAddress2D(t, &ad, lin, 100));
  R(dl::cuTexRefSetAddress2D(t, &ad, lin + 4, 512));
  R(dl::cuTexRefSetAddress2D(t, nullptr, lin, 512));
  CUarray a = MakeArray(16, 16, CU_AD_FORMAT_FLOAT, 1, 0);
  R(dl::cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
  R(dl::cuTexRefSetArray(t, a, 0));
  R(dl::cuTexRefSetArray(t, a, 7));
  R(dl::cuTexRefSetArray(t, nullptr, CU_TRSA_OVERRIDE_FORMAT));
  arr = nullptr;
  R(dl::cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
  R(dl::cuTexRefGetArray(&arr, t));
  Say("array back equals = %s", YesNo(arr == a));
  dump("bound to an array");
  CUDA_ARRAY3D_DESCRIPTOR md;
  memset(&md, 0, sizeof md);
  md.Width = 16;
  md.Height = 16;
  md.Format = CU_AD_FORMAT_FLOAT;
  md.NumChannels = 1;
  CUmipmappedArray mm = nullptr;
  cuMipmappedArrayCreate(&mm, &md, 3);
  R(dl::cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT));
  mma = nullptr;
  R(dl::cuTexRefGetMipmappedArray(&mma, t));
  Say("mipmapped array back equals = %s", YesNo(mma == mm));
  R(dl::cuTexRefSetMipmappedArray(t, nullptr, CU_TRSA_OVERRIDE_FORMAT));
  // Null out-parameters.
  R(dl::cuTexRefGetAddressMode(nullptr, t, 0));
  R(dl::cuTexRefGetFilterMode(nullptr, t));
  R(dl::cuTexRefGetFormat(nullptr, &nch, t));
  R(dl::cuTexRefGetFormat(&fmt, nullptr, t));
  R(dl::cuTexRefGetMipmapLevelClamp(nullptr, &hi, t));
  R(dl::cuTexRefGetBorderColor(nullptr, t));
  R(dl::cuTexRefGetFlags(nullptr, t));
  R(dl::cuTexRefGetArray(nullptr, t));
  R(dl::cuTexRefGetAddress(nullptr, t));
  // A texref as a kernel parameter texture.
  Base k;
  k.mod = nullptr;
  if (cuModuleLoadData(&k.mod, kPtx) == CUDA_SUCCESS) {
    CUfunction f = nullptr;
    cuModuleGetFunction(&f, k.mod, "add_u32");
    R(dl::cuParamSetTexRef(f, CU_PARAM_TR_DEFAULT, t));
    R(dl::cuParamSetTexRef(f, 0, t));
    cuModuleUnload(k.mod);
  }
  R(dl::cuTexRefDestroy(t));
  R(dl::cuTexRefDestroy(nullptr));
  cuMipmappedArrayDestroy(mm);
  cuArrayDestroy(a);
  cuMemFree(lin);
  // Without a context.
  cuCtxSetCurrent(nullptr);
  CUtexref t2 = Garbage<CUtexref>();
  if (R(dl::cuTexRefCreate(&t2)) == CUDA_SUCCESS) R(dl::cuTexRefDestroy(t2));
  return 0;
}

// texref:module: cuModuleGetTexRef / cuModuleGetSurfRef of a module declaring .texref/.surfref;
// binding an array to the surface reference and reading it back.
int CaseModuleRefs() {
  Base b;
  if (!b.Init(false)) return 1;
  CUmodule m = nullptr;
  if (R(cuModuleLoadData(&m, kRefPtx)) != CUDA_SUCCESS) return 0;
  CUtexref t = Garbage<CUtexref>(), t2 = nullptr;
  R(dl::cuModuleGetTexRef(&t, m, "tex0"));
  Say("texref: set = %s", YesNo(t != nullptr && t != Garbage<CUtexref>()));
  R(dl::cuModuleGetTexRef(&t2, m, "tex0"));
  Say("second lookup same = %s", YesNo(t2 == t));
  CUtexref t3 = Garbage<CUtexref>();
  R(dl::cuModuleGetTexRef(&t3, m, "surf0"));
  R(dl::cuModuleGetTexRef(&t3, m, "nothing"));
  R(dl::cuModuleGetTexRef(&t3, m, "nope"));
  Say("texref after a failed lookup: untouched = %s", YesNo(t3 == Garbage<CUtexref>()));
  R(dl::cuModuleGetTexRef(nullptr, m, "tex0"));
  R(dl::cuModuleGetTexRef(&t3, m, nullptr));
  R(dl::cuModuleGetTexRef(&t3, nullptr, "tex0"));
  CUsurfref s = Garbage<CUsurfref>(), s2 = nullptr;
  R(dl::cuModuleGetSurfRef(&s, m, "surf0"));
  Say("surfref: set = %s", YesNo(s != nullptr && s != Garbage<CUsurfref>()));
  R(dl::cuModuleGetSurfRef(&s2, m, "surf0"));
  Say("second lookup same = %s", YesNo(s2 == s));
  CUsurfref s3 = Garbage<CUsurfref>();
  R(dl::cuModuleGetSurfRef(&s3, m, "tex0"));
  R(dl::cuModuleGetSurfRef(&s3, m, "nope"));
  R(dl::cuModuleGetSurfRef(nullptr, m, "surf0"));
  R(dl::cuModuleGetSurfRef(&s3, m, nullptr));
  R(dl::cuModuleGetSurfRef(&s3, nullptr, "surf0"));
  // The main module has neither.
  CUmodule main_mod = nullptr;
  cuModuleLoadData(&main_mod, kPtx);
  R(dl::cuModuleGetTexRef(&t3, main_mod, "tex0"));
  R(dl::cuModuleGetSurfRef(&s3, main_mod, "surf0"));
  cuModuleUnload(main_mod);
  // The module's texref: the same setters as a created one.
  CUfilter_mode fm = static_cast<CUfilter_mode>(77);
  if (t != Garbage<CUtexref>() && t != nullptr) {
    R(dl::cuTexRefGetFilterMode(&fm, t));
    Say("module texref filter mode = %d", fm);
    R(dl::cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
    R(dl::cuTexRefGetFilterMode(&fm, t));
    Say("after set = %d", fm);
    R(dl::cuTexRefDestroy(t));
  }
  // Surface reference binding.
  CUarray ldst = MakeArray(8, 8, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
  CUarray plain = MakeArray(8, 8, CU_AD_FORMAT_FLOAT, 1, 0);
  if (s != Garbage<CUsurfref>() && s != nullptr) {
    CUarray back = Garbage<CUarray>();
    R(dl::cuSurfRefGetArray(&back, s));
    Say("unbound: array %s", back == Garbage<CUarray>() ? "untouched"
                             : back == nullptr          ? "null"
                                                        : "set");
    R(dl::cuSurfRefSetArray(s, ldst, 0));
    back = nullptr;
    R(dl::cuSurfRefGetArray(&back, s));
    Say("array back equals = %s", YesNo(back == ldst));
    R(dl::cuSurfRefSetArray(s, plain, 0));
    R(dl::cuSurfRefSetArray(s, ldst, 1));
    R(dl::cuSurfRefSetArray(s, nullptr, 0));
    back = nullptr;
    R(dl::cuSurfRefGetArray(&back, s));
    Say("after the failed binds: equals the first = %s", YesNo(back == ldst));
  }
  R(dl::cuSurfRefSetArray(nullptr, ldst, 0));
  CUarray back = Garbage<CUarray>();
  R(dl::cuSurfRefGetArray(&back, nullptr));
  R(cuModuleUnload(m));
  cuArrayDestroy(ldst);
  cuArrayDestroy(plain);
  return 0;
}

// ------------------------------------------------------------------------------------------
// Sparse mipmapped arrays: memory requirements and cuMemMapArrayAsync.

int CaseMipmapMemReq() {
  Base b;
  if (!b.Init(false)) return 1;
  int sparse = -1, deferred = -1;
  cuDeviceGetAttribute(&sparse, CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, b.dev);
  cuDeviceGetAttribute(&deferred, CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED,
                       b.dev);
  Say("SPARSE_CUDA_ARRAY_SUPPORTED = %d, DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = %d", sparse,
      deferred);
  struct Kind {
    const char* label;
    unsigned w, h, d, flags, levels;
    CUarray_format fmt;
    unsigned ch;
  } kinds[] = {
      {"2D float 256x256 5 levels, deferred", 256, 256, 0, CUDA_ARRAY3D_DEFERRED_MAPPING, 5,
       CU_AD_FORMAT_FLOAT, 1},
      {"2D float 256x256 5 levels, sparse", 256, 256, 0, CUDA_ARRAY3D_SPARSE, 5,
       CU_AD_FORMAT_FLOAT, 1},
      {"2D float 256x256 5 levels, plain", 256, 256, 0, 0, 5, CU_AD_FORMAT_FLOAT, 1},
      {"2D uchar4 1000x700 4 levels, deferred", 1000, 700, 0, CUDA_ARRAY3D_DEFERRED_MAPPING, 4,
       CU_AD_FORMAT_UNSIGNED_INT8, 4},
      {"3D half 64x64x64 3 levels, deferred", 64, 64, 64, CUDA_ARRAY3D_DEFERRED_MAPPING, 3,
       CU_AD_FORMAT_HALF, 1},
      {"1D float 4096 6 levels, deferred", 4096, 0, 0, CUDA_ARRAY3D_DEFERRED_MAPPING, 6,
       CU_AD_FORMAT_FLOAT, 1},
      {"2D float 16x16 1 level, deferred", 16, 16, 0, CUDA_ARRAY3D_DEFERRED_MAPPING, 1,
       CU_AD_FORMAT_FLOAT, 1},
  };
  for (auto& k : kinds) {
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = k.w;
    d.Height = k.h;
    d.Depth = k.d;
    d.Format = k.fmt;
    d.NumChannels = k.ch;
    d.Flags = k.flags;
    CUmipmappedArray mm = nullptr;
    CUresult r = cuMipmappedArrayCreate(&mm, &d, k.levels);
    if (r != CUDA_SUCCESS) {
      Say("%s: create = %s", k.label, Name(r));
      continue;
    }
    CUDA_ARRAY_MEMORY_REQUIREMENTS req;
    memset(&req, 0x5a, sizeof req);
    r = cuMipmappedArrayGetMemoryRequirements(&req, mm, b.dev);
    if (r == CUDA_SUCCESS)
      Say("%s: requirements = %s, size %zu, alignment %zu, reserved %u %u %u %u", k.label,
          Name(r), req.size, req.alignment, req.reserved[0], req.reserved[1], req.reserved[2],
          req.reserved[3]);
    else
      Say("%s: requirements = %s", k.label, Name(r));
    CUDA_ARRAY_MEMORY_REQUIREMENTS areq;
    memset(&areq, 0, sizeof areq);
    CUarray lvl = nullptr;
    if (cuMipmappedArrayGetLevel(&lvl, mm, 0) == CUDA_SUCCESS) {
      r = cuArrayGetMemoryRequirements(&areq, lvl, b.dev);
      Say("%s: level 0 array requirements = %s, size %zu, alignment %zu", k.label, Name(r),
          areq.size, areq.alignment);
    }
    CUDA_ARRAY_SPARSE_PROPERTIES sp;
    memset(&sp, 0, sizeof sp);
    r = cuMipmappedArrayGetSparseProperties(&sp, mm);
    Say("%s: sparse properties = %s, tile %ux%ux%u, miptail first level %u, size %llu, "
        "flags %#x", k.label, Name(r), sp.tileExtent.width, sp.tileExtent.height,
        sp.tileExtent.depth, sp.miptailFirstLevel, sp.miptailSize, sp.flags);
    R(cuMipmappedArrayGetMemoryRequirements(nullptr, mm, b.dev));
    R(cuMipmappedArrayGetMemoryRequirements(&req, mm, 1));
    R(cuMipmappedArrayGetMemoryRequirements(&req, mm, -1));
    cuMipmappedArrayDestroy(mm);
  }
  CUDA_ARRAY_MEMORY_REQUIREMENTS req;
  R(cuMipmappedArrayGetMemoryRequirements(&req, nullptr, b.dev));
  return 0;
}

// maparray: cuMemMapArrayAsync of a sparse array's tile and mip tail, and the argument checks.
int CaseMapArray() {
  Base b;
  if (!b.Init(false)) return 1;
  CUDA_ARRAY3D_DESCRIPTOR d;
  memset(&d, 0, sizeof d);
  d.Width = 256;
  d.Height = 256;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  d.Flags = CUDA_ARRAY3D_SPARSE;
  CUarray a = nullptr;
  if (R(cuArray3DCreate(&a, &d)) != CUDA_SUCCESS) return 0;
  CUDA_ARRAY_SPARSE_PROPERTIES sp;
  memset(&sp, 0, sizeof sp);
  R(cuArrayGetSparseProperties(&sp, a));
  Say("tile %ux%ux%u", sp.tileExtent.width, sp.tileExtent.height, sp.tileExtent.depth);
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = b.dev;
  prop.allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL;
  size_t gran = 0;
  R(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  Say("granularity = %zu", gran);
  CUmemGenericAllocationHandle h = 0;
  if (R(cuMemCreate(&h, 2 << 20, &prop, 0)) != CUDA_SUCCESS) return 0;
  CUarrayMapInfo mi;
  auto reset = [&] {
    memset(&mi, 0, sizeof mi);
    mi.resourceType = CU_RESOURCE_TYPE_ARRAY;
    mi.resource.array = a;
    mi.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
    mi.subresource.sparseLevel.extentWidth = sp.tileExtent.width;
    mi.subresource.sparseLevel.extentHeight = sp.tileExtent.height;
    mi.subresource.sparseLevel.extentDepth = 1;
    mi.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
    mi.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
    mi.memHandle.memHandle = h;
    mi.offset = 0;
    mi.deviceBitMask = 1;
  };
  reset();
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  R(cuStreamSynchronize(b.s));
  // Write a tile's worth through a copy and read it back.
  std::vector<float> in(sp.tileExtent.width * sp.tileExtent.height, 3.5f), out(in.size(), 0);
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = in.data();
  c.srcPitch = sp.tileExtent.width * 4;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = sp.tileExtent.width * 4;
  c.Height = sp.tileExtent.height;
  R(cuMemcpy2D(&c));
  std::swap(c.srcMemoryType, c.dstMemoryType);
  c.srcArray = a;
  c.dstHost = out.data();
  c.dstPitch = c.srcPitch;
  c.srcHost = nullptr;
  c.dstArray = nullptr;
  R(cuMemcpy2D(&c));
  Say("mapped tile reads back = %s", YesNo(out == in));
  // Unmap.
  reset();
  mi.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
  mi.memHandle.memHandle = 0;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  R(cuStreamSynchronize(b.s));
  // Invalid.
  R(cuMemMapArrayAsync(nullptr, 1, b.s));
  reset();
  R(cuMemMapArrayAsync(&mi, 0, b.s));
  R(cuMemMapArrayAsync(&mi, 1, nullptr));
  R(cuStreamSynchronize(nullptr));
  reset();
  mi.subresource.sparseLevel.offsetX = 1;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.subresource.sparseLevel.extentWidth = sp.tileExtent.width + 1;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.subresource.sparseLevel.offsetX = 256;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.subresource.sparseLevel.level = 1;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.offset = 4096;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.offset = 4 << 20;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.flags = 1;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.deviceBitMask = 2;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.memOperationType = static_cast<CUmemOperationType>(9);
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  reset();
  mi.resourceType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  R(cuStreamSynchronize(b.s));
  // A non-sparse array.
  CUarray plain = MakeArray(256, 256, CU_AD_FORMAT_FLOAT, 1, 0);
  reset();
  mi.resource.array = plain;
  R(cuMemMapArrayAsync(&mi, 1, b.s));
  R(cuStreamSynchronize(b.s));
  // A sparse mipmapped array's mip tail.
  CUDA_ARRAY3D_DESCRIPTOR md = d;
  CUmipmappedArray mm = nullptr;
  if (R(cuMipmappedArrayCreate(&mm, &md, 9)) == CUDA_SUCCESS) {
    CUDA_ARRAY_SPARSE_PROPERTIES msp;
    memset(&msp, 0, sizeof msp);
    R(cuMipmappedArrayGetSparseProperties(&msp, mm));
    Say("mip tail: first level %u, size %llu", msp.miptailFirstLevel, msp.miptailSize);
    memset(&mi, 0, sizeof mi);
    mi.resourceType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    mi.resource.mipmap = mm;
    mi.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL;
    mi.subresource.miptail.size = msp.miptailSize;
    mi.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
    mi.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
    mi.memHandle.memHandle = h;
    mi.deviceBitMask = 1;
    R(cuMemMapArrayAsync(&mi, 1, b.s));
    R(cuStreamSynchronize(b.s));
    mi.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
    mi.memHandle.memHandle = 0;
    R(cuMemMapArrayAsync(&mi, 1, b.s));
    R(cuStreamSynchronize(b.s));
    // A sparse level of it.
    memset(&mi, 0, sizeof mi);
    mi.resourceType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    mi.resource.mipmap = mm;
    mi.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
    mi.subresource.sparseLevel.level = 1;
    mi.subresource.sparseLevel.extentWidth = sp.tileExtent.width;
    mi.subresource.sparseLevel.extentHeight = sp.tileExtent.height;
    mi.subresource.sparseLevel.extentDepth = 1;
    mi.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
    mi.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
    mi.memHandle.memHandle = h;
    mi.deviceBitMask = 1;
    R(cuMemMapArrayAsync(&mi, 1, b.s));
    R(cuStreamSynchronize(b.s));
    mi.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
    mi.memHandle.memHandle = 0;
    R(cuMemMapArrayAsync(&mi, 1, b.s));
    R(cuStreamSynchronize(b.s));
    cuMipmappedArrayDestroy(mm);
  }
  // No context current.
  cuCtxSetCurrent(nullptr);
  reset();
  R(cuMemMapArrayAsync(&mi, 1, nullptr));
  cuCtxSetCurrent(b.ctx);
  cuArrayDestroy(plain);
  R(cuArrayDestroy(a));
  R(cuMemRelease(h));
  return 0;
}

// ------------------------------------------------------------------------------------------
// Before cuInit, garbage handles.

int CaseNoInit() {
  CUmodule m = Garbage<CUmodule>();
  R(cuModuleLoad(&m, "/nonexistent.ptx"));
  R(cuModuleLoad(&m, "/etc/hostname"));
  R(cuModuleLoadFatBinary(&m, kPtx));
  CUlinkState st = Garbage<CUlinkState>();
  R(cuLinkCreate(0, nullptr, nullptr, &st));
  R(cuLinkDestroy(nullptr));
  R(cuLinkComplete(nullptr, nullptr, nullptr));
  CUsurfObject so = 0;
  R(cuSurfObjectCreate(&so, nullptr));
  R(cuSurfObjectDestroy(0));
  R(cuSurfObjectGetResourceDesc(nullptr, 0));
  CUtexref t = nullptr;
  R(dl::cuTexRefCreate(&t));
  R(dl::cuTexRefDestroy(nullptr));
  R(dl::cuLaunchGrid(nullptr, 1, 1));
  R(dl::cuParamSetSize(nullptr, 0));
  R(dl::cuLaunchCooperativeKernelMultiDevice(nullptr, 0, 0));
  R(cuMipmappedArrayGetMemoryRequirements(nullptr, nullptr, 0));
  R(cuMemMapArrayAsync(nullptr, 0, nullptr));
  CaseTensorNoCtx(false);
  return 0;
}

const char* const kFunctions[] = {
    "cuLinkAddData", "cuLinkAddFile", "cuLinkComplete", "cuLinkDestroy", "cuModuleGetTexRef",
    "cuModuleGetSurfRef", "cuFuncSetBlockShape", "cuFuncSetSharedSize",
    "cuFuncSetSharedMemConfig", "cuParamSetSize", "cuParamSeti", "cuParamSetf", "cuParamSetv",
    "cuParamSetTexRef", "cuLaunch", "cuLaunchGrid", "cuLaunchGridAsync", "cuTexRefDestroy",
    "cuTexRefSetArray", "cuTexRefSetFilterMode", "cuTexRefGetFilterMode", "cuTexRefSetAddress",
    "cuTexRefGetAddress", "cuTexRefSetFlags", "cuTexRefGetFlags", "cuSurfRefGetArray",
    "cuSurfRefSetArray", "cuSurfObjectDestroy", "cuSurfObjectGetResourceDesc",
    "cuMipmappedArrayGetMemoryRequirements", "cuLaunchCooperativeKernelMultiDevice"};

void CallWithGarbage(const std::string& fn) {
  CUresult r = static_cast<CUresult>(998);
  CUfunction f = Garbage<CUfunction>();
  CUtexref t = Garbage<CUtexref>();
  CUsurfref s = Garbage<CUsurfref>();
  CUlinkState st = Garbage<CUlinkState>();
  CUmodule m = Garbage<CUmodule>();
  unsigned u = 0;
  CUfilter_mode fm = CU_TR_FILTER_MODE_POINT;
  CUdeviceptr dp = 0;
  size_t off = 0;
  CUarray a = nullptr;
  void* cubin = nullptr;
  if (fn == "cuLinkAddData")
    r = cuLinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "x", 0,
                      nullptr, nullptr);
  else if (fn == "cuLinkAddFile")
    r = cuLinkAddFile(st, CU_JIT_INPUT_PTX, "/nonexistent.ptx", 0, nullptr, nullptr);
  else if (fn == "cuLinkComplete")
    r = cuLinkComplete(st, &cubin, &off);
  else if (fn == "cuLinkDestroy")
    r = cuLinkDestroy(st);
  else if (fn == "cuModuleGetTexRef")
    r = dl::cuModuleGetTexRef(&t, m, "tex0");
  else if (fn == "cuModuleGetSurfRef")
    r = dl::cuModuleGetSurfRef(&s, m, "surf0");
  else if (fn == "cuFuncSetBlockShape")
    r = dl::cuFuncSetBlockShape(f, 1, 1, 1);
  else if (fn == "cuFuncSetSharedSize")
    r = dl::cuFuncSetSharedSize(f, 0);
  else if (fn == "cuFuncSetSharedMemConfig")
    r = dl::cuFuncSetSharedMemConfig(f, CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE);
  else if (fn == "cuParamSetSize")
    r = dl::cuParamSetSize(f, 8);
  else if (fn == "cuParamSeti")
    r = dl::cuParamSeti(f, 0, 1);
  else if (fn == "cuParamSetf")
    r = dl::cuParamSetf(f, 0, 1.0f);
  else if (fn == "cuParamSetv")
    r = dl::cuParamSetv(f, 0, &u, 4);
  else if (fn == "cuParamSetTexRef")
    r = dl::cuParamSetTexRef(f, CU_PARAM_TR_DEFAULT, t);
  else if (fn == "cuLaunch")
    r = dl::cuLaunch(f);
  else if (fn == "cuLaunchGrid")
    r = dl::cuLaunchGrid(f, 1, 1);
  else if (fn == "cuLaunchGridAsync")
    r = dl::cuLaunchGridAsync(f, 1, 1, nullptr);
  else if (fn == "cuTexRefDestroy")
    r = dl::cuTexRefDestroy(t);
  else if (fn == "cuTexRefSetArray")
    r = dl::cuTexRefSetArray(t, Garbage<CUarray>(), CU_TRSA_OVERRIDE_FORMAT);
  else if (fn == "cuTexRefSetFilterMode")
    r = dl::cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR);
  else if (fn == "cuTexRefGetFilterMode")
    r = dl::cuTexRefGetFilterMode(&fm, t);
  else if (fn == "cuTexRefSetAddress")
    r = dl::cuTexRefSetAddress(&off, t, 0, 0);
  else if (fn == "cuTexRefGetAddress")
    r = dl::cuTexRefGetAddress(&dp, t);
  else if (fn == "cuTexRefSetFlags")
    r = dl::cuTexRefSetFlags(t, 0);
  else if (fn == "cuTexRefGetFlags")
    r = dl::cuTexRefGetFlags(&u, t);
  else if (fn == "cuSurfRefGetArray")
    r = dl::cuSurfRefGetArray(&a, s);
  else if (fn == "cuSurfRefSetArray")
    r = dl::cuSurfRefSetArray(s, Garbage<CUarray>(), 0);
  else if (fn == "cuSurfObjectDestroy")
    r = cuSurfObjectDestroy(0x5a5a5a5a5a5aull);
  else if (fn == "cuSurfObjectGetResourceDesc") {
    CUDA_RESOURCE_DESC rd;
    r = cuSurfObjectGetResourceDesc(&rd, 0x5a5a5a5a5a5aull);
  } else if (fn == "cuMipmappedArrayGetMemoryRequirements") {
    CUDA_ARRAY_MEMORY_REQUIREMENTS req;
    r = cuMipmappedArrayGetMemoryRequirements(&req, Garbage<CUmipmappedArray>(), 0);
  } else if (fn == "cuLaunchCooperativeKernelMultiDevice") {
    CUDA_LAUNCH_PARAMS lp;
    memset(&lp, 0, sizeof lp);
    lp.function = f;
    lp.gridDimX = lp.gridDimY = lp.gridDimZ = 1;
    lp.blockDimX = lp.blockDimY = lp.blockDimZ = 1;
    r = dl::cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0);
  }
  Say("%s(garbage) = %s", fn.c_str(), Name(r));
}

// garbage:<fn>: after cuInit with the primary context current, a garbage handle.
int CaseGarbage(const std::string& fn) {
  Base b;
  if (!b.Init(false)) return 1;
  CallWithGarbage(fn);
  return 0;
}

// noctx:<fn>: after cuInit, no context current, a garbage handle (what is checked first).
int CaseNoCtxGarbage(const std::string& fn) {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CallWithGarbage(fn);
  return 0;
}

// destroyed:<what>: handles used after their owner is gone (module unloaded, texref destroyed).
int CaseDestroyed(const std::string& what) {
  Base b;
  if (!b.Init()) return 1;
  if (what == "function") {
    CUmodule m = nullptr;
    cuModuleLoadData(&m, kPtx);
    CUfunction f = nullptr;
    cuModuleGetFunction(&f, m, "count");
    R(cuModuleUnload(m));
    R(dl::cuFuncSetBlockShape(f, 1, 1, 1));
    R(dl::cuParamSetSize(f, 8));
    R(dl::cuLaunchGrid(f, 1, 1));
  } else if (what == "texref") {
    CUtexref t = nullptr;
    if (R(dl::cuTexRefCreate(&t)) != CUDA_SUCCESS) return 0;
    R(dl::cuTexRefDestroy(t));
    CUfilter_mode fm = static_cast<CUfilter_mode>(77);
    R(dl::cuTexRefGetFilterMode(&fm, t));
    R(dl::cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
    R(dl::cuTexRefDestroy(t));
  } else if (what == "modulerefs") {
    CUmodule m = nullptr;
    if (R(cuModuleLoadData(&m, kRefPtx)) != CUDA_SUCCESS) return 0;
    CUtexref t = nullptr;
    CUsurfref s = nullptr;
    R(dl::cuModuleGetTexRef(&t, m, "tex0"));
    R(dl::cuModuleGetSurfRef(&s, m, "surf0"));
    R(cuModuleUnload(m));
    CUfilter_mode fm = static_cast<CUfilter_mode>(77);
    R(dl::cuTexRefGetFilterMode(&fm, t));
    CUarray a = nullptr;
    R(dl::cuSurfRefGetArray(&a, s));
  } else if (what == "linkstate") {
    CUlinkState st = nullptr;
    R(cuLinkCreate(0, nullptr, nullptr, &st));
    R(cuLinkDestroy(st));
    R(cuLinkDestroy(st));
  }
  return 0;
}

// ------------------------------------------------------------------------------------------
// crash:<what>: the calls that crashed the H100's driver (SIGSEGV, 2026-12-06) inside the cases
// above, each in a case of its own so that the rest of those cases is measured. Run with
// `legacy_probe crashes [jobs]` (not part of `all`, whose output the drop-in's CTest compares with
// the H100's file).

const char* const kCrashCases[] = {
    "im2col_null_lower", "im2col_null_upper",     "replace_null_map",  "surfobj_null_out",
    "surfobj_garbage_array", "paramseti_negative", "paramsetv_negative",
    "launchgrid_garbage_stream", "surfref_null_out", "memreq_destroyed", "memreq_garbage",
    "maparray_null_memhandle", "maparray_null_array", "maparray_garbage_stream"};

int CaseCrash(const std::string& what) {
  Base b;
  if (!b.Init()) return 1;
  CUDA_ARRAY3D_DESCRIPTOR d;
  memset(&d, 0, sizeof d);
  d.Width = 256;
  d.Height = 256;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  if (what == "im2col_null_lower" || what == "im2col_null_upper") {
    Im2col v;
    (what == "im2col_null_lower" ? v.null_lower : v.null_upper) = true;
    v.Encode(what);
  } else if (what == "replace_null_map") {
    R(cuTensorMapReplaceAddress(nullptr, reinterpret_cast<void*>(kAddr)));
  } else if (what == "surfobj_null_out" || what == "surfobj_garbage_array") {
    CUarray a = MakeArray(16, 8, CU_AD_FORMAT_UNSIGNED_INT32, 1, CUDA_ARRAY3D_SURFACE_LDST);
    CUDA_RESOURCE_DESC rd = ArrayRes(what == "surfobj_null_out" ? a : Garbage<CUarray>());
    CUsurfObject o = 77;
    R(cuSurfObjectCreate(what == "surfobj_null_out" ? nullptr : &o, &rd));
  } else if (what == "paramseti_negative") {
    R(dl::cuParamSetSize(b.add, 12));
    R(dl::cuParamSeti(b.add, -4, 1));
  } else if (what == "paramsetv_negative") {
    CUdeviceptr buf = 0;
    R(dl::cuParamSetv(b.add, -1, &buf, 8));
  } else if (what == "launchgrid_garbage_stream") {
    CUdeviceptr buf = 0;
    cuMemAlloc(&buf, 4);
    R(dl::cuFuncSetBlockShape(b.add, 1, 1, 1));
    R(dl::cuParamSetSize(b.add, 12));
    R(dl::cuParamSetv(b.add, 0, &buf, 8));
    R(dl::cuLaunchGridAsync(b.add, 1, 1, Garbage<CUstream>()));
  } else if (what == "surfref_null_out") {
    CUmodule m = nullptr;
    if (R(cuModuleLoadData(&m, kRefPtx)) != CUDA_SUCCESS) return 0;
    CUsurfref s = nullptr;
    R(dl::cuModuleGetSurfRef(&s, m, "surf0"));
    R(dl::cuSurfRefGetArray(nullptr, s));
  } else if (what == "memreq_destroyed" || what == "memreq_garbage") {
    d.Flags = CUDA_ARRAY3D_DEFERRED_MAPPING;
    CUmipmappedArray mm = nullptr;
    R(cuMipmappedArrayCreate(&mm, &d, 5));
    R(cuMipmappedArrayDestroy(mm));
    CUDA_ARRAY_MEMORY_REQUIREMENTS req;
    R(cuMipmappedArrayGetMemoryRequirements(
        &req, what == "memreq_destroyed" ? mm : Garbage<CUmipmappedArray>(), b.dev));
  } else {  // maparray_*
    d.Flags = CUDA_ARRAY3D_SPARSE;
    CUarray a = nullptr;
    R(cuArray3DCreate(&a, &d));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = b.dev;
    prop.allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL;
    CUmemGenericAllocationHandle h = 0;
    R(cuMemCreate(&h, 2 << 20, &prop, 0));
    CUarrayMapInfo mi;
    memset(&mi, 0, sizeof mi);
    mi.resourceType = CU_RESOURCE_TYPE_ARRAY;
    mi.resource.array = what == "maparray_null_array" ? nullptr : a;
    mi.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
    mi.subresource.sparseLevel.extentWidth = 128;
    mi.subresource.sparseLevel.extentHeight = 128;
    mi.subresource.sparseLevel.extentDepth = 1;
    mi.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
    mi.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
    mi.memHandle.memHandle = what == "maparray_null_memhandle" ? 0 : h;
    mi.deviceBitMask = 1;
    R(cuMemMapArrayAsync(&mi, 1, what == "maparray_garbage_stream" ? Garbage<CUstream>() : b.s));
  }
  return 0;
}

// ------------------------------------------------------------------------------------------

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {
      "module:load",        "module:fatbinary",       "link:basic",
      "link:separate",      "link:errors",            "link:noctx",
      "tensormap:tiled:valid", "tensormap:tiled:invalid", "tensormap:im2col",
      "tensormap:wide",     "tensormap:replace",      "tensormap:noctx",
      "surfobj:basic",      "surfobj:kernel",         "coop:multidevice",
      "legacy:paramlaunch", "legacy:faulting",        "texref:standalone",
      "texref:module",      "mipmap:memreq",          "maparray",
      "noinit"};
  for (const char* w : {"function", "texref", "modulerefs", "linkstate"})
    cases.push_back(std::string("destroyed:") + w);
  for (const char* f : kFunctions) cases.push_back(std::string("garbage:") + f);
  for (const char* f : kFunctions) cases.push_back(std::string("noctx:") + f);
  return cases;
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  ResolveAll();
  auto rest = [&](const char* prefix) { return c.substr(strlen(prefix)); };
  if (c == "module:load") return CaseModuleLoad();
  if (c == "module:fatbinary") return CaseModuleFatBinary();
  if (c == "link:basic") return CaseLinkBasic();
  if (c == "link:separate") return CaseLinkSeparate();
  if (c == "link:errors") return CaseLinkErrors();
  if (c == "link:noctx") return CaseLinkNoCtx();
  if (c == "tensormap:tiled:valid") return CaseTiledValid();
  if (c == "tensormap:tiled:invalid") return CaseTiledInvalid();
  if (c == "tensormap:im2col") return CaseIm2col();
  if (c == "tensormap:wide") return CaseIm2colWide();
  if (c == "tensormap:replace") return CaseReplace();
  if (c == "tensormap:noctx") return CaseTensorNoCtx(true);
  if (c == "surfobj:basic") return CaseSurfObj();
  if (c == "surfobj:kernel") return CaseSurfKernel();
  if (c == "coop:multidevice") return CaseCoopMulti();
  if (c == "legacy:paramlaunch") return CaseParamLaunch();
  if (c == "legacy:faulting") return CaseParamFaulting();
  if (c == "texref:standalone") return CaseTexRef();
  if (c == "texref:module") return CaseModuleRefs();
  if (c == "mipmap:memreq") return CaseMipmapMemReq();
  if (c == "maparray") return CaseMapArray();
  if (c == "noinit") return CaseNoInit();
  if (c.rfind("destroyed:", 0) == 0) return CaseDestroyed(rest("destroyed:"));
  if (c.rfind("garbage:", 0) == 0) return CaseGarbage(rest("garbage:"));
  if (c.rfind("noctx:", 0) == 0) return CaseNoCtxGarbage(rest("noctx:"));
  if (c.rfind("crash:", 0) == 0) return CaseCrash(rest("crash:"));
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
  std::string dir = "/tmp/legacy_probe_run_" + std::to_string(getpid());
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
    fprintf(stderr, "usage: legacy_probe all [jobs] | legacy_probe list | legacy_probe <case>\n");
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
  if (a == "crashes") {
    std::vector<std::string> crashes;
    for (const char* c : kCrashCases) crashes.push_back(std::string("crash:") + c);
    RunAll(argv[0], crashes, argc > 2 ? atoi(argv[2]) : 8, 30.0);
    return 0;
  }
  return RunOne(a);
}
