// Copyright 2026 The cuhal Authors.
// Entry points: libraries (cuLibrary*), their kernels (cuKernel*) and function introspection
// (cuFuncGetName, cuFuncGetParamInfo, cuFuncGetModule, cuFuncIsLoaded, cuFuncLoad,
// cuFuncSetCacheConfig, cuModuleGetLoadingMode, cuModuleGetFunctionCount,
// cuModuleEnumerateFunctions). The model is fakecuda/internal/library_model.h;
// a library's load into a context is a module of fakecuda/internal/module_model.h.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>
#include <sys/stat.h>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/library_model.h"
#include "fakecuda/internal/module_model.h"

using fakecuda::Context;
using fakecuda::DriverState;
using fakecuda::FunctionState;
using fakecuda::HandleKind;
using fakecuda::KernelState;
using fakecuda::LibraryState;
using fakecuda::ModuleState;

// Measured 2026-12-06, H100 driver 580.159.04 (ci/gpu-probes/library_probe.cc, case "noinit"):
// the library and kernel entry points check their null arguments before cuInit is checked
// (cuLibraryUnload(nullptr) is CUDA_ERROR_INVALID_HANDLE, cuKernelGetName(&name, nullptr)
// CUDA_ERROR_INVALID_VALUE, even before cuInit). Such an entry point starts with
// FAKECUDA_ENTER_NOLOCK, checks its null arguments, then takes the lock and checks cuInit here.
#define FAKECUDA_LOCK_INITIALIZED()          \
  cuhal::MutexLock lock(st->mu);             \
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;

