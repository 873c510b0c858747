#pragma once
// The parser's internals, shared by the parse_*.cpp files. Not part of the
// public interface: use parse() / parse_repl() from parser.h.
//
// Error handling: an error is reported into the Diagnostics and a ParseError
// is thrown; it is caught at the nearest recovery point (a statement, a field
// line, a declaration), which skips to the end of the logical line or to the
// next column-0 token. No exception ever leaves parse() / parse_repl().

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diag/diagnostic.h"
#include "interp/lex/token.h"
#include "interp/parse/ast.h"
#include "interp/parse/parser.h"

namespace ss::parse::detail {

using diag::Code;
using diag::Span;
using lex::Tok;
using lex::Token;

/// Thrown after an error has been reported; caught at recovery points.
struct ParseError {};

/// Nesting beyond this (expressions, types, blocks) is an E0101.
constexpr int kMaxDepth = 200;

class Parser {
 public:
  /// [diags] may already hold the lexer's errors for this file: parser
  /// errors later on the same logical line as one of them are follow-on
  /// noise and are not reported (an unclosed bracket's line runs to the end
  /// of the file).
  Parser(const lex::Tokens& tokens,
         uint32_t file,
         diag::Diagnostics& diags,
         int depth = 0);
  /// A sub-parser (an f-string's `{...}`) shares its parent's quiet zones.
  void inherit_quiet_zones(const Parser& parent) { quiet_ = parent.quiet_; }

  // ------------------------------------------------------------ entry points
  void parse_module(ast::Module& m, ast::Block* repl_stmts);

  // ------------------------------------------------------------ token cursor
  const Token& peek(size_t k = 0) const;
  Tok kind(size_t k = 0) const { return peek(k).kind; }
  bool at(Tok t) const { return kind() == t; }
  bool at_name(const char* word) const;
  const Token& advance();
  bool accept(Tok t);
  /// Consumes a token of kind [t] or reports "expected [what], found ...".
  const Token& expect(Tok t, const std::string& what);
  /// The span of the last consumed token that is not Newline/Indent/Dedent.
  Span last_span() const { return last_span_; }
  Span here() const { return peek().span; }
  size_t pos() const { return pos_; }
  /// The kind of the token just consumed (Eof at the start).
  Tok prev_kind() const {
    return pos_ > 0 && pos_ - 1 < toks_.size() ? toks_[pos_ - 1].kind
                                               : Tok::Eof;
  }
  void set_pos(size_t p) { pos_ = p; }
  const Token& token_at(size_t i) const {
    return i < toks_.size() ? toks_[i] : eof_;
  }

  // ------------------------------------------------------------ errors
  static std::string describe(const Token& t);
  /// Reports E0101 "expected [what], found <current token>" and throws.
  [[noreturn]] void fail_expected(const std::string& what);
  [[noreturn]] void fail(Code code,
                         Span span,
                         std::string message,
                         std::string label = {});
  void report(Code code,
              Span span,
              std::string message,
              std::string label = {});

  // ------------------------------------------------------------ recovery
  /// Skips to the end of the logical line (consuming its Newline), then
  /// over an indented block that follows it, if any.
  void sync_line();
  /// Skips an Indent ... matching Dedent run (the current token is Indent).
  void skip_block();
  /// Skips to the next column-0 token that starts a line (or Eof).
  void sync_decl();
  bool at_line_start_col0() const;

  // ------------------------------------------------------------ depth
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser);
    ~DepthGuard() { --p.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };
  /// Note [Chains count as depth]: `a + b + c` is a tree as deep as the
  /// chain is long, and every later phase walks it recursively (a chain of
  /// 100,000 terms overflowed the checker's stack). Each operator of a
  /// chain (binary operators, calls, fields, indexing) adds a level to the
  /// parser's depth for the rest of the chain, so kMaxDepth bounds the
  /// whole tree's depth.
  struct ChainGuard {
    Parser& p;
    int added = 0;
    explicit ChainGuard(Parser& parser) : p(parser) {}
    void step();  // one more operator: E0101 past kMaxDepth
    ~ChainGuard() { p.depth_ -= added; }
    ChainGuard(const ChainGuard&) = delete;
    ChainGuard& operator=(const ChainGuard&) = delete;
  };

