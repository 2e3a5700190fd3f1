// Copyright 2026 The cuhal Authors.
// The fixture of the fake-only tests (fault injection, scheduler, sticky errors): a fresh fake
// driver per test, made and remade with chosen options.
#ifndef CUHAL_TESTS_FAKECUDA_FAKE_FIXTURE_H_
#define CUHAL_TESTS_FAKECUDA_FAKE_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/support/backend.h"

namespace cuhal::testing {

class FakeDriverTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Remake(BackendOptions{})); }
  void TearDown() override { backend_.reset(); }

  // Replaces the driver with a new one (the old one must hold nothing the test still uses).
  void Remake(BackendOptions options) {
    backend_.reset();
    std::string unavailable;
    std::string error;
    backend_ = Backend::Create("fake", options, &unavailable, &error);
    ASSERT_NE(backend_, nullptr) << error << unavailable;
  }
  void Remake(fakecuda::SchedulePolicy policy, std::uint64_t seed = 0) {
    BackendOptions options;
    options.policy = policy;
    options.seed = seed;
    Remake(options);
  }

  const CudaApi& api() const { return backend_->api(); }
  fakecuda::FakeDriver& fake() { return *backend_->fake(); }
  fakecuda::FaultInjector& faults() { return fake().faults(); }

  std::unique_ptr<Backend> backend_;
};

}  // namespace cuhal::testing

#endif  // CUHAL_TESTS_FAKECUDA_FAKE_FIXTURE_H_
