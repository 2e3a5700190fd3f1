// Copyright 2026 The cuhal Authors.
// InProcessChannelWorld: the rendezvous of ranks as threads. Rank 0's id reaches every rank, rounds
// of one key follow each other, a failed rank aborts the others, and a rank that never comes makes
// the others fail (DEADLINE_EXCEEDED) instead of hanging. No assertion depends on wall-clock time:
// short timeouts only bound waits that must end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "core/channel/channel_provider.h"
#include "tests/device/test_macros.h"

namespace cuhal {
namespace {

using ::testing::HasSubstr;

ChannelId MakeId(std::uint8_t seed) {
  ChannelId id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = std::byte(seed + i);
  return id;
}

std::shared_ptr<InProcessChannelWorld> MakeWorld(int count, int timeout_ms = 5000) {
  StatusOr<std::shared_ptr<InProcessChannelWorld>> world =
      InProcessChannelWorld::Create(count, {.timeout = std::chrono::milliseconds(timeout_ms)});
  EXPECT_TRUE(world.ok()) << world.status();
  return std::move(world).value();
}

void OnThreads(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { body(r); });
  for (std::thread& t : threads) t.join();
}

TEST(ChannelProviderTest, CreateChecksItsArguments) {
  EXPECT_EQ(InProcessChannelWorld::Create(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(InProcessChannelWorld::Create(2, {.timeout = std::chrono::milliseconds(0)})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  std::shared_ptr<InProcessChannelWorld> world = MakeWorld(2);
  EXPECT_EQ(world->ProviderForRank(2).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(world->ProviderForRank(-1).status().code(), StatusCode::kInvalidArgument);
  ChannelId id = MakeId(1);
  Status wrong_count = world->ExchangeId("g", 0, 3, id);
  EXPECT_EQ(wrong_count.code(), StatusCode::kInvalidArgument) << wrong_count;
  EXPECT_THAT(wrong_count.message(), HasSubstr("has 2 rank(s), not 3"));
}

TEST(ChannelProviderTest, ProvidersAnswerTheirRank) {
  std::shared_ptr<InProcessChannelWorld> world = MakeWorld(3);
  for (int r = 0; r < 3; ++r) {
    CUHAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<ChannelProvider> provider,
                               world->ProviderForRank(r));
    CUHAL_ASSERT_OK_AND_ASSIGN(RankAndCount rc, provider->QueryDefaultRankAndCount());
    EXPECT_EQ(rc.rank, r);
    EXPECT_EQ(rc.count, 3);
  }
}

TEST(ChannelProviderTest, RankZerosIdReachesEveryRankRoundAfterRound) {
  constexpr int kRanks = 4;
  std::shared_ptr<InProcessChannelWorld> world = MakeWorld(kRanks);
  std::vector<std::vector<ChannelId>> got(kRanks);
  OnThreads(kRanks, [&](int r) {
    std::shared_ptr<ChannelProvider> provider = *world->ProviderForRank(r);
    for (std::uint8_t round = 1; round <= 5; ++round) {
      ChannelId id = r == 0 ? MakeId(round) : ChannelId{};
      Status status = provider->ExchangeId("key", r, kRanks, id);
      EXPECT_TRUE(status.ok()) << "rank " << r << " round " << int{round} << ": " << status;
      got[static_cast<std::size_t>(r)].push_back(id);
    }
  });
  for (int r = 0; r < kRanks; ++r) {
    for (std::uint8_t round = 1; round <= 5; ++round) {
      EXPECT_EQ(got[static_cast<std::size_t>(r)][round - 1u], MakeId(round))
          << "rank " << r << " round " << int{round};
    }
  }
}

TEST(ChannelProviderTest, KeysAreIndependent) {
  std::shared_ptr<InProcessChannelWorld> world = MakeWorld(2);
  OnThreads(2, [&](int r) {
    // Rank 0 exchanges "b" first, rank 1 "a" first: distinct keys do not block each other.
    for (const char* key : r == 0 ? std::vector<const char*>{"b", "a"}
                                  : std::vector<const char*>{"a", "b"}) {
      ChannelId id = r == 0 ? MakeId(key[0] == 'a' ? 10 : 20) : ChannelId{};
      CUHAL_EXPECT_OK(world->ExchangeId(key, r, 2, id));
      EXPECT_EQ(id, MakeId(key[0] == 'a' ? 10 : 20)) << key;
    }
  });
}

TEST(ChannelProviderTest, FailedRankAbortsTheOthers) {
  constexpr int kRanks = 3;
  std::shared_ptr<InProcessChannelWorld> world = MakeWorld(kRanks);
  std::vector<Status> statuses(kRanks);
  OnThreads(kRanks, [&](int r) {
    if (r == 0) {
      world->Fail("g", 0, UnavailableError("device 0 could not be opened"));
      return;
    }
    ChannelId id{};
    statuses[static_cast<std::size_t>(r)] = world->ExchangeId("g", r, kRanks, id);
  });
  for (int r = 1; r < kRanks; ++r) {
    const Status& s = statuses[static_cast<std::size_t>(r)];
    EXPECT_EQ(s.code(), StatusCode::kAborted) << s;
    EXPECT_THAT(s.message(), HasSubstr("rank 0 of group 'g' failed before the exchange"));
    EXPECT_THAT(s.message(), HasSubstr("device 0 could not be opened"));
  }
  // The round ended (every rank took part): the next one works.
  OnThreads(kRanks, [&](int r) {
    ChannelId id = r == 0 ? MakeId(7) : ChannelId{};
    CUHAL_EXPECT_OK(world->ExchangeId("g", r, kRanks, id));
    EXPECT_EQ(id, MakeId(7));
  });
}

TEST(ChannelProviderTest, RootArrivingAfterAFailureIsAborted) {
  std::shared_ptr<InProcessChannelWorld> world = MakeWorld(2);
  world->Fail("g", 1, InternalError("rank 1 is gone"));
  ChannelId id = MakeId(3);
  Status status = world->ExchangeId("g", 0, 2, id);
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status;
  EXPECT_THAT(status.message(), HasSubstr("rank 1 is gone"));
}

TEST(ChannelProviderTest, MissingRootTimesOutInsteadOfHanging) {
  std::shared_ptr<InProcessChannelWorld> world = MakeWorld(3, /*timeout_ms=*/50);
  std::vector<Status> statuses(3);
  OnThreads(2, [&](int i) {
    const int r = i + 1;  // ranks 1 and 2 come; rank 0 never does
    ChannelId id{};
    statuses[static_cast<std::size_t>(r)] = world->ExchangeId("g", r, 3, id);
  });
  for (int r = 1; r < 3; ++r) {
    const Status& s = statuses[static_cast<std::size_t>(r)];
    // The first to give up times out; the other either times out too or is aborted by it.
    EXPECT_TRUE(s.code() == StatusCode::kDeadlineExceeded || s.code() == StatusCode::kAborted)
        << s;
  }
}

TEST(ChannelProviderTest, RankComingBackEarlyWaitsForTheRoundToEnd) {
  std::shared_ptr<InProcessChannelWorld> world = MakeWorld(2, /*timeout_ms=*/50);
  ChannelId id = MakeId(1);
  CUHAL_ASSERT_OK(world->ExchangeId("g", 0, 2, id));  // rank 1 has not taken it yet
  Status again = world->ExchangeId("g", 0, 2, id);    // so this one cannot start
  EXPECT_EQ(again.code(), StatusCode::kDeadlineExceeded) << again;
  EXPECT_THAT(again.message(), HasSubstr("previous exchange"));
  ChannelId got{};
  CUHAL_ASSERT_OK(world->ExchangeId("g", 1, 2, got));
  EXPECT_EQ(got, MakeId(1));
}

TEST(ChannelProviderTest, ZeroIdIsDetected) {
  EXPECT_TRUE(IsZeroChannelId(ChannelId{}));
  EXPECT_FALSE(IsZeroChannelId(MakeId(1)));
}

}  // namespace
}  // namespace cuhal
