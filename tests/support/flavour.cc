// Copyright 2026 The cuhal Authors.
// The default flavour (tests/support/flavour.h), weak: a flavour object linked into the
// executable (flavour_fake.cc, flavour_real.cc) replaces it.
#include "tests/support/flavour.h"

namespace cuhal::testing {

[[gnu::weak]] const TestFlavour& CompiledFlavour() {
  static constexpr TestFlavour kDefault{.name = "default",
                                        .backends = "fake,fake_adversarial",
                                        .nccl_backends = "fake",
                                        .real = false};
  return kDefault;
}

}  // namespace cuhal::testing
