// Copyright 2026 The cuhal Authors.
// fakecuda's IPC handles, profiler controls, coredump attributes, device resources and green
// contexts (fakecuda/entry/{ipc,profiler,coredump,resource}_entry.cc). Fake only: the entry points
// are called directly (cuhal's symbol table has none of them). The expectations are what the
// real driver answered, measured 2026-12-06 on H100 80GB HBM3, driver 580.159.04
// (ci/gpu-probes/misc_probe.cc; results in ci/gpu-probes/results/2026-12-06-h100-misc.real.txt;
// docs/driver_facts.md, "IPC, profiler, coredump attributes, green contexts"), or, where said,
// the fake's own answer (where the real driver crashed or cannot be matched).
#include <gtest/gtest.h>

#include <cudaProfiler.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/internal/ipc_model.h"
#include "tests/fakecuda/fake_fixture.h"

namespace cuhal::testing {
namespace {

bool AllBytes(const void* p, size_t n, unsigned char v) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    if (b[i] != v) return false;
  }
  return true;
}

// A fresh fake with the primary context of device 0 current.
class MiscTest : public FakeDriverTest {
 protected:
  void SetUp() override {
    FakeDriverTest::SetUp();
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(primary_), CUDA_SUCCESS);
  }
  void TearDown() override {
    cuCtxSetCurrent(nullptr);
    if (primary_ != nullptr) {
      EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    }
    EXPECT_EQ(fake().LiveObjects().Total(), 0) << fake().LeakReport();
    FakeDriverTest::TearDown();
  }
  CUcontext primary_ = nullptr;
};

// --- IPC ---

