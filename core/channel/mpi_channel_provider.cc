// Copyright 2026 The cuhal Authors.
#include "core/channel/mpi_channel_provider.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

namespace cuhal {
namespace {

// "MPI_Iallgather: MPI_ERR_COMM: invalid communicator (error 5)".
Status MpiError(int rc, std::string_view call) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) {
    std::snprintf(text, sizeof(text), "unknown MPI error");
  }
  return UnavailableError(StrCat(call, ": ", std::string_view(text, std::strlen(text)),
                                 " (MPI error ", rc, ")"));
}

bool MpiUsable() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// MpiSession

StatusOr<MpiSession> MpiSession::Initialize(int* argc, char*** argv) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    return FailedPreconditionError(
        "initializing MPI: MPI was already finalized in this process (it can be initialized "
        "once per process)");
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized != 0) {
    if (int rc = MPI_Query_thread(&provided); rc != MPI_SUCCESS) {
      return MpiError(rc, "initializing MPI: MPI_Query_thread");
    }
    return MpiSession(/*owns=*/false, provided);
  }
  if (int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided); rc != MPI_SUCCESS) {
    return MpiError(rc, "initializing MPI: MPI_Init_thread(MPI_THREAD_MULTIPLE)");
  }
  return MpiSession(/*owns=*/true, provided);
}

MpiSession::MpiSession(MpiSession&& other) noexcept
    : owns_(std::exchange(other.owns_, false)), thread_level_(other.thread_level_) {}

MpiSession::~MpiSession() {
  if (!owns_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  if (int rc = MPI_Finalize(); rc != MPI_SUCCESS) {
    ReportDroppedStatus(MpiError(rc, "finalizing MPI: MPI_Finalize"));
  }
}

// ---------------------------------------------------------------------------------------------
// MpiChannelProvider

StatusOr<std::shared_ptr<MpiChannelProvider>> MpiChannelProvider::Create(
    MpiChannelOptions options) {
  constexpr std::string_view kContext = "creating the MPI channel provider";
  if (!MpiUsable()) {
    return FailedPreconditionError(
        StrCat(kContext, ": MPI is not initialized, or already finalized (initialize it first: "
                         "MpiSession::Initialize or MPI_Init_thread)"));
  }
  if (options.comm == MPI_COMM_NULL) {
    return InvalidArgumentError(StrCat(kContext, ": the communicator is MPI_COMM_NULL"));
  }
  if (options.timeout.count() <= 0) {
    return InvalidArgumentError(
        StrCat(kContext, ": the timeout must be positive, got ", options.timeout.count(), " ms"));
  }
  int level = MPI_THREAD_SINGLE;
  if (int rc = MPI_Query_thread(&level); rc != MPI_SUCCESS) {
    return MpiError(rc, StrCat(kContext, ": MPI_Query_thread"));
  }
  auto group = std::make_unique<Group>();
  if (int rc = MPI_Comm_dup(options.comm, &group->comm); rc != MPI_SUCCESS) {
    return MpiError(rc, StrCat(kContext, ": MPI_Comm_dup"));
  }
  int rc = MPI_Comm_set_errhandler(group->comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(group->comm, &group->rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(group->comm, &group->size);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&group->comm);
    return MpiError(rc, StrCat(kContext, ": setting up the duplicated communicator"));
  }
  group->records.resize(static_cast<std::size_t>(group->size));
  std::shared_ptr<MpiChannelProvider> provider(new MpiChannelProvider(
      options, group->rank, group->size, level >= MPI_THREAD_SERIALIZED));
  {
    MutexLock lock(provider->mu_);
    provider->groups_.emplace("", std::move(group));
  }
  return provider;
}

MpiChannelProvider::~MpiChannelProvider() {
  MutexLock lock(mu_);
  if (!MpiUsable()) {
    if (!groups_.empty()) {
      ReportDroppedStatus(FailedPreconditionError(StrCat(
          "destroying the MPI channel provider: MPI is already finalized, so its ",
          groups_.size(), " communicator(s) were left to MPI_Finalize (destroy the provider "
                          "before finalizing MPI)")));
    }
    return;
  }
  for (auto& [name, group] : groups_) {
    if (group->pending != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&group->pending, &done, MPI_STATUS_IGNORE);
      if (done == 0) {
        // MPI cannot cancel or free a pending collective: its buffers must outlive it, so the
        // group is deliberately leaked (the process's MPI state is unusable for it anyway).
        ReportDroppedStatus(FailedPreconditionError(StrCat(
            "destroying the MPI channel provider: group '", name,
            "' has an exchange round that timed out and is still pending in MPI; its "
            "communicator and buffers are left allocated")));
        static_cast<void>(group.release());
        continue;
      }
    }
    if (group->comm != MPI_COMM_NULL) {
      if (int rc = MPI_Comm_free(&group->comm); rc != MPI_SUCCESS) {
        ReportDroppedStatus(
            MpiError(rc, StrCat("destroying the MPI channel provider: MPI_Comm_free of group '",
                                name, "'")));
      }
    }
  }
}

