// textDocument/definition (features.h).
#include <optional>

#include "diag/render_lsp.h"
#include "interp/lsp/features.h"
#include "interp/lsp/locate.h"

namespace ss::lsp {

namespace {

using Kind = Found::Kind;
using RK = check::Resolution::Kind;

std::optional<diag::Span> dim_decl(const check::Program& p,
                                   const std::string& name) {
  for (const ast::Module& m : p.modules())
    for (const ast::DimDecl& d : m.dims)
      if (d.name == name) return d.name_span;
  return std::nullopt;
}

// Where a model, a record or a dim named [name] is declared.
std::optional<diag::Span> global_decl(const check::Program& p,
                                      const std::string& name) {
  if (const types::ModelInfo* m = p.model(name)) return m->span;
  if (const types::RecordInfo* r = p.record(name)) return r->span;
  return dim_decl(p, name);
}

// The field [name] of a value of type [t]: a model's, a record's, a batch's.
std::optional<diag::Span> field_decl(const types::Type& t,
                                     const std::string& name) {
  const types::FieldInfo* f = nullptr;
  if (t.model) f = t.model->field(name);
  if (!f && t.record) f = t.record->field(name);
  if (!f) return std::nullopt;
  return f->span;
}

}  // namespace

std::optional<diag::Span> declaration(const Analysis& a, const Found& f) {
  const check::Program& p = *a.prog;
  switch (f.kind) {
    case Kind::None:
      return std::nullopt;
    case Kind::Local:
    case Kind::FnName:
    case Kind::FieldDecl:
      return f.span;  // a declaration is its own
    case Kind::TypeName:
    case Kind::AxisName:
      return global_decl(p, f.name);
    case Kind::FieldName:
    case Kind::Expr:
      break;
  }
  // A callee: what its call resolved to (`forward`, `x.f` for `f(x)`).
  if (const check::ExprInfo* call = f.call ? p.info(f.call) : nullptr)
    if (call->resolution.kind == RK::Fn && call->resolution.fn &&
        call->resolution.fn->decl)
      return call->resolution.fn->decl->name_span;
  if (f.kind == Kind::FieldName)
    return field_decl(p.type_of(f.expr->lhs.get()), f.name);
  const check::ExprInfo* info = p.info(f.expr);
  if (!info || f.expr->kind != ast::Expr::Kind::Name) return std::nullopt;
  const check::Resolution& r = info->resolution;
  switch (r.kind) {
    case RK::Local:
      return r.decl;
    case RK::Fn:
      if (r.fn && r.fn->decl) return r.fn->decl->name_span;
      return std::nullopt;
    case RK::Dim:
    case RK::Model:
    case RK::Record:
      return global_decl(p, f.expr->name);
    default:
      return std::nullopt;
  }
}

std::optional<diag::Span> declaration_named(const Analysis& a,
                                            const std::string& name) {
  return a.prog ? global_decl(*a.prog, name) : std::nullopt;
}

nlohmann::json definition(const Analysis& a,
                          uint32_t offset,
                          const std::string& uri) {
  if (!a.prog) return nullptr;
  std::optional<diag::Span> s = declaration(a, locate(a, offset));
  if (!s || s->file >= a.sm.size()) return nullptr;
  std::string where = a.uri_of(s->file, uri);
  if (where.empty()) return nullptr;  // in the standard library
  return {{"uri", where}, {"range", diag::lsp_range(a.sm, *s)}};
}

}  // namespace ss::lsp
