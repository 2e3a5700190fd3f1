// Copyright 2026 The cuhal Authors.
// The rendezvous engine; see engine.h for the model and its invariants.
#include "fakenccl/internal/engine.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "fakenccl/internal/fakecuda_hooks.h"
#include "fakenccl/nccl_fault_injector.h"

namespace fakenccl {
namespace internal {

// ---- The rendezvous structures (all guarded by Engine::mu_) ----------------------------------

// One rank's part in a Slot.
struct Participant {
  bool posted = false;
  std::weak_ptr<Task> task;  // weak: a Slot never keeps a Task alive (no cycles)
  CallDesc desc;
};

struct Slot {
  enum class State { kOpen, kReady, kClaimed, kDone, kFailed };
  bool p2p = false;
  std::uint64_t seq = 0;  // collective sequence number, or k of the k-th send from src to dst
  int src = -1;
  int dst = -1;
  std::vector<Participant> parts;  // collective: one per rank; point to point: [0] send, [1] recv
  State state = State::kOpen;
  std::string failure;
  std::vector<int> bad_ranks;  // ranks whose buffers were not device memory
  std::size_t finished = 0;    // participants whose Task finished
};

struct RankState {
  int device = -1;
  std::uint64_t handle_id = 0;  // 0 once destroyed or aborted
  bool destroyed = false;
  bool aborted = false;
  bool dead = false;  // rank death (fault injection)
  ncclResult_t async_error = ncclSuccess;
  std::string async_text;
  std::uint64_t calls = 0;  // communication calls, for rank death
  std::uint64_t next_coll = 0;
  std::uint64_t next_split = 0;
  std::uint64_t next_task = 0;
  std::vector<std::uint64_t> sends;  // per peer: sends posted so far
  std::vector<std::uint64_t> recvs;  // per peer: receives posted so far
  std::vector<std::weak_ptr<Task>> pending;
};

struct SplitRendezvous {
  struct Post {
    bool posted = false;
    int color = 0;
    int key = 0;
    std::uint64_t child = 0;  // handle id; 0 for NCCL_SPLIT_NOCOLOR
  };
  std::uint64_t seq = 0;
  Deadline start;  // on the parent communicator's clock
  std::weak_ptr<CommShared> parent;
  std::vector<Post> posts;
  int count = 0;
  bool done = false;
  ncclResult_t error = ncclSuccess;
  std::string text;
};

struct CommShared {
  std::uint64_t id = 0;
  std::string label;  // "communicator #3 (4 ranks)"
  int nranks = 0;
  std::shared_ptr<fakecuda::IdleClock> clock;  // its ranks' virtual clock; null without fakecuda
  std::vector<RankState> ranks;
  std::map<std::uint64_t, std::shared_ptr<Slot>> colls;
  std::map<std::tuple<int, int, std::uint64_t>, std::shared_ptr<Slot>> p2ps;
  std::map<std::uint64_t, std::shared_ptr<SplitRendezvous>> splits;
};

struct InitRendezvous {
  std::string key;
  const char* api = "";
  int nranks = 0;
  std::shared_ptr<fakecuda::IdleClock> clock;  // the joined ranks'; becomes the communicator's
  Deadline start;
  std::vector<std::uint64_t> by_rank;  // handle id per rank; 0 until it arrives
  std::vector<std::uint64_t> members;  // every handle that joined
  int count = 0;
  bool done = false;
};

struct Task {
  std::shared_ptr<CommShared> comm;
  int rank = 0;
  std::uint64_t ordinal = 0;
  std::vector<std::pair<std::shared_ptr<Slot>, std::size_t>> entries;  // (slot, participant)
  std::vector<CUstream> streams;  // one leg per distinct stream
  std::vector<char> at_head;
  std::vector<char> leg_done;
  bool first_head = false;  // some leg reached its head; `start` is set
  bool started = false;     // every leg is at its head
  Deadline start;
  bool done = false;
};

namespace {

constexpr std::uintptr_t kCommTag = 0xC;
constexpr auto kHostSlice = std::chrono::milliseconds(10);

// The calling thread is blocked inside the fake / runs work for others (fakecuda/virtual_clock.h),
// through the hooks (nothing happens without fakecuda).
class Blocked {
 public:
  Blocked() : hooks_(Hooks()) {
    if (hooks_ != nullptr) hooks_->enter_blocked();
  }
  ~Blocked() {
    if (hooks_ != nullptr) hooks_->leave_blocked();
  }
  Blocked(const Blocked&) = delete;             // one enter, one leave
  Blocked& operator=(const Blocked&) = delete;  // ditto

 private:
  const FakecudaHooks* hooks_;
};

class Busy {
 public:
  Busy() : hooks_(Hooks()) {
    if (hooks_ != nullptr) hooks_->enter_busy();
  }
  ~Busy() {
    if (hooks_ != nullptr) hooks_->leave_busy();
  }
  Busy(const Busy&) = delete;             // one enter, one leave
  Busy& operator=(const Busy&) = delete;  // ditto

