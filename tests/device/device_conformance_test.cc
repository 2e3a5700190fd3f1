// Copyright 2026 The cuhal Authors.
// Conformance of the device core (core/driver, core/device, core/memory) on every backend: the
// same bodies run against fakecuda ("fake", "fake_adversarial") and the installed CUDA driver
// ("real"). On the GPU machine both must pass; where they would disagree, the fake is wrong.
//
// Facts the pool tests rely on were measured on the H200 (driver 580.159.04, CUDA 13.0) and are
// listed in DESIGN.md ("Real-driver facts"): pools reserve in 32 MiB chunks; USED_MEM_CURRENT is
// the exact requested size; RELEASE_THRESHOLD UINT64_MAX keeps freed memory until a trim.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/memory/allocator.h"
#include "core/memory/cuda_allocator.h"
#include "tests/device/test_macros.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

using ::testing::HasSubstr;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kPoolChunk = 32 * kMiB;  // measured on the H200

std::vector<std::byte> Pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<std::byte>((i * 7 + seed) & 0xFF);
  }
  return bytes;
}

CUcontext CurrentContext(const CudaApi& api) {
  CUcontext current = nullptr;
  EXPECT_EQ(api.cuCtxGetCurrent(&current), CUDA_SUCCESS);
  return current;
}

class DeviceConformanceTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CUHAL_ASSERT_OK_AND_ASSIGN(driver_, Driver::Create(&api()));
  }
  void TearDown() override {
    driver_.reset();
    BackendTest::TearDown();
  }

  StatusOr<std::unique_ptr<Device>> NewDevice(const DeviceParams& params = {}) {
    return Device::Create(*driver_, 0, params);
  }

  std::unique_ptr<Driver> driver_;
};

// --- driver -------------------------------------------------------------------------------

TEST_P(DeviceConformanceTest, DriverDescribesEveryDevice) {
  ASSERT_GE(driver_->device_count(), 1);
  EXPECT_GE(driver_->driver_version(), kCudaApiVersion);
  EXPECT_EQ(driver_->identifier(), "cuda");
  CUHAL_ASSERT_OK_AND_ASSIGN(std::vector<DeviceInfo> devices, driver_->EnumerateDevices());
  ASSERT_EQ(static_cast<int>(devices.size()), driver_->device_count());
  for (int i = 0; i < driver_->device_count(); ++i) {
    const DeviceInfo& d = devices[static_cast<std::size_t>(i)];
    SCOPED_TRACE(d.name);
    EXPECT_EQ(d.ordinal, i);
    EXPECT_FALSE(d.name.empty());
    EXPECT_EQ(d.uuid.size(), 40u);
    EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u) << d.uuid;
    CUHAL_ASSERT_OK_AND_ASSIGN(std::string canonical, CanonicalDeviceUuid(d.uuid));
    EXPECT_EQ(canonical, d.uuid);
    EXPECT_FALSE(d.pci_bus_id.empty());
    EXPECT_GT(d.total_memory, 0u);
    EXPECT_GE(d.compute_capability_major, 6);
    EXPECT_GT(d.multiprocessor_count, 0);
    std::cout << "device " << i << ": " << d.name << ", sm_" << d.compute_capability_major
              << d.compute_capability_minor << ", " << d.multiprocessor_count << " SMs, "
              << d.total_memory << " bytes, pools " << d.memory_pools_supported << ", managed "
              << d.managed_memory_supported << ", host register " << d.host_register_supported
              << ", " << d.uuid << " [" << d.pci_bus_id << "]\n";
  }
  if (IsFake()) {
    const DeviceInfo& d = devices[0];
    EXPECT_EQ(d.name, "NVIDIA H200");
    EXPECT_EQ(d.compute_capability_major, 9);
    EXPECT_EQ(d.compute_capability_minor, 0);
    EXPECT_EQ(d.multiprocessor_count, 132);
    EXPECT_TRUE(d.memory_pools_supported);
    EXPECT_TRUE(d.managed_memory_supported);
  }
}

TEST_P(DeviceConformanceTest, HostRegistrationIsSupported) {
  // Every x86-64 Linux driver supports cuMemHostRegister; the H200 reports
  // CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 1. (Imported-host buffers depend on it.)
  CUHAL_ASSERT_OK_AND_ASSIGN(DeviceInfo info, driver_->QueryDevice(0));
  EXPECT_TRUE(info.host_register_supported);
}

