// Virtual memory management (VMM) probe for cuhal: how the real driver answers
// cuMemGetAllocationGranularity, cuMemCreate/Release, cuMemAddressReserve/Free, cuMemMap/Unmap,
// cuMemSetAccess/GetAccess, cuMemGetAllocationPropertiesFromHandle, cuMemRetainAllocationHandle
// and cuMemExport/ImportFromShareableHandle, valid and invalid, and how the rest of the driver
// (copies, memsets, pointer attributes, cuMemGetInfo, cuMemFree) treats mapped, unmapped and
// inaccessible virtual addresses. A plain driver-API program (cuda.h, -lcuda), like
// graph_probe.cc; see README.md.
//
//   vmm_probe all [jobs]   every case in its own process (fork+exec before any CUDA call),
//                          `jobs` at a time, each with a timeout (HANG / SIGNAL n reported)
//   vmm_probe list         the cases
//   vmm_probe <case>       one case
//
// Every line is "<case>: <what> = <result>", CUresults by name; each case ends with
// "== <case>: exit 0 | SIGNAL n | HANG". No raw address, handle or descriptor is printed, only
// relations ("aligned to granularity = yes"), so that the fake's output can equal the H200's.
// The `cost` case prints latencies (the only lines that legitimately differ).
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

CUmemAllocationProp DeviceProp(int dev = 0) {
  CUmemAllocationProp p;
  memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  return p;
}

CUmemAccessDesc Access(unsigned long long flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                       CUmemLocationType type = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0) {
  CUmemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location.type = type;
  d.location.id = id;
  d.flags = static_cast<CUmemAccess_flags>(flags);
  return d;
}

