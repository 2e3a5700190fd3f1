// Copyright 2026 The cuhal Authors.
// ChannelProvider: where a Device asks for the default rank and count of a collective group and
// how the group's ranks agree on one NCCL unique id (IREE's iree_hal_channel_provider_t); and
// InProcessChannelWorld, a provider for ranks that are threads of one process. (Ranks that are
// processes of an MPI job: core/channel/mpi_channel_provider.h.)
#ifndef CUHAL_CORE_CHANNEL_CHANNEL_PROVIDER_H_
#define CUHAL_CORE_CHANNEL_CHANNEL_PROVIDER_H_

#include <nccl.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status_or.h"

namespace cuhal {

// The bytes of an ncclUniqueId: what rank 0 makes (ncclGetUniqueId) and every rank passes to
// ncclCommInitRank. All zero means "none".
inline constexpr std::size_t kChannelIdSize = NCCL_UNIQUE_ID_BYTES;
using ChannelId = std::array<std::byte, kChannelIdSize>;
[[nodiscard]] bool IsZeroChannelId(const ChannelId& id) noexcept;

struct RankAndCount {
  int rank = -1;
  int count = -1;
};

// Answers the two questions channel creation cannot answer alone: this participant's default
// rank and the group's size (IREE: query_default_rank_and_count), and the exchange of the unique
// id that rank 0 made with every other rank of a group (IREE: exchange_default_id). An MPI- or
// store-backed provider implements it for multi-process jobs; InProcessChannelWorld below serves
// ranks that are threads.
//
// Ownership: shared (std::shared_ptr); a Device holds one (Device::ReplaceChannelProvider), and
// several devices may share one. Thread-safety: implementations must allow every method to be
// called from any thread concurrently (each rank's thread calls it). Stream ordering: none; these
// are host-side rendezvous.
class ChannelProvider {
 public:
  virtual ~ChannelProvider() = default;

  // This participant's default rank and the group size. Used when ChannelParams asks for
  // kChannelRankDefault / kChannelCountDefault.
  [[nodiscard]] virtual StatusOr<RankAndCount> QueryDefaultRankAndCount() = 0;

  // Exchanges the unique id of one channel's creation among the `count` ranks of the group
  // `group` (a key naming the group; "" is a valid key). On rank 0, `id` is the id it made
  // (input); on every other rank it receives rank 0's id (output). Blocks until the id is
  // available. Must not block forever: when a rank of the group failed (Fail) or a wait passes
  // the provider's timeout, it returns an error (ABORTED, DEADLINE_EXCEEDED).
  [[nodiscard]] virtual Status ExchangeId(std::string_view group, int rank, int count,
                                          ChannelId& id) = 0;

  // Tells the group `group` that rank `rank` will not take part in the current exchange (it
  // failed before it could, with `status`), so that the ranks waiting for it fail with ABORTED
  // (naming the rank and `status`) instead of waiting. Device::CreateChannel calls it when it
  // fails before its exchange completes; callers call it when a rank fails earlier (say its
  // device could not be created). Never fails.
  virtual void Fail(std::string_view group, int rank, const Status& status) = 0;

