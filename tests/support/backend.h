// Copyright 2026 The cuhal Authors.
// Test backends: one CudaApi table per backend ("fake", "fake_adversarial", "real"), so that one
// test body runs against fakecuda and against the installed CUDA driver.
//
//   class StreamTest : public cuhal::testing::BackendTest {};
//   TEST_P(StreamTest, QueryOfIdleStreamSucceeds) {
//     cuhal::testing::ScopedPrimaryContext ctx(api());
//     ASSERT_EQ(ctx.result(), CUDA_SUCCESS);
//     ...
//   }
//   CUHAL_INSTANTIATE_BACKEND_TEST(StreamTest);
//
// Which backends an executable runs is fixed when it is linked: by its flavour
// (tests/support/flavour.h), "fake,fake_adversarial" or "real". cuhal_add_backend_tests
// (tests/CMakeLists.txt) compiles a suite once and links it twice, labelled "fake" and "real" in
// CTest.
//
// The real backend is skipped, with the reason printed, when libcuda.so.1 cannot be loaded, is
// the toolkit's link stub, is older than cuda.h, or cuInit reports no device. Set
// CUHAL_REAL_REQUIRED=1 (a boolean; the GPU nightly sets it) to turn such a skip into a failure.
//
// The real table is RealCuda::Load's, unchanged: it is what is under test (including its binding
// of cuCtxSynchronize, cuCtxGetDevice and cuStreamGetCtx to the ABI cuda.h declares; see
// kAbiPins in core/symbols/real_loader.cc).
#ifndef CUHAL_TESTS_SUPPORT_BACKEND_H_
#define CUHAL_TESTS_SUPPORT_BACKEND_H_

#include <cuda.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/base/status_or.h"
#include "core/symbols/cuda_api.h"
#include "fakecuda/fake_driver.h"
#include "tests/support/flavour.h"

// gtest prints CUresult values by their cuda.h names ("CUDA_ERROR_INVALID_VALUE (1)") instead of
// bare numbers. Found by argument-dependent lookup (CUresult lives in the global namespace).
void PrintTo(CUresult result, std::ostream* os);

namespace cuhal::testing {

enum class BackendKind { kFake, kReal };

// What a backend is made with. The real backend ignores every field but `init`.
struct BackendOptions {
  fakecuda::SchedulePolicy policy = fakecuda::SchedulePolicy::kEager;  // overridden by the name
  std::uint64_t seed = 0;
  int device_count = 1;  // fake H200s, each with its own PCI bus id and UUID
  bool init = true;      // call cuInit(0) when the backend is made
  // fakecuda::DriverOptions::idle_release_us (adversarial policy); 0 never releases idle work.
  std::uint64_t idle_release_us = fakecuda::DriverOptions{}.idle_release_us;
};

// One CUDA driver behind a CudaApi table.
//
// Ownership: the fake backend owns its fakecuda::FakeDriver and keeps it installed for its
// lifetime (one fake backend at a time per process); the real backend shares one process-wide
// RealCuda (libcuda stays loaded for the process anyway). Thread-safety: api() may be used from
// any thread; Create/destruction from one thread.
class Backend {
 public:
  // Makes the backend `name` ("fake", "fake_adversarial", "real"). Returns null with *unavailable
  // set (a reason meant for GTEST_SKIP) when it cannot run here; with *error set (meant for a
  // failure) when it should run but does not.
  static std::unique_ptr<Backend> Create(std::string_view name, BackendOptions options,
                                         std::string* unavailable, std::string* error);
  ~Backend();
  Backend(const Backend&) = delete;             // owns an installed fake driver
  Backend& operator=(const Backend&) = delete;  // ditto

  const cuhal::CudaApi& api() const { return api_; }
  const std::string& name() const { return name_; }
  BackendKind kind() const { return kind_; }
  bool is_fake() const { return kind_ == BackendKind::kFake; }
  bool is_real() const { return kind_ == BackendKind::kReal; }
  // True when work can be held pending on a stream with a StreamGate: the real driver and the
  // fake's adversarial policy. The eager fake runs a host function inside the call that
  // enqueues it, so a gate would block the enqueuing thread.
  bool can_hold_work() const;
  // The fake driver (fault injection, inventory), or null for the real backend.
  fakecuda::FakeDriver* fake() const { return fake_ ? &fake_->driver() : nullptr; }

