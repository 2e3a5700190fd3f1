// Copyright 2026 The cuhal Authors.
// fakecuda/internal/fake_cubin.h: writing and reading the fake cubin (an ELF64 file: header,
// section name table, the PTX section, then the section headers).
#include "fakecuda/internal/fake_cubin.h"

#include <cstdint>
#include <cstring>
#include <limits>

namespace fakecuda {
namespace {

constexpr char kSection[] = ".nv.fakecuda.ptx";
constexpr std::uint16_t kEmCuda = 190;  // EM_CUDA
constexpr std::size_t kEhdrSize = 64;
constexpr std::size_t kShdrSize = 64;
// e_ident's first 9 bytes: ELF64, little-endian, EV_CURRENT, EI_OSABI 0x41 and ABI version 8
// (the real linker's cubins', measured: H100, driver 580); the rest of the 16 are zero.
constexpr unsigned char kIdent[9] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41, 8};

template <typename T>
void Put(std::vector<char>* out, std::size_t at, T value) {
  std::memcpy(out->data() + at, &value, sizeof value);
}

template <typename T>
T Get(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Writes section header `index` (name offset, type, file offset, size).
void PutSection(std::vector<char>* out, std::size_t table, int index, std::uint32_t name,
                std::uint32_t type, std::uint64_t offset, std::uint64_t size) {
  const std::size_t at = table + static_cast<std::size_t>(index) * kShdrSize;
  Put<std::uint32_t>(out, at, name);
  Put<std::uint32_t>(out, at + 4, type);
  Put<std::uint64_t>(out, at + 24, offset);
  Put<std::uint64_t>(out, at + 32, size);
  Put<std::uint64_t>(out, at + 48, 1);  // sh_addralign
}

}  // namespace

std::vector<char> MakeFakeCubin(const std::string& ptx, int sm) {
  // Appended, not concatenated with operator+: GCC 12 at -O1 (the tsan preset) reported a false
  // -Warray-bounds on the inlined copies of the temporary strings.
  std::string names("\0.shstrtab\0", 11);
  names.append(kSection, sizeof kSection);  // with its NUL
  const std::size_t names_at = kEhdrSize;
  const std::size_t ptx_at = names_at + names.size();
  const std::size_t ptx_size = ptx.size() + 1;  // with its NUL
  const std::size_t table = (ptx_at + ptx_size + 7) / 8 * 8;
  std::vector<char> out(table + 3 * kShdrSize, 0);
  std::memcpy(out.data(), kIdent, sizeof kIdent);
  Put<std::uint16_t>(&out, 16, 2);  // ET_EXEC
  Put<std::uint16_t>(&out, 18, kEmCuda);
  Put<std::uint32_t>(&out, 20, 1);  // EV_CURRENT
  Put<std::uint64_t>(&out, 40, table);
  const auto arch = static_cast<std::uint32_t>(sm);
  Put<std::uint32_t>(&out, 48, arch | (arch << 16));
  Put<std::uint16_t>(&out, 52, kEhdrSize);
  Put<std::uint16_t>(&out, 58, kShdrSize);
  Put<std::uint16_t>(&out, 60, 3);  // e_shnum
  Put<std::uint16_t>(&out, 62, 1);  // e_shstrndx
  std::memcpy(out.data() + names_at, names.data(), names.size());
  std::memcpy(out.data() + ptx_at, ptx.c_str(), ptx_size);
  PutSection(&out, table, 1, 1, 3 /* SHT_STRTAB */, names_at, names.size());
  PutSection(&out, table, 2, 11, 1 /* SHT_PROGBITS */, ptx_at, ptx_size);
  return out;
}

bool IsElf(const void* image, std::size_t size) {
  const auto* b = static_cast<const unsigned char*>(image);
  return size >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

bool FakeCubinPtx(const void* image, std::size_t size, std::string* ptx, int* sm) {
  ptx->clear();
  if (sm != nullptr) *sm = 0;
  if (!IsElf(image, size) || size < kEhdrSize) return false;
  const auto* b = static_cast<const unsigned char*>(image);
  // cuModuleLoadData gives no size (SIZE_MAX here): a short NUL-terminated string with the ELF
  // magic ends inside the ident. Compare the ident byte by byte, stopping at the first that is
  // not the fake cubin's, before reading any further field.
  for (std::size_t i = 4; i < sizeof kIdent; ++i) {
    if (b[i] != kIdent[i]) return true;
  }
  if (Get<std::uint16_t>(b + 18) != kEmCuda) return true;
  const auto table = Get<std::uint64_t>(b + 40);
  const auto shentsize = Get<std::uint16_t>(b + 58);
  const auto shnum = Get<std::uint16_t>(b + 60);
  const auto shstrndx = Get<std::uint16_t>(b + 62);
  // Only the fake's own layout is read: 3 sections, the table last (so a real cubin, whose
  // header says otherwise, is not walked).
  if (shentsize != kShdrSize || shnum != 3 || shstrndx != 1 || table < kEhdrSize ||
      table > (std::uint64_t{1} << 40)) {
    return true;
  }
  if (size != std::numeric_limits<std::size_t>::max() && table + 3 * kShdrSize > size) return true;
  const unsigned char* names = b + table + kShdrSize;
  const unsigned char* sec = b + table + 2 * kShdrSize;
  const auto names_at = Get<std::uint64_t>(names + 24);
  const auto name = Get<std::uint32_t>(sec);
  const auto at = Get<std::uint64_t>(sec + 24);
  const auto len = Get<std::uint64_t>(sec + 32);
  if (names_at + name + sizeof kSection > table || at + len > table || len == 0) return true;
  if (std::memcmp(b + names_at + name, kSection, sizeof kSection) != 0) return true;
  ptx->assign(reinterpret_cast<const char*>(b + at), len - 1);
  if (sm != nullptr) *sm = static_cast<int>(Get<std::uint32_t>(b + 48) & 0xffff);
  return true;
}

}  // namespace fakecuda
