// textDocument/hover (features.h).
#include <algorithm>

#include "diag/render_lsp.h"
#include "interp/lsp/describe.h"
#include "interp/lsp/features.h"
#include "interp/lsp/locate.h"

namespace ss::lsp {

namespace {

using Kind = Found::Kind;
using RK = check::Resolution::Kind;

// A value's line: `name: T`, then the sizes of the dims it names.
std::string typed(const std::string& name,
                  const types::Type& t,
                  const check::Program& p) {
  std::string out = name.empty() ? t.str() : name + ": " + t.str();
  std::string dims = dim_sizes(t, p);
  return dims.empty() ? out : out + "  # " + dims;
}

std::string dim_text(const std::string& name, const check::Program& p) {
  auto it = p.dims().find(name);
  if (it == p.dims().end()) return "";
  return "dim " + name + " = " + std::to_string(it->second);
}

// The words for a model or a record named [name] ("" for a dtype).
std::string named_type_text(const std::string& name, const check::Program& p) {
  if (const types::ModelInfo* m = p.model(name)) return model_text(*m);
  if (const types::RecordInfo* r = p.record(name)) return record_text(*r);
  return "";
}

// What the callee under the cursor resolves to (recorded on its call).
const check::Resolution* callee(const Analysis& a, const Found& f) {
  if (!f.call) return nullptr;
  const check::ExprInfo* info = a.prog->info(f.call);
  if (!info || info->resolution.kind == RK::None) return nullptr;
  return &info->resolution;
}

// Note [Bindings at a call]: on the callee of a call of a user fn, the
// hover says what this call binds the fn's size variables to, and its
// result here: `forward(m, zeros([64 D]))` binds `b = 64` and is `[64 C]`.
// Each argument's axes are matched by position with its param's (the
// param each argument fills is the checker's, ExprInfo::arg_params); a
// batch's axis 0 is its batch axis.
std::string call_bindings(const Analysis& a, const Found& f) {
  const check::Resolution* r = callee(a, f);
  if (!r || r->kind != RK::Fn || !r->fn) return "";
  const check::ExprInfo* info = a.prog->info(f.call);
  std::vector<const ast::Expr*> given;
  if (f.call->callee->kind == ast::Expr::Kind::Field)
    given.push_back(f.call->callee->lhs.get());
  for (const ast::Arg& arg : f.call->args) given.push_back(arg.value.get());
  std::vector<std::string> seen, binds;
  for (size_t g = 0; g < given.size() && g < info->arg_params.size(); ++g) {
    int k = info->arg_params[g];
    if (k < 0 || static_cast<size_t>(k) >= r->fn->params.size() || !given[g])
      continue;
    const types::Type& want = r->fn->params[k].type;
    const types::Type& got = a.prog->type_of(given[g]);
    if (want.shape.size() != got.shape.size()) continue;
    for (size_t i = 0; i < want.shape.size(); ++i) {
      const types::Axis& v = want.shape[i];
      if (v.kind != types::Axis::Kind::Var) continue;
      if (std::find(seen.begin(), seen.end(), v.name) != seen.end()) continue;
      seen.push_back(v.name);
      binds.push_back(v.name + " = " + got.shape[i].str());
    }
  }
  std::string out = "here: ";
  for (size_t i = 0; i < binds.size(); ++i) out += (i ? ", " : "") + binds[i];
  if (!binds.empty()) out += "; ";
  out += "the result is " + info->type.str();
  return out;
}

// The code block of what [f] is, "" when nothing is known.
std::string what(const Analysis& a, const Found& f) {
  const check::Program& p = *a.prog;
  switch (f.kind) {
    case Kind::None:
      return "";
    case Kind::Local:
      return typed(f.name, f.type, p);
    case Kind::FnName:
      return check::fn_signature(*f.fn);
    case Kind::TypeName:
      return named_type_text(f.name, p);
    case Kind::AxisName: {
      std::string d = dim_text(f.name, p);
      return d.empty() ? f.name + ": a size variable" : d;
    }
    case Kind::FieldDecl: {
      const types::FieldInfo* fi = nullptr;
      if (const types::ModelInfo* m = p.model(f.owner)) fi = m->field(f.name);
      if (const types::RecordInfo* r = p.record(f.owner)) fi = r->field(f.name);
      return fi ? typed(f.owner + "." + f.name, fi->type, p) : "";
    }
    case Kind::FieldName:
    case Kind::Expr:
      break;
  }
  const ast::Expr& e = *f.expr;
  if (const check::Resolution* r = callee(a, f)) {
    if (r->kind == RK::Fn && r->fn)
      return check::fn_signature(*r->fn) + "\n# " + call_bindings(a, f);
    if (r->kind == RK::Builtin && r->op) return builtin_signature(*r->op);
  }
  const check::ExprInfo* info = p.info(&e);
  if (!info || info->type.is_error()) return "";
  const check::Resolution& r = info->resolution;
  if (e.kind == ast::Expr::Kind::Name) {
    switch (r.kind) {
      case RK::Local:
        return typed(e.name, info->type, p);
      case RK::Fn:
        return r.fn ? check::fn_signature(*r.fn) : "";
      case RK::Dim:
        return dim_text(e.name, p);
      case RK::Builtin:
        return r.op ? builtin_signature(*r.op) : "";
      case RK::Model:
      case RK::Record:
        return named_type_text(e.name, p);
      default:
        break;
    }
  }
  // Any other expression: its text when short, and its type.
  std::string src(a.sm.text(e.span));
  bool shown = src.size() <= 60 && src.find('\n') == std::string::npos;
  return typed(shown ? src : "", info->type, p);
}

// A builtin's summary, under its signature.
std::string summary(const Analysis& a, const Found& f) {
  const check::Resolution* r = callee(a, f);
  if (!r && f.kind == Kind::Expr && f.expr->kind == ast::Expr::Kind::Name)
    if (const check::ExprInfo* info = a.prog->info(f.expr))
      r = &info->resolution;
  if (!r || r->kind != RK::Builtin || !r->op) return "";
  return r->op->summary;
}

// The name whose layout the device table lists: a local, a param.
std::string value_name(const Analysis& a, const Found& f) {
  if (f.kind == Kind::Local) return f.name;
  if (f.kind == Kind::Expr && f.expr->kind == ast::Expr::Kind::Name) {
    const check::ExprInfo* info = a.prog->info(f.expr);
    if (info && info->resolution.kind == RK::Local) return f.expr->name;
  }
  return "";
}

// On several devices: the value's layout, or for a fn where it runs.
std::string layout(const Analysis& a, const Found& f) {
  const check::comms::DeviceTable* t = a.table();
  if (!t) return "";
  std::string name = value_name(a, f);
  if (!name.empty() && f.fn) {
    for (const check::comms::ValueLayout& v : t->values)
      if (v.fn == f.fn->name && v.name == name)
        return "On " + t->devices + ": " + v.text + ".";
    return "";
  }
  std::string fn;
  if (f.kind == Kind::FnName) fn = f.name;
  if (const check::Resolution* r = callee(a, f))
    if (r->kind == RK::Fn) fn = r->name;
  if (f.kind == Kind::Expr && f.expr->kind == ast::Expr::Kind::Name) {
    const check::ExprInfo* info = a.prog->info(f.expr);
    if (info && info->resolution.kind == RK::Fn) fn = f.expr->name;
  }
  for (const check::comms::FnEntry& e : t->fns)
    if (!fn.empty() && e.name == fn)
      return "On " + t->devices + ": `" + fn + "` " + e.text + ".";
  return "";
}

// The block of `ss explain` for the line holding [offset], if it sends.
std::string line_block(const Analysis& a, uint32_t offset) {
  const check::comms::DeviceTable* t = a.table();
  if (!t) return "";
  uint32_t line = a.sm.line_col(a.file, offset).line;
  const std::string& path = a.sm.file(a.file).path;
  for (const check::comms::LineSends& l : t->lines)
    if (l.line == line && l.file == path)
      return check::comms::render_line(l, t->count);
  return "";
}

}  // namespace

nlohmann::json hover(const Analysis& a, uint32_t offset) {
  if (!a.prog) return nullptr;
  Found f = locate(a, offset);
  std::vector<std::string> parts;
  std::string code = what(a, f);
  if (!code.empty()) parts.push_back("```shapescript\n" + code + "\n```");
  std::string more = summary(a, f);
  if (!more.empty()) parts.push_back(more);
  std::string lay = layout(a, f);
  if (!lay.empty()) parts.push_back(lay);
  std::string block = line_block(a, offset);
  if (!block.empty()) parts.push_back(block);
  if (parts.empty()) return nullptr;
  std::string md;
  for (const std::string& s : parts) md += (md.empty() ? "" : "\n\n") + s;
  nlohmann::json h{{"contents", {{"kind", "markdown"}, {"value", md}}}};
  if (!code.empty()) h["range"] = diag::lsp_range(a.sm, f.span);
  return h;
}

}  // namespace ss::lsp