Status MpiChannelProvider::CheckThread() const {
  if (any_thread_) return OkStatus();
  int is_main = 0;
  MPI_Is_thread_main(&is_main);
  if (is_main != 0) return OkStatus();
  return FailedPreconditionError(
      "MPI was initialized with a thread level below MPI_THREAD_SERIALIZED, so only the thread "
      "that initialized it may call MPI (initialize it with MpiSession::Initialize, which asks "
      "for MPI_THREAD_MULTIPLE)");
}

StatusOr<RankAndCount> MpiChannelProvider::QueryDefaultRankAndCount() {
  return RankAndCount{world_rank_, world_size_};
}

StatusOr<MpiChannelProvider::Group*> MpiChannelProvider::FindLocked(std::string_view name,
                                                                    std::string_view context) {
  auto it = groups_.find(name);
  if (it == groups_.end()) {
    return NotFoundError(StrCat(context, ": no group '", name,
                                "' was defined (MpiChannelProvider::DefineGroup)"));
  }
  Group& group = *it->second;
  if (group.comm == MPI_COMM_NULL) {
    return FailedPreconditionError(
        StrCat(context, ": MPI rank ", world_rank_, " is not in group '", name,
               "' (it passed kMpiGroupNoColor to DefineGroup)"));
  }
  if (!group.broken.ok()) {
    return FailedPreconditionError(
        StrCat(context, ": group '", name, "' is unusable in this process since an exchange "
                        "timed out (", group.broken.message(), ")"));
  }
  return &group;
}

Status MpiChannelProvider::WaitLocked(Group& group, MPI_Request request, std::string_view what,
                                      std::string_view context) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + options_.timeout;
  auto pause = std::chrono::microseconds(10);
  for (;;) {
    int done = 0;
    if (int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) {
      return MpiError(rc, StrCat(context, ": MPI_Test of ", what));
    }
    if (done != 0) return OkStatus();
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
  group.pending = request;
  group.broken = DeadlineExceededError(
      StrCat(what, " in group '", group.name, "' did not complete within ",
             options_.timeout.count(), " ms: a process of the group never took part"));
  return Status(group.broken).AddContext(std::string(context));
}

Status MpiChannelProvider::GatherLocked(Group& group, std::string_view context) {
  group.records.assign(static_cast<std::size_t>(group.size), Record{});
  MPI_Request request = MPI_REQUEST_NULL;
  if (int rc = MPI_Iallgather(&group.mine, sizeof(Record), MPI_BYTE, group.records.data(),
                              sizeof(Record), MPI_BYTE, group.comm, &request);
      rc != MPI_SUCCESS) {
    return MpiError(rc, StrCat(context, ": MPI_Iallgather"));
  }
  return WaitLocked(group, request, "the round's MPI_Iallgather", context);
}

