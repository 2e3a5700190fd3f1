// Copyright 2026 The cuhal Authors.
#include "cli/demo_command.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/demo_ptx.h"
#include "cli/text_table.h"
#include "cli/version_command.h"
#include "core/base/status_or.h"
#include "core/channel/channel.h"
#include "core/channel/channel_provider.h"
#include "core/command/command_buffer.h"
#include "core/device/device.h"
#include "core/device/transfer_batch.h"
#include "core/driver/context_scope.h"
#include "core/driver/driver.h"
#include "core/executable/executable.h"
#include "core/memory/allocator.h"
#include "core/semaphore/semaphore.h"
#include "core/symbols/api_status.h"
#include "core/symbols/driver_handles.h"
#include "fakecuda/fake_driver.h"
#include "fakecuda/kernel_registry.h"
#include "fakecuda/ptx/interpreter.h"
#include "fakecuda/sample_kernels.h"
#include "fakenccl/fake_nccl.h"

namespace cuhal::cli {
namespace {

constexpr int kFakeDevices = 4;
constexpr int kMaxRanks = 4;
constexpr unsigned kElements = 64 * 1024;  // 32-bit values in each demo buffer
constexpr unsigned kThreadsPerBlock = 256;
constexpr std::size_t kAllReduceElements = 1024;  // floats each rank contributes

std::span<const std::byte> Bytes(const std::vector<unsigned>& v) {
  return std::as_bytes(std::span(v));
}
std::span<std::byte> WritableBytes(std::vector<unsigned>& v) {
  return std::as_writable_bytes(std::span(v));
}

// OK when values[i] == expected(i) for every i; otherwise INTERNAL naming the first mismatch.
template <typename T, typename F>
Status Verify(const std::vector<T>& values, F expected, std::string_view what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] != expected(i)) {
      return InternalError(StrCat(what, ": element ", i, " is ", values[i], ", expected ",
                                  expected(i)));
    }
  }
  return OkStatus();
}

void WritePoolTable(const MemoryPoolsStatistics& stats, std::ostream& out) {
  TextTable table({"POOL", "RESERVED", "USED", "RESERVED HIGH", "USED HIGH"});
  for (int c = 1; c <= 4; ++c) table.AlignRight(static_cast<std::size_t>(c));
  auto row = [&table](MemoryPoolKind kind, const MemoryPoolStatistics& s) {
    table.AddRow({std::string(MemoryPoolKindName(kind)), FormatBytes(s.reserved_current),
                  FormatBytes(s.used_current), FormatBytes(s.reserved_high),
                  FormatBytes(s.used_high)});
  };
  row(MemoryPoolKind::kDeviceLocal, stats.device_local);
  row(MemoryPoolKind::kOther, stats.other);
  table.Render(out, "   ");
}

// The module of the kernel step (5): the PTX nvcc compiled from CUDA C++
// (cli/kernels/demo_kernels.cu) when cuhal was built with nvcc, which the fake's PTX interpreter
// runs; else fakecuda's hand-written sample PTX, whose add_one the fake runs as a registered host
// function (fakecuda/sample_kernels.h). Both kernels are add_one(unsigned* data, unsigned n).
struct KernelModule {
  const char* ptx = nullptr;  // NUL-terminated
  bool from_cuda_cpp = false;
};
KernelModule DemoKernelModule() {
  if (!DemoPtx().empty()) return {DemoPtx().data(), true};
  return {fakecuda::kSamplePtx, false};
}