 private:
  const FakecudaHooks* hooks_;
};

// Null-tolerant clock operations (a clock is null when fakecuda cannot be reached).
void ClockBind(const std::shared_ptr<fakecuda::IdleClock>& clock, int index) {
  if (clock) clock->Bind(index);
}
void ClockLeave(const std::shared_ptr<fakecuda::IdleClock>& clock, int index) {
  if (clock) clock->Leave(index);
}
void ClockPoll(const std::shared_ptr<fakecuda::IdleClock>& clock, int index) {
  if (clock) clock->NotePoll(index);
}
void ClockProgress(const std::shared_ptr<fakecuda::IdleClock>& clock) {
  if (clock) clock->NoteProgress();
}

std::string Fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* format, ...) {
  char buffer[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

std::string RankList(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

// NCCL's ncclUserRedOpMangle (its own inverse), keyed on the handle value.
int Mangle(ncclComm_t comm, int op) {
  if (op < static_cast<int>(ncclNumOps)) return op;
  std::uint64_t h = reinterpret_cast<std::uintptr_t>(comm);
  h ^= h >> 32;
  h *= 0x9e3779b97f4a7c13u;
  h >>= 32;
  h &= static_cast<std::uint64_t>(ncclMaxRedOp);
  int op1 = static_cast<int>(h) ^ op;
  return op1 < static_cast<int>(ncclNumOps) ? op : op1;
}

bool ValidType(int raw) { return raw >= 0 && raw < static_cast<int>(ncclNumTypes); }

// Wakes fakecuda's waiting threads after a `ready` predicate may have changed (without mu_).
void NotifyFakecuda() {
  if (const FakecudaHooks* hooks = Hooks()) hooks->notify_stream_work();
}

std::string DescribeCall(const CallDesc& d) {
  std::ostringstream os;
  os << CallKindApi(d.kind) << "(count=" << d.count << ", " << TypeName(d.type);
  if (IsReduction(d.kind)) os << ", " << ReduceKindName(d.op.kind);
  if (HasRoot(d.kind)) os << ", root=" << d.root;
  if (IsPointToPoint(d.kind)) os << ", peer=" << d.root;
  os << ")";
  return os.str();
}

// Whether two ranks' collective calls at the same sequence number agree.
bool SameCollective(const CallDesc& a, const CallDesc& b) {
  if (a.kind != b.kind || a.count != b.count || a.type != b.type) return false;
  if (IsReduction(a.kind) && a.op.kind != b.op.kind) return false;
  if (HasRoot(a.kind) && a.root != b.root) return false;
  return true;
}

double CostUs(const CallDesc& d, int nranks) {
  double bytes = static_cast<double>(d.count * TypeSize(d.type));
  if (d.kind == CallKind::kAllGather || d.kind == CallKind::kReduceScatter ||
      d.kind == CallKind::kAlltoAll) {
    bytes *= nranks;
  }
  return 5.0 + bytes / 2.0e5;  // ~200 GB/s, 5 us launch: NVLink-class figures
}

// The data movement of one Slot, done without the engine lock (invariant 3).
struct ExecResult {
  bool ok = true;
  bool internal = false;  // the fake itself failed (ncclInternalError for everyone)
  std::string text;
  std::vector<int> bad_ranks;
};

class Executor {
 public:
  Executor(const std::string& where, ExecResult* result) : where_(where), result_(result) {}

  // The host bytes of [ptr, ptr + bytes) of `rank`, or null (recorded) when not device memory.
  std::byte* Translate(int rank, const void* ptr, std::size_t bytes, const char* what) {
    if (bytes == 0) return nullptr;
    std::byte* host =
        Hooks()->translate_device_pointer(reinterpret_cast<CUdeviceptr>(ptr), bytes, nullptr);
    if (host == nullptr) {
      result_->ok = false;
      if (std::find(result_->bad_ranks.begin(), result_->bad_ranks.end(), rank) ==
          result_->bad_ranks.end()) {
        result_->bad_ranks.push_back(rank);
      }
      if (result_->text.empty()) {
        result_->text = Fmt(
            "fakenccl: %s: rank %d's %s %p (%zu bytes) is not inside one allocation of the fake "
            "driver (on a GPU the kernel would fault with an illegal address)",
            where_.c_str(), rank, what, ptr, bytes);
      }
    }
    return host;
  }

 private:
  const std::string& where_;
  ExecResult* result_;
};

std::vector<std::byte> Snapshot(const std::byte* p, std::size_t bytes) {
  std::vector<std::byte> v(bytes);
  if (bytes != 0) std::memcpy(v.data(), p, bytes);
  return v;
}

void Store(std::byte* dst, const std::byte* src, std::size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

ExecResult ExecuteCollective(const std::vector<CallDesc>& d, const std::string& where) {
  ExecResult res;
  Executor ex(where, &res);
  const int n = static_cast<int>(d.size());
  const CallDesc& first = d[0];
  const CallKind kind = first.kind;
  const std::size_t c = first.count;
  const std::size_t s = TypeSize(first.type);
  const std::size_t block = c * s;
  const std::size_t all = block * static_cast<std::size_t>(n);
  const int root = first.root;
  std::vector<std::byte*> in(static_cast<size_t>(n), nullptr);
  std::vector<std::byte*> out(static_cast<size_t>(n), nullptr);
  std::vector<ScalarBytes> scalars(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    const CallDesc& dr = d[static_cast<size_t>(r)];
    scalars[static_cast<size_t>(r)] = dr.op.scalar;
    if (dr.op.kind == ReduceKind::kPreMulSum && dr.op.scalar_on_device) {
      std::byte* p = ex.Translate(r, reinterpret_cast<const void*>(dr.op.scalar_ptr), s,
                                  "PreMulSum scalar");
      if (p != nullptr) std::memcpy(scalars[static_cast<size_t>(r)].data(), p, s);
    }
    auto rr = static_cast<size_t>(r);
    switch (kind) {
      case CallKind::kAllReduce:
        in[rr] = ex.Translate(r, dr.sendbuff, block, "sendbuff");
        out[rr] = ex.Translate(r, dr.recvbuff, block, "recvbuff");
        break;
      case CallKind::kBroadcast:
        if (r == root) in[rr] = ex.Translate(r, dr.sendbuff, block, "sendbuff");
        out[rr] = ex.Translate(r, dr.recvbuff, block, "recvbuff");
        break;
      case CallKind::kReduce:
        in[rr] = ex.Translate(r, dr.sendbuff, block, "sendbuff");
        if (r == root) out[rr] = ex.Translate(r, dr.recvbuff, block, "recvbuff");
        break;
      case CallKind::kAllGather:
        in[rr] = ex.Translate(r, dr.sendbuff, block, "sendbuff");
        out[rr] = ex.Translate(r, dr.recvbuff, all, "recvbuff");
        break;
      case CallKind::kReduceScatter:
        in[rr] = ex.Translate(r, dr.sendbuff, all, "sendbuff");
        out[rr] = ex.Translate(r, dr.recvbuff, block, "recvbuff");
        break;
      case CallKind::kAlltoAll:
        in[rr] = ex.Translate(r, dr.sendbuff, all, "sendbuff");
        out[rr] = ex.Translate(r, dr.recvbuff, all, "recvbuff");
        break;
      case CallKind::kGather:
        in[rr] = ex.Translate(r, dr.sendbuff, block, "sendbuff");
        if (r == root) out[rr] = ex.Translate(r, dr.recvbuff, all, "recvbuff");
        break;
      case CallKind::kScatter:
        if (r == root) in[rr] = ex.Translate(r, dr.sendbuff, all, "sendbuff");
        out[rr] = ex.Translate(r, dr.recvbuff, block, "recvbuff");
        break;
      case CallKind::kSend:
      case CallKind::kRecv:
        break;
    }
  }
  if (!res.ok) return res;
  // Snapshot every input before writing any output (invariant 3).
  std::vector<std::vector<std::byte>> snap(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    auto rr = static_cast<size_t>(r);
    if (in[rr] == nullptr) continue;
    std::size_t bytes = (kind == CallKind::kReduceScatter || kind == CallKind::kAlltoAll ||
                         kind == CallKind::kScatter)
                            ? all
                            : block;
    snap[rr] = Snapshot(in[rr], bytes);
  }
  auto reduce_blocks = [&](std::size_t offset, std::byte* dst) {
    std::vector<const std::byte*> ptrs;
    for (int r = 0; r < n; ++r) ptrs.push_back(snap[static_cast<size_t>(r)].data() + offset);
    Reduce(first.type, first.op.kind, ptrs, scalars, c, dst);
  };
  switch (kind) {
    case CallKind::kAllReduce:
    case CallKind::kReduce: {
      std::vector<std::byte> result(block);
      reduce_blocks(0, result.data());
      for (int r = 0; r < n; ++r) {
        if (out[static_cast<size_t>(r)] != nullptr) {
          Store(out[static_cast<size_t>(r)], result.data(), block);
        }
      }
      break;
    }
    case CallKind::kBroadcast:
      for (int r = 0; r < n; ++r) {
        if (out[static_cast<size_t>(r)] != nullptr) {
          Store(out[static_cast<size_t>(r)], snap[static_cast<size_t>(root)].data(), block);
        }
      }
      break;
    case CallKind::kAllGather: {
      std::vector<std::byte> result(all);
      for (int r = 0; r < n; ++r) {
        Store(result.data() + static_cast<size_t>(r) * block, snap[static_cast<size_t>(r)].data(),
              block);
      }
      for (int r = 0; r < n; ++r) Store(out[static_cast<size_t>(r)], result.data(), all);
      break;
    }
    case CallKind::kReduceScatter: {
      std::vector<std::vector<std::byte>> results(static_cast<size_t>(n),
                                                  std::vector<std::byte>(block));
      for (int b = 0; b < n; ++b) {
        reduce_blocks(static_cast<size_t>(b) * block, results[static_cast<size_t>(b)].data());
      }
      for (int r = 0; r < n; ++r) {
        Store(out[static_cast<size_t>(r)], results[static_cast<size_t>(r)].data(), block);
      }
      break;
    }
    case CallKind::kAlltoAll:
      // Rank r's block b goes to rank b's block r.
      for (int r = 0; r < n; ++r) {
        for (int b = 0; b < n; ++b) {
          Store(out[static_cast<size_t>(b)] + static_cast<size_t>(r) * block,
                snap[static_cast<size_t>(r)].data() + static_cast<size_t>(b) * block, block);
        }
      }
      break;
    case CallKind::kGather:
      for (int r = 0; r < n; ++r) {
        Store(out[static_cast<size_t>(root)] + static_cast<size_t>(r) * block,
              snap[static_cast<size_t>(r)].data(), block);
      }
      break;
    case CallKind::kScatter:
      for (int r = 0; r < n; ++r) {
        Store(out[static_cast<size_t>(r)],
              snap[static_cast<size_t>(root)].data() + static_cast<size_t>(r) * block, block);
      }
      break;
    case CallKind::kSend:
    case CallKind::kRecv:
      break;
  }
  return res;
}

ExecResult ExecutePointToPoint(const CallDesc& send, int src, const CallDesc& recv, int dst,
                               const std::string& where) {
  ExecResult res;
  Executor ex(where, &res);
  std::size_t bytes = send.count * TypeSize(send.type);
  std::byte* from = ex.Translate(src, send.sendbuff, bytes, "send buffer");
  std::byte* to = ex.Translate(dst, recv.recvbuff, bytes, "receive buffer");
  if (!res.ok) return res;
  std::vector<std::byte> snap = Snapshot(from, bytes);
  Store(to, snap.data(), bytes);
  return res;
}

}  // namespace

// ---- Small helpers ----------------------------------------------------------------------------

const char* CallKindApi(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce: return "ncclAllReduce";
    case CallKind::kBroadcast: return "ncclBroadcast";
    case CallKind::kReduce: return "ncclReduce";
    case CallKind::kAllGather: return "ncclAllGather";
    case CallKind::kReduceScatter: return "ncclReduceScatter";
    case CallKind::kAlltoAll: return "ncclAlltoAll";
    case CallKind::kGather: return "ncclGather";
    case CallKind::kScatter: return "ncclScatter";
    case CallKind::kSend: return "ncclSend";
    case CallKind::kRecv: return "ncclRecv";
  }
  return "nccl?";
}

bool IsReduction(CallKind kind) {
  return kind == CallKind::kAllReduce || kind == CallKind::kReduce ||
         kind == CallKind::kReduceScatter;
}

bool HasRoot(CallKind kind) {
  return kind == CallKind::kBroadcast || kind == CallKind::kReduce || kind == CallKind::kGather ||
         kind == CallKind::kScatter;
}

bool IsPointToPoint(CallKind kind) { return kind == CallKind::kSend || kind == CallKind::kRecv; }

ncclComm_t EncodeComm(std::uint64_t id) {
  return reinterpret_cast<ncclComm_t>(static_cast<std::uintptr_t>((id << 4) | kCommTag));
}

std::uint64_t DecodeComm(ncclComm_t comm) {
  auto v = reinterpret_cast<std::uintptr_t>(comm);
  if ((v & 0xF) != kCommTag) return 0;
  return static_cast<std::uint64_t>(v >> 4);
}

std::shared_ptr<fakecuda::IdleClock> Engine::NewClock(int participants) const {
  const FakecudaHooks* hooks = Hooks();
  if (hooks == nullptr) return nullptr;
  // A quiescent round jumps past every pending deadline of the group (they all have this length).
  const std::uint64_t jump = timeout_ticks_ == ~std::uint64_t{0} ? timeout_ticks_ : timeout_ticks_ + 1;
  return hooks->new_idle_clock(participants, jump);
}

Deadline Engine::StartDeadline(const fakecuda::IdleClock* clock) const {
  Deadline d;
  d.tick = clock != nullptr ? clock->Now() : 0;
  d.wall = std::chrono::steady_clock::now();
  return d;
}

bool Engine::Expired(const fakecuda::IdleClock* clock, const Deadline& d) const {
  if (clock != nullptr && clock->Now() - d.tick > timeout_ticks_) return true;
  return std::chrono::steady_clock::now() - d.wall > wall_timeout_;
}

std::string Engine::ExpiryText(const fakecuda::IdleClock* clock, const Deadline& d) const {
  if (clock != nullptr && clock->Now() - d.tick > timeout_ticks_) {
    return "timed out (every rank that could still make it was blocked or gone: no virtual time "
           "passes while one runs)";
  }
  return Fmt("timed out after the wall-clock backstop of %lld ms (a rank is neither done nor "
             "blocked inside the fake: busy, or blocked somewhere the fake cannot see)",
             static_cast<long long>(wall_timeout_.count()));
}

void Engine::WaitSliceLocked() {
  Blocked blocked;  // an observation of the clocks of this thread's groups
  cv_.WaitFor(mu_, kHostSlice);
}

Engine::Lookup Engine::FindLocked(ncclComm_t comm, const char* op_name, std::string* text) {
  Lookup out;
  if (comm == nullptr) {
    *text = Fmt("%s : comm argument is NULL", op_name);
    out.error = ncclInvalidArgument;
    return out;
  }
  auto it = handles_.find(DecodeComm(comm));
  if (it == handles_.end()) {
    *text = Fmt(
        "Error: corrupted comm object detected (fakenccl: %s: %p is not a live communicator: "
        "never created, or already destroyed or aborted)",
        op_name, static_cast<void*>(comm));
    out.error = ncclInvalidArgument;
    return out;
  }
  out.handle = it->second.get();
  return out;
}

CommHandle* Engine::NewHandleLocked(const char* created_by, int device, int cc_major,
                                    bool blocking) {
  auto h = std::make_unique<CommHandle>();
  h->id = next_id_++;
  h->created_by = created_by;
  h->device = device;
  h->cc_major = cc_major;
  h->blocking = blocking;
  CommHandle* raw = h.get();
  handles_.emplace(raw->id, std::move(h));
  return raw;
}

ncclResult_t Engine::EnsureReadyLocked(CommHandle& h, std::string* text) {
  switch (h.state) {
    case CommHandle::State::kInitializing:
      *text = "Attempt to use communicator before the previous operation returned ncclSuccess";
      return ncclInvalidArgument;
    case CommHandle::State::kFailed:
      *text = h.init_text;
      return h.init_error;
    case CommHandle::State::kReady: {
      RankState& rs = h.comm->ranks[static_cast<size_t>(h.rank)];
      if (rs.async_error != ncclSuccess) {
        *text = rs.async_text;
        return rs.async_error;
      }
      return ncclSuccess;
    }
  }
  return ncclInternalError;
}

void Engine::FormCommLocked(const std::vector<std::uint64_t>& handle_ids,
                            const std::string& label,
                            std::shared_ptr<fakecuda::IdleClock> clock) {
  static std::atomic<std::uint64_t> next_comm{1};
  auto comm = std::make_shared<CommShared>();
  comm->id = next_comm.fetch_add(1, std::memory_order_relaxed);
  comm->nranks = static_cast<int>(handle_ids.size());
  comm->label = Fmt("communicator #%" PRIu64 " (%d ranks, %s)", comm->id, comm->nranks,
                    label.c_str());
  comm->ranks.resize(handle_ids.size());
  comm->clock = clock ? std::move(clock) : NewClock(comm->nranks);
  for (std::size_t r = 0; r < handle_ids.size(); ++r) {
    RankState& rs = comm->ranks[r];
    rs.sends.assign(handle_ids.size(), 0);
    rs.recvs.assign(handle_ids.size(), 0);
    auto it = handles_.find(handle_ids[r]);
    if (it == handles_.end() || it->second->state != CommHandle::State::kInitializing) {
      // Aborted while the rendezvous was open: a rank that is gone from the start.
      rs.aborted = true;
      rs.destroyed = true;
      ClockLeave(comm->clock, static_cast<int>(r));
      continue;
    }
    CommHandle& h = *it->second;
    h.comm = comm;
    h.rank = static_cast<int>(r);
    h.state = CommHandle::State::kReady;
    h.init.reset();
    h.split.reset();
    rs.device = h.device;
    rs.handle_id = h.id;
  }
  ClockProgress(comm->clock);
  cv_.NotifyAll();
}

// ---- Initialization ---------------------------------------------------------------------------

void Engine::FailInitLocked(std::shared_ptr<InitRendezvous> keep, ncclResult_t error,
                            const std::string& text) {
  // `keep` holds the rendezvous: the handles' references to it are dropped below.
  InitRendezvous& rv = *keep;
  rv.done = true;
  for (std::uint64_t id : rv.members) {
    auto it = handles_.find(id);
    if (it == handles_.end() || it->second->state != CommHandle::State::kInitializing) continue;
    it->second->state = CommHandle::State::kFailed;
    it->second->init_error = error;
    it->second->init_text = text;
    it->second->init.reset();
  }
  auto it = inits_.find(rv.key);
  if (it != inits_.end() && it->second.get() == &rv) inits_.erase(it);
  ClockProgress(rv.clock);
  cv_.NotifyAll();
}

ncclResult_t Engine::InitRank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                              int device, int cc_major, bool blocking, bool wait,
                              const char* api, std::string* text) {
  cuhal::MutexLock lock(mu_);
  std::string key(id.internal, sizeof(id.internal));
  std::shared_ptr<InitRendezvous>& slot = inits_[key];
  if (!slot) {
    slot = std::make_shared<InitRendezvous>();
    slot->key = key;
    slot->api = api;
    slot->nranks = nranks;
    slot->clock = NewClock(nranks);
    slot->start = StartDeadline(slot->clock.get());
    slot->by_rank.assign(static_cast<size_t>(nranks), 0);
  }
  std::shared_ptr<InitRendezvous> rv = slot;
  CommHandle* h = NewHandleLocked(api, device, cc_major, blocking);
  h->init = rv;
  h->init_rank = rank;
  rv->members.push_back(h->id);
  *out = EncodeComm(h->id);
  if (rv->nranks != nranks) {
    FailInitLocked(rv, ncclInvalidUsage,
                   Fmt("fakenccl: %s: ranks disagree on the size of the communicator of one "
                       "ncclUniqueId: rank %d passed nranks=%d, an earlier rank passed nranks=%d",
                       api, rank, nranks, rv->nranks));
  } else if (rv->by_rank[static_cast<size_t>(rank)] != 0) {
    FailInitLocked(rv, ncclInvalidUsage,
                   Fmt("fakenccl: %s: rank %d of %d joined the same ncclUniqueId twice", api,
                       rank, nranks));
  } else {
    rv->by_rank[static_cast<size_t>(rank)] = h->id;
    ClockBind(rv->clock, rank);
    ClockProgress(rv->clock);
    if (++rv->count == nranks) {
      rv->done = true;
      inits_.erase(rv->key);
      FormCommLocked(rv->by_rank, Fmt("made by %s", api), rv->clock);
    }
  }
  if (!wait) return ncclSuccess;
  std::uint64_t handle_id = h->id;
  lock.unlock();
  ncclResult_t result = WaitInitialized(handle_id, text);
  if (result != ncclSuccess) *out = nullptr;
  return result;
}

ncclResult_t Engine::WaitInitialized(std::uint64_t id, std::string* text) {
  cuhal::MutexLock lock(mu_);
  for (;;) {
    auto it = handles_.find(id);
    if (it == handles_.end()) {
      *text = "fakenccl: the communicator was aborted while it was being initialized";
      return ncclInvalidArgument;
    }
    CommHandle& h = *it->second;
    if (h.state == CommHandle::State::kReady) return ncclSuccess;
    if (h.state == CommHandle::State::kFailed) {
      *text = h.init_text;
      ncclResult_t error = h.init_error;
      // A blocking call hands back no communicator. UNMEASURED: what NCCL leaves in *newcomm
      // when its bootstrap fails.
      if (h.blocking) handles_.erase(it);
      return error;
    }
    if (h.init && Expired(h.init->clock.get(), h.init->start)) {
      std::shared_ptr<InitRendezvous> keep = h.init;
      InitRendezvous& rv = *keep;
      std::vector<int> missing;
      for (std::size_t r = 0; r < rv.by_rank.size(); ++r) {
        if (rv.by_rank[r] == 0) missing.push_back(static_cast<int>(r));
      }
      // UNMEASURED (a choice): NCCL's bootstrap would hang, or fail after its socket timeouts with
      // ncclSystemError or ncclRemoteError.
      FailInitLocked(keep, ncclSystemError,
                     Fmt("fakenccl: %s %s waiting for rank(s) %s of %d to join with the same "
                         "ncclUniqueId (NCCL's bootstrap would time out or hang)",
                         rv.api, ExpiryText(rv.clock.get(), rv.start).c_str(),
                         RankList(missing).c_str(), rv.nranks));
      continue;
    }
    if (h.split) {
      std::shared_ptr<SplitRendezvous> rv = h.split;
      std::shared_ptr<CommShared> parent = rv->parent.lock();
      if (parent && Expired(parent->clock.get(), rv->start)) {
        SplitTimeoutLocked(*parent, *rv);
        continue;
      }
    }
    WaitSliceLocked();
  }
}

ncclResult_t Engine::InitAll(ncclComm_t* comms, std::span<const int> devices,
                             std::span<const int> cc_major, std::string* /*text*/) {
  cuhal::MutexLock lock(mu_);
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    CommHandle* h = NewHandleLocked("ncclCommInitAll", devices[i], cc_major[i], true);
    ids.push_back(h->id);
    comms[i] = EncodeComm(h->id);
  }
  if (!ids.empty()) {
    FormCommLocked(ids, "made by ncclCommInitAll");
    // One thread drives every rank.
    const std::shared_ptr<fakecuda::IdleClock>& clock = handles_.at(ids[0])->comm->clock;
    for (std::size_t r = 0; r < ids.size(); ++r) ClockBind(clock, static_cast<int>(r));
  }
  return ncclSuccess;
}

// ---- Split ------------------------------------------------------------------------------------

void Engine::FormSplitLocked(CommShared& parent, SplitRendezvous& rv) {
  std::map<int, std::vector<std::pair<int, int>>> by_color;  // color -> (key, parent rank)
  for (std::size_t r = 0; r < rv.posts.size(); ++r) {
    const SplitRendezvous::Post& p = rv.posts[r];
    if (p.child != 0) by_color[p.color].emplace_back(p.key, static_cast<int>(r));
  }
  for (auto& [color, members] : by_color) {
    std::sort(members.begin(), members.end());
    std::vector<std::uint64_t> ids;
    for (const auto& [key, r] : members) ids.push_back(rv.posts[static_cast<size_t>(r)].child);
    FormCommLocked(ids, Fmt("color %d of ncclCommSplit #%" PRIu64 " of communicator #%" PRIu64,
                            color, rv.seq, parent.id));
    // Each child rank is driven by the thread that drives its parent rank.
    auto it = handles_.find(ids[0]);
    if (it != handles_.end() && it->second->comm && it->second->comm->clock && parent.clock) {
      for (std::size_t i = 0; i < members.size(); ++i) {
        it->second->comm->clock->BindLike(static_cast<int>(i), *parent.clock, members[i].second);
      }
    }
  }
  rv.done = true;
  parent.splits.erase(rv.seq);
  ClockProgress(parent.clock);
  cv_.NotifyAll();
}

void Engine::FailSplitLocked(CommShared& parent, SplitRendezvous& rv, ncclResult_t error,
                             const std::string& text) {
  rv.done = true;
  rv.error = error;
  rv.text = text;
  for (const SplitRendezvous::Post& p : rv.posts) {
    auto it = handles_.find(p.child);
    if (p.child == 0 || it == handles_.end()) continue;
    if (it->second->state != CommHandle::State::kInitializing) continue;
    it->second->state = CommHandle::State::kFailed;
    it->second->init_error = error;
    it->second->init_text = text;
    it->second->split.reset();
  }
  parent.splits.erase(rv.seq);
  ClockProgress(parent.clock);
  cv_.NotifyAll();
}

ncclResult_t Engine::SplitTimeoutLocked(CommShared& parent, SplitRendezvous& rv) {
  std::vector<int> missing;
  bool gone = false;
  for (std::size_t r = 0; r < rv.posts.size(); ++r) {
    if (rv.posts[r].posted) continue;
    missing.push_back(static_cast<int>(r));
    gone = gone || parent.ranks[r].dead || parent.ranks[r].aborted;
  }
  ncclResult_t error = gone ? ncclRemoteError : ncclInvalidUsage;
  FailSplitLocked(parent, rv, error,
                  Fmt("fakenccl: ncclCommSplit #%" PRIu64 " of %s %s: rank(s) %s never called it%s",
                      rv.seq, parent.label.c_str(),
                      ExpiryText(parent.clock.get(), rv.start).c_str(), RankList(missing).c_str(),
                      gone ? " (one of them died or aborted)" : ""));
  return error;
}

ncclResult_t Engine::Split(ncclComm_t parent_comm, int color, int key, int blocking,
                           bool in_group, ncclComm_t* newcomm, bool* child_blocking,
                           std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup p = FindLocked(parent_comm, "ncclCommSplit", text);
  if (p.error != ncclSuccess) return p.error;
  if (newcomm == nullptr) {
    *text = "ncclCommSplit : newcomm argument is NULL";
    return ncclInvalidArgument;
  }
  if (ncclResult_t r = EnsureReadyLocked(*p.handle, text); r != ncclSuccess) return r;
  *newcomm = nullptr;
  CommHandle& ph = *p.handle;
  std::shared_ptr<CommShared> parent = ph.comm;
  RankState& rs = parent->ranks[static_cast<size_t>(ph.rank)];
  if (rs.dead) return ncclSuccess;  // a dead rank's calls have no effect
  ClockBind(parent->clock, ph.rank);
  ClockProgress(parent->clock);
  std::uint64_t seq = rs.next_split++;
  std::shared_ptr<SplitRendezvous>& slot = parent->splits[seq];
  if (!slot) {
    slot = std::make_shared<SplitRendezvous>();
    slot->seq = seq;
    slot->start = StartDeadline(parent->clock.get());
    slot->parent = parent;
    slot->posts.resize(static_cast<size_t>(parent->nranks));
  }
  std::shared_ptr<SplitRendezvous> rv = slot;
  // NCCL: a NULL config copies the parent's configuration.
  const bool resolved_blocking = blocking < 0 ? ph.blocking : blocking != 0;
  *child_blocking = resolved_blocking;
  const bool wait = resolved_blocking && !in_group;
  std::uint64_t child_id = 0;
  if (color != NCCL_SPLIT_NOCOLOR) {
    CommHandle* child = NewHandleLocked("ncclCommSplit", ph.device, ph.cc_major, resolved_blocking);
    child->split = rv;
    child->init_rank = ph.rank;  // polls count on the parent's clock, as this rank
    child_id = child->id;
    *newcomm = EncodeComm(child_id);
  }
  SplitRendezvous::Post& post = rv->posts[static_cast<size_t>(ph.rank)];
  post.posted = true;
  post.color = color;
  post.key = key;
  post.child = child_id;
  if (++rv->count == parent->nranks) FormSplitLocked(*parent, *rv);
  if (!wait) return ncclSuccess;
  while (!rv->done) {
    if (Expired(parent->clock.get(), rv->start)) {
      SplitTimeoutLocked(*parent, *rv);
      break;
    }
    WaitSliceLocked();
  }
  if (rv->error != ncclSuccess) {
    if (child_id != 0) handles_.erase(child_id);
    *newcomm = nullptr;
    *text = rv->text;
    return rv->error;
  }
  return ncclSuccess;
}

// ---- Finalize, destroy, abort, errors ----------------------------------------------------------

ncclResult_t Engine::Finalize(ncclComm_t comm, std::string* text) {
  if (comm == nullptr) return ncclSuccess;  // NCCL: a NULL comm finalizes nothing
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "CommFinalize", text);
  if (l.error != ncclSuccess) return l.error;
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  if (l.handle->finalized) {
    *text = "fakenccl: ncclCommFinalize: the communicator was already finalized";
    return ncclInvalidArgument;
  }
  l.handle->finalized = true;
  return ncclSuccess;
}

ncclResult_t Engine::Destroy(ncclComm_t comm, std::string* text) {
  if (comm == nullptr) return ncclSuccess;
  cuhal::MutexLock lock(mu_);
  auto it = handles_.find(DecodeComm(comm));
  if (it == handles_.end()) {
    *text = Fmt("comm %p has already been destroyed", static_cast<void*>(comm));
    return ncclInvalidArgument;
  }
  CommHandle& h = *it->second;
  h.destroy_requested = true;
  // NCCL's ncclCommDestroy returns the communicator's error without destroying it: a broken
  // communicator is for ncclCommAbort. (From NCCL's source; UNMEASURED on a GPU, where a one-rank
  // communicator cannot be broken on purpose.)
  if (ncclResult_t r = EnsureReadyLocked(h, text); r != ncclSuccess) return r;
  RankState& rs = h.comm->ranks[static_cast<size_t>(h.rank)];
  rs.destroyed = true;
  rs.handle_id = 0;
  ClockLeave(h.comm->clock, h.rank);  // it can make no call of the group any more
  handles_.erase(it);
  cv_.NotifyAll();
  return ncclSuccess;
}

void Engine::AbortRankLocked(CommShared& comm, int rank, const char* why) {
  RankState& rs = comm.ranks[static_cast<size_t>(rank)];
  rs.aborted = true;
  rs.destroyed = true;
  rs.handle_id = 0;
  ClockLeave(comm.clock, rank);
  std::string text =
      Fmt("fakenccl: rank %d of %s %s; operations that needed it fail", rank, comm.label.c_str(),
          why);
  auto involves = [rank](const Slot& s) {
    return s.p2p ? (s.src == rank || s.dst == rank) : true;
  };
  std::vector<std::shared_ptr<Slot>> open;
  for (auto& [seq, s] : comm.colls) {
    if (s->state == Slot::State::kOpen && involves(*s)) open.push_back(s);
  }
  for (auto& [key, s] : comm.p2ps) {
    if (s->state == Slot::State::kOpen && involves(*s)) open.push_back(s);
  }
  for (auto& s : open) FailSlotLocked(comm, *s, ncclRemoteError, text);
  std::vector<std::shared_ptr<SplitRendezvous>> splits;
  for (auto& [seq, rv] : comm.splits) {
    if (!rv->posts[static_cast<size_t>(rank)].posted) splits.push_back(rv);
  }
  for (auto& rv : splits) FailSplitLocked(comm, *rv, ncclRemoteError, text);
  cv_.NotifyAll();
}

ncclResult_t Engine::Abort(ncclComm_t comm, std::string* text) {
  if (comm == nullptr) return ncclSuccess;
  {
    cuhal::MutexLock lock(mu_);
    Lookup l = FindLocked(comm, "CommAbort", text);
    if (l.error != ncclSuccess) return l.error;
    CommHandle& h = *l.handle;
    if (h.state == CommHandle::State::kInitializing && h.init) {
      ClockLeave(h.init->clock, h.init_rank);
      FailInitLocked(h.init, ncclRemoteError,
                     "fakenccl: a rank aborted its communicator while it was being initialized");
    } else if (h.state == CommHandle::State::kReady) {
      AbortRankLocked(*h.comm, h.rank, "aborted its communicator (ncclCommAbort)");
    }
    const std::uint64_t id = h.id;
    handles_.erase(id);
  }
  NotifyFakecuda();  // tasks waiting on the aborted rank can now run (as no-ops)
  return ncclSuccess;
}

ncclResult_t Engine::GetAsyncError(ncclComm_t comm, ncclResult_t* async_error,
                                   std::string* text) {
  bool failed_any = false;
  bool polled = false;
  {
    cuhal::MutexLock lock(mu_);
    Lookup l = FindLocked(comm, "ncclGetAsyncError", text);
    if (l.error != ncclSuccess) return l.error;
    if (async_error == nullptr) {
      *text = "ncclGetAsyncError : asyncError argument is NULL";
      return ncclInvalidArgument;
    }
    std::uint64_t id = l.handle->id;
    if (l.handle->state == CommHandle::State::kInitializing) {
      CommHandle& h = *l.handle;
      if (h.init && Expired(h.init->clock.get(), h.init->start)) {
        lock.unlock();
        (void)WaitInitialized(id, text);  // fails the rendezvous (the handle stays: non-blocking)
        lock.lock();
      } else if (h.init) {
        ClockPoll(h.init->clock, h.init_rank);  // an idle poll (fakecuda/virtual_clock.h)
        polled = true;
      } else if (h.split) {
        std::shared_ptr<SplitRendezvous> rv = h.split;
        std::shared_ptr<CommShared> parent = rv->parent.lock();
        if (parent && Expired(parent->clock.get(), rv->start)) {
          SplitTimeoutLocked(*parent, *rv);
        } else if (parent) {
          ClockPoll(parent->clock, h.init_rank);
          polled = true;
        }
      }
      auto it = handles_.find(id);
      if (it == handles_.end()) {
        *text = "fakenccl: the communicator went away while being polled";
        return ncclInvalidArgument;
      }
      l.handle = it->second.get();
    }
    CommHandle& h = *l.handle;
    switch (h.state) {
      case CommHandle::State::kInitializing:
        *async_error = ncclInProgress;
        return ncclSuccess;
      case CommHandle::State::kFailed:
        *async_error = h.init_error;
        *text = h.init_text;
        return ncclSuccess;
      case CommHandle::State::kReady:
        break;
    }
    std::shared_ptr<CommShared> c = h.comm;
    bool waiting = false;
    failed_any = CheckTimeoutsLocked(*c, h.rank, &waiting);
    if (waiting && !failed_any) {
      ClockPoll(c->clock, h.rank);  // an idle poll (fakecuda/virtual_clock.h)
      polled = true;
    }
    RankState& rs = c->ranks[static_cast<size_t>(h.rank)];
    *async_error = rs.async_error;
    if (rs.async_error != ncclSuccess) *text = rs.async_text;
  }
  if (failed_any) NotifyFakecuda();
  // A polling loop must not starve the threads it waits for (nor spin a core flat out).
  if (polled) std::this_thread::yield();
  return ncclSuccess;
}

bool Engine::CheckTimeoutsLocked(CommShared& comm, int rank, bool* waiting) {
  RankState& rs = comm.ranks[static_cast<size_t>(rank)];
  bool failed = false;
  std::vector<std::shared_ptr<Task>> live;
  for (auto& weak : rs.pending) {
    if (std::shared_ptr<Task> t = weak.lock(); t && !t->done) live.push_back(std::move(t));
  }
  rs.pending.clear();
  for (auto& t : live) rs.pending.push_back(t);
  for (auto& t : live) {
    if (!t->first_head) continue;
    bool settled = true;
    for (auto& [slot, part] : t->entries) settled = SlotSettledLocked(*slot) && settled;
    if (settled) continue;
    if (Expired(comm.clock.get(), t->start)) {
      const std::string expiry = ExpiryText(comm.clock.get(), t->start);
      for (auto& [slot, part] : t->entries) {
        if (slot->state == Slot::State::kOpen) FailSlotTimeoutLocked(comm, *slot, expiry);
      }
      failed = true;
    } else {
      *waiting = true;
    }
  }
  return failed;
}

ncclResult_t Engine::Query(ncclComm_t comm, int what, int* out, const char* op_name,
                           std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, op_name, text);
  if (l.error != ncclSuccess) return l.error;
  if (out == nullptr) {
    static const char* const kNames[] = {"count", "rank", "devid"};
    *text = Fmt("%s : %s argument is NULL", op_name, kNames[what]);
    return ncclInvalidArgument;
  }
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  switch (what) {
    case 0: *out = l.handle->comm->nranks; break;
    case 1: *out = l.handle->rank; break;
    default: *out = l.handle->device; break;
  }
  return ncclSuccess;
}

