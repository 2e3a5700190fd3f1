// Copyright 2026 The cuhal Authors.
#include "fuzz/sequence.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <utility>

namespace cuhal::fuzz {
namespace {

constexpr std::array<std::string_view, 64> kOpNames = {
#define CUHAL_FUZZ_OP_NAME(name) #name,
    CUHAL_FUZZ_OPS(CUHAL_FUZZ_OP_NAME)
#undef CUHAL_FUZZ_OP_NAME
};
constexpr int kOpCount = 0
#define CUHAL_FUZZ_OP_COUNT(name) +1
    CUHAL_FUZZ_OPS(CUHAL_FUZZ_OP_COUNT)
#undef CUHAL_FUZZ_OP_COUNT
    ;
static_assert(kOpCount <= static_cast<int>(kOpNames.size()), "grow kOpNames");

bool IsRef(int id) { return id >= 0; }

// SplitMix64: a fixed PRNG, so that sequences are the same with every standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); 0 when n is 0.
  std::uint64_t Below(std::uint64_t n) { return n == 0 ? 0 : Next() % n; }
  bool Chance(int percent) { return Below(100) < static_cast<std::uint64_t>(percent); }
  template <typename T>
  T Pick(const std::vector<T>& v) { return v[Below(v.size())]; }

 private:
  std::uint64_t state_;
};

}  // namespace

std::string_view OpName(Op op) { return kOpNames[static_cast<int>(op)]; }

std::optional<Op> OpFromName(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i) {
    if (kOpNames[i] == name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

std::string FormatCall(const Call& call) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%d %s a=%d b=%d c=%d x=%llu y=%llu z=%llu", call.id,
                std::string(OpName(call.op)).c_str(), call.a, call.b, call.c,
                static_cast<unsigned long long>(call.x), static_cast<unsigned long long>(call.y),
                static_cast<unsigned long long>(call.z));
  return buf;
}

std::string FormatSequence(const Sequence& sequence) {
  std::string out;
  for (const Call& call : sequence) out += FormatCall(call) + "\n";
  return out;
}

