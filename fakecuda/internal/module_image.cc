// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/module_image.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>

#include "fakecuda/internal/fake_cubin.h"
#include "fakecuda/ptx/parser.h"

namespace fakecuda {
namespace {

constexpr std::string_view kFakeMagic = "FAKECUDA-MODULE 1\n";

// --- PTX tokens ---

struct Token {
  std::string text;
  int line = 0;
};

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// Splits PTX into tokens, dropping comments. Directives (".param") and identifiers are single
// tokens; so are numbers ("8.0", "0x1F", "0f3F800000") and strings; anything else is one
// character per token. Fails only on an unterminated comment or string.
bool Tokenize(std::string_view src, std::vector<Token>* out, std::string* log) {
  int line = 1;
  size_t i = 0;
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
      size_t end = src.find("*/", i + 2);
      if (end == std::string_view::npos) {
        *log = "line " + std::to_string(line) + ": unterminated comment";
        return false;
      }
      line += static_cast<int>(std::count(src.begin() + static_cast<std::ptrdiff_t>(i),
                                          src.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
      i = end + 2;
      continue;
    }
    size_t start = i;
    if (c == '"') {
      ++i;
      while (i < src.size() && src[i] != '"' && src[i] != '\n') i += (src[i] == '\\') ? 2 : 1;
      if (i >= src.size() || src[i] != '"') {
        *log = "line " + std::to_string(line) + ": unterminated string";
        return false;
      }
      ++i;
    } else if (c == '.' || IsIdentStart(c)) {
      ++i;
      while (i < src.size() && IsIdentChar(src[i])) ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      ++i;
      while (i < src.size() && (IsIdentChar(src[i]) || src[i] == '.')) ++i;
    } else {
      ++i;
    }
    out->push_back(Token{std::string(src.substr(start, i - start)), line});
  }
  return true;
}

// The byte size of a PTX fundamental type directive, or 0.
std::size_t TypeSize(std::string_view t) {
  static const struct {
    std::string_view name;
    std::size_t size;
  } kTypes[] = {
      {".b8", 1},     {".u8", 1},      {".s8", 1},      {".pred", 1},   {".b16", 2},
      {".u16", 2},    {".s16", 2},     {".f16", 2},     {".bf16", 2},   {".e4m3x2", 2},
      {".e5m2x2", 2}, {".b32", 4},     {".u32", 4},     {".s32", 4},    {".f32", 4},
      {".f16x2", 4},  {".bf16x2", 4},  {".tf32", 4},    {".b64", 8},    {".u64", 8},
      {".s64", 8},    {".f64", 8},     {".b128", 16},
  };
  for (const auto& t2 : kTypes) {
    if (t2.name == t) return t2.size;
  }
  return 0;
}

// 1 to 4 decimal digits, nothing else: the numbers of `.version 8.0` and `.target sm_90`.
bool SmallNumber(std::string_view text, int* value) {
  if (text.empty() || text.size() > 4) return false;
  int v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  *value = v;
  return true;
}

bool ParseUnsigned(std::string_view text, std::uint64_t* value) {
  std::string s(text);
  while (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.pop_back();
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  *value = std::strtoull(s.c_str(), &end, 0);
  return end != nullptr && *end == '\0';
}

// Writes one initializer value of a `.global`/`.const` variable, little-endian.
void StoreValue(std::string_view text, bool negative, std::string_view type, std::size_t elem,
                unsigned char* out) {
  std::uint64_t bits = 0;
  bool is_float = type == ".f32" || type == ".f64";
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'f' || text[1] == 'F' || text[1] == 'd' ||
                                            text[1] == 'D')) {
    bits = std::strtoull(std::string(text.substr(2)).c_str(), nullptr, 16);
    if (negative) bits ^= (elem == 4 ? 0x80000000ULL : 0x8000000000000000ULL);
  } else if (is_float && text.find_first_of(".eE") != std::string_view::npos) {
    double v = std::strtod(std::string(text).c_str(), nullptr);
    if (negative) v = -v;
    if (elem == 4) {
      float f = static_cast<float>(v);
      std::uint32_t b32 = 0;
      std::memcpy(&b32, &f, 4);
      bits = b32;
    } else {
      std::memcpy(&bits, &v, 8);
    }
  } else if (std::uint64_t v = 0; ParseUnsigned(text, &v)) {
    if (is_float) {
      double d = static_cast<double>(v) * (negative ? -1.0 : 1.0);
      if (elem == 4) {
        float f = static_cast<float>(d);
        std::uint32_t b32 = 0;
        std::memcpy(&b32, &f, 4);
        bits = b32;
      } else {
        std::memcpy(&bits, &d, 8);
      }
    } else {
      bits = negative ? ~v + 1 : v;
    }
  } else {
    return;  // an address expression (generic(x), x+4): left zero
  }
  for (std::size_t b = 0; b < elem && b < 8; ++b) out[b] = static_cast<unsigned char>(bits >> (8 * b));
}

class PtxParser {
 public:
  PtxParser(std::vector<Token> tokens, ModuleImage* out, std::string* log)
      : t_(std::move(tokens)), out_(out), log_(log) {}

