// Copyright 2026 The cuhal Authors.
// The MPI channel provider with ranks as processes: run under `mpirun -np N` (N >= 1; the CTest
// label `mpi` runs N = 2 and N = 4). Every process runs every test, in the same order; each test
// is collective over MPI_COMM_WORLD, and ends with a barrier so that one test's rounds never meet
// the next one's. The id exchange, failures before the exchange (Fail, bad arguments, rank 0's
// ncclGetUniqueId failing on the fake), the agreement after initialization, groups
// (MPI_Comm_split) and a timed-out round; channels of one-process groups on fakecuda + fakenccl
// made through Device::CreateChannel with the provider; and channels spanning the processes on
// fakenccl's communicators across processes (NcclOptions::cross_process: the id rank 0 makes
// names a shared-memory segment; docs/fakenccl.md, "Across processes"): every collective and a
// ring of sends and receives through them, and a fault sweep where one process's fakenccl calls
// fail in turn.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/channel/channel.h"
#include "core/channel/mpi_channel_provider.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "tests/device/test_macros.h"
#include "tests/fakenccl/nccl_support.h"

namespace cuhal {
namespace {

using ::testing::HasSubstr;

int WorldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int WorldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// An id whose bytes say which round and which process made it.
ChannelId MakeId(int round, int maker) {
  ChannelId id{};
  for (std::size_t i = 0; i < id.size(); ++i) {
    id[i] = static_cast<std::byte>((round * 31 + maker * 7 + static_cast<int>(i)) % 251 + 1);
  }
  return id;
}

class MpiChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rank_ = WorldRank();
    size_ = WorldSize();
    MpiChannelOptions options;
    options.timeout = std::chrono::milliseconds(20000);
    StatusOr<std::shared_ptr<MpiChannelProvider>> provider = MpiChannelProvider::Create(options);
    ASSERT_TRUE(provider.ok()) << provider.status();
    provider_ = std::move(provider).value();
  }
  // Every process leaves the test together (and a process that failed an assertion early still
  // reaches this barrier, so the others fail their own checks instead of hanging).
  void TearDown() override {
    provider_.reset();
    MPI_Barrier(MPI_COMM_WORLD);
  }

  int rank_ = 0;
  int size_ = 0;
  std::shared_ptr<MpiChannelProvider> provider_;
};

TEST_F(MpiChannelTest, DefaultRankAndCountAreTheCommunicators) {
  CUHAL_ASSERT_OK_AND_ASSIGN(RankAndCount rc, provider_->QueryDefaultRankAndCount());
  EXPECT_EQ(rc.rank, rank_);
  EXPECT_EQ(rc.count, size_);
  CUHAL_ASSERT_OK_AND_ASSIGN(RankAndCount whole, provider_->GroupRankAndCount(""));
  EXPECT_EQ(whole.rank, rank_);
  EXPECT_EQ(whole.count, size_);
}

TEST_F(MpiChannelTest, RankZerosIdReachesEveryRankRoundAfterRound) {
  for (int round = 0; round < 3; ++round) {
    ChannelId id = rank_ == 0 ? MakeId(round, 0) : ChannelId{};
    CUHAL_ASSERT_OK(provider_->ExchangeId("", rank_, size_, id));
    EXPECT_EQ(id, MakeId(round, 0)) << "round " << round;
  }
}

TEST_F(MpiChannelTest, ChannelRanksMayBeAnyPermutationOfTheProcesses) {
  // Channel rank 0 is the last process: the id comes from it.
  const int channel_rank = size_ - 1 - rank_;
  ChannelId id = channel_rank == 0 ? MakeId(7, rank_) : ChannelId{};
  CUHAL_ASSERT_OK(provider_->ExchangeId("", channel_rank, size_, id));
  EXPECT_EQ(id, MakeId(7, size_ - 1));
}