// What step 5 says about the module it loaded, the command buffers that ran its kernel and who
// ran it.
std::string DescribeKernelStep(const KernelModule& module, bool fake,
                               std::uint64_t interpreted_instructions,
                               const CommandTargetStatistics& graph) {
  std::string loaded =
      module.from_cuda_cpp
          ? "5. Kernel: loaded the PTX nvcc compiled from CUDA C++ (cli/kernels/demo_kernels.cu) "
            "when\n   cuhal was built, as an executable (cuModuleLoadDataEx; entry point "
            "add_one);\n"
          : StrCat("5. Kernel: no CUDA C++ kernel (", DemoPtxMissing(),
                   ");\n   loaded fakecuda's hand-written sample PTX instead, as an executable "
                   "(cuModuleLoadDataEx;\n   entry point add_one);\n");
  std::string ran;
  if (!fake) {
    ran = "The GPU ran them.";
  } else if (module.from_cuda_cpp) {
    ran = StrCat("fakecuda's PTX interpreter ran them (", interpreted_instructions,
                 " thread-instructions).");
  } else {
    ran = "A host function registered under its name ran them (fakecuda/sample_kernels.h).";
  }
  return StrCat(
      loaded, "   recorded one dispatch of it (", kElements / kThreadsPerBlock, " blocks of ",
      kThreadsPerBlock, " threads) over binding slot 0 in a reusable\n",
      "   command buffer per target and ran them on queue 0 (Queue::Execute, each signalling a\n"
      "   semaphore): the stream target over B (cuLaunchKernel), then the graph target over B (a\n"
      "   CUDA graph of one kernel node, cuGraphLaunch) and again, with a second binding table, "
      "over A.\n   Graph target: instantiations ",
      graph.instantiations, ", in-place updates ", graph.in_place_updates,
      " (cuGraphExecKernelNodeSetParams), rebuilds ", graph.rebuilds, ".\n   ", ran,
      "\n   Read back: every value of B is two more than before, every value of A one more. "
      "Verified.\n");
}

