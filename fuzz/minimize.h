// Copyright 2026 The cuhal Authors.
// Delta debugging over call sequences: the shortest sub-sequence that still fails.
#ifndef CUHAL_FUZZ_MINIMIZE_H_
#define CUHAL_FUZZ_MINIMIZE_H_

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/sequence.h"

namespace cuhal::fuzz {

// Whether a candidate still shows the failure being minimized.
using FailurePredicate = std::function<bool(const Sequence&)>;

struct MinimizeOptions {
  int max_tests = 3000;  // predicate evaluations at most
  // No evaluation starts after this time (the default: none); the result is then the shortest
  // failing sequence found so far.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Removes calls from `sequence` (which must fail) while `fails` stays true: ddmin over chunks,
// then single calls until no call can go (1-minimal). Removing a call keeps the handle model
// consistent by construction (ids do not move; calls whose handle is gone are skipped by the
// executor, on every backend alike). *tests, when given, receives the number of evaluations.
Sequence Minimize(const Sequence& sequence, const FailurePredicate& fails,
                  MinimizeOptions options = {}, int* tests = nullptr);

// A GoogleTest case that replays `sequence` on the fake and expects `expected` (the other
// backend's transcript, typically the real driver's), ready to paste into a test file linked
// with cuhal_fuzz_lib.
std::string RegressionTest(const std::string& name, const std::string& comment,
                           const Sequence& sequence, const std::vector<std::string>& expected);

}  // namespace cuhal::fuzz

#endif  // CUHAL_FUZZ_MINIMIZE_H_
