// The checker's side of ops::RuleCtx: one builtin call's arguments as its
// shape rule sees them (types, axis arguments resolved among the fn's
// axes, constants), where the resolved axes are recorded for evaluation,
// and apply_rule, which runs a rule and sets the varying set and E0310's
// taint of its result.
#include <functional>

#include "interp/check/checker_impl.h"

namespace ss::check {

using diag::Code;
using EK = ast::Expr::Kind;

namespace {

// The checker's side of RuleCtx: one builtin call's arguments.
class BuiltinCtx final : public ops::RuleCtx {
 public:
  BuiltinCtx(Checker& ck,
             const ops::OpDef& op,
             std::vector<RuleArg> args,
             std::vector<RuleArg> extras,
             diag::Span at,
             FnCtx* c,
             const ast::Expr* call)
      : ck_(ck),
        op_(op),
        args_(std::move(args)),
        extras_(std::move(extras)),
        at_(at),
        c_(c),
        call_(call) {
    args_.resize(op.params.size());
  }

  bool has(size_t i) const override {
    return i < args_.size() && args_[i].present;
  }
  const Type& type(size_t i) const override {
    static const Type kError;
    return has(i) ? args_[i].type : kError;
  }
  diag::Span span(size_t i) const override {
    return has(i) ? args_[i].span : at_;
  }
  diag::Span call_span() const override { return at_; }
  std::string text(size_t i) const override {
    return has(i) ? ck_.text(args_[i].span) : std::string();
  }
  size_t extra_count() const override {
    size_t n = 0;
    for (const RuleArg& a : extras_) n += a.keyword.empty();
    return n;
  }
  const Type& extra_type(size_t k) const override {
    return positional_extra(k).type;
  }
  diag::Span extra_span(size_t k) const override {
    return positional_extra(k).span;
  }
  std::vector<std::pair<std::string, Type>> extra_keywords() const override {
    std::vector<std::pair<std::string, Type>> v;
    for (const RuleArg& a : extras_)
      if (!a.keyword.empty()) v.push_back({a.keyword, a.type});
    return v;
  }

  std::optional<Axis> axis(size_t i) override {
    if (!has(i) || !args_[i].expr) return std::nullopt;
    auto a = resolve_axis_arg(*args_[i].expr);
    if (a && call_) ck_.info_for(call_).axis_args[static_cast<int>(i)] = *a;
    return a;
  }

  std::optional<std::vector<size_t>> over(
      size_t i, const std::vector<Axis>& shape) override {
    if (!has(i) || !args_[i].expr) return std::nullopt;
    const ast::Expr& e = *args_[i].expr;
    std::vector<const ast::Expr*> parts;
    if (e.kind == EK::Tuple)
      for (const auto& x : e.elems) parts.push_back(x.get());
    else
      parts.push_back(&e);
    std::vector<size_t> out;
    for (const ast::Expr* p : parts) {
      auto pos = position(*p, shape);
      if (!pos) return std::nullopt;
      for (size_t q : out)
        if (q == *pos) {
          ck_.error(Code::E0308,
                    p->span,
                    "over= names the axis " + shape[q].str() + " twice",
                    "named again here");
          return std::nullopt;
        }
      out.push_back(*pos);
    }
    // Evaluation reads the positions the checker resolved.
    if (call_) {
      std::vector<int>& rec = ck_.info_for(call_).axes[static_cast<int>(i)];
      rec.assign(out.begin(), out.end());
    }
    return out;
  }

