// Copyright 2026 The cuhal Authors.
// The drop-in libnccl.so.2, loaded the way an unmodified program would (dlopen, through cuhal's
// RealNccl), running collectives on fakecuda. Two configurations, one executable each:
//   fakenccl_dropin_test       this executable links fakecuda statically and exports its symbols
//                              (-rdynamic): the drop-in finds fakecuda's hooks in it;
//   fakenccl_dropin_pair_test  nothing is linked: the drop-in libcuda.so.1 and libnccl.so.2 are
//                              both dlopened (CUHAL_PAIR_TEST); libnccl.so.2 finds fakecuda's
//                              hooks among libcuda.so.1's exports (fakecuda/dropin/libcuda.map).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/symbols/real_loader.h"

#ifndef CUHAL_PAIR_TEST
#include "fakecuda/fake_driver.h"
#endif

namespace cuhal {
namespace {

struct Tables {
  CudaApi cuda;
  const NcclApi* nccl = nullptr;
  std::string problem;
};

// Loads the drop-in NCCL (once per process: libraries stay loaded) with FAKENCCL_VERSION set, so
// that the version it reports proves the environment was read.
const RealNccl* LoadDropinNccl(std::string* problem) {
  static std::string error;
  static const RealNccl* nccl = [] {
    setenv("FAKENCCL_VERSION", "22901", 1);
    NcclLoadOptions options;
    options.library_path = CUHAL_DROPIN_LIBNCCL;
    StatusOr<std::unique_ptr<RealNccl>> loaded = RealNccl::Load(options);
    if (!loaded.ok()) {
      error = loaded.status().ToString();
      return static_cast<const RealNccl*>(nullptr);
    }
    return static_cast<const RealNccl*>(std::move(loaded).value().release());
  }();
  *problem = error;
  return nccl;
}

class DropinNcclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string problem;
    nccl_lib_ = LoadDropinNccl(&problem);
    ASSERT_NE(nccl_lib_, nullptr) << problem;
#ifdef CUHAL_PAIR_TEST
    static const RealCuda* cuda = [] {
      setenv("FAKECUDA_DEVICES", "2", 0);  // read by the drop-in libcuda.so.1 when it loads
      CudaLoadOptions options;
      options.library_path = CUHAL_DROPIN_LIBCUDA;
      StatusOr<std::unique_ptr<RealCuda>> loaded = RealCuda::Load(options);
      return loaded.ok() ? static_cast<const RealCuda*>(std::move(loaded).value().release())
                         : nullptr;
    }();
    ASSERT_NE(cuda, nullptr) << "cannot load the drop-in libcuda.so.1 " << CUHAL_DROPIN_LIBCUDA;
    cuda_ = cuda->api();
#else
    fakecuda::DriverOptions options;
    options.devices.assign(2, fakecuda::BuiltinH200Profile());
    driver_ = std::make_unique<fakecuda::ScopedDriver>(options);
    fakecuda::FillCudaApi(&cuda_);
#endif
    ASSERT_EQ(cuda_.cuInit(0), CUDA_SUCCESS);
  }

  const NcclApi& nccl() const { return nccl_lib_->api(); }

  const RealNccl* nccl_lib_ = nullptr;
  CudaApi cuda_;
#ifndef CUHAL_PAIR_TEST
  std::unique_ptr<fakecuda::ScopedDriver> driver_;
#endif
};

TEST_F(DropinNcclTest, ExportsNcclAndItsProfilingAliases) {
  EXPECT_EQ(nccl_lib_->version(), 22901);  // FAKENCCL_VERSION
  EXPECT_TRUE(nccl_lib_->missing_optional().empty());
  void* handle = dlopen(CUHAL_DROPIN_LIBNCCL, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  for (const char* name : {"pncclAllReduce", "pncclGetVersion", "ncclBcast", "pncclBcast",
                           "ncclCommRegister", "pncclCommSplit"}) {
    EXPECT_NE(dlsym(handle, name), nullptr) << name;
  }
  // fakenccl's C++ internals stay inside the library.
  EXPECT_EQ(dlsym(handle, "_ZN8fakenccl9InstalledEv"), nullptr);
}

TEST_F(DropinNcclTest, TwoRanksAllReduceOnFakecuda) {
  ncclUniqueId id;
  ASSERT_EQ(nccl().ncclGetUniqueId(&id), ncclSuccess);
  std::vector<std::vector<float>> results(2);
  std::vector<std::string> errors(2);
  auto rank = [&](int r) {
    auto fail = [&](const std::string& what) { errors[static_cast<size_t>(r)] = what; };
    CUcontext ctx = nullptr;
    if (cuda_.cuDevicePrimaryCtxRetain(&ctx, r) != CUDA_SUCCESS) return fail("retain");
    if (cuda_.cuCtxPushCurrent(ctx) != CUDA_SUCCESS) return fail("push");
    CUstream stream = nullptr;
    CUdeviceptr buf = 0;
    std::vector<float> host(8, 1.0f + static_cast<float>(r));
    ncclComm_t comm = nullptr;
    ncclResult_t init = nccl().ncclCommInitRank(&comm, 2, id, r);
    if (init != ncclSuccess) {
      fail(std::string("ncclCommInitRank: ") + nccl().ncclGetErrorString(init) + ": " +
           nccl().ncclGetLastError(nullptr));
    } else if (cuda_.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
               cuda_.cuMemAlloc(&buf, 8 * sizeof(float)) != CUDA_SUCCESS ||
               cuda_.cuMemcpyHtoD(buf, host.data(), 8 * sizeof(float)) != CUDA_SUCCESS) {
      fail("CUDA setup");
    } else if (nccl().ncclAllReduce(reinterpret_cast<void*>(buf), reinterpret_cast<void*>(buf), 8,
                                    ncclFloat32, ncclSum, comm,
                                    reinterpret_cast<cudaStream_t>(stream)) != ncclSuccess) {
      fail(std::string("ncclAllReduce: ") + nccl().ncclGetLastError(nullptr));
    } else if (cuda_.cuStreamSynchronize(stream) != CUDA_SUCCESS ||
               cuda_.cuMemcpyDtoH(host.data(), buf, 8 * sizeof(float)) != CUDA_SUCCESS) {
      fail("CUDA readback");
    } else {
      results[static_cast<size_t>(r)] = host;
    }
    if (comm != nullptr && nccl().ncclCommDestroy(comm) != ncclSuccess) fail("destroy");
    if (buf != 0) (void)cuda_.cuMemFree(buf);
    if (stream != nullptr) (void)cuda_.cuStreamDestroy(stream);
    (void)cuda_.cuCtxPopCurrent(nullptr);
    (void)cuda_.cuDevicePrimaryCtxRelease(r);
  };
  std::thread t0(rank, 0);
  std::thread t1(rank, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(results[0], std::vector<float>(8, 3.0f));
  EXPECT_EQ(results[1], std::vector<float>(8, 3.0f));
}

}  // namespace
}  // namespace cuhal
