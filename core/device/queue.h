// Copyright 2026 The cuhal Authors.
// Queue: one of a Device's streams, with the transfer operations on buffers.
#ifndef CUHAL_CORE_DEVICE_QUEUE_H_
#define CUHAL_CORE_DEVICE_QUEUE_H_

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <span>

#include "core/base/status_or.h"
#include "core/memory/buffer.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"

namespace cuhal {

// An ordered queue of device work: one non-blocking CUDA stream of the device's primary context.
//
// THE STREAM-ORDERING RULE, for every method below that enqueues: the operation runs after every
// operation enqueued earlier on this queue and before every one enqueued later; the call returns
// once it is enqueued, usually before it runs. Operations on different queues are unordered with
// respect to each other (and to the legacy default stream: the stream is non-blocking), until the
// host waits for one queue with Synchronize (timeline semaphores, a later issue, will order
// queues without the host). Memory an operation touches must stay allocated until it completes:
// destroy buffers only after Synchronize. Errors returned by an enqueueing method are about
// enqueueing (bad arguments, a failed driver call); a failure of the work itself surfaces at the
// next Synchronize / IsIdle (the driver's asynchronous error reporting).
//
// Ownership: owned by its Device (queue(i)); owns its stream, which is destroyed with it
// (cuStreamDestroy returns at once; work already queued still completes). Borrows the table and
// the context. Thread-safety: every method may be called from any thread; operations enqueued
// concurrently from several threads are ordered as the driver received them.
class Queue {
 public:
  // Creates the queue's stream (cuStreamCreate, CU_STREAM_NON_BLOCKING) with `context` current
  // for the call.
  [[nodiscard]] static StatusOr<std::unique_ptr<Queue>> Create(const CudaApi* api,
                                                               CUcontext context, int index);
  Queue(const Queue&) = delete;             // owns the stream
  Queue& operator=(const Queue&) = delete;  // ditto
  ~Queue() = default;                       // the handle destroys the stream

  [[nodiscard]] int index() const noexcept { return index_; }
  [[nodiscard]] CUstream stream() const noexcept { return stream_.get(); }

  // Fills target[offset, offset + length) with `pattern` repeated (cuMemsetD8/D16/D32Async).
  // pattern_length is 1, 2 or 4; offset and length must be multiples of it and the address
  // aligned to it. Stream-ordered (see the rule above); `pattern` is read before returning.
  [[nodiscard]] Status Fill(Buffer& target, std::size_t offset, std::size_t length,
                            const void* pattern, std::size_t pattern_length);
  // Copies source[source_offset, +length) to target[target_offset, +length) (cuMemcpyAsync,
  // any heaps). The ranges must not overlap when both are the same buffer. Stream-ordered (see
  // the rule above).
  [[nodiscard]] Status Copy(const Buffer& source, std::size_t source_offset, Buffer& target,
                            std::size_t target_offset, std::size_t length);
  // Copies host bytes into target[target_offset, + source.size()) (cuMemcpyHtoDAsync).
  // Stream-ordered (see the rule above). `source` must stay valid and unchanged until the queue
  // has completed the write (Synchronize); the driver copies pageable memory before returning,
  // but page-locked memory is read when the operation runs.
  [[nodiscard]] Status Write(std::span<const std::byte> source, Buffer& target,
                             std::size_t target_offset);
  // Copies source[source_offset, + target.size()) into host memory (cuMemcpyDtoHAsync).
  // Stream-ordered (see the rule above). `target` holds the bytes only once the queue has
  // completed the read (Synchronize), and must stay valid until then.
  [[nodiscard]] Status Read(const Buffer& source, std::size_t source_offset,
                            std::span<std::byte> target);

  // Blocks the calling thread until everything enqueued on this queue so far has completed
  // (cuStreamSynchronize); reports the first asynchronous error of that work.
  [[nodiscard]] Status Synchronize();
  // Whether everything enqueued so far has completed (cuStreamQuery; does not block).
  [[nodiscard]] StatusOr<bool> IsIdle();

 private:
  Queue(const CudaApi* api, CUcontext context, int index, StreamHandle stream)
      : api_(api), context_(context), index_(index), stream_(std::move(stream)) {}

  const CudaApi* const api_;
  const CUcontext context_;
  const int index_;
  StreamHandle stream_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DEVICE_QUEUE_H_
