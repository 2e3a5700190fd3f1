// Copyright 2026 The cuhal Authors.
// Command buffers (issue 12, "Benchmarks"): the recording and submission cost per command of the
// two command targets, the direct stream target and the CUDA graph target, on fakecuda and on
// the real driver when one loads. The workload is a reusable command buffer of 100 dispatches
// (add_one over one element of a bound buffer: the launch cost dominates, not the kernel),
// submitted 1000 times.
//
//   build/release/bench/command_buffer_bench                           # both backends
//   build/release/bench/command_buffer_bench --benchmark_filter=/fake
//   build/release/bench/command_buffer_bench --benchmark_filter=/real  # on a GPU machine
//
// Benchmarks (names: BM_<what>/<target>/<backend>[/<bindings>]):
//   BM_Record          recording 100 dispatches and End (the graph target builds nothing yet).
//                      Counter record_us_per_command.
//   BM_FirstSubmission recording, End, the first submission and its completion: for the graph
//                      target this includes building the graph and instantiating it.
//                      Counter first_us_per_command.
//   BM_Submit          1000 submissions of the ended command buffer (CommandBuffer::Resolve and
//                      Issue on the queue's stream, what Queue::Execute does for a ready
//                      operation, without the semaphores) and then one stream synchronization;
//                      bindings "same" (one table every time: the graph target launches its
//                      executable graph unchanged) or "alternate" (two tables in turn: the graph
//                      target updates its 100 kernel nodes in place before each launch).
//                      Counters: host_us_per_command (the submitting thread's CPU time per
//                      command, i.e. per dispatch), wall_us_per_command (wall time per command
//                      including the final synchronization: the device's execution too), and
//                      for the graph target instantiations / in_place_updates / reuses /
//                      whole_graph_updates / rebuilds over the 1000 submissions.
// The first submission (instantiation) of BM_Submit happens before the clock starts.
// Each name carries /fake or /real and no other "real" (no UseRealTime: wall time is computed
// here as a counter, as bench/queue_bench.cc does).
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_backend.h"
#include "core/command/command_buffer.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/executable/executable.h"
#include "fakecuda/sample_kernels.h"

namespace {

using ::cuhal::Binding;
using ::cuhal::Buffer;
using ::cuhal::BufferRef;
using ::cuhal::CommandBuffer;
using ::cuhal::CommandBufferMode;
using ::cuhal::CommandBufferParams;
using ::cuhal::CommandTargetKind;
using ::cuhal::Device;
using ::cuhal::DispatchConfig;
using ::cuhal::Driver;
using ::cuhal::Executable;
using ::cuhal::ExecutableParams;
using ::cuhal::ResolvedBinding;
using ::cuhal::Status;
using ::cuhal::bench::Backend;

constexpr int kDispatches = 100;
constexpr int kSubmissions = 1000;

struct BackendKind {
  const char* name;
  const Backend& (*backend)();
  bool fake;
};
const Backend& Fake() { return ::cuhal::bench::FakeBackend(); }
const Backend& Real() { return ::cuhal::bench::RealBackend(); }
const BackendKind kFake{"fake", &Fake, true};
const BackendKind kReal{"real", &Real, false};

// A Driver, device 0 (one queue), the sample executable and two 4 KiB buffers, with the device's
// context current on the benchmark thread.
class Fixture {
 public:
  Fixture(benchmark::State& state, const BackendKind& kind) : state_(state) {
    const Backend& b = kind.backend();
    if (!b.unavailable.empty()) {
      state.SkipWithError(b.unavailable.c_str());
      return;
    }
    if (kind.fake) kernels_.emplace();
    api_ = b.api;
    auto driver = Driver::Create(api_);
    if (!Check(driver.status(), "creating the driver")) return;
    driver_ = std::move(driver).value();
    auto device = Device::Create(*driver_, 0);
    if (!Check(device.status(), "creating device 0")) return;
    device_ = std::move(device).value();
    if (api_->cuCtxSetCurrent(device_->context()) != CUDA_SUCCESS) {
      state.SkipWithError("cuCtxSetCurrent failed");
      return;
    }
    ExecutableParams params;
    params.image = ::cuhal::ImageBytes(fakecuda::kSamplePtx);
    params.entry_points = {"add_one"};
    auto exe = Executable::Create(*device_, params);
    if (!Check(exe.status(), "loading the sample executable")) return;
    exe_ = std::move(exe).value();
    for (Buffer& buffer : buffers_) {
      auto made = device_->allocator().Allocate({}, 4096);
      if (!Check(made.status(), "allocating a buffer")) return;
      buffer = std::move(made).value();
    }
    ok_ = true;
  }
  ~Fixture() {
    if (device_ != nullptr) {
      Status synced = device_->Synchronize();
      if (!synced.ok()) {
        std::fprintf(stderr, "command_buffer_bench: %s\n", synced.ToString().c_str());
      }
    }
    for (Buffer& buffer : buffers_) buffer = Buffer();
    exe_.reset();
    device_.reset();
    driver_.reset();
    if (api_ != nullptr) api_->cuCtxSetCurrent(nullptr);
  }
  Fixture(const Fixture&) = delete;             // owns a device
  Fixture& operator=(const Fixture&) = delete;  // ditto

  [[nodiscard]] bool ok() const { return ok_; }
  bool Check(const Status& status, const char* what) {
    if (status.ok()) return true;
    const std::string message = std::string(what) + ": " + status.ToString();
    state_.SkipWithError(message.c_str());
    ok_ = false;
    return false;
  }

