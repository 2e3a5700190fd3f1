// Copyright 2026 The cuhal Authors.
#include "fakecuda/ptx/lexer.h"

#include <cctype>

namespace fakecuda::ptx {
namespace {

bool WordStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' || c == '.';
}
bool WordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == ':';
}

}  // namespace

bool Tokenize(std::string_view src, std::vector<Token>* out, std::string* error) {
  int line = 1;
  std::size_t i = 0;
  while (i < src.size()) {
    char c = src[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      while (i < src.size() && src[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      std::size_t end = src.find("*/", i + 2);
      if (end == std::string_view::npos) {
        *error = "ptx line " + std::to_string(line) + ": unterminated comment";
        return false;
      }
      for (std::size_t k = i; k < end; ++k) line += src[k] == '\n' ? 1 : 0;
      i = end + 2;
      continue;
    }
    std::size_t start = i;
    if (c == '"') {
      ++i;
      while (i < src.size() && src[i] != '"' && src[i] != '\n') i += src[i] == '\\' ? 2 : 1;
      if (i >= src.size() || src[i] != '"') {
        *error = "ptx line " + std::to_string(line) + ": unterminated string";
        return false;
      }
      ++i;
    } else if (WordStart(c)) {
      ++i;
      // "::" belongs to a word (".shared::cta", "L2::128B"); a single ':' ends a label.
      while (i < src.size() && WordChar(src[i])) {
        if (src[i] == ':' && !(i + 1 < src.size() && src[i + 1] == ':') && src[i - 1] != ':') break;
        ++i;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      ++i;
      while (i < src.size() && (std::isalnum(static_cast<unsigned char>(src[i])) || src[i] == '.' || src[i] == '_')) ++i;
    } else {
      ++i;
    }
    out->push_back(Token{std::string(src.substr(start, i - start)), line});
  }
  return true;
}

}  // namespace fakecuda::ptx
