// Copyright 2026 The cuhal Authors.
// Channel conformance: Device::CreateChannel through the in-process provider, every collective
// checked against host-computed references, Split, a grouped send/recv ring, Abort, and every
// CreateChannel error, with ranks as threads (one device per rank).
//
// One source, two executables: against fakecuda + fakenccl (label "fake"; 1, 2 and 4 ranks) and
// against the installed driver + libnccl.so.2 (label "real"; 1 rank on GPU 0, skipped with the
// reason printed when there is no GPU, libcuda or libnccl, failed instead when
// CUHAL_REAL_REQUIRED=1). RankCounts() lists the rank counts an executable runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/channel/channel.h"
#include "core/channel/channel_provider.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "tests/device/test_macros.h"
#include "tests/fakenccl/nccl_support.h"

namespace cuhal {
namespace {

using ::testing::HasSubstr;

// The rank counts this executable runs: one rank (GPU 0) on the real flavour, 1, 2 and 4 on the
// fakes.
std::vector<int> RankCounts() {
  if (testing::CompiledFlavour().real) return {1};
  return {1, 2, 4};
}
constexpr int kMaxRanks = 4;
constexpr std::size_t kElements = 37;  // odd, so that nothing lines up by accident

// Runs body(rank) on `n` threads at once and returns each rank's status.
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

#define EXPECT_ALL_OK(statuses)                                                   \
  do {                                                                            \
    const std::vector<::cuhal::Status>& all_ = (statuses);                        \
    bool ok_ = true;                                                              \
    for (const ::cuhal::Status& s_ : all_) ok_ = ok_ && s_.ok();                  \
    EXPECT_TRUE(ok_) << Describe(all_);                                           \
  } while (false)

// One rank: its device and its channel (declared in this order, so the channel goes first).
struct Rank {
  std::unique_ptr<Device> device;
  std::unique_ptr<Channel> channel;
};

// Opens device `rank` with rank `rank`'s provider of `world` and creates the channel (default
// rank, count and id). A failure before the exchange is reported to the world.
StatusOr<Rank> OpenRank(const Driver& driver, InProcessChannelWorld& world, int rank,
                        const std::string& group = "") {
  Rank out;
  StatusOr<std::unique_ptr<Device>> device = Device::Create(driver, rank);
  if (!device.ok()) {
    world.Fail(group, rank, device.status());
    return device.status();
  }
  out.device = std::move(device).value();
  CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<ChannelProvider> provider, world.ProviderForRank(rank));
  out.device->ReplaceChannelProvider(std::move(provider));
  ChannelParams params;
  params.group = group;
  CUHAL_ASSIGN_OR_RETURN(out.channel, out.device->CreateChannel(params));
  return out;
}

template <typename T>
StatusOr<Buffer> Upload(Device& device, const std::vector<T>& values, std::size_t extra = 0) {
  CUHAL_ASSIGN_OR_RETURN(Buffer buffer,
                         device.allocator().Allocate({}, values.size() * sizeof(T) + extra));
  CUHAL_RETURN_IF_ERROR(device.queue(0).Write(std::as_bytes(std::span(values)), buffer, 0));
  CUHAL_RETURN_IF_ERROR(device.queue(0).Synchronize());  // `values` may be a temporary
  return buffer;
}

template <typename T>
StatusOr<Buffer> Zeros(Device& device, std::size_t n) {
  return Upload(device, std::vector<T>(n, T{}));
}

template <typename T>
StatusOr<std::vector<T>> Download(Queue& queue, const Buffer& buffer, std::size_t n) {
  std::vector<T> out(n);
  CUHAL_RETURN_IF_ERROR(queue.Read(buffer, 0, std::as_writable_bytes(std::span(out))));
  CUHAL_RETURN_IF_ERROR(queue.Synchronize());
  return out;
}

template <typename T>
Status ExpectEqual(std::string_view what, const std::vector<T>& got, const std::vector<T>& want) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      return InternalError(StrCat(what, ": element ", i, " is ", +got[i], ", expected ",
                                  +want[i]));
    }
  }
  return OkStatus();
}

// Rank r's input: small integers (exact in every type used here).
template <typename T>
std::vector<T> Input(int rank, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(rank * 3 + static_cast<int>(i % 7) + 1);
  return v;
}

