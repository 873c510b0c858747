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
// (restructure a loop, move a step into a fn) has no fix. And one fix the
// checker cannot know, since it reads no file it is not asked to: a name
// unknown here (E0201) that a `.ss` file beside the document declares is
// offered as an import of that file, the line after the last import.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "diag/render_lsp.h"
#include "interp/lex/lexer.h"
#include "interp/lsp/features.h"
#include "interp/parse/parser.h"

namespace ss::lsp {

using nlohmann::json;

namespace {

// Whether [text] declares [name] at its top level.
bool declares(const std::string& text, const std::string& name) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  const uint32_t f = sm.add("x.ss", text);
  const ast::Module m = parse::parse(lex::lex(sm, f, diags), f, diags);
  for (const ast::FnDecl& d : m.fns)
    if (d.name == name) return true;
  for (const ast::ModelDecl& d : m.models)
    if (d.name == name) return true;
  for (const ast::DataDecl& d : m.datas)
    if (d.name == name) return true;
  for (const ast::DimDecl& d : m.dims)
    if (d.name == name) return true;
  return false;
}

// `import "FILE"` fixes for an unknown [name]: each .ss file beside the
// document ([path]) that declares it, not imported already.
std::vector<diag::Fix> import_fixes(const Analysis& a,
                                    const std::string& name) {
  namespace fs = std::filesystem;
  std::vector<diag::Fix> out;
  const ast::Module* m = a.module();
  if (!m || a.path.empty()) return out;
  std::error_code ec;
  const fs::path dir = fs::path(a.path).parent_path();
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".ss" &&
        e.path().filename() != fs::path(a.path).filename())
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  // After the last import, or at the top.
  uint32_t at = 0;
  for (const ast::ImportDecl& i : m->imports) {
    const std::string& text = a.sm.file(a.file).text;
    size_t nl = text.find('\n', i.span.end);
    at = std::max<uint32_t>(at,
                            nl == std::string::npos
                                ? static_cast<uint32_t>(text.size())
                                : static_cast<uint32_t>(nl + 1));
  }
  for (const fs::path& f : files) {
    const std::string file = f.filename().string();
    bool already = false;
    for (const ast::ImportDecl& i : m->imports) already |= i.path == file;
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    if (!already && declares(text.str(), name))
      out.push_back({"Import \"" + file + "\"",
                     {a.file, at, at},
                     "import \"" + file + "\"\n"});
  }
  return out;
}

}  // namespace

json code_actions(const Analysis& a,
                  const std::string& uri,
                  uint32_t begin,
                  uint32_t end) {
  json out = json::array();
  for (const diag::Diagnostic& d : a.diags.list()) {
    if (d.span.file != a.file || d.span.end < begin || d.span.begin > end)
      continue;
    std::vector<diag::Fix> fixes = d.fixes;
    if (d.code == diag::Code::E0201) {
      // The unknown name: the span's leading word (`Mlpp` of `Mlpp[D]`).
      std::string_view text = a.sm.text(d.span);
      const std::string name(
          text.begin(), std::find_if(text.begin(), text.end(), [](char c) {
            return !std::isalnum(static_cast<unsigned char>(c)) && c != '_';
          }));
      for (diag::Fix& f : import_fixes(a, name)) fixes.push_back(f);
    }
    if (fixes.empty()) continue;
    diag::Diagnostics one;
    one.error(d.code, d.span, d.message, d.label) = d;
    json shown = diag::render_lsp(
        one, a.sm, a.file, [&](uint32_t) { return uri; })[a.file][0];
    for (const diag::Fix& f : fixes) {
      if (f.span.file != a.file) continue;
      json edit{{"range", diag::lsp_range(a.sm, f.span)}, {"newText", f.text}};
      out.push_back({{"title", f.title},
                     {"kind", "quickfix"},
                     {"diagnostics", json::array({shown})},
                     {"isPreferred", fixes.size() == 1},
                     {"edit", {{"changes", {{uri, json::array({edit})}}}}}});
    }
  }
  return out;
}

}  // namespace ss::lsp