  bool Parse() {
    // A PTX module begins with .version (comments aside).
    if (t_.empty() || t_[0].text != ".version") return Fail(0, "missing .version directive");
    bool extern_decl = false;
    while (i_ < t_.size()) {
      const std::string& tok = t_[i_].text;
      if (tok == ".version") {
        if (!ParseVersion()) return false;
      } else if (tok == ".target") {
        ParseTarget();
      } else if (tok == ".visible" || tok == ".weak" || tok == ".common") {
        ++i_;
        continue;  // linkage applies to the next declaration
      } else if (tok == ".extern") {
        extern_decl = true;
        ++i_;
        continue;
      } else if (tok == ".entry") {
        if (!ParseEntry(extern_decl)) return false;
      } else if (tok == ".func") {
        if (!SkipFunction()) return false;
      } else if (tok == ".global" || tok == ".const") {
        if (!ParseVariable(extern_decl)) return false;
      } else if (tok == ".address_size") {
        i_ += 2;  // .address_size 64 (no ';')
      } else if (tok == ".file") {
        SkipFileDirective();
      } else if (tok == "{") {
        if (!SkipBraces()) return false;
      } else {
        if (!SkipStatement()) return false;
      }
      extern_decl = false;
    }
    if (out_->target_sm == 0) return Fail(t_.size() - 1, "missing .target directive");
    return true;
  }

 private:
  bool Fail(size_t at, const std::string& why) {
    int line = at < t_.size() ? t_[at].line : (t_.empty() ? 0 : t_.back().line);
    *log_ = "ptx line " + std::to_string(line) + ": " + why;
    return false;
  }
  bool At(std::string_view text) const { return i_ < t_.size() && t_[i_].text == text; }
  bool AtEnd() const { return i_ >= t_.size(); }

  bool ParseVersion() {
    ++i_;
    if (AtEnd()) return Fail(i_, ".version needs a number");
    const std::string& v = t_[i_].text;
    size_t dot = v.find('.');
    int major = 0;
    int minor = 0;
    // Digits only, each part short: atoi's overflow, and major * 10 past int, were undefined
    // behaviour (".version 1415102236.0"; found by module_image_fuzzer).
    if (dot == std::string::npos || !SmallNumber(std::string_view(v).substr(0, dot), &major) ||
        !SmallNumber(std::string_view(v).substr(dot + 1), &minor)) {
      return Fail(i_, "malformed .version '" + v + "'");
    }
    out_->ptx_version = major * 10 + minor;
    ++i_;
    return true;
  }

