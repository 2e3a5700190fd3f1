// Copyright 2026 The cuhal Authors.
// Conformance of executables (core/executable) and command buffers (core/command) on every
// backend: the same bodies run against fakecuda ("fake", "fake_adversarial") and the installed
// CUDA driver ("real"), and every command buffer body runs over every target of
// CommandTargets() (the stream target and the CUDA graph target). Topics
// follow IREE's CTS: executable_cache_test, command_buffer_test, command_buffer_fill_buffer_test,
// command_buffer_update_buffer_test, command_buffer_copy_buffer_test,
// command_buffer_dispatch_test, event_test. The kernels are fakecuda/sample_kernels.h's PTX: the
// real driver JIT-compiles and runs it, the fake runs the registered host implementations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/command/command_buffer.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/executable/executable.h"
#include "fakecuda/sample_kernels.h"
#include "tests/command/command_targets.h"
#include "tests/device/test_macros.h"
#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

Deadline Bound() { return DeadlineAfter(60s); }

constexpr std::uint32_t kPatternWord = 0x5A5A0FF0u;

std::vector<std::uint32_t> Iota(std::size_t n, std::uint32_t start) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + static_cast<std::uint32_t>(i * 3);
  return v;
}

ExecutableParams SampleParams() {
  ExecutableParams params;
  params.image = ImageBytes(fakecuda::kSamplePtx);
  params.entry_points = {"add_one", "shared_reverse", "write_params"};
  params.name = "sample";
  return params;
}

class CommandConformanceTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (IsFake()) kernels_.emplace();
    CUHAL_ASSERT_OK_AND_ASSIGN(driver_, Driver::Create(&api()));
    DeviceParams params;
    params.queue_count = 2;
    CUHAL_ASSERT_OK_AND_ASSIGN(device_, Device::Create(*driver_, 0, params));
  }
  void TearDown() override {
    device_.reset();
    driver_.reset();
    kernels_.reset();
    BackendTest::TearDown();
  }

  Buffer NewBuffer(std::size_t size) {
    StatusOr<Buffer> b = device_->allocator().Allocate({}, size);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? std::move(b).value() : Buffer();
  }
  std::shared_ptr<Semaphore> NewSemaphore() {
    StatusOr<std::shared_ptr<Semaphore>> s = device_->CreateSemaphore(0);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  template <typename T>
  void Write(Buffer& b, const std::vector<T>& values) {
    CUHAL_ASSERT_OK(device_->queue(0).Write(std::as_bytes(std::span(values)), b, 0));
    CUHAL_ASSERT_OK(device_->queue(0).Synchronize());
  }
  template <typename T>
  std::vector<T> Read(const Buffer& b, std::size_t n) {
    std::vector<T> out(n);
    EXPECT_TRUE(device_->queue(0).Read(b, 0, std::as_writable_bytes(std::span(out))).ok());
    EXPECT_TRUE(device_->queue(0).Synchronize().ok());
    return out;
  }
  // Submits `cb` on queue `q` with `bindings` and waits for it.
  Status Run(std::shared_ptr<CommandBuffer> cb, BindingTable bindings = {}, int q = 0) {
    std::shared_ptr<Semaphore> done = NewSemaphore();
    const SemaphoreValue signal[] = {{done.get(), 1}};
    CUHAL_RETURN_IF_ERROR(device_->queue(q).Execute({}, signal, std::move(cb), bindings));
    return done->Wait(1, Bound());
  }
  StatusOr<std::shared_ptr<CommandBuffer>> NewCommandBuffer(
      const CommandTargetCase& target, CommandBufferMode mode = CommandBufferMode::kOneShot,
      std::uint32_t capacity = 0) {
    return CommandBuffer::Create(device_->cuda_api(), TargetParams(target, mode, capacity));
  }

  std::optional<fakecuda::SampleKernels> kernels_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;
};

// --- executables ------------------------------------------------------------------------------

TEST_P(CommandConformanceTest, ExecutableHasEntryPointsByNameAndOrdinalWithAttributes) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe,
                             Executable::Create(*device_, SampleParams()));
  EXPECT_EQ(exe->format(), ExecutableFormat::kPtx);
  ASSERT_EQ(exe->entry_point_count(), 3u);
  CUHAL_ASSERT_OK_AND_ASSIGN(const EntryPoint* add_one, exe->entry_point(0));
  EXPECT_EQ(add_one->name, "add_one");
  CUHAL_ASSERT_OK_AND_ASSIGN(const EntryPoint* reverse, exe->LookupEntryPoint("shared_reverse"));
  EXPECT_EQ(reverse->ordinal, 1u);
  EXPECT_NE(reverse->function, nullptr);
  EXPECT_EQ(add_one->attributes.max_threads_per_block, 1024);
  EXPECT_EQ(add_one->attributes.static_shared_bytes, 0);
  EXPECT_EQ(reverse->attributes.static_shared_bytes, 1024);  // .shared .b8 [1024]
  EXPECT_EQ(reverse->attributes.max_threads_per_block, 256);  // .maxntid 256
  EXPECT_GT(add_one->attributes.registers, 0);
  EXPECT_GT(add_one->attributes.max_dynamic_shared_bytes, 0);
  EXPECT_EQ(exe->device_limits().max_threads_per_block, 1024);
  EXPECT_EQ(exe->entry_point(3).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(exe->LookupEntryPoint("nope").status().code(), StatusCode::kNotFound);
}

