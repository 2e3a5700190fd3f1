// Copyright 2026 The cuhal Authors.
#include "tests/support/backend.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/base/env.h"
#include "core/symbols/api_status.h"
#include "core/symbols/real_loader.h"

void PrintTo(CUresult result, std::ostream* os) {
  std::string_view name = cuhal::CudaResultEnumName(result);
  if (name.empty()) {
    *os << "CUresult " << static_cast<int>(result);
  } else {
    *os << name << " (" << static_cast<int>(result) << ")";
  }
}

namespace cuhal::testing {
namespace {

constexpr std::string_view kFake = "fake";
constexpr std::string_view kFakeAdversarial = "fake_adversarial";
constexpr std::string_view kReal = "real";

// The process-wide real driver table: loaded once (libcuda stays mapped for the process).
struct RealDriver {
  std::unique_ptr<RealCuda> cuda;
  std::string unavailable;  // why it cannot be used here (skip)
  std::string error;        // why it failed although it should work (failure)
};

const RealDriver& LoadRealDriver() {
  static const RealDriver* driver = [] {
    auto* d = new RealDriver;  // never freed: outlives every test, like libcuda itself
    const std::string path = ResolveLibraryPath("", kLibcudaPathEnv, kDefaultLibcudaName);
    StatusOr<std::unique_ptr<RealCuda>> loaded = RealCuda::Load();
    if (!loaded.ok()) {
      if (loaded.status().code() == StatusCode::kUnavailable ||
          loaded.status().code() == StatusCode::kFailedPrecondition) {
        d->unavailable = "no usable CUDA driver (" + path + ", set " + kLibcudaPathEnv +
                         " to choose another): " + loaded.status().ToString();
      } else {
        d->error = "RealCuda::Load(): " + loaded.status().ToString();
      }
      return d;
    }
    d->cuda = std::move(loaded).value();
    if (d->cuda->loaded_path().find("/stubs/") != std::string::npos) {
      d->unavailable = d->cuda->loaded_path() + " is the CUDA toolkit's link stub, not a driver";
      d->cuda.reset();
    }
    return d;
  }();
  return *driver;
}

}  // namespace

StatusOr<bool> RealRequired() { return env::ReadBool("CUHAL_REAL_REQUIRED", false); }

void RealUnreachable(const std::string& why, std::string* unavailable, std::string* error) {
  StatusOr<bool> required = RealRequired();
  if (!required.ok()) {
    *error = why + "; and " + required.status().message();
  } else if (*required) {
    *error = why + " (and CUHAL_REAL_REQUIRED is on)";
  } else {
    *unavailable = why;
  }
}

std::string ResultName(CUresult result) {
  std::string_view name = cuhal::CudaResultEnumName(result);
  if (name.empty()) return "CUresult " + std::to_string(static_cast<int>(result));
  return std::string(name);
}

fakecuda::DriverOptions FakeOptions(const BackendOptions& options) {
  fakecuda::DriverOptions out;
  out.policy = options.policy;
  out.seed = options.seed;
  out.idle_release_us = options.idle_release_us;
  out.devices = fakecuda::DistinctDevices(fakecuda::BuiltinH200Profile(), options.device_count);
  return out;
}

std::unique_ptr<Backend> Backend::Create(std::string_view name, BackendOptions options,
                                         std::string* unavailable, std::string* error) {
  auto backend = std::unique_ptr<Backend>(new Backend);
  backend->name_ = std::string(name);
  if (name == kFake || name == kFakeAdversarial) {
    if (name == kFakeAdversarial) options.policy = fakecuda::SchedulePolicy::kAdversarial;
    backend->kind_ = BackendKind::kFake;
    backend->policy_ = options.policy;
    std::string invalid;
    backend->fake_ = fakecuda::ScopedDriver::Create(FakeOptions(options), &invalid);
    if (backend->fake_ == nullptr) {
      *error = "fake driver options: " + invalid;
      return nullptr;
    }
    fakecuda::FillCudaApi(&backend->api_);
    if (options.init) {
      if (CUresult r = backend->api_.cuInit(0); r != CUDA_SUCCESS) {
        *error = "fake cuInit(0) = " + ResultName(r);
        return nullptr;
      }
    }
    return backend;
  }
  if (name == kReal) {
    // An invalid CUHAL_REAL_REQUIRED fails every real test, not only those that cannot run.
    if (StatusOr<bool> required = RealRequired(); !required.ok()) {
      *error = required.status().message();
      return nullptr;
    }
    const RealDriver& real = LoadRealDriver();
    if (real.cuda == nullptr) {
      if (!real.error.empty()) {
        *error = real.error;
      } else {
        RealUnreachable(real.unavailable, unavailable, error);
      }
      return nullptr;
    }
    backend->kind_ = BackendKind::kReal;
    backend->api_ = real.cuda->api();
    if (options.init) {
      CUresult r = backend->api_.cuInit(0);
      if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY ||
          r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
        RealUnreachable(real.cuda->loaded_path() + ": cuInit(0) = " + ResultName(r), unavailable,
                        error);
        return nullptr;
      }
      if (r != CUDA_SUCCESS) {
        *error = real.cuda->loaded_path() + ": cuInit(0) = " + ResultName(r);
        return nullptr;
      }
    }
    return backend;
  }
  *error = "unknown test backend '" + std::string(name) + "' (fake, fake_adversarial, real)";
  return nullptr;
}

