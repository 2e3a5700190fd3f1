// Copyright 2026 The cuhal Authors.
// The shared-memory transport across processes; see shm_transport.h for the layout and invariants.
#include "fakenccl/internal/shm_transport.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "fakenccl/datatypes.h"
#include "fakenccl/internal/engine_state.h"
#include "fakenccl/internal/execution.h"
#include "fakenccl/internal/fakecuda_hooks.h"
#include "fakenccl/internal/matching.h"

namespace fakenccl {
namespace internal {

namespace {

constexpr char kMarker[8] = {'F', 'K', 'N', 'C', 'C', 'L', 'X', '1'};
constexpr char kPrefix[] = "fakenccl.";
constexpr std::uint32_t kMagic = 0xFA4EC0C1u;
constexpr std::uint64_t kCollSlots = 1024;
constexpr std::uint64_t kP2pSlots = 128;
constexpr std::uint64_t kDataSlots = 2;
// A staging area (per rank, per data slot) holds kChunkHalves chunks of kChunkBytes: chunk g of
// a slot (counted over its collectives) uses half g % kChunkHalves, so a rank deposits the next
// chunk while its peers still read this one.
constexpr std::size_t kChunkBytes = std::size_t{512} << 10;
constexpr std::uint64_t kChunkHalves = 2;
constexpr std::size_t kStagingBytes = kChunkBytes * kChunkHalves;
constexpr std::size_t kMailboxBytes = std::size_t{256} << 10;  // per ordered pair
constexpr std::size_t kTextBytes = 480;
constexpr auto kSlice = std::chrono::milliseconds(10);

enum RankStateCode : std::int32_t { kLive = 0, kDestroyed = 1, kAborted = 2, kDied = 3 };

// ---- The segment's structures (plain data in shared memory; atomics through atomic_ref) -----

struct Failure {
  std::uint64_t failed_seq;  // seq + 1 of the failure stored here (atomic)
  std::int32_t error;
  std::int32_t culprit;
  std::int32_t culprit_error;
  std::int32_t pad;
  char text[kTextBytes];
};

struct Desc {
  std::int32_t kind;
  std::int32_t type;
  std::int32_t op_kind;
  std::int32_t op_handle;
  std::int32_t root;
  std::int32_t pad;
  std::uint64_t count;
};

struct Header {
  std::uint32_t init_state;  // 0 fresh, 2 ready (atomic)
  std::uint32_t magic;
  std::int32_t nranks;
  std::int32_t joined;  // under mu
  std::uint32_t init_failed;  // atomic; the error in init_error, the text in init_text
  std::int32_t init_error;
  std::uint32_t formed;   // atomic
  std::uint32_t epoch;    // futex word (atomic): any state change
  std::uint32_t waiters;  // atomic
  std::uint32_t data_epoch;    // futex word (atomic): data moved (a chunk), or any state change
  std::uint32_t data_waiters;  // atomic
  char init_text[kTextBytes];
  pthread_mutex_t mu;
};

struct alignas(64) RankInfo {
  std::int32_t joined;
  std::int32_t pid;
  std::uint64_t start_time;
  std::int32_t device;
  std::int32_t state;  // RankStateCode (atomic)
};

struct alignas(64) CollPart {
  std::uint64_t posted;  // seq + 1 (atomic, release after desc)
  std::uint64_t done;    // seq + 1 once this rank finished it (atomic)
  Desc desc;
  ScalarBytes scalar;  // written at execution, read after `deposited` (acquire)
};

struct alignas(64) P2pSlot {
  Failure failure;
  std::uint64_t posted[2];  // [0] send, [1] recv: k + 1 (atomic)
  std::uint64_t done[2];
  Desc desc[2];
};

struct alignas(64) Counter {
  std::uint64_t v;
};

struct alignas(64) MailboxTag {
  std::uint64_t k1;     // k + 1 of the send whose chunk is in the mailbox
  std::uint64_t chunk;  // its chunk index
};

template <typename T>
T Load(const T& x) {
  return std::atomic_ref<T>(const_cast<T&>(x)).load(std::memory_order_acquire);
}
template <typename T>
void Store(T& x, T v) {
  std::atomic_ref<T>(x).store(v, std::memory_order_release);
}

std::size_t AlignUp(std::size_t x) { return (x + 4095) & ~std::size_t{4095}; }

Desc ToShm(const CallDesc& d) {
  Desc s{};
  s.kind = static_cast<std::int32_t>(d.kind);
  s.type = static_cast<std::int32_t>(d.type);
  s.op_kind = static_cast<std::int32_t>(d.op.kind);
  s.op_handle = static_cast<std::int32_t>(d.op.handle);
  s.root = d.root;
  s.count = d.count;
  return s;
}

CallDesc FromShm(const Desc& s) {
  CallDesc d;
  d.kind = static_cast<CallKind>(s.kind);
  d.type = static_cast<ncclDataType_t>(s.type);
  d.op.kind = static_cast<ReduceKind>(s.op_kind);
  d.op.handle = static_cast<ncclRedOp_t>(s.op_handle);
  d.root = s.root;
  d.count = s.count;
  return d;
}

// Process start time (field 22 of /proc/<pid>/stat) and whether the process is gone (no such
// process, a zombie or dead).
bool ReadProc(int pid, std::uint64_t* start_time, bool* gone) {
  *gone = true;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!f || !std::getline(f, line)) return false;
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 2));
  std::string state;
  rest >> state;
  std::string field;
  for (int i = 4; i < 22; ++i) rest >> field;  // fields 4..21
  std::uint64_t start = 0;
  rest >> start;
  *start_time = start;
  *gone = state == "Z" || state == "X" || state == "x";
  return true;
}

bool ProcessGone(int pid, std::uint64_t start_time) {
  if (pid == getpid()) return false;
  std::uint64_t start = 0;
  bool gone = true;
  if (!ReadProc(pid, &start, &gone)) return true;
  return gone || start != start_time;
}