// ---- Reduction operators -----------------------------------------------------------------------

ncclResult_t Engine::CreatePreMulSum(ncclRedOp_t* op, const void* scalar, int raw_type,
                                     int raw_residence, ncclComm_t comm, std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclRedOpCreatePreMulSum", text);
  if (l.error != ncclSuccess) return l.error;
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  // UNMEASURED: NCCL checks none of these three and would crash or copy garbage; the fake refuses.
  if (op == nullptr) {
    *text = "fakenccl: ncclRedOpCreatePreMulSum: op is NULL (NCCL would crash writing it)";
    return ncclInvalidArgument;
  }
  if (!ValidType(raw_type)) {
    *text = Fmt("fakenccl: ncclRedOpCreatePreMulSum: invalid type %d", raw_type);
    return ncclInvalidArgument;
  }
  const auto type = static_cast<ncclDataType_t>(raw_type);
  if (scalar == nullptr) {
    *text = "fakenccl: ncclRedOpCreatePreMulSum: scalar is NULL (NCCL would crash reading it)";
    return ncclInvalidArgument;
  }
  CommHandle& h = *l.handle;
  std::size_t ix = 0;
  while (ix < h.user_ops.size() && h.user_ops[ix].live) ++ix;
  if (ix == h.user_ops.size()) h.user_ops.emplace_back();
  UserOp& u = h.user_ops[ix];
  u = UserOp{};
  u.live = true;
  u.type = type;
  // NCCL: anything but ncclScalarHostImmediate is a device pointer read when the kernel runs.
  u.on_device = raw_residence != static_cast<int>(ncclScalarHostImmediate);
  if (u.on_device) {
    u.device_ptr = reinterpret_cast<CUdeviceptr>(scalar);
  } else {
    std::memcpy(u.scalar.data(), scalar, TypeSize(type));
  }
  *op = static_cast<ncclRedOp_t>(
      Mangle(comm, static_cast<int>(ncclNumOps) + static_cast<int>(ix)));
  return ncclSuccess;
}