class ChannelTest : public testing::NcclBackendTest {
 protected:
  testing::NcclBackendOptions Options() const override {
    testing::NcclBackendOptions options;
    options.device_count = kMaxRanks;
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

  std::shared_ptr<InProcessChannelWorld> World(int n) {
    StatusOr<std::shared_ptr<InProcessChannelWorld>> world = InProcessChannelWorld::Create(n);
    EXPECT_TRUE(world.ok()) << world.status();
    return world.ok() ? std::move(world).value() : nullptr;
  }

  // Runs body(rank, channel) on `n` ranks with a freshly created channel each.
  std::vector<Status> WithChannels(int n, const std::function<Status(int, Rank&)>& body) {
    std::shared_ptr<InProcessChannelWorld> world = World(n);
    if (world == nullptr) return {InternalError("no world")};
    return RunRanks(n, [&](int r) -> Status {
      CUHAL_ASSIGN_OR_RETURN(Rank rank, OpenRank(*driver_, *world, r));
      if (rank.channel->rank() != r || rank.channel->count() != n) {
        return InternalError(StrCat("channel says rank ", rank.channel->rank(), " of ",
                                    rank.channel->count()));
      }
      return body(r, rank);
    });
  }

  std::unique_ptr<Driver> driver_;
};

TEST_P(ChannelTest, AllReduceMatchesHostReference) {
  for (int n : RankCounts()) {
    SCOPED_TRACE(StrCat(n, " rank(s)"));
    EXPECT_ALL_OK(WithChannels(n, [n](int r, Rank& rank) -> Status {
      Device& device = *rank.device;
      Channel& channel = *rank.channel;
      // float32 sum, in place.
      CUHAL_ASSIGN_OR_RETURN(Buffer f, Upload(device, Input<float>(r, kElements)));
      CUHAL_RETURN_IF_ERROR(
          channel.AllReduce(f, 0, f, 0, kElements, DataType::kFloat32, ReductionOp::kSum));
      // int32 max, out of place, at offsets.
      CUHAL_ASSIGN_OR_RETURN(Buffer in, Upload(device, Input<std::int32_t>(r, kElements), 8));
      CUHAL_ASSIGN_OR_RETURN(Buffer out, Zeros<std::int32_t>(device, kElements + 1));
      // Shift the input by 2 elements: write it again at offset 8.
      const std::vector<std::int32_t> shifted = Input<std::int32_t>(r, kElements);
      CUHAL_RETURN_IF_ERROR(device.queue(0).Write(std::as_bytes(std::span(shifted)), in, 8));
      CUHAL_RETURN_IF_ERROR(channel.AllReduce(in, 8, out, 4, kElements, DataType::kInt32,
                                              ReductionOp::kMax));
      CUHAL_ASSIGN_OR_RETURN(std::vector<float> sum, Download<float>(channel.queue(), f,
                                                                     kElements));
      CUHAL_ASSIGN_OR_RETURN(std::vector<std::int32_t> max,
                             Download<std::int32_t>(channel.queue(), out, kElements + 1));
      std::vector<float> want_sum(kElements, 0.0f);
      std::vector<std::int32_t> want_max(kElements + 1, 0);
      for (int p = 0; p < n; ++p) {
        std::vector<float> a = Input<float>(p, kElements);
        std::vector<std::int32_t> b = Input<std::int32_t>(p, kElements);
        for (std::size_t i = 0; i < kElements; ++i) {
          want_sum[i] += a[i];
          want_max[i + 1] = std::max(want_max[i + 1], b[i]);
        }
      }
      CUHAL_RETURN_IF_ERROR(ExpectEqual("float32 sum", sum, want_sum));
      return ExpectEqual("int32 max", max, want_max);
    }));
  }
}

TEST_P(ChannelTest, BroadcastAndReduceMatchHostReference) {
  for (int n : RankCounts()) {
    SCOPED_TRACE(StrCat(n, " rank(s)"));
    EXPECT_ALL_OK(WithChannels(n, [n](int r, Rank& rank) -> Status {
      Device& device = *rank.device;
      Channel& channel = *rank.channel;
      const int root = n - 1;
      // int64 broadcast from the last rank.
      CUHAL_ASSIGN_OR_RETURN(Buffer src, Upload(device, Input<std::int64_t>(r, kElements)));
      CUHAL_ASSIGN_OR_RETURN(Buffer dst, Zeros<std::int64_t>(device, kElements));
      CUHAL_RETURN_IF_ERROR(channel.Broadcast(src, 0, dst, 0, kElements, DataType::kInt64, root));
      // float64 product and uint8 min, reduced to rank 0.
      CUHAL_ASSIGN_OR_RETURN(Buffer d, Upload(device, Input<double>(r, kElements)));
      CUHAL_ASSIGN_OR_RETURN(Buffer dout, Zeros<double>(device, kElements));
      CUHAL_RETURN_IF_ERROR(channel.Reduce(d, 0, dout, 0, kElements, DataType::kFloat64,
                                           ReductionOp::kProduct, 0));
      CUHAL_ASSIGN_OR_RETURN(Buffer u, Upload(device, Input<std::uint8_t>(r, kElements)));
      Buffer uout;  // only the root needs one
      if (r == 0) {
        CUHAL_ASSIGN_OR_RETURN(uout, Zeros<std::uint8_t>(device, kElements));
      }
      CUHAL_RETURN_IF_ERROR(
          channel.Reduce(u, 0, uout, 0, kElements, DataType::kUint8, ReductionOp::kMin, 0));
      CUHAL_ASSIGN_OR_RETURN(std::vector<std::int64_t> got,
                             Download<std::int64_t>(channel.queue(), dst, kElements));
      CUHAL_RETURN_IF_ERROR(ExpectEqual("int64 broadcast", got, Input<std::int64_t>(root,
                                                                                    kElements)));
      if (r != 0) return OkStatus();
      std::vector<double> want_prod(kElements, 1.0);
      std::vector<std::uint8_t> want_min(kElements, 255);
      for (int p = 0; p < n; ++p) {
        std::vector<double> a = Input<double>(p, kElements);
        std::vector<std::uint8_t> b = Input<std::uint8_t>(p, kElements);
        for (std::size_t i = 0; i < kElements; ++i) {
          want_prod[i] *= a[i];
          want_min[i] = std::min(want_min[i], b[i]);
        }
      }
      CUHAL_ASSIGN_OR_RETURN(std::vector<double> prod,
                             Download<double>(channel.queue(), dout, kElements));
      CUHAL_ASSIGN_OR_RETURN(std::vector<std::uint8_t> mins,
                             Download<std::uint8_t>(channel.queue(), uout, kElements));
      CUHAL_RETURN_IF_ERROR(ExpectEqual("float64 product", prod, want_prod));
      return ExpectEqual("uint8 min", mins, want_min);
    }));
  }
}

TEST_P(ChannelTest, AllGatherAndReduceScatterMatchHostReference) {
  for (int n : RankCounts()) {
    SCOPED_TRACE(StrCat(n, " rank(s)"));
    EXPECT_ALL_OK(WithChannels(n, [n](int r, Rank& rank) -> Status {
      Device& device = *rank.device;
      Channel& channel = *rank.channel;
      const auto ranks = static_cast<std::size_t>(n);
      CUHAL_ASSIGN_OR_RETURN(Buffer mine, Upload(device, Input<float>(r, kElements)));
      CUHAL_ASSIGN_OR_RETURN(Buffer all, Zeros<float>(device, kElements * ranks));
      CUHAL_RETURN_IF_ERROR(channel.AllGather(mine, 0, all, 0, kElements, DataType::kFloat32));
      CUHAL_ASSIGN_OR_RETURN(Buffer big,
                             Upload(device, Input<std::uint32_t>(r, kElements * ranks)));
      CUHAL_ASSIGN_OR_RETURN(Buffer part, Zeros<std::uint32_t>(device, kElements));
      CUHAL_RETURN_IF_ERROR(channel.ReduceScatter(big, 0, part, 0, kElements, DataType::kUint32,
                                                  ReductionOp::kSum));
      CUHAL_ASSIGN_OR_RETURN(std::vector<float> gathered,
                             Download<float>(channel.queue(), all, kElements * ranks));
      CUHAL_ASSIGN_OR_RETURN(std::vector<std::uint32_t> scattered,
                             Download<std::uint32_t>(channel.queue(), part, kElements));
      std::vector<float> want_gather;
      std::vector<std::uint32_t> want_scatter(kElements, 0);
      for (int p = 0; p < n; ++p) {
        std::vector<float> a = Input<float>(p, kElements);
        want_gather.insert(want_gather.end(), a.begin(), a.end());
        std::vector<std::uint32_t> b = Input<std::uint32_t>(p, kElements * ranks);
        for (std::size_t i = 0; i < kElements; ++i) {
          want_scatter[i] += b[static_cast<std::size_t>(r) * kElements + i];
        }
      }
      CUHAL_RETURN_IF_ERROR(ExpectEqual("float32 all-gather", gathered, want_gather));
      return ExpectEqual("uint32 reduce-scatter", scattered, want_scatter);
    }));
  }
}

TEST_P(ChannelTest, GroupedSendRecvRing) {
  for (int n : RankCounts()) {
    SCOPED_TRACE(StrCat(n, " rank(s)"));
    EXPECT_ALL_OK(WithChannels(n, [n](int r, Rank& rank) -> Status {
      Device& device = *rank.device;
      Channel& channel = *rank.channel;
      const int next = (r + 1) % n;
      const int previous = (r + n - 1) % n;
      CUHAL_ASSIGN_OR_RETURN(Buffer out, Upload(device, Input<std::int32_t>(r, kElements)));
      CUHAL_ASSIGN_OR_RETURN(Buffer in, Zeros<std::int32_t>(device, kElements));
      {
        CUHAL_ASSIGN_OR_RETURN(ChannelGroup group, ChannelGroup::Begin(device.nccl_api()));
        CUHAL_RETURN_IF_ERROR(channel.Send(out, 0, kElements, DataType::kInt32, next));
        CUHAL_RETURN_IF_ERROR(channel.Recv(in, 0, kElements, DataType::kInt32, previous));
        CUHAL_RETURN_IF_ERROR(group.End());
        CUHAL_RETURN_IF_ERROR(group.End());  // idempotent
      }
      CUHAL_ASSIGN_OR_RETURN(std::vector<std::int32_t> got,
                             Download<std::int32_t>(channel.queue(), in, kElements));
      return ExpectEqual("ring", got, Input<std::int32_t>(previous, kElements));
    }));
  }
}

TEST_P(ChannelTest, SplitByParity) {
  for (int n : RankCounts()) {
    SCOPED_TRACE(StrCat(n, " rank(s)"));
    EXPECT_ALL_OK(WithChannels(n, [n](int r, Rank& rank) -> Status {
      Device& device = *rank.device;
      // Color by parity, ranked in reverse order of the parent's ranks.
      CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Channel> half, rank.channel->Split(r % 2, -r));
      if (half == nullptr) return InternalError("a colored rank got no channel");
      const int members = (n + 1 - r % 2) / 2;  // ranks of this parity
      const int expected_rank = members - 1 - r / 2;
      if (half->count() != members || half->rank() != expected_rank) {
        return InternalError(StrCat("split channel is rank ", half->rank(), " of ",
                                    half->count(), ", expected ", expected_rank, " of ", members));
      }
      if (device.live_channels() != 2) return InternalError("live_channels() is not 2");
      CUHAL_ASSIGN_OR_RETURN(Buffer b, Upload(device, std::vector<std::int32_t>{r}));
      CUHAL_RETURN_IF_ERROR(half->AllReduce(b, 0, b, 0, 1, DataType::kInt32, ReductionOp::kSum));
      CUHAL_ASSIGN_OR_RETURN(std::vector<std::int32_t> got,
                             Download<std::int32_t>(half->queue(), b, 1));
      std::int32_t want = 0;
      for (int p = r % 2; p < n; p += 2) want += p;
      CUHAL_RETURN_IF_ERROR(ExpectEqual("split sum", got, std::vector<std::int32_t>{want}));
      // A rank that passes no color gets no channel; the others still form one.
      CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Channel> none,
                             rank.channel->Split(r == 0 ? kChannelSplitNoColor : 7, r));
      if ((none == nullptr) != (r == 0)) return InternalError("wrong split without color");
      if (none != nullptr && none->count() != n - 1) return InternalError("wrong split count");
      return OkStatus();
    }));
  }
}