void LockRobust(pthread_mutex_t* mu) {
  int r = pthread_mutex_lock(mu);
  if (r == EOWNERDEAD) pthread_mutex_consistent(mu);
}

// Holds the segment mutex for a scope (no stream ordering; one thread).
class SegmentLock {
 public:
  explicit SegmentLock(pthread_mutex_t* mu) : mu_(mu) { LockRobust(mu_); }
  ~SegmentLock() { pthread_mutex_unlock(mu_); }
  SegmentLock(const SegmentLock&) = delete;             // one lock, one unlock
  SegmentLock& operator=(const SegmentLock&) = delete;  // ditto

 private:
  pthread_mutex_t* mu_;
};

void CopyText(char* dst, const std::string& text) {
  std::size_t n = std::min(text.size(), kTextBytes - 1);
  std::memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

long Futex(std::uint32_t* addr, int op, std::uint32_t val, const timespec* ts) {
  return syscall(SYS_futex, addr, op, val, ts, nullptr, 0);
}

}  // namespace

// Where everything is in a segment of `n` ranks (offsets from its base).
struct ShmComm::Layout {
  explicit Layout(int nranks) : n(static_cast<std::size_t>(nranks)) {
    std::size_t at = AlignUp(sizeof(Header));
    ranks = at;
    at = AlignUp(at + sizeof(RankInfo) * this->n);
    coll_failures = at;
    at = AlignUp(at + sizeof(Failure) * kCollSlots);
    coll_parts = at;
    at = AlignUp(at + sizeof(CollPart) * kCollSlots * this->n);
    p2p = at;
    at = AlignUp(at + sizeof(P2pSlot) * kP2pSlots * this->n * this->n);
    counters = at;  // deposited, consumed: kDataSlots x n each; sent, received: n x n each
    at = AlignUp(at + sizeof(Counter) * (2 * kDataSlots * this->n + 2 * this->n * this->n));
    tags = at;
    at = AlignUp(at + sizeof(MailboxTag) * this->n * this->n);
    staging = at;
    at = AlignUp(at + kStagingBytes * kDataSlots * this->n);
    mailboxes = at;
    at = AlignUp(at + kMailboxBytes * this->n * this->n);
    bytes = at;
  }
  std::size_t n;
  std::size_t ranks, coll_failures, coll_parts, p2p, counters, tags, staging, mailboxes, bytes;
  std::byte* base = nullptr;

  Header& header() const { return *reinterpret_cast<Header*>(base); }
  RankInfo& rank(int r) const {
    return reinterpret_cast<RankInfo*>(base + ranks)[static_cast<std::size_t>(r)];
  }
  Failure& coll_failure(std::uint64_t seq) const {
    return reinterpret_cast<Failure*>(base + coll_failures)[seq % kCollSlots];
  }
  CollPart& coll_part(std::uint64_t seq, int r) const {
    return reinterpret_cast<CollPart*>(
        base + coll_parts)[(seq % kCollSlots) * n + static_cast<std::size_t>(r)];
  }
  P2pSlot& p2p_slot(int src, int dst, std::uint64_t k) const {
    return reinterpret_cast<P2pSlot*>(
        base + p2p)[((static_cast<std::size_t>(src) * n + static_cast<std::size_t>(dst)) *
                     kP2pSlots) +
                    k % kP2pSlots];
  }
  Counter* counter_base() const { return reinterpret_cast<Counter*>(base + counters); }
  std::uint64_t& deposited(std::uint64_t d, int r) const {
    return counter_base()[d * n + static_cast<std::size_t>(r)].v;
  }
  std::uint64_t& consumed(std::uint64_t d, int r) const {
    return counter_base()[kDataSlots * n + d * n + static_cast<std::size_t>(r)].v;
  }
  std::uint64_t& sent(int src, int dst) const {
    return counter_base()[2 * kDataSlots * n + static_cast<std::size_t>(src) * n +
                          static_cast<std::size_t>(dst)]
        .v;
  }
  std::uint64_t& received(int src, int dst) const {
    return counter_base()[2 * kDataSlots * n + n * n + static_cast<std::size_t>(src) * n +
                          static_cast<std::size_t>(dst)]
        .v;
  }
  MailboxTag& tag(int src, int dst) const {
    return reinterpret_cast<MailboxTag*>(
        base + tags)[static_cast<std::size_t>(src) * n + static_cast<std::size_t>(dst)];
  }
  std::byte* staging_area(std::uint64_t d, int r) const {
    return base + staging + (d * n + static_cast<std::size_t>(r)) * kStagingBytes;
  }
  std::byte* mailbox(int src, int dst) const {
    return base + mailboxes +
           (static_cast<std::size_t>(src) * n + static_cast<std::size_t>(dst)) * kMailboxBytes;
  }
  Failure& failure_of(const ShmTicket& t) const {
    return t.p2p ? p2p_slot(t.src, t.dst, t.seq).failure : coll_failure(t.seq);
  }
};

// ---- Ids and stale segments -------------------------------------------------------------------

bool IsShmUniqueId(const ncclUniqueId& id) {
  return std::memcmp(id.internal, kMarker, sizeof(kMarker)) == 0;
}

void MakeShmUniqueId(std::uint64_t random, ncclUniqueId* id) {
  std::memset(id->internal, 0, sizeof(id->internal));
  std::memcpy(id->internal, kMarker, sizeof(kMarker));
  std::snprintf(id->internal + sizeof(kMarker), sizeof(id->internal) - sizeof(kMarker),
                "/%s%d.%016" PRIx64, kPrefix, static_cast<int>(getpid()), random);
}

std::string ShmSegmentName(const ncclUniqueId& id) {
  if (!IsShmUniqueId(id)) return "";
  const char* name = id.internal + sizeof(kMarker);
  return std::string(name, strnlen(name, sizeof(id.internal) - sizeof(kMarker)));
}

