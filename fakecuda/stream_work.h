// Copyright 2026 The cuhal Authors.
// Queuing host-implemented "device work" on fakecuda streams: the hook fakenccl uses to run
// collectives in stream order, and that tests may use to model any asynchronous device work.
#ifndef CUHAL_FAKECUDA_STREAM_WORK_H_
#define CUHAL_FAKECUDA_STREAM_WORK_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "fakecuda/race/race_access.h"

namespace fakecuda {

// One unit of work for a stream of the installed fake driver.
struct StreamWork {
  const char* what = "external work";  // for reports
  // Extra readiness beyond stream order (e.g. "every rank has arrived"). Called with the fake
  // driver's lock held, possibly many times and from any thread: it must be cheap, must not call
  // fakecuda, and may only take locks that are never held while calling fakecuda.
  std::function<bool()> ready;
  // The work itself; runs without the driver lock, once, when the stream reaches it and `ready`
  // holds. Returning an error makes it the context's sticky error.
  std::function<CUresult()> run;
  double cost_us = 1.0;  // virtual duration
  // The device-accessible bytes the work reads and writes, for the race detector (ignored when
  // it is off); empty: none it checks.
  std::vector<RaceAccess> accesses;
};

// Enqueues `work` on `stream` (NULL / CU_STREAM_LEGACY / CU_STREAM_PER_THREAD resolve against the
// calling thread's current context, as for any entry point). Errors are the real driver's for an
// invalid stream or missing context; CUDA_ERROR_NOT_INITIALIZED when no fake driver is installed.
// This is not an entry point: it is neither counted nor subject to fault injection.
CUresult EnqueueStreamWork(CUstream stream, StreamWork work);

// Wakes threads waiting for stream work whose `ready` may have changed (call after changing the
// state a `ready` predicate reads, without holding the lock that predicate takes).
void NotifyStreamWork();

// The host bytes behind device-accessible memory [ptr, ptr + bytes) of the installed driver, or
// null when the range is not inside one allocation. *device receives the owning device ordinal.
// The pointer stays valid until the allocation is freed.
std::byte* TranslateDevicePointer(CUdeviceptr ptr, std::size_t bytes, int* device = nullptr);

// The device ordinal of `stream`'s context (resolved as in EnqueueStreamWork), or -1.
int StreamDevice(CUstream stream);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_STREAM_WORK_H_