namespace fakecuda {
namespace {

// The options cuLibraryLoadData / cuLibraryLoadFromFile accept: JIT options as
// cuModuleLoadDataEx reads them, library options by number.
struct LoadOptions {
  void** error_buffer = nullptr;
  void** error_size = nullptr;
  void** info_buffer = nullptr;
  void** info_size = nullptr;
};

CUresult ReadLoadOptions(CUjit_option* jit_options, void** jit_values, unsigned num_jit,
                         CUlibraryOption* library_options, void** library_values,
                         unsigned num_library, LoadOptions* out) {
  if (num_jit > 0 && (jit_options == nullptr || jit_values == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (unsigned i = 0; i < num_jit; ++i) {
    int option = EnumBits(jit_options[i]);
    if (option < 0 || option >= CU_JIT_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
    switch (option) {
      case CU_JIT_INFO_LOG_BUFFER: out->info_buffer = &jit_values[i]; break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: out->info_size = &jit_values[i]; break;
      case CU_JIT_ERROR_LOG_BUFFER: out->error_buffer = &jit_values[i]; break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: out->error_size = &jit_values[i]; break;
      default: break;  // optimization levels, targets, caching: no effect on the fake
    }
  }
  if (num_library > 0 && (library_options == nullptr || library_values == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (unsigned i = 0; i < num_library; ++i) {
    int option = EnumBits(library_options[i]);
    if (option < 0 || option >= CU_LIBRARY_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// Parses and checks an image for every device (a library belongs to no context) and adds the
// library. Writes the JIT logs.
//
// Measured 2026-12-06, H100 driver 580.159.04 (library_probe, cases "load" and "fromfile"): the
// load itself succeeds for text that is no image at all, an empty string, PTX that does not
// parse and PTX of version 99.0 (the driver loads lazily); the error comes when the library is
// used (a garbage file: kernel count 0, cuLibraryGetKernel CUDA_ERROR_INVALID_IMAGE). So an
// image the fake cannot parse or run still makes a library, which remembers the error
// (LibraryState::load_error) and answers with it when a kernel, module or global is asked for.
// The error log gets the reason at the load (the real driver writes something there too).
CUresult LoadLibrary(DriverState* st, const void* image, const LoadOptions& options,
                     const char* loaded_by, CUlibrary* library) CUHAL_REQUIRES(st->mu) {
  std::string log;
  ModuleImage parsed;
  CUresult r = ParseModuleImage(image, &parsed, &log);
  for (int d = 0; r == CUDA_SUCCESS && d < st->device_count(); ++d) {
    r = CheckImageForDevice(st, d, parsed, &log);
  }
  if (r == CUDA_SUCCESS) r = CheckKernelsRunnable(parsed, &log);
  WriteLog(r == CUDA_SUCCESS ? std::string() : log, options.error_buffer, options.error_size);
  WriteLog(std::string(), options.info_buffer, options.info_size);
  *library = AddLibrary(st, r != CUDA_SUCCESS ? ModuleImage{} : std::move(parsed), loaded_by);
  LibraryState* added = Libraries(st).FindLibrary(*library);
  added->load_error = r;
  // A fat-binary wrapper (__fatBinC_Wrapper_t, magic 0x466243B1): the CUDA runtime's. Compared
  // byte by byte, stopping at the first mismatch: a text image may be shorter than 4 bytes.
  static constexpr unsigned char kWrapperMagic[] = {0xb1, 0x43, 0x62, 0x46};
  const auto* bytes = static_cast<const unsigned char*>(image);
  added->runtime_registered = true;
  for (unsigned char m : kWrapperMagic) {
    if (*bytes++ != m) {
      added->runtime_registered = false;
      break;
    }
  }
  return CUDA_SUCCESS;
}

LibraryState* FindLibrary(DriverState* st, CUlibrary handle) CUHAL_REQUIRES(st->mu) {
  return Libraries(st).FindLibrary(handle);
}

KernelState* FindKernel(DriverState* st, CUkernel handle) CUHAL_REQUIRES(st->mu) {
  return Libraries(st).FindKernel(handle);
}

// A global of the library in the current context: cuLibraryGetGlobal (managed = false) and
// cuLibraryGetManaged (true).
//
// Measured 2026-12-06, H100 driver 580.159.04 (library_probe, case "globals"):
// cuLibraryGetGlobal finds managed variables too (at the address cuLibraryGetManaged gives),
// while cuLibraryGetManaged finds only managed ones; the name of a kernel is
// CUDA_ERROR_INVALID_VALUE to cuLibraryGetGlobal (an unknown name CUDA_ERROR_NOT_FOUND).
CUresult GetGlobal(DriverState* st, CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                   const char* name, bool managed) CUHAL_REQUIRES(st->mu) {
  if (name == nullptr || (dptr == nullptr && bytes == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  LibraryState* lib = FindLibrary(st, library);
  if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (lib->load_error != CUDA_SUCCESS) return lib->load_error;
  bool found = false, is_managed = false;
  for (const GlobalInfo& g : lib->image->globals) {
    if (g.name == name && (g.managed || !managed)) {
      found = true;
      is_managed = g.managed;
    }
  }
  if (!found && !managed) {
    for (const KernelInfo& k : lib->image->kernels) {
      if (k.name == name) return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (!found) return CUDA_ERROR_NOT_FOUND;
  // A managed variable exists once the library is loaded into some context, and is the same
  // in all of them; before that, the current context loads it.
  if (auto m = lib->managed.find(std::string_view(name)); is_managed && m != lib->managed.end()) {
    if (dptr != nullptr) *dptr = m->second.address;
    if (bytes != nullptr) *bytes = m->second.size;
    return CUDA_SUCCESS;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  ModuleState* mod = nullptr;
  if (CUresult e = LibraryModuleIn(st, lib, ctx, &mod); e != CUDA_SUCCESS) return e;
  auto it = mod->globals.find(std::string_view(name));
  if (it == mod->globals.end()) return CUDA_ERROR_NOT_FOUND;
  if (dptr != nullptr) *dptr = it->second.address;
  if (bytes != nullptr) *bytes = it->second.size;
  return CUDA_SUCCESS;
}

CUresult ParamInfo(const KernelInfo& k, size_t index, size_t* offset, size_t* size) {
  if (offset == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (index >= k.params.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = k.params[index].offset;
  if (size != nullptr) *size = k.params[index].size;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                   void** jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                   unsigned int numLibraryOptions) try {
  FAKECUDA_ENTER(cuLibraryLoadData)
  if (library == nullptr || code == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::LoadOptions options;
  if (CUresult e = fakecuda::ReadLoadOptions(jitOptions, jitOptionsValues, numJitOptions,
                                             libraryOptions, libraryOptionValues,
                                             numLibraryOptions, &options);
      e != CUDA_SUCCESS) {
    return e;
  }
  return fakecuda::LoadLibrary(st, code, options, "cuLibraryLoadData", library);
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryLoadData");
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* library, const char* fileName,
                                       CUjit_option* jitOptions, void** jitOptionsValues,
                                       unsigned int numJitOptions,
                                       CUlibraryOption* libraryOptions,
                                       void** libraryOptionValues,
                                       unsigned int numLibraryOptions) try {
  FAKECUDA_ENTER(cuLibraryLoadFromFile)
  // Measured 2026-12-06, H100 driver 580.159.04 (library_probe, case "fromfile"): an empty
  // file name is CUDA_ERROR_INVALID_VALUE, a directory CUDA_ERROR_OUT_OF_MEMORY, an empty file
  // CUDA_ERROR_INVALID_IMAGE; a file of garbage loads (the error comes at use: LoadLibrary).
  if (library == nullptr || fileName == nullptr || *fileName == '\0') {
    return CUDA_ERROR_INVALID_VALUE;
  }
  fakecuda::LoadOptions options;
  if (CUresult e = fakecuda::ReadLoadOptions(jitOptions, jitOptionsValues, numJitOptions,
                                             libraryOptions, libraryOptionValues,
                                             numLibraryOptions, &options);
      e != CUDA_SUCCESS) {
    return e;
  }
  struct stat info;
  if (stat(fileName, &info) != 0) return CUDA_ERROR_FILE_NOT_FOUND;
  if (S_ISDIR(info.st_mode)) return CUDA_ERROR_OUT_OF_MEMORY;
  if (!S_ISREG(info.st_mode)) return CUDA_ERROR_FILE_NOT_FOUND;
  std::ifstream in(fileName, std::ios::binary);
  if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) return CUDA_ERROR_INVALID_IMAGE;
  return fakecuda::LoadLibrary(st, bytes.c_str(), options, "cuLibraryLoadFromFile", library);
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryLoadFromFile");
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library) try {
  FAKECUDA_ENTER_NOLOCK(cuLibraryUnload)
  if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // even before cuInit (measured)
  FAKECUDA_LOCK_INITIALIZED()
  LibraryState* lib = fakecuda::FindLibrary(st, library);
  if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  fakecuda::UnloadLibrary(st, lib->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryUnload");
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) try {
  FAKECUDA_ENTER_NOLOCK(cuLibraryGetKernel)
  if (pKernel == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // even before cuInit (measured)
  FAKECUDA_LOCK_INITIALIZED()
  LibraryState* lib = fakecuda::FindLibrary(st, library);
  if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (lib->load_error != CUDA_SUCCESS) return lib->load_error;
  for (std::uint64_t kid : lib->kernels) {
    const KernelState& k = fakecuda::Libraries(st).kernels.at(kid);
    if (lib->image->kernels[k.index].name == name) {
      *pKernel = fakecuda::EncodeHandle<CUkernel>(HandleKind::kKernel, kid);
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryGetKernel");
}

CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib) try {
  FAKECUDA_ENTER_NOLOCK(cuLibraryGetKernelCount)
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // even before cuInit (measured)
  FAKECUDA_LOCK_INITIALIZED()
  LibraryState* l = fakecuda::FindLibrary(st, lib);
  if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *count = static_cast<unsigned>(l->kernels.size());
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryGetKernelCount");
}

CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels,
                                           CUlibrary lib) try {
  FAKECUDA_ENTER_NOLOCK(cuLibraryEnumerateKernels)
  if (kernels == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  FAKECUDA_LOCK_INITIALIZED()
  LibraryState* l = fakecuda::FindLibrary(st, lib);
  if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // Measured 2026-12-06, H100 driver 580.159.04 (library_probe, case "kernels"): the kernels
  // come in the reverse of the image's order (the last .entry first); fewer slots get the
  // first ones of that order. (cuModuleEnumerateFunctions keeps the image's order.)
  const std::size_t n = l->kernels.size();
  for (std::size_t i = 0; i < n && i < numKernels; ++i) {
    kernels[i] = fakecuda::EncodeHandle<CUkernel>(HandleKind::kKernel, l->kernels[n - 1 - i]);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryEnumerateKernels");
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule* pMod, CUlibrary library) try {
  FAKECUDA_ENTER_NOLOCK(cuLibraryGetModule)
  if (pMod == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  FAKECUDA_LOCK_INITIALIZED()
  LibraryState* lib = fakecuda::FindLibrary(st, library);
  if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (lib->load_error != CUDA_SUCCESS) return lib->load_error;
  FAKECUDA_REQUIRE_CONTEXT()
  ModuleState* mod = nullptr;
  if (CUresult e = fakecuda::LibraryModuleIn(st, lib, ctx, &mod); e != CUDA_SUCCESS) return e;
  *pMod = fakecuda::EncodeHandle<CUmodule>(HandleKind::kModule, mod->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryGetModule");
}

CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                                    const char* name) try {
  FAKECUDA_ENTER(cuLibraryGetGlobal)
  return fakecuda::GetGlobal(st, dptr, bytes, library, name, /*managed=*/false);
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryGetGlobal");
}

CUresult CUDAAPI cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                                     const char* name) try {
  FAKECUDA_ENTER(cuLibraryGetManaged)
  return fakecuda::GetGlobal(st, dptr, bytes, library, name, /*managed=*/true);
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryGetManaged");
}

CUresult CUDAAPI cuLibraryGetUnifiedFunction(void** fptr, CUlibrary library,
                                             const char* symbol) try {
  FAKECUDA_ENTER(cuLibraryGetUnifiedFunction)
  if (fptr == nullptr || symbol == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // Unified functions come from images built with unified-function support (a host-and-device
  // function table); PTX has none, and the fake reads no other image. Measured 2026-12-06, H100
  // driver 580.159.04 (library_probe, cases "globals", "bad:*:LibraryGetUnifiedFunction"): a
  // library without that table answers CUDA_ERROR_INVALID_VALUE for every name, a kernel's or
  // an unknown one, and so does a handle that is no live library (stale, a CUmodule, a heap
  // block): only a null one is CUDA_ERROR_INVALID_HANDLE.
  return CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLibraryGetUnifiedFunction");
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) try {
  FAKECUDA_ENTER_NOLOCK(cuKernelGetFunction)
  if (pFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (kernel == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // even before cuInit (measured)
  FAKECUDA_LOCK_INITIALIZED()
  KernelState* k = fakecuda::FindKernel(st, kernel);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  FAKECUDA_REQUIRE_CONTEXT()
  FunctionState* f = nullptr;
  if (CUresult e = fakecuda::KernelFunctionIn(st, *k, ctx, &f); e != CUDA_SUCCESS) return e;
  *pFunc = fakecuda::EncodeHandle<CUfunction>(HandleKind::kFunction, f->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuKernelGetFunction");
}

CUresult CUDAAPI cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) try {
  FAKECUDA_ENTER_NOLOCK(cuKernelGetLibrary)
  if (pLib == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (kernel == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  FAKECUDA_LOCK_INITIALIZED()
  KernelState* k = fakecuda::FindKernel(st, kernel);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *pLib = fakecuda::EncodeHandle<CUlibrary>(HandleKind::kLibrary, k->library_id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuKernelGetLibrary");
}

CUresult CUDAAPI cuKernelGetName(const char** name, CUkernel hfunc) try {
  FAKECUDA_ENTER_NOLOCK(cuKernelGetName)
  // Documented: a NULL name or kernel is INVALID_VALUE (measured: even before cuInit).
  if (name == nullptr || hfunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_LOCK_INITIALIZED()
  KernelState* k = fakecuda::FindKernel(st, hfunc);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // The library's image is immutable and lives as long as the library: the pointer stays valid
  // until cuLibraryUnload.
  *name = fakecuda::Libraries(st).Info(*k).name.c_str();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuKernelGetName");
}

CUresult CUDAAPI cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel,
                                      CUdevice dev) try {
  FAKECUDA_ENTER(cuKernelGetAttribute)
  if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
  KernelState* k = fakecuda::FindKernel(st, kernel);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (!fakecuda::ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  FunctionState view = fakecuda::KernelView(st, *k, dev);
  return fakecuda::GetFunctionAttribute(st->device(dev).profile, view,
                                        fakecuda::EnumBits(attrib), pi);
} catch (...) {
  return ::fakecuda::EntryFailed("cuKernelGetAttribute");
}

CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                      CUdevice dev) try {
  FAKECUDA_ENTER(cuKernelSetAttribute)
  KernelState* k = fakecuda::FindKernel(st, kernel);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (!fakecuda::ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  int attribute = fakecuda::EnumBits(attrib);
  // The same attributes and ranges as cuFuncSetAttribute: try it on the kernel's view.
  FunctionState view = fakecuda::KernelView(st, *k, dev);
  if (CUresult e = fakecuda::SetFunctionAttribute(st->device(dev).profile, &view, attribute, val);
      e != CUDA_SUCCESS) {
    return e;
  }
  fakecuda::SetKernelSetting(st, k, dev, attribute, val);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuKernelSetAttribute");
}

CUresult CUDAAPI cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) try {
  FAKECUDA_ENTER(cuKernelSetCacheConfig)
  KernelState* k = fakecuda::FindKernel(st, kernel);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  int c = fakecuda::EnumBits(config);
  if (c < CU_FUNC_CACHE_PREFER_NONE || c > CU_FUNC_CACHE_PREFER_EQUAL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!fakecuda::ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
  fakecuda::SetKernelSetting(st, k, dev, /*attribute=*/-1, c);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuKernelSetCacheConfig");
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset,
                                      size_t* paramSize) try {
  FAKECUDA_ENTER(cuKernelGetParamInfo)
  // Measured 2026-12-06, H100 driver 580.159.04 (library_probe, cases "bad:null:*", "params",
  // "noctx"): a null kernel is CUDA_ERROR_INVALID_VALUE, and unlike the other cuKernel* queries
  // this one needs a current context (CUDA_ERROR_INVALID_CONTEXT without one, outputs
  // untouched).
  if (kernel == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  KernelState* k = fakecuda::FindKernel(st, kernel);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return fakecuda::ParamInfo(fakecuda::Libraries(st).Info(*k), paramIndex, paramOffset,
                             paramSize);
} catch (...) {
  return ::fakecuda::EntryFailed("cuKernelGetParamInfo");
}

CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction hfunc) try {
  FAKECUDA_ENTER_NOLOCK(cuFuncGetName)
  // Documented: a NULL name or function is INVALID_VALUE (measured: even before cuInit).
  if (name == nullptr || hfunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_LOCK_INITIALIZED()
  FunctionState* f = fakecuda::Modules(st).FindFunction(hfunc);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // Measured 2026-12-06, H100 driver 580.159.04 (library_probe, case "names"): a library
  // kernel's function gives the very pointer cuKernelGetName gives (the library's name).
  if (f->kernel_id != 0 && st->libraries_if_used() != nullptr) {
    fakecuda::LibraryModel& libs = fakecuda::Libraries(st);
    if (auto k = libs.kernels.find(f->kernel_id); k != libs.kernels.end()) {
      *name = libs.Info(k->second).name.c_str();
      return CUDA_SUCCESS;
    }
  }
  *name = f->kernel.name.c_str();  // valid while the function's module is loaded
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncGetName");
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset,
                                    size_t* paramSize) try {
  FAKECUDA_ENTER(cuFuncGetParamInfo)
  // Measured 2026-12-06, H100 driver 580.159.04: a null function is CUDA_ERROR_INVALID_VALUE.
  if (func == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FunctionState* f = fakecuda::Modules(st).FindFunction(func);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return fakecuda::ParamInfo(f->kernel, paramIndex, paramOffset, paramSize);
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncGetParamInfo");
}

CUresult CUDAAPI cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) try {
  FAKECUDA_ENTER(cuFuncGetModule)
  // Measured 2026-12-06, H100 driver 580.159.04: a null function is CUDA_ERROR_INVALID_VALUE.
  if (hmod == nullptr || hfunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FunctionState* f = fakecuda::Modules(st).FindFunction(hfunc);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *hmod = fakecuda::EncodeHandle<CUmodule>(HandleKind::kModule, f->module_id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncGetModule");
}

CUresult CUDAAPI cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction function) try {
  FAKECUDA_ENTER(cuFuncIsLoaded)
  if (state == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FunctionState* f = fakecuda::Modules(st).FindFunction(function);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *state = CU_FUNCTION_LOADING_STATE_LOADED;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncIsLoaded");
}

CUresult CUDAAPI cuFuncLoad(CUfunction function) try {
  FAKECUDA_ENTER(cuFuncLoad)
  FunctionState* f = fakecuda::Modules(st).FindFunction(function);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncLoad");
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) try {
  FAKECUDA_ENTER(cuFuncSetCacheConfig)
  FunctionState* f = fakecuda::Modules(st).FindFunction(hfunc);
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  int c = fakecuda::EnumBits(config);
  if (c < CU_FUNC_CACHE_PREFER_NONE || c > CU_FUNC_CACHE_PREFER_EQUAL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  f->cache_config = c;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncSetCacheConfig");
}

CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) try {
  FAKECUDA_ENTER(cuModuleGetFunctionCount)
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  ModuleState* m = fakecuda::Modules(st).FindModule(mod);
  if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *count = static_cast<unsigned>(m->functions.size());
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleGetFunctionCount");
}

CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions,
                                            CUmodule mod) try {
  FAKECUDA_ENTER(cuModuleEnumerateFunctions)
  if (functions == nullptr) return CUDA_ERROR_INVALID_VALUE;
  ModuleState* m = fakecuda::Modules(st).FindModule(mod);
  if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // The image's order: a module's functions get increasing ids in that order when it loads.
  std::vector<std::uint64_t> ids;
  for (const auto& [name, id] : m->functions) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 0; i < ids.size() && i < numFunctions; ++i) {
    functions[i] = fakecuda::EncodeHandle<CUfunction>(HandleKind::kFunction, ids[i]);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleEnumerateFunctions");
}

CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) try {
  FAKECUDA_ENTER(cuModuleGetLoadingMode)
  if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // CUDA_MODULE_LOADING=EAGER makes the driver load eagerly; lazy is the default since 12.2.
  const char* env = std::getenv("CUDA_MODULE_LOADING");
  *mode = env != nullptr && std::string_view(env) == "EAGER" ? CU_MODULE_EAGER_LOADING
                                                             : CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleGetLoadingMode");
}

}  // extern "C"
