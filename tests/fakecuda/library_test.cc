// Copyright 2026 The cuhal Authors.
// Conformance: libraries and kernels (cuLibrary*, cuKernel*), function introspection
// (cuFuncGetName, cuFuncGetParamInfo, cuFuncGetModule, cuFuncIsLoaded, cuFuncLoad) and the
// occupancy queries (cuOccupancy*).
//
// Measured 2026-12-06, H100 driver 580.159.04: ci/gpu-probes/library_probe.cc ran on an H100
// 80GB HBM3 (driver 580.159.04, CUDA 13.0 driver API; the H200's driver branch); its output is
// ci/gpu-probes/results/2026-12-06-h100-library.real.txt. Each test names the probe case that
// measured it; what the probe did not measure is marked UNMEASURED. The occupancy expectations
// are NVIDIA's occupancy calculator (cuda_occupancy.h) on the H200 profile's limits, which the
// H100 shares (132 SMs, 65536 registers and 233472 bytes of shared memory per SM), and agree with
// the measurement. docs/driver_facts.md, "Library, kernel and occupancy API", lists the facts.
// FakeLibraryTest holds what is the fake's own (leak inventory, stale and foreign handles: the
// real driver crashes, hangs or reads freed memory on many of those).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

// add_u32(u32* p, u32 v): *p += v. _Z6squarePfi(float* p, int n): p[i] *= p[i].
// params(u8, u64, u32, .align 16 b8[24], u16, f64). spin(u32* p, u32 n): loops n times, *p = n.
const char kLibPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .global .align 4 .u32 counter = 7;
.visible .global .align 4 .attribute(.managed) .u32 mvar = 5;
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

// The probe's occupancy kernels: .maxnreg `regs` with more live values than that (ptxas uses
// all `regs`), and `shared` bytes of static shared memory.
std::string OccKernel(int regs, int shared) {
  int live = regs + 24;
  std::string s = ".visible .entry occ_" + std::to_string(regs) + "_" + std::to_string(shared) +
                  "(.param .u64 p, .param .u64 q) .maxnreg " + std::to_string(regs) + " {\n";
  s += "  .reg .u64 %a, %b;\n  .reg .u32 %v<" + std::to_string(live) + ">;\n";
  if (shared > 0) s += "  .shared .align 16 .b8 sm[" + std::to_string(shared) + "];\n";
  s += "  ld.param.u64 %a, [p];\n  ld.param.u64 %b, [q];\n";
  for (int i = 0; i < live; ++i) {
    s += "  ld.volatile.global.u32 %v" + std::to_string(i) + ", [%a+" + std::to_string(4 * i) +
         "];\n";
  }
  if (shared > 0) s += "  st.volatile.shared.u32 [sm], %v0;\n";
  for (int i = live - 1; i >= 0; --i) {
    s += "  st.volatile.global.u32 [%b+" + std::to_string(4 * i) + "], %v" + std::to_string(i) +
         ";\n";
  }
  return s + "  ret;\n}\n";
}

class LibraryTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (api().cuLibraryLoadData == nullptr) GTEST_SKIP() << "the driver has no library API";
    ASSERT_EQ(Load(&lib_, kLibPtx), CUDA_SUCCESS);
    ASSERT_EQ(api().cuLibraryGetKernel(&add_, lib_, "add_u32"), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemAlloc(&buf_, 4096), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemsetD8(buf_, 0, 4096), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (buf_ != 0) {
      EXPECT_EQ(api().cuMemFree(buf_), CUDA_SUCCESS);
    }
    if (lib_ != nullptr) {
      EXPECT_EQ(api().cuLibraryUnload(lib_), CUDA_SUCCESS);
    }
    PrimaryContextTest::TearDown();
  }
  CUresult Load(CUlibrary* lib, const char* ptx) {
    return api().cuLibraryLoadData(lib, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0);
  }
  unsigned Read(CUdeviceptr p) {
    unsigned v = 0xdeadbeef;
    EXPECT_EQ(api().cuMemcpyDtoH(&v, p, 4), CUDA_SUCCESS);
    return v;
  }
  CUresult LaunchAdd(CUfunction f, unsigned v, CUdeviceptr p) {
    void* args[] = {&p, &v};
    return api().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
  }

  CUlibrary lib_ = nullptr;
  CUkernel add_ = nullptr;
  CUdeviceptr buf_ = 0;
};

