// Copyright 2026 The cuhal Authors.
#include "tests/trace/pool_footprint_replay.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/support/backend.h"

namespace cuhal::trace {

#define FOOTPRINT_CALL(call)                                                        \
  do {                                                                              \
    if (CUresult r_ = (call); r_ != CUDA_SUCCESS) {                                 \
      out.fatal = std::string(#call) + " failed: " + testing::ResultName(r_);       \
      return out;                                                                   \
    }                                                                               \
  } while (0)

FootprintReplay ReplayOnPool(const CudaApi& api, const AllocTrace& trace, bool opportunistic) {
  FootprintReplay out;
  CUcontext ctx = nullptr;
  FOOTPRINT_CALL(api.cuDevicePrimaryCtxRetain(&ctx, 0));
  struct Release {
    const CudaApi& api;
    ~Release() { api.cuDevicePrimaryCtxRelease(0); }
  } release{api};
  FOOTPRINT_CALL(api.cuCtxSetCurrent(ctx));
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  FOOTPRINT_CALL(api.cuMemPoolCreate(&pool, &props));
  std::vector<CUstream> streams(static_cast<std::size_t>(trace.streams), nullptr);
  std::map<std::uint64_t, CUevent> events;
  std::map<std::uint64_t, CUdeviceptr> live;
  auto cleanup = [&] {
    for (auto& [id, p] : live) api.cuMemFreeAsync(p, streams.empty() ? nullptr : streams[0]);
    api.cuCtxSynchronize();
    for (auto& [id, e] : events) api.cuEventDestroy(e);
    for (CUstream s : streams) {
      if (s != nullptr) api.cuStreamDestroy(s);
    }
    api.cuMemPoolDestroy(pool);
  };
  struct Cleanup {
    decltype(cleanup)& f;
    ~Cleanup() { f(); }
  } cleanup_guard{cleanup};
  std::uint64_t threshold = UINT64_MAX;
  FOOTPRINT_CALL(api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  int flag = opportunistic ? 1 : 0;
  FOOTPRINT_CALL(
      api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &flag));
  for (CUstream& s : streams) FOOTPRINT_CALL(api.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

  out.steps.reserve(trace.ops.size());
  for (const TraceOp& op : trace.ops) {
    FootprintStep step;
    CUstream s = op.stream >= 0 ? streams[static_cast<std::size_t>(op.stream)] : nullptr;
    switch (op.kind) {
      case TraceOpKind::kAlloc: {
        CUdeviceptr p = 0;
        step.result = api.cuMemAllocFromPoolAsync(&p, op.size, pool, s);
        if (step.result == CUDA_SUCCESS) live[op.id] = p;
        step.address = p;
        break;
      }
      case TraceOpKind::kFree: {
        auto it = live.find(op.id);
        if (it == live.end()) break;  // its alloc failed (reported at that step)
        step.result = api.cuMemFreeAsync(it->second, s);
        live.erase(it);
        break;
      }
      case TraceOpKind::kRecord: {
        CUevent& e = events[op.event];
        if (e == nullptr) FOOTPRINT_CALL(api.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
        step.result = api.cuEventRecord(e, s);
        break;
      }
      case TraceOpKind::kWait:
        step.result = api.cuStreamWaitEvent(s, events.at(op.event), 0);
        break;
      case TraceOpKind::kSync:
        step.result = s != nullptr ? api.cuStreamSynchronize(s) : api.cuCtxSynchronize();
        break;
    }
    FOOTPRINT_CALL(api.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                                             &step.reserved));
    FOOTPRINT_CALL(
        api.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &step.used));
    out.reserved_high = std::max(out.reserved_high, step.reserved);
    out.used_high = std::max(out.used_high, step.used);
    out.steps.push_back(step);
  }
  return out;
}

#undef FOOTPRINT_CALL

}  // namespace cuhal::trace
