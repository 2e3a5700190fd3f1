// Copyright 2026 The cuhal Authors.
// Unit tests of fakecuda's module image reader (PTX, the FAKECUDA-MODULE format and fat binaries).
#include "fakecuda/internal/module_image.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fakecuda/fake_driver.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/sample_kernels.h"

namespace fakecuda {
namespace {

const KernelInfo* Find(const ModuleImage& image, const std::string& name) {
  for (const KernelInfo& k : image.kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

TEST(ModuleImageTest, ReadsTheTestPtx) {
  ModuleImage image;
  std::string log;
  ASSERT_EQ(ParseModuleImage(fakecuda::kSamplePtx, &image, &log), CUDA_SUCCESS) << log;
  EXPECT_EQ(image.format, ImageFormat::kPtx);
  EXPECT_EQ(image.ptx_version, 80);
  EXPECT_EQ(image.target_sm, 80);
  ASSERT_EQ(image.kernels.size(), 3u);

  const KernelInfo* add_one = Find(image, "add_one");
  ASSERT_NE(add_one, nullptr);
  ASSERT_EQ(add_one->params.size(), 2u);
  EXPECT_EQ(add_one->params[0].size, 8u);
  EXPECT_EQ(add_one->params[1].offset, 8u);
  EXPECT_EQ(add_one->param_bytes, 12u);
  EXPECT_EQ(add_one->static_shared_bytes, 0);
  EXPECT_EQ(add_one->max_threads, 0);

  const KernelInfo* wp = Find(image, "write_params");
  ASSERT_NE(wp, nullptr);
  ASSERT_EQ(wp->params.size(), 4u);
  EXPECT_EQ(wp->params[1].offset, fakecuda::kWriteParamsA);
  EXPECT_EQ(wp->params[1].size, 1u);
  EXPECT_EQ(wp->params[2].offset, fakecuda::kWriteParamsS);
  EXPECT_EQ(wp->params[2].size, 16u);
  EXPECT_EQ(wp->params[2].align, 8u);
  EXPECT_EQ(wp->params[3].offset, fakecuda::kWriteParamsC);
  EXPECT_EQ(wp->param_bytes, fakecuda::kWriteParamsBytes);

  const KernelInfo* rev = Find(image, "shared_reverse");
  ASSERT_NE(rev, nullptr);
  EXPECT_EQ(rev->max_threads, 256);
  EXPECT_EQ(rev->static_shared_bytes, 1024) << "ld.shared/st.shared are not declarations";

  ASSERT_EQ(image.globals.size(), 3u);
  EXPECT_EQ(image.globals[0].name, "fakecuda_counter");
  EXPECT_EQ(image.globals[0].size, 4u);
  ASSERT_GE(image.globals[0].init.size(), 1u);
  EXPECT_EQ(image.globals[0].init[0], 7);
  EXPECT_EQ(image.globals[1].size, 16u);
  ASSERT_EQ(image.globals[1].init.size(), 16u);
  EXPECT_EQ(image.globals[1].init[12], 4);
  EXPECT_EQ(image.globals[2].name, "fakecuda_const");
}

TEST(ModuleImageTest, PtxDetails) {
  const char* ptx = R"(
    // a comment with .entry fake_in_comment(
    /* and a block comment .entry also_fake( */
    .version 7.8
    .target sm_90a, debug
    .address_size 64
    .file 1 "/tmp//x.cu"
    .extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);
    .func helper(.param .b32 x) { ret; }
    .extern .shared .align 16 .b8 dyn[];
    .global .f32 floats[] = {0f3F800000, 2.5, -1};
    .global .align 8 .u64 big = 0x1122334455667788;
    .extern .global .u32 elsewhere;
    .weak .entry k(.param .u64 .ptr .global .align 16 p, .param .v2 .u32 v, .param .f64 d)
    .reqntid 32, 2, 1
    .maxnreg 40
    {
      .reg .b32 %r<3>;
      .local .align 4 .b8 scratch[64];
      .extern .shared .align 16 .b8 dynamic_smem[];
      .shared .u32 one;
    L1:
      .shared .v4 .f32 four[2];
      ld.shared.u32 %r1, [one];
      ret;
    }
    .entry empty { ret; }
  )";
  ModuleImage image;
  std::string log;
  ASSERT_EQ(ParseModuleImage(ptx, &image, &log), CUDA_SUCCESS) << log;
  EXPECT_EQ(image.ptx_version, 78);
  EXPECT_EQ(image.target_sm, 90);
  ASSERT_EQ(image.kernels.size(), 2u);
  const KernelInfo& k = image.kernels[0];
  EXPECT_EQ(k.name, "k");
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[0].size, 8u);
  EXPECT_EQ(k.params[0].align, 8u) << "the .align after .ptr is the pointee's";
  EXPECT_EQ(k.params[1].size, 8u);
  EXPECT_EQ(k.params[1].offset, 8u);
  EXPECT_EQ(k.params[2].offset, 16u);
  EXPECT_EQ(k.param_bytes, 24u);
  // Measured 2026-12-06, H100 driver 580.159.04 (ci/gpu-probes/library_probe.cc, case
  // "occattr"): .reqntid does not lower MAX_THREADS_PER_BLOCK; only the launch shape is fixed.
  EXPECT_EQ(k.max_threads, 0);
  EXPECT_EQ(k.reqntid[0], 32u);
  EXPECT_EQ(k.reqntid[1], 2u);
  // The register estimate (module_image.cc, EstimateRegisters): three 32-bit registers
  // declared, raised to the 8 measured for the smallest kernels, under .maxnreg 40.
  EXPECT_EQ(k.num_regs, 8);
  EXPECT_EQ(k.local_bytes, 64);
  EXPECT_EQ(k.static_shared_bytes, 4 + 32) << "dynamic (.extern) shared memory is not static";
  EXPECT_EQ(image.kernels[1].name, "empty");
  EXPECT_TRUE(image.kernels[1].params.empty());