// Step 3-6 on one device: buffers from both pools, copies, the kernel, pool statistics.
Status BuffersKernelAndPools(Device& device, bool fake, std::ostream& out) {
  Queue& queue = device.queue(0);
  const std::size_t bytes = kElements * sizeof(unsigned);

  // 3. Buffers from the pools.
  CUHAL_ASSIGN_OR_RETURN(
      Buffer a,
      device.allocator().Allocate(
          {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kDeviceLocal}, bytes),
      "allocating buffer A");
  CUHAL_ASSIGN_OR_RETURN(
      Buffer b,
      device.allocator().Allocate(
          {.heap = MemoryHeap::kDeviceLocal, .pool = MemoryPoolKind::kOther}, bytes),
      "allocating buffer B");
  out << "3. Allocated two " << FormatBytes(bytes) << " device buffers, stream-ordered, from the "
      << "device's memory pools:\n"
      << "   A from the device-local pool (for data a workload keeps on the device), B from the\n"
      << "   other pool (staging, transfers).\n";

  // 4. Copies through the queue.
  std::vector<unsigned> host(kElements);
  for (unsigned i = 0; i < kElements; ++i) host[i] = i;
  std::vector<unsigned> back(kElements, 0);
  CUHAL_RETURN_IF_ERROR(queue.Write(Bytes(host), a, 0), "writing A");
  CUHAL_RETURN_IF_ERROR(queue.Copy(a, 0, b, 0, bytes), "copying A to B");
  CUHAL_RETURN_IF_ERROR(queue.Read(b, 0, WritableBytes(back)), "reading B");
  CUHAL_RETURN_IF_ERROR(queue.Synchronize(), "waiting for the copies");
  CUHAL_RETURN_IF_ERROR(Verify(back, [](std::size_t i) { return static_cast<unsigned>(i); },
                               "B after the copies"));
  out << "4. Copies on queue 0, in stream order: wrote " << kElements
      << " values (0, 1, 2, ...) from the host into A,\n"
      << "   copied A to B on the device, read B back to the host, synchronized: all " << kElements
      << " values\n"
      << "   match. Verified.\n";

  // 5. A kernel as an executable, dispatched through a command buffer on each target.
  const KernelModule kernel_module = DemoKernelModule();
  const std::uint64_t instructions_before = fakecuda::ptx::TotalInstructions();
  CommandTargetStatistics graph_stats;
  {
    ExecutableParams exe_params;
    exe_params.image = ImageBytes(kernel_module.ptx);
    exe_params.entry_points = {"add_one"};
    exe_params.name = "demo kernels";
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, Executable::Create(device, exe_params),
                           "loading the demo's kernels");
    CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> done, device.CreateSemaphore(0));
    DispatchConfig config;
    config.workgroups = {(kElements + kThreadsPerBlock - 1) / kThreadsPerBlock, 1, 1};
    config.block = {kThreadsPerBlock, 1, 1};
    const BufferRef slot0[] = {BufferRef::Slot(0)};
    const std::uint32_t n[] = {kElements};
    std::uint64_t value = 0;
    // Runs `cb` over `buffer` on queue 0 and waits for it.
    auto run = [&](const std::shared_ptr<CommandBuffer>& cb, const Buffer& buffer) -> Status {
      const Binding table[] = {{&buffer}};
      const SemaphoreValue signal[] = {{done.get(), ++value}};
      CUHAL_RETURN_IF_ERROR(queue.Execute({}, signal, cb, table));
      return done->Wait(value, DeadlineAfter(std::chrono::seconds(60)));
    };
    for (CommandTargetKind target : {CommandTargetKind::kStream, CommandTargetKind::kGraph}) {
      CommandBufferParams params;
      params.mode = CommandBufferMode::kReusable;
      params.binding_capacity = 1;
      params.target = target;
      params.name = StrCat("demo command buffer (", CommandTargetKindName(target), ")");
      CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<CommandBuffer> cb,
                             device.CreateCommandBuffer(params));
      CUHAL_RETURN_IF_ERROR(cb->Dispatch(*exe, 0, config, slot0, n));
      CUHAL_RETURN_IF_ERROR(cb->End());
      CUHAL_RETURN_IF_ERROR(run(cb, b), "running add_one over B");
      if (target == CommandTargetKind::kGraph) {
        CUHAL_RETURN_IF_ERROR(run(cb, a), "re-running add_one over A");
        graph_stats = cb->statistics().target;
      }
    }
    std::vector<unsigned> back_a(kElements, 0);
    CUHAL_RETURN_IF_ERROR(queue.Read(a, 0, WritableBytes(back_a)), "reading A");
    CUHAL_RETURN_IF_ERROR(queue.Read(b, 0, WritableBytes(back)), "reading B");
    CUHAL_RETURN_IF_ERROR(queue.Synchronize(), "waiting for add_one");
    CUHAL_RETURN_IF_ERROR(Verify(back_a, [](std::size_t i) { return static_cast<unsigned>(i + 1); },
                                 "A after add_one (graph, second binding table)"));
  }
  CUHAL_RETURN_IF_ERROR(Verify(back, [](std::size_t i) { return static_cast<unsigned>(i + 2); },
                               "B after add_one (stream, then graph)"));
  if (graph_stats.instantiations != 1 || graph_stats.in_place_updates != 1) {
    return InternalError(StrCat("the graph command buffer was instantiated ",
                                graph_stats.instantiations, " time(s) and updated in place ",
                                graph_stats.in_place_updates, " time(s), expected once each"));
  }
  out << DescribeKernelStep(kernel_module, fake,
                            fakecuda::ptx::TotalInstructions() - instructions_before, graph_stats);

  // 6. What the pools hold now, and after the buffers are freed.
  CUHAL_ASSIGN_OR_RETURN(MemoryPoolsStatistics live, device.QueryPoolStatistics());
  out << "6. Pool statistics with A and B live (reserved memory grows in whole chunks; used is\n"
      << "   the exact bytes of live allocations):\n";
  WritePoolTable(live, out);
  CUHAL_RETURN_IF_ERROR(a.Reset(), "freeing A");
  CUHAL_RETURN_IF_ERROR(b.Reset(), "freeing B");
  CUHAL_RETURN_IF_ERROR(device.Synchronize());
  CUHAL_RETURN_IF_ERROR(device.Trim());
  CUHAL_ASSIGN_OR_RETURN(MemoryPoolsStatistics freed, device.QueryPoolStatistics());
  out << "   After freeing A and B, synchronizing and trimming (the HIGH columns keep the "
      << "peaks):\n";
  WritePoolTable(freed, out);
  const HeapStatistics heap = device.allocator().Statistics().heap(MemoryHeap::kDeviceLocal);
  out << "   Allocator, device-local heap: " << heap.allocations_total << " allocations, "
      << heap.frees_total << " frees, " << heap.buffers_current << " live, peak "
      << FormatBytes(heap.bytes_peak) << ".\n";
  return OkStatus();
}