ncclResult_t Engine::DestroyRedOp(int op, ncclComm_t comm, std::string* text) {
  if (0 <= op && op < static_cast<int>(ncclNumOps)) {
    *text = "ncclRedOpDestroy : operator is a NCCL builtin.";
    return ncclInvalidArgument;
  }
  if (op < 0) {
    *text = "ncclRedOpDestroy :  operator is garbage.";
    return ncclInvalidArgument;
  }
  if (comm == nullptr) {
    *text = "ncclRedOpDestroy : invalid communicator passed.";
    return ncclInvalidArgument;
  }
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, "ncclRedOpDestroy", text);
  if (l.error != ncclSuccess) return l.error;
  int ix = Mangle(comm, op) - static_cast<int>(ncclNumOps);
  std::vector<UserOp>& ops = l.handle->user_ops;
  if (ix < 0 || static_cast<std::size_t>(ix) >= ops.size() ||
      !ops[static_cast<size_t>(ix)].live) {
    *text = "ncclRedOpDestroy : operator unknown to this communicator.";
    return ncclInvalidArgument;
  }
  ops[static_cast<size_t>(ix)].live = false;
  return ncclSuccess;
}

// ---- Communication: checking and launching -----------------------------------------------------

ncclResult_t Engine::CheckCall(ncclComm_t comm, const CallDesc& desc, const char* op_name,
                               const NcclFaultInjector& faults, std::vector<GroupOp>* ops,
                               std::string* text) {
  cuhal::MutexLock lock(mu_);
  Lookup l = FindLocked(comm, op_name, text);
  if (l.error != ncclSuccess) return l.error;
  if (throw_in_calls_for_testing_.load(std::memory_order_relaxed) > 0 &&
      throw_in_calls_for_testing_.fetch_sub(1, std::memory_order_relaxed) > 0) {
    throw std::runtime_error("injected exception in CheckCall (test hook)");
  }
  if (ncclResult_t r = EnsureReadyLocked(*l.handle, text); r != ncclSuccess) return r;
  CommHandle& h = *l.handle;
  const int n = h.comm->nranks;
  // NCCL's ArgsCheck, in its order.
  const int root = (HasRoot(desc.kind) || IsPointToPoint(desc.kind)) ? desc.root : 0;
  if (root < 0 || root >= n) {
    *text = Fmt("%s : invalid root %d (root should be in the 0..%d range)", op_name, root, n);
    return ncclInvalidArgument;
  }
  if (!ValidType(desc.raw_type)) {
    *text = Fmt("%s : invalid type %d", op_name, desc.raw_type);
    return ncclInvalidArgument;
  }
  CallDesc d = desc;
  d.type = static_cast<ncclDataType_t>(desc.raw_type);
  const int opv = desc.raw_op;
  if (opv < 0) {
    *text = Fmt("%s : invalid reduction operation %d", op_name, opv);
    return ncclInvalidArgument;
  }
  const UserOp* user = nullptr;
  if (opv >= static_cast<int>(ncclNumOps)) {
    int ix = Mangle(comm, opv) - static_cast<int>(ncclNumOps);
    if (ix < 0 || static_cast<std::size_t>(ix) >= h.user_ops.size() ||
        !h.user_ops[static_cast<size_t>(ix)].live) {
      *text = Fmt("%s : reduction operation %d unknown to this communicator", op_name, opv);
      return ncclInvalidArgument;
    }
    user = &h.user_ops[static_cast<size_t>(ix)];
    d.op.handle = static_cast<ncclRedOp_t>(opv);
    d.op.kind = ReduceKind::kPreMulSum;
    d.op.scalar_on_device = user->on_device;
    d.op.scalar_ptr = user->device_ptr;
    d.op.scalar = user->scalar;
  } else {
    static constexpr ReduceKind kBuiltin[] = {ReduceKind::kSum, ReduceKind::kProd,
                                              ReduceKind::kMax, ReduceKind::kMin,
                                              ReduceKind::kAvg};
    d.op.handle = static_cast<ncclRedOp_t>(opv);
    d.op.kind = kBuiltin[opv];
  }
  RankState* rs = &h.comm->ranks[static_cast<size_t>(h.rank)];
  if (rs->dead) return ncclSuccess;  // a dead rank's calls vanish
  // NCCL's taskAppend: empty collectives are discarded (point-to-point calls are not: a zero-byte
  // send still meets its receive here; UNMEASURED).
  if (!IsPointToPoint(d.kind) && d.count == 0) return ncclSuccess;
  if (IsReduction(d.kind) && (d.type == ncclFloat8e4m3 || d.type == ncclFloat8e5m2) &&
      h.cc_major < 9) {
    *text = "FP8 reduction support begins with sm90 capable devices.";
    return ncclInvalidArgument;
  }
  if (IsReduction(d.kind) && user != nullptr && user->type != d.type) {
    *text =
        "Data type supplied to user-created ncclRedOp_t does not match type given to reduction "
        "operation";
    return ncclInvalidArgument;
  }
  const int device = h.device;
  const int rank = h.rank;
  const std::uint64_t id = h.id;
  lock.unlock();  // invariant 1: fakecuda is called without mu_
  const FakecudaHooks* hooks = Hooks();
  if (hooks == nullptr) {
    *text = Fmt("fakenccl: %s: %s", op_name, HooksUnavailableReason());
    return ncclUnhandledCudaError;
  }
  const int stream_device = hooks->stream_device(d.stream);
  if (stream_device < 0) {
    // UNMEASURED: NCCL's cudaStreamGetCaptureInfo on a bad handle; it may also crash.
    *text = Fmt(
        "Cuda failure 'invalid resource handle' (fakenccl: %s: stream %p is not a stream of the "
        "installed fake driver, or it is NULL/legacy/per-thread and the calling thread has no "
        "current context)",
        op_name, static_cast<void*>(d.stream));
    return ncclUnhandledCudaError;
  }
  if (stream_device != device) {
    // UNMEASURED: needs two GPUs; real NCCL may instead fail with ncclUnhandledCudaError when it
    // records its launch event on the foreign stream.
    *text = Fmt("fakenccl: %s: stream %p belongs to device %d but rank %d of the communicator is "
                "on device %d",
                op_name, static_cast<void*>(d.stream), stream_device, rank, device);
    return ncclInvalidArgument;
  }
  lock.lock();
  auto it = handles_.find(id);
  if (it == handles_.end() || it->second->state != CommHandle::State::kReady) {
    *text = Fmt("fakenccl: %s: the communicator was destroyed during the call", op_name);
    return ncclInvalidArgument;
  }
  rs = &it->second->comm->ranks[static_cast<size_t>(rank)];
  if (rs->dead) return ncclSuccess;
  ++rs->calls;
  std::shared_ptr<CommShared> shared = it->second->comm;
  if (faults.ShouldDie(rank, n, rs->calls)) {
    rs->dead = true;  // from this call on, nothing this handle does reaches its peers
    ClockLeave(shared->clock, rank);
    return ncclSuccess;
  }
  ClockBind(shared->clock, rank);  // this thread drives the rank (and is not polling)
  ops->push_back(GroupOp{id, d});
  return ncclSuccess;
}

