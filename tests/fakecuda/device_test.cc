// Copyright 2026 The cuhal Authors.
// Conformance: devices (issue 3, "Must model" 2): count, names, UUIDs, total memory, attributes,
// PCI bus ids, invalid ordinals and attributes.
//
// Every expectation of the parameterized tests here was checked against the real driver (NVIDIA
// H200, driver 580, CUDA 13.0) on 2026-12-02: the whole suite passed there (with the table's
// cuCtxSynchronize, cuCtxGetDevice and cuStreamGetCtx entries bound to their CUDA 13.0 cuda.h
// ABI; see tests/support/backend.h). An expectation added since, not yet run there, carries a
// "// UNMEASURED" comment on its line.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "fakecuda/device_profile.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

// What the H200 reports, written out here with where each value was measured, so that a wrong
// profile, a wrong parse of it or a wrong attribute lookup in the fake fails these tests (a test
// that compares the fake with the profile it was built from cannot). Sources: NVIDIA H200,
// driver 580.159.04, CUDA 13.0; "capture" is fakecuda/profiles/h200.json (fakecuda_capture on
// 2026-12-02), "gaps" is ci/gpu-probes/results/2026-12-03-probe-second.txt.
constexpr char kH200Name[] = "NVIDIA H200";               // capture; probe "info"
constexpr size_t kH200TotalMemory = 150109880320;         // capture; gaps: cuMemGetInfo total
struct AttributeFact {
  CUdevice_attribute attribute;
  int value;
};
constexpr AttributeFact kH200Attributes[] = {
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},                                 // capture
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},                     // capture
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},                   // capture
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},                   // capture
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},                   // capture
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048},          // capture
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536},                // capture
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152},            // capture
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448},     // capture; gaps
    {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 62914560},                       // capture; gaps
    {CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 39321600},        // capture; gaps
    {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 6016},                 // capture
    {CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 65536},                  // capture
    {CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 3},                         // capture
    {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},                         // capture
    {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},                     // capture
};

// fakecuda/profiles/h200.json as this test reads it: its own few regular expressions, not
// fakecuda::ParseProfile and not the copy embedded in fakecuda, so that a fault in the fake's
// parser, its embedding or its lookup shows up as a difference. Attribute names are mapped to
// values by cuda.h's own enumerators (the fake maps them by the numbers in
// device_attribute_list.inc).
struct ProfileFile {
  std::string name;
  std::string uuid;        // "GPU-xxxxxxxx-..."
  std::string pci_bus_id;  // the captured machine's
  size_t total_memory = 0;
  std::map<int, int> attributes;
  std::vector<std::string> unknown_keys;
};

int AttributeFromCudaH(const std::string& name) {
  static const std::map<std::string, int> kByName = {
#define CUHAL_DEVICE_ATTRIBUTE(attr, value) {#attr, static_cast<int>(attr)},
#include "fakecuda/device_attribute_list.inc"
#undef CUHAL_DEVICE_ATTRIBUTE
  };
  auto it = kByName.find(name);
  return it == kByName.end() ? -1 : it->second;
}