Backend::~Backend() = default;

bool Backend::can_hold_work() const {
  return kind_ == BackendKind::kReal || policy_ == fakecuda::SchedulePolicy::kAdversarial;
}

std::vector<std::string> ParseBackendList(std::string_view list, BackendFilter filter) {
  std::vector<std::string> out;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    if (filter == BackendFilter::kHeldWork && item == kFake) continue;  // runs work inline
    if (filter == BackendFilter::kFakeOnly && item != kFake && item != kFakeAdversarial) continue;
    out.emplace_back(item);
  }
  return out;
}

std::string BackendParamName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

void BackendTest::SetUp() {
  std::string unavailable;
  std::string error;
  backend_ = Backend::Create(GetParam(), Options(), &unavailable, &error);
  if (backend_ == nullptr) {
    if (!error.empty()) FAIL() << error;
    GTEST_SKIP() << unavailable;
  }
}

void BackendTest::TearDown() {
  if (backend_ == nullptr) return;
  const CudaApi& a = backend_->api();
  // A test must leave the calling thread's context stack as it found it (empty).
  CUcontext current = nullptr;
  if (a.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != nullptr) {
    ADD_FAILURE() << "the test left a context current on the test thread";
    for (int i = 0; i < 16 && current != nullptr; ++i) {
      if (a.cuCtxPopCurrent(nullptr) != CUDA_SUCCESS) break;
      if (a.cuCtxGetCurrent(&current) != CUDA_SUCCESS) break;
    }
  }
  if (backend_->is_fake() && CheckLeaksOnTearDown()) {
    fakecuda::Inventory live = backend_->fake()->LiveObjects();
    EXPECT_EQ(live.Total(), 0) << "leaked: " << live.ToString() << "\n"
                               << backend_->fake()->LeakReport();
  }
  backend_.reset();
}

CUresult CreateContext(const CudaApi& api, CUcontext* ctx, unsigned flags, CUdevice device) {
  CUctxCreateParams params;
  std::memset(&params, 0, sizeof(params));
  return api.cuCtxCreate(ctx, &params, flags, device);
}

ScopedPrimaryContext::ScopedPrimaryContext(const CudaApi& api, CUdevice device)
    : api_(api), device_(device) {
  result_ = api_.cuDevicePrimaryCtxRetain(&ctx_, device_);
  if (result_ != CUDA_SUCCESS) return;
  retained_ = true;
  result_ = api_.cuCtxPushCurrent(ctx_);
  pushed_ = result_ == CUDA_SUCCESS;
}