// Primary context current, the granularity, a stream, a 1 MiB cuMemAlloc buffer.
struct Base {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream s = nullptr;
  size_t g = 0;
  CUdeviceptr buf = 0;
  bool Init() {
    if (cuInit(0) != CUDA_SUCCESS) return false;
    cuDeviceGet(&dev, 0);
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return false;
    cuCtxSetCurrent(ctx);
    CUmemAllocationProp p = DeviceProp();
    if (cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
      return false;
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (cuMemAlloc(&buf, 1 << 20) != CUDA_SUCCESS) return false;
    cuMemsetD8(buf, 0, 1 << 20);
    return true;
  }
  size_t Free() {
    size_t f = 0, t = 0;
    cuMemGetInfo(&f, &t);
    return f;
  }
  // Creates `n` bytes of device memory (or the property given); 0 on failure (printed).
  CUmemGenericAllocationHandle Create(size_t n, const CUmemAllocationProp* prop = nullptr) {
    CUmemAllocationProp p = prop ? *prop : DeviceProp();
    CUmemGenericAllocationHandle h = 0;
    CUresult r = cuMemCreate(&h, n, &p, 0);
    if (r != CUDA_SUCCESS) {
      Say("setup: cuMemCreate = %s", Name(r));
      return 0;
    }
    return h;
  }
  CUdeviceptr Reserve(size_t n) {
    CUdeviceptr p = 0;
    CUresult r = cuMemAddressReserve(&p, n, 0, 0, 0);
    if (r != CUDA_SUCCESS) Say("setup: cuMemAddressReserve = %s", Name(r));
    return p;
  }
  bool MapRw(CUdeviceptr va, size_t n, CUmemGenericAllocationHandle h, size_t off = 0) {
    CUresult r = cuMemMap(va, n, off, h, 0);
    if (r != CUDA_SUCCESS) {
      Say("setup: cuMemMap = %s", Name(r));
      return false;
    }
    CUmemAccessDesc d = Access();
    r = cuMemSetAccess(va, n, &d, 1);
    if (r != CUDA_SUCCESS) Say("setup: cuMemSetAccess = %s", Name(r));
    return r == CUDA_SUCCESS;
  }
  // Writes a pattern of `n` bytes at `va` (HtoD) and reads it back (DtoH); prints whether they
  // match.
  void RoundTrip(const char* label, CUdeviceptr va, size_t n, unsigned char seed) {
    std::vector<unsigned char> in(n), out(n, 0);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(seed + i * 7);
    CUresult w = cuMemcpyHtoD(va, in.data(), n);
    CUresult r = cuMemcpyDtoH(out.data(), va, n);
    Say("%s: write %s, read %s, data matches = %s", label, Name(w), Name(r),
        YesNo(in == out));
  }
  // Reads `n` bytes at `va` and says whether all equal `v`.
  void Expect(const char* label, CUdeviceptr va, size_t n, unsigned char v) {
    std::vector<unsigned char> out(n, static_cast<unsigned char>(~v));
    CUresult r = cuMemcpyDtoH(out.data(), va, n);
    bool all = true;
    for (unsigned char c : out) all = all && c == v;
    Say("%s: read %s, all bytes 0x%02x = %s", label, Name(r), v, YesNo(all));
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

std::string Delta(size_t before, size_t after, size_t g) {
  long long d = static_cast<long long>(before) - static_cast<long long>(after);
  char t[96];
  if (g != 0 && d % static_cast<long long>(g) == 0)
    snprintf(t, sizeof t, "%lld granules", d / static_cast<long long>(g));
  else
    snprintf(t, sizeof t, "%lld bytes", d);
  return t;
}

// ------------------------------------------------------------------------------------------
// attrs: the device attributes of VMM and its handle types.
int CaseAttrs() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  struct {
    const char* name;
    CUdevice_attribute a;
  } attrs[] = {
      {"VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
       CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED},
      {"HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
       CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED},
      {"HANDLE_TYPE_WIN32_HANDLE_SUPPORTED", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED},
      {"HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED",
       CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED},
      {"HANDLE_TYPE_FABRIC_SUPPORTED", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED},
      {"GENERIC_COMPRESSION_SUPPORTED", CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED},
      {"GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
       CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED},
      {"GPU_DIRECT_RDMA_SUPPORTED", CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED},
      {"MEMPOOL_SUPPORTED_HANDLE_TYPES", CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES},
      {"MULTICAST_SUPPORTED", CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED},
      {"HOST_NUMA_ID", CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID},
      {"HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
       CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED},
      {"HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
       CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED},
  };
  for (auto& a : attrs) {
    int v = -99;
    CUresult r = cuDeviceGetAttribute(&v, a.a, 0);
    Say("%s: cuDeviceGetAttribute = %s, value %d", a.name, Name(r), v);
  }
  return 0;
}

// granularity: cuMemGetAllocationGranularity over locations, types, handle types, flags.
void Gran(const char* label, const CUmemAllocationProp& p,
          CUmemAllocationGranularity_flags opt = CU_MEM_ALLOC_GRANULARITY_MINIMUM) {
  size_t g = 12345;
  CUresult r = cuMemGetAllocationGranularity(&g, &p, opt);
  Say("%s: cuMemGetAllocationGranularity = %s, granularity %zu", label, Name(r), g);
}

// The property variations shared by granularity and create.
std::vector<std::pair<std::string, CUmemAllocationProp>> PropVariants() {
  std::vector<std::pair<std::string, CUmemAllocationProp>> v;
  auto add = [&](const char* n, CUmemAllocationProp p) { v.emplace_back(n, p); };
  add("device 0", DeviceProp());
  add("device 1", DeviceProp(1));
  add("device -1", DeviceProp(-1));
  CUmemAllocationProp p = DeviceProp();
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  add("location HOST id 0", p);
  p.location.id = 5;
  add("location HOST id 5", p);
  p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  p.location.id = 0;
  add("location HOST_NUMA id 0", p);
  p.location.id = 99;
  add("location HOST_NUMA id 99", p);
  p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
  p.location.id = 0;
  add("location HOST_NUMA_CURRENT", p);
  p.location.type = CU_MEM_LOCATION_TYPE_INVALID;
  add("location INVALID", p);
  p.location.type = static_cast<CUmemLocationType>(99);
  add("location type 99", p);
  p = DeviceProp();
  p.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  add("type INVALID", p);
  p.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
  add("type MANAGED", p);
  p.type = static_cast<CUmemAllocationType>(99);
  add("type 99", p);
  p = DeviceProp();
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  add("handle POSIX_FILE_DESCRIPTOR", p);
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_WIN32;
  add("handle WIN32", p);
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_WIN32_KMT;
  add("handle WIN32_KMT", p);
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  add("handle FABRIC", p);
  p.requestedHandleTypes =
      static_cast<CUmemAllocationHandleType>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                             CU_MEM_HANDLE_TYPE_FABRIC);
  add("handle POSIX|FABRIC", p);
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(0x10);
  add("handle 0x10", p);
  p = DeviceProp();
  p.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
  add("compression GENERIC", p);
  p.allocFlags.compressionType = 7;
  add("compression 7", p);
  p = DeviceProp();
  p.allocFlags.gpuDirectRDMACapable = 1;
  add("gpuDirectRDMACapable 1", p);
  p = DeviceProp();
  p.allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL;
  add("usage TILE_POOL", p);
  p.allocFlags.usage = CU_MEM_CREATE_USAGE_HW_DECOMPRESS;
  add("usage HW_DECOMPRESS", p);
  p.allocFlags.usage = 0x100;
  add("usage 0x100", p);
  p = DeviceProp();
  static int dummy;
  p.win32HandleMetaData = &dummy;
  add("win32HandleMetaData set", p);
  p = DeviceProp();
  p.allocFlags.reserved[0] = 1;
  add("reserved byte set", p);
  p = DeviceProp();
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  add("location HOST handle POSIX", p);
  return v;
}

int CaseGranularity() {
  Base b;
  if (!b.Init()) return 1;
  for (auto& [n, p] : PropVariants()) {
    Gran(("min " + n).c_str(), p);
    Gran(("recommended " + n).c_str(), p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  }
  CUmemAllocationProp p = DeviceProp();
  Gran("option 2", p, static_cast<CUmemAllocationGranularity_flags>(2));
  Gran("option -1", p, static_cast<CUmemAllocationGranularity_flags>(-1));
  return 0;
}

// create: cuMemCreate over sizes, flags and the property variations; cuMemRelease misuse.
int CaseCreate() {
  Base b;
  if (!b.Init()) return 1;
  Say("granularity = %zu", b.g);
  auto create = [&](const std::string& label, size_t n, const CUmemAllocationProp* prop,
                    unsigned long long flags) {
    CUmemGenericAllocationHandle h = 0;
    CUresult r = cuMemCreate(&h, n, prop, flags);
    CUresult rel = CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) rel = cuMemRelease(h);
    Say("%s: cuMemCreate = %s, handle %s%s%s", label.c_str(), Name(r), h ? "set" : "0",
        r == CUDA_SUCCESS ? ", cuMemRelease = " : "", r == CUDA_SUCCESS ? Name(rel) : "");
  };
  CUmemAllocationProp p = DeviceProp();
  create("size granularity", b.g, &p, 0);
  create("size 2 granularity", 2 * b.g, &p, 0);
  create("size 3 granularity", 3 * b.g, &p, 0);
  create("size 0", 0, &p, 0);
  create("size 1", 1, &p, 0);
  create("size 4096", 4096, &p, 0);
  create("size granularity + 1", b.g + 1, &p, 0);
  create("size granularity + 4096", b.g + 4096, &p, 0);
  create("size granularity / 2", b.g / 2, &p, 0);
  size_t total = 0, fr = 0;
  cuMemGetInfo(&fr, &total);
  size_t over = (total / b.g + 1) * b.g;
  create("size total memory + granularity", over, &p, 0);
  create("size 2^50", size_t{1} << 50, &p, 0);
  create("size 2^63", size_t{1} << 63, &p, 0);
  create("flags 1", b.g, &p, 1);
  create("flags 0x80000000", b.g, &p, 0x80000000ull);
  for (auto& [n, q] : PropVariants()) create(n, b.g, &q, 0);
  // Host-located memory created with the device granularity and with 4096.
  CUmemAllocationProp host = DeviceProp();
  host.location.type = CU_MEM_LOCATION_TYPE_HOST;
  create("location HOST size 4096", 4096, &host, 0);
  host.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  create("location HOST_NUMA size 4096", 4096, &host, 0);
  // Release misuse.
  CUmemGenericAllocationHandle h = b.Create(b.g);
  R(cuMemRelease(h));
  CUmemGenericAllocationHandle h2 = b.Create(b.g);
  Say("two creates give different handles = %s", YesNo(h2 != h));
  if (h2) R(cuMemRelease(h2));
  // Many at once: does each count against memory?
  std::vector<CUmemGenericAllocationHandle> hs;
  for (int i = 0; i < 8; ++i) {
    CUmemGenericAllocationHandle x = b.Create(b.g);
    if (x) hs.push_back(x);
  }
  Say("eight creates = %zu handles", hs.size());
  for (auto x : hs) cuMemRelease(x);
  return 0;
}

// props: what cuMemGetAllocationPropertiesFromHandle answers, and its misuse.
void PrintProps(const char* label, CUmemGenericAllocationHandle h) {
  CUmemAllocationProp p;
  memset(&p, 0xab, sizeof p);
  CUresult r = cuMemGetAllocationPropertiesFromHandle(&p, h);
  if (r != CUDA_SUCCESS) {
    Say("%s: cuMemGetAllocationPropertiesFromHandle = %s", label, Name(r));
    return;
  }
  Say("%s: cuMemGetAllocationPropertiesFromHandle = %s, type %d, handle types 0x%x, location "
      "type %d id %d, win32HandleMetaData %s, compression %d, gpuDirectRDMACapable %d, usage "
      "0x%x, reserved %d %d %d %d",
      label, Name(r), static_cast<int>(p.type), static_cast<unsigned>(p.requestedHandleTypes),
      static_cast<int>(p.location.type), p.location.id,
      p.win32HandleMetaData ? "set" : "null", p.allocFlags.compressionType,
      p.allocFlags.gpuDirectRDMACapable, p.allocFlags.usage, p.allocFlags.reserved[0],
      p.allocFlags.reserved[1], p.allocFlags.reserved[2], p.allocFlags.reserved[3]);
}

int CaseProps() {
  Base b;
  if (!b.Init()) return 1;
  for (auto& [n, q] : PropVariants()) {
    CUmemGenericAllocationHandle h = 0;
    if (cuMemCreate(&h, b.g, &q, 0) != CUDA_SUCCESS) continue;
    PrintProps(n.c_str(), h);
    cuMemRelease(h);
  }
  CUmemGenericAllocationHandle h = b.Create(2 * b.g);
  PrintProps("size 2 granularity", h);
  cuMemRelease(h);
  return 0;
}

// reserve: cuMemAddressReserve/Free over sizes, alignments, hints, flags; misuse.
int CaseReserve() {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  auto reserve = [&](const std::string& label, size_t n, size_t align, CUdeviceptr hint,
                     unsigned long long flags, bool keep = false) -> CUdeviceptr {
    CUdeviceptr p = 0;
    CUresult r = cuMemAddressReserve(&p, n, align, hint, flags);
    std::string rel;
    if (r == CUDA_SUCCESS) {
      rel = std::string(", nonzero ") + YesNo(p != 0) + ", aligned to granularity " +
            YesNo(p % g == 0);
      if (align != 0) rel += std::string(", aligned to alignment ") + YesNo(p % align == 0);
      if (hint != 0) rel += std::string(", equals hint ") + YesNo(p == hint);
      if (!keep) {
        CUresult f = cuMemAddressFree(p, n);
        rel += std::string(", cuMemAddressFree = ") + Name(f);
      }
    }
    Say("%s: cuMemAddressReserve = %s%s", label.c_str(), Name(r), rel.c_str());
    return r == CUDA_SUCCESS ? p : 0;
  };
  reserve("size granularity", g, 0, 0, 0);
  reserve("size 0", 0, 0, 0, 0);
  reserve("size 1", 1, 0, 0, 0);
  reserve("size 4096", 4096, 0, 0, 0);
  reserve("size granularity + 4096", g + 4096, 0, 0, 0);
  reserve("size 3 granularity", 3 * g, 0, 0, 0);
  reserve("alignment granularity", g, g, 0, 0);
  reserve("alignment 2 granularity", g, 2 * g, 0, 0);
  reserve("alignment 64 granularity", g, 64 * g, 0, 0);
  reserve("alignment 1 GiB", g, size_t{1} << 30, 0, 0);
  reserve("alignment 3 granularity", g, 3 * g, 0, 0);
  reserve("alignment 4096", g, 4096, 0, 0);
  reserve("alignment 1", g, 1, 0, 0);
  reserve("alignment 12288", g, 12288, 0, 0);
  reserve("flags 1", g, 0, 0, 1);
  reserve("flags 0x10", g, 0, 0, 0x10);
  reserve("size 2^40", size_t{1} << 40, 0, 0, 0);
  reserve("size 2^47", size_t{1} << 47, 0, 0, 0);
  reserve("size 2^50", size_t{1} << 50, 0, 0, 0);
  reserve("size 2^60", size_t{1} << 60, 0, 0, 0);
  reserve("size max aligned", ~size_t{0} & ~(g - 1), 0, 0, 0);
  // Fixed address hints.
  CUdeviceptr a = reserve("first 4 granularity", 4 * g, 0, 0, 0, true);
  if (a) {
    R(cuMemAddressFree(a, 4 * g));
    reserve("hint at a freed reservation", 4 * g, 0, a, 0);
    reserve("hint 1 granularity into a freed reservation", g, 0, a + g, 0);
    reserve("hint misaligned (+4096)", g, 0, a + 4096, 0);
    reserve("hint misaligned (+1)", g, 0, a + 1, 0);
    CUdeviceptr a2 = reserve("again at the hint", 4 * g, 0, a, 0, true);
    Say("kept reservation at the hint = %s", YesNo(a2 == a));
    reserve("hint inside a live reservation", g, 0, a + g, 0);
    reserve("hint at the end of a live reservation", g, 0, a + 4 * g, 0);
    CUdeviceptr a3 = reserve("hint overlapping a live reservation's end", 2 * g, 0, a + 3 * g, 0,
                             true);
    if (a3) cuMemAddressFree(a3, 2 * g);
    CUdeviceptr c = reserve("second 4 granularity", 4 * g, 0, 0, 0, true);
    Say("two reservations disjoint = %s",
        YesNo(c != 0 && (c + 4 * g <= a2 || a2 + 4 * g <= c)));
    Say("second above the first = %s", YesNo(c > a2));
    Say("second right after the first = %s", YesNo(c == a2 + 4 * g));
    Say("reservation disjoint from the cuMemAlloc buffer = %s",
        YesNo(b.buf + (1 << 20) <= a2 || a2 + 4 * g <= b.buf));
    // Pointer queries on reserved, unmapped VA.
    unsigned int mt = 77;
    R(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a2));
    int mapped = 77;
    R(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, a2));
    Say("MAPPED value = %d", mapped);
    CUdeviceptr base = 0;
    size_t sz = 0;
    R(cuMemGetAddressRange(&base, &sz, a2));
    // Free misuse.
    R(cuMemAddressFree(a2, g));          // smaller than reserved
    R(cuMemAddressFree(a2, 8 * g));      // larger
    R(cuMemAddressFree(a2 + g, g));      // a middle part
    R(cuMemAddressFree(a2 + 4096, 4 * g));  // misaligned
    R(cuMemAddressFree(a2, 0));
    R(cuMemAddressFree(0, 0));
    R(cuMemAddressFree(0, g));
    R(cuMemAddressFree(b.buf, 1 << 20));  // a cuMemAlloc pointer
    R(cuMemAddressFree(a2, 4 * g));
    R(cuMemAddressFree(a2, 4 * g));  // twice
    R(cuMemFree(c));                 // cuMemFree of a reservation
    R(cuMemAddressFree(c, 4 * g));
  }
  // Reserving only the tail: a second free of the first half after a split?
  CUdeviceptr d = b.Reserve(2 * g);
  if (d) {
    R(cuMemAddressFree(d, g));
    R(cuMemAddressFree(d + g, g));
    R(cuMemAddressFree(d, 2 * g));
  }
  return 0;
}

