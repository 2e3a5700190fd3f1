// Copyright 2026 The cuhal Authors.
#include "fakecuda/race/race_detector.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/base/env.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

using race::Clock;
using race::SiteId;

namespace {

constexpr int kMaxFrames = 32;
constexpr int kShownFrames = 5;
// Access records kept per allocation; the oldest go first beyond this (a bounded detector may
// miss a race with a very old access, never invents one).
constexpr std::size_t kMaxRecords = 256;

// Joins `from` into `into`; sets *changed when `into` grew anywhere but at index `own`.
void JoinInto(Clock* into, const Clock& from, std::size_t own, bool* changed) {
  if (into->size() < from.size()) into->resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (from[i] > (*into)[i]) {
      (*into)[i] = from[i];
      if (i != own) *changed = true;
    }
  }
}

struct HostCache {
  std::uint64_t serial = 0;
  void* host = nullptr;
};
thread_local HostCache t_host_cache;
thread_local void* t_caller = nullptr;  // NoteRaceCaller

std::string Hex(std::uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

void NoteRaceCaller(void* return_address) noexcept { t_caller = return_address; }

struct RaceDetector::Agent {
  std::size_t index = 0;
  std::uint64_t stream_id = 0;
  std::uint64_t ctx_id = 0;
  std::string label;      // "stream 5 (non-blocking)"
  std::uint64_t last_key = 0;
  Clock clock;            // after its last position
  struct Segment {
    std::uint64_t key_from;
    std::shared_ptr<const Clock> base;
  };
  std::vector<Segment> history;  // a new segment whenever the clock grew by a join
};

struct RaceDetector::Record {
  std::uintptr_t lo = 0, hi = 0;
  bool write = false;
  std::size_t agent = 0;
  std::uint64_t key = 0;
  const char* what = "";
  SiteId site = 0;
};

struct RaceDetector::Shadow {
  std::uint64_t alloc_id = 0;
  std::uintptr_t base = 0;
  std::size_t size = 0;
  // "cuMemAlloc"; for stream-ordered memory built when first reported (Origin()):
  // "cuMemAllocAsync on stream 3 at <site>".
  std::string origin;
  bool stream_ordered = false;
  std::size_t alloc_agent = 0;
  std::uint64_t alloc_key = 0;
  SiteId alloc_site = 0;
  const char* alloc_what = "";
  bool freed = false;
  std::string free_desc;
  SiteId free_site = 0;
  std::vector<Record> records;
};

struct RaceDetector::Host {
  Clock clock;
};

RaceDetector::RaceDetector(RaceCheck mode, std::uint64_t driver_serial)
    : mode_(mode), serial_(driver_serial) {}

RaceDetector::~RaceDetector() = default;

// --- agents ---

RaceDetector::Agent& RaceDetector::StreamAgent(const Stream& s) {
  if (s.race_agent < agents_.size()) return *agents_[s.race_agent];
  auto it = stream_agents_.find(s.id);
  if (it != stream_agents_.end()) {
    s.race_agent = it->second;
    return *agents_[it->second];
  }
  auto a = std::make_unique<Agent>();
  a->index = agents_.size();
  a->stream_id = s.id;
  a->ctx_id = s.ctx_id;
  a->label = "stream " + std::to_string(s.id);
  if (s.legacy_default) {
    a->label += " (the legacy default stream)";
  } else if (s.per_thread_default) {
    a->label += " (a per-thread default stream)";
  } else if (s.flags & CU_STREAM_NON_BLOCKING) {
    a->label += " (non-blocking)";
  }
  stream_agents_.emplace(s.id, a->index);
  s.race_agent = a->index;
  agents_.push_back(std::move(a));
  return *agents_.back();
}

RaceDetector::Agent* RaceDetector::NodeAgent(std::uint64_t exec, std::uint64_t node) {
  auto it = node_agents_.find({exec, node});
  return it == node_agents_.end() ? nullptr : agents_[it->second].get();
}

Clock& RaceDetector::HostClock() {
  Host* h = nullptr;
  if (t_host_cache.serial == serial_) {
    h = static_cast<Host*>(t_host_cache.host);
  } else {
    auto& slot = host_clocks_[std::this_thread::get_id()];
    if (slot == nullptr) slot = std::make_unique<Host>();
    h = slot.get();
    t_host_cache = {serial_, h};
  }
  return h->clock;
}

void RaceDetector::JoinStreamAt(Clock* into, std::uint64_t stream_id, std::uint64_t key,
                                bool* changed) {
  auto it = stream_agents_.find(stream_id);
  if (it == stream_agents_.end()) return;
  const Agent& a = *agents_[it->second];
  // The last segment that starts at or before `key`.
  auto seg = std::upper_bound(a.history.begin(), a.history.end(), key,
                              [](std::uint64_t k, const Agent::Segment& s) { return k < s.key_from; });
  if (seg == a.history.begin()) return;  // nothing on that stream at or before `key`
  --seg;
  bool grew = false;
  JoinInto(into, *seg->base, ~std::size_t{0}, &grew);
  const std::uint64_t own = std::min(key, a.last_key);
  if (into->size() <= a.index) into->resize(a.index + 1, 0);
  if ((*into)[a.index] < own) {
    (*into)[a.index] = own;
    grew = true;
  }
  if (grew) *changed = true;
}

RaceDetector::Agent& RaceDetector::Position(DriverState* st, const Stream& s, std::uint64_t key,
                                            const Op* op) CUHAL_NO_THREAD_SAFETY_ANALYSIS {
  // (Called with st->mu held, as every method; the analysis cannot name it through `st` here.)
  Agent& a = StreamAgent(s);
  const std::size_t own = a.index;
  bool changed = false;
  Clock& host = HostClock();
  // Host functions that returned: any later host action may depend on them (header).
  JoinInto(&host, released_, ~std::size_t{0}, &changed);
  changed = false;
  JoinInto(&a.clock, host, own, &changed);
  // The legacy default stream's implicit synchronization (as DriverState::Enqueue).
  if (s.legacy_default) {
    for (const auto& [id, other] : st->streams().streams()) {
      if (other->id == s.id || other->ctx_id != s.ctx_id || other->destroyed ||
          (other->flags & CU_STREAM_NON_BLOCKING)) {
        continue;
      }
      auto it = stream_agents_.find(id);
      if (it != stream_agents_.end()) JoinInto(&a.clock, agents_[it->second]->clock, own, &changed);
    }
  } else if (!(s.flags & CU_STREAM_NON_BLOCKING)) {
    if (const Context* ctx = st->contexts().Find(s.ctx_id); ctx != nullptr && ctx->legacy_stream_id != 0) {
      auto it = stream_agents_.find(ctx->legacy_stream_id);
      if (it != stream_agents_.end()) JoinInto(&a.clock, agents_[it->second]->clock, own, &changed);
    }
  }
  if (op != nullptr) {
    for (const auto& [sid, dseq] : op->deps) JoinStreamAt(&a.clock, sid, dseq, &changed);
    if (op->after_stream != 0) JoinStreamAt(&a.clock, op->after_stream, op->after_seq, &changed);
  }
  if (a.clock.size() <= own) a.clock.resize(own + 1, 0);
  a.clock[own] = key;
  a.last_key = key;
  if (changed || a.history.empty()) {
    a.history.push_back({key, std::make_shared<const Clock>(a.clock)});
  }
  return a;
}

// --- positions ---

void RaceDetector::OnGraphNode(DriverState* st, const Stream& s, std::uint64_t exec,
                               std::uint64_t node, std::uint64_t head,
                               const std::vector<std::uint64_t>& deps) {
  (void)st;
  Agent& stream_agent = StreamAgent(s);
  auto [it, fresh] = node_agents_.try_emplace({exec, node}, agents_.size());
  if (fresh) {
    auto a = std::make_unique<Agent>();
    a->index = agents_.size();
    a->ctx_id = s.ctx_id;
    a->label = stream_agent.label + ", graph node " + std::to_string(node);
    agents_.push_back(std::move(a));
  }
  Agent& a = *agents_[it->second];
  a.label = stream_agent.label + ", graph node " + std::to_string(node);  // this launch's stream
  // A fresh clock each launch: the head (which follows the previous launch) and the node's
  // dependencies; the node's own entry keeps its last key.
  Clock c;
  bool changed = false;
  Clock& host = HostClock();
  JoinInto(&host, released_, ~std::size_t{0}, &changed);
  JoinInto(&c, host, ~std::size_t{0}, &changed);
  JoinStreamAt(&c, s.id, head, &changed);
  for (std::uint64_t d : deps) {
    if (const Agent* dep = NodeAgent(exec, d)) JoinInto(&c, dep->clock, ~std::size_t{0}, &changed);
  }
  if (c.size() <= a.index) c.resize(a.index + 1, 0);
  c[a.index] = std::max(c[a.index], a.last_key);
  a.clock = std::move(c);
}

void RaceDetector::OnGraphJoin(const Stream& s, std::uint64_t exec,
                               const std::vector<std::uint64_t>& nodes, std::uint64_t key) {
  Agent& a = StreamAgent(s);
  bool changed = false;
  for (std::uint64_t n : nodes) {
    if (const Agent* node = NodeAgent(exec, n)) JoinInto(&a.clock, node->clock, a.index, &changed);
  }
  if (a.clock.size() <= a.index) a.clock.resize(a.index + 1, 0);
  if (key > a.clock[a.index]) a.clock[a.index] = key;
  a.last_key = std::max(a.last_key, key);
  if (!a.history.empty() && a.history.back().key_from > key) key = a.history.back().key_from;
  a.history.push_back({key, std::make_shared<const Clock>(a.clock)});
}

void RaceDetector::OnEnqueue(DriverState* st, const Stream& s, const Op& op) {
  if (op.graph_exec != 0) {
    if (Agent* node = NodeAgent(op.graph_exec, op.graph_node)) {
      bool changed = false;
      for (const auto& [sid, dseq] : op.deps) JoinStreamAt(&node->clock, sid, dseq, &changed);
      if (op.after_stream != 0) JoinStreamAt(&node->clock, op.after_stream, op.after_seq, &changed);
      node->clock[node->index] = op.seq;
      node->last_key = op.seq;
      if (op.kind == OpKind::kHostFunction) host_nodes_[op.seq] = node->index;
      if (op.accesses.empty()) return;
      const SiteId site = CaptureSite();
      for (const RaceAccess& access : op.accesses) {
        CheckAccess(st, s, *node, op.seq, op.what, site, access);
      }
      return;
    }
  }
  Agent& b = Position(st, s, op.seq, &op);
  if (op.accesses.empty()) return;
  const SiteId site = CaptureSite();
  for (const RaceAccess& access : op.accesses) CheckAccess(st, s, b, op.seq, op.what, site, access);
}

void RaceDetector::OnAllocAsync(DriverState* st, const Stream& s, std::uint64_t alloc_id,
                                std::uintptr_t base, std::size_t size, std::uint64_t key,
                                const char* what) {
  Agent& agent = Position(st, s, key, nullptr);
  std::unique_ptr<Shadow> sh = NewShadow();
  sh->alloc_id = alloc_id;
  sh->base = base;
  sh->size = size;
  sh->stream_ordered = true;
  sh->alloc_agent = agent.index;
  sh->alloc_key = key;
  sh->alloc_site = CaptureSite();
  sh->alloc_what = what;
  shadows_[alloc_id] = std::move(sh);
}

void RaceDetector::OnFreeAsync(DriverState* st, const Stream& s, const Allocation& a,
                               std::uint64_t key, const char* what) {
  Agent& f = Position(st, s, key, nullptr);
  const SiteId site = CaptureSite();
  // Pool memory's shadow was made at its allocation: found by id, without a memory-map walk.
  Shadow* sh = nullptr;
  if (auto it = shadows_.find(a.id); it != shadows_.end()) {
    sh = it->second.get();
  } else {
    std::uintptr_t base = 0;
    sh = ShadowFor(st, a.base, &base);
  }
  if (sh == nullptr) return;
  auto free_desc = [&] { return std::string(what) + " on " + f.label; };
  for (const Record& r : sh->records) {
    if (r.agent < f.clock.size() && f.clock[r.agent] >= r.key) continue;
    std::ostringstream os;
    os << free_desc() << " frees allocation " << sh->alloc_id << " (" << Origin(*sh) << ", "
       << sh->size << " bytes at " << Hex(sh->base) << ") at " << DescribeSite(site)
       << ", with no happens-before from " << r.what << " on " << agents_[r.agent]->label
       << " that " << (r.write ? "writes" : "reads") << " [" << Hex(r.lo) << ", " << Hex(r.hi)
       << ") at " << DescribeSite(r.site);
    Report(true, os.str(), r.site, site);
  }
  if (a.type == MemoryType::kPool) {
    DropShadow(a.id);  // its addresses leave the memory map now
    return;
  }
  sh->freed = true;
  sh->free_desc = free_desc();
  sh->free_site = site;
  sh->records.clear();
}

const std::string& RaceDetector::Origin(Shadow& sh) {
  if (sh.origin.empty() && sh.stream_ordered) {
    sh.origin = std::string(sh.alloc_what) + " on " + agents_[sh.alloc_agent]->label + " at " +
                DescribeSite(sh.alloc_site);
  }
  return sh.origin;
}

void RaceDetector::OnRelease(std::uint64_t alloc_id) { DropShadow(alloc_id); }

std::unique_ptr<RaceDetector::Shadow> RaceDetector::NewShadow() {
  if (spare_shadows_.empty()) return std::make_unique<Shadow>();
  std::unique_ptr<Shadow> sh = std::move(spare_shadows_.back());
  spare_shadows_.pop_back();
  return sh;
}

void RaceDetector::DropShadow(std::uint64_t alloc_id) {
  auto it = shadows_.find(alloc_id);
  if (it == shadows_.end()) return;
  std::unique_ptr<Shadow> sh = std::move(it->second);
  shadows_.erase(it);
  // Recycled (pool allocations come and go per operation), its strings' and records' capacity
  // kept; a bounded number of spares.
  if (spare_shadows_.size() < 64) {
    sh->origin.clear();
    sh->stream_ordered = false;
    sh->alloc_agent = 0;
    sh->alloc_key = 0;
    sh->alloc_site = 0;
    sh->alloc_what = "";
    sh->freed = false;
    sh->free_desc.clear();
    sh->free_site = 0;
    sh->records.clear();
    spare_shadows_.push_back(std::move(sh));
  }
}

// --- host synchronization ---

void RaceDetector::OnHostWaited(std::uint64_t stream_id, std::uint64_t key) {
  bool changed = false;
  JoinStreamAt(&HostClock(), stream_id, key, &changed);
  // What one host thread saw, any other may learn through the program's own locks, which the
  // detector cannot see (header: host threads share their observations).
  JoinStreamAt(&released_, stream_id, key, &changed);
}

void RaceDetector::OnContextSynchronized(DriverState* st, std::uint64_t ctx_id) {
  (void)st;
  Clock& host = HostClock();
  bool changed = false;
  for (const auto& a : agents_) {
    if (ctx_id == 0 || a->ctx_id == ctx_id) {
      JoinInto(&host, a->clock, ~std::size_t{0}, &changed);
      JoinInto(&released_, a->clock, ~std::size_t{0}, &changed);
    }
  }
}

void RaceDetector::OnHostFunctionStart(std::uint64_t stream_id, std::uint64_t key) {
  bool changed = false;
  if (auto it = host_nodes_.find(key); it != host_nodes_.end()) {  // a graph's host node
    const Clock& node = agents_[it->second]->clock;
    JoinInto(&HostClock(), node, ~std::size_t{0}, &changed);
    JoinInto(&released_, node, ~std::size_t{0}, &changed);
    host_nodes_.erase(it);
    return;
  }
  JoinStreamAt(&HostClock(), stream_id, key, &changed);
  // Released at once, not when it returns: a host function that wakes another thread (a
  // semaphore signal) lets that thread enqueue work before the function has returned, and that
  // work is ordered after the function's stream position (header: host functions).
  JoinStreamAt(&released_, stream_id, key, &changed);
}

void RaceDetector::OnHostFunctionDone(std::uint64_t stream_id, std::uint64_t key) {
  bool changed = false;
  JoinStreamAt(&released_, stream_id, key, &changed);
}

// --- accesses ---

RaceDetector::Shadow* RaceDetector::ShadowFor(DriverState* st, std::uintptr_t addr,
                                              std::uintptr_t* base_out)
    CUHAL_NO_THREAD_SAFETY_ANALYSIS {
  Allocation* a = st->FindAllocation(addr, 1);
  if (a == nullptr) return nullptr;
  *base_out = a->base;
  auto& slot = shadows_[a->id];
  if (slot == nullptr) {
    slot = std::make_unique<Shadow>();
    slot->alloc_id = a->id;
    slot->base = a->base;
    slot->size = a->size;
    slot->origin = a->created_by.empty() ? std::string("module variable") : a->created_by;
  }
  return slot.get();
}

void RaceDetector::CheckAccess(DriverState* st, const Stream& s, const Agent& b, std::uint64_t key,
                               const char* what, SiteId site, const RaceAccess& access) {
  (void)s;
  if (access.size == 0) return;
  std::uintptr_t base = 0;
  Shadow* sh = ShadowFor(st, access.addr, &base);
  if (sh == nullptr) return;
  const std::uintptr_t lo = access.addr;
  const std::uintptr_t hi = std::min(access.addr + access.size, sh->base + sh->size);
  const Clock& vc = b.clock;
  auto hb = [&vc](std::size_t agent, std::uint64_t k) { return agent < vc.size() && vc[agent] >= k; };
  auto describe_b = [&] {
    std::ostringstream os;
    os << what << " on " << b.label << " " << (access.write ? "writes" : "reads") << " ["
       << Hex(lo) << ", " << Hex(hi) << ") of allocation " << sh->alloc_id << " (" << Origin(*sh)
       << ", " << sh->size << " bytes at " << Hex(sh->base) << ") at " << DescribeSite(site);
    return os.str();
  };
  if (sh->freed) {
    Report(true, describe_b() + ", after " + sh->free_desc + " freed it at " +
                     DescribeSite(sh->free_site),
           sh->free_site, site);
    return;
  }
  if (sh->stream_ordered && !hb(sh->alloc_agent, sh->alloc_key)) {
    Report(false,
           describe_b() + ", with no happens-before from its allocation (" + sh->alloc_what +
               " on " + agents_[sh->alloc_agent]->label + ")",
           sh->alloc_site, site);
  }
  for (const Record& r : sh->records) {
    if (r.hi <= lo || hi <= r.lo) continue;
    if (!r.write && !access.write) continue;
    if (hb(r.agent, r.key)) continue;
    std::ostringstream os;
    os << describe_b() << ", and " << r.what << " on " << agents_[r.agent]->label << " "
       << (r.write ? "writes" : "reads") << " [" << Hex(std::max(r.lo, lo)) << ", "
       << Hex(std::min(r.hi, hi)) << ") of it at " << DescribeSite(r.site)
       << ", with no happens-before between them";
    Report(false, os.str(), r.site, site);
  }
  // Forget what the new access supersedes: records ordered before it, inside its range, that it
  // covers (a write covers both kinds, a read covers reads).
  std::erase_if(sh->records, [&](const Record& r) {
    return hb(r.agent, r.key) && lo <= r.lo && r.hi <= hi && (access.write || !r.write);
  });
  if (sh->records.size() >= kMaxRecords) sh->records.erase(sh->records.begin());
  sh->records.push_back(Record{lo, hi, access.write, b.index, key, what, site});
}

// --- findings ---

void RaceDetector::Report(bool use_after_free, const std::string& text, SiteId a, SiteId b) {
  if (mode_ == RaceCheck::kFail) race::t_verdict = CUDA_ERROR_ILLEGAL_STATE;
  const SiteId lo = std::min(a, b), hi = std::max(a, b);
  // One report per pair of call sites and kind.
  const SiteId tag = use_after_free ? 0x80000000u : 0u;
  if (!reported_.emplace(lo | tag, hi).second) return;
  std::string line = std::string(use_after_free ? "use-after-free: " : "race: ") + text;
  std::fprintf(stderr, "fakecuda: %s\n", line.c_str());
  findings_.push_back(std::move(line));
}

SiteId RaceDetector::CaptureSite() {
  // A call site is the instruction that called the entry point (NoteRaceCaller): its frames are
  // unwound once, at its first call, and reused (backtrace(3) costs microseconds, the rest of
  // an operation's check a few hundred nanoseconds). Without a caller (stream work enqueued by
  // fakenccl), every capture unwinds.
  void* const caller = t_caller;
  if (caller == nullptr) return UnwindSite();
  // A direct-mapped cache in front of the map (a program's hot loop has a few call sites).
  CallerSlot& slot =
      caller_cache_[(reinterpret_cast<std::uintptr_t>(caller) >> 2) % caller_cache_.size()];
  if (slot.caller == caller) return slot.id;
  SiteId id = 0;
  if (auto it = caller_sites_.find(caller); it != caller_sites_.end()) {
    id = it->second;
  } else {
    id = UnwindSite();
    caller_sites_.emplace(caller, id);
  }
  slot = {caller, id};
  return id;
}

SiteId RaceDetector::UnwindSite() {
  void* frames[kMaxFrames];
  int n = backtrace(frames, kMaxFrames);
  // Start at the user's call of the entry point when it is on the stack (NoteRaceCaller).
  for (int i = 0; i < n; ++i) {
    if (frames[i] == t_caller) {
      std::memmove(frames, frames + i, sizeof(void*) * static_cast<std::size_t>(n - i));
      n -= i;
      break;
    }
  }
  std::size_t h = 1469598103934665603ull;
  for (int i = 0; i < n; ++i) h = (h ^ reinterpret_cast<std::uintptr_t>(frames[i])) * 1099511628211ull;
  auto& ids = site_index_[h];
  for (SiteId id : ids) {
    const auto& f = sites_[id];
    if (f.size() == static_cast<std::size_t>(n) && std::equal(f.begin(), f.end(), frames)) return id;
  }
  const auto id = static_cast<SiteId>(sites_.size());
  sites_.emplace_back(frames, frames + n);
  ids.push_back(id);
  return id;
}

std::string RaceDetector::DescribeSite(SiteId site) {
  if (site >= sites_.size()) return "?";
  std::ostringstream os;
  int shown = 0;
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&TakeRaceVerdict), &self);
  for (void* frame : sites_[site]) {
    Dl_info info{};
    // A return address points after the call: look up the byte before it.
    void* pc = static_cast<char*>(frame) - 1;
    std::string name;
    if (dladdr(pc, &info) != 0 && info.dli_sname != nullptr) {
      int status = 0;
      char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
      name = status == 0 && demangled != nullptr ? demangled : info.dli_sname;
      std::free(demangled);
    }
    // Skip the fake's own frames: fakecuda:: functions, the cu* entry points, and anything in
    // the drop-in library itself (where the fake is a shared object of its own), and the
    // sanitizers' interceptors.
    const bool in_fake_library = info.dli_fname != nullptr && self.dli_fname != nullptr &&
                                 std::strcmp(info.dli_fname, self.dli_fname) == 0 &&
                                 std::strstr(self.dli_fname, "libcuda") != nullptr;
    if (name.rfind("fakecuda::", 0) == 0 || name.rfind("std::", 0) == 0 ||
        (name.size() > 2 && name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z') ||
        in_fake_library ||
        (info.dli_fname != nullptr && std::strstr(info.dli_fname, "san.so") != nullptr)) {
      continue;
    }
    if (shown > 0) os << " < ";
    if (!name.empty()) {
      const std::size_t paren = name.find('(');
      os << (paren == std::string::npos ? name : name.substr(0, paren));
    } else if (info.dli_fname != nullptr) {
      const char* file = std::strrchr(info.dli_fname, '/');
      os << (file ? file + 1 : info.dli_fname) << "+"
         << Hex(reinterpret_cast<std::uintptr_t>(pc) - reinterpret_cast<std::uintptr_t>(info.dli_fbase));
    } else {
      os << Hex(reinterpret_cast<std::uintptr_t>(pc));
    }
    if (++shown == kShownFrames) break;
  }
  return shown == 0 ? "?" : os.str();
}

bool RaceCheckFromEnvironment(RaceCheck* mode, std::string* error) {
  cuhal::StatusOr<RaceCheck> value = cuhal::env::ReadChoice<RaceCheck>(
      "FAKECUDA_RACECHECK", RaceCheck::kOff,
      {{"off", RaceCheck::kOff}, {"report", RaceCheck::kReport}, {"fail", RaceCheck::kFail}},
      cuhal::env::ProcessEnvironment);
  if (!value.ok()) {
    *error = value.status().message();
    return false;
  }
  *mode = *value;
  return true;
}

}  // namespace fakecuda
