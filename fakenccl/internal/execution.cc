// Copyright 2026 The cuhal Authors.
// Execution of Slots; see execution.h (and engine.h for the invariants).
#include "fakenccl/internal/execution.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "fakenccl/internal/engine_state.h"
#include "fakenccl/internal/fakecuda_hooks.h"

namespace fakenccl {
namespace internal {

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

}  // namespace internal
}  // namespace fakenccl