bool ReadProfileFile(ProfileFile* out, std::string* error) {
  std::ifstream in(CUHAL_H200_PROFILE_FILE);
  if (!in) {
    *error = std::string("cannot read ") + CUHAL_H200_PROFILE_FILE;
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string json = text.str();
  std::smatch m;
  auto field = [&](const char* pattern, std::string* value) {
    if (!std::regex_search(json, m, std::regex(pattern))) return false;
    *value = m[1].str();
    return true;
  };
  std::string total;
  if (!field(R"re("name"\s*:\s*"([^"]*)")re", &out->name) ||
      !field(R"re("uuid"\s*:\s*"([^"]*)")re", &out->uuid) ||
      !field(R"re("pci_bus_id"\s*:\s*"([^"]*)")re", &out->pci_bus_id) ||
      !field(R"re("total_memory"\s*:\s*([0-9]+))re", &total)) {
    *error = "a field is missing";
    return false;
  }
  out->total_memory = std::stoull(total);
  const std::regex attribute(R"re("(CU_DEVICE_ATTRIBUTE_[A-Z0-9_]+)"\s*:\s*(-?[0-9]+))re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), attribute);
       it != std::sregex_iterator(); ++it) {
    int key = AttributeFromCudaH((*it)[1].str());
    if (key < 0) {
      out->unknown_keys.push_back((*it)[1].str());
    } else {
      out->attributes[key] = std::stoi((*it)[2].str());
    }
  }
  return true;
}

std::string FormatUuid(const CUuuid& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
  }
  return out;
}

class DeviceTest : public BackendTest {
 protected:
  int DeviceCount() {
    int count = 0;
    EXPECT_EQ(api().cuDeviceGetCount(&count), CUDA_SUCCESS);
    return count;
  }
  int Attribute(CUdevice_attribute attribute, CUdevice device = 0) {
    int value = -12345;
    EXPECT_EQ(api().cuDeviceGetAttribute(&value, attribute, device), CUDA_SUCCESS)
        << fakecuda::AttributeName(attribute);
    return value;
  }
  // Whether the H200 constants above apply: always on the fake (its device 0 must be an H200),
  // on the real backend where device 0 is one (the GPU nightly's is).
  bool ExpectH200() {
    if (IsFake()) return true;
    char name[256] = {};
    EXPECT_EQ(api().cuDeviceGetName(name, sizeof(name), 0), CUDA_SUCCESS);
    return std::string(name) == kH200Name;
  }
};

TEST_P(DeviceTest, CountAndOrdinals) {
  int count = DeviceCount();
  ASSERT_GE(count, 1);
  if (IsFake()) {
    EXPECT_EQ(count, 1);
  }
  for (int i = 0; i < count; ++i) {
    CUdevice device = -1;
    ASSERT_EQ(api().cuDeviceGet(&device, i), CUDA_SUCCESS);
    EXPECT_EQ(device, i);  // on every driver so far a CUdevice is its ordinal
  }
  EXPECT_EQ(api().cuDeviceGetCount(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuDeviceGet(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(DeviceTest, InvalidOrdinalIsInvalidDevice) {
  int count = DeviceCount();
  CUdevice device = 0;
  EXPECT_EQ(api().cuDeviceGet(&device, count), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(api().cuDeviceGet(&device, -1), CUDA_ERROR_INVALID_DEVICE);
  char name[64];
  EXPECT_EQ(api().cuDeviceGetName(name, sizeof(name), count), CUDA_ERROR_INVALID_DEVICE);
  int value = 0;
  EXPECT_EQ(api().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, count),
            CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(api().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, -1),
            CUDA_ERROR_INVALID_DEVICE);
  size_t bytes = 0;
  EXPECT_EQ(api().cuDeviceTotalMem(&bytes, count), CUDA_ERROR_INVALID_DEVICE);
  CUuuid uuid;
  EXPECT_EQ(api().cuDeviceGetUuid(&uuid, count), CUDA_ERROR_INVALID_DEVICE);
  char bus[32];
  EXPECT_EQ(api().cuDeviceGetPCIBusId(bus, sizeof(bus), count), CUDA_ERROR_INVALID_DEVICE);
  CUcontext ctx = nullptr;
  EXPECT_EQ(api().cuDevicePrimaryCtxRetain(&ctx, count), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(CreateContext(api(), &ctx, 0, count), CUDA_ERROR_INVALID_DEVICE);
}

TEST_P(DeviceTest, Name) {
  char name[256];
  std::memset(name, 'x', sizeof(name));
  ASSERT_EQ(api().cuDeviceGetName(name, sizeof(name), 0), CUDA_SUCCESS);
  ASSERT_NE(std::memchr(name, '\0', sizeof(name)), nullptr) << "name is not terminated";
  std::string full(name);
  EXPECT_EQ(full.rfind("NVIDIA ", 0), 0u) << full;
  if (IsFake()) {
    EXPECT_EQ(full, kH200Name);
  }
  EXPECT_EQ(api().cuDeviceGetName(nullptr, 64, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(DeviceTest, NameIntoTooShortBufferIsTruncatedAndTerminated) {
  char full[256];
  ASSERT_EQ(api().cuDeviceGetName(full, sizeof(full), 0), CUDA_SUCCESS);
  ASSERT_GT(std::strlen(full), 5u);
  // A 6-byte buffer inside a larger one whose tail must stay untouched.
  char buffer[16];
  std::memset(buffer, 'x', sizeof(buffer));
  ASSERT_EQ(api().cuDeviceGetName(buffer, 6, 0), CUDA_SUCCESS);
  EXPECT_EQ(std::string(buffer, 5), std::string(full, 5));
  EXPECT_EQ(buffer[5], '\0');  // measured: "NVIDI\0", the rest untouched
  for (size_t i = 6; i < sizeof(buffer); ++i) {
    EXPECT_EQ(buffer[i], 'x') << "byte " << i << " past the given length was written";
  }
}

TEST_P(DeviceTest, NameWithNegativeLengthIsNotBounded) {
  // Measured on the H200 (driver 580): a negative length is not an error; the whole name is
  // written (the driver also zero-filled the rest of a 64-byte buffer), so the buffer here is
  // large.
  char full[256];
  ASSERT_EQ(api().cuDeviceGetName(full, sizeof(full), 0), CUDA_SUCCESS);
  std::vector<char> buffer(4096, 'x');
  EXPECT_EQ(api().cuDeviceGetName(buffer.data(), -1, 0), CUDA_SUCCESS);
  EXPECT_STREQ(buffer.data(), full);
}

TEST_P(DeviceTest, Uuid) {
  CUuuid a;
  CUuuid b;
  std::memset(&a, 0, sizeof(a));
  std::memset(&b, 0xFF, sizeof(b));
  ASSERT_EQ(api().cuDeviceGetUuid(&a, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuDeviceGetUuid(&b, 0), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(a.bytes, b.bytes, sizeof(a.bytes)), 0) << "UUID is not stable";
  bool all_zero =
      std::all_of(std::begin(a.bytes), std::end(a.bytes), [](char c) { return c == 0; });
  EXPECT_FALSE(all_zero);
  if (IsFake()) {
    // The fake's device 0 is the GPU the profile was captured from: the file's UUID, read and
    // formatted by this test.
    ProfileFile file;
    std::string error;
    ASSERT_TRUE(ReadProfileFile(&file, &error)) << error;
    EXPECT_EQ(FormatUuid(a), file.uuid);
  }
  EXPECT_EQ(api().cuDeviceGetUuid(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_P(DeviceTest, TotalMemory) {
  size_t total = 0;
  ASSERT_EQ(api().cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
  EXPECT_GE(total, size_t{1} << 30);
  if (ExpectH200()) {
    EXPECT_EQ(total, kH200TotalMemory);
  }
  EXPECT_EQ(api().cuDeviceTotalMem(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  // cuMemGetInfo's total is the same figure.
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  size_t free = 0;
  size_t info_total = 0;
  ASSERT_EQ(api().cuMemGetInfo(&free, &info_total), CUDA_SUCCESS);
  EXPECT_EQ(info_total, total);
  EXPECT_LE(free, info_total);
}

TEST_P(DeviceTest, Attributes) {
  int value = -1;
  ASSERT_EQ(api().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0), CUDA_SUCCESS);
  EXPECT_EQ(value, 32);
  ASSERT_EQ(api().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1024);
  ASSERT_EQ(api().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  ASSERT_EQ(api().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0),
            CUDA_SUCCESS);
  EXPECT_GE(value, 7);
  EXPECT_EQ(api().cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0),
            CUDA_ERROR_INVALID_VALUE);
}

TEST_P(DeviceTest, AttributesAreTheH200s) {
  if (!ExpectH200()) GTEST_SKIP() << "device 0 is not an " << kH200Name;
  for (const AttributeFact& fact : kH200Attributes) {
    EXPECT_EQ(Attribute(fact.attribute), fact.value) << fakecuda::AttributeName(fact.attribute);
  }
}

// Attributes that another entry point also answers agree with it (true of any GPU).
TEST_P(DeviceTest, AttributesAgreeWithOtherEntryPoints) {
  // The PCI location: cuDeviceGetPCIBusId's "domain:bus:device.function" and the three
  // attributes.
  char bus[64] = {};
  ASSERT_EQ(api().cuDeviceGetPCIBusId(bus, sizeof(bus), 0), CUDA_SUCCESS);
  unsigned domain = 0;
  unsigned bus_number = 0;
  unsigned device_number = 0;
  unsigned function = 0;
  ASSERT_EQ(std::sscanf(bus, "%x:%x:%x.%x", &domain, &bus_number, &device_number, &function), 4)
      << bus;
  EXPECT_EQ(Attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID), static_cast<int>(domain)) << bus;
  EXPECT_EQ(Attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), static_cast<int>(bus_number)) << bus;
  EXPECT_EQ(Attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID), static_cast<int>(device_number)) << bus;
  // The opt-in shared memory per block is the context's CU_LIMIT_SHMEM_SIZE (measured on the
  // H200: both 232448, ci/gpu-probes "limits" and "gaps").
  ScopedPrimaryContext ctx(api());
  ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
  size_t shmem = 0;
  ASSERT_EQ(api().cuCtxGetLimit(&shmem, CU_LIMIT_SHMEM_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(static_cast<size_t>(Attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)),
            shmem);
  // The stream priority range's greatest priority is -5 on the H200, and the attribute
  // STREAM_PRIORITIES_SUPPORTED says there is a range.
  int least = 1;
  int greatest = 1;
  ASSERT_EQ(api().cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_SUCCESS);
  EXPECT_EQ(Attribute(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED), least != greatest ? 1 : 0);
}

TEST_P(DeviceTest, InvalidAttributeIsInvalidValue) {
  int value = 12345;
  EXPECT_EQ(api().cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(0), 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(-1), 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(value, 12345) << "a failed call wrote its output";
}

// The device serves what fakecuda/profiles/h200.json records, as this test reads the file (see
// ReadProfileFile): on the real backend, where device 0 is the profile's model, that checks the
// capture against the GPU; on the fake, it checks the fake's parser, embedding and attribute
// lookup against the file. Attributes that differ between machines of one model (PCI location,
// NUMA placement) are compared on the fake only, whose device 0 is the captured machine.
TEST_P(DeviceTest, AttributesMatchTheProfileFile) {
  ProfileFile file;
  std::string error;
  ASSERT_TRUE(ReadProfileFile(&file, &error)) << error;
  EXPECT_TRUE(file.unknown_keys.empty()) << "not a cuda.h attribute: " << file.unknown_keys[0];
  ASSERT_GT(file.attributes.size(), 100u) << "the file was not read as a profile";
  char name[256];
  ASSERT_EQ(api().cuDeviceGetName(name, sizeof(name), 0), CUDA_SUCCESS);
  if (file.name != name) {
    ASSERT_FALSE(IsFake()) << "the fake's device 0 is a " << name << ", the file's a " << file.name;
    GTEST_SKIP() << "device 0 is a " << name << ", the profile file's is a " << file.name;
  }
  const int kMachineSpecific[] = {
      CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
      CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
      CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
      CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID,
      CU_DEVICE_ATTRIBUTE_NUMA_ID,
      CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID,
      CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD,
      CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID,
      CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID,
  };
  for (const auto& [attribute, expected] : file.attributes) {
    if (!IsFake() && std::find(std::begin(kMachineSpecific), std::end(kMachineSpecific),
                               attribute) != std::end(kMachineSpecific)) {
      continue;
    }
    EXPECT_EQ(Attribute(static_cast<CUdevice_attribute>(attribute)), expected)
        << fakecuda::AttributeName(attribute);
  }
  size_t total = 0;
  ASSERT_EQ(api().cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
  EXPECT_EQ(total, file.total_memory);
}

TEST_P(DeviceTest, PciBusIdRoundTrip) {
  int count = DeviceCount();
  for (int i = 0; i < count; ++i) {
    char bus[64];
    std::memset(bus, 0, sizeof(bus));
    ASSERT_EQ(api().cuDeviceGetPCIBusId(bus, sizeof(bus), i), CUDA_SUCCESS);
    // "domain:bus:device.function", e.g. "0000:18:00.0".
    std::string id(bus);
    ASSERT_EQ(id.size(), 12u) << id;
    EXPECT_EQ(id[4], ':');
    EXPECT_EQ(id[7], ':');
    EXPECT_EQ(id[10], '.');
    if (IsFake() && i == 0) {
      // The fake's device 0 is the captured machine's: "0000:00:06.0" (ci/gpu-probes "pcibus").
      EXPECT_EQ(id, "0000:00:06.0");
    }
    CUdevice device = -1;
    ASSERT_EQ(api().cuDeviceGetByPCIBusId(&device, bus), CUDA_SUCCESS) << id;
    EXPECT_EQ(device, i);
    // The bus id is case-insensitive hexadecimal.
    std::string lower = id;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
      return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    });
    device = -1;
    ASSERT_EQ(api().cuDeviceGetByPCIBusId(&device, lower.c_str()), CUDA_SUCCESS) << lower;
    EXPECT_EQ(device, i);
  }
}

TEST_P(DeviceTest, UnknownPciBusIdIsInvalidDevice) {
  CUdevice device = -1;
  EXPECT_EQ(api().cuDeviceGetByPCIBusId(&device, "00ff:fe:1f.7"), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(api().cuDeviceGetByPCIBusId(nullptr, "0000:18:00.0"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuDeviceGetByPCIBusId(&device, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuDeviceGetPCIBusId(nullptr, 16, 0), CUDA_ERROR_INVALID_VALUE);
}

CUHAL_INSTANTIATE_BACKEND_TEST(DeviceTest);

// Calls that crash the real driver (measured on the H200, driver 580: SIGSEGV), so they are asked
// of the fake only, which must answer instead of crashing (issue 3, "Must model" 2).
class DeviceCrashesRealTest : public BackendTest {};

TEST_P(DeviceCrashesRealTest, NameWithZeroLengthIsInvalidValue) {
  char buffer[8] = {'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x'};
  EXPECT_EQ(api().cuDeviceGetName(buffer, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(buffer[0], 'x');
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(DeviceCrashesRealTest);

// Several fake devices: each its own bus id, UUID and primary context (fake only: the real
// machine has the devices it has).
class MultiDeviceFakeTest : public BackendTest {
 protected:
  BackendOptions Options() const override {
    BackendOptions options;
    options.device_count = 8;
    return options;
  }
};

TEST_P(MultiDeviceFakeTest, EightDevicesAreDistinct) {
  int count = 0;
  ASSERT_EQ(api().cuDeviceGetCount(&count), CUDA_SUCCESS);
  ASSERT_EQ(count, 8);
  std::array<std::string, 8> buses;
  for (int i = 0; i < count; ++i) {
    char bus[64];
    ASSERT_EQ(api().cuDeviceGetPCIBusId(bus, sizeof(bus), i), CUDA_SUCCESS);
    buses[static_cast<size_t>(i)] = bus;
    CUdevice device = -1;
    ASSERT_EQ(api().cuDeviceGetByPCIBusId(&device, bus), CUDA_SUCCESS);
    EXPECT_EQ(device, i);
  }
  std::sort(buses.begin(), buses.end());
  EXPECT_EQ(std::unique(buses.begin(), buses.end()), buses.end());
  CUcontext c0 = nullptr;
  CUcontext c7 = nullptr;
  ASSERT_EQ(api().cuDevicePrimaryCtxRetain(&c0, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuDevicePrimaryCtxRetain(&c7, 7), CUDA_SUCCESS);
  EXPECT_NE(c0, c7);
  ASSERT_EQ(api().cuCtxPushCurrent(c7), CUDA_SUCCESS);
  CUdevice device = -1;
  EXPECT_EQ(api().cuCtxGetDevice(&device), CUDA_SUCCESS);
  EXPECT_EQ(device, 7);
  ASSERT_EQ(api().cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuDevicePrimaryCtxRelease(7), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(MultiDeviceFakeTest);

}  // namespace
}  // namespace cuhal::testing