TEST_P(CommandConformanceTest, ExecutableCreationErrors) {
  ExecutableParams params = SampleParams();
  params.entry_points = {"add_one", "missing_kernel"};
  StatusOr<std::unique_ptr<Executable>> missing = Executable::Create(*device_, params);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status();
  EXPECT_THAT(missing.status().message(), HasSubstr("missing_kernel"));
  EXPECT_THAT(missing.status().message(), HasSubstr("cuModuleGetFunction"));

  params.entry_points = {"add_one", "add_one"};
  EXPECT_EQ(Executable::Create(*device_, params).status().code(), StatusCode::kInvalidArgument);
  params.entry_points = {};
  EXPECT_EQ(Executable::Create(*device_, params).status().code(), StatusCode::kInvalidArgument);
  params = SampleParams();
  params.image = {};
  EXPECT_EQ(Executable::Create(*device_, params).status().code(), StatusCode::kInvalidArgument);
}

// PTX the JIT refuses (an entry whose body is never closed): the error names cuModuleLoadDataEx
// and carries the JIT error log, on the real JIT and on the fake's PTX reader alike.
TEST_P(CommandConformanceTest, BadPtxReportsTheJitErrorLog) {
  static constexpr char kBadPtx[] =
      ".version 8.0\n.target sm_80\n.address_size 64\n"
      ".visible .entry broken(.param .u64 p)\n{\n  ret;\n";
  ExecutableParams params;
  params.image = ImageBytes(kBadPtx);
  params.entry_points = {"broken"};
  StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(*device_, params);
  ASSERT_FALSE(exe.ok());
  EXPECT_THAT(exe.status().message(), HasSubstr("cuModuleLoadDataEx"));
  EXPECT_THAT(exe.status().message(), HasSubstr("CUDA_ERROR_INVALID_PTX"));
  EXPECT_THAT(exe.status().message(), HasSubstr("; JIT error log: "));
  // A cubin header: the fake does not model cubins (NOT_SUPPORTED); the real driver refuses this
  // truncated one. Either way the load fails, naming the format and the call.
  static constexpr char kElf[] = "\x7f" "ELF\x02\x01\x01";
  params.image = std::as_bytes(std::span(kElf, sizeof(kElf)));
  exe = Executable::Create(*device_, params);
  ASSERT_FALSE(exe.ok());
  EXPECT_THAT(exe.status().message(), HasSubstr("(cubin, 8 bytes)"));
  EXPECT_THAT(exe.status().message(), HasSubstr("cuModuleLoadDataEx"));
}

TEST_P(CommandConformanceTest, CacheLoadsEachImageOncePerDevice) {
  ExecutableCache cache(*device_);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Executable> a, cache.GetOrLoad(SampleParams()));
  CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Executable> b, cache.GetOrLoad(SampleParams()));
  EXPECT_EQ(a.get(), b.get());
  // Same content in another buffer: still a hit (keyed by content, not address).
  const std::string copy(fakecuda::kSamplePtx);
  ExecutableParams other = SampleParams();
  other.image = ImageBytes(copy);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Executable> c, cache.GetOrLoad(other));
  EXPECT_EQ(a.get(), c.get());
  // Another entry point list is another executable.
  other.entry_points = {"add_one"};
  CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Executable> d, cache.GetOrLoad(other));
  EXPECT_NE(a.get(), d.get());
  ExecutableCache::Statistics stats = cache.statistics();
  EXPECT_EQ(stats.loads, 2u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.size, 2u);
  // A failed load is not cached.
  other.entry_points = {"missing_kernel"};
  EXPECT_FALSE(cache.GetOrLoad(other).ok());
  EXPECT_EQ(cache.statistics().size, 2u);
  cache.Clear();
  EXPECT_EQ(cache.statistics().size, 0u);
  EXPECT_NE(a->module(), nullptr);  // still loaded: we hold it
}