using IpcTest = MiscTest;

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe ipc:mem, ipc:kinds): a handle is the
// same for every export of an allocation from one context, differs between allocations and
// between contexts, and an interior pointer exports its allocation.
TEST_F(IpcTest, MemHandleIsPerAllocationAndContext) {
  CUdeviceptr a = 0, b = 0;
  ASSERT_EQ(cuMemAlloc(&a, 1 << 20), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&b, 4096), CUDA_SUCCESS);
  CUipcMemHandle h1, h2, h3;
  std::memset(&h1, 0, sizeof h1);
  std::memset(&h2, 0x77, sizeof h2);
  ASSERT_EQ(cuIpcGetMemHandle(&h1, a), CUDA_SUCCESS);
  EXPECT_FALSE(AllBytes(&h1, sizeof h1, 0));
  ASSERT_EQ(cuIpcGetMemHandle(&h2, a), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&h1, &h2, sizeof h1), 0);
  ASSERT_EQ(cuIpcGetMemHandle(&h3, b), CUDA_SUCCESS);
  EXPECT_NE(std::memcmp(&h1, &h3, sizeof h1), 0);
  std::memset(&h3, 0x77, sizeof h3);
  ASSERT_EQ(cuIpcGetMemHandle(&h3, a + 4096), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&h1, &h3, sizeof h1), 0) << "an interior pointer exports its allocation";
  CUctxCreateParams params;
  std::memset(&params, 0, sizeof params);
  CUcontext other = nullptr;
  ASSERT_EQ(cuCtxCreate(&other, &params, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuIpcGetMemHandle(&h3, a), CUDA_SUCCESS);
  EXPECT_NE(std::memcmp(&h1, &h3, sizeof h1), 0) << "another context's export differs";
  CUdeviceptr opened = 77;
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, h1, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(opened, 77u);
  ASSERT_EQ(cuCtxDestroy(other), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(primary_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(b), CUDA_SUCCESS);
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe ipc:mem, ipc:kinds).
TEST_F(IpcTest, MemHandleRefusesFreedAndNonDeviceMemory) {
  CUdeviceptr a = 0;
  ASSERT_EQ(cuMemAlloc(&a, 1 << 20), CUDA_SUCCESS);
  CUipcMemHandle h;
  std::memset(&h, 0x77, sizeof h);
  EXPECT_EQ(cuIpcGetMemHandle(&h, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuIpcGetMemHandle(nullptr, a), CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(AllBytes(&h, sizeof h, 0x77)) << "a failed export leaves the handle alone";
  void* host = nullptr;
  ASSERT_EQ(cuMemAllocHost(&host, 4096), CUDA_SUCCESS);
  EXPECT_EQ(cuIpcGetMemHandle(&h, reinterpret_cast<CUdeviceptr>(host)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
  CUdeviceptr managed = 0;
  ASSERT_EQ(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(cuIpcGetMemHandle(&h, managed), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree(managed), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(cuIpcGetMemHandle(&h, a), CUDA_ERROR_INVALID_VALUE);
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe ipc:mem): in the exporting process an
// open is CUDA_ERROR_INVALID_CONTEXT; Flags without CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS (0, 2) are
// CUDA_ERROR_INVALID_VALUE first, while 0xffffffff (the bit set) passes; a zero or junk handle is
// CUDA_ERROR_INVALID_VALUE; closing what was not opened is CUDA_ERROR_INVALID_VALUE.
TEST_F(IpcTest, OpeningAHandleInTheExportingProcessIsRefused) {
  CUdeviceptr a = 0;
  ASSERT_EQ(cuMemAlloc(&a, 4096), CUDA_SUCCESS);
  CUipcMemHandle h;
  ASSERT_EQ(cuIpcGetMemHandle(&h, a), CUDA_SUCCESS);
  CUdeviceptr opened = 77;
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(opened, 77u);
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, h, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, h, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, h, 0xffffffffu), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuIpcOpenMemHandle(nullptr, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_VALUE);
  CUipcMemHandle junk;
  std::memset(&junk, 0x5a, sizeof junk);
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, junk, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_VALUE);
  std::memset(&junk, 0, sizeof junk);
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, junk, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuIpcCloseMemHandle(a), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuIpcCloseMemHandle(a + 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_CONTEXT)
      << "the handle of a freed allocation, in the exporting process";
}

// The fake's own answer (fakecuda/internal/ipc_model.h): a handle of another process cannot be
// opened, since the fake's device memory is per process.
TEST_F(IpcTest, HandleOfAnotherProcessIsNotSupported) {
  fakecuda::IpcHandleBits bits;
  bits.kind = fakecuda::IpcKind::kMemory;
  bits.pid = fakecuda::CurrentPid() + 1;
  bits.object_id = 42;
  bits.base = 0x1000;
  bits.size = 4096;
  CUipcMemHandle h;
  fakecuda::EncodeIpcHandle(bits, h.reserved);
  CUdeviceptr opened = 77;
  EXPECT_EQ(cuIpcOpenMemHandle(&opened, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(opened, 77u);
  bits.kind = fakecuda::IpcKind::kEvent;
  CUipcEventHandle eh;
  fakecuda::EncodeIpcHandle(bits, eh.reserved);
  CUevent e = nullptr;
  EXPECT_EQ(cuIpcOpenEventHandle(&e, eh), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(e, nullptr);
  // A memory handle is not an event handle: unreadable, CUDA_ERROR_MAP_FAILED (as zeros and junk
  // are on the H100).
  std::memcpy(eh.reserved, h.reserved, sizeof eh.reserved);
  EXPECT_EQ(cuIpcOpenEventHandle(&e, eh), CUDA_ERROR_MAP_FAILED);
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe ipc:event, noctx:cuIpcGetEventHandle):
// an event without CU_EVENT_INTERPROCESS is CUDA_ERROR_INVALID_HANDLE with the handle zeroed; a
// null event CUDA_ERROR_INVALID_VALUE; no current context CUDA_ERROR_INVALID_CONTEXT before the
// event is looked at; a zero or junk handle opens as CUDA_ERROR_MAP_FAILED, one of this process
// as CUDA_ERROR_INVALID_CONTEXT.
TEST_F(IpcTest, EventHandleNeedsAnInterprocessEvent) {
  CUevent plain = nullptr, ipc = nullptr;
  ASSERT_EQ(cuEventCreate(&plain, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&ipc, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  CUipcEventHandle h1, h2;
  std::memset(&h1, 0x77, sizeof h1);
  EXPECT_EQ(cuIpcGetEventHandle(&h1, plain), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(AllBytes(&h1, sizeof h1, 0)) << "zeroed";
  ASSERT_EQ(cuIpcGetEventHandle(&h1, ipc), CUDA_SUCCESS);
  EXPECT_FALSE(AllBytes(&h1, sizeof h1, 0));
  ASSERT_EQ(cuIpcGetEventHandle(&h2, ipc), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&h1, &h2, sizeof h1), 0);
  EXPECT_EQ(cuIpcGetEventHandle(nullptr, ipc), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuIpcGetEventHandle(&h2, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUevent opened = nullptr;
  EXPECT_EQ(cuIpcOpenEventHandle(&opened, h1), CUDA_ERROR_INVALID_CONTEXT);
  CUipcEventHandle junk;
  std::memset(&junk, 0, sizeof junk);
  EXPECT_EQ(cuIpcOpenEventHandle(&opened, junk), CUDA_ERROR_MAP_FAILED);
  std::memset(&junk, 0x5a, sizeof junk);
  EXPECT_EQ(cuIpcOpenEventHandle(&opened, junk), CUDA_ERROR_MAP_FAILED);
  EXPECT_EQ(opened, nullptr);
  ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  std::memset(&h2, 0x77, sizeof h2);
  EXPECT_EQ(cuIpcGetEventHandle(&h2, ipc), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_TRUE(AllBytes(&h2, sizeof h2, 0x77));
  EXPECT_EQ(cuIpcOpenEventHandle(&opened, h1), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(cuCtxSetCurrent(primary_), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(plain), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(ipc), CUDA_SUCCESS);
  // A destroyed event: the H100 answered CUDA_SUCCESS and wrote a handle (it reads the freed
  // event); the fake knows the event is gone and answers CUDA_ERROR_INVALID_HANDLE.
  EXPECT_EQ(cuIpcGetEventHandle(&h2, ipc), CUDA_ERROR_INVALID_HANDLE);
}

// --- profiler ---

using ProfilerTest = MiscTest;

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe profiler:*): start and stop succeed,
// repeatedly and in any order, with a current context, and answer CUDA_ERROR_INVALID_CONTEXT
// without one.
TEST_F(ProfilerTest, StartAndStopNeedAContextAndMayRepeat) {
  EXPECT_EQ(cuProfilerStart(), CUDA_SUCCESS);
  EXPECT_EQ(cuProfilerStart(), CUDA_SUCCESS);
  EXPECT_EQ(cuProfilerStop(), CUDA_SUCCESS);
  EXPECT_EQ(cuProfilerStop(), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuProfilerStart(), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuProfilerStop(), CUDA_ERROR_INVALID_CONTEXT);
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe profiler:*): cuGetProcAddress resolves
// cuProfilerStart, cuProfilerStop and cuProfilerInitialize (cudaProfiler.h), and
// cuProfilerInitialize answers CUDA_ERROR_NOT_SUPPORTED. cuda-bindings (cuda-python) finds every
// driver function through cuGetProcAddress; its test_profiler failed with "cuProfilerStart not
// found" while the fake resolved cuda.h's functions only.
TEST_F(ProfilerTest, CuGetProcAddressResolvesTheProfilerFunctions) {
  for (const char* name : {"cuProfilerStart", "cuProfilerStop", "cuProfilerInitialize"}) {
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    ASSERT_EQ(cuGetProcAddress(name, &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
              CUDA_SUCCESS)
        << name;
    EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS) << name;
    ASSERT_NE(pfn, nullptr) << name;
    CUresult (*fn)() = nullptr;
    std::memcpy(&fn, &pfn, sizeof fn);
    if (std::strcmp(name, "cuProfilerInitialize") == 0) {
      EXPECT_EQ(fn(), CUDA_ERROR_NOT_SUPPORTED);
    } else {
      EXPECT_EQ(fn(), CUDA_SUCCESS) << name;
    }
  }
  void* start = nullptr;
  ASSERT_EQ(cuGetProcAddress("cuProfilerStart", &start, 13000, CU_GET_PROC_ADDRESS_DEFAULT,
                             nullptr),
            CUDA_SUCCESS);
  CUresult (*own)() = &cuProfilerStart;
  void* own_address = nullptr;
  std::memcpy(&own_address, &own, sizeof own_address);
  EXPECT_EQ(start, own_address);
}

// --- coredump attributes ---

using CoredumpTest = MiscTest;

std::string GetString(CUresult (*get)(CUcoredumpSettings, void*, size_t*), CUcoredumpSettings a) {
  char buf[1024] = {0};
  size_t size = sizeof buf;
  EXPECT_EQ(get(a, buf, &size), CUDA_SUCCESS);
  return buf;
}

using CoredumpFn = CUresult (*)(CUcoredumpSettings, void*, size_t*);

unsigned ByteOf(CoredumpFn get, CUcoredumpSettings a) {
  unsigned char v = 0x77;
  size_t size = 1;
  EXPECT_EQ(get(a, &v, &size), CUDA_SUCCESS) << a;
  return v;
}

unsigned FlagsOf(CoredumpFn get) {
  std::uint32_t v = 0x7777;
  size_t size = sizeof v;
  EXPECT_EQ(get(CU_COREDUMP_GENERATION_FLAGS, &v, &size), CUDA_SUCCESS);
  return v;
}

CUresult SetByte(CoredumpFn set, CUcoredumpSettings a, unsigned char v) {
  size_t size = 1;
  return set(a, &v, &size);
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe coredump:global, coredump:noctx): every
// default is 0 but TRIGGER_HOST (1), FILE and PIPE are "" (not cuda.h's core.cuda.HOST.PID), the
// size queries answer 1 / 1024 / 4.
TEST_F(CoredumpTest, DefaultsAndSizes) {
  size_t size = 0;
  ASSERT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, &size),
            CUDA_SUCCESS);
  EXPECT_EQ(size, 1u);
  ASSERT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, nullptr, &size), CUDA_SUCCESS);
  EXPECT_EQ(size, 1024u);
  ASSERT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_PIPE, nullptr, &size), CUDA_SUCCESS);
  EXPECT_EQ(size, 1024u);
  ASSERT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, nullptr, &size),
            CUDA_SUCCESS);
  EXPECT_EQ(size, 4u);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_ENABLE_ON_EXCEPTION), 0u);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_TRIGGER_HOST), 1u);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_LIGHTWEIGHT), 0u);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_ENABLE_USER_TRIGGER), 0u);
  EXPECT_EQ(FlagsOf(cuCoredumpGetAttributeGlobal), 0u);
  EXPECT_EQ(GetString(cuCoredumpGetAttributeGlobal, CU_COREDUMP_FILE), "");
  EXPECT_EQ(GetString(cuCoredumpGetAttributeGlobal, CU_COREDUMP_PIPE), "");
  EXPECT_EQ(GetString(cuCoredumpGetAttribute, CU_COREDUMP_FILE), "");
  for (int bad : {0, static_cast<int>(CU_COREDUMP_MAX), 9, -1, 1000}) {
    size = 0;
    EXPECT_EQ(cuCoredumpGetAttributeGlobal(static_cast<CUcoredumpSettings>(bad), nullptr, &size),
              CUDA_ERROR_INVALID_VALUE)
        << bad;
    EXPECT_EQ(size, 0u) << bad;
  }
  EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe coredump:global, coredump:ctx): a