void Engine::SetAsyncErrorLocked(CommShared& comm, int rank, ncclResult_t error,
                                 const std::string& text) {
  RankState& rs = comm.ranks[static_cast<size_t>(rank)];
  if (rs.async_error != ncclSuccess) return;
  rs.async_error = error;
  rs.async_text = text;
}

std::string Engine::DescribeSlot(const CommShared& comm, const Slot& slot) const {
  if (slot.p2p) {
    return Fmt("ncclSend/ncclRecv #%" PRIu64 " from rank %d to rank %d of %s", slot.seq,
               slot.src, slot.dst, comm.label.c_str());
  }
  const char* api = "collective";
  for (const Participant& p : slot.parts) {
    if (p.posted) {
      api = CallKindApi(p.desc.kind);
      break;
    }
  }
  return Fmt("collective #%" PRIu64 " (%s) of %s", slot.seq, api, comm.label.c_str());
}

void Engine::FailSlotLocked(CommShared& comm, Slot& slot, ncclResult_t error,
                            const std::string& text, const std::vector<int>& culprits,
                            ncclResult_t culprit_error) {
  if (slot.state == Slot::State::kFailed || slot.state == Slot::State::kDone) return;
  slot.state = Slot::State::kFailed;
  slot.failure = text;
  std::vector<int> involved;
  if (slot.p2p) {
    involved.push_back(slot.src);
    if (slot.dst != slot.src) involved.push_back(slot.dst);
  } else {
    for (int r = 0; r < comm.nranks; ++r) involved.push_back(r);
  }
  for (int r : involved) {
    bool culprit = std::find(culprits.begin(), culprits.end(), r) != culprits.end();
    SetAsyncErrorLocked(comm, r, culprit ? culprit_error : error, text);
  }
  ClockProgress(comm.clock);
  cv_.NotifyAll();
}