TEST_P(DeviceConformanceTest, FindsDevicesByUuid) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::vector<DeviceInfo> devices, driver_->EnumerateDevices());
  for (const DeviceInfo& d : devices) {
    CUHAL_ASSERT_OK_AND_ASSIGN(DeviceInfo found, driver_->FindDeviceByUuid(d.uuid));
    EXPECT_EQ(found.ordinal, d.ordinal);
    std::string upper = d.uuid;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    CUHAL_ASSERT_OK_AND_ASSIGN(found, driver_->FindDeviceByUuid(upper));
    EXPECT_EQ(found.ordinal, d.ordinal);
  }
  const std::string absent = "GPU-ffffffff-eeee-dddd-cccc-bbbbbbbbbbbb";
  StatusOr<DeviceInfo> missing = driver_->FindDeviceByUuid(absent);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(absent));
  EXPECT_THAT(missing.status().message(), HasSubstr(devices[0].uuid));
  for (const char* bad : {"GPU-123", "", "MIG-ffffffff-eeee-dddd-cccc-bbbbbbbbbbbb",
                          "GPU-ffffffff-eeee-dddd-cccc-bbbbbbbbbbbx",
                          "GPU-ffffffffeeee-dddd-cccc-bbbbbbbbbbbbb"}) {
    StatusOr<DeviceInfo> invalid = driver_->FindDeviceByUuid(bad);
    EXPECT_EQ(invalid.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_P(DeviceConformanceTest, QueryDeviceRejectsBadOrdinals) {
  StatusOr<DeviceInfo> past = driver_->QueryDevice(driver_->device_count());
  EXPECT_EQ(past.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(past.status().message(), HasSubstr("ordinal"));
  EXPECT_EQ(driver_->QueryDevice(-1).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(DeviceConformanceTest, WithoutNcclChannelCreationSaysWhatItNeeds) {
  EXPECT_EQ(driver_->nccl(), nullptr);
  Status status = driver_->RequireNccl();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("libnccl.so.2"));
  EXPECT_THAT(status.message(), HasSubstr("major version"));
}

TEST_P(DeviceConformanceTest, DriverRejectsMissingTables) {
  EXPECT_EQ(Driver::Create(nullptr).status().code(), StatusCode::kInvalidArgument);
  CudaApi incomplete = api();
  incomplete.cuMemAlloc = nullptr;
  StatusOr<std::unique_ptr<Driver>> driver = Driver::Create(&incomplete);
  EXPECT_EQ(driver.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(driver.status().message(), HasSubstr("cuMemAlloc"));
}

// --- device -------------------------------------------------------------------------------

TEST_P(DeviceConformanceTest, CreatesAndDestroysADevice) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  EXPECT_EQ(device->identifier(), "cuda:0");
  EXPECT_EQ(device->ordinal(), 0);
  EXPECT_EQ(device->queue_count(), 1);
  EXPECT_NE(device->context(), nullptr);
  EXPECT_EQ(device->cuda_api(), &api());
  EXPECT_EQ(device->nccl_api(), nullptr);
  EXPECT_EQ(device->pools() != nullptr, device->info().memory_pools_supported);
  // The caller had no current context, and still has none.
  EXPECT_EQ(CurrentContext(api()), nullptr);
  unsigned flags = 0;
  ASSERT_EQ(api().cuStreamGetFlags(device->queue(0).stream(), &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  // The device's context is the device's primary context.
  CUcontext primary = nullptr;
  ASSERT_EQ(api().cuDevicePrimaryCtxRetain(&primary, device->info().device), CUDA_SUCCESS);
  EXPECT_EQ(primary, device->context());
  ASSERT_EQ(api().cuDevicePrimaryCtxRelease(device->info().device), CUDA_SUCCESS);
  device.reset();
  EXPECT_EQ(CurrentContext(api()), nullptr);
}

TEST_P(DeviceConformanceTest, KeepsTheCallersCurrentContext) {
  CUcontext mine = nullptr;
  ASSERT_EQ(api().cuCtxCreate(&mine, nullptr, 0, 0), CUDA_SUCCESS);  // pushes it
  {
    CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
    EXPECT_EQ(CurrentContext(api()), mine);
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device->allocator().Allocate({}, 4096));
    EXPECT_EQ(CurrentContext(api()), mine);
    const std::uint32_t zero = 0;
    CUHAL_EXPECT_OK(device->queue(0).Fill(buffer, 0, 4096, &zero, 4));
    CUHAL_EXPECT_OK(device->Synchronize());
    CUHAL_EXPECT_OK(device->Trim());
    EXPECT_EQ(CurrentContext(api()), mine);
    CUHAL_EXPECT_OK(buffer.Reset());
    EXPECT_EQ(CurrentContext(api()), mine);
  }
  EXPECT_EQ(CurrentContext(api()), mine);
  EXPECT_EQ(api().cuCtxDestroy(mine), CUDA_SUCCESS);  // pops it
}

TEST_P(DeviceConformanceTest, CreatesOneNonBlockingStreamPerQueue) {
  DeviceParams params;
  params.queue_count = 3;
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice(params));
  ASSERT_EQ(device->queue_count(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(device->queue(i).index(), i);
    for (int j = 0; j < i; ++j) EXPECT_NE(device->queue(i).stream(), device->queue(j).stream());
    unsigned flags = 0;
    ASSERT_EQ(api().cuStreamGetFlags(device->queue(i).stream(), &flags), CUDA_SUCCESS);
    EXPECT_EQ(flags, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
    CUHAL_EXPECT_OK(device->queue(i).Synchronize());
    CUHAL_ASSERT_OK_AND_ASSIGN(bool idle, device->queue(i).IsIdle());
    EXPECT_TRUE(idle);
  }
  CUHAL_EXPECT_OK(device->Synchronize());
}

TEST_P(DeviceConformanceTest, AnOutOfRangeQueueIsAProgrammingError) {
  if (!IsFake()) GTEST_SKIP() << "death tests fork; not with a real driver initialized";
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  EXPECT_DEATH((void)device->queue(1), "has 1 queue\\(s\\); queue\\(1\\) does not exist");
  EXPECT_DEATH((void)device->queue(-1), "queue\\(-1\\) does not exist");
}

TEST_P(DeviceConformanceTest, CreatesByUuidWithACustomIdentifier) {
  CUHAL_ASSERT_OK_AND_ASSIGN(DeviceInfo info, driver_->QueryDevice(0));
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device,
                             Device::CreateByUuid(*driver_, info.uuid, {}, "gpu-a"));
  EXPECT_EQ(device->ordinal(), 0);
  EXPECT_EQ(device->identifier(), "gpu-a");
  EXPECT_EQ(device->info().uuid, info.uuid);
  EXPECT_EQ(Device::CreateByUuid(*driver_, "GPU-00000000-1111-2222-3333-444444444444")
                .status()
                .code(),
            StatusCode::kNotFound);
}

TEST_P(DeviceConformanceTest, RejectsAnUnknownOrdinal) {
  StatusOr<std::unique_ptr<Device>> device = Device::Create(*driver_, driver_->device_count());
  EXPECT_EQ(device.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(device.status().message(),
              HasSubstr(StrCat("creating device ", driver_->device_count())));
}

struct BadParams {
  const char* field;
  const char* value;
  std::function<void(DeviceParams&)> apply;
};

TEST_P(DeviceConformanceTest, RejectsBadParamsNamingFieldAndValue) {
  const std::vector<BadParams> cases = {
      {"queue_count", "0", [](DeviceParams& p) { p.queue_count = 0; }},
      {"queue_count", "-3", [](DeviceParams& p) { p.queue_count = -3; }},
      {"queue_count", "65", [](DeviceParams& p) { p.queue_count = 65; }},
      {"event_pool_capacity", "1048577",
       [](DeviceParams& p) { p.event_pool_capacity = (std::size_t{1} << 20) + 1; }},
      {"device_local_pool.minimum_capacity", "2048",
       [](DeviceParams& p) {
         p.device_local_pool.release_threshold = 1024;
         p.device_local_pool.minimum_capacity = 2048;
       }},
      {"other_pool.minimum_capacity", "1",
       [](DeviceParams& p) { p.other_pool.minimum_capacity = 1; }},  // threshold 0
      {"completion_poll_interval", "-1 us",
       [](DeviceParams& p) { p.completion_poll_interval = std::chrono::microseconds(-1); }},
      {"completion_poll_interval", "1000001 us",
       [](DeviceParams& p) { p.completion_poll_interval = std::chrono::microseconds(1000001); }},
  };
  for (const BadParams& c : cases) {
    SCOPED_TRACE(c.field);
    DeviceParams params;
    c.apply(params);
    const std::uint64_t calls_before = IsFake() ? fake().faults().calls() : 0;
    StatusOr<std::unique_ptr<Device>> device = NewDevice(params);
    EXPECT_EQ(device.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(device.status().message(), HasSubstr(c.field));
    EXPECT_THAT(device.status().message(), HasSubstr(StrCat("got ", c.value)));
    EXPECT_THAT(device.status().message(), HasSubstr("creating device 0"));
    if (IsFake()) {
      EXPECT_EQ(fake().faults().calls(), calls_before) << "no driver call expected";
    }
  }
  // The boundary values are fine.
  DeviceParams edge;
  edge.queue_count = 64;
  edge.event_pool_capacity = 0;
  edge.completion_poll_interval = std::chrono::seconds(1);
  CUHAL_EXPECT_OK(edge.Validate());
}

TEST_P(DeviceConformanceTest, AnswersConfigurationQueries) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  const DeviceInfo& info = device->info();
  auto query = [&](const char* category, const char* key) -> std::int64_t {
    StatusOr<std::int64_t> value = device->QueryI64(category, key);
    EXPECT_TRUE(value.ok()) << category << " :: " << key << ": " << value.status();
    return value.ok() ? *value : -1;
  };
  EXPECT_EQ(query("hal.executable.format", "cuda-nvptx-fb"), 1);
  EXPECT_EQ(query("hal.executable.format", "vulkan-spirv-fb"), 0);
  EXPECT_EQ(query("cuda.device", "compute_capability_major"), info.compute_capability_major);
  EXPECT_EQ(query("cuda.device", "compute_capability_minor"), info.compute_capability_minor);
  EXPECT_EQ(query("cuda.device", "multiprocessor_count"), info.multiprocessor_count);
  EXPECT_EQ(query("cuda.device", "total_memory"), static_cast<std::int64_t>(info.total_memory));
  EXPECT_EQ(query("cuda.device", "memory_pools_supported"), info.memory_pools_supported ? 1 : 0);
  EXPECT_EQ(query("cuda.device", "async_allocations"), device->pools() != nullptr ? 1 : 0);
  EXPECT_EQ(query("cuda.device", "queue_count"), 1);
  if (IsFake()) {
    EXPECT_EQ(query("cuda.device", "compute_capability_major"), 9);
  }

  for (auto [category, key] : {std::pair{"cuda.device", "warp_size"},
                               std::pair{"hal.device", "compute_capability_major"},
                               std::pair{"", ""}}) {
    StatusOr<std::int64_t> unknown = device->QueryI64(category, key);
    EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
    EXPECT_THAT(unknown.status().message(), HasSubstr(StrCat("'", category, "'")));
    EXPECT_THAT(unknown.status().message(), HasSubstr(StrCat("'", key, "'")));
  }
}

TEST_P(DeviceConformanceTest, AsyncAllocationsOffMeansNoPools) {
  DeviceParams params;
  params.async_allocations = false;
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice(params));
  EXPECT_EQ(device->pools(), nullptr);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::int64_t async, device->QueryI64("cuda.device",
                                                                  "async_allocations"));
  EXPECT_EQ(async, 0);
  EXPECT_EQ(device->QueryPoolStatistics().status().code(), StatusCode::kFailedPrecondition);
  BufferParams pooled;
  pooled.pool = MemoryPoolKind::kDeviceLocal;
  EXPECT_FALSE(device->allocator().QueryCompatibility(pooled, 4096).allocatable);
  StatusOr<Buffer> buffer = device->allocator().Allocate(pooled, 4096);
  EXPECT_EQ(buffer.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(buffer.status().message(), HasSubstr("no memory pools"));
  CUHAL_EXPECT_OK(device->Trim());  // nothing to trim, still fine
}

// What the hooks do today (core/device/device.cc): each Device keeps one capture flag under a
// mutex; Begin refuses while a capture is active, naming the device and the refused capture,
// and leaves the active capture alone; End refuses when none is; neither calls the driver. The
// test observes those effects through the other hook's answers, a second device and the fake's
// call counter, not through the flag it has just set.
TEST_P(DeviceConformanceTest, ProfilingHooksValidateNesting) {
  CUHAL_ASSERT_OK_AND_ASSIGN(DeviceInfo info, driver_->QueryDevice(0));
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> a,
                             Device::CreateByUuid(*driver_, info.uuid, {}, "gpu-a"));
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> b,
                             Device::CreateByUuid(*driver_, info.uuid, {}, "gpu-b"));
  Status end_before = a->EndProfiling();
  EXPECT_EQ(end_before.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(end_before.message(), HasSubstr("device gpu-a: cannot end profiling"));

  const std::uint64_t calls_before = IsFake() ? fake().faults().calls() : 0;
  CUHAL_ASSERT_OK(a->BeginProfiling({.capture_name = "first"}));
  // A nested Begin is refused, names this device and the refused capture, and leaves the first
  // capture active: End succeeds exactly once after it.
  Status nested = a->BeginProfiling({.capture_name = "second"});
  EXPECT_EQ(nested.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(nested.message(), HasSubstr("device gpu-a: cannot begin profiling 'second'"));
  EXPECT_THAT(nested.message(), HasSubstr("already active"));
  // The capture is the device's: the other device of the same GPU begins and ends its own.
  CUHAL_EXPECT_OK(b->BeginProfiling({.capture_name = "other"}));
  CUHAL_EXPECT_OK(b->EndProfiling());
  EXPECT_FALSE(b->profiling());
  EXPECT_TRUE(a->profiling()) << "ending gpu-b's capture ended gpu-a's";
  CUHAL_EXPECT_OK(a->EndProfiling());
  Status end_after = a->EndProfiling();
  EXPECT_EQ(end_after.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(end_after.message(), HasSubstr("no capture is active"));
  if (IsFake()) {
    EXPECT_EQ(fake().faults().calls(), calls_before) << "the hooks called the driver";
  }
  // After End a new capture may begin (the refusal did not leave the device wedged).
  CUHAL_EXPECT_OK(a->BeginProfiling({.capture_name = "third"}));
  CUHAL_EXPECT_OK(a->EndProfiling());
}

// Begin from many threads at once: exactly one wins (the check and the set are one step).
TEST_P(DeviceConformanceTest, ProfilingBeginIsExclusiveAcrossThreads) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> started{0};
    std::atomic<int> won{0};
    std::atomic<int> refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        started.fetch_add(1);
        while (started.load() < kThreads) std::this_thread::yield();
        Status status = device->BeginProfiling({.capture_name = "race"});
        (status.ok() ? won : refused).fetch_add(1);
      });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_EQ(won.load(), 1) << "round " << round;
    ASSERT_EQ(refused.load(), kThreads - 1) << "round " << round;
    CUHAL_ASSERT_OK(device->EndProfiling());
  }
}

// --- buffers -------------------------------------------------------------------------------

struct HeapCase {
  const char* name;
  BufferParams params;
  bool needs_pools;
};

std::vector<HeapCase> AllocatableHeaps() {
  return {
      {"device-local", {.heap = MemoryHeap::kDeviceLocal, .pool = std::nullopt}, false},
      {"device-local pool",
       {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal}, true},
      {"other pool", {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kOther}, true},
      {"host-pinned", {.heap = MemoryHeap::kHostPinned, .pool = std::nullopt}, false},
      {"managed", {.heap = MemoryHeap::kManaged, .pool = std::nullopt}, false},
  };
}

// Writes, fills, copies and reads `buffer` through queue 0 and, when it is host-visible, through
// a mapping; checks every byte.
void RoundTrip(Device& device, Buffer& buffer) {
  const std::size_t size = buffer.size();
  ASSERT_GE(size, 3 * 4096u);
  Queue& queue = device.queue(0);
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer staging, device.allocator().Allocate({}, size));

  std::vector<std::byte> expected = Pattern(size, 3);
  CUHAL_ASSERT_OK(queue.Write(expected, buffer, 0));
  const std::uint32_t word = 0xA5C3A5C3u;
  CUHAL_ASSERT_OK(queue.Fill(buffer, 4096, 4096, &word, sizeof(word)));
  for (std::size_t i = 4096; i < 8192; i += 4) std::memcpy(&expected[i], &word, 4);
  CUHAL_ASSERT_OK(queue.Copy(buffer, 0, staging, 0, size));
  std::vector<std::byte> out(size);
  CUHAL_ASSERT_OK(queue.Read(staging, 0, out));
  CUHAL_ASSERT_OK(queue.Synchronize());
  EXPECT_TRUE(out == expected) << "the bytes read back differ";

  if (!buffer.host_visible()) return;
  CUHAL_ASSERT_OK_AND_ASSIGN(std::span<std::byte> mapped, buffer.Map());
  EXPECT_EQ(buffer.map_count(), 1);
  ASSERT_EQ(mapped.size(), size);
  EXPECT_TRUE(std::equal(mapped.begin(), mapped.end(), expected.begin()))
      << "the mapping does not show what the device wrote";
  std::fill(mapped.begin(), mapped.begin() + 16, std::byte{0x11});
  CUHAL_ASSERT_OK(buffer.Unmap());
  std::vector<std::byte> head(16);
  CUHAL_ASSERT_OK(queue.Read(buffer, 0, head));
  CUHAL_ASSERT_OK(queue.Synchronize());
  EXPECT_TRUE(std::all_of(head.begin(), head.end(), [](std::byte b) { return b == std::byte{0x11}; }))
      << "the device does not see what the host wrote through the mapping";
  CUHAL_EXPECT_OK(staging.Reset());
}

TEST_P(DeviceConformanceTest, AllocatesMapsFillsCopiesAndFreesOnEveryHeap) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  constexpr std::size_t kSize = 64 * 1024;
  for (const HeapCase& c : AllocatableHeaps()) {
    SCOPED_TRACE(c.name);
    if (c.needs_pools && device->pools() == nullptr) continue;
    if (c.params.heap == MemoryHeap::kManaged && !device->info().managed_memory_supported) {
      continue;
    }
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device->allocator().Allocate(c.params, kSize));
    EXPECT_TRUE(buffer);
    EXPECT_EQ(buffer.heap(), c.params.heap);
    EXPECT_EQ(buffer.pool(), c.params.pool);
    EXPECT_EQ(buffer.size(), kSize);
    EXPECT_NE(buffer.device_ptr(), CUdeviceptr{0});
    EXPECT_EQ(buffer.host_visible(), IsHostVisible(c.params.heap));
    EXPECT_EQ(buffer.allocator(), &device->allocator());
    RoundTrip(*device, buffer);
    CUHAL_EXPECT_OK(buffer.Reset());
    EXPECT_FALSE(buffer);
    CUHAL_EXPECT_OK(buffer.Reset());  // resetting an empty buffer is fine
  }
  EXPECT_EQ(device->allocator().live_buffers(), 0u);
}