TEST_F(MpiChannelTest, AFailedRankAbortsTheOthersAndTheNextRoundWorks) {
  for (int failing : {0, size_ - 1}) {
    SCOPED_TRACE(StrCat("rank ", failing, " fails"));
    if (rank_ == failing) {
      provider_->Fail("", rank_, InternalError("device lost before the exchange"));
    } else {
      ChannelId id{};
      Status status = provider_->ExchangeId("", rank_, size_, id);
      EXPECT_EQ(status.code(), StatusCode::kAborted) << status;
      EXPECT_THAT(status.message(), HasSubstr(StrCat("rank ", failing, " of group ''")));
      EXPECT_THAT(status.message(), HasSubstr("INTERNAL: device lost before the exchange"));
    }
    ChannelId id = rank_ == 0 ? MakeId(9, 0) : ChannelId{};
    CUHAL_EXPECT_OK(provider_->ExchangeId("", rank_, size_, id));
    EXPECT_EQ(id, MakeId(9, 0));
  }
}

TEST_F(MpiChannelTest, AWrongCountOnOneRankFailsItAndAbortsTheOthers) {
  const int wrong = size_ - 1;
  ChannelId id = rank_ == 0 ? MakeId(1, 0) : ChannelId{};
  Status status = provider_->ExchangeId("", rank_, rank_ == wrong ? size_ + 1 : size_, id);
  if (rank_ == wrong) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr(StrCat("the group has ", size_, " process(es)")));
  } else {
    EXPECT_EQ(status.code(), StatusCode::kAborted) << status;
    EXPECT_THAT(status.message(), HasSubstr(StrCat("rank ", wrong, " of group ''")));
    EXPECT_THAT(status.message(), HasSubstr("INVALID_ARGUMENT"));
  }
}

TEST_F(MpiChannelTest, TwoProcessesClaimingOneRankFailEveryRank) {
  if (size_ < 2) GTEST_SKIP() << "needs 2 processes";
  ChannelId id = MakeId(2, rank_);
  Status status = provider_->ExchangeId("", rank_ == 1 ? 0 : rank_, size_, id);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("both claim rank 0"));
}

TEST_F(MpiChannelTest, AgreeOnCreationFailsEveryRankWhenOneFailed) {
  CUHAL_EXPECT_OK(provider_->AgreeOnCreation("", rank_, size_, OkStatus()));
  const int failing = size_ - 1;
  const Status mine =
      rank_ == failing ? UnavailableError("ncclCommInitRank: ncclSystemError") : OkStatus();
  Status agreed = provider_->AgreeOnCreation("", rank_, size_, mine);
  if (rank_ == failing) {
    EXPECT_EQ(agreed, mine);
  } else {
    EXPECT_EQ(agreed.code(), StatusCode::kAborted) << agreed;
    EXPECT_THAT(agreed.message(), HasSubstr(StrCat("rank ", failing, " of group ''")));
    EXPECT_THAT(agreed.message(), HasSubstr("ncclCommInitRank: ncclSystemError"));
  }
}

TEST_F(MpiChannelTest, GroupsAreSplitCommunicators) {
  CUHAL_ASSERT_OK(provider_->DefineGroup("parity", rank_ % 2, rank_));
  CUHAL_ASSERT_OK_AND_ASSIGN(RankAndCount rc, provider_->GroupRankAndCount("parity"));
  EXPECT_EQ(rc.rank, rank_ / 2);
  EXPECT_EQ(rc.count, (size_ + 1 - rank_ % 2) / 2);
  // Each group's rank 0 (world ranks 0 and 1) makes its own id.
  ChannelId id = rc.rank == 0 ? MakeId(3, rank_) : ChannelId{};
  CUHAL_ASSERT_OK(provider_->ExchangeId("parity", rc.rank, rc.count, id));
  EXPECT_EQ(id, MakeId(3, rank_ % 2));
  // The whole communicator is still there, and the names are checked.
  ChannelId whole = rank_ == 0 ? MakeId(4, 0) : ChannelId{};
  CUHAL_ASSERT_OK(provider_->ExchangeId("", rank_, size_, whole));
  EXPECT_EQ(whole, MakeId(4, 0));
  EXPECT_EQ(provider_->ExchangeId("nope", 0, 1, id).code(), StatusCode::kNotFound);
  EXPECT_EQ(provider_->GroupRankAndCount("nope").status().code(), StatusCode::kNotFound);
  Status again = provider_->DefineGroup("parity", 0, 0);
  EXPECT_EQ(again.code(), StatusCode::kInvalidArgument) << again;
  EXPECT_THAT(again.message(), HasSubstr("already defined"));
  EXPECT_EQ(provider_->DefineGroup("", 0, 0).code(), StatusCode::kInvalidArgument);
}