int StaleSegmentSweep() {
  int removed = 0;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return 0;
  while (dirent* e = readdir(dir)) {
    const std::string file = e->d_name;
    if (file.rfind(kPrefix, 0) != 0) continue;
    const int maker = std::atoi(file.c_str() + sizeof(kPrefix) - 1);
    const std::string name = "/" + file;
    int fd = shm_open(name.c_str(), O_RDWR, 0);
    if (fd < 0) continue;
    struct stat st {};
    bool stale = false;
    if (fstat(fd, &st) == 0) {
      const auto age = std::chrono::system_clock::now() -
                       std::chrono::system_clock::from_time_t(st.st_mtime);
      bool maker_gone = maker > 0 && ProcessGone(maker, 0) && kill(maker, 0) != 0;
      if (static_cast<std::size_t>(st.st_size) < sizeof(Header)) {
        stale = maker_gone && age > std::chrono::seconds(5);
      } else {
        void* p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
          const Header& h = *static_cast<const Header*>(p);
          if (Load(h.init_state) == 2 && h.magic == kMagic && h.nranks > 0) {
            ShmComm::Layout layout(h.nranks);
            layout.base = static_cast<std::byte*>(p);
            if (layout.bytes <= static_cast<std::size_t>(st.st_size)) {
              int joined = 0;
              int dead = 0;
              for (int r = 0; r < h.nranks; ++r) {
                const RankInfo& ri = layout.rank(r);
                if (Load(ri.joined) == 0) continue;
                ++joined;
                if (ProcessGone(ri.pid, ri.start_time)) ++dead;
              }
              stale = joined > 0 ? dead == joined : maker_gone;
            }
          } else {
            stale = maker_gone && age > std::chrono::seconds(5);
          }
          munmap(p, static_cast<std::size_t>(st.st_size));
        }
      }
    }
    close(fd);
    if (stale && shm_unlink(name.c_str()) == 0) ++removed;
  }
  closedir(dir);
  return removed;
}

// ---- Joining ----------------------------------------------------------------------------------

ShmComm::ShmComm(int nranks, int rank, void* base, std::size_t bytes, std::string name)
    : nranks_(nranks),
      rank_(rank),
      base_(base),
      bytes_(bytes),
      name_(std::move(name)),
      layout_(std::make_unique<Layout>(nranks)) {
  layout_->base = static_cast<std::byte*>(base_);
}

ShmComm::~ShmComm() {
  stop_.store(true, std::memory_order_release);
  if (watcher_.joinable()) watcher_.join();
  munmap(base_, bytes_);
}

