// Copyright 2026 The cuhal Authors.
// DynamicLibrary: an owning handle to a dlopen()ed shared library.
#ifndef CUHAL_CORE_SYMBOLS_DYNAMIC_LIBRARY_H_
#define CUHAL_CORE_SYMBOLS_DYNAMIC_LIBRARY_H_

#include <string>

#include "core/base/status_or.h"

namespace cuhal {

// A shared library opened with dlopen(RTLD_NOW | RTLD_LOCAL): every undefined symbol is bound at
// open time, and none of the library's symbols are made available to later-loaded libraries.
//
// Ownership: move-only; the object owns one dlopen reference and drops it with dlclose in its
// destructor (a moved-from object owns nothing). dlopen reference-counts, so two objects opened
// on the same file share one loaded image, and pointers from Symbol() stay valid only while some
// reference to it is alive (or forever for OpenMode::kKeepLoaded). Thread-safety: Open may be
// called from any thread; a const object may be used from many threads at once (dlsym is
// thread-safe); dlerror() texts are per thread. Stream ordering: not applicable.
class DynamicLibrary {
 public:
  enum class OpenMode {
    // dlclose may unmap the library when the last reference goes.
    kUnloadOnClose,
    // RTLD_NODELETE: the library stays mapped after dlclose. For libraries that start threads or
    // register exit handlers (libcuda after cuInit, libnccl), unmapping them under their own
    // threads would crash the process.
    kKeepLoaded,
  };

  // Opens `path` (a file name is searched for as dlopen does: LD_LIBRARY_PATH, the ld.so cache,
  // the default directories). Failure: UNAVAILABLE naming `path` and carrying dlerror()'s text.
  [[nodiscard]] static StatusOr<DynamicLibrary> Open(const std::string& path,
                                                     OpenMode mode = OpenMode::kUnloadOnClose);

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  // Copying would need a second dlopen reference; it is deleted so that ownership stays obvious.
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  // dlclose; a failure is passed to ReportDroppedStatus, never thrown or aborted on.
  ~DynamicLibrary();

  // The address of the exported symbol `name`, or nullptr if the library does not export it (or
  // this object is moved-from).
  [[nodiscard]] void* Symbol(const char* name) const;

  // The path given to Open.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // The file the dynamic linker actually loaded (e.g. "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
  // for "libcuda.so.1"); path() if the linker does not say.
  [[nodiscard]] const std::string& loaded_path() const noexcept { return loaded_path_; }
  // False for a moved-from object.
  [[nodiscard]] bool is_open() const noexcept { return handle_ != nullptr; }

 private:
  DynamicLibrary(void* handle, std::string path, std::string loaded_path);
  void Close() noexcept;

  void* handle_ = nullptr;
  std::string path_;
  std::string loaded_path_;
};

}  // namespace cuhal

#endif  // CUHAL_CORE_SYMBOLS_DYNAMIC_LIBRARY_H_
