// Copyright 2026 The cuhal Authors.
// Queue: one of a Device's streams, with the transfer operations on buffers.
#ifndef CUHAL_CORE_DEVICE_QUEUE_H_
#define CUHAL_CORE_DEVICE_QUEUE_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/base/status_or.h"
#include "core/device/transfer_batch.h"
#include "core/memory/buffer.h"
#include "core/memory/memory_types.h"
#include "core/semaphore/semaphore.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/driver_handles.h"

namespace cuhal {

class CommandBuffer;
class Device;
class QueueScheduler;
struct Binding;  // core/command/command_buffer.h

// A wait or signal list of a queue operation: (semaphore, value) pairs.
using SemaphoreList = std::span<const SemaphoreValue>;

// An ordered queue of device work: one non-blocking CUDA stream of the device's primary context.
//
// THE STREAM-ORDERING RULE, for every method below that enqueues: the operation runs after every
// operation enqueued earlier on this queue and before every one enqueued later; the call returns
// once it is enqueued, usually before it runs. Operations on different queues are unordered with
// respect to each other (and to the legacy default stream: the stream is non-blocking), until the
// host waits for one queue with Synchronize, or they are ordered with semaphores (below). Memory an operation touches must stay allocated until it completes:
// destroy buffers only after Synchronize. Errors returned by an enqueueing method are about
// enqueueing (bad arguments, a failed driver call); a failure of the work itself surfaces at the
// next Synchronize / IsIdle (the driver's asynchronous error reporting).
//
// Ownership: owned by its Device (queue(i)); owns its stream, which is destroyed with it
// (cuStreamDestroy returns at once; work already queued still completes). Borrows the table and
// the context. Thread-safety: every method may be called from any thread; operations enqueued
// concurrently from several threads are ordered as the driver received them.
//
// QUEUE OPERATIONS (Alloca, Dealloca, Execute, Barrier; IREE's queue_* calls) take a wait list
// and a signal list and never block the caller. Each runs after every (semaphore, value) of its
// wait list is reached and, once its work has completed, signals every (semaphore, value) of its
// signal list. They are ordered ONLY by their wait lists, not by submission order, and not with
// the stream-ordered methods above (IREE's HAL rule). A wait on a value that an operation
// already submitted on a queue of the same device will signal is ordered on the device
// (cuStreamWaitEvent on that operation's event: no host round trip); a wait on a value nothing
// submitted will signal yet (the host will, or a later operation) defers the operation, and the
// device's worker thread enqueues it once the value is reached or becomes device-orderable. A
// failure (a failed wait semaphore, a failed driver call) fails every signal semaphore with the
// status, which names the driver call; errors returned directly are about the submission
// (INVALID_ARGUMENT, or a driver call made on the caller's thread, which fails the signals too).
// Buffers and host memory an operation names must stay alive until its signals are reached (or
// failed); the semaphores it names are retained by the operation until it retires. Queue operations need a queue made by a Device (FAILED_PRECONDITION
// otherwise).
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

  // The same four on raw device addresses, without the buffer checks (the caller checked the
  // ranges): what a recorded TransferBatch runs, so that it does not depend on the Buffer objects
  // (which may be moved, e.g. into a Dealloca, after recording).
  [[nodiscard]] Status FillRange(CUdeviceptr address, std::size_t length, std::uint32_t value,
                                 std::size_t pattern_length);
  [[nodiscard]] Status CopyRange(CUdeviceptr source, CUdeviceptr target, std::size_t length);
  [[nodiscard]] Status WriteRange(std::span<const std::byte> source, CUdeviceptr target);
  [[nodiscard]] Status ReadRange(CUdeviceptr source, std::span<std::byte> target);

