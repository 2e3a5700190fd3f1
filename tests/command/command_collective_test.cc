// Copyright 2026 The cuhal Authors.
// Collectives recorded in command buffers (CommandBuffer::Collective) and submitted with
// Queue::Execute, ranks as threads (one device each), over every command target: against
// fakecuda + fakenccl (label "fake"; 1 and 2 ranks) and against the installed libcuda + libnccl
// (label "real"; 1 rank). Each result is checked against a host reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "core/channel/channel_provider.h"
#include "core/command/command_buffer.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "tests/command/command_targets.h"
#include "tests/fakenccl/nccl_support.h"

namespace cuhal {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// The rank counts this executable runs: one rank on the real flavour, 1 and 2 on the fakes.
std::vector<int> RankCounts() {
  if (testing::CompiledFlavour().real) return {1};
  return {1, 2};
}
constexpr std::size_t kElements = 33;

std::vector<Status> RunRanks(int n, const std::function<Status(int)>& body) {
  std::vector<Status> statuses(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { statuses[static_cast<std::size_t>(r)] = body(r); });
  }
  for (std::thread& t : threads) t.join();
  return statuses;
}

std::string Describe(const std::vector<Status>& statuses) {
  std::ostringstream os;
  for (std::size_t r = 0; r < statuses.size(); ++r) os << "\n  rank " << r << ": " << statuses[r];
  return os.str();
}

bool AllOk(const std::vector<Status>& statuses) {
  for (const Status& s : statuses) {
    if (!s.ok()) return false;
  }
  return true;
}

std::vector<float> Input(int rank) {
  std::vector<float> v(kElements);
  for (std::size_t i = 0; i < kElements; ++i) v[i] = static_cast<float>(rank * 10 + (i % 5) + 1);
  return v;
}

class CommandCollectiveTest : public testing::NcclBackendTest {
 protected:
  testing::NcclBackendOptions Options() const override {
    testing::NcclBackendOptions options;
    options.device_count = 2;
    return options;
  }
  void SetUp() override {
    testing::NcclBackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    StatusOr<std::unique_ptr<Driver>> driver = Driver::Create(&cuda(), &nccl());
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = std::move(driver).value();
  }
  void TearDown() override {
    driver_.reset();
    testing::NcclBackendTest::TearDown();
  }
  std::unique_ptr<Driver> driver_;
};

// Per rank: an all-reduce (sum) then an all-gather, recorded once in a reusable command buffer
// whose send/recv buffers are binding slots, and submitted twice with different buffers.
TEST_P(CommandCollectiveTest, RecordedAllReduceAndAllGatherMatchTheHostReference) {
  for (const testing::CommandTargetCase& target : testing::CommandTargets()) {
    SCOPED_TRACE(target.name);
    for (int n : RankCounts()) {
      SCOPED_TRACE(StrCat(n, " rank(s)"));
      StatusOr<std::shared_ptr<InProcessChannelWorld>> world = InProcessChannelWorld::Create(n);
      ASSERT_TRUE(world.ok()) << world.status();
      const std::vector<Status> statuses = RunRanks(n, [&](int r) -> Status {
        CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(*driver_, r));
        CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<ChannelProvider> provider,
                               (*world)->ProviderForRank(r));
        device->ReplaceChannelProvider(std::move(provider));
        CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Channel> channel, device->CreateChannel());
        const std::size_t bytes = kElements * sizeof(float);
        CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<CommandBuffer> cb,
                               CommandBuffer::Create(device->cuda_api(),
                                                     testing::TargetParams(
                                                         target, CommandBufferMode::kReusable,
                                                         3)));
        // slot 0: input; slot 1: the sum (in place over a copy); slot 2: the gathered sums.
        CUHAL_RETURN_IF_ERROR(cb->Copy(BufferRef::Slot(0, 0, bytes), BufferRef::Slot(1, 0, bytes)));
        CUHAL_RETURN_IF_ERROR(cb->Collective(*channel, CollectiveKind::kAllReduce,
                                             BufferRef::Slot(1), BufferRef::Slot(1), kElements,
                                             DataType::kFloat32, ReductionOp::kSum));
        CUHAL_RETURN_IF_ERROR(cb->Collective(*channel, CollectiveKind::kAllGather,
                                             BufferRef::Slot(1), BufferRef::Slot(2), kElements,
                                             DataType::kFloat32));
        CUHAL_RETURN_IF_ERROR(cb->End());
        Queue& queue = channel->queue();
        CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<Semaphore> done, device->CreateSemaphore(0));
        std::vector<float> want_sum(kElements, 0.0f);
        for (int p = 0; p < n; ++p) {
          const std::vector<float> in = Input(p);
          for (std::size_t i = 0; i < kElements; ++i) want_sum[i] += in[i];
        }
        for (std::uint64_t round = 1; round <= 2; ++round) {
          CUHAL_ASSIGN_OR_RETURN(Buffer in, device->allocator().Allocate({}, bytes));
          CUHAL_ASSIGN_OR_RETURN(Buffer sum, device->allocator().Allocate({}, bytes));
          CUHAL_ASSIGN_OR_RETURN(Buffer all, device->allocator().Allocate({}, bytes * n));
          const std::vector<float> input = Input(r);
          CUHAL_RETURN_IF_ERROR(queue.Write(std::as_bytes(std::span(input)), in, 0));
          CUHAL_RETURN_IF_ERROR(queue.Synchronize());
          const Binding table[] = {{&in}, {&sum}, {&all}};
          const SemaphoreValue signal[] = {{done.get(), round}};
          CUHAL_RETURN_IF_ERROR(queue.Execute({}, signal, cb, table));
          CUHAL_RETURN_IF_ERROR(done->Wait(round, DeadlineAfter(60s)));
          std::vector<float> gathered(kElements * static_cast<std::size_t>(n));
          CUHAL_RETURN_IF_ERROR(queue.Read(all, 0, std::as_writable_bytes(std::span(gathered))));
          CUHAL_RETURN_IF_ERROR(queue.Synchronize());
          for (std::size_t i = 0; i < gathered.size(); ++i) {
            if (gathered[i] != want_sum[i % kElements]) {
              return InternalError(StrCat("round ", round, ": element ", i, " is ", gathered[i],
                                          ", expected ", want_sum[i % kElements]));
            }
          }
        }
        // The graph target split the list at the collectives: one graph (the copy) launched per
        // submission, the collectives issued on the stream after it.
        const CommandTargetStatistics stats = cb->statistics().target;
        if (target.kind == CommandTargetKind::kGraph &&
            (stats.instantiations != 1 || stats.launches != 2)) {
          return InternalError(StrCat("graph target: ", stats.instantiations,
                                      " instantiation(s), ", stats.launches, " launch(es)"));
        }
        return OkStatus();
      });
      EXPECT_TRUE(AllOk(statuses)) << Describe(statuses);
    }
  }
}

