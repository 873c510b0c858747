// `ss fmt`'s layout (interp/fmt/), each case against a layout written out
// by hand: the spacing of Note [Spaces between tokens], the regions of Note
// [Words side by side], the breaking of Note [Breaking a long line] and
// the comments and paragraphs of Note [One layout]. Every expected text is
// also formatted again and must come back unchanged (idempotence).
#include <catch2/catch.hpp>
#include <string>

#include "interp/fmt/edits.h"
#include "interp/fmt/format.h"
#include "interp/fmt/lexical_classes.h"

namespace {

struct Result {
  std::optional<std::string> text;
  std::string errors;
};

Result format(const std::string& text, int width = 88) {
  ss::diag::SourceMap sm;
  ss::diag::Diagnostics diags;
  ss::fmt::Options o;
  o.width = width;
  std::string refused;
  Result r;
  r.text = ss::fmt::format_text("t.ss", text, sm, diags, o, &refused);
  r.errors = render_terminal(diags, sm) + refused;
  return r;
}

// [in] formats to [want], and [want] to itself.
void check_layout(const std::string& in,
                  const std::string& want,
                  int width = 88) {
  Result r = format(in, width);
  INFO(r.errors);
  REQUIRE(r.text);
  CHECK(*r.text == want);
  Result again = format(want, width);
  REQUIRE(again.text);
  CHECK(*again.text == want);
}

}  // namespace

TEST_CASE("fmt: spaces around operators, after commas, none inside brackets",
          "[fmt]") {
  check_layout(
      "fn f(x:[b D],  mut m : Mlp ,eps:float=1e-5)->[b C]:\n"
      "  let y=relu( x@m.w1+m.b )*2**-1\n"
      "  let z = -y [0 , :]+y[1:3,0] - sum(y,over = C,keepdim=true)\n"
      "  y += z%2//3\n"
      "  return  not (y==z) and y!=z or y<=z\n",
      "fn f(x: [b D], mut m: Mlp, eps: float = 1e-5) -> [b C]:\n"
      "    let y = relu(x @ m.w1 + m.b) * 2 ** -1\n"
      "    let z = -y[0, :] + y[1:3, 0] - sum(y, over=C, keepdim=true)\n"
      "    y += z % 2 // 3\n"
      "    return not (y == z) and y != z or y <= z\n");
}

TEST_CASE("fmt: words side by side keep their separating spaces", "[fmt]") {
  check_layout(
      "devices cuda[0 1 2]\n"
      "    shard  params\n"
      "mesh x=4  y=2\n"
      "dim D=8\n"
      "data Item:\n"
      "    img:[D]  in 0.0 ..= 1.0\n"
      "    tokens : [n]   i64 pad = 0\n"
      "    label: i64 in 0 .. D\n"
      "model Dense[I  O] T:\n"
      "    w: [I O] T = normal(std=1/sqrt(I))\n"
      "    blocks:[3] Dense[I O]\n"
      "spmd(check = false) fn g(a: [m / x  k/y], n: Net{w/x,b/x}) -> [m/(x "
      "y)]:\n"
      "    let q, k = split(a, b n (2 H Dh)->b H n Dh)\n"
      "    let s = einsum(q,k,b H n Dh,b H t Dh->b H n t)\n"
      "    let z = zeros([b  D]  f64) + sum(s, over=(H  Dh)) + sum(s, "
      "over=-1)\n"
      "    return psum(a @ b, (x, y))\n",
      "devices cuda[0 1 2]\n"
      "    shard params\n"
      "\n"
      "mesh x=4 y=2\n"
      "dim D = 8\n"
      "\n"
      "data Item:\n"
      "    img: [D] in 0.0..=1.0\n"
      "    tokens: [n] i64 pad=0\n"
      "    label: i64 in 0..D\n"
      "\n"
      "model Dense[I O] T:\n"
      "    w: [I O] T = normal(std=1 / sqrt(I))\n"
      "    blocks: [3] Dense[I O]\n"
      "\n"
      "spmd(check=false) fn g(a: [m/x k/y], n: Net{w/x, b/x}) -> [m/(x y)]:\n"
      "    let q, k = split(a, b n (2 H Dh) -> b H n Dh)\n"
      "    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t)\n"
      "    let z = zeros([b D] f64) + sum(s, over=(H Dh)) + sum(s, over=-1)\n"
      "    return psum(a @ b, (x, y))\n");
}