// Case "noctx": a library is loaded and queried with no current context; what needs a context
// (its function, module, globals) answers INVALID_CONTEXT, and works once one is current.
TEST_P(LibraryTest, LoadsWithoutAContextAndLoadsIntoOneOnDemand) {
  CUcontext popped = nullptr;
  ASSERT_EQ(api().cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  CUlibrary lib = nullptr;
  EXPECT_EQ(Load(&lib, kLibPtx), CUDA_SUCCESS);
  unsigned n = 0;
  EXPECT_EQ(api().cuLibraryGetKernelCount(&n, lib), CUDA_SUCCESS);
  EXPECT_EQ(n, 4u);
  CUkernel k = nullptr;
  ASSERT_EQ(api().cuLibraryGetKernel(&k, lib, "add_u32"), CUDA_SUCCESS);
  int v = 0;
  EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_PTX_VERSION, k, 0), CUDA_SUCCESS);
  EXPECT_EQ(v, 90);
  CUfunction f = nullptr;
  EXPECT_EQ(api().cuKernelGetFunction(&f, k), CUDA_ERROR_INVALID_CONTEXT);
  CUmodule m = nullptr;
  EXPECT_EQ(api().cuLibraryGetModule(&m, lib), CUDA_ERROR_INVALID_CONTEXT);
  CUdeviceptr g = 0;
  size_t bytes = 0;
  EXPECT_EQ(api().cuLibraryGetGlobal(&g, &bytes, lib, "counter"), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(api().cuCtxPushCurrent(popped), CUDA_SUCCESS);
  EXPECT_EQ(api().cuKernelGetFunction(&f, k), CUDA_SUCCESS);
  EXPECT_EQ(api().cuLibraryGetModule(&m, lib), CUDA_SUCCESS);
  CUmodule fm = nullptr;
  EXPECT_EQ(api().cuFuncGetModule(&fm, f), CUDA_SUCCESS);
  EXPECT_EQ(fm, m);
  EXPECT_EQ(api().cuLibraryGetGlobal(&g, &bytes, lib, "counter"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  EXPECT_EQ(Read(g), 7u);
  EXPECT_EQ(api().cuLibraryUnload(lib), CUDA_SUCCESS);
}

// Cases "kernels", "names": enumeration in the REVERSE of the image's order (measured
// 2026-12-06, H100 driver 580.159.04; the functions of the library's module keep the image's
// order), names as written (mangled), one handle per name; a kernel's function names itself
// with the very pointer cuKernelGetName gives (measured).
TEST_P(LibraryTest, KernelsEnumerateInReverseImageOrderUnderTheirMangledNames) {
  unsigned n = 0;
  ASSERT_EQ(api().cuLibraryGetKernelCount(&n, lib_), CUDA_SUCCESS);
  ASSERT_EQ(n, 4u);
  std::vector<CUkernel> ks(n);
  ASSERT_EQ(api().cuLibraryEnumerateKernels(ks.data(), n, lib_), CUDA_SUCCESS);
  const char* expected[] = {"spin", "params", "_Z6squarePfi", "add_u32"};
  for (unsigned i = 0; i < n; ++i) {
    const char* name = nullptr;
    ASSERT_EQ(api().cuKernelGetName(&name, ks[i]), CUDA_SUCCESS);
    EXPECT_STREQ(name, expected[i]);
    CUkernel by_name = nullptr;
    EXPECT_EQ(api().cuLibraryGetKernel(&by_name, lib_, expected[i]), CUDA_SUCCESS);
    EXPECT_EQ(by_name, ks[i]);
    CUfunction f = nullptr;
    ASSERT_EQ(api().cuKernelGetFunction(&f, ks[i]), CUDA_SUCCESS);
    const char* fname = nullptr;
    ASSERT_EQ(api().cuFuncGetName(&fname, f), CUDA_SUCCESS);
    EXPECT_STREQ(fname, expected[i]);
    EXPECT_EQ(fname, name) << "the same pointer as the kernel's name";
  }
  // Fewer slots get the first kernels of that order.
  CUkernel two[2] = {nullptr, nullptr};
  ASSERT_EQ(api().cuLibraryEnumerateKernels(two, 2, lib_), CUDA_SUCCESS);
  EXPECT_EQ(two[0], ks[0]);
  EXPECT_EQ(two[1], ks[1]);
  CUkernel k = nullptr;
  EXPECT_EQ(api().cuLibraryGetKernel(&k, lib_, "square"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(api().cuLibraryGetKernel(&k, lib_, "counter"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(api().cuLibraryGetKernel(&k, lib_, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuLibraryGetKernel(nullptr, lib_, "add_u32"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuLibraryEnumerateKernels(nullptr, n, lib_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuLibraryGetKernelCount(nullptr, lib_), CUDA_ERROR_INVALID_VALUE);
  CUlibrary owner = nullptr;
  EXPECT_EQ(api().cuKernelGetLibrary(&owner, add_), CUDA_SUCCESS);
  EXPECT_EQ(owner, lib_);
}

// Case "launch": a CUkernel cast to CUfunction launches in the stream's context, loading the
// library there; each context has its own function of the kernel.
TEST_P(LibraryTest, AKernelLaunchesInPlaceOfAFunctionInAnyContext) {
  EXPECT_EQ(LaunchAdd(reinterpret_cast<CUfunction>(add_), 3, buf_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 3u);
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&f, add_), CUDA_SUCCESS);
  EXPECT_EQ(LaunchAdd(f, 3, buf_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 6u);
  CUcontext c2 = nullptr;
  ASSERT_EQ(CreateContext(api(), &c2, 0, 0), CUDA_SUCCESS);
  CUdeviceptr b2 = 0;
  ASSERT_EQ(api().cuMemAlloc(&b2, 64), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD8(b2, 0, 64), CUDA_SUCCESS);
  EXPECT_EQ(LaunchAdd(reinterpret_cast<CUfunction>(add_), 5, b2), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(b2), 5u);
  CUfunction f2 = nullptr;
  EXPECT_EQ(api().cuKernelGetFunction(&f2, add_), CUDA_SUCCESS);
  EXPECT_NE(f2, f);
  EXPECT_EQ(LaunchAdd(f, 1, b2), CUDA_ERROR_INVALID_HANDLE) << "another context's function";
  EXPECT_EQ(api().cuMemFree(b2), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxDestroy(c2), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
}

// Case "params": offsets and sizes of the device-side parameter layout.
TEST_P(LibraryTest, ParamInfoGivesTheDeviceLayout) {
  CUkernel k = nullptr;
  ASSERT_EQ(api().cuLibraryGetKernel(&k, lib_, "params"), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&f, k), CUDA_SUCCESS);
  const size_t offsets[] = {0, 8, 16, 32, 56, 64}, sizes[] = {1, 8, 4, 24, 2, 8};
  for (size_t i = 0; i < 6; ++i) {
    size_t off = 999, size = 999;
    EXPECT_EQ(api().cuKernelGetParamInfo(k, i, &off, &size), CUDA_SUCCESS);
    EXPECT_EQ(off, offsets[i]);
    EXPECT_EQ(size, sizes[i]);
    off = size = 999;
    EXPECT_EQ(api().cuFuncGetParamInfo(f, i, &off, &size), CUDA_SUCCESS);
    EXPECT_EQ(off, offsets[i]);
    EXPECT_EQ(size, sizes[i]);
  }
  size_t off = 999, size = 999;
  EXPECT_EQ(api().cuKernelGetParamInfo(k, 6, &off, &size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(off, 999u);
  EXPECT_EQ(api().cuKernelGetParamInfo(k, 3, &off, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(off, 32u);
  EXPECT_EQ(api().cuKernelGetParamInfo(k, 3, nullptr, &size), CUDA_ERROR_INVALID_VALUE);
  // Measured 2026-12-06, H100 driver 580.159.04 (cases "params", "bad:null:*ParamInfo"): a null
  // kernel or function is INVALID_VALUE, not INVALID_HANDLE.
  EXPECT_EQ(api().cuKernelGetParamInfo(nullptr, 0, &off, &size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuFuncGetParamInfo(nullptr, 0, &off, &size), CUDA_ERROR_INVALID_VALUE);
  // Measured (case "noctx"): cuKernelGetParamInfo, unlike cuKernelGetAttribute and
  // cuKernelGetName, needs a current context; without one the outputs stay untouched.
  CUcontext popped = nullptr;
  ASSERT_EQ(api().cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  off = size = 99;
  EXPECT_EQ(api().cuKernelGetParamInfo(k, 1, &off, &size), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(off, 99u);
  EXPECT_EQ(size, 99u);
  const char* name = nullptr;
  EXPECT_EQ(api().cuKernelGetName(&name, k), CUDA_SUCCESS);
  int v = 0;
  EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k, 0),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxPushCurrent(popped), CUDA_SUCCESS);
}

// Case "setattr": a kernel attribute set for a device reaches the kernel's functions there,
// existing and new; a function's own set does not reach the kernel, and (measured 2026-12-06,
// H100 driver 580.159.04) a later kernel set no longer reaches that function, while the
// kernel's function in another context follows it.
TEST_P(LibraryTest, KernelAttributesReachItsFunctions) {
  CUfunction before = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&before, add_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536,
                                       add_, 0),
            CUDA_SUCCESS);
  int v = 0;
  EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, add_,
                                       0),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 65536);
  EXPECT_EQ(api().cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, before),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 65536);
  EXPECT_EQ(api().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449,
                                       add_, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, 16, add_, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024,
                                       add_, -1),
            CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(api().cuFuncSetAttribute(before, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     4096),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, add_,
                                       0),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 65536);
  CUcontext c2 = nullptr;
  ASSERT_EQ(CreateContext(api(), &c2, 0, 0), CUDA_SUCCESS);
  CUfunction other = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&other, add_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, other),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 65536) << "made after the kernel set: has the kernel's value";
  EXPECT_EQ(api().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 2048,
                                       add_, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, other),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 2048);
  EXPECT_EQ(api().cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, before),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 4096) << "set on the function itself: the kernel's later set does not reach it";
  EXPECT_EQ(api().cuCtxDestroy(c2), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
  EXPECT_EQ(api().cuKernelSetCacheConfig(add_, CU_FUNC_CACHE_PREFER_SHARED, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuKernelSetCacheConfig(add_, static_cast<CUfunc_cache>(4), 0),
            CUDA_ERROR_INVALID_VALUE);
}

// Cases "unload", "inflight": unloading waits for a queued kernel of the library, then every
// kernel, function and module of it is an invalid handle and its globals are gone.
TEST_P(LibraryTest, UnloadWaitsForQueuedWorkThenInvalidatesEverything) {
  CUkernel spin = nullptr;
  ASSERT_EQ(api().cuLibraryGetKernel(&spin, lib_, "spin"), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&f, add_), CUDA_SUCCESS);
  CUmodule m = nullptr;
  ASSERT_EQ(api().cuLibraryGetModule(&m, lib_), CUDA_SUCCESS);
  CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  unsigned n = 20000;
  void* args[] = {&buf_, &n};
  ASSERT_EQ(api().cuLaunchKernel(reinterpret_cast<CUfunction>(spin), 1, 1, 1, 1, 1, 1, 0, s, args,
                                 nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuLibraryUnload(lib_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), n);
  CUlibrary gone = lib_;
  lib_ = nullptr;
  EXPECT_EQ(api().cuLibraryUnload(gone), CUDA_ERROR_INVALID_HANDLE);
  unsigned count = 0;
  EXPECT_EQ(api().cuLibraryGetKernelCount(&count, gone), CUDA_ERROR_INVALID_HANDLE);
  CUfunction f2 = nullptr;
  EXPECT_EQ(api().cuKernelGetFunction(&f2, add_), CUDA_ERROR_INVALID_HANDLE);
  const char* name = nullptr;
  EXPECT_EQ(api().cuKernelGetName(&name, add_), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(api().cuFuncGetName(&name, f), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(LaunchAdd(f, 1, buf_), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(LaunchAdd(reinterpret_cast<CUfunction>(add_), 1, buf_), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(api().cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(api().cuStreamDestroy(s), CUDA_SUCCESS);
}

// Case "globals": globals per context; managed variables through cuLibraryGetManaged and also
// through cuLibraryGetGlobal (same address, measured 2026-12-06, H100 driver 580.159.04); a
// kernel's name is INVALID_VALUE to cuLibraryGetGlobal (measured); no unified functions in PTX:
// INVALID_VALUE for any name (measured).
TEST_P(LibraryTest, GlobalsAreLoadedPerContextAndManagedOnesApart) {
  CUdeviceptr p = 0;
  size_t bytes = 0;
  ASSERT_EQ(api().cuLibraryGetGlobal(&p, &bytes, lib_, "counter"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  EXPECT_EQ(Read(p), 7u);
  EXPECT_EQ(api().cuLibraryGetGlobal(&p, &bytes, lib_, "nope"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(api().cuLibraryGetGlobal(nullptr, nullptr, lib_, "counter"),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuLibraryGetGlobal(&p, &bytes, lib_, "add_u32"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuLibraryGetManaged(&p, &bytes, lib_, "counter"), CUDA_ERROR_NOT_FOUND);
  CUdeviceptr mp = 0;
  ASSERT_EQ(api().cuLibraryGetManaged(&mp, &bytes, lib_, "mvar"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  CUdeviceptr via_global = 0;
  EXPECT_EQ(api().cuLibraryGetGlobal(&via_global, &bytes, lib_, "mvar"), CUDA_SUCCESS);
  EXPECT_EQ(via_global, mp);
  EXPECT_EQ(*reinterpret_cast<volatile unsigned*>(mp), 5u) << "managed memory is host-readable";
  // One managed variable for the library, whatever context asks (documented; UNMEASURED).
  CUcontext c2 = nullptr;
  ASSERT_EQ(CreateContext(api(), &c2, 0, 0), CUDA_SUCCESS);
  CUdeviceptr mp2 = 0, p2 = 0;
  EXPECT_EQ(api().cuLibraryGetManaged(&mp2, &bytes, lib_, "mvar"), CUDA_SUCCESS);
  EXPECT_EQ(mp2, mp);
  EXPECT_EQ(api().cuLibraryGetGlobal(&p2, &bytes, lib_, "counter"), CUDA_SUCCESS);
  EXPECT_NE(p2, p) << "a global per context";
  EXPECT_EQ(api().cuCtxDestroy(c2), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
  EXPECT_EQ(*reinterpret_cast<volatile unsigned*>(mp), 5u) << "outlives the context";
  void* fp = nullptr;
  EXPECT_EQ(api().cuLibraryGetUnifiedFunction(&fp, lib_, "add_u32"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuLibraryGetUnifiedFunction(&fp, lib_, "nope"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuLibraryGetUnifiedFunction(&fp, nullptr, "add_u32"), CUDA_ERROR_INVALID_HANDLE);
}

// Cases "occ", "occattr": occupancy of kernels whose registers .maxnreg fixes, by block size,
// dynamic shared memory and carveout, as the occupancy calculator computes it from the H200's
// limits (65536 registers and 233472 bytes of shared memory per SM, 1024 reserved per block).
TEST_P(LibraryTest, OccupancyFollowsRegistersSharedMemoryAndCarveout) {
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n" + OccKernel(32, 0) +
                    OccKernel(64, 0) + OccKernel(128, 0) + OccKernel(32, 4096);
  CUlibrary lib = nullptr;
  ASSERT_EQ(Load(&lib, ptx.c_str()), CUDA_SUCCESS);
  auto fn = [&](const char* name) {
    CUkernel k = nullptr;
    CUfunction f = nullptr;
    EXPECT_EQ(api().cuLibraryGetKernel(&k, lib, name), CUDA_SUCCESS);
    EXPECT_EQ(api().cuKernelGetFunction(&f, k), CUDA_SUCCESS);
    return f;
  };
  auto blocks = [&](CUfunction f, int block, size_t dynamic) {
    int n = -1;
    EXPECT_EQ(api().cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, block, dynamic),
              CUDA_SUCCESS);
    return n;
  };
  CUfunction r32 = fn("occ_32_0"), r64 = fn("occ_64_0"), r128 = fn("occ_128_0");
  CUfunction s4k = fn("occ_32_4096");
  int regs = 0;
  EXPECT_EQ(api().cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, r64), CUDA_SUCCESS);
  EXPECT_EQ(regs, 64);
  // Threads per SM (2048) and blocks per SM (32) bound the 32-register kernel.
  EXPECT_EQ(blocks(r32, 32, 0), 32);
  EXPECT_EQ(blocks(r32, 256, 0), 8);
  EXPECT_EQ(blocks(r32, 1024, 0), 2);
  // Registers: 64 a thread leave 1024 threads per SM, 128 leave 512.
  EXPECT_EQ(blocks(r64, 128, 0), 8);
  EXPECT_EQ(blocks(r64, 1024, 0), 1);
  EXPECT_EQ(blocks(r128, 128, 0), 4);
  EXPECT_EQ(blocks(r128, 1024, 0), 0);
  // Shared memory: 4096 + 1024 reserved a block.
  EXPECT_EQ(blocks(s4k, 32, 0), 32);
  EXPECT_EQ(blocks(r32, 128, 20000), 11);
  EXPECT_EQ(blocks(r32, 128, 48 * 1024 + 1), 0) << "past the default dynamic limit";
  int min_grid = 0, block = 0;
  EXPECT_EQ(api().cuOccupancyMaxPotentialBlockSize(&min_grid, &block, r64, nullptr, 0, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(block, 1024);
  EXPECT_EQ(min_grid, 132);
  size_t avail = 0;
  EXPECT_EQ(api().cuOccupancyAvailableDynamicSMemPerBlock(&avail, r32, 8, 128), CUDA_SUCCESS);
  EXPECT_EQ(avail, 29184u);
  EXPECT_EQ(api().cuOccupancyAvailableDynamicSMemPerBlock(&avail, r32, 33, 128),
            CUDA_ERROR_INVALID_VALUE);
  // A CUkernel in place of the function: the kernel's function in the current context.
  CUkernel k64 = nullptr;
  ASSERT_EQ(api().cuLibraryGetKernel(&k64, lib, "occ_64_0"), CUDA_SUCCESS);
  EXPECT_EQ(blocks(reinterpret_cast<CUfunction>(k64), 128, 0), 8);
  int n = 0;
  EXPECT_EQ(api().cuOccupancyMaxActiveBlocksPerMultiprocessor(nullptr, r32, 128, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, r32, 0, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, r32, 128, 0, 2),
            CUDA_ERROR_INVALID_VALUE);
  // Measured 2026-12-06, H100 driver 580.159.04 (case "occbad"): a negative block size limit
  // is INVALID_VALUE, the outputs untouched.
  min_grid = block = 77;
  EXPECT_EQ(api().cuOccupancyMaxPotentialBlockSize(&min_grid, &block, r32, nullptr, 0, -5),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(min_grid, 77);
  EXPECT_EQ(block, 77);
  EXPECT_EQ(api().cuLibraryUnload(lib), CUDA_SUCCESS);
}

// Cases "attrs", "occ": register counts and spills come from compiled code. Measured 2026-12-06,
// H100 driver 580.159.04: add_u32 (four 32-bit registers' worth declared) uses 8 registers and
// no local memory; each .maxnreg kernel with more values live than its cap uses exactly the cap
// and spills (LOCAL_SIZE_BYTES nonzero). The fake estimates from the PTX's declarations
// (fakecuda/internal/module_image.cc, EstimateRegisters).
TEST_P(LibraryTest, RegistersAndSpillsFollowThePtx) {
  int v = -1;
  EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, add_, 0), CUDA_SUCCESS);
  EXPECT_EQ(v, 8);
  EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, add_, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 0);
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n" + OccKernel(40, 0) +
                    OccKernel(255, 0);
  CUlibrary lib = nullptr;
  ASSERT_EQ(Load(&lib, ptx.c_str()), CUDA_SUCCESS);
  for (int regs : {40, 255}) {
    CUkernel k = nullptr;
    std::string name = "occ_" + std::to_string(regs) + "_0";
    ASSERT_EQ(api().cuLibraryGetKernel(&k, lib, name.c_str()), CUDA_SUCCESS);
    EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0), CUDA_SUCCESS);
    EXPECT_EQ(v, regs) << name;
    EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k, 0),
              CUDA_SUCCESS);
    EXPECT_GT(v, 0) << name << " spills";
  }
  EXPECT_EQ(api().cuLibraryUnload(lib), CUDA_SUCCESS);
}

// Case "occattr": .reqntid does not lower MAX_THREADS_PER_BLOCK (measured 2026-12-06, H100
// driver 580.159.04: .reqntid 64 reports 1024, and the potential block size is 1024), .maxntid
// does.
TEST_P(LibraryTest, ReqntidLeavesMaxThreadsPerBlock) {
  CUlibrary lib = nullptr;
  ASSERT_EQ(Load(&lib,
                 ".version 8.0\n.target sm_90\n.address_size 64\n"
                 ".visible .entry maxt() .maxntid 256 { ret; }\n"
                 ".visible .entry reqt() .reqntid 64 { ret; }\n"),
            CUDA_SUCCESS);
  auto max_threads = [&](const char* name) {
    CUkernel k = nullptr;
    CUfunction f = nullptr;
    EXPECT_EQ(api().cuLibraryGetKernel(&k, lib, name), CUDA_SUCCESS);
    EXPECT_EQ(api().cuKernelGetFunction(&f, k), CUDA_SUCCESS);
    int v = -1;
    EXPECT_EQ(api().cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f),
              CUDA_SUCCESS);
    int min_grid = -1, block = -1;
    EXPECT_EQ(api().cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, nullptr, 0, 0),
              CUDA_SUCCESS);
    return std::to_string(v) + " " + std::to_string(min_grid) + " " + std::to_string(block);
  };
  EXPECT_EQ(max_threads("maxt"), "256 1056 256");
  EXPECT_EQ(max_threads("reqt"), "1024 264 1024");
  EXPECT_EQ(api().cuLibraryUnload(lib), CUDA_SUCCESS);
}

// Case "cluster": the cluster queries' argument checks (measured 2026-12-06, H100 driver
// 580.159.04). The cluster counts themselves are NOT modelled as measured (see
// docs/driver_facts.md): only what does not depend on the GPU's GPC layout is asserted here.
TEST_P(LibraryTest, ClusterQueriesCheckTheirArgumentsAsMeasured) {
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n" + OccKernel(32, 0) +
                    OccKernel(64, 0);
  CUlibrary lib = nullptr;
  ASSERT_EQ(Load(&lib, ptx.c_str()), CUDA_SUCCESS);
  CUfunction f = nullptr, g = nullptr;
  CUkernel k = nullptr;
  ASSERT_EQ(api().cuLibraryGetKernel(&k, lib, "occ_32_0"), CUDA_SUCCESS);
  ASSERT_EQ(api().cuKernelGetFunction(&f, k), CUDA_SUCCESS);
  ASSERT_EQ(api().cuLibraryGetKernel(&k, lib, "occ_64_0"), CUDA_SUCCESS);
  ASSERT_EQ(api().cuKernelGetFunction(&g, k), CUDA_SUCCESS);
  CUlaunchConfig c;
  std::memset(&c, 0, sizeof c);
  c.gridDimX = 64;
  c.gridDimY = c.gridDimZ = 1;
  c.blockDimX = 128;
  c.blockDimY = c.blockDimZ = 1;
  int cs = -1, nc = -1;
  EXPECT_EQ(api().cuOccupancyMaxPotentialClusterSize(&cs, nullptr, &c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuOccupancyMaxActiveClusters(&nc, nullptr, &c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuOccupancyMaxPotentialClusterSize(&cs, f, &c), CUDA_SUCCESS);
  EXPECT_EQ(cs, 8);
  // No cluster shape at all: no clusters, no error.
  EXPECT_EQ(api().cuOccupancyMaxActiveClusters(&nc, f, &c), CUDA_SUCCESS);
  EXPECT_EQ(nc, 0);
  // A block larger than the device allows: a potential cluster size of 0, no error.
  c.blockDimX = 2048;
  EXPECT_EQ(api().cuOccupancyMaxPotentialClusterSize(&cs, f, &c), CUDA_SUCCESS);
  EXPECT_EQ(cs, 0);
  c.blockDimX = 128;
  CUlaunchAttribute at;
  std::memset(&at, 0, sizeof at);
  at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  at.value.clusterDim.x = 3;
  at.value.clusterDim.y = at.value.clusterDim.z = 1;
  c.attrs = &at;
  c.numAttrs = 1;
  EXPECT_EQ(api().cuOccupancyMaxActiveClusters(&nc, f, &c), CUDA_ERROR_INVALID_CLUSTER_SIZE)
      << "a grid of 64 is no whole number of clusters of 3";
  at.value.clusterDim.x = 16;
  EXPECT_EQ(api().cuOccupancyMaxActiveClusters(&nc, f, &c), CUDA_ERROR_INVALID_CLUSTER_SIZE)
      << "16 is not portable";
  ASSERT_EQ(api().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuOccupancyMaxActiveClusters(&nc, f, &c), CUDA_SUCCESS);
  EXPECT_GT(nc, 0);
  at.value.clusterDim.x = 32;
  nc = -1;
  EXPECT_EQ(api().cuOccupancyMaxActiveClusters(&nc, f, &c), CUDA_SUCCESS);
  EXPECT_EQ(nc, 0) << "beyond 16: no clusters, no error";
  // REQUIRED_CLUSTER_WIDTH alone (height and depth unset): INVALID_CLUSTER_SIZE to both.
  ASSERT_EQ(api().cuFuncSetAttribute(g, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4),
            CUDA_SUCCESS);
  c.attrs = nullptr;
  c.numAttrs = 0;
  EXPECT_EQ(api().cuOccupancyMaxPotentialClusterSize(&cs, g, &c),
            CUDA_ERROR_INVALID_CLUSTER_SIZE);
  EXPECT_EQ(api().cuOccupancyMaxActiveClusters(&nc, g, &c), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  EXPECT_EQ(api().cuLibraryUnload(lib), CUDA_SUCCESS);
}

// Cases "load", "fromfile": the load does not parse (measured 2026-12-06, H100 driver
// 580.159.04): text that is no image, an empty string, PTX that does not parse and PTX of
// version 99.0 all load; a library of garbage has no kernels and cuLibraryGetKernel fails
// with INVALID_IMAGE. From a file: an empty name is INVALID_VALUE, a directory OUT_OF_MEMORY,
// an empty file INVALID_IMAGE, a missing one FILE_NOT_FOUND.
TEST_P(LibraryTest, ImagesAreCheckedWhenUsedNotWhenLoaded) {
  for (const char* image :
       {"this is not an image", "",
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken( {\n",
        ".version 99.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n"}) {
    CUlibrary lib = nullptr;
    EXPECT_EQ(Load(&lib, image), CUDA_SUCCESS) << image;
    EXPECT_NE(lib, nullptr);
    CUkernel k = nullptr;
    // Which error each gives is measured for garbage only (INVALID_IMAGE); UNMEASURED for the
    // others, so only that it fails is asserted.
    EXPECT_NE(api().cuLibraryGetKernel(&k, lib, "k"), CUDA_SUCCESS) << image;
    EXPECT_EQ(api().cuLibraryUnload(lib), CUDA_SUCCESS);
  }
  CUlibrary lib = nullptr;
  ASSERT_EQ(Load(&lib, "this is not an image"), CUDA_SUCCESS);
  unsigned n = 99;
  EXPECT_EQ(api().cuLibraryGetKernelCount(&n, lib), CUDA_SUCCESS);
  EXPECT_EQ(n, 0u);
  CUkernel k = nullptr;
  EXPECT_EQ(api().cuLibraryGetKernel(&k, lib, "add_u32"), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(api().cuLibraryUnload(lib), CUDA_SUCCESS);

  std::string dir = ::testing::TempDir() + "library_test_" + std::to_string(getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::string garbage = dir + "/garbage.ptx", empty = dir + "/empty.ptx";
  std::FILE* f = std::fopen(garbage.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("not an image at all", f);
  std::fclose(f);
  f = std::fopen(empty.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  auto from_file = [&](const char* path, CUlibrary* out) {
    return api().cuLibraryLoadFromFile(out, path, nullptr, nullptr, 0, nullptr, nullptr, 0);
  };
  lib = nullptr;
  EXPECT_EQ(from_file(garbage.c_str(), &lib), CUDA_SUCCESS);
  n = 99;
  EXPECT_EQ(api().cuLibraryGetKernelCount(&n, lib), CUDA_SUCCESS);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(api().cuLibraryGetKernel(&k, lib, "add_u32"), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(api().cuLibraryUnload(lib), CUDA_SUCCESS);
  CUlibrary untouched = nullptr;
  EXPECT_EQ(from_file(empty.c_str(), &untouched), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(from_file(dir.c_str(), &untouched), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(from_file("", &untouched), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(from_file((dir + "/missing.ptx").c_str(), &untouched), CUDA_ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(untouched, nullptr);
  std::remove(garbage.c_str());
  std::remove(empty.c_str());
  rmdir(dir.c_str());
}

// Case "module": the library's module is not the caller's to unload (measured 2026-12-06, H100
// driver 580.159.04: NOT_PERMITTED; the library keeps it, its functions stay the same).
TEST_P(LibraryTest, TheLibrarysModuleIsNotPermittedToUnload) {
  CUmodule m = nullptr;
  ASSERT_EQ(api().cuLibraryGetModule(&m, lib_), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&f, add_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuModuleUnload(m), CUDA_ERROR_NOT_PERMITTED);
  CUmodule again = nullptr;
  EXPECT_EQ(api().cuLibraryGetModule(&again, lib_), CUDA_SUCCESS);
  EXPECT_EQ(again, m);
  CUfunction f2 = nullptr;
  EXPECT_EQ(api().cuKernelGetFunction(&f2, add_), CUDA_SUCCESS);
  EXPECT_EQ(f2, f);
  EXPECT_EQ(LaunchAdd(reinterpret_cast<CUfunction>(add_), 1, buf_), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 1u);
  CUmodule fm = nullptr;
  EXPECT_EQ(api().cuFuncGetModule(&fm, nullptr), CUDA_ERROR_INVALID_VALUE)
      << "measured: a null function is INVALID_VALUE";
}

// Case "launch": a graph kernel node does not take a CUkernel cast into `func`, though
// cuLaunchKernel does (measured 2026-12-06, H100 driver 580.159.04: INVALID_HANDLE).
TEST_P(LibraryTest, AKernelNodeDoesNotTakeAKernelAsItsFunction) {
  CUgraph g = nullptr;
  ASSERT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
  unsigned v = 1;
  void* args[] = {&buf_, &v};
  CUDA_KERNEL_NODE_PARAMS kp;
  std::memset(&kp, 0, sizeof kp);
  kp.func = reinterpret_cast<CUfunction>(add_);
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CUgraphNode node = nullptr;
  EXPECT_EQ(api().cuGraphAddKernelNode(&node, g, nullptr, 0, &kp), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(LibraryTest);

// Case "noinit": before cuInit, the library and kernel entry points check their null
// arguments first (measured 2026-12-06, H100 driver 580.159.04); a load and the occupancy
// queries are NOT_INITIALIZED.
class LibraryPreInitTest : public BackendTest {
 protected:
  BackendOptions Options() const override {
    BackendOptions options;
    options.init = false;
    return options;
  }
};

TEST_P(LibraryPreInitTest, NullArgumentsAreCheckedBeforeInit) {
  if (!IsFake()) {
    GTEST_SKIP() << "a process cannot un-initialize the real driver; library_probe case "
                    "\"noinit\" measured it in a fresh process";
  }
  CUlibrary lib = nullptr;
  EXPECT_EQ(api().cuLibraryLoadData(&lib, kLibPtx, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(api().cuLibraryUnload(nullptr), CUDA_ERROR_INVALID_HANDLE);
  unsigned n = 77;
  EXPECT_EQ(api().cuLibraryGetKernelCount(&n, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(n, 77u);
  CUkernel k = nullptr;
  EXPECT_EQ(api().cuLibraryGetKernel(&k, nullptr, "add_u32"), CUDA_ERROR_INVALID_HANDLE);
  const char* name = nullptr;
  EXPECT_EQ(api().cuKernelGetName(&name, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuFuncGetName(&name, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUfunction f = nullptr;
  EXPECT_EQ(api().cuKernelGetFunction(&f, nullptr), CUDA_ERROR_INVALID_HANDLE);
  int blocks = 77;
  EXPECT_EQ(api().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, nullptr, 128, 0),
            CUDA_ERROR_NOT_INITIALIZED);
  // A non-null handle is not looked up before cuInit: NOT_INITIALIZED (the fake's answer;
  // UNMEASURED, the probe passes only null handles before cuInit).
  std::vector<unsigned char> zeros(64, 0);
  EXPECT_EQ(api().cuLibraryUnload(reinterpret_cast<CUlibrary>(zeros.data())),
            CUDA_ERROR_NOT_INITIALIZED);
}

CUHAL_INSTANTIATE_BACKEND_TEST(LibraryPreInitTest);

class FakeLibraryTest : public LibraryTest {
 protected:
  bool CheckLeaksOnTearDown() const override { return false; }
};

// The leak inventory counts a library until it is unloaded (its modules and globals in each
// context are not the user's and are not counted); a context's destruction unloads the
// library's module there, and the library loads again in a context that asks.
TEST_P(FakeLibraryTest, InventoryCountsLibrariesNotTheirModules) {
  EXPECT_EQ(fake().LiveObjects().libraries, 1);
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&f, add_), CUDA_SUCCESS);
  CUdeviceptr g = 0;
  size_t bytes = 0;
  ASSERT_EQ(api().cuLibraryGetGlobal(&g, &bytes, lib_, "counter"), CUDA_SUCCESS);
  ASSERT_EQ(api().cuLibraryGetManaged(&g, &bytes, lib_, "mvar"), CUDA_SUCCESS);
  fakecuda::Inventory inv = fake().LiveObjects();
  EXPECT_EQ(inv.modules, 0);
  EXPECT_EQ(inv.device_allocations, 1) << "the test's buffer only";
  EXPECT_EQ(inv.managed_allocations, 0);
  EXPECT_NE(fake().LeakReport().find("cuLibraryLoadData"), std::string::npos);
  ASSERT_EQ(api().cuLibraryUnload(lib_), CUDA_SUCCESS);
  lib_ = nullptr;
  inv = fake().LiveObjects();
  EXPECT_EQ(inv.libraries, 0);
  EXPECT_EQ(inv.managed_allocations, 0) << "the managed variable went with the library";
  EXPECT_EQ(inv.device_allocations, 1);
}

// Foreign and stale handles of every kind are answered, never dereferenced.
TEST_P(FakeLibraryTest, ForeignAndStaleHandlesAreInvalidHandle) {
  CUlibrary stale = nullptr;
  ASSERT_EQ(Load(&stale, kLibPtx), CUDA_SUCCESS);
  CUkernel stale_kernel = nullptr;
  ASSERT_EQ(api().cuLibraryGetKernel(&stale_kernel, stale, "add_u32"), CUDA_SUCCESS);
  ASSERT_EQ(api().cuLibraryUnload(stale), CUDA_SUCCESS);
  std::vector<unsigned char> zeros(256, 0);
  CUmodule module = nullptr;
  ASSERT_EQ(api().cuLibraryGetModule(&module, lib_), CUDA_SUCCESS);
  CUlibrary libs[] = {stale, reinterpret_cast<CUlibrary>(zeros.data()),
                      reinterpret_cast<CUlibrary>(module)};
  CUkernel kernels[] = {stale_kernel, reinterpret_cast<CUkernel>(zeros.data()),
                        reinterpret_cast<CUkernel>(module)};
  for (CUlibrary l : libs) {
    unsigned n = 0;
    CUkernel k = nullptr;
    EXPECT_EQ(api().cuLibraryGetKernelCount(&n, l), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(api().cuLibraryGetKernel(&k, l, "add_u32"), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(api().cuLibraryUnload(l), CUDA_ERROR_INVALID_HANDLE);
  }
  for (CUkernel k : kernels) {
    CUfunction f = nullptr;
    const char* name = nullptr;
    int v = 0;
    EXPECT_EQ(api().cuKernelGetFunction(&f, k), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(api().cuKernelGetName(&name, k), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(api().cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0),
              CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(api().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                  &v, reinterpret_cast<CUfunction>(k), 128, 0),
              CUDA_ERROR_INVALID_HANDLE);
  }
}

// Case "launch": cuLaunchKernelEx launches a CUkernel cast to CUfunction (measured 2026-12-06,
// H100 driver 580.159.04: the value went from 6 to 9). Fake only because the test support's
// CudaApi table has no cuLaunchKernelEx: the fake's entry point is called directly. PRIORITY is
// accepted (no effect on the fake); attributes the fake does not model (access policy windows,
// ...) are NOT_SUPPORTED, the fake's own answer.
TEST_P(FakeLibraryTest, LaunchKernelExTakesAKernel) {
  unsigned v = 3;
  void* args[] = {&buf_, &v};
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, reinterpret_cast<CUfunction>(add_), args, nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 3u);
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&f, add_), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 6u);
  EXPECT_EQ(cuLaunchKernelEx(nullptr, f, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernelEx(&cfg, nullptr, args, nullptr), CUDA_ERROR_INVALID_HANDLE);
  CUlaunchAttribute at;
  std::memset(&at, 0, sizeof at);
  at.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  cfg.attrs = &at;
  cfg.numAttrs = 1;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 9u);
  at.id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_NOT_SUPPORTED);
  cfg.attrs = nullptr;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(Read(buf_), 9u);
}

// Cooperative launches (cuLaunchCooperativeKernel, cuLaunchKernelEx with COOPERATIVE; the CUDA
// runtime's cudaLaunchCooperativeKernel calls the former): a grid the device holds at once runs;
// more blocks than the SM count times the function's occupancy is
// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE (documented in cuda.h for cuLaunchCooperativeKernel)
// and runs nothing. Fake only, as LaunchKernelExTakesAKernel.
TEST_P(FakeLibraryTest, CooperativeLaunchesMustFitTheDevice) {
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&f, add_), CUDA_SUCCESS);
  int per_sm = 0;
  int sms = 0;
  ASSERT_EQ(api().cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, 32, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0),
            CUDA_SUCCESS);
  unsigned too_many = static_cast<unsigned>(per_sm * sms) + 1;
  ASSERT_GT(too_many, 1u);
  unsigned v = 2;
  void* args[] = {&buf_, &v};
  // One thread adds v (add_u32 is not atomic: one thread per launch that runs).
  EXPECT_EQ(cuLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchCooperativeKernel(f, too_many, 1, 1, 32, 1, 1, 0, nullptr, args),
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = too_many;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  CUlaunchAttribute at;
  std::memset(&at, 0, sizeof at);
  at.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  at.value.cooperative = 1;
  cfg.attrs = &at;
  cfg.numAttrs = 1;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  cfg.gridDimX = cfg.blockDimX = 1;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 4u);
}

// A cluster shape given at launch: a grid the cluster divides runs; one it does not divide, or a
// cluster above the portable 8 blocks, is CUDA_ERROR_INVALID_CLUSTER_SIZE and runs nothing (as
// measured for the cluster occupancy queries on the same configuration; UNMEASURED for the
// launch). Fake only, as LaunchKernelExTakesAKernel.
TEST_P(FakeLibraryTest, ClusterLaunchesCheckTheShape) {
  CUfunction f = nullptr;
  ASSERT_EQ(api().cuKernelGetFunction(&f, add_), CUDA_SUCCESS);
  unsigned v = 5;
  void* args[] = {&buf_, &v};
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = 3;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
  CUlaunchAttribute at;
  std::memset(&at, 0, sizeof at);
  at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  at.value.clusterDim.x = 2;
  at.value.clusterDim.y = at.value.clusterDim.z = 1;
  cfg.attrs = &at;
  cfg.numAttrs = 1;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  cfg.gridDimX = 16;
  at.value.clusterDim.x = 16;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 0u);
  // One block in a cluster of one: add_u32 is not atomic, one thread adds v.
  cfg.gridDimX = 1;
  at.value.clusterDim.x = 1;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, f, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 5u);
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(FakeLibraryTest);

}  // namespace
}  // namespace cuhal::testing