  ASSERT_EQ(image.globals.size(), 2u);
  EXPECT_EQ(image.globals[0].name, "floats");
  EXPECT_EQ(image.globals[0].size, 12u) << "unsized arrays take their initializer's length";
  float f[3];
  ASSERT_EQ(image.globals[0].init.size(), sizeof(f));
  std::memcpy(f, image.globals[0].init.data(), sizeof(f));
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 2.5f);
  EXPECT_EQ(f[2], -1.0f);
  std::uint64_t big = 0;
  ASSERT_EQ(image.globals[1].init.size(), 8u);
  std::memcpy(&big, image.globals[1].init.data(), 8);
  EXPECT_EQ(big, 0x1122334455667788u);
}

// NUM_REGS and spills are estimated from the declared registers (module_image.cc,
// EstimateRegisters; measured 2026-12-06 on the H100 for the probe's kernels: see
// tests/fakecuda/library_test.cc, RegistersAndSpillsFollowThePtx).
TEST(ModuleImageTest, RegistersAreEstimatedFromTheDeclarations) {
  ModuleImage image;
  std::string log;
  ASSERT_EQ(ParseModuleImage(R"(
    .version 8.0
    .target sm_90
    .address_size 64
    .entry tiny() { .reg .pred %p; .reg .b32 %r<2>; ret; }
    .entry mid() { .reg .b64 %rd<5>; .reg .v2 .f32 %v; .reg .f32 %f<4>; ret; }
    .entry compiled() { .reg .b32 %r<400>; .reg .b64 %rd<90>; ret; }
    .entry capped() .maxnreg 16 { .reg .b32 %r<20>; ret; }
  )",
                             &image, &log),
            CUDA_SUCCESS)
      << log;
  ASSERT_EQ(image.kernels.size(), 4u);
  EXPECT_EQ(image.kernels[0].num_regs, 8) << "at least 8; predicates take none";
  EXPECT_EQ(image.kernels[1].num_regs, 16) << "5 * 2 + 2 + 4";
  EXPECT_EQ(image.kernels[2].num_regs, kDefaultRegisters) << "no .maxnreg: at most the default";
  EXPECT_EQ(image.kernels[2].local_bytes, 0) << "no .maxnreg: no spills assumed";
  EXPECT_EQ(image.kernels[3].num_regs, 16);
  EXPECT_EQ(image.kernels[3].local_bytes, 4 * 4) << "4 registers past .maxnreg spill";
}

