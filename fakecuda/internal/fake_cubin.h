// Copyright 2026 The cuhal Authors.
// The cubin fakecuda's JIT linker (cuLinkComplete) hands out: an ELF64 file as a real cubin is
// (magic, class, e_type ET_EXEC, e_machine EM_CUDA), whose one content section,
// ".nv.fakecuda.ptx", holds the linked PTX text. cuModuleLoadData, cuLibraryLoadData and
// cuLinkAddData(CU_JIT_INPUT_CUBIN) read it back (module_image.cc); any other cubin is machine
// code the fake cannot run. Pure functions: no driver state.
#ifndef CUHAL_FAKECUDA_INTERNAL_FAKE_CUBIN_H_
#define CUHAL_FAKECUDA_INTERNAL_FAKE_CUBIN_H_

#include <cstddef>
#include <string>
#include <vector>

namespace fakecuda {

// The ELF image holding `ptx`, for a device of compute capability `sm` (90: sm_90).
std::vector<char> MakeFakeCubin(const std::string& ptx, int sm);

// Whether `image` (`size` bytes at most; SIZE_MAX: unknown) starts with the ELF magic.
bool IsElf(const void* image, std::size_t size);
// Whether `image` is an ELF file; then *ptx is its ".nv.fakecuda.ptx" section and *sm (when not
// null) the architecture it was linked for, when it is a fakecuda cubin, and *ptx is empty when
// it is not (a real cubin, or a malformed header).
bool FakeCubinPtx(const void* image, std::size_t size, std::string* ptx, int* sm = nullptr);

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_FAKE_CUBIN_H_