// 7. Queue operations (Queue::Alloca, Execute, Dealloca) on two queues of one device, ordered only
// by two timeline semaphores: queue 1's work is submitted BEFORE the queue 0 work it consumes, so
// the order cannot come from submission; both buffers are allocated and freed in queue order, and
// the host never synchronizes a stream: it waits for T. Self-contained: opens (and closes) its
// own device 0 with two queues.
Status QueuePipeline(const Driver& driver, std::ostream& out) {
  constexpr unsigned kFillValue = 7;
  constexpr unsigned kWritten = kElements / 2;  // values written over the first half of X
  const std::size_t bytes = kElements * sizeof(unsigned);
  // Host memory the operations read and write: declared before the device, so that it outlives
  // any operation still running when an error returns early (the device's destruction waits for
  // issued operations and fails deferred ones).
  std::vector<unsigned> values(kWritten);
  for (unsigned i = 0; i < kWritten; ++i) values[i] = i;
  std::vector<unsigned> back(kElements, 0);

  DeviceParams params;
  params.queue_count = 2;
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(driver, 0, params),
                         "opening device 0 with two queues");
  if (device->pools() == nullptr) {
    return UnimplementedError("device 0 has no memory pools: queue-ordered allocation needs them");
  }
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> s, device->CreateSemaphore(0));
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> t, device->CreateSemaphore(0));
  Queue& producer = device->queue(0);
  Queue& consumer = device->queue(1);
  const SemaphoreValue s1[] = {{s.get(), 1}};
  const SemaphoreValue s2[] = {{s.get(), 2}};
  const SemaphoreValue t1[] = {{t.get(), 1}};
  const SemaphoreValue t2[] = {{t.get(), 2}};
  const SemaphoreValue t3[] = {{t.get(), 3}};
  const SemaphoreValue t4[] = {{t.get(), 4}};
  const SemaphoreValue s2_t1[] = {{s.get(), 2}, {t.get(), 1}};

  // Queue-ordered buffers: the handles and addresses exist at once, the memory in queue order.
  CUHAL_ASSIGN_OR_RETURN(Buffer x,
                         producer.Alloca({}, s1, MemoryPoolKind::kDeviceLocal, {}, bytes),
                         "queue 0: alloca of X");
  CUHAL_ASSIGN_OR_RETURN(Buffer y, consumer.Alloca({}, t1, MemoryPoolKind::kOther, {}, bytes),
                         "queue 1: alloca of Y");
  // Both batches are recorded now: they keep the buffers' addresses, not the Buffer objects,
  // which the Deallocas take.
  TransferBatch produce;
  CUHAL_RETURN_IF_ERROR(produce.Fill(x, 0, bytes, &kFillValue, sizeof(kFillValue)),
                        "recording the fill of X");
  CUHAL_RETURN_IF_ERROR(produce.Write(Bytes(values), x, 0), "recording the write into X");
  TransferBatch consume;
  CUHAL_RETURN_IF_ERROR(consume.Copy(x, 0, y, 0, bytes), "recording the copy of X to Y");
  CUHAL_RETURN_IF_ERROR(consume.Read(y, 0, WritableBytes(back)), "recording the read of Y");
  // Queue 1, submitted before queue 0's Execute: nothing submitted signals S = 2 yet, so these
  // three wait (deferred) until it is.
  CUHAL_RETURN_IF_ERROR(consumer.Execute(s2_t1, t2, std::move(consume)), "queue 1: execute");
  CUHAL_RETURN_IF_ERROR(consumer.Dealloca(t2, t3, std::move(x)), "queue 1: dealloca of X");
  CUHAL_RETURN_IF_ERROR(consumer.Dealloca(t3, t4, std::move(y)), "queue 1: dealloca of Y");
  const std::size_t deferred = device->queue_scheduler().counts().deferred;
  // Queue 0: the producer, last.
  CUHAL_RETURN_IF_ERROR(producer.Execute(s1, s2, std::move(produce)), "queue 0: execute");
  // The host waits for T only.
  CUHAL_RETURN_IF_ERROR(t->Wait(4, DeadlineAfter(std::chrono::seconds(60))),
                        "waiting for T to reach 4");
  CUHAL_RETURN_IF_ERROR(
      Verify(back,
             [](std::size_t i) { return i < kWritten ? static_cast<unsigned>(i) : kFillValue; },
             "Y read back after the pipeline"));
  if (deferred != 3) {
    return InternalError(StrCat("queue 1's three operations should have been deferred until "
                                "queue 0's Execute was submitted; the scheduler held ",
                                deferred));
  }
  out << "7. Queue operations on two queues of device 0, ordered only by semaphores S and T:\n"
      << "   queue 0: Alloca X (" << FormatBytes(bytes) << ", device-local pool) -> S=1;\n"
      << "            Execute after S>=1: fill X with " << kFillValue << ", write " << kWritten
      << " values (0, 1, 2, ...) into it -> S=2;\n"
      << "   queue 1: Alloca Y (other pool) -> T=1;\n"
      << "            Execute after S>=2, T>=1: copy X to Y, read Y back -> T=2;\n"
      << "            Dealloca X after T>=2 -> T=3; Dealloca Y after T>=3 -> T=4.\n"
      << "   Queue 1's last " << deferred << " operations were submitted before queue 0's Execute "
      << "(deferred until it was);\n"
      << "   the host waited only for T=4: " << kWritten << " values, then " << kElements - kWritten
      << " sevens, read back. Verified.\n";
  return OkStatus();
}