  void ParseTarget() {
    // .target sm_90a[, debug][, texmode_independent]
    ++i_;
    while (!AtEnd() && std::isalpha(static_cast<unsigned char>(t_[i_].text[0]))) {
      const std::string& v = t_[i_].text;
      if (v.rfind("sm_", 0) == 0 || v.rfind("compute_", 0) == 0) {
        // "sm_90a": the digits after the '_' (at most 4; atoi overflowed on more).
        std::string_view arch = std::string_view(v).substr(v.find('_') + 1);
        size_t digits = 0;
        while (digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[digits]))) ++digits;
        int sm = 0;
        if (SmallNumber(arch.substr(0, digits), &sm)) out_->target_sm = sm;
      }
      ++i_;
      if (!At(",")) break;
      ++i_;
    }
  }

  void SkipFileDirective() {
    // .file N "name" [, timestamp, size]
    ++i_;
    while (!AtEnd() && (t_[i_].text == "," || std::isdigit(static_cast<unsigned char>(t_[i_].text[0])) ||
                        t_[i_].text[0] == '"')) {
      ++i_;
    }
  }

  // Skips a balanced {...} starting at the current '{'.
  bool SkipBraces() {
    size_t open = i_;
    int depth = 0;
    for (; i_ < t_.size(); ++i_) {
      if (t_[i_].text == "{") ++depth;
      if (t_[i_].text == "}" && --depth == 0) {
        ++i_;
        return true;
      }
    }
    return Fail(open, "unbalanced '{'");
  }

  // Skips to the end of a declaration: past the next ';' or the next balanced block.
  bool SkipStatement() {
    while (!AtEnd()) {
      if (At(";")) {
        ++i_;
        return true;
      }
      if (At("{")) return SkipBraces();
      if (At("}")) return Fail(i_, "unexpected '}'");
      ++i_;
    }
    return true;
  }

  bool SkipFunction() {
    // .func [(ret)] name (params) [directives] { body } | ;
    ++i_;
    int parens = 0;
    while (!AtEnd()) {
      if (At("(")) ++parens;
      if (At(")")) --parens;
      if (parens == 0 && At(";")) {
        ++i_;
        return true;
      }
      if (parens == 0 && At("{")) return SkipBraces();
      ++i_;
    }
    return Fail(i_, "unterminated .func");
  }

  // Reads "[N]" dimensions; *count multiplies; an empty "[]" sets *unsized.
  bool ParseDims(std::size_t* count, bool* unsized) {
    while (At("[")) {
      ++i_;
      if (At("]")) {
        *unsized = true;
        ++i_;
        continue;
      }
      std::uint64_t n = 0;
      if (AtEnd() || !ParseUnsigned(t_[i_].text, &n)) return Fail(i_, "expected an array size");
      *count *= static_cast<std::size_t>(n);
      ++i_;
      if (!At("]")) return Fail(i_, "expected ']'");
      ++i_;
    }
    return true;
  }

  // One `.param` of an entry's parameter list, tokens [begin, end).
  bool ParseParam(size_t begin, size_t end, KernelParamInfo* p) {
    std::size_t align = 0, elem = 0, vec = 1, count = 1;
    bool seen_ptr = false;
    bool named = false;
    size_t saved = i_;
    for (i_ = begin; i_ < end;) {
      const std::string& tok = t_[i_].text;
      if (tok == ".align") {
        std::uint64_t n = 0;
        if (i_ + 1 >= end || !ParseUnsigned(t_[i_ + 1].text, &n) || n == 0 || (n & (n - 1)) != 0) {
          return Fail(i_, "malformed .align");
        }
        if (!seen_ptr && elem == 0) align = static_cast<std::size_t>(n);  // else: the pointee's
        i_ += 2;
        continue;
      }
      if (tok == ".ptr") {
        seen_ptr = true;
      } else if (tok == ".v2" || tok == ".v4" || tok == ".v8") {
        vec = static_cast<std::size_t>(tok[2] - '0');
      } else if (std::size_t s = TypeSize(tok); s != 0) {
        if (elem != 0) return Fail(i_, "two types for one parameter");
        elem = s;
      } else if (tok == "[") {
        bool unsized = false;
        if (!ParseDims(&count, &unsized)) return false;
        if (unsized) return Fail(i_, "a parameter array needs a size");
        continue;
      } else if (IsIdentStart(tok[0]) && tok[0] != '.') {
        named = true;
      }
      ++i_;
    }
    i_ = saved;
    if (elem == 0) return Fail(begin, "parameter without a type");
    if (!named) return Fail(begin, "parameter without a name");
    p->size = elem * vec * count;
    p->align = align != 0 ? align : elem * vec;
    return true;
  }

  // `.maxntid x[, y[, z]]` and friends: up to three numbers.
  std::array<unsigned, 3> ParseTriple() {
    std::array<unsigned, 3> v{1, 1, 1};
    ++i_;
    for (int k = 0; k < 3 && !AtEnd(); ++k) {
      std::uint64_t n = 0;
      if (!ParseUnsigned(t_[i_].text, &n)) break;
      v[static_cast<size_t>(k)] = static_cast<unsigned>(n);
      ++i_;
      if (!At(",")) break;
      ++i_;
    }
    return v;
  }

  bool ParseEntry(bool extern_decl) {
    size_t at = i_;
    ++i_;
    if (AtEnd() || !IsIdentStart(t_[i_].text[0]) || t_[i_].text[0] == '.') {
      return Fail(at, ".entry without a name");
    }
    KernelInfo k;
    int maxnreg = 0;  // .maxnreg; 0: none
    k.name = t_[i_].text;
    ++i_;
    if (At("(")) {
      ++i_;
      size_t begin = i_;
      std::size_t offset = 0;
      while (true) {
        if (AtEnd()) return Fail(at, "unterminated parameter list of " + k.name);
        if (At(",") || At(")")) {
          if (i_ > begin) {
            KernelParamInfo p;
            if (!ParseParam(begin, i_, &p)) return false;
            offset = (offset + p.align - 1) / p.align * p.align;
            p.offset = offset;
            offset += p.size;
            k.params.push_back(p);
          } else if (At(",")) {
            return Fail(i_, "empty parameter in " + k.name);
          }
          bool done = At(")");
          ++i_;
          begin = i_;
          if (done) break;
          continue;
        }
        ++i_;
      }
      k.param_bytes = offset;
    }
    // Performance directives up to the body.
    while (!AtEnd() && !At("{") && !At(";")) {
      const std::string& tok = t_[i_].text;
      if (tok == ".maxntid") {
        auto v = ParseTriple();
        k.max_threads = static_cast<int>(v[0] * v[1] * v[2]);
      } else if (tok == ".reqntid") {
        // Measured 2026-12-06, H100 driver 580.159.04 (ci/gpu-probes/library_probe.cc, case
        // "occattr"): .reqntid 64 leaves CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK at 1024 (and
        // the occupancy queries unlimited by it); only a launch of another shape is refused.
        k.reqntid = ParseTriple();
      } else if (tok == ".maxnreg") {
        ++i_;
        std::uint64_t n = 0;
        if (!AtEnd() && ParseUnsigned(t_[i_].text, &n)) {
          maxnreg = static_cast<int>(std::min<std::uint64_t>(n, kMaxRegisters));
          ++i_;
        }
      } else {
        ++i_;
      }
    }
    if (AtEnd()) return Fail(at, ".entry " + k.name + " has no body");
    if (At(";")) {  // a prototype
      ++i_;
      if (extern_decl) return true;
      return Fail(at, ".entry " + k.name + " has no body");
    }
    if (extern_decl) return Fail(at, ".extern .entry " + k.name + " with a body");
    std::uint64_t declared = 0;
    if (!ParseBody(&k, &declared)) return false;
    EstimateRegisters(declared, maxnreg, &k);
    for (const KernelInfo& other : out_->kernels) {
      if (other.name == k.name) return Fail(at, "duplicate .entry " + k.name);
    }
    out_->kernels.push_back(std::move(k));
    return true;
  }

  // The size of a `.shared`/`.local` declaration starting at the current token (its space).
  std::size_t DeclarationBytes() {
    ++i_;
    std::size_t elem = 0, vec = 1, count = 1;
    while (!AtEnd() && !At(";") && !At("{") && !At("}")) {
      const std::string& tok = t_[i_].text;
      if (tok == ".align") {
        i_ += 2;
        continue;
      }
      if (tok == ".v2" || tok == ".v4" || tok == ".v8") vec = static_cast<std::size_t>(tok[2] - '0');
      if (std::size_t s = TypeSize(tok); s != 0 && elem == 0) elem = s;
      if (tok == "[") {
        bool unsized = false;
        if (!ParseDims(&count, &unsized)) return 0;
        continue;
      }
      ++i_;
    }
    return elem * vec * count;
  }

  // The registers a `.reg` declaration starting at the current token declares, in 32-bit
  // units (64-bit types count 2, .b128 4, predicates none; "%r<N>" declares N), saturating.
  std::uint64_t RegisterDeclaration() {
    ++i_;
    std::uint64_t per = 0, vec = 1, count = 0;
    bool is_predicate = false;
    while (!AtEnd() && !At(";") && !At("{") && !At("}")) {
      const std::string& tok = t_[i_].text;
      if (tok == ".v2" || tok == ".v4" || tok == ".v8") {
        vec = static_cast<std::uint64_t>(tok[2] - '0');
      } else if (tok == ".pred") {
        is_predicate = true;
      } else if (std::size_t sz = TypeSize(tok); sz != 0 && per == 0) {
        per = (sz + 3) / 4;
      } else if (tok[0] == '%' || IsIdentStart(tok[0])) {
        std::uint64_t n = 1;
        if (i_ + 3 < t_.size() && t_[i_ + 1].text == "<" && t_[i_ + 3].text == ">" &&
            ParseUnsigned(t_[i_ + 2].text, &n)) {
          i_ += 3;
        }
        count = std::min<std::uint64_t>(count + n, std::uint64_t{1} << 32);
      }
      ++i_;
    }
    if (is_predicate) return 0;
    return std::min<std::uint64_t>(per * vec * count, std::uint64_t{1} << 40);
  }

  // The register count of a kernel (CU_FUNC_ATTRIBUTE_NUM_REGS) and its spills, from what its
  // PTX declares. The fake has no ptxas: ptxas allocates by liveness, the fake can only count
  // the declared registers (`declared`, 32-bit units). Measured 2026-12-06, H100 driver
  // 580.159.04 (ci/gpu-probes/library_probe.cc, cases "attrs", "occ"): a kernel declaring four
  // 32-bit registers' worth uses 8; kernels with .maxnreg N and more values live than N use
  // exactly N and spill (LOCAL_SIZE_BYTES nonzero). So: the declared count, at least 8, at most
  // .maxnreg; registers declared beyond .maxnreg are spilled, 4 bytes each, to local memory.
  // Without .maxnreg the count stops at kDefaultRegisters (32): compiler-generated PTX declares
  // virtual registers freely ("%r<400>") and their number says little about what ptxas uses.
  void EstimateRegisters(std::uint64_t declared, int maxnreg, KernelInfo* k) {
    const std::uint64_t cap = maxnreg > 0 ? static_cast<std::uint64_t>(maxnreg)
                                          : static_cast<std::uint64_t>(kDefaultRegisters);
    k->num_regs = static_cast<int>(std::min(std::max<std::uint64_t>(declared, kMinRegisters), cap));
    if (maxnreg > 0 && declared > cap) {
      std::uint64_t spill = std::min<std::uint64_t>((declared - cap) * 4, 1u << 24);
      k->local_bytes += static_cast<int>(spill);
    }
  }

  bool ParseBody(KernelInfo* k, std::uint64_t* declared_regs) {
    size_t open = i_;
    int depth = 0;
    bool statement_start = true;
    bool extern_next = false;
    while (i_ < t_.size()) {
      const std::string& tok = t_[i_].text;
      if (tok == "{") {
        ++depth;
        statement_start = true;
        ++i_;
        continue;
      }
      if (tok == "}") {
        ++i_;
        if (--depth == 0) return true;
        statement_start = true;
        continue;
      }
      if (tok == ";") {
        statement_start = true;
        extern_next = false;
        ++i_;
        continue;
      }
      if (statement_start && tok == ".extern") {
        extern_next = true;
        ++i_;
        continue;
      }
      if (statement_start && tok == ".reg") {
        *declared_regs = std::min<std::uint64_t>(*declared_regs + RegisterDeclaration(),
                                                 std::uint64_t{1} << 40);
        statement_start = false;
        continue;
      }
      if (statement_start && (tok == ".shared" || tok == ".local")) {
        bool shared = tok == ".shared";
        std::size_t bytes = DeclarationBytes();
        if (!extern_next) {
          (shared ? k->static_shared_bytes : k->local_bytes) += static_cast<int>(bytes);
        }
        statement_start = false;
        continue;
      }
      // A label ("$L__BB0_1:") starts a new statement after its colon.
      statement_start = (tok == ":");
      ++i_;
    }
    return Fail(open, "unterminated body of " + k->name);
  }

  bool ParseVariable(bool extern_decl) {
    size_t at = i_;
    ++i_;
    GlobalInfo g;
    std::size_t elem = 0, vec = 1, count = 1;
    std::string type;
    bool unsized = false;
    bool opaque = false;  // .texref and friends: not memory cuModuleGetGlobal returns
    std::vector<std::string>* refs = nullptr;  // .texref / .surfref: where its name goes
    while (!AtEnd() && !At(";") && !At("=")) {
      const std::string& tok = t_[i_].text;
      if (tok == ".align") {
        i_ += 2;
        continue;
      }
      if (tok == ".texref" || tok == ".samplerref" || tok == ".surfref") opaque = true;
      if (tok == ".texref") refs = &out_->texrefs;
      if (tok == ".surfref") refs = &out_->surfrefs;
      if (tok == ".managed") g.managed = true;
      if (tok == ".v2" || tok == ".v4" || tok == ".v8") vec = static_cast<std::size_t>(tok[2] - '0');
      if (std::size_t s = TypeSize(tok); s != 0 && elem == 0) {
        elem = s;
        type = tok;
      } else if (tok == "[") {
        if (!ParseDims(&count, &unsized)) return false;
        continue;
      } else if (IsIdentStart(tok[0]) && tok[0] != '.' && g.name.empty()) {
        g.name = tok;
      } else if (tok == "{" || tok == "}") {
        return Fail(i_, "unexpected brace in a variable declaration");
      }
      ++i_;
    }
    if (AtEnd()) return Fail(at, "unterminated variable declaration");
    std::vector<std::pair<std::string, bool>> values;  // (token, negative)
    if (At("=")) {
      ++i_;
      bool negative = false;
      while (!AtEnd() && !At(";")) {
        const std::string& tok = t_[i_].text;
        if (tok == "-") {
          negative = true;
        } else if (tok != "{" && tok != "}" && tok != ",") {
          values.emplace_back(tok, negative);
          negative = false;
        }
        ++i_;
      }
      if (AtEnd()) return Fail(at, "unterminated initializer");
    }
    ++i_;  // ';'
    if (refs != nullptr && !extern_decl && !g.name.empty()) refs->push_back(g.name);
    if (extern_decl || opaque) return true;
    if (g.name.empty() || elem == 0) return Fail(at, "malformed variable declaration");
    std::size_t unit = elem * vec;
    if (unsized) count = std::max<std::size_t>(values.size() / vec, 1) * (count == 0 ? 1 : count);
    g.size = unit * count;
    if (!values.empty()) {
      g.init.assign(std::min(g.size, values.size() * elem), 0);
      for (std::size_t v = 0; v < values.size() && (v + 1) * elem <= g.init.size(); ++v) {
        StoreValue(values[v].first, values[v].second, type, elem, g.init.data() + v * elem);
      }
    }
    for (const GlobalInfo& other : out_->globals) {
      if (other.name == g.name) return Fail(at, "duplicate variable " + g.name);
    }
    out_->globals.push_back(std::move(g));
    return true;
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  ModuleImage* out_;
  std::string* log_;
};

