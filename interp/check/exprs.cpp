// Expressions: names, literals, fields, indexing, operators, constants.
#include <cmath>

#include "interp/check/checker_impl.h"
#include "interp/check/operators.h"

namespace ss::check {

using diag::Code;
using EK = ast::Expr::Kind;

Type Checker::record(const ast::Expr& e, Type t, Resolution r) {
  ExprInfo& info = prog_->exprs_[&e];
  info.type = t;
  if (r.kind != Resolution::Kind::None) info.resolution = std::move(r);
  return t;
}

std::vector<std::string> Checker::value_names(const FnCtx* c) const {
  std::vector<std::string> v;
  for (const auto& [n, _] : prog_->fns_) v.push_back(n);
  for (const auto& [n, _] : prog_->dims_) v.push_back(n);
  for (const auto& [n, _] : prog_->models_) v.push_back(n);
  for (const auto& [n, _] : prog_->records_) v.push_back(n);
  for (const ops::OpDef* op : ops::all_ops()) v.push_back(op->name);
  (void)c;
  return v;
}

namespace {

// Collects local names for suggestions (ValueScope has no iteration API).
struct DepthGuard {
  int& d;
  explicit DepthGuard(int& depth) : d(depth) { ++d; }
  ~DepthGuard() { --d; }
};

}  // namespace

Type Checker::check_expr(const ast::Expr& e, FnCtx& c) {
  DepthGuard guard(depth_);
  DepthGuard chain(nesting_);
  if (depth_ > 400) {
    error(Code::E0101,
          e.span,
          "expression nested too deeply",
          "simplify this expression");
    return record(e, Type::error());
  }
  if (nesting_ > kMaxNesting) {
    error(Code::E0101,
          e.span,
          "calls nested too deeply to check",
          "more than " + std::to_string(kMaxNesting) +
              " levels of expressions, counting those of the fns called "
              "on the way here (each fn is checked before its caller)");
    return record(e, Type::error());
  }
  switch (e.kind) {
    case EK::Name:
      return check_name(e, c);
    case EK::Int:
      return record(e, Type::of(TK::Int));
    case EK::Float:
      return record(e, Type::of(TK::Float));
    case EK::String:
      return record(e, Type::of(TK::Str));
    case EK::Bool:
      return record(e, Type::of(TK::Bool));
    case EK::FString:
      for (const ast::FStringPart& p : e.fparts)
        if (p.expr) check_expr(*p.expr, c);
      return record(e, Type::of(TK::Str));
    case EK::List: {
      Type elem = Type::error();
      bool first = true;
      for (const ast::ExprPtr& x : e.elems) {
        Type t = check_expr(*x, c);
        if (first) {
          elem = t;
          first = false;
        } else if (elem.kind == TK::Int && t.kind == TK::Float) {
          elem = t;  // [1, 2.5] is a list of floats
        } else if (!same_type(elem, t) &&
                   !(elem.is_host_number() && t.is_host_number())) {
          error(Code::E0303,
                x->span,
                "list items must have one type: this is " + t.str() +
                    ", the first is " + elem.str(),
                "this is " + t.str());
        }
      }
      return record(e, Type::list(elem));
    }
    case EK::Tuple: {
      std::vector<Type> elems;
      for (const ast::ExprPtr& x : e.elems) elems.push_back(check_expr(*x, c));
      return record(e, Type::tuple(std::move(elems)));
    }
    case EK::Comprehension: {
      Type it = e.iter ? check_expr(*e.iter, c) : Type::error();
      Type el = element_type(it, e.iter ? e.iter->span : e.span);
      c.values.push();
      std::vector<ast::NameTarget> targets;
      for (const std::string& n : e.targets) targets.push_back({e.span, n});
      bind_targets(targets, el, e.span, c, false);
      if (e.cond) check_condition(*e.cond, c);
      Type t = e.elem ? check_expr(*e.elem, c) : Type::error();
      c.values.pop();
      return record(e, Type::list(t));
    }
    case EK::Unary:
      return check_unary(e, c);
    case EK::Binary:
      return check_binary(e, c);
    case EK::Call:
      return check_call(e, c);
    case EK::Field:
      return check_field(e, c);
    case EK::Index:
      return check_index(e, c);
    case EK::TypeLit: {
      Type inner = type_value(e, c);
      if (inner.is_error()) return record(e, inner);
      Type t = Type::of(TK::TypeValue);
      t.elems.push_back(inner);
      return record(e, t);
    }
    case EK::AxisRef:
      error(Code::E0101,
            e.span,
            "an axis is not a value here",
            "axes are arguments of over=, split=, concat=, new= and as=");
      return record(e, Type::error());
  }
  return record(e, Type::error());
}

Type Checker::check_name(const ast::Expr& e, FnCtx& c) {
  const std::string& n = e.name;
  Resolution r;
  r.name = n;
  if (Local* l = c.values.find(n)) {
    r.kind = Resolution::Kind::Local;
    r.decl = l->span;
    return record(e, l->type, r);
  }
  auto d = prog_->dims_.find(n);
  if (d != prog_->dims_.end()) {
    r.kind = Resolution::Kind::Dim;
    return record(e, Type::of(TK::Int), r);
  }
  if (const FnInfo* f = find_fn(n)) {
    r.kind = Resolution::Kind::Fn;
    r.fn = f;
    Type t = Type::of(TK::Fn);
    t.fn_name = n;
    return record(e, t, r);
  }
  if (const types::ModelInfo* m = prog_->model(n)) {
    r.kind = Resolution::Kind::Model;
    Type mt = Type::of(TK::Model);
    mt.model = m;
    Type t = Type::of(TK::TypeValue);
    t.elems.push_back(mt);
    return record(e, t, r);
  }
  if (const types::RecordInfo* rec = prog_->record(n)) {
    r.kind = Resolution::Kind::Record;
    Type rt = Type::of(TK::Record);
    rt.record = rec;
    Type t = Type::of(TK::TypeValue);
    t.elems.push_back(rt);
    return record(e, t, r);
  }
  if (n == "Eval") {
    r.kind = Resolution::Kind::Constant;
    return record(e, Type::of(TK::Mode), r);
  }
  if (const ops::OpDef* op = ops::find_op(n)) {
    r.kind = Resolution::Kind::Builtin;
    r.op = op;
    Type t = Type::of(TK::Fn);
    t.fn_name = n;
    return record(e, t, r);
  }
  if (auto dt = types::dtype_from_name(n)) {
    Type t = Type::of(TK::TypeValue);
    t.elems.push_back(Type::scalar(*dt));
    return record(e, t, r);
  }
  // A dtype variable (`to(x, T)`): this instance's dtype.
  if (auto dv = c.axes.dtypes.find(n); dv != c.axes.dtypes.end()) {
    Type t = Type::of(TK::TypeValue);
    t.elems.push_back(Type::scalar(dv->second));
    return record(e, t, r);
  }
  // An axis name used as a value: size variables are not numbers.
  if (auto ax = lookup_axis(n, c.axes)) {
    auto& diag = error(Code::E0201,
                       e.span,
                       "`" + n + "` is an axis, not a value",
                       "axis used as a value");
    diag.help("use size(x, " + n + ") for its size");
    return record(e, Type::error());
  }
  auto& diag = error(Code::E0201,
                     e.span,
                     "unknown name `" + n + "`",
                     "not a local, fn, dim, model or builtin");
  // Past the errors kept, no walk over the names (Note [The first errors]).
  if (!diags_.kept(diag)) return record(e, Type::error());
  std::vector<std::string> cands = value_names(&c);
  // Locals in scope are the likeliest intended names.
  if (c.fn)
    for (const auto& [ln, lt] : c.fn->locals) cands.push_back(ln);
  if (c.fn)
    for (const ParamInfo& p : c.fn->params) cands.push_back(p.name);
  std::string s = suggest(n, cands);
  if (!s.empty()) did_you_mean(diag, s, e.span);
  return record(e, Type::error());
}

Type Checker::field_of(const Type& base,
                       const std::string& name,
                       diag::Span at,
                       diag::Span name_span) {
  auto unknown = [&](const std::string& what,
                     const std::vector<std::string>& fields) {
    auto& d = error(Code::E0203,
                    name_span,
                    what + " has no field `" + name + "`",
                    "unknown field");
    (void)d;
    std::string s = suggest(name, fields);
    if (!s.empty()) {
      did_you_mean(d, s, name_span);
    } else if (!fields.empty()) {
      std::string all;
      for (const std::string& f : fields) all += (all.empty() ? "" : ", ") + f;
      d.note("its fields are: " + all);
    }
    return Type::error();
  };
  switch (base.kind) {
    case TK::Error:
      return Type::error();
    case TK::Record:
    case TK::Batch: {
      std::vector<std::string> names;
      for (const types::FieldInfo& f : base.record->fields)
        names.push_back(f.name);
      const types::FieldInfo* f = base.record->field(name);
      if (!f && base.kind == TK::Batch && name.rfind("mask_", 0) == 0) {
        // `mask_n`: which items are real in a field padded along `n`.
        std::string var = name.substr(5);
        for (const types::FieldInfo& fi : base.record->fields)
          for (const Axis& a : fi.type.shape)
            if (a.kind == Axis::Kind::Var && a.name == var)
              return Type::tensor({base.shape[0], a}, types::DType::Bool);
      }
      if (!f) return unknown("record `" + base.record->name + "`", names);
      Type t = f->type;
      if (base.kind == TK::Batch)
        t.shape.insert(t.shape.begin(), base.shape[0]);
      return t;
    }
    case TK::Model:
    case TK::Grads: {
      std::vector<std::string> names;
      for (const types::FieldInfo& f : base.model->fields)
        names.push_back(f.name);
      const types::FieldInfo* f = base.model->field(name);
      if (!f) return unknown("model `" + base.model->name + "`", names);
      if (base.kind == TK::Grads && f->buffer) {
        error(Code::E0203,
              name_span,
              "`" + name + "` is a buffer of `" + base.model->name +
                  "`: buffers get no gradient",
              "not in Grads[" + base.model->name + "]");
        return Type::error();
      }
      Type mt = base;
      if (base.kind == TK::Grads) {
        mt.kind = TK::Model;
      }
      Type t = types::model_field_type(mt, *f);
      if (base.kind == TK::Grads && t.kind == TK::Model) {
        t.kind = TK::Grads;  // g.sub is the sub-model's gradients
      }
      return t;
    }
    case TK::Optim:
      if (name == "step") return Type::of(TK::Int);
      if (name == "lr" || name == "loss_scale") return Type::of(TK::Float);
      return unknown(base.str(), {"step", "lr", "loss_scale"});
    case TK::Logs: {
      std::vector<std::string> names;
      for (const auto& [fname, ft] : base.fields) {
        if (fname == name) return ft;
        names.push_back(fname);
      }
      if (base.open) return Type::scalar(types::DType::F32);
      return unknown("this Logs value", names);
    }
    default:
      break;
  }
  error(Code::E0203,
        name_span,
        base.str() + " has no fields (looking for `" + name + "`)",
        "not a record, model, optimizer or logs");
  (void)at;
  return Type::error();
}

Type Checker::check_field(const ast::Expr& e, FnCtx& c) {
  if (!e.lhs) return record(e, Type::error());
  Type base = check_expr(*e.lhs, c);
  return record(e, field_of(base, e.name, e.span, e.name_span));
}

Type Checker::check_index(const ast::Expr& e, FnCtx& c) {
  if (!e.lhs) return record(e, Type::error());
  Type base = check_expr(*e.lhs, c);
  std::vector<Type> idx;
  for (const ast::IndexItem& it : e.indices) {
    if (it.is_slice) {
      if (it.lo) idx.push_back(check_expr(*it.lo, c));
      if (it.hi) idx.push_back(check_expr(*it.hi, c));
      for (const Type& t : idx)
        if (!t.is_error() && t.kind != TK::Int)
          error(Code::E0303,
                it.span,
                "slice bounds must be host ints",
                "this bound is " + t.str());
      idx.clear();
    } else if (it.index) {
      check_expr(*it.index, c);
    }
  }
  switch (base.kind) {
    case TK::Error:
      return record(e, base);
    case TK::List:
      if (e.indices.size() == 1 && !e.indices[0].is_slice)
        return record(e, base.elems.empty() ? Type::error() : base.elems[0]);
      if (e.indices.size() == 1) return record(e, base);
      break;
    case TK::Tuple:
      if (e.indices.size() == 1 && !e.indices[0].is_slice &&
          e.indices[0].index) {
        auto k = const_int(*e.indices[0].index);
        if (!k) {
          error(Code::E0303,
                e.indices[0].span,
                "a tuple is indexed by a constant",
                "not a constant");
          return record(e, Type::error());
        }
        int64_t n = static_cast<int64_t>(base.elems.size());
        int64_t i = *k < 0 ? *k + n : *k;
        if (i < 0 || i >= n) {
          error(Code::E0303,
                e.indices[0].span,
                "index " + std::to_string(*k) + " is out of range for " +
                    base.str(),
                "a " + std::to_string(n) + "-tuple");
          return record(e, Type::error());
        }
        return record(e, base.elems[i]);
      }
      break;
    case TK::Model:
      if (!base.stack.empty() && e.indices.size() == 1 &&
          !e.indices[0].is_slice) {
        Type m = base;
        m.stack.erase(m.stack.begin());
        return record(e, m);
      }
      break;
    case TK::Tensor: {
      if (e.indices.size() > base.shape.size()) {
        error(Code::E0303,
              e.span,
              "too many indices: " + std::to_string(e.indices.size()) +
                  " for " + base.str(),
              "has " + std::to_string(base.shape.size()) + " axes");
        return record(e, Type::error());
      }
      Type r = base;
      std::vector<Axis> shape;
      for (size_t i = 0; i < base.shape.size(); ++i) {
        if (i >= e.indices.size()) {
          shape.push_back(base.shape[i]);
          continue;
        }
        const ast::IndexItem& it = e.indices[i];
        if (it.is_slice) {
          if (!it.lo && !it.hi) {
            shape.push_back(base.shape[i]);
            continue;
          }
          auto n = base.shape[i].static_size();
          std::optional<int64_t> lo = it.lo ? const_int(*it.lo) : 0;
          std::optional<int64_t> hi = it.hi ? const_int(*it.hi) : n;
          if (lo && hi && n) {
            int64_t l = *lo < 0 ? *lo + *n : *lo, h = *hi < 0 ? *hi + *n : *hi;
            l = std::clamp<int64_t>(l, 0, *n);
            h = std::clamp<int64_t>(h, 0, *n);
            if (h <= l) {
              error(Code::E0303,
                    it.span,
                    "this slice of " + base.shape[i].str_sized() + " is empty",
                    "no elements");
              return record(e, Type::error());
            }
            shape.push_back(Axis::lit(h - l));
          } else if (lo && hi && it.lo && it.hi && *hi > *lo && *lo >= 0) {
            shape.push_back(Axis::lit(*hi - *lo));
          } else {
            shape.push_back(fresh_var(base.shape[i].str()));
          }
          continue;
        }
        const Type& t = prog_->type_of(it.index.get());
        if (t.kind == TK::Int || t.is_error()) continue;  // drops the axis
        if (t.kind == TK::Tensor && types::is_int(t.dtype)) {
          shape.insert(shape.end(), t.shape.begin(), t.shape.end());
          continue;
        }
        error(Code::E0304,
              it.span,
              "an index must be an int or an int tensor, found " + t.str(),
              "this is " + t.str());
        return record(e, Type::error());
      }
      r.shape = std::move(shape);
      return record(e, r);
    }
    default:
      break;
  }
  error(Code::E0303,
        e.span,
        "cannot index " + base.str(),
        "not a tensor, list, tuple or stacked model");
  return record(e, Type::error());
}

Type Checker::binary_type(ast::BinaryOp op,
                          const Type& a,
                          const Type& b,
                          diag::Span at,
                          diag::Span a_span,
                          diag::Span b_span) {
  using B = ast::BinaryOp;
  if (a.is_error() || b.is_error()) return Type::error();
  bool cmp = op == B::Eq || op == B::Ne || op == B::Lt || op == B::Le ||
             op == B::Gt || op == B::Ge;
  // Host strings: concatenation and comparison.
  if (a.kind == TK::Str || b.kind == TK::Str) {
    if (a.kind == TK::Str && b.kind == TK::Str) {
      if (op == B::Add) return Type::of(TK::Str);
      if (cmp) return Type::of(TK::Bool);
    }
    error(Code::E0303,
          at,
          std::string("`") + ast::binary_op_spelling(op) +
              "` does not apply "
              "to " +
              a.str() + " and " + b.str(),
          "unsupported operands");
    return Type::error();
  }
  if ((op == B::And || op == B::Or) && !a.is_tensor() && !b.is_tensor())
    return Type::of(TK::Bool);
  // Note [Arithmetic over params]: gradients, and a model's params, take
  // + - * / ** field by field, with each other (of one model type) or with
  // a host number on either side, as JAX's tree_map(lambda a, b: a * b)
  // over pytrees: an optimizer's moments (g * g, v ** 0.5 + eps) and an
  // EMA (m * 0.999 + n * 0.001) are written once for every field. A model
  // in arithmetic stands for its params (buffers are not arithmetic), so
  // the result is a Grads[M]: values shaped as M's params, which
  // set_params(mut m, p) writes back. The unary elementwise builtins map
  // the same way (sqrt(v), abs(g): OpDef::maps_over_params, run by
  // call_builtin_forward).
  auto params_of = [](const Type& t) {
    Type g = t;
    if (t.kind == TK::Model) g.kind = TK::Grads;
    return g;
  };
  const bool tree_a = a.kind == TK::Grads || a.kind == TK::Model;
  const bool tree_b = b.kind == TK::Grads || b.kind == TK::Model;
  if (tree_a || tree_b) {
    const bool arith = op == B::Add || op == B::Sub || op == B::Mul ||
                       op == B::Div || op == B::Pow;
    const Type& tree = tree_a ? a : b;
    const bool same_model = tree_a && tree_b && a.model == b.model &&
                            a.model_args == b.model_args &&
                            a.model_dtype == b.model_dtype &&
                            a.stack == b.stack;
    const bool ok = arith && (same_model || (tree_a && b.is_host_number()) ||
                              (tree_b && a.is_host_number()));
    if (ok) return params_of(tree);
    error(Code::E0303,
          at,
          std::string("`") + ast::binary_op_spelling(op) +
              "` does not apply to " + a.str() + " and " + b.str(),
          "gradients and params take + - * / ** field by field, with each "
          "other (one model type) or a number")
        .help("or one field at a time: a.w + b.w");
    return Type::error();
  }
  if (!a.is_numeric() || !b.is_numeric()) {
    if (cmp && (op == B::Eq || op == B::Ne) && a.kind == b.kind)
      return Type::of(TK::Bool);
    error(Code::E0303,
          at,
          std::string("`") + ast::binary_op_spelling(op) +
              "` does not apply to " + a.str() + " and " + b.str(),
          "needs tensors or numbers");
    return Type::error();
  }
  const ops::OpDef& def = operator_def(op);
  std::vector<RuleArg> args(2);
  args[0] = {true, a, a_span, nullptr, {}};
  args[1] = {true, b, b_span, nullptr, {}};
  return apply_rule(def, std::move(args), at, nullptr);
}

// `x @ m.w2` where another field of m would contract: say which.
void Checker::suggest_matmul_field(const ast::Expr& e, const Type& lhs) {
  diag::Diagnostic* d = diags_.last();
  if (!d || d->code != Code::E0302 || lhs.kind != TK::Tensor ||
      lhs.shape.empty() || e.rhs->kind != EK::Field || !e.rhs->lhs)
    return;
  const Type& base = prog_->type_of(e.rhs->lhs.get());
  if (base.kind != TK::Model) return;
  const Axis& want = lhs.shape.back();
  for (const types::FieldInfo& f : base.model->fields) {
    if (f.name == e.rhs->name) continue;
    Type ft = types::model_field_type(base, f);
    if (ft.kind == TK::Tensor && !ft.shape.empty() && ft.shape[0] == want) {
      const std::string other = text(e.rhs->lhs->span) + "." + f.name;
      d->help("did you mean " + other + ", which is " + ft.str() + "?",
              {"Change to `" + other + "`", e.rhs->span, other});
      return;
    }
  }
}

Type Checker::check_binary(const ast::Expr& e, FnCtx& c) {
  if (!e.lhs || !e.rhs) return record(e, Type::error());
  Type a = check_expr(*e.lhs, c);
  Type b = check_expr(*e.rhs, c);
  // Note [Autocast]: `a @ b` in an autocast instance runs in its dtype.
  if (c.autocast && (a.is_tensor() || b.is_tensor()))
    if (std::optional<types::DType> to =
            autocast_target(check::operator_def(e.binary_op), *c.autocast)) {
      autocast_type(a, *to);
      autocast_type(b, *to);
      info_for(&e).autocast = to;
    }
  size_t before = diags_.size();
  Type t = binary_type(e.binary_op, a, b, e.span, e.lhs->span, e.rhs->span);
  if (e.binary_op == ast::BinaryOp::MatMul && diags_.size() > before)
    suggest_matmul_field(e, a);
  // Varying sets (spmd): an op's result varies over its operands' union.
  if (t.kind == TK::Tensor && t.varying.empty()) {
    std::set<std::string> v(a.varying.begin(), a.varying.end());
    v.insert(b.varying.begin(), b.varying.end());
    t.varying.assign(v.begin(), v.end());
  }
  return record(e, t);
}

Type Checker::check_unary(const ast::Expr& e, FnCtx& c) {
  if (!e.lhs) return record(e, Type::error());
  Type a = check_expr(*e.lhs, c);
  if (a.is_error()) return record(e, a);
  switch (e.unary_op) {
    case ast::UnaryOp::Plus:
    case ast::UnaryOp::Neg:
      if (a.kind == TK::Int || a.kind == TK::Float) return record(e, a);
      if (a.kind == TK::Bool) return record(e, Type::of(TK::Int));
      if (a.kind == TK::Grads) return record(e, a);
      if (a.kind != TK::Tensor) break;
      if (e.unary_op == ast::UnaryOp::Plus) return record(e, a);
      if (const ops::OpDef* def = operator_def(e.unary_op)) {
        std::vector<RuleArg> args(1);
        args[0] = {true, a, e.lhs->span, e.lhs.get(), {}};
        Type t = apply_rule(*def, std::move(args), e.span, &c);
        if (t.kind == TK::Tensor) t.varying = a.varying;
        return record(e, t);
      }
      return record(e, a);
    case ast::UnaryOp::Not:
      if (a.kind == TK::Bool || a.kind == TK::Int)
        return record(e, Type::of(TK::Bool));
      if (a.kind != TK::Tensor) break;
      if (const ops::OpDef* def = operator_def(e.unary_op)) {
        std::vector<RuleArg> args(1);
        args[0] = {true, a, e.lhs->span, e.lhs.get(), {}};
        Type t = apply_rule(*def, std::move(args), e.span, &c);
        if (t.kind == TK::Tensor) t.varying = a.varying;
        return record(e, t);
      }
      return record(e, a);
  }
  error(Code::E0303,
        e.span,
        std::string("`") + ast::unary_op_spelling(e.unary_op) +
            "` does not apply to " + a.str(),
        "this is " + a.str());
  return record(e, Type::error());
}

// ------------------------------------------------------------ constants

std::optional<int64_t> Checker::const_int(const ast::Expr& e) {
  switch (e.kind) {
    case EK::Int:
      return e.int_value;
    case EK::Bool:
      return e.bool_value ? 1 : 0;
    case EK::Name: {
      auto d = prog_->dims_.find(e.name);
      if (d != prog_->dims_.end()) return d->second;
      return std::nullopt;
    }
    case EK::Unary:
      if (!e.lhs) return std::nullopt;
      if (auto v = const_int(*e.lhs)) {
        if (e.unary_op == ast::UnaryOp::Neg) return -*v;
        if (e.unary_op == ast::UnaryOp::Plus) return *v;
      }
      return std::nullopt;
    case EK::Binary: {
      if (!e.lhs || !e.rhs) return std::nullopt;
      auto a = const_int(*e.lhs), b = const_int(*e.rhs);
      if (!a || !b) return std::nullopt;
      // Guard against overflow: sizes beyond 2^62 are not sizes.
      constexpr int64_t kMax = int64_t(1) << 62;
      auto ok = [&](__int128 v) -> std::optional<int64_t> {
        if (v > kMax || v < -kMax) return std::nullopt;
        return static_cast<int64_t>(v);
      };
      switch (e.binary_op) {
        case ast::BinaryOp::Add:
          return ok(__int128(*a) + *b);
        case ast::BinaryOp::Sub:
          return ok(__int128(*a) - *b);
        case ast::BinaryOp::Mul:
          return ok(__int128(*a) * *b);
        case ast::BinaryOp::FloorDiv:
          if (*b == 0) return std::nullopt;
          return ok(static_cast<__int128>(
              std::floor(static_cast<long double>(*a) / *b)));
        case ast::BinaryOp::Mod: {
          if (*b == 0) return std::nullopt;
          int64_t m = *a % *b;
          if (m != 0 && ((m < 0) != (*b < 0))) m += *b;
          return m;
        }
        case ast::BinaryOp::Pow: {
          if (*b < 0 || *b > 62) return std::nullopt;
          __int128 r = 1;
          for (int64_t i = 0; i < *b; ++i) {
            r *= *a;
            if (r > kMax || r < -kMax) return std::nullopt;
          }
          return ok(r);
        }
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

std::optional<double> Checker::const_float(const ast::Expr& e) {
  switch (e.kind) {
    case EK::Float:
      return e.float_value;
    case EK::Unary:
      if (!e.lhs) return std::nullopt;
      if (auto v = const_float(*e.lhs)) {
        if (e.unary_op == ast::UnaryOp::Neg) return -*v;
        if (e.unary_op == ast::UnaryOp::Plus) return *v;
      }
      return std::nullopt;
    case EK::Binary: {
      if (!e.lhs || !e.rhs) return std::nullopt;
      if (auto i = const_int(e)) return static_cast<double>(*i);
      auto a = const_float(*e.lhs), b = const_float(*e.rhs);
      if (!a || !b) return std::nullopt;
      switch (e.binary_op) {
        case ast::BinaryOp::Add:
          return *a + *b;
        case ast::BinaryOp::Sub:
          return *a - *b;
        case ast::BinaryOp::Mul:
          return *a * *b;
        case ast::BinaryOp::Div:
          if (*b == 0) return std::nullopt;
          return *a / *b;
        case ast::BinaryOp::Pow:
          return std::pow(*a, *b);
        default:
          return std::nullopt;
      }
    }
    default:
      if (auto i = const_int(e)) return static_cast<double>(*i);
      return std::nullopt;
  }
}

Type Checker::type_value(const ast::Expr& e, FnCtx& c) {
  switch (e.kind) {
    case EK::TypeLit: {
      if (!e.type) return Type::error();
      Type t = resolve_type(*e.type, c.axes, false);
      // Evaluation reads type arguments from the program.
      Type tv = Type::of(TK::TypeValue);
      tv.elems.push_back(t);
      record(e, tv);
      return t;
    }
    case EK::List: {
      // A list of sizes: ints and dims, `[2, 8, F]`.
      std::vector<Axis> shape;
      for (const ast::ExprPtr& x : e.elems) {
        if (x->kind == EK::Name) {
          if (auto ax = lookup_axis(x->name, c.axes)) {
            shape.push_back(*ax);
            continue;
          }
        }
        if (auto v = const_int(*x)) {
          if (*v < 1) {
            error(Code::E0303,
                  x->span,
                  "a size must be positive",
                  "size " + std::to_string(*v));
            return Type::error();
          }
          shape.push_back(Axis::lit(*v));
          continue;
        }
        Type t = check_expr(*x, c);
        if (t.is_error()) return t;
        if (t.kind == TK::Int) {
          // Note [Two sizes of one name]: which value made it.
          Axis v = fresh_var("n");
          v.made_by = text(x->span);
          v.made_at = x->span;
          shape.push_back(std::move(v));
          continue;
        }
        error(Code::E0303,
              x->span,
              "a size must be an int or an axis name",
              "this is " + t.str());
        return Type::error();
      }
      return Type::tensor(std::move(shape));
    }
    default: {
      Type t = check_expr(e, c);
      if (t.kind == TK::TypeValue && !t.elems.empty()) return t.elems[0];
      if (t.is_error()) return t;
      error(Code::E0303,
            e.span,
            "expected a type here, found " + t.str(),
            "not a type")
          .help("write a type such as [b D], [2, 8] or f64");
      return Type::error();
    }
  }
}

}  // namespace ss::check
