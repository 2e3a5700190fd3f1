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
    case Op::kMemPoolDestroy:
      // Not while memory from the pool is live: freeing it after the pool is gone makes the
      // real driver crash later (see ExcludedCalls).
      if (!live(call.a, Kind::kPool, false)) return unsafe;
      for (int id : Live(Kind::kPoolPtr)) {
        if (Find(id)->owner == call.a) return unsafe;
      }
      return "";
    case Op::kMemPoolSetAttribute: case Op::kMemPoolGetAttribute: case Op::kMemPoolTrimTo:
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
    case Op::kStreamCreate: case Op::kStreamCreateWithPriority:
      // The driver allocates device memory for a stream, and the module's globals for a module:
      // both can take a freed allocation's address (ExcludedCalls, "freed device memory").
      create(Kind::kStream);
      ++epoch_;
      break;
    case Op::kEventCreate: create(Kind::kEvent)->bad_flags = (call.x & 2) != 0; break;
    case Op::kMemAlloc: create(Kind::kDevicePtr, call.x); ++epoch_; break;
    case Op::kMemHostAlloc: create(Kind::kHostPtr, call.x); ++epoch_; break;
    case Op::kMemAllocFromPoolAsync: {
      // Stream-ordered: other streams may use it only once the allocation is known complete.
      Handle* p = create(Kind::kPoolPtr, call.x);
      p->pending = true;
      p->owner = call.a;
      ++epoch_;
      break;
    }
    case Op::kMemPoolCreate: create(Kind::kPool); break;
    case Op::kModuleLoadData: create(Kind::kModule); ++epoch_; break;
    case Op::kModuleGetFunction: {
      Handle* f = create(Kind::kFunction, call.x);
      f->owner = call.a;
      break;
    }
    case Op::kGraphCreate: create(Kind::kGraph); break;
    case Op::kGraphAddEmptyNode: create(Kind::kNode)->owner = call.a; break;
    case Op::kGraphAddMemsetNode: {
      Handle* node = create(Kind::kNode);
      node->owner = call.a;
      node->targets.push_back(call.b);  // what it writes (the generator orders later writers)
      if (Handle* g = Mutable(call.a)) g->targets.push_back(call.b);
      break;
    }
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
      {"freed device memory named after any later allocation, stream creation or module load",
       "the address may belong to the new allocation (on the real driver, not on the fake): "
       "stale pointers are only used while no allocation happened since the free. The driver "
       "allocates device memory for a stream and for a module's globals too: in the H100 runs "
       "every stale pointer that the driver accepted (14 of 600 uses) had a stream created or a "
       "module loaded since the free, none of the 396 uses with neither"},
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
      {"cuMemPoolDestroy of a pool whose allocations are not all freed",
       "the driver allows it (the pool goes once its memory is freed), but cuMemFreeAsync of "
       "such memory after the destroy leaves the driver corrupted: 4 of the 288 sequences of "
       "the second to fourth H100 runs that did it crashed (SIGSEGV) in a later cuMemPoolDestroy "
       "or cuCtxSynchronize, and none of the 2,551 that did not; with the primary context held "
       "across sequences, all 222 crashes and hangs came after one in the same process"},
      {"cuMemcpyDtoH of memory with asynchronous work pending on it",
       "the result would depend on timing; the generator synchronizes the context first"},
  };
  return kExcluded;
}

}  // namespace cuhal::fuzz
