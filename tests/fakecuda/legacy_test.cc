// Copyright 2026 The cuhal Authors.
// Conformance: the legacy area (issue 14): the JIT linker (cuLinkCreate ... cuLinkDestroy),
// cuModuleLoad, the tensor-map encoders, surface objects, the deprecated execution control
// (cuFuncSetBlockShape, cuParamSet*, cuLaunchGrid), texture references and
// cuMipmappedArrayGetMemoryRequirements. Measured 2026-12-06 on an H100 80GB HBM3, driver
// 580.159.04, by ci/gpu-probes/legacy_probe.cc (output in ci/gpu-probes/results/
// 2026-12-06-h100-legacy.real.txt); an expectation that output does not confirm carries
// "// UNMEASURED" on its line. cuhal's CUDA table lacks these entry points: they are reached
// through cuGetProcAddress.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/backend.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace cuhal::testing {
namespace {

// add_u32(u32* p, u32 v): *p += v; count(u32* p): one atomic add per thread.
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
)";

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

struct LegacyApi {
  decltype(&::cuLinkCreate) LinkCreate = nullptr;
  decltype(&::cuLinkAddData) LinkAddData = nullptr;
  decltype(&::cuLinkComplete) LinkComplete = nullptr;
  decltype(&::cuLinkDestroy) LinkDestroy = nullptr;
  decltype(&::cuModuleLoad) ModuleLoad = nullptr;
  decltype(&::cuModuleLoadData) ModuleLoadData = nullptr;
  decltype(&::cuModuleUnload) ModuleUnload = nullptr;
  decltype(&::cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&::cuTensorMapEncodeTiled) TensorMapEncodeTiled = nullptr;
  decltype(&::cuTensorMapReplaceAddress) TensorMapReplaceAddress = nullptr;
  decltype(&::cuArray3DCreate) Array3DCreate = nullptr;
  decltype(&::cuArrayDestroy) ArrayDestroy = nullptr;
  decltype(&::cuSurfObjectCreate) SurfObjectCreate = nullptr;
  decltype(&::cuSurfObjectDestroy) SurfObjectDestroy = nullptr;
  decltype(&::cuSurfObjectGetResourceDesc) SurfObjectGetResourceDesc = nullptr;
  decltype(&::cuFuncSetBlockShape) FuncSetBlockShape = nullptr;
  decltype(&::cuParamSetSize) ParamSetSize = nullptr;
  decltype(&::cuParamSeti) ParamSeti = nullptr;
  decltype(&::cuParamSetv) ParamSetv = nullptr;
  decltype(&::cuLaunchGrid) LaunchGrid = nullptr;
  decltype(&::cuTexRefCreate) TexRefCreate = nullptr;
  decltype(&::cuTexRefDestroy) TexRefDestroy = nullptr;
  decltype(&::cuTexRefSetFilterMode) TexRefSetFilterMode = nullptr;
  decltype(&::cuTexRefGetFilterMode) TexRefGetFilterMode = nullptr;
  decltype(&::cuTexRefSetAddressMode) TexRefSetAddressMode = nullptr;
  decltype(&::cuTexRefGetAddressMode) TexRefGetAddressMode = nullptr;
  decltype(&::cuMipmappedArrayCreate) MipmappedArrayCreate = nullptr;
  decltype(&::cuMipmappedArrayDestroy) MipmappedArrayDestroy = nullptr;
  decltype(&::cuMipmappedArrayGetMemoryRequirements) MipmappedArrayGetMemoryRequirements =
      nullptr;
};

