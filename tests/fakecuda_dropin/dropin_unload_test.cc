// Copyright 2026 The cuhal Authors.
// Unloading the drop-in libcuda.so.1: a dlclose that really unmaps the library must leave nothing
// behind on the heap. Process-lifetime objects that fakecuda reaches only through a pointer in the
// library's own static storage (a new-ed singleton) become unreachable once the library is
// unmapped, and LeakSanitizer reports them. Under AddressSanitizer the leak check runs inside the
// test (and again at exit); elsewhere the test still checks that the library unloads and loads
// again. This test links neither cuhal nor fakecuda: it only dlopens the library.
//
// Only entry points that touch no thread-local state are called: a thread_local with a destructor
// in the library keeps it mapped until the thread exits (glibc), which would hide a leak.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define CUHAL_HAVE_LSAN 1
#endif

namespace {

template <typename Fn>
Fn As(void* address) {
  Fn fn = nullptr;
  std::memcpy(&fn, &address, sizeof(fn));
  return fn;
}

// Loads the drop-in (its constructor parses FAKECUDA_DEVICES, which builds the built-in H200
// profile and looks up attribute names), initializes it, reads a device attribute, unloads it,
// and checks it is gone.
void LoadUseAndUnload() {
  void* handle = dlopen(CUHAL_DROPIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto init = As<decltype(&::cuInit)>(dlsym(handle, "cuInit"));
  auto count = As<decltype(&::cuDeviceGetCount)>(dlsym(handle, "cuDeviceGetCount"));
  auto attribute = As<decltype(&::cuDeviceGetAttribute)>(dlsym(handle, "cuDeviceGetAttribute"));
  ASSERT_NE(init, nullptr);
  ASSERT_NE(count, nullptr);
  ASSERT_NE(attribute, nullptr);
  EXPECT_EQ(init(0), CUDA_SUCCESS);
  int devices = 0;
  EXPECT_EQ(count(&devices), CUDA_SUCCESS);
  EXPECT_EQ(devices, 2);
  int major = 0;
  EXPECT_EQ(attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1), CUDA_SUCCESS);
  EXPECT_EQ(major, 9) << "the built-in H200 profile";
  ASSERT_EQ(dlclose(handle), 0) << dlerror();
  void* still_loaded = dlopen(CUHAL_DROPIN_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (still_loaded != nullptr) dlclose(still_loaded);
  ASSERT_EQ(still_loaded, nullptr) << "dlclose did not unload the drop-in, so a leak would not "
                                      "show; something pins it (RTLD_NODELETE, a thread_local "
                                      "destructor, another reference)";
}

TEST(DropinUnloadTest, UnloadingLeavesNothingBehind) {
  setenv("FAKECUDA_DEVICES", "2xH200", 1);
  LoadUseAndUnload();
  // Loaded again: the library's statics start afresh.
  LoadUseAndUnload();
  unsetenv("FAKECUDA_DEVICES");
#ifdef CUHAL_HAVE_LSAN
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0)
      << "LeakSanitizer found memory left behind by the unloaded drop-in (report above)";
#endif
}

}  // namespace