TEST_CASE("fmt: a long call breaks after commas, under its first argument",
          "[fmt]") {
  // The README's evaluate, written on one line.
  check_layout(
      "fn evaluate(m: Mlp, batch: [b] Digit) -> Logs:\n"
      "    return logs(loss=cross_entropy(logits, batch.label), "
      "acc=mean(argmax(logits, over=C) == batch.label))\n",
      "fn evaluate(m: Mlp, batch: [b] Digit) -> Logs:\n"
      "    return logs(loss=cross_entropy(logits, batch.label),\n"
      "                acc=mean(argmax(logits, over=C) == batch.label))\n");
  // And the author's breaks are not kept where the line fits.
  check_layout(
      "fn f() -> int:\n"
      "    return g(1,\n"
      "             2)\n",
      "fn f() -> int:\n"
      "    return g(1, 2)\n");
  // A long signature breaks between parameters; what follows the last
  // one (`) -> Logs:`) stays with it.
  check_layout(
      "fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit, "
      "mode: Mode) -> Logs:\n"
      "    return logs(loss=1.0)\n",
      "fn train_step(mut m: Mlp, mut opt: AdamW[Mlp],\n"
      "              batch: [b] Digit, mode: Mode) -> Logs:\n"
      "    return logs(loss=1.0)\n",
      60);
  // The last bracket of a line breaks first (black's right-hand split).
  check_layout(
      "fn f(h: [b D]) -> [b D]:\n"
      "    return conv(h, m.dw, padding=1, groups=4) + conv(h, m.kd, "
      "padding=2, dilation=2)\n",
      "fn f(h: [b D]) -> [b D]:\n"
      "    return conv(h, m.dw, padding=1, groups=4) + conv(h, m.kd, "
      "padding=2,\n"
      "                                                     dilation=2)\n",
      76);
  // An argument too long for the rest of the line is broken inside.
  check_layout(
      "fn f() -> int:\n"
      "    return outer(1, inner(aaaaaaaa, bbbbbbbb, cccccccc, dddddddd))\n",
      "fn f() -> int:\n"
      "    return outer(1,\n"
      "                 inner(aaaaaaaa, bbbbbbbb,\n"
      "                       cccccccc, dddddddd))\n",
      45);
  // A line with no bracket to break is left long.
  check_layout(
      "fn f() -> int:\n"
      "    return aaaaaaaaaa + bbbbbbbbbb + cccccccccc + dddddddddd\n",
      "fn f() -> int:\n"
      "    return aaaaaaaaaa + bbbbbbbbbb + cccccccccc + dddddddddd\n",
      30);
}

TEST_CASE("fmt: every comment stays where it was written", "[fmt]") {
  check_layout(
      "# the header\n"
      "dim D = 4   # a trailing comment   \n"
      "fn f(a: int, b: int) -> int:\n"
      "    # first in the block\n"
      "    let y = g(a,  # after a\n"
      "        b,\n"
      "          # on its own line\n"
      "        1)\n"
      "    if y > 0:\n"
      "        return y\n"
      "    # back at the fn's level\n"
      "            # deeper, after the if's block\n"
      "    return 0\n"
      "# at the end\n",
      "# the header\n"
      "dim D = 4  # a trailing comment\n"
      "\n"
      "fn f(a: int, b: int) -> int:\n"
      "    # first in the block\n"
      "    let y = g(a,  # after a\n"
      "              b,\n"
      "              # on its own line\n"
      "              1)\n"
      "    if y > 0:\n"
      "        return y\n"
      "    # back at the fn's level\n"
      "        # deeper, after the if's block\n"
      "    return 0\n"
      "# at the end\n");
}