class LegacyTest : public PrimaryContextTest {
 protected:
  void SetUp() override {
    PrimaryContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (api().cuGetProcAddress == nullptr) GTEST_SKIP() << "the driver has no cuGetProcAddress";
    std::string missing;
    auto get = [&](const char* name, auto* fn) {
      if (!ResolveEntry(api(), name, fn)) missing = name;
    };
    get("cuLinkCreate", &l_.LinkCreate);
    get("cuLinkAddData", &l_.LinkAddData);
    get("cuLinkComplete", &l_.LinkComplete);
    get("cuLinkDestroy", &l_.LinkDestroy);
    get("cuModuleLoad", &l_.ModuleLoad);
    get("cuModuleLoadData", &l_.ModuleLoadData);
    get("cuModuleUnload", &l_.ModuleUnload);
    get("cuModuleGetFunction", &l_.ModuleGetFunction);
    get("cuTensorMapEncodeTiled", &l_.TensorMapEncodeTiled);
    get("cuTensorMapReplaceAddress", &l_.TensorMapReplaceAddress);
    get("cuArray3DCreate", &l_.Array3DCreate);
    get("cuArrayDestroy", &l_.ArrayDestroy);
    get("cuSurfObjectCreate", &l_.SurfObjectCreate);
    get("cuSurfObjectDestroy", &l_.SurfObjectDestroy);
    get("cuSurfObjectGetResourceDesc", &l_.SurfObjectGetResourceDesc);
    get("cuFuncSetBlockShape", &l_.FuncSetBlockShape);
    get("cuParamSetSize", &l_.ParamSetSize);
    get("cuParamSeti", &l_.ParamSeti);
    get("cuParamSetv", &l_.ParamSetv);
    get("cuLaunchGrid", &l_.LaunchGrid);
    get("cuTexRefCreate", &l_.TexRefCreate);
    get("cuTexRefDestroy", &l_.TexRefDestroy);
    get("cuTexRefSetFilterMode", &l_.TexRefSetFilterMode);
    get("cuTexRefGetFilterMode", &l_.TexRefGetFilterMode);
    get("cuTexRefSetAddressMode", &l_.TexRefSetAddressMode);
    get("cuTexRefGetAddressMode", &l_.TexRefGetAddressMode);
    get("cuMipmappedArrayCreate", &l_.MipmappedArrayCreate);
    get("cuMipmappedArrayDestroy", &l_.MipmappedArrayDestroy);
    get("cuMipmappedArrayGetMemoryRequirements", &l_.MipmappedArrayGetMemoryRequirements);
    if (!missing.empty()) GTEST_SKIP() << "the driver has no " << missing;
  }

  // Links the PTX texts into a cubin (copied out); empty when a step fails (reported).
  std::vector<char> Link(const std::vector<const char*>& inputs) {
    std::vector<char> out;
    CUlinkState st = nullptr;
    EXPECT_EQ(l_.LinkCreate(0, nullptr, nullptr, &st), CUDA_SUCCESS);
    if (st == nullptr) return out;
    bool ok = true;
    for (const char* ptx : inputs) {
      ok = ok && l_.LinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(ptx), strlen(ptx) + 1,
                                "input.ptx", 0, nullptr, nullptr) == CUDA_SUCCESS;
    }
    void* cubin = nullptr;
    size_t size = 0;
    ok = ok && l_.LinkComplete(st, &cubin, &size) == CUDA_SUCCESS && cubin != nullptr;
    EXPECT_TRUE(ok);
    if (ok) out.assign(static_cast<char*>(cubin), static_cast<char*>(cubin) + size);
    EXPECT_EQ(l_.LinkDestroy(st), CUDA_SUCCESS);
    return out;
  }

  // Runs `fn` (u32* p[, u32 v], v = 5) of module `m` on a word holding `start`; the word after.
  uint32_t RunOnWord(CUmodule m, const char* fn, uint32_t start) {
    CUfunction f = nullptr;
    EXPECT_EQ(l_.ModuleGetFunction(&f, m, fn), CUDA_SUCCESS);
    CUdeviceptr buf = 0;
    EXPECT_EQ(api().cuMemAlloc(&buf, 4), CUDA_SUCCESS);
    EXPECT_EQ(api().cuMemcpyHtoD(buf, &start, 4), CUDA_SUCCESS);
    unsigned v = 5;
    void* args[] = {&buf, &v};
    EXPECT_EQ(api().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
    uint32_t out = 0;
    EXPECT_EQ(api().cuMemcpyDtoH(&out, buf, 4), CUDA_SUCCESS);
    EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
    return out;
  }

  LegacyApi l_;
};

TEST_P(LegacyTest, LinkedCubinIsAnElfTheModuleLoaderRuns) {
  std::vector<char> cubin = Link({kPtx});
  ASSERT_GT(cubin.size(), 64u);
  EXPECT_EQ(std::memcmp(cubin.data(), "\x7f" "ELF", 4), 0);
  uint16_t machine = 0;
  std::memcpy(&machine, cubin.data() + 18, 2);
  EXPECT_EQ(machine, 190);  // EM_CUDA
  EXPECT_EQ(static_cast<unsigned char>(cubin[7]), 0x41);  // EI_OSABI
  CUmodule m = nullptr;
  ASSERT_EQ(l_.ModuleLoadData(&m, cubin.data()), CUDA_SUCCESS);
  EXPECT_EQ(RunOnWord(m, "add_u32", 10), 15u);
  EXPECT_EQ(l_.ModuleUnload(m), CUDA_SUCCESS);
}

