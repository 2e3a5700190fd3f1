// CUDA array probe for cuhal: how the real driver answers cuArrayCreate, cuArray3DCreate,
// cuArrayGetDescriptor, cuArray3DGetDescriptor, cuArrayDestroy, cuArrayGetPlane,
// cuArrayGetMemoryRequirements, cuArrayGetSparseProperties, the copies to and from arrays
// (cuMemcpyHtoA/AtoH/DtoA/AtoD/AtoA, cuMemcpyHtoAAsync/AtoHAsync) and cuMemcpy2D,
// cuMemcpy2DUnaligned, cuMemcpy2DAsync, cuMemcpy3D, cuMemcpy3DAsync (array and linear
// endpoints), valid and invalid, and how array memory shows in cuMemGetInfo. A plain driver-API
// program (cuda.h, -lcuda), like vmm_probe.cc; see README.md.
//
//   array_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                            `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   array_probe list         the cases
//   array_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address or handle is printed, only relations
// ("handle set = yes"), so that the fake's output can equal the H200's. The `cost` case prints
// latencies (the only lines that legitimately differ).
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

// A handle value the driver never handed out (a pointer to a static word of ours).
CUarray Garbage() {
  static unsigned long long word[64] = {0x1234};
  return reinterpret_cast<CUarray>(&word[8]);
}
// A sentinel written into out-parameters before a call, to see what a failing call leaves.
CUarray Sentinel() { return reinterpret_cast<CUarray>(static_cast<uintptr_t>(0x5eed)); }
const char* HandleState(CUarray a) {
  if (a == nullptr) return "null";
  if (a == Sentinel()) return "unchanged";
  return "set";
}

CUDA_ARRAY_DESCRIPTOR Desc(size_t w, size_t h, CUarray_format f = CU_AD_FORMAT_UNSIGNED_INT8,
                           unsigned ch = 1) {
  CUDA_ARRAY_DESCRIPTOR d;
  memset(&d, 0, sizeof d);
  d.Width = w;
  d.Height = h;
  d.Format = f;
  d.NumChannels = ch;
  return d;
}
CUDA_ARRAY3D_DESCRIPTOR Desc3(size_t w, size_t h, size_t dp, unsigned flags = 0,
                              CUarray_format f = CU_AD_FORMAT_UNSIGNED_INT8, unsigned ch = 1) {
  CUDA_ARRAY3D_DESCRIPTOR d;
  memset(&d, 0, sizeof d);
  d.Width = w;
  d.Height = h;
  d.Depth = dp;
  d.Format = f;
  d.NumChannels = ch;
  d.Flags = flags;
  return d;
}

// Primary context current, a stream, a 1 MiB cuMemAlloc buffer, 1 MiB of pinned host memory.
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream s = nullptr;
  CUdeviceptr buf = 0;
  void* pinned = nullptr;
  bool Init() {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (cuMemAlloc(&buf, 1 << 20) != CUDA_SUCCESS) return false;
    cuMemsetD8(buf, 0, 1 << 20);
    if (cuMemAllocHost(&pinned, 1 << 20) != CUDA_SUCCESS) return false;
    return true;
  }
  size_t Free() {
    size_t f = 0, t = 0;
    cuMemGetInfo(&f, &t);
    return f;
  }
  // Creates a 2D (or 1D, h == 0) array; null on failure (printed).
  CUarray Make(size_t w, size_t h, CUarray_format f = CU_AD_FORMAT_UNSIGNED_INT8,
               unsigned ch = 1) {
    CUDA_ARRAY_DESCRIPTOR d = Desc(w, h, f, ch);
    CUarray a = nullptr;
    CUresult r = cuArrayCreate(&a, &d);
    if (r != CUDA_SUCCESS) Say("setup: cuArrayCreate = %s", Name(r));
    return a;
  }
  CUarray Make3(size_t w, size_t h, size_t dp, unsigned flags = 0,
                CUarray_format f = CU_AD_FORMAT_UNSIGNED_INT8, unsigned ch = 1) {
    CUDA_ARRAY3D_DESCRIPTOR d = Desc3(w, h, dp, flags, f, ch);
    CUarray a = nullptr;
    CUresult r = cuArray3DCreate(&a, &d);
    if (r != CUDA_SUCCESS) Say("setup: cuArray3DCreate = %s", Name(r));
    return a;
  }
  // Is the context still usable: a sync and a plain allocation + copy.
  void Usable(const char* label) {
    CUresult sy = cuCtxSynchronize();
    CUdeviceptr p = 0;
    CUresult a = cuMemAlloc(&p, 4096);
    unsigned v = 5, w = 0;
    CUresult c1 = a == CUDA_SUCCESS ? cuMemcpyHtoD(p, &v, 4) : a;
    CUresult c2 = a == CUDA_SUCCESS ? cuMemcpyDtoH(&w, p, 4) : a;
    if (p) cuMemFree(p);
    Say("%s: cuCtxSynchronize %s, cuMemAlloc %s, copies %s/%s, value ok = %s", label, Name(sy),
        Name(a), Name(c1), Name(c2), YesNo(w == 5));
  }
};

std::vector<unsigned char> Pattern(size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed + i * 7 + (i >> 8));
  return v;
}

const char* FormatName(CUarray_format f) {
  switch (f) {
#define F(x) \
  case CU_AD_FORMAT_##x: return #x;
    F(UNSIGNED_INT8) F(UNSIGNED_INT16) F(UNSIGNED_INT32) F(SIGNED_INT8) F(SIGNED_INT16)
    F(SIGNED_INT32) F(HALF) F(FLOAT) F(NV12) F(UNORM_INT8X1) F(UNORM_INT8X2) F(UNORM_INT8X4)
    F(UNORM_INT16X1) F(UNORM_INT16X2) F(UNORM_INT16X4) F(SNORM_INT8X1) F(SNORM_INT8X2)
    F(SNORM_INT8X4) F(SNORM_INT16X1) F(SNORM_INT16X2) F(SNORM_INT16X4) F(BC1_UNORM)
    F(BC1_UNORM_SRGB) F(BC2_UNORM) F(BC2_UNORM_SRGB) F(BC3_UNORM) F(BC3_UNORM_SRGB)
    F(BC4_UNORM) F(BC4_SNORM) F(BC5_UNORM) F(BC5_SNORM) F(BC6H_UF16) F(BC6H_SF16) F(BC7_UNORM)
    F(BC7_UNORM_SRGB) F(P010) F(P016) F(NV16) F(P210) F(P216) F(YUY2) F(Y210) F(Y216) F(AYUV)
    F(Y410) F(Y416) F(Y444_PLANAR8) F(Y444_PLANAR10) F(YUV444_8bit_SemiPlanar)
    F(YUV444_16bit_SemiPlanar) F(UNORM_INT_101010_2)
#undef F
    default: break;
  }
  static thread_local char buf[32];
  snprintf(buf, sizeof buf, "0x%x", static_cast<unsigned>(f));
  return buf;
}

const CUarray_format kAllFormats[] = {
    CU_AD_FORMAT_UNSIGNED_INT8,  CU_AD_FORMAT_UNSIGNED_INT16, CU_AD_FORMAT_UNSIGNED_INT32,
    CU_AD_FORMAT_SIGNED_INT8,    CU_AD_FORMAT_SIGNED_INT16,   CU_AD_FORMAT_SIGNED_INT32,
    CU_AD_FORMAT_HALF,           CU_AD_FORMAT_FLOAT,          CU_AD_FORMAT_NV12,
    CU_AD_FORMAT_UNORM_INT8X1,   CU_AD_FORMAT_UNORM_INT8X2,   CU_AD_FORMAT_UNORM_INT8X4,
    CU_AD_FORMAT_UNORM_INT16X1,  CU_AD_FORMAT_UNORM_INT16X2,  CU_AD_FORMAT_UNORM_INT16X4,
    CU_AD_FORMAT_SNORM_INT8X1,   CU_AD_FORMAT_SNORM_INT8X2,   CU_AD_FORMAT_SNORM_INT8X4,
    CU_AD_FORMAT_SNORM_INT16X1,  CU_AD_FORMAT_SNORM_INT16X2,  CU_AD_FORMAT_SNORM_INT16X4,
    CU_AD_FORMAT_BC1_UNORM,      CU_AD_FORMAT_BC1_UNORM_SRGB, CU_AD_FORMAT_BC2_UNORM,
    CU_AD_FORMAT_BC2_UNORM_SRGB, CU_AD_FORMAT_BC3_UNORM,      CU_AD_FORMAT_BC3_UNORM_SRGB,
    CU_AD_FORMAT_BC4_UNORM,      CU_AD_FORMAT_BC4_SNORM,      CU_AD_FORMAT_BC5_UNORM,
    CU_AD_FORMAT_BC5_SNORM,      CU_AD_FORMAT_BC6H_UF16,      CU_AD_FORMAT_BC6H_SF16,
    CU_AD_FORMAT_BC7_UNORM,      CU_AD_FORMAT_BC7_UNORM_SRGB, CU_AD_FORMAT_P010,
    CU_AD_FORMAT_P016,           CU_AD_FORMAT_NV16,           CU_AD_FORMAT_P210,
    CU_AD_FORMAT_P216,           CU_AD_FORMAT_YUY2,           CU_AD_FORMAT_Y210,
    CU_AD_FORMAT_Y216,           CU_AD_FORMAT_AYUV,           CU_AD_FORMAT_Y410,
    CU_AD_FORMAT_Y416,           CU_AD_FORMAT_Y444_PLANAR8,   CU_AD_FORMAT_Y444_PLANAR10,
    CU_AD_FORMAT_YUV444_8bit_SemiPlanar, CU_AD_FORMAT_YUV444_16bit_SemiPlanar,
    CU_AD_FORMAT_UNORM_INT_101010_2,
    static_cast<CUarray_format>(0), static_cast<CUarray_format>(0x04),
    static_cast<CUarray_format>(0x11), static_cast<CUarray_format>(0x7fffffff)};