  // --- queue operations (see the class comment) ---------------------------------------------
  // A buffer of `size` bytes from the device's `pool`, valid in queue order: usable by queue
  // operations that wait for `signals`, and by the host once they are reached. The handle and its
  // address exist at once (cuMemAllocFromPoolAsync on this queue's stream, made at once: right
  // after the device-side waits when the operation is ready, at submission when it is deferred);
  // nothing waits on the host. params.heap must be device-local (params.pool is replaced by
  // `pool`). Without memory pools the buffer is allocated at once (Allocator::Allocate) and the
  // operation is a barrier. An out-of-memory is returned at once (and fails the signals).
  // On a device with DeviceParams::issue_on_worker the worker makes the allocation: the handle
  // exists at once, its address when the worker has made it (Buffer::device_ptr() waits for
  // that), and a failure of the driver call fails the signals and is the buffer's
  // allocation_status() (arguments the allocator refuses are still returned at once).
  // Release it with Dealloca (queue order) or, once nothing uses it, by destroying it.
  [[nodiscard]] StatusOr<Buffer> Alloca(SemaphoreList waits, SemaphoreList signals,
                                        MemoryPoolKind pool, const BufferParams& params,
                                        std::size_t size);
  // Frees `buffer` in queue order, after `waits` (cuMemFreeAsync on this queue's stream for a
  // pool buffer of the device's allocator; any other buffer is destroyed by the worker once the
  // operation completed), then signals. INVALID_ARGUMENT for an empty buffer.
  [[nodiscard]] Status Dealloca(SemaphoreList waits, SemaphoreList signals, Buffer buffer);
  // Runs `work`'s transfers in order on this queue's stream after `waits`, then signals.
  [[nodiscard]] Status Execute(SemaphoreList waits, SemaphoreList signals, TransferBatch work);
  // Runs `command_buffer` (ended: CommandBuffer::End) on this queue's stream after `waits`, then
  // signals, with the same wait/signal semantics as the other queue operations. `bindings` (a
  // reusable command buffer's binding table; empty for a one-shot one) is checked and resolved to
  // addresses now, before anything is submitted (the span need not outlive the call; the bound
  // buffers' memory must stay allocated until the signals are reached). INVALID_ARGUMENT /
  // OUT_OF_RANGE for a bad table, FAILED_PRECONDITION for a command buffer still recording, a
  // one-shot one submitted twice or a collective whose channel is on another queue: nothing is
  // submitted then. The operation keeps a reference to the command buffer until it retires.
  [[nodiscard]] Status Execute(SemaphoreList waits, SemaphoreList signals,
                               std::shared_ptr<const CommandBuffer> command_buffer,
                               std::span<const Binding> bindings = {});
  // One transfer as a queue operation (IREE's transfer_range, the seed's transfer_range): after
  // `waits`, copies `length` bytes, then signals; the same wait/signal semantics as Execute (it is
  // an Execute of a one-transfer TransferBatch, so the ranges are checked now, as the Queue
  // method of the same kind checks them: INVALID_ARGUMENT / OUT_OF_RANGE / FAILED_PRECONDITION
  // with nothing submitted).
  //   host to device: `source` is copied into the operation now (it need not outlive the call);
  //   device to host: `target` holds the bytes once the signals are reached, and must stay
  //                   valid until then;
  //   device to device: source[source_offset, +length) to target[target_offset, +length), any
  //                   heaps (not overlapping within one buffer).
  [[nodiscard]] Status TransferRange(SemaphoreList waits, SemaphoreList signals,
                                     std::span<const std::byte> source, Buffer& target,
                                     std::size_t target_offset);
  [[nodiscard]] Status TransferRange(SemaphoreList waits, SemaphoreList signals,
                                     const Buffer& source, std::size_t source_offset,
                                     std::span<std::byte> target);
  [[nodiscard]] Status TransferRange(SemaphoreList waits, SemaphoreList signals,
                                     const Buffer& source, std::size_t source_offset,
                                     Buffer& target, std::size_t target_offset,
                                     std::size_t length);
  // Signals `signals` once `waits` are reached (and, on the device, after nothing else).
  [[nodiscard]] Status Barrier(SemaphoreList waits, SemaphoreList signals);
  // Asks the device's worker to look at deferred operations again. Never blocks.
  [[nodiscard]] Status Flush();

  // Blocks the calling thread until everything enqueued on this queue so far has completed
  // (cuStreamSynchronize); reports the first asynchronous error of that work.
  [[nodiscard]] Status Synchronize();
  // Whether everything enqueued so far has completed (cuStreamQuery; does not block).
  [[nodiscard]] StatusOr<bool> IsIdle();

 private:
  friend class Device;  // attaches itself and its scheduler

  Queue(const CudaApi* api, CUcontext context, int index, StreamHandle stream)
      : api_(api), context_(context), index_(index), stream_(std::move(stream)) {}
  [[nodiscard]] Status RequireScheduler(const std::string& what) const;

  const CudaApi* const api_;
  const CUcontext context_;
  const int index_;
  StreamHandle stream_;
  Device* device_ = nullptr;             // set by the Device that made it
  QueueScheduler* scheduler_ = nullptr;  // ditto
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DEVICE_QUEUE_H_
