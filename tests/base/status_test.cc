// Copyright 2026 The cuhal Authors.
// Tests of Status, StatusOr and the propagation macros (core/base/status.h, status_or.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/status.h"
#include "core/base/status_or.h"

// Counts global operator new calls, to prove that the OK path allocates nothing. Replacing the
// global allocation functions is allowed in a program; under ASan, malloc/free stay checked.
namespace {
std::atomic<long> g_allocations{0};
}  // namespace

[[gnu::noinline]] void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// Not inlined: GCC would otherwise see free() of a pointer from operator new at every delete site
// and warn (-Wmismatched-new-delete) in optimized builds.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace cuhal {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

long Allocations() { return g_allocations.load(std::memory_order_relaxed); }

// ---------------------------------------------------------------------------------------------
// Status

TEST(StatusTest, OkIsOnePointerAndAllocatesNothing) {
  static_assert(sizeof(Status) == sizeof(void*), "OK must cost one pointer");
  bool all_ok = false;
  const long before = Allocations();
  {
    Status ok;
    Status also_ok = OkStatus();
    Status copy = ok;
    Status moved = std::move(also_ok);
    copy = moved;
    Status from_ok_code(StatusCode::kOk, std::string());  // empty message: no heap string
    ok.AddContext(std::string());
    all_ok = ok.ok() && copy.ok() && moved.ok() && from_ok_code.ok();
  }
  const long after = Allocations();
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(after, before);
  // The counter does count: an error allocates its state.
  {
    Status error = InternalError("boom");
  }
  EXPECT_GT(Allocations(), after);
}

TEST(StatusTest, OkAccessors) {
  Status ok;
  EXPECT_EQ(ok.code(), StatusCode::kOk);
  EXPECT_EQ(ok.raw_message(), "");
  EXPECT_EQ(ok.message(), "");
  EXPECT_EQ(ok.ToString(), "OK");
  EXPECT_EQ(ok, OkStatus());
}

TEST(StatusTest, OkCodeDropsTheMessage) {
  Status status(StatusCode::kOk, "ignored");
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.message(), "");
}

