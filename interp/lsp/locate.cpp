// What is under the cursor (locate.h).
#include "interp/lsp/locate.h"

#include <functional>

#include "interp/parse/ast_walk.h"

namespace ss::lsp {

namespace {

bool inside(diag::Span s, uint32_t off) {
  return s.begin <= off && off < s.end;
}

// The first name (a type's, an axis's) inside [t] at [off].
bool in_type(const ast::TypeExpr& t, uint32_t off, Found& f) {
  std::function<bool(const ast::AxisExpr&)> axis = [&](const ast::AxisExpr& a) {
    if (!inside(a.span, off)) return false;
    if (a.kind == ast::AxisExpr::Kind::Group) {
      for (const ast::AxisExpr& i : a.items)
        if (axis(i)) return true;
      return false;
    }
    if (a.kind != ast::AxisExpr::Kind::Name) return false;
    f.kind = Found::Kind::AxisName;
    f.name = a.name;
    f.span = a.span;
    return true;
  };
  if (!inside(t.span, off)) return false;
  switch (t.kind) {
    case ast::TypeExpr::Kind::Tensor:
      for (const ast::AxisExpr& a : t.axes)
        if (axis(a)) return true;
      if (!t.elem.empty() && inside(t.elem_span, off)) {
        f.kind = Found::Kind::TypeName;
        f.name = t.elem;
        f.span = t.elem_span;
        return true;
      }
      return false;
    case ast::TypeExpr::Kind::Named: {
      for (const ast::AxisExpr& a : t.args)
        if (axis(a)) return true;  // `AdamW[Mlp]`: the Mlp, as a name
      diag::Span name{t.span.file,
                      t.span.begin,
                      t.span.begin + static_cast<uint32_t>(t.name.size())};
      if (!inside(name, off)) return false;
      f.kind = Found::Kind::TypeName;
      f.name = t.name;
      f.span = name;
      return true;
    }
    case ast::TypeExpr::Kind::Tuple:
      for (const ast::TypeExpr& e : t.elems)
        if (in_type(e, off, f)) return true;
      return false;
  }
  return false;
}

// The declared local of [fn] at [off] (a `let` or `for` name) with the
// smallest span: a comprehension's names carry the comprehension's span
// (the parser keeps no span of their own), so one holds every expression
// inside it.
bool in_locals(const check::FnInfo& fn, uint32_t off, Found& f) {
  bool found = false;
  for (size_t i = 0; i < fn.local_spans.size() && i < fn.locals.size(); ++i) {
    diag::Span s = fn.local_spans[i];
    if (!inside(s, off) ||
        (found && s.end - s.begin >= f.span.end - f.span.begin))
      continue;
    found = true;
    f.kind = Found::Kind::Local;
    f.name = fn.locals[i].first;
    f.type = fn.locals[i].second;
    f.span = s;
  }
  return found;
}

// The annotations of `let x: T = ...` in [b].
bool in_annotations(const ast::Block& b, uint32_t off, Found& f) {
  for (const ast::StmtPtr& s : b) {
    if (!s) continue;
    if (s->annotation && in_type(*s->annotation, off, f)) return true;
    for (const ast::IfBranch& br : s->branches)
      if (in_annotations(br.body, off, f)) return true;
    if (in_annotations(s->body, off, f)) return true;
  }
  return false;
}

// Keeps in [best] the smaller of [best] and [e] holding [off].
void innermost(const ast::Expr& e, uint32_t off, const ast::Expr*& best) {
  if (!inside(e.span, off)) return;
  if (!best || e.span.end - e.span.begin < best->span.end - best->span.begin)
    best = &e;
}

void found_expr(const ast::Expr* e, uint32_t off, Found& f) {
  f.expr = e;
  f.span = e->span;
  f.kind = Found::Kind::Expr;
  if (e->kind == ast::Expr::Kind::Field && inside(e->name_span, off)) {
    f.kind = Found::Kind::FieldName;
    f.name = e->name;
    f.span = e->name_span;
  }
}

bool in_fn(const Analysis& a, const ast::FnDecl& d, uint32_t off, Found& f) {
  const check::FnInfo* fn = a.prog->fn(d.name);
  if (!fn || fn->decl != &d) return false;
  f.fn = fn;
  if (inside(d.name_span, off)) {
    f.kind = Found::Kind::FnName;
    f.name = d.name;
    f.span = d.name_span;
    return true;
  }
  for (size_t i = 0; i < d.params.size(); ++i) {
    const ast::Param& p = d.params[i];
    if (inside(p.name_span, off)) {
      f.kind = Found::Kind::Local;
      f.name = p.name;
      f.span = p.name_span;
      if (i < fn->params.size()) f.type = fn->params[i].type;
      return true;
    }
    if (p.type && in_type(*p.type, off, f)) return true;
  }
  if (d.result && in_type(*d.result, off, f)) return true;
  if (in_annotations(d.body, off, f)) return true;
  // The innermost checked expression holding [off], unless a local's name
  // is at least as small there.
  const ast::Expr* best = nullptr;
  ast::each_body_expr(d, [&](const ast::Expr& e) { innermost(e, off, best); });
  Found local = f;
  if (in_locals(*fn, off, local) &&
      (!best || local.span.end - local.span.begin <=
                    best->span.end - best->span.begin)) {
    f = local;
    return true;
  }
  if (!best) return false;
  ast::each_body_expr(d, [&](const ast::Expr& e) {
    if (e.kind == ast::Expr::Kind::Call && e.callee.get() == best) f.call = &e;
  });
  found_expr(best, off, f);
  return true;
}

bool field_decl(const std::string& owner,
                const std::string& name,
                diag::Span s,
                uint32_t off,
                Found& f) {
  if (!inside(s, off)) return false;
  f.kind = Found::Kind::FieldDecl;
  f.owner = owner;
  f.name = name;
  f.span = s;
  return true;
}

// A model's or a record's name where it is declared.
bool type_decl(const std::string& name, diag::Span s, uint32_t off, Found& f) {
  if (!inside(s, off)) return false;
  f.kind = Found::Kind::TypeName;
  f.name = name;
  f.span = s;
  return true;
}

}  // namespace

Found locate(const Analysis& a, uint32_t off) {
  Found f;
  const ast::Module* m = a.module();
  if (!m) return f;
  // Only the fn whose header starts last at or before [off] can hold it:
  // walking every fn's body made each lookup cost the whole document, and
  // semantic tokens and references look up every name.
  if (const check::FnInfo* fn = fn_around(a, off)) {
    Found here;
    if (in_fn(a, *fn->decl, off, here)) return here;
  }
  for (const ast::ModelDecl& d : m->models) {
    if (type_decl(d.name, d.name_span, off, f)) return f;
    for (const ast::ModelField& fd : d.fields) {
      if (field_decl(d.name, fd.name, fd.name_span, off, f) ||
          in_type(fd.type, off, f))
        return f;
      // An initialiser (`normal(std=1/sqrt(D))`).
      const ast::Expr* best = nullptr;
      if (fd.init)
        ast::each_expr(*fd.init,
                       [&](const ast::Expr& e) { innermost(e, off, best); });
      if (best) {
        found_expr(best, off, f);
        return f;
      }
    }
  }
  for (const ast::DataDecl& d : m->datas) {
    if (type_decl(d.name, d.name_span, off, f)) return f;
    for (const ast::DataField& fd : d.fields)
      if (field_decl(d.name, fd.name, fd.name_span, off, f) ||
          in_type(fd.type, off, f))
        return f;
  }
  for (const ast::DimDecl& d : m->dims)
    if (inside(d.name_span, off)) {
      f.kind = Found::Kind::AxisName;
      f.name = d.name;
      f.span = d.name_span;
      return f;
    }
  return f;
}

const check::FnInfo* fn_around(const Analysis& a, uint32_t off) {
  const ast::Module* m = a.module();
  if (!m) return nullptr;
  const ast::FnDecl* best = nullptr;
  for (const ast::FnDecl& d : m->fns)
    if (d.span.begin <= off && (!best || d.span.begin > best->span.begin))
      best = &d;
  if (!best) return nullptr;
  const check::FnInfo* fn = a.prog->fn(best->name);
  return fn && fn->decl == best ? fn : nullptr;
}

}  // namespace ss::lsp