TEST_F(MpiChannelTest, AProcessOutsideAGroupCannotUseIt) {
  // Rank 0 alone forms "first"; the others join no group.
  CUHAL_ASSERT_OK(provider_->DefineGroup("first", rank_ == 0 ? 0 : kMpiGroupNoColor, 0));
  if (rank_ == 0) {
    CUHAL_ASSERT_OK_AND_ASSIGN(RankAndCount rc, provider_->GroupRankAndCount("first"));
    EXPECT_EQ(rc.rank, 0);
    EXPECT_EQ(rc.count, 1);
    ChannelId id = MakeId(5, 0);
    CUHAL_EXPECT_OK(provider_->ExchangeId("first", 0, 1, id));
  } else {
    EXPECT_EQ(provider_->GroupRankAndCount("first").status().code(),
              StatusCode::kFailedPrecondition);
    ChannelId id{};
    Status status = provider_->ExchangeId("first", 0, 1, id);
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), HasSubstr("is not in group 'first'"));
  }
}

TEST_F(MpiChannelTest, ABadGroupArgumentOnOneRankFailsTheDefinitionEverywhere) {
  const int bad = size_ - 1;
  Status status = provider_->DefineGroup("bad", rank_ == bad ? -5 : 0, 0);
  if (rank_ == bad) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
  } else {
    EXPECT_EQ(status.code(), StatusCode::kAborted) << status;
    EXPECT_THAT(status.message(), HasSubstr("the color must be >= 0"));
  }
  EXPECT_EQ(provider_->GroupRankAndCount("bad").status().code(), StatusCode::kNotFound);
}

TEST(MpiChannelProviderTest, ARoundNobodyJoinsTimesOutAndBreaksOnlyItsGroup) {
  const int rank = WorldRank();
  const int size = WorldSize();
  if (size < 2) GTEST_SKIP() << "needs 2 processes";
  MpiChannelOptions options;
  options.timeout = std::chrono::milliseconds(300);
  CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<MpiChannelProvider> provider,
                             MpiChannelProvider::Create(options));
  CUHAL_ASSERT_OK(provider->DefineGroup("late", 0, rank));
  if (rank == 0) {
    ChannelId id = MakeId(6, 0);
    const auto start = std::chrono::steady_clock::now();
    Status status = provider->ExchangeId("late", 0, size, id);
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status;
    EXPECT_THAT(status.message(), HasSubstr("did not complete within 300 ms"));
    EXPECT_GE(waited, std::chrono::milliseconds(300));
    EXPECT_LT(waited, std::chrono::milliseconds(10000));
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the others come only after rank 0 gave up
  if (rank == 0) {
    ChannelId id{};
    Status status = provider->ExchangeId("late", 0, size, id);
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), HasSubstr("unusable in this process"));
  } else {
    // Completes rank 0's pending round (it is still matched in MPI).
    provider->Fail("late", rank, InternalError("came too late"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // The whole communicator is unaffected.
  ChannelId id = rank == 0 ? MakeId(8, 0) : ChannelId{};
  CUHAL_EXPECT_OK(provider->ExchangeId("", rank, size, id));
  EXPECT_EQ(id, MakeId(8, 0));
  provider.reset();
  MPI_Barrier(MPI_COMM_WORLD);
}

// Channels through Device::CreateChannel on fakecuda + fakenccl, one fake per process.
class MpiDeviceChannelTest : public MpiChannelTest {
 protected:
  void SetUp() override {
    MpiChannelTest::SetUp();
    if (HasFatalFailure()) return;
    std::string unavailable;
    std::string error;
    backend_ = testing::NcclBackend::Create("fake", {}, &unavailable, &error);
    ASSERT_NE(backend_, nullptr) << error << unavailable;
    StatusOr<std::unique_ptr<Driver>> driver =
        Driver::Create(&backend_->cuda(), &backend_->nccl());
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = std::move(driver).value();
    StatusOr<std::unique_ptr<Device>> device = Device::Create(*driver_, 0);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(device).value();
    device_->ReplaceChannelProvider(provider_);
  }
  void TearDown() override {
    device_.reset();
    driver_.reset();
    backend_.reset();
    MpiChannelTest::TearDown();
  }

  std::unique_ptr<testing::NcclBackend> backend_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;
};

TEST_F(MpiDeviceChannelTest, AOneProcessGroupMakesAWorkingChannel) {
  CUHAL_ASSERT_OK(provider_->DefineGroup("self", rank_, 0));
  CUHAL_ASSERT_OK_AND_ASSIGN(RankAndCount rc, provider_->GroupRankAndCount("self"));
  ChannelParams params;
  params.group = "self";
  params.rank = rc.rank;
  params.count = rc.count;
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Channel> channel, device_->CreateChannel(params));
  EXPECT_EQ(channel->rank(), 0);
  EXPECT_EQ(channel->count(), 1);
  std::vector<float> values(17);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(rank_ * 100 + i);
  const std::size_t bytes = values.size() * sizeof(float);
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer send, device_->allocator().Allocate({}, bytes));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer recv, device_->allocator().Allocate({}, bytes));
  Queue& queue = channel->queue();
  CUHAL_ASSERT_OK(queue.Write(std::as_bytes(std::span(values)), send, 0));
  CUHAL_ASSERT_OK(channel->AllReduce(send, 0, recv, 0, values.size(), DataType::kFloat32,
                                     ReductionOp::kSum));
  std::vector<float> got(values.size(), -1.0f);
  CUHAL_ASSERT_OK(queue.Read(recv, 0, std::as_writable_bytes(std::span(got))));
  CUHAL_ASSERT_OK(queue.Synchronize());
  EXPECT_EQ(got, values);
  channel.reset();
  CUHAL_EXPECT_OK(send.Reset());
  CUHAL_EXPECT_OK(recv.Reset());
}