TEST_P(CommandConformanceTest, DispatchValidationNamesTheLimitAndTheValue) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe,
                             Executable::Create(*device_, SampleParams()));
  DispatchConfig ok;
  ok.workgroups = {4, 1, 1};
  ok.block = {256, 1, 1};
  CUHAL_EXPECT_OK(exe->ValidateDispatch(1, ok));
  auto expect_invalid = [&](std::uint32_t ordinal, DispatchConfig c, const char* limit,
                            const std::string& value) {
    const Status s = exe->ValidateDispatch(ordinal, c);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr(limit));
    EXPECT_THAT(s.message(), HasSubstr(value));
  };
  DispatchConfig c = ok;
  c.workgroups = {0, 1, 1};
  expect_invalid(0, c, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X", "x = 0");
  c = ok;
  c.workgroups = {1, 70000, 1};
  expect_invalid(0, c, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y", "y = 70000");
  c = ok;
  c.block = {2048, 1, 1};
  expect_invalid(0, c, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X", "x = 2048");
  c = ok;
  c.block = {512, 1, 1};  // fine for the device, too many for .maxntid 256
  expect_invalid(1, c, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK", "512 threads");
  c = ok;
  c.block = {32, 32, 2};  // 2048 threads
  expect_invalid(0, c, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK", "2048 threads");
  CUHAL_ASSERT_OK_AND_ASSIGN(const EntryPoint* e, exe->entry_point(0));
  c = ok;
  c.dynamic_shared_bytes = static_cast<std::uint32_t>(e->attributes.max_dynamic_shared_bytes);
  CUHAL_EXPECT_OK(exe->ValidateDispatch(0, c));
  c.dynamic_shared_bytes += 1;
  expect_invalid(0, c, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
                 std::to_string(c.dynamic_shared_bytes));
  EXPECT_EQ(exe->ValidateDispatch(7, ok).code(), StatusCode::kOutOfRange);
  // The command buffer refuses the same dispatch at record time.
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb, NewCommandBuffer(target));
    Buffer b = NewBuffer(4096);
    const BufferRef binding[] = {BufferRef::Direct(b)};
    c = ok;
    c.block = {2048, 1, 1};
    EXPECT_EQ(cb->Dispatch(*exe, 0, c, binding).code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(cb->commands().empty());
  }
}

// --- command buffers: each command ------------------------------------------------------------

TEST_P(CommandConformanceTest, FillWritesEveryPatternLength) {
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    Buffer b = NewBuffer(4096);
    Write(b, std::vector<std::uint8_t>(4096, 0));
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb, NewCommandBuffer(target));
    const std::uint8_t p1 = 0x5A;
    const std::uint16_t p2 = 0xBEEF;
    const std::uint32_t p4 = 0x01020304u;
    CUHAL_ASSERT_OK(cb->Fill(BufferRef::Direct(b, 0, 16), &p1, 1));
    CUHAL_ASSERT_OK(cb->Fill(BufferRef::Direct(b, 16, 32), &p2, 2));
    CUHAL_ASSERT_OK(cb->Fill(BufferRef::Direct(b, 48, 64), &p4, 4));
    EXPECT_EQ(cb->Fill(BufferRef::Direct(b, 2, 8), &p4, 4).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(cb->Fill(BufferRef::Direct(b, 0, 8192), &p1, 1).code(), StatusCode::kOutOfRange);
    EXPECT_EQ(cb->Fill(BufferRef::Direct(b), &p1, 3).code(), StatusCode::kInvalidArgument);
    CUHAL_ASSERT_OK(cb->End());
    EXPECT_EQ(cb->commands().size(), 3u);
    CUHAL_ASSERT_OK(Run(cb));
    const std::vector<std::uint8_t> got = Read<std::uint8_t>(b, 4096);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], 0x5A) << i;
    for (int i = 16; i < 48; i += 2) {
      EXPECT_EQ(got[i], 0xEF) << i;
      EXPECT_EQ(got[i + 1], 0xBE) << i;
    }
    for (int i = 48; i < 112; i += 4) {
      EXPECT_EQ(got[i], 0x04) << i;
      EXPECT_EQ(got[i + 3], 0x01) << i;
    }
    EXPECT_EQ(got[112], 0);
    EXPECT_EQ(cb->statistics().submissions, 1u);
    EXPECT_EQ(cb->statistics().issues, 1u);
  }
}

TEST_P(CommandConformanceTest, UpdateCopiesTheHostBytesAtRecordTime) {
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    Buffer b = NewBuffer(1024);
    Write(b, std::vector<std::uint32_t>(256, 0));
    std::vector<std::uint32_t> data = Iota(64, 100);
    const std::vector<std::uint32_t> recorded = data;
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb, NewCommandBuffer(target));
    CUHAL_ASSERT_OK(cb->Update(std::as_bytes(std::span(data)), BufferRef::Direct(b, 256)));
    std::fill(data.begin(), data.end(), 0xFFFFFFFFu);  // changed after recording: must not show
    EXPECT_EQ(cb->Update(std::as_bytes(std::span(data)), BufferRef::Direct(b, 1000)).code(),
              StatusCode::kOutOfRange);
    CUHAL_ASSERT_OK(cb->End());
    CUHAL_ASSERT_OK(Run(cb));
    const std::vector<std::uint32_t> got = Read<std::uint32_t>(b, 256);
    for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(got[64 + i], recorded[i]) << i;
    EXPECT_EQ(got[0], 0u);
    EXPECT_EQ(got[128], 0u);
  }
}