// ------------------------------------------------------------------------------------------
// attrs: the device attributes that bound array sizes.
int CaseAttrs() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  struct {
    const char* name;
    CUdevice_attribute a;
  } attrs[] = {
#define A(x) {#x, CU_DEVICE_ATTRIBUTE_##x},
      A(MAXIMUM_TEXTURE1D_WIDTH) A(MAXIMUM_TEXTURE2D_WIDTH) A(MAXIMUM_TEXTURE2D_HEIGHT)
      A(MAXIMUM_TEXTURE3D_WIDTH) A(MAXIMUM_TEXTURE3D_HEIGHT) A(MAXIMUM_TEXTURE3D_DEPTH)
      A(MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE) A(MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE)
      A(MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE) A(MAXIMUM_TEXTURE2D_LAYERED_WIDTH)
      A(MAXIMUM_TEXTURE2D_LAYERED_HEIGHT) A(MAXIMUM_TEXTURE2D_LAYERED_LAYERS)
      A(MAXIMUM_TEXTURE1D_LAYERED_WIDTH) A(MAXIMUM_TEXTURE1D_LAYERED_LAYERS)
      A(MAXIMUM_TEXTURECUBEMAP_WIDTH) A(MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH)
      A(MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS) A(MAXIMUM_TEXTURE2D_GATHER_WIDTH)
      A(MAXIMUM_TEXTURE2D_GATHER_HEIGHT) A(MAXIMUM_SURFACE1D_WIDTH) A(MAXIMUM_SURFACE2D_WIDTH)
      A(MAXIMUM_SURFACE2D_HEIGHT) A(MAXIMUM_SURFACE3D_WIDTH) A(MAXIMUM_SURFACE3D_HEIGHT)
      A(MAXIMUM_SURFACE3D_DEPTH) A(MAXIMUM_SURFACE1D_LAYERED_WIDTH)
      A(MAXIMUM_SURFACE1D_LAYERED_LAYERS) A(MAXIMUM_SURFACE2D_LAYERED_WIDTH)
      A(MAXIMUM_SURFACE2D_LAYERED_HEIGHT) A(MAXIMUM_SURFACE2D_LAYERED_LAYERS)
      A(MAXIMUM_SURFACECUBEMAP_WIDTH) A(MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH)
      A(MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS) A(TEXTURE_ALIGNMENT) A(TEXTURE_PITCH_ALIGNMENT)
      A(SURFACE_ALIGNMENT) A(MAX_PITCH) A(SPARSE_CUDA_ARRAY_SUPPORTED)
      A(DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED) A(TOTAL_CONSTANT_MEMORY)
#undef A
  };
  for (auto& a : attrs) {
    int v = -99;
    CUresult r = cuDeviceGetAttribute(&v, a.a, 0);
    Say("%s: cuDeviceGetAttribute = %s, value %d", a.name, Name(r), v);
  }
  return 0;
}

int Attr(CUdevice_attribute a) {
  int v = 0;
  cuDeviceGetAttribute(&v, a, 0);
  return v;
}

// Prints the 2D and 3D descriptors read back from `a`.
void ReadBack(const char* label, CUarray a) {
  CUDA_ARRAY_DESCRIPTOR d;
  memset(&d, 0xab, sizeof d);
  CUresult r = cuArrayGetDescriptor(&d, a);
  if (r == CUDA_SUCCESS)
    Say("%s: cuArrayGetDescriptor = %s, W %zu H %zu format %s channels %u", label, Name(r),
        d.Width, d.Height, FormatName(d.Format), d.NumChannels);
  else
    Say("%s: cuArrayGetDescriptor = %s, out untouched = %s", label, Name(r),
        YesNo(reinterpret_cast<unsigned char*>(&d)[0] == 0xab));
  CUDA_ARRAY3D_DESCRIPTOR e;
  memset(&e, 0xab, sizeof e);
  r = cuArray3DGetDescriptor(&e, a);
  if (r == CUDA_SUCCESS)
    Say("%s: cuArray3DGetDescriptor = %s, W %zu H %zu D %zu format %s channels %u flags 0x%x",
        label, Name(r), e.Width, e.Height, e.Depth, FormatName(e.Format), e.NumChannels,
        e.Flags);
  else
    Say("%s: cuArray3DGetDescriptor = %s, out untouched = %s", label, Name(r),
        YesNo(reinterpret_cast<unsigned char*>(&e)[0] == 0xab));
}

// Creates with `d`, prints result and out-parameter state, reads back, destroys.
void Try2(const char* label, const CUDA_ARRAY_DESCRIPTOR& d, bool readback = false) {
  CUarray a = Sentinel();
  CUresult r = cuArrayCreate(&a, &d);
  Say("%s: cuArrayCreate = %s, handle %s", label, Name(r), HandleState(a));
  if (r == CUDA_SUCCESS) {
    if (readback) ReadBack(label, a);
    CUresult x = cuArrayDestroy(a);
    if (x != CUDA_SUCCESS) Say("%s: cuArrayDestroy = %s", label, Name(x));
  }
}
void Try3(const char* label, const CUDA_ARRAY3D_DESCRIPTOR& d, bool readback = false) {
  CUarray a = Sentinel();
  CUresult r = cuArray3DCreate(&a, &d);
  Say("%s: cuArray3DCreate = %s, handle %s", label, Name(r), HandleState(a));
  if (r == CUDA_SUCCESS) {
    if (readback) ReadBack(label, a);
    CUresult x = cuArrayDestroy(a);
    if (x != CUDA_SUCCESS) Say("%s: cuArrayDestroy = %s", label, Name(x));
  }
}

// create: cuArrayCreate, valid shapes and every invalid field.
int CaseCreate() {
  Base b;
  if (!b.Init()) return 1;
  const size_t w1 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
  const size_t w2 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
  const size_t h2 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
  Try2("1x0 u8", Desc(1, 0), true);
  Try2("1x1 u8", Desc(1, 1), true);
  Try2("64x0 float4", Desc(64, 0, CU_AD_FORMAT_FLOAT, 4), true);
  Try2("640x480 u16x2", Desc(640, 480, CU_AD_FORMAT_UNSIGNED_INT16, 2), true);
  Try2("max1D x0", Desc(w1, 0));
  Try2("max1D+1 x0", Desc(w1 + 1, 0));
  Try2("max2Dw x1", Desc(w2, 1));
  Try2("max2Dw+1 x1", Desc(w2 + 1, 1));
  Try2("1 x max2Dh", Desc(1, h2));
  Try2("1 x max2Dh+1", Desc(1, h2 + 1));
  Try2("huge width", Desc(size_t{1} << 40, 0));
  Try2("huge height", Desc(1, size_t{1} << 40));
  Try2("0x0", Desc(0, 0));
  Try2("0x5", Desc(0, 5));
  CUDA_ARRAY_DESCRIPTOR z;
  memset(&z, 0, sizeof z);
  Try2("all zero", z);
  for (unsigned ch : {0u, 1u, 2u, 3u, 4u, 5u, 8u}) {
    char l[64];
    snprintf(l, sizeof l, "channels %u", ch);
    Try2(l, Desc(16, 16, CU_AD_FORMAT_UNSIGNED_INT8, ch));
  }
  CUarray a = Sentinel();
  R(cuArrayCreate(nullptr, &z));
  CUDA_ARRAY_DESCRIPTOR d = Desc(4, 4);
  R(cuArrayCreate(nullptr, &d));
  R(cuArrayCreate(&a, nullptr));
  Say("null descriptor: handle %s", HandleState(a));
  // Two arrays are distinct handles.
  CUarray p = b.Make(8, 8), q = b.Make(8, 8);
  Say("two arrays distinct = %s", YesNo(p != q && p && q));
  if (p) cuArrayDestroy(p);
  if (q) cuArrayDestroy(q);
  b.Usable("afterwards");
  return 0;
}

// formats: every format with channel counts 1..4, 2D 16x16 (and the planar ones' planes).
int CaseFormats() {
  Base b;
  if (!b.Init()) return 1;
  for (CUarray_format f : kAllFormats) {
    std::string ok;
    for (unsigned ch : {1u, 2u, 3u, 4u}) {
      CUDA_ARRAY_DESCRIPTOR d = Desc(16, 16, f, ch);
      CUarray a = nullptr;
      CUresult r = cuArrayCreate(&a, &d);
      Say("%s x%u: cuArrayCreate = %s", FormatName(f), ch, Name(r));
      if (r == CUDA_SUCCESS) {
        CUDA_ARRAY_DESCRIPTOR e;
        memset(&e, 0, sizeof e);
        CUresult g = cuArrayGetDescriptor(&e, a);
        Say("%s x%u: read back %s, W %zu H %zu format %s channels %u", FormatName(f), ch,
            Name(g), e.Width, e.Height, FormatName(e.Format), e.NumChannels);
        CUarray pl = Sentinel();
        CUresult pr = cuArrayGetPlane(&pl, a, 0);
        Say("%s x%u: cuArrayGetPlane 0 = %s, plane %s%s", FormatName(f), ch, Name(pr),
            HandleState(pl), pl == a ? " (same handle)" : "");
        cuArrayDestroy(a);
      }
    }
  }
  // A 1D (Height 0) array of a planar and a block-compressed format.
  Try2("NV12 16x0", Desc(16, 0, CU_AD_FORMAT_NV12, 1));
  Try2("NV12 15x15", Desc(15, 15, CU_AD_FORMAT_NV12, 1));
  Try2("BC1 16x0", Desc(16, 0, CU_AD_FORMAT_BC1_UNORM, 4));
  b.Usable("afterwards");
  return 0;
}