TEST(ModuleImageTest, FakeFormat) {
  ModuleImage image;
  std::string log;
  ASSERT_EQ(ParseModuleImage("FAKECUDA-MODULE 1\n# comment\n\nkernel saxpy 4 8 8 4 regs=40 shared=256\n"
                             "kernel odd 1 12 16@16 maxthreads=128\nkernel none\nglobal g 64\n",
                             &image, &log),
            CUDA_SUCCESS)
      << log;
  EXPECT_EQ(image.format, ImageFormat::kFake);
  ASSERT_EQ(image.kernels.size(), 3u);
  const KernelInfo& saxpy = image.kernels[0];
  ASSERT_EQ(saxpy.params.size(), 4u);
  EXPECT_EQ(saxpy.params[1].offset, 8u);
  EXPECT_EQ(saxpy.params[3].offset, 24u);
  EXPECT_EQ(saxpy.param_bytes, 28u);
  EXPECT_EQ(saxpy.num_regs, 40);
  EXPECT_EQ(saxpy.static_shared_bytes, 256);
  const KernelInfo& odd = image.kernels[1];
  EXPECT_EQ(odd.params[1].align, 4u) << "12 = 4 * 3";
  EXPECT_EQ(odd.params[1].offset, 4u);
  EXPECT_EQ(odd.params[2].offset, 16u);
  EXPECT_EQ(odd.params[2].align, 16u);
  EXPECT_EQ(odd.max_threads, 128);
  EXPECT_TRUE(image.kernels[2].params.empty());
  ASSERT_EQ(image.globals.size(), 1u);
  EXPECT_EQ(image.globals[0].size, 64u);
}