TEST_F(MpiDeviceChannelTest, RankZerosFailedIdAbortsEveryRanksCreation) {
  if (rank_ == 0) {
    std::string error;
    ASSERT_TRUE(backend_->fake_nccl()->faults().AddRulesFromSpec(
        "ncclGetUniqueId:nth:1:ncclSystemError", &error))
        << error;
  }
  // Default rank, count and id: rank 0 makes the id, which fails on the fake.
  StatusOr<std::unique_ptr<Channel>> channel = device_->CreateChannel();
  ASSERT_FALSE(channel.ok());
  const Status& status = channel.status();
  EXPECT_THAT(status.message(), HasSubstr("ncclSystemError"));
  if (rank_ == 0) {
    EXPECT_THAT(status.message(), HasSubstr("making the channel id as rank 0"));
  } else {
    EXPECT_EQ(status.code(), StatusCode::kAborted) << status;
    EXPECT_THAT(status.message(), HasSubstr("rank 0 of group ''"));
  }
}

TEST_F(MpiDeviceChannelTest, ABadArgumentOnOneRankAbortsTheOthersWithoutWaiting) {
  const int bad = size_ - 1;
  ChannelParams params;
  if (rank_ == bad) params.queue_affinity = 0x2;  // the device has one queue
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::unique_ptr<Channel>> channel = device_->CreateChannel(params);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(channel.ok());
  const Status& status = channel.status();
  if (rank_ == bad) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
  } else {
    EXPECT_EQ(status.code(), StatusCode::kAborted) << status;
    EXPECT_THAT(status.message(), HasSubstr(StrCat("rank ", bad, " of group ''")));
  }
  EXPECT_THAT(status.message(), HasSubstr("queue affinity 0x2"));
  // Reported, not timed out (the provider's timeout is 20 s).
  EXPECT_LT(waited, std::chrono::seconds(10));
}

// Channels of one-process groups (which each process's fake can make), with every step of their
// creation agreed on over the whole communicator (""), as the steps of one channel spanning the
// processes would be: the exchange of the one-process group, then one world round of its outcome;
// Fail, one world round as a failure; AgreeOnCreation, a world round. So every process takes the
// same decision about every creation. With `fail_last_init`, the last process's initialization
// is replaced by a failure.
class AgreeAcrossTheWorld final : public ChannelProvider {
 public:
  AgreeAcrossTheWorld(std::shared_ptr<MpiChannelProvider> mpi, bool fail_last_init)
      : mpi_(std::move(mpi)), fail_last_init_(fail_last_init) {}
  StatusOr<RankAndCount> QueryDefaultRankAndCount() override {
    return mpi_->QueryDefaultRankAndCount();
  }
  Status ExchangeId(std::string_view group, int rank, int count, ChannelId& id) override {
    const Status mine = mpi_->ExchangeId(group, rank, count, id);
    return mpi_->AgreeOnCreation("", WorldRank(), WorldSize(), mine);
  }
  void Fail(std::string_view group, int rank, const Status& status) override {
    mpi_->Fail(group, rank, status);
    mpi_->AgreeOnCreation("", WorldRank(), WorldSize(), status).IgnoreError();
  }
  Status AgreeOnCreation(std::string_view, int, int, const Status& created) override {
    const int rank = WorldRank();
    const int size = WorldSize();
    const Status mine = fail_last_init_ && rank == size - 1 && created.ok()
                            ? InternalError("injected: ncclCommInitRank failed here")
                            : created;
    return mpi_->AgreeOnCreation("", rank, size, mine);
  }