  // After this rank initialized the communicator of the channel whose id was exchanged under
  // `group` (`created`: OK, or why ncclCommInitRank failed), agrees on the outcome with the
  // group's other ranks: OK only when every rank succeeded; otherwise an error (ABORTED naming a
  // rank that failed; `created` itself on that rank). Device::CreateChannel calls it after every
  // initialization of an exchanged id and aborts its new channel when it fails, so that either
  // every rank has the channel or none has and none goes on to wait in a collective for a peer
  // that has no communicator. Must not block forever (as ExchangeId). The default returns
  // `created` unchanged, without communicating: for providers whose ranks learn of a peer's
  // failed initialization from NCCL itself (the ranks of an in-process world, whose fake
  // initialization times out naming the missing rank).
  [[nodiscard]] virtual Status AgreeOnCreation(std::string_view group, int rank, int count,
                                               const Status& created) {
    static_cast<void>(group);
    static_cast<void>(rank);
    static_cast<void>(count);
    return created;
  }
};

struct InProcessChannelOptions {
  // How long (real time) one rank waits in ExchangeId for the others before giving up with
  // DEADLINE_EXCEEDED. Must be > 0.
  std::chrono::milliseconds timeout{5000};
};

// The in-process channel provider: a "world" of `count` ranks that live in this process (one
// thread, and usually one device, per rank), the shared rendezvous their providers meet in.
// Create one per world; give rank r's device ProviderForRank(r), a ChannelProvider whose default
// rank is r (QueryDefaultRankAndCount cannot know which thread asks, so each rank gets its own
// small provider over the one shared world).
//
// The exchange is done in rounds, per group key: a round of key K ends when each of the `count`
// ranks has either taken part in it (ExchangeId) or been declared failed (Fail); the next
// ExchangeId of K then starts the next round (a rank that comes back for the next round before
// the current one ended waits for it to end). Within a round, rank 0 deposits its id and the
// other ranks take it. Once any rank of a round failed (Fail, or a wait timed out), the ranks of
// that round still waiting and those still to arrive get ABORTED naming the failed rank; a rank
// waiting longer than the timeout gets DEADLINE_EXCEEDED (and fails the round for the others).
//
// Ownership: shared (std::shared_ptr, from Create); the per-rank providers keep it alive.
// Thread-safety: every method may be called from any thread concurrently. Stream ordering: none.
class InProcessChannelWorld : public std::enable_shared_from_this<InProcessChannelWorld> {
 public:
  // INVALID_ARGUMENT for count < 1 or a timeout <= 0.
  [[nodiscard]] static StatusOr<std::shared_ptr<InProcessChannelWorld>> Create(
      int count, InProcessChannelOptions options = {});

  InProcessChannelWorld(const InProcessChannelWorld&) = delete;  // shared by reference
  InProcessChannelWorld& operator=(const InProcessChannelWorld&) = delete;  // ditto
  ~InProcessChannelWorld() = default;

  [[nodiscard]] int count() const noexcept { return count_; }
  [[nodiscard]] const InProcessChannelOptions& options() const noexcept { return options_; }

  // The provider of rank `rank` (its default rank is `rank`, its default count count()).
  // INVALID_ARGUMENT for a rank outside [0, count()).
  [[nodiscard]] StatusOr<std::shared_ptr<ChannelProvider>> ProviderForRank(int rank);

  // The rendezvous itself (what the per-rank providers forward to); see ChannelProvider.
  // INVALID_ARGUMENT when `count` is not this world's count or `rank` is outside it.
  [[nodiscard]] Status ExchangeId(std::string_view group, int rank, int count, ChannelId& id);
  void Fail(std::string_view group, int rank, const Status& status);

 private:
  InProcessChannelWorld(int count, InProcessChannelOptions options)
      : count_(count), options_(options) {}

  // One round of one group key. Waiting ranks hold it (shared_ptr): it stays alive after the
  // map moved on to the next round.
  struct Round {
    explicit Round(int count) : arrived(static_cast<std::size_t>(count), 0) {}
    std::vector<char> arrived;  // per rank: took part (ExchangeId) or was declared failed (Fail)
    int arrived_count = 0;
    bool has_id = false;
    ChannelId id{};
    Status failure;  // set once a rank of the round failed or timed out
  };
  // The current round of `group` (made when there is none).
  std::shared_ptr<Round> CurrentLocked(std::string_view group);
  // Counts `rank` in `round`, ending the round (the key's next ExchangeId starts a new one) once
  // every rank has.
  void ArriveLocked(std::string_view group, const std::shared_ptr<Round>& round, int rank);

  const int count_;
  const InProcessChannelOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  // The current round per key. Guarded by mu_.
  std::map<std::string, std::shared_ptr<Round>, std::less<>> rounds_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_CHANNEL_CHANNEL_PROVIDER_H_