ScopedPrimaryContext::~ScopedPrimaryContext() {
  if (pushed_) {
    CUcontext popped = nullptr;
    CUresult r = api_.cuCtxPopCurrent(&popped);
    EXPECT_EQ(r, CUDA_SUCCESS) << "popping the primary context";
    EXPECT_EQ(popped, ctx_) << "the primary context was not on top of the stack";
  }
  if (retained_) {
    EXPECT_EQ(api_.cuDevicePrimaryCtxRelease(device_), CUDA_SUCCESS)
        << "releasing the primary context";
  }
}

ScopedPushContext::ScopedPushContext(const CudaApi& api, CUcontext ctx)
    : api_(api), result_(api.cuCtxPushCurrent(ctx)) {}

ScopedPushContext::~ScopedPushContext() {
  if (result_ == CUDA_SUCCESS) api_.cuCtxPopCurrent(nullptr);
}

StreamGate::~StreamGate() {
  Open();
  if (helper_.joinable()) helper_.join();
}

void CUDA_CB StreamGate::Run(void* self) {
  auto* gate = static_cast<StreamGate*>(self);
  std::unique_lock<std::mutex> lock(gate->mu_);
  gate->started_ = true;
  gate->cv_.notify_all();
  gate->cv_.wait(lock, [gate] { return gate->open_; });
  gate->finished_.store(true);
}

CUresult StreamGate::Close(const CudaApi& api, CUcontext ctx, CUstream stream) {
  CUevent after = nullptr;
  if (CUresult r = api.cuEventCreate(&after, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS) return r;
  if (CUresult r = api.cuLaunchHostFunc(stream, &StreamGate::Run, this); r != CUDA_SUCCESS) {
    api.cuEventDestroy(after);
    return r;
  }
  CUresult record = api.cuEventRecord(after, stream);
  // The helper waits for the gate's completion: on the fake's adversarial policy that wait is
  // what runs the host function (on the helper, not on the test thread); on the real driver it
  // merely waits. It alone touches `after`, which it destroys.
  helper_ = std::thread([&api, ctx, after, record] {
    ScopedPushContext push(api, ctx);
    if (record == CUDA_SUCCESS) api.cuEventSynchronize(after);
    api.cuEventDestroy(after);
  });
  if (record != CUDA_SUCCESS) return record;
  std::unique_lock<std::mutex> lock(mu_);
  // Bounds a wait that must end; a test that reaches the limit fails rather than hangs.
  if (!cv_.wait_for(lock, std::chrono::seconds(60), [this] { return started_; })) {
    return CUDA_ERROR_TIMEOUT;
  }
  return CUDA_SUCCESS;
}

void StreamGate::Open() {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = true;
  cv_.notify_all();
}

CUresult PollUntilReady(const std::function<CUresult()>& query, int max_polls) {
  CUresult r = CUDA_ERROR_NOT_READY;
  for (int i = 0; i < max_polls; ++i) {
    r = query();
    if (r != CUDA_ERROR_NOT_READY) return r;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return r;
}

namespace {
struct AppendCall {
  OrderLog* log;
  int value;
};
void CUDA_CB RunAppend(void* data) {
  std::unique_ptr<AppendCall> call(static_cast<AppendCall*>(data));
  call->log->Append(call->value);
}
}  // namespace

CUresult LaunchAppend(const CudaApi& api, CUstream stream, OrderLog* log, int value) {
  auto call = std::make_unique<AppendCall>(AppendCall{log, value});
  CUresult r = api.cuLaunchHostFunc(stream, &RunAppend, call.get());
  if (r == CUDA_SUCCESS) call.release();  // RunAppend owns it now
  return r;
}

}  // namespace cuhal::testing