TEST_CASE(
    "fmt: paragraphs: one blank line, none opening a block, "
    "declarations with bodies set apart",
    "[fmt]") {
  check_layout(
      "\n\n"
      "dim D = 4\n"
      "dim H = 2\n"
      "\n\n\n"
      "dim C = 3\n"
      "# about f\n"
      "fn f() -> int:\n"
      "\n"
      "    let a = 1\n"
      "\n\n"
      "    return a\n"
      "fn g() -> int = 1\n"
      "fn h() -> int = 2\n",
      "dim D = 4\n"
      "dim H = 2\n"
      "\n"
      "dim C = 3\n"
      "\n"
      "# about f\n"
      "fn f() -> int:\n"
      "    let a = 1\n"
      "\n"
      "    return a\n"
      "\n"
      "fn g() -> int = 1\n"
      "fn h() -> int = 2\n");
}

TEST_CASE("fmt: the spelling of every token is kept", "[fmt]") {
  // Numbers, strings with escapes, f-strings with their specs and braces,
  // a backslash continuation joined, tabs and CRs between tokens.
  check_layout(
      "fn main():\n"
      "    let x = 1e-3 +\\\n"
      "        0.50\t*  .5\r\n"
      "    print(\"a\\n\\\"b\\\\\",f\"{x:.4f} {{lit}} {x  +1}\")\r\n",
      "fn main():\n"
      "    let x = 1e-3 + 0.50 * .5\n"
      "    print(\"a\\n\\\"b\\\\\", f\"{x:.4f} {{lit}} {x  +1}\")\n");
  // A byte order mark is dropped; an empty file stays empty.
  check_layout(
      "\xEF\xBB\xBF"
      "dim D = 4\n",
      "dim D = 4\n");
  check_layout("", "");
  check_layout("# only a comment", "# only a comment\n");
}

TEST_CASE("fmt: a file that does not parse is not formatted", "[fmt]") {
  Result r = format("dim = 4\n");
  CHECK_FALSE(r.text);
  CHECK(r.errors.find("error[E0101]") != std::string::npos);
  Result tab = format("fn f() -> int:\n\treturn 1\n");
  CHECK_FALSE(tab.text);
  CHECK(tab.errors.find("error[E0102]") != std::string::npos);
  // As an editor's edits (edits.h): none for a text being typed; the
  // lines that change for one that parses.
  CHECK(ss::fmt::formatting_edits("fn f(:\n", {}).empty());
  auto e = ss::fmt::formatting_edits("dim D=4\n", {});
  REQUIRE(e.size() == 1);
  CHECK(e[0].first == 0);
  CHECK(e[0].end == 1);
  CHECK(e[0].text == "dim D = 4\n");
}

TEST_CASE("fmt: the lexical classes the editors' grammars are tested against",
          "[fmt]") {
  // Declaration words only where the language makes them keywords
  // (language.md): at column 0, and `buffer` starting a model field.
  CHECK(ss::fmt::lexical_classes("data Digit:  # d\n"
                                 "    img: [D]\n"
                                 "model M:\n"
                                 "    buffer n: [D] = zeros()\n"
                                 "fn f() -> int:\n"
                                 "    let data = f\"{1.5:.2f}\"\n"
                                 "    buffer = 2\n") ==
        "1 1 4 declaration\n"
        "1 6 5 name\n"
        "1 14 3 comment\n"
        "2 5 3 name\n"
        "2 11 1 name\n"
        "3 1 5 declaration\n"
        "3 7 1 name\n"
        "4 5 6 declaration\n"
        "4 12 1 name\n"
        "4 16 1 name\n"
        "4 21 5 name\n"
        "5 1 2 keyword\n"
        "5 4 1 name\n"
        "5 11 3 name\n"
        "6 5 3 keyword\n"
        "6 9 4 name\n"
        "6 16 12 string\n"
        "7 5 6 name\n"
        "7 14 1 number\n");
}
