// Copyright 2026 The cuhal Authors.
// Reading module images: PTX text and fakecuda's own image format (see fakecuda/kernel_registry.h
// for both, as users see them). Pure functions: no driver state, no locks.
#ifndef CUHAL_FAKECUDA_INTERNAL_MODULE_IMAGE_H_
#define CUHAL_FAKECUDA_INTERNAL_MODULE_IMAGE_H_

#include <cuda.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "fakecuda/ptx/program.h"

namespace fakecuda {

// One kernel parameter's place in the packed parameter buffer.
struct KernelParamInfo {
  std::size_t size = 0;
  std::size_t align = 1;
  std::size_t offset = 0;
};

// What a module image says about one kernel (an `.entry`).
struct KernelInfo {
  std::string name;
  std::vector<KernelParamInfo> params;
  std::size_t param_bytes = 0;   // end of the last parameter: the packed buffer's size
  int static_shared_bytes = 0;   // `.shared` declarations in the body (not `.extern .shared`)
  int local_bytes = 0;           // `.local` declarations in the body (per thread)
  int const_bytes = 0;           // fake images only (`const=`)
  int num_regs = 0;              // 0: unknown (reported as kDefaultRegisters); PTX: estimated
  int max_threads = 0;           // from .maxntid / .reqntid / `maxthreads=`; 0: the device's limit
  std::array<unsigned, 3> reqntid{0, 0, 0};  // .reqntid: the only block shape allowed; 0s: none
};

// A module-scope variable (`.global` or `.const`): what cuModuleGetGlobal finds.
struct GlobalInfo {
  std::string name;
  std::size_t size = 0;
  std::vector<unsigned char> init;  // initial bytes (shorter than size: the rest is zero)
  bool managed = false;             // `.attribute(.managed)`: cuLibraryGetManaged finds it
};

// kMachineCode: a fat binary with cubins (machine code) and no PTX, which fakecuda cannot run;
// it has no kernels, and CheckImageForDevice (module_model.h) answers for it.
enum class ImageFormat { kPtx, kFake, kMachineCode };

// What a fat binary holds, by architecture (sm_version of each entry: 90 for sm_90), for
// CheckImageForDevice: whether its PTX fits the device, else whether any cubin would.
struct FatbinContents {
  struct Cubin {
    int sm = 0;
    bool arch_specific = false;  // sm_90a and the like (entry flag 0x100000): that device only
  };
  bool present = false;  // the image was a fat binary (or its wrapper)
  bool has_ptx = false;  // a PTX entry was read: the kernels come from it
  int ptx_sm = 0;        // that entry's architecture (0: not given, taken to fit any device)
  std::vector<Cubin> cubins;
};

struct ModuleImage {
  ImageFormat format = ImageFormat::kPtx;
  int ptx_version = 0;  // PTX ISA version as major * 10 + minor (`.version 8.0` -> 80); 0: fake
  int target_sm = 0;    // `.target sm_90a` -> 90; 0: none/fake
  std::vector<KernelInfo> kernels;
  std::vector<GlobalInfo> globals;
  // PTX only: the bodies, for the interpreter (fakecuda/ptx). A kernel whose body uses what the
  // interpreter does not implement has Program::KernelError set; null when the bodies could not
  // be read at all (program_error says why).
  std::shared_ptr<const ptx::Program> program;
  std::string program_error;
  FatbinContents fatbin;  // when the image was a fat binary
  // PTX only: the names of the `.texref` and `.surfref` variables (cuModuleGetTexRef/SurfRef).
  std::vector<std::string> texrefs;
  std::vector<std::string> surfrefs;
};

// The register count reported for kernels whose image does not say, and the most a PTX kernel
// without .maxnreg is estimated to use (PTX is not compiled; module_image.cc EstimateRegisters).
inline constexpr int kDefaultRegisters = 32;
// The fewest registers a PTX kernel is reported to use (measured on the H100: a kernel of four
// 32-bit registers' worth reports 8) and the most a thread may have.
inline constexpr int kMinRegisters = 8;
inline constexpr int kMaxRegisters = 255;

// Parses the image cuModuleLoadData received. `image` is read as a NUL-terminated string unless
// its first bytes are a binary magic (ELF cubin, fatbinary), which are recognised without reading
// past them. Returns CUDA_SUCCESS, or the error the load fails with and a reason in *log:
//   CUDA_ERROR_INVALID_IMAGE        not a module image fakecuda recognises, or a malformed
//                                   FAKECUDA-MODULE image;
//   CUDA_ERROR_INVALID_PTX          PTX that does not parse (the JIT would fail);
//   CUDA_ERROR_NOT_SUPPORTED        a cubin (ELF), or a fat binary whose PTX is compressed with
//                                   a library that could not be loaded.
// A fat binary (or the runtime's wrapper of one) is read as its PTX entry for the oldest
// architecture; one with no PTX at all is CUDA_SUCCESS with format kMachineCode and no kernels
// (out->fatbin says what it holds): whether that is CUDA_ERROR_NO_BINARY_FOR_GPU depends on the
// device (CheckImageForDevice).
CUresult ParseModuleImage(const void* image, ModuleImage* out, std::string* log);
// The same, for a caller that knows how many bytes `image` holds (a fuzzer, a file): a fat
// binary is read no further than `size` bytes, and a fat-binary wrapper (a pointer to one
// elsewhere) is refused. Text images are NUL-terminated within `size`.
CUresult ParseModuleImage(const void* image, std::size_t size, ModuleImage* out,
                          std::string* log);

// The newest PTX ISA version (major * 10 + minor) a driver of `driver_version` JIT-compiles.
int MaxPtxVersion(int driver_version);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_MODULE_IMAGE_H_