// --- the fake format ---

bool ParseFakeImage(std::string_view text, ModuleImage* out, std::string* log) {
  out->format = ImageFormat::kFake;
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 1;  // the magic line
  std::getline(in, line);
  auto fail = [&](const std::string& why) {
    *log = "FAKECUDA-MODULE line " + std::to_string(line_no) + ": " + why;
    return false;
  };
  std::set<std::string> names;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word[0] == '#') continue;
    if (word == "kernel") {
      KernelInfo k;
      if (!(words >> k.name)) return fail("kernel needs a name");
      if (!names.insert("k:" + k.name).second) return fail("duplicate kernel " + k.name);
      std::size_t offset = 0;
      while (words >> word) {
        if (size_t eq = word.find('='); eq != std::string::npos) {
          std::string key = word.substr(0, eq);
          std::uint64_t v = 0;
          if (!ParseUnsigned(word.substr(eq + 1), &v) || v > 0x7fffffff) {
            return fail("bad value in '" + word + "'");
          }
          int iv = static_cast<int>(v);
          if (key == "shared") {
            k.static_shared_bytes = iv;
          } else if (key == "regs") {
            k.num_regs = iv;
          } else if (key == "maxthreads") {
            k.max_threads = iv;
          } else if (key == "const") {
            k.const_bytes = iv;
          } else if (key == "local") {
            k.local_bytes = iv;
          } else {
            return fail("unknown kernel property '" + key + "'");
          }
          continue;
        }
        KernelParamInfo p;
        std::uint64_t size = 0, align = 0;
        size_t at = word.find('@');
        if (!ParseUnsigned(word.substr(0, at), &size) || size == 0 ||
            (at != std::string::npos &&
             (!ParseUnsigned(word.substr(at + 1), &align) || align == 0 || (align & (align - 1)) != 0))) {
          return fail("bad parameter size '" + word + "' (expected SIZE or SIZE@ALIGN)");
        }
        if (align == 0) {  // natural: the largest power of two <= 8 dividing the size
          align = 1;
          while (align < 8 && size % (align * 2) == 0) align *= 2;
        }
        p.size = static_cast<std::size_t>(size);
        p.align = static_cast<std::size_t>(align);
        offset = (offset + p.align - 1) / p.align * p.align;
        p.offset = offset;
        offset += p.size;
        k.params.push_back(p);
      }
      k.param_bytes = offset;
      out->kernels.push_back(std::move(k));
    } else if (word == "global") {
      GlobalInfo g;
      std::uint64_t size = 0;
      if (!(words >> g.name >> word) || !ParseUnsigned(word, &size) || size == 0) {
        return fail("expected 'global NAME BYTES'");
      }
      if (!names.insert("g:" + g.name).second) return fail("duplicate global " + g.name);
      g.size = static_cast<std::size_t>(size);
      out->globals.push_back(std::move(g));
    } else {
      return fail("unknown directive '" + word + "'");
    }
  }
  return true;
}