Status MpiChannelProvider::FirstFailure(const Group& group, const Status& mine,
                                        std::string_view context) const {
  if (!mine.ok()) return Status(mine).AddContext(std::string(context));
  for (int p = 0; p < group.size; ++p) {
    const Record& record = group.records[static_cast<std::size_t>(p)];
    if (record.failed == 0) continue;
    const std::string_view message(record.message,
                                   strnlen(record.message, sizeof(record.message)));
    return AbortedError(StrCat(context, ": rank ", record.rank, " of group '", group.name,
                               "' (the process of rank ", p, " in the group's communicator) "
                               "failed: ", StatusCodeName(static_cast<StatusCode>(record.code)),
                               ": ", message));
  }
  return OkStatus();
}

namespace {

void FillRecord(auto& record, int rank, int count, const Status& status) {
  record = {};
  record.rank = rank;
  record.count = count;
  if (!status.ok()) {
    record.failed = 1;
    record.code = static_cast<std::int32_t>(status.code());
    const std::string message = status.message();
    const std::size_t n = std::min(message.size(), sizeof(record.message) - 1);
    std::memcpy(record.message, message.data(), n);
    record.message[n] = '\0';
  }
}

}  // namespace

Status MpiChannelProvider::ExchangeId(std::string_view group_name, int rank, int count,
                                      ChannelId& id) {
  const std::string context = StrCat("exchanging the channel id of group '", group_name,
                                     "' over MPI as rank ", rank, " of ", count);
  CUHAL_RETURN_IF_ERROR(CheckThread(), context);
  MutexLock lock(mu_);
  CUHAL_ASSIGN_OR_RETURN(Group * group, FindLocked(group_name, context));
  // A bad argument here still takes part in the round (as a failure), so nobody waits for it.
  Status local;
  if (count != group->size) {
    local = InvalidArgumentError(StrCat("the group has ", group->size, " process(es), not ",
                                        count));
  } else if (rank < 0 || rank >= count) {
    local = InvalidArgumentError(StrCat("rank ", rank, " is outside [0, ", count, ")"));
  }
  FillRecord(group->mine, rank, count, local);
  CUHAL_RETURN_IF_ERROR(GatherLocked(*group, context));
  CUHAL_RETURN_IF_ERROR(FirstFailure(*group, local, context));
  // Every process claims a distinct rank; the one claiming 0 is the root.
  std::vector<int> process_of(static_cast<std::size_t>(count), -1);
  for (int p = 0; p < group->size; ++p) {
    const int claimed = group->records[static_cast<std::size_t>(p)].rank;
    int& owner = process_of[static_cast<std::size_t>(claimed)];
    if (owner != -1) {
      // Every process sees the same records, so every one of them returns this.
      return InvalidArgumentError(StrCat(context, ": the processes of rank ", owner, " and ", p,
                                         " in the group's communicator both claim rank ",
                                         claimed));
    }
    owner = p;
  }
  const int root = process_of[0];
  if (group->rank == root) group->id = id;
  MPI_Request request = MPI_REQUEST_NULL;
  if (int rc = MPI_Ibcast(group->id.data(), static_cast<int>(kChannelIdSize), MPI_BYTE, root,
                          group->comm, &request);
      rc != MPI_SUCCESS) {
    return MpiError(rc, StrCat(context, ": MPI_Ibcast of the id from rank 0"));
  }
  CUHAL_RETURN_IF_ERROR(WaitLocked(*group, request, "the MPI_Ibcast of rank 0's id", context));
  id = group->id;
  return OkStatus();
}

