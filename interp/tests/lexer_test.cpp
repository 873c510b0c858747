#include "interp/lex/lexer.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using ss::lex::Tok;

namespace {

struct Lexed {
  ss::diag::SourceMap sm;
  ss::diag::Diagnostics diags;
  ss::lex::Tokens toks;
};

Lexed lex_text(const std::string& text) {
  Lexed l;
  uint32_t f = l.sm.add("test.ss", text);
  l.toks = ss::lex::lex(l.sm, f, l.diags);
  return l;
}

std::vector<Tok> kinds(const ss::lex::Tokens& t) {
  std::vector<Tok> k;
  for (const auto& x : t) k.push_back(x.kind);
  return k;
}

}  // namespace

TEST_CASE("lexer: indentation gives Indent/Newline/Dedent", "[lexer]") {
  auto l = lex_text("fn f():\n    return 1\n");
  CHECK(l.diags.empty());
  CHECK(kinds(l.toks) == std::vector<Tok>{Tok::KwFn,
                                          Tok::Name,
                                          Tok::LParen,
                                          Tok::RParen,
                                          Tok::Colon,
                                          Tok::Newline,
                                          Tok::Indent,
                                          Tok::KwReturn,
                                          Tok::Int,
                                          Tok::Newline,
                                          Tok::Dedent,
                                          Tok::Eof});
  CHECK(l.toks[0].column == 0);
  CHECK(l.toks[0].line_start);
  CHECK(l.toks[7].column == 4);
  CHECK(l.toks[7].line_start);
}

TEST_CASE("lexer: no Newline inside brackets", "[lexer]") {
  auto l = lex_text("f(a,\n  b)\n");
  CHECK(l.diags.empty());
  CHECK(kinds(l.toks) == std::vector<Tok>{Tok::Name,
                                          Tok::LParen,
                                          Tok::Name,
                                          Tok::Comma,
                                          Tok::Name,
                                          Tok::RParen,
                                          Tok::Newline,
                                          Tok::Eof});
}

TEST_CASE("lexer: numbers, ranges and inf/nan", "[lexer]") {
  auto l = lex_text("0.0..=1.0 0..C 1e-3 inf nan 1_000\n");
  CHECK(l.diags.empty());
  CHECK(kinds(l.toks) == std::vector<Tok>{Tok::Float,
                                          Tok::DotDotEq,
                                          Tok::Float,
                                          Tok::Int,
                                          Tok::DotDot,
                                          Tok::Name,
                                          Tok::Float,
                                          Tok::Float,
                                          Tok::Float,
                                          Tok::Int,
                                          Tok::Newline,
                                          Tok::Eof});
  CHECK(l.toks[0].text == "0.0");
  CHECK(l.toks[6].text == "1e-3");
  CHECK(l.toks[9].text == "1000");
}

TEST_CASE("lexer: punctuation is matched longest first", "[lexer]") {
  auto l = lex_text("a ** b // c -> d += e == f != g <= h >= i ..= j\n");
  CHECK(l.diags.empty());
  std::vector<Tok> want{Tok::Name, Tok::StarStar, Tok::Name, Tok::SlashSlash,
                        Tok::Name, Tok::Arrow,    Tok::Name, Tok::PlusAssign,
                        Tok::Name, Tok::EqEq,     Tok::Name, Tok::NotEq,
                        Tok::Name, Tok::LessEq,   Tok::Name, Tok::GreaterEq,
                        Tok::Name, Tok::DotDotEq, Tok::Name, Tok::Newline,
                        Tok::Eof};
  CHECK(kinds(l.toks) == want);
}

TEST_CASE("lexer: keywords vs contextual words", "[lexer]") {
  auto l = lex_text("let data = model\n");
  CHECK(kinds(l.toks)[0] == Tok::KwLet);
  CHECK(l.toks[1].kind == Tok::Name);
  CHECK(l.toks[1].text == "data");
  CHECK(l.toks[3].kind == Tok::Name);
}

TEST_CASE("lexer: strings and f-strings", "[lexer]") {
  auto l = lex_text("\"a\\nb\" f\"step {i} loss {l:.4f}\"\n");
  CHECK(l.diags.empty());
  REQUIRE(l.toks.size() >= 2);
  CHECK(l.toks[0].kind == Tok::String);
  CHECK(l.toks[0].text == "a\nb");
  CHECK(l.toks[1].kind == Tok::FString);
  CHECK(l.toks[1].text == "step {i} loss {l:.4f}");
  CHECK(l.toks[1].span.begin == 7);
}

TEST_CASE("lexer: comments and blank lines", "[lexer]") {
  auto l =
      lex_text("# top\n\ndim D = 3   # trailing\n\n   # indented comment\n");
  CHECK(l.diags.empty());
  CHECK(
      kinds(l.toks) ==
      std::vector<Tok>{
          Tok::Name, Tok::Name, Tok::Assign, Tok::Int, Tok::Newline, Tok::Eof});
}

TEST_CASE("lexer: errors", "[lexer]") {
  SECTION("tab in indentation is E0102") {
    auto l = lex_text("fn f():\n\treturn 1\n");
    REQUIRE(!l.diags.empty());
    CHECK(l.diags.list()[0].code == ss::diag::Code::E0102);
  }
  SECTION("inconsistent dedent is E0102") {
    auto l = lex_text("fn f():\n    if a:\n        b\n  c\n");
    REQUIRE(l.diags.size() == 1);
    CHECK(l.diags.list()[0].code == ss::diag::Code::E0102);
  }
  SECTION("unterminated string is E0103") {
    auto l = lex_text("let s = \"abc\n");
    REQUIRE(l.diags.size() == 1);
    CHECK(l.diags.list()[0].code == ss::diag::Code::E0103);
    CHECK(l.toks.back().kind == Tok::Eof);
  }
  SECTION("a backslash before the newline does not continue a string") {
    auto l = lex_text("let s = \"abc\\\nlet t = 1\n");
    REQUIRE(!l.diags.empty());
    CHECK(l.diags.list()[0].code == ss::diag::Code::E0103);
    // The second line still lexes as its own line.
    size_t lets = 0;
    for (const auto& t : l.toks) lets += t.kind == Tok::KwLet;
    CHECK(lets == 2);
  }
  SECTION("unclosed bracket is E0103") {
    auto l = lex_text("f(a, b\n");
    REQUIRE(l.diags.size() == 1);
    CHECK(l.diags.list()[0].code == ss::diag::Code::E0103);
  }
  SECTION("unknown character is E0101") {
    auto l = lex_text("a $ b\n");
    REQUIRE(l.diags.size() == 1);
    CHECK(l.diags.list()[0].code == ss::diag::Code::E0101);
  }
}

TEST_CASE("lexer: fragments keep the file's offsets", "[lexer]") {
  ss::diag::Diagnostics d;
  auto toks = ss::lex::lex_fragment(" l + 1", 0, 100, d);
  CHECK(d.empty());
  REQUIRE(toks.size() == 4);
  CHECK(toks[0].kind == Tok::Name);
  CHECK(toks[0].span.begin == 101);
  CHECK(toks[2].kind == Tok::Int);
  CHECK(toks[2].span.begin == 105);
  CHECK(toks[3].kind == Tok::Eof);
}
