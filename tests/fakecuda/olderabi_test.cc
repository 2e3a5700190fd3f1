// Copyright 2026 The cuhal Authors.
// Conformance: the older ABIs of cuda.h's versioned entry points (issue 14), which the real
// driver still exports under their plain names and which cuGetProcAddress hands out for old
// cudaVersion arguments (fakecuda/entry/olderabi_entry.cc): the 32-bit memory calls (CUDA 2.x),
// the pre-4.0 context/stream/event calls, the CUDA 10/11 graph forms and the CUdevice forms of
// cuMemAdvise / cuMemPrefetchAsync. Each test resolves the old form through cuGetProcAddress at a
// version before the current form and calls it with the old signature. The expectations come
// from ci/gpu-probes/olderabi_probe.cc on the H100 (driver 580.159.04; docs/driver_facts.md,
// "Older ABIs"); one not confirmed there carries "// UNMEASURED" on its line.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/support/backend.h"

namespace cuhal::testing {
namespace {

using DevicePtrV1 = unsigned int;

class OlderAbiTest : public PrimaryContextTest {
 protected:
  // The entry point `name` as cuGetProcAddress hands it out for `version`, or null.
  template <typename Fn>
  Fn Older(const char* name, int version) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (api().cuGetProcAddress == nullptr ||
        api().cuGetProcAddress(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
            CUDA_SUCCESS) {
      return nullptr;
    }
    Fn fn = nullptr;
    static_assert(sizeof(fn) == sizeof(p));
    std::memcpy(&fn, &p, sizeof(fn));
    return fn;
  }
  void* Current(const char* name) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    api().cuGetProcAddress(name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    return p;
  }
};

}  // namespace
}  // namespace cuhal::testing