 private:
  std::shared_ptr<MpiChannelProvider> mpi_;
  const bool fail_last_init_;
};

// Runs one channel's life on `device` (a one-process group "self" made through `provider`):
// creation, an all-reduce, destruction. Whether the creation succeeded goes to *created.
Status ChannelLife(Device& device, bool* created) {
  ChannelParams params;
  params.group = "self";
  params.rank = 0;
  params.count = 1;
  StatusOr<std::unique_ptr<Channel>> channel = device.CreateChannel(params);
  *created = channel.ok();
  CUHAL_RETURN_IF_ERROR(channel.status());
  constexpr std::size_t kCount = 8;
  CUHAL_ASSIGN_OR_RETURN(Buffer buffer, device.allocator().Allocate({}, kCount * sizeof(float)));
  Status used = (*channel)->AllReduce(buffer, 0, buffer, 0, kCount, DataType::kFloat32,
                                      ReductionOp::kSum);
  if (used.ok()) used = (*channel)->queue().Synchronize();
  channel->reset();  // before the buffer it used
  Status freed = buffer.Reset();
  CUHAL_RETURN_IF_ERROR(used);
  return freed;
}

// Arms one step of a fault sweep: counters reset and rules cleared; on process `faulty` (when
// this is `rank`), its n-th fakenccl call fails with ncclSystemError.
::testing::AssertionResult ArmSweepFault(fakenccl::NcclFaultInjector& faults, int rank,
                                         int faulty, std::uint64_t n) {
  faults.ClearRules();
  faults.ResetCounters();
  if (rank != faulty) return ::testing::AssertionSuccess();
  std::string error;
  if (!faults.AddRulesFromSpec(StrCat("*:nth:", n, ":ncclSystemError"), &error)) {
    return ::testing::AssertionFailure() << error;
  }
  return ::testing::AssertionSuccess();
}

