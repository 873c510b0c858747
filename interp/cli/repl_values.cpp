#include "interp/cli/repl_values.h"

#include <functional>

namespace ss::cli {

using TK = types::Type::Kind;

namespace {

// [t] with its model and record as [p] declares them (null when gone).
types::Type rebind(types::Type t, const check::Program& p) {
  if (t.model) t.model = p.model(t.model->name);
  if (t.record) t.record = p.record(t.record->name);
  return t;
}

// Visits the axes of [t]'s shape, model arguments and stack, and groups'
// items, so each Dim is seen.
void each_axis(const types::Type& t,
               const std::function<void(const types::Axis&)>& f) {
  std::function<void(const types::Axis&)> walk = [&](const types::Axis& a) {
    f(a);
    for (const auto& i : a.items) walk(i);
  };
  for (const auto& a : t.shape) walk(a);
  for (const auto& a : t.model_args) walk(a);
  for (const auto& a : t.stack) walk(a);
}

std::string axis_layout(const types::Axis& a, const check::Program& p) {
  using AK = types::Axis::Kind;
  switch (a.kind) {
    case AK::Var:
      return "_";  // any size: a value holds its own
    case AK::Dim: {
      auto it = p.dims().find(a.name);
      return a.name + "=" +
             std::to_string(it == p.dims().end() ? a.size : it->second);
    }
    case AK::Lit:
      return std::to_string(a.size);
    case AK::Group: {
      std::string s = "(";
      for (const auto& i : a.items) s += axis_layout(i, p) + " ";
      return s + ")";
    }
  }
  return "?";
}

std::string axes_layout(const std::vector<types::Axis>& axes,
                        const check::Program& p) {
  std::string s = "[";
  for (const auto& a : axes) s += axis_layout(a, p) + " ";
  return s + "]";
}

}  // namespace

std::string layout(const types::Type& type, const check::Program& p) {
  types::Type t = rebind(type, p);
  std::string s = std::to_string(int(t.kind)) + axes_layout(t.shape, p) +
                  types::dtype_name(t.dtype);
  for (const auto& e : t.elems) s += "(" + layout(e, p) + ")";
  for (const auto& [n, f] : t.fields) s += n + ":" + layout(f, p) + ";";
  if (t.kind == TK::Fn) s += t.fn_name;
  if (t.kind == TK::Optim) s += std::to_string(int(t.optim_kind));
  if (type.model) {
    if (!t.model) return s + " gone " + type.model->name;
    s += t.model->name + axes_layout(t.model_args, p) +
         axes_layout(t.stack, p) + "{";
    for (const auto& f : t.model->fields)
      s += f.name + (f.buffer ? " buffer:" : ":") +
           layout(types::model_field_type(t, f), p) + ";";
    s += "}";
  }
  if (type.record) {
    if (!t.record) return s + " gone " + type.record->name;
    s += t.record->name + "{";
    for (const auto& f : t.record->fields) {
      s += f.name + ":" + layout(f.type, p);
      if (f.has_domain)
        s += " in " + std::to_string(f.domain_lo.value_or(0)) + ".." +
             std::to_string(f.domain_hi.value_or(0)) +
             (f.domain_inclusive ? "=" : "");
      s += " pad " + std::to_string(f.pad) + ";";
    }
    s += "}";
  }
  return s;
}

void names_in(const types::Type& type,
              const check::Program& p,
              std::set<std::string>& out) {
  types::Type t = rebind(type, p);
  each_axis(t, [&](const types::Axis& a) {
    if (a.kind == types::Axis::Kind::Dim) out.insert(a.name);
  });
  for (const auto& e : t.elems) names_in(e, p, out);
  for (const auto& f : t.fields) names_in(f.second, p, out);
  if (t.model) {
    out.insert(t.model->name);
    for (const auto& f : t.model->fields)
      names_in(types::model_field_type(t, f), p, out);
  }
  if (t.record) {
    out.insert(t.record->name);
    for (const auto& f : t.record->fields) names_in(f.type, p, out);
  }
}

}  // namespace ss::cli