void MpiChannelProvider::Fail(std::string_view group_name, int rank, const Status& status) {
  const std::string context = StrCat("reporting the failure of rank ", rank, " of group '",
                                     group_name, "' over MPI");
  if (Status thread = CheckThread(); !thread.ok()) {
    ReportDroppedStatus(std::move(thread).AddContext(context));
    return;
  }
  MutexLock lock(mu_);
  StatusOr<Group*> group = FindLocked(group_name, context);
  if (!group.ok()) {
    ReportDroppedStatus(group.status());
    return;
  }
  const Status failure =
      status.ok() ? UnknownError("Fail was called with an OK status") : Status(status);
  FillRecord((*group)->mine, rank, (*group)->size, failure);
  if (Status gathered = GatherLocked(**group, context); !gathered.ok()) {
    ReportDroppedStatus(gathered);
  }
}

Status MpiChannelProvider::AgreeOnCreation(std::string_view group_name, int rank, int count,
                                           const Status& created) {
  const std::string context = StrCat("agreeing over MPI that every rank of group '", group_name,
                                     "' created its communicator, as rank ", rank, " of ", count);
  CUHAL_RETURN_IF_ERROR(CheckThread(), context);
  MutexLock lock(mu_);
  StatusOr<Group*> group = FindLocked(group_name, context);
  if (!group.ok()) return created.ok() ? group.status() : created;
  FillRecord((*group)->mine, rank, count, created);
  if (Status gathered = GatherLocked(**group, context); !gathered.ok()) {
    return created.ok() ? gathered : created;
  }
  if (!created.ok()) return created;
  return FirstFailure(**group, created, context);
}

Status MpiChannelProvider::DefineGroup(std::string name, int color, int key) {
  const std::string context =
      StrCat("defining the MPI channel group '", name, "' (color ", color, ", key ", key, ")");
  CUHAL_RETURN_IF_ERROR(CheckThread(), context);
  MutexLock lock(mu_);
  CUHAL_ASSIGN_OR_RETURN(Group * base, FindLocked("", context));
  Status local;
  if (name.empty()) {
    local = InvalidArgumentError("\"\" names the provider's whole communicator");
  } else if (groups_.contains(name)) {
    local = InvalidArgumentError("the group is already defined");
  } else if (color < kMpiGroupNoColor) {
    local = InvalidArgumentError(
        StrCat("the color must be >= 0 or kMpiGroupNoColor (", kMpiGroupNoColor, ")"));
  }
  // Everyone's arguments first, so that nobody enters MPI_Comm_split alone.
  FillRecord(base->mine, world_rank_, world_size_, local);
  CUHAL_RETURN_IF_ERROR(GatherLocked(*base, context));
  CUHAL_RETURN_IF_ERROR(FirstFailure(*base, local, context));
  auto group = std::make_unique<Group>();
  group->name = name;
  if (int rc = MPI_Comm_split(base->comm, color == kMpiGroupNoColor ? MPI_UNDEFINED : color, key,
                              &group->comm);
      rc != MPI_SUCCESS) {
    return MpiError(rc, StrCat(context, ": MPI_Comm_split"));
  }
  if (group->comm != MPI_COMM_NULL) {
    int rc = MPI_Comm_set_errhandler(group->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(group->comm, &group->rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(group->comm, &group->size);
    if (rc != MPI_SUCCESS) {
      MPI_Comm_free(&group->comm);
      return MpiError(rc, StrCat(context, ": setting up the split communicator"));
    }
  }
  groups_.emplace(std::move(name), std::move(group));
  return OkStatus();
}

StatusOr<RankAndCount> MpiChannelProvider::GroupRankAndCount(std::string_view name) {
  MutexLock lock(mu_);
  auto it = groups_.find(name);
  if (it == groups_.end()) {
    return NotFoundError(StrCat("the rank and count of MPI channel group '", name,
                                "': no such group was defined (MpiChannelProvider::DefineGroup)"));
  }
  const Group& group = *it->second;
  if (group.comm == MPI_COMM_NULL) {
    return FailedPreconditionError(StrCat("the rank and count of MPI channel group '", name,
                                          "': MPI rank ", world_rank_, " is not in it"));
  }
  return RankAndCount{group.rank, group.size};
}

}  // namespace cuhal