// The queue operation lets go of its command buffer before it signals (the scheduler's invariant
// 8): a waiter that wakes holds the last reference, so destroying it (and the graph target's
// graph) happens on the waiter's thread, in an order a fault sweep can count on.
TEST_P(CommandConformanceTest, ExecuteLetsGoOfTheCommandBufferBeforeItSignals) {
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    Buffer b = NewBuffer(256);
    const std::uint32_t seven = 7;
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb, NewCommandBuffer(target));
    CUHAL_ASSERT_OK(cb->Fill(BufferRef::Direct(b), &seven, 4));
    CUHAL_ASSERT_OK(cb->End());
    // Sees, on the signalling thread and at each change of the semaphore (the signal last), how
    // many references the command buffer has: at the signal, only this test's.
    struct ReferenceWatcher final : SemaphoreWatcher {
      std::weak_ptr<CommandBuffer> watched;
      std::atomic<long> at_last_change{-1};
      void OnSemaphoreChanged() noexcept override { at_last_change = watched.use_count(); }
    } watcher;
    watcher.watched = cb;
    std::shared_ptr<Semaphore> done = NewSemaphore();
    done->Watch(&watcher);
    const SemaphoreValue signal[] = {{done.get(), 1}};
    CUHAL_ASSERT_OK(device_->queue(0).Execute({}, signal, cb, {}));
    CUHAL_ASSERT_OK(done->Wait(1, Bound()));
    done->Unwatch(&watcher);
    EXPECT_EQ(watcher.at_last_change.load(), 1)
        << "the operation still held the command buffer when it signalled";
    EXPECT_EQ(cb.use_count(), 1);
    EXPECT_EQ(Read<std::uint32_t>(b, 64), std::vector<std::uint32_t>(64, 7));
  }
}

TEST_P(CommandConformanceTest, CopyBetweenBuffersAndWithinOne) {
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    Buffer a = NewBuffer(4096);
    Buffer b = NewBuffer(4096);
    const std::vector<std::uint32_t> data = Iota(1024, 7);
    Write(a, data);
    Write(b, std::vector<std::uint32_t>(1024, 0));
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb, NewCommandBuffer(target));
    CUHAL_ASSERT_OK(cb->Copy(BufferRef::Direct(a), BufferRef::Direct(b)));
    // Within one buffer, disjoint ranges: b[0, 64) -> b[2048, +64).
    CUHAL_ASSERT_OK(cb->Copy(BufferRef::Direct(b, 0, 64), BufferRef::Direct(b, 2048)));
    EXPECT_EQ(cb->Copy(BufferRef::Direct(b, 0, 64), BufferRef::Direct(b, 32, 64)).code(),
              StatusCode::kInvalidArgument);  // overlap
    EXPECT_EQ(cb->Copy(BufferRef::Direct(a, 0, 64), BufferRef::Direct(b, 0, 32)).code(),
              StatusCode::kInvalidArgument);  // lengths differ
    CUHAL_ASSERT_OK(cb->End());
    CUHAL_ASSERT_OK(Run(cb));
    std::vector<std::uint32_t> want = data;
    for (std::size_t i = 0; i < 16; ++i) want[512 + i] = data[i];
    EXPECT_EQ(Read<std::uint32_t>(b, 1024), want);
  }
}

TEST_P(CommandConformanceTest, DispatchRunsTheEntryPointWithBindingsAndConstants) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe,
                             Executable::Create(*device_, SampleParams()));
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    constexpr std::uint32_t kN = 1000;  // not a multiple of the block: the kernel checks i < n
    Buffer b = NewBuffer(4 * 1024);
    const std::vector<std::uint32_t> data = Iota(1024, 1);
    Write(b, data);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb, NewCommandBuffer(target));
    DispatchConfig config;
    config.workgroups = {4, 1, 1};
    config.block = {256, 1, 1};
    const BufferRef bindings[] = {BufferRef::Direct(b)};
    const std::uint32_t constants[] = {kN};
    CUHAL_ASSERT_OK(cb->Dispatch(*exe, 0, config, bindings, constants));
    CUHAL_ASSERT_OK(cb->ExecutionBarrier());
    CUHAL_ASSERT_OK(cb->Dispatch(*exe, 0, config, bindings, constants));  // twice: +2
    // shared_reverse over the first 256 values, one block of 256 threads.
    DispatchConfig one_block;
    one_block.block = {256, 1, 1};
    CUHAL_ASSERT_OK(cb->Dispatch(*exe, 1, one_block, bindings));
    CUHAL_ASSERT_OK(cb->End());
    CUHAL_ASSERT_OK(Run(cb));
    std::vector<std::uint32_t> want = data;
    for (std::uint32_t i = 0; i < kN; ++i) want[i] += 2;
    std::reverse(want.begin(), want.begin() + 256);
    EXPECT_EQ(Read<std::uint32_t>(b, 1024), want);
  }
}

