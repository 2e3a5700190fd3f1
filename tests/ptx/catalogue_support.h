// Copyright 2026 The cuhal Authors.
// Helpers of the PTX catalogue tests: the catalogue's PTX text, a module fixture and device
// buffers over a CudaApi table.
#ifndef CUHAL_TESTS_PTX_CATALOGUE_SUPPORT_H_
#define CUHAL_TESTS_PTX_CATALOGUE_SUPPORT_H_

#include <cuda.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/symbols/cuda_api.h"

namespace cuhal::testing {

// The PTX nvcc made from tests/ptx/kernels/catalogue.cu at build time; empty (with *why) when
// there is none.
inline std::string CataloguePtx(std::string* why) {
  std::string path = CUHAL_PTX_CATALOGUE;
  if (path.empty()) {
    *why = CUHAL_PTX_SKIP_REASON;
    return "";
  }
  std::ifstream in(path);
  if (!in) {
    *why = "cannot read " + path;
    return "";
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A device buffer of `count` T (freed at destruction).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer(const cuhal::CudaApi& api, std::size_t count) : api_(api), count_(count) {
    EXPECT_EQ(api_.cuMemAlloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)), CUDA_SUCCESS);
  }
  DeviceBuffer(const cuhal::CudaApi& api, const std::vector<T>& host) : DeviceBuffer(api, host.size()) {
    Upload(host);
  }
  ~DeviceBuffer() {
    if (ptr_ != 0) (void)api_.cuMemFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;             // owns the allocation
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;  // ditto

  void Upload(const std::vector<T>& host) {
    ASSERT_EQ(api_.cuMemcpyHtoD(ptr_, host.data(), host.size() * sizeof(T)), CUDA_SUCCESS);
  }
  std::vector<T> Download() const {
    std::vector<T> out(count_);
    EXPECT_EQ(api_.cuMemcpyDtoH(out.data(), ptr_, count_ * sizeof(T)), CUDA_SUCCESS);
    return out;
  }
  CUdeviceptr ptr() const { return ptr_; }
  CUdeviceptr* slot() { return &ptr_; }

 private:
  const cuhal::CudaApi& api_;
  std::size_t count_;
  CUdeviceptr ptr_ = 0;
};

}  // namespace cuhal::testing

#endif  // CUHAL_TESTS_PTX_CATALOGUE_SUPPORT_H_
