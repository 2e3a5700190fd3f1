// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/driver_state.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "fakecuda/internal/per_thread_mode.h"
#include "fakecuda/internal/mem_pool.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/thread_state.h"
#include "fakecuda/virtual_clock.h"

namespace fakecuda {
namespace {

std::atomic<std::uint64_t> g_serial{1};
// Scheduler waits with nothing runnable, process-wide (see SchedulerWaitTicks).
std::atomic<std::uint64_t> g_wait_ticks{0};
constexpr int kWaitTickMs = 10;

// Allocations at least this large are backed by lazily committed anonymous mappings.
constexpr std::size_t kMmapThreshold = 1 << 20;

}  // namespace

std::uint64_t SchedulerWaitTicks() { return g_wait_ticks.load(std::memory_order_relaxed); }

DriverState::DriverState(DriverOptions opts) : options(std::move(opts)) {
  serial = g_serial.fetch_add(1);
  rng = options.seed ^ 0x5851f42d4c957f2dULL;
  for (size_t i = 0; i < options.devices.size(); ++i) {
    Device d;
    d.ordinal = static_cast<int>(i);
    d.profile = options.devices[i];
    // Each device owns a 2^44-byte (16 TiB) range of addresses starting at 2^48 * (i + 1): above
    // the 47-bit user address space, so a device pointer is never host-dereferenceable.
    d.next_va = (CUdeviceptr{1} << 48) * (i + 1);
    d.primary_ctx_id = 0;
    devices.push_back(std::move(d));
  }
}

DriverState::~DriverState() {
  for (auto it = allocations.begin(); it != allocations.end();) {
    auto next = std::next(it);
    ReleaseAllocation(it);
    it = next;
  }
}

std::uint64_t DriverState::NextRandom() {
  std::uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Context* DriverState::FindContext(CUcontext handle) {
  std::uint64_t id = DecodeHandle(HandleKind::kContext, handle);
  auto it = contexts.find(id);
  return it == contexts.end() ? nullptr : it->second.get();
}

Stream* DriverState::FindStream(std::uint64_t id) {
  auto it = streams.find(id);
  return it == streams.end() ? nullptr : it->second.get();
}

Event* DriverState::FindEvent(CUevent handle) {
  std::uint64_t id = DecodeHandle(HandleKind::kEvent, handle);
  auto it = events.find(id);
  return it == events.end() ? nullptr : it->second.get();
}

Context* DriverState::CurrentContext() {
  auto& stack = ThreadContextStack(serial);
  if (stack.empty()) return nullptr;
  return FindContext(EncodeHandle<CUcontext>(HandleKind::kContext, stack.back()));
}

Stream* DriverState::NewStream(Context* ctx, unsigned flags, int priority) {
  auto s = std::make_unique<Stream>();
  s->id = NewId();
  s->ctx_id = ctx->id;
  s->flags = flags;
  s->priority = priority;
  Stream* raw = s.get();
  streams.emplace(raw->id, std::move(s));
  return raw;
}

Stream* DriverState::ResolveStream(CUstream handle, CUresult* error) {
  *error = CUDA_SUCCESS;
  // Inside a `_ptds` entry point the implicit default stream is the per-thread one.
  if (ImplicitStreamIsPerThread() && (handle == nullptr || handle == CU_STREAM_LEGACY)) {
    handle = CU_STREAM_PER_THREAD;
  }
  auto raw = reinterpret_cast<std::uintptr_t>(handle);
  if (raw == 0 || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    Context* ctx = CurrentContext();
    if (ctx == nullptr) {
      *error = CUDA_ERROR_INVALID_CONTEXT;
      return nullptr;
    }
    if (handle == CU_STREAM_PER_THREAD) {
      std::uint64_t key = ThreadKey();
      auto it = ctx->per_thread_streams.find(key);
      if (it != ctx->per_thread_streams.end()) return FindStream(it->second);
      Stream* s = NewStream(ctx, CU_STREAM_DEFAULT, 0);
      s->per_thread_default = true;
      ctx->per_thread_streams.emplace(key, s->id);
      return s;
    }
    if (ctx->legacy_stream_id == 0) {
      Stream* s = NewStream(ctx, CU_STREAM_DEFAULT, 0);
      s->legacy_default = true;
      ctx->legacy_stream_id = s->id;
      return s;
    }
    return FindStream(ctx->legacy_stream_id);
  }
  std::uint64_t id = DecodeHandle(HandleKind::kStream, handle);
  Stream* s = FindStream(id);
  if (s == nullptr || s->destroyed) {
    *error = CUDA_ERROR_INVALID_HANDLE;
    return nullptr;
  }
  return s;
}

bool DriverState::DepSatisfied(std::uint64_t stream_id, std::uint64_t seq) const {
  auto it = streams.find(stream_id);
  if (it == streams.end()) return true;  // reaped: everything it had completed
  return it->second->completed_seq >= seq;
}

bool DriverState::HeadReady(const Stream* s) const {
  if (s->queue.empty() || s->running) return false;
  const Op& op = s->queue.front();
  for (const auto& [sid, seq] : op.deps) {
    if (!DepSatisfied(sid, seq)) return false;
  }
  return !op.ready || op.ready();
}

bool DriverState::StreamIdle(const Stream* s) const { return s->queue.empty() && !s->running; }

double DriverState::CopyCostUs(std::size_t bytes, bool device_to_device) {
  // H200-like figures: ~2 TB/s device to device, ~50 GB/s across PCIe/C2C, 2 us fixed cost.
  double bandwidth = device_to_device ? 2.0e6 : 5.0e4;  // bytes per microsecond
  return 2.0 + static_cast<double>(bytes) / bandwidth;
}

std::uint64_t DriverState::Enqueue(Stream* s, Op op, std::unique_lock<std::mutex>& lock) {
  op.seq = next_seq++;
  Context* ctx = contexts.count(s->ctx_id) ? contexts[s->ctx_id].get() : nullptr;
  // Implicit synchronization with the legacy default stream: it waits for every blocking stream
  // of its context, and every blocking stream waits for it.
  if (ctx != nullptr) {
    if (s->legacy_default) {
      for (auto& [id, other] : streams) {
        if (other.get() != s && other->ctx_id == s->ctx_id && !other->destroyed &&
            !(other->flags & CU_STREAM_NON_BLOCKING) && other->last_enqueued_seq > other->completed_seq) {
          op.deps.emplace_back(id, other->last_enqueued_seq);
        }
      }
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && ctx->legacy_stream_id != 0) {
      Stream* legacy = FindStream(ctx->legacy_stream_id);
      if (legacy && legacy->last_enqueued_seq > legacy->completed_seq) {
        op.deps.emplace_back(legacy->id, legacy->last_enqueued_seq);
      }
    }
  }
  for (const auto& [sid, dseq] : op.deps) {
    std::uint64_t& waited = s->waited[sid];
    waited = std::max(waited, dseq);
  }
  std::uint64_t seq = op.seq;
  s->last_enqueued_seq = seq;
  s->queue.push_back(std::move(op));
  cv.notify_all();
  if (options.policy == SchedulePolicy::kEager) DrainEager(lock);
  return seq;
}

Stream* DriverState::PickReady(const std::vector<Stream*>& candidates) {
  if (candidates.empty()) return nullptr;
  if (options.policy == SchedulePolicy::kEager) {
    // Oldest head first: program order.
    return *std::min_element(candidates.begin(), candidates.end(), [](Stream* a, Stream* b) {
      return a->queue.front().seq < b->queue.front().seq;
    });
  }
  // Adversarial: any ready stream, chosen by the seed. Candidates come in id order, so the
  // choice depends only on the seed and the program, not on hash-table iteration order.
  return candidates[NextRandom() % candidates.size()];
}

void DriverState::RunHead(Stream* s, std::unique_lock<std::mutex>& lock) {
  Op& head = s->queue.front();
  s->running = true;
  double start = s->time_us;
  for (const auto& [sid, seq] : head.deps) {
    (void)seq;
    if (Stream* d = FindStream(sid)) start = std::max(start, d->time_us);
  }
  std::function<CUresult()> body = std::move(head.body);
  double cost = head.cost_us;
  CUresult result = CUDA_SUCCESS;
  if (body) {
    lock.unlock();
    result = body();
    lock.lock();
  }
  // `s` stays valid: a running stream is never reaped.
  Op done = std::move(s->queue.front());
  s->queue.pop_front();
  s->running = false;
  s->time_us = start + cost;
  s->completed_seq = done.seq;
  if (done.record_event_id != 0) {
    auto it = events.find(done.record_event_id);
    if (it != events.end() && it->second->generation == done.record_generation) {
      it->second->complete = true;
      it->second->time_us = s->time_us;
    }
  }
  if (result != CUDA_SUCCESS) {
    auto it = contexts.find(s->ctx_id);
    if (it != contexts.end() && it->second->sticky == CUDA_SUCCESS) it->second->sticky = result;
  }
  cv.notify_all();
}

void DriverState::DrainEager(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    std::vector<Stream*> ready;
    for (auto& [id, s] : streams) {
      if (HeadReady(s.get())) ready.push_back(s.get());
    }
    if (ready.empty()) break;
    RunHead(PickReady(ready), lock);
  }
  ReapStreams();
}

Stream* DriverState::FindNeededReady(Stream* target, std::uint64_t seq) {
  // Walk the chain of streams `target` (up to seq) waits on, transitively, and pick among the
  // ones whose head op is ready to run.
  std::vector<std::uint64_t> needed{target->id};
  std::vector<std::uint64_t> limit{seq};
  std::vector<Stream*> ready;
  for (size_t i = 0; i < needed.size() && i < 64; ++i) {
    Stream* s = FindStream(needed[i]);
    if (s == nullptr || s->queue.empty() || s->running) continue;
    const Op& head = s->queue.front();
    if (head.seq > limit[i]) continue;
    if (HeadReady(s)) {
      ready.push_back(s);
      continue;
    }
    for (const auto& [sid, dseq] : head.deps) {
      if (!DepSatisfied(sid, dseq) &&
          std::find(needed.begin(), needed.end(), sid) == needed.end()) {
        needed.push_back(sid);
        limit.push_back(dseq);
      }
    }
  }
  if (ready.empty()) return nullptr;
  std::sort(ready.begin(), ready.end(), [](Stream* a, Stream* b) { return a->id < b->id; });
  return PickReady(ready);
}

void DriverState::Step(Stream* target, std::uint64_t seq, std::unique_lock<std::mutex>& lock) {
  if (Stream* runnable = FindNeededReady(target, seq)) {
    RunHead(runnable, lock);
    return;
  }
  // Nothing this thread can run: another thread is running a needed op, or an op waits for work
  // another thread has yet to enqueue (a collective's peers). Wait for the world to change.
  ScopedBlocked blocked;  // VIRTUAL CLOCK (fakecuda/virtual_clock.h): this thread is idle here
  cv.wait_for(lock, std::chrono::milliseconds(kWaitTickMs));
  g_wait_ticks.fetch_add(1, std::memory_order_relaxed);
}

CUresult DriverState::SyncStream(Stream* s, std::uint64_t seq, std::unique_lock<std::mutex>& lock) {
  std::uint64_t id = s->id;
  // Once this returns, the host has seen every op (and pool free) ordered on the stream before
  // `proven_below` complete.
  const std::uint64_t proven_below = seq == 0 ? next_seq : seq;
  if (seq == 0) seq = s->last_enqueued_seq;
  for (;;) {
    Stream* cur = FindStream(id);
    if (cur == nullptr || cur->completed_seq >= seq) break;
    Step(cur, seq, lock);
  }
  ReapStreams();
  NoteSynchronized(id, proven_below);
  Stream* cur = FindStream(id);
  if (cur != nullptr) {
    auto it = contexts.find(cur->ctx_id);
    if (it != contexts.end() && it->second->sticky != CUDA_SUCCESS) return it->second->sticky;
  }
  return CUDA_SUCCESS;
}

void DriverState::NoteSynchronized(std::uint64_t stream_id, std::uint64_t proven_below) {
  PoolsOnStreamSync(this, stream_id, proven_below);
}

CUresult DriverState::SyncAll(std::uint64_t ctx_id, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    std::vector<Stream*> pending;
    for (auto& [id, s] : streams) {
      if ((ctx_id == 0 || s->ctx_id == ctx_id) && !StreamIdle(s.get())) pending.push_back(s.get());
    }
    if (pending.empty()) break;
    std::sort(pending.begin(), pending.end(), [](Stream* a, Stream* b) { return a->id < b->id; });
    std::vector<Stream*> ready;
    for (Stream* s : pending) {
      if (HeadReady(s)) ready.push_back(s);
    }
    if (!ready.empty()) {
      RunHead(PickReady(ready), lock);
    } else {
      Step(pending[NextRandom() % pending.size()], ~std::uint64_t{0}, lock);
    }
  }
  ReapStreams();
  PoolsOnContextSync(this, ctx_id);
  if (ctx_id != 0) {
    auto it = contexts.find(ctx_id);
    if (it != contexts.end() && it->second->sticky != CUDA_SUCCESS) return it->second->sticky;
  }
  return CUDA_SUCCESS;
}