void Engine::FailSlotTimeoutLocked(CommShared& comm, Slot& slot, const std::string& expiry) {
  std::string missing;
  std::vector<int> waiting;
  bool gone = false;
  auto rank_of = [&](std::size_t i) {
    return slot.p2p ? (i == 0 ? slot.src : slot.dst) : static_cast<int>(i);
  };
  for (std::size_t i = 0; i < slot.parts.size(); ++i) {
    const Participant& p = slot.parts[i];
    const int r = rank_of(i);
    const RankState& rs = comm.ranks[static_cast<size_t>(r)];
    std::shared_ptr<Task> t = p.task.lock();
    std::string why;
    if (!p.posted) {
      if (rs.dead) {
        why = Fmt("rank %d died (injected rank death at its communication call #%" PRIu64 ")", r,
                  rs.calls);
        gone = true;
      } else if (rs.aborted) {
        why = Fmt("rank %d aborted its communicator", r);
        gone = true;
      } else if (rs.destroyed) {
        why = Fmt("rank %d destroyed its communicator without making this call", r);
      } else {
        why = Fmt("rank %d never made this call (it has made %" PRIu64
                  " communication calls on this communicator)",
                  r, rs.calls);
      }
    } else if (!t || !t->started) {
      why = Fmt(
          "rank %d made the call but its stream never reached it (earlier work on that stream is "
          "stuck; for send/recv this is the deadlock that grouping with ncclGroupStart/End avoids)",
          r);
    } else {
      waiting.push_back(r);
      continue;
    }
    missing += (missing.empty() ? "" : "; ") + why;
  }
  // The choice (see fake_nccl.h): a peer that died or aborted is a remote
  // failure; a peer that is alive but never made the call is the program's bug. UNMEASURED: real
  // NCCL hangs in both cases (or reports ncclRemoteError/ncclSystemError from its network layer).
  ncclResult_t error = gone ? ncclRemoteError : ncclInvalidUsage;
  FailSlotLocked(comm, slot, error,
                 Fmt("fakenccl: %s %s: %s; waiting: rank(s) %s", DescribeSlot(comm, slot).c_str(),
                     expiry.c_str(), missing.c_str(), RankList(waiting).c_str()));
}

