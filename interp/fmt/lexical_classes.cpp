// The lexical class of every token and comment of a file (format.h): what
// an editor's grammar must colour, as `ss`'s own lexer reads the file. The
// grammars in editors/ (TextMate, Vim) are tested against it
// (editors/tests/): a grammar's regular expressions are a second reading of
// the language, and this is the first.
#include "interp/fmt/lexical_classes.h"

#include <algorithm>

#include "interp/lex/lexer.h"

namespace ss::fmt {

bool declaration_word(const lex::Tokens& toks, size_t i) {
  static const char* kWords[] = {
      "devices", "mesh", "dim", "data", "model", "spmd", "extern"};
  const lex::Token& t = toks[i];
  if (t.line_start && t.text == "buffer")
    return i + 2 < toks.size() && toks[i + 1].kind == lex::Tok::Name &&
           toks[i + 2].kind == lex::Tok::Colon;
  if (t.column != 0 || !t.line_start) return false;
  for (const char* w : kWords)
    if (t.text == w) return true;
  return false;
}

std::string lexical_classes(const std::string& text) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  const uint32_t f = sm.add("t.ss", text);
  std::vector<diag::Span> comments;
  const lex::Tokens toks = lex::lex(sm, f, diags, comments);
  std::vector<std::pair<uint32_t, std::string>> out;  // (offset, line)
  auto add = [&](diag::Span s, const char* cls) {
    diag::LineCol lc = sm.line_col(f, s.begin);
    out.emplace_back(s.begin,
                     std::to_string(lc.line) + " " + std::to_string(lc.column) +
                         " " + std::to_string(s.end - s.begin) + " " + cls);
  };
  for (size_t i = 0; i < toks.size(); ++i) {
    const lex::Token& t = toks[i];
    using lex::Tok;
    if (t.span.end <= t.span.begin) continue;
    if (t.kind >= Tok::KwFn && t.kind <= Tok::KwImport)
      add(t.span, "keyword");
    else if (t.kind == Tok::Int || t.kind == Tok::Float)
      add(t.span, "number");
    else if (t.kind == Tok::String || t.kind == Tok::FString)
      add(t.span, "string");
    else if (t.kind == Tok::Name)
      add(t.span, declaration_word(toks, i) ? "declaration" : "name");
  }
  for (diag::Span c : comments) add(c, "comment");
  std::sort(out.begin(), out.end());
  std::string s;
  for (const auto& [at, line] : out) s += line + "\n";
  return s;
}

}  // namespace ss::fmt