// One rank of the all-reduce, on its own thread: makes its device's channel (the ranks agree on
// the NCCL unique id through the device's channel provider), and sums `send` (rank + 1
// everywhere) into `recv` on the channel's queue.
Status AllReduceRank(Device& device, int rank, std::vector<float>* received) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Channel> channel, device.CreateChannel());
  const std::size_t bytes = kAllReduceElements * sizeof(float);
  CUHAL_ASSIGN_OR_RETURN(Buffer send, device.allocator().Allocate({}, bytes));
  CUHAL_ASSIGN_OR_RETURN(Buffer recv, device.allocator().Allocate({}, bytes));
  Queue& queue = channel->queue();
  std::vector<float> mine(kAllReduceElements, static_cast<float>(rank + 1));
  CUHAL_RETURN_IF_ERROR(queue.Write(std::as_bytes(std::span(mine)), send, 0));
  CUHAL_RETURN_IF_ERROR(channel->AllReduce(send, 0, recv, 0, kAllReduceElements,
                                           DataType::kFloat32, ReductionOp::kSum));
  received->assign(kAllReduceElements, 0.0f);
  CUHAL_RETURN_IF_ERROR(queue.Read(recv, 0, std::as_writable_bytes(std::span(*received))));
  CUHAL_RETURN_IF_ERROR(queue.Synchronize());
  channel.reset();  // channels go before the buffers and the device
  CUHAL_RETURN_IF_ERROR(send.Reset());
  return recv.Reset();
}

// 8. An all-reduce across `ranks` devices, one thread per rank, through core channels
// (Device::CreateChannel over the driver's NCCL table).
Status AllReduce(const Driver& driver, int ranks, std::ostream& out) {
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<InProcessChannelWorld> world,
                         InProcessChannelWorld::Create(ranks));
  std::vector<std::unique_ptr<Device>> devices;
  for (int r = 0; r < ranks; ++r) {
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(driver, r),
                           "opening device ", r, " for rank ", r);
    CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<ChannelProvider> provider, world->ProviderForRank(r));
    device->ReplaceChannelProvider(std::move(provider));
    devices.push_back(std::move(device));
  }
  std::vector<Status> statuses(static_cast<std::size_t>(ranks));
  std::vector<std::vector<float>> received(static_cast<std::size_t>(ranks));
  {
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      threads.emplace_back(
          [&, r, i] { statuses[i] = AllReduceRank(*devices[i], r, &received[i]); });
    }
    for (std::thread& t : threads) t.join();
  }
  for (int r = 0; r < ranks; ++r) {
    CUHAL_RETURN_IF_ERROR(statuses[static_cast<std::size_t>(r)], "all-reduce, rank ", r);
  }
  const float expected = static_cast<float>(ranks * (ranks + 1) / 2);  // 1 + 2 + ... + ranks
  TextTable table({"RANK", "DEVICE", "SENT (EACH VALUE)", "RECEIVED (EACH VALUE)"});
  for (int c = 0; c < 4; ++c) table.AlignRight(static_cast<std::size_t>(c));
  for (int r = 0; r < ranks; ++r) {
    const std::vector<float>& got = received[static_cast<std::size_t>(r)];
    CUHAL_RETURN_IF_ERROR(Verify(got, [expected](std::size_t) { return expected; },
                                 StrCat("all-reduce result of rank ", r)));
    table.AddRow({std::to_string(r), std::to_string(r), StrCat(r + 1), StrCat(got.front())});
  }
  out << "8. All-reduce: " << ranks << " ranks, one thread and one device each. Each rank made a "
      << "channel\n"
      << "   (Device::CreateChannel: an NCCL communicator on its queue; the ranks agreed on the\n"
      << "   unique id through an InProcessChannelWorld) and summed " << kAllReduceElements
      << " floats with\n"
      << "   Channel::AllReduce (ncclAllReduce, sum) on its queue's stream:\n";
  table.Render(out, "   ");
  out << "   Every rank holds " << expected << " in all " << kAllReduceElements
      << " elements: all-reduce result verified.\n";
  return OkStatus();
}

}  // namespace

