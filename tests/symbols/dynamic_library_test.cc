// Copyright 2026 The cuhal Authors.
#include "core/symbols/dynamic_library.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace cuhal {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kStandIn[] = CUHAL_TEST_LIBCUDA;

// What dlopen itself says about `path` (empty if it opens).
std::string DlopenError(const std::string& path) {
  (void)dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    dlclose(handle);
    return {};
  }
  const char* error = dlerror();
  return error != nullptr ? error : "";
}

TEST(DynamicLibraryTest, MissingFileIsUnavailableNamingPathAndDlerror) {
  const std::string path = "/nonexistent/cuhal/libnothere.so.7";
  const std::string dl_error = DlopenError(path);
  ASSERT_FALSE(dl_error.empty());

  StatusOr<DynamicLibrary> library = DynamicLibrary::Open(path);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), StatusCode::kUnavailable) << library.status();
  EXPECT_THAT(library.status().message(), HasSubstr("\"" + path + "\""));
  EXPECT_THAT(library.status().message(), HasSubstr(dl_error));
}

TEST(DynamicLibraryTest, NotASharedLibraryIsUnavailable) {
  // A source file exists but is no ELF object: dlopen fails with its own reason.
  const std::string path = __FILE__;
  const std::string dl_error = DlopenError(path);
  ASSERT_FALSE(dl_error.empty());

  StatusOr<DynamicLibrary> library = DynamicLibrary::Open(path);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(library.status().message(), HasSubstr(dl_error));
}

TEST(DynamicLibraryTest, EmptyPathIsInvalidArgument) {
  // dlopen("") would hand back the main program; Open refuses instead.
  StatusOr<DynamicLibrary> library = DynamicLibrary::Open("");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), StatusCode::kInvalidArgument);
}

TEST(DynamicLibraryTest, SymbolFindsExportsAndReturnsNullForAbsentOnes) {
  StatusOr<DynamicLibrary> library = DynamicLibrary::Open(kStandIn);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_TRUE(library->is_open());
  EXPECT_EQ(library->path(), kStandIn);
  EXPECT_THAT(library->loaded_path(), StartsWith("/"));
  EXPECT_NE(library->Symbol("cuInit"), nullptr);
  EXPECT_NE(library->Symbol("cuGetProcAddress_v2"), nullptr);
  EXPECT_EQ(library->Symbol("cuNoSuchEntryPoint"), nullptr);
  // An absent symbol leaves no error behind for the next dlerror() caller.
  EXPECT_EQ(dlerror(), nullptr);
}

TEST(DynamicLibraryTest, TwoOpensOfOneFileShareOneImage) {
  StatusOr<DynamicLibrary> a = DynamicLibrary::Open(kStandIn);
  StatusOr<DynamicLibrary> b =
      DynamicLibrary::Open(kStandIn, DynamicLibrary::OpenMode::kKeepLoaded);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->Symbol("cuInit"), b->Symbol("cuInit"));
}

TEST(DynamicLibraryTest, MoveTransfersOwnership) {
  StatusOr<DynamicLibrary> opened = DynamicLibrary::Open(kStandIn);
  ASSERT_TRUE(opened.ok()) << opened.status();
  void* init = opened->Symbol("cuInit");
  ASSERT_NE(init, nullptr);

  DynamicLibrary first = std::move(opened).value();
  DynamicLibrary second = std::move(first);
  EXPECT_FALSE(first.is_open());  // NOLINT(bugprone-use-after-move): checking moved-from state.
  EXPECT_EQ(first.Symbol("cuInit"), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(second.is_open());
  EXPECT_EQ(second.Symbol("cuInit"), init);

  StatusOr<DynamicLibrary> other = DynamicLibrary::Open(CUHAL_TEST_LIBNCCL);
  ASSERT_TRUE(other.ok()) << other.status();
  second = std::move(other).value();  // Closes the stand-in libcuda reference it held.
  EXPECT_EQ(second.Symbol("cuInit"), nullptr);
  EXPECT_NE(second.Symbol("ncclGetVersion"), nullptr);
  EXPECT_EQ(second.path(), CUHAL_TEST_LIBNCCL);
}

}  // namespace
}  // namespace cuhal