// map: two handles mapped adjacently in one reservation; access, copies that span them, pointer
// attributes; cuMemMap/Unmap/SetAccess/GetAccess misuse.
void PtrAttrs(Base& b, const char* label, CUdeviceptr p, CUdeviceptr res, CUdeviceptr map_base,
              size_t map_size) {
  CUcontext c = nullptr;
  CUresult r = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p);
  Say("%s: CONTEXT = %s, %s", label, Name(r),
      c == b.ctx ? "the primary context" : (c ? "another context" : "null"));
  unsigned int mt = 77;
  r = cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
  Say("%s: MEMORY_TYPE = %s, %u", label, Name(r), mt);
  CUdeviceptr dp = 0;
  r = cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p);
  Say("%s: DEVICE_POINTER = %s, equals the pointer %s", label, Name(r), YesNo(dp == p));
  void* hp = reinterpret_cast<void*>(1);
  r = cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p);
  Say("%s: HOST_POINTER = %s, %s", label, Name(r), hp ? "set" : "null");
  int i = 77;
  r = cuPointerGetAttribute(&i, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
  Say("%s: SYNC_MEMOPS = %s, %d", label, Name(r), i);
  unsigned long long id = 0;
  r = cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p);
  Say("%s: BUFFER_ID = %s, nonzero %s", label, Name(r), YesNo(id != 0));
  i = 77;
  r = cuPointerGetAttribute(&i, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
  Say("%s: IS_MANAGED = %s, %d", label, Name(r), i);
  i = 77;
  r = cuPointerGetAttribute(&i, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
  Say("%s: DEVICE_ORDINAL = %s, %d", label, Name(r), i);
  i = 77;
  r = cuPointerGetAttribute(&i, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p);
  Say("%s: IS_LEGACY_CUDA_IPC_CAPABLE = %s, %d", label, Name(r), i);
  CUdeviceptr start = 0;
  r = cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p);
  Say("%s: RANGE_START_ADDR = %s, %s", label, Name(r),
      start == map_base ? "the mapping's start"
                        : (start == res ? "the reservation's start"
                                        : (start == p ? "the pointer" : "elsewhere")));
  size_t size = 0;
  r = cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p);
  Say("%s: RANGE_SIZE = %s, %s", label, Name(r), Delta(size, 0, b.g).c_str());
  i = 77;
  r = cuPointerGetAttribute(&i, CU_POINTER_ATTRIBUTE_MAPPED, p);
  Say("%s: MAPPED = %s, %d", label, Name(r), i);
  unsigned long long ht = 77;
  r = cuPointerGetAttribute(&ht, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p);
  Say("%s: ALLOWED_HANDLE_TYPES = %s, 0x%llx", label, Name(r), ht);
  i = 77;
  r = cuPointerGetAttribute(&i, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p);
  Say("%s: IS_GPU_DIRECT_RDMA_CAPABLE = %s, %d", label, Name(r), i);
  unsigned long long af = 77;
  r = cuPointerGetAttribute(&af, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p);
  Say("%s: ACCESS_FLAGS = %s, %llu", label, Name(r), af);
  CUmemoryPool pool = reinterpret_cast<CUmemoryPool>(1);
  r = cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p);
  Say("%s: MEMPOOL_HANDLE = %s, %s", label, Name(r), pool ? "set" : "null");
  size = 0;
  r = cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p);
  Say("%s: MAPPING_SIZE = %s, %s", label, Name(r), Delta(size, 0, b.g).c_str());
  Say("%s: (the mapping is %s)", label, Delta(map_size, 0, b.g).c_str());
  start = 0;
  r = cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p);
  Say("%s: MAPPING_BASE_ADDR = %s, %s", label, Name(r),
      start == map_base ? "the mapping's start"
                        : (start == res ? "the reservation's start"
                                        : (start == p ? "the pointer" : "elsewhere")));
  unsigned long long blk = 0;
  r = cuPointerGetAttribute(&blk, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, p);
  Say("%s: MEMORY_BLOCK_ID = %s, nonzero %s", label, Name(r), YesNo(blk != 0));
  i = 77;
  r = cuPointerGetAttribute(&i, CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, p);
  Say("%s: IS_HW_DECOMPRESS_CAPABLE = %s, %d", label, Name(r), i);
  CUdeviceptr base = 0;
  size_t sz = 0;
  r = cuMemGetAddressRange(&base, &sz, p);
  Say("%s: cuMemGetAddressRange = %s, base %s, size %s", label, Name(r),
      base == map_base ? "the mapping's start"
                       : (base == res ? "the reservation's start"
                                      : (base == p ? "the pointer" : "elsewhere")),
      Delta(sz, 0, b.g).c_str());
  // cuPointerGetAttributes with several at once.
  CUpointer_attribute list[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MAPPED,
                                CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                CU_POINTER_ATTRIBUTE_ACCESS_FLAGS};
  unsigned int v_mt = 77;
  int v_mapped = 77, v_ord = 77;
  unsigned long long v_af = 77;
  void* data[] = {&v_mt, &v_mapped, &v_ord, &v_af};
  r = cuPointerGetAttributes(4, list, data, p);
  Say("%s: cuPointerGetAttributes = %s, memory type %u, mapped %d, ordinal %d, access %llu",
      label, Name(r), v_mt, v_mapped, v_ord, v_af);
}

