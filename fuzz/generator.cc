// Copyright 2026 The cuhal Authors.
// The generator: a seed -> a sequence of calls, over the model of live handles (sequence.h).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "fuzz/sequence.h"

namespace cuhal::fuzz {
namespace {

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

// Sizes for allocations: small, odd, a page, and the limits.
std::uint64_t PickSize(Rng& rng) {
  static const std::vector<std::uint64_t> kSizes = {1, 4, 64, 100, 512, 4096, 65536, 1 << 20};
  return rng.Pick(kSizes);
}

// Proposes calls over the handles the model has, keeps those the model allows.
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
      case Op::kGraphAddMemsetNode: {
        c.a = graph;
        c.b = AnyMemory();
        // Two memset nodes of one graph writing the same memory with no path between them race
        // (the fake's race check says so, and the bytes left would differ from run to run): a
        // later writer depends on the latest node of the graph that writes the same memory.
        int last_writer = kNoId;
        for (int n : model_.Live(Kind::kNode)) {
          const Handle* h = model_.Find(n);
          if (h->owner == graph && n > last_writer &&
              std::find(h->targets.begin(), h->targets.end(), c.b) != h->targets.end()) {
            last_writer = n;
          }
        }
        c.c = last_writer != kNoId ? last_writer : dep();
        c.x = SizeOf(c.b);
        c.y = rng_.Below(256);
        return true;
      }
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

}  // namespace cuhal::fuzz
