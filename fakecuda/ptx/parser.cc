// Copyright 2026 The cuhal Authors.
// Module structure, declarations and operands of PTX. Instructions are lowered in lower.cc.
#include "fakecuda/ptx/parser.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "fakecuda/ptx/parser_impl.h"

namespace fakecuda::ptx {

int Program::FindFunction(const std::string& name) const {
  for (std::size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Program::KernelError(int kernel) const {
  std::vector<bool> seen(functions.size(), false);
  std::vector<std::uint32_t> work{static_cast<std::uint32_t>(kernel)};
  while (!work.empty()) {
    std::uint32_t f = work.back();
    work.pop_back();
    if (seen[f]) continue;
    seen[f] = true;
    const Function& fn = functions[f];
    if (!fn.error.empty()) return fn.error;
    for (std::uint32_t c : fn.callees) work.push_back(c);
  }
  return "";
}

namespace internal {
namespace {

// The most registers (slots: declared registers and constants) one function may have. PTX
// declares virtual registers in ranges ("%r<4096>"); nvcc's largest kernels use tens of
// thousands. A function past this fails (Function::error) instead of exhausting memory.
constexpr std::uint64_t kMaxFunctionRegisters = std::uint64_t{1} << 18;

std::uint64_t AlignUp(std::uint64_t v, std::uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

struct SregName {
  const char* name;
  int id;
};
constexpr SregName kSregs[] = {
    {"%tid.x", kTidX}, {"%tid.y", kTidY}, {"%tid.z", kTidZ}, {"%ntid.x", kNtidX},
    {"%ntid.y", kNtidY}, {"%ntid.z", kNtidZ}, {"%ctaid.x", kCtaidX}, {"%ctaid.y", kCtaidY},
    {"%ctaid.z", kCtaidZ}, {"%nctaid.x", kNctaidX}, {"%nctaid.y", kNctaidY},
    {"%nctaid.z", kNctaidZ}, {"%laneid", kLaneid}, {"%warpid", kWarpid}, {"%nwarpid", kNwarpid},
    {"%smid", kSmid}, {"%nsmid", kNsmid}, {"%gridid", kGridid}, {"%clock", kClock},
    {"%clock64", kClock64}, {"%lanemask_eq", kLanemaskEq}, {"%lanemask_lt", kLanemaskLt},
    {"%lanemask_le", kLanemaskLe}, {"%lanemask_gt", kLanemaskGt}, {"%lanemask_ge", kLanemaskGe},
    {"%dynamic_smem_size", kDynamicSmemSize}, {"%total_smem_size", kTotalSmemSize},
    {"%globaltimer", kGlobaltimer},
};

// A `.shared`/`.local`/`.param`/`.global` declaration's tokens: alignment, element, count, name.
struct Decl {
  std::uint64_t align = 0;
  std::uint64_t elem = 0;
  std::uint64_t count = 1;
  bool unsized = false;
  std::string name;
  std::vector<std::string> names;  // .reg lists
  std::size_t end = 0;             // index of the ';' (or of the token that ended it)
};

Decl ReadDecl(const std::vector<Token>& t, std::size_t i) {
  Decl d;
  std::uint64_t vec = 1;
  bool pointer = false;  // `.ptr .global .align N` gives the pointee's alignment
  for (; i < t.size() && t[i].text != ";" && t[i].text != "=" && t[i].text != ")" && t[i].text != ","; ++i) {
    const std::string& s = t[i].text;
    if (s == ".ptr") {
      pointer = true;
    } else if (s == ".align" && i + 1 < t.size()) {
      if (!pointer && d.elem == 0) d.align = std::strtoull(t[i + 1].text.c_str(), nullptr, 0);
      ++i;
    } else if (s == ".v2" || s == ".v4" || s == ".v8") {
      vec = static_cast<std::uint64_t>(s[2] - '0');
    } else if (Type ty = ParseType(s.substr(s[0] == '.' ? 1 : 0)); s[0] == '.' && ty != Type::kNone) {
      d.elem = static_cast<std::uint64_t>(TypeBytes(ty)) * vec;
      if (s == ".b128") d.elem = 16 * vec;
    } else if (s == "[") {
      if (i + 1 < t.size() && t[i + 1].text == "]") {
        d.unsized = true;
        d.count = 0;
        ++i;
      } else if (i + 2 < t.size()) {
        d.count *= std::strtoull(t[i + 1].text.c_str(), nullptr, 0);
        i += 2;
      }
    } else if (s[0] != '.' && d.name.empty()) {
      d.name = s;
    }
  }
  d.end = i;
  if (d.align == 0) d.align = std::max<std::uint64_t>(d.elem, 1);
  return d;
}

}  // namespace

Type ParseType(const std::string& s) {
  static const struct {
    const char* name;
    Type type;
  } kTypes[] = {
      {"pred", Type::kPred}, {"u8", Type::kU8},   {"u16", Type::kU16}, {"u32", Type::kU32},
      {"u64", Type::kU64},   {"s8", Type::kS8},   {"s16", Type::kS16}, {"s32", Type::kS32},
      {"s64", Type::kS64},   {"b8", Type::kB8},   {"b16", Type::kB16}, {"b32", Type::kB32},
      {"b64", Type::kB64},   {"f16", Type::kF16}, {"f32", Type::kF32}, {"f64", Type::kF64},
      {"b128", Type::kB64},  {"bf16", Type::kBF16}, {"f16x2", Type::kF16x2},
      {"bf16x2", Type::kBF16x2}, {"tf32", Type::kTF32},
  };
  for (const auto& k : kTypes) {
    if (s == k.name) return k.type;
  }
  return Type::kNone;
}

void Parser::SkipLine() {
  int line = Line();
  while (!AtEnd() && t_[i_].line == line) ++i_;
}

bool Parser::SkipBraces() {
  int depth = 0;
  for (; i_ < t_.size(); ++i_) {
    if (t_[i_].text == "{") ++depth;
    if (t_[i_].text == "}" && --depth == 0) {
      ++i_;
      return true;
    }
  }
  return false;
}

void Parser::SkipStatement() {
  while (!AtEnd() && !At(";")) {
    if (At("{")) {
      SkipBraces();
      return;
    }
    ++i_;
  }
  if (!AtEnd()) ++i_;
}

bool Parser::Parse(std::string* error) {
  // The static shared layout first: `.extern .shared` arrays start after every static one.
  for (std::size_t k = 0; k < t_.size(); ++k) {
    if (t_[k].text != ".shared" && t_[k].text != ".shared::cta") continue;
    if (k > 0 && t_[k - 1].text == ".extern") {
      Decl d = ReadDecl(t_, k + 1);
      dynamic_align_ = std::max(dynamic_align_, d.align);
      continue;
    }
    Decl d = ReadDecl(t_, k + 1);
    shared_top_ = AlignUp(shared_top_, d.align) + d.elem * d.count;
  }
  p_->static_shared_bytes = static_cast<std::uint32_t>(shared_top_);
  p_->dynamic_shared_offset = static_cast<std::uint32_t>(AlignUp(shared_top_, dynamic_align_));
  shared_top_ = 0;  // handed out again, in the same order, as declarations are parsed

  bool is_extern = false;
  while (!AtEnd()) {
    const std::string tok = t_[i_].text;
    if (tok == ".version" || tok == ".target" || tok == ".address_size" || tok == ".file" ||
        tok == ".loc") {
      SkipLine();
    } else if (tok == ".visible" || tok == ".weak" || tok == ".common") {
      ++i_;
      continue;
    } else if (tok == ".extern") {
      is_extern = true;
      ++i_;
      continue;
    } else if (tok == ".entry" || tok == ".func") {
      if (!ParseFunction(tok == ".entry", is_extern, error)) return false;
    } else if (tok == ".global" || tok == ".const" || tok == ".shared" || tok == ".shared::cta") {
      if (!ParseModuleVariable(tok, is_extern, error)) return false;
    } else if (tok == ".section") {
      while (!AtEnd() && !At("{")) ++i_;
      SkipBraces();
    } else if (tok == "{") {
      SkipBraces();
    } else {
      SkipStatement();
    }
    is_extern = false;
  }
  Finish();
  return true;
}

bool Parser::ParseModuleVariable(const std::string& space, bool is_extern, std::string* error) {
  (void)error;
  Decl d = ReadDecl(t_, i_ + 1);
  Symbol sym;
  if (space == ".global" || space == ".const") {
    sym.kind = Symbol::kGlobal;
    sym.offset = p_->globals.size();
    p_->globals.push_back(d.name);
  } else {
    sym.kind = Symbol::kShared;
    if (is_extern) {
      sym.offset = p_->dynamic_shared_offset;
    } else {
      shared_top_ = AlignUp(shared_top_, d.align);
      sym.offset = shared_top_;
      shared_top_ += d.elem * d.count;
    }
  }
  sym.size = d.elem * d.count;
  if (!d.name.empty()) module_symbols_[d.name] = sym;
  i_ = d.end;
  SkipStatement();  // the initializer, if any, and the ';'
  return true;
}

bool Parser::ParseParamList(bool kernel, std::uint64_t* offset,
                            std::vector<std::pair<std::string, Symbol>>* out) {
  // '(' .param ... [, .param ...] ')'
  ++i_;
  while (!AtEnd() && !At(")")) {
    if (At(",")) {
      ++i_;
      continue;
    }
    Decl d = ReadDecl(t_, i_);
    if (d.name.empty() || d.elem == 0) return false;
    Symbol s;
    s.kind = kernel ? Symbol::kKernelParam : Symbol::kFrameParam;
    *offset = AlignUp(*offset, d.align);
    s.offset = *offset;
    s.size = d.elem * std::max<std::uint64_t>(d.count, 1);
    *offset += s.size;
    out->emplace_back(d.name, s);
    i_ = d.end;
  }
  if (AtEnd()) return false;
  ++i_;
  return true;
}

bool Parser::ParseFunction(bool entry, bool is_extern, std::string* error) {
  int line = Line();
  ++i_;
  Header h;
  std::uint64_t offset = 0;
  if (!entry && At("(")) {
    if (!ParseParamList(false, &offset, &h.results)) {
      *error = "ptx line " + std::to_string(line) + ": malformed return value list";
      return false;
    }
  }
  if (AtEnd()) {
    *error = "ptx line " + std::to_string(line) + ": function without a name";
    return false;
  }
  std::string name = t_[i_].text;
  ++i_;
  if (At("(") && !ParseParamList(entry, &offset, &h.params)) {
    *error = "ptx line " + std::to_string(line) + ": malformed parameter list of " + name;
    return false;
  }
  while (!AtEnd() && !At("{") && !At(";")) ++i_;  // .maxntid, .noreturn, ...
  int index = p_->FindFunction(name);
  if (index < 0) {
    index = static_cast<int>(p_->functions.size());
    p_->functions.emplace_back();
    p_->functions.back().name = name;
  }
  Function& f = p_->functions[static_cast<std::size_t>(index)];
  f.is_entry = entry;
  std::uint64_t own = 0;
  f.results.clear();  // a declaration (prototype) may come before the definition
  f.params.clear();
  for (auto& [n, s] : h.results) {
    f.results.push_back(ParamCopy{0, static_cast<std::uint32_t>(s.offset), static_cast<std::uint32_t>(s.size)});
    own = std::max(own, s.offset + s.size);
  }
  if (!entry) {
    for (auto& [n, s] : h.params) {
      f.params.push_back(ParamCopy{0, static_cast<std::uint32_t>(s.offset), static_cast<std::uint32_t>(s.size)});
      own = std::max(own, s.offset + s.size);
    }
  }
  if (AtEnd() || At(";")) {
    if (!AtEnd()) ++i_;
    if (is_extern && f.error.empty() && !f.defined) {
      f.error = "call to external function " + name + " (not defined in this module)";
      f.error_line = line;
    }
    return true;
  }
  f.defined = true;
  f.error.clear();
  frame_params_ = own;
  if (!ParseBody(&f, static_cast<std::uint32_t>(index), h)) {
    *error = "ptx line " + std::to_string(line) + ": unterminated body of " + name;
    return false;
  }
  return true;
}

void Parser::Fail(Function* f, int line, const std::string& why) {
  if (!f->error.empty()) return;
  f->error = "ptx line " + std::to_string(line) + ": " + why + " (in " + f->name + ")";
  f->error_line = line;
}

bool Parser::ParseBody(Function* f, std::uint32_t index, const Header& h) {
  fn_ = f;
  fn_index_ = index;
  f->code.clear();
  f->init.assign(kFirstFreeSlot, 0);
  f->init[kTrueSlot] = 1;
  consts_.clear();
  consts_[1] = kTrueSlot;
  consts_[0] = kZeroSlot;
  labels_.clear();
  branch_fixups_.clear();
  local_top_ = 0;
  scopes_.assign(1, {});
  for (const auto& [n, s] : h.params) scopes_[0][n] = s;
  for (const auto& [n, s] : h.results) scopes_[0][n] = s;
  ++i_;  // '{'
  int depth = 1;
  while (!AtEnd()) {
    if (At("{")) {
      ++depth;
      scopes_.emplace_back();
      ++i_;
      continue;
    }
    if (At("}")) {
      ++i_;
      if (--depth == 0) break;
      scopes_.pop_back();
      continue;
    }
    if (!ParseBodyStatement(f)) {
      // Skip the rest of a statement that could not be lowered.
      while (!AtEnd() && !At(";") && !At("}")) ++i_;
      if (At(";")) ++i_;
    }
  }
  if (depth != 0) return false;
  // An implicit ret at the end (falling off the end of a body returns).
  Instr ret;
  ret.fn = SelectRet();
  ret.line = f->code.empty() ? 0 : f->code.back().line;
  f->code.push_back(ret);
  for (const auto& [at, label] : branch_fixups_) {
    auto it = labels_.find(label);
    if (it == labels_.end()) {
      Fail(f, f->code[at].line, "branch to unknown label " + label);
      continue;
    }
    f->code[at].imm = it->second;
  }
  f->local_bytes = static_cast<std::uint32_t>(AlignUp(local_top_, 16));
  f->param_bytes = static_cast<std::uint32_t>(AlignUp(frame_params_, 16));
  fn_ = nullptr;
  return true;
}

bool Parser::ParseBodyStatement(Function* f) {
  const std::string tok = t_[i_].text;
  line_ = t_[i_].line;
  if (tok == ".loc" || tok == ".file") {
    SkipLine();
    return true;
  }
  if (tok == ".pragma" || tok == ".maxntid" || tok == ".reqntid" || tok == ".minnctapersm" ||
      tok == ".maxnreg" || tok == ".callprototype" || tok == ".calltargets") {
    SkipStatement();
    return true;
  }
  if (tok == ".reg" || tok == ".local" || tok == ".shared" || tok == ".shared::cta" ||
      tok == ".param" || tok == ".extern" || tok == ".global" || tok == ".const") {
    return ParseDeclaration(f, tok);
  }
  if (i_ + 1 < t_.size() && t_[i_ + 1].text == ":" && tok[0] != '@') {
    labels_[tok] = static_cast<std::uint32_t>(f->code.size());
    i_ += 2;
    return true;
  }
  std::string why;
  if (!ParseInstruction(f, &why)) {
    Fail(f, line_, why);
    return false;
  }
  return true;
}

bool Parser::ParseDeclaration(Function* f, const std::string& space) {
  bool is_extern = space == ".extern";
  std::string sp = space;
  if (is_extern) {
    ++i_;
    sp = AtEnd() ? "" : t_[i_].text;
  }
  if (sp == ".reg") {
    // .reg .type name[<N>][, name[<N>]...];
    ++i_;
    Type type = Type::kNone;
    while (!AtEnd() && !At(";")) {
      const std::string& s = t_[i_].text;
      if (s[0] == '.' && ParseType(s.substr(1)) != Type::kNone) {
        type = ParseType(s.substr(1));
      } else if (s == ".v2" || s == ".v4") {
        Fail(f, line_, "vector register declarations are not supported");
      } else if (s != ",") {
        std::string name = s;
        std::uint64_t n = 0;
        bool ranged = false;
        if (i_ + 3 < t_.size() && t_[i_ + 1].text == "<") {
          n = std::strtoull(t_[i_ + 2].text.c_str(), nullptr, 0);
          ranged = true;
          i_ += 3;
        }
        if (ranged && n > kMaxFunctionRegisters - std::min<std::uint64_t>(
                                  f->init.size(), kMaxFunctionRegisters)) {
          // "%r<4294967295>" made billions of registers, one map entry each: the parse ran out
          // of memory (found by ptx_fuzzer). Such a function cannot run; the module still loads.
          Fail(f, line_, "more than " + std::to_string(kMaxFunctionRegisters) + " registers");
        } else if (ranged) {
          for (std::uint64_t k = 0; k < n; ++k) {
            Symbol sym;
            sym.slot = NewSlot();
            scopes_.back()[name + std::to_string(k)] = sym;
          }
        } else {
          Symbol sym;
          sym.slot = NewSlot();
          scopes_.back()[name] = sym;
        }
      }
      ++i_;
    }
    (void)type;
    if (!AtEnd()) ++i_;
    return true;
  }
  Decl d = ReadDecl(t_, i_ + 1);
  Symbol sym;
  sym.size = d.elem * std::max<std::uint64_t>(d.count, 1);
  if (sp == ".local") {
    sym.kind = Symbol::kLocal;
    local_top_ = AlignUp(local_top_, d.align);
    sym.offset = local_top_;
    local_top_ += d.elem * d.count;
  } else if (sp == ".shared" || sp == ".shared::cta") {
    sym.kind = Symbol::kShared;
    if (is_extern) {
      sym.offset = p_->dynamic_shared_offset;
    } else {
      shared_top_ = AlignUp(shared_top_, d.align);
      sym.offset = shared_top_;
      shared_top_ += d.elem * d.count;
    }
  } else if (sp == ".param") {
    sym.kind = Symbol::kFrameParam;
    frame_params_ = AlignUp(frame_params_, d.align);
    sym.offset = frame_params_;
    frame_params_ += sym.size;
  } else {
    Fail(f, line_, "a " + sp + " declaration inside a function body is not supported");
    SkipStatement();
    return true;
  }
  if (!d.name.empty()) scopes_.back()[d.name] = sym;
  i_ = d.end;
  SkipStatement();
  return true;
}

const Symbol* Parser::Find(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto s = it->find(name);
    if (s != it->end()) return &s->second;
  }
  auto m = module_symbols_.find(name);
  return m == module_symbols_.end() ? nullptr : &m->second;
}

bool Parser::ParseNumber(const std::string& text, bool negative, Operand* op) {
  op->kind = Operand::kImm;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'f' || text[1] == 'F' || text[1] == 'd' || text[1] == 'D')) {
    op->float_literal = (text[1] == 'f' || text[1] == 'F') ? 'f' : 'd';
    op->imm = std::strtoull(text.c_str() + 2, nullptr, 16);
    if (negative) op->imm ^= op->float_literal == 'f' ? 0x80000000ULL : 0x8000000000000000ULL;
    return true;
  }
  if (text.find('.') != std::string::npos || ((text.find('e') != std::string::npos || text.find('E') != std::string::npos) &&
                                              text.find('x') == std::string::npos && text.find('X') == std::string::npos)) {
    op->float_literal = 'r';
    op->real = std::strtod(text.c_str(), nullptr) * (negative ? -1.0 : 1.0);
    return true;
  }
  std::string s = text;
  while (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.pop_back();
  char* end = nullptr;
  std::uint64_t v = std::strtoull(s.c_str(), &end, 0);
  if (end == nullptr || *end != '\0') return false;
  op->imm = negative ? ~v + 1 : v;
  return true;
}

bool Parser::ParseAddress(Operand* op, std::string* why) {
  // '[' (reg | symbol | number) [ ('+'|'-') ['-'] number ] ']'
  op->kind = Operand::kAddress;
  ++i_;
  bool negative = false;
  while (!AtEnd() && !At("]")) {
    const std::string& s = t_[i_].text;
    if (s == "+") {
      negative = false;
    } else if (s == "-") {
      negative = !negative;
    } else if (std::isdigit(static_cast<unsigned char>(s[0]))) {
      Operand n;
      if (!ParseNumber(s, negative, &n) || n.float_literal != 0) {
        *why = "malformed address offset '" + s + "'";
        return false;
      }
      op->offset += static_cast<std::int64_t>(n.imm);
      negative = false;
    } else if (const Symbol* sym = Find(s); sym != nullptr && sym->kind == Symbol::kRegister) {
      op->has_base_reg = true;
      op->slot = sym->slot;
    } else if (sym != nullptr) {
      op->name = s;
    } else {
      *why = "unknown name '" + s + "' in an address";
      return false;
    }
    ++i_;
  }
  if (AtEnd()) {
    *why = "unterminated address";
    return false;
  }
  ++i_;
  return true;
}

bool Parser::ParseOperand(Operand* op, std::string* why) {
  if (AtEnd()) {
    *why = "missing operand";
    return false;
  }
  const std::string s = t_[i_].text;
  if (s == "[") return ParseAddress(op, why);
  if (s == "{" || s == "(") {
    const char* close = s == "{" ? "}" : ")";
    op->kind = s == "{" ? Operand::kVector : Operand::kList;
    ++i_;
    while (!AtEnd() && !At(close)) {
      if (At(",")) {
        ++i_;
        continue;
      }
      Operand e;
      if (!ParseOperand(&e, why)) return false;
      op->elems.push_back(std::move(e));
    }
    if (AtEnd()) {
      *why = "unterminated operand list";
      return false;
    }
    ++i_;
    return true;
  }
  if (s == "!") {
    ++i_;
    Operand inner;
    if (!ParseOperand(&inner, why)) return false;
    if (inner.kind != Operand::kReg) {
      *why = "'!' applies to a predicate register";
      return false;
    }
    op->kind = Operand::kNegPred;
    op->slot = inner.slot;
    return true;
  }
  if (s == "-" && i_ + 1 < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_ + 1].text[0]))) {
    ++i_;
    bool ok = ParseNumber(t_[i_].text, true, op);
    ++i_;
    if (!ok) *why = "malformed number '-" + t_[i_ - 1].text + "'";
    return ok;
  }
  if (std::isdigit(static_cast<unsigned char>(s[0]))) {
    ++i_;
    if (!ParseNumber(s, false, op)) {
      *why = "malformed number '" + s + "'";
      return false;
    }
    return true;
  }
  ++i_;
  if (s == "_") {
    op->kind = Operand::kSink;
    return true;
  }
  for (const SregName& r : kSregs) {
    if (s == r.name) {
      op->kind = Operand::kSreg;
      op->sreg = r.id;
      return true;
    }
  }
  if (const Symbol* sym = Find(s); sym != nullptr && sym->kind == Symbol::kRegister) {
    op->kind = Operand::kReg;
    op->slot = sym->slot;
  } else if (s[0] == '%') {
    *why = "unknown register or special register " + s;
    return false;
  } else {
    op->kind = Operand::kSymbol;
    op->name = s;
  }
  if (At("|")) {  // p|q
    ++i_;
    Operand second;
    if (!ParseOperand(&second, why)) return false;
    Operand first = *op;
    *op = Operand();
    op->kind = Operand::kPair;
    op->elems = {first, second};
  }
  return true;
}

