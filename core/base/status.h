// Copyright 2026 The cuhal Authors.
// Status: the error type of every fallible cuhal API.
#ifndef CUHAL_CORE_BASE_STATUS_H_
#define CUHAL_CORE_BASE_STATUS_H_

#include <charconv>
#include <memory>
#include <ostream>
#include <source_location>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace cuhal {

// Canonical codes, the same set and numbering as absl/grpc.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT" etc.
std::string_view StatusCodeName(StatusCode code);

// The result of an operation: OK, or a canonical code with a message, the source location where
// the error was made, and a context chain that each layer it passes through adds to. The full
// message reads outermost first:
//   creating device 0: retaining primary context: cuDevicePrimaryCtxRetain:
//   CUDA_ERROR_OUT_OF_MEMORY (out of memory)
//
// Ownership: a value type. OK holds no allocation (a null pointer), so returning OK costs a
// pointer; an error owns its text. Thread-safety: like any value, safe to use from one thread at a
// time; const methods may be called concurrently. Stream ordering: not applicable.
class [[nodiscard]] Status {
 public:
  // OK.
  Status() noexcept = default;
  // An error (or OK when `code` is kOk; the message is then dropped).
  Status(StatusCode code, std::string message,
         std::source_location location = std::source_location::current());

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  [[nodiscard]] bool ok() const noexcept { return state_ == nullptr; }
  [[nodiscard]] StatusCode code() const noexcept {
    return state_ ? state_->code : StatusCode::kOk;
  }
  // The innermost message alone, without context ("" when OK).
  [[nodiscard]] std::string_view raw_message() const noexcept;
  // Context frames, outermost first, followed by the raw message, joined with ": ".
  [[nodiscard]] std::string message() const;
  // Where the error was made (meaningless when OK).
  [[nodiscard]] std::source_location location() const noexcept;
  // The file of location(), relative to the repository ("core/device/device.cc"): the build's
  // source root (CUHAL_SOURCE_ROOT) and any leading "./" or "../" are stripped, so a message never
  // shows the build machine's absolute path ("" when OK).
  [[nodiscard]] std::string_view file() const noexcept;
  // "CODE: message [file:line]" (file as file()) or "OK".
  [[nodiscard]] std::string ToString() const;

  // Adds an outer context frame ("creating device 0"). No effect on OK.
  Status& AddContext(std::string context) &;
  [[nodiscard]] Status&& AddContext(std::string context) &&;

  // Marks the status as looked at, for call sites that intentionally drop it.
  void IgnoreError() const noexcept {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct State {
    StatusCode code;
    std::string message;
    std::source_location location;
    std::vector<std::string> context;  // innermost first
  };
  std::unique_ptr<State> state_;
};

std::ostream& operator<<(std::ostream& os, const Status& status);

inline Status OkStatus() { return Status(); }

// `path` relative to the repository: see Status::file().
[[nodiscard]] std::string_view RepositoryRelativePath(std::string_view path) noexcept;

namespace status_internal {

// Pieces StrCat appends without a stream: strings, characters and integers (bool, signed and
// unsigned char keep the stream's formatting, so they take the stream path).
template <typename T>
inline constexpr bool kFastPiece =
    std::is_convertible_v<const T&, std::string_view> ||
    (std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, signed char> &&
     !std::is_same_v<T, unsigned char>);

template <typename T>
void AppendPiece(std::string& out, const T& piece) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(piece));
  } else if constexpr (std::is_same_v<T, char>) {
    out.push_back(piece);
  } else {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), piece);
    // 24 bytes hold any 64-bit integer. The bound also tells GCC 12 that the length is small:
    // at -O2 it otherwise sees a possibly negative (huge) length in the append and fails the
    // release build with -Werror=stringop-overflow.
    const auto length = static_cast<std::size_t>(end - digits);
    out.append(digits, length < sizeof(digits) ? length : sizeof(digits));
  }
}

}  // namespace status_internal

// Concatenates anything streamable: StrCat("device ", 3, ": ", name). Strings, characters and
// integers are appended directly (no stream: StrCat is on hot paths, e.g. each queue
// operation's description); anything else (pointers, floating point, manipulators such as
// std::hex, types with an operator<<) formats the whole call through a stream.
template <typename... Args>
std::string StrCat(const Args&... args) {
  if constexpr ((status_internal::kFastPiece<Args> && ...)) {
    std::string out;
    (status_internal::AppendPiece(out, args), ...);
    return out;
  } else {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
  }
}

// Factories, one per code; they record the caller's location. Build messages with StrCat:
//   return InvalidArgumentError(StrCat("queue_count must be >= 1, got ", n));
#define CUHAL_STATUS_FACTORY(Name, Code)                                                 \
  inline Status Name(std::string message,                                                \
                     std::source_location loc = std::source_location::current()) {      \
    return Status(StatusCode::Code, std::move(message), loc);                            \
  }
CUHAL_STATUS_FACTORY(InvalidArgumentError, kInvalidArgument)
CUHAL_STATUS_FACTORY(NotFoundError, kNotFound)
CUHAL_STATUS_FACTORY(AlreadyExistsError, kAlreadyExists)
CUHAL_STATUS_FACTORY(ResourceExhaustedError, kResourceExhausted)
CUHAL_STATUS_FACTORY(FailedPreconditionError, kFailedPrecondition)
CUHAL_STATUS_FACTORY(OutOfRangeError, kOutOfRange)
CUHAL_STATUS_FACTORY(UnimplementedError, kUnimplemented)
CUHAL_STATUS_FACTORY(InternalError, kInternal)
CUHAL_STATUS_FACTORY(UnavailableError, kUnavailable)
CUHAL_STATUS_FACTORY(AbortedError, kAborted)
CUHAL_STATUS_FACTORY(DeadlineExceededError, kDeadlineExceeded)
CUHAL_STATUS_FACTORY(UnknownError, kUnknown)
#undef CUHAL_STATUS_FACTORY

// Where statuses that nobody can return go: a destructor that fails to release a driver object
// reports here instead of throwing, aborting or dropping it silently. The default handler writes
// one line to stderr. Returns the previous handler. Thread-safe.
using DroppedStatusHandler = void (*)(const Status& status);
DroppedStatusHandler SetDroppedStatusHandler(DroppedStatusHandler handler);
void ReportDroppedStatus(const Status& status) noexcept;

}  // namespace cuhal

#endif  // CUHAL_CORE_BASE_STATUS_H_