TEST_P(ChannelTest, AbortEndsTheChannel) {
  for (int n : RankCounts()) {
    SCOPED_TRACE(StrCat(n, " rank(s)"));
    EXPECT_ALL_OK(WithChannels(n, [](int, Rank& rank) -> Status {
      Channel& channel = *rank.channel;
      CUHAL_RETURN_IF_ERROR(channel.QueryAsyncError());
      CUHAL_RETURN_IF_ERROR(channel.Abort());
      if (!channel.aborted() || channel.comm() != nullptr) return InternalError("not aborted");
      CUHAL_RETURN_IF_ERROR(channel.Abort());  // idempotent
      CUHAL_ASSIGN_OR_RETURN(Buffer b, Zeros<float>(*rank.device, 4));
      Status after = channel.AllReduce(b, 0, b, 0, 4, DataType::kFloat32, ReductionOp::kSum);
      if (after.code() != StatusCode::kFailedPrecondition ||
          after.message().find("aborted") == std::string::npos) {
        return InternalError(StrCat("AllReduce after Abort: ", after.ToString()));
      }
      if (channel.Split(0, 0).status().code() != StatusCode::kFailedPrecondition) {
        return InternalError("Split after Abort did not fail");
      }
      return OkStatus();  // destroying an aborted channel does nothing
    }));
  }
}