TEST_P(DeviceConformanceTest, ImportsHostMemory) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  constexpr std::size_t kSize = 64 * 1024;
  std::vector<std::byte> host(kSize, std::byte{0});
  BufferParams params{.heap = MemoryHeap::kImportedHost, .pool = std::nullopt};
  BufferCompatibility compatibility = device->allocator().QueryCompatibility(params, kSize);
  EXPECT_TRUE(compatibility.importable) << compatibility.refusal;
  EXPECT_FALSE(compatibility.allocatable);
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer,
                             device->allocator().Import(params, host.data(), host.size()));
  EXPECT_EQ(buffer.heap(), MemoryHeap::kImportedHost);
  EXPECT_TRUE(buffer.host_visible());
  RoundTrip(*device, buffer);
  // The host memory is the buffer's memory.
  EXPECT_EQ(host[0], std::byte{0x11});
  EXPECT_EQ(host[5000], std::byte{0xC3});
  CUHAL_EXPECT_OK(buffer.Reset());
  host[0] = std::byte{0x22};  // still the caller's, still usable
  EXPECT_EQ(host[0], std::byte{0x22});
}

TEST_P(DeviceConformanceTest, FillsWithEveryPatternLength) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device->allocator().Allocate({}, 64));
  Queue& queue = device->queue(0);
  const std::uint8_t b = 0x7E;
  const std::uint16_t h = 0xBEEF;
  const std::uint32_t w = 0x01020304;
  CUHAL_ASSERT_OK(queue.Fill(buffer, 0, 16, &b, 1));
  CUHAL_ASSERT_OK(queue.Fill(buffer, 16, 16, &h, 2));
  CUHAL_ASSERT_OK(queue.Fill(buffer, 32, 32, &w, 4));
  std::vector<std::byte> out(64);
  CUHAL_ASSERT_OK(queue.Read(buffer, 0, out));
  CUHAL_ASSERT_OK(queue.Synchronize());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], std::byte{0x7E}) << i;
  for (int i = 16; i < 32; i += 2) {
    std::uint16_t v = 0;
    std::memcpy(&v, &out[static_cast<std::size_t>(i)], 2);
    EXPECT_EQ(v, h) << i;
  }
  for (int i = 32; i < 64; i += 4) {
    std::uint32_t v = 0;
    std::memcpy(&v, &out[static_cast<std::size_t>(i)], 4);
    EXPECT_EQ(v, w) << i;
  }
}

