// The parser's errors and recovery, repl input and odd inputs.

#include <catch2/catch.hpp>

#include "interp/tests/parser_test_util.h"

using namespace ss;
using ast::Expr;
using ast::Stmt;
using diag::Code;

using namespace parser_test;

// ---------------------------------------------------------------- errors

TEST_CASE("parser: errors", "[parser]") {
  SECTION("an unclosed bracket is one E0103, with no follow-on errors") {
    auto p = parse_text(
        "dim D = 3\n\nfn f(x: [D]) -> [D]:\n    let h = g(x\n"
        "    return h\n\nfn k() = 1\n");
    INFO(p->dump());
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0103);
    CHECK(p->line() == 4);
  }
  SECTION("an unterminated string in a call is one E0103") {
    auto p = parse_text(
        "fn main():\n    let out = csv(\"train.csv)\n    print(out)\n"
        "fn k() = 1\n");
    INFO(p->dump());
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0103);
    CHECK(p->line() == 2);
    REQUIRE(p->m.fns.size() == 2);
    CHECK(p->m.fns[0].body.size() == 1);  // print(out)
  }
  SECTION("a lexer error quiets the parser on the rest of its line only") {
    auto p = parse_text("fn f():\n    let a = x $ y\n    let b = 1 1\n");
    INFO(p->dump());
    REQUIRE(p->diags.size() == 2);
    CHECK(p->line(0) == 2);
    CHECK(p->line(1) == 3);
  }
  SECTION("E0101 missing ')' after arguments") {
    auto p = parse_text("fn f():\n    return g(x y)\n");
    REQUIRE(p->diags.size() == 1);
    const auto& d = p->diags.list()[0];
    CHECK(d.code == Code::E0101);
    CHECK(d.message == "expected ')' after arguments, found name 'y'");
    CHECK(p->line() == 2);
  }
  SECTION("E0101 not a declaration") {
    auto p = parse_text("dim D = 3\nx = 4\n");
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0101);
    CHECK(p->diags.list()[0].message ==
          "expected a declaration (fn, model, data, dim, devices, mesh, "
          "import), found name 'x'");
    CHECK(p->line() == 2);
    CHECK(p->m.dims.size() == 1);
  }
  SECTION("E0102 unexpected indent") {
    auto p =
        parse_text("fn f():\n    let a = 1\n        let b = 2\n    return a\n");
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0102);
    CHECK(p->diags.list()[0].message == "unexpected indent");
    CHECK(p->line() == 3);
    CHECK(p->m.fns[0].body.size() == 2);
  }
  SECTION("E0102 missing block") {
    auto p = parse_text("fn f():\n    if a:\n    return 1\n");
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0102);
    CHECK(p->diags.list()[0].message == "expected an indented block after ':'");
    CHECK(p->line() == 3);
  }
  SECTION("E0103 from the lexer") {
    auto p = parse_text("fn f():\n    print(\"abc)\n");
    REQUIRE(!p->diags.empty());
    CHECK(p->diags.list()[0].code == Code::E0103);
    CHECK(p->line() == 2);
  }
  SECTION("pattern errors") {
    auto p = parse_text(
        "fn f():\n"
        "    let a = rearrange(x, y, b n -> n b)\n"
        "    let c = einsum(a, b -> c, d)\n"
        "    let e = rearrange(x, a -> b -> c)\n");
    REQUIRE(p->diags.size() == 3);
    CHECK(p->line(0) == 2);
    CHECK(p->line(1) == 3);
    CHECK(p->diags.list()[1].message ==
          "a pattern's `->` must be in its last part");
    CHECK(p->line(2) == 4);
  }
  SECTION("nesting too deep") {
    std::string deep = "fn f():\n    return " + std::string(500, '(') + "x" +
                       std::string(500, ')') + "\n";
    auto p = parse_text(deep);
    REQUIRE(!p->diags.empty());
    CHECK(p->diags.list()[0].message == "expression nested too deeply");
    std::string minus = "fn f():\n    return " + std::string(1000, '-') + "x\n";
    auto q = parse_text(minus);
    REQUIRE(q->diags.size() == 1);
  }
  SECTION("cannot assign") {
    auto p = parse_text("fn f():\n    f(x) = 3\n");
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].message == "cannot assign to this expression");
  }
}

TEST_CASE("parser: recovery reports every error", "[parser]") {
  auto p = parse_text(
      "dim D = 3\n"
      "fn f(x: [D]) -> [D]:\n"
      "    let a = x +\n"
      "    let b = a a\n"
      "    return b\n"
      "model M:\n"
      "    w: [D] = * 2\n"
      "    v: [D] = zeros()\n"
      "fn g(: int):\n"
      "    return 1\n"
      "fn h() -> [D]:\n"
      "    return zeros()\n");
  INFO(p->dump());
  REQUIRE(p->diags.size() == 4);
  CHECK(p->line(0) == 3);
  CHECK(p->line(1) == 4);
  CHECK(p->line(2) == 7);
  CHECK(p->line(3) == 9);
  REQUIRE(p->m.fns.size() == 2);
  CHECK(p->m.fns[0].body.size() == 1);  // return b
  CHECK(p->m.fns[1].name == "h");
  REQUIRE(p->m.models.size() == 1);
  CHECK(p->m.models[0].fields.size() == 1);
}

TEST_CASE("parser: two errors in one file", "[parser]") {
  auto p = parse_text("fn f():\n    let = 1\nfn g():\n    return (1\n");
  REQUIRE(p->diags.size() >= 2);
}

TEST_CASE("parser: repl input", "[parser]") {
  auto p = parse_text(
      "dim D = 4\n"
      "let data = data.take(10)\n"
      "data.take(3)\n"
      "fn f(x: [D]) -> [D] = x\n"
      "for i in range(3):\n"
      "    print(i)\n"
      "x += 1\n",
      /*repl=*/true);
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  CHECK(p->repl.decls.dims.size() == 1);
  CHECK(p->repl.decls.fns.size() == 1);
  REQUIRE(p->repl.stmts.size() == 4);
  CHECK(p->repl.stmts[0]->kind == Stmt::Kind::Let);
  CHECK(p->repl.stmts[1]->kind == Stmt::Kind::Expr);
  CHECK(p->repl.stmts[2]->kind == Stmt::Kind::For);
  CHECK(p->repl.stmts[3]->kind == Stmt::Kind::AugAssign);
}

TEST_CASE("parser: empty and odd inputs", "[parser]") {
  CHECK(parse_text("")->diags.empty());
  CHECK(parse_text("\n\n# only a comment\n")->diags.empty());
  diag::Diagnostics d;
  lex::Tokens none;
  auto m = parse::parse(none, 0, d);
  CHECK(d.empty());
  CHECK(m.fns.empty());
  CHECK(!parse_text("fn")->diags.empty());
  CHECK(!parse_text("model")->diags.empty());
  CHECK(!parse_text("    x")->diags.empty());
}
