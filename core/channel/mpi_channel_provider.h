// Copyright 2026 The cuhal Authors.
// MpiChannelProvider: a ChannelProvider for ranks that are processes of an MPI job (mpirun -np N),
// the NCCL unique id broadcast from rank 0 over an MPI communicator, named groups mapped to
// communicators split from it; and MpiSession, the RAII owner of MPI's initialization.
//
// Built only when MPI's C development package is found at configure time (target cuhal::mpi;
// Debian: libopenmpi-dev). cuhal::core itself never links MPI.
#ifndef CUHAL_CORE_CHANNEL_MPI_CHANNEL_PROVIDER_H_
#define CUHAL_CORE_CHANNEL_MPI_CHANNEL_PROVIDER_H_

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/mutex.h"
#include "core/base/status_or.h"
#include "core/channel/channel_provider.h"

namespace cuhal {

// MpiChannelProvider::DefineGroup's color for "this process joins no group" (MPI_UNDEFINED).
inline constexpr int kMpiGroupNoColor = -1;

// MPI's initialization for the lifetime of a handle: MPI_Init_thread (asking for
// MPI_THREAD_MULTIPLE) when MPI is not initialized yet, MPI_Finalize when the handle that
// initialized it is destroyed. MPI can be initialized once per process only.
//
// Ownership: move-only; the handle that initialized MPI finalizes it (a handle made when MPI was
// already initialized, by the program, finalizes nothing). Every MpiChannelProvider must be
// destroyed before the session that initialized MPI. Thread-safety: create and destroy on the
// process's main thread (MPI's rule). Stream ordering: none.
class MpiSession {
 public:
  // FAILED_PRECONDITION when MPI was already finalized in this process; UNAVAILABLE when
  // MPI_Init_thread fails. `argc`/`argv` may be null.
  [[nodiscard]] static StatusOr<MpiSession> Initialize(int* argc, char*** argv);

  MpiSession(MpiSession&& other) noexcept;
  MpiSession& operator=(MpiSession&&) = delete;  // one owner of one initialization
  MpiSession(const MpiSession&) = delete;        // two owners would finalize twice
  MpiSession& operator=(const MpiSession&) = delete;
  // MPI_Finalize when this handle initialized MPI; a failure goes to ReportDroppedStatus.
  ~MpiSession();

  // The thread level MPI provides (MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE).
  [[nodiscard]] int thread_level() const noexcept { return thread_level_; }
  // Whether this handle initialized MPI (and so finalizes it).
  [[nodiscard]] bool owns_initialization() const noexcept { return owns_; }

 private:
  MpiSession(bool owns, int thread_level) noexcept : owns_(owns), thread_level_(thread_level) {}
  bool owns_ = false;
  int thread_level_ = 0;
};

struct MpiChannelOptions {
  // The communicator whose processes are the ranks (duplicated at Create, so the provider's
  // traffic never matches the program's own messages). Rank r of the default group "" is the
  // process of rank r in it.
  MPI_Comm comm = MPI_COMM_WORLD;
  // How long (real time) one process waits in one exchange round for the others before giving up
  // with DEADLINE_EXCEEDED. Must be > 0.
  std::chrono::milliseconds timeout{60000};
};

// The MPI channel provider: one participant per process (a process is one rank of each group it
// is in). QueryDefaultRankAndCount answers the process's rank and size in the communicator it was
// created over. ExchangeId, Fail and AgreeOnCreation are collective over the group's
// communicator: every process of the group calls one of them for each channel creation, in the
// same order as its other exchanges of that group (MPI's rule for collectives).
//
// A round: every process contributes a record (did it fail before the exchange, and with what;
// which channel rank and count it claims) with MPI_Iallgather, so every process sees every record;
// then, when none failed and the claims form ranks 0..count-1 once each, the process claiming
// rank 0 broadcasts its id (MPI_Ibcast). A failure of any process (Fail, a bad argument) makes
// ExchangeId return ABORTED on the others, naming the failed rank and its message. The same
// record round after ncclCommInitRank (AgreeOnCreation) makes a failed initialization on one rank
// fail the channel's creation on every rank. Each round is waited for by polling (MPI_Test) for at
// most the timeout: no process waits forever for one that never comes. A timed-out round cannot
// be cancelled (MPI has no cancellation of collectives), so its group is then unusable in this
// process: its later calls fail with FAILED_PRECONDITION naming the timeout.
//
// Groups: "" is the whole communicator; DefineGroup(name, color, key) splits it (MPI_Comm_split),
// and ChannelParams::group = name then exchanges within the processes of the same color.
//
// Ownership: shared (std::shared_ptr, from Create); devices hold it (ReplaceChannelProvider). It
// owns its duplicated and split communicators (MPI_Comm_free at destruction); it must be destroyed
// before MPI is finalized (after, they are left to MPI_Finalize, reported). Thread-safety: every
// method may be called from any thread concurrently when MPI provides MPI_THREAD_SERIALIZED or
// MPI_THREAD_MULTIPLE (the provider serializes its MPI calls with one mutex, so one exchange at a
// time per process; under MPI_THREAD_SERIALIZED the program must not call MPI itself while a
// provider call is in progress); with a lower level, only from the thread that initialized MPI
// (FAILED_PRECONDITION otherwise). Stream ordering: none; these are host-side rendezvous.
class MpiChannelProvider final : public ChannelProvider {
 public:
  // Duplicates `options.comm` (MPI_Comm_dup: collective over it) and makes its errors returned
  // instead of fatal. FAILED_PRECONDITION when MPI is not initialized or already finalized;
  // INVALID_ARGUMENT for MPI_COMM_NULL or a timeout <= 0; UNAVAILABLE when MPI fails.
  [[nodiscard]] static StatusOr<std::shared_ptr<MpiChannelProvider>> Create(
      MpiChannelOptions options = {});

