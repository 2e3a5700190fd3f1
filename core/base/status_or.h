// Copyright 2026 The cuhal Authors.
// StatusOr<T>: a T or the Status that explains why there is none; plus the propagation macros.
#ifndef CUHAL_CORE_BASE_STATUS_OR_H_
#define CUHAL_CORE_BASE_STATUS_OR_H_

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/base/status.h"

namespace cuhal {

// Holds either a value of type T or a non-OK Status.
//
// Ownership: owns the T. Thread-safety: a value type. Accessing value() of an error is a
// programming error: it prints the status and aborts (the one place cuhal aborts, as with
// absl::StatusOr); check ok() first or use the macros below.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // From an error. Passing OK is a bug and is turned into an INTERNAL error.
  StatusOr(Status status)  // NOLINT(google-explicit-constructor)
      : status_(std::move(status)) {
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "StatusOr built from OK Status");
  }
  template <typename U = T,
            typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                        !std::is_same_v<std::decay_t<U>, Status> &&
                                        !std::is_same_v<std::decay_t<U>, StatusOr>>>
  StatusOr(U&& value)  // NOLINT(google-explicit-constructor)
      : value_(std::forward<U>(value)) {}

  StatusOr(const StatusOr&) = default;
  StatusOr& operator=(const StatusOr&) = default;
  StatusOr(StatusOr&&) noexcept = default;
  StatusOr& operator=(StatusOr&&) noexcept = default;

  [[nodiscard]] bool ok() const noexcept { return status_.ok(); }
  [[nodiscard]] const Status& status() const& noexcept { return status_; }
  [[nodiscard]] Status status() && noexcept { return std::move(status_); }

  [[nodiscard]] T& value() & { CheckOk(); return *value_; }
  [[nodiscard]] const T& value() const& { CheckOk(); return *value_; }
  [[nodiscard]] T&& value() && { CheckOk(); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const {
    if (!status_.ok()) {
      std::fprintf(stderr, "cuhal: StatusOr::value() on an error: %s\n",
                   status_.ToString().c_str());
      std::abort();
    }
  }
  Status status_;
  std::optional<T> value_;
};

namespace internal {
inline Status AsStatus(const Status& s) { return s; }
inline Status AsStatus(Status&& s) { return std::move(s); }
template <typename T>
Status AsStatus(const StatusOr<T>& s) { return s.status(); }
}  // namespace internal

}  // namespace cuhal

#define CUHAL_CONCAT_INNER_(a, b) a##b
#define CUHAL_CONCAT_(a, b) CUHAL_CONCAT_INNER_(a, b)

// Returns the status of `expr` when it is an error; optional further arguments are streamed into
// a context frame, only on the error path:
//   CUHAL_RETURN_IF_ERROR(RetainContext(), "creating device ", ordinal);
#define CUHAL_RETURN_IF_ERROR(expr, ...)                                               \
  do {                                                                                 \
    ::cuhal::Status cuhal_status_ = (expr);                                            \
    if (!cuhal_status_.ok()) [[unlikely]] {                                            \
      __VA_OPT__(cuhal_status_.AddContext(::cuhal::StrCat(__VA_ARGS__));)              \
      return cuhal_status_;                                                            \
    }                                                                                  \
  } while (false)

// Declares or assigns `lhs` from the value of a StatusOr `expr`, or returns its status (with an
// optional context frame, as above):
//   CUHAL_ASSIGN_OR_RETURN(auto stream, CreateStream(), "creating queue ", i);
#define CUHAL_ASSIGN_OR_RETURN(lhs, expr, ...) \
  CUHAL_ASSIGN_OR_RETURN_IMPL_(CUHAL_CONCAT_(cuhal_statusor_, __LINE__), lhs, expr, __VA_ARGS__)
#define CUHAL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr, ...)                                \
  auto tmp = (expr);                                                                     \
  if (!tmp.ok()) [[unlikely]] {                                                          \
    ::cuhal::Status cuhal_status_ = std::move(tmp).status();                             \
    __VA_OPT__(cuhal_status_.AddContext(::cuhal::StrCat(__VA_ARGS__));)                  \
    return cuhal_status_;                                                                \
  }                                                                                      \
  lhs = std::move(tmp).value()

#endif  // CUHAL_CORE_BASE_STATUS_OR_H_
