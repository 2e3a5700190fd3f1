// Copyright 2026 The cuhal Authors.
#include "bench/bench_backend.h"

#include <memory>
#include <string_view>
#include <utility>

#include "core/symbols/api_status.h"
#include "core/symbols/real_loader.h"
#include "fakecuda/fake_driver.h"

namespace cuhal::bench {
namespace {

void RetainPrimary(Backend* b) {
  if (CUresult r = b->api->cuInit(0); r != CUDA_SUCCESS) {
    b->unavailable = "cuInit(0) = " + ResultName(r);
    return;
  }
  if (CUresult r = b->api->cuDevicePrimaryCtxRetain(&b->ctx, 0); r != CUDA_SUCCESS) {
    b->unavailable = "cuDevicePrimaryCtxRetain = " + ResultName(r);
  }
}

}  // namespace

std::string ResultName(CUresult result) {
  std::string_view name = CudaResultEnumName(result);
  return name.empty() ? "CUresult " + std::to_string(static_cast<int>(result))
                      : std::string(name);
}

const Backend& FakeBackend() {
  static const Backend backend = [] {
    static fakecuda::ScopedDriver driver;
    static CudaApi api;
    fakecuda::FillCudaApi(&api);
    Backend b;
    b.api = &api;
    RetainPrimary(&b);
    return b;
  }();
  return backend;
}

const Backend& RealBackend() {
  static const Backend backend = [] {
    Backend b;
    StatusOr<std::unique_ptr<RealCuda>> loaded = RealCuda::Load();
    if (!loaded.ok()) {
      b.unavailable = "no real driver (libcuda.so.1): " + loaded.status().ToString();
      return b;
    }
    static std::unique_ptr<RealCuda> real = std::move(loaded).value();
    b.api = &real->api();
    RetainPrimary(&b);
    return b;
  }();
  return backend;
}

}  // namespace cuhal::bench