 private:
  Backend() = default;
  std::string name_;
  BackendKind kind_ = BackendKind::kFake;
  fakecuda::SchedulePolicy policy_ = fakecuda::SchedulePolicy::kEager;
  cuhal::CudaApi api_;
  std::unique_ptr<fakecuda::ScopedDriver> fake_;
};

// Fake driver options for `count` H200s (distinct PCI bus ids and UUIDs).
fakecuda::DriverOptions FakeOptions(const BackendOptions& options);

// CUHAL_REAL_REQUIRED (a boolean, default off): when on, a test that cannot reach the real
// driver or NCCL fails instead of being skipped. INVALID_ARGUMENT for an invalid value.
StatusOr<bool> RealRequired();
// Files `why` (the real driver or NCCL cannot be reached here) as a skip, in *unavailable, or as
// a failure, in *error: a failure when CUHAL_REAL_REQUIRED is on, or is invalid (then *error also
// names the variable and its value).
void RealUnreachable(const std::string& why, std::string* unavailable, std::string* error);

// Which backends of a list a test suite runs on.
enum class BackendFilter {
  kAll,
  kHeldWork,  // those whose can_hold_work() is true
  kFakeOnly,  // the fake ones (tests of the fake's own features: fault injection, 8 devices)
};
// Parses a comma-separated backend list ("fake,fake_adversarial") and keeps the backends `filter` allows.
std::vector<std::string> ParseBackendList(std::string_view list, BackendFilter filter);

// The backends of this executable's flavour.
inline std::vector<std::string> CompiledBackends(BackendFilter filter = BackendFilter::kAll) {
  return ParseBackendList(CompiledFlavour().backends, filter);
}

// "CUDA_ERROR_INVALID_VALUE" (or "CUresult 12345").
std::string ResultName(CUresult result);

// Base fixture of the conformance suite: SetUp makes the backend named by the test parameter
// (skipping when it is unavailable), TearDown checks the test left no current context behind
// and, on the fake, leaked nothing.
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Override to change how the backend is made (policy, seed, devices, init).
  virtual BackendOptions Options() const { return {}; }
  // Override to return false where a test leaks on purpose.
  virtual bool CheckLeaksOnTearDown() const { return true; }

  void SetUp() override;
  void TearDown() override;

  const cuhal::CudaApi& api() const { return backend_->api(); }
  Backend& backend() { return *backend_; }
  bool IsFake() const { return backend_->is_fake(); }
  bool IsReal() const { return backend_->is_real(); }
  fakecuda::FakeDriver& fake() { return *backend_->fake(); }

  std::unique_ptr<Backend> backend_;
};

// "fake", "fake_adversarial", "real" as gtest parameter names.
std::string BackendParamName(const ::testing::TestParamInfo<std::string>& info);

#define CUHAL_INSTANTIATE_BACKEND_TEST(Suite)                                         \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                           \
                           ::testing::ValuesIn(::cuhal::testing::CompiledBackends()), \
                           ::cuhal::testing::BackendParamName)
// For suites that hold work pending with StreamGate (the eager fake cannot).
#define CUHAL_INSTANTIATE_HELD_WORK_TEST(Suite)                                    \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                        \
                           ::testing::ValuesIn(::cuhal::testing::CompiledBackends( \
                               ::cuhal::testing::BackendFilter::kHeldWork)),       \
                           ::cuhal::testing::BackendParamName)
// For suites of the fake's own features; instantiates nothing in the real executable.
#define CUHAL_INSTANTIATE_FAKE_ONLY_TEST(Suite)                                    \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Suite);                            \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                        \
                           ::testing::ValuesIn(::cuhal::testing::CompiledBackends( \
                               ::cuhal::testing::BackendFilter::kFakeOnly)),       \
                           ::cuhal::testing::BackendParamName)

// cuCtxCreate with a zeroed CUctxCreateParams (no execution affinity, no CIG): the explicit form
// of what a NULL ctxCreateParams means (the real cuCtxCreate_v4 accepts NULL too, measured on the
// H200; ContextTest.CtxCreatePushesTheNewContext checks both).
CUresult CreateContext(const cuhal::CudaApi& api, CUcontext* ctx, unsigned flags, CUdevice device);

// Retains the primary context of `device` and pushes it on the calling thread's context stack;
// the destructor pops it and releases it. Check result() before relying on it.
class ScopedPrimaryContext {
 public:
  explicit ScopedPrimaryContext(const cuhal::CudaApi& api, CUdevice device = 0);
  ~ScopedPrimaryContext();
  ScopedPrimaryContext(const ScopedPrimaryContext&) = delete;             // owns a retain
  ScopedPrimaryContext& operator=(const ScopedPrimaryContext&) = delete;  // ditto