  // A reusable command buffer of kDispatches dispatches of add_one over slot 0, ended.
  std::shared_ptr<CommandBuffer> Record(CommandTargetKind target) {
    CommandBufferParams params;
    params.mode = CommandBufferMode::kReusable;
    params.binding_capacity = 1;
    params.target = target;
    auto cb = CommandBuffer::Create(api_, params);
    if (!Check(cb.status(), "creating the command buffer")) return nullptr;
    DispatchConfig config;
    config.block = {32, 1, 1};
    const BufferRef bindings[] = {BufferRef::Slot(0)};
    const std::uint32_t n[] = {1};
    for (int i = 0; i < kDispatches; ++i) {
      if (!Check((*cb)->Dispatch(*exe_, 0, config, bindings, n), "recording a dispatch")) {
        return nullptr;
      }
    }
    if (!Check((*cb)->End(), "ending the command buffer")) return nullptr;
    return *cb;
  }
  // One submission of `cb` with buffer `which` bound (Resolve + Issue on queue 0's stream).
  bool Submit(const CommandBuffer& cb, int which) {
    const Binding table[] = {{&buffers_[which]}};
    auto resolved = cb.Resolve(table);
    if (!Check(resolved.status(), "resolving the bindings")) return false;
    return Check(cb.Issue(device_->queue(0).stream(), *resolved), "issuing");
  }
  bool Synchronize() { return Check(device_->queue(0).Synchronize(), "synchronizing"); }

 private:
  benchmark::State& state_;
  std::optional<fakecuda::SampleKernels> kernels_;
  const ::cuhal::CudaApi* api_ = nullptr;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<Executable> exe_;
  Buffer buffers_[2];
  bool ok_ = false;
};

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// The calling thread's CPU time, in seconds.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void BM_Record(benchmark::State& state, const BackendKind* kind, CommandTargetKind target) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  double wall = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<CommandBuffer> cb = f.Record(target);
    wall += Seconds(std::chrono::steady_clock::now() - start);
    if (cb == nullptr) return;
    benchmark::DoNotOptimize(cb.get());
  }
  state.counters["record_us_per_command"] =
      wall * 1e6 / (static_cast<double>(state.iterations()) * kDispatches);
}

void BM_FirstSubmission(benchmark::State& state, const BackendKind* kind,
                        CommandTargetKind target) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  double wall = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<CommandBuffer> cb = f.Record(target);
    if (cb == nullptr || !f.Submit(*cb, 0) || !f.Synchronize()) return;
    wall += Seconds(std::chrono::steady_clock::now() - start);
  }
  state.counters["first_us_per_command"] =
      wall * 1e6 / (static_cast<double>(state.iterations()) * kDispatches);
}

void BM_Submit(benchmark::State& state, const BackendKind* kind, CommandTargetKind target,
               bool alternate) {
  Fixture f(state, *kind);
  if (!f.ok()) return;
  std::shared_ptr<CommandBuffer> cb = f.Record(target);
  if (cb == nullptr || !f.Submit(*cb, 0) || !f.Synchronize()) return;  // built and instantiated
  const CommandBuffer::Statistics before = cb->statistics();
  double wall = 0;
  double cpu = 0;
  std::int64_t submissions = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = ThreadCpuSeconds();
    for (int i = 0; i < kSubmissions; ++i) {
      if (!f.Submit(*cb, alternate ? (i + 1) % 2 : 0)) return;
    }
    cpu += ThreadCpuSeconds() - cpu_start;
    if (!f.Synchronize()) return;
    wall += Seconds(std::chrono::steady_clock::now() - start);
    submissions += kSubmissions;
  }
  const double commands = static_cast<double>(submissions) * kDispatches;
  state.counters["host_us_per_command"] = cpu * 1e6 / commands;
  state.counters["wall_us_per_command"] = wall * 1e6 / commands;
  const CommandBuffer::Statistics after = cb->statistics();
  state.counters["instantiations"] =
      static_cast<double>(after.target.instantiations - before.target.instantiations);
  state.counters["in_place_updates"] =
      static_cast<double>(after.target.in_place_updates - before.target.in_place_updates);
  state.counters["reuses"] = static_cast<double>(after.target.reuses - before.target.reuses);
  state.counters["whole_graph_updates"] =
      static_cast<double>(after.target.whole_graph_updates - before.target.whole_graph_updates);
  state.counters["rebuilds"] = static_cast<double>(after.target.rebuilds - before.target.rebuilds);
}

void Register() {
  for (const BackendKind* kind : {&kFake, &kReal}) {
    for (CommandTargetKind target : {CommandTargetKind::kStream, CommandTargetKind::kGraph}) {
      const std::string t = ::cuhal::CommandTargetKindName(target);
      benchmark::RegisterBenchmark(("BM_Record/" + t + "/" + kind->name).c_str(), BM_Record, kind,
                                   target)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("BM_FirstSubmission/" + t + "/" + kind->name).c_str(),
                                   BM_FirstSubmission, kind, target)
          ->Unit(benchmark::kMillisecond);
      for (bool alternate : {false, true}) {
        const std::string name = "BM_Submit/" + t + "/" + kind->name + "/" +
                                 (alternate ? "alternate" : "same");
        benchmark::RegisterBenchmark(name.c_str(), BM_Submit, kind, target, alternate)
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