int CaseMap() {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  CUmemGenericAllocationHandle h1 = b.Create(g), h2 = b.Create(g), h3 = b.Create(2 * g);
  CUdeviceptr r = b.Reserve(8 * g);
  if (!h1 || !h2 || !h3 || !r) return 1;
  unsigned long long fl = 77;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access of reserved, unmapped VA = %llu", fl);
  R(cuMemMap(r, g, 0, h1, 0));
  R(cuMemMap(r + g, g, 0, h2, 0));
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access before cuMemSetAccess = %llu", fl);
  PtrAttrs(b, "mapped, no access", r + g + 100, r, r + g, g);
  CUmemAccessDesc rw = Access();
  R(cuMemSetAccess(r, 2 * g, &rw, 1));  // both mappings in one call
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access after cuMemSetAccess RW = %llu", fl);
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r + g + 4096));
  Say("access in the middle of the second mapping = %llu", fl);
  // Copies and memsets spanning the two mappings.
  b.RoundTrip("HtoD/DtoH spanning the two mappings", r + g - 64, 128, 1);
  b.RoundTrip("HtoD/DtoH of both mappings whole", r, 2 * g, 3);
  R(cuMemsetD8(r + g - 32, 0x5a, 64));
  b.Expect("after cuMemsetD8 spanning", r + g - 32, 64, 0x5a);
  R(cuMemsetD32(r + g - 32, 0x01010101u, 16));
  b.Expect("after cuMemsetD32 spanning", r + g - 32, 64, 0x01);
  R(cuMemsetD8Async(r, 0x22, 2 * g, b.s));
  R(cuStreamSynchronize(b.s));
  b.Expect("after cuMemsetD8Async of both", r, 2 * g, 0x22);
  std::vector<unsigned char> host(256, 0x33), back(256, 0);
  R(cuMemcpyHtoDAsync(r + g - 128, host.data(), 256, b.s));
  R(cuMemcpyDtoHAsync(back.data(), r + g - 128, 256, b.s));
  R(cuStreamSynchronize(b.s));
  Say("async round trip spanning matches = %s", YesNo(host == back));
  R(cuMemsetD8(b.buf, 0x44, 4096));
  R(cuMemcpyDtoD(r + g - 2048, b.buf, 4096));  // cuMemAlloc -> spanning VMM
  b.Expect("after DtoD from cuMemAlloc memory", r + g - 2048, 4096, 0x44);
  R(cuMemcpyDtoD(r, r + g - 2048, 4096));  // VMM -> VMM (first mapping)
  b.Expect("after DtoD within the reservation", r, 4096, 0x44);
  R(cuMemcpy(r + g + 8192, r + g - 2048, 4096));  // unified copy
  b.Expect("after cuMemcpy", r + g + 8192, 4096, 0x44);
  R(cuMemcpyDtoDAsync(b.buf, r + g - 100, 200, b.s));
  R(cuStreamSynchronize(b.s));
  b.Expect("after DtoDAsync into cuMemAlloc memory", b.buf, 200, 0x44);
  PtrAttrs(b, "second mapping", r + g + 100, r, r + g, g);
  PtrAttrs(b, "first mapping's start", r, r, r, g);
  unsigned long long id1 = 0, id2 = 0, blk1 = 0, blk2 = 0;
  cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, r);
  cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, r + g);
  cuPointerGetAttribute(&blk1, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, r);
  cuPointerGetAttribute(&blk2, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, r + g);
  Say("the two mappings' BUFFER_IDs differ = %s, MEMORY_BLOCK_IDs differ = %s",
      YesNo(id1 != id2), YesNo(blk1 != blk2));
  PtrAttrs(b, "reserved, unmapped", r + 2 * g + 100, r, r + 2 * g, g);
  // A 2-granule handle mapped at an offset, and partially.
  R(cuMemMap(r + 2 * g, 2 * g, 0, h3, 0));
  R(cuMemSetAccess(r + 2 * g, 2 * g, &rw, 1));
  PtrAttrs(b, "2-granule mapping, second granule", r + 3 * g + 64, r, r + 2 * g, 2 * g);
  R(cuMemMap(r + 4 * g, g, g, h3, 0));  // the second half of h3 again
  R(cuMemSetAccess(r + 4 * g, g, &rw, 1));
  R(cuMemsetD8(r + 3 * g, 0x66, 4096));
  b.Expect("second half of h3 seen through its second mapping", r + 4 * g, 4096, 0x66);
  R(cuMemMap(r + 5 * g, g, 0, h1, 0));  // the same handle at a second VA
  R(cuMemSetAccess(r + 5 * g, g, &rw, 1));
  R(cuMemsetD8(r, 0x77, 4096));
  b.Expect("h1 seen through its second mapping", r + 5 * g, 4096, 0x77);
  PtrAttrs(b, "h3 partial mapping", r + 4 * g, r, r + 4 * g, g);
  // Map misuse.
  R(cuMemMap(r, g, 0, h2, 0));               // already mapped
  R(cuMemMap(r + g / 2 + 4096, g, 0, h2, 0));  // misaligned address
  R(cuMemMap(r + 6 * g, 4096, 0, h2, 0));    // misaligned size
  R(cuMemMap(r + 6 * g, g + 4096, 0, h3, 0));  // misaligned size within the handle
  R(cuMemMap(r + 6 * g, g, 4096, h3, 0));    // misaligned offset
  R(cuMemMap(r + 6 * g, 2 * g, 0, h2, 0));   // larger than the handle
  R(cuMemMap(r + 6 * g, 2 * g, g, h3, 0));   // offset + size past the handle
  R(cuMemMap(r + 6 * g, g, 2 * g, h3, 0));   // offset at the handle's end
  R(cuMemMap(r + 6 * g, 0, 0, h2, 0));       // size 0
  R(cuMemMap(r + 6 * g, g, 0, h2, 1));       // flags 1
  R(cuMemMap(r + 7 * g, 2 * g, 0, h3, 0));   // past the reservation's end
  R(cuMemMap(0, g, 0, h2, 0));               // address 0
  CUdeviceptr q = b.Reserve(g);
  cuMemAddressFree(q, g);
  R(cuMemMap(q, g, 0, h2, 0));               // freed reservation
  R(cuMemMap(b.buf, g, 0, h2, 0));           // a cuMemAlloc pointer
  R(cuMemMap(r + 3 * g, 2 * g, 0, h3, 0));   // overlaps a mapping's end
  // SetAccess misuse.
  CUmemAccessDesc d = Access();
  R(cuMemSetAccess(r + 6 * g, g, &d, 1));       // unmapped
  R(cuMemSetAccess(r + 5 * g, 2 * g, &d, 1));   // mapped + unmapped
  R(cuMemSetAccess(r, 4096, &d, 1));            // misaligned size
  R(cuMemSetAccess(r + 4096, g, &d, 1));        // misaligned address
  R(cuMemSetAccess(r, g, &d, 0));               // count 0
  R(cuMemSetAccess(r, 0, &d, 1));               // size 0
  R(cuMemSetAccess(r + 2 * g, g, &d, 1));       // half of a 2-granule mapping
  CUmemAccessDesc bad = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_DEVICE, 1);
  R(cuMemSetAccess(r, g, &bad, 1));
  bad = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_DEVICE, -1);
  R(cuMemSetAccess(r, g, &bad, 1));
  bad = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_HOST, 0);
  R(cuMemSetAccess(r, g, &bad, 1));
  bad = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
  R(cuMemSetAccess(r, g, &bad, 1));
  bad = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_INVALID, 0);
  R(cuMemSetAccess(r, g, &bad, 1));
  bad = Access(2);
  R(cuMemSetAccess(r, g, &bad, 1));
  bad = Access(7);
  R(cuMemSetAccess(r, g, &bad, 1));
  CUmemAccessDesc two[] = {Access(), Access(CU_MEM_ACCESS_FLAGS_PROT_READ)};
  R(cuMemSetAccess(r, g, two, 2));  // device 0 twice
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access after RW then READ in one call = %llu", fl);
  CUmemAccessDesc ro = Access(CU_MEM_ACCESS_FLAGS_PROT_READ);
  R(cuMemSetAccess(r, g, &ro, 1));
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access after READ = %llu", fl);
  CUmemAccessDesc none = Access(CU_MEM_ACCESS_FLAGS_PROT_NONE);
  R(cuMemSetAccess(r, g, &none, 1));
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access after NONE = %llu", fl);
  R(cuMemSetAccess(r, g, &rw, 1));
  // GetAccess misuse.
  CUmemLocation l2{CU_MEM_LOCATION_TYPE_DEVICE, 1};
  R(cuMemGetAccess(&fl, &l2, r));
  l2 = {CU_MEM_LOCATION_TYPE_HOST, 0};
  fl = 77;
  R(cuMemGetAccess(&fl, &l2, r));
  Say("host access flags = %llu", fl);
  l2 = {CU_MEM_LOCATION_TYPE_INVALID, 0};
  R(cuMemGetAccess(&fl, &l2, r));
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r + 6 * g));  // reserved, unmapped
  Say("access of reserved, unmapped = %llu", fl);
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, b.buf));  // cuMemAlloc memory
  Say("access of cuMemAlloc memory = %llu", fl);
  R(cuMemGetAccess(&fl, &loc, 0));
  // Unmap, valid and not.
  R(cuMemUnmap(r, 4096));              // misaligned size
  R(cuMemUnmap(r + 4096, g));          // misaligned address
  R(cuMemUnmap(r + 2 * g, g));         // half of a 2-granule mapping
  b.Expect("h3 after the half unmap attempt", r + 3 * g, 4096, 0x66);
  R(cuMemUnmap(r + 6 * g, g));         // reserved, not mapped
  R(cuMemUnmap(r + 5 * g, 2 * g));     // a mapping + unmapped VA
  R(cuMemUnmap(r, 0));                 // size 0
  R(cuMemUnmap(0, g));
  R(cuMemUnmap(b.buf, g));             // cuMemAlloc memory
  R(cuMemUnmap(r, 2 * g));             // two adjacent mappings in one call
  R(cuMemUnmap(r, g));                 // again
  R(cuMemUnmap(r + 2 * g, 3 * g));     // h3 whole + its second mapping, one call
  R(cuMemUnmap(r + 5 * g, g));
  R(cuMemUnmap(r + 5 * g, g));         // twice
  // Remap the freed VA: works again?
  R(cuMemMap(r, g, 0, h2, 0));
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access after a remap = %llu", fl);
  R(cuMemUnmap(r, g));
  R(cuMemAddressFree(r, 8 * g));
  R(cuMemRelease(h1));
  R(cuMemRelease(h2));
  R(cuMemRelease(h3));
  return 0;
}

