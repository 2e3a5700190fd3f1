// Copyright 2026 The cuhal Authors.
// Handle<Traits>: a move-only owner of one driver object, released through its table.
#ifndef CUHAL_CORE_BASE_HANDLE_H_
#define CUHAL_CORE_BASE_HANDLE_H_

#include <utility>

#include "core/base/status.h"

namespace cuhal {

// Owns one driver object (a stream, an event, an allocation, a communicator...) together with the
// table that made it, and releases it through that same table.
//
// Traits supplies:
//   using Api = CudaApi;                 // the table type
//   using Value = CUstream;              // the raw handle (value-initialized means "none")
//   static Status Destroy(const Api& api, Value value) noexcept;
//
// Ownership: exactly one Handle owns a Value; moving transfers it; copying is deleted because two
// owners would release twice. The table is borrowed and must outlive the Handle.
// Thread-safety: none of its own (like unique_ptr); the driver call it makes is thread-safe.
// Stream ordering: Destroy follows the driver's rule for the object (e.g. cuStreamDestroy returns
// at once and lets queued work finish); a Handle adds none.
// The destructor never throws or aborts: a failed release goes to ReportDroppedStatus. Callers
// that can act on the failure call Reset() and check its Status.
template <typename Traits>
class Handle {
 public:
  using Api = typename Traits::Api;
  using Value = typename Traits::Value;

  Handle() noexcept = default;
  Handle(const Api* api, Value value) noexcept : api_(api), value_(value) {}
  ~Handle() { ReportDroppedStatus(Reset()); }

  Handle(const Handle&) = delete;             // two owners would release twice
  Handle& operator=(const Handle&) = delete;  // ditto
  Handle(Handle&& other) noexcept
      : api_(std::exchange(other.api_, nullptr)), value_(std::exchange(other.value_, Value{})) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      ReportDroppedStatus(Reset());
      api_ = std::exchange(other.api_, nullptr);
      value_ = std::exchange(other.value_, Value{});
    }
    return *this;
  }

  [[nodiscard]] Value get() const noexcept { return value_; }
  [[nodiscard]] const Api* api() const noexcept { return api_; }
  explicit operator bool() const noexcept { return value_ != Value{}; }

  // Releases the object now; the Handle is empty afterwards whatever the outcome (a failed
  // release cannot be retried safely on any driver cuhal knows).
  [[nodiscard]] Status Reset() noexcept {
    if (value_ == Value{} || api_ == nullptr) {
      value_ = Value{};
      return OkStatus();
    }
    Value value = std::exchange(value_, Value{});
    return Traits::Destroy(*api_, value);
  }

  // Gives up ownership without releasing; the caller now owns the object.
  [[nodiscard]] Value Release() noexcept { return std::exchange(value_, Value{}); }

 private:
  const Api* api_ = nullptr;
  Value value_{};
};

}  // namespace cuhal

#endif  // CUHAL_CORE_BASE_HANDLE_H_
