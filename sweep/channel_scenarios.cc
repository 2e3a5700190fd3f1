// Copyright 2026 The cuhal Authors.
#include "sweep/channel_scenarios.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/channel/channel.h"
#include "core/channel/channel_provider.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "sweep/core_scenarios.h"

namespace cuhal::sweep {
namespace {

constexpr int kRanks = 4;
constexpr std::size_t kElements = 1024;

// `count` fake H200s with distinct PCI bus ids and UUIDs (one per rank).
fakecuda::DriverOptions Devices(int count) {
  fakecuda::DriverOptions options;
  options.devices = fakecuda::DistinctDevices(fakecuda::BuiltinH200Profile(), count);
  return options;
}

// Enqueues rank `rank`'s part of an in-place float32 sum all-reduce on `buffer` and checks the
// result. Every rank contributes rank + 1 to every element.
Status AllReduceOnce(Channel& channel, Buffer& buffer, int rank) {
  Queue& queue = channel.queue();
  const std::vector<float> input(kElements, static_cast<float>(rank + 1));
  CUHAL_RETURN_IF_ERROR(queue.Write(std::as_bytes(std::span(input)), buffer, 0));
  CUHAL_RETURN_IF_ERROR(
      channel.AllReduce(buffer, 0, buffer, 0, kElements, DataType::kFloat32, ReductionOp::kSum));
  std::vector<float> output(kElements, 0.0f);
  CUHAL_RETURN_IF_ERROR(queue.Read(buffer, 0, std::as_writable_bytes(std::span(output))));
  CUHAL_RETURN_IF_ERROR(queue.Synchronize());
  const float want = static_cast<float>(channel.count() * (channel.count() + 1) / 2);
  for (float value : output) {
    if (value != want) {
      return InternalError(StrCat("rank ", rank, ": all-reduce gave ", value, ", expected ", want,
                                  " (a peer failed)"));
    }
  }
  return OkStatus();
}

// One rank: open its device, create its channel (default rank, count and id from the world),
// all-reduce once, and destroy everything (buffer after a synchronization, then the channel,
// then the device). A failure before the id exchange is reported to the world.
Status RunRank(const Driver& driver, InProcessChannelWorld& world, int rank) {
  StatusOr<std::unique_ptr<Device>> opened = Device::Create(driver, rank);
  if (!opened.ok()) {
    world.Fail("", rank, opened.status());
    return opened.status();
  }
  std::unique_ptr<Device> device = std::move(opened).value();
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<ChannelProvider> provider, world.ProviderForRank(rank));
  device->ReplaceChannelProvider(std::move(provider));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Channel> channel, device->CreateChannel(),
                         "rank ", rank);
  CUHAL_ASSIGN_OR_RETURN(Buffer buffer,
                         device->allocator().Allocate({}, kElements * sizeof(float)),
                         "rank ", rank);
  Status status = AllReduceOnce(*channel, buffer, rank);
  if (!status.ok()) {
    // Work may still be queued on the buffer: wait for it (bounded: a collective whose peers
    // never come times out) before the buffer is freed.
    device->Synchronize().IgnoreError();
    return status;
  }
  CUHAL_RETURN_IF_ERROR(buffer.Reset(), "rank ", rank);
  channel.reset();  // before its device
  return OkStatus();
}

// Four ranks as threads: rank 0 on the calling thread (the one the sweep fails calls on), ranks
// 1-3 on threads of their own. Returns rank 0's error first (the injected failure is rank 0's),
// then any other rank's.
Status FourRanksAllReduce(const CudaApi* api, const NcclApi* nccl) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver, Driver::Create(api, nccl));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<InProcessChannelWorld> world,
                         InProcessChannelWorld::Create(kRanks));
  std::vector<Status> statuses(kRanks);
  std::vector<std::thread> threads;
  for (int r = 1; r < kRanks; ++r) {
    threads.emplace_back(
        [&, r] { statuses[static_cast<std::size_t>(r)] = RunRank(*driver, *world, r); });
  }
  statuses[0] = RunRank(*driver, *world, 0);
  for (std::thread& thread : threads) thread.join();
  for (int r = 0; r < kRanks; ++r) {
    if (!statuses[static_cast<std::size_t>(r)].ok()) {
      return std::move(statuses[static_cast<std::size_t>(r)])
          .AddContext(StrCat("rank ", r, " of ", kRanks));
    }
  }
  return OkStatus();
}

}  // namespace

std::vector<SweepScenario> ChannelScenarios() {
  std::vector<SweepScenario> scenarios;
  SweepScenario all_reduce;
  all_reduce.name = "channel: 4 ranks + all-reduce";
  all_reduce.run_with_nccl = &FourRanksAllReduce;
  all_reduce.calling_thread_only = true;
  all_reduce.driver_options = Devices(kRanks);
  // A rank 0 whose all-reduce never comes is found at once on the virtual clock (the other ranks
  // block in their synchronizations while rank 0 blocks in its own or destroys its channel). A
  // rank 0 whose ncclCommInitRank failed never joins the rendezvous, which the fake cannot tell
  // from a rank on its way: the wall-clock backstop ends the others' initialization (generous
  // for ranks that start together; a sweep run pays it once per such failure).
  all_reduce.nccl_options.wall_timeout_ms = 1000;
  all_reduce.cleanup_calls = DeviceCleanupCalls();
  // A failed ncclCommDestroy is reported and the communicator aborted instead (nothing leaks).
  all_reduce.cleanup_calls["ncclCommDestroy"] = {};
  scenarios.push_back(std::move(all_reduce));
  return scenarios;
}

}  // namespace cuhal::sweep