// access:<state>:<op>: one operation on VA in a given state, then whether the context is still
// usable. state: noaccess (mapped, no cuMemSetAccess), readonly (PROT_READ), unmapped
// (reserved, never mapped), afterunmap (mapped, used, unmapped), freed (reservation freed),
// partial (4 KiB from 2 KiB before the end of a mapped, accessible granule into unmapped VA).
int CaseAccess(const std::string& state, const std::string& op) {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  CUmemGenericAllocationHandle h = b.Create(g);
  CUdeviceptr r = b.Reserve(2 * g);
  if (!h || !r) return 1;
  if (state != "unmapped") {
    R(cuMemMap(r, g, 0, h, 0));
    if (state == "readonly" || state == "partial") {
      CUmemAccessDesc rw = Access();
      cuMemSetAccess(r, g, &rw, 1);
      cuMemsetD8(r, 0x12, g);
      CUmemAccessDesc d = Access(CU_MEM_ACCESS_FLAGS_PROT_READ);
      if (state == "readonly") R(cuMemSetAccess(r, g, &d, 1));
    } else if (state == "afterunmap" || state == "freed") {
      CUmemAccessDesc rw = Access();
      R(cuMemSetAccess(r, g, &rw, 1));
      cuMemsetD8(r, 0x12, g);
      R(cuMemUnmap(r, g));
      if (state == "freed") R(cuMemAddressFree(r, 2 * g));
    }
  }
  std::vector<unsigned char> host(4096, 9);
  CUresult res = CUDA_SUCCESS;
  CUdeviceptr base = r;
  if (state == "partial") r += g - 2048;
  if (op == "htod") res = R(cuMemcpyHtoD(r, host.data(), 4096));
  if (op == "dtoh") res = R(cuMemcpyDtoH(host.data(), r, 4096));
  if (op == "memset") res = R(cuMemsetD8(r, 1, 4096));
  if (op == "dtod_in") res = R(cuMemcpyDtoD(r, b.buf, 4096));
  if (op == "dtod_out") res = R(cuMemcpyDtoD(b.buf, r, 4096));
  if (op == "htod_async") {
    res = R(cuMemcpyHtoDAsync(r, host.data(), 4096, b.s));
    R(cuStreamSynchronize(b.s));
  }
  if (op == "dtoh_async") {
    res = R(cuMemcpyDtoHAsync(host.data(), r, 4096, b.s));
    R(cuStreamSynchronize(b.s));
  }
  if (op == "memset_async") {
    res = R(cuMemsetD8Async(r, 1, 4096, b.s));
    R(cuStreamSynchronize(b.s));
  }
  if (op == "dtoh" || op == "dtoh_async") {
    bool all = true;
    size_t n = state == "partial" ? 2048 : host.size();
    for (size_t i = 0; i < n; ++i) all = all && host[i] == 0x12;
    Say("read the bytes written before = %s", YesNo(all));
  }
  (void)res;
  b.Usable("after the operation");
  if (state == "readonly") b.Expect("content afterwards", r, 4096, 0x12);
  if (state == "partial") b.Expect("the mapped part afterwards (untouched?)", base + g - 2048, 2048, 0x12);
  R(cuStreamQuery(b.s));
  return 0;
}

