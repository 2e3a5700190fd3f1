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
  std::uint32_t value = 0;
  std::memcpy(&value, pattern, pattern_length);
  Buffer* buffer = &target;
  commands_.push_back([buffer, offset, length, value, pattern_length](Queue& queue) {
    return queue.Fill(*buffer, offset, length, &value, pattern_length);
  });
  return OkStatus();
}

Status TransferBatch::Copy(const Buffer& source, std::size_t source_offset, Buffer& target,
                           std::size_t target_offset, std::size_t length) {
  const std::string what = StrCat("recording a copy of ", length, " bytes");
  CUHAL_RETURN_IF_ERROR(source.CheckRange(source_offset, length, StrCat(what, " (source)")));
  CUHAL_RETURN_IF_ERROR(target.CheckRange(target_offset, length, StrCat(what, " (target)")));
  const Buffer* from = &source;
  Buffer* to = &target;
  commands_.push_back([from, source_offset, to, target_offset, length](Queue& queue) {
    return queue.Copy(*from, source_offset, *to, target_offset, length);
  });
  return OkStatus();
}

Status TransferBatch::Write(std::span<const std::byte> source, Buffer& target,
                            std::size_t target_offset) {
  const std::string what = StrCat("recording a write of ", source.size(), " bytes");
  CUHAL_RETURN_IF_ERROR(target.CheckRange(target_offset, source.size(), what));
  auto bytes = std::make_shared<std::vector<std::byte>>(source.begin(), source.end());
  Buffer* to = &target;
  commands_.push_back([bytes, to, target_offset](Queue& queue) {
    return queue.Write(*bytes, *to, target_offset);
  });
  return OkStatus();
}

Status TransferBatch::Read(const Buffer& source, std::size_t source_offset,
                           std::span<std::byte> target) {
  const std::string what = StrCat("recording a read of ", target.size(), " bytes");
  CUHAL_RETURN_IF_ERROR(source.CheckRange(source_offset, target.size(), what));
  const Buffer* from = &source;
  commands_.push_back([from, source_offset, target](Queue& queue) {
    return queue.Read(*from, source_offset, target);
  });
  return OkStatus();
}

Status TransferBatch::Run(Queue& queue) const {
  for (const std::function<Status(Queue&)>& command : commands_) {
    CUHAL_RETURN_IF_ERROR(command(queue));
  }
  return OkStatus();
}

}  // namespace cuhal