bool Engine::SlotSettledLocked(Slot& slot) {
  if (slot.state != Slot::State::kOpen) return true;
  for (const Participant& p : slot.parts) {
    if (!p.posted) return false;
    std::shared_ptr<Task> t = p.task.lock();
    if (!t || !t->started) return false;
  }
  slot.state = Slot::State::kReady;
  return true;
}

namespace {

// The device bytes call `d` of rank `rank` (of `nranks`) reads and writes on its own stream, as
// NCCL's API defines its buffers (a root-only buffer only on the root), for fakecuda's race
// detector. Only the calling rank's own buffers: another rank's are that rank's accesses.
void AppendCallAccesses(const CallDesc& d, int rank, int nranks,
                        std::vector<fakecuda::RaceAccess>* out) {
  const std::size_t bytes = d.count * TypeSize(d.type);
  const std::size_t all = bytes * static_cast<std::size_t>(nranks);
  const bool root = rank == d.root;
  auto read = [out](const void* p, std::size_t n) {
    if (p != nullptr && n != 0) out->push_back({reinterpret_cast<std::uintptr_t>(p), n, false});
  };
  auto write = [out](const void* p, std::size_t n) {
    if (p != nullptr && n != 0) out->push_back({reinterpret_cast<std::uintptr_t>(p), n, true});
  };
  switch (d.kind) {
    case CallKind::kAllReduce:
      read(d.sendbuff, bytes);
      write(d.recvbuff, bytes);
      break;
    case CallKind::kBroadcast:
      if (root) read(d.sendbuff, bytes);
      write(d.recvbuff, bytes);
      break;
    case CallKind::kReduce:
      read(d.sendbuff, bytes);
      if (root) write(d.recvbuff, bytes);
      break;
    case CallKind::kAllGather:
      read(d.sendbuff, bytes);
      write(d.recvbuff, all);
      break;
    case CallKind::kReduceScatter:
      read(d.sendbuff, all);
      write(d.recvbuff, bytes);
      break;
    case CallKind::kAlltoAll:
      read(d.sendbuff, all);
      write(d.recvbuff, all);
      break;
    case CallKind::kGather:
      read(d.sendbuff, bytes);
      if (root) write(d.recvbuff, all);
      break;
    case CallKind::kScatter:
      if (root) read(d.sendbuff, all);
      write(d.recvbuff, bytes);
      break;
    case CallKind::kSend:
      read(d.sendbuff, bytes);
      break;
    case CallKind::kRecv:
      write(d.recvbuff, bytes);
      break;
  }
}

}  // namespace

ncclResult_t Engine::Launch(std::span<const GroupOp> ops, std::string* text) {
  ncclResult_t result = ncclSuccess;
  std::vector<std::shared_ptr<Task>> tasks;
  std::vector<double> costs;
  std::vector<const char*> whats;
  // For fakecuda's race detector: per task, per leg, the bytes its calls read and write.
  std::vector<std::vector<std::vector<fakecuda::RaceAccess>>> accesses;
  {
    cuhal::MutexLock lock(mu_);
    std::vector<std::uint64_t> order;
    for (const GroupOp& op : ops) {
      if (std::find(order.begin(), order.end(), op.handle_id) == order.end()) {
        order.push_back(op.handle_id);
      }
    }
    for (std::uint64_t id : order) {
      auto it = handles_.find(id);
      if (it == handles_.end()) {
        *text = "fakenccl: a communicator of the group was destroyed before ncclGroupEnd";
        result = ncclInvalidArgument;
        continue;
      }
      CommHandle& h = *it->second;
      if (ncclResult_t r = EnsureReadyLocked(h, text); r != ncclSuccess) {
        result = r;
        continue;
      }
      std::shared_ptr<CommShared> comm = h.comm;
      RankState& rs = comm->ranks[static_cast<size_t>(h.rank)];
      if (rs.dead) continue;
      auto task = std::make_shared<Task>();
      task->comm = comm;
      task->rank = h.rank;
      task->ordinal = rs.next_task++;
      double cost = 0.0;
      const char* what = nullptr;
      std::vector<std::vector<fakecuda::RaceAccess>> task_accesses;
      for (const GroupOp& op : ops) {
        if (op.handle_id != id) continue;
        const CallDesc& d = op.desc;
        what = what == nullptr ? CallKindApi(d.kind) : "ncclGroupEnd";
        cost += CostUs(d, comm->nranks);
        auto leg_it = std::find(task->streams.begin(), task->streams.end(), d.stream);
        const std::size_t leg = static_cast<std::size_t>(leg_it - task->streams.begin());
        if (leg_it == task->streams.end()) {
          task->streams.push_back(d.stream);
          task_accesses.emplace_back();
        }
        AppendCallAccesses(d, h.rank, comm->nranks, &task_accesses[leg]);
        std::shared_ptr<Slot> slot;
        std::size_t part = 0;
        if (IsPointToPoint(d.kind)) {
          const int peer = d.root;
          const bool send = d.kind == CallKind::kSend;
          const int src = send ? h.rank : peer;
          const int dst = send ? peer : h.rank;
          std::uint64_t k = send ? rs.sends[static_cast<size_t>(peer)]++
                                 : rs.recvs[static_cast<size_t>(peer)]++;
          std::shared_ptr<Slot>& s = comm->p2ps[std::make_tuple(src, dst, k)];
          if (!s) {
            s = std::make_shared<Slot>();
            s->p2p = true;
            s->seq = k;
            s->src = src;
            s->dst = dst;
            s->parts.resize(2);
          }
          slot = s;
          part = send ? 0 : 1;
        } else {
          std::uint64_t seq = rs.next_coll++;
          std::shared_ptr<Slot>& s = comm->colls[seq];
          if (!s) {
            s = std::make_shared<Slot>();
            s->seq = seq;
            s->parts.resize(static_cast<size_t>(comm->nranks));
          }
          slot = s;
          part = static_cast<size_t>(h.rank);
        }
        // Compare with what the other ranks posted (invariant 2: only while kOpen).
        std::string mismatch;
        if (slot->state == Slot::State::kOpen) {
          if (slot->p2p) {
            const Participant& other = slot->parts[1 - part];
            std::size_t mine = d.count * TypeSize(d.type);
            if (other.posted &&
                other.desc.count * TypeSize(other.desc.type) != mine) {
              const CallDesc& s = part == 0 ? d : other.desc;
              const CallDesc& r = part == 0 ? other.desc : d;
              mismatch = Fmt(
                  "fakenccl: mismatched point-to-point calls on %s: rank %d's ncclSend #%" PRIu64
                  " to rank %d sends %zu bytes (%zu x %s) but rank %d's matching ncclRecv "
                  "expects %zu bytes (%zu x %s)",
                  comm->label.c_str(), slot->src, slot->seq, slot->dst,
                  s.count * TypeSize(s.type), s.count, TypeName(s.type), slot->dst,
                  r.count * TypeSize(r.type), r.count, TypeName(r.type));
            }
          } else {
            for (std::size_t q = 0; q < slot->parts.size(); ++q) {
              const Participant& other = slot->parts[q];
              if (!other.posted || SameCollective(other.desc, d)) continue;
              mismatch = Fmt(
                  "fakenccl: mismatched collective #%" PRIu64 " on %s: rank %zu called %s but "
                  "rank %d called %s",
                  slot->seq, comm->label.c_str(), q, DescribeCall(other.desc).c_str(), h.rank,
                  DescribeCall(d).c_str());
              break;
            }
          }
        }
        Participant& me = slot->parts[part];
        me.posted = true;
        me.task = task;
        me.desc = d;
        task->entries.emplace_back(slot, part);
        if (!mismatch.empty()) {
          FailSlotLocked(*comm, *slot, ncclInvalidUsage, mismatch);
        } else if (slot->state == Slot::State::kOpen) {
          // A participant that aborted can never post: fail now rather than at the timeout.
          for (std::size_t q = 0; q < slot->parts.size(); ++q) {
            int r = slot->p2p ? (q == 0 ? slot->src : slot->dst) : static_cast<int>(q);
            if (!slot->parts[q].posted && comm->ranks[static_cast<size_t>(r)].aborted) {
              FailSlotLocked(*comm, *slot, ncclRemoteError,
                             Fmt("fakenccl: %s needs rank %d, which aborted its communicator",
                                 DescribeSlot(*comm, *slot).c_str(), r));
              break;
            }
          }
        }
      }
      task->at_head.assign(task->streams.size(), 0);
      task->leg_done.assign(task->streams.size(), 0);
      // Forget finished tasks so that the list stays as short as the work in flight.
      std::erase_if(rs.pending, [](const std::weak_ptr<Task>& w) {
        std::shared_ptr<Task> t = w.lock();
        return !t || t->done;
      });
      rs.pending.push_back(task);
      ClockProgress(comm->clock);  // posts: a round of the group's clock starts over
      tasks.push_back(task);
      costs.push_back(cost);
      whats.push_back(what);
      accesses.push_back(std::move(task_accesses));
    }
  }
  std::shared_ptr<Engine> self = shared_from_this();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    std::shared_ptr<Task> task = tasks[i];
    for (std::size_t leg = 0; leg < task->streams.size(); ++leg) {
      fakecuda::StreamWork work;
      work.what = whats[i];
      work.ready = [self, task, leg] { return self->LegReady(*task, leg); };
      work.run = [self, task, leg] { return self->RunLeg(*task, leg); };
      work.cost_us = costs[i];
      work.accesses = std::move(accesses[i][leg]);
      CUresult r = Hooks()->enqueue_stream_work(task->streams[leg], std::move(work));
      if (r != CUDA_SUCCESS) {
        cuhal::MutexLock lock(mu_);
        std::string why = Fmt(
            "fakenccl: rank %d could not enqueue its work on stream %p: CUresult %d", task->rank,
            static_cast<void*>(task->streams[leg]), static_cast<int>(r));
        for (auto& [slot, part] : task->entries) {
          FailSlotLocked(*task->comm, *slot, ncclRemoteError, why, {task->rank},
                         ncclUnhandledCudaError);
        }
        task->at_head[leg] = 1;
        task->leg_done[leg] = 1;
        if (std::all_of(task->leg_done.begin(), task->leg_done.end(), [](char c) { return c; })) {
          FinishTaskLocked(*task);
        }
        *text = why;
        result = ncclUnhandledCudaError;
      }
    }
  }
  return result;
}