Status RunDemo(const DemoOptions& options, std::ostream& out) {
  const bool fake = options.backend == BackendKind::kFake;
  out << "cuhal demo: a tour of the device core"
      << (fake ? ", on the fake CUDA driver and fake NCCL (no GPU needed)"
               : ", on the real CUDA driver and NCCL")
      << "\n\n";

  // Without nvcc's PTX the kernel step loads the hand-written sample module, whose kernels run on
  // the fake as registered host functions (fakecuda/sample_kernels.h). With it, nothing is
  // registered: a registered add_one would take priority over the PTX interpreter.
  std::optional<fakecuda::SampleKernels> kernels;
  if (fake && !DemoKernelModule().from_cuda_cpp) kernels.emplace();

  // 1. Tables and driver.
  CudaBinding cuda;
  if (fake) {
    CUHAL_ASSIGN_OR_RETURN(std::vector<fakecuda::DeviceProfile> profiles,
                           FakeDeviceProfiles("", kFakeDevices));
    fakecuda::DriverOptions driver_options;
    driver_options.devices = std::move(profiles);
    CUHAL_ASSIGN_OR_RETURN(cuda, BindFakeCuda(std::move(driver_options)));
  } else {
    CUHAL_ASSIGN_OR_RETURN(cuda, BindCuda(BackendKind::kReal), "--backend real");
  }
  // The NCCL table (the driver hands it to devices, which make channels with it). On the real
  // backend a missing libnccl.so.2 only skips the all-reduce.
  StatusOr<NcclBinding> nccl = BindNccl(options.backend);
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Driver> driver,
                         Driver::Create(cuda.api, nccl.ok() ? nccl->api : nullptr));
  CUHAL_ASSIGN_OR_RETURN(std::vector<DeviceInfo> infos, driver->EnumerateDevices());
  out << "1. Driver: CUDA driver API " << driver->driver_version() << " ("
      << FormatCudaVersion(driver->driver_version()) << ") through the " << cuda.source
      << " table; " << infos.size() << (infos.size() == 1 ? " device" : " devices") << ":\n";
  TextTable devices({"ORDINAL", "NAME", "UUID", "MEMORY", "SMS"});
  devices.AlignRight(0);
  devices.AlignRight(3);
  devices.AlignRight(4);
  for (const DeviceInfo& d : infos) {
    devices.AddRow({std::to_string(d.ordinal), d.name, d.uuid, FormatBytes(d.total_memory),
                    std::to_string(d.multiprocessor_count)});
  }
  devices.Render(out, "   ");

  // 2-6. One device.
  {
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(*driver, 0));
    out << "2. Opened device 0 (" << device->identifier() << "): retained its primary context, "
        << "created " << device->queue_count() << " queue (a\n"
        << "   non-blocking stream) and "
        << (device->pools() != nullptr ? "two memory pools (device-local and other)"
                                       : "no memory pools (the device has none)")
        << ".\n";
    if (device->pools() == nullptr) {
      return UnimplementedError("device 0 has no memory pools: the demo needs them");
    }
    CUHAL_RETURN_IF_ERROR(BuffersKernelAndPools(*device, fake, out));
  }  // the device is closed here: queues, pools, then the primary context

  // 7. Two queues ordered by semaphores.
  CUHAL_RETURN_IF_ERROR(QueuePipeline(*driver, out), "queue pipeline");

  // 8. All-reduce.
  if (nccl.ok()) {
    CUHAL_RETURN_IF_ERROR(AllReduce(*driver, std::min(kMaxRanks, driver->device_count()), out));
  } else {
    out << "8. All-reduce: skipped, NCCL is not available: " << nccl.status().message() << "\n";
  }
  if (fake) {
    const fakenccl::NcclInventory live = fakenccl::Installed()->LiveObjects();
    if (live.Total() != 0) {
      return InternalError(StrCat("the fake NCCL still holds ", live.ToString()));
    }
  }

  // 9. Nothing left behind.
  if (fake) {
    const fakecuda::Inventory live = fakecuda::Installed()->LiveObjects();
    if (live.Total() != 0) {
      return InternalError(StrCat("the fake driver still holds ", live.ToString(), ":\n",
                                  fakecuda::Installed()->LeakReport()));
    }
    out << "9. Closed everything: the fake driver and the fake NCCL hold no live object (no "
        << "leaks).\n";
  } else {
    out << "9. Closed everything.\n";
  }
  return OkStatus();
}

}  // namespace cuhal::cli