namespace {

// Bumps the futex word `word` and wakes its waiters (counted in `waiters`) if any.
void Bump(std::uint32_t* word, std::uint32_t* waiters) {
  std::atomic_ref<std::uint32_t>(*word).fetch_add(1, std::memory_order_seq_cst);
  if (std::atomic_ref<std::uint32_t>(*waiters).load(std::memory_order_seq_cst) != 0) {
    Futex(word, FUTEX_WAKE, INT32_MAX, nullptr);
  }
}

// Waits at most `slice` for `word` to differ from `seen` (counted in `waiters` meanwhile).
void WaitWord(std::uint32_t* word, std::uint32_t* waiters, std::uint32_t seen,
              std::chrono::milliseconds slice) {
  std::atomic_ref<std::uint32_t> count(*waiters);
  count.fetch_add(1, std::memory_order_seq_cst);
  if (std::atomic_ref<std::uint32_t>(*word).load(std::memory_order_seq_cst) == seen) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(slice.count() / 1000);
    ts.tv_nsec = static_cast<long>((slice.count() % 1000) * 1000000);
    Blocked blocked;  // fakecuda/virtual_clock.h: this thread waits inside the fake
    Futex(word, FUTEX_WAIT, seen, &ts);
  }
  count.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace

void ShmComm::Notify() {
  Header& h = layout_->header();
  Bump(&h.epoch, &h.waiters);
  Bump(&h.data_epoch, &h.data_waiters);
}

void ShmComm::NotifyData() {
  Header& h = layout_->header();
  Bump(&h.data_epoch, &h.data_waiters);
}

void ShmComm::WaitEpoch(std::uint32_t seen, std::chrono::milliseconds slice) {
  Header& h = layout_->header();
  WaitWord(&h.epoch, &h.waiters, seen, slice);
}

void ShmComm::WaitData(std::uint32_t seen, std::chrono::milliseconds slice) {
  Header& h = layout_->header();
  WaitWord(&h.data_epoch, &h.data_waiters, seen, slice);
}

ncclResult_t ShmComm::Join(const ncclUniqueId& id, int nranks, int rank, int device,
                           const char* api, std::chrono::milliseconds timeout,
                           std::shared_ptr<ShmComm>* out, std::string* text) {
  const std::string name = ShmSegmentName(id);
  StaleSegmentSweep();
  const Layout want(nranks);
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) {
    *text = Fmt("fakenccl: %s: cannot open the shared-memory segment %s of the communicator "
                "across processes: %s",
                api, name.c_str(), std::strerror(errno));
    return ncclSystemError;
  }
  flock(fd, LOCK_EX);
  struct stat st {};
  fstat(fd, &st);
  std::size_t size = static_cast<std::size_t>(st.st_size);
  bool creator = false;
  if (size == 0) {
    if (ftruncate(fd, static_cast<off_t>(want.bytes)) != 0) {
      *text = Fmt("fakenccl: %s: cannot size the shared-memory segment %s to %zu bytes: %s", api,
                  name.c_str(), want.bytes, std::strerror(errno));
      flock(fd, LOCK_UN);
      close(fd);
      shm_unlink(name.c_str());
      return ncclSystemError;
    }
    size = want.bytes;
    creator = true;
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *text = Fmt("fakenccl: %s: cannot map the shared-memory segment %s: %s", api, name.c_str(),
                std::strerror(errno));
    flock(fd, LOCK_UN);
    close(fd);
    return ncclSystemError;
  }
  Header& h = *static_cast<Header*>(base);
  if (creator) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&h.mu, &attr);
    pthread_mutexattr_destroy(&attr);
    h.magic = kMagic;
    h.nranks = nranks;
    Store(h.init_state, std::uint32_t{2});
  }
  flock(fd, LOCK_UN);
  close(fd);
  const int seg_nranks = h.nranks;
  std::shared_ptr<ShmComm> comm(
      new ShmComm(std::max(seg_nranks, 1), rank, base, size, name));
  const Layout& l = *comm->layout_;
  auto fail = [&](ncclResult_t error, const std::string& why) {
    {
      SegmentLock lock(&h.mu);
      if (Load(h.init_failed) == 0) {
        h.init_error = static_cast<std::int32_t>(error);
        CopyText(h.init_text, why);
        Store(h.init_failed, std::uint32_t{1});
      }
    }
    comm->Notify();
  };
  if (h.magic != kMagic || seg_nranks != nranks || l.bytes > size) {
    fail(ncclInvalidUsage,
         Fmt("fakenccl: %s: ranks disagree on the size of the communicator of one ncclUniqueId: "
             "rank %d passed nranks=%d, an earlier rank passed nranks=%d",
             api, rank, nranks, seg_nranks));
  } else {
    SegmentLock lock(&h.mu);
    RankInfo& me = l.rank(rank);
    if (me.joined != 0) {
      if (Load(h.init_failed) == 0) {
        h.init_error = ncclInvalidUsage;
        CopyText(h.init_text, Fmt("fakenccl: %s: rank %d of %d joined the same ncclUniqueId twice",
                                  api, rank, nranks));
        Store(h.init_failed, std::uint32_t{1});
      }
    } else {
      std::uint64_t start = 0;
      bool gone = false;
      ReadProc(getpid(), &start, &gone);
      me.pid = static_cast<std::int32_t>(getpid());
      me.start_time = start;
      me.device = device;
      Store(me.joined, std::int32_t{1});
      if (++h.joined == nranks) {
        Store(h.formed, std::uint32_t{1});
        shm_unlink(name.c_str());  // every rank has it mapped (invariant 1)
      }
    }
  }
  comm->Notify();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::uint32_t seen = std::atomic_ref<std::uint32_t>(h.epoch).load();
    if (Load(h.init_failed) != 0) {
      *text = h.init_text;
      shm_unlink(name.c_str());
      return static_cast<ncclResult_t>(h.init_error);
    }
    if (Load(h.formed) != 0) break;
    std::vector<int> missing;
    for (int r = 0; r < nranks; ++r) {
      const RankInfo& ri = l.rank(r);
      if (Load(ri.joined) == 0) {
        missing.push_back(r);
      } else if (r != rank && ProcessGone(ri.pid, ri.start_time)) {
        fail(ncclRemoteError,
             Fmt("fakenccl: %s: rank %d (process %d) died while the communicator across "
                 "processes was being initialized",
                 api, r, ri.pid));
      }
    }
    if (Load(h.init_failed) != 0) continue;
    if (std::chrono::steady_clock::now() > deadline) {
      fail(ncclSystemError,
           Fmt("fakenccl: %s timed out after the wall-clock backstop of %lld ms waiting for "
               "rank(s) %s of %d to join with the same ncclUniqueId (across processes: segment "
               "%s; NCCL's bootstrap would time out or hang)",
               api, static_cast<long long>(timeout.count()), RankList(missing).c_str(), nranks,
               name.c_str()));
      continue;
    }
    comm->WaitEpoch(seen, kSlice);
  }
  comm->watcher_ = std::thread([raw = comm.get()] { raw->WatchLoop(); });
  *out = std::move(comm);
  return ncclSuccess;
}

// ---- Liveness ---------------------------------------------------------------------------------

bool ShmComm::CheckPeers() {
  bool marked = false;
  for (int r = 0; r < nranks_; ++r) {
    RankInfo& ri = layout_->rank(r);
    if (r == rank_ || Load(ri.state) != kLive) continue;
    if (!ProcessGone(ri.pid, ri.start_time)) continue;
    std::int32_t expected = kLive;
    if (std::atomic_ref<std::int32_t>(ri.state).compare_exchange_strong(expected, kDied)) {
      marked = true;
    }
  }
  return marked;
}

void ShmComm::WatchLoop() {
  Header& h = layout_->header();
  std::uint32_t seen = std::atomic_ref<std::uint32_t>(h.epoch).load();
  while (!stop_.load(std::memory_order_acquire)) {
    WaitEpoch(seen, kSlice);
    const bool marked = CheckPeers();
    if (marked) Notify();
    const std::uint32_t now = std::atomic_ref<std::uint32_t>(h.epoch).load();
    if (now != seen || marked) {
      seen = now;
      NotifyFakecuda();  // `ready` predicates that read the segment may have changed
    }
  }
}

std::string ShmComm::DescribeGone(int r) {
  const RankInfo& ri = layout_->rank(r);
  switch (Load(ri.state)) {
    case kDied:
      return Fmt("rank %d (process %d) died", r, ri.pid);
    case kAborted:
      return Fmt("rank %d (process %d) aborted its communicator", r, ri.pid);
    case kDestroyed:
      return Fmt("rank %d (process %d) destroyed its communicator without making this call", r,
                 ri.pid);
    default:
      return "";
  }
}

std::string ShmComm::PeerGone() {
  for (int r = 0; r < nranks_; ++r) {
    if (r != rank_ && Load(layout_->rank(r).state) == kDied) return DescribeGone(r);
  }
  return "";
}

void ShmComm::MarkGone(bool aborted, bool died) {
  std::int32_t expected = kLive;
  std::atomic_ref<std::int32_t>(layout_->rank(rank_).state)
      .compare_exchange_strong(expected, died ? kDied : aborted ? kAborted : kDestroyed);
  Notify();
}

// ---- Posting ----------------------------------------------------------------------------------

