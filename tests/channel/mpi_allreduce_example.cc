// Copyright 2026 The cuhal Authors.
// An example program: one cuhal channel over every process of an MPI job, on fakecuda + fakenccl
// across processes (each process its own fake GPU; the ranks' communicator lives in a
// shared-memory segment, docs/fakenccl.md "Across processes"), and an all-reduce through it.
//
//   mpirun -np 4 --oversubscribe build/release/tests/channel/mpi_allreduce_example
//
// Each process prints its rank, its pid and what it got; the exit status is non-zero when a
// result is wrong or a step fails (CTest runs it as mpi_allreduce_example_np4).
#include <chrono>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/channel/channel.h"
#include "core/channel/mpi_channel_provider.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "tests/fakenccl/nccl_support.h"

namespace {

cuhal::Status Run(int* wrong) {
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<cuhal::MpiChannelProvider> provider,
                         cuhal::MpiChannelProvider::Create());
  CUHAL_ASSIGN_OR_RETURN(cuhal::RankAndCount me, provider->QueryDefaultRankAndCount());
  // This process's fake GPU and fake NCCL; NCCL ids made here name a shared-memory segment.
  cuhal::testing::NcclBackendOptions options;
  options.nccl.cross_process = true;
  std::string unavailable;
  std::string error;
  std::unique_ptr<cuhal::testing::NcclBackend> backend =
      cuhal::testing::NcclBackend::Create("fake", options, &unavailable, &error);
  if (backend == nullptr) return cuhal::InternalError(error + unavailable);
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<cuhal::Driver> driver,
                         cuhal::Driver::Create(&backend->cuda(), &backend->nccl()));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<cuhal::Device> device, cuhal::Device::Create(*driver, 0));
  device->ReplaceChannelProvider(provider);
  {
    // Rank and count from MPI; rank 0 makes the id and the provider broadcasts it.
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<cuhal::Channel> channel, device->CreateChannel());
    constexpr std::size_t kCount = std::size_t{1} << 20;
    const std::size_t bytes = kCount * sizeof(float);
    CUHAL_ASSIGN_OR_RETURN(cuhal::Buffer buffer, device->allocator().Allocate({}, bytes));
    std::vector<float> values(kCount, static_cast<float>(me.rank + 1));
    cuhal::Queue& queue = channel->queue();
    CUHAL_RETURN_IF_ERROR(queue.Write(std::as_bytes(std::span(values)), buffer, 0));
    CUHAL_RETURN_IF_ERROR(queue.Synchronize());
    CUHAL_RETURN_IF_ERROR(channel->AllReduce(buffer, 0, buffer, 0, kCount,
                                             cuhal::DataType::kFloat32, cuhal::ReductionOp::kSum));
    CUHAL_RETURN_IF_ERROR(queue.Synchronize());
    CUHAL_RETURN_IF_ERROR(channel->QueryAsyncError());
    CUHAL_RETURN_IF_ERROR(queue.Read(buffer, 0, std::as_writable_bytes(std::span(values))));
    CUHAL_RETURN_IF_ERROR(queue.Synchronize());
    const float expected = static_cast<float>(me.count * (me.count + 1) / 2);
    for (float v : values) *wrong += v != expected ? 1 : 0;
    // Then the speed: 20 more all-reduces (in place, each synchronized), S/t as nccl-tests' busbw
    // is not: S = 4 MiB per rank.
    constexpr int kRounds = 20;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; ++i) {
      CUHAL_RETURN_IF_ERROR(channel->AllReduce(buffer, 0, buffer, 0, kCount,
                                               cuhal::DataType::kFloat32,
                                               cuhal::ReductionOp::kSum));
      CUHAL_RETURN_IF_ERROR(queue.Synchronize());
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    CUHAL_RETURN_IF_ERROR(channel->QueryAsyncError());
    std::printf("rank %d of %d (pid %d): all-reduce (sum) of %zu float32 in place over %d "
                "processes: every element %s %g (expected %g); then %d more: %.2f ms each, "
                "%.2f GB/s\n",
                channel->rank(), channel->count(), static_cast<int>(getpid()), kCount,
                channel->count(), *wrong == 0 ? "is" : "is NOT", static_cast<double>(values[0]),
                static_cast<double>(expected), kRounds, took.count() * 1e3 / kRounds,
                static_cast<double>(bytes) * kRounds / took.count() / 1e9);
    CUHAL_RETURN_IF_ERROR(buffer.Reset());
  }
  return cuhal::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  cuhal::StatusOr<cuhal::MpiSession> session = cuhal::MpiSession::Initialize(&argc, &argv);
  if (!session.ok()) {
    std::fprintf(stderr, "mpi_allreduce_example: %s\n", session.status().ToString().c_str());
    return 1;
  }
  int wrong = 0;
  const cuhal::Status status = Run(&wrong);
  if (!status.ok()) {
    std::fprintf(stderr, "mpi_allreduce_example: %s\n", status.ToString().c_str());
    return 1;
  }
  return wrong == 0 ? 0 : 1;
}