TEST_P(ChannelTest, ExplicitIdAndRank) {
  // One rank; the caller makes the id and passes rank and count: no provider involved.
  ncclUniqueId unique_id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&unique_id), ncclSuccess);
  std::vector<std::byte> id(kChannelIdSize);
  std::memcpy(id.data(), unique_id.internal, kChannelIdSize);
  std::vector<Status> statuses = RunRanks(1, [&](int) -> Status {
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(*driver_, 0));
    ChannelParams params;
    params.rank = 0;
    params.count = 1;
    params.id = id;
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Channel> channel, device->CreateChannel(params));
    if (channel->rank() != 0 || channel->count() != 1) return InternalError("wrong rank/count");
    if (&channel->queue() != &device->queue(0)) return InternalError("wrong queue");
    return OkStatus();
  });
  EXPECT_ALL_OK(statuses);
}

TEST_P(ChannelTest, QueueAffinityPicksTheQueue) {
  std::shared_ptr<InProcessChannelWorld> world = World(1);
  ASSERT_NE(world, nullptr);
  std::vector<Status> statuses = RunRanks(1, [&](int) -> Status {
    DeviceParams device_params;
    device_params.queue_count = 3;
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device,
                           Device::Create(*driver_, 0, device_params));
    CUHAL_ASSIGN_OR_RETURN(std::shared_ptr<ChannelProvider> provider, world->ProviderForRank(0));
    device->ReplaceChannelProvider(provider);
    ChannelParams params;
    params.queue_affinity = 1u << 2;
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Channel> channel, device->CreateChannel(params));
    if (&channel->queue() != &device->queue(2)) return InternalError("not queue 2");
    return OkStatus();
  });
  EXPECT_ALL_OK(statuses);
}

