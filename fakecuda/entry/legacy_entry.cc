// Copyright 2026 The cuhal Authors.
// Entry points: the older ways in. cuModuleLoad (a file) and cuModuleLoadFatBinary; the
// deprecated execution control (cuFuncSetBlockShape, cuFuncSetSharedSize,
// cuFuncSetSharedMemConfig, cuParamSetSize, cuParamSeti/f/v, cuParamSetTexRef, cuLaunch,
// cuLaunchGrid, cuLaunchGridAsync), whose state lives on the function (FunctionState) and whose
// launches go the way of cuLaunchKernel with a parameter buffer;
// cuLaunchCooperativeKernelMultiDevice;
// texture references (cuTexRefCreate/Destroy, cuModuleGetTexRef, every cuTexRefSet*/Get*) and
// surface references (cuModuleGetSurfRef, cuSurfRefSet/GetArray), which keep their settings
// (the fake samples no texture); surface objects (cuSurfObjectCreate/Destroy/GetResourceDesc);
// cuMipmappedArrayGetMemoryRequirements and cuMemMapArrayAsync (the fake's sparse arrays are
// backed whole, so a mapping is checked and has no other effect). Records:
// fakecuda/internal/legacy_model.h. Behaviour follows cuda.h and is UNMEASURED where a comment
// does not say otherwise (ci/gpu-probes/legacy_probe.cc measures it).
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/legacy_launch.h"
#include "fakecuda/internal/array_model.h"
#include "fakecuda/internal/legacy_model.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/vmm_model.h"

using fakecuda::ArrayModel;
using fakecuda::ArrayRecord;
using fakecuda::FunctionState;
using fakecuda::MipmappedRecord;
using fakecuda::SurfObjectRecord;
using fakecuda::SurfRefRecord;
using fakecuda::TexRefBinding;
using fakecuda::TexRefRecord;

