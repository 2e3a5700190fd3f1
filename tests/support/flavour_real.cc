// Copyright 2026 The cuhal Authors.
// The real flavour (tests/support/flavour.h): the installed libcuda.so.1 and libnccl.so.2, one
// rank. Linked together with real_asan_options.cc (object library cuhal_test_flavour_real).
#include "tests/support/flavour.h"

namespace cuhal::testing {

const TestFlavour& CompiledFlavour() {
  static constexpr TestFlavour kReal{
      .name = "real", .backends = "real", .nccl_backends = "real", .real = true};
  return kReal;
}

}  // namespace cuhal::testing
