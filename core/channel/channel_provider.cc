// Copyright 2026 The cuhal Authors.
#include "core/channel/channel_provider.h"

#include <algorithm>
#include <utility>

namespace cuhal {
namespace {

// Rank `rank` of an InProcessChannelWorld: answers its own rank and forwards the rest.
class InProcessRankProvider final : public ChannelProvider {
 public:
  InProcessRankProvider(std::shared_ptr<InProcessChannelWorld> world, int rank)
      : world_(std::move(world)), rank_(rank) {}

  StatusOr<RankAndCount> QueryDefaultRankAndCount() override {
    return RankAndCount{rank_, world_->count()};
  }
  Status ExchangeId(std::string_view group, int rank, int count, ChannelId& id) override {
    return world_->ExchangeId(group, rank, count, id);
  }
  void Fail(std::string_view group, int rank, const Status& status) override {
    world_->Fail(group, rank, status);
  }

 private:
  const std::shared_ptr<InProcessChannelWorld> world_;
  const int rank_;
};

}  // namespace

bool IsZeroChannelId(const ChannelId& id) noexcept {
  return std::all_of(id.begin(), id.end(), [](std::byte b) { return b == std::byte{0}; });
}

StatusOr<std::shared_ptr<InProcessChannelWorld>> InProcessChannelWorld::Create(
    int count, InProcessChannelOptions options) {
  if (count < 1) {
    return InvalidArgumentError(
        StrCat("an in-process channel world needs at least 1 rank, got ", count));
  }
  if (options.timeout.count() <= 0) {
    return InvalidArgumentError(StrCat("an in-process channel world needs a positive timeout, got ",
                                       options.timeout.count(), " ms"));
  }
  return std::shared_ptr<InProcessChannelWorld>(new InProcessChannelWorld(count, options));
}

StatusOr<std::shared_ptr<ChannelProvider>> InProcessChannelWorld::ProviderForRank(int rank) {
  if (rank < 0 || rank >= count_) {
    return InvalidArgumentError(
        StrCat("rank ", rank, " is outside the in-process channel world of ", count_, " rank(s)"));
  }
  return std::shared_ptr<ChannelProvider>(
      std::make_shared<InProcessRankProvider>(shared_from_this(), rank));
}

std::shared_ptr<InProcessChannelWorld::Round> InProcessChannelWorld::CurrentLocked(
    std::string_view group) {
  auto it = rounds_.find(group);
  if (it == rounds_.end()) {
    it = rounds_.emplace(std::string(group), std::make_shared<Round>(count_)).first;
  }
  return it->second;
}

void InProcessChannelWorld::ArriveLocked(std::string_view group,
                                         const std::shared_ptr<Round>& round, int rank) {
  char& arrived = round->arrived[static_cast<std::size_t>(rank)];
  if (arrived != 0) return;
  arrived = 1;
  if (++round->arrived_count < count_) return;
  // Every rank has taken part: the key's next exchange starts a new round.
  auto it = rounds_.find(group);
  if (it != rounds_.end() && it->second == round) rounds_.erase(it);
}

Status InProcessChannelWorld::ExchangeId(std::string_view group, int rank, int count,
                                         ChannelId& id) {
  const std::string context =
      StrCat("exchanging the channel id of group '", group, "' as rank ", rank, " of ", count);
  if (count != count_) {
    return InvalidArgumentError(
        StrCat(context, ": the in-process channel world has ", count_, " rank(s), not ", count));
  }
  if (rank < 0 || rank >= count_) {
    return InvalidArgumentError(StrCat(context, ": rank ", rank, " is outside [0, ", count_, ")"));
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  std::unique_lock<std::mutex> lock(mu_);
  std::shared_ptr<Round> round = CurrentLocked(group);
  // Back for the next round before the current one ended: wait for the others to catch up.
  while (round->arrived[static_cast<std::size_t>(rank)] != 0) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      return DeadlineExceededError(StrCat(
          context, ": the previous exchange of this group did not end within ",
          options_.timeout.count(), " ms (a rank never came to it)"));
    }
    round = CurrentLocked(group);
  }
  ArriveLocked(group, round, rank);
  cv_.notify_all();
  if (rank == 0) {
    if (!round->failure.ok()) return Status(round->failure).AddContext(context);
    round->id = id;
    round->has_id = true;
    return OkStatus();
  }
  for (;;) {
    if (!round->failure.ok()) return Status(round->failure).AddContext(context);
    if (round->has_id) {
      id = round->id;
      return OkStatus();
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) break;
  }
  if (!round->failure.ok()) return Status(round->failure).AddContext(context);
  if (round->has_id) {
    id = round->id;
    return OkStatus();
  }
  round->failure = AbortedError(
      StrCat("rank ", rank, " of group '", group, "' gave up waiting for rank 0's id"));
  cv_.notify_all();
  return DeadlineExceededError(StrCat(context, ": rank 0 did not provide the id within ",
                                      options_.timeout.count(), " ms"));
}

void InProcessChannelWorld::Fail(std::string_view group, int rank, const Status& status) {
  if (rank < 0 || rank >= count_) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Round> round = CurrentLocked(group);
  if (round->failure.ok()) {
    round->failure = AbortedError(StrCat("rank ", rank, " of group '", group,
                                         "' failed before the exchange: ", status.message()));
  }
  ArriveLocked(group, round, rank);
  cv_.notify_all();
}

}  // namespace cuhal