TEST_P(CommandCollectiveTest, CollectiveRecordingChecksItsArguments) {
  StatusOr<std::shared_ptr<InProcessChannelWorld>> world = InProcessChannelWorld::Create(1);
  ASSERT_TRUE(world.ok()) << world.status();
  StatusOr<std::unique_ptr<Device>> device = [&]() -> StatusOr<std::unique_ptr<Device>> {
    DeviceParams params;
    params.queue_count = 2;
    return Device::Create(*driver_, 0, params);
  }();
  ASSERT_TRUE(device.ok()) << device.status();
  StatusOr<std::shared_ptr<ChannelProvider>> provider = (*world)->ProviderForRank(0);
  ASSERT_TRUE(provider.ok());
  (*device)->ReplaceChannelProvider(*provider);
  StatusOr<std::unique_ptr<Channel>> channel = (*device)->CreateChannel();
  ASSERT_TRUE(channel.ok()) << channel.status();
  for (const testing::CommandTargetCase& target : testing::CommandTargets()) {
    SCOPED_TRACE(target.name);
    StatusOr<Buffer> small = (*device)->allocator().Allocate({}, 64);
    ASSERT_TRUE(small.ok());
    StatusOr<std::shared_ptr<CommandBuffer>> cb =
        CommandBuffer::Create((*device)->cuda_api(), testing::TargetParams(target));
    ASSERT_TRUE(cb.ok());
    // 32 floats do not fit 64 bytes.
    EXPECT_EQ((*cb)->Collective(**channel, CollectiveKind::kAllReduce, BufferRef::Direct(*small),
                                BufferRef::Direct(*small), 32, DataType::kFloat32)
                  .code(),
              StatusCode::kOutOfRange);
    EXPECT_EQ((*cb)->Collective(**channel, CollectiveKind::kBroadcast, BufferRef::Direct(*small),
                                BufferRef::Direct(*small), 4, DataType::kFloat32,
                                ReductionOp::kSum, 3)
                  .code(),
              StatusCode::kInvalidArgument);  // root outside [0, 1)
    ASSERT_TRUE((*cb)->Collective(**channel, CollectiveKind::kAllReduce,
                                  BufferRef::Direct(*small), BufferRef::Direct(*small), 16,
                                  DataType::kFloat32)
                    .ok());
    ASSERT_TRUE((*cb)->End().ok());
    // The channel enqueues on queue 0: a submission to queue 1 is refused, nothing submitted.
    const Status other = (*device)->queue(1).Execute({}, {}, *cb);
    EXPECT_EQ(other.code(), StatusCode::kFailedPrecondition) << other;
    EXPECT_THAT(other.message(), HasSubstr("queue 0"));
    EXPECT_EQ((*cb)->statistics().submissions, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CommandCollectiveTest,
                         ::testing::ValuesIn(testing::CompiledNcclBackends()),
                         testing::BackendParamName);

}  // namespace
}  // namespace cuhal
