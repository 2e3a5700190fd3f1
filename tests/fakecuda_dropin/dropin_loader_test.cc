// Copyright 2026 The cuhal Authors.
// cuhal's real binding (RealCuda: dlopen + cuGetProcAddress_v2 at the header's version) loading
// the drop-in libcuda.so.1: every entry of the table resolves, and the table drives the fake.
// Links cuhal::core only (no fakecuda).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/symbols/real_loader.h"

namespace cuhal {
namespace {

TEST(DropinLoaderTest, RealBindingLoadsTheDropin) {
  CudaLoadOptions options;
  options.library_path = CUHAL_DROPIN_PATH;
  StatusOr<std::unique_ptr<RealCuda>> loaded = RealCuda::Load(options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const RealCuda& cuda = **loaded;
  EXPECT_FALSE(cuda.used_legacy_get_proc_address());
  EXPECT_TRUE(cuda.missing_optional().empty());
  EXPECT_EQ(CountMissingRequired(cuda.api()), 0);
  EXPECT_EQ(cuda.driver_version(), 13000);

  const CudaApi& api = cuda.api();
  ASSERT_EQ(api.cuInit(0), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  ASSERT_EQ(api.cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(api.cuCtxPushCurrent(ctx), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr ptr = 0;
  ASSERT_EQ(api.cuMemAllocAsync(&ptr, 4096, stream), CUDA_SUCCESS);
  std::vector<int> in(1024, 17), out(1024, 0);
  ASSERT_EQ(api.cuMemcpyHtoDAsync(ptr, in.data(), 4096, stream), CUDA_SUCCESS);
  ASSERT_EQ(api.cuMemcpyDtoHAsync(out.data(), ptr, 4096, stream), CUDA_SUCCESS);
  ASSERT_EQ(api.cuMemFreeAsync(ptr, stream), CUDA_SUCCESS);
  ASSERT_EQ(api.cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  const char* text = nullptr;
  EXPECT_EQ(api.cuGetErrorString(CUDA_ERROR_INVALID_HANDLE, &text), CUDA_SUCCESS);
  EXPECT_STREQ(text, "invalid resource handle");
  EXPECT_EQ(api.cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api.cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(api.cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

}  // namespace
}  // namespace cuhal