TEST_P(DeviceConformanceTest, QueueOperationsCheckTheirArguments) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a, device->allocator().Allocate({}, 4096));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, device->allocator().Allocate({}, 1024));
  Queue& queue = device->queue(0);
  const std::uint32_t word = 0;
  EXPECT_EQ(queue.Fill(a, 0, 16, &word, 3).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(queue.Fill(a, 0, 16, &word, 8).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(queue.Fill(a, 0, 16, nullptr, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(queue.Fill(a, 2, 16, &word, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(queue.Fill(a, 0, 6, &word, 4).code(), StatusCode::kInvalidArgument);
  Status past = queue.Fill(a, 4092, 8, &word, 4);
  EXPECT_EQ(past.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(past.message(), HasSubstr("4096-byte buffer"));
  EXPECT_EQ(queue.Copy(a, 0, b, 512, 1024).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(queue.Copy(b, 1000, a, 0, 100).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(queue.Copy(a, 0, a, 100, 200).code(), StatusCode::kInvalidArgument);  // overlap
  CUHAL_EXPECT_OK(queue.Copy(a, 0, a, 200, 200));                                // adjacent
  std::vector<std::byte> host(2048);
  EXPECT_EQ(queue.Write(host, b, 0).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(queue.Read(b, 1, std::span(host).first(1024)).code(), StatusCode::kOutOfRange);
  Buffer empty;
  EXPECT_EQ(queue.Fill(empty, 0, 0, &word, 4).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue.Read(empty, 0, std::span(host).first(0)).code(),
            StatusCode::kFailedPrecondition);
  // Zero-length operations on real buffers are no-ops.
  CUHAL_EXPECT_OK(queue.Fill(a, 4096, 0, &word, 4));
  CUHAL_EXPECT_OK(queue.Copy(a, 0, b, 1024, 0));
  CUHAL_EXPECT_OK(queue.Write(std::span(host).first(0), b, 1024));
  CUHAL_EXPECT_OK(queue.Synchronize());
}

TEST_P(DeviceConformanceTest, MapFollowsTheLifetimeRules) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer device_local, device->allocator().Allocate({}, 4096));
  Status not_visible = device_local.Map().status();
  EXPECT_EQ(not_visible.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(not_visible.message(), HasSubstr("not host-visible"));
  EXPECT_EQ(device_local.Unmap().code(), StatusCode::kFailedPrecondition);

  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer pinned,
      device->allocator().Allocate({.heap = MemoryHeap::kHostPinned, .pool = std::nullopt}, 4096));
  EXPECT_EQ(pinned.Map(4000, 200).status().code(), StatusCode::kOutOfRange);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::span<std::byte> outer, pinned.Map(0, 4096));
  CUHAL_ASSERT_OK_AND_ASSIGN(std::span<std::byte> inner, pinned.Map(100, 10));
  EXPECT_EQ(pinned.map_count(), 2);
  EXPECT_EQ(inner.data(), outer.data() + 100);
  outer[100] = std::byte{0x42};
  // Moving the buffer keeps the mappings (they point at the memory, not the object).
  Buffer moved = std::move(pinned);
  EXPECT_FALSE(pinned);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(pinned.map_count(), 0);
  EXPECT_EQ(moved.map_count(), 2);
  EXPECT_EQ(inner[0], std::byte{0x42});
  CUHAL_EXPECT_OK(moved.Unmap());
  CUHAL_EXPECT_OK(moved.Unmap());
  EXPECT_EQ(moved.Unmap().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(device->allocator().live_buffers(), 2u);
  moved = Buffer();  // move-assigning frees what it held
  EXPECT_EQ(device->allocator().live_buffers(), 1u);
}

TEST_P(DeviceConformanceTest, AnswersCompatibilityQueries) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  Allocator& allocator = device->allocator();
  BufferCompatibility local = allocator.QueryCompatibility({}, 4096);
  EXPECT_TRUE(local.allocatable);
  EXPECT_FALSE(local.importable);
  EXPECT_FALSE(local.host_visible);
  EXPECT_TRUE(local.device_visible);
  BufferCompatibility pinned =
      allocator.QueryCompatibility({.heap = MemoryHeap::kHostPinned, .pool = std::nullopt}, 4096);
  EXPECT_TRUE(pinned.allocatable);
  EXPECT_TRUE(pinned.host_visible);
  EXPECT_TRUE(pinned.device_visible);
  BufferCompatibility managed =
      allocator.QueryCompatibility({.heap = MemoryHeap::kManaged, .pool = std::nullopt}, 4096);
  EXPECT_EQ(managed.allocatable, device->info().managed_memory_supported);
  EXPECT_TRUE(managed.host_visible);

  BufferCompatibility zero = allocator.QueryCompatibility({}, 0);
  EXPECT_FALSE(zero.allocatable);
  EXPECT_EQ(zero.refusal_code, StatusCode::kInvalidArgument);
  BufferCompatibility pool_on_host = allocator.QueryCompatibility(
      {.heap = MemoryHeap::kHostPinned, .pool = MemoryPoolKind::kOther}, 4096);
  EXPECT_FALSE(pool_on_host.allocatable);
  EXPECT_THAT(pool_on_host.refusal, HasSubstr("device-local heap"));
  BufferCompatibility too_big = allocator.QueryCompatibility({}, device->info().total_memory + 1);
  EXPECT_FALSE(too_big.allocatable);
  EXPECT_EQ(too_big.refusal_code, StatusCode::kResourceExhausted);
}

TEST_P(DeviceConformanceTest, RefusesImpossibleAllocations) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  Allocator& allocator = device->allocator();
  StatusOr<Buffer> zero = allocator.Allocate({}, 0);
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.status().message(), HasSubstr("allocating 0 bytes of device-local memory"));
  EXPECT_EQ(allocator.Allocate({.heap = MemoryHeap::kImportedHost, .pool = std::nullopt}, 64)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.Allocate({}, device->info().total_memory + 1).status().code(),
            StatusCode::kResourceExhausted);
  std::vector<std::byte> host(64);
  EXPECT_EQ(allocator.Import({}, host.data(), host.size()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.Import({.heap = MemoryHeap::kImportedHost, .pool = std::nullopt}, nullptr, 64)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.live_buffers(), 0u);
}

TEST_P(DeviceConformanceTest, CountsAllocationsPerHeap) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  Allocator& allocator = device->allocator();
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer a, allocator.Allocate({}, 4096));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer b, allocator.Allocate({}, 1000));
  CUHAL_ASSERT_OK_AND_ASSIGN(
      Buffer c,
      allocator.Allocate({.heap = MemoryHeap::kHostPinned, .pool = std::nullopt}, 8192));
  AllocatorStatistics stats = allocator.Statistics();
  const HeapStatistics& local = stats.heap(MemoryHeap::kDeviceLocal);
  EXPECT_EQ(local.bytes_current, 5096u);
  EXPECT_EQ(local.bytes_peak, 5096u);
  EXPECT_EQ(local.buffers_current, 2u);
  EXPECT_EQ(local.allocations_total, 2u);
  EXPECT_EQ(stats.heap(MemoryHeap::kHostPinned).bytes_current, 8192u);
  EXPECT_EQ(stats.buffers_current(), 3u);
  EXPECT_EQ(stats.bytes_current(), 5096u + 8192u);
  CUHAL_EXPECT_OK(a.Reset());
  stats = allocator.Statistics();
  EXPECT_EQ(stats.heap(MemoryHeap::kDeviceLocal).bytes_current, 1000u);
  EXPECT_EQ(stats.heap(MemoryHeap::kDeviceLocal).bytes_peak, 5096u);
  EXPECT_EQ(stats.heap(MemoryHeap::kDeviceLocal).frees_total, 1u);
  EXPECT_EQ(allocator.live_buffers(), 2u);
}

// An allocator that counts what it makes and delegates to a CudaAllocator: shows that the
// device's allocator is replaceable by anything implementing the interface.
class CountingAllocator final : public Allocator {
 public:
  explicit CountingAllocator(std::unique_ptr<Allocator> inner) : inner_(std::move(inner)) {}
  int allocations() const { return allocations_; }
  int releases() const { return releases_; }

 private:
  BufferCompatibility DoQueryCompatibility(const BufferParams& params,
                                           std::size_t size) const override {
    return inner_->QueryCompatibility(params, size);
  }
  StatusOr<Allocation> DoAllocate(const BufferParams& params, std::size_t size) override {
    CUHAL_ASSIGN_OR_RETURN(Buffer buffer, inner_->Allocate(params, size));
    ++allocations_;
    return Keep(std::move(buffer));
  }
  StatusOr<Allocation> DoImport(const BufferParams& params, void* host,
                                std::size_t size) override {
    CUHAL_ASSIGN_OR_RETURN(Buffer buffer, inner_->Import(params, host, size));
    return Keep(std::move(buffer));
  }
  Status DoRelease(const Allocation& allocation) noexcept override {
    ++releases_;
    auto it = held_.find(allocation.device_ptr);
    if (it == held_.end()) return InternalError("releasing an allocation this allocator lacks");
    Status status = it->second.Reset();
    held_.erase(it);
    return status;
  }
  Allocation Keep(Buffer buffer) {
    Allocation allocation = buffer.allocation();
    held_.emplace(allocation.device_ptr, std::move(buffer));
    return allocation;
  }

  std::unique_ptr<Allocator> inner_;
  std::map<CUdeviceptr, Buffer> held_;  // test-only: single-threaded use
  int allocations_ = 0;
  int releases_ = 0;
};

TEST_P(DeviceConformanceTest, ReplacesTheAllocator) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  CUHAL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CudaAllocator> inner,
      CudaAllocator::Create(&api(), device->context(), device->info(), nullptr));
  auto counting = std::make_unique<CountingAllocator>(std::move(inner));

  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer live, device->allocator().Allocate({}, 4096));
  Status busy = device->ReplaceAllocator(std::move(counting));
  EXPECT_EQ(busy.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(busy.message(), HasSubstr("1 live buffer"));
  CUHAL_ASSERT_OK(live.Reset());
  EXPECT_EQ(device->ReplaceAllocator(nullptr).code(), StatusCode::kInvalidArgument);

  // The refused allocator went into the call by value and was destroyed there: make another.
  CUHAL_ASSERT_OK_AND_ASSIGN(
      inner, CudaAllocator::Create(&api(), device->context(), device->info(), nullptr));
  counting = std::make_unique<CountingAllocator>(std::move(inner));
  CountingAllocator* raw = counting.get();
  CUHAL_ASSERT_OK(device->ReplaceAllocator(std::move(counting)));
  EXPECT_EQ(&device->allocator(), raw);
  {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device->allocator().Allocate({}, 64 * 1024));
    EXPECT_EQ(raw->allocations(), 1);
    EXPECT_EQ(buffer.allocator(), raw);
    RoundTrip(*device, buffer);
    EXPECT_EQ(raw->allocations(), 2);  // RoundTrip's staging buffer
  }
  EXPECT_EQ(raw->releases(), 2);
  EXPECT_EQ(raw->live_buffers(), 0u);
}