TEST_P(CommandConformanceTest, CommandsRunInRecordingOrderAfterWaitsBeforeSignals) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe,
                             Executable::Create(*device_, SampleParams()));
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    Buffer a = NewBuffer(1024);
    Buffer b = NewBuffer(1024);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb, NewCommandBuffer(target));
    const std::uint32_t zero = 0;
    CUHAL_ASSERT_OK(cb->Fill(BufferRef::Direct(a), &zero, 4));
    const std::vector<std::uint32_t> seven(256, 7);
    CUHAL_ASSERT_OK(cb->Update(std::as_bytes(std::span(seven)), BufferRef::Direct(a)));
    DispatchConfig config;
    config.block = {256, 1, 1};
    const BufferRef bindings[] = {BufferRef::Direct(a)};
    const std::uint32_t n[] = {256};
    CUHAL_ASSERT_OK(cb->Dispatch(*exe, 0, config, bindings, n));
    CUHAL_ASSERT_OK(cb->ExecutionBarrier());
    CUHAL_ASSERT_OK(cb->Copy(BufferRef::Direct(a), BufferRef::Direct(b)));
    CUHAL_ASSERT_OK(cb->End());
    std::shared_ptr<Semaphore> host = NewSemaphore();
    std::shared_ptr<Semaphore> done = NewSemaphore();
    const SemaphoreValue wait[] = {{host.get(), 1}};
    const SemaphoreValue signal[] = {{done.get(), 1}};
    CUHAL_ASSERT_OK(device_->queue(1).Execute(wait, signal, cb));
    cb.reset();  // the queue operation keeps it
    CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t v, done->Query());
    EXPECT_EQ(v, 0u);  // its wait is not reached
    CUHAL_ASSERT_OK(host->Signal(1));
    CUHAL_ASSERT_OK(done->Wait(1, Bound()));
    EXPECT_EQ(Read<std::uint32_t>(b, 256), std::vector<std::uint32_t>(256, 8));
  }
}

// A HAL event signalled by one command buffer orders another on a second queue.
TEST_P(CommandConformanceTest, HalEventsOrderCommandBuffersAcrossQueues) {
  CUHAL_ASSERT_OK_AND_ASSIGN(Event event, device_->CreateEvent());
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    Buffer a = NewBuffer(64 * 1024);
    Buffer b = NewBuffer(64 * 1024);
    Write(b, std::vector<std::uint8_t>(64 * 1024, 0));
    const std::vector<std::uint32_t> data = Iota(16 * 1024, 3);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> produce, NewCommandBuffer(target));
    CUHAL_ASSERT_OK(produce->ResetEvent(event));
    CUHAL_ASSERT_OK(produce->Update(std::as_bytes(std::span(data)), BufferRef::Direct(a)));
    CUHAL_ASSERT_OK(produce->SignalEvent(event));
    CUHAL_ASSERT_OK(produce->End());
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> consume, NewCommandBuffer(target));
    const Event* events[] = {&event};
    CUHAL_ASSERT_OK(consume->WaitEvents(events));
    CUHAL_ASSERT_OK(consume->Copy(BufferRef::Direct(a), BufferRef::Direct(b)));
    CUHAL_ASSERT_OK(consume->End());
    EXPECT_EQ(consume->WaitEvents({}).code(), StatusCode::kFailedPrecondition);  // ended
    std::shared_ptr<Semaphore> done = NewSemaphore();
    const SemaphoreValue s1[] = {{done.get(), 1}};
    const SemaphoreValue s2[] = {{done.get(), 2}};
    // No semaphore orders them: only the event (the producer is enqueued first).
    CUHAL_ASSERT_OK(device_->queue(0).Execute({}, s1, produce));
    CUHAL_ASSERT_OK(device_->queue(1).Execute({}, s2, consume));
    CUHAL_ASSERT_OK(done->Wait(2, Bound()));
    CUHAL_ASSERT_OK(device_->Synchronize());
    EXPECT_EQ(Read<std::uint32_t>(b, data.size()), data);
  }
}

// --- reusable command buffers and binding tables ----------------------------------------------

TEST_P(CommandConformanceTest, ReusableCommandBufferRunsOverDifferentBindingTables) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe,
                             Executable::Create(*device_, SampleParams()));
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb,
                               NewCommandBuffer(target, CommandBufferMode::kReusable, 2));
    // slot 0: in; slot 1: out. out = in + 1 (copy, then add_one over out).
    CUHAL_ASSERT_OK(cb->Copy(BufferRef::Slot(0), BufferRef::Slot(1)));
    DispatchConfig config;
    config.block = {256, 1, 1};
    const BufferRef bindings[] = {BufferRef::Slot(1)};
    const std::uint32_t n[] = {256};
    CUHAL_ASSERT_OK(cb->Dispatch(*exe, 0, config, bindings, n));
    CUHAL_ASSERT_OK(cb->End());
    EXPECT_EQ(cb->slots_used(), 2u);
    std::vector<Buffer> in, out;
    for (int round = 0; round < 3; ++round) {
      in.push_back(NewBuffer(1024));
      out.push_back(NewBuffer(1024));
      Write(in.back(), Iota(256, 1000u * round));
    }
    for (int round = 0; round < 3; ++round) {
      const Binding table[] = {{&in[round]}, {&out[round]}};
      CUHAL_ASSERT_OK(Run(cb, table, round % 2));
    }
    for (int round = 0; round < 3; ++round) {
      std::vector<std::uint32_t> want = Iota(256, 1000u * round);
      for (std::uint32_t& v : want) v += 1;
      EXPECT_EQ(Read<std::uint32_t>(out[round], 256), want) << "round " << round;
      EXPECT_EQ(Read<std::uint32_t>(in[round], 256), Iota(256, 1000u * round));
    }
    EXPECT_EQ(cb->statistics().submissions, 3u);
    // A binding with an offset and length: the slot covers the second half of a buffer.
    Buffer big_in = NewBuffer(2048);
    Buffer big_out = NewBuffer(2048);
    Write(big_in, Iota(512, 5));
    Write(big_out, std::vector<std::uint32_t>(512, 0));
    const Binding halves[] = {{&big_in, 1024, 1024}, {&big_out, 1024, 1024}};
    CUHAL_ASSERT_OK(Run(cb, halves));
    std::vector<std::uint32_t> want(512, 0);
    const std::vector<std::uint32_t> src = Iota(512, 5);
    for (std::size_t i = 256; i < 512; ++i) want[i] = src[i] + 1;
    EXPECT_EQ(Read<std::uint32_t>(big_out, 512), want);
  }
}

