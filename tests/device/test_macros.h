// Copyright 2026 The cuhal Authors.
// Assertion helpers for Status and StatusOr in the device core's tests.
#ifndef CUHAL_TESTS_DEVICE_TEST_MACROS_H_
#define CUHAL_TESTS_DEVICE_TEST_MACROS_H_

#include <gtest/gtest.h>

#include <utility>

#include "core/base/status_or.h"

// Fails the test (fatally) unless `expr` is an OK Status.
#define CUHAL_ASSERT_OK(expr)                               \
  do {                                                      \
    const ::cuhal::Status cuhal_assert_status_ = (expr);    \
    ASSERT_TRUE(cuhal_assert_status_.ok()) << cuhal_assert_status_; \
  } while (false)

#define CUHAL_EXPECT_OK(expr)                               \
  do {                                                      \
    const ::cuhal::Status cuhal_expect_status_ = (expr);    \
    EXPECT_TRUE(cuhal_expect_status_.ok()) << cuhal_expect_status_; \
  } while (false)

// `lhs = value of expr`, or a fatal failure printing the status.
#define CUHAL_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  CUHAL_ASSERT_OK_AND_ASSIGN_IMPL_(CUHAL_CONCAT_(cuhal_assert_or_, __LINE__), lhs, expr)
#define CUHAL_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  ASSERT_TRUE(tmp.ok()) << tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // CUHAL_TESTS_DEVICE_TEST_MACROS_H_