bool DriverState::PollStream(Stream* s, std::uint64_t seq, std::unique_lock<std::mutex>& lock) {
  if (seq == 0) seq = s->last_enqueued_seq;
  if (s->completed_seq >= seq) return true;
  if (options.policy == SchedulePolicy::kAdversarial) {
    // Each poll completes one more op that the query needs (on the stream itself or, through
    // any chain of waits, on a stream it depends on), so a polling loop always terminates.
    std::uint64_t id = s->id;
    if (Stream* runnable = FindNeededReady(s, seq)) RunHead(runnable, lock);
    s = FindStream(id);
    if (s == nullptr) return true;
  }
  return s->completed_seq >= seq;
}

void DriverState::ReapStreams() {
  for (auto it = streams.begin(); it != streams.end();) {
    if (it->second->destroyed && StreamIdle(it->second.get())) {
      it = streams.erase(it);
    } else {
      ++it;
    }
  }
}

Allocation* DriverState::FindAllocation(std::uintptr_t ptr, std::size_t size) {
  auto it = allocations.upper_bound(ptr);
  if (it == allocations.begin()) return nullptr;
  --it;
  Allocation& a = it->second;
  if (ptr < a.base || ptr - a.base >= std::max<std::size_t>(a.size, 1)) return nullptr;
  if (size > a.size - (ptr - a.base)) return nullptr;
  return &a;
}