// --- CreateChannel's errors ---------------------------------------------------------------

// Runs `check` on one rank's thread with device 0 open (and its provider when `with_provider`).
void OnDevice(const Driver& driver, bool with_provider,
              const std::function<void(Device&)>& check) {
  std::thread thread([&] {
    StatusOr<std::unique_ptr<Device>> device = Device::Create(driver, 0);
    ASSERT_TRUE(device.ok()) << device.status();
    if (with_provider) {
      StatusOr<std::shared_ptr<InProcessChannelWorld>> world = InProcessChannelWorld::Create(1);
      ASSERT_TRUE(world.ok()) << world.status();
      (*device)->ReplaceChannelProvider(*(*world)->ProviderForRank(0));
    }
    check(**device);
  });
  thread.join();
}

TEST_P(ChannelTest, NcclMissingIsUnavailable) {
  StatusOr<std::unique_ptr<Driver>> driver = Driver::Create(&cuda(), nullptr);
  ASSERT_TRUE(driver.ok()) << driver.status();
  OnDevice(**driver, /*with_provider=*/true, [](Device& device) {
    StatusOr<std::unique_ptr<Channel>> channel = device.CreateChannel();
    EXPECT_EQ(channel.status().code(), StatusCode::kUnavailable) << channel.status();
    EXPECT_THAT(channel.status().message(), HasSubstr("libnccl.so.2"));
    EXPECT_THAT(channel.status().message(),
                HasSubstr(StrCat(NCCL_MAJOR, ".", NCCL_MINOR, ".", NCCL_PATCH)));
    EXPECT_EQ(ChannelGroup::Begin(nullptr).status().code(), StatusCode::kUnavailable);
  });
}

