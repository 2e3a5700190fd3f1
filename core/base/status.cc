// Copyright 2026 The cuhal Authors.
#include "core/base/status.h"

#include <atomic>
#include <cstdio>

namespace cuhal {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kUnknown: return "UNKNOWN";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN_STATUS_CODE";
}

Status::Status(StatusCode code, std::string message, std::source_location location) {
  if (code == StatusCode::kOk) return;
  state_ = std::make_unique<State>(State{code, std::move(message), location, {}});
}

Status::Status(const Status& other)
    : state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) state_ = other.state_ ? std::make_unique<State>(*other.state_) : nullptr;
  return *this;
}

std::string_view Status::raw_message() const noexcept {
  return state_ ? std::string_view(state_->message) : std::string_view();
}

std::string Status::message() const {
  if (!state_) return {};
  std::string out;
  for (auto it = state_->context.rbegin(); it != state_->context.rend(); ++it) {
    out += *it;
    out += ": ";
  }
  out += state_->message;
  return out;
}

std::source_location Status::location() const noexcept {
  return state_ ? state_->location : std::source_location();
}

std::string_view RepositoryRelativePath(std::string_view path) noexcept {
#ifdef CUHAL_SOURCE_ROOT
  constexpr std::string_view kRoot = CUHAL_SOURCE_ROOT;
  if (!kRoot.empty() && path.substr(0, kRoot.size()) == kRoot) {
    path.remove_prefix(kRoot.size());
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  }
#endif
  while (true) {
    if (path.substr(0, 2) == "./") {
      path.remove_prefix(2);
    } else if (path.substr(0, 3) == "../") {
      path.remove_prefix(3);
    } else {
      return path;
    }
  }
}

std::string_view Status::file() const noexcept {
  return state_ ? RepositoryRelativePath(state_->location.file_name()) : std::string_view();
}

std::string Status::ToString() const {
  if (!state_) return "OK";
  return StrCat(StatusCodeName(state_->code), ": ", message(), " [", file(), ":",
                state_->location.line(), "]");
}

Status& Status::AddContext(std::string context) & {
  if (state_) state_->context.push_back(std::move(context));
  return *this;
}

Status&& Status::AddContext(std::string context) && {
  if (state_) state_->context.push_back(std::move(context));
  return std::move(*this);
}

std::ostream& operator<<(std::ostream& os, const Status& status) {
  return os << status.ToString();
}

namespace {
void DefaultDroppedStatusHandler(const Status& status) {
  std::fprintf(stderr, "cuhal: error during cleanup (not returnable): %s\n",
               status.ToString().c_str());
}
std::atomic<DroppedStatusHandler> g_dropped_handler{&DefaultDroppedStatusHandler};
}  // namespace

DroppedStatusHandler SetDroppedStatusHandler(DroppedStatusHandler handler) {
  return g_dropped_handler.exchange(handler ? handler : &DefaultDroppedStatusHandler);
}

void ReportDroppedStatus(const Status& status) noexcept {
  if (status.ok()) return;
  try {
    g_dropped_handler.load()(status);
  } catch (...) {
    // A handler must not throw; nothing more can be done from a destructor.
  }
}

}  // namespace cuhal