namespace {

// Parses "key=value" into *value; false when the key or the number is wrong.
template <typename T>
bool ParseField(std::string_view token, std::string_view key, T* value) {
  if (token.size() <= key.size() + 1 || token.substr(0, key.size()) != key ||
      token[key.size()] != '=') {
    return false;
  }
  std::string_view digits = token.substr(key.size() + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

bool ParseSequence(std::string_view text, Sequence* out, std::string* error) {
  out->clear();
  int line_number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> tokens;
    while (!line.empty()) {
      size_t sp = line.find(' ');
      if (sp != 0) tokens.push_back(line.substr(0, sp));
      line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    }
    Call call;
    std::optional<Op> op = tokens.size() == 8 ? OpFromName(tokens[1]) : std::nullopt;
    bool ok = op.has_value();
    if (ok) {
      call.op = *op;
      auto [end, ec] = std::from_chars(tokens[0].data(), tokens[0].data() + tokens[0].size(),
                                       call.id);
      ok = ec == std::errc() && end == tokens[0].data() + tokens[0].size() &&
           ParseField(tokens[2], "a", &call.a) && ParseField(tokens[3], "b", &call.b) &&
           ParseField(tokens[4], "c", &call.c) && ParseField(tokens[5], "x", &call.x) &&
           ParseField(tokens[6], "y", &call.y) && ParseField(tokens[7], "z", &call.z);
    }
    if (!ok) {
      if (error != nullptr) *error = "line " + std::to_string(line_number) + ": malformed call";
      return false;
    }
    out->push_back(call);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Model

const Handle* Model::Find(int id) const {
  auto it = handles_.find(id);
  return it == handles_.end() ? nullptr : &it->second;
}

Handle* Model::Mutable(int id) {
  auto it = handles_.find(id);
  return it == handles_.end() ? nullptr : &it->second;
}

const Handle* Model::LiveOf(int id, Kind kind) const {
  const Handle* h = Find(id);
  return h != nullptr && h->live && h->kind == kind ? h : nullptr;
}

std::vector<int> Model::Live(Kind kind) const {
  std::vector<int> out;
  for (const auto& [id, h] : handles_) {
    if (h.live && h.kind == kind) out.push_back(id);
  }
  return out;
}

std::vector<int> Model::Stale() const {
  std::vector<int> out;
  for (const auto& [id, h] : handles_) {
    if (!h.live && (h.kind == Kind::kDevicePtr || h.kind == Kind::kPoolPtr) &&
        h.freed_at_epoch == epoch_) {
      out.push_back(id);
    }
  }
  return out;
}

void Model::MarkPending(int id) {
  if (Handle* h = Mutable(id)) h->pending = true;
}

namespace {

bool IsMemory(const Handle* h) {
  return h != nullptr && (h->kind == Kind::kDevicePtr || h->kind == Kind::kPoolPtr);
}

}  // namespace

std::string Model::Check(const Call& call) const {
  for (int id : {call.a, call.b, call.c}) {
    if (IsRef(id) && Find(id) == nullptr) {
      // (Appended, not "h" + ...: GCC 12's -Wrestrict misfires on literal + string at -O3.)
      std::string why = "h";
      why += std::to_string(id);
      why += " was not created";
      return why;
    }
  }
  // A live handle of `kind` named by `id`, or (when null_ok) the null handle.
  auto live = [&](int id, Kind kind, bool null_ok) {
    if (id == kNullId) return null_ok;
    return IsRef(id) && LiveOf(id, kind) != nullptr;
  };
  auto stream = [&](int id) { return live(id, Kind::kStream, /*null_ok=*/true); };
  // Live device memory (either kind) with [offset, offset + bytes) inside it.
  auto mem = [&](int id, std::uint64_t offset, std::uint64_t bytes) -> const Handle* {
    const Handle* h = Find(id);
    if (!IsMemory(h) || !h->live || offset > h->size || bytes > h->size - offset) return nullptr;
    return h;
  };
  auto stale_ok = [&](int id) {
    const Handle* h = Find(id);
    return h != nullptr && !h->live && h->kind == Kind::kDevicePtr && h->freed_at_epoch == epoch_;
  };
  auto quiet = [](const Handle* h) { return h != nullptr && !h->pending; };
  const char* unsafe = "unsafe in this model state";
  switch (call.op) {
    case Op::kCtxSynchronize: case Op::kCtxGetCurrent: case Op::kCtxGetDevice:
    case Op::kCtxGetFlags: case Op::kCtxGetStreamPriorityRange: case Op::kCtxGetLimit:
    case Op::kPrimaryRetain: case Op::kPrimaryGetState: case Op::kCtxCreate:
    case Op::kStreamCreate: case Op::kStreamCreateWithPriority: case Op::kEventCreate:
    case Op::kMemAlloc: case Op::kMemGetInfo: case Op::kMemHostAlloc: case Op::kMemPoolCreate:
    case Op::kModuleLoadData: case Op::kGraphCreate:
      return "";
    case Op::kCtxGetApiVersion:
      return live(call.a, Kind::kContext, true) ? "" : unsafe;
    case Op::kPrimaryRelease:
      return call.x != 0 || extra_primary_retains_ > 0 ? "" : unsafe;
    case Op::kCtxDestroy:
      return live(call.a, Kind::kContext, false) ? "" : unsafe;
    case Op::kStreamDestroy:
      return live(call.a, Kind::kStream, false) ? "" : unsafe;
    case Op::kStreamQuery: case Op::kStreamSynchronize: case Op::kStreamGetFlags:
    case Op::kStreamGetPriority:
      return stream(call.a) ? "" : unsafe;
    case Op::kStreamWaitEvent:
      return stream(call.a) && live(call.b, Kind::kEvent, false) ? "" : unsafe;
    case Op::kEventDestroy: case Op::kEventQuery: case Op::kEventSynchronize:
      return live(call.a, Kind::kEvent, false) ? "" : unsafe;
    case Op::kEventRecord:
      return live(call.a, Kind::kEvent, false) && stream(call.b) ? "" : unsafe;
    case Op::kEventElapsedTime:
      return live(call.a, Kind::kEvent, false) && live(call.b, Kind::kEvent, false) ? "" : unsafe;
    case Op::kMemFree:
      if (call.a == kNullId || stale_ok(call.a)) return "";
      return live(call.a, Kind::kDevicePtr, false) ? "" : unsafe;
    case Op::kMemsetD8: {
      // Out-of-range sizes are allowed: the driver checks them against the allocation. They
      // end at most 64 bytes past the end of an allocation of at most 1 MiB, inside the driver's
      // 2 MiB granule, so even a driver that did not check could not fault.
      if (stale_ok(call.a)) return "";
      const Handle* h = Find(call.a);
      if (h == nullptr || !h->live || !IsMemory(h) || h->pending) return unsafe;
      // Past the end only of cuMemAlloc memory: a pool's chunk has room after an allocation.
      return mem(call.a, call.x, call.y) != nullptr || h->kind == Kind::kDevicePtr ? "" : unsafe;
    }
    case Op::kMemsetD32:
      return quiet(mem(call.a, call.x, call.y * 4)) && call.x % 4 == 0 ? "" : unsafe;
    case Op::kMemsetD8Async:
      return quiet(mem(call.a, call.x, call.y)) && stream(call.b) ? "" : unsafe;
    case Op::kMemcpyHtoD:
      return quiet(mem(call.a, call.x, call.y)) ? "" : unsafe;
    case Op::kMemcpyDtoH: {
      const Handle* h = Find(call.a);
      if (h == nullptr || !h->live || !IsMemory(h) || h->pending) return unsafe;
      // In range: only memory that was all written (its contents do not depend on the driver).
      if (mem(call.a, call.x, call.y) != nullptr) return h->initialized ? "" : unsafe;
      return h->kind == Kind::kDevicePtr ? "" : unsafe;  // out of range: the driver refuses it
    }
    case Op::kMemcpyDtoD: case Op::kMemcpyDtoDAsync: {
      const Handle* dst = quiet(mem(call.a, 0, call.x)) ? Find(call.a) : nullptr;
      const Handle* src = quiet(mem(call.b, 0, call.x)) ? Find(call.b) : nullptr;
      if (dst == nullptr || src == nullptr || !src->initialized || call.a == call.b) return unsafe;
      return call.op == Op::kMemcpyDtoD || stream(call.c) ? "" : unsafe;
    }
    case Op::kPointerGetAttribute: case Op::kMemGetAddressRange: {
      const Handle* h = Find(call.a);
      if (h == nullptr) return unsafe;
      if (h->kind == Kind::kHostPtr) return h->live && call.y < h->size ? "" : unsafe;
      if (!IsMemory(h)) return unsafe;
      if (!h->live) return h->freed_at_epoch == epoch_ ? "" : unsafe;
      return call.y < h->size ? "" : unsafe;
    }
    case Op::kMemFreeHost: {
      const Handle* h = LiveOf(call.a, Kind::kHostPtr);
      return h != nullptr && !h->pending ? "" : unsafe;
    }
    case Op::kMemHostGetFlags:
      return live(call.a, Kind::kHostPtr, false) ? "" : unsafe;
    case Op::kMemcpyHtoDAsync: {
      const Handle* host = LiveOf(call.b, Kind::kHostPtr);
      return quiet(mem(call.a, 0, call.x)) && host != nullptr && call.x <= host->size &&
                     stream(call.c)
                 ? ""
                 : unsafe;
    }
    case Op::kMemPoolDestroy: case Op::kMemPoolSetAttribute: case Op::kMemPoolGetAttribute:
    case Op::kMemPoolTrimTo:
      return live(call.a, Kind::kPool, false) ? "" : unsafe;
    case Op::kMemAllocFromPoolAsync:
      return live(call.a, Kind::kPool, false) && stream(call.b) ? "" : unsafe;
    case Op::kMemFreeAsync:
      // Not while work may be pending on it: that work may be on another stream, and the free
      // does not wait for it (the memory could be reused under a running kernel).
      return quiet(LiveOf(call.a, Kind::kPoolPtr)) && stream(call.b) ? "" : unsafe;
    case Op::kModuleUnload:
      return live(call.a, Kind::kModule, true) ? "" : unsafe;
    case Op::kModuleGetFunction:
      return live(call.a, Kind::kModule, false) ? "" : unsafe;
    case Op::kFuncGetAttribute: {
      const Handle* f = LiveOf(call.a, Kind::kFunction);
      return f != nullptr && LiveOf(f->owner, Kind::kModule) != nullptr ? "" : unsafe;
    }
    case Op::kLaunchKernel: {
      const Handle* f = LiveOf(call.a, Kind::kFunction);
      const Handle* m = mem(call.b, 0, call.x * 4);
      // Only add_one (size 0 marks it), over written memory with nothing pending.
      if (f == nullptr || f->size != 0 || LiveOf(f->owner, Kind::kModule) == nullptr) return unsafe;
      return quiet(m) && m->initialized && stream(call.c) ? "" : unsafe;
    }
    case Op::kGraphDestroy: case Op::kGraphInstantiate: {
      if (call.a == kNullId) return "";
      const Handle* g = LiveOf(call.a, Kind::kGraph);
      if (g == nullptr) return unsafe;
      for (int t : g->targets) {
        if (Find(t) == nullptr || !Find(t)->live) return unsafe;
      }
      return "";
    }
    case Op::kGraphAddEmptyNode: case Op::kGraphAddMemsetNode: {
      if (!live(call.a, Kind::kGraph, false)) return unsafe;
      int dep = call.op == Op::kGraphAddEmptyNode ? call.b : call.c;
      if (dep != kNoId) {
        const Handle* d = LiveOf(dep, Kind::kNode);
        if (d == nullptr || d->owner != call.a) return unsafe;
      }
      if (call.op == Op::kGraphAddMemsetNode) {
        return quiet(mem(call.b, 0, call.x)) && call.x > 0 ? "" : unsafe;
      }
      return "";
    }
    case Op::kGraphLaunch: {
      if (call.a == kNullId) return stream(call.b) ? "" : unsafe;
      const Handle* e = LiveOf(call.a, Kind::kGraphExec);
      if (e == nullptr || !stream(call.b)) return unsafe;
      for (int t : e->targets) {
        if (!quiet(Find(t)) || !Find(t)->live) return unsafe;
      }
      return "";
    }
    case Op::kGraphExecDestroy:
      return live(call.a, Kind::kGraphExec, true) ? "" : unsafe;
  }
  return unsafe;
}

void Model::Apply(const Call& call, bool ok) {
  auto create = [&](Kind kind, std::uint64_t size = 0) {
    Handle h;
    h.kind = kind;
    h.size = size;
    handles_[call.id] = h;
    return &handles_[call.id];
  };
  auto kill = [&](int id) {
    if (Handle* h = Mutable(id)) {
      h->live = false;
      h->freed_at_epoch = epoch_;
    }
  };
  auto written = [&](int id, std::uint64_t offset, std::uint64_t bytes) {
    if (Handle* h = Mutable(id)) {
      if (offset == 0 && bytes >= h->size) h->initialized = true;
      h->pending = true;
    }
  };
  if (!ok) return;  // failed calls change nothing the model tracks
  if (call.z == 1 && (call.op == Op::kMemAlloc || call.op == Op::kStreamCreate ||
                      call.op == Op::kEventCreate || call.op == Op::kGraphCreate ||
                      call.op == Op::kModuleLoadData || call.op == Op::kModuleGetFunction)) {
    return;  // a null out-pointer: nothing was handed out
  }
  switch (call.op) {
    case Op::kCtxSynchronize:
      for (auto& [id, h] : handles_) h.pending = false;
      break;
    case Op::kPrimaryRetain:
      if (call.x == 0) ++extra_primary_retains_;
      break;
    case Op::kPrimaryRelease:
      if (call.x == 0) --extra_primary_retains_;
      break;
    case Op::kCtxCreate: create(Kind::kContext); break;
    case Op::kStreamCreate: case Op::kStreamCreateWithPriority: create(Kind::kStream); break;
    case Op::kEventCreate: create(Kind::kEvent)->bad_flags = (call.x & 2) != 0; break;
    case Op::kMemAlloc: create(Kind::kDevicePtr, call.x); ++epoch_; break;
    case Op::kMemHostAlloc: create(Kind::kHostPtr, call.x); ++epoch_; break;
    case Op::kMemAllocFromPoolAsync:
      // Stream-ordered: other streams may use it only once the allocation is known complete.
      create(Kind::kPoolPtr, call.x)->pending = true;
      ++epoch_;
      break;
    case Op::kMemPoolCreate: create(Kind::kPool); break;
    case Op::kModuleLoadData: create(Kind::kModule); break;
    case Op::kModuleGetFunction: {
      Handle* f = create(Kind::kFunction, call.x);
      f->owner = call.a;
      break;
    }
    case Op::kGraphCreate: create(Kind::kGraph); break;
    case Op::kGraphAddEmptyNode: create(Kind::kNode)->owner = call.a; break;
    case Op::kGraphAddMemsetNode:
      create(Kind::kNode)->owner = call.a;
      if (Handle* g = Mutable(call.a)) g->targets.push_back(call.b);
      break;
    case Op::kGraphInstantiate:
      if (call.z != 1 && call.a != kNullId) create(Kind::kGraphExec)->targets = Find(call.a)->targets;
      break;
    case Op::kCtxDestroy: case Op::kStreamDestroy: case Op::kEventDestroy:
    case Op::kMemFreeHost: case Op::kMemPoolDestroy: case Op::kGraphExecDestroy:
      if (call.a != kNullId) kill(call.a);
      break;
    case Op::kMemFree: case Op::kMemFreeAsync:
      if (IsRef(call.a) && Find(call.a)->live) kill(call.a);
      break;
    case Op::kModuleUnload:
      if (call.a == kNullId) break;
      kill(call.a);
      for (auto& [id, h] : handles_) {
        if (h.kind == Kind::kFunction && h.owner == call.a) h.live = false;
      }
      break;
    case Op::kGraphDestroy:
      if (call.a == kNullId) break;
      kill(call.a);
      for (auto& [id, h] : handles_) {
        if (h.kind == Kind::kNode && h.owner == call.a) h.live = false;
      }
      break;
    case Op::kMemsetD8: case Op::kMemsetD8Async: case Op::kMemcpyHtoD:
      if (IsRef(call.a) && Find(call.a)->live) written(call.a, call.x, call.y);
      break;
    case Op::kMemsetD32: written(call.a, call.x, call.y * 4); break;
    case Op::kMemcpyDtoD: case Op::kMemcpyDtoDAsync:
      written(call.a, 0, call.x);
      MarkPending(call.b);
      break;
    case Op::kMemcpyHtoDAsync:
      written(call.a, 0, call.x);
      MarkPending(call.b);
      break;
    case Op::kLaunchKernel: MarkPending(call.b); break;
    case Op::kGraphLaunch:
      if (const Handle* e = Find(call.a)) {
        for (int t : std::vector<int>(e->targets)) MarkPending(t);
      }
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// Generator

namespace {

// Sizes for allocations: small, odd, a page, and the limits.
std::uint64_t PickSize(Rng& rng) {
  static const std::vector<std::uint64_t> kSizes = {1, 4, 64, 100, 512, 4096, 65536, 1 << 20};
  return rng.Pick(kSizes);
}

// Fills the scalar arguments of a call for `op`, over handles the model has.
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  Sequence Run(int min_calls, int max_calls) {
    int target = min_calls + static_cast<int>(rng_.Below(max_calls - min_calls + 1));
    Sequence out;
    int attempts = 0;
    while (static_cast<int>(out.size()) < target && attempts < target * 50) {
      ++attempts;
      Call call;
      call.id = static_cast<int>(out.size());
      bool expect_ok = Propose(&call);
      if (!model_.Check(call).empty()) continue;
      model_.Apply(call, expect_ok);
      out.push_back(call);
    }
    return out;
  }

 private:
  // A live id of `kind`, or kNoId when there is none.
  int Any(Kind kind) {
    std::vector<int> ids = model_.Live(kind);
    return ids.empty() ? kNoId : rng_.Pick(ids);
  }
  int AnyStream() { return rng_.Chance(25) ? kNullId : Any(Kind::kStream); }
  int AnyMemory() {
    std::vector<int> ids = model_.Live(Kind::kDevicePtr);
    std::vector<int> pool = model_.Live(Kind::kPoolPtr);
    ids.insert(ids.end(), pool.begin(), pool.end());
    return ids.empty() ? kNoId : rng_.Pick(ids);
  }
  std::uint64_t SizeOf(int id) {
    const Handle* h = model_.Find(id);
    return h == nullptr ? 0 : h->size;
  }

  // Reads need memory that was all written and is quiet: when `id` is not, turns *call into the
  // call that gets it there (a whole memset, or a context synchronization) and returns true.
  bool Prepare(int id, Call* call) {
    const Handle* h = model_.Find(id);
    if (h == nullptr || !h->live) return false;
    if (h->pending) {
      *call = Call{Op::kCtxSynchronize, call->id};
      return true;
    }
    if (!h->initialized) {
      *call = Call{Op::kMemsetD8, call->id, id, kNoId, kNoId, 0, h->size, rng_.Below(256)};
      return true;
    }
    return false;
  }

  // Chooses an operation and its arguments; returns whether it is expected to succeed.
  bool Propose(Call* call) {
    int category = static_cast<int>(rng_.Below(100));
    Call& c = *call;
    bool bad = rng_.Chance(12);  // an invalid variant, where the operation has one
    if (category < 8) {  // contexts
      static const std::vector<Op> kOps = {
          Op::kCtxSynchronize, Op::kCtxGetCurrent, Op::kCtxGetDevice, Op::kCtxGetFlags,
          Op::kCtxGetApiVersion, Op::kCtxGetStreamPriorityRange, Op::kCtxGetLimit,
          Op::kPrimaryRetain, Op::kPrimaryRelease, Op::kPrimaryGetState, Op::kCtxCreate,
          Op::kCtxDestroy};
      c.op = rng_.Pick(kOps);
      switch (c.op) {
        case Op::kCtxGetApiVersion: {
          int ctx = Any(Kind::kContext);
          c.a = ctx == kNoId || rng_.Chance(50) ? kNullId : ctx;
          return true;
        }
        case Op::kCtxGetLimit: c.x = rng_.Below(bad ? 8 : 5); return c.x < 5;
        case Op::kPrimaryRetain: case Op::kPrimaryRelease: case Op::kPrimaryGetState:
          c.x = bad ? 7 : 0;
          return !bad;
        case Op::kCtxCreate:
          c.x = bad ? 0x400 : rng_.Pick(std::vector<std::uint64_t>{0, 1, 2, 4});
          return !bad;
        case Op::kCtxDestroy: c.a = Any(Kind::kContext); return true;
        default: return true;
      }
    }
    if (category < 24) {  // streams and events
      static const std::vector<Op> kOps = {
          Op::kStreamCreate, Op::kStreamCreateWithPriority, Op::kStreamDestroy,
          Op::kStreamQuery, Op::kStreamSynchronize, Op::kStreamGetFlags,
          Op::kStreamGetPriority, Op::kStreamWaitEvent, Op::kEventCreate, Op::kEventDestroy,
          Op::kEventRecord, Op::kEventQuery, Op::kEventSynchronize, Op::kEventElapsedTime};
      c.op = rng_.Pick(kOps);
      switch (c.op) {
        case Op::kStreamCreate:
          c.x = bad ? 2 : rng_.Below(2);
          c.z = bad && rng_.Chance(50) ? 1 : 0;
          return !bad;
        case Op::kStreamCreateWithPriority:
          c.x = rng_.Below(2);
          c.y = 16 + rng_.Below(9) - 6;  // priorities -6..2, stored +16; the driver clamps
          return true;
        case Op::kStreamDestroy: c.a = Any(Kind::kStream); return true;
        case Op::kStreamQuery: case Op::kStreamSynchronize: case Op::kStreamGetFlags:
        case Op::kStreamGetPriority:
          c.a = AnyStream();
          return true;
        case Op::kStreamWaitEvent:
          c.a = AnyStream();
          c.b = Any(Kind::kEvent);
          c.x = bad ? 5 : 0;
          return !bad;
        case Op::kEventCreate:
          c.x = bad ? 0x100 : rng_.Pick(std::vector<std::uint64_t>{0, 1, 2, 3});
          c.z = bad && rng_.Chance(50) ? 1 : 0;
          return !bad;
        case Op::kEventRecord: c.a = Any(Kind::kEvent); c.b = AnyStream(); return true;
        case Op::kEventElapsedTime: c.a = Any(Kind::kEvent); c.b = Any(Kind::kEvent); return true;
        default: c.a = Any(Kind::kEvent); return true;
      }
    }
    if (category < 60) {  // device memory
      static const std::vector<Op> kOps = {
          Op::kMemAlloc, Op::kMemAlloc, Op::kMemFree, Op::kMemsetD8, Op::kMemsetD32,
          Op::kMemsetD8Async, Op::kMemcpyHtoD, Op::kMemcpyDtoH, Op::kMemcpyDtoH,
          Op::kMemcpyDtoD, Op::kMemcpyDtoDAsync, Op::kPointerGetAttribute,
          Op::kMemGetAddressRange, Op::kMemGetInfo, Op::kCtxSynchronize};
      c.op = rng_.Pick(kOps);
      int m = AnyMemory();
      std::uint64_t size = SizeOf(m);
      if (c.op == Op::kMemcpyDtoH || c.op == Op::kMemcpyDtoD || c.op == Op::kMemcpyDtoDAsync) {
        if (Prepare(m, call)) return true;
      }
      switch (c.op) {
        case Op::kMemAlloc:
          c.x = bad ? rng_.Pick(std::vector<std::uint64_t>{0, 1ULL << 50}) : PickSize(rng_);
          c.z = bad && rng_.Chance(30) ? 1 : 0;
          return !bad;
        case Op::kMemFree: {
          std::vector<int> stale = model_.Stale();
          if (bad && !stale.empty()) { c.a = rng_.Pick(stale); return false; }
          if (bad) { c.a = kNullId; return true; }
          c.a = Any(Kind::kDevicePtr);
          return true;
        }
        case Op::kMemsetD8: {
          std::vector<int> stale = model_.Stale();
          if (bad && !stale.empty() && rng_.Chance(50)) {
            c.a = rng_.Pick(stale);
            c.y = 1;
            return false;
          }
          c.a = m;
          c.x = 0;
          c.y = bad ? size + 1 + rng_.Below(64) : (rng_.Chance(60) ? size : rng_.Below(size + 1));
          c.z = rng_.Below(256);
          return !bad;
        }
        case Op::kMemsetD32:
          c.a = m;
          c.x = size >= 4 ? 4 * rng_.Below(size / 4) : 0;
          c.y = size >= 4 ? (size - c.x) / 4 : 0;
          c.z = rng_.Next() & 0xffffffffu;
          return true;
        case Op::kMemsetD8Async: case Op::kMemcpyHtoD:
          c.a = m;
          c.b = c.op == Op::kMemsetD8Async ? AnyStream() : kNoId;
          c.x = rng_.Chance(60) ? 0 : rng_.Below(size + 1);
          c.y = size - c.x;
          c.z = rng_.Below(256);
          return true;
        case Op::kMemcpyDtoH:
          c.a = m;
          if (bad) { c.x = 0; c.y = size + 8; return false; }
          c.x = rng_.Chance(60) ? 0 : rng_.Below(size + 1);
          c.y = size - c.x;
          return true;
        case Op::kMemcpyDtoD: case Op::kMemcpyDtoDAsync: {
          c.a = m;
          c.b = AnyMemory();
          c.c = c.op == Op::kMemcpyDtoDAsync ? AnyStream() : kNoId;
          c.x = std::min(size, SizeOf(c.b));
          return true;
        }
        case Op::kPointerGetAttribute: case Op::kMemGetAddressRange: {
          std::vector<int> stale = model_.Stale();
          std::vector<int> host = model_.Live(Kind::kHostPtr);
          if (bad && !stale.empty()) {
            c.a = rng_.Pick(stale);
          } else if (!host.empty() && rng_.Chance(20)) {
            c.a = rng_.Pick(host);
          } else {
            c.a = m;
          }
          c.x = rng_.Below(9);
          std::uint64_t s = SizeOf(c.a);
          c.y = s == 0 ? 0 : rng_.Below(s);
          return !bad;
        }
        default:
          return true;
      }
    }
    if (category < 68) {  // pinned host memory
      static const std::vector<Op> kOps = {Op::kMemHostAlloc, Op::kMemFreeHost,
                                           Op::kMemHostGetFlags, Op::kMemcpyHtoDAsync};
      c.op = rng_.Pick(kOps);
      switch (c.op) {
        case Op::kMemHostAlloc:
          c.x = bad ? 1ULL << 50 : PickSize(rng_);
          c.y = rng_.Pick(std::vector<std::uint64_t>{0, 1, 2, 4, 3});
          if (bad && rng_.Chance(50)) { c.x = 64; c.y = 0x80; }
          return !bad;
        case Op::kMemcpyHtoDAsync:
          c.a = AnyMemory();
          c.b = Any(Kind::kHostPtr);
          c.c = AnyStream();
          c.x = std::min(SizeOf(c.a), SizeOf(c.b));
          return true;
        default:
          c.a = Any(Kind::kHostPtr);
          return true;
      }
    }
    if (category < 80) {  // memory pools
      static const std::vector<Op> kOps = {
          Op::kMemPoolCreate, Op::kMemPoolDestroy, Op::kMemPoolSetAttribute,
          Op::kMemPoolGetAttribute, Op::kMemPoolTrimTo, Op::kMemAllocFromPoolAsync,
          Op::kMemAllocFromPoolAsync, Op::kMemFreeAsync};
      c.op = rng_.Pick(kOps);
      switch (c.op) {
        case Op::kMemPoolCreate:
          c.x = rng_.Chance(30) ? 64ULL << 20 : 0;
          c.y = bad ? 1 + rng_.Below(2) : 0;
          c.z = bad && rng_.Chance(30) ? 1 : 0;
          return !bad;
        case Op::kMemPoolSetAttribute:
          c.a = Any(Kind::kPool);
          c.x = rng_.Below(8);
          c.y = rng_.Pick(std::vector<std::uint64_t>{0, 1, 1 << 20, ~0ULL});
          return true;
        case Op::kMemPoolGetAttribute: c.a = Any(Kind::kPool); c.x = rng_.Below(8); return true;
        case Op::kMemPoolTrimTo:
          c.a = Any(Kind::kPool);
          c.x = rng_.Pick(std::vector<std::uint64_t>{0, 1 << 20, ~0ULL});
          return true;
        case Op::kMemAllocFromPoolAsync:
          c.a = Any(Kind::kPool);
          c.b = AnyStream();
          c.x = bad ? rng_.Pick(std::vector<std::uint64_t>{0, 1ULL << 50, 100ULL << 20})
                    : PickSize(rng_);
          return !bad;
        case Op::kMemFreeAsync: {
          c.a = Any(Kind::kPoolPtr);
          c.b = AnyStream();
          const Handle* h = model_.Find(c.a);
          if (h != nullptr && h->pending) *call = Call{Op::kCtxSynchronize, call->id};
          return true;
        }
        default: c.a = Any(Kind::kPool); return true;
      }
    }
    if (category < 88) {  // modules and kernels
      static const std::vector<Op> kOps = {Op::kModuleLoadData, Op::kModuleUnload,
                                           Op::kModuleGetFunction, Op::kFuncGetAttribute,
                                           Op::kLaunchKernel, Op::kLaunchKernel};
      c.op = rng_.Pick(kOps);
      switch (c.op) {
        case Op::kModuleLoadData:
          c.x = bad ? 1 : 0;
          c.z = bad && rng_.Chance(30) ? 1 : 0;
          return !bad;
        case Op::kModuleUnload:
          c.a = bad ? kNullId : Any(Kind::kModule);
          return !bad;
        case Op::kModuleGetFunction:
          c.a = Any(Kind::kModule);
          c.x = bad ? 2 : rng_.Below(2);
          c.z = bad && rng_.Chance(30) ? 1 : 0;
          return !bad;
        case Op::kFuncGetAttribute:
          c.a = Any(Kind::kFunction);
          c.x = rng_.Below(bad ? 12 : 10);
          return !bad;
        default: {
          c.a = Any(Kind::kFunction);
          if (c.a == kNoId || model_.Find(c.a)->size != 0) {  // no add_one yet: get one
            c.a = Any(Kind::kModule);
            c.op = c.a == kNoId ? Op::kModuleLoadData : Op::kModuleGetFunction;
            return true;
          }
          c.b = AnyMemory();
          if (Prepare(c.b, call)) return true;
          c.c = AnyStream();
          c.x = SizeOf(c.b) / 4;
          c.y = bad ? rng_.Pick(std::vector<std::uint64_t>{0, 2048}) : 32 * (1 + rng_.Below(8));
          c.z = bad ? 1 : 1 + c.x / c.y;
          return !bad;
        }
      }
    }
    // graphs
    static const std::vector<Op> kOps = {
        Op::kGraphCreate, Op::kGraphAddEmptyNode, Op::kGraphAddMemsetNode,
        Op::kGraphAddMemsetNode, Op::kGraphInstantiate, Op::kGraphLaunch, Op::kGraphLaunch,
        Op::kGraphExecDestroy, Op::kGraphDestroy};
    c.op = rng_.Pick(kOps);
    int graph = Any(Kind::kGraph);
    auto dep = [&]() {
      std::vector<int> nodes;
      for (int n : model_.Live(Kind::kNode)) {
        if (model_.Find(n)->owner == graph) nodes.push_back(n);
      }
      return nodes.empty() || rng_.Chance(40) ? kNoId : rng_.Pick(nodes);
    };
    switch (c.op) {
      case Op::kGraphCreate:
        c.x = bad ? 1 : 0;
        c.z = bad && rng_.Chance(30) ? 1 : 0;
        return !bad;
      case Op::kGraphAddEmptyNode: c.a = graph; c.b = dep(); return true;
      case Op::kGraphAddMemsetNode:
        c.a = graph;
        c.b = AnyMemory();
        c.c = dep();
        c.x = SizeOf(c.b);
        c.y = rng_.Below(256);
        return true;
      case Op::kGraphInstantiate:
        c.a = bad && rng_.Chance(50) ? kNullId : graph;
        c.x = bad ? 1ULL << 20 : 0;
        return !bad;
      case Op::kGraphLaunch:
        c.a = bad ? kNullId : Any(Kind::kGraphExec);
        c.b = AnyStream();
        return !bad;
      case Op::kGraphExecDestroy:
        c.a = bad ? kNullId : Any(Kind::kGraphExec);
        return !bad;
      default:
        c.a = bad ? kNullId : graph;
        return !bad;
    }
  }

  Rng rng_;
  Model model_;
};

}  // namespace

Sequence Generate(std::uint64_t seed, int min_calls, int max_calls) {
  if (max_calls < min_calls) max_calls = min_calls;
  return Generator(seed).Run(min_calls, max_calls);
}

const std::vector<ExcludedCall>& ExcludedCalls() {
  static const std::vector<ExcludedCall> kExcluded = {
      {"cuGetErrorName / cuGetErrorString with a null out-pointer",
       "the real driver writes through it (segfault)"},
      {"any call on a destroyed context's handle (cuCtxPopCurrent, cuCtxDestroy twice, stream "
       "calls on its streams)",
       "use after free inside the driver: the H200 aborted with \"free(): invalid pointer\" and "
       "answered differently from run to run (tests/fakecuda/context_test.cc)"},
      {"destroyed stream, event, graph, graph exec, module, function or pool handles",
       "these handles point to freed driver structures; the driver dereferences them"},
      {"freed device memory named after any later allocation",
       "the address may belong to the new allocation (on the real driver, not on the fake): "
       "stale pointers are only used while no allocation happened since the free"},
      {"cuLaunchKernel / graph launches over freed, unwritten or out-of-range memory",
       "an illegal address is a sticky error that poisons the context for the rest of the "
       "sequence, and reads of unwritten memory see whatever the GPU held"},
      {"asynchronous memsets and copies out of range",
       "not every asynchronous path checks the range before the copy engine runs"},
      {"cuMemFreeHost of pinned memory an asynchronous copy may still read",
       "the copy engine would read freed memory"},
      {"cuDevicePrimaryCtxReset, and releasing the primary context below the executor's own "
       "retain",
       "destroys every object of the sequence at once (each later call would be a stale use)"},
      {"cuMemGetInfo's values, cuEventElapsedTime's value, addresses, NUM_REGS-like function "
       "attributes",
       "not the same from run to run or from driver to driver: recorded as code only"},
      {"cuLaunchHostFunc / cuStreamAddCallback",
       "host callbacks run on driver threads at times the sequence does not control"},
      {"cuMemFreeAsync of pool memory with work pending on it",
       "the work may be on another stream, which the free does not wait for: the memory could "
       "be reused under a running kernel (the generator synchronizes the context first)"},
      {"cuMemsetD8 past the end of pool memory",
       "a pool's chunk has room after each allocation, so the write could land in another "
       "allocation (past the end of cuMemAlloc memory is generated: the driver refuses it)"},
      {"cuMemcpyDtoH of memory with asynchronous work pending on it",
       "the result would depend on timing; the generator synchronizes the context first"},
  };
  return kExcluded;
}

}  // namespace cuhal::fuzz
