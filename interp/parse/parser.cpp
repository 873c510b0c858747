// The parser's entry points, token cursor, error reporting and recovery.

#include "interp/parse/parser.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "interp/parse/parser_impl.h"

namespace ss::parse {
namespace detail {

Parser::Parser(const lex::Tokens& tokens,
               uint32_t file,
               diag::Diagnostics& diags,
               int depth)
    : toks_(tokens), file_(file), diags_(&diags), depth_(depth) {
  eof_.kind = Tok::Eof;
  uint32_t end = 0;
  if (!toks_.empty()) end = toks_.back().span.end;
  eof_.span = {file, end, end};
  last_span_ = {file, 0, 0};
  if (!toks_.empty())
    last_span_ = {file, toks_[0].span.begin, toks_[0].span.begin};
  std::vector<uint32_t> newlines;
  for (const Token& t : toks_)
    if (t.kind == Tok::Newline) newlines.push_back(t.span.begin);
  for (const diag::Diagnostic& d : diags.list()) {
    if (d.span.file != file) continue;
    uint32_t from = d.span.begin;
    auto it = std::lower_bound(newlines.begin(), newlines.end(), from);
    quiet_.emplace_back(from, it == newlines.end() ? UINT32_MAX : *it);
  }
}

// ---------------------------------------------------------------- cursor

const Token& Parser::peek(size_t k) const {
  size_t i = pos_ + k;
  if (i < toks_.size()) return toks_[i];
  return eof_;
}

bool Parser::at_name(const char* word) const {
  return at(Tok::Name) && peek().text == word;
}

const Token& Parser::advance() {
  const Token& t = peek();
  if (pos_ < toks_.size() && t.kind != Tok::Eof) {
    ++pos_;
    if (t.kind != Tok::Newline && t.kind != Tok::Indent &&
        t.kind != Tok::Dedent)
      last_span_ = t.span;
  }
  return t;
}

bool Parser::accept(Tok t) {
  if (!at(t)) return false;
  advance();
  return true;
}

const Token& Parser::expect(Tok t, const std::string& what) {
  if (!at(t)) fail_expected(what);
  return advance();
}

// ---------------------------------------------------------------- errors

std::string Parser::describe(const Token& t) {
  switch (t.kind) {
    case Tok::Name:
      return "name '" + t.text + "'";
    case Tok::Int:
      return "integer " + t.text;
    case Tok::Float:
      return "float " + t.text;
    case Tok::String:
      return "a string";
    case Tok::FString:
      return "an f-string";
    case Tok::Newline:
      return "end of line";
    case Tok::Eof:
      return "end of file";
    case Tok::Indent:
      return "an indent";
    case Tok::Dedent:
      return "a dedent";
    default:
      return std::string("'") + lex::tok_spelling(t.kind) + "'";
  }
}

void Parser::report(Code code,
                    Span span,
                    std::string message,
                    std::string label) {
  for (const auto& [from, to] : quiet_)
    if (span.begin >= from && span.begin <= to) return;
  diags_->error(code, span, std::move(message), std::move(label));
}

void Parser::fail(Code code,
                  Span span,
                  std::string message,
                  std::string label) {
  report(code, span, std::move(message), std::move(label));
  throw ParseError{};
}

void Parser::fail_expected(const std::string& what) {
  const Token& t = peek();
  Code code = Code::E0101;
  if (t.kind == Tok::Indent) {
    fail(Code::E0102, t.span, "unexpected indent", "expected " + what);
  }
  fail(code,
       t.span,
       "expected " + what + ", found " + describe(t),
       "expected " + what);
}

// ---------------------------------------------------------------- recovery

void Parser::sync_line() {
  while (!at(Tok::Eof)) {
    if (at(Tok::Newline)) {
      advance();
      break;
    }
    if (at(Tok::Dedent) || at(Tok::Indent)) break;
    advance();
  }
  if (at(Tok::Indent)) skip_block();
}

void Parser::skip_block() {
  if (!at(Tok::Indent)) return;
  int level = 0;
  while (!at(Tok::Eof)) {
    Tok k = kind();
    advance();
    if (k == Tok::Indent) ++level;
    if (k == Tok::Dedent && --level <= 0) return;
  }
}

bool Parser::at_line_start_col0() const {
  const Token& t = peek();
  return t.line_start && t.column == 0 && t.kind != Tok::Newline &&
         t.kind != Tok::Indent && t.kind != Tok::Dedent;
}

void Parser::sync_decl() {
  if (!at(Tok::Eof)) advance();
  while (!at(Tok::Eof) && !at_line_start_col0()) advance();
}

Parser::DepthGuard::DepthGuard(Parser& parser) : p(parser) {
  if (++p.depth_ > kMaxDepth) {
    // The destructor will not run when the constructor throws.
    --p.depth_;
    p.fail(Code::E0101,
           p.here(),
           "expression nested too deeply",
           "more than 200 levels of nesting");
  }
}

void Parser::ChainGuard::step() {
  if (p.depth_ + 1 > kMaxDepth)
    p.fail(Code::E0101,
           p.here(),
           "expression nested too deeply",
           "more than " + std::to_string(kMaxDepth) +
               " levels of nesting and chained operators: split it with "
               "`let`");
  ++p.depth_;
  ++added;
}

ast::ExprPtr Parser::make(ast::Expr::Kind k, Span s) {
  auto e = std::make_unique<ast::Expr>();
  e->kind = k;
  e->span = s;
  return e;
}

std::optional<int64_t> parse_int_text(const std::string& text) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

// ---------------------------------------------------------------- module

void Parser::parse_module(ast::Module& m, ast::Block* repl_stmts) {
  m.file = file_;
  while (!at(Tok::Eof)) {
    size_t before = pos_;
    if (at(Tok::Newline) || at(Tok::Dedent)) {
      advance();
      continue;
    }
    if (at(Tok::Indent)) {
      report(Code::E0102,
             here(),
             "unexpected indent",
             "this line is indented but no block is open");
      skip_block();
      continue;
    }
    bool decl = at_decl_start(repl_stmts != nullptr);
    try {
      if (decl) {
        parse_decl(m);
      } else if (repl_stmts) {
        repl_stmts->push_back(parse_stmt());
      } else {
        fail(Code::E0101,
             here(),
             "expected a declaration (fn, model, data, dim, devices, mesh, "
             "import), found " +
                 describe(peek()),
             "not a declaration");
      }
    } catch (const ParseError&) {
      if (decl || !repl_stmts)
        sync_decl();
      else
        sync_line();
    }
    if (pos_ == before) advance();  // always make progress
  }
}

}  // namespace detail

ast::Module parse(const lex::Tokens& tokens,
                  uint32_t file,
                  diag::Diagnostics& diags) {
  ast::Module m;
  m.file = file;
  try {
    detail::Parser p(tokens, file, diags);
    p.parse_module(m, nullptr);
  } catch (const detail::ParseError&) {
    // Every ParseError is caught inside; this is a last line of defence.
  }
  return m;
}

ReplInput parse_repl(const lex::Tokens& tokens,
                     uint32_t file,
                     diag::Diagnostics& diags) {
  ReplInput in;
  in.decls.file = file;
  try {
    detail::Parser p(tokens, file, diags);
    p.parse_module(in.decls, &in.stmts);
  } catch (const detail::ParseError&) {
  }
  return in;
}

}  // namespace ss::parse
