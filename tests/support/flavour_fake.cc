// Copyright 2026 The cuhal Authors.
// The fake flavour (tests/support/flavour.h): fakecuda and fakenccl, eager and adversarial.
#include "tests/support/flavour.h"

namespace cuhal::testing {

const TestFlavour& CompiledFlavour() {
  static constexpr TestFlavour kFake{.name = "fake",
                                     .backends = "fake,fake_adversarial",
                                     .nccl_backends = "fake,fake_adversarial",
                                     .real = false};
  return kFake;
}

}  // namespace cuhal::testing
