// Copyright 2026 The cuhal Authors.
#include "core/symbols/dynamic_library.h"

#include <dlfcn.h>
#include <link.h>

#include <utility>

namespace cuhal {
namespace {

// dlerror()'s text for the calling thread, or a placeholder when it has none.
std::string TakeDlError() {
  const char* error = dlerror();
  return error != nullptr ? std::string(error) : std::string("(dlerror gave no message)");
}

// The file name the dynamic linker recorded for `handle`, or "" when it does not say.
std::string LoadedPath(void* handle) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    (void)dlerror();  // Clears the error dlinfo may have left.
    return {};
  }
  return map->l_name;
}

}  // namespace

StatusOr<DynamicLibrary> DynamicLibrary::Open(const std::string& path, OpenMode mode) {
  if (path.empty()) return InvalidArgumentError("DynamicLibrary::Open: empty library path");
  int flags = RTLD_NOW | RTLD_LOCAL;
  if (mode == OpenMode::kKeepLoaded) flags |= RTLD_NODELETE;
  (void)dlerror();  // Clears any stale error of this thread.
  void* handle = dlopen(path.c_str(), flags);
  if (handle == nullptr) {
    return UnavailableError(StrCat("cannot load shared library \"", path, "\": ", TakeDlError()));
  }
  std::string loaded = LoadedPath(handle);
  if (loaded.empty()) loaded = path;
  return DynamicLibrary(handle, path, std::move(loaded));
}

DynamicLibrary::DynamicLibrary(void* handle, std::string path, std::string loaded_path)
    : handle_(handle), path_(std::move(path)), loaded_path_(std::move(loaded_path)) {}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      path_(std::move(other.path_)),
      loaded_path_(std::move(other.loaded_path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    Close();
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
    loaded_path_ = std::move(other.loaded_path_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() { Close(); }

void DynamicLibrary::Close() noexcept {
  if (handle_ == nullptr) return;
  void* handle = std::exchange(handle_, nullptr);
  if (dlclose(handle) != 0) {
    ReportDroppedStatus(
        InternalError(StrCat("dlclose of \"", path_, "\" failed: ", TakeDlError())));
  }
}

void* DynamicLibrary::Symbol(const char* name) const {
  if (handle_ == nullptr || name == nullptr) return nullptr;
  void* address = dlsym(handle_, name);
  if (address == nullptr) (void)dlerror();  // Absent: clear the error so it does not leak out.
  return address;
}

}  // namespace cuhal
