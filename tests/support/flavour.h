// Copyright 2026 The cuhal Authors.
// The flavour of a test executable: which backends its parameterized suites run. A conformance
// suite is compiled once (an object library) and linked into two executables, `<stem>_fake_test`
// and `<stem>_real_test` (cuhal_add_backend_tests in tests/CMakeLists.txt); the only difference
// between them is the flavour object each links:
//   fake: "fake,fake_adversarial" for the CUDA suites, "fake,fake_adversarial" for the NCCL ones;
//   real: "real" for both, one rank for multi-rank suites, and the ASan options the real driver
//         needs (tests/support/real_asan_options.cc).
// An executable that links no flavour object runs the default (weak) flavour, defined in
// flavour.cc: "fake,fake_adversarial" for CUDA, "fake" for NCCL.
#ifndef CUHAL_TESTS_SUPPORT_FLAVOUR_H_
#define CUHAL_TESTS_SUPPORT_FLAVOUR_H_

namespace cuhal::testing {

struct TestFlavour {
  const char* name;           // "fake", "real" or "default"
  const char* backends;       // CompiledBackends' list (tests/support/backend.h)
  const char* nccl_backends;  // CompiledNcclBackends' list (tests/fakenccl/nccl_support.h)
  bool real;                  // runs the installed driver: multi-rank suites run one rank
};

// The flavour linked into this executable.
const TestFlavour& CompiledFlavour();

}  // namespace cuhal::testing

#endif  // CUHAL_TESTS_SUPPORT_FLAVOUR_H_
