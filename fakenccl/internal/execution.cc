// Copyright 2026 The cuhal Authors.
// Execution of Slots; see execution.h (and engine.h for the invariants).
#include "fakenccl/internal/execution.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>

#include "fakenccl/internal/engine_state.h"
#include "fakenccl/internal/fakecuda_hooks.h"

namespace fakenccl {
namespace internal {

bool InPlaceNoOpOnOneRank(const CallDesc& c) {
  switch (c.kind) {
    case CallKind::kAllReduce:
    case CallKind::kBroadcast:
    case CallKind::kReduce:
    case CallKind::kAllGather:
    case CallKind::kReduceScatter:
      break;
    default:
      return false;  // AlltoAll, Gather, Scatter: NCCL runs them as send/receive pairs (UNMEASURED)
  }
  if (c.sendbuff != c.recvbuff) return false;
  // NCCL's one-rank path (ncclLaunchOneRank) launches a kernel for PreMulSum, which is also what
  // the average of floating types becomes; every other operation is a copy, skipped in place.
  if (IsReduction(c.kind) && (c.op.kind == ReduceKind::kPreMulSum ||
                              (c.op.kind == ReduceKind::kAvg && IsFloatingType(c.type)))) {
    return false;
  }
  return true;
}

namespace {

// Translates the ranks' device pointers for one execution, recording the first bad one in the
// ExecResult. Owned by one execution on one thread (no locking); no stream ordering of its own.
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

}  // namespace

namespace {

// The host bytes of one collective's buffers, per rank (null where a rank has no such buffer).
struct Buffers {
  std::vector<std::byte*> in;
  std::vector<std::byte*> out;
  std::vector<std::size_t> in_bytes;
  std::vector<std::size_t> out_bytes;
  std::vector<ScalarBytes> scalars;  // PreMulSum scalars, read from the device where they live
};

bool OneRankInPlaceNoOp(const std::vector<CallDesc>& d) {
  return d.size() == 1 && InPlaceNoOpOnOneRank(d[0]);
}

// The piece of an all-reduce reduced and then copied to every output (fits in L2 with its inputs).
constexpr std::size_t kPieceBytes = 64 * 1024;

// A host buffer of at least `bytes` for the calling thread's snapshots, reused from call to call:
// a fresh buffer per call costs a page fault per 4 KiB (that, not the arithmetic, is what made
// the fake's collectives run at 0.1-0.5 GB/s). It keeps the largest size asked of this thread
// until the thread exits. Not zeroed.
std::byte* ThreadScratch(std::size_t bytes) {
  struct Scratch {
    std::unique_ptr<std::byte[]> data;
    std::size_t size = 0;
  };
  thread_local Scratch scratch;
  if (scratch.size < bytes) {
    scratch.data.reset();  // the old one first: no two large buffers at once
    scratch.data = std::make_unique_for_overwrite<std::byte[]>(bytes);
    scratch.size = bytes;
  }
  return scratch.data.get();
}

bool Overlap(const std::byte* a, std::size_t an, const std::byte* b, std::size_t bn) {
  if (a == nullptr || b == nullptr || an == 0 || bn == 0) return false;
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + bn && y < x + an;
}

// Moves the data of a collective whose outputs are pairwise disjoint, reading inputs in place
// when no output overlaps them (else from a snapshot taken before any output is written,
// invariant 3) and reducing straight into the first output.
void ExecuteDirect(const std::vector<CallDesc>& d, const Buffers& b) {
  const int n = static_cast<int>(d.size());
  const auto un = static_cast<std::size_t>(n);
  const CallDesc& first = d[0];
  const CallKind kind = first.kind;
  const std::size_t c = first.count;
  const std::size_t block = c * TypeSize(first.type);
  const auto root = static_cast<std::size_t>(first.root);
  std::vector<const std::byte*> src(b.in.begin(), b.in.end());
  std::vector<char> snapshot(un, 0);
  std::size_t snapshot_bytes = 0;
  for (std::size_t r = 0; r < un; ++r) {
    for (std::size_t q = 0; q < un && b.in[r] != nullptr; ++q) {
      if (Overlap(b.in[r], b.in_bytes[r], b.out[q], b.out_bytes[q])) {
        snapshot[r] = 1;
        snapshot_bytes += b.in_bytes[r];
        break;
      }
    }
  }
  if (snapshot_bytes != 0) {
    std::byte* at = ThreadScratch(snapshot_bytes);
    for (std::size_t r = 0; r < un; ++r) {
      if (!snapshot[r]) continue;
      std::memcpy(at, b.in[r], b.in_bytes[r]);
      src[r] = at;
      at += b.in_bytes[r];
    }
  }
  auto reduce_into = [&](std::size_t offset, std::byte* dst) {
    std::vector<const std::byte*> ptrs(un);
    for (std::size_t r = 0; r < un; ++r) ptrs[r] = src[r] + offset;
    Reduce(first.type, first.op.kind, ptrs, b.scalars, c, dst);
  };
  switch (kind) {
    case CallKind::kAllReduce:
    case CallKind::kReduce: {
      // Reduced into the first output a piece at a time, each piece copied to the other outputs
      // while it is still in the cache.
      std::vector<std::byte*> outs;
      for (std::byte* o : b.out) {
        if (o != nullptr) outs.push_back(o);
      }
      if (outs.empty()) break;
      const std::size_t size = TypeSize(first.type);
      const std::size_t piece = outs.size() == 1 ? c : std::max<std::size_t>(1, kPieceBytes / size);
      for (std::size_t at = 0; at < c; at += piece) {
        const std::size_t len = std::min(piece, c - at);
        std::vector<const std::byte*> ptrs(un);
        for (std::size_t r = 0; r < un; ++r) ptrs[r] = src[r] + at * size;
        Reduce(first.type, first.op.kind, ptrs, b.scalars, len, outs[0] + at * size);
        for (std::size_t k = 1; k < outs.size(); ++k) {
          Store(outs[k] + at * size, outs[0] + at * size, len * size);
        }
      }
      break;
    }
    case CallKind::kBroadcast:
      for (std::size_t r = 0; r < un; ++r) {
        if (b.out[r] != nullptr && b.out[r] != src[root]) Store(b.out[r], src[root], block);
      }
      break;
    case CallKind::kAllGather:
      for (std::size_t r = 0; r < un; ++r) {
        for (std::size_t q = 0; q < un; ++q) Store(b.out[r] + q * block, src[q], block);
      }
      break;
    case CallKind::kReduceScatter:
      for (std::size_t r = 0; r < un; ++r) reduce_into(r * block, b.out[r]);
      break;
    case CallKind::kAlltoAll:
      // Rank r's block q goes to rank q's block r.
      for (std::size_t r = 0; r < un; ++r) {
        for (std::size_t q = 0; q < un; ++q) Store(b.out[q] + r * block, src[r] + q * block, block);
      }
      break;
    case CallKind::kGather:
      for (std::size_t r = 0; r < un; ++r) Store(b.out[root] + r * block, src[r], block);
      break;
    case CallKind::kScatter:
      for (std::size_t r = 0; r < un; ++r) Store(b.out[r], src[root] + r * block, block);
      break;
    case CallKind::kSend:
    case CallKind::kRecv:
      break;
  }
}

// Moves the data of any collective, outputs overlapping each other included: every input
// snapshotted, every result staged in host buffers, then stored rank by rank (so the last rank's
// store wins where outputs overlap).
void ExecuteStaged(const std::vector<CallDesc>& d, const Buffers& bufs) {
  const int n = static_cast<int>(d.size());
  const CallDesc& first = d[0];
  const CallKind kind = first.kind;
  const std::size_t c = first.count;
  const std::size_t block = c * TypeSize(first.type);
  const std::size_t all = block * static_cast<std::size_t>(n);
  const int root = first.root;
  const std::vector<std::byte*>& in = bufs.in;
  const std::vector<std::byte*>& out = bufs.out;
  const std::vector<ScalarBytes>& scalars = bufs.scalars;
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
}

}  // namespace

ExecResult ExecuteCollective(const std::vector<CallDesc>& d, const std::string& where) {
  ExecResult res;
  // NCCL moves no data for a one-rank in-place collective, so any pointer succeeds there
  // (docs/driver_facts.md, "NCCL 2.28.3, one rank on one GPU"): nothing is translated either.
  if (OneRankInPlaceNoOp(d)) return res;
  Executor ex(where, &res);
  const int n = static_cast<int>(d.size());
  const CallDesc& first = d[0];
  const CallKind kind = first.kind;
  const std::size_t s = TypeSize(first.type);
  const std::size_t block = first.count * s;
  const std::size_t all = block * static_cast<std::size_t>(n);
  const int root = first.root;
  Buffers b;
  b.in.assign(static_cast<size_t>(n), nullptr);
  b.out.assign(static_cast<size_t>(n), nullptr);
  b.in_bytes.assign(static_cast<size_t>(n), 0);
  b.out_bytes.assign(static_cast<size_t>(n), 0);
  b.scalars.resize(static_cast<size_t>(n));
  std::vector<std::byte*>& in = b.in;
  std::vector<std::byte*>& out = b.out;
  for (int r = 0; r < n; ++r) {
    const CallDesc& dr = d[static_cast<size_t>(r)];
    auto rr = static_cast<size_t>(r);
    b.scalars[rr] = dr.op.scalar;
    if (dr.op.kind == ReduceKind::kPreMulSum && dr.op.scalar_on_device) {
      std::byte* p = ex.Translate(r, reinterpret_cast<const void*>(dr.op.scalar_ptr), s,
                                  "PreMulSum scalar");
      if (p != nullptr) std::memcpy(b.scalars[rr].data(), p, s);
    }
    auto input = [&](std::size_t bytes) {
      in[rr] = ex.Translate(r, dr.sendbuff, bytes, "sendbuff");
      b.in_bytes[rr] = bytes;
    };
    auto output = [&](std::size_t bytes) {
      out[rr] = ex.Translate(r, dr.recvbuff, bytes, "recvbuff");
      b.out_bytes[rr] = bytes;
    };
    switch (kind) {
      case CallKind::kAllReduce:
        input(block);
        output(block);
        break;
      case CallKind::kBroadcast:
        if (r == root) input(block);
        output(block);
        break;
      case CallKind::kReduce:
        input(block);
        if (r == root) output(block);
        break;
      case CallKind::kAllGather:
        input(block);
        output(all);
        break;
      case CallKind::kReduceScatter:
        input(all);
        output(block);
        break;
      case CallKind::kAlltoAll:
        input(all);
        output(all);
        break;
      case CallKind::kGather:
        input(block);
        if (r == root) output(all);
        break;
      case CallKind::kScatter:
        if (r == root) input(all);
        output(block);
        break;
      case CallKind::kSend:
      case CallKind::kRecv:
        break;
    }
  }
  if (!res.ok) return res;
  bool outputs_overlap = false;
  for (int r = 0; r < n && !outputs_overlap; ++r) {
    for (int q = r + 1; q < n; ++q) {
      auto rr = static_cast<size_t>(r);
      auto qq = static_cast<size_t>(q);
      if (Overlap(out[rr], b.out_bytes[rr], out[qq], b.out_bytes[qq])) {
        outputs_overlap = true;
        break;
      }
    }
  }
  if (outputs_overlap) {
    ExecuteStaged(d, b);
  } else {
    ExecuteDirect(d, b);
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
  if (bytes != 0) std::memmove(to, from, bytes);  // the source read whole before any write
  return res;
}

// ---- Stream work: running a leg ---------------------------------------------------------------

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
    for (std::size_t i = 0; i < task.entries.size(); ++i) {
      Slot& slot = *task.entries[i].first;
      if (slot.state == Slot::State::kDone) continue;
      ShmFailure f;
      f.error = ncclInternalError;
      f.text = Fmt("fakenccl: internal error while executing %s: %s",
                   DescribeSlot(comm, slot).c_str(), what);
      if (comm.shm && i < task.tickets.size()) comm.shm->Fail(task.tickets[i], &f);  // peers too
      FailSlotLocked(comm, slot, ncclInternalError, f.text);
    }
    task.shm_finished = true;
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
  if (task.comm->shm) return ShmRunLeg(task, leg);  // across processes (cross_process.cc)
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
  return EndLegLocked(task, leg);
}

CUresult Engine::EndLegLocked(Task& task, std::size_t leg) {
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

}  // namespace internal
}  // namespace fakenccl