// boolean or GENERATION_FLAGS is read and written with *size exactly its size (one less, 8 more,
// 0: CUDA_ERROR_INVALID_VALUE, *size and the buffer untouched); FILE and PIPE are read with any
// *size, which stays as it was.
TEST_F(CoredumpTest, SizesMustBeExactButStringsTakeAny) {
  unsigned char buf[64];
  std::memset(buf, 0x77, sizeof buf);
  for (size_t wrong : {size_t{0}, size_t{9}}) {
    size_t size = wrong;
    EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, buf, &size),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(size, wrong);
    size = wrong;
    EXPECT_EQ(cuCoredumpGetAttribute(CU_COREDUMP_TRIGGER_HOST, buf, &size),
              CUDA_ERROR_INVALID_VALUE);
  }
  size_t size = 3;
  EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, buf, &size),
            CUDA_ERROR_INVALID_VALUE);
  size = 12;
  EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, buf, &size),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(AllBytes(buf, sizeof buf, 0x77));
  size = 0;
  EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, buf, &size), CUDA_SUCCESS);
  EXPECT_EQ(size, 0u);
  size = 1023;
  EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_PIPE, buf, &size), CUDA_SUCCESS);
  EXPECT_EQ(size, 1023u);
  EXPECT_EQ(buf[0], 0) << "the (empty) string was written";
  // Setters: the same exact sizes.
  const int one = 1;
  size = sizeof one;
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION,
                                         const_cast<int*>(&one), &size),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(size, sizeof one);
  unsigned char f = 0;
  size = 0;
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_LIGHTWEIGHT, &f, &size),
            CUDA_ERROR_INVALID_VALUE);
  std::uint64_t wide = CU_COREDUMP_LIGHTWEIGHT_FLAGS;
  size = sizeof wide;
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, &wide, &size),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(FlagsOf(cuCoredumpGetAttributeGlobal), 0u);
  std::uint32_t narrow = CU_COREDUMP_SKIP_GLOBAL_MEMORY;
  size = sizeof narrow;
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, &narrow, &size),
            CUDA_SUCCESS);
  EXPECT_EQ(FlagsOf(cuCoredumpGetAttributeGlobal), unsigned{CU_COREDUMP_SKIP_GLOBAL_MEMORY});
}