TEST(ModuleImageTest, Errors) {
  ModuleImage image;
  std::string log;
  EXPECT_EQ(ParseModuleImage("", &image, &log), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(ParseModuleImage("hello", &image, &log), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(ParseModuleImage("\x7f" "ELF\x02\x01", &image, &log), CUDA_ERROR_NOT_SUPPORTED);
  // A fat binary with no entries: read, with nothing in it (FatBinary below has the rest; the
  // device check answers CUDA_ERROR_NO_BINARY_FOR_GPU, FatBinaryWithoutPtxForTheDevice).
  alignas(8) const unsigned char fatbin[16] = {0x50, 0xed, 0x55, 0xba, 0x01, 0x00, 0x10, 0x00};
  EXPECT_EQ(ParseModuleImage(fatbin, &image, &log), CUDA_SUCCESS);
  EXPECT_EQ(image.format, ImageFormat::kMachineCode);
  EXPECT_TRUE(image.fatbin.present);
  EXPECT_TRUE(image.fatbin.cubins.empty());
  EXPECT_EQ(ParseModuleImage(".version 8.0\n.address_size 64\n", &image, &log), CUDA_ERROR_INVALID_PTX)
      << "no .target";
  EXPECT_EQ(ParseModuleImage(".version 8.0\n.target sm_80\n.entry k(.param .u32 a\n", &image, &log),
            CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(ParseModuleImage(".version 8.0\n.target sm_80\n.entry k(.param a) { ret; }\n", &image, &log),
            CUDA_ERROR_INVALID_PTX)
      << "a parameter without a type";
  EXPECT_NE(log.find("line 3"), std::string::npos) << log;
  EXPECT_EQ(ParseModuleImage(".version 8.0\n.target sm_80\n.entry k() { ret; }\n.entry k() { ret; }\n",
                             &image, &log),
            CUDA_ERROR_INVALID_PTX)
      << "duplicate entry";
  EXPECT_EQ(ParseModuleImage(".version 8.0\n.target sm_80\n/* unterminated", &image, &log),
            CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(ParseModuleImage("FAKECUDA-MODULE 1\nkernel k 0\n", &image, &log), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(ParseModuleImage("FAKECUDA-MODULE 1\nkernel k 8@3\n", &image, &log), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(ParseModuleImage("FAKECUDA-MODULE 1\nkernel k\nkernel k\n", &image, &log),
            CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(ParseModuleImage("FAKECUDA-MODULE 1\nprogram k\n", &image, &log), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_NE(log.find("line 2"), std::string::npos) << log;
}

// Found by fuzz/libfuzzer (module_image_fuzzer): `.version` and `.target` numbers went through
// atoi and major * 10, which overflow int (undefined behaviour) on long digit strings.
TEST(ModuleImageTest, VersionAndTargetNumbersAreShortDecimals) {
  ModuleImage image;
  std::string log;
  EXPECT_EQ(ParseModuleImage(".version 1415102236.0\n.target sm_90\n", &image, &log),
            CUDA_ERROR_INVALID_PTX);
  EXPECT_NE(log.find("malformed .version"), std::string::npos) << log;
  EXPECT_EQ(ParseModuleImage(".version 8.99999999999\n.target sm_90\n", &image, &log),
            CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(ParseModuleImage(".version 8.0x\n.target sm_90\n", &image, &log), CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(ParseModuleImage(".version 8.0\n.target sm_99999999999\n", &image, &log),
            CUDA_ERROR_INVALID_PTX)
      << "no usable .target";
  ASSERT_EQ(ParseModuleImage(".version 8.8\n.target sm_100a\n", &image, &log), CUDA_SUCCESS) << log;
  EXPECT_EQ(image.ptx_version, 88);
  EXPECT_EQ(image.target_sm, 100);
}

// Found by fuzz/libfuzzer (ptx_fuzzer): a register range "%r<4294967295>" made one register per
// name, billions of them, until the process ran out of memory. Past 2^18 registers the kernel
// cannot run (its KernelError says why); the module still parses at once.
TEST(ModuleImageTest, HugeRegisterRangeFailsTheKernelNotTheProcess) {
  ModuleImage image;
  std::string log;
  ASSERT_EQ(ParseModuleImage(".version 8.0\n.target sm_90\n.address_size 64\n"
                             ".visible .entry k()\n{\n  .reg .b32 %r<4294967295>;\n  ret;\n}\n"
                             ".visible .entry ok()\n{\n  .reg .b32 %r<4096>;\n  ret;\n}\n",
                             &image, &log),
            CUDA_SUCCESS)
      << log;
  ASSERT_NE(image.program, nullptr) << image.program_error;
  int k = image.program->FindFunction("k");
  ASSERT_GE(k, 0);
  EXPECT_NE(image.program->KernelError(k).find("registers"), std::string::npos)
      << image.program->KernelError(k);
  EXPECT_EQ(image.program->KernelError(image.program->FindFunction("ok")), "");
}

// Found by fuzz/libfuzzer (ptx_fuzzer): `set` with one type (it needs .dtype.stype) and a half
// type read the second type past the end of the list (heap-buffer-overflow in LowerArith). The
// kernel now fails with the reason; the module parses.
TEST(ModuleImageTest, SetWithOneHalfTypeFailsTheKernel) {
  ModuleImage image;
  std::string log;
  ASSERT_EQ(ParseModuleImage(".version 8.0\n.target sm_90\n.address_size 64\n"
                             ".visible .entry k()\n{\n  .reg .b16 %h<3>;\n"
                             "  set.lt.f16 %h0, %h1, %h2;\n  ret;\n}\n",
                             &image, &log),
            CUDA_SUCCESS)
      << log;
  ASSERT_NE(image.program, nullptr) << image.program_error;
  EXPECT_NE(image.program->KernelError(image.program->FindFunction("k")).find("set needs"),
            std::string::npos)
      << image.program->KernelError(image.program->FindFunction("k"));
}

TEST(ModuleImageTest, MaxPtxVersion) {
  EXPECT_EQ(MaxPtxVersion(13000), 90);
  EXPECT_EQ(MaxPtxVersion(12080), 87);
  EXPECT_EQ(MaxPtxVersion(12000), 80);
}


// Fat binaries as nvcc embeds them (module_image.cc, FatbinPtx): the first uncompressed PTX
// entry is read, through the wrapper the CUDA runtime passes too; cubins and compressed PTX are
// not read.
struct TestFatbin {
  alignas(8) unsigned char bytes[1024] = {};
  std::size_t size = 16;
  std::size_t last = 0;  // where the entry added last starts

  TestFatbin() {
    const std::uint32_t magic = 0xBA55ED50;
    const std::uint16_t version = 1;
    const std::uint16_t header_size = 16;
    std::memcpy(bytes, &magic, 4);
    std::memcpy(bytes + 4, &version, 2);
    std::memcpy(bytes + 6, &header_size, 2);
  }
  // Appends an entry of `kind` (1 PTX, 2 cubin) with `flags` and `payload` (padded to 8 bytes).
  void Add(std::uint16_t kind, std::uint64_t flags, std::string_view payload) {
    unsigned char* e = bytes + size;
    last = size;
    const std::uint32_t entry_header = 64;
    const auto padded = static_cast<std::uint32_t>((payload.size() + 1 + 7) / 8 * 8);
    std::memcpy(e, &kind, 2);
    std::memcpy(e + 4, &entry_header, 4);
    std::memcpy(e + 8, &padded, 4);
    std::memcpy(e + 40, &flags, 8);
    std::memcpy(e + 64, payload.data(), payload.size());
    size += 64 + padded;
    const std::uint64_t entries = size - 16;
    std::memcpy(bytes + 8, &entries, 8);
  }
  // Sets the architecture (sm_version: 90 for sm_90) of the entry added last.
  void SetSm(std::uint32_t sm) { std::memcpy(bytes + last + 28, &sm, 4); }
  // Appends a compressed PTX entry (flags 0x8011 Zstd, 0x2011 LZ4) of `compressed` bytes that
  // expand to `uncompressed` bytes.
  void AddCompressed(std::uint64_t flags, const std::vector<unsigned char>& compressed,
                     std::uint64_t uncompressed) {
    Add(1, flags, std::string_view(reinterpret_cast<const char*>(compressed.data()),
                                   compressed.size()));
    unsigned char* e = bytes + size - 64 - (compressed.size() + 1 + 7) / 8 * 8;
    const auto compressed_size = static_cast<std::uint32_t>(compressed.size());
    std::memcpy(e + 16, &compressed_size, 4);
    std::memcpy(e + 56, &uncompressed, 8);
  }
};

bool CanLoad(const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST(ModuleImageTest, FatBinary) {
  const std::string_view ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
  ModuleImage image;
  std::string log;
  TestFatbin fatbin;
  fatbin.Add(2, 0x11, "\x7f" "ELF not read");
  fatbin.Add(1, 0x8011, "compressed PTX is not read");
  fatbin.Add(1, 0x11, ptx);
  ASSERT_EQ(ParseModuleImage(fatbin.bytes, &image, &log), CUDA_SUCCESS) << log;
  ASSERT_EQ(image.kernels.size(), 1u);
  EXPECT_EQ(image.kernels[0].name, "k");

  // Of several PTX entries, the one for the oldest architecture (entry header word sm_version).
  TestFatbin multi;
  multi.Add(1, 0x11,
            ".version 8.0\n.target sm_100\n.address_size 64\n.visible .entry new() { ret; }\n");
  const std::uint32_t sm100 = 100;
  std::memcpy(multi.bytes + 16 + 28, &sm100, 4);
  multi.Add(1, 0x11,
            ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry old() { ret; }\n");
  const std::uint32_t sm75 = 75;
  std::memcpy(multi.bytes + multi.size - 64 - 80 + 28, &sm75, 4);
  ASSERT_EQ(ParseModuleImage(multi.bytes, &image, &log), CUDA_SUCCESS) << log;
  ASSERT_EQ(image.kernels.size(), 1u);
  EXPECT_EQ(image.kernels[0].name, "old");

  // The wrapper (__fatBinC_Wrapper_t) the CUDA runtime hands to cuLibraryLoadData.
  struct {
    std::uint32_t magic = 0x466243B1;
    std::uint32_t version = 1;
    const void* data;
    const void* unused = nullptr;
  } wrapper{.data = fatbin.bytes};
  ASSERT_EQ(ParseModuleImage(&wrapper, &image, &log), CUDA_SUCCESS) << log;
  EXPECT_EQ(image.kernels.size(), 1u);

  TestFatbin compressed_only;
  compressed_only.Add(1, 0x8011, "compressed");
  EXPECT_EQ(ParseModuleImage(compressed_only.bytes, &image, &log), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_NE(log.find("compressed"), std::string::npos) << log;

  // Cubins only: read as machine code, with their architectures (entry word sm_version, and the
  // arch-specific flag 0x100000 of sm_90a); no kernels.
  TestFatbin cubin_only;
  cubin_only.Add(2, 0x11, "\x7f" "ELF");
  cubin_only.SetSm(80);
  cubin_only.Add(2, 0x100011, "\x7f" "ELF");
  cubin_only.SetSm(90);
  ASSERT_EQ(ParseModuleImage(cubin_only.bytes, &image, &log), CUDA_SUCCESS) << log;
  EXPECT_EQ(image.format, ImageFormat::kMachineCode);
  EXPECT_TRUE(image.kernels.empty());
  EXPECT_FALSE(image.fatbin.has_ptx);
  ASSERT_EQ(image.fatbin.cubins.size(), 2u);
  EXPECT_EQ(image.fatbin.cubins[0].sm, 80);
  EXPECT_FALSE(image.fatbin.cubins[0].arch_specific);
  EXPECT_EQ(image.fatbin.cubins[1].sm, 90);
  EXPECT_TRUE(image.fatbin.cubins[1].arch_specific);

  // Compressed PTX (nvcc's default, Zstd; LZ4 with some options) is read through the system's
  // libzstd.so.1 and liblz4.so.1 where they can be loaded.
  if (CanLoad("libzstd.so.1")) {
    // ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry z() { ret; }\n" (73
    // bytes), compressed by ZSTD_compress at level 19.
    const std::vector<unsigned char> zstd = {
        0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x49, 0x15, 0x02, 0x00, 0x92, 0x84, 0x0f, 0x11, 0x90, 0x7d,
        0x90, 0x0f, 0x09, 0x44, 0xe3, 0x9f, 0xff, 0x27, 0xc9, 0x74, 0xb6, 0x60, 0x7d, 0xe5, 0x19,
        0x60, 0x7b, 0xb2, 0x4f, 0x5d, 0xbb, 0x08, 0xd9, 0x31, 0xb5, 0xf2, 0x87, 0x3f, 0x64, 0xaf,
        0xbe, 0x3b, 0x40, 0x31, 0xfe, 0xf9, 0x55, 0x55, 0xeb, 0xd3, 0xd6, 0xd6, 0x00, 0x04, 0xa9,
        0x58, 0xdd, 0xbe, 0xa3, 0xcb, 0x0e, 0x40, 0xc6, 0x71, 0x39, 0x5f, 0xa5, 0x7f, 0x47, 0x00};
    TestFatbin zstd_fatbin;
    zstd_fatbin.Add(2, 0x11, "\x7f" "ELF");
    zstd_fatbin.AddCompressed(0x8011, zstd, 73);
    ASSERT_EQ(ParseModuleImage(zstd_fatbin.bytes, &image, &log), CUDA_SUCCESS) << log;
    ASSERT_EQ(image.kernels.size(), 1u);
    EXPECT_EQ(image.kernels[0].name, "z");
  } else {
    std::printf("libzstd.so.1 cannot be loaded: Zstd-compressed PTX not tested\n");
  }
  if (CanLoad("liblz4.so.1")) {
    // The same text with the entry named l, compressed by LZ4_compress_default (a raw block).
    const std::vector<unsigned char> lz4 = {
        0xf0, 0x3a, 0x2e, 0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e, 0x20, 0x38, 0x2e, 0x30, 0x0a,
        0x2e, 0x74, 0x61, 0x72, 0x67, 0x65, 0x74, 0x20, 0x73, 0x6d, 0x5f, 0x39, 0x30, 0x0a, 0x2e,
        0x61, 0x64, 0x64, 0x72, 0x65, 0x73, 0x73, 0x5f, 0x73, 0x69, 0x7a, 0x65, 0x20, 0x36, 0x34,
        0x0a, 0x2e, 0x76, 0x69, 0x73, 0x69, 0x62, 0x6c, 0x65, 0x20, 0x2e, 0x65, 0x6e, 0x74, 0x72,
        0x79, 0x20, 0x6c, 0x28, 0x29, 0x20, 0x7b, 0x20, 0x72, 0x65, 0x74, 0x3b, 0x20, 0x7d, 0x0a};
    TestFatbin lz4_fatbin;
    lz4_fatbin.AddCompressed(0x2011, lz4, 0);  // no uncompressed size: the buffer grows
    ASSERT_EQ(ParseModuleImage(lz4_fatbin.bytes, &image, &log), CUDA_SUCCESS) << log;
    ASSERT_EQ(image.kernels.size(), 1u);
    EXPECT_EQ(image.kernels[0].name, "l");
  } else {
    std::printf("liblz4.so.1 cannot be loaded: LZ4-compressed PTX not tested\n");
  }

  TestFatbin malformed;
  malformed.Add(1, 0x11, ptx);
  const std::uint32_t too_big = 4096;
  std::memcpy(malformed.bytes + 16 + 8, &too_big, 4);  // the entry's payload runs past the end
  EXPECT_EQ(ParseModuleImage(malformed.bytes, &image, &log), CUDA_ERROR_INVALID_IMAGE);
}

// A fat binary with no PTX the device can run (issue 17): the real driver answers
// CUDA_ERROR_NO_BINARY_FOR_GPU when no image fits (the runtime's
// cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device").
// A cubin that does fit would run on the real driver; the fake cannot run machine code and
// answers CUDA_ERROR_NOT_SUPPORTED, saying so (docs/cudart_on_the_fake.md, known differences).
TEST(ModuleImageTest, FatBinaryWithoutPtxForTheDevice) {
  std::string log;
  FatbinContents sm80;  // -gencode arch=compute_80,code=sm_80
  sm80.present = true;
  sm80.cubins.push_back({80, false});
  EXPECT_EQ(CheckFatbinForDevice(sm80, 90, &log), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_NE(log.find("no image in the fat binary fits sm_90: cubins for sm_80, no PTX"),
            std::string::npos)
      << log;
  EXPECT_EQ(CheckFatbinForDevice(sm80, 86, &log), CUDA_ERROR_NOT_SUPPORTED) << "8.6 runs sm_80";
  EXPECT_NE(log.find("fakecuda runs only PTX"), std::string::npos) << log;
  EXPECT_EQ(CheckFatbinForDevice(sm80, 75, &log), CUDA_ERROR_NO_BINARY_FOR_GPU);
  FatbinContents sm90a;  // arch-specific: sm_90 only
  sm90a.present = true;
  sm90a.cubins.push_back({90, true});
  EXPECT_EQ(CheckFatbinForDevice(sm90a, 90, &log), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(CheckFatbinForDevice(sm90a, 91, &log), CUDA_ERROR_NO_BINARY_FOR_GPU);
  FatbinContents empty;
  empty.present = true;
  EXPECT_EQ(CheckFatbinForDevice(empty, 90, &log), CUDA_ERROR_NO_BINARY_FOR_GPU);
  // PTX fits its own architecture and later ones (the driver JIT-compiles it), not earlier ones.
  FatbinContents ptx100 = sm80;  // -arch=sm_100 plus sm_80 machine code
  ptx100.has_ptx = true;
  ptx100.ptx_sm = 100;
  EXPECT_EQ(CheckFatbinForDevice(ptx100, 100, &log), CUDA_SUCCESS);
  EXPECT_EQ(CheckFatbinForDevice(ptx100, 90, &log), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_NE(log.find("cubins for sm_80, PTX for sm_100 and later"), std::string::npos) << log;
  EXPECT_EQ(CheckFatbinForDevice(FatbinContents{}, 90, &log), CUDA_SUCCESS) << "not a fat binary";

  // Through the entry points, on the default H200 (9.0): cuModuleLoadData answers at the load,
  // cuLibraryLoadData (the runtime's way) succeeds and its kernels answer (the real driver loads
  // lazily, library_entry.cc).
  ScopedDriver driver;
  ASSERT_TRUE(driver.ok());
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  TestFatbin other_arch;
  other_arch.Add(2, 0x11, "\x7f" "ELF");
  other_arch.SetSm(80);
  CUmodule module = nullptr;
  EXPECT_EQ(cuModuleLoadData(&module, other_arch.bytes), CUDA_ERROR_NO_BINARY_FOR_GPU);
  CUlibrary library = nullptr;
  ASSERT_EQ(cuLibraryLoadData(&library, other_arch.bytes, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_SUCCESS);
  CUkernel kernel = nullptr;
  EXPECT_EQ(cuLibraryGetKernel(&kernel, library, "k"), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(cuLibraryUnload(library), CUDA_SUCCESS);
  TestFatbin same_arch;
  same_arch.Add(2, 0x11, "\x7f" "ELF");
  same_arch.SetSm(90);
  EXPECT_EQ(cuModuleLoadData(&module, same_arch.bytes), CUDA_ERROR_NOT_SUPPORTED);
  // With PTX for the device as well, the PTX runs.
  same_arch.Add(1, 0x11,
                ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n");
  same_arch.SetSm(90);
  ASSERT_EQ(cuModuleLoadData(&module, same_arch.bytes), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  EXPECT_EQ(driver->LiveObjects().Total(), 0) << driver->LeakReport();
}

}  // namespace
}  // namespace fakecuda

// Found by libFuzzer (module_image, 2026-12-06, in its first seconds): an 8-byte input with the
// fat-binary magic made the parser read the 16-byte header past the input. With a known size
// nothing past it is read; a wrapper (a pointer elsewhere) is refused.
TEST(ModuleImageTest, ABoundedFatBinaryIsReadNoFurtherThanItsSize) {
  const unsigned char truncated[] = {0x50, 0xed, 0x55, 0xba, 0x01, 0x00, 0x10, 0x00, 0x00};
  fakecuda::ModuleImage image;
  std::string log;
  EXPECT_EQ(fakecuda::ParseModuleImage(truncated, sizeof(truncated), &image, &log),
            CUDA_ERROR_INVALID_IMAGE);
  EXPECT_NE(log.find("shorter than its header"), std::string::npos) << log;
  // A whole header whose entries would run past the given bytes.
  unsigned char header[24] = {0x50, 0xed, 0x55, 0xba, 0x01, 0x00, 0x10, 0x00};
  header[8] = 0x00;
  header[9] = 0x10;  // entries_size 4096
  EXPECT_EQ(fakecuda::ParseModuleImage(header, sizeof(header), &image, &log),
            CUDA_ERROR_INVALID_IMAGE);
  EXPECT_NE(log.find("run past the given image"), std::string::npos) << log;
  const unsigned char wrapper[24] = {0xb1, 0x43, 0x62, 0x46, 1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(fakecuda::ParseModuleImage(wrapper, sizeof(wrapper), &image, &log),
            CUDA_ERROR_INVALID_IMAGE);
}