CUdeviceptr DriverState::ReserveVa(int device, std::size_t size, std::size_t alignment) {
  Device& d = devices[static_cast<size_t>(device)];
  CUdeviceptr base = (d.next_va + alignment - 1) / alignment * alignment;
  d.next_va = base + std::max<std::size_t>((size + 511) / 512 * 512, 512);
  return base;
}

std::byte* DriverState::AllocateBacking(std::size_t size, bool* mmapped, std::size_t* mapped_size) {
  *mmapped = false;
  *mapped_size = 0;
  if (size >= kMmapThreshold) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return nullptr;
    *mmapped = true;
    *mapped_size = size;
    return static_cast<std::byte*>(p);
  }
  return static_cast<std::byte*>(std::malloc(std::max<std::size_t>(size, 1)));
}

void DriverState::FreeBacking(std::byte* data, bool mmapped, std::size_t mapped_size) {
  if (data == nullptr) return;
  if (mmapped) {
    munmap(data, mapped_size);
  } else {
    std::free(data);
  }
}

void DriverState::ReleaseAllocation(std::map<std::uintptr_t, Allocation>::iterator it) {
  Allocation& a = it->second;
  if (a.type == MemoryType::kDevice && static_cast<size_t>(a.device) < devices.size()) {
    devices[static_cast<size_t>(a.device)].bytes_in_use -= a.size;
  }
  if (a.type != MemoryType::kRegisteredHost && a.type != MemoryType::kPool) {
    FreeBacking(a.data, a.mmapped, a.mapped_size);
  }
  allocations.erase(it);
}