  // ------------------------------------------------------------ types
  ast::TypeExpr parse_type();
  /// `[` axes `]` [elem]; the cursor is at `[`.
  ast::TypeExpr parse_tensor_type();
  void parse_model_dtype(ast::TypeExpr& t);
  ast::AxisExpr parse_axis(bool allow_star, bool allow_split);
  std::vector<std::string> parse_split(Span& end);
  bool can_take_elem() const;

  // ------------------------------------------------------------ expressions
  ast::ExprPtr parse_expr();
  /// `e` or `e1, e2, ...` (a Tuple) — return values, let values.
  ast::ExprPtr parse_expr_list();
  ast::ExprPtr parse_or();
  ast::ExprPtr parse_and();
  ast::ExprPtr parse_not();
  ast::ExprPtr parse_comparison();
  ast::ExprPtr parse_additive();
  ast::ExprPtr parse_multiplicative();
  ast::ExprPtr parse_unary();
  ast::ExprPtr parse_power();
  ast::ExprPtr parse_postfix();
  ast::ExprPtr parse_primary();
  ast::ExprPtr parse_bracket();
  ast::ExprPtr parse_paren();
  ast::ExprPtr parse_fstring();
  void parse_call_args(ast::Expr& call);
  void parse_pattern_call(ast::Expr& call, size_t close);
  ast::Arg parse_arg();
  ast::ExprPtr parse_axis_arg();
  ast::AxisExpr parse_axis_ref_item();
  ast::PatternItem parse_pattern_item();
  void parse_index(ast::Expr& e);
  static bool is_axis_keyword(const std::string& k);
  /// Index of the `)`/`]`/`}` closing the bracket at [open], or npos.
  size_t matching_close(size_t open) const;
  bool can_start_expr() const;

  // ------------------------------------------------------------ statements
  ast::StmtPtr parse_stmt();
  ast::Block parse_block();
  ast::Block parse_indented_block();
  void end_stmt(const char* what);
  ast::StmtPtr parse_if();
  ast::StmtPtr parse_for();
  ast::StmtPtr parse_while();
  ast::StmtPtr parse_let();
  ast::StmtPtr parse_simple();

  // ------------------------------------------------------------ declarations
  bool at_decl_start(bool repl) const;
  void parse_decl(ast::Module& m);
  void parse_devices(ast::Module& m);
  void parse_mesh(ast::Module& m);
  void parse_dim(ast::Module& m);
  void parse_data(ast::Module& m);
  void parse_model(ast::Module& m);
  void parse_fn(ast::Module& m);
  void parse_import(ast::Module& m);
  ast::Param parse_param();
  ast::DataField parse_data_field();
  ast::ModelField parse_model_field();

  // ------------------------------------------------------------ helpers
  static ast::ExprPtr make(ast::Expr::Kind k, Span s);
  Span cover_from(Span start) const { return Span::cover(start, last_span_); }
  uint32_t file() const { return file_; }
  diag::Diagnostics& diags() { return *diags_; }
  int depth() const { return depth_; }

  /// Set while trying `[...]` in value position as a type literal: a `(`
  /// glued to the token before it is a call, not a group.
  bool in_value_type_ = false;

 private:
  const lex::Tokens& toks_;
  Token eof_;
  size_t pos_ = 0;
  uint32_t file_;
  diag::Diagnostics* diags_;
  int depth_ = 0;
  Span last_span_;
  /// [begin, end] byte ranges after a lexer error where errors are quiet.
  std::vector<std::pair<uint32_t, uint32_t>> quiet_;

  friend struct Speculation;
};

/// Runs a parse attempt with errors silenced; restores the cursor on
/// failure (or when asked).
struct Speculation {
  Parser& p;
  size_t pos;
  Span last;
  diag::Diagnostics* diags;
  diag::Diagnostics scratch;
  explicit Speculation(Parser& parser)
      : p(parser),
        pos(parser.pos_),
        last(parser.last_span_),
        diags(parser.diags_) {
    p.diags_ = &scratch;
  }
  void rewind() {
    p.pos_ = pos;
    p.last_span_ = last;
  }
  ~Speculation() { p.diags_ = diags; }
};

/// Parses an integer literal's text; nullopt when it does not fit int64.
std::optional<int64_t> parse_int_text(const std::string& text);

}  // namespace ss::parse::detail