  CUresult result() const { return result_; }
  CUcontext get() const { return ctx_; }

 private:
  const cuhal::CudaApi& api_;
  CUdevice device_;
  CUcontext ctx_ = nullptr;
  bool retained_ = false;
  bool pushed_ = false;
  CUresult result_ = CUDA_SUCCESS;
};

// A BackendTest whose every test runs with device 0's primary context retained and current
// (ctx()). Subclasses that override SetUp/TearDown call these first/last.
class PrimaryContextTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ctx_ = std::make_unique<ScopedPrimaryContext>(api());
    ASSERT_EQ(ctx_->result(), CUDA_SUCCESS);
  }
  void TearDown() override {
    ctx_.reset();
    BackendTest::TearDown();
  }
  CUcontext ctx() const { return ctx_->get(); }

  std::unique_ptr<ScopedPrimaryContext> ctx_;
};

// Pushes `ctx` on the calling thread's stack for the scope (for helper threads).
class ScopedPushContext {
 public:
  ScopedPushContext(const cuhal::CudaApi& api, CUcontext ctx);
  ~ScopedPushContext();
  ScopedPushContext(const ScopedPushContext&) = delete;
  ScopedPushContext& operator=(const ScopedPushContext&) = delete;
  CUresult result() const { return result_; }

 private:
  const cuhal::CudaApi& api_;
  CUresult result_;
};

// Holds a stream's later work back: Close() enqueues a host function that blocks until Open().
// Everything enqueued on the stream after Close() stays pending (cuStreamQuery answers
// CUDA_ERROR_NOT_READY) until Open().
//
// Where the host function runs: on the real driver, on the driver's callback thread; on the
// fake's adversarial policy, on a helper thread that synchronizes on an event recorded right
// after it (so neither the test thread nor the fake's scheduler blocks on it). Close() returns
// once the host function has started. Not for the eager fake (see Backend::can_hold_work).
//
// The destructor opens the gate and joins the helper, so a failing test never hangs on it.
class StreamGate {
 public:
  StreamGate() = default;
  ~StreamGate();
  StreamGate(const StreamGate&) = delete;             // a running host function points at it
  StreamGate& operator=(const StreamGate&) = delete;  // ditto

  // `ctx` must be current on the calling thread and own `stream`. Returns the first failing
  // driver call's result, or CUDA_ERROR_TIMEOUT when the host function did not start.
  CUresult Close(const cuhal::CudaApi& api, CUcontext ctx, CUstream stream);
  void Open();
  // Whether the host function has returned.
  bool finished() const { return finished_.load(); }

 private:
  static void CUDA_CB Run(void* self);

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;  // guarded by mu_
  bool open_ = false;     // guarded by mu_
  std::atomic<bool> finished_{false};
  std::thread helper_;
};

// Calls `query` (a cuStreamQuery/cuEventQuery) until it answers something other than
// CUDA_ERROR_NOT_READY or `max_polls` calls were made, sleeping briefly between calls; returns
// the last answer. Not a timing assertion: it bounds a wait that must end.
CUresult PollUntilReady(const std::function<CUresult()>& query, int max_polls = 20000);

// A host function that appends `value` to a shared log (for ordering checks).
struct OrderLog {
  std::mutex mu;
  std::vector<int> entries;  // guarded by mu

  void Append(int value) {
    std::lock_guard<std::mutex> lock(mu);
    entries.push_back(value);
  }
  std::vector<int> Snapshot() {
    std::lock_guard<std::mutex> lock(mu);
    return entries;
  }
};
// cuLaunchHostFunc(stream, <append value to log>); `log` must outlive the call's execution.
CUresult LaunchAppend(const cuhal::CudaApi& api, CUstream stream, OrderLog* log, int value);

// Resolves the entry point `name` through the driver's cuGetProcAddress at CUDA_VERSION into
// *fn (the tests of entry points CudaApi does not carry); false, with *fn untouched, when the
// driver has no cuGetProcAddress or no such entry.
template <typename Fn>
bool ResolveEntry(const cuhal::CudaApi& api, const char* name, Fn** fn) {
  if (api.cuGetProcAddress == nullptr) return false;
  void* p = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (api.cuGetProcAddress(name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
          CUDA_SUCCESS ||
      p == nullptr) {
    return false;
  }
  *fn = reinterpret_cast<Fn*>(p);
  return true;
}

}  // namespace cuhal::testing

#endif  // CUHAL_TESTS_SUPPORT_BACKEND_H_
