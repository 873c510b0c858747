// The JSON printer for `ss check --json` and the LSP. Kept in its own TU:
// nlohmann/json is slow to compile.
#include <nlohmann/json.hpp>

#include "diag/diagnostic.h"

namespace ss::diag {

namespace {

// {"file", "line", "column"} of [s]'s start, when it is in a file, in the
// text it was made from (Note [Source origins]).
void put_location(nlohmann::json& j, const SourceMap& sm, Span s) {
  if (s.file >= sm.size()) return;
  s = sm.origin(s);
  LineCol lc = sm.line_col(s.file, s.begin);
  j["file"] = sm.file(s.file).path;
  j["line"] = lc.line;
  j["column"] = lc.column;
}

nlohmann::json to_json(const Diagnostic& d, const SourceMap& sm) {
  nlohmann::json j;
  j["severity"] = "error";
  if (d.kind.empty())
    j["code"] = code_name(d.code);
  else
    j["kind"] = d.kind;
  j["message"] = d.message;
  if (d.located && d.span.file < sm.size()) {
    put_location(j, sm, d.span);
    Span s = sm.origin(d.span);
    LineCol end = sm.line_col(s.file, s.end);
    j["end"] = {{"line", end.line}, {"column", end.column}};
  }
  if (!d.label.empty()) j["label"] = d.label;
  nlohmann::json notes = nlohmann::json::array();
  for (const Note& n : d.notes) {
    nlohmann::json nj{{"kind", n.kind == Note::Kind::Help ? "help" : "note"},
                      {"message", n.message}};
    if (n.span) put_location(nj, sm, *n.span);
    notes.push_back(nj);
  }
  j["notes"] = notes;
  if (!d.stack.empty()) {
    nlohmann::json st = nlohmann::json::array();
    for (const Frame& f : d.stack) {
      nlohmann::json fj{{"fn", f.fn}};
      put_location(fj, sm, f.site);
      st.push_back(fj);
    }
    j["stack"] = st;
  }
  return j;
}

// Note [Bytes that are not UTF-8]: a message quotes the source (a name,
// a string), which may hold any bytes; nlohmann's dump() throws on
// invalid UTF-8, which aborted `ss check --json` (found by tests/fuzz).
// Such bytes print as U+FFFD, which is what a terminal shows for them in
// the text rendering.
std::string dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace

std::string render_json(const Diagnostic& d, const SourceMap& sm) {
  return dump(to_json(d, sm));
}

std::string render_json(const Diagnostics& ds, const SourceMap& sm) {
  nlohmann::json arr = nlohmann::json::array();
  for (const Diagnostic& d : ds.list()) arr.push_back(to_json(d, sm));
  return dump(arr);
}

}  // namespace ss::diag