ncclResult_t ShmComm::PostCollective(std::uint64_t seq, const CallDesc& d,
                                     const std::string& label, ShmTicket* ticket,
                                     std::string* text) {
  const Layout& l = *layout_;
  *ticket = ShmTicket{};
  ticket->seq = seq;
  {
    SegmentLock lock(&l.header().mu);
    if (seq >= kCollSlots) {
      for (int q = 0; q < nranks_; ++q) {
        if (Load(l.coll_part(seq, q).done) < seq - kCollSlots + 1) {
          *text = Fmt("fakenccl: collective #%" PRIu64 " of %s: rank %d is %" PRIu64
                      " collectives ahead of rank %d, which has not finished collective #%" PRIu64
                      " (a communicator across processes holds that many in flight)",
                      seq, label.c_str(), rank_, kCollSlots, q, seq - kCollSlots);
          return ncclInvalidUsage;
        }
      }
    }
    Failure& f = l.coll_failure(seq);
    std::string mismatch;
    for (int q = 0; q < nranks_ && Load(f.failed_seq) != seq + 1; ++q) {
      const CollPart& other = l.coll_part(seq, q);
      if (q == rank_ || Load(other.posted) != seq + 1) continue;
      const CallDesc od = FromShm(other.desc);
      if (SameCollective(od, d)) continue;
      mismatch = Fmt("fakenccl: mismatched collective #%" PRIu64 " on %s: rank %d called %s but "
                     "rank %d called %s",
                     seq, label.c_str(), q, DescribeCall(od).c_str(), rank_,
                     DescribeCall(d).c_str());
      break;
    }
    CollPart& me = l.coll_part(seq, rank_);
    me.desc = ToShm(d);
    me.scalar = d.op.scalar;
    Store(me.posted, seq + 1);
    if (!mismatch.empty() && Load(f.failed_seq) != seq + 1) {
      f.error = ncclInvalidUsage;
      f.culprit = -1;
      f.culprit_error = ncclSuccess;
      CopyText(f.text, mismatch);
      Store(f.failed_seq, seq + 1);
    }
  }
  Notify();
  return ncclSuccess;
}

ncclResult_t ShmComm::PostP2p(int peer, std::uint64_t k, const CallDesc& d,
                              const std::string& label, ShmTicket* ticket, std::string* text) {
  const Layout& l = *layout_;
  const bool send = d.kind == CallKind::kSend;
  *ticket = ShmTicket{};
  ticket->p2p = true;
  ticket->seq = k;
  ticket->send = send;
  ticket->src = send ? rank_ : peer;
  ticket->dst = send ? peer : rank_;
  const int me = send ? 0 : 1;
  {
    SegmentLock lock(&l.header().mu);
    P2pSlot& s = l.p2p_slot(ticket->src, ticket->dst, k);
    if (k >= kP2pSlots && (Load(s.done[0]) < k - kP2pSlots + 1 ||
                           Load(s.done[1]) < k - kP2pSlots + 1)) {
      *text = Fmt("fakenccl: ncclSend/ncclRecv #%" PRIu64 " from rank %d to rank %d of %s: %" PRIu64
                  " earlier ones between them are not finished (a communicator across processes "
                  "holds that many in flight per pair)",
                  k, ticket->src, ticket->dst, label.c_str(), kP2pSlots);
      return ncclInvalidUsage;
    }
    s.desc[me] = ToShm(d);
    Store(s.posted[me], k + 1);
    if (Load(s.posted[1 - me]) == k + 1 && Load(s.failure.failed_seq) != k + 1) {
      const CallDesc other = FromShm(s.desc[1 - me]);
      const std::size_t mine = d.count * TypeSize(d.type);
      if (other.count * TypeSize(other.type) != mine) {
        const CallDesc& sd = send ? d : other;
        const CallDesc& rd = send ? other : d;
        s.failure.error = ncclInvalidUsage;
        s.failure.culprit = -1;
        CopyText(s.failure.text,
                 Fmt("fakenccl: mismatched point-to-point calls on %s: rank %d's ncclSend #%" PRIu64
                     " to rank %d sends %zu bytes (%zu x %s) but rank %d's matching ncclRecv "
                     "expects %zu bytes (%zu x %s)",
                     label.c_str(), ticket->src, k, ticket->dst, sd.count * TypeSize(sd.type),
                     sd.count, TypeName(sd.type), ticket->dst, rd.count * TypeSize(rd.type),
                     rd.count, TypeName(rd.type)));
        Store(s.failure.failed_seq, k + 1);
      }
    }
  }
  Notify();
  return ncclSuccess;
}

// ---- Settling and failing ---------------------------------------------------------------------

namespace {

// The failure stored in `f` (read after its failed_seq, acquire).
void ReadFailure(const Failure& f, ShmFailure* failure) {
  failure->error = static_cast<ncclResult_t>(f.error);
  failure->culprit = f.culprit;
  failure->culprit_error = static_cast<ncclResult_t>(f.culprit_error);
  failure->text = f.text;
}

}  // namespace

void ShmComm::Fail(const ShmTicket& t, ShmFailure* failure) {
  Failure& f = layout_->failure_of(t);
  {
    SegmentLock lock(&layout_->header().mu);
    if (Load(f.failed_seq) != t.seq + 1) {
      f.error = static_cast<std::int32_t>(failure->error);
      f.culprit = failure->culprit;
      f.culprit_error = static_cast<std::int32_t>(failure->culprit_error);
      CopyText(f.text, failure->text);
      Store(f.failed_seq, t.seq + 1);
    } else {
      ReadFailure(f, failure);
    }
  }
  Notify();
}

