// Copyright 2026 The cuhal Authors.
// The pytorch allocator (CUHAL_WITH_TORCH builds only): PyTorch's CUDA caching allocator from
// the installed torch, driven through its C++ API (c10::cuda::CUDACachingAllocator):
// raw_alloc_with_stream / raw_delete, footprint from getDeviceStats (reserved_bytes and
// requested_bytes, the aggregate of every pool: requested is the exact bytes asked for, as the
// trace's used bytes are).
//
// PyTorch calls the CUDA runtime, not the replay's table: its driver calls are not counted
// (driver_calls stays 0 for this allocator), and it needs the real driver (ReplayAllocatorAvailable
// refuses the fake). PyTorch's allocator is one per process: each replay allocator empties its
// cache and resets its peaks when it starts and empties it again when it closes, so two of them
// must not be alive at once (Create refuses the second).
//
// A free on another stream than the allocation's: PyTorch frees a raw allocation in its
// allocation stream's order, so the freeing stream's work is first made to precede that stream
// (an event recorded on the freeing stream, waited for by the allocating one).
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <atomic>
#include <exception>
#include <memory>
#include <utility>

#include "core/base/status.h"
#include "core/symbols/api_status.h"
#include "trace/replay_backends.h"

namespace cuhal::trace::internal {
namespace {

namespace torch_alloc = c10::cuda::CUDACachingAllocator;

std::atomic<bool> g_pytorch_in_use{false};

// PyTorch reports errors as c10::Error exceptions: caught at this boundary, never let through.
template <typename F>
Status TorchCall(const char* what, F&& f) {
  try {
    f();
    return OkStatus();
  } catch (const std::exception& e) {
    return InternalError(StrCat(what, ": ", e.what()));
  }
}

class PyTorchAllocator final : public ReplayAllocator {
 public:
  static StatusOr<std::unique_ptr<ReplayAllocator>> Create(const ReplayTarget& target,
                                                           const CudaApi* api, int streams) {
    if (g_pytorch_in_use.exchange(true)) {
      return FailedPreconditionError(
          "PyTorch's caching allocator is one per process and another replay holds it");
    }
    std::unique_ptr<PyTorchAllocator> a(new PyTorchAllocator(api, target));
    CUHAL_RETURN_IF_ERROR(TorchCall("initializing PyTorch's CUDA caching allocator", [&] {
      torch_alloc::init(c10::cuda::device_count());
      torch_alloc::emptyCache();
      torch_alloc::resetPeakStats(a->device_);
      torch_alloc::resetAccumulatedStats(a->device_);
    }));
    CUHAL_RETURN_IF_ERROR(
        CUHAL_CU(api, cuEventCreate, &a->handover_, CU_EVENT_DISABLE_TIMING),
        "creating the cross-stream free event");
    CUHAL_RETURN_IF_ERROR(a->CreateStreams(streams));
    return std::unique_ptr<ReplayAllocator>(std::move(a));
  }
  ~PyTorchAllocator() override {
    ReportDroppedStatus(Close());
    g_pytorch_in_use.store(false);
  }
  PyTorchAllocator(const PyTorchAllocator&) = delete;             // holds the process's allocator
  PyTorchAllocator& operator=(const PyTorchAllocator&) = delete;  // ditto

 private:
  PyTorchAllocator(const CudaApi* api, const ReplayTarget& target)
      : ReplayAllocator(ReplayAllocatorKind::kPyTorch, api, target.context),
        device_(static_cast<c10::DeviceIndex>(target.device.ordinal)) {}

  StatusOr<std::uintptr_t> DoAlloc(std::uint64_t size, CUstream stream) override {
    void* ptr = nullptr;
    CUHAL_RETURN_IF_ERROR(TorchCall("raw_alloc_with_stream", [&] {
      ptr = torch_alloc::raw_alloc_with_stream(static_cast<std::size_t>(size), stream);
    }));
    return reinterpret_cast<std::uintptr_t>(ptr);
  }
  Status DoFree(std::uintptr_t handle, CUstream alloc_stream, CUstream stream) override {
    if (stream != alloc_stream) {
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api(), cuEventRecord, handover_, stream));
      CUHAL_RETURN_IF_ERROR(CUHAL_CU(api(), cuStreamWaitEvent, alloc_stream, handover_, 0));
    }
    return TorchCall("raw_delete", [&] { torch_alloc::raw_delete(reinterpret_cast<void*>(handle)); });
  }
  StatusOr<ReplayFootprint> DoFootprint() const override {
    ReplayFootprint f;
    CUHAL_RETURN_IF_ERROR(TorchCall("getDeviceStats", [&] {
      const auto stats = torch_alloc::getDeviceStats(device_);
      const auto& reserved = stats.reserved_bytes[0];   // StatType::AGGREGATE
      const auto& requested = stats.requested_bytes[0];  // ditto
      f.reserved_current = static_cast<std::uint64_t>(reserved.current);
      f.reserved_high = static_cast<std::uint64_t>(reserved.peak);
      f.used_current = static_cast<std::uint64_t>(requested.current);
      f.used_high = static_cast<std::uint64_t>(requested.peak);
    }));
    return f;
  }
  Status DoClose() override {
    Status status = TorchCall("emptyCache", [] { torch_alloc::emptyCache(); });
    if (handover_ != nullptr) {
      Status destroyed = CUHAL_CU(api(), cuEventDestroy, std::exchange(handover_, nullptr));
      if (status.ok()) status = std::move(destroyed);
    }
    return status;
  }

  const c10::DeviceIndex device_;
  CUevent handover_ = nullptr;
};

}  // namespace

bool BuiltWithTorch() noexcept { return true; }

StatusOr<std::unique_ptr<ReplayAllocator>> CreatePyTorchReplayAllocator(const ReplayTarget& target,
                                                                        const CudaApi* api,
                                                                        int streams) {
  return PyTorchAllocator::Create(target, api, streams);
}

}  // namespace cuhal::trace::internal