namespace fakecuda {
namespace {

// The most parameter bytes a kernel takes (CUDA 12.1 and later: 32764).
constexpr unsigned kMaxParamBytes = 32764;

// Runs `f` with its cuFuncSetBlockShape shape, cuFuncSetSharedSize bytes and cuParamSet*
// buffer on a grid of `w` x `h` blocks in `stream`.
CUresult LaunchLegacy(DriverState* st, CUfunction f, int w, int h, CUstream stream,
                      const char* entry) CUHAL_REQUIRES(st->mu) {
  FunctionState* fn = Modules(st).FindFunction(f);
  if (fn == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (w <= 0 || h <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (fn->legacy_block[0] == 0) return CUDA_ERROR_INVALID_VALUE;  // no block shape set
  LaunchConfig config{{static_cast<unsigned>(w), static_cast<unsigned>(h), 1},
                      {fn->legacy_block[0], fn->legacy_block[1], fn->legacy_block[2]},
                      fn->legacy_shared};
  // Measured: a size above the kernel's parameter bytes is CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  // a smaller one launches with the bytes written before (the buffer outlives cuParamSetSize).
  if (fn->legacy_param_size > fn->kernel.param_bytes) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  std::vector<std::byte> params(std::max<std::size_t>(fn->kernel.param_bytes, 1), std::byte{0});
  std::memcpy(params.data(), fn->legacy_params.data(),
              std::min(params.size(), fn->legacy_params.size()));
  std::size_t size = fn->kernel.param_bytes;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &size, CU_LAUNCH_PARAM_END};
  return LaunchFunction(st, f, config, stream, nullptr, size == 0 ? nullptr : extra, entry,
                        /*cooperative=*/false);
}

// Writes `n` bytes at `offset` of the function's parameter buffer (grown as needed).
CUresult SetParam(DriverState* st, CUfunction f, int offset, const void* p, unsigned n)
    CUHAL_REQUIRES(st->mu) {
  FunctionState* fn = Modules(st).FindFunction(f);
  if (fn == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (p == nullptr || offset < 0 || static_cast<std::uint64_t>(offset) + n > kMaxParamBytes) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t end = static_cast<std::size_t>(offset) + n;
  if (fn->legacy_params.size() < end) fn->legacy_params.resize(end, std::byte{0});
  std::memcpy(fn->legacy_params.data() + offset, p, n);
  return CUDA_SUCCESS;
}

bool ValidAddressMode(int m) {
  return m >= CU_TR_ADDRESS_MODE_WRAP && m <= CU_TR_ADDRESS_MODE_BORDER;
}
bool ValidFilterMode(int m) {
  return m == CU_TR_FILTER_MODE_POINT || m == CU_TR_FILTER_MODE_LINEAR;
}

// The total memory requirement of a mipmapped array's levels, in whole 64 KiB units.
std::size_t MipmapRequirement(const MipmappedRecord& m) {
  std::size_t total = 0;
  for (unsigned l = 0; l < m.levels.size(); ++l) {
    total += ArrayModel::Footprint(ArrayModel::LevelOf(m.desc, l), m.element_size);
  }
  return (total + ArrayModel::kAlignment - 1) / ArrayModel::kAlignment * ArrayModel::kAlignment;
}

// Checks one cuMemMapArrayAsync entry against the sparse array it names.
CUresult CheckArrayMap(DriverState* st, const CUarrayMapInfo& m) CUHAL_REQUIRES(st->mu) {
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  std::size_t element = 0;
  unsigned levels = 1;
  switch (EnumBits(m.resourceType)) {
    case CU_RESOURCE_TYPE_ARRAY: {
      const ArrayRecord* a = st->arrays().Find(m.resource.array);
      if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
      desc = a->desc;
      element = a->element_size;
      break;
    }
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: {
      const MipmappedRecord* mm = st->arrays().FindMipmapped(m.resource.mipmap);
      if (mm == nullptr) return CUDA_ERROR_INVALID_VALUE;
      desc = mm->desc;
      element = mm->element_size;
      levels = static_cast<unsigned>(mm->levels.size());
      break;
    }
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if ((desc.Flags & CUDA_ARRAY3D_SPARSE) == 0) return CUDA_ERROR_INVALID_VALUE;
  if (m.flags != 0 || m.reserved[0] != 0 || m.reserved[1] != 0) return CUDA_ERROR_INVALID_VALUE;
  if (m.deviceBitMask != 1) return CUDA_ERROR_INVALID_VALUE;
  const int op = EnumBits(m.memOperationType);
  if (op != CU_MEM_OPERATION_TYPE_MAP && op != CU_MEM_OPERATION_TYPE_UNMAP) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const SparseTile t = ArrayModel::TileOf(desc, element);
  if (EnumBits(m.subresourceType) == CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL) {
    const auto& s = m.subresource.sparseLevel;
    if (s.level >= levels) return CUDA_ERROR_INVALID_VALUE;
    const CUDA_ARRAY3D_DESCRIPTOR d = ArrayModel::LevelOf(desc, s.level);
    const std::size_t w = d.Width, h = std::max<std::size_t>(d.Height, 1);
    const std::size_t dep = (desc.Flags & CUDA_ARRAY3D_LAYERED) != 0
                                ? 1
                                : std::max<std::size_t>(d.Depth, 1);
    if (s.offsetX % t.w != 0 || s.offsetY % t.h != 0 || s.offsetZ % std::max(t.d, 1u) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (s.extentWidth == 0 ||
        s.offsetX + std::uint64_t{s.extentWidth} > (w + t.w - 1) / t.w * t.w ||
        s.offsetY + std::uint64_t{std::max(s.extentHeight, 1u)} > (h + t.h - 1) / t.h * t.h ||
        s.offsetZ + std::uint64_t{std::max(s.extentDepth, 1u)} >
            (dep + std::max(t.d, 1u) - 1) / std::max(t.d, 1u) * std::max(t.d, 1u)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (s.extentWidth % t.w != 0 && s.offsetX + s.extentWidth < w) return CUDA_ERROR_INVALID_VALUE;
  } else if (EnumBits(m.subresourceType) == CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL) {
    if (EnumBits(m.resourceType) != CU_RESOURCE_TYPE_MIPMAPPED_ARRAY) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  } else {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (op == CU_MEM_OPERATION_TYPE_MAP) {
    if (EnumBits(m.memHandleType) != CU_MEM_HANDLE_TYPE_GENERIC) return CUDA_ERROR_INVALID_VALUE;
    // Measured: an offset not on 64 KiB, or one past the handle's memory (4 MiB into 2 MiB), is
    // refused. UNMEASURED: a null handle (it crashed the real driver).
    const std::size_t size = st->vmm().HandleSize(m.memHandle.memHandle);
    if (size == 0) return CUDA_ERROR_INVALID_VALUE;
    const bool tail = EnumBits(m.subresourceType) == CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL;
    const std::uint64_t need = tail ? m.subresource.miptail.size : ArrayModel::kAlignment;
    if (m.offset % ArrayModel::kAlignment != 0 || m.offset > size || size - m.offset < need) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

// --- modules from files and fat binaries ---

CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* fname) try {
  FAKECUDA_ENTER(cuModuleLoad)
  if (module == nullptr || fname == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  // As cuLibraryLoadFromFile (measured, library_entry.cc): an empty name is INVALID_VALUE, a
  // directory OUT_OF_MEMORY, a missing file FILE_NOT_FOUND, an empty one INVALID_IMAGE.
  if (*fname == '\0') return CUDA_ERROR_INVALID_VALUE;
  struct stat info;
  if (stat(fname, &info) != 0) return CUDA_ERROR_FILE_NOT_FOUND;
  if (S_ISDIR(info.st_mode)) return CUDA_ERROR_OUT_OF_MEMORY;
  if (!S_ISREG(info.st_mode)) return CUDA_ERROR_FILE_NOT_FOUND;
  std::ifstream in(fname, std::ios::binary);
  if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) return CUDA_ERROR_INVALID_IMAGE;
  std::string log;
  return fakecuda::LoadModuleImage(st, ctx, bytes.c_str(), module, &log);
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleLoad");
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) try {
  FAKECUDA_ENTER(cuModuleLoadFatBinary)
  if (module == nullptr || fatCubin == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  // Measured: the fat binary itself loads as cuModuleLoadData's image does (PTX text and a
  // linked cubin too); the runtime's wrapper around one (magic 0x466243b1) is
  // CUDA_ERROR_INVALID_IMAGE.
  if (std::uint32_t magic = 0; (std::memcpy(&magic, fatCubin, 4), magic == 0x466243b1u)) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  std::string log;
  return fakecuda::LoadModuleImage(st, ctx, fatCubin, module, &log);
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleLoadFatBinary");
}

// --- the deprecated execution control ---

CUresult CUDAAPI cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z) try {
  FAKECUDA_ENTER(cuFuncSetBlockShape)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  FunctionState* fn = fakecuda::Modules(st).FindFunction(hfunc);
  if (fn == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (x <= 0 || y <= 0 || z <= 0) return CUDA_ERROR_INVALID_VALUE;
  fn->legacy_block[0] = static_cast<unsigned>(x);
  fn->legacy_block[1] = static_cast<unsigned>(y);
  fn->legacy_block[2] = static_cast<unsigned>(z);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncSetBlockShape");
}

CUresult CUDAAPI cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes) try {
  FAKECUDA_ENTER(cuFuncSetSharedSize)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  FunctionState* fn = fakecuda::Modules(st).FindFunction(hfunc);
  if (fn == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  fn->legacy_shared = bytes;  // checked at launch, as cuLaunchKernel's sharedMemBytes
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncSetSharedSize");
}

CUresult CUDAAPI cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config) try {
  FAKECUDA_ENTER(cuFuncSetSharedMemConfig)
  FunctionState* fn = fakecuda::Modules(st).FindFunction(hfunc);
  if (fn == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // cuda.h: the bank size is fixed on current devices and the setting is ignored.
  const int c = fakecuda::EnumBits(config);
  if (c < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || c > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuFuncSetSharedMemConfig");
}

CUresult CUDAAPI cuParamSetSize(CUfunction hfunc, unsigned int numbytes) try {
  FAKECUDA_ENTER(cuParamSetSize)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  FunctionState* fn = fakecuda::Modules(st).FindFunction(hfunc);
  if (fn == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (numbytes > fakecuda::kMaxParamBytes) return CUDA_ERROR_INVALID_VALUE;  // measured (32768)
  fn->legacy_param_size = numbytes;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuParamSetSize");
}

CUresult CUDAAPI cuParamSeti(CUfunction hfunc, int offset, unsigned int value) try {
  FAKECUDA_ENTER(cuParamSeti)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  return fakecuda::SetParam(st, hfunc, offset, &value, sizeof value);
} catch (...) {
  return ::fakecuda::EntryFailed("cuParamSeti");
}

CUresult CUDAAPI cuParamSetf(CUfunction hfunc, int offset, float value) try {
  FAKECUDA_ENTER(cuParamSetf)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  return fakecuda::SetParam(st, hfunc, offset, &value, sizeof value);
} catch (...) {
  return ::fakecuda::EntryFailed("cuParamSetf");
}

CUresult CUDAAPI cuParamSetv(CUfunction hfunc, int offset, void* ptr, unsigned int numbytes) try {
  FAKECUDA_ENTER(cuParamSetv)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  return fakecuda::SetParam(st, hfunc, offset, ptr, numbytes);
} catch (...) {
  return ::fakecuda::EntryFailed("cuParamSetv");
}

CUresult CUDAAPI cuParamSetTexRef(CUfunction hfunc, int texunit, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuParamSetTexRef)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  if (fakecuda::Modules(st).FindFunction(hfunc) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (st->legacy().FindTexRef(hTexRef) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // Measured: texunit 0 is taken as CU_PARAM_TR_DEFAULT is (cuda.h asks for the latter). The
  // fake samples no texture.
  (void)texunit;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuParamSetTexRef");
}

CUresult CUDAAPI cuLaunch(CUfunction f) try {
  FAKECUDA_ENTER(cuLaunch)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  return fakecuda::LaunchLegacy(st, f, 1, 1, nullptr, "cuLaunch");
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunch");
}

CUresult CUDAAPI cuLaunchGrid(CUfunction f, int grid_width, int grid_height) try {
  FAKECUDA_ENTER(cuLaunchGrid)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  return fakecuda::LaunchLegacy(st, f, grid_width, grid_height, nullptr, "cuLaunchGrid");
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunchGrid");
}

CUresult CUDAAPI cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height,
                                   CUstream hStream) try {
  FAKECUDA_ENTER(cuLaunchGridAsync)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  return fakecuda::LaunchLegacy(st, f, grid_width, grid_height, hStream, "cuLaunchGridAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunchGridAsync");
}

// cuda.h: one launch per device, on created streams (not NULL, CU_STREAM_LEGACY or
// CU_STREAM_PER_THREAD), identical configurations; each is a cooperative launch. The fake runs
// them one after another (the pre/post-launch synchronisation flags have nothing to order).
CUresult CUDAAPI cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS* launchParamsList,
                                                      unsigned int numDevices,
                                                      unsigned int flags) try {
  FAKECUDA_ENTER(cuLaunchCooperativeKernelMultiDevice)
  if (launchParamsList == nullptr || numDevices == 0) return CUDA_ERROR_INVALID_VALUE;
  if (numDevices > static_cast<unsigned>(st->device_count())) return CUDA_ERROR_INVALID_VALUE;
  if ((flags & ~(CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC |
                 CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::vector<int> devices;
  for (unsigned i = 0; i < numDevices; ++i) {
    const CUDA_LAUNCH_PARAMS& p = launchParamsList[i];
    // Measured: the NULL and per-thread streams are CUDA_ERROR_INVALID_HANDLE.
    if (p.hStream == nullptr || p.hStream == CU_STREAM_LEGACY ||
        p.hStream == CU_STREAM_PER_THREAD) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    const CUDA_LAUNCH_PARAMS& q = launchParamsList[0];
    if (p.gridDimX != q.gridDimX || p.gridDimY != q.gridDimY || p.gridDimZ != q.gridDimZ ||
        p.blockDimX != q.blockDimX || p.blockDimY != q.blockDimY ||
        p.blockDimZ != q.blockDimZ || p.sharedMemBytes != q.sharedMemBytes) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    CUresult err;
    fakecuda::Stream* s = st->ResolveStream(p.hStream, &err);
    if (s == nullptr) return err;
    const fakecuda::Context* c = st->contexts().Find(s->ctx_id);
    if (c == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (std::find(devices.begin(), devices.end(), c->device) != devices.end()) {
      return CUDA_ERROR_INVALID_VALUE;  // two launches on one device
    }
    devices.push_back(c->device);
    if (st->profile(c->device).Attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH) ==
        0) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  for (unsigned i = 0; i < numDevices; ++i) {
    const CUDA_LAUNCH_PARAMS& p = launchParamsList[i];
    fakecuda::LaunchConfig config{{p.gridDimX, p.gridDimY, p.gridDimZ},
                                  {p.blockDimX, p.blockDimY, p.blockDimZ},
                                  p.sharedMemBytes};
    if (CUresult e = fakecuda::LaunchFunction(st, p.function, config, p.hStream,
                                              p.kernelParams, nullptr,
                                              "cuLaunchCooperativeKernelMultiDevice", true);
        e != CUDA_SUCCESS) {
      return e;
    }
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLaunchCooperativeKernelMultiDevice");
}

// --- texture references ---

CUresult CUDAAPI cuTexRefCreate(CUtexref* pTexRef) try {
  FAKECUDA_ENTER(cuTexRefCreate)
  if (pTexRef == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FAKECUDA_REQUIRE_CONTEXT()
  (void)ctx;
  st->legacy().AddTexRef(TexRefRecord(), pTexRef);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefCreate");
}

CUresult CUDAAPI cuTexRefDestroy(CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefDestroy)
  TexRefRecord* t = st->legacy().FindTexRef(hTexRef);
  if (t == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  st->legacy().DestroyTexRef(t->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefDestroy");
}

CUresult CUDAAPI cuModuleGetTexRef(CUtexref* pTexRef, CUmodule hmod, const char* name) try {
  FAKECUDA_ENTER(cuModuleGetTexRef)
  if (pTexRef == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const fakecuda::ModuleState* mod = fakecuda::Modules(st).FindModule(hmod);
  if (mod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (std::find(mod->texrefs.begin(), mod->texrefs.end(), name) == mod->texrefs.end()) {
    return CUDA_ERROR_NOT_FOUND;
  }
  if (st->legacy().FindModuleTexRef(mod->id, name, pTexRef) != nullptr) return CUDA_SUCCESS;
  TexRefRecord r;
  r.module_id = mod->id;
  r.name = name;
  st->legacy().AddTexRef(std::move(r), pTexRef);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleGetTexRef");
}

#define FAKECUDA_TEXREF(handle)                                      \
  TexRefRecord* t = st->legacy().FindTexRef(handle);                 \
  if (t == nullptr) return CUDA_ERROR_INVALID_HANDLE;

CUresult CUDAAPI cuTexRefSetArray(CUtexref hTexRef, CUarray hArray, unsigned int Flags) try {
  FAKECUDA_ENTER(cuTexRefSetArray)
  FAKECUDA_TEXREF(hTexRef)
  // Measured: flags 0 and CU_TRSA_OVERRIDE_FORMAT are accepted (7 is not); a null array is
  // CUDA_ERROR_INVALID_HANDLE.
  if ((Flags & ~static_cast<unsigned>(CU_TRSA_OVERRIDE_FORMAT)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const ArrayRecord* a = st->arrays().Find(hArray);
  if (a == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  t->binding = TexRefBinding::kArray;
  t->array = hArray;
  t->format = a->desc.Format;
  t->channels = static_cast<int>(a->desc.NumChannels);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetArray");
}

CUresult CUDAAPI cuTexRefSetMipmappedArray(CUtexref hTexRef, CUmipmappedArray hMipmappedArray,
                                           unsigned int Flags) try {
  FAKECUDA_ENTER(cuTexRefSetMipmappedArray)
  FAKECUDA_TEXREF(hTexRef)
  if ((Flags & ~static_cast<unsigned>(CU_TRSA_OVERRIDE_FORMAT)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;  // UNMEASURED (as cuTexRefSetArray)
  }
  const MipmappedRecord* m = st->arrays().FindMipmapped(hMipmappedArray);
  if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // measured for a null one
  t->binding = TexRefBinding::kMipmapped;
  t->mipmapped = hMipmappedArray;
  t->format = m->desc.Format;
  t->channels = static_cast<int>(m->desc.NumChannels);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetMipmappedArray");
}

CUresult CUDAAPI cuTexRefSetAddress(size_t* ByteOffset, CUtexref hTexRef, CUdeviceptr dptr,
                                    size_t bytes) try {
  FAKECUDA_ENTER(cuTexRefSetAddress)
  FAKECUDA_TEXREF(hTexRef)
  if (bytes == 0) {  // measured: (0, 0) succeeds; the reference is left unbound
    if (ByteOffset != nullptr) *ByteOffset = 0;
    t->binding = TexRefBinding::kNone;
    return CUDA_SUCCESS;
  }
  const fakecuda::Allocation* a = st->FindAllocation(dptr, std::max<std::size_t>(bytes, 1));
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t element =
      std::max<std::size_t>(
          ArrayModel::ElementSize(t->format, static_cast<unsigned>(t->channels)), 1);
  const fakecuda::DeviceProfile& p = st->profile(a->device >= 0 ? a->device : 0);
  if (bytes / element >
      static_cast<std::size_t>(p.Attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const auto align =
      static_cast<CUdeviceptr>(std::max(p.Attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT), 1));
  if (ByteOffset != nullptr) *ByteOffset = static_cast<size_t>(dptr % align);
  t->binding = TexRefBinding::kLinear;
  t->address = dptr;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetAddress");
}

CUresult CUDAAPI cuTexRefSetAddress2D(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR* desc,
                                      CUdeviceptr dptr, size_t Pitch) try {
  FAKECUDA_ENTER(cuTexRefSetAddress2D)
  FAKECUDA_TEXREF(hTexRef)
  if (desc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t element = ArrayModel::ElementSize(desc->Format, desc->NumChannels);
  if (element == 0 || desc->Width == 0 || desc->Height == 0 || Pitch < desc->Width * element) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const fakecuda::Allocation* a =
      st->FindAllocation(dptr, (desc->Height - 1) * Pitch + desc->Width * element);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const fakecuda::DeviceProfile& p = st->profile(a->device >= 0 ? a->device : 0);
  const auto align = static_cast<std::size_t>(p.Attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
  const auto pitch_align =
      static_cast<std::size_t>(p.Attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT));
  if ((align != 0 && dptr % align != 0) || (pitch_align != 0 && Pitch % pitch_align != 0)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  t->binding = TexRefBinding::kPitch2D;
  t->address = dptr;
  t->format = desc->Format;
  t->channels = static_cast<int>(desc->NumChannels);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetAddress2D");
}

CUresult CUDAAPI cuTexRefSetFormat(CUtexref hTexRef, CUarray_format fmt,
                                   int NumPackedComponents) try {
  FAKECUDA_ENTER(cuTexRefSetFormat)
  FAKECUDA_TEXREF(hTexRef)
  // Measured: the format is not checked (0x77 is taken), 0 components are, 3 are not.
  // UNMEASURED: other counts (refused here unless 1, 2 or 4).
  if (NumPackedComponents != 0 && NumPackedComponents != 1 && NumPackedComponents != 2 &&
      NumPackedComponents != 4) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  t->format = fmt;
  t->channels = NumPackedComponents;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetFormat");
}

CUresult CUDAAPI cuTexRefSetAddressMode(CUtexref hTexRef, int dim, CUaddress_mode am) try {
  FAKECUDA_ENTER(cuTexRefSetAddressMode)
  FAKECUDA_TEXREF(hTexRef)
  if (dim < 0 || dim > 2) return CUDA_ERROR_INVALID_VALUE;
  // Measured: an unknown mode (9) succeeds and leaves the dimension's mode as it was.
  if (fakecuda::ValidAddressMode(fakecuda::EnumBits(am))) t->address_mode[dim] = am;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetAddressMode");
}

CUresult CUDAAPI cuTexRefSetFilterMode(CUtexref hTexRef, CUfilter_mode fm) try {
  FAKECUDA_ENTER(cuTexRefSetFilterMode)
  FAKECUDA_TEXREF(hTexRef)
  t->filter = fakecuda::EnumBits(fm);  // measured: not checked (9 is taken and read back)
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetFilterMode");
}

CUresult CUDAAPI cuTexRefSetMipmapFilterMode(CUtexref hTexRef, CUfilter_mode fm) try {
  FAKECUDA_ENTER(cuTexRefSetMipmapFilterMode)
  FAKECUDA_TEXREF(hTexRef)
  if (!fakecuda::ValidFilterMode(fakecuda::EnumBits(fm))) return CUDA_ERROR_INVALID_VALUE;
  t->mipmap_filter = fm;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetMipmapFilterMode");
}

CUresult CUDAAPI cuTexRefSetMipmapLevelBias(CUtexref hTexRef, float bias) try {
  FAKECUDA_ENTER(cuTexRefSetMipmapLevelBias)
  FAKECUDA_TEXREF(hTexRef)
  t->mipmap_bias = bias;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetMipmapLevelBias");
}

CUresult CUDAAPI cuTexRefSetMipmapLevelClamp(CUtexref hTexRef, float minMipmapLevelClamp,
                                             float maxMipmapLevelClamp) try {
  FAKECUDA_ENTER(cuTexRefSetMipmapLevelClamp)
  FAKECUDA_TEXREF(hTexRef)
  t->min_clamp = minMipmapLevelClamp;
  t->max_clamp = maxMipmapLevelClamp;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetMipmapLevelClamp");
}

CUresult CUDAAPI cuTexRefSetMaxAnisotropy(CUtexref hTexRef, unsigned int maxAniso) try {
  FAKECUDA_ENTER(cuTexRefSetMaxAnisotropy)
  FAKECUDA_TEXREF(hTexRef)
  t->max_anisotropy = maxAniso;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetMaxAnisotropy");
}

CUresult CUDAAPI cuTexRefSetBorderColor(CUtexref hTexRef, float* pBorderColor) try {
  FAKECUDA_ENTER(cuTexRefSetBorderColor)
  FAKECUDA_TEXREF(hTexRef)
  if (pBorderColor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(t->border, pBorderColor, sizeof t->border);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetBorderColor");
}

CUresult CUDAAPI cuTexRefSetFlags(CUtexref hTexRef, unsigned int Flags) try {
  FAKECUDA_ENTER(cuTexRefSetFlags)
  FAKECUDA_TEXREF(hTexRef)
  // Measured: 0x80000000 is refused. UNMEASURED: the mask (cuda.h's flags: READ_AS_INTEGER,
  // NORMALIZED_COORDINATES, SRGB, DISABLE_TRILINEAR_OPTIMIZATION, SEAMLESS_CUBEMAP).
  if ((Flags & ~0x73u) != 0) return CUDA_ERROR_INVALID_VALUE;
  t->flags = Flags;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefSetFlags");
}

CUresult CUDAAPI cuTexRefGetAddress(CUdeviceptr* pdptr, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetAddress)
  FAKECUDA_TEXREF(hTexRef)
  if (pdptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (t->binding != TexRefBinding::kLinear && t->binding != TexRefBinding::kPitch2D) {
    *pdptr = 0;  // measured: written, and the call fails
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pdptr = t->address;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetAddress");
}

CUresult CUDAAPI cuTexRefGetArray(CUarray* phArray, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetArray)
  FAKECUDA_TEXREF(hTexRef)
  if (phArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (t->binding != TexRefBinding::kArray) return CUDA_ERROR_INVALID_VALUE;
  *phArray = t->array;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetArray");
}

CUresult CUDAAPI cuTexRefGetMipmappedArray(CUmipmappedArray* phMipmappedArray,
                                           CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetMipmappedArray)
  FAKECUDA_TEXREF(hTexRef)
  if (phMipmappedArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (t->binding != TexRefBinding::kMipmapped) return CUDA_ERROR_INVALID_VALUE;
  *phMipmappedArray = t->mipmapped;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetMipmappedArray");
}

CUresult CUDAAPI cuTexRefGetAddressMode(CUaddress_mode* pam, CUtexref hTexRef, int dim) try {
  FAKECUDA_ENTER(cuTexRefGetAddressMode)
  FAKECUDA_TEXREF(hTexRef)
  if (pam == nullptr || dim < 0 || dim > 2) return CUDA_ERROR_INVALID_VALUE;
  *pam = t->address_mode[dim];
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetAddressMode");
}

CUresult CUDAAPI cuTexRefGetFilterMode(CUfilter_mode* pfm, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetFilterMode)
  FAKECUDA_TEXREF(hTexRef)
  if (pfm == nullptr) return CUDA_ERROR_INVALID_VALUE;
  static_assert(sizeof(*pfm) == sizeof(t->filter));
  std::memcpy(pfm, &t->filter, sizeof(*pfm));  // the bits as set (legacy_model.h)
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetFilterMode");
}

CUresult CUDAAPI cuTexRefGetFormat(CUarray_format* pFormat, int* pNumChannels,
                                   CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetFormat)
  FAKECUDA_TEXREF(hTexRef)
  // Measured: either output may be null.
  if (pFormat != nullptr) *pFormat = t->format;
  if (pNumChannels != nullptr) *pNumChannels = t->channels;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetFormat");
}

CUresult CUDAAPI cuTexRefGetMipmapFilterMode(CUfilter_mode* pfm, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetMipmapFilterMode)
  FAKECUDA_TEXREF(hTexRef)
  if (pfm == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pfm = t->mipmap_filter;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetMipmapFilterMode");
}

CUresult CUDAAPI cuTexRefGetMipmapLevelBias(float* pbias, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetMipmapLevelBias)
  FAKECUDA_TEXREF(hTexRef)
  if (pbias == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pbias = t->mipmap_bias;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetMipmapLevelBias");
}

CUresult CUDAAPI cuTexRefGetMipmapLevelClamp(float* pminMipmapLevelClamp,
                                             float* pmaxMipmapLevelClamp, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetMipmapLevelClamp)
  FAKECUDA_TEXREF(hTexRef)
  if (pminMipmapLevelClamp == nullptr || pmaxMipmapLevelClamp == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pminMipmapLevelClamp = t->min_clamp;
  *pmaxMipmapLevelClamp = t->max_clamp;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetMipmapLevelClamp");
}

CUresult CUDAAPI cuTexRefGetMaxAnisotropy(int* pmaxAniso, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetMaxAnisotropy)
  FAKECUDA_TEXREF(hTexRef)
  if (pmaxAniso == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pmaxAniso = static_cast<int>(t->max_anisotropy);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetMaxAnisotropy");
}

CUresult CUDAAPI cuTexRefGetBorderColor(float* pBorderColor, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetBorderColor)
  FAKECUDA_TEXREF(hTexRef)
  if (pBorderColor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(pBorderColor, t->border, sizeof t->border);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetBorderColor");
}

CUresult CUDAAPI cuTexRefGetFlags(unsigned int* pFlags, CUtexref hTexRef) try {
  FAKECUDA_ENTER(cuTexRefGetFlags)
  FAKECUDA_TEXREF(hTexRef)
  if (pFlags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pFlags = t->flags;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuTexRefGetFlags");
}

// --- surface references ---

CUresult CUDAAPI cuModuleGetSurfRef(CUsurfref* pSurfRef, CUmodule hmod, const char* name) try {
  FAKECUDA_ENTER(cuModuleGetSurfRef)
  if (pSurfRef == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const fakecuda::ModuleState* mod = fakecuda::Modules(st).FindModule(hmod);
  if (mod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (std::find(mod->surfrefs.begin(), mod->surfrefs.end(), name) == mod->surfrefs.end()) {
    return CUDA_ERROR_NOT_FOUND;
  }
  if (st->legacy().FindModuleSurfRef(mod->id, name, pSurfRef) != nullptr) return CUDA_SUCCESS;
  SurfRefRecord r;
  r.module_id = mod->id;
  r.name = name;
  st->legacy().AddSurfRef(std::move(r), pSurfRef);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuModuleGetSurfRef");
}

CUresult CUDAAPI cuSurfRefSetArray(CUsurfref hSurfRef, CUarray hArray, unsigned int Flags) try {
  FAKECUDA_ENTER(cuSurfRefSetArray)
  SurfRefRecord* s = st->legacy().FindSurfRef(hSurfRef);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  const ArrayRecord* a = st->arrays().Find(hArray);
  if (a == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // measured for a null array
  if ((a->desc.Flags & CUDA_ARRAY3D_SURFACE_LDST) == 0) return CUDA_ERROR_INVALID_VALUE;
  s->array = hArray;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuSurfRefSetArray");
}

CUresult CUDAAPI cuSurfRefGetArray(CUarray* phArray, CUsurfref hSurfRef) try {
  FAKECUDA_ENTER(cuSurfRefGetArray)
  SurfRefRecord* s = st->legacy().FindSurfRef(hSurfRef);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (phArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (s->array == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *phArray = s->array;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuSurfRefGetArray");
}

// --- surface objects ---

CUresult CUDAAPI cuSurfObjectCreate(CUsurfObject* pSurfObject,
                                    const CUDA_RESOURCE_DESC* pResDesc) try {
  FAKECUDA_ENTER(cuSurfObjectCreate)
  FAKECUDA_REQUIRE_CONTEXT()
  if (pSurfObject == nullptr || pResDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // cuda.h: an array resource, flags zero. Measured: an array made without
  // CUDA_ARRAY3D_SURFACE_LDST is accepted (cuda.h says it must have it). UNMEASURED (the real
  // driver crashed on the null output before): the other resource checks.
  if (fakecuda::EnumBits(pResDesc->resType) != CU_RESOURCE_TYPE_ARRAY || pResDesc->flags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (st->arrays().Find(pResDesc->res.array.hArray) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  SurfObjectRecord r;
  r.ctx_id = ctx->id;
  std::memset(&r.resource, 0, sizeof r.resource);
  r.resource.resType = CU_RESOURCE_TYPE_ARRAY;
  r.resource.res.array.hArray = pResDesc->res.array.hArray;
  *pSurfObject = st->legacy().AddSurfObject(std::move(r));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuSurfObjectCreate");
}

CUresult CUDAAPI cuSurfObjectDestroy(CUsurfObject surfObject) try {
  FAKECUDA_ENTER(cuSurfObjectDestroy)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  // Measured: 0, a made-up object and one destroyed already all answer CUDA_SUCCESS.
  if (const SurfObjectRecord* s = st->legacy().FindSurfObject(surfObject); s != nullptr) {
    st->legacy().DestroySurfObject(s->id);
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuSurfObjectDestroy");
}

CUresult CUDAAPI cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc,
                                             CUsurfObject surfObject) try {
  FAKECUDA_ENTER(cuSurfObjectGetResourceDesc)
  FAKECUDA_REQUIRE_CONTEXT()  // measured: before the handle is looked at
  (void)ctx;
  if (pResDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const SurfObjectRecord* s = st->legacy().FindSurfObject(surfObject);
  if (s == nullptr) return CUDA_ERROR_INVALID_VALUE;  // measured: 0, made up or destroyed
  // Measured: the type, the array and the flags are written; the rest of the union is not.
  pResDesc->resType = s->resource.resType;
  pResDesc->res.array.hArray = s->resource.res.array.hArray;
  pResDesc->flags = 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuSurfObjectGetResourceDesc");
}

// --- sparse and deferred-mapping mipmapped arrays ---

CUresult CUDAAPI cuMipmappedArrayGetMemoryRequirements(
    CUDA_ARRAY_MEMORY_REQUIREMENTS* memoryRequirements, CUmipmappedArray mipmap,
    CUdevice device) try {
  FAKECUDA_ENTER_NOLOCK(cuMipmappedArrayGetMemoryRequirements)
  cuhal::MutexLock lock(st->mu);
  // As cuArrayGetMemoryRequirements (measured, array_entry.cc): every failure is
  // CUDA_ERROR_INVALID_VALUE, and the call answers before cuInit.
  if (memoryRequirements == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const MipmappedRecord* m = st->arrays().FindMipmapped(mipmap);
  if (m == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured: the device ordinal is not checked (1 and -1 succeed on a one-GPU machine). The
  // size is the levels' footprints summed, rounded up to 64 KiB (256 x 256 float, 5 levels:
  // 393216, measured). UNMEASURED (the probe crashed the real driver on a destroyed mipmapped
  // array before it reached them): sparse and plain mipmapped arrays.
  (void)device;
  if ((m->desc.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::memset(memoryRequirements, 0, sizeof *memoryRequirements);
  memoryRequirements->size = fakecuda::MipmapRequirement(*m);
  memoryRequirements->alignment = ArrayModel::kAlignment;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMipmappedArrayGetMemoryRequirements");
}

CUresult CUDAAPI cuMemMapArrayAsync(CUarrayMapInfo* mapInfoList, unsigned int count,
                                    CUstream hStream) try {
  FAKECUDA_ENTER_NOLOCK(cuMemMapArrayAsync)
  // Measured: the list is checked before cuInit is.
  if (mapInfoList == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
  cuhal::MutexLock lock(st->mu);
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult err;
  if (st->ResolveStream(hStream, &err) == nullptr) return err;
  for (unsigned i = 0; i < count; ++i) {
    if (CUresult e = fakecuda::CheckArrayMap(st, mapInfoList[i]); e != CUDA_SUCCESS) return e;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemMapArrayAsync");
}

}  // extern "C"