// The graph target instantiates once; a re-submission with the same addresses launches the
// executable graph as it is, one with another binding table updates its nodes in place (no
// re-instantiation). The stream target has no target statistics.
TEST_P(CommandConformanceTest, GraphTargetUpdatesInPlaceForAnotherBindingTable) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe,
                             Executable::Create(*device_, SampleParams()));
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb,
                               NewCommandBuffer(target, CommandBufferMode::kReusable, 2));
    // slot 1 = 9s; slot 1 += 1 (add_one); slot 0 = slot 1; slot 0's first word = 77 (update).
    const std::uint32_t nine = 9;
    CUHAL_ASSERT_OK(cb->Fill(BufferRef::Slot(1), &nine, 4));
    DispatchConfig config;
    config.block = {256, 1, 1};
    const BufferRef bindings[] = {BufferRef::Slot(1)};
    const std::uint32_t n[] = {256};
    CUHAL_ASSERT_OK(cb->Dispatch(*exe, 0, config, bindings, n));
    CUHAL_ASSERT_OK(cb->Copy(BufferRef::Slot(1), BufferRef::Slot(0)));
    const std::uint32_t word = 77;
    CUHAL_ASSERT_OK(cb->Update(std::as_bytes(std::span(&word, 1)), BufferRef::Slot(0)));
    CUHAL_ASSERT_OK(cb->End());
    Buffer a0 = NewBuffer(1024), a1 = NewBuffer(1024), b0 = NewBuffer(1024), b1 = NewBuffer(1024);
    const Binding table_a[] = {{&a0}, {&a1}};
    const Binding table_b[] = {{&b0}, {&b1}};
    std::vector<std::uint32_t> want(256, 10);
    want[0] = 77;
    CUHAL_ASSERT_OK(Run(cb, table_a));
    CUHAL_ASSERT_OK(Run(cb, table_a));
    EXPECT_EQ(Read<std::uint32_t>(a0, 256), want);
    CUHAL_ASSERT_OK(Run(cb, table_b));
    EXPECT_EQ(Read<std::uint32_t>(b0, 256), want);
    EXPECT_EQ(Read<std::uint32_t>(b1, 256), std::vector<std::uint32_t>(256, 10));
    Write(a0, std::vector<std::uint32_t>(256, 0));
    CUHAL_ASSERT_OK(Run(cb, table_a));  // back to the first table: updated again
    EXPECT_EQ(Read<std::uint32_t>(a0, 256), want);
    const CommandBuffer::Statistics stats = cb->statistics();
    EXPECT_EQ(stats.submissions, 4u);
    EXPECT_EQ(stats.issues, 4u);
    if (target.kind == CommandTargetKind::kStream) {
      EXPECT_EQ(stats.target.instantiations, 0u);
      EXPECT_EQ(stats.target.launches, 0u);
      continue;
    }
    EXPECT_EQ(stats.target.instantiations, 1u);
    EXPECT_EQ(stats.target.launches, 4u);
    EXPECT_EQ(stats.target.reuses, 1u);
    EXPECT_EQ(stats.target.in_place_updates, 2u);
    EXPECT_EQ(stats.target.nodes_updated, 8u);  // 4 nodes, each time
    EXPECT_EQ(stats.target.whole_graph_updates, 0u);
    EXPECT_EQ(stats.target.rebuilds, 0u);
  }
}