bool HasPrefix(const unsigned char* p, std::initializer_list<unsigned char> magic) {
  for (unsigned char m : magic) {
    if (*p++ != m) return false;  // stops at the first mismatch: never reads past a NUL
  }
  return true;
}

// Fat binaries, as nvcc embeds them (the layout ZLUDA documents, cuda_types/src/dark_api.rs and
// dark_api/src/fatbin.rs): a wrapper (__fatBinC_Wrapper_t: magic 0x466243B1, version, pointer to
// the fat binary) that the CUDA runtime hands to cuLibraryLoadData, and the fat binary itself: a
// 16-byte header (magic 0xBA55ED50, version, header size, size of the entries after it), then
// entries, each a header (kind: 1 PTX, 2 ELF cubin; its own size; the payload's size; flags,
// 0x2000 LZ4 and 0x8000 Zstd compression, with the compressed and uncompressed sizes) followed by
// its payload; the next entry starts after the larger of the payload and compressed sizes.
constexpr std::uint32_t kFatbinWrapperMagic = 0x466243B1;
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;

struct FatbinHeader {
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t header_size;
  std::uint64_t entries_size;
};
struct FatbinEntry {
  std::uint16_t kind;
  std::uint16_t version;
  std::uint32_t header_size;
  std::uint32_t payload_size;  // padded; the PTX text ends at its first NUL
  std::uint32_t unknown0;
  std::uint32_t compressed_size;
  std::uint32_t unknown1;
  std::uint32_t unknown2;
  std::uint32_t sm_version;
  std::uint32_t bit_width;
  std::uint32_t unknown3;
  std::uint64_t flags;
  std::uint64_t unknown5;
  std::uint64_t uncompressed_size;
};
static_assert(sizeof(FatbinEntry) == 64);
constexpr std::uint16_t kFatbinPtx = 1;
constexpr std::uint16_t kFatbinCubin = 2;
// An arch-specific cubin (sm_90a: that device only); seen in nvcc 13.0's entries for
// `code=sm_90a` (flags 0x100011 where sm_90 has 0x11).
constexpr std::uint64_t kFatbinArchSpecific = 0x100000;
constexpr std::uint64_t kFatbinLz4 = 0x2000;
constexpr std::uint64_t kFatbinZstd = 0x8000;
// The most a compressed PTX entry may expand to (as ZLUDA bounds it).
constexpr std::uint64_t kMaxPtxSize = 64ull << 20;