// The fault sweep: on each process in turn, the n-th fakenccl call of a channel's life fails
// (ncclSystemError), for n = 1, 2, ... until the life makes fewer than n calls there. Every
// process must take the same decision about the creation (all made the channel or none did), a
// failed creation must name the injected fault on every process, and no communicator may leak.
TEST_F(MpiDeviceChannelTest, FaultSweepOneProcesssCallsFailInTurn) {
  CUHAL_ASSERT_OK(provider_->DefineGroup("self", rank_, 0));
  device_->ReplaceChannelProvider(
      std::make_shared<AgreeAcrossTheWorld>(provider_, /*fail_last_init=*/false));
  fakenccl::NcclFaultInjector& faults = backend_->fake_nccl()->faults();
  int failed_creations = 0;
  int runs = 0;
  for (int faulty = 0; faulty < size_; ++faulty) {
    for (std::uint64_t n = 1;; ++n) {
      SCOPED_TRACE(StrCat("call ", n, " of process ", faulty, " fails"));
      ASSERT_LT(n, 100u) << "the sweep does not end";
      ASSERT_TRUE(ArmSweepFault(faults, rank_, faulty, n));
      bool created = false;
      const Status life = ChannelLife(*device_, &created);
      const bool fired = faults.injected() > 0;
      faults.ClearRules();
      if (!created) {
        ++failed_creations;
        EXPECT_THAT(life.message(), HasSubstr("ncclSystemError")) << life;
        if (rank_ != faulty) {
          EXPECT_EQ(life.code(), StatusCode::kAborted) << life;
        }
      } else if (rank_ != faulty) {
        CUHAL_EXPECT_OK(life);
      }
      EXPECT_EQ(backend_->fake_nccl()->LiveObjects().communicators, 0);
      int mine[2] = {created ? 1 : 0, -(created ? 1 : 0)};  // max and -min in one MPI_MAX
      int all[2] = {0, 0};
      MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(all[0], -all[1]) << "the processes disagree on whether the channel was made";
      int more = fired ? 1 : 0;  // the fault fired: the life had an n-th call; try n + 1
      int any_more = 0;
      MPI_Allreduce(&more, &any_more, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      ++runs;
      if (any_more == 0) break;
    }
  }
  std::printf("process %d: fault sweep of %d run(s), %d failed creation(s) here\n", rank_, runs,
              failed_creations);
  EXPECT_GT(failed_creations, 0) << "no injected fault ever failed a creation";
  EXPECT_GT(runs, 2 * size_) << "the life of a channel makes more than one call per process";
}

TEST_F(MpiDeviceChannelTest, AFailedInitializationOnOneRankAbortsEveryRanksChannel) {
  CUHAL_ASSERT_OK(provider_->DefineGroup("self", rank_, 0));
  device_->ReplaceChannelProvider(
      std::make_shared<AgreeAcrossTheWorld>(provider_, /*fail_last_init=*/true));
  ChannelParams params;
  params.group = "self";
  params.rank = 0;
  params.count = 1;
  StatusOr<std::unique_ptr<Channel>> channel = device_->CreateChannel(params);
  ASSERT_FALSE(channel.ok());
  const Status& status = channel.status();
  EXPECT_THAT(status.message(), HasSubstr("creating channel on device"));
  EXPECT_THAT(status.message(), HasSubstr("injected: ncclCommInitRank failed here"));
  if (rank_ == size_ - 1) {
    EXPECT_EQ(status.code(), StatusCode::kInternal) << status;
  } else {
    EXPECT_EQ(status.code(), StatusCode::kAborted) << status;
    EXPECT_THAT(status.message(), HasSubstr(StrCat("rank ", size_ - 1, " of group ''")));
  }
  // No process keeps a communicator (the ones made were aborted).
  EXPECT_EQ(backend_->fake_nccl()->LiveObjects().communicators, 0);
}

// Channels spanning every process: fakenccl's ids are cross-process ones, so the id rank 0 makes
// (and the provider broadcasts) joins the processes into one fake communicator.
class MpiCrossProcessChannelTest : public MpiChannelTest {
 protected:
  void SetUp() override { Start(/*wall_timeout_ms=*/30000); }
  void Start(std::uint64_t wall_timeout_ms) {
    MpiChannelTest::SetUp();
    if (HasFatalFailure()) return;
    testing::NcclBackendOptions options;
    options.nccl.cross_process = true;
    options.nccl.wall_timeout_ms = wall_timeout_ms;
    std::string unavailable;
    std::string error;
    backend_ = testing::NcclBackend::Create("fake", options, &unavailable, &error);
    ASSERT_NE(backend_, nullptr) << error << unavailable;
    CUHAL_ASSERT_OK_AND_ASSIGN(driver_, Driver::Create(&backend_->cuda(), &backend_->nccl()));
    CUHAL_ASSERT_OK_AND_ASSIGN(device_, Device::Create(*driver_, 0));
    device_->ReplaceChannelProvider(provider_);
  }
  void TearDown() override {
    device_.reset();
    driver_.reset();
    backend_.reset();
    MpiChannelTest::TearDown();
  }

  std::unique_ptr<testing::NcclBackend> backend_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Device> device_;
};

// Rank q's value i (small integers: every sum, product and average below is exact).
float Value(int q, std::size_t i) { return static_cast<float>((q * 7 + static_cast<int>(i) * 3) % 5); }

TEST_F(MpiCrossProcessChannelTest, OneChannelOverEveryProcessRunsEveryCollective) {
  CUHAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Channel> channel, device_->CreateChannel());
  ASSERT_EQ(channel->rank(), rank_);
  ASSERT_EQ(channel->count(), size_);
  const auto n = static_cast<std::size_t>(size_);
  constexpr std::size_t kCount = 300001;  // more than one chunk of the transport's staging
  const std::size_t bytes = kCount * sizeof(float);
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer send, device_->allocator().Allocate({}, bytes * n));
  CUHAL_ASSERT_OK_AND_ASSIGN(Buffer recv, device_->allocator().Allocate({}, bytes * n));
  Queue& queue = channel->queue();
  std::vector<float> mine(kCount * n);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = Value(rank_, i);
  std::vector<float> got(kCount * n);
  auto fetch = [&](std::size_t elements) -> Status {
    CUHAL_RETURN_IF_ERROR(queue.Read(recv, 0, std::as_writable_bytes(std::span(got.data(), elements))));
    CUHAL_RETURN_IF_ERROR(queue.Synchronize());
    return channel->QueryAsyncError();
  };
  CUHAL_ASSERT_OK(queue.Write(std::as_bytes(std::span(mine)), send, 0));
  int checked = 0;
  auto expect_all = [&](std::size_t elements, const std::function<float(std::size_t)>& want,
                        const char* what) {
    ++checked;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < elements; ++i) {
      if (got[i] != want(i) && ++bad <= 3) {
        ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << want(i);
      }
    }
  };
  // AllReduce (sum), every process's inputs added in rank order.
  CUHAL_ASSERT_OK(channel->AllReduce(send, 0, recv, 0, kCount, DataType::kFloat32,
                                     ReductionOp::kSum));
  CUHAL_ASSERT_OK(fetch(kCount));
  expect_all(kCount, [&](std::size_t i) {
    float s = 0;
    for (int q = 0; q < size_; ++q) s += Value(q, i);
    return s;
  }, "AllReduce");
  // Broadcast from the last process.
  CUHAL_ASSERT_OK(channel->Broadcast(send, 0, recv, 0, kCount, DataType::kFloat32, size_ - 1));
  CUHAL_ASSERT_OK(fetch(kCount));
  expect_all(kCount, [&](std::size_t i) { return Value(size_ - 1, i); }, "Broadcast");
  // Reduce (max) to process 0.
  CUHAL_ASSERT_OK(channel->Reduce(send, 0, recv, 0, kCount, DataType::kFloat32, ReductionOp::kMax,
                                  0));
  CUHAL_ASSERT_OK(fetch(kCount));
  if (rank_ == 0) {
    expect_all(kCount, [&](std::size_t i) {
      float m = Value(0, i);
      for (int q = 1; q < size_; ++q) m = std::max(m, Value(q, i));
      return m;
    }, "Reduce");
  }
  // AllGather: block q is process q's first kCount values.
  CUHAL_ASSERT_OK(channel->AllGather(send, 0, recv, 0, kCount, DataType::kFloat32));
  CUHAL_ASSERT_OK(fetch(kCount * n));
  expect_all(kCount * n, [&](std::size_t i) { return Value(static_cast<int>(i / kCount), i % kCount); },
             "AllGather");
  // ReduceScatter (average): process r gets the average of everyone's block r.
  CUHAL_ASSERT_OK(channel->ReduceScatter(send, 0, recv, 0, kCount, DataType::kFloat32,
                                         ReductionOp::kAverage));
  CUHAL_ASSERT_OK(fetch(kCount));
  expect_all(kCount, [&](std::size_t i) {
    float s = 0;
    for (int q = 0; q < size_; ++q) s += Value(q, static_cast<std::size_t>(rank_) * kCount + i);
    return s * (1.0f / static_cast<float>(size_));
  }, "ReduceScatter");
  // A ring of sends and receives in one group.
  {
    CUHAL_ASSERT_OK_AND_ASSIGN(ChannelGroup group, ChannelGroup::Begin(device_->nccl_api()));
    CUHAL_ASSERT_OK(channel->Send(send, 0, kCount, DataType::kFloat32, (rank_ + 1) % size_));
    CUHAL_ASSERT_OK(channel->Recv(recv, 0, kCount, DataType::kFloat32, (rank_ + size_ - 1) % size_));
    CUHAL_ASSERT_OK(group.End());
  }
  CUHAL_ASSERT_OK(fetch(kCount));
  expect_all(kCount, [&](std::size_t i) { return Value((rank_ + size_ - 1) % size_, i); },
             "send/recv ring");
  EXPECT_EQ(checked, rank_ == 0 ? 6 : 5);  // the Reduce's result is on process 0 only
  channel.reset();
  CUHAL_EXPECT_OK(send.Reset());
  CUHAL_EXPECT_OK(recv.Reset());
  EXPECT_EQ(backend_->fake_nccl()->LiveObjects().communicators, 0);
}

