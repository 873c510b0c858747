// Note [Source origins]: spans in a generated text (the repl's wrapped
// input) print at the line and column the user typed, through the one
// printer. Expected texts are written by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "diag/diagnostic.h"

using namespace ss::diag;

namespace {

// What the repl builds for `x @ x` typed as the transcript's line 2 with
// two spaces in front: a header line, then the input written 4 columns in
// (the two typed spaces dropped), then a declaration from a.ss's line 3.
struct Wrapped {
  SourceMap sm;
  uint32_t gen = 0;
  Wrapped() {
    uint32_t typed = sm.add("<repl>", "let x = 1\n  x @ x\n");
    uint32_t file = sm.add("a.ss", "dim D = 3\n\nfn f() -> f32 = y\n");
    gen = sm.add("<gen>", "fn h():\n    x @ x\n\nfn f() -> f32 = y\n");
    sm.set_origin(gen, 2, {typed, 2, 2});
    sm.set_origin(gen, 4, {file, 3, 0});
  }
};

}  // namespace

TEST_CASE("a span in a generated line prints where it was typed",
          "[diag][printer][origin]") {
  Wrapped w;
  // "fn h():\n" is 8 bytes; `x @ x` starts 4 columns into line 2.
  Span s{w.gen, 12, 17};
  CHECK(w.sm.origin(s) == Span{0, 12, 17});  // "let x = 1\n  " is 12 bytes
  CHECK(w.sm.location(s) == "<repl>:2:3");
  CHECK(w.sm.position(s) == "2:3");
  Diagnostic d;
  d.code = Code::E0302;
  d.span = s;
  d.message = "matmul contracts 3 with 2";
  d.note("see here", Span{w.gen, 35, 36});  // `y` of line 4
  CHECK(render_terminal(d, w.sm) ==
        "<repl>:2:3: error[E0302]: matmul contracts 3 with 2\n"
        "  |\n"
        "2 |   x @ x\n"
        "  |   ^^^^^\n"
        "  = note: see here (at a.ss:3:17)\n");
  auto j = nlohmann::json::parse(render_json(d, w.sm));
  CHECK(j["file"] == "<repl>");
  CHECK(j["line"] == 2);
  CHECK(j["column"] == 3);
  CHECK(j["end"]["column"] == 8);
  CHECK(j["notes"][0]["file"] == "a.ss");
}

TEST_CASE("spans in lines with no origin stay, a span leaving its line stops",
          "[diag][printer][origin]") {
  Wrapped w;
  // The header has no origin: the span is the generated one.
  Span header{w.gen, 3, 4};
  CHECK(w.sm.origin(header) == header);
  CHECK(w.sm.location(header) == "<gen>:1:4");
  // From `x` of line 2 into the blank generated line 3: cut at the end of
  // the typed line.
  Span across{w.gen, 12, 19};
  CHECK(w.sm.origin(across) == Span{0, 12, 17});
  // A file without origins is its own origin.
  Span plain{1, 0, 3};
  CHECK(w.sm.origin(plain) == plain);
  CHECK(w.sm.location(plain) == "a.ss:1:1");
}