// The decompressors of compressed PTX, from the system's libzstd.so.1 and liblz4.so.1, loaded on
// first use through their stable C ABI (fakecuda neither links them nor needs their headers;
// where one is missing, PTX compressed with it is not read). The libraries stay loaded.
struct Decompressors {
  std::size_t (*zstd_decompress)(void*, std::size_t, const void*, std::size_t) = nullptr;
  unsigned (*zstd_is_error)(std::size_t) = nullptr;
  int (*lz4_decompress_safe)(const char*, char*, int, int) = nullptr;
};

template <typename F>
void Resolve(void* library, const char* name, F* out) {
  void* symbol = library != nullptr ? dlsym(library, name) : nullptr;
  std::memcpy(out, &symbol, sizeof(symbol));
}

const Decompressors& LoadedDecompressors() {
  static const Decompressors loaded = [] {
    static_assert(sizeof(void*) == sizeof(Decompressors::zstd_decompress));
    Decompressors d;
    void* zstd = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    Resolve(zstd, "ZSTD_decompress", &d.zstd_decompress);
    Resolve(zstd, "ZSTD_isError", &d.zstd_is_error);
    if (d.zstd_is_error == nullptr) d.zstd_decompress = nullptr;
    void* lz4 = dlopen("liblz4.so.1", RTLD_NOW | RTLD_LOCAL);
    Resolve(lz4, "LZ4_decompress_safe", &d.lz4_decompress_safe);
    return d;
  }();
  return loaded;
}