bool Parser::ParseInstruction(Function* f, std::string* why) {
  (void)f;
  Statement st;
  st.line = line_;
  if (At("@")) {
    ++i_;
    if (At("!")) {
      st.guard_neg = true;
      ++i_;
    }
    const Symbol* sym = AtEnd() ? nullptr : Find(t_[i_].text);
    if (sym == nullptr || sym->kind != Symbol::kRegister) {
      *why = "malformed guard predicate";
      return false;
    }
    st.guard = sym->slot;
    ++i_;
  }
  if (AtEnd()) {
    *why = "missing instruction";
    return false;
  }
  st.opcode = t_[i_].text;
  ++i_;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = st.opcode.find('.', start);
    std::string part = st.opcode.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (start == 0) st.base = part; else st.mods.push_back(part);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!KnownOpcode(st.base)) {
    *why = "instruction '" + st.opcode + "' is not supported by fakecuda's PTX interpreter";
    return false;
  }
  while (!AtEnd() && !At(";")) {
    if (At(",")) {
      ++i_;
      continue;
    }
    Operand op;
    if (!ParseOperand(&op, why)) {
      *why = "instruction '" + st.opcode + "': " + *why;
      return false;
    }
    st.ops.push_back(std::move(op));
  }
  if (AtEnd()) {
    *why = "missing ';' after " + st.opcode;
    return false;
  }
  ++i_;
  return Lower(st, why);
}