  MpiChannelProvider(const MpiChannelProvider&) = delete;  // owns communicators
  MpiChannelProvider& operator=(const MpiChannelProvider&) = delete;  // ditto
  ~MpiChannelProvider() override;

  // The process's rank and the size of the communicator the provider was created over.
  [[nodiscard]] StatusOr<RankAndCount> QueryDefaultRankAndCount() override;
  // See the class comment. `rank` is this process's channel rank (any permutation of the group's
  // processes is allowed); `count` must be the group's size (INVALID_ARGUMENT here, ABORTED on
  // the others). NOT_FOUND for a group never defined, FAILED_PRECONDITION for a group this process
  // is not in (both local: the others wait for this process until their timeout).
  [[nodiscard]] Status ExchangeId(std::string_view group, int rank, int count,
                                  ChannelId& id) override;
  // Takes part in the group's current round as a failed rank: the others' ExchangeId return
  // ABORTED naming `rank` and `status`. Never fails (a failure of MPI itself goes to
  // ReportDroppedStatus).
  void Fail(std::string_view group, int rank, const Status& status) override;
  // A record round after the communicator's initialization: OK when every process of the group
  // created its communicator; else ABORTED naming a rank that failed (`created` itself on that
  // rank).
  [[nodiscard]] Status AgreeOnCreation(std::string_view group, int rank, int count,
                                       const Status& created) override;

  // Defines the group `name` (collective over the provider's communicator: every process calls
  // it, with the same name): the processes passing the same `color` (>= 0) form one group, ranked
  // by `key` (ties by their rank in the provider's communicator), as MPI_Comm_split. A process
  // passing kMpiGroupNoColor joins none (its later calls on `name` fail with
  // FAILED_PRECONDITION). Every process's arguments are checked in one record round first, so a
  // bad argument on one fails the call on all (INVALID_ARGUMENT here, ABORTED on the others).
  // INVALID_ARGUMENT for "" (the whole communicator's name), a color below kMpiGroupNoColor, or a
  // name already defined.
  [[nodiscard]] Status DefineGroup(std::string name, int color, int key);

  // This process's rank in group `name` and the group's size (use them as ChannelParams::rank /
  // count for a channel of that group; QueryDefaultRankAndCount answers for ""). NOT_FOUND for a
  // group never defined, FAILED_PRECONDITION for one this process is not in.
  [[nodiscard]] StatusOr<RankAndCount> GroupRankAndCount(std::string_view name);

  [[nodiscard]] const MpiChannelOptions& options() const noexcept { return options_; }

 private:
  // What each process contributes to a round (sent as bytes; every process runs the same binary
  // layout, as MPI programs do).
  struct Record {
    std::int32_t failed = 0;   // 1: this process failed (message says why)
    std::int32_t rank = -1;    // the channel rank it claims
    std::int32_t count = -1;   // the channel count it claims
    std::int32_t code = 0;     // the StatusCode of its failure
    char message[1008] = {};   // its failure's message, NUL-terminated (truncated)
  };
  // One communicator and the state of its rounds. The buffers of a round live here, not on a
  // caller's stack: a round that timed out is still pending in MPI and may complete later.
  struct Group {
    std::string name;
    MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL: this process is not in the group
    int rank = -1;                  // this process's rank in comm
    int size = 0;
    MPI_Request pending = MPI_REQUEST_NULL;  // a round that timed out, still pending in MPI
    Status broken;                           // set once a round timed out
    Record mine;
    std::vector<Record> records;
    ChannelId id{};
  };

  MpiChannelProvider(MpiChannelOptions options, int world_rank, int world_size, bool any_thread)
      : options_(options),
        world_rank_(world_rank),
        world_size_(world_size),
        any_thread_(any_thread) {}

  // FAILED_PRECONDITION when this thread may not call MPI (see the class comment).
  [[nodiscard]] Status CheckThread() const;
  // The usable group `name`: NOT_FOUND, FAILED_PRECONDITION (not a member, or broken).
  [[nodiscard]] StatusOr<Group*> FindLocked(std::string_view name, std::string_view context)
      CUHAL_REQUIRES(mu_);
  // Waits for `request` of `group` until the deadline; on timeout, keeps it pending in the group
  // and breaks the group.
  [[nodiscard]] Status WaitLocked(Group& group, MPI_Request request, std::string_view what,
                                  std::string_view context) CUHAL_REQUIRES(mu_);
  // One record round: group.mine gathered from every process into group.records.
  [[nodiscard]] Status GatherLocked(Group& group, std::string_view context) CUHAL_REQUIRES(mu_);
  // This process's own failure `mine` when it failed; else the first failure of group.records
  // (ABORTED naming the rank); else OK.
  [[nodiscard]] Status FirstFailure(const Group& group, const Status& mine,
                                    std::string_view context) const;

  const MpiChannelOptions options_;
  const int world_rank_;
  const int world_size_;
  const bool any_thread_;  // MPI provides at least MPI_THREAD_SERIALIZED
  Mutex mu_;
  // Every group by name, "" first (the duplicated communicator). Guarded by mu_.
  std::map<std::string, std::unique_ptr<Group>, std::less<>> groups_ CUHAL_GUARDED_BY(mu_);
};

}  // namespace cuhal

#endif  // CUHAL_CORE_CHANNEL_MPI_CHANNEL_PROVIDER_H_