// The text of a compressed PTX entry into *ptx; false with the reason in *log.
bool DecompressPtx(const FatbinEntry& entry, const unsigned char* payload, std::string* ptx,
                   std::string* log) {
  const Decompressors& d = LoadedDecompressors();
  const bool zstd = (entry.flags & kFatbinZstd) != 0;
  if (zstd ? d.zstd_decompress == nullptr : d.lz4_decompress_safe == nullptr) {
    *log = std::string("the fat binary's PTX is compressed with ") + (zstd ? "Zstd" : "LZ4") +
           " and " + (zstd ? "libzstd.so.1" : "liblz4.so.1") +
           " could not be loaded (install it, or build with nvcc --no-compress)";
    return false;
  }
  if (entry.compressed_size == 0 || entry.uncompressed_size > kMaxPtxSize) {
    *log = "the fat binary's compressed PTX entry has no compressed size or claims more than 64 MiB";
    return false;
  }
  std::string out(static_cast<std::size_t>(entry.uncompressed_size), '\0');
  if (zstd) {
    std::size_t n = d.zstd_decompress(out.data(), out.size(), payload, entry.compressed_size);
    if (d.zstd_is_error(n) != 0) {
      *log = "the fat binary's Zstd-compressed PTX does not decompress";
      return false;
    }
    out.resize(n);
  } else {
    if (out.size() < 1024) out.resize(1024);
    for (;;) {  // the uncompressed size may be missing: grow until it fits, as ZLUDA does
      int n = d.lz4_decompress_safe(reinterpret_cast<const char*>(payload), out.data(),
                                    static_cast<int>(entry.compressed_size),
                                    static_cast<int>(out.size()));
      if (n >= 0) {
        out.resize(static_cast<std::size_t>(n));
        break;
      }
      if (out.size() * 2 > kMaxPtxSize) {
        *log = "the fat binary's LZ4-compressed PTX does not decompress";
        return false;
      }
      out.resize(out.size() * 2);
    }
  }
  ptx->assign(out.c_str());  // up to the first NUL, as the uncompressed text
  if (ptx->empty()) {
    *log = "the fat binary's compressed PTX decompresses to nothing";
    return false;
  }
  return true;
}

// The PTX text of the fat binary (or fat-binary wrapper) at `image`: of its PTX entries that can
// be read (compressed ones through DecompressPtx), the one for the oldest architecture; *contents
// says which, and the architectures of its cubins. No PTX entry at all: CUDA_SUCCESS with an
// empty *ptx (the caller decides, per device, CheckImageForDevice). CUDA_ERROR_NOT_SUPPORTED
// (with the reason in *log) when its PTX is compressed with a library that could not be loaded;
// CUDA_ERROR_INVALID_IMAGE when malformed. The sizes are the fat binary's own, as the real driver
// trusts them.
// `limit`: the bytes known to be readable at `image` (SIZE_MAX when unknown, as for
// cuModuleLoadData); with a known limit nothing past it is read, and a wrapper (which points
// elsewhere) is refused.
CUresult FatbinPtx(const unsigned char* image, std::size_t limit, std::string* ptx,
                   FatbinContents* contents, std::string* log) {
  *contents = FatbinContents();
  contents->present = true;
  const bool bounded = limit != std::numeric_limits<std::size_t>::max();
  if (bounded && limit < sizeof(FatbinHeader)) {
    *log = "malformed fat binary: shorter than its header";
    return CUDA_ERROR_INVALID_IMAGE;
  }
  std::uint32_t magic = 0;
  std::memcpy(&magic, image, sizeof(magic));
  if (magic == kFatbinWrapperMagic) {
    if (bounded) {
      *log = "fat-binary wrapper: it points outside the given image";
      return CUDA_ERROR_INVALID_IMAGE;
    }
    const void* data = nullptr;
    std::memcpy(&data, image + 8, sizeof(data));
    if (data == nullptr) {
      *log = "fat-binary wrapper without a fat binary";
      return CUDA_ERROR_INVALID_IMAGE;
    }
    image = static_cast<const unsigned char*>(data);
    std::memcpy(&magic, image, sizeof(magic));
  }
  FatbinHeader header;
  std::memcpy(&header, image, sizeof(header));
  if (header.magic != kFatbinMagic || header.header_size < sizeof(FatbinHeader)) {
    *log = "not a fat binary: bad magic or header size";
    return CUDA_ERROR_INVALID_IMAGE;
  }
  if (bounded && (header.header_size > limit || header.entries_size > limit - header.header_size)) {
    *log = "malformed fat binary: its entries run past the given image";
    return CUDA_ERROR_INVALID_IMAGE;
  }
  const unsigned char* entries = image + header.header_size;
  // The PTX entries, in the order they are tried: the oldest architecture first, which every
  // device the fat binary's other PTX targets can also run (the interpreter runs any of them).
  struct PtxEntry {
    FatbinEntry entry;
    const unsigned char* payload;
  };
  std::vector<PtxEntry> candidates;
  for (std::uint64_t offset = 0; offset + sizeof(FatbinEntry) <= header.entries_size;) {
    FatbinEntry entry;
    std::memcpy(&entry, entries + offset, sizeof(entry));
    const std::uint64_t body = std::max(entry.payload_size, entry.compressed_size);
    if (entry.header_size < sizeof(FatbinEntry) ||
        entry.header_size > header.entries_size - offset ||
        body > header.entries_size - offset - entry.header_size) {
      *log = "malformed fat binary: an entry runs past its end";
      return CUDA_ERROR_INVALID_IMAGE;
    }
    if (entry.kind == kFatbinPtx) {
      candidates.push_back(PtxEntry{entry, entries + offset + entry.header_size});
    } else if (entry.kind == kFatbinCubin) {
      contents->cubins.push_back(FatbinContents::Cubin{
          static_cast<int>(std::min<std::uint32_t>(entry.sm_version, 10000)),
          (entry.flags & kFatbinArchSpecific) != 0});
    }
    offset += std::uint64_t{entry.header_size} + body;
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const PtxEntry& a, const PtxEntry& b) {
    return a.entry.sm_version < b.entry.sm_version;
  });
  std::string decompress_log;  // why a compressed PTX entry was not read
  for (const PtxEntry& c : candidates) {
    bool read = false;
    if ((c.entry.flags & (kFatbinLz4 | kFatbinZstd)) != 0) {
      read = DecompressPtx(c.entry, c.payload, ptx, &decompress_log);
    } else {
      const auto* text = reinterpret_cast<const char*>(c.payload);
      ptx->assign(text, strnlen(text, c.entry.payload_size));
      read = true;
    }
    if (read) {
      contents->has_ptx = true;
      contents->ptx_sm = static_cast<int>(std::min<std::uint32_t>(c.entry.sm_version, 10000));
      return CUDA_SUCCESS;
    }
  }
  if (!candidates.empty()) {
    *log = decompress_log;
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  ptx->clear();  // machine code only
  return CUDA_SUCCESS;
}

}  // namespace

