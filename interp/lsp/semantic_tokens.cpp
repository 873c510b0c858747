// textDocument/semanticTokens/full and /full/delta (features.h).
//
// Note [Highlighting by meaning]
// A grammar colours words by their spelling; the checker knows what each
// name is. Every name of the document is located as go to definition
// locates the cursor (locate.h) and given the token type of what it means:
// a fn (a builtin is `function` with `defaultLibrary`), a model (`class`),
// a record (`struct`), a field (`property`), a parameter, a local; in
// types, patterns and `over=`, a dim (`enumMember`, `readonly`), a size
// variable (`typeParameter`, with the `batch` modifier where it is the
// fn's batch axis: the leading axis of a `[b] Record` parameter) and a
// mesh axis (`enumMember` with `mesh`). Keywords (and the declaration
// words at a line's start), numbers, strings and comments complete it, so
// an editor with no grammar installed highlights a file correctly.
#include <algorithm>
#include <set>

#include "diag/utf16.h"
#include "interp/fmt/lexical_classes.h"
#include "interp/lex/lexer.h"
#include "interp/lsp/features.h"
#include "interp/lsp/locate.h"

namespace ss::lsp {

namespace {

using lex::Tok;
using nlohmann::json;
using RK = check::Resolution::Kind;

enum Type : int {
  kNamespace,
  kType,
  kClass,
  kStruct,
  kTypeParameter,
  kParameter,
  kVariable,
  kProperty,
  kEnumMember,
  kFunction,
  kKeyword,
  kComment,
  kString,
  kNumber,
};
enum Modifier : int {
  kDeclaration = 1 << 0,
  kReadonly = 1 << 1,
  kDefaultLibrary = 1 << 2,
  kBatch = 1 << 3,
  kMesh = 1 << 4,
};

struct Classified {
  int type = -1;  // none
  int mods = 0;
};

bool is_dtype_or_builtin_type(const std::string& n) {
  static const std::set<std::string> kNames = {
      "f32",   "f64",     "bf16",    "f16",  "i32",  "i64",   "bool",
      "int",   "float",   "str",     "list", "fn",   "AdamW", "SGD",
      "Grads", "Dataset", "Batches", "Logs", "Sink", "Mode",  "Axis"};
  return kNames.count(n) > 0;
}

class Classifier {
 public:
  explicit Classifier(const Analysis& a) : a_(a) {
    if (!a.prog) return;
    for (const check::MeshAxis& m : a.prog->mesh()) mesh_.insert(m.name);
    if (const ast::Module* m = a.module())
      for (const ast::FnDecl& d : m->fns)
        for (const ast::Param& p : d.params)
          if (p.type && p.type->kind == ast::TypeExpr::Kind::Tensor &&
              p.type->axes.size() == 1 && a.prog->record(p.type->elem) &&
              p.type->axes[0].kind == ast::AxisExpr::Kind::Name)
            batch_[&d].insert(p.type->axes[0].name);
  }

  Classified name(const lex::Token& t) const {
    if (!a_.prog) return {};
    Found f = locate(a_, t.span.begin);
    const bool decl_site = declaration(a_, f) == std::optional(t.span);
    Classified c = by_found(f, t);
    if (decl_site && c.type >= 0) c.mods |= kDeclaration;
    return c;
  }

 private:
  // A word of a type, a pattern or an axis argument: a dim, a mesh axis,
  // or a size variable.
  Classified axis(const std::string& n, const check::FnInfo* fn) const {
    if (declaration_named(a_, n)) {
      if (a_.prog->model(n)) return {kClass, 0};
      if (a_.prog->record(n)) return {kStruct, 0};
      return {kEnumMember, kReadonly};
    }
    if (mesh_.count(n)) return {kEnumMember, kMesh};
    if (is_dtype_or_builtin_type(n)) return {kType, kDefaultLibrary};
    int mods = 0;
    if (fn && fn->decl) {
      auto it = batch_.find(fn->decl);
      if (it != batch_.end() && it->second.count(n)) mods |= kBatch;
    }
    return {kTypeParameter, mods};
  }

  bool is_param(const check::FnInfo* fn, diag::Span s) const {
    if (!fn || !fn->decl) return false;
    for (const ast::Param& p : fn->decl->params)
      if (p.name_span == s) return true;
    return false;
  }

