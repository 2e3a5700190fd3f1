// Copyright 2026 The cuhal Authors.
// libFuzzer target: PTX text into the interpreter's IR (fakecuda/ptx/parser.h, ParseProgram).
// The program that comes back is walked (each function's lookup and kernel error).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fakecuda/ptx/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  std::string error;
  auto program = fakecuda::ptx::ParseProgram(source, &error);
  if (program == nullptr) {
    if (error.empty()) std::abort();  // a failure always says why
    return 0;
  }
  for (std::size_t i = 0; i < program->functions.size(); ++i) {
    const auto& function = program->functions[i];
    int found = program->FindFunction(function.name);
    if (found < 0) std::abort();  // every parsed function can be found by name
    if (function.is_entry) (void)program->KernelError(static_cast<int>(i));
  }
  return 0;
}