// create3d: cuArray3DCreate shapes and flags, valid and invalid.
int CaseCreate3D() {
  Base b;
  if (!b.Init()) return 1;
  const size_t w3 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
  const size_t h3 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT);
  const size_t d3 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
  const size_t w3a = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE);
  const size_t d3a = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
  const size_t l2 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
  const size_t w2l = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH);
  const size_t l1 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS);
  const size_t wc = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH);
  const size_t lc = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS);
  const size_t w1 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
  const size_t wg = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH);
  const size_t ws1 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH);
  const size_t ws3 = Attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH);
  Try3("1D 8", Desc3(8, 0, 0), true);
  Try3("2D 8x4", Desc3(8, 4, 0), true);
  Try3("3D 8x4x2 float2", Desc3(8, 4, 2, 0, CU_AD_FORMAT_FLOAT, 2), true);
  Try3("0x0x0", Desc3(0, 0, 0));
  Try3("8x0x2 (depth without height)", Desc3(8, 0, 2));
  Try3("0x4x2", Desc3(0, 4, 2));
  Try3("1D max", Desc3(w1, 0, 0));
  Try3("1D max+1", Desc3(w1 + 1, 0, 0));
  Try3("3D maxW x1x1", Desc3(w3, 1, 1));
  Try3("3D maxW+1 x1x1", Desc3(w3 + 1, 1, 1));
  Try3("3D 1 x maxH x1", Desc3(1, h3, 1));
  Try3("3D 1 x maxH+1 x1", Desc3(1, h3 + 1, 1));
  Try3("3D 1x1 x maxD", Desc3(1, 1, d3));
  Try3("3D 1x1 x maxD+1", Desc3(1, 1, d3 + 1));
  Try3("3D altW x1x1", Desc3(w3a, 1, 1));
  Try3("3D altW+1 x1x1", Desc3(w3a + 1, 1, 1));
  Try3("3D 1x1 x altD", Desc3(1, 1, d3a));
  Try3("3D altW x1 x maxD", Desc3(w3a, 1, d3));
  Try3("layered 1D 8 x0 x3", Desc3(8, 0, 3, CUDA_ARRAY3D_LAYERED), true);
  Try3("layered 2D 8x4x3", Desc3(8, 4, 3, CUDA_ARRAY3D_LAYERED), true);
  Try3("layered 2D 8x4x0", Desc3(8, 4, 0, CUDA_ARRAY3D_LAYERED), true);
  Try3("layered 1D 8x0x0", Desc3(8, 0, 0, CUDA_ARRAY3D_LAYERED), true);
  Try3("layered 2D maxlayers", Desc3(8, 4, l2, CUDA_ARRAY3D_LAYERED));
  Try3("layered 2D maxlayers+1", Desc3(8, 4, l2 + 1, CUDA_ARRAY3D_LAYERED));
  Try3("layered 2D maxW+1", Desc3(w2l + 1, 4, 2, CUDA_ARRAY3D_LAYERED));
  Try3("layered 1D maxlayers+1", Desc3(8, 0, l1 + 1, CUDA_ARRAY3D_LAYERED));
  Try3("cubemap 8x8x6", Desc3(8, 8, 6, CUDA_ARRAY3D_CUBEMAP), true);
  Try3("cubemap 8x4x6", Desc3(8, 4, 6, CUDA_ARRAY3D_CUBEMAP));
  Try3("cubemap 8x8x5", Desc3(8, 8, 5, CUDA_ARRAY3D_CUBEMAP));
  Try3("cubemap 8x8x12", Desc3(8, 8, 12, CUDA_ARRAY3D_CUBEMAP));
  Try3("cubemap maxW+1", Desc3(wc + 1, wc + 1, 6, CUDA_ARRAY3D_CUBEMAP));
  Try3("cubemap layered 8x8x12",
       Desc3(8, 8, 12, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED), true);
  Try3("cubemap layered 8x8x9", Desc3(8, 8, 9, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED));
  Try3("cubemap layered maxlayers+6",
       Desc3(8, 8, lc + 6, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED));
  Try3("surface ldst 2D", Desc3(8, 4, 0, CUDA_ARRAY3D_SURFACE_LDST), true);
  Try3("surface ldst 1D max1Dsurf+1", Desc3(ws1 + 1, 0, 0, CUDA_ARRAY3D_SURFACE_LDST));
  Try3("surface ldst 3D maxsurf3D+1", Desc3(ws3 + 1, 1, 1, CUDA_ARRAY3D_SURFACE_LDST));
  Try3("texture gather 2D", Desc3(8, 4, 0, CUDA_ARRAY3D_TEXTURE_GATHER), true);
  Try3("texture gather 1D", Desc3(8, 0, 0, CUDA_ARRAY3D_TEXTURE_GATHER));
  Try3("texture gather 3D", Desc3(8, 4, 2, CUDA_ARRAY3D_TEXTURE_GATHER));
  Try3("texture gather maxW+1", Desc3(wg + 1, 4, 0, CUDA_ARRAY3D_TEXTURE_GATHER));
  Try3("depth texture u8", Desc3(8, 4, 0, CUDA_ARRAY3D_DEPTH_TEXTURE));
  Try3("depth texture float", Desc3(8, 4, 0, CUDA_ARRAY3D_DEPTH_TEXTURE, CU_AD_FORMAT_FLOAT),
       true);
  Try3("depth texture u16", Desc3(8, 4, 0, CUDA_ARRAY3D_DEPTH_TEXTURE,
                                  CU_AD_FORMAT_UNSIGNED_INT16));
  Try3("color attachment", Desc3(8, 4, 0, CUDA_ARRAY3D_COLOR_ATTACHMENT), true);
  Try3("sparse 2D", Desc3(64, 64, 0, CUDA_ARRAY3D_SPARSE), true);
  Try3("deferred mapping 2D", Desc3(64, 64, 0, CUDA_ARRAY3D_DEFERRED_MAPPING), true);
  Try3("video encode decode", Desc3(64, 64, 0, CUDA_ARRAY3D_VIDEO_ENCODE_DECODE), true);
  Try3("flag 0x200", Desc3(8, 4, 0, 0x200));
  Try3("flag 0x1000", Desc3(8, 4, 0, 0x1000));
  Try3("flag 0x80000000", Desc3(8, 4, 0, 0x80000000u));
  Try3("format 0", Desc3(8, 4, 0, 0, static_cast<CUarray_format>(0)));
  Try3("channels 3", Desc3(8, 4, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 3));
  Try3("channels 0", Desc3(8, 4, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 0));
  CUDA_ARRAY3D_DESCRIPTOR z;
  memset(&z, 0, sizeof z);
  Try3("all zero", z);
  CUarray a = Sentinel();
  R(cuArray3DCreate(nullptr, &z));
  CUDA_ARRAY3D_DESCRIPTOR d = Desc3(4, 4, 4);
  R(cuArray3DCreate(nullptr, &d));
  R(cuArray3DCreate(&a, nullptr));
  Say("null descriptor: handle %s", HandleState(a));
  b.Usable("afterwards");
  return 0;
}

// descriptor: cuArrayGetDescriptor / cuArray3DGetDescriptor misuse.
int CaseDescriptor() {
  Base b;
  if (!b.Init()) return 1;
  CUarray a2 = b.Make(16, 8, CU_AD_FORMAT_HALF, 2);
  CUarray a3 = b.Make3(16, 8, 4, 0, CU_AD_FORMAT_SIGNED_INT32, 4);
  CUarray al = b.Make3(16, 8, 4, CUDA_ARRAY3D_LAYERED);
  ReadBack("2D array", a2);
  ReadBack("3D array", a3);
  ReadBack("layered array", al);
  R(cuArrayGetDescriptor(nullptr, a2));
  R(cuArray3DGetDescriptor(nullptr, a2));
  ReadBack("null handle", nullptr);
  ReadBack("garbage handle", Garbage());
  R(cuArrayDestroy(a2));
  ReadBack("destroyed handle", a2);
  cuArrayDestroy(a3);
  cuArrayDestroy(al);
  b.Usable("afterwards");
  return 0;
}

// destroy: cuArrayDestroy misuse.
int CaseDestroy() {
  Base b;
  if (!b.Init()) return 1;
  CUarray a = b.Make(16, 16);
  R(cuArrayDestroy(a));
  R(cuArrayDestroy(a));
  R(cuArrayDestroy(nullptr));
  R(cuArrayDestroy(Garbage()));
  // A destroyed handle is not reused by the next array? (only whether it equals)
  CUarray c = b.Make(16, 16);
  Say("next array reuses the destroyed handle = %s", YesNo(c == a));
  R(cuArrayDestroy(c));
  // Destroy while a copy into it is queued on a stream.
  CUarray d = b.Make(1024, 1024);
  R(cuMemcpyHtoAAsync(d, 0, b.pinned, 1 << 20, b.s));
  R(cuArrayDestroy(d));
  R(cuStreamSynchronize(b.s));
  b.Usable("afterwards");
  return 0;
}

// plane: cuArrayGetPlane on non-planar arrays.
int CasePlane() {
  Base b;
  if (!b.Init()) return 1;
  CUarray a = b.Make(16, 16);
  CUarray a3 = b.Make3(16, 16, 4);
  for (unsigned i : {0u, 1u, 2u, 3u}) {
    CUarray p = Sentinel();
    CUresult r = cuArrayGetPlane(&p, a, i);
    Say("2D u8 plane %u: cuArrayGetPlane = %s, out %s%s", i, Name(r), HandleState(p),
        p == a ? " (same handle)" : "");
    p = Sentinel();
    r = cuArrayGetPlane(&p, a3, i);
    Say("3D u8 plane %u: cuArrayGetPlane = %s, out %s%s", i, Name(r), HandleState(p),
        p == a3 ? " (same handle)" : "");
  }
  R(cuArrayGetPlane(nullptr, a, 0));
  CUarray p = Sentinel();
  CUresult r = cuArrayGetPlane(&p, nullptr, 0);
  Say("null array: cuArrayGetPlane = %s, out %s", Name(r), HandleState(p));
  p = Sentinel();
  r = cuArrayGetPlane(&p, Garbage(), 0);
  Say("garbage array: cuArrayGetPlane = %s, out %s", Name(r), HandleState(p));
  // NV12: a planar format.
  CUDA_ARRAY_DESCRIPTOR d = Desc(16, 16, CU_AD_FORMAT_NV12, 1);
  CUarray nv = nullptr;
  if (R(cuArrayCreate(&nv, &d)) == CUDA_SUCCESS) {
    for (unsigned i : {0u, 1u, 2u}) {
      p = Sentinel();
      r = cuArrayGetPlane(&p, nv, i);
      Say("NV12 plane %u: cuArrayGetPlane = %s, out %s%s", i, Name(r), HandleState(p),
          p == nv ? " (same handle)" : "");
      if (r == CUDA_SUCCESS) ReadBack("NV12 plane", p);
    }
    ReadBack("NV12", nv);
    R(cuArrayDestroy(nv));
  }
  cuArrayDestroy(a3);
  R(cuArrayDestroy(a));
  p = Sentinel();
  r = cuArrayGetPlane(&p, a, 0);
  Say("destroyed array: cuArrayGetPlane = %s, out %s", Name(r), HandleState(p));
  b.Usable("afterwards");
  return 0;
}

void MemReq(const char* label, CUarray a, CUdevice dev) {
  CUDA_ARRAY_MEMORY_REQUIREMENTS m;
  memset(&m, 0xab, sizeof m);
  CUresult r = cuArrayGetMemoryRequirements(&m, a, dev);
  if (r == CUDA_SUCCESS)
    Say("%s: cuArrayGetMemoryRequirements = %s, size %zu alignment %zu reserved0 %u", label,
        Name(r), m.size, m.alignment, m.reserved[0]);
  else
    Say("%s: cuArrayGetMemoryRequirements = %s, out untouched = %s", label, Name(r),
        YesNo(reinterpret_cast<unsigned char*>(&m)[0] == 0xab));
}

void Sparse(const char* label, CUarray a) {
  CUDA_ARRAY_SPARSE_PROPERTIES s;
  memset(&s, 0xab, sizeof s);
  CUresult r = cuArrayGetSparseProperties(&s, a);
  if (r == CUDA_SUCCESS)
    Say("%s: cuArrayGetSparseProperties = %s, tile %ux%ux%u miptailFirstLevel %u miptailSize "
        "%llu flags 0x%x",
        label, Name(r), s.tileExtent.width, s.tileExtent.height, s.tileExtent.depth,
        s.miptailFirstLevel, s.miptailSize, s.flags);
  else
    Say("%s: cuArrayGetSparseProperties = %s, out untouched = %s", label, Name(r),
        YesNo(reinterpret_cast<unsigned char*>(&s)[0] == 0xab));
}

