// Copyright 2026 The cuhal Authors.
// TransferBatch: the work of one Queue::Execute, a recorded list of the queue's transfer
// operations (fill, copy, write, read). Command buffers plug in beside it (next issue).
#ifndef CUHAL_CORE_DEVICE_TRANSFER_BATCH_H_
#define CUHAL_CORE_DEVICE_TRANSFER_BATCH_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/base/status.h"
#include "core/memory/buffer.h"

namespace cuhal {

class Queue;

// A list of transfers recorded on the host and enqueued, in order, when its Execute runs on a
// queue's stream. Each recording method checks its arguments at once (the same checks as the
// Queue method of the same name) and returns INVALID_ARGUMENT / OUT_OF_RANGE / FAILED_PRECONDITION
// without recording anything; Write copies the host bytes into the batch.
//
// Ownership: move-only value; Queue::Execute takes it. It records the buffers' addresses, not the
// Buffer objects: the memory (not the object, which may be moved, e.g. into a Dealloca ordered
// after the Execute) must stay allocated, and a Read's host target alive, until the Execute's
// signals are reached.
// Thread-safety: like any value (one thread at a time). Stream ordering: the commands run in
// recording order on the executing queue's stream, after the Execute's waits.
class TransferBatch {
 public:
  TransferBatch() = default;
  TransferBatch(TransferBatch&&) noexcept = default;
  TransferBatch& operator=(TransferBatch&&) noexcept = default;
  TransferBatch(const TransferBatch&) = delete;             // commands own copied bytes
  TransferBatch& operator=(const TransferBatch&) = delete;  // ditto

  [[nodiscard]] Status Fill(Buffer& target, std::size_t offset, std::size_t length,
                            const void* pattern, std::size_t pattern_length);
  [[nodiscard]] Status Copy(const Buffer& source, std::size_t source_offset, Buffer& target,
                            std::size_t target_offset, std::size_t length);
  // Copies `source` into the batch now; the device write happens when the batch runs.
  [[nodiscard]] Status Write(std::span<const std::byte> source, Buffer& target,
                             std::size_t target_offset);
  // `target` holds the bytes once the Execute's signals are reached.
  [[nodiscard]] Status Read(const Buffer& source, std::size_t source_offset,
                            std::span<std::byte> target);

  [[nodiscard]] std::size_t size() const noexcept { return commands_.size(); }
  [[nodiscard]] bool empty() const noexcept { return commands_.empty(); }

  // Enqueues every command on `queue` in order; stops at the first error.
  [[nodiscard]] Status Run(Queue& queue) const;

 private:
  std::vector<std::function<Status(Queue&)>> commands_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_DEVICE_TRANSFER_BATCH_H_
