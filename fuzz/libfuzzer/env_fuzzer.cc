// Copyright 2026 The cuhal Authors.
// libFuzzer target: the environment value parsers every FAKECUDA_*/CUHAL_* variable goes through
// (core/base/env.h: ParseUnsigned, ParseBool, ParseChoice).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "core/base/env.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto any = cuhal::env::ParseUnsigned("FUZZ_UNSIGNED", text);
  auto ranged = cuhal::env::ParseUnsigned("FUZZ_RANGED", text, 1000, 99999);
  if (ranged.ok() && (!any.ok() || *any != *ranged || *ranged < 1000 || *ranged > 99999)) {
    std::abort();
  }
  if (!any.ok() && any.status().message().empty()) std::abort();
  (void)cuhal::env::ParseBool("FUZZ_BOOL", text);
  static constexpr std::string_view kChoices[] = {"off", "report", "fail"};
  auto choice = cuhal::env::ParseChoice("FUZZ_CHOICE", text, std::span<const std::string_view>(kChoices));
  if (choice.ok() && *choice >= std::size(kChoices)) std::abort();
  return 0;
}
