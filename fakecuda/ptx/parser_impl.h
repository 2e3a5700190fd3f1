// Copyright 2026 The cuhal Authors.
// The parser's internals, shared by parser.cc (module structure, declarations, operands) and
// the lowering files (instructions to IR): lower.cc (operands, dispatch by family) and
// lower_<family>.cc. Not part of fakecuda's interface.
#ifndef CUHAL_FAKECUDA_PTX_PARSER_IMPL_H_
#define CUHAL_FAKECUDA_PTX_PARSER_IMPL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fakecuda/ptx/lexer.h"
#include "fakecuda/ptx/ops.h"
#include "fakecuda/ptx/program.h"

namespace fakecuda::ptx::internal {

// What a name in a function body refers to.
struct Symbol {
  enum Kind { kRegister, kKernelParam, kFrameParam, kShared, kLocal, kGlobal, kFunction } kind = kRegister;
  Slot slot = 0;             // registers
  std::uint64_t offset = 0;  // params, shared, local; global: variable index
  std::uint64_t size = 0;
};

struct Operand {
  enum Kind { kReg, kImm, kSreg, kSymbol, kVector, kAddress, kNegPred, kPair, kList, kSink } kind = kImm;
  Slot slot = 0;
  std::uint64_t imm = 0;
  char float_literal = 0;  // 'f' (0f...), 'd' (0d...), 'r' (decimal with a point), 0: integer
  double real = 0;
  int sreg = 0;
  std::string name;        // symbols; addresses: the base symbol, if any
  bool has_base_reg = false;
  std::int64_t offset = 0;  // addresses
  std::vector<Operand> elems;  // vectors, lists, pairs
};

struct Statement {
  std::string opcode;               // "ld.global.v2.f32"
  std::vector<std::string> mods;    // {"global", "v2", "f32"}
  std::string base;                 // "ld"
  std::vector<Operand> ops;
  Slot guard = kTrueSlot;
  bool guard_neg = false;
  int line = 0;
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, Program* program) : t_(std::move(tokens)), p_(program) {}
  bool Parse(std::string* error);

  // --- lowering (lower.cc, lower_<family>.cc) ---
  // Appends the IR of `s` to the current function; false with *why for what is not supported.
  bool Lower(const Statement& s, std::string* why);
  // Whether instructions named `base` ("ld", "shfl") are implemented in some form.
  static bool KnownOpcode(const std::string& base);

 private:
  struct PendingCall {
    std::uint32_t function = 0;
    std::uint32_t site = 0;
    std::string callee;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> args;     // caller (offset, size)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> results;
    int line = 0;
  };
  struct Header {
    std::vector<std::pair<std::string, Symbol>> params;
    std::vector<std::pair<std::string, Symbol>> results;
  };

  // parser.cc
  bool At(const char* s) const { return i_ < t_.size() && t_[i_].text == s; }
  bool AtEnd() const { return i_ >= t_.size(); }
  int Line() const { return i_ < t_.size() ? t_[i_].line : (t_.empty() ? 0 : t_.back().line); }
  void SkipLine();
  bool SkipBraces();
  void SkipStatement();
  bool ParseModuleVariable(const std::string& space, bool is_extern, std::string* error);
  bool ParseFunction(bool entry, bool is_extern, std::string* error);
  bool ParseParamList(bool kernel, std::uint64_t* offset, std::vector<std::pair<std::string, Symbol>>* out);
  bool ParseBody(Function* f, std::uint32_t index, const Header& header);
  bool ParseBodyStatement(Function* f);
  bool ParseDeclaration(Function* f, const std::string& space);
  bool ParseInstruction(Function* f, std::string* why);
  bool ParseOperand(Operand* op, std::string* why);
  bool ParseAddress(Operand* op, std::string* why);
  bool ParseNumber(const std::string& text, bool negative, Operand* op);
  const Symbol* Find(const std::string& name) const;
  void Fail(Function* f, int line, const std::string& why);
  void Finish();

  // lower.cc (operands) and lower_<family>.cc (one Lower* each)
  Slot NewSlot();
  Slot Const(std::uint64_t bits);
  Slot Src(const Operand& op, Type t, std::string* why);
  Slot Dst(const Operand& op, std::string* why);
  bool Addr(const Operand& op, Space space, Instr* in, std::string* why);
  void Emit(Instr in);
  bool LowerArith(const Statement& s, Type t, std::string* why);
  bool LowerHalf(const Statement& s, Type t, std::string* why);  // lower_half.cc
  bool LowerHalfCvt(const Statement& s, Type dst, Type src, std::string* why);
  bool LowerMemory(const Statement& s, std::string* why);
  bool LowerCpAsync(const Statement& s, std::string* why);  // lower_memory.cc
  bool LowerMatrix(const Statement& s, std::string* why);   // lower_matrix.cc
  bool AppendList(const Operand& op, int count, bool dst, std::string* why);
  bool LowerControl(const Statement& s, std::string* why);
  bool LowerWarp(const Statement& s, std::string* why);
  bool LowerMove(const Statement& s, std::string* why);

  std::vector<Token> t_;
  std::size_t i_ = 0;
  Program* p_;
  // Module scope.
  std::map<std::string, Symbol> module_symbols_;
  std::uint64_t shared_top_ = 0;
  std::uint64_t dynamic_align_ = 16;
  std::vector<std::string> dynamic_shared_;  // `.extern .shared` arrays (placed at the end)
  std::vector<PendingCall> calls_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> module_shared_users_;
  // The function being parsed.
  Function* fn_ = nullptr;
  std::uint32_t fn_index_ = 0;
  int line_ = 0;
  std::vector<std::map<std::string, Symbol>> scopes_;
  std::map<std::uint64_t, Slot> consts_;
  std::map<std::string, std::uint32_t> labels_;
  std::vector<std::pair<std::uint32_t, std::string>> branch_fixups_;  // instr index, label
  std::uint64_t frame_params_ = 0;
  std::uint64_t local_top_ = 0;
};

Type ParseType(const std::string& s);

}  // namespace fakecuda::ptx::internal

#endif  // CUHAL_FAKECUDA_PTX_PARSER_IMPL_H_