void Parser::Finish() {
  for (const PendingCall& c : calls_) {
    Function& caller = p_->functions[c.function];
    int callee = p_->FindFunction(c.callee);
    if (callee < 0) {
      Fail(&caller, c.line, "call to unknown function " + c.callee);
      continue;
    }
    const Function& target = p_->functions[static_cast<std::size_t>(callee)];
    CallSite& site = caller.calls[c.site];
    site.callee = static_cast<std::uint32_t>(callee);
    caller.callees.push_back(site.callee);
    if (c.args.size() != target.params.size() || c.results.size() != target.results.size()) {
      Fail(&caller, c.line, "call to " + c.callee + " with the wrong number of arguments");
      continue;
    }
    for (std::size_t k = 0; k < c.args.size(); ++k) {
      site.args.push_back(ParamCopy{static_cast<std::uint32_t>(c.args[k].first), target.params[k].to,
                                    std::min(static_cast<std::uint32_t>(c.args[k].second), target.params[k].size)});
    }
    for (std::size_t k = 0; k < c.results.size(); ++k) {
      site.results.push_back(ParamCopy{target.results[k].to, static_cast<std::uint32_t>(c.results[k].first),
                                       std::min(static_cast<std::uint32_t>(c.results[k].second), target.results[k].size)});
    }
  }
}

}  // namespace internal

std::shared_ptr<Program> ParseProgram(std::string_view source, std::string* error) {
  std::vector<Token> tokens;
  if (!Tokenize(source, &tokens, error)) return nullptr;
  auto program = std::make_shared<Program>();
  internal::Parser parser(std::move(tokens), program.get());
  if (!parser.Parse(error)) return nullptr;
  return program;
}

}  // namespace fakecuda::ptx
