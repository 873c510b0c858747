// The LSP printer (diag/render_lsp.cpp) and UTF-16 columns (diag/utf16.h),
// against positions counted by hand.
#include "diag/render_lsp.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "diag/utf16.h"

using namespace ss::diag;

TEST_CASE("UTF-16 columns of UTF-8 text", "[diag][lsp]") {
  // a: 1 byte, 1 unit; é (U+00E9): 2 bytes, 1 unit; € (U+20AC): 3 bytes,
  // 1 unit; 😀 (U+1F600): 4 bytes, 2 units (a surrogate pair).
  const std::string line = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z";
  CHECK(utf16_length(line) == 6);
  CHECK(utf16_length(line.substr(0, 6)) == 3);  // a é €
  CHECK(byte_column(line, 0) == 0);
  CHECK(byte_column(line, 2) == 3);   // after é
  CHECK(byte_column(line, 3) == 6);   // after €
  CHECK(byte_column(line, 4) == 6);   // inside the pair: its start
  CHECK(byte_column(line, 5) == 10);  // after 😀: z
  CHECK(byte_column(line, 99) == 11);
  // A stray continuation byte and a truncated sequence: one unit a byte.
  CHECK(utf16_length("\x80x") == 2);
  CHECK(utf16_length("\xF0\x9F") == 2);
  CHECK(byte_column("\x80x", 1) == 1);
}

TEST_CASE("an LSP diagnostic: code, range, notes, help", "[diag][lsp]") {
  SourceMap sm;
  uint32_t lib = sm.add("<stdlib>", "model Linear:\n");
  const std::string text = "fn f():\n    let s = \"\xC3\xA9\"; y\n";
  uint32_t doc = sm.add("/w/a.ss", text);
  Diagnostics ds;
  uint32_t y = static_cast<uint32_t>(text.find('y'));
  ds.error(Code::E0201, {doc, y, y + 1}, "unknown name `y`")
      .note("declared here", Span{doc, 3, 4})
      .note("in the library", Span{lib, 0, 5})
      .help("did you mean `s`?");
  auto uri = [&](uint32_t f) -> std::string {
    return f == doc ? "file:///w/a.ss" : "";
  };
  auto out = render_lsp(ds, sm, doc, uri);
  REQUIRE(out.size() == 1);
  const nlohmann::json& d = out.at(doc).at(0);
  CHECK(d["code"] == "E0201");
  CHECK(d["severity"] == 1);
  // Line 1 (0-based): 4 spaces and `let s = "` (13 units), é (1 unit,
  // 2 bytes), `"; ` (3): y at 17 (byte column 18).
  CHECK(d["range"] == nlohmann::json::parse(
                          R"({"start": {"line": 1, "character": 17},
                              "end": {"line": 1, "character": 18}})"));
  CHECK(d["relatedInformation"].size() == 1);
  CHECK(d["relatedInformation"][0]["location"]["range"]["start"] ==
        nlohmann::json::parse(R"({"line": 0, "character": 3})"));
  // A note in a file with no URI and the help: in the message.
  CHECK(d["message"] ==
        "unknown name `y`\nnote: in the library\nhelp: did you mean `s`?");
}

TEST_CASE("a diagnostic away from the document", "[diag][lsp]") {
  SourceMap sm;
  uint32_t doc = sm.add("/w/a.ss", "import \"b.ss\"\n");
  uint32_t imp = sm.add("/w/b.ss", "x\n");
  Diagnostics ds;
  ds.error(Code::E0201, {imp, 0, 1}, "unknown name `x`");
  Diagnostic& d = ds.error(Code::E0204, {doc, 0, 6}, "unlocated");
  d.located = false;
  // b.ss has a URI: its own list; with none, the document's, at 0:0.
  auto both = render_lsp(ds, sm, doc, [](uint32_t f) {
    return f == 0 ? "file:///w/a.ss" : "file:///w/b.ss";
  });
  CHECK(both.at(imp).size() == 1);
  CHECK(both.at(doc).size() == 1);
  CHECK(both.at(doc)[0]["range"]["start"]["line"] == 0);
  auto one = render_lsp(
      ds, sm, doc, [](uint32_t f) { return f == 0 ? "file:///w/a.ss" : ""; });
  REQUIRE(one.size() == 1);
  CHECK(one.at(doc).size() == 2);
  CHECK(one.at(doc)[0]["message"] == "/w/b.ss:1:1: unknown name `x`");
}