// --- memory pools ---------------------------------------------------------------------------

TEST_P(DeviceConformanceTest, PoolsReportReservedAndUsedMemoryAndTrim) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  if (device->pools() == nullptr) GTEST_SKIP() << "the device has no memory pools";
  // Defaults: the device-local pool keeps freed memory (threshold UINT64_MAX) until a trim; the
  // other pool gives it back at synchronizations (threshold 0).
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics fresh, device->QueryPoolStatistics());
  EXPECT_EQ(fresh.device_local.reserved_current, 0u);
  EXPECT_EQ(fresh.device_local.used_current, 0u);
  EXPECT_EQ(fresh.other.reserved_current, 0u);

  BufferParams local{.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal};
  BufferParams other{.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kOther};
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer one_byte, device->allocator().Allocate(local, 1));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer big, device->allocator().Allocate(other, kPoolChunk + 1));
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics in_use, device->QueryPoolStatistics());
  EXPECT_EQ(in_use.device_local.reserved_current, kPoolChunk);  // 1 byte reserves 32 MiB
  EXPECT_EQ(in_use.device_local.used_current, 1u);              // used counts exact bytes
  EXPECT_EQ(in_use.other.reserved_current, 2 * kPoolChunk);     // 32 MiB + 1 reserves 64 MiB
  EXPECT_EQ(in_use.other.used_current, kPoolChunk + 1);
  EXPECT_GE(in_use.device_local.reserved_high, kPoolChunk);
  EXPECT_GE(in_use.other.used_high, kPoolChunk + 1);

  // A trim with live allocations keeps their chunks.
  CUHAL_ASSERT_OK(device->Trim());
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics trimmed_live, device->QueryPoolStatistics());
  EXPECT_EQ(trimmed_live.device_local.reserved_current, kPoolChunk);
  EXPECT_EQ(trimmed_live.other.reserved_current, 2 * kPoolChunk);

  CUHAL_ASSERT_OK(one_byte.Reset());
  CUHAL_ASSERT_OK(big.Reset());
  CUHAL_ASSERT_OK(device->Trim());
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics trimmed, device->QueryPoolStatistics());
  EXPECT_EQ(trimmed.device_local.used_current, 0u);
  EXPECT_EQ(trimmed.other.used_current, 0u);
  EXPECT_EQ(trimmed.device_local.reserved_current, 0u);  // minimum capacity 0
  EXPECT_EQ(trimmed.other.reserved_current, 0u);
  EXPECT_EQ(trimmed.device_local.reserved_high, in_use.device_local.reserved_high);

  CUHAL_ASSERT_OK(device->pools()->ResetHighWatermarks());
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics reset, device->QueryPoolStatistics());
  EXPECT_EQ(reset.device_local.reserved_high, reset.device_local.reserved_current);
  EXPECT_EQ(reset.device_local.used_high, reset.device_local.used_current);
  EXPECT_EQ(reset.other.reserved_high, reset.other.reserved_current);
}

