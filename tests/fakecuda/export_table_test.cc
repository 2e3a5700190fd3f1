// Copyright 2026 The cuhal Authors.
// cuGetExportTable and the slots of the tables the CUDA runtime uses (fakecuda/internal/
// export_tables.h; docs/cudart_on_the_fake.md). Fake only: the slots are called through the
// tables as the runtime calls them. Where the layouts and meanings come from, and that the CUDA
// 13.0 runtime accepts these answers, is in the docs; tests/fakecuda_dropin/cudart_test.sh runs
// the runtime itself.
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fakecuda/internal/export_tables.h"
#include "tests/fakecuda/fake_fixture.h"

namespace cuhal::testing {
namespace {

CUuuid Uuid(std::initializer_list<unsigned> bytes) {
  CUuuid u{};
  int i = 0;
  for (unsigned b : bytes) u.bytes[i++] = static_cast<char>(b);
  return u;
}

const CUuuid kCudart = Uuid({0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9,
                             0x39, 0x12, 0xfd, 0x9d, 0xf9});
const CUuuid kContextStorage = Uuid({0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3,
                                     0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93});
const CUuuid kIntegrity = Uuid({0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba,
                                0x12, 0x3c, 0x66, 0xe1, 0xf2});
const CUuuid kContextChecks = Uuid({0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6,
                                    0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e});
const CUuuid kCallbackHooks = Uuid({0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2,
                                    0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66});
const CUuuid kToolsTls = Uuid({0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6,
                               0xe7, 0x8a, 0x3a, 0xec, 0xdc});

// The word `index` of `table`, as a function of type F.
template <typename F>
F SlotOf(const void* table, int index) {
  const void* word = nullptr;
  std::memcpy(&word, static_cast<const char*>(table) + index * sizeof(void*), sizeof(word));
  F f = nullptr;
  std::memcpy(&f, &word, sizeof(f));
  return f;
}

std::size_t SizeWord(const void* table) {
  std::size_t size = 0;
  std::memcpy(&size, table, sizeof(size));
  return size;
}

std::string Hex(const unsigned char* d, int n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += kDigits[d[i] >> 4];
    s += kDigits[d[i] & 15];
  }
  return s;
}

std::string Md2Hex(const std::string& message) {
  unsigned char digest[16];
  fakecuda::Md2(message.data(), message.size(), digest);
  return Hex(digest, 16);
}

// The test vectors of RFC 1319, appendix A.5.
TEST(ExportTableMd2Test, Rfc1319Vectors) {
  EXPECT_EQ(Md2Hex(""), "8350e5a3e24c153df2275c9f80692773");
  EXPECT_EQ(Md2Hex("a"), "32ec01ec4a6dac72c0ab96fb34c0b5d1");
  EXPECT_EQ(Md2Hex("abc"), "da853b0d3f88d99b30283a69e6ded6bb");
  EXPECT_EQ(Md2Hex("message digest"), "ab4f496bfb2a530b219ff33031fe06b0");
  EXPECT_EQ(Md2Hex("abcdefghijklmnopqrstuvwxyz"), "4e8ddff3650292ab5a4108c3aa47940b");
  EXPECT_EQ(Md2Hex("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            "da33def2a42df13975352846c30338cd");
  EXPECT_EQ(Md2Hex("1234567890123456789012345678901234567890123456789012345678901234567890"
                   "1234567890"),
            "d5976f79d83d3a0dc9806c3c66f3efd8");
}

// HMAC (RFC 2104) with MD2's 16-byte block: MD2((K ^ opad) || MD2((K ^ ipad) || message)).
TEST(ExportTableMd2Test, HmacIsRfc2104) {
  unsigned char key[16];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<unsigned char>(i * 17 + 3);
  const std::string message = "the integrity record";
  std::string inner;
  for (unsigned char k : key) inner += static_cast<char>(k ^ 0x36);
  inner += message;
  unsigned char inner_digest[16];
  fakecuda::Md2(inner.data(), inner.size(), inner_digest);
  std::string outer;
  for (unsigned char k : key) outer += static_cast<char>(k ^ 0x5C);
  outer.append(reinterpret_cast<const char*>(inner_digest), 16);
  unsigned char digest[16];
  fakecuda::HmacMd2(key, message.data(), message.size(), digest);
  EXPECT_EQ(Hex(digest, 16), Md2Hex(outer));
}

class ExportTableTest : public FakeDriverTest {
 protected:
  void SetUp() override {
    FakeDriverTest::SetUp();
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  }
  void TearDown() override {
    cuCtxSetCurrent(nullptr);
    EXPECT_EQ(fake().LiveObjects().Total(), 0) << fake().LeakReport();
    FakeDriverTest::TearDown();
  }
  const void* Table(const CUuuid& id) {
    const void* table = nullptr;
    EXPECT_EQ(cuGetExportTable(&table, &id), CUDA_SUCCESS);
    EXPECT_NE(table, nullptr);
    return table;
  }
};

TEST_F(ExportTableTest, ServedAndUnknownTables) {
  for (const CUuuid& id : {kCudart, kContextStorage, kIntegrity, kContextChecks, kCallbackHooks,
                           kToolsTls}) {
    EXPECT_NE(Table(id), nullptr);
  }
  EXPECT_EQ(SizeWord(Table(kCudart)), 13 * sizeof(void*));
  EXPECT_EQ(SizeWord(Table(kCallbackHooks)), 7 * sizeof(void*));
  EXPECT_EQ(SizeWord(Table(kToolsTls)), 4 * sizeof(void*));
  EXPECT_EQ(SizeWord(Table(kIntegrity)), 3 * sizeof(void*));
  // The CUDA 13 table the runtime asks for first, and any other UUID: not served, NULL.
  const CUuuid f8cf = Uuid({0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb,
                            0x46, 0x9e, 0x7c, 0x0d, 0xd9});
  const void* table = &table;
  EXPECT_EQ(cuGetExportTable(&table, &f8cf), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(table, nullptr);
  const CUuuid zero{};
  table = &table;
  EXPECT_EQ(cuGetExportTable(&table, &zero), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(table, nullptr);
  EXPECT_EQ(cuGetExportTable(nullptr, &kCudart), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetExportTable(&table, nullptr), CUDA_ERROR_INVALID_VALUE);
}

// cudart_interface[2]: the primary context's handle, neither retained nor made active.
TEST_F(ExportTableTest, PrimaryContextSlotDoesNotRetain) {
  auto primary = SlotOf<CUresult (*)(CUcontext*, CUdevice)>(Table(kCudart), 2);
  CUcontext handle = nullptr;
  ASSERT_EQ(primary(&handle, 0), CUDA_SUCCESS);
  EXPECT_NE(handle, nullptr);
  unsigned flags = 1;
  int active = 1;
  ASSERT_EQ(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  EXPECT_EQ(active, 0);
  CUcontext retained = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&retained, 0), CUDA_SUCCESS);
  EXPECT_EQ(retained, handle);
  EXPECT_EQ(primary(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(primary(&handle, 99), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

struct DtorCall {
  CUcontext ctx;
  void* key;
  void* value;
};
std::vector<DtorCall>* g_dtor_calls = nullptr;
void RecordDtor(CUcontext ctx, void* key, void* value) {
  g_dtor_calls->push_back(DtorCall{ctx, key, value});
}

// context_local_storage: put, get, delete by (context, key); NULL is the current context; a
// destroyed context's values go, their destructors called with (context, key, value).
TEST_F(ExportTableTest, ContextLocalStorage) {
  using Put = CUresult (*)(CUcontext, void*, void*, void (*)(CUcontext, void*, void*));
  using Erase = CUresult (*)(CUcontext, void*);
  using Get = CUresult (*)(void**, CUcontext, void*);
  const void* table = Table(kContextStorage);
  auto put = SlotOf<Put>(table, 0);
  auto erase = SlotOf<Erase>(table, 1);
  auto get = SlotOf<Get>(table, 2);
  std::vector<DtorCall> calls;
  g_dtor_calls = &calls;
  int key = 0;
  int value = 0;
  int other = 0;
  void* out = &out;
  EXPECT_EQ(get(&out, nullptr, &key), CUDA_ERROR_INVALID_CONTEXT) << "no current context";
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(get(nullptr, nullptr, &key), CUDA_ERROR_INVALID_VALUE);

  CUcontext primary = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(primary), CUDA_SUCCESS);
  EXPECT_EQ(get(&out, nullptr, &key), CUDA_ERROR_INVALID_HANDLE) << "nothing stored yet";
  ASSERT_EQ(put(nullptr, &key, &value, &RecordDtor), CUDA_SUCCESS);
  ASSERT_EQ(get(&out, primary, &key), CUDA_SUCCESS);
  EXPECT_EQ(out, &value);
  ASSERT_EQ(put(primary, &key, &other, &RecordDtor), CUDA_SUCCESS);  // replaces
  ASSERT_EQ(get(&out, nullptr, &key), CUDA_SUCCESS);
  EXPECT_EQ(out, &other);
  ASSERT_EQ(erase(nullptr, &key), CUDA_SUCCESS);
  EXPECT_EQ(get(&out, nullptr, &key), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(calls.empty()) << "a delete calls no destructor";

  // A reset destroys the primary context: its destructors run once, before it goes.
  ASSERT_EQ(put(nullptr, &key, &value, &RecordDtor), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].ctx, primary);
  EXPECT_EQ(calls[0].key, &key);
  EXPECT_EQ(calls[0].value, &value);
  EXPECT_NE(get(&out, primary, &key), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);  // the retain stays owed after a reset

  // So does cuCtxDestroy, and the last release of a primary context.
  CUcontext created = nullptr;
  ASSERT_EQ(cuCtxCreate(&created, nullptr, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(put(created, &key, &other, &RecordDtor), CUDA_SUCCESS);
  ASSERT_EQ(put(created, &value, &other, nullptr), CUDA_SUCCESS);  // no destructor: forgotten
  ASSERT_EQ(cuCtxDestroy(created), CUDA_SUCCESS);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].ctx, created);
  EXPECT_EQ(calls[1].value, &other);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(put(primary, &key, &value, &RecordDtor), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  EXPECT_EQ(calls.size(), 2u) << "not the last release";
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  EXPECT_EQ(calls.size(), 3u);
  g_dtor_calls = nullptr;
}

// The leak report tells the CUDA runtime's primary-context retains from the program's: the
// runtime puts its per-context state on each activation it retains (context_local_storage[0])
// and, at exit, deletes it and releases; after cudaDeviceReset (cuDevicePrimaryCtxReset) it
// never releases the retain it made before (docs/cudart_on_the_fake.md, "The leak report").
TEST_F(ExportTableTest, LeakReportNamesTheRuntimesRetains) {
  using Put = CUresult (*)(CUcontext, void*, void*, void (*)(CUcontext, void*, void*));
  using Erase = CUresult (*)(CUcontext, void*);
  const void* table = Table(kContextStorage);
  auto put = SlotOf<Put>(table, 0);
  auto erase = SlotOf<Erase>(table, 1);
  int key = 0;
  int value = 0;
  CUcontext primary = nullptr;
  // The runtime's first use, then cudaDeviceReset: its retain stays owed, and is its own.
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(put(primary, &key, &value, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
  fakecuda::Inventory live = fake().LiveObjects();
  EXPECT_EQ(live.primary_retains, 0);
  EXPECT_EQ(live.runtime_primary_retains, 1);
  EXPECT_EQ(live.Total(), 0);
  EXPECT_EQ(live.ToString(),
            "none (not leaks: 1 primary context retain(s) held by the CUDA runtime)");
  EXPECT_NE(fake().LeakReport().find("primary context of device 0: 1 cuDevicePrimaryCtxRetain "
                                     "held by the CUDA runtime, not the program"),
            std::string::npos)
      << fake().LeakReport();
  // A retain of the program's own, never released, is the program's leak.
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  live = fake().LiveObjects();
  EXPECT_EQ(live.primary_retains, 1);
  EXPECT_EQ(live.runtime_primary_retains, 1);
  EXPECT_NE(fake().LeakReport().find("primary context of device 0: 1 outstanding "
                                     "cuDevicePrimaryCtxRetain"),
            std::string::npos)
      << fake().LeakReport();
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  // The runtime's use after the reset: retain, put; at exit delete, release.
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(put(primary, &key, &value, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().runtime_primary_retains, 2);
  ASSERT_EQ(erase(primary, &key), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  live = fake().LiveObjects();
  EXPECT_EQ(live.primary_retains, 0);
  EXPECT_EQ(live.runtime_primary_retains, 1);
  // Whoever releases the last retain, none is left to be the runtime's: a later retain of the
  // program's is not counted as the runtime's.
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().runtime_primary_retains, 0);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().primary_retains, 1);
  EXPECT_EQ(fake().LiveObjects().runtime_primary_retains, 0);
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

// The runtime's release at exit (a context_local_storage delete, then the last release) destroys
// the primary context and what it still holds: the objects the program never freed, which the
// leak report still lists as the program's (the real driver frees them silently).
TEST(ExportTableLeakTest, WhatTheRuntimesReleaseAtExitDestroysIsTheProgramsLeak) {
  fakecuda::ScopedDriver driver;
  ASSERT_TRUE(driver.ok());
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  const void* table = nullptr;
  ASSERT_EQ(cuGetExportTable(&table, &kContextStorage), CUDA_SUCCESS);
  auto put =
      SlotOf<CUresult (*)(CUcontext, void*, void*, void (*)(CUcontext, void*, void*))>(table, 0);
  auto erase = SlotOf<CUresult (*)(CUcontext, void*)>(table, 1);
  int key = 0;
  CUcontext primary = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(put(primary, &key, &key, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(primary), CUDA_SUCCESS);
  CUdeviceptr kept = 0;
  CUdeviceptr freed = 0;
  ASSERT_EQ(cuMemAlloc(&kept, 4096), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&freed, 8192), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree(freed), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(erase(primary, &key), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  fakecuda::Inventory live = driver->LiveObjects();
  EXPECT_EQ(live.device_allocations, 1);
  EXPECT_EQ(live.streams, 1);
  EXPECT_EQ(live.primary_retains + live.runtime_primary_retains, 0);
  EXPECT_EQ(live.Total(), 2) << live.ToString();
  const std::string report = driver->LeakReport();
  EXPECT_NE(report.find(" of 4096 bytes (cuMemAlloc) (left to the CUDA runtime's teardown at "
                        "exit)"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("8192"), std::string::npos) << report;
  EXPECT_NE(report.find("stream "), std::string::npos) << report;
}

// A library loaded from a fat-binary wrapper is the CUDA runtime's registration of the program's
// kernels (it unloads it at exit): while loaded, the leak report names it as the runtime's.
TEST_F(ExportTableTest, LibrariesFromFatBinaryWrappersAreTheRuntimes) {
  alignas(8) static const unsigned char kEmptyFatbin[16] = {0x50, 0xed, 0x55, 0xba, 0x01, 0x00,
                                                            0x10, 0x00};
  struct {
    std::uint32_t magic = 0x466243B1;
    std::uint32_t version = 1;
    const void* data = kEmptyFatbin;
    const void* unused = nullptr;
  } wrapper;
  CUlibrary runtime = nullptr;
  CUlibrary program = nullptr;
  ASSERT_EQ(cuLibraryLoadData(&runtime, &wrapper, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_SUCCESS);
  ASSERT_EQ(cuLibraryLoadData(&program, kEmptyFatbin, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_SUCCESS);
  fakecuda::Inventory live = fake().LiveObjects();
  EXPECT_EQ(live.libraries, 1);
  EXPECT_EQ(live.runtime_libraries, 1);
  EXPECT_EQ(live.ToString(), "1 library(ies) (not leaks: 1 library(ies) held by the CUDA runtime)");
  EXPECT_NE(fake().LeakReport().find("held by the CUDA runtime, not the program (its registration"),
            std::string::npos)
      << fake().LeakReport();
  EXPECT_EQ(cuLibraryUnload(runtime), CUDA_SUCCESS);
  EXPECT_EQ(cuLibraryUnload(program), CUDA_SUCCESS);
  EXPECT_EQ(fake().LiveObjects().runtime_libraries, 0);
}

// integrity_check[1]: two fixed answers, else HMAC-MD2 of the record the docs describe.
TEST_F(ExportTableTest, IntegrityCheck) {
  using Check = CUresult (*)(unsigned, std::uint64_t, std::uint64_t*);
  const void* integrity = Table(kIntegrity);
  auto check = SlotOf<Check>(integrity, 1);
  std::uint64_t result[2] = {};
  ASSERT_EQ(check(13000, 1, result), CUDA_SUCCESS);
  EXPECT_EQ(result[0], 0x3341181C03CB675CULL);
  EXPECT_EQ(result[1], 0x8ED383AA1F4CD1E8ULL);
  ASSERT_EQ(check(13001, 1, result), CUDA_SUCCESS);
  EXPECT_EQ(result[0], 0x1841181C03CB675CULL);
  EXPECT_EQ(check(13002, 1, nullptr), CUDA_ERROR_INVALID_VALUE);

  const std::uint64_t now = 1796542880;
  ASSERT_EQ(check(13002, now, result), CUDA_SUCCESS);
  struct {
    std::uint32_t driver_version, version, process, thread;
    const void *cudart, *integrity, *function;
    std::uint64_t seconds;
  } record{};
  int driver = 0;
  ASSERT_EQ(cuDriverGetVersion(&driver), CUDA_SUCCESS);
  record.driver_version = static_cast<std::uint32_t>(driver);
  record.version = 13002;
  record.process = static_cast<std::uint32_t>(getpid());
  record.thread = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(
      reinterpret_cast<void*>(pthread_self())));
  record.cudart = Table(kCudart);
  record.integrity = integrity;
  std::memcpy(&record.function, static_cast<const char*>(integrity) + sizeof(void*),
              sizeof(void*));
  record.seconds = now;
  static_assert(sizeof(record) == 48);
  std::string message(reinterpret_cast<const char*>(&record), sizeof(record));
  int count = 0;
  ASSERT_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
  for (int d = 0; d < count; ++d) {
    struct {
      CUuuid uuid;
      int domain, bus, device;
    } dev{};
    ASSERT_EQ(cuDeviceGetUuid_v2(&dev.uuid, d), CUDA_SUCCESS);
    ASSERT_EQ(cuDeviceGetAttribute(&dev.domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d), CUDA_SUCCESS);
    ASSERT_EQ(cuDeviceGetAttribute(&dev.bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d), CUDA_SUCCESS);
    ASSERT_EQ(cuDeviceGetAttribute(&dev.device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d), CUDA_SUCCESS);
    static_assert(sizeof(dev) == 28);
    message.append(reinterpret_cast<const char*>(&dev), sizeof(dev));
  }
  const unsigned char key[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                                 0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};
  unsigned char expected[16];
  fakecuda::HmacMd2(key, message.data(), message.size(), expected);
  EXPECT_EQ(Hex(reinterpret_cast<const unsigned char*>(result), 16), Hex(expected, 16));
}

// The slots that only answer constants, and the callback-hook buffers.
TEST_F(ExportTableTest, ChecksAndBuffers) {
  const void* checks = Table(kContextChecks);
  unsigned bits = 7;
  const void* detail = &detail;
  EXPECT_EQ(SlotOf<CUresult (*)(CUcontext, unsigned*, const void**)>(checks, 2)(nullptr, &bits,
                                                                              &detail),
            CUDA_SUCCESS);
  EXPECT_EQ(bits, 0u);
  EXPECT_EQ(detail, nullptr);
  EXPECT_EQ(SlotOf<unsigned (*)()>(checks, 3)(), 0u);
  const void* hooks = Table(kCallbackHooks);
  for (int slot : {2, 6}) {
    void* buffer = nullptr;
    std::size_t size = 0;
    SlotOf<void (*)(void**, std::size_t*)>(hooks, slot)(&buffer, &size);
    EXPECT_NE(buffer, nullptr);
    EXPECT_EQ(size, slot == 2 ? 1024u : 14u);
    std::memset(buffer, 0xAB, size);  // the runtime writes them
  }
}

}  // namespace
}  // namespace cuhal::testing
