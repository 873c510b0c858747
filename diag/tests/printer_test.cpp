// The one printer (diag/render.cpp, render_json.cpp): static errors,
// runtime errors and WorkerErrors in errors.md's format, against text
// written by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "diag/diagnostic.h"

using namespace ss::diag;

namespace {

// A file with the error on line 12: a gutter of three columns, as in
// errors.md's example.
SourceMap twelve_lines(uint32_t& at) {
  SourceMap sm;
  std::string text;
  for (int i = 1; i <= 11; ++i) text += "# line " + std::to_string(i) + "\n";
  at = static_cast<uint32_t>(text.size()) + 4;
  text += "    return relu(x @ m.w2) @ m.w2\n";
  sm.add("train.ss", text);
  return sm;
}

}  // namespace

TEST_CASE("a static error prints as errors.md shows it", "[diag][printer]") {
  uint32_t at = 0;
  SourceMap sm = twelve_lines(at);
  Diagnostic d;
  d.code = Code::E0302;
  d.span = {0, at + 12, at + 20};
  d.message = "matmul contracts D (784) with Hd (256)";
  d.label = "x: [b D], m.w2: [Hd C]";
  d.help("did you mean m.w1, which is [D Hd]?");
  CHECK(render_terminal(d, sm) ==
        "train.ss:12:17: error[E0302]: matmul contracts D (784) with Hd (256)\n"
        "   |\n"
        "12 |     return relu(x @ m.w2) @ m.w2\n"
        "   |                 ^^^^^^^^ x: [b D], m.w2: [Hd C]\n"
        "   = help: did you mean m.w1, which is [D Hd]?\n");
}

TEST_CASE("a runtime error prints the same way, with its .ss stack",
          "[diag][printer]") {
  uint32_t at = 0;
  SourceMap sm = twelve_lines(at);
  Diagnostic d;
  d.kind = "ShapeError";
  d.span = {0, at + 12, at + 20};
  d.message = "take: index 7 is out of range";
  d.note("the index is 0-based");
  d.stack = {{"main", {1, 0, 0}},  // the entry: called by `ss run`
             {"f", {0, at, at + 1}},
             {"f", {0, at, at + 1}},
             {"f", {0, at, at + 1}}};
  CHECK(render_terminal(d, sm) ==
        "train.ss:12:17: ShapeError: take: index 7 is out of range\n"
        "   |\n"
        "12 |     return relu(x @ m.w2) @ m.w2\n"
        "   |                 ^^^^^^^^\n"
        "   = note: the index is 0-based\n"
        "   = .ss stack (most recent call last):\n"
        "       main\n"
        "       f, called at train.ss:12:5\n"
        "       [the line above repeated 2 more times]\n");
}

TEST_CASE("an error with no .ss location prints its kind alone",
          "[diag][printer]") {
  SourceMap sm;
  Diagnostic d;
  d.kind = "WorkerError";
  d.message = "worker 1 exited with signal 9 before it connected";
  d.located = false;
  CHECK(render_terminal(d, sm) ==
        "error: WorkerError: worker 1 exited with signal 9 before it "
        "connected\n");
}

TEST_CASE("the JSON printer carries a runtime error's kind and stack",
          "[diag][printer]") {
  uint32_t at = 0;
  SourceMap sm = twelve_lines(at);
  Diagnostic d;
  d.kind = "ValueError";
  d.span = {0, at, at + 6};
  d.message = "m";
  d.stack = {{"main", {1, 0, 0}}, {"g", {0, at, at + 1}}};
  auto j = nlohmann::json::parse(render_json(d, sm));
  CHECK(j["kind"] == "ValueError");
  CHECK(!j.contains("code"));
  CHECK(j["line"] == 12);
  CHECK(j["column"] == 5);
  CHECK(j["end"]["column"] == 11);
  REQUIRE(j["stack"].size() == 2);
  CHECK(j["stack"][0]["fn"] == "main");
  CHECK(!j["stack"][0].contains("line"));
  CHECK(j["stack"][1]["fn"] == "g");
  CHECK(j["stack"][1]["line"] == 12);
}