// NVIDIA's cuda-python test suite (cuda_bindings/tests/test_cuda.py, test_cuda_coredump_attr),
// which passes on the real driver: cuda-bindings hands a bytes value over as its buffer with
// size len(value), the terminator not counted, and a bool as one byte of size 1. Measured
// 2026-12-06, H100 driver 580.159.04 (misc_probe coredump:global): the process-wide setter reads
// the string to its terminator whatever *size says ("/tmp/x" with size 3 sets "/tmp/x"), and
// LIGHTWEIGHT / TRIGGER_HOST are views of GENERATION_FLAGS.
TEST_F(CoredumpTest, CudaBindingsSetsStringsWithTheirLengthAsSize) {
  EXPECT_EQ(SetByte(cuCoredumpSetAttributeGlobal, CU_COREDUMP_TRIGGER_HOST, 0), CUDA_SUCCESS);
  const char file[] = "corefile";
  size_t size = std::strlen(file);
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, const_cast<char*>(file), &size),
            CUDA_SUCCESS);
  EXPECT_EQ(size, std::strlen(file));
  const char pipe[] = "corepipe";
  size = std::strlen(pipe);
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_PIPE, const_cast<char*>(pipe), &size),
            CUDA_SUCCESS);
  EXPECT_EQ(SetByte(cuCoredumpSetAttributeGlobal, CU_COREDUMP_LIGHTWEIGHT, 1), CUDA_SUCCESS);

  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_TRIGGER_HOST), 0u);
  EXPECT_EQ(GetString(cuCoredumpGetAttributeGlobal, CU_COREDUMP_FILE), "corefile");
  EXPECT_EQ(GetString(cuCoredumpGetAttributeGlobal, CU_COREDUMP_PIPE), "corepipe");
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_LIGHTWEIGHT), 1u);
  EXPECT_EQ(FlagsOf(cuCoredumpGetAttributeGlobal),
            unsigned{CU_COREDUMP_LIGHTWEIGHT_FLAGS | CU_COREDUMP_SKIP_ABORT});

  const char x[] = "/tmp/x";
  size = 3;
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, const_cast<char*>(x), &size),
            CUDA_SUCCESS);
  EXPECT_EQ(GetString(cuCoredumpGetAttributeGlobal, CU_COREDUMP_FILE), "/tmp/x");
  const std::string longest(1023, 'a'), too_long(1024, 'b');
  size = longest.size() + 1;
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, const_cast<char*>(longest.c_str()),
                                         &size),
            CUDA_SUCCESS);
  size = too_long.size() + 1;
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, const_cast<char*>(too_long.c_str()),
                                         &size),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(GetString(cuCoredumpGetAttributeGlobal, CU_COREDUMP_FILE), longest);
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe coredump:global, coredump:ctx): the
// stored booleans keep the byte set (2 reads back 2); the views of GENERATION_FLAGS read 1.
TEST_F(CoredumpTest, StoredBooleansKeepTheByte) {
  EXPECT_EQ(SetByte(cuCoredumpSetAttributeGlobal, CU_COREDUMP_ENABLE_ON_EXCEPTION, 2),
            CUDA_SUCCESS);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_ENABLE_ON_EXCEPTION), 2u);
  EXPECT_EQ(SetByte(cuCoredumpSetAttributeGlobal, CU_COREDUMP_ENABLE_USER_TRIGGER, 2),
            CUDA_SUCCESS);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_ENABLE_USER_TRIGGER), 2u);
  EXPECT_EQ(SetByte(cuCoredumpSetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION, 2), CUDA_SUCCESS);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION), 2u);
  EXPECT_EQ(SetByte(cuCoredumpSetAttributeGlobal, CU_COREDUMP_LIGHTWEIGHT, 2), CUDA_SUCCESS);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_LIGHTWEIGHT), 1u);
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe coredump:ctx, coredump:mixed): a
// context's settings are the global ones as they were when it was created (a later global set
// does not reach it), its own sets stay its own, it refuses ENABLE_USER_TRIGGER and PIPE with
// CUDA_ERROR_INVALID_VALUE (even the size queries), its FILE setter reads at most *size
// characters, and CU_CTX_USER_COREDUMP_ENABLE / CU_CTX_COREDUMP_ENABLE make ENABLE_ON_EXCEPTION 1.
TEST_F(CoredumpTest, ContextsCopyTheGlobalSettingsWhenCreated) {
  EXPECT_EQ(SetByte(cuCoredumpSetAttributeGlobal, CU_COREDUMP_LIGHTWEIGHT, 1), CUDA_SUCCESS);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttribute, CU_COREDUMP_LIGHTWEIGHT), 0u)
      << "the primary context was created before the global set";
  EXPECT_EQ(FlagsOf(cuCoredumpGetAttribute), 0u);
  EXPECT_EQ(SetByte(cuCoredumpSetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION, 1), CUDA_SUCCESS);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttributeGlobal, CU_COREDUMP_ENABLE_ON_EXCEPTION), 0u)
      << "a context's setting is its own";

  size_t size = 0;
  EXPECT_EQ(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_USER_TRIGGER, nullptr, &size),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCoredumpGetAttribute(CU_COREDUMP_PIPE, nullptr, &size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCoredumpSetAttribute(CU_COREDUMP_PIPE, nullptr, &size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(SetByte(cuCoredumpSetAttribute, CU_COREDUMP_ENABLE_USER_TRIGGER, 1),
            CUDA_ERROR_INVALID_VALUE);
  const char x[] = "/tmp/x";
  size = 3;
  EXPECT_EQ(cuCoredumpSetAttribute(CU_COREDUMP_FILE, const_cast<char*>(x), &size), CUDA_SUCCESS);
  EXPECT_EQ(GetString(cuCoredumpGetAttribute, CU_COREDUMP_FILE), "/tm");
  EXPECT_EQ(GetString(cuCoredumpGetAttributeGlobal, CU_COREDUMP_FILE), "");

  EXPECT_EQ(SetByte(cuCoredumpSetAttributeGlobal, CU_COREDUMP_TRIGGER_HOST, 0), CUDA_SUCCESS);
  CUctxCreateParams params;
  std::memset(&params, 0, sizeof params);
  CUcontext created = nullptr;
  ASSERT_EQ(cuCtxCreate(&created, &params, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttribute, CU_COREDUMP_TRIGGER_HOST), 0u);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttribute, CU_COREDUMP_LIGHTWEIGHT), 1u);
  EXPECT_EQ(ByteOf(cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION), 0u);
  ASSERT_EQ(cuCtxDestroy(created), CUDA_SUCCESS);
  for (unsigned flags : {unsigned{CU_CTX_COREDUMP_ENABLE}, unsigned{CU_CTX_USER_COREDUMP_ENABLE}}) {
    ASSERT_EQ(cuCtxCreate(&created, &params, flags, 0), CUDA_SUCCESS);
    EXPECT_EQ(ByteOf(cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION), 1u) << flags;
    ASSERT_EQ(cuCtxDestroy(created), CUDA_SUCCESS);
  }
  ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, &size),
            CUDA_ERROR_INVALID_CONTEXT);
}