  Classified by_found(const Found& f, const lex::Token& t) const {
    using K = Found::Kind;
    switch (f.kind) {
      case K::None:
        return mesh_.count(t.text) ? Classified{kEnumMember, kMesh}
                                   : Classified{};
      case K::FnName:
        return {kFunction, 0};
      case K::Local:
        return {is_param(f.fn, f.span) ? kParameter : kVariable, 0};
      case K::FieldDecl:
      case K::FieldName:
        return {kProperty, 0};
      case K::TypeName:
        if (a_.prog->model(f.name)) return {kClass, 0};
        if (a_.prog->record(f.name)) return {kStruct, 0};
        return {kType, kDefaultLibrary};
      case K::AxisName:
        return axis(t.text, f.fn);  // `x` of `m/x` too
      case K::Expr:
        break;
    }
    const ast::Expr* e = f.expr;
    if (e->kind != ast::Expr::Kind::Name || e->span != t.span)
      return axis(t.text, f.fn);  // inside a pattern, a type, `over=`
    const check::ExprInfo* info = a_.prog->info(e);
    const check::Resolution* r = info ? &info->resolution : nullptr;
    if (f.call)
      if (const check::ExprInfo* ci = a_.prog->info(f.call))
        r = &ci->resolution;
    if (!r) return {kVariable, 0};
    switch (r->kind) {
      case RK::Local:
        return {is_param(f.fn, r->decl) ? kParameter : kVariable, 0};
      case RK::Fn:
        return {kFunction, r->fn && r->fn->is_stdlib ? kDefaultLibrary : 0};
      case RK::Builtin:
        return {kFunction, kDefaultLibrary};
      case RK::Dim:
        return {kEnumMember, kReadonly};
      case RK::Model:
        return {kClass, 0};
      case RK::Record:
        return {kStruct, 0};
      default:
        return {kVariable, kReadonly};
    }
  }

  const Analysis& a_;
  std::set<std::string> mesh_;
  std::map<const ast::FnDecl*, std::set<std::string>> batch_;
};

}  // namespace

json semantic_tokens_legend() {
  return {{"tokenTypes",
           {"namespace",
            "type",
            "class",
            "struct",
            "typeParameter",
            "parameter",
            "variable",
            "property",
            "enumMember",
            "function",
            "keyword",
            "comment",
            "string",
            "number"}},
          {"tokenModifiers",
           {"declaration", "readonly", "defaultLibrary", "batch", "mesh"}}};
}

std::vector<uint32_t> semantic_tokens(const Analysis& a) {
  struct Item {
    uint32_t begin, end;
    int type, mods;
  };
  std::vector<Item> items;
  diag::Diagnostics ignored;
  std::vector<diag::Span> comments;
  const lex::Tokens toks = lex::lex(a.sm, a.file, ignored, comments);
  Classifier names(a);
  for (size_t i = 0; i < toks.size(); ++i) {
    const lex::Token& t = toks[i];
    Classified c;
    if (t.kind >= Tok::KwFn && t.kind <= Tok::KwImport)
      c = {kKeyword, 0};
    else if (t.kind == Tok::Int || t.kind == Tok::Float)
      c = {kNumber, 0};
    else if (t.kind == Tok::String || t.kind == Tok::FString)
      c = {kString, 0};
    else if (t.kind == Tok::Name)
      c = fmt::declaration_word(toks, i) ? Classified{kKeyword, 0}
                                         : names.name(t);
    if (c.type >= 0 && t.span.end > t.span.begin)
      items.push_back({t.span.begin, t.span.end, c.type, c.mods});
  }
  for (diag::Span s : comments) items.push_back({s.begin, s.end, kComment, 0});
  std::sort(items.begin(), items.end(), [](const Item& x, const Item& y) {
    return x.begin < y.begin;
  });
  // Relative encoding: line delta, start delta (UTF-16), length, type,
  // modifiers. A token spanning lines (a string cannot; a comment does
  // not) is cut at its line's end.
  std::vector<uint32_t> out;
  uint32_t prev_line = 0, prev_col = 0;
  const std::string& text = a.sm.file(a.file).text;
  for (const Item& it : items) {
    diag::LineCol lc = a.sm.line_col(a.file, it.begin);
    const uint32_t line = lc.line - 1;
    const std::string_view row = a.sm.line_text(a.file, lc.line);
    const uint32_t col = diag::utf16_length(row.substr(0, lc.column - 1));
    size_t end = std::min<size_t>(it.end, text.find('\n', it.begin));
    const uint32_t len = diag::utf16_length(
        std::string_view(text).substr(it.begin, end - it.begin));
    out.push_back(line - prev_line);
    out.push_back(line == prev_line ? col - prev_col : col);
    out.push_back(len);
    out.push_back(static_cast<uint32_t>(it.type));
    out.push_back(static_cast<uint32_t>(it.mods));
    prev_line = line;
    prev_col = col;
  }
  return out;
}

json semantic_tokens_delta(const std::vector<uint32_t>& before,
                           const std::vector<uint32_t>& after) {
  size_t start = 0;
  while (start < before.size() && start < after.size() &&
         before[start] == after[start])
    ++start;
  size_t tail = 0;
  while (tail < before.size() - start && tail < after.size() - start &&
         before[before.size() - 1 - tail] == after[after.size() - 1 - tail])
    ++tail;
  json edits = json::array();
  if (start == before.size() && start == after.size()) return edits;
  json data = json::array();
  for (size_t i = start; i < after.size() - tail; ++i) data.push_back(after[i]);
  edits.push_back({{"start", start},
                   {"deleteCount", before.size() - tail - start},
                   {"data", data}});
  return edits;
}

}  // namespace ss::lsp
