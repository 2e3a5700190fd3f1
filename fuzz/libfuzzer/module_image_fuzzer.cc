// Copyright 2026 The cuhal Authors.
// libFuzzer target: what cuModuleLoadData receives (fakecuda/internal/module_image.h,
// ParseModuleImage): PTX text, FAKECUDA-MODULE images, and the ELF cubin and fatbinary magics it
// must recognise without reading past them. The image is NUL-terminated, as the driver API
// requires of text images (the magics are tested on the raw bytes, so a binary input is passed
// with a terminator too, which is what a caller's buffer has beyond its first bytes here).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fakecuda/internal/module_image.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<unsigned char> image(data, data + size);
  image.push_back(0);
  fakecuda::ModuleImage module;
  std::string log;
  // The image's size is known here: the parser must read nothing past it (a fat binary's
  // header and entries are binary; the first input libFuzzer made was a truncated header).
  CUresult result = fakecuda::ParseModuleImage(image.data(), image.size(), &module, &log);
  if (result != CUDA_SUCCESS) {
    if (log.empty()) std::abort();  // a failed load always says why
    return 0;
  }
  for (const auto& kernel : module.kernels) {
    std::size_t end = 0;
    for (const auto& param : kernel.params) {
      if (param.align == 0) std::abort();
      end = param.offset + param.size;
    }
    if (!kernel.params.empty() && kernel.param_bytes < end) std::abort();
  }
  for (const auto& global : module.globals) {
    if (global.init.size() > global.size) std::abort();
  }
  if (module.program != nullptr) {
    for (std::size_t i = 0; i < module.program->functions.size(); ++i) {
      if (module.program->functions[i].is_entry) (void)module.program->KernelError(static_cast<int>(i));
    }
  }
  (void)fakecuda::MaxPtxVersion(module.ptx_version * 100);
  return 0;
}