// A shorter backstop for the sweep: a process whose ncclCommInitRank fails never joins, and the
// others' initialization waits that long for it.
class MpiCrossProcessSweepTest : public MpiCrossProcessChannelTest {
 protected:
  void SetUp() override { Start(/*wall_timeout_ms=*/2000); }
};

// One life of a channel over every process: creation, an all-reduce, its completion and error,
// destruction (an abort when something failed). Whether the creation succeeded goes to *created.
Status WorldChannelLife(Device& device, bool* created) {
  StatusOr<std::unique_ptr<Channel>> channel = device.CreateChannel();
  *created = channel.ok();
  CUHAL_RETURN_IF_ERROR(channel.status());
  constexpr std::size_t kCount = 1000;
  CUHAL_ASSIGN_OR_RETURN(Buffer buffer, device.allocator().Allocate({}, kCount * sizeof(float)));
  Status used = (*channel)->AllReduce(buffer, 0, buffer, 0, kCount, DataType::kFloat32,
                                      ReductionOp::kSum);
  if (used.ok()) used = (*channel)->queue().Synchronize();
  if (used.ok()) used = (*channel)->QueryAsyncError();
  if (!used.ok()) (*channel)->Abort().IgnoreError();  // a broken communicator is aborted
  channel->reset();
  Status freed = buffer.Reset();
  CUHAL_RETURN_IF_ERROR(used);
  return freed;
}