bool ShmComm::Settled(const ShmTicket& t, ShmFailure* failure) {
  const Layout& l = *layout_;
  const Failure& f = l.failure_of(t);
  if (Load(f.failed_seq) == t.seq + 1) {
    ReadFailure(f, failure);
    return true;
  }
  const std::vector<int> who = Unposted(t);
  if (who.empty()) return true;
  for (int q : who) {
    const std::int32_t state = Load(l.rank(q).state);
    if (state == kLive) continue;
    ShmFailure mine;
    mine.error = state == kDestroyed ? ncclInvalidUsage : ncclRemoteError;
    const std::string what =
        t.p2p ? Fmt("ncclSend/ncclRecv #%" PRIu64 " from rank %d to rank %d", t.seq, t.src, t.dst)
              : Fmt("collective #%" PRIu64, t.seq);
    mine.text = Fmt("fakenccl: %s of %s needs %s; operations that needed it fail", what.c_str(),
                    label_.c_str(), DescribeGone(q).c_str());
    Fail(t, &mine);
    *failure = mine;
    return true;
  }
  return false;
}

std::vector<int> ShmComm::Unposted(const ShmTicket& t) {
  std::vector<int> who;
  const Layout& l = *layout_;
  if (t.p2p) {
    const P2pSlot& s = l.p2p_slot(t.src, t.dst, t.seq);
    if (Load(s.posted[0]) != t.seq + 1) who.push_back(t.src);
    if (Load(s.posted[1]) != t.seq + 1 && t.dst != t.src) who.push_back(t.dst);
  } else {
    for (int q = 0; q < nranks_; ++q) {
      if (Load(l.coll_part(t.seq, q).posted) != t.seq + 1) who.push_back(q);
    }
  }
  return who;
}

// ---- Execution --------------------------------------------------------------------------------

namespace {

bool Overlaps(const std::byte* a, std::size_t an, const std::byte* b, std::size_t bn) {
  if (a == nullptr || b == nullptr || an == 0 || bn == 0) return false;
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + bn && y < x + an;
}

// Whether call kind `k` reads (input) or writes (output) `n` blocks on rank `me`; 0 when none.
std::size_t InBlocks(CallKind k, int me, int root, int n) {
  switch (k) {
    case CallKind::kBroadcast: return me == root ? 1 : 0;
    case CallKind::kReduceScatter:
    case CallKind::kAlltoAll: return static_cast<std::size_t>(n);
    case CallKind::kScatter: return me == root ? static_cast<std::size_t>(n) : 0;
    default: return 1;
  }
}
std::size_t OutBlocks(CallKind k, int me, int root, int n) {
  switch (k) {
    case CallKind::kReduce: return me == root ? 1 : 0;
    case CallKind::kAllGather:
    case CallKind::kAlltoAll: return static_cast<std::size_t>(n);
    case CallKind::kGather: return me == root ? static_cast<std::size_t>(n) : 0;
    default: return 1;
  }
}
// Whether a chunk's contribution of this kind holds n sub-blocks (one per destination rank).
bool PerDestination(CallKind k) {
  return k == CallKind::kReduceScatter || k == CallKind::kAlltoAll || k == CallKind::kScatter;
}

}  // namespace

// One entry's progress (one thread; no stream ordering of its own).
struct ShmMachine {
  const ShmComm::Entry* entry = nullptr;
  bool finished = false;
  ShmFailure failure;
  int phase = 0;  // 0 start, 1 moving
  std::uint64_t base = 0;     // collectives: the slot's chunk count when this one started
  std::uint64_t chunk = 0;    // collectives: chunks combined; p2p: chunks moved
  std::uint64_t deposited = 0;  // collectives: chunks deposited (chunk <= deposited)
  std::uint64_t chunks = 0;
  std::size_t per_chunk = 0;  // elements (collectives) or bytes (p2p) per chunk
  std::byte* in = nullptr;
  std::byte* out = nullptr;
  std::vector<std::byte> snapshot;
};