TEST_P(ChannelTest, BadQueueAffinityIsInvalidArgument) {
  OnDevice(*driver_, /*with_provider=*/true, [](Device& device) {
    struct Case {
      std::uint64_t mask;
      const char* text;
    };
    for (const Case& c : {Case{0, "0x0"}, Case{0x3, "0x3"}, Case{0x2, "0x2"},
                          Case{std::uint64_t{1} << 63, "0x8000000000000000"},
                          Case{~std::uint64_t{0}, "0xffffffffffffffff"}}) {
      ChannelParams params;
      params.queue_affinity = c.mask;
      StatusOr<std::unique_ptr<Channel>> channel = device.CreateChannel(params);
      EXPECT_EQ(channel.status().code(), StatusCode::kInvalidArgument) << channel.status();
      EXPECT_THAT(channel.status().message(), HasSubstr(StrCat("queue affinity ", c.text)));
    }
  });
}

TEST_P(ChannelTest, BadIdsAreInvalidArgument) {
  OnDevice(*driver_, /*with_provider=*/true, [](Device& device) {
    std::vector<std::byte> zeros(kChannelIdSize);
    ChannelParams params;
    params.rank = 0;
    params.count = 1;
    params.id = zeros;
    StatusOr<std::unique_ptr<Channel>> channel = device.CreateChannel(params);
    EXPECT_EQ(channel.status().code(), StatusCode::kInvalidArgument) << channel.status();
    EXPECT_THAT(channel.status().message(), HasSubstr("all zeros"));

    std::vector<std::byte> short_id(kChannelIdSize - 1, std::byte{1});
    params.id = short_id;
    channel = device.CreateChannel(params);
    EXPECT_EQ(channel.status().code(), StatusCode::kInvalidArgument) << channel.status();
    EXPECT_THAT(channel.status().message(), HasSubstr(StrCat("but ", kChannelIdSize - 1)));
    EXPECT_THAT(channel.status().message(), HasSubstr(StrCat(kChannelIdSize, " bytes")));
  });
}

TEST_P(ChannelTest, DefaultsWithoutProviderAreFailedPrecondition) {
  OnDevice(*driver_, /*with_provider=*/false, [](Device& device) {
    StatusOr<std::unique_ptr<Channel>> channel = device.CreateChannel();  // default rank
    EXPECT_EQ(channel.status().code(), StatusCode::kFailedPrecondition) << channel.status();
    EXPECT_THAT(channel.status().message(), HasSubstr("no channel provider"));
    ChannelParams params;
    params.rank = 0;
    params.count = 1;  // explicit rank and count, but the default id
    channel = device.CreateChannel(params);
    EXPECT_EQ(channel.status().code(), StatusCode::kFailedPrecondition) << channel.status();
    EXPECT_THAT(channel.status().message(), HasSubstr("default channel id"));
  });
}

TEST_P(ChannelTest, BadRankOrCountIsInvalidArgument) {
  OnDevice(*driver_, /*with_provider=*/true, [](Device& device) {
    for (auto [rank, count] : {std::pair{1, 1}, std::pair{-2, 1}, std::pair{0, 0}}) {
      ChannelParams params;
      params.rank = rank;
      params.count = count;
      StatusOr<std::unique_ptr<Channel>> channel = device.CreateChannel(params);
      EXPECT_EQ(channel.status().code(), StatusCode::kInvalidArgument) << channel.status();
      EXPECT_THAT(channel.status().message(), HasSubstr(StrCat("rank ", rank, " and count ",
                                                               count)));
    }
  });
}