// memreq: cuArrayGetMemoryRequirements and cuArrayGetSparseProperties.
int CaseMemReq() {
  Base b;
  if (!b.Init()) return 1;
  struct Shape {
    const char* label;
    size_t w, h, d;
    unsigned flags;
    CUarray_format f;
    unsigned ch;
  } shapes[] = {
      {"1D 1 u8", 1, 0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"1D 1000 u8", 1000, 0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"1D 65536 float4", 65536, 0, 0, 0, CU_AD_FORMAT_FLOAT, 4},
      {"2D 1x1 u8", 1, 1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"2D 100x100 u8", 100, 100, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"2D 1024x1024 u8", 1024, 1024, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"2D 1000x1000 float4", 1000, 1000, 0, 0, CU_AD_FORMAT_FLOAT, 4},
      {"3D 64x64x64 u8", 64, 64, 64, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"3D 33x17x5 u16x2", 33, 17, 5, 0, CU_AD_FORMAT_UNSIGNED_INT16, 2},
      {"layered 64x64x4 u8", 64, 64, 4, CUDA_ARRAY3D_LAYERED, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"deferred 2D 64x64 u8", 64, 64, 0, CUDA_ARRAY3D_DEFERRED_MAPPING,
       CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"deferred 2D 1000x1000 float4", 1000, 1000, 0, CUDA_ARRAY3D_DEFERRED_MAPPING,
       CU_AD_FORMAT_FLOAT, 4},
      {"sparse 2D 64x64 u8", 64, 64, 0, CUDA_ARRAY3D_SPARSE, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"sparse 3D 64x64x64 float", 64, 64, 64, CUDA_ARRAY3D_SPARSE, CU_AD_FORMAT_FLOAT, 1},
  };
  for (auto& s : shapes) {
    CUarray a = nullptr;
    CUDA_ARRAY3D_DESCRIPTOR d = Desc3(s.w, s.h, s.d, s.flags, s.f, s.ch);
    CUresult r = cuArray3DCreate(&a, &d);
    Say("%s: cuArray3DCreate = %s", s.label, Name(r));
    if (r != CUDA_SUCCESS) continue;
    MemReq(s.label, a, 0);
    Sparse(s.label, a);
    cuArrayDestroy(a);
    if (s.flags != 0) continue;
    // The same shape with deferred mapping: its memory requirements (the array's size).
    std::string label = std::string(s.label) + " (as deferred)";
    d.Flags |= CUDA_ARRAY3D_DEFERRED_MAPPING;
    r = cuArray3DCreate(&a, &d);
    if (r != CUDA_SUCCESS) {
      Say("%s: cuArray3DCreate = %s", label.c_str(), Name(r));
      continue;
    }
    MemReq(label.c_str(), a, 0);
    cuArrayDestroy(a);
  }
  // More shapes, deferred, for the size formula.
  struct Extra {
    size_t w, h, d;
    unsigned flags;
    CUarray_format f;
    unsigned ch;
  } extras[] = {
      {2, 0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},     {64, 0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {65, 0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},    {4096, 0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {4097, 0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},  {65536, 0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {2, 2, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},     {64, 1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {64, 8, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},    {64, 9, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {64, 16, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},   {64, 64, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {65, 64, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},   {128, 128, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {256, 256, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1}, {512, 512, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {64, 64, 0, 0, CU_AD_FORMAT_UNSIGNED_INT16, 1},  {64, 64, 0, 0, CU_AD_FORMAT_FLOAT, 1},
      {64, 64, 0, 0, CU_AD_FORMAT_FLOAT, 2},           {64, 64, 0, 0, CU_AD_FORMAT_FLOAT, 4},
      {1000, 3, 0, 0, CU_AD_FORMAT_FLOAT, 4},          {3, 1000, 0, 0, CU_AD_FORMAT_FLOAT, 4},
      {4096, 4096, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {2, 2, 2, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},     {16, 16, 16, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {32, 32, 32, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},  {64, 64, 2, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {64, 64, 3, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},   {128, 128, 128, 0, CU_AD_FORMAT_FLOAT, 1},
      {64, 64, 4, CUDA_ARRAY3D_LAYERED, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {64, 0, 4, CUDA_ARRAY3D_LAYERED, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {64, 64, 6, CUDA_ARRAY3D_CUBEMAP, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {64, 64, 0, CUDA_ARRAY3D_SURFACE_LDST, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {64, 64, 0, CUDA_ARRAY3D_TEXTURE_GATHER, CU_AD_FORMAT_UNSIGNED_INT8, 1},
  };
  for (auto& x : extras) {
    CUarray a = nullptr;
    CUDA_ARRAY3D_DESCRIPTOR d =
        Desc3(x.w, x.h, x.d, x.flags | CUDA_ARRAY3D_DEFERRED_MAPPING, x.f, x.ch);
    char label[128];
    snprintf(label, sizeof label, "deferred %zux%zux%zu %s x%u flags 0x%x", x.w, x.h, x.d,
             FormatName(x.f), x.ch, x.flags);
    CUresult r = cuArray3DCreate(&a, &d);
    if (r != CUDA_SUCCESS) {
      Say("%s: cuArray3DCreate = %s", label, Name(r));
      continue;
    }
    MemReq(label, a, 0);
    cuArrayDestroy(a);
  }
  CUarray a = b.Make(64, 64);
  MemReq("device 1", a, 1);
  MemReq("device -1", a, -1);
  MemReq("device 99", a, 99);
  R(cuArrayGetMemoryRequirements(nullptr, a, 0));
  R(cuArrayGetSparseProperties(nullptr, a));
  MemReq("null array", nullptr, 0);
  MemReq("garbage array", Garbage(), 0);
  Sparse("null array", nullptr);
  Sparse("garbage array", Garbage());
  cuArrayDestroy(a);
  MemReq("destroyed array", a, 0);
  Sparse("destroyed array", a);
  b.Usable("afterwards");
  return 0;
}

// copy1d: cuMemcpyHtoA/AtoH/DtoA/AtoD/AtoA on 1D and 2D arrays, valid and invalid.
int CaseCopy1D() {
  Base b;
  if (!b.Init()) return 1;
  const size_t n = 4096;
  CUarray a = b.Make(1024, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1);  // 4096 bytes
  CUarray c = b.Make(1024, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  std::vector<unsigned char> in = Pattern(n, 1), out(n, 0);
  R(cuMemcpyHtoA(a, 0, in.data(), n));
  R(cuMemcpyAtoH(out.data(), a, 0, n));
  Say("HtoA then AtoH: data matches = %s", YesNo(in == out));
  // Offsets.
  std::vector<unsigned char> part = Pattern(100, 9), back(100, 0);
  R(cuMemcpyHtoA(a, 1000, part.data(), 100));
  R(cuMemcpyAtoH(back.data(), a, 1000, 100));
  Say("at offset 1000: data matches = %s", YesNo(part == back));
  R(cuMemcpyAtoH(out.data(), a, 0, n));
  bool rest = true;
  for (size_t i = 0; i < n; ++i)
    if (i < 1000 || i >= 1100) rest = rest && out[i] == in[i];
  Say("bytes outside the offset copy untouched = %s", YesNo(rest));
  R(cuMemcpyHtoA(a, 1, part.data(), 4));
  R(cuMemcpyHtoA(a, 0, part.data(), 3));
  R(cuMemcpyAtoH(back.data(), a, 3, 1));
  // Bounds.
  R(cuMemcpyHtoA(a, 0, in.data(), n + 1));
  R(cuMemcpyHtoA(a, n - 4, in.data(), 8));
  R(cuMemcpyHtoA(a, n, in.data(), 4));
  R(cuMemcpyAtoH(out.data(), a, 0, n + 4));
  R(cuMemcpyHtoA(a, 0, in.data(), 0));
  R(cuMemcpyAtoH(out.data(), a, 0, 0));
  R(cuMemcpyHtoA(a, 0, nullptr, 4));
  R(cuMemcpyAtoH(nullptr, a, 0, 4));
  R(cuMemcpyHtoA(nullptr, 0, in.data(), 4));
  R(cuMemcpyAtoH(out.data(), nullptr, 0, 4));
  R(cuMemcpyHtoA(Garbage(), 0, in.data(), 4));
  R(cuMemcpyAtoH(out.data(), Garbage(), 0, 4));
  // Device.
  CUdeviceptr d2 = b.buf + 8192;
  R(cuMemcpyHtoD(b.buf, in.data(), n));
  R(cuMemcpyDtoA(c, 0, b.buf, n));
  R(cuMemcpyAtoD(d2, c, 0, n));
  std::fill(out.begin(), out.end(), 0);
  R(cuMemcpyDtoH(out.data(), d2, n));
  Say("DtoA then AtoD: data matches = %s", YesNo(in == out));
  R(cuMemcpyDtoA(c, 0, b.buf, n + 4));
  R(cuMemcpyAtoD(d2, c, 4, n));
  R(cuMemcpyDtoA(c, 0, 0, 4));
  R(cuMemcpyAtoD(0, c, 0, 4));
  R(cuMemcpyDtoA(Garbage(), 0, b.buf, 4));
  R(cuMemcpyAtoD(d2, Garbage(), 0, 4));
  R(cuMemcpyDtoA(c, 0, b.buf, 0));
  // Host memory given as "device" (unified addressing).
  R(cuMemcpyDtoA(c, 0, reinterpret_cast<CUdeviceptr>(in.data()), 4));
  R(cuMemcpyDtoA(c, 0, reinterpret_cast<CUdeviceptr>(b.pinned), 4));
  // Array to array.
  CUarray e = b.Make(1024, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  R(cuMemcpyHtoA(a, 0, in.data(), n));
  R(cuMemcpyAtoA(e, 0, a, 0, n));
  std::fill(out.begin(), out.end(), 0);
  R(cuMemcpyAtoH(out.data(), e, 0, n));
  Say("AtoA: data matches = %s", YesNo(in == out));
  R(cuMemcpyAtoA(e, 16, a, 32, 64));
  std::vector<unsigned char> o2(64, 0);
  R(cuMemcpyAtoH(o2.data(), e, 16, 64));
  Say("AtoA with offsets: data matches = %s",
      YesNo(memcmp(o2.data(), in.data() + 32, 64) == 0));
  R(cuMemcpyAtoA(e, 0, a, 0, n + 4));
  R(cuMemcpyAtoA(e, 0, e, 0, 16));
  R(cuMemcpyAtoA(e, 0, e, 8, 16));
  R(cuMemcpyAtoA(e, 2, a, 0, 4));
  R(cuMemcpyAtoA(e, 0, a, 0, 0));
  R(cuMemcpyAtoA(nullptr, 0, a, 0, 4));
  R(cuMemcpyAtoA(e, 0, Garbage(), 0, 4));
  CUarray f = b.Make(256, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4);  // another format, 1024 bytes
  R(cuMemcpyAtoA(f, 0, a, 0, 1024));
  CUarray g = b.Make(1024, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1);
  R(cuMemcpyAtoA(g, 0, a, 0, 1024));
  // 2D and 3D arrays with the 1D copies.
  CUarray t = b.Make(64, 16);  // 1024 bytes
  std::vector<unsigned char> in2 = Pattern(1024, 5), out2(1024, 0);
  R(cuMemcpyHtoA(t, 0, in2.data(), 64));
  R(cuMemcpyHtoA(t, 0, in2.data(), 1024));
  R(cuMemcpyAtoH(out2.data(), t, 0, 64));
  R(cuMemcpyAtoH(out2.data(), t, 0, 1024));
  Say("2D array 1024-byte HtoA then AtoH: data matches = %s", YesNo(in2 == out2));
  R(cuMemcpyHtoA(t, 64, in2.data(), 64));
  R(cuMemcpyHtoA(t, 32, in2.data(), 64));
  CUarray u = b.Make3(8, 8, 4);
  R(cuMemcpyHtoA(u, 0, in2.data(), 8));
  R(cuMemcpyHtoA(u, 0, in2.data(), 256));
  // Destroyed.
  R(cuArrayDestroy(e));
  R(cuMemcpyHtoA(e, 0, in.data(), 4));
  R(cuMemcpyAtoH(out.data(), e, 0, 4));
  R(cuMemcpyDtoA(e, 0, b.buf, 4));
  R(cuMemcpyAtoD(b.buf, e, 0, 4));
  R(cuMemcpyAtoA(a, 0, e, 0, 4));
  cuArrayDestroy(a);
  cuArrayDestroy(c);
  cuArrayDestroy(f);
  cuArrayDestroy(g);
  cuArrayDestroy(t);
  cuArrayDestroy(u);
  b.Usable("afterwards");
  return 0;
}

// async: cuMemcpyHtoAAsync / cuMemcpyAtoHAsync.
int CaseAsync() {
  Base b;
  if (!b.Init()) return 1;
  const size_t n = 4096;
  CUarray a = b.Make(4096, 0);
  unsigned char* p = static_cast<unsigned char*>(b.pinned);
  std::vector<unsigned char> in = Pattern(n, 2);
  memcpy(p, in.data(), n);
  R(cuMemcpyHtoAAsync(a, 0, p, n, b.s));
  memset(p + n, 0, n);
  R(cuMemcpyAtoHAsync(p + n, a, 0, n, b.s));
  R(cuStreamSynchronize(b.s));
  Say("pinned HtoAAsync then AtoHAsync: data matches = %s", YesNo(memcmp(p + n, p, n) == 0));
  std::vector<unsigned char> pageable = Pattern(n, 4), back(n, 0);
  R(cuMemcpyHtoAAsync(a, 0, pageable.data(), n, b.s));
  R(cuMemcpyAtoHAsync(back.data(), a, 0, n, b.s));
  R(cuStreamSynchronize(b.s));
  Say("pageable HtoAAsync then AtoHAsync: data matches = %s", YesNo(pageable == back));
  R(cuMemcpyHtoAAsync(a, 0, p, n, nullptr));
  R(cuMemcpyAtoHAsync(p + n, a, 0, n, CU_STREAM_PER_THREAD));
  R(cuCtxSynchronize());
  R(cuMemcpyHtoAAsync(a, 0, p, n + 1, b.s));
  R(cuMemcpyAtoHAsync(p, a, 1, n, b.s));
  R(cuMemcpyHtoAAsync(a, 0, nullptr, 4, b.s));
  R(cuMemcpyAtoHAsync(nullptr, a, 0, 4, b.s));
  R(cuMemcpyHtoAAsync(nullptr, 0, p, 4, b.s));
  R(cuMemcpyHtoAAsync(Garbage(), 0, p, 4, b.s));
  R(cuMemcpyAtoHAsync(p, Garbage(), 0, 4, b.s));
  R(cuMemcpyHtoAAsync(a, 0, p, 0, b.s));
  CUstream dead = nullptr;
  cuStreamCreate(&dead, 0);
  cuStreamDestroy(dead);
  R(cuMemcpyHtoAAsync(a, 0, p, 4, dead));
  R(cuMemcpyAtoHAsync(p, a, 0, 4, dead));
  R(cuStreamSynchronize(b.s));
  // A destroyed array.
  cuArrayDestroy(a);
  R(cuMemcpyHtoAAsync(a, 0, p, 4, b.s));
  R(cuMemcpyAtoHAsync(p, a, 0, 4, b.s));
  b.Usable("afterwards");
  return 0;
}

CUDA_MEMCPY3D Copy3DZero() {
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  return c;
}

CUDA_MEMCPY2D Copy2D() {
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  return c;
}

// copy2d: cuMemcpy2D / cuMemcpy2DUnaligned / cuMemcpy2DAsync with array and linear endpoints.
int CaseCopy2D() {
  Base b;
  if (!b.Init()) return 1;
  const size_t w = 60, h = 20;  // a 60x20 u8 array
  CUarray a = b.Make(w, h);
  CUarray a2 = b.Make(w, h);
  const size_t hp = 64;  // host pitch
  std::vector<unsigned char> host = Pattern(hp * h, 11), back(hp * h, 0);
  // Host (pitched) -> array -> host.
  CUDA_MEMCPY2D c = Copy2D();
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = hp;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = w;
  c.Height = h;
  R(cuMemcpy2D(&c));
  CUDA_MEMCPY2D r = Copy2D();
  r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  r.srcArray = a;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = back.data();
  r.dstPitch = hp;
  r.WidthInBytes = w;
  r.Height = h;
  R(cuMemcpy2D(&r));
  bool eq = true;
  for (size_t y = 0; y < h; ++y) eq = eq && memcmp(&host[y * hp], &back[y * hp], w) == 0;
  Say("host->2D array->host: rows match = %s", YesNo(eq));
  // Whole array read with AtoH as 1D: is the array's linear order rows of Width bytes?
  std::vector<unsigned char> lin(w * h, 0);
  R(cuMemcpyAtoH(lin.data(), a, 0, w * h));
  bool rows = true;
  for (size_t y = 0; y < h; ++y) rows = rows && memcmp(&lin[y * w], &host[y * hp], w) == 0;
  Say("AtoH of the whole 2D array reads rows of Width bytes = %s", YesNo(rows));
  // Sub-rectangle.
  std::vector<unsigned char> sub(10 * 5, 0);
  r.srcXInBytes = 7;
  r.srcY = 3;
  r.dstHost = sub.data();
  r.dstPitch = 10;
  r.WidthInBytes = 10;
  r.Height = 5;
  R(cuMemcpy2D(&r));
  bool se = true;
  for (size_t y = 0; y < 5; ++y) se = se && memcmp(&sub[y * 10], &host[(y + 3) * hp + 7], 10) == 0;
  Say("sub-rectangle (7,3) 10x5 of the array: data matches = %s", YesNo(se));
  // Out of bounds.
  r.srcXInBytes = 55;
  R(cuMemcpy2D(&r));
  r.srcXInBytes = 0;
  r.srcY = 16;
  R(cuMemcpy2D(&r));
  r.srcY = 0;
  r.WidthInBytes = w + 1;
  r.dstPitch = hp;
  r.dstHost = back.data();
  r.Height = 1;
  R(cuMemcpy2D(&r));
  r.WidthInBytes = w;
  r.Height = h + 1;
  R(cuMemcpy2D(&r));
  r.Height = h;
  // Device (pitched) -> array -> device.
  CUdeviceptr dsrc = b.buf, ddst = b.buf + 65536;
  R(cuMemcpyHtoD(dsrc, host.data(), hp * h));
  CUDA_MEMCPY2D d = Copy2D();
  d.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  d.srcDevice = dsrc;
  d.srcPitch = hp;
  d.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  d.dstArray = a2;
  d.WidthInBytes = w;
  d.Height = h;
  R(cuMemcpy2D(&d));
  CUDA_MEMCPY2D e = Copy2D();
  e.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  e.srcArray = a2;
  e.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  e.dstDevice = ddst;
  e.dstPitch = 128;
  e.WidthInBytes = w;
  e.Height = h;
  R(cuMemcpy2D(&e));
  std::vector<unsigned char> dback(128 * h, 0);
  R(cuMemcpyDtoH(dback.data(), ddst, 128 * h));
  eq = true;
  for (size_t y = 0; y < h; ++y) eq = eq && memcmp(&host[y * hp], &dback[y * 128], w) == 0;
  Say("device->2D array->device (pitch 64 -> 128): rows match = %s", YesNo(eq));
  // Array -> array.
  CUarray a3 = b.Make(w, h);
  CUDA_MEMCPY2D f = Copy2D();
  f.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  f.srcArray = a;
  f.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  f.dstArray = a3;
  f.WidthInBytes = w;
  f.Height = h;
  R(cuMemcpy2D(&f));
  std::fill(lin.begin(), lin.end(), 0);
  R(cuMemcpyAtoH(lin.data(), a3, 0, w * h));
  rows = true;
  for (size_t y = 0; y < h; ++y) rows = rows && memcmp(&lin[y * w], &host[y * hp], w) == 0;
  Say("2D array->2D array: data matches = %s", YesNo(rows));
  // Element alignment on a 4-byte format.
  CUarray q = b.Make(16, 4, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  CUDA_MEMCPY2D g = Copy2D();
  g.srcMemoryType = CU_MEMORYTYPE_HOST;
  g.srcHost = host.data();
  g.srcPitch = 64;
  g.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  g.dstArray = q;
  g.WidthInBytes = 64;
  g.Height = 4;
  R(cuMemcpy2D(&g));
  g.WidthInBytes = 62;
  R(cuMemcpy2D(&g));
  g.WidthInBytes = 60;
  g.dstXInBytes = 2;
  R(cuMemcpy2D(&g));
  g.dstXInBytes = 4;
  R(cuMemcpy2D(&g));
  g.WidthInBytes = 64;
  R(cuMemcpy2D(&g));
  g.dstXInBytes = 0;
  R(cuMemcpy2DUnaligned(&g));
  g.WidthInBytes = 62;
  R(cuMemcpy2DUnaligned(&g));
  g.WidthInBytes = 64;
  R(cuMemcpy2DAsync(&g, b.s));
  R(cuStreamSynchronize(b.s));
  // Invalid structures.
  R(cuMemcpy2D(nullptr));
  R(cuMemcpy2DUnaligned(nullptr));
  R(cuMemcpy2DAsync(nullptr, b.s));
  CUDA_MEMCPY2D z = Copy2D();
  R(cuMemcpy2D(&z));
  z.WidthInBytes = 4;
  z.Height = 1;
  R(cuMemcpy2D(&z));
  CUDA_MEMCPY2D m = c;
  m.srcMemoryType = static_cast<CUmemorytype>(0);
  R(cuMemcpy2D(&m));
  m.srcMemoryType = static_cast<CUmemorytype>(5);
  R(cuMemcpy2D(&m));
  m = c;
  m.dstArray = nullptr;
  R(cuMemcpy2D(&m));
  m.dstArray = Garbage();
  R(cuMemcpy2D(&m));
  m = c;
  m.srcHost = nullptr;
  R(cuMemcpy2D(&m));
  m = c;
  m.srcPitch = w - 1;
  R(cuMemcpy2D(&m));
  m.srcPitch = 0;
  m.Height = 1;
  R(cuMemcpy2D(&m));
  m = c;
  m.WidthInBytes = 0;
  R(cuMemcpy2D(&m));
  m = c;
  m.Height = 0;
  R(cuMemcpy2D(&m));
  m = c;
  m.dstPitch = 12345;  // ignored for an array endpoint?
  m.dstDevice = 77;
  m.dstHost = &m;
  R(cuMemcpy2D(&m));
  m = c;
  m.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  m.srcDevice = reinterpret_cast<CUdeviceptr>(host.data());
  R(cuMemcpy2D(&m));
  m.srcDevice = b.buf;
  R(cuMemcpy2D(&m));
  R(cuMemcpy2DAsync(&c, nullptr));
  R(cuCtxSynchronize());
  b.Usable("afterwards");
  cuArrayDestroy(a);
  cuArrayDestroy(a2);
  cuArrayDestroy(a3);
  cuArrayDestroy(q);
  return 0;
}

// linear2d: cuMemcpy2D between host and device memory (no arrays).
int CaseLinear2D() {
  Base b;
  if (!b.Init()) return 1;
  const size_t w = 100, h = 30, sp = 128, dp = 256;
  std::vector<unsigned char> host = Pattern(sp * h, 21), back(dp * h, 0);
  CUDA_MEMCPY2D c = Copy2D();
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = sp;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = b.buf;
  c.dstPitch = dp;
  c.WidthInBytes = w;
  c.Height = h;
  R(cuMemcpy2D(&c));
  CUDA_MEMCPY2D r = Copy2D();
  r.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  r.srcDevice = b.buf;
  r.srcPitch = dp;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = back.data();
  r.dstPitch = dp;
  r.WidthInBytes = w;
  r.Height = h;
  R(cuMemcpy2D(&r));
  bool eq = true, gaps = true;
  for (size_t y = 0; y < h; ++y) {
    eq = eq && memcmp(&host[y * sp], &back[y * dp], w) == 0;
    for (size_t x = w; x < dp; ++x) gaps = gaps && back[y * dp + x] == 0;
  }
  Say("host->device->host pitched: rows match = %s, bytes between rows zero = %s", YesNo(eq),
      YesNo(gaps));
  // With offsets.
  CUDA_MEMCPY2D o = c;
  o.srcXInBytes = 3;
  o.srcY = 2;
  o.dstXInBytes = 5;
  o.dstY = 1;
  o.WidthInBytes = 20;
  o.Height = 4;
  R(cuMemcpy2D(&o));
  std::vector<unsigned char> v(dp * 8, 0);
  R(cuMemcpyDtoH(v.data(), b.buf, dp * 8));
  eq = true;
  for (size_t y = 0; y < 4; ++y)
    eq = eq && memcmp(&v[(y + 1) * dp + 5], &host[(y + 2) * sp + 3], 20) == 0;
  Say("offset copy: data matches = %s", YesNo(eq));
  // Device to device and host to host.
  CUDA_MEMCPY2D dd = c;
  dd.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  dd.srcDevice = b.buf;
  dd.srcPitch = dp;
  dd.dstDevice = b.buf + 65536;
  dd.dstPitch = sp;
  R(cuMemcpy2D(&dd));
  std::vector<unsigned char> hh(sp * h, 0);
  CUDA_MEMCPY2D x = c;
  x.dstMemoryType = CU_MEMORYTYPE_HOST;
  x.dstHost = hh.data();
  x.dstPitch = sp;
  R(cuMemcpy2D(&x));
  eq = true;
  for (size_t y = 0; y < h; ++y) eq = eq && memcmp(&hh[y * sp], &host[y * sp], w) == 0;
  Say("host->host pitched: data matches = %s", YesNo(eq));
  // Pitch rules.
  CUDA_MEMCPY2D m = c;
  m.srcPitch = w - 1;
  R(cuMemcpy2D(&m));
  m = c;
  m.dstPitch = w - 1;
  R(cuMemcpy2D(&m));
  m = c;
  m.srcPitch = 0;
  m.Height = 1;
  R(cuMemcpy2D(&m));
  m = c;
  m.dstPitch = size_t{1} << 40;
  m.Height = 1;
  R(cuMemcpy2D(&m));
  m = c;
  m.srcPitch = 101;
  m.dstPitch = 103;
  R(cuMemcpy2D(&m));
  R(cuMemcpy2DUnaligned(&m));
  m = c;
  m.dstDevice = b.buf + 1;
  R(cuMemcpy2D(&m));
  R(cuMemcpy2DUnaligned(&m));
  m = c;
  m.dstDevice = b.buf + (1 << 20) - 100;  // runs past the allocation
  R(cuMemcpy2D(&m));
  m = c;
  m.dstDevice = 0;
  R(cuMemcpy2D(&m));
  m = c;
  m.dstDevice = 0x10;
  R(cuMemcpy2D(&m));
  m = c;
  m.WidthInBytes = 0;
  R(cuMemcpy2D(&m));
  m = c;
  m.Height = 0;
  R(cuMemcpy2D(&m));
  m = c;
  m.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  m.srcDevice = reinterpret_cast<CUdeviceptr>(host.data());
  R(cuMemcpy2D(&m));
  m = c;
  m.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  R(cuMemcpy2D(&m));
  R(cuMemcpy2DAsync(&c, b.s));
  R(cuStreamSynchronize(b.s));
  b.Usable("afterwards");
  return 0;
}

CUDA_MEMCPY3D Copy3D() {
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  return c;
}

// copy3d: cuMemcpy3D / cuMemcpy3DAsync with 3D array and linear endpoints.
int CaseCopy3D() {
  Base b;
  if (!b.Init()) return 1;
  const size_t w = 12, h = 6, dd = 5, el = 4;  // 12x6x5 u16x2 (4 bytes each)
  CUarray a = b.Make3(w, h, dd, 0, CU_AD_FORMAT_UNSIGNED_INT16, 2);
  const size_t hp = 64, hh = 8;  // host pitch and height
  std::vector<unsigned char> host = Pattern(hp * hh * dd, 31), back(hp * hh * dd, 0);
  CUDA_MEMCPY3D c = Copy3D();
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = hp;
  c.srcHeight = hh;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = w * el;
  c.Height = h;
  c.Depth = dd;
  R(cuMemcpy3D(&c));
  CUDA_MEMCPY3D r = Copy3D();
  r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  r.srcArray = a;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = back.data();
  r.dstPitch = hp;
  r.dstHeight = hh;
  r.WidthInBytes = w * el;
  r.Height = h;
  r.Depth = dd;
  R(cuMemcpy3D(&r));
  auto same = [&](const std::vector<unsigned char>& x, const std::vector<unsigned char>& y) {
    bool eq = true;
    for (size_t z = 0; z < dd; ++z)
      for (size_t yy = 0; yy < h; ++yy)
        eq = eq && memcmp(&x[(z * hh + yy) * hp], &y[(z * hh + yy) * hp], w * el) == 0;
    return eq;
  };
  Say("host->3D array->host: data matches = %s", YesNo(same(host, back)));
  std::vector<unsigned char> lin(w * h * dd * el, 0);
  R(cuMemcpyAtoH(lin.data(), a, 0, lin.size()));
  bool packed = true;
  for (size_t z = 0; z < dd; ++z)
    for (size_t y = 0; y < h; ++y)
      packed = packed &&
               memcmp(&lin[(z * h + y) * w * el], &host[(z * hh + y) * hp], w * el) == 0;
  Say("AtoH of the whole 3D array reads packed rows = %s", YesNo(packed));
  // Sub-box.
  std::vector<unsigned char> box(8 * 2 * 3, 0);
  CUDA_MEMCPY3D s = r;
  s.srcXInBytes = 4;
  s.srcY = 1;
  s.srcZ = 2;
  s.dstHost = box.data();
  s.dstPitch = 8;
  s.dstHeight = 2;
  s.WidthInBytes = 8;
  s.Height = 2;
  s.Depth = 3;
  R(cuMemcpy3D(&s));
  bool be = true;
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 2; ++y)
      be = be && memcmp(&box[(z * 2 + y) * 8], &host[((z + 2) * hh + y + 1) * hp + 4], 8) == 0;
  Say("sub-box (4B,1,2) 8Bx2x3: data matches = %s", YesNo(be));
  // Bounds and fields.
  CUDA_MEMCPY3D m = s;
  m.srcZ = 3;
  R(cuMemcpy3D(&m));
  m = s;
  m.srcXInBytes = 2;
  R(cuMemcpy3D(&m));
  m = s;
  m.WidthInBytes = 6;
  R(cuMemcpy3D(&m));
  m = s;
  m.srcLOD = 1;
  R(cuMemcpy3D(&m));
  m = s;
  m.dstLOD = 1;
  R(cuMemcpy3D(&m));
  m = s;
  m.reserved0 = &m;
  R(cuMemcpy3D(&m));
  m = s;
  m.reserved1 = &m;
  R(cuMemcpy3D(&m));
  m = s;
  m.Depth = 0;
  R(cuMemcpy3D(&m));
  m = s;
  m.dstHeight = 1;
  R(cuMemcpy3D(&m));
  m = s;
  m.dstHeight = 0;
  m.Depth = 1;
  R(cuMemcpy3D(&m));
  m = c;
  m.srcHeight = h - 1;
  R(cuMemcpy3D(&m));
  m = c;
  m.dstArray = Garbage();
  R(cuMemcpy3D(&m));
  m = c;
  m.srcMemoryType = static_cast<CUmemorytype>(9);
  R(cuMemcpy3D(&m));
  R(cuMemcpy3D(nullptr));
  R(cuMemcpy3DAsync(nullptr, b.s));
  // A 2D array through cuMemcpy3D (Depth 1) and a 1D array.
  CUarray t = b.Make(16, 4);
  CUDA_MEMCPY3D q = Copy3D();
  q.srcMemoryType = CU_MEMORYTYPE_HOST;
  q.srcHost = host.data();
  q.srcPitch = 16;
  q.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  q.dstArray = t;
  q.WidthInBytes = 16;
  q.Height = 4;
  q.Depth = 1;
  R(cuMemcpy3D(&q));
  q.Depth = 2;
  R(cuMemcpy3D(&q));
  CUarray o = b.Make(64, 0);
  q.dstArray = o;
  q.WidthInBytes = 64;
  q.Height = 1;
  q.Depth = 1;
  R(cuMemcpy3D(&q));
  q.Height = 2;
  R(cuMemcpy3D(&q));
  // Layered array, as 3D.
  CUarray l = b.Make3(16, 4, 3, CUDA_ARRAY3D_LAYERED);
  q.dstArray = l;
  q.WidthInBytes = 16;
  q.Height = 4;
  q.Depth = 3;
  q.srcHeight = 4;
  R(cuMemcpy3D(&q));
  q.Depth = 4;
  R(cuMemcpy3D(&q));
  // Device 3D (linear) -> array -> device.
  CUarray a2 = b.Make3(w, h, dd, 0, CU_AD_FORMAT_UNSIGNED_INT16, 2);
  R(cuMemcpyHtoD(b.buf, host.data(), host.size()));
  CUDA_MEMCPY3D dv = Copy3D();
  dv.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  dv.srcDevice = b.buf;
  dv.srcPitch = hp;
  dv.srcHeight = hh;
  dv.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  dv.dstArray = a2;
  dv.WidthInBytes = w * el;
  dv.Height = h;
  dv.Depth = dd;
  R(cuMemcpy3DAsync(&dv, b.s));
  CUDA_MEMCPY3D vd = Copy3D();
  vd.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  vd.srcArray = a2;
  vd.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  vd.dstDevice = b.buf + 131072;
  vd.dstPitch = hp;
  vd.dstHeight = hh;
  vd.WidthInBytes = w * el;
  vd.Height = h;
  vd.Depth = dd;
  R(cuMemcpy3DAsync(&vd, b.s));
  R(cuStreamSynchronize(b.s));
  std::fill(back.begin(), back.end(), 0);
  R(cuMemcpyDtoH(back.data(), b.buf + 131072, back.size()));
  Say("device->3D array->device (async): data matches = %s", YesNo(same(host, back)));
  // Array -> array 3D.
  CUarray a3 = b.Make3(w, h, dd, 0, CU_AD_FORMAT_UNSIGNED_INT16, 2);
  CUDA_MEMCPY3D aa = Copy3D();
  aa.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  aa.srcArray = a;
  aa.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  aa.dstArray = a3;
  aa.WidthInBytes = w * el;
  aa.Height = h;
  aa.Depth = dd;
  R(cuMemcpy3D(&aa));
  std::vector<unsigned char> lin2(lin.size(), 0);
  R(cuMemcpyAtoH(lin2.data(), a3, 0, lin2.size()));
  Say("3D array->3D array: data matches = %s", YesNo(lin == lin2));
  // Linear 3D host -> device -> host.
  CUDA_MEMCPY3D ld = Copy3D();
  ld.srcMemoryType = CU_MEMORYTYPE_HOST;
  ld.srcHost = host.data();
  ld.srcPitch = hp;
  ld.srcHeight = hh;
  ld.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  ld.dstDevice = b.buf + 262144;
  ld.dstPitch = hp;
  ld.dstHeight = hh;
  ld.WidthInBytes = 40;
  ld.Height = 7;
  ld.Depth = 5;
  R(cuMemcpy3D(&ld));
  std::vector<unsigned char> lb(host.size(), 0);
  R(cuMemcpyDtoH(lb.data(), b.buf + 262144, lb.size()));
  bool le = true;
  for (size_t z = 0; z < 5; ++z)
    for (size_t y = 0; y < 7; ++y)
      le = le && memcmp(&lb[(z * hh + y) * hp], &host[(z * hh + y) * hp], 40) == 0;
  Say("host->device 3D linear: data matches = %s", YesNo(le));
  ld.dstHeight = 6;
  R(cuMemcpy3D(&ld));
  ld.dstHeight = hh;
  ld.dstPitch = 39;
  R(cuMemcpy3D(&ld));
  // Destroyed array.
  R(cuArrayDestroy(a3));
  R(cuMemcpy3D(&aa));
  R(cuMemcpy3DAsync(&aa, b.s));
  R(cuStreamSynchronize(b.s));
  cuArrayDestroy(a);
  cuArrayDestroy(a2);
  cuArrayDestroy(t);
  cuArrayDestroy(o);
  cuArrayDestroy(l);
  b.Usable("afterwards");
  return 0;
}

// capture: copies with array endpoints on a capturing stream, and the graph they make.
int CaseCapture() {
  Base b;
  if (!b.Init()) return 1;
  CUarray a = b.Make(256, 0);
  unsigned char* p = static_cast<unsigned char*>(b.pinned);
  std::vector<unsigned char> in = Pattern(256, 50);
  memcpy(p, in.data(), 256);
  memset(p + 4096, 0, 256);
  R(cuStreamBeginCapture(b.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  R(cuMemcpyHtoAAsync(a, 0, p, 256, b.s));
  R(cuMemcpyAtoHAsync(p + 4096, a, 0, 256, b.s));
  CUDA_MEMCPY3D c = Copy3DZero();
  c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  c.srcArray = a;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = p + 8192;
  c.WidthInBytes = 256;
  c.Height = 1;
  c.Depth = 1;
  R(cuMemcpy3DAsync(&c, b.s));
  CUgraph g = nullptr;
  R(cuStreamEndCapture(b.s, &g));
  size_t n = 0;
  if (g) {
    R(cuGraphGetNodes(g, nullptr, &n));
    Say("captured nodes = %zu", n);
    CUgraphExec e = nullptr;
    if (R(cuGraphInstantiate(&e, g, 0)) == CUDA_SUCCESS) {
      R(cuGraphLaunch(e, b.s));
      R(cuStreamSynchronize(b.s));
      Say("graph copies: data matches = %s", YesNo(memcmp(p + 4096, in.data(), 256) == 0));
      cuGraphExecDestroy(e);
    }
    cuGraphDestroy(g);
  }
  cuArrayDestroy(a);
  b.Usable("afterwards");
  return 0;
}

// cudapython: NVIDIA cuda-python's test_cuda_array sequence.
int CaseCudaPython() {
  R(cuInit(0));
  CUDA_ARRAY_DESCRIPTOR d;
  memset(&d, 0, sizeof d);
  CUarray a = nullptr;
  R(cuArrayCreate(&a, &d));
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  R(cuCtxCreate(&ctx, nullptr, 0, dev));
  R(cuArrayCreate(&a, &d));
  d.Format = CU_AD_FORMAT_SIGNED_INT8;
  d.NumChannels = 1;
  d.Width = 1;
  R(cuArrayCreate(&a, &d));
  R(cuArrayDestroy(a));
  R(cuCtxDestroy(ctx));
  return 0;
}

// noctx: array calls with cuInit done but no current context (and an array made in one).
int CaseNoContext(bool init) {
  if (init) R(cuInit(0));
  CUDA_ARRAY_DESCRIPTOR d = Desc(16, 16);
  CUDA_ARRAY3D_DESCRIPTOR d3 = Desc3(16, 16, 2);
  CUDA_ARRAY_DESCRIPTOR z;
  memset(&z, 0, sizeof z);
  CUarray a = Sentinel();
  R(cuArrayCreate(&a, &d));
  Say("handle %s", HandleState(a));
  R(cuArrayCreate(&a, &z));
  R(cuArrayCreate(nullptr, &d));
  R(cuArrayCreate(&a, nullptr));
  R(cuArray3DCreate(&a, &d3));
  R(cuArrayDestroy(nullptr));
  R(cuArrayDestroy(Garbage()));
  CUDA_ARRAY_DESCRIPTOR e;
  R(cuArrayGetDescriptor(&e, Garbage()));
  CUDA_ARRAY3D_DESCRIPTOR e3;
  R(cuArray3DGetDescriptor(&e3, Garbage()));
  CUarray p = nullptr;
  R(cuArrayGetPlane(&p, Garbage(), 0));
  CUDA_ARRAY_MEMORY_REQUIREMENTS m;
  R(cuArrayGetMemoryRequirements(&m, Garbage(), 0));
  CUDA_ARRAY_SPARSE_PROPERTIES sp;
  R(cuArrayGetSparseProperties(&sp, Garbage()));
  unsigned char host[64] = {};
  R(cuMemcpyHtoA(Garbage(), 0, host, 4));
  R(cuMemcpyAtoH(host, Garbage(), 0, 4));
  R(cuMemcpyHtoAAsync(Garbage(), 0, host, 4, nullptr));
  R(cuMemcpyAtoHAsync(host, Garbage(), 0, 4, nullptr));
  R(cuMemcpyDtoA(Garbage(), 0, 0, 4));
  R(cuMemcpyAtoD(0, Garbage(), 0, 4));
  R(cuMemcpyAtoA(Garbage(), 0, Garbage(), 0, 4));
  CUDA_MEMCPY2D c = Copy2D();
  R(cuMemcpy2D(&c));
  R(cuMemcpy2D(nullptr));
  R(cuMemcpy2DUnaligned(&c));
  R(cuMemcpy2DAsync(&c, nullptr));
  CUDA_MEMCPY3D c3 = Copy3D();
  R(cuMemcpy3D(&c3));
  R(cuMemcpy3DAsync(&c3, nullptr));
  if (!init) return 0;
  // An array made in the primary context, used with no context current.
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  CUarray x = nullptr;
  R(cuArrayCreate(&x, &d));
  cuCtxSetCurrent(nullptr);
  ReadBack("array of the primary context, none current", x);
  p = Sentinel();
  R(cuArrayGetPlane(&p, x, 0));
  Say("plane %s", HandleState(p));
  R(cuArrayGetMemoryRequirements(&m, x, 0));
  R(cuMemcpyHtoA(x, 0, host, 16));
  R(cuMemcpyAtoH(host, x, 0, 16));
  CUDA_MEMCPY2D h2 = Copy2D();
  h2.srcMemoryType = CU_MEMORYTYPE_HOST;
  h2.srcHost = host;
  h2.srcPitch = 16;
  h2.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  h2.dstArray = x;
  h2.WidthInBytes = 16;
  h2.Height = 2;
  R(cuMemcpy2D(&h2));
  R(cuArrayDestroy(x));
  cuCtxSetCurrent(ctx);
  R(cuArrayDestroy(x));
  return 0;
}

// contexts: arrays belong to the context that made them.
int CaseContexts() {
  R(cuInit(0));
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext c1 = nullptr, c2 = nullptr;
  R(cuCtxCreate(&c1, nullptr, 0, dev));
  CUarray a = nullptr, k = nullptr;
  CUDA_ARRAY_DESCRIPTOR d = Desc(64, 0);
  R(cuArrayCreate(&a, &d));
  R(cuArrayCreate(&k, &d));
  R(cuCtxCreate(&c2, nullptr, 0, dev));  // now current
  std::vector<unsigned char> in = Pattern(64, 40), out(64, 0);
  // Used from another context of the same device.
  R(cuMemcpyHtoA(a, 0, in.data(), 64));
  R(cuMemcpyAtoH(out.data(), a, 0, 64));
  Say("array of context 1 used from context 2: data matches = %s", YesNo(in == out));
  ReadBack("from context 2", a);
  CUdeviceptr p2 = 0;
  R(cuMemAlloc(&p2, 64));
  R(cuMemcpyAtoD(p2, a, 0, 64));
  R(cuArrayDestroy(a));  // destroyed from context 2
  R(cuMemcpyHtoA(a, 0, in.data(), 64));
  // Context 1 destroyed with array k alive: the handle afterwards.
  R(cuCtxDestroy(c1));
  ReadBack("array of a destroyed context", k);
  R(cuMemcpyHtoA(k, 0, in.data(), 64));
  R(cuArrayDestroy(k));
  R(cuMemFree(p2));
  R(cuCtxDestroy(c2));
  return 0;
}

// meminfo: cuMemGetInfo around array creation and destruction (run alone).
int CaseMemInfo() {
  Base b;
  if (!b.Init()) return 1;
  struct Shape {
    const char* label;
    size_t w, h, d;
    CUarray_format f;
    unsigned ch;
  } shapes[] = {
      {"1D 1 u8", 1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"2D 1x1 u8", 1, 1, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"2D 1024x1024 u8", 1024, 1024, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"2D 2048x2048 float4", 2048, 2048, 0, CU_AD_FORMAT_FLOAT, 4},
      {"2D 1000x1000 float4", 1000, 1000, 0, CU_AD_FORMAT_FLOAT, 4},
      {"3D 256x256x256 u8", 256, 256, 256, CU_AD_FORMAT_UNSIGNED_INT8, 1},
      {"1D 65536 float4", 65536, 0, 0, CU_AD_FORMAT_FLOAT, 4},
  };
  for (auto& s : shapes) {
    size_t f0 = b.Free();
    CUarray a = nullptr;
    CUDA_ARRAY3D_DESCRIPTOR d = Desc3(s.w, s.h, s.d, 0, s.f, s.ch);
    CUresult r = cuArray3DCreate(&a, &d);
    size_t f1 = b.Free();
    CUDA_ARRAY_MEMORY_REQUIREMENTS m;
    memset(&m, 0, sizeof m);
    CUresult q = cuArrayGetMemoryRequirements(&m, a, 0);
    CUresult x = cuArrayDestroy(a);
    size_t f2 = b.Free();
    Say("%s: create %s, free memory dropped by %lld bytes, memreq %s size %zu, destroy %s, "
        "returned %lld bytes",
        s.label, Name(r), static_cast<long long>(f0) - static_cast<long long>(f1), Name(q),
        m.size, Name(x), static_cast<long long>(f2) - static_cast<long long>(f1));
  }
  // Sparse and deferred-mapping arrays: do they take memory before being mapped?
  for (unsigned flags : {unsigned{CUDA_ARRAY3D_SPARSE}, unsigned{CUDA_ARRAY3D_DEFERRED_MAPPING}}) {
    size_t g0 = b.Free();
    CUarray a = nullptr;
    CUDA_ARRAY3D_DESCRIPTOR d = Desc3(4096, 4096, 0, flags, CU_AD_FORMAT_FLOAT, 1);
    CUresult r = cuArray3DCreate(&a, &d);
    size_t g1 = b.Free();
    if (r == CUDA_SUCCESS) cuArrayDestroy(a);
    Say("2D 4096x4096 float flags 0x%x: create %s, free memory dropped by %lld bytes", flags,
        Name(r), static_cast<long long>(g0) - static_cast<long long>(g1));
  }
  // 64 small arrays: does each take its own memory?
  size_t f0 = b.Free();
  std::vector<CUarray> v(64, nullptr);
  for (auto& a : v) {
    CUDA_ARRAY_DESCRIPTOR d = Desc(64, 64);
    cuArrayCreate(&a, &d);
  }
  size_t f1 = b.Free();
  for (auto& a : v) cuArrayDestroy(a);
  size_t f2 = b.Free();
  Say("64 arrays of 64x64 u8: free memory dropped by %lld bytes, returned %lld bytes",
      static_cast<long long>(f0) - static_cast<long long>(f1),
      static_cast<long long>(f2) - static_cast<long long>(f1));
  // Too big for the device.
  size_t fr = 0, tot = 0;
  cuMemGetInfo(&fr, &tot);
  CUarray big = Sentinel();
  // 65536 x 65536 x 16 B = 64 GiB; and 3D 16384^2 x 2048 x16B = 8 TiB.
  CUDA_ARRAY3D_DESCRIPTOR d = Desc3(65536, 65536, 0, 0, CU_AD_FORMAT_FLOAT, 4);
  CUresult r = cuArray3DCreate(&big, &d);
  Say("2D 65536x65536 float4 (64 GiB): cuArray3DCreate = %s, handle %s", Name(r),
      HandleState(big));
  if (r == CUDA_SUCCESS) cuArrayDestroy(big);
  big = Sentinel();
  d = Desc3(16384, 16384, 2048, 0, CU_AD_FORMAT_FLOAT, 4);
  r = cuArray3DCreate(&big, &d);
  Say("3D 16384x16384x2048 float4 (8 TiB): cuArray3DCreate = %s, handle %s", Name(r),
      HandleState(big));
  if (r == CUDA_SUCCESS) cuArrayDestroy(big);
  // A context destroyed with a 64 MiB array alive: is the memory given back?
  CUcontext c = nullptr;
  f0 = b.Free();
  R(cuCtxCreate(&c, nullptr, 0, b.dev));
  f1 = b.Free();
  CUarray live = nullptr;
  CUDA_ARRAY_DESCRIPTOR ld = Desc(4096, 4096, CU_AD_FORMAT_FLOAT, 1);
  R(cuArrayCreate(&live, &ld));
  f2 = b.Free();
  R(cuCtxDestroy(c));
  cuCtxSetCurrent(b.ctx);
  size_t f3 = b.Free();
  Say("context with a 64 MiB array: array took %lld bytes, destroying the context returned "
      "%lld bytes more than the context took",
      static_cast<long long>(f1) - static_cast<long long>(f2),
      (static_cast<long long>(f3) - static_cast<long long>(f2)) -
          (static_cast<long long>(f0) - static_cast<long long>(f1)));
  b.Usable("afterwards");
  return 0;
}

// many: 2000 arrays made and destroyed (handle churn).
int CaseMany() {
  Base b;
  if (!b.Init()) return 1;
  std::vector<CUarray> v(2000, nullptr);
  int ok = 0;
  for (auto& a : v) {
    CUDA_ARRAY_DESCRIPTOR d = Desc(32, 32);
    if (cuArrayCreate(&a, &d) == CUDA_SUCCESS) ++ok;
  }
  Say("created = %d of 2000", ok);
  int gone = 0;
  for (auto& a : v)
    if (cuArrayDestroy(a) == CUDA_SUCCESS) ++gone;
  Say("destroyed = %d", gone);
  b.Usable("afterwards");
  return 0;
}

// cost: latency of the array calls (the only lines that differ from run to run).
int CaseCost() {
  Base b;
  if (!b.Init()) return 1;
  const int n = 200;
  auto time = [&](const char* what, auto fn) {
    double t0 = NowUs();
    for (int i = 0; i < n; ++i) fn();
    Say("%s = %.2f us", what, (NowUs() - t0) / n);
  };
  time("cuArrayCreate+cuArrayDestroy 64x64 u8", [&] {
    CUDA_ARRAY_DESCRIPTOR d = Desc(64, 64);
    CUarray a = nullptr;
    cuArrayCreate(&a, &d);
    cuArrayDestroy(a);
  });
  CUarray a = b.Make(64, 64);
  std::vector<unsigned char> h(4096);
  time("cuMemcpyHtoA 4 KiB", [&] { cuMemcpyHtoA(a, 0, h.data(), 4096); });
  time("cuMemcpyAtoH 4 KiB", [&] { cuMemcpyAtoH(h.data(), a, 0, 4096); });
  cuArrayDestroy(a);
  return 0;
}

std::vector<std::string> Cases() {
  return {"attrs",   "create",   "formats", "create3d", "descriptor", "destroy",
          "plane",   "memreq",   "copy1d",  "async",    "copy2d",     "linear2d",
          "copy3d",  "capture", "cudapython", "noctx", "noinit",   "contexts",   "meminfo",
          "many",    "cost"};
}

// Cases that read cuMemGetInfo deltas or time calls: run one at a time (listed last).
bool IsAlone(const std::string& c) { return c == "meminfo" || c == "many" || c == "cost"; }

int RunOne(const std::string& c) {
  g_case = c.c_str();
  if (c == "attrs") return CaseAttrs();
  if (c == "create") return CaseCreate();
  if (c == "formats") return CaseFormats();
  if (c == "create3d") return CaseCreate3D();
  if (c == "descriptor") return CaseDescriptor();
  if (c == "destroy") return CaseDestroy();
  if (c == "plane") return CasePlane();
  if (c == "memreq") return CaseMemReq();
  if (c == "copy1d") return CaseCopy1D();
  if (c == "async") return CaseAsync();
  if (c == "copy2d") return CaseCopy2D();
  if (c == "linear2d") return CaseLinear2D();
  if (c == "copy3d") return CaseCopy3D();
  if (c == "capture") return CaseCapture();
  if (c == "cudapython") return CaseCudaPython();
  if (c == "noctx") return CaseNoContext(true);
  if (c == "noinit") return CaseNoContext(false);
  if (c == "contexts") return CaseContexts();
  if (c == "meminfo") return CaseMemInfo();
  if (c == "many") return CaseMany();
  if (c == "cost") return CaseCost();
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
  std::string dir = "/tmp/array_probe_" + std::to_string(getpid());
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
    fprintf(stderr, "usage: array_probe all [jobs] | array_probe list | array_probe <case>\n");
    return 2;
  }
  std::string a = argv[1];
  if (a == "list") {
    for (auto& c : Cases()) printf("%s\n", c.c_str());
    return 0;
  }
  if (a == "all") {
    // The cases that measure cuMemGetInfo (device-wide free memory) run alone, after the rest.
    int jobs = argc > 2 ? atoi(argv[2]) : 8;
    std::vector<std::string> parallel, alone;
    for (auto& c : Cases()) (IsAlone(c) ? alone : parallel).push_back(c);
    RunAll(argv[0], parallel, jobs, 30.0);
    RunAll(argv[0], alone, 1, 60.0);
    return 0;
  }
  return RunOne(a);
}
