// textDocument/references, /prepareRename and /rename (features.h).
//
// Note [References by meaning]
// A name's references are the names in the document that mean the same
// declaration: each name token is located as go to definition locates the
// cursor (locate.h), and kept when its declaration is the one asked about.
// So a local `x` of one fn is not the `x` of another, a field `m.w1` is
// found through its model's type, and a dim is found in types, patterns
// and `over=` as well as in values. A rename is those edits, refused when
// the new name is not a name, when the declaration is in another file, or
// when the program would change meaning: the renamed text is checked again
// and must give no new error, and the new name's references from the same
// declaration must be exactly the renamed places (otherwise the new name
// captured, or was captured by, another declaration).
#include <algorithm>
#include <set>

#include "diag/render_lsp.h"
#include "interp/lex/lexer.h"
#include "interp/lsp/features.h"
#include "interp/lsp/locate.h"

namespace ss::lsp {

namespace {

using nlohmann::json;

// Names inside a type, a pattern or an axis argument have no expression
// of their own: the innermost one around them is the call or the axis
// argument, and a dim, model or record is found by its name there.
bool in_words(const Found& f) {
  return f.kind == Found::Kind::Expr && f.expr &&
         (f.expr->kind == ast::Expr::Kind::Call ||
          f.expr->kind == ast::Expr::Kind::AxisRef ||
          f.expr->kind == ast::Expr::Kind::TypeLit);
}

std::optional<diag::Span> meaning(const Analysis& a, const lex::Token& t) {
  Found f = locate(a, t.span.begin);
  std::optional<diag::Span> d = declaration(a, f);
  if (!d && in_words(f)) d = declaration_named(a, t.text);
  if (d && d->file >= a.sm.size()) return std::nullopt;
  return d;
}

// The spans of the names in [a]'s document that mean [decl], in order.
std::vector<diag::Span> uses(const Analysis& a, diag::Span decl) {
  diag::Diagnostics ignored;
  const lex::Tokens toks = lex::lex(a.sm, a.file, ignored);
  std::vector<diag::Span> out;
  for (const lex::Token& t : toks)
    if (t.kind == lex::Tok::Name) {
      std::optional<diag::Span> d = meaning(a, t);
      if (d && *d == decl) out.push_back(t.span);
    }
  return out;
}

// What the cursor at [offset] names, and where it is declared.
std::optional<std::pair<diag::Span, std::string>> target(const Analysis& a,
                                                         uint32_t offset) {
  if (!a.prog) return std::nullopt;
  diag::Diagnostics ignored;
  for (const lex::Token& t : lex::lex(a.sm, a.file, ignored))
    if (t.kind == lex::Tok::Name && t.span.begin <= offset &&
        offset <= t.span.end) {
      std::optional<diag::Span> d = meaning(a, t);
      if (d) return std::make_pair(*d, t.text);
      return std::nullopt;
    }
  return std::nullopt;
}

bool is_name(const std::string& s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  diag::SourceMap sm;
  diag::Diagnostics d;
  lex::Tokens t = lex::lex(sm, sm.add("n.ss", s), d);
  return !t.empty() && t[0].kind == lex::Tok::Name;  // not a keyword
}

// What a rename at [offset] would change: the declaration, its name, the
// names that mean it (in order) and the one under the cursor; throws
// RequestFailed for what cannot be renamed.
struct Renamable {
  diag::Span decl;
  std::string name;
  std::vector<diag::Span> spans;
  diag::Span at;
};

Renamable renamable(const Analysis& a, uint32_t offset) {
  auto t = target(a, offset);
  if (!t)
    throw RequestFailed(
        "nothing to rename here (a builtin, a size "
        "variable or no name)");
  if (t->first.file != a.file)
    throw RequestFailed("`" + t->second +
                        "` is declared in another file: rename it there");
  Renamable r{t->first, t->second, uses(a, t->first), {}};
  for (diag::Span s : r.spans)
    if (s.begin <= offset && offset <= s.end) {
      r.at = s;
      return r;
    }
  throw RequestFailed("nothing to rename here");
}

}  // namespace

json references(const Analysis& a,
                uint32_t offset,
                const std::string& uri,
                bool include_declaration) {
  json out = json::array();
  auto t = target(a, offset);
  if (!t) return out;
  const diag::Span decl = t->first;
  if (include_declaration && decl.file != a.file) {
    std::string where = a.uri_of(decl.file, uri);
    if (!where.empty())
      out.push_back({{"uri", where}, {"range", diag::lsp_range(a.sm, decl)}});
  }
  for (diag::Span s : uses(a, decl))
    if (include_declaration || s != decl)
      out.push_back({{"uri", uri}, {"range", diag::lsp_range(a.sm, s)}});
  return out;
}

json prepare_rename(const Analysis& a, uint32_t offset) {
  Renamable r = renamable(a, offset);
  return {{"range", diag::lsp_range(a.sm, r.at)}, {"placeholder", r.name}};
}

json rename(const Analysis& a,
            uint32_t offset,
            const std::string& uri,
            const std::string& new_name,
            const check::Options& opts) {
  const Renamable r = renamable(a, offset);
  const std::string& old_name = r.name;
  if (!is_name(new_name))
    throw RequestFailed("`" + new_name +
                        "` is not a name (letters, digits and _, not a "
                        "keyword)");
  // The renamed text, and where each renamed name and the declaration
  // land in it.
  const std::string& text = a.sm.file(a.file).text;
  std::string renamed;
  std::set<uint32_t> landed;
  uint32_t decl_at = 0, at = 0;
  for (diag::Span s : r.spans) {
    renamed.append(text, at, s.begin - at);
    if (s == r.decl) decl_at = static_cast<uint32_t>(renamed.size());
    landed.insert(static_cast<uint32_t>(renamed.size()));
    renamed += new_name;
    at = s.end;
  }
  renamed.append(text, at, std::string::npos);
  auto after = analyze(a.path, renamed, opts);
  const size_t errors_before = a.diags.size();
  if (!after->prog || after->diags.size() > errors_before)
    throw RequestFailed(
        "renaming `" + old_name + "` to `" + new_name + "` would not check: " +
        (after->diags.empty() ? std::string("it does not parse")
                              : after->diags.list().front().message));
  std::set<uint32_t> means;
  if (auto d = target(*after, decl_at))
    for (diag::Span s : uses(*after, d->first)) means.insert(s.begin);
  if (means != landed) {
    std::string where;
    for (uint32_t o : means)
      if (!landed.count(o)) where = after->sm.position({after->file, o, o});
    for (uint32_t o : landed)
      if (where.empty() && !means.count(o))
        where = after->sm.position({after->file, o, o});
    throw RequestFailed("renaming `" + old_name + "` to `" + new_name +
                        "` would change what a name means" +
                        (where.empty() ? "" : " (at " + where + ")") +
                        ": another `" + new_name +
                        "` is in scope there; choose another name");
  }
  json edits = json::array();
  for (diag::Span s : r.spans)
    edits.push_back(
        {{"range", diag::lsp_range(a.sm, s)}, {"newText", new_name}});
  return {{"changes", {{uri, edits}}}};
}

}  // namespace ss::lsp
