// Copyright 2026 The cuhal Authors.
#include "core/device/transfer_batch.h"

#include <cstring>
#include <memory>

#include "core/device/queue.h"

namespace cuhal {

Status TransferBatch::Fill(Buffer& target, std::size_t offset, std::size_t length,
                           const void* pattern, std::size_t pattern_length) {
  const std::string what = StrCat("recording a fill of ", length, " bytes");
  if (pattern == nullptr) return InvalidArgumentError(StrCat(what, ": the pattern is null"));
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4) {
    return InvalidArgumentError(
        StrCat(what, ": the pattern length must be 1, 2 or 4, got ", pattern_length));
  }
  CUHAL_RETURN_IF_ERROR(target.CheckRange(offset, length, what));
  const CUdeviceptr address = target.device_ptr() + offset;
  if (offset % pattern_length != 0 || length % pattern_length != 0 ||
      address % pattern_length != 0) {
    return InvalidArgumentError(StrCat(what, ": offset ", offset, ", length ", length,
                                       " and the address must be multiples of the pattern length ",
                                       pattern_length));
  }
  std::uint32_t value = 0;
  std::memcpy(&value, pattern, pattern_length);
  commands_.push_back([address, length, value, pattern_length](Queue& queue) {
    return queue.FillRange(address, length, value, pattern_length);
  });
  return OkStatus();
}

Status TransferBatch::Copy(const Buffer& source, std::size_t source_offset, Buffer& target,
                           std::size_t target_offset, std::size_t length) {
  const std::string what = StrCat("recording a copy of ", length, " bytes");
  CUHAL_RETURN_IF_ERROR(source.CheckRange(source_offset, length, StrCat(what, " (source)")));
  CUHAL_RETURN_IF_ERROR(target.CheckRange(target_offset, length, StrCat(what, " (target)")));
  const CUdeviceptr from = source.device_ptr() + source_offset;
  const CUdeviceptr to = target.device_ptr() + target_offset;
  if (source.device_ptr() == target.device_ptr() && length != 0 &&
      source_offset < target_offset + length && target_offset < source_offset + length) {
    return InvalidArgumentError(StrCat(what, ": the ranges overlap in one buffer"));
  }
  commands_.push_back(
      [from, to, length](Queue& queue) { return queue.CopyRange(from, to, length); });
  return OkStatus();
}

Status TransferBatch::Write(std::span<const std::byte> source, Buffer& target,
                            std::size_t target_offset) {
  const std::string what = StrCat("recording a write of ", source.size(), " bytes");
  CUHAL_RETURN_IF_ERROR(target.CheckRange(target_offset, source.size(), what));
  auto bytes = std::make_shared<std::vector<std::byte>>(source.begin(), source.end());
  const CUdeviceptr to = target.device_ptr() + target_offset;
  commands_.push_back([bytes, to](Queue& queue) { return queue.WriteRange(*bytes, to); });
  return OkStatus();
}

Status TransferBatch::Read(const Buffer& source, std::size_t source_offset,
                           std::span<std::byte> target) {
  const std::string what = StrCat("recording a read of ", target.size(), " bytes");
  CUHAL_RETURN_IF_ERROR(source.CheckRange(source_offset, target.size(), what));
  const CUdeviceptr from = source.device_ptr() + source_offset;
  commands_.push_back([from, target](Queue& queue) { return queue.ReadRange(from, target); });
  return OkStatus();
}

Status TransferBatch::Run(Queue& queue) const {
  for (const std::function<Status(Queue&)>& command : commands_) {
    CUHAL_RETURN_IF_ERROR(command(queue));
  }
  return OkStatus();
}

}  // namespace cuhal