TEST_P(DeviceConformanceTest, DeviceLocalPoolKeepsFreedMemoryUntilTrim) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice());
  if (device->pools() == nullptr) GTEST_SKIP() << "the device has no memory pools";
  BufferParams local{.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal};
  {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device->allocator().Allocate(local, 4096));
  }
  CUHAL_ASSERT_OK(device->Synchronize());
  CUHAL_ASSERT_OK(device->allocator().Trim());  // proves the free complete: no release (UINT64_MAX)
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics kept, device->QueryPoolStatistics());
  EXPECT_EQ(kept.device_local.used_current, 0u);
  EXPECT_EQ(kept.device_local.reserved_current, kPoolChunk);
  // Reuse: the next allocation is served from what was kept.
  {
    CUHAL_ASSERT_OK_AND_ASSIGN(Buffer again, device->allocator().Allocate(local, 4096));
    CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics reused, device->QueryPoolStatistics());
    EXPECT_EQ(reused.device_local.reserved_current, kPoolChunk);
  }
  CUHAL_ASSERT_OK(device->Trim());
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics trimmed, device->QueryPoolStatistics());
  EXPECT_EQ(trimmed.device_local.reserved_current, 0u);
}

TEST_P(DeviceConformanceTest, TrimKeepsTheMinimumCapacity) {
  DeviceParams params;
  params.device_local_pool.minimum_capacity = std::uint64_t{1} << 30;  // more than we reserve
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, NewDevice(params));
  if (device->pools() == nullptr) GTEST_SKIP() << "the device has no memory pools";
  BufferParams local{.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal};
  {
    std::vector<Buffer> buffers;
    for (int i = 0; i < 3; ++i) {
      CUHAL_ASSERT_OK_AND_ASSIGN(Buffer buffer, device->allocator().Allocate(local, kPoolChunk));
      buffers.push_back(std::move(buffer));
    }
  }
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics before, device->QueryPoolStatistics());
  EXPECT_GE(before.device_local.reserved_current, 3 * kPoolChunk);
  EXPECT_EQ(before.device_local.used_current, 0u);
  CUHAL_ASSERT_OK(device->Trim());
  CUHAL_ASSERT_OK_AND_ASSIGN(MemoryPoolsStatistics after, device->QueryPoolStatistics());
  EXPECT_EQ(after.device_local.reserved_current, before.device_local.reserved_current);
}

CUHAL_INSTANTIATE_BACKEND_TEST(DeviceConformanceTest);

}  // namespace
}  // namespace cuhal::testing