TEST_P(ChannelTest, BadOperationArgumentsFailBeforeAnyNcclCall) {
  std::shared_ptr<InProcessChannelWorld> world = World(1);
  ASSERT_NE(world, nullptr);
  std::vector<Status> statuses = RunRanks(1, [&](int) -> Status {
    CUHAL_ASSIGN_OR_RETURN(Rank rank, OpenRank(*driver_, *world, 0));
    Channel& channel = *rank.channel;
    CUHAL_ASSIGN_OR_RETURN(Buffer b, Zeros<float>(*rank.device, 16));  // 64 bytes
    const std::uint64_t calls_before = IsFake() ? fake_nccl().faults().calls() : 0;
    struct Case {
      Status status;
      const char* text;
    };
    Buffer empty;
    Case cases[] = {
        {channel.AllReduce(b, 0, b, 4, 16, DataType::kFloat32, ReductionOp::kSum),
         "recv range [4, 4 + 64) (16 x float32) is outside the 64-byte buffer"},
        {channel.AllReduce(b, 65, b, 0, 0, DataType::kFloat32, ReductionOp::kSum),
         "send range [65, 65 + 0)"},
        {channel.AllReduce(b, 0, b, 0, 1, DataType::kFloat32, static_cast<ReductionOp>(42)),
         "unknown reduction op ReductionOp(42)"},
        {channel.AllReduce(b, 0, b, 0, 1, static_cast<DataType>(99), ReductionOp::kSum),
         "unknown data type DataType(99)"},
        {channel.Broadcast(b, 0, b, 0, 1, DataType::kFloat32, 1),
         "root 1 is outside the channel's ranks [0, 1)"},
        {channel.Reduce(b, 0, b, 0, 1, DataType::kFloat32, ReductionOp::kSum, -1), "root -1"},
        {channel.AllGather(b, 0, b, 0, 17, DataType::kFloat32), "send range [0, 0 + 68)"},
        {channel.ReduceScatter(b, 0, b, 8, 8, DataType::kFloat64, ReductionOp::kSum),
         "recv range [8, 8 + 64) (8 x float64)"},
        {channel.Send(b, 0, 1, DataType::kFloat32, 3), "peer 3"},
        {channel.Recv(empty, 0, 1, DataType::kFloat32, 0), "recv buffer is empty"},
        {channel.Split(-5, 0).status(), "color must be >= 0"},
    };
    for (const Case& c : cases) {
      if (c.status.code() != StatusCode::kInvalidArgument ||
          c.status.message().find(c.text) == std::string::npos) {
        return InternalError(StrCat("expected INVALID_ARGUMENT naming '", c.text, "', got ",
                                    c.status.ToString()));
      }
    }
    if (IsFake() && fake_nccl().faults().calls() != calls_before) {
      return InternalError("an NCCL call was made for a bad argument");
    }
    return OkStatus();
  });
  EXPECT_ALL_OK(statuses);
}

TEST_P(ChannelTest, MissingRankFailsCleanly) {
  // A world of 2 where rank 1 never comes: rank 0 deposits its id and its NCCL initialization
  // fails (the fake times out on its virtual clock); a rank that never gets an id times out in
  // the provider. Nothing hangs and nothing leaks.
  if (!IsFake()) GTEST_SKIP() << "needs two devices and a bounded NCCL bootstrap (fake only)";
  StatusOr<std::shared_ptr<InProcessChannelWorld>> world =
      InProcessChannelWorld::Create(2, {.timeout = std::chrono::milliseconds(200)});
  ASSERT_TRUE(world.ok()) << world.status();
  // Rank 1 alone: no id ever comes.
  std::vector<Status> statuses = RunRanks(1, [&](int) -> Status {
    CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(*driver_, 1));
    device->ReplaceChannelProvider(*(*world)->ProviderForRank(1));
    return device->CreateChannel().status();
  });
  EXPECT_EQ(statuses[0].code(), StatusCode::kDeadlineExceeded) << statuses[0];
  EXPECT_THAT(statuses[0].message(), HasSubstr("rank 0 did not provide the id"));
}

INSTANTIATE_TEST_SUITE_P(Backends, ChannelTest,
                         ::testing::ValuesIn(testing::CompiledNcclBackends()),
                         testing::BackendParamName);

}  // namespace
}  // namespace cuhal
