// Copyright 2026 The cuhal Authors.
// Parses PTX text (as nvcc, NVRTC and other code generators emit it) into the interpreter's IR
// (program.h). A construct the interpreter does not implement does not fail the parse: it is
// recorded as the error of the function containing it (Function::error, with its line), so
// that a module whose unsupported kernels have host implementations still loads; only text
// that is not PTX at all fails the whole parse.
#ifndef CUHAL_FAKECUDA_PTX_PARSER_H_
#define CUHAL_FAKECUDA_PTX_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "fakecuda/ptx/program.h"

namespace fakecuda::ptx {

// The program of `source`, or null with *error set.
std::shared_ptr<Program> ParseProgram(std::string_view source, std::string* error);

}  // namespace fakecuda::ptx

#endif  // CUHAL_FAKECUDA_PTX_PARSER_H_