  Type type_arg(size_t i) override {
    if (!has(i) || !args_[i].expr) return Type::error();
    if (!c_) return Type::error();
    Type t = ck_.type_value(*args_[i].expr, *c_);
    // Recorded on the argument when nothing typed it as a value (a size
    // list `[o, i]`), so the evaluator reads the sizes from the type: a
    // size variable has no value to evaluate (Note [Size lists]).
    ExprInfo& info = ck_.info_for(args_[i].expr);
    if (info.type.is_error() && !t.is_error()) {
      info.type = Type::of(TK::TypeValue);
      info.type.elems.push_back(t);
    }
    return t;
  }
  std::optional<int64_t> const_int(size_t i) override {
    if (!has(i) || !args_[i].expr) return std::nullopt;
    return ck_.const_int(*args_[i].expr);
  }
  std::optional<double> const_float(size_t i) override {
    if (!has(i) || !args_[i].expr) return std::nullopt;
    return ck_.const_float(*args_[i].expr);
  }
  std::optional<std::vector<int64_t>> const_int_tuple(size_t i) override {
    if (!has(i) || !args_[i].expr ||
        args_[i].expr->kind != ast::Expr::Kind::Tuple)
      return std::nullopt;
    std::vector<int64_t> out;
    for (const ast::ExprPtr& e : args_[i].expr->elems) {
      std::optional<int64_t> v = e ? ck_.const_int(*e) : std::nullopt;
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
  std::optional<std::string> const_str(size_t i) override {
    if (!has(i) || !args_[i].expr) return std::nullopt;
    const ast::Expr& e = *args_[i].expr;
    if (e.kind == EK::String) return e.name;
    return std::nullopt;
  }
  std::optional<bool> const_bool(size_t i) override {
    if (!has(i) || !args_[i].expr) return std::nullopt;
    const ast::Expr& e = *args_[i].expr;
    if (e.kind == EK::Bool) return e.bool_value;
    return std::nullopt;
  }
  std::optional<std::vector<std::string>> mesh_axes(size_t i) override {
    if (!has(i) || !args_[i].expr) return std::nullopt;
    const ast::Expr& e = *args_[i].expr;
    std::vector<std::pair<std::string, diag::Span>> names;
    std::function<bool(const ast::Expr&)> collect = [&](const ast::Expr& x) {
      if (x.kind == EK::Name) {
        names.push_back({x.name, x.span});
        return true;
      }
      if (x.kind == EK::Tuple) {
        for (const auto& y : x.elems)
          if (!collect(*y)) return false;
        return true;
      }
      if (x.kind == EK::AxisRef && x.axis) {
        std::function<bool(const ast::AxisExpr&)> ax =
            [&](const ast::AxisExpr& a) {
              if (a.kind == ast::AxisExpr::Kind::Name) {
                names.push_back({a.name, a.span});
                return true;
              }
              if (a.kind == ast::AxisExpr::Kind::Group) {
                for (const auto& it : a.items)
                  if (!ax(it)) return false;
                return true;
              }
              return false;
            };
        return ax(*x.axis);
      }
      return false;
    };
    if (!collect(e) || names.empty()) {
      ck_.error(Code::E2002,
                e.span,
                std::string(op_.name) +
                    " needs mesh axes, such as x or "
                    "(x, y)",
                "not mesh axis names");
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& [n, sp] : names) {
      if (!mesh_axis(n)) {
        ck_.error(Code::E2002,
                  sp,
                  std::string(op_.name) + " over `" + n +
                      "`, which is not an axis of the mesh",
                  ck_.prog_->mesh().empty() ? "the program declares no mesh"
                                            : "not a mesh axis");
        return std::nullopt;
      }
      out.push_back(n);
    }
    if (call_) ck_.info_for(call_).mesh_args[static_cast<int>(i)] = out;
    return out;
  }
  Axis size_axis(size_t i) override {
    if (!has(i) || !args_[i].expr) return fresh("n");
    const ast::Expr& e = *args_[i].expr;
    if (e.kind == EK::Name && !(c_ && c_->values.find(e.name)))
      if (auto d = ck_.prog_->dims().find(e.name); d != ck_.prog_->dims().end())
        return Axis::dim(e.name, d->second);
    if (auto v = ck_.const_int(e); v && *v >= 1) return Axis::lit(*v);
    return fresh("n");
  }
  std::optional<std::vector<int64_t>> list_shape(size_t i) override {
    if (!has(i) || !args_[i].expr) return std::nullopt;
    std::vector<int64_t> shape;
    const ast::Expr* e = args_[i].expr;
    while (e->kind == EK::List) {
      shape.push_back(static_cast<int64_t>(e->elems.size()));
      if (e->elems.empty()) break;
      // Rectangular: every item at this level has the first one's length.
      for (const auto& x : e->elems)
        if ((x->kind == EK::List) != (e->elems[0]->kind == EK::List) ||
            (x->kind == EK::List &&
             x->elems.size() != e->elems[0]->elems.size()))
          return std::nullopt;
      e = e->elems[0].get();
    }
    return shape;
  }
  std::optional<std::vector<IntPair>> const_int_pairs(size_t i) override {
    if (!has(i) || !args_[i].expr || args_[i].expr->kind != EK::List)
      return std::nullopt;
    std::vector<IntPair> pairs;
    for (const auto& x : args_[i].expr->elems) {
      if (x->kind != EK::Tuple || x->elems.size() != 2) return std::nullopt;
      auto a = ck_.const_int(*x->elems[0]), b = ck_.const_int(*x->elems[1]);
      if (!a || !b) return std::nullopt;
      pairs.push_back({*a, *b, x->span});
    }
    return pairs;
  }
  diag::Diagnostic& error(diag::Code code,
                          diag::Span span,
                          std::string message,
                          std::string label) override {
    return ck_.error(code, span, std::move(message), std::move(label));
  }
  Axis fresh(const std::string& name) override {
    // Note [Two sizes of one name]: which call made it, for messages.
    Axis v = ck_.fresh_var(name);
    v.made_by = op_name();
    v.made_at = call_span();
    return v;
  }
  std::optional<std::string> autocast_instance(const std::string& fn,
                                               types::DType to,
                                               diag::Span at) override {
    return ck_.autocast_instance(fn, to, at);
  }
  Type call_fn(const Type& fn,
               const std::vector<Type>& args,
               diag::Span at) override {
    // The argument that named the fn learns which instance of a generic
    // fn these arguments bind (Note [Dtype variables]): the plan's call
    // sites and evaluation read it from there.
    const ast::Expr* named = nullptr;
    for (const RuleArg& a : args_)
      if (a.present && a.expr && a.type.kind == TK::Fn &&
          a.type.fn_name == fn.fn_name)
        named = a.expr;
    return ck_.call_fn_value(fn, args, at, c_, named);
  }
  std::optional<int64_t> mesh_axis(const std::string& name) const override {
    for (const MeshAxis& m : ck_.prog_->mesh())
      if (m.name == name) return m.size;
    return std::nullopt;
  }
  bool in_spmd() const override { return c_ && c_->in_spmd; }
  void record_loss_varying(const std::vector<std::string>& v) override {
    // Inside an spmd fn's body only: an ordinary fn's types carry no
    // varying sets.
    if (call_ && in_spmd()) ck_.info_for(call_).loss_varying = v;
  }
  const char* op_name() const override { return op_.name; }

 private:
  const RuleArg& positional_extra(size_t k) const {
    for (const RuleArg& a : extras_)
      if (a.keyword.empty() && k-- == 0) return a;
    static const RuleArg kNone;
    return kNone;
  }

  // A name among axes: aliases, size variables, dims, then mesh axes
  // (returned as a Dim carrying the mesh axis's name and size). A tuple
  // `(x, y)` of mesh axes comes back as a group of them.
  std::optional<Axis> resolve_axis_arg(const ast::Expr& e) {
    static const AxisScope kEmpty;
    const AxisScope& scope = c_ ? c_->axes : kEmpty;
    std::string name;
    if (e.kind == EK::Name) {
      name = e.name;
    } else if (e.kind == EK::AxisRef && e.axis &&
               e.axis->kind == ast::AxisExpr::Kind::Name) {
      name = e.axis->name;
    } else if (e.kind == EK::AxisRef && e.axis) {
      AxisScope s = scope;
      return ck_.resolve_axis(*e.axis, s, false);
    } else if (e.kind == EK::Tuple) {
      std::vector<Axis> items;
      for (const auto& x : e.elems) {
        auto a = resolve_axis_arg(*x);
        if (!a) return std::nullopt;
        items.push_back(*a);
      }
      return Axis::group(std::move(items));
    } else if (auto v = ck_.const_int(e)) {
      return Axis::lit(*v);
    } else {
      ck_.error(
          Code::E0303, e.span, "expected an axis name here", "not an axis");
      return std::nullopt;
    }
    if (auto a = ck_.lookup_axis(name, scope)) return a;
    for (const MeshAxis& m : ck_.prog_->mesh())
      if (m.name == name) return Axis::dim(name, m.size);
    auto& d = ck_.error(Code::E0201,
                        e.span,
                        "unknown axis `" + name + "`",
                        "not a dim, size variable or mesh axis in scope");
    std::vector<std::string> cands;
    for (const auto& [n, _] : scope.names) cands.push_back(n);
    for (const auto& [n, _] : ck_.prog_->dims()) cands.push_back(n);
    std::string s = suggest(name, cands);
    if (!s.empty()) did_you_mean(d, s, e.span);
    return std::nullopt;
  }

  // One over= item: a name, a group, or a position.
  std::optional<size_t> position(const ast::Expr& p,
                                 const std::vector<Axis>& shape) {
    std::optional<int64_t> idx;
    if (p.kind == EK::AxisRef && p.axis &&
        p.axis->kind == ast::AxisExpr::Kind::Literal)
      idx = p.axis->value;
    else if (p.kind == EK::Int || p.kind == EK::Unary)
      idx = ck_.const_int(p);
    if (idx) {
      int64_t n = static_cast<int64_t>(shape.size());
      int64_t k = *idx < 0 ? *idx + n : *idx;
      if (k < 0 || k >= n) {
        ck_.error(Code::E0308,
                  p.span,
                  "over=" + std::to_string(*idx) + " is out of range for " +
                      types::shape_str(shape),
                  "has " + std::to_string(n) + " axes");
        return std::nullopt;
      }
      return static_cast<size_t>(k);
    }
    std::string written = ck_.text(p.span);
    std::optional<Axis> want;
    {
      // Resolve quietly: an unknown name is an absent axis (E0308).
      static const AxisScope kEmpty;
      const AxisScope& scope = c_ ? c_->axes : kEmpty;
      if (p.kind == EK::Name) {
        want = ck_.lookup_axis(p.name, scope);
      } else if (p.kind == EK::AxisRef && p.axis) {
        if (p.axis->kind == ast::AxisExpr::Kind::Name) {
          want = ck_.lookup_axis(p.axis->name, scope);
        } else {
          diag::Diagnostics quiet;
          AxisScope s = scope;
          size_t before = ck_.diags_.size();
          want = ck_.resolve_axis(*p.axis, s, false);
          (void)before;
        }
      }
    }
    // Prefer the axis written with this name (an alias's label, or a
    // size variable's or dim's own name), then any axis equal to it.
    auto written_name = [](const Axis& a) {
      if (!a.label.empty()) return a.label;
      if (a.kind == Axis::Kind::Var || a.kind == Axis::Kind::Dim) return a.name;
      return a.str();
    };
    std::vector<size_t> hits;
    for (size_t k = 0; k < shape.size(); ++k)
      if (written_name(shape[k]) == written) hits.push_back(k);
    if (hits.empty())
      for (size_t k = 0; k < shape.size(); ++k) {
        Axis bare = shape[k];
        bare.split.clear();
        bare.label.clear();
        if (want && bare == *want) hits.push_back(k);
      }
    if (hits.size() == 1) return hits[0];
    if (hits.empty()) {
      ck_.error(Code::E0308,
                p.span,
                "over=" + written + " names an axis that " +
                    types::shape_str(shape) + " does not have",
                "not an axis of the operand")
          .help("name one of its axes, or pick one by position: over=0");
    } else {
      ck_.error(Code::E0308,
                p.span,
                "over=" + written +
                    " is ambiguous: " + types::shape_str(shape) + " has it " +
                    std::to_string(hits.size()) + " times",
                "appears more than once")
          .help("pick one by position: over=" + std::to_string(hits[0]) +
                " or over=" + std::to_string(hits[1]));
    }
    return std::nullopt;
  }

  Checker& ck_;
  const ops::OpDef& op_;
  std::vector<RuleArg> args_;
  std::vector<RuleArg> extras_;
  diag::Span at_;
  FnCtx* c_;
  const ast::Expr* call_;  // where resolved axes are recorded (may be null)
};

}  // namespace

Type Checker::apply_rule(const ops::OpDef& op,
                         std::vector<RuleArg> args,
                         diag::Span at,
                         FnCtx* c,
                         std::vector<RuleArg> extras,
                         const ast::Expr* call) {
  if (!op.rule) return Type::error();
  if (c) check_collective_place(op, args, at, *c);
  // Note [Autocast]: the op's operands in the dtype autocast runs it in.
  if (c && c->autocast)
    if (std::optional<types::DType> to = autocast_target(op, *c->autocast)) {
      for (RuleArg& a : args)
        if (a.present) autocast_type(a.type, *to);
      for (RuleArg& a : extras)
        if (a.present) autocast_type(a.type, *to);
      if (call) info_for(call).autocast = to;
    }
  std::vector<std::string> varying;
  {
    std::set<std::string> v;
    for (const RuleArg& a : args)
      if (a.present && a.type.kind == TK::Tensor)
        v.insert(a.type.varying.begin(), a.type.varying.end());
    varying.assign(v.begin(), v.end());
  }
  std::string no_vjp;
  for (const RuleArg& a : args)
    if (a.present && no_vjp.empty()) no_vjp = a.type.no_vjp;
  BuiltinCtx ctx(*this, op, std::move(args), std::move(extras), at, c, call);
  Type t = op.rule(ctx);
  // stop_grad, and results with no gradient (ints, bools), end the taint.
  bool carries = t.kind == TK::Tensor && types::is_float(t.dtype) &&
                 std::string(op.name) != "stop_grad";
  t.no_vjp = carries ? no_vjp : std::string();
  // An op's result varies over the union of its operands' sets (the
  // implicit pvary), unless the rule set it (collectives).
  if (t.kind == TK::Tensor && t.varying.empty() && c && c->in_spmd &&
      op.device.kind != ops::DeviceRule::Kind::Host && !op.device.sets_varying)
    t.varying = varying;
  return t;
}

}  // namespace ss::check
