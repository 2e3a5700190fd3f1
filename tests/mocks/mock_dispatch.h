// Copyright 2026 The cuhal Authors.
// The machinery shared by MockCudaApi and MockNcclApi: a registry of the "current" mock of each
// type, and the static trampolines that a table of plain C function pointers points at.
//
// Invariants (what makes a call through a mock-filled table safe):
//  1. A table entry is a static function Trampoline<Mock, Member, ...>::Call. It holds no pointer
//     to a mock; it asks MockRegistry<Mock> for the current mock on every call.
//  2. The current mock is the one that most recently filled a table (Mock::Fill). It stops being
//     current when its destructor runs, or when another mock of the same type fills a table.
//  3. A call holds a lease on the mock it entered (under the registry's mutex, the mock cannot be
//     unbound between "read the current mock" and "count the call as in flight"). The mock's
//     destructor unbinds it first and then waits until no call is inside it, so a mock is never
//     destroyed under a running call.
//  4. A call that finds no current mock (the mock is gone, or no mock ever filled a table), or
//     that trompeloeil rejects (no matching expectation: trompeloeil reports it as fatal, which
//     the GoogleTest adapter turns into an exception), is reported as a GoogleTest failure and
//     returns a failure value (CUDA_ERROR_UNKNOWN, ncclInternalError, or a fixed string). No
//     exception ever leaves a trampoline: the caller is C-style code, often a noexcept destructor.
#ifndef CUHAL_TESTS_MOCKS_MOCK_DISPATCH_H_
#define CUHAL_TESTS_MOCKS_MOCK_DISPATCH_H_

// GoogleTest first: <gtest/trompeloeil.hpp> needs it, and routes trompeloeil's reports to it.
// Every translation unit that uses trompeloeil must include the adapter (it specializes
// trompeloeil's reporter inline), so include the mock headers, never <trompeloeil.hpp> alone.
#include <gtest/gtest.h>
#include <gtest/trompeloeil.hpp>

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <type_traits>
#include <unordered_map>

namespace cuhal::mocks::internal {

// The "current mock" of type Mock, process-wide (the C function pointers of a table carry no
// user data, so a table cannot name its mock). Thread-safe: all state is guarded by mu_.
template <typename Mock>
class MockRegistry {
 public:
  static MockRegistry& Get() {
    // Never destroyed: a call may still arrive from a thread that outlives static destruction.
    static MockRegistry* const registry = new MockRegistry;
    return *registry;
  }

  // Makes `mock` the current one (the previous one, if any, stops receiving calls).
  void Bind(Mock* mock) {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = mock;
  }

  // Stops routing calls to `mock` and waits until every call already inside it has returned.
  // Must not be called from inside one of `mock`'s own actions (it would wait for itself).
  void Unbind(const Mock* mock) {
    std::unique_lock<std::mutex> lock(mu_);
    if (current_ == mock) current_ = nullptr;
    idle_.wait(lock, [&] { return in_flight_.find(mock) == in_flight_.end(); });
  }

  // A call's hold on the mock it entered; empty when there was no current mock.
  class Lease {
   public:
    explicit Lease(MockRegistry& registry) : registry_(registry) {
      std::lock_guard<std::mutex> lock(registry_.mu_);
      mock_ = registry_.current_;
      if (mock_ != nullptr) ++registry_.in_flight_[mock_];
    }
    ~Lease() {
      if (mock_ == nullptr) return;
      std::lock_guard<std::mutex> lock(registry_.mu_);
      auto it = registry_.in_flight_.find(mock_);
      if (--it->second == 0) {
        registry_.in_flight_.erase(it);
        registry_.idle_.notify_all();
      }
    }
    Lease(const Lease&) = delete;             // one lease, one decrement
    Lease& operator=(const Lease&) = delete;  // ditto
    [[nodiscard]] Mock* mock() const { return mock_; }

   private:
    MockRegistry& registry_;
    Mock* mock_ = nullptr;
  };

 private:
  MockRegistry() = default;

  std::mutex mu_;
  std::condition_variable idle_;
  Mock* current_ = nullptr;                          // guarded by mu_
  std::unordered_map<const Mock*, int> in_flight_;  // guarded by mu_; only entries > 0
};

// What a trampoline returns when it could not get an answer from a mock.
template <typename Mock, typename R>
R FailureValue() {
  if constexpr (std::is_same_v<R, const char*>) {
    return "cuhal mock: call not answered (see the GoogleTest failure)";
  } else {
    return Mock::kFailureResult;
  }
}

// The static function a table entry points at: forwards to member function `Member` of the current
// Mock. `Offset` is the entry's offset in the table, used only to name the entry in failures.
template <typename Mock, auto Member, std::size_t Offset, typename Sig>
struct Trampoline;

template <typename Mock, auto Member, std::size_t Offset, typename R, typename... A>
struct Trampoline<Mock, Member, Offset, R(A...)> {
  static R Call(A... args) noexcept {
    typename MockRegistry<Mock>::Lease lease(MockRegistry<Mock>::Get());
    if (lease.mock() == nullptr) {
      ADD_FAILURE() << Mock::kMockName << ": " << Mock::EntryName(Offset)
                    << " was called through a table whose mock is gone (destroyed, or "
                       "replaced by another mock's Fill), or was never filled";
      return FailureValue<Mock, R>();
    }
    try {
      return (lease.mock()->*Member)(args...);
    } catch (const trompeloeil::expectation_violation& e) {
      ADD_FAILURE() << Mock::kMockName << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << Mock::kMockName << ": an action of " << Mock::EntryName(Offset)
                    << " threw: " << e.what();
    } catch (...) {
      ADD_FAILURE() << Mock::kMockName << ": an action of " << Mock::EntryName(Offset)
                    << " threw a non-std exception";
    }
    return FailureValue<Mock, R>();
  }
};

}  // namespace cuhal::mocks::internal

#endif  // CUHAL_TESTS_MOCKS_MOCK_DISPATCH_H_