// lifetime: cuMemGetInfo at every step; release while mapped; retain; address free while
// mapped; cuMemFree of VMM memory.
int CaseLifetime() {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  size_t f0 = b.Free();
  CUmemGenericAllocationHandle h = b.Create(4 * g);
  size_t f1 = b.Free();
  Say("free memory drop after cuMemCreate of 4 granules = %s", Delta(f0, f1, g).c_str());
  CUdeviceptr r = b.Reserve(4 * g);
  size_t f2 = b.Free();
  Say("drop after cuMemAddressReserve = %s", Delta(f1, f2, g).c_str());
  R(cuMemMap(r, 4 * g, 0, h, 0));
  size_t f3 = b.Free();
  Say("drop after cuMemMap = %s", Delta(f2, f3, g).c_str());
  CUmemAccessDesc rw = Access();
  R(cuMemSetAccess(r, 4 * g, &rw, 1));
  size_t f4 = b.Free();
  Say("drop after cuMemSetAccess = %s", Delta(f3, f4, g).c_str());
  R(cuMemsetD8(r, 0x3c, 4 * g));
  // Retain from the mapped address, from the middle, from elsewhere.
  CUmemGenericAllocationHandle k = 0;
  R(cuMemRetainAllocationHandle(&k, reinterpret_cast<void*>(r)));
  Say("retained handle equals the created one = %s", YesNo(k == h));
  CUmemGenericAllocationHandle k2 = 0;
  R(cuMemRetainAllocationHandle(&k2, reinterpret_cast<void*>(r + g + 12345)));
  Say("retained from the middle equals the created one = %s", YesNo(k2 == h));
  CUmemGenericAllocationHandle k3 = 0;
  R(cuMemRetainAllocationHandle(&k3, reinterpret_cast<void*>(b.buf)));
  CUdeviceptr other = b.Reserve(g);
  R(cuMemRetainAllocationHandle(&k3, reinterpret_cast<void*>(other)));
  std::vector<int> hostbuf(16);
  R(cuMemRetainAllocationHandle(&k3, hostbuf.data()));
  // Release the original while mapped (three references: create + two retains).
  R(cuMemRelease(h));
  size_t f5 = b.Free();
  Say("drop after releasing the created handle while mapped = %s", Delta(f4, f5, g).c_str());
  b.Expect("content after the release", r + 3 * g, 4096, 0x3c);
  PrintProps("props through the released handle value", h);
  R(cuMemRelease(k));
  R(cuMemRelease(k2));
  size_t f6 = b.Free();
  Say("drop after releasing every reference while mapped = %s", Delta(f4, f6, g).c_str());
  b.Expect("content after every release", r, 4096, 0x3c);
  PrintProps("props after every release, still mapped", h);
  CUmemGenericAllocationHandle k4 = 0;
  R(cuMemRetainAllocationHandle(&k4, reinterpret_cast<void*>(r)));
  Say("retained after every release equals the created one = %s", YesNo(k4 == h));
  if (k4) R(cuMemRelease(k4));
  // Address free while mapped; cuMemFree of VMM memory.
  R(cuMemAddressFree(r, 4 * g));
  R(cuMemFree(r));
  R(cuMemFreeAsync(r, b.s));
  R(cuStreamSynchronize(b.s));
  b.Expect("content after the failed frees", r, 4096, 0x3c);
  R(cuMemUnmap(r, 4 * g));
  size_t f7 = b.Free();
  Say("memory back after the unmap = %s", Delta(f7, f4, g).c_str());
  Say("free memory back to the start = %s", Delta(f0, f7, g).c_str());
  R(cuMemAddressFree(r, 4 * g));
  R(cuMemAddressFree(other, g));
  // Partial unmap of one mapping: the memory stays while any part is mapped?
  CUmemGenericAllocationHandle h2 = b.Create(2 * g);
  CUdeviceptr r2 = b.Reserve(4 * g);
  R(cuMemMap(r2, g, 0, h2, 0));
  R(cuMemMap(r2 + 2 * g, g, g, h2, 0));
  R(cuMemRelease(h2));
  size_t f8 = b.Free();
  R(cuMemUnmap(r2, g));
  size_t f9 = b.Free();
  Say("drop when one of two mappings of a released handle goes = %s", Delta(f8, f9, g).c_str());
  R(cuMemUnmap(r2 + 2 * g, g));
  size_t f10 = b.Free();
  Say("back when the last mapping goes = %s", Delta(f10, f9, g).c_str());
  R(cuMemAddressFree(r2, 4 * g));
  // Host-located memory and device free memory.
  CUmemAllocationProp hp = DeviceProp();
  hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
  size_t f11 = b.Free();
  CUmemGenericAllocationHandle hh = b.Create(4 * g, &hp);
  size_t f12 = b.Free();
  Say("device free memory drop after a host-located cuMemCreate = %s",
      Delta(f11, f12, g).c_str());
  if (hh) {
    CUdeviceptr rh = b.Reserve(4 * g);
    R(cuMemMap(rh, 4 * g, 0, hh, 0));
    R(cuMemSetAccess(rh, 4 * g, &rw, 1));
    R(cuMemsetD8(rh, 0x21, 4 * g));
    b.Expect("host-located content", rh + g, 4096, 0x21);
    PtrAttrs(b, "host-located mapping", rh + 64, rh, rh, 4 * g);
    CUmemAccessDesc hd = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_LOCATION_TYPE_HOST, 0);
    R(cuMemSetAccess(rh, 4 * g, &hd, 1));
    unsigned long long fl = 77;
    CUmemLocation hl{CU_MEM_LOCATION_TYPE_HOST, 0};
    R(cuMemGetAccess(&fl, &hl, rh));
    Say("host access of host-located memory = %llu", fl);
    R(cuMemUnmap(rh, 4 * g));
    R(cuMemAddressFree(rh, 4 * g));
    R(cuMemRelease(hh));
  }
  return 0;
}