TEST(StatusTest, FactoriesSetTheirCodes) {
  EXPECT_EQ(InvalidArgumentError("m").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NotFoundError("m").code(), StatusCode::kNotFound);
  EXPECT_EQ(AlreadyExistsError("m").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ResourceExhaustedError("m").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(FailedPreconditionError("m").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(OutOfRangeError("m").code(), StatusCode::kOutOfRange);
  EXPECT_EQ(UnimplementedError("m").code(), StatusCode::kUnimplemented);
  EXPECT_EQ(InternalError("m").code(), StatusCode::kInternal);
  EXPECT_EQ(UnavailableError("m").code(), StatusCode::kUnavailable);
  EXPECT_EQ(AbortedError("m").code(), StatusCode::kAborted);
  EXPECT_EQ(DeadlineExceededError("m").code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(UnknownError("m").code(), StatusCode::kUnknown);
  Status error = InternalError("m");
  EXPECT_FALSE(error.ok());
  EXPECT_EQ(error.raw_message(), "m");
}

TEST(StatusTest, CodeNames) {
  EXPECT_EQ(StatusCodeName(StatusCode::kOk), "OK");
  EXPECT_EQ(StatusCodeName(StatusCode::kCancelled), "CANCELLED");
  EXPECT_EQ(StatusCodeName(StatusCode::kUnknown), "UNKNOWN");
  EXPECT_EQ(StatusCodeName(StatusCode::kInvalidArgument), "INVALID_ARGUMENT");
  EXPECT_EQ(StatusCodeName(StatusCode::kDeadlineExceeded), "DEADLINE_EXCEEDED");
  EXPECT_EQ(StatusCodeName(StatusCode::kNotFound), "NOT_FOUND");
  EXPECT_EQ(StatusCodeName(StatusCode::kAlreadyExists), "ALREADY_EXISTS");
  EXPECT_EQ(StatusCodeName(StatusCode::kPermissionDenied), "PERMISSION_DENIED");
  EXPECT_EQ(StatusCodeName(StatusCode::kResourceExhausted), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(StatusCodeName(StatusCode::kFailedPrecondition), "FAILED_PRECONDITION");
  EXPECT_EQ(StatusCodeName(StatusCode::kAborted), "ABORTED");
  EXPECT_EQ(StatusCodeName(StatusCode::kOutOfRange), "OUT_OF_RANGE");
  EXPECT_EQ(StatusCodeName(StatusCode::kUnimplemented), "UNIMPLEMENTED");
  EXPECT_EQ(StatusCodeName(StatusCode::kInternal), "INTERNAL");
  EXPECT_EQ(StatusCodeName(StatusCode::kUnavailable), "UNAVAILABLE");
  EXPECT_EQ(StatusCodeName(StatusCode::kDataLoss), "DATA_LOSS");
  EXPECT_EQ(StatusCodeName(StatusCode::kUnauthenticated), "UNAUTHENTICATED");
  EXPECT_EQ(StatusCodeName(static_cast<StatusCode>(99)), "UNKNOWN_STATUS_CODE");
}

TEST(StatusTest, ContextChainReadsOutermostFirst) {
  Status status = ResourceExhaustedError(
      "cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  status.AddContext("retaining primary context");
  status.AddContext("creating device 0");
  EXPECT_EQ(status.message(),
            "creating device 0: retaining primary context: cuDevicePrimaryCtxRetain: "
            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(status.raw_message(),
            "cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
}

TEST(StatusTest, RvalueAddContextChains) {
  Status status = NotFoundError("no such kernel").AddContext("loading module").AddContext("init");
  EXPECT_EQ(status.message(), "init: loading module: no such kernel");
}

TEST(StatusTest, AddContextOnOkIsANoOp) {
  Status ok;
  ok.AddContext("creating device 0");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
  Status moved_ok = OkStatus().AddContext("creating device 0");
  EXPECT_TRUE(moved_ok.ok());
}

TEST(StatusTest, ToStringHasCodeMessageAndLocation) {
  const int line = __LINE__ + 1;
  Status status = InvalidArgumentError("queue_count must be >= 1, got 0");
  status.AddContext("creating device 0");
  EXPECT_EQ(status.location().line(), static_cast<unsigned>(line));
  EXPECT_THAT(status.location().file_name(), HasSubstr("status_test.cc"));
  const std::string expected = StrCat("INVALID_ARGUMENT: creating device 0: queue_count must be >= "
                                      "1, got 0 [tests/base/status_test.cc:",
                                      line, "]");
  EXPECT_EQ(status.ToString(), expected);
  EXPECT_EQ(status.file(), "tests/base/status_test.cc");
}

// Locations print relative to the repository, whatever path the compiler was given.
TEST(StatusTest, FilesAreRepositoryRelative) {
  EXPECT_EQ(RepositoryRelativePath("../../../core/device/device.cc"), "core/device/device.cc");
  EXPECT_EQ(RepositoryRelativePath("./core/base/status.cc"), "core/base/status.cc");
  EXPECT_EQ(RepositoryRelativePath("core/base/status.cc"), "core/base/status.cc");
  EXPECT_EQ(OkStatus().file(), "");
  EXPECT_EQ(Status(StatusCode::kInternal, "x").ToString().find("[/"), std::string::npos);
}

TEST(StatusTest, StreamsLikeToString) {
  Status status = UnavailableError("no driver");
  std::ostringstream os;
  os << status;
  EXPECT_EQ(os.str(), status.ToString());
  std::ostringstream ok_os;
  ok_os << OkStatus();
  EXPECT_EQ(ok_os.str(), "OK");
}

TEST(StatusTest, CopyIsDeep) {
  Status original = InternalError("boom");
  Status copy = original;
  copy.AddContext("outer");
  EXPECT_EQ(original.message(), "boom");
  EXPECT_EQ(copy.message(), "outer: boom");
  EXPECT_EQ(copy.code(), StatusCode::kInternal);

  Status assigned;
  assigned = original;
  EXPECT_EQ(assigned, original);
  Status& alias = assigned;
  assigned = alias;  // self-assignment keeps the value
  EXPECT_EQ(assigned.message(), "boom");
  assigned = OkStatus();
  EXPECT_TRUE(assigned.ok());
}

TEST(StatusTest, MoveTransfersTheError) {
  Status source = AbortedError("peer died");
  source.AddContext("all-reduce");
  Status destination = std::move(source);
  EXPECT_EQ(destination.code(), StatusCode::kAborted);
  EXPECT_EQ(destination.message(), "all-reduce: peer died");
  Status assigned;
  assigned = std::move(destination);
  EXPECT_EQ(assigned.message(), "all-reduce: peer died");
}

TEST(StatusTest, EqualityComparesCodeAndMessage) {
  EXPECT_EQ(InternalError("a"), InternalError("a"));
  EXPECT_FALSE(InternalError("a") == InternalError("b"));
  EXPECT_FALSE(InternalError("a") == UnknownError("a"));
  EXPECT_FALSE(InternalError("a") == OkStatus());
}

TEST(StatusTest, StrCatConcatenatesStreamables) {
  EXPECT_EQ(StrCat("device ", 3, ": ", std::string("H200"), ' ', 1.5), "device 3: H200 1.5");
}

// The stream-free path (strings, characters, integers only) formats as the stream would.
TEST(StatusTest, StrCatOfStringsAndIntegersFormatsAsTheStreamWould) {
  const std::string_view view = "view";
  char buffer[] = "array";
  EXPECT_EQ(StrCat("a", 'b', -12, std::string("c"), view, buffer, 0u,
                   std::numeric_limits<std::uint64_t>::max(),
                   std::numeric_limits<std::int64_t>::min()),
            "ab-12cviewarray018446744073709551615-9223372036854775808");
  EXPECT_EQ(StrCat(), "");
  // bool and the byte-sized character types keep the stream's formatting.
  EXPECT_EQ(StrCat("flag ", true), "flag 1");
  EXPECT_EQ(StrCat(static_cast<unsigned char>('x'), static_cast<signed char>('y')), "xy");
  EXPECT_EQ(StrCat("0x", std::hex, 255), "0xff");
}

// ---------------------------------------------------------------------------------------------
// StatusOr

struct Point {
  int x;
  int y;
};

TEST(StatusOrTest, HoldsAValue) {
  StatusOr<int> value = 42;
  ASSERT_TRUE(value.ok());
  EXPECT_TRUE(value.status().ok());
  EXPECT_EQ(value.value(), 42);
  EXPECT_EQ(*value, 42);
  *value = 7;
  EXPECT_EQ(value.value(), 7);

  StatusOr<Point> point = Point{1, 2};
  EXPECT_EQ(point->y, 2);
  const StatusOr<Point>& const_point = point;
  EXPECT_EQ(const_point->x, 1);
  EXPECT_EQ((*const_point).y, 2);
}

TEST(StatusOrTest, HoldsAnError) {
  StatusOr<int> error = NotFoundError("no device 9");
  EXPECT_FALSE(error.ok());
  EXPECT_EQ(error.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(error.status().message(), "no device 9");
  Status moved_out = std::move(error).status();
  EXPECT_EQ(moved_out.code(), StatusCode::kNotFound);
}

TEST(StatusOrTest, BuiltFromOkStatusIsInternal) {
  StatusOr<int> bad = OkStatus();
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
}

TEST(StatusOrTest, MovesAMoveOnlyType) {
  StatusOr<std::unique_ptr<int>> owner = std::make_unique<int>(5);
  ASSERT_TRUE(owner.ok());
  StatusOr<std::unique_ptr<int>> moved = std::move(owner);
  ASSERT_TRUE(moved.ok());
  std::unique_ptr<int> taken = std::move(moved).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 5);

  StatusOr<std::unique_ptr<int>> assigned = InternalError("not yet");
  assigned = StatusOr<std::unique_ptr<int>>(std::make_unique<int>(6));
  ASSERT_TRUE(assigned.ok());
  EXPECT_EQ(**assigned, 6);
  std::unique_ptr<int> deref_taken = *std::move(assigned);
  EXPECT_EQ(*deref_taken, 6);
}

TEST(StatusOrTest, CopiesACopyableType) {
  StatusOr<std::string> original = std::string("h200");
  StatusOr<std::string> copy = original;
  EXPECT_EQ(*copy, "h200");
  EXPECT_EQ(*original, "h200");
  StatusOr<std::string> error_copy = StatusOr<std::string>(InternalError("x"));
  copy = error_copy;
  EXPECT_FALSE(copy.ok());
}

TEST(StatusOrDeathTest, ValueOnAnErrorAborts) {
  // ASan and threads do not mix with the default "fast" (fork-only) death test style.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  StatusOr<int> error = FailedPreconditionError("context destroyed");
  EXPECT_DEATH((void)error.value(), "StatusOr::value\\(\\) on an error: FAILED_PRECONDITION: "
                                    "context destroyed");
  EXPECT_DEATH((void)*error, "context destroyed");
}

// ---------------------------------------------------------------------------------------------
// CUHAL_RETURN_IF_ERROR and CUHAL_ASSIGN_OR_RETURN

// Counts how often a context argument is evaluated.
struct ContextCounter {
  int evaluations = 0;
  std::string Next() {
    ++evaluations;
    return "context";
  }
};

Status PassThrough(Status status) {
  CUHAL_RETURN_IF_ERROR(status);
  return OkStatus();
}

Status WithContext(Status status, ContextCounter& counter, int device) {
  CUHAL_RETURN_IF_ERROR(std::move(status), "creating device ", device, " (", counter.Next(), ")");
  return OkStatus();
}

TEST(PropagationTest, ReturnIfErrorWithoutContext) {
  EXPECT_TRUE(PassThrough(OkStatus()).ok());
  Status error = PassThrough(InternalError("inner"));
  EXPECT_EQ(error.code(), StatusCode::kInternal);
  EXPECT_EQ(error.message(), "inner");
}

TEST(PropagationTest, ReturnIfErrorContextIsEvaluatedOnlyOnError) {
  ContextCounter counter;
  EXPECT_TRUE(WithContext(OkStatus(), counter, 0).ok());
  EXPECT_EQ(counter.evaluations, 0);
  Status error = WithContext(UnavailableError("no driver"), counter, 3);
  EXPECT_EQ(counter.evaluations, 1);
  EXPECT_EQ(error.code(), StatusCode::kUnavailable);
  EXPECT_EQ(error.message(), "creating device 3 (context): no driver");
}

StatusOr<std::unique_ptr<int>> MakeInt(Status status, int value) {
  if (!status.ok()) return status;
  return std::make_unique<int>(value);
}

StatusOr<int> AssignNewWithoutContext(Status status) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<int> owned, MakeInt(std::move(status), 11));
  return *owned + 1;
}

StatusOr<int> AssignExistingWithContext(Status status, ContextCounter& counter) {
  std::unique_ptr<int> owned;
  CUHAL_ASSIGN_OR_RETURN(owned, MakeInt(std::move(status), 20), "allocating ", counter.Next());
  // Two uses in one function need distinct temporaries (they are named after the line).
  CUHAL_ASSIGN_OR_RETURN(auto second, MakeInt(OkStatus(), 1), "second ", counter.Next());
  return *owned + *second;
}

TEST(PropagationTest, AssignOrReturnWithoutContext) {
  StatusOr<int> value = AssignNewWithoutContext(OkStatus());
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, 12);
  StatusOr<int> error = AssignNewWithoutContext(ResourceExhaustedError("out of memory"));
  EXPECT_EQ(error.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(error.status().message(), "out of memory");
}

TEST(PropagationTest, AssignOrReturnContextIsEvaluatedOnlyOnError) {
  ContextCounter counter;
  StatusOr<int> value = AssignExistingWithContext(OkStatus(), counter);
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, 21);
  EXPECT_EQ(counter.evaluations, 0);
  StatusOr<int> error = AssignExistingWithContext(ResourceExhaustedError("pool full"), counter);
  EXPECT_EQ(counter.evaluations, 1);
  EXPECT_EQ(error.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(error.status().message(), "allocating context: pool full");
}

// ---------------------------------------------------------------------------------------------
// Dropped statuses

std::atomic<int> g_dropped{0};
void CountDropped(const Status&) { g_dropped.fetch_add(1); }

TEST(DroppedStatusTest, HandlerSeesErrorsButNotOk) {
  DroppedStatusHandler previous = SetDroppedStatusHandler(&CountDropped);
  g_dropped.store(0);
  ReportDroppedStatus(OkStatus());
  EXPECT_EQ(g_dropped.load(), 0);
  ReportDroppedStatus(InternalError("cuStreamDestroy failed"));
  EXPECT_EQ(g_dropped.load(), 1);
  EXPECT_EQ(SetDroppedStatusHandler(previous), &CountDropped);
}

TEST(DroppedStatusTest, NullHandlerRestoresTheDefault) {
  DroppedStatusHandler previous = SetDroppedStatusHandler(nullptr);
  // The default handler prints one line and returns.
  ::testing::internal::CaptureStderr();
  ReportDroppedStatus(InternalError("cuMemFree failed"));
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(printed, StartsWith("cuhal: error during cleanup"));
  EXPECT_THAT(printed, HasSubstr("INTERNAL: cuMemFree failed"));
  SetDroppedStatusHandler(previous);
}

}  // namespace
}  // namespace cuhal
