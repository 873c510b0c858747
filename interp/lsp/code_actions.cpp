// textDocument/codeAction (features.h).
//
// Note [Help an editor applies]
// The checker's help lines say what to write: "did you mean `img`?",
// "declare it `mut m: ...`", "convert it: to(x, f32)", "use `h = ...` to
// rebind it". Where the fix is a change of the source at a known place,
// the checker records it with the help line (diag::Fix: a span and its new
// text) and the server offers it as a quick fix on the diagnostic: the
// editor applies it and the program is checked again, so a fix that did
// not fix would show at once. A help line that names no single change
// (restructure a loop, move a step into a fn) has no fix.
#include "diag/render_lsp.h"
#include "interp/lsp/features.h"

namespace ss::lsp {

using nlohmann::json;

json code_actions(const Analysis& a,
                  const std::string& uri,
                  uint32_t begin,
                  uint32_t end) {
  json out = json::array();
  for (const diag::Diagnostic& d : a.diags.list()) {
    if (d.fixes.empty() || d.span.file != a.file || d.span.end < begin ||
        d.span.begin > end)
      continue;
    diag::Diagnostics one;
    one.error(d.code, d.span, d.message, d.label) = d;
    json shown = diag::render_lsp(
        one, a.sm, a.file, [&](uint32_t) { return uri; })[a.file][0];
    for (const diag::Fix& f : d.fixes) {
      if (f.span.file != a.file) continue;
      json edit{{"range", diag::lsp_range(a.sm, f.span)}, {"newText", f.text}};
      out.push_back({{"title", f.title},
                     {"kind", "quickfix"},
                     {"diagnostics", json::array({shown})},
                     {"isPreferred", d.fixes.size() == 1},
                     {"edit", {{"changes", {{uri, json::array({edit})}}}}}});
    }
  }
  return out;
}

}  // namespace ss::lsp