// --- device resources and green contexts ---

using GreenCtxTest = MiscTest;

CUdevResource DeviceSm() {
  CUdevResource r;
  std::memset(&r, 0, sizeof r);
  EXPECT_EQ(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  return r;
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe green:resource): the device's SM
// resource has the SM count and minSmPartitionSize = smCoscheduledAlignment = 8 (compute 9.0), a
// context's is the same, and a null context is CUDA_ERROR_INVALID_CONTEXT (not the current one).
TEST_F(GreenCtxTest, DeviceResourceHasTheProfilesSmCount) {
  int sms = 0;
  ASSERT_EQ(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), CUDA_SUCCESS);
  const CUdevResource r = DeviceSm();
  EXPECT_EQ(r.type, CU_DEV_RESOURCE_TYPE_SM);
  EXPECT_EQ(static_cast<int>(r.sm.smCount), sms);
  EXPECT_EQ(r.sm.minSmPartitionSize, 8u);
  EXPECT_EQ(r.sm.smCoscheduledAlignment, 8u);
  CUdevResource x;
  std::memset(&x, 0x77, sizeof x);
  EXPECT_EQ(cuDeviceGetDevResource(0, &x, static_cast<CUdevResourceType>(2)),
            CUDA_ERROR_INVALID_RESOURCE_TYPE);
  EXPECT_TRUE(AllBytes(&x, sizeof x, 0x77));
  EXPECT_EQ(cuDeviceGetDevResource(-1, &x, CU_DEV_RESOURCE_TYPE_SM), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(cuDeviceGetDevResource(0, nullptr, CU_DEV_RESOURCE_TYPE_SM), CUDA_ERROR_INVALID_VALUE);
  CUdevResource c;
  ASSERT_EQ(cuCtxGetDevResource(primary_, &c, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&c, &r, sizeof c), 0) << "the primary context's is the device's";
  std::memset(&x, 0x77, sizeof x);
  EXPECT_EQ(cuCtxGetDevResource(nullptr, &x, CU_DEV_RESOURCE_TYPE_SM), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_TRUE(AllBytes(&x, sizeof x, 0x77));
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe green:split): the group size is the
// count rounded up to the alignment (8, or 2 with IGNORE_SM_COSCHEDULING), but never more than
// the whole resource; groups and remainder say 0 for minSmPartitionSize and
// smCoscheduledAlignment; both flags together are CUDA_ERROR_INVALID_VALUE, unknown bits are
// ignored; an SM resource the driver did not make is CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION.
// (Groups of 8 SMs with co-scheduling: the H100 gave 15, not 132 / 8 = 16; the fake, without
// the GPU's GPC layout, gives 16.)
TEST_F(GreenCtxTest, SplitByCountRoundsUpToTheAlignment) {
  const CUdevResource dev = DeviceSm();
  ASSERT_EQ(dev.sm.smCount, 132u) << "the H200 profile";
  unsigned n = 0;
  ASSERT_EQ(cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, 0, 9), CUDA_SUCCESS);
  EXPECT_EQ(n, 8u);  // 132 SMs in groups of 16
  std::vector<CUdevResource> groups(n);
  CUdevResource rem;
  ASSERT_EQ(cuDevSmResourceSplitByCount(groups.data(), &n, &dev, &rem, 0, 9), CUDA_SUCCESS);
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(groups[0].sm.smCount, 16u);
  EXPECT_EQ(groups[0].sm.minSmPartitionSize, 0u);
  EXPECT_EQ(groups[0].sm.smCoscheduledAlignment, 0u);
  EXPECT_EQ(rem.sm.smCount, 4u);
  EXPECT_EQ(rem.sm.minSmPartitionSize, 0u);
  EXPECT_EQ(rem.sm.smCoscheduledAlignment, 0u);
  for (auto [min, size] : {std::pair{17u, 24u}, std::pair{33u, 40u}, std::pair{66u, 72u},
                           std::pair{128u, 128u}, std::pair{132u, 132u}}) {
    n = 1;
    ASSERT_EQ(cuDevSmResourceSplitByCount(groups.data(), &n, &dev, nullptr, 0, min), CUDA_SUCCESS)
        << min;
    EXPECT_EQ(groups[0].sm.smCount, size) << min;
  }
  n = 0;
  ASSERT_EQ(cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr,
                                        CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 9),
            CUDA_SUCCESS);
  EXPECT_EQ(n, 13u);  // groups of 10
  unsigned plain = 0;
  ASSERT_EQ(cuDevSmResourceSplitByCount(nullptr, &plain, &dev, nullptr, 0, 8), CUDA_SUCCESS);
  for (unsigned flags : {4u, 0x80000000u}) {
    n = 0;
    EXPECT_EQ(cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, flags, 8), CUDA_SUCCESS)
        << flags;
    EXPECT_EQ(n, plain) << flags;
  }
  n = 12345;
  EXPECT_EQ(cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, 3, 8),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(n, 12345u);
  n = 2;
  EXPECT_EQ(cuDevSmResourceSplitByCount(groups.data(), &n, &dev, nullptr, 0, 133),
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  EXPECT_EQ(cuDevSmResourceSplitByCount(groups.data(), nullptr, &dev, nullptr, 0, 8),
            CUDA_ERROR_INVALID_VALUE);
  CUdevResource made;
  std::memset(&made, 0, sizeof made);
  made.type = CU_DEV_RESOURCE_TYPE_SM;
  n = 2;
  EXPECT_EQ(cuDevSmResourceSplitByCount(groups.data(), &n, &made, nullptr, 0, 8),
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  made.sm = dev.sm;
  EXPECT_EQ(cuDevSmResourceSplitByCount(groups.data(), &n, &made, nullptr, 0, 8),
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  made = dev;
  made.type = CU_DEV_RESOURCE_TYPE_INVALID;
  EXPECT_EQ(cuDevSmResourceSplitByCount(groups.data(), &n, &made, nullptr, 0, 8),
            CUDA_ERROR_INVALID_RESOURCE_TYPE);
  EXPECT_EQ(cuDevSmResourceSplitByCount(groups.data(), &n, &rem, nullptr, 0, 8),
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)
      << "a split's results are not split again";
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe green:desc): a descriptor takes
// groups of different splits, the same group twice, the remainder, the device's resource with a
// group or twice (cuda.h asks for one split); each call makes a new descriptor.
TEST_F(GreenCtxTest, DescriptorTakesAnyResourcesTheDriverMade) {
  const CUdevResource dev = DeviceSm();
  CUdevResource a[2], b[2], rem;
  unsigned n = 2, m = 2;
  ASSERT_EQ(cuDevSmResourceSplitByCount(a, &n, &dev, &rem, 0, 16), CUDA_SUCCESS);
  ASSERT_EQ(cuDevSmResourceSplitByCount(b, &m, &dev, nullptr, 0, 16), CUDA_SUCCESS);
  CUdevResourceDesc d = nullptr, d2 = nullptr;
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, a, 2), CUDA_SUCCESS);
  EXPECT_EQ(cuDevResourceGenerateDesc(&d2, a, 2), CUDA_SUCCESS);
  EXPECT_NE(d, d2);
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, &rem, 1), CUDA_SUCCESS);
  CUdevResource cross[2] = {a[0], b[1]};
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, cross, 2), CUDA_SUCCESS);
  CUdevResource same[2] = {a[0], a[0]};
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, same, 2), CUDA_SUCCESS);
  CUdevResource devplus[2] = {dev, a[0]};
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, devplus, 2), CUDA_SUCCESS);
  d = reinterpret_cast<CUdevResourceDesc>(0x5a5a5a5a0000ull);
  EXPECT_EQ(cuDevResourceGenerateDesc(nullptr, a, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d, reinterpret_cast<CUdevResourceDesc>(0x5a5a5a5a0000ull));
  // The fake's answers where the H100 crashed: no resources, one it did not make.
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, a, 0), CUDA_ERROR_INVALID_VALUE);
  CUdevResource made;
  std::memset(&made, 0, sizeof made);
  made.type = CU_DEV_RESOURCE_TYPE_SM;
  made.sm = dev.sm;
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, &made, 1), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
}