// Concurrent submissions of one reusable command buffer from two threads, on two queues, each
// with its own binding tables: the target serializes its own state (the graph target's update and
// launch are one step), so every submission computes over its own buffers.
TEST_P(CommandConformanceTest, ConcurrentSubmissionsWithDifferentTablesStayApart) {
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb,
                               NewCommandBuffer(target, CommandBufferMode::kReusable, 1));
    CUHAL_ASSERT_OK(cb->Fill(BufferRef::Slot(0), &kPatternWord, 4));
    CUHAL_ASSERT_OK(cb->End());
    constexpr int kRounds = 12;
    std::vector<Buffer> buffers[2];
    for (auto& per_thread : buffers) {
      for (int i = 0; i < kRounds; ++i) per_thread.push_back(NewBuffer(256));
    }
    std::vector<Status> failures[2];
    auto submit = [&](int t) {
      for (int i = 0; i < kRounds; ++i) {
        const Binding table[] = {{&buffers[t][i]}};
        Status s = Run(cb, table, t);
        if (!s.ok()) failures[t].push_back(s);
      }
    };
    std::thread other(submit, 1);
    submit(0);
    other.join();
    for (int t = 0; t < 2; ++t) {
      EXPECT_TRUE(failures[t].empty()) << failures[t].front();
      for (int i = 0; i < kRounds; ++i) {
        EXPECT_EQ(Read<std::uint32_t>(buffers[t][i], 64),
                  std::vector<std::uint32_t>(64, kPatternWord))
            << "thread " << t << " round " << i;
      }
    }
    EXPECT_EQ(cb->statistics().submissions, 2u * kRounds);
    if (target.kind == CommandTargetKind::kGraph) {
      EXPECT_EQ(cb->statistics().target.instantiations, 1u);
      EXPECT_EQ(cb->statistics().target.launches, 2u * kRounds);
    }
  }
}

// DeviceParams.command_target picks the target of Device::CreateCommandBuffer when none is given.
TEST_P(CommandConformanceTest, DeviceParameterChoosesTheDefaultTarget) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> plain, device_->CreateCommandBuffer());
  EXPECT_EQ(plain->target_kind(), CommandTargetKind::kStream);
  DeviceParams params;
  params.command_target = CommandTargetKind::kGraph;
  device_.reset();
  CUHAL_ASSERT_OK_AND_ASSIGN(device_, Device::Create(*driver_, 0, params));
  CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb, device_->CreateCommandBuffer());
  EXPECT_EQ(cb->target_kind(), CommandTargetKind::kGraph);
  CommandBufferParams stream;
  stream.target = CommandTargetKind::kStream;
  CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> explicit_stream,
                             device_->CreateCommandBuffer(stream));
  EXPECT_EQ(explicit_stream->target_kind(), CommandTargetKind::kStream);
  Buffer b = NewBuffer(256);
  const std::uint8_t five = 5;
  CUHAL_ASSERT_OK(cb->Fill(BufferRef::Direct(b), &five, 1));
  CUHAL_ASSERT_OK(cb->End());
  CUHAL_ASSERT_OK(Run(cb));
  EXPECT_EQ(Read<std::uint8_t>(b, 256), std::vector<std::uint8_t>(256, 5));
  EXPECT_EQ(cb->statistics().target.instantiations, 1u);
  params.command_target = static_cast<CommandTargetKind>(7);
  EXPECT_EQ(params.Validate().code(), StatusCode::kInvalidArgument);
}

// Queue::TransferRange (issue 12, "Transfers"): host to device, device to device and device to
// host as queue operations ordered only by their semaphores, across two queues.
TEST_P(CommandConformanceTest, TransferRangeInAllThreeDirectionsOrderedBySemaphores) {
  Buffer a = NewBuffer(4096);
  Buffer b = NewBuffer(4096);
  std::shared_ptr<Semaphore> s = NewSemaphore();
  std::vector<std::uint32_t> source = Iota(256, 40);
  std::vector<std::uint32_t> back(256, 0);
  const SemaphoreValue s1[] = {{s.get(), 1}}, s2[] = {{s.get(), 2}}, s3[] = {{s.get(), 3}};
  // Submitted last-first: the device-to-host read waits for the copy, which waits for the write.
  CUHAL_ASSERT_OK(device_->queue(0).TransferRange(s2, s3, b, 512,
                                                  std::as_writable_bytes(std::span(back))));
  CUHAL_ASSERT_OK(device_->queue(1).TransferRange(s1, s2, a, 0, b, 512, 1024));
  {
    const std::vector<std::uint32_t> copy_of_source = source;
    CUHAL_ASSERT_OK(
        device_->queue(0).TransferRange({}, s1, std::as_bytes(std::span(copy_of_source)), a, 0));
  }  // the host-to-device bytes were copied at submission
  CUHAL_ASSERT_OK(s->Wait(3, Bound()));
  EXPECT_EQ(back, source);
  // Checked at submission, nothing submitted.
  EXPECT_EQ(device_->queue(0).TransferRange({}, s1, a, 4000, b, 0, 1024).code(),
            StatusCode::kOutOfRange);
  std::vector<std::byte> too_big(8192);
  EXPECT_EQ(
      device_->queue(0).TransferRange({}, s1, std::span<const std::byte>(too_big), a, 0).code(),
      StatusCode::kOutOfRange);
  EXPECT_EQ(s->Query().value(), 3u);
}