void ShmComm::Execute(std::span<const Entry> entries,
                      std::chrono::steady_clock::time_point deadline,
                      std::chrono::milliseconds timeout, std::vector<ShmFailure>* results) {
  const Layout& l = *layout_;
  const int n = nranks_;
  const int me = rank_;
  std::vector<ShmMachine> ms(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) ms[i].entry = &entries[i];
  auto finish = [&](ShmMachine& m, ShmFailure f) {
    if (f.error != ncclSuccess) Fail(m.entry->ticket, &f);
    m.failure = std::move(f);
    m.finished = true;
  };
  auto translate = [&](ShmMachine& m, const void* ptr, std::size_t bytes, const char* what,
                       const std::string& where) -> std::byte* {
    if (bytes == 0 || m.finished) return nullptr;
    std::byte* host =
        Hooks()->translate_device_pointer(reinterpret_cast<CUdeviceptr>(ptr), bytes, nullptr);
    if (host == nullptr) {
      ShmFailure f;
      f.error = ncclRemoteError;
      f.culprit = me;
      f.culprit_error = ncclUnhandledCudaError;
      f.text = Fmt("fakenccl: %s: rank %d's %s %p (%zu bytes) is not inside one allocation of the "
                   "fake driver (on a GPU the kernel would fault with an illegal address)",
                   where.c_str(), me, what, ptr, bytes);
      finish(m, std::move(f));
    }
    return host;
  };
  auto describe = [&](const ShmTicket& t) {
    if (t.p2p) {
      return Fmt("ncclSend/ncclRecv #%" PRIu64 " from rank %d to rank %d of %s", t.seq, t.src,
                 t.dst, label_.c_str());
    }
    return Fmt("collective #%" PRIu64 " of %s", t.seq, label_.c_str());
  };
  // One step of a collective; true when it moved.
  auto step_collective = [&](ShmMachine& m) -> bool {
    const CallDesc& d = m.entry->desc;
    const std::uint64_t seq = m.entry->ticket.seq;
    const std::uint64_t slot = seq % kDataSlots;
    const std::size_t size = TypeSize(d.type);
    const std::size_t block = d.count * size;
    if (m.phase == 0) {
      if (n == 1 && InPlaceNoOpOnOneRank(d)) {  // moves nothing, translates nothing (in-process too)
        Store(l.coll_part(seq, me).done, seq + 1);
        m.finished = true;
        NotifyData();
        return true;
      }
      if (seq >= kDataSlots) {
        for (int q = 0; q < n; ++q) {
          if (Load(l.coll_part(seq - kDataSlots, q).done) < seq - kDataSlots + 1) return false;
        }
      }
      const std::string where = describe(m.entry->ticket);
      const std::size_t in_bytes = InBlocks(d.kind, me, d.root, n) * block;
      const std::size_t out_bytes = OutBlocks(d.kind, me, d.root, n) * block;
      m.in = translate(m, d.sendbuff, in_bytes, "sendbuff", where);
      m.out = translate(m, d.recvbuff, out_bytes, "recvbuff", where);
      CollPart& part = l.coll_part(seq, me);
      if (!m.finished && d.op.kind == ReduceKind::kPreMulSum && d.op.scalar_on_device) {
        std::byte* s = translate(m, reinterpret_cast<const void*>(d.op.scalar_ptr), size,
                                 "PreMulSum scalar", where);
        if (s != nullptr) std::memcpy(part.scalar.data(), s, size);
      }
      if (m.finished) return true;
      const bool safe_in_place =
          (m.in == m.out && (d.kind == CallKind::kAllReduce || d.kind == CallKind::kReduce ||
                             d.kind == CallKind::kBroadcast)) ||
          (d.kind == CallKind::kAllGather && m.in == m.out + static_cast<std::size_t>(me) * block) ||
          (d.kind == CallKind::kReduceScatter &&
           m.out == m.in + static_cast<std::size_t>(me) * block);
      if (!safe_in_place && Overlaps(m.in, in_bytes, m.out, out_bytes)) {
        m.snapshot.assign(m.in, m.in + in_bytes);  // inputs before outputs (invariant 3)
        m.in = m.snapshot.data();
      }
      // A chunk fills half a staging area: one piece of the rank's input, or n (one per
      // destination).
      const std::size_t pieces = PerDestination(d.kind) ? static_cast<std::size_t>(n) : 1;
      m.per_chunk = std::max<std::size_t>(1, kChunkBytes / (pieces * size));
      m.chunks = (d.count + m.per_chunk - 1) / m.per_chunk;
      m.base = Load(l.deposited(slot, me));
      m.phase = 1;
      if (m.chunks == 0) {  // nothing to move (matching never posts such calls; kept safe)
        Store(l.coll_part(seq, me).done, seq + 1);
        m.finished = true;
        NotifyData();
      }
      return true;
    }
    // Chunk c: elements [at, at + len) of each block, in half (base + c) % kChunkHalves.
    auto chunk_at = [&](std::uint64_t c) { return static_cast<std::size_t>(c) * m.per_chunk; };
    auto chunk_len = [&](std::uint64_t c) { return std::min(m.per_chunk, d.count - chunk_at(c)); };
    auto chunk_area = [&](int q, std::uint64_t c) {
      return l.staging_area(slot, q) + ((m.base + c) % kChunkHalves) * kChunkBytes;
    };
    bool moved = false;
    // Deposit ahead (invariant 3): chunk c once every rank consumed chunk c - kChunkHalves, the
    // last one in the same half. A rank without input deposits nothing but counts, in step.
    if (m.deposited < m.chunks && m.deposited < m.chunk + kChunkHalves) {
      const std::uint64_t c = m.deposited;
      bool free = true;
      for (int q = 0; q < n && free; ++q) {
        free = Load(l.consumed(slot, q)) + kChunkHalves >= m.base + c + 1;
      }
      if (free) {
        if (m.in != nullptr) {
          const std::size_t at = chunk_at(c);
          const std::size_t len_bytes = chunk_len(c) * size;
          std::byte* mine = chunk_area(me, c);
          if (PerDestination(d.kind)) {
            for (int q = 0; q < n; ++q) {
              std::memcpy(mine + static_cast<std::size_t>(q) * len_bytes,
                          m.in + static_cast<std::size_t>(q) * block + at * size, len_bytes);
            }
          } else {
            std::memcpy(mine, m.in + at * size, len_bytes);
          }
        }
        Store(l.deposited(slot, me), m.base + c + 1);
        ++m.deposited;
        NotifyData();
        moved = true;
      }
    }
    if (m.chunk == m.deposited) return moved;
    // Combine chunk c once every rank deposited it.
    const std::uint64_t c = m.chunk;
    for (int q = 0; q < n; ++q) {
      if (Load(l.deposited(slot, q)) < m.base + c + 1) return moved;
    }
    const std::size_t at = chunk_at(c);
    const std::size_t len = chunk_len(c);
    const std::size_t len_bytes = len * size;
    const auto un = static_cast<std::size_t>(n);
    const auto ume = static_cast<std::size_t>(me);
    const auto root = static_cast<std::size_t>(d.root);
    auto area = [&](std::size_t q) { return chunk_area(static_cast<int>(q), c); };
    if (m.out != nullptr) {
      switch (d.kind) {
        case CallKind::kAllReduce:
        case CallKind::kReduce:
        case CallKind::kReduceScatter: {
          std::vector<const std::byte*> ptrs(un);
          std::vector<ScalarBytes> scalars(un);
          const std::size_t off = d.kind == CallKind::kReduceScatter ? ume * len_bytes : 0;
          for (std::size_t q = 0; q < un; ++q) {
            ptrs[q] = area(q) + off;
            scalars[q] = l.coll_part(seq, static_cast<int>(q)).scalar;
          }
          Reduce(d.type, d.op.kind, ptrs, scalars, len, m.out + at * size);
          break;
        }
        case CallKind::kBroadcast:
          std::memcpy(m.out + at * size, area(root), len_bytes);
          break;
        case CallKind::kAllGather:
        case CallKind::kGather:
          for (std::size_t q = 0; q < un; ++q) {
            std::memcpy(m.out + q * block + at * size, area(q), len_bytes);
          }
          break;
        case CallKind::kAlltoAll:
          for (std::size_t q = 0; q < un; ++q) {
            std::memcpy(m.out + q * block + at * size, area(q) + ume * len_bytes, len_bytes);
          }
          break;
        case CallKind::kScatter:
          std::memcpy(m.out + at * size, area(root) + ume * len_bytes, len_bytes);
          break;
        case CallKind::kSend:
        case CallKind::kRecv:
          break;
      }
    }
    Store(l.consumed(slot, me), m.base + c + 1);
    if (++m.chunk == m.chunks) {
      Store(l.coll_part(seq, me).done, seq + 1);
      m.finished = true;
    }
    NotifyData();
    return true;
  };
  auto step_p2p = [&](ShmMachine& m, std::size_t index) -> bool {
    const ShmTicket& t = m.entry->ticket;
    const CallDesc& d = m.entry->desc;
    // The k-th transfer of a pair goes before the (k+1)-th (one mailbox per pair).
    for (std::size_t j = 0; j < index; ++j) {
      const ShmTicket& o = ms[j].entry->ticket;
      if (!ms[j].finished && o.p2p && o.src == t.src && o.dst == t.dst && o.send == t.send) {
        return false;
      }
    }
    const std::size_t bytes = d.count * TypeSize(d.type);
    if (m.phase == 0) {
      const std::string where = describe(t);
      if (t.send) {
        m.in = translate(m, d.sendbuff, bytes, "send buffer", where);
      } else {
        m.out = translate(m, d.recvbuff, bytes, "receive buffer", where);
      }
      if (m.finished) return true;
      m.per_chunk = kMailboxBytes;
      m.chunks = (bytes + kMailboxBytes - 1) / kMailboxBytes;
      m.phase = 1;
    }
    P2pSlot& s = l.p2p_slot(t.src, t.dst, t.seq);
    if (m.chunk == m.chunks) {
      Store(s.done[t.send ? 0 : 1], t.seq + 1);
      m.finished = true;
      NotifyData();
      return true;
    }
    const std::size_t at = m.chunk * kMailboxBytes;
    const std::size_t len = std::min(kMailboxBytes, bytes - at);
    std::uint64_t& sent = l.sent(t.src, t.dst);
    std::uint64_t& received = l.received(t.src, t.dst);
    MailboxTag& tag = l.tag(t.src, t.dst);
    if (t.send) {
      if (Load(received) != Load(sent)) return false;  // the mailbox is full
      std::memcpy(l.mailbox(t.src, t.dst), m.in + at, len);
      tag.k1 = t.seq + 1;
      tag.chunk = m.chunk;
      Store(sent, Load(sent) + 1);
    } else {
      if (Load(sent) == Load(received)) return false;  // empty
      if (tag.k1 != t.seq + 1 || tag.chunk != m.chunk) return false;  // another transfer's
      std::memcpy(m.out + at, l.mailbox(t.src, t.dst), len);
      Store(received, Load(received) + 1);
    }
    ++m.chunk;
    NotifyData();
    return true;
  };

  // Waiting for a peer: yield (re-reading the counters between yields) for up to kYieldFor,
  // then sleep on data_epoch. Yielding beat spinning on the 2-core machine of docs/fakenccl.md:
  // a spinning rank took the core its peer (or its peer's other threads) needed.
  constexpr auto kYieldFor = std::chrono::microseconds(100);
  std::chrono::steady_clock::time_point idle_since{};
  bool idle = false;
  for (;;) {
    const std::uint32_t seen = std::atomic_ref<std::uint32_t>(l.header().data_epoch).load();
    bool moved = false;
    bool all = true;
    for (std::size_t i = 0; i < ms.size(); ++i) {
      ShmMachine& m = ms[i];
      if (m.finished) continue;
      const Failure& f = l.failure_of(m.entry->ticket);
      if (Load(f.failed_seq) == m.entry->ticket.seq + 1) {
        ShmFailure got;
        Settled(m.entry->ticket, &got);
        m.failure = std::move(got);
        m.finished = true;
        moved = true;
        continue;
      }
      moved = (m.entry->ticket.p2p ? step_p2p(m, i) : step_collective(m)) || moved;
      all = all && m.finished;
    }
    if (all) break;
    if (moved) {
      idle = false;
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!idle) {
      idle = true;
      idle_since = now;
    }
    if (now - idle_since < kYieldFor) {
      std::this_thread::yield();
      continue;
    }
    // Nothing moved: a peer is behind, gone, or never coming (invariant 4).
    CheckPeers();
    for (ShmMachine& m : ms) {
      if (m.finished) continue;
      const ShmTicket& t = m.entry->ticket;
      std::vector<int> peers;
      if (t.p2p) {
        peers.push_back(t.send ? t.dst : t.src);
      } else {
        for (int q = 0; q < n; ++q) peers.push_back(q);
      }
      for (int q : peers) {
        const std::int32_t state = Load(l.rank(q).state);
        if (q == me || (state != kDied && state != kAborted)) continue;
        ShmFailure f;
        f.error = ncclRemoteError;
        f.text = Fmt("fakenccl: %s needs %s; operations that needed it fail",
                     describe(t).c_str(), DescribeGone(q).c_str());
        finish(m, std::move(f));
        break;
      }
      if (!m.finished && std::chrono::steady_clock::now() > deadline) {
        ShmFailure f;
        f.error = ncclInvalidUsage;
        f.text = Fmt("fakenccl: %s timed out after the wall-clock backstop of %lld ms while "
                     "moving its data (a peer process is neither done nor gone: busy, or its "
                     "stream never reached the call)",
                     describe(t).c_str(), static_cast<long long>(timeout.count()));
        finish(m, std::move(f));
      }
    }
    WaitData(seen, std::chrono::milliseconds(1));
    idle = false;
  }
  results->clear();
  for (ShmMachine& m : ms) results->push_back(std::move(m.failure));
}

}  // namespace internal
}  // namespace fakenccl
