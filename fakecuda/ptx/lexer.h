// Copyright 2026 The cuhal Authors.
// The tokenizer of the PTX interpreter's parser. Dotted words are one token ("ld.global.u32",
// "%tid.x", ".reg"), as are numbers ("0f3F800000", "0x1F", "1.5") and strings; every other
// character is a token of its own. Comments are dropped.
#ifndef CUHAL_FAKECUDA_PTX_LEXER_H_
#define CUHAL_FAKECUDA_PTX_LEXER_H_

#include <string>
#include <string_view>
#include <vector>

namespace fakecuda::ptx {

struct Token {
  std::string text;
  int line = 0;
};

// Splits `source` into tokens. False (with *error) only for an unterminated comment or string.
bool Tokenize(std::string_view source, std::vector<Token>* out, std::string* error);

}  // namespace fakecuda::ptx

#endif  // CUHAL_FAKECUDA_PTX_LEXER_H_
