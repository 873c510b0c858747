// f-strings, run-time shapes of types, and extern fns.
#include "interp/eval/extern_host.h"
#include "interp/eval/format.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/runtime_lib.h"
#include "ops/registry/registry.h"

namespace ss::eval {

using VK = Value::Kind;
using TK = types::Type::Kind;

Value eval_fstring(Interpreter& in, const ast::Expr& e, Frame& f) {
  std::string out;
  for (const ast::FStringPart& p : e.fparts) {
    if (!p.expr) {
      out += p.text;
      continue;
    }
    Value v = in.eval(*p.expr, f);
    try {
      out += format_with_spec(v, p.format_spec);
    } catch (const std::invalid_argument& bad) {
      in.fail("ValueError", p.expr->span, bad.what());
    }
  }
  return Value::string(std::move(out));
}

std::optional<int64_t> Interpreter::dim_size(const std::string& name) const {
  if (!local_dim_.empty() && name == local_dim_) return local_dim_size_;
  auto d = prog_.dims().find(name);
  if (d == prog_.dims().end()) return std::nullopt;
  return d->second;
}

int64_t Interpreter::axis_size(const types::Axis& a,
                               const Frame& f,
                               diag::Span at) {
  if (!a.split.empty()) {
    types::Axis whole = a;
    whole.split.clear();
    return axis_size(whole, f, at) / split_blocks(a, prog_.mesh());
  }
  switch (a.kind) {
    case types::Axis::Kind::Dim: {
      if (std::optional<int64_t> d = dim_size(a.name)) return *d;
      if (a.size >= 0) return a.size;
      break;
    }
    case types::Axis::Kind::Lit:
      return a.size;
    case types::Axis::Kind::Var: {
      // Note [Size variables carry the split]: the local heads while an op
      // runs on them.
      if (auto h = f.split_vars.find(a.var); h != f.split_vars.end())
        return axis_size(h->second, f, at);
      auto it = f.sizes.find(a.var);
      if (it != f.sizes.end()) return it->second;
      break;
    }
    case types::Axis::Kind::Group: {
      int64_t p = 1;
      for (const auto& i : a.items) p *= axis_size(i, f, at);
      return p;
    }
  }
  fail("ShapeError",
       at,
       "the size of `" + a.str() + "` is not known at this point");
}

ops::Shape runtime_shape(Interpreter& in,
                         const types::Type& t,
                         const Frame& f,
                         diag::Span at) {
  ops::Shape s;
  for (const auto& a : t.shape) s.push_back(in.axis_size(a, f, at));
  return s;
}

Value Interpreter::call_extern(const check::FnInfo& fn,
                               std::vector<Value> args,
                               diag::Span site) {
  const std::string& target = fn.decl->extern_target;
  size_t dot = target.rfind('.');
  std::string module = target.substr(0, dot);
  std::string name = target.substr(dot + 1);
  // The extern's entry on the `.ss` stack while it runs.
  struct Pop {
    Interpreter* in;
    ~Pop() { in->stack_.pop_back(); }
  };
  if (module != "nn") {
    if (ExternHost* h = extern_host()) {
      // Note [Extern fns of a host language]
      stack_.push_back({fn.name, site});
      Pop pop{this};
      return call_host_extern(*this, *h, fn, args, site);
    }
  }
  const ops::OpDef* op = module == "nn" ? ops::find_op(name) : nullptr;
  if (!op)
    fail("ImportError",
         site,
         "extern fn `" + fn.name + "`: \"" + target +
             "\" cannot be loaded (plugins arrive with the plugin ABI)");
  Frame* cur = current_frame();
  Frame empty;
  empty.scopes.emplace_back();
  BuiltinCall c{*this,
                cur ? *cur : empty,
                *op,
                site,
                nullptr,
                nullptr,
                {},
                {},
                {},
                {},
                {}};
  c.args.resize(op->params.size());
  c.given.assign(op->params.size(), false);
  c.exprs.assign(op->params.size(), nullptr);
  // Parameters map to the op's by name; an `Axis[d]` parameter becomes
  // that axis's position in the first tensor parameter (by the extern's
  // own signature, `x: [*s d]`).
  const types::Type* first = nullptr;
  const Value* first_val = nullptr;
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].type.kind == TK::Tensor) {
      first = &fn.params[i].type;
      first_val = &args[i];
      break;
    }
  std::map<int, std::vector<int>> axes;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const check::ParamInfo& p = fn.params[i];
    size_t k = 0;
    while (k < op->params.size() && p.name != op->params[k].name) ++k;
    if (k == op->params.size()) continue;
    if (p.type.kind == TK::AxisArg) {
      if (!first || !first_val || first_val->kind != VK::Tensor) continue;
      const types::Axis& want = p.type.shape[0];
      int rank = static_cast<int>(first_val->t.rank());
      int n = static_cast<int>(first->shape.size());
      for (int j = 0; j < n; ++j)
        if (first->shape[j] == want) {
          // After a `*s`, positions count from the end.
          bool after_star = false;
          for (int q = 0; q < j; ++q)
            after_star |= first->shape[q].name.rfind("*", 0) == 0;
          axes[static_cast<int>(k)] = {after_star ? rank - (n - j) : j};
        }
      c.given[k] = true;
      continue;
    }
    if (i < args.size() && args[i].kind != VK::Unit) {
      c.args[k] = args[i];
      c.given[k] = true;
    }
  }
  check::ExprInfo info;
  info.axes = axes;
  info.type = fn.result;
  c.info = &info;
  if (!op->forward)
    fail("ImportError", site, "`" + target + "` has no implementation");
  stack_.push_back({fn.name, site});
  Pop pop{this};
  return call_builtin_prepared(c);
}

}  // namespace ss::eval