// inflight: unmap / release / address free while queued work still uses the memory.
void CUDA_CB Sleep300(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

int CaseInflight(const std::string& what) {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  CUmemGenericAllocationHandle h = b.Create(g);
  CUdeviceptr r = b.Reserve(g);
  if (!h || !r || !b.MapRw(r, g, h)) return 1;
  R(cuMemsetD8(r, 0x10, g));
  R(cuLaunchHostFunc(b.s, Sleep300, nullptr));
  R(cuMemsetD8Async(r, 0x20, g, b.s));
  R(cuMemcpyDtoDAsync(b.buf, r, 4096, b.s));
  double t0 = NowUs();
  if (what == "unmap") {
    R(cuMemUnmap(r, g));
  } else if (what == "release") {
    R(cuMemRelease(h));
    h = 0;
  } else if (what == "release_unmap_free") {
    R(cuMemRelease(h));
    h = 0;
    R(cuMemUnmap(r, g));
    R(cuMemAddressFree(r, g));
  }
  double dt = NowUs() - t0;
  Say("the call waited for the queued work = %s", YesNo(dt > 200000));
  R(cuStreamSynchronize(b.s));
  b.Expect("cuMemAlloc buffer after the queued copy", b.buf, 4096, 0x20);
  if (what == "release") b.Expect("the memory after the queued memset", r, 4096, 0x20);
  b.Usable("afterwards");
  if (what != "release_unmap_free") {
    if (what == "release") cuMemUnmap(r, g);
    R(cuMemAddressFree(r, g));
  }
  if (h) R(cuMemRelease(h));
  return 0;
}

// export: POSIX file descriptors round trip; misuse; other handle types.
int CaseExport() {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  CUmemAllocationProp p = DeviceProp();
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = b.Create(2 * g, &p);
  CUmemGenericAllocationHandle plain = b.Create(g);
  if (!h || !plain) return 1;
  int fd = -1;
  R(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  Say("fd valid = %s", YesNo(fd >= 0 && fcntl(fd, F_GETFD) != -1));
  int fd2 = -1;
  R(cuMemExportToShareableHandle(&fd2, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  Say("a second export gives another fd = %s", YesNo(fd2 >= 0 && fd2 != fd));
  int x = -1;
  R(cuMemExportToShareableHandle(&x, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1));
  char fabric[64];
  R(cuMemExportToShareableHandle(fabric, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  R(cuMemExportToShareableHandle(fabric, h, CU_MEM_HANDLE_TYPE_WIN32, 0));
  R(cuMemExportToShareableHandle(fabric, h, CU_MEM_HANDLE_TYPE_WIN32_KMT, 0));
  R(cuMemExportToShareableHandle(fabric, h, CU_MEM_HANDLE_TYPE_NONE, 0));
  R(cuMemExportToShareableHandle(fabric, h, static_cast<CUmemAllocationHandleType>(0x10), 0));
  x = -1;
  R(cuMemExportToShareableHandle(&x, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  // Import in the same process.
  size_t f0 = b.Free();
  CUmemGenericAllocationHandle imp = 0;
  R(cuMemImportFromShareableHandle(&imp, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  size_t f1 = b.Free();
  Say("free memory drop after the import = %s", Delta(f0, f1, g).c_str());
  Say("imported handle equals the exported one = %s", YesNo(imp == h));
  PrintProps("imported", imp);
  CUmemGenericAllocationHandle imp2 = 0;
  R(cuMemImportFromShareableHandle(&imp2, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  Say("second import of one fd equals the first = %s", YesNo(imp2 == imp));
  if (imp2 && imp2 != imp) R(cuMemRelease(imp2));
  CUmemGenericAllocationHandle imp3 = 0;
  R(cuMemImportFromShareableHandle(&imp3, reinterpret_cast<void*>(static_cast<intptr_t>(fd2)),
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  Say("import of the second fd equals the first import = %s", YesNo(imp3 == imp));
  if (imp3 && imp3 != imp) R(cuMemRelease(imp3));
  // Shared memory through the two handles.
  CUdeviceptr r1 = b.Reserve(2 * g), r2 = b.Reserve(2 * g);
  if (imp && b.MapRw(r1, 2 * g, h) && b.MapRw(r2, 2 * g, imp)) {
    R(cuMemsetD8(r1, 0x4d, 2 * g));
    b.Expect("written through the original, read through the import", r2 + g, 4096, 0x4d);
    PtrAttrs(b, "imported mapping", r2 + 64, r2, r2, 2 * g);
    cuMemUnmap(r1, 2 * g);
    cuMemUnmap(r2, 2 * g);
  }
  cuMemAddressFree(r1, 2 * g);
  cuMemAddressFree(r2, 2 * g);
  // Import misuse.
  CUmemGenericAllocationHandle bad = 0;
  R(cuMemImportFromShareableHandle(&bad, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                   CU_MEM_HANDLE_TYPE_FABRIC));
  R(cuMemImportFromShareableHandle(&bad, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                   CU_MEM_HANDLE_TYPE_NONE));
  R(cuMemImportFromShareableHandle(&bad, reinterpret_cast<void*>(static_cast<intptr_t>(-1)),
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  int devnull = open("/dev/null", O_RDONLY);
  R(cuMemImportFromShareableHandle(&bad, reinterpret_cast<void*>(static_cast<intptr_t>(devnull)),
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(devnull);
  R(cuMemImportFromShareableHandle(&bad, reinterpret_cast<void*>(static_cast<intptr_t>(9999)),
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  // The fd after the handle is released, and after close.
  R(cuMemRelease(imp));
  R(cuMemRelease(h));
  CUmemGenericAllocationHandle late = 0;
  R(cuMemImportFromShareableHandle(&late, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  if (late) {
    PrintProps("imported after every handle was released", late);
    R(cuMemRelease(late));
  }
  close(fd);
  close(fd2);
  R(cuMemImportFromShareableHandle(&late, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  R(cuMemRelease(plain));
  // Host-located memory exported as a file descriptor.
  CUmemAllocationProp hp = p;
  hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
  CUmemGenericAllocationHandle hh = 0;
  R(cuMemCreate(&hh, g, &hp, 0));
  if (hh) {
    int hfd = -1;
    R(cuMemExportToShareableHandle(&hfd, hh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    if (hfd >= 0) {
      CUmemGenericAllocationHandle hi = 0;
      R(cuMemImportFromShareableHandle(&hi, reinterpret_cast<void*>(static_cast<intptr_t>(hfd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
      if (hi) {
        PrintProps("imported host-located", hi);
        cuMemRelease(hi);
      }
      close(hfd);
    }
    R(cuMemRelease(hh));
  }
  return 0;
}

// noctx / noinit: the VMM calls with no current context, and before cuInit.
int CaseNoContext(bool init) {
  if (init) {
    if (cuInit(0) != CUDA_SUCCESS) return 1;
    CUcontext c = reinterpret_cast<CUcontext>(1);
    cuCtxGetCurrent(&c);
    Say("current context = %s", c ? "set" : "null");
  }
  CUmemAllocationProp p = DeviceProp();
  size_t g = 0;
  R(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (g == 0) g = 2 << 20;
  CUmemGenericAllocationHandle h = 0;
  R(cuMemCreate(&h, g, &p, 0));
  CUdeviceptr r = 0;
  R(cuMemAddressReserve(&r, g, 0, 0, 0));
  R(cuMemMap(r, g, 0, h, 0));
  CUmemAccessDesc d = Access();
  R(cuMemSetAccess(r, g, &d, 1));
  unsigned long long fl = 77;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access flags = %llu", fl);
  CUmemGenericAllocationHandle k = 0;
  R(cuMemRetainAllocationHandle(&k, reinterpret_cast<void*>(r)));
  if (k) R(cuMemRelease(k));
  CUmemAllocationProp q;
  memset(&q, 0, sizeof q);
  R(cuMemGetAllocationPropertiesFromHandle(&q, h));
  unsigned char byte = 0;
  R(cuMemcpyDtoH(&byte, r, 1));
  R(cuMemUnmap(r, g));
  R(cuMemAddressFree(r, g));
  R(cuMemRelease(h));
  if (init) {
    // The handle made without a context, used in one.
    CUcontext ctx = nullptr;
    CUdevice dev = 0;
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    h = 0;
    R(cuMemCreate(&h, g, &p, 0));
    cuCtxSetCurrent(ctx);
    r = 0;
    R(cuMemAddressReserve(&r, g, 0, 0, 0));
    R(cuMemMap(r, g, 0, h, 0));
    R(cuMemSetAccess(r, g, &d, 1));
    R(cuMemsetD8(r, 1, g));
    cuCtxSetCurrent(nullptr);
    R(cuMemUnmap(r, g));
    R(cuMemAddressFree(r, g));
    R(cuMemRelease(h));
  }
  return 0;
}

// contexts: VMM objects made in a created context, seen from the primary one, and after the
// created context is destroyed.
int CaseContexts() {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  CUcontext c2 = nullptr;
  CUctxCreateParams* params = nullptr;
  R(cuCtxCreate(&c2, params, 0, b.dev));
  CUmemGenericAllocationHandle h = b.Create(g);
  CUdeviceptr r = b.Reserve(2 * g);
  if (!h || !r || !b.MapRw(r, g, h)) return 1;
  R(cuMemsetD8(r, 0x61, g));
  CUcontext c = nullptr;
  R(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, r));
  Say("CONTEXT of VMM memory mapped in a created context = %s",
      c == c2 ? "the created context" : (c == b.ctx ? "the primary context" : (c ? "other" : "null")));
  R(cuCtxSetCurrent(b.ctx));
  b.Expect("read from the primary context", r, 4096, 0x61);
  R(cuCtxDestroy(c2));
  R(cuCtxSetCurrent(b.ctx));
  b.Expect("read after the creating context is destroyed", r, 4096, 0x61);
  unsigned long long fl = 77;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access after the creating context is destroyed = %llu", fl);
  CUmemAllocationProp q;
  memset(&q, 0, sizeof q);
  R(cuMemGetAllocationPropertiesFromHandle(&q, h));
  R(cuMemMap(r + g, g, 0, h, 0));
  R(cuMemUnmap(r + g, g));
  R(cuMemUnmap(r, g));
  R(cuMemAddressFree(r, 2 * g));
  R(cuMemRelease(h));
  // Primary context reset with live VMM objects.
  h = b.Create(g);
  r = b.Reserve(g);
  if (!h || !r || !b.MapRw(r, g, h)) return 1;
  R(cuMemsetD8(r, 0x62, g));
  R(cuDevicePrimaryCtxReset(b.dev));
  R(cuCtxSetCurrent(b.ctx));
  CUcontext pc = nullptr;
  R(cuDevicePrimaryCtxRetain(&pc, b.dev));
  R(cuCtxSetCurrent(pc));
  unsigned char v = 0;
  R(cuMemcpyDtoH(&v, r, 1));
  Say("value after the primary context reset = 0x%02x", v);
  fl = 77;
  R(cuMemGetAccess(&fl, &loc, r));
  Say("access after the reset = %llu", fl);
  R(cuMemGetAllocationPropertiesFromHandle(&q, h));
  R(cuMemUnmap(r, g));
  R(cuMemAddressFree(r, g));
  R(cuMemRelease(h));
  return 0;
}

// many: 64 single-granule handles mapped contiguously, one SetAccess, one memset, one unmap.
int CaseMany() {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  const int n = 64;
  size_t f0 = b.Free();
  std::vector<CUmemGenericAllocationHandle> hs;
  for (int i = 0; i < n; ++i) {
    CUmemGenericAllocationHandle h = b.Create(g);
    if (!h) return 1;
    hs.push_back(h);
  }
  CUdeviceptr r = b.Reserve(n * g);
  int ok = 0;
  for (int i = 0; i < n; ++i) ok += cuMemMap(r + i * g, g, 0, hs[i], 0) == CUDA_SUCCESS;
  Say("mapped %d of %d", ok, n);
  CUmemAccessDesc rw = Access();
  R(cuMemSetAccess(r, n * g, &rw, 1));
  for (auto h : hs) cuMemRelease(h);
  size_t f1 = b.Free();
  Say("drop with 64 granules mapped, handles released = %s", Delta(f0, f1, g).c_str());
  R(cuMemsetD8(r, 0x5e, n * g));
  b.Expect("the 40th granule", r + 40 * g, 4096, 0x5e);
  b.RoundTrip("across granules 9..12", r + 9 * g + 17, 3 * g, 5);
  CUdeviceptr base = 0;
  size_t sz = 0;
  R(cuMemGetAddressRange(&base, &sz, r + 30 * g + 5));
  Say("address range: base %s, size %s",
      base == r + 30 * g ? "the mapping's start" : (base == r ? "the reservation's start" : "elsewhere"),
      Delta(sz, 0, g).c_str());
  R(cuMemUnmap(r, n * g));
  size_t f2 = b.Free();
  Say("back after one unmap of all = %s", Delta(f2, f1, g).c_str());
  R(cuMemAddressFree(r, n * g));
  return 0;
}

// bad:<call>: one call with a null out-pointer, a bogus, zero or dead handle, each in its own
// process (a driver that dereferences it would end only this case), then whether the context is
// still usable.
int CaseBad(const std::string& what) {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  CUmemAllocationProp p = DeviceProp();
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = b.Create(g, &p);
  CUdeviceptr r = b.Reserve(2 * g);
  if (!h || !r) return 1;
  size_t sz = 0;
  unsigned long long fl = 77;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemGenericAllocationHandle k = 0;
  CUmemAllocationProp q;
  memset(&q, 0, sizeof q);
  const CUmemGenericAllocationHandle bogus = 0x12345678;
  int fd = -1;
  if (what == "gran_null_out") R(cuMemGetAllocationGranularity(nullptr, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (what == "gran_null_prop") R(cuMemGetAllocationGranularity(&sz, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (what == "create_null_out") R(cuMemCreate(nullptr, g, &p, 0));
  if (what == "create_null_prop") R(cuMemCreate(&k, g, nullptr, 0));
  if (what == "release_0") R(cuMemRelease(0));
  if (what == "release_bogus") R(cuMemRelease(bogus));
  if (what == "release_twice") {
    R(cuMemRelease(h));
    R(cuMemRelease(h));
  }
  if (what == "over_release_mapped") {
    R(cuMemMap(r, g, 0, h, 0));
    R(cuMemRelease(h));
    R(cuMemRelease(h));
    R(cuMemUnmap(r, g));
  }
  if (what == "props_null_out") R(cuMemGetAllocationPropertiesFromHandle(nullptr, h));
  if (what == "props_0") R(cuMemGetAllocationPropertiesFromHandle(&q, 0));
  if (what == "props_bogus") R(cuMemGetAllocationPropertiesFromHandle(&q, bogus));
  if (what == "props_released") {
    R(cuMemRelease(h));
    R(cuMemGetAllocationPropertiesFromHandle(&q, h));
  }
  if (what == "reserve_null_out") R(cuMemAddressReserve(nullptr, g, 0, 0, 0));
  if (what == "map_0") R(cuMemMap(r, g, 0, 0, 0));
  if (what == "map_bogus") R(cuMemMap(r, g, 0, bogus, 0));
  if (what == "map_released") {
    R(cuMemRelease(h));
    R(cuMemMap(r, g, 0, h, 0));
  }
  if (what == "setaccess_null_desc") {
    R(cuMemMap(r, g, 0, h, 0));
    R(cuMemSetAccess(r, g, nullptr, 1));
  }
  if (what == "getaccess_null_flags") {
    R(cuMemMap(r, g, 0, h, 0));
    R(cuMemGetAccess(nullptr, &loc, r));
  }
  if (what == "getaccess_null_location") {
    R(cuMemMap(r, g, 0, h, 0));
    R(cuMemGetAccess(&fl, nullptr, r));
  }
  if (what == "retain_null_out") {
    R(cuMemMap(r, g, 0, h, 0));
    R(cuMemRetainAllocationHandle(nullptr, reinterpret_cast<void*>(r)));
  }
  if (what == "retain_null_addr") R(cuMemRetainAllocationHandle(&k, nullptr));
  if (what == "export_null_out") {
    R(cuMemExportToShareableHandle(nullptr, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  }
  if (what == "export_0") R(cuMemExportToShareableHandle(&fd, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  if (what == "export_bogus") {
    R(cuMemExportToShareableHandle(&fd, bogus, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  }
  if (what == "export_released") {
    R(cuMemRelease(h));
    R(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  }
  if (what == "import_null_out") {
    R(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    R(cuMemImportFromShareableHandle(nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  }
  if (what == "unmap_twice") {
    R(cuMemMap(r, g, 0, h, 0));
    R(cuMemUnmap(r, g));
    R(cuMemUnmap(r, g));
  }
  if (what == "address_free_twice") {
    R(cuMemAddressFree(r, 2 * g));
    R(cuMemAddressFree(r, 2 * g));
  }
  b.Usable("afterwards");
  return 0;
}

const char* const kBadCalls[] = {
    "gran_null_out",      "gran_null_prop",        "create_null_out",     "create_null_prop",
    "release_0",          "release_bogus",         "release_twice",       "over_release_mapped",
    "props_null_out",     "props_0",               "props_bogus",         "props_released",
    "reserve_null_out",   "map_0",                 "map_bogus",           "map_released",
    "setaccess_null_desc", "getaccess_null_flags", "getaccess_null_location", "retain_null_out",
    "retain_null_addr",   "export_null_out",       "export_0",            "export_bogus",
    "export_released",    "import_null_out",       "unmap_twice",         "address_free_twice"};

// cost: latency of the VMM calls (the only lines that differ from run to run).
int CaseCost() {
  Base b;
  if (!b.Init()) return 1;
  const size_t g = b.g;
  const int n = 200;
  auto time = [&](const char* what, auto fn) {
    double t0 = NowUs();
    for (int i = 0; i < n; ++i) fn();
    Say("%s = %.2f us", what, (NowUs() - t0) / n);
  };
  CUmemAllocationProp p = DeviceProp();
  time("cuMemCreate+cuMemRelease of 1 granule", [&] {
    CUmemGenericAllocationHandle h = 0;
    cuMemCreate(&h, g, &p, 0);
    cuMemRelease(h);
  });
  time("cuMemAddressReserve+cuMemAddressFree of 1 granule", [&] {
    CUdeviceptr r = 0;
    cuMemAddressReserve(&r, g, 0, 0, 0);
    cuMemAddressFree(r, g);
  });
  CUmemGenericAllocationHandle h = b.Create(g);
  CUdeviceptr r = b.Reserve(g);
  CUmemAccessDesc rw = Access();
  time("cuMemMap+cuMemSetAccess+cuMemUnmap of 1 granule", [&] {
    cuMemMap(r, g, 0, h, 0);
    cuMemSetAccess(r, g, &rw, 1);
    cuMemUnmap(r, g);
  });
  time("cuMemGetAllocationGranularity", [&] {
    size_t x = 0;
    cuMemGetAllocationGranularity(&x, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  });
  cuMemAddressFree(r, g);
  cuMemRelease(h);
  return 0;
}

std::vector<std::string> Cases() {
  std::vector<std::string> cases = {"attrs", "granularity", "create", "props", "reserve", "map"};
  for (const char* s : {"noaccess", "readonly", "unmapped", "afterunmap", "freed", "partial"}) {
    for (const char* o : {"htod", "dtoh", "memset", "dtod_in", "dtod_out", "htod_async",
                          "dtoh_async", "memset_async"}) {
      cases.push_back(std::string("access:") + s + ":" + o);
    }
  }
  for (const char* w : {"unmap", "release", "release_unmap_free"})
    cases.push_back(std::string("inflight:") + w);
  for (const char* c : kBadCalls) cases.push_back(std::string("bad:") + c);
  cases.push_back("noctx");
  cases.push_back("noinit");
  cases.push_back("contexts");
  cases.push_back("lifetime");
  cases.push_back("export");
  cases.push_back("many");
  cases.push_back("cost");
  return cases;
}

// Cases that read cuMemGetInfo deltas or time calls: run one at a time (listed last).
bool IsAlone(const std::string& c) {
  return c == "lifetime" || c == "export" || c == "many" || c == "cost";
}

int RunOne(const std::string& c) {
  g_case = c.c_str();
  auto part = [&](int i) {
    size_t a = 0;
    for (int k = 0; k < i; ++k) a = c.find(':', a) + 1;
    size_t e = c.find(':', a);
    return c.substr(a, e == std::string::npos ? std::string::npos : e - a);
  };
  if (c == "attrs") return CaseAttrs();
  if (c == "granularity") return CaseGranularity();
  if (c == "create") return CaseCreate();
  if (c == "props") return CaseProps();
  if (c == "reserve") return CaseReserve();
  if (c == "map") return CaseMap();
  if (c.rfind("access:", 0) == 0) return CaseAccess(part(1), part(2));
  if (c == "lifetime") return CaseLifetime();
  if (c.rfind("inflight:", 0) == 0) return CaseInflight(part(1));
  if (c == "export") return CaseExport();
  if (c.rfind("bad:", 0) == 0) return CaseBad(part(1));
  if (c == "noctx") return CaseNoContext(true);
  if (c == "noinit") return CaseNoContext(false);
  if (c == "contexts") return CaseContexts();
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
  std::string dir = "/tmp/vmm_probe_" + std::to_string(getpid());
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
    fprintf(stderr, "usage: vmm_probe all [jobs] | vmm_probe list | vmm_probe <case>\n");
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
    RunAll(argv[0], parallel, jobs, 20.0);
    RunAll(argv[0], alone, 1, 20.0);
    return 0;
  }
  return RunOne(a);
}
