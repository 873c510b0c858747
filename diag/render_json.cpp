// The JSON printer for `ss check --json` and the LSP. Kept in its own TU:
// nlohmann/json is slow to compile.
#include <nlohmann/json.hpp>

#include "diag/diagnostic.h"

namespace ss::diag {

namespace {

nlohmann::json position(const SourceMap& sm, Span s, uint32_t offset) {
  LineCol lc = sm.line_col(s.file, offset);
  return {{"line", lc.line}, {"column", lc.column}};
}

}  // namespace

std::string render_json(const Diagnostics& ds, const SourceMap& sm) {
  nlohmann::json arr = nlohmann::json::array();
  for (const Diagnostic& d : ds.list()) {
    nlohmann::json j;
    j["severity"] = "error";
    j["code"] = code_name(d.code);
    j["message"] = d.message;
    if (d.span.file < sm.size()) {
      LineCol lc = sm.line_col(d.span.file, d.span.begin);
      j["file"] = sm.file(d.span.file).path;
      j["line"] = lc.line;
      j["column"] = lc.column;
      j["end"] = position(sm, d.span, d.span.end);
    }
    if (!d.label.empty()) j["label"] = d.label;
    nlohmann::json notes = nlohmann::json::array();
    for (const Note& n : d.notes) {
      nlohmann::json nj{{"kind", n.kind == Note::Kind::Help ? "help" : "note"},
                        {"message", n.message}};
      if (n.span && n.span->file < sm.size()) {
        LineCol lc = sm.line_col(n.span->file, n.span->begin);
        nj["file"] = sm.file(n.span->file).path;
        nj["line"] = lc.line;
        nj["column"] = lc.column;
      }
      notes.push_back(nj);
    }
    j["notes"] = notes;
    arr.push_back(j);
  }
  // Note [Bytes that are not UTF-8]: a message quotes the source (a name,
  // a string), which may hold any bytes; nlohmann's dump() throws on
  // invalid UTF-8, which aborted `ss check --json` (found by tests/fuzz).
  // Such bytes print as U+FFFD, which is what a terminal shows for them
  // in the text rendering.
  return arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace ss::diag