TEST_P(LegacyTest, LinkResolvesAnExternFunctionFromAnotherInput) {
  std::vector<char> cubin = Link({kCaller, kCallee});
  ASSERT_FALSE(cubin.empty());
  CUmodule m = nullptr;
  ASSERT_EQ(l_.ModuleLoadData(&m, cubin.data()), CUDA_SUCCESS);
  EXPECT_EQ(RunOnWord(m, "caller", 7), 21u);
  EXPECT_EQ(l_.ModuleUnload(m), CUDA_SUCCESS);
}

TEST_P(LegacyTest, LinkArgumentChecksAndAUsedUpState) {
  EXPECT_EQ(l_.LinkCreate(0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUlinkState st = nullptr;
  ASSERT_EQ(l_.LinkCreate(0, nullptr, nullptr, &st), CUDA_SUCCESS);
  char* ptx = const_cast<char*>(kPtx);
  EXPECT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_PTX, nullptr, 10, "x", 0, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_PTX, ptx, 0, "x", 0, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  // A PTX syntax error fails the input only: the link still completes.
  const char bad[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry b( {\n";
  EXPECT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(bad), sizeof bad, "bad.ptx", 0,
                           nullptr, nullptr),
            CUDA_ERROR_INVALID_PTX);
  ASSERT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_PTX, ptx, strlen(kPtx) + 1, "m.ptx", 0, nullptr,
                           nullptr),
            CUDA_SUCCESS);
  void* cubin = nullptr;
  size_t size = 0;
  EXPECT_EQ(l_.LinkComplete(st, nullptr, &size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l_.LinkComplete(st, &cubin, nullptr), CUDA_SUCCESS);  // the size is optional
  EXPECT_NE(cubin, nullptr);
  // Completed: the state is used up (its image stays until cuLinkDestroy).
  void* again = nullptr;
  EXPECT_EQ(l_.LinkComplete(st, &again, &size), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(again, nullptr);
  EXPECT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_PTX, ptx, strlen(kPtx) + 1, "m.ptx", 0, nullptr,
                           nullptr),
            CUDA_ERROR_INVALID_VALUE);
  CUmodule m = nullptr;
  EXPECT_EQ(l_.ModuleLoadData(&m, cubin), CUDA_SUCCESS);
  EXPECT_EQ(l_.ModuleUnload(m), CUDA_SUCCESS);
  EXPECT_EQ(l_.LinkDestroy(st), CUDA_SUCCESS);
  EXPECT_EQ(l_.LinkComplete(nullptr, &cubin, &size), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(l_.LinkDestroy(nullptr), CUDA_ERROR_INVALID_HANDLE);
}

TEST_P(LegacyTest, LinkErrorsThatStayWithTheState) {
  // An extern function no input defines: CUDA_ERROR_INVALID_SOURCE at completion.
  CUlinkState st = nullptr;
  ASSERT_EQ(l_.LinkCreate(0, nullptr, nullptr, &st), CUDA_SUCCESS);
  ASSERT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_PTX, const_cast<char*>(kCaller), strlen(kCaller) + 1,
                           "caller.ptx", 0, nullptr, nullptr),
            CUDA_SUCCESS);
  void* cubin = nullptr;
  size_t size = 0;
  EXPECT_EQ(l_.LinkComplete(st, &cubin, &size), CUDA_ERROR_INVALID_SOURCE);
  EXPECT_EQ(l_.LinkDestroy(st), CUDA_SUCCESS);
  // A second definition of the same kernels: refused when added, and again at completion.
  ASSERT_EQ(l_.LinkCreate(0, nullptr, nullptr, &st), CUDA_SUCCESS);
  char* ptx = const_cast<char*>(kPtx);
  EXPECT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_PTX, ptx, strlen(kPtx) + 1, "a.ptx", 0, nullptr,
                           nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_PTX, ptx, strlen(kPtx) + 1, "b.ptx", 0, nullptr,
                           nullptr),
            CUDA_ERROR_INVALID_SOURCE);
  EXPECT_EQ(l_.LinkComplete(st, &cubin, &size), CUDA_ERROR_INVALID_SOURCE);
  EXPECT_EQ(l_.LinkDestroy(st), CUDA_SUCCESS);
  // A linked (executable) cubin is not a link input.
  std::vector<char> linked = Link({kPtx});
  ASSERT_FALSE(linked.empty());
  ASSERT_EQ(l_.LinkCreate(0, nullptr, nullptr, &st), CUDA_SUCCESS);
  EXPECT_EQ(l_.LinkAddData(st, CU_JIT_INPUT_CUBIN, linked.data(), linked.size(), "x.cubin", 0,
                           nullptr, nullptr),
            CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(l_.LinkComplete(st, &cubin, &size), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(l_.LinkDestroy(st), CUDA_SUCCESS);
}

TEST_P(LegacyTest, ModuleLoadReadsAPtxFileAndAnswersFileNotFound) {
  char path[] = "/tmp/cuhal_legacy_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, kPtx, strlen(kPtx)), static_cast<ssize_t>(strlen(kPtx)));
  close(fd);
  CUmodule m = nullptr;
  ASSERT_EQ(l_.ModuleLoad(&m, path), CUDA_SUCCESS);
  EXPECT_EQ(RunOnWord(m, "add_u32", 1), 6u);
  EXPECT_EQ(l_.ModuleUnload(m), CUDA_SUCCESS);
  unlink(path);
  EXPECT_EQ(l_.ModuleLoad(&m, path), CUDA_ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(l_.ModuleLoad(nullptr, path), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l_.ModuleLoad(&m, "/tmp"), CUDA_ERROR_OUT_OF_MEMORY);  // a directory
  EXPECT_EQ(l_.ModuleLoad(&m, ""), CUDA_ERROR_INVALID_VALUE);
}

// A 64-byte aligned CUtensorMap filled with 0xa5.
struct alignas(64) MapBuf {
  unsigned char b[192];
  CUtensorMap* At(size_t off) {
    std::memset(b, 0xa5, sizeof b);
    return reinterpret_cast<CUtensorMap*>(b + off);
  }
};

// The H100's bytes for a float 64 x 32 tensor (row stride 256) in 32 x 8 boxes at 0x7f1234560000.
const unsigned char kTiledBase[128] = {
    0x00, 0x00, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00, 0x90, 0x03, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x3f, 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

TEST_P(LegacyTest, TensorMapTiledBytesAndRules) {
  const uintptr_t addr = 0x7f1234560000ull;
  cuuint64_t dim[2] = {64, 32};
  cuuint64_t stride[1] = {256};
  cuuint32_t box[2] = {32, 8};
  cuuint32_t es[2] = {1, 1};
  auto encode = [&](CUtensorMap* m, uintptr_t a) {
    return l_.TensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                   reinterpret_cast<void*>(a), dim, stride, box, es,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                   CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  MapBuf a, c;
  ASSERT_EQ(encode(a.At(0), addr), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(a.b, kTiledBase, 128), 0);
  // The map need not be 64-byte aligned; a null address is taken.
  EXPECT_EQ(encode(a.At(16), addr), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(a.b + 16, kTiledBase, 128), 0);
  EXPECT_EQ(encode(a.At(0), 0), CUDA_SUCCESS);
  // Argument errors found before the map is written leave it untouched; the others clear it.
  box[1] = 0;
  EXPECT_EQ(encode(a.At(0), addr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a.b[0], 0xa5);
  box[1] = 257;
  EXPECT_EQ(encode(a.At(0), addr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(a.b[8], 0xa5);
  box[1] = 8;
  EXPECT_EQ(encode(a.At(0), addr + 8), CUDA_ERROR_INVALID_VALUE);
  stride[0] = 264;
  EXPECT_EQ(encode(a.At(0), addr), CUDA_ERROR_INVALID_VALUE);
  stride[0] = 0;  // taken
  EXPECT_EQ(encode(a.At(0), addr), CUDA_SUCCESS);
  stride[0] = 256;
  es[1] = 9;
  EXPECT_EQ(encode(a.At(0), addr), CUDA_ERROR_INVALID_VALUE);
  es[1] = 1;
  // Replacing the address gives the encoding of the new address.
  CUtensorMap* ma = a.At(0);
  CUtensorMap* mc = c.At(0);
  ASSERT_EQ(encode(ma, addr), CUDA_SUCCESS);
  ASSERT_EQ(encode(mc, addr + 0x1000), CUDA_SUCCESS);
  EXPECT_NE(std::memcmp(ma, mc, 128), 0);
  ASSERT_EQ(l_.TensorMapReplaceAddress(ma, reinterpret_cast<void*>(addr + 0x1000)), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(ma, mc, 128), 0);
  EXPECT_EQ(l_.TensorMapReplaceAddress(ma, reinterpret_cast<void*>(addr + 8)),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l_.TensorMapReplaceAddress(ma, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(LegacyTest, TensorMapNeedsACurrentContext) {
  cuuint64_t dim[2] = {64, 32};
  cuuint64_t stride[1] = {256};
  cuuint32_t box[2] = {32, 8};
  cuuint32_t es[2] = {1, 1};
  CUcontext saved = nullptr;
  ASSERT_EQ(api().cuCtxPopCurrent(&saved), CUDA_SUCCESS);
  MapBuf a;
  EXPECT_EQ(l_.TensorMapEncodeTiled(a.At(0), CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                    reinterpret_cast<void*>(0x7f1234560000ull), dim, stride, box,
                                    es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                    CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a.b[0], 0xa5);
  EXPECT_EQ(api().cuCtxPushCurrent(saved), CUDA_SUCCESS);
}

CUarray MakeArray(const LegacyApi& l, unsigned flags) {
  CUDA_ARRAY3D_DESCRIPTOR d;
  std::memset(&d, 0, sizeof d);
  d.Width = 16;
  d.Height = 8;
  d.Format = CU_AD_FORMAT_UNSIGNED_INT32;
  d.NumChannels = 1;
  d.Flags = flags;
  CUarray a = nullptr;
  EXPECT_EQ(l.Array3DCreate(&a, &d), CUDA_SUCCESS);
  return a;
}

TEST_P(LegacyTest, SurfaceObjectRoundTripAndForgivingDestroy) {
  CUarray ldst = MakeArray(l_, CUDA_ARRAY3D_SURFACE_LDST);
  CUarray plain = MakeArray(l_, 0);
  CUDA_RESOURCE_DESC rd;
  std::memset(&rd, 0, sizeof rd);
  rd.resType = CU_RESOURCE_TYPE_ARRAY;
  rd.res.array.hArray = ldst;
  CUsurfObject s = 0;
  ASSERT_EQ(l_.SurfObjectCreate(&s, &rd), CUDA_SUCCESS);
  EXPECT_NE(s, 0u);
  CUDA_RESOURCE_DESC back;
  std::memset(&back, 0x5a, sizeof back);
  ASSERT_EQ(l_.SurfObjectGetResourceDesc(&back, s), CUDA_SUCCESS);
  EXPECT_EQ(back.resType, CU_RESOURCE_TYPE_ARRAY);
  EXPECT_EQ(back.res.array.hArray, ldst);
  EXPECT_EQ(back.flags, 0u);
  EXPECT_EQ(l_.SurfObjectDestroy(s), CUDA_SUCCESS);
  // Destroying twice, 0 or a made-up object succeeds; their description does not.
  EXPECT_EQ(l_.SurfObjectDestroy(s), CUDA_SUCCESS);
  EXPECT_EQ(l_.SurfObjectDestroy(0), CUDA_SUCCESS);
  EXPECT_EQ(l_.SurfObjectGetResourceDesc(&back, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l_.SurfObjectGetResourceDesc(&back, 0), CUDA_ERROR_INVALID_VALUE);
  // An array made without CUDA_ARRAY3D_SURFACE_LDST is taken (cuda.h says otherwise).
  rd.res.array.hArray = plain;
  CUsurfObject other = 0;
  EXPECT_EQ(l_.SurfObjectCreate(&other, &rd), CUDA_SUCCESS);
  EXPECT_NE(other, 0u);
  EXPECT_EQ(l_.SurfObjectDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(l_.ArrayDestroy(ldst), CUDA_SUCCESS);
  EXPECT_EQ(l_.ArrayDestroy(plain), CUDA_SUCCESS);
}

TEST_P(LegacyTest, LaunchGridRunsWithTheBlockShapeAndParametersSetBefore) {
  CUmodule m = nullptr;
  ASSERT_EQ(l_.ModuleLoadData(&m, kPtx), CUDA_SUCCESS);
  CUfunction count = nullptr;
  ASSERT_EQ(l_.ModuleGetFunction(&count, m, "count"), CUDA_SUCCESS);
  CUdeviceptr buf = 0;
  ASSERT_EQ(api().cuMemAlloc(&buf, 4), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemsetD32(buf, 0, 1), CUDA_SUCCESS);
  EXPECT_EQ(l_.FuncSetBlockShape(count, 4, 2, 1), CUDA_SUCCESS);
  EXPECT_EQ(l_.ParamSetSize(count, 8), CUDA_SUCCESS);
  EXPECT_EQ(l_.ParamSetv(count, 0, &buf, 8), CUDA_SUCCESS);
  EXPECT_EQ(l_.LaunchGrid(count, 3, 2), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  uint32_t n = 0;
  EXPECT_EQ(api().cuMemcpyDtoH(&n, buf, 4), CUDA_SUCCESS);
  EXPECT_EQ(n, 48u);  // 3 x 2 blocks of 8 threads
  // A size above the kernel's parameters is refused at launch; a smaller one launches with the
  // bytes set before.
  EXPECT_EQ(l_.ParamSetSize(count, 64), CUDA_SUCCESS);
  EXPECT_EQ(l_.LaunchGrid(count, 1, 1), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  EXPECT_EQ(l_.ParamSetSize(count, 4), CUDA_SUCCESS);
  EXPECT_EQ(l_.LaunchGrid(count, 1, 1), CUDA_SUCCESS);
  EXPECT_EQ(api().cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemcpyDtoH(&n, buf, 4), CUDA_SUCCESS);
  EXPECT_EQ(n, 56u);
  EXPECT_EQ(l_.ParamSetSize(count, 32768), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l_.FuncSetBlockShape(nullptr, 1, 1, 1), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(api().cuMemFree(buf), CUDA_SUCCESS);
  EXPECT_EQ(l_.ModuleUnload(m), CUDA_SUCCESS);
}

TEST_P(LegacyTest, TextureReferenceKeepsItsSettings) {
  CUtexref t = nullptr;
  ASSERT_EQ(l_.TexRefCreate(&t), CUDA_SUCCESS);
  CUfilter_mode fm = CU_TR_FILTER_MODE_LINEAR;
  EXPECT_EQ(l_.TexRefGetFilterMode(&fm, t), CUDA_SUCCESS);
  EXPECT_EQ(fm, CU_TR_FILTER_MODE_POINT);
  CUaddress_mode am0 = CU_TR_ADDRESS_MODE_WRAP;
  EXPECT_EQ(l_.TexRefGetAddressMode(&am0, t, 0), CUDA_SUCCESS);
  EXPECT_EQ(am0, CU_TR_ADDRESS_MODE_CLAMP);  // the default
  EXPECT_EQ(l_.TexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR), CUDA_SUCCESS);
  EXPECT_EQ(l_.TexRefGetFilterMode(&fm, t), CUDA_SUCCESS);
  EXPECT_EQ(fm, CU_TR_FILTER_MODE_LINEAR);
  EXPECT_EQ(l_.TexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_MIRROR), CUDA_SUCCESS);
  CUaddress_mode am = CU_TR_ADDRESS_MODE_WRAP;
  EXPECT_EQ(l_.TexRefGetAddressMode(&am, t, 1), CUDA_SUCCESS);
  EXPECT_EQ(am, CU_TR_ADDRESS_MODE_MIRROR);
  EXPECT_EQ(l_.TexRefSetAddressMode(t, 3, CU_TR_ADDRESS_MODE_MIRROR), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l_.TexRefDestroy(t), CUDA_SUCCESS);
  EXPECT_EQ(l_.TexRefDestroy(nullptr), CUDA_ERROR_INVALID_HANDLE);
}

TEST_P(LegacyTest, DeferredMappingMipmappedArrayHasMemoryRequirements) {
  CUDA_ARRAY3D_DESCRIPTOR d;
  std::memset(&d, 0, sizeof d);
  d.Width = 256;
  d.Height = 256;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  d.Flags = CUDA_ARRAY3D_DEFERRED_MAPPING;
  CUmipmappedArray mm = nullptr;
  ASSERT_EQ(l_.MipmappedArrayCreate(&mm, &d, 5), CUDA_SUCCESS);
  CUDA_ARRAY_MEMORY_REQUIREMENTS req;
  std::memset(&req, 0x5a, sizeof req);
  ASSERT_EQ(l_.MipmappedArrayGetMemoryRequirements(&req, mm, 0), CUDA_SUCCESS);
  EXPECT_EQ(req.size, 393216u);
  EXPECT_EQ(req.alignment, 65536u);
  EXPECT_EQ(l_.MipmappedArrayGetMemoryRequirements(nullptr, mm, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l_.MipmappedArrayDestroy(mm), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(LegacyTest);

}  // namespace
}  // namespace cuhal::testing