void DriverState::TeardownContext(std::uint64_t ctx_id, std::unique_lock<std::mutex>& lock) {
  (void)SyncAll(ctx_id, lock);
  ModulesOnContextTeardown(this, ctx_id);
  for (auto it = streams.begin(); it != streams.end();) {
    it = it->second->ctx_id == ctx_id ? streams.erase(it) : std::next(it);
  }
  for (auto it = events.begin(); it != events.end();) {
    it = it->second->ctx_id == ctx_id ? events.erase(it) : std::next(it);
  }
  for (auto it = allocations.begin(); it != allocations.end();) {
    auto next = std::next(it);
    if (it->second.ctx_id == ctx_id && it->second.type != MemoryType::kPool) ReleaseAllocation(it);
    it = next;
  }
}

Inventory DriverState::CountLive() const {
  Inventory inv;
  for (const auto& [id, c] : contexts) {
    if (!c->primary) ++inv.contexts;
  }
  for (const Device& d : devices) inv.primary_retains += d.primary_refcount;
  for (const auto& [id, s] : streams) {
    if (!s->legacy_default && !s->per_thread_default && !s->destroyed) ++inv.streams;
  }
  inv.events = static_cast<int>(events.size());
  inv.pools = PoolsLive(*this);
  for (const auto& [base, a] : allocations) {
    switch (a.type) {
      case MemoryType::kDevice: ++inv.device_allocations; break;
      case MemoryType::kPinnedHost: ++inv.host_allocations; break;
      case MemoryType::kRegisteredHost: ++inv.host_registrations; break;
      case MemoryType::kManaged: ++inv.managed_allocations; break;
      case MemoryType::kPool: ++inv.pool_allocations; break;
    }
  }
  ModulesCountLive(*this, &inv);
  return inv;
}

std::string DriverState::DescribeLive() const {
  std::ostringstream os;
  for (const auto& [id, c] : contexts) {
    if (!c->primary) os << "context " << id << " on device " << c->device << " (cuCtxCreate)\n";
  }
  for (const Device& d : devices) {
    if (d.primary_refcount > 0) {
      os << "primary context of device " << d.ordinal << ": " << d.primary_refcount
         << " outstanding cuDevicePrimaryCtxRetain\n";
    }
  }
  for (const auto& [id, s] : streams) {
    if (!s->legacy_default && !s->per_thread_default && !s->destroyed) {
      os << "stream " << id << " (flags " << s->flags << ", priority " << s->priority << ")\n";
    }
  }
  for (const auto& [id, e] : events) os << "event " << id << " (flags " << e->flags << ")\n";
  for (const auto& [base, a] : allocations) {
    os << "allocation 0x" << std::hex << base << std::dec << " of " << a.size << " bytes ("
       << a.created_by << ")\n";
  }
  os << PoolsDescribe(*this);
  os << ModulesDescribe(*this);
  return os.str();
}

}  // namespace fakecuda