// Makes a green context of one group of `min_count` SMs.
CUgreenCtx MakeGreen(unsigned min_count) {
  const CUdevResource dev = DeviceSm();
  CUdevResource g[1];
  unsigned n = 1;
  EXPECT_EQ(cuDevSmResourceSplitByCount(g, &n, &dev, nullptr, 0, min_count), CUDA_SUCCESS);
  CUdevResourceDesc d = nullptr;
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, g, 1), CUDA_SUCCESS);
  CUgreenCtx green = nullptr;
  EXPECT_EQ(cuGreenCtxCreate(&green, d, 0, CU_GREEN_CTX_DEFAULT_STREAM), CUDA_SUCCESS);
  return green;
}

TEST_F(GreenCtxTest, CreateConvertQueryDestroy) {  // probe green:ctx
  const CUdevResource dev = DeviceSm();
  CUdevResource g[1];
  unsigned n = 1;
  ASSERT_EQ(cuDevSmResourceSplitByCount(g, &n, &dev, nullptr, 0, 16), CUDA_SUCCESS);
  CUdevResourceDesc d = nullptr;
  ASSERT_EQ(cuDevResourceGenerateDesc(&d, g, 1), CUDA_SUCCESS);
  CUgreenCtx green = nullptr;
  EXPECT_EQ(cuGreenCtxCreate(&green, d, 0, 0), CUDA_ERROR_INVALID_VALUE)
      << "CU_GREEN_CTX_DEFAULT_STREAM is required";
  // Measured 2026-12-06, H100 driver 580.159.04 (misc_probe green:ctx): a null descriptor makes
  // a green context; the fake gives it the whole device.
  CUgreenCtx whole = nullptr;
  ASSERT_EQ(cuGreenCtxCreate(&whole, nullptr, 0, CU_GREEN_CTX_DEFAULT_STREAM), CUDA_SUCCESS);
  CUdevResource wr;
  ASSERT_EQ(cuGreenCtxGetDevResource(whole, &wr, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(wr.sm.smCount, dev.sm.smCount);
  ASSERT_EQ(cuGreenCtxDestroy(whole), CUDA_SUCCESS);
  ASSERT_EQ(cuGreenCtxCreate(&green, d, 0, CU_GREEN_CTX_DEFAULT_STREAM), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().green_contexts, 1);
  EXPECT_NE(fake().LeakReport().find("green context"), std::string::npos);
  CUdevResource r;
  ASSERT_EQ(cuGreenCtxGetDevResource(green, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(r.sm.smCount, 16u);
  CUcontext c = nullptr;
  ASSERT_EQ(cuCtxFromGreenCtx(&c, green), CUDA_SUCCESS);
  EXPECT_NE(c, primary_);
  ASSERT_EQ(cuCtxGetDevResource(c, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(r.sm.smCount, 16u);
  unsigned long long id = 0;
  EXPECT_EQ(cuGreenCtxGetId(green, &id), CUDA_SUCCESS);
  EXPECT_NE(id, 0u);
  ASSERT_EQ(cuGreenCtxDestroy(green), CUDA_SUCCESS);
  EXPECT_EQ(cuGreenCtxDestroy(green), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(cuCtxFromGreenCtx(&c, green), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(cuGreenCtxGetId(green, &id), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  // A null green context: CUDA_ERROR_INVALID_CONTEXT, as measured for cuGreenCtxStreamCreate,
  // cuGreenCtxRecordEvent and cuGreenCtxWaitEvent (the other entry points were not reached).
  EXPECT_EQ(cuGreenCtxDestroy(nullptr), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuGreenCtxDestroy(reinterpret_cast<CUgreenCtx>(0x5a5a5a5a0000ull)),
            CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(GreenCtxTest, GreenStreamRunsWorkAndRecordEventWaitsForIt) {  // probe green:streams
  CUgreenCtx green = MakeGreen(16);
  ASSERT_NE(green, nullptr);
  CUcontext c = nullptr;
  ASSERT_EQ(cuCtxFromGreenCtx(&c, green), CUDA_SUCCESS);
  CUstream s = nullptr;
  EXPECT_EQ(cuGreenCtxStreamCreate(&s, green, 0, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  CUgreenCtx back = nullptr;
  ASSERT_EQ(cuStreamGetGreenCtx(s, &back), CUDA_SUCCESS);
  EXPECT_EQ(back, green);
  // cuda.h: cuStreamGetCtx_v2 gives the green context and the device's primary context.
  CUcontext sc = nullptr;
  back = nullptr;
  ASSERT_EQ(cuStreamGetCtx_v2(s, &sc, &back), CUDA_SUCCESS);
  EXPECT_EQ(back, green);
  EXPECT_EQ(sc, primary_);
  CUdeviceptr a = 0, b = 0;
  ASSERT_EQ(cuMemAlloc(&a, 1 << 16), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&b, 1 << 16), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(c), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8Async(a, 0x3c, 1 << 16, s), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoDAsync(b, a, 1 << 16, s), CUDA_SUCCESS);
  CUevent e = nullptr;
  ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(cuGreenCtxRecordEvent(green, e), CUDA_SUCCESS);
  ASSERT_EQ(cuEventSynchronize(e), CUDA_SUCCESS);
  std::vector<unsigned char> host(1 << 16, 0);
  ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoH(host.data(), b, host.size()), CUDA_SUCCESS);
  EXPECT_TRUE(AllBytes(host.data(), host.size(), 0x3c));
  EXPECT_EQ(cuGreenCtxWaitEvent(green, e), CUDA_SUCCESS);
  // Measured 2026-12-06, H100 driver 580.159.04 (misc_probe green:streams).
  EXPECT_EQ(cuGreenCtxRecordEvent(green, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuGreenCtxWaitEvent(green, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuGreenCtxRecordEvent(nullptr, e), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuGreenCtxWaitEvent(nullptr, e), CUDA_ERROR_INVALID_CONTEXT);
  CUstream sx = nullptr;
  EXPECT_EQ(cuGreenCtxStreamCreate(&sx, nullptr, CU_STREAM_NON_BLOCKING, 0),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuEventDestroy(e), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(primary_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(b), CUDA_SUCCESS);
  EXPECT_EQ(cuGreenCtxDestroy(green), CUDA_SUCCESS);
}

TEST_F(GreenCtxTest, DestroyReleasesThePrimaryRetainAndTheStreams) {  // probe green:ctx
  ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  primary_ = nullptr;
  unsigned flags = 0;
  int active = -1;
  ASSERT_EQ(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  EXPECT_EQ(active, 0);
  CUgreenCtx green = MakeGreen(8);
  ASSERT_EQ(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  EXPECT_EQ(active, 1) << "a green context retains the primary context";
  CUstream s = nullptr;
  ASSERT_EQ(cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGreenCtxDestroy(green), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  EXPECT_EQ(active, 0);
  EXPECT_EQ(fake().LiveObjects().Total(), 0) << fake().LeakReport();
}

// Measured 2026-12-06, H100 driver 580.159.04 (misc_probe noinit): every entry point of the area
// answers CUDA_ERROR_NOT_INITIALIZED before cuInit, but the process-wide coredump attributes,
// which answer as after it.
TEST(MiscNoInitTest, EveryEntryPointButTheGlobalCoredumpAttributesAnswersNotInitialized) {
  fakecuda::ScopedDriver driver;  // installed, cuInit not called
  ASSERT_TRUE(driver.ok());
  CUipcMemHandle mh;
  std::memset(&mh, 0, sizeof mh);
  CUipcEventHandle eh;
  std::memset(&eh, 0, sizeof eh);
  CUdeviceptr p = 0;
  CUevent e = nullptr;
  CUdevResource r;
  unsigned n = 0;
  CUdevResourceDesc d = nullptr;
  CUgreenCtx g = nullptr;
  CUcontext c = nullptr;
  CUstream s = nullptr;
  unsigned long long id = 0;
  size_t size = 0;
  EXPECT_EQ(cuIpcGetMemHandle(&mh, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuIpcOpenMemHandle(&p, mh, 1), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuIpcCloseMemHandle(0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuIpcGetEventHandle(&eh, nullptr), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuIpcOpenEventHandle(&e, eh), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuProfilerStart(), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuProfilerStop(), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuCoredumpGetAttribute(CU_COREDUMP_FILE, nullptr, &size), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuCoredumpSetAttribute(CU_COREDUMP_FILE, nullptr, &size), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, nullptr, &size), CUDA_SUCCESS);
  EXPECT_EQ(size, 1024u);
  unsigned char v = 0x77;
  size = 1;
  EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &v, &size),
            CUDA_SUCCESS);
  EXPECT_EQ(v, 0);
  v = 1;
  EXPECT_EQ(cuCoredumpSetAttributeGlobal(CU_COREDUMP_LIGHTWEIGHT, &v, &size), CUDA_SUCCESS);
  v = 0;
  EXPECT_EQ(cuCoredumpGetAttributeGlobal(CU_COREDUMP_LIGHTWEIGHT, &v, &size), CUDA_SUCCESS);
  EXPECT_EQ(v, 1) << "a set before cuInit holds";
  EXPECT_EQ(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuCtxGetDevResource(nullptr, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuGreenCtxGetDevResource(nullptr, &r, CU_DEV_RESOURCE_TYPE_SM),
            CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuDevSmResourceSplitByCount(nullptr, &n, &r, nullptr, 0, 8),
            CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuDevResourceGenerateDesc(&d, &r, 1), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuGreenCtxCreate(&g, nullptr, 0, 1), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuGreenCtxDestroy(nullptr), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuCtxFromGreenCtx(&c, nullptr), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuGreenCtxRecordEvent(nullptr, nullptr), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuGreenCtxWaitEvent(nullptr, nullptr), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuGreenCtxStreamCreate(&s, nullptr, 1, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuGreenCtxGetId(nullptr, &id), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuStreamGetGreenCtx(nullptr, &g), CUDA_ERROR_NOT_INITIALIZED);
}

}  // namespace
}  // namespace cuhal::testing