CUresult ParseModuleImage(const void* image, ModuleImage* out, std::string* log) {
  return ParseModuleImage(image, std::numeric_limits<std::size_t>::max(), out, log);
}

CUresult ParseModuleImage(const void* image, std::size_t size, ModuleImage* out,
                          std::string* log) {
  *out = ModuleImage();
  const auto* bytes = static_cast<const unsigned char*>(image);
  if (HasPrefix(bytes, {0x7f, 'E', 'L', 'F'})) {
    // The cubin of fakecuda's JIT linker holds PTX (fake_cubin.h): read as that PTX.
    // Its architecture is checked against the device as a fat binary's PTX entry is
    // (CheckFatbinForDevice): a cubin linked for sm_100 does not load on sm_90
    // (CUDA_ERROR_NO_BINARY_FOR_GPU, measured).
    int sm = 0;
    if (std::string linked; FakeCubinPtx(image, size, &linked, &sm) && !linked.empty()) {
      CUresult r = ParseModuleImage(linked.c_str(), linked.size() + 1, out, log);
      out->fatbin.present = true;
      out->fatbin.has_ptx = true;
      out->fatbin.ptx_sm = sm;
      return r;
    }
    *log = "cubin (ELF) images are not modelled by fakecuda; load PTX or a FAKECUDA-MODULE image";
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  std::string fatbin_ptx;  // the PTX of a fat binary, parsed below as PTX text is
  FatbinContents fatbin;
  if (HasPrefix(bytes, {0x50, 0xed, 0x55, 0xba}) || HasPrefix(bytes, {0xb1, 0x43, 0x62, 0x46})) {
    if (CUresult e = FatbinPtx(bytes, size, &fatbin_ptx, &fatbin, log); e != CUDA_SUCCESS) {
      return e;
    }
    if (!fatbin.has_ptx) {  // machine code only: no kernels the fake can read
      out->format = ImageFormat::kMachineCode;
      out->fatbin = std::move(fatbin);
      return CUDA_SUCCESS;
    }
    image = fatbin_ptx.c_str();
  }
  std::string_view text(static_cast<const char*>(image));
  if (text.substr(0, kFakeMagic.size()) == kFakeMagic) {
    return ParseFakeImage(text, out, log) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
  }
  std::vector<Token> tokens;
  if (!Tokenize(text, &tokens, log)) {
    return tokens.empty() ? CUDA_ERROR_INVALID_IMAGE : CUDA_ERROR_INVALID_PTX;
  }
  if (tokens.empty() || tokens[0].text != ".version") {
    *log = "not a module image: neither PTX (.version first) nor FAKECUDA-MODULE 1";
    return CUDA_ERROR_INVALID_IMAGE;
  }
  out->format = ImageFormat::kPtx;
  out->fatbin = std::move(fatbin);
  PtxParser parser(std::move(tokens), out, log);
  if (!parser.Parse()) return CUDA_ERROR_INVALID_PTX;
  out->program = ptx::ParseProgram(text, &out->program_error);
  return CUDA_SUCCESS;
}

int MaxPtxVersion(int driver_version) {
  if (driver_version >= 13000) return 90 + (driver_version % 1000) / 10;
  static const struct {
    int driver;
    int ptx;
  } kTable[] = {{12090, 88}, {12080, 87}, {12060, 85}, {12050, 85}, {12040, 84},
                {12030, 83}, {12020, 82}, {12010, 81}, {12000, 80}, {11080, 78}};
  for (const auto& row : kTable) {
    if (driver_version >= row.driver) return row.ptx;
  }
  return 77;
}

}  // namespace fakecuda