TEST_P(CommandConformanceTest, BadBindingTablesAreRefusedBeforeAnythingRuns) {
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> cb,
                               NewCommandBuffer(target, CommandBufferMode::kReusable, 4));
    const std::uint32_t p = 0xAAAAAAAAu;
    CUHAL_ASSERT_OK(cb->Fill(BufferRef::Slot(0, 0, 512), &p, 4));
    CUHAL_ASSERT_OK(cb->Copy(BufferRef::Slot(0, 0, 256), BufferRef::Slot(2, 0, 256)));
    EXPECT_EQ(cb->Fill(BufferRef::Slot(4), &p, 4).code(), StatusCode::kOutOfRange);  // capacity
    // Submitting while recording.
    Buffer big = NewBuffer(1024);
    Buffer small = NewBuffer(128);
    const Binding good[] = {{&big}, {}, {&big, 512, 512}};
    std::shared_ptr<Semaphore> done = NewSemaphore();
    const SemaphoreValue signal[] = {{done.get(), 1}};
    EXPECT_EQ(device_->queue(0).Execute({}, signal, cb, good).code(),
              StatusCode::kFailedPrecondition);
    CUHAL_ASSERT_OK(cb->End());
    const Binding too_short[] = {{&big}, {}};
    EXPECT_EQ(device_->queue(0).Execute({}, signal, cb, too_short).code(),
              StatusCode::kInvalidArgument);
    const Binding missing[] = {{&big}, {}, {}};
    EXPECT_EQ(device_->queue(0).Execute({}, signal, cb, missing).code(),
              StatusCode::kInvalidArgument);
    const Binding small_slot[] = {{&small}, {}, {&big}};
    const Status s = device_->queue(0).Execute({}, signal, cb, small_slot);
    EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s;
    EXPECT_THAT(s.message(), HasSubstr("binding slot 0"));
    const Binding past_end[] = {{&big}, {}, {&big, 2048}};
    EXPECT_EQ(device_->queue(0).Execute({}, signal, cb, past_end).code(),
              StatusCode::kOutOfRange);
    const Binding overlapping[] = {{&big}, {}, {&big, 128}};
    EXPECT_EQ(device_->queue(0).Execute({}, signal, cb, overlapping).code(),
              StatusCode::kInvalidArgument);
    // Nothing was submitted: the semaphore is still 0 and nothing is pending.
    CUHAL_ASSERT_OK(device_->Synchronize());
    CUHAL_ASSERT_OK_AND_ASSIGN(std::uint64_t v, done->Query());
    EXPECT_EQ(v, 0u);
    EXPECT_EQ(cb->statistics().submissions, 0u);
    CUHAL_ASSERT_OK(device_->queue(0).Execute({}, signal, cb, good));
    CUHAL_ASSERT_OK(done->Wait(1, Bound()));
    const std::vector<std::uint32_t> got = Read<std::uint32_t>(big, 256);
    EXPECT_EQ(got[0], 0xAAAAAAAAu);
    EXPECT_EQ(got[127], 0xAAAAAAAAu);  // fill [0, 512)
    EXPECT_EQ(got[128], 0xAAAAAAAAu);  // copied [0, 256) -> [512, 768)
  }
}

TEST_P(CommandConformanceTest, ModesAndLifecycleRules) {
  for (const CommandTargetCase& target : CommandTargets()) {
    SCOPED_TRACE(target.name);
    EXPECT_EQ(CommandBuffer::Create(device_->cuda_api(),
                                    TargetParams(target, CommandBufferMode::kOneShot, 2))
                  .status()
                  .code(),
              StatusCode::kInvalidArgument);
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<CommandBuffer> once, NewCommandBuffer(target));
    const std::uint8_t p = 1;
    EXPECT_EQ(once->Fill(BufferRef::Slot(0), &p, 1).code(), StatusCode::kInvalidArgument);
    Buffer b = NewBuffer(256);
    CUHAL_ASSERT_OK(once->Fill(BufferRef::Direct(b), &p, 1));
    EXPECT_EQ(once->Fill(BufferRef{&b, 3}, &p, 1).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(once->Fill(BufferRef{}, &p, 1).code(), StatusCode::kInvalidArgument);
    Buffer empty;
    EXPECT_EQ(once->Fill(BufferRef::Direct(empty), &p, 1).code(),
              StatusCode::kFailedPrecondition);
    CUHAL_ASSERT_OK(once->End());
    EXPECT_EQ(once->End().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(once->Fill(BufferRef::Direct(b), &p, 1).code(), StatusCode::kFailedPrecondition);
    const Binding table[] = {{&b}};
    std::shared_ptr<Semaphore> done = NewSemaphore();
    const SemaphoreValue signal[] = {{done.get(), 1}};
    EXPECT_EQ(device_->queue(0).Execute({}, signal, once, table).code(),
              StatusCode::kInvalidArgument);  // one-shot takes no table
    CUHAL_ASSERT_OK(Run(once));
    EXPECT_EQ(Run(once).code(), StatusCode::kFailedPrecondition);  // submitted once already
    EXPECT_EQ(device_->queue(0).Execute({}, signal, nullptr).code(),
              StatusCode::kInvalidArgument);
  }
}

CUHAL_INSTANTIATE_BACKEND_TEST(CommandConformanceTest);

}  // namespace
}  // namespace cuhal::testing