// The fault sweep over a channel spanning the processes: on each process in turn, its n-th
// fakenccl call fails (ncclSystemError), n = 1, 2, ... until its life makes fewer calls. No
// process may hang or crash; the faulty process's life must fail whenever the fault fired there;
// no communicator may leak; and the next run works (each run is a fresh channel).
TEST_F(MpiCrossProcessSweepTest, FaultSweepOneProcesssCallsFailInTurnOnAChannelOverAllOfThem) {
  fakenccl::NcclFaultInjector& faults = backend_->fake_nccl()->faults();
  faults.EnableCallLog(true);
  int runs = 0;
  int failed_lives = 0;
  for (int faulty = 0; faulty < size_; ++faulty) {
    for (std::uint64_t n = 1;; ++n) {
      SCOPED_TRACE(StrCat("call ", n, " of process ", faulty, " fails"));
      ASSERT_LT(n, 100u) << "the sweep does not end";
      ASSERT_TRUE(ArmSweepFault(faults, rank_, faulty, n));
      bool created = false;
      const Status life = WorldChannelLife(*device_, &created);
      const bool fired = faults.injected() > 0;
      const std::vector<std::string> log = faults.CallLog();
      faults.ClearRules();
      if (fired) {
        ASSERT_GE(log.size(), n);
        // The one documented recovery: a failed ncclCommDestroy makes the channel abort its
        // communicator instead (reported through ReportDroppedStatus, not to the caller).
        if (log[n - 1] == "ncclCommDestroy") {
          CUHAL_EXPECT_OK(life);
        } else {
          EXPECT_FALSE(life.ok()) << "the injected failure of " << log[n - 1]
                                  << " went unreported";
        }
      }
      if (!life.ok()) ++failed_lives;
      EXPECT_EQ(backend_->fake_nccl()->LiveObjects().communicators, 0);
      int more = fired ? 1 : 0;
      int any_more = 0;
      MPI_Allreduce(&more, &any_more, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      ++runs;
      if (any_more == 0) break;
    }
  }
  // The next, unfaulted life works on every process.
  bool created = false;
  CUHAL_EXPECT_OK(WorldChannelLife(*device_, &created));
  std::printf("process %d: fault sweep over a channel of %d processes: %d run(s), %d failed "
              "here\n", rank_, size_, runs, failed_lives);
  EXPECT_GT(failed_lives, 0);
  EXPECT_GT(runs, 2 * size_);
}

}  // namespace
}  // namespace cuhal

// MPI around GoogleTest: every process runs the same tests; the job fails when any process does
// (mpirun returns the first non-zero exit status).
int main(int argc, char** argv) {
  cuhal::StatusOr<cuhal::MpiSession> session = cuhal::MpiSession::Initialize(&argc, &argv);
  if (!session.ok()) {
    std::fprintf(stderr, "mpi_channel_test: %s\n", session.status().ToString().c_str());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  return result;
}
