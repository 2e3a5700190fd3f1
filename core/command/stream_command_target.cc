// Copyright 2026 The cuhal Authors.
#include "core/command/stream_command_target.h"

#include <cstdint>
#include <string>

#include "core/device/queue.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

Status StreamCommandTarget::Prepare(const std::vector<Command>& commands) {
  commands_ = &commands;
  return OkStatus();
}

Status StreamCommandTarget::Issue(CUstream stream, ResolvedBindings bindings) {
  if (commands_ == nullptr) return FailedPreconditionError("the stream target was not prepared");
  for (std::size_t i = 0; i < commands_->size(); ++i) {
    const Command& command = (*commands_)[i];
    CUHAL_RETURN_IF_ERROR(IssueOne(command, stream, bindings), "command ", i, " (",
                          CommandName(command), ")");
  }
  return OkStatus();
}

Status StreamCommandTarget::IssueOne(const Command& command, CUstream stream,
                                     ResolvedBindings bindings) const {
  const CudaApi* api = api_;
  return std::visit(
      Overloaded{
          [&](const FillCommand& c) -> Status {
            const ResolvedBinding t = ResolveRange(c.target, bindings);
            switch (c.pattern_length) {
              case 1:
                return CUHAL_CU(api, cuMemsetD8Async, t.address,
                                static_cast<unsigned char>(c.pattern), t.length, stream);
              case 2:
                return CUHAL_CU(api, cuMemsetD16Async, t.address,
                                static_cast<unsigned short>(c.pattern), t.length / 2, stream);
              default:
                return CUHAL_CU(api, cuMemsetD32Async, t.address, c.pattern, t.length / 4,
                                stream);
            }
          },
          [&](const UpdateCommand& c) -> Status {
            const ResolvedBinding t = ResolveRange(c.target, bindings);
            return CUHAL_CU(api, cuMemcpyHtoDAsync, t.address, c.data.data(), c.data.size(),
                            stream);
          },
          [&](const CopyCommand& c) -> Status {
            const ResolvedBinding s = ResolveRange(c.source, bindings);
            const ResolvedBinding t = ResolveRange(c.target, bindings);
            return CUHAL_CU(api, cuMemcpyAsync, t.address, s.address, s.length, stream);
          },
          [&](const DispatchCommand& c) -> Status {
            std::vector<CUdeviceptr> addresses(c.bindings.size());
            std::vector<void*> params;
            params.reserve(c.bindings.size() + c.constants.size());
            for (std::size_t i = 0; i < c.bindings.size(); ++i) {
              addresses[i] = ResolveRange(c.bindings[i], bindings).address;
              params.push_back(&addresses[i]);
            }
            for (const std::uint32_t& constant : c.constants) {
              params.push_back(const_cast<std::uint32_t*>(&constant));
            }
            const DispatchConfig& d = c.config;
            return CUHAL_CU(api, cuLaunchKernel, c.function, d.workgroups[0], d.workgroups[1],
                            d.workgroups[2], d.block[0], d.block[1], d.block[2],
                            d.dynamic_shared_bytes, stream,
                            params.empty() ? nullptr : params.data(), nullptr);
          },
          [&](const BarrierCommand&) -> Status { return OkStatus(); },
          [&](const SignalEventCommand& c) -> Status {
            return CUHAL_CU(api, cuEventRecord, c.event, stream);
          },
          [&](const ResetEventCommand&) -> Status { return OkStatus(); },
          [&](const WaitEventsCommand& c) -> Status {
            for (CUevent event : c.events) {
              CUHAL_RETURN_IF_ERROR(CUHAL_CU(api, cuStreamWaitEvent, stream, event, 0));
            }
            return OkStatus();
          },
          [&](const CollectiveCommand& c) -> Status {
            if (c.channel->queue().stream() != stream) {
              return FailedPreconditionError(StrCat(
                  "the channel (rank ", c.channel->rank(), ") enqueues on queue ",
                  c.channel->queue().index(), ", not on the stream this command buffer runs on"));
            }
            const ResolvedBinding s = ResolveRange(c.send, bindings);
            const ResolvedBinding r = ResolveRange(c.recv, bindings);
            return c.channel->CollectiveOnAddresses(c.kind, s.address, r.address, c.count,
                                                    c.type, c.op, c.root);
          },
      },
      command);
}

}  // namespace cuhal