// ---- Stream work -------------------------------------------------------------------------------

bool Engine::LegReady(Task& task, std::size_t leg) {
  // Called by fakecuda under its lock: must not throw into the scheduler.
  try {
    cuhal::MutexLock lock(mu_);
    if (task.done) return true;
    CommShared& comm = *task.comm;
    if (!task.at_head[leg]) {
      task.at_head[leg] = 1;
      ClockProgress(comm.clock);
    }
    if (!task.first_head) {
      task.first_head = true;
      task.start = StartDeadline(comm.clock.get());
    }
    task.started =
        std::all_of(task.at_head.begin(), task.at_head.end(), [](char c) { return c; });
    if (comm.ranks[static_cast<size_t>(task.rank)].aborted) return true;
    bool settled = true;
    for (auto& [slot, part] : task.entries) settled = SlotSettledLocked(*slot) && settled;
    if (settled) return true;
    if (Expired(comm.clock.get(), task.start)) {
      const std::string expiry = ExpiryText(comm.clock.get(), task.start);
      for (auto& [slot, part] : task.entries) {
        if (slot->state == Slot::State::kOpen) FailSlotTimeoutLocked(comm, *slot, expiry);
      }
      return true;
    }
    return false;
  } catch (...) {
    // Out of memory for a message: let the leg run; its body fails what is still open.
    return true;
  }
}

CUresult Engine::RunLeg(Task& task, std::size_t leg) {
  // Stream work must not throw into fakecuda's scheduler: whatever escapes fails this task's
  // operations with ncclInternalError (its communicator's async error) and ends the leg, so that
  // neither the stream nor the peers wait for it.
  try {
    return RunLegOrThrow(task, leg);
  } catch (const std::exception& e) {
    return RunLegFailed(task, leg, e.what());
  } catch (...) {
    return RunLegFailed(task, leg, "an exception that is not a std::exception");
  }
}

CUresult Engine::RunLegFailed(Task& task, std::size_t leg, const char* what) noexcept {
  std::fprintf(stderr, "fakenccl: the stream work of rank %d threw: %s\n", task.rank, what);
  try {
    cuhal::MutexLock lock(mu_);
    CommShared& comm = *task.comm;
    for (auto& [slot, part] : task.entries) {
      if (slot->state == Slot::State::kDone) continue;
      FailSlotLocked(comm, *slot, ncclInternalError,
                     Fmt("fakenccl: internal error while executing %s: %s",
                         DescribeSlot(comm, *slot).c_str(), what));
    }
    task.leg_done[leg] = 1;
    if (std::all_of(task.leg_done.begin(), task.leg_done.end(), [](char c) { return c; })) {
      FinishTaskLocked(task);
    }
    cv_.NotifyAll();
  } catch (...) {
    std::fprintf(stderr, "fakenccl: and recording that failed too\n");
  }
  return CUDA_SUCCESS;
}

CUresult Engine::RunLegOrThrow(Task& task, std::size_t leg) {
  cuhal::MutexLock lock(mu_);
  CommShared& comm = *task.comm;
  for (auto& [slot_ptr, part] : task.entries) {
    Slot& slot = *slot_ptr;
    for (;;) {
      if (slot.state == Slot::State::kReady) {
        slot.state = Slot::State::kClaimed;
        // Participants are immutable once the slot left kOpen (invariant 2): copy and unlock.
        std::vector<CallDesc> descs;
        for (const Participant& p : slot.parts) descs.push_back(p.desc);
        const std::string where = DescribeSlot(comm, slot);
        const bool p2p = slot.p2p;
        const int src = slot.src;
        const int dst = slot.dst;
        lock.unlock();
        ExecResult res;
        try {
          Busy busy;  // moving data for every rank: no group's clock advances meanwhile
          if (throw_in_executions_for_testing_.load(std::memory_order_relaxed) > 0 &&
              throw_in_executions_for_testing_.fetch_sub(1, std::memory_order_relaxed) > 0) {
            throw std::runtime_error("fakenccl: injected exception in a collective's execution");
          }
          res = p2p ? ExecutePointToPoint(descs[0], src, descs[1], dst, where)
                    : ExecuteCollective(descs, where);
        } catch (const std::exception& e) {
          res = ExecResult{};
          res.ok = false;
          res.text = Fmt("fakenccl: internal error while executing %s: %s", where.c_str(),
                         e.what());
          res.internal = true;
        }
        lock.lock();
        if (res.ok) {
          slot.state = Slot::State::kDone;
          ClockProgress(comm.clock);
        } else if (res.internal) {
          FailSlotLocked(comm, slot, ncclInternalError, res.text);
        } else {
          slot.bad_ranks = res.bad_ranks;
          FailSlotLocked(comm, slot, ncclRemoteError, res.text, res.bad_ranks,
                         ncclUnhandledCudaError);
        }
        cv_.NotifyAll();
        break;
      }
      if (slot.state == Slot::State::kClaimed) {
        // The claimer is copying data and waits for nothing (invariant 3); its failures end the
        // claim too (RunLeg catches everything). Bounded slices all the same.
        WaitSliceLocked();
        continue;
      }
      break;  // kDone, kFailed, or kOpen because this rank aborted
    }
  }
  bool faulted = false;
  if (leg == 0) {
    for (auto& [slot, part] : task.entries) {
      const std::vector<int>& bad = slot->bad_ranks;
      faulted = faulted || std::find(bad.begin(), bad.end(), task.rank) != bad.end();
    }
  }
  task.leg_done[leg] = 1;
  if (std::all_of(task.leg_done.begin(), task.leg_done.end(), [](char c) { return c; })) {
    FinishTaskLocked(task);
  }
  cv_.NotifyAll();
  // A rank whose buffers were not device memory faults like a kernel would: the error becomes
  // its context's sticky error.
  return faulted ? CUDA_ERROR_ILLEGAL_ADDRESS : CUDA_SUCCESS;
}

void Engine::FinishTaskLocked(Task& task) {
  if (task.done) return;
  task.done = true;
  CommShared& comm = *task.comm;
  for (auto& [slot, part] : task.entries) {
    if (++slot->finished < slot->parts.size()) continue;
    // Every participant posted and finished: nothing can refer to this slot by key again.
    if (slot->p2p) {
      auto it = comm.p2ps.find(std::make_tuple(slot->src, slot->dst, slot->seq));
      if (it != comm.p2ps.end() && it->second == slot) comm.p2ps.erase(it);
    } else {
      auto it = comm.colls.find(slot->seq);
      if (it != comm.colls.end() && it->second == slot) comm.colls.erase(it);
    }
  }
}

// ---- Inspection --------------------------------------------------------------------------------

EngineInventory Engine::Inventory() const {
  cuhal::MutexLock lock(mu_);
  EngineInventory inv;
  for (const auto& [id, h] : handles_) {
    ++inv.communicators;
    for (const UserOp& u : h->user_ops) inv.reduction_ops += u.live ? 1 : 0;
  }
  return inv;
}

std::string Engine::DescribeLive() const {
  cuhal::MutexLock lock(mu_);
  std::vector<std::uint64_t> ids;
  for (const auto& [id, h] : handles_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  std::ostringstream os;
  for (std::uint64_t id : ids) {
    const CommHandle& h = *handles_.at(id);
    os << "communicator " << static_cast<void*>(EncodeComm(id)) << " (" << h.created_by << ")";
    if (h.state == CommHandle::State::kReady) {
      os << ": rank " << h.rank << " of " << h.comm->label;
    } else {
      os << (h.state == CommHandle::State::kInitializing ? ": still initializing"
                                                          : ": failed to initialize");
    }
    os << ", device " << h.device;
    int ops = 0;
    for (const UserOp& u : h.user_ops) ops += u.live ? 1 : 0;
    if (ops > 0) os << ", " << ops << " reduction op(s) not destroyed";
    os << "\n";
  }
  return os.str();
}

}  // namespace internal
}  // namespace fakenccl
